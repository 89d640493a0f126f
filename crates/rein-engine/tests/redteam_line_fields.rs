#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red-team attacks on lever `line-fields` (and the `rows_in_file` ride of `stats-first`).
//! Each test asserts the SAFE behaviour: it passes when the code is right and fails when the
//! attack found a hole.

#[path = "line_fields_support/mod.rs"]
mod line_fields_support;
#[path = "agent_support/mod.rs"]
mod support;

use line_fields_support::{
    failed, finish, levers, read, reads, run, sections, with_fields, REPORT,
};
use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use serde_json::{json, Value};
use support::{line, Harness, PromptRecorder};

fn right(numbers: &str) -> Value {
    with_fields(sections(numbers), json!("16"), json!("3.13"), json!("7"))
}

const FIGURES: [&str; 3] = ["responses", "average-rating", "mobile-responses"];

/// Writes summarize-feedback's report with the right fields and `numbers` as the Numbers text:
/// the figure checks must pass (Rein wrote right lines and promised to leave out any line of
/// the text that states a figure otherwise), or nothing must be written.
fn figures_hold_or_nothing_written(h: &Harness, fields: Value, l: Levers) -> String {
    let write = line("write_sections", fields);
    let (out, model) = run(h, &(reads() + &write + &finish(REPORT)), l);
    let text = read(h, REPORT);
    if h.workspace.join(REPORT).exists() {
        let f = failed(&out);
        for id in FIGURES {
            assert!(
                !f.contains(&id.to_string()),
                "Rein wrote the task's lines with right numbers, yet `{id}` failed: {f:?}\n--- file ---\n{text}\n--- told ---\n{}",
                model.prompt(3)
            );
        }
    }
    text
}

// ---------------------------------------------------------------------------------------------
// The text's own lines, as the judge renders them, against what Rein leaves out (raw regex).
// ---------------------------------------------------------------------------------------------

/// The 1.5B's one line, as a list item: the judge reads list items without their marker
/// (`Responses: 16, Average rating: ...`, not a number), the raw-line filter does not match
/// `- Responses:` and keeps it.
#[test]
fn a_bulleted_one_line_is_left_out_like_the_plain_one() {
    let h = Harness::desk_suite("summarize-feedback");
    figures_hold_or_nothing_written(
        &h,
        right("- Responses: 16, Average rating: 3.13, Mobile responses: 7"),
        levers(true),
    );
}

/// Emphasis is dropped by the judge (`**Responses:** 17` reads `Responses: 17`), not by the
/// filter.
#[test]
fn an_emphasised_contradicting_line_is_left_out_or_refused() {
    let h = Harness::desk_suite("summarize-feedback");
    figures_hold_or_nothing_written(
        &h,
        right("**Responses:** 17\nMost answers came from phones."),
        levers(true),
    );
}

/// A quoted (blockquote) line that states another figure.
#[test]
fn a_quoted_contradicting_line_is_left_out_or_refused() {
    let h = Harness::desk_suite("summarize-feedback");
    figures_hold_or_nothing_written(
        &h,
        right("> Mobile responses: 9\n\nMost answers came from phones."),
        levers(true),
    );
}

/// An entity the judge decodes (`Responses&#58; 17`).
#[test]
fn an_entity_spelled_contradicting_line_is_left_out_or_refused() {
    let h = Harness::desk_suite("summarize-feedback");
    figures_hold_or_nothing_written(
        &h,
        right("Responses&#58; 17\nMost answers came from phones."),
        levers(true),
    );
}

// ---------------------------------------------------------------------------------------------
// Where Rein's lines land: right after the kept text, with no blank line.
// ---------------------------------------------------------------------------------------------

/// A section text ending in a table: Rein's lines follow with no blank line, and GFM reads a
/// line after a table as one more row of it.
#[test]
fn rein_s_lines_are_not_swallowed_by_a_table_that_ends_the_text() {
    let h = Harness::desk_suite("summarize-feedback");
    figures_hold_or_nothing_written(
        &h,
        right("| Platform | Answers |\n|---|---|\n| mobile | 7 |\n| desktop | 9 |"),
        levers(true),
    );
}

