//! Append-only is enforced by the schema's triggers, not by convention: raw SQL that edits or
//! deletes history fails.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{journal, raw, temp};
use rein_journal::{
    CallOutcome, CallRecord, CallScope, NewCheck, NewRun, NewStep, RunKind, RunStatus, StepKind,
};
use serde_json::json;

/// A journal with one row in every append-only table.
fn populated() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = temp();
    let j = journal(dir.path());
    let contract = r#"{"checks":[]}"#;
    let sha = rein_journal::sha256_hex(contract.as_bytes());
    j.store_acceptance_spec("desk_task", &sha, contract)
        .unwrap();
    let mut new = NewRun::new(RunKind::Mission);
    new.contract_sha = Some(sha);
    let run = j.begin_run(&new).unwrap();
    j.append_step(run, &NewStep::new(StepKind::Note)).unwrap();
    j.append_event(Some(run), "started", &json!({})).unwrap();
    j.put_artifact(b"content").unwrap();
    j.record_check(
        run,
        &NewCheck {
            attempt: None,
            kind: "file_exists".into(),
            name: "summary".into(),
            passed: true,
            advisory: false,
            facts: json!({}),
        },
    )
    .unwrap();
    j.record_tool_call(&CallRecord {
        scope: CallScope::Run(run),
        call_id: "c1".into(),
        tool: "read_file".into(),
        arguments: json!({"path": "a"}),
        fingerprint: "a".repeat(64),
        outcome: CallOutcome::Executed,
        reason: String::new(),
        result: json!("x"),
    })
    .unwrap();
    let path = j.path().to_path_buf();
    (dir, path)
}

const APPEND_ONLY: &[(&str, &str)] = &[
    ("events", "kind = 'edited'"),
    ("artifacts", "bytes = x'00', size = 1"),
    ("acceptance_specs", "canonical_json = '{}'"),
    ("check_results", "passed = 0"),
    ("steps", "thought = 'rewritten'"),
    ("tool_calls", "result = '\"forged\"'"),
];

#[test]
fn update_on_append_only_tables_fails() {
    let (_dir, path) = populated();
    let conn = raw(&path);
    for (table, set) in APPEND_ONLY {
        let err = conn
            .execute(&format!("UPDATE {table} SET {set}"), [])
            .unwrap_err();
        assert!(err.to_string().contains("append-only"), "{table}: {err}");
    }
}

#[test]
fn delete_on_append_only_tables_fails() {
    let (_dir, path) = populated();
    let conn = raw(&path);
    for (table, _) in APPEND_ONLY {
        let err = conn
            .execute(&format!("DELETE FROM {table}"), [])
            .unwrap_err();
        assert!(err.to_string().contains("append-only"), "{table}: {err}");
        let left: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 1, "{table}");
    }
}

#[test]
fn insert_or_replace_cannot_overwrite_stored_content() {
    let (_dir, path) = populated();
    let conn = raw(&path);
    let sha = rein_journal::sha256_hex(b"content");
    let err = conn
        .execute(
            "INSERT OR REPLACE INTO artifacts (sha256, bytes, size, created_at) VALUES (?1, x'00', 1, 0)",
            [&sha],
        )
        .unwrap_err();
    assert!(err.to_string().contains("already stored"), "{err}");
    let j = rein_journal::Journal::open(&path).unwrap();
    assert_eq!(j.get_artifact(&sha).unwrap().unwrap(), b"content");
}

#[test]
fn runs_are_finished_once_and_never_deleted() {
    let (_dir, path) = populated();
    let j = rein_journal::Journal::open(&path).unwrap();
    let run = j.list_runs().unwrap()[0].id;
    let conn = raw(&path);
    assert!(conn.execute("UPDATE runs SET model = 'other'", []).is_err());
    assert!(conn.execute("DELETE FROM runs", []).is_err());
    j.finish_run(run, RunStatus::Pass, &json!({"verdict": "pass"}))
        .unwrap();
    let err = j.finish_run(run, RunStatus::Fail, &json!({})).unwrap_err();
    assert!(err.to_string().contains("cannot become fail"), "{err}");
    assert!(conn.execute("UPDATE runs SET status = 'fail'", []).is_err());
    assert_eq!(j.run(run).unwrap().unwrap().status, RunStatus::Pass);
    // Nothing more can be appended to a finished run.
    assert!(j.append_step(run, &NewStep::new(StepKind::Note)).is_err());
}

#[test]
fn a_second_executed_record_for_one_call_is_refused_even_by_raw_sql() {
    let (_dir, path) = populated();
    let conn = raw(&path);
    let err = conn
        .execute(
            "INSERT INTO tool_calls (run_id, scope_key, call_id, tool, arguments, fingerprint,
                                     outcome, result, created_at)
             VALUES (1, 'run:1', 'c1', 'read_file', '{}', ?1, 'executed', 'null', 0)",
            [&"a".repeat(64)],
        )
        .unwrap_err();
    assert!(err.to_string().contains("already been executed"), "{err}");
    let err = conn
        .execute(
            "INSERT INTO tool_calls (run_id, scope_key, call_id, tool, arguments, fingerprint,
                                     outcome, result, created_at)
             VALUES (1, 'run:1', 'c1', 'read_file', '{}', ?1, 'replayed', 'null', 0)",
            [&"b".repeat(64)],
        )
        .unwrap_err();
    assert!(err.to_string().contains("another fingerprint"), "{err}");
}
