#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `no-echo` lever: a write of the deliverable that repeats a run of eight words of Rein's
//! own messages (a requirement, feedback, a progress note) that neither the task, the inputs nor
//! the deliverable as it stands hold is held before the gate, nothing written, the passage
//! quoted; twice an attempt at most. The judge is as it was.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use support::{finish_line, gold_text, read_summary, reads, step_outcomes, write_summary, Ran};

/// Rein's requirement for desk_task's `own-words` check, in its words (the requirements lever
/// renders it; no input holds it).
const REIN_WORDS: &str = "never paste them, and rephrase the sentences you take from notes";

fn levers(no_echo: bool) -> Levers {
    Levers {
        requirements: true,
        no_echo,
        ..Levers::DEFAULT
    }
}

fn run(script: &str, no_echo: bool) -> Ran {
    Ran::desk_task(script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = levers(no_echo);
        o.limits.attempts = 1;
    })
}

/// The gold report with Rein's words as its Risks sentence.
fn pasted() -> String {
    let gold = gold_text();
    let risks = gold.find("## Risks").unwrap();
    format!(
        "{}## Risks\n\nRestate a table's rows in your own form, {REIN_WORDS}.\n",
        &gold[..risks]
    )
}

fn on_disk(r: &Ran) -> Option<String> {
    std::fs::read_to_string(r.h.workspace.join("out/summary.md")).ok()
}

#[test]
fn a_write_that_repeats_rein_s_words_is_held_and_nothing_is_written() {
    let script = reads() + &write_summary(&pasted()) + &finish_line();
    let r = run(&script, true);
    assert!(r.model.prompt(0).contains(REIN_WORDS), "Rein said it");
    assert_eq!(on_disk(&r), None);
    let held = step_outcomes(&r.h, &r.out, "create_file");
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0].0, "invalid", "{held:?}");
    assert!(held[0].1.contains("repeats Rein's own words"), "{held:?}");
    assert!(
        held[0].1.contains(&format!(
            "`Restate a table's rows in your own form, {REIN_WORDS}`"
        )),
        "the passage as written: {held:?}"
    );
    let told = r.model.prompt(4);
    assert!(told.contains("leave Rein's wording out"), "{told}");
    let events = support::journal_events(&r.h.journal, r.out.run, "no_echo");
    assert_eq!(events.len(), 1, "{events:?}");
}

#[test]
fn the_gold_report_is_not_held_and_passes() {
    let script = reads() + &write_summary(&gold_text()) + &read_summary() + &finish_line();
    let r = run(&script, true);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert!(support::journal_events(&r.h.journal, r.out.run, "no_echo").is_empty());
}

#[test]
fn twice_an_attempt_at_most_then_the_write_goes_to_the_gate() {
    let script = reads()
        + &write_summary(&pasted())
        + &write_summary(&format!("{}\n", pasted()))
        + &write_summary(&format!("{}\n\n", pasted()))
        + &finish_line();
    let r = run(&script, true);
    let writes = step_outcomes(&r.h, &r.out, "create_file");
    let outcomes: Vec<&str> = writes.iter().map(|(o, _)| o.as_str()).collect();
    assert_eq!(outcomes, ["invalid", "invalid", "executed"], "{writes:?}");
    assert!(on_disk(&r).unwrap().contains(REIN_WORDS));
    // The judge is as it was: the paste is judged, not hidden.
    assert!(!r.out.passed());
}

#[test]
fn without_the_lever_the_write_goes_to_the_gate() {
    let script = reads() + &write_summary(&pasted()) + &finish_line();
    let r = run(&script, false);
    assert!(on_disk(&r).unwrap().contains(REIN_WORDS));
}

#[test]
fn words_an_input_holds_are_not_rein_s() {
    // The overview's own sentence, which Rein's messages quote when it is read.
    let overview = std::fs::read_to_string(
        support::missions_dir().join("desk_task/fixtures/notes/overview.md"),
    )
    .unwrap();
    let sentence = overview
        .lines()
        .find(|l| l.split_whitespace().count() >= 10)
        .unwrap()
        .to_string();
    let gold = gold_text();
    let risks = gold.find("## Risks").unwrap();
    let text = format!("{}## Risks\n\n{sentence}\n", &gold[..risks]);
    let r = run(&(reads() + &write_summary(&text) + &finish_line()), true);
    assert!(on_disk(&r).is_some());
    assert!(support::journal_events(&r.h.journal, r.out.run, "no_echo").is_empty());
}
