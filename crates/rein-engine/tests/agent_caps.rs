#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Every cap fires at its edge with a message a person can read.

#[path = "agent_support/mod.rs"]
mod support;

use std::time::Duration;

use rein_engine::agent::{
    AgentEvent, CapHit, RunEnd, RunOutcome, MAX_ATTEMPTS_PER_STRATEGY, MAX_INPUT_CHARS,
    MAX_PLAN_STEPS, MAX_REPLY_TOKENS, MAX_STEPS_WITHOUT_PROGRESS, MAX_TURNS_PER_JOB, RUN_TIMEOUT,
};
use rein_engine::gate::AllowAll;
use rein_models::ScriptedModel;
use serde_json::json;
use support::{caps, fixture, FakeClock, Harness};

#[test]
fn the_design_numbers() {
    assert_eq!(MAX_TURNS_PER_JOB, 64);
    assert_eq!(MAX_PLAN_STEPS, 8);
    assert_eq!(MAX_ATTEMPTS_PER_STRATEGY, 3);
    assert_eq!(RUN_TIMEOUT, Duration::from_secs(900));
    assert_eq!(MAX_INPUT_CHARS, 32_000);
    assert_eq!(MAX_REPLY_TOKENS, 384);
}

#[test]
fn turns_cap_at_its_edge() {
    let h = Harness::new("desk_task");
    let (out, events) = h.run_fixture("good.jsonl", |o| o.limits.max_turns = 6);
    assert!(out.passed(), "six turns are enough for six steps");
    assert!(caps(&events).is_empty());

    let h = Harness::new("desk_task");
    let (out, events) = h.run_fixture("good.jsonl", |o| o.limits.max_turns = 5);
    assert_eq!(
        out.end,
        RunEnd::Cap {
            hit: CapHit::Turns { limit: 5 }
        }
    );
    assert_eq!(out.figures.steps, 5);
    assert_eq!(
        caps(&events),
        vec![(
            "turns".into(),
            "stopped after 5 turns (the cap on turns per job) without an accepted finish".into()
        )]
    );
    assert_eq!(out.exit_code(), 1);
}

#[test]
fn the_default_turn_cap_is_64() {
    // 70 different searches (each makes progress by the loop's measure): the run stops at
    // the 64th turn.
    let lines: String = (0..70)
        .map(|i| {
            json!({"thought": "search", "action": "search_text", "parameters": {"pattern": format!("word{i}")}})
                .to_string()
                + "\n"
        })
        .collect();
    let mut model =
        ScriptedModel::from_str_named(&lines, std::path::Path::new("loop.jsonl")).unwrap();
    let h = Harness::new("desk_task");
    let (out, _) = h.run_model(&mut model, &mut AllowAll, |_| {}, None, &mut |_| {});
    assert_eq!(
        out.end,
        RunEnd::Cap {
            hit: CapHit::Turns { limit: 64 }
        }
    );
    assert_eq!(out.figures.steps, 64);
    assert_eq!(model.used(), 64);
}

#[test]
fn run_timeout_at_its_edge() {
    let h = Harness::new("desk_task");
    let mut model = ScriptedModel::load(fixture("good.jsonl")).unwrap();
    let (out, events) = h.run_model(
        &mut model,
        &mut AllowAll,
        |_| {},
        Some(FakeClock::fixed(899)),
        &mut |_| {},
    );
    assert!(out.passed(), "899 s is inside the 900 s timeout");
    assert!(caps(&events).is_empty());

    let h = Harness::new("desk_task");
    let mut model = ScriptedModel::load(fixture("good.jsonl")).unwrap();
    let (out, events) = h.run_model(
        &mut model,
        &mut AllowAll,
        |_| {},
        Some(FakeClock::fixed(900)),
        &mut |_| {},
    );
    assert_eq!(out.figures.steps, 0);
    assert_eq!(
        caps(&events),
        vec![(
            "run_timeout".into(),
            "stopped: the run took 900 s, reaching the run timeout of 900 s".into()
        )]
    );
    assert_eq!(out.exit_code(), 1);

    // A clock ticking one second per step: a 4 s budget stops before the fifth step.
    let h = Harness::new("desk_task");
    let mut model = ScriptedModel::load(fixture("good.jsonl")).unwrap();
    let (out, _) = h.run_model(
        &mut model,
        &mut AllowAll,
        |o| o.limits.timeout = Duration::from_secs(4),
        Some(FakeClock::ticking()),
        &mut |_| {},
    );
    assert_eq!(out.figures.steps, 4);
    assert!(matches!(
        out.end,
        RunEnd::Cap {
            hit: CapHit::RunTimeout { limit_secs: 4, .. }
        }
    ));
}

