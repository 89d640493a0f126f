//! `table_stats`: figures of one column of a CSV, TSV or JSON-lines file, computed here so a
//! small model copies a sum instead of adding up a column itself (the 1.5B wrote "Total hours:
//! 72" where the column sums to 64). Sums are exact decimals; only a mean may be rounded, and
//! the answer says so.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde_json::{json, Value};

use super::{file_error, not_found, object_schema, path_arg, path_schema, text_of, workspace};
use crate::confine::RelPath;
use crate::tool::{args, Tool, ToolContext, ToolError, ToolOutput};

/// Largest table file `table_stats` reads.
pub const TABLE_MAX_BYTES: u64 = 8 * 1024 * 1024;
/// Most distinct values (and groups) one answer lists.
pub const TABLE_MAX_DISTINCT: usize = 50;
/// Decimal places of a mean that does not come out exact.
pub const MEAN_DECIMALS: u32 = 6;
/// Most non-numeric cells named in the note.
const NON_NUMERIC_SHOWN: usize = 5;
/// Most rows holding the column's largest (or smallest) number that one answer shows whole.
pub const TABLE_MAX_EXTREME_ROWS: usize = 3;
/// Longest cell of such a row shown whole; a longer one is cut and says how long it is.
pub const EXTREME_ROW_CELL_CHARS: usize = 100;
/// Most cells of such a row shown (the described column's always among them); the answer says
/// when a row had more.
pub const EXTREME_ROW_MAX_CELLS: usize = 20;

pub struct TableStats;

impl Tool for TableStats {
    fn name(&self) -> &str {
        "table_stats"
    }
    fn description(&self) -> &str {
        "Figures of one column of a CSV, TSV or JSON-lines file: row count, sum, mean, min, max and distinct values, optionally only rows where filter_column equals filter_value, optionally per group of group_by. Use it instead of adding numbers yourself."
    }
    fn schema(&self) -> Value {
        let name = |d: &str| json!({ "type": "string", "minLength": 1, "maxLength": 200, "description": d });
        object_schema(
            json!({
                "path": path_schema("table file, relative to the workspace root"),
                "column": name("the column to describe (its header name)"),
                "filter_column": name("only rows whose value in this column ..."),
                "filter_value": { "type": "string", "maxLength": 200, "description": "... equals this (ignoring case and surrounding spaces)" },
                "group_by": name("give the figures per distinct value of this column"),
            }),
            &["path", "column"],
        )
    }
    fn mutates(&self) -> bool {
        false
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let (rel, table) = read_table(ctx, self.name(), a)?;
        let column = table.column(args::str(self.name(), a, "column")?)?;
        let filter = match (
            args::opt_str(a, "filter_column"),
            args::opt_str(a, "filter_value"),
        ) {
            (Some(c), Some(v)) => Some((table.column(c)?, v.trim().to_lowercase())),
            (None, None) => None,
            _ => {
                return Err(ToolError::InvalidArguments {
                    tool: self.name().to_string(),
                    message: "filter_column and filter_value go together: give both or neither"
                        .to_string(),
                })
            }
        };
        let group_by = args::opt_str(a, "group_by")
            .map(|g| table.column(g))
            .transpose()?;
        let rows: Vec<&Vec<String>> = table
            .rows
            .iter()
            .filter(|row| {
                filter
                    .as_ref()
                    .is_none_or(|(c, v)| row.get(*c).is_some_and(|x| x.trim().to_lowercase() == *v))
            })
            .collect();
        let mut out = json!({
            "path": rel,
            "column": table.header[column],
            "rows_in_file": table.rows.len(),
        });
        if let Some((c, v)) = &filter {
            out["filter"] = json!(format!("{} = {v}", table.header[*c]));
        }
        let all = Figures::of(rows.iter().map(|r| cell(r, column)));
        all.write_into(&mut out);
        if let Some(g) = group_by {
            let mut groups: BTreeMap<String, Vec<&str>> = BTreeMap::new();
            for row in &rows {
                groups
                    .entry(cell(row, g).trim().to_string())
                    .or_default()
                    .push(cell(row, column));
            }
            let total = groups.len();
            let listed: Vec<Value> = groups
                .into_iter()
                .take(TABLE_MAX_DISTINCT)
                .map(|(value, cells)| {
                    let mut v = json!({ "group": value });
                    Figures::of(cells.into_iter()).write_into(&mut v);
                    v
                })
                .collect();
            out["group_by"] = json!(table.header[g]);
            out["groups"] = json!(listed);
            if total > TABLE_MAX_DISTINCT {
                out["groups_truncated"] = json!(format!(
                    "{total} groups; only the first {TABLE_MAX_DISTINCT} (by name) are listed"
                ));
            }
        }
        // How the filtered rows split over each short column (lever `row-query`'s; the engine
        // takes it out without the lever): report-gradebook's fails per course are the
        // `result` counts of one course's rows.
        if let Some((c, _)) = &filter {
            super::rows::write_counts(&mut out, &table, &table.cell_keys(), &[*c], &rows);
        }
        // Which row holds the largest claim is often what a report asks next (report-expenses:
        // the 1.5B wrote the largest amount right and named the wrong employee). After the
        // groups, so a wide table's rows never push them out of a clipped answer.
        for (key, value) in [("max_rows", all.max()), ("min_rows", all.min())] {
            // No rows for a figure the answer does not give (a sum too large to compute).
            if let Some(value) = value.filter(|_| out.get("max").is_some()) {
                extreme_rows(&table, &rows, column, value).write_into(key, &mut out);
            }
        }
        Ok(ToolOutput::Data(out))
    }
}

