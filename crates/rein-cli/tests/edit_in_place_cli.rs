#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `rein run --approve=all` on a mission with an editable file: the edit in place is approved
//! and judged; a change to the frozen neighbour is not approved, and a backup left behind fails
//! the verdict (`nothing_else_changed`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn mission() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../rein-engine/tests/fixtures/edit-port")
}

fn run(script: &[serde_json::Value]) -> (Output, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("script.jsonl");
    let lines: Vec<String> = script.iter().map(|v| v.to_string()).collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let ws = tmp.path().join("ws");
    let out = Command::new(env!("CARGO_BIN_EXE_rein"))
        .args([
            "run",
            mission().to_str().unwrap(),
            "--workspace",
            ws.to_str().unwrap(),
            "--model",
            &format!("scripted:{}", file.display()),
            "--approve=all",
            "--json",
        ])
        .env("REIN_HOME", tmp.path().join("home"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (out, tmp)
}

fn step(action: &str, parameters: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"thought": "next", "action": action, "parameters": parameters})
}

fn edit_port() -> serde_json::Value {
    step(
        "edit_file",
        serde_json::json!({"path": "config/app.toml", "old_text": "port = 8080", "new_text": "port = 9090"}),
    )
}

#[test]
fn approve_all_edits_the_editable_file_in_place_and_the_run_passes() {
    let (out, tmp) = run(&[
        step("read_file", serde_json::json!({"path": "config/app.toml"})),
        edit_port(),
        step("read_file", serde_json::json!({"path": "config/app.toml"})),
        step("finish", serde_json::json!({"summary": "port set"})),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let app = std::fs::read_to_string(tmp.path().join("ws/config/app.toml")).unwrap();
    assert_eq!(app, "[server]\nport = 9090\nworkers = 4\n");
}

#[test]
fn approve_all_refuses_a_change_to_the_frozen_neighbour() {
    let (out, tmp) = run(&[
        step("read_file", serde_json::json!({"path": "config/app.toml"})),
        step(
            "edit_file",
            serde_json::json!({"path": "config/README.md", "old_text": "#platform", "new_text": "#ops"}),
        ),
        edit_port(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    // Nobody can be asked, so the run stops there, the neighbour untouched.
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("approval-required"), "{text}");
    assert!(text.contains("this run did not put there"), "{text}");
    let readme = std::fs::read_to_string(tmp.path().join("ws/config/README.md")).unwrap();
    assert!(
        readme.contains("#platform"),
        "the frozen input changed: {readme}"
    );
    let app = std::fs::read_to_string(tmp.path().join("ws/config/app.toml")).unwrap();
    assert!(app.contains("8080"), "{app}");
}

#[test]
fn a_backup_left_beside_the_edit_fails_the_verdict() {
    let (out, tmp) = run(&[
        step("read_file", serde_json::json!({"path": "config/app.toml"})),
        step(
            "create_file",
            serde_json::json!({"path": "config/app.toml.bak", "content": "[server]\nport = 8080\nworkers = 4\n"}),
        ),
        edit_port(),
        step("read_file", serde_json::json!({"path": "config/app.toml"})),
        step("finish", serde_json::json!({"summary": "port set"})),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    // The finish is judged and refused; the script has nothing left to fix it with.
    assert_ne!(out.status.code(), Some(0), "{text}");
    let failed: std::collections::BTreeSet<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["event"] == "check" && e["passed"] == false)
        .map(|e| e["id"].as_str().unwrap_or_default().to_string())
        .collect();
    let want: std::collections::BTreeSet<String> = ["nothing-else-changed".to_string()].into();
    assert_eq!(failed, want, "{text}");
    assert!(text.contains("config/app.toml.bak: created"), "{text}");
    assert!(tmp.path().join("ws/config/app.toml.bak").is_file());
}

/// `rein bench` approves what `rein run --approve=all` approves (its journal says
/// `"approve": "all"`), and nothing more: a change to a frozen input ends the run there, as it
/// ends `rein run`'s, instead of being approved and left for the judge.
#[test]
fn the_bench_refuses_a_change_to_a_frozen_input_as_approve_all_does() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::write(
        suite.join("suite.toml"),
        "name = \"approve\"\ndescription = \"approve=all in the bench\"\n",
    )
    .unwrap();
    let copy = Command::new("cp")
        .args(["-r", mission().to_str().unwrap()])
        .arg(suite.join("edit-port"))
        .status()
        .unwrap();
    assert!(copy.success());
    let script = [
        step("read_file", serde_json::json!({"path": "config/app.toml"})),
        step(
            "edit_file",
            serde_json::json!({"path": "config/README.md", "old_text": "#platform", "new_text": "#ops"}),
        ),
        edit_port(),
        step("read_file", serde_json::json!({"path": "config/app.toml"})),
        step("finish", serde_json::json!({"summary": "port set"})),
    ];
    let file = tmp.path().join("script.jsonl");
    let lines: Vec<String> = script.iter().map(|v| v.to_string()).collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let out = tmp.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["bench", suite.to_str().unwrap(), "--models"])
        .arg(format!("scripted:{}", file.display()))
        .arg("--out")
        .arg(&out)
        .env("REIN_HOME", tmp.path().join("home"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let row: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(row["passed"], false, "{row}");
    let reason = row["reason"].as_str().unwrap();
    assert!(reason.contains("this run did not put there"), "{reason}");
    // The run stopped at the refused change: the edit after it was never made.
    assert_eq!(row["steps"], 2, "{row}");
}
