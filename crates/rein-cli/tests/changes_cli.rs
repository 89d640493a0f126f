#![allow(clippy::unwrap_used, clippy::expect_used)]

//! `rein changes` and `rein undo` end to end, and recovery when a command starts.

mod support;

use std::path::Path;

use serde_json::Value;
use support::env;
#[test]
fn changes_and_undo_from_the_command_line() {
    let e = env();
    let ws = e.ws.to_str().unwrap();
    let (_, shown) = e.tool(
        "replace_file",
        r#"{"path": "notes.txt", "content": "new\n"}"#,
        &["--id", "r1"],
    );
    let sha = shown["result"]["before_sha256"].as_str().unwrap();
    let (_, r) = e.tool(
        "replace_file",
        r#"{"path": "notes.txt", "content": "new\n"}"#,
        &["--id", "r1", "--approve", "--expect-before", sha],
    );
    let change = r["result"]["change_id"].as_i64().unwrap().to_string();
    let (_, _) = e.tool(
        "create_file",
        r#"{"path": "made.txt", "content": "m"}"#,
        &["--approve"],
    );

    let out = e.rein(&["changes", "--workspace", ws, "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let changes = listed["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 2, "{listed}");
    assert_eq!(changes[0]["kind"], "edited");
    assert_eq!(changes[0]["state"], "committed");
    assert_eq!(changes[1]["kind"], "created");
    assert_eq!(changes[1]["path"], "made.txt");
    assert!(changes[0]["time"].as_str().unwrap().ends_with('Z'));

    let text = e.rein(&["changes", "--workspace", ws]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("made.txt") && text.contains("created"),
        "{text}"
    );

    // Undo (the workspace comes from the journal), then the list shows it.
    let out = e.rein(&["undo", &change, "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let undone: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(undone["undone"].to_string(), change);
    assert_eq!(e.read("notes.txt").unwrap(), "alpha\nbeta\n");
    let listed: Value =
        serde_json::from_slice(&e.rein(&["changes", "--workspace", ws, "--json"]).stdout).unwrap();
    let changes = listed["changes"].as_array().unwrap();
    assert_eq!(changes[0]["state"], "undone");
    assert_eq!(changes[2]["undo_of"].to_string(), change);

    // Undo refused after an outside edit: exit 2, one line naming both hashes.
    let made = changes[1]["id"].to_string();
    std::fs::write(e.ws.join("made.txt"), "edited by a person").unwrap();
    let out = e.rein(&["undo", &made, "--workspace", ws]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("changed since change") && stderr.contains("expected sha256"),
        "{stderr}"
    );
    assert_eq!(e.read("made.txt").unwrap(), "edited by a person");

    // Bad input.
    let out = e.rein(&["undo", "abc"]);
    assert_eq!(out.status.code(), Some(2));
    let out = e.rein(&["undo", "999"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rein changes"));
}

#[test]
fn recovery_runs_on_start_and_reports_conflicts() {
    let e = env();
    let journal_path: &Path = &e.home.join("journal.db");
    // An interrupted change whose file was then edited by someone else.
    {
        let journal = rein_journal::Journal::open(journal_path).unwrap();
        let root = std::fs::canonicalize(&e.ws).unwrap().display().to_string();
        let before = journal.put_artifact(b"alpha\nbeta\n").unwrap();
        let after = journal.put_artifact(b"new").unwrap();
        journal
            .record_intent(&rein_journal::ChangeIntent {
                scope: rein_journal::CallScope::Workspace(root.clone()),
                call_id: "interrupted".into(),
                workspace: root,
                path: "notes.txt".into(),
                before_sha: Some(before),
                after_sha: Some(after),
                undo_of: None,
                fingerprint: None,
                temp_path: None,
                before_mode: None,
            })
            .unwrap();
    }
    std::fs::write(e.ws.join("notes.txt"), "third\n").unwrap();
    let ws = e.ws.to_str().unwrap();
    let out = e.rein(&["changes", "--workspace", ws, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("notes.txt") && stderr.contains("left as it is"),
        "{stderr}"
    );
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["changes"][0]["state"], "conflict");
    assert_eq!(e.read("notes.txt").unwrap(), "third\n");
}
