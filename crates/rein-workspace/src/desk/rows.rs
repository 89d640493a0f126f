//! `table_rows`: the rows of a CSV, TSV or JSON-lines file where conditions hold, counted and
//! listed, with how many of them hold each value of the table's short columns. A small model
//! asked for "every SKU whose on_hand is at or below its reorder_at" or "the fails per course"
//! compares and counts rows itself, and gets them wrong (the 1.5B wrote two of report-gradebook's
//! three fail counts wrong after one `table_stats` call over all the fails). The comparisons are
//! made here, on exact decimals.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::table::{cell, parse_number, read_table, shown_cell, Table, EXTREME_ROW_MAX_CELLS};
use super::{object_schema, path_schema};
use crate::tool::{args, Tool, ToolContext, ToolError, ToolOutput};

/// Most matching rows one answer shows whole.
pub const ROWS_MAX_LISTED: usize = 20;
/// Longest `where` text.
pub const WHERE_MAX_CHARS: usize = 300;
/// Most conditions one `where` joins.
pub const WHERE_MAX_CONDITIONS: usize = 8;
/// A column is counted per value when the whole file holds at most this many distinct values in
/// it (and fewer than it has rows): a category such as a course or a warehouse, not an id.
pub const COUNTED_MAX_VALUES: usize = 20;
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
        let text = args::str(self.name(), a, "where")?;
        let conditions =
            parse_where(&table, text).map_err(|message| ToolError::InvalidArguments {
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
            "where": conditions.iter().map(|c| c.describe(&table)).collect::<Vec<_>>(),
            "rows_in_file": table.rows.len(),
            "rows": matching.len(),
        });
        if !uncompared.is_empty() {
            let shown: Vec<&String> = uncompared.iter().take(UNCOMPARED_SHOWN).collect();
            out["rows_not_compared"] = json!(uncompared.len());
            out["rows_not_compared_note"] = json!(format!(
                "{} not counted: a cell < <= > >= compare is not a number or a date ({}{})",
                if uncompared.len() == 1 {
                    "1 row is".to_string()
                } else {
                    format!("{} rows are", uncompared.len())
                },
                shown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("; "),
                if uncompared.len() > shown.len() {
                    "; …"
                } else {
                    ""
                }
            ));
        }
        // Counts before the rows, so a long listing never pushes them out of a clipped answer.
        let counts = value_counts(&table, &conditions, &matching);
        if !counts.is_empty() {
            out["counts"] = Value::Object(counts);
        }
        out["matching_rows"] = json!(listed_rows(&table, &matching));
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
        Ok(ToolOutput::Data(out))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    /// Spellings, two-character ones first so `<=` is not read as `<`.
    const SPELLINGS: [(&'static str, Op); 10] = [
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("=<", Op::Le),
        ("=>", Op::Ge),
        ("!=", Op::Ne),
        ("<>", Op::Ne),
        ("==", Op::Eq),
        ("=", Op::Eq),
        ("<", Op::Lt),
        (">", Op::Gt),
    ];

    fn symbol(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }

    /// The same comparison with its sides swapped (`0 < x` is `x > 0`).
    fn flipped(self) -> Op {
        match self {
            Op::Lt => Op::Gt,
            Op::Le => Op::Ge,
            Op::Gt => Op::Lt,
            Op::Ge => Op::Le,
            same => same,
        }
    }

    fn orders(self) -> bool {
        !matches!(self, Op::Eq | Op::Ne)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Operand {
    Column(usize),
    Value(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Condition {
    column: usize,
    op: Op,
    operand: Operand,
}

impl Condition {
    /// How the condition was read, for the answer: a value in quotes, a column by its name.
    fn describe(&self, table: &Table) -> String {
        let right = match &self.operand {
            Operand::Column(c) => format!("column {}", table.header[*c]),
            Operand::Value(v) => format!("\"{v}\""),
        };
        format!("{} {} {right}", table.header[self.column], self.op.symbol())
    }
}

/// Whether `row` meets every condition; `Err` names a cell an ordering could not compare.
fn row_matches(conditions: &[Condition], row: &[String]) -> Result<bool, String> {
    let mut uncompared = None;
    for c in conditions {
        let left = cell(row, c.column).trim();
        let right = match &c.operand {
            Operand::Column(i) => cell(row, *i).trim(),
            Operand::Value(v) => v.as_str(),
        };
        let holds = if c.op.orders() {
            match ordering(left, right) {
                Some(o) => match c.op {
                    Op::Lt => o == Ordering::Less,
                    Op::Le => o != Ordering::Greater,
                    Op::Gt => o == Ordering::Greater,
                    _ => o != Ordering::Less,
                },
                None => {
                    uncompared.get_or_insert_with(|| {
                        let shown = |s: &str| {
                            if s.is_empty() {
                                "empty".to_string()
                            } else {
                                format!("\"{}\"", shown_cell(s))
                            }
                        };
                        format!("{} {} {}", shown(left), c.op.symbol(), shown(right))
                    });
                    continue;
                }
            }
        } else {
            equal(left, right) == (c.op == Op::Eq)
        };
        // A condition that fails settles the row, whatever another could not compare.
        if !holds {
            return Ok(false);
        }
    }
    match uncompared {
        Some(why) => Err(why),
        None => Ok(true),
    }
}

/// Cells equal as numbers when both are numbers (`8` and `8.0`), else as text ignoring case.
fn equal(a: &str, b: &str) -> bool {
    match (parse_number(a), parse_number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.trim().to_lowercase() == b.trim().to_lowercase(),
    }
}

/// The order of two cells that are both numbers or both dates written `YYYY-MM-DD` (with an
/// optional time after it); `None` for anything else.
fn ordering(a: &str, b: &str) -> Option<Ordering> {
    if let (Some(x), Some(y)) = (parse_number(a), parse_number(b)) {
        return Some(x.cmp(&y));
    }
    (is_iso_date(a) && is_iso_date(b)).then(|| a.cmp(b))
}

/// `2024-03-01`, or that followed by `T` or a space and a time: text that sorts as time does.
fn is_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    b.len() >= 10
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && (b.len() == 10 || matches!(b[10], b'T' | b' '))
}

/// The conditions of a `where` text, or what is wrong with it, said so the model can fix it.
fn parse_where(table: &Table, text: &str) -> Result<Vec<Condition>, String> {
    if text.chars().count() > WHERE_MAX_CHARS {
        return Err(format!(
            "`where` is longer than {WHERE_MAX_CHARS} characters"
        ));
    }
    let mut text = text.trim();
    if let Some(rest) = strip_word(text, "where") {
        text = rest;
    }
    if text.is_empty() {
        return Err("`where` is empty: give a condition such as `status = open`".to_string());
    }
    let parts = split_outside_quotes(text)?;
    if parts.len() > WHERE_MAX_CONDITIONS {
        return Err(format!(
            "`where` joins {} conditions; at most {WHERE_MAX_CONDITIONS} are read",
            parts.len()
        ));
    }
    parts.iter().map(|p| parse_condition(table, p)).collect()
}

/// `text` after a leading `word` and a space, ignoring case.
fn strip_word<'t>(text: &'t str, word: &str) -> Option<&'t str> {
    let head = text.get(..word.len())?;
    let rest = &text[word.len()..];
    (head.eq_ignore_ascii_case(word) && rest.starts_with(char::is_whitespace))
        .then(|| rest.trim_start())
}

/// The conditions joined by `and` (or `&&`) outside quotes; `or` is refused.
fn split_outside_quotes(text: &str) -> Result<Vec<String>, String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            current.push(c);
            i += 1;
            continue;
        }
        if matches!(c, '\'' | '"' | '`') {
            quote = Some(c);
            current.push(c);
            i += 1;
            continue;
        }
        let rest: String = chars[i..].iter().collect();
        let at_word_start = i == 0 || chars[i - 1].is_whitespace();
        let joiner = |w: &str| {
            at_word_start
                && rest
                    .get(..w.len())
                    .is_some_and(|head| head.eq_ignore_ascii_case(w))
                && (rest.len() == w.len() || rest[w.len()..].starts_with(char::is_whitespace))
        };
        if rest.starts_with("||") || joiner("or") {
            return Err("`or` is not read: call table_rows once per alternative and add the counts, or use != to leave rows out".to_string());
        }
        if rest.starts_with("&&") || joiner("and") {
            parts.push(std::mem::take(&mut current));
            i += if rest.starts_with("&&") { 2 } else { 3 };
            continue;
        }
        current.push(c);
        i += 1;
    }
    if quote.is_some() {
        return Err(format!("`where` has a quote that is not closed: {text}"));
    }
    parts.push(current);
    if parts.iter().any(|p| p.trim().is_empty()) {
        return Err(format!(
            "`where` has an `and` with no condition on one side: {text}"
        ));
    }
    Ok(parts)
}

