//! The judge on trial for a whole suite: `check_mission` on every task's gold deliverable(s) and
//! near misses, with the counts per task and per suite.

use rein_engine::cases::{check_mission_in, CaseReport, CaseSandbox};
use serde::Serialize;

use crate::error::BenchError;
use crate::suite::{Sandbox, Suite};

/// One task's cases, judged.
#[derive(Debug, Clone, Serialize)]
pub struct TaskCheck {
    pub task: String,
    pub category: String,
    pub split: String,
    /// The judge is right on every case of this task.
    pub ok: bool,
    pub report: CaseReport,
}

/// A suite's tasks, judged, with the suite's totals.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteCheck {
    pub suite: String,
    pub tasks: Vec<TaskCheck>,
    pub gold: usize,
    pub gold_passed: usize,
    pub near_misses: usize,
    pub near_misses_failed: usize,
    pub false_passes: usize,
    pub false_fails: usize,
    pub wrong_catcher: usize,
    /// The judge is right on every case of every task.
    pub ok: bool,
}

/// Runs the judge on every case of every task of the suite.
pub fn check_suite(suite: &Suite) -> Result<SuiteCheck, BenchError> {
    let mut tasks = Vec::with_capacity(suite.tasks.len());
    for t in &suite.tasks {
        let sandbox = match t.sandbox {
            Sandbox::Dir => CaseSandbox::Dir,
            Sandbox::Memory => CaseSandbox::Memory,
        };
        let report =
            check_mission_in(&t.contract, sandbox).map_err(|source| BenchError::Cases {
                task: format!("{}/{}", suite.name, t.id),
                source,
            })?;
        tasks.push(TaskCheck {
            task: t.id.clone(),
            category: t.category.clone(),
            split: t.split.as_str().to_string(),
            ok: report.ok(),
            report,
        });
    }
    let sum = |f: fn(&CaseReport) -> usize| tasks.iter().map(|t| f(&t.report)).sum::<usize>();
    let gold = sum(|r| r.gold);
    let gold_passed = sum(|r| r.gold_passed);
    let near_misses = sum(|r| r.near_misses);
    let near_misses_failed = sum(|r| r.near_misses_failed);
    let false_passes = sum(|r| r.false_passes);
    let false_fails = sum(|r| r.false_fails);
    let wrong_catcher = sum(|r| r.wrong_catcher);
    let ok = !tasks.is_empty() && tasks.iter().all(|t| t.ok);
    Ok(SuiteCheck {
        suite: suite.name.clone(),
        tasks,
        gold,
        gold_passed,
        near_misses,
        near_misses_failed,
        false_passes,
        false_fails,
        wrong_catcher,
        ok,
    })
}
