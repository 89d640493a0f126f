//! Checks that read what the prose says: a fact stated in one sentence, every value of a list
//! mentioned, and the deliverable written rather than pasted from the inputs.

use std::collections::{BTreeSet, HashSet};

use regex::{Regex, RegexBuilder};

use super::normalize::{normalize, normalize_bytes};
use super::numeric::{column_index, csv_table};
use super::spec::ValueSource;
use super::text::preview;
use super::{Ctx, Judged};

/// Words that turn a statement into its opposite.
const NEGATION_CUES: &str = r"(?i)\b(no|not|never|none|nothing|without|nor|neither|cannot)\b|n't\b";

/// The sentences of a text: split at line ends and at `.`, `!`, `?`, `;` that end a clause
/// (followed by white space or the end, so `300.50` and `v1.2` stay whole).
pub(crate) fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, b) in bytes.iter().enumerate() {
            let ends = matches!(b, b'.' | b'!' | b'?' | b';')
                && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace());
            if ends {
                out.push(line[start..=i].trim());
                start = i + 1;
            }
        }
        out.push(line[start..].trim());
    }
    out.retain(|s| !s.is_empty());
    out
}

pub(crate) fn statement(
    cx: &Ctx<'_>,
    path: &str,
    section: Option<&str>,
    all: &[String],
    unnegated: bool,
) -> (bool, Vec<String>) {
    let text = match cx
        .read_prose(path, false)
        .and_then(|p| p.scope(section).map_err(|e| format!("{path}: {e}")))
    {
        Ok(t) => t,
        Err(fact) => return (false, vec![fact]),
    };
    let mut patterns = Vec::with_capacity(all.len());
    for p in all {
        match RegexBuilder::new(p).case_insensitive(true).build() {
            Ok(re) => patterns.push(re),
            Err(e) => return (false, vec![format!("invalid pattern `{p}`: {e}")]),
        }
    }
    let negation = match Regex::new(NEGATION_CUES) {
        Ok(r) => r,
        Err(e) => return (false, vec![format!("internal negation pattern: {e}")]),
    };
    let scope = section
        .map(|s| format!(" in section `{s}`"))
        .unwrap_or_default();
    let mut negated = None;
    for s in sentences(&text) {
        if patterns.iter().all(|re| re.is_match(s)) {
            if unnegated && negation.is_match(s) {
                negated.get_or_insert(s);
                continue;
            }
            return (
                true,
                vec![format!("{path}{scope}: the statement `{}`", preview(s))],
            );
        }
    }
    let mut facts = vec![format!(
        "{path}{scope}: no sentence states all of: {}",
        all.iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    if let Some(s) = negated {
        facts.push(format!(
            "{path}{scope}: `{}` says it only negated",
            preview(s)
        ));
    }
    (false, facts)
}

pub(crate) fn mentions_all(
    cx: &Ctx<'_>,
    path: &str,
    section: Option<&str>,
    values: &ValueSource,
) -> Judged {
    let mut j = Judged::default();
    let text = match cx
        .read_prose(path, false)
        .and_then(|p| p.scope(section).map_err(|e| format!("{path}: {e}")))
    {
        Ok(t) => squash(&t),
        Err(fact) => {
            j.say(fact);
            return j;
        }
    };
    let ValueSource::Csv {
        path: source,
        column,
    } = values;
    let wanted: BTreeSet<String> = match csv_table(cx, source).and_then(|(header, rows)| {
        let ci = column_index(source, &header, column)?;
        Ok(rows
            .iter()
            .filter_map(|r| r.get(ci))
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect())
    }) {
        Ok(w) => w,
        Err(fact) => {
            j.say(fact);
            return j;
        }
    };
    if wanted.is_empty() {
        j.say(format!(
            "{source}: column `{column}` has no values to look for"
        ));
        return j;
    }
    let missing: Vec<&String> = wanted
        .iter()
        .filter(|v| !text.contains(&squash(v)))
        .collect();
    let scope = section
        .map(|s| format!("section `{s}` of {path}"))
        .unwrap_or_else(|| path.to_string());
    if missing.is_empty() {
        j.say(format!(
            "{scope}: mentions all {} values of column `{column}` of {source}",
            wanted.len()
        ));
        j.passed = true;
    } else {
        j.say(format!(
            "{scope}: {} of {} values of column `{column}` of {source} are not mentioned",
            missing.len(),
            wanted.len()
        ));
        j.withhold(format!(
            "not mentioned: {}",
            missing
                .iter()
                .map(|v| format!("`{v}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    j
}

/// Lower case with runs of white space folded to one space, for mentions.
fn squash(s: &str) -> String {
    normalize(s)
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Lower-case words (runs of letters and digits) of a text.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

pub(crate) fn not_copied(
    cx: &Ctx<'_>,
    path: &str,
    sources: &[String],
    min_run_words: u32,
    max_fraction: f64,
) -> (bool, Vec<String>) {
    let bytes = match cx.read_required(path) {
        Ok(b) => b,
        Err(fact) => return (false, vec![fact]),
    };
    let mine = words(&normalize_bytes(&bytes));
    let sources: Vec<String> = if sources.is_empty() {
        cx.contract.inputs.iter().map(|h| h.path.clone()).collect()
    } else {
        sources.to_vec()
    };
    let n = min_run_words.max(1) as usize;
    let mut runs: HashSet<Vec<String>> = HashSet::new();
    for s in &sources {
        match cx.read_frozen_input(s) {
            Ok(b) => {
                let w = words(&normalize_bytes(&b));
                for win in w.windows(n) {
                    runs.insert(win.to_vec());
                }
            }
            Err(fact) => return (false, vec![fact]),
        }
    }
    if mine.is_empty() {
        return (false, vec![format!("{path}: no words")]);
    }
    let mut copied = vec![false; mine.len()];
    for (i, win) in mine.windows(n).enumerate() {
        if runs.contains(win) {
            copied[i..i + n].iter_mut().for_each(|c| *c = true);
        }
    }
    let count = copied.iter().filter(|c| **c).count();
    let fraction = count as f64 / mine.len() as f64;
    let ok = fraction <= max_fraction;
    (
        ok,
        vec![format!(
            "{path}: {count} of {} words ({:.0} %) lie in runs of {n}+ words copied from the inputs (at most {:.0} % allowed)",
            mine.len(),
            fraction * 100.0,
            max_fraction * 100.0
        )],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_split_at_clause_ends_only() {
        assert_eq!(
            sentences(
                "There are no real risks; the supplier delivered early. Total 300.50 EUR\nv1.2 ok"
            ),
            vec![
                "There are no real risks;",
                "the supplier delivered early.",
                "Total 300.50 EUR",
                "v1.2 ok"
            ]
        );
    }

    #[test]
    fn negation_cues() {
        let re = Regex::new(NEGATION_CUES).unwrap();
        for s in [
            "no risk",
            "it is not late",
            "isn't late",
            "never",
            "without keys",
        ] {
            assert!(re.is_match(s), "{s}");
        }
        for s in ["the supplier is late", "notes", "nonetheless", "know"] {
            assert!(!re.is_match(s), "{s}");
        }
    }
}
