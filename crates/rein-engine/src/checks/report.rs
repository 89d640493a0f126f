//! Report completeness: required headings (Markdown, compared without emphasis), each with a
//! real section under it; required fields (JSON); no line pasted over and over; word bounds.

use std::collections::BTreeMap;

use serde_json::Value;

use super::json::parse_strict as parse_json;
use super::prose::{heading_key, join};
use super::text::{count_words, preview};
use super::Ctx;

/// What a report must have.
pub(crate) struct Shape<'a> {
    pub headings: &'a [String],
    pub fields: &'a [String],
    pub min_words: Option<u64>,
    pub max_words: Option<u64>,
    pub in_order: bool,
    pub min_section_words: Option<u64>,
    pub max_repeats: Option<u32>,
    pub no_other_headings: bool,
}

pub(crate) fn report_complete(cx: &Ctx<'_>, path: &str, shape: &Shape<'_>) -> (bool, Vec<String>) {
    let bytes = match cx.read_required(path) {
        Ok(b) => b,
        Err(fact) => return (false, vec![fact]),
    };
    let prose = match cx.read_prose(path, false) {
        Ok(p) => p,
        Err(fact) => return (false, vec![fact]),
    };
    let text = prose.text();
    let mut ok = true;
    let mut facts = Vec::new();
    let words = count_words(&text) as u64;
    let headings = shape.headings;

    if !headings.is_empty() {
        let present: Vec<String> = prose
            .headings()
            .iter()
            .map(|(_, h)| heading_key(h))
            .collect();
        let missing: Vec<&str> = headings
            .iter()
            .filter(|h| !present.contains(&heading_key(h)))
            .map(String::as_str)
            .collect();
        // A section written twice (an old version left above a new one) is no report
        // structure a person can read: which one counts cannot be told.
        let twice: Vec<String> = headings
            .iter()
            .filter_map(|h| {
                let n = present.iter().filter(|p| **p == heading_key(h)).count();
                (n > 1).then(|| format!("{h} ({n} times)"))
            })
            .collect();
        if !twice.is_empty() {
            ok = false;
            facts.push(format!(
                "{path}: required headings written more than once: {}; each section must appear once",
                twice.join(", ")
            ));
        }
        if shape.no_other_headings {
            let required: Vec<String> = headings.iter().map(|h| heading_key(h)).collect();
            let mut others: Vec<&str> = Vec::new();
            for ((_, h), key) in prose.headings().into_iter().zip(&present) {
                if !required.contains(key) && !others.contains(&h) {
                    others.push(h);
                }
            }
            if !others.is_empty() {
                ok = false;
                let shown: Vec<String> =
                    others.iter().map(|h| format!("`{}`", preview(h))).collect();
                facts.push(format!(
                    "{path}: headings the task does not ask for: {}; only the required ones may stand",
                    shown.join(", ")
                ));
            }
        }
        if missing.is_empty() {
            facts.push(format!(
                "{path}: all {} required headings present",
                headings.len()
            ));
            if shape.in_order {
                let positions: Vec<usize> = headings
                    .iter()
                    .filter_map(|h| present.iter().position(|p| *p == heading_key(h)))
                    .collect();
                if positions.windows(2).all(|w| w[0] < w[1]) {
                    facts.push(format!("{path}: headings in the required order"));
                } else {
                    ok = false;
                    facts.push(format!(
                        "{path}: headings out of order; required: {}",
                        headings.join(", ")
                    ));
                }
            }
        } else {
            ok = false;
            facts.push(format!("{path}: missing headings: {}", missing.join(", ")));
        }
        if let Some(min) = shape.min_section_words {
            let thin: Vec<String> = headings
                .iter()
                .filter_map(|h| {
                    let n = prose
                        .section(h)
                        .map_or(0, |s| count_words(&join(&s)) as u64);
                    (present.contains(&heading_key(h)) && n < min).then(|| format!("{h} ({n})"))
                })
                .collect();
            if thin.is_empty() {
                facts.push(format!("{path}: every section has at least {min} words"));
            } else {
                ok = false;
                facts.push(format!(
                    "{path}: sections with fewer than {min} words: {}",
                    thin.join(", ")
                ));
            }
        }
    }

    if let Some(max) = shape.max_repeats {
        let mut counts: BTreeMap<String, u32> = BTreeMap::new();
        for l in &prose.lines {
            let key = l.text.trim().to_lowercase();
            if count_words(&key) > 0 {
                *counts.entry(key).or_default() += 1;
            }
        }
        let repeated: Vec<String> = counts
            .iter()
            .filter(|(_, n)| **n > max)
            .map(|(l, n)| format!("`{}` ×{n}", preview(l)))
            .collect();
        if repeated.is_empty() {
            facts.push(format!("{path}: no line repeated more than {max} times"));
        } else {
            ok = false;
            facts.push(format!(
                "{path}: lines repeated more than {max} times: {}",
                repeated.join(", ")
            ));
        }
    }

    let (fields, min_words, max_words) = (shape.fields, shape.min_words, shape.max_words);
    if !fields.is_empty() {
        match parse_json(&bytes) {
            Ok(v) => {
                let missing: Vec<&str> = fields
                    .iter()
                    .filter(|f| !field_present(&v, f))
                    .map(String::as_str)
                    .collect();
                if missing.is_empty() {
                    facts.push(format!(
                        "{path}: all {} required fields present",
                        fields.len()
                    ));
                } else {
                    ok = false;
                    facts.push(format!(
                        "{path}: missing or empty fields: {}",
                        missing.join(", ")
                    ));
                }
            }
            Err(e) => {
                ok = false;
                facts.push(format!("{path}: not valid JSON, so no fields: {e}"));
            }
        }
    }

    let mut bounds = Vec::new();
    if let Some(lo) = min_words {
        bounds.push(format!("min {lo}"));
        ok &= words >= lo;
    }
    if let Some(hi) = max_words {
        bounds.push(format!("max {hi}"));
        ok &= words <= hi;
    }
    if bounds.is_empty() {
        facts.push(format!("{path}: {words} words"));
    } else {
        let within =
            min_words.is_none_or(|lo| words >= lo) && max_words.is_none_or(|hi| words <= hi);
        facts.push(format!(
            "{path}: {words} words ({}: {})",
            bounds.join(", "),
            if within {
                "within bounds"
            } else {
                "out of bounds"
            }
        ));
    }
    (ok, facts)
}

/// A field is present when it exists and is not null, `""`, `[]` or `{}`. A name starting with
/// `/` is a JSON pointer; otherwise it is a top-level key.
fn field_present(v: &Value, field: &str) -> bool {
    let found = if field.starts_with('/') {
        v.pointer(field)
    } else {
        v.get(field)
    };
    match found {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.trim().is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
        Some(_) => true,
    }
}
