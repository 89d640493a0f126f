//! Patterns on the text fields of a Markdown deliverable's writers, held by constrained decoding
//! (JSON Schema `pattern`, which llguidance searches unless it is anchored):
//!
//! - lever `stated-lines`: a section whose numeric check reads a line the task quotes must hold
//!   that line (see [`super::stated`]);
//! - lever `plain-bodies`: no line of a `write_sections` field or of `rewrite_section`'s `text`
//!   starts, after blanks, with `#` or `\#`. Rein writes the headings; a body's `#` line would
//!   only be written as text (`\#`), which a small model then copies back from the file.
//!
//! - lever `line-fields`: a line field holds a plain number (see [`super::line_fields`]).
//!
//! With both, one anchored pattern says both. llguidance can build a `stated-lines` pattern (alone
//! or with `plain-bodies`) only with no `maxLength` (it runs out of fuel checking that the
//! pattern and the cap leave some text), so such a field loses the 32,000-character input cap: the
//! reply cap bounds the text anyway, and the registry still refuses an over-long field before the
//! gate. Under `short-after-cut`'s 250 characters the searched stated pattern builds and the
//! combined one does not: there the field keeps its cap and the stated line only. A plain-body
//! pattern builds under any cap, and keeps it.

use serde_json::Value;

use super::rewrite::REWRITE_SECTION;
use super::sections::{Outline, WRITE_SECTIONS};
use super::stated::StatedLine;

/// One line of body text: blanks, then nothing, or the rest of a line that starts neither with
/// `#` nor with `\` and `#` (nor with a lone `\`). A line ends at a line feed, after an optional
/// carriage return; a lone carriage return is no text at all (`write_sections` would read it as
/// a line break, and a `#` after it as a line start).
const BODY_LINE: &str = r"[ \t]*(?:(?:[^#\\ \t\r\n]|\\[^#\r\n])[^\r\n]*)?";
/// A line break between body lines.
const BREAK: &str = r"\r?\n";

/// The anchored pattern of a body with no heading line; with `stated`, the body must also hold
/// that line (after a line break, as [`StatedLine::pattern`] asks).
pub fn plain_body_pattern(stated: Option<&StatedLine>) -> String {
    let lines = format!("{BODY_LINE}(?:{BREAK}{BODY_LINE})*");
    match stated {
        None => format!("^{lines}$"),
        Some(line) => format!(
            "^{lines}{BREAK}{}: [0-9][^\\r\\n]*(?:{BREAK}{BODY_LINE})*$",
            line.label
        ),
    }
}

/// Holds the text fields of `write_sections` (and, with `plain`, `rewrite_section`'s `text`)
/// in an action schema to their patterns: `lines` are the stated lines in use (empty when
/// that lever is off), `plain` whether the `plain-bodies` lever is on, `short` whether the
/// schema's texts were already held to `short-after-cut`'s cap.
pub fn constrain_bodies(
    action_schema: &mut Value,
    outline: &Outline,
    lines: &[StatedLine],
    plain: bool,
    short: bool,
) {
    let Some(branches) = action_schema["anyOf"].as_array_mut() else {
        return;
    };
    for branch in branches {
        let tool = branch["properties"]["action"]["const"]
            .as_str()
            .map(str::to_string);
        let Some(params) = branch
            .pointer_mut("/properties/parameters/properties")
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        match tool.as_deref() {
            Some(WRITE_SECTIONS) => {
                for f in &outline.lines {
                    hold(params.get_mut(f.label.as_str()), f.pattern(), false);
                }
                for (_, heading) in &outline.headings {
                    let field = params.get_mut(heading.as_str());
                    match (lines.iter().find(|l| &l.heading == heading), plain) {
                        (Some(line), true) if !short => {
                            hold(field, plain_body_pattern(Some(line)), true);
                        }
                        (Some(line), _) => hold(field, line.pattern(), !short),
                        (None, true) => hold(field, plain_body_pattern(None), false),
                        (None, false) => {}
                    }
                }
            }
            Some(REWRITE_SECTION) if plain => {
                hold(params.get_mut("text"), plain_body_pattern(None), false);
            }
            _ => {}
        }
    }
}

