//! The ablation table: benches of the same tasks, models and seeds that differ only in their
//! harness levers, each set against one baseline (say every lever on, then each one off in
//! turn). Per lever setting and split: the pass rate with its Wilson interval, and the exact
//! McNemar test on the runs both have, paired on (suite, task, model, repeat, seed).
//!
//! Benches are comparable only when they judged the same contracts: a task whose contract
//! hash differs between two benches is refused, not paired, and so is a bench whose runs do
//! not all share one lever setting.

use std::collections::BTreeMap;

use rein_protocol::display::escape_line;
use serde::Serialize;
use serde_json::Value;

use crate::error::BenchError;
use crate::render::pvalue;
use crate::results::RunResult;
use crate::stats::{mcnemar_exact, wilson};

/// The splits a table has rows for, `all` last.
const SPLITS: [&str; 3] = ["dev", "heldout", "all"];

/// One bench of the table: a name for the person (its folder) and its runs.
#[derive(Debug, Clone)]
pub struct Arm {
    pub name: String,
    pub results: Vec<RunResult>,
}

/// One row: an arm on one split, set against the baseline on the same split.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AblationRow {
    pub arm: String,
    /// The levers this arm sets otherwise than the baseline, `name=on|off`; empty for the
    /// baseline's own row.
    pub changed: Vec<String>,
    pub split: String,
    /// Distinct (suite, task, model) among the runs: repeats of one task are not independent
    /// evidence, so read the p-value with this count beside it.
    pub tasks: u64,
    pub runs: u64,
    pub passes: u64,
    pub pass_rate: f64,
    pub wilson_low: f64,
    pub wilson_high: f64,
    /// Runs this arm and the baseline both have.
    pub pairs: u64,
    /// The baseline passed, this arm failed.
    pub only_baseline: u64,
    /// This arm passed, the baseline failed.
    pub only_arm: u64,
    /// Exact two-sided McNemar p-value on (only_baseline, only_arm); 1 for the baseline.
    pub p_value: f64,
}

/// The table: the baseline's rows first, then each arm's, in the order given.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ablation {
    pub baseline: String,
    /// The baseline's levers, `name → on`.
    pub baseline_levers: BTreeMap<String, bool>,
    /// The baseline's `--context` (absent: the models' default windows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_context: Option<u32>,
    /// SHA-256 of the `rein` that ran the baseline, `mixed` when its runs came from more than
    /// one build (absent: not recorded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_build: Option<String>,
    pub rows: Vec<AblationRow>,
}

/// Which build of `rein` ran an arm's runs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Build {
    One(String),
    Mixed,
    /// A run of it was written before builds were recorded.
    Unrecorded,
}

fn build_of(arm: &Arm) -> Build {
    let mut builds = arm.results.iter().map(|r| r.harness_sha256.as_deref());
    let Some(Some(first)) = builds.next() else {
        return Build::Unrecorded;
    };
    let mut out = Build::One(first.to_string());
    for build in builds {
        match build {
            None => return Build::Unrecorded,
            Some(b) if b != first => out = Build::Mixed,
            Some(_) => {}
        }
    }
    out
}

/// How an arm's build differs from the baseline's, as a row's "changed" entry: a lever's effect
/// measured across two builds is confounded with the code change between them.
fn build_change(base: &Build, arm: &Build) -> Option<String> {
    match (base, arm) {
        (Build::One(a), Build::One(b)) if a == b => None,
        (Build::One(_), Build::One(b)) => Some(build_setting(b)),
        (Build::Mixed, _) | (_, Build::Mixed) => Some(build_setting("mixed")),
        _ => None,
    }
}

/// `build=` with the first 12 hex digits of a build's SHA-256 (or `mixed`).
fn build_setting(build: &str) -> String {
    format!("build={}", build.chars().take(12).collect::<String>())
}

type PairKey = (String, String, String, u32, u64);

