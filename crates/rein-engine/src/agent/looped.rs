//! A reply cut off at the reply cap while it wrote a list over again: the 1.5B wrote
//! explore-log-lines' five logs, then two of them again and again until the cap, eight replies
//! in a row (`ex22-ask/`). The reply after such a cut is told where its list began again, and
//! with lever `short-after-cut` and a list template (lever `answer-lines`) its list is held to
//! the items written before the repeat.

use std::sync::LazyLock;

use regex::Regex;

use super::glob_reads::plural;

/// The start of a `content` string in a reply's JSON.
static CONTENT_KEY: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#""content"\s*:\s*""#).ok());

/// A list written over again in a cut reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopedList {
    /// How many list items were written before the first one written twice.
    pub items: usize,
    /// The first item written a second time, as written.
    pub repeated: String,
}

/// The list a cut reply's `content` wrote over again, if it did: the first list item (`- `,
/// `* ` or `+ ` at a line's start) that equals an earlier one, and how many came before it.
/// The reply's JSON is cut, so its content string is read up to where it ends or stops.
pub fn looped_list(raw: &str) -> Option<LoopedList> {
    let start = CONTENT_KEY.as_ref()?.find(raw)?.end();
    let text = json_string_prefix(&raw[start..]);
    let mut seen: Vec<&str> = Vec::new();
    for line in text.lines() {
        let item = line.trim();
        if !["- ", "* ", "+ "].iter().any(|m| item.starts_with(m)) {
            continue;
        }
        if seen.contains(&item) {
            return Some(LoopedList {
                items: seen.len(),
                repeated: item.to_string(),
            });
        }
        seen.push(item);
    }
    None
}

/// The text of a JSON string whose opening quote came just before `s`, up to its closing quote
/// or, for a string cut short, up to where it stops (an escape cut in half is dropped).
fn json_string_prefix(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('b' | 'f') => {}
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                        Some(c) if hex.len() == 4 => out.push(c),
                        _ => break,
                    }
                }
                Some(other) => out.push(other),
                None => break,
            },
            c => out.push(c),
        }
    }
    out
}

/// What the reply after the cut is told of its list; `held`: the next reply's list is held to
/// the items before the repeat.
pub fn loop_note(list: &LoopedList, held: bool) -> String {
    let mut note = format!(
        " Your list began again after {} item{}: `{}` was written a second time. Write each item once, then the lines after the list.",
        list.items,
        plural(list.items),
        list.repeated.chars().take(120).collect::<String>(),
    );
    if held {
        note.push_str(&format!(
            " Rein holds your next list to at most {} item{} (lever short-after-cut).",
            list.items,
            plural(list.items),
        ));
    }
    note
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_1_5b_s_cut_log_list_began_again_after_five_items() {
        // The reply of `ex22-ask/` explore-log-lines, as cut at the cap.
        let raw = r##"{"thought": "Create a new file", "action": "create_file", "parameters": {"path": "out/log_lines.md", "content": "# Log lines\n- logs/api.log: 23 lines\n- logs/cron.log: 9 lines\n- logs/nginx/access.log: 27 lines\n- logs/nginx/error.log: 6 lines\n- logs/worker.log: 31 lines\n- logs/nginx/access.log: 27 lines\n- logs/nginx/error.log: 6 lines\n- logs/ngi"##;
        assert_eq!(
            looped_list(raw),
            Some(LoopedList {
                items: 5,
                repeated: "- logs/nginx/access.log: 27 lines".into()
            })
        );
    }

    #[test]
    fn a_list_without_a_repeat_or_no_content_is_no_loop() {
        let raw = r#"{"action": "create_file", "parameters": {"path": "a.md", "content": "- a\n- b\n- c\n- d"#;
        assert_eq!(looped_list(raw), None);
        assert_eq!(
            looped_list(r#"{"action": "read_file", "parameters": {"path": "x"}}"#),
            None
        );
        // The same text after the content string ends is not the content.
        let raw = r#"{"parameters": {"content": "- a\n- b"}, "thought": "- a\n- a"}"#;
        assert_eq!(looped_list(raw), None);
    }

    #[test]
    fn escapes_are_read_and_a_cut_escape_ends_the_text() {
        let raw = r#"{"content": "- \"a\"\n- b\u0021\n- \"a\"\n- \u00"#;
        assert_eq!(
            looped_list(raw),
            Some(LoopedList {
                items: 2,
                repeated: "- \"a\"".into()
            })
        );
        assert_eq!(json_string_prefix(r#"x\u00"#), "x");
        assert_eq!(json_string_prefix(r#"x\"#), "x");
    }

    #[test]
    fn the_note_counts_the_items_and_says_when_the_list_is_held() {
        let l = LoopedList {
            items: 1,
            repeated: "- a".into(),
        };
        assert_eq!(
            loop_note(&l, false),
            " Your list began again after 1 item: `- a` was written a second time. Write each item once, then the lines after the list."
        );
        assert!(loop_note(&l, true)
            .ends_with(" Rein holds your next list to at most 1 item (lever short-after-cut)."));
    }
}
