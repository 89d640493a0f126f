#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Verified sampling through the real execution gate and journal: at the write of the
//! deliverable, K candidates are drawn (a scripted model replays them in order), each is judged
//! on a scratch view, the best is proposed as the one change a person sees; the losers write
//! nothing, leave no change in the journal and never reach the model's transcript. Pass@1 (the
//! first draw) and best-of-K (the proposed draw) are reported apart.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, RunOutcome};
use rein_engine::gate::AllowAll;
use rein_models::{Model, ScriptedModel};
use rein_workspace::Workspace;
use serde_json::{json, Value};
use support::{fixture, sampled, sampling_events, Harness, PromptRecorder};

const SUMMARY: &str = "out/summary.md";

fn line(action: &str, parameters: Value) -> String {
    json!({"thought": "Next.", "action": action, "parameters": parameters}).to_string() + "\n"
}

fn gold() -> String {
    std::fs::read_to_string(fixture("report.md")).unwrap()
}

fn reads() -> String {
    [
        "notes/overview.md",
        "notes/meeting-notes.md",
        "data/tasks.csv",
    ]
    .iter()
    .map(|p| line("read_file", json!({"path": p})))
    .collect()
}

fn create(content: &str) -> String {
    line("create_file", json!({"path": SUMMARY, "content": content}))
}

fn read_back_and_finish() -> String {
    line("read_file", json!({"path": SUMMARY})) + &line("finish", json!({"summary": "done"}))
}

fn run(h: &Harness, script: &str, samples: u32) -> (RunOutcome, Vec<AgentEvent>, Vec<String>) {
    let mut model = PromptRecorder::new(script, "sampling.jsonl");
    let (outcome, events) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.samples = samples;
        o.limits.attempts = 1;
    });
    (outcome, events, model.prompts())
}

fn on_disk(h: &Harness, path: &str) -> Option<String> {
    std::fs::read_to_string(h.workspace.join(path)).ok()
}

fn changes(h: &Harness) -> Vec<String> {
    let ws = Workspace::open(&h.workspace).unwrap();
    h.journal
        .changes(&ws.display_root())
        .unwrap()
        .iter()
        .map(|c| c.path.clone())
        .collect()
}

#[test]
fn the_passing_candidate_is_proposed_and_the_losers_leave_no_trace() {
    let h = Harness::new("desk_task");
    let wrong_total = gold().replace("Total hours: 64", "Total hours: 72");
    let placeholder = "# Summary\n\nfill-me-in later\n";
    let script = reads()
        + &create(&wrong_total)
        + &create(placeholder)
        + &create(&gold())
        + &read_back_and_finish();
    let (out, events, prompts) = run(&h, &script, 3);

    assert!(out.passed(), "{}", out.reason());
    assert_eq!(on_disk(&h, SUMMARY).unwrap(), gold());
    let s = sampled(&events);
    assert_eq!(s.len(), 1, "one write of the deliverable was sampled");
    let (candidates, chosen) = &s[0];
    assert_eq!(candidates.len(), 3);
    assert_eq!(*chosen, 2, "{candidates:?}");
    assert!(!candidates[0].passed && !candidates[0].clean);
    assert_eq!(candidates[0].failed, vec!["total-hours"]);
    assert!(candidates[1].passed_checks < candidates[0].passed_checks);
    assert!(candidates[2].passed && candidates[2].clean);
    assert!(candidates[1].temperature > candidates[0].temperature);
    assert_ne!(candidates[1].seed, candidates[2].seed);
    assert_eq!(out.figures.sample_draws, 3);

    // Pass@1 and best-of-K apart, in the figures and the verdict document.
    let f = &out.figures;
    assert_eq!(f.samples, 3);
    assert_eq!(f.sampled_writes, 1);
    assert_eq!(f.first_draw_passed, Some(false));
    assert_eq!(f.chosen_draw_passed, Some(true));
    let doc = out.document();
    assert_eq!(doc["figures"]["first_draw_passed"], false);
    assert_eq!(doc["figures"]["chosen_draw_passed"], true);

    // One change in the journal: the proposed one. The losers wrote nothing.
    assert_eq!(changes(&h), vec![SUMMARY.to_string()]);
    // The model never saw a losing candidate (nor its score): only the proposed reply.
    let after = prompts.last().unwrap();
    let at = after.find("Total hours: 72");
    assert!(
        at.is_none(),
        "a loser reached the model: {}",
        &after[at.unwrap_or(0).saturating_sub(600)..(at.unwrap_or(0) + 200).min(after.len())]
    );
    assert!(!after.contains("fill-me-in"), "a loser reached the model");
    assert!(!after.contains("total-hours"), "a score reached the model");

    // The journal keeps every candidate and which was proposed.
    let ev = sampling_events(&h.journal, out.run);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0]["chosen"], 2);
    assert_eq!(ev[0]["candidates"].as_array().unwrap().len(), 3);
}

