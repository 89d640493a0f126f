//! [`ToolRegistry`]: the explicit list of what a model may do. Anything not registered does not
//! run; arguments are checked against each tool's schema and the input cap before a handler sees
//! them; [`ToolRegistry::action_schema`] exports the whole action format for constrained decoding.

use serde_json::{json, Map, Value};

use crate::schema_error::{describe_schema_error, kind_of, schema_error_place};
use crate::tool::{Tool, ToolContext, ToolError, ToolOutput};

/// Longest single string input a model may send (DESIGN: one input, 32,000 characters).
pub const MAX_INPUT_CHARS: usize = 32_000;
/// Longest `thought` in an action: enough to reason in, short enough that a small model cannot
/// ramble its whole reply budget away.
pub const MAX_THOUGHT_CHARS: usize = 2_000;
/// Schema errors reported per call; more would drown the model.
const MAX_REPORTED_ERRORS: usize = 3;

/// Why a tool could not be registered.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("a tool named \"{0}\" is already registered; tool names must be unique")]
    Duplicate(String),
    #[error("tool \"{name}\" has an invalid argument schema: {message}")]
    BadSchema { name: String, message: String },
    #[error("\"{0}\" is not a usable tool name: use lowercase letters, digits and underscores")]
    BadName(String),
}

struct Entry {
    tool: Box<dyn Tool>,
    schema: Value,
    validator: jsonschema::Validator,
}

/// Registered tools, in registration order.
#[derive(Default)]
pub struct ToolRegistry {
    entries: Vec<Entry>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .finish()
    }
}

impl ToolRegistry {
    pub fn new() -> ToolRegistry {
        ToolRegistry::default()
    }

    /// Adds a tool; its schema is compiled now so a bad one fails here, not mid-run.
    pub fn register(&mut self, tool: Box<dyn Tool>) -> Result<(), RegistryError> {
        let name = tool.name().to_string();
        let valid_name = !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !valid_name {
            return Err(RegistryError::BadName(name));
        }
        if self.get(&name).is_some() {
            return Err(RegistryError::Duplicate(name));
        }
        let schema = tool.schema();
        let validator =
            jsonschema::validator_for(&schema).map_err(|e| RegistryError::BadSchema {
                name: name.clone(),
                message: e.to_string(),
            })?;
        self.entries.push(Entry {
            tool,
            schema,
            validator,
        });
        Ok(())
    }

