//! The `stated-lines` lever: when the task quotes a line with a placeholder number
//! (`'Total hours: N'`) that the contract's own numeric check reads in one section of a
//! `write_sections` deliverable, that section's field must contain the line's label followed
//! by a digit, held by constrained decoding (a JSON schema `pattern`). The model still writes
//! the number and the judge still checks it; what cannot happen is a report that forgets the
//! line. A label is used only when the check's regex reads a number from `<label>: 12345`, so
//! the constraint can never ask for a line the judge would not read.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::sections::{Outline, WRITE_SECTIONS};
use crate::checks::{heading_key, same_path, CheckSpec, Locator};
use crate::mission::FrozenContract;

/// A quoted line with a number placeholder: `'Total hours: N'`, `"Open bugs: <count>"`. The
/// label is plain words only, so it is the same text in every regex dialect.
static QUOTED_LINE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"['"`‘“]([A-Za-z][A-Za-z0-9 ]{0,39}?):[ ](?:N|X|n|<[A-Za-z ]{1,20}>|\{[A-Za-z ]{1,20}\})['"`’”]"#,
    )
    .ok()
});

/// A number no task writes by chance, to try a label against a check's regex.
const PROBE: &str = "12345";

/// One section that must hold a labelled number line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatedLine {
    /// The outline heading whose field gets the constraint.
    pub heading: String,
    /// The label as the task quotes it (`Total hours`).
    pub label: String,
}

impl StatedLine {
    /// The `pattern` of the field: the label, a colon, a space and a digit, anywhere in the
    /// text (JSON schema patterns search, they are not anchored).
    pub fn pattern(&self) -> String {
        format!("{}: [0-9]", self.label)
    }
}

/// The stated lines of a contract's outline: for each `numeric_consistency` check on the
/// deliverable, scoped to one of the outline's headings and located by a regex, the first
/// label the task quotes whose `<label>: 12345` line that regex reads as 12345.
pub fn stated_lines(contract: &FrozenContract, outline: &Outline) -> Vec<StatedLine> {
    let m = &contract.mission;
    let labels = quoted_labels(&m.prompt);
    let mut lines: Vec<StatedLine> = Vec::new();
    for check in &m.checks {
        let CheckSpec::NumericConsistency {
            path,
            stated: Locator::Regex(pattern),
            section: Some(section),
            ..
        } = &check.spec
        else {
            continue;
        };
        if !same_path(path, &outline.path) {
            continue;
        }
        let key = heading_key(section);
        let Some((_, heading)) = outline.headings.iter().find(|(_, h)| heading_key(h) == key)
        else {
            continue;
        };
        let Ok(re) = Regex::new(pattern) else {
            continue;
        };
        let Some(label) = labels.iter().find(|l| reads_probe(&re, l)) else {
            continue;
        };
        let line = StatedLine {
            heading: heading.clone(),
            label: label.clone(),
        };
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines
}

/// Whether `re` reads the probe number from the line `<label>: 12345` (its first group, or
/// the whole match when it has none).
fn reads_probe(re: &Regex, label: &str) -> bool {
    let line = format!("{label}: {PROBE}");
    re.captures(&line).is_some_and(|c| {
        c.get(1)
            .or_else(|| c.get(0))
            .is_some_and(|m| m.as_str().trim().trim_end_matches('.') == PROBE)
    })
}

fn quoted_labels(prompt: &str) -> Vec<String> {
    let Some(re) = QUOTED_LINE.as_ref() else {
        return Vec::new();
    };
    re.captures_iter(prompt)
        .map(|c| c[1].trim().to_string())
        .collect()
}

/// Holds each stated line's field of `write_sections` in an action schema to its pattern.
pub fn constrain_sections(action_schema: &mut Value, lines: &[StatedLine]) {
    let Some(branches) = action_schema["anyOf"].as_array_mut() else {
        return;
    };
    for branch in branches {
        if branch["properties"]["action"]["const"].as_str() != Some(WRITE_SECTIONS) {
            continue;
        }
        for line in lines {
            let field = &mut branch["properties"]["parameters"]["properties"][&line.heading];
            if field.is_object() {
                field["pattern"] = Value::String(line.pattern());
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const DESK_TOTAL: &str = r"(?im)(?:\btotal[\s_-]*hours\s*[:=|\x{2013}\x{2014}-]|^\s*total\s*\|)[\s:|]*(.*?)\.?[\s|]*$";

    #[test]
    fn quoted_lines_give_labels_and_other_quotes_do_not() {
        let p = "end with the line 'Total hours: N', then \"Open bugs: <count>\" and `Cost: {amount}`; not 'Goal', '# Risks', 'a: b' or 'Total: 64'.";
        assert_eq!(quoted_labels(p), vec!["Total hours", "Open bugs", "Cost"]);
    }

    #[test]
    fn a_label_is_kept_only_when_the_check_reads_the_number_of_its_line() {
        let re = Regex::new(DESK_TOTAL).unwrap();
        assert!(reads_probe(&re, "Total hours"));
        assert!(!reads_probe(&re, "Hours"), "the check would not read it");
        assert!(!reads_probe(&re, "Open bugs"));
        // A regex without a group reads its whole match.
        let whole = Regex::new(r"[0-9]+").unwrap();
        assert!(reads_probe(&whole, "Total"));
    }

    #[test]
    fn the_pattern_finds_the_line_anywhere_and_needs_a_digit() {
        let line = StatedLine {
            heading: "Tasks".into(),
            label: "Total hours".into(),
        };
        let re = Regex::new(&line.pattern()).unwrap();
        assert!(re.is_match("- Renewal API: 16 hours\nTotal hours: 64"));
        assert!(re.is_match("Total hours: 64 hours."));
        assert!(!re.is_match("- Renewal API: 16 hours"));
        assert!(!re.is_match("Total hours: N"));
        assert!(!re.is_match("Total hours: sixty-four"));
    }
}
