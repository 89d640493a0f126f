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

/// Was a hole, mended: two columns of one name. `max_rows` is a JSON object keyed by header name, so the
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

/// Was a hole (size), mended: `max_rows` and `min_rows` give up to six whole rows, each every column of the
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

/// Red team of `table_rows` {path, where}: the rows of a table where conditions hold. Each test
/// is one attack; a failing one is marked `HOLE:` and names the defect it exposes.
mod where_rows {
    use serde_json::json;

    use crate::support::{
        desk, listed_cells as listed, symlink, table_rows as rows, table_rows_refusal as refused,
        Fixture,
    };

    const STOCK: &str = "sku,item,warehouse,on_hand,reorder_at\n\
        SKU-101,Desk lamp,Leeds,34,10\n\
        SKU-102,Office chair,Leeds,8,8\n\
        SKU-104,Desk lamp,Bristol,0,10\n\
        SKU-105,Cable tray,Leeds,120,40\n\
        SKU-107,Office chair,Glasgow,3,8\n";

    // ---------------------------------------------------------------- panics (UTF-8 slicing)

    #[test]
    fn multibyte_text_around_joiners_operators_and_the_where_word_never_panics() {
        let f = Fixture::new();
        f.write(
            "m.csv",
            "prix €,naïve,日付,x\n10,é,2024-01-01,1\n€5,😀,2024-02-01,2\n",
        );
        let attacks = [
            "é",
            "€",
            "😀",
            "wheré x = 1",
            "whereé x = 1",
            "WHERE€ x = 1",
            "wh€re x = 1",
            "x = é and naïve = 😀",
            "x = éand naïve = 😀",
            "x = 1 andé naïve = 😀",
            "x = 1 ànd naïve = é",
            "x = 1 €and naïve = é",
            "x = 1 and€ naïve = é",
            "x = 1 and😀",
            "x = 1 &&€",
            "x = 1 €&& x = 2",
            "€&&😀",
            "x = 1 or€",
            "x = 1 é or x = 2",
            "x = 1 ör x = 2",
            "x = 1 ||😀",
            "😀 = 1",
            "x 😀= 1",
            "x =😀",
            "x <😀",
            "x =<😀",
            "😀<😀",
            "é=>é",
            "prix € >= 10",
            "prix € >= €10",
            "naïve = 'é and ö'",
            "naïve = `😀",
            "日付 <= 2024-01-01",
            "日付 <= 2024-01-01é",
            "x ≤ 1",
            "x ≠ 1",
            "x ＝ 1",
            "'😀' < x",
            "\u{200b}x = 1",
            "x = 1 and\u{00a0}x = 1",
            "x = 1\u{00a0}and x = 1",
        ];
        for w in attacks {
            // Any answer or refusal will do; a panic fails the test.
            let _ = desk(&f.ws(), "table_rows", json!({"path": "m.csv", "where": w}));
        }
        let out = rows(&f, "m.csv", "prix € >= 10");
        assert_eq!(out["rows"], 1, "{out}");
        assert_eq!(rows(&f, "m.csv", "日付 > 2024-01-15")["rows"], 1);
        assert_eq!(rows(&f, "m.csv", "naïve = '😀'")["rows"], 1);
    }

    #[test]
    fn a_where_of_300_multibyte_characters_is_not_refused_as_too_long() {
        let f = Fixture::new();
        f.write("t.csv", "note,n\nabc,1\n");
        let w = format!("note = {}", "é".repeat(300 - "note = ".len()));
        assert_eq!(w.chars().count(), 300);
        let out = rows(&f, "t.csv", &w);
        assert_eq!(out["rows"], 0, "{out}");
        let over = format!("{w}é");
        let e = refused(&f, "t.csv", &over);
        assert!(e.contains("300"), "{e}");
    }

    // ---------------------------------------------------------------- numbers and cells

