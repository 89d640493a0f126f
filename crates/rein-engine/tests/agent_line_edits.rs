#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `line-edits` lever on the desk suite's edit tasks: a deliverable edited in place is
//! changed with `edit_lines` (every change in one call, each naming a current line), and
//! `edit_file` and `replace_file` are not offered. The judge is as it was: a line changed that
//! the task keeps still fails, and a deliverable the run creates or the lever off keeps the
//! usual tools.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::{AllowAll, DenyAll};
use rein_engine::policy::Policy;
use serde_json::{json, Value};
use support::{allowed_tools, finish_line, line, step_outcomes, Harness, Ran};

const FILE: &str = "config/crontab.txt";
const TASK: &str = "edit-crontab";
const REINDEX: &str = "0 3 * * 1    /opt/shop/bin/reindex-search.sh";
const SYNC: &str = "*/10 * * * * /opt/shop/bin/sync-prices.sh";

fn suite_file(part: &str) -> String {
    std::fs::read_to_string(
        support::missions_dir()
            .join("../suites/desk")
            .join(TASK)
            .join(part)
            .join(FILE),
    )
    .unwrap()
}

fn gold() -> String {
    suite_file("judge/gold/files")
}

fn fixture() -> String {
    suite_file("fixtures")
}

fn read_file() -> String {
    line("read_file", json!({ "path": FILE }))
}

fn both_changes() -> Value {
    json!([
        {"line": REINDEX, "new_line": "0 4 * * 0    /opt/shop/bin/reindex-search.sh"},
        {"line": SYNC, "new_line": format!("# {SYNC}")},
    ])
}

fn edit(changes: Value) -> String {
    line("edit_lines", json!({"path": FILE, "changes": changes}))
}

/// Reads the inputs, makes `changes` in one call, reads the file back and finishes.
fn attempt(changes: Value) -> String {
    line("read_file", json!({"path": "config/jobs.md"}))
        + &read_file()
        + &edit(changes)
        + &read_file()
        + &finish_line()
}

fn run_with(h: Harness, script: &str, levers: Levers, attempts: u32) -> Ran {
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = attempts;
    })
}

fn run(h: Harness, script: &str, on: bool, attempts: u32) -> Ran {
    let levers = Levers {
        line_edits: on,
        monotone_attempts: true,
        ..Levers::DEFAULT
    };
    run_with(h, script, levers, attempts)
}

fn offered(r: &Ran, request: usize) -> Vec<String> {
    allowed_tools(&r.model.requests[request])
}

fn on_disk(r: &Ran) -> String {
    std::fs::read_to_string(r.h.workspace.join(FILE)).unwrap()
}

