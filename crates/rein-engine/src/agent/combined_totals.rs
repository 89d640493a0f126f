//! Lever `combined-totals` (with `table-facts`): when a step's reads bring the tables the model
//! has read whole, with the same columns, to two or more, and no table input of the task is
//! left unread, the step's message ends with Rein's
//! figures over all their rows as one table: each numeric column's total and, for each short
//! text column, each numeric column's sum per value (see [`combined_totals`]). The 1.5B read
//! report-timesheets' three weekly CSVs and wrote every person's and project's hours wrong,
//! adding across the files by hand; `table-facts` gives each file's totals, never the sum
//! over files.
//!
//! The tables are those the model's reads (its own or Rein's for its glob) showed whole, each
//! as that read showed it and only while the file still holds that text: a table changed since,
//! or read again only in part, is left out. Which line each figure goes on stays the model's.

use rein_workspace::desk::{combined_totals, NotCombined, Table};
use serde_json::{json, Value};

use crate::checks::World;

/// Most characters the combined figures of one set of tables take in a step's message, the
/// sentence that names them included: half of one shown result.
const COMBINED_MAX_CHARS: usize = super::prompt::MAX_RESULT_CHARS / 2;

/// Longest list of column names the figures' opening sentence gives.
const COLUMNS_NAMED_MAX_CHARS: usize = 600;

/// A table as a read showed it whole: its path and its text.
pub type ShownTable = (String, String);

/// Keeps the table a `read_file` result showed (`result`), latest per path: its text when the
/// read showed the whole file (`whole`), else nothing of it (the model's last view of it was
/// partial).
pub fn remember_shown_table(kept: &mut Vec<ShownTable>, result: &Value, whole: bool) {
    let Some(path) = result.get("path").and_then(Value::as_str) else {
        return;
    };
    if !super::facts::is_table_file(path) {
        return;
    }
    kept.retain(|(p, _)| p != path);
    if let (true, Some(content)) = (whole, result.get("content").and_then(Value::as_str)) {
        kept.push((path.to_string(), content.to_string()));
    }
}

/// The tables of `kept` whose files still hold the text they were shown with (a leading
/// byte-order mark aside, which a read does not show).
pub fn still_as_shown(world: &dyn World, kept: &[ShownTable]) -> Vec<ShownTable> {
    kept.iter()
        .filter(|(path, shown)| {
            world.read(path).ok().flatten().is_some_and(|bytes| {
                let now = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&bytes);
                now == shown.as_bytes()
            })
        })
        .cloned()
        .collect()
}

/// Rein's combined figures for each set of two or more tables of the same columns among
/// `tables` (each as the model was shown it whole, in the order read), or an empty text.
/// `given` holds the sets already given figures, texts and all: a set is given them once, and
/// again when it changes. Nothing is given while a table input of the task is unread
/// (`waiting`): figures over part of a set were copied as the whole set's (the 1.5B wrote
/// report-timesheets' Ines hours from the figures over two weeks of three). A set whose figures
/// cannot be given for a cap or a row that totals others is named with why.
pub fn combined_note(
    tables: &[ShownTable],
    given: &mut Vec<Vec<ShownTable>>,
    waiting: bool,
) -> String {
    if waiting {
        return String::new();
    }
    let headers: Vec<Option<Vec<String>>> = tables
        .iter()
        .map(|(path, text)| Table::parse(path, text).ok().map(|t| t.header))
        .collect();
    let mut note = String::new();
    let mut headers_done: Vec<&Vec<String>> = Vec::new();
    for header in headers.iter().flatten() {
        if headers_done.contains(&header) {
            continue;
        }
        headers_done.push(header);
        let set: Vec<ShownTable> = tables
            .iter()
            .zip(&headers)
            .filter(|(_, h)| h.as_ref() == Some(header))
            .map(|(t, _)| t.clone())
            .collect();
        if set.len() < 2 || given.contains(&set) {
            continue;
        }
        let names: Vec<&str> = set.iter().map(|(p, _)| p.as_str()).collect();
        let columns = json!(header).to_string();
        let columns = if columns.chars().count() <= COLUMNS_NAMED_MAX_CHARS {
            columns
        } else {
            format!("of {} names, too long to list here", header.len())
        };
        let opening = format!(
            "\nRein's figures over the {} tables you have read whole that have the columns {columns} ({})",
            set.len(),
            json!(names),
        );
        let files: Vec<(&str, &str)> = set.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let short = |why: &dyn std::fmt::Display| {
            format!(
                "\nRein's figures over the {} tables you have read whole with the same columns are not given (lever combined-totals): {why}; use table_stats on each file.",
                set.len()
            )
        };
        let too_long = format!("they take more than {COMBINED_MAX_CHARS} characters");
        let paragraph = match combined_totals(&files) {
            Ok(figures) => within_cap(&opening, figures).unwrap_or_else(|| short(&too_long)),
            // Nothing to combine: no figure is missing.
            Err(NotCombined::NoNumbers | NotCombined::TooFew) => String::new(),
            Err(why) => Some(format!(
                "{opening} are not given (lever combined-totals): {why}."
            ))
            .filter(|p| p.chars().count() <= COMBINED_MAX_CHARS)
            .unwrap_or_else(|| short(&why)),
        };
        note.push_str(&paragraph);
        given.push(set);
    }
    note
}

