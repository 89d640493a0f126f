#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `stats-first` lever: with `facts-tools`, Rein makes the `table_stats` calls the
//! contract's table figures name before the first step, through the gate, journals them as its
//! own and shows the model each result with the figure it gives; never a read for the judge,
//! never a figure of log lines or matches, and said when it does not apply.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{Levers, RunOutcome};
use rein_engine::gate::AllowAll;
use serde_json::{json, Value};
use support::{
    check_facts, finish_line, gold_text, journal_events, read_summary, write_summary, Harness,
    PromptRecorder,
};

fn levers(facts_tools: bool, stats_first: bool, inputs_first: bool) -> Levers {
    Levers {
        facts_tools,
        stats_first,
        inputs_first,
        ..Levers::DEFAULT
    }
}

fn run(h: &Harness, script: &str, levers: Levers) -> (RunOutcome, PromptRecorder) {
    let mut model = PromptRecorder::new(script, "stats_first.jsonl");
    let (outcome, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.limits.attempts = 1;
    });
    (outcome, model)
}

fn the_event(h: &Harness, outcome: &RunOutcome) -> Value {
    let events = journal_events(&h.journal, outcome.run, "stats_first");
    assert_eq!(events.len(), 1, "{events:?}");
    events.into_iter().next().unwrap()
}

/// `s` as it appears inside a recorded prompt (which is Debug-formatted).
fn esc(s: &str) -> String {
    let quoted = format!("{s:?}");
    quoted[1..quoted.len() - 1].to_string()
}

