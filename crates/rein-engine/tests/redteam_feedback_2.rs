//! Red team of two feedback changes: schema errors described by `rein_workspace::describe_schema_error`
//! (the `json_schema` check and `write_json`'s refusal, which share `schema_judged`), and the
//! `numeric_consistency` check stating its conclusion first. What the model reads must keep its
//! reason within the retry feedback's clip, stay short whatever the deliverable holds, and say
//! nothing of the contract (expected value, enum member, pattern, bound).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use rein_engine::agent::{clip, MAX_FAILED_CHECK_CHARS};
use rein_engine::checks::{evaluate, schema_violations, CheckResult, MemWorld};
use rein_engine::mission::{FrozenContract, Mission};
use serde_json::{json, Map, Value};
use tempfile::TempDir;

const POLICY_A: &str = "# Equipment\nEquipment must be returned within 7 working days.\n";

fn contract(checks: Value) -> (TempDir, FrozenContract) {
    let dir = TempDir::new().unwrap();
    let f = dir.path().join("fixtures/policies/equipment.md");
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::write(f, POLICY_A).unwrap();
    let m = json!({
        "id": "redteam2", "mode": "automatic", "prompt": "write the deliverable",
        "inputs": ["policies/equipment.md"],
        "tools": ["read_file", "create_file", "list_dir", "finish"],
        "required_artifact": "out/answer.json",
        "checks": checks
    });
    let path = dir.path().join("mission.json");
    std::fs::write(&path, m.to_string()).unwrap();
    let c = Mission::load(&path).unwrap();
    (dir, c)
}

fn world(path: &str, content: &str) -> MemWorld {
    let mut w = MemWorld::new();
    w.set_file("policies/equipment.md", POLICY_A);
    w.set_file(path, content);
    w
}

fn judge(check: Value, w: &MemWorld) -> CheckResult {
    let (_d, c) = contract(json!([check]));
    evaluate(&c, w, &[], None).checks.remove(0)
}

/// What the retry feedback shows of one failed check (as `retry_feedback` builds it).
fn shown(r: &CheckResult) -> String {
    clip(&r.feedback.join("; "), MAX_FAILED_CHECK_CHARS)
}

fn schema_check(schema: Value) -> Value {
    json!({"id": "schema", "kind": "json_schema", "path": "out/answer.json", "schema": schema})
}

// ---------------------------------------------------------------------------------------------
// The reason must survive the clip.
// ---------------------------------------------------------------------------------------------

/// A deliverable keyed by long strings (a model keying a map by a question or a sentence): the
/// instance path comes before the reason in every fact, so one long key pushes "where the
/// schema needs ..." past the 480-character clip and the model reads only its own key back.
#[test]
fn a_long_key_does_not_push_the_schema_reason_past_the_clip() {
    let key =
        "What must an employee do with company equipment when they leave, and by when? ".repeat(7);
    assert!(key.chars().count() > MAX_FAILED_CHECK_CHARS);
    let doc = json!({ key: "seven working days" });
    let check = schema_check(json!({
        "type": "object",
        "additionalProperties": {"type": "integer"}
    }));
    let r = judge(check, &world("out/answer.json", &doc.to_string()));
    assert!(!r.passed);
    let seen = shown(&r);
    assert!(
        seen.contains("where the schema needs"),
        "the reason was clipped away; the model reads: {seen}"
    );
}

/// The same through a required field missing in an object that sits under a long key.
#[test]
fn a_missing_field_under_a_long_key_keeps_its_reason_within_the_clip() {
    let key = "x".repeat(600);
    let doc = json!({ key: {"merchant": "Shop"} });
    let check = schema_check(json!({
        "type": "object",
        "additionalProperties": {"type": "object", "required": ["total"]}
    }));
    let r = judge(check, &world("out/answer.json", &doc.to_string()));
    assert!(!r.passed);
    let seen = shown(&r);
    assert!(
        seen.contains("the required field \"total\" is missing"),
        "the model reads: {seen}"
    );
}

/// A model that misnames every field: the unexpected names are listed without bound in one
/// fact, so with a schema written `properties, additionalProperties, required` (the
/// additionalProperties error comes first) the missing field, the one thing to fix, is clipped.
#[test]
fn many_unexpected_fields_do_not_hide_the_missing_one() {
    let mut doc = Map::new();
    for i in 0..40 {
        doc.insert(format!("receipt_line_{i:02}"), json!(i));
    }
    let check = schema_check(json!({
        "type": "object",
        "properties": {"total": {"type": "number"}},
        "additionalProperties": false,
        "required": ["total"]
    }));
    let r = judge(
        check,
        &world("out/answer.json", &Value::Object(doc).to_string()),
    );
    assert!(!r.passed);
    let seen = shown(&r);
    assert!(
        seen.contains("the required field \"total\" is missing"),
        "the model reads: {seen}"
    );
}

// ---------------------------------------------------------------------------------------------
// No huge message.
// ---------------------------------------------------------------------------------------------

/// `write_json`'s refusal joins `schema_violations` unclipped: each fact must stay short
/// whatever keys the document holds (a giant key, or thousands of them).
#[test]
fn each_schema_fact_is_short_whatever_the_keys() {
    let schema =
        json!({"type": "object", "properties": {"total": {}}, "additionalProperties": false});
    let giant = json!({ "k".repeat(20_000): 1 });
    let many: Map<String, Value> = (0..2_000)
        .map(|i| (format!("field_{i}"), json!(i)))
        .collect();
    for doc in [giant, Value::Object(many)] {
        let facts = schema_violations("out/answer.json", &schema, &doc);
        assert!(!facts.is_empty());
        for f in &facts {
            assert!(
                f.chars().count() <= MAX_FAILED_CHECK_CHARS,
                "a fact of {} characters: {}...",
                f.chars().count(),
                f.chars().take(120).collect::<String>()
            );
        }
    }
}

