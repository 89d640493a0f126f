//! `rein bench bfcl:simple|bfcl:multiple|bfcl:irrelevance --models A,B [--limit N]
//! [--decoding both|constrained|unconstrained]` and `rein bench fetch bfcl`: the Berkeley
//! Function Calling Leaderboard questions asked through Rein's action decoding (the agent's
//! `ask_action`), scored by BFCL's AST rules (`rein_bench::bfcl`).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rein_bench::bfcl::data::{load, sample, Question};
use rein_bench::bfcl::fetch::{self, RELEASE};
use rein_bench::bfcl::prompt::{action_schema, messages, name_map};
use rein_bench::bfcl::score::{markdown, score, suite_name, summarise, Accuracy};
use rein_bench::bfcl::{parse_suite, BfclResult, Category, Decoding};
use rein_engine::agent::{ask_action, AskWith};
use rein_models::{DataDir, PipCommand};
use rein_protocol::display::escape_line;

use super::RunBenchArgs;
use crate::open::open_model;

/// The results file of a BFCL run (one [`BfclResult`] per line).
const RESULTS: &str = "results.jsonl";

/// Questions in a row a model may fail to answer before the run stops.
const MAX_MODEL_FAILURES: u32 = 3;

/// The flags only BFCL runs take.
#[derive(Debug, Clone, Args, Default)]
pub struct BfclFlags {
    /// BFCL only: ask a deterministic sample of N questions per category (seeded by --seed).
    #[arg(long)]
    pub(crate) limit: Option<usize>,
    /// BFCL only: decode with the action schema (constrained), without it, or both.
    #[arg(long, value_parser = ["both", "constrained", "unconstrained"])]
    pub(crate) decoding: Option<String>,
}

/// `rein bench fetch bfcl`.
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// What to fetch: `bfcl` (the bfcl-eval package's question files).
    what: String,
    /// The bfcl-eval release.
    #[arg(long, default_value = RELEASE)]
    release: String,
}

/// Runs the bench when its suites are `bfcl:` ones; `None` leaves the arguments to the suite
/// runner (after refusing BFCL-only flags there).
pub fn maybe_run(args: &RunBenchArgs, json: bool) -> Option<anyhow::Result<i32>> {
    let bfcl = args
        .suites
        .iter()
        .filter(|s| s.starts_with("bfcl:"))
        .count();
    if bfcl == 0 {
        if args.bfcl.limit.is_some() || args.bfcl.decoding.is_some() {
            return Some(Err(anyhow::anyhow!(
                "--limit and --decoding apply to bfcl: suites only (e.g. rein bench bfcl:simple)"
            )));
        }
        return None;
    }
    if bfcl != args.suites.len() {
        return Some(Err(anyhow::anyhow!(
            "bfcl: suites cannot be mixed with suite folders in one run; run them separately"
        )));
    }
    if args.context.is_some() {
        return Some(Err(super::context_not_here("a bfcl: suite")));
    }
    Some(run(args, json))
}

pub fn fetch_cmd(args: FetchArgs, json: bool) -> anyhow::Result<i32> {
    if args.what != "bfcl" {
        bail!(
            "nothing called {:?} to fetch; `rein bench fetch bfcl` fetches the BFCL questions",
            args.what
        );
    }
    let home = DataDir::from_env()?;
    let pip = PipCommand::from_env();
    if !json {
        eprintln!(
            "rein: fetching bfcl-eval {} with {} (download only; only its JSON data is read)",
            escape_line(&args.release),
            escape_line(&pip.display())
        );
    }
    let (dir, fetched) = fetch::fetch(&home, &pip, &args.release)?;
    if json {
        let doc = serde_json::json!({ "release": args.release, "dir": dir, "fetched": fetched });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "bfcl-eval {} {} {}",
            escape_line(&args.release),
            if fetched {
                "fetched into"
            } else {
                "already in"
            },
            escape_line(&dir.display().to_string())
        );
    }
    Ok(0)
}

