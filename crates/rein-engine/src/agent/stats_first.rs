//! Lever `stats-first`: before the model's first step, Rein makes the `table_stats` calls that
//! the task's hints name (a figure of a named CSV column that a `numeric_consistency` check
//! computes, or a count of the rows a filter picks), through the gate like any call, and the
//! transcript starts with those calls and their results, each the figures it gives in the
//! requirements' words. A row count rides on a call over the same rows when there is one (a
//! count of every row on any call over the file, as its `rows_in_file`); a count of every row
//! that no call covers is left to the model (counting a file's rows can be
//! the task itself, explore-csv-rows, and no hint names it).
//!
//! The 1.5B, told "call table_stats with ... and copy the sum", wrote its own sums instead on
//! the desk suite's report and summarize tasks (no `table_stats` call in any attempt). The
//! figures are facts of the frozen inputs, computed by the tool the task already names; which
//! line each goes on, and everything else in the deliverable, stays the model's, and the judge
//! checks the file as before. A call whose figure is not one the judge would accept for its
//! check (`table_stats` filters ignoring case, the judge does not; the two read blank rows
//! differently) is made and journaled but never shown: Rein must not hand the model a wrong
//! number, and nothing of the judge's value is said. On a bench the lever measures copying a
//! given figure onto the asked line, not finding it: compare models only with the same levers.
//!
//! Only figures of a table (`numeric_consistency` with `from: csv`); never a count of log
//! lines or matches, where which lines count is the task's answer, nor where a check judges
//! the run's calls.

use rein_protocol::{ChatMessage, GateOutcome, GateReport};
use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::Value;

use super::inputs_first::{action_text, INPUTS_FIRST_MAX_CHARS};
use super::named_rows::{groups_disputed, groups_text, largest_across_calls, rows_text};
use super::prompt::clip;
use super::stated::{stated_line, stated_template};
use crate::checks::{
    judge_agrees, read_whole_at, table_stats_call, table_stats_group_call, CheckSpec, TraceEntry,
    World,
};
use crate::mission::FrozenContract;

/// The field of `table_stats`' answer that counts every data row of the file, whatever the
/// filter.
const ROWS_IN_FILE: &str = "rows_in_file";

/// At most this many calls are made up front (each result is about 300 characters); the
/// journal says when figures were left to the model.
pub const STATS_FIRST_MAX_CALLS: usize = 12;

/// Most characters of one figure the transcript shows (a figure is a number; this only
/// bounds what a malformed answer could put in the prompt).
pub(super) const MAX_VALUE_CHARS: usize = 40;

/// One figure of the contract a call gives: the requirement's words for it, the field of the
/// answer that holds it, and the check that computes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub words: String,
    pub field: &'static str,
    pub check: CheckSpec,
    /// The line the task asks for with this figure (`'Travel: N EUR'`), when the check reads
    /// its number from that line (see [`stated_template`]).
    pub line: Option<String>,
    /// Lever `named-rows`, a figure grouped by its check's filter column: the filter's value,
    /// whose group of the answer holds the figure (never shown as such).
    pub group: Option<String>,
    /// Lever `named-rows`, a largest or smallest figure: the field of the answer with the rows
    /// that hold it (`max_rows`).
    pub rows: Option<&'static str>,
}

impl Figure {
    fn of(
        call: &crate::checks::TableStatsCall,
        check: &CheckSpec,
        prompt: &str,
        named_rows: bool,
    ) -> Figure {
        let rows = match call.field {
            "max" if named_rows && call.group.is_none() => Some("max_rows"),
            "min" if named_rows && call.group.is_none() => Some("min_rows"),
            _ => None,
        };
        Figure {
            words: call.figure.clone(),
            field: call.field,
            check: check.clone(),
            // A grouped figure's line would name the value the check picks.
            line: stated_template(check, prompt).filter(|_| call.group.is_none()),
            group: call.group.clone(),
            rows,
        }
    }

