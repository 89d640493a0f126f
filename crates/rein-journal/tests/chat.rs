//! chat.db: turns, approval cards, batch expiry at the 600 s edge, and the approved -> applied
//! transition.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{raw, temp};
use rein_journal::{ApprovalStatus, ChatStore, Error, NewApproval, TurnRole, APPROVAL_LIFETIME_MS};
use serde_json::json;

const T0: i64 = 1_700_000_000_000;

fn card(call_id: &str) -> NewApproval {
    NewApproval {
        conversation: None,
        workspace: "/ws".into(),
        call_id: call_id.into(),
        tool: "edit_file".into(),
        arguments: json!({"path": "a.txt"}),
        fingerprint: "a".repeat(64),
        path: Some("a.txt".into()),
        before_sha: Some("b".repeat(64)),
        after_sha: Some("c".repeat(64)),
        diff: "-old\n+new\n".into(),
    }
}

fn store() -> (tempfile::TempDir, ChatStore) {
    let dir = temp();
    let store = ChatStore::open(dir.path().join("chat.db")).unwrap();
    (dir, store)
}

#[test]
fn approval_lifetime_is_600_seconds() {
    assert_eq!(APPROVAL_LIFETIME_MS, 600_000);
}

#[test]
fn a_test_lifetime_applies_to_cards_requested_after_it_and_never_to_zero() {
    let (_dir, mut chat) = store();
    let long = chat.request_approval(&card("c0"), T0).unwrap();
    chat.set_approval_lifetime_ms(3_000);
    let short = chat.request_approval(&card("c1"), T0).unwrap();
    assert!(chat.expire_due(T0 + 2_999).unwrap().is_empty());
    assert_eq!(chat.expire_due(T0 + 3_000).unwrap(), vec![short]);
    assert!(
        chat.expire_due(T0 + 3_001).unwrap().is_empty(),
        "{long:?} keeps 600 s"
    );
    chat.set_approval_lifetime_ms(0);
    let least = chat.request_approval(&card("c2"), T0).unwrap();
    assert!(chat.expire_due(T0).unwrap().is_empty());
    assert_eq!(chat.expire_due(T0 + 1).unwrap(), vec![least]);
}

#[test]
fn approvals_expire_in_batches_at_the_edge() {
    let (_dir, chat) = store();
    let a = chat.request_approval(&card("c1"), T0).unwrap();
    let b = chat.request_approval(&card("c2"), T0 + 10).unwrap();
    let c = chat.request_approval(&card("c3"), T0 + 20).unwrap();
    assert_eq!(
        chat.approval(a).unwrap().unwrap().expires_at,
        T0 + APPROVAL_LIFETIME_MS
    );
    chat.deny(c, T0 + 30, Some("no")).unwrap();

    // One millisecond before the deadline nothing expires.
    assert!(chat
        .expire_due(T0 + APPROVAL_LIFETIME_MS - 1)
        .unwrap()
        .is_empty());
    // At the deadline of the first and past the second, both go in one batch; denied stays.
    assert_eq!(
        chat.expire_due(T0 + APPROVAL_LIFETIME_MS + 10).unwrap(),
        [a, b]
    );
    for id in [a, b] {
        let card = chat.approval(id).unwrap().unwrap();
        assert_eq!(card.status, ApprovalStatus::Expired);
        assert_eq!(card.decided_at, Some(T0 + APPROVAL_LIFETIME_MS + 10));
    }
    assert_eq!(
        chat.approval(c).unwrap().unwrap().status,
        ApprovalStatus::Denied
    );
    assert!(chat
        .expire_due(T0 + 10 * APPROVAL_LIFETIME_MS)
        .unwrap()
        .is_empty());
    // An expired card cannot be approved.
    assert!(matches!(
        chat.approve(a, T0 + 1),
        Err(Error::Transition { .. })
    ));
}

#[test]
fn approving_at_or_after_the_deadline_expires_the_card() {
    let (_dir, chat) = store();
    let a = chat.request_approval(&card("c1"), T0).unwrap();
    let err = chat.approve(a, T0 + APPROVAL_LIFETIME_MS).unwrap_err();
    assert!(matches!(err, Error::ApprovalExpired { .. }), "{err:?}");
    assert!(err.to_string().contains("chat.db"));
    assert_eq!(
        chat.approval(a).unwrap().unwrap().status,
        ApprovalStatus::Expired
    );
    let b = chat.request_approval(&card("c2"), T0).unwrap();
    let approved = chat.approve(b, T0 + APPROVAL_LIFETIME_MS - 1).unwrap();
    assert_eq!(approved.status, ApprovalStatus::Approved);
}

