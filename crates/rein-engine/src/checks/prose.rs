//! What a deliverable says, as the judge reads it: text as a person reads it (`reading`) split
//! into lines, with the headings of a Markdown file known, and comments and code left out.
//!
//! A Markdown file (`.md`, `.markdown`) is parsed with pulldown-cmark: HTML comments are not
//! content (a hidden `<!-- Total hours: 64 -->` states nothing), code blocks are doubtful (a
//! reader sees them, but they state no fact for the deliverable), each block
//! (paragraph, list item, heading, table row) becomes its own line, and emphasis markers are
//! dropped, so `## **Goal**` is the heading `Goal` and `**Total hours:** 64` reads as
//! `Total hours: 64`. A heading written without the space (`##Goal`) is still a heading.
//!
//! Raw HTML is read for the text it may show. Text inside plain tags that always render
//! (`<p>`, `<div>`, `<b>`, `<li>`…, with no attributes beyond `href`, `title`, `align`…) is
//! prose like any other. Text that may or may not render (inside a tag with `style`, `class`,
//! `hidden` or another attribute, inside an unknown tag or `<script>`, an image's alt text) is
//! *doubtful*: it counts against a deliverable (every total must agree, a denial is a denial)
//! and never for it (it cannot state a fact, name a task or fill a section). Any other file is
//! its read text, line by line.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::normalize::reading;

/// One line of prose; `heading` is the level (1–6) when the line is a heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    pub text: String,
    pub heading: Option<u8>,
    /// Text that may not render (see the module doc): it counts against, never for.
    pub doubtful: bool,
}

/// The prose of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prose {
    pub lines: Vec<Line>,
    /// An element that can hide any text from a person (`<style>`, `<script>`, a stylesheet
    /// link): what shows cannot be told, so the checks that read prose fail closed.
    pub restyled_by: Option<String>,
}