/// The table file a call's `path` names, read and parsed (at most [`TABLE_MAX_BYTES`]).
pub(super) fn read_table(
    ctx: &ToolContext<'_>,
    tool: &str,
    a: &Value,
) -> Result<(RelPath, Table), ToolError> {
    let ws = workspace(ctx, tool)?;
    let rel = path_arg(ws, tool, a, None)?;
    let (bytes, size) = ws
        .read_prefix(&rel, TABLE_MAX_BYTES)
        .map_err(file_error)?
        .ok_or_else(|| not_found(&rel))?;
    if size > bytes.len() as u64 {
        return Err(ToolError::Refused(format!(
            "\"{rel}\" is {size} bytes; {tool} reads tables of at most {TABLE_MAX_BYTES} bytes"
        )));
    }
    let text = text_of(&bytes)
        .ok_or_else(|| ToolError::Refused(format!("\"{rel}\" is not a UTF-8 text file")))?;
    let table = Table::parse(rel.as_str(), text).map_err(ToolError::Refused)?;
    Ok((rel, table))
}

pub(super) fn cell(row: &[String], column: usize) -> &str {
    row.get(column).map_or("", String::as_str)
}

/// The rows whose number in one column is one value (its largest or smallest): how many, and
/// the first [`TABLE_MAX_EXTREME_ROWS`] as column-to-cell objects.
struct ExtremeRows {
    count: usize,
    shown: Vec<Value>,
    /// How many columns each row has, when more than [`EXTREME_ROW_MAX_CELLS`] (so not all
    /// are shown).
    columns_cut: Option<usize>,
}

fn extreme_rows(
    table: &Table,
    rows: &[&Vec<String>],
    column: usize,
    value: Decimal,
) -> ExtremeRows {
    let holding: Vec<&&Vec<String>> = rows
        .iter()
        .filter(|r| parse_number(cell(r, column)) == Some(value))
        .collect();
    let width = table.header.len();
    // The described column and the others in order, up to the cap; shown in the table's order.
    let mut columns: Vec<usize> = std::iter::once(column)
        .chain((0..width).filter(|i| *i != column))
        .take(EXTREME_ROW_MAX_CELLS)
        .collect();
    let columns_cut = (width > columns.len()).then_some(width);
    columns.sort_unstable();
    let shown = holding
        .iter()
        .take(TABLE_MAX_EXTREME_ROWS)
        .map(|row| {
            let cells: serde_json::Map<String, Value> = columns
                .iter()
                .map(|i| (table.cell_key(*i), json!(shown_cell(cell(row, *i)))))
                .collect();
            Value::Object(cells)
        })
        .collect();
    ExtremeRows {
        count: holding.len(),
        shown,
        columns_cut,
    }
}

impl ExtremeRows {
    fn write_into(self, key: &str, out: &mut Value) {
        let mut notes = Vec::new();
        if self.count > self.shown.len() {
            notes.push(format!(
                "{} rows hold this value; only the first {} are listed",
                self.count,
                self.shown.len()
            ));
        }
        if let Some(width) = self.columns_cut {
            notes.push(format!(
                "each row has {width} columns; only {EXTREME_ROW_MAX_CELLS} of them are listed"
            ));
        }
        if !notes.is_empty() {
            out[format!("{key}_note")] = json!(notes.join("; "));
        }
        out[key] = json!(self.shown);
    }
}

/// A cell of a shown row: whole, or its first [`EXTREME_ROW_CELL_CHARS`] characters and how long
/// it is.
pub(super) fn shown_cell(cell: &str) -> String {
    let cell = cell.trim();
    let chars = cell.chars().count();
    if chars <= EXTREME_ROW_CELL_CHARS {
        return cell.to_string();
    }
    let head: String = cell.chars().take(EXTREME_ROW_CELL_CHARS).collect();
    format!("{head}… (cut: {chars} characters)")
}

