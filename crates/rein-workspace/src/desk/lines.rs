//! `edit_lines`: changes whole lines of an existing text file, every change in one call. Each
//! change names one current line by its text and gives the lines to put in its place; every
//! other byte of the file stays as it was (line endings and a byte order mark included), so a
//! small model cannot drop or reflow a line it did not mean to touch, as it does when it writes
//! the whole file again, and it cannot stop after the first of several `edit_file` calls.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::propose::{existing, unchanged};
use super::{object_schema, path_arg, path_schema, text_of, thousands, workspace};
use crate::tool::{Proposal, Tool, ToolContext, ToolError, ToolOutput};
use crate::MAX_INPUT_CHARS;

/// Most changes one call may make: the desk suite's edit tasks make two to seven.
pub const EDIT_LINES_MAX_CHANGES: usize = 20;
/// Longest text one change may put in place of the lines it names: a change edits a line or
/// adds a few. The bound is in the schema, so constrained decoding ends the text there.
pub const EDIT_LINES_MAX_NEW_CHARS: usize = 2_000;
/// A line with a letter or digit given this many times in one change's new text is refused
/// unless the lines it names hold it as often: a reply that repeats itself, not an edit. With
/// the new lines as a list, the 1.5B repeated one line until the list's bound, twice in a run.
pub const EDIT_LINES_MAX_REPEATS: usize = 3;
/// Most similar lines a refusal for a line not found lists.
const CLOSEST_SHOWN: usize = 3;
/// Longest line a refusal quotes whole; longer ones are cut with a note.
const QUOTE_MAX_CHARS: usize = 200;

const BOM: char = '\u{feff}';

pub struct EditLines;

impl Tool for EditLines {
    fn name(&self) -> &str {
        "edit_lines"
    }
    fn description(&self) -> &str {
        "Propose changing whole lines of an existing text file, every change in one call. Each change names one current line exactly as read_file shows it (`line`) and the text that takes its place (`new_line`): the changed line; the old line, a line break and a new line to add a line after it; empty to delete the line. Every other line stays exactly as it is. A person approves the change."
    }
    fn schema(&self) -> Value {
        object_schema(
            json!({
                "path": path_schema("existing text file to edit, relative to the workspace root"),
                "changes": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": EDIT_LINES_MAX_CHANGES,
                    "items": object_schema(
                        json!({
                            "line": { "type": "string", "minLength": 1, "maxLength": MAX_INPUT_CHARS, "description": "one whole current line of the file, exactly as read" },
                            "new_line": { "type": "string", "maxLength": EDIT_LINES_MAX_NEW_CHARS, "description": "the text that takes its place (several lines with line breaks; empty deletes it)" },
                        }),
                        &["line", "new_line"],
                    ),
                },
            }),
            &["path", "changes"],
        )
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let ws = workspace(ctx, self.name())?;
        let path = path_arg(ws, self.name(), a, None)?;
        let invalid = |message: String| ToolError::InvalidArguments {
            tool: self.name().to_string(),
            message,
        };
        let changes = changes_arg(a).map_err(invalid)?;
        let before = existing(ws, &path, "(use create_file for a new file)")?;
        let Some(text) = text_of(&before) else {
            return Err(ToolError::Refused(format!(
                "\"{path}\" is a binary or non-UTF-8 file ({} bytes); edit_lines only edits text",
                before.len()
            )));
        };
        let after = apply_changes(text, &changes)
            .map_err(|e| ToolError::Refused(format!("{e} in \"{path}\"; nothing was changed")))?;
        if after == text {
            return Err(unchanged(&path));
        }
        Ok(ToolOutput::Proposal(Proposal::new(
            path,
            Some(before.clone()),
            Some(after.into_bytes()),
        )))
    }
}

/// One change: the current line (or run of consecutive lines) it names and the lines that take
/// its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineChange {
    pub lines: Vec<String>,
    pub new_lines: Vec<String>,
}

/// Most consecutive lines one change may name: enough to tell a repeated line by its
/// neighbours, and it bounds the search to this many comparisons a line of the file.
pub const EDIT_LINES_MAX_NAMED: usize = 20;

