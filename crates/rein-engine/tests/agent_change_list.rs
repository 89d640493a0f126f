#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `change-list` lever on the desk suite's edit-env-rotate: once the file edited in place
//! is read whole, the model lists the changes the task asks for; Rein counts the places where
//! the file differs from the file as the run found it against the list, names the next change
//! in the progress note, and holds a finish once per attempt while changes are left. It never shows the expected file, never touches a
//! deliverable the run creates, and never turns a wrong file into a pass.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{Levers, CHANGE_LIST_MAX_ITEMS};
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::json;
use support::{
    finish_line, finish_refusals, gold_text, journal_events, line, read_summary, reads,
    user_messages, write_summary, Ran,
};

const FILE: &str = "config/staging.env";

fn reads_first() -> String {
    line("read_file", json!({"path": "config/production.env"})) + &read_back()
}

fn read_back() -> String {
    line("read_file", json!({ "path": FILE }))
}

fn list(changes: &[&str]) -> String {
    json!({ "changes": changes }).to_string() + "\n"
}

fn two_changes() -> String {
    list(&[
        "REDIS_URL: host cache-staging becomes cache-staging-2",
        "add LOG_FORMAT=json as a new last line",
    ])
}

fn edit(old: &str, new: &str) -> String {
    line(
        "edit_file",
        json!({"path": FILE, "old_text": old, "new_text": new}),
    )
}

fn first_edit() -> String {
    edit(
        "REDIS_URL=redis://cache-staging:6379/0",
        "REDIS_URL=redis://cache-staging-2:6379/0",
    )
}

fn second_edit() -> String {
    edit(
        "FEATURE_NEW_CHECKOUT=false\n",
        "FEATURE_NEW_CHECKOUT=false\nLOG_FORMAT=json\n",
    )
}

fn run_with(script: &str, levers: Levers, attempts: u32, max_turns: Option<u32>) -> Ran {
    let h = support::Harness::desk_suite("edit-env-rotate");
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = levers;
        o.limits.attempts = attempts;
        if let Some(turns) = max_turns {
            o.limits.max_turns = turns;
        }
    })
}

fn run(script: &str, change_list: bool, attempts: u32) -> Ran {
    let levers = Levers {
        change_list,
        ..Levers::DEFAULT
    };
    run_with(script, levers, attempts, None)
}

/// The user message of request `i` that holds `label`.
fn message_with(r: &Ran, i: usize, label: &str) -> String {
    user_messages(&r.model.requests[i])
        .into_iter()
        .rfind(|m| m.contains(label))
        .unwrap_or_else(|| panic!("request {i} has no message with {label:?}"))
}

#[test]
fn a_finish_after_the_first_of_two_listed_changes_is_held_and_names_the_second() {
    // The 1.5B's bench run (`le4-off/`): the first change right, then finish.
    let script = reads_first()
        + &two_changes()
        + &first_edit()
        + &read_back()
        + &finish_line()
        + &second_edit()
        + &read_back()
        + &finish_line();
    let r = run(&script, true, 1);
    assert!(r.out.passed(), "{}", r.out.reason());
    // The list was asked once the file was read whole, before any edit.
    let asked = r.model.prompt(2);
    assert!(
        asked.contains("Before you edit config/staging.env: list every change the task asks for"),
        "{asked}"
    );
    let events = journal_events(&r.h.journal, r.out.run, "change_list");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["step"], json!(3));
    assert_eq!(events[0]["proposed"], json!(2));
    // The next request shows the list back and says to start with change 1.
    let ack = message_with(&r, 3, "Your list of the changes to config/staging.env");
    assert!(
        ack.contains("2. \"add LOG_FORMAT=json as a new last line\""),
        "{ack}"
    );
    // After the first edit, the progress note names the second change, not a finish.
    let after_edit = message_with(&r, 4, "Progress:");
    assert!(
        after_edit.contains(
            "Suggested next step: make change 2 of 2 on your list with edit_file: \"add LOG_FORMAT=json as a new last line\""
        ),
        "{after_edit}"
    );
    let refusals = finish_refusals(&r.events);
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    let hold = &refusals[0];
    assert!(
        hold.starts_with(
            "finish held once: you listed 2 changes to config/staging.env, and it differs from the file as the run found it in 1 place(s)"
        ),
        "{hold}"
    );
    assert!(
        hold.contains("2. \"add LOG_FORMAT=json as a new last line\""),
        "{hold}"
    );
    // Nothing of the expected file: the hold quotes the model's own list only.
    assert!(!hold.contains("LOG_FORMAT=json\n"), "{hold}");
    assert_eq!(
        journal_events(&r.h.journal, r.out.run, "change_list_hold"),
        vec![json!({"step": 6, "attempt": 1})]
    );
}

#[test]
fn a_finish_on_the_file_as_held_is_judged_and_a_wrong_file_still_fails() {
    let script = reads_first()
        + &two_changes()
        + &first_edit()
        + &read_back()
        + &finish_line()
        + &finish_line();
    let r = run(&script, true, 1);
    assert!(!r.out.passed());
    assert!(r.out.reason().contains("whole-file"), "{}", r.out.reason());
    assert_eq!(finish_refusals(&r.events).len(), 1);
    assert!(r.out.finish_accepted);
}

#[test]
fn with_every_listed_change_made_the_first_finish_is_judged() {
    let script = reads_first()
        + &two_changes()
        + &first_edit()
        + &second_edit()
        + &read_back()
        + &finish_line();
    let r = run(&script, true, 1);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert!(finish_refusals(&r.events).is_empty());
    // With nothing left on the list the note is the usual one.
    let last = message_with(&r, 6, "Progress:");
    assert!(
        last.contains("Suggested next step: call finish if it is complete"),
        "{last}"
    );
}

