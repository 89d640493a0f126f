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

use super::plain_counts::{plain_counts, Detail};
use super::task_search::{calls_stay_the_model_s, inputs_folder};
use crate::checks::{judge_agrees, Aggregate, CheckSpec, Computed, World};
use crate::mission::FrozenContract;

/// The tool this lever offers and calls.
pub const FOLDER_STATS: &str = "folder_stats";

/// Match-count patterns that match once at the start of each file: such a check counts files.
pub(super) const FILE_START: &[&str] = &["\\A", "^", "\\A(?s:.)"];

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
    calls_stay_the_model_s(contract)?;
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
            *op == Aggregate::Count && FILE_START.contains(&pattern.as_str())
        }
        Computed::Lines { .. } => true,
        Computed::Csv { op, filter, .. } => *op == Aggregate::Count && filter.is_none(),
        Computed::Json { .. } => false,
    }
}

/// What [`withhold_disputed`] took out of a `folder_stats` result.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Withheld {
    /// Files whose `rows` or `lines` a check counts otherwise: taken out, or, past the listing
    /// cap, not listed but feeding the totals and largest (taken out with them).
    pub paths: Vec<String>,
    /// Totals a check that counts over the files they add up would reject, or that no check
    /// asks for where one adds up some of those files ([`sums_some_of`]).
    pub totals: Vec<&'static str>,
}

/// Takes out of a `folder_stats` result every file's figure that a check of the contract counts
/// otherwise (see the module's note), and with it the totals and largest it feeds; then each
/// total a check counting over the same files would reject (see [`withhold_totals`]).
pub fn withhold_disputed(
    contract: &FrozenContract,
    world: &dyn World,
    result: &mut Value,
) -> Withheld {
    let mut withheld = Withheld::default();
    let mut fields_cut: Vec<&str> = Vec::new();
    let mut cut: Vec<(String, &str)> = Vec::new();
    // Past the cap a file is counted in the totals but not listed with its figure.
    let capped = result.get("listed_of").is_some();
    let Some(list) = result.get_mut("list").and_then(Value::as_array_mut) else {
        return withheld;
    };
    for check in &contract.mission.checks {
        let CheckSpec::NumericConsistency { expected, .. } = &check.spec else {
            continue;
        };
        // A check that counts only some lines of a file (`ERROR` lines) is not of the figure
        // `lines` gives, and a model copies that figure for it: withheld without comparing.
        let (path, field, comparable) = match expected {
            Computed::Csv {
                path,
                op: Aggregate::Count,
                filter: None,
                ..
            } => (path, "rows", true),
            Computed::Lines { path, pattern } => {
                (path, "lines", EVERY_LINE.contains(&pattern.as_str()))
            }
            _ => continue,
        };
        let wanted = path.trim_start_matches("./");
        let Some(entry) = list.iter_mut().find(|f| f["path"] == wanted) else {
            // Its figure, unseen, may feed the totals and the largest: they cannot be checked.
            if capped {
                withheld.paths.push(wanted.to_string());
                fields_cut.push(field);
            }
            continue;
        };
        let figure = entry.get(field).map(Value::to_string);
        let agrees = comparable
            && figure
                .as_deref()
                .is_some_and(|n| judge_agrees(contract, world, &check.spec, n));
        if !agrees && figure.is_some() {
            entry.as_object_mut().map(|o| o.remove(field));
            entry["withheld"] = json!(format!(
                "{field}: this file is counted otherwise by the task's check; count it yourself"
            ));
            withheld.paths.push(wanted.to_string());
            fields_cut.push(field);
            cut.push((wanted.to_string(), field));
        }
    }
    withhold_copies(result, &cut, &mut withheld);
    for field in fields_cut {
        let (total, most) = if field == "rows" {
            ("total_rows", "most_rows")
        } else {
            ("total_lines", "most_lines")
        };
        remove_keys(result, &[total, most]);
    }
    withheld.totals = withhold_totals(contract, world, result);
    withheld
}

