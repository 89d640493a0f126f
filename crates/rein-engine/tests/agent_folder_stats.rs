#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `folder-stats` lever on the desk suite's tasks: before the first step of a task whose
//! contract counts files, lines or rows of its inputs, Rein calls `folder_stats` on the folder
//! the inputs share, through the gate, and the first prompt shows the counts; the judge is left
//! as it was, the policy holds for Rein's call as for the model's, and a figure a check counts
//! otherwise is never shown.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::{AllowAll, Approver};
use rein_engine::policy::Policy;
use serde_json::{json, Value};
use support::{
    desk_policy, finish_line, first_json, journal_events, line, user_messages, Harness, Ran,
    FOLDER_STATS_LABEL,
};

const TABLES: &str = "out/tables.md";
const GOLD_TABLES: &str = "# Tables\n\n- data/archive/orders-2022.csv: 52 rows\n- data/archive/orders-2023.csv: 44 rows\n- data/customers.csv: 14 rows\n- data/orders.csv: 37 rows\n- data/products.csv: 9 rows\n- data/suppliers.csv: 5 rows\n\nLargest: data/archive/orders-2022.csv\nOrders in total: 133\n";
const CSVS: [&str; 6] = [
    "data/archive/orders-2022.csv",
    "data/archive/orders-2023.csv",
    "data/customers.csv",
    "data/orders.csv",
    "data/products.csv",
    "data/suppliers.csv",
];

fn run_with(
    h: Harness,
    script: &str,
    approver: &mut dyn Approver,
    policy: Policy,
    on: bool,
) -> Ran {
    let levers = Levers {
        folder_stats: on,
        ..Levers::DEFAULT
    };
    Ran::one_attempt(h, script, approver, policy, levers)
}

fn run_on(task: &str, script: &str, on: bool) -> Ran {
    run_with(
        Harness::desk_suite(task),
        script,
        &mut AllowAll,
        Policy::safe_default(),
        on,
    )
}

fn tables_answer(read_first: bool) -> String {
    let mut s = String::new();
    if read_first {
        for p in CSVS {
            s += &line("read_file", json!({ "path": p }));
        }
    }
    s + &line(
        "create_file",
        json!({"path": TABLES, "content": GOLD_TABLES}),
    ) + &line("read_file", json!({ "path": TABLES }))
        + &finish_line()
}

/// Rein's `folder_stats` calls of the run: (parameters, detail).
fn reins(r: &Ran) -> Vec<(Value, Value)> {
    r.rein_calls("folder-stats", "folder_stats")
}

/// The first prompt's message with the result of Rein's call.
fn shown_message(r: &Ran) -> String {
    r.first_message_with(FOLDER_STATS_LABEL)
}

/// The result of Rein's call as the first prompt shows it, parsed.
fn shown_result(r: &Ran) -> Value {
    first_json(&shown_message(r))
}

fn listed<'v>(result: &'v Value, path: &str) -> &'v Value {
    result["list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} not listed in {result}"))
}

#[test]
fn the_first_prompt_shows_each_table_s_rows_and_the_run_passes() {
    let r = run_on("explore-csv-rows", &tables_answer(true), true);
    assert!(r.out.passed(), "{}", r.out.reason());
    // Rein's call is no step of the model's.
    assert_eq!(r.out.figures.steps, 9);
    let rein = reins(&r);
    assert_eq!(rein.len(), 1, "{rein:?}");
    assert_eq!(rein[0].0, json!({"path": "data"}));
    assert_eq!(rein[0].1["outcome"], "executed");
    let shown = shown_result(&r);
    assert_eq!(listed(&shown, "data/archive/orders-2022.csv")["rows"], 52);
    assert_eq!(listed(&shown, "data/suppliers.csv")["rows"], 5);
    assert_eq!(shown["most_rows"], json!(["data/archive/orders-2022.csv"]));
    assert_eq!(shown["folders"]["data/archive"]["files"], 2);
    assert!(listed(&shown, "data/README.md").get("rows").is_none());
    let events = journal_events(&r.h.journal, r.out.run, "folder_stats");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["withheld"], json!([]), "{:?}", events[0]);
    // The model may call the tool itself.
    assert!(r.model.prompt(0).contains("folder_stats"));
}

#[test]
fn the_logs_lines_their_total_and_the_longest_are_shown() {
    let r = run_on("explore-log-lines", &finish_line(), true);
    let shown = shown_result(&r);
    assert_eq!(shown["path"], "logs");
    assert_eq!(listed(&shown, "logs/nginx/access.log")["lines"], 27);
    assert_eq!(shown["total_lines"], 96);
    assert_eq!(shown["most_lines"], json!(["logs/worker.log"]));
}

