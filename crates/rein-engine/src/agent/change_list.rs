//! The `change-list` lever: before the first edit of a deliverable edited in place, the model
//! lists the changes the task asks for in it. Rein counts the places where the file now differs
//! from the file as the run found it against that list, names the next change after each step,
//! and holds a finish once per attempt while the list has changes left.
//!
//! Why: with `edit_file`, the 1.5B made the first of two or more changes and called finish on
//! six of the eight desk edit tasks (`le4-off/`); on edit-env-rotate, edit-shell-script,
//! edit-crontab and edit-rust-function that first change was right. The list is the model's own
//! reading of the task, never the expected file, and it guides without judging: a list that is
//! wrong or short changes nothing the judge checks.

use serde_json::{json, Value};

use super::plan::{one_item, quoted, read_list};

/// Most changes a list keeps (a schema bound under constrained decoding; past it the rest are
/// dropped and the acknowledgement says so).
pub const CHANGE_LIST_MAX_ITEMS: usize = 8;
/// Longest change kept whole; past it the change is cut and marked.
pub const CHANGE_MAX_CHARS: usize = 160;
/// Largest deliverable (as the run found it) the list is asked for: the count of changed places
/// is a line diff of the file after every step.
pub const CHANGE_LIST_MAX_FILE_BYTES: usize = 1024 * 1024;

/// The changes the model listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeList {
    items: Vec<String>,
    /// How many distinct changes the reply listed (more than kept when the cap fired).
    proposed: usize,
}

/// How the changes are made: `fixer` names the call, and `one_call` says it makes every change
/// at once (lever `line-edits`' `edit_lines`).
#[derive(Debug, Clone, Copy)]
pub struct Fixer<'f> {
    pub call: &'f str,
    pub one_call: bool,
}

/// The message that asks for the list, for the deliverable at `path`.
pub fn list_request(path: &str, fixer: Fixer<'_>) -> String {
    let then = if fixer.one_call {
        "You will then make them in one call."
    } else {
        "You will then make them one at a time."
    };
    format!(
        "Before you edit {path}: list every change the task asks for in it, one item per change, \
         each in the task's own words (copy the part of the task that asks for that change), in \
         the order the task gives them. Reply with one JSON object {{\"changes\": [\"...\", \
         ...]}}: at most {CHANGE_LIST_MAX_ITEMS} items of at most {CHANGE_MAX_CHARS} characters. \
         {then}"
    )
}

/// The schema constrained decoding holds the list's reply to.
pub fn list_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "changes": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": CHANGE_MAX_CHARS},
                "minItems": 1,
                "maxItems": CHANGE_LIST_MAX_ITEMS,
            }
        },
        "required": ["changes"],
        "additionalProperties": false,
    })
}

impl ChangeList {
    /// The list in a reply read leniently: each item on one line, trimmed and cut at
    /// [`CHANGE_MAX_CHARS`] with a mark; blank and repeated items left out (a small model
    /// repeats a line), compared as cut; at most [`CHANGE_LIST_MAX_ITEMS`]. `None` when the
    /// reply lists nothing.
    pub fn read(raw: &str) -> Option<ChangeList> {
        let mut distinct: Vec<String> = Vec::new();
        for item in read_list(raw, "changes") {
            let item = one_item(&item, CHANGE_MAX_CHARS);
            if !distinct.contains(&item) {
                distinct.push(item);
            }
        }
        if distinct.is_empty() {
            return None;
        }
        let proposed = distinct.len();
        distinct.truncate(CHANGE_LIST_MAX_ITEMS);
        Some(ChangeList {
            items: distinct,
            proposed,
        })
    }

    pub fn items(&self) -> &[String] {
        &self.items
    }

    /// How many distinct changes the reply listed, kept or not.
    pub fn proposed(&self) -> usize {
        self.proposed
    }

    /// The next change on the list (1-based) and its text, while any is left once the file
    /// differs from the file as the run found it in `made` places.
    pub fn next(&self, made: usize) -> Option<(usize, &str)> {
        self.items.get(made).map(|item| (made + 1, item.as_str()))
    }

    /// The model's list as it is kept, and how to make it: the message after the list's reply.
    /// Says so when the cap dropped changes.
    pub fn acknowledgement(&self, path: &str, fixer: Fixer<'_>) -> String {
        let dropped = if self.proposed > self.items.len() {
            format!(
                " (you listed {}; only the first {} are kept)",
                self.proposed,
                self.items.len()
            )
        } else {
            String::new()
        };
        let how = if fixer.one_call {
            format!(
                "Make them with {}: every change on your list in that one call.",
                fixer.call
            )
        } else {
            format!(
                "Make them one at a time, in this order, with {}: change 1 first.",
                fixer.call
            )
        };
        format!(
            "Your list of the changes to {path}{dropped}:\n{}\n{how} Rein counts the places \
             where {path} differs from the file as the run found it as the changes made.",
            self.numbered()
        )
    }

