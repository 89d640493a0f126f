#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Memory-sandbox runs through the agent loop with scripted models: every sandbox action,
//! isolation between runs, the stop at an unregistered tool, `final_answer` proving nothing, and
//! the judge over the final sandbox.

use std::collections::BTreeMap;
use std::path::Path;

use rein_engine::agent::{AgentOptions, RunEnd};
use rein_engine::checks::World;
use rein_engine::gate::AllowAll;
use rein_engine::memory::{run_memory, start_sandbox, MemoryRun, MemoryRunEnv, SandboxWorld};
use rein_engine::mission::{FrozenContract, Mission};
use rein_journal::Journal;
use rein_models::ScriptedModel;
use rein_workspace::Sandbox;
use serde_json::{json, Value};

const TOOLS: [&str; 7] = [
    "create_file",
    "read_file",
    "list_files",
    "delete_file",
    "set_variable",
    "get_variable",
    "final_answer",
];

/// A memory mission in a temp folder, with `inputs` as starting files.
fn mission(dir: &Path, checks: Value, inputs: &[(&str, &str)]) -> FrozenContract {
    for (p, c) in inputs {
        let f = dir.join("fixtures").join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, c).unwrap();
    }
    let m = json!({
        "id": "mem",
        "mode": "automatic",
        "prompt": "Do the task.",
        "inputs": inputs.iter().map(|(p, _)| *p).collect::<Vec<_>>(),
        "tools": TOOLS,
        "checks": checks,
        "budgets": {"max_turns": 10, "attempts_per_strategy": 1}
    });
    std::fs::write(dir.join("mission.json"), m.to_string()).unwrap();
    Mission::load(dir).unwrap()
}

fn action(tool: &str, params: Value) -> String {
    json!({"thought": "next", "action": tool, "parameters": params}).to_string()
}

fn script(lines: &[String]) -> ScriptedModel {
    ScriptedModel::from_str_named(&lines.join("\n"), Path::new("script.jsonl")).unwrap()
}

fn run(
    contract: &FrozenContract,
    journal: &Journal,
    start: Sandbox,
    lines: &[String],
) -> MemoryRun {
    let mut model = script(lines);
    let options = AgentOptions::for_mission(contract, rein_models::Model::identity(&model));
    run_memory(
        MemoryRunEnv {
            contract,
            mission_file: &contract.source,
            journal,
            meta: json!({}),
        },
        start,
        &mut model,
        &mut AllowAll,
        options,
        &mut |_| {},
    )
    .unwrap()
}

struct Setup {
    _dir: tempfile::TempDir,
    journal: Journal,
    contract: FrozenContract,
}

fn setup(checks: Value, inputs: &[(&str, &str)]) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("journal.db")).unwrap();
    let mdir = dir.path().join("m");
    std::fs::create_dir(&mdir).unwrap();
    let contract = mission(&mdir, checks, inputs);
    Setup {
        _dir: dir,
        journal,
        contract,
    }
}

fn outcomes(r: &MemoryRun) -> Vec<(String, String)> {
    r.actions
        .iter()
        .map(|a| (a.action.clone(), a.outcome.clone()))
        .collect()
}

#[test]
fn every_sandbox_action_runs_through_the_loop() {
    let s = setup(
        json!([
            {"id": "b", "kind": "file_exists", "path": "b.txt"},
            {"id": "a-gone", "kind": "file_absent", "path": "a.txt"},
            {"id": "v", "kind": "variable_set", "name": "k", "expected": "v1"},
            {"id": "all", "kind": "actions_called", "ordered": true, "tools": TOOLS}
        ]),
        &[],
    );
    let r = run(
        &s.contract,
        &s.journal,
        Sandbox::new(),
        &[
            action("create_file", json!({"path": "a.txt", "content": "one"})),
            action("read_file", json!({"path": "a.txt"})),
            action("list_files", json!({})),
            action("delete_file", json!({"path": "a.txt"})),
            action("set_variable", json!({"name": "k", "value": "v1"})),
            action("get_variable", json!({"name": "k"})),
            action("create_file", json!({"path": "b.txt", "content": "two"})),
            action("final_answer", json!({"answer": "done"})),
        ],
    );
    assert!(r.outcome.passed(), "{}", r.outcome.reason());
    assert_eq!(r.outcome.end, RunEnd::Judged);
    assert_eq!(
        r.sandbox.files,
        BTreeMap::from([("b.txt".to_string(), "two".to_string())])
    );
    assert_eq!(r.sandbox.variables["k"], json!("v1"));
    assert_eq!(r.sandbox.final_answer.as_deref(), Some("done"));
    assert_eq!(r.actions.len(), 8);
    assert!(
        r.actions.iter().all(|a| a.outcome == "executed"),
        "{:?}",
        r.actions
    );
    assert_eq!(r.actions[0].parameters["content"], "one");
    assert_eq!(r.outcome.figures.steps, 8);
    // The journal holds the steps and the final sandbox.
    let trace = s.journal.run_trace(r.outcome.run).unwrap();
    assert_eq!(trace.steps.len(), 8);
    let last = trace
        .events
        .iter()
        .find(|e| e.kind == "sandbox_final")
        .unwrap();
    assert_eq!(last.payload["files"]["b.txt"], "two");
    assert_eq!(last.payload["variables"]["k"], "v1");
}

