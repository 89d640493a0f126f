//! `rein qualify MISSION --runs N`: the bar for switching a mission's semantic checks to
//! automatic judgment. The mission runs N times (each in a fresh workspace that is kept for a
//! person to review) and every check is judged, human-review-only or not. A run where the
//! semantic checks (grounded, decision) and the deterministic ones disagree is a confident
//! false completion candidate: a semantic pass over a deterministic failure, or the reverse.
//! Zero of them over at least three runs is the bar; a person still reviews the runs.

use anyhow::bail;
use clap::Args;
use rein_engine::agent::{AgentOptions, ModelDecider, RunOutcome};
use rein_engine::checks::{CheckSpec, Decider};
use rein_engine::gate::AllowAll;
use rein_engine::mission::{materialise_inputs, Mission};
use rein_models::Catalog;
use rein_protocol::display::{escape_line, json_safe};
use serde::Serialize;
use serde_json::json;

use crate::open::{default_actor, open_model};
use crate::run_cmd::{drive, open_journal, resolve_mission, Printer};

/// Runs at least this many times before a mission can qualify.
pub const MIN_QUALIFYING_RUNS: u32 = 3;

#[derive(Debug, Args)]
pub struct QualifyArgs {
    /// A mission file, a mission folder, or the name of a mission under missions/.
    mission: String,
    /// How many runs.
    #[arg(long, default_value_t = MIN_QUALIFYING_RUNS)]
    runs: u32,
    /// The actor model (default: the catalog's actor).
    #[arg(long)]
    model: Option<String>,
    /// The decision model for `decision` checks (default: the catalog's decision model).
    #[arg(long)]
    decider: Option<String>,
    /// Allow an `openai:` endpoint that is not on this machine.
    #[arg(long)]
    allow_remote: bool,
}

#[derive(Debug, Serialize)]
struct QualifyRun {
    run: i64,
    workspace: String,
    status: String,
    end: String,
    semantic_passed: Option<bool>,
    deterministic_passed: Option<bool>,
    /// Semantic and deterministic checks disagree.
    false_completion: bool,
}

pub fn run(args: QualifyArgs, json: bool) -> anyhow::Result<i32> {
    if args.runs == 0 || args.runs > 100 {
        bail!("--runs must be between 1 and 100, not {}", args.runs);
    }
    let mission_file = resolve_mission(&args.mission)?;
    let contract = Mission::load(&mission_file)?;
    let journal = open_journal()?;
    let spec = match args.model {
        Some(m) => m,
        None => default_actor()?,
    };
    let mut model = open_model(&spec, args.allow_remote)?;
    let needs_decider = contract
        .mission
        .checks
        .iter()
        .any(|c| matches!(c.spec, CheckSpec::Decision { .. }));
    let mut decision_model = if needs_decider {
        let spec = match args.decider {
            Some(d) => d,
            None => Catalog::builtin()?
                .default_for("decision")
                .map(|e| e.name.clone())
                .ok_or_else(|| anyhow::anyhow!("the catalog names no decision model"))?,
        };
        Some(open_model(&spec, args.allow_remote)?)
    } else {
        None
    };
    // Outside the data folder: a workspace there could overwrite the journal (and is refused).
    let base = std::env::temp_dir().join("rein-qualify");
    let mut runs = Vec::new();
    for i in 1..=args.runs {
        let dir = base.join(format!("{}-{}-{i}", contract.id(), std::process::id()));
        if dir.exists() {
            bail!("{} already exists; remove it or run again", dir.display());
        }
        std::fs::create_dir_all(&dir)?;
        let hashes = materialise_inputs(&contract, &dir)?;
        let mut options = AgentOptions::for_mission(&contract, model.identity());
        options.automatic_judgment = false;
        options.seed = i;
        let mut decider = decision_model
            .as_mut()
            .map(|m| ModelDecider::new(m.as_mut()));
        let outcome = drive_one(
            &contract,
            &mission_file,
            &dir,
            &hashes,
            &journal,
            model.as_mut(),
            decider.as_mut().map(|d| d as &mut dyn Decider),
            options,
        )?;
        let row = classify(&outcome, &contract, dir.display().to_string());
        if json {
            let line = json!({"event": "qualify_run", "run": row}).to_string();
            println!("{}", json_safe(&line));
        } else {
            println!(
                "run {} ({}): {} [{}], semantic {}, deterministic {}{}",
                row.run,
                escape_line(&row.workspace),
                escape_line(&row.status),
                escape_line(&row.end),
                show(row.semantic_passed),
                show(row.deterministic_passed),
                if row.false_completion {
                    "  <- confident false completion"
                } else {
                    ""
                }
            );
        }
        runs.push(row);
    }
    let false_completions = runs.iter().filter(|r| r.false_completion).count();
    let qualified = args.runs >= MIN_QUALIFYING_RUNS && false_completions == 0;
    let note = format!(
        "{false_completions} confident false completion(s) in {} run(s); the bar is zero in at \
         least {MIN_QUALIFYING_RUNS} runs{}; a person must still review the workspaces before \
         the mission's mode is switched to automatic",
        args.runs,
        if qualified { " (met)" } else { " (not met)" }
    );
    if json {
        let doc = json!({"mission": contract.id(), "contract_sha256": contract.sha256, "runs": runs,
               "false_completions": false_completions, "qualified": qualified, "note": note});
        println!("{}", json_safe(&doc.to_string()));
    } else {
        println!("{}", escape_line(&note));
    }
    Ok(if qualified { 0 } else { 1 })
}

#[allow(clippy::too_many_arguments)]
fn drive_one(
    contract: &rein_engine::mission::FrozenContract,
    mission_file: &std::path::Path,
    dir: &std::path::Path,
    hashes: &[rein_engine::mission::InputHash],
    journal: &rein_journal::Journal,
    model: &mut dyn rein_models::Model,
    decider: Option<&mut dyn Decider>,
    options: AgentOptions,
) -> anyhow::Result<RunOutcome> {
    let meta = json!({"command": "qualify", "approve": "all"});
    drive(
        contract,
        mission_file,
        dir,
        hashes,
        journal,
        model,
        &mut AllowAll,
        decider,
        options,
        meta,
        &mut Printer::quiet(),
    )
}

fn show(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "pass",
        Some(false) => "fail",
        None => "-",
    }
}

fn classify(
    outcome: &RunOutcome,
    contract: &rein_engine::mission::FrozenContract,
    workspace: String,
) -> QualifyRun {
    let (mut semantic, mut deterministic) = (Vec::new(), Vec::new());
    if let Some(v) = &outcome.verdict {
        for (check, result) in contract.mission.checks.iter().zip(&v.checks) {
            match check.spec {
                CheckSpec::Grounded { .. } | CheckSpec::Decision { .. } => {
                    semantic.push(result.passed)
                }
                _ => deterministic.push(result.passed),
            }
        }
    }
    let all = |v: &[bool]| (!v.is_empty()).then(|| v.iter().all(|p| *p));
    let semantic_passed = all(&semantic);
    let deterministic_passed = all(&deterministic);
    QualifyRun {
        run: outcome.run.0,
        workspace,
        status: outcome.status.to_string(),
        end: outcome.end.name().into(),
        false_completion: matches!((semantic_passed, deterministic_passed), (Some(a), Some(b)) if a != b),
        semantic_passed,
        deterministic_passed,
    }
}
