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
use serde_json::json;
use support::{finish_refusals, gold_text, line, reads, Harness, PromptRecorder};

const SUMMARY: &str = "out/summary.md";

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

/// The branch of `tool` in the action schema of `request`, if decoding offered it.
fn offered(request: &CompletionRequest, tool: &str) -> Option<serde_json::Value> {
    request.json_schema.as_ref()?["anyOf"]
        .as_array()?
        .iter()
        .find(|b| b["properties"]["action"]["const"] == tool)
        .cloned()
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

/// The inputs read, the wrong report written whole, then its Tasks section rewritten right.
fn wrong_report_then_fix() -> String {
    reads()
        + &line(
            "create_file",
            json!({"path": SUMMARY, "content": wrong_report()}),
        )
        + &line(
            "rewrite_section",
            json!({"path": SUMMARY, "heading": "Tasks", "text": gold_tasks()}),
        )
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
    // Named in the prompt from the start, offered by decoding only once the report exists
    // (from the request after create_file), with the outline's headings.
    let writes = requests
        .iter()
        .position(|r| offered(r, "rewrite_section").is_some())
        .expect("rewrite_section is offered");
    assert_eq!(
        writes,
        reads().lines().count() + 1,
        "offered before the write"
    );
    assert!(offered(&requests[0], "create_file").is_some());
    let branch = offered(&requests[writes], "rewrite_section").unwrap();
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
    let script = wrong_report_then_fix();
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
    let script = wrong_report_then_fix();
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

/// Both levers and `read-back`, with a model the test keeps.
fn run_read_back(
    h: &Harness,
    model: &mut PromptRecorder,
    approver: &mut dyn rein_engine::gate::Approver,
) -> (RunOutcome, Vec<AgentEvent>) {
    h.run_gated(model, approver, |o| {
        o.levers = Levers {
            read_back: true,
            ..on()
        };
        o.constrained = true;
        o.limits.attempts = 1;
    })
}

// Attacks on `rewrite_section` and `read-back` end to end: the deliverable named by another
// spelling of its path, a file changed on disk after it was shown back, a later write too long
// to show back.

#[test]
fn a_rewrite_named_by_another_spelling_of_the_path_is_shown_back_and_finishes() {
    let h = Harness::new("desk_task");
    let wrong = gold_text().replace("Total hours: 64", "Total hours: 72");
    let script = reads()
        + &line("create_file", json!({"path": SUMMARY, "content": wrong}))
        + &line(
            "rewrite_section",
            json!({"path": "./out//summary.md", "heading": "Tasks", "text": gold_tasks()}),
        )
        + &line("finish", json!({"summary": "done"}));
    let mut model = PromptRecorder::new(&script, "redteam_path.jsonl");
    let (out, events) = run_read_back(&h, &mut model, &mut AllowAll);
    assert!(
        out.passed(),
        "{} {:?}",
        out.reason(),
        finish_refusals(&events)
    );
    assert_eq!(
        std::fs::read_to_string(h.workspace.join(SUMMARY)).unwrap(),
        gold_text()
    );
    // Shown back after the rewrite: the prompt after it holds the fixed file whole.
    let shown = format!("{:?}", format!("<<<\n{}\n>>>", gold_text()));
    assert!(model.prompt(5).contains(shown.trim_matches('"')));
}

#[test]
fn a_deliverable_changed_on_disk_after_it_was_shown_back_is_never_finished() {
    let h = Harness::new("desk_task");
    let script = reads()
        + &line(
            "create_file",
            json!({"path": SUMMARY, "content": gold_text()}),
        )
        + &line("finish", json!({"summary": "done"}));
    // Before the model's finish reply (call 4), the file changes on disk behind Rein's back.
    let file = h.workspace.join(SUMMARY);
    let tap: support::Tap = Box::new(move |call, _, _| {
        if call == 4 {
            let changed = std::fs::read_to_string(&file)
                .unwrap()
                .replace("Total hours: 64", "Total hours: 72");
            std::fs::write(&file, changed).unwrap();
        }
    });
    let mut model = PromptRecorder::tapped(&script, "redteam_changed.jsonl", tap);
    let (out, events) = run_read_back(&h, &mut model, &mut AllowAll);
    assert!(model.prompt(4).contains("back for you"));
    assert!(!out.passed());
    let refused = finish_refusals(&events);
    assert!(
        refused
            .iter()
            .any(|r| r.contains("not what this run last wrote")),
        "{refused:?}"
    );
}

#[test]
fn a_later_write_too_long_to_show_back_needs_a_read_before_finish() {
    let h = Harness::new("desk_task");
    let long = format!(
        "Total hours: 64\n\n{}",
        "The renewal flow was reviewed with the branch staff in detail. ".repeat(120)
    );
    let script = reads()
        + &line(
            "create_file",
            json!({"path": SUMMARY, "content": gold_text()}),
        )
        + &line(
            "edit_file",
            json!({"path": SUMMARY, "old_text": "Total hours: 64", "new_text": long}),
        )
        + &line("finish", json!({"summary": "done"}));
    let mut model = PromptRecorder::new(&script, "redteam_long.jsonl");
    let (out, events) = run_read_back(&h, &mut model, &mut AllowAll);
    // Shown back once, after the first write; never after the long one.
    assert_eq!(model.prompt(5).matches("back for you").count(), 1);
    assert!(!out.passed());
    let refused = finish_refusals(&events);
    assert!(refused.iter().any(|r| r.contains("re-read")), "{refused:?}");
}

/// A `rewrite_section` of the deliverable is a write of it, so verified sampling judges it
/// like any other: a rewrite that leaves a check failing loses to one that passes, and the
/// person is asked about the proposed one only.
#[test]
fn a_rewrite_is_sampled_and_a_wrong_one_loses_to_a_right_one() {
    let h = Harness::new("desk_task");
    let tasks = gold_tasks();
    let create = line(
        "create_file",
        json!({"path": SUMMARY, "content": wrong_report()}),
    );
    let script = reads()
        + &create
        + &create
        + &line(
            "rewrite_section",
            json!({"path": SUMMARY, "heading": "Tasks", "text": tasks.replace("Total hours: 64", "Total hours: 70")}),
        )
        + &line(
            "rewrite_section",
            json!({"path": SUMMARY, "heading": "Tasks", "text": tasks}),
        )
        + &line("read_file", json!({ "path": SUMMARY }))
        + &line("finish", json!({"summary": "done"}));
    let mut model = PromptRecorder::new(&script, "rewrite_sampled.jsonl");
    let (out, events) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = on();
        o.constrained = true;
        o.limits.attempts = 1;
        o.samples = 2;
    });
    assert!(out.passed(), "{}", out.reason());
    assert_eq!(
        std::fs::read_to_string(h.workspace.join(SUMMARY)).unwrap(),
        gold_text()
    );
    let sampled = support::sampled(&events);
    assert_eq!(sampled.len(), 2, "{sampled:?}");
    let (rewrites, chosen) = &sampled[1];
    assert_eq!(rewrites[0].tool.as_deref(), Some("rewrite_section"));
    assert_eq!(rewrites[0].failed, vec!["total-hours"], "{rewrites:?}");
    assert!(rewrites[1].clean, "{rewrites:?}");
    assert_eq!(*chosen, 1);
    assert_eq!(out.figures.sample_draws, 4);
}
