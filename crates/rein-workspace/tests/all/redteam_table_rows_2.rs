//! Red team, second round: `table_rows`' `where` after the mend of fff70f3 (dates with a day
//! alone, bare names that are also values, ids with leading zeros, quotes at a side's start).
//! Each test is one attack asserting the right behaviour; a failing one is marked `HOLE:` and
//! names the defect it exposes. Passing ones stay as regression tests.

use serde_json::{json, Value};

use crate::support::{desk, listed_cells as listed, table_rows as rows, Fixture};

/// The answer of `table_rows`, or the refusal's message.
fn answer(f: &Fixture, path: &str, where_: &str) -> Result<Value, String> {
    match desk(
        &f.ws(),
        "table_rows",
        json!({"path": path, "where": where_}),
    ) {
        Ok(rein_workspace::ToolOutput::Data(v)) => Ok(v),
        Ok(other) => panic!("`{where_}`: not data: {other:?}"),
        Err(e) => Err(e.to_string()),
    }
}

/// Whether the row whose `id` is `id` is either matched or said not to be compared: what it
/// must never be is silently left out.
fn matched_or_said(out: &Value, id: &str) -> bool {
    listed(out, "id").iter().any(|i| i == id)
        || out["rows_not_compared_note"]
            .as_str()
            .is_some_and(|n| !n.is_empty())
}

// -------------------------------------------------------------------- times

/// Was a hole, mended: times are ordered as text after the day, so an offset is a letter: `12:00+02:00` (10:00
/// UTC) is read as later than `11:00Z`, and `at < 2024-06-01T11:00Z` silently leaves it out;
/// `at = 2024-06-01T10:00Z` does not match the same instant written `12:00+02:00`. Expected:
/// times with offsets are compared as instants, or a comparison mixing offsets (or an offset
/// with none) is not made and the row is named in `rows_not_compared`.
#[test]
fn times_with_offsets_are_compared_as_instants_or_not_at_all() {
    let f = Fixture::new();
    f.write(
        "tz.csv",
        "id,at\nberlin,2024-06-01T12:00+02:00\nlondon,2024-06-01T10:30Z\nlate,2024-06-01T13:00Z\n",
    );
    let out = rows(&f, "tz.csv", "at < 2024-06-01T11:00Z");
    assert!(
        matched_or_said(&out, "berlin"),
        "12:00+02:00 is 10:00Z, before 11:00Z, and was silently left out: {out}"
    );
    let out = rows(&f, "tz.csv", "at = 2024-06-01T10:00Z");
    assert!(
        matched_or_said(&out, "berlin"),
        "the same instant in another offset is not equal and nothing says why: {out}"
    );
}

/// Was a hole, mended: `09:00` and `09:00:00` are one time, but ordered as text `09:00:00` is after
/// `09:00`: `at = 2024-06-01T09:00` matches no row written with seconds, and
/// `at <= 2024-06-01T09:00` leaves it out. Expected: a time without seconds is the same as
/// one with `:00` seconds (or, like a day alone, stands for its whole minute).
#[test]
fn a_time_without_seconds_equals_the_same_time_with_seconds() {
    let f = Fixture::new();
    f.write(
        "s.csv",
        "id,at\nsec,2024-06-01T09:00:00\nmin,2024-06-01T09:00\nlater,2024-06-01T09:00:30\n",
    );
    let out = rows(&f, "s.csv", "at = 2024-06-01T09:00");
    assert!(
        listed(&out, "id").contains(&"sec".to_string()),
        "`09:00:00` is not `09:00`: {out}"
    );
    let out = rows(&f, "s.csv", "at <= 2024-06-01T09:00");
    assert!(
        listed(&out, "id").contains(&"sec".to_string()),
        "`at <= ..T09:00` left out 09:00:00: {out}"
    );
}

/// Was a hole, mended: an hour of one digit (`2024-06-01 9:30`, as spreadsheets export it) is ordered as text,
/// so `9:30` is later than `10:00`: `at > 2024-06-01 10:00` keeps the 9:30 row and leaves
/// nothing said. Expected: the 9:30 row does not match (hours read as numbers), or it is named
/// as not compared.
#[test]
fn an_hour_of_one_digit_is_not_later_than_ten() {
    let f = Fixture::new();
    f.write(
        "h.csv",
        "id,at\nnine,2024-06-01 9:30\nten,2024-06-01 10:15\n",
    );
    let out = rows(&f, "h.csv", "at > 2024-06-01 10:00");
    let said = out["rows_not_compared_note"].as_str().is_some();
    assert!(
        said || listed(&out, "id") == ["ten"],
        "9:30 was read as after 10:00: {out}"
    );
}

