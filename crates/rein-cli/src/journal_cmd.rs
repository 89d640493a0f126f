//! `rein journal list` and `rein journal show RUN`: what happened, step by step, read back from
//! `journal.db` (never from memory), so a run can be replayed after the fact.

use anyhow::{bail, Context};
use clap::Subcommand;
use rein_journal::{RunId, RunSummary, RunTrace};
use rein_protocol::display::{clip_line, escape_line, json_safe};
use serde_json::Value;

use crate::run_cmd::open_journal;

/// The journal event in which `rein bench` keeps what the model streamed during a run.
pub(crate) const MODEL_STREAM: &str = "model_stream";

#[derive(Debug, Subcommand)]
pub enum JournalCommand {
    /// Every run, oldest first.
    List,
    /// Replay one run: attempts, each step's thought, action, outcome, result and tokens,
    /// the checks with their facts, and the verdict.
    Show {
        /// The run id (see `rein journal list`).
        run: String,
    },
}

pub fn run(cmd: JournalCommand, json: bool) -> anyhow::Result<i32> {
    let journal = open_journal()?;
    match cmd {
        JournalCommand::List => {
            let runs = journal.list_runs()?;
            if json {
                println!("{}", json_safe(&serde_json::to_string(&runs)?));
            } else if runs.is_empty() {
                println!("no runs yet; start one with `rein run MISSION --workspace DIR`");
            } else {
                println!(
                    "{:>5}  {:<8} {:<14} {:<8} {:>5} {:>9}  model",
                    "run", "kind", "mission", "status", "steps", "tokens"
                );
                for r in &runs {
                    print_summary(r);
                }
            }
        }
        JournalCommand::Show { run } => {
            let Ok(id) = run.parse::<RunId>() else {
                bail!("{run:?} is not a run id; `rein journal list` shows them");
            };
            if journal.run(id)?.is_none() {
                bail!("there is no run {id} in {}", journal.path().display());
            }
            let trace = journal
                .run_trace(id)
                .with_context(|| format!("cannot read run {id}"))?;
            if json {
                println!("{}", json_safe(&serde_json::to_string(&trace)?));
            } else {
                print_trace(&trace);
            }
        }
    }
    Ok(0)
}

fn print_summary(r: &RunSummary) {
    println!(
        "{:>5}  {:<8} {:<14} {:<8} {:>5} {:>9}  {}",
        r.id.to_string(),
        r.kind.to_string(),
        escape_line(r.mission_id.as_deref().unwrap_or("-")),
        r.status.to_string(),
        r.steps,
        r.prompt_tokens + r.completion_tokens,
        escape_line(r.model.as_deref().unwrap_or("-")),
    );
}

fn print_trace(t: &RunTrace) {
    let r = &t.run;
    println!(
        "run {}: {} {} ({}), model {}, workspace {}",
        r.id,
        r.kind,
        escape_line(r.mission_id.as_deref().unwrap_or("-")),
        r.status,
        escape_line(r.model.as_deref().unwrap_or("-")),
        escape_line(r.workspace.as_deref().unwrap_or("-")),
    );
    if r.meta.get("command").and_then(Value::as_str) == Some("bench") {
        let field = |k: &str| match r.meta.get(k) {
            Some(Value::String(s)) => escape_line(s),
            Some(v) => json_safe(&v.to_string()),
            None => "-".into(),
        };
        println!(
            "bench run: suite {}, task {}, repeat {}, seed {}",
            field("suite"),
            field("task"),
            field("repeat"),
            field("seed")
        );
    }
    if let Some(sha) = &r.contract_sha {
        println!("contract sha256 {}", escape_line(sha));
    }
    println!(
        "{} steps, {} prompt + {} completion tokens",
        r.steps, r.prompt_tokens, r.completion_tokens
    );
    for a in &t.attempts {
        println!(
            "attempt {} ({}): {}",
            a.seq,
            escape_line(&a.strategy),
            escape_line(a.outcome.as_deref().unwrap_or("unfinished"))
        );
    }
    for ts in &t.steps {
        let s = &ts.step;
        let outcome = s
            .detail
            .get("outcome")
            .and_then(Value::as_str)
            .unwrap_or("");
        println!(
            "{:>3}. [{}] {} {}  ({} + {} tokens, {} ms)",
            s.seq,
            s.kind,
            escape_line(s.action.as_deref().unwrap_or("")),
            escape_line(outcome),
            s.prompt_tokens.unwrap_or(0),
            s.completion_tokens.unwrap_or(0),
            s.elapsed_ms.unwrap_or(0),
        );
        if let Some(thought) = &s.thought {
            println!("     thought: {}", escape_line(thought));
        }
        if s.detail.get("by").and_then(Value::as_str) == Some("rein") {
            // Journals from before the field: only inputs-first made calls then.
            let lever = s
                .detail
                .get("lever")
                .and_then(Value::as_str)
                .unwrap_or("inputs-first");
            println!("     by: Rein (lever {lever}), not the model");
        }
        if let Some(p) = s.detail.get("parameters") {
            println!("     parameters: {}", clip_json(p, 300));
        }
        for key in ["summary", "message", "model_error"] {
            if let Some(v) = s.detail.get(key).and_then(Value::as_str) {
                println!("     {key}: {}", clip_line(v, 300));
            }
        }
        if let Some(cap) = s.detail.get("cap") {
            println!("     cap: {}", clip_json(cap, 300));
        }
        if s.kind == rein_journal::StepKind::FormatError {
            if let Some(reply) = &s.reply {
                println!("     reply: {}", clip_line(reply, 300));
            }
        }
    }
    for c in &t.checks {
        let mark = crate::run_cmd::check_mark(c.advisory, c.passed);
        let facts = match &c.facts {
            Value::Array(a) => a
                .iter()
                .map(|f| {
                    f.as_str()
                        .map_or_else(|| json_safe(&f.to_string()), escape_line)
                })
                .collect::<Vec<_>>()
                .join("; "),
            other => json_safe(&other.to_string()),
        };
        println!(
            "[{mark}] {} ({}): {facts}",
            escape_line(&c.name),
            escape_line(&c.kind)
        );
    }
    // What the model streamed, reply by reply (the bench's recorder keeps it).
    for e in t.events.iter().filter(|e| e.kind == MODEL_STREAM) {
        let replies = e.payload.get("replies").and_then(Value::as_array);
        for (i, reply) in replies.into_iter().flatten().enumerate() {
            println!(
                "streamed reply {} ({} ms): {}",
                i + 1,
                reply.get("ms").and_then(Value::as_u64).unwrap_or(0),
                clip_line(reply.get("text").and_then(Value::as_str).unwrap_or(""), 300)
            );
        }
    }
    if let Some(v) = &r.verdict {
        let reason = v.get("reason").and_then(Value::as_str).unwrap_or("");
        println!("verdict: {} ({})", r.status, escape_line(reason));
    }
}

/// A JSON value on one line, at most `max` characters, with hidden characters as JSON `\u`
/// escapes (JSON already escapes newlines and the other C0 controls).
fn clip_json(v: &Value, max: usize) -> String {
    let text = v.to_string();
    match text.char_indices().nth(max) {
        Some((at, _)) => json_safe(&text[..at]) + "...",
        None => json_safe(&text),
    }
}
