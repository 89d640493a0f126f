//! What a bench found: per model, overall and per category, the pass rate with its Wilson 95 %
//! interval, repeats aggregated (mean pass rate over tasks and pass^k), medians of steps, wall
//! time and tokens/s, the format-error, repair and cap-hit rates, the harness overhead and the
//! tasks per minute; and for every pair of
//! models a paired comparison (exact McNemar) on the (suite, task, repeat) runs both have.
//!
//! Built from results alone, in a canonical order, so the same results give the same report.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::results::{sort_canonical, RunResult};
use crate::stats::{mcnemar_exact, mean_pass_rate, median, pass_hat_k, wilson};

/// The category name of a model's overall row.
pub const ALL: &str = "all";

/// The figures of one group of runs (a model's runs, or one category of them).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupStats {
    /// A category, or [`ALL`].
    pub category: String,
    pub runs: u64,
    pub passes: u64,
    pub pass_rate: f64,
    pub wilson_low: f64,
    pub wilson_high: f64,
    /// Distinct (suite, task) pairs.
    pub tasks: u64,
    /// k of pass^k: the fewest repeats any task of the group has.
    pub k: u64,
    /// Mean over tasks of each task's pass rate.
    pub mean_pass_rate: Option<f64>,
    /// Probability that all k repeats of a task pass, averaged over tasks (tau-bench estimator).
    pub pass_hat_k: Option<f64>,
    pub median_steps: Option<f64>,
    pub median_wall_ms: Option<f64>,
    /// Median over runs of completion tokens per wall second (runs with a wall time).
    pub median_tokens_per_s: Option<f64>,
    /// Format errors per step.
    pub format_error_rate: Option<f64>,
    /// Repairs per step.
    pub repair_rate: Option<f64>,
    /// Runs stopped by a cap, per run.
    pub cap_hit_rate: Option<f64>,
    /// Harness overhead: the share of the runs' whole time (`total_ms`) not spent waiting for
    /// the model (`model_ms`). Over the runs that measured it.
    pub harness_overhead: Option<f64>,
    /// Runs per minute of run time (the sum of `total_ms`): one worker's pace; `--jobs J`
    /// does up to J times as many per minute of the bench's wall time.
    pub tasks_per_minute: Option<f64>,
    /// Every run's wall time and step count, in canonical order (for the distribution charts).
    #[serde(skip)]
    pub wall_ms: Vec<u64>,
    #[serde(skip)]
    pub steps: Vec<u32>,
    #[serde(skip)]
    pub passed: Vec<bool>,
}

/// One model's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelReport {
    pub model: String,
    /// The model identities its runs reported (one, unless the model changed under the bench).
    pub identities: Vec<String>,
    pub overall: GroupStats,
    pub categories: Vec<GroupStats>,
    /// Verified sampling's figures, when its runs drew more than one candidate per write.
    pub sampling: Option<SamplingFigures>,
    /// The context windows its runs asked for with `--context`, in tokens (empty: the model's
    /// default window).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub contexts: Vec<u32>,
}

impl ModelReport {
    /// The model's name with its runs' `--context`, when one was asked for, right after it
    /// (before any text taken from the model file, which cannot then pose as the setting).
    pub fn labelled(&self) -> String {
        if self.contexts.is_empty() {
            return self.model.clone();
        }
        let windows: Vec<String> = self.contexts.iter().map(u32::to_string).collect();
        format!("{} (--context {})", self.model, windows.join(" and "))
    }
}

/// Verified sampling, kept apart from the pass rate so best-of-K is never read as pass@1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SamplingFigures {
    /// The largest K its runs used.
    pub samples: u32,
    /// Runs with K > 1, and those of them where the candidates of at least one sampled write
    /// were judged.
    pub runs: u64,
    pub sampled_runs: u64,
    /// Of the sampled runs: the last sampled write's first draw, and the proposed draw, passed
    /// every check on their scratch view (first draws: a pass@1 estimate at that write).
    pub first_draw_passed: u64,
    pub chosen_draw_passed: u64,
    /// Of the sampled runs: the candidates drawn over all their sampled writes, first draws
    /// included (drawing stops at a clean candidate: the cost of sampling).
    pub draws: u64,
    /// Of the runs with K > 1: the verdicts (best-of-K).
    pub passes: u64,
}

