//! `table_rows`: the rows of a CSV, TSV or JSON-lines file where conditions hold, counted and
//! listed, with how many of them hold each value of the table's short columns. A small model
//! asked for "every SKU whose on_hand is at or below its reorder_at" or "the fails per course"
//! compares and counts rows itself, and gets them wrong (the 1.5B wrote two of report-gradebook's
//! three fail counts wrong after one `table_stats` call over all the fails). The comparisons are
//! made here, on exact decimals.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::row_where::{parse_where, row_matches, WHERE_MAX_CHARS};
use super::table::{cell, read_table, shown_cell, Table, EXTREME_ROW_MAX_CELLS};
use super::{object_schema, path_schema};
use crate::tool::{args, Tool, ToolContext, ToolError, ToolOutput};

/// Most matching rows one answer shows whole.
pub const ROWS_MAX_LISTED: usize = 20;
/// A column is counted per value when the whole file holds at most this many distinct values in
/// it (and fewer than it has rows): a category such as a course or a warehouse, not an id.
pub const COUNTED_MAX_VALUES: usize = 20;
/// Most columns counted per value in one answer.
pub const COUNTED_MAX_COLUMNS: usize = 20;
/// Most rows a note names whose cells could not be compared.
const UNCOMPARED_SHOWN: usize = 3;

pub struct TableRows;

impl Tool for TableRows {
    fn name(&self) -> &str {
        "table_rows"
    }
    fn description(&self) -> &str {
        "The rows of a CSV, TSV or JSON-lines file where conditions hold: how many, the rows themselves, and how many of them have each value of the table's short columns. Use it to list or count rows instead of comparing them yourself."
    }
    fn schema(&self) -> Value {
        object_schema(
            json!({
                "path": path_schema("table file, relative to the workspace root"),
                "where": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": WHERE_MAX_CHARS,
                    "description": "conditions joined by `and`, each a column, one of = != < <= > >= and a value or another column, e.g. `qty < min_qty` or `city = Oslo and year >= 2020`"
                },
            }),
            &["path", "where"],
        )
    }
    fn mutates(&self) -> bool {
        false
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let (rel, table) = read_table(ctx, self.name(), a)?;
        let keys = table.cell_keys();
        let text = args::str(self.name(), a, "where")?;
        let conditions =
            parse_where(&table, &keys, text).map_err(|message| ToolError::InvalidArguments {
                tool: self.name().to_string(),
                message,
            })?;
        let mut matching: Vec<&Vec<String>> = Vec::new();
        let mut uncompared: Vec<String> = Vec::new();
        for (i, row) in table.rows.iter().enumerate() {
            match row_matches(&conditions, row) {
                Ok(true) => matching.push(row),
                Ok(false) => {}
                Err(why) => uncompared.push(format!("row {}: {why}", i + 1)),
            }
        }
        let mut out = json!({
            "path": rel,
            "where": conditions.iter().map(|c| c.describe(&keys)).collect::<Vec<_>>(),
            "rows_in_file": table.rows.len(),
            "rows": matching.len(),
        });
        if !uncompared.is_empty() {
            out["rows_not_compared"] = json!(uncompared.len());
            out["rows_not_compared_note"] = json!(uncompared_note(&uncompared));
        }
        // Counts and notes before the rows, so a long listing never pushes them out of a
        // clipped answer.
        let fixed: Vec<usize> = conditions
            .iter()
            .filter(|c| c.fixes_value())
            .map(|c| c.column)
            .collect();
        write_counts(&mut out, &table, &keys, &fixed, &matching);
        if matching.len() > ROWS_MAX_LISTED {
            out["matching_rows_note"] = json!(format!(
                "{} rows match; only the first {ROWS_MAX_LISTED} are listed (count them with `rows` and `counts`, or narrow the conditions)",
                matching.len()
            ));
        }
        if table.header.len() > EXTREME_ROW_MAX_CELLS {
            out["columns_note"] = json!(format!(
                "each row has {} columns; only the first {EXTREME_ROW_MAX_CELLS} of them are listed",
                table.header.len()
            ));
        }
        out["matching_rows"] = json!(listed_rows(&keys, &matching));
        Ok(ToolOutput::Data(out))
    }
}

/// Why some rows were not counted, naming the first [`UNCOMPARED_SHOWN`].
fn uncompared_note(uncompared: &[String]) -> String {
    let shown: Vec<&str> = uncompared
        .iter()
        .take(UNCOMPARED_SHOWN)
        .map(String::as_str)
        .collect();
    format!(
        "{} not counted: a cell < <= > >= compare is not a number or a date ({}{})",
        if uncompared.len() == 1 {
            "1 row is".to_string()
        } else {
            format!("{} rows are", uncompared.len())
        },
        shown.join("; "),
        if uncompared.len() > shown.len() {
            "; …"
        } else {
            ""
        }
    )
}

