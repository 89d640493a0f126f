#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The agent loop refuses a `finish` that has no evidence on disk, and judges against the
//! frozen contract only.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, RunEnd};
use rein_journal::{RunStatus, StepKind};
use support::{finish_refusals, Harness};

#[test]
fn a_full_run_passes_and_is_journaled() {
    let h = Harness::new("desk_task");
    let (out, events) = h.run_fixture("good.jsonl", |_| {});
    assert!(out.passed(), "{:#?}", out.document());
    assert_eq!(out.exit_code(), 0);
    assert_eq!(out.end, RunEnd::Judged);
    assert_eq!(out.figures.steps, 6);
    assert_eq!(out.figures.format_errors, 0);
    assert!(finish_refusals(&events).is_empty());
    assert!(matches!(
        events.first(),
        Some(AgentEvent::RunStarted { .. })
    ));
    assert!(matches!(events.last(), Some(AgentEvent::RunEnded { status, .. }) if status == "pass"));

    let trace = h.journal.run_trace(out.run).unwrap();
    assert_eq!(trace.run.status, RunStatus::Pass);
    assert_eq!(
        trace.run.contract_sha.as_deref(),
        Some(h.contract.sha256.as_str())
    );
    assert_eq!(trace.steps.len(), 6);
    assert_eq!(trace.attempts.len(), 1);
    assert_eq!(trace.checks.len(), h.contract.mission.checks.len());
    assert!(trace
        .checks
        .iter()
        .filter(|c| c.kind != "decision")
        .all(|c| c.passed));
    let first = &trace.steps[0].step;
    assert_eq!(first.action.as_deref(), Some("read_file"));
    assert_eq!(first.thought.as_deref(), Some("Read the overview first."));
    assert_eq!(
        first.call_id.as_deref(),
        Some(format!("run{}-step1", out.run).as_str())
    );
    assert_eq!(first.detail["outcome"], "executed");
    let verdict = trace.run.verdict.unwrap();
    assert_eq!(verdict["passed"], true);
    assert!(h
        .journal
        .acceptance_spec(&h.contract.sha256)
        .unwrap()
        .is_some());
}

#[test]
fn finish_without_writing_is_refused_then_the_run_fails() {
    let h = Harness::new("desk_task");
    let (out, events) = h.run_fixture("finish_without_writing.jsonl", |o| o.limits.max_turns = 2);
    let refusals = finish_refusals(&events);
    assert_eq!(refusals.len(), 2);
    assert!(refusals[0].contains("does not exist"), "{}", refusals[0]);
    assert!(!out.passed());
    assert_eq!(out.exit_code(), 1);
    assert!(matches!(out.end, RunEnd::Cap { .. }));
    assert_eq!(out.figures.finish_refusals, 2);
    // The judge still recorded what the world looked like.
    let v = out.verdict.as_ref().unwrap();
    assert!(!v.passed);
    let trace = h.journal.run_trace(out.run).unwrap();
    assert_eq!(trace.run.status, RunStatus::Aborted);
    assert_eq!(
        trace
            .steps
            .iter()
            .filter(|s| s.step.kind == StepKind::Refusal)
            .count(),
        2
    );
}

#[test]
fn a_placeholder_deliverable_is_refused() {
    let h = Harness::new("desk_task");
    let (out, events) = h.run_fixture("placeholder.jsonl", |_| {});
    let refusals = finish_refusals(&events);
    assert_eq!(refusals.len(), 1);
    assert!(refusals[0].contains("placeholder"), "{}", refusals[0]);
    assert!(!out.passed());
    // The script ran out after the refusal: a clean model-failure end, not a panic.
    assert!(
        matches!(out.end, RunEnd::ModelFailed { .. }),
        "{:?}",
        out.end
    );
}

#[test]
fn overwriting_an_input_with_the_report_is_refused() {
    let h = Harness::new("desk_task");
    let (out, events) = h.run_fixture("overwrite_input.jsonl", |_| {});
    let refusals = finish_refusals(&events);
    assert_eq!(refusals.len(), 1);
    assert!(
        refusals[0].contains("input `notes/overview.md` was overwritten"),
        "{}",
        refusals[0]
    );
    assert!(!out.passed());
}

#[test]
fn finish_before_rereading_is_refused_then_accepted_after_reading() {
    let h = Harness::new("desk_task");
    let (out, events) = h.run_fixture("no_reread.jsonl", |_| {});
    let refusals = finish_refusals(&events);
    assert_eq!(refusals.len(), 1);
    assert!(
        refusals[0].contains("re-read the output first"),
        "{}",
        refusals[0]
    );
    assert!(out.passed(), "{:#?}", out.document());
    assert!(out.finish_accepted);
    assert_eq!(out.figures.finish_refusals, 1);
}

#[test]
fn a_failed_verdict_starts_another_attempt_with_the_failed_checks() {
    let h = Harness::new("desk_task");
    let (out, events) = h.run_fixture("wrong_total_then_fix.jsonl", |_| {});
    assert!(out.passed(), "{:#?}", out.document());
    assert_eq!(out.figures.attempts, 2);
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::AttemptFinished { attempt: 1, outcome } if outcome.starts_with("failed"))));
    let trace = h.journal.run_trace(out.run).unwrap();
    assert_eq!(trace.attempts.len(), 2);
    assert_eq!(
        trace.attempts[0].outcome.as_deref(),
        Some("failed: 1 of 15 checks")
    );
    assert_eq!(trace.attempts[1].outcome.as_deref(), Some("passed"));
}

