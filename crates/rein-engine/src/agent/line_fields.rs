//! Lever `line-fields`: `write_sections` gets one field per number line the task quotes for a
//! section (`'Responses: N'`, `'Travel: N EUR'`), placed after that section's own text field.
//! The field holds the number only, and Rein writes the task's line with it, unit and all, at
//! the end of the section. The number is still the model's and the judge checks the file as
//! before; what cannot happen is three lines written as one (`Responses: 16, Average rating:
//! 3.125, Mobile responses: 7`, which the judge reads as one number followed by text), a line
//! left out, or a unit the check does not read (`$2374.68 EUR`).
//!
//! A line is a field only where `stated-lines` would hold it (the check's own regex reads the
//! number back from exactly one line the task quotes, in a section with no subsection; see
//! [`super::stated`]), and never for a label that is a placeholder (`'<Warehouse>: N units'`):
//! which row or name goes there is the task's answer. A line of the section's text that holds
//! nothing but those lines' labels, numbers and units is left out (Rein writes those lines), and
//! the model is told so. Then the composed file is read as the judge reads it: where any
//! statement of a field's figure is not the field's number, or Rein's line would not be read
//! in its section (an unclosed code block or comment), the call is refused, nothing written:
//! every statement of one figure must agree, and no text of the model's is dropped for it.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{json, Map, Value};

use super::prompt::clip;
use super::sections::{Outline, TITLE_FIELD, WRITE_SECTIONS};
use super::stated::{filled, leaf_numeric_checks, section_template};
use crate::checks::{
    exact_decimals, heading_key, stated_in_line, statements_in, written_with_decimals, CheckSpec,
    Locator,
};
use crate::mission::FrozenContract;

/// A line field's number as constrained decoding holds it: an optional minus, digits, and
/// decimals; no unit, sign of currency or thousands separator (the unit is the task's, and Rein
/// writes it).
pub const NUMBER_PATTERN: &str = r"^-?[0-9]{1,15}(?:\.[0-9]{1,6})?$";

/// The longest number [`NUMBER_PATTERN`] allows.
const NUMBER_MAX_CHARS: u64 = 23;

/// Most characters of a refused value quoted back to the model.
const SHOWN_VALUE_CHARS: usize = 40;

static NUMBER: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(NUMBER_PATTERN).ok());

/// One number line of a section that `write_sections` takes as a field of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct LineField {
    /// The outline heading the line goes under.
    pub heading: String,
    /// The field's name: the line's label as the task quotes it (`Average rating`).
    pub label: String,
    /// The line the task quotes, with its placeholder (`'Travel: N EUR'`).
    pub template: String,
    /// The check that reads the line's number.
    pub check: CheckSpec,
}

impl LineField {
    /// The task's line with `value` in it, when `value` is a plain number that the check reads
    /// back from that line as the same number.
    pub fn line(&self, value: &str) -> Option<String> {
        let value = value.trim();
        let held = NUMBER.as_ref().is_some_and(|re| re.is_match(value))
            && written_with_decimals(value, self.check.decimals());
        if !held {
            return None;
        }
        let want: f64 = value.parse().ok()?;
        let line = filled(&self.template, value)?;
        (stated_in_line(&self.check, &line) == Some(want)).then_some(line)
    }

    /// The pattern constrained decoding holds the field's number to: [`NUMBER_PATTERN`], or
    /// with exactly the decimals the check asks for.
    pub fn pattern(&self) -> String {
        match self.check.decimals() {
            Some(0) => r"^-?[0-9]{1,15}$".to_string(),
            Some(n) => format!(r"^-?[0-9]{{1,15}}\.[0-9]{{{n}}}$"),
            None => NUMBER_PATTERN.to_string(),
        }
    }

    /// The check's regex, which finds the statements of this line's figure.
    fn regex(&self) -> Option<Regex> {
        match &self.check {
            CheckSpec::NumericConsistency {
                stated: Locator::Regex(pattern),
                ..
            } => Regex::new(pattern).ok(),
            _ => None,
        }
    }

