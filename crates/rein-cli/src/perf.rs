//! `rein perf`: inference figures for the embedded backend beside a bare llama-cpp-2 decode loop
//! on the same GGUF, prompt and engine options, measured in one run, with their ratios.
//!
//! Like for like: each round starts a fresh worker (so its cold start is measured), then runs
//! the bare loop in this process with the options the worker was launched with (threads,
//! context, batch, no mmap) and exactly as many single-token decodes as the worker made. Prompt
//! evaluation is compared cold (first decode after load) and warm (after the KV cache was
//! cleared). The `choose` figures are repeated and reported as medians, one of them on labels
//! that share a first token (`edit`/`edit_file`), which costs extra decodes.

use std::time::Instant;

use clap::Args;
use rein_models::embedded::{launch_for, EmbeddedModel};
use rein_models::{ChooseRequest, CompletionRequest, Model, ModelError, Prompt, SamplingProfile};
use serde::Serialize;

use crate::open::{start_embedded_with, ModelKnobs};

#[derive(Debug, Args)]
pub struct PerfArgs {
    /// Catalog name of the model to measure.
    #[arg(long, default_value = "qwen2.5-coder-0.5b")]
    model: String,
    /// Tokens to generate for the generation figure.
    #[arg(long, default_value_t = 128)]
    generate: u32,
    /// Rounds to run; figures are medians, ratios are paired within a round.
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// Timed runs per request of each `choose` figure (and of the evaluation it is compared
    /// with) in each round; the figures are medians.
    #[arg(long, default_value_t = 3)]
    choose_repeats: u32,
}

/// Most rounds and choose repeats accepted: beyond this a run takes hours on a small machine.
const MAX_REPEATS: u32 = 50;

/// About 1,000 tokens of deterministic text that invites a long greedy continuation.
fn long_prompt() -> String {
    let mut text = String::from("Project log of the harness test bench.\n");
    for i in 1..=31 {
        text.push_str(&format!(
            "Entry {i}: the runner copied fixture set {} into a fresh sandbox, recorded {} steps, and the judge read the report from disk.\n",
            i * 7 % 13,
            i * 3 % 11 + 2
        ));
    }
    text.push_str("Now count upwards without stopping: 1, 2, 3, 4, 5, 6,");
    text
}

const EXTENSION: &str = " Entry 32: the runner replayed a recorded call by its id and the effect was not performed twice. Entry 33: an approval expired after ten minutes and the change was asked again.";

/// One `choose` figure: a few-shot prefix, two requests that follow it, and the labels.
struct ChooseCase {
    name: &'static str,
    prefix: &'static str,
    requests: [&'static str; 2],
    labels: &'static [&'static str],
}

const INTENTS: ChooseCase = ChooseCase {
    name: "intents",
    prefix: "Classify the request into one intent: general, explore, summarize, related, report.\n\nRequest: hello there, how are you today?\nIntent: general\n\nRequest: what files are in the docs folder and what is in them?\nIntent: explore\n\nRequest: give me the gist of notes/meeting.md in three bullet points\nIntent: summarize\n\nRequest: which other files talk about the same budget as plan.md?\nIntent: related\n\nRequest: write a status report about the project into out/report.md\nIntent: report\n\n",
    requests: [
        "Request: list everything under src and explain the layout\nIntent:",
        "Request: Summarize the quarterly report in docs/q3.md\nIntent:",
    ],
    labels: &["general", "explore", "summarize", "related", "report"],
};

/// Labels that share their first token (`edit`/`edit_file`, `read`/`read_dir`): each needs its
/// continuation decoded and an end-of-label term, the expensive case of `choose`.
const TOOLS: ChooseCase = ChooseCase {
    name: "tools",
    prefix: "Pick the tool for each request. Tools: read (show a file), read_dir (list a folder), edit (change a few lines of a file), edit_file (replace a whole file with new content), finish (the task is done).\n\nRequest: show me notes/plan.md\nTool: read\n\nRequest: what is in the docs folder?\nTool: read_dir\n\nRequest: fix the typo on line 3 of README.md\nTool: edit\n\nRequest: replace out/report.md with this new report\nTool: edit_file\n\nRequest: that is all, thanks\nTool: finish\n\n",
    requests: [
        "Request: rename the second heading in notes/todo.md\nTool:",
        "Request: overwrite config/settings.toml with the text below\nTool:",
    ],
    labels: &["read", "read_dir", "edit", "edit_file", "finish"],
};

