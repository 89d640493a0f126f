#![allow(clippy::unwrap_used, clippy::expect_used)]

//! `rein chat` end to end through the real binary with a scripted actor: the JSON-lines
//! protocol, the refusal without a terminal, a second message rejected while a turn runs, and
//! (until the decision model is wired in) every write held with nothing written.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use support::env;

fn chat(e: &support::Env, script: &[Value], requests: &[Value]) -> (i32, Vec<Value>, String) {
    let script_path = e.home.parent().unwrap().join("actor.jsonl");
    let text: Vec<String> = script.iter().map(Value::to_string).collect();
    std::fs::write(&script_path, text.join("\n")).unwrap();
    let model = format!("scripted:{}", script_path.display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["chat", e.ws.to_str().unwrap(), "--json", "--model", &model])
        .env("REIN_HOME", &e.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        for request in requests {
            match request {
                Value::String(raw) => writeln!(stdin, "{raw}").unwrap(),
                other => writeln!(stdin, "{other}").unwrap(),
            }
        }
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (
        out.status.code().unwrap(),
        events,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn act(action: &str, parameters: Value) -> Value {
    json!({"thought": "t", "action": action, "parameters": parameters})
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

#[test]
fn without_a_terminal_or_json_it_refuses_and_points_to_json() {
    let e = env();
    let out = e.rein(&["chat", e.ws.to_str().unwrap()]);
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("needs a terminal") && stderr.contains("--json"),
        "{stderr}"
    );
}

#[test]
fn the_json_protocol_runs_a_turn_holds_the_write_and_rejects_a_second_message() {
    let e = env();
    let script = [
        json!({"$delay_ms": 150}),
        act("read_file", json!({"path": "notes.txt"})),
        act(
            "edit_file",
            json!({"path": "notes.txt", "old_text": "beta", "new_text": "gamma"}),
        ),
        act(
            "finish",
            json!({"summary": "I could not change notes.txt."}),
        ),
    ];
    let requests = [
        json!({"type": "user_message", "id": "m1", "text": "change beta to gamma in notes.txt"}),
        json!({"type": "user_message", "id": "m2", "text": "and delete everything"}),
        Value::String("this is not json".into()),
        json!({"type": "approve", "id": "a1", "approval": 99}),
    ];
    let (code, events, stderr) = chat(&e, &script, &requests);
    assert_eq!(code, 0, "{stderr}");
    // Every event has a rising seq and a type.
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event["seq"], json!(i as u64 + 1), "{event}");
        assert!(event["type"].is_string() && event["at"].is_i64(), "{event}");
    }
    assert_eq!(events[0]["type"], "session_started");
    let started = of_type(&events, "turn_started");
    assert_eq!(started.len(), 1, "{events:#?}");
    assert_eq!(started[0]["request"], "m1");
    let route = of_type(&events, "route");
    assert_eq!(route[0]["route"]["source"], "outage", "{}", route[0]);
    assert!(!of_type(&events, "token").is_empty());
    let calls = of_type(&events, "tool_call");
    assert_eq!(calls[0]["tool"], "read_file");
    assert_eq!(calls[0]["outcome"], "executed");
    assert_eq!(calls[1]["outcome"], "proposed");
    let gate = of_type(&events, "gate_outcome");
    assert_eq!(gate[0]["review"]["allowed"], false);
    let hold = of_type(&events, "hold");
    assert_eq!(hold[0]["path"], "notes.txt");
    assert!(of_type(&events, "approval_requested").is_empty());
    assert!(!of_type(&events, "caution").is_empty());
    let ended = of_type(&events, "turn_ended");
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0]["status"], "answered");
    assert_eq!(ended[0]["message"], "I could not change notes.txt.");
    let errors = of_type(&events, "error");
    let by_request = |id: &str| errors.iter().find(|e| e["request"] == id).copied();
    assert!(by_request("m2").unwrap()["message"]
        .as_str()
        .unwrap()
        .contains("not queued"));
    assert!(by_request("a1").unwrap()["message"]
        .as_str()
        .unwrap()
        .contains("no approval 99"));
    assert!(errors.iter().any(|e| e["message"]
        .as_str()
        .unwrap()
        .contains("could not read the request line")));
    assert_eq!(e.read("notes.txt").unwrap(), "alpha\nbeta\n");
}
