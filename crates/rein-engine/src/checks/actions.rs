//! Checks of what the run did: tools executed, sandbox variables set.

use super::spec::CallSpec;
use super::text::preview;
use super::trace::TraceEntry;
use super::Ctx;

/// Only executed (or replayed) calls count: a denied or held call did nothing. A required call
/// that names a path counts only on that path, so reading a scratch file is not reading the
/// input.
pub(crate) fn actions_called(
    cx: &Ctx<'_>,
    calls: &[CallSpec],
    ordered: bool,
) -> (bool, Vec<String>) {
    let executed: Vec<&TraceEntry> = cx.trace.iter().filter(|e| e.executed()).collect();
    let hits =
        |c: &CallSpec, e: &TraceEntry| e.tool == c.tool() && c.path().is_none_or(|p| e.targets(p));
    let name = |c: &CallSpec| match c.path() {
        Some(p) => format!("{} {p}", c.tool()),
        None => c.tool().to_string(),
    };
    let mut facts = vec![format!(
        "executed calls: {} of {} in the trace",
        executed.len(),
        cx.trace.len()
    )];
    let missing: Vec<String> = calls
        .iter()
        .filter(|c| !executed.iter().any(|e| hits(c, e)))
        .map(name)
        .collect();
    if !missing.is_empty() {
        facts.push(format!("never executed: {}", missing.join(", ")));
        return (false, facts);
    }
    let all: Vec<String> = calls.iter().map(name).collect();
    if ordered {
        // Greedy subsequence match: the earliest possible position for each call in turn.
        let mut pos = 0;
        for c in calls {
            match executed[pos..].iter().position(|e| hits(c, e)) {
                Some(i) => pos += i + 1,
                None => {
                    facts.push(format!("not executed in the order {}", all.join(" → ")));
                    return (false, facts);
                }
            }
        }
        facts.push(format!("executed in order: {}", all.join(" → ")));
    } else {
        facts.push(format!("executed: {}", all.join(", ")));
    }
    (true, facts)
}

pub(crate) fn variable_set(
    cx: &Ctx<'_>,
    name: &str,
    expected: Option<&serde_json::Value>,
) -> (bool, Vec<String>) {
    match (cx.world.variable(name), expected) {
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
        (Some(v), Some(want)) => (
            false,
            vec![format!(
                "variable `{name}` = {}, expected {}",
                preview(&v.to_string()),
                preview(&want.to_string())
            )],
        ),
    }
}
