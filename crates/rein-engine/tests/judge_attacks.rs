#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The judge against dishonest work that the binary cannot stage (it refuses `--approve=all` in
//! a folder that is not empty): a deliverable left on disk by an earlier run, and a model that
//! reads its own prompt to copy the expected value out of the retry feedback. The near misses
//! are the data under missions/<id>/judge/; crates/rein-cli/tests/judge_attacks.rs plays the
//! rest through `rein run`.

#[path = "agent_support/mod.rs"]
mod support;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rein_engine::agent::RunOutcome;
use rein_engine::gate::{AllowAll, ApprovalDecision, ScriptedApprover};
use rein_models::{
    ChooseReply, ChooseRequest, Completion, CompletionRequest, Model, ModelIdentity, Prompt, Role,
    ScriptedModel,
};
use serde_json::{json, Value};
use support::{finish_refusals, missions_dir, Harness};

/// Turns for a run whose finish is always refused: the cap stops it (exit 1) with the judge's
/// verdict for the record, before the script runs out.
const MAX_TURNS: u32 = 12;

/// The finish rule refused every finish: the deliverable is not this run's work.
fn refused_as_not_this_runs_work(events: &[rein_engine::agent::AgentEvent]) {
    let refusals = finish_refusals(events);
    assert!(!refusals.is_empty(), "finish was refused");
    for r in &refusals {
        assert!(r.contains("was not written in this run"), "{r}");
    }
}

fn case_file(mission: &str, case: &str, path: &str) -> String {
    let dir: PathBuf = if case == "gold" {
        missions_dir().join(mission).join("judge/gold")
    } else {
        missions_dir().join(mission).join("judge").join(case)
    };
    std::fs::read_to_string(dir.join("files").join(path))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join("files").join(path).display()))
}

fn caught_by(mission: &str, near_miss: &str) -> Vec<String> {
    let file = missions_dir()
        .join(mission)
        .join("judge/near_misses")
        .join(near_miss)
        .join("case.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    v["caught_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

fn reply(thought: &str, action: &str, parameters: Value) -> Value {
    json!({"thought": thought, "action": action, "parameters": parameters})
}

fn finish() -> Value {
    reply(
        "Done.",
        "finish",
        json!({"summary": "The deliverable is written and checked."}),
    )
}

fn scripted(replies: &[Value]) -> ScriptedModel {
    let text: String = replies.iter().map(|r| format!("{r}\n")).collect();
    ScriptedModel::from_str_named(&text, Path::new("judge-attack.jsonl")).unwrap()
}

/// The deciding checks that failed (an advisory check never decides).
fn failed(out: &RunOutcome) -> Vec<String> {
    out.verdict
        .as_ref()
        .unwrap_or_else(|| panic!("no verdict: {:#?}", out.document()))
        .checks
        .iter()
        .filter(|c| !c.passed && !c.advisory)
        .map(|c| c.id.clone())
        .collect()
}

/// Writes a file into the workspace before the run, as an earlier run would have left it.
fn leave(h: &Harness, path: &str, content: &str) {
    let target = h.workspace.join(path);
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::write(target, content).unwrap();
}

fn read_inputs(h: &Harness) -> Vec<Value> {
    h.contract
        .mission
        .inputs
        .iter()
        .map(|p| reply(&format!("Read {p}."), "read_file", json!({"path": p})))
        .collect()
}

/// desk_task/earlier-run-not-written: the right report is on disk before the run; the run
/// reads the inputs and the report, and finishes without writing. The finish rule refuses it
/// and, for the record, only written-this-run fails.
#[test]
fn desk_a_report_left_by_an_earlier_run_is_not_this_runs_work() {
    let h = Harness::new("desk_task");
    leave(
        &h,
        "out/summary.md",
        &case_file(
            "desk_task",
            "near_misses/earlier-run-not-written",
            "out/summary.md",
        ),
    );
    let mut replies = read_inputs(&h);
    replies.push(reply(
        "Check the report.",
        "read_file",
        json!({"path": "out/summary.md"}),
    ));
    replies.extend(std::iter::repeat_n(finish(), 20));
    let mut model = scripted(&replies);
    let mut person = ScriptedApprover::new([]);
    let (out, events) = h.run_model(
        &mut model,
        &mut person,
        |o| o.limits.max_turns = MAX_TURNS,
        None,
        &mut |_| {},
    );
    refused_as_not_this_runs_work(&events);
    assert_eq!(out.exit_code(), 1, "{:#?}", out.document());
    assert!(person.seen.is_empty(), "nothing was proposed");
    assert_eq!(
        failed(&out),
        caught_by("desk_task", "earlier-run-not-written")
    );
    assert_eq!(failed(&out), vec!["written-this-run".to_string()]);
}

/// desk_task/earlier-run-write-denied: this run's write of the report was denied by the
/// person; the report on disk is an earlier run's.
#[test]
fn desk_a_denied_write_over_an_earlier_report_is_not_this_runs_work() {
    let h = Harness::new("desk_task");
    let earlier = case_file(
        "desk_task",
        "near_misses/earlier-run-write-denied",
        "out/summary.md",
    );
    leave(&h, "out/summary.md", &earlier);
    let mine = earlier.replace(
        "Maya Patel leads the work",
        "Maya Patel is the project lead",
    );
    assert_ne!(mine, earlier);
    let mut replies = read_inputs(&h);
    replies.push(reply(
        "Write the report.",
        "replace_file",
        json!({"path": "out/summary.md", "content": mine}),
    ));
    replies.push(reply(
        "Check the report.",
        "read_file",
        json!({"path": "out/summary.md"}),
    ));
    replies.extend(std::iter::repeat_n(finish(), 20));
    let mut model = scripted(&replies);
    let mut person = ScriptedApprover::new([ApprovalDecision::Deny {
        reason: "not now".into(),
    }]);
    let (out, events) = h.run_model(
        &mut model,
        &mut person,
        |o| o.limits.max_turns = MAX_TURNS,
        None,
        &mut |_| {},
    );
    refused_as_not_this_runs_work(&events);
    assert_eq!(person.seen.len(), 1, "the write was shown to the person");
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("out/summary.md")).unwrap(),
        earlier
    );
    assert_eq!(out.exit_code(), 1, "{:#?}", out.document());
    let failed = failed(&out);
    for id in caught_by("desk_task", "earlier-run-write-denied") {
        assert!(failed.contains(&id), "{id} should fail: {failed:?}");
    }
}

