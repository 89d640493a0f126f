#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! Red team, second round, of lever `row-query`: the withholding of `table_rows` counts the
//! judge makes otherwise, after the mend of fff70f3. Each test is one attack asserting the right
//! behaviour; a failing one is marked `HOLE:` and names the defect it exposes. Passing ones stay
//! as regression tests.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentOptions, Levers};
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::{json, Value};
use support::{finish_line, line, Harness, Ran};

const JUNE: &str = "data/deploys-2024-06.csv";

fn levers_on() -> Levers {
    Levers {
        facts_tools: true,
        row_query: true,
        ..Levers::DEFAULT
    }
}

fn run(h: Harness, script: &str, tweak: impl FnOnce(&mut AgentOptions)) -> Ran {
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = levers_on();
        o.constrained = true;
        o.limits.attempts = 1;
        tweak(o);
    })
}

fn call(path: &str, where_: &str) -> String {
    line("table_rows", json!({"path": path, "where": where_})) + &finish_line()
}

/// The one `table_rows` answer of a run, as shown, and its JSON.
fn answer(h: Harness, path: &str, where_: &str) -> (String, Value) {
    let r = run(h, &call(path, where_), |_| {});
    let shown = r.shown_result(1, 1, "table_rows");
    let result = support::first_json(&shown);
    (shown, result)
}

/// Asserts no figure of `result` is `disputed`.
fn no_figure(result: &Value, disputed: u64, shown: &str, what: &str) {
    let leaks: Vec<(String, u64)> = support::row_figures(result)
        .into_iter()
        .filter(|(_, n)| *n == disputed)
        .collect();
    assert!(
        leaks.is_empty(),
        "{what}: the disputed count {disputed} reaches the model as {leaks:?}: {shown}"
    );
}

/// report-deploys' June file rewritten line by line by `each` (header included), then `extra`
/// appended.
fn deploys_rewritten(each: impl Fn(usize, &str) -> String, extra: &'static str) -> Harness {
    Harness::desk_suite_with("report-deploys", move |dir| {
        let p = dir.join(JUNE);
        let text = std::fs::read_to_string(&p).unwrap();
        let mut out: String = text
            .lines()
            .enumerate()
            .map(|(i, l)| each(i, l) + "\n")
            .collect();
        out.push_str(extra);
        std::fs::write(p, out).unwrap();
    })
}

/// report-deploys with a `FAILED` row added: the judge counts 3 `failed`, the tool 4.
fn deploys_disputed() -> Harness {
    deploys_rewritten(|_, l| l.to_string(), "2024-06-28,orders,FAILED,12\n")
}

// -------------------------------------------------------------------- column naming

/// Was a hole, mended: a header two columns share is refused bare (`status = failed`: "name one as
/// `status (column 3)` or `status (column 5)`"), and the name the tool itself tells the model
/// to write dodges the withholding: the answer reads `status (column 3) = "failed"`, which
/// neither `withhold_disputed_table_rows` (its one-equality text is `status (column 3) =
/// failed`, not the check's `status = failed`) nor `withhold_disputed_matches` (it compares
/// the answer's key with the check's column name) takes for the judge's filter, although the
/// judge filters by that very column (the first `status`). The disputed count 4 is shown.
/// Expected: the answer's key is mapped back to its column (index) and compared with the
/// column the judge's `column_index` picks; `status (column 3) = failed` is withheld.
#[test]
fn a_repeated_header_named_as_the_tool_says_does_not_dodge_the_withholding() {
    let h = || {
        deploys_rewritten(
            |i, l| {
                if i == 0 {
                    format!("{l},status")
                } else {
                    format!("{l},green")
                }
            },
            "2024-06-28,orders,FAILED,12,green\n",
        )
    };
    // The bare name is refused and says which names to use.
    let r = run(h(), &call(JUNE, "status = failed"), |_| {});
    let prompt = r.model.prompt(1);
    assert!(prompt.contains("status (column 3)"), "{prompt}");
    let (shown, result) = answer(h(), JUNE, "status (column 3) = failed");
    assert!(shown.contains("status (column 3)"), "{shown}");
    no_figure(&result, 4, &shown, "`status (column 3) = failed`");
    assert!(shown.contains("yourself"), "no note says why: {shown}");
}

