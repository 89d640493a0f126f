//! File presence and content checks.

use regex::RegexBuilder;

use super::json::parse_strict as parse_json;
use super::normalize::{reading, reorder_control};
use super::text::{count_words, preview};
use super::{Ctx, Judged};
use crate::finish::find_placeholder;

pub(crate) fn file_exists(cx: &Ctx<'_>, path: &str, non_empty: bool) -> (bool, Vec<String>) {
    match cx.world.read(path) {
        Ok(Some(bytes)) => {
            let text = String::from_utf8_lossy(&bytes);
            let fact = format!(
                "{path}: {} bytes, {} words",
                bytes.len(),
                count_words(&text)
            );
            if non_empty && text.trim().is_empty() {
                (
                    false,
                    vec![fact, format!("{path}: is empty or only whitespace")],
                )
            } else {
                (true, vec![fact])
            }
        }
        Ok(None) => (false, vec![format!("{path}: does not exist")]),
        Err(e) => (false, vec![format!("{path}: {e}")]),
    }
}

pub(crate) fn file_absent(cx: &Ctx<'_>, path: &str) -> (bool, Vec<String>) {
    match cx.world.read(path) {
        Ok(None) => (true, vec![format!("{path}: absent")]),
        Ok(Some(bytes)) => (
            false,
            vec![format!("{path}: exists ({} bytes)", bytes.len())],
        ),
        Err(e) => (
            false,
            vec![format!("{path}: cannot tell whether it exists: {e}")],
        ),
    }
}

/// What a content check looks for and where.
pub(crate) struct Pattern<'a> {
    pub path: &'a str,
    pub pattern: &'a str,
    pub regex: bool,
    pub case_insensitive: bool,
    pub section: Option<&'a str>,
    pub include_code: bool,
}

/// Finds the pattern in the file's prose (or one section of it), both normalised; `Err` is a
/// fact when the file, the section or the pattern is unusable.
///
/// `content_matches` reads the text that certainly renders (it is evidence for the
/// deliverable); `content_absent` reads doubtful text too (a denial in a styled HTML block is
/// still a denial).
fn find(
    cx: &Ctx<'_>,
    p: &Pattern<'_>,
    with_doubtful: bool,
) -> Result<(Option<String>, String), String> {
    let prose = cx.read_prose(p.path, p.include_code)?;
    let text = if with_doubtful {
        prose.scope_all(p.section)
    } else {
        prose.scope(p.section)
    }
    .map_err(|e| format!("{}: {e}", p.path))?;
    let source = if p.regex {
        p.pattern.to_string()
    } else {
        regex::escape(&reading(p.pattern))
    };
    let re = RegexBuilder::new(&source)
        .case_insensitive(p.case_insensitive)
        .build()
        .map_err(|e| format!("invalid pattern: {e}"))?;
    let what = format!(
        "{} `{}`{}{}",
        if p.regex { "regex" } else { "literal" },
        p.pattern,
        if p.case_insensitive {
            " (any case)"
        } else {
            ""
        },
        p.section
            .map(|s| format!(" in section `{s}`"))
            .unwrap_or_default()
    );
    let hit = re.find(&text).map(|m| {
        let line = text[..m.start()].matches('\n').count() + 1;
        format!("line {line}: `{}`", preview(m.as_str()))
    });
    Ok((hit, what))
}

/// Where a content check looked, in words a model may read.
fn place(p: &Pattern<'_>) -> String {
    match p.section {
        Some(s) => format!("{} (section `{s}`)", p.path),
        None => p.path.to_string(),
    }
}

/// The pattern is the contract's, and in a search or edit task it is the answer itself: a
/// failure tells the model that the required text is missing, never what it is (the pattern is
/// withheld, for the person and the journal).
pub(crate) fn content_matches(cx: &Ctx<'_>, p: &Pattern<'_>) -> Judged {
    let path = p.path;
    let mut j = Judged::default();
    match find(cx, p, false) {
        Ok((Some(hit), what)) => {
            j.passed = true;
            j.say(format!(
                "{}: the required text is there, at {hit}",
                place(p)
            ));
            j.withhold(format!("{path}: {what} found at {hit}"));
        }
        Ok((None, what)) => {
            j.say(format!("{}: the required text is not there", place(p)));
            j.withhold(format!("{path}: {what} not found"));
        }
        Err(fact) => j.say(fact),
    }
    j
}

