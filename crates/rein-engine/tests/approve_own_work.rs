#![allow(clippy::unwrap_used, clippy::expect_used)]

//! `rein run --approve=all` approves the run's own work, nothing else. Before, it approved
//! every change (`AllowAll`): a file a person saved into the folder while a run was going was
//! deleted by the model's `delete_file` without anyone being asked (seen end to end with a
//! model that waited for the file to appear).

mod desk_support;

use desk_support::call;

use rein_engine::gate::{CallExecutor, OwnWorkApprover};
use rein_engine::policy::{PolicyAction, Rule};
use rein_protocol::GateOutcome;
use rein_workspace::desk_registry;
use serde_json::json;

#[test]
fn approving_up_front_covers_the_runs_editable_files_and_writes_but_not_a_file_that_appeared() {
    // a.txt is an editable file of the mission, which the run copied in: its hash is known.
    let env = desk_support::env("input\n");
    let input_sha = rein_protocol::canonical::sha256_hex(b"input\n");
    let registry = desk_registry();
    let mut gate = env.gate(&registry);
    let mut approver = OwnWorkApprover::new([("a.txt".to_string(), input_sha)]);

    let steps = [
        call(
            "c1",
            "edit_file",
            json!({"path": "a.txt", "old_text": "input", "new_text": "edited"}),
        ),
        call(
            "c2",
            "create_file",
            json!({"path": "out/report.md", "content": "draft\n"}),
        ),
        call(
            "c3",
            "replace_file",
            json!({"path": "out/report.md", "content": "final\n"}),
        ),
    ];
    for step in &steps {
        let r = gate.submit(step, &mut approver);
        assert_eq!(r.outcome, GateOutcome::Executed, "{}: {r:?}", step.id);
    }
    // A person saves a file into the folder meanwhile: the run may not touch it, nor a file
    // of the run that the person has since edited.
    std::fs::write(env.root.join("thesis.md"), "three years of work\n").unwrap();
    std::fs::write(env.root.join("out/report.md"), "the person's version\n").unwrap();
    for (id, tool, args) in [
        ("c4", "delete_file", json!({"path": "thesis.md"})),
        (
            "c5",
            "replace_file",
            json!({"path": "thesis.md", "content": "x"}),
        ),
        ("c6", "delete_file", json!({"path": "out/report.md"})),
    ] {
        let r = gate.submit(&call(id, tool, args), &mut approver);
        assert_eq!(r.outcome, GateOutcome::ApprovalRequired, "{id}: {r:?}");
        assert!(r.reason.contains("did not put there"), "{r:?}");
    }
    assert_eq!(env.read("thesis.md").unwrap(), "three years of work\n");
    assert_eq!(env.read("out/report.md").unwrap(), "the person's version\n");
    assert_eq!(env.read("a.txt").unwrap(), "edited\n");
}

#[test]
fn approving_up_front_is_no_answer_to_a_read_that_policy_asks_about() {
    // Approving the run's own writes up front used to approve every request with no content
    // before it, and a read that policy asks about is one: the secret was read and shown.
    let env = desk_support::env("input\n");
    std::fs::create_dir(env.root.join("secrets")).unwrap();
    std::fs::write(env.root.join("secrets/key.txt"), "hunter2\n").unwrap();
    let registry = desk_registry();
    let rules = vec![
        Rule::new("read_file", &["secrets/**"], PolicyAction::Ask).unwrap(),
        Rule::new("search_text", &[], PolicyAction::Ask).unwrap(),
    ];
    let mut gate = env.gate_with(&registry, rules);
    let a_sha = rein_protocol::canonical::sha256_hex(b"input\n");
    let mut approver = OwnWorkApprover::new([("a.txt".to_string(), a_sha)]);
    for (id, tool, args) in [
        ("r1", "read_file", json!({"path": "secrets/key.txt"})),
        ("r2", "read_file", json!({"path": "./secrets//key.txt"})),
        ("r3", "search_text", json!({"pattern": "hunter"})),
    ] {
        let r = gate.submit(&call(id, tool, args), &mut approver);
        assert_eq!(r.outcome, GateOutcome::ApprovalRequired, "{id}: {r:?}");
        assert!(r.reason.contains("policy asks about"), "{id}: {r:?}");
        assert!(!r.result.to_string().contains("hunter2"), "{id}: {r:?}");
    }
    // A read policy allows still needs no one, and the run's own edit is still approved.
    let r = gate.submit(
        &call("r4", "read_file", json!({"path": "a.txt"})),
        &mut approver,
    );
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    let r = gate.submit(
        &call(
            "r5",
            "edit_file",
            json!({"path": "a.txt", "old_text": "input", "new_text": "edited"}),
        ),
        &mut approver,
    );
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
}

#[test]
fn an_edit_of_the_runs_own_file_whose_reading_policy_asks_is_not_approved_up_front() {
    // The edit's tool must read the file to work out its change; the person's policy asks
    // before that read, so approving up front does not cover it, even for an editable file.
    let env = desk_support::env("input\n");
    let registry = desk_registry();
    let rules = vec![Rule::new("read_file", &["a.txt"], PolicyAction::Ask).unwrap()];
    let mut gate = env.gate_with(&registry, rules);
    let a_sha = rein_protocol::canonical::sha256_hex(b"input\n");
    let mut approver = OwnWorkApprover::new([("a.txt".to_string(), a_sha)]);
    for (id, old) in [("e1", "input"), ("e2", "a guess")] {
        let r = gate.submit(
            &call(
                id,
                "edit_file",
                json!({"path": "a.txt", "old_text": old, "new_text": "edited"}),
            ),
            &mut approver,
        );
        // A right guess and a wrong one end the same way, so the answer says nothing of
        // the file.
        assert_eq!(r.outcome, GateOutcome::ApprovalRequired, "{id}: {r:?}");
        assert!(r.reason.contains("policy asks about"), "{id}: {r:?}");
    }
    assert_eq!(env.read("a.txt").unwrap(), "input\n");
}