/// Was a hole, mended: with two headers that differ only in case (`Status` and `status`), the judge's filter
/// column `status` is the exact one (column 4), and so is the tool's `status = failed`; but
/// `reads_otherwise` looks the column up ignoring case and takes the first, `Status`, whose
/// cells hold no dispute, so an answer of two conditions (`status = failed and duration_s >= 0`,
/// every June row meeting the second) shows the disputed count 4. (One condition alone is
/// caught by `withhold_disputed_table_rows`, which asks the judge.) Expected: the table's column
/// is found as the judge finds it (exact first, then ignoring case), or by the answer's own
/// key.
#[test]
fn headers_differing_only_in_case_are_checked_on_the_judge_s_column() {
    let h = deploys_rewritten(
        |i, l| {
            let mut cells: Vec<&str> = l.split(',').collect();
            cells.insert(2, if i == 0 { "Status" } else { "done" });
            cells.join(",")
        },
        "2024-06-28,orders,done,FAILED,12\n",
    );
    let (shown, result) = answer(h, JUNE, "status = failed and duration_s >= 0");
    assert_eq!(result["where"][0], "status = \"failed\"", "{shown}");
    no_figure(
        &result,
        4,
        &shown,
        "`status = failed and duration_s >= 0` on the lower-case column",
    );
}

// -------------------------------------------------------------------- rows the tool drops

/// Was a hole, mended: a row of empty cells (`,,,`) is counted by the judge and skipped by `Table::parse`, so
/// `rows_in_file` (14, the judge counts 15) is withheld; but `where` is required, and a model
/// counting "all deploys" with `table_rows` writes a condition every row meets, such as
/// `service != none`. Its `rows` is the same 14, shown, although the blank row meets
/// `service != none` by the tool's own `!=` (its service is empty, not `none`). Expected: when
/// `rows_in_file` is withheld, a `rows` that counts every row the tool read (equal to it) is
/// withheld too (or the tool counts the blank row it skipped).
#[test]
fn a_condition_every_row_meets_does_not_hand_over_a_withheld_row_count() {
    let h = || deploys_rewritten(|_, l| l.to_string(), ",,,\n");
    for where_ in ["service != none", "date != 1999-01-01"] {
        let (shown, result) = answer(h(), JUNE, where_);
        assert!(
            result.get("rows_in_file").is_none(),
            "rows_in_file is disputed and withheld: {shown}"
        );
        no_figure(&result, 14, &shown, where_);
    }
}

/// Was a hole, mended: (visibility) when one answer loses two figures for two reasons, each withholding puts
/// its note under the one key `withheld`, the last replacing the first: with a blank row and a
/// `FAILED` row, `status = failed` loses `rows_in_file` (the file's count is disputed) and
/// `rows` (the filter is), and the note left speaks only of `rows, matching_rows, counts`;
/// nothing says why `rows_in_file` is gone. Expected: every withheld figure is named in the
/// note shown.
#[test]
fn two_figures_withheld_for_two_reasons_are_both_named() {
    let h = deploys_rewritten(|_, l| l.to_string(), "2024-06-28,orders,FAILED,12\n,,,\n");
    let (shown, result) = answer(h, JUNE, "status = failed");
    assert!(result.get("rows_in_file").is_none(), "{shown}");
    assert!(result.get("rows").is_none(), "{shown}");
    let note = result["withheld"].as_str().unwrap_or_default();
    assert!(
        note.contains("rows_in_file"),
        "`rows_in_file` was withheld without a word: withheld = {note:?}"
    );
}

// -------------------------------------------------------------------- checks other than counts

