//! The changes table of the exactly-once apply protocol: allowed and refused transitions, undo
//! and undo of undo, recovery lookups, and the trigger that guards raw SQL.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{intent, journal, raw, temp, ws};
use rein_journal::{
    CallOutcome, CallRecord, CallScope, ChangeIntent, ChangeState, Error, NewRun, Replay, RunKind,
};

struct Fixture {
    _dir: tempfile::TempDir,
    j: rein_journal::Journal,
    ws: String,
    old: String,
    new: String,
}

fn fixture() -> Fixture {
    let dir = temp();
    let j = journal(dir.path());
    let ws = ws(dir.path());
    let old = j.put_artifact(b"old content\n").unwrap();
    let new = j.put_artifact(b"new content\n").unwrap();
    Fixture {
        _dir: dir,
        j,
        ws,
        old,
        new,
    }
}

#[test]
fn intent_then_commit() {
    let f = fixture();
    let id =
        f.j.record_intent(&intent(&f.ws, "c1", "a.txt", Some(&f.old), Some(&f.new)))
            .unwrap();
    let change = f.j.change(id).unwrap().unwrap();
    assert_eq!(change.state, ChangeState::Intent);
    assert_eq!(change.resolved_at, None);
    assert_eq!(f.j.pending_intents(&f.ws).unwrap().len(), 1);
    f.j.mark_committed(id).unwrap();
    let change = f.j.change(id).unwrap().unwrap();
    assert_eq!(change.state, ChangeState::Committed);
    assert!(change.resolved_at.is_some());
    assert!(f.j.pending_intents(&f.ws).unwrap().is_empty());
    // Idempotent: recovery may mark it again.
    f.j.mark_committed(id).unwrap();
}

#[test]
fn intent_resolves_to_not_applied_or_conflict() {
    let f = fixture();
    let a =
        f.j.record_intent(&intent(&f.ws, "c1", "a.txt", Some(&f.old), Some(&f.new)))
            .unwrap();
    let b =
        f.j.record_intent(&intent(&f.ws, "c2", "b.txt", None, Some(&f.new)))
            .unwrap();
    let c =
        f.j.record_intent(&intent(&f.ws, "c3", "c.txt", Some(&f.old), None))
            .unwrap();
    f.j.mark_not_applied(a).unwrap();
    f.j.mark_conflict(b, Some(&"e".repeat(64))).unwrap();
    f.j.mark_conflict(c, None).unwrap();
    let b = f.j.change(b).unwrap().unwrap();
    assert_eq!(b.state, ChangeState::Conflict);
    assert_eq!(b.found_sha.as_deref(), Some("e".repeat(64).as_str()));
    let c = f.j.change(c).unwrap().unwrap();
    assert!(c.found_absent && c.found_sha.is_none());
    assert_eq!(
        f.j.change(a).unwrap().unwrap().state,
        ChangeState::NotApplied
    );
}

#[test]
fn resolved_changes_cannot_move_again() {
    let f = fixture();
    let a =
        f.j.record_intent(&intent(&f.ws, "c1", "a.txt", Some(&f.old), Some(&f.new)))
            .unwrap();
    f.j.mark_committed(a).unwrap();
    for err in [
        f.j.mark_not_applied(a).unwrap_err(),
        f.j.mark_conflict(a, None).unwrap_err(),
    ] {
        assert!(matches!(err, Error::Transition { .. }), "{err:?}");
    }
    let b =
        f.j.record_intent(&intent(&f.ws, "c2", "b.txt", Some(&f.old), Some(&f.new)))
            .unwrap();
    f.j.mark_not_applied(b).unwrap();
    let err = f.j.mark_committed(b).unwrap_err();
    assert!(
        err.to_string()
            .contains("not_applied; it cannot become committed"),
        "{err}"
    );
    let c =
        f.j.record_intent(&intent(&f.ws, "c3", "c.txt", Some(&f.old), Some(&f.new)))
            .unwrap();
    f.j.mark_conflict(c, None).unwrap();
    assert!(f.j.mark_committed(c).is_err());
}

