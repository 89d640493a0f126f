#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `monotone-attempts` lever through the real execution gate and journal: a later attempt
//! that fails a check the previous version passed is undone through the journal's undo (a
//! change a person sees in `rein changes`), the previous version stands and decides the
//! verdict; a better attempt stays. No trade of checks: fixing two and breaking one is worse.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, Levers, RunOutcome};
use rein_engine::gate::AllowAll;
use rein_workspace::Workspace;
use serde_json::{json, Value};
use support::{fixture, Harness, PromptRecorder};

const SUMMARY: &str = "out/summary.md";

fn line(thought: &str, action: &str, parameters: Value) -> String {
    json!({"thought": thought, "action": action, "parameters": parameters}).to_string() + "\n"
}

fn gold() -> String {
    std::fs::read_to_string(fixture("report.md")).unwrap()
}

/// Attempt 1: read the inputs, create `report`, read it back, finish.
fn first_attempt(report: &str) -> String {
    let mut s = String::new();
    for p in [
        "notes/overview.md",
        "notes/meeting-notes.md",
        "data/tasks.csv",
    ] {
        s += &line("Read.", "read_file", json!({"path": p}));
    }
    s += &line(
        "Write.",
        "create_file",
        json!({"path": SUMMARY, "content": report}),
    );
    s += &line("Check.", "read_file", json!({"path": SUMMARY}));
    s += &line("Done.", "finish", json!({"summary": "wrote it"}));
    s
}

/// A later attempt: replace the whole report, read it back, finish.
fn rewrite(report: &str) -> String {
    line(
        "Rewrite.",
        "replace_file",
        json!({"path": SUMMARY, "content": report}),
    ) + &line("Check.", "read_file", json!({"path": SUMMARY}))
        + &line("Done.", "finish", json!({"summary": "rewrote it"}))
}

/// Runs the script through the real gate (journal, apply, undo) with `attempts` attempts.
fn run(
    h: &Harness,
    script: &str,
    levers: Levers,
    attempts: u32,
) -> (RunOutcome, Vec<AgentEvent>, Vec<String>) {
    let mut model = PromptRecorder::new(script, "monotone.jsonl");
    let (outcome, events) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.limits.attempts = attempts;
    });
    (outcome, events, model.prompts())
}

fn monotone() -> Levers {
    Levers {
        monotone_attempts: true,
        ..Levers::DEFAULT
    }
}

fn on_disk(h: &Harness) -> String {
    std::fs::read_to_string(h.workspace.join(SUMMARY)).unwrap()
}

fn failed(out: &RunOutcome) -> Vec<String> {
    let v = out.verdict.as_ref().unwrap();
    v.checks
        .iter()
        .filter(|c| !c.passed && !c.advisory)
        .map(|c| c.id.clone())
        .collect()
}

