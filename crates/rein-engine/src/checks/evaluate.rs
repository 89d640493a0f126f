//! Running a contract's checks into a verdict.

use serde::{Deserialize, Serialize};

use super::semantic::Decider;
use super::spec::CheckSpec;
use super::trace::TraceEntry;
use super::world::World;
use super::{actions, files, numeric, report, semantic, Ctx};
use crate::mission::{FrozenContract, Mode};

/// One check's outcome and the facts it read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    pub id: String,
    pub kind: String,
    pub passed: bool,
    pub facts: Vec<String>,
}

/// Pass only when there is at least one check and every check passed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub mission: String,
    pub contract_sha256: String,
    pub passed: bool,
    pub checks: Vec<CheckResult>,
}

/// Why the engine refuses to judge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JudgeError {
    #[error(
        "mission {id} is human_review_only: its semantic checks have not been qualified for \
         automatic judgment; run `rein qualify {id} --runs 3` and review its runs by hand \
         (zero confident false completions is the bar) before switching it to automatic"
    )]
    HumanReviewOnly { id: String },
}

/// Evaluates every check of the contract, in order. Used directly by qualification runs; the
/// verdict of an ordinary run comes from `evaluate_automatic`.
pub fn evaluate(
    contract: &FrozenContract,
    world: &dyn World,
    trace: &[TraceEntry],
    mut decider: Option<&mut dyn Decider>,
) -> Verdict {
    let cx = Ctx {
        contract,
        world,
        trace,
    };
    let mut checks = Vec::with_capacity(contract.mission.checks.len());
    for check in &contract.mission.checks {
        let d: Option<&mut dyn Decider> = match decider {
            Some(ref mut d) => Some(&mut **d),
            None => None,
        };
        let (passed, facts) = run(&cx, &check.spec, d);
        checks.push(CheckResult {
            id: check.id.clone(),
            kind: check.spec.kind().to_string(),
            passed,
            facts,
        });
    }
    Verdict {
        mission: contract.mission.id.clone(),
        contract_sha256: contract.sha256.clone(),
        passed: !checks.is_empty() && checks.iter().all(|c| c.passed),
        checks,
    }
}

/// Like `evaluate`, but refuses a `human_review_only` mission: its verdict is a person's.
pub fn evaluate_automatic(
    contract: &FrozenContract,
    world: &dyn World,
    trace: &[TraceEntry],
    decider: Option<&mut dyn Decider>,
) -> Result<Verdict, JudgeError> {
    if contract.mission.mode == Mode::HumanReviewOnly {
        return Err(JudgeError::HumanReviewOnly {
            id: contract.mission.id.clone(),
        });
    }
    Ok(evaluate(contract, world, trace, decider))
}

fn run(cx: &Ctx<'_>, spec: &CheckSpec, decider: Option<&mut dyn Decider>) -> (bool, Vec<String>) {
    match spec {
        CheckSpec::FileExists { path, non_empty } => files::file_exists(cx, path, *non_empty),
        CheckSpec::FileAbsent { path } => files::file_absent(cx, path),
        CheckSpec::ContentMatches {
            path,
            pattern,
            regex,
            case_insensitive,
        } => files::content_matches(cx, path, pattern, *regex, *case_insensitive),
        CheckSpec::ContentAbsent {
            path,
            pattern,
            regex,
            case_insensitive,
        } => files::content_absent(cx, path, pattern, *regex, *case_insensitive),
        CheckSpec::JsonSchema { path, schema } => files::json_schema(cx, path, schema),
        CheckSpec::NumericConsistency {
            path,
            stated,
            expected,
            tolerance,
        } => numeric::numeric_consistency(cx, path, stated, expected, *tolerance),
        CheckSpec::ReportComplete {
            path,
            headings,
            fields,
            min_words,
            max_words,
        } => report::report_complete(cx, path, headings, fields, *min_words, *max_words),
        CheckSpec::ActionsCalled { tools, ordered } => actions::actions_called(cx, tools, *ordered),
        CheckSpec::VariableSet { name, expected } => {
            actions::variable_set(cx, name, expected.as_ref())
        }
        CheckSpec::Grounded {
            path,
            claim,
            sources,
        } => semantic::grounded(cx, path, claim, sources),
        CheckSpec::Decision {
            prompt,
            labels,
            expected,
            path,
            floor_bps,
        } => semantic::decision(
            cx,
            decider,
            prompt,
            labels,
            expected,
            path.as_deref(),
            *floor_bps,
        ),
    }
}