#[test]
fn without_the_lever_nothing_is_counted_and_the_tool_is_not_offered() {
    let r = run_on("explore-csv-rows", &tables_answer(true), false);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert!(reins(&r).is_empty());
    assert!(!r.model.prompt(0).contains("folder_stats"));
    assert!(journal_events(&r.h.journal, r.out.run, "folder_stats").is_empty());
}

#[test]
fn the_judge_is_as_it_was_rein_s_count_reads_no_input() {
    // Every figure copied from Rein's count, no input read: inputs-read still fails.
    let r = run_on("explore-csv-rows", &tables_answer(false), true);
    assert!(!r.out.passed());
    assert!(r.out.reason().contains("inputs-read"), "{}", r.out.reason());
    assert!(!r.out.reason().contains("rows-data"), "{}", r.out.reason());
}

#[test]
fn a_task_that_counts_nothing_gets_no_call_and_the_journal_says_why() {
    let r = run_on("search-host-inventory", &finish_line(), true);
    assert!(reins(&r).is_empty());
    let events = journal_events(&r.h.journal, r.out.run, "folder_stats");
    assert_eq!(events.len(), 1);
    let why = events[0]["not_applied"].as_str().unwrap();
    assert!(why.contains("no check counts"), "{why}");
}

#[test]
fn a_check_of_the_run_s_calls_keeps_the_count_the_model_s() {
    let h = Harness::desk_suite_edited(
        "explore-csv-rows",
        |_| {},
        |m| {
            m["tools"]
                .as_array_mut()
                .unwrap()
                .push(json!("folder_stats"));
            m["checks"].as_array_mut().unwrap().push(json!({
                "id": "counted-itself",
                "kind": "actions_called",
                "tools": ["folder_stats"]
            }));
        },
    );
    let r = run_with(
        h,
        &finish_line(),
        &mut AllowAll,
        Policy::safe_default(),
        true,
    );
    assert!(reins(&r).is_empty());
    let events = journal_events(&r.h.journal, r.out.run, "folder_stats");
    let why = events[0]["not_applied"].as_str().unwrap();
    assert!(why.contains("counted-itself"), "{why}");
}

#[test]
fn a_row_count_the_judge_makes_otherwise_is_withheld_with_its_totals() {
    // A row of empty cells: the judge counts it, the tool does not.
    let h = Harness::csv_rows_disputed();
    let r = run_with(
        h,
        &finish_line(),
        &mut AllowAll,
        Policy::safe_default(),
        true,
    );
    let shown = shown_result(&r);
    let customers = listed(&shown, "data/customers.csv");
    assert!(customers.get("rows").is_none(), "{customers}");
    assert!(customers["withheld"]
        .as_str()
        .unwrap()
        .contains("count it yourself"));
    assert_eq!(listed(&shown, "data/orders.csv")["rows"], 37);
    assert!(shown.get("total_rows").is_none(), "{shown}");
    assert!(shown.get("most_rows").is_none(), "{shown}");
    let events = journal_events(&r.h.journal, r.out.run, "folder_stats");
    assert_eq!(events[0]["withheld"], json!(["data/customers.csv"]));
    // The journal's step shows what the model was shown, not the tool's raw count.
    let (_, step) = &reins(&r)[0];
    for field in ["result", "summary"] {
        let journalled = step[field].as_str().unwrap();
        assert!(!journalled.contains("total_rows"), "{field}: {journalled}");
    }
    assert!(step["result"]
        .as_str()
        .unwrap()
        .contains("count it yourself"));
}

#[test]
fn the_policy_holds_for_rein_s_count() {
    // Skipped (a deny that shows names): named, never read; hidden: only counted.
    let policy = desk_policy(
        r#"
[[rule]]
tool = "read_file"
action = "deny"
paths = ["data/customers.csv"]
hide_names = false

[[rule]]
tool = "read_file"
action = "deny"
paths = ["data/archive/**"]
hide_names = true
"#,
    );
    let r = run_with(
        Harness::desk_suite("explore-csv-rows"),
        &finish_line(),
        &mut AllowAll,
        policy,
        true,
    );
    let shown = shown_result(&r);
    let customers = listed(&shown, "data/customers.csv");
    assert_eq!(customers["skipped_by_policy"], true, "{customers}");
    assert!(customers.get("rows").is_none() && customers.get("bytes").is_none());
    assert_eq!(shown["hidden_by_policy"], 2, "{shown}");
    assert!(!shown.to_string().contains("orders-2022"), "{shown}");
    assert!(shown["folders"].get("data/archive").is_none(), "{shown}");
}