/// The paragraph that gives `figures` after `opening`, within [`COMBINED_MAX_CHARS`]: the
/// sums per value are left out (and the figures say so) when they would pass it; `None` when
/// even the totals would.
fn within_cap(opening: &str, mut figures: Value) -> Option<String> {
    let paragraph = |figures: &Value| {
        format!(
            "{opening}, computed over every row of all of them as one table (lever combined-totals); copy these rather than adding across the files yourself: {figures}"
        )
    };
    let fits = |text: &str| text.chars().count() <= COMBINED_MAX_CHARS;
    let whole = paragraph(&figures);
    if fits(&whole) {
        return Some(whole);
    }
    if let Some(fields) = figures.as_object_mut() {
        fields.shift_remove("groups");
        fields.shift_remove("groups_truncated");
        fields.insert(
            "groups_left_out".into(),
            format!("the sums per value take more than {COMBINED_MAX_CHARS} characters; ask table_stats with group_by for each file").into(),
        );
    }
    Some(paragraph(&figures)).filter(|p| fits(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::MemWorld;

    const W10: &str = "person,project,hours\nInes,intranet,8\nMarek,support,4\n";
    const W11: &str = "person,project,hours\nInes,support,6.5\n";
    const OTHER: &str = "sku,units\nA,3\n";

    fn shown(tables: &[(&str, &str)]) -> Vec<ShownTable> {
        tables
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    }

    #[test]
    fn a_set_of_two_tables_of_the_same_columns_gets_its_figures_once() {
        let mut given = Vec::new();
        let one = shown(&[("w10.csv", W10), ("stock.csv", OTHER)]);
        assert_eq!(combined_note(&one, &mut given, false), "");
        let two = shown(&[("w10.csv", W10), ("stock.csv", OTHER), ("w11.csv", W11)]);
        // Not while a table input is unread.
        assert_eq!(combined_note(&two, &mut given, true), "");
        let note = combined_note(&two, &mut given, false);
        assert!(note.contains("the 2 tables you have read whole"), "{note}");
        assert!(note.contains(r#"(["w10.csv","w11.csv"])"#), "{note}");
        assert!(note.contains(r#""Ines":"14.5""#), "{note}");
        assert!(!note.contains("stock.csv"), "{note}");
        assert_eq!(combined_note(&two, &mut given, false), "");
        // The same files with another text are another set.
        let changed = shown(&[
            ("w10.csv", W10),
            ("w11.csv", "person,project,hours\nInes,support,7\n"),
        ]);
        assert!(combined_note(&changed, &mut given, false).contains(r#""Ines":"15""#));
    }

    #[test]
    fn only_tables_still_as_shown_and_last_read_whole_are_kept() {
        let world = MemWorld::new()
            .with_file("w10.csv", W10)
            .with_file("w11.csv", format!("\u{feff}{W11}"));
        let mut kept = Vec::new();
        let whole = |path: &str, text: &str| json!({"path": path, "content": text});
        remember_shown_table(&mut kept, &whole("w10.csv", W10), true);
        remember_shown_table(&mut kept, &whole("w11.csv", W11), true);
        remember_shown_table(&mut kept, &whole("notes.md", "x"), true);
        assert_eq!(still_as_shown(&world, &kept).len(), 2);
        // Read again in part: the model's last view of it is partial.
        remember_shown_table(
            &mut kept,
            &whole("w10.csv", "person,project,hours\n"),
            false,
        );
        assert_eq!(still_as_shown(&world, &kept), shown(&[("w11.csv", W11)]));
        // Shown with another text than the file holds now.
        remember_shown_table(
            &mut kept,
            &whole("w10.csv", "person,project,hours\nInes,x,1\n"),
            true,
        );
        assert_eq!(still_as_shown(&world, &kept), shown(&[("w11.csv", W11)]));
    }

    #[test]
    fn long_group_values_leave_the_groups_out_and_say_so() {
        let long = |i: usize| format!("{}{i}", "x".repeat(95));
        let rows: String = (0..12)
            .map(|i| format!("{},{n},{n},{n}\n", long(i), n = 100 + i))
            .collect();
        let text = format!("name,n1,n2,n3\n{rows}");
        let note = combined_note(
            &shown(&[("a.csv", &text), ("b.csv", &text)]),
            &mut Vec::new(),
            false,
        );
        assert!(note.contains("groups_left_out"), "{note}");
        assert!(note.contains(r#""sum":"2532""#), "{note}");
        assert!(!note.contains(&long(3)), "{note}");
        assert!(note.chars().count() <= COMBINED_MAX_CHARS, "{}", note.len());
    }

    #[test]
    fn a_set_past_a_cap_is_named_with_why() {
        let many: Vec<(String, &str)> = (0..=rein_workspace::desk::COMBINED_MAX_FILES)
            .map(|i| (format!("w{i}.csv"), W10))
            .collect();
        let refs: Vec<(&str, &str)> = many.iter().map(|(p, t)| (p.as_str(), *t)).collect();
        let note = combined_note(&shown(&refs), &mut Vec::new(), false);
        assert!(
            note.contains(
                "are not given (lever combined-totals): more than 24 tables, the most combined at once"
            ),
            "{note}"
        );
        let wide: Vec<String> = (0..45).map(|i| format!("{}{i}", "c".repeat(98))).collect();
        let text = format!("{}\n{}\n", wide.join(","), vec!["1"; 45].join(","));
        let note = combined_note(
            &shown(&[("a.csv", &text), ("b.csv", &text)]),
            &mut Vec::new(),
            false,
        );
        assert!(
            note.contains("of 45 names, too long to list here"),
            "{note}"
        );
        assert!(note.contains("only the first 10 are listed"), "{note}");
        assert!(note.chars().count() <= COMBINED_MAX_CHARS, "{}", note.len());
    }
}