fn run(args: &RunBenchArgs, json: bool) -> anyhow::Result<i32> {
    if args.repeats != 1 || args.jobs != 1 || args.shard.is_some() {
        bail!(
            "bfcl: suites run once per question, one at a time: drop --repeats, --jobs and --shard"
        );
    }
    if args.bfcl.limit == Some(0) {
        bail!("--limit must be at least 1");
    }
    let mut categories = BTreeSet::new();
    for s in &args.suites {
        match parse_suite(s) {
            Some(Ok(c)) => {
                categories.insert(c);
            }
            Some(Err(e)) => bail!(e),
            None => bail!("{s:?} is not a bfcl: suite"),
        }
    }
    let decodings: Vec<Decoding> = match args.bfcl.decoding.as_deref().unwrap_or("both") {
        "constrained" => vec![Decoding::Constrained],
        "unconstrained" => vec![Decoding::Unconstrained],
        _ => vec![Decoding::Constrained, Decoding::Unconstrained],
    };
    let models: Vec<String> = args
        .models
        .iter()
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty())
        .collect();
    if models.is_empty() {
        bail!("--models names no model");
    }
    let data_dir = fetch::open(&DataDir::from_env()?, RELEASE)?;
    let mut questions: Vec<Question> = Vec::new();
    for c in &categories {
        questions.extend(sample(load(&data_dir, *c)?, args.bfcl.limit, args.seed));
    }
    crate::open::refuse_data_dir_overlap(&args.out)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let results_path = args.out.join(RESULTS);
    let mut results = read_results(&results_path)?;
    if !results.is_empty() && !args.resume {
        bail!(
            "{} already holds {} answer(s): add --resume to keep them and ask the rest, or give another --out",
            results_path.display(),
            results.len()
        );
    }
    let done: BTreeSet<(String, String, String, Decoding)> = results
        .iter()
        .map(|r| (r.suite.clone(), r.id.clone(), r.model.clone(), r.decoding))
        .collect();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&results_path)
        .with_context(|| format!("cannot open {}", results_path.display()))?;
    let total = models.len() * decodings.len() * questions.len();
    let bar = if json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(total as u64)
    };
    if let Ok(style) =
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} [{elapsed} < {eta}]")
    {
        bar.set_style(style);
    }
    let started = Instant::now();
    for model_spec in &models {
        let mut model = open_model(model_spec, args.allow_remote)?;
        let mut correct = 0u64;
        let mut failures = 0u32;
        // Both decodings of a question back to back: a run cut short still pairs them, and
        // the second reuses the first's prompt from the model's cache.
        for q in &questions {
            for &decoding in &decodings {
                let key = (
                    suite_name(q.category),
                    q.id.clone(),
                    model_spec.clone(),
                    decoding,
                );
                if done.contains(&key) {
                    bar.inc(1);
                    continue;
                }
                let names = name_map(q);
                let schema = action_schema(q, &names);
                let constrain = (decoding == Decoding::Constrained).then_some(&schema);
                let t0 = Instant::now();
                let asked = match ask_action(
                    model.as_mut(),
                    messages(q, &names),
                    AskWith {
                        schema: constrain,
                        sampling: rein_protocol::model::SamplingProfile::ACTOR,
                        seed: args.seed,
                        no_paste: None,
                    },
                    &mut |_| {},
                ) {
                    Ok(a) => {
                        failures = 0;
                        a
                    }
                    Err(e) => {
                        // One failed question (a schema the grammar engine refuses, a timeout)
                        // is a wrong answer; a run of them means the model is gone.
                        failures += 1;
                        if failures >= MAX_MODEL_FAILURES {
                            return Err(anyhow::Error::new(e)).with_context(|| {
                                format!(
                                    "{model_spec} failed {failures} questions in a row, last on {}",
                                    q.id
                                )
                            });
                        }
                        eprintln!(
                            "rein: warning: {} on {}: {}; recorded as wrong",
                            escape_line(model_spec),
                            escape_line(&q.id),
                            escape_line(&e.to_string())
                        );
                        let r = BfclResult::model_error(
                            q,
                            model_spec,
                            decoding,
                            args.seed,
                            e.to_string(),
                            RELEASE,
                        );
                        writeln!(file, "{}", serde_json::to_string(&r)?)
                            .with_context(|| format!("cannot write {}", results_path.display()))?;
                        results.push(r);
                        bar.inc(1);
                        continue;
                    }
                };
                let seconds = t0.elapsed().as_secs_f64();
                let (calls, verdict) = score(q, &names, &asked.reply);
                let mut r = BfclResult::new(
                    q,
                    model_spec,
                    decoding,
                    args.seed,
                    &asked.reply,
                    &calls,
                    &verdict,
                    asked.raw,
                    RELEASE,
                );
                r.prompt_tokens = asked.completion.prompt_tokens;
                r.completion_tokens = asked.completion.completion_tokens;
                r.seconds = seconds;
                correct += u64::from(r.correct);
                writeln!(file, "{}", serde_json::to_string(&r)?)
                    .with_context(|| format!("cannot write {}", results_path.display()))?;
                results.push(r);
                bar.inc(1);
                bar.set_message(format!("{} correct", correct));
            }
        }
    }
    bar.finish_and_clear();
    let rows = summarise(&results);
    write_report(&args.out, &rows, started.elapsed().as_secs_f64(), args)?;
    if json {
        let doc = serde_json::json!({ "out": args.out, "data": RELEASE, "accuracy": rows });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print_table(&rows);
        println!(
            "wrote {}/{{results.jsonl,report.md}} ({:.0} s)",
            escape_line(&args.out.display().to_string()),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(0)
}

fn read_results(path: &Path) -> anyhow::Result<Vec<BfclResult>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str(line).with_context(|| {
            format!(
                "{}: line {}: not a BFCL result (is this the output folder of another bench?)",
                path.display(),
                i + 1
            )
        })?);
    }
    Ok(out)
}