    /// The unit the task writes after the number (`EUR` of `'Travel: N EUR'`), if any.
    fn unit(&self) -> Option<&str> {
        let (_, after) = self.template.split_once(':')?;
        let after = after.trim_start();
        let rest = match after.chars().next()? {
            '<' => after.split_once('>')?.1,
            '{' => after.split_once('}')?.1,
            _ => after.split_once(' ').map_or("", |(_, r)| r),
        };
        Some(rest.trim()).filter(|u| !u.is_empty())
    }

    /// The field's schema (its pattern is added only for llguidance: see [`NUMBER_PATTERN`]).
    pub fn schema() -> Value {
        json!({ "type": "string", "minLength": 1, "maxLength": NUMBER_MAX_CHARS })
    }
}

/// The line fields of a contract's outline, in the contract's order: for each
/// `numeric_consistency` check on the deliverable, located by a regex and scoped to a heading
/// of the outline with no subsection, the line the task quotes that the check reads its number
/// from (with `siblings`, failing that, the line another section's quoted line makes for this
/// one: [`section_template`]). A label that names a heading, `path` or `title`, or two
/// different lines, gives none.
pub fn line_fields(contract: &FrozenContract, outline: &Outline, siblings: bool) -> Vec<LineField> {
    let m = &contract.mission;
    let mut fields: Vec<LineField> = Vec::new();
    let mut ambiguous: Vec<String> = Vec::new();
    for (spec, _, heading) in leaf_numeric_checks(contract, outline) {
        let sibling = siblings.then_some((heading, outline));
        let Some(template) = section_template(spec, &m.prompt, sibling) else {
            continue;
        };
        let Some(label) = template.split_once(':').map(|(l, _)| l.trim().to_string()) else {
            continue;
        };
        let key = heading_key(&label);
        if key.is_empty()
            || label == "path"
            || label == TITLE_FIELD
            || outline.headings.iter().any(|(_, h)| heading_key(h) == key)
        {
            continue;
        }
        match fields.iter().find(|f| heading_key(&f.label) == key) {
            // Two checks of one line: the first one's reading stands for both.
            Some(f) if f.template == template && f.heading == heading => {}
            Some(_) => ambiguous.push(key),
            None => fields.push(LineField {
                heading: heading.to_string(),
                label,
                template,
                check: spec.clone(),
            }),
        }
    }
    fields.retain(|f| !ambiguous.contains(&heading_key(&f.label)));
    fields
}

impl Outline {
    /// This outline with the line fields of `contract` (lever `line-fields`); with `siblings`
    /// (lever `sibling-lines`) also the lines made from another section's quoted line.
    pub fn with_line_fields(mut self, contract: &FrozenContract, siblings: bool) -> Outline {
        self.lines = line_fields(contract, &self, siblings);
        self
    }