fn sampling(runs: &[&RunResult]) -> Option<SamplingFigures> {
    let sampled: Vec<&&RunResult> = runs
        .iter()
        .filter(|r| r.samples.is_some_and(|k| k > 1))
        .collect();
    let samples = sampled.iter().filter_map(|r| r.samples).max()?;
    let with_write: Vec<&&&RunResult> = sampled
        .iter()
        .filter(|r| r.first_draw_passed.is_some())
        .collect();
    Some(SamplingFigures {
        samples,
        runs: sampled.len() as u64,
        sampled_runs: with_write.len() as u64,
        first_draw_passed: with_write
            .iter()
            .filter(|r| r.first_draw_passed == Some(true))
            .count() as u64,
        chosen_draw_passed: with_write
            .iter()
            .filter(|r| r.chosen_draw_passed == Some(true))
            .count() as u64,
        draws: with_write
            .iter()
            .map(|r| u64::from(r.sample_draws.unwrap_or(1)))
            .sum(),
        passes: sampled.iter().filter(|r| r.passed).count() as u64,
    })
}

impl SamplingFigures {
    /// One sentence for the reports.
    pub fn sentence(&self, model: &str) -> String {
        format!(
            "{model}: verified sampling, up to {k} candidates per deliverable write (drawing \
             stops at one that passes every check a scratch view can rule on): its pass rate is \
             best-of-{k} ({passes} of {runs} runs), not pass@1; {sampled} runs judged candidates \
             of a write ({draws} drawn in all), where the first draw passed on its scratch view \
             in {first} and the proposed draw in {chosen} (run with --samples 1 for pass@1: a \
             mission's budgets.samples also samples)",
            k = self.samples,
            passes = self.passes,
            runs = self.runs,
            sampled = self.sampled_runs,
            first = self.first_draw_passed,
            chosen = self.chosen_draw_passed,
            draws = self.draws,
        )
    }
}

/// A run one model passed and the other failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Discordant {
    pub suite: String,
    pub task: String,
    pub repeat: u32,
    /// The model that passed it.
    pub passed_by: String,
}

/// Two models on the same (suite, task, repeat) runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub model_a: String,
    pub model_b: String,
    /// Runs both models have.
    pub pairs: u64,
    pub both_pass: u64,
    pub both_fail: u64,
    /// A passed, B failed.
    pub only_a: u64,
    /// B passed, A failed.
    pub only_b: u64,
    /// Exact two-sided McNemar p-value on (only_a, only_b).
    pub p_value: f64,
    pub discordant: Vec<Discordant>,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub runs: u64,
    pub suites: Vec<String>,
    pub models: Vec<ModelReport>,
    pub comparisons: Vec<Comparison>,
    /// The results it was built from, in canonical order.
    #[serde(skip)]
    pub results: Vec<RunResult>,
}