#[test]
fn attempts_cap_at_its_edge() {
    // Fixed on the second attempt: two attempts are enough.
    let h = Harness::new("desk_task");
    let (out, _) = h.run_fixture("wrong_total_then_fix.jsonl", |o| o.limits.attempts = 2);
    assert!(out.passed());

    // Never fixed: three attempts, then the cap, and the last verdict stands.
    let h = Harness::new("desk_task");
    let (out, events) = h.run_fixture("wrong_total_always.jsonl", |_| {});
    assert_eq!(out.figures.attempts, 3);
    assert_eq!(
        caps(&events),
        vec![(
            "attempts".into(),
            "stopped after 3 attempts (the cap on attempts per strategy); the last verdict stands"
                .into()
        )]
    );
    assert!(!out.passed());
    assert_eq!(out.exit_code(), 1);
    assert!(out.finish_accepted);
    assert!(out.reason().contains("total-hours"), "{}", out.reason());
    // The unqualified decision check failed closed (no decision model) but is advice: it is
    // neither among the reasons nor a failure in the journal.
    assert!(!out.reason().contains("risk-meaning"), "{}", out.reason());
    let trace = h.journal.run_trace(out.run).unwrap();
    let advice: Vec<(bool, bool)> = trace
        .checks
        .iter()
        .filter(|c| c.name == "risk-meaning")
        .map(|c| (c.passed, c.advisory))
        .collect();
    assert_eq!(advice, vec![(false, true); 3], "one per attempt");
    assert_eq!(trace.attempts.len(), 3);
    assert_eq!(trace.run.status, rein_journal::RunStatus::Fail);
}

fn create_with(chars: usize) -> String {
    let content = "word ".repeat(chars / 5) + &"x".repeat(chars % 5);
    assert_eq!(content.chars().count(), chars);
    json!({"thought": "write", "action": "create_file", "parameters": {"path": "out/big.md", "content": content}}).to_string() + "\n"
}

#[test]
fn input_cap_at_its_edge() {
    let h = Harness::new("desk_task");
    let mut model = ScriptedModel::from_str_named(
        &create_with(MAX_INPUT_CHARS),
        std::path::Path::new("at.jsonl"),
    )
    .unwrap();
    let (_, events) = h.run_model(&mut model, &mut AllowAll, |_| {}, None, &mut |_| {});
    assert!(caps(&events).is_empty());
    assert!(events
        .iter()
        .any(|e| matches!(e, AgentEvent::Step(s) if s.outcome == "executed")));
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("out/big.md"))
            .unwrap()
            .len(),
        MAX_INPUT_CHARS
    );

    let h = Harness::new("desk_task");
    let mut model = ScriptedModel::from_str_named(
        &create_with(MAX_INPUT_CHARS + 1),
        std::path::Path::new("over.jsonl"),
    )
    .unwrap();
    let (out, events) = h.run_model(&mut model, &mut AllowAll, |_| {}, None, &mut |_| {});
    assert_eq!(
        caps(&events),
        vec![("input_chars".into(), "`parameters.content` of create_file has 32001 characters, more than the cap of 32000 characters per input; it was not used".into())]
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, AgentEvent::Step(s) if s.outcome == "invalid" && s.kind == "cap")));
    assert!(!h.workspace.join("out/big.md").exists());
    // It cost a step, not the run: the run went on until the script ran out.
    assert!(matches!(out.end, RunEnd::ModelFailed { .. }));
}

#[test]
fn an_over_long_task_prompt_is_refused_before_any_step() {
    let h = Harness::with_edit("desk_task", |v| {
        v["prompt"] = json!("Summarise. ".repeat(3_000));
    });
    let (out, _) = h.run_fixture("good.jsonl", |_| {});
    let RunEnd::Refused { message } = &out.end else {
        panic!("{:?}", out.end)
    };
    assert!(
        message.contains("more than the cap of 32000 characters per input"),
        "{message}"
    );
    assert_eq!(out.figures.steps, 0);
    assert_eq!(out.exit_code(), 2);
}

