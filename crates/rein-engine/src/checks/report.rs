//! Report completeness: required headings (markdown) or fields (JSON), and word bounds.

use serde_json::Value;

use super::text::{count_words, heading_key, markdown_headings};
use super::Ctx;

pub(crate) fn report_complete(
    cx: &Ctx<'_>,
    path: &str,
    headings: &[String],
    fields: &[String],
    min_words: Option<u64>,
    max_words: Option<u64>,
) -> (bool, Vec<String>) {
    let text = match cx.read_text(path) {
        Ok(t) => t,
        Err(fact) => return (false, vec![fact]),
    };
    let mut ok = true;
    let mut facts = Vec::new();
    let words = count_words(&text) as u64;

    if !headings.is_empty() {
        let present: Vec<String> = markdown_headings(&text)
            .iter()
            .map(|h| heading_key(h))
            .collect();
        let missing: Vec<&str> = headings
            .iter()
            .filter(|h| !present.contains(&heading_key(h)))
            .map(String::as_str)
            .collect();
        if missing.is_empty() {
            facts.push(format!(
                "{path}: all {} required headings present",
                headings.len()
            ));
        } else {
            ok = false;
            facts.push(format!("{path}: missing headings: {}", missing.join(", ")));
        }
    }

    if !fields.is_empty() {
        match serde_json::from_str::<Value>(&text) {
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
