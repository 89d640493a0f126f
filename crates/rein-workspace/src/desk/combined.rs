//! Figures over several tables of the same columns, taken as one table (lever
//! `combined-totals`): the 1.5B read report-timesheets' three weekly CSVs (person, project,
//! hours) and wrote every person's and project's hours wrong, adding across files by hand.
//! Like [`super::column_totals`], every figure given is true of the files or left out.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::table::{cell, exact_sum, has_total_rows, summable, Table, TOTALS_MAX_NAME_CHARS};
use super::TABLE_MAX_BYTES;

/// Most tables combined at once.
pub const COMBINED_MAX_FILES: usize = 24;
/// Most distinct values a column may hold to have its rows grouped by it.
pub const COMBINED_MAX_GROUP_VALUES: usize = 12;
/// Most groupings listed (a grouping: one text column's values, one numeric column's sums).
pub const COMBINED_MAX_GROUPINGS: usize = 6;
/// Most numeric columns whose totals are listed.
const COMBINED_MAX_COLUMNS: usize = 10;

/// Why tables get no combined figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotCombined {
    #[error("fewer than two tables")]
    TooFew,
    #[error("more than {COMBINED_MAX_FILES} tables, the most combined at once")]
    TooMany,
    #[error("more bytes than one table may hold")]
    TooLarge,
    #[error("a file that is no table")]
    NotATable,
    #[error("a table with a row that totals others")]
    TotalRows,
    #[error("tables whose columns differ")]
    ColumnsDiffer,
    #[error("no numeric column")]
    NoNumbers,
}

/// The totals of every numeric column over all rows of `files` (name, text), and for each short
/// text column the sum of each numeric column per value of it, or why there are none: fewer
/// than two files or more than [`COMBINED_MAX_FILES`], more than [`TABLE_MAX_BYTES`] in all, a
/// file that is no table, headers that differ, a row that totals others (which rows to leave
/// out is a choice), or no numeric column over the rows of all of them.
///
/// A column is grouped by when every row has a value in it, it has 2 to
/// [`COMBINED_MAX_GROUP_VALUES`] distinct values (trimmed, exact case), each at most
/// [`TOTALS_MAX_NAME_CHARS`] characters; values are listed in order of first appearance.
pub fn combined_totals(files: &[(&str, &str)]) -> Result<Value, NotCombined> {
    if files.len() < 2 {
        return Err(NotCombined::TooFew);
    }
    if files.len() > COMBINED_MAX_FILES {
        return Err(NotCombined::TooMany);
    }
    if files.iter().map(|(_, t)| t.len() as u64).sum::<u64>() > TABLE_MAX_BYTES {
        return Err(NotCombined::TooLarge);
    }
    let mut tables = Vec::new();
    for (name, text) in files {
        let table = Table::parse(name, text).map_err(|_| NotCombined::NotATable)?;
        if has_total_rows(&table) {
            return Err(NotCombined::TotalRows);
        }
        tables.push(table);
    }
    let header = tables[0].header.clone();
    if tables.iter().any(|t| t.header != header) {
        return Err(NotCombined::ColumnsDiffer);
    }
    let all = Table {
        header: header.clone(),
        rows: tables.into_iter().flat_map(|t| t.rows).collect(),
    };
    // A file may total the rows of another (a summary beside the weeks).
    if has_total_rows(&all) {
        return Err(NotCombined::TotalRows);
    }
    let rows: Vec<&Vec<String>> = all.rows.iter().collect();
    let summed: Vec<(usize, Value)> = (0..header.len())
        .filter_map(|i| summable(&all, &rows, i).map(|f| (i, f.totals_of(&header[i]))))
        .collect();
    if summed.is_empty() {
        return Err(NotCombined::NoNumbers);
    }
    let numeric: Vec<usize> = summed.iter().map(|(i, _)| *i).collect();
    let columns: Vec<Value> = summed
        .into_iter()
        .take(COMBINED_MAX_COLUMNS)
        .map(|(_, totals)| totals)
        .collect();
    let mut groupings = Vec::new();
    let mut grouping_count = 0usize;
    for by in (0..header.len()).filter(|i| !numeric.contains(i)) {
        let Some(values) = group_values(&all, &rows, by) else {
            continue;
        };
        for &column in &numeric {
            let Some(sums) = group_sums(&rows, by, column, &values) else {
                continue;
            };
            grouping_count += 1;
            if groupings.len() < COMBINED_MAX_GROUPINGS {
                groupings.push(json!({ "by": header[by], "column": header[column], "sums": sums }));
            }
        }
    }
    let names: Vec<&str> = files.iter().map(|(n, _)| *n).collect();
    let mut out = json!({ "files": names, "rows": rows.len(), "columns": columns });
    if numeric.len() > COMBINED_MAX_COLUMNS {
        out["columns_truncated"] = json!(format!(
            "{} numeric columns; only the first {COMBINED_MAX_COLUMNS} are listed",
            numeric.len()
        ));
    }
    if !groupings.is_empty() {
        out["groups"] = json!(groupings);
    }
    if grouping_count > COMBINED_MAX_GROUPINGS {
        out["groups_truncated"] = json!(format!(
            "{grouping_count} groupings; only the first {COMBINED_MAX_GROUPINGS} are listed"
        ));
    }
    Ok(out)
}

