//! The `stated-lines` lever: when the task quotes a line with a placeholder number
//! (`'Total hours: N'`) that the contract's own numeric check reads in one section of a
//! `write_sections` deliverable, that section's field must contain the line's label followed
//! by a digit, held by constrained decoding (a JSON schema `pattern`). The model still writes
//! the number and the judge still checks it; what cannot happen is a report that forgets the
//! line. A label is used only when the check's regex reads a number from `<label>: 12345`, so
//! the constraint can never ask for a line the judge would not read.

use std::sync::LazyLock;

use super::sections::Outline;
use crate::checks::{heading_key, same_path, stated_in_line, CheckSpec, Locator};
use crate::mission::FrozenContract;
use regex::Regex;

/// A quoted line with a number placeholder and perhaps a unit after it, whole: `'Travel: N
/// EUR'`, `'Total hours: N'`, `"Open bugs: <count>"`; the placeholder is found in it by
/// [`PLACEHOLDER`]. The label is plain words only, so it is the same text in every regex
/// dialect.
static QUOTED_TEMPLATE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"['"`‘“]([A-Za-z][A-Za-z0-9 ]{0,39}?:[ ](?:N|X|n|<[A-Za-z ]{1,20}>|\{[A-Za-z ]{1,20}\})(?:[ ][A-Za-z€$%]{1,8})?)['"`’”]"#,
    )
    .ok()
});

/// The placeholder of a [`QUOTED_TEMPLATE`]: what follows its first `: `.
static PLACEHOLDER: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^([^:]+: )(?:N|X|n|<[A-Za-z ]{1,20}>|\{[A-Za-z ]{1,20}\})").ok());

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
    /// The `pattern` of the field: a line break, the label, a colon, a space and a digit,
    /// anywhere in the text (JSON schema patterns search, they are not anchored). The line
    /// break keeps the label at the start of a line: at the end of a length cap, decoding
    /// would otherwise glue it to the word before (`keysTotal hours: 6`), which a check that
    /// wants `\btotal` does not read.
    pub fn pattern(&self) -> String {
        format!("\\n{}: [0-9]", self.label)
    }
}

/// The stated lines of a contract's outline: for each `numeric_consistency` check on the
/// deliverable, scoped to one of the outline's headings and located by a regex, the label the
/// task quotes whose `<label>: 12345` line that regex reads as 12345, when exactly one does
/// (two would leave the choice to Rein, and a prompt may quote a line to forbid it). A heading
/// followed by a deeper one is left alone: the judge reads its section with the subsections,
/// the field holds only the text before them.
pub fn stated_lines(contract: &FrozenContract, outline: &Outline) -> Vec<StatedLine> {
    let m = &contract.mission;
    let labels = quoted_labels(&m.prompt);
    let mut lines: Vec<StatedLine> = Vec::new();
    for (_, pattern, heading) in leaf_numeric_checks(contract, outline) {
        let Some(label) = label_read_by(pattern, &labels) else {
            continue;
        };
        // A line the model gives as a field of its own (lever `line-fields`) is Rein's to write.
        if outline
            .lines
            .iter()
            .any(|f| f.heading == heading && heading_key(&f.label) == heading_key(&label))
        {
            continue;
        }
        let line = StatedLine {
            heading: heading.to_string(),
            label,
        };
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines
}

/// The `numeric_consistency` checks on the outline's deliverable that a regex locates and that
/// are scoped to a heading of the outline with no subsection: each with its regex and that
/// heading.
pub(super) fn leaf_numeric_checks<'c>(
    contract: &'c FrozenContract,
    outline: &'c Outline,
) -> impl Iterator<Item = (&'c CheckSpec, &'c str, &'c str)> {
    contract.mission.checks.iter().filter_map(|check| {
        let CheckSpec::NumericConsistency {
            path,
            stated: Locator::Regex(pattern),
            section: Some(section),
            ..
        } = &check.spec
        else {
            return None;
        };
        if !same_path(path, &outline.path) {
            return None;
        }
        let heading = leaf_heading(outline, section)?;
        Some((&check.spec, pattern.as_str(), heading))
    })
}

/// The outline heading a check scoped to `section` reads, when no deeper heading follows it:
/// the judge reads a section with its subsections, a field holds only the text before them.
fn leaf_heading<'o>(outline: &'o Outline, section: &str) -> Option<&'o str> {
    let key = heading_key(section);
    let at = outline
        .headings
        .iter()
        .position(|(_, h)| heading_key(h) == key)?;
    let (level, heading) = &outline.headings[at];
    let has_subsection = outline
        .headings
        .get(at + 1)
        .is_some_and(|(next, _)| next > level);
    (!has_subsection).then_some(heading.as_str())
}

