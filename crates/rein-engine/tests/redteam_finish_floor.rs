#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of commit 4ee155c's finish floor: check-suite holding every workspace case whose
//! action log finishes to the finish rules (`harness:finish_rules`), and `finish-when-met`
//! leaving a deliverable that was there when the run began to the model. A test that fails
//! names a defect and says what is right; a test that passes probes a claim that held and stays
//! as a regression test.

#[path = "agent_support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};

use rein_engine::agent::Levers;
use rein_engine::cases::{check_mission, check_mission_in, CaseReport, CaseResult, CaseSandbox};
use rein_engine::checks::count_words;
use rein_engine::gate::AllowAll;
use rein_engine::mission::Mission;
use rein_engine::policy::Policy;
use serde_json::{json, Value};
use support::{
    gold_fields, gold_text, journal_events, line, read_summary, reads, wrong_then_right, Ran,
};

const FINISH_RULES: &str = "harness:finish_rules";
const SUMMARY: &str = "out/summary.md";

// ---------------------------------------------------------------------------------------
// Helpers: a mission copied to a temp folder, cases added to it, its report.

/// `rel` (relative to `missions/`) copied into a temp folder: the folder and the copy.
fn copy_mission(rel: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("m");
    support::copy_dir(&support::missions_dir().join(rel), &dir);
    (tmp, dir)
}

