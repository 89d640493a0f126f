//! Numeric consistency: what the artifact states against a value computed from frozen inputs.
//!
//! With a regex locator every statement in the artifact's prose is read (comments and code
//! blocks of a Markdown file are not prose), each is parsed strictly, and all must agree: a
//! decoy line cannot win by coming first. The expected value is a withheld fact: it is
//! journaled and shown to the person, never fed back to the model.

use regex::Regex;
use serde_json::Value;

use super::csv::parse_csv;
use super::json::parse_strict as parse_json;
use super::numbers::{parse_strict, NumberRules};
use super::spec::{Aggregate, CheckSpec, Computed, Locator, Occurrences};
use super::text::{fmt_num, preview};
use super::{Ctx, Judged};

/// Slack for binary floating point on top of the contract's tolerance (sums of decimals).
const FLOAT_SLACK: f64 = 1e-9;

/// Most input lines a failed check quotes (lever `source-lines`); with more matches it quotes
/// none, since a partial list would read as the whole.
const MAX_QUOTED_LINES: usize = 8;

/// What a numeric check asks of the stated number.
pub(crate) struct Statement<'a> {
    pub path: &'a str,
    pub stated: &'a Locator,
    pub section: Option<&'a str>,
    pub rules: NumberRules<'a>,
    pub occurrences: Occurrences,
    pub decimals: Option<u8>,
}

