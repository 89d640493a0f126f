#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red-team of commit 16bff4d's no-progress count: a step whose call did not run (refused,
//! invalid, denied, failed) counts as a step without progress, as a repeat or a refused finish
//! does. The cap fires at exactly MAX_STEPS_WITHOUT_PROGRESS such steps in a row, never
//! earlier; a call that runs resets it; a review hold does not count; a run that progresses
//! is never stopped by it. Every attack is kept, whether it held or not.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, CapHit, Levers, RunEnd, MAX_STEPS_WITHOUT_PROGRESS};
use rein_engine::gate::{AllowAll, ApprovalDecision, ApprovalRequest, Approver, NoApprover};
use rein_engine::policy::Policy;
use rein_models::{Model, ScriptedModel};
use rein_workspace::desk_registry;
use serde_json::json;
use support::{
    caps, finish_line, gold_text, line, read_summary, reads, wrong_total_text, Harness, Ran,
};

const SUMMARY: &str = "out/summary.md";
/// A policy that denies one read-only tool that lists or reads nothing beyond its path.
const DENY_FIND: &str = "[[rule]]\ntool = \"file_info\"\naction = \"deny\"\n";

fn no_progress() -> RunEnd {
    RunEnd::Cap {
        hit: CapHit::NoProgress {
            limit: MAX_STEPS_WITHOUT_PROGRESS,
        },
    }
}

fn no_progress_caps(events: &[AgentEvent]) -> usize {
    caps(events)
        .iter()
        .filter(|(name, _)| name == "no_progress")
        .count()
}

/// The `i`-th call that does not run, cycling through every way not to run: a read of a
/// file that is not there (failed), arguments the schema refuses (invalid), a tool the policy
/// denies (denied), a finish before any deliverable (refused finish), a tool that does not
/// exist (refused), a read past a file's end (refused).
fn not_run(i: u32) -> String {
    match i % 6 {
        0 => line("read_file", json!({"path": format!("notes/none-{i}.md")})),
        1 => line(
            "search_text",
            json!({"pattern": "", "glob": format!("x{i}")}),
        ),
        2 => line("file_info", json!({"path": format!("notes/x{i}.md")})),
        3 => line("finish", json!({"summary": format!("Done {i}.")})),
        4 => line("teleport", json!({"to": i})),
        _ => line(
            "read_file",
            json!({"path": "notes/overview.md", "start_line": 5_000 + i}),
        ),
    }
}

fn not_run_lines(from: u32, n: u32) -> String {
    (from..from + n).map(not_run).collect()
}

fn gated(
    script: &str,
    policy: &str,
    tweak: impl FnOnce(&mut rein_engine::agent::AgentOptions),
) -> Ran {
    let policy = Policy::from_toml_str(policy, "policy.toml", &desk_registry()).unwrap();
    Ran::desk_task(script, &mut AllowAll, policy, tweak)
}

#[test]
fn every_kind_of_call_that_did_not_run_counts_and_the_cap_fires_at_exactly_eight() {
    // One call that runs, then eight that do not, of every kind, through the real gate.
    let script = line("list_dir", json!({})) + &not_run_lines(0, MAX_STEPS_WITHOUT_PROGRESS);
    let r = gated(&script, DENY_FIND, |_| {});
    assert_eq!(r.out.end, no_progress(), "{:?}", r.out.end);
    assert_eq!(r.out.figures.steps, 1 + MAX_STEPS_WITHOUT_PROGRESS);
    assert_eq!(no_progress_caps(&r.events), 1);
}

#[test]
fn seven_calls_that_did_not_run_never_fire_the_cap() {
    let script = line("list_dir", json!({})) + &not_run_lines(0, MAX_STEPS_WITHOUT_PROGRESS - 1);
    let r = gated(&script, DENY_FIND, |_| {});
    assert_eq!(no_progress_caps(&r.events), 0, "{:?}", caps(&r.events));
    assert!(
        matches!(r.out.end, RunEnd::ModelFailed { .. }),
        "the script ran out first: {:?}",
        r.out.end
    );
    // One that ran, seven that did not, and the request that found the script empty.
    assert_eq!(r.out.figures.steps, MAX_STEPS_WITHOUT_PROGRESS + 1);
}

