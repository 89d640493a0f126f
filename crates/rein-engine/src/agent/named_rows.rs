//! Lever `named-rows` (with `stats-first`): what a grouped figure's answer and the rows holding a
//! largest or smallest figure show the model, and when a grouped answer may not be shown. The
//! calls themselves are planned in [`super::stats_first`]; the grouped call is
//! [`crate::checks::table_stats_group_call`].

use rein_workspace::desk::parse_number;
// One line each, control characters escaped: no cell of a table can write a line of Rein's
// result (a red team's category cell forged a group and a "The largest of them" line).
use rein_workspace::printable;
use serde_json::Value;

use super::prompt::clip;
use super::stats_first::{raw_text, Figure, StatsCall, MAX_VALUE_CHARS};
use crate::checks::{judge_agrees, Aggregate, CheckSpec, Computed, World};
use crate::mission::FrozenContract;
use rein_protocol::GateReport;

/// Why a grouped figure's answer may not be shown, if it may not: every group is shown and the
/// largest named, so each must be the figure the judge computes for its own value (the check
/// with that filter value), not only the check's own group: whether a call is shown, and what
/// it says, must not depend on which value the check picks. A cut list (past the tool's
/// [`TABLE_MAX_DISTINCT`](rein_workspace::desk::TABLE_MAX_DISTINCT) groups) or a group without
/// the figure withholds it too. The reasons name no group.
pub(super) fn groups_disputed(
    contract: &FrozenContract,
    world: &dyn World,
    figure: &Figure,
    result: &Value,
) -> Option<String> {
    if result.get("groups_truncated").is_some() {
        return Some("the tool listed only some of the groups, so not every one could be compared with the judge".into());
    }
    let Some(groups) = result.get("groups").and_then(Value::as_array) else {
        return Some("its answer has no groups".into());
    };
    for g in groups {
        let name = g.get("group").and_then(Value::as_str);
        let value = g.get(figure.field).map(|v| figure.written(&raw_text(v)));
        let (Some(name), Some(value)) = (name, value) else {
            return Some(format!("a group of its answer has no \"{}\"", figure.field));
        };
        let agrees = with_filter_value(&figure.check, name)
            .is_some_and(|check| judge_agrees(contract, world, &check, &value));
        if !agrees {
            return Some(format!(
                "a group's \"{}\" is not the figure the check computes for that group",
                figure.field
            ));
        }
    }
    None
}

/// `check` (a `numeric_consistency` check on a CSV with a filter) with its filter's value set
/// to `value`; `None` for any other check.
fn with_filter_value(check: &CheckSpec, value: &str) -> Option<CheckSpec> {
    let mut check = check.clone();
    let CheckSpec::NumericConsistency {
        expected: Computed::Csv {
            filter: Some(filter),
            ..
        },
        ..
    } = &mut check
    else {
        return None;
    };
    filter.equals = value.to_string();
    Some(check)
}

/// Most groups a grouped figure's result lists; it says how many it left out.
pub const GROUPS_SHOWN: usize = 12;

/// Most characters of a column name or cell of such a row (the tool cuts cells at 100 and says
/// so; this bounds a header the tool does not cut).
const ROW_CELL_CHARS: usize = 160;

/// Most characters of the rows shown with a largest or smallest figure.
const ROWS_TEXT_MAX_CHARS: usize = 600;

/// Each group's figure (`figure.field`, written as its check asks) in a grouped answer, one
/// `value: figure` line each in the tool's order (by value, as a report lists them: the 1.5B,
/// given them largest first, wrote the warehouses in name order with the figures in the order
/// given), at most [`GROUPS_SHOWN`], saying how many more there are, then which is the largest
/// (compared exactly, as decimals). Shown only when every group agrees with the judge and none
/// was cut ([`groups_disputed`]).
pub(super) fn groups_text(result: &Value, figure: &Figure) -> String {
    let field = figure.field;
    let groups = result
        .get("groups")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let figures: Vec<ValueFigure> = groups
        .iter()
        .filter_map(|g| {
            let name = g.get("group")?.as_str()?;
            let v = g.get(field)?;
            let text = raw_text(v);
            // The largest is the exact figure's; each is shown as the check asks it written.
            let number = parse_number(&text)?;
            Some((
                printable(name, MAX_VALUE_CHARS),
                clip(&figure.written(&text), MAX_VALUE_CHARS),
                number,
            ))
        })
        .collect();
    let mut text: String = figures
        .iter()
        .take(GROUPS_SHOWN)
        .map(|(name, v, _)| format!("\n  {name}: {v}"))
        .collect();
    if figures.len() > GROUPS_SHOWN {
        text.push_str(&format!(
            "\n  ({} more not shown)",
            figures.len() - GROUPS_SHOWN
        ));
    }
    if let Some(largest) = largest_named(&figures) {
        text.push_str(&format!("\nThe largest of them{largest}"));
    }
    text
}