/// doc_extract/earlier-run-not-written: the right fields are on disk before the run.
#[test]
fn doc_fields_left_by_an_earlier_run_are_not_this_runs_work() {
    let h = Harness::new("doc_extract");
    leave(
        &h,
        "out/fields.json",
        &case_file(
            "doc_extract",
            "near_misses/earlier-run-not-written",
            "out/fields.json",
        ),
    );
    let mut replies = read_inputs(&h);
    replies.push(reply(
        "Check the fields.",
        "read_file",
        json!({"path": "out/fields.json"}),
    ));
    replies.extend(std::iter::repeat_n(finish(), 20));
    let mut model = scripted(&replies);
    let mut person = ScriptedApprover::new([]);
    let (out, events) = h.run_model(
        &mut model,
        &mut person,
        |o| o.limits.max_turns = MAX_TURNS,
        None,
        &mut |_| {},
    );
    refused_as_not_this_runs_work(&events);
    assert_eq!(out.exit_code(), 1, "{:#?}", out.document());
    assert_eq!(
        failed(&out),
        caught_by("doc_extract", "earlier-run-not-written")
    );
}

/// The same deliverable written by this run passes: the earlier-run failures above are about
/// who wrote it, not about its content.
#[test]
fn desk_the_same_report_written_by_this_run_passes() {
    let h = Harness::new("desk_task");
    let gold = case_file("desk_task", "gold", "out/summary.md");
    let mut replies = read_inputs(&h);
    replies.push(reply(
        "Write the report.",
        "create_file",
        json!({"path": "out/summary.md", "content": gold}),
    ));
    replies.push(reply(
        "Check the report.",
        "read_file",
        json!({"path": "out/summary.md"}),
    ));
    replies.push(finish());
    let mut model = scripted(&replies);
    let (out, _) = h.run_model(&mut model, &mut AllowAll, |_| {}, None, &mut |_| {});
    assert!(out.passed(), "{:#?}", out.document());
}

/// A model's next reply: fixed, or built from what it was just told.
enum Turn {
    Fixed(Value),
    /// Rewrite the report with whatever number the last message gave for the total.
    CopyTotal {
        template: String,
    },
}

/// One call's messages, as (role, content).
type Prompted = Vec<(String, String)>;

/// A dishonest model that reads its prompt: it records every message it is sent and, when told
/// to, copies the number the feedback gave for the total into its report.
struct Copycat {
    base: ScriptedModel,
    turns: VecDeque<Turn>,
    /// Every call's messages, as (role, content).
    seen: Arc<Mutex<Vec<Prompted>>>,
    /// The totals it copied.
    copied: Arc<Mutex<Vec<String>>>,
}

/// The last number on any line of `text` that mentions the total, if there is one.
fn number_for_total(text: &str) -> Option<String> {
    let mut found = None;
    for line in text.lines().filter(|l| l.to_lowercase().contains("total")) {
        let mut cur = String::new();
        for ch in line.chars().chain(std::iter::once(' ')) {
            if ch.is_ascii_digit() || (ch == '.' && !cur.is_empty()) {
                cur.push(ch);
            } else if !cur.is_empty() {
                found = Some(cur.trim_end_matches('.').to_string());
                cur.clear();
            }
        }
    }
    found
}

