//! The row-end rule of the no-paste penalty: a reply that has copied the end of a table's row
//! (its last three words or more) must write a word of its own before the next row's first
//! word. The judge's `not_copied` reads a table's rows as one run of words, so rows pasted one
//! after another are one long copy however short each row is; one word between them (`12
//! hours`) cuts the run at every row, and each row stays verbatim, which `mentions_all` needs.
//!
//! It reads words as the judge does (runs of letters and digits, lower case) in the reply's
//! text as written inside a JSON string, where `\n` and `\u000a` are escapes, not letters. At a
//! row end, a token that adds no word (`\n`, `,`, the closing quote), starts the next row's
//! first word, or lengthens the cell just written is penalised (the 0.5B, held off the line
//! break alone, glued the next row on: `12Renewal`). A tail that also goes on inside the table
//! (the same words mid-row, or a longer cell: `8` beside `8.5`, `1` beside `16`) is no row end:
//! the rule holds only where the table itself breaks the line, so a row copied on its own
//! comes out as it is.
//! Not read as the judge reads: its folding of look-alike letters and zero-width marks.

use std::collections::{HashMap, HashSet};

/// What a row-end token loses off its logit: past the gap between a pasted row's line break
/// and a unit word at temperature 0.1, yet finite, so a grammar that allows nothing else (the
/// closing quote of a string) still has its token.
pub const ROW_END_PENALTY: f32 = 25.0;

/// How many of a row's last words the reply must have copied for its end to count: two-word
/// phrases that end a row (`this week`) are common in prose.
const MIN_COPIED_WORDS: usize = 3;

/// How a token's text would go on from a word just written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lead {
    /// Its first character is a letter or a digit: the word being written grows, or, after a
    /// separator, a new word starts (its letters and digits, lower case, and whether it ends
    /// inside the token).
    Extends { start: String, complete: bool },
    /// It holds no letter or digit after its separators (or none at all).
    Wordless,
    /// It starts a new word: the letters and digits after its first separators, lower case,
    /// and whether the word ends inside the token.
    NewWord { start: String, complete: bool },
}

impl Lead {
    /// How `piece` goes on from a letter or digit, read inside a JSON string.
    pub fn of(piece: &str) -> Lead {
        if piece.starts_with(char::is_alphanumeric) {
            let start: String = piece
                .chars()
                .take_while(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect();
            let complete = piece.chars().any(|c| !c.is_alphanumeric());
            return Lead::Extends { start, complete };
        }
        let mut reader = JsonText::default();
        let mut start = String::new();
        for c in piece.chars() {
            match reader.read(c) {
                None => {}
                Some(c) if c.is_alphanumeric() => start.extend(c.to_lowercase()),
                Some(_) if start.is_empty() => {}
                Some(_) => {
                    return Lead::NewWord {
                        start,
                        complete: true,
                    }
                }
            }
        }
        if start.is_empty() {
            Lead::Wordless
        } else {
            Lead::NewWord {
                start,
                complete: false,
            }
        }
    }
}

/// Reads the characters of a JSON string's text as written: `\n` is a line break and
/// `\u00e9` an `é` (a surrogate half reads as a separator).
#[derive(Debug, Clone, Default)]
struct JsonText {
    /// After a backslash.
    escaped: bool,
    /// Inside `\uXXXX`: the value and the hex digits read so far.
    hex: Option<(u32, u8)>,
}

impl JsonText {
    /// The character `c` stands for, or `None` while an escape is still being read.
    fn read(&mut self, c: char) -> Option<char> {
        if let Some((value, digits)) = self.hex {
            let Some(d) = c.to_digit(16) else {
                self.hex = None;
                return Some(' ');
            };
            let value = value * 16 + d;
            if digits == 3 {
                self.hex = None;
                return Some(char::from_u32(value).unwrap_or(' '));
            }
            self.hex = Some((value, digits + 1));
            return None;
        }
        if self.escaped {
            self.escaped = false;
            if c == 'u' {
                self.hex = Some((0, 0));
                return None;
            }
            // `\n`, `\t`, `\"`, `\\`, `\/`: no letter of a word.
            return Some(' ');
        }
        if c == '\\' {
            self.escaped = true;
            return None;
        }
        Some(c)
    }

    fn mid_escape(&self) -> bool {
        self.escaped || self.hex.is_some()
    }
}

/// The words of a JSON string's text as they are written: the last few complete words and the
/// one being written.
#[derive(Debug, Clone, Default)]
struct ReplyWords {
    done: Vec<String>,
    current: String,
    text: JsonText,
}

/// How many complete words the reply keeps: enough to match a row's end.
const KEPT_WORDS: usize = 8;

impl ReplyWords {
    fn push(&mut self, piece: &str) {
        for c in piece.chars() {
            match self.text.read(c) {
                // Inside an escape: `caf\u00e9` is one word.
                None => {}
                Some(c) if c.is_alphanumeric() => self.current.extend(c.to_lowercase()),
                Some(_) => self.end_word(),
            }
        }
    }