#[derive(Debug, Serialize)]
struct Decision {
    request: String,
    /// The most probable label, or `None` when the decision failed closed (low label mass).
    best: Option<String>,
    probability: Option<f64>,
    label_mass: Option<f64>,
}

#[derive(Debug, Serialize)]
struct ChooseFigure {
    name: &'static str,
    labels: Vec<String>,
    /// Tokens each request adds after the cached prefix (first request, second request).
    request_tokens: [u32; 2],
    /// Wall time of each timed `choose`, as the caller waits for it.
    choose_ms: Vec<f64>,
    /// Wall time of each timed evaluation of the same request (a one-token completion).
    request_eval_ms: Vec<f64>,
    choose_ms_median: f64,
    request_eval_ms_median: f64,
    /// Decisions that failed closed because the labels held too little probability.
    outages: u32,
    decisions: Vec<Decision>,
}

#[derive(Debug, Serialize)]
struct Embedded {
    load_ms: f64,
    /// Spawn the worker, load, verify, then the first one-token reply to the long prompt.
    cold_start_ms: f64,
    cold_prompt_ms: f64,
    prompt_tokens: u32,
    prompt_ms: f64,
    prompt_tokens_per_s: f64,
    generated_tokens: u32,
    generation_decode_calls: u32,
    generation_ms: f64,
    generation_tokens_per_s: f64,
    extend_tokens: u32,
    extend_ms: f64,
    redo_whole_ms: f64,
    choose: Vec<ChooseFigure>,
    constrained_tokens: u32,
    constrained_tokens_per_s: f64,
    peak_rss_bytes: u64,
}

#[derive(Debug, Serialize)]
struct Reference {
    load_ms: f64,
    cold_start_ms: f64,
    cold_prompt_ms: f64,
    prompt_tokens: usize,
    prompt_ms: f64,
    prompt_tokens_per_s: f64,
    generation_decode_calls: usize,
    generation_ms: f64,
    generation_tokens_per_s: f64,
    peak_rss_bytes: u64,
}

#[derive(Debug, Serialize)]
struct Ratios {
    cold_start_embedded_over_reference: f64,
    cold_prompt_embedded_over_reference: f64,
    prompt_embedded_over_reference: f64,
    generation_embedded_over_reference: f64,
    extend_over_redo: f64,
    choose_intents_over_request_eval: f64,
    choose_tools_over_request_eval: f64,
    peak_rss_embedded_over_reference: f64,
}

fn per_second(tokens: f64, ms: f64) -> f64 {
    if ms > 0.0 {
        tokens * 1000.0 / ms
    } else {
        0.0
    }
}

