//! The `requirements` lever: each check of a frozen contract as one plain-language requirement
//! the model reads in its task message. The contract is the person's acceptance criteria, so the
//! model may know them; what it may not see is a value computed from the inputs (an expected
//! total, a gold file, an expected variable), nor the floor of a semantic check. Only the check's
//! own spec is read here, never the inputs nor the frozen expected files, so nothing computed
//! can leak through a rendering.

use super::spec::{
    CallSpec, CheckSpec, Computed, FinalNewline, LineEndings, Locator, Occurrences, ValueSource,
};
use crate::mission::FrozenContract;

/// Characters of a pattern or schema quoted in a requirement; a longer one is clipped (its
/// check still judges the whole of it).
pub const MAX_QUOTED_CHARS: usize = 240;

/// The numbered requirements of a contract, with a heading line; empty when it has no checks.
pub fn requirements_message(contract: &FrozenContract) -> String {
    requirements_message_of(contract, |_| true)
}

/// [`requirements_message`] of the checks `listed` keeps, each numbered by its place in the
/// contract (lever `requirements-once`: a check the task lists under its section is not
/// listed twice).
pub fn requirements_message_of(
    contract: &FrozenContract,
    listed: impl Fn(&CheckSpec) -> bool,
) -> String {
    // Numbered by the check's place in the contract, gaps and all: the checklist and the
    // retry feedback number checks so.
    let lines: Vec<(usize, String)> = contract
        .mission
        .checks
        .iter()
        .enumerate()
        .filter(|(_, c)| listed(&c.spec))
        .map(|(i, c)| (i + 1, requirement(&c.spec)))
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut s =
        String::from("Requirements (the harness checks each one on disk after you call finish):\n");
    for (n, line) in &lines {
        s.push_str(&format!("{n}. {line}\n"));
    }
    s
}

/// "exactly N decimals", as the requirement and a refused line field say it.
pub fn exact_decimals(n: u8) -> String {
    format!("exactly {n} decimal{}", if n == 1 { "" } else { "s" })
}

