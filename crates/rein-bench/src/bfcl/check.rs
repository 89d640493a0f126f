//! BFCL's AST-matching rules for Python-language questions (categories simple, multiple and
//! irrelevance), reimplemented from reading the checker shipped in `bfcl-eval`
//! (`eval_checker/ast_eval/ast_checker.py`); no code of it runs or is copied.
//!
//! BFCL parses a Python call and compares Python values; Rein's calls are JSON. The mapping that
//! keeps the rules the same: a JSON number with a fraction or exponent is a Python `float`, any
//! other number an `int`; `==` compares numbers by value across int, float and bool (`1 == 1.0`,
//! `True == 1`), as Python does, while *type* checks tell them apart, as `type(v) == int` does.
//!
//! The rules, in BFCL's order, for one call against one ground-truth entry:
//! 1. the function name equals the described function's name;
//! 2. every `required` parameter is present;
//! 3. every given parameter is both described and in the ground truth;
//! 4. its type matches the description (an int is accepted for a float; a value of the
//!    ground truth's own type is accepted as a "variable"; array items are type-checked one
//!    level deep);
//! 5. its value is among the possible answers: strings compared after removing
//!    ` ,./-_*^`, lower-casing and `'` → `"`; lists likewise item by item; dicts key by key;
//!    lists of dicts in order; anything else by `==`;
//! 6. a ground-truth parameter left out is allowed only when `""` is among its answers.

use serde::Serialize;
use serde_json::{Map, Value};

/// Why a call did not match. `error_type` spells BFCL's own error types.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    pub error_type: String,
    pub message: String,
}

fn mismatch(error_type: &str, message: impl Into<String>) -> Mismatch {
    Mismatch {
        error_type: error_type.to_string(),
        message: message.into(),
    }
}

/// One decoded call: the function's (original, BFCL) name and its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub name: String,
    pub arguments: Map<String, Value>,
}

/// The BFCL categories Rein runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// One function offered, one call expected.
    Simple,
    /// Several functions offered, one call to the right one expected.
    Multiple,
    /// No offered function fits: the right answer is no call.
    Irrelevance,
}

impl Category {
    pub const ALL: [Category; 3] = [Category::Simple, Category::Multiple, Category::Irrelevance];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Simple => "simple",
            Category::Multiple => "multiple",
            Category::Irrelevance => "irrelevance",
        }
    }

    pub fn parse(s: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// Scores the calls a model made for one question. `functions` are the question's function
/// descriptions, `ground_truth` the possible-answer entries (`[{name: {param: [answers]}}]`;
/// empty for irrelevance).
pub fn check(
    category: Category,
    functions: &[Value],
    calls: &[Call],
    ground_truth: &[Value],
) -> Result<(), Mismatch> {
    match category {
        Category::Irrelevance => {
            if calls.is_empty() {
                Ok(())
            } else {
                Err(mismatch(
                    "irrelevance_error:decoder_success",
                    format!(
                        "no offered function fits, but the model called {}",
                        calls[0].name
                    ),
                ))
            }
        }
        Category::Simple => {
            if calls.len() != 1 {
                return Err(mismatch(
                    "simple_function_checker:wrong_count",
                    "Wrong number of functions.",
                ));
            }
            let (Some(desc), Some(answer)) = (functions.first(), ground_truth.first()) else {
                return Err(mismatch(
                    "checker:bad_data",
                    "the question has no function or no ground truth",
                ));
            };
            check_call(desc, &calls[0], answer)
        }
        Category::Multiple => {
            if calls.len() != ground_truth.len() {
                return Err(mismatch(
                    "multiple_function_checker:wrong_count",
                    "Wrong number of functions.",
                ));
            }
            let Some(answer) = ground_truth.first() else {
                return Err(mismatch(
                    "checker:bad_data",
                    "the question has no ground truth",
                ));
            };
            let expected = answer
                .as_object()
                .and_then(|o| o.keys().next())
                .cloned()
                .unwrap_or_default();
            let Some(desc) = functions.iter().find(|f| f["name"] == expected.as_str()) else {
                return Err(mismatch(
                    "checker:bad_data",
                    format!("the ground truth names {expected}, which is not offered"),
                ));
            };
            check_call(desc, &calls[0], answer)
        }
    }
}

/// Python's view of a JSON value's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PyType {
    Int,
    Float,
    Bool,
    Str,
    List,
    Dict,
    None,
}

fn py_type(v: &Value) -> PyType {
    match v {
        Value::Null => PyType::None,
        Value::Bool(_) => PyType::Bool,
        Value::Number(n) if n.is_f64() => PyType::Float,
        Value::Number(_) => PyType::Int,
        Value::String(_) => PyType::Str,
        Value::Array(_) => PyType::List,
        Value::Object(_) => PyType::Dict,
    }
}

/// BFCL's mapping from the type names of its descriptions to Python types.
fn described_type(name: &str) -> Option<PyType> {
    Some(match name {
        "string" | "any" => PyType::Str,
        "integer" => PyType::Int,
        "float" => PyType::Float,
        "boolean" => PyType::Bool,
        "array" | "tuple" => PyType::List,
        "dict" => PyType::Dict,
        _ => return None,
    })
}

fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// Python `==` on values decoded from JSON.
fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if !x.is_f64() && !y.is_f64() => {
            match (x.as_i64(), y.as_i64()) {
                (Some(i), Some(j)) => i == j,
                _ => x.as_u64() == y.as_u64(),
            }
        }
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        (Value::Null, Value::Null) => true,
        _ => match (as_number(a), as_number(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}

fn py_in(v: &Value, list: &[Value]) -> bool {
    list.iter().any(|x| py_eq(v, x))
}

fn is_empty_str(v: &Value) -> bool {
    v.as_str() == Some("")
}

/// The answers of one parameter as a list (BFCL iterates a string character by character).
fn alternatives(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.clone(),
        Value::String(s) => s.chars().map(|c| Value::String(c.to_string())).collect(),
        other => vec![other.clone()],
    }
}

/// Removes ` ,./-_*^`, lower-cases and turns `'` into `"`, so "April 1, 2024" equals
/// "april 1 2024".
pub fn standardize(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, ' ' | ',' | '.' | '/' | '-' | '_' | '*' | '^'))
        .collect::<String>()
        .to_lowercase()
        .replace('\'', "\"")
}

fn standardized(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(standardize(s)),
        other => other.clone(),
    }
}

/// The type of the first possible answer that is not `""` (the mark of an optional parameter).
fn answer_type(answers: &[Value]) -> Option<PyType> {
    answers.iter().find(|a| !is_empty_str(a)).map(py_type)
}

/// BFCL's type check; `Ok(true)` means the value was accepted as a "variable" (a value of the
/// ground truth's type rather than the described one), which is then compared by `==` only.
fn type_check(
    param: &str,
    value: &Value,
    answers: &[Value],
    expected: PyType,
    nested: Option<PyType>,
) -> Result<bool, Mismatch> {
    let from_answers = answer_type(answers);
    let is_variable = from_answers.is_some_and(|t| t != expected);
    if py_type(value) == expected {
        let Some(nested) = nested else {
            return Ok(is_variable);
        };
        let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
        for answer in answers {
            let fits = match answer {
                Value::Array(answer_items) => items
                    .iter()
                    .all(|item| type_check(param, item, answer_items, nested, None).is_ok()),
                _ => true,
            };
            if fits {
                return Ok(is_variable);
            }
        }
        return Err(mismatch(
            "type_error:nested",
            format!(
                "Nested type checking failed for parameter {param:?}. Parameter value: {value}."
            ),
        ));
    }
    if from_answers == Some(py_type(value)) {
        return Ok(true);
    }
    Err(mismatch(
        "type_error:simple",
        format!("Incorrect type for parameter {param:?}. Parameter value: {value}."),
    ))
}

fn string_check(param: &str, value: &str, answers: &[Value]) -> Result<(), Mismatch> {
    let got = standardize(value);
    if answers
        .iter()
        .filter_map(Value::as_str)
        .any(|a| standardize(a) == got)
    {
        return Ok(());
    }
    Err(mismatch(
        "value_error:string",
        format!(
            "Invalid value for parameter {param:?}: {value:?}. Expected one of {}.",
            Value::Array(answers.to_vec())
        ),
    ))
}

fn list_check(param: &str, value: &[Value], answers: &[Value]) -> Result<(), Mismatch> {
    let got = Value::Array(value.iter().map(standardized).collect());
    // A possible answer that is not a list (or a string, which BFCL iterates) never fits.
    let fits = answers.iter().any(|answer| match answer {
        Value::Array(_) | Value::String(_) => py_eq(
            &got,
            &Value::Array(alternatives(answer).iter().map(standardized).collect()),
        ),
        _ => false,
    });
    if fits {
        return Ok(());
    }
    Err(mismatch(
        "value_error:list/tuple",
        format!(
            "Invalid value for parameter {param:?}: {}. Expected one of {}.",
            Value::Array(value.to_vec()),
            Value::Array(answers.to_vec())
        ),
    ))
}

fn dict_check(param: &str, value: &Map<String, Value>, answers: &[Value]) -> Result<(), Mismatch> {
    let mut result = Err(mismatch(
        "dict_checker:unclear",
        format!("No possible answer fits parameter {param:?}."),
    ));
    for answer in answers {
        if is_empty_str(answer) {
            continue;
        }
        let Some(answer) = answer.as_object() else {
            continue;
        };
        result = Ok(());
        for (key, v) in value {
            let Some(allowed) = answer.get(key) else {
                result = Err(mismatch(
                    "value_error:dict_key",
                    format!("Unexpected dict key parameter: {key:?}."),
                ));
                break;
            };
            let allowed: Vec<Value> = alternatives(allowed).iter().map(standardized).collect();
            if !py_in(&standardized(v), &allowed) {
                result = Err(mismatch(
                    "value_error:dict_value",
                    format!("Invalid value for parameter {key:?}: {v}."),
                ));
                break;
            }
        }
        for (key, allowed) in answer {
            if !value.contains_key(key)
                && !py_in(&Value::String(String::new()), &alternatives(allowed))
            {
                result = Err(mismatch(
                    "value_error:dict_key",
                    format!("Missing dict key parameter: {key:?}."),
                ));
                break;
            }
        }
        if result.is_ok() {
            return result;
        }
    }
    result
}