/// Sets `counts` (see [`value_counts`]) of an answer about `matching`, and `counts_note` when
/// the cap on columns left some out.
pub(super) fn write_counts(
    out: &mut Value,
    table: &Table,
    keys: &[String],
    fixed: &[usize],
    matching: &[&Vec<String>],
) {
    let (counts, columns_left) = value_counts(table, keys, fixed, matching);
    if !counts.is_empty() {
        out["counts"] = Value::Object(counts);
    }
    if columns_left > 0 {
        out["counts_note"] = json!(format!(
            "{columns_left} more short columns are not counted; only the first {COUNTED_MAX_COLUMNS} are"
        ));
    }
}

/// Per short column (see [`COUNTED_MAX_VALUES`]) but the `fixed` ones (a condition keeps one
/// value of them), the first [`COUNTED_MAX_COLUMNS`]: how many `matching` rows hold each of its
/// values, grouped as written (as the judge counts), long values cut. Also how many more short
/// columns there were.
fn value_counts(
    table: &Table,
    keys: &[String],
    fixed: &[usize],
    matching: &[&Vec<String>],
) -> (serde_json::Map<String, Value>, usize) {
    let mut out = serde_json::Map::new();
    let mut left = 0;
    if matching.is_empty() {
        return (out, left);
    }
    for (column, key) in keys.iter().enumerate() {
        if fixed.contains(&column) {
            continue;
        }
        let mut in_file: BTreeMap<&str, ()> = BTreeMap::new();
        for row in &table.rows {
            in_file.insert(cell(row, column).trim(), ());
            if in_file.len() > COUNTED_MAX_VALUES {
                break;
            }
        }
        if in_file.len() > COUNTED_MAX_VALUES || in_file.len() >= table.rows.len() {
            continue;
        }
        if out.len() == COUNTED_MAX_COLUMNS {
            left += 1;
            continue;
        }
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for row in matching {
            *counts.entry(cell(row, column).trim()).or_default() += 1;
        }
        let listed: Vec<Value> = told_apart(counts.keys().map(|v| shown_cell(v)).collect())
            .into_iter()
            .zip(counts.values())
            .map(|(value, rows)| json!({ "value": value, "rows": rows }))
            .collect();
        out.insert(key.clone(), json!(listed));
    }
    (out, left)
}

/// `labels` with those that show alike (long values cut at the same place) numbered apart.
fn told_apart(labels: Vec<String>) -> Vec<String> {
    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    for label in &labels {
        *uses.entry(label.clone()).or_default() += 1;
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    labels
        .into_iter()
        .map(|label| {
            let alike = uses[&label];
            if alike == 1 {
                return label;
            }
            let k = seen.entry(label.clone()).or_default();
            *k += 1;
            format!("{label} [value {k} of {alike} shown alike]")
        })
        .collect()
}

/// The first [`ROWS_MAX_LISTED`] matching rows as column-to-cell objects (the first
/// [`EXTREME_ROW_MAX_CELLS`] columns, long cells cut and saying so).
fn listed_rows(keys: &[String], matching: &[&Vec<String>]) -> Vec<Value> {
    let width = keys.len().min(EXTREME_ROW_MAX_CELLS);
    matching
        .iter()
        .take(ROWS_MAX_LISTED)
        .map(|row| {
            let cells: serde_json::Map<String, Value> = (0..width)
                .map(|i| (keys[i].clone(), json!(shown_cell(cell(row, i)))))
                .collect();
            Value::Object(cells)
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::row_where::parse_where;
    use super::*;

    fn table(text: &str) -> Table {
        Table::parse("t.csv", text).unwrap()
    }

    #[test]
    fn counts_cover_short_columns_no_equality_fixes() {
        let t = table(
            "student,course,points,result\nA,math,40,fail\nA,physics,45,fail\nB,math,70,pass\nB,physics,30,fail\nC,history,20,fail\n",
        );
        let keys = t.cell_keys();
        let conditions = parse_where(&t, &keys, "result = fail").unwrap();
        let rows: Vec<&Vec<String>> = t
            .rows
            .iter()
            .filter(|r| row_matches(&conditions, r) == Ok(true))
            .collect();
        let fixed: Vec<usize> = conditions.iter().map(|c| c.column).collect();
        let (counts, left) = value_counts(&t, &keys, &fixed, &rows);
        assert_eq!(left, 0);
        assert_eq!(
            counts["course"],
            json!([{"value":"history","rows":1},{"value":"math","rows":1},{"value":"physics","rows":2}])
        );
        assert!(counts.contains_key("student"));
        assert!(!counts.contains_key("result"), "fixed by the condition");
        assert!(
            !counts.contains_key("points"),
            "one value per row: no category"
        );
    }
}