/// Builds the table of `arms` against `baseline`.
pub fn ablation(baseline: &Arm, arms: &[Arm]) -> Result<Ablation, BenchError> {
    let base_levers = one_lever_setting(baseline)?;
    let base_samples = one_samples_setting(baseline)?;
    for arm in arms {
        let samples = one_samples_setting(arm)?;
        if samples != base_samples {
            return Err(BenchError::Merge(format!(
                "{} drew {samples} candidate(s) per write (--samples) and the baseline {} drew {base_samples}: best-of-K and pass@1 verdicts are different quantities; compare benches run with the same --samples",
                arm.name, baseline.name
            )));
        }
    }
    let mut contracts: BTreeMap<(String, String), (String, String)> = BTreeMap::new();
    for arm in std::iter::once(baseline).chain(arms) {
        for r in &arm.results {
            let key = (r.suite.clone(), r.task.clone());
            match contracts.get(&key) {
                Some((sha, first)) if *sha != r.contract_sha256 => {
                    return Err(BenchError::Merge(format!(
                        "task {}/{} was judged against another contract in {} than in {first}: benches of different contracts cannot be compared; run them again from the same suite",
                        r.suite, r.task, arm.name
                    )));
                }
                Some(_) => {}
                None => {
                    contracts.insert(key, (r.contract_sha256.clone(), arm.name.clone()));
                }
            }
        }
    }
    let base_context = one_context_setting(baseline)?;
    let base_build = build_of(baseline);
    let base_outcomes = outcomes(baseline)?;
    let mut rows = rows_of(baseline, &base_outcomes, Vec::new(), &base_outcomes);
    for arm in arms {
        let levers = one_lever_setting(arm)?;
        let mut changed = changed_levers(&base_levers, &levers);
        let context = one_context_setting(arm)?;
        if context != base_context {
            changed.push(format!("context={}", window(context)));
        }
        if let Some(build) = build_change(&base_build, &build_of(arm)) {
            changed.push(build);
        }
        let arm_outcomes = outcomes(arm)?;
        if !arm_outcomes.keys().any(|k| base_outcomes.contains_key(k)) {
            return Err(BenchError::Merge(format!(
                "{} shares no run with the baseline {} (runs pair on suite, task, model, repeat and seed): run it with the baseline's suites, models, --repeats and --seed",
                arm.name, baseline.name
            )));
        }
        rows.extend(rows_of(arm, &arm_outcomes, changed, &base_outcomes));
    }
    Ok(Ablation {
        baseline: baseline.name.clone(),
        baseline_levers: base_levers,
        baseline_context: base_context,
        baseline_build: match base_build {
            Build::One(sha) => Some(sha),
            Build::Mixed => Some("mixed".to_string()),
            Build::Unrecorded => None,
        },
        rows,
    })
}

/// The lever setting every run of `arm` shares, or why the arm cannot be one row.
fn one_lever_setting(arm: &Arm) -> Result<BTreeMap<String, bool>, BenchError> {
    let levers = |r: &RunResult| {
        let Some(levers) = r.levers.as_ref().and_then(Value::as_object) else {
            return Err(BenchError::Merge(format!(
                "{}: run {}/{} repeat {} has no lever record (a results file older than levers); run it again",
                arm.name, r.suite, r.task, r.repeat
            )));
        };
        Ok(levers
            .iter()
            .filter_map(|(k, v)| v.as_bool().map(|b| (k.clone(), b)))
            .collect())
    };
    one_setting(arm, "lever settings", levers, |a, b| {
        format!("{} differ", changed_levers(a, b).join(", "))
    })
}

/// The candidates per write every run of `arm` drew (1 for pass@1), or why the arm mixes them.
fn one_samples_setting(arm: &Arm) -> Result<u32, BenchError> {
    let samples = |r: &RunResult| Ok(r.samples.unwrap_or(1).max(1));
    one_setting(arm, "pass@1 and best-of-K verdicts", samples, |a, b| {
        format!("{a} and {b} candidates per write")
    })
}

/// The context window every run of `arm` asked for (`None`: the model's default), or why the
/// arm mixes them. A window is a setting an arm may change, like a lever.
fn one_context_setting(arm: &Arm) -> Result<Option<u32>, BenchError> {
    one_setting(
        arm,
        "context windows",
        |r| Ok(r.context),
        |a, b| format!("{} and {}", window(*a), window(*b)),
    )
}

/// A `--context` setting as the table shows it.
fn window(context: Option<u32>) -> String {
    context.map_or_else(|| "default".to_string(), |t| t.to_string())
}

/// The one value of `setting` every run of `arm` shares; `what` and `differ` say what is
/// mixed when two runs disagree.
fn one_setting<T: PartialEq>(
    arm: &Arm,
    what: &str,
    setting: impl Fn(&RunResult) -> Result<T, BenchError>,
    differ: impl Fn(&T, &T) -> String,
) -> Result<T, BenchError> {
    let mut first: Option<T> = None;
    for r in &arm.results {
        let this = setting(r)?;
        match &first {
            Some(f) if *f != this => {
                return Err(BenchError::Merge(format!(
                    "{}: its runs mix {what} ({}); give each its own bench folder",
                    arm.name,
                    differ(f, &this)
                )));
            }
            Some(_) => {}
            None => first = Some(this),
        }
    }
    first.ok_or_else(|| BenchError::Merge(format!("{}: no runs", arm.name)))
}

