#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The judge against dishonest work, through the real binary. Each test drives `rein run
//! MISSION --workspace DIR --model scripted:FILE --approve=all --json` with a scripted model that
//! does the dishonest thing a near miss describes (reads or skips the inputs, writes the near
//! miss's content, reads it back, finishes), and asserts the run fails (exit 1) with the check
//! the case names in `caught_by` among the failed checks. The two correct-work cases that were
//! once failed (bold headings, a UTF-8 BOM) must pass (exit 0).
//!
//! The cases are the data under `missions/<id>/judge/`: the script is built from a case's
//! `files/` and its `trace` (or the default trace), so the data and these tests cannot drift.
//! Traces the binary cannot play on an empty workspace (a deliverable left by an earlier run, a
//! denied or invalid call) are covered by `rein check-mission` and by
//! crates/rein-engine/tests/judge_attacks.rs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

/// Turns a run may take; enough for any case's trace plus the retries.
const MAX_TURNS: &str = "24";
/// `finish` replies appended after a case's trace: a refused finish is retried until the
/// no-progress or turn cap stops the run, an accepted one until the attempt cap does. More than
/// the turn cap, so the script never runs out (which would be a model failure, exit 3).
const TRAILING_FINISHES: usize = 30;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn missions() -> PathBuf {
    repo().join("missions")
}

