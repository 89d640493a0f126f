#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `rewrite-section` lever on desk_task: `rewrite_section` names one required heading and
//! its new text; Rein keeps every other section as it is and writes the file through
//! `write_sections`, the same checks, gate, diff and approval; a file that is not the outline
//! is refused, nothing written.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, Levers, RunOutcome, StepEvent};
use rein_engine::gate::{AllowAll, ApprovalDecision, ScriptedApprover};
use rein_protocol::CompletionRequest;
use serde_json::{json, Value};
use support::{missions_dir, Harness, PromptRecorder};

const SUMMARY: &str = "out/summary.md";

fn line(action: &str, parameters: Value) -> String {
    json!({"thought": "Next.", "action": action, "parameters": parameters}).to_string() + "\n"
}

fn gold_text() -> String {
    std::fs::read_to_string(missions_dir().join("desk_task/judge/gold/files/out/summary.md"))
        .unwrap()
}

fn reads() -> String {
    [
        "notes/overview.md",
        "notes/meeting-notes.md",
        "data/tasks.csv",
    ]
    .iter()
    .map(|p| line("read_file", json!({ "path": p })))
    .collect()
}

fn on() -> Levers {
    Levers {
        write_sections: true,
        rewrite_section: true,
        ..Levers::DEFAULT
    }
}

fn run(
    h: &Harness,
    script: &str,
    levers: Levers,
    approver: &mut dyn rein_engine::gate::Approver,
) -> (RunOutcome, Vec<AgentEvent>, Vec<CompletionRequest>) {
    let mut model = PromptRecorder::new(script, "rewrite_section.jsonl");
    let (out, events) = h.run_gated(&mut model, approver, |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = 1;
    });
    (out, events, model.requests)
}

fn steps<'e>(events: &'e [AgentEvent], action: &str) -> Vec<&'e StepEvent> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Step(s) if s.action.as_deref() == Some(action) => Some(s),
            _ => None,
        })
        .collect()
}

/// The gold report with its total line wrong, written with create_file.
fn wrong_report() -> String {
    gold_text().replace("Total hours: 64", "Total hours: 72")
}

/// The gold report's Tasks section, as a rewrite's text.
fn gold_tasks() -> String {
    let text = gold_text();
    let start = text.find("## Tasks\n").unwrap() + "## Tasks\n".len();
    let end = text.find("## Risks").unwrap();
    text[start..end].trim().to_string()
}

