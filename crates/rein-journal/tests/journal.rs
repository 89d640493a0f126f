//! Runs, traces, artifacts, acceptance specs and tool-call replay.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{journal, raw, temp};
use rein_journal::{
    canonical_json, sha256_hex, CallOutcome, CallRecord, CallScope, Error, Journal, NewCheck,
    NewRun, NewStep, Replay, RunId, RunKind, RunStatus, StepKind,
};
use serde_json::json;

fn call(scope: &CallScope, id: &str, args: serde_json::Value, outcome: CallOutcome) -> CallRecord {
    let arguments = args;
    let fingerprint = sha256_hex(
        canonical_json(&json!({"tool": "edit_file", "arguments": arguments})).as_bytes(),
    );
    CallRecord {
        scope: scope.clone(),
        call_id: id.into(),
        tool: "edit_file".into(),
        arguments,
        fingerprint,
        outcome,
        reason: format!("{outcome}"),
        result: json!({"written": true}),
    }
}

#[test]
fn artifacts_are_stored_once_and_verified() {
    let dir = temp();
    let j = journal(dir.path());
    let a = j.put_artifact(b"hello").unwrap();
    let b = j.put_artifact(b"hello").unwrap();
    assert_eq!(a, b);
    assert_eq!(a, sha256_hex(b"hello"));
    let empty = j.put_artifact(b"").unwrap();
    assert_eq!(j.get_artifact(&empty).unwrap().unwrap(), b"");
    let count: i64 = raw(j.path())
        .query_row("SELECT count(*) FROM artifacts", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, 2);
    assert_eq!(j.get_artifact(&a).unwrap().unwrap(), b"hello");
    assert!(j.has_artifact(&a).unwrap());
    assert_eq!(j.get_artifact(&"0".repeat(64)).unwrap(), None);
}

#[test]
fn a_damaged_artifact_is_reported_not_returned() {
    let dir = temp();
    let j = journal(dir.path());
    let sha = j.put_artifact(b"hello").unwrap();
    // Damage it behind the triggers' back, as a disk fault would.
    let conn = raw(j.path());
    conn.execute_batch("DROP TRIGGER artifacts_no_update")
        .unwrap();
    conn.execute("UPDATE artifacts SET bytes = x'68656c6c30'", [])
        .unwrap();
    let err = j.get_artifact(&sha).unwrap_err();
    assert!(matches!(err, Error::ArtifactMismatch { .. }), "{err:?}");
    assert!(err.to_string().contains(&j.path().display().to_string()));
}

#[test]
fn acceptance_specs_are_frozen_once_and_checked() {
    let dir = temp();
    let j = journal(dir.path());
    let contract =
        canonical_json(&json!({"checks": [{"kind": "file_exists", "path": "out/summary.md"}]}));
    let sha = sha256_hex(contract.as_bytes());
    assert!(j
        .store_acceptance_spec("desk_task", &sha, &contract)
        .unwrap());
    assert!(!j
        .store_acceptance_spec("desk_task", &sha, &contract)
        .unwrap());
    let spec = j.acceptance_spec(&sha).unwrap().unwrap();
    assert_eq!(spec.canonical_json, contract);
    assert_eq!(j.acceptance_specs("desk_task").unwrap().len(), 1);
    // A hash that does not match the text is refused.
    let err = j
        .store_acceptance_spec("desk_task", &"a".repeat(64), &contract)
        .unwrap_err();
    assert!(err.to_string().contains("not the SHA-256"), "{err}");
    // Runs can only name a stored contract.
    let mut run = NewRun::new(RunKind::Mission);
    run.contract_sha = Some("b".repeat(64));
    assert!(matches!(j.begin_run(&run), Err(Error::NotFound { .. })));
    run.contract_sha = Some(sha.clone());
    let id = j.begin_run(&run).unwrap();
    assert_eq!(j.run(id).unwrap().unwrap().contract_sha, Some(sha));
}

