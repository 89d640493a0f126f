//! Templates a task spells out in one sentence, its lines in quotes: a heading, perhaps lines
//! before the list, one list item per thing, then the closing lines (explore-config-formats:
//! `then the lines 'TOML files: N', 'YAML files: N' and 'JSON files: N' (counted over services/
//! only) and 'Most config files: <service>'`; related-code-callers: `then the line 'Defined in:
//! <path ...>', then each calling file as '- <path>' ..., then the line 'Callers: N'`). Without
//! a template the 1.5B ran config-formats' reply past the 384-token cap in 11 of its 12 format
//! errors (`fs3-explore/`).

use std::sync::LazyLock;

use regex::Regex;

use super::{names_path, AnswerLines, MAX_TEMPLATE_LINES};

/// The heading in single quotes.
static HEADING: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)\bheading '([^'\n]{1,80})'").ok());

/// A clause that gives lines: "the line" or "the (two) lines", then the lines in quotes.
static LINES_CLAUSE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)^the (?:\w+ )?lines? '").ok());

/// A clause that gives the list: one item per thing, or each thing as `- ...`.
static LIST_CLAUSE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)^(?:one list item per\b|each\b[^']*\bas '- )").ok());

static QUOTED: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"'([^'\n]+)'").ok());

/// A quoted line: a label of words, `: `, then its value (`N`, `<service>`).
static QUOTED_LINE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^([A-Za-z][A-Za-z0-9 ()/_-]{0,40}): (\S[^\n]*)$").ok());

/// The template of the sentence of `prompt` that names `artifact` and a heading in quotes, its
/// clauses joined by ", then ": each gives the list or lines in quotes; `None` when a clause
/// is neither, there is no list or no closing line, or the lines are over
/// [`MAX_TEMPLATE_LINES`]. A bare value (`N`) becomes a placeholder (`<N>`), so the model
/// fills it as any other.
pub(super) fn of_sentence(prompt: &str, artifact: &str) -> Option<AnswerLines> {
    let heading_re = HEADING.as_ref()?;
    let line = prompt
        .lines()
        .find(|l| names_path(l, artifact) && heading_re.is_match(l))?;
    let caps = heading_re.captures(line)?;
    let heading = caps[1].to_string();
    let rest = sentence(&line[caps.get(0)?.end()..]);
    let (mut opening, mut closing, mut list) = (Vec::new(), Vec::new(), false);
    for clause in rest.split(", then ") {
        let clause = clause.trim_start_matches([',', ' ']).trim_end();
        if clause.is_empty() {
            continue;
        }
        if LIST_CLAUSE.as_ref()?.is_match(clause) {
            if list {
                return None;
            }
            list = true;
            continue;
        }
        if !LINES_CLAUSE.as_ref()?.is_match(clause) {
            return None;
        }
        for quoted in QUOTED.as_ref()?.captures_iter(clause) {
            let line = template_line(&quoted[1])?;
            if list {
                closing.push(line);
            } else {
                opening.push(line);
            }
        }
    }
    let fits = list
        && !closing.is_empty()
        && opening.len() + closing.len() <= MAX_TEMPLATE_LINES
        && !heading.contains(['"', '\\']);
    fits.then_some(AnswerLines {
        heading: Some(heading),
        opening,
        list,
        lines: closing,
    })
}

/// The text up to the sentence's end: a full stop followed by a blank, outside quotes.
fn sentence(text: &str) -> &str {
    let mut quoted = false;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '\'' => quoted = !quoted,
            '.' if !quoted && chars.peek().is_none_or(|(_, next)| next.is_whitespace()) => {
                return &text[..at]
            }
            _ => {}
        }
    }
    text
}

/// A quoted line as a template line: its label, `: `, and its value as a placeholder where it
/// has none; `None` for text that is not a label and a value, or holds `"` or `\`.
fn template_line(quoted: &str) -> Option<String> {
    let caps = QUOTED_LINE.as_ref()?.captures(quoted)?;
    let (label, value) = (&caps[1], &caps[2]);
    if value.contains(['"', '\\']) {
        return None;
    }
    Some(if value.contains('<') {
        format!("{label}: {value}")
    } else {
        format!("{label}: <{value}>")
    })
}