    #[test]
    fn thousands_currency_parentheses_percent_and_8_point_0_compare_as_numbers() {
        let f = Fixture::new();
        f.write(
            "n.csv",
            "id,amount\na,\"1,234\"\nb,$1200.50\nc,(5)\nd,8\ne,8.0\nf,12%\ng,-0\nh,\n",
        );
        assert_eq!(
            listed(&rows(&f, "n.csv", "amount > 1000"), "id"),
            ["a", "b"]
        );
        assert_eq!(listed(&rows(&f, "n.csv", "amount < 0"), "id"), ["c"]);
        assert_eq!(listed(&rows(&f, "n.csv", "amount = 8"), "id"), ["d", "e"]);
        assert_eq!(
            listed(&rows(&f, "n.csv", "amount == 8.00"), "id"),
            ["d", "e"]
        );
        assert_eq!(listed(&rows(&f, "n.csv", "amount = 0"), "id"), ["g"]);
        assert_eq!(
            listed(&rows(&f, "n.csv", "amount > 1,000"), "id"),
            ["a", "b"]
        );
        assert_eq!(listed(&rows(&f, "n.csv", "amount = ''"), "id"), ["h"]);
        // The empty cell cannot be ordered: counted apart and said.
        let out = rows(&f, "n.csv", "amount >= -10");
        assert_eq!(out["rows"], 7, "{out}");
        assert_eq!(out["rows_not_compared"], 1, "{out}");
        assert!(out["rows_not_compared_note"]
            .as_str()
            .unwrap()
            .contains("row 8: empty"));
    }

    #[test]
    fn numbers_too_large_or_too_precise_for_a_decimal_are_not_compared_and_never_panic() {
        let f = Fixture::new();
        f.write(
            "big.csv",
            "id,n\na,79228162514264337593543950336\nb,0.00000000000000000000000000001\nc,1\n",
        );
        let out = rows(&f, "big.csv", "n > 0");
        assert_eq!(listed(&out, "id"), ["c"], "{out}");
        assert_eq!(out["rows_not_compared"], 2, "{out}");
        let e = refused(&f, "big.csv", "n > 79228162514264337593543950336");
        assert!(e.contains("compares numbers"), "{e}");
    }

    /// Was a hole, mended: `=` compares as numbers whenever both sides parse, so an identifier with leading
    /// zeros (a ZIP code, an employee number) equals another without them: `zip = 02134` also
    /// lists the row of zip `2134`. Expected: text that differs as written with a leading zero
    /// (or any text that is not a plain decimal spelling of the same digits) is not equal, e.g.
    /// compare as numbers only when neither side has a leading zero before its first digit.
    #[test]
    fn an_identifier_with_leading_zeros_is_not_equal_to_one_without() {
        let f = Fixture::new();
        f.write("z.csv", "name,zip\nBoston,02134\nOther,2134\nThird,90210\n");
        let out = rows(&f, "z.csv", "zip = 02134");
        assert_eq!(
            listed(&out, "name"),
            ["Boston"],
            "`zip = 02134` matched zip 2134 too (compared as numbers): {out}"
        );
    }

    #[test]
    fn quoted_cells_with_commas_and_newlines_bom_and_crlf_are_read_right() {
        let f = Fixture::new();
        f.write(
            "q.csv",
            "\u{feff}id,note,n\r\n1,\"a, b\",5\r\n2,\"line one\nline two\",6\r\n3,\"say \"\"hi\"\"\",7\r\n",
        );
        assert_eq!(listed(&rows(&f, "q.csv", "id = 1"), "id"), ["1"]);
        assert_eq!(listed(&rows(&f, "q.csv", "note = 'a, b'"), "id"), ["1"]);
        assert_eq!(
            listed(&rows(&f, "q.csv", "note = 'say \"hi\"'"), "id"),
            ["3"]
        );
        let out = rows(&f, "q.csv", "n >= 6");
        assert_eq!(listed(&out, "note"), ["line one\nline two", "say \"hi\""]);
    }

    #[test]
    fn json_lines_missing_keys_nulls_booleans_and_8_point_0() {
        let f = Fixture::new();
        f.write(
            "j.jsonl",
            "{\"id\":\"a\",\"n\":8}\n{\"id\":\"b\",\"n\":8.0,\"flag\":true}\n{\"id\":\"c\",\"n\":null,\"flag\":false}\n\n{\"id\":\"d\",\"n\":\"9\"}\n",
        );
        assert_eq!(listed(&rows(&f, "j.jsonl", "n = 8"), "id"), ["a", "b"]);
        assert_eq!(listed(&rows(&f, "j.jsonl", "flag = true"), "id"), ["b"]);
        assert_eq!(listed(&rows(&f, "j.jsonl", "flag = ''"), "id"), ["a", "d"]);
        let out = rows(&f, "j.jsonl", "n > 7");
        assert_eq!(listed(&out, "id"), ["a", "b", "d"], "{out}");
        assert_eq!(out["rows_not_compared"], 1, "{out}");
    }

