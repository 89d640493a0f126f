#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `file-notes` lever on the desk suite: after a step that showed files whole, the model is
//! asked what each gives for the task, and every later step's message lists its notes. The
//! notes are the model's own words: they never reach the judge, and a run without the lever
//! sees none of it.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::json;
use support::{finish_line, journal_events, line, user_messages, Ran};

const CALLERS: &str = "out/callers.md";
const GOLD: &str = "# Callers\n\nDefined in: src/invoice/parse.js\n\n- src/api/upload.js\n- src/jobs/import-mail.js\n- src/cli/reparse.js\n- test/parse.test.js\n\nCallers: 4\n";
const FILES: [&str; 6] = [
    "src/invoice/parse.js",
    "src/api/upload.js",
    "src/jobs/import-mail.js",
    "src/cli/reparse.js",
    "test/parse.test.js",
    "src/api/search.js",
];

fn read(path: &str) -> String {
    line("read_file", json!({ "path": path }))
}

fn note(path: &str, needed: bool, text: &str) -> String {
    json!({"notes": [{"path": path, "note": text, "needed": needed}]}).to_string() + "\n"
}

fn levers(file_notes: bool, glob_reads: bool) -> Levers {
    Levers {
        file_notes,
        glob_reads,
        ..Levers::DEFAULT
    }
}

fn run_task(
    task: &str,
    script: &str,
    levers: Levers,
    tweak: impl FnOnce(&mut rein_engine::agent::AgentOptions),
) -> Ran {
    let h = support::Harness::desk_suite(task);
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = levers;
        o.limits.attempts = 1;
        tweak(o);
    })
}

/// Every read of `FILES`, each followed by its note when `notes` is set; then the answer.
fn callers_script(notes: bool, answer: &str) -> String {
    let mut s = String::new();
    for (i, path) in FILES.iter().enumerate() {
        s += &read(path);
        if notes {
            s += &note(path, i < 5, &format!("note {i} on {path}"));
        }
    }
    s += &line("create_file", json!({"path": CALLERS, "content": answer}));
    s += &read(CALLERS);
    s + &finish_line()
}

fn last_user(r: &Ran, request: usize) -> String {
    user_messages(&r.model.requests[request])
        .last()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn each_file_read_whole_is_noted_and_later_steps_list_the_notes() {
    let r = run_task(
        "related-code-callers",
        &callers_script(true, GOLD),
        levers(true, false),
        |_| {},
    );
    assert!(r.out.passed(), "{}", r.out.reason());
    // Requests alternate: action, note, action, note, ... for the six reads.
    for (i, path) in FILES.iter().enumerate() {
        let asking = last_user(&r, 2 * i + 1);
        assert!(
            asking.contains(&format!("Result of step {} (read_file)", i + 1))
                && asking.contains(&format!(
                    "note what the file \"{path}\" just shown gives for the task"
                )),
            "{asking}"
        );
    }
    // The action after the last note lists all six notes, in the model's own words.
    let after = last_user(&r, 12);
    assert!(
        after.contains("Your notes on the files you have read (5 of 6 marked needed"),
        "{after}"
    );
    for (i, path) in FILES.iter().enumerate() {
        let mark = if i < 5 { "needed" } else { "not needed" };
        assert!(
            after.contains(&format!("\n- {path} ({mark}): \"note {i} on {path}\"")),
            "{after}"
        );
    }
    // The deliverable's read back is no file to note: the next request is the finish.
    assert_eq!(r.model.requests.len(), 15);
    let events = journal_events(&r.h.journal, r.out.run, "file_notes");
    assert_eq!(events.len(), 6, "{events:?}");
    assert_eq!(events[5]["notes"][0]["path"], "src/api/search.js");
    assert_eq!(events[5]["notes"][0]["needed"], false);
}

#[test]
fn with_the_lever_off_no_note_is_asked_and_the_verdict_is_the_same() {
    let on = run_task(
        "related-code-callers",
        &callers_script(true, GOLD),
        levers(true, false),
        |_| {},
    );
    let off = run_task(
        "related-code-callers",
        &callers_script(false, GOLD),
        levers(false, false),
        |_| {},
    );
    assert!(off.out.passed(), "{}", off.out.reason());
    assert_eq!(off.model.requests.len(), 9);
    for p in off.model.prompts() {
        assert!(
            !p.contains("Your notes on the files") && !p.contains("note what"),
            "{p}"
        );
    }
    // A wrong answer fails the same checks either way: the notes are not the judge's.
    let wrong = GOLD
        .replace("- test/parse.test.js\n", "")
        .replace("Callers: 4", "Callers: 3");
    let on_wrong = run_task(
        "related-code-callers",
        &callers_script(true, &wrong),
        levers(true, false),
        |_| {},
    );
    let off_wrong = run_task(
        "related-code-callers",
        &callers_script(false, &wrong),
        levers(false, false),
        |_| {},
    );
    assert!(!on_wrong.out.passed());
    assert_eq!(
        support::failed(&on_wrong.out),
        support::failed(&off_wrong.out)
    );
    assert_eq!(on.out.passed(), off.out.passed());
}

#[test]
fn note_steps_cost_no_turn() {
    // Fifteen requests, nine of them actions: a turn cap of nine is enough.
    let r = run_task(
        "related-code-callers",
        &callers_script(true, GOLD),
        levers(true, false),
        |o| o.limits.max_turns = 9,
    );
    assert!(r.out.passed(), "{}", r.out.reason());
}

#[test]
fn a_reply_without_a_note_keeps_none_and_a_file_noted_is_not_asked_about_again() {
    let script = read("src/api/upload.js")
        + "{\"thought\": \"I think it calls parseInvoice.\"}\n"
        + &read("src/api/upload.js")
        + &note("src/invoice/parse.js", true, "not the file asked about")
        + &read("src/invoice/parse.js")
        + &note("src/invoice/parse.js", false, "defines parseInvoice")
        + &read("src/invoice/parse.js")
        + &line("create_file", json!({"path": CALLERS, "content": GOLD}))
        + &read(CALLERS)
        + &finish_line();
    let r = run_task("related-code-callers", &script, levers(true, false), |_| {});
    // Judged (it fails inputs-read: the answer rests on two files).
    assert!(r.out.reason().contains("inputs-read"), "{}", r.out.reason());
    // The unreadable reply kept no note, so the second read of upload.js asked again; the
    // reply naming another file than the one asked about kept nothing either; parse.js, once
    // noted, is not asked about again.
    let events = journal_events(&r.h.journal, r.out.run, "file_notes");
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events[0]["notes"], json!([]));
    assert_eq!(events[1]["asked"], json!(["src/api/upload.js"]));
    assert_eq!(events[1]["notes"], json!([]));
    assert_eq!(events[2]["notes"][0]["note"], "defines parseInvoice");
    assert_eq!(r.model.requests.len(), 10);
    // The list is shown once a prompt: in the message of the step that changed it.
    let last = r.model.prompt(9);
    assert_eq!(last.matches("(0 of 1 marked needed").count(), 1, "{last}");
    assert!(
        last.contains("- src/invoice/parse.js (not needed): ")
            && last.contains("defines parseInvoice"),
        "{last}"
    );
}

