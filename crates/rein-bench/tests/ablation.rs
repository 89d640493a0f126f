#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The ablation table: benches that differ only in their levers, each against a baseline.

use rein_bench::ablation::{ablation, Arm};
use rein_bench::results::RunResult;
use serde_json::json;

/// One run of task `task` (split from its name: `h*` is held out), repeat `repeat`, with
/// `rewrite-section` set as given.
fn run(task: &str, repeat: u32, passed: bool, rewrite: bool) -> RunResult {
    RunResult {
        suite: "desk".into(),
        task: task.into(),
        split: if task.starts_with('h') {
            "heldout"
        } else {
            "dev"
        }
        .into(),
        model: "qwen2.5-coder-1.5b".into(),
        seed: u64::from(repeat),
        repeat,
        passed,
        contract_sha256: format!("{task:0>64}"),
        levers: Some(json!({"read-back": true, "rewrite-section": rewrite})),
        ..RunResult::default()
    }
}

fn arm(name: &str, rewrite: bool, outcomes: &[(&str, u32, bool)]) -> Arm {
    Arm {
        name: name.into(),
        results: outcomes
            .iter()
            .map(|(t, r, p)| run(t, *r, *p, rewrite))
            .collect(),
    }
}

#[test]
fn each_arm_is_paired_with_the_baseline_per_split_with_its_interval_and_mcnemar_p() {
    // Dev: the baseline passes 6 of 6, the arm 1 of 6 (5 discordant, all the baseline's).
    let base_runs: Vec<(&str, u32, bool)> = (0..6)
        .map(|r| ("d1", r, true))
        .chain((0..2).map(|r| ("h1", r, r == 0)))
        .collect();
    let arm_runs: Vec<(&str, u32, bool)> = (0..6)
        .map(|r| ("d1", r, r == 0))
        .chain((0..2).map(|r| ("h1", r, r == 1)))
        .collect();
    let table = ablation(
        &arm("all-on", true, &base_runs),
        &[arm("no-rewrite", false, &arm_runs)],
    )
    .unwrap();
    assert_eq!(table.baseline, "all-on");
    let row = |arm: &str, split: &str| {
        table
            .rows
            .iter()
            .find(|r| r.arm == arm && r.split == split)
            .unwrap()
            .clone()
    };
    let base_dev = row("all-on", "dev");
    assert_eq!((base_dev.passes, base_dev.runs), (6, 6));
    assert!(base_dev.changed.is_empty());
    assert_eq!(base_dev.p_value, 1.0);
    let dev = row("no-rewrite", "dev");
    assert_eq!(dev.changed, vec!["rewrite-section=off".to_string()]);
    assert_eq!((dev.passes, dev.runs, dev.pairs), (1, 6, 6));
    assert_eq!((dev.only_baseline, dev.only_arm), (5, 0));
    // Exact McNemar on (5, 0): 2 * 0.5^5.
    assert!((dev.p_value - 0.0625).abs() < 1e-12, "{}", dev.p_value);
    assert!(dev.wilson_low < 1.0 / 6.0 && dev.wilson_high > 1.0 / 6.0);
    let held = row("no-rewrite", "heldout");
    assert_eq!((held.passes, held.only_baseline, held.only_arm), (1, 1, 1));
    assert_eq!(held.p_value, 1.0);
    let all = row("no-rewrite", "all");
    assert_eq!((all.passes, all.runs, all.pairs), (2, 8, 8));
    let md = table.markdown();
    assert!(
        md.contains("| no-rewrite | rewrite-section=off | dev | 1 | 1/6 | 16.7 % |"),
        "{md}"
    );
    assert!(
        md.contains("| all-on | (baseline) | dev | 1 | 6/6 | 100.0 % |"),
        "{md}"
    );
}

#[test]
fn only_runs_both_benches_have_are_paired() {
    let table = ablation(
        &arm("base", true, &[("d1", 0, true), ("d1", 1, true)]),
        &[arm("off", false, &[("d1", 1, false), ("d1", 2, true)])],
    )
    .unwrap();
    let dev = table
        .rows
        .iter()
        .find(|r| r.arm == "off" && r.split == "dev")
        .unwrap();
    assert_eq!(
        (
            dev.tasks,
            dev.runs,
            dev.pairs,
            dev.only_baseline,
            dev.only_arm
        ),
        (1, 2, 1, 1, 0)
    );
    // No held-out runs: no held-out row.
    assert!(table.rows.iter().all(|r| r.split != "heldout"));
}