/// One check as a sentence. Every kind has its own arm (no wildcard), so a new kind cannot be
/// added without deciding how the model reads it.
pub fn requirement(spec: &CheckSpec) -> String {
    match spec {
        CheckSpec::FileExists { path, non_empty } => {
            if *non_empty {
                format!("{} must exist and must not be empty.", q(path))
            } else {
                format!("{} must exist.", q(path))
            }
        }
        CheckSpec::FileAbsent { path } => {
            format!("{} must not exist: do not create it.", q(path))
        }
        // A content pattern is the task's answer in a search or edit task (the right file, the
        // right value), and a forbidden one names the wrong answers: the check withholds it from
        // its feedback, so the requirement does not quote it either.
        CheckSpec::ContentMatches { path, section, .. } => format!(
            "{} must contain the text the task asks for (the harness checks it; its pattern is not shown).",
            place(path, section.as_deref())
        ),
        CheckSpec::ContentAbsent { path, section, .. } => format!(
            "{} must not contain text the task rules out (a second answer, a wrong item, a denial; the pattern is not shown).",
            place(path, section.as_deref())
        ),
        CheckSpec::JsonSchema { path, schema } => format!(
            "{} must be valid JSON that follows this JSON schema: {}",
            q(path),
            clip(&schema.to_string())
        ),
        CheckSpec::NumericConsistency {
            path,
            stated,
            expected,
            tolerance,
            section,
            units,
            signed: _,
            occurrences,
            decimals,
        } => {
            let at = match stated {
                Locator::Pointer(p) => format!("the number at JSON pointer {} of {}", q(p), q(path)),
                Locator::Regex(r) => format!(
                    "the number {} states where the pattern {} finds it",
                    q(path),
                    code(r)
                ),
            };
            let mut s = format!("{at} must equal {}", computed(expected));
            if *tolerance > 0.0 {
                s.push_str(&format!(" (within {tolerance})"));
            } else {
                s.push_str(" exactly");
            }
            if let Some(n) = decimals {
                s.push_str(&format!("; write it with {}", exact_decimals(*n)));
            }
            if !units.is_empty() {
                s.push_str(&format!("; it may carry the unit {}", units.join(" or ")));
            }
            if let Some(sec) = section {
                s.push_str(&format!("; state it in the section \"{sec}\""));
            }
            match occurrences {
                Occurrences::AllAgree => s.push_str("; every such statement must agree"),
                Occurrences::ExactlyOne => s.push_str("; state it exactly once"),
            }
            s.push_str(". Compute it from the input, do not guess.");
            s
        }
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
        } => {
            let mut parts = Vec::new();
            if !headings.is_empty() {
                let list: Vec<String> = headings.iter().map(|h| format!("\"{h}\"")).collect();
                parts.push(format!(
                    "have {}these headings{}: {}",
                    if *no_other_headings { "exactly " } else { "" },
                    if *in_order { ", in this order" } else { "" },
                    list.join(", ")
                ));
                if *no_other_headings {
                    parts.push("have no other heading".to_string());
                }
            }
            if !fields.is_empty() {
                parts.push(format!("have the fields {}", fields.join(", ")));
            }
            match (min_words, max_words) {
                (Some(a), Some(b)) => parts.push(format!("have {a} to {b} words")),
                (Some(a), None) => parts.push(format!("have at least {a} words")),
                (None, Some(b)) => parts.push(format!("have at most {b} words")),
                (None, None) => {}
            }
            if let Some(n) = min_section_words {
                parts.push(format!(
                    "have at least {n} words under each required heading"
                ));
            }
            if let Some(n) = max_repeats {
                parts.push(format!("repeat no line more than {n} times"));
            }
            if parts.is_empty() {
                format!("{} must be a complete report.", q(path))
            } else {
                format!("{} must {}.", q(path), parts.join("; "))
            }
        }
        CheckSpec::ActionsCalled {
            tools,
            ordered,
            strict_order,
        } => {
            // What a call must have written is the task's answer: it is not shown.
            let list: Vec<String> = tools
                .iter()
                .map(|c| match c {
                    CallSpec::Tool(t) => t.clone(),
                    CallSpec::ToolOnPath(call) => {
                        let mut s = format!("{} on {}", call.tool, q(&call.path));
                        if call.wrote.is_some() {
                            s.push_str(" (writing the content the task asks for)");
                        }
                        if call.after_last_write {
                            s.push_str(" (after its last write)");
                        }
                        s
                    }
                })
                .collect();
            format!(
                "Call these tools{}: {}.",
                match (ordered, strict_order) {
                    (true, true) => ", in this order, none of them before the ones listed earlier",
                    (true, false) => ", in this order",
                    _ => "",
                },
                list.join(", ")
            )
        }
        // The expected value is the task's answer: it is not shown.
        CheckSpec::VariableSet { name, expected } => match expected {
            Some(_) => format!("The variable {} must be set to the value the task asks for.", q(name)),
            None => format!("The variable {} must be set.", q(name)),
        },
        CheckSpec::Grounded {
            path,
            claim,
            sources,
        } => format!(
            "Every text value {} of {} must be copied exactly, character for character, from {}.",
            match claim {
                Locator::Pointer(p) if p.is_empty() => "anywhere".to_string(),
                Locator::Pointer(p) => format!("at JSON pointer {}", q(p)),
                Locator::Regex(r) => format!("that the pattern {} finds", code(r)),
            },
            q(path),
            grounding_sources(sources)
        ),
        // Semantic: what is judged, not the question (a question often states the answer: "the
        // screenshot shows Push notifications off; does the answer name the toggle that is
        // off?"); the floor and the model that answers stay with the judge.
        CheckSpec::Decision {
            path,
            section,
            qualified,
            ..
        } => {
            let what = match path {
                Some(p) => place(p, section.as_deref()),
                None => "your work".to_string(),
            };
            let mut s =
                format!("A reviewer reads {what} and judges whether it does what the task asks.");
            if !qualified {
                s.push_str(" (advice for the person; it does not decide the verdict)");
            }
            s
        }
        // The patterns are the facts the task asks for (the answer): withheld, as in the check.
        CheckSpec::Statement {
            path,
            section,
            unnegated,
            ..
        } => {
            let mut s = format!(
                "In {}, one sentence must state, all at once, the facts the task asks for (the harness checks it; its patterns are not shown)",
                place(path, section.as_deref())
            );
            if *unnegated {
                s.push_str("; that sentence must not be negated (no \"not\", \"no\", \"never\")");
            }
            s.push('.');
            s
        }
        CheckSpec::MentionsAll {
            path,
            section,
            values,
            numbers,
        } => {
            let ValueSource::Csv {
                path: csv,
                column,
            } = values;
            let mut s = format!(
                "{} must mention every value of the column \"{column}\" of {}",
                place(path, section.as_deref()),
                q(csv)
            );
            if let Some(n) = numbers {
                s.push_str(&format!(
                    "; a number written beside one of them{} must be that row's \"{}\"",
                    if n.units.is_empty() {
                        String::new()
                    } else {
                        format!(" with the unit {}", n.units.join(" or "))
                    },
                    n.column
                ));
            }
            s.push('.');
            s
        }
        CheckSpec::NotCopied {
            path,
            section,
            sources,
            min_run_words,
            max_fraction,
        } => format!(
            "Write {} in your own words: at most {:.0}% of its words may lie in runs of {min_run_words} or more words copied from {}. Restate a table's rows in your own form (one line per row with its units, say), never paste them, and rephrase the sentences you take from notes.",
            section.as_ref().map_or_else(
                || q(path),
                |s| format!("the section '{s}' of {}", q(path))
            ),
            max_fraction * 100.0,
            files(sources)
        ),
        CheckSpec::NoPlaceholders { path } => format!(
            "{} must hold no placeholder (TODO, TBD, [fill in], ???, ...): real content only.",
            q(path)
        ),
        CheckSpec::InputsRead {
            paths,
            before_writing,
        } => {
            // Inputs the contract chose are the task's answer in a search task: not named.
            let mut s = if paths.is_empty() {
                "Read every input file in full with read_file".to_string()
            } else {
                "Read in full with read_file every input the task needs (which ones is part of the task)".to_string()
            };
            if let Some(b) = before_writing {
                s.push_str(&format!(" before you first write {}", q(b)));
            }
            s.push('.');
            s
        }
        CheckSpec::WrittenThisRun { path } => format!(
            "Write {} yourself in this run: its final content must be what your last write left.",
            q(path)
        ),
        CheckSpec::EntriesMatch {
            path,
            array,
            sources,
            fields,
            unique,
        } => {
            let src: Vec<String> = sources.iter().map(|s| q(s)).collect();
            let rules: Vec<String> = fields
                .iter()
                .map(|(name, rule)| {
                    format!(
                        "\"{name}\" is the text after \"{}\" in its source{}",
                        rule.label,
                        if rule.number {
                            " (as a number, without the unit)"
                        } else {
                            ""
                        }
                    )
                })
                .collect();
            let mut s = format!(
                "The array at JSON pointer {} of {} must have one entry per source, in this order: {}; in each entry, {}",
                q(array),
                q(path),
                src.join(", "),
                rules.join("; ")
            );
            if !unique.is_empty() {
                s.push_str(&format!("; no two entries share a {}", unique.join(" or ")));
            }
            s.push('.');
            s
        }
        CheckSpec::InputsUnchanged {} => {
            "Do not change, delete or re-create any input file.".to_string()
        }
        // The expected file is the gold deliverable: named as existing, never shown.
        CheckSpec::FileEquals {
            path,
            line_endings,
            final_newline,
            ..
        } => {
            let mut s = format!(
                "{} must end up exactly equal to the mission's expected file (which you are not shown): do what the task asks and nothing more.",
                q(path)
            );
            if *line_endings == LineEndings::Exact {
                s.push_str(" Keep its line endings as they are (no CR added).");
            }
            if *final_newline == FinalNewline::Required {
                s.push_str(" It must end with a newline.");
            }
            s
        }
        CheckSpec::NothingElseChanged {
            allow,
            allow_deleted,
        } => {
            let mut s = String::from(
                "Create, change or delete no file other than the deliverable and the files to edit",
            );
            if !allow.is_empty() {
                let list: Vec<String> = allow.iter().map(|a| q(a)).collect();
                s.push_str(&format!(" and {}", list.join(", ")));
            }
            if !allow_deleted.is_empty() {
                let list: Vec<String> = allow_deleted.iter().map(|a| q(a)).collect();
                s.push_str(&format!(" (you may delete {})", list.join(", ")));
            }
            s.push('.');
            s
        }
    }
}

