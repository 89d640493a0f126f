#![allow(clippy::unwrap_used, clippy::expect_used)]

//! `rein tool` end to end: every outcome as JSON with its exit code, replay across processes,
//! approval without a terminal, policy files, bad input.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    let shown = r["result"]["before_sha256"].as_str().unwrap().to_string();

    // Approved with the pre-image shown: applied once; the same id again replays; other
    // arguments conflict.
    let approve = ["--id", "e1", "--approve", "--expect-before", shown.as_str()];
    let (code, r) = e.tool("edit_file", args, &approve);
    assert_eq!((code, r["outcome"].as_str()), (0, Some("executed")), "{r}");
    assert_eq!(r["result"]["applied"], true);
    assert_eq!(r["result"]["path"], "notes.txt");
    assert!(r["result"]["change_id"].as_i64().is_some());
    assert!(r["result"]["diff"].as_str().unwrap().contains("-beta"));
    assert_eq!(e.read("notes.txt").unwrap(), "alpha\ngamma\n");
    let (code, r) = e.tool("edit_file", args, &approve);
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
    let sha = a["result"]["after_sha256"].as_str().unwrap();
    let (_, b) = e.tool(
        "delete_file",
        r#"{"path": "a.txt"}"#,
        &["--approve", "--expect-before", sha],
    );
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

/// `rein` with the environment it needs for one test: the variables in `set`, minus those in
/// `unset`.
fn rein_env(set: &[(&str, &Path)], unset: &[&str], args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rein"));
    cmd.args(args).stdin(Stdio::null());
    for name in unset {
        cmd.env_remove(name);
    }
    for (name, value) in set {
        cmd.env(name, value);
    }
    cmd.output().unwrap()
}