/// `text` split at its line breaks as a model gives lines: a `\r` before a `\n` is part of
/// the break (a CRLF), any other `\r` part of the line; one final line break ends the last
/// line rather than starting an empty one (`"a\n"` is the line `a`, as a model may copy it from
/// a read); a byte order mark, which a read shows at the start of a file, is no part of a line.
fn given_lines(text: &str) -> Vec<String> {
    let text = text.replace(BOM, "");
    let (text, ended) = match text.strip_suffix('\n') {
        Some(t) => (t, true),
        None => (text.as_str(), false),
    };
    let parts: Vec<&str> = text.split('\n').collect();
    let last = parts.len() - 1;
    parts
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if i < last || ended {
                l.strip_suffix('\r').unwrap_or(l)
            } else {
                l
            }
            .to_string()
        })
        .collect()
}

/// The `changes` argument (already validated against the schema by the registry). A new text
/// holding line breaks is several lines; an empty one is none (the line is deleted).
fn changes_arg(a: &Value) -> Result<Vec<LineChange>, String> {
    let items = a
        .get("changes")
        .and_then(Value::as_array)
        .ok_or("`changes` is required: a list of {line, new_line}")?;
    if items.is_empty() {
        return Err("`changes` is empty; give at least one {line, new_line}".to_string());
    }
    items
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let line = c.get("line").and_then(Value::as_str);
            let new_line = c.get("new_line").and_then(Value::as_str);
            let (Some(line), Some(new_line)) = (line, new_line) else {
                return Err(format!(
                    "change {} needs a string `line` and a string `new_line`",
                    i + 1
                ));
            };
            let lines = given_lines(line);
            if lines.len() > EDIT_LINES_MAX_NAMED {
                return Err(format!(
                    "change {}: `line` holds {} lines; a change names one line, or at most {EDIT_LINES_MAX_NAMED} consecutive lines: give a change for each line to edit",
                    i + 1,
                    lines.len()
                ));
            }
            let new_lines = if new_line.is_empty() {
                Vec::new()
            } else {
                given_lines(new_line)
            };
            if let Some((repeated, times)) = repeated_line(&new_lines, &lines) {
                return Err(format!(
                    "change {}: `new_line` gives the line `{}` {times} times; give each new line once",
                    i + 1,
                    quote(repeated)
                ));
            }
            Ok(LineChange { lines, new_lines })
        })
        .collect()
}

/// A line with a letter or digit that `new_lines` give at least [`EDIT_LINES_MAX_REPEATS`]
/// times and more often than the `named` lines hold it, with its count.
fn repeated_line<'l>(new_lines: &'l [String], named: &[String]) -> Option<(&'l str, usize)> {
    new_lines.iter().find_map(|l| {
        if !l.chars().any(char::is_alphanumeric) {
            return None;
        }
        let times = new_lines.iter().filter(|n| *n == l).count();
        let had = named.iter().filter(|n| *n == l).count();
        (times >= EDIT_LINES_MAX_REPEATS && times > had).then_some((l.as_str(), times))
    })
}

/// Why changes cannot be made (the caller adds the file's name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinesError {
    #[error("change {change}: no line is `{line}`{closest}{hint}; `line` is the text of a line now in the file, copied whole as read_file shows it; to add a line, name the line it goes after and give that line, a line break and the new line as `new_line`")]
    NotFound {
        change: usize,
        line: String,
        closest: String,
        /// What the file's line of that number is, when `line` was a number.
        hint: String,
    },
    #[error("change {change}: `{line}` is at lines {}; name one place: give in `line` the line before or after it as well (consecutive lines, one per line), and put both in `new_line`", numbers(.at))]
    Ambiguous {
        change: usize,
        line: String,
        at: Vec<usize>,
    },
    #[error("changes {first} and {second} both name line {number}; give one change per line, with every line that takes its place")]
    SameLine {
        first: usize,
        second: usize,
        number: usize,
    },
}

fn numbers(at: &[usize]) -> String {
    let shown: Vec<String> = at
        .iter()
        .take(PLACES_LISTED)
        .map(usize::to_string)
        .collect();
    let more = if at.len() > PLACES_LISTED {
        " and more"
    } else {
        ""
    };
    format!("{}{more}", shown.join(", "))
}

/// One line of a file: its text and the line break after it (`""` for a last line without).
struct Line<'a> {
    text: &'a str,
    end: &'a str,
}

fn split_lines(text: &str) -> Vec<Line<'_>> {
    text.split_inclusive('\n')
        .map(|l| {
            let end = if l.ends_with("\r\n") {
                "\r\n"
            } else if l.ends_with('\n') {
                "\n"
            } else {
                ""
            };
            Line {
                text: &l[..l.len() - end.len()],
                end,
            }
        })
        .collect()
}