/// `name=on|off` for each lever `other` sets otherwise than `base` (a lever only one knows
/// counts as changed).
fn changed_levers(base: &BTreeMap<String, bool>, other: &BTreeMap<String, bool>) -> Vec<String> {
    let on_off = |b: bool| if b { "on" } else { "off" };
    let mut names: Vec<&String> = base.keys().chain(other.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|n| base.get(*n) != other.get(*n))
        .map(|n| match other.get(n) {
            Some(b) => format!("{n}={}", on_off(*b)),
            None => format!("{n}=unrecorded"),
        })
        .collect()
}

/// Each run's verdict by its pair key and split; a run present twice is refused.
fn outcomes(arm: &Arm) -> Result<BTreeMap<PairKey, (String, bool)>, BenchError> {
    let mut out = BTreeMap::new();
    for r in &arm.results {
        let key = (
            r.suite.clone(),
            r.task.clone(),
            r.model.clone(),
            r.repeat,
            r.seed,
        );
        if out.insert(key, (r.split.clone(), r.passed)).is_some() {
            return Err(BenchError::Merge(format!(
                "{}: run {}/{} model {} repeat {} is there twice",
                arm.name, r.suite, r.task, r.model, r.repeat
            )));
        }
    }
    Ok(out)
}

fn rows_of(
    arm: &Arm,
    own: &BTreeMap<PairKey, (String, bool)>,
    changed: Vec<String>,
    base: &BTreeMap<PairKey, (String, bool)>,
) -> Vec<AblationRow> {
    SPLITS
        .iter()
        .filter_map(|split| {
            let in_split = |s: &str| *split == "all" || s == *split;
            let runs: Vec<(&PairKey, bool)> = own
                .iter()
                .filter(|(_, (s, _))| in_split(s))
                .map(|(k, (_, p))| (k, *p))
                .collect();
            if runs.is_empty() {
                return None;
            }
            let passes = runs.iter().filter(|(_, p)| *p).count() as u64;
            let tasks = runs
                .iter()
                .map(|((suite, task, model, _, _), _)| (suite, task, model))
                .collect::<std::collections::BTreeSet<_>>()
                .len() as u64;
            let n = runs.len() as u64;
            let (wilson_low, wilson_high) = wilson(passes, n);
            let (mut pairs, mut only_baseline, mut only_arm) = (0, 0, 0);
            for (key, passed) in &runs {
                let Some((_, base_passed)) = base.get(*key) else {
                    continue;
                };
                pairs += 1;
                match (base_passed, passed) {
                    (true, false) => only_baseline += 1,
                    (false, true) => only_arm += 1,
                    _ => {}
                }
            }
            Some(AblationRow {
                arm: arm.name.clone(),
                changed: changed.clone(),
                split: (*split).to_string(),
                tasks,
                runs: n,
                passes,
                pass_rate: passes as f64 / n as f64,
                wilson_low,
                wilson_high,
                pairs,
                only_baseline,
                only_arm,
                p_value: mcnemar_exact(only_baseline, only_arm),
            })
        })
        .collect()
}

impl Ablation {
    /// The table as Markdown, one row per arm and split.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "Baseline: {} ({})\n\n| bench | levers vs baseline | split | tasks | pass | rate | 95 % Wilson | pairs | only baseline | only this | McNemar p |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
            cell(&self.baseline),
            cell(
                &self
                    .baseline_levers
                    .iter()
                    .map(|(k, v)| format!("{k}={}", if *v { "on" } else { "off" }))
                    .chain(self.baseline_context.map(|t| format!("context={t}")))
                    .chain(self.baseline_build.as_deref().map(build_setting))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        );
        for r in &self.rows {
            let changed = if r.arm == self.baseline && r.changed.is_empty() {
                "(baseline)".to_string()
            } else if r.changed.is_empty() {
                "same levers".to_string()
            } else {
                r.changed.join(", ")
            };
            let changed = cell(&changed);
            s.push_str(&format!(
                "| {} | {changed} | {} | {} | {}/{} | {:.1} % | {:.1}–{:.1} % | {} | {} | {} | {} |\n",
                cell(&r.arm),
                r.split,
                r.tasks,
                r.passes,
                r.runs,
                100.0 * r.pass_rate,
                100.0 * r.wilson_low,
                100.0 * r.wilson_high,
                r.pairs,
                r.only_baseline,
                r.only_arm,
                pvalue(r.p_value),
            ));
        }
        s
    }
}

/// Text from a results file as one Markdown table cell.
fn cell(text: &str) -> String {
    escape_line(text).replace('|', "\\|")
}
