//! The scripted backend: a replay model that answers from a JSON Lines file, one reply per line
//! in order. A JSON string is the raw text of a reply; any other JSON value is sent as its
//! compact JSON text. Blank lines are skipped. `choose` takes the next line too, which must be an
//! object mapping labels to probabilities. A line that is exactly `{"$delay_ms": N}` is not a
//! reply: every later reply waits N milliseconds before it streams (a slow model, for tests that
//! must catch a run mid-way). A test fixture and a way to reproduce a run; never a default.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::{ModelError, Result};
use crate::{
    ChooseReply, ChooseRequest, Completion, CompletionRequest, DecisionSource, FinishReason,
    LabelProbability, Model, ModelIdentity,
};

/// How many pieces a reply is streamed in (to exercise streaming consumers).
const STREAM_PIECES: usize = 3;

/// One reply and the line it came from.
#[derive(Debug, Clone, PartialEq)]
struct Reply {
    line: usize,
    value: Value,
    /// The reply's text: a string's content, or the line's JSON made compact (key order kept).
    text: String,
    /// How long to wait before streaming it (the latest `$delay_ms` line before it).
    delay_ms: u64,
}

/// A model that answers from a file, in order.
#[derive(Debug, Clone)]
pub struct ScriptedModel {
    identity: ModelIdentity,
    file: PathBuf,
    replies: Vec<Reply>,
    next: usize,
}

impl ScriptedModel {
    /// Reads and checks the whole file; a malformed line is an error naming its line number.
    pub fn load(path: impl AsRef<Path>) -> Result<ScriptedModel> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| ModelError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| ModelError::Script {
            file: path.display().to_string(),
            line: 0,
            message: format!("the file is not UTF-8 ({e})"),
        })?;
        let mut model = ScriptedModel::from_str_named(&text, path)?;
        model.identity.sha256 = Some(hex::encode(Sha256::digest(text.as_bytes())));
        Ok(model)
    }

    /// Builds a scripted model from JSON Lines text; `name` is used in messages and identity.
    pub fn from_str_named(text: &str, name: &Path) -> Result<ScriptedModel> {
        let file = name.display().to_string();
        let mut replies = Vec::new();
        let mut delay_ms = 0;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            if raw.trim().is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(raw).map_err(|e| ModelError::Script {
                file: file.clone(),
                line,
                message: format!("not valid JSON ({e}); each line must be one JSON value"),
            })?;
            if let Some(d) = delay_directive(&value) {
                delay_ms = d.ok_or_else(|| ModelError::Script {
                    file: file.clone(),
                    line,
                    message: "$delay_ms must be a whole number of milliseconds up to 600000".into(),
                })?;
                continue;
            }
            let text = match &value {
                Value::String(s) => s.clone(),
                _ => compact_json(raw),
            };
            replies.push(Reply {
                line,
                value,
                text,
                delay_ms,
            });
        }
        Ok(ScriptedModel {
            identity: ModelIdentity {
                spec: format!("scripted:{file}"),
                name: name
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| file.clone()),
                architecture: "scripted".into(),
                sha256: None,
                context_tokens: 0,
                ..ModelIdentity::default()
            },
            file: name.to_path_buf(),
            replies,
            next: 0,
        })
    }

    /// Replies not yet used.
    pub fn remaining(&self) -> usize {
        self.replies.len() - self.next
    }

    /// Replies used so far.
    pub fn used(&self) -> usize {
        self.next
    }

    fn take(&mut self) -> Result<Reply> {
        let reply =
            self.replies
                .get(self.next)
                .cloned()
                .ok_or_else(|| ModelError::ScriptExhausted {
                    file: self.file.display().to_string(),
                    used: self.next,
                })?;
        self.next += 1;
        Ok(reply)
    }

    fn script_err(&self, line: usize, message: String) -> ModelError {
        ModelError::Script {
            file: self.file.display().to_string(),
            line,
            message,
        }
    }
}

/// Removes the whitespace outside strings from valid JSON text, keeping everything else
/// (including key order) as written.
fn compact_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in json.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

/// `Some` when `value` is a `{"$delay_ms": N}` line: `Some(Some(N))` when N is valid.
fn delay_directive(value: &Value) -> Option<Option<u64>> {
    let map = value.as_object()?;
    if map.len() != 1 {
        return None;
    }
    let n = map.get("$delay_ms")?;
    Some(n.as_u64().filter(|n| *n <= 600_000))
}

/// Splits text into up to `n` pieces on character boundaries.
fn pieces(text: &str, n: usize) -> Vec<&str> {
    let chars = text.chars().count();
    if chars == 0 {
        return Vec::new();
    }
    let per = chars.div_ceil(n.max(1));
    let mut out = Vec::new();
    let mut start = 0;
    let mut count = 0;
    for (i, _) in text.char_indices() {
        if count == per {
            out.push(&text[start..i]);
            start = i;
            count = 0;
        }
        count += 1;
    }
    out.push(&text[start..]);
    out
}

