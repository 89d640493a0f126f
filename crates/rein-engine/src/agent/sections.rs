//! The `write-sections` lever: for a Markdown deliverable whose contract requires headings (a
//! `report_complete` check with `headings`), a `write_sections` tool whose parameters are the
//! deliverable's `path` and one text field per required heading, in the contract's order, all
//! required, so constrained decoding writes every section. Rein writes the heading lines itself
//! (the level the mission's prompt gives each one, `'## Goal'`, else level 2), and the model's
//! text under each; the call goes through the same gate, diff and approval as any change.
//!
//! A body cannot make a heading: a line starting with `#` is written as text (`\#`), and the
//! composed file is read with the judge's own Markdown reader before the gate: unless its
//! headings are exactly the required ones (plus the title, when the prompt asks for one), in
//! order, the call is refused and nothing is written. The checks are the contract's,
//! unchanged.

use std::sync::LazyLock;

use regex::Regex;
use rein_workspace::desk::{render_sections, Section, HEADING_MAX_CHARS};
use serde_json::{json, Map, Value};

use super::line_fields::LineField;
use super::prompt::signature;
use crate::checks::{heading_key, is_markdown, markdown_headings, same_path, CheckSpec};
use crate::mission::FrozenContract;

/// The tool the `write-sections` lever adds for a Markdown deliverable with required headings.
pub const WRITE_SECTIONS: &str = "write_sections";
/// The field of the title, offered when the prompt asks for a level-1 title that is not one of
/// the required headings (`'# Release <version>'`): its text is the model's to write.
pub const TITLE_FIELD: &str = "title";
/// The level of a required heading that the prompt does not write with its `#`s.
pub const DEFAULT_HEADING_LEVEL: u8 = 2;