/// Issue 8 item 4: `--approve` is bound to the pre-image the person was shown.
#[test]
fn an_approval_on_the_command_line_is_bound_to_the_pre_image_it_was_shown() {
    let e = env();
    let args = r#"{"path": "notes.txt", "content": "alpha\nbeta\ngamma\n"}"#;
    let (code, shown) = e.tool("replace_file", args, &["--id", "P1"]);
    assert_eq!(code, 2, "{shown}");
    assert_eq!(shown["outcome"], "approval-required");
    let sha = shown["result"]["before_sha256"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        shown["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("--expect-before {sha}")),
        "the hash to approve with is printed: {shown}"
    );
    // The person edits the file after seeing the diff; the approval for that diff arrives.
    std::fs::write(e.ws.join("notes.txt"), "alpha\nbeta\nmy own line\n").unwrap();
    let (code, r) = e.tool(
        "replace_file",
        args,
        &["--id", "P1", "--approve", "--expect-before", &sha],
    );
    assert_eq!(
        (code, r["outcome"].as_str()),
        (2, Some("approval-required")),
        "{r}"
    );
    assert!(r["reason"].as_str().unwrap().contains("now holds"), "{r}");
    assert_eq!(e.read("notes.txt").unwrap(), "alpha\nbeta\nmy own line\n");
    // --approve alone does not approve a change to an existing file.
    let (code, r) = e.tool("replace_file", args, &["--id", "P1", "--approve"]);
    assert_eq!(
        (code, r["outcome"].as_str()),
        (2, Some("approval-required")),
        "{r}"
    );
    assert!(
        r["reason"].as_str().unwrap().contains("--expect-before"),
        "{r}"
    );
    assert_eq!(e.read("notes.txt").unwrap(), "alpha\nbeta\nmy own line\n");
    // The new diff, approved with its own pre-image, applies.
    let new_sha = r["result"]["before_sha256"].as_str().unwrap().to_string();
    assert!(r["result"]["diff"]
        .as_str()
        .unwrap()
        .contains("-my own line"));
    let (code, r) = e.tool(
        "replace_file",
        args,
        &["--id", "P1", "--approve", "--expect-before", &new_sha],
    );
    assert_eq!((code, r["outcome"].as_str()), (0, Some("executed")), "{r}");
    assert_eq!(e.read("notes.txt").unwrap(), "alpha\nbeta\ngamma\n");
    // A new file needs no hash ("absent" may be written out).
    let (code, r) = e.tool(
        "create_file",
        r#"{"path": "new.txt", "content": "n"}"#,
        &["--approve", "--expect-before", "absent"],
    );
    assert_eq!((code, r["outcome"].as_str()), (0, Some("executed")), "{r}");
    // Bad input: a malformed hash, or --expect-before without --approve.
    let (code, r) = e.tool(
        "create_file",
        r#"{"path": "other.txt", "content": "o"}"#,
        &["--approve", "--expect-before", "abc"],
    );
    assert_eq!((code, r["outcome"].as_str()), (2, Some("invalid")), "{r}");
    assert!(r["reason"].as_str().unwrap().contains("64 hex"), "{r}");
    let ws = e.ws.to_str().unwrap();
    let out = e.rein(&[
        "tool",
        "--workspace",
        ws,
        "--expect-before",
        "absent",
        "create_file",
        r#"{"path": "other.txt", "content": "o"}"#,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(e.read("other.txt").is_none());
}

/// Issue 8 item 3: a call id taken by an undo (listed by `rein changes`) is never replayed for
/// a tool call.
#[test]
fn an_undo_call_id_reused_for_a_tool_call_is_an_id_conflict() {
    let e = env();
    let ws = e.ws.to_str().unwrap();
    let (_, r) = e.tool(
        "create_file",
        r#"{"path": "x.txt", "content": "x"}"#,
        &["--id", "c1", "--approve"],
    );
    let change = r["result"]["change_id"].to_string();
    assert_eq!(e.rein(&["undo", &change]).status.code(), Some(0));
    let listed: Value =
        serde_json::from_slice(&e.rein(&["changes", "--workspace", ws, "--json"]).stdout).unwrap();
    let undo_id = listed["changes"][1]["call_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, r) = e.tool(
        "create_file",
        r#"{"path": "b.txt", "content": "b"}"#,
        &["--id", &undo_id, "--approve"],
    );
    assert_eq!(
        (code, r["outcome"].as_str()),
        (2, Some("id-conflict")),
        "{r}"
    );
    assert!(e.read("b.txt").is_none());
}

/// Issue 8 item 6: the journal must not be reachable by the tools.
#[test]
fn a_workspace_that_holds_the_data_folder_or_lies_inside_it_is_refused() {
    let e = env();
    let ws = e.ws.to_str().unwrap();
    // REIN_HOME inside the workspace (through a link, too).
    let inside = e.ws.join(".rein");
    let link = e.ws.parent().unwrap().join("link-to-ws");
    std::os::unix::fs::symlink(&e.ws, &link).unwrap();
    for home in [inside.clone(), link.join(".rein")] {
        let commands: [&[&str]; 4] = [
            &[
                "tool",
                "--workspace",
                ws,
                "read_file",
                r#"{"path": "notes.txt"}"#,
            ],
            &[
                "tool",
                "--workspace",
                ws,
                "--approve",
                "create_file",
                r#"{"path": "n.txt", "content": "n"}"#,
            ],
            &["changes", "--workspace", ws],
            // `undo` opens the journal first (to find the change's workspace), so it runs last.
            &["undo", "1", "--workspace", ws],
        ];
        for args in commands {
            let out = rein_env(&[("REIN_HOME", &home)], &[], args);
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains("contains Rein's data folder") && stderr.contains("REIN_HOME"),
                "{args:?}: {stderr}"
            );
            if args[0] != "undo" {
                assert!(!inside.exists(), "{args:?} wrote to the data folder");
            }
        }
        assert!(e.read("n.txt").is_none());
        let _ = std::fs::remove_dir_all(&inside);
    }
    // A workspace inside the data folder.
    let nested = e.home.join("projects");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(nested.join("notes.txt"), "x").unwrap();
    let out = e.rein(&[
        "tool",
        "--workspace",
        nested.to_str().unwrap(),
        "read_file",
        r#"{"path": "notes.txt"}"#,
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("lies inside Rein's data folder"),
        "{stderr}"
    );
    // `--workspace ~` with the default data folder (~/.local/share/rein).
    let fake_home = e.ws.parent().unwrap().join("fake-home");
    std::fs::create_dir(&fake_home).unwrap();
    let out = rein_env(
        &[("HOME", &fake_home)],
        &["REIN_HOME", "XDG_DATA_HOME"],
        &[
            "tool",
            "--workspace",
            fake_home.to_str().unwrap(),
            "list_dir",
            r#"{"path": "."}"#,
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("contains Rein's data folder") && stderr.contains(".local/share/rein"),
        "{stderr}"
    );
    assert!(!fake_home.join(".local").exists());
    // `rein run` refuses before it creates or fills the folder.
    let run_ws = e.home.join("run-here");
    let out = e.rein(&[
        "run",
        "desk_task",
        "--workspace",
        run_ws.to_str().unwrap(),
        "--model",
        "scripted:/nonexistent/replies.json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("lies inside Rein's data folder"),
        "{stderr}"
    );
    assert!(!run_ws.exists());
    // Beside each other: fine.
    let (code, r) = e.tool("read_file", r#"{"path": "notes.txt"}"#, &[]);
    assert_eq!((code, r["outcome"].as_str()), (0, Some("executed")), "{r}");
}

/// Issue 8 item 7: a person's file named like a temp file survives every command.
#[test]
fn a_users_rein_tmp_file_survives_tool_and_changes() {
    let e = env();
    let ws = e.ws.to_str().unwrap();
    std::fs::create_dir(e.ws.join("docs")).unwrap();
    let files = [".rein-tmp-notes", "docs/.rein-tmp-draft.md"];
    for name in files {
        std::fs::write(e.ws.join(name), "my notes\n").unwrap();
    }
    let (code, r) = e.tool("read_file", r#"{"path": "notes.txt"}"#, &[]);
    assert_eq!(code, 0, "{r}");
    let (code, r) = e.tool(
        "create_file",
        r#"{"path": "docs/new.txt", "content": "n"}"#,
        &["--approve"],
    );
    assert_eq!(code, 0, "{r}");
    assert_eq!(
        e.rein(&["changes", "--workspace", ws]).status.code(),
        Some(0)
    );
    let change = r["result"]["change_id"].to_string();
    assert_eq!(e.rein(&["undo", &change]).status.code(), Some(0));
    for name in files {
        assert_eq!(e.read(name).as_deref(), Some("my notes\n"), "{name}");
    }
}

/// Issue 8 item 8a: the crash hook is for the engine's tests only; no environment variable
/// can stop the `rein` binary in the middle of an apply.
#[test]
fn the_crash_test_variable_does_nothing_to_rein() {
    let e = env();
    let ws = e.ws.to_str().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rein"))
        .args([
            "tool",
            "--workspace",
            ws,
            "--approve",
            "create_file",
            r#"{"path": "n.txt", "content": "n"}"#,
        ])
        .env("REIN_HOME", &e.home)
        .env("REIN_CRASH_AT", "after-intent")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("rein stopped at the crash point named by REIN_CRASH_AT");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
    assert_eq!(e.read("n.txt").as_deref(), Some("n"));
}

/// `find_related` over 2,000 files of distinct words: before, it kept every file's text and
/// every term set, over a gigabyte for one call with 256 KiB files (an out-of-memory kill on a
/// small machine that also holds a model); now it keeps only what ranking needs.
#[test]
// Waited for with wait4, which std cannot see, to read the child's peak memory.
#[allow(clippy::zombie_processes)]
fn find_related_over_many_large_files_stays_small() {
    use std::os::unix::process::ExitStatusExt;
    let e = env();
    let dir = e.ws.join("many");
    std::fs::create_dir(&dir).unwrap();
    let mut seed = 1u64;
    let mut word = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..8)
            .map(|i| char::from(b'a' + ((seed >> (8 * i)) % 26) as u8))
            .collect::<String>()
    };
    let words: Vec<String> = (0..3_600).map(|_| word()).collect();
    let text = words.join(" ");
    for i in 0..2_000 {
        std::fs::write(dir.join(format!("f{i:04}.txt")), &text).unwrap();
    }
    let ws = e.ws.to_str().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["tool", "--workspace", ws, "find_related"])
        .arg(r#"{"path": "many/f0000.txt"}"#)
        .env("REIN_HOME", &e.home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    assert_eq!(std::process::ExitStatus::from_raw(status).code(), Some(0));
    let peak_mib = usage.ru_maxrss / 1024;
    assert!(peak_mib < 200, "find_related peaked at {peak_mib} MiB");
}

/// A policy file kept in the workspace, with a rule that lets replace_file run without asking:
/// before, the model rewrote the policy file and its next call read what the policy denied.
#[test]
fn a_policy_file_in_the_workspace_cannot_be_changed_through_it() {
    let e = env();
    std::fs::create_dir(e.ws.join("secrets")).unwrap();
    std::fs::write(e.ws.join("secrets/key.env"), "API_KEY=hunter2\n").unwrap();
    let policy = "[[rule]]\ntool = \"*\"\npaths = [\"secrets/**\"]\naction = \"deny\"\n\n\
                  [[rule]]\ntool = \"*\"\naction = \"allow\"\n";
    std::fs::create_dir(e.ws.join("conf")).unwrap();
    std::fs::write(e.ws.join("conf/policy.toml"), policy).unwrap();
    let file = e.ws.join("conf/policy.toml");
    let with_policy = ["--policy", file.to_str().unwrap()];
    for (tool, args) in [
        (
            "replace_file",
            r#"{"path": "conf/policy.toml", "content": ""}"#,
        ),
        (
            "edit_file",
            r#"{"path": "./Conf//POLICY.toml", "old_text": "deny", "new_text": "allow"}"#,
        ),
        ("delete_file", r#"{"path": "conf/policy.toml"}"#),
    ] {
        let (code, r) = e.tool(tool, args, &with_policy);
        assert_eq!(
            (code, r["outcome"].as_str()),
            (2, Some("denied")),
            "{tool}: {r}"
        );
        assert!(
            r["reason"]
                .as_str()
                .unwrap()
                .contains("the policy file itself"),
            "{r}"
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), policy);
    let (_, r) = e.tool("read_file", r#"{"path": "secrets/key.env"}"#, &with_policy);
    assert_eq!(r["outcome"], "denied", "{r}");
    // Other files are still allowed by its rules.
    let (code, r) = e.tool(
        "replace_file",
        r#"{"path": "notes.txt", "content": "x"}"#,
        &with_policy,
    );
    assert_eq!((code, r["outcome"].as_str()), (0, Some("executed")), "{r}");
}
