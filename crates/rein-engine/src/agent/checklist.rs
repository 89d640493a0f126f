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
//!
//! A check whose outcome turns on the task's answer (a pattern, a computed number, a gold file,
//! an expected variable, the inputs the contract chose) is not shown at all, met or not: the
//! checklist runs after every step, so its status alone would be an oracle the model could query
//! once per step (write `Deadline: 1`, `2`, ... until the line goes away; read the policies one by
//! one until "read the right input" is met). Those are counted and judged after finish.

use crate::checks::{
    evaluate_selected, requirement, CallSpec, CheckResult, CheckSpec, TraceEntry, World,
};
use crate::mission::FrozenContract;

use super::prompt::clip;

/// Unmet checks listed at most; the rest are counted.
const MAX_LISTED: usize = 5;

/// Characters of one listed check's facts.
const MAX_FACT_CHARS: usize = 240;

/// The checklist note for the model after a step.
pub fn checklist_note(
    contract: &FrozenContract,
    world: &dyn World,
    trace: &[TraceEntry],
) -> String {
    let checks = &contract.mission.checks;
    let unmet: Vec<String> = unmet_shown(contract, world, trace)
        .into_iter()
        .map(|(i, result)| {
            let check = &checks[i];
            let facts = clip(&result.feedback.join("; "), MAX_FACT_CHARS);
            let mut line = format!("{}. {}", i + 1, requirement(&check.spec));
            if !facts.is_empty() {
                line.push_str(&format!(" Now: {facts}"));
            }
            line
        })
        .collect();
    let shown = contract
        .mission
        .checks
        .iter()
        .filter(|c| status_may_be_shown(&c.spec))
        .count();
    let later = contract.mission.checks.len() - shown;
    let judged_later = if later == 0 {
        String::new()
    } else {
        format!(
            " {later} more (the task's answer, or a reviewer's reading) are judged only after you \
             call finish."
        )
    };
    if unmet.is_empty() {
        return format!(
            "Checklist: every requirement the harness checks before finish is met.{judged_later}"
        );
    }
    let mut s = format!(
        "Checklist: {} of {shown} requirements checked before finish are not met yet (on the files as they are now).{judged_later}\n",
        unmet.len(),
    );
    for line in unmet.iter().take(MAX_LISTED) {
        s.push_str("- ");
        s.push_str(line);
        s.push('\n');
    }
    if unmet.len() > MAX_LISTED {
        s.push_str(&format!("- and {} more\n", unmet.len() - MAX_LISTED));
    }
    s
}

/// Whether every deciding check the checklist may show is met on the files as they are (lever
/// `finish-when-met`); the hidden ones are not run.
pub fn shown_checks_met(
    contract: &FrozenContract,
    world: &dyn World,
    trace: &[TraceEntry],
) -> bool {
    unmet_shown(contract, world, trace).is_empty()
}

/// The deciding checks that may be shown and are not met, by index. Only those checks are run:
/// a hidden one would cost a read of its files every step for nothing.
fn unmet_shown(
    contract: &FrozenContract,
    world: &dyn World,
    trace: &[TraceEntry],
) -> Vec<(usize, CheckResult)> {
    evaluate_selected(contract, world, trace, &status_may_be_shown)
        .into_iter()
        .filter(|(_, result)| !result.advisory && !result.passed)
        .collect()
}

/// Whether a check's status may be shown mid-run: only a check whose outcome does not turn on the
/// task's answer (what exists, the shape, what was read when all inputs are asked for). Every
/// kind has its own arm (no wildcard), so a new kind cannot be added without deciding.
fn status_may_be_shown(spec: &CheckSpec) -> bool {
    match spec {
        CheckSpec::FileExists { .. }
        | CheckSpec::FileAbsent { .. }
        | CheckSpec::ReportComplete { .. }
        | CheckSpec::NoPlaceholders { .. }
        | CheckSpec::WrittenThisRun { .. }
        | CheckSpec::InputsUnchanged {}
        | CheckSpec::NothingElseChanged { .. }
        | CheckSpec::NotCopied { .. }
        | CheckSpec::JsonSchema { .. }
        | CheckSpec::MentionsAll { .. } => true,
        // Every input: the prompt lists them. Chosen ones: which is the answer.
        CheckSpec::InputsRead { paths, .. } => paths.is_empty(),
        // Copied from any input; from chosen ones, which may be the answer (the log that holds
        // the order id), and the status would say when a guess came from the right one.
        CheckSpec::Grounded { sources, .. } => sources.is_empty(),
        // A call on a path the task may not name, or one that must have written the answer.
        CheckSpec::ActionsCalled { tools, .. } => tools.iter().all(|c| match c {
            CallSpec::Tool(_) => true,
            CallSpec::ToolOnPath(call) => call.wrote.is_none(),
        }),
        CheckSpec::VariableSet { expected, .. } => expected.is_none(),
        CheckSpec::ContentMatches { .. }
        | CheckSpec::ContentAbsent { .. }
        | CheckSpec::NumericConsistency { .. }
        | CheckSpec::Statement { .. }
        | CheckSpec::EntriesMatch { .. }
        | CheckSpec::FileEquals { .. }
        | CheckSpec::Decision { .. } => false,
    }
}
