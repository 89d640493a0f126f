#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The exactly-once apply protocol and recovery on start, with the intermediate states built
//! by hand (the crash test produces them with SIGKILL).

use std::path::PathBuf;

use rein_engine::apply::{apply, recover, ApplyError, ApplyRequest, ChangeKind};
use rein_engine::gate::{fingerprint, AllowAll, CallExecutor};
use rein_journal::{sha256_hex, ChangeIntent, ChangeState};
use rein_protocol::{GateOutcome, ToolCall};
use rein_workspace::{desk_registry, Proposal, RelPath};
use serde_json::json;

#[path = "desk_support/mod.rs"]
mod support;

use support::Env;

fn env() -> Env {
    support::env("old\n")
}

/// Applies `proposal` as call `call_id` in the workspace's own scope, as no tool call (an
/// undo does that).
fn apply_as(
    e: &Env,
    call_id: &str,
    proposal: &Proposal,
) -> Result<rein_engine::apply::Applied, ApplyError> {
    apply_with(e, call_id, None, proposal)
}

/// Applies `proposal` as the effect of `call`, as the gate does.
fn apply_for(
    e: &Env,
    call: &ToolCall,
    proposal: &Proposal,
) -> Result<rein_engine::apply::Applied, ApplyError> {
    let fp = fingerprint(&call.tool, &call.arguments);
    apply_with(e, &call.id, Some(&fp), proposal)
}

fn apply_with(
    e: &Env,
    call_id: &str,
    fingerprint: Option<&str>,
    proposal: &Proposal,
) -> Result<rein_engine::apply::Applied, ApplyError> {
    apply(
        &e.journal,
        &e.ws,
        ApplyRequest {
            scope: &e.scope(),
            call_id,
            proposal,
            undo_of: None,
            fingerprint,
            create_mode: None,
        },
    )
}

fn path(p: &str) -> RelPath {
    RelPath::parse(p).unwrap()
}

/// Records an intent for a.txt "old" -> "new" without touching the file, as the call
/// `replace_file {"path": "a.txt", "content": after}` (or `delete_file`) would.
fn intent(
    e: &Env,
    call_id: &str,
    before: Option<&str>,
    after: Option<&str>,
) -> rein_journal::ChangeId {
    intent_with_temp(e, call_id, before, after, None)
}

fn intent_with_temp(
    e: &Env,
    call_id: &str,
    before: Option<&str>,
    after: Option<&str>,
    temp_path: Option<String>,
) -> rein_journal::ChangeId {
    let before_sha = before.map(|b| e.journal.put_artifact(b.as_bytes()).unwrap());
    let after_sha = after.map(|a| e.journal.put_artifact(a.as_bytes()).unwrap());
    let fp = match after {
        Some(content) => fingerprint(
            "replace_file",
            &json!({"path": "a.txt", "content": content}),
        ),
        None => fingerprint("delete_file", &json!({"path": "a.txt"})),
    };
    e.journal
        .record_intent(&ChangeIntent {
            scope: e.scope(),
            call_id: call_id.into(),
            workspace: e.ws.display_root(),
            path: "a.txt".into(),
            before_sha,
            after_sha,
            undo_of: None,
            fingerprint: Some(fp),
            temp_path,
            before_mode: None,
        })
        .unwrap()
}

#[test]
fn apply_stores_both_images_and_commits() {
    let e = env();
    let proposal = Proposal::new(
        path("a.txt"),
        Some(b"old\n".to_vec()),
        Some(b"new\n".to_vec()),
    );
    let applied = apply_as(&e, "c1", &proposal).unwrap();
    assert_eq!(applied.kind, ChangeKind::Edited);
    assert_eq!(e.read("a.txt").unwrap(), "new\n");
    let change = e.journal.change(applied.change_id).unwrap().unwrap();
    assert_eq!(change.state, ChangeState::Committed);
    assert_eq!(
        e.journal
            .get_artifact(&sha256_hex(b"old\n"))
            .unwrap()
            .unwrap(),
        b"old\n"
    );
    assert_eq!(
        e.journal
            .get_artifact(&sha256_hex(b"new\n"))
            .unwrap()
            .unwrap(),
        b"new\n"
    );
    assert!(e.ws.stale_temps().unwrap().is_empty());
    // The same call id cannot apply a second time.
    let again = apply_as(&e, "c1", &proposal);
    assert!(again.is_err());
}