/// Takes each withheld figure (`cut`: path and field) out of the files `same_content` names as
/// identical to its file too: a copy has the same figure, and the group ties the two.
fn withhold_copies(result: &mut Value, cut: &[(String, &str)], withheld: &mut Withheld) {
    let groups: Vec<Vec<String>> = result["same_content"]
        .as_array()
        .map(|gs| {
            gs.iter()
                .filter_map(Value::as_array)
                .map(|g| {
                    g.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default();
    let Some(list) = result.get_mut("list").and_then(Value::as_array_mut) else {
        return;
    };
    for (path, field) in cut {
        let copies = groups.iter().filter(|g| g.contains(path)).flatten();
        for copy in copies.filter(|c| *c != path) {
            let Some(entry) = list.iter_mut().find(|f| f["path"] == copy.as_str()) else {
                continue;
            };
            if entry
                .as_object_mut()
                .and_then(|o| o.remove(*field))
                .is_some()
            {
                entry["withheld"] = json!(format!(
                    "{field}: the same content as {path}, which the task's check counts otherwise; count it yourself"
                ));
                withheld.paths.push(copy.clone());
            }
        }
    }
}

/// Takes out of a `table_stats` (or `table_rows`) result each row count a check of the contract
/// counts otherwise (the tool leaves a row of empty cells out, the judge counts it):
/// `rows_in_file` for a check of every row of the table, `rows` for one whose filter is the
/// call's (case aside), each with a note, as [`withhold_disputed`] does for `folder_stats`. A
/// `group_by` result's per-group counts are not compared.
pub fn withhold_disputed_table_rows(
    contract: &FrozenContract,
    world: &dyn World,
    result: &mut Value,
) {
    let Some(path) = result
        .get("path")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return;
    };
    let call_filter = result
        .get("filter")
        .and_then(Value::as_str)
        .map(str::to_lowercase)
        .or_else(|| one_equality(result));
    // `table_rows` answers with the conditions it read under `where`; its `rows` are the
    // matching rows, the whole table's only when there is no condition at all.
    let unconditioned = call_filter.is_none() && result.get("where").is_none();
    for check in &contract.mission.checks {
        let CheckSpec::NumericConsistency {
            expected:
                Computed::Csv {
                    path: counted,
                    op: Aggregate::Count,
                    filter,
                    ..
                },
            ..
        } = &check.spec
        else {
            continue;
        };
        if counted.trim_start_matches("./") != path {
            continue;
        }
        let field = match filter {
            None => "rows_in_file",
            Some(f) => {
                let same = format!("{} = {}", f.column, f.equals.trim()).to_lowercase();
                if call_filter.as_deref() != Some(same.as_str()) {
                    continue;
                }
                "rows"
            }
        };
        let Some(figure) = result.get(field).map(Value::to_string) else {
            continue;
        };
        if !judge_agrees(contract, world, &check.spec, &figure) {
            remove_keys(result, &[field]);
            // Without a filter `rows` is the same count.
            if field == "rows_in_file" && unconditioned {
                remove_keys(result, &["rows"]);
            }
            // `table_rows` lists and counts per value the rows it counted (`table_stats` counts
            // them per value with `row-query`); a condition every row meets counts the withheld
            // rows of the file again.
            let matches_every_row = field == "rows_in_file"
                && result.get("where").is_some()
                && result.get("rows").map(Value::to_string) == Some(figure.clone());
            if field == "rows" || matches_every_row {
                remove_keys(result, &super::row_query::MATCHED_KEYS);
            }
            super::row_query::add_withheld_note(
                result,
                &format!(
                    "{field}: this table's rows are counted otherwise by the task's check; count them yourself"
                ),
            );
        }
    }
}

/// A `table_rows` answer's one condition `column = "value"` as `table_stats` words its filter
/// (`column = value`, lower case); `None` for any other `where`.
fn one_equality(result: &Value) -> Option<String> {
    if result.get("where")?.as_array()?.len() != 1 {
        return None;
    }
    let [(column, value)] = super::row_query::equalities(result).try_into().ok()?;
    Some(format!("{column} = {}", value.trim()).to_lowercase())
}

/// The figure each total adds up, and the largest that goes with it.
const TOTALS: [(&str, &str, &str); 2] = [
    ("lines", "total_lines", "most_lines"),
    ("rows", "total_rows", "most_rows"),
];

/// Takes out each total that a check counting over several inputs would reject while its paths
/// hold every file the total adds up: the judge counts those files otherwise (explore-log-lines
/// asks for the sum of the logs' lines and counts their non-empty ones; a log that is not UTF-8
/// has no `lines` and is in no total), and the total is the figure a model copies for it. The
/// largest goes with it when a file of the check has no figure of its own (it may be the
/// largest). Nothing of the judge's value is said. A total is also taken out where a check
/// adds up only some of its files ([`sums_some_of`]), with a note that its figure is the
/// model's. Returns the totals taken out.
fn withhold_totals(
    contract: &FrozenContract,
    world: &dyn World,
    result: &mut Value,
) -> Vec<&'static str> {
    let mut cut = Vec::new();
    let mut part_sums = Vec::new();
    let capped = result.get("listed_of").is_some();
    for (field, total, most) in TOTALS {
        let Some(figure) = result.get(total).map(Value::to_string) else {
            continue;
        };
        // Past the listing cap the files a total adds up are not all named: no check can be
        // compared with it, but one that adds up some files still rules it out.
        if capped {
            if sums_some_of(contract, None) {
                remove_keys(result, &[total]);
                part_sums.push(total);
            }
            continue;
        }
        let list = result["list"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let path_of = |f: &Value| f["path"].as_str().map(str::to_string);
        let added: Vec<String> = list
            .iter()
            .filter(|f| f.get(field).is_some())
            .filter_map(path_of)
            .collect();
        // The judge reads every file of the check: each must be one the model may read, or
        // whether the total is withheld would tell of a file the policy keeps from it.
        let open: Vec<String> = list
            .iter()
            .filter(|f| f.get("skipped_by_policy").is_none())
            .filter_map(path_of)
            .collect();
        let disputed = contract.mission.checks.iter().find_map(|check| {
            let CheckSpec::NumericConsistency {
                expected:
                    Computed::Matches {
                        paths,
                        op: Aggregate::Count,
                        ..
                    },
                ..
            } = &check.spec
            else {
                return None;
            };
            let paths: Vec<&str> = paths.iter().map(|p| p.trim_start_matches("./")).collect();
            let covers = added.iter().all(|a| paths.contains(&a.as_str()));
            let readable = paths.iter().all(|p| open.iter().any(|o| o == p));
            (covers && readable && !judge_agrees(contract, world, &check.spec, &figure))
                .then_some(paths)
        });
        if let Some(paths) = disputed {
            let some_unfigured = paths.iter().any(|p| !added.iter().any(|a| a == p));
            remove_keys(result, &[total]);
            if some_unfigured {
                remove_keys(result, &[most]);
            }
            cut.push(total);
        } else if sums_some_of(contract, Some(&added)) {
            remove_keys(result, &[total]);
            part_sums.push(total);
        }
    }
    let mut said = Vec::new();
    if !cut.is_empty() {
        said.push(format!(
            "{}: a check of the task counts these files otherwise; count it yourself",
            cut.join(", ")
        ));
    }
    if !part_sums.is_empty() {
        said.push(format!(
            "{}: a line of the task adds up only some of these files (or only some of their lines), so this total is not shown; work that figure out yourself (calculate adds exactly)",
            part_sums.join(", ")
        ));
    }
    if !said.is_empty() {
        put_with_figures(result, "withheld", json!(said.join("; ")));
    }
    cut.extend(part_sums);
    cut
}

/// Whether a check of the contract counts lines or rows over two or more files (explore-csv-rows:
/// the orders tables of six) while none counts over all the files `added` (`None`: past the
/// listing cap, where they are not all named): the total of them all is then a figure no line
/// of the task asks for, and the 1.5B copied it for the sum of the three. Said from the checks'
/// paths and patterns alone, never from their values; a file of the check may be in no total
/// (not UTF-8, hidden by the policy), which only makes the total further from its figure.
fn sums_some_of(contract: &FrozenContract, added: Option<&[String]>) -> bool {
    let count_paths = contract.mission.checks.iter().filter_map(|check| {
        let CheckSpec::NumericConsistency {
            expected:
                Computed::Matches {
                    paths,
                    pattern,
                    op: Aggregate::Count,
                    ..
                },
            ..
        } = &check.spec
        else {
            return None;
        };
        // A count of files is not a sum of lines or rows.
        if FILE_START.contains(&pattern.as_str()) {
            return None;
        }
        let mut paths: Vec<&str> = paths.iter().map(|p| p.trim_start_matches("./")).collect();
        paths.sort_unstable();
        paths.dedup();
        Some(paths)
    });
    let mut some = false;
    for paths in count_paths {
        if added.is_some_and(|added| added.iter().all(|a| paths.contains(&a.as_str()))) {
            return false;
        }
        some |= paths.len() >= 2;
    }
    some
}

/// Most characters of the figures [`restated_figures`] repeats after each step.
const RESTATED_MAX_CHARS: usize = 900;

/// The figures of the `folder_stats` result Rein showed (after [`withhold_disputed`]), in one
/// line to repeat after each step's result: each file's lines and rows (not its bytes or
/// depth), the folders and the totals, as much of it as stays under [`RESTATED_MAX_CHARS`]: the
/// per-file list goes first, then the folders; `None` where even the rest would not fit.
/// The 1.5B wrote the right `Total lines: 96` while the result was the last thing it had read,
/// and `Total lines: 31` (the longest log's) after reading the five logs (explore-log-lines);
/// it wrote the tables' right row counts before reading them and their line counts after
/// (explore-csv-rows).
pub fn restated_figures(result: &Value) -> Option<String> {
    let o = result.as_object()?;
    let path = o.get("path")?.as_str()?;
    let line = |skip: &[&str]| {
        let kept: serde_json::Map<String, Value> = o
            .iter()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
            .map(|(k, v)| {
                (
                    k.clone(),
                    if k == "list" {
                        per_file_counts(v)
                    } else {
                        v.clone()
                    },
                )
            })
            .collect();
        Value::Object(kept).to_string()
    };
    let skip = ["path", "truncated"];
    let figures = [
        (line(&skip), ""),
        (line(&[&skip[..], &["list"]].concat()), LEFT_OUT_FILES),
        (
            line(&[&skip[..], &["list", "folders"]].concat()),
            LEFT_OUT_FOLDERS,
        ),
    ]
    .into_iter()
    .find(|(l, _)| l.chars().count() <= RESTATED_MAX_CHARS);
    Some(match figures {
        Some((figures, left_out)) => format!(
            "Rein's counts of {path} (its folder_stats call before your first step; copy these numbers): {figures}{left_out}"
        ),
        None => format!("Rein's counts of {path} are too long to repeat here{FIRST_RESULT}"),
    })
}

/// Where the figures a repeat leaves out are.
const FIRST_RESULT: &str =
    "; they are in the result of its folder_stats call at the start of this conversation.";
/// What a repeat without each file's figures says.
const LEFT_OUT_FILES: &str = " (each file's figures are not repeated here; they are in the result of Rein's folder_stats call at the start of this conversation)";
/// What a repeat without each folder's and file's figures says.
const LEFT_OUT_FOLDERS: &str = " (each folder's and file's figures are not repeated here; they are in the result of Rein's folder_stats call at the start of this conversation)";

/// Lever `plain-counts`: the words shown before the first step, each file with its rows and lines
/// only, as in the repeat. With its bytes and depth too, the 1.5B copied a file's whole line
/// (`- logs/cron.log: 9 lines, 1 folder above it`) into the list item its task asked for; the
/// deepest and the empty files have lines of their own.
pub fn first_plain_counts(result: &Value) -> Option<String> {
    plain_counts(&with_per_file_counts(result), Detail::Files)
}

/// [`restated_figures`] in plain lines (lever `plain-counts`, see [`super::plain_counts`]): each
/// file (its rows and lines only, as in the JSON), then each folder, dropped in that order until
/// the lines fit [`RESTATED_PLAIN_MAX_CHARS`], each drop said; past that, a sentence that says
/// where the figures are.
pub fn restated_plain_counts(result: &Value) -> Option<String> {
    let counts = with_per_file_counts(result);
    let path = counts.get("path")?.as_str()?.to_string();
    let figures = [
        (Detail::Files, ""),
        (Detail::Folders, LEFT_OUT_FILES),
        (Detail::Totals, LEFT_OUT_FOLDERS),
    ]
    .into_iter()
    .filter_map(|(detail, left_out)| Some((plain_counts(&counts, detail)?, left_out)))
    .find(|(text, left_out)| text.chars().count() + left_out.len() <= RESTATED_PLAIN_MAX_CHARS);
    Some(match figures {
        Some((text, left_out)) => format!(
            "Rein's counts from its folder_stats call before your first step (copy these numbers):\n{text}{left_out}"
        ),
        None => format!(
            "Rein's counts from its folder_stats call before your first step, of {path}, are too long to repeat here{FIRST_RESULT}"
        ),
    })
}

/// Most characters of [`restated_plain_counts`]: the words take more room than the JSON's keys.
const RESTATED_PLAIN_MAX_CHARS: usize = 1_200;

/// Fields of a listed file [`restated_figures`] repeats, in this order (a table's rows before
/// its lines, as the tool lists them).
const RESTATED_FILE_FIELDS: &[&str] = &["path", "rows", "lines", "withheld", "skipped_by_policy"];

/// `result` with its per-file list cut to [`RESTATED_FILE_FIELDS`].
fn with_per_file_counts(result: &Value) -> Value {
    let mut counts = result.clone();
    if let Some(list) = counts.get_mut("list") {
        *list = per_file_counts(list);
    }
    counts
}

/// The per-file list with only [`RESTATED_FILE_FIELDS`].
fn per_file_counts(list: &Value) -> Value {
    let Some(files) = list.as_array() else {
        return list.clone();
    };
    Value::Array(
        files
            .iter()
            .map(|f| match f.as_object() {
                Some(o) => Value::Object(
                    RESTATED_FILE_FIELDS
                        .iter()
                        .filter_map(|k| o.get(*k).map(|v| (k.to_string(), v.clone())))
                        .collect(),
                ),
                None => f.clone(),
            })
            .collect(),
    )
}

/// Takes `keys` out of an object, keeping the order of the rest (`Map::remove` moves the last
/// key, the per-file `list`, into the gap where serde_json keeps insertion order).
fn remove_keys(result: &mut Value, keys: &[&str]) {
    if let Some(o) = result.as_object_mut() {
        o.retain(|k, _| !keys.contains(&k.as_str()));
    }
}

/// Sets `key` of an object among its small figures, before its maps and lists (the result is
/// shown clipped, and `folder_stats` puts its figures and notes first).
pub(super) fn put_with_figures(result: &mut Value, key: &str, value: Value) {
    let Value::Object(o) = result else {
        return;
    };
    let mut out = serde_json::Map::new();
    let mut value = Some(value);
    for (k, v) in std::mem::take(o) {
        if matches!(v, Value::Array(_) | Value::Object(_)) {
            if let Some(value) = value.take() {
                out.insert(key.to_string(), value);
            }
        }
        if k != key {
            out.insert(k, v);
        }
    }
    if let Some(value) = value {
        out.insert(key.to_string(), value);
    }
    *o = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result_with_folders(folders: usize) -> Value {
        let folders: serde_json::Map<String, Value> = (0..folders)
            .map(|i| (format!("f/sub{i:03}"), json!({"files": 1})))
            .collect();
        json!({"path": "f", "files": folders.len(), "truncated": false, "total_lines": 7,
               "folders": folders, "list": [{"path": "f/a", "lines": 7}]})
    }

    #[test]
    fn the_restated_figures_leave_out_the_list_and_past_the_cap_the_folders() {
        let small = restated_figures(&result_with_folders(3)).unwrap();
        assert!(small.starts_with("Rein's counts of f "), "{small}");
        assert!(small.contains("\"total_lines\":7"), "{small}");
        assert!(small.contains("f/sub002"), "{small}");
        assert!(
            small.contains("\"list\":[{\"path\":\"f/a\",\"lines\":7}]"),
            "{small}"
        );
        assert!(!small.contains("truncated"), "{small}");
        let big = restated_figures(&result_with_folders(60)).unwrap();
        assert!(big.contains("\"total_lines\":7"), "{big}");
        assert!(
            !big.contains("folders") && !big.contains("\"list\""),
            "{big}"
        );
        // A long list goes before the folders do.
        let mut many_files = result_with_folders(3);
        many_files["list"] = json!((0..40)
            .map(|i| json!({"path": format!("f/file-{i:02}.txt"), "lines": i, "bytes": 9}))
            .collect::<Vec<_>>());
        let without_list = restated_figures(&many_files).unwrap();
        assert!(without_list.contains("f/sub002"), "{without_list}");
        assert!(without_list.ends_with(LEFT_OUT_FILES), "{without_list}");
        assert!(!without_list.contains("\"list\""), "{without_list}");
        let mut huge = result_with_folders(0);
        huge["extensions"] = json!((0..200)
            .map(|i| (format!("x{i}"), json!(1)))
            .collect::<serde_json::Map<_, _>>());
        let too_long = restated_figures(&huge).unwrap();
        assert!(too_long.contains("too long to repeat here"), "{too_long}");
        assert!(!too_long.contains("x199"), "{too_long}");
        assert_eq!(restated_figures(&json!({"files": 1})), None);
    }
}