#[test]
fn a_failing_action_is_logged_and_changes_nothing() {
    let s = setup(
        json!([{"id": "x", "kind": "file_exists", "path": "x.txt"}]),
        &[],
    );
    let r = run(
        &s.contract,
        &s.journal,
        Sandbox::new(),
        &[
            action("read_file", json!({"path": "missing.txt"})),
            action("get_variable", json!({"name": "nope"})),
            action("delete_file", json!({"path": "missing.txt"})),
            action(
                "create_file",
                json!({"path": "../escape.txt", "content": "x"}),
            ),
            action("final_answer", json!({"answer": "done"})),
        ],
    );
    let o = outcomes(&r);
    assert!(o[..4].iter().all(|(_, out)| out != "executed"), "{o:?}");
    assert!(r.sandbox.files.is_empty());
    assert!(!r.outcome.passed());
}

#[test]
fn each_run_starts_from_a_fresh_sandbox() {
    let s = setup(
        json!([{"id": "a", "kind": "file_exists", "path": "a.txt"}]),
        &[("seed.txt", "seeded\n")],
    );
    let fresh = || start_sandbox(&s.contract, &BTreeMap::new()).unwrap();
    let first = run(
        &s.contract,
        &s.journal,
        fresh(),
        &[
            action(
                "create_file",
                json!({"path": "a.txt", "content": "run one"}),
            ),
            action("delete_file", json!({"path": "seed.txt"})),
            action("final_answer", json!({"answer": "done"})),
        ],
    );
    assert!(first.outcome.passed(), "{}", first.outcome.reason());
    assert!(!first.sandbox.files.contains_key("seed.txt"));
    // Run 2 reads the file run 1 wrote: it is not there, and the seed file is back.
    let second = run(
        &s.contract,
        &s.journal,
        fresh(),
        &[
            action("read_file", json!({"path": "a.txt"})),
            action("final_answer", json!({"answer": "a.txt says run one"})),
        ],
    );
    assert_ne!(second.actions[0].outcome, "executed");
    assert!(!second.sandbox.files.contains_key("a.txt"));
    assert_eq!(second.sandbox.files["seed.txt"], "seeded\n");
    assert!(!second.outcome.passed(), "run 2 must not see run 1's file");
    assert_ne!(first.outcome.run, second.outcome.run);
}

#[test]
fn an_unregistered_tool_stops_the_run_and_nothing_after_it_executes() {
    let s = setup(
        json!([{"id": "bell", "kind": "file_exists", "path": "bell.txt"}]),
        &[],
    );
    let r = run(
        &s.contract,
        &s.journal,
        Sandbox::new(),
        &[
            action("ring_bell", json!({})),
            action(
                "create_file",
                json!({"path": "bell.txt", "content": "rang"}),
            ),
            action("final_answer", json!({"answer": "done"})),
        ],
    );
    assert!(!r.outcome.passed());
    assert!(
        matches!(r.outcome.end, RunEnd::UnknownTool { .. }),
        "{:?}",
        r.outcome.end
    );
    assert!(
        r.outcome.reason().contains("\"ring_bell\""),
        "{}",
        r.outcome.reason()
    );
    assert_eq!(r.outcome.exit_code(), 1);
    assert_eq!(outcomes(&r), [("ring_bell".into(), "invalid".into())]);
    assert!(
        r.sandbox.files.is_empty(),
        "nothing after the stop executed"
    );
    assert!(r.sandbox.actions.is_empty(), "the sandbox saw no call");
    assert_eq!(r.outcome.figures.steps, 1);
}

