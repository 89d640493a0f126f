#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Lever `readable-figures`: a `write_sections` call whose file would state a figure the judge
//! cannot read as one number is refused with the judge's facts of that line, nothing written;
//! a figure stated readably is written whether or not it is right, and one not stated at all is
//! left to the model. Without the lever such a file is written as before.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, Levers, RunOutcome};
use rein_engine::gate::AllowAll;
use serde_json::{json, Value};
use support::{finish_line, line, step_outcomes, Harness, PromptRecorder};

const GRADEBOOK: &str = "report-gradebook";
const REPORT: &str = "out/grade-report.md";

fn levers(readable_figures: bool) -> Levers {
    Levers {
        write_sections: true,
        readable_figures,
        ..Levers::DEFAULT
    }
}

/// The gold report's sections, with `physics` as the Physics section's text.
fn sections(physics: &str) -> Value {
    json!({
        "path": REPORT,
        "Math": "Math average: 78.1\nMath best: 96\nMath fails: 0",
        "Physics": physics,
        "History": "History average: 63.5\nHistory best: 87\nHistory fails: 3",
        "Overall": "Fails in total: 5",
    })
}

const GOLD_PHYSICS: &str = "Physics average: 70.4\nPhysics best: 90\nPhysics fails: 2";

fn run(h: &Harness, writes: &[Value], on: bool) -> (RunOutcome, Vec<AgentEvent>) {
    let mut script = line("read_file", json!({"path": "grades/term-1.csv"}));
    for w in writes {
        script.push_str(&line("write_sections", w.clone()));
    }
    script.push_str(&line("read_file", json!({"path": REPORT})));
    script.push_str(&finish_line());
    let mut model = PromptRecorder::new(&script, "readable_figures.jsonl");
    h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers(on);
        o.limits.attempts = 1;
    })
}

/// Each `write_sections` step's outcome and reason, in order.
fn writes(h: &Harness, out: &RunOutcome) -> Vec<(String, String)> {
    step_outcomes(h, out, "write_sections")
}

#[test]
fn figures_on_one_line_are_refused_with_the_judge_s_facts_then_the_fixed_report_passes() {
    let h = Harness::desk_suite(GRADEBOOK);
    let joined = sections("Physics average: 70.4 | Physics best: 90 | Physics fails: 2");
    let (out, _) = run(&h, &[joined, sections(GOLD_PHYSICS)], true);
    let w = writes(&h, &out);
    assert_eq!(w.len(), 2, "{w:?}");
    assert_eq!(w[0].0, "invalid", "{w:?}");
    let why = &w[0].1;
    assert!(
        why.contains("cannot read as one number")
            && why.contains("states `70.4 | Physics best: 90 | Physics fails: 2`")
            && why.contains("on a line of its own")
            && why.contains("nothing was written"),
        "{why}"
    );
    assert_eq!(w[1].0, "executed", "{w:?}");
    assert!(out.passed(), "{}", out.reason());
}

#[test]
fn without_the_lever_the_joined_line_is_written_and_fails_the_judge() {
    let h = Harness::desk_suite(GRADEBOOK);
    let joined = sections("Physics average: 70.4 | Physics best: 90 | Physics fails: 2");
    let (out, _) = run(&h, &[joined], false);
    let w = writes(&h, &out);
    assert_eq!(w[0].0, "executed", "{w:?}");
    assert!(!out.passed());
}

#[test]
fn a_wrong_but_readable_figure_is_written_and_an_absent_one_is_left_to_the_model() {
    // Nothing of the expected value is consulted: 12 is wrong and written; a section without
    // its figure lines is written too (the judge fails them, as before).
    let h = Harness::desk_suite(GRADEBOOK);
    let wrong = sections("Physics average: 12\nPhysics best: 90\nPhysics fails: 2");
    let (out, _) = run(&h, &[wrong], true);
    assert_eq!(writes(&h, &out)[0].0, "executed");
    assert!(!out.passed());
    let h = Harness::desk_suite(GRADEBOOK);
    let absent = sections("The physics results were mixed this term.");
    let (out, _) = run(&h, &[absent], true);
    assert_eq!(writes(&h, &out)[0].0, "executed");
}

#[test]
fn the_refusal_says_no_number_the_model_did_not_write() {
    let h = Harness::desk_suite(GRADEBOOK);
    let joined =
        sections("Physics average: 1 | Physics best: 2 | Physics fails: 3, History best 4");
    let (out, _) = run(&h, &[joined], true);
    let w = writes(&h, &out);
    assert_eq!(w[0].0, "invalid", "{w:?}");
    let numbers = regex::Regex::new(r"\d+(?:\.\d+)?").unwrap();
    let written =
        sections("Physics average: 1 | Physics best: 2 | Physics fails: 3, History best 4")
            .to_string();
    for n in numbers.find_iter(&w[0].1) {
        assert!(
            written.contains(n.as_str()),
            "the refusal says {} which the model did not write: {}",
            n.as_str(),
            w[0].1
        );
    }
}

#[test]
fn a_figure_in_another_section_is_refused() {
    // `fails-total` reads its line in section Overall; written under History instead, the
    // judge finds no statement there.
    let h = Harness::desk_suite(GRADEBOOK);
    let mut elsewhere = sections(GOLD_PHYSICS);
    elsewhere["Overall"] = json!("All courses are listed above.");
    elsewhere["History"] =
        json!("History average: 63.5\nHistory best: 87\nHistory fails: 3\nFails in total: 5");
    let (out, _) = run(&h, &[elsewhere], true);
    let w = writes(&h, &out);
    assert_eq!(w[0].0, "invalid", "{w:?}");
    assert!(w[0].1.contains("section `Overall`"), "{}", w[0].1);
}