    /// `raw`, a figure of the tool's answer, as the check asks it written: with a `decimals`
    /// rule, rounded to that many (half away from zero, on the decimal digits) and padded to
    /// them; otherwise as the tool gave it. The 1.5B copied `table_stats`' mean `1073.333333`
    /// onto a line the task asks with one decimal, and a line field holding two decimals cut
    /// `1333.677333` to `1333.67`: both wrong by the judge. A figure that does not parse is
    /// left as it is (the judge then decides whether it is shown).
    pub(super) fn written(&self, raw: &str) -> String {
        let Some(n) = self.check.decimals() else {
            return raw.to_string();
        };
        match raw.trim().parse::<Decimal>() {
            Ok(value) => {
                let mut rounded = value
                    .round_dp_with_strategy(u32::from(n), RoundingStrategy::MidpointAwayFromZero);
                rounded.rescale(u32::from(n));
                // A figure too large to hold its decimals keeps fewer: left as the tool gave
                // it, so the judge's decimals rule withholds it.
                if rounded.scale() == u32::from(n) {
                    rounded.to_string()
                } else {
                    raw.to_string()
                }
            }
            Err(_) => raw.to_string(),
        }
    }

    /// This figure in the call's answer `result`: its field, or for a grouped figure that field
    /// of the group whose value is the check's filter value as the judge compares it (trimmed,
    /// case and all).
    pub(super) fn value_in<'a>(&self, result: &'a Value) -> Option<&'a Value> {
        match &self.group {
            None => result.get(self.field),
            Some(g) => result
                .get("groups")?
                .as_array()?
                .iter()
                .find(|x| x.get("group").and_then(Value::as_str) == Some(g.as_str()))?
                .get(self.field),
        }
    }
}

/// A figure of a tool's answer as the tool wrote it: a string's text, or a number's digits.
pub(super) fn raw_text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// Adds `figure` to the call with `params`, made a new call if there is none yet.
fn add_figure(calls: &mut Vec<StatsCall>, params: Value, figure: Figure) {
    match calls.iter_mut().find(|c| c.params == params) {
        Some(c) => c.figures.push(figure),
        None => calls.push(StatsCall {
            params,
            figures: vec![figure],
        }),
    }
}

/// One call Rein makes, and the contract's figures it gives.
#[derive(Debug, Clone, PartialEq)]
pub struct StatsCall {
    pub params: Value,
    pub figures: Vec<Figure>,
}

impl StatsCall {
    /// Whether its result shows groups or the rows that hold a figure (lever `named-rows`),
    /// which makes its turn longer.
    pub fn shows_rows(&self) -> bool {
        self.figures
            .iter()
            .any(|f| f.group.is_some() || f.rows.is_some())
    }
}

/// What Rein will do before the first step: the calls, and notes on the figures it leaves to
/// the model (over the cap, or a count of every row that no call covers).
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub calls: Vec<StatsCall>,
    pub left: Vec<String>,
}