/// Was a hole, mended: (scope) only row-count checks are considered. report-expenses sums `amount` where
/// `category` is exactly `office`; with an `Office` row added, `table_rows` `category = office`
/// lists six rows, the `Office` one among them, and the model, told to use the tool "instead
/// of comparing them yourself", adds up the listed amounts: 106.74 more than the judge's sum.
/// The same listing is withheld when the check counts rows. Expected: an answer whose `=`
/// condition is the disputed filter of any of the table's checks (sum, mean, max as well as
/// count) does not list the rows the judge leaves out.
#[test]
fn a_disputed_filter_of_a_sum_check_does_not_list_the_rows_the_judge_leaves_out() {
    let h = Harness::desk_suite_with("report-expenses", |dir| {
        let p = dir.join("expenses/2024-05.csv");
        let mut text = std::fs::read_to_string(&p).unwrap();
        text.push_str("2024-05-27,Office,500.00,Anna\n");
        std::fs::write(p, text).unwrap();
    });
    let (shown, result) = answer(h, "expenses/2024-05.csv", "category = office");
    let listed = result
        .get("matching_rows")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    assert!(
        !listed.iter().any(|r| r["category"] == "Office"),
        "the row the judge's sum leaves out is listed for the model to add up: {shown}"
    );
}

// -------------------------------------------------------------------- spellings (pass)

/// Spellings of the judge's value, the path and the check's column that the first round did
/// not try: each still withholds the disputed count (passes).
#[test]
fn more_spellings_of_the_judge_s_filter_are_withheld() {
    for (path, where_) in [
        (JUNE, "status = ' failed '"),
        (JUNE, "status = \"FAILED\""),
        (JUNE, "status = failed and service != nothing"),
        (JUNE, "duration_s > 0 && STATUS = Failed;"),
        ("./data/deploys-2024-06.csv", "status = failed"),
        ("data//deploys-2024-06.csv", "status = failed"),
    ] {
        let (shown, result) = answer(deploys_disputed(), path, where_);
        no_figure(&result, 4, &shown, where_);
        assert!(shown.contains("yourself"), "`{where_}`: {shown}");
    }
}

/// The check's column in another case than the header, its value in another case than the
/// cells: the withholding still finds it (passes). (A check's path written `./data/...` is
/// refused when the mission loads, so the path is always the tool's spelling.)
#[test]
fn the_check_s_column_and_value_spelled_otherwise_still_withhold() {
    for (column, equals) in [("STATUS", "failed"), ("status", "Failed")] {
        let h = || {
            Harness::desk_suite_edited("report-deploys", support::add_failed_deploy, |m| {
                for c in m["checks"].as_array_mut().unwrap() {
                    if c["id"] == "failed" {
                        c["expected"]["filter"] = json!({"column": column, "equals": equals});
                    }
                }
            })
        };
        let what = format!("{column} = {equals}");
        for where_ in ["status = failed", "status = failed and duration_s >= 0"] {
            // The judge counts 3 (`failed`) or 0 (`Failed`); the tool matches 4.
            let (shown, result) = answer(h(), JUNE, where_);
            no_figure(&result, 4, &shown, &what);
            assert!(shown.contains("yourself"), "{what} / {where_}: {shown}");
        }
    }
}

/// A value that carries the rendered form of another condition (` = "`) neither forges the
/// judge's filter nor hides it: the answer's key comes first in each condition it reads
/// (passes).
#[test]
fn a_value_holding_a_rendered_condition_neither_forges_nor_hides_the_filter() {
    let (shown, result) = answer(
        deploys_disputed(),
        JUNE,
        "service != 'x\" and status = \"failed' and status = failed",
    );
    no_figure(&result, 4, &shown, "forged");
    assert!(shown.contains("yourself"), "{shown}");
    // Undisputed, the same forged text withholds nothing.
    let (shown, result) = answer(
        Harness::desk_suite("report-deploys"),
        JUNE,
        "service = 'orders\" and status = \"failed'",
    );
    assert_eq!(result["rows"], 0, "{shown}");
    assert!(!shown.contains("yourself"), "{shown}");
}