#[test]
fn on_a_tie_the_first_draw_stands() {
    let h = Harness::new("desk_task");
    let a = gold().replace("Total hours: 64", "Total hours: 60");
    let b = gold().replace("Total hours: 64", "Total hours: 61");
    let script = reads() + &create(&a) + &create(&b) + &read_back_and_finish();
    let (out, events, _) = run(&h, &script, 2);
    assert!(!out.passed());
    assert_eq!(on_disk(&h, SUMMARY).unwrap(), a, "the ordinary draw stands");
    assert_eq!(sampled(&events)[0].1, 0);
    assert_eq!(out.figures.first_draw_passed, Some(false));
    assert_eq!(out.figures.chosen_draw_passed, Some(false));
}

#[test]
fn a_candidate_that_writes_elsewhere_or_cannot_apply_is_not_judged_and_writes_nothing() {
    let h = Harness::new("desk_task");
    let wrong_total = gold().replace("Total hours: 64", "Total hours: 72");
    let script = reads()
        + &create(&wrong_total)
        // Another file: not the deliverable, never judged, never written.
        + &line("create_file", json!({"path": "out/other.md", "content": gold()}))
        // An edit whose old text is not in the (absent) file: its change cannot be computed.
        + &line(
            "edit_file",
            json!({"path": SUMMARY, "old_text": "nothing like this", "new_text": "x"}),
        )
        // Not an action at all.
        + &(json!("not an action").to_string() + "\n")
        + &read_back_and_finish();
    let (out, events, _) = run(&h, &script, 4);
    let (candidates, chosen) = &sampled(&events)[0];
    assert_eq!(*chosen, 0, "{candidates:?}");
    assert!(candidates[0].skipped.is_none());
    for c in &candidates[1..] {
        assert!(c.skipped.is_some(), "{c:?}");
        assert_eq!(c.passed_checks, 0);
    }
    assert!(candidates[1]
        .skipped
        .as_deref()
        .unwrap()
        .contains("deliverable"));
    assert_eq!(on_disk(&h, "out/other.md"), None);
    assert_eq!(on_disk(&h, SUMMARY).unwrap(), wrong_total);
    assert_eq!(changes(&h), vec![SUMMARY.to_string()]);
    assert!(!out.passed());
}

#[test]
fn without_samples_nothing_is_drawn_twice() {
    let h = Harness::new("desk_task");
    let script = reads() + &create(&gold()) + &read_back_and_finish();
    let (out, events, prompts) = run(&h, &script, 1);
    assert!(out.passed(), "{}", out.reason());
    assert!(sampled(&events).is_empty());
    assert_eq!(out.figures.samples, 1);
    assert_eq!(out.figures.sampled_writes, 0);
    assert_eq!(out.figures.first_draw_passed, None);
    // Three reads, the write, the read back, finish: one request each.
    assert_eq!(prompts.len(), 6);
}

