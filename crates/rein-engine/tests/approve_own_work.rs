#![allow(clippy::unwrap_used, clippy::expect_used)]

//! `rein run --approve=all` approves the run's own work, nothing else. Before, it approved
//! every change (`AllowAll`): a file a person saved into the folder while a run was going was
//! deleted by the model's `delete_file` without anyone being asked (seen end to end with a
//! model that waited for the file to appear).

mod desk_support;

use rein_engine::gate::{CallExecutor, OwnWorkApprover};
use rein_protocol::{GateOutcome, ToolCall};
use rein_workspace::desk_registry;
use serde_json::{json, Value};

fn call(id: &str, tool: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        tool: tool.into(),
        arguments,
    }
}

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