/// A section text ending in an HTML block (`<div>` runs to the next blank line).
#[test]
fn rein_s_lines_are_not_swallowed_by_an_html_block_that_ends_the_text() {
    let h = Harness::desk_suite("summarize-feedback");
    figures_hold_or_nothing_written(
        &h,
        right("<div class=\"note\">The survey in figures.</div>"),
        levers(true),
    );
}

/// summarize-feedback with Numbers as the last section, so an unclosed block in it hides no
/// heading and the composed file's headings still check out.
fn numbers_last() -> Harness {
    Harness::desk_suite_mission("summarize-feedback", |m| {
        let p = m["prompt"].as_str().unwrap().replace(
            "'# Feedback summary', '## Numbers', '## Main complaint', '## Praise'",
            "'# Feedback summary', '## Main complaint', '## Praise', '## Numbers'",
        );
        m["prompt"] = json!(p);
        for c in m["checks"].as_array_mut().unwrap() {
            if c["kind"] == "report_complete" {
                c["headings"] = json!(["Feedback summary", "Main complaint", "Praise", "Numbers"]);
            }
        }
    })
}

#[test]
fn rein_s_lines_are_not_written_inside_an_unclosed_code_fence() {
    let h = numbers_last();
    let text =
        figures_hold_or_nothing_written(&h, right("The survey in figures:\n```text"), levers(true));
    // Sanity: the edited mission did get line fields.
    assert!(text.is_empty() || text.contains("Responses: 16"), "{text}");
}

#[test]
fn rein_s_lines_are_not_written_inside_an_unclosed_comment() {
    let h = numbers_last();
    figures_hold_or_nothing_written(
        &h,
        right("The survey in figures.\n<!-- draft"),
        levers(true),
    );
}

// ---------------------------------------------------------------------------------------------
// Line breaks.
// ---------------------------------------------------------------------------------------------

#[test]
fn a_crlf_contradicting_line_is_left_out_or_refused() {
    let h = Harness::desk_suite("summarize-feedback");
    figures_hold_or_nothing_written(
        &h,
        right("Most answers came from phones.\r\nResponses: 17\r\nThe rest from desktops."),
        levers(true),
    );
}

#[test]
fn a_contradicting_line_after_a_lone_carriage_return_is_left_out_or_refused() {
    let h = Harness::desk_suite("summarize-feedback");
    figures_hold_or_nothing_written(
        &h,
        right("Most answers came from phones.\rResponses: 17"),
        levers(true),
    );
}

