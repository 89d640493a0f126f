//! The bench runner: every (suite, task, model, repeat) work item of this shard, each in a fresh
//! temp workspace through `run_cmd::drive` (the code path of `rein run`), `--jobs` at once.
//! Each finished run is recorded in jobs.db ([`super::job`]) and appended to OUT/results.jsonl
//! at once, so `--resume` keeps it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context};
use rein_bench::render::{terminal, write_outputs};
use rein_bench::results::{
    append_result, check_consistent, context_setting, RunKey, RunResult, RESULTS_FILE,
};
use rein_bench::shard::Shard;
use rein_bench::suite::{Sandbox, Split, Suite, Task};
use rein_engine::agent::{clip, AgentOptions, Levers, RunOutcome};
use rein_engine::gate::OwnWorkApprover;
use rein_engine::mission::materialise_inputs;
use rein_journal::{BenchItemId, RunId};
use rein_models::Model;
use rein_protocol::display::escape_line;
use rein_workspace::{RelPath, WalkOptions, Walker, Workspace, MAX_WALK_ENTRIES};
use serde_json::{json, Value};

use super::endpoints::group_models;
use super::job::BenchJob;
use super::progress::Progress;
use super::recording::{trace, Recording};
use super::RunBenchArgs;
use crate::run_cmd::{drive, open_journal, Printer};