fn undone_events(events: &[AgentEvent]) -> Vec<(u32, Vec<String>, usize)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::AttemptUndone {
                attempt,
                broke,
                undone,
                error,
            } => {
                assert!(error.is_none(), "{error:?}");
                Some((*attempt, broke.clone(), undone.len()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_worse_second_attempt_is_undone_through_the_journal_and_the_first_stands() {
    let h = Harness::new("desk_task");
    let first = gold().replace("Total hours: 64", "Total hours: 60");
    // Attempt 2 loses the Risks heading (and still has the wrong total): worse.
    let worse = first.replace("## Risks\n", "");
    let script = first_attempt(&first) + &rewrite(&worse);
    let (out, events, prompts) = run(&h, &script, monotone(), 2);

    assert!(!out.passed());
    assert_eq!(on_disk(&h), first, "attempt 1's report stands");
    assert_eq!(
        failed(&out),
        vec!["total-hours"],
        "the verdict is the first version's"
    );
    let undone = undone_events(&events);
    assert_eq!(undone.len(), 1, "{undone:?}");
    assert_eq!(undone[0].0, 2);
    assert!(
        undone[0].1.contains(&"summary-complete".to_string()),
        "{undone:?}"
    );
    assert_eq!(undone[0].2, 1, "the one replace_file is undone");

    // The journal shows it: an event, and an undo change of the run's change.
    let trace = h.journal.run_trace(out.run).unwrap();
    let ev: Vec<_> = trace
        .events
        .iter()
        .filter(|e| e.kind == "attempt_undone")
        .collect();
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].payload["attempt"], 2);
    let ws = Workspace::open(&h.workspace).unwrap();
    let changes = h.journal.changes(&ws.display_root()).unwrap();
    let undo = changes
        .iter()
        .find(|c| c.undo_of.is_some())
        .expect("an undo change");
    let target = changes.iter().find(|c| Some(c.id) == undo.undo_of).unwrap();
    assert_eq!(target.state.as_str(), "undone");
    assert_eq!(target.path, SUMMARY);

    // Attempt 2 started from the deliverable and the failed check in plain words, asking for
    // the smallest edit, and never saw the expected total.
    let retry = prompts
        .iter()
        .find(|p| p.contains("Keep everything that passes"))
        .unwrap();
    assert!(
        retry.contains("Total hours: 60"),
        "the current deliverable is shown"
    );
    assert!(retry.contains("total-hours"));
    assert!(retry.contains("edit_file"));
    assert!(
        !retry.contains("64"),
        "the expected value never reaches the model"
    );
}

#[test]
fn without_the_lever_a_worse_second_attempt_stays() {
    let h = Harness::new("desk_task");
    let first = gold().replace("Total hours: 64", "Total hours: 60");
    let worse = first.replace("## Risks\n", "");
    let script = first_attempt(&first) + &rewrite(&worse);
    let (out, events, _) = run(&h, &script, Levers::DEFAULT, 2);
    assert!(!out.passed());
    assert_eq!(on_disk(&h), worse);
    assert!(undone_events(&events).is_empty());
    assert!(failed(&out).contains(&"summary-complete".to_string()));
}

#[test]
fn a_better_second_attempt_stays_and_passes() {
    let h = Harness::new("desk_task");
    let first = gold().replace("Total hours: 64", "Total hours: 60");
    let script = first_attempt(&first)
        + &line(
            "Fix the total.",
            "edit_file",
            json!({"path": SUMMARY, "old_text": "Total hours: 60", "new_text": "Total hours: 64"}),
        )
        + &line("Check.", "read_file", json!({"path": SUMMARY}))
        + &line("Done.", "finish", json!({"summary": "fixed"}));
    let (out, events, _) = run(&h, &script, monotone(), 3);
    assert!(out.passed(), "{}", out.reason());
    assert_eq!(on_disk(&h), gold());
    assert!(undone_events(&events).is_empty());
}

#[test]
fn fixing_two_checks_and_breaking_one_is_still_undone() {
    let h = Harness::new("desk_task");
    // Attempt 1 fails two checks: no project name, wrong total.
    let first = gold()
        .replace("Harbor Library", "city library")
        .replace("Total hours: 64", "Total hours: 60");
    // Attempt 2 fixes both, but leaves a placeholder: one check that passed now fails.
    let candidate = gold().replace(
        "## Risks\n",
        "## Risks\nTODO: add the second risk here later.\n",
    );
    let script = first_attempt(&first) + &rewrite(&candidate);
    let (out, events, _) = run(&h, &script, monotone(), 2);
    let undone = undone_events(&events);
    assert_eq!(undone.len(), 1, "{undone:?}");
    assert_eq!(undone[0].1, vec!["no-placeholder"]);
    assert_eq!(
        on_disk(&h),
        first,
        "no trade of checks: the first version stands"
    );
    let mut f = failed(&out);
    f.sort();
    assert_eq!(f, vec!["names-project", "total-hours"]);
}

#[test]
fn a_fresh_retry_repeats_the_table_figures_the_model_was_given_and_only_with_table_facts() {
    let first = gold().replace("Total hours: 64", "Total hours: 72");
    let fixed = gold();
    let script = first_attempt(&first) + &rewrite(&fixed);
    let attempt_two_prompt = |prompts: &[String]| -> String {
        // The first prompt of attempt 2: the one after attempt 1's six steps.
        prompts[6].clone()
    };

    let h = Harness::new("desk_task");
    let levers = Levers {
        table_facts: true,
        ..monotone()
    };
    let (out, _, prompts) = run(&h, &script, levers, 2);
    assert!(out.passed(), "{}", out.reason());
    let retry = attempt_two_prompt(&prompts);
    assert!(
        retry.contains(r#"- data/tasks.csv, column \"hours\": sum 64, 6 numbers, min 4, max 16"#),
        "{retry}"
    );

    // Without the lever the model was never given the figure, so the retry does not state it.
    let h = Harness::new("desk_task");
    let (_, _, prompts) = run(&h, &script, monotone(), 2);
    let retry = attempt_two_prompt(&prompts);
    assert!(retry.contains("These checks fail"), "{retry}");
    assert!(!retry.contains("sum 64"), "{retry}");
}

/// Under `--approve=all` (the approver `rein run --approve=all` and `rein bench` use), an attempt
/// undone by Rein puts back a version the run wrote itself, and the next attempt's edit of it is
/// the run's own work: approved, not refused as a file someone else changed (the bench ended
/// related-contract-amendments so, `fn18c-on/`).
#[test]
fn after_an_undo_the_next_attempt_may_edit_under_approve_all() {
    let h = Harness::new("desk_task");
    let first = gold().replace("Total hours: 64", "Total hours: 60");
    let worse = first.replace("## Risks\n", "");
    let fix = line(
        "Fix the total.",
        "edit_file",
        json!({"path": SUMMARY, "old_text": "Total hours: 60", "new_text": "Total hours: 64"}),
    ) + &line("Check.", "read_file", json!({"path": SUMMARY}))
        + &line("Done.", "finish", json!({"summary": "fixed the total"}));
    let script = first_attempt(&first) + &rewrite(&worse) + &fix;
    let mut model = PromptRecorder::new(&script, "monotone.jsonl");
    let mut approver = rein_engine::gate::OwnWorkApprover::for_contract(&h.contract);
    let (out, events) = h.run_gated(&mut model, &mut approver, |o| {
        o.levers = monotone();
        o.limits.attempts = 3;
    });
    assert_eq!(undone_events(&events).len(), 1);
    assert!(out.passed(), "{}", out.reason());
    assert_eq!(on_disk(&h), gold());
}