#[test]
fn the_same_failing_call_eight_times_stops_at_step_eight_not_earlier() {
    // The first is new and failed, the rest repeat it: each step counts once, not twice.
    let failing = line("read_file", json!({"path": "notes/none.md"}));
    let script = failing.repeat(MAX_STEPS_WITHOUT_PROGRESS as usize + 4);
    let r = gated(&script, "", |_| {});
    assert_eq!(r.out.end, no_progress());
    assert_eq!(r.out.figures.steps, MAX_STEPS_WITHOUT_PROGRESS);
}

#[test]
fn a_call_that_runs_resets_after_every_kind() {
    // Seven of every kind, a new call that runs, seven more: never eight in a row.
    let script = not_run_lines(0, 7)
        + &line("search_text", json!({"pattern": "Harbor"}))
        + &not_run_lines(7, 7)
        + &line("find_related", json!({"path": "notes/overview.md"}))
        + &not_run_lines(14, 7);
    let r = gated(&script, DENY_FIND, |_| {});
    assert_eq!(no_progress_caps(&r.events), 0, "{:?}", caps(&r.events));
    assert!(
        matches!(r.out.end, RunEnd::ModelFailed { .. }),
        "{:?}",
        r.out.end
    );
}

#[test]
fn a_repeat_that_runs_does_not_reset() {
    // A call repeated from earlier ran, but it is still no progress: seven failures and the
    // repeat are eight in a row.
    let script = line("list_dir", json!({}))
        + &not_run_lines(0, MAX_STEPS_WITHOUT_PROGRESS - 1)
        + &line("list_dir", json!({}))
        + &not_run_lines(100, 4);
    let r = gated(&script, DENY_FIND, |_| {});
    assert_eq!(r.out.end, no_progress(), "{:?}", r.out.end);
    assert_eq!(r.out.figures.steps, 1 + MAX_STEPS_WITHOUT_PROGRESS);
}

#[test]
fn refused_finishes_mixed_with_failures_fire_at_eight() {
    let mut script = String::new();
    for i in 0..4 {
        script += &line("finish", json!({"summary": format!("Finished {i}.")}));
        script += &line("read_file", json!({"path": format!("data/none-{i}.csv")}));
    }
    script += &not_run_lines(200, 4);
    let r = gated(&script, "", |_| {});
    assert_eq!(r.out.end, no_progress(), "{:?}", r.out.end);
    assert_eq!(r.out.figures.steps, MAX_STEPS_WITHOUT_PROGRESS);
}

#[test]
fn format_errors_neither_count_nor_reset() {
    // A reply that is no action is not a call that did not run: the count passes over it.
    let garbage = json!("I am not sure what to do next.").to_string() + "\n";
    let script = not_run_lines(0, 7) + &garbage + &garbage + &not_run_lines(7, 1);
    let r = gated(&script, DENY_FIND, |_| {});
    assert_eq!(r.out.end, no_progress(), "{:?}", r.out.end);
    assert_eq!(r.out.figures.steps, MAX_STEPS_WITHOUT_PROGRESS + 2);
}

#[test]
fn at_the_last_turn_the_turn_cap_is_the_one_reported() {
    let script = not_run_lines(0, 12);
    let r = gated(&script, DENY_FIND, |o| {
        o.limits.max_turns = MAX_STEPS_WITHOUT_PROGRESS
    });
    assert_eq!(
        r.out.end,
        RunEnd::Cap {
            hit: CapHit::Turns {
                limit: MAX_STEPS_WITHOUT_PROGRESS
            }
        }
    );
    assert_eq!(caps(&r.events).len(), 1, "{:?}", caps(&r.events));
    let r = gated(&script, DENY_FIND, |o| {
        o.limits.max_turns = MAX_STEPS_WITHOUT_PROGRESS + 1
    });
    assert_eq!(r.out.end, no_progress());
    assert_eq!(caps(&r.events).len(), 1, "{:?}", caps(&r.events));
}