#[test]
fn claimed_success_with_nothing_done_fails() {
    let s = setup(
        json!([
            {"id": "note", "kind": "content_matches", "path": "note.txt", "pattern": "hello world"},
            {"id": "wrote", "kind": "actions_called", "tools": ["create_file"]}
        ]),
        &[],
    );
    let r = run(
        &s.contract,
        &s.journal,
        Sandbox::new(),
        &[action(
            "final_answer",
            json!({"answer": "I created note.txt with 'hello world' and read it back."}),
        )],
    );
    assert!(r.outcome.finish_accepted, "the answer ended the attempt");
    assert!(!r.outcome.passed(), "reaching final_answer proves nothing");
    assert_eq!(r.outcome.end, RunEnd::Judged);
    let reason = r.outcome.reason();
    assert!(
        reason.contains("note") && reason.contains("wrote"),
        "{reason}"
    );
    assert_eq!(r.outcome.exit_code(), 1);
}

#[test]
fn only_one_of_three_files_fails_on_the_missing_two() {
    let s = setup(
        json!([
            {"id": "a", "kind": "file_exists", "path": "a.txt"},
            {"id": "b", "kind": "file_exists", "path": "b.txt"},
            {"id": "c", "kind": "file_exists", "path": "c.txt"},
            {"id": "listed", "kind": "actions_called", "tools": ["list_files"]}
        ]),
        &[],
    );
    let r = run(
        &s.contract,
        &s.journal,
        Sandbox::new(),
        &[
            action("create_file", json!({"path": "c.txt", "content": "c"})),
            action(
                "final_answer",
                json!({"answer": "File 'c.txt' has been created successfully."}),
            ),
        ],
    );
    assert!(!r.outcome.passed());
    let failed: Vec<&str> = r
        .outcome
        .verdict
        .as_ref()
        .unwrap()
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(failed, ["a", "b", "listed"]);
}

#[test]
fn final_answer_ends_the_attempt_and_later_replies_are_never_asked() {
    let s = setup(
        json!([{"id": "a", "kind": "file_exists", "path": "a.txt"}]),
        &[],
    );
    let r = run(
        &s.contract,
        &s.journal,
        Sandbox::new(),
        &[
            action("final_answer", json!({"answer": "early"})),
            action("create_file", json!({"path": "a.txt", "content": "late"})),
        ],
    );
    assert_eq!(r.actions.len(), 1);
    assert!(r.sandbox.files.is_empty());
    assert!(!r.outcome.passed());
}

#[test]
fn starting_files_and_variables_are_seeded_and_judged() {
    let s = setup(
        json!([
            {"id": "gone", "kind": "file_absent", "path": "temp.txt"},
            {"id": "kept", "kind": "content_matches", "path": "keep.txt", "pattern": "keep me"},
            {"id": "city", "kind": "variable_set", "name": "city", "expected": "Lisbon"}
        ]),
        &[("keep.txt", "keep me\n"), ("temp.txt", "scratch\n")],
    );
    let vars = BTreeMap::from([("city".to_string(), "Lisbon".to_string())]);
    let start = start_sandbox(&s.contract, &vars).unwrap();
    assert_eq!(start.files.len(), 2);
    let r = run(
        &s.contract,
        &s.journal,
        start,
        &[
            action("delete_file", json!({"path": "temp.txt"})),
            action("final_answer", json!({"answer": "done"})),
        ],
    );
    assert!(r.outcome.passed(), "{}", r.outcome.reason());
}

#[test]
fn the_sandbox_world_reads_normalised_paths_and_variables() {
    let mut sb = Sandbox::new();
    sb.files.insert("dir/a.txt".into(), "x".into());
    sb.variables.insert("k".into(), json!("v"));
    let cell = std::cell::RefCell::new(sb);
    let w = SandboxWorld::new(&cell);
    assert_eq!(w.read("./dir//a.txt").unwrap(), Some(b"x".to_vec()));
    assert_eq!(w.read("dir/b.txt").unwrap(), None);
    assert!(w.read("../a.txt").is_err());
    assert_eq!(w.variable("k"), Some(json!("v")));
    assert_eq!(w.variable("nope"), None);
}