fn ms_since(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

fn greedy(prompt: String, max_tokens: u32) -> CompletionRequest {
    CompletionRequest::new(Prompt::raw(prompt), max_tokens, SamplingProfile::JUDGE)
}

/// Times `choose` and a one-token evaluation of the same prompt, alternating the two requests
/// so that each call decodes exactly its own request after the shared prefix.
fn measure_choose(
    model: &mut EmbeddedModel,
    case: &ChooseCase,
    repeats: u32,
) -> anyhow::Result<ChooseFigure> {
    let labels: Vec<String> = case.labels.iter().map(|s| s.to_string()).collect();
    let text = |i: usize| format!("{}{}", case.prefix, case.requests[i]);
    let request = |i: usize| ChooseRequest {
        prompt: Prompt::raw(text(i)),
        labels: labels.clone(),
    };
    let mut sink = |_: &str| {};
    let mut figure = ChooseFigure {
        name: case.name,
        labels: labels.clone(),
        request_tokens: [0, 0],
        choose_ms: Vec::new(),
        request_eval_ms: Vec::new(),
        choose_ms_median: 0.0,
        request_eval_ms_median: 0.0,
        outages: 0,
        decisions: Vec::new(),
    };
    // Untimed: puts the prefix in the cache (and builds the worker's one-off tables), so the
    // first timed call decodes only its request, like every later one.
    choose_once(model, &request(1))?;
    for repeat in 0..repeats {
        for i in 0..2 {
            let started = Instant::now();
            let outcome = choose_once(model, &request(i))?;
            figure.choose_ms.push(ms_since(started));
            if repeat == 0 {
                figure.outages += u32::from(outcome.best.is_none());
                figure.decisions.push(Decision {
                    request: case.requests[i].to_string(),
                    ..outcome
                });
            } else if outcome.best.is_none() {
                figure.outages += 1;
            }
        }
        for i in 0..2 {
            let started = Instant::now();
            let eval = model.complete(&greedy(text(i), 1), &mut sink)?;
            figure.request_eval_ms.push(ms_since(started));
            figure.request_tokens[i] = eval.prompt_tokens.saturating_sub(eval.cached_tokens);
        }
    }
    figure.choose_ms_median = median(figure.choose_ms.clone());
    figure.request_eval_ms_median = median(figure.request_eval_ms.clone());
    Ok(figure)
}

/// One decision; a decision that failed closed for low label mass is an outcome to report (its
/// time counts), any other error stops the measurement.
fn choose_once(model: &mut EmbeddedModel, request: &ChooseRequest) -> anyhow::Result<Decision> {
    match model.choose(request) {
        Ok(reply) => {
            let best = reply
                .probabilities
                .iter()
                .max_by(|a, b| a.probability.total_cmp(&b.probability));
            Ok(Decision {
                request: String::new(),
                best: best.map(|p| p.label.clone()),
                probability: best.map(|p| p.probability),
                label_mass: reply.label_mass,
            })
        }
        Err(ModelError::LowLabelMass { mass, .. }) => Ok(Decision {
            request: String::new(),
            best: None,
            probability: None,
            label_mass: Some(mass),
        }),
        Err(e) => Err(e.into()),
    }
}

fn measure_embedded(args: &PerfArgs) -> anyhow::Result<Embedded> {
    let prompt = long_prompt();
    let mut sink = |_: &str| {};

    // Cold start: what a person waits for the first time Rein asks a model something.
    let spawned = Instant::now();
    // No prompt prefix from disk: the cold figures must be cold.
    let knobs = ModelKnobs {
        no_prefix_store: true,
        ..ModelKnobs::default()
    };
    let mut model = start_embedded_with(&args.model, &knobs)?;
    let first = model.complete(&greedy(prompt.clone(), 1), &mut sink)?;
    let cold_start_ms = ms_since(spawned);

    model.reset_cache()?;
    let whole = model.complete(&greedy(prompt.clone(), 1), &mut sink)?;
    let generation = model.complete(&greedy(prompt.clone(), args.generate), &mut sink)?;
    let generation_decode_calls =
        rein_llama::generation_decode_calls(generation.finish, generation.completion_tokens);
    let extended = format!("{prompt}{EXTENSION}");
    let extend = model.complete(&greedy(extended.clone(), 1), &mut sink)?;
    model.reset_cache()?;
    let redo = model.complete(&greedy(extended, 1), &mut sink)?;

    let choose = [INTENTS, TOOLS]
        .iter()
        .map(|case| measure_choose(&mut model, case, args.choose_repeats))
        .collect::<anyhow::Result<Vec<_>>>()?;

    let mut constrained = greedy(String::new(), 96);
    constrained.prompt = Prompt::chat(vec![rein_models::ChatMessage::user(
        "Describe the file notes/plan.md as JSON with its path, a title and three tags.",
    )]);
    constrained.json_schema = Some(serde_json::json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "title": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3}
        },
        "required": ["path", "title", "tags"],
        "additionalProperties": false
    }));
    let json_reply = model.complete(&constrained, &mut sink)?;
    serde_json::from_str::<serde_json::Value>(&json_reply.text).map_err(|e| {
        anyhow::anyhow!(
            "the constrained completion is not JSON ({e}): {}",
            json_reply.text
        )
    })?;

    let stats = model.stats()?;
    Ok(Embedded {
        load_ms: model.load_ms,
        cold_start_ms,
        cold_prompt_ms: first.prompt_ms,
        prompt_tokens: whole.prompt_tokens,
        prompt_ms: whole.prompt_ms,
        prompt_tokens_per_s: per_second(whole.prompt_tokens as f64, whole.prompt_ms),
        generated_tokens: generation.completion_tokens,
        generation_decode_calls,
        generation_ms: generation.generation_ms,
        generation_tokens_per_s: per_second(
            generation_decode_calls as f64,
            generation.generation_ms,
        ),
        extend_tokens: extend.prompt_tokens - extend.cached_tokens,
        extend_ms: extend.prompt_ms,
        redo_whole_ms: redo.prompt_ms,
        choose,
        constrained_tokens: json_reply.completion_tokens,
        constrained_tokens_per_s: per_second(
            json_reply.completion_tokens as f64,
            json_reply.generation_ms,
        ),
        peak_rss_bytes: stats.peak_rss_bytes,
    })
}

