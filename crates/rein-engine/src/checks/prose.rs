//! What a deliverable says, as the judge reads it: normalised text split into lines, with the
//! headings of a Markdown file known, and comments and code left out.
//!
//! A Markdown file (`.md`, `.markdown`) is parsed with pulldown-cmark: HTML comments and blocks
//! and code blocks are not content (a hidden `<!-- Total hours: 64 -->` states nothing), each
//! block (paragraph, list item, heading, table row) becomes its own line, and emphasis markers
//! are dropped, so `## **Goal**` is the heading `Goal` and `**Total hours:** 64` reads as
//! `Total hours: 64`. Any other file is its normalised text, line by line.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::normalize::normalize;

/// One line of prose; `heading` is the level (1–6) when the line is a heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    pub text: String,
    pub heading: Option<u8>,
}

/// The prose of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prose {
    pub lines: Vec<Line>,
}

/// Whether a path names a Markdown file.
pub(crate) fn is_markdown(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

impl Prose {
    /// The prose of a file's bytes; `include_code` keeps code blocks and comments as text.
    pub fn of(path: &str, bytes: &[u8], include_code: bool) -> Prose {
        let text = normalize(&String::from_utf8_lossy(bytes));
        if is_markdown(path) {
            markdown(&text, include_code)
        } else {
            Prose {
                lines: text
                    .lines()
                    .map(|l| Line {
                        text: l.to_string(),
                        heading: None,
                    })
                    .collect(),
            }
        }
    }

    /// Every line's text joined by newlines.
    pub fn text(&self) -> String {
        join(&self.lines)
    }

    /// The headings, in order, as (level, text).
    pub fn headings(&self) -> Vec<(u8, &str)> {
        self.lines
            .iter()
            .filter_map(|l| l.heading.map(|h| (h, l.text.as_str())))
            .collect()
    }

    /// The lines under the first heading whose key matches `name`, up to the next heading of
    /// the same or a higher level (so a level-1 section holds its subsections). `None` when no
    /// heading matches.
    pub fn section(&self, name: &str) -> Option<&[Line]> {
        let key = heading_key(name);
        let start = self
            .lines
            .iter()
            .position(|l| l.heading.is_some() && heading_key(&l.text) == key)?;
        let level = self.lines[start].heading.unwrap_or(1);
        let end = self.lines[start + 1..]
            .iter()
            .position(|l| l.heading.is_some_and(|h| h <= level))
            .map_or(self.lines.len(), |i| start + 1 + i);
        Some(&self.lines[start + 1..end])
    }

    /// The text a check reads: the whole prose, or one section's body.
    pub fn scope(&self, section: Option<&str>) -> Result<String, String> {
        match section {
            None => Ok(self.text()),
            Some(s) => self
                .section(s)
                .map(join)
                .ok_or_else(|| format!("no heading `{s}`, so no section to read")),
        }
    }
}

/// Lines joined with newlines.
pub(crate) fn join(lines: &[Line]) -> String {
    lines
        .iter()
        .map(|l| l.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Heading comparison that ignores case, leading `#`s, surrounding space, emphasis markers and
/// a trailing colon.
pub(crate) fn heading_key(h: &str) -> String {
    h.trim()
        .trim_start_matches('#')
        .replace(['*', '_', '`'], "")
        .trim()
        .trim_end_matches(':')
        .trim()
        .to_lowercase()
}

fn markdown(text: &str, include_code: bool) -> Prose {
    let mut lines = Vec::new();
    let mut current = String::new();
    let mut heading: Option<u8> = None;
    let mut in_code = false;
    let flush = |current: &mut String, heading: &mut Option<u8>, lines: &mut Vec<Line>| {
        let t = current.trim();
        if !t.is_empty() || heading.is_some() {
            for (i, part) in t.split('\n').enumerate() {
                let part = part.trim();
                if part.is_empty() && heading.is_none() {
                    continue;
                }
                lines.push(Line {
                    text: part.to_string(),
                    heading: if i == 0 { *heading } else { None },
                });
            }
        }
        current.clear();
        *heading = None;
    };
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(text, opts) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                flush(&mut current, &mut heading, &mut lines);
                heading = Some(level_number(level));
            }
            Event::Start(Tag::CodeBlock(_)) => {
                flush(&mut current, &mut heading, &mut lines);
                in_code = true;
            }
            Event::End(TagEnd::CodeBlock) => {
                in_code = false;
                if include_code {
                    flush(&mut current, &mut heading, &mut lines);
                } else {
                    current.clear();
                }
            }
            Event::Start(Tag::Paragraph | Tag::Item | Tag::TableRow | Tag::TableHead)
            | Event::End(
                TagEnd::Heading(_)
                | TagEnd::Paragraph
                | TagEnd::Item
                | TagEnd::TableRow
                | TagEnd::TableHead
                | TagEnd::BlockQuote(_),
            ) => flush(&mut current, &mut heading, &mut lines),
            Event::End(TagEnd::TableCell) => current.push_str(" | "),
            Event::Text(t) | Event::Code(t) if !in_code || include_code => current.push_str(&t),
            Event::Html(t) | Event::InlineHtml(t) if include_code => current.push_str(&t),
            Event::SoftBreak | Event::HardBreak => current.push('\n'),
            _ => {}
        }
    }
    flush(&mut current, &mut heading, &mut lines);
    Prose { lines }
}