impl Model for ScriptedModel {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    /// The next reply, cut at the first stop string (finish `StopString`); `max_tokens` is not
    /// applied (replies have no tokens), so the finish is otherwise `Stop`.
    fn complete(
        &mut self,
        request: &CompletionRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion> {
        let started = Instant::now();
        let reply = self.take()?;
        if reply.delay_ms > 0 {
            std::thread::sleep(std::time::Duration::from_millis(reply.delay_ms));
        }
        let mut text = reply.text.clone();
        let mut finish = FinishReason::Stop;
        let cut = request
            .stop
            .iter()
            .filter(|s| !s.is_empty())
            .filter_map(|s| text.find(s.as_str()))
            .min();
        if let Some(at) = cut {
            text.truncate(at);
            finish = FinishReason::StopString;
        }
        for piece in pieces(&text, STREAM_PIECES) {
            on_text(piece);
        }
        Ok(Completion {
            text,
            finish,
            prompt_tokens: 0,
            cached_tokens: 0,
            completion_tokens: 0,
            prompt_ms: 0.0,
            generation_ms: started.elapsed().as_secs_f64() * 1000.0,
        })
    }

    /// The next line must be an object mapping labels to non-negative numbers; labels it leaves
    /// out get 0, a label the request does not have is an error, and the result is normalised.
    fn choose(&mut self, request: &ChooseRequest) -> Result<ChooseReply> {
        let started = Instant::now();
        if request.labels.is_empty() {
            return Err(ModelError::BadRequest(
                "choose needs at least one label".into(),
            ));
        }
        let reply = self.take()?;
        let Value::Object(map) = &reply.value else {
            return Err(self.script_err(
                reply.line,
                format!(
                    "choose expects an object mapping labels to probabilities, e.g. {{\"{}\": 0.9}}, got {}",
                    request.labels[0],
                    reply.text
                ),
            ));
        };
        let mut weights = vec![0.0f64; request.labels.len()];
        for (label, v) in map {
            let Some(i) = request.labels.iter().position(|l| l == label) else {
                return Err(self.script_err(
                    reply.line,
                    format!(
                        "label {label:?} is not one of the request's labels ({})",
                        request.labels.join(", ")
                    ),
                ));
            };
            match v.as_f64() {
                Some(p) if p.is_finite() && p >= 0.0 => weights[i] += p,
                _ => {
                    return Err(self.script_err(
                        reply.line,
                        format!(
                            "the probability of {label:?} must be a non-negative number, got {v}"
                        ),
                    ))
                }
            }
        }
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return Err(self.script_err(reply.line, "the probabilities add up to 0".into()));
        }
        Ok(ChooseReply {
            probabilities: request
                .labels
                .iter()
                .zip(weights)
                .map(|(label, w)| LabelProbability {
                    label: label.clone(),
                    probability: w / total,
                })
                .collect(),
            source: DecisionSource::Scripted,
            label_mass: None,
            prompt_tokens: 0,
            cached_tokens: 0,
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            prompt_ms: None,
            scored_spellings: None,
            cpu_ms: None,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn compact_json_keeps_order_and_strings() {
        assert_eq!(
            compact_json(r#" { "b" : 1, "a": "x  y \" }" , "c": [1, 2] } "#),
            r#"{"b":1,"a":"x  y \" }","c":[1,2]}"#
        );
    }

    #[test]
    fn a_delay_line_is_not_a_reply_and_slows_the_later_ones() {
        let text = "\"a\"\n{\"$delay_ms\": 50}\n\"b\"\n{\"$delay_ms\": 2, \"x\": 1}\n";
        let mut m = ScriptedModel::from_str_named(text, Path::new("t.jsonl")).unwrap();
        // The object with two keys is an ordinary reply.
        assert_eq!(m.remaining(), 3);
        let req = CompletionRequest::new(
            rein_protocol::model::Prompt::raw("hi"),
            8,
            rein_protocol::model::SamplingProfile::JUDGE,
        );
        let t = Instant::now();
        assert_eq!(m.complete(&req, &mut |_| {}).unwrap().text, "a");
        assert!(t.elapsed().as_millis() < 50);
        let t = Instant::now();
        assert_eq!(m.complete(&req, &mut |_| {}).unwrap().text, "b");
        assert!(t.elapsed().as_millis() >= 50);
        let bad = ScriptedModel::from_str_named("{\"$delay_ms\": -1}\n", Path::new("t.jsonl"));
        assert!(bad.unwrap_err().to_string().contains("$delay_ms"));
    }

    #[test]
    fn pieces_cover_the_text_on_char_boundaries() {
        assert_eq!(pieces("", 3), Vec::<&str>::new());
        assert_eq!(pieces("ab", 3), vec!["a", "b"]);
        assert_eq!(pieces("héllo wörld", 3).concat(), "héllo wörld");
        assert_eq!(pieces("abcdefg", 3), vec!["abc", "def", "g"]);
    }
}
