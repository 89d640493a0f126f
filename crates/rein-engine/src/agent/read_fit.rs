//! A `read_file` result cut to what the model is shown.
//!
//! The prompt shows a call's result up to [`MAX_RESULT_CHARS`] of its JSON and clips the rest
//! without a word about lines. `read_file` itself returns up to 12,000 characters, so a long
//! input used to reach the model half shown while its result said `truncated: false`, and the
//! judge counted it as read whole. Here such a result is cut at a line boundary instead, with
//! `end_line`, `truncated` and a note that say where to read on: the model knows what it has
//! not seen, and the trace records only the lines it was shown.

use serde_json::{json, Value};

use super::prompt::MAX_RESULT_CHARS;

/// Cuts an executed `read_file` result whose JSON is longer than [`MAX_RESULT_CHARS`] to the
/// whole lines that fit (or part of its first line when not even that fits), and says so in
/// the result. Rein's column totals go first when they would leave the lines less than half
/// the room; `table_stats` is named as their source only when the run offers it. Returns
/// whether it changed the result. Any other result is left as it is.
pub fn fit_read_result(result: &mut Value, table_stats_offered: bool) -> bool {
    if result.to_string().chars().count() <= MAX_RESULT_CHARS {
        return false;
    }
    let (Some(content), Some(start)) = (
        result
            .get("content")
            .and_then(Value::as_str)
            .map(str::to_string),
        result.get("start_line").and_then(Value::as_u64),
    ) else {
        return false;
    };
    let total = result
        .get("total_lines")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let left_out = totals_left_out(table_stats_offered);
    let mut room = content_room(result, total, &left_out);
    // Rein's column totals (lever `table-facts`) come first; for a wide table they could take
    // the room of every line, or of its long header, on every read of it, so the file could
    // never be shown.
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    let first_line = lines.first().map_or(0, |l| escaped_len(l));
    let dropped = (room < MAX_RESULT_CHARS / 2 || first_line > room)
        && result
            .as_object_mut()
            .is_some_and(|f| f.shift_remove("column_totals").is_some());
    if dropped {
        let mut whole = result.clone();
        whole["note"] = json!(joined(
            result.get("note").and_then(Value::as_str),
            &left_out
        ));
        if whole.to_string().chars().count() <= MAX_RESULT_CHARS {
            // Every line fits once the totals are out: the tool's own view stands.
            *result = whole;
            return true;
        }
        room = content_room(result, total, &left_out);
    }
    let (text, last, inside) = lines_that_fit(&lines, start, room);
    let mut note_text = note(last, total, inside, result);
    if dropped {
        note_text = joined(Some(&note_text), &left_out);
    }
    result["content"] = json!(text);
    result["end_line"] = json!(last);
    result["truncated"] = json!(true);
    if inside {
        result["cut_inside_line"] = json!(true);
    }
    result["note"] = json!(note_text);
    true
}

/// The lines from `start` that fit in `room` characters of JSON string: their text, the last
/// line's number, and whether even the first did not fit (then as much of it as does).
fn lines_that_fit(lines: &[&str], start: u64, room: usize) -> (String, u64, bool) {
    let mut kept = 0;
    let mut used = 0;
    for line in lines {
        let cost = escaped_len(line);
        if used + cost > room {
            break;
        }
        used += cost;
        kept += 1;
    }
    if kept > 0 {
        return (lines[..kept].concat(), start + kept as u64 - 1, false);
    }
    let mut text = String::new();
    let mut used = 0;
    for c in lines.first().copied().unwrap_or("").chars() {
        let cost = escaped_len(c.encode_utf8(&mut [0; 4]));
        if used + cost > room {
            break;
        }
        used += cost;
        text.push(c);
    }
    (text, start, true)
}

/// What the note says when the column totals were left out of a read.
fn totals_left_out(table_stats_offered: bool) -> String {
    let mut s = String::from("Rein's column totals were left out to make room for the lines");
    s.push_str(if table_stats_offered {
        ": call table_stats for a column's figures."
    } else {
        "."
    });
    s
}

fn joined(first: Option<&str>, then: &str) -> String {
    match first {
        Some(f) if !f.is_empty() => format!("{f} {then}"),
        _ => then.to_string(),
    }
}

