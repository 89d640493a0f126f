//! `rein bench check-suite` on a router suite: validates its labelled requests and prints the
//! counts per intent and split. Scoring waits for `rein route`.

use std::path::Path;

use rein_bench::router::{suite_kind, RouterCounts, RouterSuite, KIND};
use rein_models::Model;
use rein_protocol::display::escape_line;

/// Loads and prints a router suite; `None` when the folder is a task suite.
pub fn check(dir: &str, json: bool) -> anyhow::Result<Option<RouterCounts>> {
    if suite_kind(Path::new(dir))? != KIND {
        return Ok(None);
    }
    let suite = RouterSuite::load(dir)?;
    let counts = suite.counts();
    if !json {
        print_counts(&counts);
    }
    Ok(Some(counts))
}

fn print_counts(c: &RouterCounts) {
    println!("suite {} (router)", escape_line(&c.suite));
    println!(
        "  {:<10} {:>5} {:>5} {:>8}",
        "intent", "total", "dev", "heldout"
    );
    for (intent, s) in &c.per_intent {
        println!(
            "  {:<10} {:>5} {:>5} {:>8}",
            escape_line(intent),
            s.dev + s.heldout,
            s.dev,
            s.heldout
        );
    }
    let share = if c.requests == 0 {
        0.0
    } else {
        100.0 * c.heldout as f64 / c.requests as f64
    };
    println!(
        "  {} requests; dev {}; heldout {} ({share:.0} %); valid (score it with `rein bench SUITE --models M`)",
        c.requests, c.dev, c.heldout
    );
}

/// `rein bench suites/router --models M`: the router on every labelled request, per model.
/// `None` when a suite given is not a router suite (the task runner takes them).
pub fn maybe_run(args: &super::RunBenchArgs, json: bool) -> Option<anyhow::Result<i32>> {
    if args.suites.is_empty()
        || !args
            .suites
            .iter()
            .all(|d| suite_kind(Path::new(d)).map(|k| k == KIND).unwrap_or(false))
    {
        return None;
    }
    if args.context.is_some() {
        return Some(Err(super::context_not_here("a router suite")));
    }
    Some(run_router(args, json))
}

/// One split's figures for one model.
#[derive(Debug, Default, serde::Serialize)]
struct SplitScore {
    requests: usize,
    keyword_correct: usize,
    router_correct: usize,
    /// Routes whose intent is the model's own label (source `model`).
    model_decisions: usize,
    /// Routes where the model's label counted (source `model`, or `keyword` with the model
    /// agreeing at or above the floor).
    model_counted: usize,
    /// Whole decisions (route latency) of the routes that asked the model, the instruction
    /// cached from the decision before.
    latencies_ms: Vec<f64>,
    median_decision_ms: Option<f64>,
    /// Of those decisions, the time spent evaluating the prompt tokens not in the cache (the
    /// request); the rest scored the labels.
    cached_prompt_ms: Vec<f64>,
    median_cached_prompt_eval_ms: Option<f64>,
    /// The same decision prompt evaluated from an empty cache (instruction and request), after
    /// all the routes, for up to UNCACHED_SAMPLES requests spread over the run: what the
    /// decision would cost without the cache.
    uncached_prompt_ms: Vec<f64>,
    /// Of each warm decision, what came after the request's own eval inside the worker
    /// (scoring the label spellings), and what the parent waited beyond the worker's own time
    /// (request and reply over the pipe, tokenizing is inside the worker's time).
    label_scoring_ms: Vec<f64>,
    median_label_scoring_ms: Option<f64>,
    outside_worker_ms: Vec<f64>,
    median_outside_worker_ms: Option<f64>,
    /// Label spellings decoded per decision (after pruning the unlikely ones).
    scored_spellings: Vec<f64>,
    median_scored_spellings: Option<f64>,
    median_uncached_prompt_eval_ms: Option<f64>,
    uncached_decision_ms: Vec<f64>,
    median_uncached_decision_ms: Option<f64>,
    /// CPU time of the decisions (all of the worker's threads), cached and uncached: on a busy
    /// machine the wall times above measure the queue as much as the work.
    decision_cpu_ms: Vec<f64>,
    median_decision_cpu_ms: Option<f64>,
    uncached_decision_cpu_ms: Vec<f64>,
    median_uncached_decision_cpu_ms: Option<f64>,
    /// Prompt tokens of the decisions, and how many came from the cache.
    prompt_tokens: usize,
    cached_tokens: usize,
    /// Decisions that took longer than chat's deadline (DECISION_TIMEOUT_MS): in chat they would
    /// have been outages, the keyword route standing. The bench waits for them so accuracy is
    /// measured apart from how busy the machine is.
    over_chat_deadline: usize,
}

fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some(values[values.len() / 2])
}

fn ms(value: Option<f64>) -> String {
    value
        .map(|m| format!("{m:.0} ms"))
        .unwrap_or_else(|| "-".into())
}

/// How long the bench waits for one decision (chat waits DECISION_TIMEOUT_MS); late decisions
/// are counted, not dropped.
pub(super) const BENCH_DEADLINE: std::time::Duration = std::time::Duration::from_secs(600);

/// How many requests (spread over the run) are also decided from an empty cache: each costs a
/// whole prompt eval, so a sample, not all.
const UNCACHED_SAMPLES: usize = 10;

/// The model under test; an embedded one is kept as such so its cache can be emptied for the
/// uncached figures.
enum Opened {
    Embedded(Box<rein_models::embedded::EmbeddedModel>),
    Other(Box<dyn Model>),
}

impl Opened {
    fn model(&mut self) -> &mut dyn Model {
        match self {
            Opened::Embedded(m) => m.as_mut(),
            Opened::Other(m) => m.as_mut(),
        }
    }
}

fn run_router(args: &super::RunBenchArgs, json: bool) -> anyhow::Result<i32> {
    use rein_protocol::cowork::{RouteSource, DECISION_TIMEOUT_MS, SHORT_MESSAGE_CHARS};
    let mut report = Vec::new();
    for dir in &args.suites {
        let suite = RouterSuite::load(dir)?;
        for spec in &args.models {
            // The model is loaded once and kept for every decision of the run, as in chat.
            let opening = std::time::Instant::now();
            let mut opened = match rein_models::ModelSpec::parse(spec)? {
                rein_models::ModelSpec::Catalog(name) => {
                    Opened::Embedded(Box::new(crate::open::start_embedded(&name)?))
                }
                _ => Opened::Other(crate::open::open_model(spec, args.allow_remote)?),
            };
            let open_ms = opening.elapsed().as_secs_f64() * 1000.0;
            let load_ms = match &opened {
                Opened::Embedded(m) => Some(m.load_ms),
                Opened::Other(_) => None,
            };
            let mut dev = SplitScore::default();
            let mut heldout = SplitScore::default();
            let mut rows = Vec::new();
            let chosen: Vec<_> = suite
                .requests
                .iter()
                .filter(|r| {
                    let is_dev = r.split.as_str() == "dev";
                    !((args.split == "dev" && !is_dev) || (args.split == "heldout" && is_dev))
                })
                .collect();
            for request in &chosen {
                let is_dev = request.split.as_str() == "dev";
                let score = if is_dev { &mut dev } else { &mut heldout };
                let (keyword, _) = rein_chat::route::keyword_route(&request.text);
                let mut watched = super::recording::Recording::new(opened.model());
                let route = rein_chat::route::route_with_deadline(
                    &request.text,
                    Some(&mut watched),
                    BENCH_DEADLINE,
                );
                score.over_chat_deadline +=
                    usize::from(route.latency_ms > DECISION_TIMEOUT_MS as f64);
                score.requests += 1;
                score.keyword_correct += usize::from(keyword.as_str() == request.intent);
                score.router_correct += usize::from(route.intent.as_str() == request.intent);
                score.model_decisions += usize::from(route.source == RouteSource::Model);
                score.model_counted += usize::from(
                    route.source == RouteSource::Model
                        || (route.source == RouteSource::Keyword
                            && route.note.is_none()
                            && !route.probabilities.is_empty()),
                );
                if !route.probabilities.is_empty() {
                    score.latencies_ms.push(route.latency_ms);
                }
                if let Some(reply) = &watched.last_choice {
                    if let Some(p) = reply.prompt_ms {
                        score.cached_prompt_ms.push(p);
                        score.label_scoring_ms.push((reply.elapsed_ms - p).max(0.0));
                    }
                    score
                        .outside_worker_ms
                        .push((route.latency_ms - reply.elapsed_ms).max(0.0));
                    if let Some(n) = reply.scored_spellings {
                        score.scored_spellings.push(f64::from(n));
                    }
                    if let Some(c) = reply.cpu_ms {
                        score.decision_cpu_ms.push(c);
                    }
                    score.prompt_tokens += reply.prompt_tokens as usize;
                    score.cached_tokens += reply.cached_tokens as usize;
                }
                if !json {
                    println!(
                        "  {:<34} want {:<9} keyword {:<9} router {:<9} ({}, {} bps, {:.0} ms{})",
                        escape_line(&request.id),
                        request.intent,
                        keyword,
                        route.intent,
                        route.source.as_str(),
                        route.confidence_bps,
                        route.latency_ms,
                        watched
                            .last_choice
                            .as_ref()
                            .map(|r| format!(
                                "; {} of {} prompt tokens cached, label mass {:.2}",
                                r.cached_tokens,
                                r.prompt_tokens,
                                r.label_mass.unwrap_or(f64::NAN)
                            ))
                            .unwrap_or_default()
                    );
                }
                rows.push(serde_json::json!({
                    "id": request.id, "want": request.intent, "keyword": keyword,
                    "route": route,
                    "prompt_tokens": watched.last_choice.as_ref().map(|r| r.prompt_tokens),
                    "cached_tokens": watched.last_choice.as_ref().map(|r| r.cached_tokens),
                }));
            }
            // The same decision prompts from an empty cache, once each (embedded models only:
            // only they can be told to forget their cache).
            if let Opened::Embedded(model) = &mut opened {
                let asked: Vec<_> = chosen
                    .iter()
                    .filter(|r| r.text.chars().count() >= SHORT_MESSAGE_CHARS)
                    .collect();
                let stride = asked.len().div_ceil(UNCACHED_SAMPLES).max(1);
                for request in asked.into_iter().step_by(stride) {
                    model.reset_cache()?;
                    let Ok(reply) = model.choose(&rein_chat::route::route_request(&request.text))
                    else {
                        continue;
                    };
                    let score = if request.split.as_str() == "dev" {
                        &mut dev
                    } else {
                        &mut heldout
                    };
                    score.uncached_decision_ms.push(reply.elapsed_ms);
                    if let Some(p) = reply.prompt_ms {
                        score.uncached_prompt_ms.push(p);
                    }
                    if let Some(c) = reply.cpu_ms {
                        score.uncached_decision_cpu_ms.push(c);
                    }
                }
            }
            for s in [&mut dev, &mut heldout] {
                s.median_decision_ms = median(&mut s.latencies_ms);
                s.median_cached_prompt_eval_ms = median(&mut s.cached_prompt_ms);
                s.median_label_scoring_ms = median(&mut s.label_scoring_ms);
                s.median_outside_worker_ms = median(&mut s.outside_worker_ms);
                s.median_scored_spellings = median(&mut s.scored_spellings);
                s.median_uncached_prompt_eval_ms = median(&mut s.uncached_prompt_ms);
                s.median_uncached_decision_ms = median(&mut s.uncached_decision_ms);
                s.median_decision_cpu_ms = median(&mut s.decision_cpu_ms);
                s.median_uncached_decision_cpu_ms = median(&mut s.uncached_decision_cpu_ms);
            }
            if !json {
                println!(
                    "suite {} model {} (opened in {:.0} ms; model load {})",
                    escape_line(&suite.name),
                    escape_line(spec),
                    open_ms,
                    ms(load_ms)
                );
                for (name, s) in [("dev", &dev), ("heldout", &heldout)] {
                    if s.requests == 0 {
                        continue;
                    }
                    println!(
                        "  {name:<8} {:>3} requests: keywords {}/{}, router {}/{}, model's own \
                         label {}, model counted {}",
                        s.requests,
                        s.keyword_correct,
                        s.requests,
                        s.router_correct,
                        s.requests,
                        s.model_decisions,
                        s.model_counted,
                    );
                    println!(
                        "           median decision {} (instruction cached: {} of {} prompt \
                         tokens from the cache; request eval {}) beside one uncached prompt eval \
                         of the same text {} (whole uncached decision {})",
                        ms(s.median_decision_ms),
                        s.cached_tokens,
                        s.prompt_tokens,
                        ms(s.median_cached_prompt_eval_ms),
                        ms(s.median_uncached_prompt_eval_ms),
                        ms(s.median_uncached_decision_ms),
                    );
                    println!(
                        "           beyond the request's eval: label scoring {} ({} spellings \
                         decoded), outside the worker (pipe, parent) {}",
                        ms(s.median_label_scoring_ms),
                        s.median_scored_spellings
                            .map(|n| format!("{n:.0}"))
                            .unwrap_or_else(|| "-".into()),
                        ms(s.median_outside_worker_ms),
                    );
                    println!(
                        "           CPU time (all threads): median decision {}, uncached {}; {} \
                         decisions over chat's {} ms deadline",
                        ms(s.median_decision_cpu_ms),
                        ms(s.median_uncached_decision_cpu_ms),
                        s.over_chat_deadline,
                        DECISION_TIMEOUT_MS
                    );
                }
            }
            report.push(serde_json::json!({
                "suite": suite.name, "model": spec, "open_ms": open_ms, "load_ms": load_ms,
                "dev": dev, "heldout": heldout, "requests": rows,
            }));
        }
    }
    if json {
        println!("{}", serde_json::json!({ "router": report }));
    }
    Ok(0)
}