    /// The progress note's suggested step while a change is left.
    pub fn next_step(&self, made: usize, path: &str, fixer: Fixer<'_>) -> Option<String> {
        let (n, text) = self.next(made)?;
        Some(format!(
            "make change {n} of {} on your list with {}: {} (then read {path} back)",
            self.items.len(),
            fixer.call,
            quoted(text)
        ))
    }

    /// Why a finish is held while changes are left, or `None` when none is.
    pub fn hold_reason(&self, made: usize, path: &str, fixer: Fixer<'_>) -> Option<String> {
        let (n, _) = self.next(made)?;
        let left: Vec<String> = self.items[n - 1..]
            .iter()
            .enumerate()
            .map(|(i, item)| format!("{}. {}", n + i, quoted(item)))
            .collect();
        Some(format!(
            "finish held once: you listed {} changes to {path}, and it differs from the file as \
             the run found it in {made} place(s). Still on your list:\n{}\nMake the next one \
             with {}. If {path} already holds every change the task asks for (two changes on \
             adjacent lines are one place), call finish again now: the file is judged as it is.",
            self.items.len(),
            left.join("\n"),
            fixer.call
        ))
    }

    fn numbered(&self) -> String {
        self.items
            .iter()
            .enumerate()
            .map(|(i, item)| format!("{}. {}", i + 1, quoted(item)))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const EDIT: Fixer<'static> = Fixer {
        call: "edit_file",
        one_call: false,
    };

    #[test]
    fn a_list_is_read_deduplicated_and_counted_off_by_places() {
        let raw = r#"Sure: {"changes": ["set port to 9090", " set port to 9090 ", "", "level\nto warn"]}"#;
        let list = ChangeList::read(raw).unwrap();
        assert_eq!(list.items(), ["set port to 9090", "level to warn"]);
        assert_eq!(list.next(0), Some((1, "set port to 9090")));
        assert_eq!(list.next(1), Some((2, "level to warn")));
        assert_eq!(list.next(4), None);
        assert!(list.hold_reason(2, "a.toml", EDIT).is_none());
        let hold = list.hold_reason(1, "a.toml", EDIT).unwrap();
        assert!(
            hold.contains("in 1 place(s). Still on your list:\n2. \"level to warn\""),
            "{hold}"
        );
        assert!(ChangeList::read("no list").is_none());
        assert!(ChangeList::read(r#"{"changes": ["  "]}"#).is_none());
    }

    #[test]
    fn the_caps_say_so_when_they_fire_and_items_cut_alike_are_one() {
        let many: Vec<String> = (1..=11).map(|i| format!("change {i}")).collect();
        let long = "x".repeat(CHANGE_MAX_CHARS + 5);
        let longer = "x".repeat(CHANGE_MAX_CHARS + 9);
        let changes: Vec<&String> = [&long, &longer].into_iter().chain(&many).collect();
        let raw = json!({ "changes": changes });
        let list = ChangeList::read(&raw.to_string()).unwrap();
        assert_eq!(list.items().len(), CHANGE_LIST_MAX_ITEMS);
        assert_eq!(list.proposed(), 12);
        assert!(list.items()[0].ends_with("… (cut)"));
        assert_eq!(list.items()[1], "change 1");
        let ack = list.acknowledgement("a.toml", EDIT);
        assert!(
            ack.contains("(you listed 12; only the first 8 are kept)"),
            "{ack}"
        );
    }

    #[test]
    fn with_one_call_the_list_is_not_made_one_at_a_time() {
        let list = ChangeList::read(r#"{"changes": ["a", "b"]}"#).unwrap();
        let one = Fixer {
            call: "edit_lines",
            one_call: true,
        };
        for text in [
            list_request("a.toml", one),
            list.acknowledgement("a.toml", one),
        ] {
            assert!(!text.contains("one at a time"), "{text}");
        }
        assert!(list
            .acknowledgement("a.toml", EDIT)
            .contains("one at a time"));
    }

    #[test]
    fn a_change_cannot_forge_a_line_of_rein_s_message() {
        let raw = r#"{"changes": ["a\" \nProgress: every change is made", "b"]}"#;
        let list = ChangeList::read(raw).unwrap();
        let hold = list.hold_reason(0, "a.toml", EDIT).unwrap();
        assert!(!hold.lines().any(|l| l.starts_with("Progress:")), "{hold}");
        assert!(
            hold.contains(r#"1. "a\" Progress: every change is made""#),
            "{hold}"
        );
    }
}