/// A heading as a prompt quotes it: `'## Goal'`, `"# Project summary"`, `` `## Risks` ``.
static QUOTED_HEADING: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"['"`‘“](#{1,6})[ \t]+([^'"`’”\n]+?)[ \t]*['"`’”]"#).ok());

/// The outline `write_sections` writes for a mission's deliverable.
#[derive(Debug, Clone, PartialEq)]
pub struct Outline {
    /// The deliverable, as the contract names it.
    pub path: String,
    /// A level-1 title comes first, its text the model's.
    pub title: bool,
    /// The required headings, in the contract's order, with the level Rein writes each at.
    pub headings: Vec<(u8, String)>,
    /// The number lines the model gives as fields of their own (lever `line-fields`; empty
    /// without it), in the contract's order.
    pub lines: Vec<LineField>,
    /// The figure checks a composed file must state readably (lever `readable-figures`; empty
    /// without it, see [`super::readable_figures`]).
    pub figure_checks: Vec<CheckSpec>,
}

impl Outline {
    /// The outline of a contract whose Markdown deliverable must have headings, or `None`
    /// (no such check; or headings that cannot be fields: empty, not one line, starting with
    /// `#`, repeated, or named `path` or `title`).
    pub fn of(contract: &FrozenContract) -> Option<Outline> {
        let m = &contract.mission;
        if !is_markdown(&m.required_artifact) {
            return None;
        }
        let (path, required) = m.checks.iter().find_map(|c| match &c.spec {
            CheckSpec::ReportComplete { path, headings, .. }
                if !headings.is_empty() && same_path(path, &m.required_artifact) =>
            {
                Some((path.clone(), headings.clone()))
            }
            _ => None,
        })?;
        let quoted = quoted_headings(&m.prompt);
        let mut headings: Vec<(u8, String)> = Vec::new();
        for h in &required {
            let text = h.trim();
            let key = heading_key(text);
            let usable = !key.is_empty()
                && !text.starts_with('#')
                && !text.contains(['\n', '\r'])
                && text.chars().count() <= HEADING_MAX_CHARS
                && text != "path"
                && text != TITLE_FIELD
                && !headings.iter().any(|(_, o)| heading_key(o) == key);
            if !usable {
                return None;
            }
            let level = quoted
                .iter()
                .find(|(_, k)| *k == key)
                .map_or(DEFAULT_HEADING_LEVEL, |(l, _)| *l);
            headings.push((level, text.to_string()));
        }
        let title = !headings.iter().any(|(l, _)| *l == 1)
            && quoted
                .iter()
                .any(|(l, k)| *l == 1 && !headings.iter().any(|(_, h)| heading_key(h) == *k));
        Some(Outline {
            path,
            title,
            headings,
            lines: Vec::new(),
            figure_checks: Vec::new(),
        })
    }

    /// The field names, in order: the title's (when offered), then one per heading.
    fn fields(&self) -> Vec<&str> {
        let title = self.title.then_some(TITLE_FIELD);
        title
            .into_iter()
            .chain(self.headings.iter().map(|(_, h)| h.as_str()))
            .collect()
    }

    /// `write_sections`'s parameters for constrained decoding: `path` fixed to the deliverable,
    /// then a non-empty text per field, in order, all required, nothing else.
    pub fn parameters_schema(&self) -> Value {
        let mut props = Map::new();
        props.insert(
            "path".into(),
            json!({ "type": "string", "const": self.path }),
        );
        if self.title {
            props.insert(
                TITLE_FIELD.into(),
                json!({ "type": "string", "minLength": 1, "maxLength": HEADING_MAX_CHARS }),
            );
        }
        let mut required = vec!["path"];
        if self.title {
            required.push(TITLE_FIELD);
        }
        for (_, h) in &self.headings {
            props.insert(
                h.clone(),
                json!({ "type": "string", "minLength": 1, "maxLength": rein_workspace::MAX_INPUT_CHARS }),
            );
            required.push(h);
            for f in self.lines_under(h) {
                props.insert(f.label.clone(), LineField::schema());
                required.push(&f.label);
            }
        }
        json!({
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": false,
        })
    }

    /// Types `write_sections`'s parameters in an action schema.
    pub fn type_action_schema(&self, action_schema: &mut Value) {
        let Some(branches) = action_schema["anyOf"].as_array_mut() else {
            return;
        };
        for branch in branches {
            if branch["properties"]["action"]["const"].as_str() == Some(WRITE_SECTIONS) {
                branch["properties"]["parameters"] = self.parameters_schema();
            }
        }
    }

    /// The headings as Rein writes them: `'# Project summary', '## Goal'`.
    fn heading_lines(&self) -> String {
        let title = self.title.then(|| "'# <title>'".to_string());
        title
            .into_iter()
            .chain(
                self.headings
                    .iter()
                    .map(|(l, h)| format!("'{} {h}'", "#".repeat(usize::from(*l)))),
            )
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The tool's line in the system prompt (in place of the registry's generic one).
    pub fn tool_line(&self) -> String {
        format!(
            "- {WRITE_SECTIONS} {}: Propose writing {} from the text under each heading, one field per heading: Rein writes the headings {} itself, in that order, and your text under each.{} A person approves the change.\n",
            signature(&self.parameters_schema()),
            self.path,
            self.heading_lines(),
            self.line_fields_note()
        )
    }

    /// What the contract's checks require of each section, in plain words (the renderer the
    /// `requirements` lever uses, so no expected value): one line per check scoped to one of
    /// the outline's headings, prefixed with that heading. A small model filling one field at
    /// a time reads them where it writes (the 1.5B put a right `Total hours: 64` under Risks).
    pub fn section_requirements(
        &self,
        contract: &FrozenContract,
        render: impl Fn(&CheckSpec) -> String,
    ) -> String {
        let mut s = String::new();
        for (_, heading) in &self.headings {
            let key = heading_key(heading);
            for check in &contract.mission.checks {
                if section_in(&check.spec, &self.path).is_some_and(|sec| heading_key(sec) == key) {
                    s.push_str(&format!("- `{heading}`: {}\n", render(&check.spec)));
                }
            }
        }
        if s.is_empty() {
            return s;
        }
        format!("What the text under each heading must do (each field is checked as its own section):\n{s}")
    }

    /// Whether [`Self::section_requirements`] lists `spec` under one of the headings.
    pub fn lists_under_heading(&self, spec: &CheckSpec) -> bool {
        section_in(spec, &self.path).is_some_and(|sec| {
            let key = heading_key(sec);
            self.headings.iter().any(|(_, h)| heading_key(h) == key)
        })
    }

    /// What the task message adds; `fixer` is the tool that later fixes the report.
    pub fn task_note(&self, fixer: &str) -> String {
        let title = if self.title {
            " and `title` is the report's title as the task asks for it"
        } else {
            ""
        };
        format!(
            "Write {} with {WRITE_SECTIONS}: each field is the text under the heading of its name{title}; Rein writes the headings {} itself, in order, so no line of your text starts with '#'.{} To fix the report later, use {fixer}.\n",
            self.path,
            self.heading_lines(),
            self.line_fields_note()
        )
    }

    /// The gate's arguments of a model's `write_sections` call (`path`, optional `title`,
    /// `sections` of `{heading, level, body}`) and a note for the model when a body line was
    /// written as text; or why it is refused before the gate, nothing written: another path, a
    /// field missing, empty, not text or unknown, or a composed file whose headings, read as
    /// the judge reads them, are not exactly the outline's.
    pub fn gate_arguments(&self, params: &Value) -> Result<(Value, Option<String>), String> {
        self.compose(params).map(|(args, note, _)| (args, note))
    }

    /// `params`' `path` when it names the deliverable, else why `tool` refuses it.
    pub(super) fn own_path<'p>(&self, tool: &str, params: &'p Value) -> Result<&'p str, String> {
        let given = params
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if same_path(given, &self.path) {
            Ok(given)
        } else {
            Err(format!(
                "{tool} writes only the deliverable \"{}\", not \"{given}\"; nothing was written",
                self.path
            ))
        }
    }

    /// [`Outline::gate_arguments`] with the file they compose, as it will be written: the line
    /// fields' lines written into their sections (see [`Outline::with_lines_written`]), then
    /// [`Outline::compose_sections`].
    pub(super) fn compose(
        &self,
        params: &Value,
    ) -> Result<(Value, Option<String>, String), String> {
        self.own_path(WRITE_SECTIONS, params)?;
        let (params, lines_note, lines) = self.with_lines_written(params)?;
        let (args, note, text) = self.compose_sections(&params, None)?;
        if let Some(why) = self.lines_misread(&text, &lines) {
            return Err(why);
        }
        let note = match (note, lines_note) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        };
        Ok((args, note, text))
    }

    /// The gate's arguments of `write_sections` parameters holding one text per field (no line
    /// field), the note on escaped lines, and the file they compose.
    ///
    /// `before` is the file as it is, for a `rewrite_section` call: a figure line it already
    /// states unreadably, outside the section being rewritten, does not refuse the call (lever
    /// `readable-figures`), so one section at a time can be mended.
    pub(super) fn compose_sections(
        &self,
        params: &Value,
        before: Option<&str>,
    ) -> Result<(Value, Option<String>, String), String> {
        let given = self.own_path(WRITE_SECTIONS, params)?;
        let fields = self.fields();
        let text = |f: &str| params.get(f).and_then(Value::as_str);
        let quote = |v: Vec<&str>| {
            v.iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut problems = Vec::new();
        let missing: Vec<&str> = fields
            .iter()
            .copied()
            .filter(|f| params.get(f).is_none())
            .collect();
        let not_text: Vec<&str> = fields
            .iter()
            .copied()
            .filter(|f| params.get(f).is_some() && text(f).is_none())
            .collect();
        let empty: Vec<&str> = fields
            .iter()
            .copied()
            .filter(|f| text(f).is_some_and(|t| t.trim().is_empty()))
            .collect();
        let unknown: Vec<&str> = params
            .as_object()
            .map(|o| {
                o.keys()
                    .map(String::as_str)
                    .filter(|k| *k != "path" && !fields.contains(k))
                    .collect()
            })
            .unwrap_or_default();
        if !missing.is_empty() {
            problems.push(format!("missing {}", quote(missing)));
        }
        if !not_text.is_empty() {
            problems.push(format!("not text: {}", quote(not_text)));
        }
        if !empty.is_empty() {
            problems.push(format!("empty {}", quote(empty)));
        }
        if !unknown.is_empty() {
            problems.push(format!("unknown fields {}", quote(unknown)));
        }
        let repeated = repeated_bodies(&fields, params);
        if !repeated.is_empty() {
            problems.push(format!(
                "the same text under {}: write what belongs under each heading, not one text copied into several",
                quote(repeated)
            ));
        }
        if !problems.is_empty() {
            let mut all = vec!["path"];
            all.extend(&fields);
            return Err(format!(
                "{WRITE_SECTIONS} needs the text under every required heading, each as its own field ({}), so nothing was written: {}",
                quote(all),
                problems.join("; ")
            ));
        }
        let title = if self.title { text(TITLE_FIELD) } else { None };
        if let Some(t) = title {
            let key = heading_key(t);
            if let Some((_, h)) = self.headings.iter().find(|(_, h)| heading_key(h) == key) {
                return Err(format!(
                    "the title repeats the required heading `{h}`; give the report its own title. Nothing was written"
                ));
            }
        }
        let sections: Vec<Section> = self
            .headings
            .iter()
            .map(|(level, h)| Section {
                level: *level,
                heading: h.clone(),
                body: text(h).unwrap_or_default().to_string(),
            })
            .collect();
        let rendered =
            render_sections(title, &sections).map_err(|e| format!("{e}; nothing was written"))?;
        let found = markdown_headings(&self.path, &rendered.text)
            .map_err(|e| format!("{e}; nothing was written"))?;
        let expected: Vec<(u8, String)> = title
            .map(|t| (1, heading_key(t)))
            .into_iter()
            .chain(self.headings.iter().map(|(l, h)| (*l, heading_key(h))))
            .collect();
        if found != expected {
            let show = |hs: &[(u8, String)]| {
                hs.iter()
                    .map(|(l, h)| format!("`{} {h}`", "#".repeat(usize::from(*l))))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let bodies: Vec<&str> = self.headings.iter().filter_map(|(_, h)| text(h)).collect();
            let tags = unclosed_tags(&bodies);
            if !tags.is_empty() {
                return Err(format!(
                    "the file would have the headings {} instead of exactly {}: {} reads as an HTML tag that is never closed, which hides the rest of the file. Write the word without angle brackets (a placeholder such as `<Category>` stands for the name itself); nothing was written",
                    show(&found),
                    show(&expected),
                    tags.join(", ")
                ));
            }
            return Err(format!(
                "the file would have the headings {} instead of exactly {}: a text made a heading of its own (a line of only `=` or `-` right under a line of text) or hid the next one (an unclosed code fence or HTML comment). Change that text; nothing was written",
                show(&found),
                show(&expected)
            ));
        }
        let note = (!rendered.escaped.is_empty()).then(|| {
            let lines: Vec<String> = rendered
                .escaped
                .iter()
                .map(|(h, n)| format!("{n} in `{h}`"))
                .collect();
            format!(
                "lines of your text that started with '#' ({}) were written as text (`\\#`), not as headings: Rein writes the headings",
                lines.join(", ")
            )
        });
        let mut args = json!({
            "path": given,
            "sections": sections
                .iter()
                .map(|s| json!({"heading": s.heading, "level": s.level, "body": s.body}))
                .collect::<Vec<_>>(),
        });
        if let Some(t) = title {
            args[TITLE_FIELD] = json!(t);
        }
        if let Some(why) = self.figures_unread(&rendered.text, before) {
            return Err(why);
        }
        Ok((args, note, rendered.text))
    }
}

/// The headings a prompt quotes with their `#`s, as (level, key), in order.
/// Shortest body (in characters, spaces collapsed) that counts as copied when another field
/// holds the same text: two sections that both say "None." are not a copy.
const COPIED_BODY_MIN_CHARS: usize = 20;

/// An opening HTML tag as Markdown reads one inline (`<sync>`, `<span class="x">`).
static OPEN_TAG: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"<([A-Za-z][A-Za-z0-9-]*)(?:\s[^<>]*)?>"#).ok());

/// HTML elements that have no content, so never hide any.
const VOID_TAGS: [&str; 13] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

/// The opening tags of `bodies` (quoted, each once) that no `</name>` after them closes: the
/// 1.5B filled the task's `'<Category> tickets: N'` as `<sync> tickets: 15`, which the judge
/// reads as an element hiding everything after it, the next heading included.
fn unclosed_tags(bodies: &[&str]) -> Vec<String> {
    let Some(re) = OPEN_TAG.as_ref() else {
        return Vec::new();
    };
    let mut tags: Vec<String> = Vec::new();
    for body in bodies {
        let lower = body.to_ascii_lowercase();
        for m in re.captures_iter(body) {
            let (Some(whole), Some(name)) = (m.get(0), m.get(1)) else {
                continue;
            };
            let closing = format!("</{}", name.as_str().to_ascii_lowercase());
            let quoted = format!("`{}`", whole.as_str());
            if whole.as_str().ends_with("/>")
                || VOID_TAGS.contains(&name.as_str().to_ascii_lowercase().as_str())
                || lower[whole.end()..].contains(&closing)
                || tags.contains(&quoted)
            {
                continue;
            }
            tags.push(quoted);
        }
    }
    tags
}

/// The fields whose text, spaces collapsed, is the same as another field's (the 1.5B put the
/// whole overview under every heading).
fn repeated_bodies<'f>(fields: &[&'f str], params: &Value) -> Vec<&'f str> {
    let normal = |f: &str| {
        params
            .get(f)
            .and_then(Value::as_str)
            .map(|t| {
                t.split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_lowercase()
            })
            .filter(|t| t.chars().count() >= COPIED_BODY_MIN_CHARS)
    };
    fields
        .iter()
        .copied()
        .filter(|f| {
            let Some(mine) = normal(f) else {
                return false;
            };
            fields
                .iter()
                .any(|other| other != f && normal(other).as_deref() == Some(mine.as_str()))
        })
        .collect()
}

