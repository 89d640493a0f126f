//! `calculate`: arithmetic evaluated by a maintained expression crate (exmex), so a model never
//! does a sum in its head. Numbers as people write them (`1,234.50`, `$12`) are read as numbers.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{json, Value};

use super::object_schema;
use crate::tool::{args, Tool, ToolContext, ToolError, ToolOutput};

/// Longest expression accepted.
pub const CALC_MAX_CHARS: usize = 2_000;
/// Decimal places shown: more than money needs, fewer than binary floating point gets wrong.
pub const CALC_DECIMALS: usize = 10;

/// A number with thousands separators: `1,234` or `12,345,678.5`.
static GROUPED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b").unwrap_or_else(|e| panic!("{e}"))
});

pub struct Calculate;

impl Tool for Calculate {
    fn name(&self) -> &str {
        "calculate"
    }
    fn description(&self) -> &str {
        // No sample expression: the 1.5B called calculate with the description's own example.
        "Evaluate an arithmetic expression written with the numbers you need from the inputs: + - * / ^, parentheses, and functions such as sqrt, abs, round. Use it instead of computing numbers yourself."
    }
    fn schema(&self) -> Value {
        object_schema(
            json!({ "expression": { "type": "string", "minLength": 1, "maxLength": CALC_MAX_CHARS, "description": "the arithmetic to evaluate" } }),
            &["expression"],
        )
    }
    fn mutates(&self) -> bool {
        false
    }
    fn run(&self, _ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let expression = args::str(self.name(), a, "expression")?;
        let value = evaluate(expression).map_err(ToolError::Refused)?;
        Ok(ToolOutput::Data(json!({
            "expression": expression,
            "result": value,
        })))
    }
}

/// Functions an expression may call (exmex's own); any other word is a name, not a number.
const FUNCTIONS: [&str; 23] = [
    "abs", "signum", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "floor",
    "round", "ceil", "trunc", "fract", "exp", "sqrt", "cbrt", "ln", "log", "log2", "log10",
];

/// A word of `expression` that is no function calculate knows (a column's or a variable's
/// name), if there is one.
fn names_in(expression: &str) -> Option<&str> {
    static WORD: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[A-Za-z_][A-Za-z0-9_]*").unwrap_or_else(|e| panic!("{e}")));
    let unknown: Vec<regex::Match<'_>> = WORD
        .find_iter(expression)
        .filter(|m| !FUNCTIONS.contains(&m.as_str().to_ascii_lowercase().as_str()))
        .collect();
    // A name not called as a function (`error_rate` in `max(error_rate)`) says most.
    unknown
        .iter()
        .find(|m| !expression[m.end()..].trim_start().starts_with('('))
        .or(unknown.first())
        .map(|m| m.as_str())
}

/// The value of `expression`, formatted with at most [`CALC_DECIMALS`] decimals.
pub fn evaluate(expression: &str) -> Result<String, String> {
    if expression.chars().count() > CALC_MAX_CHARS {
        return Err(format!(
            "the expression is longer than {CALC_MAX_CHARS} characters; split it into steps"
        ));
    }
    let plain: String = GROUPED
        .replace_all(expression, |c: &regex::Captures<'_>| c[0].replace(',', ""))
        .chars()
        .filter(|c| !matches!(c, '$' | '€' | '£'))
        .collect();
    let value = exmex::eval_str::<f64>(&plain).map_err(|e| match names_in(&plain) {
        // exmex's own words ("we have 1 ops and 1 node") tell a model nothing: the 1.5B
        // called `max(error_rate)` four times on summarize-incident.
        Some(name) => format!(
            "cannot evaluate \"{expression}\": `{name}` is not a number; calculate works only on numbers written out. For a figure of a table column (its sum, mean, min or max) call table_stats"
        ),
        None => format!("cannot evaluate \"{expression}\": {e}"),
    })?;
    if !value.is_finite() {
        return Err(format!(
            "\"{expression}\" has no finite value (a division by zero?)"
        ));
    }
    let text = format!("{value:.CALC_DECIMALS$}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    Ok(if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::evaluate;

    #[test]
    fn arithmetic_as_people_write_it() {
        assert_eq!(evaluate("0.1 + 0.2").as_deref(), Ok("0.3"));
        assert_eq!(evaluate("7 / 2").as_deref(), Ok("3.5"));
        assert_eq!(evaluate("(12.5 + 7) * 3").as_deref(), Ok("58.5"));
        assert_eq!(evaluate("1,234.50 + $99.50").as_deref(), Ok("1334"));
        assert_eq!(evaluate("2^10").as_deref(), Ok("1024"));
        assert_eq!(evaluate("-3 * 0").as_deref(), Ok("0"));
        assert_eq!(evaluate("10 / 3").as_deref(), Ok("3.3333333333"));
    }

    #[test]
    fn nonsense_is_refused_with_the_reason() {
        for bad in ["1 / 0", "2 +", "hello", "x + 1", ""] {
            assert!(evaluate(bad).is_err(), "{bad}");
        }
        assert!(evaluate(&"1+".repeat(1_500)).is_err());
    }

    #[test]
    fn a_name_in_the_expression_points_to_table_stats() {
        let why = evaluate("max(error_rate)").unwrap_err();
        assert!(
            why.contains("`error_rate` is not a number") && why.contains("call table_stats"),
            "{why}"
        );
        let why = evaluate("sqrt(16) + hours").unwrap_err();
        assert!(why.contains("`hours` is not a number"), "{why}");
        assert_eq!(evaluate("sqrt(16) + round(2.4)").as_deref(), Ok("6"));
    }
}