#[test]
fn tool_call_replay_lookup() {
    let dir = temp();
    let j = journal(dir.path());
    let run = j.begin_run(&NewRun::new(RunKind::Mission)).unwrap();
    let scope = CallScope::Run(run);
    let first = call(
        &scope,
        "c1",
        json!({"path": "a.txt", "replace": "x"}),
        CallOutcome::ApprovalRequired,
    );
    assert_eq!(j.find_tool_call(&scope, "c1").unwrap(), None);
    assert_eq!(
        j.check_replay(&scope, "c1", &first.fingerprint).unwrap(),
        Replay::New
    );

    // Asked first: no effect yet, so the same call is evaluated again.
    j.record_tool_call(&first).unwrap();
    assert_eq!(
        j.check_replay(&scope, "c1", &first.fingerprint).unwrap(),
        Replay::New
    );
    assert_eq!(
        j.find_tool_call(&scope, "c1").unwrap().unwrap().outcome,
        CallOutcome::ApprovalRequired
    );

    // Executed once: from now on it is replayed with the recorded result.
    let executed = CallRecord {
        outcome: CallOutcome::Executed,
        ..first.clone()
    };
    j.record_tool_call(&executed).unwrap();
    let found = j.find_tool_call(&scope, "c1").unwrap().unwrap();
    assert_eq!(found.outcome, CallOutcome::Executed);
    assert_eq!(found.fingerprint, first.fingerprint);
    assert_eq!(found.tool, "edit_file");
    assert_eq!(found.result, json!({"written": true}));
    match j.check_replay(&scope, "c1", &first.fingerprint).unwrap() {
        Replay::Executed { call } => assert_eq!(call.id, found.id),
        other => panic!("expected a replay, got {other:?}"),
    }
    // A second effect is refused.
    assert!(matches!(
        j.record_tool_call(&executed),
        Err(Error::Duplicate { .. })
    ));
    // The replay itself is recorded.
    j.record_tool_call(&CallRecord {
        outcome: CallOutcome::Replayed,
        ..first.clone()
    })
    .unwrap();

    // The same id with other arguments is an id conflict, and cannot be bound.
    let changed = call(
        &scope,
        "c1",
        json!({"path": "a.txt", "replace": "y"}),
        CallOutcome::Executed,
    );
    match j.check_replay(&scope, "c1", &changed.fingerprint).unwrap() {
        Replay::Conflict { bound } => assert_eq!(bound.fingerprint, first.fingerprint),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert!(matches!(
        j.record_tool_call(&changed),
        Err(Error::Duplicate { .. })
    ));
    // ...but the conflict itself can be recorded.
    j.record_tool_call(&CallRecord {
        outcome: CallOutcome::IdConflict,
        ..changed
    })
    .unwrap();
    let history = j.tool_call_history(&scope, "c1").unwrap();
    let outcomes: Vec<CallOutcome> = history.iter().map(|c| c.outcome).collect();
    assert_eq!(
        outcomes,
        [
            CallOutcome::ApprovalRequired,
            CallOutcome::Executed,
            CallOutcome::Replayed,
            CallOutcome::IdConflict
        ]
    );

    // Ids are scoped: the same id in another run or a workspace is another call.
    let ws = CallScope::Workspace("/ws".into());
    assert_eq!(j.find_tool_call(&ws, "c1").unwrap(), None);
    j.record_tool_call(&call(
        &ws,
        "c1",
        json!({"path": "b"}),
        CallOutcome::Executed,
    ))
    .unwrap();
    assert_eq!(
        j.find_tool_call(&ws, "c1").unwrap().unwrap().arguments,
        json!({"path": "b"})
    );
}

#[test]
fn invalid_calls_do_not_bind_their_id() {
    let dir = temp();
    let j = journal(dir.path());
    let scope = CallScope::Workspace("/ws".into());
    j.record_tool_call(&call(&scope, "c1", json!({"bad": 1}), CallOutcome::Invalid))
        .unwrap();
    let good = call(&scope, "c1", json!({"path": "a"}), CallOutcome::Executed);
    assert_eq!(
        j.check_replay(&scope, "c1", &good.fingerprint).unwrap(),
        Replay::New
    );
    j.record_tool_call(&good).unwrap();
}

#[test]
fn arguments_are_stored_as_canonical_json() {
    let dir = temp();
    let j = journal(dir.path());
    let scope = CallScope::Workspace("/ws".into());
    j.record_tool_call(&call(
        &scope,
        "c1",
        json!({"z": 1, "a": [1.0, "é"]}),
        CallOutcome::Denied,
    ))
    .unwrap();
    let stored: String = raw(j.path())
        .query_row("SELECT arguments FROM tool_calls", [], |r| r.get(0))
        .unwrap();
    assert_eq!(stored, r#"{"a":[1,"é"],"z":1}"#);
}

#[test]
fn run_trace_keeps_the_order_and_the_tokens() {
    let dir = temp();
    let j = journal(dir.path());
    let mut new = NewRun::new(RunKind::Mission);
    new.mission_id = Some("desk_task".into());
    new.model = Some("qwen2.5-coder-0.5b".into());
    let run = j.begin_run(&new).unwrap();
    let other = j.begin_run(&NewRun::new(RunKind::Bench)).unwrap();
    let attempt = j.begin_attempt(run, "direct").unwrap();
    let scope = CallScope::Run(run);
    for i in 1..=5 {
        let id = format!("c{i}");
        let mut step = NewStep::new(if i == 3 {
            StepKind::FormatError
        } else {
            StepKind::Action
        });
        step.attempt = Some(attempt);
        step.thought = Some(format!("thought {i}"));
        if i != 3 {
            step.action = Some("edit_file".into());
            step.call_id = Some(id.clone());
            j.record_tool_call(&call(&scope, &id, json!({"i": i}), CallOutcome::Executed))
                .unwrap();
        } else {
            step.reply = Some("not json".into());
        }
        step.prompt_tokens = Some(100 * i);
        step.completion_tokens = Some(10 * i);
        j.append_step(run, &step).unwrap();
        j.append_step(other, &NewStep::new(StepKind::Note)).unwrap();
        j.append_event(Some(run), "step", &json!({"i": i})).unwrap();
    }
    j.append_event(None, "recovery", &json!({})).unwrap();
    for (i, name) in ["exists", "content", "schema"].iter().enumerate() {
        j.record_check(
            run,
            &NewCheck {
                attempt: Some(attempt),
                kind: "file_exists".into(),
                name: (*name).into(),
                passed: i != 1,
                advisory: i == 2,
                facts: json!({"i": i}),
            },
        )
        .unwrap();
    }
    j.finish_attempt(attempt, "failed: content").unwrap();
    assert!(j.finish_attempt(attempt, "again").is_err());
    j.finish_run(run, RunStatus::Fail, &json!({"failed": ["content"]}))
        .unwrap();

    let trace = j.run_trace(run).unwrap();
    assert_eq!(trace.run.status, RunStatus::Fail);
    assert_eq!(trace.run.verdict, Some(json!({"failed": ["content"]})));
    assert_eq!(trace.run.steps, 5);
    assert_eq!(trace.run.prompt_tokens, 1500);
    assert_eq!(trace.run.completion_tokens, 150);
    let seqs: Vec<i64> = trace.steps.iter().map(|s| s.step.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5]);
    let thoughts: Vec<&str> = trace
        .steps
        .iter()
        .filter_map(|s| s.step.thought.as_deref())
        .collect();
    assert_eq!(
        thoughts,
        [
            "thought 1",
            "thought 2",
            "thought 3",
            "thought 4",
            "thought 5"
        ]
    );
    assert_eq!(trace.steps[2].step.kind, StepKind::FormatError);
    assert!(trace.steps[2].call.is_none());
    assert_eq!(
        trace.steps[3].call.as_ref().unwrap().arguments,
        json!({"i": 4})
    );
    assert_eq!(trace.steps[4].step.prompt_tokens, Some(500));
    assert_eq!(trace.tool_calls.len(), 4);
    let events: Vec<&serde_json::Value> = trace.events.iter().map(|e| &e.payload).collect();
    assert_eq!(
        events,
        [
            &json!({"i": 1}),
            &json!({"i": 2}),
            &json!({"i": 3}),
            &json!({"i": 4}),
            &json!({"i": 5})
        ]
    );
    let checks: Vec<(&str, bool, bool)> = trace
        .checks
        .iter()
        .map(|c| (c.name.as_str(), c.passed, c.advisory))
        .collect();
    assert_eq!(
        checks,
        [
            ("exists", true, false),
            ("content", false, false),
            ("schema", true, true)
        ]
    );
    assert_eq!(trace.attempts.len(), 1);
    assert_eq!(
        trace.attempts[0].outcome.as_deref(),
        Some("failed: content")
    );
    assert_eq!(j.global_events().unwrap().len(), 1);

    // The trace serialises for `rein journal show --json`.
    let text = serde_json::to_string(&trace).unwrap();
    assert!(text.contains("\"format_error\""));

    let runs = j.list_runs().unwrap();
    assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), [run, other]);
    assert_eq!(runs[1].status, RunStatus::Running);
    assert!(matches!(
        j.run_trace(rein_journal::RunId(999)),
        Err(Error::NotFound { .. })
    ));
}

