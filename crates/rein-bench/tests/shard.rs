#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use rein_bench::render::write_outputs;
use rein_bench::results::{append_result, RunResult, RESULTS_FILE};
use rein_bench::shard::{merge_results, shard_of, Shard};

fn result(suite: &str, task: usize, model: &str, repeat: u32) -> RunResult {
    let passed = !(task * 7 + repeat as usize * 3 + model.len()).is_multiple_of(3);
    RunResult {
        suite: suite.into(),
        task: format!("task-{task:02}"),
        category: ["search", "edit", "extract"][task % 3].into(),
        split: if task.is_multiple_of(5) {
            "heldout"
        } else {
            "dev"
        }
        .into(),
        model: model.into(),
        seed: 1000 + u64::from(repeat),
        repeat,
        passed,
        reason: if passed {
            "all checks passed".into()
        } else {
            format!("check {task} failed")
        },
        contract_sha256: format!("{suite}-{task}-contract"),
        model_identity: format!("{model} identity"),
        steps: (task as u32 % 7) + repeat + 2,
        wall_ms: 500 * (task as u64 + 1) + 37 * u64::from(repeat),
        prompt_tokens: 900,
        completion_tokens: 150 + task as u64,
        format_errors: (task % 2) as u32,
        repairs: (task % 3) as u32,
        cap_hit: task.is_multiple_of(4) && !passed,
        finish_accepted: passed,
        model_ms: 400 * (task as u64 + 1),
        total_ms: 500 * (task as u64 + 1) + 40 * u64::from(repeat),
        trace: Some(rein_bench::results::RunTrace {
            steps: vec![rein_bench::results::TraceStep {
                seq: 1,
                kind: "action".into(),
                action: Some("read_file".into()),
                parameters: Some(serde_json::json!({"path": format!("f{task}.txt")})),
                gate: Some("executed".into()),
                ..Default::default()
            }],
            stream: vec![rein_bench::results::StreamedReply {
                text: format!("reply of task {task}"),
                ..Default::default()
            }],
        }),
        memory: None,
        levers: None,
        samples: None,
        first_draw_passed: None,
        chosen_draw_passed: None,
        sample_draws: None,
        note_requests: None,
        context: None,
        harness_sha256: None,
    }
}

fn all_results() -> Vec<RunResult> {
    let mut v = Vec::new();
    for suite in ["desk", "missions"] {
        for task in 0..6 {
            for model in ["scripted:a.json", "openai:http://127.0.0.1:8080#qwen"] {
                for repeat in 0..3 {
                    v.push(result(suite, task, model, repeat));
                }
            }
        }
    }
    v
}

#[test]
fn the_partition_is_pinned_to_sha256() {
    // 1 + (sha256("suite\x1ftask\x1fmodel\x1frepeat") mod N), computed independently in Python.
    assert_eq!(shard_of("desk", "search-01", "scripted:a.json", 0, 7), 3);
    assert_eq!(shard_of("missions", "desk_task", "qwen", 2, 3), 2);
    assert_eq!(shard_of("s", "t", "m", 0, 1_000_003), 931_300);
    assert_eq!(shard_of("s", "t", "m", 0, 1), 1);
}

#[test]
fn every_item_is_in_exactly_one_shard() {
    let items = all_results();
    for n in 1..=5u64 {
        let mut counts = vec![0usize; n as usize];
        for r in &items {
            let holders: Vec<u64> = (1..=n)
                .filter(|&k| {
                    Shard { index: k, count: n }.holds(&r.suite, &r.task, &r.model, r.repeat)
                })
                .collect();
            assert_eq!(holders.len(), 1);
            counts[(holders[0] - 1) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| c > 0), "n={n}: {counts:?}");
    }
}

#[test]
fn shard_flags_parse() {
    assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 2, count: 4 });
    assert_eq!(Shard::parse("1/1").unwrap(), Shard::ALL);
    for bad in ["0/4", "5/4", "1/0", "1", "a/b", "-1/2"] {
        let e = Shard::parse(bad).unwrap_err().to_string();
        assert!(e.contains("--shard") && e.contains("K/N"), "{bad}: {e}");
    }
}