#[test]
fn benches_of_different_contracts_mixed_levers_or_no_lever_record_are_refused() {
    let base = arm("base", true, &[("d1", 0, true)]);
    let mut other = arm("other", false, &[("d1", 0, false)]);
    other.results[0].contract_sha256 = "f".repeat(64);
    let e = ablation(&base, &[other]).unwrap_err().to_string();
    assert!(
        e.contains("task desk/d1 was judged against another contract in other than in base"),
        "{e}"
    );

    let mut mixed = arm("mixed", false, &[("d1", 0, false), ("d1", 1, true)]);
    mixed.results[1].levers = Some(json!({"read-back": false, "rewrite-section": false}));
    let e = ablation(&base, &[mixed]).unwrap_err().to_string();
    assert!(
        e.contains("mixed: its runs mix lever settings (read-back=off differ)"),
        "{e}"
    );

    let mut old = arm("old", false, &[("d1", 0, false)]);
    old.results[0].levers = None;
    let e = ablation(&base, &[old]).unwrap_err().to_string();
    assert!(e.contains("has no lever record"), "{e}");

    let twice = arm("twice", false, &[("d1", 0, false), ("d1", 0, true)]);
    let e = ablation(&base, &[twice]).unwrap_err().to_string();
    assert!(e.contains("is there twice"), "{e}");

    let empty = arm("empty", false, &[]);
    let e = ablation(&base, &[empty]).unwrap_err().to_string();
    assert!(e.contains("empty: no runs"), "{e}");
}

// Red team (a helper told to make the table lie).

/// A1. `check_consistent` (results.rs:313) refuses a bench that mixes pass@1 and best-of-K
/// verdicts, because they are different quantities; `ablation` ignores `samples` altogether,
/// so a `--samples 4` bench is set against a pass@1 baseline under "same levers" and its
/// best-of-4 gain reads as a lever effect (here 3/3 vs 1/3, "only this" 2).
#[test]
fn a_best_of_k_arm_is_never_set_against_a_pass_at_1_baseline() {
    let base = arm(
        "pass-at-1",
        true,
        &[("d1", 0, false), ("d1", 1, false), ("d1", 2, true)],
    );
    let mut sampled = arm(
        "best-of-4",
        true,
        &[("d1", 0, true), ("d1", 1, true), ("d1", 2, true)],
    );
    for r in &mut sampled.results {
        r.samples = Some(4);
    }
    let e = ablation(&base, &[sampled])
        .expect_err("best-of-4 verdicts were set against pass@1 as if only levers differed");
    assert!(e.to_string().contains("samples"), "{e}");
}

/// A1. Nor does an arm's own mix of pass@1 and best-of-K runs get refused.
#[test]
fn an_arm_that_mixes_pass_at_1_and_best_of_k_is_refused() {
    let base = arm("base", true, &[("d1", 0, true), ("d1", 1, true)]);
    let mut mixed = arm("mixed", false, &[("d1", 0, true), ("d1", 1, true)]);
    mixed.results[1].samples = Some(4);
    assert!(ablation(&base, &[mixed]).is_err());
}

/// A2. The same tasks run with another `--seed` (or another model) pair with nothing; the
/// arm's rows show pairs 0 and McNemar p = 1 beside a pass rate that differs from the
/// baseline's, instead of refusing the comparison.
#[test]
fn an_arm_sharing_no_run_with_the_baseline_is_refused_not_shown_with_p_1() {
    let base = arm("base", true, &[("d1", 0, true), ("d1", 1, true)]);
    let mut other = arm("other-seed", false, &[("d1", 0, false), ("d1", 1, false)]);
    for r in &mut other.results {
        r.seed += 1000;
    }
    let e =
        ablation(&base, &[other]).expect_err("an arm with no run in common was tabled with p = 1");
    assert!(e.to_string().contains("other-seed"), "{e}");
}

