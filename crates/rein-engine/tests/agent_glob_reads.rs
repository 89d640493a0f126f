#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Lever `glob-reads`: a `read_file` call for a glob or a folder runs as `find_files`, and Rein
//! reads the files listed, each through the gate as a read of its own; the judge counts them
//! read (as Rein's, for the model's glob). Policy is asked before Rein looks at a file, caps
//! say so when they fire, and without the lever such a call is refused as before.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::{json, Value};
use support::{
    check_facts, copy_dir, finish_line, gold_text, line, missions_dir, read_summary, write_summary,
    Harness, Ran,
};

/// desk_task with the two notes read by `notes` (a `read_file` call's parameters), the table
/// read, then the gold report written, read back and finished.
fn script(notes: Value) -> String {
    line("read_file", notes)
        + &line("read_file", json!({"path": "data/tasks.csv"}))
        + &write_summary(&gold_text())
        + &read_summary()
        + &finish_line()
}

fn run(h: Harness, script: &str, glob_reads: bool, policy: Policy) -> Ran {
    Ran::of(h, script, &mut AllowAll, policy, |o| {
        o.levers.glob_reads = glob_reads;
        o.limits.attempts = 1;
    })
}

fn policy(toml: &str) -> Policy {
    Policy::from_toml_str(toml, "test policy", &rein_workspace::desk_registry()).unwrap()
}

#[test]
fn a_glob_lists_the_files_and_rein_reads_each_whole_only_with_the_lever() {
    let on = run(
        Harness::new("desk_task"),
        &script(json!({"path": "notes/*.md"})),
        true,
        Policy::safe_default(),
    );
    assert!(on.out.passed(), "{}", on.out.reason());
    let shown = on.shown_result(1, 1, "find_files");
    assert!(shown.contains("ran as find_files"), "{shown}");
    assert!(shown.contains("listed 2 files"), "{shown}");
    assert!(shown.contains("Rein read 2 of them"), "{shown}");
    assert!(
        shown.contains("Result of Rein's read of notes/meeting-notes.md"),
        "{shown}"
    );
    assert!(shown.contains("Next meeting: 26 May."), "{shown}");
    assert!(
        shown.contains("Result of Rein's read of notes/overview.md"),
        "{shown}"
    );
    let (passed, facts) = check_facts(&on.out, "inputs-read");
    assert!(passed, "{facts}");
    assert_eq!(facts.matches("lever glob-reads").count(), 2, "{facts}");
    // The model's call (which ran as find_files), then Rein's two reads.
    let outcomes = support::outcomes(&on.events);
    assert_eq!(outcomes[0], ("read_file".into(), "executed".into()));
    assert_eq!(outcomes[1], ("read_file".into(), "executed".into()));
    assert_eq!(outcomes[2], ("read_file".into(), "executed".into()));

    let off = run(
        Harness::new("desk_task"),
        &script(json!({"path": "notes/*.md"})),
        false,
        Policy::safe_default(),
    );
    let prompt = off.model.prompt(1);
    assert!(
        prompt.contains("is not allowed in workspace paths"),
        "{prompt}"
    );
    assert!(!prompt.contains("Next meeting: 26 May."), "{prompt}");
    let (passed, _) = check_facts(&off.out, "inputs-read");
    assert!(!passed);
}

