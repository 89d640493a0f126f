//! Checks of an edit done in place: the edited file as a whole, and that nothing else changed.
//!
//! An edit task is judged on the whole file (a right value in a mangled file is a wrong edit)
//! and on the rest of the workspace: an edit that also rewrote a neighbour, left a scratch copy
//! behind or deleted a fixture did more than it was asked.

use std::collections::BTreeSet;

use super::paths::same_path;
use super::spec::{FinalNewline, LineEndings};
use super::text::preview;
use super::{Ctx, Judged};
use crate::mission::sha256_hex;

/// `bytes` with CRLF and lone CR read as LF: the same text saved on another system.
fn lf_endings(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\r' => {
                out.push(b'\n');
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    out
}

/// The text `file_equals` compares: line endings as the check asks, one final newline dropped
/// (whether it must be there is judged apart, so the difference can be named).
fn compared(bytes: &[u8], line_endings: LineEndings) -> Vec<u8> {
    let mut out = match line_endings {
        LineEndings::Any => lf_endings(bytes),
        LineEndings::Exact => bytes.to_vec(),
    };
    if out.last() == Some(&b'\n') {
        out.pop();
    }
    out
}

/// The whole file equals the expected file. A failure says on which line they first differ,
/// never what the expected line is (in an edit task that is the answer).
pub(crate) fn file_equals(
    cx: &Ctx<'_>,
    path: &str,
    expected_file: &str,
    line_endings: LineEndings,
    final_newline: FinalNewline,
) -> Judged {
    let mut j = Judged::default();
    let Some(expected) = cx.contract.expected_files.get(expected_file) else {
        j.say(format!(
            "{expected_file}: the expected file was not frozen with the contract"
        ));
        return j;
    };
    let actual = match cx.read_required(path) {
        Ok(b) => b,
        Err(fact) => {
            j.say(fact);
            return j;
        }
    };
    if final_newline == FinalNewline::Required
        && !actual.is_empty()
        && actual.last() != Some(&b'\n')
    {
        j.say(format!(
            "{path}: the last line does not end in a newline, and this file needs one"
        ));
        return j;
    }
    let (a, e) = (
        compared(&actual, line_endings),
        compared(expected, line_endings),
    );
    if a == e {
        j.passed = true;
        j.say(format!(
            "{path}: the whole file is as expected ({} lines)",
            a.split(|b| *b == b'\n').count()
        ));
        return j;
    }
    if line_endings == LineEndings::Exact
        && compared(&actual, LineEndings::Any) == compared(expected, LineEndings::Any)
    {
        j.say(format!(
            "{path}: the text is right but its line endings are not: this file must keep the \
             line endings it had (no CR where there was none)"
        ));
        return j;
    }
    let a_lines: Vec<&[u8]> = a.split(|b| *b == b'\n').collect();
    let e_lines: Vec<&[u8]> = e.split(|b| *b == b'\n').collect();
    let at = a_lines
        .iter()
        .zip(&e_lines)
        .position(|(x, y)| x != y)
        .unwrap_or(a_lines.len().min(e_lines.len()));
    let line = |lines: &[&[u8]]| {
        lines.get(at).map_or_else(
            || "(end of file)".to_string(),
            |l| format!("`{}`", preview(&String::from_utf8_lossy(l))),
        )
    };
    j.say(format!(
        "{path}: the file is not the expected result; it first differs at line {} ({} there)",
        at + 1,
        line(&a_lines)
    ));
    j.withhold(format!(
        "{path}: line {} should be {} ({} lines expected, {} found; expected file {expected_file})",
        at + 1,
        line(&e_lines),
        e_lines.len(),
        a_lines.len()
    ));
    j
}

/// Nothing but the deliverable, the editable files and `allow` was created, changed or deleted:
/// the workspace now against the starting state (the inputs and editable files as the contract
/// froze them), and the trace for changes that were put back.
pub(crate) fn nothing_else_changed(
    cx: &Ctx<'_>,
    allow: &[String],
    allow_deleted: &[String],
) -> (bool, Vec<String>) {
    let m = &cx.contract.mission;
    let allowed: BTreeSet<&str> = std::iter::once(m.required_artifact.as_str())
        .chain(m.editable.iter().map(String::as_str))
        .chain(allow.iter().map(String::as_str))
        .collect();
    let files = match cx.world.files() {
        Ok(Some(f)) => f,
        Ok(None) => {
            return (
                false,
                vec!["this workspace cannot be listed, so what changed cannot be told".into()],
            )
        }
        Err(e) => return (false, vec![format!("cannot list the workspace: {e}")]),
    };
    let mut facts = Vec::new();
    let start: BTreeSet<&str> = cx
        .contract
        .inputs
        .iter()
        .chain(&cx.contract.editable)
        .map(|h| h.path.as_str())
        .collect();
    for f in &files {
        if !start.contains(f.as_str()) && !allowed.contains(f.as_str()) {
            facts.push(format!("{f}: created, and it is not a file the task names"));
        }
    }
    for h in &cx.contract.inputs {
        if allowed.contains(h.path.as_str()) {
            continue;
        }
        let may_delete = allow_deleted.contains(&h.path);
        match cx.world.read(&h.path) {
            Ok(Some(b)) if sha256_hex(&b) == h.sha256 => {}
            Ok(Some(_)) => facts.push(format!("{}: changed", h.path)),
            Ok(None) if may_delete => {}
            Ok(None) => facts.push(format!("{}: deleted", h.path)),
            Err(e) => facts.push(format!("{}: {e}", h.path)),
        }
    }
    // Put back is not unchanged: a call that changed another file is a change the task did
    // not ask for, even if a later call undid it. A variable tool's `path` is the variable it named, not a file: setting the variable the
    // task asks for is no change of another file.
    for (i, e) in cx.trace.iter().enumerate() {
        if e.names_variable() {
            continue;
        }
        let Some(p) = e.path.as_deref() else { continue };
        let deleted_as_asked = e.tool == "delete_file"
            && allow_deleted.iter().any(|a| e.targets(a))
            && !files.iter().any(|f| same_path(f, p));
        if e.mutated && e.executed() && !deleted_as_asked && !allowed.iter().any(|a| e.targets(a)) {
            facts.push(format!(
                "{p}: changed by call {} ({}) of this run",
                i + 1,
                e.tool
            ));
        }
    }
    if facts.is_empty() {
        let names: Vec<&str> = allowed.into_iter().collect();
        return (
            true,
            vec![format!(
                "{} files, none created, changed or deleted but {}",
                files.len(),
                names.join(", ")
            )],
        );
    }
    (false, facts)
}
