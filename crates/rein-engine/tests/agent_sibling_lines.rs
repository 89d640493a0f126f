#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `sibling-lines` lever (with `line-fields`): report-gradebook quotes only the Math lines
//! ("three lines such as 'Math average: N'") and wants the same three in Physics and History.
//! With the lever those are fields too, their labels the quoted ones with the section's heading
//! put in (the check's own regex reads each), and Rein writes the lines. The numbers stay the
//! model's: a wrong one is written as given and failed. The 1.5B wrote `Physics average: 70.4 |
//! Physics best: 90 | Physics fails: 1` on one line, which the judge reads as no number.

#[path = "line_fields_support/mod.rs"]
mod line_fields_support;
#[path = "agent_support/mod.rs"]
mod support;

use line_fields_support::{failed, finish, read, run};
use rein_engine::agent::Levers;
use serde_json::{json, Value};
use support::{line, Harness};

const TASK: &str = "report-gradebook";
const REPORT: &str = "out/grade-report.md";

fn levers(siblings: bool) -> Levers {
    Levers {
        write_sections: true,
        stated_lines: true,
        plain_bodies: true,
        line_fields: true,
        sibling_lines: siblings,
        ..Levers::DEFAULT
    }
}

fn reads() -> String {
    ["grades/README.md", "grades/term-1.csv"]
        .iter()
        .map(|p| line("read_file", json!({ "path": p })))
        .collect()
}

/// The `write_sections` parameters schema of the first request.
fn schema(siblings: bool) -> Value {
    line_fields_support::first_schema(TASK, levers(siblings))
}

fn names(schema: &Value) -> Vec<String> {
    schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn each_course_s_lines_are_fields_after_its_section() {
    let on = names(&schema(true));
    assert_eq!(
        on,
        [
            "path",
            "Math",
            "Math average",
            "Math best",
            "Math fails",
            "Physics",
            "Physics average",
            "Physics best",
            "Physics fails",
            "History",
            "History average",
            "History best",
            "History fails",
            "Overall",
            "Fails in total",
        ]
    );
    // Without the lever only the lines the task quotes are fields.
    let off = names(&schema(false));
    assert!(off.contains(&"Math average".to_string()), "{off:?}");
    for n in ["Physics average", "History best", "History fails"] {
        assert!(!off.contains(&n.to_string()), "{off:?}");
    }
}

/// Every section's text and line fields, with Physics' figures as given.
fn write(physics: [&str; 3]) -> String {
    let v = json!({
        "path": REPORT,
        "Math": "Math was the strongest course this term.",
        "Math average": "78.1", "Math best": "96", "Math fails": "0",
        "Physics": "Physics sits in the middle.",
        "Physics average": physics[0], "Physics best": physics[1], "Physics fails": physics[2],
        "History": "History had the most fails.",
        "History average": "63.5", "History best": "87", "History fails": "3",
        "Overall": "Five fails across the three courses.",
        "Fails in total": "5",
    });
    line("write_sections", v)
}

#[test]
fn the_lines_are_rein_s_and_the_run_passes() {
    let h = Harness::desk_suite(TASK);
    let script = reads() + &write(["70.4", "90", "2"]) + &finish(REPORT);
    let (out, _) = run(&h, &script, levers(true));
    assert!(out.passed(), "{:?}\n{}", failed(&out), read(&h, REPORT));
    let text = read(&h, REPORT);
    assert!(
        text.contains("Physics sits in the middle.\n\nPhysics average: 70.4\nPhysics best: 90\nPhysics fails: 2\n"),
        "{text}"
    );
}

#[test]
fn a_wrong_number_is_written_as_given_and_failed_by_the_judge() {
    let h = Harness::desk_suite(TASK);
    let script = reads() + &write(["70.4", "90", "1"]) + &finish(REPORT);
    let (out, _) = run(&h, &script, levers(true));
    assert!(!out.passed());
    assert_eq!(failed(&out), ["physics-fails"], "{}", read(&h, REPORT));
    assert!(read(&h, REPORT).contains("Physics fails: 1\n"));
}
