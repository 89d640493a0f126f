//! The row-end rule of the no-paste penalty: a reply that has copied the end of a table's row
//! must write a word of its own before the next row's first word, when joining the two would
//! make a verbatim run the judge counts that neither makes alone (the words copied up to the
//! row end and the next row reach the judge's `min_run_words`, and the next row alone does
//! not). The judge's `not_copied` reads a table's rows as one run of words, so rows pasted one
//! after another are one long copy however short each row is; one word between them (`12
//! hours`) cuts the run at every row, and each row stays verbatim, which `mentions_all` needs.
//!
//! It reads words as the judge does (runs of letters and digits, lower case) in the reply's
//! text as written inside a JSON string, where `\n` and `\u000a` are escapes, not letters, and
//! a table's rows as lines, the line breaks of a quoted cell (a quote at a cell's start) inside
//! its row. At a row end, a token that adds no word (`\n`, `,`, the closing quote), starts the
//! next row's first word, or lengthens the cell just written is penalised (the 0.5B, held off
//! the line break alone, glued the next row on: `12Renewal`); while the next row's first word
//! is being written anyway (` Re`), a token that carries it on (`lease`) is. Where the copied
//! words go on inside the table at least as far, within their row, as they end one (the same
//! words mid-row, or a longer cell: `8` beside `8.5`, `1` beside `16`), only a token that
//! starts a next row's first word is held, and none that also goes on inside, so a row copied
//! on its own is not bent where the table itself is ambiguous.
//! Not read as the judge reads: its folding of accents, look-alike letters and zero-width
//! marks; a character the tokenizer splits into bytes reads as a separator; lone `\r` line
//! ends. One copied word is no row end, so one word and a next row one word short of the run
//! go through. It holds every string of the reply, an `edit_file` `old_text` quoting pasted
//! rows too.

use std::collections::{HashMap, HashSet};

/// What a row-end token loses off its logit: past the gap between a pasted row's line break
/// and a unit word at temperature 0.1, yet finite, so a grammar that allows nothing else (the
/// closing quote of a string) still has its token.
pub const ROW_END_PENALTY: f32 = 25.0;

/// How many of a row's last words the reply must have copied for its end to count at all: a
/// single word (`12`) is no copy of a row.
const MIN_COPIED_WORDS: usize = 2;

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

impl ReplyWords {
    fn push(&mut self, piece: &str, kept: usize) {
        for c in piece.chars() {
            match self.text.read(c) {
                // Inside an escape: `caf\u00e9` is one word.
                None => {}
                Some(c) if c.is_alphanumeric() => self.current.extend(c.to_lowercase()),
                Some(_) => self.end_word(kept),
            }
        }
    }

    fn end_word(&mut self, kept: usize) {
        if self.current.is_empty() {
            return;
        }
        self.done.push(std::mem::take(&mut self.current));
        if self.done.len() > kept {
            self.done.remove(0);
        }
    }

    /// The words kept, the one being written last.
    fn all(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self.done.iter().map(String::as_str).collect();
        if !self.current.is_empty() {
            all.push(&self.current);
        }
        all
    }
}

/// A table's rows as the judge reads its words: lines, the line breaks of a quoted cell inside
/// its row; rows without words dropped. A quote opens a cell only at the cell's start (after a
/// comma, a semicolon, a tab or the line's start), so an inch mark (`1/2"`) leaves the rows as
/// they are; a table whose quotes do not parse (a cell left open at the end, a closing quote
/// not followed by a delimiter or the line's end, as `\"` escapes leave them) is read as plain
/// lines.
fn rows_of(table: &str) -> Vec<Vec<String>> {
    let rows = quoted_rows(table).unwrap_or_else(|| table.lines().map(str::to_string).collect());
    rows.iter()
        .map(|row| {
            row.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect::<Vec<_>>()
        })
        .filter(|row| !row.is_empty())
        .collect()
}

/// The rows of a CSV or TSV, quoted cells' line breaks kept in their row, or `None` when its
/// quotes do not parse.
fn quoted_rows(table: &str) -> Option<Vec<String>> {
    let is_delimiter = |c: char| matches!(c, ',' | ';' | '\t');
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut quoted = false;
    for line in table.lines() {
        if !row.is_empty() {
            row.push('\n');
        }
        let mut cell_start = !quoted;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if quoted {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                    } else if chars.peek().is_none_or(|&n| is_delimiter(n)) {
                        quoted = false;
                    } else {
                        return None;
                    }
                }
            } else if c == '"' && cell_start {
                quoted = true;
            }
            cell_start = !quoted && is_delimiter(c);
        }
        row.push_str(line);
        if !quoted {
            rows.push(std::mem::take(&mut row));
        }
    }
    (!quoted).then_some(rows)
}

