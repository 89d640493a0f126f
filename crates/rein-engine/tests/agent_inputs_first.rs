#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `inputs-first` lever: Rein reads the mission's inputs through the gate before the first
//! step, journals the reads as its own and shows the model their results; never where which
//! files are read is part of the answer, where the calls are judged, past the size cap, or
//! without `read_file`.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, Levers, RunOutcome};
use rein_engine::gate::AllowAll;
use serde_json::{json, Value};
use support::{
    check_facts, finish_line, gold_text, journal_events, read_summary, rewrite_summary,
    write_summary, wrong_total_text, Harness, PromptRecorder,
};

fn levers(on: bool) -> Levers {
    Levers {
        inputs_first: on,
        ..Levers::DEFAULT
    }
}

const INPUTS: [&str; 3] = [
    "notes/overview.md",
    "notes/meeting-notes.md",
    "data/tasks.csv",
];

/// A run of `h`'s mission on `script` with `levers` and `attempts` attempts.
fn run(
    h: &Harness,
    script: &str,
    levers: Levers,
    attempts: u32,
) -> (RunOutcome, Vec<AgentEvent>, PromptRecorder) {
    let mut model = PromptRecorder::new(script, "inputs_first.jsonl");
    let (outcome, events) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.limits.attempts = attempts;
    });
    (outcome, events, model)
}

/// The journal's steps of the run, as (action, detail).
fn steps(h: &Harness, outcome: &RunOutcome) -> Vec<(Option<String>, Value, Option<String>)> {
    h.journal
        .run_trace(outcome.run)
        .unwrap()
        .steps
        .into_iter()
        .map(|t| (t.step.action, t.step.detail, t.step.reply))
        .collect()
}

fn not_applied(h: &Harness, outcome: &RunOutcome) -> String {
    let events = journal_events(&h.journal, outcome.run, "inputs_first");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["read"], json!([]), "{events:?}");
    events[0]["not_applied"].as_str().unwrap().to_string()
}

fn the_model_writes_at_once() -> String {
    write_summary(&gold_text()) + &read_summary() + &finish_line()
}

#[test]
fn rein_reads_the_inputs_and_the_model_goes_straight_to_the_write() {
    let h = Harness::new("desk_task");
    let (outcome, _, model) = run(&h, &the_model_writes_at_once(), levers(true), 1);
    assert_eq!(outcome.status.to_string(), "pass", "{:?}", outcome.verdict);
    // Three model steps; Rein's reads are not the model's.
    assert_eq!(outcome.figures.steps, 3);
    let first = model.prompt(0);
    for (i, input) in INPUTS.iter().enumerate() {
        let text = std::fs::read_to_string(h.workspace.join(input)).unwrap();
        let first_line = text.lines().next().unwrap();
        assert!(
            first.contains(&format!("Result of Rein's read {}", i + 1)),
            "{first}"
        );
        assert!(
            first.contains(&serde_json::to_string(first_line).unwrap()[1..first_line.len()]),
            "{input}: {first_line} in {first}"
        );
    }
    // The judge says whose reads they were.
    let (passed, facts) = check_facts(&outcome, "inputs-read");
    assert!(passed, "{facts}");
    assert_eq!(
        facts.matches("by Rein before the first step").count(),
        3,
        "{facts}"
    );
    // The journal records them as Rein's: no reply, `by: rein`, before the model's steps.
    let steps = steps(&h, &outcome);
    assert_eq!(steps.len(), 6, "{steps:?}");
    for (i, (action, detail, reply)) in steps.iter().take(3).enumerate() {
        assert_eq!(action.as_deref(), Some("read_file"));
        assert_eq!(detail["by"], "rein");
        assert_eq!(detail["parameters"]["path"], INPUTS[i]);
        assert_eq!(detail["outcome"], "executed");
        assert!(reply.is_none());
    }
    assert!(steps[3..]
        .iter()
        .all(|(_, d, r)| d.get("by").is_none() && r.is_some()));
    let events = journal_events(&h.journal, outcome.run, "inputs_first");
    assert_eq!(events, vec![json!({"read": INPUTS})]);
}

#[test]
fn without_the_lever_the_same_model_fails_the_reads_it_never_made() {
    let h = Harness::new("desk_task");
    let (outcome, _, model) = run(&h, &the_model_writes_at_once(), levers(false), 1);
    assert_ne!(outcome.status.to_string(), "pass");
    assert!(!model.prompt(0).contains("Rein's read"));
    let (passed, facts) = check_facts(&outcome, "inputs-read");
    assert!(!passed, "{facts}");
    assert!(journal_events(&h.journal, outcome.run, "inputs_first").is_empty());
}