#[test]
fn a_contract_edited_on_disk_between_attempts_is_refused() {
    let h = Harness::new("desk_task");
    let file = h.mission_file.clone();
    let mut model =
        rein_models::ScriptedModel::load(support::fixture("wrong_total_then_fix.jsonl")).unwrap();
    let mut hook = |e: &AgentEvent| {
        if let AgentEvent::AttemptFinished { attempt: 1, .. } = e {
            // Weaken the contract mid-run: drop the numeric check.
            let text = std::fs::read_to_string(&file).unwrap();
            let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
            v["checks"]
                .as_array_mut()
                .unwrap()
                .retain(|c| c["id"] != "total-hours");
            std::fs::write(&file, serde_json::to_string(&v).unwrap()).unwrap();
        }
    };
    let (out, _) = h.run_model(
        &mut model,
        &mut rein_engine::gate::AllowAll,
        |_| {},
        None,
        &mut hook,
    );
    let RunEnd::ContractChanged { message } = &out.end else {
        panic!("expected a contract refusal, got {:?}", out.end);
    };
    assert!(
        message.contains("the contract changed on disk mid-run"),
        "{message}"
    );
    assert_eq!(out.exit_code(), 2);
    assert!(!out.passed());
    assert_eq!(out.figures.attempts, 1);
    let trace = h.journal.run_trace(out.run).unwrap();
    assert_eq!(trace.run.status, RunStatus::Aborted);
    assert_eq!(trace.attempts.len(), 1, "no second attempt was started");
}

/// A remote model is not held to the schema while it decodes: a finish summary over the cap
/// must come back as a refusal that says what to do, never be cut to fit or crash the run.
#[test]
fn an_over_long_finish_summary_is_refused_with_what_to_do_never_cut() {
    use rein_workspace::desk::FINISH_SUMMARY_MAX_CHARS;
    let good = std::fs::read_to_string(support::fixture("good.jsonl")).unwrap();
    let (body, last) = good.trim_end().rsplit_once('\n').unwrap();
    for long in [
        "s".repeat(FINISH_SUMMARY_MAX_CHARS + 1),
        "é".repeat(FINISH_SUMMARY_MAX_CHARS + 1),
        "word ".repeat(20_000),
    ] {
        let finish = serde_json::json!({"thought": "done", "action": "finish",
            "parameters": {"summary": long}});
        let script = format!("{body}\n{finish}\n{last}\n");
        let h = Harness::new("desk_task");
        let mut model = support::PromptRecorder::new(&script, "long_summary.jsonl");
        let (out, events) = h.run_model(
            &mut model,
            &mut rein_engine::gate::AllowAll,
            |_| {},
            None,
            &mut |_| {},
        );
        assert!(out.passed(), "{}", out.reason());
        let steps: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Step(s) => Some(s.clone()),
                _ => None,
            })
            .collect();
        let refused = &steps[steps.len() - 2];
        assert_eq!(refused.action.as_deref(), Some("finish"));
        assert_ne!(refused.outcome, "executed", "{refused:?}");
        let prompt = model.prompt(steps.len() - 1);
        let feedback = prompt.rsplit("Result of step").next().unwrap_or_default();
        let cap = format!("at most {FINISH_SUMMARY_MAX_CHARS} characters");
        assert!(
            feedback.contains(&cap),
            "the refusal says what to do: {feedback}"
        );
        assert!(!feedback.contains("split it"), "{feedback}");
        // Not echoed back, and the deliverable is not blamed.
        assert!(feedback.len() < 1_000, "{feedback}");
        assert!(!feedback.contains("fix out/summary.md"), "{feedback}");
        // The accepted finish is the short one, as the model wrote it.
        let accepted = steps.last().unwrap();
        assert_eq!(accepted.outcome, "executed");
        assert_eq!(
            accepted.parameters.as_ref().unwrap()["summary"],
            "Wrote out/summary.md."
        );
    }
}

/// The cap counts characters, not bytes: 400 two-byte characters are within it.
#[test]
fn a_finish_summary_of_the_cap_in_multibyte_characters_is_accepted() {
    use rein_workspace::desk::FINISH_SUMMARY_MAX_CHARS;
    let good = std::fs::read_to_string(support::fixture("good.jsonl")).unwrap();
    let (body, _) = good.trim_end().rsplit_once('\n').unwrap();
    let finish = serde_json::json!({"thought": "done", "action": "finish",
        "parameters": {"summary": "é".repeat(FINISH_SUMMARY_MAX_CHARS)}});
    let h = Harness::new("desk_task");
    let mut model =
        support::PromptRecorder::new(&format!("{body}\n{finish}\n"), "multibyte_summary.jsonl");
    let (out, _) = h.run_model(
        &mut model,
        &mut rein_engine::gate::AllowAll,
        |_| {},
        None,
        &mut |_| {},
    );
    assert!(out.passed(), "{}", out.reason());
}
