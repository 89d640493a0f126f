//! Lever `document-facts`: a write of a JSON deliverable carries counts and sums Rein computed
//! from the document just written (never from the inputs, never what the judge expects), so a
//! small model checks its own totals against arithmetic it cannot do: the 1.5B listed four
//! receipts and gave their total as 138.62 where its own four figures sum to 211.43, and counted
//! three backend applicants in a list that names two.

use rein_protocol::{GateOutcome, GateReport};
use rein_workspace::desk::column_totals;
use serde_json::{json, Map, Value};

use crate::checks::World;

/// Arrays described, at most (the first ones found, depth first).
const MAX_ARRAYS: usize = 4;
/// Distinct values of a text field counted, at most: past that a field is a name, not a kind.
const MAX_DISTINCT_VALUES: usize = 8;
/// Characters of a counted value, at most.
const MAX_VALUE_CHARS: usize = 60;

/// Adds `document_facts` to the result of a write of `artifact` that ran, when the file is now a
/// JSON document with at least one array of objects. Anything else leaves the result as it was.
pub fn add_document_facts(
    world: &dyn World,
    artifact: &str,
    written: Option<&str>,
    report: &mut GateReport,
) {
    if report.outcome != GateOutcome::Executed
        || !written.is_some_and(|p| crate::checks::same_path(p, artifact))
        || !artifact.to_lowercase().ends_with(".json")
    {
        return;
    }
    let Ok(Some(bytes)) = world.read(artifact) else {
        return;
    };
    let Ok(document) = serde_json::from_slice::<Value>(&bytes) else {
        return;
    };
    let arrays = describe_arrays(&document);
    if arrays.is_empty() {
        return;
    }
    let facts = json!({
        "note": "Computed by Rein from the document you just wrote (not from the inputs): check every count and total in it against these, and fix the document where they differ.",
        "arrays": arrays,
    });
    if let Value::Object(fields) = &mut report.result {
        let rest = std::mem::take(fields);
        fields.insert("document_facts".to_string(), facts);
        fields.extend(rest);
    }
}

/// The arrays of objects in `document` (the root, or under object keys at any depth), each with
/// its entry count, the sum of each numeric field and the count of each value of a text field
/// whose values repeat.
pub fn describe_arrays(document: &Value) -> Vec<Value> {
    let mut found = Vec::new();
    collect_arrays(document, "", &mut found);
    found
        .into_iter()
        .take(MAX_ARRAYS)
        .map(|(at, entries)| describe(&at, entries))
        .collect()
}

fn collect_arrays<'d>(value: &'d Value, at: &str, found: &mut Vec<(String, &'d [Value])>) {
    match value {
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
            found.push((
                if at.is_empty() {
                    "(the document)".into()
                } else {
                    at.into()
                },
                items,
            ));
        }
        Value::Object(fields) => {
            for (key, v) in fields {
                let path = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                collect_arrays(v, &path, found);
            }
        }
        _ => {}
    }
}

fn describe(at: &str, entries: &[Value]) -> Value {
    let mut out = json!({ "array": at, "entries": entries.len() });
    // Sums through the table code (exact decimals; a field of mixed units or non-numbers gets
    // none), fed the entries' scalar fields as JSON lines.
    let lines: Vec<String> = entries
        .iter()
        .filter_map(Value::as_object)
        .map(|o| {
            let scalars: Map<String, Value> = o
                .iter()
                .filter(|(_, v)| v.is_number() || v.is_string())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Value::Object(scalars).to_string()
        })
        .collect();
    let mut sums = Map::new();
    if let Some(totals) = column_totals("document.jsonl", &lines.join("\n")) {
        for c in totals["columns"].as_array().into_iter().flatten() {
            let numeric = entries
                .iter()
                .filter_map(|e| e.get(c["column"].as_str().unwrap_or_default()))
                .all(Value::is_number);
            if let (Some(name), Some(sum), true) = (c["column"].as_str(), c.get("sum"), numeric) {
                sums.insert(name.to_string(), sum.clone());
            }
        }
    }
    if !sums.is_empty() {
        out["sums"] = Value::Object(sums);
    }
    let mut values = Map::new();
    let keys: Vec<&String> = entries
        .first()
        .and_then(Value::as_object)
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    for key in keys {
        let texts: Vec<&str> = entries
            .iter()
            .filter_map(|e| e.get(key.as_str()).and_then(Value::as_str))
            .collect();
        if texts.len() != entries.len() {
            continue;
        }
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for t in &texts {
            match counts.iter_mut().find(|(v, _)| v == t) {
                Some((_, n)) => *n += 1,
                None => counts.push((t, 1)),
            }
        }
        let repeats = counts.len() < texts.len();
        let short = counts
            .iter()
            .all(|(v, _)| v.chars().count() <= MAX_VALUE_CHARS);
        if repeats && short && counts.len() <= MAX_DISTINCT_VALUES {
            let m: Map<String, Value> = counts
                .into_iter()
                .map(|(v, n)| (v.to_string(), json!(n)))
                .collect();
            values.insert(key.clone(), Value::Object(m));
        }
    }
    if !values.is_empty() {
        out["values"] = Value::Object(values);
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sums_counts_and_repeated_values_of_the_model_s_own_entries() {
        let doc = json!({
            "receipts": [
                {"merchant": "A", "total": 94.78, "paid": "card"},
                {"merchant": "B", "total": 19.0, "paid": "cash"},
                {"merchant": "C", "total": 41.9, "paid": "card"},
                {"merchant": "D", "total": 55.75, "paid": "card"}
            ],
            "total": 138.62
        });
        let a = describe_arrays(&doc);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0]["array"], "receipts");
        assert_eq!(a[0]["entries"], 4);
        assert_eq!(a[0]["sums"]["total"], "211.43");
        assert_eq!(a[0]["values"]["paid"], json!({"card": 3, "cash": 1}));
        // Names that never repeat are not counted.
        assert!(a[0]["values"].get("merchant").is_none());
    }

    #[test]
    fn nested_and_root_arrays_are_found_and_non_tables_give_nothing() {
        let root = json!([{"n": 1}, {"n": 2}]);
        assert_eq!(describe_arrays(&root)[0]["array"], "(the document)");
        assert_eq!(describe_arrays(&root)[0]["sums"]["n"], "3");
        let nested = json!({"report": {"rows": [{"x": "a"}, {"x": "a"}]}});
        let a = describe_arrays(&nested);
        assert_eq!(a[0]["array"], "report.rows");
        assert_eq!(a[0]["values"]["x"], json!({"a": 2}));
        assert!(a[0].get("sums").is_none());
        for nothing in [json!({"a": 1}), json!([1, 2]), json!([]), json!("text")] {
            assert!(describe_arrays(&nothing).is_empty(), "{nothing}");
        }
    }

    #[test]
    fn numbers_written_as_text_are_not_summed() {
        // A field of strings that look like numbers is the model's text, not a figure.
        let doc = json!({"rows": [{"amount": "10"}, {"amount": "5"}]});
        let a = describe_arrays(&doc);
        assert!(a[0].get("sums").is_none(), "{a:?}");
    }
}
