//! Lever `whole-reads`: a `read_file` call for a line range of a short text file reads the
//! whole file instead, and the result says so. The 1.5B read summarize-release's ten-line
//! `commits.txt` a line at a time (line 1, line 10, then lines 20 to 26, past its end, each
//! refused) until the no-progress cap, and search-payment-timeout's logs one line each (line 4
//! of every day's log, then days that do not exist) until the turn cap.
//!
//! A file is short when the whole of it fits one result as the prompt shows it (see
//! [`super::read_fit`]), so a widened read is never cut: a cut result names the `start_line`
//! to read on from, and widening that call again would show the same cut for ever. What runs
//! is the whole-file call, through the gate like any read; the journal keeps both the model's
//! call and the one that ran, and the judge counts the file read whole only because the result
//! shows it whole.

use rein_workspace::desk::is_text;
use serde_json::{json, Value};

use super::glob_reads::shown_chars;
use super::prompt::MAX_RESULT_CHARS;
use super::run::shows_whole_file;
use crate::checks::World;

/// Largest file, in bytes, whose line range is widened to the whole file (a file of this size
/// whose escaped text would not fit one shown result is left as it is).
pub const WHOLE_READ_MAX_BYTES: u64 = 4_000;

/// Characters a `read_file` result holds besides its content and path: the keys, the line
/// numbers and `truncated`.
const RESULT_FRAME_CHARS: usize = 600;

/// The keys a `read_file` call may have to be widened: any other is the schema's to refuse.
const READ_KEYS: [&str; 3] = ["path", "start_line", "end_line"];

/// A `read_file` call widened to its whole file.
#[derive(Debug, Clone, PartialEq)]
pub struct WidenedRead {
    /// The file, as the call names it.
    pub path: String,
    /// The call that runs instead of the model's: `{"path": ...}`.
    pub args: Value,
    /// The lines the model asked for, in words (`line 7`, `lines 20 to 26`).
    pub asked: String,
}

/// The whole-file read that replaces `params`, a `read_file` call with `start_line` or
/// `end_line`; `None` when the call is left as it is: no range, a range that is not two whole
/// numbers, a key `read_file` does not take, a range that already covers the file, or a file
/// that is missing, unreadable, not text as the tools take it (UTF-8 without NUL bytes), larger
/// than [`WHOLE_READ_MAX_BYTES`] or too long to be shown whole.
///
/// Rein reads the file here, before the gate, to decide: at most [`WHOLE_READ_MAX_BYTES`], as
/// the judge reads every input; nothing of it reaches the model but through the gate.
pub fn widened_read(world: &dyn World, params: &Value) -> Option<WidenedRead> {
    let fields = params.as_object()?;
    if fields.keys().any(|k| !READ_KEYS.contains(&k.as_str())) {
        return None;
    }
    let path = fields.get("path")?.as_str()?;
    let bound = |key: &str| -> Option<Option<u64>> {
        match fields.get(key) {
            None | Some(Value::Null) => Some(None),
            Some(v) => v.as_u64().map(Some),
        }
    };
    let (start, end) = (bound("start_line")?, bound("end_line")?);
    if start.is_none() && end.is_none() {
        return None;
    }
    let bytes = world.read_small(path, WHOLE_READ_MAX_BYTES).ok()??;
    if !is_text(&bytes) {
        return None;
    }
    let text = std::str::from_utf8(&bytes).ok()?;
    let shown = shown_chars(text) + shown_chars(path) + RESULT_FRAME_CHARS;
    if shown > MAX_RESULT_CHARS {
        return None;
    }
    let total = text.split_inclusive('\n').count() as u64;
    let (first, last) = (start.unwrap_or(1), end.unwrap_or(total));
    if first <= 1 && last >= total {
        return None;
    }
    let asked = match (start, end) {
        (Some(a), Some(b)) if a == b => format!("line {a}"),
        (Some(a), Some(b)) => format!("lines {a} to {b}"),
        (Some(a), None) => format!("from line {a}"),
        (None, Some(b)) => format!("up to line {b}"),
        (None, None) => String::new(),
    };
    Some(WidenedRead {
        path: path.to_string(),
        args: json!({ "path": path }),
        asked,
    })
}