#[test]
fn a_progressing_run_with_failures_in_between_passes() {
    // Reads, six failures, the report, six failures, the read back, six failures, finish.
    let script = reads()
        + &not_run_lines(0, 6)
        + &line(
            "create_file",
            json!({"path": SUMMARY, "content": gold_text()}),
        )
        + &not_run_lines(6, 6).replace("\"action\":\"finish\"", "\"action\":\"list_dir\"")
        + &read_summary()
        + &not_run_lines(12, 5)
        + &finish_line();
    let r = gated(&script, DENY_FIND, |o| o.limits.attempts = 1);
    assert_eq!(no_progress_caps(&r.events), 0, "{:?}", caps(&r.events));
    assert!(r.out.passed(), "{:?} {}", r.out.end, r.out.reason());
}

#[test]
fn a_new_attempt_starts_the_count_again() {
    // Attempt 1: a wrong report, seven failures, an accepted finish the judge fails.
    // Attempt 2: seven failures, the right report, read back, finish. No cap.
    let script = reads()
        + &line(
            "create_file",
            json!({"path": SUMMARY, "content": wrong_total_text()}),
        )
        + &read_summary()
        + &not_run_lines(1, 2)
        + &not_run_lines(4, 2)
        + &not_run_lines(7, 2)
        + &line("read_file", json!({"path": "nothing-1.md"}))
        + &finish_line()
        + &not_run_lines(12, 2)
        + &not_run_lines(16, 2)
        + &not_run_lines(19, 2)
        + &line("read_file", json!({"path": "nothing-2.md"}))
        + &line(
            "replace_file",
            json!({"path": SUMMARY, "content": gold_text()}),
        )
        + &line("read_file", json!({"path": SUMMARY, "start_line": 1}))
        + &line("finish", json!({"summary": "Wrote the summary again."}));
    for monotone in [false, true] {
        let r = gated(&script, DENY_FIND, |o| {
            o.limits.attempts = 2;
            o.levers = Levers {
                monotone_attempts: monotone,
                ..o.levers
            };
        });
        assert_eq!(
            no_progress_caps(&r.events),
            0,
            "monotone {monotone}: {:?}",
            caps(&r.events)
        );
        assert!(
            r.out.passed(),
            "monotone {monotone}: {:?} {}",
            r.out.end,
            r.out.reason()
        );
        assert_eq!(r.out.figures.attempts, 2);
    }
}

#[test]
fn a_review_hold_after_seven_failures_does_not_fire_the_cap() {
    // edit-gitignore with review-edits: an edit, seven failures, a finish held for review
    // (no step without progress), then the finish that is judged.
    let file = "project/gitignore.txt";
    let script = line("read_file", json!({"path": "project/README.md"}))
        + &line("read_file", json!({"path": file}))
        + &line(
            "edit_file",
            json!({"path": file, "old_text": ".vscode/\n", "new_text": ".vscode/\n*.swp\n"}),
        )
        // Read back with other arguments than the first read, so it is no repeat.
        + &line("read_file", json!({"path": file, "start_line": 1}))
        + &(0..7)
            .map(|i| line("read_file", json!({"path": format!("project/none-{i}")})))
            .collect::<String>()
        + &finish_line()
        + &finish_line();
    let h = Harness::desk_suite("edit-gitignore");
    let r = Ran::of(h, &script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = Levers {
            review_edits: true,
            ..Levers::DEFAULT
        };
        o.limits.attempts = 1;
    });
    let held = support::journal_events(&r.h.journal, r.out.run, "edit_review");
    assert_eq!(held.len(), 1, "the finish was held: {held:?}");
    assert_eq!(no_progress_caps(&r.events), 0, "{:?}", caps(&r.events));
    assert!(
        r.out.verdict.is_some(),
        "the second finish was judged: {:?}",
        r.out.end
    );
}

