#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Memory-sandbox tasks end to end with scripted models: `rein bench --task` (its JSON object,
//! exit codes, the unknown-tool stop) and `rein bench suites/toy` (results carry the final
//! sandbox and the action log; each run starts fresh).

#[path = "bench_support/mod.rs"]
mod bench_support;

use bench_support::{rein, repo};
use std::path::Path;
use std::process::Output;

use serde_json::{json, Value};

/// A scripted model answering with these actions, in order.
fn script(dir: &Path, name: &str, actions: &[(&str, Value)]) -> String {
    let text: Vec<String> = actions
        .iter()
        .map(|(a, p)| json!({"thought": "next", "action": a, "parameters": p}).to_string())
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, text.join("\n")).unwrap();
    format!("scripted:{}", path.display())
}

fn note_script(dir: &Path) -> String {
    script(
        dir,
        "note.jsonl",
        &[
            (
                "create_file",
                json!({"path": "note.txt", "content": "hello world"}),
            ),
            ("read_file", json!({"path": "note.txt"})),
            ("final_answer", json!({"answer": "done"})),
        ],
    )
}

const NOTE_TASK: &str =
    "Create a file called note.txt with the content 'hello world', then read it back.";

fn one_object(o: &Output) -> Value {
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "exactly one JSON object on stdout: {out}");
    serde_json::from_str(lines[0]).unwrap()
}

