//! Lever `folder-stats`: before the first step of a task that counts files, lines or rows of
//! its inputs, Rein calls `folder_stats` on the folder the inputs share, through the gate like
//! any call, and the transcript starts with that call and its result.
//!
//! The 1.5B, asked to count the rows of six CSV files, read each one and wrote its character
//! count as its row count; asked to count letters per year, it read one letter and wrote five
//! for every year; asked for the longest log and the total of lines, it left both lines out
//! (desk suite, explore, 0 of 6 with the search levers). The figures are facts of the frozen
//! inputs, computed by a tool the model is offered too; which files the task means (the README
//! that is not a letter, the config files among the notes) and which line each figure goes on
//! stay the model's, and the judge checks the file as before.
//!
//! A file's `rows` or `lines` that a check counts otherwise than the tool (the tool does not
//! count blank rows; the judge reads every file as UTF-8, replacing what is not) is withheld,
//! with the totals and largest they feed: Rein never hands the model a wrong number, and
//! nothing of the judge's value is said.

use serde_json::{json, Value};

use super::task_search::inputs_folder;
use crate::checks::{judge_agrees, Aggregate, CheckSpec, Computed, World};
use crate::mission::FrozenContract;

/// The tool this lever offers and calls.
pub const FOLDER_STATS: &str = "folder_stats";

/// Line-count patterns that match every line, so a check with one counts what `lines` says.
const EVERY_LINE: &[&str] = &["^", "", "(?m)^", ".*", "^.*", "(?m)^.*"];

/// The `folder_stats` parameters of the call Rein makes before the first step, or why it makes
/// none (the journal says so and the model counts for itself).
pub fn folder_facts_plan(contract: &FrozenContract, tools: &[String]) -> Result<Value, String> {
    let m = &contract.mission;
    if !tools.iter().any(|t| t == FOLDER_STATS) {
        return Err(format!("the run does not offer {FOLDER_STATS}"));
    }
    if m.inputs.is_empty() {
        return Err("the mission names no inputs to count".into());
    }
    // The judge counts every executed call of the trace: one that judges the calls would count
    // Rein's call as the model's.
    if let Some(c) = m
        .checks
        .iter()
        .find(|c| matches!(c.spec, CheckSpec::ActionsCalled { .. }))
    {
        return Err(format!(
            "check `{}` judges the run's calls: they stay the model's",
            c.id
        ));
    }
    if !m.checks.iter().any(|c| counts_inputs(&c.spec)) {
        return Err("no check counts files, lines or rows of the inputs".into());
    }
    Ok(json!({ "path": inputs_folder(&m.inputs) }))
}

/// Whether `spec` counts whole files (a match at the start of each), lines, or the rows of a
/// table, of the inputs.
fn counts_inputs(spec: &CheckSpec) -> bool {
    let CheckSpec::NumericConsistency { expected, .. } = spec else {
        return false;
    };
    match expected {
        Computed::Matches { pattern, op, .. } => {
            *op == Aggregate::Count && matches!(pattern.as_str(), "\\A" | "^" | "\\A(?s:.)")
        }
        Computed::Lines { .. } => true,
        Computed::Csv { op, filter, .. } => *op == Aggregate::Count && filter.is_none(),
        Computed::Json { .. } => false,
    }
}

/// Takes out of a `folder_stats` result every file's figure that a check of the contract counts
/// otherwise (see the module's note), and with it the totals and largest it feeds. Returns the
/// paths whose figures were withheld.
pub fn withhold_disputed(
    contract: &FrozenContract,
    world: &dyn World,
    result: &mut Value,
) -> Vec<String> {
    let mut withheld = Vec::new();
    let mut fields_cut: Vec<&str> = Vec::new();
    let Some(list) = result.get_mut("list").and_then(Value::as_array_mut) else {
        return withheld;
    };
    for check in &contract.mission.checks {
        let CheckSpec::NumericConsistency { expected, .. } = &check.spec else {
            continue;
        };
        let (path, field) = match expected {
            Computed::Csv {
                path,
                op: Aggregate::Count,
                filter: None,
                ..
            } => (path, "rows"),
            Computed::Lines { path, pattern } if EVERY_LINE.contains(&pattern.as_str()) => {
                (path, "lines")
            }
            _ => continue,
        };
        let wanted = path.trim_start_matches("./");
        let Some(entry) = list.iter_mut().find(|f| f["path"] == wanted) else {
            continue;
        };
        let figure = entry.get(field).map(Value::to_string);
        let agrees = figure
            .as_deref()
            .is_some_and(|n| judge_agrees(contract, world, &check.spec, n));
        if !agrees && figure.is_some() {
            entry.as_object_mut().map(|o| o.remove(field));
            entry["withheld"] = json!(format!(
                "{field}: this file is counted otherwise by the task's check; count it yourself"
            ));
            withheld.push(wanted.to_string());
            fields_cut.push(field);
        }
    }
    for field in fields_cut {
        let (total, most) = if field == "rows" {
            ("total_rows", "most_rows")
        } else {
            ("total_lines", "most_lines")
        };
        if let Some(o) = result.as_object_mut() {
            o.remove(total);
            o.remove(most);
        }
    }
    withheld
}