fn q(path: &str) -> String {
    format!("`{path}`")
}

fn code(pattern: &str) -> String {
    format!("`{}`", clip(pattern))
}

fn clip(s: &str) -> String {
    if s.chars().count() <= MAX_QUOTED_CHARS {
        return s.to_string();
    }
    let head: String = s.chars().take(MAX_QUOTED_CHARS).collect();
    format!("{head}...")
}

fn place(path: &str, section: Option<&str>) -> String {
    match section {
        Some(sec) => format!("the section \"{sec}\" of {}", q(path)),
        None => q(path),
    }
}

/// Where a `grounded` check's claims must come from, in words that never name a chosen source:
/// which input holds the answer is often the task (the one log with the failed payment).
fn grounding_sources(sources: &[String]) -> String {
    match sources.len() {
        0 => files(sources),
        1 => "the input file that holds what the task asks for".to_string(),
        _ => "the input files that hold what the task asks for".to_string(),
    }
}

fn files(paths: &[String]) -> String {
    if paths.is_empty() {
        "every input file".to_string()
    } else {
        let list: Vec<String> = paths.iter().map(|p| q(p)).collect();
        list.join(", ")
    }
}

fn computed(c: &Computed) -> String {
    match c {
        Computed::Csv {
            path,
            op,
            column,
            filter,
        } => {
            let rows = match filter {
                Some(f) => format!(" over the rows whose \"{}\" is \"{}\"", f.column, f.equals),
                None => String::new(),
            };
            match (op, column) {
                (super::spec::Aggregate::Count, _) => {
                    format!("the number of data rows of {}{rows}", q(path))
                }
                (op, Some(col)) => {
                    format!(
                        "the {} of the column \"{col}\" of {}{rows}",
                        op_word(*op),
                        q(path)
                    )
                }
                (op, None) => format!("the {} of {}{rows}", op_word(*op), q(path)),
            }
        }
        // Which file, which lines and which phrase hold the value is the answer of a search or
        // log task (the policy that sets the deadline, which lines count as errors): not shown.
        Computed::Lines { .. } | Computed::Matches { .. } | Computed::Json { .. } => {
            "the value the task asks for, computed from the inputs (where and how is part of the task)".to_string()
        }
    }
}