#[test]
fn the_trigger_refuses_other_transitions_and_deletes() {
    let f = fixture();
    let a =
        f.j.record_intent(&intent(&f.ws, "c1", "a.txt", Some(&f.old), Some(&f.new)))
            .unwrap();
    let conn = raw(f.j.path());
    let refused = [
        "UPDATE changes SET state = 'undone', undone_at = 1 WHERE id = ?1", // intent -> undone
        "UPDATE changes SET path = 'other.txt' WHERE id = ?1",              // identity
        "UPDATE changes SET after_sha = NULL WHERE id = ?1",
        "DELETE FROM changes WHERE id = ?1",
    ];
    for sql in refused {
        assert!(conn.execute(sql, [a.0]).is_err(), "{sql} was allowed");
    }
    conn.execute(
        "UPDATE changes SET state = 'committed', resolved_at = 5 WHERE id = ?1",
        [a.0],
    )
    .unwrap();
    let refused = [
        "UPDATE changes SET state = 'intent', resolved_at = NULL WHERE id = ?1",
        "UPDATE changes SET state = 'not_applied' WHERE id = ?1",
        "UPDATE changes SET state = 'conflict' WHERE id = ?1",
        "UPDATE changes SET resolved_at = 6 WHERE id = ?1",
    ];
    for sql in refused {
        assert!(conn.execute(sql, [a.0]).is_err(), "{sql} was allowed");
    }
    conn.execute(
        "UPDATE changes SET state = 'undone', undone_at = 7 WHERE id = ?1",
        [a.0],
    )
    .unwrap();
    assert!(conn
        .execute(
            "UPDATE changes SET state = 'committed', undone_at = NULL WHERE id = ?1",
            [a.0]
        )
        .is_err());
}

#[test]
fn undo_and_undo_of_undo() {
    let f = fixture();
    let a =
        f.j.record_intent(&intent(&f.ws, "c1", "a.txt", Some(&f.old), Some(&f.new)))
            .unwrap();
    // Only a committed change can be undone.
    let mut undo = intent(&f.ws, "undo-1", "a.txt", Some(&f.new), Some(&f.old));
    undo.undo_of = Some(a);
    assert!(matches!(
        f.j.record_intent(&undo),
        Err(Error::Transition { .. })
    ));
    f.j.mark_committed(a).unwrap();

    // An undo must exactly revert its original.
    let mut wrong = undo.clone();
    wrong.after_sha = None;
    assert!(matches!(
        f.j.record_intent(&wrong),
        Err(Error::Invalid { .. })
    ));

    let u = f.j.record_intent(&undo).unwrap();
    assert_eq!(
        f.j.change(a).unwrap().unwrap().state,
        ChangeState::Committed
    );
    // A second undo of the same change while one is in progress is refused.
    let mut again = undo.clone();
    again.call_id = "undo-1b".into();
    assert!(f.j.record_intent(&again).is_err());

    f.j.mark_committed(u).unwrap();
    let original = f.j.change(a).unwrap().unwrap();
    assert_eq!(original.state, ChangeState::Undone);
    assert!(original.undone_at.is_some());
    assert_eq!(original.undone_by, Some(u));

    // Undo the undo: the undo becomes undone, the newest change holds the effect.
    let mut redo = intent(&f.ws, "undo-2", "a.txt", Some(&f.old), Some(&f.new));
    redo.undo_of = Some(u);
    let r = f.j.record_intent(&redo).unwrap();
    f.j.mark_committed(r).unwrap();
    let states: Vec<ChangeState> =
        f.j.changes(&f.ws)
            .unwrap()
            .iter()
            .map(|c| c.state)
            .collect();
    assert_eq!(
        states,
        [
            ChangeState::Undone,
            ChangeState::Undone,
            ChangeState::Committed
        ]
    );
    // An undone change cannot be undone again.
    let mut twice = intent(&f.ws, "undo-3", "a.txt", Some(&f.new), Some(&f.old));
    twice.undo_of = Some(a);
    assert!(f.j.record_intent(&twice).is_err());
}

#[test]
fn an_undo_found_not_applied_leaves_the_original_committed() {
    let f = fixture();
    let a =
        f.j.record_intent(&intent(&f.ws, "c1", "a.txt", None, Some(&f.new)))
            .unwrap();
    f.j.mark_committed(a).unwrap();
    let mut undo = intent(&f.ws, "undo-1", "a.txt", Some(&f.new), None);
    undo.undo_of = Some(a);
    let u = f.j.record_intent(&undo).unwrap();
    f.j.mark_not_applied(u).unwrap();
    assert_eq!(
        f.j.change(a).unwrap().unwrap().state,
        ChangeState::Committed
    );
    // And it can be tried again with a new call id.
    undo.call_id = "undo-2".into();
    let u2 = f.j.record_intent(&undo).unwrap();
    f.j.mark_committed(u2).unwrap();
    assert_eq!(f.j.change(a).unwrap().unwrap().state, ChangeState::Undone);
}

