#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `find-inputs` lever on the desk suite's search-cert-expiry (22 service files, one of
//! which holds the answer): the progress note stops walking the model through every unread
//! input, never names the file the task needs, suggests a search first, and leaves the judge as
//! it was. A task that needs every input keeps the note that names them.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::json;
use support::{finish_line, line, reads, Harness, Ran};

const ANSWER: &str = "out/answer.md";

fn run_on(h: Harness, script: &str, find_inputs: bool) -> Ran {
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = Levers {
            find_inputs,
            ..Levers::DEFAULT
        };
        o.limits.attempts = 1;
    })
}

fn cert_expiry(script: &str, find_inputs: bool) -> Ran {
    run_on(
        Harness::desk_suite("search-cert-expiry"),
        script,
        find_inputs,
    )
}

fn search() -> String {
    line(
        "search_text",
        json!({"pattern": "cert_expires: 2025-01", "literal": true}),
    )
}

fn answer() -> String {
    line(
        "create_file",
        json!({"path": ANSWER, "content": "Service: pricing\nOwner: emil@shop.example\nExpires: 2025-01-17\n"}),
    ) + &line("read_file", json!({ "path": ANSWER }))
        + &finish_line()
}

#[test]
fn a_search_task_is_told_to_search_then_to_read_what_the_search_named() {
    let script = line("read_file", json!({"path": "services/accounts.yaml"}))
        + &search()
        + &line("read_file", json!({"path": "services/pricing.yaml"}))
        + &answer();
    let r = cert_expiry(&script, true);
    assert!(r.out.passed(), "{}", r.out.reason());
    let after_first_read = support::last_progress_note(&r, 1);
    assert!(
        after_first_read.contains("1 of the 22 inputs read in full"),
        "{after_first_read}"
    );
    assert!(
        after_first_read
            .contains("find the files that hold what the task asks for with search_text"),
        "{after_first_read}"
    );
    let after_search = support::last_progress_note(&r, 2);
    assert!(
        after_search.contains("read in full with read_file each file your search named"),
        "{after_search}"
    );
    // No note ever names an input: not the next unread one, not the one the task needs.
    for i in 1..r.model.requests.len() {
        let note = support::last_progress_note(&r, i);
        assert!(!note.contains("services/"), "request {i}: {note}");
    }
}

#[test]
fn without_the_lever_the_note_walks_through_every_unread_input() {
    let script = line("read_file", json!({"path": "services/accounts.yaml"}))
        + &search()
        + &line("read_file", json!({"path": "services/pricing.yaml"}))
        + &answer();
    let r = cert_expiry(&script, false);
    assert!(r.out.passed(), "{}", r.out.reason());
    let note = support::last_progress_note(&r, 1);
    assert!(
        note.contains("read the whole of services/auth.yaml with read_file"),
        "{note}"
    );
}

#[test]
fn the_lever_leaves_the_judge_as_it_was_a_write_before_reading_the_file_still_fails() {
    // Searched, then wrote from the search's line alone: the contract's inputs-read check
    // still needs the file read in full before the write.
    let script = search() + &answer();
    let r = cert_expiry(&script, true);
    assert!(!r.out.passed());
    assert!(r.out.reason().contains("inputs-read"), "{}", r.out.reason());
}

#[test]
fn a_task_that_needs_every_input_keeps_the_note_that_names_them() {
    // The same 22 files, with the inputs-read check asking for every one of them.
    let h = Harness::desk_suite_mission("search-cert-expiry", |m| {
        support::check_mut(m, "inputs-read")["paths"] = json!([]);
    });
    let script = line("read_file", json!({"path": "services/accounts.yaml"})) + &search();
    let r = run_on(h, &script, true);
    let note = support::last_progress_note(&r, 1);
    assert!(
        note.contains("read the whole of services/auth.yaml with read_file"),
        "{note}"
    );
}

#[test]
fn a_task_with_few_inputs_keeps_the_note_that_names_them() {
    // desk_task: three inputs, every one needed.
    let r = Ran::desk_task(&reads(), &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = Levers {
            find_inputs: true,
            ..Levers::DEFAULT
        };
        o.limits.attempts = 1;
    });
    let note = support::last_progress_note(&r, 1);
    assert!(note.contains("not yet read: "), "{note}");
    assert!(note.contains("read the whole of "), "{note}");
}