    /// Registers built-in tools.
    ///
    /// # Panics
    ///
    /// Only if a built-in tool has an invalid schema or a duplicate name, which the crate's
    /// tests rule out.
    #[allow(clippy::expect_used)]
    pub(crate) fn with_builtins(tools: Vec<Box<dyn Tool>>) -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        for tool in tools {
            registry
                .register(tool)
                .expect("built-in tools have valid schemas and unique names");
        }
        registry
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.entry(name).map(|e| e.tool.as_ref())
    }

    fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.tool.name() == name)
    }

    /// Tool names in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.tool.name()).collect()
    }

    /// Every tool as `{name, description, mutates, parameters}`, for prompts and `rein tool`.
    pub fn schemas(&self) -> Value {
        Value::Array(
            self.entries
                .iter()
                .map(|e| {
                    json!({
                        "name": e.tool.name(),
                        "description": e.tool.description(),
                        "mutates": e.tool.mutates(),
                        "parameters": e.schema,
                    })
                })
                .collect(),
        )
    }

    /// One JSON schema for a model's whole action,
    /// `{"thought": string, "action": <tool name>, "parameters": {...}}`: an `anyOf` with one
    /// branch per tool (action a `const`, parameters that tool's schema), so constrained
    /// decoding can only produce registered tools with well-typed arguments.
    pub fn action_schema(&self) -> Value {
        let branches: Vec<Value> = self
            .entries
            .iter()
            .map(|e| {
                json!({
                    "type": "object",
                    "properties": {
                        "thought": { "type": "string", "maxLength": MAX_THOUGHT_CHARS },
                        "action": { "const": e.tool.name() },
                        "parameters": e.schema,
                    },
                    "required": ["thought", "action", "parameters"],
                    "additionalProperties": false,
                })
            })
            .collect();
        json!({ "anyOf": branches })
    }

    /// Checks a call's arguments: the tool exists, every string is within
    /// [`MAX_INPUT_CHARS`], and the arguments satisfy the tool's schema. The message says what
    /// to fix.
    pub fn validate(&self, tool: &str, args: &Value) -> Result<(), String> {
        let Some(entry) = self.entry(tool) else {
            return Err(format!(
                "unknown tool \"{tool}\"; the tools are: {}",
                self.names().join(", ")
            ));
        };
        if !args.is_object() {
            return Err(format!(
                "the parameters of {tool} must be a JSON object, got {}",
                kind_of(args)
            ));
        }
        if let Some((path, chars)) = longest_over_cap(args, "parameters") {
            return Err(format!(
                "{path} is {} characters long; one input may be at most {} characters, so split it into smaller pieces",
                crate::desk::thousands(chars),
                crate::desk::thousands(MAX_INPUT_CHARS)
            ));
        }
        let errors: Vec<String> = entry
            .validator
            .iter_errors(args)
            .take(MAX_REPORTED_ERRORS)
            .map(|e| {
                let at = schema_error_place(&e);
                let what = describe_schema_error(&e);
                if at.is_empty() {
                    what
                } else {
                    format!("at {at}: {what}")
                }
            })
            .collect();
        if !errors.is_empty() {
            return Err(errors.join("; "));
        }
        // JSON Schema counts 3.0 as an integer; the tools read integers exactly and would
        // silently drop it, so it is refused here.
        match non_integer(&entry.schema, args, "parameters") {
            Some(message) => Err(message),
            None => Ok(()),
        }
    }

    /// Validates, then runs. Unknown tools never run.
    pub fn call(
        &self,
        ctx: &mut ToolContext<'_>,
        tool: &str,
        args: &Value,
    ) -> Result<ToolOutput, ToolError> {
        let Some(entry) = self.entry(tool) else {
            return Err(ToolError::UnknownTool {
                name: tool.to_string(),
                known: self.names().iter().map(|s| s.to_string()).collect(),
            });
        };
        self.validate(tool, args)
            .map_err(|message| ToolError::InvalidArguments {
                tool: tool.to_string(),
                message,
            })?;
        entry.tool.run(ctx, args)
    }
}

/// Where the schema asks for an integer: `"type": "integer"` (alone, or in a list without
/// `"number"`).
fn wants_integer(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(types)) => {
            types.iter().any(|t| t == "integer") && !types.iter().any(|t| t == "number")
        }
        _ => false,
    }
}

/// The first number written with a fraction or an exponent (like `3.0` or `3e0`) where the
/// schema asks for an integer, as a message saying what to write instead.
fn non_integer(schema: &Value, value: &Value, at: &str) -> Option<String> {
    match value {
        Value::Number(n) if wants_integer(schema) && !(n.is_i64() || n.is_u64()) => Some(format!(
            "`{at}` must be a whole number written without a decimal point or exponent, like 3; got {n}"
        )),
        Value::Object(map) => {
            let properties = schema.get("properties")?.as_object()?;
            map.iter().find_map(|(key, v)| {
                let here = if at == "parameters" {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                non_integer(properties.get(key)?, v, &here)
            })
        }
        Value::Array(items) => {
            let item_schema = schema.get("items")?;
            items
                .iter()
                .enumerate()
                .find_map(|(i, v)| non_integer(item_schema, v, &format!("{at}[{i}]")))
        }
        _ => None,
    }
}

/// The first string (or object key) anywhere in `v` longer than the cap, with where it is.
fn longest_over_cap(v: &Value, at: &str) -> Option<(String, usize)> {
    match v {
        Value::String(s) => {
            let chars = s.chars().count();
            (chars > MAX_INPUT_CHARS).then(|| (format!("`{at}`"), chars))
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| longest_over_cap(item, &format!("{at}[{i}]"))),
        Value::Object(map) => over_cap_in_map(map, at),
        _ => None,
    }
}

fn over_cap_in_map(map: &Map<String, Value>, at: &str) -> Option<(String, usize)> {
    map.iter().find_map(|(key, value)| {
        let key_chars = key.chars().count();
        if key_chars > MAX_INPUT_CHARS {
            return Some((format!("a key in `{at}`"), key_chars));
        }
        let here = if at == "parameters" {
            key.clone()
        } else {
            format!("{at}.{key}")
        };
        longest_over_cap(value, &here)
    })
}
