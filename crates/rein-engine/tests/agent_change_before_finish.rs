#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `change-before-finish` lever on desk_task: after a failed verdict whose failed checks
//! read only the deliverable, `finish` is not offered and is refused while the report holds the
//! very bytes that failed (no attempt is spent judging them again); once the report changes, or
//! when a failed check could change without it (the run's own reads), finish is judged as always.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, Levers, RunOutcome};
use rein_engine::checks::CheckSpec;
use rein_engine::gate::AllowAll;
use serde_json::{json, Value};
use support::{
    attempts_finished, finish_line, finish_refusals, gold_text, journal_events, line,
    offers_finish, read_summary, reads, rewrite_summary, write_summary, wrong_total_text, Harness,
    PromptRecorder,
};

const WITHHELD: &str = "finish is not offered until out/summary.md changes";

fn run(
    script: &str,
    lever: bool,
    attempts: u32,
) -> (RunOutcome, Vec<AgentEvent>, PromptRecorder, Harness) {
    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(script, "change_before_finish.jsonl");
    let levers = Levers {
        change_before_finish: lever,
        ..Levers::DEFAULT
    };
    let (out, events) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = attempts;
    });
    (out, events, model, h)
}

#[test]
fn an_unchanged_failed_report_is_not_judged_again_and_a_fixed_one_is() {
    // Attempt 1 states 72 where the column sums to 64 (total-hours reads only the report).
    // Attempt 2 calls finish on the same bytes (refused, not judged), re-reads, rewrites the
    // same wrong text (still the same bytes: still refused), then writes the gold report.
    let wrong = wrong_total_text();
    let script = reads()
        + &write_summary(&wrong)
        + &read_summary()
        + &finish_line()
        + &finish_line()
        + &read_summary()
        + &rewrite_summary(&wrong)
        + &read_summary()
        + &finish_line()
        + &rewrite_summary(&gold_text())
        + &read_summary()
        + &finish_line();
    let (out, events, model, h) = run(&script, true, 3);
    assert!(out.passed(), "{}", out.reason());
    // Two verdicts: the failed one and the pass. The refused finishes spent no attempt.
    let finished = attempts_finished(&events);
    assert_eq!(finished.len(), 2, "{finished:?}");
    assert!(finished[0].starts_with("failed"), "{finished:?}");
    assert_eq!(finished[1], "passed");
    let refusals = finish_refusals(&events);
    assert_eq!(refusals.len(), 2, "{refusals:?}");
    for r in &refusals {
        assert!(
            r.contains("`out/summary.md` is the very file that failed total-hours"),
            "{r}"
        );
        assert!(r.contains("nothing was judged"), "{r}");
    }
    // Attempt 2's first prompt says why finish is gone, and no request of attempt 2 offers it
    // until the report changed (calls 0-5 are attempt 1: 3 reads, write, read back, finish).
    assert!(model.prompt(6).contains(WITHHELD), "{}", model.prompt(6));
    assert!(!model.prompt(5).contains(WITHHELD));
    for call in 0..6 {
        assert!(offers_finish(&model, call), "call {call}");
    }
    for call in 6..12 {
        assert!(!offers_finish(&model, call), "call {call} offered finish");
    }
    // The progress note after the read back asks for a change, not for finish.
    assert!(
        model
            .prompt(8)
            .contains("change out/summary.md to meet the failed checks; finish is offered again"),
        "{}",
        model.prompt(8)
    );
    // (Attempt 1's notes, earlier in the same prompt, still say "call finish if it is complete".)
    let p = model.prompt(8);
    assert!(p.rfind("call finish if it is complete") < p.rfind("finish is offered again"));
    // From the gold rewrite (call 11) on, finish is offered again.
    assert!(offers_finish(&model, 12) && offers_finish(&model, 13));
    assert_eq!(model.requests.len(), 14);
    assert_eq!(
        journal_events(&h.journal, out.run, "finish_withheld"),
        vec![json!({"attempt": 2, "checks": ["total-hours"]})]
    );
}

