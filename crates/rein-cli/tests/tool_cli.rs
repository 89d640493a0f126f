#![allow(clippy::unwrap_used, clippy::expect_used)]

//! `rein tool` end to end: every outcome as JSON with its exit code, replay across processes,
//! approval without a terminal, policy files, bad input.

mod support;

use serde_json::Value;
use support::env;
#[test]
fn a_read_executes_and_replays_across_processes() {
    let e = env();
    let (code, r) = e.tool("read_file", r#"{"path": "notes.txt"}"#, &["--id", "r1"]);
    assert_eq!((code, r["outcome"].as_str()), (0, Some("executed")), "{r}");
    assert!(r["result"].to_string().contains("beta"));
    let (code, again) = e.tool("read_file", r#"{"path": "notes.txt"}"#, &["--id", "r1"]);
    assert_eq!(
        (code, again["outcome"].as_str()),
        (0, Some("replayed")),
        "{again}"
    );
    assert_eq!(again["result"], r["result"]);
    assert!(e.home.join("journal.db").exists());
}

#[test]
fn a_change_without_approval_or_terminal_is_approval_required_and_writes_nothing() {
    let e = env();
    let args = r#"{"path": "notes.txt", "old_text": "beta", "new_text": "gamma"}"#;
    let (code, r) = e.tool("edit_file", args, &["--id", "e1"]);
    assert_eq!(
        (code, r["outcome"].as_str()),
        (2, Some("approval-required")),
        "{r}"
    );
    assert!(
        r["result"]["diff"].as_str().unwrap().contains("+gamma"),
        "the diff is shown: {r}"
    );
    assert_eq!(e.read("notes.txt").unwrap(), "alpha\nbeta\n");

    // Approved up front: applied once; the same id again replays; other arguments conflict.
    let (code, r) = e.tool("edit_file", args, &["--id", "e1", "--approve"]);
    assert_eq!((code, r["outcome"].as_str()), (0, Some("executed")), "{r}");
    assert_eq!(r["result"]["applied"], true);
    assert_eq!(r["result"]["path"], "notes.txt");
    assert!(r["result"]["change_id"].as_i64().is_some());
    assert!(r["result"]["diff"].as_str().unwrap().contains("-beta"));
    assert_eq!(e.read("notes.txt").unwrap(), "alpha\ngamma\n");
    let (code, r) = e.tool("edit_file", args, &["--id", "e1", "--approve"]);
    assert_eq!((code, r["outcome"].as_str()), (0, Some("replayed")), "{r}");
    assert_eq!(e.read("notes.txt").unwrap(), "alpha\ngamma\n");
    let other = r#"{"path": "notes.txt", "old_text": "gamma", "new_text": "delta"}"#;
    let (code, r) = e.tool("edit_file", other, &["--id", "e1", "--approve"]);
    assert_eq!(
        (code, r["outcome"].as_str()),
        (2, Some("id-conflict")),
        "{r}"
    );
    assert_eq!(e.read("notes.txt").unwrap(), "alpha\ngamma\n");
}

#[test]
fn default_ids_are_fresh_so_two_calls_are_two_calls() {
    let e = env();
    let (_, a) = e.tool(
        "create_file",
        r#"{"path": "a.txt", "content": "1"}"#,
        &["--approve"],
    );
    let (_, b) = e.tool("delete_file", r#"{"path": "a.txt"}"#, &["--approve"]);
    assert_eq!(a["outcome"], "executed", "{a}");
    assert_eq!(b["outcome"], "executed", "{b}");
    assert!(e.read("a.txt").is_none());
}

#[test]
fn invalid_calls_exit_2_with_json() {
    let e = env();
    let cases: [(&str, &str, &[&str]); 7] = [
        ("shell", r#"{"command": "rm -rf /"}"#, &[]),
        ("read_file", r#"{"path": 3}"#, &[]),
        ("read_file", r#"{"path": "../escape"}"#, &[]),
        ("read_file", "not json", &[]),
        (
            "read_file",
            r#"{"path": "notes.txt"}"#,
            &["--id", "bad id!"],
        ),
        ("read_file", r#"["notes.txt"]"#, &[]),
        ("read_file", r#"{"path": "missing.txt"}"#, &[]),
    ];
    for (name, json, extra) in cases {
        let (code, r) = e.tool(name, json, extra);
        assert_eq!(
            (code, r["outcome"].as_str()),
            (2, Some("invalid")),
            "{name} {json}: {r}"
        );
        assert!(!r["reason"].as_str().unwrap().is_empty());
    }
    let long = format!(r#"{{"path": "{}"}}"#, "x".repeat(32_001));
    let (code, r) = e.tool("read_file", &long, &[]);
    assert_eq!((code, r["outcome"].as_str()), (2, Some("invalid")), "{r}");
}

#[test]
fn a_missing_workspace_is_a_one_line_error_with_exit_2() {
    let e = env();
    let out = e.rein(&[
        "tool",
        "--workspace",
        "/nonexistent/folder",
        "read_file",
        "{}",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("/nonexistent/folder"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["outcome"], "invalid");
}

#[test]
fn budget_and_policy_flags() {
    let e = env();
    let (code, r) = e.tool("read_file", r#"{"path": "notes.txt"}"#, &["--budget", "0"]);
    assert_eq!(
        (code, r["outcome"].as_str()),
        (2, Some("budget-exhausted")),
        "{r}"
    );

    let policy = e.ws.parent().unwrap().join("policy.toml");
    std::fs::write(
        &policy,
        "[[rule]]\ntool = \"delete_file\"\naction = \"deny\"\n\n[[rule]]\ntool = \"create_file\"\npaths = [\"drafts/**\"]\naction = \"allow\"\n",
    )
    .unwrap();
    let p = policy.to_str().unwrap();
    let (code, r) = e.tool(
        "delete_file",
        r#"{"path": "notes.txt"}"#,
        &["--policy", p, "--approve"],
    );
    assert_eq!((code, r["outcome"].as_str()), (2, Some("denied")), "{r}");
    assert!(e.read("notes.txt").is_some());
    // Allowed by policy: applied without --approve and without a terminal.
    let (code, r) = e.tool(
        "create_file",
        r#"{"path": "drafts/d.txt", "content": "d"}"#,
        &["--policy", p],
    );
    assert_eq!((code, r["outcome"].as_str()), (0, Some("executed")), "{r}");
    assert_eq!(e.read("drafts/d.txt").unwrap(), "d");

    let bad = e.ws.parent().unwrap().join("bad.toml");
    std::fs::write(&bad, "[[rule]]\ntool = \"shell\"\naction = \"allow\"\n").unwrap();
    let (code, r) = e.tool(
        "read_file",
        r#"{"path": "notes.txt"}"#,
        &["--policy", bad.to_str().unwrap()],
    );
    assert_eq!(code, 2);
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.contains("bad.toml line 2") && reason.contains("shell"),
        "{reason}"
    );
}

#[test]
fn a_corrupted_journal_is_refused_by_name_and_left_alone() {
    let e = env();
    std::fs::create_dir_all(&e.home).unwrap();
    let journal = e.home.join("journal.db");
    std::fs::write(&journal, vec![0x5a_u8; 4096]).unwrap();
    let (code, r) = e.tool("read_file", r#"{"path": "notes.txt"}"#, &[]);
    assert_eq!(code, 2);
    assert!(r["reason"].as_str().unwrap().contains("journal.db"), "{r}");
    assert_eq!(std::fs::read(&journal).unwrap(), vec![0x5a_u8; 4096]);
}