fn edit_mission(dir: &Path, edit: impl FnOnce(&mut Value)) {
    let file = dir.join("mission.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    edit(&mut m);
    std::fs::write(&file, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

/// Adds the case `judge/<sub>/<name>` with `case` as its case.json and `files`.
fn add_case(dir: &Path, sub: &str, name: &str, case: Value, files: &[(&str, &str)]) {
    let c = dir.join("judge").join(sub).join(name);
    std::fs::create_dir_all(&c).unwrap();
    std::fs::write(c.join("case.json"), case.to_string()).unwrap();
    for (p, text) in files {
        let f = c.join("files").join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    }
}

fn report(dir: &Path) -> CaseReport {
    check_mission(&Mission::load(dir).unwrap()).unwrap()
}

fn case<'a>(r: &'a CaseReport, name: &str) -> &'a CaseResult {
    r.cases.iter().find(|c| c.name == name).unwrap()
}

fn finish_facts(c: &CaseResult) -> String {
    c.verdict
        .checks
        .iter()
        .filter(|k| k.id == FINISH_RULES)
        .flat_map(|k| k.facts.clone())
        .collect::<Vec<_>>()
        .join("; ")
}

/// The finish-rules facts of case `c` say `said`.
fn assert_finish_says(c: &CaseResult, said: &str) {
    let facts = finish_facts(c);
    assert!(
        facts.contains(said),
        "{}: {:?}: {facts}",
        c.name,
        c.failed_checks
    );
}

fn call(tool: &str, path: &str) -> Value {
    json!({"tool": tool, "path": path})
}

fn final_write(tool: &str, path: &str) -> Value {
    json!({"tool": tool, "path": path, "writes": "final"})
}

fn finish(outcome: &str) -> Value {
    json!({"tool": "finish", "outcome": outcome})
}

/// desk_task's three whole reads.
fn desk_reads() -> Vec<Value> {
    [
        "notes/overview.md",
        "notes/meeting-notes.md",
        "data/tasks.csv",
    ]
    .iter()
    .map(|p| call("read_file", p))
    .collect()
}

fn trace(parts: Vec<Vec<Value>>) -> Value {
    Value::Array(parts.into_iter().flatten().collect())
}

// ---------------------------------------------------------------------------------------
// Claim 1: the right trace prefix.

#[test]
fn a_gold_that_finishes_before_its_write_or_its_read_back_is_a_false_fail() {
    let (_tmp, dir) = copy_mission("desk_task");
    let gold = gold_text();
    add_case(
        &dir,
        "gold_variants",
        "finish-first",
        json!({"class": "x", "why": "finish before the write", "trace": trace(vec![
            desk_reads(),
            vec![finish("executed"), final_write("create_file", SUMMARY), call("read_file", SUMMARY)],
        ])}),
        &[(SUMMARY, &gold)],
    );
    add_case(
        &dir,
        "gold_variants",
        "finish-before-read-back",
        json!({"class": "x", "why": "finish before the read-back", "trace": trace(vec![
            desk_reads(),
            vec![final_write("create_file", SUMMARY), finish("executed"), call("read_file", SUMMARY)],
        ])}),
        &[(SUMMARY, &gold)],
    );
    let r = report(&dir);
    for (name, reason) in [
        ("finish-first", "was not written in this run"),
        ("finish-before-read-back", "re-read the output first"),
    ] {
        let c = case(&r, name);
        assert!(
            !c.passed && c.failed_checks.iter().any(|k| k == FINISH_RULES),
            "{name}: a log whose executed finish comes before the write or read-back is a run \
             the finish rules refuse; it must fail {FINISH_RULES}: {:?}",
            c.failed_checks
        );
        assert_finish_says(c, reason);
    }
    assert_eq!(r.false_fails, 2);
}

#[test]
fn the_first_executed_finish_decides_and_a_refused_one_does_not() {
    let (_tmp, dir) = copy_mission("desk_task");
    let gold = gold_text();
    let draft = json!({"tool": "create_file", "path": SUMMARY, "content": "A draft."});
    let rewrite = final_write("replace_file", SUMMARY);
    // The run's first finish was executed while a draft was on disk: the run ended there.
    add_case(
        &dir,
        "gold_variants",
        "two-finishes-first-early",
        json!({"class": "x", "why": "x", "trace": trace(vec![desk_reads(), vec![
            draft.clone(), call("read_file", SUMMARY), finish("executed"),
            rewrite.clone(), call("read_file", SUMMARY), finish("executed"),
        ]])}),
        &[(SUMMARY, &gold)],
    );
    // The first finish was refused (denied): the second, after the right report, counts.
    add_case(
        &dir,
        "gold_variants",
        "refused-then-finished",
        json!({"class": "x", "why": "x", "trace": trace(vec![desk_reads(), vec![
            draft, call("read_file", SUMMARY), finish("denied"),
            rewrite, call("read_file", SUMMARY), finish("executed"),
        ]])}),
        &[(SUMMARY, &gold)],
    );
    let r = report(&dir);
    let early = case(&r, "two-finishes-first-early");
    assert!(
        early.failed_checks.iter().any(|k| k == FINISH_RULES),
        "the first executed finish ends a run: {:?}",
        early.failed_checks
    );
    assert_finish_says(early, "not what this run last wrote");
    let later = case(&r, "refused-then-finished");
    assert!(later.passed, "{:?}", later.failed_checks);
}

// ---------------------------------------------------------------------------------------
// Claim 1: a gold a run could never finish with, whatever its log says.

/// search-legacy-flag without its own floor (the default 20 words refuses its six), its gold's
/// log replaced by `tail` after whole reads of every input.
fn legacy_flag_gold_logged(tail: Vec<Value>) -> CaseReport {
    let (_tmp, dir) = copy_mission("../suites/desk/search-legacy-flag");
    let mut inputs = Vec::new();
    edit_mission(&dir, |m| {
        m.as_object_mut().unwrap().remove("min_words");
        inputs = m["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| call("read_file", p.as_str().unwrap()))
            .collect();
    });
    let gold = dir.join("judge/gold");
    let words = std::fs::read_to_string(gold.join("files/out/answer.md")).unwrap();
    assert!(count_words(&words) < 20, "{words}");
    std::fs::write(
        gold.join("case.json"),
        json!({"trace": trace(vec![inputs, tail])}).to_string(),
    )
    .unwrap();
    report(&dir)
}

#[test]
fn a_gold_under_the_floor_fails_even_when_its_log_never_finishes() {
    let write = || {
        vec![
            final_write("create_file", "out/answer.md"),
            call("read_file", "out/answer.md"),
        ]
    };
    // Sanity: the same gold with a finish at the end is the false fail the commit reports.
    let r = legacy_flag_gold_logged([write(), vec![finish("executed")]].concat());
    assert!(!case(&r, "gold").passed);
    for (what, tail) in [
        ("no finish at all", write()),
        (
            "a finish the gate denied",
            [write(), vec![finish("denied")]].concat(),
        ),
    ] {
        let r = legacy_flag_gold_logged(tail);
        let gold = case(&r, "gold");
        // Correct: a run passes only after an accepted finish (RunOutcome: passed = accepted &&
        // verdict.passed), and no finish is ever accepted with this six-word file under a floor
        // of 20. A gold whose log never finishes describes no passing run: check-suite must
        // still report it as a false fail (the finish rules on the deliverable, or the case
        // refused as invalid), not pass it because its log skips the one call that is checked.
        assert!(
            !gold.passed && !r.ok(),
            "{what}: a six-word gold under the 20-word floor passed check-suite because its log \
             never reaches an executed finish (failed: {:?})",
            gold.failed_checks
        );
    }
}

#[test]
fn placeholder_text_in_a_gold_is_a_false_fail() {
    let (_tmp, dir) = copy_mission("desk_task");
    let text = format!("{}\nNext review: TBD\n", gold_text().trim_end());
    add_case(
        &dir,
        "gold_variants",
        "placeholder",
        json!({"class": "x", "why": "x"}),
        &[(SUMMARY, &text)],
    );
    let r = report(&dir);
    let c = case(&r, "placeholder");
    assert!(!c.passed);
    assert_finish_says(c, "placeholder");
}

// ---------------------------------------------------------------------------------------
// Claim 1: the right input hashes.

#[test]
fn the_finish_rules_compare_the_inputs_the_case_leaves_with_the_frozen_ones() {
    let (_tmp, dir) = copy_mission("desk_task");
    let gold = gold_text();
    let tasks = std::fs::read_to_string(dir.join("fixtures/data/tasks.csv")).unwrap();
    // The input as it was, laid over itself: nothing changed, the gold still finishes.
    add_case(
        &dir,
        "gold_variants",
        "same-input-bytes",
        json!({"class": "x", "why": "x"}),
        &[(SUMMARY, &gold), ("data/tasks.csv", &tasks)],
    );
    // One more row in the input: a run's finish is refused, and a near miss may say so.
    let changed = format!("{tasks}Extra row,1,Nobody\n");
    add_case(
        &dir,
        "near_misses",
        "input-grew",
        json!({"class": "x", "why": "x", "caught_by": [FINISH_RULES]}),
        &[(SUMMARY, &gold), ("data/tasks.csv", &changed)],
    );
    // An input deleted by the run.
    add_case(
        &dir,
        "near_misses",
        "input-deleted",
        json!({"class": "x", "why": "x", "caught_by": [FINISH_RULES], "deleted": ["notes/overview.md"]}),
        &[(SUMMARY, &gold)],
    );
    let r = report(&dir);
    assert!(
        case(&r, "same-input-bytes").passed,
        "{:?}",
        case(&r, "same-input-bytes").failed_checks
    );
    let grew = case(&r, "input-grew");
    assert!(grew.as_expected, "{:?}", grew.not_caught_by);
    assert_finish_says(grew, "data/tasks.csv");
    let gone = case(&r, "input-deleted");
    assert!(gone.as_expected, "{:?}", gone.not_caught_by);
    assert_finish_says(gone, "no longer exists");
}

// ---------------------------------------------------------------------------------------
// Claim 1: editable deliverables, changed in place.

#[test]
fn an_edit_task_gold_changed_in_two_edits_finishes_and_one_edited_after_its_read_back_does_not() {
    let (_tmp, dir) = copy_mission("../suites/desk/edit-gitignore");
    const FILE: &str = "project/gitignore.txt";
    let gold = std::fs::read_to_string(dir.join("judge/gold/files").join(FILE)).unwrap();
    let first_edit = json!({"tool": "edit_file", "path": FILE, "content": "half done\n"});
    add_case(
        &dir,
        "gold_variants",
        "two-edits",
        json!({"class": "x", "why": "x", "trace": [
            call("read_file", "project/README.md"), call("read_file", FILE),
            first_edit, final_write("edit_file", FILE), call("read_file", FILE), finish("executed"),
        ]}),
        &[(FILE, &gold)],
    );
    add_case(
        &dir,
        "near_misses",
        "edited-after-read-back",
        json!({"class": "x", "why": "x", "caught_by": [FINISH_RULES], "trace": [
            call("read_file", "project/README.md"), call("read_file", FILE),
            final_write("edit_file", FILE), finish("executed"),
        ]}),
        &[(FILE, &gold)],
    );
    let r = report(&dir);
    let two = case(&r, "two-edits");
    assert!(two.passed, "{:?}: {}", two.failed_checks, finish_facts(two));
    let late = case(&r, "edited-after-read-back");
    assert!(late.as_expected, "{:?}", late.not_caught_by);
    assert!(r.false_fails == 0 && r.wrong_catcher == 0);
}

// ---------------------------------------------------------------------------------------
// Claim 1: memory-sandbox cases never get the check, and may not name it.

#[test]
fn memory_cases_get_no_finish_rules_and_may_not_name_them() {
    let (_tmp, dir) = copy_mission("../suites/toy/note-hello");
    // A memory log that calls `finish` (no tool of the sandbox): the run stops there.
    add_case(
        &dir,
        "near_misses",
        "calls-finish",
        json!({"class": "x", "why": "x", "caught_by": ["harness:unregistered_tool"], "trace": [
            {"tool": "create_file", "path": "note.txt"}, {"tool": "read_file", "path": "note.txt"},
            {"tool": "finish"}
        ]}),
        &[("note.txt", "hello world")],
    );
    let contract = Mission::load(&dir).unwrap();
    let r = check_mission_in(&contract, CaseSandbox::Memory).unwrap();
    assert!(
        r.ok(),
        "{:?}",
        r.cases
            .iter()
            .map(|c| (&c.name, &c.failed_checks))
            .collect::<Vec<_>>()
    );
    for c in &r.cases {
        assert!(
            c.verdict.checks.iter().all(|k| k.id != FINISH_RULES),
            "{}: a memory case was held to the workspace finish rules",
            c.name
        );
    }
    add_case(
        &dir,
        "near_misses",
        "names-finish-rules",
        json!({"class": "x", "why": "x", "caught_by": [FINISH_RULES], "trace": [
            {"tool": "create_file", "path": "note.txt"}, {"tool": "final_answer"}
        ]}),
        &[("note.txt", "hello")],
    );
    let err = check_mission_in(&Mission::load(&dir).unwrap(), CaseSandbox::Memory)
        .unwrap_err()
        .to_string();
    assert!(err.contains(FINISH_RULES), "{err}");
}

// ---------------------------------------------------------------------------------------
// Claim 1: the desk suite, and near misses caught only by the floor.

#[test]
fn every_desk_task_is_right_and_no_near_miss_hides_behind_the_finish_rules() {
    let desk = support::missions_dir().join("../suites/desk");
    let mut tasks = 0;
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&desk).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("mission.json").is_file() {
            continue;
        }
        tasks += 1;
        let contract = Mission::load(&dir).unwrap();
        let r = check_mission(&contract).unwrap();
        assert!(r.ok(), "{}", r.mission);
        for c in &r.cases {
            if c.kind.must_pass() {
                continue;
            }
            // A near miss caught by the finish rules alone would say nothing of the contract's
            // checks; every one must fail a check of its own contract.
            assert!(
                c.failed_checks.iter().any(|k| !k.starts_with("harness:")),
                "{}/{}: fails only {:?}",
                r.mission,
                c.name,
                c.failed_checks
            );
            if c.not_caught_by.is_empty() && c.failed_checks.iter().any(|k| k == FINISH_RULES) {
                names.push(format!("{}/{}", r.mission, c.name));
            }
        }
        // With no floor at all, every near miss still fails on the checks it names: none of
        // them is caught by the new min_words instead of its own check.
        if let Some(min) = contract.mission.min_words {
            let tmp = tempfile::tempdir().unwrap();
            let copy = tmp.path().join("m");
            support::copy_dir(&dir, &copy);
            edit_mission(&copy, |m| m["min_words"] = json!(1));
            let loose = report(&copy);
            assert!(
                loose.ok(),
                "{}: with min_words 1 the judge is wrong",
                r.mission
            );
            // And the task's floor is no higher than what the gold writes.
            let gold = case(&loose, "gold");
            let art = &contract.mission.required_artifact;
            let text = std::fs::read_to_string(dir.join("judge/gold/files").join(art)).unwrap();
            assert!(
                gold.passed && count_words(&text) >= min as usize,
                "{}",
                r.mission
            );
        }
    }
    assert!(tasks >= 40, "{tasks}");
    assert!(!names.is_empty());
}