fn write_report(
    out: &Path,
    rows: &[Accuracy],
    wall: f64,
    args: &RunBenchArgs,
) -> anyhow::Result<()> {
    let categories: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
    let text = format!(
        "# BFCL through Rein's action decoding\n\n\
         Questions: bfcl-eval {RELEASE} (Berkeley Function Calling Leaderboard, Apache-2.0), \
         categories run: {}; {} per category (seed {}). Scored by BFCL's AST rules \
         (reimplemented in rein-bench); an irrelevance question is right when no function is \
         called. Wall time of this invocation: {wall:.0} s.\n\n{}\n\
         Categories available: {}.\n",
        args.suites.join(", "),
        args.bfcl
            .limit
            .map_or("every question".to_string(), |n| format!(
                "a sample of at most {n}"
            )),
        args.seed,
        markdown(rows),
        categories.join(", "),
    );
    let path = out.join("report.md");
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}

fn print_table(rows: &[Accuracy]) {
    println!(
        "{:<18} {:<28} {:<14} {:>8} {:>9} {:>15} {:>7} {:>9}",
        "suite", "model", "decoding", "correct", "accuracy", "Wilson 95 %", "fmt err", "median s"
    );
    for r in rows {
        println!(
            "{:<18} {:<28} {:<14} {:>8} {:>8.1}% {:>6.1}–{:>5.1} % {:>7} {:>9.2}",
            r.suite,
            escape_line(&r.model),
            r.decoding.as_str(),
            format!("{}/{}", r.correct, r.n),
            100.0 * r.accuracy,
            100.0 * r.wilson_low,
            100.0 * r.wilson_high,
            r.format_errors,
            r.median_seconds
        );
    }
}
