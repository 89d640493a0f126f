#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `line-fields` lever: each number line a task quotes for a section is a field of
//! `write_sections` holding the number only, and Rein writes the task's line with it at the end
//! of that section. The 1.5B wrote summarize-feedback's three lines as one (`Responses: 16,
//! Average rating: 3.125, Mobile responses: 7`) in all three attempts. The number stays the
//! model's: a wrong one is written as given and failed by the judge.

#[path = "line_fields_support/mod.rs"]
mod line_fields_support;
#[path = "agent_support/mod.rs"]
mod support;

use line_fields_support::{
    failed, finish, levers, read, reads, run, sections, with_fields, REPORT,
};
use serde_json::{json, Value};
use support::{line, Harness};

const ONE_LINE: &str = "Responses: 16, Average rating: 3.13, Mobile responses: 7";

#[test]
fn the_lines_are_written_apart_from_their_fields_and_the_run_passes() {
    let h = Harness::desk_suite("summarize-feedback");
    let write = line(
        "write_sections",
        with_fields(sections(ONE_LINE), "16", "3.13", "7"),
    );
    let (out, model) = run(&h, &(reads() + &write + &finish(REPORT)), levers(true));
    assert!(out.passed(), "{:?}\n{}", failed(&out), read(&h, REPORT));
    let text = read(&h, REPORT);
    assert!(
        text.contains("## Numbers\n\nResponses: 16\nAverage rating: 3.13\nMobile responses: 7\n"),
        "{text}"
    );
    assert!(!text.contains(ONE_LINE), "{text}");
    // The model is told which of its lines were left out, and why.
    let after = model.prompt(3);
    assert!(
        after.contains("left out these lines of your text, which only restated them: `Responses: 16, Average rating: 3.13, Mobile responses: 7`"),
        "{after}"
    );
    // And, before it writes, that the lines are fields of their own, with no example number
    // to copy.
    assert!(
        !model.prompt(0).contains("\"Responses\": \""),
        "{}",
        model.prompt(0)
    );
    assert!(
        model.prompt(0).contains("The task's lines 'Responses: N', 'Average rating: N', 'Mobile responses: N' are fields of their own"),
        "{}",
        model.prompt(0)
    );
}

#[test]
fn a_line_that_only_restates_goes_and_one_with_other_words_refuses_the_write() {
    let h = Harness::desk_suite("summarize-feedback");
    let numbers = "- **Responses:** 16\nMobile responses: 9\nMost answers came from phones.";
    let write = line(
        "write_sections",
        with_fields(sections(numbers), "16", "3.13", "7"),
    );
    let (out, _) = run(&h, &(reads() + &write + &finish(REPORT)), levers(true));
    assert!(out.passed(), "{:?}\n{}", failed(&out), read(&h, REPORT));
    let text = read(&h, REPORT);
    assert!(
        text.contains("## Numbers\n\nMost answers came from phones.\n\nResponses: 16\nAverage rating: 3.13\nMobile responses: 7\n"),
        "{text}"
    );
    // A line the check reads as another figure, with words of the model's: nothing of the
    // model's text is dropped for it, the write is refused.
    let h = Harness::desk_suite("summarize-feedback");
    let numbers = "Mobile responses: 9 of them from Android phones.";
    let write = line(
        "write_sections",
        with_fields(sections(numbers), "16", "3.13", "7"),
    );
    let (out, model) = run(&h, &(reads() + &write + &finish(REPORT)), levers(true));
    assert!(!out.passed());
    assert!(!h.workspace.join(REPORT).exists(), "{}", read(&h, REPORT));
    assert!(
        model.prompt(3).contains(
            "where the rest of the file contradicts or hides them, so nothing was written"
        ),
        "{}",
        model.prompt(3)
    );
}

#[test]
fn without_the_lever_the_one_line_fails_every_figure() {
    let h = Harness::desk_suite("summarize-feedback");
    let write = line("write_sections", sections(ONE_LINE));
    let (out, _) = run(&h, &(reads() + &write + &finish(REPORT)), levers(false));
    let failed = failed(&out);
    for id in ["responses", "average-rating", "mobile-responses"] {
        assert!(failed.contains(&id.to_string()), "{failed:?}");
    }
}

#[test]
fn a_wrong_number_is_written_as_given_and_failed_by_the_judge() {
    let h = Harness::desk_suite("summarize-feedback");
    let write = line(
        "write_sections",
        with_fields(sections("The survey in figures."), "17", "3.13", "6"),
    );
    let (out, _) = run(&h, &(reads() + &write + &finish(REPORT)), levers(true));
    assert_eq!(failed(&out), vec!["responses", "mobile-responses"]);
    let text = read(&h, REPORT);
    assert!(
        text.contains(
            "The survey in figures.\n\nResponses: 17\nAverage rating: 3.13\nMobile responses: 6\n"
        ),
        "{text}"
    );
}

