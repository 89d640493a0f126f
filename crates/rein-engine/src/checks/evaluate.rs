//! Running a contract's checks into a verdict.

use serde::{Deserialize, Serialize};

use super::semantic::Decider;
use super::spec::{Check, CheckSpec};
use super::trace::TraceEntry;
use super::world::World;
use super::{
    actions, changes, entries, files, numeric, process, report, semantic, statement, Ctx, Judged,
};
use crate::mission::{FrozenContract, Mode};

/// One check's outcome and the facts it read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    pub id: String,
    pub kind: String,
    pub passed: bool,
    /// Every fact, for the person and the journal (including expected values).
    pub facts: Vec<String>,
    /// The facts a model may be told: never a value computed from the inputs.
    #[serde(default)]
    pub feedback: Vec<String>,
    /// Lines of frozen inputs a failed check compared against, quoted unchanged with their file
    /// and line number (`path line N: text`); told to the model only under lever
    /// `source-lines`, and never a value computed from the inputs (no sum, no count).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quoted: Vec<String>,
    /// Reported as advice for a person; does not decide the verdict (an unqualified decision).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub advisory: bool,
}

/// Pass only when there is at least one deciding check and every deciding check passed.
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
    decider: Option<&mut dyn Decider>,
) -> Verdict {
    // In a human-review mission the decisions are what is being qualified, so they count.
    let automatic = contract.mission.mode == Mode::Automatic;
    judge(contract, world, trace, decider, automatic)
}

/// The verdict a program gives with no decider, for the judge's own cases (`rein
/// check-mission`): a decision not yet qualified is advice in either mode, so the cases of a
/// `human_review_only` mission try every check but the person's.
pub fn evaluate_without_decider(
    contract: &FrozenContract,
    world: &dyn World,
    trace: &[TraceEntry],
) -> Verdict {
    judge(contract, world, trace, None, true)
}

/// `unqualified_advise`: a decision not yet qualified is reported and does not decide.
fn judge(
    contract: &FrozenContract,
    world: &dyn World,
    trace: &[TraceEntry],
    mut decider: Option<&mut dyn Decider>,
    unqualified_advise: bool,
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
        checks.push(result_of(&cx, check, d, unqualified_advise));
    }
    let deciding: Vec<&CheckResult> = checks.iter().filter(|c| !c.advisory).collect();
    Verdict {
        mission: contract.mission.id.clone(),
        contract_sha256: contract.sha256.clone(),
        passed: !deciding.is_empty() && deciding.iter().all(|c| c.passed),
        checks,
    }
}

/// The checks `keep` selects, each with its index in the contract, run without a decider: a
/// look at the world mid-run (the checklist lever), never a verdict. Checks left out cost nothing.
pub fn evaluate_selected(
    contract: &FrozenContract,
    world: &dyn World,
    trace: &[TraceEntry],
    keep: &dyn Fn(&CheckSpec) -> bool,
) -> Vec<(usize, CheckResult)> {
    let cx = Ctx {
        contract,
        world,
        trace,
    };
    let automatic = contract.mission.mode == Mode::Automatic;
    contract
        .mission
        .checks
        .iter()
        .enumerate()
        .filter(|(_, check)| keep(&check.spec))
        .map(|(i, check)| (i, result_of(&cx, check, None, automatic)))
        .collect()
}