/// One `column op operand` condition.
fn parse_condition(table: &Table, text: &str) -> Result<Condition, String> {
    let text = text.trim();
    let (at, spelled, op) = first_operator(text).ok_or_else(|| {
        format!("`{text}` has no comparison: write a column, one of = != < <= > >=, then a value or another column, e.g. `status = open`")
    })?;
    let left = text[..at].trim();
    let right = text[at + spelled.len()..].trim();
    if left.is_empty() || right.is_empty() {
        return Err(format!(
            "`{text}` needs a column on the left of {spelled} and a value or column on the right"
        ));
    }
    let columns = || table.header.join(", ");
    let (column, op, operand) = match (as_column(table, left), as_column(table, right)) {
        (Some(c), Some(other)) => (c, op, Operand::Column(other)),
        (Some(c), None) => (c, op, Operand::Value(unquoted(right).to_string())),
        // `0 < on_hand` reads as `on_hand > 0`.
        (None, Some(c)) => (c, op.flipped(), Operand::Value(unquoted(left).to_string())),
        (None, None) => {
            return Err(format!(
                "`{text}`: no column \"{}\"; the columns are: {}",
                unquoted(left),
                columns()
            ))
        }
    };
    if let (true, Operand::Value(v)) = (op.orders(), &operand) {
        if parse_number(v).is_none() && !is_iso_date(v) {
            return Err(format!(
                "`{text}`: {} compares numbers or dates (2024-03-01), and \"{v}\" is neither; use = or != for text",
                op.symbol()
            ));
        }
    }
    Ok(Condition {
        column,
        op,
        operand,
    })
}