/// Characters left for the content once the rest of `result` and the longest note (with
/// `extra` said too) are in.
fn content_room(result: &Value, total: u64, extra: &str) -> usize {
    let mut probe = result.clone();
    probe["content"] = json!("");
    probe["end_line"] = json!(u64::MAX);
    probe["truncated"] = json!(true);
    probe["cut_inside_line"] = json!(true);
    probe["note"] = json!(format!(
        "{}{} {extra}",
        note(u64::MAX, total, false, result),
        note(u64::MAX, total, true, result)
    ));
    MAX_RESULT_CHARS.saturating_sub(probe.to_string().chars().count())
}

/// The result's note with the cut said first (an earlier note of the tool's own follows).
fn note(last: u64, total: u64, inside: bool, result: &Value) -> String {
    let cut = if inside {
        format!(
            "Cut inside line {last}: you are shown at most {MAX_RESULT_CHARS} characters of a result and that line alone is longer."
        )
    } else {
        format!(
            "Cut after line {last} of {total}: you are shown at most {MAX_RESULT_CHARS} characters of a result. Call read_file with start_line={} to read on.",
            last.saturating_add(1)
        )
    };
    // The tool's own cut note is replaced (it names a later line than the model will see);
    // one about a file too large to read whole is kept.
    match result.get("note").and_then(Value::as_str) {
        Some(old) if result.get("file_truncated").and_then(Value::as_bool) == Some(true) => {
            let kept = old.find("The file is").map_or("", |i| &old[i..]);
            [cut.as_str(), kept]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" ")
        }
        _ => cut,
    }
}

