//! Lever `row-query`: `table_rows` beside `table_stats` (the rows of a table where conditions
//! hold, counted and listed). Its `=` reads text ignoring case and numbers as numbers; a check's
//! row filter reads the cell exactly. Where the two read a check's filter otherwise on the
//! frozen table, an answer selecting by that filter shows no count or row of its matches: Rein
//! never hands the model a number the judge computes otherwise, and says nothing of the judge's.

use serde_json::{json, Value};

use super::folder_facts::put_with_figures;
use crate::checks::{column_index, CheckSpec, Computed, World};
use crate::mission::FrozenContract;

/// The tool the lever adds beside `table_stats`.
pub const TABLE_ROWS: &str = "table_rows";

/// The keys of a `table_rows` answer that count or list its matching rows.
pub const MATCHED_KEYS: [&str; 5] = [
    "rows",
    "matching_rows",
    "matching_rows_note",
    "counts",
    "counts_note",
];

/// Takes the matches out of a `table_rows` answer one of whose conditions is `=` on the column
/// of a check's row filter (any figure: a count, a sum, a mean…) on the same table, with the
/// filter's value, when the table holds a cell the tool reads as that value and the judge does
/// not, or the other way round (`FAILED` for `failed`, `8.0` for `8`). Columns are compared by
/// place: the answer's name (`status (column 3)` for a repeated header) and the judge's lookup
/// of the filter's column. The note why comes first, where a clipped answer still shows it.
pub fn withhold_disputed_matches(contract: &FrozenContract, world: &dyn World, result: &mut Value) {
    let Some(path) = result
        .get("path")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return;
    };
    let equalities = equalities(result);
    if equalities.is_empty() {
        return;
    }
    let mut table = None;
    for check in &contract.mission.checks {
        let CheckSpec::NumericConsistency {
            expected:
                Computed::Csv {
                    path: read,
                    filter: Some(filter),
                    ..
                },
            ..
        } = &check.spec
        else {
            continue;
        };
        if read.trim_start_matches("./") != path {
            continue;
        }
        let Some(table) = table.get_or_insert_with(|| frozen_table(world, &path)) else {
            // Unreadable as the tool reads it: nothing says the two agree.
            withhold(result, &equalities[0].0, &equalities[0].1);
            return;
        };
        let Ok(judged) = column_index(&path, &table.header, filter.column.trim()) else {
            continue;
        };
        let keys = table.cell_keys();
        for (column, value) in &equalities {
            let same_filter = keys.iter().position(|k| k == column) == Some(judged)
                && rein_workspace::desk::same_cell_value(value, &filter.equals);
            if same_filter && reads_otherwise(table, judged, value, &filter.equals) {
                withhold(result, column, value);
                return;
            }
        }
    }
}

/// The conditions of a `table_rows` answer that are `=` with a value, as (column name as the
/// answer gives it, value), from the answer's reading of them (`status = "failed"`).
pub fn equalities(result: &Value) -> Vec<(String, String)> {
    result
        .get("where")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|read| {
            let (column, value) = read.as_str()?.split_once(" = \"")?;
            Some((column.to_string(), value.strip_suffix('"')?.to_string()))
        })
        .collect()
}

fn frozen_table(world: &dyn World, path: &str) -> Option<rein_workspace::desk::Table> {
    let bytes = world.read(path).ok().flatten()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    rein_workspace::desk::Table::parse(path, text).ok()
}

/// Whether some row's cell in `column` is `value` to the tool and not `equals` to the judge
/// (exact after trimming), or the other way round.
fn reads_otherwise(
    table: &rein_workspace::desk::Table,
    column: usize,
    value: &str,
    equals: &str,
) -> bool {
    table.rows.iter().any(|row| {
        let cell = row.get(column).map_or("", String::as_str);
        rein_workspace::desk::same_cell_value(cell, value) != (cell.trim() == equals.trim())
    })
}

fn withhold(result: &mut Value, column: &str, value: &str) {
    if let Some(o) = result.as_object_mut() {
        o.retain(|k, _| !MATCHED_KEYS.contains(&k.as_str()));
    }
    add_withheld_note(
        result,
        &format!(
            "rows, matching_rows, counts: the task's check reads {column} = \"{value}\" otherwise than table_rows does (letter case, or a number written another way); count them yourself"
        ),
    );
}

/// Adds `note` to the answer's `withheld` (after what an earlier withholding said there), among
/// its first figures.
pub fn add_withheld_note(result: &mut Value, note: &str) {
    let said = match result.get("withheld").and_then(Value::as_str) {
        Some(before) if !before.contains(note) => format!("{before}; {note}"),
        Some(before) => before.to_string(),
        None => note.to_string(),
    };
    put_with_figures(result, "withheld", json!(said));
}