/// The first comparison operator outside quotes: where it starts, as written, and what it is.
fn first_operator(text: &str) -> Option<(usize, &'static str, Op)> {
    let mut quote: Option<char> = None;
    for (at, c) in text.char_indices() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        if matches!(c, '\'' | '"' | '`') {
            quote = Some(c);
            continue;
        }
        if let Some((spelled, op)) = Op::SPELLINGS
            .iter()
            .find(|(s, _)| text[at..].starts_with(s))
        {
            return Some((at, spelled, *op));
        }
    }
    None
}

/// The column `side` names: backquoted or double-quoted text naming a column, or bare text
/// that is a column's name (exact, else ignoring case). Single quotes always make a value.
fn as_column(table: &Table, side: &str) -> Option<usize> {
    if side.starts_with('\'') {
        return None;
    }
    table.column(unquoted(side)).ok()
}

/// `side` without one pair of surrounding quotes (`'x'`, `"x"` or `` `x` ``).
fn unquoted(side: &str) -> &str {
    for q in ['\'', '"', '`'] {
        if let Some(inner) = side
            .strip_prefix(q)
            .and_then(|r| r.strip_suffix(q))
            .filter(|_| side.len() >= 2)
        {
            return inner;
        }
    }
    side
}

/// Per short column (see [`COUNTED_MAX_VALUES`]) that no `=` condition fixes to one value: how
/// many matching rows hold each of its values.
fn value_counts(
    table: &Table,
    conditions: &[Condition],
    matching: &[&Vec<String>],
) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    if matching.is_empty() {
        return out;
    }
    for column in 0..table.header.len() {
        let fixed = conditions.iter().any(|c| {
            c.column == column && c.op == Op::Eq && matches!(c.operand, Operand::Value(_))
        });
        if fixed {
            continue;
        }
        let mut in_file: BTreeMap<String, ()> = BTreeMap::new();
        for row in &table.rows {
            in_file.insert(cell(row, column).trim().to_string(), ());
            if in_file.len() > COUNTED_MAX_VALUES {
                break;
            }
        }
        if in_file.len() > COUNTED_MAX_VALUES || in_file.len() >= table.rows.len() {
            continue;
        }
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for row in matching {
            *counts
                .entry(cell(row, column).trim().to_string())
                .or_default() += 1;
        }
        let listed: Vec<Value> = counts
            .into_iter()
            .map(|(value, rows)| json!({ "value": value, "rows": rows }))
            .collect();
        out.insert(table.cell_key(column), json!(listed));
    }
    out
}