impl<'a> Statement<'a> {
    /// What a `numeric_consistency` check reads as its statement; `None` for another kind.
    pub(crate) fn of(spec: &'a CheckSpec) -> Option<Statement<'a>> {
        let CheckSpec::NumericConsistency {
            path,
            stated,
            section,
            signed,
            units,
            occurrences,
            decimals,
            ..
        } = spec
        else {
            return None;
        };
        Some(Statement {
            path,
            stated,
            section: section.as_deref(),
            rules: NumberRules {
                signed: *signed,
                units,
            },
            occurrences: *occurrences,
            decimals: *decimals,
        })
    }
}

/// Whether the number in `raw` is written with the `decimals` a check asks for (any, when it
/// asks for none): the judge's rule, which stats-first and line fields hold figures to too.
pub(crate) fn written_with_decimals(raw: &str, decimals: Option<u8>) -> bool {
    decimals.is_none_or(|n| decimals_written(raw) == usize::from(n))
}

/// How many decimals the number in `raw` is written with (digits after its decimal point; a
/// comma is a thousands separator, as the judge reads numbers).
fn decimals_written(raw: &str) -> usize {
    let number = raw
        .trim_start_matches(|c: char| !c.is_ascii_digit() && c != '.')
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .next()
        .unwrap_or("");
    number.split_once('.').map_or(0, |(_, after)| {
        after.chars().take_while(char::is_ascii_digit).count()
    })
}

pub(crate) fn numeric_consistency(
    cx: &Ctx<'_>,
    want: &Statement<'_>,
    expected: &Computed,
    tolerance: f64,
) -> Judged {
    let mut j = Judged::default();
    let stated = match stated_numbers(cx, want, &mut j) {
        Some(s) => s,
        None => return j,
    };
    let mut lines = Vec::new();
    let e = match computed_number(cx, expected, &mut lines) {
        Ok((v, fact)) => {
            j.withhold(fact);
            v
        }
        Err(fact) => {
            j.say(fact);
            return j;
        }
    };
    let agrees = |value: f64| (value - e).abs() <= tolerance + FLOAT_SLACK;
    // Written with another number of decimals than the task asks for: the figure may agree, the
    // line is still not what was asked (`1073.333333` for "one decimal").
    let mis_written: Vec<&String> = want
        .decimals
        .map(|n| {
            stated
                .iter()
                .map(|(raw, _)| raw)
                .filter(|raw| !written_with_decimals(raw, Some(n)))
                .collect()
        })
        .unwrap_or_default();
    if let (Some(n), false) = (want.decimals, mis_written.is_empty()) {
        j.say(format!(
            "{}: written with another number of decimals than {n}: {}",
            want.path,
            mis_written
                .iter()
                .map(|raw| format!("`{}`", preview(raw)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let ok = stated.iter().all(|(_, v)| agrees(*v));
    let which = |i: usize| {
        if stated.len() == 1 {
            "the stated number".to_string()
        } else {
            format!("statement {} of {}", i + 1, stated.len())
        }
    };
    // The conclusion comes first: with many statements, the list of them could fill the
    // feedback's clip and leave the model without the reason.
    if !ok {
        j.say(if stated.len() == 1 {
            "the stated number does not agree with the value computed from the inputs".to_string()
        } else {
            format!(
                "not all {} statements agree with the value computed from the inputs; every one \
                 must (each is listed below)",
                stated.len()
            )
        });
    }
    for (i, (raw, value)) in stated.iter().enumerate() {
        // How the number was read, only where the text does not hold it as written: the
        // 1.5B pasted "`1` (read as 1)" into its line as "1 (read as 1)" in three runs of
        // explore, and "`53 rows` (read as 53)" as "53 rows (read as 53)".
        let shown = preview(raw);
        let as_written = fmt_num(*value);
        let read = if shown
            .split(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',' | '-')))
            .any(|token| token.trim_end_matches('.') == as_written)
        {
            format!("{} `{shown}`", which(i))
        } else {
            format!("{} `{shown}` (read as {})", which(i), fmt_num(*value))
        };
        if agrees(*value) {
            let fact = format!("{read} agrees with the value computed from the inputs");
            // Which of several candidates agrees is the answer: said only when all do.
            if ok {
                j.say(fact);
            } else {
                j.withhold(fact);
            }
        } else {
            j.withhold(format!(
                "{}: difference {} exceeds tolerance {}",
                which(i),
                fmt_num((value - e).abs()),
                fmt_num(tolerance)
            ));
        }
        if !ok {
            j.say(read);
        }
    }
    if !ok && lines.len() <= MAX_QUOTED_LINES {
        for (path, number, line) in &lines {
            j.quote(path, *number, line);
        }
    }
    j.passed = ok && mis_written.is_empty();
    j
}

/// Every stated number, raw and parsed; `None` (with the facts in `j`) when the statements
/// cannot be judged: none, one refused by the parser, or more than the check allows.
fn stated_numbers(
    cx: &Ctx<'_>,
    want: &Statement<'_>,
    j: &mut Judged,
) -> Option<Vec<(String, f64)>> {
    let bytes = match cx.read_required(want.path) {
        Ok(b) => b,
        Err(fact) => {
            j.say(fact);
            return None;
        }
    };
    stated_numbers_of(&bytes, want, j)
}

/// [`stated_numbers`] of a file's `bytes`.
fn stated_numbers_of(
    bytes: &[u8],
    want: &Statement<'_>,
    j: &mut Judged,
) -> Option<Vec<(String, f64)>> {
    let path = want.path;
    let raws: Vec<String> = match want.stated {
        Locator::Regex(pattern) => {
            let re = match Regex::new(pattern) {
                Ok(r) => r,
                Err(e) => {
                    j.say(format!("invalid regex: {e}"));
                    return None;
                }
            };
            let prose = match super::prose_of(path, bytes, false) {
                Ok(p) => p,
                Err(fact) => {
                    j.say(fact);
                    return None;
                }
            };
            // Every statement counts against the deliverable, doubtful text included (a total
            // in a styled HTML block is still shown to someone); one must certainly render in
            // the section.
            let all = captures(&re, &prose.all_text());
            if all.is_empty() {
                j.say(format!("{path}: no statement matches `{pattern}`"));
                return None;
            }
            if let Some(section) = want.section {
                match prose.scope(Some(section)) {
                    Ok(t) if !captures(&re, &t).is_empty() => {}
                    Ok(_) => {
                        j.say(format!(
                            "{path}: no statement matching `{pattern}` stands in section `{section}`"
                        ));
                        return None;
                    }
                    Err(fact) => {
                        j.say(format!("{path}: {fact}"));
                        return None;
                    }
                }
            }
            all
        }
        Locator::Pointer(pointer) => {
            let v = match parse_json(bytes) {
                Ok(v) => v,
                Err(e) => {
                    j.say(format!("{path}: not valid JSON: {e}"));
                    return None;
                }
            };
            match v.pointer(pointer) {
                Some(Value::Number(n)) => vec![n.to_string()],
                Some(other) => {
                    j.say(format!(
                        "{path}: JSON pointer `{pointer}` holds {}, not a JSON number",
                        preview(&other.to_string())
                    ));
                    return None;
                }
                None => {
                    j.say(format!("{path}: nothing at JSON pointer `{pointer}`"));
                    return None;
                }
            }
        }
    };
    if want.occurrences == Occurrences::ExactlyOne && raws.len() != 1 {
        j.say(format!(
            "{path}: {} statements of the number; this check allows exactly one",
            raws.len()
        ));
        return None;
    }
    let mut out = Vec::with_capacity(raws.len());
    let mut refused = false;
    for raw in raws {
        match parse_strict(&raw, &want.rules) {
            Ok(v) => out.push((raw, v)),
            Err(why) => {
                refused = true;
                j.say(format!(
                    "{path}: states `{}`, which is not a number as written: {why}",
                    preview(&raw)
                ));
            }
        }
    }
    if refused {
        return None;
    }
    Some(out)
}

/// The one number a `numeric_consistency` check located by a regex reads from `line` as its
/// judge reads a statement (the first group, parsed under the check's sign and unit rules);
/// `None` for another kind of check, no match, several, or no number.
pub fn stated_in_line(spec: &CheckSpec, line: &str) -> Option<f64> {
    let CheckSpec::NumericConsistency {
        stated: Locator::Regex(pattern),
        signed,
        units,
        ..
    } = spec
    else {
        return None;
    };
    let re = Regex::new(pattern).ok()?;
    let [raw] = captures(&re, line).try_into().ok()?;
    let rules = NumberRules {
        signed: *signed,
        units,
    };
    parse_strict(&raw, &rules).ok()
}

/// The first capture group of every match.
fn captures(re: &Regex, text: &str) -> Vec<String> {
    re.captures_iter(text)
        .filter_map(|c| c.get(1).map(|m| m.as_str().to_string()))
        .collect()
}

/// The text a locator selects from an artifact: the first capture of the first regex match in
/// its prose, or the value at a JSON pointer (strict JSON).
pub(crate) fn locate(cx: &Ctx<'_>, path: &str, loc: &Locator) -> Result<Located, String> {
    let bytes = cx.read_required(path)?;
    match loc {
        Locator::Regex(pattern) => {
            let re = Regex::new(pattern).map_err(|e| format!("invalid regex: {e}"))?;
            let text = cx.read_prose(path, false)?.text();
            let caps = re
                .captures(&text)
                .ok_or_else(|| format!("{path}: regex `{pattern}` does not match"))?;
            let m = caps
                .get(1)
                .ok_or_else(|| format!("{path}: regex `{pattern}` captured nothing"))?;
            Ok(Located::Text(m.as_str().to_string()))
        }
        Locator::Pointer(pointer) => {
            let v = parse_json(&bytes).map_err(|e| format!("{path}: not valid JSON: {e}"))?;
            let found = v
                .pointer(pointer)
                .ok_or_else(|| format!("{path}: nothing at JSON pointer `{pointer}`"))?;
            Ok(Located::Json(found.clone()))
        }
    }
}

pub(crate) enum Located {
    Text(String),
    Json(Value),
}

fn aggregate(op: Aggregate, values: &[f64]) -> Result<f64, String> {
    if op == Aggregate::Count {
        return Ok(values.len() as f64);
    }
    if values.is_empty() {
        return Err("no values to aggregate".to_string());
    }
    Ok(match op {
        Aggregate::Sum => values.iter().sum(),
        Aggregate::Mean => values.iter().sum::<f64>() / values.len() as f64,
        Aggregate::Min => values.iter().copied().fold(f64::INFINITY, f64::min),
        Aggregate::Max => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        Aggregate::Count => values.len() as f64,
    })
}

pub(crate) fn op_name(op: Aggregate) -> &'static str {
    match op {
        Aggregate::Sum => "sum",
        Aggregate::Count => "count",
        Aggregate::Min => "min",
        Aggregate::Max => "max",
        Aggregate::Mean => "mean",
    }
}

/// A CSV input's header and rows.
pub(crate) fn csv_table(
    cx: &Ctx<'_>,
    path: &str,
) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    let bytes = cx.read_frozen_input(path)?;
    let rows = parse_csv(&String::from_utf8_lossy(&bytes)).map_err(|e| format!("{path}: {e}"))?;
    let mut rows = rows.into_iter();
    let header = rows
        .next()
        .ok_or_else(|| format!("{path}: no header row"))?;
    Ok((header, rows.collect()))
}

/// The index of a CSV column: exact name first, then ignoring ASCII case.
pub(crate) fn column_index(path: &str, header: &[String], name: &str) -> Result<usize, String> {
    header
        .iter()
        .position(|h| h.trim() == name)
        .or_else(|| {
            header
                .iter()
                .position(|h| h.trim().eq_ignore_ascii_case(name))
        })
        .ok_or_else(|| {
            format!(
                "{path}: no column `{name}` (columns: {})",
                header.join(", ")
            )
        })
}

/// Whether `figure` (a number as a tool writes it) is a number this `numeric_consistency` check
/// would accept as its expected value, computed from the frozen inputs in `world` as the judge
/// computes it, within the check's tolerance and written with its `decimals` if it asks for
/// some. `false` for every other check, and whenever the
/// value cannot be computed. Lever `stats-first` shows a tool's figure only when this holds, so
/// a tool that reads a table otherwise than the judge (case-blind filters, blank rows) never
/// hands the model a wrong number; nothing of the judge's value is shown.
pub fn judge_agrees(
    contract: &crate::mission::FrozenContract,
    world: &dyn super::World,
    spec: &CheckSpec,
    figure: &str,
) -> bool {
    let CheckSpec::NumericConsistency {
        expected,
        tolerance,
        decimals,
        ..
    } = spec
    else {
        return false;
    };
    // Written with other decimals than the check asks for, the judge fails it however close.
    if !written_with_decimals(figure, *decimals) {
        return false;
    }
    let Ok(value) = figure.trim().parse::<f64>() else {
        return false;
    };
    let cx = Ctx {
        contract,
        world,
        trace: &[],
    };
    computed_number(&cx, expected, &mut Vec::new())
        .is_ok_and(|(e, _)| value.is_finite() && (value - e).abs() <= *tolerance + FLOAT_SLACK)
}

/// The numbers a `numeric_consistency` check reads from `text` as the file at its path, as its
/// judge reads them (every statement of the file, one standing in the check's section), or the
/// judge's facts of why they cannot be judged (none, one that is not a number as written, more
/// than the check allows). Nothing of the expected value is computed or said. Lever
/// `line-fields` refuses a write whose text states a figure otherwise than its field.
pub fn statements_in(spec: &CheckSpec, text: &str) -> Result<Vec<f64>, Vec<String>> {
    let Some(want) = Statement::of(spec) else {
        return Err(vec!["not a numeric_consistency check".into()]);
    };
    let mut j = Judged::default();
    stated_numbers_of(text.as_bytes(), &want, &mut j)
        .map(|v| v.into_iter().map(|(_, n)| n).collect())
        .ok_or(j.facts)
}

/// The expected value and the withheld fact that states it. For a value taken from lines of
/// the inputs by a pattern (not a count of them) `lines` gets each matched line: its file, its
/// number (1-based) and its text.
fn computed_number(
    cx: &Ctx<'_>,
    expected: &Computed,
    lines: &mut Vec<(String, usize, String)>,
) -> Result<(f64, String), String> {
    let plain = NumberRules::default();
    match expected {
        Computed::Csv {
            path,
            op,
            column,
            filter,
        } => {
            let (header, data) = csv_table(cx, path)?;
            let filter_idx = match filter {
                Some(f) => Some((column_index(path, &header, &f.column)?, f)),
                None => None,
            };
            let selected: Vec<(usize, &Vec<String>)> = data
                .iter()
                .enumerate()
                .filter(|(_, row)| match &filter_idx {
                    Some((i, f)) => row.get(*i).map(|c| c.trim()) == Some(f.equals.trim()),
                    None => true,
                })
                .collect();
            let mut values = Vec::with_capacity(selected.len());
            if let Some(column) = column.as_deref().filter(|_| *op != Aggregate::Count) {
                let ci = column_index(path, &header, column)?;
                for (r, row) in &selected {
                    let cell = row.get(ci).map(String::as_str).unwrap_or("");
                    let v = parse_strict(cell, &plain).map_err(|why| {
                        format!(
                            "{path}: row {}: `{}` in column `{column}` is not a number: {why}",
                            r + 2,
                            preview(cell)
                        )
                    })?;
                    values.push(v);
                }
            } else {
                values = vec![0.0; selected.len()];
            }
            let n = aggregate(*op, &values).map_err(|e| format!("{path}: {e}"))?;
            let what = match column {
                Some(c) if *op != Aggregate::Count => format!("{} of column `{c}`", op_name(*op)),
                _ => "count of rows".to_string(),
            };
            let filt = filter
                .as_ref()
                .map(|f| format!(" where `{}` = `{}`", f.column, f.equals))
                .unwrap_or_default();
            Ok((
                n,
                format!(
                    "expected: {path}: {what}{filt} over {} rows = {}",
                    selected.len(),
                    fmt_num(n)
                ),
            ))
        }
        Computed::Lines { path, pattern } => {
            let bytes = cx.read_frozen_input(path)?;
            let re = Regex::new(pattern).map_err(|e| format!("invalid regex: {e}"))?;
            let text = String::from_utf8_lossy(&bytes);
            let n = text.lines().filter(|l| re.is_match(l)).count() as f64;
            Ok((
                n,
                format!("expected: {path}: {} lines match `{pattern}`", fmt_num(n)),
            ))
        }
        Computed::Matches {
            paths,
            pattern,
            op,
            units,
        } => {
            let re = Regex::new(pattern).map_err(|e| format!("invalid regex: {e}"))?;
            let rules = NumberRules {
                signed: false,
                units,
            };
            let mut values = Vec::new();
            for path in paths {
                let bytes = cx.read_frozen_input(path)?;
                let text = String::from_utf8_lossy(&bytes);
                for caps in re.captures_iter(&text) {
                    if *op == Aggregate::Count {
                        values.push(0.0);
                        continue;
                    }
                    // The line that holds the value (the first group), not where the match
                    // starts: a pattern may begin on the line above its number.
                    let at = caps.get(1).or_else(|| caps.get(0)).map_or(0, |m| m.start());
                    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
                    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
                    let number = text[..at].matches('\n').count() + 1;
                    if !lines.iter().any(|(p, n, _)| p == path && *n == number) {
                        lines.push((
                            path.clone(),
                            number,
                            text[start..end].trim_end().to_string(),
                        ));
                    }
                    let t = caps.get(1).map(|m| m.as_str()).unwrap_or("");
                    let v = parse_strict(t, &rules).map_err(|why| {
                        format!("{path}: match `{}` is not a number: {why}", preview(t))
                    })?;
                    values.push(v);
                }
            }
            let n = aggregate(*op, &values).map_err(|e| format!("{}: {e}", paths.join(", ")))?;
            Ok((
                n,
                format!(
                    "expected: {}: {} over {} matches of `{pattern}` = {}",
                    paths.join(", "),
                    op_name(*op),
                    values.len(),
                    fmt_num(n)
                ),
            ))
        }
        Computed::Json { path, pointer } => {
            let bytes = cx.read_frozen_input(path)?;
            let v = parse_json(&bytes).map_err(|e| format!("{path}: not valid JSON: {e}"))?;
            let n = match v.pointer(pointer) {
                Some(Value::Number(n)) => n.as_f64(),
                Some(Value::String(s)) => parse_strict(s, &plain).ok(),
                _ => None,
            }
            .ok_or_else(|| format!("{path}: no number at JSON pointer `{pointer}`"))?;
            Ok((n, format!("expected: {path}: `{pointer}` = {}", fmt_num(n))))
        }
    }
}
