#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Lever `named-rows` (with `stats-first`): a largest or smallest figure Rein shows comes with
//! the rows that hold it, and a figure over the rows of a value the task leaves to the model
//! (a label placeholder) is shown for every value of that column, the largest named, with nothing
//! that says which value the contract's check picks. Without the lever neither is shown.

#[path = "agent_support/mod.rs"]
mod support;

use serde_json::Value;
use support::{check_mut, finish_line, stats_first_prompts, stats_results, task_lines, Harness};

const EXPENSES: &str = "../suites/desk/report-expenses";
const STOCK: &str = "../suites/desk/report-stock-warehouses";
const SUPPORT: &str = "../suites/desk/summarize-support-week";

/// The first prompt of a stats-first run of `h`, with `named-rows` on or off, and the lever's
/// journal event.
fn first_prompt(h: &Harness, named_rows: bool) -> (String, Value) {
    let (prompts, event) = stats_first_prompts(h, named_rows, &finish_line());
    (prompts[0].clone(), event)
}

#[test]
fn the_largest_claim_comes_with_the_row_that_holds_it() {
    let h = Harness::new(EXPENSES);
    let (on, event) = first_prompt(&h, true);
    // 419.23 is Anna's travel claim of 16 May in expenses/2024-05.csv.
    assert!(
        on.contains(
            "The row with it: date=2024-05-16, category=travel, amount=419.23, employee=Anna"
        ),
        "{} ({event})",
        stats_results(&on)
    );
    let (off, _) = first_prompt(&h, false);
    assert!(!off.contains("The row with it"), "{}", stats_results(&off));
    assert!(
        off.contains("419.23"),
        "the largest amount is still shown without the lever"
    );
}

#[test]
fn a_placeholder_label_gets_every_warehouse_s_sum_and_the_largest_named() {
    let h = Harness::new(STOCK);
    let (on, event) = first_prompt(&h, true);
    // Leeds 34 + 8 + 120 + 11, Glasgow 15 + 3 + 48 + 0, Bristol 22 + 0 + 9 + 2.
    assert!(
        on.contains(
            "for each value of the column \\\"warehouse\\\":\\n  Bristol: 33\\n  Glasgow: 66\\n  Leeds: 173\\nThe largest of them: Leeds (173)"
        ),
        "{} ({event})",
        stats_results(&on)
    );
    // One call gives all three; no line of the task is filled with a warehouse's name.
    assert_eq!(event["withheld"], serde_json::json!([]), "{event}");
    let lines = task_lines(&on);
    assert!(
        lines.iter().all(|l| !["Leeds", "Glasgow", "Bristol"]
            .iter()
            .any(|w| l.contains(w))),
        "{lines:?}"
    );
    let (off, _) = first_prompt(&h, false);
    assert!(!off.contains("Leeds: 173"), "{}", stats_results(&off));
}

#[test]
fn every_category_s_count_is_shown_and_no_line_names_one() {
    let h = Harness::new(SUPPORT);
    let (on, event) = first_prompt(&h, true);
    assert!(
        on.contains(
            "The number of data rows of `support/week-45.csv` for each value of the column \\\"category\\\":\\n  billing: 3\\n  export: 12\\n  login: 8\\n  other: 2\\n  sync: 15\\nThe largest of them: sync (15)"
        ),
        "{} ({event})",
        stats_results(&on)
    );
    // The count of every ticket rides on the grouped call and keeps its line.
    let lines = task_lines(&on);
    assert!(lines.iter().any(|l| l == "Tickets: 40"), "{lines:?}");
    assert!(
        lines.iter().all(|l| !l.to_lowercase().contains("sync")),
        "{lines:?}"
    );
}

#[test]
fn what_is_shown_does_not_depend_on_which_value_the_check_picks() {
    // The contract's check counts `sync` tickets (the answer). Were it `login` instead (a
    // category the prompt does not name either), the model must be told exactly the same: the
    // groups are facts of the file, not of the check.
    let sync = Harness::new(SUPPORT);
    let login = Harness::with_edit(SUPPORT, |m| {
        check_mut(m, "sync-tickets")["expected"]["filter"]["equals"] = "login".into();
    });
    let (a, _) = first_prompt(&sync, true);
    let (b, _) = first_prompt(&login, true);
    assert!(
        a.contains("The largest of them: sync (15)"),
        "{}",
        stats_results(&a)
    );
    assert_eq!(stats_results(&a), stats_results(&b));
}

#[test]
fn a_group_the_judge_would_not_find_withholds_the_call() {
    // The judge compares the filter value exactly ("leeds" matches no row of "Leeds"; its
    // figure is 0), the tool's group is "Leeds": the figures would differ, so nothing of the
    // call is shown and the journal says why.
    let h = Harness::with_edit(STOCK, |m| {
        check_mut(m, "units-leeds")["expected"]["filter"]["equals"] = "leeds".into();
    });
    let (on, event) = first_prompt(&h, true);
    assert!(
        !on.contains("The largest of them"),
        "{}",
        stats_results(&on)
    );
    let withheld = event["withheld"].as_array().unwrap();
    assert_eq!(withheld.len(), 1, "{event}");
    assert_eq!(withheld[0]["call"]["group_by"], "warehouse", "{event}");
    assert!(
        withheld[0]["why"].as_str().unwrap().contains("\"sum\""),
        "{event}"
    );
}

#[test]
fn figures_of_values_the_task_names_come_with_the_largest_named() {
    // report-sales-regions names its four regions: one filtered call each, no grouped answer.
    // North's sum of amount is the largest (the check `best-region` wants `Best region: North`).
    let h = Harness::new("../suites/desk/report-sales-regions");
    let (on, event) = first_prompt(&h, true);
    let line = "Of the \\\"sum\\\" of column \\\"amount\\\" over the rows of each value of column \\\"region\\\" shown above (North, South, East, West), the largest: North (16515.17)";
    assert!(on.contains(line), "{} ({event})", stats_results(&on));
    // Counts are not compared (the most orders is not the best region), and said once.
    assert_eq!(
        on.matches("the largest").count(),
        1,
        "{}",
        stats_results(&on)
    );
    let (off, _) = first_prompt(&h, false);
    assert!(!off.contains("the largest"), "{}", stats_results(&off));
}

#[test]
fn equal_largest_figures_are_all_named() {
    // East's amounts raised so that its sum equals North's: both named, neither picked.
    let h = Harness::desk_suite_with("report-sales-regions", |fixtures| {
        let csv = fixtures.join("sales/2024-08.csv");
        let text = std::fs::read_to_string(&csv).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let east = lines.iter().position(|l| l.contains(",East,")).unwrap();
        let (head, amount) = lines[east].rsplit_once(',').unwrap();
        let raised: f64 = amount.parse::<f64>().unwrap() + (16515.17 - 2908.34);
        lines[east] = format!("{head},{raised:.2}");
        std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
    });
    let (on, event) = first_prompt(&h, true);
    assert!(
        on.contains("the largest, 2 equal: North (16515.17), East (16515.17)"),
        "{} ({event})",
        stats_results(&on)
    );
}