#[test]
fn a_stale_pre_image_is_refused_before_anything_is_recorded() {
    let e = env();
    std::fs::write(e.root.join("a.txt"), "edited by hand\n").unwrap();
    let proposal = Proposal::new(
        path("a.txt"),
        Some(b"old\n".to_vec()),
        Some(b"new\n".to_vec()),
    );
    let err = apply_as(&e, "c1", &proposal).unwrap_err();
    assert!(matches!(err, ApplyError::Stale { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&sha256_hex(b"old\n")) && text.contains(&sha256_hex(b"edited by hand\n")),
        "{text}"
    );
    assert!(text.contains("nothing was written"), "{text}");
    assert_eq!(e.read("a.txt").unwrap(), "edited by hand\n");
    assert!(e.journal.changes(&e.ws.display_root()).unwrap().is_empty());
    // A create whose file appeared meanwhile is stale too.
    let create = Proposal::new(path("a.txt"), None, Some(b"x".to_vec()));
    let err = apply_as(&e, "c2", &create).unwrap_err();
    assert!(err.to_string().contains("approved against absent"), "{err}");
}

#[test]
fn recovery_commits_an_intent_whose_file_has_the_new_content() {
    let e = env();
    let id = intent(&e, "c1", Some("old\n"), Some("new\n"));
    std::fs::write(e.root.join("a.txt"), "new\n").unwrap();
    let report = recover(&e.journal, &e.ws).unwrap();
    assert_eq!(report.committed, vec![id]);
    assert_eq!(
        e.journal.change(id).unwrap().unwrap().state,
        ChangeState::Committed
    );
    assert!(recover(&e.journal, &e.ws).unwrap().is_empty(), "idempotent");
}

#[test]
fn recovery_marks_an_untouched_intent_not_applied_and_the_call_can_run_again() {
    let e = env();
    let registry = desk_registry();
    let args = json!({"path": "a.txt", "content": "new\n"});
    let id = intent(&e, "c1", Some("old\n"), Some("new\n"));
    // Before recovery the call is refused: its change is unresolved.
    let call = ToolCall {
        id: "c1".into(),
        tool: "replace_file".into(),
        arguments: args,
    };
    {
        let mut gate = e.gate(&registry);
        let r = gate.submit(&call, &mut AllowAll);
        assert_eq!(r.outcome, GateOutcome::ApprovalRequired, "{r:?}");
        assert!(r.reason.contains("intent"), "{}", r.reason);
    }
    let report = recover(&e.journal, &e.ws).unwrap();
    assert_eq!(report.not_applied, vec![id]);
    assert_eq!(e.read("a.txt").unwrap(), "old\n");
    let mut gate = e.gate(&registry);
    let r = gate.submit(&call, &mut AllowAll);
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    assert_eq!(
        gate.submit(&call, &mut AllowAll).outcome,
        GateOutcome::Replayed
    );
}

#[test]
fn recovery_leaves_a_file_with_other_content_as_a_conflict() {
    let e = env();
    let id = intent(&e, "c1", Some("old\n"), Some("new\n"));
    std::fs::write(e.root.join("a.txt"), "a third thing\n").unwrap();
    let report = recover(&e.journal, &e.ws).unwrap();
    assert_eq!(report.conflicts.len(), 1);
    let lines = report.conflict_lines();
    assert!(
        lines[0].contains("a.txt") && lines[0].contains("left as it is"),
        "{lines:?}"
    );
    assert_eq!(e.read("a.txt").unwrap(), "a third thing\n");
    let change = e.journal.change(id).unwrap().unwrap();
    assert_eq!(change.state, ChangeState::Conflict);
    assert_eq!(
        change.found_sha.as_deref(),
        Some(sha256_hex(b"a third thing\n").as_str())
    );
}

#[test]
fn recovery_handles_deletes_and_creates() {
    let e = env();
    // A delete whose file is gone: committed.
    let del = intent(&e, "d1", Some("old\n"), None);
    std::fs::remove_file(e.root.join("a.txt")).unwrap();
    let report = recover(&e.journal, &e.ws).unwrap();
    assert_eq!(report.committed, vec![del]);
    // A create that never happened: not applied.
    let create = intent(&e, "c1", None, Some("fresh\n"));
    let report = recover(&e.journal, &e.ws).unwrap();
    assert_eq!(report.not_applied, vec![create]);
}

/// Issue 8 item 7: recovery removes the temp file an interrupted apply recorded in its
/// intent, and nothing else: not a person's file that starts with `.rein-tmp-`, anywhere.
#[test]
fn recovery_removes_only_the_temp_file_its_intent_names() {
    let e = env();
    let temp = e.ws.new_temp_path(&path("a.txt"));
    let id = intent_with_temp(
        &e,
        "c1",
        Some("old\n"),
        Some("new\n"),
        Some(temp.to_string()),
    );
    let staged = e.ws.stage_as(&path("a.txt"), &temp, b"half", None).unwrap();
    std::mem::forget(staged); // as if the process died here
    assert!(e.root.join(temp.as_str()).exists());
    // Files that only look like temps: a person's, and one nobody recorded.
    std::fs::create_dir(e.root.join("docs")).unwrap();
    let theirs = [
        ".rein-tmp-notes",
        "docs/.rein-tmp-draft.md",
        ".rein-tmp-a.txt-1-2-3",
    ];
    for name in theirs {
        std::fs::write(e.root.join(name), "a person's own words\n").unwrap();
    }
    let unrecorded = e.ws.stage(&path("docs/b.txt"), b"unrecorded").unwrap();
    let unrecorded_temp = unrecorded.temp().clone();
    std::mem::forget(unrecorded);

    let report = recover(&e.journal, &e.ws).unwrap();
    assert_eq!(report.temps_removed, vec![temp.to_string()]);
    assert_eq!(report.not_applied, vec![id]);
    assert!(!e.root.join(temp.as_str()).exists());
    assert_eq!(e.read("a.txt").unwrap(), "old\n");
    for name in theirs {
        assert_eq!(
            e.read(name).as_deref(),
            Some("a person's own words\n"),
            "{name} was removed"
        );
    }
    assert!(e.root.join(unrecorded_temp.as_str()).exists());
    // Run again: nothing more is removed.
    assert!(recover(&e.journal, &e.ws).unwrap().is_empty());
    assert_eq!(
        e.read(".rein-tmp-notes").as_deref(),
        Some("a person's own words\n")
    );
}

/// A recorded temp name that is not a `.rein-tmp-` file beside the intent's file (a damaged or
/// hand-edited journal) is ignored, never removed.
#[test]
fn recovery_ignores_a_recorded_temp_that_is_not_beside_its_file() {
    let e = env();
    std::fs::create_dir(e.root.join("docs")).unwrap();
    std::fs::write(e.root.join("docs/.rein-tmp-x"), "keep\n").unwrap();
    std::fs::write(e.root.join("keep.txt"), "keep\n").unwrap();
    intent_with_temp(
        &e,
        "c1",
        Some("old\n"),
        Some("new\n"),
        Some("docs/.rein-tmp-x".into()),
    );
    recover(&e.journal, &e.ws).unwrap();
    intent_with_temp(
        &e,
        "c2",
        Some("old\n"),
        Some("new\n"),
        Some("keep.txt".into()),
    );
    let report = recover(&e.journal, &e.ws).unwrap();
    assert!(report.temps_removed.is_empty(), "{report:?}");
    assert_eq!(e.read("docs/.rein-tmp-x").as_deref(), Some("keep\n"));
    assert_eq!(e.read("keep.txt").as_deref(), Some("keep\n"));
}

#[test]
fn an_intent_records_the_call_its_temp_file_and_the_pre_image_mode() {
    use std::os::unix::fs::PermissionsExt;
    let e = env();
    std::fs::set_permissions(e.root.join("a.txt"), std::fs::Permissions::from_mode(0o750)).unwrap();
    let registry = desk_registry();
    let call = ToolCall {
        id: "c1".into(),
        tool: "replace_file".into(),
        arguments: json!({"path": "a.txt", "content": "new\n"}),
    };
    let r = e.gate(&registry).submit(&call, &mut AllowAll);
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    let change = e
        .journal
        .change_for_call(&e.scope(), "c1")
        .unwrap()
        .unwrap();
    assert_eq!(
        change.fingerprint,
        Some(fingerprint(&call.tool, &call.arguments))
    );
    assert_eq!(change.before_mode, Some(0o750));
    let temp = change.temp_path.unwrap();
    assert!(temp.starts_with(".rein-tmp-a.txt-"), "{temp}");
    assert!(!e.root.join(&temp).exists());
    // A delete stages nothing.
    let delete = ToolCall {
        id: "d1".into(),
        tool: "delete_file".into(),
        arguments: json!({"path": "a.txt"}),
    };
    let r = e.gate(&registry).submit(&delete, &mut AllowAll);
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    let change = e
        .journal
        .change_for_call(&e.scope(), "d1")
        .unwrap()
        .unwrap();
    assert_eq!(change.temp_path, None);
    assert_eq!(change.before_mode, Some(0o750));
}

#[test]
fn an_applied_change_whose_gate_record_was_lost_is_replayed() {
    let e = env();
    let registry = desk_registry();
    let call = ToolCall {
        id: "c9".into(),
        tool: "replace_file".into(),
        arguments: json!({"path": "a.txt", "content": "new\n"}),
    };
    // The change was applied but the process died before the gate recorded "executed".
    let proposal = Proposal::new(
        path("a.txt"),
        Some(b"old\n".to_vec()),
        Some(b"new\n".to_vec()),
    );
    apply_for(&e, &call, &proposal).unwrap();
    let mut gate = e.gate(&registry);
    let r = gate.submit(&call, &mut AllowAll);
    assert_eq!(r.outcome, GateOutcome::Replayed, "{r:?}");
    assert_eq!(r.result["applied"], true);
    assert_eq!(e.journal.changes(&e.ws.display_root()).unwrap().len(), 1);
}

/// Issue 8 item 3: after a crash between commit and the gate's record, the id answers only
/// for the call that made the change. Other arguments, in any state of the change, are an id
/// conflict: never a replay, never a second effect.
#[test]
fn a_change_whose_gate_record_was_lost_is_not_replayed_for_other_arguments() {
    let e = env();
    let registry = desk_registry();
    let made = ToolCall {
        id: "c9".into(),
        tool: "create_file".into(),
        arguments: json!({"path": "made.txt", "content": "a\n"}),
    };
    let proposal = Proposal::new(path("made.txt"), None, Some(b"a\n".to_vec()));
    apply_for(&e, &made, &proposal).unwrap();
    let others = [
        json!({"path": "b.txt", "content": "b\n"}),
        json!({"path": "made.txt", "content": "other\n"}),
    ];
    for arguments in others {
        let other = ToolCall {
            arguments,
            ..made.clone()
        };
        let r = e.gate(&registry).submit(&other, &mut AllowAll);
        assert_eq!(r.outcome, GateOutcome::IdConflict, "{r:?}");
        assert!(r.reason.contains("nothing was replayed"), "{}", r.reason);
        assert!(e.read("b.txt").is_none(), "b.txt was created");
        assert_eq!(e.read("made.txt").as_deref(), Some("a\n"));
    }
    assert_eq!(e.journal.changes(&e.ws.display_root()).unwrap().len(), 1);
    // The call that made it still replays.
    let r = e.gate(&registry).submit(&made, &mut AllowAll);
    assert_eq!(r.outcome, GateOutcome::Replayed, "{r:?}");

    // An interrupted intent, and one found not applied: other arguments are refused too.
    let pending = intent(&e, "c10", Some("old\n"), Some("new\n"));
    let other = ToolCall {
        id: "c10".into(),
        tool: "create_file".into(),
        arguments: json!({"path": "b.txt", "content": "b\n"}),
    };
    let r = e.gate(&registry).submit(&other, &mut AllowAll);
    assert_eq!(r.outcome, GateOutcome::IdConflict, "{r:?}");
    recover(&e.journal, &e.ws).unwrap();
    assert_eq!(
        e.journal.change(pending).unwrap().unwrap().state,
        ChangeState::NotApplied
    );
    let r = e.gate(&registry).submit(&other, &mut AllowAll);
    assert_eq!(r.outcome, GateOutcome::IdConflict, "{r:?}");
    assert!(e.read("b.txt").is_none());
}

#[cfg(unix)]
#[test]
fn a_read_only_folder_is_a_clear_error_and_nothing_is_torn() {
    use std::os::unix::fs::PermissionsExt;
    let e = env();
    // Root ignores permission bits; the immutable attribute stops root too.
    struct Unlock(PathBuf);
    impl Drop for Unlock {
        fn drop(&mut self) {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&self.0)
                .status();
            let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
        }
    }
    let _unlock = Unlock(e.root.clone());
    if unsafe { libc_geteuid() } == 0 {
        let locked = std::process::Command::new("chattr")
            .arg("+i")
            .arg(&e.root)
            .status()
            .is_ok_and(|s| s.success());
        if !locked {
            eprintln!("running as root without chattr: cannot make a folder read-only, skipping");
            return;
        }
    } else {
        std::fs::set_permissions(&e.root, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    let proposal = Proposal::new(
        path("a.txt"),
        Some(b"old\n".to_vec()),
        Some(b"new\n".to_vec()),
    );
    let err = apply_as(&e, "ro", &proposal).unwrap_err();
    drop(_unlock);
    let text = err.to_string();
    assert!(
        text.contains("permission denied") && text.contains("nothing was changed"),
        "{text}"
    );
    assert_eq!(e.read("a.txt").unwrap(), "old\n");
    let changes = e.journal.changes(&e.ws.display_root()).unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].state, ChangeState::NotApplied);
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}