#[test]
fn a_starting_file_that_is_not_text_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("fixtures")).unwrap();
    std::fs::write(dir.path().join("fixtures/bin.dat"), [0xff, 0xfe, 0x00]).unwrap();
    let m = json!({
        "id": "mem", "mode": "automatic", "prompt": "x", "inputs": ["bin.dat"], "tools": TOOLS,
        "checks": [{"id": "a", "kind": "file_exists", "path": "bin.dat"}]
    });
    std::fs::write(dir.path().join("mission.json"), m.to_string()).unwrap();
    let c = Mission::load(dir.path()).unwrap();
    let e = start_sandbox(&c, &BTreeMap::new()).unwrap_err();
    assert!(e.to_string().contains("bin.dat"), "{e}");
}

#[test]
fn only_a_mission_without_finish_may_leave_out_its_deliverable() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = json!({
        "id": "mem", "mode": "automatic", "prompt": "x", "tools": ["create_file", "finish"],
        "checks": [{"id": "a", "kind": "file_exists", "path": "a.txt"}]
    });
    std::fs::write(dir.path().join("mission.json"), m.to_string()).unwrap();
    let e = Mission::load(dir.path()).unwrap_err().to_string();
    assert!(
        e.contains("required_artifact") && e.contains("finish"),
        "{e}"
    );
    m["tools"] = json!(["create_file", "final_answer"]);
    std::fs::write(dir.path().join("mission.json"), m.to_string()).unwrap();
    let c = Mission::load(dir.path()).unwrap();
    assert!(c.mission.required_artifact.is_empty());
    assert!(!c.canonical_json.contains("required_artifact"));
}

/// Found by the red team: the trace names the variable a `set_variable` call set, and that
/// call mutates, so `nothing_else_changed` read setting the asked variable as a change of a
/// file named `color` and failed every right run of a variable task.
#[test]
fn setting_the_asked_variable_is_no_change_of_another_file() {
    let checks = json!([
        {"id": "color-set", "kind": "variable_set", "name": "color", "expected": "blue"},
        {"id": "stored-then-read", "kind": "actions_called", "ordered": true, "tools": [
            {"tool": "set_variable", "path": "color"},
            {"tool": "get_variable", "path": "color", "after_last_write": true}
        ]},
        {"id": "nothing-else-changed", "kind": "nothing_else_changed"}
    ]);
    let s = setup(checks.clone(), &[]);
    let right = [
        action("set_variable", json!({"name": "color", "value": "blue"})),
        action("get_variable", json!({"name": "color"})),
        action("final_answer", json!({"answer": "blue"})),
    ];
    let r = run(&s.contract, &s.journal, Sandbox::new(), &right);
    assert!(r.outcome.passed(), "{}", r.outcome.reason());

    // The check still bites: a file the task never named is a change.
    let s = setup(checks.clone(), &[]);
    let extra = [
        action("set_variable", json!({"name": "color", "value": "blue"})),
        action("get_variable", json!({"name": "color"})),
        action("create_file", json!({"path": "color", "content": "blue"})),
        action("final_answer", json!({"answer": "blue"})),
    ];
    let r = run(&s.contract, &s.journal, Sandbox::new(), &extra);
    assert!(!r.outcome.passed());
    assert!(
        r.outcome.reason().contains("nothing-else-changed"),
        "{}",
        r.outcome.reason()
    );

    // And a read before the last set is no read back.
    let s = setup(checks, &[]);
    let early = [
        action("set_variable", json!({"name": "color", "value": "red"})),
        action("get_variable", json!({"name": "color"})),
        action("set_variable", json!({"name": "color", "value": "blue"})),
        action("final_answer", json!({"answer": "blue"})),
    ];
    let r = run(&s.contract, &s.journal, Sandbox::new(), &early);
    assert!(!r.outcome.passed());
    assert!(
        r.outcome.reason().contains("stored-then-read"),
        "{}",
        r.outcome.reason()
    );
}