#[test]
fn a_file_edited_in_place_is_not_noted() {
    let script = read("config/staging.env")
        + &line(
            "edit_file",
            json!({"path": "config/staging.env", "old_text": "cache-staging:", "new_text": "cache-staging-2:"}),
        )
        + &finish_line();
    let r = run_task("edit-env-rotate", &script, levers(true, false), |_| {});
    for p in r.model.prompts() {
        assert!(
            !p.contains("note what") && !p.contains("Your notes on"),
            "{p}"
        );
    }
    assert!(journal_events(&r.h.journal, r.out.run, "file_notes").is_empty());
}

#[test]
fn a_glob_read_asks_about_each_file_in_one_request() {
    let paths = ["src/api/search.js", "src/api/upload.js"];
    let notes = json!({"notes": [
        {"path": paths[0], "note": "defines search, no call", "needed": false},
        {"path": paths[1], "note": "calls parseInvoice(body)", "needed": true}
    ]});
    let script = read("src/api/*.js")
        + &(notes.to_string() + "\n")
        + &line("create_file", json!({"path": CALLERS, "content": GOLD}))
        + &finish_line();
    let r = run_task("related-code-callers", &script, levers(true, true), |o| {
        o.constrained = false;
    });
    let asking = last_user(&r, 1);
    assert!(
        asking.contains("each of the 2 files \"src/api/search.js\", \"src/api/upload.js\""),
        "{asking}"
    );
    let after = last_user(&r, 2);
    assert!(
        after.contains("(1 of 2 marked needed")
            && after.contains("- src/api/upload.js (needed): \"calls parseInvoice(body)\""),
        "{after}"
    );
}

#[test]
fn a_constrained_request_holds_the_reply_to_the_files_asked_about() {
    let script = read("src/api/upload.js")
        + &note("src/api/upload.js", true, "calls parseInvoice")
        + &line("create_file", json!({"path": CALLERS, "content": GOLD}))
        + &read(CALLERS)
        + &finish_line();
    let r = run_task("related-code-callers", &script, levers(true, false), |o| {
        o.constrained = true;
    });
    let schema = r.model.requests[1].json_schema.as_ref().expect("a schema");
    let items = &schema["properties"]["notes"];
    assert_eq!(items["minItems"], 1);
    assert_eq!(
        items["items"]["properties"]["path"]["enum"],
        json!(["src/api/upload.js"])
    );
    // The note request shares the next action request's prefix: the transcript, the call and
    // the result as shown.
    let note_prompt = &r.model.requests[1].prompt;
    let next_prompt = &r.model.requests[2].prompt;
    let (a, b) = (format!("{note_prompt:?}"), format!("{next_prompt:?}"));
    let shared = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let result_at = a.find("Result of step 1 (read_file)").unwrap();
    assert!(shared > result_at + 200, "shared {shared} of {}", a.len());
}