/// One run to do.
struct Item<'a> {
    suite: &'a str,
    task: &'a Task,
    model: &'a str,
    repeat: u32,
    /// Its work item in jobs.db.
    id: BenchItemId,
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
    // A misspelt lever is refused before any model loads.
    let levers = Levers::from_settings(&args.levers)?;
    crate::run_cmd::check_samples(args.samples)?;
    if args.repeats == 0 || args.repeats > 1000 {
        bail!("--repeats must be between 1 and 1000, not {}", args.repeats);
    }
    if args.jobs == 0 || args.jobs > 64 {
        bail!("--jobs must be between 1 and 64, not {}", args.jobs);
    }
    let entries: Vec<String> = args
        .models
        .iter()
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty())
        .collect();
    if entries.is_empty() {
        bail!("--models names no model");
    }
    let groups = group_models(&entries)?;
    if let Some(context) = args.context {
        for model in &entries {
            crate::open::check_context(model, context)?;
        }
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
    let spec = json!({
        "suites": args.suites, "models": entries, "repeats": args.repeats, "seed": args.seed, "levers": levers.to_json(),
        "samples": args.samples, "context": args.context, "split": args.split, "jobs": args.jobs, "shard": args.shard, "resume": args.resume,
    });
    let seed = args.seed;
    let context = args.context;
    let harness = harness_sha256();
    let expected = expected_samples(&suites, args.samples);
    let mut job = BenchJob::begin(&args.out, &results_file, args.resume, spec, |judged| {
        same_seeds(judged, seed)?;
        same_context(judged, context)?;
        same_samples(judged, &expected)
    })?;
    let kept = job.judged.len();
    let done_keys: std::collections::BTreeSet<RunKey> =
        job.judged.iter().map(RunResult::key).collect();
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
            for group in &groups {
                for repeat in 0..args.repeats {
                    if !shard.holds(&suite.name, &task.id, &group.name, repeat) {
                        continue;
                    }
                    let mut item = Item {
                        suite: &suite.name,
                        task,
                        model: &group.name,
                        repeat,
                        id: BenchItemId(0),
                    };
                    let key = item.key();
                    if !done_keys.contains(&key) {
                        let seed = args.seed.wrapping_add(repeat);
                        item.id = job.queue(&key, u64::from(seed))?;
                        items.push(item);
                    }
                }
            }
        }
    }
    let total = items.len();
    let started = std::time::Instant::now();
    eprintln!(
        "rein: bench: {total} run(s) to do{} ({kept} kept from {})",
        if shard == Shard::ALL {
            String::new()
        } else {
            format!(" in shard {}/{}", shard.index, shard.count)
        },
        escape_line(&results_file.display().to_string())
    );
    let finished = Mutex::new(std::mem::take(&mut job.judged));
    let job = job;
    let queue = Mutex::new(items.into_iter().rev().collect::<Vec<_>>());
    let passes = AtomicU64::new(0);
    let counter = AtomicU64::new(0);
    let done_count = AtomicU64::new(0);
    let progress = Progress::new(total);
    let offset = shard.index.saturating_sub(1) as usize;
    // A fresh folder of its own: one named by the process id alone collided with the folder a
    // killed bench of the same (reused) id had left, and stopped the bench after two runs.
    let base_dir = tempfile::Builder::new()
        .prefix("rein-bench-")
        .tempdir()
        .context("cannot create the bench's temporary folder")?;
    let base = base_dir.path().to_path_buf();
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
            let group = groups
                .iter()
                .find(|g| g.name == item.model)
                .context("a bench item names a model not in --models")?;
            let spec = group.spec_for(id, offset);
            let fresh = spec.starts_with("scripted:");
            if fresh || open.as_ref().map(|(s, _)| s.as_str()) != Some(spec) {
                open = Some((
                    spec.to_string(),
                    crate::open::open_bench_actor(
                        spec,
                        args.allow_remote,
                        &levers,
                        args.jobs,
                        args.context,
                    )?,
                ));
            }
            let Some((_, model)) = open.as_mut() else {
                continue;
            };
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let dir = base.join(format!("w{id}-{n}"));
            let seed = args.seed.wrapping_add(item.repeat);
            job.start(item.id)?;
            let result = run_one(
                &item,
                model.as_mut(),
                &journal,
                &dir,
                RunSettings {
                    seed,
                    levers,
                    samples: args.samples,
                },
                Watch::quiet(),
            );
            let _ = std::fs::remove_dir_all(&dir);
            let (mut result, journal_run) = match result {
                Ok(r) => r,
                Err(e) => {
                    job.interrupted(item.id, &format!("the run failed: {e:#}"))?;
                    return Err(e);
                }
            };
            result.context = args.context;
            result.harness_sha256.clone_from(&harness);
            // jobs.db first: a kill between the two writes loses nothing (resume copies it).
            job.done(item.id, &result, journal_run.map(|r| r.0))?;
            append_result(&results_file, &result)?;
            if result.passed {
                passes.fetch_add(1, Ordering::SeqCst);
            }
            finished
                .lock()
                .map_err(|_| anyhow::anyhow!("a bench worker panicked"))?
                .push(result.clone());
            progress.finished(
                done_count.fetch_add(1, Ordering::SeqCst) + 1,
                passes.load(Ordering::SeqCst),
                &result,
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
    progress.done();
    let wall_ms = started.elapsed().as_millis() as u64;
    // The bench's own rate on this machine: the report's tasks/min is one worker's pace, so
    // under --jobs only this says how many runs the machine finished a minute.
    let pace = wall_pace(total, wall_ms, args.jobs);
    if !json {
        if let Some(line) = &pace.line {
            eprintln!("rein: bench: {line}");
        }
    }
    let _ = std::fs::remove_dir_all(&base);
    if let Some(Err(e)) = outcomes.iter().find(|o| o.is_err()) {
        job.end(Err(format!("{e:#}")))?;
    }
    for o in outcomes {
        o?;
    }
    let all = finished
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a bench worker panicked"))?;
    job.end(Ok(json!({
        "runs": all.len(),
        "passed": all.iter().filter(|r| r.passed).count(),
    })))?;
    check_consistent(&all)?;
    let report = write_outputs(&args.out, &all)?;
    if json {
        let doc = json!({ "out": args.out, "report": report, "this_invocation": pace.figures });
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

/// What one invocation of the bench did in wall time: a line for the terminal and the same
/// figures for `--json` (`runs`, `wall_ms`, `jobs`, `runs_per_minute`).
struct WallPace {
    line: Option<String>,
    figures: Value,
}

fn wall_pace(runs: usize, wall_ms: u64, jobs: usize) -> WallPace {
    let per_minute = (runs > 0 && wall_ms > 0).then(|| runs as f64 * 60_000.0 / wall_ms as f64);
    let line = per_minute.map(|rate| {
        format!(
            "{runs} run(s) in {:.1} min of wall time: {rate:.2} a minute with --jobs {jobs} (the \
             report's tasks/min is one worker's pace)",
            wall_ms as f64 / 60_000.0
        )
    });
    WallPace {
        line,
        figures: json!({
            "runs": runs,
            "wall_ms": wall_ms,
            "jobs": jobs,
            "runs_per_minute": per_minute,
        }),
    }
}

/// Runs pair across models and repeats only if each repeat has its recorded seed; a resume
/// with another --seed would mix two benches in one report.
fn same_seeds(judged: &[RunResult], seed: u32) -> anyhow::Result<()> {
    if let Some(r) = judged
        .iter()
        .find(|r| r.seed != u64::from(seed.wrapping_add(r.repeat)))
    {
        bail!(
            "{} was run with seed {}, but --seed {seed} gives repeat {} the seed {}: resume with \
             the --seed of the first run, or give another --out",
            escape_line(&r.key().to_string()),
            r.seed,
            r.repeat,
            seed.wrapping_add(r.repeat)
        );
    }
    Ok(())
}

/// A resume keeps only runs with the context window this bench asks for: a window that trims
/// less is another setting, not more runs of the same one.
/// SHA-256 of the running `rein`, recorded with each run so that `rein bench ablation` can tell
/// arms run by different builds apart.
fn harness_sha256() -> Option<String> {
    let hashed = std::env::current_exe().and_then(|exe| rein_protocol::digest::hash_file(&exe));
    match hashed {
        Ok((sha256, _)) => Some(sha256),
        Err(e) => {
            eprintln!(
                "rein: bench: cannot read this rein's executable to record its build ({e}); the results will carry no harness_sha256"
            );
            None
        }
    }
}

fn same_context(judged: &[RunResult], context: Option<u32>) -> anyhow::Result<()> {
    if let Some(r) = judged.iter().find(|r| r.context != context) {
        bail!(
            "{} was run with {}, and this bench asks for {}: resume with the --context of the \
             first run, or give another --out",
            escape_line(&r.key().to_string()),
            context_setting(r.context),
            context_setting(context),
        );
    }
    Ok(())
}

/// The candidates per write each task of `suites` draws in this bench: 1 for a memory-sandbox
/// task (it has no deliverable file), else `--samples`, else the mission's `budgets.samples`.
fn expected_samples(suites: &[Suite], samples: Option<u32>) -> BTreeMap<(String, String), u32> {
    let mut out = BTreeMap::new();
    for suite in suites {
        for task in &suite.tasks {
            let k = match task.sandbox {
                Sandbox::Memory => 1,
                Sandbox::Dir => samples
                    .or(task.contract.mission.budgets.samples)
                    .unwrap_or(1)
                    .clamp(1, rein_engine::agent::MAX_SAMPLES),
            };
            out.insert((suite.name.clone(), task.id.clone()), k);
        }
    }
    out
}

/// A resume keeps only runs that drew as many candidates per write as this bench will:
/// best-of-K and pass@1 verdicts would mix in one pass rate (the report refuses a task run
/// both ways, but only after every run is done).
fn same_samples(
    judged: &[RunResult],
    expected: &BTreeMap<(String, String), u32>,
) -> anyhow::Result<()> {
    for r in judged {
        let Some(&k) = expected.get(&(r.suite.clone(), r.task.clone())) else {
            continue;
        };
        let had = r.samples.unwrap_or(1);
        if had != k {
            bail!(
                "{} was run with {had} candidate(s) per write, and this bench would draw {k}: \
                 best-of-K and pass@1 verdicts do not mix in one report; resume with the \
                 --samples of the first run, or give another --out",
                escape_line(&r.key().to_string()),
            );
        }
    }
    Ok(())
}

/// How one bench run is asked for: its seed, levers and verified sampling.
#[derive(Debug, Clone, Copy)]
struct RunSettings {
    seed: u32,
    levers: Levers,
    samples: Option<u32>,
}

/// Who watches a run: the agent's events and the model's streamed pieces.
pub(crate) struct Watch<'a> {
    pub printer: Printer,
    pub tap: Option<&'a mut (dyn FnMut(&str) + Send)>,
}

impl Watch<'_> {
    fn quiet() -> Self {
        Watch {
            printer: Printer::quiet(),
            tap: None,
        }
    }
}

