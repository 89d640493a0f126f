//! Lever `asked-counts`: of Rein's `folder_stats` figures (lever `folder-stats`) the model is
//! shown only the kinds the contract's checks count: files always (how many, per folder, per
//! extension, the deepest, the empty and the identical ones), lines only where a check counts
//! lines, data rows only where one counts a table's rows, and bytes never (an empty file is
//! named as such). The 1.5B, asked for the number of letters of an archive, listed 4, 7, 5 and
//! 3 letters per year and wrote `Total letters: 96`, the `total_lines` Rein had shown
//! (explore-archive-years); a line count is no fact of that task.
//!
//! Which kinds are asked is read from the checks' kinds and patterns alone, never from their
//! values, and only what Rein shows unasked is cut: a `folder_stats` call of the model's gets
//! the whole result, and the journal keeps Rein's call's as the tool (after `folder-stats`'
//! withholding) gave it.

use serde_json::Value;

use super::folder_facts::FILE_START;
use crate::checks::{Aggregate, CheckSpec, Computed};
use crate::mission::FrozenContract;

/// The kinds of figure beyond file counts that the contract's checks count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AskedKinds {
    /// A check counts lines of a file, or matching lines over files (but those it states in rows).
    pub lines: bool,
    /// A check counts the data rows of a table, or matching lines it states in rows.
    pub rows: bool,
}

/// The kinds the `numeric_consistency` checks of `contract` count.
pub fn asked_kinds(contract: &FrozenContract) -> AskedKinds {
    let mut kinds = AskedKinds::default();
    for check in &contract.mission.checks {
        let CheckSpec::NumericConsistency {
            expected, units, ..
        } = &check.spec
        else {
            continue;
        };
        match expected {
            Computed::Lines { .. } => kinds.lines = true,
            // Matching lines a check states in rows are a table's data rows picked by a pattern
            // (explore-csv-rows' `Orders in total`), and the 1.5B given each file's lines beside
            // its rows copied both into a list item that asked for rows.
            Computed::Matches { pattern, .. } if !FILE_START.contains(&pattern.as_str()) => {
                // Both where its units name both (`lines` or `rows`): nothing it counts is cut.
                let rows = units.iter().any(|u| unit_is(u, ROW_UNITS));
                kinds.rows |= rows;
                kinds.lines |= !rows || units.iter().any(|u| unit_is(u, LINE_UNITS));
            }
            Computed::Csv {
                op: Aggregate::Count,
                ..
            } => kinds.rows = true,
            _ => {}
        }
    }
    kinds
}

/// Units that name a table's rows, and units that name lines, as [`unit_is`] compares them.
const ROW_UNITS: &[&str] = &["row", "rows", "data row", "data rows"];
const LINE_UNITS: &[&str] = &["line", "lines"];

/// Whether a check's unit is one of `names`, however its words are cased, spaced or joined
/// (`Data  rows`, `data-rows`, a no-break space).
fn unit_is(unit: &str, names: &[&str]) -> bool {
    let words: Vec<String> = unit
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    names.contains(&words.join(" ").as_str())
}

/// The `folder_stats` result `result` with the figures of the kinds no check counts taken out:
/// the totals, the largest (and how many tie for it) and each file's figure of that kind, and
/// each file's bytes.
pub fn keep_asked(result: &Value, kinds: AskedKinds) -> Value {
    let mut cut: Vec<&str> = vec!["bytes"];
    if !kinds.lines {
        cut.extend(["lines", "total_lines", "most_lines", "most_lines_of"]);
    }
    if !kinds.rows {
        cut.extend(["rows", "total_rows", "most_rows", "most_rows_of"]);
    }
    let mut kept = result.clone();
    if let Some(o) = kept.as_object_mut() {
        o.retain(|k, _| !cut.contains(&k.as_str()));
        if let Some(files) = o.get_mut("list").and_then(Value::as_array_mut) {
            for file in files.iter_mut().filter_map(Value::as_object_mut) {
                file.retain(|k, _| !cut.contains(&k.as_str()));
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result() -> Value {
        json!({
            "path": "archive", "files": 3, "total_lines": 96, "most_lines": ["archive/a.txt"],
            "total_rows": 4, "most_rows": ["archive/t.csv"], "most_rows_of": 30,
            "empty": [], "deepest": ["archive/2021/a.txt"],
            "list": [
                {"path": "archive/a.txt", "bytes": 10, "lines": 3, "depth": 2},
                {"path": "archive/t.csv", "bytes": 9, "lines": 5, "rows": 4, "depth": 1,
                 "withheld": "rows: counted otherwise"},
            ],
        })
    }

    #[test]
    fn a_task_that_counts_files_is_shown_no_lines_rows_or_bytes() {
        let kept = keep_asked(&result(), AskedKinds::default());
        assert_eq!(
            kept,
            json!({
                "path": "archive", "files": 3, "empty": [], "deepest": ["archive/2021/a.txt"],
                "list": [
                    {"path": "archive/a.txt", "depth": 2},
                    {"path": "archive/t.csv", "depth": 1, "withheld": "rows: counted otherwise"},
                ],
            })
        );
    }

    #[test]
    fn the_kinds_a_check_counts_stay() {
        let lines = keep_asked(
            &result(),
            AskedKinds {
                lines: true,
                rows: false,
            },
        );
        assert_eq!(lines["total_lines"], 96);
        assert_eq!(lines["list"][1]["lines"], 5);
        assert!(lines.get("total_rows").is_none() && lines["list"][1].get("rows").is_none());
        let rows = keep_asked(
            &result(),
            AskedKinds {
                lines: false,
                rows: true,
            },
        );
        assert_eq!(rows["most_rows_of"], 30);
        assert_eq!(rows["list"][1]["rows"], 4);
        assert!(rows.get("total_lines").is_none() && rows["list"][0].get("bytes").is_none());
    }
}
