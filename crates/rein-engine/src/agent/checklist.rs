//! The `checklist` lever: after each step, the contract's deterministic checks run on the world
//! as it is, and the model reads which are not met yet. A small model that has done the work
//! keeps repeating it because nothing tells it the work is done; one that has done half stops
//! because nothing tells it what is left.
//!
//! What the model reads is the check's requirement in plain words and the facts a model may be
//! told (`CheckResult::feedback`, the same the retry after a failed verdict shows): never an
//! expected value computed from the inputs, never a gold file. Semantic checks are left out:
//! they need the decision model, and are judged once, after finish. Nothing here changes what
//! the judge decides.

use crate::checks::{evaluate, requirement, TraceEntry, World};
use crate::mission::FrozenContract;

use super::prompt::clip;

/// Unmet checks listed at most; the rest are counted.
const MAX_LISTED: usize = 5;

/// Characters of one listed check's facts.
const MAX_FACT_CHARS: usize = 240;

/// The checklist note for the model after a step.
pub(super) fn checklist_note(
    contract: &FrozenContract,
    world: &dyn World,
    trace: &[TraceEntry],
) -> String {
    let verdict = evaluate(contract, world, trace, None);
    let unmet: Vec<(usize, String)> = contract
        .mission
        .checks
        .iter()
        .enumerate()
        .zip(&verdict.checks)
        .filter(|((_, check), result)| {
            !check.spec.is_semantic() && !result.advisory && !result.passed
        })
        .map(|((i, check), result)| {
            let facts = clip(&result.feedback.join("; "), MAX_FACT_CHARS);
            let mut line = format!("{}. {}", i + 1, requirement(&check.spec));
            if !facts.is_empty() {
                line.push_str(&format!(" Now: {facts}"));
            }
            (i, line)
        })
        .collect();
    if unmet.is_empty() {
        return "Checklist: every requirement the harness can check now is met; finish the task."
            .to_string();
    }
    let mut s = format!(
        "Checklist: {} of {} requirements are not met yet (checked on the files as they are now):\n",
        unmet.len(),
        contract.mission.checks.len()
    );
    for (_, line) in unmet.iter().take(MAX_LISTED) {
        s.push_str("- ");
        s.push_str(line);
        s.push('\n');
    }
    if unmet.len() > MAX_LISTED {
        s.push_str(&format!("- and {} more\n", unmet.len() - MAX_LISTED));
    }
    s
}
