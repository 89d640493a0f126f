#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! Red team of lever `row-query` (`table_rows` beside `table_stats`): the withholding of row
//! counts the judge makes otherwise, the lever's isolation and the policy over the tool. Each
//! test is one attack; a failing one is marked `HOLE:` and names the defect it exposes.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentOptions, Levers};
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::json;
use support::{allowed_tools, finish_line, line, outcomes, Harness, Ran};

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

fn call_deploys(where_: &str) -> String {
    line(
        "table_rows",
        json!({"path": "data/deploys-2024-06.csv", "where": where_}),
    ) + &finish_line()
}

/// Was a hole, mended: the withholding takes out `rows` only. The same answer lists the 4 matching rows
/// whole (`matching_rows`) and counts them per service and per date (`counts`, each summing
/// to 4): the disputed count the model is told to "count yourself" is handed over three more
/// ways, and a small model counting the listed rows writes 4 where the judge wants 3.
/// Expected: when `rows` is withheld, `matching_rows` and `counts` go with it (or the rows are
/// listed only as the judge's filter selects them).
#[test]
fn a_withheld_row_count_is_not_handed_over_by_the_listed_rows_or_the_counts() {
    let r = run(
        Harness::deploys_disputed(),
        &call_deploys("status = failed"),
        |_| {},
    );
    let shown = r.shown_result(1, 1, "table_rows");
    let result = support::first_json(&shown);
    assert!(result.get("rows").is_none(), "rows is withheld: {shown}");
    let leaks: Vec<(String, u64)> = support::row_figures(&result)
        .into_iter()
        .filter(|(_, n)| *n == 4)
        .collect();
    assert!(
        leaks.is_empty(),
        "the withheld count 4 still reaches the model as {leaks:?}: {shown}"
    );
}

/// Was a hole, mended: the withholding compares a `table_rows` count with the judge's only when `where` is
/// the one condition `status = failed`. A model that adds what the task says ("the June
/// deploys": `date >= 2024-06-01`), or repeats the condition, gets the same disputed count 4
/// in `rows`. Expected: a call whose conditions include the judge's filter column compared to
/// its value is checked against the judge over the rows it matched (the other conditions
/// holding for every row of the file, the count is the judge's count), or withheld.
#[test]
fn a_redundant_second_condition_does_not_let_a_disputed_count_through() {
    for where_ in [
        "status = failed and date >= 2024-06-01",
        "status = failed and status = failed",
        "status = failed and duration_s >= 0",
    ] {
        let r = run(Harness::deploys_disputed(), &call_deploys(where_), |_| {});
        let shown = r.shown_result(1, 1, "table_rows");
        let result = support::first_json(&shown);
        assert_ne!(
            result.get("rows"),
            Some(&json!(4)),
            "`{where_}` is the judge's filter over every June row and shows its disputed count: {shown}"
        );
    }
}

/// Spellings of the one condition the judge filters by are all compared (passes now).
#[test]
fn every_spelling_of_the_judge_s_one_condition_is_withheld() {
    for where_ in [
        "'failed' = status",
        "where Status == \"failed\"",
        "status = ` failed `",
        "`status` = FAILED",
        "status=failed",
    ] {
        let r = run(Harness::deploys_disputed(), &call_deploys(where_), |_| {});
        let shown = r.shown_result(1, 1, "table_rows");
        let result = support::first_json(&shown);
        assert!(result.get("rows").is_none(), "`{where_}`: {shown}");
        assert!(shown.contains("count them yourself"), "`{where_}`: {shown}");
    }
    // Undisputed (no FAILED row), the count is shown.
    let r = run(
        Harness::desk_suite("report-deploys"),
        &call_deploys("'failed' = status"),
        |_| {},
    );
    let result = support::first_json(&r.shown_result(1, 1, "table_rows"));
    assert_eq!(result["rows"], 3);
}

/// Per-value counts of a call that does not fix `status` split `failed` from `FAILED`, as
/// the judge does: the count the model reads for "status failed" is the judge's (passes now).
#[test]
fn per_value_counts_keep_the_judge_s_case() {
    let r = run(
        Harness::deploys_disputed(),
        &call_deploys("date >= 2024-06-01"),
        |_| {},
    );
    let result = support::first_json(&r.shown_result(1, 1, "table_rows"));
    let status = result["counts"]["status"].as_array().unwrap();
    let failed = status.iter().find(|v| v["value"] == "failed").unwrap();
    assert_eq!(failed["rows"], 3, "{result}");
}

