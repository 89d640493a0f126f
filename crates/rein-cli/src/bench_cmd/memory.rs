//! Memory-sandbox runs: a bench task with `sandbox = "memory"`, and `rein bench --task "PROMPT"`
//! (one ad-hoc memory task whose checks are inferred from its words). Both go through
//! `rein_engine::memory::run_memory`, the agent loop over a fresh in-memory sandbox.

use std::collections::BTreeMap;

use anyhow::{bail, Context};
use rein_bench::infer::{infer, mission_json, Requirement};
use rein_bench::results::{MemoryRecord, RunResult};
use rein_bench::suite::Task;
use rein_engine::agent::{AgentOptions, Levers, RunEnd};
use rein_engine::gate::AllowAll;
use rein_engine::memory::{run_memory, start_sandbox, MemoryRun, MemoryRunEnv};
use rein_engine::mission::{Mission, MISSION_FILE_NAME};
use rein_journal::Journal;
use rein_models::Model;
use rein_protocol::display::{escape_line, json_safe};
use serde_json::{json, Value};

use crate::open::open_actor;
use crate::run_cmd::{open_journal, Printer};

/// Turns of an ad-hoc task: a few per requirement is plenty for a toy task.
const ADHOC_MAX_TURNS: u32 = 16;

/// How one bench run is made: its seed, its repeat number and its levers.
#[derive(Debug, Clone, Copy)]
pub(super) struct RunSettings {
    pub seed: u32,
    pub repeat: u32,
    pub levers: Levers,
}

/// One memory task of a suite, judged; the record of it with the final sandbox and action log.
pub(super) fn run_task(
    suite: &str,
    task: &Task,
    model_spec: &str,
    model: &mut dyn Model,
    journal: &Journal,
    how: RunSettings,
    printer: &mut Printer,
) -> anyhow::Result<(RunResult, rein_journal::RunId)> {
    let RunSettings {
        seed,
        repeat,
        levers,
    } = how;
    let contract = &task.contract;
    let start = start_sandbox(contract, &task.variables)
        .with_context(|| format!("task {suite}/{}", task.id))?;
    let mut options = AgentOptions::for_mission(contract, model.identity());
    options.seed = seed;
    options.levers = levers;
    let identity = model.identity().clone();
    let meta = json!({
        "command": "bench",
        "sandbox": "memory",
        "suite": suite,
        "task": task.id,
        "repeat": repeat,
        "seed": seed,
        "levers": levers.to_json(),
    });
    let env = MemoryRunEnv {
        contract,
        mission_file: &contract.source,
        journal,
        meta,
    };
    let run = run_memory(env, start, model, &mut AllowAll, options, &mut |e| {
        printer.event(e)
    })?;
    let mut result = RunResult::from_outcome(
        suite,
        task,
        model_spec,
        &identity,
        seed,
        repeat,
        &run.outcome,
        Some(record(&run)),
    );
    result.levers = Some(levers.to_json());
    Ok((result, run.outcome.run))
}

fn record(run: &MemoryRun) -> MemoryRecord {
    MemoryRecord {
        files: run.sandbox.files.clone(),
        variables: run.sandbox.variables.clone(),
        actions: run.actions.clone(),
    }
}

/// `rein bench --task "PROMPT" --model M [--seed S]`: prints the verdict (or with `--json` one
/// object) and returns the exit code of DESIGN.md (0 pass, 1 fail, 2 bad input, 3 model failure).
pub(super) fn run_adhoc(
    task: &str,
    model_spec: &str,
    seed: u32,
    allow_remote: bool,
    json: bool,
) -> anyhow::Result<i32> {
    let mut printer = if json {
        Printer::quiet()
    } else {
        Printer::new(false)
    };
    let (doc, requirements, run) = adhoc(
        task,
        model_spec,
        seed,
        allow_remote,
        &mut |e| printer.event(e),
        &mut |_| {},
    )?;
    if json {
        println!("{}", json_safe(&serde_json::to_string(&doc)?));
    } else {
        print_adhoc(&requirements, &run);
    }
    Ok(run.outcome.exit_code())
}