/// The bare loop with the options a worker for this model is launched with.
fn measure_reference(name: &str, decode_calls: u32) -> anyhow::Result<Reference> {
    let catalog = rein_models::Catalog::builtin()?;
    let entry = catalog.get(name)?;
    let dir = rein_models::DataDir::from_env()?;
    let launch = launch_for(entry, &dir, std::path::PathBuf::new())?;
    let options = rein_llama::EngineOptions {
        model_path: launch.model_path,
        use_mmap: false,
        threads: launch.threads,
        context_tokens: launch.context_tokens,
        batch_tokens: rein_llama::DEFAULT_BATCH_TOKENS,
        expected_size: Some(launch.size),
        gguf_template: false,
        prefix_store: None,
    };
    let f = rein_llama::reference::run(&options, &long_prompt(), decode_calls as usize)?;
    Ok(Reference {
        load_ms: f.load_ms,
        cold_start_ms: f.cold_start_ms,
        cold_prompt_ms: f.cold_prompt_ms,
        prompt_tokens: f.prompt_tokens,
        prompt_ms: f.prompt_ms,
        prompt_tokens_per_s: per_second(f.prompt_tokens as f64, f.prompt_ms),
        generation_decode_calls: f.generation_decode_calls,
        generation_ms: f.generation_ms,
        generation_tokens_per_s: per_second(f.generation_decode_calls as f64, f.generation_ms),
        peak_rss_bytes: f.peak_rss_bytes,
    })
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// One round: a fresh worker and then the bare loop, back to back, so each ratio compares
/// figures taken under the same load on a shared machine.
#[derive(Debug, Serialize)]
struct Round {
    embedded: Embedded,
    reference: Reference,
    ratios: Ratios,
}

fn choose_ratio(embedded: &Embedded, name: &str) -> f64 {
    embedded
        .choose
        .iter()
        .find(|c| c.name == name)
        .map_or(0.0, |c| ratio(c.choose_ms_median, c.request_eval_ms_median))
}

fn ratios_of(embedded: &Embedded, reference: &Reference) -> Ratios {
    Ratios {
        cold_start_embedded_over_reference: ratio(embedded.cold_start_ms, reference.cold_start_ms),
        cold_prompt_embedded_over_reference: ratio(
            embedded.cold_prompt_ms,
            reference.cold_prompt_ms,
        ),
        prompt_embedded_over_reference: ratio(
            embedded.prompt_tokens_per_s,
            reference.prompt_tokens_per_s,
        ),
        generation_embedded_over_reference: ratio(
            embedded.generation_tokens_per_s,
            reference.generation_tokens_per_s,
        ),
        extend_over_redo: ratio(embedded.extend_ms, embedded.redo_whole_ms),
        choose_intents_over_request_eval: choose_ratio(embedded, INTENTS.name),
        choose_tools_over_request_eval: choose_ratio(embedded, TOOLS.name),
        peak_rss_embedded_over_reference: ratio(
            embedded.peak_rss_bytes as f64,
            reference.peak_rss_bytes as f64,
        ),
    }
}

/// Checks the counts before anything is loaded, so a typo costs nothing.
fn check_args(args: &PerfArgs) -> anyhow::Result<()> {
    for (flag, value) in [
        ("--rounds", args.rounds),
        ("--choose-repeats", args.choose_repeats),
    ] {
        if !(1..=MAX_REPEATS).contains(&value) {
            anyhow::bail!("{flag} must be between 1 and {MAX_REPEATS}, not {value}");
        }
    }
    if args.generate < 2 {
        anyhow::bail!(
            "--generate must be at least 2 (one token is sampled without a decode), not {}",
            args.generate
        );
    }
    Ok(())
}

pub fn run(args: PerfArgs, json: bool) -> anyhow::Result<i32> {
    check_args(&args)?;
    let threads = rein_models::embedded::default_threads();
    if !json {
        eprintln!(
            "measuring {} with {threads} threads over {} rounds (a fresh worker, then the bare loop with the worker's options)",
            args.model, args.rounds
        );
    }
    let mut rounds = Vec::new();
    for round in 0..args.rounds {
        let embedded = measure_embedded(&args)?;
        let reference = measure_reference(&args.model, embedded.generation_decode_calls)?;
        if reference.prompt_tokens != embedded.prompt_tokens as usize {
            anyhow::bail!(
                "the bare loop read the prompt as {} tokens and the worker as {}: the figures would not compare the same work",
                reference.prompt_tokens,
                embedded.prompt_tokens
            );
        }
        let ratios = ratios_of(&embedded, &reference);
        if !json {
            eprintln!(
                "round {}: cold start {:.0} vs {:.0} ms, prompt {:.1} vs {:.1} tokens/s, generation {:.1} vs {:.1} tokens/s ({} decodes each), extend/redo {:.3}, choose/eval {:.2} (intents) {:.2} (tools)",
                round + 1,
                embedded.cold_start_ms,
                reference.cold_start_ms,
                embedded.prompt_tokens_per_s,
                reference.prompt_tokens_per_s,
                embedded.generation_tokens_per_s,
                reference.generation_tokens_per_s,
                embedded.generation_decode_calls,
                ratios.extend_over_redo,
                ratios.choose_intents_over_request_eval,
                ratios.choose_tools_over_request_eval,
            );
        }
        rounds.push(Round {
            embedded,
            reference,
            ratios,
        });
    }
    let m = |f: &dyn Fn(&Round) -> f64| median(rounds.iter().map(f).collect());
    let choose_m = |name: &str, f: &dyn Fn(&ChooseFigure) -> f64| {
        m(&|r| {
            r.embedded
                .choose
                .iter()
                .find(|c| c.name == name)
                .map_or(0.0, f)
        })
    };
    let outages = |name: &str| -> u32 {
        rounds
            .iter()
            .flat_map(|r| r.embedded.choose.iter().filter(|c| c.name == name))
            .map(|c| c.outages)
            .sum()
    };
    let first = &rounds[0];
    let summary = serde_json::json!({
        "embedded": {
            "load_ms": m(&|r| r.embedded.load_ms),
            "cold_start_ms": m(&|r| r.embedded.cold_start_ms),
            "cold_prompt_ms": m(&|r| r.embedded.cold_prompt_ms),
            "prompt_tokens": first.embedded.prompt_tokens,
            "prompt_tokens_per_s": m(&|r| r.embedded.prompt_tokens_per_s),
            "generated_tokens": first.embedded.generated_tokens,
            "generation_decode_calls": first.embedded.generation_decode_calls,
            "generation_tokens_per_s": m(&|r| r.embedded.generation_tokens_per_s),
            "extend_tokens": first.embedded.extend_tokens,
            "extend_ms": m(&|r| r.embedded.extend_ms),
            "redo_whole_ms": m(&|r| r.embedded.redo_whole_ms),
            "choose_intents_ms": choose_m(INTENTS.name, &|c| c.choose_ms_median),
            "choose_intents_request_eval_ms": choose_m(INTENTS.name, &|c| c.request_eval_ms_median),
            "choose_intents_outages": outages(INTENTS.name),
            "choose_tools_ms": choose_m(TOOLS.name, &|c| c.choose_ms_median),
            "choose_tools_request_eval_ms": choose_m(TOOLS.name, &|c| c.request_eval_ms_median),
            "choose_tools_outages": outages(TOOLS.name),
            "constrained_tokens_per_s": m(&|r| r.embedded.constrained_tokens_per_s),
            "peak_rss_bytes": m(&|r| r.embedded.peak_rss_bytes as f64),
        },
        "reference": {
            "load_ms": m(&|r| r.reference.load_ms),
            "cold_start_ms": m(&|r| r.reference.cold_start_ms),
            "cold_prompt_ms": m(&|r| r.reference.cold_prompt_ms),
            "prompt_tokens_per_s": m(&|r| r.reference.prompt_tokens_per_s),
            "generation_decode_calls": first.reference.generation_decode_calls,
            "generation_tokens_per_s": m(&|r| r.reference.generation_tokens_per_s),
            "peak_rss_bytes": m(&|r| r.reference.peak_rss_bytes as f64),
        },
        "ratios": {
            "cold_start_embedded_over_reference": m(&|r| r.ratios.cold_start_embedded_over_reference),
            "cold_prompt_embedded_over_reference": m(&|r| r.ratios.cold_prompt_embedded_over_reference),
            "prompt_embedded_over_reference": m(&|r| r.ratios.prompt_embedded_over_reference),
            "generation_embedded_over_reference": m(&|r| r.ratios.generation_embedded_over_reference),
            "extend_over_redo": m(&|r| r.ratios.extend_over_redo),
            "choose_intents_over_request_eval": m(&|r| r.ratios.choose_intents_over_request_eval),
            "choose_tools_over_request_eval": m(&|r| r.ratios.choose_tools_over_request_eval),
            "peak_rss_embedded_over_reference": m(&|r| r.ratios.peak_rss_embedded_over_reference),
        },
    });
    if json {
        let doc = serde_json::json!({
            "model": args.model,
            "threads": threads,
            "choose_repeats": args.choose_repeats,
            "rounds": rounds,
            "median": summary,
            "targets": {
                "generation_embedded_over_reference_min": 0.97,
                "prompt_embedded_over_reference_min": 0.97,
                "extend_over_redo_max": 0.2,
                "choose_over_request_eval_max": 1.1,
            }
        });
        println!("{doc}");
        return Ok(0);
    }
    print_table(&args, threads, &rounds, &summary);
    Ok(0)
}

fn print_table(args: &PerfArgs, threads: u32, rounds: &[Round], summary: &serde_json::Value) {
    let e = &summary["embedded"];
    let r = &summary["reference"];
    let q = &summary["ratios"];
    let f = |v: &serde_json::Value| v.as_f64().unwrap_or(0.0);
    let first = &rounds[0].embedded;
    println!(
        "model {}  threads {threads}  medians of {} rounds (choose: {} timed runs per request per round)",
        args.model,
        rounds.len(),
        args.choose_repeats
    );
    println!(
        "{:<58} {:>10} {:>10} {:>7}",
        "figure", "embedded", "bare loop", "ratio"
    );
    let row = |label: String, a: f64, b: f64, ratio: f64, note: &str, precision: usize| {
        println!(
            "{label:<58} {a:>10.precision$} {b:>10.precision$} {ratio:>7.2}{}",
            if note.is_empty() {
                String::new()
            } else {
                format!("  {note}")
            }
        );
    };
    row(
        "cold start: load + first reply to the prompt (ms)".into(),
        f(&e["cold_start_ms"]),
        f(&r["cold_start_ms"]),
        f(&q["cold_start_embedded_over_reference"]),
        "embedded includes spawning the worker",
        0,
    );
    row(
        "  of which load (ms)".into(),
        f(&e["load_ms"]),
        f(&r["load_ms"]),
        ratio(f(&e["load_ms"]), f(&r["load_ms"])),
        "",
        0,
    );
    row(
        format!(
            "  of which cold prompt decode, {} tokens (ms)",
            first.prompt_tokens
        ),
        f(&e["cold_prompt_ms"]),
        f(&r["cold_prompt_ms"]),
        f(&q["cold_prompt_embedded_over_reference"]),
        "",
        0,
    );
    row(
        format!(
            "prompt eval, warm, {} tokens (tokens/s)",
            first.prompt_tokens
        ),
        f(&e["prompt_tokens_per_s"]),
        f(&r["prompt_tokens_per_s"]),
        f(&q["prompt_embedded_over_reference"]),
        "target >= 0.97",
        1,
    );
    row(
        format!(
            "generation, {} decodes each side (tokens/s)",
            first.generation_decode_calls
        ),
        f(&e["generation_tokens_per_s"]),
        f(&r["generation_tokens_per_s"]),
        f(&q["generation_embedded_over_reference"]),
        "target >= 0.97",
        1,
    );
    row(
        "peak RSS, same options, no mmap (GB)".into(),
        f(&e["peak_rss_bytes"]) / 1e9,
        f(&r["peak_rss_bytes"]) / 1e9,
        f(&q["peak_rss_embedded_over_reference"]),
        "",
        3,
    );
    println!("{:<58} {:>10} {:>10}", "embedded only", "this", "against");
    row(
        format!(
            "extend cached prompt by {} tokens / redo whole (ms)",
            first.extend_tokens
        ),
        f(&e["extend_ms"]),
        f(&e["redo_whole_ms"]),
        f(&q["extend_over_redo"]),
        "target <= 0.20",
        0,
    );
    for (case, key) in [(&INTENTS, "intents"), (&TOOLS, "tools")] {
        let figure = first.choose.iter().find(|c| c.name == case.name);
        let tokens = figure.map_or([0, 0], |c| c.request_tokens);
        row(
            format!(
                "choose {} {} / eval of its {}+{} tokens (ms)",
                case.labels.len(),
                key,
                tokens[0],
                tokens[1]
            ),
            f(&e[format!("choose_{key}_ms")]),
            f(&e[format!("choose_{key}_request_eval_ms")]),
            f(&q[format!("choose_{key}_over_request_eval")]),
            "target <= 1.10",
            1,
        );
    }
    println!(
        "{:<58} {:>10.1}",
        "JSON-schema generation (tokens/s)",
        f(&e["constrained_tokens_per_s"])
    );
    for figure in &first.choose {
        let outages: u32 = rounds
            .iter()
            .flat_map(|r| r.embedded.choose.iter().filter(|c| c.name == figure.name))
            .map(|c| c.outages)
            .sum();
        let picked: Vec<String> = figure
            .decisions
            .iter()
            .map(|d| match (&d.best, d.probability, d.label_mass) {
                (Some(best), Some(p), mass) => format!(
                    "{best} at {p:.2} (label mass {})",
                    mass.map_or("unmeasured".into(), |m| format!("{m:.2}"))
                ),
                (_, _, mass) => format!(
                    "outage (label mass {} under the floor)",
                    mass.map_or("unmeasured".into(), |m| format!("{m:.2}"))
                ),
            })
            .collect();
        println!(
            "choose {} ({}): {}; outages {outages} of {} calls",
            figure.name,
            figure.labels.join(" "),
            picked.join(", "),
            rounds.len() as u32 * args.choose_repeats * 2
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(rounds: u32, choose_repeats: u32, generate: u32) -> PerfArgs {
        PerfArgs {
            model: "qwen2.5-coder-0.5b".into(),
            generate,
            rounds,
            choose_repeats,
        }
    }

    #[test]
    fn counts_are_checked_before_anything_loads() {
        assert!(check_args(&args(3, 3, 128)).is_ok());
        let e = check_args(&args(0, 3, 128)).unwrap_err().to_string();
        assert!(e.contains("--rounds"), "{e}");
        let e = check_args(&args(3, 0, 128)).unwrap_err().to_string();
        assert!(e.contains("--choose-repeats"), "{e}");
        assert!(check_args(&args(3, MAX_REPEATS + 1, 128)).is_err());
        assert!(check_args(&args(3, 3, 1)).is_err());
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(vec![]), 0.0);
        assert_eq!(median(vec![5.0, 1.0, 3.0]), 3.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn the_tool_labels_share_first_words() {
        // The expensive case must stay in the figure: a label that is a prefix of another.
        let shares = TOOLS.labels.iter().any(|a| {
            TOOLS
                .labels
                .iter()
                .any(|b| a != b && b.starts_with(&format!("{a}_")))
        });
        assert!(shares, "{:?}", TOOLS.labels);
    }

    #[test]
    fn a_ratio_against_nothing_is_zero_not_infinite() {
        assert_eq!(ratio(1.0, 0.0), 0.0);
        assert_eq!(ratio(3.0, 2.0), 1.5);
    }
}
