//! A BFCL question as a Rein step: the same rules and reply form as the agent's
//! (`{"thought", "action", "parameters"}`, one action per reply), the question's functions as
//! the tools, plus [`DECLINE`] so that "no function fits" can be said; and, for constrained
//! decoding, the action schema those tools allow.

use rein_engine::agent::{signature, MAX_THOUGHT_CHARS};
use rein_protocol::ChatMessage;
use serde_json::{json, Map, Value};

use super::data::Question;
use super::names::{NameMap, DECLINE};

/// Characters of the reason given with [`DECLINE`].
pub const MAX_REASON_CHARS: usize = 200;

/// BFCL's parameter schema (types `dict`, `float`, `tuple`, `any`...) as standard JSON Schema,
/// keeping only what constrains a value: type, properties, required, items, enum.
pub fn to_json_schema(bfcl: &Value) -> Value {
    let ty = bfcl["type"].as_str().unwrap_or("any");
    let mut out = match ty {
        "dict" | "object" => {
            let mut o = json!({ "type": "object" });
            if let Some(props) = bfcl["properties"].as_object() {
                let converted: Map<String, Value> = props
                    .iter()
                    .map(|(k, v)| (k.clone(), to_json_schema(v)))
                    .collect();
                let required: Vec<Value> = bfcl["required"]
                    .as_array()
                    .map(|r| {
                        r.iter()
                            .filter(|n| n.as_str().is_some_and(|n| props.contains_key(n)))
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                o["properties"] = Value::Object(converted);
                o["required"] = Value::Array(required);
                o["additionalProperties"] = json!(false);
            }
            o
        }
        "float" | "number" => json!({ "type": "number" }),
        "integer" => json!({ "type": "integer" }),
        "boolean" => json!({ "type": "boolean" }),
        "string" => json!({ "type": "string" }),
        "array" | "tuple" => {
            let mut o = json!({ "type": "array" });
            if bfcl.get("items").is_some() {
                o["items"] = to_json_schema(&bfcl["items"]);
            }
            o
        }
        _ => json!({}),
    };
    if let Some(values) = bfcl["enum"].as_array() {
        if !values.is_empty() {
            out["enum"] = Value::Array(values.clone());
        }
    }
    out
}

/// The tool name table of a question.
pub fn name_map(q: &Question) -> NameMap {
    NameMap::new(q.functions.iter().filter_map(|f| f["name"].as_str()))
}

fn decline_parameters() -> Value {
    json!({
        "type": "object",
        "properties": { "reason": { "type": "string", "maxLength": MAX_REASON_CHARS } },
        "required": ["reason"],
        "additionalProperties": false,
    })
}

fn branch(tool: &str, parameters: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "thought": { "type": "string", "maxLength": MAX_THOUGHT_CHARS },
            "action": { "const": tool },
            "parameters": parameters,
        },
        "required": ["thought", "action", "parameters"],
        "additionalProperties": false,
    })
}

/// The action schema for constrained decoding: one branch per offered function and one for
/// [`DECLINE`].
pub fn action_schema(q: &Question, names: &NameMap) -> Value {
    let mut branches: Vec<Value> = q
        .functions
        .iter()
        .filter_map(|f| {
            let tool = names.tool(f["name"].as_str()?)?;
            Some(branch(tool, to_json_schema(&f["parameters"])))
        })
        .collect();
    branches.push(branch(DECLINE, decline_parameters()));
    json!({ "anyOf": branches })
}

/// One tool as the model reads it: signature, description, then each parameter's description.
fn describe(tool: &str, f: &Value) -> String {
    let schema = to_json_schema(&f["parameters"]);
    let mut s = format!(
        "- {tool} {}: {}\n",
        signature(&schema),
        f["description"].as_str().unwrap_or("").trim()
    );
    if let Some(props) = f["parameters"]["properties"].as_object() {
        for (name, p) in props {
            let text = p["description"].as_str().unwrap_or("").trim();
            let mut line = format!("    {name}: {text}");
            if let Some(values) = p["enum"].as_array() {
                let values: Vec<String> = values.iter().map(Value::to_string).collect();
                line.push_str(&format!(" (one of {})", values.join(", ")));
            }
            s.push_str(line.trim_end());
            s.push('\n');
        }
    }
    s
}

/// The system message: the agent's reply form, the tools, and how to decline.
pub fn system_message(q: &Question, names: &NameMap) -> String {
    let mut s = String::from(
        "You are the actor of Rein, a harness that checks your work. You answer the request by \
calling exactly one tool.\n\
Reply with exactly one JSON object and nothing else, in this form:\n\
{\"thought\": \"<one short sentence>\", \"action\": \"<tool name>\", \"parameters\": {...}}\n\
Fill the parameters with the values the request gives; leave out optional parameters it does not mention.\n\
If no tool fits the request, reply with the action decline.\n\n\
Tools:\n",
    );
    for f in &q.functions {
        if let Some(tool) = f["name"].as_str().and_then(|n| names.tool(n)) {
            s.push_str(&describe(tool, f));
        }
    }
    s.push_str(&format!(
        "- {DECLINE} {}: no tool above fits the request; say why instead of calling one.\n",
        signature(&decline_parameters())
    ));
    s
}

/// The messages of the request: the system message, then the question's own messages (a
/// system message of the question is appended to Rein's).
pub fn messages(q: &Question, names: &NameMap) -> Vec<ChatMessage> {
    let mut system = system_message(q, names);
    let mut rest = Vec::new();
    for m in &q.messages {
        match m.role.as_str() {
            "system" => {
                system.push('\n');
                system.push_str(&m.content);
            }
            "assistant" => rest.push(ChatMessage::assistant(m.content.clone())),
            _ => rest.push(ChatMessage::user(m.content.clone())),
        }
    }
    let mut out = vec![ChatMessage::system(system)];
    out.extend(rest);
    out
}
