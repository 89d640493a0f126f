#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `asked-counts` lever on the desk suite's explore tasks: of Rein's `folder_stats`
//! figures (lever `folder-stats`) the model is shown only the kinds the contract's checks
//! count, in the first prompt and the figures repeated after each step, JSON or words
//! (`plain-counts`); the journal keeps the whole result, and the judge is as it was.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::json;
use support::{finish_line, first_json, line, user_messages, Harness, Ran, FOLDER_STATS_LABEL};

fn run(task: &str, script: &str, asked: bool, plain: bool) -> Ran {
    Ran::one_attempt(
        Harness::desk_suite(task),
        script,
        &mut AllowAll,
        Policy::safe_default(),
        Levers {
            folder_stats: true,
            asked_counts: asked,
            plain_counts: plain,
            ..Levers::DEFAULT
        },
    )
}

fn after_first_step(r: &Ran) -> String {
    user_messages(&r.model.requests[1]).last().cloned().unwrap()
}

#[test]
fn a_task_that_counts_letters_is_shown_no_line_total() {
    // The 1.5B wrote `Total letters: 96`, the archive's total of lines.
    let script = line("read_file", json!({"path": "archive/README.txt"})) + &finish_line();
    let on = run("explore-archive-years", &script, true, false);
    let shown = first_json(&on.first_message_with(FOLDER_STATS_LABEL));
    assert_eq!(shown["files"], 20, "{shown}");
    assert!(shown.get("total_lines").is_none(), "{shown}");
    assert!(shown.get("most_lines").is_none(), "{shown}");
    let file = &shown["list"][0];
    assert!(
        file.get("lines").is_none() && file.get("bytes").is_none(),
        "{file}"
    );
    assert!(file.get("depth").is_some(), "{file}");
    assert!(
        shown["folders"]["archive/2022"]["files"].is_number(),
        "{shown}"
    );
    let message = after_first_step(&on);
    let repeated = message
        .lines()
        .find(|l| l.starts_with("Rein's counts of archive"))
        .unwrap_or_else(|| panic!("no counts after the step: {message}"));
    assert!(repeated.contains("\"files\":20"), "{repeated}");
    assert!(!repeated.contains("lines"), "{repeated}");
    // The journal keeps what the tool gave.
    let journalled = on.rein_calls("folder-stats", "folder_stats")[0].1["result"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(journalled.contains("total_lines"), "{journalled}");
    // Off, the total of lines is shown as before.
    let off = run("explore-archive-years", &script, false, false);
    let shown_off = first_json(&off.first_message_with(FOLDER_STATS_LABEL));
    assert!(shown_off["total_lines"].is_number(), "{shown_off}");
}

#[test]
fn the_kinds_a_check_counts_are_still_shown_in_words() {
    let logs = run("explore-log-lines", &finish_line(), true, true);
    let said = logs.first_message_with(FOLDER_STATS_LABEL);
    assert!(
        said.contains("- Lines of all the files together: 96"),
        "{said}"
    );
    assert!(said.contains("- logs/api.log: 23 lines\n"), "{said}");
    assert!(!said.contains(" bytes,"), "{said}");
    let tables = run("explore-csv-rows", &finish_line(), true, true);
    let said = tables.first_message_with(FOLDER_STATS_LABEL);
    assert!(said.contains("- data/suppliers.csv: 5 rows\n"), "{said}");
    // Its `Orders in total` counts matching lines, stated in rows: no line count is asked.
    assert!(!said.contains("Lines of all"), "{said}");
    assert!(!said.contains("5 rows, "), "{said}");
    assert!(!said.contains("- data/README.md: 3 lines"), "{said}");
    assert!(!said.contains(" bytes,"), "{said}");
    let letters = run("explore-archive-years", &finish_line(), true, true);
    let said = letters.first_message_with(FOLDER_STATS_LABEL);
    assert!(!said.contains("Lines of all"), "{said}");
    assert!(!said.contains(" lines"), "{said}");
    assert!(said.contains("- Files in all: 20"), "{said}");
}

#[test]
fn the_gold_deliverable_still_passes_with_the_lever_on() {
    let gold = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../suites/desk/explore-project-tree/judge/gold/files/out/tree.md"),
    )
    .unwrap();
    let script = line(
        "create_file",
        json!({"path": "out/tree.md", "content": gold}),
    ) + &line("read_file", json!({"path": "out/tree.md"}))
        + &finish_line();
    let r = run("explore-project-tree", &script, true, true);
    assert!(r.out.passed(), "{}", r.out.reason());
}
