//! Red team of `describe_schema_error` and the tool-parameter messages built on it: short and
//! correct for any argument shape, no value echoed in full, no panic.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rein_workspace::{describe_schema_error, desk_registry, MAX_INPUT_CHARS};
use serde_json::{json, Map, Value};

/// Short enough for a prompt: well under the engine's 480-character feedback clip.
const SHORT: usize = 300;

fn described(schema: Value, instance: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(&schema).expect("schema");
    validator
        .iter_errors(instance)
        .map(|e| describe_schema_error(&e))
        .collect()
}

fn head(s: &str) -> String {
    s.chars().take(160).collect()
}

/// A key just under the input cap that the tool's schema does not allow: the message names it
/// in full (tens of thousands of characters) instead of by its size.
#[test]
fn a_giant_unexpected_key_is_not_echoed_in_full() {
    let registry = desk_registry();
    let key = "k".repeat(MAX_INPUT_CHARS - 1);
    let e = registry
        .validate(
            "create_file",
            &json!({"path": "out/a.md", "content": "text", key: 1}),
        )
        .unwrap_err();
    assert!(
        e.chars().count() <= SHORT,
        "{} characters: {}...",
        e.chars().count(),
        head(&e)
    );
}

/// Thousands of small unexpected keys: one message lists them all.
#[test]
fn many_unexpected_keys_are_not_listed_without_bound() {
    let registry = desk_registry();
    let mut args: Map<String, Value> = (0..2_000)
        .map(|i| (format!("extra_{i}"), json!(i)))
        .collect();
    args.insert("path".into(), json!("out/a.md"));
    args.insert("content".into(), json!("text"));
    let e = registry
        .validate("create_file", &Value::Object(args))
        .unwrap_err();
    assert!(
        e.chars().count() <= SHORT,
        "{} characters: {}...",
        e.chars().count(),
        head(&e)
    );
}

/// A long string is shortened to its first characters written raw: a newline, an escape
/// sequence or a quote in them reaches the message as it is (the crate's own wording had them
/// JSON-escaped), so the "one line" is several and a terminal escape passes through; and a
/// string whose JSON form is long only because of escapes gets a "..." though nothing was cut.
#[test]
fn a_shortened_string_is_written_escaped_on_one_line() {
    let registry = desk_registry();
    let path = format!("line one\nline two\u{1b}[2J\"{}", "a".repeat(5_000));
    let e = registry
        .validate("create_file", &json!({"path": path, "content": "x"}))
        .unwrap_err();
    assert!(
        !e.chars().any(char::is_control),
        "raw control characters in: {:?}",
        head(&e)
    );
    // Twenty NULs: 122 characters as JSON, so described, "head..." though the head is all of it.
    let got = described(
        json!({"type": "string", "maxLength": 3}),
        &json!("\u{0}".repeat(20)),
    );
    assert_eq!(got.len(), 1);
    assert!(!got[0].chars().any(char::is_control), "{:?}", got[0]);
}

/// Keywords whose message does not begin with the value (contains, not, a false schema,
/// items beyond prefixItems, unevaluatedProperties): the value is echoed in full, against the
/// promise that a value over 60 characters is described by kind and size.
#[test]
fn every_keyword_describes_a_long_value_instead_of_echoing_it() {
    let big: Vec<Value> = (0..300)
        .map(|i| json!(format!("entry number {i}")))
        .collect();
    let big = Value::Array(big);
    let obj = json!({"a": big.clone()});
    let mut many_keys = Map::new();
    for i in 0..300 {
        many_keys.insert(format!("unevaluated_field_{i}"), json!(i));
    }
    let cases: Vec<(&str, Value, Value)> = vec![
        (
            "contains",
            json!({"contains": {"type": "integer"}}),
            big.clone(),
        ),
        ("not", json!({"not": {"type": "array"}}), big.clone()),
        (
            "false schema",
            json!({"properties": {"a": false}}),
            obj.clone(),
        ),
        (
            "prefixItems + items:false",
            json!({"prefixItems": [{}], "items": false}),
            big.clone(),
        ),
        (
            "additionalItems (draft 7)",
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "items": [{}], "additionalItems": false}),
            big.clone(),
        ),
        (
            "unevaluatedProperties",
            json!({"unevaluatedProperties": false}),
            Value::Object(many_keys),
        ),
    ];
    let mut long = Vec::new();
    for (name, schema, instance) in cases {
        for m in described(schema, &instance) {
            if m.chars().count() > SHORT {
                long.push(format!(
                    "{name}: {} characters: {}...",
                    m.chars().count(),
                    head(&m)
                ));
            }
        }
    }
    assert!(long.is_empty(), "{long:#?}");
}

/// Multi-byte strings around the 60-character cut, combining marks, emoji: no panic, the count
/// is the string's, the message is short.
#[test]
fn multibyte_values_near_the_cut_are_described_by_their_size() {
    for unit in ["é", "😀", "e\u{301}", "ж", "\u{200d}"] {
        for n in 25..70 {
            let s = unit.repeat(n);
            let chars = s.chars().count();
            let got = described(json!({"type": "string", "maxLength": 3}), &json!(s));
            assert_eq!(got.len(), 1);
            let m = &got[0];
            assert!(m.chars().count() < 150, "{m}");
            assert!(m.contains("longer than 3 characters"), "{m}");
            if json!(s).to_string().chars().count() > 60 {
                assert!(m.contains(&format!("({chars} characters)")), "{m}");
            } else {
                assert!(m.starts_with(&json!(s).to_string()), "{m}");
            }
        }
    }
}

/// Wrong kinds at any depth and under a list of types: one short, correct line each.
#[test]
fn wrong_kinds_are_named_correctly_at_any_depth() {
    let registry = desk_registry();
    let mut deep = json!("leaf");
    for _ in 0..120 {
        deep = json!({"n": [deep]});
    }
    let e = registry
        .validate("create_file", &json!({"path": "out/a.md", "content": deep}))
        .unwrap_err();
    assert_eq!(
        e,
        "at /content: An object here, where the schema needs a string"
    );
    let e = registry
        .validate(
            "create_file",
            &json!({"path": ["out/a.md"], "content": null}),
        )
        .unwrap_err();
    assert_eq!(
        e,
        "at /path: An array here, where the schema needs a string; \
         at /content: Null here, where the schema needs a string"
    );
    let e = registry
        .validate(
            "write_sections",
            &json!({"path": "out/a.md", "sections": [{"heading": "A", "level": "3"}]}),
        )
        .unwrap_err();
    assert!(
        e.contains("the required field \"body\" is missing")
            && e.contains("at /sections/0/level: A string here, where the schema needs an integer"),
        "{e}"
    );
    assert!(e.chars().count() < SHORT, "{e}");
    let got = described(
        json!({"type": ["array", "boolean", "integer", "null", "number", "object"]}),
        &json!("s".repeat(10_000)),
    );
    assert_eq!(
        got,
        vec![
            "A string here, where the schema needs an array or a boolean or an integer or null \
             or a number or an object"
                .to_string()
        ]
    );
    for args in [json!([1, 2]), json!("x"), json!(null), json!(3.5)] {
        let e = registry.validate("create_file", &args).unwrap_err();
        assert!(
            e.starts_with("the parameters of create_file must be a JSON object, got "),
            "{e}"
        );
    }
}