/// Whether a path names a Markdown file.
pub(crate) fn is_markdown(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

impl Prose {
    /// The prose of a file's bytes; `include_code` keeps code blocks, comments and raw HTML as
    /// text.
    pub fn of(path: &str, bytes: &[u8], include_code: bool) -> Prose {
        let text = reading(&String::from_utf8_lossy(bytes));
        if is_markdown(path) {
            markdown(&atx_without_space(&text), include_code)
        } else {
            Prose {
                lines: text
                    .lines()
                    .map(|l| Line {
                        text: l.to_string(),
                        heading: None,
                        doubtful: false,
                    })
                    .collect(),
                restyled_by: None,
            }
        }
    }

    /// The text that certainly renders, lines joined by newlines.
    pub fn text(&self) -> String {
        join(&self.lines)
    }

    /// Every line's text, doubtful ones included.
    pub fn all_text(&self) -> String {
        join_all(&self.lines)
    }

    /// The headings, in order, as (level, text).
    pub fn headings(&self) -> Vec<(u8, &str)> {
        self.lines
            .iter()
            .filter_map(|l| l.heading.map(|h| (h, l.text.as_str())))
            .collect()
    }

    /// The lines under every heading whose key matches `name`, each up to the next heading of
    /// the same or a higher level (so a level-1 section holds its subsections), in order: a
    /// second `## Risks` is as much the Risks section as the first. `None` when no heading
    /// matches.
    pub fn section(&self, name: &str) -> Option<Vec<Line>> {
        let key = heading_key(name);
        let mut out: Option<Vec<Line>> = None;
        let mut from = 0;
        while let Some(i) = self.lines[from..]
            .iter()
            .position(|l| l.heading.is_some() && heading_key(&l.text) == key)
        {
            let start = from + i;
            let level = self.lines[start].heading.unwrap_or(1);
            let end = self.lines[start + 1..]
                .iter()
                .position(|l| l.heading.is_some_and(|h| h <= level))
                .map_or(self.lines.len(), |i| start + 1 + i);
            out.get_or_insert_with(Vec::new)
                .extend_from_slice(&self.lines[start + 1..end]);
            from = end;
        }
        out
    }

    /// The text a check reads for a deliverable: the whole prose, or one section's body, as
    /// it certainly renders.
    pub fn scope(&self, section: Option<&str>) -> Result<String, String> {
        self.scoped(section, join)
    }

    /// The text a check reads against a deliverable: like `scope`, doubtful text included.
    pub fn scope_all(&self, section: Option<&str>) -> Result<String, String> {
        self.scoped(section, join_all)
    }

    fn scoped(&self, section: Option<&str>, f: fn(&[Line]) -> String) -> Result<String, String> {
        match section {
            None => Ok(f(&self.lines)),
            Some(s) => self
                .section(s)
                .map(|l| f(&l))
                .ok_or_else(|| format!("no heading `{s}`, so no section to read")),
        }
    }
}

/// The lines that certainly render, joined with newlines.
pub(crate) fn join(lines: &[Line]) -> String {
    lines
        .iter()
        .filter(|l| !l.doubtful)
        .map(|l| l.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every line, doubtful ones included, joined with newlines.
fn join_all(lines: &[Line]) -> String {
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

/// `##Goal` (no space after the `#`s, which CommonMark reads as a paragraph) as `## Goal`,
/// outside fenced code: small models write headings that way and mean a heading. Only when a
/// letter follows, so `#1` or `#64` stays text; and a single `#` on a line that goes on a
/// paragraph only when it reads as a title (see [`reads_as_a_title`]): `#payments was told,
/// and` at the start of a wrapped line is a channel's name in a sentence, `#Goal` under a line
/// of text is a heading.
fn atx_without_space(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut fence: Option<(char, usize)> = None;
    // Whether the line before ended a paragraph (a blank line, a heading, the file's start).
    let mut after_break = true;
    for line in text.split_inclusive('\n') {
        let was_after_break = after_break;
        after_break = line.trim().is_empty();
        let indent = line.len() - line.trim_start_matches(' ').len();
        let body = &line[indent..];
        let run = |c: char| body.chars().take_while(|x| *x == c).count();
        if indent <= 3 {
            let (ticks, tildes) = (run('`'), run('~'));
            let opened = if ticks >= 3 {
                Some(('`', ticks))
            } else if tildes >= 3 {
                Some(('~', tildes))
            } else {
                None
            };
            match (fence, opened) {
                (None, Some(f)) => fence = Some(f),
                (Some((c, n)), Some((c2, n2))) if c == c2 && n2 >= n => fence = None,
                _ => {}
            }
            let hashes = run('#');
            let rest = &body[hashes..];
            let outside_code = fence.is_none() && opened.is_none();
            if outside_code && (1..=6).contains(&hashes) {
                if rest.trim().is_empty() || rest.starts_with([' ', '\t']) {
                    after_break = true;
                } else if rest.starts_with(char::is_alphabetic)
                    && (hashes >= 2 || was_after_break || reads_as_a_title(rest))
                {
                    after_break = true;
                    out.push_str(&line[..indent + hashes]);
                    out.push(' ');
                    out.push_str(rest);
                    continue;
                }
            }
        }
        out.push_str(line);
    }
    out
}

/// Whether the text after a single `#` reads as a title rather than as words of a sentence: at
/// most four words and no mark that goes inside or at the end of a sentence.
fn reads_as_a_title(rest: &str) -> bool {
    let rest = rest.trim();
    rest.split_whitespace().count() <= 4 && !rest.contains(['.', ',', ';', '!', '?', '(', ')'])
}

/// Tags whose text always renders, when they carry no attribute but the harmless ones.
const SHOWN_TAGS: &[&str] = &[
    "a",
    "abbr",
    "b",
    "blockquote",
    "br",
    "center",
    "cite",
    "code",
    "dd",
    "del",
    "details",
    "div",
    "dl",
    "dt",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "ins",
    "kbd",
    "li",
    "mark",
    "ol",
    "p",
    "pre",
    "q",
    "s",
    "samp",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "tt",
    "u",
    "ul",
    "var",
];

/// Attributes that do not change whether text shows.
const SHOWN_ATTRIBUTES: &[&str] = &[
    "href", "title", "align", "colspan", "rowspan", "id", "name", "lang", "open", "start",
    "target", "rel", "cite", "datetime", "valign", "scope",
];

/// Tags that hold no text and need no end tag.
const VOID_TAGS: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// Tags that end a line of text.
const BLOCK_TAGS: &[&str] = &[
    "blockquote",
    "br",
    "center",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "li",
    "ol",
    "p",
    "pre",
    "summary",
    "table",
    "tbody",
    "tfoot",
    "thead",
    "tr",
    "ul",
];

/// One HTML tag: its lower-case name, whether it closes, and whether its text may not show.
struct HtmlTag {
    name: String,
    end: bool,
    self_closing: bool,
    doubtful: bool,
}

/// Reads `<name attr=...>` or `</name>`; `None` for a comment, a declaration or no tag.
fn html_tag(raw: &str) -> Option<HtmlTag> {
    let inner = raw.strip_prefix('<')?.strip_suffix('>')?;
    let (end, inner) = match inner.strip_prefix('/') {
        Some(rest) => (true, rest),
        None => (false, inner),
    };
    let name_len = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or(inner.len());
    if name_len == 0 || !inner.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let name = inner[..name_len].to_ascii_lowercase();
    let rest = inner[name_len..].trim();
    let self_closing = rest.ends_with('/');
    let attrs = attribute_names(rest.trim_end_matches('/'));
    let doubtful = !SHOWN_TAGS.contains(&name.as_str())
        || attrs
            .iter()
            .any(|a| !SHOWN_ATTRIBUTES.contains(&a.as_str()));
    Some(HtmlTag {
        name,
        end,
        self_closing,
        doubtful,
    })
}

/// The lower-case names of a tag's attributes (`a="x" b c='y'` → a, b, c).
fn attribute_names(mut s: &str) -> Vec<String> {
    let mut names = Vec::new();
    loop {
        s = s.trim_start();
        if s.is_empty() {
            return names;
        }
        let n = s
            .find(|c: char| c.is_whitespace() || c == '=')
            .unwrap_or(s.len());
        if n > 0 {
            names.push(s[..n].to_ascii_lowercase());
        }
        s = s[n..].trim_start();
        if let Some(v) = s.strip_prefix('=') {
            let v = v.trim_start();
            s = match v.chars().next() {
                Some(q @ ('"' | '\'')) => v[1..].find(q).map_or("", |i| &v[i + 2..]),
                _ => v.find(char::is_whitespace).map_or("", |i| &v[i..]),
            };
        } else if n == 0 {
            // A stray character: skip it.
            let c = s.chars().next().map_or(0, char::len_utf8);
            s = &s[c..];
        }
    }
}

/// The character references of raw HTML text: numeric ones (`&#111;`, `&#x6F;`) and the
/// common named ones, so `T&#111;tal` reads as `Total`. The result is read again (`reading`).
fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let decoded = rest.find(';').filter(|end| *end <= 12).and_then(|end| {
            let name = &rest[1..end];
            let c = match name {
                "nbsp" => Some(' '),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "amp" => Some('&'),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .map(|h| u32::from_str_radix(h, 16))
                    .or_else(|| name.strip_prefix('#').map(str::parse::<u32>))
                    .and_then(Result::ok)
                    .and_then(char::from_u32),
            };
            c.map(|c| (c, end))
        });
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    reading(&out)
}

/// Builds the lines of a Markdown document.
#[derive(Default)]
struct Builder {
    lines: Vec<Line>,
    current: String,
    doubt: String,
    heading: Option<u8>,
    /// Open HTML elements (name, text inside may not show), across blocks: a `<div hidden>`
    /// block hides the Markdown after it up to its `</div>`.
    open: Vec<(String, bool)>,
    /// Depth inside image alt text.
    in_image: usize,
    /// Inside an HTML comment that has not ended yet.
    in_comment: bool,
    /// The raw HTML of the block being read.
    block_html: Option<String>,
    /// The first `<style>`, `<script>` or `<link>` element.
    restyled_by: Option<String>,
}

impl Builder {
    fn doubtful(&self) -> bool {
        self.in_image > 0 || self.open.iter().any(|(_, d)| *d)
    }

    fn push(&mut self, t: &str) {
        if self.in_comment {
            return;
        }
        if self.doubtful() {
            self.doubt.push_str(t);
        } else {
            self.current.push_str(t);
        }
    }

    fn flush(&mut self) {
        let t = self.current.trim();
        // A heading with no text (`##`, `<h2></h2>`) shows nothing and starts no section: a
        // person reads the lines after it as the section before.
        if !t.is_empty() {
            for (i, part) in t.split('\n').enumerate() {
                // Runs of spaces render as one: `Total  hours` is `Total hours`.
                let part = part.split_whitespace().collect::<Vec<_>>().join(" ");
                if part.is_empty() {
                    continue;
                }
                self.lines.push(Line {
                    text: part,
                    heading: if i == 0 { self.heading } else { None },
                    doubtful: false,
                });
            }
        }
        for part in self.doubt.split('\n') {
            let part = part.split_whitespace().collect::<Vec<_>>().join(" ");
            if !part.is_empty() {
                self.lines.push(Line {
                    text: part,
                    heading: None,
                    doubtful: true,
                });
            }
        }
        self.current.clear();
        self.doubt.clear();
        self.heading = None;
    }

    /// One tag of raw HTML: opens or closes an element, or ends a line.
    fn tag(&mut self, raw: &str) {
        let Some(tag) = html_tag(raw) else { return };
        if !tag.end && matches!(tag.name.as_str(), "style" | "script" | "link") {
            self.restyled_by
                .get_or_insert_with(|| format!("<{}>", tag.name));
        }
        let block = BLOCK_TAGS.contains(&tag.name.as_str());
        if tag.end {
            if let Some(i) = self.open.iter().rposition(|(n, _)| *n == tag.name) {
                self.open.truncate(i);
            }
        } else if !tag.self_closing && !VOID_TAGS.contains(&tag.name.as_str()) {
            self.open.push((tag.name.clone(), tag.doubtful));
        }
        if block {
            self.flush();
        } else if matches!(tag.name.as_str(), "td" | "th") && tag.end {
            self.push(" | ");
        }
        // `<h2>Notes</h2>` renders as a heading as `## Notes` does (unless its text may not
        // show): an extra section in HTML is an extra section, a required one is there.
        if !tag.end && !self.doubtful() {
            if let Some(level) = html_heading_level(&tag.name) {
                self.heading = Some(level);
            }
        }
    }

    /// The raw HTML of a block or an inline run: comments dropped, tags read, text kept.
    fn html(&mut self, raw: &str) {
        let mut rest = raw;
        while !rest.is_empty() {
            if self.in_comment {
                match rest.find("-->") {
                    Some(i) => {
                        self.in_comment = false;
                        rest = &rest[i + 3..];
                    }
                    None => rest = "",
                }
                continue;
            }
            if let Some(after) = rest.strip_prefix("<!--") {
                self.in_comment = true;
                rest = after;
                continue;
            }
            if rest.starts_with('<') {
                if let Some(close) = rest.find('>') {
                    let raw_tag = &rest[..=close];
                    if html_tag(raw_tag).is_some() || raw_tag.starts_with("<!") {
                        self.tag(raw_tag);
                        rest = &rest[close + 1..];
                        continue;
                    }
                }
            }
            let next = rest[1..].find('<').map_or(rest.len(), |i| i + 1);
            let mut text = decode_entities(&rest[..next]);
            // A browser folds a line break inside HTML into a space (outside `<pre>`): lines
            // after `<h2>By person</h2>` in the same block show as one paragraph. Only a
            // block tag (`<p>`, `<br>`, `<li>`...) ends a line.
            if !self.open.iter().any(|(name, _)| name == "pre") {
                text = text.replace('\n', " ");
            }
            self.push(&text);
            rest = &rest[next..];
        }
    }
}

fn markdown(text: &str, include_code: bool) -> Prose {
    let mut b = Builder::default();
    let mut in_code = false;
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(text, opts) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                b.flush();
                // A heading inside text that may not show is no heading.
                if !b.doubtful() {
                    b.heading = Some(level_number(level));
                }
            }
            Event::Start(Tag::CodeBlock(_)) => {
                b.flush();
                in_code = true;
            }
            Event::End(TagEnd::CodeBlock) => {
                in_code = false;
                b.flush();
            }
            Event::Start(Tag::Image { .. }) => b.in_image += 1,
            Event::End(TagEnd::Image) => b.in_image = b.in_image.saturating_sub(1),
            Event::Start(Tag::HtmlBlock) if !include_code => {
                b.flush();
                b.block_html = Some(String::new());
            }
            Event::End(TagEnd::HtmlBlock) if !include_code => {
                let raw = b.block_html.take().unwrap_or_default();
                b.html(&raw);
                // A comment cannot run past its block.
                b.in_comment = false;
                b.flush();
            }
            Event::Start(Tag::Paragraph | Tag::Item | Tag::TableRow | Tag::TableHead)
            | Event::End(
                TagEnd::Heading(_)
                | TagEnd::Paragraph
                | TagEnd::Item
                | TagEnd::TableRow
                | TagEnd::TableHead
                | TagEnd::BlockQuote(_)
                | TagEnd::HtmlBlock,
            ) => b.flush(),
            Event::End(TagEnd::TableCell) => b.push(" | "),
            // A reader sees a fenced block: what it says counts against the deliverable
            // (a `Failed: 5` beside `Failed: 3` is a contradiction), never for it.
            Event::Text(t) if in_code && !include_code => b.doubt.push_str(&t),
            Event::Text(t) | Event::Code(t) => b.push(&t),
            Event::Html(t) | Event::InlineHtml(t) if include_code => b.current.push_str(&t),
            Event::Html(t) => match b.block_html.as_mut() {
                Some(buf) => buf.push_str(&t),
                None => b.html(&t),
            },
            Event::InlineHtml(t) => b.html(&t),
            Event::SoftBreak | Event::HardBreak => b.push("\n"),
            _ => {}
        }
    }
    b.flush();
    Prose {
        lines: b.lines,
        restyled_by: b.restyled_by,
    }
}

