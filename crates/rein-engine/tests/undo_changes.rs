#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Undo: after apply, refused after an outside edit, undo of an undo, creates and deletes.

use rein_engine::gate::{AllowAll, CallExecutor};
use rein_engine::undo::{undo, UndoError};
use rein_journal::{ChangeId, ChangeState};
use rein_protocol::{GateOutcome, ToolCall};
use rein_workspace::{desk_registry, Workspace};
use serde_json::{json, Value};

#[path = "desk_support/mod.rs"]
mod support;

use support::Env;

fn env() -> Env {
    support::env("one\ntwo\n")
}

fn run(e: &Env, id: &str, tool: &str, arguments: Value) -> ChangeId {
    let registry = desk_registry();
    let mut gate = e.gate(&registry);
    let r = gate.submit(
        &ToolCall {
            id: id.into(),
            tool: tool.into(),
            arguments,
        },
        &mut AllowAll,
    );
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    ChangeId(r.result["change_id"].as_i64().unwrap())
}

fn state(e: &Env, id: ChangeId) -> ChangeState {
    e.journal.change(id).unwrap().unwrap().state
}

#[test]
fn undo_restores_the_pre_image_and_can_itself_be_undone() {
    let e = env();
    let edit = run(
        &e,
        "e1",
        "edit_file",
        json!({"path": "a.txt", "old_text": "two", "new_text": "TWO"}),
    );
    assert_eq!(e.read("a.txt").unwrap(), "one\nTWO\n");

    let first = undo(&e.journal, &e.ws, edit).unwrap();
    assert_eq!(e.read("a.txt").unwrap(), "one\ntwo\n");
    assert_eq!(first.undo_of, edit);
    assert!(
        first.diff.contains("-TWO") && first.diff.contains("+two"),
        "{}",
        first.diff
    );
    assert_eq!(state(&e, edit), ChangeState::Undone);
    let undo_change = e.journal.change(first.change_id).unwrap().unwrap();
    assert_eq!(undo_change.undo_of, Some(edit));
    assert_eq!(undo_change.state, ChangeState::Committed);

    // Undoing the same change twice is refused and points at the undo.
    let err = undo(&e.journal, &e.ws, edit).unwrap_err();
    assert!(matches!(err, UndoError::AlreadyUndone { .. }), "{err}");
    assert!(
        err.to_string().contains(&first.change_id.to_string()),
        "{err}"
    );

    // Undo of the undo: the edit is back.
    let redo = undo(&e.journal, &e.ws, first.change_id).unwrap();
    assert_eq!(e.read("a.txt").unwrap(), "one\nTWO\n");
    assert_eq!(state(&e, first.change_id), ChangeState::Undone);
    // And once more.
    undo(&e.journal, &e.ws, redo.change_id).unwrap();
    assert_eq!(e.read("a.txt").unwrap(), "one\ntwo\n");
}

#[test]
fn undo_is_refused_after_an_outside_edit_and_says_what_changed() {
    let e = env();
    let edit = run(
        &e,
        "e1",
        "replace_file",
        json!({"path": "a.txt", "content": "model\n"}),
    );
    std::fs::write(e.root.join("a.txt"), "person\n").unwrap();
    let err = undo(&e.journal, &e.ws, edit).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, UndoError::Changed { .. }), "{text}");
    assert!(
        text.contains(&rein_journal::sha256_hex(b"model\n")),
        "{text}"
    );
    assert!(
        text.contains(&rein_journal::sha256_hex(b"person\n")),
        "{text}"
    );
    assert_eq!(e.read("a.txt").unwrap(), "person\n", "not overwritten");
    assert_eq!(state(&e, edit), ChangeState::Committed);
    // A file deleted by hand: found absent.
    std::fs::remove_file(e.root.join("a.txt")).unwrap();
    let text = undo(&e.journal, &e.ws, edit).unwrap_err().to_string();
    assert!(text.contains("found absent"), "{text}");
}

