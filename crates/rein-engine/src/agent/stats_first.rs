//! Lever `stats-first`: before the model's first step, Rein makes the `table_stats` calls that
//! the contract's figures of CSV columns name (the same calls the task's hints tell the model
//! to make), through the gate like any call, and the transcript starts with those calls and
//! their results, each result followed by the figure it gives in the requirement's words.
//!
//! The 1.5B, told "call table_stats with ... and copy the sum", wrote its own sums instead on
//! the desk suite's report tasks (report-timesheets, summarize-feedback: no `table_stats` call
//! in any attempt). The figures are facts of the frozen inputs, computed by the deterministic
//! tool the task already names; which line each goes on, and everything else in the
//! deliverable, stays the model's, and the judge checks the file as before. On a bench the
//! lever measures copying a given figure onto the asked line, not finding it: compare models
//! only with the same levers.
//!
//! Only figures of a table (`numeric_consistency` with `from: csv`); never a count of log
//! lines or matches, where which lines count is the task's answer.

use std::collections::BTreeSet;

use rein_protocol::{ChatMessage, GateOutcome, GateReport};
use rein_workspace::desk::Table;
use serde_json::{json, Map, Value};

use super::prompt::labelled_result;
use crate::checks::{table_stats_call, World};
use crate::mission::FrozenContract;

/// At most this many calls are made up front (each result is about 300 characters); the
/// journal says when figures were left to the model.
pub const STATS_FIRST_MAX_CALLS: usize = 12;

/// Fields of a `table_stats` answer the transcript shows: the figures and what they cover.
/// The distinct values (up to 50 of them per call) are left out to keep the prompt short.
const SHOWN_FIELDS: &[&str] = &[
    "path",
    "column",
    "filter",
    "rows_in_file",
    "rows",
    "numeric_cells",
    "sum",
    "mean",
    "mean_rounded_to_decimals",
    "min",
    "max",
    "non_numeric_cells",
    "non_numeric_examples",
    "note",
];