/// Most characters of one final file the web UI's bench page is shown (it says when it cut).
const SHOWN_FILE_CHARS: usize = 4_000;
/// Most final files of one run the bench page is shown (it says when there were more).
const SHOWN_FILES: usize = 50;

/// One suite task, for the web UI's bench page: the same fresh sandbox, loop, judge and journal
/// as `rein bench` (a fresh temp workspace for a directory task, a fresh memory sandbox for a
/// memory task; no results.jsonl). Returns the record, the journal run, and the final files of
/// a directory task (a memory task's are in the record), each clipped to say what was cut.
pub(crate) fn run_single(
    suite: &str,
    task: &Task,
    model_spec: &str,
    model: &mut dyn Model,
    seed: u32,
    watch: Watch<'_>,
) -> anyhow::Result<(
    RunResult,
    Option<RunId>,
    std::collections::BTreeMap<String, String>,
)> {
    let journal = open_journal()?;
    let item = Item {
        suite,
        task,
        model: model_spec,
        repeat: 0,
        id: BenchItemId(0),
    };
    let base = std::env::temp_dir().join(format!(
        "rein-serve-bench-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    let dir = base.join("ws");
    std::fs::create_dir_all(&base).with_context(|| format!("cannot create {}", base.display()))?;
    let levers = Levers::from_settings::<&str>(&[])?;
    let settings = RunSettings {
        seed,
        levers,
        samples: None,
    };
    let result = run_one(&item, model, &journal, &dir, settings, watch);
    let files = if result.is_ok() && task.sandbox == Sandbox::Dir {
        final_files(&dir)
    } else {
        Default::default()
    };
    let _ = std::fs::remove_dir_all(&base);
    let (result, run) = result?;
    Ok((result, run, files))
}

/// The files under `dir` (relative names, in the workspace walker's order), each at most
/// [`SHOWN_FILE_CHARS`] characters, at most [`SHOWN_FILES`] of them; a cut says so in the text.
fn final_files(dir: &Path) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let listed = Workspace::open(dir)
        .map_err(|e| e.to_string())
        .and_then(|ws| {
            let options = WalkOptions {
                respect_ignore_files: false,
                include_temps: false,
                max_entries: MAX_WALK_ENTRIES,
            };
            let walked = Walker::new(&ws, options)
                .walk(&RelPath::root())
                .map_err(|e| e.to_string())?;
            Ok((walked, ws))
        });
    let (walked, ws) = match listed {
        Ok(listed) => listed,
        Err(e) => {
            out.insert("[files]".to_string(), format!("[cannot list them: {e}]"));
            return out;
        }
    };
    for f in walked.files.iter().take(SHOWN_FILES) {
        let text = match ws.read_bytes(&f.path) {
            Ok(Some(bytes)) => clip(&String::from_utf8_lossy(&bytes), SHOWN_FILE_CHARS),
            Ok(None) => "[gone]".to_string(),
            Err(e) => format!("[cannot read it: {e}]"),
        };
        out.insert(f.path.as_str().to_string(), text);
    }
    let more = walked.files.len().saturating_sub(SHOWN_FILES);
    if more > 0 || walked.truncated {
        out.insert(
            "[more files]".to_string(),
            format!(
                "{more}{} more files are not shown (at most {SHOWN_FILES})",
                if walked.truncated { "+" } else { "" }
            ),
        );
    }
    out
}

/// One run in a fresh workspace `dir` (created here, empty), judged; the record of it, and the
/// journal run that holds its whole trace.
fn run_one(
    item: &Item<'_>,
    model: &mut dyn Model,
    journal: &rein_journal::Journal,
    dir: &Path,
    settings: RunSettings,
    watch: Watch<'_>,
) -> anyhow::Result<(RunResult, Option<RunId>)> {
    let RunSettings {
        seed,
        levers,
        samples,
    } = settings;
    let started = Instant::now();
    let Watch { mut printer, tap } = watch;
    let mut model = match tap {
        Some(tap) => Recording::tapped(model, tap),
        None => Recording::new(model),
    };
    let model = &mut model;
    if item.task.sandbox == Sandbox::Memory {
        let (mut result, run) = super::memory::run_task(
            item.suite,
            item.task,
            item.model,
            model,
            journal,
            super::memory::RunSettings {
                seed,
                repeat: item.repeat,
                levers,
            },
            &mut printer,
        )?;
        result.trace = Some(record_stream(journal, run, model)?);
        result.model_ms = model.model_ms.round() as u64;
        result.total_ms = started.elapsed().as_millis() as u64;
        return Ok((result, Some(run)));
    }
    if dir.exists() {
        bail!("{} already exists", dir.display());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let contract = &item.task.contract;
    let hashes = materialise_inputs(contract, dir)?;
    let mut options = AgentOptions::for_mission(contract, model.identity());
    options.seed = seed;
    options.levers = levers;
    if let Some(k) = samples {
        options.samples = k;
    }
    let identity = model.identity().clone();
    let meta = json!({
        "command": "bench",
        "approve": "all",
        "suite": item.suite,
        "task": item.task.id,
        "repeat": item.repeat,
        "seed": seed,
        "levers": levers.to_json(),
        "samples": options.samples,
    });
    let mission_file: PathBuf = contract.source.clone();
    let outcome: RunOutcome = drive(
        contract,
        &mission_file,
        dir,
        &hashes,
        journal,
        model,
        // What `rein run --approve=all` approves, and nothing more: never a frozen input.
        &mut OwnWorkApprover::for_contract(contract),
        None,
        options,
        meta,
        &mut printer,
    )?;
    let mut result = RunResult::from_outcome(
        item.suite,
        item.task,
        item.model,
        &identity,
        seed,
        item.repeat,
        &outcome,
        None,
    );
    result.levers = Some(levers.to_json());
    result.trace = Some(record_stream(journal, outcome.run, model)?);
    result.model_ms = model.model_ms.round() as u64;
    result.total_ms = started.elapsed().as_millis() as u64;
    Ok((result, Some(outcome.run)))
}

/// Journals what the model streamed in run `run` and returns the run's trace for its record.
fn record_stream(
    journal: &rein_journal::Journal,
    run: RunId,
    model: &mut Recording<'_>,
) -> anyhow::Result<rein_bench::results::RunTrace> {
    let stream = std::mem::take(&mut model.stream);
    journal.append_event(
        Some(run),
        crate::journal_cmd::MODEL_STREAM,
        &json!({ "replies": stream }),
    )?;
    trace(journal, run, stream)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_wall_pace_counts_the_runs_of_this_invocation_over_its_wall_time() {
        // 40 runs in 5 minutes with two workers: 8 a minute, whatever one worker's pace was.
        let p = wall_pace(40, 300_000, 2);
        assert_eq!(p.figures["runs_per_minute"], json!(8.0));
        assert_eq!(p.figures["jobs"], json!(2));
        let line = p.line.unwrap();
        assert!(
            line.starts_with("40 run(s) in 5.0 min of wall time: 8.00 a minute with --jobs 2"),
            "{line}"
        );
        // A resume with nothing left to run says nothing about pace.
        let none = wall_pace(0, 12, 1);
        assert!(none.line.is_none());
        assert_eq!(none.figures["runs_per_minute"], Value::Null);
    }

    #[test]
    fn a_resume_with_another_context_is_refused() {
        let plain = RunResult::default();
        let wide = RunResult {
            context: Some(8192),
            ..RunResult::default()
        };
        assert!(same_context(std::slice::from_ref(&plain), None).is_ok());
        assert!(same_context(std::slice::from_ref(&wide), Some(8192)).is_ok());
        let e = same_context(std::slice::from_ref(&plain), Some(8192))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("its default window") && e.contains("--context 8192"),
            "{e}"
        );
        assert!(same_context(&[wide], None).is_err());
    }

    #[test]
    fn a_resume_with_another_samples_is_refused() {
        let line = r#"{"suite":"s","task":"t","category":"c","split":"dev","model":"m","seed":5,"repeat":0,"passed":true,"reason":"ok","contract_sha256":"x","model_identity":"m","steps":1,"wall_ms":1,"prompt_tokens":0,"completion_tokens":0,"format_errors":0,"repairs":0,"cap_hit":false,"finish_accepted":true}"#;
        let plain: RunResult = serde_json::from_str(line).unwrap();
        let mut sampled = plain.clone();
        sampled.samples = Some(3);
        let expect = |k: u32| BTreeMap::from([(("s".to_string(), "t".to_string()), k)]);
        assert!(same_samples(std::slice::from_ref(&plain), &expect(1)).is_ok());
        assert!(same_samples(std::slice::from_ref(&sampled), &expect(3)).is_ok());
        let e = same_samples(std::slice::from_ref(&plain), &expect(3))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("1 candidate(s)") && e.contains("would draw 3"),
            "{e}"
        );
        // A first run with --samples 3 resumed without it (the mission asks for none).
        assert!(same_samples(std::slice::from_ref(&sampled), &expect(1)).is_err());
        // A task this bench does not run is left to the report's check.
        assert!(same_samples(&[sampled], &BTreeMap::new()).is_ok());
    }

    #[test]
    fn memory_tasks_never_sample_and_a_missions_budget_counts_without_the_flag() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites");
        let suites = [
            Suite::load(root.join("toy")).unwrap(),
            Suite::load(root.join("missions")).unwrap(),
        ];
        let k = expected_samples(&suites, Some(3));
        let mut memory = 0;
        for s in &suites {
            for t in &s.tasks {
                let want = if t.sandbox == Sandbox::Memory {
                    memory += 1;
                    1
                } else {
                    3
                };
                assert_eq!(k[&(s.name.clone(), t.id.clone())], want, "{}", t.id);
            }
        }
        assert!(memory > 0, "the toy suite has memory tasks");
        assert!(expected_samples(&suites, None).values().all(|k| *k == 1));
    }

    #[test]
    fn final_files_are_capped_and_say_so() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(
            dir.path().join("sub/long.txt"),
            "x".repeat(SHOWN_FILE_CHARS + 7),
        )
        .unwrap();
        std::fs::write(dir.path().join("short.txt"), "hi").unwrap();
        let files = final_files(dir.path());
        assert_eq!(files["short.txt"], "hi");
        let long = &files["sub/long.txt"];
        assert!(long.starts_with(&"x".repeat(SHOWN_FILE_CHARS)));
        assert!(
            long.ends_with("... [7 more characters not shown]"),
            "{long}"
        );
        for i in 0..SHOWN_FILES {
            std::fs::write(dir.path().join(format!("f{i}.txt")), "y").unwrap();
        }
        let files = final_files(dir.path());
        assert_eq!(files.len(), SHOWN_FILES + 1);
        assert_eq!(
            files["[more files]"],
            format!("2 more files are not shown (at most {SHOWN_FILES})")
        );
    }
}