#[test]
fn intents_need_stored_contents_and_valid_hashes() {
    let f = fixture();
    let missing = "d".repeat(64);
    let err =
        f.j.record_intent(&intent(&f.ws, "c1", "a.txt", Some(&f.old), Some(&missing)))
            .unwrap_err();
    assert!(err.to_string().contains("put_artifact"), "{err}");
    let err =
        f.j.record_intent(&intent(&f.ws, "c1", "a.txt", Some("nothex"), None))
            .unwrap_err();
    assert!(matches!(err, Error::Invalid { .. }), "{err:?}");
    let err =
        f.j.record_intent(&intent(&f.ws, "c1", "a.txt", None, None))
            .unwrap_err();
    assert!(matches!(err, Error::Invalid { .. }), "{err:?}");
    let mut other_scope = intent(&f.ws, "c1", "a.txt", None, Some(&f.new));
    other_scope.scope = CallScope::Workspace("/elsewhere".into());
    assert!(f.j.record_intent(&other_scope).is_err());
    assert!(f.j.changes(&f.ws).unwrap().is_empty());
}

#[test]
fn one_change_per_call_and_one_open_intent_per_file() {
    let f = fixture();
    let a =
        f.j.record_intent(&intent(&f.ws, "c1", "a.txt", Some(&f.old), Some(&f.new)))
            .unwrap();
    let err =
        f.j.record_intent(&intent(&f.ws, "c1", "b.txt", None, Some(&f.new)))
            .unwrap_err();
    assert!(matches!(err, Error::Duplicate { .. }), "{err:?}");
    let err =
        f.j.record_intent(&intent(&f.ws, "c2", "a.txt", Some(&f.old), Some(&f.new)))
            .unwrap_err();
    assert!(err.to_string().contains("unresolved change"), "{err}");
    // After not-applied, the same call may try again.
    f.j.mark_not_applied(a).unwrap();
    let again =
        f.j.record_intent(&intent(&f.ws, "c1", "a.txt", Some(&f.old), Some(&f.new)))
            .unwrap();
    f.j.mark_committed(again).unwrap();
    let err =
        f.j.record_intent(&intent(&f.ws, "c1", "a.txt", Some(&f.new), Some(&f.old)))
            .unwrap_err();
    assert!(matches!(err, Error::Duplicate { .. }), "{err:?}");
}

#[test]
fn changes_are_listed_per_workspace_and_by_run() {
    let f = fixture();
    let run = f.j.begin_run(&NewRun::new(RunKind::Mission)).unwrap();
    let mut in_run = intent(&f.ws, "c1", "a.txt", None, Some(&f.new));
    in_run.scope = CallScope::Run(run);
    let a = f.j.record_intent(&in_run).unwrap();
    // The same call id in another scope is another call.
    f.j.record_intent(&intent(&f.ws, "c1", "b.txt", None, Some(&f.new)))
        .unwrap();
    f.j.record_intent(&intent("/other", "c9", "a.txt", None, Some(&f.new)))
        .unwrap();
    assert_eq!(f.j.changes(&f.ws).unwrap().len(), 2);
    assert_eq!(f.j.pending_intents("/other").unwrap().len(), 1);
    let found =
        f.j.change_for_call(&CallScope::Run(run), "c1")
            .unwrap()
            .unwrap();
    assert_eq!(found.id, a);
    assert_eq!(found.run(), Some(run));
    assert_eq!(f.j.run_trace(run).unwrap().changes.len(), 1);
}

#[test]
fn check_replay_sees_effects_whose_gate_record_was_lost() {
    let f = fixture();
    let scope = CallScope::Workspace(f.ws.clone());
    let fp = "f".repeat(64);
    assert_eq!(f.j.check_replay(&scope, "c1", &fp).unwrap(), Replay::New);
    let a =
        f.j.record_intent(&ChangeIntent {
            fingerprint: Some(fp.clone()),
            ..intent(&f.ws, "c1", "a.txt", Some(&f.old), Some(&f.new))
        })
        .unwrap();
    assert!(matches!(
        f.j.check_replay(&scope, "c1", &fp).unwrap(),
        Replay::Unresolved { .. }
    ));
    f.j.mark_committed(a).unwrap();
    match f.j.check_replay(&scope, "c1", &fp).unwrap() {
        Replay::Applied { change } => assert_eq!(change.id, a),
        other => panic!("expected Applied, got {other:?}"),
    }
    let b =
        f.j.record_intent(&ChangeIntent {
            fingerprint: Some(fp.clone()),
            ..intent(&f.ws, "c2", "b.txt", Some(&f.old), Some(&f.new))
        })
        .unwrap();
    f.j.mark_not_applied(b).unwrap();
    assert_eq!(f.j.check_replay(&scope, "c2", &fp).unwrap(), Replay::New);
}