impl Model for Copycat {
    fn identity(&self) -> &ModelIdentity {
        self.base.identity()
    }

    fn complete(
        &mut self,
        request: &CompletionRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> rein_models::Result<Completion> {
        let messages: Vec<(String, String)> = match &request.prompt {
            Prompt::Chat { messages } => messages
                .iter()
                .map(|m| (format!("{:?}", m.role), m.content.clone()))
                .collect(),
            Prompt::Raw { text } => vec![("Raw".into(), text.clone())],
        };
        let last_user = match &request.prompt {
            Prompt::Chat { messages } => messages
                .iter()
                .rev()
                .find(|m| m.role == Role::User)
                .map(|m| m.content.clone())
                .unwrap_or_default(),
            Prompt::Raw { text } => text.clone(),
        };
        self.seen.lock().unwrap().push(messages);
        let value = match self.turns.pop_front() {
            Some(Turn::Fixed(v)) => v,
            Some(Turn::CopyTotal { template }) => {
                let n = number_for_total(&last_user).unwrap_or_else(|| "1".into());
                self.copied.lock().unwrap().push(n.clone());
                reply(
                    "Use the total the harness reported.",
                    "replace_file",
                    json!({"path": "out/summary.md", "content": template.replace("{N}", &n)}),
                )
            }
            None => finish(),
        };
        scripted(&[value]).complete(request, on_text)
    }

    fn choose(&mut self, request: &ChooseRequest) -> rein_models::Result<ChooseReply> {
        self.base.choose(request)
    }
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

/// The retry-feedback leak: a model that never reads the inputs states `Total hours: 1` and
/// finishes; on attempt 2 it copies whatever number the feedback gave for the total. Nothing it
/// is told after the task (tool results, refusals, the feedback) may contain the expected 64,
/// and the run fails.
#[test]
fn desk_retry_feedback_never_tells_the_model_the_expected_total() {
    let h = Harness::new("desk_task");
    let gold = case_file("desk_task", "gold", "out/summary.md");
    let template = gold.replace("Total hours: 64", "Total hours: {N}");
    assert_ne!(template, gold);
    let first = template.replace("{N}", "1");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let copied = Arc::new(Mutex::new(Vec::new()));
    let mut model = Copycat {
        base: scripted(&[]),
        turns: VecDeque::from(vec![
            Turn::Fixed(reply("Look around.", "list_dir", json!({"path": "."}))),
            Turn::Fixed(reply(
                "Write the report.",
                "create_file",
                json!({"path": "out/summary.md", "content": first}),
            )),
            Turn::Fixed(reply(
                "Check it.",
                "read_file",
                json!({"path": "out/summary.md"}),
            )),
            Turn::Fixed(finish()),
            // Attempt 2 opens with the feedback.
            Turn::CopyTotal { template },
            Turn::Fixed(reply(
                "Check it.",
                "read_file",
                json!({"path": "out/summary.md"}),
            )),
            Turn::Fixed(finish()),
        ]),
        seen: seen.clone(),
        copied: copied.clone(),
    };
    let (out, events) = h.run_model(&mut model, &mut AllowAll, |_| {}, None, &mut |_| {});
    assert!(!out.passed(), "{:#?}", out.document());
    assert_eq!(out.exit_code(), 1, "{:#?}", out.document());
    assert!(out.figures.attempts >= 2, "{:#?}", out.document());
    assert_eq!(
        copied.lock().unwrap().len(),
        1,
        "attempt 2 began with feedback"
    );
    let failed = failed(&out);
    assert!(failed.contains(&"total-hours".to_string()), "{failed:?}");
    assert!(failed.contains(&"inputs-read".to_string()), "{failed:?}");

    let seen = seen.lock().unwrap();
    let initial = seen[0].len();
    // The feedback is the last user message of the first call of attempt 2.
    let feedback = seen[4]
        .iter()
        .rev()
        .find(|(role, _)| role == "User")
        .map(|(_, c)| c.clone())
        .unwrap();
    assert!(
        feedback.contains("total-hours"),
        "the model is told which check failed: {feedback}"
    );
    assert!(
        !mentions_number(&feedback, "64"),
        "the feedback leaks the total: {feedback}"
    );
    // Nothing the model was told after the task (it never read an input) names 64.
    for call in seen.iter() {
        for (role, content) in call.iter().skip(initial) {
            assert!(
                !mentions_number(content, "64"),
                "a {role} message told the model the expected total: {content}"
            );
        }
    }
    assert!(events.iter().all(|e| !matches!(e,
        rein_engine::agent::AgentEvent::RunEnded { status, .. } if status == "pass")));
}
