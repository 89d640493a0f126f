//! Lever `line-edits`: a deliverable edited in place is changed with `edit_lines`, every change
//! in one call, each naming a current line and the lines that take its place; `edit_file` and
//! `replace_file` are not offered. A small model stops after the first of several `edit_file`
//! calls, and drops, reflows or rewrites lines it was told to keep when it writes the whole
//! file; naming lines leaves every other byte as it was. The person approves one exact diff.

use crate::mission::Mission;

/// The tool the lever offers.
pub const EDIT_LINES: &str = "edit_lines";

/// Whether a run of `mission` offering `tools` edits its deliverable by lines: the deliverable is
/// one of the files the task edits in place, it is non-empty text when the run begins
/// (`text_bytes_of` a path: `None` for a file that does not exist or is not UTF-8; an empty file
/// has no line to name), and the mission offers `edit_file` or `replace_file`, which the lever
/// replaces. The file is measured only once the rest holds.
pub fn edits_by_line(
    mission: &Mission,
    tools: &[String],
    text_bytes_of: impl Fn(&str) -> Option<usize>,
) -> bool {
    let offered = |name: &str| tools.iter().any(|t| t == name);
    mission.editable.contains(&mission.required_artifact)
        && (offered("edit_file") || offered("replace_file"))
        && text_bytes_of(&mission.required_artifact).is_some_and(|n| n > 0)
}

/// A tool's advice that names `edit_file` or `replace_file` (as the workspace's tools word it),
/// and what is said instead when `edit_lines` replaces them.
const EDIT_ADVICE: [(&str, &str); 2] = [
    ("use edit_file or replace_file", "use edit_lines"),
    ("use replace_file (the whole file)", "use edit_lines"),
];

/// `reason` with advice to call `edit_file` or `replace_file` turned to `edit_lines`: a small
/// model copies the call a refusal suggests.
pub fn with_line_advice(reason: &str) -> String {
    EDIT_ADVICE
        .iter()
        .fold(reason.to_string(), |r, (from, to)| r.replace(from, to))
}

/// How the next step names the call that fixes the deliverable.
pub const LINE_FIXER: &str = "edit_lines (every change in one call)";

/// What a retry after a failed verdict asks for when the deliverable is edited by lines.
pub const LINE_RETRY_NOTE: &str = "Keep everything that passes. Call edit_lines once with every \
    change that fixes the failed checks: for each, `line` is one whole line of the text above, \
    copied exactly, and `new_line` the text that takes its place (the old line, a line break and \
    a new line to add one after it). Every other line stays as it is. Then read it back and call \
    finish.";

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::agent::whole_rewrite::tests::{mission, tools};

    #[test]
    fn only_a_deliverable_edited_in_place_that_holds_text() {
        let both = tools(&["read_file", "edit_file", "replace_file", "finish"]);
        let m = mission(&["a.toml"], "a.toml");
        assert!(edits_by_line(&m, &both, |_| Some(285)));
        assert!(
            edits_by_line(&m, &both, |_| Some(5_000_000)),
            "no size limit: the call holds only the lines it changes"
        );
        assert!(!edits_by_line(&m, &both, |_| Some(0)), "no line to name");
        assert!(!edits_by_line(&m, &both, |_| None), "missing or not text");
        assert!(edits_by_line(&m, &tools(&["edit_file"]), |_| Some(9)));
        assert!(edits_by_line(&m, &tools(&["replace_file"]), |_| Some(9)));
        let unread = |path: &str| -> Option<usize> { panic!("{path} read") };
        assert!(!edits_by_line(
            &m,
            &tools(&["read_file", "create_file"]),
            unread
        ));
        assert!(!edits_by_line(&mission(&[], "a.toml"), &both, unread));
        assert!(!edits_by_line(
            &mission(&["b.toml"], "a.toml"),
            &both,
            unread
        ));
    }

    #[test]
    fn advice_names_edit_lines() {
        let told = with_line_advice(
            "\"a.toml\" already exists (a file); use edit_file or replace_file to change a file",
        );
        assert!(told.ends_with("use edit_lines to change a file"), "{told}");
        assert!(
            !told.contains("edit_file") && !told.contains("replace_file"),
            "{told}"
        );
    }
}