/// The calls Rein makes before the first step, in the contract's order: the calls the task's
/// hints name (a figure of a named column, a count of the rows a filter picks), a row count
/// riding on a call over the same rows when there is one; or why it makes none. A count of
/// every row that no call covers is left to the model: counting rows can be the whole task
/// (explore-csv-rows), and no hint names it.
///
/// With `named_rows` (lever `named-rows`), a check whose filter value the task does not say
/// gets a call grouped by the filter's column ([`table_stats_group_call`]), and a largest or
/// smallest figure is shown with the rows that hold it.
pub fn calls_to_make(
    contract: &FrozenContract,
    tools: &[String],
    named_rows: bool,
) -> Result<Planned, String> {
    if !tools.iter().any(|t| t == "table_stats") {
        return Err("the run does not offer table_stats (lever facts-tools)".into());
    }
    let checks = &contract.mission.checks;
    if let Some(c) = checks
        .iter()
        .find(|c| matches!(c.spec, CheckSpec::ActionsCalled { .. }))
    {
        return Err(format!(
            "check `{}` judges the run's calls: they stay the model's",
            c.id
        ));
    }
    let wanted: Vec<_> = checks
        .iter()
        .filter_map(|c| {
            let prompt = &contract.mission.prompt;
            table_stats_call(&c.spec, prompt)
                .or_else(|| named_rows.then(|| table_stats_group_call(&c.spec, prompt))?)
                .map(|call| (call, c.spec.clone()))
        })
        .collect();
    if wanted.is_empty() {
        return Err("no check of the contract is a figure of a table".into());
    }
    let mut calls: Vec<StatsCall> = Vec::new();
    let mut left = Vec::new();
    // Named calls first, so a count finds the call it rides on wherever its check stands.
    for (call, check) in wanted
        .iter()
        .filter(|(c, _)| c.params.get("column").is_some())
    {
        let figure = Figure::of(call, check, &contract.mission.prompt, named_rows);
        add_figure(&mut calls, call.params.clone(), figure);
    }
    // Counts over a filter's rows before those of every row, which may ride on their calls.
    let counts = wanted
        .iter()
        .filter(|(c, _)| c.params.get("column").is_none());
    let every_row = |c: &crate::checks::TableStatsCall| c.params.get("filter_column").is_none();
    for (call, check) in counts
        .clone()
        .filter(|(c, _)| !every_row(c))
        .chain(counts.filter(|(c, _)| every_row(c)))
    {
        let figure = Figure::of(call, check, &contract.mission.prompt, named_rows);
        let same_rows = |c: &&mut StatsCall| {
            ["path", "filter_column", "filter_value"]
                .iter()
                .all(|k| c.params.get(k) == call.params.get(k))
        };
        if let Some(c) = calls.iter_mut().find(same_rows) {
            c.figures.push(figure);
            continue;
        }
        // A count of every row rides on a call over some of the same file's rows too: its
        // answer counts the file's rows as `rows_in_file`. The 1.5B counted summarize-support-
        // week's 40 tickets as 10, with the open and high-priority ones given.
        let same_file = |c: &&mut StatsCall| c.params.get("path") == call.params.get("path");
        if every_row(call) {
            if let Some(c) = calls.iter_mut().find(same_file) {
                c.figures.push(Figure {
                    field: ROWS_IN_FILE,
                    ..figure
                });
                continue;
            }
        }
        match call.named() {
            Some(params) => add_figure(&mut calls, params, figure),
            None => left.push(format!(
                "{}: a count of every row, which no hint names",
                call.figure
            )),
        }
    }
    if calls.is_empty() {
        return Err("no figure of the contract is one a table_stats hint names".into());
    }
    if calls.len() > STATS_FIRST_MAX_CALLS {
        left.push(format!(
            "{} calls; only the first {STATS_FIRST_MAX_CALLS} were made, the model makes the others",
            calls.len()
        ));
        calls.truncate(STATS_FIRST_MAX_CALLS);
    }
    Ok(Planned { calls, left })
}

/// What [`tables_to_read`] decided: the tables to read, notes on those left to the model, and
/// the characters of those read (for the first prompt's room).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TablesToRead {
    pub read: Vec<String>,
    pub left: Vec<String>,
    pub chars: usize,
}

/// The tables Rein reads whole before its calls (their names are the calls' own, which the
/// task's hints already say): each one not read whole yet, while they fit in
/// [`INPUTS_FIRST_MAX_CHARS`] together; and notes on those left to the model. The 1.5B, given
/// the figures, wrote the report without reading the table (report-deploys,
/// report-energy-meters: `inputs-read` failed), and the rows it lists come from the file.
pub fn tables_to_read(
    planned: &Planned,
    world: &dyn World,
    trace: &[TraceEntry],
    tools: &[String],
) -> TablesToRead {
    let mut read = Vec::new();
    let mut left = Vec::new();
    if !tools.iter().any(|t| t == "read_file") {
        return TablesToRead::default();
    }
    let mut chars = 0usize;
    for call in &planned.calls {
        let Some(path) = call.params.get("path").and_then(Value::as_str) else {
            continue;
        };
        if read.iter().any(|r| r == path) || read_whole_at(trace, path).is_some() {
            continue;
        }
        let Ok(Some(bytes)) = world.read(path) else {
            continue;
        };
        let size = String::from_utf8_lossy(&bytes).chars().count();
        if chars + size > INPUTS_FIRST_MAX_CHARS {
            left.push(format!(
                "{path}: not read up front ({size} characters; at most {INPUTS_FIRST_MAX_CHARS} are read up front)"
            ));
            continue;
        }
        chars += size;
        read.push(path.to_string());
    }
    TablesToRead { read, left, chars }
}