#[test]
fn a_list_of_one_change_never_holds_a_finish_that_two_changes_needed() {
    // A list is the model's reading of the task, not a check: one listed change, one made,
    // finish judged, and the judge still fails the file.
    let script = reads_first()
        + &list(&["REDIS_URL: host cache-staging-2"])
        + &first_edit()
        + &read_back()
        + &finish_line();
    let r = run(&script, true, 1);
    assert!(!r.out.passed());
    assert!(finish_refusals(&r.events).is_empty());
}

#[test]
fn with_the_lever_off_no_list_is_asked_and_the_first_finish_is_judged() {
    let script = reads_first() + &first_edit() + &read_back() + &finish_line();
    let r = run(&script, false, 1);
    assert!(!r.out.passed());
    assert!(finish_refusals(&r.events).is_empty());
    assert!(journal_events(&r.h.journal, r.out.run, "change_list").is_empty());
    assert_eq!(r.model.requests.len(), 5);
}

#[test]
fn an_unreadable_list_leaves_the_run_as_it_was() {
    let script = reads_first()
        + &(json!("I will change the Redis host and add the log format.").to_string() + "\n")
        + &first_edit()
        + &read_back()
        + &finish_line();
    let r = run(&script, true, 1);
    assert!(!r.out.passed());
    assert!(finish_refusals(&r.events).is_empty());
    let events = journal_events(&r.h.journal, r.out.run, "change_list");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["changes"], json!([]));
    // Nothing of the failed list reaches the model's next prompt.
    assert!(!r.model.prompt(3).contains("Before you edit"));
}

#[test]
fn the_list_is_asked_once_a_run_and_each_attempt_holds_once() {
    let script = reads_first()
        + &two_changes()
        + &first_edit()
        + &read_back()
        + &finish_line()
        + &finish_line()
        // attempt 2: no new list; the count goes on and the finish is held again
        + &line("read_file", json!({"path": FILE, "start_line": 1}))
        + &finish_line()
        + &second_edit()
        + &read_back()
        + &finish_line();
    let r = run(&script, true, 2);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert_eq!(
        journal_events(&r.h.journal, r.out.run, "change_list").len(),
        1
    );
    let holds = journal_events(&r.h.journal, r.out.run, "change_list_hold");
    assert_eq!(holds.len(), 2, "{holds:?}");
    assert_eq!(holds[1]["attempt"], json!(2));
}

#[test]
fn a_write_before_the_file_was_read_whole_asks_for_no_list() {
    // Edited before it was read: the list is asked only of what the model has seen.
    let script = line("read_file", json!({"path": "config/production.env"}))
        + &first_edit()
        + &read_back()
        + &finish_line();
    let r = run(&script, true, 1);
    assert!(journal_events(&r.h.journal, r.out.run, "change_list").is_empty());
    assert!(!r.out.passed());
}

#[test]
fn no_list_is_asked_when_no_turn_would_be_left_for_an_edit() {
    // Two reads use turns 1 and 2 of 3: a list at turn 3 would leave no turn to edit.
    let script = reads_first() + &first_edit() + &finish_line();
    let levers = Levers {
        change_list: true,
        ..Levers::DEFAULT
    };
    let r = run_with(&script, levers, 1, Some(3));
    assert!(journal_events(&r.h.journal, r.out.run, "change_list").is_empty());
}

#[test]
fn a_list_past_the_cap_keeps_the_first_items_and_says_so() {
    let many: Vec<String> = (1..=CHANGE_LIST_MAX_ITEMS + 2)
        .map(|i| format!("change {i}"))
        .collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    let script = reads_first()
        + &list(&refs)
        + &first_edit()
        + &second_edit()
        + &read_back()
        + &finish_line()
        + &finish_line();
    let r = run(&script, true, 1);
    assert!(r.out.passed(), "{}", r.out.reason());
    let ack = message_with(&r, 3, "Your list of the changes");
    assert!(
        ack.contains(&format!(
            "(you listed {}; only the first {CHANGE_LIST_MAX_ITEMS} are kept)",
            CHANGE_LIST_MAX_ITEMS + 2
        )),
        "{ack}"
    );
    let events = journal_events(&r.h.journal, r.out.run, "change_list");
    assert_eq!(events[0]["proposed"], json!(CHANGE_LIST_MAX_ITEMS + 2));
    assert_eq!(
        events[0]["changes"].as_array().unwrap().len(),
        CHANGE_LIST_MAX_ITEMS
    );
}

#[test]
fn a_deliverable_the_run_creates_asks_for_no_list() {
    let script = reads() + &write_summary(&gold_text()) + &read_summary() + &finish_line();
    let r = Ran::desk_task(&script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = Levers {
            change_list: true,
            ..Levers::DEFAULT
        };
        o.limits.attempts = 1;
    });
    assert!(r.out.passed(), "{}", r.out.reason());
    assert!(journal_events(&r.h.journal, r.out.run, "change_list").is_empty());
}

#[test]
fn the_list_is_held_to_its_schema_under_constrained_decoding() {
    let script = reads_first()
        + &two_changes()
        + &first_edit()
        + &second_edit()
        + &read_back()
        + &finish_line();
    let levers = Levers {
        change_list: true,
        ..Levers::DEFAULT
    };
    let h = support::Harness::desk_suite("edit-env-rotate");
    let (requests, _) = support::constrained_run(&h, &script, levers);
    let schema = requests[2].json_schema.as_ref().expect("a schema");
    assert_eq!(
        schema["properties"]["changes"]["maxItems"],
        json!(CHANGE_LIST_MAX_ITEMS)
    );
    assert_eq!(schema["required"], json!(["changes"]));
}