#[test]
fn a_text_of_only_contradicting_lines_leaves_just_rein_s_lines() {
    let h = Harness::desk_suite("summarize-feedback");
    let text = figures_hold_or_nothing_written(
        &h,
        right("Responses: 17\nAverage rating: 2\nMobile responses: 1"),
        levers(true),
    );
    assert!(
        text.contains("## Numbers\n\nResponses: 16\nAverage rating: 3.13\nMobile responses: 7\n"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------------------------
// Field values.
// ---------------------------------------------------------------------------------------------

/// A JSON number in place of the string: written as the model's number.
#[test]
fn a_json_number_value_is_the_model_s_number() {
    let h = Harness::desk_suite("summarize-feedback");
    let text = figures_hold_or_nothing_written(
        &h,
        with_fields(
            sections("The survey in figures."),
            json!(16),
            json!(3.13),
            json!(7),
        ),
        levers(true),
    );
    assert!(text.contains("Responses: 16\n"), "{text}");
}

/// Values no check may read as the model's figure, and values that must never be written
/// as anything but what was given: refused (nothing written) or written exactly; no panic.
#[test]
fn odd_values_are_refused_or_written_as_given() {
    let odd: [Value; 16] = [
        json!("-0"),
        json!("NaN"),
        json!("inf"),
        json!("1e3"),
        json!("+16"),
        json!("0x10"),
        json!("16."),
        json!(".5"),
        json!("999999999999999.999999"),
        json!("9999999999999999999999999999"),
        json!("16\n## Praise"),
        json!("16\r\nResponses: 42"),
        json!("１６"),
        json!(null),
        json!(true),
        json!(["16"]),
    ];
    for v in odd {
        let h = Harness::desk_suite("summarize-feedback");
        let fields = with_fields(
            sections("The survey in figures."),
            v.clone(),
            json!("3.13"),
            json!("7"),
        );
        let write = line("write_sections", fields);
        let (_, model) = run(&h, &(reads() + &write + &finish(REPORT)), levers(true));
        let text = read(&h, REPORT);
        if text.is_empty() {
            assert!(
                model.prompt(3).contains("nothing was written")
                    && model.prompt(3).contains("`Responses` must be"),
                "{v}: {}",
                model.prompt(3)
            );
            continue;
        }
        // Written: the line states exactly the value given, and nothing else came with it.
        let given = match &v {
            Value::String(s) => s.trim().to_string(),
            other => other.to_string(),
        };
        assert!(
            text.contains(&format!("\nResponses: {given}\n")),
            "{v}: {text}"
        );
        assert!(!text.contains("Responses: 42"), "{v}: {text}");
        assert_eq!(text.matches("## ").count(), 3, "{v}: {text}");
    }
}

/// A right number in the field; lines of the text stating the same figures in another form
/// only restate them and are left out: the figure checks hold.
#[test]
fn an_agreeing_line_in_another_form_never_fails_the_figure() {
    let h = Harness::desk_suite("summarize-feedback");
    figures_hold_or_nothing_written(
        &h,
        right("Average rating: 3.13\nResponses: 16.\nMost answers came from phones."),
        levers(true),
    );
}

/// A field named like a required heading or like `path`: the tool's own fields must win.
#[test]
fn a_label_named_path_or_like_a_heading_is_no_field() {
    let h = Harness::desk_suite_mission("summarize-feedback", |m| {
        let p = m["prompt"]
            .as_str()
            .unwrap()
            .replace("'Responses: N'", "'Praise: N'");
        m["prompt"] = json!(p);
        for c in m["checks"].as_array_mut().unwrap() {
            if c["id"] == "responses" {
                c["stated"]["regex"] = json!("(?im)^\\s*praise\\s*:\\s*(.*?)\\.?\\s*$");
            }
        }
    });
    let (_, model) = run(&h, &reads(), levers(true));
    let schema = model.requests[0].json_schema.as_ref().unwrap()["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["properties"]["action"]["const"] == "write_sections")
        .map(|b| b["properties"]["parameters"].clone())
        .unwrap();
    // `Praise` stays the section's text field (a string without the number pattern).
    let praise = &schema["properties"]["Praise"];
    assert_eq!(praise["type"], "string", "{schema}");
    assert_ne!(
        praise["pattern"].as_str(),
        Some(r"^-?[0-9]{1,15}(?:\.[0-9]{1,6})?$"),
        "{schema}"
    );
    assert_ne!(praise["maxLength"], 23, "{schema}");
}

// ---------------------------------------------------------------------------------------------
// rewrite_section over a section with line fields.
// ---------------------------------------------------------------------------------------------

/// The model was told its Numbers text does not repeat the task's lines; a rewrite of that
/// section (which has no line fields) must not silently drop the lines Rein wrote.
#[test]
fn rewriting_a_section_with_line_fields_keeps_its_lines_or_is_refused() {
    let h = Harness::desk_suite("summarize-feedback");
    let write = line("write_sections", right("The survey in figures."));
    let rewrite = line(
        "rewrite_section",
        json!({"path": REPORT, "heading": "Numbers", "text": "The survey in figures, told again."}),
    );
    let mut l = levers(true);
    l.rewrite_section = true;
    let (out, model) = run(&h, &(reads() + &write + &rewrite + &finish(REPORT)), l);
    let text = read(&h, REPORT);
    let f = failed(&out);
    for id in FIGURES {
        assert!(
            !f.contains(&id.to_string()),
            "a rewrite of Numbers lost Rein's lines: `{id}` failed {f:?}\n{text}\n--- told after the rewrite ---\n{}",
            support::user_messages(&model.requests[4]).last().cloned().unwrap_or_default()
        );
    }
}

/// A rewrite can bring back the one-line form the lever exists to prevent; the judge fails it
/// (the run must not pass).
#[test]
fn a_rewrite_that_brings_back_the_one_line_does_not_pass() {
    let h = Harness::desk_suite("summarize-feedback");
    let write = line("write_sections", right("The survey in figures."));
    let rewrite = line(
        "rewrite_section",
        json!({"path": REPORT, "heading": "Numbers",
               "text": "Responses: 16, Average rating: 3.13, Mobile responses: 7"}),
    );
    let mut l = levers(true);
    l.rewrite_section = true;
    let (out, _) = run(&h, &(reads() + &write + &rewrite + &finish(REPORT)), l);
    let text = read(&h, REPORT);
    if text.contains("Responses: 16, Average rating") {
        assert!(!out.passed(), "{text}");
    }
}

// ---------------------------------------------------------------------------------------------
// Rein's leaving-out decides other checks.
// ---------------------------------------------------------------------------------------------

const STOCK: &str = "out/stock-report.md";

/// report-stock-warehouses: the model lists SKU-101 (which must not be in 'Reorder now') on
/// its own count line. Rein leaves that line out because the count check reads it as no
/// number, and with it the SKU: `no-reorder-sku-101` then passes on text Rein removed, not on
/// the model's answer.
#[test]
fn a_count_line_holding_a_sku_is_never_left_out_but_refused() {
    let h = Harness::desk_suite("report-stock-warehouses");
    let fields = json!({
        "path": STOCK,
        "Units on hand": "Bristol: 1 units\nGlasgow: 1 units\nLeeds: 1 units",
        "Total units": "3",
        "Out of stock": "1",
        "Reorder now": "- SKU-102 Office chair, Leeds\n- SKU-104 x\n- SKU-107 x\n- SKU-111 x\n- SKU-112 x\nSKUs to reorder: 6 (SKU-101 Desk lamp, Leeds, too)",
        "SKUs to reorder": "5",
    });
    let script = line("read_file", json!({"path": "stock/inventory.csv"}))
        + &line("write_sections", fields)
        + &finish(STOCK);
    let (out, model) = run(&h, &script, levers(true));
    // The line holds words of the model's (the SKU): Rein drops none of it; the composed file
    // would state the count as no number, so the write is refused and nothing written.
    assert!(!out.passed());
    assert!(read(&h, STOCK).is_empty(), "{}", read(&h, STOCK));
    let told = model.prompt(2);
    assert!(told.contains("so nothing was written"), "{told}");
    assert!(told.contains("SKUs to reorder"), "{told}");
}

/// desk_task's total regex is not anchored: a task line that mentions `total hours:` holds a
/// task name too. It is never left out (the name would go with it); the file would state the
/// total twice, so the write is refused and the model told why.
#[test]
fn an_unanchored_check_s_task_line_is_never_left_out_but_refused() {
    let h = Harness::new("desk_task");
    let mut fields = support::gold_fields();
    let tasks = fields["Tasks"].as_str().unwrap().to_string();
    let first = tasks
        .lines()
        .find(|l| l.starts_with("- "))
        .unwrap()
        .to_string();
    let changed = tasks
        .replace(&first, &format!("{first} (total hours: 12)"))
        .replace("Total hours: 64", "");
    fields["Tasks"] = json!(changed.trim());
    fields["Total hours"] = json!("64");
    let script = support::reads()
        + &line("write_sections", fields)
        + &line("read_file", json!({"path": "out/summary.md"}))
        + &line("finish", json!({"summary": "done"}));
    let (out, model) = run(&h, &script, levers(true));
    assert!(!out.passed());
    assert!(read(&h, "out/summary.md").is_empty());
    let told = model.prompt(4);
    assert!(
        told.contains("so nothing was written: for `Total hours` the judge would read:"),
        "{told}"
    );
    let _ = first;
}

// ---------------------------------------------------------------------------------------------
// stats-first's rows_in_file.
// ---------------------------------------------------------------------------------------------

fn stats_levers() -> Levers {
    Levers {
        facts_tools: true,
        stats_first: true,
        ..Levers::DEFAULT
    }
}

fn stats_prompt(h: &Harness) -> String {
    let mut model = PromptRecorder::new(
        &line("finish", json!({"summary": "done"})),
        "redteam_stats_first.jsonl",
    );
    h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = stats_levers();
        o.limits.attempts = 1;
    });
    model.prompt(0)
}

/// What a shown `rows_in_file` figure says, if any.
fn shown_rows_in_file(prompt: &str) -> Option<String> {
    let at = prompt.find("(its \\\"rows_in_file\\\")")?;
    let before = &prompt[..at];
    let colon = before.rfind(": ")?;
    Some(before[colon + 2..].trim().to_string())
}

fn support_week_with(edit: impl Fn(&str) -> String) -> Harness {
    Harness::desk_suite_with("summarize-support-week", |fixtures| {
        let csv = fixtures.join("support/week-45.csv");
        let text = std::fs::read_to_string(&csv).unwrap();
        let changed = edit(&text);
        assert_ne!(changed, text);
        std::fs::write(&csv, changed).unwrap();
    })
}

/// A change to the table's text, by its description.
type TableEdit = (&'static str, Box<dyn Fn(&str) -> String>, &'static str);

#[test]
fn rows_in_file_is_shown_only_as_the_judge_counts() {
    // (edit, the judge's count of every row)
    let cases: Vec<TableEdit> = vec![
        (
            "a trailing blank line",
            Box::new(|t: &str| format!("{t}\n")),
            "40",
        ),
        (
            "a blank line mid-file",
            Box::new(|t: &str| t.replacen("\nT-901", "\n\nT-901", 1)),
            "?",
        ),
        (
            "a quoted newline in a cell",
            Box::new(|t: &str| {
                t.replacen(
                    "T-901,2024-11-04,billing",
                    "T-901,\"2024-11-04\nlate\",billing",
                    1,
                )
            }),
            "?",
        ),
        ("a BOM", Box::new(|t: &str| format!("\u{feff}{t}")), "?"),
        (
            "CRLF line ends",
            Box::new(|t: &str| t.replace('\n', "\r\n")),
            "?",
        ),
        (
            "an open ticket spelled Open",
            Box::new(|t: &str| {
                let row = t
                    .lines()
                    .find(|l| l.ends_with(",open"))
                    .unwrap()
                    .to_string();
                t.replacen(&row, &format!("{}Open", &row[..row.len() - 4]), 1)
            }),
            "?",
        ),
    ];
    for (what, edit, _) in cases {
        let h = support_week_with(|t| edit(t));
        let first = stats_prompt(&h);
        eprintln!("{what}: shown {:?}", shown_rows_in_file(&first));
        if let Some(shown) = shown_rows_in_file(&first) {
            // The judge's own count, from the frozen file as the judge parses it.
            let judge = judge_count(&h);
            assert_eq!(
                shown, judge,
                "{what}: shown {shown}, the judge counts {judge}\n{first}"
            );
            assert!(
                first.contains(&format!("Tickets: {judge}")) || !first.contains("Tickets: "),
                "{what}: {first}"
            );
        }
    }
}

/// The judge's count of every row of support/week-45.csv: a run whose report states a count
/// passes the `tickets` check only with the judge's figure; try 35..=45.
fn judge_count(h: &Harness) -> String {
    for n in 35..=45 {
        let g = Harness::desk_suite_with("summarize-support-week", |fixtures| {
            std::fs::copy(
                h.workspace.join("support/week-45.csv"),
                fixtures.join("support/week-45.csv"),
            )
            .unwrap();
        });
        let fields = json!({
            "path": "out/support-week.md",
            "Numbers": format!("Tickets: {n}\nThe week in figures, as counted."),
            "Main issue": "Most tickets were about sync failing after the 4.12 release update.",
        });
        let mut model = PromptRecorder::new(
            &(line("read_file", json!({"path": "support/week-45.csv"}))
                + &line("write_sections", fields)
                + &finish("out/support-week.md")),
            "redteam_judge_count.jsonl",
        );
        let (out, _) = g.run_gated(&mut model, &mut AllowAll, |o| {
            o.levers = levers(false);
            o.constrained = true;
            o.limits.attempts = 1;
        });
        if !failed(&out).contains(&"tickets".to_string()) && out.verdict.is_some() {
            return n.to_string();
        }
    }
    "none".into()
}

#[test]
fn rows_in_file_is_shown_for_the_untouched_table() {
    let h = Harness::desk_suite("summarize-support-week");
    let first = stats_prompt(&h);
    assert_eq!(shown_rows_in_file(&first).as_deref(), Some("40"), "{first}");
}

/// Counting rows is the task of explore-csv-rows: no call, no rows_in_file, whatever levers.
#[test]
fn explore_csv_rows_gets_no_row_count() {
    let h = Harness::desk_suite("explore-csv-rows");
    let first = stats_prompt(&h);
    assert!(!first.contains("rows_in_file"), "{first}");
    assert!(
        !first.contains("Result of Rein's table_stats call"),
        "{first}"
    );
}

// ---------------------------------------------------------------------------------------------
// Verified sampling over write_sections with line fields.
// ---------------------------------------------------------------------------------------------

/// Two draws of the write: the first with a wrong field, the second right. The draws are judged
/// with the line fields composed in (not refused as unknown fields), and the right one wins.
#[test]
fn verified_sampling_judges_draws_with_their_line_fields() {
    let h = Harness::desk_suite("summarize-feedback");
    let wrong = with_fields(
        sections("The survey in figures."),
        json!("17"),
        json!("3.13"),
        json!("6"),
    );
    let good = right("The survey in figures.");
    let script =
        reads() + &line("write_sections", wrong) + &line("write_sections", good) + &finish(REPORT);
    let mut model = PromptRecorder::new(&script, "redteam_sampling.jsonl");
    let (out, events) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers(true);
        o.constrained = true;
        o.samples = 2;
        o.limits.attempts = 1;
    });
    let sampled = support::sampled(&events);
    assert!(!sampled.is_empty(), "no sampled write");
    let (candidates, chosen) = &sampled[0];
    assert!(
        candidates.iter().all(|c| c.skipped.is_none()),
        "a draw was not judged: {candidates:?}"
    );
    assert_eq!(*chosen, 1, "{candidates:?}");
    assert!(out.passed(), "{:?}\n{}", failed(&out), read(&h, REPORT));
}

/// A contradicting line in another section is not Rein's to leave out, and the judge reads
/// it: the write is refused and the run must not pass.
#[test]
fn a_contradicting_line_in_another_section_still_fails() {
    let h = Harness::desk_suite("summarize-feedback");
    let mut fields = right("The survey in figures.");
    fields["Praise"] = json!("People like the new editor and sharing.\nResponses: 17");
    let (out, _) = run(
        &h,
        &(reads() + &line("write_sections", fields) + &finish(REPORT)),
        levers(true),
    );
    // The judge reads every statement of the file: Rein refuses the write, nothing written.
    assert!(read(&h, REPORT).is_empty(), "{}", read(&h, REPORT));
    assert!(!out.passed());
}