/// A3. Every other text taken from a results file goes through `escape_line` / `cell`, but the
/// baseline's lever names are written raw into the header line (ablation.rs:228-232): a results
/// file can put terminal escapes or extra table rows into what `rein bench ablation` prints.
#[test]
fn lever_names_from_a_results_file_cannot_break_the_table_or_reach_the_terminal() {
    let hostile = "read-back\u{1b}]0;owned\u{7}\n| injected | row |";
    let mut base = arm("base", true, &[("d1", 0, true)]);
    base.results[0].levers = Some(json!({ hostile: true, "rewrite-section": true }));
    let mut other = arm("other", false, &[("d1", 0, false)]);
    other.results[0].levers = Some(json!({ hostile: true, "rewrite-section": false }));
    let md = ablation(&base, &[other]).unwrap().markdown();
    assert!(!md.contains('\u{1b}'), "{md:?}");
    assert!(!md.contains("\n| injected"), "{md:?}");
}

#[test]
fn a_wider_context_window_is_a_changed_setting_of_its_arm() {
    let base = arm("ctx-default", true, &[("d1", 0, false), ("d1", 1, true)]);
    let mut wide = arm("ctx-8k", true, &[("d1", 0, true), ("d1", 1, true)]);
    for r in &mut wide.results {
        r.context = Some(8192);
    }
    let table = ablation(&base, &[wide]).unwrap();
    let dev = table
        .rows
        .iter()
        .find(|r| r.arm == "ctx-8k" && r.split == "dev")
        .unwrap();
    assert_eq!(dev.changed, vec!["context=8192".to_string()]);
    assert_eq!((dev.only_baseline, dev.only_arm), (0, 1));
    assert!(table.markdown().contains("| ctx-8k | context=8192 | dev |"));
}

#[test]
fn an_arm_that_mixes_context_windows_is_refused() {
    let base = arm("base", true, &[("d1", 0, true), ("d1", 1, true)]);
    let mut mixed = arm("mixed", true, &[("d1", 0, true), ("d1", 1, true)]);
    mixed.results[1].context = Some(8192);
    let e = ablation(&base, &[mixed]).expect_err("one row mixed two context windows");
    assert!(e.to_string().contains("default and 8192"), "{e}");
}

/// `arm` with each run's `harness_sha256` set from `builds`, one per run.
fn built(mut arm: Arm, builds: &[Option<&str>]) -> Arm {
    for (r, b) in arm.results.iter_mut().zip(builds) {
        r.harness_sha256 = b.map(str::to_string);
    }
    arm
}

#[test]
fn an_arm_run_by_another_build_says_so_in_its_row() {
    let a = "a".repeat(64);
    let b = "b".repeat(64);
    let runs = [("d1", 0, true), ("d1", 1, true)];
    let base = built(arm("base", true, &runs), &[Some(&a), Some(&a)]);
    let arms = [
        built(arm("same", false, &runs), &[Some(&a), Some(&a)]),
        built(arm("other", false, &runs), &[Some(&b), Some(&b)]),
        built(arm("mixed", false, &runs), &[Some(&a), Some(&b)]),
        built(arm("unrecorded", false, &runs), &[None, Some(&b)]),
    ];
    let table = ablation(&base, &arms).unwrap();
    let changed = |name: &str| {
        table
            .rows
            .iter()
            .find(|r| r.arm == name && r.split == "dev")
            .unwrap()
            .changed
            .clone()
    };
    assert_eq!(changed("same"), vec!["rewrite-section=off".to_string()]);
    assert_eq!(
        changed("other"),
        vec![
            "rewrite-section=off".to_string(),
            "build=bbbbbbbbbbbb".to_string()
        ]
    );
    assert_eq!(
        changed("mixed"),
        vec!["rewrite-section=off".to_string(), "build=mixed".to_string()]
    );
    // Results written before builds were recorded cannot be told apart: no claim either way.
    assert_eq!(
        changed("unrecorded"),
        vec!["rewrite-section=off".to_string()]
    );
    assert_eq!(table.baseline_build.as_deref(), Some(a.as_str()));
    let md = table.markdown();
    assert!(md.contains("build=aaaaaaaaaaaa)"), "{md}");
    assert!(
        md.contains("| other | rewrite-section=off, build=bbbbbbbbbbbb | dev |"),
        "{md}"
    );

    // A baseline of two builds marks every arm.
    let mixed_base = built(arm("base", true, &runs), &[Some(&a), Some(&b)]);
    let table = ablation(&mixed_base, &arms[..1]).unwrap();
    assert_eq!(table.baseline_build.as_deref(), Some("mixed"));
    let row = table.rows.iter().find(|r| r.arm == "same").unwrap();
    assert!(row.changed.contains(&"build=mixed".to_string()), "{row:?}");
}
