#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of stats-first's task line ("The task's line with it: Travel: 2374.68 EUR"):
//! each attack kept as a regression test. A test that fails names the correct behaviour in a
//! comment; the others are probes that held.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::checks::{stated_in_line, Check, CheckSpec};
use rein_engine::gate::AllowAll;
use serde_json::{json, Value};
use support::{
    check_mut, finish_line, journal_events, set_prompt, task_lines, Harness, PromptRecorder,
};

const EXPENSES: &str = "../suites/desk/report-expenses";

fn levers() -> Levers {
    Levers {
        facts_tools: true,
        stats_first: true,
        inputs_first: false,
        ..Levers::DEFAULT
    }
}

/// The first prompt of a run of `h` with stats-first on (the model only finishes), and the
/// lever's journal event.
fn first_prompt(h: &Harness) -> (String, Value) {
    let mut model = PromptRecorder::new(&finish_line(), "redteam_stats_lines.jsonl");
    let (outcome, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers();
        o.limits.attempts = 1;
    });
    let events = journal_events(&h.journal, outcome.run, "stats_first");
    assert_eq!(events.len(), 1, "{events:?}");
    (model.prompt(0), events.into_iter().next().unwrap())
}

/// The task lines stats-first showed in the first prompt of a run of `h`.
fn shown_lines(h: &Harness) -> Vec<String> {
    task_lines(&first_prompt(h).0)
}

fn expenses(edit: impl FnOnce(&mut Value)) -> Harness {
    Harness::with_edit(EXPENSES, edit)
}

fn spec(stated: &str, units: &[&str], signed: bool) -> CheckSpec {
    let c: Check = serde_json::from_value(json!({
        "id": "n", "kind": "numeric_consistency", "path": "out/r.md",
        "stated": {"regex": stated}, "units": units, "signed": signed,
        "expected": {"from": "csv", "path": "e.csv", "op": "sum", "column": "amount"}
    }))
    .unwrap();
    c.spec
}

// ---------------------------------------------------------------------------------------
// Baseline: the unedited task.

#[test]
fn baseline_report_expenses_lines() {
    let (first, _) = first_prompt(&Harness::with_edit(EXPENSES, |_| {}));
    let lines = task_lines(&first);
    for want in [
        "Travel: 2374.68 EUR",
        "Meals: 469.72 EUR",
        "Software: 716.73 EUR",
        "Office: 237.69 EUR",
        "Total: 3798.82 EUR",
        "Claims: 26",
        "Largest: 419.23 EUR",
    ] {
        assert!(lines.iter().any(|l| l == want), "{want}: {lines:?}");
    }
    // The employee's name is a check's answer that is no table figure: never in a line.
    assert!(!first.contains("Employee: Anna"), "{first}");
}

// ---------------------------------------------------------------------------------------
// Attack 1 (DEFECT): a label that is itself a placeholder, `'X: N EUR'`.

