//! Lever `answer-lines`: a deliverable the task spells out as "exactly N lines", each a label
//! and a `<placeholder>` (`Approved amount: <the approved increase> EUR`), is written with its
//! lines as the task gives them: constrained decoding holds `create_file` and `replace_file`
//! of the deliverable to those lines, in order, each placeholder filled with text of one line
//! that holds no `<` or `>`. What fills a placeholder is still the model's, and the judge
//! checks it as before.
//!
//! A deliverable the task spells out as a heading, one list item per thing, "then the lines"
//! (explore-log-lines: `# Log lines`, `- <path>: <number of lines>`, then `Longest: <...>` and
//! `Total lines: <...>`) is held the same way: the heading, one or more list items of the
//! model's, then the closing lines. The 1.5B wrote the list and stopped, without the closing
//! lines, on three explore tasks of three, and its retries did not add them right. The same
//! shape spelt in one sentence, its lines in quotes, is read by [`inline`].

mod inline;

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{json, Value};

/// The tools whose `content` writes a whole file.
const WHOLE_FILE_WRITERS: &[&str] = &["create_file", "replace_file"];

/// Most lines of a template: past it, a list is no longer an answer of a few lines.
const MAX_TEMPLATE_LINES: usize = 8;

/// Most characters after a line's label.
pub const ANSWER_LINE_MAX_CHARS: usize = 80;

/// The rest of a line after its label: 1 to [`ANSWER_LINE_MAX_CHARS`] characters of one line,
/// no blank at either end, no control character (the 1.5B filled related-code-callers' lines
/// with `\u0000` escapes, one token each, until the reply cap, 19 times), none of `<` and `>` (a placeholder left as the task wrote it,
/// `<its path>`, is no answer), `"` or `\`. Under a pattern a `"` is written `\"` inside the
/// string: the 1.5B, its value not ending in the unit the task's line ends with, closed the
/// string with `"}}`, decoded as text, then wrote on past the reply cap; with `"` kept out, the
/// string can only end, and only where the line is complete.
static FILLED: LazyLock<String> = LazyLock::new(|| {
    format!(
        r#"[^\s\x00-\x1f\x7f<>"\\](?:[^\x00-\x1f\x7f<>"\\]{{0,{}}}[^\s\x00-\x1f\x7f<>"\\])?"#,
        ANSWER_LINE_MAX_CHARS - 2
    )
});

/// A line of the task that introduces the template: the deliverable's path, "exactly", and
/// the word "line" or "lines" before the colon that ends it (`... with exactly three lines:`).
static INTRO: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)\bexactly\s+(?:these\s+)?(\w+)\s+lines?\s*:\s*$").ok());

/// A template line: a label of words, a colon and a space, then text holding at least one
/// `<placeholder>`.
static TEMPLATE_LINE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"^[A-Za-z][A-Za-z0-9 ()'/_-]{0,40}: [^\n]*<[^<>\n]+>[^\n]*$").ok()
});

/// A line of the task that introduces a list template: the heading in single quotes, "one list
/// item per", and "then the lines" (or "then the two lines") ending it.
static LIST_INTRO: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)\bheading '([^'\n]{1,80})',? (?:then )?one list item per\b[^\n]*\bthen the (?:\w+ )?lines\s*:?\s*$").ok()
});

/// A line of the task that introduces a heading and lines: the heading in single quotes, then
/// "and these four lines:" (explore-project-tree).
static HEADED_INTRO: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\bheading '([^'\n]{1,80})',? and (?:these |the following )?(\w+) lines\s*:\s*$",
    )
    .ok()
});

/// One list item: `- ` and text of one line, as [`FILLED`] allows, up to 200 characters.
const LIST_ITEM: &str =
    r#"- [^\s\x00-\x1f\x7f<>"\\](?:[^\x00-\x1f\x7f<>"\\]{0,198}[^\s\x00-\x1f\x7f<>"\\])?"#;

static PLACEHOLDER: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"<[^<>\n]+>").ok());

