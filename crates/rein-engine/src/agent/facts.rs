//! Lever `table-facts`: a read of a table file carries the totals of its numeric columns,
//! computed by Rein over the whole file, so a small model copies a sum instead of adding up a
//! column it was shown (the 1.5B wrote "Total hours: 72" for a column that sums to 64).

use rein_protocol::GateReport;
use rein_workspace::desk::{column_totals, TABLE_MAX_BYTES};
use serde_json::{json, Value};

use crate::checks::World;

/// Names of the files whose reads carry column totals.
const TABLE_SUFFIXES: &[&str] = &[".csv", ".tsv", ".jsonl", ".ndjson"];

/// Adds `column_totals` to the result of a `read_file` of a whole table file that ran. A read
/// cut off by the file-size cap, a file over the table cap, a file that is not a table or has
/// no numeric column gets nothing, and the result is left as it was.
pub fn add_table_facts(world: &dyn World, tool: &str, report: &mut GateReport) {
    if tool != "read_file"
        || !report.outcome.ran()
        || report.result.get("column_totals").is_some()
        || report.result.get("file_truncated").is_some()
    {
        return;
    }
    let Some(path) = report.result.get("path").and_then(|p| p.as_str()) else {
        return;
    };
    if !is_table_file(path) {
        return;
    }
    let Ok(Some(bytes)) = world.read(path) else {
        return;
    };
    if bytes.len() as u64 > TABLE_MAX_BYTES {
        return;
    }
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return;
    };
    if !shows_this_text(&report.result, text) {
        return;
    }
    let Some(totals) = table_facts_of(path, text) else {
        return;
    };
    // First in the result: what the model is shown is clipped at MAX_RESULT_CHARS, and the
    // totals matter most for a table too long to be shown whole (after the content they were
    // cut off, or cut inside a figure).
    if let Value::Object(fields) = &mut report.result {
        let rest = std::mem::take(fields);
        fields.insert("column_totals".to_string(), totals);
        fields.extend(rest);
    }
}

/// Whether `path` names a table file (CSV, TSV, JSON lines), as `table-facts` tells them.
pub fn is_table_file(path: &str) -> bool {
    let lower = path.to_lowercase();
    TABLE_SUFFIXES.iter().any(|s| lower.ends_with(s))
}

/// The `column_totals` the lever puts first in a whole read of the table `path` holding `text`
/// (with the note that says to copy them), or `None`: not a table file, over the table cap,
/// or no numeric column.
pub fn table_facts_of(path: &str, text: &str) -> Option<Value> {
    if !is_table_file(path) || text.len() as u64 > TABLE_MAX_BYTES {
        return None;
    }
    let mut totals = column_totals(path, text)?;
    totals["note"] = json!(
        "Computed by Rein over every row of the file (not only the lines shown; a row labelled Total, Subtotal or Sum is left out and named): copy these figures rather than adding the column up yourself."
    );
    Some(totals)
}

/// Whether a read_file result is a view of `text` as it is now: the same line count and, at its
/// lines, the same content. A replayed read carries the content recorded back then, and a file
/// can change between the read and this second look: totals of another text would contradict
/// what the model was shown. A result without content (a binary file) shows no text.
fn shows_this_text(result: &Value, text: &str) -> bool {
    let number = |key: &str| {
        result
            .get(key)
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
    };
    let (Some(content), Some(start), Some(end), Some(total)) = (
        result.get("content").and_then(Value::as_str),
        number("start_line"),
        number("end_line"),
        number("total_lines"),
    ) else {
        return false;
    };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // A read cut inside a line shows a prefix of it.
    total == lines.len()
        && start >= 1
        && start <= end
        && lines
            .get(start - 1..end)
            .is_some_and(|shown| shown.concat().starts_with(content))
}

/// Keeps the `column_totals` a read returned, replacing what an earlier read of the same file
/// gave.
pub fn remember_table_facts(kept: &mut Vec<(String, Value)>, report: &GateReport) {
    let (Some(totals), Some(path)) = (
        report.result.get("column_totals"),
        report.result.get("path").and_then(Value::as_str),
    ) else {
        return;
    };
    kept.retain(|(p, _)| p != path);
    kept.push((path.to_string(), totals.clone()));
}

