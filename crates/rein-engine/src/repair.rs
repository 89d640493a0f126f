//! Reading one action from a model's free-form reply.
//!
//! Embedded models decode under a grammar, so their actions are well-formed by construction.
//! Remote backends are not; their replies go through here: take the first complete JSON object
//! that has an `"action"` key (skipping chatter and code fences, respecting strings and escapes
//! when matching braces), repair the small faults small models make, then check the shape. The
//! repairer only rewrites syntax, never guesses content: an unquoted *value* is not quoted, a
//! truncated key is not invented. What it did is reported so a silent repair never passes for a
//! clean reply.
//!
//! No crate was used: the candidates (`llm_json`, `json-repair`) repair far more aggressively
//! than a fail-closed harness wants, and none finds the first object amid chatter the way the
//! agent loop needs.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// At most this many `{` positions are tried as the start of the action object.
pub const MAX_CANDIDATES: usize = 64;

/// One action of the agent: `{"thought": "...", "action": "<tool name>", "parameters": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Action {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought: Option<String>,
    pub action: String,
    #[serde(default)]
    pub parameters: Map<String, Value>,
}

/// An action together with the repairs that were needed to read it (empty for a clean reply).
#[derive(Debug, Clone, PartialEq)]
pub struct Extraction {
    pub action: Action,
    pub repairs: Vec<String>,
}

/// No action could be read. `Display` is the message fed back to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct FormatError {
    pub detail: String,
    /// Set when the reply reached the reply cap of this many tokens before it ended: whatever
    /// could be read from it is a cut-off action, never run.
    pub cut_at: Option<u32>,
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.cut_at {
            Some(cap) => write!(
                f,
                "Your reply was cut off at {cap} tokens, the most one reply may have, before it \
                 was complete, so nothing was done. Make the call shorter: one short sentence of \
                 thought, and a long file written in parts (create it with its first part, then \
                 add the rest with edit_file)."
            ),
            None => write!(
                f,
                "Your reply was not one JSON object of the form {{\"thought\": \"...\", \"action\": \
                 \"<tool name>\", \"parameters\": {{...}}}}; {}. Reply with exactly one such object \
                 and nothing else.",
                self.detail
            ),
        }
    }
}

impl FormatError {
    fn new(detail: impl Into<String>) -> Self {
        Self {
            detail: detail.into(),
            cut_at: None,
        }
    }

    /// A reply that reached the `cap` of tokens before it ended.
    pub fn cut(cap: u32) -> Self {
        Self {
            detail: format!("the reply was cut off at the {cap}-token reply cap before it ended"),
            cut_at: Some(cap),
        }
    }
}

/// Reads the first action from a reply, repairing small faults. See the module docs.
pub fn extract_action(reply: &str) -> Result<Action, FormatError> {
    extract_action_detailed(reply).map(|e| e.action)
}

/// Like `extract_action`, and also lists the repairs made.
pub fn extract_action_detailed(reply: &str) -> Result<Extraction, FormatError> {
    let chars: Vec<char> = reply.chars().collect();
    let mut first_problem: Option<String> = None;
    let mut saw_object_without_action = false;
    let starts = chars
        .iter()
        .enumerate()
        .filter(|(_, c)| **c == '{')
        .map(|(i, _)| i)
        .take(MAX_CANDIDATES);
    for start in starts {
        let mut repairs = Vec::new();
        let Some(text) = scan_object(&chars, start, &mut repairs) else {
            continue;
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) if map.contains_key("action") => {
                if start > 0 && !chars[..start].iter().all(|c| c.is_whitespace()) {
                    repairs.insert(0, "skipped text before the JSON object".into());
                }
                let action = shape(map, &mut repairs)?;
                return Ok(Extraction { action, repairs });
            }
            Ok(_) => saw_object_without_action = true,
            Err(e) => {
                first_problem.get_or_insert_with(|| {
                    format!("the JSON could not be read even after repair ({e})")
                });
            }
        }
    }
    let detail = if saw_object_without_action && first_problem.is_none() {
        "it has no \"action\" key naming the tool to call".to_string()
    } else if let Some(p) = first_problem {
        p
    } else {
        "no JSON object was found in it".to_string()
    };
    Err(FormatError::new(detail))
}

/// Checks and normalises the shape of an action object.
fn shape(mut map: Map<String, Value>, repairs: &mut Vec<String>) -> Result<Action, FormatError> {
    let action = match map.remove("action") {
        Some(Value::String(s)) if !s.trim().is_empty() => {
            if s.trim() != s {
                repairs.push("trimmed spaces around the action name".into());
            }
            s.trim().to_string()
        }
        Some(Value::String(_)) => {
            return Err(FormatError::new("\"action\" is empty; name one tool"))
        }
        Some(other) => {
            return Err(FormatError::new(format!(
                "\"action\" must be a tool name string, not {}",
                rein_workspace::kind_of(&other)
            )))
        }
        None => return Err(FormatError::new("it has no \"action\" key")),
    };
    let parameters = match map.remove("parameters") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(o)) => o,
        Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
            Ok(Value::Object(o)) => {
                repairs.push("parsed \"parameters\" given as a JSON string".into());
                o
            }
            _ => return Err(FormatError::new(
                "\"parameters\" must be an object such as {\"path\": \"notes.md\"}, not a string",
            )),
        },
        Some(other) => {
            return Err(FormatError::new(format!(
                "\"parameters\" must be an object such as {{\"path\": \"notes.md\"}}, not {}",
                rein_workspace::kind_of(&other)
            )))
        }
    };
    let thought = match map.remove("thought") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            repairs.push("turned a non-string \"thought\" into text".into());
            Some(other.to_string())
        }
    };
    if !map.is_empty() {
        let keys: Vec<&str> = map.keys().map(String::as_str).collect();
        repairs.push(format!("ignored extra keys: {}", keys.join(", ")));
    }
    Ok(Action {
        thought,
        action,
        parameters,
    })
}

