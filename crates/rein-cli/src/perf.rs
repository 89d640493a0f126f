//! `rein perf`: inference figures for the embedded backend beside a bare llama-cpp-2 decode loop
//! on the same GGUF, prompt and threads, measured in one run, with their ratios.

use std::time::Instant;

use clap::Args;
use rein_models::embedded::default_threads;
use rein_models::{ChooseRequest, CompletionRequest, Model, Prompt, SamplingProfile};
use serde::Serialize;

use rein_models::embedded::EmbeddedModel;

use crate::open::start_embedded;

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
}

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

const DECISION_PREFIX: &str = "Classify the request into one intent: general, explore, summarize, related, report.\n\nRequest: hello there, how are you today?\nIntent: general\n\nRequest: what files are in the docs folder and what is in them?\nIntent: explore\n\nRequest: give me the gist of notes/meeting.md in three bullet points\nIntent: summarize\n\nRequest: which other files talk about the same budget as plan.md?\nIntent: related\n\nRequest: write a status report about the project into out/report.md\nIntent: report\n\n";
const REQUEST_A: &str = "Request: list everything under src and explain the layout\nIntent:";
const REQUEST_B: &str = "Request: Summarize the quarterly report in docs/q3.md\nIntent:";
const LABELS: [&str; 5] = ["general", "explore", "summarize", "related", "report"];

#[derive(Debug, Serialize)]
struct Embedded {
    load_ms: f64,
    start_wall_ms: f64,
    prompt_tokens: u32,
    prompt_tokens_per_s: f64,
    generated_tokens: u32,
    generation_tokens_per_s: f64,
    extend_tokens: u32,
    extend_ms: f64,
    redo_whole_ms: f64,
    choose_ms: f64,
    choose_request_tokens: u32,
    request_eval_ms: f64,
    choose_best: String,
    choose_best_probability: f64,
    constrained_tokens: u32,
    constrained_tokens_per_s: f64,
    peak_rss_bytes: u64,
}

#[derive(Debug, Serialize)]
struct Reference {
    load_ms: f64,
    prompt_tokens: usize,
    prompt_tokens_per_s: f64,
    generated_tokens: usize,
    generation_tokens_per_s: f64,
    peak_rss_bytes: u64,
}

#[derive(Debug, Serialize)]
struct Ratios {
    generation_embedded_over_reference: f64,
    prompt_embedded_over_reference: f64,
    extend_over_redo: f64,
    choose_over_request_eval: f64,
    peak_rss_embedded_over_reference: f64,
}

fn per_second(tokens: f64, ms: f64) -> f64 {
    if ms > 0.0 {
        tokens * 1000.0 / ms
    } else {
        0.0
    }
}

fn greedy(prompt: String, max_tokens: u32) -> CompletionRequest {
    CompletionRequest::new(Prompt::raw(prompt), max_tokens, SamplingProfile::JUDGE)
}

fn measure_embedded(
    model: &mut EmbeddedModel,
    start_wall_ms: f64,
    generate: u32,
) -> anyhow::Result<Embedded> {
    let prompt = long_prompt();
    let mut sink = |_: &str| {};

    model.reset_cache()?;
    let whole = model.complete(&greedy(prompt.clone(), 1), &mut sink)?;
    let generation = model.complete(&greedy(prompt.clone(), generate), &mut sink)?;
    let extended = format!("{prompt}{EXTENSION}");
    let extend = model.complete(&greedy(extended.clone(), 1), &mut sink)?;
    model.reset_cache()?;
    let redo = model.complete(&greedy(extended, 1), &mut sink)?;

    let labels: Vec<String> = LABELS.iter().map(|s| s.to_string()).collect();
    let choose = |request: &str| ChooseRequest {
        prompt: Prompt::raw(format!("{DECISION_PREFIX}{request}")),
        labels: labels.clone(),
    };
    model.choose(&choose(REQUEST_A))?;
    let decision = model.choose(&choose(REQUEST_B))?;
    model.choose(&choose(REQUEST_A))?;
    let request_eval = model.complete(
        &greedy(format!("{DECISION_PREFIX}{REQUEST_B}"), 1),
        &mut sink,
    )?;
    let (best, best_p) = decision
        .probabilities
        .iter()
        .max_by(|a, b| a.probability.total_cmp(&b.probability))
        .map(|p| (p.label.clone(), p.probability))
        .unwrap_or_default();

    let mut constrained = greedy(
        "Describe the file notes/plan.md as JSON with its path, a title and three tags.".into(),
        96,
    );
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
        start_wall_ms,
        prompt_tokens: whole.prompt_tokens,
        prompt_tokens_per_s: per_second(whole.prompt_tokens as f64, whole.prompt_ms),
        generated_tokens: generation.completion_tokens,
        generation_tokens_per_s: per_second(
            generation.completion_tokens as f64,
            generation.generation_ms,
        ),
        extend_tokens: extend.prompt_tokens - extend.cached_tokens,
        extend_ms: extend.prompt_ms,
        redo_whole_ms: redo.prompt_ms,
        choose_ms: decision.elapsed_ms,
        choose_request_tokens: request_eval.prompt_tokens - request_eval.cached_tokens,
        request_eval_ms: request_eval.prompt_ms,
        choose_best: best,
        choose_best_probability: best_p,
        constrained_tokens: json_reply.completion_tokens,
        constrained_tokens_per_s: per_second(
            json_reply.completion_tokens as f64,
            json_reply.generation_ms,
        ),
        peak_rss_bytes: stats.peak_rss_bytes,
    })
}

