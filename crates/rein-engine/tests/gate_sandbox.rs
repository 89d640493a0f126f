#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The gate over the bench's in-memory sandbox: changes apply in memory only when allowed,
//! and replay and id conflicts hold as on a real folder.

use rein_engine::gate::{
    AllowAll, ApprovalDecision, CallExecutor, Gate, GateConfig, GateTarget, NoApprover,
    ScriptedApprover,
};
use rein_engine::policy::{Policy, PolicyAction, Rule};
use rein_journal::{CallScope, Journal};
use rein_protocol::{GateOutcome, ToolCall};
use rein_workspace::{sandbox_registry, Sandbox};
use serde_json::{json, Value};

fn call(id: &str, tool: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        tool: tool.into(),
        arguments,
    }
}

#[test]
fn sandbox_changes_wait_for_approval_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("journal.db")).unwrap();
    let registry = sandbox_registry();
    let mut sandbox = Sandbox::new();
    sandbox.files.insert("a.txt".into(), "one\n".into());
    {
        let mut gate = Gate::new(GateConfig {
            registry: &registry,
            target: GateTarget::Sandbox(&mut sandbox),
            journal: &journal,
            scope: CallScope::Workspace("sandbox:task-1".into()),
            policy: Policy::safe_default(),
            budget: Some(10),
        });
        let create = call(
            "c1",
            "create_file",
            json!({"path": "a.txt", "content": "two\n"}),
        );
        let r = gate.submit(&create, &mut NoApprover);
        assert_eq!(r.outcome, GateOutcome::ApprovalRequired);
        assert_eq!(gate.sandbox().unwrap().files["a.txt"], "one\n");
        assert!(gate.sandbox().unwrap().actions.is_empty(), "nothing ran");

        let mut person = ScriptedApprover::new([ApprovalDecision::AllowOnce]);
        let r = gate.submit(&create, &mut person);
        assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
        assert!(
            person.seen[0].diff.contains("-one") && person.seen[0].diff.contains("+two"),
            "{:?}",
            person.seen[0]
        );
        assert_eq!(person.seen[0].path, "a.txt");
        assert!(person.seen[0].before_sha256.is_some());

        let r = gate.submit(&create, &mut AllowAll);
        assert_eq!(r.outcome, GateOutcome::Replayed);
        let changed = call(
            "c1",
            "create_file",
            json!({"path": "a.txt", "content": "three\n"}),
        );
        assert_eq!(
            gate.submit(&changed, &mut AllowAll).outcome,
            GateOutcome::IdConflict
        );

        let r = gate.submit(
            &call("r1", "read_file", json!({"path": "a.txt"})),
            &mut NoApprover,
        );
        assert_eq!(r.outcome, GateOutcome::Executed);
        assert_eq!(r.result["content"], "two\n");

        let mut person = ScriptedApprover::new([ApprovalDecision::AllowOnce]);
        let r = gate.submit(
            &call(
                "v1",
                "set_variable",
                json!({"name": "total", "value": "42"}),
            ),
            &mut person,
        );
        assert_eq!(r.outcome, GateOutcome::Executed);
        assert!(
            person.seen[0]
                .diff
                .contains("variable total: unset -> \"42\""),
            "{}",
            person.seen[0].diff
        );

        // A failed call is invalid, consumes no budget, and is seen in the action log.
        let r = gate.submit(
            &call("d1", "delete_file", json!({"path": "missing"})),
            &mut AllowAll,
        );
        assert_eq!(r.outcome, GateOutcome::Invalid);
        assert_eq!(gate.budget_used(), 3);
        assert_eq!(
            gate.submit(&call("u1", "shell", json!({})), &mut AllowAll)
                .outcome,
            GateOutcome::Invalid
        );
    }
    assert_eq!(sandbox.files["a.txt"], "two\n");
    assert_eq!(sandbox.variables["total"], json!("42"));
    assert!(sandbox.called("create_file"));
    assert!(!sandbox.called("delete_file"));
    assert_eq!(sandbox.actions.len(), 4, "{:?}", sandbox.actions);
}

#[test]
fn a_bench_policy_can_allow_every_sandbox_tool() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("journal.db")).unwrap();
    let registry = sandbox_registry();
    let mut sandbox = Sandbox::new();
    let policy = Policy::from_rules(vec![Rule::new("*", &[], PolicyAction::Allow).unwrap()]);
    let mut gate = Gate::new(GateConfig {
        registry: &registry,
        target: GateTarget::Sandbox(&mut sandbox),
        journal: &journal,
        scope: CallScope::Workspace("sandbox:task-2".into()),
        policy,
        budget: Some(1),
    });
    let r = gate.submit(
        &call("f", "final_answer", json!({"answer": "7"})),
        &mut NoApprover,
    );
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    let r = gate.submit(&call("g", "list_files", json!({})), &mut NoApprover);
    assert_eq!(r.outcome, GateOutcome::BudgetExhausted);
    assert_eq!(gate.sandbox().unwrap().final_answer.as_deref(), Some("7"));
}
