//! The actor's reply as prose while it streams. A chat reply is one JSON action (`{"thought":
//! ..., "action": ..., "parameters": {"summary": ...}}`); the cowork page shows the thought and
//! the answer (`summary` of `finish`) as they grow, not the raw JSON. The values are read from
//! the text so far, as far as they go, and escaped whole with the terminal's display helper
//! each time, so an escape is never split across two pieces.

use rein_protocol::display::{escape, Mode};
use serde_json::{json, Value};

/// The reply so far of one model call.
#[derive(Default)]
pub(crate) struct Prose {
    text: String,
}

impl Prose {
    /// A new model call starts (any event other than a token ends the one before).
    pub fn reset(&mut self) {
        self.text.clear();
    }

    /// Adds a piece; returns `{"thought", "answer"}` as shown so far (escaped, `""` until the
    /// field starts).
    pub fn push(&mut self, piece: &str) -> Value {
        self.text.push_str(piece);
        let field = |name| escape(&partial_string(&self.text, name), Mode::Text);
        json!({ "thought": field("thought"), "answer": field("summary") })
    }
}

/// The value of the first `"name": "..."` string in `text`, decoded as far as the text goes
/// (an escape cut off at the end is left out; `\uXXXX` pairs are joined; a lone surrogate
/// becomes U+FFFD).
fn partial_string(text: &str, name: &str) -> String {
    let key = format!("\"{name}\"");
    let Some(at) = text.find(&key) else {
        return String::new();
    };
    let rest = text[at + key.len()..].trim_start();
    let Some(rest) = rest.strip_prefix(':') else {
        return String::new();
    };
    let Some(rest) = rest.trim_start().strip_prefix('"') else {
        return String::new();
    };
    let mut out = String::new();
    let mut chars = rest.chars().peekable();
    let mut high: Option<u32> = None;
    while let Some(c) = chars.next() {
        let decoded = match c {
            '"' => break,
            '\\' => {
                let Some(e) = chars.next() else { break };
                match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'u' => {
                        let hex: String = chars.by_ref().take(4).collect();
                        if hex.len() < 4 {
                            break;
                        }
                        let Ok(code) = u32::from_str_radix(&hex, 16) else {
                            out.push('\u{fffd}');
                            continue;
                        };
                        if (0xD800..0xDC00).contains(&code) {
                            high = Some(code);
                            continue;
                        }
                        let code = match (high.take(), code) {
                            (Some(h), 0xDC00..=0xDFFF) => {
                                0x10000 + ((h - 0xD800) << 10) + (code - 0xDC00)
                            }
                            _ => code,
                        };
                        char::from_u32(code).unwrap_or('\u{fffd}')
                    }
                    other => other,
                }
            }
            other => other,
        };
        if high.take().is_some() {
            out.push('\u{fffd}');
        }
        out.push(decoded);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_grows_as_prose_and_the_json_never_shows() {
        let mut p = Prose::default();
        let reply = r#"{"thought": "I read it", "action": "finish", "parameters": {"summary": "Two lines:\nalpha and \"beta\""}}"#;
        let mut last = Value::Null;
        for piece in reply.as_bytes().chunks(3) {
            last = p.push(std::str::from_utf8(piece).unwrap_or_default());
        }
        assert_eq!(last["thought"], "I read it");
        assert_eq!(last["answer"], "Two lines:\nalpha and \"beta\"");
        p.reset();
        let half = p.push(r#"{"thought": "hal"#);
        assert_eq!(half["thought"], "hal");
        assert_eq!(half["answer"], "");
    }

    #[test]
    fn escapes_cut_between_pieces_and_hostile_characters_are_shown_whole() {
        let mut p = Prose::default();
        let cut =
            p.push(r#"{"thought": "x", "action": "finish", "parameters": {"summary": "a\u20"#);
        assert_eq!(
            cut["answer"], "a",
            "a cut escape is left out until it is whole"
        );
        let whole = p.push(r#"2e<script>\ud83d\ude00"#);
        assert_eq!(whole["answer"], "a\\u{202e}<script>\u{1f600}");
        let mut q = Prose::default();
        let raw = q.push("{\"thought\": \"\u{202e}\u{1b}[2J\", \"summary\": \"\\ud800x\"}");
        assert_eq!(raw["thought"], "\\u{202e}\\e[2J");
        assert_eq!(raw["answer"], "\u{fffd}x");
    }
}
