//! The `where` of `table_rows`: conditions joined by `and`, each a column, a comparison and a
//! value or another column, read forgivingly (SQL habits such as a leading `WHERE`, `==`, quotes
//! and a closing `;`) but never silently misread: what cannot be read one way is refused with
//! what to write.

use std::cmp::Ordering;

use super::table::{cell, parse_number, shown_cell, Table};

/// Longest `where` text.
pub const WHERE_MAX_CHARS: usize = 300;
/// Most conditions one `where` joins.
pub const WHERE_MAX_CONDITIONS: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
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
pub(super) enum Operand {
    Column(usize),
    Value(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Condition {
    pub column: usize,
    pub op: Op,
    pub operand: Operand,
}

impl Condition {
    /// How the condition was read, for the answer: a value in quotes, a column by its name.
    pub fn describe(&self, keys: &[String]) -> String {
        let right = match &self.operand {
            Operand::Column(c) => format!("column {}", keys[*c]),
            Operand::Value(v) => format!("\"{v}\""),
        };
        format!("{} {} {right}", keys[self.column], self.op.symbol())
    }

    /// Whether the condition keeps only rows with one value of its column.
    pub fn fixes_value(&self) -> bool {
        self.op == Op::Eq && matches!(self.operand, Operand::Value(_))
    }
}

/// Whether `row` meets every condition; `Err` names a cell an ordering could not compare.
pub(super) fn row_matches(conditions: &[Condition], row: &[String]) -> Result<bool, String> {
    let mut uncompared = None;
    for c in conditions {
        let left = cell(row, c.column).trim();
        let right = match &c.operand {
            Operand::Column(i) => cell(row, *i).trim(),
            Operand::Value(v) => v.as_str(),
        };
        let holds = if c.op.orders() {
            let Some(o) = ordering(left, right) else {
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
            };
            match c.op {
                Op::Lt => o == Ordering::Less,
                Op::Le => o != Ordering::Greater,
                Op::Gt => o == Ordering::Greater,
                _ => o != Ordering::Less,
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

/// Whether `table_rows` reads two cells as equal (its `=`): as dates when both are dates, as
/// numbers when both are numbers (`8` and `8.0`; not an id with a leading zero such as
/// `02134`), else as text ignoring case and surrounding spaces.
pub fn same_cell_value(a: &str, b: &str) -> bool {
    equal(a, b)
}

fn equal(a: &str, b: &str) -> bool {
    if let (Some(x), Some(y)) = (Moment::of(a), Moment::of(b)) {
        if let Some(order) = x.cmp_with(&y) {
            return order == Ordering::Equal;
        }
    }
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.trim().to_lowercase() == b.trim().to_lowercase(),
    }
}

/// A cell as a number for comparison: as `table_stats` reads it, except text with a leading
/// zero (`007`, `02134`), which is an identifier.
fn number(s: &str) -> Option<rust_decimal::Decimal> {
    let digits = s.trim().trim_start_matches(['-', '+', '(']);
    let mut chars = digits.chars();
    if chars.next() == Some('0') && chars.next().is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    parse_number(s)
}

/// The order of two cells that are both numbers or both dates; `None` for anything else.
fn ordering(a: &str, b: &str) -> Option<Ordering> {
    if let (Some(x), Some(y)) = (number(a), number(b)) {
        return Some(x.cmp(&y));
    }
    Moment::of(a)?.cmp_with(&Moment::of(b)?)
}

/// A date written `YYYY-MM-DD` (month and day of one or two digits), alone or followed by `T`
/// or a space and a time `H:MM`, `H:MM:SS` or `H:MM:SS.fff`, optionally with an offset (`Z`,
/// `+02:00`, `-0500`). Anything else after the day (words) makes the cell no moment: it is not
/// ordered, and `=` compares it as text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Moment {
    /// A calendar day, and a time of day when one is written, with no offset.
    Local(time::Date, Option<time::Time>),
    /// An instant: a day and time with an offset.
    Instant(time::OffsetDateTime),
}

impl Moment {
    fn of(s: &str) -> Option<Moment> {
        let s = s.trim();
        let (day, clock_text) = match s.find(['T', ' ']) {
            Some(at) => (&s[..at], Some(&s[at + 1..])),
            None => (s, None),
        };
        let mut parts = day.split('-');
        let year = number_of(parts.next()?, 4, 4)?;
        let month = number_of(parts.next()?, 1, 2)?;
        let date = number_of(parts.next()?, 1, 2)?;
        if parts.next().is_some() {
            return None;
        }
        let month = time::Month::try_from(u8::try_from(month).ok()?).ok()?;
        let date = time::Date::from_calendar_date(
            i32::try_from(year).ok()?,
            month,
            u8::try_from(date).ok()?,
        )
        .ok()?;
        let Some(clock_text) = clock_text else {
            return Some(Moment::Local(date, None));
        };
        let (clock_text, offset) = split_offset(clock_text)?;
        let at = clock(clock_text)?;
        Some(match offset {
            None => Moment::Local(date, Some(at)),
            Some(offset) => {
                Moment::Instant(time::PrimitiveDateTime::new(date, at).assume_offset(offset))
            }
        })
    }

    /// Day first; times only when both have one, so a day alone stands for the whole of it
    /// (`at <= 2024-06-30` keeps `2024-06-30T15:00`). Instants compare as instants; an
    /// instant and a local time do not compare.
    fn cmp_with(&self, other: &Moment) -> Option<Ordering> {
        match (self, other) {
            (Moment::Local(d1, t1), Moment::Local(d2, t2)) => {
                Some(d1.cmp(d2).then_with(|| match (t1, t2) {
                    (Some(x), Some(y)) => x.cmp(y),
                    _ => Ordering::Equal,
                }))
            }
            (Moment::Instant(x), Moment::Instant(y)) => Some(x.cmp(y)),
            _ => None,
        }
    }
}

/// A time's text and its offset (`Z`, `+02:00`, `+0200`, `-05:00`), if it ends in one.
fn split_offset(t: &str) -> Option<(&str, Option<time::UtcOffset>)> {
    if let Some(clock_text) = t.strip_suffix(['Z', 'z']) {
        return Some((clock_text, Some(time::UtcOffset::UTC)));
    }
    let Some(at) = t.rfind(['+', '-']) else {
        return Some((t, None));
    };
    let (clock_text, sign, zone) = (&t[..at], &t[at..at + 1], t[at + 1..].replace(':', ""));
    let hours = number_of(zone.get(..2)?, 2, 2)?;
    let minutes = number_of(zone.get(2..)?, 2, 2)?;
    let sign: i8 = if sign == "-" { -1 } else { 1 };
    let offset = time::UtcOffset::from_hms(
        sign * i8::try_from(hours).ok()?,
        sign * i8::try_from(minutes).ok()?,
        0,
    )
    .ok()?;
    Some((clock_text, Some(offset)))
}

/// `H:MM`, `H:MM:SS` or `H:MM:SS.fff` (up to nine fraction digits); missing seconds are zero.
fn clock(t: &str) -> Option<time::Time> {
    let (whole, nanos) = match t.split_once('.') {
        Some((w, f)) => {
            if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (w, format!("{f:0<9}").parse::<u32>().ok()?)
        }
        None => (t, 0),
    };
    let mut parts = whole.split(':');
    let hours = number_of(parts.next()?, 1, 2)?;
    let minutes = number_of(parts.next()?, 2, 2)?;
    let seconds = match parts.next() {
        Some(sec) => number_of(sec, 2, 2)?,
        None if !t.contains('.') => 0,
        None => return None,
    };
    if parts.next().is_some() {
        return None;
    }
    time::Time::from_hms_nano(
        u8::try_from(hours).ok()?,
        u8::try_from(minutes).ok()?,
        u8::try_from(seconds).ok()?,
        nanos,
    )
    .ok()
}

/// `text` as a number of `min..=max` ASCII digits.
fn number_of(text: &str, min: usize, max: usize) -> Option<u32> {
    ((min..=max).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// The conditions of a `where` text, or what is wrong with it, said so the model can fix it.
/// `keys` are the names the answer gives the columns (`amount (column 3)` for a repeated header).
pub(super) fn parse_where(
    table: &Table,
    keys: &[String],
    text: &str,
) -> Result<Vec<Condition>, String> {
    if text.chars().count() > WHERE_MAX_CHARS {
        return Err(format!(
            "`where` is longer than {WHERE_MAX_CHARS} characters"
        ));
    }
    let mut text = text.trim().trim_end_matches(';').trim_end();
    if let Some(rest) = strip_word(text, "where") {
        // A column named `where` is compared, not dropped.
        if !rest.starts_with(['=', '!', '<', '>']) {
            text = rest;
        }
    }
    if text.is_empty() {
        return Err("`where` is empty: give a condition such as `status = open`".to_string());
    }
    let parts = split_conditions(text)?;
    if parts.len() > WHERE_MAX_CONDITIONS {
        return Err(format!(
            "`where` joins {} conditions; at most {WHERE_MAX_CONDITIONS} are read",
            parts.len()
        ));
    }
    parts
        .iter()
        .map(|p| parse_condition(table, keys, p))
        .collect()
}

/// `text` after a leading `word` and a space, ignoring case.
fn strip_word<'t>(text: &'t str, word: &str) -> Option<&'t str> {
    let head = text.get(..word.len())?;
    let rest = &text[word.len()..];
    (head.eq_ignore_ascii_case(word) && rest.starts_with(char::is_whitespace))
        .then(|| rest.trim_start())
}

/// Whether a quote mark at the end of `before` opens a quoted side: only at the start of a side
/// (nothing before it, or a comparison), so the apostrophe of `O'Brien` is a letter.
fn opens_quote(before: &str) -> bool {
    let before = before.trim_end();
    before.is_empty() || before.ends_with(['=', '<', '>', '!'])
}

/// The conditions joined by `and` (or `&&`) outside quotes; `or` between conditions is refused.
fn split_conditions(text: &str) -> Result<Vec<String>, String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let after = &rest[c.len_utf8()..];
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            current.push(c);
            rest = after;
            continue;
        }
        if matches!(c, '\'' | '"' | '`') && opens_quote(&current) {
            quote = Some(c);
            current.push(c);
            rest = after;
            continue;
        }
        let at_word_start = current.is_empty() || current.ends_with(char::is_whitespace);
        // `word` here as a whole word; what follows it.
        let word = |w: &str| {
            let head = rest.get(..w.len())?;
            let tail = &rest[w.len()..];
            (at_word_start
                && head.eq_ignore_ascii_case(w)
                && (tail.is_empty() || tail.starts_with(char::is_whitespace)))
            .then_some(tail)
        };
        // `or` with a condition after it joins; at the end it is a value (Oregon's `OR`).
        let or_joins = word("or").is_some_and(|tail| !tail.trim().is_empty());
        if rest.starts_with("||") || or_joins {
            return Err("`or` is not read: call table_rows once per alternative and add the counts, or use != to leave rows out".to_string());
        }
        if let Some(tail) = rest.strip_prefix("&&").or_else(|| word("and")) {
            parts.push(std::mem::take(&mut current));
            rest = tail;
            continue;
        }
        current.push(c);
        rest = after;
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
fn parse_condition(table: &Table, keys: &[String], text: &str) -> Result<Condition, String> {
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
    for side in [left, right] {
        if let Some(q) = side
            .chars()
            .next()
            .filter(|c| matches!(c, '\'' | '"' | '`'))
        {
            let inner = side[1..].strip_suffix(q);
            if inner.is_none_or(|i| i.contains(q)) {
                return Err(format!(
                    "`{text}`: the quote of {side} is not closed where the value ends; quote the whole value once"
                ));
            }
        }
    }
    if right.starts_with(['=', '<', '>', '!']) {
        return Err(format!(
            "`{text}` has two comparisons in a row; write one of = != < <= > >="
        ));
    }
    let (column, op, operand) = match (
        as_column(table, keys, left)?,
        as_column(table, keys, right)?,
    ) {
        // A bare name that is also a value of the other side's column is that value
        // (`result = pass` in a table with a `pass` column).
        (Some(c), Some(_)) if is_bare(right) && holds_value(table, c, right) => {
            (c, op, Operand::Value(right.to_string()))
        }
        // And on the left: `pass = result` reads as `result = pass`.
        (Some(_), Some(other)) if is_bare(left) && holds_value(table, other, left) => {
            (other, op.flipped(), Operand::Value(left.to_string()))
        }
        (Some(c), Some(other)) => (c, op, Operand::Column(other)),
        (Some(c), None) => (c, op, Operand::Value(unquoted(right).to_string())),
        // `0 < on_hand` reads as `on_hand > 0`.
        (None, Some(c)) => (c, op.flipped(), Operand::Value(unquoted(left).to_string())),
        (None, None) => {
            return Err(format!(
                "`{text}`: no column \"{}\"; the columns are: {}",
                unquoted(left),
                keys.join(", ")
            ))
        }
    };
    if let (true, Operand::Value(v)) = (op.orders(), &operand) {
        if number(v).is_none() && Moment::of(v).is_none() {
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
        if matches!(c, '\'' | '"' | '`') && opens_quote(&text[..at]) {
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

fn is_bare(side: &str) -> bool {
    !side.starts_with(['\'', '"', '`'])
}

/// Whether some row of `table` holds `value` in `column` (as `=` compares).
fn holds_value(table: &Table, column: usize, value: &str) -> bool {
    table
        .rows
        .iter()
        .any(|r| equal(cell(r, column).trim(), value))
}

/// The column `side` names, `Ok(None)` for a value: backquoted or double-quoted text naming a
/// column, or bare text that is a column's name (as the answer gives it, exact, else ignoring
/// case) and no number. Single quotes and empty quotes always make a value. A name two columns share is
/// refused with the names that tell them apart.
fn as_column(table: &Table, keys: &[String], side: &str) -> Result<Option<usize>, String> {
    let name = unquoted(side);
    // A bare number is a value, whatever the header holds (`total > 2` beside a column `2`).
    if side.starts_with('\'') || name.is_empty() || (is_bare(side) && number(side).is_some()) {
        return Ok(None);
    }
    let exact: Vec<usize> = (0..keys.len()).filter(|i| keys[*i] == name).collect();
    let found = if exact.is_empty() {
        (0..keys.len())
            .filter(|i| keys[*i].eq_ignore_ascii_case(name))
            .collect()
    } else {
        exact
    };
    match found.as_slice() {
        [one] => Ok(Some(*one)),
        [] => {
            // A header two columns share is named by the answer with each one's place.
            let shared: Vec<&String> = (0..keys.len())
                .filter(|i| table.header[*i].eq_ignore_ascii_case(name))
                .map(|i| &keys[i])
                .collect();
            if shared.is_empty() {
                Ok(None)
            } else {
                Err(format!(
                    "two or more columns are named \"{name}\": name one as {}",
                    shared
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(" or ")
                ))
            }
        }
        many => Err(format!(
            "\"{name}\" names {} columns; write the name exactly as one of them",
            many.len()
        )),
    }
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
        let conditions = parse_where(t, &t.cell_keys(), text).unwrap();
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
        let operand = |t: &Table, text: &str| {
            parse_where(t, &t.cell_keys(), text).unwrap()[0]
                .operand
                .clone()
        };
        let t = table("a,b\nx,y\nc,c\n");
        assert_eq!(operand(&t, "a = b"), Operand::Column(1));
        assert_eq!(operand(&t, "a = `b`"), Operand::Column(1));
        assert_eq!(operand(&t, "a = 'b'"), Operand::Value("b".into()));
        // A bare name that is also a value of the compared column is that value.
        let t = table("a,b\nb,x\nc,c\n");
        assert_eq!(operand(&t, "a = b"), Operand::Value("b".into()));
        assert_eq!(operand(&t, "a = `b`"), Operand::Column(1));
    }

    #[test]
    fn a_cell_that_is_no_number_is_not_compared_and_said() {
        let t = table(STOCK);
        let conditions = parse_where(&t, &t.cell_keys(), "on_hand < 10").unwrap();
        assert_eq!(
            row_matches(&conditions, &t.rows[5]),
            Err("\"n/a\" < \"10\"".to_string())
        );
        // Another condition that fails settles the row without a comparison.
        let both = parse_where(&t, &t.cell_keys(), "warehouse = Leeds and on_hand < 10").unwrap();
        assert_eq!(row_matches(&both, &t.rows[5]), Ok(false));
    }

    #[test]
    fn dates_compare_as_dates_and_text_orderings_are_refused() {
        let t = table("day,n\n2024-01-31,1\n2024-02-01,2\n2024-02-01T09:00,3\nsoon,4\n");
        assert_eq!(
            matching(&t, "day >= 2024-02-01"),
            ["2024-02-01", "2024-02-01T09:00"]
        );
        let e = parse_where(&t, &t.cell_keys(), "day < tomorrow").unwrap_err();
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
            let e = parse_where(&t, &t.cell_keys(), text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
        let many = ["on_hand > 1"; WHERE_MAX_CONDITIONS + 1].join(" and ");
        assert!(parse_where(&t, &t.cell_keys(), &many)
            .unwrap_err()
            .contains("at most"));
        assert!(
            parse_where(&t, &t.cell_keys(), &"x".repeat(WHERE_MAX_CHARS + 1))
                .unwrap_err()
                .contains("longer than")
        );
    }

    #[test]
    fn words_holding_and_or_or_are_not_joiners() {
        let t = table("brand,order\nAnderson,1\nOrion,2\n");
        assert_eq!(matching(&t, "brand = Anderson"), ["Anderson"]);
        assert_eq!(matching(&t, "brand = orion and order = 2"), ["Orion"]);
        assert_eq!(matching(&t, "brand = 'a and b'"), Vec::<String>::new());
    }
}
