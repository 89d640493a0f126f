//! `write_sections`: a Markdown file from one body per heading. Rein writes every heading line
//! itself (level and text as given, in the given order) and the model's text under each, so a
//! report has its required outline by construction. A body line that would start a heading
//! (`#` after at most three spaces) is written as text (`\#`): headings are Rein's, never the
//! body's. Creates the file or replaces its content, as one proposal a person approves.

use serde_json::{json, Value};

use super::propose::propose_whole_file;
use super::{object_schema, path_arg, path_schema, text_schema, workspace};
use crate::tool::{Tool, ToolContext, ToolError, ToolOutput};

/// Most sections one `write_sections` call may write.
pub const SECTIONS_MAX: usize = 32;
/// Longest heading or title, in characters.
pub const HEADING_MAX_CHARS: usize = 200;

/// One section as Rein writes it: `level` `#`s, the heading, a blank line, the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub level: u8,
    pub heading: String,
    pub body: String,
}

/// A Markdown document composed from sections, and which bodies had lines that would have
/// started a heading (written as text instead), as `(heading, lines)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub text: String,
    pub escaped: Vec<(String, usize)>,
}

/// The Markdown of a title (a level-1 heading first, when given) and sections, in order, with
/// one final newline. Refused (with what to fix) when a heading or the title is empty, longer
/// than [`HEADING_MAX_CHARS`] or not one line, or a level is not 1 to 6.
pub fn render_sections(title: Option<&str>, sections: &[Section]) -> Result<Rendered, String> {
    let mut parts = Vec::new();
    if let Some(t) = title {
        // The model may write the title with its `#`: Rein writes that itself.
        let t = t.trim().trim_start_matches('#').trim();
        one_line("the title", t)?;
        parts.push(format!("# {t}"));
    }
    let mut escaped = Vec::new();
    for s in sections {
        one_line(&format!("the heading `{}`", s.heading), s.heading.trim())?;
        if s.heading.trim().starts_with('#') {
            return Err(format!(
                "the heading `{}` starts with `#`; give its text only, Rein writes the `#`s",
                s.heading
            ));
        }
        if !(1..=6).contains(&s.level) {
            return Err(format!(
                "the heading `{}` has level {}; a Markdown heading has level 1 to 6",
                s.heading, s.level
            ));
        }
        if let Some(tag) = html_heading(&s.body) {
            return Err(format!(
                "the text under `{}` holds the HTML heading `{tag}`, which shows as a heading of its own; Rein writes the headings, so write that line as text",
                s.heading.trim()
            ));
        }
        let (body, n) = escape_headings(&s.body);
        if n > 0 {
            escaped.push((s.heading.trim().to_string(), n));
        }
        let line = format!("{} {}", "#".repeat(usize::from(s.level)), s.heading.trim());
        parts.push(if body.is_empty() {
            line
        } else {
            format!("{line}\n\n{body}")
        });
    }
    let mut text = parts.join("\n\n");
    text.push('\n');
    Ok(Rendered { text, escaped })
}

fn one_line(what: &str, text: &str) -> Result<(), String> {
    if text.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if text.contains(['\n', '\r']) {
        return Err(format!("{what} is not one line"));
    }
    let n = text.chars().count();
    if n > HEADING_MAX_CHARS {
        return Err(format!(
            "{what} is {n} characters; a heading may be at most {HEADING_MAX_CHARS}"
        ));
    }
    Ok(())
}

/// The first HTML heading tag in a text (`<h2>`, `<H1 class=x>`), if any.
fn html_heading(text: &str) -> Option<String> {
    let b = text.as_bytes();
    (0..b.len().saturating_sub(2)).find_map(|i| {
        let tag = b[i] == b'<'
            && b[i + 1].eq_ignore_ascii_case(&b'h')
            && (b'1'..=b'6').contains(&b[i + 2])
            && b.get(i + 3)
                .is_none_or(|c| c.is_ascii_whitespace() || *c == b'>' || *c == b'/');
        tag.then(|| String::from_utf8_lossy(&b[i..(i + 4).min(b.len())]).into_owned())
    })
}

/// A body as written: line endings as `\n`, no blank lines before or trailing space after it,
/// and every line that starts with `#` after at most three spaces (an ATX heading, or one
/// written without the space) escaped as `\#`, so it shows as text. Returns the count escaped.
fn escape_headings(body: &str) -> (String, usize) {
    let body = body.replace("\r\n", "\n").replace('\r', "\n");
    let mut n = 0;
    let lines: Vec<String> = body
        .trim_end()
        .split('\n')
        .skip_while(|l| l.trim().is_empty())
        .map(|line| {
            let indent = line.len() - line.trim_start_matches(' ').len();
            if indent <= 3 && line[indent..].starts_with('#') {
                n += 1;
                format!("{}\\{}", &line[..indent], &line[indent..])
            } else {
                line.to_string()
            }
        })
        .collect();
    (lines.join("\n"), n)
}

pub struct WriteSections;

