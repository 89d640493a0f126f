//! Lever `combined-totals` (with `table-facts`): when a step's reads bring the tables the model
//! has read whole, with the same columns, to two or more, the step's message ends with Rein's
//! figures over all their rows as one table: each numeric column's total and, for each short
//! text column, each numeric column's sum per value (see [`combined_totals`]). The 1.5B read
//! report-timesheets' three weekly CSVs and wrote every person's and project's hours wrong,
//! adding across the files by hand; `table-facts` gives each file's totals, never the sum
//! over files.
//!
//! The tables are those whose reads carried `table-facts`' totals, each as it is now only if
//! its totals are still the ones the model was given (a file changed since is left out).
//! Which line each figure goes on stays the model's.

use rein_workspace::desk::{combined_totals, Table};
use serde_json::Value;

use super::facts::table_facts_of;
use crate::checks::World;

/// Most characters the combined figures take in a step's message: half of one shown result.
const COMBINED_MAX_CHARS: usize = super::prompt::MAX_RESULT_CHARS / 2;

/// Rein's combined figures for each set of two or more tables of the same columns among
/// `kept` (each table's totals as the model was last given them, in the order read; only
/// tables read whole), or an empty text. `shown` holds the sets already given figures: a set
/// is given them once, and again only when it changes. Nothing is given while a table input
/// of the task is unread (`waiting`): figures over part of a set were copied as the whole
/// set's (the 1.5B wrote report-timesheets' Ines hours from the figures over two weeks of
/// three).
pub fn combined_note(
    world: &dyn World,
    kept: &[(String, Value)],
    shown: &mut Vec<Vec<String>>,
    waiting: bool,
) -> String {
    if waiting {
        return String::new();
    }
    // Each table as it is now, when that is what the model's read gave its totals for.
    let tables: Vec<(&str, String, Vec<String>)> = kept
        .iter()
        .filter_map(|(path, totals)| {
            let bytes = world.read(path).ok()??;
            let text = String::from_utf8(bytes).ok()?;
            (table_facts_of(path, &text).as_ref() == Some(totals)).then_some(())?;
            let header = Table::parse(path, &text).ok()?.header;
            Some((path.as_str(), text, header))
        })
        .collect();
    let mut note = String::new();
    let mut headers_done: Vec<&Vec<String>> = Vec::new();
    for (_, _, header) in &tables {
        if headers_done.contains(&header) {
            continue;
        }
        headers_done.push(header);
        let same: Vec<(&str, &str)> = tables
            .iter()
            .filter(|(_, _, h)| h == header)
            .map(|(p, t, _)| (*p, t.as_str()))
            .collect();
        let names: Vec<String> = same.iter().map(|(p, _)| p.to_string()).collect();
        if same.len() < 2 || shown.contains(&names) {
            continue;
        }
        let Ok(mut figures) = combined_totals(&same) else {
            continue;
        };
        // Long values or many columns: the groups go first, and the totals say so.
        if figures.to_string().chars().count() > COMBINED_MAX_CHARS {
            if let Some(fields) = figures.as_object_mut() {
                fields.shift_remove("groups");
                fields.shift_remove("groups_truncated");
                fields.insert(
                    "groups_left_out".into(),
                    format!("the sums per value take more than {COMBINED_MAX_CHARS} characters; ask table_stats with group_by for each file").into(),
                );
            }
        }
        if figures.to_string().chars().count() > COMBINED_MAX_CHARS {
            continue;
        }
        note.push_str(&format!(
            "\nRein's figures over the {} tables you have read whole that have the columns {} ({}), computed over every row of all of them as one table (lever combined-totals); copy these rather than adding across the files yourself: {figures}",
            names.len(),
            header.join(", "),
            names.join(", "),
        ));
        shown.push(names);
    }
    note
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::MemWorld;

    const W10: &str = "person,project,hours\nInes,intranet,8\nMarek,support,4\n";
    const W11: &str = "person,project,hours\nInes,support,6.5\n";
    const OTHER: &str = "sku,units\nA,3\n";

    fn kept(world: &MemWorld, paths: &[&str]) -> Vec<(String, Value)> {
        paths
            .iter()
            .map(|p| {
                let text = String::from_utf8(world.read(p).unwrap().unwrap()).unwrap();
                (p.to_string(), table_facts_of(p, &text).unwrap())
            })
            .collect()
    }

    #[test]
    fn the_second_table_of_the_same_columns_brings_the_figures_once() {
        let world = MemWorld::new()
            .with_file("w10.csv", W10)
            .with_file("w11.csv", W11)
            .with_file("stock.csv", OTHER);
        let mut shown = Vec::new();
        let one = kept(&world, &["w10.csv", "stock.csv"]);
        assert_eq!(combined_note(&world, &one, &mut shown, false), "");
        let two = kept(&world, &["w10.csv", "stock.csv", "w11.csv"]);
        // Not while a table input is unread.
        assert_eq!(combined_note(&world, &two, &mut shown, true), "");
        let note = combined_note(&world, &two, &mut shown, false);
        assert!(note.contains("the 2 tables you have read whole"), "{note}");
        assert!(note.contains("(w10.csv, w11.csv)"), "{note}");
        assert!(note.contains(r#""Ines":"14.5""#), "{note}");
        assert!(!note.contains("stock.csv"), "{note}");
        // Nothing new to say after another read.
        assert_eq!(combined_note(&world, &two, &mut shown, false), "");
    }

    #[test]
    fn long_group_values_leave_the_groups_out_and_say_so() {
        let long = |i: usize| format!("{}{i}", "x".repeat(95));
        let rows: String = (0..12)
            .map(|i| format!("{},{n},{n},{n}\n", long(i), n = 100 + i))
            .collect();
        let text = format!("name,n1,n2,n3\n{rows}");
        let world = MemWorld::new()
            .with_file("a.csv", text.as_str())
            .with_file("b.csv", text.as_str());
        let both = kept(&world, &["a.csv", "b.csv"]);
        let note = combined_note(&world, &both, &mut Vec::new(), false);
        assert!(note.contains("groups_left_out"), "{note}");
        assert!(note.contains(r#""sum":"2532""#), "{note}");
        assert!(!note.contains(&long(3)), "{note}");
    }

    #[test]
    fn a_table_changed_since_its_read_is_left_out() {
        let world = MemWorld::new()
            .with_file("w10.csv", W10)
            .with_file("w11.csv", W11);
        let mut read = kept(&world, &["w10.csv", "w11.csv"]);
        // The model was given totals of another text of w10.csv.
        let before_change = "person,project,hours\nInes,intranet,80\n";
        read[0].1 = table_facts_of("w10.csv", before_change).unwrap();
        assert_eq!(combined_note(&world, &read, &mut Vec::new(), false), "");
    }
}