#[test]
fn reads_are_not_sampled_and_a_later_write_is_sampled_again() {
    let h = Harness::new("desk_task");
    let wrong_total = gold().replace("Total hours: 64", "Total hours: 72");
    let fix = line(
        "edit_file",
        json!({"path": SUMMARY, "old_text": "Total hours: 72", "new_text": "Total hours: 64"}),
    );
    let bad_fix = line(
        "edit_file",
        json!({"path": SUMMARY, "old_text": "Total hours: 72", "new_text": "Total hours: 70"}),
    );
    let script = reads()
        + &create(&wrong_total)
        + &create(&wrong_total)
        + &bad_fix
        + &fix
        + &read_back_and_finish();
    let (out, events, _) = run(&h, &script, 2);
    let s = sampled(&events);
    assert_eq!(s.len(), 2, "both writes of the deliverable were sampled");
    assert_eq!(s[1].1, 1, "the edit that fixes the total is proposed");
    assert!(out.passed(), "{}", out.reason());
    assert_eq!(out.figures.sampled_writes, 2);
    assert_eq!(out.figures.first_draw_passed, Some(false));
    assert_eq!(out.figures.chosen_draw_passed, Some(true));
}

#[test]
fn a_mission_can_ask_for_samples_and_a_bad_count_is_refused() {
    let h = Harness::with_edit("desk_task", |m| {
        m["budgets"]["samples"] = json!(3);
    });
    let o = rein_engine::agent::AgentOptions::for_mission(
        &h.contract,
        ScriptedModel::from_str_named("", std::path::Path::new("x.jsonl"))
            .unwrap()
            .identity(),
    );
    assert_eq!(o.samples, 3);

    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(&h.mission_file).unwrap()).unwrap();
    for k in [0, 9] {
        v["budgets"]["samples"] = json!(k);
        std::fs::write(&h.mission_file, v.to_string()).unwrap();
        let err = rein_engine::mission::Mission::load(&h.mission_file)
            .unwrap_err()
            .to_string();
        assert!(err.contains("budgets.samples"), "{err}");
    }
}

/// Drawing stops at the first clean candidate: what follows in the script is the next step,
/// not another draw. A first draw that the tool would refuse (not judged) is no reason to stop.
#[test]
fn drawing_stops_at_the_first_clean_candidate() {
    let h = Harness::new("desk_task");
    let no_headings = "Harbor Library\n\nfill-me-in\n";
    let refused = line("create_file", json!({"path": SUMMARY}));
    let script =
        reads() + &refused + &create(no_headings) + &create(&gold()) + &read_back_and_finish();
    let (out, events, _) = run(&h, &script, 8);
    assert!(out.passed(), "{}", out.reason());
    let (candidates, chosen) = &sampled(&events)[0];
    assert_eq!(candidates.len(), 3, "{candidates:?}");
    assert!(candidates[0].skipped.is_some(), "{candidates:?}");
    assert!(!candidates[1].clean && candidates[2].clean);
    assert_eq!(*chosen, 2);
    assert_eq!(out.figures.sample_draws, 3);
    let ev = &sampling_events(&h.journal, out.run)[0];
    assert_eq!(ev["drawn"], 3, "{ev}");
    assert_eq!(ev["samples"], 8, "{ev}");

    // A clean first draw is the only draw.
    let h = Harness::new("desk_task");
    let script = reads() + &create(&gold()) + &read_back_and_finish();
    let (out, events, _) = run(&h, &script, 8);
    assert!(out.passed(), "{}", out.reason());
    let (candidates, chosen) = &sampled(&events)[0];
    assert_eq!((candidates.len(), *chosen), (1, 0), "{candidates:?}");
    assert_eq!(out.figures.first_draw_passed, Some(true));
}

