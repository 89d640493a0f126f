#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `whole-rewrite` lever on the desk suite's edit tasks: a small file edited in place is
//! written whole with `replace_file` (every change in one call), `edit_file` not offered. The
//! judge is as it was: a whole file with one line too many changed still fails, and a file over
//! the size, a deliverable the run creates, or the lever off keeps `edit_file`.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::json;
use support::{allowed_tools, finish_line, line, Harness, Ran};

const FILE: &str = "data/members.csv";
const TASK: &str = "edit-csv-emails";

fn gold() -> String {
    std::fs::read_to_string(
        support::missions_dir()
            .join("../suites/desk")
            .join(TASK)
            .join("judge/gold/files")
            .join(FILE),
    )
    .unwrap()
}

fn read_file() -> String {
    line("read_file", json!({ "path": FILE }))
}

fn rewrite(content: &str) -> String {
    line("read_file", json!({"path": "data/README.txt"}))
        + &read_file()
        + &line("replace_file", json!({"path": FILE, "content": content}))
        + &read_file()
        + &finish_line()
}

/// `h`'s mission, constrained, on `script` with `whole-rewrite` as `on` and `attempts`.
fn run(h: Harness, script: &str, on: bool, attempts: u32) -> Ran {
    let levers = Levers {
        whole_rewrite: on,
        monotone_attempts: true,
        ..Levers::DEFAULT
    };
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = attempts;
    })
}

fn offered(r: &Ran, request: usize) -> Vec<String> {
    allowed_tools(&r.model.requests[request])
}

fn on_disk(r: &Ran) -> String {
    std::fs::read_to_string(r.h.workspace.join(FILE)).unwrap()
}

#[test]
fn a_small_file_edited_in_place_is_written_whole_and_the_run_passes() {
    let r = run(Harness::desk_suite(TASK), &rewrite(&gold()), true, 1);
    assert!(r.out.passed(), "{}", r.out.reason());
    for i in 0..r.model.requests.len() {
        let tools = offered(&r, i);
        assert!(tools.contains(&"replace_file".to_string()), "{tools:?}");
        assert!(!tools.contains(&"edit_file".to_string()), "{tools:?}");
    }
    // The note after the first read suggests the whole file.
    let after_read = r.model.prompt(2);
    assert!(
        after_read
            .contains("with replace_file: its whole new text, every change the task asks for"),
        "{after_read}"
    );
    // The journal records what the run offered.
    let levers = support::journal_events(&r.h.journal, r.out.run, "levers");
    assert_eq!(levers[0]["levers"]["whole-rewrite"], true, "{levers:?}");
    let tools = levers[0]["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("replace_file")), "{tools:?}");
    assert!(!tools.contains(&json!("edit_file")), "{tools:?}");
}

#[test]
fn an_edit_file_call_is_refused_as_not_offered_and_nothing_changes() {
    let script = read_file()
        + &line(
            "edit_file",
            json!({"path": FILE, "old_text": "Ada.Brandt@Example.org ", "new_text": "ada.brandt@example.org"}),
        )
        + &finish_line();
    let r = run(Harness::desk_suite(TASK), &script, true, 1);
    assert!(!r.out.passed());
    assert_eq!(r.out.figures.unknown_tools, 1);
    let fixture = std::fs::read_to_string(
        r.h.mission_file
            .parent()
            .unwrap()
            .join("fixtures")
            .join(FILE),
    )
    .unwrap();
    assert_eq!(on_disk(&r), fixture);
}

#[test]
fn the_judge_is_as_it_was_one_line_too_many_changed_fails() {
    // Every e-mail right, and a name changed too.
    let wrong = gold().replace("Ada Brandt", "Ada Brant");
    let r = run(Harness::desk_suite(TASK), &rewrite(&wrong), true, 1);
    assert!(!r.out.passed());
    assert!(r.out.reason().contains("whole-file"), "{}", r.out.reason());
}

#[test]
fn without_the_lever_edit_file_is_offered_and_suggested() {
    let r = run(Harness::desk_suite(TASK), &rewrite(&gold()), false, 1);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert!(offered(&r, 0).contains(&"edit_file".to_string()));
    let after_reads = r.model.prompt(2);
    assert!(
        after_reads.contains(&format!("edit {FILE} in place with edit_file.")),
        "{after_reads}"
    );
}

#[test]
fn a_file_over_the_size_keeps_edit_file() {
    let h = Harness::desk_suite_with(TASK, |dir| {
        let p = dir.join(FILE);
        let mut text = std::fs::read_to_string(&p).unwrap();
        for i in 8..20 {
            text.push_str(&format!(
                "M-{i:03},Member {i},member{i}@example.org,2024-02-01\n"
            ));
        }
        assert!(text.len() > 600);
        std::fs::write(p, text).unwrap();
    });
    let r = run(h, &finish_line(), true, 1);
    assert!(offered(&r, 0).contains(&"edit_file".to_string()));
}

#[test]
fn a_deliverable_the_run_creates_keeps_edit_file() {
    let r = run(
        Harness::desk_suite("report-timesheets"),
        &finish_line(),
        true,
        1,
    );
    let tools = offered(&r, 0);
    assert!(tools.contains(&"edit_file".to_string()), "{tools:?}");
}

#[test]
fn a_retry_asks_for_the_whole_file_again_not_an_edit() {
    let wrong = gold().replace("mia.sato@example.org", "MIA.SATO@EXAMPLE.ORG");
    let script = rewrite(&wrong) + &rewrite(&gold());
    let r = run(Harness::desk_suite(TASK), &script, true, 2);
    assert!(r.out.passed(), "{}", r.out.reason());
    let retry = r
        .model
        .prompts()
        .into_iter()
        .find(|p| p.contains("The deliverable data/members.csv now reads"))
        .expect("a retry prompt");
    assert!(
        retry.contains("Write the file again with replace_file"),
        "{retry}"
    );
    assert!(!retry.contains("edit_file with old_text"), "{retry}");
    // The file as the JSON string replace_file takes, with no frame lines to copy into it.
    let messages = support::user_messages(
        &r.model.requests[r
            .model
            .prompts()
            .iter()
            .position(|p| p.contains("The deliverable data/members.csv now reads"))
            .unwrap()],
    );
    let feedback = messages
        .iter()
        .find(|m| m.contains("The deliverable data/members.csv now reads"))
        .unwrap();
    let as_json = serde_json::Value::String(wrong.clone()).to_string();
    assert!(feedback.contains(&as_json), "{feedback}");
    assert!(
        !feedback.contains("<<<") && !feedback.contains(">>>"),
        "{feedback}"
    );
    assert_eq!(on_disk(&r), gold());
}