#[test]
fn approved_moves_to_applied_or_failed_once() {
    let (_dir, chat) = store();
    let a = chat.request_approval(&card("c1"), T0).unwrap();
    // Not yet approved: cannot be applied.
    assert!(matches!(
        chat.mark_applied(a, T0 + 1),
        Err(Error::Transition { .. })
    ));
    chat.approve(a, T0 + 2).unwrap();
    chat.mark_applied(a, T0 + 3).unwrap();
    let card_a = chat.approval(a).unwrap().unwrap();
    assert_eq!(card_a.status, ApprovalStatus::Applied);
    assert_eq!(
        (card_a.decided_at, card_a.finished_at),
        (Some(T0 + 2), Some(T0 + 3))
    );
    assert!(chat.mark_applied(a, T0 + 4).is_err());
    assert!(chat.mark_failed(a, T0 + 4, "x").is_err());
    // Approved cards are not expired by the batch.
    let b = chat.request_approval(&card("c2"), T0).unwrap();
    chat.approve(b, T0 + 1).unwrap();
    assert!(chat
        .expire_due(T0 + 2 * APPROVAL_LIFETIME_MS)
        .unwrap()
        .is_empty());
    chat.mark_failed(b, T0 + 5, "the file changed since the card was shown")
        .unwrap();
    let card_b = chat.approval(b).unwrap().unwrap();
    assert_eq!(card_b.status, ApprovalStatus::Failed);
    assert_eq!(
        card_b.note.as_deref(),
        Some("the file changed since the card was shown")
    );
}

#[test]
fn the_trigger_refuses_other_transitions() {
    let (_dir, chat) = store();
    let a = chat.request_approval(&card("c1"), T0).unwrap();
    let conn = raw(chat.path());
    let refused = [
        "UPDATE approvals SET status = 'applied', decided_at = 1, finished_at = 1 WHERE id = ?1",
        "UPDATE approvals SET fingerprint = ?2 WHERE id = ?1",
        "UPDATE approvals SET expires_at = expires_at + 1 WHERE id = ?1",
        "DELETE FROM approvals WHERE id = ?1",
    ];
    for sql in refused {
        let n = sql.matches('?').count();
        let result = if n == 2 {
            conn.execute(sql, rusqlite::params![a.0, "d".repeat(64)])
        } else {
            conn.execute(sql, [a.0])
        };
        assert!(result.is_err(), "{sql} was allowed");
    }
    chat.deny(a, T0 + 1, None).unwrap();
    assert!(conn
        .execute(
            "UPDATE approvals SET status = 'approved' WHERE id = ?1",
            [a.0]
        )
        .is_err());
}

#[test]
fn one_live_card_per_call() {
    let (_dir, chat) = store();
    let a = chat.request_approval(&card("c1"), T0).unwrap();
    assert!(matches!(
        chat.request_approval(&card("c1"), T0),
        Err(Error::Duplicate { .. })
    ));
    chat.expire_due(T0 + APPROVAL_LIFETIME_MS).unwrap();
    let b = chat
        .request_approval(&card("c1"), T0 + APPROVAL_LIFETIME_MS)
        .unwrap();
    assert_ne!(a, b);
    assert_eq!(chat.pending_approvals("/ws").unwrap().len(), 1);
}

#[test]
fn turns_keep_order_and_the_recent_window() {
    let (_dir, chat) = store();
    let conv = chat
        .create_conversation("/ws", "first", Some("qwen"), T0)
        .unwrap();
    let other = chat.create_conversation("/ws", "second", None, T0).unwrap();
    for i in 0..10 {
        let role = if i % 2 == 0 {
            TurnRole::User
        } else {
            TurnRole::Assistant
        };
        chat.append_turn(conv, role, &format!("m{i}"), &json!({"i": i}), T0 + i)
            .unwrap();
        chat.append_turn(other, TurnRole::User, "x", &json!({}), T0 + i)
            .unwrap();
    }
    let recent = chat.recent_turns(conv, 3).unwrap();
    let contents: Vec<&str> = recent.iter().map(|t| t.content.as_str()).collect();
    assert_eq!(contents, ["m7", "m8", "m9"]);
    assert_eq!(recent[0].seq, 8);
    assert_eq!(recent[2].meta, json!({"i": 9}));
    assert_eq!(chat.recent_turns(conv, 240).unwrap().len(), 10);
    assert_eq!(chat.conversations("/ws").unwrap().len(), 2);
    assert_eq!(chat.conversation(conv).unwrap().unwrap().title, "first");
    let missing = rein_journal::ConversationId(99);
    assert!(matches!(
        chat.append_turn(missing, TurnRole::User, "x", &json!({}), T0),
        Err(Error::NotFound { .. })
    ));
    let conn = raw(chat.path());
    assert!(conn
        .execute("UPDATE turns SET content = 'edited'", [])
        .is_err());
    assert!(conn.execute("DELETE FROM turns", []).is_err());
}

