//! Checks of what the run did: tools executed, sandbox variables set.

use std::collections::BTreeMap;

use super::spec::CallSpec;
use super::text::preview;
use super::trace::TraceEntry;
use super::{Ctx, Judged};
use crate::mission::sha256_hex;

/// Only executed (or replayed) calls count: a denied or held call did nothing. A required call
/// that names a path counts only on that path, so reading a scratch file is not reading the
/// input; one that says what it `wrote` counts only if it left that text; one that must come
/// `after_last_write` counts only after the path's last executed change.
pub(crate) fn actions_called(
    cx: &Ctx<'_>,
    calls: &[CallSpec],
    ordered: bool,
    strict_order: bool,
) -> (bool, Vec<String>) {
    let executed: Vec<&TraceEntry> = cx.trace.iter().filter(|e| e.executed()).collect();
    // The hashes a `wrote` text may leave (one final newline optional), once per text.
    let wrote_hashes: BTreeMap<&str, [String; 2]> = calls
        .iter()
        .filter_map(|c| c.on_path()?.wrote.as_deref())
        .map(|text| {
            (
                text,
                [
                    sha256_hex(text.as_bytes()),
                    sha256_hex(format!("{text}\n").as_bytes()),
                ],
            )
        })
        .collect();
    let hits = |c: &CallSpec, at: usize| {
        let e = executed[at];
        if e.tool != c.tool() || !c.path().is_none_or(|p| e.targets(p)) {
            return false;
        }
        let Some(on) = c.on_path() else { return true };
        // As `file_equals` does by default, one final newline is optional.
        let wrote_it = on.wrote.as_deref().is_none_or(|text| {
            e.written_sha256
                .as_ref()
                .is_some_and(|left| wrote_hashes.get(text).is_some_and(|h| h.contains(left)))
        });
        // A deletion writes nothing that could be read back.
        let after = !on.after_last_write
            || !executed[at + 1..]
                .iter()
                .any(|later| later.mutated_path(&on.path) && later.tool != "delete_file");
        wrote_it && after
    };
    let name = |c: &CallSpec| {
        let mut n = match c.path() {
            Some(p) => format!("{} {p}", c.tool()),
            None => c.tool().to_string(),
        };
        if let Some(on) = c.on_path() {
            if on.wrote.is_some() {
                n.push_str(" (with the required content)");
            }
            if on.after_last_write {
                n.push_str(" (after its last change)");
            }
        }
        n
    };
    let mut facts = vec![format!(
        "executed calls: {} of {} in the trace",
        executed.len(),
        cx.trace.len()
    )];
    let missing: Vec<String> = calls
        .iter()
        .filter(|c| !(0..executed.len()).any(|at| hits(c, at)))
        .map(name)
        .collect();
    if !missing.is_empty() {
        facts.push(format!("never executed: {}", missing.join(", ")));
        return (false, facts);
    }
    let all: Vec<String> = calls.iter().map(name).collect();
    if !ordered {
        facts.push(format!("executed: {}", all.join(", ")));
        return (true, facts);
    }
    // Greedy subsequence match: the earliest possible position for each call in turn.
    let mut positions = Vec::with_capacity(calls.len());
    let mut from = 0;
    for c in calls {
        match (from..executed.len()).find(|&at| hits(c, at)) {
            Some(at) => {
                positions.push(at);
                from = at + 1;
            }
            None => {
                facts.push(format!("not executed in the order {}", all.join(" → ")));
                return (false, facts);
            }
        }
    }
    if strict_order {
        for (i, &at) in positions.iter().enumerate() {
            // A later-listed call (of a kind not listed up to here) before this one's place.
            let early = calls[i + 1..]
                .iter()
                .filter(|later| !calls[..=i].contains(later))
                .find(|later| (0..at).any(|before| hits(later, before)));
            if let Some(later) = early {
                facts.push(format!(
                    "{} was executed before {}: not in the order {}",
                    name(later),
                    name(&calls[i]),
                    all.join(" → ")
                ));
                return (false, facts);
            }
        }
        // A listed path changed again (deleted, rewritten) after a later-listed call's place
        // undoes the order: a step1 deleted and created again after step3 was created last.
        for (i, c) in calls.iter().enumerate() {
            let Some(path) = c.path() else { continue };
            if calls[i + 1..].iter().any(|l| l.path() == Some(path)) {
                continue;
            }
            let Some(&next) = positions.get(i + 1) else {
                continue;
            };
            if let Some(k) = (next + 1..executed.len()).find(|&k| executed[k].mutated_path(path)) {
                facts.push(format!(
                    "{path} was changed again (executed call {}, {}) after {}: not in the order {}",
                    k + 1,
                    executed[k].tool,
                    name(&calls[i + 1]),
                    all.join(" → ")
                ));
                return (false, facts);
            }
        }
    }
    facts.push(format!("executed in order: {}", all.join(" → ")));
    (true, facts)
}

/// The expected value is the task's answer: a failure says the variable holds another value,
/// and the expected one is withheld (for the person and the journal).
pub(crate) fn variable_set(
    cx: &Ctx<'_>,
    name: &str,
    expected: Option<&serde_json::Value>,
) -> Judged {
    let said: (bool, Vec<String>) = match (cx.world.variable(name), expected) {
        (None, _) => (false, vec![format!("variable `{name}` is not set")]),
        (Some(v), None) => (
            true,
            vec![format!("variable `{name}` = {}", preview(&v.to_string()))],
        ),
        (Some(v), Some(want)) if &v == want => (
            true,
            vec![format!(
                "variable `{name}` = {} as expected",
                preview(&v.to_string())
            )],
        ),
        (Some(v), Some(want)) => {
            let mut j = Judged::default();
            j.say(format!(
                "variable `{name}` = {}, which is not the value the task asks for",
                preview(&v.to_string())
            ));
            j.withhold(format!(
                "variable `{name}`: expected {}",
                preview(&want.to_string())
            ));
            return j;
        }
    };
    said.into()
}