/// One ad-hoc memory task, judged: the document `--task --json` prints, the inferred
/// requirements and the run. The agent's events go to `on_event` as they happen (the terminal
/// printer, or the web UI's bench page), and the model's reply to `on_text` piece by piece.
pub(crate) fn adhoc(
    task: &str,
    model_spec: &str,
    seed: u32,
    allow_remote: bool,
    on_event: &mut dyn FnMut(&rein_engine::agent::AgentEvent),
    on_text: &mut (dyn FnMut(&str) + Send),
) -> anyhow::Result<(Value, Vec<Requirement>, MemoryRun)> {
    let requirements = infer(task)?;
    let chars = task.chars().count();
    if chars > rein_engine::agent::MAX_INPUT_CHARS {
        bail!(
            "the task has {chars} characters, more than the {} a task may have; shorten it",
            rein_engine::agent::MAX_INPUT_CHARS
        );
    }
    // The generated mission is frozen from a file like any other, so the contract is verified
    // before every attempt and its SHA-256 recorded with the verdict.
    let dir = TempDir::create()?;
    let mission_file = dir.0.join(MISSION_FILE_NAME);
    let mission = mission_json(task, &requirements, ADHOC_MAX_TURNS);
    std::fs::write(&mission_file, serde_json::to_string_pretty(&mission)?)
        .with_context(|| format!("cannot write {}", mission_file.display()))?;
    let contract = Mission::load(&mission_file)?;
    let journal = open_journal()?;
    let mut model = open_actor(model_spec, allow_remote, &Levers::DEFAULT)?;
    let mut options = AgentOptions::for_mission(&contract, model.identity());
    options.seed = seed;
    let identity = model.identity().clone();
    let meta = json!({"command": "bench --task", "sandbox": "memory", "seed": seed});
    let env = MemoryRunEnv {
        contract: &contract,
        mission_file: &mission_file,
        journal: &journal,
        meta,
    };
    let mut tapped = super::recording::Recording::tapped(model.as_mut(), on_text);
    let run = run_memory(
        env,
        start_sandbox(&contract, &BTreeMap::new())?,
        &mut tapped,
        &mut AllowAll,
        options,
        on_event,
    )?;
    let doc = adhoc_document(task, model_spec, seed, &identity, &requirements, &run);
    Ok((doc, requirements, run))
}

/// A folder of its own under the system temp folder, removed when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn create() -> anyhow::Result<TempDir> {
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = base.join(format!("rein-adhoc-{}-{nanos}", std::process::id()));
        // `create_dir` (not `_all`) refuses a folder that is already there.
        std::fs::create_dir(&dir)
            .with_context(|| format!("cannot create the temporary folder {}", dir.display()))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The one object `--task --json` prints.
fn adhoc_document(
    task: &str,
    model: &str,
    seed: u32,
    identity: &rein_protocol::ModelIdentity,
    requirements: &[Requirement],
    run: &MemoryRun,
) -> Value {
    let o = &run.outcome;
    let checks: BTreeMap<&str, bool> = o
        .verdict
        .as_ref()
        .map(|v| v.checks.iter().map(|c| (c.id.as_str(), c.passed)).collect())
        .unwrap_or_default();
    let requirements: Vec<Value> = requirements
        .iter()
        .map(|r| {
            json!({
                "check": r.check,
                "what": r.what,
                "because": r.because,
                "inferred": r.inferred,
                "passed": checks.get(r.check.as_str()).copied(),
            })
        })
        .collect();
    json!({
        "task": task,
        "model": model,
        "seed": seed,
        "verdict": if o.passed() { "pass" } else { "fail" },
        "reason": o.reason(),
        "sandbox": {
            "files": run.sandbox.files,
            "variables": run.sandbox.variables,
        },
        "actions": run.actions,
        "steps": o.figures.steps,
        "requirements": requirements,
        "end": o.end.name(),
        "contract_sha256": o.contract_sha256,
        "model_identity": identity,
        "run": o.run,
    })
}

fn print_adhoc(requirements: &[Requirement], run: &MemoryRun) {
    let o = &run.outcome;
    println!("requirements (inferred from the task's words):");
    for r in requirements {
        let passed = o
            .verdict
            .as_ref()
            .and_then(|v| v.checks.iter().find(|c| c.id == r.check))
            .map(|c| c.passed);
        let mark = match passed {
            Some(true) => "ok  ",
            Some(false) => "FAIL",
            None => "?   ",
        };
        println!(
            "  {mark} {} [inferred: {}]",
            escape_line(&r.what),
            escape_line(&r.because)
        );
    }
    println!("sandbox files:");
    for (path, content) in &run.sandbox.files {
        println!("  {}: {}", escape_line(path), escape_line(content));
    }
    println!("sandbox variables:");
    for (name, value) in &run.sandbox.variables {
        println!(
            "  {} = {}",
            escape_line(name),
            escape_line(&value.to_string())
        );
    }
    println!("actions:");
    for a in &run.actions {
        println!(
            "  {}. {} {} -> {}",
            a.step,
            escape_line(&a.action),
            escape_line(&a.parameters.to_string()),
            escape_line(&a.outcome)
        );
    }
    let stopped = matches!(o.end, RunEnd::UnknownTool { .. });
    println!(
        "verdict: {}{}: {}",
        if o.passed() { "PASS" } else { "FAIL" },
        if stopped { " (stopped)" } else { "" },
        escape_line(&o.reason())
    );
}