// ---------------------------------------------------------------------------------------
// Claim 2: finish-when-met and a deliverable that was (or was not) there when the run began.

fn levers(monotone: bool) -> Levers {
    Levers {
        write_sections: true,
        finish_when_met: true,
        auto_finish: true,
        monotone_attempts: monotone,
        ..Levers::DEFAULT
    }
}

fn run(script: &str, levers: Levers, attempts: u32) -> Ran {
    Ran::desk_task(script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = attempts;
    })
}

fn auto_finishes(r: &Ran) -> Vec<Value> {
    journal_events(&r.h.journal, r.out.run, "auto_finish")
}

#[test]
fn attempt_two_of_a_report_created_in_attempt_one_is_still_finished_by_rein() {
    // Attempt 1 creates the report (wrong total, an answer check): Rein finishes, the judge
    // fails it. Attempt 2 starts with attempt 1's file on disk; the file was not there when the
    // run began, so Rein finishes attempt 2's right report too. With and without monotone
    // attempts.
    let script = wrong_then_right();
    for monotone in [false, true] {
        let r = run(&script, levers(monotone), 2);
        assert!(r.out.passed(), "monotone {monotone}: {}", r.out.reason());
        let events = auto_finishes(&r);
        assert_eq!(events.len(), 2, "monotone {monotone}: {events:?}");
        assert_eq!(events[1]["attempt"], 2, "{events:?}");
        assert_eq!(events[1]["accepted"], true, "{events:?}");
    }
}