fn measure_reference(name: &str, generate: u32) -> anyhow::Result<Reference> {
    let catalog = rein_models::Catalog::builtin()?;
    let entry = catalog.get(name)?;
    let dir = rein_models::DataDir::from_env()?;
    let path = rein_models::ensure_ready(entry, &dir)?;
    let options = rein_llama::EngineOptions {
        model_path: path,
        // The bare loop keeps llama.cpp's defaults, mmap included.
        use_mmap: true,
        threads: default_threads(),
        context_tokens: rein_models::embedded::DEFAULT_CONTEXT_TOKENS,
        batch_tokens: rein_llama::DEFAULT_BATCH_TOKENS,
        expected_size: Some(entry.bytes),
        gguf_template: false,
    };
    let f = rein_llama::reference::run(&options, &long_prompt(), generate as usize)?;
    Ok(Reference {
        load_ms: f.load_ms,
        prompt_tokens: f.prompt_tokens,
        prompt_tokens_per_s: per_second(f.prompt_tokens as f64, f.prompt_ms),
        generated_tokens: f.generated_tokens,
        generation_tokens_per_s: per_second(f.generated_tokens as f64, f.generation_ms),
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

/// One round: the bare loop and then the embedded worker, back to back, so each ratio compares
/// figures taken under the same load on a shared machine.
#[derive(Debug, Serialize)]
struct Round {
    embedded: Embedded,
    reference: Reference,
    ratios: Ratios,
}

fn ratios_of(embedded: &Embedded, reference: &Reference) -> Ratios {
    Ratios {
        generation_embedded_over_reference: ratio(
            embedded.generation_tokens_per_s,
            reference.generation_tokens_per_s,
        ),
        prompt_embedded_over_reference: ratio(
            embedded.prompt_tokens_per_s,
            reference.prompt_tokens_per_s,
        ),
        extend_over_redo: ratio(embedded.extend_ms, embedded.redo_whole_ms),
        choose_over_request_eval: ratio(embedded.choose_ms, embedded.request_eval_ms),
        peak_rss_embedded_over_reference: ratio(
            embedded.peak_rss_bytes as f64,
            reference.peak_rss_bytes as f64,
        ),
    }
}

pub fn run(args: PerfArgs, json: bool) -> anyhow::Result<i32> {
    if args.rounds == 0 {
        anyhow::bail!("--rounds must be at least 1");
    }
    if !json {
        eprintln!(
            "measuring {} with {} threads over {} rounds (bare loop, then the embedded worker)",
            args.model,
            default_threads(),
            args.rounds
        );
    }
    let started = Instant::now();
    let mut model = start_embedded(&args.model)?;
    let start_wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut rounds = Vec::new();
    for round in 0..args.rounds {
        let reference = measure_reference(&args.model, args.generate)?;
        let embedded = measure_embedded(&mut model, start_wall_ms, args.generate)?;
        let ratios = ratios_of(&embedded, &reference);
        if !json {
            eprintln!(
                "round {}: generation {:.1} vs {:.1} tokens/s, extend/redo {:.3}, choose/eval {:.2}",
                round + 1,
                embedded.generation_tokens_per_s,
                reference.generation_tokens_per_s,
                ratios.extend_over_redo,
                ratios.choose_over_request_eval
            );
        }
        rounds.push(Round {
            embedded,
            reference,
            ratios,
        });
    }
    let m = |f: &dyn Fn(&Round) -> f64| median(rounds.iter().map(f).collect());
    let summary = serde_json::json!({
        "embedded": {
            "load_ms": m(&|r| r.embedded.load_ms),
            "prompt_tokens": rounds[0].embedded.prompt_tokens,
            "prompt_tokens_per_s": m(&|r| r.embedded.prompt_tokens_per_s),
            "generated_tokens": rounds[0].embedded.generated_tokens,
            "generation_tokens_per_s": m(&|r| r.embedded.generation_tokens_per_s),
            "extend_tokens": rounds[0].embedded.extend_tokens,
            "extend_ms": m(&|r| r.embedded.extend_ms),
            "redo_whole_ms": m(&|r| r.embedded.redo_whole_ms),
            "choose_ms": m(&|r| r.embedded.choose_ms),
            "choose_request_tokens": rounds[0].embedded.choose_request_tokens,
            "request_eval_ms": m(&|r| r.embedded.request_eval_ms),
            "constrained_tokens_per_s": m(&|r| r.embedded.constrained_tokens_per_s),
            "peak_rss_bytes": m(&|r| r.embedded.peak_rss_bytes as f64),
        },
        "reference": {
            "load_ms": m(&|r| r.reference.load_ms),
            "prompt_tokens_per_s": m(&|r| r.reference.prompt_tokens_per_s),
            "generation_tokens_per_s": m(&|r| r.reference.generation_tokens_per_s),
            "peak_rss_bytes": m(&|r| r.reference.peak_rss_bytes as f64),
        },
        "ratios": {
            "generation_embedded_over_reference": m(&|r| r.ratios.generation_embedded_over_reference),
            "prompt_embedded_over_reference": m(&|r| r.ratios.prompt_embedded_over_reference),
            "extend_over_redo": m(&|r| r.ratios.extend_over_redo),
            "choose_over_request_eval": m(&|r| r.ratios.choose_over_request_eval),
            "peak_rss_embedded_over_reference": m(&|r| r.ratios.peak_rss_embedded_over_reference),
        },
    });
    if json {
        let doc = serde_json::json!({
            "model": args.model,
            "threads": default_threads(),
            "rounds": rounds,
            "median": summary,
            "targets": {
                "generation_embedded_over_reference_min": 0.97,
                "extend_over_redo_max": 0.2,
                "choose_over_request_eval_max": 1.1,
            }
        });
        println!("{doc}");
        return Ok(0);
    }
    let e = &summary["embedded"];
    let r = &summary["reference"];
    let q = &summary["ratios"];
    let f = |v: &serde_json::Value| v.as_f64().unwrap_or(0.0);
    let last = &rounds[rounds.len() - 1].embedded;
    println!(
        "model {}  threads {}  medians of {} rounds",
        args.model,
        default_threads(),
        rounds.len()
    );
    println!(
        "{:<46} {:>12} {:>12} {:>8}",
        "figure", "embedded", "bare loop", "ratio"
    );
    println!(
        "{:<46} {:>12.0} {:>12.0} {:>8.2}",
        "load (ms)",
        f(&e["load_ms"]),
        f(&r["load_ms"]),
        ratio(f(&e["load_ms"]), f(&r["load_ms"]))
    );
    println!(
        "{:<46} {:>12.1} {:>12.1} {:>8.2}",
        format!("prompt tokens/s ({} tokens)", last.prompt_tokens),
        f(&e["prompt_tokens_per_s"]),
        f(&r["prompt_tokens_per_s"]),
        f(&q["prompt_embedded_over_reference"])
    );
    println!(
        "{:<46} {:>12.1} {:>12.1} {:>8.2}  target >= 0.97",
        format!("generation tokens/s ({} tokens)", last.generated_tokens),
        f(&e["generation_tokens_per_s"]),
        f(&r["generation_tokens_per_s"]),
        f(&q["generation_embedded_over_reference"])
    );
    println!(
        "{:<46} {:>12.3} {:>12.3} {:>8.2}",
        "peak RSS (GB)",
        f(&e["peak_rss_bytes"]) / 1e9,
        f(&r["peak_rss_bytes"]) / 1e9,
        f(&q["peak_rss_embedded_over_reference"])
    );
    println!(
        "{:<46} {:>12.0} {:>12.0} {:>8.3}  target <= 0.20",
        format!(
            "extend cached prompt by {} tokens / redo (ms)",
            last.extend_tokens
        ),
        f(&e["extend_ms"]),
        f(&e["redo_whole_ms"]),
        f(&q["extend_over_redo"])
    );
    println!(
        "{:<46} {:>12.1} {:>12.1} {:>8.2}  target <= 1.10",
        format!(
            "choose 5 labels / eval of its {} tokens (ms)",
            last.choose_request_tokens
        ),
        f(&e["choose_ms"]),
        f(&e["request_eval_ms"]),
        f(&q["choose_over_request_eval"])
    );
    println!(
        "{:<46} {:>12.1}",
        "JSON-schema generation tokens/s",
        f(&e["constrained_tokens_per_s"])
    );
    println!(
        "choose picked {} at {:.2} (last round)",
        last.choose_best, last.choose_best_probability
    );
    Ok(0)
}