    #[test]
    fn a_ragged_table_is_refused_not_misread() {
        let f = Fixture::new();
        f.write("r.csv", "a,b,c\n1,2,3\n4,5\n");
        let e = refused(&f, "r.csv", "a > 0");
        assert!(e.contains("cells where the header has 3"), "{e}");
        f.write("r2.csv", "a,b\n1,2,3\n");
        assert!(refused(&f, "r2.csv", "a > 0").contains("cells where the header has 2"));
        // Trailing empty cells are no column.
        f.write("r3.csv", "a,b\n1,2,,\n");
        assert_eq!(rows(&f, "r3.csv", "a > 0")["rows"], 1);
    }

    // ---------------------------------------------------------------- header names

    /// Was a hole, mended: a value that is also a column's name is read as that column. In a gradebook with
    /// a `pass` column (the pass mark) `result = pass` compares each row's result with its pass
    /// mark and matches nothing; the answer only says `result = column pass`, which a small
    /// model does not read. Expected: when a bare right side names a column and is also a value
    /// of the left column, read it as the value (or refuse and ask for quotes).
    #[test]
    fn a_bare_value_that_is_also_a_header_is_not_silently_read_as_that_column() {
        let f = Fixture::new();
        f.write(
            "g.csv",
            "student,score,pass,result\nA,70,50,pass\nB,40,50,fail\nC,55,50,pass\n",
        );
        let out = desk(
            &f.ws(),
            "table_rows",
            json!({"path": "g.csv", "where": "result = pass"}),
        );
        match out {
            Ok(rein_workspace::ToolOutput::Data(out)) => assert_eq!(
                out["rows"], 2,
                "`result = pass` compared result with the column `pass`: {out}"
            ),
            Ok(other) => panic!("{other:?}"),
            Err(e) => assert!(e.to_string().contains("quote"), "{e}"),
        }
    }

    /// Was a hole, mended: a column named `where` (who/what/where/when tables) cannot be named bare: the
    /// leading `where` is dropped as the SQL word, leaving `= Leeds`, refused as "needs a
    /// column on the left". Expected: drop a leading `where` only when what follows it is not
    /// an operator (a column named `where` is then the left side).
    #[test]
    fn a_column_named_where_can_be_compared() {
        let f = Fixture::new();
        f.write("w.csv", "who,where\nAna,Leeds\nBo,York\n");
        assert_eq!(
            listed(&rows(&f, "w.csv", "`where` = Leeds"), "who"),
            ["Ana"]
        );
        let out = desk(
            &f.ws(),
            "table_rows",
            json!({"path": "w.csv", "where": "where = Leeds"}),
        );
        let out = match out {
            Ok(rein_workspace::ToolOutput::Data(v)) => v,
            other => panic!("`where = Leeds` on a column named where: {other:?}"),
        };
        assert_eq!(listed(&out, "who"), ["Ana"]);
    }

    /// Was a hole, mended: `"" ` (an empty double-quoted value) names a column when the table has a column
    /// with an empty header (the index column pandas writes: `,name,note`). `note = ""`, meant
    /// as "note is empty", compares note with the index column and matches nothing. Expected:
    /// an empty quoted side is always the empty value.
    #[test]
    fn an_empty_double_quoted_value_is_the_empty_text_not_an_unnamed_column() {
        let f = Fixture::new();
        f.write("p.csv", ",name,note\n0,Ana,\n1,Bo,late\n2,Cy,\n");
        assert_eq!(
            listed(&rows(&f, "p.csv", "note = ''"), "name"),
            ["Ana", "Cy"]
        );
        let out = rows(&f, "p.csv", "note = \"\"");
        assert_eq!(
            listed(&out, "name"),
            ["Ana", "Cy"],
            "`note = \"\"` read \"\" as the unnamed column: {out}"
        );
    }