#[test]
fn every_change_in_one_call_keeps_every_other_line_and_the_run_passes() {
    let r = run(Harness::desk_suite(TASK), &attempt(both_changes()), true, 1);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert_eq!(on_disk(&r), gold());
    for i in 0..r.model.requests.len() {
        let tools = offered(&r, i);
        assert!(tools.contains(&"edit_lines".to_string()), "{tools:?}");
        assert!(!tools.contains(&"edit_file".to_string()), "{tools:?}");
        assert!(!tools.contains(&"replace_file".to_string()), "{tools:?}");
    }
    let after_reads = r.model.prompt(2);
    assert!(
        after_reads.contains(&format!(
            "edit {FILE} in place with edit_lines: every change"
        )),
        "{after_reads}"
    );
    let levers = support::journal_events(&r.h.journal, r.out.run, "levers");
    assert_eq!(levers[0]["levers"]["line-edits"], true, "{levers:?}");
    let tools = levers[0]["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("edit_lines")), "{tools:?}");
    assert!(!tools.contains(&json!("edit_file")), "{tools:?}");
    // The change went through the gate and the journal as any change does.
    let writes = step_outcomes(&r.h, &r.out, "edit_lines");
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert_eq!(writes[0].0, "executed", "{writes:?}");
    assert!(writes[0].1.contains("applied"), "{writes:?}");
}

#[test]
fn a_denied_change_writes_nothing() {
    let h = Harness::desk_suite(TASK);
    let levers = Levers {
        line_edits: true,
        ..Levers::DEFAULT
    };
    let r = Ran::of(
        h,
        &attempt(both_changes()),
        &mut DenyAll,
        Policy::safe_default(),
        |o| {
            o.levers = levers;
            o.constrained = true;
            o.limits.attempts = 1;
        },
    );
    assert!(!r.out.passed());
    assert_eq!(on_disk(&r), fixture());
}

#[test]
fn edit_file_and_replace_file_are_refused_as_not_offered() {
    let script = read_file()
        + &line(
            "edit_file",
            json!({"path": FILE, "old_text": SYNC, "new_text": format!("# {SYNC}")}),
        )
        + &line("replace_file", json!({"path": FILE, "content": gold()}))
        + &finish_line();
    let r = run(Harness::desk_suite(TASK), &script, true, 1);
    assert!(!r.out.passed());
    assert_eq!(r.out.figures.unknown_tools, 2);
    assert_eq!(on_disk(&r), fixture());
}

#[test]
fn the_judge_is_as_it_was_a_line_the_task_keeps_changed_fails() {
    let mut changes = both_changes();
    changes.as_array_mut().unwrap().push(json!({
        "line": "15 2 * * *   /opt/shop/bin/backup-db.sh",
        "new_line": "0 4 * * 0   /opt/shop/bin/backup-db.sh",
    }));
    let r = run(Harness::desk_suite(TASK), &attempt(changes), true, 1);
    assert!(!r.out.passed());
    assert!(r.out.reason().contains("whole-file"), "{}", r.out.reason());
}

#[test]
fn a_line_not_in_the_file_is_refused_with_the_closest_and_nothing_changes() {
    // The spacing of the schedule lost, as a model writes it.
    let script = read_file()
        + &edit(json!([{"line": "0 3 * * 1 /opt/shop/bin/reindex-search.sh", "new_line": "x"}]))
        + &finish_line();
    let r = run(Harness::desk_suite(TASK), &script, true, 1);
    assert!(!r.out.passed());
    assert_eq!(on_disk(&r), fixture());
    let refusal = r.model.prompt(2);
    assert!(refusal.contains("no line is"), "{refusal}");
    assert!(
        refusal.contains(&format!("line 5 `{REINDEX}`")),
        "{refusal}"
    );
}

#[test]
fn a_retry_asks_for_edit_lines_and_the_second_attempt_passes() {
    let first = json!([{"line": SYNC, "new_line": format!("# {SYNC}")}]);
    let second =
        json!([{"line": REINDEX, "new_line": "0 4 * * 0    /opt/shop/bin/reindex-search.sh"}]);
    let script = attempt(first) + &edit(second) + &read_file() + &finish_line();
    let r = run(Harness::desk_suite(TASK), &script, true, 2);
    assert!(r.out.passed(), "{}", r.out.reason());
    let retry = r
        .model
        .prompts()
        .into_iter()
        .find(|p| p.contains(&format!("The deliverable {FILE} now reads")))
        .expect("a retry prompt");
    assert!(
        retry.contains("Call edit_lines once with every change"),
        "{retry}"
    );
    assert!(!retry.contains("edit_file with old_text"), "{retry}");
    assert_eq!(on_disk(&r), gold());
}

#[test]
fn without_the_lever_edit_file_is_offered_and_edit_lines_is_not() {
    let r = run(
        Harness::desk_suite(TASK),
        &attempt(both_changes()),
        false,
        1,
    );
    assert!(
        !r.out.passed(),
        "edit_lines is not offered: {}",
        r.out.reason()
    );
    let tools = offered(&r, 0);
    assert!(tools.contains(&"edit_file".to_string()), "{tools:?}");
    assert!(!tools.contains(&"edit_lines".to_string()), "{tools:?}");
    assert_eq!(on_disk(&r), fixture());
}

#[test]
fn a_deliverable_the_run_creates_keeps_its_tools() {
    let r = run(
        Harness::desk_suite("report-timesheets"),
        &finish_line(),
        true,
        1,
    );
    let tools = offered(&r, 0);
    assert!(tools.contains(&"edit_file".to_string()), "{tools:?}");
    assert!(!tools.contains(&"edit_lines".to_string()), "{tools:?}");
}

#[test]
fn with_whole_rewrite_also_on_lines_are_edited() {
    let levers = Levers {
        line_edits: true,
        whole_rewrite: true,
        monotone_attempts: true,
        ..Levers::DEFAULT
    };
    let r = run_with(
        Harness::desk_suite(TASK),
        &attempt(both_changes()),
        levers,
        1,
    );
    assert!(r.out.passed(), "{}", r.out.reason());
    let tools = offered(&r, 0);
    assert!(tools.contains(&"edit_lines".to_string()), "{tools:?}");
    assert!(!tools.contains(&"replace_file".to_string()), "{tools:?}");
}
