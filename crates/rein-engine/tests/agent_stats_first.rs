#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `stats-first` lever: with `facts-tools`, Rein makes the `table_stats` calls the
//! contract's table figures name before the first step, through the gate, journals them as its
//! own and shows the model each result with the figure it gives; never a read for the judge,
//! never a figure of log lines or matches, and said when it does not apply.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{Levers, RunOutcome};
use rein_engine::gate::AllowAll;
use serde_json::{json, Value};
use support::{
    check_facts, copy_dir, finish_line, gold_text, journal_events, missions_dir, read_summary,
    write_summary, Harness, PromptRecorder,
};

fn levers(facts_tools: bool, stats_first: bool, inputs_first: bool) -> Levers {
    Levers {
        facts_tools,
        stats_first,
        inputs_first,
        ..Levers::DEFAULT
    }
}

fn run(h: &Harness, script: &str, levers: Levers) -> (RunOutcome, PromptRecorder) {
    let mut model = PromptRecorder::new(script, "stats_first.jsonl");
    let (outcome, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.limits.attempts = 1;
    });
    (outcome, model)
}

fn the_event(h: &Harness, outcome: &RunOutcome) -> Value {
    let events = journal_events(&h.journal, outcome.run, "stats_first");
    assert_eq!(events.len(), 1, "{events:?}");
    events.into_iter().next().unwrap()
}

/// `s` as it appears inside a recorded prompt (which is Debug-formatted).
fn esc(s: &str) -> String {
    let quoted = format!("{s:?}");
    quoted[1..quoted.len() - 1].to_string()
}

/// A desk suite task, copied with its fixtures.
fn desk(task: &str) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let mdir = dir.path().join("mission");
    copy_dir(&missions_dir().join("../suites/desk").join(task), &mdir);
    Harness::load(dir, mdir.join("mission.json"))
}

#[test]
fn rein_computes_the_total_and_the_model_copies_it_but_has_still_read_nothing() {
    let h = Harness::new("desk_task");
    let script = write_summary(&gold_text()) + &read_summary() + &finish_line();
    let (outcome, model) = run(&h, &script, levers(true, true, false));
    let first = model.prompt(0);
    assert!(
        first.contains(
            "Result of Rein's table_stats call 1 (made for you before your first step): executed"
        ),
        "{first}"
    );
    assert!(
        first.contains(&esc(r#"The sum of the column "hours" of `data/tasks.csv`: 64 (its "sum")"#)),
        "{first}"
    );
    assert!(!first.contains(&esc(r#""distinct""#)), "{first}");
    assert_eq!(
        the_event(&h, &outcome)["calls"],
        json!([{"path": "data/tasks.csv", "column": "hours"}])
    );
    // Rein's call is journaled as Rein's, first, with no reply of the model's.
    let steps = h.journal.run_trace(outcome.run).unwrap().steps;
    assert_eq!(steps[0].step.action.as_deref(), Some("table_stats"));
    assert_eq!(steps[0].step.detail["by"], json!("rein"));
    assert_eq!(steps[0].step.reply, None);
    // A figure is not a read: the model wrote without reading, and the judge says so.
    let (passed, facts) = check_facts(&outcome, "inputs-read");
    assert!(!passed, "{facts}");
    assert!(facts.contains("never read"), "{facts}");
    assert_eq!(outcome.status.to_string(), "fail");
    // The model's own steps: the write, the read back, finish.
    assert_eq!(outcome.figures.steps, 3);
}

#[test]
fn reads_come_first_and_one_progress_note_follows_the_last_call() {
    let h = Harness::new("desk_task");
    let script = write_summary(&gold_text()) + &read_summary() + &finish_line();
    let (outcome, model) = run(&h, &script, levers(true, true, true));
    assert_eq!(outcome.status.to_string(), "pass", "{:?}", outcome.verdict);
    let first = model.prompt(0);
    let last_read = first.find("Result of Rein's read 3").unwrap();
    let stats = first.find("Result of Rein's table_stats call 1").unwrap();
    assert!(last_read < stats, "{first}");
    assert_eq!(first.matches("Progress: ").count(), 1, "{first}");
    assert!(first.rfind("Progress: ").unwrap() > stats, "{first}");
}

#[test]
fn a_count_rides_on_the_call_of_the_same_rows() {
    let h = desk("report-sales-regions");
    let (outcome, model) = run(&h, &finish_line(), levers(true, true, false));
    let calls = the_event(&h, &outcome)["calls"].clone();
    // Four regions' sums and counts in four calls, and the whole file's sum, count and mean
    // in one.
    assert_eq!(calls.as_array().unwrap().len(), 5, "{calls}");
    assert!(
        calls
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["column"] == "amount"),
        "{calls}"
    );
    let first = model.prompt(0);
    assert!(
        first.contains(&esc(r#"The number of data rows of `sales/2024-08.csv` over the rows whose "region" is "North": "#)),
        "{first}"
    );
    assert!(
        first.contains("Result of Rein's table_stats call 5"),
        "{first}"
    );
}

#[test]
fn it_says_why_it_does_not_apply() {
    // Without table_stats in the run.
    let h = Harness::new("desk_task");
    let (outcome, model) = run(&h, &finish_line(), levers(false, true, false));
    let e = the_event(&h, &outcome);
    assert_eq!(e["calls"], json!([]));
    assert!(e["not_applied"]
        .as_str()
        .unwrap()
        .contains("does not offer table_stats"));
    assert!(!model.prompt(0).contains("Rein's table_stats"));
    // Figures of matched lines across files: which lines count is the task's answer.
    let h = desk("report-timesheets");
    let (outcome, model) = run(&h, &finish_line(), levers(true, true, false));
    let e = the_event(&h, &outcome);
    assert!(
        e["not_applied"]
            .as_str()
            .unwrap()
            .contains("no check of the contract is a figure of a table"),
        "{e}"
    );
    assert!(!model.prompt(0).contains("Rein's table_stats"));
    // Off: no event, no call.
    let h = Harness::new("desk_task");
    let (outcome, model) = run(&h, &finish_line(), levers(true, false, false));
    assert!(journal_events(&h.journal, outcome.run, "stats_first").is_empty());
    assert!(!model.prompt(0).contains("Rein's table_stats"));
}