/// The tables' words, table after table, and where each row ends.
#[derive(Debug, Clone)]
pub struct RowEnds {
    /// Every table's words in order; `None` stands between two tables.
    words: Vec<Option<String>>,
    /// `next_len[k]`: when `words[k]` is the last word of a row that another row follows, the
    /// number of words of that next row; else 0.
    next_len: Vec<usize>,
    /// `in_row[k]`: how many words of its row `words[k]` ends (1 for a row's first word).
    in_row: Vec<usize>,
    /// The judge's run length: a chain counts when it reaches it.
    run_words: usize,
    reply: ReplyWords,
}

/// The first words of the rows after a copied row end, whole and every prefix of them, and
/// whether the copied words also go on inside the table.
struct NextRows {
    whole: HashSet<String>,
    prefixes: HashSet<String>,
    /// The copied words go on inside the table at least as well as they end a row: only a
    /// token that starts a next row's first word, and no word that goes on inside the table,
    /// is held.
    ambiguous: bool,
}

impl NextRows {
    /// Whether a word that starts with `start` (the whole word when `complete`) is on its way
    /// to a next row's first word.
    fn continues(&self, start: &str, complete: bool) -> bool {
        if complete {
            self.whole.contains(start)
        } else {
            self.prefixes.contains(start)
        }
    }
}

/// Every prefix of every word, the words themselves included.
fn prefixes<'a>(words: impl IntoIterator<Item = &'a String>) -> HashSet<String> {
    words
        .into_iter()
        .flat_map(|w| {
            w.char_indices()
                .map(move |(i, c)| w[..i + c.len_utf8()].to_string())
        })
        .collect()
}