#[test]
fn a_model_that_fails_mid_sampling_leaves_the_drawn_candidates_to_compete() {
    let h = Harness::new("desk_task");
    let wrong_total = gold().replace("Total hours: 64", "Total hours: 72");
    // Two replies where four candidates were asked for, and nothing after them.
    let script = reads() + &create("# Summary\n\nfill-me-in later\n") + &create(&wrong_total);
    let (out, events, _) = run(&h, &script, 4);
    let (candidates, chosen) = &sampled(&events)[0];
    assert_eq!(candidates.len(), 2, "{candidates:?}");
    assert_eq!(*chosen, 1);
    assert_eq!(
        on_disk(&h, SUMMARY).unwrap(),
        wrong_total,
        "the proposed one went through the gate"
    );
    assert!(
        !out.passed(),
        "a run whose model then fails is no pass: {}",
        out.reason()
    );
    let ev = &sampling_events(&h.journal, out.run)[0];
    assert!(ev["model_failure"].is_string(), "{ev}");
}

#[test]
fn a_candidate_that_passes_on_its_scratch_view_but_is_denied_is_no_pass() {
    let h = Harness::new("desk_task");
    let wrong_total = gold().replace("Total hours: 64", "Total hours: 72");
    let script = reads() + &create(&wrong_total) + &create(&gold()) + &read_back_and_finish();
    let mut model =
        ScriptedModel::from_str_named(&script, std::path::Path::new("deny.jsonl")).unwrap();
    let (out, events) = h.run_gated(&mut model, &mut rein_engine::gate::DenyAll, |o| {
        o.samples = 2;
        o.limits.attempts = 1;
    });
    assert_eq!(sampled(&events)[0].1, 1);
    assert_eq!(out.figures.chosen_draw_passed, Some(true));
    assert!(!out.passed(), "the person said no: {}", out.reason());
    assert_eq!(on_disk(&h, SUMMARY), None, "nothing was written");
    assert!(changes(&h).is_empty());
}

// ---------------------------------------------------------------------------------------------
// Red team: hostile candidates and hostile circumstances around verified sampling.

use rein_engine::gate::{ApprovalDecision, ApprovalRequest, Approver};
use rein_journal::CallScope;

fn line_to(action: &str, path: &str, content: &str) -> String {
    line(action, json!({"path": path, "content": content}))
}

/// No gate record exists for any draw's preview id: a candidate is never a call.
fn assert_no_draw_was_a_call(h: &Harness, out: &RunOutcome) {
    for n in 1..=20 {
        for d in 1..=8 {
            let id = format!("run{}-step{n}-draw{d}", out.run);
            assert!(
                h.journal
                    .find_tool_call(&CallScope::Run(out.run), &id)
                    .unwrap()
                    .is_none(),
                "a preview left a gate record: {id}"
            );
        }
    }
}

#[test]
fn odd_spellings_of_the_deliverable_are_judged_as_it_and_other_names_are_not() {
    let h = Harness::new("desk_task");
    let wrong_total = gold().replace("Total hours: 64", "Total hours: 72");
    let script = reads()
        + &line_to("create_file", "./out//summary.md", &wrong_total)
        // Another file on a case-sensitive file system: never judged, never written.
        + &line_to("create_file", "OUT/Summary.md", &gold())
        // A traversal that lands on the deliverable: refused, never judged.
        + &line_to("create_file", "out/../out/summary.md", &gold())
        + &line_to("create_file", "../ws/out/summary.md", &gold())
        + &line_to("create_file", "./out//summary.md", &gold())
        + &read_back_and_finish();
    let (out, events, _) = run(&h, &script, 5);
    let (candidates, chosen) = &sampled(&events)[0];
    assert_eq!(*chosen, 4, "{candidates:?}");
    for c in &candidates[1..4] {
        assert!(c.skipped.is_some(), "{c:?}");
    }
    assert!(candidates[4].passed, "{candidates:?}");
    // The scratch view and the real judge agree on the odd spelling.
    assert!(out.passed(), "{}", out.reason());
    assert_eq!(on_disk(&h, SUMMARY).unwrap(), gold());
    assert!(!h.workspace.join("OUT").exists());
    assert!(
        !h.dir.path().join("out").exists(),
        "written outside the workspace"
    );
    assert_eq!(changes(&h), vec![SUMMARY.to_string()]);
    assert_no_draw_was_a_call(&h, &out);
}

