//! Lever `row-query`: `table_rows` beside `table_stats` (the rows of a table where conditions
//! hold, counted and listed). Its `=` reads text ignoring case and numbers as numbers; a check's
//! row filter reads the cell exactly. Where the two read a check's filter otherwise on the
//! frozen table, an answer selecting by that filter shows no count or row of its matches: Rein
//! never hands the model a number the judge computes otherwise, and says nothing of the judge's.

use serde_json::{json, Value};

use super::folder_facts::put_with_figures;
use crate::checks::{Aggregate, CheckSpec, Computed, World};
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

/// Takes the matches out of a `table_rows` answer one of whose conditions is `=` with the value
/// of a row-count check's filter on the same table and column, when the table holds a cell the
/// tool reads as that value and the judge does not, or the other way round (`FAILED` for
/// `failed`, `8.0` for `8`). The note why comes first, where a clipped answer still shows it.
pub fn withhold_disputed_matches(contract: &FrozenContract, world: &dyn World, result: &mut Value) {
    let Some(path) = result
        .get("path")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return;
    };
    let equalities: Vec<(String, String)> = result
        .get("where")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|read| {
            let (column, value) = read.as_str()?.split_once(" = \"")?;
            Some((column.to_string(), value.strip_suffix('"')?.to_string()))
        })
        .collect();
    if equalities.is_empty() {
        return;
    }
    let mut table = None;
    for check in &contract.mission.checks {
        let CheckSpec::NumericConsistency {
            expected:
                Computed::Csv {
                    path: counted,
                    op: Aggregate::Count,
                    filter: Some(filter),
                    ..
                },
            ..
        } = &check.spec
        else {
            continue;
        };
        if counted.trim_start_matches("./") != path {
            continue;
        }
        for (column, value) in &equalities {
            let same_filter = column.trim().eq_ignore_ascii_case(filter.column.trim())
                && rein_workspace::desk::same_cell_value(value, &filter.equals);
            if !same_filter {
                continue;
            }
            let table = table.get_or_insert_with(|| frozen_table(world, &path));
            if reads_otherwise(table.as_ref(), column, value, &filter.equals) {
                withhold(result, column, value);
                return;
            }
        }
    }
}

fn frozen_table(world: &dyn World, path: &str) -> Option<rein_workspace::desk::Table> {
    let bytes = world.read(path).ok().flatten()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    rein_workspace::desk::Table::parse(path, text).ok()
}

/// Whether some row's cell in `column` is `value` to the tool and not `equals` to the judge
/// (exact after trimming), or the other way round; `true` when the table cannot be read, as
/// nothing then says they agree.
fn reads_otherwise(
    table: Option<&rein_workspace::desk::Table>,
    column: &str,
    value: &str,
    equals: &str,
) -> bool {
    let Some(table) = table else {
        return true;
    };
    let Some(i) = table
        .header
        .iter()
        .position(|h| h.trim().eq_ignore_ascii_case(column.trim()))
    else {
        return true;
    };
    table.rows.iter().any(|row| {
        let cell = row.get(i).map_or("", String::as_str);
        rein_workspace::desk::same_cell_value(cell, value) != (cell.trim() == equals.trim())
    })
}

fn withhold(result: &mut Value, column: &str, value: &str) {
    if let Some(o) = result.as_object_mut() {
        o.retain(|k, _| !MATCHED_KEYS.contains(&k.as_str()));
    }
    put_with_figures(
        result,
        "withheld",
        json!(format!(
            "rows, matching_rows, counts: the task's check reads {column} = \"{value}\" otherwise than table_rows does (letter case, or a number written another way); count them yourself"
        )),
    );
}
