#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of commit 4ee155c's stated lines: quoted lines with a unit, and a label
//! placeholder naming the column a check filters by (`'<Warehouse>: N units'`), which that commit
//! filled with the filter's value; the red team showed a filled placeholder can be the task's
//! answer (`'<Category> tickets: N'`), so none is filled now. Hostile prompts and contracts go through the public paths that use them: the
//! `write_sections` schema's `pattern` (lever `stated-lines`) and stats-first's "The task's line
//! with it" (which uses `stated_template`/`stated_line`). A test that fails names a defect and
//! says what is right; a test that passes probes a claim that held.

#[path = "agent_support/mod.rs"]
mod support;

use std::collections::BTreeMap;

use rein_engine::agent::Levers;
use rein_engine::checks::{stated_in_line, CheckSpec};
use rein_engine::gate::AllowAll;
use serde_json::{json, Value};
use support::{
    check_mut, finish_line, journal_events, set_prompt, task_lines, Harness, PromptRecorder,
};

const STOCK: &str = "../suites/desk/report-stock-warehouses";
const SUPPORT: &str = "../suites/desk/summarize-support-week";
const PLACEHOLDER: &str = "'<Warehouse>: N units'";

/// The `pattern` of each `write_sections` field in the first request of a constrained run with
/// `stated-lines` (heading -> pattern).
fn patterns(h: &Harness) -> BTreeMap<String, String> {
    let mut model = PromptRecorder::new(&finish_line(), "redteam_named_labels.jsonl");
    let _ = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = Levers {
            write_sections: true,
            stated_lines: true,
            ..Levers::DEFAULT
        };
        o.constrained = true;
        o.limits.attempts = 1;
    });
    let schema = model.requests[0].json_schema.clone().unwrap();
    let branch = schema["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["properties"]["action"]["const"] == "write_sections")
        .expect("write_sections is offered")
        .clone();
    branch["properties"]["parameters"]["properties"]
        .as_object()
        .unwrap()
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.get("pattern")?.as_str()?.to_string())))
        .collect()
}

/// The label of a stated-lines pattern (`\nBristol: [0-9]` -> `Bristol`).
fn label_of(pattern: &str) -> String {
    pattern
        .strip_prefix("\\n")
        .and_then(|p| p.strip_suffix(": [0-9]"))
        .unwrap_or_else(|| panic!("not a stated-lines pattern: {pattern}"))
        .to_string()
}

/// Every stated-lines pattern holds a plain label that some numeric check of that section
/// reads back as the figure: the judge reads the line the constraint asks for.
fn assert_patterns_sound(h: &Harness, pats: &BTreeMap<String, String>, what: &str) {
    for (heading, pattern) in pats {
        let label = label_of(pattern);
        assert!(
            !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == ' '),
            "{what}: odd text reached the pattern of {heading}: {pattern:?}"
        );
        // The pattern is what llguidance searches: it must compile and find the line.
        let re = regex::Regex::new(pattern).unwrap();
        assert!(re.is_match(&format!("x\n{label}: 5")), "{what}: {pattern}");
        let read = h.contract.mission.checks.iter().any(|c| match &c.spec {
            CheckSpec::NumericConsistency {
                section: Some(s), ..
            } if s.eq_ignore_ascii_case(heading) => {
                stated_in_line(&c.spec, &format!("{label}: 12345")) == Some(12345.0)
            }
            _ => false,
        });
        assert!(
            read,
            "{what}: {heading} must hold `{label}: <digit>`, a line no check of that section reads"
        );
    }
}

fn stock(edit: impl FnOnce(&mut Value)) -> Harness {
    Harness::with_edit(STOCK, edit)
}

/// The label the `Units on hand` field is held to, if any.
fn units_label(h: &Harness) -> Option<String> {
    let pats = patterns(h);
    assert_patterns_sound(h, &pats, "stock");
    pats.get("Units on hand").map(|p| label_of(p))
}

