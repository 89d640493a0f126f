//! Numeric consistency: a number the artifact states against one computed from frozen inputs.

use regex::Regex;
use serde_json::Value;

use super::csv::parse_csv;
use super::spec::{Aggregate, Computed, Locator};
use super::text::{fmt_num, parse_number, preview};
use super::Ctx;

/// Slack for binary floating point on top of the contract's tolerance (sums of decimals).
const FLOAT_SLACK: f64 = 1e-9;

pub(crate) fn numeric_consistency(
    cx: &Ctx<'_>,
    path: &str,
    stated: &Locator,
    expected: &Computed,
    tolerance: f64,
) -> (bool, Vec<String>) {
    let mut facts = Vec::new();
    let s = match stated_number(cx, path, stated) {
        Ok((v, fact)) => {
            facts.push(fact);
            v
        }
        Err(fact) => return (false, vec![fact]),
    };
    let e = match computed_number(cx, expected) {
        Ok((v, fact)) => {
            facts.push(fact);
            v
        }
        Err(fact) => {
            facts.push(fact);
            return (false, facts);
        }
    };
    let diff = (s - e).abs();
    let ok = diff <= tolerance + FLOAT_SLACK;
    facts.push(format!(
        "difference {} {} tolerance {}",
        fmt_num(diff),
        if ok { "within" } else { "exceeds" },
        fmt_num(tolerance)
    ));
    (ok, facts)
}

/// The text a locator selects from an artifact: the first capture of the first regex match, or
/// the value at a JSON pointer.
pub(crate) fn locate(cx: &Ctx<'_>, path: &str, loc: &Locator) -> Result<Located, String> {
    match loc {
        Locator::Regex(pattern) => {
            let text = cx.read_text(path)?;
            let re = Regex::new(pattern).map_err(|e| format!("invalid regex: {e}"))?;
            let caps = re
                .captures(&text)
                .ok_or_else(|| format!("{path}: regex `{pattern}` does not match"))?;
            let m = caps
                .get(1)
                .ok_or_else(|| format!("{path}: regex `{pattern}` captured nothing"))?;
            Ok(Located::Text(m.as_str().to_string()))
        }
        Locator::Pointer(pointer) => {
            let bytes = cx.read_required(path)?;
            let v: Value = serde_json::from_slice(&bytes)
                .map_err(|e| format!("{path}: not valid JSON: {e}"))?;
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

fn stated_number(cx: &Ctx<'_>, path: &str, loc: &Locator) -> Result<(f64, String), String> {
    let how = match loc {
        Locator::Regex(r) => format!("regex `{r}`"),
        Locator::Pointer(p) => format!("JSON pointer `{p}`"),
    };
    let n = match locate(cx, path, loc)? {
        Located::Text(t) => parse_number(&t)
            .ok_or_else(|| format!("{path}: `{}` ({how}) is not a number", preview(&t)))?,
        Located::Json(v) => {
            json_number(&v).ok_or_else(|| format!("{path}: {how} holds {v}, not a number"))?
        }
    };
    Ok((n, format!("{path}: states {} ({how})", fmt_num(n))))
}

fn json_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => parse_number(s),
        _ => None,
    }
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

fn op_name(op: Aggregate) -> &'static str {
    match op {
        Aggregate::Sum => "sum",
        Aggregate::Count => "count",
        Aggregate::Min => "min",
        Aggregate::Max => "max",
        Aggregate::Mean => "mean",
    }
}

fn computed_number(cx: &Ctx<'_>, expected: &Computed) -> Result<(f64, String), String> {
    match expected {
        Computed::Csv {
            path,
            op,
            column,
            filter,
        } => {
            let bytes = cx.read_frozen_input(path)?;
            let rows =
                parse_csv(&String::from_utf8_lossy(&bytes)).map_err(|e| format!("{path}: {e}"))?;
            let (header, data) = rows
                .split_first()
                .ok_or_else(|| format!("{path}: no header row"))?;
            let col_index = |name: &str| {
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
            };
            let filter_idx = match filter {
                Some(f) => Some((col_index(&f.column)?, f)),
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
                let ci = col_index(column)?;
                for (r, row) in &selected {
                    let cell = row.get(ci).map(String::as_str).unwrap_or("");
                    let v = parse_number(cell).ok_or_else(|| {
                        format!(
                            "{path}: row {}: `{}` in column `{column}` is not a number",
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
                    "{path}: {what}{filt} over {} rows = {}",
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
            Ok((n, format!("{path}: {} lines match `{pattern}`", fmt_num(n))))
        }
        Computed::Matches { paths, pattern, op } => {
            let re = Regex::new(pattern).map_err(|e| format!("invalid regex: {e}"))?;
            let mut values = Vec::new();
            for path in paths {
                let bytes = cx.read_frozen_input(path)?;
                let text = String::from_utf8_lossy(&bytes);
                for caps in re.captures_iter(&text) {
                    if *op == Aggregate::Count {
                        values.push(0.0);
                        continue;
                    }
                    let t = caps.get(1).map(|m| m.as_str()).unwrap_or("");
                    let v = parse_number(t)
                        .ok_or_else(|| format!("{path}: match `{}` is not a number", preview(t)))?;
                    values.push(v);
                }
            }
            let n = aggregate(*op, &values).map_err(|e| format!("{}: {e}", paths.join(", ")))?;
            Ok((
                n,
                format!(
                    "{}: {} over {} matches of `{pattern}` = {}",
                    paths.join(", "),
                    op_name(*op),
                    values.len(),
                    fmt_num(n)
                ),
            ))
        }
        Computed::Json { path, pointer } => {
            let bytes = cx.read_frozen_input(path)?;
            let v: Value = serde_json::from_slice(&bytes)
                .map_err(|e| format!("{path}: not valid JSON: {e}"))?;
            let n = v
                .pointer(pointer)
                .and_then(json_number)
                .ok_or_else(|| format!("{path}: no number at JSON pointer `{pointer}`"))?;
            Ok((n, format!("{path}: `{pointer}` = {}", fmt_num(n))))
        }
    }
}