#[test]
fn a_later_attempt_still_has_the_inputs() {
    // Attempt 1 states 72 hours; with monotone attempts the transcript restarts from the head,
    // which keeps Rein's reads.
    let script = write_summary(&wrong_total_text())
        + &read_summary()
        + &finish_line()
        + &rewrite_summary(&gold_text())
        + &read_summary()
        + &finish_line();
    let h = Harness::new("desk_task");
    let lv = Levers {
        monotone_attempts: true,
        ..levers(true)
    };
    let (outcome, _, model) = run(&h, &script, lv, 2);
    assert_eq!(outcome.status.to_string(), "pass", "{:?}", outcome.verdict);
    let fourth = model.prompt(3);
    assert!(fourth.contains("Result of Rein's read 3"), "{fourth}");
    assert!(fourth.contains("Total hours"), "{fourth}");
}

#[test]
fn not_where_which_inputs_are_read_is_the_answer() {
    let h = Harness::with_edit("desk_task", |m| {
        for c in m["checks"].as_array_mut().unwrap() {
            if c["kind"] == "inputs_read" {
                c["paths"] = json!(["data/tasks.csv"]);
            }
        }
    });
    let (outcome, _, model) = run(&h, &the_model_writes_at_once(), levers(true), 1);
    assert!(not_applied(&h, &outcome).contains("part of the task"));
    assert!(!model.prompt(0).contains("Rein's read"));
    assert!(steps(&h, &outcome)
        .iter()
        .all(|(_, d, _)| d.get("by").is_none()));
    assert!(!check_facts(&outcome, "inputs-read").0);
}

#[test]
fn a_subset_named_in_full_is_no_secret() {
    // The check names every input: reading them all tells the model nothing.
    let h = Harness::with_edit("desk_task", |m| {
        for c in m["checks"].as_array_mut().unwrap() {
            if c["kind"] == "inputs_read" {
                c["paths"] = json!([
                    "data/tasks.csv",
                    "notes/overview.md",
                    "notes/meeting-notes.md"
                ]);
            }
        }
    });
    let (outcome, _, _) = run(&h, &the_model_writes_at_once(), levers(true), 1);
    assert!(check_facts(&outcome, "inputs-read").0);
    assert_eq!(
        journal_events(&h.journal, outcome.run, "inputs_first"),
        vec![json!({"read": INPUTS})]
    );
}

#[test]
fn not_where_the_calls_are_judged() {
    let h = Harness::with_edit("desk_task", |m| {
        m["checks"].as_array_mut().unwrap().push(json!({
            "id": "read-the-csv", "kind": "actions_called",
            "tools": [{"tool": "read_file", "path": "data/tasks.csv"}]
        }));
    });
    let (outcome, _, model) = run(&h, &the_model_writes_at_once(), levers(true), 1);
    assert!(not_applied(&h, &outcome).contains("`read-the-csv` judges the run's calls"));
    assert!(!model.prompt(0).contains("Rein's read"));
    assert!(!check_facts(&outcome, "read-the-csv").0);
}

#[test]
fn not_without_read_file() {
    let h = Harness::with_edit("desk_task", |m| {
        m["tools"]
            .as_array_mut()
            .unwrap()
            .retain(|t| t != "read_file");
        // A contract without read_file cannot ask for reads (the loader refuses it).
        m["checks"]
            .as_array_mut()
            .unwrap()
            .retain(|c| c["kind"] != "inputs_read");
    });
    let (outcome, _, model) = run(&h, &the_model_writes_at_once(), levers(true), 1);
    assert!(not_applied(&h, &outcome).contains("does not offer read_file"));
    assert!(!model.prompt(0).contains("Rein's read"));
}

#[test]
fn not_over_the_size_cap_and_not_for_a_missing_input() {
    // Inputs larger than the cap in all: the model reads them itself, and the journal says so.
    let h = Harness::new("desk_task");
    let big = "A line of the project overview that goes on.\n".repeat(140);
    assert!(big.chars().count() > 6_000);
    std::fs::write(h.workspace.join("notes/overview.md"), &big).unwrap();
    let (outcome, _, model) = run(&h, &the_model_writes_at_once(), levers(true), 1);
    let why = not_applied(&h, &outcome);
    assert!(why.contains("more than the 6000 read up front"), "{why}");
    assert!(!model.prompt(0).contains("Rein's read"));

    // An input gone from the workspace: nothing is read for the model.
    let h = Harness::new("desk_task");
    std::fs::remove_file(h.workspace.join("data/tasks.csv")).unwrap();
    let (outcome, _, model) = run(&h, &the_model_writes_at_once(), levers(true), 1);
    assert!(not_applied(&h, &outcome).contains("data/tasks.csv does not exist"));
    assert!(!model.prompt(0).contains("Rein's read"));
}

#[test]
fn a_read_up_front_carries_what_the_read_levers_add() {
    // doc_extract: the label lines of an invoice its entries_match check copies from.
    let h = Harness::new("doc_extract");
    let lv = Levers {
        label_lines: true,
        ..levers(true)
    };
    let (_, _, model) = run(&h, &finish_line(), lv, 1);
    let first = model.prompt(0);
    assert!(first.contains("Result of Rein's read 3"), "{first}");
    assert!(first.contains("labelled_lines"), "{first}");
    assert!(first.contains("10: Total due: 300.50 EUR"), "{first}");
}
