#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of the `auto-finish` lever: inputs and sequences where Rein's own finish could
//! differ from the model's. A test that fails names a defect and says what is right; a test
//! that passes probes a claim that held and stays as a regression test.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, Levers, RunEnd};
use rein_engine::gate::{AllowAll, ApprovalDecision, ApprovalRequest, Approver};
use rein_engine::policy::{Policy, PolicyAction, Rule};
use serde_json::{json, Value};
use support::{
    allowed_tools, attempts_finished, finish_line, gold_fields, journal_events, line, read_summary,
    reads, user_messages, wrong_then_right, wrong_total_fields, Harness, PromptRecorder, Ran,
};

const SUMMARY: &str = "out/summary.md";

fn levers(auto_finish: bool) -> Levers {
    Levers {
        write_sections: true,
        finish_when_met: true,
        auto_finish,
        ..Levers::DEFAULT
    }
}

struct Setup {
    levers: Levers,
    attempts: u32,
    constrained: bool,
    policy: Policy,
}

impl Setup {
    fn new(levers: Levers, attempts: u32) -> Setup {
        Setup {
            levers,
            attempts,
            constrained: true,
            policy: Policy::safe_default(),
        }
    }
}

fn run_with(script: &str, s: Setup, approver: &mut dyn Approver) -> Ran {
    Ran::desk_task(script, approver, s.policy, |o| {
        o.levers = s.levers;
        o.constrained = s.constrained;
        o.limits.attempts = s.attempts;
    })
}

fn run(script: &str, s: Setup) -> Ran {
    run_with(script, s, &mut AllowAll)
}

/// The gold report with the total stated wrong (an answer check the checklist never shows).
/// The gold report without the project's name (`names-project`, another hidden check).
fn unnamed() -> Value {
    let mut v = gold_fields();
    for (k, field) in v.as_object_mut().unwrap().iter_mut() {
        if k != "path" {
            *field = json!(field
                .as_str()
                .unwrap()
                .replace("Harbor Library", "town library"));
        }
    }
    v
}

fn auto_finishes(r: &Ran) -> Vec<Value> {
    journal_events(&r.h.journal, r.out.run, "auto_finish")
}

/// One journaled step: (action, detail, reply, call id).
type JournalStep = (Option<String>, Value, Option<String>, Option<String>);

/// The journal's steps.
fn steps(r: &Ran) -> Vec<JournalStep> {
    r.h.journal
        .run_trace(r.out.run)
        .unwrap()
        .steps
        .into_iter()
        .map(|t| (t.step.action, t.step.detail, t.step.reply, t.step.call_id))
        .collect()
}

fn user_messages_of(r: &Ran, i: usize) -> Vec<String> {
    user_messages(&r.model.requests[i])
}

/// ATTACK (defect found). `finish-when-met` offers `finish` alone only through the action
/// schema (`constrained`); without it (a scripted model, an endpoint that refused
/// `response_format`) the model is only told to call finish and may still do something else.
/// The code itself knows this: the `finish_when_met` journal event is written only when
/// `constrained`. `auto_finish` does not look at `constrained`, so Rein finishes where the
/// model was about to fix its report, and the verdict changes from pass to fail.
///
/// Correct behaviour: `auto-finish` acts only where the step would really be held to `finish`
/// (constrained decoding), so this run's verdict is the model's own: a pass.
#[test]
fn unconstrained_model_could_still_fix_its_report_so_rein_must_not_finish() {
    // The model writes a wrong total, reads it back (finish would be accepted and every shown
    // check is met), then, not held to finish, rewrites the report right and finishes.
    let script = wrong_then_right() + &finish_line();
    let unconstrained = |auto| Setup {
        constrained: false,
        ..Setup::new(levers(auto), 1)
    };
    let off = run(&script, unconstrained(false));
    assert!(off.out.passed(), "baseline: {}", off.out.reason());
    let on = run(&script, unconstrained(true));
    assert_eq!(
        on.out.passed(),
        off.out.passed(),
        "auto-finish changed the verdict: {}",
        on.out.reason()
    );
    assert!(
        auto_finishes(&on).is_empty(),
        "Rein finished for an unconstrained model that could still act: {:?}",
        auto_finishes(&on)
    );
}

