//! Lever `readable-figures`: a `write_sections` or `rewrite_section` call whose file would state
//! a figure of a `numeric_consistency` check in a way the judge cannot read as one number (three
//! figures on one line joined by `|`, words after the number, two statements where the check
//! allows one, the line in another section) is refused before the gate, nothing written, with
//! the judge's own facts about that line. The 1.5B wrote report-gradebook's Physics and History
//! sections as `Physics average: 70.4 | Physics best: 90 | Physics fails: 1`, every figure on one
//! line, and the three checks of each failed. Only how the file states a figure is judged here,
//! never whether it is right: nothing of the expected value is computed or said, and a figure
//! the file does not state at all is left to the model (it may be written later, or by
//! `line-fields`).

use super::prompt::clip;
use super::sections::{Outline, WRITE_SECTIONS};
use crate::checks::{same_path, statements_in, CheckSpec, Locator};
use crate::mission::FrozenContract;

/// The start of the judge's fact for a check whose regex matches no statement of the file.
const NOT_STATED: &str = "no statement matches";

impl Outline {
    /// The outline with the contract's `numeric_consistency` checks on its deliverable that a
    /// regex locates: the figures [`Outline::figures_unread`] reads in a composed file.
    pub fn with_figure_checks(mut self, contract: &FrozenContract) -> Outline {
        self.figure_checks = contract
            .mission
            .checks
            .iter()
            .filter(|c| {
                matches!(&c.spec, CheckSpec::NumericConsistency {
                    path,
                    stated: Locator::Regex(_),
                    ..
                } if same_path(path, &self.path))
            })
            .map(|c| c.spec.clone())
            .collect();
        self
    }

    /// Why the composed file `text` cannot be written, if it cannot: the judge would read some
    /// figure check's statement in it and not as one number (its facts, which hold the line as
    /// written and never an expected value). A fact the judge also gives on `before` (the file
    /// as it is, for `rewrite_section`) does not refuse: that line is outside the rewrite.
    /// At most [`FACTS_SHOWN`] checks are named, one fact each, and the message is capped.
    pub(super) fn figures_unread(&self, text: &str, before: Option<&str>) -> Option<String> {
        // A line field's figure is `line-fields`' to hold (its refusal says to leave the line to
        // Rein).
        let own = |c: &CheckSpec| self.lines.iter().any(|f| f.check == *c);
        let mut facts: Vec<String> = Vec::new();
        let mut refused = 0usize;
        for check in self.figure_checks.iter().filter(|c| !own(c)) {
            let Err(said) = statements_in(check, text) else {
                continue;
            };
            if not_stated(check, &said) {
                continue;
            }
            let old: Vec<String> = before
                .and_then(|b| statements_in(check, b).err())
                .unwrap_or_default();
            let Some(new) = said.into_iter().find(|f| !old.contains(f)) else {
                continue;
            };
            refused += 1;
            if facts.len() < FACTS_SHOWN && !facts.contains(&new) {
                facts.push(new);
            }
        }
        if refused == 0 {
            return None;
        }
        let more = refused.saturating_sub(facts.len());
        let mut listed = facts.join("; ");
        if more > 0 {
            listed.push_str("; and more figure lines like these (not all are listed)");
        }
        Some(format!(
            "{WRITE_SECTIONS} would write figure lines the judge cannot read as one number each, so nothing was written: {}. Write each figure line on a line of its own, as the task quotes it, once, in its section",
            clip(&listed, REFUSAL_MAX_CHARS)
        ))
    }
}

/// Most checks a refusal names (one fact each); it says how many more there are.
pub const FACTS_SHOWN: usize = 4;

/// Most characters of the facts a refusal quotes.
const REFUSAL_MAX_CHARS: usize = 1_000;

/// Whether the judge's facts `said` for `check` are only that no statement matches its regex:
/// the figure is not in the file. Compared with the judge's whole fact, not a word of it (a
/// statement quoting "no statement matches" is still a statement).
fn not_stated(check: &CheckSpec, said: &[String]) -> bool {
    let CheckSpec::NumericConsistency {
        path,
        stated: Locator::Regex(pattern),
        ..
    } = check
    else {
        return false;
    };
    let absent = format!("{path}: {NOT_STATED} `{pattern}`");
    said.iter().all(|f| *f == absent)
}
