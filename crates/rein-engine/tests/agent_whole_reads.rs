#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Lever `whole-reads`: a `read_file` call for a line range of a short file reads the whole
//! file and says so; the judge counts the file read whole because the model was shown it whole.
//! A long file keeps its ranges, and a policy that denies the read still denies it.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::RunOutcome;
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::{json, Value};
use support::{
    check_facts, copy_dir, finish_line, gold_text, line, missions_dir, read_summary, write_summary,
    Harness, Ran,
};

const NOTES: &str = "notes/meeting-notes.md";

/// desk_task's reads with the meeting notes asked for as `notes` (a `read_file` call's
/// parameters), then the gold report written, read back and finished.
fn script(notes: Value) -> String {
    line("read_file", json!({"path": "notes/overview.md"}))
        + &line("read_file", notes)
        + &line("read_file", json!({"path": "data/tasks.csv"}))
        + &write_summary(&gold_text())
        + &read_summary()
        + &finish_line()
}

fn run(h: Harness, script: &str, whole_reads: bool, policy: Policy) -> Ran {
    Ran::of(h, script, &mut AllowAll, policy, |o| {
        o.levers.whole_reads = whole_reads;
        o.limits.attempts = 1;
    })
}

/// The gate call of the run's second step as the journal keeps it.
fn second_step_detail(r: &Ran, out: &RunOutcome) -> String {
    let trace = r.h.journal.run_trace(out.run).unwrap();
    trace.steps[1].step.detail.to_string()
}

#[test]
fn a_line_of_a_short_input_is_read_whole_and_counts_as_read_only_with_the_lever() {
    let one_line = json!({"path": NOTES, "start_line": 7, "end_line": 7});
    let on = run(
        Harness::new("desk_task"),
        &script(one_line.clone()),
        true,
        Policy::safe_default(),
    );
    assert!(on.out.passed(), "{}", on.out.reason());
    let shown = on.shown_result(2, 2, "read_file");
    assert!(
        shown.contains("Present: Maya, Jonas, Priya, Tom."),
        "{shown}"
    );
    assert!(shown.contains("Next meeting: 26 May."), "{shown}");
    assert!(
        shown.contains(&format!(
            "Rein read all 10 lines of {NOTES}, not only line 7"
        )),
        "{shown}"
    );
    // The journal keeps the model's call and the one that ran.
    let detail = second_step_detail(&on, &on.out);
    assert!(detail.contains("\"start_line\":7"), "{detail}");
    assert!(
        detail.contains(r#"\"start_line\":1,\"end_line\":10"#),
        "{detail}"
    );

    let off = run(
        Harness::new("desk_task"),
        &script(one_line),
        false,
        Policy::safe_default(),
    );
    let (passed, facts) = check_facts(&off.out, "inputs-read");
    assert!(!passed, "{facts}");
    assert!(
        facts.contains(&format!("{NOTES}: read only in part")),
        "{facts}"
    );
    let shown = off.shown_result(2, 2, "read_file");
    assert!(!shown.contains("Present: Maya"), "{shown}");
    assert!(!shown.contains("Rein read all"), "{shown}");
}

#[test]
fn a_range_past_the_end_of_a_short_file_shows_it_whole_instead_of_a_refusal() {
    let past = json!({"path": NOTES, "start_line": 20, "end_line": 26});
    let on = run(
        Harness::new("desk_task"),
        &script(past.clone()),
        true,
        Policy::safe_default(),
    );
    assert!(on.out.passed(), "{}", on.out.reason());
    let shown = on.shown_result(2, 2, "read_file");
    assert!(shown.contains("not only lines 20 to 26"), "{shown}");
    assert!(shown.contains("the main risk"), "{shown}");

    let off = run(
        Harness::new("desk_task"),
        &script(past),
        false,
        Policy::safe_default(),
    );
    let prompt = off.model.prompt(2);
    assert!(prompt.contains("has only 10 lines"), "{prompt}");
    assert!(!off.out.passed());
}

#[test]
fn a_long_input_keeps_the_range_it_was_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let mdir = dir.path().join("mission");
    copy_dir(&missions_dir().join("desk_task"), &mdir);
    let notes = mdir.join("fixtures").join(NOTES);
    let mut text = std::fs::read_to_string(&notes).unwrap();
    for i in 1..=120 {
        text.push_str(&format!("- Action item {i:03}: follow up next week.\n"));
    }
    assert!(text.len() > 4_000);
    std::fs::write(&notes, text).unwrap();
    let h = Harness::load(dir, mdir.join("mission.json"));
    let r = run(
        h,
        &script(json!({"path": NOTES, "start_line": 1, "end_line": 3})),
        true,
        Policy::safe_default(),
    );
    let shown = r.shown_result(2, 2, "read_file");
    assert!(shown.contains("Present: Maya"), "{shown}");
    assert!(!shown.contains("the main risk"), "{shown}");
    assert!(!shown.contains("Rein read all"), "{shown}");
    let (passed, _) = check_facts(&r.out, "inputs-read");
    assert!(!passed);
}

#[test]
fn a_read_the_policy_denies_stays_denied_and_shows_nothing() {
    let policy = Policy::from_toml_str(
        "[[rule]]\ntool = \"read_file\"\npaths = [\"notes/meeting-notes.md\"]\naction = \"deny\"\n",
        "test policy",
        &rein_workspace::desk_registry(),
    )
    .unwrap();
    let r = run(
        Harness::new("desk_task"),
        &script(json!({"path": NOTES, "start_line": 2, "end_line": 3})),
        true,
        policy,
    );
    let prompt = r.model.prompt(2);
    assert!(!prompt.contains("has not yet delivered"), "{prompt}");
    assert!(!prompt.contains("Rein read all"), "{prompt}");
    assert_eq!(support::outcomes(&r.events)[1].1, "denied");
    assert!(!r.out.passed());
}
