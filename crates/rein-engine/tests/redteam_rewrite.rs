#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Attacks on `rewrite_section` and `read-back` run end to end with a scripted model: the
//! deliverable named by another spelling of its path, a file changed on disk after it was
//! shown back, a later write too long to show back.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, Levers, RunOutcome};
use rein_engine::gate::{AllowAll, Approver};
use serde_json::{json, Value};
use support::{missions_dir, Harness, PromptRecorder};

const SUMMARY: &str = "out/summary.md";

fn line(action: &str, parameters: Value) -> String {
    json!({"thought": "Next.", "action": action, "parameters": parameters}).to_string() + "\n"
}

fn gold() -> String {
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

fn gold_tasks() -> String {
    let text = gold();
    let start = text.find("## Tasks\n").unwrap() + "## Tasks\n".len();
    let end = text.find("## Risks").unwrap();
    text[start..end].trim().to_string()
}

fn levers() -> Levers {
    Levers {
        write_sections: true,
        rewrite_section: true,
        read_back: true,
        ..Levers::DEFAULT
    }
}

fn run(
    h: &Harness,
    model: &mut PromptRecorder,
    approver: &mut dyn Approver,
) -> (RunOutcome, Vec<AgentEvent>) {
    h.run_gated(model, approver, |o| {
        o.levers = levers();
        o.constrained = true;
        o.limits.attempts = 1;
    })
}

fn finish_refusals(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::FinishRefused { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_rewrite_named_by_another_spelling_of_the_path_is_shown_back_and_finishes() {
    let h = Harness::new("desk_task");
    let wrong = gold().replace("Total hours: 64", "Total hours: 72");
    let script = reads()
        + &line("create_file", json!({"path": SUMMARY, "content": wrong}))
        + &line(
            "rewrite_section",
            json!({"path": "./out//summary.md", "heading": "Tasks", "text": gold_tasks()}),
        )
        + &line("finish", json!({"summary": "done"}));
    let mut model = PromptRecorder::new(&script, "redteam_path.jsonl");
    let (out, events) = run(&h, &mut model, &mut AllowAll);
    assert!(
        out.passed(),
        "{} {:?}",
        out.reason(),
        finish_refusals(&events)
    );
    assert_eq!(
        std::fs::read_to_string(h.workspace.join(SUMMARY)).unwrap(),
        gold()
    );
    // Shown back after the rewrite: the prompt after it holds the fixed file whole.
    let shown = format!("{:?}", format!("<<<\n{}\n>>>", gold()));
    assert!(model.prompt(5).contains(shown.trim_matches('"')));
}

#[test]
fn a_deliverable_changed_on_disk_after_it_was_shown_back_is_never_finished() {
    let h = Harness::new("desk_task");
    let script = reads()
        + &line("create_file", json!({"path": SUMMARY, "content": gold()}))
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
    let (out, events) = run(&h, &mut model, &mut AllowAll);
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
        + &line("create_file", json!({"path": SUMMARY, "content": gold()}))
        + &line(
            "edit_file",
            json!({"path": SUMMARY, "old_text": "Total hours: 64", "new_text": long}),
        )
        + &line("finish", json!({"summary": "done"}));
    let mut model = PromptRecorder::new(&script, "redteam_long.jsonl");
    let (out, events) = run(&h, &mut model, &mut AllowAll);
    // Shown back once, after the first write; never after the long one.
    assert_eq!(model.prompt(5).matches("back for you").count(), 1);
    assert!(!out.passed());
    let refused = finish_refusals(&events);
    assert!(refused.iter().any(|r| r.contains("re-read")), "{refused:?}");
}