/// What the model is told of a widened read whose `result`, as the prompt shows it, holds the
/// whole file (from line 1 to its last, nothing cut, text); `None` otherwise (the file changed
/// since Rein looked, grew past a shown result, or is no longer text), and then the result
/// speaks for itself.
pub fn whole_read_note(read: &WidenedRead, result: &Value) -> Option<String> {
    let total = result.get("total_lines").and_then(Value::as_u64)?;
    let lines = if total == 1 { "line" } else { "lines" };
    shows_whole_file(result).then(|| {
        format!(
            "Rein read all {total} {lines} of {}, not only {}: the file is short enough to read whole, so read_file on it needs no start_line or end_line",
            read.path, read.asked
        )
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::checks::MemWorld;

    fn ten_lines() -> MemWorld {
        let text: String = (1..=10).map(|i| format!("commit {i}\n")).collect();
        MemWorld::new().with_file("release/commits.txt", text)
    }

    #[test]
    fn a_range_of_a_short_file_becomes_the_whole_file() {
        let w = ten_lines();
        for params in [
            json!({"path": "release/commits.txt", "start_line": 1, "end_line": 1}),
            json!({"path": "release/commits.txt", "start_line": 10}),
            json!({"path": "release/commits.txt", "end_line": 9}),
            // Past the end: refused by the tool as it stands, shown whole here.
            json!({"path": "release/commits.txt", "start_line": 20, "end_line": 20}),
        ] {
            let read = widened_read(&w, &params).unwrap();
            assert_eq!(
                read.args,
                json!({"path": "release/commits.txt"}),
                "{params}"
            );
        }
    }

    #[test]
    fn a_call_that_reads_whole_or_cannot_be_read_is_left_as_it_is() {
        let w = ten_lines()
            .with_file("bin.dat", vec![0xff, 0xfe, 0x00])
            .with_file("nul.md", "a\n\0b\nc\n")
            .with_file("big.txt", "x\n".repeat(2_100));
        for params in [
            json!({"path": "release/commits.txt"}),
            json!({"path": "release/commits.txt", "start_line": 1, "end_line": 10}),
            json!({"path": "release/commits.txt", "start_line": 1, "end_line": 99}),
            json!({"path": "release/commits.txt", "start_line": "2"}),
            json!({"path": "release/commits.txt", "start_line": -2}),
            json!({"path": "missing.txt", "start_line": 2}),
            json!({"path": "bin.dat", "start_line": 2}),
            json!({"path": "nul.md", "start_line": 2}),
            json!({"path": "big.txt", "start_line": 2}),
            json!({"start_line": 2}),
            json!({"path": "release/commits.txt", "start_line": 2, "limit": 3}),
        ] {
            assert_eq!(widened_read(&w, &params), None, "{params}");
        }
    }

    #[test]
    fn a_file_whose_escaped_text_would_be_cut_is_not_widened() {
        // 3,000 quotes are 3,000 bytes and 6,000 characters once escaped.
        let w = MemWorld::new().with_file("q.txt", format!("{}\nend\n", "\"".repeat(3_000)));
        assert_eq!(
            widened_read(&w, &json!({"path": "q.txt", "start_line": 2})),
            None
        );
    }

    #[test]
    fn the_note_is_given_only_for_a_result_that_shows_the_file_whole() {
        let read = widened_read(
            &ten_lines(),
            &json!({"path": "release/commits.txt", "start_line": 7, "end_line": 7}),
        )
        .unwrap();
        let whole = json!({"path": "release/commits.txt", "start_line": 1, "end_line": 10,
                           "total_lines": 10, "content": "…", "truncated": false});
        let note = whole_read_note(&read, &whole).unwrap();
        assert!(note.starts_with("Rein read all 10 lines of release/commits.txt, not only line 7"));
        let mut cut = whole.clone();
        cut["end_line"] = json!(4);
        cut["truncated"] = json!(true);
        let mut grown = whole.clone();
        grown["total_lines"] = json!(310);
        let binary = json!({"path": "release/commits.txt", "binary": true, "size": 3});
        for shown in [cut, grown, binary] {
            assert_eq!(whole_read_note(&read, &shown), None, "{shown}");
        }
    }
}