/// Was a hole, mended: a cell that starts with a date and goes on in words (`2024-06-01 to 2024-06-30`,
/// `2024-06-03 (moved)`) is read as a moment whose "time" is the words: it equals
/// `2024-06-01` (a day alone takes any time) and orders by its first date, so
/// `period = 2024-06-01` counts a month-long range as that day, silently. Expected: only a
/// time after the day makes a moment; such a cell is text (`=` compares it as written, an
/// ordering names it in `rows_not_compared`).
#[test]
fn a_date_followed_by_words_is_text_not_a_moment() {
    let f = Fixture::new();
    f.write(
        "p.csv",
        "id,period\nday,2024-06-01\nrange,2024-06-01 to 2024-06-30\nmoved,2024-06-01 (moved)\n",
    );
    let out = rows(&f, "p.csv", "period = 2024-06-01");
    assert_eq!(
        listed(&out, "id"),
        ["day"],
        "a range and a remark were read as the day they start with: {out}"
    );
}

// -------------------------------------------------------------------- dates not in ISO form

/// Was a hole, mended: a date written without leading zeros (`2024-6-1`, as a small model often writes it) is
/// no date to `=`, so it is compared as text with `2024-06-01` and matches nothing, silently:
/// the answer is `rows: 0`, which the model reports as "no deploys that day". The ordering
/// `day >= 2024-6-1` is refused ("neither a number nor a date"), so `=` is the odd one out.
/// Expected: `2024-6-1` is read as the date 2024-06-01 (or refused as `>=` is, saying to
/// write 2024-06-01).
#[test]
fn a_date_without_leading_zeros_is_read_as_that_date_or_refused() {
    let f = Fixture::new();
    f.write(
        "d.csv",
        "id,day\na,2024-06-01\nb,2024-06-02\nc,2024-06-01\n",
    );
    match answer(&f, "d.csv", "day = 2024-6-1") {
        Ok(out) => assert_eq!(
            listed(&out, "id"),
            ["a", "c"],
            "`2024-6-1` silently matched no row of 2024-06-01: {out}"
        ),
        Err(e) => assert!(e.contains("2024-"), "{e}"),
    }
}

/// Slashed dates and other orderings of text are refused loudly, never silently ordered as text
/// (passes).
#[test]
fn slashed_dates_and_exponents_in_an_ordering_are_refused_not_misread() {
    let f = Fixture::new();
    f.write("d.csv", "id,day,n\na,2024/06/01,1000\nb,2024/07/01,5\n");
    for where_ in ["day >= 2024/06/15", "n > 1e3"] {
        let e = answer(&f, "d.csv", where_).expect_err(where_);
        assert!(e.contains("numbers or dates"), "{where_}: {e}");
    }
    // Cells that are no ISO date against an ISO bound are said, not dropped.
    let out = rows(&f, "d.csv", "day >= 2024-06-15");
    assert_eq!(out["rows_not_compared"], 2, "{out}");
}

// -------------------------------------------------------------------- names and values

/// Was a hole, mended: the rule "a bare name that is also a value of the other side's column is that value"
/// holds only for a name on the right. Written the other way round (`pass = result`, as
/// `0 < on_hand` is accepted for `on_hand > 0`), with a `pass` column in the table, it compares
/// the column `pass` with the column `result` and matches nothing, silently. Expected: read as
/// `result = "pass"` (the left name is a value of the right column and no value of its own),
/// or refused as ambiguous.
#[test]
fn a_bare_value_on_the_left_that_is_also_a_header_is_that_value() {
    let f = Fixture::new();
    f.write(
        "g.csv",
        "id,score,pass,result\nA,70,50,pass\nB,40,50,fail\nC,55,50,pass\n",
    );
    match answer(&f, "g.csv", "pass = result") {
        Ok(out) => assert_eq!(
            listed(&out, "id"),
            ["A", "C"],
            "`pass = result` compared two columns: {}",
            out["where"]
        ),
        Err(e) => assert!(e.contains("pass"), "{e}"),
    }
}

/// Was a hole, mended: a bare number is a column when a column has that name (question-score tables:
/// `student,1,2,3,total`), unless the compared column happens to hold that number: `total > 2`
/// compares total with question 2's column and says `total > column 2`. Whether `2` is a value
/// depends on the data (add a row whose total is 2 and the same text reads as the number).
/// Expected: a number compared with a column is a number (name the column in backquotes), or
/// the text is refused as ambiguous; never read one way or the other by what the rows hold.
#[test]
fn a_number_that_is_also_a_header_is_read_the_same_whatever_the_rows_hold() {
    let f = Fixture::new();
    f.write("q.csv", "id,1,2,3,total\nA,1,6,1,5\nB,3,3,3,9\nC,0,1,0,1\n");
    match answer(&f, "q.csv", "total > 2") {
        Ok(out) => assert_eq!(
            listed(&out, "id"),
            ["A", "B"],
            "`total > 2` was read as {} (against the column `2`)",
            out["where"]
        ),
        Err(e) => assert!(e.contains('2'), "{e}"),
    }
}

