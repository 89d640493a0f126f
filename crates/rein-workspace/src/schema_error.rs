//! JSON Schema errors in words that fit a prompt.
//!
//! The `jsonschema` crate's messages begin with the offending value written out in full
//! (`[{"merchant": ...}, ...] is not of type "object"`). A deliverable of a few kilobytes then
//! fills the feedback, and once the feedback is clipped the reason itself is cut off: a model (or a
//! person reading the journal) sees only its own document echoed back. These descriptions name
//! the place's value by its kind and size and then the rule, so the reason always survives.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::ValidationError;
use serde_json::Value;

/// The longest value echoed as it is; longer values are described by kind and size.
const ECHOED_VALUE_CHARS: usize = 60;
/// The longest description of any error; a longer one from the crate is replaced by the value's
/// kind and the rule's name.
const MESSAGE_CHARS: usize = 200;
/// Field names and pointer segments longer than this are cut (they come from the document, so
/// a model keying a map by a sentence could otherwise push the reason past a clip).
const NAME_CHARS: usize = 40;
/// The longest place (JSON pointer) written out; deeper ones keep their two ends.
const POINTER_CHARS: usize = 120;
/// Unexpected field names listed by name; the rest are counted.
const LISTED_NAMES: usize = 5;

/// What is wrong with the value at the error's place, without the place itself (callers prefix
/// it as they need, with [`schema_error_place`]).
pub fn describe_schema_error(e: &ValidationError<'_>) -> String {
    match &e.kind {
        ValidationErrorKind::Type { kind } => format!(
            "{} here, where the schema needs {}",
            capitalized(kind_of(&e.instance)),
            needed_types(kind)
        ),
        ValidationErrorKind::Required { property } => {
            format!("the required field {property} is missing")
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let mut names: Vec<String> = unexpected
                .iter()
                .take(LISTED_NAMES)
                .map(|n| format!("\"{}\"", printable(n, NAME_CHARS)))
                .collect();
            if unexpected.len() > LISTED_NAMES {
                names.push(format!("and {} more", unexpected.len() - LISTED_NAMES));
            }
            format!(
                "{} the schema does not allow: {}",
                if unexpected.len() == 1 {
                    "a field"
                } else {
                    "fields"
                },
                names.join(", ")
            )
        }
        _ => {
            let message = e.to_string();
            let echoed = e.instance.to_string();
            let message = match message.strip_prefix(&echoed) {
                Some(rule) if echoed.chars().count() > ECHOED_VALUE_CHARS => {
                    format!("{}{rule}", short_value(&e.instance))
                }
                _ => message,
            };
            if message.chars().count() <= MESSAGE_CHARS && !message.chars().any(char::is_control) {
                return message;
            }
            let schema_path = e.schema_path.to_string();
            let keyword = schema_path.rsplit('/').next().unwrap_or("");
            format!(
                "{} does not satisfy the schema's `{}` rule",
                short_value(&e.instance),
                printable(keyword, NAME_CHARS)
            )
        }
    }
}

/// Where the error is, as a JSON pointer short enough to leave room for the reason (empty for
/// the document itself): long segments are cut and a deep pointer keeps its two ends.
pub fn schema_error_place(e: &ValidationError<'_>) -> String {
    let pointer = e.instance_path.to_string();
    let segments: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|s| printable(s, NAME_CHARS))
        .collect();
    let whole: String = segments.iter().map(|s| format!("/{s}")).collect();
    if whole.chars().count() <= POINTER_CHARS || segments.len() <= 4 {
        return whole;
    }
    let n = segments.len();
    format!(
        "/{}/{}/... ({} levels) .../{}/{}",
        segments[0],
        segments[1],
        n - 4,
        segments[n - 2],
        segments[n - 1]
    )
}

