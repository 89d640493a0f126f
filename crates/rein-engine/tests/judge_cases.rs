#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

//! The judge on trial: every shipped automatic mission's gold deliverable passes, and every
//! near miss fails on the checks its case names. Zero false passes is the bar.

use std::path::PathBuf;

use rein_engine::cases::{check_mission, CaseKind};
use rein_engine::mission::Mission;

fn mission(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../missions")
        .join(name)
}

fn assert_judge_right(name: &str, min_near_misses: usize) {
    let contract = Mission::load(mission(name)).unwrap();
    assert!(contract.warnings.is_empty(), "{:?}", contract.warnings);
    let report = check_mission(&contract).unwrap();
    let wrong: Vec<String> = report
        .cases
        .iter()
        .filter(|c| !c.as_expected)
        .map(|c| {
            let failed: Vec<String> = c
                .verdict
                .checks
                .iter()
                .filter(|k| !k.passed && !k.advisory)
                .map(|k| format!("{}: {}", k.id, k.facts.join("; ")))
                .collect();
            format!(
                "{} ({:?}) judged {}; not caught by {:?}; failed: {failed:?}",
                c.name,
                c.kind,
                if c.passed { "pass" } else { "fail" },
                c.not_caught_by
            )
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{name}: the judge is wrong on:\n{}",
        wrong.join("\n")
    );
    assert_eq!(report.false_passes, 0);
    assert!(
        report.near_misses >= min_near_misses,
        "{name}: {} near misses, at least {min_near_misses} wanted",
        report.near_misses
    );
    assert!(report
        .cases
        .iter()
        .any(|c| c.kind == CaseKind::Gold && c.passed));
}

#[test]
fn desk_task_gold_passes_and_every_near_miss_fails() {
    assert_judge_right("desk_task", 10);
}

#[test]
fn doc_extract_gold_passes_and_every_near_miss_fails() {
    assert_judge_right("doc_extract", 10);
}