/// A failure names neither the pattern nor where it matched: in a list task each wrong item has
/// its own check, so "forbidden text at line 3: `old-import.js`" would sort a listed-everything
/// deliverable into wrong items and, by elimination, the answer. Both are withheld.
pub(crate) fn content_absent(cx: &Ctx<'_>, p: &Pattern<'_>) -> Judged {
    let path = p.path;
    let mut j = Judged::default();
    match find(cx, p, true) {
        Ok((None, what)) => {
            j.passed = true;
            j.say(format!("{}: no forbidden text", place(p)));
            j.withhold(format!("{path}: {what} absent"));
        }
        Ok((Some(hit), what)) => {
            j.say(format!(
                "{}: holds text the task rules out (a second answer, a wrong item or a denial)",
                place(p)
            ));
            j.withhold(format!("{path}: {what} present at {hit}"));
        }
        Err(fact) => j.say(fact),
    }
    j
}

/// No template marker in the file's text as a person reads it (code and comments included: a
/// placeholder hidden in a comment is still a draft; `ТВD` in Cyrillic letters is `TBD`), and
/// no bidi control that would show the text in another order than the checks read it.
pub(crate) fn no_placeholders(cx: &Ctx<'_>, path: &str) -> (bool, Vec<String>) {
    let bytes = match cx.read_required(path) {
        Ok(b) => b,
        Err(fact) => return (false, vec![fact]),
    };
    let text = String::from_utf8_lossy(&bytes);
    if let Some(c) = reorder_control(&text) {
        return (
            false,
            vec![format!(
                "{path}: holds the bidi control U+{:04X}, which shows text in another order than it is written",
                c as u32
            )],
        );
    }
    match find_placeholder(&reading(&text)) {
        None => (true, vec![format!("{path}: no placeholder marker")]),
        Some(m) => (
            false,
            vec![format!("{path}: placeholder marker `{}`", preview(&m))],
        ),
    }
}

pub(crate) fn json_schema(cx: &Ctx<'_>, path: &str, schema: &serde_json::Value) -> Judged {
    let bytes = match cx.read_required(path) {
        Ok(b) => b,
        Err(fact) => return (false, vec![fact]).into(),
    };
    let instance: serde_json::Value = match parse_json(&bytes) {
        Ok(v) => v,
        Err(e) => return (false, vec![format!("{path}: not valid JSON: {e}")]).into(),
    };
    let mut j = schema_judged(path, schema, &instance);
    if j.passed {
        j.facts = vec![format!(
            "{path}: valid JSON matching the schema ({} bytes)",
            bytes.len()
        )];
    }
    j
}

/// Judges a JSON instance against a contract's schema: the facts a model may read (only what
/// the document holds or the shape the prompt asks for), and the rest withheld. Shared by the
/// `json_schema` check and the `write_json` tool's validation, so both say the same.
pub(crate) fn schema_judged(
    path: &str,
    schema: &serde_json::Value,
    instance: &serde_json::Value,
) -> Judged {
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        Err(e) => {
            return (
                false,
                vec![format!("the contract's schema is invalid: {e}")],
            )
                .into()
        }
    };
    let mut j = Judged::default();
    for e in validator.iter_errors(instance).take(20) {
        let at = rein_workspace::schema_error_place(&e);
        let at = if at.is_empty() {
            String::new()
        } else {
            format!(" at {at}")
        };
        let schema_path = e.schema_path.to_string();
        let keyword = schema_path.rsplit('/').next().unwrap_or("");
        // These messages name only what the deliverable holds or the shape the prompt asks
        // for; the others (pattern, enum, const, bounds) would read the contract out.
        let what = rein_workspace::describe_schema_error(&e);
        if MODEL_SAFE_SCHEMA_KEYWORDS.contains(&keyword) {
            j.say(format!("{path}{at}: {what}"));
        } else {
            j.say(format!(
                "{path}{at}: does not satisfy the schema's {} rule",
                rule_name(keyword)
            ));
            j.withhold(format!("{path}{at}: {what}"));
        }
    }
    for at in integers_not_written_as_integers(schema, instance, String::new()) {
        j.say(format!(
            "{path} at {at}: a number the schema asks to be an integer is written with a \
             fraction or an exponent; write it as a plain integer (8081, not 8081.0 or 8.081e3)"
        ));
    }
    j.passed = j.facts.is_empty();
    j
}