/// `text` with every change made, or why not. A change names the one place in the file whose
/// lines equal its lines; failing that, the one place where they are equal once spaces at both
/// ends of each are set aside (a model often drops a line's indentation). Lines put in place
/// take the line break of the last line they replace (the file's first line break when that
/// one had none), so a CRLF file stays CRLF and a file without a final line break keeps none.
pub fn apply_changes(text: &str, changes: &[LineChange]) -> Result<String, LinesError> {
    // The file's byte order mark is kept; one in a change (copied from a read, which shows it)
    // is no part of a line, and a second one would start the first line.
    let without_bom = |l: &String| l.replace(BOM, "");
    let changes: Vec<LineChange> = changes
        .iter()
        .map(|c| LineChange {
            lines: c.lines.iter().map(without_bom).collect(),
            new_lines: c.new_lines.iter().map(without_bom).collect(),
        })
        .collect();
    let (bom, body) = match text.strip_prefix(BOM) {
        Some(rest) => (BOM.to_string(), rest),
        None => (String::new(), text),
    };
    let lines = split_lines(body);
    let file_break = lines
        .iter()
        .map(|l| l.end)
        .find(|e| !e.is_empty())
        .unwrap_or("\n");
    let index = LineIndex::new(&lines);
    // For each line of the file, the change that replaces it, if any.
    let mut owner: Vec<Option<usize>> = vec![None; lines.len()];
    let mut starts: Vec<(usize, usize)> = Vec::with_capacity(changes.len());
    for (i, change) in changes.iter().enumerate() {
        let at = locate(&lines, &index, &change.lines).map_err(|found| match found {
            Found::None => LinesError::NotFound {
                change: i + 1,
                line: quote(&change.lines.join("\n")),
                closest: closest(&index, &change.lines[0]),
                hint: numbered(&lines, &change.lines),
            },
            Found::Many(at) => LinesError::Ambiguous {
                change: i + 1,
                line: quote(&change.lines.join("\n")),
                at,
            },
        })?;
        for (k, slot) in owner
            .iter_mut()
            .enumerate()
            .skip(at)
            .take(change.lines.len())
        {
            if let Some(first) = *slot {
                return Err(LinesError::SameLine {
                    first: first + 1,
                    second: i + 1,
                    number: k + 1,
                });
            }
            *slot = Some(i);
        }
        starts.push((at, i));
    }
    starts.sort_unstable();
    let mut out = bom;
    out.reserve(body.len());
    let mut next = 0;
    for (at, c) in starts {
        for line in &lines[next..at] {
            out.push_str(line.text);
            out.push_str(line.end);
        }
        let named = changes[c].lines.len();
        let end = lines[at + named - 1].end;
        let new_lines = &changes[c].new_lines;
        for (k, new) in new_lines.iter().enumerate() {
            out.push_str(new);
            out.push_str(if k + 1 == new_lines.len() || !end.is_empty() {
                end
            } else {
                file_break
            });
        }
        next = at + named;
    }
    for line in &lines[next..] {
        out.push_str(line.text);
        out.push_str(line.end);
    }
    // The last line deleted: the line before it is last now, and a file that ended without a
    // line break still does.
    let last_deleted = owner
        .last()
        .copied()
        .flatten()
        .is_some_and(|c| changes[c].new_lines.is_empty());
    if last_deleted && lines.last().is_some_and(|l| l.end.is_empty()) {
        if let Some(kept) = out.strip_suffix('\n') {
            let kept = kept.strip_suffix('\r').unwrap_or(kept);
            out.truncate(kept.len());
        }
    }
    Ok(out)
}

enum Found {
    None,
    Many(Vec<usize>),
}

/// Most places of a line named more than once that are looked for: enough to list them in a
/// refusal, and it ends the search early in a file of one line repeated.
const PLACES_LISTED: usize = 10;

/// The file's lines by their text, exactly and with spaces at both ends set aside: where a
/// named line may be, found without reading the file again for each change.
struct LineIndex<'a> {
    exact: HashMap<&'a str, Vec<usize>>,
    /// Made the first time a named line is not found exactly.
    loose: std::cell::OnceCell<HashMap<&'a str, Vec<usize>>>,
}