    fn end_word(&mut self) {
        if self.current.is_empty() {
            return;
        }
        self.done.push(std::mem::take(&mut self.current));
        if self.done.len() > KEPT_WORDS {
            self.done.remove(0);
        }
    }

    /// The last `n` words, the one being written last, or `None` if there are fewer.
    fn last(&self, n: usize) -> Option<Vec<&str>> {
        let mut all: Vec<&str> = self.done.iter().map(String::as_str).collect();
        if !self.current.is_empty() {
            all.push(&self.current);
        }
        (all.len() >= n).then(|| all[all.len() - n..].to_vec())
    }
}

/// The tables' words, table after table, and where each row ends.
#[derive(Debug, Clone)]
pub struct RowEnds {
    /// Every table's words in order; `None` stands between two tables.
    words: Vec<Option<String>>,
    /// `ends_row[k]`: `words[k]` is the last word of a row that another row follows.
    ends_row: Vec<bool>,
    reply: ReplyWords,
}

/// The first words of the rows after a copied row end, whole and every prefix of them.
struct NextRows {
    whole: HashSet<String>,
    prefixes: HashSet<String>,
}

impl RowEnds {
    pub fn new<'a>(tables: impl IntoIterator<Item = &'a str>) -> Self {
        let mut words = Vec::new();
        let mut ends_row = Vec::new();
        for table in tables {
            let rows: Vec<Vec<String>> = table
                .lines()
                .map(|line| {
                    line.split(|c: char| !c.is_alphanumeric())
                        .filter(|w| !w.is_empty())
                        .map(str::to_lowercase)
                        .collect::<Vec<_>>()
                })
                .filter(|row| !row.is_empty())
                .collect();
            for (i, row) in rows.iter().enumerate() {
                let followed = i + 1 < rows.len();
                for (j, w) in row.iter().enumerate() {
                    words.push(Some(w.clone()));
                    ends_row.push(followed && j + 1 == row.len());
                }
            }
            words.push(None);
            ends_row.push(false);
        }
        Self {
            words,
            ends_row,
            reply: ReplyWords::default(),
        }
    }

    /// The reply goes on with the text of one token.
    pub fn accept(&mut self, piece: &str) {
        self.reply.push(piece);
    }

    /// The rows that follow the row end the reply has just copied, if it stands at one and
    /// nowhere else in the tables.
    fn next_rows(&self) -> Option<NextRows> {
        let n = MIN_COPIED_WORDS;
        let tail = self.reply.last(n)?;
        let (before, last) = tail.split_at(n - 1);
        let writing = !self.reply.current.is_empty();
        let mut next = Vec::new();
        for k in (n - 1)..self.words.len() {
            let Some(word) = &self.words[k] else {
                continue;
            };
            let lead_in = before
                .iter()
                .zip(&self.words[k + 1 - n..k])
                .all(|(mine, theirs)| theirs.as_deref() == Some(*mine));
            if !lead_in {
                continue;
            }
            if word == last[0] {
                match (&self.words[k + 1], self.ends_row[k]) {
                    (Some(w), true) => next.push(w.as_str()),
                    // The same words go on inside the table: no row end.
                    (Some(_), false) => return None,
                    (None, _) => {}
                }
            } else if writing && word.starts_with(last[0]) {
                // The word being written may yet become this longer cell.
                return None;
            }
        }
        if next.is_empty() {
            return None;
        }
        let whole: HashSet<String> = next.iter().map(|w| w.to_string()).collect();
        let prefixes = whole
            .iter()
            .flat_map(|w| {
                w.char_indices()
                    .map(move |(i, c)| w[..i + c.len_utf8()].to_string())
            })
            .collect();
        Some(NextRows { whole, prefixes })
    }