    /// The line fields of the section under `heading`.
    pub(super) fn lines_under<'o>(
        &'o self,
        heading: &'o str,
    ) -> impl Iterator<Item = &'o LineField> {
        self.lines.iter().filter(move |f| f.heading == heading)
    }

    /// The task's lines that are fields, as the prompt quotes them: `'Responses: N', ...`.
    pub(super) fn quoted_lines(&self) -> String {
        self.lines
            .iter()
            .map(|f| format!("'{}'", f.template))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// What the tool line and the task note add about the line fields (empty without them).
    pub(super) fn line_fields_note(&self) -> String {
        if self.lines.is_empty() {
            return String::new();
        }
        // No example value: the 1.5B copied the example's number (`"Travel": "64"`) as the
        // travel total of report-expenses, where it had been given 2374.68.
        format!(
            " The task's lines {} are fields of their own, after their section's text: give each its number alone, in digits, without the label or the unit; Rein writes the line with it at the end of that section, so your text does not repeat them.",
            self.quoted_lines()
        )
    }

    /// Whether `line` of the text under `heading` holds nothing but what that section's line
    /// fields write: one of their labels at least, and else only their numbers, units,
    /// punctuation and Markdown marks (`- **Responses:** 16, Average rating: 3.125`). Rein
    /// writes those lines itself; a line with any other word stays the model's.
    fn only_restates(&self, heading: &str, line: &str) -> bool {
        let mut rest = line.to_lowercase();
        let mut labels: Vec<String> = self
            .lines_under(heading)
            .map(|f| f.label.to_lowercase())
            .collect();
        // `mobile responses` before `responses`.
        labels.sort_by_key(|l| std::cmp::Reverse(l.len()));
        let mut named = false;
        for label in &labels {
            if rest.contains(label.as_str()) {
                named = true;
                rest = rest.replace(label.as_str(), " ");
            }
        }
        for unit in self.lines_under(heading).filter_map(LineField::unit) {
            rest = rest.replace(&unit.to_lowercase(), " ");
        }
        named && !rest.chars().any(char::is_alphabetic)
    }

    /// `params` of a `write_sections` call with the line fields taken out and their lines
    /// written at the end of their sections' texts, after a blank line (so no table or list of
    /// the text takes them in), the lines of those texts that only restate them left out, and a
    /// note naming those; also each field's line and number. Or why the call is refused,
    /// nothing written: a line field missing or not a number.
    #[allow(clippy::type_complexity)]
    pub(super) fn with_lines_written(
        &self,
        params: &Value,
    ) -> Result<(Value, Option<String>, Vec<(&LineField, String)>), String> {
        let Some(given) = params.as_object().filter(|_| !self.lines.is_empty()) else {
            return Ok((params.clone(), None, Vec::new()));
        };
        let mut fields: Map<String, Value> = given.clone();
        let mut problems = Vec::new();
        let mut written: Vec<(&LineField, String, String)> = Vec::new();
        for f in &self.lines {
            let value = match fields.remove(&f.label) {
                None => {
                    problems.push(format!("missing `{}`", f.label));
                    continue;
                }
                Some(Value::String(s)) => s,
                Some(Value::Number(n)) => n.to_string(),
                Some(other) => other.to_string(),
            };
            match f.line(&value) {
                Some(line) => written.push((f, line, value.trim().to_string())),
                None => problems.push(format!(
                    "`{}` must be its number alone, in digits (no label, unit or thousands separator){}, not `{}`",
                    f.label,
                    f.check.decimals()
                        .map_or(String::new(), |n| format!(", with {}", exact_decimals(n))),
                    clip(&value, SHOWN_VALUE_CHARS)
                )),
            }
        }
        if !problems.is_empty() {
            return Err(format!(
                "{WRITE_SECTIONS} needs the number of each of the task's lines {} as its own field, so nothing was written: {}",
                self.quoted_lines(),
                problems.join("; ")
            ));
        }
        let mut left_out: Vec<String> = Vec::new();
        for (_, heading) in &self.headings {
            let own: Vec<&str> = written
                .iter()
                .filter(|(f, _, _)| &f.heading == heading)
                .map(|(_, l, _)| l.as_str())
                .collect();
            if own.is_empty() {
                continue;
            }
            // A text that is missing or not text is refused by `compose` as before.
            let Some(text) = fields.get(heading.as_str()).and_then(Value::as_str) else {
                continue;
            };
            let kept: Vec<&str> = text
                .split('\n')
                .filter(|l| {
                    let restates = self.only_restates(heading, l);
                    if restates {
                        left_out.push(format!("`{}`", clip(l.trim(), SHOWN_VALUE_CHARS * 2)));
                    }
                    !restates
                })
                .collect();
            let kept = kept.join("\n");
            let kept = kept.trim_end();
            let body = if kept.trim().is_empty() {
                own.join("\n")
            } else {
                format!("{kept}\n\n{}", own.join("\n"))
            };
            fields.insert(heading.clone(), Value::String(body));
        }
        let note = (!left_out.is_empty()).then(|| {
            format!(
                "Rein wrote the task's lines from their fields at the end of their sections and left out these lines of your text, which only restated them: {}",
                left_out.join(", ")
            )
        });
        let lines = written.into_iter().map(|(f, _, v)| (f, v)).collect();
        Ok((Value::Object(fields), note, lines))
    }

    /// Why the composed file `text` cannot be written, if it cannot: for some line field, the
    /// judge's own reading of the file (every statement of its figure, one in its section) is
    /// not exactly the field's number. The rest of the text states the figure otherwise, or
    /// hides Rein's line (an unclosed code block or comment), and the check would fail whatever
    /// the field says; nothing of the expected value is consulted.
    pub(super) fn lines_misread(
        &self,
        text: &str,
        lines: &[(&LineField, String)],
    ) -> Option<String> {
        let mut problems = Vec::new();
        for (f, value) in lines {
            let Ok(want) = value.parse::<f64>() else {
                continue;
            };
            match statements_in(&f.check, text) {
                Ok(read) if read.iter().all(|n| *n == want) => {}
                Ok(read) => {
                    let other: Vec<String> = read
                        .iter()
                        .filter(|n| **n != want)
                        .map(|n| n.to_string())
                        .collect();
                    problems.push(format!(
                        "the file would state `{}` as {} as well as the field's {value}",
                        f.label,
                        other.join(", ")
                    ));
                }
                Err(facts) => problems.push(format!(
                    "for `{}` the judge would read: {}",
                    f.label,
                    facts.join("; ")
                )),
            }
        }
        (!problems.is_empty()).then(|| {
            format!(
                "{WRITE_SECTIONS} would write the task's lines where the rest of the file contradicts or hides them, so nothing was written: {}. Leave those lines out of your text (Rein writes them from their fields) and close any code block or comment you open",
                problems.join("; ")
            )
        })
    }

    /// The lines of a section's `current` text that its line fields' checks read and that
    /// `new_text` states none of: a `rewrite_section` of that section keeps them (the model was
    /// told its text does not repeat them).
    pub(super) fn kept_lines(&self, heading: &str, current: &str, new_text: &str) -> Vec<String> {
        let mut kept: Vec<String> = Vec::new();
        for f in self.lines_under(heading) {
            let Some(re) = f.regex() else {
                continue;
            };
            let reads = |l: &&str| re.is_match(l.trim_end_matches('\r'));
            if new_text.split('\n').any(|l| reads(&l)) {
                continue;
            }
            for l in current.split('\n').filter(reads) {
                let l = l.trim_end_matches('\r').to_string();
                if !kept.contains(&l) {
                    kept.push(l);
                }
            }
        }
        kept
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::checks::Check;

    fn numeric(id: &str, stated: &str, section: &str, units: &[&str]) -> Value {
        json!({"id": id, "kind": "numeric_consistency", "path": "out/r.md",
               "stated": {"regex": stated}, "units": units, "section": section,
               "expected": {"from": "csv", "path": "s.csv", "op": "sum", "column": "amount"}})
    }

    fn spec(v: Value) -> CheckSpec {
        serde_json::from_value::<Check>(v).unwrap().spec
    }

    #[test]
    fn a_line_is_written_only_with_a_plain_number_the_check_reads_back() {
        let f = LineField {
            heading: "Totals".into(),
            label: "Travel".into(),
            template: "Travel: N EUR".into(),
            check: spec(numeric(
                "t",
                r"(?im)^\s*travel\s*:\s*(.*?)\.?\s*$",
                "Totals",
                &["EUR"],
            )),
        };
        assert_eq!(f.line("2374.68").as_deref(), Some("Travel: 2374.68 EUR"));
        assert_eq!(f.line(" 12 ").as_deref(), Some("Travel: 12 EUR"));
        for bad in [
            "$2374.68",
            "2,374.68",
            "2374.68 EUR",
            "",
            "N",
            "1e5",
            "12\nTotal: 3",
        ] {
            assert_eq!(f.line(bad), None, "{bad:?}");
        }
        assert_eq!(f.unit(), Some("EUR"));
    }
}
