#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The execution gate's seven outcomes, including the seven checks of the gate fixture
//! (seeds/003): an unapproved mutation has no effect; a denied tool consumes no budget;
//! approval permits exactly one effect; replay after a checkpoint/restart does not duplicate
//! the effect; a reused id with changed arguments is rejected; the budget is checked before
//! execution; unknown tools fail validation.

use std::path::{Path, PathBuf};

use rein_engine::gate::{
    AllowAll, ApprovalDecision, CallExecutor, DenyAll, Gate, GateConfig, NoApprover,
    ScriptedApprover,
};
use rein_engine::policy::{Policy, PolicyAction, Rule};
use rein_journal::{CallOutcome, CallScope, ChangeState, Journal};
use rein_protocol::{GateOutcome, ToolCall};
use rein_workspace::{desk_registry, ToolRegistry, Workspace};
use serde_json::{json, Value};

struct Env {
    _dir: tempfile::TempDir,
    root: PathBuf,
    journal_path: PathBuf,
    registry: ToolRegistry,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("notes.txt"), "alpha\nbeta\n").unwrap();
        let journal_path = dir.path().join("home/journal.db");
        Env {
            _dir: dir,
            root,
            journal_path,
            registry: desk_registry(),
        }
    }

    fn workspace(&self) -> Workspace {
        Workspace::open(&self.root).unwrap()
    }

    fn journal(&self) -> Journal {
        Journal::open(&self.journal_path).unwrap()
    }

    fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(name)).ok()
    }
}

fn call(id: &str, tool: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        tool: tool.into(),
        arguments,
    }
}

fn edit(id: &str, replace: &str) -> ToolCall {
    call(
        id,
        "edit_file",
        json!({"path": "notes.txt", "old_text": "beta", "new_text": replace}),
    )
}

fn gate<'a>(
    env: &'a Env,
    ws: &'a Workspace,
    journal: &'a Journal,
    policy: Policy,
    budget: Option<u32>,
) -> Gate<'a> {
    Gate::new(GateConfig::desk(&env.registry, ws, journal, policy, budget))
}

fn committed_changes(journal: &Journal, ws: &Workspace) -> usize {
    journal
        .changes(&ws.display_root())
        .unwrap()
        .iter()
        .filter(|c| c.state == ChangeState::Committed)
        .count()
}

fn history(journal: &Journal, ws: &Workspace, id: &str) -> Vec<CallOutcome> {
    journal
        .tool_call_history(&CallScope::Workspace(ws.display_root()), id)
        .unwrap()
        .into_iter()
        .map(|c| c.outcome)
        .collect()
}

fn edit_args_key() -> &'static str {
    "old_text"
}

#[test]
fn the_edit_tool_takes_the_arguments_these_tests_use() {
    let env = Env::new();
    let schema = env.registry.schemas();
    let edit = schema
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "edit_file")
        .unwrap();
    assert!(
        edit["parameters"]["properties"]
            .get(edit_args_key())
            .is_some(),
        "{edit}"
    );
}

