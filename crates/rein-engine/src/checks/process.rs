//! Checks of how the deliverable came to be, read from the run's trace: the inputs were read
//! (by path, in full) before it was written, and this run wrote what is on disk now.

use super::trace::read_whole_at;
use super::{Ctx, Judged};
use crate::mission::sha256_hex;

/// When the contract names the inputs (a subset), which ones they are is the task's answer in a
/// search or "which files relate" task: their names are withheld from the model, which is told
/// only whether every input the task needs was read in full. With no list (every input) the
/// names are the prompt's own and are said.
pub(crate) fn inputs_read(cx: &Ctx<'_>, paths: &[String], before_writing: Option<&str>) -> Judged {
    let chosen = !paths.is_empty();
    let (ok, facts) = inputs_read_facts(cx, paths, before_writing);
    if !chosen {
        return (ok, facts).into();
    }
    let mut j = Judged {
        passed: ok,
        withheld: facts,
        ..Judged::default()
    };
    let before = before_writing
        .map(|a| format!(" before {a} was first written"))
        .unwrap_or_default();
    j.say(if ok {
        format!("every input the task needs was read in full{before}")
    } else {
        format!(
            "not every input the task needs was read in full with read_file{before} (a line range \
             or a cut read is not the whole input); which inputs those are is part of the task"
        )
    });
    j
}

fn inputs_read_facts(
    cx: &Ctx<'_>,
    paths: &[String],
    before_writing: Option<&str>,
) -> (bool, Vec<String>) {
    let paths: Vec<&str> = if paths.is_empty() {
        // An editable file is read before it is edited, like an input before it is used.
        cx.contract
            .inputs
            .iter()
            .chain(&cx.contract.editable)
            .map(|h| h.path.as_str())
            .collect()
    } else {
        paths.iter().map(String::as_str).collect()
    };
    if paths.is_empty() {
        return (false, vec!["no inputs to have read".into()]);
    }
    let first_write = before_writing.and_then(|a| {
        cx.trace
            .iter()
            .position(|e| e.mutated_path(a))
            .map(|i| (a, i))
    });
    let mut ok = true;
    let mut facts = Vec::new();
    for p in paths {
        match read_whole_at(cx.trace, p) {
            None => {
                ok = false;
                facts.push(if cx.trace.iter().any(|e| e.reads(p)) {
                    format!("{p}: read only in part (the lines it was shown do not cover the whole input; read the rest by line range)")
                } else {
                    format!("{p}: never read")
                });
            }
            Some((i, parts)) => match first_write {
                Some((a, w)) if w < i => {
                    ok = false;
                    facts.push(format!(
                        "{p}: first read in full at call {}, after {a} was first written at call {}",
                        i + 1,
                        w + 1
                    ));
                }
                // Rein reads before the model's first call (inputs-first, stats-first), or
                // after it only for the model's own glob (glob-reads) or the files its held
                // write named (cited-reads).
                _ if cx.trace[i].by_rein && cx.trace[..i].iter().all(|e| e.by_rein) => {
                    facts.push(format!(
                        "{p}: read in full at call {} (by Rein before the first step, lever inputs-first or stats-first)",
                        i + 1
                    ))
                }
                _ if cx.trace[i].by_rein => facts.push(format!(
                    "{p}: read in full at call {} (by Rein for the model: its read_file of a glob or a folder, lever glob-reads, or the files its held write named, lever cited-reads)",
                    i + 1
                )),
                _ if parts > 1 => facts.push(format!(
                    "{p}: read in full in {parts} line ranges, the last at call {}",
                    i + 1
                )),
                _ => facts.push(format!("{p}: read in full at call {}", i + 1)),
            },
        }
    }
    (ok, facts)
}

pub(crate) fn written_this_run(cx: &Ctx<'_>, path: &str) -> (bool, Vec<String>) {
    let Some(i) = cx.trace.iter().rposition(|e| e.mutated_path(path)) else {
        return (
            false,
            vec![format!(
                "{path}: no executed call of this run changed it; a file that was already there is not this run's work"
            )],
        );
    };
    let now = match cx.world.read(path) {
        Ok(b) => b.map(|b| sha256_hex(&b)),
        Err(e) => return (false, vec![format!("{path}: {e}")]),
    };
    let wrote = cx.trace[i].written_sha256.as_deref();
    match (wrote, now.as_deref()) {
        (Some(w), Some(n)) if w == n => (
            true,
            vec![format!(
                "{path}: its content on disk is what call {} ({}) of this run wrote",
                i + 1,
                cx.trace[i].tool
            )],
        ),
        (None, None) => (
            true,
            vec![format!("{path}: deleted by call {} of this run", i + 1)],
        ),
        _ => (
            false,
            vec![format!(
                "{path}: the content on disk is not what this run's last change (call {}, {}) left",
                i + 1,
                cx.trace[i].tool
            )],
        ),
    }
}

pub(crate) fn inputs_unchanged(cx: &Ctx<'_>) -> (bool, Vec<String>) {
    if cx.contract.inputs.is_empty() {
        return (false, vec!["the mission has no frozen inputs".into()]);
    }
    let mut ok = true;
    let mut facts = Vec::new();
    for h in &cx.contract.inputs {
        match cx.read_frozen_input(&h.path) {
            Ok(_) => facts.push(format!("{}: as frozen", h.path)),
            Err(fact) => {
                ok = false;
                facts.push(fact);
            }
        }
        // Put back is not unchanged: the run changed an input it was told not to change.
        if let Some(i) = cx.trace.iter().position(|e| e.mutated_path(&h.path)) {
            ok = false;
            facts.push(format!(
                "{}: changed by call {} ({}) of this run",
                h.path,
                i + 1,
                cx.trace[i].tool
            ));
        }
    }
    (ok, facts)
}