/// The figures the model's own earlier reads of tables returned, for a retry that starts a fresh
/// transcript (they are what the model saw, never a value the judge expects): one line a column.
pub fn earlier_table_facts(kept: &[(String, Value)]) -> String {
    if kept.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "Figures your reads of tables returned earlier in this run (Rein computed them over every row):\n",
    );
    for (path, totals) in kept {
        let columns = totals["columns"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        for c in columns {
            let figure = |key: &str| c[key].as_str().unwrap_or("?").to_string();
            s.push_str(&format!(
                "- {path}, column \"{}\": sum {}, {} numbers, min {}, max {}\n",
                c["column"].as_str().unwrap_or_default(),
                figure("sum"),
                c["numbers"],
                figure("min"),
                figure("max"),
            ));
        }
        if let Some(left_out) = totals["left_out_total_rows"].as_array() {
            s.push_str(&format!(
                "  ({} row(s) labelled as totals were left out of {path}'s figures)\n",
                left_out.len()
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::MemWorld;
    use rein_protocol::GateOutcome;
    use serde_json::Value;

    const CSV: &str = "item,n\nx,1\ny,2\nz,3\n";

    /// What read_file returns for lines `start..=end` of `text` (whole lines, no cap).
    fn read_result(path: &str, text: &str, start: usize, end: usize) -> Value {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        json!({
            "path": path, "start_line": start, "end_line": end, "total_lines": lines.len(),
            "content": lines[start - 1..end].concat(), "truncated": false,
        })
    }

    fn facts(world: &MemWorld, outcome: GateOutcome, result: Value) -> Value {
        let mut report = GateReport {
            outcome,
            reason: String::new(),
            result,
        };
        add_table_facts(world, "read_file", &mut report);
        report.result
    }

    #[test]
    fn totals_come_with_a_read_of_the_file_as_it_is() {
        let world = MemWorld::new().with_file("t.csv", CSV);
        let whole = facts(
            &world,
            GateOutcome::Executed,
            read_result("t.csv", CSV, 1, 4),
        );
        assert_eq!(whole["column_totals"]["columns"][0]["sum"], "6", "{whole}");
        // Ahead of the content, which the prompt may clip.
        let text = whole.to_string();
        assert!(
            text.find("column_totals") < text.find("\"content\""),
            "{text}"
        );
        let part = facts(
            &world,
            GateOutcome::Executed,
            read_result("t.csv", CSV, 2, 3),
        );
        assert_eq!(part["column_totals"]["columns"][0]["sum"], "6", "{part}");
    }

    #[test]
    fn a_file_changed_since_the_read_gets_no_totals() {
        // A replayed read carries the content recorded then; the file now says something else.
        let then = "item,n\nx,1\ny,2\nz,300\n";
        let world = MemWorld::new().with_file("t.csv", CSV);
        for outcome in [GateOutcome::Replayed, GateOutcome::Executed] {
            let r = facts(&world, outcome, read_result("t.csv", then, 1, 4));
            assert!(r.get("column_totals").is_none(), "{r}");
            // Grown by a line since a read of its first lines.
            let r = facts(&world, outcome, read_result("t.csv", "item,n\nx,1\n", 1, 2));
            assert!(r.get("column_totals").is_none(), "{r}");
        }
        // Gone since.
        let r = facts(
            &MemWorld::new(),
            GateOutcome::Replayed,
            read_result("t.csv", CSV, 1, 4),
        );
        assert!(r.get("column_totals").is_none(), "{r}");
    }

    #[test]
    fn a_read_that_showed_no_text_gets_no_totals() {
        // read_file calls a file with a NUL byte binary and shows nothing; it is valid UTF-8.
        let text = "item,n\nx\u{0},1\ny,2\n";
        let world = MemWorld::new().with_file("t.csv", text);
        let binary = json!({"path": "t.csv", "binary": true, "size": text.len()});
        let r = facts(&world, GateOutcome::Executed, binary);
        assert!(r.get("column_totals").is_none(), "{r}");
        for outcome in [
            GateOutcome::Denied,
            GateOutcome::Invalid,
            GateOutcome::ApprovalRequired,
        ] {
            let r = facts(&world, outcome, read_result("t.csv", CSV, 1, 4));
            assert!(r.get("column_totals").is_none(), "{outcome:?}: {r}");
        }
    }
}