#[test]
fn undo_of_a_create_removes_the_file_and_undo_of_a_delete_recreates_it() {
    let e = env();
    let create = run(
        &e,
        "c1",
        "create_file",
        json!({"path": "sub/new.txt", "content": "hi\n"}),
    );
    let report = undo(&e.journal, &e.ws, create).unwrap();
    assert_eq!(report.kind.as_str(), "deleted");
    assert!(e.read("sub/new.txt").is_none());

    let delete = run(&e, "d1", "delete_file", json!({"path": "a.txt"}));
    assert!(e.read("a.txt").is_none());
    let report = undo(&e.journal, &e.ws, delete).unwrap();
    assert_eq!(report.kind.as_str(), "created");
    assert_eq!(e.read("a.txt").unwrap(), "one\ntwo\n");
    // The recreated file can be deleted again by undoing the undo.
    undo(&e.journal, &e.ws, report.change_id).unwrap();
    assert!(e.read("a.txt").is_none());
}

#[test]
fn undo_refuses_unknown_changes_and_other_workspaces() {
    let e = env();
    let err = undo(&e.journal, &e.ws, ChangeId(999)).unwrap_err();
    assert!(matches!(err, UndoError::NotFound(_)), "{err}");
    assert!(err.to_string().contains("rein changes"), "{err}");

    let edit = run(
        &e,
        "e1",
        "replace_file",
        json!({"path": "a.txt", "content": "x\n"}),
    );
    let other_root = e.dir.path().join("other");
    std::fs::create_dir(&other_root).unwrap();
    let other = Workspace::open(&other_root).unwrap();
    let err = undo(&e.journal, &other, edit).unwrap_err();
    assert!(matches!(err, UndoError::OtherWorkspace { .. }), "{err}");
    assert_eq!(e.read("a.txt").unwrap(), "x\n");
}

#[test]
fn an_undone_change_replays_rather_than_reapplying() {
    let e = env();
    let args = json!({"path": "a.txt", "content": "x\n"});
    let edit = run(&e, "e1", "replace_file", args.clone());
    undo(&e.journal, &e.ws, edit).unwrap();
    let registry = desk_registry();
    let mut gate = e.gate(&registry);
    let r = gate.submit(
        &ToolCall {
            id: "e1".into(),
            tool: "replace_file".into(),
            arguments: args,
        },
        &mut AllowAll,
    );
    assert_eq!(r.outcome, GateOutcome::Replayed);
    assert_eq!(e.read("a.txt").unwrap(), "one\ntwo\n", "the undo stands");
}

/// Issue 8 item 8c: undoing a delete gives the file back its permission bits, not the default.
#[test]
fn undo_of_a_delete_restores_the_file_mode() {
    use std::os::unix::fs::PermissionsExt;
    let e = env();
    let script = e.root.join("run.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
    let delete = run(&e, "d1", "delete_file", json!({"path": "run.sh"}));
    assert!(!script.exists());
    assert_eq!(
        e.journal.change(delete).unwrap().unwrap().before_mode,
        Some(0o750)
    );
    let report = undo(&e.journal, &e.ws, delete).unwrap();
    assert_eq!(report.kind.as_str(), "created");
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o750, "restored as {mode:o}");
    assert_eq!(e.read("run.sh").unwrap(), "#!/bin/sh\necho hi\n");
    // Redo (undo the undo) and undo again: still the same mode.
    let redo = undo(&e.journal, &e.ws, report.change_id).unwrap();
    assert!(!script.exists());
    undo(&e.journal, &e.ws, redo.change_id).unwrap();
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o750, "restored as {mode:o} the second time");
}

/// Issue 8 item 3: an undo's call id (listed by `rein changes`) is not a call: reusing it for a
/// tool call is an id conflict, never a replay of the undo.
#[test]
fn an_undo_call_id_never_replays_for_a_tool_call() {
    let e = env();
    let edit = run(
        &e,
        "e1",
        "replace_file",
        json!({"path": "a.txt", "content": "x\n"}),
    );
    let report = undo(&e.journal, &e.ws, edit).unwrap();
    let undo_call = e.journal.change(report.change_id).unwrap().unwrap().call_id;
    let registry = desk_registry();
    let r = e.gate(&registry).submit(
        &ToolCall {
            id: undo_call.clone(),
            tool: "create_file".into(),
            arguments: json!({"path": "b.txt", "content": "b\n"}),
        },
        &mut AllowAll,
    );
    assert_eq!(r.outcome, GateOutcome::IdConflict, "{r:?}");
    assert!(r.reason.contains("undo of change"), "{}", r.reason);
    assert!(e.read("b.txt").is_none());
    assert_eq!(e.read("a.txt").unwrap(), "one\ntwo\n");
}
