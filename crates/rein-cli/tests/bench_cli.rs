#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `rein bench` end to end with a scripted model: runs, results.jsonl, --resume, shards, merge.

#[path = "bench_support/mod.rs"]
mod bench_support;

use bench_support::{lines, rein, repo};
use std::path::Path;
use std::process::{Command, Stdio};

#[test]
fn a_scripted_bench_runs_resumes_shards_and_merges() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let suite = repo().join("suites/missions");
    let suite = suite.to_str().unwrap();
    let script = repo().join("crates/rein-engine/tests/fixtures/agent/no_reread.jsonl");
    let model = format!("scripted:{}", script.display());
    let out = scratch.path().join("out");
    let o = rein(
        home.path(),
        &[
            "bench",
            suite,
            "--models",
            &model,
            "--repeats",
            "2",
            "--jobs",
            "2",
            "--seed",
            "5",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let rows = lines(&out.join("results.jsonl"));
    assert_eq!(rows.len(), 4);
    // The script solves desk_task; on doc_extract it runs out of replies: a fail, with a reason.
    for r in &rows {
        let pass = r["task"] == "desk_task";
        assert_eq!(r["passed"], pass, "{r}");
        assert_eq!(r["contract_sha256"].as_str().unwrap().len(), 64);
        assert_eq!(r["seed"], 5 + r["repeat"].as_u64().unwrap());
        assert!(r["steps"].as_u64().unwrap() > 0);
    }
    for f in ["report.md", "report.html", "junit.xml"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    // Without --resume an existing results file is refused; with it only the new runs are done.
    let o = rein(
        home.path(),
        &[
            "bench",
            suite,
            "--models",
            &model,
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("add --resume"));
    let o = rein(
        home.path(),
        &[
            "bench",
            suite,
            "--models",
            &model,
            "--repeats",
            "3",
            "--resume",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    // A resume with another seed would mix two benches: refused, nothing run.
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("was run with seed 5"));
    assert_eq!(lines(&out.join("results.jsonl")).len(), 4);
    // A resume that draws another number of samples would mix pass@1 and best-of-K verdicts.
    let o = rein(
        home.path(),
        &[
            "bench",
            suite,
            "--models",
            &model,
            "--repeats",
            "3",
            "--seed",
            "5",
            "--samples",
            "2",
            "--resume",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("this bench would draw 2"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(lines(&out.join("results.jsonl")).len(), 4);
    let o = rein(
        home.path(),
        &[
            "bench",
            suite,
            "--models",
            &model,
            "--repeats",
            "3",
            "--seed",
            "5",
            "--resume",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("2 run(s) to do (4 kept"));
    assert_eq!(lines(&out.join("results.jsonl")).len(), 6);

    // Two shards cover the same runs exactly once; merged they hold all six.
    let mut dirs = Vec::new();
    for k in ["1/2", "2/2"] {
        let d = scratch.path().join(format!("shard{}", &k[..1]));
        let o = rein(
            home.path(),
            &[
                "bench",
                suite,
                "--models",
                &model,
                "--repeats",
                "3",
                "--seed",
                "5",
                "--shard",
                k,
                "--out",
                d.to_str().unwrap(),
            ],
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        dirs.push(d);
    }
    let merged = scratch.path().join("merged");
    let o = rein(
        home.path(),
        &[
            "bench",
            "merge",
            dirs[0].to_str().unwrap(),
            dirs[1].to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let keys = |p: &Path| -> Vec<(String, u64, bool)> {
        lines(&p.join("results.jsonl"))
            .iter()
            .map(|r| {
                (
                    r["task"].as_str().unwrap().to_string(),
                    r["repeat"].as_u64().unwrap(),
                    r["passed"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(keys(&merged), keys(&out));
    // Whole records too, traces included: only timings and journal change numbers differ.
    let untimed_rows = |p: &Path| -> Vec<serde_json::Value> {
        lines(&p.join("results.jsonl"))
            .iter()
            .map(untimed)
            .collect()
    };
    assert_eq!(untimed_rows(&merged), untimed_rows(&out));
    // Merging again writes the same bytes.
    let again = scratch.path().join("again");
    let o = rein(
        home.path(),
        &[
            "bench",
            "merge",
            dirs[1].to_str().unwrap(),
            dirs[0].to_str().unwrap(),
            "--out",
            again.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    for f in ["results.jsonl", "report.md", "report.html", "junit.xml"] {
        assert_eq!(
            std::fs::read(merged.join(f)).unwrap(),
            std::fs::read(again.join(f)).unwrap(),
            "{f}"
        );
    }
    // A shard merged with itself is refused.
    let o = rein(
        home.path(),
        &[
            "bench",
            "merge",
            dirs[0].to_str().unwrap(),
            dirs[0].to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("appears more than once"));
}

/// A copy of the agent fixture script whose every reply waits `ms` milliseconds.
fn slow_script(dir: &Path, ms: u64) -> String {
    let script = repo().join("crates/rein-engine/tests/fixtures/agent/no_reread.jsonl");
    let text = std::fs::read_to_string(script).unwrap();
    let path = dir.join("slow.jsonl");
    std::fs::write(&path, format!("{{\"$delay_ms\": {ms}}}\n{text}")).unwrap();
    format!("scripted:{}", path.display())
}

/// A result record without its timings (which differ between any two runs) and with the
/// journal's change numbers (which count every change the journal ever recorded) blanked.
fn untimed(v: &serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => m
            .iter()
            .filter(|(k, _)| !(k.ends_with("_ms") || *k == "ms"))
            .map(|(k, v)| (k.clone(), untimed(v)))
            .collect(),
        serde_json::Value::Array(a) => a.iter().map(untimed).collect(),
        serde_json::Value::String(s) => serde_json::Value::String(blank_change_numbers(s)),
        other => other.clone(),
    }
}

fn blank_change_numbers(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = ["change ", "undo "]
        .iter()
        .filter_map(|w| rest.find(w).map(|i| i + w.len()))
        .min()
    {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            out.push('N');
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

#[test]
fn a_bench_killed_mid_run_resumes_keeping_judged_runs_and_redoing_the_cut_off_one() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let suite = repo().join("suites/missions");
    let model = slow_script(scratch.path(), 150);
    let out = scratch.path().join("out");
    let args = |out: &Path| -> Vec<String> {
        [
            "bench",
            suite.to_str().unwrap(),
            "--models",
            &model,
            "--repeats",
            "2",
            "--seed",
            "3",
            "--out",
            out.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(args(&out))
        .env("REIN_HOME", home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the first judged run, then kill the process a little way into the next one.
    let results = out.join("results.jsonl");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let text = std::fs::read_to_string(&results).unwrap_or_default();
        if text.ends_with('\n') {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no run finished");
        assert!(child.try_wait().unwrap().is_none(), "the bench ended early");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(400));
    child.kill().unwrap();
    child.wait().unwrap();
    let before: Vec<String> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert!(
        (1..4).contains(&before.len()),
        "{} runs before the kill",
        before.len()
    );

    // Without --resume the folder is refused; with it the judged runs are kept.
    let o = rein(
        home.path(),
        &args(&out).iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(o.status.code(), Some(2));
    let mut resume = args(&out);
    resume.push("--resume".into());
    let o = rein(
        home.path(),
        &resume.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("was cut off (attempt 1"), "{err}");
    assert!(
        err.contains(&format!(
            "{} run(s) to do ({} kept",
            4 - before.len(),
            before.len()
        )),
        "{err}"
    );
    let after = std::fs::read_to_string(&results).unwrap();
    assert_eq!(after.lines().count(), 4);
    for line in &before {
        assert!(after.lines().any(|l| l == line), "redone: {line}");
    }

    // jobs.db: the judged runs have one item each; the cut-off one is kept as interrupted and
    // was done again as attempt 2.
    let jobs = rein_journal::JobStore::open(home.path().join("jobs.db")).unwrap();
    let folder = out.canonicalize().unwrap().display().to_string();
    let items = jobs.bench_items(&folder).unwrap();
    let interrupted: Vec<_> = items
        .iter()
        .filter(|i| i.state == rein_journal::BenchItemState::Interrupted)
        .collect();
    assert_eq!(interrupted.len(), 1, "{items:#?}");
    let cut = interrupted[0];
    assert!(cut.note.as_deref().unwrap().contains("ended while it ran"));
    let redone: Vec<_> = items
        .iter()
        .filter(|i| (&i.suite, &i.task, i.repeat) == (&cut.suite, &cut.task, cut.repeat))
        .map(|i| (i.attempt, i.state))
        .collect();
    assert_eq!(
        redone,
        [
            (1, rein_journal::BenchItemState::Interrupted),
            (2, rein_journal::BenchItemState::Done)
        ]
    );
    assert_eq!(
        items
            .iter()
            .filter(|i| i.state == rein_journal::BenchItemState::Done)
            .count(),
        4
    );
    let job = jobs.latest_bench_job(&folder).unwrap().unwrap();
    assert_eq!(job.state, rein_journal::JobState::Done);

    // The same bench uninterrupted gives the same results, timings aside.
    let whole = scratch.path().join("whole");
    let o = rein(
        home.path(),
        &args(&whole).iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(o.status.code(), Some(0));
    let strip = |p: &Path| -> Vec<serde_json::Value> { lines(p).iter().map(untimed).collect() };
    let (resumed, whole) = (
        strip(&out.join("results.jsonl")),
        strip(&whole.join("results.jsonl")),
    );
    assert_eq!(resumed.len(), whole.len());
    for (r, w) in resumed.iter().zip(&whole) {
        assert!(r == w, "resumed {r}\n   whole {w}");
    }

    // The recorder: every run has its step trace and streamed replies, and `rein journal show`
    // replays a bench run with its bench header.
    for r in lines(&out.join("results.jsonl")) {
        assert!(r["model_ms"].as_u64().unwrap() >= 150, "{r}");
        assert!(r["total_ms"].as_u64().unwrap() >= r["model_ms"].as_u64().unwrap());
        let trace = &r["trace"];
        assert!(!trace["steps"].as_array().unwrap().is_empty());
        assert!(!trace["stream"][0]["text"].as_str().unwrap().is_empty());
    }
    let run = cut_journal_run(&items, cut);
    let o = rein(home.path(), &["journal", "show", &run.to_string()]);
    let shown = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        shown.contains(&format!(
            "bench run: suite missions, task {}, repeat {}, seed {}",
            cut.task,
            cut.repeat,
            3 + cut.repeat
        )),
        "{shown}"
    );
    assert!(shown.contains("streamed reply 1 ("), "{shown}");
}

/// The journal run of the item that redid `cut`.
fn cut_journal_run(items: &[rein_journal::BenchItem], cut: &rein_journal::BenchItem) -> i64 {
    items
        .iter()
        .find(|i| {
            (&i.suite, &i.task, i.repeat, i.attempt) == (&cut.suite, &cut.task, cut.repeat, 2)
        })
        .and_then(|i| i.journal_run)
        .unwrap()
}

#[test]
fn one_model_at_two_endpoints_is_one_model_served_round_robin() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let suite = repo().join("suites/missions");
    let a = rein_testkit::FakeOpenAi::start().unwrap();
    let b = rein_testkit::FakeOpenAi::start().unwrap();
    let models = format!("openai:{}/v1#qwen,openai:{}/v1#qwen", a.url(), b.url());
    let out = scratch.path().join("out");
    let o = rein(
        home.path(),
        &[
            "bench",
            suite.to_str().unwrap(),
            "--models",
            &models,
            "--repeats",
            "5",
            "--jobs",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let rows = lines(&out.join("results.jsonl"));
    assert_eq!(rows.len(), 10);
    // The servers have no replies: every run fails on the model, and says so.
    for r in &rows {
        assert_eq!(r["model"], "openai:*#qwen", "{r}");
        assert_eq!(r["passed"], false);
    }
    assert!(!a.posts().is_empty(), "endpoint a unused");
    assert!(!b.posts().is_empty(), "endpoint b unused");
}

#[test]
fn a_context_window_is_checked_for_every_model_before_any_run() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let suite = repo().join("suites/missions");
    let script = repo().join("crates/rein-engine/tests/fixtures/agent/no_reread.jsonl");
    let scripted = format!("scripted:{}", script.display());
    let out = scratch.path().join("out");
    for (models, says) in [
        (scripted.as_str(), "--context applies to embedded models"),
        // The catalog model need not be present: its window is checked from the catalog.
        ("qwen2.5-coder-0.5b", "--context must be between 1024 and"),
    ] {
        let context = if models == scripted { "8192" } else { "100" };
        let o = rein(
            home.path(),
            &[
                "bench",
                suite.to_str().unwrap(),
                "--models",
                models,
                "--context",
                context,
                "--out",
                out.to_str().unwrap(),
            ],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{models}: {err}");
        assert!(err.contains(says), "{models}: {err}");
        assert!(!out.exists(), "nothing was written for a refused bench");
    }
    // Benches whose runs record no window refuse it rather than run at the default silently.
    let gate = repo().join("suites/gate").to_string_lossy().into_owned();
    let router = repo().join("suites/router").to_string_lossy().into_owned();
    for (args, says) in [
        (
            vec!["bench", "--task", "create a.txt", "--model", &scripted],
            "an ad-hoc --task",
        ),
        (
            vec!["bench", "bfcl:simple", "--models", &scripted],
            "a bfcl: suite",
        ),
        (vec!["bench", &gate, "--models", &scripted], "a gate suite"),
        (
            vec!["bench", &router, "--models", &scripted],
            "a router suite",
        ),
    ] {
        let mut with = args.clone();
        with.extend(["--context", "8192"]);
        let o = rein(home.path(), &with);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("--context applies to benches of suite folders") && err.contains(says),
            "{args:?}: {err}"
        );
    }
}
