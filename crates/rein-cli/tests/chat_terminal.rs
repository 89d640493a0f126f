#![allow(clippy::unwrap_used, clippy::expect_used)]

//! `rein chat` in terminal mode, on a real pseudo-terminal (util-linux `script` gives the
//! process a pty for stdin and stdout), with a scripted actor and a scripted decision model:
//! the route line, the coloured diff (and none under NO_COLOR), the allow-once question with its
//! remaining time, allow writes the file, deny and a held change write nothing.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

const REQUEST: &str = "please change beta to gamma in notes.txt";

/// Runs one terminal session: the person types `typed` (all at once: the pty buffers it and the
/// chat reads a line at a time). Returns the screen as the person saw it.
fn terminal_chat(e: &support::Env, decisions: &[Value], typed: &str, no_color: bool) -> String {
    let dir = e.home.parent().unwrap();
    let actor = dir.join("actor.jsonl");
    let lines = [
        json!({"thought": "t", "action": "read_file", "parameters": {"path": "notes.txt"}}),
        json!({"thought": "t", "action": "edit_file",
               "parameters": {"path": "notes.txt", "old_text": "beta", "new_text": "gamma"}}),
        json!({"thought": "t", "action": "finish", "parameters": {"summary": "Proposed."}}),
    ];
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(&actor, text.join("\n")).unwrap();
    let decider = dir.join("decider.jsonl");
    let text: Vec<String> = decisions.iter().map(Value::to_string).collect();
    std::fs::write(&decider, text.join("\n")).unwrap();
    let command = format!(
        "{} chat {} --model scripted:{} --decision-model scripted:{}",
        env!("CARGO_BIN_EXE_rein"),
        e.ws.display(),
        actor.display(),
        decider.display()
    );
    let mut cmd = Command::new("script");
    cmd.args(["-qfec", &command, "/dev/null"])
        .env("REIN_HOME", &e.home)
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if no_color {
        cmd.env("NO_COLOR", "1");
    }
    let mut child = cmd
        .spawn()
        .expect("util-linux `script` runs the chat on a pty");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(typed.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let screen = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{screen}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    screen
}

fn route_then_gate(yes: f64) -> Vec<Value> {
    vec![
        json!({"find": 0.1, "chat": 0.9}),
        json!({"yes": yes, "no": 1.0 - yes}),
        json!({"yes": yes, "no": 1.0 - yes}),
    ]
}

#[test]
fn allow_once_at_the_terminal_writes_the_change_after_a_coloured_diff() {
    let e = support::env();
    let screen = terminal_chat(
        &e,
        &route_then_gate(0.95),
        &format!("{REQUEST}\na\n"),
        false,
    );
    assert!(screen.contains("[route: general from keyword"), "{screen}");
    assert!(screen.contains("\x1b[31m-beta\x1b[0m"), "{screen}");
    assert!(screen.contains("\x1b[32m+gamma\x1b[0m"), "{screen}");
    assert!(
        screen.contains("Allow approval 1 once [a] or deny [d]? (9:5"),
        "the question shows the time left: {screen}"
    );
    assert!(screen.contains("Applied approval 1"), "{screen}");
    assert!(screen.contains("rein undo 1"), "{screen}");
    // A tool call after streamed tokens starts a line of its own.
    assert!(
        screen
            .lines()
            .any(|l| l.starts_with("\x1b[2m  \u{b7} edit_file")),
        "{screen}"
    );
    assert_eq!(e.read("notes.txt").unwrap(), "alpha\ngamma\n");
}

#[test]
fn deny_at_the_terminal_writes_nothing_and_no_color_means_no_escape_codes() {
    let e = support::env();
    let screen = terminal_chat(&e, &route_then_gate(0.95), &format!("{REQUEST}\nd\n"), true);
    assert!(
        !screen.contains('\x1b'),
        "NO_COLOR is respected: {screen:?}"
    );
    assert!(screen.contains("\n-beta\n+gamma\n"), "{screen}");
    assert!(
        screen.contains("Approval 1: denied; nothing was written"),
        "{screen}"
    );
    assert_eq!(e.read("notes.txt").unwrap(), "alpha\nbeta\n");
}

#[test]
fn a_held_change_shows_the_hold_and_asks_nothing() {
    let e = support::env();
    // Below the 7,500 bps floor: held. The `a` typed next is a new message, never an approval.
    let screen = terminal_chat(&e, &route_then_gate(0.7), &format!("{REQUEST}\n"), true);
    assert!(screen.contains("held (7000 bps, floor 7500"), "{screen}");
    assert!(!screen.contains("Allow approval"), "{screen}");
    assert_eq!(e.read("notes.txt").unwrap(), "alpha\nbeta\n");
}