/// Scans one object starting at `chars[start] == '{'` and re-emits it as strict JSON text.
/// Stops at the brace that closes it; at the end of input, closes what is open. Returns `None`
/// when the brackets cannot be matched.
fn scan_object(chars: &[char], start: usize, repairs: &mut Vec<String>) -> Option<String> {
    let mut out = String::new();
    let mut stack: Vec<char> = Vec::new();
    let mut i = start;
    let n = chars.len();
    let note = |repairs: &mut Vec<String>, s: &str| {
        if !repairs.iter().any(|r| r == s) {
            repairs.push(s.to_string());
        }
    };
    while i < n {
        let c = chars[i];
        match c {
            '"' | '\'' => {
                if c == '\'' {
                    note(
                        repairs,
                        "turned single-quoted strings into double-quoted ones",
                    );
                }
                let (end, closed) = scan_string(chars, i, &mut out, repairs);
                i = end;
                if !closed {
                    note(repairs, "closed a string cut off at the end");
                    break;
                }
                continue;
            }
            '{' => {
                stack.push('}');
                out.push(c);
            }
            '[' => {
                stack.push(']');
                out.push(c);
            }
            '}' | ']' => {
                let pos = stack.iter().rposition(|&e| e == c)?;
                drop_trailing_comma(&mut out, repairs);
                while stack.len() > pos + 1 {
                    if let Some(missing) = stack.pop() {
                        note(repairs, "added a missing closing bracket");
                        out.push(missing);
                    }
                }
                stack.pop();
                out.push(c);
                if stack.is_empty() {
                    return Some(out);
                }
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                note(repairs, "removed comments");
                while i < n && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                note(repairs, "removed comments");
                i += 2;
                while i < n && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    i += 1;
                }
                i += 2;
                continue;
            }
            c if c.is_ascii_alphabetic() || c == '_' || c == '$' => {
                let begin = i;
                while i < n
                    && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '$')
                {
                    i += 1;
                }
                let word: String = chars[begin..i].iter().collect();
                match word.as_str() {
                    "true" | "false" | "null" => out.push_str(&word),
                    "True" | "False" | "None" => {
                        note(
                            repairs,
                            "turned Python True/False/None into true/false/null",
                        );
                        out.push_str(match word.as_str() {
                            "True" => "true",
                            "False" => "false",
                            _ => "null",
                        });
                    }
                    _ => {
                        let mut j = i;
                        while j < n && chars[j].is_whitespace() {
                            j += 1;
                        }
                        if chars.get(j) == Some(&':') {
                            note(repairs, "quoted unquoted keys");
                            out.push('"');
                            out.push_str(&word);
                            out.push('"');
                        } else {
                            // An unquoted value is not guessed at: left as is, it fails to parse.
                            out.push_str(&word);
                        }
                    }
                }
                continue;
            }
            _ => out.push(c),
        }
        i += 1;
    }
    if stack.is_empty() {
        return None;
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    drop_trailing_comma(&mut out, repairs);
    note(repairs, "added missing closing brackets at the end");
    while let Some(closer) = stack.pop() {
        out.push(closer);
    }
    Some(out)
}

/// Removes a structural comma that directly precedes a closing bracket.
fn drop_trailing_comma(out: &mut String, repairs: &mut Vec<String>) {
    let trimmed = out.trim_end();
    if trimmed.ends_with(',') {
        let cut = trimmed.len() - 1;
        out.truncate(cut);
        let s = "removed trailing commas";
        if !repairs.iter().any(|r| r == s) {
            repairs.push(s.to_string());
        }
    }
}

/// Reads a string starting at the quote `chars[start]` and writes it as a JSON string. Returns
/// the index after it and whether it was closed.
fn scan_string(
    chars: &[char],
    start: usize,
    out: &mut String,
    repairs: &mut Vec<String>,
) -> (usize, bool) {
    let quote = chars[start];
    let mut i = start + 1;
    out.push('"');
    let mut fixed_escape = false;
    let mut fixed_control = false;
    while i < chars.len() {
        let c = chars[i];
        if c == quote {
            out.push('"');
            if fixed_escape {
                repairs.push("fixed invalid escapes in a string".into());
            }
            if fixed_control {
                repairs.push("escaped raw control characters in a string".into());
            }
            return (i + 1, true);
        }
        match c {
            '\\' => match chars.get(i + 1) {
                Some(&e @ ('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' | 'u')) => {
                    out.push('\\');
                    out.push(e);
                    i += 2;
                    continue;
                }
                Some('\'') => {
                    out.push('\'');
                    i += 2;
                    continue;
                }
                Some(_) | None => {
                    fixed_escape = true;
                    out.push_str("\\\\");
                }
            },
            '"' => out.push_str("\\\""), // only reached inside a single-quoted string
            '\n' => {
                fixed_control = true;
                out.push_str("\\n");
            }
            '\r' => {
                fixed_control = true;
                out.push_str("\\r");
            }
            '\t' => {
                fixed_control = true;
                out.push_str("\\t");
            }
            c if (c as u32) < 0x20 => {
                fixed_control = true;
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
        i += 1;
    }
    out.push('"');
    (i, false)
}