/// The value or values whose figure is the largest, compared exactly, as `: North (16515.17)` or
/// `, 2 equal: North (16515.17), East (16515.17)` (at most [`GROUPS_SHOWN`] named, saying how
/// many more); `None` for no figures.
fn largest_named(figures: &[ValueFigure]) -> Option<String> {
    let largest = figures.iter().map(|f| f.2).max()?;
    let top: Vec<String> = figures
        .iter()
        .filter(|f| f.2 == largest)
        .map(|f| format!("{} ({})", f.0, f.1))
        .collect();
    if let [one] = top.as_slice() {
        return Some(format!(": {one}"));
    }
    let more = top.len().saturating_sub(GROUPS_SHOWN);
    Some(format!(
        ", {} equal: {}{}",
        top.len(),
        top[..top.len() - more].join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}

/// One value of a filter column, its figure as shown, and the figure as an exact number.
type ValueFigure = (String, String, rust_decimal::Decimal);

/// Where Rein's shown calls give one figure of a kind (the same aggregate of the same column of
/// the same table) for each of several values of one column, one for each of them named by the
/// task (report-sales-regions: the sum of `amount` for North, South, East and West), a line
/// naming the value whose figure is the largest (compared exactly, as decimals), as a grouped
/// answer names it. The 1.5B, given the four sums, wrote no `Best region` line, then `North and
/// South are equal`. A fact of the inputs over the figures already shown; which line it goes
/// on stays the model's.
pub(crate) fn largest_across_calls(shown: &[(StatsCall, GateReport)]) -> Vec<String> {
    // (path, aggregate, column, filter column, field) -> each value's figure
    type Kind<'a> = (&'a str, Aggregate, Option<&'a str>, &'a str, &'static str);
    let mut kinds: Vec<(Kind<'_>, Vec<ValueFigure>)> = Vec::new();
    for (call, report) in shown {
        for f in call.figures.iter().filter(|f| f.group.is_none()) {
            let CheckSpec::NumericConsistency {
                expected:
                    Computed::Csv {
                        path,
                        op,
                        column,
                        filter: Some(filter),
                    },
                ..
            } = &f.check
            else {
                continue;
            };
            // A count names which value has the most rows, not which is "best" by the figures
            // a task compares (revenue, not orders).
            if *op == Aggregate::Count {
                continue;
            }
            let Some(raw) = f.value_in(&report.result).map(raw_text) else {
                continue;
            };
            let Some(number) = parse_number(&raw) else {
                continue;
            };
            let kind = (
                path.as_str(),
                *op,
                column.as_deref(),
                filter.column.as_str(),
                f.field,
            );
            let entry = (
                printable(filter.equals.trim(), MAX_VALUE_CHARS),
                clip(&f.written(&raw), MAX_VALUE_CHARS),
                number,
            );
            match kinds.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, values)) => {
                    if !values.iter().any(|v| v.0 == entry.0) {
                        values.push(entry);
                    }
                }
                None => kinds.push((kind, vec![entry])),
            }
        }
    }
    kinds
        .into_iter()
        .filter(|(_, values)| values.len() >= 2)
        .filter_map(|((_, _, column, by, field), values)| {
            let largest = largest_named(&values)?;
            let names: Vec<&str> = values.iter().map(|v| v.0.as_str()).collect();
            let what = match column {
                Some(c) => format!("\"{field}\" of column \"{}\"", printable(c, MAX_VALUE_CHARS)),
                None => format!("\"{field}\""),
            };
            Some(format!(
                "Of the {what} over the rows of each value of column \"{}\" shown above ({}), the largest{largest}",
                printable(by, MAX_VALUE_CHARS),
                names.join(", "),
            ))
        })
        .collect()
}

/// The rows of a table_stats answer that hold its largest or smallest number (`key` is
/// `max_rows` or `min_rows`), as `column=cell` lists on one line, or `None` when the answer has
/// none.
pub(super) fn rows_text(result: &Value, key: &str) -> Option<String> {
    let rows = result.get(key)?.as_array().filter(|r| !r.is_empty())?;
    let listed: Vec<String> = rows
        .iter()
        .filter_map(Value::as_object)
        .map(|row| {
            row.iter()
                .map(|(k, v)| {
                    let cell = v.as_str().unwrap_or_default();
                    format!(
                        "{}={}",
                        printable(k, ROW_CELL_CHARS),
                        printable(cell, ROW_CELL_CHARS)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    let head = if listed.len() == 1 {
        "The row with it".to_string()
    } else {
        format!("The {} rows with it", listed.len())
    };
    let mut text = format!("{head}: {}", listed.join(" | "));
    if let Some(note) = result.get(format!("{key}_note")).and_then(Value::as_str) {
        text.push_str(&format!(" ({})", printable(note, ROWS_TEXT_MAX_CHARS)));
    }
    Some(clip(&text, ROWS_TEXT_MAX_CHARS))
}
