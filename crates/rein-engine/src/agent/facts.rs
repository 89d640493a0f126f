//! Lever `table-facts`: a read of a table file carries the totals of its numeric columns,
//! computed by Rein over the whole file, so a small model copies a sum instead of adding up a
//! column it was shown (the 1.5B wrote "Total hours: 72" for a column that sums to 64).

use rein_protocol::{GateOutcome, GateReport};
use rein_workspace::desk::{column_totals, TABLE_MAX_BYTES};
use serde_json::{json, Value};

use crate::checks::World;

/// Names of the files whose reads carry column totals.
const TABLE_SUFFIXES: &[&str] = &[".csv", ".tsv", ".jsonl", ".ndjson"];

/// Adds `column_totals` to the result of a `read_file` of a whole table file that ran. A read
/// cut off by the file-size cap, a file over the table cap, a file that is not a table or has
/// no numeric column gets nothing, and the result is left as it was.
pub fn add_table_facts(world: &dyn World, tool: &str, report: &mut GateReport) {
    if tool != "read_file"
        || !matches!(
            report.outcome,
            GateOutcome::Executed | GateOutcome::Replayed
        )
        || report.result.get("column_totals").is_some()
        || report.result.get("file_truncated").is_some()
    {
        return;
    }
    let Some(path) = report.result.get("path").and_then(|p| p.as_str()) else {
        return;
    };
    let lower = path.to_lowercase();
    if !TABLE_SUFFIXES.iter().any(|s| lower.ends_with(s)) {
        return;
    }
    let Ok(Some(bytes)) = world.read(path) else {
        return;
    };
    if bytes.len() as u64 > TABLE_MAX_BYTES {
        return;
    }
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return;
    };
    let Some(mut totals) = column_totals(path, text) else {
        return;
    };
    totals["note"] = json!(
        "Computed by Rein over every row of the file (not only the lines shown; a row labelled Total, Subtotal or Sum is left out and named): copy these figures rather than adding the column up yourself."
    );
    report.result["column_totals"] = totals;
}

/// Keeps the `column_totals` a read returned, replacing what an earlier read of the same file
/// gave.
pub fn remember_table_facts(kept: &mut Vec<(String, Value)>, report: &GateReport) {
    let (Some(totals), Some(path)) = (
        report.result.get("column_totals"),
        report.result.get("path").and_then(Value::as_str),
    ) else {
        return;
    };
    kept.retain(|(p, _)| p != path);
    kept.push((path.to_string(), totals.clone()));
}

/// The figures the model's own earlier reads of tables returned, for a retry that starts a fresh
/// transcript (they are what the model saw, never a value the judge expects): one line a column.
pub fn earlier_table_facts(kept: &[(String, Value)]) -> String {
    if kept.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "Figures your reads of tables returned earlier in this run (Rein computed them over every row):\n",
    );
    for (path, totals) in kept {
        let columns = totals["columns"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        for c in columns {
            let figure = |key: &str| c[key].as_str().unwrap_or("?").to_string();
            s.push_str(&format!(
                "- {path}, column \"{}\": sum {}, {} numbers, min {}, max {}\n",
                c["column"].as_str().unwrap_or_default(),
                figure("sum"),
                c["numbers"],
                figure("min"),
                figure("max"),
            ));
        }
        if let Some(left_out) = totals["left_out_total_rows"].as_array() {
            s.push_str(&format!(
                "  ({} row(s) labelled as totals were left out of {path}'s figures)\n",
                left_out.len()
            ));
        }
    }
    s
}
