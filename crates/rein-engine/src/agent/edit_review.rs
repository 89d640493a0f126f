//! The `review-edits` lever: the first finish of an attempt on a file edited in place is held
//! once, and the model is shown its own changes so far against the task; the next finish of
//! the attempt is judged.
//!
//! No check the model may be told says when the last of several in-place edits is done (the
//! whole-file comparison is an oracle), and the 1.5B called `finish` after the first of its two
//! to ten edits on six of the eight desk edit tasks. The review shows only what the run itself
//! did (a diff of the file as the run found it against the file now) and the task's own words:
//! nothing of the expected file.

use rein_workspace::{unified_diff, RelPath};

/// The longest diff a review shows; past it the diff is cut at a line and says so.
pub const REVIEW_DIFF_MAX_CHARS: usize = 4000;
/// The longest line of a review's diff; past it the line is cut and says so.
pub const REVIEW_LINE_MAX_CHARS: usize = 1000;

/// The refusal a held finish gets: the diff of `path` from `before` (the file as the run began)
/// to `after` (the file now), the task's prompt, and what to do next.
/// `fixer` names the call that makes a missing change (`edit_file`, or with `whole-rewrite`
/// `replace_file` and the whole file).
pub fn review_reason(path: &str, before: &[u8], after: &[u8], task: &str, fixer: &str) -> String {
    let diff = match RelPath::parse(path) {
        Ok(rel) => unified_diff(&rel, Some(before), Some(after)),
        // The deliverable's path was checked when the contract froze; a path the workspace
        // refuses is still reviewed, as a note without a diff.
        Err(e) => format!("(no diff: {e})\n"),
    };
    let diff = shorten_long_lines(&diff, REVIEW_LINE_MAX_CHARS);
    let diff = clip_at_line(&diff, REVIEW_DIFF_MAX_CHARS);
    format!(
        "finish held once for a review: `{path}` was in the workspace before this run and is \
         edited in place, so no check can tell whether your last edit was the last one the task \
         asks for. Your changes to it so far (the file as the run found it, then as it is now):\n\
         {diff}The task: {task}\n\
         If this diff holds every change the task asks for, call finish again now: the file is \
         judged as it is. Only if the task asks for a change the diff lacks (another line, \
         another value, every row of a column), make that change with {fixer} first; change \
         nothing the task does not ask for."
    )
}

/// Characters shown before the first change in a shortened line.
const LEAD_CHARS: usize = 100;

/// `diff` with each line over `max` characters cut to `max`, saying how many it left out. A
/// changed line is cut around its first difference from its counterpart (the removed and the
/// added line at the same place of one change), so a change inside a long line (minified JSON,
/// a long value) still shows; a line with no counterpart keeps its start.
fn shorten_long_lines(diff: &str, max: usize) -> String {
    let lines: Vec<&str> = diff.split_inclusive('\n').collect();
    let body = |l: &str| l.strip_suffix('\n').unwrap_or(l).to_string();
    let in_hunks = lines
        .iter()
        .position(|l| l.starts_with("@@"))
        .unwrap_or(lines.len());
    let mut out: String = lines[..in_hunks].concat();
    let mut i = in_hunks;
    // `\ No newline at end of file` can stand between a removed line and its added one.
    let marked = |l: &str, mark: char| l.starts_with(mark) || l.starts_with('\\');
    while i < lines.len() {
        let from = i;
        while i < lines.len() && marked(lines[i], '-') {
            i += 1;
        }
        while i < lines.len() && marked(lines[i], '+') {
            i += 1;
        }
        if from == i {
            out.push_str(&shorten(&body(lines[i]), None, max));
            i += 1;
            continue;
        }
        let block = &lines[from..i];
        let side = |mark: char| -> Vec<&str> {
            block
                .iter()
                .copied()
                .filter(|l| l.starts_with(mark))
                .collect()
        };
        let (removed, added) = (side('-'), side('+'));
        let (mut r, mut a) = (0, 0);
        for l in block {
            let counterpart = if l.starts_with('-') {
                r += 1;
                added.get(r - 1)
            } else if l.starts_with('+') {
                a += 1;
                removed.get(a - 1)
            } else {
                None
            };
            out.push_str(&shorten(&body(l), counterpart.map(|o| body(o)), max));
        }
    }
    out
}

/// One diff line (its `-`, `+` or blank mark first, no line end) kept to `max` characters,
/// from a little before where it first differs from `counterpart`, with a line end.
fn shorten(line: &str, counterpart: Option<String>, max: usize) -> String {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= max {
        return format!("{line}\n");
    }
    let differs_at = counterpart.map_or(0, |other| {
        // Past the marks, which always differ.
        chars
            .iter()
            .skip(1)
            .zip(other.chars().skip(1))
            .take_while(|(a, b)| *a == b)
            .count()
            + 1
    });
    let start = differs_at
        .saturating_sub(LEAD_CHARS)
        .max(1)
        .min(chars.len() - max + 1);
    let end = (start + max - 1).min(chars.len());
    let kept: String = chars[start..end].iter().collect();
    let before = if start > 1 {
        format!("[... {} characters] ", start - 1)
    } else {
        String::new()
    };
    format!(
        "{}{before}{kept} [... {} more characters on this line]\n",
        chars[0],
        chars.len() - end
    )
}

/// `text` cut at the last line end within `max` characters, with a note of what was left out.
fn clip_at_line(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    let kept = cut.rfind('\n').map_or(0, |i| i + 1);
    let left = text.chars().count() - cut[..kept].chars().count();
    format!(
        "{}(diff cut here: {left} more characters not shown; read the file to see all of it)\n",
        &cut[..kept]
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_review_shows_the_run_s_own_changes_and_the_task() {
        let before = b"id,email\n1,Ada@X.org \n2,MIA@X.ORG\n";
        let after = b"id,email\n1,ada@x.org\n2,MIA@X.ORG\n";
        let r = review_reason(
            "data/m.csv",
            before,
            after,
            "lower every e-mail",
            "edit_file",
        );
        assert!(r.contains("-1,Ada@X.org \n+1,ada@x.org\n"), "{r}");
        assert!(r.contains(" 2,MIA@X.ORG"), "{r}");
        assert!(r.contains("The task: lower every e-mail\n"), "{r}");
        assert!(r.contains("call finish again"), "{r}");
    }

    #[test]
    fn a_long_diff_is_cut_at_a_line_and_says_so() {
        let before: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let after = before.replace("line ", "LINE ");
        let r = review_reason(
            "a.txt",
            before.as_bytes(),
            after.as_bytes(),
            "t",
            "edit_file",
        );
        let diff_part = r.split("The task:").next().unwrap();
        assert!(diff_part.contains("(diff cut here: "), "{diff_part}");
        assert!(diff_part.chars().count() < REVIEW_DIFF_MAX_CHARS + 600);
        let last_diff_line = diff_part.lines().rev().nth(1).unwrap();
        assert!(
            last_diff_line.starts_with('+') || last_diff_line.starts_with('-'),
            "{last_diff_line}"
        );
    }
}