// ---------------------------------------------------------------------------------------
// Baseline.

#[test]
fn baseline_the_stock_report_is_held_to_its_first_labelled_line() {
    let h = stock(|_| {});
    // A label placeholder is never filled (it may stand for the task's answer): the section
    // is held to its first line with a label of its own.
    assert_eq!(units_label(&h).as_deref(), Some("Total units"));
}

// ---------------------------------------------------------------------------------------
// Claim 3: no regex metacharacters or odd text from a contract reach the pattern or the line.

#[test]
fn hostile_filter_values_never_reach_the_pattern() {
    let long = format!("B{}", "r".repeat(40));
    for value in [
        "Bris.tol",
        "Bristol: 5\nTotal units",
        "Bristol (North)",
        "Zürich",
        long.as_str(),
        "Bristol'",
        "Bristol$1",
        "Bristol|Leeds",
        "Bristol\\",
        "Bristol\"",
        "Total units",
        "  Bristol  ",
        "bristol",
    ] {
        let h = stock(|m| {
            let c = check_mut(m, "units-bristol");
            c["expected"]["filter"]["equals"] = json!(value);
            c["stated"]["regex"] = json!(format!(
                r"(?im)^\s*{}\s*:\s*(.*?)\.?\s*$",
                regex::escape(value.trim())
            ));
        });
        let label = units_label(&h);
        // Whatever the value, the placeholder stays one: no warehouse line is held.
        assert_eq!(label.as_deref(), Some("Total units"), "{value:?}");
    }
}

// ---------------------------------------------------------------------------------------
// Claim 3: placeholders spelt otherwise, quoted twice, another column.

#[test]
fn no_spelling_of_a_label_placeholder_is_filled() {
    for (placeholder, want) in [
        // No spelling of the placeholder is filled.
        ("'<WAREHOUSE>: N units'", "Total units"),
        ("'<warehouse>: N units'", "Total units"),
        ("'<warehouse name>: N units'", "Total units"),
        ("'<Site>: N units'", "Total units"),
        ("'<ware_house>: N units'", "Total units"),
        // A placeholder inside the label is not a label placeholder.
        ("'Stock at <Warehouse>: N units'", "Total units"),
        // Two quoted lines the check reads alike: no line.
        (
            "'<Warehouse>: N units' (e.g. '<Warehouse>: N units')",
            "Total units",
        ),
        // A line the task quotes whole is a line like any other.
        ("'<Warehouse>: N units' or 'Bristol: N'", "Bristol"),
    ] {
        let h = stock(|m| set_prompt(m, |p| p.replace(PLACEHOLDER, placeholder)));
        assert_eq!(units_label(&h).as_deref(), Some(want), "{placeholder}");
    }
    // A filter on another column never fills the label.
    let h = stock(|m| {
        for id in ["units-bristol", "units-glasgow", "units-leeds"] {
            check_mut(m, id)["expected"]["filter"]["column"] = json!("sku");
        }
    });
    assert_eq!(units_label(&h).as_deref(), Some("Total units"));
}

// ---------------------------------------------------------------------------------------
// Claim 3 (DEFECT): a label placeholder that stands for the task's answer.

/// summarize-support-week with `sync-tickets` listed first, so its stated line is the one the
/// `Numbers` field is held to (the judge does not care about the order of checks).
fn support_week_sync_first() -> Harness {
    Harness::with_edit(SUPPORT, |m| {
        let checks = m["checks"].as_array_mut().unwrap();
        let at = checks
            .iter()
            .position(|c| c["id"] == "sync-tickets")
            .unwrap();
        let sync = checks.remove(at);
        checks.insert(0, sync);
    })
}