fn list_dict_check(param: &str, value: &[Value], answers: &[Value]) -> Result<(), Mismatch> {
    let mut result = Err(mismatch(
        "list_dict_checker:unclear",
        format!("No possible answer fits parameter {param:?}."),
    ));
    'answers: for answer in answers {
        let dicts = alternatives(answer);
        if dicts.len() != value.len() {
            result = Err(mismatch(
                "value_error:list_dict_count",
                "Wrong number of dictionaries in the list.",
            ));
            continue;
        }
        for (item, want) in value.iter().zip(&dicts) {
            let Some(item) = item.as_object() else {
                result = Err(mismatch(
                    "type_error:nested",
                    format!("An item of parameter {param:?} is not a dict: {item}."),
                ));
                continue 'answers;
            };
            result = dict_check(param, item, std::slice::from_ref(want));
            if result.is_err() {
                continue 'answers;
            }
        }
        return Ok(());
    }
    result
}

/// BFCL's simple function checker: one call against one ground-truth entry.
pub fn check_call(function: &Value, call: &Call, answer: &Value) -> Result<(), Mismatch> {
    let Some(expected) = answer.as_object().and_then(|o| o.values().next()) else {
        return Err(mismatch(
            "checker:bad_data",
            "the ground truth entry is not {name: {...}}",
        ));
    };
    let Some(expected) = expected.as_object() else {
        return Err(mismatch(
            "checker:bad_data",
            "the ground truth parameters are not an object",
        ));
    };
    let name = function["name"].as_str().unwrap_or_default();
    if call.name != name {
        return Err(mismatch(
            "simple_function_checker:wrong_func_name",
            format!("Function name {name:?} not found in model output."),
        ));
    }
    let empty = Map::new();
    let described = function["parameters"]["properties"]
        .as_object()
        .unwrap_or(&empty);
    let required = function["parameters"]["required"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for param in required.iter().filter_map(Value::as_str) {
        if !call.arguments.contains_key(param) {
            return Err(mismatch(
                "simple_function_checker:missing_required",
                format!("Missing required parameter: {param:?}."),
            ));
        }
    }
    for (param, value) in &call.arguments {
        let (Some(details), Some(allowed)) = (described.get(param), expected.get(param)) else {
            return Err(mismatch(
                "simple_function_checker:unexpected_param",
                format!("Unexpected parameter: {param:?}."),
            ));
        };
        let allowed = alternatives(allowed);
        let type_name = details["type"].as_str().unwrap_or_default();
        let Some(expected_type) = described_type(type_name) else {
            return Err(mismatch(
                "checker:unsupported_type",
                format!("parameter {param:?} has type {type_name:?}, which BFCL's Python checker does not know"),
            ));
        };
        let nested = if expected_type == PyType::List {
            let item_type = details["items"]["type"].as_str().unwrap_or_default();
            match described_type(item_type) {
                Some(t) => Some(t),
                None => {
                    return Err(mismatch(
                        "checker:unsupported_type",
                        format!("parameter {param:?} has items of type {item_type:?}"),
                    ))
                }
            }
        } else {
            None
        };
        // Python converts an int argument to float when the description says float.
        let value = match value {
            Value::Number(n) if type_name == "float" && !n.is_f64() => n
                .as_f64()
                .and_then(serde_json::Number::from_f64)
                .map_or_else(|| value.clone(), Value::Number),
            _ => value.clone(),
        };
        let is_variable = type_check(param, &value, &allowed, expected_type, nested)?;
        if !is_variable {
            match (&value, expected_type, nested) {
                (Value::Object(d), PyType::Dict, _) => {
                    dict_check(param, d, &allowed)?;
                    continue;
                }
                (Value::Array(items), PyType::List, Some(PyType::Dict)) => {
                    list_dict_check(param, items, &allowed)?;
                    continue;
                }
                (Value::String(s), PyType::Str, _) => {
                    string_check(param, s, &allowed)?;
                    continue;
                }
                (Value::Array(items), PyType::List, _) => {
                    list_check(param, items, &allowed)?;
                    continue;
                }
                _ => {}
            }
        }
        if !py_in(&value, &allowed) {
            return Err(mismatch(
                "value_error:others",
                format!(
                    "Invalid value for parameter {param:?}: {value}. Expected one of {}.",
                    Value::Array(allowed)
                ),
            ));
        }
    }
    for (param, allowed) in expected {
        if !call.arguments.contains_key(param)
            && !py_in(&Value::String(String::new()), &alternatives(allowed))
        {
            return Err(mismatch(
                "simple_function_checker:missing_optional",
                format!("Optional parameter {param:?} not provided and not marked as optional."),
            ));
        }
    }
    Ok(())
}