/// A table: header names and rows of cells.
#[derive(Debug)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Reads CSV (`.csv`, or any other name whose first line has commas), TSV (`.tsv`, or a
    /// first line with tabs and no commas) or JSON lines (`.jsonl`, `.ndjson`: one object a
    /// line; the columns are the keys in order of first appearance).
    pub fn parse(name: &str, text: &str) -> Result<Table, String> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let lower = name.to_lowercase();
        if lower.ends_with(".jsonl") || lower.ends_with(".ndjson") {
            return Table::from_json_lines(name, text);
        }
        let first = text.lines().next().unwrap_or_default();
        let tab = lower.ends_with(".tsv") || (first.contains('\t') && !first.contains(','));
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(if tab { b'\t' } else { b',' })
            .flexible(true)
            .from_reader(text.as_bytes());
        let header: Vec<String> = reader
            .headers()
            .map_err(|e| format!("\"{name}\": cannot read the header row: {e}"))?
            .iter()
            .map(|h| h.trim().to_string())
            .collect();
        let mut rows = Vec::new();
        for record in reader.records() {
            let record = record.map_err(|e| format!("\"{name}\": {e}"))?;
            if record.iter().all(|c| c.trim().is_empty()) {
                continue;
            }
            // A row of more or fewer cells than the header (trailing empty ones aside) puts its
            // numbers under no knowable column: a figure of it would be wrong.
            let width = header.len();
            let fits = record.len() == width
                || (record.len() > width && record.iter().skip(width).all(|c| c.trim().is_empty()));
            if !fits {
                let line = record.position().map_or(0, |p| p.line());
                return Err(format!(
                    "\"{name}\" line {line} has {} cells where the header has {width}, so its columns cannot be told apart (is the file separated by semicolons, or is a number like 1,200 not in quotes?)",
                    record.len()
                ));
            }
            rows.push(record.iter().map(str::to_string).collect());
        }
        Ok(Table { header, rows })
    }

    fn from_json_lines(name: &str, text: &str) -> Result<Table, String> {
        let mut header: Vec<String> = Vec::new();
        let mut objects = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(line)
                .map_err(|e| format!("\"{name}\" line {}: not JSON: {e}", i + 1))?;
            let Value::Object(map) = value else {
                return Err(format!("\"{name}\" line {}: not a JSON object", i + 1));
            };
            let inexact = has_inexact_number(line);
            for key in map.keys() {
                if !header.contains(key) {
                    header.push(key.clone());
                }
            }
            objects.push((map, inexact));
        }
        let rows = objects
            .iter()
            .map(|(m, inexact)| {
                header
                    .iter()
                    .map(|k| match m.get(k) {
                        None | Some(Value::Null) => String::new(),
                        // serde_json reads such a number as the nearest f64, not as written.
                        Some(Value::Number(n)) if *inexact && n.is_f64() => {
                            "(a number too long to read exactly)".to_string()
                        }
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                    })
                    .collect()
            })
            .collect();
        Ok(Table { header, rows })
    }

    /// The name a row's cell of column `i` goes under: its header, or with its place when
    /// another column has the same header (`amount (column 3)`), so no cell hides another.
    /// The name each column's cells go under in a tool's answer: its header, or with its place
    /// when another column has the same header (`amount (column 3)`). The header is read once
    /// (a table may have thousands of columns).
    pub fn cell_keys(&self) -> Vec<String> {
        let mut uses: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for h in &self.header {
            *uses.entry(h.as_str()).or_default() += 1;
        }
        self.header
            .iter()
            .enumerate()
            .map(|(i, h)| {
                if uses[h.as_str()] > 1 {
                    format!("{h} (column {})", i + 1)
                } else {
                    h.clone()
                }
            })
            .collect()
    }

    pub(super) fn cell_key(&self, i: usize) -> String {
        let h = &self.header[i];
        if self.header.iter().filter(|x| *x == h).count() > 1 {
            format!("{h} (column {})", i + 1)
        } else {
            h.clone()
        }
    }

    /// The index of a column named `name` (exact, else ignoring case and spaces around it).
    pub(super) fn column(&self, name: &str) -> Result<usize, ToolError> {
        let wanted = name.trim();
        self.header
            .iter()
            .position(|h| h == wanted)
            .or_else(|| {
                self.header
                    .iter()
                    .position(|h| h.eq_ignore_ascii_case(wanted))
            })
            .ok_or_else(|| {
                ToolError::Refused(format!(
                    "no column \"{wanted}\"; the columns are: {}",
                    self.header.join(", ")
                ))
            })
    }
}

/// Whether a JSON line holds a number serde_json may not read as written: one with an exponent
/// or more than 15 significant digits (an f64 holds any 15-digit decimal exactly, not more).
fn has_inexact_number(line: &str) -> bool {
    json_number_tokens(line).iter().any(|token| {
        token.contains(['e', 'E'])
            || token
                .bytes()
                .filter(u8::is_ascii_digit)
                .skip_while(|b| *b == b'0')
                .count()
                > 15
    })
}

/// The numbers of a JSON text as written (outside strings), in order: what serde_json will
/// parse, before it rounds them.
pub fn json_number_tokens(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    let mut token = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        let number_char = c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E');
        if number_char && (!token.is_empty() || c.is_ascii_digit() || c == '-') {
            token.push(c);
            continue;
        }
        if !token.is_empty() {
            tokens.push(std::mem::take(&mut token));
        }
        in_string = c == '"';
    }
    tokens
}

/// A cell as a number: an optional sign and currency symbol, digits with optional thousands
/// commas in groups of three, an optional decimal part, an optional `%`. `(12.50)` is -12.50 as
/// in accounts. Anything else is not a number.
pub fn parse_number(cell: &str) -> Option<Decimal> {
    let mut s = cell.trim();
    let mut negative = false;
    if let Some(inner) = s.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        negative = true;
        s = inner.trim();
    }
    if let Some(rest) = s.strip_prefix('-') {
        negative = !negative;
        s = rest;
    } else if let Some(rest) = s.strip_prefix('+') {
        s = rest;
    }
    for symbol in ['$', '€', '£', '¥'] {
        if let Some(rest) = s.strip_prefix(symbol) {
            s = rest.trim_start();
            break;
        }
    }
    s = s.strip_suffix('%').unwrap_or(s);
    let (whole, fraction) = match s.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (s, None),
    };
    let digits_only = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let whole_ok = if whole.contains(',') {
        let groups: Vec<&str> = whole.split(',').collect();
        (1..=3).contains(&groups[0].len())
            && groups.iter().all(|g| digits_only(g))
            && groups[1..].iter().all(|g| g.len() == 3)
    } else {
        digits_only(whole) || (whole.is_empty() && fraction.is_some())
    };
    if !whole_ok || fraction.is_some_and(|f| !digits_only(f)) {
        return None;
    }
    let plain = format!(
        "{}{}{}",
        if whole.is_empty() { "0" } else { "" },
        whole.replace(',', ""),
        fraction.map(|f| format!(".{f}")).unwrap_or_default()
    );
    let value: Decimal = plain.parse().ok()?;
    // rust_decimal rounds a fraction past 28 digits silently: such a cell is no exact number.
    if value.scale() as usize != fraction.map_or(0, str::len) {
        return None;
    }
    Some(if negative { -value } else { value })
}

/// The exact sum of `numbers`, `None` when it overflows or when rust_decimal would round it
/// (it drops fraction digits rather than fail once the integer part needs the room).
pub(super) fn exact_sum(numbers: &[Decimal]) -> Option<Decimal> {
    numbers.iter().try_fold(Decimal::ZERO, |acc, n| {
        let sum = acc.checked_add(*n)?;
        (sum.scale() >= acc.scale().max(n.scale())).then_some(sum)
    })
}