#[test]
fn the_seven_checks_of_the_gate_fixture() {
    let env = Env::new();
    let ws = env.workspace();
    let used_before_restart;
    {
        let journal = env.journal();
        let mut g = gate(&env, &ws, &journal, Policy::safe_default(), Some(3));
        let patch = edit("edit-1", "gamma");

        // 1. An unapproved patch has no effect.
        let r = g.submit(&patch, &mut NoApprover);
        assert_eq!(r.outcome, GateOutcome::ApprovalRequired, "{r:?}");
        assert_eq!(env.read("notes.txt").unwrap(), "alpha\nbeta\n");
        assert_eq!(g.budget_used(), 0);

        // 2. A denied tool consumes no execution budget.
        let deny = Policy::from_rules(vec![
            Rule::new("delete_file", &[], PolicyAction::Deny).unwrap()
        ]);
        let mut denying = gate(&env, &ws, &journal, deny, Some(3));
        let r = denying.submit(
            &call("cmd-1", "delete_file", json!({"path": "notes.txt"})),
            &mut AllowAll,
        );
        assert_eq!(r.outcome, GateOutcome::Denied, "{r:?}");
        assert_eq!(denying.budget_used(), 0);
        assert!(env.read("notes.txt").is_some());

        // 3. Explicit approval permits one effect.
        let r = g.submit(&patch, &mut AllowAll);
        assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
        assert_eq!(r.result["applied"], true);
        assert!(r.result["change_id"].as_i64().is_some());
        assert_eq!(r.result["path"], "notes.txt");
        assert!(r.result["diff"].as_str().unwrap().contains("+gamma"));
        assert_eq!(env.read("notes.txt").unwrap(), "alpha\ngamma\n");
        assert_eq!(g.budget_used(), 1);
        used_before_restart = g.budget_used();
    }
    // Checkpoint/restart: a new journal handle and a new gate resumed from the checkpoint.
    let journal = env.journal();
    let mut resumed = gate(&env, &ws, &journal, Policy::safe_default(), Some(1));
    resumed.resume_budget(used_before_restart);

    // 4. Checkpoint replay does not duplicate the effect.
    let r = resumed.submit(&edit("edit-1", "gamma"), &mut AllowAll);
    assert_eq!(r.outcome, GateOutcome::Replayed, "{r:?}");
    assert_eq!(r.result["applied"], true);
    assert_eq!(env.read("notes.txt").unwrap(), "alpha\ngamma\n");
    assert_eq!(committed_changes(&journal, &ws), 1);

    // 5. A reused id with changed arguments is rejected.
    let r = resumed.submit(&edit("edit-1", "different"), &mut AllowAll);
    assert_eq!(r.outcome, GateOutcome::IdConflict, "{r:?}");
    assert_eq!(env.read("notes.txt").unwrap(), "alpha\ngamma\n");

    // 6. The budget is checked before execution.
    let r = resumed.submit(
        &call("read-1", "read_file", json!({"path": "notes.txt"})),
        &mut AllowAll,
    );
    assert_eq!(r.outcome, GateOutcome::BudgetExhausted, "{r:?}");
    assert_eq!(resumed.budget_used(), 1);

    // 7. Unknown tools fail validation.
    let r = resumed.submit(&call("x", "unknown", json!({})), &mut AllowAll);
    assert_eq!(r.outcome, GateOutcome::Invalid, "{r:?}");
    assert!(r.reason.contains("unknown tool"), "{}", r.reason);

    // Every decision was journaled.
    assert_eq!(
        history(&journal, &ws, "edit-1"),
        vec![
            CallOutcome::ApprovalRequired,
            CallOutcome::Executed,
            CallOutcome::Replayed,
            CallOutcome::IdConflict
        ]
    );
    assert_eq!(history(&journal, &ws, "cmd-1"), vec![CallOutcome::Denied]);
    assert_eq!(
        history(&journal, &ws, "read-1"),
        vec![CallOutcome::BudgetExhausted]
    );
    assert_eq!(history(&journal, &ws, "x"), vec![CallOutcome::Invalid]);
}

#[test]
fn approval_is_asked_with_the_exact_diff_and_allows_only_that_call() {
    let env = Env::new();
    let ws = env.workspace();
    let journal = env.journal();
    let mut g = gate(&env, &ws, &journal, Policy::safe_default(), None);
    let mut person = ScriptedApprover::new([ApprovalDecision::AllowOnce]);
    let r = g.submit(&edit("e1", "gamma"), &mut person);
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    assert_eq!(person.seen.len(), 1);
    let asked = &person.seen[0];
    assert_eq!(asked.call_id, "e1");
    assert_eq!(asked.tool, "edit_file");
    assert_eq!(asked.path, "notes.txt");
    assert_eq!(asked.diff, r.result["diff"].as_str().unwrap());
    assert_eq!(
        asked.before_sha256.as_deref(),
        r.result["before_sha256"].as_str()
    );
    assert_eq!(
        asked.after_sha256.as_deref(),
        r.result["after_sha256"].as_str()
    );

    // The same approver has no more answers: the next change with a new id is not applied.
    let r = g.submit(
        &call(
            "e2",
            "create_file",
            json!({"path": "new.txt", "content": "x"}),
        ),
        &mut person,
    );
    assert_eq!(r.outcome, GateOutcome::ApprovalRequired, "{r:?}");
    assert!(env.read("new.txt").is_none());
    assert_eq!(
        r.result["proposal"], "create",
        "the pending diff is shown: {}",
        r.result
    );
}