#[test]
fn one_running_turn_per_conversation_and_each_ends_once() {
    let (_dir, store) = store();
    let a = store.create_conversation("/ws", "a", None, T0).unwrap();
    let b = store.create_conversation("/ws", "b", None, T0).unwrap();
    let run = store.begin_turn_run(a, T0).unwrap();
    // A second turn in the same conversation is refused; another conversation is free.
    match store.begin_turn_run(a, T0 + 1) {
        Err(Error::TurnRunning { conversation, turn }) => {
            assert_eq!((conversation, turn), (a.0, run.0));
        }
        other => panic!("{other:?}"),
    }
    let other = store.begin_turn_run(b, T0 + 1).unwrap();
    store
        .end_turn_run(
            run,
            rein_journal::TurnRunStatus::Answered,
            Some("ok"),
            T0 + 2,
        )
        .unwrap();
    assert!(store
        .end_turn_run(run, rein_journal::TurnRunStatus::Interrupted, None, T0 + 3)
        .is_err());
    assert!(store
        .end_turn_run(other, rein_journal::TurnRunStatus::Running, None, T0 + 3)
        .is_err());
    // Once ended, the conversation takes a new turn.
    store.begin_turn_run(a, T0 + 4).unwrap();
    // A turn left running is closed as interrupted, with its time, and listed.
    let closed = store.interrupt_running(b, T0 + 5).unwrap();
    assert_eq!(closed, vec![other]);
    let runs = store.turn_runs(b).unwrap();
    assert_eq!(runs[0].status, rein_journal::TurnRunStatus::Interrupted);
    assert_eq!(runs[0].ended_at, Some(T0 + 5));
    assert!(store.interrupt_running(b, T0 + 6).unwrap().is_empty());
}

#[test]
fn the_schema_refuses_a_second_running_turn_and_rewriting_an_ended_one() {
    let (dir, store) = store();
    let a = store.create_conversation("/ws", "a", None, T0).unwrap();
    let run = store.begin_turn_run(a, T0).unwrap();
    store
        .end_turn_run(run, rein_journal::TurnRunStatus::Stopped, None, T0 + 1)
        .unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(dir.path().join("chat.db")).unwrap();
    let rewrite = conn.execute(
        "UPDATE turn_runs SET status = 'answered' WHERE id = ?1",
        [run.0],
    );
    assert!(rewrite.is_err(), "an ended turn was rewritten");
    conn.execute(
        "INSERT INTO turn_runs (conversation_id, started_at) VALUES (?1, ?2)",
        [a.0, T0 + 2],
    )
    .unwrap();
    let second = conn.execute(
        "INSERT INTO turn_runs (conversation_id, started_at) VALUES (?1, ?2)",
        [a.0, T0 + 3],
    );
    assert!(second.is_err(), "two running turns in one conversation");
}

#[test]
fn chat_events_are_kept_in_order_append_only_and_per_conversation() {
    let (_dir, chat) = store();
    let one = chat.create_conversation("/ws", "chat", None, T0).unwrap();
    let two = chat
        .create_conversation("/other", "chat", None, T0)
        .unwrap();
    let event = |seq: i64, kind: &str| rein_journal::ChatEventRecord {
        seq,
        turn_run: Some(1),
        kind: kind.into(),
        event: json!({"type": kind, "seq": seq, "text": "<b>\u{202e}"}),
        at: T0 + seq,
    };
    chat.record_event(one, &event(1, "route")).unwrap();
    chat.record_event(two, &event(1, "hold")).unwrap();
    chat.record_event(one, &event(2, "tool_call")).unwrap();
    let kept = chat.events(one).unwrap();
    assert_eq!(
        kept.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
        ["route", "tool_call"]
    );
    assert_eq!(kept[0].event["text"], "<b>\u{202e}", "kept exactly");
    assert_eq!(chat.events(two).unwrap().len(), 1);
    // A nameless or unnumbered event is refused; an unknown conversation too.
    assert!(chat.record_event(one, &event(0, "route")).is_err());
    assert!(chat.record_event(one, &event(3, "")).is_err());
    assert!(chat
        .record_event(rein_journal::ConversationId(99), &event(4, "route"))
        .is_err());
    let conn = raw(chat.path());
    assert!(conn
        .execute("UPDATE chat_events SET type = 'x'", [])
        .is_err());
    assert!(conn.execute("DELETE FROM chat_events", []).is_err());
    assert_eq!(
        chat.all_conversations()
            .unwrap()
            .iter()
            .map(|c| c.id)
            .collect::<Vec<_>>(),
        [one, two]
    );
    let mut mine = card("c1");
    mine.conversation = Some(one);
    let a = chat.request_approval(&mine, T0).unwrap();
    chat.request_approval(&card("c2"), T0).unwrap();
    let cards = chat.conversation_approvals(one).unwrap();
    assert_eq!(cards.iter().map(|c| c.id).collect::<Vec<_>>(), [a]);
}
