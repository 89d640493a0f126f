//! `rein bench ...`: the test bench (issue 9). `check-suite` runs the judge of every task of
//! suites on its gold deliverables and near misses; `--task "PROMPT"` runs one ad-hoc
//! memory-sandbox task.

mod bfcl;
mod endpoints;
mod gate;
mod job;
pub(crate) mod memory;
mod progress;
pub(crate) mod recording;
mod router;
pub(crate) mod runner;

use clap::{Args, Subcommand};
use rein_bench::ablation::{ablation, Arm};
use rein_bench::check::{check_suite, SuiteCheck};
use rein_bench::render::{terminal, write_outputs};
use rein_bench::report::Report;
use rein_bench::results::{check_consistent, read_results, RESULTS_FILE};
use rein_bench::shard::merge_results;
use rein_bench::suite::Suite;
use rein_engine::cases::CaseKind;
use rein_protocol::display::escape_line;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct BenchArgs {
    #[command(subcommand)]
    command: Option<BenchCommand>,
    #[command(flatten)]
    run: RunBenchArgs,
}

/// `rein bench SUITE... --models A,B`: every task of the suites for every model, N times, each
/// run in a fresh sandbox (a temp workspace through the same `drive` as `rein run`, or an
/// in-memory sandbox for memory tasks). Or `rein bench --task "PROMPT" --model M`: one ad-hoc
/// memory task whose checks are inferred from its words.
#[derive(Debug, Args)]
pub struct RunBenchArgs {
    /// Suite folders (each with a suite.toml).
    #[arg(required_unless_present = "task")]
    pub(crate) suites: Vec<String>,
    /// Models, comma-separated: catalog names, `openai:URL#MODEL`, `scripted:FILE`. The same
    /// `openai:` model at several URLs is one model (`openai:*#MODEL`) whose endpoints the
    /// `--jobs` workers share round-robin.
    #[arg(long, value_delimiter = ',', required_unless_present = "task")]
    pub(crate) models: Vec<String>,
    /// One ad-hoc memory-sandbox task instead of suites: its requirements are inferred from
    /// its words (create, read, list, delete, store, recall; file names and quoted contents).
    #[arg(long, requires = "model", conflicts_with_all = ["suites", "models", "repeats", "jobs", "shard", "resume", "out", "split"])]
    pub(crate) task: Option<String>,
    /// The model of `--task`: a catalog name, `openai:URL#MODEL` or `scripted:FILE`.
    #[arg(long, requires = "task")]
    pub(crate) model: Option<String>,
    /// Runs of each task for each model.
    #[arg(long, default_value_t = 1)]
    pub(crate) repeats: u32,
    /// Base sampling seed; repeat r runs with seed S + r (the same for every model, so runs pair).
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u32,
    #[arg(long = "lever", value_name = "NAME=on|off", help = crate::levers_help(
        "A harness lever for every run, NAME=on|off (repeatable; all=on|off sets every lever)."
    ))]
    pub(crate) levers: Vec<String>,
    /// Verified sampling: draw K candidate writes of the deliverable, judge each on a scratch
    /// view with the contract's checks, propose the best (1 to 8; default: the mission's
    /// `budgets.samples`, else 1). The verdict is then best-of-K, reported as such.
    #[arg(long, value_name = "K")]
    pub(crate) samples: Option<u32>,
    /// Context window of each embedded model, in tokens (default: 6,144, or the model's own
    /// window if smaller); recorded with the bench's settings.
    #[arg(long, value_name = "TOKENS")]
    pub(crate) context: Option<u32>,
    /// Which tasks: dev, heldout or all.
    #[arg(long, default_value = "dev", value_parser = ["dev", "heldout", "all"])]
    pub(crate) split: String,
    /// Runs at once (each worker opens its own model; an embedded one gets an equal share of
    /// the physical cores, at least one thread).
    #[arg(long, default_value_t = 1)]
    pub(crate) jobs: usize,
    /// Run only shard K of N (K/N) of the work items.
    #[arg(long)]
    pub(crate) shard: Option<String>,
    /// Keep the runs already judged (OUT/results.jsonl and jobs.db) and run only the others;
    /// a run cut off mid-way stays recorded as interrupted and runs again.
    #[arg(long)]
    pub(crate) resume: bool,
    /// Output folder: results.jsonl, report.md, report.html, junit.xml.
    #[arg(long, default_value = "bench-out")]
    pub(crate) out: PathBuf,
    /// Allow an `openai:` endpoint that is not on this machine.
    #[arg(long)]
    pub(crate) allow_remote: bool,
    #[command(flatten)]
    pub(crate) bfcl: bfcl::BfclFlags,
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Run the judge of every task on its gold deliverables (must pass) and near misses (must
    /// fail); exit 0 only when it is right on every case.
    CheckSuite(CheckSuiteArgs),
    /// Render the report of a bench output folder from its results.jsonl (report.md,
    /// report.html, junit.xml, and the canonical results.jsonl), and print the table.
    Report(ReportArgs),
    /// Combine the results.jsonl of shard output folders into one report, identical to the
    /// report of the same runs unsharded. Refuses a run present twice and mixed contracts.
    Merge(MergeArgs),
    /// Fetch external benchmark data with pip (download only): `rein bench fetch bfcl`.
    Fetch(bfcl::FetchArgs),
    /// The ablation table: bench output folders of the same tasks and seeds that differ only in
    /// their levers, each against the baseline folder: pass rate with Wilson interval and the
    /// exact McNemar p on paired runs, per split.
    Ablation(AblationArgs),
}