#[test]
fn a_missing_field_or_a_value_that_is_not_a_plain_number_writes_nothing() {
    for (fields, why) in [
        (
            {
                let mut v = with_fields(sections("x y z w v"), "16", "3.13", "7");
                v.as_object_mut().unwrap().remove("Average rating");
                v
            },
            "missing `Average rating`",
        ),
        (
            with_fields(sections("x y z w v"), "16 responses", "3.13", "7"),
            "`Responses` must be its number alone, in digits (no label, unit or thousands separator), not `16 responses`",
        ),
        (
            with_fields(sections("x y z w v"), "16", "3.13", "7\n## Praise"),
            "`Mobile responses` must be its number alone",
        ),
        (
            with_fields(sections("x y z w v"), "16", "1,234.5", "7"),
            "not `1,234.5`",
        ),
        (
            with_fields(sections("x y z w v"), "16", "3.125", "7"),
            "`Average rating` must be its number alone, in digits (no label, unit or thousands separator), with exactly 2 decimals, not `3.125`",
        ),
    ] {
        let h = Harness::desk_suite("summarize-feedback");
        let write = line("write_sections", fields);
        let (out, model) = run(&h, &(reads() + &write + &finish(REPORT)), levers(true));
        assert!(!out.passed());
        assert!(!h.workspace.join(REPORT).exists(), "{why}: {}", read(&h, REPORT));
        assert!(model.prompt(3).contains(why), "{why}: {}", model.prompt(3));
    }
}

/// The `write_sections` parameters schema of the first request.
fn schema(task: &str, line_fields: bool) -> Value {
    line_fields_support::first_schema(task, levers(line_fields))
}

#[test]
fn each_field_follows_its_section_and_holds_a_plain_number() {
    let on = schema("summarize-feedback", true);
    let names: Vec<&String> = on["properties"].as_object().unwrap().keys().collect();
    assert_eq!(
        names,
        [
            "path",
            "Feedback summary",
            "Numbers",
            "Responses",
            "Average rating",
            "Mobile responses",
            "Main complaint",
            "Praise"
        ]
    );
    assert_eq!(on["required"].as_array().unwrap().len(), names.len());
    let v = jsonschema::validator_for(&on).unwrap();
    let ok = with_fields(sections("x"), "16", "3.13", "7");
    assert!(v.is_valid(&ok));
    for bad in ["16 responses", "$16", "1,016", "", "16\nx", "1e3"] {
        assert!(
            !v.is_valid(&with_fields(sections("x"), bad, "3.13", "7")),
            "{bad:?}"
        );
    }
    // The task asks for the average rating with two decimals: its field holds exactly two.
    for bad in ["3.125", "3.1", "3", "3.130"] {
        assert!(
            !v.is_valid(&with_fields(sections("x"), "16", bad, "7")),
            "{bad:?}"
        );
    }
    // `stated-lines` no longer holds the Numbers text to a line Rein now writes.
    assert!(on["properties"]["Numbers"]["pattern"]
        .as_str()
        .is_none_or(|p| !p.contains("Responses")));
    let off = schema("summarize-feedback", false);
    assert!(off["properties"].get("Responses").is_none(), "{off}");
}

#[test]
fn a_unit_is_the_task_s_and_a_placeholder_label_is_no_field() {
    // report-expenses quotes `'Travel: N EUR'`: the field is the number, the unit Rein's.
    let expenses = schema("report-expenses", true);
    for label in [
        "Travel", "Meals", "Software", "Office", "Total", "Claims", "Largest",
    ] {
        assert!(
            expenses["properties"].get(label).is_some(),
            "{label}: {expenses}"
        );
    }
    // `Employee: <name>` is a name, not a number line.
    assert!(expenses["properties"].get("Employee").is_none());
    // report-stock-warehouses quotes `'<Warehouse>: N units'`: which row goes there is the
    // task's answer, so no field names one.
    let stock = schema("report-stock-warehouses", true);
    let names: Vec<&String> = stock["properties"].as_object().unwrap().keys().collect();
    for n in &names {
        for warehouse in ["Bristol", "Glasgow", "Leeds"] {
            assert!(!n.contains(warehouse), "{names:?}");
        }
    }
    assert!(
        stock["properties"].get("Total units").is_some(),
        "{names:?}"
    );
}

#[test]
fn a_rewrite_keeps_the_lines_and_changes_only_its_own_section() {
    let h = Harness::desk_suite("summarize-feedback");
    let write = line(
        "write_sections",
        with_fields(sections("The survey in figures."), "16", "3.13", "7"),
    );
    let rewrite = line(
        "rewrite_section",
        json!({"path": REPORT, "heading": "Praise", "text": "Users praise the editor and the templates."}),
    );
    let mut l = levers(true);
    l.rewrite_section = true;
    let (out, _) = run(&h, &(reads() + &write + &rewrite + &finish(REPORT)), l);
    assert!(out.passed(), "{:?}\n{}", failed(&out), read(&h, REPORT));
    let text = read(&h, REPORT);
    assert!(
        text.contains("Responses: 16\nAverage rating: 3.13\nMobile responses: 7\n"),
        "{text}"
    );
    assert!(text.contains("Users praise the editor"), "{text}");
}