/// Why a made call is not shown to the model, if it is not: it did not run, or one of its
/// figures is not a number the judge would accept for its check (a tool that reads the table
/// otherwise than the judge must not hand the model a wrong number).
pub fn withheld_because(
    contract: &FrozenContract,
    world: &dyn World,
    call: &StatsCall,
    report: &GateReport,
) -> Option<String> {
    if report.outcome != GateOutcome::Executed {
        return Some(format!("the call was {}", report.outcome.as_str()));
    }
    for f in &call.figures {
        if f.group.is_some() {
            if let Some(why) = groups_disputed(contract, world, f, &report.result) {
                return Some(why);
            }
        }
        let value = f.value_in(&report.result).map(|v| f.written(&raw_text(v)));
        match value {
            Some(v) if judge_agrees(contract, world, &f.check, &v) => {}
            Some(v) => {
                return Some(format!(
                    "its \"{}\" ({v}) is not the figure the check computes from the same file",
                    f.field
                ))
            }
            None => return Some(format!("its answer has no \"{}\"", f.field)),
        }
    }
    None
}

/// The turns the transcript's head carries for Rein's shown calls: each as the call the model
/// would have made, and its result with the figures it gives; with `named_rows`, after them,
/// which value's figure is the largest where calls gave one figure for each of several values
/// of a column (see [`largest_across_calls`]).
pub fn stats_turns(shown: &[(StatsCall, GateReport)], named_rows: bool) -> Vec<ChatMessage> {
    let mut turns = Vec::new();
    let mut gave_a_line = false;
    for (i, (call, report)) in shown.iter().enumerate() {
        let of = |k: &str| call.params.get(k).and_then(Value::as_str).unwrap_or("");
        let thought = format!(
            "Get the figures of column {} of {} with table_stats.",
            of("column"),
            of("path")
        );
        turns.push(ChatMessage::assistant(action_text(
            &thought,
            "table_stats",
            &call.params.to_string(),
        )));
        let label = format!(
            "Result of Rein's table_stats call {} (made for you before your first step)",
            i + 1
        );
        let (text, lines) = result_text(&label, call, report);
        gave_a_line |= lines;
        turns.push(ChatMessage::user(text));
    }
    if let Some(last) = turns.last_mut().filter(|_| named_rows) {
        for line in largest_across_calls(shown) {
            last.content.push('\n');
            last.content.push_str(&line);
        }
    }
    // The 1.5B wrote a section's lines as one comma-separated line (`Math average: 78.1, Math
    // best: 96`), which the judge reads as one number followed by text.
    if let Some(last) = turns.last_mut().filter(|_| gave_a_line) {
        last.content.push_str(LINES_APART);
    }
    turns
}

/// Said after the last result when any result gave a task's line.
const LINES_APART: &str =
    "\nWrite each of the task's lines on a line of its own, as the task quotes it, not several on one line.";