/// One check run and reported: every fact for the person, the sayable ones for the model.
fn result_of(
    cx: &Ctx<'_>,
    check: &Check,
    decider: Option<&mut dyn Decider>,
    unqualified_advise: bool,
) -> CheckResult {
    let judged = run(cx, &check.spec, decider);
    let mut facts = judged.facts.clone();
    facts.extend(judged.withheld);
    CheckResult {
        id: check.id.clone(),
        kind: check.spec.kind().to_string(),
        passed: judged.passed,
        facts,
        feedback: judged.facts,
        quoted: judged.quoted,
        advisory: unqualified_advise && check.spec.is_advisory(),
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

fn run(cx: &Ctx<'_>, spec: &CheckSpec, decider: Option<&mut dyn Decider>) -> Judged {
    match spec {
        CheckSpec::FileExists { path, non_empty } => {
            files::file_exists(cx, path, *non_empty).into()
        }
        CheckSpec::FileAbsent { path } => files::file_absent(cx, path).into(),
        CheckSpec::ContentMatches {
            path,
            pattern,
            regex,
            case_insensitive,
            section,
            include_code,
        } => files::content_matches(
            cx,
            &files::Pattern {
                path,
                pattern,
                regex: *regex,
                case_insensitive: *case_insensitive,
                section: section.as_deref(),
                include_code: *include_code,
            },
        ),
        CheckSpec::ContentAbsent {
            path,
            pattern,
            regex,
            case_insensitive,
            section,
            include_code,
        } => files::content_absent(
            cx,
            &files::Pattern {
                path,
                pattern,
                regex: *regex,
                case_insensitive: *case_insensitive,
                section: section.as_deref(),
                include_code: *include_code,
            },
        ),
        CheckSpec::JsonSchema { path, schema } => files::json_schema(cx, path, schema),
        CheckSpec::NumericConsistency {
            expected,
            tolerance,
            ..
        } => numeric::Statement::of(spec).map_or_else(Judged::default, |want| {
            numeric::numeric_consistency(cx, &want, expected, *tolerance)
        }),
        CheckSpec::ReportComplete {
            path,
            headings,
            fields,
            min_words,
            max_words,
            in_order,
            min_section_words,
            max_repeats,
            no_other_headings,
        } => report::report_complete(
            cx,
            path,
            &report::Shape {
                headings,
                fields,
                min_words: *min_words,
                max_words: *max_words,
                in_order: *in_order,
                min_section_words: *min_section_words,
                max_repeats: *max_repeats,
                no_other_headings: *no_other_headings,
            },
        )
        .into(),
        CheckSpec::ActionsCalled {
            tools,
            ordered,
            strict_order,
        } => actions::actions_called(cx, tools, *ordered, *strict_order).into(),
        CheckSpec::VariableSet { name, expected } => {
            actions::variable_set(cx, name, expected.as_ref())
        }
        CheckSpec::Grounded {
            path,
            claim,
            sources,
        } => semantic::grounded(cx, path, claim, sources).into(),
        CheckSpec::Decision {
            prompt,
            labels,
            expected,
            path,
            floor_bps,
            section,
            inputs,
            qualified: _,
        } => semantic::decision(
            cx,
            decider,
            &semantic::Ask {
                prompt,
                labels,
                expected,
                path: path.as_deref(),
                section: section.as_deref(),
                inputs,
                floor_bps: *floor_bps,
            },
        )
        .into(),
        CheckSpec::Statement {
            path,
            section,
            all,
            unnegated,
        } => statement::statement(cx, path, section.as_deref(), all, *unnegated),
        CheckSpec::MentionsAll {
            path,
            section,
            values,
            numbers,
        } => statement::mentions_all(cx, path, section.as_deref(), values, numbers.as_ref()),
        CheckSpec::NotCopied {
            path,
            section,
            sources,
            min_run_words,
            max_fraction,
        } => statement::not_copied(
            cx,
            path,
            section.as_deref(),
            sources,
            *min_run_words,
            *max_fraction,
        )
        .into(),
        CheckSpec::NoPlaceholders { path } => files::no_placeholders(cx, path).into(),
        CheckSpec::InputsRead {
            paths,
            before_writing,
        } => process::inputs_read(cx, paths, before_writing.as_deref()),
        CheckSpec::WrittenThisRun { path } => process::written_this_run(cx, path).into(),
        CheckSpec::InputsUnchanged {} => process::inputs_unchanged(cx).into(),
        CheckSpec::FileEquals {
            path,
            expected_file,
            line_endings,
            final_newline,
        } => changes::file_equals(cx, path, expected_file, *line_endings, *final_newline),
        CheckSpec::NothingElseChanged {
            allow,
            allow_deleted,
        } => changes::nothing_else_changed(cx, allow, allow_deleted).into(),
        CheckSpec::EntriesMatch {
            path,
            array,
            sources,
            fields,
            unique,
        } => entries::entries_match(cx, path, array, sources, fields, unique),
    }
}