/// `status = open and closed` (a value with "and" in it, unquoted) is refused with what to
/// write, never read as `status = open` (passes).
#[test]
fn a_value_holding_and_is_refused_not_cut() {
    let f = Fixture::new();
    f.write("s.csv", "id,status\na,open and closed\nb,open\nc,closed\n");
    let e = answer(&f, "s.csv", "status = open and closed").expect_err("cut at `and`");
    assert!(e.contains("no comparison"), "{e}");
    assert_eq!(
        listed(&rows(&f, "s.csv", "status = 'open and closed'"), "id"),
        ["a"]
    );
}

// -------------------------------------------------------------------- numbers

/// `-5`, `(5)` and `-5.00` are one number to `=` and to orderings; `−5` (a Unicode minus) is
/// not a number, and an ordering says so rather than dropping it (passes).
#[test]
fn negative_spellings_are_one_number_and_a_unicode_minus_is_said() {
    let f = Fixture::new();
    f.write("n.csv", "id,n\na,-5\nb,(5)\nc,-5.00\nd,\u{2212}5\ne,5\n");
    assert_eq!(listed(&rows(&f, "n.csv", "n = -5"), "id"), ["a", "b", "c"]);
    let out = rows(&f, "n.csv", "n < 0");
    assert_eq!(listed(&out, "id"), ["a", "b", "c"]);
    assert_eq!(out["rows_not_compared"], 1, "{out}");
}

// -------------------------------------------------------------------- CSV reading

/// Cells the judge's CSV reader and `Table::parse` could read otherwise: text after a closing
/// quote, spaces around a quoted cell, a lone quote inside a bare cell, a blank line, a CR LF
/// file. `table_rows` reads each as the judge does (passes).
#[test]
fn quote_edge_cells_read_as_the_judge_reads_them() {
    let f = Fixture::new();
    f.write(
        "q.csv",
        "id,status\r\n1,\"fail\"ed\r\n2,\"failed\" \r\n\r\n3,fai\"led\r\n4, \"failed\"\r\n5,failed\r\n",
    );
    let out = rows(&f, "q.csv", "status = failed");
    // The judge reads row 1 as `failed`, row 2 as `failed ` (trimmed: failed), row 3 as
    // `fai"led`, row 4 as ` "failed"` (trimmed: `"failed"`), row 5 as `failed`.
    assert_eq!(listed(&out, "id"), ["1", "2", "5"], "{out}");
    assert_eq!(out["rows_in_file"], 5, "{out}");
}

// -------------------------------------------------------------------- odd text

/// Odd UTF-8 in `where` and in cells never panics: a BOM or a zero-width space before a name,
/// a non-breaking space around `and`, combining marks, a date followed by a multibyte
/// character at byte 10, a quote followed by a multibyte character (passes).
#[test]
fn odd_utf8_in_where_and_cells_never_panics() {
    let f = Fixture::new();
    f.write(
        "u.csv",
        "id,at,name\na,2024-06-01\u{e9},Z\u{301}o\u{eb}\nb,2024-06-01\u{a0}10:00,\u{200b}x\nc,2024-06-01T\u{1f600},y\n",
    );
    for where_ in [
        "\u{feff}id = a",
        "\u{200b}id = a",
        "id = a\u{a0}and\u{a0}name = y",
        "name = Z\u{301}o\u{eb}",
        "at >= 2024-06-01",
        "at = 2024-06-01\u{e9}",
        "at < 2024-06-01T\u{1f600}",
        "name = '\u{1f600}'",
        "name = \"\u{1f600}",
        "'\u{e9}' = name",
        "where\u{e9} = 1",
        "\u{1f600} and \u{1f600}",
        "id = a && \u{301}",
        "id = \u{301}'",
    ] {
        // Refused or answered; what matters is no panic.
        let _ = answer(&f, "u.csv", where_);
    }
}

// -------------------------------------------------------------------- caps

/// Was a hole, mended: two long values of a counted column that share their first 100 characters and their
/// length are counted apart but shown alike (`xxx… (cut: 120 characters)` twice): the model
/// reads one value listed twice with two counts, and nothing says they differ. Expected: cut
/// values that would show alike are told apart (or the cut says so).
#[test]
fn counted_values_cut_alike_are_told_apart() {
    let f = Fixture::new();
    let head = "x".repeat(110);
    f.write(
        "c.csv",
        format!("id,label\n1,{head}AAAAAAAAAA\n2,{head}BBBBBBBBBB\n3,{head}AAAAAAAAAA\n4,short\n"),
    );
    let out = rows(&f, "c.csv", "id > 0");
    let shown: Vec<&str> = out["counts"]["label"]
        .as_array()
        .unwrap_or_else(|| panic!("no counts of label: {out}"))
        .iter()
        .map(|v| v["value"].as_str().unwrap())
        .collect();
    let mut unique = shown.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(
        unique.len(),
        shown.len(),
        "two different values are shown alike: {shown:?}"
    );
}
