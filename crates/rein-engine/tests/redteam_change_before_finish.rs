#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red-team of the `change-before-finish` lever: attacks on its promise (it only withholds a
//! finish whose verdict would certainly repeat, tells nothing beyond the retry feedback, never
//! loops, and agrees with the other levers), and the regressions its correct behaviour pins.

#[path = "agent_support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::path::Path;

use rein_engine::agent::{AgentEvent, AgentOptions, Levers, RunEnd, RunOutcome};
use rein_engine::checks::{CheckSpec, Decider};
use rein_engine::gate::AllowAll;
use rein_engine::memory::{run_memory, start_sandbox, MemoryRunEnv};
use rein_engine::mission::Mission;
use rein_journal::Journal;
use rein_models::{Model, ScriptedModel};
use serde_json::{json, Value};
use support::{
    allowed_tools, attempts_finished, caps, finish_line, finish_refusals, gold_fields, gold_text,
    journal_events, line, offers_finish, read_summary, reads, rewrite_summary, write_summary,
    wrong_total_text, Harness, PromptRecorder, SUMMARY,
};

const WITHHELD: &str = "finish is not offered until out/summary.md changes";
const UNCHANGED: &str = "is the very file that failed";

fn levers(f: impl FnOnce(&mut Levers)) -> Levers {
    let mut l = Levers {
        change_before_finish: true,
        ..Levers::DEFAULT
    };
    f(&mut l);
    l
}

fn run_on(
    h: &Harness,
    script: &str,
    levers: Levers,
    attempts: u32,
    tweak: impl FnOnce(&mut AgentOptions),
) -> (RunOutcome, Vec<AgentEvent>, PromptRecorder) {
    let mut model = PromptRecorder::new(script, "redteam_cbf.jsonl");
    let (out, events) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = attempts;
        tweak(o);
    });
    (out, events, model)
}

fn delete() -> String {
    line("delete_file", json!({ "path": SUMMARY }))
}

/// The last message of call `call`'s prompt: what the model was told after its last step.
fn last_message(model: &PromptRecorder, call: usize) -> String {
    match &model.requests[call].prompt {
        rein_protocol::Prompt::Chat { messages } => messages.last().unwrap().content.clone(),
        rein_protocol::Prompt::Raw { text } => text.clone(),
    }
}

