#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Lever `row-query`: a run offered `table_stats` is offered `table_rows` too, whose answers go
//! through the gate as reads and keep the withholding of row counts the judge makes otherwise.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentOptions, Levers};
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::{json, Value};
use support::{allowed_tools, finish_line, line, outcomes, Harness, Ran};

fn levers(row_query: bool, facts_tools: bool) -> Levers {
    Levers {
        facts_tools,
        row_query,
        ..Levers::DEFAULT
    }
}

fn run(h: Harness, script: &str, levers: Levers, tweak: impl FnOnce(&mut AgentOptions)) -> Ran {
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = 1;
        tweak(o);
    })
}

#[test]
fn table_rows_is_offered_beside_table_stats_only_with_the_lever() {
    let call = line(
        "table_rows",
        json!({"path": "data/tasks.csv", "where": "status = planned"}),
    ) + &finish_line();
    let on = run(Harness::new("desk_task"), &call, levers(true, true), |_| {});
    assert!(allowed_tools(&on.model.requests[0]).contains(&"table_rows".to_string()));
    assert!(on.model.prompt(0).contains("- table_rows {"));
    assert_eq!(
        outcomes(&on.events)[0],
        ("table_rows".into(), "executed".into())
    );
    let shown = on.shown_result(1, 1, "table_rows");
    let result = support::first_json(&shown);
    assert_eq!(result["rows"], 2, "{shown}");
    assert_eq!(result["matching_rows"][1]["task"], "Release checklist");
    assert_eq!(
        result["counts"]["owner"],
        json!([{"value": "Maya", "rows": 1}, {"value": "Tom", "rows": 1}])
    );

    for (lever, facts) in [(false, true), (true, false), (false, false)] {
        let off = run(
            Harness::new("desk_task"),
            &call,
            levers(lever, facts),
            |_| {},
        );
        assert!(
            !off.model.prompt(0).contains("table_rows"),
            "{lever} {facts}"
        );
        assert_eq!(
            outcomes(&off.events)[0].1,
            "invalid",
            "row-query {lever}, facts-tools {facts}"
        );
    }
}

#[test]
fn a_call_without_a_comparison_is_refused_with_how_to_write_one() {
    let script = line(
        "table_rows",
        json!({"path": "data/tasks.csv", "where": "planned tasks"}),
    ) + &finish_line();
    let r = run(
        Harness::new("desk_task"),
        &script,
        levers(true, true),
        |_| {},
    );
    let (tool, outcome) = outcomes(&r.events)[0].clone();
    assert_eq!(tool, "table_rows");
    assert_ne!(outcome, "executed");
    let prompt = r.model.prompt(1);
    assert!(prompt.contains("has no comparison"), "{prompt}");
    assert!(prompt.contains("e.g. `status = open`"), "{prompt}");
}

#[test]
fn a_read_file_deny_covers_table_rows() {
    let script = line(
        "table_rows",
        json!({"path": "data/tasks.csv", "where": "hours > 0"}),
    ) + &finish_line();
    let policy = Policy::from_toml_str(
        "[[rule]]\ntool = \"read_file\"\npaths = [\"data/**\"]\naction = \"deny\"\n",
        "test policy",
        &rein_workspace::desk_registry(),
    )
    .unwrap();
    let r = Ran::of(
        Harness::new("desk_task"),
        &script,
        &mut AllowAll,
        policy,
        |o| {
            o.levers = levers(true, true);
            o.limits.attempts = 1;
        },
    );
    let (tool, outcome) = outcomes(&r.events)[0].clone();
    assert_eq!(tool, "table_rows");
    assert_eq!(outcome, "denied", "{:?}", outcomes(&r.events));
    assert!(!r.model.prompt(1).contains("Release checklist"));
}

/// report-deploys counts the June deploys whose status is `failed` (case counts for the
/// judge, not for the tool): with a `FAILED` row added, a `table_rows` call with that condition
/// (alone or with others) is not shown its matches, as `table_stats` with that filter is not.
#[test]
fn a_row_count_the_judge_makes_otherwise_is_withheld_from_table_rows() {
    let call = |where_: &str| {
        line(
            "table_rows",
            json!({"path": "data/deploys-2024-06.csv", "where": where_}),
        ) + &finish_line()
    };
    for disputed in [true, false] {
        for where_ in [
            "status = failed",
            "STATUS == 'Failed'",
            "status = failed and duration_s > 0",
        ] {
            let h = Harness::desk_suite_with("report-deploys", |dir| {
                if disputed {
                    support::add_failed_deploy(dir);
                }
            });
            let r = run(h, &call(where_), levers(true, true), |_| {});
            let shown = r.shown_result(1, 1, "table_rows");
            assert!(shown.contains("executed"), "{shown}");
            let result: Value = support::first_json(&shown);
            let withheld = disputed;
            assert_eq!(
                result.get("rows").is_none(),
                withheld,
                "disputed {disputed}, {where_}: {shown}"
            );
            assert_eq!(shown.contains("yourself"), withheld, "{shown}");
            for listed in ["matching_rows", "counts"] {
                assert_eq!(result.get(listed).is_none(), withheld, "{where_}: {shown}");
            }
            assert!(result.get("rows_in_file").is_some(), "{shown}");
        }
    }
}

/// With the lever a filtered `table_stats` answer also says how its rows split over the
/// table's short columns (report-gradebook's fails per course are the `result` counts of one
/// course's rows); without it the answer is as before the lever.
#[test]
fn a_filtered_table_stats_answer_counts_its_rows_per_value_only_with_the_lever() {
    let call = line(
        "table_stats",
        json!({"path": "data/tasks.csv", "column": "hours",
               "filter_column": "owner", "filter_value": "priya"}),
    ) + &finish_line();
    for lever in [true, false] {
        let r = run(
            Harness::new("desk_task"),
            &call,
            levers(lever, true),
            |_| {},
        );
        let shown = r.shown_result(1, 1, "table_stats");
        let result = support::first_json(&shown);
        assert_eq!(result["rows"], 2, "{shown}");
        assert_eq!(result.get("counts").is_some(), lever, "{shown}");
        if lever {
            assert_eq!(
                result["counts"]["status"],
                json!([{"value": "done", "rows": 1}, {"value": "in progress", "rows": 1}])
            );
            assert!(
                result["counts"].get("owner").is_none(),
                "fixed by the filter"
            );
        }
    }
}

/// The per-value counts of a filtered `table_stats` answer whose row count is withheld (the
/// judge reads the filter otherwise) go with it: they add up to the withheld count.
#[test]
fn a_withheld_table_stats_count_takes_its_per_value_counts_with_it() {
    let call = line(
        "table_stats",
        json!({"path": "data/deploys-2024-06.csv", "column": "duration_s",
               "filter_column": "status", "filter_value": "failed"}),
    ) + &finish_line();
    let h = Harness::deploys_disputed();
    let r = run(h, &call, levers(true, true), |_| {});
    let shown = r.shown_result(1, 1, "table_stats");
    let result = support::first_json(&shown);
    assert!(result.get("rows").is_none(), "{shown}");
    assert!(result.get("counts").is_none(), "{shown}");
    assert!(shown.contains("count them yourself"), "{shown}");
}