#[test]
fn rein_computes_the_total_and_the_model_copies_it_but_has_still_read_nothing() {
    let h = Harness::new("desk_task");
    let script = write_summary(&gold_text()) + &read_summary() + &finish_line();
    let (outcome, model) = run(&h, &script, levers(true, true, false));
    let first = model.prompt(0);
    assert!(
        first.contains(
            "Result of Rein's table_stats call 1 (made for you before your first step): executed"
        ),
        "{first}"
    );
    assert!(
        first.contains(&esc(
            r#"The sum of the column "hours" of `data/tasks.csv`: 64 (its "sum")"#
        )),
        "{first}"
    );
    // The task quotes 'Total hours: N', and the check reads its number from that line.
    assert!(
        first.contains(&esc(
            "(its \"sum\")\nThe task's line with it: Total hours: 64"
        )),
        "{first}"
    );
    assert!(!first.contains(&esc(r#""distinct""#)), "{first}");
    assert_eq!(
        the_event(&h, &outcome)["calls"],
        json!([{"path": "data/tasks.csv", "column": "hours"}])
    );
    // Rein read the table its figure comes from, then made the call; both journaled as
    // Rein's, first, with no reply of the model's.
    let e = the_event(&h, &outcome);
    assert_eq!(e["read"], json!(["data/tasks.csv"]), "{e}");
    let steps = h.journal.run_trace(outcome.run).unwrap().steps;
    for (i, action) in ["read_file", "table_stats"].iter().enumerate() {
        assert_eq!(steps[i].step.action.as_deref(), Some(*action));
        assert_eq!(steps[i].step.detail["by"], json!("rein"));
        assert_eq!(steps[i].step.detail["lever"], json!("stats-first"));
        assert_eq!(steps[i].step.reply, None);
    }
    assert!(
        first.find("Result of Rein's read 1").unwrap()
            < first.find("Result of Rein's table_stats call 1").unwrap()
    );
    // A figure is not a read, and the table is one input of three: the model wrote without
    // reading the notes, and the judge says so.
    let (passed, facts) = check_facts(&outcome, "inputs-read");
    assert!(!passed, "{facts}");
    assert!(facts.contains("notes/overview.md: never read"), "{facts}");
    assert!(
        facts.contains("data/tasks.csv: read in full at call 1 (by Rein before the first step"),
        "{facts}"
    );
    assert_eq!(outcome.status.to_string(), "fail");
    // The model's own steps: the write, the read back, finish.
    assert_eq!(outcome.figures.steps, 3);
}

#[test]
fn reads_come_first_and_one_progress_note_follows_the_last_call() {
    let h = Harness::new("desk_task");
    let script = write_summary(&gold_text()) + &read_summary() + &finish_line();
    let (outcome, model) = run(&h, &script, levers(true, true, true));
    assert_eq!(outcome.status.to_string(), "pass", "{:?}", outcome.verdict);
    let first = model.prompt(0);
    let last_read = first.find("Result of Rein's read 3").unwrap();
    let stats = first.find("Result of Rein's table_stats call 1").unwrap();
    assert!(last_read < stats, "{first}");
    assert_eq!(first.matches("Progress: ").count(), 1, "{first}");
    // inputs-first read the table already: stats-first reads nothing more.
    assert_eq!(the_event(&h, &outcome)["read"], json!([]));
    assert!(!first.contains("Result of Rein's read 4"), "{first}");
    assert!(first.rfind("Progress: ").unwrap() > stats, "{first}");
}

#[test]
fn a_count_rides_on_the_call_of_the_same_rows() {
    let h = Harness::desk_suite("report-sales-regions");
    let (outcome, model) = run(&h, &finish_line(), levers(true, true, false));
    let calls = the_event(&h, &outcome)["calls"].clone();
    // Four regions' sums and counts in four calls, and the whole file's sum, count and mean
    // in one.
    assert_eq!(calls.as_array().unwrap().len(), 5, "{calls}");
    assert!(
        calls
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["column"] == "amount"),
        "{calls}"
    );
    let first = model.prompt(0);
    assert!(
        first.contains(&esc(r#"The number of data rows of `sales/2024-08.csv` over the rows whose "region" is "North": "#)),
        "{first}"
    );
    assert!(
        first.contains("Result of Rein's table_stats call 5"),
        "{first}"
    );
}

/// report-sales-regions with its August table changed by `edit`.
fn sales_with(edit: impl Fn(&str) -> String) -> Harness {
    Harness::desk_suite_with("report-sales-regions", |fixtures| {
        let csv = fixtures.join("sales/2024-08.csv");
        let text = std::fs::read_to_string(&csv).unwrap();
        let changed = edit(&text);
        assert_ne!(changed, text);
        std::fs::write(&csv, changed).unwrap();
    })
}

#[test]
fn a_filter_value_spelled_in_another_case_too_is_withheld() {
    // One North order spelled `north`: table_stats's filter ignores case, the judge's does not,
    // so the tool's North sum and count are not the check's figures.
    let h = sales_with(|text| text.replacen(",North,", ",north,", 1));
    let (outcome, model) = run(&h, &finish_line(), levers(true, true, false));
    let e = the_event(&h, &outcome);
    assert_eq!(e["calls"].as_array().unwrap().len(), 5, "{e}");
    let withheld = e["withheld"].as_array().unwrap();
    assert_eq!(withheld.len(), 1, "{e}");
    assert_eq!(withheld[0]["call"]["filter_value"], "North", "{e}");
    let first = model.prompt(0);
    assert!(!first.contains(&esc(r#"is "North": "#)), "{first}");
    assert!(first.contains(&esc(r#"is "South": "#)), "{first}");
    assert!(
        first.contains("Result of Rein's table_stats call 4"),
        "{first}"
    );
}

#[test]
fn a_figure_the_judge_computes_otherwise_is_never_shown() {
    // One North amount is `n/a`: table_stats sums the numbers it finds, the judge refuses a
    // column with a cell that is not a number, so the tool's North sum is not the check's.
    let h = sales_with(|text| {
        let row = text.lines().find(|l| l.contains(",North,")).unwrap();
        let (head, _) = row.rsplit_once(',').unwrap();
        text.replacen(row, &format!("{head},n/a"), 1)
    });
    let (outcome, model) = run(&h, &finish_line(), levers(true, true, false));
    let e = the_event(&h, &outcome);
    assert_eq!(e["calls"].as_array().unwrap().len(), 5, "{e}");
    // The North sum and the sum over every row both hold the `n/a` row.
    let withheld = e["withheld"].as_array().unwrap();
    assert_eq!(withheld.len(), 2, "{e}");
    assert_eq!(withheld[0]["call"]["filter_value"], "North", "{e}");
    assert!(withheld[1]["call"].get("filter_value").is_none(), "{e}");
    assert!(
        withheld.iter().all(|w| w["why"]
            .as_str()
            .unwrap()
            .contains("is not the figure the check computes")),
        "{e}"
    );
    let first = model.prompt(0);
    assert!(!first.contains(&esc(r#"is "North": "#)), "{first}");
    assert!(first.contains(&esc(r#"is "South": "#)), "{first}");
    // Three calls shown, numbered as shown.
    assert!(
        first.contains("Result of Rein's table_stats call 3"),
        "{first}"
    );
    assert!(
        !first.contains("Result of Rein's table_stats call 4"),
        "{first}"
    );
}

#[test]
fn a_row_count_no_named_call_covers_is_left_to_the_model() {
    // Counting rows is the task here, and no hint names a call for it.
    let why = why_not_applied(&Harness::desk_suite("explore-csv-rows"), true);
    assert!(
        why.contains("no figure of the contract is one a table_stats hint names"),
        "{why}"
    );
    // The mean names its column and the count of all rows rides on it; the mobile rows' count
    // is a call of its own, over the filter's column, as its hint names it.
    let h = Harness::desk_suite("summarize-feedback");
    let (outcome, model) = run(&h, &finish_line(), levers(true, true, false));
    let e = the_event(&h, &outcome);
    assert_eq!(
        e["calls"],
        json!([
            {"path": "feedback/responses.csv", "column": "rating"},
            {"path": "feedback/responses.csv", "column": "platform",
             "filter_column": "platform", "filter_value": "mobile"}
        ]),
        "{e}"
    );
    assert_eq!(e["left"], json!([]), "{e}");
    let first = model.prompt(0);
    for line in [
        "The task's line with it: Responses: 16",
        "The task's line with it: Mobile responses: 7",
    ] {
        assert!(first.contains(line), "{line}: {first}");
    }
    assert!(
        first.contains(&esc(
            r#"The number of data rows of `feedback/responses.csv`: 16 (its "rows")"#
        )),
        "{first}"
    );
    assert!(
        first.contains(&esc(r#"The number of data rows of `feedback/responses.csv` over the rows whose "platform" is "mobile": "#)),
        "{first}"
    );
}

#[test]
fn a_count_of_every_row_rides_on_a_filtered_call_over_the_same_file() {
    // Every call of summarize-support-week picks some rows (open, high priority): the count of
    // all tickets is the `rows_in_file` of the first.
    let h = Harness::desk_suite("summarize-support-week");
    let (outcome, model) = run(&h, &finish_line(), levers(true, true, false));
    let e = the_event(&h, &outcome);
    assert_eq!(e["left"], json!([]), "{e}");
    assert_eq!(e["calls"].as_array().unwrap().len(), 2, "{e}");
    let first = model.prompt(0);
    assert!(
        first.contains(&esc(
            r#"The number of data rows of `support/week-45.csv`: 40 (its "rows_in_file")"#
        )),
        "{first}"
    );
    assert!(
        first.contains("The task's line with it: Tickets: 40"),
        "{first}"
    );
    // A row of empty cells, which the judge counts and the tool does not: the call that
    // carries the count is made and journaled, never shown.
    let h = Harness::desk_suite_with("summarize-support-week", |fixtures| {
        let csv = fixtures.join("support/week-45.csv");
        let mut text = std::fs::read_to_string(&csv).unwrap();
        text.push_str(",,,,\n");
        std::fs::write(&csv, text).unwrap();
    });
    let (_, model) = run(&h, &finish_line(), levers(true, true, false));
    let first = model.prompt(0);
    assert!(!first.contains("rows_in_file"), "{first}");
    assert!(!first.contains("Tickets: 4"), "{first}");
}

#[test]
fn rows_the_task_does_not_name_get_no_call_and_no_hint() {
    // The most common category is the answer of a withheld check; the task never names it,
    // so no hint or call names its rows.
    let h = Harness::desk_suite("summarize-support-week");
    for stats_first in [true, false] {
        let (_, model) = run(&h, &finish_line(), levers(true, stats_first, false));
        let first = model.prompt(0);
        // The table itself may be read (it says `sync` on its rows); no hint, call or figure
        // names the category.
        assert!(!first.contains(&esc(r#""filter_value":"sync""#)), "{first}");
        assert!(!first.contains(&esc(r#"is "sync""#)), "{first}");
    }
}

#[test]
fn without_room_in_the_first_prompt_rein_makes_no_call_at_all() {
    // The head is never trimmed: reads and calls that leave the steps no room are not made,
    // and none is made and then hidden, so the trace holds no read the model was not shown.
    let h = Harness::desk_suite("report-sales-regions");
    let mut model = PromptRecorder::new(&finish_line(), "stats_first.jsonl");
    let (outcome, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers(true, true, false);
        o.limits.attempts = 1;
        o.context_tokens = Some(4_000);
    });
    let e = the_event(&h, &outcome);
    assert!(
        e["not_applied"].as_str().unwrap().contains("no room"),
        "{e}"
    );
    assert!(!model.prompt(0).contains("Rein's"));
    let steps = h.journal.run_trace(outcome.run).unwrap().steps;
    assert!(steps.iter().all(|t| t.step.detail.get("by").is_none()));
    // The same mission with the default window has room.
    let h = Harness::desk_suite("report-sales-regions");
    let (outcome, _) = run(&h, &finish_line(), levers(true, true, false));
    assert_eq!(
        the_event(&h, &outcome)["calls"].as_array().unwrap().len(),
        5
    );
}

/// Why stats-first did not apply to a run of `h` (lever on, `facts-tools` as given), after
/// checking that no call of Rein's reached the prompt.
fn why_not_applied(h: &Harness, facts_tools: bool) -> String {
    let (outcome, model) = run(h, &finish_line(), levers(facts_tools, true, false));
    assert!(!model.prompt(0).contains("Rein's table_stats"));
    let e = the_event(h, &outcome);
    assert_eq!(e["calls"], json!([]), "{e}");
    e["not_applied"].as_str().unwrap().to_string()
}

#[test]
fn it_says_why_it_does_not_apply() {
    // Without table_stats in the run.
    let why = why_not_applied(&Harness::new("desk_task"), false);
    assert!(why.contains("does not offer table_stats"), "{why}");
    // Figures of matched lines across files: which lines count is the task's answer.
    let why = why_not_applied(&Harness::desk_suite("report-timesheets"), true);
    assert!(
        why.contains("no check of the contract is a figure of a table"),
        "{why}"
    );
    // A contract that judges the calls keeps them the model's.
    let h = Harness::with_edit("desk_task", |m| {
        m["checks"].as_array_mut().unwrap().push(json!({
            "id": "stats-called", "kind": "actions_called",
            "tools": [{"tool": "read_file", "path": "data/tasks.csv"}]
        }));
    });
    let why = why_not_applied(&h, true);
    assert!(
        why.contains("check `stats-called` judges the run's calls"),
        "{why}"
    );
    // Off: no event, no call.
    let h = Harness::new("desk_task");
    let (outcome, model) = run(&h, &finish_line(), levers(true, false, false));
    assert!(journal_events(&h.journal, outcome.run, "stats_first").is_empty());
    assert!(!model.prompt(0).contains("Rein's table_stats"));
}

#[test]
fn each_figure_comes_with_the_task_s_own_line_where_the_check_reads_it() {
    // report-expenses quotes 'Travel: N EUR' ... 'Claims: N'; the model had pasted Rein's
    // descriptions of the figures into the report instead of these lines.
    let h = Harness::desk_suite("report-expenses");
    let (_, model) = run(&h, &finish_line(), levers(true, true, false));
    let first = model.prompt(0);
    for line in [
        "The task's line with it: Travel: 2374.68 EUR",
        "The task's line with it: Meals: 469.72 EUR",
    ] {
        assert!(first.contains(line), "{line}: {first}");
    }
    // Said once, after the last result: each line apart (the 1.5B wrote them on one line).
    let apart = "Write each of the task's lines on a line of its own";
    assert_eq!(first.matches(apart).count(), 1, "{first}");
    assert!(
        first.rfind(apart).unwrap() > first.rfind("The task's line with it").unwrap(),
        "{first}"
    );
    // '<Region>: N EUR from N orders' names no label of its own: no line, the figure alone.
    let h = Harness::desk_suite("report-sales-regions");
    let (outcome, model) = run(&h, &finish_line(), levers(true, true, false));
    let calls = the_event(&h, &outcome)["calls"].as_array().unwrap().len();
    assert!(calls > 0, "stats-first made its calls");
    let first = model.prompt(0);
    assert!(first.contains("over the rows whose"), "{first}");
    assert!(!first.contains("The task's line with it: North"), "{first}");
    assert!(
        first.contains("The task's line with it: Revenue: "),
        "{first}"
    );
}

#[test]
fn named_rows_takes_room_only_for_calls_that_show_rows() {
    // The suite's lever set (dev16-s1) at 8,192 tokens on report-sales-regions: the five calls
    // filter by a region the task names, so none shows groups or rows. Counting `named-rows`'
    // extra room on each of them came to 5,422 tokens against a limit of 5,320, no call was
    // made, and the 1.5B summed the regions itself (every region's sum and count wrong).
    let suite = [
        "all=on",
        "repeat-penalty=off",
        "task-reminder=off",
        "change-before-finish=off",
        "document-facts=off",
        "source-lines=off",
        "inputs-first=off",
        "keep-inputs=off",
        "review-edits=off",
        "task-search=off",
        "whole-rewrite=off",
        "readable-figures=off",
        "line-edits=off",
        "no-echo=off",
        "row-query=off",
        "whole-reads=off",
        "change-list=off",
        "own-totals=off",
        "file-notes=off",
    ];
    let levers = Levers::from_settings(&suite).unwrap();
    assert!(levers.named_rows && levers.stats_first);
    let sales_regions = |context: u32| {
        let h = Harness::desk_suite("report-sales-regions");
        let mut model = PromptRecorder::new(&finish_line(), "stats_first.jsonl");
        let (outcome, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
            o.levers = levers;
            o.limits.attempts = 1;
            o.context_tokens = Some(context);
        });
        (the_event(&h, &outcome), model)
    };
    let (e, model) = sales_regions(8_192);
    assert!(e.get("not_applied").is_none(), "{e}");
    assert_eq!(e["calls"].as_array().unwrap().len(), 5, "{e}");
    let first = model.prompt(0);
    assert!(
        first.contains(&esc("The task's line with it: Revenue: ")),
        "{first}"
    );
    // The room is still counted: at 4,000 tokens nothing fits.
    let (e, _) = sales_regions(4_000);
    assert!(
        e["not_applied"].as_str().unwrap().contains("no room"),
        "{e}"
    );
}

#[test]
fn a_figure_is_shown_with_the_decimals_its_check_asks_for() {
    // report-energy-meters asks M-01's average with one decimal; the tool's mean is
    // 1073.333333. The 1.5B copied the tool's six decimals onto the line, which the judge fails.
    let h = Harness::desk_suite("report-energy-meters");
    let (outcome, model) = run(&h, &finish_line(), levers(true, true, false));
    let first = model.prompt(0);
    assert!(
        first.contains(&esc(": 1073.3 (its \"mean\")")),
        "{} ({})",
        support::stats_results(&first),
        the_event(&h, &outcome)
    );
    assert!(!first.contains("1073.33"), "{first}");
    // report-sales-regions asks two decimals: the mean 1333.677333 rounds up (a line field
    // holding two decimals cut it to 1333.67, wrong by the judge's 0.005), and a sum is padded.
    let h = Harness::desk_suite("report-sales-regions");
    let (_, model) = run(&h, &finish_line(), levers(true, true, false));
    let first = model.prompt(0);
    let lines = support::task_lines(&first);
    assert!(
        lines.iter().any(|l| l == "Average order: 1333.68 EUR"),
        "{lines:?}"
    );
    assert!(!first.contains("1333.677"), "{first}");
    // A figure whose check asks no decimals is shown as the tool gave it (desk_task's total).
    let h = Harness::new("desk_task");
    let (_, model) = run(&h, &finish_line(), levers(true, true, false));
    assert!(support::task_lines(&model.prompt(0)).contains(&"Total hours: 64".to_string()));
}

#[test]
fn a_sum_with_fewer_decimals_than_asked_is_padded_and_a_rounded_figure_the_judge_refuses_is_withheld(
) {
    // An amount of 100.5 makes a region's sum end in one decimal: shown with the two the task
    // asks for.
    let h = sales_with(|text| {
        let row = text.lines().find(|l| l.contains(",East,")).unwrap();
        let (head, _) = row.rsplit_once(',').unwrap();
        text.replacen(row, &format!("{head},100.5"), 1)
    });
    let (outcome, model) = run(&h, &finish_line(), levers(true, true, false));
    let e = the_event(&h, &outcome);
    assert_eq!(e["withheld"], json!([]), "{e}");
    let first = model.prompt(0);
    let results = support::stats_results(&first);
    let east = results
        .split("is \\\"East\\\": ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .unwrap();
    assert_eq!(east.split('.').nth(1).map(str::len), Some(2), "{results}");
    // The same table with a tolerance tighter than the rounding: 1333.68 is 0.0027 from the
    // mean, so the judge would fail it and nothing of that call is shown.
    let h = Harness::desk_suite_mission("report-sales-regions", |m| {
        support::check_mut(m, "average-order")["tolerance"] = json!(0.001);
    });
    let (outcome, model) = run(&h, &finish_line(), levers(true, true, false));
    let e = the_event(&h, &outcome);
    assert!(
        e["withheld"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["why"].as_str().unwrap().contains("(1333.68)")),
        "{e}"
    );
    assert!(!model.prompt(0).contains("1333.68"), "{}", model.prompt(0));
}
