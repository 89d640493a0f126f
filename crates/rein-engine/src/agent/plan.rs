//! The optional plan phase: before acting, the model lists at most `max_plan_steps` steps. The
//! plan is a hint the model keeps in view, never authority: nothing checks that it is followed.

use rein_models::{Model, ModelError};
use rein_protocol::{ChatMessage, Completion, CompletionRequest, Prompt, SamplingProfile};
use serde_json::{json, Value};

use super::caps::MAX_REPLY_TOKENS;

/// Characters of one plan step.
pub const MAX_PLAN_STEP_CHARS: usize = 160;

/// A plan as read from the model.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The kept steps (at most the cap).
    pub steps: Vec<String>,
    /// How many steps the model proposed (more than kept when the cap fired).
    pub proposed: u32,
    pub raw: String,
    pub completion: Completion,
}

/// Asks for the plan. Constrained decoding caps the list by schema; otherwise the reply is read
/// leniently and cut to the cap (the caller reports the cut).
pub fn make_plan(
    model: &mut dyn Model,
    mut messages: Vec<ChatMessage>,
    max_steps: u32,
    constrained: bool,
    seed: u32,
) -> Result<Plan, ModelError> {
    messages.push(ChatMessage::user(format!(
        "Before acting, reply with a plan: one JSON object {{\"plan\": [\"step\", ...]}} with at most {max_steps} short steps."
    )));
    let mut request = CompletionRequest::new(
        Prompt::chat(messages),
        MAX_REPLY_TOKENS,
        SamplingProfile::ACTOR,
    );
    request.seed = seed;
    if constrained {
        request.json_schema = Some(json!({
            "type": "object",
            "properties": {
                "plan": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": MAX_PLAN_STEP_CHARS},
                    "minItems": 1,
                    "maxItems": max_steps,
                }
            },
            "required": ["plan"],
            "additionalProperties": false,
        }));
    }
    let completion = model.complete(&request, &mut |_| {})?;
    let raw = completion.text.clone();
    let all = read_plan(&raw);
    let proposed = all.len() as u32;
    let steps = all.into_iter().take(max_steps as usize).collect();
    Ok(Plan {
        steps,
        proposed,
        raw,
        completion,
    })
}

/// The steps of `{"plan": [...]}` (or a bare array) in the reply, each cut to
/// [`MAX_PLAN_STEP_CHARS`]; empty when none can be read.
pub fn read_plan(raw: &str) -> Vec<String> {
    read_list(raw, "plan")
        .into_iter()
        .map(|s| s.chars().take(MAX_PLAN_STEP_CHARS).collect())
        .collect()
}

/// The items of `{"<key>": [...]}` (or a bare array) in a reply read leniently: the first JSON
/// value in it, from its first `{` or `[`, whole. `None` when there is no such list.
pub fn reply_items(raw: &str, key: &str) -> Option<Vec<Value>> {
    let start = raw.find(['{', '['])?;
    let value = serde_json::Deserializer::from_str(&raw[start..])
        .into_iter::<Value>()
        .next()?
        .ok()?;
    match value {
        Value::Object(mut m) => match m.remove(key) {
            Some(Value::Array(items)) => Some(items),
            _ => None,
        },
        Value::Array(items) => Some(items),
        _ => None,
    }
}

/// The non-blank strings of [`reply_items`]; empty when none can be read.
pub fn read_list(raw: &str, key: &str) -> Vec<String> {
    reply_items(raw, key)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|i| i.as_str().map(str::to_string))
        .filter(|s| !s.trim().is_empty())
        .collect()
}

/// One item of a list in the model's own words (a change, a note), as Rein keeps it: on one
/// line (line breaks and tabs become spaces), trimmed, cut at `max` characters with a mark.
pub fn one_item(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let kept: String = line.chars().take(max).collect();
    format!("{kept}… (cut)")
}

/// The model's words (or a path) in Rein's message, JSON-quoted so they cannot end the quote or
/// start a line of their own.
pub fn quoted(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_plans_leniently() {
        assert_eq!(
            read_plan(r#"Plan: {"plan": ["read", "write"]} ok"#),
            vec!["read", "write"]
        );
        assert_eq!(read_plan(r#"["a"]"#), vec!["a"]);
        assert!(read_plan("no plan").is_empty());
    }
}