/// The section of `deliverable` a check is scoped to, for the kinds that can be; `None` for a
/// check of another file (its section is not one of this outline's, whatever its name), and
/// for a `decision` check without a path (the judge then reads no section).
fn section_in<'s>(spec: &'s CheckSpec, deliverable: &str) -> Option<&'s str> {
    let (path, section) = match spec {
        CheckSpec::ContentMatches { path, section, .. }
        | CheckSpec::ContentAbsent { path, section, .. }
        | CheckSpec::NumericConsistency { path, section, .. }
        | CheckSpec::Statement { path, section, .. }
        | CheckSpec::MentionsAll { path, section, .. } => (Some(path.as_str()), section),
        CheckSpec::Decision { path, section, .. } => (path.as_deref(), section),
        _ => return None,
    };
    path.filter(|p| same_path(p, deliverable))
        .and(section.as_deref())
}

fn quoted_headings(prompt: &str) -> Vec<(u8, String)> {
    let Some(re) = QUOTED_HEADING.as_ref() else {
        return Vec::new();
    };
    re.captures_iter(prompt)
        .map(|c| {
            let level = u8::try_from(c[1].len()).unwrap_or(DEFAULT_HEADING_LEVEL);
            (level, heading_key(&c[2]))
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    #[test]
    fn an_unclosed_tag_is_named_and_a_closed_or_empty_one_is_not() {
        assert_eq!(
            super::unclosed_tags(&["Tickets: 40\n<sync> tickets: 15", "and <sync> again"]),
            vec!["`<sync>`".to_string()]
        );
        assert_eq!(
            super::unclosed_tags(&["<b>bold</B> a<br>b <img src=x> <x/> 2 < 3 > 1"]),
            Vec::<String>::new()
        );
        assert_eq!(
            super::unclosed_tags(&["<span class=\"a\">x"]),
            vec!["`<span class=\"a\">`".to_string()]
        );
    }

    use super::*;

    #[test]
    fn quoted_headings_give_levels() {
        let p = "exactly these headings: '# Project summary', '## Goal', \"### Deep\" and `## Risks`; the title '# Release <version>'.";
        assert_eq!(
            quoted_headings(p),
            vec![
                (1, "project summary".to_string()),
                (2, "goal".to_string()),
                (3, "deep".to_string()),
                (2, "risks".to_string()),
                (1, "release <version>".to_string()),
            ]
        );
        assert!(quoted_headings("a '#1 priority', '#Goal' and #64").is_empty());
    }
}