/// Issue 8 item 3: a change answers only for the call that made it. Another fingerprint, or a
/// change no call made (an undo), is an id conflict in every state, and the journal refuses
/// to bind the id to it or to record a second change under it.
#[test]
fn a_change_is_replayed_only_for_the_fingerprint_that_made_it() {
    let f = fixture();
    let scope = CallScope::Workspace(f.ws.clone());
    let made = "a".repeat(64);
    let other = "b".repeat(64);
    let a =
        f.j.record_intent(&ChangeIntent {
            fingerprint: Some(made.clone()),
            ..intent(&f.ws, "c1", "a.txt", None, Some(&f.new))
        })
        .unwrap();
    let conflict = |id: &str, fp: &str| match f.j.check_replay(&scope, id, fp).unwrap() {
        Replay::ChangeConflict { change } => change,
        replay => panic!("expected a change conflict for {id}, got {replay:?}"),
    };
    // Unresolved, committed, not applied: never a replay for other arguments.
    assert_eq!(conflict("c1", &other).id, a);
    f.j.mark_committed(a).unwrap();
    assert_eq!(conflict("c1", &other).id, a);
    assert!(matches!(
        f.j.check_replay(&scope, "c1", &made).unwrap(),
        Replay::Applied { .. }
    ));
    let b =
        f.j.record_intent(&ChangeIntent {
            fingerprint: Some(made.clone()),
            ..intent(&f.ws, "c2", "b.txt", None, Some(&f.new))
        })
        .unwrap();
    f.j.mark_not_applied(b).unwrap();
    assert_eq!(conflict("c2", &other).id, b);
    let err =
        f.j.record_intent(&ChangeIntent {
            fingerprint: Some(other.clone()),
            ..intent(&f.ws, "c2", "c.txt", None, Some(&f.new))
        })
        .unwrap_err();
    assert!(matches!(err, Error::Duplicate { .. }), "{err:?}");
    assert!(err.to_string().contains(&format!("change {b}")), "{err}");
    // The same call may try again after "not applied".
    f.j.record_intent(&ChangeIntent {
        fingerprint: Some(made.clone()),
        ..intent(&f.ws, "c2", "b.txt", None, Some(&f.new))
    })
    .unwrap();

    // A change no call made (an undo, or one from schema version 1) answers for no call.
    let u =
        f.j.record_intent(&intent(&f.ws, "undo-1", "u.txt", None, Some(&f.new)))
            .unwrap();
    f.j.mark_committed(u).unwrap();
    assert_eq!(conflict("undo-1", &made).id, u);

    // The gate cannot bind such an id to other arguments either.
    let record = |call_id: &str, fingerprint: &str| CallRecord {
        scope: scope.clone(),
        call_id: call_id.into(),
        tool: "create_file".into(),
        arguments: serde_json::json!({"path": "other.txt"}),
        fingerprint: fingerprint.into(),
        outcome: CallOutcome::Replayed,
        reason: String::new(),
        result: serde_json::Value::Null,
    };
    for (id, fp) in [("c1", &other), ("undo-1", &made)] {
        let err = f.j.record_tool_call(&record(id, fp)).unwrap_err();
        assert!(matches!(err, Error::Duplicate { .. }), "{id}: {err:?}");
    }
    f.j.record_tool_call(&record("c1", &made)).unwrap();
    f.j.record_tool_call(&CallRecord {
        outcome: CallOutcome::IdConflict,
        ..record("c1", &other)
    })
    .unwrap();
}

#[test]
fn an_intent_keeps_its_temp_file_and_pre_image_mode() {
    let f = fixture();
    let id =
        f.j.record_intent(&ChangeIntent {
            temp_path: Some("docs/.rein-tmp-a.txt-1".into()),
            before_mode: Some(0o750),
            ..intent(&f.ws, "c1", "docs/a.txt", Some(&f.old), Some(&f.new))
        })
        .unwrap();
    let change = f.j.change(id).unwrap().unwrap();
    assert_eq!(change.temp_path.as_deref(), Some("docs/.rein-tmp-a.txt-1"));
    assert_eq!(change.before_mode, Some(0o750));
    assert_eq!(change.fingerprint, None);
    for bad in [
        ChangeIntent {
            before_mode: Some(0o10000),
            ..intent(&f.ws, "c2", "b.txt", Some(&f.old), Some(&f.new))
        },
        ChangeIntent {
            temp_path: Some(String::new()),
            ..intent(&f.ws, "c3", "c.txt", Some(&f.old), Some(&f.new))
        },
        ChangeIntent {
            fingerprint: Some("not a hash".into()),
            ..intent(&f.ws, "c4", "d.txt", Some(&f.old), Some(&f.new))
        },
    ] {
        let err = f.j.record_intent(&bad).unwrap_err();
        assert!(matches!(err, Error::Invalid { .. }), "{err:?}");
    }
    // The trigger keeps them as recorded.
    let conn = raw(f.j.path());
    for sql in [
        "UPDATE changes SET temp_path = 'x' WHERE id = ?1",
        "UPDATE changes SET before_mode = 511 WHERE id = ?1",
        "UPDATE changes SET fingerprint = NULL WHERE id = ?1",
    ] {
        assert!(conn.execute(sql, [id.0]).is_err(), "{sql} was allowed");
    }
}
