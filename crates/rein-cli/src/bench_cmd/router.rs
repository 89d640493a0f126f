//! `rein bench check-suite` on a router suite: validates its labelled requests and prints the
//! counts per intent and split. Scoring waits for `rein route`.

use std::path::Path;

use rein_bench::router::{suite_kind, RouterCounts, RouterSuite, KIND};
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
    latencies_ms: Vec<f64>,
    median_decision_ms: Option<f64>,
}

fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some(values[values.len() / 2])
}

fn run_router(args: &super::RunBenchArgs, json: bool) -> anyhow::Result<i32> {
    use rein_protocol::cowork::RouteSource;
    let mut report = Vec::new();
    for dir in &args.suites {
        let suite = RouterSuite::load(dir)?;
        for spec in &args.models {
            let mut model = crate::open::open_model(spec, args.allow_remote)?;
            let mut dev = SplitScore::default();
            let mut heldout = SplitScore::default();
            let mut rows = Vec::new();
            for request in &suite.requests {
                let is_dev = request.split.as_str() == "dev";
                if (args.split == "dev" && !is_dev) || (args.split == "heldout" && is_dev) {
                    continue;
                }
                let score = if is_dev { &mut dev } else { &mut heldout };
                let (keyword, _) = rein_chat::route::keyword_route(&request.text);
                let route = rein_chat::route(&request.text, Some(model.as_mut()));
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
                if !json {
                    println!(
                        "  {:<34} want {:<9} keyword {:<9} router {:<9} ({}, {} bps, {:.0} ms)",
                        escape_line(&request.id),
                        request.intent,
                        keyword,
                        route.intent,
                        route.source.as_str(),
                        route.confidence_bps,
                        route.latency_ms
                    );
                }
                rows.push(serde_json::json!({
                    "id": request.id, "want": request.intent, "keyword": keyword,
                    "route": route,
                }));
            }
            for s in [&mut dev, &mut heldout] {
                s.median_decision_ms = median(&mut s.latencies_ms);
            }
            if !json {
                println!(
                    "suite {} model {}",
                    escape_line(&suite.name),
                    escape_line(spec)
                );
                for (name, s) in [("dev", &dev), ("heldout", &heldout)] {
                    if s.requests == 0 {
                        continue;
                    }
                    println!(
                        "  {name:<8} {:>3} requests: keywords {}/{}, router {}/{}, model's own \
                         label {}, model counted {}, median decision {} ms",
                        s.requests,
                        s.keyword_correct,
                        s.requests,
                        s.router_correct,
                        s.requests,
                        s.model_decisions,
                        s.model_counted,
                        s.median_decision_ms
                            .map(|m| format!("{m:.0}"))
                            .unwrap_or_else(|| "-".into())
                    );
                }
            }
            report.push(serde_json::json!({
                "suite": suite.name, "model": spec, "dev": dev, "heldout": heldout, "requests": rows,
            }));
        }
    }
    if json {
        println!("{}", serde_json::json!({ "router": report }));
    }
    Ok(0)
}
