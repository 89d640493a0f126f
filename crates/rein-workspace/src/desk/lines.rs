//! `edit_lines`: changes whole lines of an existing text file, every change in one call. Each
//! change names one current line by its text and gives the lines to put in its place; every
//! other byte of the file stays as it was (line endings and a byte order mark included), so a
//! small model cannot drop or reflow a line it did not mean to touch, as it does when it writes
//! the whole file again, and it cannot stop after the first of several `edit_file` calls.

use serde_json::{json, Value};

use super::propose::{existing, unchanged};
use super::{object_schema, path_arg, path_schema, text_of, thousands, workspace};
use crate::tool::{Proposal, Tool, ToolContext, ToolError, ToolOutput};
use crate::MAX_INPUT_CHARS;

/// Most changes one call may make: the desk suite's edit tasks make two to seven.
pub const EDIT_LINES_MAX_CHANGES: usize = 20;
/// Most lines one change may put in place of the lines it names: a change adds a line or a
/// few. The bound is in the schema, so constrained decoding closes the list there: the 1.5B
/// repeated one new line until its reply was cut at 384 tokens.
pub const EDIT_LINES_MAX_NEW_LINES: usize = 12;
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
        "Propose changing whole lines of an existing text file, every change in one call. Each change names one current line exactly as read_file shows it (`line`) and the lines that take its place (`new_lines`): the changed line; the old line then a new one to add a line after it; none to delete it. Every other line stays exactly as it is. A person approves the change."
    }
    fn schema(&self) -> Value {
        let line = json!({ "type": "string", "maxLength": MAX_INPUT_CHARS });
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
                            "new_lines": { "type": "array", "maxItems": EDIT_LINES_MAX_NEW_LINES, "items": line, "description": "the lines that take its place, in order" },
                        }),
                        &["line", "new_lines"],
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
        let chars = after.chars().count();
        if chars > MAX_INPUT_CHARS {
            return Err(ToolError::Refused(format!(
                "\"{path}\" would be {} characters after these changes; a file written by a tool may be at most {} characters, so nothing was changed",
                thousands(chars),
                thousands(MAX_INPUT_CHARS)
            )));
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

/// `text` split at its line breaks, each line without its `\r`; one final line break ends the
/// last line rather than starting an empty one (`"a\n"` is the line `a`, as a model may copy
/// it from a read).
fn given_lines(text: &str) -> Vec<String> {
    let text = text.strip_suffix('\n').unwrap_or(text);
    text.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
        .collect()
}

/// The `changes` argument (already validated against the schema by the registry). A new line
/// holding line breaks is several lines.
fn changes_arg(a: &Value) -> Result<Vec<LineChange>, String> {
    let items = a
        .get("changes")
        .and_then(Value::as_array)
        .ok_or("`changes` is required: a list of {line, new_lines}")?;
    if items.is_empty() {
        return Err("`changes` is empty; give at least one {line, new_lines}".to_string());
    }
    items
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let line = c.get("line").and_then(Value::as_str);
            let new_lines = c.get("new_lines").and_then(Value::as_array);
            let (Some(line), Some(new_lines)) = (line, new_lines) else {
                return Err(format!(
                    "change {} needs a string `line` and a list of strings `new_lines`",
                    i + 1
                ));
            };
            let new_lines: Option<Vec<&str>> = new_lines.iter().map(Value::as_str).collect();
            let Some(new_lines) = new_lines else {
                return Err(format!(
                    "change {}: every item of `new_lines` must be a string",
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
            Ok(LineChange {
                lines,
                new_lines: new_lines
                    .iter()
                    .flat_map(|l| l.split('\n'))
                    .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
                    .collect(),
            })
        })
        .collect()
}

/// Why changes cannot be made (the caller adds the file's name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinesError {
    #[error("change {change}: no line is `{line}`{closest}; copy one whole line exactly as read_file shows it")]
    NotFound {
        change: usize,
        line: String,
        closest: String,
    },
    #[error("change {change}: `{line}` is at lines {}; name one place: give in `line` the line before or after it as well (consecutive lines, one per line), and put both in `new_lines`", numbers(.at))]
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
    let shown: Vec<String> = at.iter().take(10).map(usize::to_string).collect();
    let more = at.len().saturating_sub(10);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("{}{tail}", shown.join(", "))
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
    // For each line of the file, the change that replaces it, if any.
    let mut owner: Vec<Option<usize>> = vec![None; lines.len()];
    let mut starts: Vec<(usize, usize)> = Vec::with_capacity(changes.len());
    for (i, change) in changes.iter().enumerate() {
        let at = locate(&lines, &change.lines).map_err(|found| match found {
            Found::None => LinesError::NotFound {
                change: i + 1,
                line: quote(&change.lines.join("\n")),
                closest: closest(&lines, &change.lines[0]),
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
    Ok(out)
}

enum Found {
    None,
    Many(Vec<usize>),
}

/// The index of the first line of the one place `wanted` names (see [`apply_changes`]).
fn locate(lines: &[Line<'_>], wanted: &[String]) -> Result<usize, Found> {
    let places = |same: &dyn Fn(&str, &str) -> bool| -> Vec<usize> {
        if wanted.is_empty() || wanted.len() > lines.len() {
            return Vec::new();
        }
        (0..=lines.len() - wanted.len())
            .filter(|&i| wanted.iter().zip(&lines[i..]).all(|(w, l)| same(l.text, w)))
            .collect()
    };
    let exact = places(&|l, w| l == w);
    match exact.as_slice() {
        [one] => return Ok(*one),
        [] => {}
        _ => return Err(Found::Many(one_based(exact))),
    }
    if wanted.iter().all(|w| w.trim().is_empty()) {
        return Err(Found::None);
    }
    let loose = places(&|l, w| l.trim() == w.trim());
    match loose.as_slice() {
        [one] => Ok(*one),
        [] => Err(Found::None),
        _ => Err(Found::Many(one_based(loose))),
    }
}

fn one_based(at: Vec<usize>) -> Vec<usize> {
    at.into_iter().map(|i| i + 1).collect()
}

/// The lines most like `wanted`, as ` (the closest: line 3 `...`)`, or nothing when no line
/// shares half of its character pairs.
fn closest(lines: &[Line<'_>], wanted: &str) -> String {
    let want = pairs(wanted);
    let mut scored: Vec<(f32, usize)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.text.trim().is_empty())
        .map(|(i, l)| (dice(&pairs(l.text), &want), i))
        .filter(|(s, _)| *s >= 0.5)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let shown: Vec<String> = scored
        .iter()
        .take(CLOSEST_SHOWN)
        .map(|(_, i)| format!("line {} `{}`", i + 1, quote(lines[*i].text)))
        .collect();
    if shown.is_empty() {
        String::new()
    } else {
        format!(" (the closest: {})", shown.join(", "))
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
            {"line": "*/10 * * * * /opt/sync.sh\n", "new_lines": ["# */10 * * * * /opt/sync.sh"]}
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
            {"line": "*/10 * * * * /opt/sync.sh", "new_lines": ["*/10 * * * * /opt/sync.sh"]}
        ]});
        assert!(call(same).unwrap_err().to_string().contains("identical"));
        let bin = json!({"path": "b.bin", "changes": [{"line": "a", "new_lines": []}]});
        assert!(call(bin).unwrap_err().to_string().contains("binary"));
        let missing = json!({"path": "none.txt", "changes": [{"line": "a", "new_lines": []}]});
        assert!(call(missing).is_err());
        let none = json!({"path": "c.txt", "changes": []});
        assert!(call(none).is_err(), "at least one change");
        let long: Vec<String> = (0..=EDIT_LINES_MAX_NAMED).map(|i| i.to_string()).collect();
        let many =
            json!({"path": "c.txt", "changes": [{"line": long.join("\n"), "new_lines": []}]});
        let e = call(many).unwrap_err().to_string();
        assert!(e.contains("at most 20 consecutive lines"), "{e}");
    }
}
