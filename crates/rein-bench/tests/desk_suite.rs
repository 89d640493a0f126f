#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The shape the issue asks of `suites/desk`: 50 tasks or more, at least 6 in each of the seven
//! categories, about a fifth held out, every task with a gold deliverable and two near misses the
//! judge gets right; search tasks need search (20+ files), edit tasks edit in place and are
//! judged on the whole file and on nothing else changing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rein_bench::check::check_suite;
use rein_bench::suite::{Split, Suite};
use rein_engine::checks::CheckSpec;

const CATEGORIES: [&str; 7] = [
    "edit",
    "explore",
    "extract",
    "related",
    "report",
    "search",
    "summarize",
];

fn desk() -> Suite {
    let dir: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/desk");
    Suite::load(dir).unwrap()
}

#[test]
fn desk_has_fifty_tasks_six_per_category_and_a_fifth_held_out() {
    let s = desk();
    assert!(s.tasks.len() >= 50, "{} tasks", s.tasks.len());
    let mut per: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &s.tasks {
        assert!(
            CATEGORIES.contains(&t.category.as_str()),
            "{}: category {}",
            t.id,
            t.category
        );
        *per.entry(t.category.as_str()).or_default() += 1;
    }
    for c in CATEGORIES {
        let n = per.get(c).copied().unwrap_or(0);
        assert!(n >= 6, "{c}: {n} tasks, at least 6 wanted ({per:?})");
    }
    let held = s.tasks.iter().filter(|t| t.split == Split::Heldout).count();
    let share = held as f64 / s.tasks.len() as f64;
    assert!(
        (0.15..=0.25).contains(&share),
        "{held} of {} held out ({:.0} %)",
        s.tasks.len(),
        share * 100.0
    );
}

#[test]
fn search_tasks_need_search_and_edit_tasks_edit_in_place() {
    for t in desk().tasks {
        let m = &t.contract.mission;
        if t.category == "search" {
            assert!(
                m.inputs.len() >= 20,
                "{}: the answer must be in one of 20+ files, it has {}",
                t.id,
                m.inputs.len()
            );
        }
        if t.category != "edit" {
            continue;
        }
        assert!(!m.editable.is_empty(), "{}: no editable file", t.id);
        assert!(
            m.editable.contains(&m.required_artifact),
            "{}: the deliverable is the edited file",
            t.id
        );
        let whole = m.checks.iter().any(
            |c| matches!(&c.spec, CheckSpec::FileEquals { path, .. } if m.editable.contains(path)),
        );
        let rest = m
            .checks
            .iter()
            .any(|c| matches!(c.spec, CheckSpec::NothingElseChanged { .. }));
        assert!(
            whole && rest,
            "{}: whole file {whole}, nothing else {rest}",
            t.id
        );
    }
}

#[test]
fn every_desk_task_has_gold_and_two_near_misses_and_the_judge_is_right() {
    let s = desk();
    let c = check_suite(&s).unwrap();
    for t in &c.tasks {
        assert!(t.report.gold >= 1, "{}: no gold", t.task);
        assert!(
            t.report.near_misses >= 2,
            "{}: fewer than 2 near misses",
            t.task
        );
        assert!(t.ok, "{}: the judge is wrong on a case", t.task);
    }
    assert!(c.ok && c.false_passes == 0 && c.false_fails == 0);
}
