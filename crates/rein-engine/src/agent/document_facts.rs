//! Lever `document-facts`: a write of a JSON deliverable carries counts and sums Rein computed
//! from the document just written (never from the inputs, never what the judge expects), so a
//! small model checks its own totals against arithmetic it cannot do: the 1.5B listed four
//! receipts and gave their total as 138.62 where its own four figures sum to 211.43, and counted
//! three backend applicants in a list that names two.

use rein_protocol::{GateOutcome, GateReport};
use rein_workspace::desk::{column_totals, json_number_tokens};
use serde_json::{json, Map, Value};

use crate::checks::World;

/// Arrays described, at most (the first ones found, depth first).
const MAX_ARRAYS: usize = 4;
/// Distinct values of a text field counted, at most: past that a field is a name, not a kind.
const MAX_DISTINCT_VALUES: usize = 8;
/// Characters of a counted value, at most.
const MAX_VALUE_CHARS: usize = 60;
/// Fields of an array summed or counted, at most (the first ones found, names of at most
/// [`MAX_VALUE_CHARS`]): the table code makes a column of each and a cell of each entry and
/// column, so a key of each entry made a document of 40,000 entries 1.6e9 cells.
const MAX_FIELDS: usize = 20;
/// Characters of the facts, at most: they come first in a result the model is shown clipped at
/// MAX_RESULT_CHARS, and must leave room for the write's own result (its change id). Arrays past
/// it are left out, the last first.
const MAX_FACTS_CHARS: usize = 3_000;

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
    // serde_json reads a number of more digits than an f64 holds as the nearest f64 (and 1e-400
    // as 0): a sum of what it read would be a figure the document does not hold.
    let exact = std::str::from_utf8(&bytes).is_ok_and(|text| !has_inexact_number(text));
    let mut arrays = describe_arrays(&document, exact);
    let facts = |arrays: &[Value]| {
        json!({
            "note": "Computed by Rein from the document you just wrote (not from the inputs): check every count and total in it against these, and fix the document where they differ.",
            "arrays": arrays,
        })
    };
    while facts(&arrays).to_string().chars().count() > MAX_FACTS_CHARS {
        arrays.pop();
    }
    if arrays.is_empty() {
        return;
    }
    let facts = facts(&arrays);
    if let Value::Object(fields) = &mut report.result {
        let rest = std::mem::take(fields);
        fields.insert("document_facts".to_string(), facts);
        fields.extend(rest);
    }
}

/// The arrays of objects in `document` (the root, or under object keys at any depth), each with
/// its entry count, the sum of each numeric field (only when `with_sums`) and the count of each
/// value of a text field whose values repeat.
pub fn describe_arrays(document: &Value, with_sums: bool) -> Vec<Value> {
    let mut found = Vec::new();
    collect_arrays(document, &mut Vec::new(), &mut found);
    found
        .into_iter()
        .map(|(at, entries)| {
            let mut out = json!({ "array": at, "entries": entries.len() });
            let sums = if with_sums {
                sums_of(entries)
            } else {
                Map::new()
            };
            if !sums.is_empty() {
                out["sums"] = Value::Object(sums);
            }
            let values = repeated_values(entries);
            if !values.is_empty() {
                out["values"] = Value::Object(values);
            }
            out
        })
        .collect()
}

/// The first [`MAX_ARRAYS`] arrays of objects, each with its path (`at` holds the keys down to
/// `value`; joined only for an array found, since a copy of a long prefix for every key below it
/// was quadratic).
fn collect_arrays<'d>(
    value: &'d Value,
    at: &mut Vec<&'d str>,
    found: &mut Vec<(String, &'d [Value])>,
) {
    if found.len() == MAX_ARRAYS {
        return;
    }
    match value {
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
            found.push((
                if at.is_empty() {
                    "(the document)".into()
                } else {
                    at.join(".")
                },
                items,
            ));
        }
        Value::Object(fields) => {
            for (key, v) in fields {
                at.push(key);
                collect_arrays(v, at, found);
                at.pop();
            }
        }
        _ => {}
    }
}