#[test]
fn one_section_is_rewritten_the_rest_kept_and_the_fixed_report_passes() {
    let h = Harness::new("desk_task");
    let script = reads()
        + &line(
            "create_file",
            json!({"path": SUMMARY, "content": wrong_report()}),
        )
        + &line(
            "rewrite_section",
            json!({"path": SUMMARY, "heading": "Tasks", "text": format!("## Tasks\n{}", gold_tasks())}),
        )
        + &line("read_file", json!({ "path": SUMMARY }))
        + &line("finish", json!({"summary": "done"}));
    let (out, events, requests) = run(&h, &script, on(), &mut AllowAll);
    assert_eq!(steps(&events, "rewrite_section")[0].outcome, "executed");
    assert!(out.passed(), "{}", out.reason());
    // Only the total line changed: the diff the person saw is one line.
    assert_eq!(
        std::fs::read_to_string(h.workspace.join(SUMMARY)).unwrap(),
        gold_text()
    );
    // The change ran as write_sections in the journal, under the model's call.
    let trace = h.journal.run_trace(out.run).unwrap();
    let actions: Vec<Option<&str>> = trace
        .steps
        .iter()
        .map(|s| s.step.action.as_deref())
        .collect();
    let step = trace
        .steps
        .iter()
        .find(|s| s.step.action.as_deref() == Some("rewrite_section"))
        .unwrap_or_else(|| panic!("{actions:?}"));
    assert_eq!(step.step.detail["outcome"], "executed");
    // Offered in the schema with the outline's headings, and named in the prompt.
    let branch = requests[0].json_schema.as_ref().unwrap()["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["properties"]["action"]["const"] == "rewrite_section")
        .cloned()
        .expect("rewrite_section is offered");
    assert_eq!(
        branch["properties"]["parameters"]["properties"]["heading"]["enum"],
        json!(["Project summary", "Goal", "Tasks", "Risks"])
    );
    assert_eq!(
        branch["properties"]["parameters"]["properties"]["path"]["const"],
        SUMMARY
    );
    let prompt = format!("{:?}", requests[0].prompt);
    assert!(prompt.contains("- rewrite_section {"), "{prompt}");
    assert!(
        prompt.contains("To fix the report later, use rewrite_section"),
        "{prompt}"
    );
}

#[test]
fn a_rewrite_shows_its_exact_diff_for_approval_and_a_file_off_the_outline_is_refused() {
    let h = Harness::new("desk_task");
    let script = reads()
        + &line(
            "create_file",
            json!({"path": SUMMARY, "content": wrong_report()}),
        )
        + &line(
            "rewrite_section",
            json!({"path": SUMMARY, "heading": "Tasks", "text": gold_tasks()}),
        );
    let mut person = ScriptedApprover::new([
        ApprovalDecision::AllowOnce,
        ApprovalDecision::Deny {
            reason: "not now".into(),
        },
    ]);
    let (_, events, _) = run(&h, &script, on(), &mut person);
    let seen: Vec<&str> = person.seen.iter().map(|r| r.tool.as_str()).collect();
    assert_eq!(
        steps(&events, "rewrite_section")[0].outcome,
        "approval-required",
        "{seen:?}"
    );
    // The person saw one changed line, as write_sections writes it, and nothing was written.
    let asked = &person.seen[1];
    assert_eq!(asked.tool, "write_sections");
    assert_eq!(asked.path, SUMMARY);
    let changed: Vec<&str> = asked
        .diff
        .lines()
        .filter(|l| {
            (l.starts_with('-') || l.starts_with('+'))
                && !l.starts_with("---")
                && !l.starts_with("+++")
        })
        .collect();
    assert_eq!(
        changed,
        ["-Total hours: 72", "+Total hours: 64"],
        "{}",
        asked.diff
    );
    assert_eq!(
        std::fs::read_to_string(h.workspace.join(SUMMARY)).unwrap(),
        wrong_report()
    );

    // A report that lost its Risks heading cannot be split: refused, the file unchanged.
    let h = Harness::new("desk_task");
    let lost = wrong_report().replace("## Risks\n", "");
    let script = reads()
        + &line("create_file", json!({"path": SUMMARY, "content": lost}))
        + &line(
            "rewrite_section",
            json!({"path": SUMMARY, "heading": "Tasks", "text": gold_tasks()}),
        );
    let (out, events, _) = run(&h, &script, on(), &mut AllowAll);
    let step = steps(&events, "rewrite_section")[0];
    assert_eq!(step.outcome, "invalid");
    assert!(
        step.summary.contains("write it whole with write_sections"),
        "{}",
        step.summary
    );
    assert_eq!(
        std::fs::read_to_string(h.workspace.join(SUMMARY)).unwrap(),
        lost
    );
    assert!(!out.passed());
}

#[test]
fn off_there_is_no_rewrite_section_and_a_call_is_an_unknown_tool() {
    let h = Harness::new("desk_task");
    let script = reads()
        + &line(
            "create_file",
            json!({"path": SUMMARY, "content": wrong_report()}),
        )
        + &line(
            "rewrite_section",
            json!({"path": SUMMARY, "heading": "Tasks", "text": gold_tasks()}),
        );
    let levers = Levers {
        write_sections: true,
        ..Levers::DEFAULT
    };
    let (_, events, requests) = run(&h, &script, levers, &mut AllowAll);
    // Not offered (later prompts hold the model's own call, so look at the first).
    assert!(!format!("{:?}", requests[0].prompt).contains("rewrite_section"));
    let step = steps(&events, "rewrite_section")[0];
    assert!(step.summary.contains("unknown tool"), "{}", step.summary);
    assert_eq!(
        std::fs::read_to_string(h.workspace.join(SUMMARY)).unwrap(),
        wrong_report()
    );
}