fn shard_dirs(n: u64, results: &[RunResult]) -> (tempfile::TempDir, Vec<PathBuf>) {
    let tmp = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    for k in 1..=n {
        let d = tmp.path().join(format!("shard-{k}"));
        std::fs::create_dir_all(&d).unwrap();
        // Shards append in arrival order, here reversed, as a bench finishing out of order would.
        for r in results.iter().rev() {
            if (Shard { index: k, count: n }).holds(&r.suite, &r.task, &r.model, r.repeat) {
                append_result(&d.join(RESULTS_FILE), r).unwrap();
            }
        }
        dirs.push(d);
    }
    (tmp, dirs)
}

#[test]
fn two_shards_merged_equal_the_unsharded_report() {
    let results = all_results();
    let unsharded = tempfile::tempdir().unwrap();
    write_outputs(unsharded.path(), &results).unwrap();
    for n in [2u64, 3] {
        let (tmp, dirs) = shard_dirs(n, &results);
        let merged = merge_results(&dirs).unwrap();
        assert_eq!(merged.len(), results.len());
        let out = tmp.path().join("merged");
        write_outputs(&out, &merged).unwrap();
        for f in [RESULTS_FILE, "report.md", "report.html", "junit.xml"] {
            let a = std::fs::read(unsharded.path().join(f)).unwrap();
            let b = std::fs::read(out.join(f)).unwrap();
            assert!(a == b, "{f} differs after merging {n} shards");
        }
    }
}

#[test]
fn merge_refuses_duplicates_mixed_contracts_and_missing_results() {
    let results = all_results();
    let (tmp, dirs) = shard_dirs(2, &results);
    // The same shard twice: every run of it appears twice.
    let e = merge_results(&[dirs[0].clone(), dirs[0].clone()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("appears more than once"), "{e}");
    // A third folder holding one run judged against another contract.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let mut changed = result("desk", 1, "some-other-model", 0);
    changed.contract_sha256 = "a-different-contract".into();
    append_result(&other.join(RESULTS_FILE), &changed).unwrap();
    let e = merge_results(&[dirs[0].clone(), dirs[1].clone(), other.clone()])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("task desk/task-01 was judged against two different contracts"),
        "{e}"
    );
    let e = merge_results(&[tmp.path().join("nowhere")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("no results.jsonl here"), "{e}");
}

#[test]
fn merge_refuses_shards_that_drew_a_different_number_of_samples() {
    // Shard 1 ran with --samples 3 (its verdicts are best-of-3), shard 2 without (pass@1):
    // merged, one model's pass rate and every paired comparison would mix the two.
    let results = all_results();
    let (tmp, dirs) = shard_dirs(2, &results);
    rewrite_results(&dirs[0], |r| {
        r.samples = Some(3);
        r.first_draw_passed = Some(false);
        r.chosen_draw_passed = Some(r.passed);
    });
    let e = merge_results(&dirs).unwrap_err().to_string();
    assert!(
        e.contains("samples") && e.contains("pass@1") && e.contains("best-of-3"),
        "{e}"
    );
    // The same K on both sides merges.
    rewrite_results(&dirs[1], |r| r.samples = Some(3));
    assert_eq!(merge_results(&dirs).unwrap().len(), results.len());
    drop(tmp);
}

#[test]
fn merge_refuses_shards_that_ran_a_model_with_another_context_window() {
    // Shard 1 ran with --context 8192, shard 2 with the default window: one model's figures
    // would mix two settings under one name.
    let results = all_results();
    let (_tmp, dirs) = shard_dirs(2, &results);
    rewrite_results(&dirs[0], |r| r.context = Some(8192));
    let e = merge_results(&dirs).unwrap_err().to_string();
    assert!(
        e.contains("--context 8192") && e.contains("its default window"),
        "{e}"
    );
    // Both shards with the same window merge.
    rewrite_results(&dirs[1], |r| r.context = Some(8192));
    assert_eq!(merge_results(&dirs).unwrap().len(), results.len());
}

/// Rewrites the results.jsonl of shard folder `dir` with `change` made to every run.
fn rewrite_results(dir: &Path, change: impl Fn(&mut RunResult)) {
    let file = dir.join(RESULTS_FILE);
    let runs = rein_bench::results::read_results(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    for mut r in runs {
        change(&mut r);
        append_result(&file, &r).unwrap();
    }
}
