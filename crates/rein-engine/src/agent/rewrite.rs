//! The `rewrite-section` lever: a `rewrite_section` tool that replaces the text under one
//! required heading of the Markdown deliverable and keeps the rest as it is. A small model
//! fixing one section with `edit_file` must copy `old_text` exactly, once, and within the reply
//! cap; the 1.5B missed (`old_text` not found, found twice, cut off) in most of its fixes. Here
//! it names the heading and gives the new text.
//!
//! Rein reads the deliverable as it is now, splits it at the outline's headings (it must have
//! exactly the headings `write_sections` writes, in order, as the judge reads them), puts the
//! new text under the named heading, and composes the call as `write_sections` with every
//! section: the same checks before the gate, the same diff and approval, the same tool on disk.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{json, Map, Value};

use super::prompt::signature;
use super::sections::{Outline, TITLE_FIELD, WRITE_SECTIONS};
use crate::checks::{heading_key, markdown_headings, markdown_reading};

/// The tool the `rewrite-section` lever adds beside the outline's writer.
pub const REWRITE_SECTION: &str = "rewrite_section";

/// An ATX heading line: up to three spaces, one to six `#`, then a space or the end.
static ATX_HEADING: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$").ok());

/// A line that opens or closes a fenced code block.
static FENCE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^ {0,3}(```|~~~)").ok());

impl Outline {
    /// `rewrite_section`'s parameters: `path` fixed to the deliverable, `heading` one of the
    /// required headings, `text` the new text under it.
    pub fn rewrite_parameters_schema(&self) -> Value {
        let headings: Vec<&str> = self.headings.iter().map(|(_, h)| h.as_str()).collect();
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "const": self.path},
                "heading": {"type": "string", "enum": headings},
                "text": {"type": "string", "minLength": 1, "maxLength": rein_workspace::MAX_INPUT_CHARS},
            },
            "required": ["path", "heading", "text"],
            "additionalProperties": false,
        })
    }

    /// Adds `rewrite_section`'s branch to an action schema, shaped as `template` (another
    /// tool's branch: the thought and the envelope stay the same).
    pub fn add_rewrite_branch(&self, action_schema: &mut Value, mut template: Value) {
        template["properties"]["action"] = json!({"type": "string", "const": REWRITE_SECTION});
        template["properties"]["parameters"] = self.rewrite_parameters_schema();
        if let Some(branches) = action_schema["anyOf"].as_array_mut() {
            branches.push(template);
        }
    }

    /// The tool's line in the system prompt.
    pub fn rewrite_tool_line(&self) -> String {
        format!(
            "- {REWRITE_SECTION} {}: Propose replacing the text under one heading of {} with `text`; Rein keeps the heading and every other section as they are. A person approves the change.\n",
            signature(&self.rewrite_parameters_schema()),
            self.path
        )
    }

    /// `write_sections`'s arguments for a `rewrite_section` call on the deliverable as it is
    /// now (`current`), with a note for the model; or why it is refused, nothing written.
    pub fn rewrite_arguments(
        &self,
        current: Option<&str>,
        params: &Value,
    ) -> Result<(Value, Option<String>), String> {
        let given = self.own_path(REWRITE_SECTION, params)?;
        let wanted = params
            .get("heading")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let Some(target) = self
            .headings
            .iter()
            .position(|(_, h)| heading_key(h) == heading_key(wanted))
        else {
            return Err(format!(
                "`heading` must be one of {}, not `{wanted}`; nothing was written",
                self.heading_names()
            ));
        };
        let Some(text) = params.get("text").and_then(Value::as_str) else {
            return Err(format!(
                "`text` must be the new text under `{wanted}`; nothing was written"
            ));
        };
        let Some(current) = current else {
            return Err(format!(
                "{} does not exist yet: write it whole with {WRITE_SECTIONS} first; nothing was written",
                self.path
            ));
        };
        let (_, heading) = &self.headings[target];
        let text = without_own_heading(text, heading);
        if let Some(other) = self.other_heading_in(&text, heading) {
            // The 1.5B put `## Risks` and its text under Tasks five times over, each rewrite
            // adding one more (escaped) copy.
            return Err(format!(
                "`text` holds the heading `{other}` of another section: give only the text under `{heading}`, and rewrite `{other}` with its own call; nothing was written"
            ));
        }
        let (title, mut bodies) = self.split(current)?;
        // The task's lines Rein wrote from line fields stay unless the new text states them.
        let kept = self.kept_lines(heading, &bodies[target], &text);
        bodies[target] = if kept.is_empty() {
            text
        } else {
            format!("{}\n\n{}", text.trim_end(), kept.join("\n"))
        };
        let mut fields = Map::new();
        fields.insert("path".into(), json!(given));
        if let Some(t) = title {
            fields.insert(TITLE_FIELD.into(), json!(t));
        }
        for ((_, h), body) in self.headings.iter().zip(&bodies) {
            fields.insert(h.clone(), json!(body));
        }
        let (args, note, composed) = self
            .compose_sections(&Value::Object(fields), Some(current))
            .map_err(|e| e.replacen(WRITE_SECTIONS, REWRITE_SECTION, 1))?;
        // What the judge reads outside the rewritten section must not change: Rein split at a
        // heading the judge does not see (in a comment) beside one Rein does not (in a quote),
        // or would write a `#` line of a code block as `\#`.
        if self.outside(current, heading) != self.outside(&composed, heading) {
            return Err(format!(
                "{} cannot be split into its sections without changing text outside `{heading}` (a heading inside a comment, quote or HTML block, or a line starting with '#' in a code block); write it whole with {WRITE_SECTIONS}; nothing was written",
                self.path
            ));
        }
        Ok((args, note))
    }

    /// What the judge reads in a text outside the section under `heading` (its lines up to
    /// the next heading of any level), a required heading's line as its key alone (Rein
    /// writes those lines, at the outline's level).
    fn outside(&self, text: &str, heading: &str) -> Vec<(Option<u8>, String, bool)> {
        let target = heading_key(heading);
        let mut inside = false;
        let mut kept = Vec::new();
        for (level, line, doubtful) in markdown_reading(&self.path, text) {
            if level.is_some() {
                let key = heading_key(&line);
                inside = key == target;
                if self.headings.iter().any(|(_, h)| heading_key(h) == key) {
                    // Rein writes it at the outline's level.
                    kept.push((Some(0), key, doubtful));
                } else {
                    kept.push((level, line, doubtful));
                }
            } else if !inside {
                kept.push((level, line, doubtful));
            }
        }
        kept
    }

    /// The deliverable's title (when the outline has one) and the text under each required
    /// heading, or why it cannot be split: its headings, as the judge reads them or line by
    /// line, are not exactly the outline's, or it has text before its first heading.
    fn split(&self, text: &str) -> Result<(Option<String>, Vec<String>), String> {
        let whole = || {
            format!(
                "{} does not have exactly the headings {} in order, so one section cannot be told apart; write it whole with {WRITE_SECTIONS}; nothing was written",
                self.path,
                self.heading_names()
            )
        };
        let judged =
            markdown_headings(&self.path, text).map_err(|e| format!("{e}; nothing was written"))?;
        let lines: Vec<&str> = text.lines().collect();
        let found = atx_headings(&lines);
        let keys: Vec<(u8, String)> = found.iter().map(|(_, l, h)| (*l, heading_key(h))).collect();
        if keys != judged {
            return Err(whole());
        }
        let offset = usize::from(self.title);
        let expected: Vec<String> = self.headings.iter().map(|(_, h)| heading_key(h)).collect();
        let matches = found.len() == expected.len() + offset
            && (!self.title || found[0].1 == 1)
            && found[offset..]
                .iter()
                .zip(&expected)
                .all(|((_, _, h), key)| heading_key(h) == *key);
        if !matches {
            return Err(whole());
        }
        if lines[..found[0].0].iter().any(|l| !l.trim().is_empty()) {
            return Err(format!(
                "{} has text before its first heading, which {REWRITE_SECTION} would drop; write it whole with {WRITE_SECTIONS}; nothing was written",
                self.path
            ));
        }
        let title = self.title.then(|| found[0].2.clone());
        let mut bodies = Vec::new();
        for (i, (at, _, _)) in found.iter().enumerate().skip(offset) {
            let end = found.get(i + 1).map_or(lines.len(), |(next, _, _)| *next);
            bodies.push(
                lines[at + 1..end]
                    .join("\n")
                    .trim_matches('\n')
                    .trim_end()
                    .to_string(),
            );
        }
        if self.title
            && lines[found[0].0 + 1..found[1].0]
                .iter()
                .any(|l| !l.trim().is_empty())
        {
            return Err(format!(
                "{} has text between its title and `{}`, which {REWRITE_SECTION} would drop; write it whole with {WRITE_SECTIONS}; nothing was written",
                self.path, self.headings[0].1
            ));
        }
        Ok((title, bodies))
    }

    /// Another required heading written as a heading line of `text` (`## Risks` in the text
    /// for Tasks), if any.
    fn other_heading_in(&self, text: &str, heading: &str) -> Option<String> {
        text.lines().find_map(|line| {
            let key = heading_key(atx_heading(line)?.1);
            self.headings
                .iter()
                .find(|(_, h)| heading_key(h) == key && heading_key(h) != heading_key(heading))
                .map(|(_, h)| h.clone())
        })
    }

    /// The required headings, quoted, for messages.
    fn heading_names(&self) -> String {
        self.headings
            .iter()
            .map(|(_, h)| format!("`{h}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A line's ATX heading, as (level, text); a trailing `\r` is not part of it.
fn atx_heading(line: &str) -> Option<(u8, &str)> {
    let c = ATX_HEADING
        .as_ref()?
        .captures(line.trim_end_matches('\r'))?;
    let level = u8::try_from(c.get(1)?.as_str().len()).unwrap_or(6);
    Some((level, c.get(2).map_or("", |m| m.as_str())))
}

/// The ATX headings of a Markdown text outside fenced code: (line index, level, text).
fn atx_headings(lines: &[&str]) -> Vec<(usize, u8, String)> {
    let Some(fence) = FENCE.as_ref() else {
        return Vec::new();
    };
    let mut open: Option<String> = None;
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(f) = fence.captures(line) {
            match &open {
                Some(o) if *o == f[1] => open = None,
                Some(_) => {}
                None => open = Some(f[1].to_string()),
            }
            continue;
        }
        if open.is_some() {
            continue;
        }
        if let Some((level, text)) = atx_heading(line) {
            found.push((i, level, text.to_string()));
        }
    }
    found
}

/// `text` without a first line that repeats the section's own heading (`## Tasks`), which
/// small models put first and which would otherwise be written as text under it.
fn without_own_heading(text: &str, heading: &str) -> String {
    let trimmed = text.trim_start_matches(['\n', '\r']);
    let (first, rest) = trimmed.split_once('\n').unwrap_or((trimmed, ""));
    let repeats = atx_heading(first).is_some_and(|(_, h)| heading_key(h) == heading_key(heading));
    if repeats && !rest.trim().is_empty() {
        rest.to_string()
    } else {
        text.to_string()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// desk_task's outline.
    pub(super) fn desk() -> Outline {
        Outline {
            path: "out/summary.md".into(),
            title: false,
            headings: vec![
                (1, "Project summary".into()),
                (2, "Goal".into()),
                (2, "Tasks".into()),
                (2, "Risks".into()),
            ],
            lines: Vec::new(),
            figure_checks: Vec::new(),
        }
    }

    const REPORT: &str = "# Project summary\n\nHarbor Library app.\n\n## Goal\n\nMembers renew loans by phone.\n\n## Tasks\n\n- Renewal API: 16 hours\n\n## Risks\n\nThe keys are late.\n";

    fn call(heading: &str, text: &str) -> Value {
        json!({"path": "out/summary.md", "heading": heading, "text": text})
    }

    fn bodies(args: &Value) -> Vec<(String, String)> {
        args["sections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["heading"].as_str().unwrap().to_string(),
                    s["body"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn one_section_is_replaced_and_the_others_kept() {
        let o = desk();
        let (args, note) = o
            .rewrite_arguments(
                Some(REPORT),
                &call("Tasks", "- Renewal API: 16 hours\nTotal hours: 16"),
            )
            .unwrap();
        assert!(note.is_none());
        assert_eq!(
            bodies(&args),
            vec![
                ("Project summary".into(), "Harbor Library app.".into()),
                ("Goal".into(), "Members renew loans by phone.".into()),
                (
                    "Tasks".into(),
                    "- Renewal API: 16 hours\nTotal hours: 16".into()
                ),
                ("Risks".into(), "The keys are late.".into()),
            ]
        );
        // The heading repeated as the text's first line is Rein's to write, not text.
        let (args, _) = o
            .rewrite_arguments(
                Some(REPORT),
                &call("risks", "## Risks\nThe API keys are late."),
            )
            .unwrap();
        assert_eq!(bodies(&args)[3].1, "The API keys are late.");
    }

    #[test]
    fn a_file_that_is_not_the_outline_or_not_there_is_refused() {
        let o = desk();
        let refused =
            |current: Option<&str>, p: Value| o.rewrite_arguments(current, &p).unwrap_err();
        assert!(refused(None, call("Tasks", "x")).contains("does not exist yet"));
        // A heading lost, a setext heading, a heading hidden in a fence, text before the first.
        for bad in [
            "# Project summary\n\nx\n\n## Goal\n\ny\n\n## Risks\n\nz\n",
            "# Project summary\n\nx\n\nGoal\n----\n\ny\n\n## Tasks\n\nt\n\n## Risks\n\nz\n",
            "# Project summary\n\nx\n\n## Goal\n\ny\n```\n## Tasks\n```\n\n## Risks\n\nz\n",
            // A heading the judge does not see (inside a comment) is not one to split at.
            "# Project summary\n\nx\n\n## Goal\n\ny\n<!--\n## Tasks\n-->\n\n## Tasks\n\nt\n\n## Risks\n\nz\n",
            // Every section twice.
            &format!("{REPORT}\n{REPORT}"),
        ] {
            let e = refused(Some(bad), call("Tasks", "new"));
            assert!(e.contains("write it whole with write_sections"), "{e}");
        }
        let e = refused(
            Some(&format!("Intro line.\n\n{REPORT}")),
            call("Tasks", "new"),
        );
        assert!(e.contains("text before its first heading"), "{e}");
        // Another file, an unknown heading, no text.
        assert!(refused(
            Some(REPORT),
            json!({"path": "notes/overview.md", "heading": "Tasks", "text": "x"})
        )
        .contains("rewrite_section writes only the deliverable"));
        assert!(refused(Some(REPORT), call("Budget", "x")).contains("must be one of"));
        assert!(refused(Some(REPORT), call("Tasks\n## Risks", "x")).contains("must be one of"));
        assert!(refused(
            Some(REPORT),
            json!({"path": "out/summary.md", "heading": "Tasks"})
        )
        .contains("`text` must be"));
    }

    #[test]
    fn a_text_holding_another_section_s_heading_is_refused() {
        let o = desk();
        let e = o
            .rewrite_arguments(
                Some(REPORT),
                &call("Tasks", "- Renewal API: 16 hours\n\n## Risks\n\nNone."),
            )
            .unwrap_err();
        assert!(
            e.contains("holds the heading `Risks` of another section"),
            "{e}"
        );
        // A heading that is no required one is the text's own (written as text, said so).
        assert!(o
            .rewrite_arguments(
                Some(REPORT),
                &call("Tasks", "### Done\n- Renewal API: 16 hours")
            )
            .is_ok());
    }

    #[test]
    fn the_composed_file_is_held_to_write_sections_rules() {
        let o = desk();
        // The same text as another section is refused, under this tool's name.
        let e = o
            .rewrite_arguments(
                Some(REPORT),
                &call("Tasks", "Members renew loans by phone."),
            )
            .unwrap_err();
        assert!(e.starts_with("rewrite_section needs"), "{e}");
        assert!(e.contains("the same text under"), "{e}");
        // A text that would make a heading of its own is refused.
        let e = o
            .rewrite_arguments(Some(REPORT), &call("Tasks", "Total\n=====\n"))
            .unwrap_err();
        assert!(e.contains("nothing was written"), "{e}");
        // A line starting with '#' is written as text, and said so.
        let (_, note) = o
            .rewrite_arguments(Some(REPORT), &call("Tasks", "#1 task: Renewal API"))
            .unwrap();
        assert!(note.unwrap().contains("written as text"));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod redteam {
    use super::tests::desk;
    use super::*;

    fn composed(args: &Value) -> String {
        let sections: Vec<rein_workspace::desk::Section> = args["sections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| rein_workspace::desk::Section {
                level: u8::try_from(s["level"].as_u64().unwrap()).unwrap(),
                heading: s["heading"].as_str().unwrap().into(),
                body: s["body"].as_str().unwrap().into(),
            })
            .collect();
        rein_workspace::desk::render_sections(args["title"].as_str(), &sections)
            .unwrap()
            .text
    }

    fn rewrite(o: &Outline, file: &str, heading: &str, text: &str) -> Result<String, String> {
        let p = json!({"path": "./out//summary.md", "heading": heading, "text": text});
        o.rewrite_arguments(Some(file), &p)
            .map(|(a, _)| composed(&a))
    }

    #[test]
    fn a_heading_the_judge_sees_elsewhere_never_moves_another_section_s_text() {
        // The judge reads `> ## Tasks` (in a quote) as the Tasks heading and does not see the
        // `## Tasks` in the comment; Rein's line reader the other way round. Same headings,
        // split in other places: rewriting Goal dropped the judge's whole Tasks section.
        let file = "# Project summary\n\nx\n\n## Goal\n\ny\n\n> ## Tasks\n\nRenewal API: 16 hours\n\n<!--\n## Tasks\n-->\n\n## Risks\n\nz\n";
        let e = rewrite(&desk(), file, "Goal", "New goal.").unwrap_err();
        assert!(
            e.contains("cannot be split") && e.contains("nothing was written"),
            "{e}"
        );
        // Rewriting a section whose text is what the judge reads there keeps the rest.
        let r = rewrite(&desk(), file, "Risks", "New risks.").unwrap();
        assert!(r.contains("> ## Tasks\n\nRenewal API: 16 hours"), "{r}");
    }

    #[test]
    fn a_hash_line_in_a_code_block_of_another_section_is_never_rewritten() {
        // Rein wrote `# install` as `\# install`: a code block of Goal changed by a rewrite
        // of Tasks.
        let file = "# Project summary\n\nx\n\n## Goal\n\n```sh\n# install\nmake\n```\n\n## Tasks\n\nt\n\n## Risks\n\nz\n";
        let e = rewrite(&desk(), file, "Tasks", "New tasks.").unwrap_err();
        assert!(e.contains("cannot be split"), "{e}");
        // Goal itself may be rewritten: nothing else changes.
        assert!(rewrite(&desk(), file, "Goal", "New goal.").is_ok());
    }

    #[test]
    fn the_new_text_cannot_change_what_another_section_says() {
        // A link definition in the new text turns `[r]` in the title's section into a link.
        let file = "# Project summary\n\nSee [r] for more.\n\n## Goal\n\ny\n\n## Tasks\n\nt\n\n## Risks\n\nz\n";
        let e = rewrite(
            &desk(),
            file,
            "Goal",
            "New goal.\n\n[r]: http://example.com",
        )
        .unwrap_err();
        assert!(e.contains("cannot be split"), "{e}");
    }

    #[test]
    fn the_title_is_kept_as_written_or_the_rewrite_refused() {
        let o = Outline {
            path: "out/summary.md".into(),
            title: true,
            headings: vec![(2, "Goal".into()), (2, "Tasks".into()), (2, "Risks".into())],
            lines: Vec::new(),
            figure_checks: Vec::new(),
        };
        let file = "# Release *2.0* #\n\n## Goal\n\ny\n\n## Tasks\n\nt\n\n## Risks\n\nz\n";
        assert_eq!(
            rewrite(&o, file, "Tasks", "New tasks.").unwrap(),
            "# Release *2.0*\n\n## Goal\n\ny\n\n## Tasks\n\nNew tasks.\n\n## Risks\n\nz\n"
        );
        // Rein writes a title without its leading `#`s: `#2 Release` would become `2 Release`.
        let file = "# #2 Release\n\n## Goal\n\ny\n\n## Tasks\n\nt\n\n## Risks\n\nz\n";
        let e = rewrite(&o, file, "Tasks", "New tasks.").unwrap_err();
        assert!(e.contains("cannot be split"), "{e}");
    }

    #[test]
    fn a_required_heading_at_another_level_is_written_at_the_outline_s() {
        let file = "# Project summary\n\nx\n\n### Goal\n\ny\n\n## Tasks\n\nt\n\n## Risks\n\nz\n";
        assert_eq!(
            rewrite(&desk(), file, "Tasks", "New tasks.").unwrap(),
            "# Project summary\n\nx\n\n## Goal\n\ny\n\n## Tasks\n\nNew tasks.\n\n## Risks\n\nz\n"
        );
    }

    #[test]
    fn a_crlf_or_lone_cr_file_is_rewritten_with_the_other_sections_as_they_read() {
        let file = "# Project summary\r\n\r\nx\r\n\r\n## Goal ##\r\n\r\ny\rstill y\r\n\r\n## **Tasks**\r\n\r\nt\r\n\r\n## Risks\r\n\r\nz\r\n";
        assert_eq!(
            rewrite(&desk(), file, "Tasks", "New tasks.").unwrap(),
            "# Project summary\n\nx\n\n## Goal\n\ny\nstill y\n\n## Tasks\n\nNew tasks.\n\n## Risks\n\nz\n"
        );
        // A code block and a comment in another section of a CRLF file stay as they read.
        let file = "# Project summary\r\n\r\nx\r\n\r\n## Goal\r\n\r\n```\r\ncode  \r\n```\r\n<!-- note -->\r\n\r\n## Tasks\r\n\r\nt\r\n\r\n## Risks\r\n\r\nz\r\n";
        assert_eq!(
            rewrite(&desk(), file, "Tasks", "New tasks.").unwrap(),
            "# Project summary\n\nx\n\n## Goal\n\n```\ncode  \n```\n<!-- note -->\n\n## Tasks\n\nNew tasks.\n\n## Risks\n\nz\n"
        );
    }
}