/// "a string", "an array", ... (`a boolean` for true and false).
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn needed_types(kind: &TypeKind) -> String {
    let names: Vec<String> = match kind {
        TypeKind::Single(t) => vec![t.to_string()],
        TypeKind::Multiple(ts) => ts.into_iter().map(|t| t.to_string()).collect(),
    };
    let with_article: Vec<String> = names
        .iter()
        .map(|n| match n.as_str() {
            "null" => "null".to_string(),
            n if n.starts_with(['a', 'e', 'i', 'o', 'u']) => format!("an {n}"),
            n => format!("a {n}"),
        })
        .collect();
    with_article.join(" or ")
}

/// At most `max` characters of `s` on one line: control characters and the Unicode line and
/// paragraph separators escaped (a newline as `\n`), and `...` where it was cut.
pub fn printable(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .take(max)
        .flat_map(|c| {
            if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    if s.chars().count() > max {
        out.push_str("...");
    }
    out
}

/// A long value by its kind, size and first characters.
fn short_value(v: &Value) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    match v {
        Value::String(s) => {
            let n = s.chars().count();
            let head: String = s.chars().take(ECHOED_VALUE_CHARS / 2).collect();
            // JSON-escaped, so a newline or an escape sequence in the value stays one line.
            let quoted = Value::String(head).to_string();
            let cut = if n > ECHOED_VALUE_CHARS / 2 {
                "..."
            } else {
                ""
            };
            format!(
                "the string {}{cut}\" ({})",
                &quoted[..quoted.len() - 1],
                plural(n, "character", "characters")
            )
        }
        Value::Array(items) => format!("the array of {}", plural(items.len(), "item", "items")),
        Value::Object(fields) => {
            format!(
                "the object with {}",
                plural(fields.len(), "field", "fields")
            )
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn described(schema: Value, instance: Value) -> Vec<String> {
        let validator = jsonschema::validator_for(&schema).expect("schema");
        validator
            .iter_errors(&instance)
            .map(|e| describe_schema_error(&e))
            .collect()
    }

    #[test]
    fn a_wrong_type_names_both_kinds_and_never_echoes_the_document() {
        let entries: Vec<Value> = (0..40)
            .map(|i| json!({"merchant": format!("Shop number {i}"), "total": i}))
            .collect();
        let got = described(json!({"type": "object"}), Value::Array(entries));
        assert_eq!(
            got,
            vec!["An array here, where the schema needs an object".to_string()]
        );
        let got = described(json!({"type": ["integer", "null"]}), json!("7"));
        assert_eq!(
            got,
            vec!["A string here, where the schema needs an integer or null".to_string()]
        );
    }

    #[test]
    fn missing_and_unexpected_fields_are_named() {
        let schema = json!({
            "type": "object",
            "required": ["receipts", "total"],
            "additionalProperties": false,
            "properties": {"receipts": {}, "total": {}}
        });
        let got = described(schema, json!({"receipts": [], "sum": 3, "extra": 1}));
        assert!(got.contains(&"the required field \"total\" is missing".to_string()));
        assert!(got.iter().any(
            |m| m == "fields the schema does not allow: \"extra\", \"sum\""
                || m == "fields the schema does not allow: \"sum\", \"extra\""
        ));
    }

    #[test]
    fn other_rules_keep_their_wording_with_a_long_value_shortened() {
        let long = "x".repeat(500);
        let got = described(json!({"type": "string", "maxLength": 10}), json!(long));
        assert_eq!(got.len(), 1);
        assert!(got[0].starts_with("the string \"xxxxxxxxxx"), "{}", got[0]);
        assert!(got[0].contains("(500 characters)"), "{}", got[0]);
        assert!(got[0].contains("longer than 10 characters"), "{}", got[0]);
        assert!(got[0].chars().count() < 150, "{}", got[0]);
        // A short value is echoed as the crate writes it.
        let got = described(json!({"enum": ["card", "cash"]}), json!("cheque"));
        assert_eq!(
            got,
            vec![r#""cheque" is not one of ["card","cash"]"#.to_string()]
        );
    }
}