#[cfg(unix)]
#[test]
fn a_symlinked_output_folder_is_never_written_through_nor_judged() {
    let h = Harness::new("desk_task");
    let elsewhere = h.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, h.workspace.join("out")).unwrap();
    let wrong_total = gold().replace("Total hours: 64", "Total hours: 72");
    let script = reads() + &create(&wrong_total) + &create(&gold()) + &read_back_and_finish();
    let (out, events, _) = run(&h, &script, 2);
    let (candidates, _) = &sampled(&events)[0];
    for c in candidates {
        assert!(
            c.skipped.is_some(),
            "a candidate was judged through a link: {c:?}"
        );
        assert!(!c.passed);
    }
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert!(changes(&h).is_empty());
    assert!(!out.passed());
    assert_eq!(out.figures.chosen_draw_passed, None, "nothing was judged");
}

#[test]
fn a_deletion_candidate_is_judged_as_the_file_gone_and_loses() {
    let h = Harness::new("desk_task");
    let wrong_total = gold().replace("Total hours: 64", "Total hours: 72");
    let fix = line(
        "edit_file",
        json!({"path": SUMMARY, "old_text": "Total hours: 72", "new_text": "Total hours: 64"}),
    );
    let script = reads()
        + &create(&wrong_total)
        + &create(&wrong_total)
        + &line("delete_file", json!({"path": "./out/summary.md"}))
        + &fix
        + &read_back_and_finish();
    let (out, events, _) = run(&h, &script, 2);
    let s = sampled(&events);
    assert_eq!(s.len(), 2);
    let (candidates, chosen) = &s[1];
    assert_eq!(*chosen, 1, "{candidates:?}");
    assert!(candidates[0].skipped.is_none(), "{candidates:?}");
    assert!(
        candidates[0].failed.contains(&"summary-exists".to_string()),
        "{candidates:?}"
    );
    assert!(out.passed(), "{}", out.reason());
    assert_eq!(on_disk(&h, SUMMARY).unwrap(), gold());
    assert_no_draw_was_a_call(&h, &out);
}

/// Denies everything and keeps what it was asked.
struct Refuser(Vec<ApprovalRequest>);

impl Approver for Refuser {
    fn decide(&mut self, request: &ApprovalRequest) -> ApprovalDecision {
        self.0.push(request.clone());
        ApprovalDecision::Deny {
            reason: "no".into(),
        }
    }
}

#[test]
fn the_person_is_asked_once_and_only_about_the_proposed_draw() {
    let h = Harness::new("desk_task");
    let wrong_total = gold().replace("Total hours: 64", "Total hours: 72");
    let placeholder = "# Summary\n\nfill-me-in later\n";
    let script = reads()
        + &create(&wrong_total)
        + &create(&gold())
        + &create(placeholder)
        + &read_back_and_finish();
    let mut model =
        ScriptedModel::from_str_named(&script, std::path::Path::new("r.jsonl")).unwrap();
    let mut person = Refuser(Vec::new());
    let (out, events) = h.run_gated(&mut model, &mut person, |o| {
        o.samples = 3;
        o.limits.attempts = 1;
    });
    assert_eq!(sampled(&events)[0].1, 1);
    assert_eq!(person.0.len(), 1, "asked about more than one draw");
    let asked = &person.0[0];
    assert_eq!(
        asked.after_sha256.as_deref(),
        Some(rein_engine::mission::sha256_hex(gold().as_bytes()).as_str())
    );
    assert!(!asked.diff.contains("Total hours: 72"));
    assert!(!asked.diff.contains("fill-me-in"));
    assert!(!out.passed(), "denied is no pass: {}", out.reason());
    assert_eq!(on_disk(&h, SUMMARY), None);
    assert!(changes(&h).is_empty());
    assert_no_draw_was_a_call(&h, &out);
}

