//! Model-authored text made visible for a page, with the terminal's own helper
//! (`rein_protocol::display`): every control, bidi and invisible character becomes visible
//! text, so the page shows what the terminal shows. The pages render only these shown strings,
//! and always with `textContent` (never as HTML).

use rein_protocol::display::{escape, show_diff, Mode};
use serde_json::{Map, Value};

/// Fields whose line breaks are part of the text (a diff, a file's content, an answer); every
/// other string is one line and has its newlines and tabs made visible too.
const TEXT_FIELDS: &[&str] = &["diff", "message", "text", "content", "reason", "answer"];

/// A copy of `value` with every string (and every object key, since file names are keys of a
/// sandbox's `files`) escaped. A `diff` is shown through `show_diff`, which also flags each
/// line that was not shown verbatim. Values under `files` are file contents (text).
pub fn shown(value: &Value) -> Value {
    walk(value, Mode::Line, None)
}

fn walk(value: &Value, mode: Mode, key: Option<&str>) -> Value {
    match value {
        Value::String(s) if key == Some("diff") => Value::String(show_diff(s).text),
        Value::String(s) => Value::String(escape(s, mode)),
        Value::Array(items) => Value::Array(items.iter().map(|v| walk(v, mode, key)).collect()),
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                let inner = if key == Some("files") || TEXT_FIELDS.contains(&k.as_str()) {
                    Mode::Text
                } else {
                    Mode::Line
                };
                let child_key = if key == Some("files") {
                    None
                } else {
                    Some(k.as_str())
                };
                out.insert(escape(k, Mode::Line), walk(v, inner, child_key));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bidi_controls_and_newlines_are_made_visible_where_they_could_hide_text() {
        let event = json!({
            "type": "tool_call",
            "summary": "read \u{202e}txt.exe\u{1b}[2J",
            "arguments": {"path": "a\nb"},
            "files": {"evil\u{202e}.txt": "line one\nline\u{200b} two\n"},
            "diff": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\u{202e}\n",
            "seq": 3
        });
        let s = shown(&event);
        assert_eq!(s["summary"], "read \\u{202e}txt.exe\\e[2J");
        assert_eq!(s["arguments"]["path"], "a\\nb");
        assert_eq!(
            s["files"]["evil\\u{202e}.txt"],
            "line one\nline\\u{200b} two\n"
        );
        let diff = s["diff"].as_str().unwrap_or_default();
        assert!(diff.contains("+new\\u{202e}"), "{diff}");
        assert!(
            diff.contains('\u{26a0}'),
            "the hidden line is flagged: {diff}"
        );
        assert_eq!(s["seq"], 3);
        assert!(!s.to_string().contains('\u{202e}'));
    }
}