/// Was a hole (visibility), mended: the withholding's note is added last, after `matching_rows`; a listing
/// of 20 wide rows pushes it past the 6,000 characters the prompt shows of a result, so the
/// model sees an answer without `rows` and never the word why. Expected: the note comes
/// first in the answer (or where `rows` was).
#[test]
fn the_withheld_note_survives_a_clipped_listing() {
    let h = Harness::desk_suite_with("report-deploys", |dir| {
        let p = dir.join("data/deploys-2024-06.csv");
        let mut text = "date,service,status,duration_s,note_a,note_b,note_c\n".to_string();
        let note = "x".repeat(90);
        for day in 1..=24 {
            let status = if day == 24 { "FAILED" } else { "failed" };
            text.push_str(&format!(
                "2024-06-{day:02},orders,{status},{},{note},{note},{note}\n",
                100 + day
            ));
        }
        text.push_str(&format!("2024-06-25,orders,ok,50,{note},{note},{note}\n"));
        std::fs::write(p, text).unwrap();
    });
    let r = run(h, &call_deploys("status = failed"), |_| {});
    let shown = r.shown_result(1, 1, "table_rows");
    assert!(
        !shown.contains("\"rows\":24") && !shown.contains("\"rows\": 24"),
        "{shown}"
    );
    assert!(
        shown.contains("count them yourself"),
        "the answer lost `rows` and its note was clipped away ({} characters shown)",
        shown.chars().count()
    );
}

/// The tool stays off in memory runs, with the lever off, and without table_stats (passes).
#[test]
fn table_rows_is_not_offered_in_memory_runs_or_without_table_stats() {
    let call = line(
        "table_rows",
        json!({"path": "data/tasks.csv", "where": "hours > 0"}),
    ) + &finish_line();
    let memory = run(Harness::new("desk_task"), &call, |o| o.memory = true);
    assert!(!allowed_tools(&memory.model.requests[0]).contains(&"table_rows".to_string()));
    assert!(!memory.model.prompt(0).contains("table_rows"));
    assert_ne!(outcomes(&memory.events)[0].1, "executed");
    // All levers on but facts-tools: no table_stats, so no table_rows.
    let all_but_facts = run(Harness::new("desk_task"), &call, |o| {
        o.levers = Levers {
            facts_tools: false,
            ..support::ALL_ON_BUT_NOTES
        };
    });
    assert!(
        !allowed_tools(&all_but_facts.model.requests[0]).contains(&"table_rows".to_string()),
        "{:?}",
        allowed_tools(&all_but_facts.model.requests[0])
    );
}

/// A read_file deny reaches table_rows through a glob, an ask rule asks, and no spelling of
/// the path slips past (passes).
#[test]
fn read_file_rules_cover_table_rows_through_globs_and_path_spellings() {
    for (rule, path) in [
        ("paths = [\"**/*.csv\"]", "data/tasks.csv"),
        ("paths = [\"data/tasks.csv\"]", "./data//tasks.csv"),
        ("paths = [\"data/tasks.csv\"]", "data/./tasks.csv"),
        ("paths = [\"data/tasks.csv\"]", "DATA/Tasks.CSV"),
        ("paths = [\"data\"]", "data/tasks.csv"),
        ("paths = [\"data/\"]", "data/sub/../tasks.csv"),
    ] {
        let policy = Policy::from_toml_str(
            &format!("[[rule]]\ntool = \"read_file\"\n{rule}\naction = \"deny\"\n"),
            "test policy",
            &rein_workspace::desk_registry(),
        )
        .unwrap();
        let script =
            line("table_rows", json!({"path": path, "where": "hours > 0"})) + &finish_line();
        let r = Ran::of(
            Harness::new("desk_task"),
            &script,
            &mut AllowAll,
            policy,
            |o| {
                o.levers = levers_on();
                o.limits.attempts = 1;
            },
        );
        let (tool, outcome) = outcomes(&r.events)[0].clone();
        assert_eq!(tool, "table_rows");
        assert_ne!(outcome, "executed", "{rule} / {path}");
        assert!(
            !r.model.prompt(1).contains("Release checklist"),
            "{rule} / {path}"
        );
    }
}
