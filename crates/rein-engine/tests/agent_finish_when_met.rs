#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `finish-when-met` lever on desk_task: once this attempt has written the report, finish
//! would be accepted and every check the checklist may show is met, the next step offers
//! `finish` alone and says why. Checks whose status turns on the answer (the total, the risk)
//! are never consulted, and a failed verdict is not finished again as it stands.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{Levers, RunOutcome};
use rein_engine::gate::AllowAll;
use serde_json::{json, Value};
use support::{
    allowed_tools, gold_fields, journal_events, line, reads, wrong_total_fields, Harness,
    PromptRecorder,
};

const SUMMARY: &str = "out/summary.md";

fn run(
    script: &str,
    finish_when_met: bool,
    attempts: u32,
) -> (RunOutcome, PromptRecorder, Harness) {
    let levers = Levers {
        write_sections: true,
        finish_when_met,
        ..Levers::DEFAULT
    };
    run_with(script, levers, attempts)
}

fn run_with(script: &str, levers: Levers, attempts: u32) -> (RunOutcome, PromptRecorder, Harness) {
    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(script, "finish_when_met.jsonl");
    let (out, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = attempts;
    });
    (out, model, h)
}

/// The tools each request's action schema offered, in order.
fn offered_tools(model: &PromptRecorder) -> Vec<Vec<String>> {
    model.requests.iter().map(allowed_tools).collect()
}

fn finish_alone(tools: &[String]) -> bool {
    tools == ["finish"]
}

fn events(h: &Harness, out: &RunOutcome, kind: &str) -> Vec<Value> {
    journal_events(&h.journal, out.run, kind)
}

fn done() -> String {
    line("finish", json!({"summary": "Wrote the summary."}))
}

fn read_back() -> String {
    line("read_file", json!({ "path": SUMMARY }))
}

#[test]
fn once_the_report_is_written_read_back_and_met_only_finish_is_offered() {
    let script = reads() + &line("write_sections", gold_fields()) + &read_back() + &done();
    let (out, model, h) = run(&script, true, 1);
    assert!(out.passed(), "{}", out.reason());
    let offered = offered_tools(&model);
    assert_eq!(offered.len(), 6, "{offered:?}");
    // Before the write, and right after it (not read back yet: finish would be refused).
    for tools in &offered[..5] {
        assert!(!finish_alone(tools), "{offered:?}");
        assert!(tools.len() > 3, "{tools:?}");
    }
    assert!(finish_alone(&offered[5]), "{offered:?}");
    assert!(model
        .prompt(5)
        .contains("Rein checked out/summary.md: finish would be accepted"));
    assert!(!model.prompt(4).contains("Rein checked"));
    assert_eq!(
        events(&h, &out, "finish_when_met"),
        vec![json!({"step": 6, "attempt": 1})]
    );

    // Without the lever nothing narrows and nothing is said.
    let (out, model, h) = run(&script, false, 1);
    assert!(out.passed(), "{}", out.reason());
    assert!(offered_tools(&model).iter().all(|t| !finish_alone(t)));
    assert!(model.prompts().iter().all(|p| !p.contains("Rein checked")));
    assert!(events(&h, &out, "finish_when_met").is_empty());
}

#[test]
fn a_wrong_answer_is_judged_after_finish_and_not_finished_again_as_it_stands() {
    // Every check the checklist may show is met, but the total is wrong: the lever offers finish
    // alone (it never looks at the total), the verdict fails, and the next attempt, which has
    // written nothing yet, gets every tool back.
    let script = reads()
        + &line("write_sections", wrong_total_fields())
        + &read_back()
        + &done()
        + &read_back()
        + &done();
    let (out, model, h) = run(&script, true, 2);
    assert!(!out.passed());
    let offered = offered_tools(&model);
    assert_eq!(offered.len(), 8, "{offered:?}");
    assert!(finish_alone(&offered[5]), "{offered:?}");
    assert!(
        !finish_alone(&offered[6]),
        "attempt 2 starts with every tool: {offered:?}"
    );
    assert!(
        !finish_alone(&offered[7]),
        "a read is not a change: {offered:?}"
    );
    assert_eq!(events(&h, &out, "finish_when_met").len(), 1);
}

#[test]
fn a_shown_check_not_met_keeps_every_tool() {
    // A task missing from Tasks: finish would be accepted, but `tasks-listed`, a check the
    // checklist shows, is not met, so finish is not pushed.
    let mut missing = gold_fields();
    missing["Tasks"] = json!(missing["Tasks"]
        .as_str()
        .unwrap()
        .replace("- Release checklist: 4 hours, planned for Maya.\n", ""));
    assert!(!missing["Tasks"]
        .as_str()
        .unwrap()
        .contains("Release checklist"));
    let script = reads() + &line("write_sections", missing) + &read_back() + &done();
    let (out, model, _) = run(&script, true, 1);
    assert!(!out.passed());
    assert!(out.reason().contains("tasks-listed"), "{}", out.reason());
    assert!(offered_tools(&model).iter().all(|t| !finish_alone(t)));
    assert!(model.prompts().iter().all(|p| !p.contains("Rein checked")));
}

#[test]
fn a_finish_repeated_once_the_work_is_done_is_not_redrawn() {
    // The first finish, before any write, is refused; the same call once the report is done is
    // a repeat, and `repeat-escape` would redraw it (its last draw without finish at all).
    let script =
        reads() + &done() + &line("write_sections", gold_fields()) + &read_back() + &done();
    let levers = Levers {
        write_sections: true,
        finish_when_met: true,
        repeat_escape: true,
        ..Levers::DEFAULT
    };
    let (out, model, h) = run_with(&script, levers, 1);
    assert!(out.passed(), "{}", out.reason());
    assert_eq!(model.requests.len(), 7, "no redraw");
    assert!(events(&h, &out, "repeat_escape").is_empty());
}