#[test]
fn without_the_lever_the_same_bytes_are_judged_again_in_every_attempt() {
    let wrong = wrong_total_text();
    let script = reads()
        + &write_summary(&wrong)
        + &read_summary()
        + &finish_line()
        + &finish_line()
        + &finish_line();
    let (out, events, model, h) = run(&script, false, 3);
    assert!(!out.passed());
    assert_eq!(attempts_finished(&events).len(), 3);
    assert!(finish_refusals(&events).is_empty());
    assert!(model.prompts().iter().all(|p| !p.contains(WITHHELD)));
    assert!((0..model.requests.len()).all(|c| offers_finish(&model, c)));
    assert!(journal_events(&h.journal, out.run, "finish_withheld").is_empty());
}

#[test]
fn a_failure_the_run_can_fix_without_touching_the_report_keeps_finish() {
    // The gold report with a stray root summary.md beside it fails only `no-stray-root-summary`
    // (a check of another file): deleting the stray file and finishing on the very same report
    // bytes must be judged, and passes. A lever that keyed on the report's bytes alone would
    // withhold finish here and make a fixable run fail.
    let script = reads()
        + &write_summary(&gold_text())
        + &line(
            "create_file",
            json!({"path": "summary.md", "content": "stray"}),
        )
        + &read_summary()
        + &finish_line()
        + &line("delete_file", json!({"path": "summary.md"}))
        + &finish_line();
    let (out, events, model, h) = run(&script, true, 2);
    let finished = attempts_finished(&events);
    assert_eq!(finished.len(), 2, "{finished:?}");
    assert!(finished[0].starts_with("failed: 1 of"), "{finished:?}");
    assert!(out.passed(), "{}", out.reason());
    assert!(finish_refusals(&events).is_empty());
    assert!((0..model.requests.len()).all(|c| offers_finish(&model, c)));
    assert!(model.prompts().iter().all(|p| !p.contains(WITHHELD)));
    assert!(journal_events(&h.journal, out.run, "finish_withheld").is_empty());
}

#[test]
fn a_stray_file_failure_beside_a_settled_one_keeps_finish() {
    // A wrong total and a stray root summary.md: deleting the stray file (not the report) can
    // change the verdict, so finish stays offered on the same report bytes.
    let wrong = wrong_total_text();
    let script = reads()
        + &write_summary(&wrong)
        + &line(
            "create_file",
            json!({"path": "summary.md", "content": "stray"}),
        )
        + &read_summary()
        + &finish_line()
        + &finish_line();
    let (out, events, model, h) = run(&script, true, 2);
    assert!(!out.passed());
    let finished = attempts_finished(&events);
    assert_eq!(finished.len(), 2, "{finished:?}");
    assert!(
        finish_refusals(&events).is_empty(),
        "{:?}",
        finish_refusals(&events)
    );
    assert!((0..model.requests.len()).all(|c| offers_finish(&model, c)));
    assert!(journal_events(&h.journal, out.run, "finish_withheld").is_empty());
}

fn spec(v: Value) -> CheckSpec {
    serde_json::from_value(v).unwrap()
}

#[test]
fn settled_checks_are_the_deliverable_s_own_and_no_others() {
    let a = "out/report.md";
    let own = [
        json!({"kind": "file_exists", "path": "out/report.md"}),
        json!({"kind": "content_matches", "path": "./out/report.md", "pattern": "x"}),
        json!({"kind": "json_schema", "path": "out/report.md", "schema": {}}),
        json!({"kind": "no_placeholders", "path": "out//report.md"}),
    ];
    for v in own {
        assert!(spec(v.clone()).settled_by(a), "{v}");
    }
    let others = [
        json!({"kind": "file_absent", "path": "report.md"}),
        json!({"kind": "content_matches", "path": "out/other.md", "pattern": "x"}),
        json!({"kind": "inputs_read", "paths": ["a.txt"]}),
        json!({"kind": "written_this_run", "path": "out/report.md"}),
        json!({"kind": "inputs_unchanged"}),
        json!({"kind": "nothing_else_changed"}),
        json!({"kind": "actions_called", "tools": ["read_file"]}),
        json!({"kind": "variable_set", "name": "x"}),
        json!({"kind": "decision", "prompt": "p", "labels": ["yes", "no"], "expected": "yes"}),
    ];
    for v in others {
        assert!(!spec(v.clone()).settled_by(a), "{v}");
    }
}
