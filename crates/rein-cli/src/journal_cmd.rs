//! `rein journal list` and `rein journal show RUN`: what happened, step by step, read back from
//! `journal.db` (never from memory), so a run can be replayed after the fact.

use anyhow::{bail, Context};
use clap::Subcommand;
use rein_journal::{RunId, RunSummary, RunTrace};
use serde_json::Value;

use crate::run_cmd::open_journal;

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
                println!("{}", serde_json::to_string(&runs)?);
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
                println!("{}", serde_json::to_string(&trace)?);
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
        r.mission_id.as_deref().unwrap_or("-"),
        r.status.to_string(),
        r.steps,
        r.prompt_tokens + r.completion_tokens,
        r.model.as_deref().unwrap_or("-"),
    );
}

fn print_trace(t: &RunTrace) {
    let r = &t.run;
    println!(
        "run {}: {} {} ({}), model {}, workspace {}",
        r.id,
        r.kind,
        r.mission_id.as_deref().unwrap_or("-"),
        r.status,
        r.model.as_deref().unwrap_or("-"),
        r.workspace.as_deref().unwrap_or("-"),
    );
    if let Some(sha) = &r.contract_sha {
        println!("contract sha256 {sha}");
    }
    println!(
        "{} steps, {} prompt + {} completion tokens",
        r.steps, r.prompt_tokens, r.completion_tokens
    );
    for a in &t.attempts {
        println!(
            "attempt {} ({}): {}",
            a.seq,
            a.strategy,
            a.outcome.as_deref().unwrap_or("unfinished")
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
            s.action.as_deref().unwrap_or(""),
            outcome,
            s.prompt_tokens.unwrap_or(0),
            s.completion_tokens.unwrap_or(0),
            s.elapsed_ms.unwrap_or(0),
        );
        if let Some(thought) = &s.thought {
            println!("     thought: {thought}");
        }
        if let Some(p) = s.detail.get("parameters") {
            println!("     parameters: {}", clip(&p.to_string(), 300));
        }
        for key in ["summary", "message", "model_error"] {
            if let Some(v) = s.detail.get(key).and_then(Value::as_str) {
                println!("     {key}: {}", clip(v, 300));
            }
        }
        if let Some(cap) = s.detail.get("cap") {
            println!("     cap: {}", cap);
        }
        if s.kind == rein_journal::StepKind::FormatError {
            if let Some(reply) = &s.reply {
                println!("     reply: {}", clip(reply, 300));
            }
        }
    }
    for c in &t.checks {
        let mark = if c.passed { "pass" } else { "FAIL" };
        let facts = match &c.facts {
            Value::Array(a) => a
                .iter()
                .map(|f| f.as_str().map_or_else(|| f.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join("; "),
            other => other.to_string(),
        };
        println!("[{mark}] {} ({}): {facts}", c.name, c.kind);
    }
    if let Some(v) = &r.verdict {
        let reason = v.get("reason").and_then(Value::as_str).unwrap_or("");
        println!("verdict: {} ({reason})", r.status);
    }
}

fn clip(s: &str, max: usize) -> String {
    let flat = s.replace('\n', "\\n");
    if flat.chars().count() <= max {
        flat
    } else {
        flat.chars().take(max).collect::<String>() + "..."
    }
}