#[test]
fn a_label_that_is_a_bare_placeholder_letter_gets_no_line() {
    // The task asks for the biggest claimant's line as 'X: N EUR' (X is who claimed it); the
    // check reads the amount after any one-word label in its section.
    let h = expenses(|m| {
        set_prompt(m, |p| {
            p.replace(
                "'Largest: N EUR' (the largest single amount) and 'Employee: <name>' (who claimed it)",
                "one line 'X: N EUR', where X is the employee with the largest single claim and N that amount",
            )
        });
        check_mut(m, "largest")["stated"]["regex"] = json!(r"(?im)^\s*[a-z]+\s*:\s*(.*?)\.?\s*$");
        // The name checks no longer apply to this wording.
        m["checks"]
            .as_array_mut()
            .unwrap()
            .retain(|c| c["id"] != "largest-by" && c["id"] != "one-employee");
        // Only the largest claim's line in the prompt reads alike under that regex.
        set_prompt(m, |p| {
            p.replace(
                "'## Totals' holds one line per category, 'Travel: N EUR', 'Meals: N EUR', 'Software: N EUR', 'Office: N EUR' (the sum of amount for that category, two decimals), then 'Total: N EUR' (all claims) and 'Claims: N' (the number of claims).",
                "'## Totals' holds the totals of the four categories.",
            )
        });
    });
    let lines = shown_lines(&h);
    // Correct: claim (2) says no line when the label is itself a placeholder. `X` is the
    // placeholder of the employee's name (the answer of a check that is no table figure);
    // "X: 419.23 EUR" hands the model a line with an unfilled placeholder to copy verbatim.
    assert!(
        lines.iter().all(|l| !l.starts_with("X:")),
        "a line whose label is the placeholder X was shown: {lines:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Attack 2 (DEFECT): a label that holds a placeholder, `'Largest claim N: N EUR'`.

#[test]
fn a_label_holding_a_placeholder_gets_no_line() {
    // The task wants the claim's number in the label and its amount after the colon; the
    // check reads the amount on any line starting `Largest`.
    let h = expenses(|m| {
        set_prompt(m, |p| {
            p.replace(
                "'Largest: N EUR' (the largest single amount)",
                "'Largest claim N: N EUR' (the first N is the claim's row number in the file, the second the largest single amount)",
            )
        });
        check_mut(m, "largest")["stated"]["regex"] =
            json!(r"(?im)^\s*largest\b[^:\n]*:\s*(.*?)\.?\s*$");
    });
    let lines = shown_lines(&h);
    // Correct: no line. "Largest claim N: 419.23 EUR" fills one placeholder and leaves the
    // other (the row number, which Rein must not fill either: it would name a row) for the
    // model to copy as the letter N.
    assert!(
        lines.iter().all(|l| !l.contains(" N:")),
        "a line with an unfilled placeholder in its label was shown: {lines:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Attack 3: `$` in the template's unit (Regex::replace expands `$` in the replacement).

#[test]
fn a_dollar_unit_is_written_as_the_task_spells_it() {
    for unit in ["$", "$$"] {
        let h = expenses(|m| {
            set_prompt(m, |p| {
                p.replace("'Total: N EUR'", &format!("'Total: N {unit}'"))
            });
            check_mut(m, "total")["units"] = json!([unit]);
        });
        let lines = shown_lines(&h);
        let want = format!("Total: 3798.82 {unit}");
        assert!(lines.contains(&want), "{want}: {lines:?}");
    }
}

// ---------------------------------------------------------------------------------------
// Attack 4: the same line quoted twice, and two quoted lines read alike.

#[test]
fn a_line_quoted_twice_or_two_lines_read_alike_get_no_line() {
    // The same template twice: Rein does not choose (conservative, holds claim 2).
    let h = expenses(|m| {
        set_prompt(m, |p| {
            format!("{p} Check that 'Travel: N EUR' is there exactly once.")
        });
        check_mut(m, "total-travel")["occurrences"] = json!("exactly_one");
    });
    let lines = shown_lines(&h);
    assert!(lines.iter().all(|l| !l.starts_with("Travel")), "{lines:?}");
    assert!(
        lines.contains(&"Meals: 469.72 EUR".to_string()),
        "{lines:?}"
    );
    // Two spellings of the unit the check both takes: no line.
    let h = expenses(|m| set_prompt(m, |p| format!("{p} 'Travel: N €' is fine too.")));
    let lines = task_lines(&first_prompt(&h).0);
    assert!(lines.iter().all(|l| !l.starts_with("Travel")), "{lines:?}");
    // A unit the check does not take: no line.
    let h = expenses(|m| set_prompt(m, |p| p.replace("'Travel: N EUR'", "'Travel: N USD'")));
    let lines = task_lines(&first_prompt(&h).0);
    assert!(lines.iter().all(|l| !l.starts_with("Travel")), "{lines:?}");
}

// ---------------------------------------------------------------------------------------
// Attack 5: unicode quotes, odd text around them, a long prompt.

/// report-expenses with its Travel and Meals lines in curly quotes, `noise` around the task.
fn curly(noise: &str) -> Harness {
    let noise = noise.to_string();
    expenses(move |m| {
        set_prompt(m, |p| {
            format!(
                "{noise}{} {noise} 'Total: N EUR\u{2019} ‘: N’ '<Region>: N EUR' 'Claims: N ",
                p.replace("'Travel: N EUR'", "‘Travel: N EUR’")
                    .replace("'Meals: N EUR'", "“Meals: N EUR”")
            )
        });
    })
}

#[test]
fn unicode_quotes_and_odd_text_do_not_panic() {
    let (first, _) = first_prompt(&curly(
        &"Ünïcödé ‘ ’ “ ” \u{200b}$1 ${1} \\1 \\ $ € 𝔘 ".repeat(3),
    ));
    let lines = task_lines(&first);
    assert!(
        lines.contains(&"Travel: 2374.68 EUR".to_string()),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"Meals: 469.72 EUR".to_string()),
        "{lines:?}"
    );
    // 'Total: N EUR' is now quoted twice (once with a curly close): no line for it.
    assert!(lines.iter().all(|l| !l.starts_with("Total")), "{lines:?}");
    // No line ever names the region placeholder or the names of rows.
    assert!(lines.iter().all(|l| !l.contains('<')), "{lines:?}");
}

#[test]
fn a_very_long_prompt_does_not_panic() {
    // 200,000 characters of quotes and placeholders: nothing panics and no line is invented
    // (the run may well stop before the lever: the task alone leaves the steps no room).
    let h = curly(&"‘Travel: N EUR’ 'X: N' “: N” ".repeat(6_000));
    let mut model = PromptRecorder::new(&finish_line(), "redteam_stats_lines.jsonl");
    let (outcome, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers();
        o.limits.attempts = 1;
    });
    assert!(journal_events(&h.journal, outcome.run, "stats_first").len() <= 1);
    for first in model.prompts() {
        assert!(task_lines(&first).is_empty(), "{}", &first[..2_000]);
    }
}

// ---------------------------------------------------------------------------------------
// Attack 6: a unit that is also a word of the label (desk_task's 'Total hours: N').

#[test]
fn a_unit_that_is_a_word_of_the_label() {
    for (template, want) in [
        ("'Total hours: N hours'", Some("Total hours: 64 hours")),
        ("'Total hours: N h'", Some("Total hours: 64 h")),
        // Not a unit of the check: no line.
        ("'Total hours: N hrs'", None),
    ] {
        let h = Harness::with_edit("desk_task", |m| {
            set_prompt(m, |p| p.replace("'Total hours: N'", template));
        });
        let lines = task_lines(&first_prompt(&h).0);
        match want {
            Some(w) => assert_eq!(lines, vec![w.to_string()], "{template}"),
            None => assert!(lines.is_empty(), "{template}: {lines:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Attack 7: more decimals than the task asks for, against the check's tolerance.

fn with_mean(tolerance: f64) -> Harness {
    expenses(|m| {
        set_prompt(m, |p| {
            p.replace(
                "then 'Total: N EUR'",
                "then 'Average: N EUR' (the mean claim, two decimals), 'Total: N EUR'",
            )
        });
        m["checks"].as_array_mut().unwrap().push(json!({
            "id": "mean", "kind": "numeric_consistency", "path": "out/expense-report.md",
            "stated": {"regex": r"(?im)^\s*average\s*:\s*(.*?)\.?\s*$"},
            "expected": {"from": "csv", "path": "expenses/2024-05.csv", "op": "mean", "column": "amount"},
            "tolerance": tolerance, "units": ["EUR"], "section": "Totals"
        }));
    })
}

#[test]
fn a_rounded_mean_is_lined_only_within_the_tolerance() {
    // table_stats rounds the mean (146.1084615...) to 146.108462; with tolerance 0 the judge
    // would not take it: no figure and no line.
    let (first, e) = first_prompt(&with_mean(0.0));
    assert!(
        task_lines(&first).iter().all(|l| !l.starts_with("Average")),
        "{first}"
    );
    assert!(!first.contains("146.108462"), "{first}");
    assert!(e["withheld"].to_string().contains("mean"), "{e}");
    // Within a tolerance of 0.005 the judge takes the six decimals; the line states exactly
    // the shown figure (the task's "two decimals" is not the judge's rule).
    let (first, _) = first_prompt(&with_mean(0.005));
    let lines = task_lines(&first);
    assert!(
        lines.contains(&"Average: 146.108462 EUR".to_string()),
        "{lines:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Attack 8: `occurrences: exactly_one` where two checks read the same line.

#[test]
fn one_line_for_two_checks_of_the_same_figure_is_shown_once() {
    let h = expenses(|m| {
        let mut again = check_mut(m, "total").clone();
        again["id"] = json!("total-once");
        again["occurrences"] = json!("exactly_one");
        again["section"] = Value::Null;
        m["checks"].as_array_mut().unwrap().push(again);
    });
    let lines = shown_lines(&h);
    // Told twice, the model may write it twice, which `exactly_one` refuses.
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("Total:")).count(),
        1,
        "{lines:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Attack 9: claim (3): a line that ties a filtered figure to a label naming the answer.

#[test]
fn a_line_never_says_which_row_a_ranking_line_is_about() {
    // 'Top category: N EUR' is the sum of the category with the largest sum; its check reads
    // travel's sum (the judge's answer). The same figure is travel's own line. Rein must not
    // show 'Top category: 2374.68 EUR' under the travel figure: that says travel is the top
    // category, an answer no table_stats figure gives. Correct: no line for a figure that
    // two checks with different lines share (result_text keeps the first figure of a
    // (words, field) pair, so today the top line is shown and travel's own line is lost).
    let h = expenses(|m| {
        set_prompt(m, |p| {
            p.replace(
                "then 'Total: N EUR'",
                "then 'Top category: N EUR' (the sum of the category with the largest sum), 'Total: N EUR'",
            )
        });
        let mut top = check_mut(m, "total-travel").clone();
        top["id"] = json!("top-category");
        top["stated"]["regex"] = json!(r"(?im)^\s*top\s*category\s*:\s*(.*?)\.?\s*$");
        // Listed first, so its figure comes first.
        m["checks"].as_array_mut().unwrap().insert(0, top);
    });
    let lines = shown_lines(&h);
    assert!(
        lines.iter().all(|l| !l.starts_with("Top category")),
        "the line names which category is the top one: {lines:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Attack 10: stated_in_line on odd values (the judge's number rules).

#[test]
fn stated_in_line_reads_only_what_the_judge_reads() {
    let travel = spec(r"(?im)^\s*travel\s*:\s*(.*?)\.?\s*$", &["EUR", "€"], false);
    let read = |l: &str| stated_in_line(&travel, l);
    assert_eq!(read("Travel: 2374.68 EUR"), Some(2374.68));
    assert_eq!(read("Travel: 1,234.50 EUR"), Some(1234.5));
    assert_eq!(read("Travel: €1,234.50"), Some(1234.5));
    for refused in [
        "Travel: 1e5 EUR",
        "Travel: NaN EUR",
        "Travel: inf EUR",
        "Travel: infinity",
        "Travel: -0 EUR",
        "Travel: +5 EUR",
        "Travel: ",
        "Travel:",
        "Travel: EUR",
        "Travel: 1,23 EUR",
        "Travel: 1234,567 EUR",
        "Travel: $5",
        "Travel: 5 EUR EUR",
        "Travel: 5 USD",
        "Travel: 1 EUR\nTravel: 1 EUR",
        "Meals: 5 EUR",
        "",
    ] {
        assert_eq!(read(refused), None, "{refused:?}");
    }
    // A signed check reads -0 as 0, and a sign after the unit.
    let signed = spec(r"(?im)^\s*balance\s*:\s*(.*?)\.?\s*$", &["EUR"], true);
    assert_eq!(stated_in_line(&signed, "Balance: -0 EUR"), Some(0.0));
    assert_eq!(stated_in_line(&signed, "Balance: -12.5 EUR"), Some(-12.5));
    // A regex that does not compile, or one with no group, reads nothing.
    assert_eq!(stated_in_line(&spec(r"(", &[], false), "x"), None);
    assert_eq!(
        stated_in_line(&spec(r"[0-9]+", &[], false), "Total: 5"),
        None
    );
    // A huge line does not panic.
    let long = format!("Travel: {} EUR", "9".repeat(100_000));
    let _ = read(&long);
}
