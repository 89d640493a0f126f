//! `entries_match`: grounding that means "copied from its own source". Entry i of a JSON array
//! is compared with source i, field by field, against the value that source labels (the rest of
//! the line that starts with the label), so values shuffled between entries, a label copied as
//! a value, or one entry repeated for all sources all fail.

use std::collections::BTreeMap;

use serde_json::Value;

use super::json::parse_strict as parse_json;
use super::normalize::{normalize, normalize_bytes};
use super::numbers::{parse_strict, NumberRules};
use super::spec::FieldRule;
use super::text::preview;
use super::{Ctx, Judged};

/// Slack for binary floating point on top of a field's tolerance.
const FLOAT_SLACK: f64 = 1e-9;

/// The first line of `text` that starts with `label` (ignoring leading space): its number
/// (1-based), the line as it stands, and the rest of it after the label, trimmed.
fn labelled(text: &str, label: &str) -> Option<(usize, String, String)> {
    text.lines().enumerate().find_map(|(i, l)| {
        l.trim_start()
            .strip_prefix(label)
            .map(|rest| (i + 1, l.trim_end().to_string(), rest.trim().to_string()))
    })
}

/// How many lines of `text` start with `label` (ignoring leading space).
fn label_lines(text: &str, label: &str) -> usize {
    text.lines()
        .filter(|l| l.trim_start().starts_with(label))
        .count()
}

pub(crate) fn entries_match(
    cx: &Ctx<'_>,
    path: &str,
    array: &str,
    sources: &[String],
    fields: &BTreeMap<String, FieldRule>,
    unique: &[String],
) -> Judged {
    let mut j = Judged::default();
    let doc = match cx
        .read_required(path)
        .and_then(|b| parse_json(&b).map_err(|e| format!("{path}: not valid JSON: {e}")))
    {
        Ok(v) => v,
        Err(fact) => {
            j.say(fact);
            return j;
        }
    };
    let Some(Value::Array(entries)) = doc.pointer(array) else {
        j.say(format!("{path}: no array at JSON pointer `{array}`"));
        return j;
    };
    if entries.len() != sources.len() {
        j.say(format!(
            "{path}: {} entries at `{array}`, one per source wanted ({} sources)",
            entries.len(),
            sources.len()
        ));
        return j;
    }
    let mut ok = true;
    for (i, (entry, source)) in entries.iter().zip(sources).enumerate() {
        let text = match cx.read_frozen_input(source) {
            Ok(b) => normalize_bytes(&b),
            Err(fact) => {
                j.say(fact);
                return j;
            }
        };
        for (name, rule) in fields {
            let at = format!("entry {} `{name}`", i + 1);
            let Some((number, line, truth)) = labelled(&text, &rule.label) else {
                ok = false;
                j.say(format!(
                    "{source}: no line starts with `{}`, so {at} cannot be checked",
                    rule.label
                ));
                continue;
            };
            let Some(value) = entry.get(name) else {
                ok = false;
                j.say(format!("{path}: {at} is missing"));
                continue;
            };
            match field_agrees(value, &truth, rule) {
                Ok(()) => j.say(format!(
                    "{path}: {at} matches the `{}` line of {source}",
                    rule.label
                )),
                Err(why) => {
                    ok = false;
                    j.say(format!(
                        "{path}: {at} = {} is not the value on the `{}` line of {source}{why}",
                        preview(&value.to_string()),
                        rule.label
                    ));
                    j.withhold(format!("{source}: `{}` {}", rule.label, preview(&truth)));
                    // With the label on several lines, quoting the judge's one would say
                    // which candidate is right.
                    if label_lines(&text, &rule.label) == 1 {
                        j.quote(source, number, &line);
                    }
                }
            }
        }
    }
    for name in unique {
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for (i, entry) in entries.iter().enumerate() {
            let Some(v) = entry.get(name) else { continue };
            let key = match v {
                Value::String(s) => normalize(s).trim().to_lowercase(),
                other => other.to_string(),
            };
            if let Some(first) = seen.insert(key, i) {
                ok = false;
                j.say(format!(
                    "{path}: entries {} and {} repeat `{name}` {}",
                    first + 1,
                    i + 1,
                    preview(&v.to_string())
                ));
            }
        }
    }
    j.passed = ok;
    j
}

/// Whether a value equals the labelled truth: exact text after normalisation, or a JSON number
/// within tolerance of the strictly parsed truth. `Err` says why not (without the truth).
fn field_agrees(value: &Value, truth: &str, rule: &FieldRule) -> Result<(), String> {
    if rule.number {
        let Value::Number(n) = value else {
            return Err(": a JSON number is required".into());
        };
        let want = parse_strict(
            truth,
            &NumberRules {
                signed: false,
                units: &rule.units,
            },
        )
        .map_err(|e| format!(" (the source's value is not a number: {e})"))?;
        let got = n.as_f64().unwrap_or(f64::NAN);
        return if (got - want).abs() <= rule.tolerance + FLOAT_SLACK {
            Ok(())
        } else {
            Err(String::new())
        };
    }
    let Value::String(s) = value else {
        return Err(": a string is required".into());
    };
    if normalize(s).trim() == truth {
        Ok(())
    } else {
        Err(String::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_takes_the_rest_of_its_line() {
        let t = "INVOICE\nVendor: Northwind Paper Co.\nBill to: Harbor Library\n";
        assert_eq!(
            labelled(t, "Vendor:"),
            Some((
                2,
                "Vendor: Northwind Paper Co.".to_string(),
                "Northwind Paper Co.".to_string()
            ))
        );
        assert_eq!(labelled(t, "Total due:"), None);
    }
}
