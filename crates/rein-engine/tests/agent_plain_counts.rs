#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `plain-counts` lever on the desk suite's explore tasks: Rein's `folder_stats` figures
//! (lever `folder-stats`) reach the model as plain lines, each figure after the words that say
//! what it counts, in the first prompt, after each step and in a retry; what `folder-stats`
//! withholds stays withheld, and the judge is as it was.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::json;
use support::{finish_line, journal_events, line, user_messages, Harness, Ran, FOLDER_STATS_LABEL};

const TREE: &str = "out/tree.md";
const GOLD_TREE: &str = "# Project tree\n\nJavaScript files: 7\nTest files: 2\nConfig files: 2\nDeepest file: app/src/db/migrations/001_init.sql\n";

fn levers(plain: bool) -> Levers {
    Levers {
        folder_stats: true,
        plain_counts: plain,
        ..Levers::DEFAULT
    }
}

fn run(h: Harness, script: &str, plain: bool) -> Ran {
    run_with(h, script, levers(plain))
}

fn run_with(h: Harness, script: &str, levers: Levers) -> Ran {
    Ran::one_attempt(h, script, &mut AllowAll, Policy::safe_default(), levers)
}

fn tree_answer() -> String {
    line("create_file", json!({"path": TREE, "content": GOLD_TREE}))
        + &line("read_file", json!({ "path": TREE }))
        + &finish_line()
}

fn last_message(r: &Ran, request: usize) -> String {
    user_messages(&r.model.requests[request])
        .last()
        .cloned()
        .unwrap()
}

#[test]
fn the_first_prompt_says_each_count_in_words_and_the_run_passes() {
    let on = run(
        Harness::desk_suite("explore-project-tree"),
        &tree_answer(),
        true,
    );
    assert!(on.out.passed(), "{}", on.out.reason());
    let shown = on.first_message_with(FOLDER_STATS_LABEL);
    for said in [
        "- Files in all: 13 (every extension, every sub-folder)",
        "- Files by extension: 7 .js files, 2 .yaml files,",
        "- app/test: 2 files (2 .js files)",
        "- app/config: 2 files (2 .yaml files)",
        "- File with the most folders above it: app/src/db/migrations/001_init.sql",
        "- app/src/db/pool.js: 2 lines\n",
    ] {
        assert!(shown.contains(said), "{said:?} not in {shown}");
    }
    // A file's line holds its lines (and rows) only: the 1.5B copied the whole line into the
    // list item its task asked for.
    assert!(!shown.contains("107 bytes"), "{shown}");
    assert!(!shown.contains("3 folders above it"), "{shown}");
    assert!(!shown.contains("\"extensions\""), "{shown}");
    // Off, the same call's result is the tool's JSON.
    let off = run(
        Harness::desk_suite("explore-project-tree"),
        &tree_answer(),
        false,
    );
    assert!(off.out.passed(), "{}", off.out.reason());
    let json_shown = off.first_message_with(FOLDER_STATS_LABEL);
    assert!(
        json_shown.contains("\"extensions\":{\"js\":7"),
        "{json_shown}"
    );
    assert!(!json_shown.contains("Files by extension"), "{json_shown}");
}

#[test]
fn the_counts_repeated_after_a_step_are_plain_too() {
    let script = line("read_file", json!({"path": "logs/api.log"})) + &finish_line();
    let r = run(Harness::desk_suite("explore-log-lines"), &script, true);
    let said = last_message(&r, 1);
    let start = said
        .find("Rein's counts from its folder_stats call")
        .unwrap_or_else(|| panic!("no counts after the step: {said}"));
    let figures = &said[start..];
    assert!(
        figures.contains("- Lines of all the files together: 96"),
        "{figures}"
    );
    assert!(
        figures.contains("- File with the most lines: logs/worker.log"),
        "{figures}"
    );
    assert!(
        figures.contains("- logs/nginx: 2 files (2 .log files)"),
        "{figures}"
    );
    assert!(!figures.contains("\"total_lines\""), "{figures}");
}

#[test]
fn a_withheld_row_count_is_not_said_in_words_either() {
    // A row of empty cells: the judge counts it, the tool does not; `folder-stats` takes the
    // tool's count out, with the totals and the largest it feeds.
    let r = run(Harness::csv_rows_disputed(), &finish_line(), true);
    let shown = r.first_message_with(FOLDER_STATS_LABEL);
    let customers = shown
        .lines()
        .find(|l| l.starts_with("- data/customers.csv:"))
        .unwrap_or_else(|| panic!("customers not listed: {shown}"));
    assert!(
        !customers.contains("14 rows") && !customers.contains("15 rows"),
        "{customers}"
    );
    assert!(customers.contains("count it yourself"), "{customers}");
    assert!(shown.contains("- data/orders.csv: 37 rows"), "{shown}");
    assert!(
        !shown.contains("Data rows of all the tables together"),
        "{shown}"
    );
    assert!(!shown.contains("File with the most data rows"), "{shown}");
}

#[test]
fn a_retry_repeats_the_counts_in_words() {
    let wrong = GOLD_TREE.replace("JavaScript files: 7", "JavaScript files: 13");
    let script = line("create_file", json!({"path": TREE, "content": wrong}))
        + &line("read_file", json!({ "path": TREE }))
        + &finish_line()
        + &finish_line();
    let r = Ran::of(
        Harness::desk_suite("explore-project-tree"),
        &script,
        &mut AllowAll,
        Policy::safe_default(),
        |o| {
            o.levers = Levers {
                monotone_attempts: true,
                ..levers(true)
            };
            o.limits.attempts = 2;
        },
    );
    assert!(!r.out.passed());
    let retry = r.retry_message();
    assert!(retry.contains("js-files"), "{retry}");
    assert!(
        retry.contains("- Files by extension: 7 .js files"),
        "{retry}"
    );
}

/// With `no-echo`, Rein's figures in words are a tool's result a deliverable may repeat (a file's
/// line is what a list of the logs says), while the sentence the repeat puts them under is Rein's
/// own and is still held.
#[test]
fn no_echo_lets_the_worded_figures_through_but_not_rein_s_sentence() {
    const LOG_LINES: &str = "out/log_lines.md";
    let gold = "# Log lines\n\n- logs/api.log: 23 lines\n- logs/cron.log: 9 lines\n- logs/nginx/access.log: 27 lines\n- logs/nginx/error.log: 6 lines\n- logs/worker.log: 31 lines\n\nLongest: logs/worker.log\nTotal lines: 96\n";
    let echo = "Rein's counts from its folder_stats call before your first step (copy these numbers): the logs are counted.\n";
    let with_no_echo = Levers {
        no_echo: true,
        ..levers(true)
    };
    let script = line("read_file", json!({"path": "logs/api.log"}))
        + &line(
            "create_file",
            json!({"path": LOG_LINES, "content": format!("{gold}{echo}")}),
        )
        + &line("create_file", json!({"path": LOG_LINES, "content": gold}))
        + &line("read_file", json!({ "path": LOG_LINES }))
        + &finish_line();
    let r = run_with(
        Harness::desk_suite("explore-log-lines"),
        &script,
        with_no_echo,
    );
    let holds = journal_events(&r.h.journal, r.out.run, "no_echo");
    assert_eq!(holds.len(), 1, "{holds:?}");
    let held = holds[0].to_string();
    assert!(held.contains("copy these numbers"), "{held}");
    assert!(!held.contains("logs/api.log: 23"), "{held}");
    let written = std::fs::read_to_string(r.h.workspace.join(LOG_LINES)).unwrap();
    assert_eq!(written, gold);
}
