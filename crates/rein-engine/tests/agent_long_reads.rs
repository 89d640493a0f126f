#![allow(clippy::unwrap_used, clippy::expect_used)]

//! An input longer than a result the prompt shows: the model gets the lines that fit, told
//! where to read on, and the judge counts the input as read only when the lines it was shown
//! cover it (a read the prompt cut used to count as whole).

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::RunOutcome;
use rein_engine::gate::AllowAll;
use serde_json::json;
use support::{
    copy_dir, finish_line, gold_text, line, missions_dir, read_summary, write_summary, Harness,
    PromptRecorder,
};

const NOTES: &str = "notes/meeting-notes.md";
/// Lines of filler after the real notes: 160 of 61 characters, about 10 KB in all.
const FILLER_LINES: usize = 160;

/// desk_task with meeting notes of about 10,000 characters: read_file returns them whole
/// (its cap is 12,000), the prompt shows 6,000.
fn long_notes_harness() -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let mdir = dir.path().join("mission");
    copy_dir(&missions_dir().join("desk_task"), &mdir);
    let notes = mdir.join("fixtures").join(NOTES);
    let mut text = std::fs::read_to_string(&notes).unwrap();
    for i in 1..=FILLER_LINES {
        text.push_str(&format!(
            "- Action item {i:03}: follow up with the team next week.\n"
        ));
    }
    std::fs::write(&notes, text).unwrap();
    Harness::load(dir, mdir.join("mission.json"))
}

fn run(h: &Harness, script: &str) -> (RunOutcome, PromptRecorder) {
    let mut model = PromptRecorder::new(script, "long_reads.jsonl");
    let (outcome, _) = h.run_gated(&mut model, &mut AllowAll, |o| o.limits.attempts = 1);
    (outcome, model)
}

fn inputs_read(outcome: &RunOutcome) -> (bool, String) {
    support::check_facts(outcome, "inputs-read")
}

fn reads(notes_ranges: &[(u64, u64)]) -> String {
    let mut s = line("read_file", json!({"path": "notes/overview.md"}));
    if notes_ranges.is_empty() {
        s += &line("read_file", json!({"path": NOTES}));
    }
    for (a, b) in notes_ranges {
        s += &line(
            "read_file",
            json!({"path": NOTES, "start_line": a, "end_line": b}),
        );
    }
    s + &line("read_file", json!({"path": "data/tasks.csv"}))
}

fn total_lines(h: &Harness) -> u64 {
    std::fs::read_to_string(h.workspace.join(NOTES))
        .unwrap()
        .lines()
        .count() as u64
}

#[test]
fn a_read_the_prompt_would_clip_is_cut_at_a_line_and_is_not_a_whole_read() {
    let h = long_notes_harness();
    let script = reads(&[]) + &write_summary(&gold_text()) + &read_summary() + &finish_line();
    let (outcome, model) = run(&h, &script);
    let (passed, facts) = inputs_read(&outcome);
    assert!(!passed, "{facts}");
    assert!(
        facts.contains(&format!("{NOTES}: read only in part")),
        "{facts}"
    );
    assert!(!outcome.passed());
    // What the model was shown after the read: a cut at a line, and where to read on.
    let after_read = model.prompt(2);
    assert!(after_read.contains("Cut after line "), "{after_read}");
    assert!(after_read.contains("Call read_file with start_line="));
    assert!(!after_read.contains("more characters not shown"));
    assert!(after_read.contains("Action item 001"));
    assert!(!after_read.contains(&format!("Action item {FILLER_LINES:03}")));
    // The journal keeps what the model was shown: a read marked truncated.
    let trace = h.journal.run_trace(outcome.run).unwrap();
    let detail = trace.steps[1].step.detail.to_string();
    assert!(detail.contains("Cut after line"), "{detail}");
}

#[test]
fn line_ranges_that_cover_the_input_read_it_in_full() {
    let h = long_notes_harness();
    let total = total_lines(&h);
    let half = total / 2;
    let script = reads(&[(1, half), (half + 1, total)])
        + &write_summary(&gold_text())
        + &read_summary()
        + &finish_line();
    let (outcome, _) = run(&h, &script);
    let (passed, facts) = inputs_read(&outcome);
    assert!(passed, "{facts}");
    assert!(
        facts.contains(&format!(
            "{NOTES}: read in full in 2 line ranges, the last at call 3"
        )),
        "{facts}"
    );
    assert!(outcome.passed(), "{:#?}", outcome.document());
}

#[test]
fn ranges_with_a_line_left_out_do_not_read_it_in_full() {
    let h = long_notes_harness();
    let total = total_lines(&h);
    let half = total / 2;
    // Line `half + 1` is never shown.
    let script = reads(&[(1, half), (half + 2, total)])
        + &write_summary(&gold_text())
        + &read_summary()
        + &finish_line();
    let (outcome, _) = run(&h, &script);
    let (passed, facts) = inputs_read(&outcome);
    assert!(!passed, "{facts}");
    assert!(facts.contains("read only in part"), "{facts}");
    assert!(!outcome.passed());
}

#[test]
fn a_range_too_long_to_show_counts_only_the_lines_shown() {
    let h = long_notes_harness();
    let total = total_lines(&h);
    // The whole file asked by range: cut for the prompt, so the rest must still be read.
    let script =
        reads(&[(1, total)]) + &write_summary(&gold_text()) + &read_summary() + &finish_line();
    let (outcome, model) = run(&h, &script);
    let (passed, facts) = inputs_read(&outcome);
    assert!(!passed, "{facts}");
    let shown = model.prompt(2);
    assert!(shown.contains("Cut after line"), "{shown}");
    assert!(facts.contains("read only in part"), "{facts}");
}