/// A `table_stats` call that gives the number a `numeric_consistency` check on a CSV wants:
/// the call's parameters, the field of its answer that holds the figure, and the figure in the
/// requirement's words. A row count names no column in the check, and any column counts the
/// rows: its `params` name none, and `count_column` is the one a call of its own would use (the
/// filter's), `None` for a count of every row, which no hint names.
#[derive(Debug, Clone, PartialEq)]
pub struct TableStatsCall {
    pub params: serde_json::Value,
    pub field: &'static str,
    pub figure: String,
    pub count_column: Option<String>,
    /// For a call grouped by the check's filter column ([`table_stats_group_call`]): the
    /// filter's value, whose group of the answer holds the check's figure.
    pub group: Option<String>,
}

impl TableStatsCall {
    /// The call a hint names: `params`, with `count_column` for a row count; `None` for a count
    /// of every row.
    pub fn named(&self) -> Option<serde_json::Value> {
        if self.params.get("column").is_some() {
            return Some(self.params.clone());
        }
        let mut params = self.params.clone();
        params["column"] = self.count_column.clone()?.into();
        Some(params)
    }
}

/// The [`TableStatsCall`] of a `numeric_consistency` check whose expected value is a figure of a
/// CSV input (the judge reads `from: csv` as comma-separated); `None` for every other check, and
/// for a figure over rows whose filter value is empty or the task's `prompt` does not say
/// (ignoring case): which rows matter can be the answer (summarize-support-week counts its
/// `sync` tickets and asks which problem is reported most).
pub fn table_stats_call(spec: &CheckSpec, prompt: &str) -> Option<TableStatsCall> {
    let CsvFigure {
        expected,
        path,
        op,
        column,
        filter,
    } = csv_figure(spec)?;
    if let Some(f) = filter {
        // An empty value is in every prompt, and the judge and the tool read blank rows
        // differently: no call.
        let value = f.equals.trim();
        if value.is_empty() || !prompt_names(prompt, value) {
            return None;
        }
    }
    let mut params = serde_json::json!({ "path": path });
    if let Some(column) = column {
        params["column"] = column.into();
    }
    if let Some(f) = filter {
        params["filter_column"] = f.column.clone().into();
        params["filter_value"] = f.equals.clone().into();
    }
    Some(TableStatsCall {
        params,
        field: aggregate_field(op),
        figure: computed(expected),
        count_column: filter.map(|f| f.column.clone()),
        group: None,
    })
}