/// The first [`ROWS_MAX_LISTED`] matching rows as column-to-cell objects (the first
/// [`EXTREME_ROW_MAX_CELLS`] columns, long cells cut and saying so).
fn listed_rows(table: &Table, matching: &[&Vec<String>]) -> Vec<Value> {
    let width = table.header.len().min(EXTREME_ROW_MAX_CELLS);
    matching
        .iter()
        .take(ROWS_MAX_LISTED)
        .map(|row| {
            let cells: serde_json::Map<String, Value> = (0..width)
                .map(|i| (table.cell_key(i), json!(shown_cell(cell(row, i)))))
                .collect();
            Value::Object(cells)
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn table(text: &str) -> Table {
        Table::parse("t.csv", text).unwrap()
    }

    const STOCK: &str = "sku,item,warehouse,on_hand,reorder_at\n\
        SKU-101,Desk lamp,Leeds,34,10\n\
        SKU-102,Office chair,Leeds,8,8\n\
        SKU-104,Desk lamp,Bristol,0,10\n\
        SKU-105,Cable tray,Leeds,120,40\n\
        SKU-107,Office chair,Glasgow,3,8\n\
        SKU-108,Footrest,Glasgow,n/a,5\n";

    fn matching(t: &Table, text: &str) -> Vec<String> {
        let conditions = parse_where(t, text).unwrap();
        t.rows
            .iter()
            .filter(|r| row_matches(&conditions, r) == Ok(true))
            .map(|r| r[0].clone())
            .collect()
    }

    #[test]
    fn a_column_is_compared_with_another_column_as_numbers() {
        let t = table(STOCK);
        assert_eq!(
            matching(&t, "on_hand <= reorder_at"),
            ["SKU-102", "SKU-104", "SKU-107"]
        );
        assert_eq!(matching(&t, "on_hand < reorder_at"), ["SKU-104", "SKU-107"]);
        assert_eq!(
            matching(&t, "reorder_at >= on_hand"),
            ["SKU-102", "SKU-104", "SKU-107"]
        );
        // Not as text: "120" < "40" as text.
        assert_eq!(matching(&t, "on_hand > reorder_at"), ["SKU-101", "SKU-105"]);
    }

    #[test]
    fn conditions_join_with_and_and_text_ignores_case_and_quotes() {
        let t = table(STOCK);
        assert_eq!(
            matching(&t, "warehouse = leeds AND on_hand <= reorder_at"),
            ["SKU-102"]
        );
        assert_eq!(
            matching(&t, "WHERE item = 'office chair' && warehouse != \"Leeds\""),
            ["SKU-107"]
        );
        assert_eq!(matching(&t, "`item` == Desk lamp"), ["SKU-101", "SKU-104"]);
        assert_eq!(matching(&t, "0 = on_hand"), ["SKU-104"]);
        assert_eq!(matching(&t, "10 < on_hand"), ["SKU-101", "SKU-105"]);
        assert_eq!(
            matching(&t, "on_hand = 0.0"),
            ["SKU-104"],
            "equal as numbers"
        );
    }

    #[test]
    fn a_value_in_single_quotes_is_never_a_column() {
        let t = table("a,b\nb,x\nc,c\n");
        assert_eq!(
            parse_where(&t, "a = b").unwrap()[0].operand,
            Operand::Column(1)
        );
        assert_eq!(
            parse_where(&t, "a = 'b'").unwrap()[0].operand,
            Operand::Value("b".into())
        );
    }

    #[test]
    fn a_cell_that_is_no_number_is_not_compared_and_said() {
        let t = table(STOCK);
        let conditions = parse_where(&t, "on_hand < 10").unwrap();
        assert_eq!(
            row_matches(&conditions, &t.rows[5]),
            Err("\"n/a\" < \"10\"".to_string())
        );
        // Another condition that fails settles the row without a comparison.
        let both = parse_where(&t, "warehouse = Leeds and on_hand < 10").unwrap();
        assert_eq!(row_matches(&both, &t.rows[5]), Ok(false));
    }

    #[test]
    fn dates_compare_as_dates_and_text_orderings_are_refused() {
        let t = table("day,n\n2024-01-31,1\n2024-02-01,2\n2024-02-01T09:00,3\nsoon,4\n");
        assert_eq!(
            matching(&t, "day >= 2024-02-01"),
            ["2024-02-01", "2024-02-01T09:00"]
        );
        let e = parse_where(&t, "day < tomorrow").unwrap_err();
        assert!(e.contains("compares numbers or dates"), "{e}");
    }

    #[test]
    fn malformed_conditions_say_what_to_write() {
        let t = table(STOCK);
        for (text, says) in [
            ("on_hand", "has no comparison"),
            (
                "stock < 5",
                "no column \"stock\"; the columns are: sku, item",
            ),
            ("warehouse = Leeds or warehouse = York", "`or` is not read"),
            ("warehouse = Leeds ||  on_hand = 0", "`or` is not read"),
            ("item = 'lamp", "not closed"),
            ("on_hand > 1 and", "no condition on one side"),
            ("= 5", "needs a column on the left"),
            ("   ", "is empty"),
            ("on_hand < lots", "compares numbers or dates"),
        ] {
            let e = parse_where(&t, text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
        let many = vec!["on_hand > 1"; WHERE_MAX_CONDITIONS + 1].join(" and ");
        assert!(parse_where(&t, &many).unwrap_err().contains("at most"));
        assert!(parse_where(&t, &"x".repeat(WHERE_MAX_CHARS + 1))
            .unwrap_err()
            .contains("longer than"));
    }

    #[test]
    fn words_holding_and_or_or_are_not_joiners() {
        let t = table("brand,order\nAnderson,1\nOrion,2\n");
        assert_eq!(matching(&t, "brand = Anderson"), ["Anderson"]);
        assert_eq!(matching(&t, "brand = orion and order = 2"), ["Orion"]);
        assert_eq!(matching(&t, "brand = 'a and b'"), Vec::<String>::new());
    }

    #[test]
    fn counts_cover_short_columns_no_equality_fixes() {
        let t = table(
            "student,course,points,result\nA,math,40,fail\nA,physics,45,fail\nB,math,70,pass\nB,physics,30,fail\nC,history,20,fail\n",
        );
        let conditions = parse_where(&t, "result = fail").unwrap();
        let rows: Vec<&Vec<String>> = t
            .rows
            .iter()
            .filter(|r| row_matches(&conditions, r) == Ok(true))
            .collect();
        let counts = value_counts(&t, &conditions, &rows);
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
