#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

//! The judge on trial: every shipped mission's gold deliverable passes, and every
//! near miss fails on the checks its case names. Zero false passes is the bar.

#[path = "agent_support/mod.rs"]
mod support;

use std::path::PathBuf;

use rein_engine::cases::{check_mission, CaseKind};
use rein_engine::mission::Mission;

fn mission(name: &str) -> PathBuf {
    support::missions_dir().join(name)
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

/// A human_review_only mission's cases try every check a program decides; its unqualified
/// decision is listed as a person's and never decides a case.
#[test]
fn human_review_missions_are_judged_on_every_check_but_the_person_s() {
    for (name, decision) in [
        ("screen_qa", "answer-correct"),
        ("voice_intake", "reason-faithful"),
    ] {
        assert_judge_right(name, 4);
        let report = check_mission(&Mission::load(mission(name)).unwrap()).unwrap();
        assert_eq!(report.left_to_a_person, vec![decision.to_string()]);
        let gold = &report.cases[0];
        assert_eq!(gold.kind, CaseKind::Gold);
        let check = gold
            .verdict
            .checks
            .iter()
            .find(|c| c.id == decision)
            .unwrap();
        assert!(check.advisory, "{name}: {check:?}");
    }
}

/// What only a person can catch stays theirs: a wrong answer the screen does show passes every
/// check a program decides, and the same answer judged as a run's verdict (the decision counts,
/// and there is no decider) still fails.
#[test]
fn a_grounded_wrong_answer_is_left_to_the_person_and_never_passes_a_run() {
    use rein_engine::checks::{evaluate, evaluate_without_decider, MemWorld, TraceEntry};
    let contract = Mission::load(mission("screen_qa")).unwrap();
    let mut world = MemWorld::new();
    for input in &contract.inputs {
        let bytes = std::fs::read(contract.fixtures_dir.join(&input.path)).unwrap();
        world.set_file(&input.path, bytes);
    }
    world.set_file(
        "out/answer.md",
        b"Answer: Weekly digest\nIt is the toggle that is switched off.\n".to_vec(),
    );
    let trace: Vec<TraceEntry> = Vec::new();
    let cases = evaluate_without_decider(&contract, &world, &trace);
    assert!(cases.passed, "{:?}", cases.checks);
    let run = evaluate(&contract, &world, &trace, None);
    assert!(!run.passed, "{:?}", run.checks);
    let decision = run
        .checks
        .iter()
        .find(|c| c.id == "answer-correct")
        .unwrap();
    assert!(!decision.passed && !decision.advisory, "{decision:?}");
}

/// A near miss may not name the person's decision as its catcher: check-mission would report
/// it caught by a check no program ran.
#[test]
fn a_near_miss_caught_by_an_unqualified_decision_is_refused() {
    // A human-review mission's decision, and an automatic mission's unqualified one.
    for (name, decision, file) in [
        ("screen_qa", "answer-correct", "out/answer.md"),
        ("desk_task", "risk-meaning", "out/summary.md"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(name);
        support::copy_dir(&mission(name), &dir);
        let case = dir.join("judge/near_misses/meaning-only");
        std::fs::create_dir_all(case.join("files/out")).unwrap();
        let why = format!(
            r#"{{"class": "wrong", "why": "only meaning tells", "caught_by": ["{decision}"]}}"#
        );
        std::fs::write(case.join("case.json"), why).unwrap();
        std::fs::write(case.join("files").join(file), "Answer: Weekly digest\n").unwrap();
        let err = check_mission(&Mission::load(&dir).unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(decision) && err.contains("not yet qualified"),
            "{name}: {err}"
        );
    }
}

/// A gold deliverable a run could never finish with is a defect of the task: seven desk tasks
/// had three-line answers under the finish rules' default floor of 20 words, so a model that
/// wrote the right answer was refused and told to write more.
#[test]
fn a_gold_the_finish_rules_refuse_is_a_false_fail() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("search-legacy-flag");
    support::copy_dir(
        &support::missions_dir().join("../suites/desk/search-legacy-flag"),
        &dir,
    );
    let report = check_mission(&Mission::load(&dir).unwrap()).unwrap();
    assert!(report.ok(), "with its own floor the gold finishes");
    // Without the task's floor, the default one refuses the gold's six words.
    let file = dir.join("mission.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    m.as_object_mut().unwrap().remove("min_words");
    std::fs::write(&file, m.to_string()).unwrap();
    let report = check_mission(&Mission::load(&dir).unwrap()).unwrap();
    assert!(!report.ok());
    let gold = report.cases.iter().find(|c| c.name == "gold").unwrap();
    assert!(!gold.passed && !gold.as_expected);
    assert_eq!(gold.failed_checks, ["harness:finish_rules"]);
    let facts = &gold.verdict.checks.last().unwrap().facts[0];
    assert!(facts.contains("fewer than the minimum of 20"), "{facts}");
    // A near miss may name the finish rules as what catches it; a memory check it may not.
    let case = dir.join("judge/near_misses/too-short");
    std::fs::create_dir_all(case.join("files/out")).unwrap();
    std::fs::write(
        case.join("case.json"),
        r#"{"class": "incomplete", "why": "one word", "caught_by": ["harness:finish_rules"]}"#,
    )
    .unwrap();
    std::fs::write(case.join("files/out/answer.md"), "Flag\n").unwrap();
    let report = check_mission(&Mission::load(&dir).unwrap()).unwrap();
    let short = report.cases.iter().find(|c| c.name == "too-short").unwrap();
    assert!(short.as_expected, "{:?}", short.not_caught_by);
    std::fs::write(
        case.join("case.json"),
        r#"{"class": "incomplete", "why": "one word", "caught_by": ["harness:final_answer"]}"#,
    )
    .unwrap();
    let err = check_mission(&Mission::load(&dir).unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("harness:final_answer"), "{err}");
}