/// Where the instance has a number written with a fraction or an exponent at a place whose
/// schema says `"type": "integer"`. JSON Schema counts `8081.0` and `8.081e3` as integers, but
/// the programs that read such a file (a typed parser into an integer) refuse them. Follows
/// `properties`, `additionalProperties`, `items` and `prefixItems`; places reached only
/// through `$ref` or combinators are not looked at.
fn integers_not_written_as_integers(
    schema: &serde_json::Value,
    instance: &serde_json::Value,
    at: String,
) -> Vec<String> {
    use serde_json::Value;
    let mut found = Vec::new();
    let wants_integer = match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => {
            ts.iter().any(|t| t == "integer") && !ts.iter().any(|t| t == "number")
        }
        _ => false,
    };
    if wants_integer {
        if let Value::Number(n) = instance {
            if !(n.is_i64() || n.is_u64()) {
                found.push(if at.is_empty() {
                    "/".into()
                } else {
                    at.clone()
                });
            }
        }
    }
    match instance {
        Value::Object(fields) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let other = schema.get("additionalProperties").filter(|v| v.is_object());
            for (name, value) in fields {
                let sub = properties.and_then(|p| p.get(name)).or(other);
                if let Some(sub) = sub {
                    found.extend(integers_not_written_as_integers(
                        sub,
                        value,
                        format!("{at}/{name}"),
                    ));
                }
            }
        }
        Value::Array(items) => {
            let prefix = schema.get("prefixItems").and_then(Value::as_array);
            let rest = schema.get("items").filter(|v| v.is_object());
            for (i, value) in items.iter().enumerate() {
                let sub = prefix.and_then(|p| p.get(i)).or(rest);
                if let Some(sub) = sub {
                    found.extend(integers_not_written_as_integers(
                        sub,
                        value,
                        format!("{at}/{i}"),
                    ));
                }
            }
        }
        _ => {}
    }
    found
}

/// Schema keywords whose error message reveals nothing the prompt does not already say.
/// `minItems`/`maxItems` are not among them: "has less than 3 items" says how many entries the
/// answer has (in a list task, a count computed from the inputs).
const MODEL_SAFE_SCHEMA_KEYWORDS: &[&str] = &["required", "additionalProperties", "type"];

/// A withheld schema rule as the model may read it. The two sides of a bound are one name, so
/// "below the minimum" and "above the maximum" cannot tell a model which way the expected value
/// lies (a binary search); other keywords are named as they are.
fn rule_name(keyword: &str) -> String {
    match keyword {
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
            "bounds on the value".to_string()
        }
        "minLength" | "maxLength" => "bounds on the length".to_string(),
        "minItems" | "maxItems" => "bounds on the number of items".to_string(),
        "minProperties" | "maxProperties" => "bounds on the number of fields".to_string(),
        "minContains" | "maxContains" => "bounds on the matching items".to_string(),
        other if SCHEMA_KEYWORDS.contains(&other) => format!("`{other}`"),
        // The last step of the schema path is then a name from the contract's schema (a
        // property whose subschema is `false`), not a keyword: not the model's to read.
        _ => "field".to_string(),
    }
}

/// JSON Schema's validation and applicator keywords (2020-12 and draft 7): a withheld rule is
/// named only when it is one of these.
const SCHEMA_KEYWORDS: &[&str] = &[
    "enum",
    "const",
    "pattern",
    "format",
    "multipleOf",
    "uniqueItems",
    "not",
    "anyOf",
    "oneOf",
    "allOf",
    "if",
    "then",
    "else",
    "contains",
    "items",
    "prefixItems",
    "additionalItems",
    "propertyNames",
    "patternProperties",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentMediaType",
    "contentEncoding",
    "false",
];