fn level_number(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(t: &str) -> Prose {
        Prose::of("a.md", t.as_bytes(), false)
    }

    #[test]
    fn comments_and_code_are_not_content() {
        let p = md("# T\n<!-- Total hours: 64 -->\nTotal hours: 71\n\n```\nTotal hours: 64\n```\n\n    Total hours: 64\n");
        assert_eq!(p.text(), "T\nTotal hours: 71");
        let with_code = Prose::of("a.md", b"```\nx = 1\n```\n", true);
        assert_eq!(with_code.text(), "x = 1");
    }

    #[test]
    fn emphasis_is_dropped_from_headings_and_text() {
        let p = md("## **Goal**\n**Total hours:** *64*\n");
        assert_eq!(p.headings(), vec![(2, "Goal")]);
        assert_eq!(p.section("goal:").map(join).unwrap(), "Total hours: 64");
    }

    #[test]
    fn setext_headings_and_nesting() {
        let p = md("Project\n=======\n\nintro\n\nGoal\n----\n\ngoal text\n\n### Detail\n\nmore\n\n## Tasks\n\n- a\n- b\n");
        assert_eq!(
            p.headings(),
            vec![(1, "Project"), (2, "Goal"), (3, "Detail"), (2, "Tasks")]
        );
        assert_eq!(join(p.section("Goal").unwrap()), "goal text\nDetail\nmore");
        assert_eq!(join(p.section("Tasks").unwrap()), "a\nb");
        // A level-1 section holds everything below it.
        assert!(join(p.section("Project").unwrap()).ends_with("a\nb"));
        assert!(p.section("Risks").is_none());
    }

    #[test]
    fn a_heading_inside_code_is_not_a_heading() {
        let p = md("```\n## Risks\n```\n## Goal\nx\n");
        assert_eq!(p.headings(), vec![(2, "Goal")]);
        assert!(p.section("Risks").is_none());
    }

    #[test]
    fn empty_sections_are_empty() {
        let p = md("# P\n## Goal\n## Tasks\n## Risks\n");
        assert_eq!(p.section("Goal").map(join).unwrap(), "");
        assert_eq!(p.section("Risks").map(join).unwrap(), "");
    }

    #[test]
    fn soft_breaks_keep_lines_and_tables_keep_rows() {
        let p = md("- Release checklist\n  Total hours: 64\n\n| a | b |\n|---|---|\n| 1 | 2 |\n");
        let t = p.text();
        assert!(t.contains("Release checklist\nTotal hours: 64"), "{t}");
        assert!(t.contains("1 | 2 |"), "{t}");
    }

    #[test]
    fn other_files_are_plain_lines() {
        let p = Prose::of("a.txt", "# not a heading\u{200b}\nx".as_bytes(), false);
        assert_eq!(p.headings(), Vec::<(u8, &str)>::new());
        assert_eq!(p.text(), "# not a heading\nx");
    }
}
