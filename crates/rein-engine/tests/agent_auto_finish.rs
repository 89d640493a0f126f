#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `auto-finish` lever on desk_task: once `finish-when-met` would offer the model `finish`
//! alone, Rein makes that call itself, through the gate, journaled as Rein's. Nothing about the
//! verdict changes: a wrong answer is judged after Rein's finish and fails as it would after
//! the model's, and Rein never finishes where the model could still do something else.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, Levers};
use rein_engine::gate::AllowAll;
use rein_engine::policy::{Policy, PolicyAction, Rule};
use serde_json::{json, Value};
use support::{
    allowed_tools, finish_line, gold_fields, journal_events, line, read_summary, reads,
    wrong_then_right, wrong_total_fields, Ran,
};

const SUMMARY: &str = "out/summary.md";

fn levers(finish_when_met: bool, auto_finish: bool) -> Levers {
    Levers {
        write_sections: true,
        finish_when_met,
        auto_finish,
        ..Levers::DEFAULT
    }
}

fn run_under(script: &str, levers: Levers, attempts: u32, policy: Policy) -> Ran {
    Ran::desk_task(script, &mut AllowAll, policy, |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = attempts;
    })
}

fn run(script: &str, levers: Levers, attempts: u32) -> Ran {
    run_under(script, levers, attempts, Policy::safe_default())
}

/// The journal's steps of the run, as (action, detail, reply).
fn steps(r: &Ran) -> Vec<(Option<String>, Value, Option<String>)> {
    r.h.journal
        .run_trace(r.out.run)
        .unwrap()
        .steps
        .into_iter()
        .map(|t| (t.step.action, t.step.detail, t.step.reply))
        .collect()
}

fn auto_finishes(r: &Ran) -> Vec<Value> {
    journal_events(&r.h.journal, r.out.run, "auto_finish")
}

fn finishes_accepted(r: &Ran) -> usize {
    r.events
        .iter()
        .filter(|e| matches!(e, AgentEvent::FinishAccepted { .. }))
        .count()
}

#[test]
fn rein_finishes_where_the_model_could_only_have_called_finish() {
    // No finish in the script: were the model asked once more, the scripted model would run
    // out of replies and the run would end in a model failure.
    let script = reads() + &line("write_sections", gold_fields()) + &read_summary();
    let r = run(&script, levers(true, true), 1);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert_eq!(r.model.requests.len(), 5, "the model was asked five times");
    assert_eq!(r.out.figures.steps, 5, "Rein's finish is not a model step");
    assert_eq!(finishes_accepted(&r), 1);
    assert_eq!(
        auto_finishes(&r),
        vec![json!({"attempt": 1, "after_step": 5, "accepted": true, "gate": "executed"})]
    );
    let steps = steps(&r);
    let (action, detail, reply) = steps.last().unwrap();
    assert_eq!(action.as_deref(), Some("finish"));
    assert_eq!(detail["by"], "rein");
    assert_eq!(detail["lever"], "auto-finish");
    assert!(reply.is_none(), "the model wrote no reply for it");
    // No request ever offered finish alone: the step that would have was never asked.
    assert!(r
        .model
        .requests
        .iter()
        .all(|q| allowed_tools(q) != ["finish"]));
}

#[test]
fn without_finish_when_met_or_with_the_lever_off_the_model_finishes() {
    let script =
        reads() + &line("write_sections", gold_fields()) + &read_summary() + &finish_line();
    for levers in [levers(false, true), levers(true, false)] {
        let r = run(&script, levers, 1);
        assert!(r.out.passed(), "{}", r.out.reason());
        assert_eq!(r.model.requests.len(), 6, "{levers:?}");
        assert!(auto_finishes(&r).is_empty(), "{levers:?}");
        let steps = steps(&r);
        assert!(
            steps.iter().all(|(_, d, _)| d.get("by").is_none()),
            "{levers:?}"
        );
    }
}

#[test]
fn a_wrong_answer_is_judged_after_reins_finish_and_fixed_in_the_next_attempt() {
    // The total is an answer check: the checklist never shows it, so Rein finishes the wrong
    // report, the judge fails it, and attempt 2 (which must change the report first) is the
    // model's again until its own write is met.
    let script = wrong_then_right();
    let r = run(&script, levers(true, true), 2);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert_eq!(r.out.figures.attempts, 2);
    assert_eq!(r.model.requests.len(), 7);
    let events = auto_finishes(&r);
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0]["attempt"], 1);
    assert_eq!(events[1]["attempt"], 2);
    assert_eq!(finishes_accepted(&r), 2);
    // The wrong report failed as it would after the model's finish.
    let prompt = r.model.prompt(5);
    assert!(prompt.contains("total-hours"), "{prompt}");

    // With one attempt the run ends on the failed verdict: Rein's finish passes nothing.
    let script = reads() + &line("write_sections", wrong_total_fields()) + &read_summary();
    let r = run(&script, levers(true, true), 1);
    assert!(!r.out.passed());
    assert!(r.out.reason().contains("total-hours"), "{}", r.out.reason());
}