#[test]
fn a_label_placeholder_that_is_the_task_s_answer_is_never_filled() {
    // The task: "'<Category> tickets: N' for the category with the most tickets", and in 'Main
    // issue' what most tickets were about (check `main-issue-sync`). Which category that is
    // is the answer; the contract's check knows it (`filter: category = sync`), the prompt
    // never says it. Filling the placeholder from the filter writes the answer into the
    // action schema: the model is held to `\nsync tickets: [0-9]`, told by the decoder that
    // sync is the top category. Correct: fill a label placeholder only with a value the
    // prompt itself names (the rule stats-first and the hints keep for filter values,
    // `table_stats_call`), or never where the placeholder stands for a choice; here, no line.
    let h = support_week_sync_first();
    let pats = patterns(&h);
    assert_patterns_sound(&h, &pats, "support-week");
    let numbers = pats.get("Numbers").cloned().unwrap_or_default();
    assert!(
        !numbers.to_lowercase().contains("sync"),
        "the Numbers field is held to {numbers:?}: the schema names the category the task asks \
         the model to find (the filter value of `sync-tickets`, which the prompt never names)"
    );
}

/// The first prompt of a stats-first run of `h` and the lever's journal event.
fn stats_first_prompt(h: &Harness) -> (String, Value) {
    let mut model = PromptRecorder::new(&finish_line(), "redteam_named_labels.jsonl");
    let (outcome, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = Levers {
            facts_tools: true,
            stats_first: true,
            inputs_first: false,
            ..Levers::DEFAULT
        };
        o.limits.attempts = 1;
    });
    let events = journal_events(&h.journal, outcome.run, "stats_first");
    (
        model.prompt(0),
        events.into_iter().next().unwrap_or(Value::Null),
    )
}

#[test]
fn stats_first_never_ties_the_answer_s_line_to_a_category() {
    // The prompt names every category (so each count is a figure stats-first may show), and
    // still asks for '<Category> tickets: N' for the one with the most tickets. Showing "The
    // task's line with it: sync tickets: 15" under the sync count says which category is the
    // answer, as 'Top category: N EUR' would (redteam_stats_lines attack 9). Correct: no line
    // for a filled label placeholder that stands for a choice the task asks for.
    let h = Harness::with_edit(SUPPORT, |m| {
        set_prompt(m, |p| {
            format!("{p} The categories are billing, export, login, sync and other.")
        });
    });
    let (first, event) = stats_first_prompt(&h);
    assert!(
        first.contains("sync"),
        "stats-first showed the sync count ({event})"
    );
    // `Tickets: 40`, the count of every ticket, names no category (stats-first gives it since
    // 6 December); a line naming one would say which is the answer.
    let lines = task_lines(&first);
    let categories = ["billing", "export", "login", "sync", "other"];
    assert!(
        lines.iter().all(|l| {
            let l = l.to_lowercase();
            !categories.iter().any(|c| l.contains(c))
        }),
        "stats-first told the model which category has the most tickets: {lines:?}"
    );
}

// ---------------------------------------------------------------------------------------
// stats-first: a label placeholder gives no line, even where every row has one of its own.

#[test]
fn stats_first_gives_no_line_for_a_label_placeholder() {
    let h = stock(|m| {
        set_prompt(m, |p| {
            format!("{p} The warehouses are Bristol, Glasgow and Leeds.")
        });
    });
    let (first, event) = stats_first_prompt(&h);
    let lines = task_lines(&first);
    for want in ["Bristol", "Glasgow", "Leeds"] {
        assert!(
            !lines.iter().any(|l| l.starts_with(&format!("{want}: "))),
            "{want}: {lines:?} ({event})"
        );
    }
    for l in &lines {
        assert!(!l.contains('<'), "{lines:?}");
        let number: f64 = l
            .split(": ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{l}"));
        let read_by_own = h
            .contract
            .mission
            .checks
            .iter()
            .any(|c| stated_in_line(&c.spec, l) == Some(number));
        assert!(read_by_own, "{l}: no check reads it back as {number}");
    }
}