#[test]
fn a_declined_change_writes_nothing_and_says_who_declined() {
    let env = Env::new();
    let ws = env.workspace();
    let journal = env.journal();
    let mut g = gate(&env, &ws, &journal, Policy::safe_default(), None);
    let r = g.submit(
        &call("d1", "delete_file", json!({"path": "notes.txt"})),
        &mut DenyAll,
    );
    assert_eq!(r.outcome, GateOutcome::ApprovalRequired);
    assert!(r.reason.contains("declined"), "{}", r.reason);
    assert!(env.read("notes.txt").is_some());
    assert_eq!(journal.changes(&ws.display_root()).unwrap().len(), 0);
}

#[test]
fn reads_are_allowed_by_default_and_replay_returns_the_recorded_result() {
    let env = Env::new();
    let ws = env.workspace();
    let journal = env.journal();
    let mut g = gate(&env, &ws, &journal, Policy::safe_default(), Some(5));
    let read = call("r1", "read_file", json!({"path": "notes.txt"}));
    let first = g.submit(&read, &mut NoApprover);
    assert_eq!(first.outcome, GateOutcome::Executed, "{first:?}");
    assert!(first.result.to_string().contains("beta"));
    std::fs::write(env.root.join("notes.txt"), "changed\n").unwrap();
    let again = g.submit(&read, &mut NoApprover);
    assert_eq!(again.outcome, GateOutcome::Replayed);
    assert_eq!(
        again.result, first.result,
        "the recorded result, not a second read"
    );
    assert_eq!(g.budget_used(), 1, "a replay consumes no budget");
}