    /// At a copied row end, the penalty of every token in `leads` (indexed by token id) that
    /// adds no word or starts the next row's first word; otherwise nothing.
    pub fn penalties(&self, leads: &[Lead]) -> HashMap<i32, f32> {
        let Some(next) = self.next_rows() else {
            return HashMap::new();
        };
        let continues = |start: &String, complete: bool| {
            if complete {
                next.whole.contains(start)
            } else {
                next.prefixes.contains(start)
            }
        };
        // Nothing in the tables lengthens this cell (`next_rows` saw to that): a token that
        // does bends it or glues the next row on.
        let mid_word = !self.reply.current.is_empty() || self.reply.text.mid_escape();
        leads
            .iter()
            .enumerate()
            .filter(|(_, lead)| match lead {
                Lead::Wordless => true,
                Lead::Extends { .. } if mid_word => true,
                Lead::Extends { start, complete } | Lead::NewWord { start, complete } => {
                    continues(start, *complete)
                }
            })
            .filter_map(|(id, _)| i32::try_from(id).ok().map(|id| (id, ROW_END_PENALTY)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASKS: &str = "task,owner,hours\nRenewal API,Jonas,16\nRelease checklist,Maya,4\n";

    fn leads(pieces: &[&str]) -> Vec<Lead> {
        pieces.iter().map(|p| Lead::of(p)).collect()
    }

    fn after(table: &str, reply: &[&str]) -> RowEnds {
        let mut r = RowEnds::new([table]);
        for piece in reply {
            r.accept(piece);
        }
        r
    }

    /// Which of `pieces`, written one after another, the rule penalises as it goes.
    fn penalised_along(table: &str, pieces: &[&str]) -> Vec<String> {
        let mut r = RowEnds::new([table]);
        let mut hit = Vec::new();
        for p in pieces {
            if r.penalties(&[Lead::of(p)]).contains_key(&0) {
                hit.push((*p).to_string());
            }
            r.accept(p);
        }
        hit
    }

    fn sorted_keys(got: &HashMap<i32, f32>) -> Vec<i32> {
        let mut keys: Vec<i32> = got.keys().copied().collect();
        keys.sort_unstable();
        keys
    }

    #[test]
    fn a_token_is_read_as_a_reply_inside_a_json_string_would_read_it() {
        let word = |start: &str, complete| (start.to_string(), complete);
        let lead = |piece| match Lead::of(piece) {
            Lead::Extends { start, complete } => ("extends", Some(word(&start, complete))),
            Lead::NewWord { start, complete } => ("new", Some(word(&start, complete))),
            Lead::Wordless => ("wordless", None),
        };
        assert_eq!(lead("0"), ("extends", Some(word("0", false))));
        assert_eq!(lead("Ren,"), ("extends", Some(word("ren", true))));
        assert_eq!(lead(" hours"), ("new", Some(word("hours", false))));
        assert_eq!(lead("\\nRel"), ("new", Some(word("rel", false))));
        assert_eq!(lead(" h\\n"), ("new", Some(word("h", true))));
        // After a backslash the next character is escaped even when it is a letter, and
        // `\u` reads four hex digits as one character.
        for wordless in ["\\n", ",\"", "", "\\t", "\\u00", "\\u000a", "\\u000a\\n"] {
            assert_eq!(lead(wordless), ("wordless", None), "{wordless:?}");
        }
        assert_eq!(lead("\\u00e9t"), ("new", Some(word("ét", false))));
    }

    #[test]
    fn after_a_copied_row_end_only_a_word_of_the_reply_s_own_goes_free() {
        let pieces = [
            "\\n", ",", "0", " hours", " h", "\\nRel", " Release", "\"", " (", "\\nTotal",
        ];
        let r = after(TASKS, &["Renewal", " API", ",", "Jon", "as", ",", "1", "6"]);
        let got = r.penalties(&leads(&pieces));
        let penalised: Vec<&str> = (0..pieces.len())
            .filter(|&i| got.contains_key(&(i as i32)))
            .map(|i| pieces[i])
            .collect();
        // `0` would bend the cell into `160`.
        assert_eq!(
            penalised,
            ["\\n", ",", "0", "\\nRel", " Release", "\"", " ("],
            "{got:?}"
        );
        assert!(got.values().all(|&p| p == ROW_END_PENALTY));
        // After a separator already written, a letter starts a word: free unless it is the
        // next row's; after a lone backslash it is an escape.
        let pieces = ["hours", "Release", "\\n"];
        let copied = ["API", ",", "Jonas", ",", "16"];
        let got = after(TASKS, &[&copied[..], &[","]].concat()).penalties(&leads(&pieces));
        assert_eq!(sorted_keys(&got), [1, 2], "{got:?}");
        let got = after(TASKS, &[&copied[..], &["\\"]].concat()).penalties(&leads(&pieces));
        assert!(got.contains_key(&0), "{got:?}");
    }

    #[test]
    fn no_penalty_off_a_row_end() {
        let all = leads(&["\\n", ",", "0", " hours"]);
        // Mid-row, two words copied, the last row (nothing follows it), a number that only
        // starts a cell.
        for reply in [
            &["Renewal", " API", ","][..],
            &["Jonas", ",", "16"],
            &["checklist", ",", "Maya", ",", "4"],
            &["API", ",", "Jonas", ",", "1"],
        ] {
            assert!(after(TASKS, reply).penalties(&all).is_empty(), "{reply:?}");
        }
        // The word written after the row end ends the rule.
        let r = after(TASKS, &["API", "Jonas", ",", "16", " hours"]);
        assert!(r.penalties(&all).is_empty());
    }

    #[test]
    fn a_row_copied_on_its_own_is_never_bent() {
        // Another row ends where this one goes on: `16` after `1`, `8.5` after `8`, a row's
        // end inside the next row.
        let t = "task,owner,status,hours\nA,Jonas,done,1\nB,Jonas,done,16\n";
        assert!(penalised_along(t, &["B", ",", "Jonas", ",", "done", ",", "1", "6"]).is_empty());
        let t = "name,role,hours\nAna,dev,8\nBen,ops,7\nAna,dev,8.5\n";
        assert!(penalised_along(t, &["Ana", ",", "dev", ",", "8", ".", "5", "\\n"]).is_empty());
        let t = "id,x,y,z\na,1,2,3\nb,1,2,3,4\n";
        assert!(penalised_along(t, &["b", ",", "1", ",", "2", ",", "3", ",", "4"]).is_empty());
        // Still held: a line break, the next row glued on, and the next row's first word right
        // after a row end.
        let t = "id,x,y,z\na,1,2,3\nb,2,3,4\n";
        assert_eq!(penalised_along(t, &["1", ",", "2", ",", "3", "b"]), ["b"]);
        assert_eq!(
            penalised_along(t, &["1", ",", "2", ",", "3", "\\n", "b"]),
            ["\\n", "b"]
        );
    }

    #[test]
    fn a_two_word_phrase_that_ends_a_row_does_not_hold_up_prose() {
        let t = "id,comment\n103,Offline edits vanished twice this week.\n104,Good.\n";
        let r = after(t, &["Sync", " failed", " this", " week"]);
        assert!(r.penalties(&leads(&[".", "\\n", "\""])).is_empty());
    }

    #[test]
    fn the_header_row_and_escaped_line_breaks_count_as_the_judge_reads_them() {
        let all = leads(&["\\n", " (h)"]);
        let r = after(TASKS, &["Task", ", ", "Owner", ", ", "Hours"]);
        assert_eq!(r.penalties(&all).len(), 1);
        // `\n` before a word is no `n`: the words are `16`, `renewal`.
        let r = after(TASKS, &["Jonas,16", "\\n", "Renewal API,Jonas,16"]);
        assert_eq!(r.penalties(&all).len(), 1);
        // Nor is `\u000a` a word `000a`: after it, `Release` still joins the rows.
        let r = after(TASKS, &["API,Jonas,16", "\\u00", "0a"]);
        assert!(r.penalties(&leads(&["Release"])).contains_key(&0));
        // `caf\u00e9` is the one word `café`.
        let r = after("name,a,n\ncafé,b,1\nx,y,2\n", &["caf\\u00e9", ",b,", "1"]);
        assert_eq!(r.penalties(&leads(&["\\n"])).len(), 1);
    }

    #[test]
    fn rows_of_two_tables_are_never_joined() {
        let r = after("a,b,c\nd,e,f\n", &["a", ",", "b", ",", "c"]);
        assert_eq!(r.penalties(&leads(&["\\n"])).len(), 1);
        let two = after_all(["a,b,c\n", "d,e,f\n"], &["a", ",", "b", ",", "c"]);
        assert!(
            two.penalties(&leads(&["\\n"])).is_empty(),
            "a,b,c is the last row of its table"
        );
    }

    fn after_all<'a>(tables: [&'a str; 2], reply: &[&str]) -> RowEnds {
        let mut r = RowEnds::new(tables);
        for piece in reply {
            r.accept(piece);
        }
        r
    }

    #[test]
    fn blank_lines_and_crlf_are_no_rows() {
        let r = after("a,b,c\r\n\r\nd,e,f\r\n", &["a", ",", "b", ",", "c"]);
        let got = r.penalties(&leads(&["\\n", " d", " x"]));
        assert_eq!(sorted_keys(&got), [0, 1], "{got:?}");
    }

    #[test]
    fn many_rows_with_one_end_hold_each_next_row_start() {
        // 4,000 rows ending `x,no,yes`: every next row's first word is held, any other is free.
        let mut t = String::from("task,kind,done,billable\n");
        for i in 0..4_000 {
            t.push_str(&format!("t{i},x,no,yes\n"));
        }
        let r = after(&t, &["x", ",", "no", ",", "yes"]);
        let pieces: Vec<String> = (0..2_000).map(|i| format!(" t{i}")).collect();
        let mut all: Vec<&str> = pieces.iter().map(String::as_str).collect();
        all.extend([" x1", " t"]);
        let got = r.penalties(&leads(&all));
        // ` t0` follows the header, no `x,no,yes` row.
        assert_eq!(got.len(), 2_000, "` t1` to ` t1999` and the prefix ` t`");
        assert!(
            !got.contains_key(&0) && !got.contains_key(&2_000),
            "` t0`, ` x1`"
        );
    }
}