/// Probe (holds): with `monotone-attempts`, Rein's finish of a version that breaks a hidden
/// check the previous one passed is undone as the model's would be, and the next attempt must
/// write before Rein finishes again. Verdicts and attempt outcomes are the model's.
#[test]
fn monotone_undo_after_reins_finish_matches_the_models_own_finishes() {
    let with_lever = reads()
        + &line("write_sections", wrong_total_fields())
        + &read_summary()
        + &line("write_sections", unnamed())
        + &read_summary()
        + &line("write_sections", gold_fields())
        + &read_summary();
    let without = reads()
        + &line("write_sections", wrong_total_fields())
        + &read_summary()
        + &finish_line()
        + &line("write_sections", unnamed())
        + &read_summary()
        + &finish_line()
        + &line("write_sections", gold_fields())
        + &read_summary()
        + &finish_line();
    let monotone = |auto| Levers {
        monotone_attempts: true,
        ..levers(auto)
    };
    let on = run(&with_lever, Setup::new(monotone(true), 3));
    let off = run(&without, Setup::new(monotone(false), 3));
    assert!(off.out.passed(), "{}", off.out.reason());
    assert!(on.out.passed(), "{}", on.out.reason());
    assert_eq!(
        attempts_finished(&on.events),
        attempts_finished(&off.events)
    );
    let outcomes = attempts_finished(&on.events);
    assert!(outcomes[1].contains("undone"), "{outcomes:?}");
    let af = auto_finishes(&on);
    assert_eq!(
        af.iter().map(|e| e["attempt"].clone()).collect::<Vec<_>>(),
        vec![json!(1), json!(2), json!(3)]
    );
    assert!(af.iter().all(|e| e["accepted"] == true));
    // One call id per attempt, none replayed from another attempt.
    let ids: Vec<String> = steps(&on)
        .into_iter()
        .filter(|(a, d, _, _)| a.as_deref() == Some("finish") && d["by"] == "rein")
        .map(|(_, _, _, id)| id.unwrap())
        .collect();
    assert_eq!(ids.len(), 3);
    assert!(ids[0].ends_with("-rein-finish1"), "{ids:?}");
    assert!(ids[2].ends_with("-rein-finish3"), "{ids:?}");
    // The model made the same number of steps less its three finishes.
    assert_eq!(on.out.figures.steps + 3, off.out.figures.steps);
}

/// Probe (holds): a Rein finish the gate denied is not tried again in that attempt, even when
/// the model writes and reads the report back again so that finish is ready anew.
#[test]
fn a_denied_rein_finish_is_not_retried_in_the_same_attempt_after_a_new_write() {
    let deny = Rule::new("finish", &[], PolicyAction::Deny).unwrap();
    let script = reads()
        + &line("write_sections", gold_fields())
        + &read_summary()
        + &line("write_sections", wrong_total_fields())
        + &read_summary()
        + &finish_line();
    let r = run(
        &script,
        Setup {
            policy: Policy::from_rules(vec![deny]),
            ..Setup::new(levers(true), 1)
        },
    );
    assert!(!r.out.passed());
    assert_eq!(auto_finishes(&r).len(), 1, "{:?}", auto_finishes(&r));
    assert!(!r
        .events
        .iter()
        .any(|e| matches!(e, AgentEvent::FinishAccepted { .. })));
}

/// An approver that lets every change through and can ask nobody about `finish`.
struct NobodyForFinish;

impl Approver for NobodyForFinish {
    fn decide(&mut self, request: &ApprovalRequest) -> ApprovalDecision {
        if request.tool == "finish" {
            ApprovalDecision::Unavailable
        } else {
            ApprovalDecision::AllowOnce
        }
    }
}

/// Probe (holds): a policy that asks about `finish` with nobody to ask. The model's finish
/// stops the run (approval unavailable); Rein's finish, refused the same way, leaves the step to
/// the model, whose finish then stops the run the same way: same end, same verdict.
#[test]
fn a_finish_that_needs_unavailable_approval_ends_the_run_as_the_models_would() {
    let ask = Rule::new("finish", &[], PolicyAction::Ask).unwrap();
    let rules = vec![ask];
    let script =
        reads() + &line("write_sections", gold_fields()) + &read_summary() + &finish_line();
    let go = |auto| {
        run_with(
            &script,
            Setup {
                policy: Policy::from_rules(rules.clone()),
                ..Setup::new(levers(auto), 1)
            },
            &mut NobodyForFinish,
        )
    };
    let on = go(true);
    let off = go(false);
    assert!(
        matches!(off.out.end, RunEnd::ApprovalUnavailable { .. }),
        "{:?}",
        off.out.end
    );
    assert_eq!(
        std::mem::discriminant(&on.out.end),
        std::mem::discriminant(&off.out.end),
        "{:?} vs {:?}",
        on.out.end,
        off.out.end
    );
    assert_eq!(on.out.passed(), off.out.passed());
    assert_eq!(on.out.finish_accepted, off.out.finish_accepted);
    let af = auto_finishes(&on);
    assert_eq!(af.len(), 1);
    assert_eq!(af[0]["accepted"], false);
}

/// Probe (holds): a deliverable already in the workspace at the start (not written in this
/// attempt) never makes Rein finish, not even after the model reads it.
#[test]
fn a_report_already_on_disk_is_not_finished_by_rein() {
    let h = Harness::new("desk_task");
    let text = support::gold_text();
    std::fs::create_dir_all(h.workspace.join("out")).unwrap();
    std::fs::write(h.workspace.join(SUMMARY), text).unwrap();
    let script = reads() + &read_summary() + &finish_line();
    let mut model = PromptRecorder::new(&script, "already.jsonl");
    let (out, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers(true);
        o.constrained = true;
        o.limits.attempts = 1;
    });
    assert!(journal_events(&h.journal, out.run, "auto_finish").is_empty());
    assert!(!out.passed(), "a report not written this run cannot pass");
    // The model was never held to finish alone.
    assert!(model
        .requests
        .iter()
        .all(|q| allowed_tools(q) != ["finish"]));
}