#[test]
fn rein_never_finishes_a_report_that_misses_a_shown_check_or_was_not_read_back() {
    // A task left out of Tasks (a check the checklist shows): Rein does not finish, the model
    // is asked and its own finish is judged and fails.
    let mut missing = gold_fields();
    missing["Tasks"] = json!(missing["Tasks"]
        .as_str()
        .unwrap()
        .replace("- Release checklist: 4 hours, planned for Maya.\n", ""));
    let script = reads() + &line("write_sections", missing) + &read_summary() + &finish_line();
    let r = run(&script, levers(true, true), 1);
    assert!(!r.out.passed());
    assert!(
        r.out.reason().contains("tasks-listed"),
        "{}",
        r.out.reason()
    );
    assert!(auto_finishes(&r).is_empty());
    assert_eq!(r.model.requests.len(), 6);

    // Written but not read back: the finish rules would refuse, so Rein does not finish
    // before the model's read.
    let script = reads() + &line("write_sections", gold_fields()) + &read_summary();
    let r = run(&script, levers(true, true), 1);
    let steps = steps(&r);
    let finish_at = steps
        .iter()
        .position(|(a, _, _)| a.as_deref() == Some("finish"))
        .unwrap();
    let read_back_at = steps
        .iter()
        .rposition(|(a, d, _)| a.as_deref() == Some("read_file") && d.to_string().contains(SUMMARY))
        .unwrap();
    assert!(read_back_at < finish_at, "{steps:?}");
}

#[test]
fn a_finish_the_gate_denies_is_tried_once_and_the_model_is_asked() {
    let deny = Rule::new("finish", &[], PolicyAction::Deny).unwrap();
    let script =
        reads() + &line("write_sections", gold_fields()) + &read_summary() + &finish_line();
    let r = run_under(
        &script,
        levers(true, true),
        1,
        Policy::from_rules(vec![deny]),
    );
    assert!(!r.out.passed());
    let events = auto_finishes(&r);
    assert_eq!(
        events,
        vec![json!({"attempt": 1, "after_step": 5, "accepted": false, "gate": "denied"})]
    );
    assert_eq!(finishes_accepted(&r), 0);
    // The model was asked for the step Rein could not make, finish alone as before (its own
    // finish is denied too, and it is asked again until the script runs out).
    assert!(r.model.requests.len() >= 6, "{}", r.model.requests.len());
    assert_eq!(allowed_tools(&r.model.requests[5]), ["finish"]);
}

/// edit-gitignore of the desk suite: three lines to add, one `edit_file` each.
fn edit_gitignore(script: &str, levers: Levers) -> Ran {
    let h = support::Harness::desk_suite("edit-gitignore");
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = 1;
    })
}

#[test]
fn a_file_edited_in_place_is_finished_by_the_model_after_its_last_edit() {
    const FILE: &str = "project/gitignore.txt";
    let edit = |old: &str, new: &str| {
        line(
            "edit_file",
            json!({"path": FILE, "old_text": old, "new_text": new}),
        )
    };
    // The 1.5B's bench run: after the first of three edits (read back by Rein, lever
    // `read-back`) every check the checklist may show was met and the finish rules held, and
    // Rein finished for it; the file was judged with two lines missing.
    let script = line("read_file", json!({"path": "project/README.md"}))
        + &line("read_file", json!({ "path": FILE }))
        + &edit(".vscode/\n", ".vscode/\n*.swp\n")
        + &edit("data/raw/\n", "data/raw/\ndata/cache/\n")
        + &edit("data/cache/\n", "data/cache/\n*.sqlite\n")
        + &line("read_file", json!({ "path": FILE }))
        + &finish_line();
    let with_read_back = Levers {
        read_back: true,
        ..levers(true, true)
    };
    let r = edit_gitignore(&script, with_read_back);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert!(auto_finishes(&r).is_empty(), "{:?}", auto_finishes(&r));
    assert_eq!(r.model.requests.len(), 7, "every step was the model's");
    // No step after an edit offered finish alone.
    for (i, q) in r.model.requests.iter().enumerate() {
        assert_ne!(allowed_tools(q), ["finish"], "request {i}");
    }
    // The same first edit, then the model stops: its own finish is judged, and fails.
    let early = line("read_file", json!({"path": "project/README.md"}))
        + &line("read_file", json!({ "path": FILE }))
        + &edit(".vscode/\n", ".vscode/\n*.swp\n")
        + &line("read_file", json!({ "path": FILE }))
        + &finish_line();
    let r = edit_gitignore(&early, with_read_back);
    assert!(!r.out.passed());
    assert!(r.out.reason().contains("whole-file"), "{}", r.out.reason());
    assert!(auto_finishes(&r).is_empty());
}