#[test]
fn task_json_is_one_object_with_the_contract_fields() {
    let home = tempfile::tempdir().unwrap();
    let model = note_script(home.path());
    let o = rein(
        home.path(),
        &[
            "bench", "--task", NOTE_TASK, "--model", &model, "--seed", "7", "--json",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = one_object(&o);
    for f in [
        "task", "model", "seed", "verdict", "reason", "sandbox", "actions", "steps",
    ] {
        assert!(v.get(f).is_some(), "field {f} missing: {v}");
    }
    assert_eq!(v["task"], NOTE_TASK);
    assert_eq!(v["model"], model);
    assert_eq!(v["seed"], 7);
    assert_eq!(v["verdict"], "pass");
    assert_eq!(v["sandbox"]["files"], json!({"note.txt": "hello world"}));
    assert_eq!(v["sandbox"]["variables"], json!({}));
    assert_eq!(v["steps"], 3);
    let actions = v["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 3);
    assert_eq!(actions[0]["action"], "create_file");
    assert_eq!(actions[0]["parameters"]["path"], "note.txt");
    assert_eq!(actions[0]["outcome"], "executed");
    // Every requirement is marked inferred, and each was judged.
    let reqs = v["requirements"].as_array().unwrap();
    assert!(reqs.len() >= 4);
    assert!(reqs
        .iter()
        .all(|r| r["inferred"] == true && r["passed"] == true));
    assert_eq!(v["contract_sha256"].as_str().unwrap().len(), 64);
}

#[test]
fn task_ring_bell_stops_at_once_and_fails_naming_the_tool() {
    let home = tempfile::tempdir().unwrap();
    let model = script(
        home.path(),
        "bell.jsonl",
        &[
            ("ring_bell", json!({})),
            (
                "create_file",
                json!({"path": "bell.txt", "content": "rang"}),
            ),
            ("final_answer", json!({"answer": "done"})),
        ],
    );
    let o = rein(
        home.path(),
        &[
            "bench",
            "--task",
            "Ring the bell using the ring_bell action, then create bell.txt",
            "--model",
            &model,
            "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let v = one_object(&o);
    assert_eq!(v["verdict"], "fail");
    assert!(
        v["reason"].as_str().unwrap().contains("ring_bell"),
        "{}",
        v["reason"]
    );
    assert_eq!(v["actions"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(
        v["sandbox"]["files"],
        json!({}),
        "nothing after the stop ran"
    );
    assert_eq!(v["steps"], 1);
}

#[test]
fn task_claimed_success_did_nothing_fails() {
    let home = tempfile::tempdir().unwrap();
    let model = script(
        home.path(),
        "liar.jsonl",
        &[(
            "final_answer",
            json!({"answer": "Created a.txt, b.txt and c.txt and listed them."}),
        )],
    );
    let o = rein(
        home.path(),
        &[
            "bench",
            "--task",
            "Create a.txt, b.txt and c.txt, then list them.",
            "--model",
            &model,
            "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let v = one_object(&o);
    assert_eq!(v["verdict"], "fail");
    let failed: Vec<&str> = v["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["passed"] == false)
        .map(|r| r["check"].as_str().unwrap())
        .collect();
    assert!(failed.contains(&"inferred-exists-a.txt"), "{failed:?}");
    assert!(failed.contains(&"inferred-list_files"), "{failed:?}");
}

#[test]
fn task_exit_codes_for_bad_input_and_model_failure() {
    let home = tempfile::tempdir().unwrap();
    let model = note_script(home.path());
    // Nothing can be inferred: bad input, nothing on stdout.
    let o = rein(
        home.path(),
        &["bench", "--task", "Say hello.", "--model", &model, "--json"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no default pass"));
    // --task needs --model, and does not mix with suites.
    assert_eq!(
        rein(home.path(), &["bench", "--task", NOTE_TASK])
            .status
            .code(),
        Some(2)
    );
    let toy = repo().join("suites/toy");
    let o = rein(
        home.path(),
        &[
            "bench",
            toy.to_str().unwrap(),
            "--task",
            NOTE_TASK,
            "--model",
            &model,
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    // A script that runs out of replies is a model failure: 3.
    let short = script(
        home.path(),
        "short.jsonl",
        &[(
            "create_file",
            json!({"path": "note.txt", "content": "hello world"}),
        )],
    );
    let o = rein(
        home.path(),
        &["bench", "--task", NOTE_TASK, "--model", &short, "--json"],
    );
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(one_object(&o)["verdict"], "fail");
}

#[test]
fn task_text_output_marks_requirements_inferred() {
    let home = tempfile::tempdir().unwrap();
    let model = note_script(home.path());
    let o = rein(
        home.path(),
        &["bench", "--task", NOTE_TASK, "--model", &model],
    );
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("[inferred: the task says \"Create\"]"),
        "{out}"
    );
    assert!(out.contains("verdict: PASS"), "{out}");
}

#[test]
fn a_toy_bench_records_each_fresh_sandbox_and_action_log() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let model = note_script(scratch.path());
    let out = scratch.path().join("out");
    let toy = repo().join("suites/toy");
    let o = rein(
        home.path(),
        &[
            "bench",
            toy.to_str().unwrap(),
            "--models",
            &model,
            "--split",
            "all",
            // One worker: two workers opening a fresh journal at once can race (see the report).
            "--jobs",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let rows: Vec<Value> = std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let tasks = std::fs::read_dir(&toy)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().join("task.toml").is_file())
        .count();
    assert_eq!(rows.len(), tasks);
    for r in &rows {
        let mem = &r["memory"];
        assert!(
            mem["files"].is_object() && mem["variables"].is_object(),
            "{r}"
        );
        let actions = mem["actions"].as_array().unwrap();
        assert_eq!(actions.len(), 3, "{r}");
        // The script solves only the note task; every other run fails on its own checks.
        assert_eq!(r["passed"], r["task"] == "note-hello", "{r}");
        // Each run starts fresh: the only note.txt is the one this run wrote.
        assert_eq!(mem["files"]["note.txt"], "hello world", "{r}");
    }
    let by_task = |t: &str| rows.iter().find(|r| r["task"] == t).unwrap();
    let delete = &by_task("delete-temp")["memory"];
    let files: Vec<&String> = delete["files"].as_object().unwrap().keys().collect();
    assert_eq!(files, ["keep.txt", "note.txt", "temp.txt"]);
    assert_eq!(
        by_task("variable-to-file")["memory"]["variables"]["city"],
        "Lisbon"
    );
    assert!(out.join("report.md").is_file());
}

#[test]
fn check_suite_proves_the_toy_judge() {
    let home = tempfile::tempdir().unwrap();
    let toy = repo().join("suites/toy");
    let o = rein(
        home.path(),
        &["bench", "check-suite", toy.to_str().unwrap(), "--json"],
    );
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["suites"][0]["false_passes"], 0);
    assert_eq!(v["suites"][0]["false_fails"], 0);
}