#[test]
fn arguments_in_another_key_order_are_the_same_call() {
    let env = Env::new();
    let ws = env.workspace();
    let journal = env.journal();
    let mut g = gate(&env, &ws, &journal, Policy::safe_default(), None);
    let a: Value =
        serde_json::from_str(r#"{"path":"notes.txt","old_text":"beta","new_text":"z"}"#).unwrap();
    let b: Value =
        serde_json::from_str(r#"{"new_text":"z","old_text":"beta","path":"notes.txt"}"#).unwrap();
    assert_eq!(
        g.submit(&call("k", "edit_file", a), &mut AllowAll).outcome,
        GateOutcome::Executed
    );
    assert_eq!(
        g.submit(&call("k", "edit_file", b), &mut AllowAll).outcome,
        GateOutcome::Replayed
    );
    assert_eq!(
        g.submit(
            &call("k", "create_file", json!({"path": "n", "content": ""})),
            &mut AllowAll
        )
        .outcome,
        GateOutcome::IdConflict
    );
}

#[test]
fn malformed_ids_are_invalid_and_still_journaled() {
    let env = Env::new();
    let ws = env.workspace();
    let journal = env.journal();
    let mut g = gate(&env, &ws, &journal, Policy::safe_default(), Some(1));
    let long = "a".repeat(129);
    for bad in [
        "",
        "has space",
        "slash/x",
        "semi;colon",
        "é",
        long.as_str(),
        "nul\0",
    ] {
        let r = g.submit(
            &call(bad, "read_file", json!({"path": "notes.txt"})),
            &mut AllowAll,
        );
        assert_eq!(r.outcome, GateOutcome::Invalid, "{bad:?}: {r:?}");
        assert!(r.reason.contains("call id"), "{}", r.reason);
        assert!(!r.reason.contains("warning"), "recorded: {}", r.reason);
        let key = rein_engine::gate::invalid_id_key(bad);
        assert_eq!(history(&journal, &ws, &key), vec![CallOutcome::Invalid]);
    }
    let ok = "A-z_0.9:x".to_string() + &"b".repeat(119);
    assert_eq!(ok.len(), 128);
    let r = g.submit(
        &call(&ok, "read_file", json!({"path": "notes.txt"})),
        &mut AllowAll,
    );
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    assert_eq!(g.budget_used(), 1, "invalid calls consumed no budget");
}

#[test]
fn bad_arguments_are_invalid_and_consume_no_budget() {
    let env = Env::new();
    let ws = env.workspace();
    let journal = env.journal();
    let mut g = gate(&env, &ws, &journal, Policy::safe_default(), Some(1));
    let cases = [
        json!({"path": 7}),
        json!({}),
        json!(["notes.txt"]),
        json!(null),
        json!({"path": "notes.txt", "extra": true}),
        json!({"path": "x".repeat(32_001)}),
        json!({"path": "../outside.txt"}),
        json!({"path": "/etc/passwd"}),
        json!({"path": "missing.txt"}),
    ];
    for (i, args) in cases.into_iter().enumerate() {
        let r = g.submit(
            &call(&format!("bad-{i}"), "read_file", args.clone()),
            &mut AllowAll,
        );
        assert_eq!(r.outcome, GateOutcome::Invalid, "{args}: {r:?}");
        assert!(!r.reason.is_empty());
    }
    assert_eq!(g.budget_used(), 0);
    // An invalid call does not bind its id: fixed, the same id runs.
    let r = g.submit(
        &call("bad-8", "read_file", json!({"path": "notes.txt"})),
        &mut AllowAll,
    );
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
}

#[test]
fn a_change_outside_the_workspace_is_invalid_and_nothing_is_written() {
    let env = Env::new();
    let ws = env.workspace();
    let journal = env.journal();
    let mut g = gate(&env, &ws, &journal, Policy::safe_default(), None);
    for (i, path) in ["../escape.txt", "a/../../b", "CON", "x\u{0}y"]
        .iter()
        .enumerate()
    {
        let r = g.submit(
            &call(
                &format!("c{i}"),
                "create_file",
                json!({"path": path, "content": "x"}),
            ),
            &mut AllowAll,
        );
        assert_eq!(r.outcome, GateOutcome::Invalid, "{path:?}: {r:?}");
    }
    assert!(!env.root.parent().unwrap().join("escape.txt").exists());
}

#[test]
fn unknown_tools_never_run_even_when_policy_allows_everything() {
    let env = Env::new();
    let ws = env.workspace();
    let journal = env.journal();
    let policy = Policy::from_rules(vec![Rule::new("*", &[], PolicyAction::Allow).unwrap()]);
    let mut g = gate(&env, &ws, &journal, policy, None);
    for tool in ["shell", "run_command", "", "READ_FILE", "read_file "] {
        let r = g.submit(
            &call("u", tool, json!({"path": "notes.txt"})),
            &mut AllowAll,
        );
        assert_eq!(r.outcome, GateOutcome::Invalid, "{tool:?}");
    }
}

#[test]
fn policy_allow_applies_without_asking_and_ask_on_a_read_asks_first() {
    let env = Env::new();
    let ws = env.workspace();
    let journal = env.journal();
    let policy = Policy::from_rules(vec![
        Rule::new("create_file", &["drafts/**"], PolicyAction::Allow).unwrap(),
        Rule::new("read_file", &[], PolicyAction::Ask).unwrap(),
    ]);
    let mut g = gate(&env, &ws, &journal, policy, None);
    let mut nobody = ScriptedApprover::new([]);
    let r = g.submit(
        &call(
            "a1",
            "create_file",
            json!({"path": "drafts/a.txt", "content": "hi"}),
        ),
        &mut nobody,
    );
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    assert!(nobody.seen.is_empty());
    assert_eq!(env.read("drafts/a.txt").unwrap(), "hi");
    let r = g.submit(
        &call(
            "a2",
            "create_file",
            json!({"path": "b.txt", "content": "hi"}),
        ),
        &mut nobody,
    );
    assert_eq!(r.outcome, GateOutcome::ApprovalRequired);
    let r = g.submit(
        &call("a3", "read_file", json!({"path": "notes.txt"})),
        &mut nobody,
    );
    assert_eq!(r.outcome, GateOutcome::ApprovalRequired);
    assert_eq!(r.result, Value::Null, "nothing was read");
    assert_eq!(nobody.seen.len(), 2);
}

#[test]
fn a_stale_pre_image_is_refused_and_nothing_is_written() {
    struct EditsBehindYourBack(PathBuf);
    impl rein_engine::gate::Approver for EditsBehindYourBack {
        fn decide(&mut self, _: &rein_engine::gate::ApprovalRequest) -> ApprovalDecision {
            std::fs::write(&self.0, "someone else's edit\n").unwrap();
            ApprovalDecision::AllowOnce
        }
    }
    let env = Env::new();
    let ws = env.workspace();
    let journal = env.journal();
    let mut g = gate(&env, &ws, &journal, Policy::safe_default(), Some(5));
    let mut approver = EditsBehindYourBack(env.root.join("notes.txt"));
    let r = g.submit(&edit("s1", "gamma"), &mut approver);
    assert_eq!(r.outcome, GateOutcome::ApprovalRequired, "{r:?}");
    assert!(
        r.reason.contains("changed after the change was proposed"),
        "{}",
        r.reason
    );
    assert_eq!(env.read("notes.txt").unwrap(), "someone else's edit\n");
    assert_eq!(g.budget_used(), 0);
    assert!(ws.stale_temps().unwrap().is_empty());

    // A file that vanishes between proposal and apply is refused the same way.
    struct Deletes(PathBuf);
    impl rein_engine::gate::Approver for Deletes {
        fn decide(&mut self, _: &rein_engine::gate::ApprovalRequest) -> ApprovalDecision {
            std::fs::remove_file(&self.0).unwrap();
            ApprovalDecision::AllowOnce
        }
    }
    let r = g.submit(
        &call(
            "s2",
            "replace_file",
            json!({"path": "notes.txt", "content": "new\n"}),
        ),
        &mut Deletes(env.root.join("notes.txt")),
    );
    assert_eq!(r.outcome, GateOutcome::ApprovalRequired, "{r:?}");
    assert!(r.reason.contains("absent"), "{}", r.reason);
    assert!(env.read("notes.txt").is_none());
}

#[test]
fn create_and_delete_apply_once_each() {
    let env = Env::new();
    let ws = env.workspace();
    let journal = env.journal();
    let mut g = gate(&env, &ws, &journal, Policy::safe_default(), None);
    let create = call(
        "c",
        "create_file",
        json!({"path": "deep/er/new.txt", "content": "hello"}),
    );
    let r = g.submit(&create, &mut AllowAll);
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    assert_eq!(r.result["kind"], "created");
    assert_eq!(env.read("deep/er/new.txt").unwrap(), "hello");
    let delete = call("d", "delete_file", json!({"path": "deep/er/new.txt"}));
    let r = g.submit(&delete, &mut AllowAll);
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    assert_eq!(r.result["kind"], "deleted");
    assert!(env.read("deep/er/new.txt").is_none());
    // Retrying both replays; the create does not come back.
    assert_eq!(
        g.submit(&create, &mut AllowAll).outcome,
        GateOutcome::Replayed
    );
    assert_eq!(
        g.submit(&delete, &mut AllowAll).outcome,
        GateOutcome::Replayed
    );
    assert!(env.read("deep/er/new.txt").is_none());
    assert_eq!(committed_changes(&journal, &ws), 2);
}

#[test]
fn a_journal_that_is_not_a_journal_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path: &Path = &dir.path().join("journal.db");
    let garbage = b"this is not sqlite at all, just bytes................".to_vec();
    std::fs::write(path, &garbage).unwrap();
    let err = Journal::open(path).unwrap_err().to_string();
    assert!(err.contains("journal.db"), "{err}");
    assert_eq!(std::fs::read(path).unwrap(), garbage, "left untouched");
}

#[test]
fn a_run_scoped_gate_applies_once_per_run_and_undo_works_on_its_changes() {
    use rein_engine::gate::GateTarget;
    use rein_journal::{NewRun, RunKind};
    let env = Env::new();
    let ws = env.workspace();
    let journal = env.journal();
    let run_gate = |run| {
        Gate::new(GateConfig {
            registry: &env.registry,
            target: GateTarget::Desk(&ws),
            journal: &journal,
            scope: CallScope::Run(run),
            policy: Policy::safe_default(),
            budget: None,
        })
    };
    let first = journal.begin_run(&NewRun::new(RunKind::Mission)).unwrap();
    let create = call(
        "step-1",
        "create_file",
        json!({"path": "out.txt", "content": "1"}),
    );
    let mut g = run_gate(first);
    assert_eq!(
        g.submit(&create, &mut AllowAll).outcome,
        GateOutcome::Executed
    );
    assert_eq!(
        g.submit(&create, &mut AllowAll).outcome,
        GateOutcome::Replayed
    );
    // The same call id in another run is another call (here refused: the file now exists).
    let second = journal.begin_run(&NewRun::new(RunKind::Mission)).unwrap();
    let r = run_gate(second).submit(&create, &mut AllowAll);
    assert_eq!(r.outcome, GateOutcome::Invalid, "{r:?}");
    assert!(r.reason.contains("already exists"), "{}", r.reason);
    // Changes of a run are listed under the workspace and can be undone.
    let changes = journal.changes(&ws.display_root()).unwrap();
    assert_eq!(changes.len(), 1);
    rein_engine::undo::undo(&journal, &ws, changes[0].id).unwrap();
    assert!(env.read("out.txt").is_none());
}

/// Issue 8 item 4: an approval given ahead of time names the pre-image of the diff that was
/// shown. When the file was edited since, the approval does not cover the new diff: nothing is
/// written, and the person's edit stays.
#[test]
fn an_approval_given_ahead_of_time_is_bound_to_the_pre_image_it_was_shown() {
    use rein_engine::gate::{PreImage, PreImageApprover};
    let env = Env::new();
    let ws = env.workspace();
    let journal = env.journal();
    let mut g = gate(&env, &ws, &journal, Policy::safe_default(), None);
    let replace = |id: &str| {
        call(
            id,
            "replace_file",
            json!({"path": "notes.txt", "content": "alpha\nbeta\ngamma\n"}),
        )
    };
    // Step 1: the diff is shown, with its pre-image.
    let shown = g.submit(&replace("p1"), &mut NoApprover);
    assert_eq!(shown.outcome, GateOutcome::ApprovalRequired, "{shown:?}");
    let sha = shown.result["before_sha256"].as_str().unwrap().to_string();
    assert!(
        shown.reason.contains(&format!("--expect-before {sha}")),
        "{}",
        shown.reason
    );
    // The person edits the file; then the approval for the old diff arrives.
    std::fs::write(env.root.join("notes.txt"), "alpha\nbeta\nmy own line\n").unwrap();
    let mut approval = PreImageApprover::expecting(PreImage::Sha256(sha.clone()));
    let r = g.submit(&replace("p1"), &mut approval);
    assert_eq!(r.outcome, GateOutcome::ApprovalRequired, "{r:?}");
    assert!(r.reason.contains("now holds"), "{}", r.reason);
    assert!(r.reason.contains(&sha), "{}", r.reason);
    assert_eq!(env.read("notes.txt").unwrap(), "alpha\nbeta\nmy own line\n");
    assert_eq!(journal.changes(&ws.display_root()).unwrap().len(), 0);
    // The new diff, approved with its own pre-image, applies.
    let new_sha = r.result["before_sha256"].as_str().unwrap().to_string();
    assert_ne!(new_sha, sha);
    assert!(r.result["diff"].as_str().unwrap().contains("-my own line"));
    let mut approval = PreImageApprover::expecting(PreImage::parse(&new_sha).unwrap());
    let r = g.submit(&replace("p1"), &mut approval);
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    assert_eq!(env.read("notes.txt").unwrap(), "alpha\nbeta\ngamma\n");
}

#[test]
fn an_approval_without_a_pre_image_only_creates_new_files() {
    use rein_engine::gate::{PreImage, PreImageApprover};
    let env = Env::new();
    let ws = env.workspace();
    let journal = env.journal();
    let mut g = gate(&env, &ws, &journal, Policy::safe_default(), None);
    let r = g.submit(&edit("u1", "gamma"), &mut PreImageApprover::unstated());
    assert_eq!(r.outcome, GateOutcome::ApprovalRequired, "{r:?}");
    assert!(r.reason.contains("--expect-before"), "{}", r.reason);
    assert_eq!(env.read("notes.txt").unwrap(), "alpha\nbeta\n");
    let create = call(
        "u2",
        "create_file",
        json!({"path": "new.txt", "content": "n\n"}),
    );
    let r = g.submit(&create, &mut PreImageApprover::unstated());
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    // "absent" stated for a file that exists is refused as well.
    let r = g.submit(
        &call("u3", "delete_file", json!({"path": "new.txt"})),
        &mut PreImageApprover::expecting(PreImage::Absent),
    );
    assert_eq!(r.outcome, GateOutcome::ApprovalRequired, "{r:?}");
    assert!(env.read("new.txt").is_some());
    // A read asked about under a strict policy changes no file: any approval covers it.
    let strict = Policy::from_rules(vec![Rule::new("read_file", &[], PolicyAction::Ask).unwrap()]);
    let mut g = gate(&env, &ws, &journal, strict, None);
    let r = g.submit(
        &call("u4", "read_file", json!({"path": "notes.txt"})),
        &mut PreImageApprover::expecting(PreImage::Sha256("ab".repeat(32))),
    );
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    // Pre-images as people write them.
    assert_eq!(PreImage::parse("absent").unwrap(), PreImage::Absent);
    let upper = "AB".repeat(32);
    assert_eq!(
        PreImage::parse(&upper).unwrap(),
        PreImage::Sha256("ab".repeat(32))
    );
    for bad in ["", "abc", &"g".repeat(64)] {
        assert!(PreImage::parse(bad).is_err(), "{bad:?}");
    }
}

/// Verified sampling's preview: the change as the gate would compute it, and nothing else:
/// no write, no journal record, no budget; refused for a read, a call policy denies, a file
/// whose content policy protects, and an argument the tool's schema refuses.
#[test]
fn a_preview_computes_the_change_and_records_nothing() {
    let env = Env::new();
    let ws = env.workspace();
    let journal = env.journal();
    let g = gate(&env, &ws, &journal, Policy::safe_default(), Some(1));
    let p = g.preview(&edit("p-1", "gamma")).unwrap();
    assert_eq!(p.after.as_deref(), Some(&b"alpha\ngamma\n"[..]));
    assert_eq!(env.read("notes.txt").unwrap(), "alpha\nbeta\n");
    assert!(
        history(&journal, &ws, "p-1").is_empty(),
        "a preview is not a gate record"
    );
    assert_eq!(committed_changes(&journal, &ws), 0);
    let read = g.preview(&call("p-2", "read_file", json!({"path": "notes.txt"})));
    assert!(read.unwrap_err().contains("changes nothing"));
    let bad = g.preview(&call("p-3", "edit_file", json!({"path": "notes.txt"})));
    assert!(bad.is_err());

    let deny = Policy::from_rules(vec![
        Rule::new("edit_file", &[], PolicyAction::Deny).unwrap()
    ]);
    let g = gate(&env, &ws, &journal, deny, None);
    assert!(g.preview(&edit("p-4", "x")).unwrap_err().contains("denies"));

    let protect = Policy::from_rules(vec![
        Rule::new("edit_file", &[], PolicyAction::Allow).unwrap(),
        Rule::new("read_file", &["notes.txt"], PolicyAction::Ask).unwrap(),
    ]);
    let g = gate(&env, &ws, &journal, protect, None);
    assert!(g
        .preview(&edit("p-5", "x"))
        .unwrap_err()
        .contains("protects"));
}
