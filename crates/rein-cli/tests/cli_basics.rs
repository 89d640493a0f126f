#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The command line's contract: exit codes, `--json` documents and one-line errors.

use std::process::{Command, Output};

use rein_testkit::{FakeOpenAi, FakeReply};

fn rein(args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(args)
        .env("REIN_HOME", home.path())
        .env_remove("REIN_ALLOW_REMOTE")
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn script(lines: &[&str]) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), lines.join("\n")).unwrap();
    file
}

#[test]
fn an_unknown_model_is_bad_input() {
    let out = rein(&["ask", "--model", "no-such-model", "hello"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown model no-such-model; known models:"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_catalog_model_that_is_not_pulled_says_how_to_pull_it() {
    let out = rein(&["ask", "--model", "gemma3-270m", "hello"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("rein models pull gemma3-270m"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_remote_endpoint_needs_an_explicit_opt_in() {
    let out = rein(&["ask", "--model", "openai:http://192.0.2.7:8080#m", "hello"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--allow-remote"), "{}", stderr(&out));
}

#[test]
fn empty_and_oversized_prompts_are_refused() {
    let out = rein(&["ask", "--model", "scripted:/nonexistent", "  "]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("empty"));
    let long = "x".repeat(32_001);
    let out = rein(&["ask", "--model", "scripted:/nonexistent", &long]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("32001 characters"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_prompt_at_the_limit_is_answered() {
    let replies = script(&[r#""fine""#]);
    let spec = format!("scripted:{}", replies.path().display());
    let long = "x".repeat(32_000);
    let out = rein(&["ask", "--json", "--model", &spec, &long]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["text"], "fine");
}

#[test]
fn a_scripted_model_streams_its_replies_then_runs_out() {
    let replies = script(&[r#""first answer""#]);
    let spec = format!("scripted:{}", replies.path().display());
    let out = rein(&["ask", "--model", &spec, "hello"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("first answer"));
    let empty = script(&[]);
    let spec = format!("scripted:{}", empty.path().display());
    let out = rein(&["ask", "--model", &spec, "hello"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "a model failure exits 3: {}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("no replies left"), "{}", stderr(&out));
}

#[test]
fn ask_streams_from_an_openai_compatible_endpoint() {
    let server = FakeOpenAi::start().unwrap();
    server.push(FakeReply::stream(&["Hel", "lo ", "there"]));
    let spec = format!("openai:{}#tiny", server.url());
    let out = rein(&["ask", "--json", "--model", &spec, "hello"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["text"], "Hello there");
}

#[test]
fn models_list_is_one_json_document_with_the_catalog() {
    let out = rein(&["models", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = doc["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "gemma3-270m"]
    );
    assert!(doc["models"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["present"] == false));
}

#[test]
fn pulling_an_unknown_model_is_bad_input() {
    let out = rein(&["models", "pull", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown model nope"));
}

#[test]
fn doctor_reports_every_model_and_a_fix() {
    let out = rein(&["doctor", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = doc["findings"].as_array().unwrap();
    let missing = findings
        .iter()
        .find(|f| f["check"] == "model gemma3-270m")
        .unwrap();
    assert_eq!(missing["status"], "warn");
    assert_eq!(missing["fix"], "rein models pull gemma3-270m");
}

#[test]
fn runtime_knobs_are_checked_before_anything_loads() {
    let scripted = script(&[r#"{"text": "hi"}"#]);
    let spec = format!("scripted:{}", scripted.path().display());
    for (args, says) in [
        (
            vec!["ask", "--model", &spec, "--threads", "2", "hello"],
            "apply to an embedded model",
        ),
        (
            vec!["ask", "--model", "gemma3-270m", "--threads", "0", "hello"],
            "--threads must be between 1 and 256, not 0",
        ),
        (
            vec!["ask", "--model", "gemma3-270m", "--context", "100", "hello"],
            "--context must be between 1024 and",
        ),
        (
            vec!["ask", "--model", &spec, "--temperature", "7", "hello"],
            "--temperature must be between 0 and 2, not 7",
        ),
    ] {
        let out = rein(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
    // Temperature applies to any model: a scripted one still answers.
    let out = rein(&["ask", "--model", &spec, "--temperature", "0", "hello"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