/// Where the first placeholder of `line` starts.
fn first_placeholder(line: &str) -> Option<usize> {
    PLACEHOLDER.as_ref()?.find(line).map(|p| p.start())
}

/// The lines a task asks the deliverable to hold, as the task quotes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerLines {
    /// The heading the deliverable starts with (a list template, or a heading and lines).
    pub heading: Option<String>,
    /// Lines between the heading and the list (related-code-callers' `Defined in: <path>`).
    pub opening: Vec<String>,
    /// List items of the model's stand between the heading and the lines.
    pub list: bool,
    /// The lines the deliverable holds (after the list, with a heading).
    pub lines: Vec<String>,
}

impl AnswerLines {
    /// The template of `prompt` for the deliverable `artifact`: the lines after the first line
    /// that names `artifact` and ends in "exactly N lines:", while they are template lines;
    /// `None` when there is no such line, a line after it is not a template line before N were
    /// read, or N (in words up to ten, or digits) is not their count.
    pub fn of_task(prompt: &str, artifact: &str) -> Option<AnswerLines> {
        let (intro, template_line) = (INTRO.as_ref()?, TEMPLATE_LINE.as_ref()?);
        let lines: Vec<&str> = prompt.lines().collect();
        let at = lines
            .iter()
            .position(|l| names_path(l, artifact) && intro.is_match(l))?;
        let count = count_word(&intro.captures(lines[at])?[1])?;
        if count == 0 || count > MAX_TEMPLATE_LINES {
            return None;
        }
        let template: Vec<String> = lines[at + 1..]
            .iter()
            .take(count)
            .take_while(|l| template_line.is_match(l))
            .map(|l| l.to_string())
            .collect();
        // One template line more than the count says is a task at odds with itself; a line
        // whose text after its label holds `"` or `\` could not be written under [`FILLED`].
        let more = lines
            .get(at + 1 + count)
            .is_some_and(|l| template_line.is_match(l));
        let writable = template.iter().all(|l| {
            let after_label = first_placeholder(l).map_or("", |at| &l[at..]);
            !after_label.contains(['"', '\\'])
        });
        (template.len() == count && !more && writable).then_some(AnswerLines {
            heading: None,
            opening: Vec::new(),
            list: false,
            lines: template,
        })
    }

    /// [`Self::of_task`], else the list template of `prompt` for `artifact`: the heading and
    /// the template lines after the line that names `artifact`, its heading, one list item per
    /// thing and "then the lines"; `None` without such a line or template lines after it.
    pub fn of_task_or_list(prompt: &str, artifact: &str) -> Option<AnswerLines> {
        if let Some(exact) = Self::of_task(prompt, artifact) {
            return Some(exact);
        }
        let template_line = TEMPLATE_LINE.as_ref()?;
        let lines: Vec<&str> = prompt.lines().collect();
        let intros = [
            (LIST_INTRO.as_ref()?, true),
            (HEADED_INTRO.as_ref()?, false),
        ];
        let Some((at, intro, list)) = intros.iter().find_map(|(intro, list)| {
            let at = lines
                .iter()
                .position(|l| names_path(l, artifact) && intro.is_match(l))?;
            Some((at, intro, *list))
        }) else {
            return inline::of_sentence(prompt, artifact);
        };
        let captures = intro.captures(lines[at])?;
        let heading = captures[1].to_string();
        let template: Vec<String> = lines[at + 1..]
            .iter()
            .take_while(|l| template_line.is_match(l))
            .map(|l| l.to_string())
            .collect();
        // "these four lines": as many as it says.
        let counted = captures
            .get(2)
            .is_none_or(|n| count_word(n.as_str()) == Some(template.len()));
        let writable = |l: &String| {
            let after_label = first_placeholder(l).map_or("", |at| &l[at..]);
            !after_label.contains(['"', '\\'])
        };
        let fits = counted
            && !template.is_empty()
            && template.len() <= MAX_TEMPLATE_LINES
            && template.iter().all(writable)
            && !heading.contains(['"', '\\']);
        fits.then_some(AnswerLines {
            heading: Some(heading),
            opening: Vec::new(),
            list,
            lines: template,
        })
    }