/// One call Rein makes, and the contract's figures it gives: (the figure in the requirement's
/// words, the field of the answer that holds it).
#[derive(Debug, Clone, PartialEq)]
pub struct StatsCall {
    pub params: Value,
    pub figures: Vec<(String, &'static str)>,
}

/// The calls Rein makes before the first step, in the contract's order, with a note when the
/// cap left some out; or why it makes none.
pub fn calls_to_make(
    contract: &FrozenContract,
    world: &dyn World,
    tools: &[String],
) -> Result<(Vec<StatsCall>, Option<String>), String> {
    if !tools.iter().any(|t| t == "table_stats") {
        return Err("the run does not offer table_stats (lever facts-tools)".into());
    }
    let wanted: Vec<_> = contract
        .mission
        .checks
        .iter()
        .filter_map(|c| table_stats_call(&c.spec))
        .collect();
    if wanted.is_empty() {
        return Err("no check of the contract is a figure of a table".into());
    }
    let mut calls: Vec<StatsCall> = Vec::new();
    for call in &wanted {
        let mut params = call.params.clone();
        if params.get("column").is_none() {
            match count_column(&params, &wanted, world) {
                Some(column) => params["column"] = column.into(),
                None => continue,
            }
        }
        match calls.iter_mut().find(|c| c.params == params) {
            Some(c) => c.figures.push((call.figure.clone(), call.field)),
            None => calls.push(StatsCall {
                params,
                figures: vec![(call.figure.clone(), call.field)],
            }),
        }
    }
    if calls.is_empty() {
        return Err("no table the contract's figures come from could be read".into());
    }
    let capped = (calls.len() > STATS_FIRST_MAX_CALLS).then(|| {
        format!(
            "{} calls; only the first {STATS_FIRST_MAX_CALLS} were made, the model makes the others",
            calls.len()
        )
    });
    calls.truncate(STATS_FIRST_MAX_CALLS);
    Ok((calls, capped))
}

/// The column a row count is asked over: any column counts the rows, so the column another
/// figure of the same rows names (one call then gives both), else the filter's, else the
/// table's first; `None` when the table cannot be read.
fn count_column(
    params: &Value,
    wanted: &[crate::checks::TableStatsCall],
    world: &dyn World,
) -> Option<String> {
    let same_rows = |p: &Value| {
        ["path", "filter_column", "filter_value"]
            .iter()
            .all(|k| p.get(k) == params.get(k))
    };
    if let Some(column) = wanted
        .iter()
        .filter(|w| same_rows(&w.params))
        .find_map(|w| w.params.get("column").and_then(Value::as_str))
    {
        return Some(column.to_string());
    }
    if let Some(column) = params.get("filter_column").and_then(Value::as_str) {
        return Some(column.to_string());
    }
    let path = params.get("path")?.as_str()?;
    let bytes = world.read(path).ok()??;
    let table = Table::parse(path, std::str::from_utf8(&bytes).ok()?).ok()?;
    table.header.first().cloned()
}

/// The turns the transcript's head carries for Rein's calls: each as the call the model would
/// have made, and its result with the figures it gives.
pub fn stats_turns(done: &[(StatsCall, GateReport)]) -> Vec<ChatMessage> {
    let mut turns = Vec::new();
    for (i, (call, report)) in done.iter().enumerate() {
        let figures: Vec<&str> = call.figures.iter().map(|(f, _)| f.as_str()).collect();
        let thought = format!("Get {} with table_stats.", figures.join("; "));
        // Written as the model writes an action (keys in the schema's order, its separators).
        turns.push(ChatMessage::assistant(format!(
            r#"{{"thought": {}, "action": "table_stats", "parameters": {}}}"#,
            json!(thought),
            call.params
        )));
        let label = format!(
            "Result of Rein's table_stats call {} (made for you before your first step)",
            i + 1
        );
        turns.push(ChatMessage::user(result_text(&label, call, report)));
    }
    turns
}

fn result_text(label: &str, call: &StatsCall, report: &GateReport) -> String {
    if report.outcome != GateOutcome::Executed {
        return labelled_result(label, report);
    }
    let Some(answer) = report.result.as_object() else {
        return labelled_result(label, report);
    };
    let shown: Map<String, Value> = SHOWN_FIELDS
        .iter()
        .filter_map(|k| answer.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect();
    let mut s = format!("{label}: executed\n{}", Value::Object(shown));
    let mut said = BTreeSet::new();
    for (figure, field) in &call.figures {
        if !said.insert((figure, field)) {
            continue;
        }
        match answer.get(*field) {
            Some(v) => {
                let v = v
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string());
                s.push_str(&format!("\n{}: {v} (its \"{field}\")", capitalised(figure)));
            }
            None => s.push_str(&format!(
                "\n{}: not given (no \"{field}\" in the answer)",
                capitalised(figure)
            )),
        }
    }
    s
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{Check, CheckSpec};

    fn spec(v: Value) -> CheckSpec {
        let c: Check = serde_json::from_value(v).unwrap();
        c.spec
    }

    fn numeric(id: &str, expected: Value) -> Value {
        json!({"id": id, "kind": "numeric_consistency", "path": "out/r.md",
               "stated": {"regex": "(?im)^x:\\s*(.*)$"}, "expected": expected})
    }

    #[test]
    fn a_count_rides_on_the_call_of_a_figure_of_the_same_rows() {
        let sum = table_stats_call(&spec(numeric(
            "s",
            json!({"from": "csv", "path": "s.csv", "op": "sum", "column": "amount",
                   "filter": {"column": "region", "equals": "North"}}),
        )))
        .unwrap();
        let count = table_stats_call(&spec(numeric(
            "c",
            json!({"from": "csv", "path": "s.csv", "op": "count",
                   "filter": {"column": "region", "equals": "North"}}),
        )))
        .unwrap();
        let wanted = vec![sum, count.clone()];
        let world =
            crate::checks::MemWorld::new().with_file("s.csv", "id,region,amount\n1,North,4\n");
        assert_eq!(
            count_column(&count.params, &wanted, &world).as_deref(),
            Some("amount")
        );
        // Another region's rows are other rows: the filter's own column counts them.
        let mut other = count.params.clone();
        other["filter_value"] = "South".into();
        assert_eq!(
            count_column(&other, &wanted, &world).as_deref(),
            Some("region")
        );
        // All rows, and no figure over them names a column: the table's first column.
        let all = json!({"path": "s.csv"});
        assert_eq!(count_column(&all, &wanted, &world).as_deref(), Some("id"));
        let missing = json!({"path": "gone.csv"});
        assert_eq!(count_column(&missing, &wanted, &world), None);
    }

    #[test]
    fn a_result_shows_the_figures_without_the_distinct_values() {
        let call = StatsCall {
            params: json!({"path": "s.csv", "column": "amount"}),
            figures: vec![
                ("the sum of the column \"amount\" of `s.csv`".into(), "sum"),
                ("the number of data rows of `s.csv`".into(), "rows"),
            ],
        };
        let report = GateReport {
            outcome: GateOutcome::Executed,
            result: json!({"path": "s.csv", "column": "amount", "rows_in_file": 3, "rows": 3,
                           "sum": "12.5", "distinct": [{"value": "4", "rows": 1}]}),
            reason: String::new(),
        };
        let text = result_text("Result", &call, &report);
        assert!(text.contains(r#""sum":"12.5""#), "{text}");
        assert!(!text.contains("distinct"), "{text}");
        assert!(
            text.contains("The sum of the column \"amount\" of `s.csv`: 12.5 (its \"sum\")"),
            "{text}"
        );
        assert!(
            text.contains("The number of data rows of `s.csv`: 3 (its \"rows\")"),
            "{text}"
        );
    }
}
