#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `rein run`, `rein journal list|show` and `rein qualify` end to end through the binary, with
//! scripted models (and one real-model run, skipped only with REIN_SKIP_MODEL_TESTS=1).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture(name: &str) -> String {
    let p = repo()
        .join("crates/rein-engine/tests/fixtures/agent")
        .join(name);
    format!("scripted:{}", p.display())
}

/// A data dir and a scratch folder for one test.
struct Env {
    home: tempfile::TempDir,
    scratch: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            home: tempfile::tempdir().unwrap(),
            scratch: tempfile::tempdir().unwrap(),
        }
    }

    fn ws(&self, name: &str) -> PathBuf {
        self.scratch.path().join(name)
    }

    fn rein(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_rein"))
            .args(args)
            .env("REIN_HOME", self.home.path())
            .env("REIN_MISSIONS", repo().join("missions"))
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn run(&self, model: &str, ws: &Path, extra: &[&str]) -> Output {
        let mut args = vec![
            "run",
            "desk_task",
            "--workspace",
            ws.to_str().unwrap(),
            "--model",
            model,
        ];
        args.extend_from_slice(extra);
        self.rein(&args)
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_lines(o: &Output) -> Vec<Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

#[test]
fn a_scripted_run_passes_prints_each_step_and_is_in_the_journal() {
    let env = Env::new();
    let ws = env.ws("fresh");
    let out = env.run(&fixture("no_reread.jsonl"), &ws, &["--approve=all"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    assert!(
        text.contains("1. read_file notes/overview.md -> executed"),
        "{text}"
    );
    assert!(
        text.contains("finish -> denied: finish refused: re-read the output first"),
        "{text}"
    );
    assert!(
        text.contains("[pass] total-hours (numeric_consistency)"),
        "{text}"
    );
    assert!(text.contains("verdict: PASS"), "{text}");
    assert!(ws.join("out/summary.md").is_file());

    let list = env.rein(&["journal", "list", "--json"]);
    assert_eq!(list.status.code(), Some(0));
    let runs: Value = serde_json::from_str(&stdout(&list)).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 1);
    assert_eq!(runs[0]["status"], "pass");
    assert_eq!(runs[0]["mission_id"], "desk_task");

    let show = env.rein(&["journal", "show", "1", "--json"]);
    let trace: Value = serde_json::from_str(&stdout(&show)).unwrap();
    let steps = trace["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 7);
    assert_eq!(steps[0]["thought"], "Read the overview first.");
    assert_eq!(steps[0]["action"], "read_file");
    // The gate's decision is joined to the step by its call id.
    assert_eq!(steps[3]["call"]["outcome"], "executed");
    assert_eq!(
        trace["checks"].as_array().unwrap().len(),
        desk_task_check_count()
    );
    assert_eq!(trace["changes"].as_array().unwrap().len(), 1);

    let show = env.rein(&["journal", "show", "1"]);
    let text = stdout(&show);
    assert!(text.contains("thought: Check what I wrote."), "{text}");
    assert!(text.contains("verdict: pass"), "{text}");
    // The unqualified decision check failed closed (no decision model) but is advice: the
    // replay marks it as `rein run` does, never as a failure of a passing run.
    assert!(
        text.contains("[advice: no (does not decide)] risk-meaning (decision)"),
        "{text}"
    );
    assert!(!text.contains("[FAIL]"), "{text}");
}

#[test]
fn json_prints_event_lines_and_the_verdict_last() {
    let env = Env::new();
    let out = env.run(
        &fixture("good.jsonl"),
        &env.ws("w"),
        &["--approve=all", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines[0]["event"], "run_started");
    assert!(lines.iter().any(|l| l["event"] == "step"
        && l["action"] == "create_file"
        && l["outcome"] == "executed"));
    assert_eq!(
        lines.iter().filter(|l| l["event"] == "check").count(),
        desk_task_check_count()
    );
    let last = lines.last().unwrap();
    assert_eq!(last["event"], "verdict");
    assert_eq!(last["verdict"]["passed"], true);
    assert_eq!(last["verdict"]["exit_code"], 0);
    assert_eq!(last["verdict"]["figures"]["steps"], 6);
}

#[test]
fn a_failed_verdict_exits_1() {
    let env = Env::new();
    let out = env.run(
        &fixture("finish_without_writing.jsonl"),
        &env.ws("w"),
        &["--approve=all", "--max-turns", "2"],
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(text.contains("cap: stopped after 2 turns"), "{text}");
    assert!(text.contains("[FAIL] summary-exists"), "{text}");
    assert!(text.contains("verdict: FAIL"), "{text}");
}

#[test]
fn a_model_that_runs_out_exits_3_with_a_clear_reason() {
    let env = Env::new();
    let out = env.run(
        &fixture("exhausted.jsonl"),
        &env.ws("w"),
        &["--approve=all"],
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(3), "{text}{}", stderr(&out));
    assert!(
        text.contains("the model failed: the scripted model has no replies left"),
        "{text}"
    );
}

#[test]
fn approve_all_is_refused_in_a_folder_that_was_not_empty() {
    let env = Env::new();
    let ws = env.ws("mine");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("my-notes.txt"), "mine").unwrap();
    let out = env.run(&fixture("good.jsonl"), &ws, &["--approve=all"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--approve=all is refused"),
        "{}",
        stderr(&out)
    );
    assert!(!ws.join("notes").exists(), "nothing was copied in");
}

#[test]
fn without_a_terminal_a_change_ends_approval_required() {
    let env = Env::new();
    let ws = env.ws("w");
    let out = env.run(&fixture("good.jsonl"), &ws, &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(2), "{text}{}", stderr(&out));
    assert!(
        text.contains("create_file out/summary.md -> approval-required"),
        "{text}"
    );
    assert!(text.contains("needs a person's approval"), "{text}");
    assert!(!ws.join("out/summary.md").exists());
}

#[test]
fn human_review_only_missions_are_refused_and_bad_missions_are_bad_input() {
    let env = Env::new();
    let out = env.rein(&[
        "run",
        "screen_qa",
        "--workspace",
        env.ws("w").to_str().unwrap(),
        "--model",
        &fixture("good.jsonl"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("human_review_only"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("rein qualify screen_qa"),
        "{}",
        stderr(&out)
    );

    let out = env.rein(&[
        "run",
        "no_such_mission",
        "--workspace",
        env.ws("w").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no mission \"no_such_mission\""),
        "{}",
        stderr(&out)
    );

    let out = env.rein(&["journal", "show", "42"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("there is no run 42"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn qualify_runs_a_human_review_only_mission_and_reports_false_completions() {
    let env = Env::new();
    let script = env.scratch.path().join("qa.jsonl");
    // Runs 1 and 2 answer right; run 3 names a toggle that is not in the input, so its
    // grounded (semantic) check fails while the deterministic one passes: a disagreement.
    let mut lines = String::new();
    for answer in ["Push notifications", "Push notifications", "Dark mode"] {
        let content = format!("Answer: {answer}\nIts switch is the only one shown as off.\n");
        for v in [
            serde_json::json!({"thought": "w", "action": "create_file", "parameters": {"path": "out/answer.md", "content": content}}),
            serde_json::json!({"thought": "r", "action": "read_file", "parameters": {"path": "out/answer.md"}}),
            serde_json::json!({"thought": "f", "action": "finish", "parameters": {}}),
        ] {
            lines.push_str(&format!("{v}\n"));
        }
    }
    std::fs::write(&script, lines).unwrap();
    let decider = env.scratch.path().join("decide.jsonl");
    std::fs::write(
        &decider,
        "{\"yes\": 0.95}\n{\"yes\": 0.95}\n{\"yes\": 0.9}\n",
    )
    .unwrap();
    let out = env.rein(&[
        "qualify",
        "screen_qa",
        "--json",
        "--model",
        &format!("scripted:{}", script.display()),
        "--decider",
        &format!("scripted:{}", decider.display()),
    ]);
    let lines = json_lines(&out);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let runs: Vec<&Value> = lines
        .iter()
        .filter(|l| l["event"] == "qualify_run")
        .collect();
    assert_eq!(runs.len(), 3, "three runs by default");
    assert_eq!(runs[0]["run"]["status"], "pass");
    assert_eq!(runs[0]["run"]["false_completion"], false);
    assert_eq!(runs[1]["run"]["false_completion"], false);
    assert_eq!(runs[2]["run"]["semantic_passed"], false);
    assert_eq!(runs[2]["run"]["deterministic_passed"], true);
    assert_eq!(runs[2]["run"]["false_completion"], true);
    let last = lines.last().unwrap();
    assert_eq!(last["false_completions"], 1);
    assert_eq!(last["qualified"], false);
    assert!(last["note"]
        .as_str()
        .unwrap()
        .contains("the bar is zero in at least 3 runs"));
    // Each run kept its workspace for a person to review.
    for r in runs {
        let ws = Path::new(r["run"]["workspace"].as_str().unwrap());
        assert!(ws.join("out/answer.md").exists(), "{}", ws.display());
    }
}

fn skip_model_tests() -> bool {
    std::env::var("REIN_SKIP_MODEL_TESTS").is_ok_and(|v| v == "1")
}

/// The real 0.5B model runs desk_task to a verdict. Either verdict is fine; the harness must
/// behave (no panic, a verdict or a cap, exit 0 or 1) and the journal must be complete.
#[test]
fn real_model_desk_task_runs_to_a_verdict() {
    if skip_model_tests() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let ws = scratch.path().join("ws");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rein"));
    cmd.args([
        "run",
        "desk_task",
        "--workspace",
        ws.to_str().unwrap(),
        "--model",
        "qwen2.5-coder-0.5b",
        "--approve=all",
        "--max-turns",
        "10",
        "--json",
    ])
    .env("REIN_MISSIONS", repo().join("missions"))
    .stdin(Stdio::null());
    // The journal goes to the data dir the model lives in (REIN_HOME or the default).
    let out = cmd.output().unwrap();
    let code = out.status.code();
    // A small model sometimes rewrites a frozen input: --approve=all never approves that, and
    // with nobody to ask the run stops there (exit 2), the input untouched.
    let refused_input = code == Some(2) && stdout(&out).contains("this run did not put there");
    assert!(
        matches!(code, Some(0) | Some(1)) || refused_input,
        "exit {code:?}\n{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    let lines = json_lines(&out);
    let verdict = &lines.last().unwrap()["verdict"];
    let steps = verdict["figures"]["steps"].as_u64().unwrap();
    assert!((1..=10).contains(&steps), "{verdict}");
    // Constrained decoding: every reply was a well-formed action.
    assert_eq!(verdict["figures"]["format_errors"], 0, "{verdict}");
    let run = verdict["run"].as_i64().unwrap().to_string();

    let show = Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["journal", "show", &run, "--json"])
        .output()
        .unwrap();
    assert_eq!(show.status.code(), Some(0), "{}", stderr(&show));
    let trace: Value = serde_json::from_str(&stdout(&show)).unwrap();
    let status = trace["run"]["status"].as_str().unwrap();
    if code == Some(0) {
        assert_eq!(status, "pass");
    } else {
        assert!(status == "fail" || status == "aborted", "{status}");
    }
    let recorded = trace["steps"].as_array().unwrap();
    let actions = recorded.iter().filter(|s| s["kind"] != "cap").count() as u64;
    assert_eq!(actions, steps, "every step is in the journal");
    for s in recorded.iter().filter(|s| s["kind"] == "action") {
        assert!(s["action"].is_string() && s["call_id"].is_string(), "{s}");
        assert!(s["prompt_tokens"].as_u64().unwrap() > 0, "{s}");
        assert!(
            s["call"]["outcome"].is_string(),
            "the gate recorded the call: {s}"
        );
    }
    // The judge ran every check, once per judged attempt (and once more for the record when
    // the run stopped without an accepted finish).
    let checks = trace["checks"].as_array().unwrap().len();
    let per_attempt = desk_task_check_count();
    assert!(checks >= per_attempt, "{checks}");
    assert_eq!(checks % per_attempt, 0, "{checks}");

    assert!(trace["run"]["verdict"]["reason"].is_string());
}

/// How many checks desk_task's contract has (each judged attempt records every one).
fn desk_task_check_count() -> usize {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../missions/desk_task/mission.json");
    let mission: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    mission["checks"].as_array().unwrap().len()
}