/// Most columns [`column_totals`] describes.
pub const TOTALS_MAX_COLUMNS: usize = 20;
/// Longest column name [`column_totals`] shows; a column of a longer name is left out, so the
/// totals stay short enough to be shown whole ahead of a clipped file.
pub const TOTALS_MAX_NAME_CHARS: usize = 100;
/// Most left-out or total-like rows [`column_totals`] names (it counts them all).
pub const TOTALS_MAX_LISTED_ROWS: usize = 10;

/// Count, sum, min and max of every numeric column of a table file (one whose non-empty cells
/// are all numbers), over all its rows: facts a read of the file can carry, so a small model
/// copies a total instead of adding up a column it was shown. `None` when the text is not a
/// table or has no numeric column. Past [`TOTALS_MAX_COLUMNS`] numeric columns the list says it
/// was cut. Every figure given is true of the file or left out: a ragged table gets none, and a
/// column of two names, of mixed units or of a number rust_decimal cannot hold exactly is skipped.
pub fn column_totals(name: &str, text: &str) -> Option<Value> {
    let table = Table::parse(name, text).ok()?;
    // A ragged table (a semicolon CSV read with commas, an unquoted "1,200") is no table.
    let width = table.header.len();
    let (total_rows, like_totals) = total_rows(&table.rows, width);
    let left_out: std::collections::BTreeSet<usize> = total_rows.iter().map(|(i, _)| *i).collect();
    let rows: Vec<&Vec<String>> = table
        .rows
        .iter()
        .enumerate()
        .filter(|(i, _)| !left_out.contains(i))
        .map(|(_, r)| r)
        .collect();
    let mut totals = Vec::new();
    let mut numeric_columns = 0usize;
    for (i, header) in table.header.iter().enumerate() {
        let Some(figures) = summable(&table, &rows, i) else {
            continue;
        };
        numeric_columns += 1;
        if totals.len() == TOTALS_MAX_COLUMNS {
            continue;
        }
        totals.push(figures.totals_of(header));
    }
    if totals.is_empty() {
        return None;
    }
    let mut out = json!({ "rows": rows.len(), "columns": totals });
    if !total_rows.is_empty() {
        let listed: Vec<Value> = total_rows
            .iter()
            .take(TOTALS_MAX_LISTED_ROWS)
            .map(|(i, label)| {
                let shown: String = label.chars().take(TOTALS_MAX_NAME_CHARS).collect();
                let label = if shown.len() < label.len() {
                    format!("{shown}… (cut)")
                } else {
                    shown
                };
                json!({ "data_row": i + 1, "label": label })
            })
            .collect();
        out["left_out_total_rows"] = json!(listed);
        if total_rows.len() > TOTALS_MAX_LISTED_ROWS {
            out["left_out_total_rows_count"] = json!(total_rows.len());
        }
    }
    if !like_totals.is_empty() {
        let rows: Vec<Value> = like_totals
            .iter()
            .take(TOTALS_MAX_LISTED_ROWS)
            .map(|i| json!({ "data_row": i + 1 }))
            .collect();
        out["rows_like_totals"] = json!(rows);
        if like_totals.len() > TOTALS_MAX_LISTED_ROWS {
            out["rows_like_totals_count"] = json!(like_totals.len());
        }
        out["rows_like_totals_note"] = json!(
            "These rows have no total label but each of their numbers is the sum of the rows above: they are counted in the figures; if one is a total, leave it out yourself."
        );
    }
    if numeric_columns > TOTALS_MAX_COLUMNS {
        out["columns_truncated"] = json!(format!(
            "{numeric_columns} numeric columns; only the first {TOTALS_MAX_COLUMNS} are listed"
        ));
    }
    Some(out)
}

/// The figures of column `i` over `rows` when they add up to one total: a column whose name
/// no other column has and is at most [`TOTALS_MAX_NAME_CHARS`] long, whose non-empty cells are
/// all numbers, of one unit (dollars and euros, or a percentage and a plain number, add up to
/// no one figure).
pub(super) fn summable(table: &Table, rows: &[&Vec<String>], i: usize) -> Option<Figures> {
    let header = table.header.get(i)?;
    // Two columns of one name would give two sums under one name.
    if table.header.iter().filter(|h| *h == header).count() > 1
        || header.chars().count() > TOTALS_MAX_NAME_CHARS
    {
        return None;
    }
    let figures = Figures::of(rows.iter().map(|r| cell(r, i)));
    if figures.numbers.is_empty() || !figures.non_numeric.is_empty() {
        return None;
    }
    let mut units = rows
        .iter()
        .map(|r| cell(r, i))
        .filter(|c| !c.trim().is_empty())
        .map(unit_of);
    let first = units.next();
    if units.any(|u| Some(u) != first) {
        return None;
    }
    Some(figures)
}

/// The rows of a table that total others (labelled, and unlabelled ones that look like
/// totals): both empty when it has none.
pub(super) fn has_total_rows(table: &Table) -> bool {
    let (labelled, like) = total_rows(&table.rows, table.header.len());
    !labelled.is_empty() || !like.is_empty()
}