#[test]
fn unicode_and_a_huge_prompt_do_not_panic_or_invent_a_line() {
    let noise =
        "‘<Warehouse>: N units’ “<Warehouse>: <n>” '<Warehouse>' '<Warehouse>:' 𝔘 \u{200b} "
            .repeat(300);
    let h = stock(|m| set_prompt(m, |p| format!("{p} {noise}")));
    // Every quoted placeholder line is read alike: no warehouse line.
    let label = units_label(&h);
    assert!(
        !matches!(label.as_deref(), Some("Bristol" | "Glasgow" | "Leeds")),
        "{label:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Claim 3 (DEFECT): quoted lines with a unit now give stated-lines constraints, and a label
// that is, or holds, a placeholder letter is kept out of stats-first's lines only.

const EXPENSES: &str = "../suites/desk/report-expenses";

/// The pattern of report-expenses' `Largest claim` field once the task words that line as
/// `template` and the check reads it with `regex` (the other quoted lines taken out of the
/// prompt, as in redteam_stats_lines attacks 1 and 2).
fn largest_claim_pattern(template_sentence: &str, regex: &str) -> Option<String> {
    let h = Harness::with_edit(EXPENSES, |m| {
        set_prompt(m, |p| {
            p.replace(
                "'Largest: N EUR' (the largest single amount) and 'Employee: <name>' (who claimed it)",
                template_sentence,
            )
            .replace(
                "'## Totals' holds one line per category, 'Travel: N EUR', 'Meals: N EUR', 'Software: N EUR', 'Office: N EUR' (the sum of amount for that category, two decimals), then 'Total: N EUR' (all claims) and 'Claims: N' (the number of claims).",
                "'## Totals' holds the totals of the four categories.",
            )
        });
        check_mut(m, "largest")["stated"]["regex"] = json!(regex);
        m["checks"]
            .as_array_mut()
            .unwrap()
            .retain(|c| c["id"] != "largest-by" && c["id"] != "one-employee");
    });
    patterns(&h).get("Largest claim").cloned()
}

#[test]
fn a_label_that_is_or_holds_a_placeholder_is_no_stated_line() {
    // 'X: N EUR' (X is who claimed it) and 'Largest claim N: N EUR' (the first N a row
    // number). Before the commit neither was a quoted line for stated-lines (a unit after the
    // placeholder was not read); now both are, and `quoted_labels` keeps the labels `X` and
    // `Largest claim N` that `stated_template` refuses for stats-first ("a label that is, or
    // holds, a placeholder stands for a name or a row the task asks for: no line"). The
    // decoder then holds the model to write the letter: `\nX: [0-9]`, `\nLargest claim N: [0-9]`.
    // Correct: the same rule in both paths: no constraint for such a label.
    let mut held = Vec::new();
    for (sentence, regex) in [
        (
            "one line 'X: N EUR', where X is the employee with the largest single claim and N that amount",
            r"(?im)^\s*[a-z]+\s*:\s*(.*?)\.?\s*$",
        ),
        (
            "'Largest claim N: N EUR' (the first N is the claim's row number in the file, the second the largest single amount)",
            r"(?im)^\s*largest\b[^:\n]*:\s*(.*?)\.?\s*$",
        ),
    ] {
        if let Some(pattern) = largest_claim_pattern(sentence, regex) {
            held.push(format!("{sentence:?} -> {pattern:?}"));
        }
    }
    assert!(
        held.is_empty(),
        "the Largest claim field is held to a label that is or holds an unfilled placeholder \
         letter: {held:#?}"
    );
    // The plain line still gets its constraint (a probe that the test reaches the lever).
    let plain = largest_claim_pattern(
        "'Largest: N' (the largest single amount, in EUR)",
        r"(?im)^\s*largest\s*:\s*(.*?)\.?\s*$",
    );
    assert_eq!(plain.as_deref(), Some("\\nLargest: [0-9]"));
}