#[test]
fn every_explore_task_is_counted_on_the_folder_its_inputs_share() {
    for (task, folder) in [
        ("explore-archive-years", "archive"),
        // Its inputs include shared/defaults.ini beside services/.
        ("explore-config-formats", "."),
        ("explore-csv-rows", "data"),
        ("explore-log-lines", "logs"),
        ("explore-project-tree", "app"),
        ("explore-share-cleanup", "share"),
    ] {
        let r = run_on(task, &finish_line(), true);
        let rein = reins(&r);
        assert_eq!(rein.len(), 1, "{task}: {rein:?}");
        assert_eq!(rein[0].0["path"], folder, "{task}");
        assert_eq!(shown_result(&r)["truncated"], false, "{task}");
    }
}

#[test]
fn with_the_counts_shown_the_progress_note_does_not_send_the_model_searching() {
    // `find-inputs` tells a task among many inputs to search for the few that matter; a task
    // that counts them all gets the usual walk through its inputs instead.
    let run = |folder_stats: bool| {
        Ran::of(
            Harness::desk_suite("explore-archive-years"),
            &(line("read_file", json!({"path": "archive/README.txt"})) + &finish_line()),
            &mut AllowAll,
            Policy::safe_default(),
            |o| {
                o.levers = Levers {
                    folder_stats,
                    find_inputs: true,
                    ..Levers::DEFAULT
                };
                o.limits.attempts = 1;
            },
        )
    };
    let searching = "with search_text";
    let without = run(false).model.prompt(1);
    assert!(without.contains(searching), "{without}");
    let with = run(true).model.prompt(1);
    assert!(!with.contains(searching), "{with}");
    assert!(with.contains("not yet read: archive/"), "{with}");
}

#[test]
fn with_read_cited_a_table_written_before_its_tables_are_read_is_held() {
    // Given every row count, the 1.5B wrote the table after reading only the README; the write
    // names six unread inputs, and `inputs-read` would fail for good.
    let script = line(
        "create_file",
        json!({"path": TABLES, "content": GOLD_TABLES}),
    ) + &tables_answer(true);
    let run = |read_cited: bool| {
        Ran::of(
            Harness::desk_suite("explore-csv-rows"),
            &script,
            &mut AllowAll,
            Policy::safe_default(),
            |o| {
                o.levers = Levers {
                    folder_stats: true,
                    read_cited,
                    ..Levers::DEFAULT
                };
                o.limits.attempts = 1;
            },
        )
    };
    let held = run(true);
    assert!(held.out.passed(), "{}", held.out.reason());
    let steps = support::outcomes(&held.events);
    assert_eq!(
        steps[1],
        ("create_file".into(), "invalid".into()),
        "{steps:?}"
    );
    let events = journal_events(&held.h.journal, held.out.run, "read_cited");
    assert_eq!(
        events[0]["unread"].as_array().unwrap().len(),
        6,
        "{events:?}"
    );
    // Without the hold the first write stands and the judge fails it, as before.
    let written = run(false);
    assert!(!written.out.passed());
    assert!(
        written.out.reason().contains("inputs-read"),
        "{}",
        written.out.reason()
    );
}

#[test]
fn a_total_the_task_adds_up_only_part_of_is_withheld_with_a_word_on_adding() {
    // `Orders in total` adds up three of the six tables: the 1.5B copied the rows of all six
    // (161) for it. The rows of each table and the largest stay.
    let r = run_on("explore-csv-rows", &tables_answer(true), true);
    assert!(r.out.passed(), "{}", r.out.reason());
    let shown = shown_result(&r);
    assert!(shown.get("total_rows").is_none(), "{shown}");
    assert!(shown.get("total_lines").is_none(), "{shown}");
    assert_eq!(shown["most_rows"], json!(["data/archive/orders-2022.csv"]));
    assert_eq!(listed(&shown, "data/orders.csv")["rows"], 37);
    let said = shown["withheld"].as_str().unwrap();
    assert!(said.contains("adds up only some"), "{said}");
    assert!(said.contains("calculate"), "{said}");
    let events = journal_events(&r.h.journal, r.out.run, "folder_stats");
    assert_eq!(
        events[0]["withheld_totals"],
        json!(["total_lines", "total_rows"])
    );
}