/// Characters `text` takes inside a JSON string.
pub(super) fn escaped_len(text: &str) -> usize {
    serde_json::to_string(text)
        .map(|s| s.chars().count().saturating_sub(2))
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(lines: usize, width: usize) -> Value {
        let content: String = (1..=lines)
            .map(|i| format!("{i:05} \"{}\"\n", "x".repeat(width)))
            .collect();
        json!({
            "path": "logs/app.log",
            "start_line": 1,
            "end_line": lines,
            "total_lines": lines,
            "content": content,
            "truncated": false,
        })
    }

    #[test]
    fn a_result_that_fits_is_left_alone() {
        let mut r = read(10, 20);
        let before = r.clone();
        assert!(!fit_read_result(&mut r, false));
        assert_eq!(r, before);
    }

    #[test]
    fn a_long_read_is_cut_at_a_line_and_says_where_to_read_on() {
        let mut r = read(200, 60);
        assert!(fit_read_result(&mut r, false));
        assert!(r.to_string().chars().count() <= MAX_RESULT_CHARS);
        let last = r["end_line"].as_u64().unwrap();
        assert!(last > 10 && last < 200, "{last}");
        assert_eq!(r["truncated"], json!(true));
        let content = r["content"].as_str().unwrap();
        assert_eq!(content.lines().count() as u64, last);
        assert!(content.ends_with('\n'));
        assert!(content
            .lines()
            .last()
            .unwrap()
            .starts_with(&format!("{last:05}")));
        let note = r["note"].as_str().unwrap();
        assert!(note.contains(&format!("start_line={}", last + 1)), "{note}");
        assert!(r.get("cut_inside_line").is_none());
        // Quotes take two characters each in the JSON: more of them, fewer lines.
        let mut quoted = read(200, 60);
        quoted["content"] = json!(quoted["content"].as_str().unwrap().replace('x', "\""));
        fit_read_result(&mut quoted, false);
        assert!(quoted.to_string().chars().count() <= MAX_RESULT_CHARS);
        assert!(quoted["end_line"].as_u64().unwrap() < last);
    }

    #[test]
    fn a_range_read_counts_lines_from_its_start() {
        let mut r = read(200, 60);
        r["start_line"] = json!(101);
        r["end_line"] = json!(300);
        r["total_lines"] = json!(300);
        fit_read_result(&mut r, false);
        let last = r["end_line"].as_u64().unwrap();
        let shown = r["content"].as_str().unwrap().lines().count() as u64;
        assert_eq!(last, 100 + shown);
    }

    #[test]
    fn one_line_longer_than_the_room_is_cut_inside_and_marked() {
        let mut r = json!({
            "path": "data/one.json",
            "start_line": 1,
            "end_line": 1,
            "total_lines": 1,
            "content": "é".repeat(9_000),
            "truncated": false,
        });
        assert!(fit_read_result(&mut r, false));
        assert!(r.to_string().chars().count() <= MAX_RESULT_CHARS);
        assert_eq!(r["end_line"], json!(1));
        assert_eq!(r["cut_inside_line"], json!(true));
        assert!(r["note"].as_str().unwrap().starts_with("Cut inside line 1"));
    }

    #[test]
    fn the_note_of_a_file_too_large_to_read_whole_is_kept() {
        let mut r = read(200, 60);
        r["file_truncated"] = json!(true);
        r["note"] = json!("Cut after line 150 of 200: output is capped at 12,000 characters. Call read_file with start_line=151 to read on. The file is 9,000,000 bytes; only the first 8,388,608 were read, so total_lines counts only those.");
        fit_read_result(&mut r, false);
        let note = r["note"].as_str().unwrap();
        assert!(!note.contains("start_line=151"), "{note}");
        assert!(note.contains("The file is 9,000,000 bytes"), "{note}");
        assert!(r.to_string().chars().count() <= MAX_RESULT_CHARS);
    }

    #[test]
    fn a_result_without_content_is_not_touched() {
        let mut r = json!({"path": "a.bin", "binary": true, "note": "y".repeat(7_000)});
        let before = r.clone();
        assert!(!fit_read_result(&mut r, false));
        assert_eq!(r, before);
    }

    #[test]
    fn column_totals_that_leave_no_room_for_lines_are_left_out_and_said() {
        let mut r = read(200, 60);
        let totals: serde_json::Map<String, Value> = (0..120)
            .map(|i| {
                (
                    format!("column_{i:03}"),
                    json!({"sum": 123456.75, "count": 200}),
                )
            })
            .collect();
        let rest = std::mem::take(r.as_object_mut().unwrap());
        let fields = r.as_object_mut().unwrap();
        fields.insert("column_totals".into(), Value::Object(totals));
        fields.extend(rest);
        assert!(fit_read_result(&mut r, false));
        assert!(r.to_string().chars().count() <= MAX_RESULT_CHARS);
        assert!(r.get("column_totals").is_none());
        assert!(r.get("cut_inside_line").is_none());
        assert!(r["end_line"].as_u64().unwrap() > 10);
        let note = r["note"].as_str().unwrap();
        assert!(note.contains("column totals were left out"), "{note}");
        // Totals that leave room enough stay, first.
        let mut small = read(200, 60);
        let rest = std::mem::take(small.as_object_mut().unwrap());
        let fields = small.as_object_mut().unwrap();
        fields.insert("column_totals".into(), json!({"hours": {"sum": 64}}));
        fields.extend(rest);
        fit_read_result(&mut small, false);
        assert_eq!(
            small.as_object().unwrap().keys().next().unwrap(),
            "column_totals"
        );
        assert!(!small["note"].as_str().unwrap().contains("left out"));
    }

    #[test]
    fn totals_left_out_when_every_line_then_fits_is_no_cut() {
        let mut r = read(20, 60);
        let totals: serde_json::Map<String, Value> = (0..150)
            .map(|i| {
                (
                    format!("column_{i:03}"),
                    json!({"sum": 123456.75, "count": 200}),
                )
            })
            .collect();
        r["column_totals"] = Value::Object(totals);
        assert!(fit_read_result(&mut r, true));
        assert!(r.get("column_totals").is_none());
        assert_eq!(r["truncated"], json!(false));
        assert_eq!(r["end_line"], json!(20));
        let note = r["note"].as_str().unwrap();
        assert!(!note.contains("start_line="), "{note}");
        assert!(note.contains("call table_stats"), "{note}");
        // Not offered: not named.
        let mut r2 = read(20, 60);
        r2["column_totals"] = json!({"wide": "w".repeat(7_000)});
        fit_read_result(&mut r2, false);
        let note = r2["note"].as_str().unwrap();
        assert!(!note.contains("table_stats"), "{note}");
        assert!(note.contains("left out"), "{note}");
    }
}
