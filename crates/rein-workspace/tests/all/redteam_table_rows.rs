//! Red team: `table_stats`' `max_rows` and `min_rows` (the rows holding the column's largest and
//! smallest number) against hostile tables. Each test is one attack; a failing one names the
//! defect it exposes.

use serde_json::{json, Value};

use crate::support::{data, refusal, Fixture};

fn stats(f: &Fixture, path: &str, args: Value) -> Value {
    let mut a = args;
    a["path"] = json!(path);
    data(&f.ws(), "table_stats", a)
}

#[test]
fn a_filter_picks_the_rows_and_ties_under_it_are_counted() {
    // Four rows hold 50 in the file, only two of them under the filter (any case, any spaces).
    let f = Fixture::new();
    f.write(
        "t.csv",
        "id,team,n\na,red,50\nb,blue,50\nc, RED ,50\nd,blue,50\ne,red,7\nf,red,n/a\n",
    );
    let out = stats(
        &f,
        "t.csv",
        json!({"column": "n", "filter_column": "team", "filter_value": "Red"}),
    );
    let ids: Vec<&str> = out["max_rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["a", "c"], "{out}");
    assert!(out.get("max_rows_note").is_none(), "{out}");
    assert_eq!(
        out["min_rows"],
        json!([{"id": "e", "team": "red", "n": "7"}])
    );
    // Cells are shown trimmed.
    assert_eq!(out["max_rows"][1]["team"], "RED");
}

#[test]
fn thousands_accounting_and_currency_spellings_of_one_number_are_one_tie() {
    let f = Fixture::new();
    f.write(
        "acc.csv",
        "id,amount\na,\"1,000\"\nb,1000.00\nc,$1000\nd,(1000)\ne,\"(1,000.00)\"\nf,-1000\ng,999.99\n",
    );
    let out = stats(&f, "acc.csv", json!({"column": "amount"}));
    assert_eq!(out["max"], "1000", "{out}");
    assert_eq!(out["min"], "-1000", "{out}");
    let max_ids: Vec<&str> = out["max_rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(max_ids, ["a", "b", "c"], "{out}");
    assert!(out.get("max_rows_note").is_none(), "{out}");
    let min_ids: Vec<&str> = out["min_rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(min_ids, ["d", "e", "f"], "{out}");
    // Cells are shown as written, not as read.
    assert_eq!(out["min_rows"][1]["amount"], "(1,000.00)");
}

#[test]
fn non_numeric_and_blank_cells_never_hold_the_max() {
    let f = Fixture::new();
    f.write(
        "m.csv",
        "id,n\na,NaN\nb,inf\nc,1e9\nd,\ne,n/a\nf,3\ng,-inf\nh,-2\n,,\n",
    );
    let out = stats(&f, "m.csv", json!({"column": "n"}));
    assert_eq!(out["max_rows"], json!([{"id": "f", "n": "3"}]), "{out}");
    assert_eq!(out["min_rows"], json!([{"id": "h", "n": "-2"}]), "{out}");
}

#[test]
fn an_all_empty_or_all_text_column_has_no_rows_and_a_one_row_table_has_its_row_twice() {
    let f = Fixture::new();
    f.write("e.csv", "id,n\na,\nb, \nc,\n");
    let out = stats(&f, "e.csv", json!({"column": "n"}));
    assert!(out.get("max_rows").is_none(), "{out}");
    assert!(out.get("min_rows").is_none(), "{out}");
    f.write("one.csv", "id,n\nonly,-0\n");
    let out = stats(&f, "one.csv", json!({"column": "n"}));
    assert_eq!(out["max_rows"], json!([{"id": "only", "n": "-0"}]), "{out}");
    assert_eq!(out["min_rows"], out["max_rows"]);
    // A filter that picks no row: no figure, no rows.
    let out = stats(
        &f,
        "one.csv",
        json!({"column": "n", "filter_column": "id", "filter_value": "none"}),
    );
    assert!(out.get("max_rows").is_none(), "{out}");
}

#[test]
fn a_sum_too_large_gives_no_rows_and_no_panic() {
    let f = Fixture::new();
    f.write(
        "big.csv",
        "id,n\na,9999999999999999999999999999\nb,0.1\nc,9999999999999999999999999999\n",
    );
    let out = stats(&f, "big.csv", json!({"column": "n"}));
    assert!(out.get("max").is_none(), "{out}");
    assert!(out.get("max_rows").is_none(), "{out}");
}

#[test]
fn many_ties_are_counted_in_the_note_and_the_listing_stays_three() {
    let f = Fixture::new();
    let mut csv = String::from("id,n\n");
    for i in 0..20_000 {
        csv.push_str(&format!("r{i},5\n"));
    }
    f.write("ties.csv", &csv);
    let started = std::time::Instant::now();
    let out = stats(&f, "ties.csv", json!({"column": "n"}));
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    assert_eq!(out["max_rows"].as_array().unwrap().len(), 3);
    assert_eq!(
        out["max_rows_note"],
        "20000 rows hold this value; only the first 3 are listed"
    );
    assert_eq!(
        out["min_rows_note"],
        "20000 rows hold this value; only the first 3 are listed"
    );
}

#[test]
fn a_long_multibyte_cell_is_cut_on_a_character_and_says_its_length() {
    let f = Fixture::new();
    let long = "é😀".repeat(80); // 160 characters, 480 bytes
    f.write("u.csv", format!("id,n,memo\na,1,\"{long}\"\n"));
    let out = stats(&f, "u.csv", json!({"column": "n"}));
    let memo = out["max_rows"][0]["memo"].as_str().unwrap();
    assert!(memo.ends_with("… (cut: 160 characters)"), "{memo}");
    assert_eq!(
        memo.chars().count(),
        100 + "… (cut: 160 characters)".chars().count()
    );
}

#[test]
fn crlf_bom_and_a_quoted_newline_read_the_same_rows() {
    let f = Fixture::new();
    f.write(
        "q.csv",
        "\u{feff}id,memo,n\r\na,\"two\r\nlines\",9\r\nb,x,1\r\n",
    );
    let out = stats(&f, "q.csv", json!({"column": "n"}));
    assert_eq!(out["max_rows"][0]["id"], "a", "{out}");
    assert_eq!(out["max_rows"][0]["memo"], "two\r\nlines", "{out}");
    // The BOM is not part of the first column's name.
    assert!(
        out["max_rows"][0].get("id").is_some(),
        "{}",
        out["max_rows"][0]
    );
}

#[test]
fn non_utf8_is_refused_without_a_panic() {
    let f = Fixture::new();
    f.write("bin.csv", b"id,n\na,\xff\xfe1\n".as_slice());
    let why = refusal(
        &f.ws(),
        "table_stats",
        json!({"path": "bin.csv", "column": "n"}),
    );
    assert!(why.contains("UTF-8"), "{why}");
}

/// HOLE: two columns of one name. `max_rows` is a JSON object keyed by header name, so the
/// later `amount` column's cell overwrites the one the figure was computed from: the row is
/// shown holding a number that is not the max, and a column of the row disappears.
#[test]
fn duplicate_header_names_do_not_show_another_column_s_cell_as_the_max() {
    let f = Fixture::new();
    f.write("d.csv", "id,amount,amount\na,5,1\nb,3,9\n");
    let out = stats(&f, "d.csv", json!({"column": "amount"}));
    // The first `amount` column is the one described (as the judge's column_index picks it).
    assert_eq!(out["max"], "5", "{out}");
    let row = &out["max_rows"][0];
    assert_eq!(row["id"], "a", "{out}");
    let cells: Vec<&str> = row
        .as_object()
        .unwrap()
        .values()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        cells.contains(&"5"),
        "max_rows shows the row holding the max 5 without its 5: {row} (duplicate header \
         names collapse into one JSON key and the later column's cell wins; key the row's \
         cells uniquely, e.g. `amount`, `amount (2)`, or give the rows as arrays)"
    );
    assert_eq!(
        row.as_object().unwrap().len(),
        3,
        "max_rows drops a column of a table with duplicate header names: {row}"
    );
}

/// HOLE (size): `max_rows` and `min_rows` give up to six whole rows, each every column of the
/// table at up to 100 characters a cell: a wide table makes them tens of kilobytes, ahead of
/// `groups` in the answer, so a model's own `group_by` call sees its groups clipped away (the
/// prompt shows 6,000 characters of a result).
#[test]
fn the_rows_of_a_wide_table_stay_small_enough_to_leave_room_for_the_groups() {
    let f = Fixture::new();
    let cols = 60;
    let header: Vec<String> = (0..cols).map(|i| format!("c{i}")).collect();
    let mut csv = format!("group,n,{}\n", header.join(","));
    let cell = "y".repeat(100);
    for (g, n) in [("A", 1), ("B", 2), ("C", 3)] {
        let cells: Vec<String> = (0..cols).map(|_| cell.clone()).collect();
        csv.push_str(&format!("{g},{n},{}\n", cells.join(",")));
    }
    f.write("wide.csv", &csv);
    let out = stats(&f, "wide.csv", json!({"column": "n", "group_by": "group"}));
    let text = out.to_string();
    let rows_chars = out["max_rows"].to_string().len() + out["min_rows"].to_string().len();
    let groups_at = text.find("\"groups\"").unwrap();
    assert!(
        groups_at < 6_000,
        "the answer's groups start at character {groups_at}, past the 6,000 characters a \
         result is shown: max_rows and min_rows take {rows_chars} characters for a {}-column \
         table (cap the rows' total size, not only each cell, or list the groups first)",
        cols + 2
    );
}