fn failed_ids(out: &RunOutcome) -> Vec<String> {
    out.verdict
        .as_ref()
        .map(|v| {
            v.checks
                .iter()
                .filter(|c| !c.passed && !c.advisory)
                .map(|c| c.id.clone())
                .collect()
        })
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Attack 1: a `decision` check on the deliverable is judged by a model, not by the bytes. A
// decider that failed once (an outage, a restarted worker) or wavered around the floor fails
// the check on bytes that pass when judged again: withholding finish there makes a run that
// could pass fail.
// ---------------------------------------------------------------------------------------------

/// A decider whose answers are scripted per call: `Err` for an outage, else P(yes).
struct Flaky {
    answers: Vec<Result<f64, String>>,
    calls: usize,
}

impl Decider for Flaky {
    fn choose(&mut self, _prompt: &str, labels: &[String]) -> Result<Vec<(String, f64)>, String> {
        let i = self.calls.min(self.answers.len() - 1);
        self.calls += 1;
        let yes = self.answers[i].clone()?;
        Ok(labels
            .iter()
            .map(|l| (l.clone(), if l == "yes" { yes } else { 1.0 - yes }))
            .collect())
    }
}

/// desk_task with its risk decision qualified (so it decides the verdict).
fn qualified_decision_harness() -> Harness {
    Harness::with_edit("desk_task", |v| {
        for c in v["checks"].as_array_mut().unwrap() {
            if c["kind"] == "decision" {
                c["qualified"] = json!(true);
            }
        }
    })
}

/// `Harness::run_gated` with a decider for the decision checks.
fn run_with_decider(
    h: &Harness,
    script: &str,
    lever: bool,
    decider: &mut dyn Decider,
) -> (RunOutcome, Vec<AgentEvent>) {
    let mut model = PromptRecorder::new(script, "redteam_cbf_decider.jsonl");
    h.run_gated_with_decider(
        &mut model,
        &mut AllowAll,
        rein_engine::policy::Policy::safe_default(),
        Some(decider),
        |o| {
            o.levers = Levers {
                change_before_finish: lever,
                ..Levers::DEFAULT
            };
            o.constrained = true;
            o.limits.attempts = 2;
        },
    )
}

/// The gold report, finished; then, in attempt 2, finished again on the very same bytes.
fn gold_twice() -> String {
    reads() + &write_summary(&gold_text()) + &read_summary() + &finish_line() + &finish_line()
}

fn assert_second_judgement_passes(first: Result<f64, String>) {
    for lever in [false, true] {
        let h = qualified_decision_harness();
        let mut decider = Flaky {
            answers: vec![first.clone(), Ok(0.97)],
            calls: 0,
        };
        let (out, events) = run_with_decider(&h, &gold_twice(), lever, &mut decider);
        let finished = attempts_finished(&events);
        assert_eq!(finished.len(), 2, "lever {lever}: {finished:?}");
        assert!(
            finished[0].starts_with("failed: 1 of"),
            "lever {lever}: {finished:?}"
        );
        assert!(
            out.passed(),
            "lever {lever}: the same gold bytes pass when judged again, yet the run ended: {} \
             (finish refusals {:?})",
            out.reason(),
            finish_refusals(&events)
        );
        assert!(journal_events(&h.journal, out.run, "finish_withheld").is_empty());
    }
}

#[test]
fn attack_a_decider_outage_does_not_withhold_finish_on_bytes_that_would_pass() {
    assert_second_judgement_passes(Err("llama-server: connection reset".into()));
}

#[test]
fn attack_a_decider_wavering_under_the_floor_does_not_withhold_finish() {
    // 0.79 is one basis point under the 0.80 floor; greedy logits are not bit-stable across
    // batch sizes and prompt caches, so the next reading may be 0.81.
    assert_second_judgement_passes(Ok(0.7999));
}

// ---------------------------------------------------------------------------------------------
// Attack 2: `finish-when-met` tells the model "finish would be accepted ... call finish now"
// after a step, while this lever withholds and refuses that very finish.
// ---------------------------------------------------------------------------------------------

#[test]
fn attack_finish_when_met_never_says_call_finish_while_finish_is_withheld() {
    // Attempt 1: a wrong total (numeric_consistency: not shown mid-run, so the shown checks are
    // all met). Attempt 2: the model deletes the report and writes the very same bytes back,
    // then reads it back: the attempt wrote the deliverable, the finish rules hold and the shown
    // checks are met (finish-when-met's "ready"), yet the bytes are the failed ones.
    let wrong = wrong_total_text();
    let script = reads()
        + &write_summary(&wrong)
        + &read_summary()
        + &finish_line()
        + &delete()
        + &write_summary(&wrong)
        + &read_summary()
        + &finish_line()
        + &rewrite_summary(&gold_text())
        + &read_summary()
        + &finish_line();
    let h = Harness::new("desk_task");
    let (out, events, model) = run_on(&h, &script, levers(|l| l.finish_when_met = true), 3, |_| {});
    assert!(out.passed(), "{}", out.reason());
    // Calls 0-5: attempt 1. 6: delete, 7: create (no report: finish offered), 8: read back,
    // 9: finish (refused), 10: rewrite, 11: read back, 12: finish.
    assert_eq!(model.requests.len(), 13);
    for call in [6, 8, 9, 10] {
        assert!(!offers_finish(&model, call), "call {call} offered finish");
    }
    for call in 6..=10 {
        assert!(
            !last_message(&model, call).contains("finish would be accepted"),
            "call {call} was told to finish on the bytes that failed:\n{}",
            last_message(&model, call)
        );
    }
    let refusals = finish_refusals(&events);
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(refusals[0].contains(UNCHANGED), "{refusals:?}");
    // finish-when-met held the gold report to finish alone, as always.
    assert_eq!(
        allowed_tools(&model.requests[12]),
        vec!["finish".to_string()]
    );
    let met = journal_events(&h.journal, out.run, "finish_when_met");
    assert!(
        met.iter()
            .all(|e| e["attempt"] != 2 || e["step"].as_u64() > Some(11)),
        "{met:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Classification: what `settled_by` must and must not call settled.
// ---------------------------------------------------------------------------------------------

fn spec(v: Value) -> CheckSpec {
    serde_json::from_value(v).unwrap()
}

#[test]
fn attack_a_decision_on_the_deliverable_is_not_settled_by_its_bytes() {
    let d = spec(
        json!({"kind": "decision", "path": SUMMARY, "prompt": "p {artifact}",
                        "labels": ["yes", "no"], "expected": "yes", "qualified": true}),
    );
    assert!(
        !d.settled_by(SUMMARY),
        "a model's answer can change on the same bytes"
    );
}

#[test]
fn regression_path_spellings_and_case() {
    // Spelling of one path: settled. Another case is another file on a case-sensitive disk:
    // not settled (the conservative side). A contract never holds these spellings (load
    // refuses a path not in normal form), but `settled_by` must not depend on that.
    let same = ["./out/summary.md", "out//summary.md", "out/./summary.md"];
    for p in same {
        let s = spec(json!({"kind": "content_matches", "path": p, "pattern": "x"}));
        assert!(s.settled_by(SUMMARY), "{p}");
        assert!(s.settled_by(&format!("./{SUMMARY}")), "{p}");
    }
    let other = [
        "OUT/summary.md",
        "out/Summary.md",
        "out/summary.md.bak",
        "out",
        "../out/summary.md",
        "/out/summary.md",
        "out\\summary.md",
    ];
    for p in other {
        let s = spec(json!({"kind": "content_matches", "path": p, "pattern": "x"}));
        assert!(!s.settled_by(SUMMARY), "{p}");
    }
    // Kinds that read the trace or other files stay unsettled even on the deliverable's path.
    for v in [
        json!({"kind": "written_this_run", "path": SUMMARY}),
        json!({"kind": "inputs_read", "before_writing": SUMMARY}),
        json!({"kind": "nothing_else_changed", "allow": [SUMMARY]}),
        json!({"kind": "actions_called", "tools": [{"tool": "read_file", "path": SUMMARY, "after_last_write": true}]}),
    ] {
        assert!(!spec(v.clone()).settled_by(SUMMARY), "{v}");
    }
    // A contract path not in normal form is refused at load, so no check can name the
    // deliverable in a spelling the lever would read differently.
    let dir = tempfile::tempdir().unwrap();
    let mut v: Value = serde_json::from_str(
        &std::fs::read_to_string(support::missions_dir().join("desk_task/mission.json")).unwrap(),
    )
    .unwrap();
    v["checks"][0]["path"] = json!("./out/summary.md");
    std::fs::create_dir_all(dir.path().join("m")).unwrap();
    std::fs::write(dir.path().join("m/mission.json"), v.to_string()).unwrap();
    assert!(Mission::load(dir.path().join("m/mission.json")).is_err());
}

// ---------------------------------------------------------------------------------------------
// Sequences: monotone undo, delete and recreate, a directory where the report was, caps.
// ---------------------------------------------------------------------------------------------

#[test]
fn regression_after_a_monotone_undo_the_restored_failed_bytes_are_withheld_again() {
    // Attempt 1: wrong total. Attempt 2 (withheld until changed): fixes the total but drops the
    // project's name, which passed before: undone, the wrong-total report is back. Attempt 3
    // starts withheld again and is told so; the gold report then passes.
    let wrong = wrong_total_text();
    let broken = gold_text().replace("Harbor Library", "the library");
    assert_ne!(broken, gold_text());
    let script = reads()
        + &write_summary(&wrong)
        + &read_summary()
        + &finish_line()
        + &rewrite_summary(&broken)
        + &read_summary()
        + &finish_line()
        + &finish_line()
        + &rewrite_summary(&gold_text())
        + &read_summary()
        + &finish_line();
    let h = Harness::new("desk_task");
    let (out, events, model) = run_on(
        &h,
        &script,
        levers(|l| l.monotone_attempts = true),
        3,
        |_| {},
    );
    assert!(out.passed(), "{}", out.reason());
    let finished = attempts_finished(&events);
    assert_eq!(finished.len(), 3, "{finished:?}");
    assert!(finished[1].contains("undone"), "{finished:?}");
    assert_eq!(
        journal_events(&h.journal, out.run, "finish_withheld"),
        vec![
            json!({"attempt": 2, "checks": ["total-hours"]}),
            json!({"attempt": 3, "checks": ["total-hours"]}),
        ]
    );
    // Calls: 0-5 attempt 1; 6 rewrite, 7 read, 8 finish; 9 finish (refused), 10 rewrite, 11
    // read, 12 finish.
    assert_eq!(model.requests.len(), 13);
    assert!(!offers_finish(&model, 6));
    assert!(offers_finish(&model, 7) && offers_finish(&model, 8));
    assert!(!offers_finish(&model, 9) && !offers_finish(&model, 10));
    assert!(model.prompt(9).contains(WITHHELD), "{}", model.prompt(9));
    assert_eq!(finish_refusals(&events).len(), 1);
}

#[test]
fn regression_a_deleted_report_is_not_withheld_and_recreating_the_same_bytes_is() {
    let wrong = wrong_total_text();
    let script = reads()
        + &write_summary(&wrong)
        + &read_summary()
        + &finish_line()
        + &delete()
        + &finish_line()
        + &write_summary(&wrong)
        + &read_summary()
        + &finish_line()
        + &rewrite_summary(&gold_text())
        + &read_summary()
        + &finish_line();
    let h = Harness::new("desk_task");
    let (out, events, model) = run_on(&h, &script, levers(|_| {}), 3, |_| {});
    assert!(out.passed(), "{}", out.reason());
    let refusals = finish_refusals(&events);
    assert_eq!(refusals.len(), 2, "{refusals:?}");
    // The missing file is the finish rules' refusal; the same bytes again are this lever's.
    assert!(refusals[0].contains("does not exist"), "{refusals:?}");
    assert!(refusals[1].contains(UNCHANGED), "{refusals:?}");
    // Calls: 6 delete (withheld), 7 finish (offered: nothing to withhold), 8 create, 9 read
    // (withheld again), 10 finish, 11 rewrite, 12 read, 13 finish.
    assert!(!offers_finish(&model, 6));
    assert!(offers_finish(&model, 7));
    assert!(!offers_finish(&model, 9) && !offers_finish(&model, 10));
    assert!(offers_finish(&model, 12));
    assert_eq!(attempts_finished(&events).len(), 2);
}

#[test]
fn regression_a_directory_where_the_report_was_neither_panics_nor_withholds() {
    let wrong = wrong_total_text();
    let script = reads()
        + &write_summary(&wrong)
        + &read_summary()
        + &finish_line()
        + &delete()
        + &line(
            "create_file",
            json!({"path": "out/summary.md/inner.md", "content": "x"}),
        )
        + &finish_line()
        + &finish_line();
    let h = Harness::new("desk_task");
    let (out, events, model) = run_on(&h, &script, levers(|_| {}), 2, |_| {});
    assert!(!out.passed());
    for r in finish_refusals(&events) {
        assert!(!r.contains(UNCHANGED), "{r}");
    }
    // Once the report is gone, finish is offered again whatever stands at its path.
    assert!(offers_finish(&model, 7));
}

#[test]
fn regression_a_turn_cap_while_finish_is_withheld_ends_aborted_with_the_failed_verdict() {
    // Attempt 2 never changes the report: the model reads until the turn cap. The run stops on
    // the cap (not on a judged finish), with the world's verdict for the record.
    let wrong = wrong_total_text();
    let mut script = reads() + &write_summary(&wrong) + &read_summary() + &finish_line();
    for _ in 0..10 {
        script += &reads();
    }
    let h = Harness::new("desk_task");
    let (out, events, model) = run_on(&h, &script, levers(|_| {}), 3, |o| {
        o.limits.max_turns = 12;
    });
    assert!(!out.passed());
    assert!(matches!(out.end, RunEnd::Cap { .. }), "{:?}", out.end);
    assert!(!out.finish_accepted);
    assert_eq!(failed_ids(&out), vec!["total-hours".to_string()]);
    assert_eq!(model.requests.len(), 12);
    assert!((6..12).all(|c| !offers_finish(&model, c)));
    let capped: Vec<String> = caps(&events).into_iter().map(|(c, _)| c).collect();
    assert!(!capped.is_empty(), "{capped:?}");
}

#[test]
fn regression_a_model_that_keeps_calling_finish_unconstrained_stops_on_no_progress() {
    // Not held to the schema, the model names finish anyway, again and again: each is refused
    // with nothing judged, and the no-progress cap ends the loop.
    let wrong = wrong_total_text();
    let mut script = reads() + &write_summary(&wrong) + &read_summary() + &finish_line();
    for i in 0..40 {
        script += &line("finish", json!({"summary": format!("Done {i}.")}));
    }
    let h = Harness::new("desk_task");
    let (out, events, model) = run_on(&h, &script, levers(|_| {}), 3, |o| {
        o.constrained = false;
    });
    assert!(!out.passed());
    assert!(
        matches!(&out.end, RunEnd::Cap { hit } if hit.name() == "no_progress"),
        "{:?}",
        out.end
    );
    assert_eq!(attempts_finished(&events).len(), 1);
    let refusals = finish_refusals(&events);
    assert!(
        refusals.len() >= 8 && refusals.len() < 40,
        "{}",
        refusals.len()
    );
    assert!(refusals.iter().all(|r| r.contains(UNCHANGED)));
    assert!(model.requests.len() < 40);
}

// ---------------------------------------------------------------------------------------------
// Leaks: the refusal and the withheld line name only checks the retry feedback named, and no
// value computed from the inputs.
// ---------------------------------------------------------------------------------------------

#[test]
fn regression_the_lever_says_nothing_the_feedback_did_not() {
    for monotone in [false, true] {
        let wrong = wrong_total_text();
        let script = reads()
            + &write_summary(&wrong)
            + &read_summary()
            + &finish_line()
            + &finish_line()
            + &rewrite_summary(&gold_text())
            + &read_summary()
            + &finish_line();
        let h = Harness::new("desk_task");
        let (out, events, model) = run_on(
            &h,
            &script,
            levers(|l| l.monotone_attempts = monotone),
            2,
            |_| {},
        );
        assert!(out.passed(), "{}", out.reason());
        let feedback = model.prompt(6);
        assert!(feedback.contains(WITHHELD), "{feedback}");
        let withheld = journal_events(&h.journal, out.run, "finish_withheld");
        assert_eq!(withheld.len(), 1);
        for id in withheld[0]["checks"].as_array().unwrap() {
            assert!(feedback.contains(id.as_str().unwrap()), "{id}");
        }
        let refusals = finish_refusals(&events);
        assert_eq!(refusals.len(), 1);
        // The expected total (64, the CSV's sum) is withheld by the check: not here either.
        assert!(!refusals[0].contains("64"), "{}", refusals[0]);
        let tail = &feedback[feedback.find(WITHHELD).unwrap()..];
        assert!(!tail.contains("64"), "{tail}");
    }
}

// ---------------------------------------------------------------------------------------------
// Other levers: write-sections, verified sampling, a memory-sandbox task.
// ---------------------------------------------------------------------------------------------

#[test]
fn regression_with_write_sections_the_same_fields_are_withheld_and_new_ones_judged() {
    let mut wrong = gold_fields();
    let tasks = wrong["Tasks"].as_str().unwrap().to_string();
    wrong["Tasks"] = json!(tasks.replace("Total hours: 64", "Total hours: 72"));
    let script = reads()
        + &line("write_sections", wrong.clone())
        + &read_summary()
        + &finish_line()
        + &line("write_sections", wrong)
        + &read_summary()
        + &finish_line()
        + &line("write_sections", gold_fields())
        + &read_summary()
        + &finish_line();
    let h = Harness::new("desk_task");
    let (out, events, model) = run_on(&h, &script, levers(|l| l.write_sections = true), 2, |_| {});
    assert!(out.passed(), "{}", out.reason());
    let refusals = finish_refusals(&events);
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(refusals[0].contains(UNCHANGED));
    assert!((6..=9).all(|c| !offers_finish(&model, c)));
    assert!(offers_finish(&model, 10));
}

#[test]
fn regression_with_verified_sampling_finish_stays_withheld_and_a_fix_passes() {
    let wrong = wrong_total_text();
    // Samples 2: each write of the deliverable is drawn twice (the scripted model replays the
    // second draw next). The first write draws the wrong report twice; the second the wrong
    // one, then the gold one, which the judge picks.
    let script = reads()
        + &write_summary(&wrong)
        + &write_summary(&wrong)
        + &read_summary()
        + &finish_line()
        + &finish_line()
        + &rewrite_summary(&wrong)
        + &rewrite_summary(&gold_text())
        + &read_summary()
        + &finish_line();
    let h = Harness::new("desk_task");
    let (out, events, model) = run_on(&h, &script, levers(|_| {}), 2, |o| o.samples = 2);
    assert!(out.passed(), "{}", out.reason());
    let refusals = finish_refusals(&events);
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(refusals[0].contains(UNCHANGED));
    // No draw of attempt 2 was offered finish before the gold report stood.
    let withheld_calls: Vec<usize> = (0..model.requests.len())
        .filter(|&c| model.prompt(c).contains(WITHHELD))
        .collect();
    assert!(!withheld_calls.is_empty());
    let first = withheld_calls[0];
    // The feedback, the refused finish's result, the draw of the rewrite: none offers finish.
    assert!((first..first + 3).all(|c| !offers_finish(&model, c)));
    assert!(offers_finish(&model, first + 3));
}

#[test]
fn regression_a_memory_sandbox_task_is_untouched_by_the_lever() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("journal.db")).unwrap();
    let mdir = dir.path().join("m");
    std::fs::create_dir(&mdir).unwrap();
    let m = json!({
        "id": "mem",
        "mode": "automatic",
        "prompt": "Write yes to a.txt.",
        "tools": ["create_file", "read_file", "list_files", "delete_file", "set_variable",
                  "get_variable", "final_answer"],
        "checks": [{"id": "a-yes", "kind": "content_matches", "path": "a.txt", "pattern": "yes"}],
        "budgets": {"max_turns": 10, "attempts_per_strategy": 3}
    });
    std::fs::write(mdir.join("mission.json"), m.to_string()).unwrap();
    let contract = Mission::load(&mdir).unwrap();
    let act = |tool: &str, p: Value| json!({"thought": "t", "action": tool, "parameters": p});
    let lines = [
        act("create_file", json!({"path": "a.txt", "content": "no"})),
        act("final_answer", json!({"answer": "done"})),
        act("final_answer", json!({"answer": "done"})),
        act("final_answer", json!({"answer": "done"})),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let mut model = ScriptedModel::from_str_named(&lines, Path::new("mem.jsonl")).unwrap();
    let mut options = AgentOptions::for_mission(&contract, model.identity());
    options.levers = support::ALL_ON_BUT_NOTES;
    options.limits.attempts = 3;
    let r = run_memory(
        MemoryRunEnv {
            contract: &contract,
            mission_file: &contract.source,
            journal: &journal,
            meta: json!({}),
        },
        start_sandbox(&contract, &BTreeMap::new()).unwrap(),
        &mut model,
        &mut AllowAll,
        options,
        &mut |_| {},
    )
    .unwrap();
    assert!(!r.outcome.passed());
    assert_eq!(r.outcome.figures.attempts, 3);
    assert_eq!(r.outcome.figures.finish_refusals, 0);
    assert!(journal_events(&journal, r.outcome.run, "finish_withheld").is_empty());
}

#[test]
fn regression_an_input_changed_and_restored_never_reaches_the_lever() {
    // Checks that read a frozen input (total-hours reads data/tasks.csv) could change with the
    // report's bytes unchanged if the input changed between verdicts. The finish rules refuse
    // every finish once a call of the run touched an input (put back is not unchanged), so no
    // verdict is ever taken on a changed input and the lever never sees one, even in a
    // contract without `inputs_unchanged`.
    let h = Harness::with_edit("desk_task", |v| {
        v["checks"]
            .as_array_mut()
            .unwrap()
            .retain(|c| c["kind"] != "inputs_unchanged");
    });
    let csv = std::fs::read_to_string(h.workspace.join("data/tasks.csv")).unwrap();
    let script = reads()
        + &write_summary(&gold_text())
        + &line(
            "replace_file",
            json!({"path": "data/tasks.csv", "content": csv.replace(",", ";")}),
        )
        + &read_summary()
        + &finish_line()
        + &line(
            "replace_file",
            json!({"path": "data/tasks.csv", "content": csv}),
        )
        + &finish_line();
    let (out, events, _) = run_on(&h, &script, levers(|_| {}), 2, |_| {});
    assert!(!out.passed());
    assert!(attempts_finished(&events).is_empty());
    let refusals = finish_refusals(&events);
    assert_eq!(refusals.len(), 2, "{refusals:?}");
    assert!(refusals
        .iter()
        .all(|r| r.contains("input `data/tasks.csv` was overwritten")));
    assert!(journal_events(&h.journal, out.run, "finish_withheld").is_empty());
}