impl RowEnds {
    /// `run_words`: the judge's `min_run_words` for these tables (a verbatim run of that many
    /// words is a copy); at least three.
    pub fn new<'a>(tables: impl IntoIterator<Item = &'a str>, run_words: u32) -> Self {
        let (mut words, mut next_len, mut in_row) = (Vec::new(), Vec::new(), Vec::new());
        for table in tables {
            let rows = rows_of(table);
            for (i, row) in rows.iter().enumerate() {
                let following = rows.get(i + 1).map_or(0, Vec::len);
                for (j, w) in row.iter().enumerate() {
                    words.push(Some(w.clone()));
                    next_len.push(if j + 1 == row.len() { following } else { 0 });
                    in_row.push(j + 1);
                }
            }
            words.push(None);
            next_len.push(0);
            in_row.push(0);
        }
        Self {
            words,
            next_len,
            in_row,
            run_words: usize::try_from(run_words)
                .unwrap_or(usize::MAX)
                .max(MIN_COPIED_WORDS + 1),
            reply: ReplyWords::default(),
        }
    }

    /// The reply goes on with the text of one token.
    pub fn accept(&mut self, piece: &str) {
        self.reply.push(piece, self.run_words);
    }

    /// How many of the reply's last words equal the table's words ending at `k`.
    fn copied_before(&self, tail: &[&str], k: usize) -> usize {
        tail.iter()
            .rev()
            .zip(self.words[..=k].iter().rev())
            .take_while(|(mine, theirs)| theirs.as_deref() == Some(**mine))
            .count()
    }

    /// The rows a chain would join at the row end `tail` has just copied, when joining them
    /// would make a run the judge counts that neither row makes alone. `writing`: the last
    /// word of `tail` is still being written.
    fn next_rows(&self, tail: &[&str], writing: bool) -> Option<NextRows> {
        if tail.len() < MIN_COPIED_WORDS {
            return None;
        }
        let (before, last) = tail.split_at(tail.len() - 1);
        let mut next: Vec<String> = Vec::new();
        let mut inside: Vec<String> = Vec::new();
        // Which the reply is copying, a row end or words that go on inside the table, is read
        // from how much of each one's own row it has copied (a header copied before a row
        // says nothing about which row); the inside wins a tie.
        let (mut at_end, mut going_on) = (0, 0);
        for k in 1..self.words.len() {
            let Some(word) = &self.words[k] else {
                continue;
            };
            if self.words[k - 1].as_deref() != before.last().copied() {
                continue;
            }
            if word != last[0] {
                // The word being written may yet become this longer cell.
                if writing && word.starts_with(last[0]) {
                    let copied = self.copied_before(before, k - 1) + 1;
                    going_on = going_on.max(copied.min(self.in_row[k]));
                }
                continue;
            }
            let Some(following) = &self.words[k + 1] else {
                continue;
            };
            let copied = self.copied_before(tail, k);
            let rows_after = self.next_len[k];
            if rows_after == 0 {
                going_on = going_on.max(copied.min(self.in_row[k]));
                inside.push(following.clone());
            } else if copied + rows_after >= self.run_words && rows_after < self.run_words {
                at_end = at_end.max(copied.min(self.in_row[k]));
                next.push(following.clone());
            }
        }
        if next.is_empty() {
            return None;
        }
        let ambiguous = going_on >= at_end;
        let mut whole: HashSet<String> = next.into_iter().collect();
        let mut prefixes = prefixes(&whole);
        if ambiguous {
            let inside_prefixes = self::prefixes(&inside);
            prefixes.retain(|p| !inside_prefixes.contains(p));
            whole.retain(|w| !inside.contains(w));
        }
        Some(NextRows {
            whole,
            prefixes,
            ambiguous,
        })
    }

    /// The penalty of every token in `leads` (indexed by token id) that would join the next
    /// row to a copied row end: at the row end, one that adds no word, lengthens the cell just
    /// written or starts the next row's first word (at an ambiguous end, only the last);
    /// while the next row's first word is being written, one that carries it on.
    pub fn penalties(&self, leads: &[Lead]) -> HashMap<i32, f32> {
        let reply = &self.reply;
        let writing = !reply.current.is_empty();
        let mid_escape = reply.text.mid_escape();
        let held = |id: usize| i32::try_from(id).ok().map(|id| (id, ROW_END_PENALTY));
        if let Some(next) = self.next_rows(&reply.all(), writing) {
            let strict = !next.ambiguous;
            return leads
                .iter()
                .enumerate()
                .filter(|(_, lead)| match lead {
                    Lead::Wordless => strict,
                    // After a lone backslash a letter is the escape's (`\` then `nWen`).
                    Lead::Extends { start, complete } if mid_escape => {
                        strict || {
                            let rest: String = start.chars().skip(1).collect();
                            !rest.is_empty() && next.continues(&rest, *complete)
                        }
                    }
                    // Nothing in the tables lengthens this cell at a strict end (else it is
                    // ambiguous): a token that does bends it or glues the next row on.
                    Lead::Extends { .. } if writing => strict,
                    Lead::Extends { start, complete } | Lead::NewWord { start, complete } => {
                        next.continues(start, *complete)
                    }
                })
                .filter_map(|(id, _)| held(id))
                .collect();
        }
        // The next row's first word under way (` Re` of `Release`): hold what carries it on.
        let done: Vec<&str> = reply.done.iter().map(String::as_str).collect();
        let Some(next) = writing
            .then(|| self.next_rows(&done, false))
            .flatten()
            .filter(|next| next.whole.iter().any(|w| w.starts_with(&reply.current)))
        else {
            return HashMap::new();
        };
        leads
            .iter()
            .enumerate()
            .filter(|(_, lead)| match lead {
                Lead::Extends { start, complete } if !mid_escape => {
                    next.continues(&format!("{}{start}", reply.current), *complete)
                }
                _ => false,
            })
            .filter_map(|(id, _)| held(id))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of 3, 4 and 4 words; the judge counts runs of 8.
    const TASKS: &str = "task,owner,hours\nRenewal API,Jonas,16\nRelease checklist,Maya,4\n";

    fn leads(pieces: &[&str]) -> Vec<Lead> {
        pieces.iter().map(|p| Lead::of(p)).collect()
    }

    fn after_with(tables: &[&str], run_words: u32, reply: &[&str]) -> RowEnds {
        let mut r = RowEnds::new(tables.iter().copied(), run_words);
        for piece in reply {
            r.accept(piece);
        }
        r
    }

    fn after(table: &str, reply: &[&str]) -> RowEnds {
        after_with(&[table], 8, reply)
    }

    /// Which of `pieces`, written one after another, the rule penalises as it goes.
    fn penalised_along(table: &str, run_words: u32, pieces: &[&str]) -> Vec<String> {
        penalised_along_in(&[table], run_words, pieces)
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
        let copied = ["Renewal", " API", ",", "Jonas", ",", "16"];
        let got = after(TASKS, &[&copied[..], &[","]].concat()).penalties(&leads(&pieces));
        assert_eq!(sorted_keys(&got), [1, 2], "{got:?}");
        let got = after(TASKS, &[&copied[..], &["\\"]].concat()).penalties(&leads(&pieces));
        assert!(got.contains_key(&0), "{got:?}");
    }

    #[test]
    fn a_row_end_is_held_only_where_joining_the_next_row_makes_a_counted_run() {
        let all = leads(&["\\n", ",", "0", " hours"]);
        // Two words and the next row's four make six, short of the judge's eight; one word is
        // no copy; the last row has nothing after it; mid-row; the word written after the row
        // end ends the rule.
        for reply in [
            &["Jonas", ",", "16"][..],
            &["16"],
            &["Release", " checklist", ",", "Maya", ",", "4"],
            &["Renewal", " API", ","],
            &["Renewal", " API", ",", "Jonas", ",", "16", " hours"],
        ] {
            assert!(after(TASKS, reply).penalties(&all).is_empty(), "{reply:?}");
        }
        // With runs of six, two copied words and the next row's four count.
        let r = after_with(&[TASKS], 6, &["Jonas", ",", "16"]);
        assert_eq!(r.penalties(&all).len(), 3);
        // A next row of eight words or more is a copy alone: holding its start protects nothing.
        let long = "a,b,c,d\nw,x,y,z\none,two,three,four,five,six,seven,eight\n";
        assert!(after(long, &["w", ",x,", "y", ",", "z"])
            .penalties(&all)
            .is_empty());
    }

    #[test]
    fn a_row_copied_on_its_own_is_never_bent() {
        // Another row ends where this one goes on: `16` after `1`, `8.5` after `8`, a row's
        // end inside the next row, a quoted cell's line break.
        // Runs of six, so that joining the next row would count.
        let t = "task,owner,status,hours\nA,Jonas,done,1\nB,Jonas,done,16\nC,x,y,z\n";
        let row = ["B", ",", "Jonas", ",", "done", ",", "1", "6"];
        assert!(penalised_along(t, 6, &row).is_empty());
        let t = "name,role,hours\nAna,dev,8\nBen,ops,7\nAna,dev,8.5\n";
        let row = ["Ana", ",", "dev", ",", "8", ".", "5", "\\n"];
        assert!(penalised_along(t, 4, &row).is_empty());
        let t = "id,x,y,z\na,1,2,3\nb,1,2,3,4\n";
        let row = ["b", ",", "1", ",", "2", ",", "3", ",", "4"];
        assert!(penalised_along(t, 6, &row).is_empty());
        let t = "id,note,hours\n7,\"Call vendor\nthen sign off\",3\n8,Pay,2\n";
        let row = [
            "7", ",\"", "Call", " vendor", "\\n", "then", " sign", " off", "\",", "3",
        ];
        assert!(penalised_along(t, 6, &row).is_empty());
        // Still held: a line break, the next row glued on, and the next row's first word
        // right after a row end (`2 3` goes on inside row b, a shorter copy than `1 2 3`).
        let t = "id,x,y,z\na,1,2,3\nb,2,3,4\n";
        assert_eq!(
            penalised_along(t, 6, &["1", ",", "2", ",", "3", "b"]),
            ["b"]
        );
        assert_eq!(
            penalised_along(t, 6, &["1", ",", "2", ",", "3", "\\n", "b"]),
            ["\\n", "b"]
        );
    }

    #[test]
    fn where_the_copied_words_go_on_inside_the_table_the_next_row_is_still_held() {
        // `5 4 5` ends Irene's row and goes on inside Wen's: copied alone, it may be either, so
        // the line break, the comma and a longer cell go free, `4` (Wen's row going on) too;
        // Wen's row must not follow it straight.
        let t = "name,a,b,c,d\nIrene,4,5,4,5\nWen,5,4,5,4\n";
        let pieces = leads(&["\\n", ",", " Wen", "\\nW", " 4", "0"]);
        let r = after_with(&[t], 6, &["Scores", " 5", ",", "4", ",", "5"]);
        assert_eq!(sorted_keys(&r.penalties(&pieces)), [2, 3]);
        // Irene's whole row is a longer copy of her row end than of Wen's middle: held.
        let r = after_with(&[t], 6, &["Irene", ",4,", "5", ",", "4", ",", "5"]);
        assert_eq!(sorted_keys(&r.penalties(&pieces)), [0, 1, 2, 3, 5]);
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
        // The header's three words and the first row's four make seven: runs of seven count.
        let r = after_with(&[TASKS], 7, &["Task", ", ", "Owner", ", ", "Hours"]);
        assert_eq!(r.penalties(&all).len(), 1);
        // `\n` is no letter `n`: `16\nRenewal` is `16`, `renewal`, and the run goes on.
        let r = after(TASKS, &["task,owner,hours", "\\n", "Renewal API,Jonas,16"]);
        assert_eq!(r.penalties(&all).len(), 1);
        let r = after(TASKS, &["task,owner,hours\\nRenewal API,Jonas,16"]);
        assert_eq!(r.penalties(&all).len(), 1);
        // Nor is `\u000a` a word `000a`: after it, `Release` still joins the rows.
        let r = after(TASKS, &["Renewal API,Jonas,16", "\\u00", "0a"]);
        assert!(r.penalties(&leads(&["Release"])).contains_key(&0));
        // `caf\u00e9` is the one word `café`.
        let r = after_with(
            &["name,a,n\ncafé,b,1\nx,y,2\n"],
            6,
            &["caf\\u00e9", ",b,", "1"],
        );
        assert_eq!(r.penalties(&leads(&["\\n"])).len(), 1);
    }

    #[test]
    fn rows_of_two_tables_are_never_joined() {
        let reply = ["a", ",", "b", ",", "c"];
        let r = after_with(&["a,b,c\nd,e,f\n"], 4, &reply);
        assert_eq!(r.penalties(&leads(&["\\n"])).len(), 1);
        let two = after_with(&["a,b,c\n", "d,e,f\n"], 4, &reply);
        assert!(
            two.penalties(&leads(&["\\n"])).is_empty(),
            "a,b,c is the last row of its table"
        );
    }

    #[test]
    fn crlf_line_ends_and_blank_lines_between_rows() {
        let r = after_with(
            &["a,b,c\r\n\r\nd,e,f\r\n\r\n"],
            4,
            &["a", ",", "b", ",", "c"],
        );
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
        let r = after_with(&[&t], 6, &["x", ",", "no", ",", "yes"]);
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

    /// [`penalised_along`] over several tables.
    fn penalised_along_in(tables: &[&str], run_words: u32, pieces: &[&str]) -> Vec<String> {
        let mut r = RowEnds::new(tables.iter().copied(), run_words);
        let mut hit = Vec::new();
        for p in pieces {
            if r.penalties(&[Lead::of(p)]).contains_key(&0) {
                hit.push((*p).to_string());
            }
            r.accept(p);
        }
        hit
    }

    #[test]
    fn the_next_row_s_first_word_is_held_while_it_is_being_written() {
        // `re` also starts `review`, which goes on inside the second table; copied from the
        // first table's row, ` Re` and then `lease` would still join the rows.
        let tables = [
            "task,owner,status\nAPI,Jonas,in progress\nRelease checklist,Maya,planned\n",
            "status,meaning\nin progress,Review pending\n",
        ];
        let chain = ["API", ",", "Jonas", ",", "in", " progress", " Re", "lease"];
        assert_eq!(penalised_along_in(&tables, 6, &chain), [" Re", "lease"]);
        let own = ["Status", ":", " in", " progress", " Re", "view"];
        assert!(penalised_along_in(&tables, 6, &own).is_empty());
        // Digit by digit at an ambiguous end: `1` goes on inside row 12, `12` joins it.
        let t = "id,a,b,c,d\n11,2,3,4,5\n12,4,5,1,2\n";
        let chain = ["Scores", " 4", ",", "5", "\\n", "1", "2"];
        assert_eq!(penalised_along(t, 6, &chain), ["2"]);
        let own = ["Scores", " 4", ",", "5", ",", "1", ",", "2"];
        assert!(penalised_along(t, 6, &own).is_empty());
    }

    #[test]
    fn a_copied_header_does_not_decide_which_row_is_being_copied() {
        let t = "task,owner,hours\nAPI,Jonas,1\nDocs,Maya,4\nAPI,Jonas,16\n";
        let head = ["task", ",", "owner", ",", "hours", "\\n"];
        let row = [&head[..], &["API", ",", "Jonas", ",", "1", "6"]].concat();
        assert!(penalised_along(t, 8, &row).is_empty());
        let row1 = [&head[..], &["API", ",", "Jonas", ",", "1", "\\n", "Docs"]].concat();
        assert_eq!(penalised_along(t, 8, &row1), ["Docs"]);
        let t = "name,role,hours\nAna,dev,8\nBen,ops,7\nAna,dev,8.5\n";
        let row = [
            "name", ",", "role", ",", "hours", "\\n", "Ana", ",", "dev", ",", "8", ".", "5",
        ];
        assert!(penalised_along(t, 8, &row).is_empty());
    }

    #[test]
    fn a_quote_opens_a_cell_only_at_its_start() {
        // Inch marks and a quote mid-cell in a TSV leave the rows as they are.
        let t = "item,size,qty\nPipe,1/2\",40\nPipe,3/4\",25\nValve,1\",12\n";
        let p = ["Pipe", ",", "1", "/", "2", "\\\"", ",", "40", "\\n", "Pipe"];
        assert_eq!(penalised_along(t, 8, &p), ["\\n", "Pipe"]);
        let t = "name\tnote\tteam\nAna\tsays \"hi\tcore\nBen\tok\tops\nCara\tfine\tcore\n";
        let r = after_with(&[t], 6, &["Ana", ",", "says", " hi", ",", "core"]);
        assert_eq!(r.penalties(&leads(&["\\n"])).len(), 1);
        // Doubled quotes inside a quoted cell stay in the cell, its line break too.
        let t = "id,note,hours\n7,\"Say \"\"hi\"\"\nthen go\",3\n8,Pay,2\n";
        let p = [
            "7", ",", "Say", " hi", "\\n", "then", " go", ",", "3", "\\n",
        ];
        assert_eq!(penalised_along(t, 6, &p), ["\\n"]);
    }

    #[test]
    fn an_escape_split_across_tokens_still_holds_the_next_row() {
        let t = "name,a,b,c,d\nIrene,4,5,4,5\nWen,5,4,5,4\n";
        let r = after_with(&[t], 6, &["Scores", " 5", ",", "4", ",", "5", "\\"]);
        let got = r.penalties(&leads(&["nWen", "n4"]));
        assert_eq!(
            sorted_keys(&got),
            [0],
            "`\\n4` goes on inside Wen's row: {got:?}"
        );
    }

    #[test]
    fn a_table_whose_quotes_do_not_parse_is_read_as_lines() {
        // `\"` escapes leave a cell open, and an unclosed quote would swallow the rows after
        // it: both are read as plain lines, each row held.
        let t = "item,size,qty\n\"Pipe\",\"1/2\\\"\",40\n\"Pipe\",\"3/4\\\"\",25\n\"Valve\",\"1\\\"\",12\n";
        let p = ["Pipe", ",", "1", "/", "2", ",", "40", "\\n", "Pipe"];
        assert_eq!(penalised_along(t, 8, &p), ["\\n", "Pipe"]);
        let t = "id\tr\tnote\n114\t4\t\"Widget is handy\n115\t5\tBest notes app\n116\t3\tok\n";
        let r = after_with(&[t], 8, &["114", ",", "4", ",", "Widget", " is", " handy"]);
        assert_eq!(r.penalties(&leads(&["\\n"])).len(), 1);
        // Semicolons delimit cells too: a quoted cell's line break stays in its row.
        let t = "id;note;hours\n7;\"Call vendor\nthen sign off\";3\n8;Pay;2\n";
        let row = [
            "7", ";\"", "Call", " vendor", "\\n", "then", " sign", " off", "\";", "3",
        ];
        assert!(penalised_along(t, 6, &row).is_empty());
    }

    #[test]
    fn at_an_ambiguous_end_a_word_that_goes_on_inside_is_free_whole_too() {
        // `1 2` ends row x and goes on inside row `1,2,y,9`: ` y,` and ` y\n` are that row.
        let t = "h,i,j\nx,1,2\ny,5,6\n1,2,y,9\n";
        let r = after_with(&[t], 5, &["Scores", " 1", ",", " 2"]);
        assert!(r.penalties(&leads(&[" y,", " y\\n", " y"])).is_empty());
    }
}
