#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `review-edits` lever on the desk suite's edit-gitignore: a finish on a file edited in
//! place is held while the file changed since the last review, with the diff of the run's own
//! changes and the task. It never shows the expected file, never holds a finish on the file as
//! reviewed, never touches a deliverable the run creates, and never turns a wrong file into a
//! pass.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::json;
use support::{
    finish_line, finish_refusals, gold_text, journal_events, line, read_summary, reads,
    write_summary, Ran,
};

const FILE: &str = "project/gitignore.txt";

fn edit(old: &str, new: &str) -> String {
    line(
        "edit_file",
        json!({"path": FILE, "old_text": old, "new_text": new}),
    )
}

fn read_back() -> String {
    line("read_file", json!({ "path": FILE }))
}

fn reads_first() -> String {
    line("read_file", json!({"path": "project/README.md"})) + &read_back()
}

fn first_edit() -> String {
    edit(".vscode/\n", ".vscode/\n*.swp\n")
}

fn other_edits() -> String {
    edit("data/raw/\n", "data/raw/\ndata/cache/\n")
        + &edit("data/cache/\n", "data/cache/\n*.sqlite\n")
}

fn run(script: &str, review_edits: bool, attempts: u32) -> Ran {
    let h = support::Harness::desk_suite("edit-gitignore");
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = Levers {
            review_edits,
            ..Levers::DEFAULT
        };
        o.limits.attempts = attempts;
    })
}

/// The part of a review before the task's own words: what the run changed.
fn diff_part(review: &str) -> &str {
    review.split("The task: ").next().unwrap()
}

#[test]
fn a_finish_after_the_first_of_three_edits_is_held_and_shows_the_run_s_own_diff() {
    // The 1.5B's bench run: one edit of three, then finish.
    let script = reads_first()
        + &first_edit()
        + &read_back()
        + &finish_line()
        + &other_edits()
        + &read_back()
        + &finish_line();
    let r = run(&script, true, 1);
    assert!(r.out.passed(), "{}", r.out.reason());
    let refusals = finish_refusals(&r.events);
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    let review = &refusals[0];
    assert!(
        review.starts_with("finish held once for a review"),
        "{review}"
    );
    let diff = diff_part(review);
    assert!(diff.contains(" .vscode/\n+*.swp\n"), "{diff}");
    // The two lines the run had not written yet are nowhere in the diff: the review shows
    // what the run did, never what the expected file holds.
    assert!(!diff.contains("data/cache/"), "{diff}");
    assert!(!diff.contains("*.sqlite"), "{diff}");
    assert!(review.contains("The task: Edit project/gitignore.txt in place"));
    let events = journal_events(&r.h.journal, r.out.run, "edit_review");
    assert_eq!(events, vec![json!({"step": 5, "attempt": 1})]);
    // The step after the hold saw the review as the finish's result.
    let after = r.model.prompt(5);
    assert!(after.contains("finish held once for a review"), "{after}");
}

#[test]
fn a_finish_on_the_file_as_reviewed_is_judged_and_a_wrong_file_still_fails() {
    let script = reads_first() + &first_edit() + &read_back() + &finish_line() + &finish_line();
    let r = run(&script, true, 1);
    assert!(!r.out.passed());
    assert!(r.out.reason().contains("whole-file"), "{}", r.out.reason());
    assert_eq!(finish_refusals(&r.events).len(), 1);
    assert_eq!(r.model.requests.len(), 6);
}

#[test]
fn each_attempt_gets_its_own_review() {
    let script = reads_first()
        + &first_edit()
        + &read_back()
        + &finish_line()
        + &finish_line()
        // attempt 2
        + &other_edits()
        + &read_back()
        + &finish_line()
        + &finish_line();
    let r = run(&script, true, 2);
    assert!(r.out.passed(), "{}", r.out.reason());
    let refusals = finish_refusals(&r.events);
    assert_eq!(refusals.len(), 2, "{refusals:?}");
    assert!(diff_part(&refusals[1]).contains("+data/cache/\n+*.sqlite\n"));
    assert_eq!(
        journal_events(&r.h.journal, r.out.run, "edit_review").len(),
        2
    );
}