    /// The anchored pattern of the whole deliverable: the lines in order, each its label as the
    /// task wrote it (the text before its first placeholder) and then [`FILLED`]; one line
    /// break (`\n` or `\r\n`) between lines, one optional at the end. What the task's line has
    /// after its first placeholder (a unit: ` EUR`, ` GB`) is the model's to write: held to it,
    /// the 1.5B wrote `1,850 EUR per month.` and could not end the line.
    ///
    /// `max_items`: a list template's items held to at most that many (after a reply cut while
    /// it wrote its list over again, see [`super::looped`]).
    pub fn pattern(&self, max_items: Option<usize>) -> String {
        let filled = |line: &String| {
            let label = first_placeholder(line).map_or(line.as_str(), |at| &line[..at]);
            format!("{}{}", regex::escape(label), *FILLED)
        };
        let closing = self
            .lines
            .iter()
            .map(filled)
            .collect::<Vec<_>>()
            .join("\\r?\\n");
        // Each opening line, then a line break and perhaps a blank line.
        let opening: String = self
            .opening
            .iter()
            .map(|l| format!("{}\\r?\\n(?:\\r?\\n)?", filled(l)))
            .collect();
        match &self.heading {
            None => format!("^{closing}(?:\\r?\\n)?$"),
            // Blank lines may stand after the heading and after the list, as a person writes.
            Some(heading) if self.list => format!(
                "^{}\\r?\\n(?:\\r?\\n)?{opening}(?:{LIST_ITEM}\\r?\\n){}(?:\\r?\\n)?{closing}(?:\\r?\\n)?$",
                regex::escape(heading),
                max_items.map_or("+".to_string(), |n| format!("{{1,{}}}", n.max(1))),
            ),
            Some(heading) => format!(
                "^{}\\r?\\n(?:\\r?\\n)?{closing}(?:\\r?\\n)?$",
                regex::escape(heading)
            ),
        }
    }

    /// Holds `create_file` and `replace_file` in an action schema to the deliverable `path`
    /// and its lines. The content loses its length cap: llguidance runs out of fuel on an
    /// anchored pattern under one, and the pattern bounds the lines anyway (the reply cap
    /// bounds their text).
    pub fn type_action_schema(
        &self,
        action_schema: &mut Value,
        path: &str,
        max_items: Option<usize>,
    ) {
        let Some(branches) = action_schema["anyOf"].as_array_mut() else {
            return;
        };
        for branch in branches {
            let tool = branch["properties"]["action"]["const"].as_str();
            if !tool.is_some_and(|t| WHOLE_FILE_WRITERS.contains(&t)) {
                continue;
            }
            let props = &mut branch["properties"]["parameters"]["properties"];
            props["path"] = json!({ "type": "string", "const": path });
            props["content"] = json!({ "type": "string", "pattern": self.pattern(max_items) });
        }
    }
}

/// Whether `line` names `path` as a whole path (see [`path_mentions`]).
fn names_path(line: &str, path: &str) -> bool {
    path_mentions(line, path).next().is_some()
}

/// Where each mention of `path` in `line` as a whole path ends, not as the end of a longer one
/// (`archive/out/answer.md` does not name `out/answer.md`); `./` before it is allowed.
fn path_mentions<'a>(line: &'a str, path: &'a str) -> impl Iterator<Item = usize> + 'a {
    let part = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '/');
    line.match_indices(path).filter_map(move |(at, _)| {
        let before = line[..at].trim_end_matches("./").chars().next_back();
        let end = at + path.len();
        let after = line[end..].chars().next();
        (!before.is_some_and(|c| part(c) || c == '.') && !after.is_some_and(part)).then_some(end)
    })
}

/// The prompt and gold deliverable of a desk suite task.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
fn desk_task(task: &str) -> (String, String, String) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../suites/desk")
        .join(task);
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("mission.json")).unwrap()).unwrap();
    let artifact = m["required_artifact"].as_str().unwrap().to_string();
    let gold = std::fs::read_to_string(dir.join("judge/gold/files").join(&artifact)).unwrap();
    (m["prompt"].as_str().unwrap().to_string(), artifact, gold)
}

