//! The bench runner: every (suite, task, model, repeat) work item of this shard, each in a fresh
//! temp workspace through `run_cmd::drive` (the code path of `rein run`), `--jobs` at once.
//! Each finished run is appended to OUT/results.jsonl at once, so `--resume` keeps it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use anyhow::{bail, Context};
use rein_bench::render::{terminal, write_outputs};
use rein_bench::results::{
    append_result, check_consistent, read_results, RunKey, RunResult, RESULTS_FILE,
};
use rein_bench::shard::Shard;
use rein_bench::suite::{Sandbox, Split, Suite, Task};
use rein_engine::agent::{AgentOptions, RunEnd, RunOutcome};
use rein_engine::gate::AllowAll;
use rein_engine::mission::materialise_inputs;
use rein_models::Model;
use rein_protocol::display::escape_line;
use serde_json::json;

use super::RunBenchArgs;
use crate::open::open_model;
use crate::run_cmd::{drive, open_journal, Printer};

/// One run to do.
struct Item<'a> {
    suite: &'a str,
    task: &'a Task,
    model: &'a str,
    repeat: u32,
}

impl Item<'_> {
    fn key(&self) -> RunKey {
        RunKey {
            suite: self.suite.to_string(),
            task: self.task.id.clone(),
            model: self.model.to_string(),
            repeat: self.repeat,
        }
    }
}

pub fn run(args: RunBenchArgs, json: bool) -> anyhow::Result<i32> {
    if args.repeats == 0 || args.repeats > 1000 {
        bail!("--repeats must be between 1 and 1000, not {}", args.repeats);
    }
    if args.jobs == 0 || args.jobs > 64 {
        bail!("--jobs must be between 1 and 64, not {}", args.jobs);
    }
    let models: Vec<String> = args
        .models
        .iter()
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty())
        .collect();
    if models.is_empty() {
        bail!("--models names no model");
    }
    let shard = match &args.shard {
        Some(s) => Shard::parse(s)?,
        None => Shard::ALL,
    };
    let mut suites = Vec::new();
    for s in &args.suites {
        suites.push(Suite::load(s)?);
    }
    crate::open::refuse_data_dir_overlap(&args.out)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let results_file = args.out.join(RESULTS_FILE);
    let done = read_results(&results_file)?;
    if !done.is_empty() && !args.resume {
        bail!(
            "{} already holds {} run(s): add --resume to keep them and run the rest, or give \
             another --out",
            results_file.display(),
            done.len()
        );
    }
    let done_keys: std::collections::BTreeSet<RunKey> = done.iter().map(RunResult::key).collect();
    let mut items = Vec::new();
    for suite in &suites {
        for task in &suite.tasks {
            let wanted = match args.split.as_str() {
                "dev" => task.split == Split::Dev,
                "heldout" => task.split == Split::Heldout,
                _ => true,
            };
            if !wanted {
                continue;
            }
            for model in &models {
                for repeat in 0..args.repeats {
                    if !shard.holds(&suite.name, &task.id, model, repeat) {
                        continue;
                    }
                    let item = Item {
                        suite: &suite.name,
                        task,
                        model,
                        repeat,
                    };
                    if !done_keys.contains(&item.key()) {
                        items.push(item);
                    }
                }
            }
        }
    }
    let total = items.len();
    eprintln!(
        "rein: bench: {total} run(s) to do{} ({} kept from {})",
        if shard == Shard::ALL {
            String::new()
        } else {
            format!(" in shard {}/{}", shard.index, shard.count)
        },
        done.len(),
        escape_line(&results_file.display().to_string())
    );
    let queue = Mutex::new(items.into_iter().rev().collect::<Vec<_>>());
    let finished = Mutex::new(done);
    let passes = AtomicU64::new(0);
    let counter = AtomicU64::new(0);
    let base = std::env::temp_dir().join(format!("rein-bench-{}", std::process::id()));
    let worker = |id: usize| -> anyhow::Result<()> {
        let journal = open_journal()?;
        // Kept open between runs, except scripted models, which replay from the start each run.
        let mut open: Option<(String, Box<dyn Model>)> = None;
        loop {
            let Some(item) = queue
                .lock()
                .map_err(|_| anyhow::anyhow!("a bench worker panicked"))?
                .pop()
            else {
                return Ok(());
            };
            let fresh = item.model.starts_with("scripted:");
            if fresh || open.as_ref().map(|(s, _)| s.as_str()) != Some(item.model) {
                open = Some((
                    item.model.to_string(),
                    open_model(item.model, args.allow_remote)?,
                ));
            }
            let Some((_, model)) = open.as_mut() else {
                continue;
            };
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let dir = base.join(format!("w{id}-{n}"));
            let seed = args.seed.wrapping_add(item.repeat);
            let result = run_one(&item, model.as_mut(), &journal, &dir, seed);
            let _ = std::fs::remove_dir_all(&dir);
            let result = result?;
            append_result(&results_file, &result)?;
            if result.passed {
                passes.fetch_add(1, Ordering::SeqCst);
            }
            finished
                .lock()
                .map_err(|_| anyhow::anyhow!("a bench worker panicked"))?
                .push(result.clone());
            eprintln!(
                "rein: bench [{}/{total}, {} passed] {}/{} {} #{}: {}",
                n + 1,
                passes.load(Ordering::SeqCst),
                escape_line(&result.suite),
                escape_line(&result.task),
                escape_line(&result.model),
                result.repeat,
                if result.passed {
                    "pass".to_string()
                } else {
                    format!("fail: {}", escape_line(&result.reason))
                }
            );
        }
    };
    let outcomes: Vec<anyhow::Result<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..args.jobs)
            .map(|id| scope.spawn(move || worker(id)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a bench worker panicked")))
            })
            .collect()
    });
    let _ = std::fs::remove_dir_all(&base);
    for o in outcomes {
        o?;
    }
    let all = finished
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a bench worker panicked"))?;
    check_consistent(&all)?;
    let report = write_outputs(&args.out, &all)?;
    if json {
        let doc = json!({ "out": args.out, "report": report });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", terminal(&report));
        println!(
            "wrote {}/{{results.jsonl,report.md,report.html,junit.xml}}",
            escape_line(&args.out.display().to_string())
        );
    }
    Ok(0)
}