/// A wrong type anywhere in a large document, a deeply nested one, a string of multi-byte
/// characters around the 60-character cut, a list of six types: short facts, no panic.
#[test]
fn wrong_shapes_of_any_size_are_said_in_short_facts() {
    let rows: Vec<Value> = (0..5_000)
        .map(|i| json!({"merchant": "é😀".repeat(40), "total": i}))
        .collect();
    let mut deep = json!("leaf");
    for _ in 0..100 {
        deep = json!([deep]);
    }
    let cases = [
        (json!({"type": "object"}), Value::Array(rows.clone())),
        (json!({"type": "string"}), json!({"rows": rows})),
        (json!({"type": "object"}), deep),
        (json!({"type": "integer"}), json!("é".repeat(59))),
        (json!({"type": "integer"}), json!("😀".repeat(61))),
        (
            json!({"type": ["array", "boolean", "integer", "null", "number", "object"]}),
            json!("e\u{301}".repeat(40)),
        ),
    ];
    for (schema, doc) in cases {
        let facts = schema_violations("out/answer.json", &schema, &doc);
        assert_eq!(facts.len(), 1, "{facts:?}");
        assert!(facts[0].chars().count() < 160, "{}", facts[0]);
        assert!(facts[0].contains("where the schema needs"), "{}", facts[0]);
    }
}

// ---------------------------------------------------------------------------------------------
// Nothing of the contract.
// ---------------------------------------------------------------------------------------------

/// Every withheld keyword, with short and long (over 60 characters) values of the deliverable:
/// the model's facts name no enum member, const, pattern, bound or format, and the person's
/// facts still hold the detail.
#[test]
fn said_schema_facts_name_nothing_of_the_contract() {
    let long = "z".repeat(200);
    let schema = json!({
        "type": "object",
        "required": ["code", "kind", "amount", "label", "items", "when", "tag", "ratio"],
        "properties": {
            "code": {"const": "GOLD-7421"},
            "kind": {"enum": ["SECRETCARD", "SECRETCASH"]},
            "amount": {"type": "number", "minimum": 9137, "maximum": 9138},
            "label": {"type": "string", "pattern": "^PAT[0-9]{3}QQ$", "minLength": 77, "maxLength": 78},
            "items": {"type": "array", "minItems": 13, "maxItems": 13},
            "when": {"type": "string", "format": "date"},
            "tag": {"not": {"const": "x"}, "contains": {"const": "NEEDLE"}},
            "ratio": {"type": "number", "multipleOf": 0.37, "exclusiveMaximum": 8123}
        }
    });
    let secrets = [
        "GOLD",
        "7421",
        "SECRETCARD",
        "SECRETCASH",
        "9137",
        "9138",
        "PAT",
        "77",
        "78",
        "13",
        "NEEDLE",
        "0.37",
        "8123",
        "date",
    ];
    for value in [json!("short"), json!(long), json!([long, long, long])] {
        let doc = json!({
            "code": value, "kind": value, "amount": 99999.5, "label": value, "items": value,
            "when": value, "tag": [value], "ratio": 99999.5
        });
        let check = schema_check(schema.clone());
        let r = judge(check, &world("out/answer.json", &doc.to_string()));
        assert!(!r.passed);
        let said = r.feedback.join(" | ");
        for s in secrets {
            assert!(!said.contains(s), "{s} is said: {said}");
        }
        assert!(r.facts.len() > r.feedback.len(), "{:?}", r.facts);
    }
}

// ---------------------------------------------------------------------------------------------
// numeric_consistency: the conclusion leads.
// ---------------------------------------------------------------------------------------------

fn numeric_check() -> Value {
    json!({"id": "n", "kind": "numeric_consistency", "path": "out/answer.md",
        "stated": {"regex": "(?im)^deadline:\\s*(.*?)\\s*$"},
        "expected": {"from": "matches", "paths": ["policies/equipment.md"],
                     "pattern": "returned within (\\d+) working days", "op": "max"},
        "tolerance": 0, "units": ["working days"]})
}

/// Hundreds of statements, long and multi-byte ones, the right one among them or not: the
/// conclusion is always within the clip, and which statement agrees is never singled out.
#[test]
fn the_numeric_conclusion_leads_whatever_the_statements() {
    for right_at in [None, Some(0), Some(150), Some(299)] {
        let text: String = (0..300)
            .map(|i| {
                if Some(i) == right_at {
                    "Deadline: 7 working days\n".to_string()
                } else {
                    format!(
                        "Deadline: {} working days\n",
                        1_000_000_000_000u64 + i as u64
                    )
                }
            })
            .collect();
        let r = judge(numeric_check(), &world("out/answer.md", &text));
        assert!(!r.passed);
        let seen = shown(&r);
        assert!(
            seen.starts_with(
                "not all 300 statements agree with the value computed from the inputs; every one must"
            ),
            "{seen}"
        );
        let said = r.feedback.join(" | ");
        assert!(!said.contains("agrees"), "{said}");
        assert!(!said.contains("difference"), "{said}");
    }
    // One statement, written very long.
    let text = format!("Deadline: {} working days\n", "9".repeat(2_000));
    let r = judge(numeric_check(), &world("out/answer.md", &text));
    assert!(!r.passed);
    let seen = shown(&r);
    assert!(
        seen.contains("does not agree with the value computed from the inputs")
            || seen.contains("not a number as written"),
        "{seen}"
    );
}