/// A shown call's result: each figure of the contract it gives, in the requirement's words,
/// and nothing else of the answer (its distinct values alone can fill a small model's context:
/// the 1.5B's prompt on report-expenses went over its 6,144-token window at the second step
/// when every answer was shown whole). Also whether it gave a task's own line.
fn result_text(label: &str, call: &StatsCall, report: &GateReport) -> (String, bool) {
    let mut s = format!("{label}: executed");
    let mut gave_a_line = false;
    // One figure of a call that two checks ask for on different lines (`Travel: N` and `Top
    // category: N` both the travel sum): a line would say which row the other is about.
    let ambiguous: Vec<&str> = call
        .figures
        .iter()
        .filter(|f| {
            // A grouped figure is no line of its own (its groups are listed apart).
            f.group.is_none()
                && call
                    .figures
                    .iter()
                    .any(|g| g.group.is_none() && g.field == f.field && g.line != f.line)
        })
        .map(|f| f.field)
        .collect();
    // One figure asked by two checks is said once, unless they ask it with other decimals.
    let mut said: Vec<(&str, &str, Option<u8>)> = Vec::new();
    for f in &call.figures {
        let key = (f.words.as_str(), f.field, f.check.decimals());
        if said.contains(&key) {
            continue;
        }
        said.push(key);
        if f.group.is_some() {
            s.push_str(&format!(
                "\n{}:{}",
                capitalised(&f.words),
                groups_text(&report.result, f)
            ));
            continue;
        }
        if let Some(v) = report.result.get(f.field) {
            let v = f.written(&raw_text(v));
            let shown = clip(&v, MAX_VALUE_CHARS);
            s.push_str(&format!(
                "\n{}: {shown} (its \"{}\")",
                capitalised(&f.words),
                f.field
            ));
            // The task's own line with the figure in it (never a clipped figure): the 1.5B
            // pasted the figures' descriptions into the report instead of the lines the task
            // asked for.
            if let Some(line) = f
                .line
                .as_ref()
                .filter(|_| shown == v && !ambiguous.contains(&f.field))
                .and_then(|template| stated_line(&f.check, template, &v))
            {
                s.push_str(&format!("\nThe task's line with it: {line}"));
                gave_a_line = true;
            }
            if let Some(rows) = f.rows.and_then(|k| rows_text(&report.result, k)) {
                s.push_str(&format!("\n{rows}"));
            }
        }
    }
    (s, gave_a_line)
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Check;
    use serde_json::json;

    fn figure(words: &str, field: &'static str) -> Figure {
        let c: Check = serde_json::from_value(json!({
            "id": "x", "kind": "numeric_consistency", "path": "out/r.md",
            "stated": {"regex": "(?im)^x:\\s*(.*)$"},
            "expected": {"from": "csv", "path": "s.csv", "op": "sum", "column": "amount"}
        }))
        .unwrap();
        Figure {
            words: words.into(),
            field,
            check: c.spec,
            line: None,
            group: None,
            rows: None,
        }
    }

    #[test]
    fn a_result_shows_only_the_contract_s_figures() {
        let call = StatsCall {
            params: json!({"path": "s.csv", "column": "amount"}),
            figures: vec![
                figure("the sum of the column \"amount\" of `s.csv`", "sum"),
                figure("the number of data rows of `s.csv`", "rows"),
                figure("the sum of the column \"amount\" of `s.csv`", "sum"),
            ],
        };
        let report = GateReport {
            outcome: GateOutcome::Executed,
            result: json!({"path": "s.csv", "column": "amount", "rows_in_file": 3, "rows": 3,
                           "sum": "12.5", "distinct": [{"value": "4", "rows": 1}],
                           "non_numeric_examples": ["x".repeat(100_000)]}),
            reason: String::new(),
        };
        let (text, gave_a_line) = result_text("Result", &call, &report);
        assert!(!gave_a_line, "no figure has a line");
        assert!(!text.contains("distinct"), "{text}");
        assert!(!text.contains("xxxx"), "{text}");
        assert!(
            text.contains("The sum of the column \"amount\" of `s.csv`: 12.5 (its \"sum\")"),
            "{text}"
        );
        assert_eq!(text.matches("(its \"sum\")").count(), 1, "{text}");
        assert!(
            text.contains("The number of data rows of `s.csv`: 3 (its \"rows\")"),
            "{text}"
        );
    }

    #[test]
    fn rein_s_call_is_written_as_the_model_writes_one() {
        let call = StatsCall {
            params: json!({"path": "s.csv", "column": "amount"}),
            figures: vec![figure("the sum", "sum"), figure("the mean", "mean")],
        };
        let report = GateReport {
            outcome: GateOutcome::Executed,
            result: json!({"sum": "1", "mean": "1"}),
            reason: String::new(),
        };
        let turns = stats_turns(&[(call, report)], false);
        let action: Value = serde_json::from_str(&turns[0].content).unwrap();
        assert_eq!(
            action["thought"],
            "Get the figures of column amount of s.csv with table_stats."
        );
        assert_eq!(action["action"], "table_stats");
        assert_eq!(
            action["parameters"],
            json!({"path": "s.csv", "column": "amount"})
        );
    }
}