/// The expected value of a `numeric_consistency` check that is a figure of a CSV input, and its
/// parts.
struct CsvFigure<'c> {
    expected: &'c Computed,
    path: &'c str,
    op: super::spec::Aggregate,
    column: Option<&'c str>,
    filter: Option<&'c super::spec::RowFilter>,
}

/// The [`CsvFigure`] of `spec`; `None` for every other check.
fn csv_figure(spec: &CheckSpec) -> Option<CsvFigure<'_>> {
    let CheckSpec::NumericConsistency { expected, .. } = spec else {
        return None;
    };
    let Computed::Csv {
        path,
        op,
        column,
        filter,
    } = expected
    else {
        return None;
    };
    Some(CsvFigure {
        expected,
        path,
        op: *op,
        column: column.as_deref(),
        filter: filter.as_ref(),
    })
}

/// For a `numeric_consistency` check on a CSV whose filter value the task's `prompt` does not
/// say (a label placeholder: `'<Warehouse>: N units'`, `'<Category> tickets: N'` for the
/// category with the most tickets), the `table_stats` call that gives its figure for every
/// value of the filter's column (`group_by`), and nothing that says which value the check
/// picks: `figure` names the column grouped by, never the filter's value. `None` for every
/// other check, and for an empty filter value (the tool and the judge read blank rows
/// differently).
pub fn table_stats_group_call(spec: &CheckSpec, prompt: &str) -> Option<TableStatsCall> {
    let CsvFigure {
        path,
        op,
        column,
        filter,
        ..
    } = csv_figure(spec)?;
    let f = filter?;
    let value = f.equals.trim();
    if value.is_empty() || prompt_names(prompt, value) {
        return None;
    }
    let params = serde_json::json!({
        "path": path,
        "column": column.unwrap_or(&f.column),
        "group_by": f.column,
    });
    let what = match (op, column) {
        (super::spec::Aggregate::Count, _) => "the number of data rows".to_string(),
        (op, Some(col)) => format!("the {} of the column \"{col}\"", op_word(op)),
        (op, None) => format!("the {}", op_word(op)),
    };
    Some(TableStatsCall {
        params,
        field: aggregate_field(op),
        figure: format!(
            "{what} of {} for each value of the column \"{}\"",
            q(path),
            f.column
        ),
        count_column: None,
        group: Some(value.to_string()),
    })
}

/// Whether `prompt` names `value` as a word of its own, ignoring case: "asynchronously" does not
/// name the category `sync` (a red team's prompt did, and the figure's words then named the
/// check's pick).
pub(crate) fn prompt_names(prompt: &str, value: &str) -> bool {
    let (prompt, value) = (prompt.to_lowercase(), value.to_lowercase());
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    prompt.match_indices(&value).any(|(i, m)| {
        let before = prompt[..i].chars().next_back();
        let after = prompt[i + m.len()..].chars().next();
        // A value that starts or ends with a mark (`5xx)`) is bounded by it.
        (!word(before) || !word(value.chars().next()))
            && (!word(after) || !word(value.chars().next_back()))
    })
}

/// The field of `table_stats`' answer that holds a figure of `op`.
fn aggregate_field(op: super::spec::Aggregate) -> &'static str {
    use super::spec::Aggregate;
    match op {
        Aggregate::Count => "rows",
        Aggregate::Sum => "sum",
        Aggregate::Mean => "mean",
        Aggregate::Min => "min",
        Aggregate::Max => "max",
    }
}

/// For a run that offers `table_stats`: how to get the number a `numeric_consistency` check on
/// a CSV column wants with that tool, as the call itself. The 1.5B, told only to "compute it
/// from the input", added a column by hand and got it wrong on every draw while the tool was
/// there; naming the call costs nothing the requirement does not already say (the file, the
/// column, the rows and the operation).
pub fn table_stats_hint(spec: &CheckSpec, prompt: &str) -> Option<String> {
    let call = table_stats_call(spec, prompt)?;
    Some(format!(
        "To get {}, call table_stats with {} and copy the \"{}\" of its answer; do not add the numbers yourself.",
        call.figure,
        call.named()?,
        call.field
    ))
}