#[test]
fn a_total_a_check_asks_for_whole_or_counts_of_files_do_not_withhold() {
    // explore-log-lines asks for the sum over every log: its total stays (the test above on
    // the logs). explore-archive-years counts letters per year, a count of files: no line of
    // the task adds up lines, and nothing is withheld.
    let r = run_on("explore-archive-years", &finish_line(), true);
    let shown = shown_result(&r);
    assert!(shown.get("total_lines").is_some(), "{shown}");
    assert!(shown.get("withheld").is_none(), "{shown}");
    let events = journal_events(&r.h.journal, r.out.run, "folder_stats");
    assert_eq!(events[0]["withheld_totals"], json!([]));
}

#[test]
fn the_counts_are_repeated_after_each_step_where_the_model_writes_from_them() {
    // After reading the five logs the 1.5B wrote the longest log's 31 lines as the total of 96
    // that Rein's result, by then far back in the prompt, gave.
    let script = line("read_file", json!({"path": "logs/api.log"}))
        + &line("read_file", json!({"path": "logs/cron.log"}))
        + &finish_line();
    let last_message =
        |r: &Ran, i: usize| user_messages(&r.model.requests[i]).last().cloned().unwrap();
    let on = run_on("explore-log-lines", &script, true);
    for i in [1, 2] {
        let said = last_message(&on, i);
        let figures = said
            .lines()
            .find(|l| l.starts_with("Rein's counts of logs"))
            .unwrap_or_else(|| panic!("no counts after step {i}: {said}"));
        let repeated = first_json(figures);
        assert_eq!(repeated["total_lines"], 96, "{figures}");
        assert_eq!(repeated["most_lines"], json!(["logs/worker.log"]));
        assert_eq!(repeated["folders"]["logs/nginx"]["files"], 2);
        // Each file's lines, not its bytes or depth.
        let api = &repeated["list"][0];
        assert_eq!(api["path"], "logs/api.log", "{figures}");
        assert_eq!(api["lines"], 23, "{figures}");
        assert!(
            api.get("bytes").is_none() && api.get("depth").is_none(),
            "{figures}"
        );
    }
    // What is withheld is not repeated either.
    let tables = run_on("explore-csv-rows", &tables_answer(true), true);
    let said = last_message(&tables, 1);
    let figures = said
        .lines()
        .find(|l| l.starts_with("Rein's counts of data"))
        .unwrap();
    assert!(!figures.contains("total_rows\":"), "{figures}");
    assert!(figures.contains("adds up only some"), "{figures}");
    let off = run_on("explore-log-lines", &script, false);
    assert!(!last_message(&off, 1).contains("Rein's counts"));
}

#[test]
fn a_retry_after_a_failed_verdict_repeats_the_counts() {
    // The 1.5B wrote `Longest: logs/nginx/access.log` where `most_lines` names worker.log, and
    // its retries, told only that the line was wrong, changed it to another wrong log.
    const LOGS: [&str; 5] = [
        "logs/api.log",
        "logs/cron.log",
        "logs/nginx/access.log",
        "logs/nginx/error.log",
        "logs/worker.log",
    ];
    let answer = "# Log lines\n- logs/api.log: 23\n- logs/cron.log: 9\n- logs/nginx/access.log: 27\n- logs/nginx/error.log: 6\n- logs/worker.log: 31\n\nLongest: logs/nginx/access.log\nTotal lines: 96\n";
    let mut script: String = LOGS
        .iter()
        .map(|p| line("read_file", json!({ "path": p })))
        .collect();
    script += &line(
        "create_file",
        json!({"path": "out/log_lines.md", "content": answer}),
    );
    script += &line("read_file", json!({"path": "out/log_lines.md"}));
    script += &finish_line();
    script += &finish_line();
    let r = Ran::of(
        Harness::desk_suite("explore-log-lines"),
        &script,
        &mut AllowAll,
        Policy::safe_default(),
        |o| {
            o.levers = Levers {
                folder_stats: true,
                monotone_attempts: true,
                ..Levers::DEFAULT
            };
            o.limits.attempts = 2;
        },
    );
    assert!(!r.out.passed());
    let retry = r.retry_message();
    assert!(retry.contains("longest"), "{retry}");
    let figures = retry
        .lines()
        .find(|l| l.starts_with("Rein's counts of logs"))
        .unwrap_or_else(|| panic!("no counts in the retry: {retry}"));
    assert_eq!(
        first_json(figures)["most_lines"],
        json!(["logs/worker.log"])
    );
}