impl Report {
    /// Builds the report of a set of results (any order).
    pub fn build(results: &[RunResult]) -> Report {
        let mut results = results.to_vec();
        sort_canonical(&mut results);
        let mut by_model: BTreeMap<&str, Vec<&RunResult>> = BTreeMap::new();
        for r in &results {
            by_model.entry(r.model.as_str()).or_default().push(r);
        }
        let models: Vec<ModelReport> = by_model
            .iter()
            .map(|(model, runs)| {
                let mut by_cat: BTreeMap<&str, Vec<&RunResult>> = BTreeMap::new();
                for r in runs {
                    by_cat.entry(r.category.as_str()).or_default().push(r);
                }
                let identities: BTreeSet<String> =
                    runs.iter().map(|r| r.model_identity.clone()).collect();
                ModelReport {
                    model: (*model).to_string(),
                    identities: identities.into_iter().collect(),
                    overall: group(ALL, runs),
                    categories: by_cat.iter().map(|(c, rs)| group(c, rs)).collect(),
                    sampling: sampling(runs),
                    contexts: runs
                        .iter()
                        .filter_map(|r| r.context)
                        .collect::<BTreeSet<u32>>()
                        .into_iter()
                        .collect(),
                }
            })
            .collect();
        let names: Vec<&str> = by_model.keys().copied().collect();
        let mut comparisons = Vec::new();
        for (i, a) in names.iter().enumerate() {
            for b in &names[i + 1..] {
                comparisons.push(compare(&results, a, b));
            }
        }
        let suites: BTreeSet<String> = results.iter().map(|r| r.suite.clone()).collect();
        Report {
            runs: results.len() as u64,
            suites: suites.into_iter().collect(),
            models,
            comparisons,
            results,
        }
    }
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

fn group(category: &str, runs: &[&RunResult]) -> GroupStats {
    let n = runs.len() as u64;
    let passes = runs.iter().filter(|r| r.passed).count() as u64;
    let (wilson_low, wilson_high) = wilson(passes, n);
    let mut per_task: BTreeMap<(&str, &str), (u64, u64)> = BTreeMap::new();
    for r in runs {
        let e = per_task.entry((&r.suite, &r.task)).or_default();
        e.1 += 1;
        if r.passed {
            e.0 += 1;
        }
    }
    let counts: Vec<(u64, u64)> = per_task.values().copied().collect();
    let k = counts.iter().map(|c| c.1).min().unwrap_or(0);
    let steps: Vec<f64> = runs.iter().map(|r| f64::from(r.steps)).collect();
    let walls: Vec<f64> = runs.iter().map(|r| r.wall_ms as f64).collect();
    let tps: Vec<f64> = runs
        .iter()
        .filter(|r| r.wall_ms > 0)
        .map(|r| r.completion_tokens as f64 * 1000.0 / r.wall_ms as f64)
        .collect();
    let total_steps: u64 = runs.iter().map(|r| u64::from(r.steps)).sum();
    let format_errors: u64 = runs.iter().map(|r| u64::from(r.format_errors)).sum();
    let repairs: u64 = runs.iter().map(|r| u64::from(r.repairs)).sum();
    let caps = runs.iter().filter(|r| r.cap_hit).count() as u64;
    let timed: Vec<&&RunResult> = runs.iter().filter(|r| r.total_ms > 0).collect();
    let total_ms: u64 = timed.iter().map(|r| r.total_ms).sum();
    let model_ms: u64 = timed.iter().map(|r| r.model_ms.min(r.total_ms)).sum();
    GroupStats {
        category: category.to_string(),
        runs: n,
        passes,
        pass_rate: ratio(passes, n).unwrap_or(0.0),
        wilson_low,
        wilson_high,
        tasks: counts.len() as u64,
        k,
        mean_pass_rate: mean_pass_rate(&counts),
        pass_hat_k: pass_hat_k(&counts, k),
        median_steps: median(&steps),
        median_wall_ms: median(&walls),
        median_tokens_per_s: median(&tps),
        format_error_rate: ratio(format_errors, total_steps),
        repair_rate: ratio(repairs, total_steps),
        cap_hit_rate: ratio(caps, n),
        harness_overhead: ratio(total_ms - model_ms, total_ms),
        tasks_per_minute: ratio(timed.len() as u64 * 60_000, total_ms),
        wall_ms: runs.iter().map(|r| r.wall_ms).collect(),
        steps: runs.iter().map(|r| r.steps).collect(),
        passed: runs.iter().map(|r| r.passed).collect(),
    }
}

/// Pairs the runs of `a` and `b` on (suite, task, repeat); `results` are in canonical order.
pub fn compare(results: &[RunResult], a: &str, b: &str) -> Comparison {
    let index = |m: &str| -> BTreeMap<(String, String, u32), bool> {
        results
            .iter()
            .filter(|r| r.model == m)
            .map(|r| ((r.suite.clone(), r.task.clone(), r.repeat), r.passed))
            .collect()
    };
    let ra = index(a);
    let rb = index(b);
    let mut c = Comparison {
        model_a: a.to_string(),
        model_b: b.to_string(),
        pairs: 0,
        both_pass: 0,
        both_fail: 0,
        only_a: 0,
        only_b: 0,
        p_value: 1.0,
        discordant: Vec::new(),
    };
    for (key, pa) in &ra {
        let Some(pb) = rb.get(key) else { continue };
        c.pairs += 1;
        match (pa, pb) {
            (true, true) => c.both_pass += 1,
            (false, false) => c.both_fail += 1,
            (true, false) | (false, true) => {
                let winner = if *pa { a } else { b };
                if *pa {
                    c.only_a += 1;
                } else {
                    c.only_b += 1;
                }
                c.discordant.push(Discordant {
                    suite: key.0.clone(),
                    task: key.1.clone(),
                    repeat: key.2,
                    passed_by: winner.to_string(),
                });
            }
        }
    }
    c.p_value = mcnemar_exact(c.only_a, c.only_b);
    c
}