#[test]
fn plan_steps_cap_at_its_edge() {
    let h = Harness::new("desk_task");
    let (out, events) = h.run_fixture("plan_eight.jsonl", |o| o.plan = true);
    assert!(out.passed());
    assert!(caps(&events).is_empty());
    assert!(events
        .iter()
        .any(|e| matches!(e, AgentEvent::Plan { steps } if steps.len() == 8)));

    let h = Harness::new("desk_task");
    let (out, events) = h.run_fixture("plan_nine.jsonl", |o| o.plan = true);
    assert!(out.passed(), "a cut plan does not stop the run");
    assert_eq!(
        caps(&events),
        vec![(
            "plan_steps".into(),
            "the plan had 9 steps; only the first 8 were kept (the cap on plan steps)".into()
        )]
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, AgentEvent::Plan { steps } if steps.len() == 8)));
}

#[test]
fn a_model_that_loops_is_stopped_for_no_progress() {
    // The same call again and again: the first is progress, the next eight are not.
    let lines: String = (0..20)
        .map(|_| {
            json!({"thought": "again", "action": "list_dir", "parameters": {}}).to_string() + "\n"
        })
        .collect();
    let (out, events) = run_script(&lines);
    assert_eq!(
        out.end,
        RunEnd::Cap {
            hit: CapHit::NoProgress {
                limit: MAX_STEPS_WITHOUT_PROGRESS
            }
        }
    );
    assert_eq!(out.figures.steps, 1 + MAX_STEPS_WITHOUT_PROGRESS);
    assert_eq!(
        caps(&events),
        vec![(
            "no_progress".into(),
            "stopped: 8 steps in a row made no progress (each repeated an earlier call, was a call that did not run, was a reply cut off at the reply cap, or was a refused finish)".into()
        )]
    );
}

#[test]
fn progress_resets_the_no_progress_count() {
    // Seven repeats, one new call, seven repeats: never eight in a row.
    let repeat = json!({"thought": "again", "action": "list_dir", "parameters": {}}).to_string();
    let fresh = json!({"thought": "new", "action": "search_text", "parameters": {"pattern": "x"}})
        .to_string();
    let mut lines = vec![repeat.clone(); 8];
    lines.push(fresh);
    lines.extend(vec![repeat; 7]);
    let (out, events) = run_script(&(lines.join("\n") + "\n"));
    assert!(caps(&events).iter().all(|(name, _)| name != "no_progress"));
    assert!(
        matches!(out.end, RunEnd::ModelFailed { .. }),
        "{:?}",
        out.end
    );
}

#[test]
fn calls_that_do_not_run_are_no_progress_even_when_each_is_new() {
    // The 1.5B's crontab loop: read_file past the end of a file, a new range every time, each
    // refused. No call repeats, so only the refusals can stop it.
    let lines: String = (0..20)
        .map(|i| {
            let start = 1_000 + 10 * i;
            json!({"thought": "read on", "action": "read_file",
                   "parameters": {"path": "notes/overview.md", "start_line": start, "end_line": start + 9}})
            .to_string()
                + "\n"
        })
        .collect();
    let (out, events) = run_script(&lines);
    assert_eq!(
        out.end,
        RunEnd::Cap {
            hit: CapHit::NoProgress {
                limit: MAX_STEPS_WITHOUT_PROGRESS
            }
        }
    );
    assert_eq!(out.figures.steps, MAX_STEPS_WITHOUT_PROGRESS);
    assert_eq!(caps(&events).len(), 1);
}

#[test]
fn a_call_that_runs_resets_the_count_of_calls_that_did_not() {
    // Seven refused reads, one read that runs, seven refused reads: never eight in a row.
    let refused = |i: u32| {
        json!({"thought": "read on", "action": "read_file",
               "parameters": {"path": "notes/overview.md", "start_line": 1_000 + i}})
        .to_string()
    };
    let mut lines: Vec<String> = (0..7).map(refused).collect();
    lines.push(
        json!({"thought": "read", "action": "read_file", "parameters": {"path": "notes/overview.md"}})
            .to_string(),
    );
    lines.extend((7..14).map(refused));
    let (out, events) = run_script(&(lines.join("\n") + "\n"));
    assert!(caps(&events).iter().all(|(name, _)| name != "no_progress"));
    assert!(
        matches!(out.end, RunEnd::ModelFailed { .. }),
        "the script ran out before any cap: {:?}",
        out.end
    );
}

/// desk_task with `script` (JSON lines) as the model, every call allowed.
fn run_script(script: &str) -> (RunOutcome, Vec<AgentEvent>) {
    let mut model =
        ScriptedModel::from_str_named(script, std::path::Path::new("script.jsonl")).unwrap();
    Harness::new("desk_task").run_model(&mut model, &mut AllowAll, |_| {}, None, &mut |_| {})
}