#[test]
fn sampling_stops_drawing_when_the_run_time_is_up() {
    let h = Harness::new("desk_task");
    let wrong_total = gold().replace("Total hours: 64", "Total hours: 72");
    let mut script = reads();
    for _ in 0..8 {
        script += &create(&wrong_total);
    }
    script += &read_back_and_finish();
    let mut model = PromptRecorder::new(&script, "slow.jsonl");
    // One second per reading of the clock: the reads take 0, 1 and 2 s, the write starts at
    // 3 s, and the run may last 6 s; eight draws must not all be made.
    let (out, events) = h.run_model(
        &mut model,
        &mut AllowAll,
        |o| {
            o.samples = 8;
            o.limits.attempts = 1;
            o.limits.timeout = std::time::Duration::from_secs(6);
        },
        Some(support::FakeClock::ticking()),
        &mut |_| {},
    );
    let (candidates, _) = &sampled(&events)[0];
    assert!(
        candidates.len() < 8,
        "all {} draws were made past the run timeout",
        candidates.len()
    );
    let caps = support::caps(&events);
    assert!(
        caps.iter().any(|(c, _)| c == "run_timeout"),
        "the timeout was not reported: {caps:?}"
    );
    assert!(!out.passed());
    let ev = &sampling_events(&h.journal, out.run)[0];
    assert!(
        ev["stopped"]
            .as_str()
            .is_some_and(|s| s.contains("timeout")),
        "the sampling event does not say why it drew fewer: {ev}"
    );
}

#[test]
fn when_no_candidate_could_be_judged_no_scratch_verdict_is_reported() {
    // Reading out/ asks the person: no preview shows that content, so no draw is judged; the
    // first draw goes to the gate as without sampling, and the person allows it.
    let h = Harness::new("desk_task");
    let policy = rein_engine::policy::Policy::from_toml_str(
        "[[rule]]\ntool = \"read_file\"\npaths = [\"out/**\"]\naction = \"ask\"\n",
        "test policy",
        &rein_workspace::desk_registry(),
    )
    .unwrap();
    let wrong_total = gold().replace("Total hours: 64", "Total hours: 72");
    let script = reads() + &create(&gold()) + &create(&wrong_total) + &read_back_and_finish();
    let mut model =
        ScriptedModel::from_str_named(&script, std::path::Path::new("p.jsonl")).unwrap();
    let (out, events) = h.run_gated_with_policy(&mut model, &mut AllowAll, policy, |o| {
        o.samples = 2;
        o.limits.attempts = 1;
    });
    let (candidates, chosen) = &sampled(&events)[0];
    assert_eq!(*chosen, 0);
    assert!(
        candidates.iter().all(|c| c.skipped.is_some()),
        "{candidates:?}"
    );
    assert!(out.passed(), "{}", out.reason());
    assert_eq!(on_disk(&h, SUMMARY).unwrap(), gold());
    // Nothing was judged, so there is no pass@1 or best-of-K estimate to report: a
    // "first draw failed" here would be a claim nobody checked (the run passed).
    assert_eq!(out.figures.first_draw_passed, None);
    assert_eq!(out.figures.chosen_draw_passed, None);
}

#[test]
fn a_candidate_the_step_would_refuse_for_its_size_is_not_judged_and_cannot_win() {
    // The gold report padded past the input cap would pass every check on a scratch view, but
    // the step refuses a parameter over 32,000 characters: it must not beat the ordinary draw.
    let h = Harness::new("desk_task");
    let wrong_total = gold().replace("Total hours: 64", "Total hours: 72");
    let padded = gold() + &" ".repeat(rein_engine::agent::MAX_INPUT_CHARS);
    let script = reads() + &create(&wrong_total) + &create(&padded) + &read_back_and_finish();
    let (out, events, _) = run(&h, &script, 2);
    let (candidates, chosen) = &sampled(&events)[0];
    assert_eq!(*chosen, 0, "{candidates:?}");
    assert!(candidates[1].skipped.is_some(), "{candidates:?}");
    assert_eq!(on_disk(&h, SUMMARY).unwrap(), wrong_total);
    assert!(!out.passed());
}