    /// Was a hole, mended: with two columns of one name (`amount`, `amount`) a condition on `amount` is
    /// silently the first, and the second can never be named: the answer keys it
    /// `amount (column 3)`, and `amount (column 3) > 5` is refused as no such column. Expected:
    /// accept the key the answer itself uses, and say (or refuse) when a bare name is two
    /// columns.
    #[test]
    fn a_duplicate_header_name_is_not_silently_the_first_and_the_second_can_be_named() {
        let f = Fixture::new();
        f.write("d.csv", "id,amount,amount\na,5,1\nb,3,9\n");
        let out = rows(&f, "d.csv", "id = b");
        assert_eq!(out["matching_rows"][0]["amount (column 3)"], "9", "{out}");
        let second = desk(
            &f.ws(),
            "table_rows",
            json!({"path": "d.csv", "where": "amount (column 3) > 5"}),
        );
        match second {
            Ok(rein_workspace::ToolOutput::Data(v)) => assert_eq!(listed(&v, "id"), ["b"], "{v}"),
            other => panic!(
                "the key the answer shows, `amount (column 3)`, cannot be named in `where`: {other:?}"
            ),
        }
        let ambiguous = desk(
            &f.ws(),
            "table_rows",
            json!({"path": "d.csv", "where": "amount > 4"}),
        );
        match ambiguous {
            Err(e) => assert!(e.to_string().contains("column 3"), "{e}"),
            Ok(rein_workspace::ToolOutput::Data(v)) => {
                let text = v.to_string();
                assert!(
                    text.contains("column 2") || text.contains("two columns"),
                    "`amount > 4` on two `amount` columns silently used the first: {v}"
                );
            }
            Ok(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn column_names_with_spaces_operators_and_and_are_named_in_quotes() {
        let f = Fixture::new();
        f.write(
            "o.csv",
            "id,on hand,a<b,x=y,profit and loss\nr1,3,1,7,-5\nr2,9,2,8,10\n",
        );
        assert_eq!(listed(&rows(&f, "o.csv", "on hand < 5"), "id"), ["r1"]);
        assert_eq!(listed(&rows(&f, "o.csv", "ON HAND < 5"), "id"), ["r1"]);
        assert_eq!(listed(&rows(&f, "o.csv", "`a<b` > 1"), "id"), ["r2"]);
        assert_eq!(listed(&rows(&f, "o.csv", "\"x=y\" = 7"), "id"), ["r1"]);
        assert_eq!(
            listed(&rows(&f, "o.csv", "`profit and loss` > 0"), "id"),
            ["r2"]
        );
        // Bare, such a name is refused (naming the columns), never misread.
        let e = refused(&f, "o.csv", "a<b > 1");
        assert!(e.contains("the columns are"), "{e}");
        let e = refused(&f, "o.csv", "profit and loss > 0");
        assert!(e.contains("no comparison"), "{e}");
    }

    // ---------------------------------------------------------------- parse ambiguity

    #[test]
    fn operator_spellings_read_right() {
        let f = Fixture::new();
        f.write("s.csv", STOCK);
        let skus = |w: &str| listed(&rows(&f, "s.csv", w), "sku");
        assert_eq!(skus("on_hand => 34"), ["SKU-101", "SKU-105"]);
        assert_eq!(skus("on_hand =< 3"), ["SKU-104", "SKU-107"]);
        assert_eq!(skus("on_hand == 8"), ["SKU-102"]);
        assert_eq!(skus("warehouse <> Leeds"), ["SKU-104", "SKU-107"]);
        assert_eq!(
            skus("on_hand<=reorder_at&&warehouse!='Leeds'"),
            ["SKU-104", "SKU-107"]
        );
        assert_eq!(
            skus("where 8 >= on_hand"),
            ["SKU-102", "SKU-104", "SKU-107"]
        );
        assert_eq!(skus("item = 'a < b'"), Vec::<String>::new());
        assert_eq!(skus("item = \"Desk lamp\" and on_hand > 0"), ["SKU-101"]);
        assert_eq!(skus("item = Desk lamp\nAND\ton_hand > 0"), ["SKU-101"]);
        for bad in [
            "on_hand << 5",
            "on_hand >< 5",
            "on_hand < = 5",
            "item = 'x",
            "item = `",
        ] {
            let _ = refused(&f, "s.csv", bad);
        }
    }

    /// Was a hole, mended: `!==` and `===` (JavaScript spellings a small model writes) are read as `!=` or
    /// `==` with the value `= ok`: `status !== ok` lists every row, `status === ok` none, with
    /// no word. Expected: read them as `!=` and `=`, or refuse them.
    #[test]
    fn triple_equals_spellings_are_read_or_refused_not_taken_as_a_value() {
        let f = Fixture::new();
        f.write("t.csv", "id,status\na,ok\nb,failed\nc,ok\n");
        for (w, want) in [
            ("status !== ok", vec!["b"]),
            ("status === ok", vec!["a", "c"]),
            ("status = = ok", vec!["a", "c"]),
        ] {
            match desk(&f.ws(), "table_rows", json!({"path": "t.csv", "where": w})) {
                Err(_) => {}
                Ok(rein_workspace::ToolOutput::Data(out)) => {
                    assert_eq!(listed(&out, "id"), want, "`{w}` read as {}", out["where"])
                }
                Ok(other) => panic!("{other:?}"),
            }
        }
    }

    /// Was a hole, mended: an SQL habit, a closing `;`, becomes part of the value: `status = 'failed';` is
    /// the value `'failed';` (quotes and all) and matches nothing, silently. Expected: a
    /// trailing `;` is dropped (or refused).
    #[test]
    fn a_trailing_semicolon_is_not_part_of_the_value() {
        let f = Fixture::new();
        f.write("t.csv", "id,status\na,ok\nb,failed\n");
        for w in ["WHERE status = 'failed';", "status = failed;"] {
            match desk(&f.ws(), "table_rows", json!({"path": "t.csv", "where": w})) {
                Err(_) => {}
                Ok(rein_workspace::ToolOutput::Data(out)) => {
                    assert_eq!(listed(&out, "id"), ["b"], "`{w}` read as {}", out["where"])
                }
                Ok(other) => panic!("{other:?}"),
            }
        }
    }

    /// Was a hole, mended: an apostrophe inside a bare word opens a quote: `name = O'Brien` is refused as a
    /// quote not closed, and `category = Children's books and n > 1` too. Expected: a quote
    /// character opens a quoted text only at the start of a side (after an operator, `and`, or
    /// the start), so a bare O'Brien is a value.
    #[test]
    fn an_apostrophe_inside_a_bare_value_is_no_quote() {
        let f = Fixture::new();
        f.write(
            "a.csv",
            "name,category,n\nO'Brien,Children's books,2\nSmith,Garden,3\n",
        );
        assert_eq!(
            listed(&rows(&f, "a.csv", "name = \"O'Brien\""), "name"),
            ["O'Brien"]
        );
        let out = desk(
            &f.ws(),
            "table_rows",
            json!({"path": "a.csv", "where": "name = O'Brien"}),
        );
        match out {
            Ok(rein_workspace::ToolOutput::Data(v)) => {
                assert_eq!(listed(&v, "name"), ["O'Brien"], "{v}")
            }
            other => panic!("`name = O'Brien`: {other:?}"),
        }
        let out = desk(
            &f.ws(),
            "table_rows",
            json!({"path": "a.csv", "where": "category = Children's books and n > 1"}),
        );
        assert!(
            matches!(out, Ok(rein_workspace::ToolOutput::Data(ref v)) if v["rows"] == 1),
            "{out:?}"
        );
    }

    /// Was a hole, mended: a word `or` is refused as the joiner even where no condition follows it: Oregon's
    /// state code, `state = OR`, is refused with "`or` is not read". Expected: an `or` at the
    /// end of the text (nothing after it to join) is a value.
    #[test]
    fn the_state_code_or_at_the_end_is_a_value_not_a_joiner() {
        let f = Fixture::new();
        f.write("st.csv", "city,state\nPortland,OR\nSeattle,WA\n");
        assert_eq!(
            listed(&rows(&f, "st.csv", "state = 'OR'"), "city"),
            ["Portland"]
        );
        let out = desk(
            &f.ws(),
            "table_rows",
            json!({"path": "st.csv", "where": "state = OR"}),
        );
        match out {
            Ok(rein_workspace::ToolOutput::Data(v)) => {
                assert_eq!(listed(&v, "city"), ["Portland"], "{v}")
            }
            other => panic!("`state = OR` on Oregon: {other:?}"),
        }
    }

    #[test]
    fn sql_forms_and_parentheses_are_refused_loudly_not_misread() {
        let f = Fixture::new();
        f.write("s.csv", STOCK);
        for (w, says) in [
            ("warehouse IN ('Leeds', 'York')", "has no comparison"),
            ("item LIKE '%lamp%'", "has no comparison"),
            ("on_hand BETWEEN 1 AND 10", "has no comparison"),
            ("item IS NULL", "has no comparison"),
            ("NOT warehouse = Leeds", "no column"),
            ("(warehouse = Leeds) and (on_hand > 5)", "no column"),
            ("warehouse = Leeds or on_hand > 5", "`or` is not read"),
            ("warehouse = Leeds OR\ton_hand > 5", "`or` is not read"),
            ("item = Salt and pepper", "has no comparison"),
            ("and on_hand > 1", "no condition on one side"),
            (
                "on_hand > 1 and and on_hand > 2",
                "no condition on one side",
            ),
            ("where", "has no comparison"),
            ("on_hand > 5 rows", "compares numbers"),
            ("on_hand >", "needs a column"),
            ("item = ''", ""),
        ] {
            match desk(&f.ws(), "table_rows", json!({"path": "s.csv", "where": w})) {
                Err(e) => assert!(e.to_string().contains(says), "{w}: {e}"),
                Ok(rein_workspace::ToolOutput::Data(v)) => {
                    assert!(says.is_empty(), "{w} was read: {}", v["where"]);
                    assert_eq!(v["rows"], 0);
                }
                Ok(other) => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_value_that_is_only_quotes_is_the_empty_text() {
        let f = Fixture::new();
        f.write("e.csv", "id,note\na,\nb,x\nc,  \n");
        assert_eq!(listed(&rows(&f, "e.csv", "note = ''"), "id"), ["a", "c"]);
        assert_eq!(listed(&rows(&f, "e.csv", "note != ''"), "id"), ["b"]);
        assert_eq!(listed(&rows(&f, "e.csv", "note = ``"), "id"), ["a", "c"]);
        assert!(refused(&f, "e.csv", "note = '").contains("not closed"));
        assert!(refused(&f, "e.csv", "note = '''").contains("not closed"));
    }

    // ---------------------------------------------------------------- dates

    /// Was a hole, mended: dates order as text, so a date-only bound cuts its own day out of timestamped
    /// cells: `at <= 2024-06-30` leaves out `2024-06-30T15:00` (every deploy of the last day),
    /// and `at = 2024-06-30` matches none of them. Expected: a date-only value bounds whole
    /// days against cells with a time (`<=` and `=` take the whole day).
    #[test]
    fn a_date_only_bound_includes_its_own_day_of_timestamped_cells() {
        let f = Fixture::new();
        f.write(
            "ts.csv",
            "id,at\na,2024-06-29T10:00\nb,2024-06-30T15:00\nc,2024-07-01T08:00\n",
        );
        let out = rows(&f, "ts.csv", "at <= 2024-06-30");
        assert_eq!(
            listed(&out, "id"),
            ["a", "b"],
            "`at <= 2024-06-30` left out the rows of June 30: {out}"
        );
    }

    /// Was a hole, mended: a column mixing `2024-02-01 10:00` and `2024-02-01T09:00` (both allowed) orders
    /// ' ' before 'T', so 10:00 is read as earlier than 09:00. Expected: the separator does
    /// not decide the order.
    #[test]
    fn space_and_t_separated_times_order_by_time() {
        let f = Fixture::new();
        f.write(
            "ts.csv",
            "id,at\nearly,2024-02-01T09:00\nlate,2024-02-01 10:00\n",
        );
        let out = rows(&f, "ts.csv", "at > 2024-02-01T09:30");
        assert_eq!(listed(&out, "id"), ["late"], "{out}");
    }

    // ---------------------------------------------------------------- caps

    #[test]
    fn more_than_20_matching_rows_and_columns_say_they_were_cut() {
        let f = Fixture::new();
        let header: Vec<String> = (0..25).map(|i| format!("c{i}")).collect();
        let mut csv = header.join(",") + "\n";
        for r in 0..30 {
            let cells: Vec<String> = (0..25)
                .map(|c| {
                    if c == 24 {
                        "z".repeat(150)
                    } else {
                        format!("{r}")
                    }
                })
                .collect();
            csv.push_str(&(cells.join(",") + "\n"));
        }
        f.write("wide.csv", &csv);
        let out = rows(&f, "wide.csv", "c0 >= 3");
        assert_eq!(out["rows"], 27);
        assert_eq!(out["matching_rows"].as_array().unwrap().len(), 20);
        assert!(out["matching_rows_note"]
            .as_str()
            .unwrap()
            .contains("27 rows match"));
        assert!(out["columns_note"].as_str().unwrap().contains("25 columns"));
        assert_eq!(out["matching_rows"][0].as_object().unwrap().len(), 20);
        // A long cell in a compared column: it is only listed cut.
        let out = rows(&f, "wide.csv", &format!("c24 = {}", "z".repeat(150)));
        assert_eq!(out["rows"], 30);
    }

    #[test]
    fn a_long_cell_is_cut_on_a_character_and_says_its_length() {
        let f = Fixture::new();
        let long = "é".repeat(150);
        f.write("l.csv", format!("id,note\na,{long}\n"));
        let out = rows(&f, "l.csv", "id = a");
        let shown = out["matching_rows"][0]["note"].as_str().unwrap();
        assert!(shown.contains("cut: 150 characters"), "{shown}");
        assert!(shown.chars().count() < 130, "{shown}");
    }

    #[test]
    fn eight_conditions_are_read_and_a_ninth_is_refused() {
        let f = Fixture::new();
        f.write("s.csv", STOCK);
        let eight = ["on_hand >= 0"; 8].join(" and ");
        assert_eq!(rows(&f, "s.csv", &eight)["rows"], 5);
        let nine = ["on_hand >= 0"; 9].join(" && ");
        assert!(refused(&f, "s.csv", &nine).contains("at most 8"));
    }

    #[test]
    fn rows_not_compared_are_named_three_at_most_and_say_there_are_more() {
        let f = Fixture::new();
        f.write("u.csv", "id,n\na,x\nb,y\nc,z\nd,w\ne,1\n");
        let out = rows(&f, "u.csv", "n < 5");
        assert_eq!(out["rows"], 1);
        assert_eq!(out["rows_not_compared"], 4);
        let note = out["rows_not_compared_note"].as_str().unwrap();
        assert!(note.starts_with("4 rows are not counted"), "{note}");
        assert!(note.ends_with("; …)"), "{note}");
    }

    /// Was a hole, mended: `counts` gives each value of a short column whole: a column of long notes (a few
    /// distinct texts of thousands of characters) is copied into the answer in full, ahead of
    /// the rows, although `matching_rows` cuts the same cells at 100 characters. Expected: a
    /// counted value is cut like a listed cell (or a column of long values is not counted).
    #[test]
    fn counted_values_are_cut_like_listed_cells() {
        let f = Fixture::new();
        let a = "a".repeat(5_000);
        let b = "b".repeat(5_000);
        f.write("c.csv", format!("id,memo\n1,{a}\n2,{b}\n3,{a}\n4,{b}\n"));
        let out = rows(&f, "c.csv", "id > 0");
        let size = out.to_string().len();
        assert!(
            size < 3_000,
            "the answer is {size} characters: counts copies each memo value whole: {}",
            &out["counts"].to_string()[..200]
        );
    }

    /// Was a hole, mended: `counts` has no cap on columns: every short column of the file is counted, so a
    /// wide table of flags (200 yes/no columns) answers with 200 count lists, tens of kilobytes
    /// before the rows (the prompt shows 6,000 characters of a result, so the listed rows are
    /// clipped away). Expected: at most some columns counted (20, as rows are listed), with a
    /// note naming how many were left out.
    #[test]
    fn counts_of_a_wide_table_are_capped_and_say_so() {
        let f = Fixture::new();
        let cols = 200;
        let header: Vec<String> = (0..cols).map(|i| format!("flag_{i}")).collect();
        let mut csv = format!("id,{}\n", header.join(","));
        for r in 0..10 {
            let cells: Vec<&str> = (0..cols)
                .map(|c| if (r + c) % 2 == 0 { "yes" } else { "no" })
                .collect();
            csv.push_str(&format!("{r},{}\n", cells.join(",")));
        }
        f.write("flags.csv", &csv);
        let out = rows(&f, "flags.csv", "id >= 0");
        let counted = out["counts"].as_object().map_or(0, serde_json::Map::len);
        assert!(
            counted <= 20,
            "{counted} columns counted, {} characters of counts ahead of the rows",
            out["counts"].to_string().len()
        );
    }

    /// Was a hole (time), mended: `Table::cell_key` scanned the whole header for each column it
    /// named and `value_counts` named every counted column, so a wide table of a few MB took
    /// time quadratic in its columns (tens of seconds to hours for one call). The names are now
    /// made once per call and the counted columns capped; the answer says what the caps left
    /// out. (No timing here: a regression shows as a test that runs for minutes.)
    #[test]
    fn a_very_wide_table_is_counted_and_listed_within_its_caps() {
        let f = Fixture::new();
        let cols = 60_000;
        let header: Vec<String> = (0..cols).map(|i| format!("c{i}")).collect();
        let row: Vec<&str> = vec!["1"; cols];
        let mut csv = header.join(",") + "\n";
        for _ in 0..3 {
            csv.push_str(&(row.join(",") + "\n"));
        }
        f.write("very-wide.csv", &csv);
        let out = rows(&f, "very-wide.csv", "c0 = 1");
        assert_eq!(out["rows"], 3);
        let counts = out["counts"].as_object().unwrap();
        assert_eq!(counts.len(), rein_workspace::desk::COUNTED_MAX_COLUMNS);
        assert!(!counts.contains_key("c0"), "fixed by the condition");
        assert_eq!(
            out["counts_note"],
            format!(
                "{} more short columns are not counted; only the first {} are",
                cols - 1 - rein_workspace::desk::COUNTED_MAX_COLUMNS,
                rein_workspace::desk::COUNTED_MAX_COLUMNS
            )
        );
        assert_eq!(out["matching_rows"][0].as_object().unwrap().len(), 20);
        assert!(out["columns_note"]
            .as_str()
            .unwrap()
            .contains("60000 columns"));
    }

    // ---------------------------------------------------------------- confinement

    #[test]
    fn paths_outside_the_workspace_links_and_big_files_are_refused() {
        let f = Fixture::new();
        f.write("ok.csv", "a\n1\n");
        std::fs::write(f.outside.join("out.csv"), "a\n1\n").unwrap();
        symlink(f.outside.join("out.csv"), f.path("link.csv"));
        std::fs::hard_link(f.outside.join("out.csv"), f.path("hard.csv")).unwrap();
        for p in [
            "../outside/out.csv",
            "/etc/passwd",
            f.outside.join("out.csv").to_str().unwrap(),
            "link.csv",
            "hard.csv",
            "./../ws/../outside/out.csv",
            "ok.csv/..",
            "",
        ] {
            assert!(
                desk(&f.ws(), "table_rows", json!({"path": p, "where": "a = 1"})).is_err(),
                "{p} was read"
            );
        }
        // One byte past the limit is refused, and says the limit.
        let big = std::fs::File::create(f.path("big.csv")).unwrap();
        big.set_len(rein_workspace::desk::TABLE_MAX_BYTES + 1)
            .unwrap();
        let e = refused(&f, "big.csv", "a = 1");
        assert!(
            e.contains(&rein_workspace::desk::TABLE_MAX_BYTES.to_string()),
            "{e}"
        );
        // Not UTF-8, a folder, a FIFO: refused without a panic or a hang.
        f.write("bin.csv", [0x61u8, 0x0a, 0xff, 0xfe, 0x0a]);
        assert!(refused(&f, "bin.csv", "a = 1").contains("UTF-8"));
        std::fs::create_dir_all(f.path("dir.csv")).unwrap();
        assert!(refused(&f, "dir.csv", "a = 1").contains("folder"));
    }

    #[test]
    fn a_where_that_is_not_a_string_is_refused() {
        let f = Fixture::new();
        f.write("s.csv", STOCK);
        for w in [
            json!(5),
            json!(["on_hand > 1"]),
            json!(null),
            json!(""),
            json!({"on_hand": 1}),
        ] {
            assert!(
                desk(&f.ws(), "table_rows", json!({"path": "s.csv", "where": w})).is_err(),
                "{w}"
            );
        }
        assert!(desk(&f.ws(), "table_rows", json!({"path": "s.csv"})).is_err());
        assert!(desk(
            &f.ws(),
            "table_rows",
            json!({"path": "s.csv", "where": "on_hand > 1", "limit": 5})
        )
        .is_err());
    }
}