/// Probe (holds): after Rein's finish fails the judge (no monotone attempts), the next
/// attempt's first prompt shows Rein's finish as Rein's and the judge's failed check, and the
/// model is offered every tool again, not finish alone.
#[test]
fn the_next_attempt_after_reins_failed_finish_reads_truthfully_and_offers_every_tool() {
    let script = wrong_then_right();
    let r = run(&script, Setup::new(levers(true), 2));
    assert!(r.out.passed(), "{}", r.out.reason());
    let first_of_attempt_2 = 5;
    let users = user_messages_of(&r, first_of_attempt_2);
    let all = users.join("\n");
    assert!(all.contains("Result of Rein's finish"), "{all}");
    assert!(all.contains("total-hours"), "{all}");
    let tools = allowed_tools(&r.model.requests[first_of_attempt_2]);
    assert!(tools.len() > 1, "{tools:?}");
    assert!(tools.iter().any(|t| t == "write_sections"), "{tools:?}");
    // The Rein finish is journaled as Rein's, with no reply and no tokens.
    let rein: Vec<_> = steps(&r)
        .into_iter()
        .filter(|(a, d, _, _)| a.as_deref() == Some("finish") && d["by"] == "rein")
        .collect();
    assert_eq!(rein.len(), 2);
    assert!(rein
        .iter()
        .all(|(_, d, reply, _)| reply.is_none() && d["lever"] == "auto-finish"));
    // Every step event of a Rein finish is step 0 (no model step) and spent no tokens.
    for e in &r.events {
        if let AgentEvent::Step(s) = e {
            if s.action.as_deref() == Some("finish") {
                assert_eq!(s.step, 0, "{s:?}");
                assert_eq!(s.completion_tokens, 0);
            }
        }
    }
}

/// ATTACK (defect found, inherited from how `task-reminder` reads the trace). After Rein's
/// finish failed the judge, the next attempt's reminder tells the model "The calls of yours
/// that ran, in order: ..., finish, ...": the trace entry of Rein's finish (`by_rein`) is
/// counted as the model's call, so the model-facing record says the model finished when Rein
/// did (the same holds for Rein's `inputs-first` reads).
///
/// Correct behaviour: the reminder's "calls of yours" leaves out Rein's calls (or names them as
/// Rein's), so no prompt attributes Rein's finish to the model.
#[test]
fn the_task_reminder_does_not_count_reins_finish_as_the_models_call() {
    let script = wrong_then_right();
    let lv = Levers {
        task_reminder: true,
        ..levers(true)
    };
    let r = run(&script, Setup::new(lv, 2));
    assert!(r.out.passed(), "{}", r.out.reason());
    // Request 6 (from 0) is attempt 2's second: its last user message ends with the reminder
    // written after attempt 2's first step.
    let users = user_messages_of(&r, 6);
    let reminder = users
        .iter()
        .rev()
        .find_map(|u| {
            u.find("Reminder. The calls of yours that ran")
                .map(|at| &u[at..])
        })
        .expect("a reminder");
    let calls = reminder.lines().next().unwrap();
    assert!(
        !calls.contains("finish"),
        "Rein's finish is told to the model as its own call: {calls}"
    );
}

/// Probe (holds): verified sampling (`samples` = 2) picks the right draw of two; Rein's finish
/// then passes as the model's would, and the pass@1 figures (`first_draw_passed`,
/// `chosen_draw_passed`) and `finish_accepted` are those of the run without the lever.
#[test]
fn verified_sampling_figures_are_the_same_with_reins_finish() {
    let wrong = support::wrong_total_text();
    let gold = support::gold_text();
    let base = reads()
        + &support::write_summary(&wrong)
        + &support::write_summary(&gold)
        + &read_summary();
    let go = |auto: bool| {
        let h = Harness::new("desk_task");
        let script = if auto {
            base.clone()
        } else {
            base.clone() + &finish_line()
        };
        let mut model = PromptRecorder::new(&script, "sampling.jsonl");
        let (out, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
            o.levers = Levers {
                finish_when_met: true,
                auto_finish: auto,
                ..Levers::DEFAULT
            };
            o.constrained = true;
            o.samples = 2;
            o.limits.attempts = 1;
        });
        let af = journal_events(&h.journal, out.run, "auto_finish").len();
        (out, af)
    };
    let (on, af_on) = go(true);
    let (off, af_off) = go(false);
    assert!(off.passed(), "{}", off.reason());
    assert_eq!((af_on, af_off), (1, 0));
    assert_eq!(on.passed(), off.passed(), "{}", on.reason());
    assert_eq!(on.finish_accepted, off.finish_accepted);
    assert_eq!(on.figures.first_draw_passed, Some(false));
    assert_eq!(on.figures.first_draw_passed, off.figures.first_draw_passed);
    assert_eq!(
        on.figures.chosen_draw_passed,
        off.figures.chosen_draw_passed
    );
    assert_eq!(on.figures.samples, off.figures.samples);
    assert_eq!(on.figures.steps + 1, off.figures.steps);
}