/// `three` is 3; digits are read as a number.
fn count_word(word: &str) -> Option<usize> {
    const WORDS: [&str; 11] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    let lower = word.to_lowercase();
    WORDS
        .iter()
        .position(|w| *w == lower)
        .or_else(|| lower.parse().ok())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const BUDGET: &str = "mail/ holds 22 e-mails from May. Find that e-mail and write out/answer.md with exactly three lines:\nFile: <its path>\nApproved by: <the sender's e-mail address>\nApproved amount: <the approved increase> EUR\nDo not change the e-mails. Read out/answer.md back, then call finish.";

    fn template() -> AnswerLines {
        AnswerLines::of_task(BUDGET, "out/answer.md").unwrap()
    }

    fn held(text: &str) -> bool {
        Regex::new(&template().pattern(None))
            .unwrap()
            .is_match(text)
    }

    #[test]
    fn the_lines_after_exactly_n_lines_are_the_template() {
        assert_eq!(
            template().lines,
            [
                "File: <its path>",
                "Approved by: <the sender's e-mail address>",
                "Approved amount: <the approved increase> EUR"
            ]
        );
    }

    #[test]
    fn the_pattern_takes_the_answer_and_refuses_what_the_1_5b_wrote() {
        assert!(held(
            "File: mail/17.eml.txt\nApproved by: anna.berg@example.com\nApproved amount: 15,000 EUR\n"
        ));
        assert!(held(
            "File: mail/17.eml.txt\r\nApproved by: anna.berg@example.com\r\nApproved amount: 15,000 EUR"
        ));
        // The e-mail pasted whole, the placeholders left in, a line missing or added, the
        // unit lost, a blank filler.
        assert!(!held("From: anna.berg@example.com\nTo: team@example.com\n"));
        assert!(!held(
            "File: <its path>\nApproved by: a@b.c\nApproved amount: 1 EUR"
        ));
        assert!(!held("File: mail/17.eml.txt\nApproved by: a@b.c\n"));
        assert!(!held(
            "File: a\nApproved by: b\nApproved amount: 1 EUR\nNote: c"
        ));
        assert!(!held("File:  \nApproved by: b\nApproved amount: 1 EUR"));
        // What follows a label is the model's: a unit left off is the judge's to fail.
        assert!(held("File: a\nApproved by: b\nApproved amount: 1"));
        assert!(held(
            "File: a\nApproved by: b\nApproved amount: 1,850 EUR per month."
        ));
    }

    #[test]
    fn a_line_holds_no_quote_no_backslash_and_at_most_80_characters_after_its_label() {
        assert!(!held("File: a\nApproved by: b\nApproved amount: 1 EUR\"}}"));
        assert!(!held("File: a\\nApproved by: b\nApproved amount: 1 EUR"));
        let at_cap = "x".repeat(ANSWER_LINE_MAX_CHARS);
        assert!(held(&format!(
            "File: {at_cap}\nApproved by: b\nApproved amount: 1 EUR"
        )));
        assert!(!held(&format!(
            "File: {at_cap}y\nApproved by: b\nApproved amount: 1 EUR"
        )));
    }

    #[test]
    fn a_count_that_differs_or_a_prose_line_means_no_template() {
        let two = BUDGET.replace("exactly three lines", "exactly two lines");
        let two_of_two = two.replace("Approved amount: <the approved increase> EUR\n", "");
        assert_eq!(
            AnswerLines::of_task(&two_of_two, "out/answer.md")
                .unwrap()
                .lines
                .len(),
            2
        );
        let four = BUDGET.replace("exactly three lines", "exactly four lines");
        assert_eq!(AnswerLines::of_task(&four, "out/answer.md"), None);
        let prose = BUDGET.replace("File: <its path>", "Write the path first.");
        assert_eq!(AnswerLines::of_task(&prose, "out/answer.md"), None);
        // One template line more than the count says; another file's path that ends in the
        // deliverable's.
        assert_eq!(AnswerLines::of_task(&two, "out/answer.md"), None);
        let other = BUDGET.replace("write out/answer.md", "write archive/out/answer.md");
        assert_eq!(AnswerLines::of_task(&other, "out/answer.md"), None);
        let dotted = BUDGET.replace("write out/answer.md", "write ./out/answer.md");
        assert_eq!(
            AnswerLines::of_task(&dotted, "out/answer.md"),
            Some(template())
        );
        // A line whose shape needs a quote.
        let quoted = BUDGET.replace("File: <its path>", "File: \"<its path>\"");
        assert_eq!(AnswerLines::of_task(&quoted, "out/answer.md"), None);
        // Another deliverable, or no "exactly".
        assert_eq!(AnswerLines::of_task(BUDGET, "out/other.md"), None);
        let loose = BUDGET.replace("with exactly three lines:", "with three lines:");
        assert_eq!(AnswerLines::of_task(&loose, "out/answer.md"), None);
    }

    #[test]
    fn digits_and_these_are_read() {
        let digits = BUDGET.replace("exactly three lines", "exactly these 3 lines");
        assert_eq!(
            AnswerLines::of_task(&digits, "out/answer.md").unwrap(),
            template()
        );
    }

    #[test]
    fn regex_characters_of_the_task_are_literal() {
        let t = AnswerLines {
            heading: None,
            opening: Vec::new(),
            list: false,
            lines: vec!["Cost (EUR): <N> * 1.5 [net]".into()],
        };
        let re = Regex::new(&t.pattern(None)).unwrap();
        assert!(re.is_match("Cost (EUR): 12 * 1.5 [net]"));
        assert!(!re.is_match("Cost EUR: 12 * 1.5 [net]"));
        assert!(!re.is_match("Cost xEURx: 12"));
    }

    #[test]
    fn whole_file_writers_are_held_to_the_deliverable_and_its_lines() {
        let mut schema = json!({"anyOf": [
            {"properties": {"action": {"const": "create_file"}, "parameters": {"properties": {"path": {"type": "string"}, "content": {"type": "string", "maxLength": 32000}}}}},
            {"properties": {"action": {"const": "edit_file"}, "parameters": {"properties": {"path": {"type": "string"}, "new_text": {"type": "string"}}}}}
        ]});
        template().type_action_schema(&mut schema, "out/answer.md", None);
        let create = &schema["anyOf"][0]["properties"]["parameters"]["properties"];
        assert_eq!(create["path"]["const"], "out/answer.md");
        assert_eq!(
            create["content"]["pattern"],
            json!(template().pattern(None))
        );
        assert!(create["content"].get("maxLength").is_none());
        let edit = &schema["anyOf"][1]["properties"]["parameters"]["properties"];
        assert!(edit["path"].get("const").is_none());
    }

    #[test]
    fn a_heading_a_list_then_the_lines_is_a_list_template_that_takes_the_gold() {
        for task in [
            "explore-log-lines",
            "explore-csv-rows",
            "explore-archive-years",
        ] {
            let (prompt, artifact, gold) = desk_task(task);
            let t = AnswerLines::of_task_or_list(&prompt, &artifact)
                .unwrap_or_else(|| panic!("{task}: no template"));
            assert!(t.heading.is_some(), "{task}");
            assert_eq!(t.lines.len(), 2, "{task}: {t:?}");
            let re = Regex::new(&t.pattern(None)).unwrap();
            assert!(re.is_match(&gold), "{task}: the gold is refused:\n{gold}");
            assert!(re.is_match(&gold.replace('\n', "\r\n")), "{task}: CRLF");
            assert!(
                re.is_match(&gold.replace("\n\n", "\n")),
                "{task}: no blank lines"
            );
        }
        let (prompt, artifact, _) = desk_task("explore-log-lines");
        let t = AnswerLines::of_task_or_list(&prompt, &artifact).unwrap();
        let re = Regex::new(&t.pattern(None)).unwrap();
        // What the 1.5B wrote: the list and no closing lines; a line of its own after them;
        // the heading changed; no list; a placeholder left in.
        let list = "# Log lines\n- logs/api.log: 23\n- logs/worker.log: 31";
        assert!(!re.is_match(list));
        let closed = format!("{list}\nLongest: logs/worker.log\nTotal lines: 54");
        assert!(re.is_match(&closed));
        assert!(!re.is_match(&format!("{closed}\nNote: done")));
        assert!(!re.is_match(&closed.replace("# Log lines", "# Logs")));
        assert!(!re.is_match("# Log lines\nLongest: a\nTotal lines: 1"));
        assert!(!re.is_match(&closed.replace("logs/api.log: 23", "<path>: 23")));
    }

    #[test]
    fn a_task_without_a_list_template_gets_none_and_exact_lines_come_first() {
        for task in ["explore-share-cleanup", "report-energy-meters"] {
            let (prompt, artifact, _) = desk_task(task);
            assert_eq!(
                AnswerLines::of_task_or_list(&prompt, &artifact),
                None,
                "{task}"
            );
        }
        assert_eq!(
            AnswerLines::of_task_or_list(BUDGET, "out/answer.md"),
            Some(template())
        );
        let (prompt, _, _) = desk_task("explore-log-lines");
        assert_eq!(AnswerLines::of_task_or_list(&prompt, "out/other.md"), None);
    }

    #[test]
    fn a_heading_s_regex_characters_are_literal() {
        let t = AnswerLines {
            heading: Some("# Cost (EUR) [net]".into()),
            opening: Vec::new(),
            list: true,
            lines: vec!["Total: <N>".into()],
        };
        let re = Regex::new(&t.pattern(None)).unwrap();
        assert!(re.is_match("# Cost (EUR) [net]\n- a: 1\nTotal: 1\n"));
        assert!(!re.is_match("# Cost EUR n\n- a: 1\nTotal: 1\n"));
    }

    #[test]
    fn a_heading_and_these_n_lines_is_a_template_without_a_list() {
        let (prompt, artifact, gold) = desk_task("explore-project-tree");
        let t = AnswerLines::of_task_or_list(&prompt, &artifact).unwrap();
        assert_eq!(t.heading.as_deref(), Some("# Project tree"));
        assert!(!t.list);
        assert_eq!(t.lines.len(), 4);
        let re = Regex::new(&t.pattern(None)).unwrap();
        assert!(re.is_match(&gold), "{gold}");
        // Prose under the heading (`fs2-explore/`), a list before the lines, a line missing.
        assert!(!re.is_match("# Project tree\nA small HTTP API.\n"));
        assert!(!re.is_match(&gold.replace("# Project tree\n", "# Project tree\n- app/\n")));
        let three: Vec<&str> = gold.lines().filter(|l| !l.starts_with("Deepest")).collect();
        assert!(!re.is_match(&three.join("\n")));
        // As many lines as the task says.
        let five = prompt.replace("these four lines", "these five lines");
        assert_eq!(AnswerLines::of_task_or_list(&five, &artifact), None);
    }

    #[test]
    fn a_sentence_with_its_lines_in_quotes_is_a_template_that_takes_the_gold() {
        // (task, opening lines, closing lines)
        for (task, opening, closing) in [
            (
                "explore-config-formats",
                vec![],
                vec![
                    "TOML files: <N>",
                    "YAML files: <N>",
                    "JSON files: <N>",
                    "Most config files: <service>",
                ],
            ),
            (
                "related-code-callers",
                vec!["Defined in: <path of the file that defines parseInvoice>"],
                vec!["Callers: <N>"],
            ),
        ] {
            let (prompt, artifact, gold) = desk_task(task);
            let t = AnswerLines::of_task_or_list(&prompt, &artifact)
                .unwrap_or_else(|| panic!("{task}: no template"));
            assert!(t.list, "{task}");
            assert_eq!(t.opening, opening, "{task}");
            assert_eq!(t.lines, closing, "{task}");
            let re = Regex::new(&t.pattern(None)).unwrap();
            assert!(re.is_match(&gold), "{task}: the gold is refused:\n{gold}");
            assert!(re.is_match(&gold.replace('\n', "\r\n")), "{task}: CRLF");
            assert!(
                re.is_match(&gold.replace("\n\n", "\n")),
                "{task}: no blanks"
            );
            // A closing line left out, a line of its own after them, no list.
            let last = gold.trim_end().lines().last().unwrap().to_string();
            assert!(!re.is_match(&gold.replace(&last, "")), "{task}");
            assert!(!re.is_match(&format!("{gold}Note: done\n")), "{task}");
            let no_list: String = gold
                .lines()
                .filter(|l| !l.starts_with("- "))
                .map(|l| format!("{l}\n"))
                .collect();
            assert!(!re.is_match(&no_list), "{task}");
        }
        let (prompt, artifact, gold) = desk_task("related-code-callers");
        let re = Regex::new(
            &AnswerLines::of_task_or_list(&prompt, &artifact)
                .unwrap()
                .pattern(None),
        )
        .unwrap();
        // The opening line is held before the list, not after it.
        let moved = gold.replace("Defined in: src/invoice/parse.js\n\n", "");
        assert!(!re.is_match(&moved));
        assert!(!re.is_match(&moved.replace("Callers: 4", "Defined in: x.js\nCallers: 4")));
    }

    #[test]
    fn a_sentence_the_parser_does_not_know_gets_no_template() {
        let base = "Write out/a.md with the heading '# A', one list item per file written as '- <path>', then the lines 'Total: N' and 'Largest: <path>'. Then call finish.";
        let t = AnswerLines::of_task_or_list(base, "out/a.md").unwrap();
        assert_eq!(t.lines, vec!["Total: <N>", "Largest: <path>"]);
        for odd in [
            // A clause that is neither list nor lines; two lists; no list; no closing line;
            // a quoted line with no label; a value with a quote mark; another file.
            base.replace(", then the lines", ", then a paragraph, then the lines"),
            base.replace(
                "then the lines",
                "then each file as '- <path>', then the lines",
            ),
            base.replace("one list item per file written as '- <path>', then ", ""),
            base.replace(", then the lines 'Total: N' and 'Largest: <path>'", ""),
            base.replace("'Total: N'", "'Total'"),
            base.replace("'Total: N'", "'Total: \\N'"),
        ] {
            assert_eq!(
                AnswerLines::of_task_or_list(&odd, "out/a.md"),
                None,
                "{odd}"
            );
        }
        assert_eq!(AnswerLines::of_task_or_list(base, "out/b.md"), None);
        // A quoted line after the sentence may be one more line of the deliverable: none.
        let after = base.replace("Then call finish.", "Then add the line 'Extra: N'.");
        assert_eq!(AnswerLines::of_task_or_list(&after, "out/a.md"), None);
        let later = base.replace(
            "Then call finish.",
            "Do not change a file. Then call finish.",
        );
        assert_eq!(AnswerLines::of_task_or_list(&later, "out/a.md"), Some(t));
    }

    /// Which desk tasks a template holds: a change of the parsers shows here.
    #[test]
    fn the_desk_tasks_with_a_template_are_these() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/desk");
        let mut with: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| {
                let e = e.unwrap();
                if !e.path().join("mission.json").is_file() {
                    return None;
                }
                let name = e.file_name().into_string().unwrap();
                let (prompt, artifact, _) = desk_task(&name);
                AnswerLines::of_task_or_list(&prompt, &artifact).map(|_| name)
            })
            .collect();
        with.sort();
        assert_eq!(
            with,
            [
                "explore-archive-years",
                "explore-config-formats",
                "explore-csv-rows",
                "explore-log-lines",
                "explore-project-tree",
                "related-code-callers",
                "report-deploys",
                "search-budget-approval",
                "search-cert-expiry",
                "search-host-inventory",
                "search-hosting-renewal",
                "search-legacy-flag",
                "search-policy-clause",
            ],
        );
    }
}
