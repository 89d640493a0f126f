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
    let value = exmex::eval_str::<f64>(&plain)
        .map_err(|e| format!("cannot evaluate \"{expression}\": {e}"))?;
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
}