/// The rows of a table that total others, with their labels, and the unlabelled rows that look
/// like totals. A row is a total when a cell is a total label ([`is_total_label`]), or when a
/// cell starts like one ("Total (EUR)", "TOTAL due") and one of its numbers is the sum of that
/// column over the rows above it (since the last total row, or since the start). A row without
/// such a label whose every number is the sum of two or more rows above only looks like one.
fn total_rows(rows: &[Vec<String>], width: usize) -> (Vec<(usize, String)>, Vec<usize>) {
    let mut totals = Vec::new();
    let mut like = Vec::new();
    // Exact sums of each column since the last total row and since the start (None: inexact).
    let mut section = vec![Some(Decimal::ZERO); width];
    let mut all = vec![Some(Decimal::ZERO); width];
    let mut section_rows = 0usize;
    let mut all_rows = 0usize;
    // And over the whole file's rows without any total-like label, for a total row on top.
    let unlabelled: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| !r.iter().any(|c| is_total_label(c) || starts_like_total(c)))
        .collect();
    let whole: Vec<Option<Decimal>> = (0..width)
        .map(|j| {
            let numbers: Vec<Decimal> = unlabelled
                .iter()
                .filter_map(|r| parse_number(cell(r, j)))
                .collect();
            exact_sum(&numbers)
        })
        .collect();
    for (i, row) in rows.iter().enumerate() {
        let numbers: Vec<Option<Decimal>> =
            (0..width).map(|j| parse_number(cell(row, j))).collect();
        let matches = |sums: &[Option<Decimal>], above: usize, every: bool| {
            let mut pairs = numbers
                .iter()
                .zip(sums)
                .filter_map(|(n, s)| n.map(|n| (n, *s)))
                .peekable();
            let nonzero = numbers.iter().flatten().any(|n| !n.is_zero());
            if above < 2 || !nonzero || pairs.peek().is_none() {
                return false;
            }
            if every {
                pairs.all(|(n, s)| s == Some(n))
            } else {
                pairs.any(|(n, s)| s == Some(n))
            }
        };
        let label = row.iter().find(|c| is_total_label(c)).or_else(|| {
            row.iter().find(|c| {
                starts_like_total(c)
                    && (matches(&section, section_rows, false)
                        || matches(&all, all_rows, false)
                        || matches(&whole, unlabelled.len(), false))
            })
        });
        if let Some(label) = label {
            totals.push((i, label.trim().to_string()));
            section = vec![Some(Decimal::ZERO); width];
            section_rows = 0;
            continue;
        }
        if matches(&section, section_rows, true) || matches(&all, all_rows, true) {
            like.push(i);
        }
        for (j, n) in numbers.iter().enumerate() {
            if let Some(n) = n {
                section[j] = section[j].and_then(|s| exact_sum(&[s, *n]));
                all[j] = all[j].and_then(|s| exact_sum(&[s, *n]));
            }
        }
        section_rows += 1;
        all_rows += 1;
    }
    (totals, like)
}

/// The unit a number cell is written in: its currency symbol, and whether it is a percentage.
fn unit_of(cell: &str) -> (Option<char>, bool) {
    let c = cell.trim().trim_end_matches(')').trim_end();
    let currency = ['$', '€', '£', '¥'].into_iter().find(|s| c.contains(*s));
    (currency, c.ends_with('%'))
}

/// A cell whose first word(s) are a total label followed by more: "Total (EUR)", "TOTAL due".
fn starts_like_total(cell: &str) -> bool {
    let lower = cell.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(2)
        .collect();
    matches!(
        words.as_slice(),
        ["total" | "totals" | "subtotal" | "sum", ..] | ["grand" | "sub", "total"]
    )
}

/// A cell that labels its row as a total of the others: "Total", "TOTAL:", "Grand total",
/// "Subtotal", "Sum".
fn is_total_label(cell: &str) -> bool {
    let lower = cell.trim().trim_end_matches(':').to_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    matches!(
        words.as_slice(),
        ["total"] | ["totals"] | ["grand", "total"] | ["subtotal"] | ["sub", "total"] | ["sum"]
    )
}

/// The figures of a run of cells.
pub(super) struct Figures {
    rows: usize,
    numbers: Vec<Decimal>,
    non_numeric: Vec<String>,
    distinct: BTreeMap<String, usize>,
}

impl Figures {
    fn max(&self) -> Option<Decimal> {
        self.numbers.iter().max().copied()
    }

    fn min(&self) -> Option<Decimal> {
        self.numbers.iter().min().copied()
    }

