//! Checks of what the run did: tools executed, sandbox variables set.

use super::text::preview;
use super::Ctx;

/// Only executed (or replayed) calls count: a denied or held call did nothing.
pub(crate) fn actions_called(cx: &Ctx<'_>, tools: &[String], ordered: bool) -> (bool, Vec<String>) {
    let executed: Vec<&str> = cx
        .trace
        .iter()
        .filter(|e| e.executed())
        .map(|e| e.tool.as_str())
        .collect();
    let summary = format!(
        "executed calls: {} of {} in the trace",
        executed.len(),
        cx.trace.len()
    );
    let mut facts = vec![summary];
    let missing: Vec<&str> = tools
        .iter()
        .filter(|t| !executed.contains(&t.as_str()))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        facts.push(format!("never executed: {}", missing.join(", ")));
        return (false, facts);
    }
    if ordered {
        // Greedy subsequence match: the earliest possible position for each tool in turn.
        let mut pos = 0;
        for t in tools {
            match executed[pos..].iter().position(|e| e == t) {
                Some(i) => pos += i + 1,
                None => {
                    facts.push(format!("not executed in the order {}", tools.join(" → ")));
                    return (false, facts);
                }
            }
        }
        facts.push(format!("executed in order: {}", tools.join(" → ")));
    } else {
        facts.push(format!("executed: {}", tools.join(", ")));
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