#[test]
fn with_the_lever_off_the_first_finish_is_judged() {
    let script = reads_first() + &first_edit() + &read_back() + &finish_line();
    let r = run(&script, false, 1);
    assert!(!r.out.passed());
    assert!(finish_refusals(&r.events).is_empty());
    assert!(journal_events(&r.h.journal, r.out.run, "edit_review").is_empty());
}

#[test]
fn a_finish_the_finish_rules_refuse_is_refused_by_them_not_reviewed() {
    // Not read back after the edit: the finish rules speak, and the review waits for a finish
    // they accept.
    let script = reads_first() + &first_edit() + &finish_line() + &read_back() + &finish_line();
    let r = run(&script, true, 1);
    let refusals = finish_refusals(&r.events);
    assert_eq!(refusals.len(), 2, "{refusals:?}");
    assert!(
        refusals[0].contains("re-read the output first"),
        "{}",
        refusals[0]
    );
    assert!(refusals[1].starts_with("finish held once for a review"));
}

#[test]
fn a_deliverable_the_run_creates_is_never_reviewed() {
    let script = reads() + &write_summary(&gold_text()) + &read_summary() + &finish_line();
    let r = Ran::desk_task(&script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = Levers {
            review_edits: true,
            ..Levers::DEFAULT
        };
        o.limits.attempts = 1;
    });
    assert!(r.out.passed(), "{}", r.out.reason());
    assert!(finish_refusals(&r.events).is_empty());
    assert!(journal_events(&r.h.journal, r.out.run, "edit_review").is_empty());
}

#[test]
fn one_review_per_attempt_the_next_finish_is_judged() {
    // After the review the model adds one line of the two missing and finishes: judged, and
    // the file still lacks a line.
    let script = reads_first()
        + &first_edit()
        + &read_back()
        + &finish_line()
        + &edit("data/raw/\n", "data/raw/\ndata/cache/\n")
        + &read_back()
        + &finish_line();
    let r = run(&script, true, 1);
    assert!(!r.out.passed());
    assert!(r.out.reason().contains("whole-file"), "{}", r.out.reason());
    assert_eq!(finish_refusals(&r.events).len(), 1);
    assert!(r.out.finish_accepted);
}

#[test]
fn an_edit_put_back_to_the_start_is_not_reviewed() {
    // The file as the run found it: nothing to review; the finish rules and the judge decide.
    let script = reads_first()
        + &first_edit()
        + &edit(".vscode/\n*.swp\n", ".vscode/\n")
        + &read_back()
        + &finish_line();
    let r = run(&script, true, 1);
    assert!(!r.out.passed());
    assert!(journal_events(&r.h.journal, r.out.run, "edit_review").is_empty());
}

#[test]
fn a_finish_after_a_change_is_no_repeat_of_an_earlier_finish() {
    // `repeat-escape` redraws a call the run already made; a finish after a change is not one
    // (its outcome turns on the files), so attempt 2's finish, word for word attempt 1's, is
    // judged. Had it been redrawn, the script would have run out. (Each read back is worded
    // apart, since a read the run made already is a repeat.)
    let read_lines = |from: u64| line("read_file", json!({"path": FILE, "start_line": from}));
    let script = reads_first()
        + &first_edit()
        + &read_lines(1)
        + &finish_line()
        // attempt 2
        + &other_edits()
        + &line("read_file", json!({"path": FILE, "start_line": 1, "end_line": 100}))
        + &finish_line();
    let h = support::Harness::desk_suite("edit-gitignore");
    let r = Ran::of(h, &script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = Levers {
            repeat_escape: true,
            ..Levers::DEFAULT
        };
        o.limits.attempts = 2;
    });
    assert!(r.out.passed(), "{}", r.out.reason());
    assert_eq!(r.model.requests.len(), 9);
}