/// Holds a string field (untouched when the schema has no such field) to `pattern`, without
/// its `maxLength` when `uncapped`.
fn hold(field: Option<&mut Value>, pattern: String, uncapped: bool) {
    if let Some(field) = field.and_then(Value::as_object_mut) {
        field.insert("pattern".into(), Value::String(pattern));
        if uncapped {
            field.remove("maxLength");
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use regex::Regex;

    fn total() -> StatedLine {
        StatedLine {
            heading: "Tasks".into(),
            label: "Total hours".into(),
        }
    }

    #[test]
    fn a_plain_body_has_no_heading_line_anywhere() {
        let re = Regex::new(&plain_body_pattern(None)).unwrap();
        for ok in [
            "- Renewal API: 16 hours",
            "One line.\n\n  - indented\n1. numbered C# and #hashtag",
            "",
            "text\n   \n|a|b|",
            "\\*not emphasis*\r\n- b",
        ] {
            assert!(re.is_match(ok), "{ok:?}");
        }
        for bad in [
            "### Tasks\n- a",
            "- a\n\n### Risks\n- b",
            "- a\n   ## Risks",
            "\\### Tasks",
            "- a\n\\## Risks",
            "- a\n\t# x",
            "#no space still starts with #",
            "- a\r### Risks",
            "- a\n\\",
        ] {
            assert!(!re.is_match(bad), "{bad:?}");
        }
    }

    /// rein-llama's test builds these very patterns with llguidance.
    #[test]
    fn the_patterns_are_the_ones_llguidance_was_tested_with() {
        const PLAIN: &str = r"^[ \t]*(?:(?:[^#\\ \t\r\n]|\\[^#\r\n])[^\r\n]*)?(?:\r?\n[ \t]*(?:(?:[^#\\ \t\r\n]|\\[^#\r\n])[^\r\n]*)?)*$";
        const TOTAL: &str = r"^[ \t]*(?:(?:[^#\\ \t\r\n]|\\[^#\r\n])[^\r\n]*)?(?:\r?\n[ \t]*(?:(?:[^#\\ \t\r\n]|\\[^#\r\n])[^\r\n]*)?)*\r?\nTotal hours: [0-9][^\r\n]*(?:\r?\n[ \t]*(?:(?:[^#\\ \t\r\n]|\\[^#\r\n])[^\r\n]*)?)*$";
        assert_eq!(plain_body_pattern(None), PLAIN);
        assert_eq!(plain_body_pattern(Some(&total())), TOTAL);
    }

    #[test]
    fn with_a_stated_line_the_body_holds_it_and_no_heading() {
        let re = Regex::new(&plain_body_pattern(Some(&total()))).unwrap();
        assert!(re.is_match("- Renewal API: 16 hours\nTotal hours: 64"));
        assert!(re.is_match("- a\n\nTotal hours: 64 hours.\nMore."));
        assert!(!re.is_match("- a\nTotal hours: N"));
        assert!(!re.is_match("- a keysTotal hours: 6"), "a line of its own");
        assert!(!re.is_match("- a"), "the line is missing");
        assert!(!re.is_match("### Tasks\n- a\nTotal hours: 64"));
        assert!(!re.is_match("- a\nTotal hours: 64\n## Risks\n- b"));
    }

    #[test]
    fn a_cap_is_dropped_only_where_llguidance_needs_it() {
        let outline = Outline {
            path: "out/summary.md".into(),
            title: false,
            headings: vec![(2, "Goal".into()), (2, "Tasks".into())],
            lines: Vec::new(),
            figure_checks: Vec::new(),
        };
        let schema = |cap: u64| {
            let text = serde_json::json!({"type": "string", "minLength": 1, "maxLength": cap});
            serde_json::json!({"anyOf": [
                {"properties": {"action": {"const": WRITE_SECTIONS}, "parameters": {"properties":
                    {"path": {"type": "string", "const": "out/summary.md"}, "Goal": text, "Tasks": text}}}},
                {"properties": {"action": {"const": REWRITE_SECTION}, "parameters": {"properties":
                    {"text": text}}}},
                {"properties": {"action": {"const": "create_file"}, "parameters": {"properties":
                    {"content": text}}}}
            ]})
        };
        let field = |s: &Value, branch: usize, name: &str| {
            s["anyOf"][branch]["properties"]["parameters"]["properties"][name].clone()
        };
        // Two stated lines for one section: the first is held.
        let cost = StatedLine {
            heading: "Tasks".into(),
            label: "Cost".into(),
        };
        let lines = [total(), cost];
        let mut long = schema(32000);
        constrain_bodies(&mut long, &outline, &lines, true, false);
        assert_eq!(
            field(&long, 0, "Tasks")["pattern"],
            plain_body_pattern(Some(&total()))
        );
        assert!(field(&long, 0, "Tasks").get("maxLength").is_none());
        assert_eq!(field(&long, 0, "Goal")["pattern"], plain_body_pattern(None));
        assert_eq!(field(&long, 0, "Goal")["maxLength"], 32000);
        assert_eq!(field(&long, 1, "text")["maxLength"], 32000);
        assert!(field(&long, 0, "path").get("pattern").is_none());
        assert!(field(&long, 2, "content").get("pattern").is_none());

        let mut short = schema(250);
        constrain_bodies(&mut short, &outline, &lines, true, true);
        assert_eq!(field(&short, 0, "Tasks")["pattern"], total().pattern());
        assert_eq!(field(&short, 0, "Tasks")["maxLength"], 250);
        assert_eq!(field(&short, 0, "Goal")["maxLength"], 250);

        // stated-lines alone: the searched pattern, uncapped unless short; no rewrite pattern.
        let mut stated = schema(32000);
        constrain_bodies(&mut stated, &outline, &lines, false, false);
        assert_eq!(field(&stated, 0, "Tasks")["pattern"], total().pattern());
        assert!(field(&stated, 0, "Tasks").get("maxLength").is_none());
        assert!(field(&stated, 0, "Goal").get("pattern").is_none());
        assert!(field(&stated, 1, "text").get("pattern").is_none());
        // A write_sections branch not typed by the outline gains no field.
        let mut untyped = serde_json::json!({"anyOf": [{"properties": {"action": {"const": WRITE_SECTIONS},
            "parameters": {"properties": {"sections": {"type": "array"}}}}}]});
        let before = untyped.clone();
        constrain_bodies(&mut untyped, &outline, &lines, true, false);
        assert_eq!(untyped, before);
    }
}