impl<'a> LineIndex<'a> {
    fn new(lines: &[Line<'a>]) -> LineIndex<'a> {
        let mut exact: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, l) in lines.iter().enumerate() {
            exact.entry(l.text).or_default().push(i);
        }
        LineIndex {
            exact,
            loose: std::cell::OnceCell::new(),
        }
    }

    fn loose(&self) -> &HashMap<&'a str, Vec<usize>> {
        self.loose.get_or_init(|| {
            let mut loose: HashMap<&str, Vec<usize>> = HashMap::new();
            for (text, at) in &self.exact {
                loose.entry(text.trim()).or_default().extend(at);
            }
            for at in loose.values_mut() {
                at.sort_unstable();
            }
            loose
        })
    }
}

/// The index of the first line of the one place `wanted` names (see [`apply_changes`]).
fn locate(lines: &[Line<'_>], index: &LineIndex<'_>, wanted: &[String]) -> Result<usize, Found> {
    let exact = places(lines, &index.exact, wanted, |w| w, |l| l);
    match exact.as_slice() {
        [one] => return Ok(*one),
        [] => {}
        _ => return Err(Found::Many(one_based(exact))),
    }
    if wanted.iter().all(|w| w.trim().is_empty()) {
        return Err(Found::None);
    }
    let loose = places(lines, index.loose(), wanted, str::trim, str::trim);
    match loose.as_slice() {
        [one] => Ok(*one),
        [] => Err(Found::None),
        _ => Err(Found::Many(one_based(loose))),
    }
}

/// The first lines of the places where `wanted` stands (each line compared as `key` makes it),
/// up to one more than [`PLACES_LISTED`]. The search starts from the named line the file holds
/// least often, so a run of common lines around a rare one costs one look per place of the
/// rare one.
fn places(
    lines: &[Line<'_>],
    by_key: &HashMap<&str, Vec<usize>>,
    wanted: &[String],
    want_key: impl Fn(&str) -> &str,
    line_key: impl Fn(&str) -> &str,
) -> Vec<usize> {
    let mut rarest: Option<(usize, &Vec<usize>)> = None;
    for (j, w) in wanted.iter().enumerate() {
        let Some(at) = by_key.get(want_key(w)) else {
            return Vec::new();
        };
        if rarest.is_none_or(|(_, r)| at.len() < r.len()) {
            rarest = Some((j, at));
        }
    }
    let Some((j, at)) = rarest else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for &p in at {
        let Some(start) = p.checked_sub(j) else {
            continue;
        };
        let fits = start + wanted.len() <= lines.len()
            && wanted
                .iter()
                .zip(&lines[start..])
                .all(|(w, l)| line_key(l.text) == want_key(w));
        if fits {
            found.push(start);
            if found.len() > PLACES_LISTED {
                break;
            }
        }
    }
    found
}

fn one_based(at: Vec<usize>) -> Vec<usize> {
    at.into_iter().map(|i| i + 1).collect()
}

/// The lines most like `wanted`, as ` (the closest: line 3 `...`)`, or nothing when no line
/// shares half of its character pairs. Each distinct line is scored once, at its first place.
fn closest(index: &LineIndex<'_>, wanted: &str) -> String {
    let want = pairs(wanted);
    let mut scored: Vec<(f32, usize, &str)> = index
        .exact
        .iter()
        .filter(|(text, _)| !text.trim().is_empty())
        .map(|(text, at)| (dice(&pairs(text), &want), at[0], *text))
        .filter(|(s, _, _)| *s >= 0.5)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let shown: Vec<String> = scored
        .iter()
        .take(CLOSEST_SHOWN)
        .map(|(_, i, text)| format!("line {} `{}`", i + 1, quote(text)))
        .collect();
    if shown.is_empty() {
        String::new()
    } else {
        format!(" (the closest: {})", shown.join(", "))
    }
}

/// When a change names a line by its number (`"3"`, as a small model does), what line 3 of the
/// file is: ` (line 3 is `...`)`; else nothing.
fn numbered(lines: &[Line<'_>], named: &[String]) -> String {
    let [one] = named else {
        return String::new();
    };
    let Ok(n) = one.trim().parse::<usize>() else {
        return String::new();
    };
    match n.checked_sub(1).and_then(|i| lines.get(i)) {
        Some(l) => format!(" (line {n} is `{}`)", quote(l.text)),
        None => format!(" (the file has {} lines)", lines.len()),
    }
}

/// The pairs of neighbouring characters of a line's first [`QUOTE_MAX_CHARS`] characters, spaces
/// set aside, sorted: time linear in the line, so a refusal costs one pass over the file.
fn pairs(line: &str) -> Vec<(char, char)> {
    let chars: Vec<char> = line
        .chars()
        .filter(|c| !c.is_whitespace())
        .take(QUOTE_MAX_CHARS)
        .collect();
    let mut p: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
    p.sort_unstable();
    p
}

/// Sørensen–Dice coefficient of two sorted multisets of pairs, 0 to 1.
fn dice(a: &[(char, char)], b: &[(char, char)]) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut shared) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (2 * shared) as f32 / (a.len() + b.len()) as f32
}

/// A line as a refusal quotes it: control characters escaped, cut past [`QUOTE_MAX_CHARS`]
/// with the count of what was left out.
fn quote(line: &str) -> String {
    let count = line.chars().count();
    let shown = crate::printable(line, QUOTE_MAX_CHARS);
    if count > QUOTE_MAX_CHARS {
        format!(
            "{shown} ({} more characters)",
            thousands(count - QUOTE_MAX_CHARS)
        )
    } else {
        shown
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn change(line: &str, new_lines: &[&str]) -> LineChange {
        LineChange {
            lines: given_lines(line),
            new_lines: new_lines.iter().map(|s| s.to_string()).collect(),
        }
    }

    const CRONTAB: &str =
        "0 2 * * *    /opt/backup-db.sh\n0 3 * * 1    /opt/reindex.sh\n*/10 * * * * /opt/sync.sh\n";

    #[test]
    fn changes_only_the_named_lines() {
        let out = apply_changes(
            CRONTAB,
            &[
                change(
                    "0 3 * * 1    /opt/reindex.sh",
                    &["0 4 * * 0    /opt/reindex.sh"],
                ),
                change(
                    "*/10 * * * * /opt/sync.sh",
                    &["# */10 * * * * /opt/sync.sh"],
                ),
            ],
        )
        .unwrap();
        assert_eq!(
            out,
            "0 2 * * *    /opt/backup-db.sh\n0 4 * * 0    /opt/reindex.sh\n# */10 * * * * /opt/sync.sh\n"
        );
    }

    #[test]
    fn adds_after_and_deletes() {
        let text = "a\nb\nc";
        let out = apply_changes(text, &[change("a", &["a", "a2"]), change("b", &[])]).unwrap();
        assert_eq!(out, "a\na2\nc", "no final line break added");
        let out = apply_changes(text, &[change("c", &["c", "d"])]).unwrap();
        assert_eq!(
            out, "a\nb\nc\nd",
            "the last line keeps having no line break"
        );
    }

    #[test]
    fn keeps_crlf_and_a_byte_order_mark() {
        let text = "\u{feff}KEY=1\r\nOTHER=2\r\n";
        let out = apply_changes(text, &[change("KEY=1", &["KEY=1", "NEW=3"])]).unwrap();
        assert_eq!(out, "\u{feff}KEY=1\r\nNEW=3\r\nOTHER=2\r\n");
    }

    #[test]
    fn a_line_without_its_indentation_is_found_when_it_is_the_only_one() {
        let text = "fn f() {\n    1\n}\n";
        let out = apply_changes(text, &[change("1", &["    2"])]).unwrap();
        assert_eq!(out, "fn f() {\n    2\n}\n");
        let twice = "  x\n    x\n";
        let e = apply_changes(twice, &[change("x", &["y"])]).unwrap_err();
        assert!(e.to_string().contains("lines 1, 2"), "{e}");
    }

    #[test]
    fn refuses_what_it_cannot_place() {
        let e = apply_changes(CRONTAB, &[change("0 3 * * 1 /opt/reindex.sh", &["x"])]).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("no line is"), "{msg}");
        assert!(
            msg.contains("line 2 `0 3 * * 1    /opt/reindex.sh`"),
            "the closest line is shown: {msg}"
        );
        let e = apply_changes("a\n\nb\n\n", &[change(" ", &["x"])]).unwrap_err();
        assert!(matches!(e, LinesError::NotFound { .. }), "{e}");
        let e = apply_changes("a\nb\n", &[change("a", &["x"]), change("a", &["y"])]).unwrap_err();
        assert!(matches!(e, LinesError::SameLine { number: 1, .. }), "{e}");
    }

    #[test]
    fn a_repeated_line_is_named_with_its_neighbour() {
        let text = "[a]\nport = 1\n[b]\nport = 1\n";
        let e = apply_changes(text, &[change("port = 1", &["port = 2"])]).unwrap_err();
        assert!(matches!(e, LinesError::Ambiguous { .. }), "{e}");
        let out = apply_changes(text, &[change("[b]\nport = 1", &["[b]", "port = 2"])]).unwrap();
        assert_eq!(out, "[a]\nport = 1\n[b]\nport = 2\n");
        let e = apply_changes(
            text,
            &[
                change("[b]\nport = 1", &["x"]),
                change("port = 1\n[b]", &["y"]),
            ],
        )
        .unwrap_err();
        assert!(matches!(e, LinesError::SameLine { number: 3, .. }), "{e}");
    }

    #[test]
    fn tool_proposes_and_writes_nothing() {
        use crate::tool::ToolContext;
        use crate::Workspace;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c.txt"), CRONTAB).unwrap();
        std::fs::write(dir.path().join("b.bin"), b"a\0b\n").unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let reg = crate::desk_registry();
        let call = |args: Value| reg.call(&mut ToolContext::Desk(&ws), "edit_lines", &args);
        let args = json!({"path": "c.txt", "changes": [
            {"line": "*/10 * * * * /opt/sync.sh\n", "new_line": "# */10 * * * * /opt/sync.sh"}
        ]});
        let ToolOutput::Proposal(p) = call(args).unwrap() else {
            panic!("not a proposal")
        };
        assert_eq!(p.before.as_deref(), Some(CRONTAB.as_bytes()));
        assert_eq!(
            p.after.as_deref(),
            Some(CRONTAB.replace("*/10", "# */10").as_bytes())
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("c.txt")).unwrap(),
            CRONTAB
        );
        let same = json!({"path": "c.txt", "changes": [
            {"line": "*/10 * * * * /opt/sync.sh", "new_line": "*/10 * * * * /opt/sync.sh"}
        ]});
        assert!(call(same).unwrap_err().to_string().contains("identical"));
        let bin = json!({"path": "b.bin", "changes": [{"line": "a", "new_line": ""}]});
        assert!(call(bin).unwrap_err().to_string().contains("binary"));
        let missing = json!({"path": "none.txt", "changes": [{"line": "a", "new_line": ""}]});
        assert!(call(missing).is_err());
        let none = json!({"path": "c.txt", "changes": []});
        assert!(call(none).is_err(), "at least one change");
        let long: Vec<String> = (0..=EDIT_LINES_MAX_NAMED).map(|i| i.to_string()).collect();
        let many = json!({"path": "c.txt", "changes": [{"line": long.join("\n"), "new_line": ""}]});
        let e = call(many).unwrap_err().to_string();
        assert!(e.contains("at most 20 consecutive lines"), "{e}");
    }

    #[test]
    fn a_new_text_that_repeats_one_line_is_refused() {
        let looped = json!({"line": "a", "new_line": "a\nb\nb\nb"});
        let e = changes_arg(&json!({"changes": [looped]})).unwrap_err();
        assert!(e.contains("gives the line `b` 3 times"), "{e}");
        // Blank and bracket lines repeat in real files; so does a line the named lines repeat.
        let code = json!({"line": "x", "new_line": "}\n}\n}\n\n\n"});
        assert!(changes_arg(&json!({"changes": [code]})).is_ok());
        let kept = json!({"line": "c\nc\nc", "new_line": "c\nc\nc\nd"});
        assert!(changes_arg(&json!({"changes": [kept]})).is_ok());
        // An empty new text deletes the line.
        let gone = json!({"line": "a", "new_line": ""});
        assert_eq!(
            changes_arg(&json!({"changes": [gone]})).unwrap()[0]
                .new_lines
                .len(),
            0
        );
    }

    #[test]
    fn a_line_named_by_its_number_is_told_what_that_line_is() {
        let e = apply_changes(CRONTAB, &[change("2", &["x"])])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("(line 2 is `0 3 * * 1    /opt/reindex.sh`)"),
            "{e}"
        );
        assert!(
            e.contains("to add a line, name the line it goes after"),
            "{e}"
        );
        let e = apply_changes(CRONTAB, &[change("9", &["x"])])
            .unwrap_err()
            .to_string();
        assert!(e.contains("(the file has 3 lines)"), "{e}");
    }
}