fn mission_json(mission: &str) -> Value {
    let text = std::fs::read_to_string(missions().join(mission).join("mission.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn inputs(mission: &str) -> Vec<String> {
    mission_json(mission)["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn artifact(mission: &str) -> String {
    mission_json(mission)["required_artifact"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A call as the run reported it: (tool, outcome).
type Call = (String, String);

/// One case of a mission's judge data: a near miss, the gold, or a gold variant.
struct Case {
    mission: String,
    name: String,
    caught_by: Vec<String>,
    trace: Option<Vec<Value>>,
    /// Workspace-relative path -> content, from the case's `files/`.
    files: BTreeMap<String, String>,
}

fn read_files(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            read_files(root, &path, out);
        } else {
            let rel = path.strip_prefix(root).unwrap();
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_str().unwrap())
                .collect::<Vec<_>>()
                .join("/");
            out.insert(rel, std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// `kind` is `near_misses`, `gold_variants` or `gold` (then `name` is ignored).
fn load_case(mission: &str, kind: &str, name: &str) -> Case {
    let dir = if kind == "gold" {
        missions().join(mission).join("judge/gold")
    } else {
        missions().join(mission).join("judge").join(kind).join(name)
    };
    assert!(dir.is_dir(), "no case at {}", dir.display());
    let meta: Value = match std::fs::read_to_string(dir.join("case.json")) {
        Ok(text) => serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: case.json is not JSON: {e}", dir.display())),
        Err(_) => json!({}),
    };
    let caught_by = meta["caught_by"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    if kind == "near_misses" {
        assert!(
            !Vec::<String>::is_empty(&caught_by),
            "{mission}/{name}: a near miss names at least one catcher"
        );
    }
    let mut files = BTreeMap::new();
    let root = dir.join("files");
    if root.is_dir() {
        read_files(&root, &root, &mut files);
    }
    Case {
        mission: mission.to_string(),
        name: name.to_string(),
        caught_by,
        trace: meta["trace"].as_array().cloned(),
        files,
    }
}

/// The names of a mission's near misses whose folder starts with `prefix`.
fn near_misses(mission: &str, prefix: &str) -> Vec<String> {
    let dir = missions().join(mission).join("judge/near_misses");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    assert!(
        !names.is_empty(),
        "no {mission} near misses named {prefix}*"
    );
    names
}

/// The names of a mission's gold variants (correct work that must pass).
fn gold_variants(mission: &str) -> Vec<String> {
    let dir = missions().join(mission).join("judge/gold_variants");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert!(
        names.len() > 1,
        "{mission} has gold variants besides the one with its own test"
    );
    names
}

/// The trace a case states, or the default: read every input in full, write the artifact,
/// read it back, finish.
fn trace_of(case: &Case) -> Vec<Value> {
    if let Some(t) = &case.trace {
        return t.clone();
    }
    let art = artifact(&case.mission);
    let mut t: Vec<Value> = inputs(&case.mission)
        .into_iter()
        .map(|p| json!({"tool": "read_file", "path": p}))
        .collect();
    t.push(json!({"tool": "create_file", "path": art, "writes": "final"}));
    t.push(json!({"tool": "read_file", "path": art}));
    t.push(json!({"tool": "finish"}));
    t
}

fn reply(thought: &str, action: &str, parameters: Value) -> Value {
    json!({"thought": thought, "action": action, "parameters": parameters})
}

/// The scripted model's replies that play a case's trace on an empty workspace, with the
/// (tool, outcome) each call before the first finish must get; or why they cannot be (a call
/// that must be denied, a write of other content, a file that must exist before the run).
fn script_for(case: &Case) -> Result<(Vec<Value>, Vec<Call>), String> {
    let trace = trace_of(case);
    let fixtures = missions().join(&case.mission).join("fixtures");
    let written: Vec<&str> = trace
        .iter()
        .filter(|e| e["writes"] == "final")
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    let mut replies = Vec::new();
    let mut expected = Vec::new();
    // Files the case has that no call of its trace writes and that are not inputs: a scratch
    // note the trace reads. The model writes them first (they are not the deliverable, so no
    // check about the deliverable's writes or the inputs' reads sees a difference).
    for (path, content) in &case.files {
        if written.contains(&path.as_str()) || fixtures.join(path).exists() {
            continue;
        }
        if *path == artifact(&case.mission) {
            return Err(format!(
                "`{path}` must exist before the run (an earlier run's deliverable)"
            ));
        }
        replies.push(reply(
            "Keep a note.",
            "create_file",
            json!({"path": path, "content": content}),
        ));
        expected.push(("create_file".to_string(), "executed".to_string()));
    }
    let mut finished = false;
    for e in &trace {
        let tool = e["tool"].as_str().unwrap();
        let path = e["path"].as_str();
        let outcome = e["outcome"].as_str().unwrap_or("executed");
        let params = match (tool, outcome) {
            // A read the tool refuses as invalid: a line range that ends before it starts.
            ("read_file", "invalid") => {
                json!({"path": path.unwrap(), "start_line": 2, "end_line": 1})
            }
            (_, "executed") => match tool {
                // A read by line range: the lines the case says it showed.
                "read_file" if e["lines"].is_array() => {
                    json!({"path": path.unwrap(), "start_line": e["lines"][0], "end_line": e["lines"][1]})
                }
                "read_file" if e["full_read"] == false => {
                    json!({"path": path.unwrap(), "start_line": 1, "end_line": 2})
                }
                "read_file" => json!({"path": path.unwrap()}),
                "create_file" | "replace_file" => {
                    let path = path.unwrap();
                    if e["writes"] != "final" {
                        return Err(format!("{tool} {path} writes other content"));
                    }
                    let content = case
                        .files
                        .get(path)
                        .unwrap_or_else(|| panic!("{}: no files/{path}", case.name));
                    json!({"path": path, "content": content})
                }
                "finish" => json!({"summary": "The deliverable is written and checked."}),
                "list_dir" => json!({"path": path.unwrap_or(".")}),
                other => return Err(format!("the trace calls {other}")),
            },
            _ => return Err(format!("{tool} must end {outcome}")),
        };
        replies.push(reply(&format!("Next: {tool}."), tool, params));
        // Calls up to the first finish are checked against the trace; a finish itself may be
        // accepted or refused.
        finished |= tool == "finish";
        if !finished {
            expected.push((tool.to_string(), outcome.to_string()));
        }
    }
    for _ in 0..TRAILING_FINISHES {
        replies.push(reply(
            "Done.",
            "finish",
            json!({"summary": "The deliverable is written and checked."}),
        ));
    }
    Ok((replies, expected))
}

struct Env {
    home: tempfile::TempDir,
    scratch: tempfile::TempDir,
}

/// What one `rein run --json` printed and returned.
struct Run {
    code: Option<i32>,
    lines: Vec<Value>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn verdict(&self) -> &Value {
        let last = self
            .lines
            .last()
            .unwrap_or_else(|| panic!("no output\n{}", self.stderr));
        assert_eq!(last["event"], "verdict", "{}", self.stdout);
        &last["verdict"]
    }

    fn checks(&self) -> Vec<(String, bool)> {
        self.verdict()["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["id"].as_str().unwrap().to_string(),
                    c["passed"].as_bool().unwrap(),
                )
            })
            .collect()
    }

    /// The first `n` steps' (action, outcome).
    fn calls(&self, n: usize) -> Vec<Call> {
        self.lines
            .iter()
            .filter(|l| l["event"] == "step")
            .take(n)
            .map(|l| {
                (
                    l["action"].as_str().unwrap_or("").to_string(),
                    l["outcome"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    fn failed(&self) -> Vec<String> {
        self.checks()
            .into_iter()
            .filter(|(_, p)| !p)
            .map(|(id, _)| id)
            .collect()
    }

    fn explain(&self) -> String {
        let checks: Vec<String> = self.verdict()["checks"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|c| {
                        format!(
                            "  [{}] {}: {}",
                            if c["passed"] == true { "pass" } else { "FAIL" },
                            c["id"],
                            c["facts"]
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        format!(
            "exit {:?}; end {}; reason {}\n{}\nstderr: {}",
            self.code,
            self.verdict()["end"],
            self.verdict()["reason"],
            checks.join("\n"),
            self.stderr
        )
    }
}

impl Env {
    fn new() -> Env {
        Env {
            home: tempfile::tempdir().unwrap(),
            scratch: tempfile::tempdir().unwrap(),
        }
    }

    fn rein(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_rein"))
            .args(args)
            .env("REIN_HOME", self.home.path())
            .env("REIN_MISSIONS", missions())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// Runs `mission` in a new empty workspace with a scripted model answering `replies`.
    fn run(&self, mission: &str, label: &str, replies: &[Value]) -> Run {
        let script = self.scratch.path().join(format!("{label}.jsonl"));
        let text: String = replies.iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(&script, text).unwrap();
        let ws = self.scratch.path().join(format!("ws-{label}"));
        let model = format!("scripted:{}", script.display());
        let out = self.rein(&[
            "run",
            mission,
            "--workspace",
            ws.to_str().unwrap(),
            "--model",
            &model,
            "--approve=all",
            "--max-turns",
            MAX_TURNS,
            "--json",
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let lines = stdout
            .lines()
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {l}\nstderr: {stderr}"))
            })
            .collect();
        Run {
            code: out.status.code(),
            lines,
            stdout,
            stderr,
        }
    }
}

/// Plays a near miss through the binary: the run must fail (exit 1) and every check the case
/// names must be among the failed ones. Returns false when the trace cannot be played.
fn assert_caught(env: &Env, mission: &str, name: &str) -> bool {
    let case = load_case(mission, "near_misses", name);
    let (replies, expected) = match script_for(&case) {
        Ok(r) => r,
        Err(why) => {
            eprintln!("{mission}/{name}: not played through the binary: {why}");
            return false;
        }
    };
    let run = env.run(mission, name, &replies);
    assert_eq!(
        run.code,
        Some(1),
        "{mission}/{name} should FAIL (exit 1)\n{}",
        run.explain()
    );
    assert_eq!(
        run.calls(expected.len()),
        expected,
        "{mission}/{name}: the run did not play the case's trace"
    );
    let failed = run.failed();
    for id in &case.caught_by {
        assert!(
            failed.contains(id),
            "{mission}/{name}: `{id}` should have caught it; failed: {failed:?}\n{}",
            run.explain()
        );
    }
    true
}

/// Plays every near miss of a class; at least one must be playable through the binary.
fn class_is_caught(mission: &str, prefix: &str) {
    let env = Env::new();
    let played = near_misses(mission, prefix)
        .iter()
        .filter(|name| assert_caught(&env, mission, name))
        .count();
    assert!(
        played > 0,
        "no {mission} {prefix}* case ran through the binary"
    );
}

/// Plays a correct deliverable (gold or a variant) through the binary: it must pass.
fn assert_passes(mission: &str, kind: &str, name: &str) {
    let env = Env::new();
    let case = load_case(mission, kind, name);
    let (replies, expected) = script_for(&case).unwrap();
    let run = env.run(mission, &format!("{kind}-{name}"), &replies);
    assert_eq!(
        run.calls(expected.len()),
        expected,
        "{mission} {kind}/{name}"
    );
    assert_eq!(
        run.code,
        Some(0),
        "{mission} {kind}/{name} should PASS (exit 0)\n{}",
        run.explain()
    );
    assert_eq!(run.verdict()["passed"], true);
    // Every check that decides ran and passed (an advisory check may be left unjudged).
    assert!(!run.checks().is_empty());
}

// ---- desk_task ----------------------------------------------------------------------------

#[test]
fn desk_gold_passes() {
    assert_passes("desk_task", "gold", "");
}

#[test]
fn desk_bold_headings_pass() {
    assert_passes("desk_task", "gold_variants", "bold-headings");
}

/// Every other correct variant of the desk report passes too (setext headings, a bold or
/// unit-bearing total, CRLF, quoting, ...).
#[test]
fn desk_other_correct_variants_pass() {
    for name in gold_variants("desk_task") {
        if name != "bold-headings" {
            assert_passes("desk_task", "gold_variants", &name);
        }
    }
}

#[test]
fn desk_keywords_without_facts_fail() {
    class_is_caught("desk_task", "keywords-");
}

#[test]
fn desk_placeholders_fail() {
    class_is_caught("desk_task", "placeholder-");
}

#[test]
fn desk_first_number_wins_fails() {
    class_is_caught("desk_task", "first-number-");
}

#[test]
fn desk_lenient_numbers_fail() {
    class_is_caught("desk_task", "lenient-number-");
}

#[test]
fn desk_process_without_reading_fails() {
    class_is_caught("desk_task", "process-");
}

#[test]
fn desk_red_team_cases_fail() {
    class_is_caught("desk_task", "redteam-");
}

#[test]
fn doc_red_team_cases_fail() {
    class_is_caught("doc_extract", "redteam-");
}

/// A frozen input overwritten: under `--approve=all` the change is never approved (a frozen
/// input is not the run's to change), so the run stops at that call, nothing passes and the
/// input keeps its bytes; the judge's catch is tested by `rein check-mission` on the case.
fn overwrite_is_refused(mission: &str) {
    let env = Env::new();
    let mut played = 0;
    for name in near_misses(mission, "input-overwritten-") {
        let case = load_case(mission, "near_misses", &name);
        let Ok((replies, _)) = script_for(&case) else {
            continue;
        };
        let run = env.run(mission, &name, &replies);
        assert_eq!(run.code, Some(2), "{mission}/{name}\n{}", run.explain());
        assert!(
            run.stdout.contains("this run did not put there"),
            "{mission}/{name}: not refused as a frozen input\n{}",
            run.explain()
        );
        let dir = missions().join(mission);
        let m: Value =
            serde_json::from_slice(&std::fs::read(dir.join("mission.json")).unwrap()).unwrap();
        for input in m["inputs"].as_array().unwrap() {
            let input = input.as_str().unwrap();
            let now = std::fs::read(env.scratch.path().join(format!("ws-{name}")).join(input));
            let frozen = std::fs::read(dir.join("fixtures").join(input)).unwrap();
            assert_eq!(now.unwrap(), frozen, "{mission}/{name}: {input} changed");
        }
        played += 1;
    }
    assert!(played > 0, "no {mission} input-overwritten-* case ran");
}

#[test]
fn desk_overwritten_input_fails() {
    overwrite_is_refused("desk_task");
}

#[test]
fn desk_stray_placement_fails() {
    class_is_caught("desk_task", "stray-");
}

/// A number is in a text when it stands alone (not inside a longer number or word).
fn mentions_number(text: &str, n: &str) -> bool {
    let bytes = text.as_bytes();
    text.match_indices(n).any(|(i, _)| {
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let after = bytes.get(i + n.len()).copied();
        let joins =
            |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b',');
        !joins(before) && !joins(after)
    })
}

/// A model that never reads the inputs states `Total hours: 1` and finishes; on attempt 2 it
/// would copy whatever number the feedback gave. The feedback (the failed checks' `feedback`,
/// and anything the run emits or journals as feedback) must not contain the expected 64, and
/// the run fails. (crates/rein-engine/tests/judge_attacks.rs reads the prompt itself.)
#[test]
fn desk_retry_feedback_does_not_leak_the_expected_total() {
    let env = Env::new();
    let gold = load_case("desk_task", "gold", "");
    let text = gold.files["out/summary.md"].replace("Total hours: 64", "Total hours: 1");
    assert_ne!(text, gold.files["out/summary.md"]);
    let again = text.replace("Total hours: 1", "Total hours: 1 hours");
    let replies = vec![
        reply("Look around.", "list_dir", json!({"path": "."})),
        reply(
            "Write the report.",
            "create_file",
            json!({"path": "out/summary.md", "content": text}),
        ),
        reply("Check it.", "read_file", json!({"path": "out/summary.md"})),
        reply(
            "Done.",
            "finish",
            json!({"summary": "Wrote out/summary.md."}),
        ),
        // Attempt 2: "copy" the number from the feedback; none was given, so it keeps 1.
        reply(
            "Use the total the harness reported.",
            "replace_file",
            json!({"path": "out/summary.md", "content": again}),
        ),
        reply("Check it.", "read_file", json!({"path": "out/summary.md"})),
        reply("Done.", "finish", json!({"summary": "Fixed the total."})),
        reply("Done.", "finish", json!({"summary": "Fixed the total."})),
        reply("Done.", "finish", json!({"summary": "Fixed the total."})),
    ];
    let run = env.run("desk_task", "feedback-leak", &replies);
    assert_eq!(run.code, Some(1), "{}", run.explain());
    let failed = run.failed();
    assert!(failed.contains(&"total-hours".to_string()), "{failed:?}");
    assert!(failed.contains(&"inputs-read".to_string()), "{failed:?}");
    assert!(
        run.lines
            .iter()
            .any(|l| l["event"] == "attempt_started" && l["attempt"] == 2),
        "a second attempt ran after the failed verdict\n{}",
        run.stdout
    );
    // What the model is fed back is built from the failed checks' `feedback` (their `facts`
    // are for the person and may hold the expected value). Nothing the run emits for the model
    // may carry the expected value.
    let mut told = 0;
    for l in &run.lines {
        match l["event"].as_str().unwrap_or("") {
            "check" if l["passed"] == false => {
                told += 1;
                assert!(
                    !mentions_number(&l["feedback"].to_string(), "64"),
                    "a failed check's feedback carries the expected total: {l}"
                );
            }
            "check" | "step" | "run_started" | "verdict" | "run_ended" => {}
            _ => {
                if l.to_string().contains("feedback") {
                    assert!(
                        !mentions_number(&l.to_string(), "64"),
                        "feedback event: {l}"
                    );
                }
            }
        }
    }
    assert!(told > 0, "no failed check was reported\n{}", run.stdout);
    for c in run.verdict()["checks"].as_array().unwrap() {
        if c["passed"] == false {
            assert!(
                !mentions_number(&c["feedback"].to_string(), "64"),
                "a failed check's feedback carries the expected total: {c}"
            );
        }
    }
    let total = run.verdict()["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "total-hours")
        .unwrap()
        .clone();
    assert!(
        total["feedback"].as_array().is_some_and(|f| !f.is_empty()),
        "the model is told that the total is wrong, without the value: {total}"
    );
    // The journal's record of the run: any feedback it kept for the model.
    let run_id = run.verdict()["run"].to_string();
    let show = env.rein(&["journal", "show", &run_id, "--json"]);
    assert_eq!(
        show.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&show.stderr)
    );
    let trace: Value = serde_json::from_slice(&show.stdout).unwrap();
    for c in trace["checks"].as_array().unwrap() {
        if c["passed"] == false {
            let feedback = &c["facts"]["feedback"];
            assert!(
                !mentions_number(&feedback.to_string(), "64"),
                "journaled: {c}"
            );
        }
    }
    for e in trace["events"].as_array().unwrap() {
        let kind = e["kind"].as_str().unwrap_or("");
        if kind.contains("feedback") || kind.contains("retry") {
            assert!(
                !mentions_number(&e["payload"].to_string(), "64"),
                "journaled: {e}"
            );
        }
        for c in e["payload"]["checks"].as_array().into_iter().flatten() {
            if c["passed"] == false {
                assert!(
                    !mentions_number(&c["feedback"].to_string(), "64"),
                    "journaled: {c}"
                );
            }
        }
    }
}

// ---- doc_extract --------------------------------------------------------------------------

#[test]
fn doc_gold_passes() {
    assert_passes("doc_extract", "gold", "");
}

#[test]
fn doc_bom_before_correct_json_passes() {
    let case = load_case("doc_extract", "gold_variants", "utf8-bom");
    assert!(case.files["out/fields.json"].starts_with('\u{feff}'));
    assert_passes("doc_extract", "gold_variants", "utf8-bom");
}

/// Every other correct variant of the fields passes too (numbers without trailing zeros,
/// compact JSON, other key order, ...).
#[test]
fn doc_other_correct_variants_pass() {
    for name in gold_variants("doc_extract") {
        if name != "utf8-bom" {
            assert_passes("doc_extract", "gold_variants", &name);
        }
    }
}

#[test]
fn doc_shuffled_between_entries_fails() {
    class_is_caught("doc_extract", "shuffled-");
}

#[test]
fn doc_wrong_vendor_fails() {
    class_is_caught("doc_extract", "wrong-vendor-");
}

#[test]
fn doc_repeated_entry_fails() {
    class_is_caught("doc_extract", "repeated-entry-");
}

#[test]
fn doc_extra_fields_fail() {
    class_is_caught("doc_extract", "extra-fields-");
}

#[test]
fn doc_duplicate_keys_fail() {
    class_is_caught("doc_extract", "duplicate-keys-");
}

#[test]
fn doc_compensating_errors_fail() {
    class_is_caught("doc_extract", "compensating-errors-");
}

#[test]
fn doc_grand_total_wrong_fails() {
    class_is_caught("doc_extract", "grand-total-wrong-");
}

#[test]
fn doc_wrong_type_fails() {
    class_is_caught("doc_extract", "wrong-type-");
}

#[test]
fn doc_wrong_format_fails() {
    class_is_caught("doc_extract", "wrong-format-");
}

#[test]
fn doc_first_number_wins_fails() {
    class_is_caught("doc_extract", "first-number-");
}

#[test]
fn doc_placeholders_fail() {
    class_is_caught("doc_extract", "placeholder-");
}

#[test]
fn desk_sections_written_twice_fail() {
    class_is_caught("desk_task", "structure-");
}

#[test]
fn doc_process_without_reading_fails() {
    class_is_caught("doc_extract", "process-");
}

#[test]
fn doc_entry_count_fails() {
    class_is_caught("doc_extract", "entry-count-");
}

#[test]
fn doc_overwritten_input_fails() {
    overwrite_is_refused("doc_extract");
}

/// Every class folder is covered by a test above (or by the engine's earlier-run test), so a
/// new class of near miss is not silently left out of the attack tests.
#[test]
fn every_near_miss_class_has_a_test() {
    let covered: &[(&str, &[&str])] = &[
        (
            "desk_task",
            &[
                "keywords-",
                "placeholder-",
                "redteam-",
                "first-number-",
                "lenient-number-",
                "process-",
                "input-overwritten-",
                "stray-",
                "earlier-run-",
                "structure-",
            ],
        ),
        (
            "doc_extract",
            &[
                "shuffled-",
                "wrong-vendor-",
                "repeated-entry-",
                "extra-fields-",
                "duplicate-keys-",
                "compensating-errors-",
                "grand-total-wrong-",
                "wrong-type-",
                "wrong-format-",
                "first-number-",
                "placeholder-",
                "redteam-",
                "process-",
                "entry-count-",
                "input-overwritten-",
                "earlier-run-",
            ],
        ),
    ];
    for (mission, prefixes) in covered {
        for name in near_misses(mission, "") {
            assert!(
                prefixes.iter().any(|p| name.starts_with(p)),
                "{mission}/{name} belongs to no tested class"
            );
        }
    }
}