#[test]
fn steps_refuse_an_attempt_of_another_run() {
    let dir = temp();
    let j = journal(dir.path());
    let a = j.begin_run(&NewRun::new(RunKind::Mission)).unwrap();
    let b = j.begin_run(&NewRun::new(RunKind::Mission)).unwrap();
    let attempt = j.begin_attempt(a, "direct").unwrap();
    let mut step = NewStep::new(StepKind::Action);
    step.attempt = Some(attempt);
    assert!(j.append_step(b, &step).is_err());
    assert!(j.append_step(a, &step).is_ok());
}

#[test]
fn two_connections_in_parallel_threads_both_get_their_writes_in() {
    let dir = temp();
    let path = dir.path().join("journal.db");
    let run = Journal::open(&path)
        .unwrap()
        .begin_run(&NewRun::new(RunKind::Bench))
        .unwrap();
    let workers: Vec<_> = (0..2)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                let j = Journal::open(&path).unwrap();
                for i in 0..50 {
                    j.append_event(Some(run), "tick", &json!({"w": w, "i": i}))
                        .unwrap();
                    j.append_step(run, &NewStep::new(StepKind::Note)).unwrap();
                    j.put_artifact(format!("{w}-{i}").as_bytes()).unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let trace = Journal::open(&path).unwrap().run_trace(run).unwrap();
    assert_eq!(trace.events.len(), 100);
    let seqs: Vec<i64> = trace.steps.iter().map(|s| s.step.seq).collect();
    assert_eq!(seqs, (1..=100).collect::<Vec<_>>());
}

#[test]
fn a_run_whose_process_ended_is_closed_as_interrupted_when_the_next_begins() {
    let Some(here) = rein_journal::jobs::host_key() else {
        eprintln!("no /proc here: nothing is ever judged dead, nothing to test");
        return;
    };
    let dir = temp();
    let j = journal(dir.path());
    let live = j.begin_run(&NewRun::new(RunKind::Bench)).unwrap();
    // Runs whose pid no process can have: one begun here, one under another boot or pid
    // namespace (a container sharing the journal), and one as rows written before owners were
    // recorded, naming none.
    let conn = raw(&dir.path().join("journal.db"));
    let insert = |pid: Option<i64>, started: Option<i64>, host: Option<&str>| {
        conn.execute(
            "INSERT INTO runs (kind, meta, started_at, owner_pid, owner_started, owner_host)
             VALUES ('bench', '{}', 1, ?1, ?2, ?3)",
            rusqlite::params![pid, started, host],
        )
        .unwrap();
        RunId(conn.last_insert_rowid())
    };
    let orphan = insert(Some(4_194_305), Some(1), Some(&here));
    let no_start = insert(Some(4_194_306), None, Some(&here));
    let foreign = insert(Some(4_194_307), Some(1), Some("another-boot/pid:[1]"));
    let legacy = insert(None, None, None);
    // Nothing rewrites a run's owner, not even as it finishes.
    for column in ["owner_pid = 1", "owner_started = 2", "owner_host = 'x'"] {
        let sql =
            format!("UPDATE runs SET {column}, status = 'aborted', finished_at = 5 WHERE id = ?1");
        assert!(conn.execute(&sql, [live.0]).is_err(), "{column}");
    }
    let next = j.begin_run(&NewRun::new(RunKind::Bench)).unwrap();
    for run in [orphan, no_start] {
        let closed = j.run_trace(run).unwrap();
        assert_eq!(closed.run.status, RunStatus::Aborted, "{run:?}");
        assert!(closed.run.finished_at.is_some());
        let verdict = closed.run.verdict.clone().unwrap();
        assert_eq!(verdict["interrupted"], json!(true));
        assert!(verdict["reason"]
            .as_str()
            .unwrap()
            .starts_with("interrupted: its process"));
        let note = closed
            .events
            .iter()
            .find(|e| e.kind == "interrupted")
            .expect("an interrupted event");
        assert!(note.payload["note"].as_str().unwrap().contains("pid 4194"));
    }
    for run in [live, foreign, legacy, next] {
        assert_eq!(
            j.run(run).unwrap().unwrap().status,
            RunStatus::Running,
            "{run:?}"
        );
    }
    // Closing is idempotent: nothing more to close.
    assert!(j.interrupt_orphaned_runs().unwrap().is_empty());
}