/// The exact sum of each numeric field of `entries`, through the table code (exact decimals; a
/// field of mixed units or non-numbers gets none), fed the entries' scalar fields as JSON lines:
/// the first MAX_FIELDS of short names.
fn sums_of(entries: &[Value]) -> Map<String, Value> {
    // Sums through the table code (exact decimals; a field of mixed units or non-numbers gets
    // none), fed the entries' scalar fields as JSON lines: the first MAX_FIELDS of short names.
    let described = |k: &String, v: &Value| {
        (v.is_number() || v.is_string()) && k.chars().count() <= MAX_VALUE_CHARS
    };
    let mut fields: Vec<&String> = Vec::new();
    for (k, v) in entries.iter().filter_map(Value::as_object).flatten() {
        if fields.len() == MAX_FIELDS {
            break;
        }
        if described(k, v) && !fields.contains(&k) {
            fields.push(k);
        }
    }
    let lines: Vec<String> = entries
        .iter()
        .filter_map(Value::as_object)
        .map(|o| {
            let scalars: Map<String, Value> = o
                .iter()
                .filter(|(k, v)| described(k, v) && fields.contains(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Value::Object(scalars).to_string()
        })
        .collect();
    let mut sums = Map::new();
    // A row the table code takes for a total (a field "Total", "Sum", ...) is left out of its
    // figures: here it is one of the model's entries, and a sum without it is no sum of the field.
    if let Some(totals) = column_totals("document.jsonl", &lines.join("\n"))
        .filter(|t| t.get("left_out_total_rows").is_none())
    {
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
    sums
}

/// The count of each value of a text field of `entries` whose values repeat (at most
/// [`MAX_DISTINCT_VALUES`] short values, the first [`MAX_FIELDS`] short field names).
fn repeated_values(entries: &[Value]) -> Map<String, Value> {
    let mut values = Map::new();
    let keys: Vec<&String> = entries
        .first()
        .and_then(Value::as_object)
        .map(|o| {
            o.keys()
                .filter(|k| k.chars().count() <= MAX_VALUE_CHARS)
                .take(MAX_FIELDS)
                .collect()
        })
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
            // Past the cap the field is not counted: stop before the search grows quadratic.
            if counts.len() > MAX_DISTINCT_VALUES {
                break;
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
    values
}

/// Whether `text` holds a number serde_json may read as another value: one with an exponent, or
/// a fraction of more than 15 significant digits (an f64 holds any 15-digit decimal exactly).
/// An integer is read exactly, or past i64/u64 as an f64 the table code refuses.
pub(super) fn has_inexact_number(text: &str) -> bool {
    json_number_tokens(text).iter().any(|token| {
        token.contains(['e', 'E'])
            || (token.contains('.')
                && token
                    .bytes()
                    .filter(u8::is_ascii_digit)
                    .skip_while(|b| *b == b'0')
                    .count()
                    > 15)
    })
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
        let a = describe_arrays(&doc, true);
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
        assert_eq!(describe_arrays(&root, true)[0]["array"], "(the document)");
        assert_eq!(describe_arrays(&root, true)[0]["sums"]["n"], "3");
        let nested = json!({"report": {"rows": [{"x": "a"}, {"x": "a"}]}});
        let a = describe_arrays(&nested, true);
        assert_eq!(a[0]["array"], "report.rows");
        assert_eq!(a[0]["values"]["x"], json!({"a": 2}));
        assert!(a[0].get("sums").is_none());
        for nothing in [json!({"a": 1}), json!([1, 2]), json!([]), json!("text")] {
            assert!(describe_arrays(&nothing, true).is_empty(), "{nothing}");
        }
    }

    #[test]
    fn numbers_written_as_text_are_not_summed() {
        // A field of strings that look like numbers is the model's text, not a figure.
        let doc = json!({"rows": [{"amount": "10"}, {"amount": "5"}]});
        let a = describe_arrays(&doc, true);
        assert!(a[0].get("sums").is_none(), "{a:?}");
    }

    // Red team: every figure true of the document, nothing added where it should not be, and
    // bounded time and size.

    use crate::checks::MemWorld;

    const ART: &str = "out/fields.json";

    fn executed(result: Value) -> GateReport {
        GateReport {
            outcome: GateOutcome::Executed,
            reason: String::new(),
            result,
        }
    }

    fn facts_of(text: &str) -> Option<Value> {
        let world = MemWorld::new().with_file(ART, text.as_bytes().to_vec());
        let mut report = executed(json!({"applied": true, "change_id": 7}));
        add_document_facts(&world, ART, Some(ART), &mut report);
        report.result.get("document_facts").cloned()
    }

    #[test]
    fn redteam_an_entry_labelled_total_or_sum_is_not_left_out_of_a_sum() {
        for label in ["Total", "sum", "Grand total:"] {
            let doc = json!({"rows": [
                {"item": "A", "amount": 10}, {"item": "B", "amount": 20},
                {"item": label, "amount": 30}
            ]});
            let a = describe_arrays(&doc, true);
            assert_eq!(a[0]["entries"], 3);
            assert!(a[0].get("sums").is_none(), "{label}: {a:?}");
        }
        // A label that starts like a total, on a row whose figure is the sum above it.
        let doc = json!({"rows": [
            {"item": "A", "amount": 10}, {"item": "B", "amount": 20},
            {"item": "Sum of A and B", "amount": 30}
        ]});
        assert!(describe_arrays(&doc, true)[0].get("sums").is_none());
    }

    #[test]
    fn redteam_numbers_serde_reads_inexactly_get_no_sums() {
        for n in [
            "1.0000000000000001",
            "0.30000000000000001",
            "1.00000000000000001e2",
            "1e-400",
            "1E2",
        ] {
            let f = facts_of(&format!(r#"{{"rows": [{{"x": {n}}}, {{"x": 1}}]}}"#)).unwrap();
            assert!(f["arrays"][0].get("sums").is_none(), "{n}: {f}");
            assert_eq!(f["arrays"][0]["entries"], 2);
        }
        // 1e400 is no JSON serde_json reads: nothing at all.
        assert!(facts_of(r#"{"rows": [{"x": 1e400}, {"x": 1}]}"#).is_none());
        // Exact ones keep theirs: 15 digits, big integers, digits and e inside strings.
        let f = facts_of(
            r#"{"rows": [{"x": 0.1, "s": "1.0000000000000001e5"}, {"x": 0.2, "s": "true"}],
                "big": [{"y": 18446744073709551615}, {"y": 18446744073709551615}],
                "z": 12345678901234.5}"#,
        )
        .unwrap();
        assert_eq!(f["arrays"][0]["sums"]["x"], "0.3", "{f}");
        assert_eq!(f["arrays"][1]["sums"]["y"], "36893488147419103230", "{f}");
        assert!(has_inexact_number("[1.0000000000000001]"));
        assert!(!has_inexact_number(
            r#"{"a": "1.0000000000000001", "b": true, "c": 1234567890123456789}"#
        ));
    }

    #[test]
    fn redteam_a_replayed_refused_or_other_write_adds_nothing() {
        let doc = r#"{"rows": [{"x": 1}, {"x": 2}]}"#;
        let world = MemWorld::new()
            .with_file(ART, doc.as_bytes().to_vec())
            .with_file("notes.json", doc.as_bytes().to_vec());
        for outcome in [
            GateOutcome::Replayed,
            GateOutcome::Invalid,
            GateOutcome::Denied,
            GateOutcome::ApprovalRequired,
        ] {
            let mut report = GateReport {
                outcome,
                reason: String::new(),
                result: json!({"change_id": 1}),
            };
            add_document_facts(&world, ART, Some(ART), &mut report);
            assert_eq!(report.result, json!({"change_id": 1}), "{outcome:?}");
        }
        for written in [
            None,
            Some("notes.json"),
            Some("out/fields.json.bak"),
            Some("../out/fields.json"),
        ] {
            let mut report = executed(json!({"change_id": 1}));
            add_document_facts(&world, ART, written, &mut report);
            assert_eq!(report.result, json!({"change_id": 1}), "{written:?}");
        }
        for written in ["./out/fields.json", "out//fields.json"] {
            let mut report = executed(json!({"change_id": 1}));
            add_document_facts(&world, ART, Some(written), &mut report);
            assert_eq!(
                report.result["document_facts"]["arrays"][0]["sums"]["x"],
                "3"
            );
        }
        // Invalid JSON, or a deliverable that is not JSON, or no file: nothing.
        let broken = MemWorld::new().with_file(ART, b"{\"rows\": [{\"x\": 1}".to_vec());
        let mut report = executed(json!({"change_id": 1}));
        add_document_facts(&broken, ART, Some(ART), &mut report);
        assert_eq!(report.result, json!({"change_id": 1}));
        add_document_facts(&MemWorld::new(), ART, Some(ART), &mut report);
        assert_eq!(report.result, json!({"change_id": 1}));
    }

    #[test]
    fn redteam_an_empty_key_is_not_the_document() {
        let a = describe_arrays(&json!({"": [{"x": 1}, {"x": 2}]}), true);
        assert_ne!(a[0]["array"], "(the document)", "{a:?}");
        assert_eq!(a[0]["sums"]["x"], "3");
    }

    #[test]
    fn redteam_the_facts_stay_under_their_cap_and_first_in_the_result() {
        // Twenty repeated fields of sixty-character names in each of four arrays.
        let entry: Map<String, Value> = (0..40)
            .map(|i| (format!("{i:0>60}"), json!(format!("{:0>60}", i % 2))))
            .collect();
        let arr = json!([entry.clone(), entry.clone(), entry]);
        let doc = json!({"a": arr, "b": arr, "c": arr, "d": arr}).to_string();
        let f = facts_of(&doc).unwrap();
        assert!(
            f.to_string().chars().count() <= MAX_FACTS_CHARS,
            "{}",
            f.to_string().len()
        );
        let world = MemWorld::new().with_file(ART, doc.into_bytes());
        let mut report = executed(json!({"applied": true, "change_id": 7}));
        add_document_facts(&world, ART, Some(ART), &mut report);
        let shown = crate::agent::prompt::clip(
            &report.result.to_string(),
            crate::agent::prompt::MAX_RESULT_CHARS,
        );
        assert!(shown.starts_with("{\"document_facts\""), "{shown}");
        assert!(shown.contains("\"change_id\":7"), "{shown}");
    }

    #[test]
    fn redteam_many_distinct_values_and_keys_are_linear() {
        let rows: Vec<Value> = (0..100_000)
            .map(|i| json!({"name": format!("n{i}"), "v": i}))
            .collect();
        let started = std::time::Instant::now();
        let a = describe_arrays(&json!({ "rows": rows }), true);
        assert_eq!(a[0]["sums"]["v"], "4999950000");
        assert!(a[0].get("values").is_none());
        let keys: Vec<Value> = (0..20_000).map(|i| json!({ format!("k{i}"): 1 })).collect();
        let a = describe_arrays(&json!({ "rows": keys }), true);
        assert_eq!(a[0]["entries"], 20_000);
        assert_eq!(a[0]["sums"].as_object().unwrap().len(), MAX_FIELDS);
        // A guard against a quadratic walk (minutes at these sizes), not a speed target: it
        // took 7 s on a loaded 2-core machine, so the bound is loose.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{:?}",
            started.elapsed()
        );
    }
}
