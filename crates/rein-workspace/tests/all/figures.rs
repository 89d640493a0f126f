//! `table_stats` and `calculate` through the registry: the figures a model copies instead of
//! computing them.

use rein_workspace::{ToolError, ToolOutput};
use serde_json::{json, Value};

use crate::support::{desk, symlink, Fixture};

fn data(out: Result<ToolOutput, ToolError>) -> Value {
    match out {
        Ok(ToolOutput::Data(v)) => v,
        other => panic!("expected data, got {other:?}"),
    }
}

const TASKS: &str = "task,owner,hours,status\n\
Parser,Ana,12,done\n\
\"Docs, part 1\",Ben,\"1,000\",open\n\
Tests,Ana,7.5,done\n\
Deploy,Cy,n/a,open\n\
Review,Ben,,done\n";

#[test]
fn column_figures_are_exact_and_name_what_was_not_a_number() {
    let f = Fixture::new();
    f.write("data/tasks.csv", TASKS);
    let out = data(desk(
        &f.ws(),
        "table_stats",
        json!({"path": "data/tasks.csv", "column": "hours"}),
    ));
    assert_eq!(out["rows_in_file"], 5);
    assert_eq!(out["rows"], 5);
    assert_eq!(out["numeric_cells"], 3);
    assert_eq!(out["sum"], "1019.5");
    assert_eq!(out["min"], "7.5");
    assert_eq!(out["max"], "1000");
    assert_eq!(out["non_numeric_cells"], 1);
    assert_eq!(out["non_numeric_examples"], json!(["n/a"]));
}

#[test]
fn the_rows_holding_the_max_and_the_min_are_given_whole() {
    let f = Fixture::new();
    f.write("data/tasks.csv", TASKS);
    let ws = f.ws();
    let out = data(desk(
        &ws,
        "table_stats",
        json!({"path": "data/tasks.csv", "column": "hours"}),
    ));
    // "1,000" is the largest number, written with its thousands comma in a quoted cell.
    assert_eq!(
        out["max_rows"],
        json!([{"task": "Docs, part 1", "owner": "Ben", "hours": "1,000", "status": "open"}])
    );
    assert_eq!(
        out["min_rows"],
        json!([{"task": "Tests", "owner": "Ana", "hours": "7.5", "status": "done"}])
    );
    assert!(out.get("max_rows_note").is_none(), "{out}");
    // Under a filter, only its rows count: Ben's largest is not the file's.
    let ana = data(desk(
        &ws,
        "table_stats",
        json!({"path": "data/tasks.csv", "column": "hours", "filter_column": "owner", "filter_value": "ana"}),
    ));
    assert_eq!(ana["max_rows"][0]["task"], "Parser");
    // A column with no number has no max, so no rows either.
    let names = data(desk(
        &ws,
        "table_stats",
        json!({"path": "data/tasks.csv", "column": "owner"}),
    ));
    assert!(names.get("max_rows").is_none(), "{names}");
    assert!(names.get("min_rows").is_none(), "{names}");
}

#[test]
fn ties_at_the_max_are_counted_and_capped_and_long_cells_say_they_were_cut() {
    let f = Fixture::new();
    let long = "x".repeat(150);
    let mut csv = String::from("id,amount,memo\n");
    for i in 0..5 {
        csv.push_str(&format!("r{i},9.50,{long}\n"));
    }
    csv.push_str("r9,1,short\n");
    f.write("t.csv", &csv);
    let out = data(desk(
        &f.ws(),
        "table_stats",
        json!({"path": "t.csv", "column": "amount"}),
    ));
    let rows = out["max_rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{out}");
    assert_eq!(rows[0]["id"], "r0");
    assert_eq!(
        out["max_rows_note"],
        "5 rows hold this value; only the first 3 are listed"
    );
    let memo = rows[0]["memo"].as_str().unwrap();
    assert!(memo.ends_with("… (cut: 150 characters)"), "{memo}");
    assert_eq!(memo.chars().filter(|c| *c == 'x').count(), 100);
    assert_eq!(
        out["min_rows"],
        json!([{"id": "r9", "amount": "1", "memo": "short"}])
    );
}

#[test]
fn filter_and_group_by() {
    let f = Fixture::new();
    f.write("data/tasks.csv", TASKS);
    let ws = f.ws();
    let out = data(desk(
        &ws,
        "table_stats",
        json!({"path": "data/tasks.csv", "column": "Hours", "filter_column": "status", "filter_value": " DONE "}),
    ));
    assert_eq!(out["rows"], 3);
    assert_eq!(out["sum"], "19.5");
    assert_eq!(out["filter"], "status = done");
    let none = data(desk(
        &ws,
        "table_stats",
        json!({"path": "data/tasks.csv", "column": "hours", "filter_column": "owner", "filter_value": "Zed"}),
    ));
    assert_eq!(none["rows"], 0);
    assert!(none.get("sum").is_none(), "{none}");
    let grouped = data(desk(
        &ws,
        "table_stats",
        json!({"path": "data/tasks.csv", "column": "hours", "group_by": "owner"}),
    ));
    let groups = grouped["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 3);
    assert_eq!(groups[0]["group"], "Ana");
    assert_eq!(groups[0]["sum"], "19.5");
    assert_eq!(groups[1]["group"], "Ben");
    assert_eq!(groups[1]["sum"], "1000");
    assert_eq!(groups[1]["rows"], 2);
}

#[test]
fn bad_requests_are_refused_with_what_to_do() {
    let f = Fixture::new();
    f.write("data/tasks.csv", TASKS);
    f.write("data/bad.jsonl", "{\"a\": 1}\nnot json\n");
    f.write("data/blob.csv", b"a,b\n\xff\xfe\n");
    symlink(f.outside.join("secret.txt"), f.path("data/link.csv"));
    let ws = f.ws();
    let refusal = |args: Value| match desk(&ws, "table_stats", args) {
        Err(e) => e.to_string(),
        Ok(v) => panic!("expected a refusal, got {v:?}"),
    };
    let e = refusal(json!({"path": "data/tasks.csv", "column": "cost"}));
    assert!(
        e.contains("the columns are: task, owner, hours, status"),
        "{e}"
    );
    let e = refusal(json!({"path": "data/tasks.csv", "column": "hours", "filter_column": "owner"}));
    assert!(e.contains("give both or neither"), "{e}");
    let e = refusal(json!({"path": "data/bad.jsonl", "column": "a"}));
    assert!(e.contains("line 2"), "{e}");
    let e = refusal(json!({"path": "data/blob.csv", "column": "a"}));
    assert!(e.contains("not a UTF-8"), "{e}");
    let e = refusal(json!({"path": "data/missing.csv", "column": "a"}));
    assert!(e.contains("does not exist"), "{e}");
    // A link out of the workspace is not followed, whatever the tool.
    assert!(desk(
        &ws,
        "table_stats",
        json!({"path": "data/link.csv", "column": "a"})
    )
    .is_err());
}

#[test]
fn calculate_returns_the_value_or_says_why_not() {
    let f = Fixture::new();
    let ws = f.ws();
    let out = data(desk(
        &ws,
        "calculate",
        json!({"expression": "(12 + 7.5) * 2 / 3"}),
    ));
    assert_eq!(out["result"], "13");
    let out = data(desk(
        &ws,
        "calculate",
        json!({"expression": "1,200.25 + 0.1 + 0.2"}),
    ));
    assert_eq!(out["result"], "1200.55");
    let e = desk(&ws, "calculate", json!({"expression": "10 / (5 - 5)"})).unwrap_err();
    assert!(e.to_string().contains("no finite value"), "{e}");
}