#[derive(Debug, Args)]
pub struct AblationArgs {
    /// The baseline bench output folder (say every lever on).
    #[arg(long)]
    baseline: PathBuf,
    /// The other bench output folders (say one lever off in each).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A bench output folder (holding results.jsonl).
    dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard output folders (each holding results.jsonl).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Where to write the merged results and report.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Debug, Args)]
pub struct CheckSuiteArgs {
    /// Suite folders (each with a suite.toml).
    #[arg(required = true)]
    suites: Vec<String>,
}

/// `--context` is recorded with the runs of suite folders only; other benches would run at the
/// default window without saying so.
fn context_not_here(what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "--context applies to benches of suite folders (recorded with each run); {what} runs \
         its models at their default window: leave --context out"
    )
}

pub fn run(args: BenchArgs, json: bool) -> anyhow::Result<i32> {
    let Some(command) = args.command else {
        if let (Some(task), Some(model)) = (&args.run.task, &args.run.model) {
            if args.run.context.is_some() {
                return Err(context_not_here("an ad-hoc --task"));
            }
            return memory::run_adhoc(task, model, args.run.seed, args.run.allow_remote, json);
        }
        if let Some(result) = gate::maybe_run(&args.run, json) {
            return result;
        }
        if let Some(result) = router::maybe_run(&args.run, json) {
            return result;
        }
        if let Some(result) = bfcl::maybe_run(&args.run, json) {
            return result;
        }
        return runner::run(args.run, json);
    };
    match command {
        BenchCommand::CheckSuite(a) => check_suites(a, json),
        BenchCommand::Report(a) => {
            let results = read_results(&a.dir.join(RESULTS_FILE))?;
            if results.is_empty() {
                anyhow::bail!("{}: no runs in {RESULTS_FILE}", a.dir.display());
            }
            check_consistent(&results)?;
            let report = write_outputs(&a.dir, &results)?;
            print_report(&report, &a.dir, json)
        }
        BenchCommand::Fetch(a) => bfcl::fetch_cmd(a, json),
        BenchCommand::Ablation(a) => ablation_table(a, json),
        BenchCommand::Merge(a) => {
            let results = merge_results(&a.dirs)?;
            let report = write_outputs(&a.out, &results)?;
            print_report(&report, &a.out, json)
        }
    }
}