fn op_word(op: super::spec::Aggregate) -> &'static str {
    use super::spec::Aggregate;
    match op {
        Aggregate::Sum => "sum",
        Aggregate::Count => "count",
        Aggregate::Min => "minimum",
        Aggregate::Max => "maximum",
        Aggregate::Mean => "mean",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::checks::{Check, CHECK_KINDS};
    use serde_json::json;

    /// One check of every kind, as a mission writes it, with what its requirement must say.
    fn every_kind() -> Vec<(serde_json::Value, Vec<&'static str>)> {
        vec![
            (
                json!({"kind": "file_exists", "path": "out/a.md", "non_empty": true}),
                vec!["`out/a.md` must exist", "not be empty"],
            ),
            (
                json!({"kind": "file_absent", "path": "a.md"}),
                vec!["`a.md` must not exist"],
            ),
            (
                json!({"kind": "content_matches", "path": "out/a.md", "pattern": "Harbor Library", "case_insensitive": true}),
                vec!["must contain the text the task asks for", "not shown"],
            ),
            (
                json!({"kind": "content_absent", "path": "out/a.md", "section": "Risks", "pattern": "no risk", "regex": true}),
                vec!["section \"Risks\"", "must not contain", "not shown"],
            ),
            (
                json!({"kind": "json_schema", "path": "out/f.json", "schema": {"type": "object", "required": ["grand_total"]}}),
                vec!["valid JSON", "grand_total"],
            ),
            (
                json!({"kind": "numeric_consistency", "path": "out/a.md", "section": "Tasks", "stated": {"regex": "Total hours: (.*)"}, "expected": {"from": "csv", "path": "data/t.csv", "op": "sum", "column": "hours"}, "units": ["hours"], "tolerance": 0}),
                vec![
                    "sum of the column \"hours\" of `data/t.csv`",
                    "exactly",
                    "Total hours",
                    "section \"Tasks\"",
                    "unit hours",
                ],
            ),
            (
                json!({"kind": "report_complete", "path": "out/a.md", "headings": ["Goal", "Risks"], "in_order": true, "min_words": 40, "max_words": 400, "min_section_words": 6, "max_repeats": 2}),
                vec![
                    "\"Goal\", \"Risks\"",
                    "in this order",
                    "40 to 400 words",
                    "at least 6 words",
                    "more than 2 times",
                ],
            ),
            (
                json!({"kind": "actions_called", "tools": ["list_dir", {"tool": "read_file", "path": "a.txt"}], "ordered": true}),
                vec!["list_dir", "read_file on `a.txt`", "in this order"],
            ),
            (
                json!({"kind": "variable_set", "name": "answer", "expected": 4242}),
                vec!["`answer` must be set"],
            ),
            (
                json!({"kind": "grounded", "path": "out/f.json", "claim": {"pointer": ""}}),
                vec!["copied exactly", "every input file"],
            ),
            (
                json!({"kind": "decision", "path": "out/a.md", "section": "Risks", "prompt": "Notes:\n{inputs}\n{artifact}\nDoes it name the main risk? Answer yes or no.\nAnswer:", "labels": ["yes", "no"], "expected": "yes", "floor_bps": 8765, "qualified": true}),
                vec!["judges whether", "section \"Risks\""],
            ),
            (
                json!({"kind": "statement", "path": "out/a.md", "section": "Goal", "all": ["\\bapps?\\b", "renew"], "unnegated": true}),
                vec!["one sentence", "not shown", "not be negated"],
            ),
            (
                json!({"kind": "mentions_all", "path": "out/a.md", "section": "Tasks", "values": {"from": "csv", "path": "data/t.csv", "column": "task"}, "numbers": {"column": "hours", "units": ["hours"]}}),
                vec!["every value of the column \"task\"", "that row's \"hours\""],
            ),
            (
                json!({"kind": "not_copied", "path": "out/a.md", "min_run_words": 8, "max_fraction": 0.75}),
                vec!["own words", "75%", "8 or more words"],
            ),
            (
                json!({"kind": "not_copied", "path": "out/a.md", "section": "Main complaint", "min_run_words": 6, "max_fraction": 0.5}),
                vec![
                    "the section 'Main complaint' of `out/a.md`",
                    "50%",
                    "6 or more words",
                ],
            ),
            (
                json!({"kind": "no_placeholders", "path": "out/a.md"}),
                vec!["no placeholder", "TODO"],
            ),
            (
                json!({"kind": "inputs_read", "before_writing": "out/a.md"}),
                vec![
                    "Read every input file in full",
                    "before you first write `out/a.md`",
                ],
            ),
            (
                json!({"kind": "written_this_run", "path": "out/a.md"}),
                vec!["Write `out/a.md` yourself"],
            ),
            (
                json!({"kind": "entries_match", "path": "out/f.json", "array": "/invoices", "sources": ["i/1.txt", "i/2.txt"], "fields": {"total": {"label": "Total due:", "number": true}}, "unique": ["total"]}),
                vec![
                    "`/invoices`",
                    "`i/1.txt`, `i/2.txt`",
                    "\"total\" is the text after \"Total due:\"",
                    "as a number",
                    "no two entries share a total",
                ],
            ),
            (json!({"kind": "inputs_unchanged"}), vec!["Do not change"]),
            (
                json!({"kind": "file_equals", "path": "src/a.rs", "expected_file": "judge/gold_a.rs"}),
                vec!["`src/a.rs`", "not shown"],
            ),
            (
                json!({"kind": "nothing_else_changed", "allow": ["Cargo.lock"]}),
                vec!["no file other than", "`Cargo.lock`"],
            ),
        ]
    }

    #[test]
    fn a_grounded_check_never_names_its_chosen_sources() {
        let check: Check = serde_json::from_value(json!({"id": "g", "kind": "grounded",
            "path": "out/order.txt", "claim": {"pointer": ""},
            "sources": ["logs/app-2024-06-13.log"]}))
        .unwrap();
        let text = requirement(&check.spec);
        assert!(!text.contains("2024-06-13"), "{text}");
        assert!(
            text.contains("the input file that holds what the task asks for"),
            "{text}"
        );
    }

    #[test]
    fn every_check_kind_renders_its_own_requirement() {
        let cases = every_kind();
        let mut seen = Vec::new();
        for (i, (mut value, wanted)) in cases.into_iter().enumerate() {
            value["id"] = json!(format!("c{i}"));
            let check: Check = serde_json::from_value(value.clone()).unwrap();
            let text = requirement(&check.spec);
            for w in wanted {
                assert!(
                    text.contains(w),
                    "{}: {text:?} lacks {w:?}",
                    check.spec.kind()
                );
            }
            seen.push(check.spec.kind());
        }
        for kind in CHECK_KINDS {
            assert!(seen.contains(kind), "no rendering test for the kind {kind}");
        }
    }

    #[test]
    fn withheld_values_and_semantic_thresholds_are_never_rendered() {
        let decision: Check = serde_json::from_value(json!({"id": "d", "kind": "decision",
            "path": "a.md", "prompt": "{artifact}\nIs it fine? Answer yes or no.", "labels": ["yes", "no"],
            "expected": "yes", "floor_bps": 8765, "qualified": false})).unwrap();
        let text = requirement(&decision.spec);
        assert!(!text.contains("8765") && !text.contains("87"), "{text}");
        assert!(!text.contains("{artifact}"), "{text}");
        assert!(text.contains("does not decide"), "{text}");
        let var: Check = serde_json::from_value(json!({"id": "v", "kind": "variable_set",
            "name": "answer", "expected": 4242}))
        .unwrap();
        assert!(!requirement(&var.spec).contains("4242"));
        let gold: Check = serde_json::from_value(json!({"id": "g", "kind": "file_equals",
            "path": "a.rs", "expected_file": "judge/gold.rs"}))
        .unwrap();
        assert!(!requirement(&gold.spec).contains("gold.rs"));
    }

    #[test]
    fn long_patterns_are_clipped() {
        let long = "a".repeat(MAX_QUOTED_CHARS * 3);
        let c: Check = serde_json::from_value(json!({"id": "x", "kind": "numeric_consistency",
            "path": "a.md", "stated": {"regex": long}, "tolerance": 0,
            "expected": {"from": "csv", "path": "t.csv", "op": "count"}}))
        .unwrap();
        let text = requirement(&c.spec);
        assert!(
            text.chars().count() < MAX_QUOTED_CHARS + 300,
            "{}",
            text.len()
        );
        assert!(text.contains("..."));
    }

    #[test]
    fn the_shipped_missions_render_without_any_computed_value() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../missions");
        for m in ["desk_task", "doc_extract"] {
            let contract = crate::mission::Mission::load(root.join(m)).unwrap();
            let text = requirements_message(&contract);
            assert_eq!(
                text.lines()
                    .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
                    .count(),
                contract.mission.checks.len()
            );
            // desk_task's hours sum to 64; no rendering may state it.
            assert!(!text.contains("64"), "{text}");
        }
    }

    #[test]
    fn a_table_stats_hint_names_the_call_for_a_csv_column_and_nothing_else() {
        const PROMPT: &str = "Sum the hours Ana logged and count the open tasks.";
        let spec = |v: serde_json::Value| -> CheckSpec {
            let c: Check = serde_json::from_value(v).unwrap();
            c.spec
        };
        let sum = spec(
            json!({"id": "x", "kind": "numeric_consistency", "path": "out/a.md",
            "stated": {"regex": "Total: (.*)"}, "tolerance": 0,
            "expected": {"from": "csv", "path": "data/t.csv", "op": "sum", "column": "hours",
                         "filter": {"column": "owner", "equals": "Ana"}}}),
        );
        let hint = table_stats_hint(&sum, PROMPT).unwrap();
        assert!(
            hint.contains(r#"call table_stats with {"path":"data/t.csv","column":"hours","filter_column":"owner","filter_value":"Ana"} and copy the "sum""#),
            "{hint}"
        );
        let count = spec(
            json!({"id": "x", "kind": "numeric_consistency", "path": "out/a.md",
            "stated": {"regex": "Rows: (.*)"}, "tolerance": 0,
            "expected": {"from": "csv", "path": "data/t.csv", "op": "count", "column": "hours"}}),
        );
        assert!(table_stats_hint(&count, PROMPT)
            .unwrap()
            .contains(r#"copy the "rows""#));
        // A count of the rows a filter picks: the call over the filter's column.
        let picked = spec(
            json!({"id": "x", "kind": "numeric_consistency", "path": "out/a.md",
            "stated": {"regex": "Open: (.*)"}, "tolerance": 0,
            "expected": {"from": "csv", "path": "data/t.csv", "op": "count",
                         "filter": {"column": "status", "equals": "open"}}}),
        );
        assert!(
            table_stats_hint(&picked, PROMPT).unwrap().contains(
                r#"call table_stats with {"path":"data/t.csv","filter_column":"status","filter_value":"open","column":"status"} and copy the "rows""#
            ),
            "{:?}",
            table_stats_hint(&picked, PROMPT)
        );
        // A count of every row names no call: counting a file's rows can be the task.
        let every = spec(
            json!({"id": "x", "kind": "numeric_consistency", "path": "out/a.md",
            "stated": {"regex": "Rows: (.*)"}, "tolerance": 0,
            "expected": {"from": "csv", "path": "data/t.csv", "op": "count"}}),
        );
        assert_eq!(table_stats_hint(&every, PROMPT), None);
        // Rows the task does not name: which rows matter can be the answer.
        assert_eq!(
            table_stats_hint(&picked, "Count the tickets of each status."),
            None
        );
        // An empty filter value is in every prompt; blank rows are read differently.
        let blank = spec(
            json!({"id": "x", "kind": "numeric_consistency", "path": "out/a.md",
            "stated": {"regex": "Unowned: (.*)"}, "tolerance": 0,
            "expected": {"from": "csv", "path": "data/t.csv", "op": "count",
                         "filter": {"column": "owner", "equals": " "}}}),
        );
        assert_eq!(table_stats_hint(&blank, PROMPT), None);
        // Where the number comes from is the task's answer for lines and matches: no hint.
        let lines = spec(
            json!({"id": "x", "kind": "numeric_consistency", "path": "out/a.md",
            "stated": {"regex": "Errors: (.*)"}, "tolerance": 0,
            "expected": {"from": "lines", "path": "logs/app.log", "pattern": "ERROR"}}),
        );
        assert_eq!(table_stats_hint(&lines, PROMPT), None);
        let exists = spec(json!({"id": "x", "kind": "file_exists", "path": "out/a.md"}));
        assert_eq!(table_stats_hint(&exists, PROMPT), None);
    }
}