/// The values of column `by` to group the rows by, in order of first appearance, or `None`
/// when it is no short label column (a row without a value, too many or too few values, a
/// value too long, a header another column shares).
fn group_values(table: &Table, rows: &[&Vec<String>], by: usize) -> Option<Vec<String>> {
    let header = &table.header[by];
    if table.header.iter().filter(|h| *h == header).count() > 1
        || header.chars().count() > TOTALS_MAX_NAME_CHARS
    {
        return None;
    }
    let mut seen = BTreeSet::new();
    let mut values = Vec::new();
    for row in rows {
        let value = cell(row, by).trim();
        if value.is_empty() || value.chars().count() > TOTALS_MAX_NAME_CHARS {
            return None;
        }
        if seen.insert(value.to_string()) {
            values.push(value.to_string());
            if values.len() > COMBINED_MAX_GROUP_VALUES {
                return None;
            }
        }
    }
    (values.len() >= 2).then_some(values)
}

/// The exact sum of column `column` over the rows of each value of column `by` (`values` in
/// order), or `None` when one does not come out exact.
fn group_sums(
    rows: &[&Vec<String>],
    by: usize,
    column: usize,
    values: &[String],
) -> Option<Map<String, Value>> {
    let mut sums = Map::new();
    for value in values {
        let numbers: Vec<_> = rows
            .iter()
            .filter(|r| cell(r, by).trim() == value)
            .filter_map(|r| super::parse_number(cell(r, column)))
            .collect();
        let sum = exact_sum(&numbers)?;
        sums.insert(value.clone(), json!(sum.normalize().to_string()));
    }
    Some(sums)
}

#[cfg(test)]
mod tests {
    use super::*;

    const W10: &str = "person,project,hours\nInes,intranet,8\nMarek,support,4\n";
    const W11: &str = "person,project,hours\nInes,support,6.5\nTariq,intranet,2\n";

    #[test]
    fn rows_of_all_files_are_summed_as_one_table_and_per_value() {
        let t = combined_totals(&[("t/w10.csv", W10), ("t/w11.csv", W11)]).unwrap();
        assert_eq!(t["files"], json!(["t/w10.csv", "t/w11.csv"]));
        assert_eq!(t["rows"], 4);
        assert_eq!(t["columns"][0]["column"], "hours");
        assert_eq!(t["columns"][0]["sum"], "20.5");
        assert_eq!(t["groups"][0]["by"], "person");
        assert_eq!(
            t["groups"][0]["sums"],
            json!({"Ines": "14.5", "Marek": "4", "Tariq": "2"})
        );
        // In order of first appearance, not by name.
        let projects: Vec<&String> = t["groups"][1]["sums"].as_object().unwrap().keys().collect();
        assert_eq!(projects, ["intranet", "support"]);
        assert_eq!(t["groups"][1]["sums"]["intranet"], "10");
    }

    #[test]
    fn no_figures_where_one_could_be_wrong_or_is_a_choice() {
        let other = "name,project,hours\nInes,intranet,8\n";
        let total = "person,project,hours\nInes,intranet,8\nTotal,,8\n";
        let ragged = "person,project,hours\nInes,intranet,8,9\n";
        let words = "person,project,hours\nInes,intranet,eight\n";
        for (files, why) in [
            (vec![("a.csv", W10)], NotCombined::TooFew),
            (
                vec![("a.csv", W10), ("b.csv", other)],
                NotCombined::ColumnsDiffer,
            ),
            (
                vec![("a.csv", W10), ("b.csv", total)],
                NotCombined::TotalRows,
            ),
            (
                vec![("a.csv", W10), ("b.csv", ragged)],
                NotCombined::NotATable,
            ),
            (
                vec![("a.csv", words), ("b.csv", words)],
                NotCombined::NoNumbers,
            ),
        ] {
            assert_eq!(combined_totals(&files), Err(why));
        }
        let many: Vec<(&str, &str)> = (0..=COMBINED_MAX_FILES).map(|_| ("a.csv", W10)).collect();
        assert_eq!(combined_totals(&many), Err(NotCombined::TooMany));
    }

    /// The columns the figures group the rows by, in order.
    fn grouped_by(t: &Value) -> Vec<&str> {
        t["groups"]
            .as_array()
            .map(|groups| groups.iter().filter_map(|g| g["by"].as_str()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn a_column_is_grouped_by_only_when_every_row_has_one_of_few_values() {
        let blank = "person,project,hours\n,intranet,3\n";
        let t = combined_totals(&[("a.csv", W10), ("b.csv", blank)]).unwrap();
        // A row without a person would fall in no group: no person grouping, projects still.
        assert_eq!(grouped_by(&t), ["project"]);
        let wide: String = (0..=COMBINED_MAX_GROUP_VALUES)
            .map(|i| format!("p{i},x,1\n"))
            .collect();
        let wide = format!("person,project,hours\n{wide}");
        let t = combined_totals(&[
            ("a.csv", &wide),
            ("b.csv", "person,project,hours\np0,y,2\n"),
        ])
        .unwrap();
        assert_eq!(grouped_by(&t), ["project"], "{t}");
        assert_eq!(t["groups"][0]["sums"], json!({"x": "13", "y": "2"}));
        // One value only is no grouping.
        let one = "person,project,hours\nInes,x,1\n";
        let t = combined_totals(&[("a.csv", one), ("b.csv", one)]).unwrap();
        assert!(t.get("groups").is_none(), "{t}");
        assert_eq!(t["columns"][0]["sum"], "2");
    }

    #[test]
    fn groupings_past_the_cap_are_counted() {
        let header = "a,b,c,d,n1,n2\n";
        let rows = "x,x,x,x,1,2\ny,y,y,y,3,4\n";
        let text = format!("{header}{rows}");
        let t = combined_totals(&[("a.csv", &text), ("b.csv", &text)]).unwrap();
        assert_eq!(
            t["groups"].as_array().unwrap().len(),
            COMBINED_MAX_GROUPINGS
        );
        assert_eq!(
            t["groups_truncated"],
            format!("8 groupings; only the first {COMBINED_MAX_GROUPINGS} are listed")
        );
    }
}