fn ablation_table(args: AblationArgs, json: bool) -> anyhow::Result<i32> {
    let arm = |dir: &PathBuf| -> anyhow::Result<Arm> {
        Ok(Arm {
            name: dir.display().to_string(),
            results: read_results(&dir.join(RESULTS_FILE))?,
        })
    };
    let baseline = arm(&args.baseline)?;
    let arms = args
        .dirs
        .iter()
        .map(arm)
        .collect::<anyhow::Result<Vec<_>>>()?;
    let table = ablation(&baseline, &arms)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&table)?);
    } else {
        print!("{}", table.markdown());
    }
    Ok(0)
}

fn check_suites(args: CheckSuiteArgs, json: bool) -> anyhow::Result<i32> {
    let mut checks = Vec::new();
    let mut routers = Vec::new();
    for dir in &args.suites {
        if let Some(counts) = router::check(dir, json)? {
            routers.push(counts);
            continue;
        }
        let suite = Suite::load(dir)?;
        for t in &suite.tasks {
            for w in &t.contract.warnings {
                eprintln!("rein: warning: {}/{}: {}", suite.name, t.id, escape_line(w));
            }
        }
        checks.push(check_suite(&suite)?);
    }
    let ok = checks.iter().all(|c| c.ok);
    if json {
        let doc = serde_json::json!({ "suites": checks, "router_suites": routers, "ok": ok });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        for c in &checks {
            print_check(c);
        }
    }
    Ok(if ok { 0 } else { 1 })
}

fn print_check(c: &SuiteCheck) {
    println!("suite {}", escape_line(&c.suite));
    for t in &c.tasks {
        let r = &t.report;
        println!(
            "  {} {:<32} {:<10} {:<8} gold {}/{} passed; near misses {}/{} failed",
            if t.ok { "ok  " } else { "FAIL" },
            escape_line(&t.task),
            escape_line(&t.category),
            t.split,
            r.gold_passed,
            r.gold,
            r.near_misses_failed,
            r.near_misses
        );
        for case in r.cases.iter().filter(|k| !k.as_expected) {
            let what = match case.kind {
                CaseKind::Gold => "gold failed (false fail)",
                CaseKind::GoldVariant => "gold variant failed (false fail)",
                CaseKind::NearMiss if case.passed => "near miss passed (false pass)",
                CaseKind::NearMiss => "near miss failed on other checks than it names",
            };
            let mut line = format!("       {}: {what}", escape_line(&case.name));
            if !case.failed_checks.is_empty() {
                line.push_str(&format!(" [failed: {}]", case.failed_checks.join(", ")));
            }
            if !case.not_caught_by.is_empty() {
                line.push_str(&format!(
                    " [not caught by: {}]",
                    case.not_caught_by.join(", ")
                ));
            }
            println!("{line}");
        }
        if r.gold == 0 {
            println!("       no gold deliverable: the judge is untested");
        }
    }
    println!(
        "  {} tasks; gold {}/{} passed; near misses {}/{} failed; false passes {}; false fails {}; wrong catcher {}: {}",
        c.tasks.len(),
        c.gold_passed,
        c.gold,
        c.near_misses_failed,
        c.near_misses,
        c.false_passes,
        c.false_fails,
        c.wrong_catcher,
        if c.ok { "the judge is right on every case" } else { "THE JUDGE IS WRONG" }
    );
}

/// Prints a written report: the table, or with --json the report document.
fn print_report(report: &Report, dir: &Path, json: bool) -> anyhow::Result<i32> {
    if json {
        let doc = serde_json::json!({ "out": dir, "report": report });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", terminal(report));
        println!(
            "wrote {}/{{results.jsonl,report.md,report.html,junit.xml}}",
            escape_line(&dir.display().to_string())
        );
    }
    Ok(0)
}