/// The lines a prompt quotes with a number placeholder (see [`QUOTED_TEMPLATE`]), each whole,
/// in order; a label that stands for a choice gives none.
fn quoted_lines(prompt: &str) -> Vec<&str> {
    let Some(quoted) = QUOTED_TEMPLATE.as_ref() else {
        return Vec::new();
    };
    quoted
        .captures_iter(prompt)
        .filter_map(|c| c.get(1).map(|m| m.as_str()))
        .filter(|t| !stands_for_a_choice(t.split(':').next().unwrap_or_default()))
        .collect()
}

/// A `numeric_consistency` check, its locating regex compiled once for a search over many
/// lines: the regex rules out most of them before the judge's own reading does.
struct Reader<'s> {
    spec: &'s CheckSpec,
    located: Regex,
}

impl<'s> Reader<'s> {
    fn of(spec: &'s CheckSpec) -> Option<Reader<'s>> {
        match spec {
            CheckSpec::NumericConsistency {
                stated: Locator::Regex(pattern),
                ..
            } => Regex::new(pattern)
                .ok()
                .map(|located| Reader { spec, located }),
            _ => None,
        }
    }

    /// Whether the check reads a number in the placeholder's place from `template`.
    fn reads(&self, template: &str) -> bool {
        filled(template, PROBE).is_some_and(|probe| {
            self.located.is_match(&probe) && stated_in_line(self.spec, &probe) == Some(12345.0)
        })
    }
}

/// The line the task's `prompt` quotes for a `numeric_consistency` check's figure, with its
/// placeholder (`'Travel: N EUR'`), when the check reads a number in its place from exactly
/// one quoted line (see [`stated_line`]).
pub fn stated_template(spec: &CheckSpec, prompt: &str) -> Option<String> {
    section_template(spec, prompt, None)
}

/// [`stated_template`]; and with `sibling` (lever `sibling-lines`: the section's heading and
/// the outline), when the check reads no quoted line, the line the task quotes for another
/// section of the outline made for this one (`'Math average: N'` made `'Physics average: N'`
/// for the section Physics, when the task asks for "three lines such as 'Math average: N'" in
/// each course's section). A quoted line counts when its label holds another heading of the
/// outline as a whole word, and that word put to the heading gives a line the check reads a
/// number from in its place; the one line so made, or `None` when none or several are (then
/// the choice would be Rein's). A line the task quotes that the check reads is the task's own
/// choice, made or left open (two of them): a line made for the section never settles it. The
/// label is the contract's: the check's own regex reads it, as for a line the task quotes.
pub fn section_template(
    spec: &CheckSpec,
    prompt: &str,
    sibling: Option<(&str, &Outline)>,
) -> Option<String> {
    let reader = Reader::of(spec)?;
    let quoted = quoted_lines(prompt);
    let read: Vec<&str> = quoted.iter().copied().filter(|t| reader.reads(t)).collect();
    match (read.as_slice(), sibling) {
        ([one], _) => Some((*one).to_string()),
        ([], Some((heading, outline))) => made_for_section(&reader, &quoted, heading, outline),
        _ => None,
    }
}

/// The one line [`section_template`] makes for `heading` from the `quoted` lines of other
/// sections, none of which the check reads.
fn made_for_section(
    reader: &Reader<'_>,
    quoted: &[&str],
    heading: &str,
    outline: &Outline,
) -> Option<String> {
    let own = heading.trim();
    let mut made: Vec<String> = Vec::new();
    for template in quoted {
        let label = template.split(':').next().unwrap_or_default();
        for (_, other) in &outline.headings {
            let other = other.trim();
            if other.is_empty() || heading_key(other) == heading_key(own) {
                continue;
            }
            let Some(at) = whole_word(label, other) else {
                continue;
            };
            let sibling = format!("{}{own}{}", &template[..at], &template[at + other.len()..]);
            if reader.reads(&sibling) && !made.contains(&sibling) {
                made.push(sibling);
            }
        }
    }
    match made.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// Where `word` first stands in `text` as a whole word (no letter or digit just before or
/// after it).
fn whole_word(text: &str, word: &str) -> Option<usize> {
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// A label that is, or holds, a placeholder (`'X: N EUR'`, `'Largest claim N: N'`) stands for
/// a name or a row the task asks for: no line is made of it.
fn stands_for_a_choice(label: &str) -> bool {
    label
        .split_whitespace()
        .any(|w| matches!(w, "N" | "X" | "n"))
}

/// `template` with `value` in place of its placeholder (`Travel: 2374.68 EUR`), when the
/// check reads that line back as `value` under its own pattern and number rules; else `None`.
pub fn stated_line(spec: &CheckSpec, template: &str, value: &str) -> Option<String> {
    let want: f64 = value.trim().parse().ok()?;
    let line = filled(template, value.trim())?;
    (stated_in_line(spec, &line) == Some(want)).then_some(line)
}

/// `template` with `with` in place of its placeholder.
pub(super) fn filled(template: &str, with: &str) -> Option<String> {
    let placeholder = PLACEHOLDER.as_ref()?;
    placeholder.is_match(template).then(|| {
        placeholder
            .replace(template, format!("${{1}}{with}"))
            .into_owned()
    })
}

/// The one label of `labels` whose line `pattern` reads the probe number from; `None` for
/// none, several, or a pattern that does not compile.
fn label_read_by(pattern: &str, labels: &[String]) -> Option<String> {
    let re = Regex::new(pattern).ok()?;
    let read: Vec<&String> = labels.iter().filter(|l| reads_probe(&re, l)).collect();
    match read.as_slice() {
        [label] => Some((*label).clone()),
        _ => None,
    }
}

/// Whether `re` reads the probe number from the line `<label>: 12345` as the judge reads a
/// stated number: its first group.
fn reads_probe(re: &Regex, label: &str) -> bool {
    let line = format!("{label}: {PROBE}");
    re.captures(&line).is_some_and(|c| {
        c.get(1)
            .is_some_and(|m| m.as_str().trim().trim_end_matches('.') == PROBE)
    })
}

/// The labels of the quoted lines that end in a number placeholder: `Total hours` of `'Total
/// hours: N'`. A line with a unit after it (`'Travel: N EUR'`) gives no label: held to
/// `Travel: <digit>`, the 1.5B wrote `Travel: $2374.68 EUR` (refused by the check) and the
/// constraint then made it add `Travel: 7` and the like at the end of the section, statements
/// that disagree (report-expenses and -gradebook, 5 December: 8 and 9 checks failed where the
/// build before failed 1 and 6).
fn quoted_labels(prompt: &str) -> Vec<String> {
    let (Some(re), Some(placeholder)) = (QUOTED_TEMPLATE.as_ref(), PLACEHOLDER.as_ref()) else {
        return Vec::new();
    };
    re.captures_iter(prompt)
        .filter(|c| {
            placeholder
                .find(&c[1])
                .is_some_and(|m| m.end() == c[1].len())
        })
        .filter_map(|c| {
            c[1].split_once(':')
                .map(|(label, _)| label.trim().to_string())
                .filter(|label| !stands_for_a_choice(label))
        })
        .collect()
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
        // A line with a unit after its placeholder gives no label (see `quoted_labels`).
        let units =
            "'Travel: N EUR', 'Total units: N units' and 'Claims: N', not 'Note: N is the count'";
        assert_eq!(quoted_labels(units), vec!["Claims"]);
    }

    #[test]
    fn a_label_is_kept_only_when_the_check_reads_the_number_of_its_line() {
        let re = Regex::new(DESK_TOTAL).unwrap();
        assert!(reads_probe(&re, "Total hours"));
        assert!(!reads_probe(&re, "Hours"), "the check would not read it");
        assert!(!reads_probe(&re, "Open bugs"));
        // The judge reads the first group; a regex without one states nothing.
        let whole = Regex::new(r"[0-9]+").unwrap();
        assert!(!reads_probe(&whole, "Total"));
        let optional = Regex::new(r"Total(?: hours: ([0-9]+))?").unwrap();
        assert!(reads_probe(&optional, "Total hours"));
        assert!(!reads_probe(&optional, "Total"), "the group took no part");
    }

    fn numeric(stated: &str, units: &[&str]) -> CheckSpec {
        let c: crate::checks::Check = serde_json::from_value(serde_json::json!({
            "id": "n", "kind": "numeric_consistency", "path": "out/r.md",
            "stated": {"regex": stated}, "units": units,
            "expected": {"from": "csv", "path": "e.csv", "op": "sum", "column": "amount"}
        }))
        .unwrap();
        c.spec
    }

    const EXPENSES: &str = "'## Totals' holds one line per category, 'Travel: N EUR', 'Meals: N EUR', then 'Total: N EUR' (all claims) and 'Claims: N' (the number of claims).";

    #[test]
    fn the_task_s_line_is_filled_only_where_the_check_reads_it_back() {
        let travel = numeric(r"(?im)^\s*travel\s*:\s*(.*?)\.?\s*$", &["EUR"]);
        let template = stated_template(&travel, EXPENSES).unwrap();
        assert_eq!(template, "Travel: N EUR");
        assert_eq!(
            stated_line(&travel, &template, "2374.68").as_deref(),
            Some("Travel: 2374.68 EUR")
        );
        // A unit the check does not take is never written into the line.
        let no_unit = numeric(r"(?im)^\s*travel\s*:\s*(.*?)\.?\s*$", &[]);
        assert_eq!(stated_template(&no_unit, EXPENSES), None);
        // `Total: N EUR` and `Claims: N`: each check reads only its own line.
        let claims = numeric(r"(?im)^\s*claims\s*:\s*(.*?)\.?\s*$", &[]);
        assert_eq!(
            stated_template(&claims, EXPENSES).as_deref(),
            Some("Claims: N")
        );
        assert_eq!(
            stated_line(&claims, "Claims: N", "26").as_deref(),
            Some("Claims: 26")
        );
        // A value the check would not read as that number (not a number, or a sign the check
        // refuses) gives no line.
        assert_eq!(stated_line(&claims, "Claims: N", "n/a"), None);
        assert_eq!(stated_line(&claims, "Claims: N", "-3"), None);
        // Two quoted lines the check reads alike: Rein does not choose.
        let loose = numeric(r"(?im)^\s*\w+\s*:\s*([0-9.]+)", &[]);
        assert_eq!(stated_template(&loose, EXPENSES), None);
        // desk_task's total.
        let total = numeric(DESK_TOTAL, &[]);
        let prompt = "end Tasks with the line 'Total hours: N' (the sum of the hours column)";
        let template = stated_template(&total, prompt).unwrap();
        assert_eq!(
            stated_line(&total, &template, "64").as_deref(),
            Some("Total hours: 64")
        );
    }

    fn contract(prompt: &str, section: &str, stated: &str, headings: &[&str]) -> FrozenContract {
        let hours = serde_json::json!({"from": "csv", "path": "data/tasks.csv", "op": "sum", "column": "hours"});
        contract_expecting(prompt, section, stated, headings, hours)
    }

    fn contract_expecting(
        prompt: &str,
        section: &str,
        stated: &str,
        headings: &[&str],
        expected: serde_json::Value,
    ) -> FrozenContract {
        let mission = serde_json::json!({
            "id": "t", "mode": "automatic", "description": "d", "prompt": prompt,
            "fixtures": "fixtures", "inputs": ["data/tasks.csv"],
            "tools": ["read_file", "create_file", "finish"],
            "required_artifact": "out/summary.md",
            "checks": [
                {"id": "r", "kind": "report_complete", "path": "out/summary.md",
                 "headings": headings, "in_order": true},
                {"id": "n", "kind": "numeric_consistency", "path": "out/summary.md",
                 "section": section, "stated": {"regex": stated},
                 "expected": expected}
            ],
            "budgets": {"max_turns": 8, "max_seconds": 60}
        });
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("fixtures/data")).unwrap();
        std::fs::write(
            dir.path().join("fixtures/data/tasks.csv"),
            "task,hours\na,1\n",
        )
        .unwrap();
        let file = dir.path().join("mission.json");
        std::fs::write(&file, mission.to_string()).unwrap();
        crate::mission::Mission::load(&file).unwrap()
    }

    #[test]
    fn one_reading_label_under_a_leaf_heading_or_none() {
        let desk =
            "Write '# Project summary', '## Goal', '## Tasks'; end Tasks with 'Total hours: N'.";
        let c = contract(
            desk,
            "Tasks",
            DESK_TOTAL,
            &["Project summary", "Goal", "Tasks"],
        );
        let o = Outline::of(&c).unwrap();
        assert_eq!(
            stated_lines(&c, &o),
            vec![StatedLine {
                heading: "Tasks".into(),
                label: "Total hours".into()
            }]
        );
        // A loose regex reads two quoted labels, one of them forbidden: no constraint.
        let loose = r"(?i)\btotal\D*?(\d[\d,]*)";
        let two = "Never write 'Total cost: N'. Write '# Project summary', '## Goal', '## Tasks'; end Tasks with 'Total hours: N'.";
        let c = contract(two, "Tasks", loose, &["Project summary", "Goal", "Tasks"]);
        assert!(stated_lines(&c, &Outline::of(&c).unwrap()).is_empty());
        // The title's section holds the subsections for the judge, not for the field.
        let c = contract(
            desk,
            "Project summary",
            DESK_TOTAL,
            &["Project summary", "Goal", "Tasks"],
        );
        assert!(stated_lines(&c, &Outline::of(&c).unwrap()).is_empty());
        // No quoted line, no constraint.
        let plain = "Write '# Project summary', '## Goal', '## Tasks' with the total hours.";
        let c = contract(
            plain,
            "Tasks",
            DESK_TOTAL,
            &["Project summary", "Goal", "Tasks"],
        );
        assert!(stated_lines(&c, &Outline::of(&c).unwrap()).is_empty());
    }

    #[test]
    fn the_pattern_finds_the_line_anywhere_and_needs_a_digit() {
        let line = StatedLine {
            heading: "Tasks".into(),
            label: "Total hours".into(),
        };
        let re = Regex::new(&line.pattern()).unwrap();
        assert!(re.is_match("- Renewal API: 16 hours\nTotal hours: 64"));
        assert!(re.is_match("- x\nTotal hours: 64 hours.\nMore."));
        assert!(!re.is_match("- Renewal API: 16 hours"));
        assert!(!re.is_match("API keysTotal hours: 6"), "glued to a word");
        assert!(!re.is_match("Total hours: N"));
        assert!(!re.is_match("Total hours: sixty-four"));
    }

    fn filtered(stated: &str, units: &[&str], column: &str, equals: &str) -> CheckSpec {
        let c: crate::checks::Check = serde_json::from_value(serde_json::json!({
            "id": "n", "kind": "numeric_consistency", "path": "out/r.md",
            "stated": {"regex": stated}, "units": units,
            "expected": {"from": "csv", "path": "s.csv", "op": "sum", "column": "on_hand",
                         "filter": {"column": column, "equals": equals}}
        }))
        .unwrap();
        c.spec
    }

    const STOCK: &str = "'## Units on hand' holds one line per warehouse (Bristol, Glasgow, Leeds), '<Warehouse>: N units' (the sum of on_hand), then 'Total units: N'.";
    const BRISTOL: &str = r"(?im)^\s*Bristol\s*:\s*(.*?)\.?\s*$";

    #[test]
    fn a_label_placeholder_is_never_filled_in() {
        // `'<Warehouse>: N units'` may be one line per warehouse or, as `'<Category> tickets:
        // N'` for the category with the most tickets, the task's answer: no program tells them
        // apart from the prompt, so neither gives a line or a constraint.
        let bristol = filtered(BRISTOL, &["units", "unit"], "warehouse", "Bristol");
        assert_eq!(stated_template(&bristol, STOCK), None);
        let support = "Under 'Numbers' put '<Category> tickets: N' for the category with the most tickets (billing, sync or login).";
        let sync = filtered(
            r"(?im)^\s*sync tickets\s*:\s*(.*?)\.?\s*$",
            &[],
            "category",
            "sync",
        );
        assert_eq!(stated_template(&sync, support), None);
        // The line after it, with a label of its own, still gives one.
        let total = filtered(
            r"(?im)^\s*total units\s*:\s*(.*?)\.?\s*$",
            &[],
            "warehouse",
            "Bristol",
        );
        assert_eq!(
            stated_template(&total, STOCK).as_deref(),
            Some("Total units: N")
        );
    }

    #[test]
    fn a_label_placeholder_is_no_stated_line() {
        let prompt = format!("Write '## Units on hand' and '## Reorder now'. {STOCK}");
        let expected = serde_json::json!({"from": "csv", "path": "data/tasks.csv", "op": "sum",
            "column": "hours", "filter": {"column": "warehouse", "equals": "Bristol"}});
        let c = contract_expecting(
            &prompt,
            "Units on hand",
            BRISTOL,
            &["Units on hand", "Reorder now"],
            expected,
        );
        assert!(stated_lines(&c, &Outline::of(&c).unwrap()).is_empty());
    }
}