impl Tool for WriteSections {
    fn name(&self) -> &str {
        "write_sections"
    }
    fn description(&self) -> &str {
        "Propose writing a Markdown file from one body per heading: Rein writes each heading line (`#` times level, then the heading) and the body under it, in order, after an optional level-1 title; a body line starting with `#` is written as text. Creates the file or replaces its content. A person approves the change."
    }
    fn schema(&self) -> Value {
        let heading = json!({ "type": "string", "minLength": 1, "maxLength": HEADING_MAX_CHARS });
        object_schema(
            json!({
                "path": path_schema("Markdown file to write, relative to the workspace root"),
                "title": { "type": "string", "minLength": 1, "maxLength": HEADING_MAX_CHARS, "description": "an optional level-1 title written first" },
                "sections": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": SECTIONS_MAX,
                    "items": object_schema(
                        json!({
                            "heading": heading,
                            "level": { "type": "integer", "minimum": 1, "maximum": 6 },
                            "body": text_schema("the text under the heading"),
                        }),
                        &["heading", "level", "body"],
                    ),
                },
            }),
            &["path", "sections"],
        )
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let ws = workspace(ctx, self.name())?;
        let path = path_arg(ws, self.name(), a, None)?;
        let invalid = |message: String| ToolError::InvalidArguments {
            tool: self.name().to_string(),
            message,
        };
        let sections = sections_arg(a).map_err(invalid)?;
        let title = a.get("title").and_then(Value::as_str);
        let rendered = render_sections(title, &sections).map_err(invalid)?;
        propose_whole_file(ws, path, rendered.text, self.name())
    }
}

/// The `sections` argument (already validated against the tool's schema by the registry).
fn sections_arg(a: &Value) -> Result<Vec<Section>, String> {
    let items = a
        .get("sections")
        .and_then(Value::as_array)
        .ok_or("`sections` is required: a list of {heading, level, body}")?;
    items
        .iter()
        .map(|s| {
            let heading = s.get("heading").and_then(Value::as_str);
            let level = s.get("level").and_then(Value::as_u64);
            let body = s.get("body").and_then(Value::as_str);
            match (heading, level, body) {
                (Some(h), Some(l), Some(b)) => Ok(Section {
                    level: u8::try_from(l).unwrap_or(u8::MAX),
                    heading: h.to_string(),
                    body: b.to_string(),
                }),
                _ => Err(
                    "each section needs a string `heading`, an integer `level` and a string `body`"
                        .to_string(),
                ),
            }
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tool::ToolContext;
    use crate::Workspace;

    fn sec(level: u8, heading: &str, body: &str) -> Section {
        Section {
            level,
            heading: heading.into(),
            body: body.into(),
        }
    }

    #[test]
    fn headings_are_written_in_order_with_their_levels() {
        let r = render_sections(
            Some("# Release 2.0"),
            &[
                sec(2, "Goal", "\n\nTo ship.\r\n- one <hr> <h7> <header>\n\n"),
                sec(2, "Risks", ""),
            ],
        )
        .unwrap();
        assert_eq!(
            r.text,
            "# Release 2.0\n\n## Goal\n\nTo ship.\n- one <hr> <h7> <header>\n\n## Risks\n"
        );
        assert!(r.escaped.is_empty());
    }

    #[test]
    fn a_body_line_that_would_start_a_heading_is_written_as_text() {
        let r = render_sections(
            None,
            &[sec(
                2,
                "Tasks",
                "## Tasks\n   ###Risks\n    # code, not a heading\n#1 priority\nok # mid-line",
            )],
        )
        .unwrap();
        assert_eq!(
            r.text,
            "## Tasks\n\n\\## Tasks\n   \\###Risks\n    # code, not a heading\n\\#1 priority\nok # mid-line\n"
        );
        assert_eq!(r.escaped, vec![("Tasks".to_string(), 3)]);
    }

    #[test]
    fn bad_headings_and_titles_are_refused() {
        for (title, s) in [
            (None, sec(2, "", "x")),
            (None, sec(2, "Two\nlines", "x")),
            (None, sec(2, "## Goal", "x")),
            (None, sec(7, "Goal", "x")),
            (None, sec(0, "Goal", "x")),
            (Some("  # "), sec(2, "Goal", "x")),
            (Some("a\nb"), sec(2, "Goal", "x")),
            (None, sec(2, &"x".repeat(HEADING_MAX_CHARS + 1), "x")),
            (None, sec(2, "Goal", "text <h2>Risks</h2>")),
            (None, sec(2, "Goal", "<H3 class=\"x\">Risks</H3>")),
            (None, sec(2, "Goal", "<h1")),
        ] {
            assert!(
                render_sections(title, std::slice::from_ref(&s)).is_err(),
                "{title:?} {s:?}"
            );
        }
    }

    #[test]
    fn the_tool_proposes_the_rendered_file_and_refuses_bad_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let reg = crate::desk_registry();
        let args = json!({"path": "out/r.md", "sections": [{"heading": "Goal", "level": 2, "body": "# Fake\nText."}]});
        let out = reg
            .call(&mut ToolContext::Desk(&ws), "write_sections", &args)
            .unwrap();
        let ToolOutput::Proposal(p) = out else {
            panic!("not a proposal")
        };
        assert_eq!(
            p.after.as_deref(),
            Some(&b"## Goal\n\n\\# Fake\nText.\n"[..])
        );
        assert!(
            !dir.path().join("out/r.md").exists(),
            "a proposal writes nothing"
        );
        for bad in [
            json!({"path": "out/r.md", "sections": []}),
            json!({"path": "out/r.md", "sections": [{"heading": "Goal", "level": 9, "body": "x"}]}),
            json!({"path": "out/r.md", "sections": [{"heading": "Goal", "body": "x"}]}),
            json!({"path": "../r.md", "sections": [{"heading": "Goal", "level": 2, "body": "x"}]}),
        ] {
            assert!(
                reg.call(&mut ToolContext::Desk(&ws), "write_sections", &bad)
                    .is_err(),
                "{bad}"
            );
        }
    }
}