#[test]
fn a_missing_approver_ends_the_run_as_approval_unavailable_not_no_progress() {
    // Seven failures, then a change nobody can approve: the run ends for the approval, the
    // eighth step without a run is not reported as no progress.
    let script = reads()
        + &not_run_lines(0, 7)
        + &line(
            "create_file",
            json!({"path": SUMMARY, "content": gold_text()}),
        );
    let h = Harness::new("desk_task");
    let mut model =
        ScriptedModel::from_str_named(&script, std::path::Path::new("approve.jsonl")).unwrap();
    let (out, events) = h.run_model(&mut model, &mut NoApprover, |_| {}, None, &mut |_| {});
    assert!(
        matches!(out.end, RunEnd::ApprovalUnavailable { .. }),
        "{:?}",
        out.end
    );
    assert_eq!(no_progress_caps(&events), 0, "{:?}", caps(&events));
}

/// A person who says no to every change.
struct SaysNo;

impl Approver for SaysNo {
    fn decide(&mut self, _request: &ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::Deny {
            reason: "not like that".into(),
        }
    }
}

#[test]
fn changes_a_person_refuses_count_as_no_progress_at_eight() {
    // A person rejecting eight different changes in a row: none ran. The run stops at the
    // eighth, not earlier, and the message says why.
    let script: String = reads()
        + &(0..12)
            .map(|i| {
                line(
                    "create_file",
                    json!({"path": SUMMARY, "content": format!("# Project summary\ntry {i}\n")}),
                )
            })
            .collect::<String>();
    let h = Harness::new("desk_task");
    let mut model =
        ScriptedModel::from_str_named(&script, std::path::Path::new("refused.jsonl")).unwrap();
    let (out, events) = h.run_model(&mut model, &mut SaysNo, |_| {}, None, &mut |_| {});
    assert_eq!(out.end, no_progress(), "{:?}", out.end);
    assert_eq!(out.figures.steps, 3 + MAX_STEPS_WITHOUT_PROGRESS);
    let (_, message) = caps(&events).into_iter().next().unwrap();
    assert!(message.contains("a call that did not run"), "{message}");
}

#[test]
fn a_budget_that_runs_out_is_reported_truthfully() {
    // When the gate's budget of executed calls is used up every later call is
    // budget-exhausted; the run then stops after eight of them, as no progress.
    let script = reads()
        + &not_run_lines(0, 2)
        + &line("list_dir", json!({}))
        + &(0..12)
            .map(|i| line("search_text", json!({"pattern": format!("w{i}")})))
            .collect::<String>();
    let h = Harness::new("desk_task");
    let registry = desk_registry();
    let ws = rein_workspace::Workspace::open(&h.workspace).unwrap();
    let run = rein_engine::agent::begin_mission_run(
        &h.journal,
        &h.contract,
        &ws.display_root(),
        ScriptedModel::from_str_named(&script, std::path::Path::new("budget.jsonl"))
            .unwrap()
            .identity(),
        json!({}),
    )
    .unwrap();
    let mut gate = rein_engine::gate::Gate::new(rein_engine::gate::GateConfig {
        registry: &registry,
        target: rein_engine::gate::GateTarget::Desk(&ws),
        journal: &h.journal,
        scope: rein_journal::CallScope::Run(run),
        policy: Policy::safe_default(),
        budget: Some(4),
    });
    let world = rein_engine::agent::WorkspaceWorld::new(&ws);
    let env = rein_engine::agent::RunEnv {
        contract: &h.contract,
        mission_file: &h.mission_file,
        world: &world,
        registry: &registry,
        input_hashes: &h.hashes,
        journal: &h.journal,
        run,
        workspace_label: ws.display_root(),
    };
    let mut model =
        ScriptedModel::from_str_named(&script, std::path::Path::new("budget.jsonl")).unwrap();
    let options = rein_engine::agent::AgentOptions::for_mission(&h.contract, model.identity());
    let mut events = Vec::new();
    let out = rein_engine::agent::Agent::new(env, &mut model, &mut gate, &mut AllowAll)
        .with_options(options)
        .run(&mut |e| events.push(e.clone()))
        .unwrap();
    assert_eq!(out.end, no_progress(), "{:?}", out.end);
    let (_, message) = caps(&events).into_iter().next().unwrap();
    assert!(message.contains("a call that did not run"), "{message}");
}