    fn of<'c>(cells: impl Iterator<Item = &'c str>) -> Figures {
        let mut f = Figures {
            rows: 0,
            numbers: Vec::new(),
            non_numeric: Vec::new(),
            distinct: BTreeMap::new(),
        };
        for c in cells {
            f.rows += 1;
            *f.distinct.entry(c.trim().to_string()).or_default() += 1;
            match parse_number(c) {
                Some(n) => f.numbers.push(n),
                None if c.trim().is_empty() => {}
                None => f.non_numeric.push(c.trim().to_string()),
            }
        }
        f
    }

    /// A summable column's entry in a list of totals: how many numbers, their exact sum, min
    /// and max.
    pub(super) fn totals_of(&self, header: &str) -> Value {
        let mut v = json!({ "column": header, "numbers": self.numbers.len() });
        match exact_sum(&self.numbers) {
            Some(sum) => v["sum"] = json!(sum.normalize().to_string()),
            None => v["note"] = json!("the sum is too large to compute exactly"),
        }
        let min = self.min().unwrap_or_default();
        let max = self.max().unwrap_or_default();
        v["min"] = json!(min.normalize().to_string());
        v["max"] = json!(max.normalize().to_string());
        v
    }

    fn write_into(&self, out: &mut Value) {
        out["rows"] = json!(self.rows);
        out["numeric_cells"] = json!(self.numbers.len());
        if !self.numbers.is_empty() {
            let Some(sum) = exact_sum(&self.numbers) else {
                out["note"] = json!("the sum is too large to compute exactly");
                return;
            };
            let count = Decimal::from(self.numbers.len());
            let mean = sum / count;
            let rounded = mean.round_dp(MEAN_DECIMALS);
            out["sum"] = json!(sum.normalize().to_string());
            out["mean"] = json!(rounded.normalize().to_string());
            if rounded != mean {
                out["mean_rounded_to_decimals"] = json!(MEAN_DECIMALS);
            }
            let min = self.min().unwrap_or_default();
            let max = self.max().unwrap_or_default();
            out["min"] = json!(min.normalize().to_string());
            out["max"] = json!(max.normalize().to_string());
        }
        if !self.non_numeric.is_empty() {
            let shown: Vec<&String> = self.non_numeric.iter().take(NON_NUMERIC_SHOWN).collect();
            out["non_numeric_cells"] = json!(self.non_numeric.len());
            out["non_numeric_examples"] = json!(shown);
        }
        out["distinct_count"] = json!(self.distinct.len());
        let listed: Vec<Value> = self
            .distinct
            .iter()
            .take(TABLE_MAX_DISTINCT)
            .map(|(v, n)| json!({ "value": v, "rows": n }))
            .collect();
        out["distinct"] = json!(listed);
        if self.distinct.len() > TABLE_MAX_DISTINCT {
            out["distinct_truncated"] = json!(format!(
                "{} distinct values; only the first {TABLE_MAX_DISTINCT} (by value) are listed",
                self.distinct.len()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Option<String> {
        parse_number(s).map(|d| d.normalize().to_string())
    }

    #[test]
    fn numbers_are_read_strictly() {
        assert_eq!(n("1,234.50"), Some("1234.5".into()));
        assert_eq!(n("$1,234"), Some("1234".into()));
        assert_eq!(n("-3"), Some("-3".into()));
        assert_eq!(n("(45.10)"), Some("-45.1".into()));
        assert_eq!(n("12.5%"), Some("12.5".into()));
        assert_eq!(n(".5"), Some("0.5".into()));
        assert_eq!(n(" 7 "), Some("7".into()));
        for bad in [
            "", "n/a", "1,23", "12,3456", "1.2.3", "1e5", "12abc", "--3", ",123", "1,",
        ] {
            assert_eq!(n(bad), None, "{bad}");
        }
    }

    #[test]
    fn quoted_csv_and_tsv_and_json_lines() {
        let t = Table::parse(
            "a.csv",
            "\u{feff}name,amount\n\"Acme, Ltd\",\"1,200.50\"\n\nB,3\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.header, vec!["name", "amount"]);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0][0], "Acme, Ltd");
        let t = Table::parse("a.tsv", "x\ty\n1\t2\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.rows[0][1], "2");
        let t = Table::parse("a.jsonl", "{\"a\":1}\n{\"b\":\"x\",\"a\":2.5}\n")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.header, vec!["a", "b"]);
        assert_eq!(t.rows[1], vec!["2.5", "x"]);
        assert!(Table::parse("a.jsonl", "[1]\n").is_err());
    }

    #[test]
    fn figures_are_exact_and_say_what_they_skipped() {
        let cells = ["0.1", "0.2", "n/a", "", "1,000"];
        let mut out = json!({});
        Figures::of(cells.into_iter()).write_into(&mut out);
        assert_eq!(out["sum"], "1000.3");
        assert_eq!(out["rows"], 5);
        assert_eq!(out["numeric_cells"], 3);
        assert_eq!(out["non_numeric_cells"], 1);
        assert_eq!(out["min"], "0.1");
        assert_eq!(out["max"], "1000");
        assert_eq!(out["mean"], "333.433333");
        assert_eq!(out["mean_rounded_to_decimals"], 6);
        let mut empty = json!({});
        Figures::of(std::iter::empty()).write_into(&mut empty);
        assert_eq!(empty["rows"], 0);
        assert!(empty.get("sum").is_none());
    }

    #[test]
    fn column_totals_cover_numeric_columns_of_the_whole_file() {
        let text = "task,owner,hours,cost\nA,Priya,12,\"1,200.50\"\nB,Jonas,16,n/a\n\nC,Tom,,3\n";
        let t = column_totals("data/tasks.csv", text).unwrap_or_else(|| panic!("no totals"));
        assert_eq!(t["rows"], 3);
        let columns = t["columns"].as_array().cloned().unwrap_or_default();
        // `cost` holds a non-number, `task` and `owner` are text: only `hours` is a total.
        assert_eq!(columns.len(), 1, "{t}");
        assert_eq!(columns[0]["column"], "hours");
        assert_eq!(columns[0]["numbers"], 2);
        assert_eq!(columns[0]["sum"], "28");
        assert_eq!(columns[0]["min"], "12");
        assert_eq!(columns[0]["max"], "16");
        assert!(column_totals("notes.csv", "a,b\nx,y\n").is_none());
        assert!(column_totals("x.jsonl", "not json\n").is_none());
        let jl =
            column_totals("x.jsonl", "{\"n\":1.5}\n{\"n\":2}\n").unwrap_or_else(|| panic!("none"));
        assert_eq!(jl["columns"][0]["sum"], "3.5");
    }

    #[test]
    fn a_total_row_is_left_out_of_the_totals_and_named() {
        let text = "item,amount\nPaper,10\nInk,5.50\nTotal:,15.50\nTotal hours of work,2\n";
        let t = column_totals("invoice.csv", text).unwrap_or_else(|| panic!("none"));
        // "Total hours of work" is a line item, not a total row; "Total:" is.
        assert_eq!(t["rows"], 3);
        assert_eq!(t["columns"][0]["sum"], "17.5");
        assert_eq!(
            t["left_out_total_rows"],
            json!([{ "data_row": 3, "label": "Total:" }])
        );
        for label in ["TOTAL", "Grand total", "Subtotal", " sum "] {
            assert!(is_total_label(label), "{label}");
        }
        for label in ["Totals due in June", "total hours", "summary", ""] {
            assert!(!is_total_label(label), "{label}");
        }
    }

    #[test]
    fn column_totals_say_when_they_stop_listing() {
        let header: Vec<String> = (0..25).map(|i| format!("c{i}")).collect();
        let row: Vec<String> = (0..25).map(|i| i.to_string()).collect();
        let text = format!("{}\n{}\n", header.join(","), row.join(","));
        let t = column_totals("wide.csv", &text).unwrap_or_else(|| panic!("none"));
        assert_eq!(
            t["columns"].as_array().map(Vec::len),
            Some(TOTALS_MAX_COLUMNS)
        );
        assert!(t["columns_truncated"]
            .as_str()
            .is_some_and(|s| s.starts_with("25 numeric")));
    }
}

/// Hostile tables: every figure `column_totals` states must be true of the file, or be left out.
#[cfg(test)]
mod hostile {
    use super::*;

    fn totals(name: &str, text: &str) -> Option<Value> {
        column_totals(name, text)
    }

    fn sum_of(t: &Value, column: &str) -> Option<String> {
        t["columns"]
            .as_array()?
            .iter()
            .find(|c| c["column"] == column)
            .and_then(|c| c["sum"].as_str().map(str::to_string))
    }

    #[test]
    fn a_number_decimal_cannot_hold_exactly_is_no_number() {
        // rust_decimal rounds a 31-digit fraction silently; the cell must not count as that.
        assert_eq!(parse_number("0.1234567890123456789012345678901"), None);
        assert_eq!(parse_number("123456789012345678901234567890"), None);
        assert!(parse_number("0.1234567890123").is_some());
        assert_eq!(
            parse_number("-0").map(|d| d.normalize().to_string()),
            Some("0".into())
        );
    }

    #[test]
    fn a_sum_decimal_would_round_is_not_given() {
        let t = totals("big.csv", "n\n9999999999999999999999999999\n0.1\n")
            .unwrap_or_else(|| panic!("none"));
        assert_eq!(sum_of(&t, "n"), None, "{t}");
        assert!(t["columns"][0]["note"].as_str().is_some(), "{t}");
        let t = totals("big.csv", "n\n1000000000000000000000000000\n0.01\n")
            .unwrap_or_else(|| panic!("none"));
        assert_eq!(sum_of(&t, "n"), None, "{t}");
        let mut out = json!({});
        Figures::of(["9999999999999999999999999999", "0.1"].into_iter()).write_into(&mut out);
        assert!(out.get("sum").is_none(), "{out}");
    }

    #[test]
    fn a_semicolon_csv_gets_no_totals() {
        // European CSV: read with commas it is one column "amount;qty" whose cells start "1", "2".
        let text = "amount;qty\n1,50;2\n2,25;3\n";
        assert_eq!(totals("eu.csv", text), None);
    }

    #[test]
    fn ragged_rows_get_no_totals() {
        // Which column a short or long row's cells belong to cannot be told.
        assert_eq!(totals("r.csv", "a,b\n1,2,3\n4,5\n"), None);
        assert_eq!(totals("r.csv", "a,b\n1\n4,5\n"), None);
        // An unquoted thousands separator splits a cell in two.
        assert_eq!(totals("r.csv", "item,amount\nx,1,200\ny,30\n"), None);
        // Trailing empty cells (a spreadsheet's export) are no raggedness.
        let t = totals("r.csv", "a,b\n1,2,\n4,5\n").unwrap_or_else(|| panic!("none"));
        assert_eq!(sum_of(&t, "a"), Some("5".into()));
        assert_eq!(sum_of(&t, "b"), Some("7".into()));
    }

    #[test]
    fn quoted_cells_crlf_bom_and_embedded_newlines_are_read_right() {
        let text = "\u{feff}name,amount\r\n\"Acme,\r\nLtd\",\"1,200.50\"\r\n\"B \"\"x\"\"\",3\r\n";
        let t = totals("q.csv", text).unwrap_or_else(|| panic!("none"));
        assert_eq!(sum_of(&t, "amount"), Some("1203.5".into()), "{t}");
        assert_eq!(t["rows"], 2);
    }

    #[test]
    fn a_csv_whose_first_line_has_a_tab_is_not_misread() {
        // Header "a\tb" (no comma) makes the file be read as TSV; the rows have commas.
        assert_eq!(totals("t.csv", "a\tb\n1,2\n3,4\n"), None);
    }

    #[test]
    fn duplicate_column_names_are_not_summed_under_one_name() {
        let t =
            totals("d.csv", "amount,amount,n\n1,2,3\n4,5,6\n").unwrap_or_else(|| panic!("none"));
        let cols = t["columns"].as_array().cloned().unwrap_or_default();
        assert!(cols.iter().all(|c| c["column"] != "amount"), "{t}");
        assert_eq!(sum_of(&t, "n"), Some("9".into()));
    }

    #[test]
    fn header_only_and_empty_files_get_nothing() {
        assert_eq!(totals("h.csv", "a,b\n"), None);
        assert_eq!(totals("h.csv", ""), None);
        assert_eq!(totals("h.jsonl", ""), None);
    }

    #[test]
    fn json_lines_numbers_are_exact_or_left_out() {
        // serde_json reads 1.0000000000000001 as the f64 1.0: that column cannot be summed.
        let t = totals(
            "x.jsonl",
            "{\"a\":1.0000000000000001,\"b\":1}\n{\"a\":1,\"b\":2}\n",
        )
        .unwrap_or_else(|| panic!("none"));
        assert_eq!(sum_of(&t, "a"), None, "{t}");
        assert_eq!(sum_of(&t, "b"), Some("3".into()));
        // Past u64 an integer is an f64 too.
        let t = totals("x.jsonl", "{\"a\":123456789012345678901234,\"b\":1}\n")
            .unwrap_or_else(|| panic!("none"));
        assert_eq!(sum_of(&t, "a"), None, "{t}");
        // Booleans, objects and arrays are no numbers; null is an empty cell.
        for bad in ["true", "{\"x\":1}", "[1]"] {
            let text = format!("{{\"a\":{bad},\"b\":1}}\n{{\"a\":2,\"b\":1}}\n");
            let t = totals("x.jsonl", &text).unwrap_or_else(|| panic!("none"));
            assert_eq!(sum_of(&t, "a"), None, "{bad}: {t}");
        }
        let t = totals("x.jsonl", "{\"a\":null}\n{\"a\":2.5}\n{\"a\":0.1}\n")
            .unwrap_or_else(|| panic!("none"));
        assert_eq!(sum_of(&t, "a"), Some("2.6".into()));
        assert_eq!(t["columns"][0]["numbers"], 2);
    }

    #[test]
    fn a_total_row_spelled_another_way_is_not_counted_twice() {
        for label in ["Total (EUR)", "TOTAL EUR", "Grand Total:", "Total due"] {
            let text = format!("item,amount\nPaper,10\nInk,5.50\n{label},15.50\n");
            let t = totals("inv.csv", &text).unwrap_or_else(|| panic!("none"));
            assert_eq!(sum_of(&t, "amount"), Some("15.5".into()), "{label}: {t}");
            assert_eq!(t["left_out_total_rows"][0]["label"], label.trim(), "{t}");
        }
        // The label in the last column.
        let t = totals("inv.csv", "amount,item\n10,Paper\n5.5,Ink\n15.5,TOTAL\n")
            .unwrap_or_else(|| panic!("none"));
        assert_eq!(sum_of(&t, "amount"), Some("15.5".into()), "{t}");
        // A line item whose name starts with "Total" and that is no total stays in.
        let t = totals("inv.csv", "item,amount\nPaper,10\nTotal hours of work,2\n")
            .unwrap_or_else(|| panic!("none"));
        assert_eq!(sum_of(&t, "amount"), Some("12".into()), "{t}");
    }

    #[test]
    fn an_unlabelled_row_that_sums_the_rows_above_is_flagged() {
        let t = totals("inv.csv", "item,amount\nPaper,10\nInk,5.50\n,15.50\n")
            .unwrap_or_else(|| panic!("none"));
        // Not left out (1, 2, 3 would be a coincidence), but the model is told.
        assert_eq!(sum_of(&t, "amount"), Some("31".into()), "{t}");
        assert_eq!(t["rows_like_totals"][0]["data_row"], 3, "{t}");
    }
}

#[cfg(test)]
mod hostile_units {
    use super::*;

    #[test]
    fn a_column_mixing_currencies_or_percent_gets_no_sum() {
        for text in [
            "amount\n$100\n€100\n",
            "rate\n50%\n0.5\n",
            "amount\n£3\n3\n",
        ] {
            assert_eq!(column_totals("m.csv", text), None, "{text}");
        }
        let t = column_totals("m.csv", "amount\n$100\n\"$1,000.50\"\n($12.50)\n")
            .unwrap_or_else(|| panic!("none"));
        assert_eq!(t["columns"][0]["sum"], "1088", "{t}");
    }

    #[test]
    fn a_total_row_spelled_another_way_above_the_data_is_left_out() {
        let t = column_totals(
            "inv.csv",
            "item,amount\nTotal (EUR),15.50\nPaper,10\nInk,5.50\n",
        )
        .unwrap_or_else(|| panic!("none"));
        assert_eq!(t["columns"][0]["sum"], "15.5", "{t}");
        assert_eq!(t["left_out_total_rows"][0]["data_row"], 1, "{t}");
    }
}

#[cfg(test)]
mod hostile_size {
    use super::*;

    #[test]
    fn a_column_name_too_long_to_show_is_left_out() {
        let long = "h".repeat(TOTALS_MAX_NAME_CHARS + 1);
        let text = format!("{long},n\n1,2\n3,4\n");
        let t = column_totals("w.csv", &text).unwrap_or_else(|| panic!("none"));
        assert_eq!(t["columns"].as_array().map(Vec::len), Some(1), "{t}");
        assert_eq!(t["columns"][0]["column"], "n");
        assert!(t.to_string().len() < 1_000);
    }
}

#[cfg(test)]
mod hostile_many {
    use super::*;

    #[test]
    fn many_total_rows_are_counted_quickly_and_listed_briefly() {
        let mut text = String::from("item,n\nx,1\ny,2\n");
        for _ in 0..100_000 {
            text.push_str("Total,3\n");
        }
        let started = std::time::Instant::now();
        let t = column_totals("many.csv", &text).unwrap_or_else(|| panic!("none"));
        assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
        assert_eq!(t["columns"][0]["sum"], "3");
        assert_eq!(
            t["left_out_total_rows"].as_array().map(Vec::len),
            Some(TOTALS_MAX_LISTED_ROWS),
            "{t}"
        );
        assert_eq!(t["left_out_total_rows_count"], 100_000);
        assert!(t.to_string().len() < 2_000);
    }
}

#[cfg(test)]
mod hostile_label {
    use super::*;

    #[test]
    fn a_long_total_label_is_shown_cut_and_says_so() {
        let label = format!("Total {}", "x".repeat(10_000));
        let text = format!("item,n\na,1\nb,2\n{label},3\n");
        let t = column_totals("l.csv", &text).unwrap_or_else(|| panic!("none"));
        assert_eq!(t["columns"][0]["sum"], "3");
        let shown = t["left_out_total_rows"][0]["label"]
            .as_str()
            .unwrap_or_default();
        assert!(shown.ends_with("… (cut)"), "{shown}");
        assert!(t.to_string().len() < 1_000);
    }
}

#[cfg(test)]
mod hostile_stats {
    use super::*;

    #[test]
    fn table_stats_refuses_a_ragged_table_and_says_why() {
        // The semicolon CSV that read with commas gives a column "amount;qty" summing to 3.
        let err = Table::parse("eu.csv", "amount;qty\n1,50;2\n2,25;3\n")
            .err()
            .unwrap_or_else(|| panic!("a ragged table is read"));
        assert!(err.contains("line 2"), "{err}");
        assert!(err.contains("semicolons"), "{err}");
        assert!(Table::parse("ok.csv", "a,b\n1,2,\n3,4\n").is_ok());
    }
}