/// The level of an HTML heading tag's name (`h1`-`h6`).
fn html_heading_level(name: &str) -> Option<u8> {
    let level: u8 = name.strip_prefix('h')?.parse().ok()?;
    (1..=6).contains(&level).then_some(level)
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
    fn comments_are_not_content_and_code_is_doubtful() {
        let p = md("# T\n<!-- Total hours: 64 -->\nTotal hours: 71\n\n```\nTotal hours: 64\n```\n\n    Total hours: 65\n");
        assert_eq!(p.text(), "T\nTotal hours: 71");
        assert_eq!(
            p.all_text(),
            "T\nTotal hours: 71\nTotal hours: 64\nTotal hours: 65"
        );
        let with_code = Prose::of("a.md", b"```\nx = 1\n```\n", true);
        assert_eq!(with_code.text(), "x = 1");
    }

    #[test]
    fn emphasis_is_dropped_from_headings_and_text() {
        let p = md("## **Goal**\n**Total hours:** *64*\n");
        assert_eq!(p.headings(), vec![(2, "Goal")]);
        assert_eq!(
            p.section("goal:").map(|s| join(&s)).unwrap(),
            "Total hours: 64"
        );
    }

    #[test]
    fn setext_headings_and_nesting() {
        let p = md("Project\n=======\n\nintro\n\nGoal\n----\n\ngoal text\n\n### Detail\n\nmore\n\n## Tasks\n\n- a\n- b\n");
        assert_eq!(
            p.headings(),
            vec![(1, "Project"), (2, "Goal"), (3, "Detail"), (2, "Tasks")]
        );
        assert_eq!(join(&p.section("Goal").unwrap()), "goal text\nDetail\nmore");
        assert_eq!(join(&p.section("Tasks").unwrap()), "a\nb");
        // A level-1 section holds everything below it.
        assert!(join(&p.section("Project").unwrap()).ends_with("a\nb"));
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
        assert_eq!(p.section("Goal").map(|s| join(&s)).unwrap(), "");
        assert_eq!(p.section("Risks").map(|s| join(&s)).unwrap(), "");
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

    #[test]
    fn a_heading_without_the_space_is_a_heading() {
        let p = md("#Project\n\n##Goal\ntext\n\n#1 priority\n\n```\n##Risks\n```\n");
        assert_eq!(p.headings(), vec![(1, "Project"), (2, "Goal")]);
        assert!(p.text().contains("#1 priority"));
        // A wrapped line that starts with a channel's name goes on the paragraph, as does a
        // second one; `##` after a line of text, or a title-like `#Goal`, is still a heading.
        let p = md("# Incident\n\nThe fix did not help;\n#payments was told, and\n#checkout-oncall saw it.\nMore text\n##Risks\n#Late\ntext\n#Goal\n");
        assert_eq!(
            p.headings(),
            vec![(1, "Incident"), (2, "Risks"), (1, "Late"), (1, "Goal")]
        );
        let t = p.text();
        assert!(t.contains("#payments was told, and"), "{t}");
        assert!(t.contains("#checkout-oncall saw it."), "{t}");
    }

    #[test]
    fn an_html_heading_is_a_heading_unless_it_may_not_show() {
        let p = md("# Report\n\n<h2>Notes</h2>\n\nsome notes\n\n<h3 style=\"display:none\">Hidden</h3>\n\n<div><h2>Goal</h2></div>\n\ng\n");
        assert_eq!(p.headings(), vec![(1, "Report"), (2, "Notes"), (2, "Goal")]);
        assert_eq!(p.scope(Some("Notes")).unwrap(), "some notes");
        assert_eq!(p.scope(Some("Goal")).unwrap(), "g");
    }

    #[test]
    fn every_section_of_a_name_is_read() {
        let p = md("## Risks\n\nlate keys\n\n## Goal\n\ng\n\n## Risks\n\nno risk\n");
        assert_eq!(p.scope(Some("Risks")).unwrap(), "late keys\nno risk");
    }

    #[test]
    fn html_that_shows_is_prose_and_html_that_may_not_is_doubtful() {
        let p = md("<div>T&#111;tal hours: 71</div>\n\n<p>The goal.</p>\n\n<div hidden>Secret tasks</div>\n\nA <span style=\"display:none\">hidden</span> word ![alt words](x.png)\n\n<!--\nTotal hours: 9\n-->\n");
        assert_eq!(p.text(), "Total hours: 71\nThe goal.\nA word");
        let all = p.all_text();
        assert!(
            all.contains("Secret tasks") && all.contains("hidden") && all.contains("alt words"),
            "{all}"
        );
        assert!(!all.contains("Total hours: 9"), "{all}");
    }

    #[test]
    fn a_hidden_block_hides_the_markdown_up_to_its_end_tag() {
        let p = md("<div hidden>\n\n## Goal\n\nThe app renews loans.\n\n</div>\n\nVisible.\n");
        assert_eq!(p.text(), "Visible.");
        assert!(p.headings().is_empty());
        assert!(p.all_text().contains("The app renews loans."));
    }

    #[test]
    fn runs_of_spaces_read_as_one_and_a_stylesheet_is_named() {
        let p = md("Total   hours:  64\n");
        assert_eq!(p.text(), "Total hours: 64");
        assert!(p.restyled_by.is_none());
        let p = md("<style>p { display: none }</style>\n\nTotal hours: 64\n");
        assert_eq!(p.restyled_by.as_deref(), Some("<style>"));
    }
}