#[test]
fn a_folder_reads_its_own_files_and_the_system_prompt_says_so() {
    let r = run(
        Harness::new("desk_task"),
        &script(json!({"path": "notes/"})),
        true,
        Policy::safe_default(),
    );
    assert!(r.out.passed(), "{}", r.out.reason());
    let shown = r.shown_result(1, 1, "find_files");
    assert!(shown.contains(r#""pattern":"notes/*""#), "{shown}");
    assert!(shown.contains("Rein read 2 of them"), "{shown}");
    assert!(r
        .model
        .prompt(0)
        .contains("read_file also takes a glob or a folder"));

    let off = run(
        Harness::new("desk_task"),
        &script(json!({"path": "notes/"})),
        false,
        Policy::safe_default(),
    );
    assert!(!off.model.prompt(0).contains("read_file also takes a glob"));
    assert!(off.model.prompt(1).contains("is a folder, not a file"));
}

#[test]
fn a_file_policy_asks_about_or_denies_is_named_not_read() {
    for action in ["ask", "deny"] {
        let p = policy(&format!(
            "[[rule]]\ntool = \"read_file\"\npaths = [\"notes/meeting-notes.md\"]\naction = \"{action}\"\n"
        ));
        let r = run(
            Harness::new("desk_task"),
            &script(json!({"path": "notes/*.md"})),
            true,
            p,
        );
        let shown = r.shown_result(1, 1, "find_files");
        assert!(
            shown.contains("notes/meeting-notes.md (policy asks before it is read, or keeps it)"),
            "{action}: {shown}"
        );
        assert!(
            !shown.contains("Next meeting: 26 May."),
            "{action}: {shown}"
        );
        assert!(shown.contains("Rein read 1 of them"), "{action}: {shown}");
        let (passed, facts) = check_facts(&r.out, "inputs-read");
        assert!(!passed, "{action}: {facts}");
        assert!(
            facts.contains("notes/meeting-notes.md: never read"),
            "{facts}"
        );
    }
}

#[test]
fn caps_on_files_and_characters_say_which_files_were_left() {
    let dir = tempfile::tempdir().unwrap();
    let mdir = dir.path().join("mission");
    copy_dir(&missions_dir().join("desk_task"), &mdir);
    let h = Harness::load(dir, mdir.join("mission.json"));
    // Files of the workspace that are no input of the mission.
    let extra = h.workspace.join("notes/extra");
    std::fs::create_dir_all(&extra).unwrap();
    for i in 0..30 {
        std::fs::write(extra.join(format!("n{i:02}.md")), format!("note {i}\n")).unwrap();
    }
    std::fs::write(extra.join("big.md"), "word ".repeat(2_000)).unwrap();
    std::fs::write(extra.join("bin.md"), b"a\0b").unwrap();
    let r = run(
        h,
        &script(json!({"path": "notes/extra"})),
        true,
        Policy::safe_default(),
    );
    let shown = r.shown_result(1, 1, "find_files");
    assert!(shown.contains("listed 32 files"), "{shown}");
    assert!(shown.contains("Rein read 24 of them"), "{shown}");
    assert!(
        shown.contains("notes/extra/big.md (too long to be read with the others)"),
        "{shown}"
    );
    assert!(
        shown.contains("notes/extra/bin.md (not a text file)"),
        "{shown}"
    );
    assert!(
        shown.contains("(over the cap on files read for one call)"),
        "{shown}"
    );
    assert!(shown.contains("Not read (8)"), "{shown}");
    assert!(!shown.contains("word word"), "{shown}");
}

#[test]
fn a_glob_that_matches_nothing_says_so_and_a_repeat_is_a_repeat() {
    let glob = json!({"path": "notes/*.txt"});
    let s = line("read_file", glob.clone()) + &line("read_file", glob) + &finish_line();
    let r = run(Harness::new("desk_task"), &s, true, Policy::safe_default());
    let shown = r.shown_result(1, 1, "find_files");
    assert!(
        shown.contains("matched no file; nothing was read"),
        "{shown}"
    );
    let second = r.shown_result(2, 2, "find_files");
    assert!(
        second.contains("You made exactly this call already at step 1"),
        "{second}"
    );
}

#[test]
fn the_progress_note_suggests_one_glob_for_unread_inputs_sharing_a_folder() {
    let s = line("read_file", json!({"path": "data/tasks.csv"}))
        + &line("read_file", json!({"path": "notes/*.md"}))
        + &write_summary(&gold_text())
        + &read_summary()
        + &finish_line();
    let on = run(Harness::new("desk_task"), &s, true, Policy::safe_default());
    assert!(on.out.passed(), "{}", on.out.reason());
    let note = support::last_progress_note(&on, 1);
    assert!(
        note.contains(
            // The prompt is Debug text: its quotes are escaped.
            r#"read notes/overview.md, notes/meeting-notes.md at once with read_file {\"path\":\"notes/*.md\"}"#
        ),
        "{note}"
    );
    let off = run(Harness::new("desk_task"), &s, false, Policy::safe_default());
    let note = support::last_progress_note(&off, 1);
    assert!(
        note.contains("read the whole of notes/overview.md with read_file"),
        "{note}"
    );
}