#[test]
fn a_report_the_run_creates_deletes_and_creates_again_is_finished_by_rein() {
    let script = reads()
        + &line("write_sections", gold_fields())
        + &line("delete_file", json!({ "path": SUMMARY }))
        + &line("write_sections", gold_fields())
        + &read_summary();
    let r = run(&script, levers(false), 1);
    assert!(r.out.passed(), "{}", r.out.reason());
    let events = auto_finishes(&r);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["accepted"], true, "{events:?}");
    assert_eq!(r.model.requests.len(), 7);
}

#[test]
fn a_report_left_in_the_workspace_before_the_run_is_finished_by_the_model() {
    // Probe of the claim as written: a stale report (say, a rerun in the same workspace) was
    // there when the run began, so finish-when-met never offers finish alone and auto-finish
    // never calls it, even though write_sections replaces the file whole. Conservative (no
    // wrong verdict can come of it), but a rerun in a used workspace silently runs without
    // the lever.
    let h = support::Harness::new("desk_task");
    std::fs::create_dir_all(h.workspace.join("out")).unwrap();
    std::fs::write(h.workspace.join(SUMMARY), "# Old draft\n").unwrap();
    let script = reads()
        + &line("write_sections", gold_fields())
        + &read_summary()
        + &line("finish", json!({"summary": "Done."}));
    let mut model = support::PromptRecorder::new(&script, "stale.jsonl");
    let (out, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers(false);
        o.constrained = true;
        o.limits.attempts = 1;
    });
    assert!(out.passed(), "{}", out.reason());
    assert!(journal_events(&h.journal, out.run, "auto_finish").is_empty());
    assert_eq!(model.requests.len(), 6, "the model made its own finish");
}