/// One run in a fresh workspace `dir` (created here, empty), judged; the record of it.
fn run_one(
    item: &Item<'_>,
    model: &mut dyn Model,
    journal: &rein_journal::Journal,
    dir: &Path,
    seed: u32,
) -> anyhow::Result<RunResult> {
    if item.task.sandbox == Sandbox::Memory {
        let (suite, model_spec) = (item.suite, item.model);
        return super::memory::run_task(
            suite,
            item.task,
            model_spec,
            model,
            journal,
            seed,
            item.repeat,
        );
    }
    if dir.exists() {
        bail!("{} already exists", dir.display());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let contract = &item.task.contract;
    let hashes = materialise_inputs(contract, dir)?;
    let mut options = AgentOptions::for_mission(contract, model.identity());
    options.seed = seed;
    let identity = model.identity().clone();
    let meta = json!({
        "command": "bench",
        "approve": "all",
        "suite": item.suite,
        "task": item.task.id,
        "repeat": item.repeat,
        "seed": seed,
    });
    let mission_file: PathBuf = contract.source.clone();
    let outcome: RunOutcome = drive(
        contract,
        &mission_file,
        dir,
        &hashes,
        journal,
        model,
        &mut AllowAll,
        None,
        options,
        meta,
        &mut Printer::quiet(),
    )?;
    let f = &outcome.figures;
    Ok(RunResult {
        suite: item.suite.to_string(),
        task: item.task.id.clone(),
        category: item.task.category.clone(),
        split: item.task.split.as_str().to_string(),
        model: item.model.to_string(),
        seed: u64::from(seed),
        repeat: item.repeat,
        passed: outcome.passed(),
        reason: outcome.reason(),
        contract_sha256: outcome.contract_sha256.clone(),
        model_identity: format!(
            "{} ({}){}",
            identity.name,
            identity.architecture,
            identity
                .sha256
                .map(|h| format!(" sha256:{h}"))
                .unwrap_or_default()
        ),
        steps: f.steps,
        wall_ms: f.elapsed_ms,
        prompt_tokens: f.prompt_tokens,
        completion_tokens: f.completion_tokens,
        format_errors: f.format_errors,
        repairs: f.repaired,
        cap_hit: matches!(outcome.end, RunEnd::Cap { .. }),
        finish_accepted: outcome.finish_accepted,
        memory: None,
    })
}
