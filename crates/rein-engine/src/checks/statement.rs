//! Checks that read what the prose says: a fact stated in one sentence, every value of a list
//! mentioned, and the deliverable written rather than pasted from the inputs.

use std::collections::{BTreeSet, HashMap};

use regex::{Regex, RegexBuilder};

use super::normalize::reading;
use super::numbers::{parse_strict, NumberRules};
use super::numeric::{column_index, csv_table};
use super::prose::Prose;
use super::spec::{RowNumbers, ValueSource};
use super::text::preview;
use super::{Ctx, Judged};

/// Words that turn a statement into its opposite.
const NEGATION_CUES: &str = r"(?i)\b(no|not|never|none|nothing|without|nor|neither|cannot|hardly|barely|scarcely|unable|fail(s|ed)? to)\b|n't\b";

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

/// Phrases with a negation word that negate nothing: `not only ... but also`.
const NOT_NEGATIONS: &str = r"(?i)\b(not only|not just|no doubt|nothing but)\b";

/// A verb's negation (`is not`, `isn't`, `cannot`, `will never`): it denies the sentence's
/// predicate wherever it stands.
const VERB_NEGATION: &str = r"(?i)\b(is|are|was|were|will|would|does|do|did|can|could|should|shall|has|have|had|may|might|must)\s+(not|never)\b|\b\w+n['’]t\b|\bcannot\b";

/// Whether a negation denies the statement. Before the last mention of a fact the sentence
/// states, any cue does (`will not let members renew loans from a phone`, `renew loans, though
/// not from a phone`). After it, only a verb's negation does (`renewing loans from a phone is
/// not the goal`): a bare `not` or `without` there qualifies something else (`from a phone,
/// not at the desk`, `from a phone without visiting the desk`).
fn negates(negation: &Regex, patterns: &[Regex], s: &str) -> bool {
    let masked = match Regex::new(NOT_NEGATIONS) {
        Ok(re) => re.replace_all(s, |c: &regex::Captures<'_>| " ".repeat(c[0].len())),
        Err(_) => s.into(),
    };
    let last_fact = patterns
        .iter()
        .filter_map(|re| re.find_iter(s).last().map(|m| m.end()))
        .max()
        .unwrap_or(s.len());
    let verb = Regex::new(VERB_NEGATION).map_or(true, |re| re.is_match(&masked[last_fact..]));
    verb || negation.find_iter(&masked).any(|m| m.start() < last_fact)
}

pub(crate) fn statement(
    cx: &Ctx<'_>,
    path: &str,
    section: Option<&str>,
    all: &[String],
    unnegated: bool,
) -> Judged {
    let text = match cx
        .read_prose(path, false)
        .and_then(|p| p.scope(section).map_err(|e| format!("{path}: {e}")))
    {
        Ok(t) => t,
        Err(fact) => return (false, vec![fact]).into(),
    };
    let mut patterns = Vec::with_capacity(all.len());
    for p in all {
        match RegexBuilder::new(p).case_insensitive(true).build() {
            Ok(re) => patterns.push(re),
            Err(e) => return (false, vec![format!("invalid pattern `{p}`: {e}")]).into(),
        }
    }
    let negation = match Regex::new(NEGATION_CUES) {
        Ok(r) => r,
        Err(e) => return (false, vec![format!("internal negation pattern: {e}")]).into(),
    };
    let scope = section
        .map(|s| format!(" in section `{s}`"))
        .unwrap_or_default();
    let mut negated = None;
    for s in sentences(&text) {
        if patterns.iter().all(|re| re.is_match(s)) {
            if unnegated && negates(&negation, &patterns, s) {
                negated.get_or_insert(s);
                continue;
            }
            return (
                true,
                vec![format!("{path}{scope}: the statement `{}`", preview(s))],
            )
                .into();
        }
    }
    // The patterns are the contract's (in a search task, the answer): withheld from the model.
    let mut j = Judged::default();
    j.say(format!(
        "{path}{scope}: no sentence states every fact this check requires"
    ));
    j.withhold(format!(
        "required in one sentence: {}",
        all.iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    // Which sentence came closest is withheld too: of several candidates written negated, it
    // would name the one that holds the answer.
    if let Some(s) = negated {
        j.say(format!(
            "{path}{scope}: a sentence states every required fact, but only negated"
        ));
        j.withhold(format!(
            "{path}{scope}: `{}` says it only negated",
            preview(s)
        ));
    }
    j
}

pub(crate) fn mentions_all(
    cx: &Ctx<'_>,
    path: &str,
    section: Option<&str>,
    values: &ValueSource,
    numbers: Option<&RowNumbers>,
) -> Judged {
    let mut j = Judged::default();
    let scoped = match cx
        .read_prose(path, false)
        .and_then(|p| p.scope(section).map_err(|e| format!("{path}: {e}")))
    {
        Ok(t) => t,
        Err(fact) => {
            j.say(fact);
            return j;
        }
    };
    let text = squash(&scoped);
    let ValueSource::Csv {
        path: source,
        column,
    } = values;
    let table = match csv_table(cx, source) {
        Ok(t) => t,
        Err(fact) => {
            j.say(fact);
            return j;
        }
    };
    let wanted: BTreeSet<String> = match column_index(source, &table.0, column) {
        Ok(ci) => table
            .1
            .iter()
            .filter_map(|r| r.get(ci))
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect(),
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
    let numbers_ok = match numbers {
        None => true,
        Some(rule) => row_numbers(&mut j, &scope, &scoped, source, column, &table, rule),
    };
    if missing.is_empty() {
        j.say(format!(
            "{scope}: mentions all {} values of column `{column}` of {source}",
            wanted.len()
        ));
        j.passed = numbers_ok;
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

/// The cells of a table row as prose writes it (`a | b | c |`), or `None` for another line.
fn cells(line: &str) -> Option<Vec<String>> {
    line.trim_end().strip_suffix('|').map(|row| {
        row.split('|')
            .map(|c| c.trim().to_lowercase())
            .collect::<Vec<_>>()
    })
}

/// `mentions_all` with `numbers`: every number a line states beside exactly one value must be
/// that value's row's (see `RowNumbers`). Facts name what the deliverable states; the true
/// numbers are withheld.
fn row_numbers(
    j: &mut Judged,
    scope: &str,
    text: &str,
    source: &str,
    column: &str,
    (header, rows): &(Vec<String>, Vec<Vec<String>>),
    rule: &RowNumbers,
) -> bool {
    let (ki, ni) = match (
        column_index(source, header, column),
        column_index(source, header, &rule.column),
    ) {
        (Ok(k), Ok(n)) => (k, n),
        (Err(fact), _) | (_, Err(fact)) => {
            j.say(fact);
            return false;
        }
    };
    let plain = NumberRules::default();
    let with_units = NumberRules {
        signed: false,
        units: &rule.units,
    };
    // Each value with the numbers its rows hold.
    let mut truth: Vec<(String, String, Vec<f64>)> = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let (Some(key), Some(cell)) = (row.get(ki), row.get(ni)) else {
            continue;
        };
        let key = key.trim();
        if key.is_empty() {
            continue;
        }
        let n = match parse_strict(cell, &plain) {
            Ok(n) => n,
            Err(why) => {
                j.say(format!(
                    "{source}: row {}: `{}` in column `{}` is not a number: {why}",
                    r + 2,
                    preview(cell),
                    rule.column
                ));
                return false;
            }
        };
        match truth.iter_mut().find(|(k, _, _)| k == key) {
            Some((_, _, ns)) => ns.push(n),
            None => truth.push((key.to_string(), squash(key), vec![n])),
        }
    }
    // Where no other column of the source holds a number, a bare number in a cell after a
    // value (`Release checklist,5`, a pasted row `Renewal API,Jonas,done,16`) can only be this
    // column's: it is read too, where the unit rule below cannot read it.
    let bare_numbers_are_ours = rows.iter().all(|row| {
        row.iter()
            .enumerate()
            .all(|(i, cell)| i == ni || parse_strict(cell, &plain).is_err())
    });
    let mut units: Vec<&String> = rule.units.iter().collect();
    units.sort_by_key(|u| std::cmp::Reverse(u.len()));
    let alternatives = units
        .iter()
        .map(|u| regex::escape(u))
        .collect::<Vec<_>>()
        .join("|");
    let with_unit = if alternatives.is_empty() {
        None
    } else {
        Regex::new(&format!(
            r"(?i)(?:^|[^\w.,])([0-9][0-9.,]*?)[.,]?\s*(?:{alternatives})(?:[^\w]|$)"
        ))
        .ok()
    };
    // A table header cell names the column when one of its words is the column's name or a
    // unit: `Hours`, `Hrs`, `Time (h)`.
    let mut header_words: Vec<String> = vec![rule.column.trim().to_lowercase()];
    header_words.extend(rule.units.iter().map(|u| u.trim().to_lowercase()));
    let is_header = |cell: &str| {
        cell.split(|c: char| !c.is_alphanumeric())
            .any(|w| header_words.iter().any(|h| h == w))
    };
    let mut column_at: Option<usize> = None;
    let mut ok = true;
    for line in text.lines() {
        let row_cells = cells(line);
        match &row_cells {
            Some(c)
                if c.iter().any(|x| is_header(x))
                    && !c.iter().any(|x| x.parse::<f64>().is_ok()) =>
            {
                column_at = c.iter().position(|x| is_header(x));
                continue;
            }
            Some(_) => {}
            None => column_at = None,
        }
        let squashed = squash(line);
        // Each mention of a value owns the text up to the next mention: `A (12 hours), B (16
        // hours)` states 12 for A and 16 for B.
        let mut mentions: Vec<(usize, usize, usize)> = truth
            .iter()
            .enumerate()
            .flat_map(|(k, (_, s, _))| {
                squashed
                    .match_indices(s.as_str())
                    .map(move |(at, m)| (at, at + m.len(), k))
                    // A value inside a word is no mention of it (`a` in `Ann`); a plural is
                    // (`Reservation screens: 11 hours`).
                    .filter(|(at, end, _)| {
                        !squashed[..*at].ends_with(char::is_alphanumeric)
                            && ["s", "es", "'s", ""].iter().any(|suffix| {
                                squashed[*end..]
                                    .strip_prefix(suffix)
                                    .is_some_and(|rest| !rest.starts_with(char::is_alphanumeric))
                            })
                    })
            })
            .collect();
        mentions.sort_by_key(|(start, end, _)| (*start, std::cmp::Reverse(*end)));
        let mut kept: Vec<(usize, usize, usize)> = Vec::new();
        for m in mentions {
            if kept.last().is_none_or(|last| m.0 >= last.1) {
                kept.push(m);
            }
        }
        let mut stated: Vec<(usize, String)> = Vec::new();
        for (i, (start, after, k)) in kept.iter().enumerate() {
            let end = kept.get(i + 1).map_or(squashed.len(), |n| n.0);
            if let Some(re) = &with_unit {
                for c in re.captures_iter(&squashed[*start..end]) {
                    if let Some(m) = c.get(1) {
                        stated.push((*k, m.as_str().to_string()));
                    }
                }
            }
            if bare_numbers_are_ours && row_cells.is_none() {
                stated.extend(bare_numbers(&squashed[*after..end]).map(|n| (*k, n)));
            }
        }
        // A table row that names one value states its number in the column's cell.
        let mut named: Vec<usize> = kept.iter().map(|m| m.2).collect();
        named.sort_unstable();
        named.dedup();
        if let (Some(i), Some(c), [k]) = (column_at, &row_cells, named.as_slice()) {
            if let Some(cell) = c.get(i).filter(|x| !x.is_empty()) {
                stated.push((*k, cell.clone()));
            }
        }
        for (k, raw) in stated {
            let (key, _, want) = &truth[k];
            let agrees = parse_strict(&raw, &with_units)
                .is_ok_and(|v| want.iter().any(|w| (v - w).abs() <= FLOAT_SLACK));
            if !agrees {
                ok = false;
                j.say(format!(
                    "{scope}: the line `{}` states `{}` for `{key}`, which is not its `{}` in {source}",
                    preview(line),
                    preview(&raw),
                    rule.column
                ));
            }
        }
    }
    if ok {
        j.say(format!(
            "{scope}: every `{}` stated beside a value agrees with {source}",
            rule.column
        ));
    }
    ok
}

/// The bare numbers the text after a value states for it: where the value is a cell of a row,
/// each comma, semicolon or bar cell that is a number once quotes, brackets and a closing full
/// stop are set aside (a pasted row, `Release checklist,Maya,planned,"5".`), and the first
/// number when only marks stand between it and the value and no word follows it (`Release
/// checklist: 5`, `- 5`, `(5)`; not `phase 2` or `2 people`, and a number with a unit is the
/// unit rule's).
fn bare_numbers(after: &str) -> impl Iterator<Item = String> + '_ {
    let marks: &[char] = &['.', '"', '\'', '(', ')', '[', ']', '*', '`', ' '];
    let plain = NumberRules::default();
    // Only a row: the value is a cell of its own (`Release checklist,...`), so `4 hours, due
    // June 30, 2024` reads no year.
    let row = after
        .trim_start_matches(['"', '\'', ' '])
        .starts_with([',', ';', '|']);
    let cells = after
        .split([',', ';', '|'])
        .filter(move |_| row)
        .filter_map(move |cell| {
            let cell = cell.trim().trim_matches(marks);
            parse_strict(cell, &plain).is_ok().then(|| cell.to_string())
        });
    let first = after.find(|c: char| c.is_ascii_digit()).and_then(|at| {
        if after[..at].contains(char::is_alphabetic) {
            return None;
        }
        let len = after[at..]
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
            .unwrap_or(after.len() - at);
        let token = after[at..at + len].trim_end_matches(['.', ',']);
        let next = after[at + len..].trim_start();
        // A date or a time (`2024-06-30`, `10:30`) is no count.
        let date_like = next.starts_with(['-', '/', ':'])
            && next[1..].starts_with(|c: char| c.is_ascii_digit());
        (!next.starts_with(char::is_alphabetic) && !date_like).then(|| token.to_string())
    });
    cells.chain(first)
}

/// Slack for binary floating point when comparing a stated number with a CSV cell.
const FLOAT_SLACK: f64 = 1e-9;

/// Read as a person reads it, lower case, runs of white space folded to one space, for
/// mentions.
fn squash(s: &str) -> String {
    reading(s)
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

/// A copied run may jump this many words (in the deliverable and in the source) and still be
/// one paste: a word changed, added or dropped every few words does not make a paste one's own
/// words.
const COPY_GAP_WORDS: usize = 2;

/// Whether an input is a table (CSV or TSV) rather than prose.
pub(crate) fn is_table(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".csv") || lower.ends_with(".tsv")
}

/// The shortest exact piece a copied run is chained from.
const COPY_PIECE_WORDS: usize = 3;

/// Marks the words of `mine` that lie in a run of at least `n` words copied from `source`,
/// where a run is exact pieces of at least `COPY_PIECE_WORDS` words, each starting within
/// `gap` words of where the last one ended, in both texts (`gap` 0: one exact run).
fn mark_copied(mine: &[String], source: &[String], n: usize, gap: usize, copied: &mut [bool]) {
    let mut at: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, w) in source.iter().enumerate() {
        at.entry(w.as_str()).or_default().push(j);
    }
    let run = |i: usize, j: usize| {
        mine[i..]
            .iter()
            .zip(&source[j..])
            .take_while(|(a, b)| a == b)
            .count()
    };
    let piece = COPY_PIECE_WORDS.min(n).max(1);
    for i in 0..mine.len() {
        for &j in at.get(mine[i].as_str()).map_or(&[][..], Vec::as_slice) {
            let r = run(i, j);
            if r < piece {
                continue;
            }
            let (mut a, mut b, mut total) = (i + r, j + r, r);
            loop {
                let next = (a..=a + gap)
                    .filter(|x| *x < mine.len())
                    .flat_map(|x| {
                        (b..=b + gap)
                            .filter(|y| *y < source.len())
                            .map(move |y| (x, y))
                    })
                    .map(|(x, y)| (x, y, run(x, y)))
                    .filter(|(_, _, r)| *r >= piece)
                    .max_by_key(|(x, y, r)| (*r, usize::MAX - x - y));
                let Some((x, y, r)) = next else { break };
                total += r;
                a = x + r;
                b = y + r;
            }
            if total >= n {
                copied[i..a].iter_mut().for_each(|c| *c = true);
            }
        }
    }
}

pub(crate) fn not_copied(
    cx: &Ctx<'_>,
    path: &str,
    section: Option<&str>,
    sources: &[String],
    min_run_words: u32,
    max_fraction: f64,
) -> (bool, Vec<String>) {
    let bytes = match cx.read_required(path) {
        Ok(b) => b,
        Err(fact) => return (false, vec![fact]),
    };
    let text = match section {
        None => String::from_utf8_lossy(&bytes).into_owned(),
        // Every line a reader may see, doubtful ones too: hidden text pasted is pasted.
        Some(s) => match Prose::of(path, &bytes, false).scope_all(Some(s)) {
            Ok(t) => t,
            Err(why) => return (false, vec![format!("{path}: {why}")]),
        },
    };
    let scope = section.map_or_else(|| path.to_string(), |s| format!("{path}, section `{s}`,"));
    // Words line by line (a word never spans a line break), so a copied word has a line.
    let lines: Vec<(usize, &str, Vec<String>)> = text
        .lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line, words(&reading(line))))
        .collect();
    let mine: Vec<String> = lines.iter().flat_map(|(_, _, w)| w.clone()).collect();
    let sources: Vec<String> = if sources.is_empty() {
        cx.contract.inputs.iter().map(|h| h.path.clone()).collect()
    } else {
        sources.to_vec()
    };
    let n = min_run_words.max(1) as usize;
    let mut texts = Vec::with_capacity(sources.len());
    for s in &sources {
        match cx.read_frozen_input(s) {
            Ok(b) => texts.push(words(&reading(&String::from_utf8_lossy(&b)))),
            Err(fact) => return (false, vec![fact]),
        }
    }
    if mine.is_empty() {
        return (false, vec![format!("{scope}: no words")]);
    }
    let mut copied = vec![false; mine.len()];
    for (source, words) in sources.iter().zip(&texts) {
        // A table's cells are data the deliverable is asked to restate: a row rewritten with
        // units or in another order is the work, only a verbatim run of the table is a paste.
        let gap = if is_table(source) { 0 } else { COPY_GAP_WORDS };
        mark_copied(&mine, words, n, gap, &mut copied);
    }
    let count = copied.iter().filter(|c| **c).count();
    let fraction = count as f64 / mine.len() as f64;
    let ok = fraction <= max_fraction;
    let mut facts = vec![format!(
        "{scope}: {count} of {} words ({:.0} %) lie in runs of {n}+ words copied from the inputs, a changed, added or dropped word every few words included (at most {:.0} % allowed)",
        mine.len(),
        fraction * 100.0,
        max_fraction * 100.0
    )];
    if !ok {
        facts.push(most_copied_lines(&lines, &copied, section.is_some()));
    }
    (ok, facts)
}

/// How many of the most copied lines a failed `not_copied` names.
const COPIED_LINES_SHOWN: usize = 3;

/// Longest excerpt of a copied line in a fact.
const COPIED_LINE_CHARS: usize = 48;

/// The lines of the deliverable that hold the most copied words, by number and start, so the
/// writer knows which to put in its own words (the deliverable's own text, never an input's:
/// a fact may be shown to the model).
fn most_copied_lines(
    lines: &[(usize, &str, Vec<String>)],
    copied: &[bool],
    in_section: bool,
) -> String {
    let of = if in_section { " of the section" } else { "" };
    let mut at = 0;
    let mut per_line: Vec<(usize, usize, &str)> = Vec::new();
    for (number, line, words) in lines {
        let n = copied[at..at + words.len()].iter().filter(|c| **c).count();
        at += words.len();
        if n > 0 {
            per_line.push((n, *number, line));
        }
    }
    per_line.sort_by_key(|(n, number, _)| (std::cmp::Reverse(*n), *number));
    let shown: Vec<String> = per_line
        .iter()
        .take(COPIED_LINES_SHOWN)
        .map(|(n, number, line)| {
            let line = line.trim();
            let excerpt: String = line.chars().take(COPIED_LINE_CHARS).collect();
            let more = if excerpt.len() < line.len() {
                "…"
            } else {
                ""
            };
            format!("line {number}{of} ({n} words) `{excerpt}{more}`")
        })
        .collect();
    let left = per_line.len().saturating_sub(COPIED_LINES_SHOWN);
    let tail = if left > 0 {
        format!(" and {left} more line{}", if left == 1 { "" } else { "s" })
    } else {
        String::new()
    };
    format!("most copied: {}{tail}", shown.join(", "))
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
    fn a_negation_counts_only_where_it_can_deny_the_facts() {
        let neg = Regex::new(NEGATION_CUES).unwrap();
        let facts = [
            RegexBuilder::new(r"\brenew")
                .case_insensitive(true)
                .build()
                .unwrap(),
            RegexBuilder::new(r"\bphones?\b")
                .case_insensitive(true)
                .build()
                .unwrap(),
        ];
        for denied in [
            "The app will not let members renew loans from a phone.",
            "Members will be unable to renew loans from a phone.",
            "Members renew loans, though not from a phone.",
            "The phone app lets members renew loans, though not from a phone.",
            "Renewing loans from a phone is not the goal.",
            "Members renew loans from a phone, which they cannot do yet.",
        ] {
            assert!(negates(&neg, &facts, denied), "{denied}");
        }
        for stated in [
            "Members renew loans from a phone without visiting the desk.",
            "The app will not only let members renew loans but also use their phones.",
            "Members renew loans from a phone, so nobody queues.",
            "Members renew loans from a phone, not at the front desk.",
        ] {
            assert!(!negates(&neg, &facts, stated), "{stated}");
        }
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

    fn w(s: &str) -> Vec<String> {
        words(s)
    }

    #[test]
    fn a_paste_with_changed_or_added_words_is_still_a_paste() {
        let src = w("jonas reported that the catalogue supplier has not yet delivered the search api keys this is the main risk");
        for mine in [
            "jonas reported that the catalogue supplier has really not yet delivered the search api indeed keys this is the main risk",
            "jonas reported that the vendor supplier has not yet sent the search api keys this was the main risk",
            "jonas said that the catalogue supplier has not yet delivered search api keys this is the main risk",
        ] {
            let m = w(mine);
            let mut copied = vec![false; m.len()];
            mark_copied(&m, &src, 8, COPY_GAP_WORDS, &mut copied);
            let n = copied.iter().filter(|c| **c).count();
            assert!(n * 10 >= m.len() * 8, "{mine}: {n} of {}", m.len());
        }
        // Own words sharing short phrases are not a paste.
        let m = w("the supplier still owes us the search api keys so testing the main risk waits");
        let mut copied = vec![false; m.len()];
        mark_copied(&m, &src, 8, COPY_GAP_WORDS, &mut copied);
        assert_eq!(copied.iter().filter(|c| **c).count(), 0);
    }

    #[test]
    fn a_failed_paste_names_its_most_copied_lines_by_number() {
        // The 1.5B's report (journal run 559): the goal sentence and the CSV rows pasted.
        let overview = w("Goal: give members of the Harbor Library a phone app to renew loans and reserve books, replacing the paper request forms at the front desk.");
        let csv = w("task,owner,status,hours\nRenewal screen design,Priya,done,12\nRenewal API,Jonas,done,16\nReservation screen,Priya,in progress,10\nCatalogue search integration,Jonas,blocked,14");
        let report = "## Goal\n\nGive members of the Harbor Library a phone app to renew loans and reserve books, replacing the paper request forms at the front desk.\n\n## Tasks\n\nRenewal screen design, Priya,done,12\nRenewal API,Jonas,done,16\nReservation screen,Priya,in progress,10\n- Release checklist, four hours, Maya\n";
        let lines: Vec<(usize, &str, Vec<String>)> = report
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l, w(l)))
            .collect();
        let mine: Vec<String> = lines.iter().flat_map(|(_, _, w)| w.clone()).collect();
        let mut copied = vec![false; mine.len()];
        mark_copied(&mine, &overview, 8, COPY_GAP_WORDS, &mut copied);
        mark_copied(&mine, &csv, 8, 0, &mut copied);
        let fact = most_copied_lines(&lines, &copied, false);
        assert!(
            fact.starts_with("most copied: line 3 (24 words) `Give members of the Harbor Library a phone app t…`, line 7 (6 words) `Renewal screen design, Priya,done,12`, line 9 (6 words)"),
            "{fact}"
        );
        // Line 8's row and line 1's heading word, which starts the pasted run of the goal.
        assert!(fact.ends_with(" and 2 more lines"), "{fact}");
        // The line in the writer's own words is never named.
        assert!(!fact.contains("Release checklist"), "{fact}");
    }

    fn tasks() -> (Vec<String>, Vec<Vec<String>>) {
        let row = |t: &str, h: &str| vec![t.to_string(), h.to_string()];
        (
            vec!["task".into(), "hours".into()],
            vec![row("Renewal API", "16"), row("Reservation screen", "10")],
        )
    }

    fn numbers_agree(text: &str) -> bool {
        let rule = RowNumbers {
            column: "hours".into(),
            units: vec!["hours".into(), "h".into()],
        };
        let mut j = Judged::default();
        row_numbers(&mut j, "s", text, "t.csv", "task", &tasks(), &rule)
    }

    #[test]
    fn numbers_stated_beside_a_value_are_its_rows() {
        assert!(numbers_agree(
            "- Renewal API: 16 hours, done\n- Reservation screen: 10h\nTotal hours: 26"
        ));
        assert!(numbers_agree(
            "Renewal API (16 hours) and Reservation screen (10 hours)."
        ));
        assert!(numbers_agree(
            "Task | Hours |\nRenewal API | 16 |\nReservation screen | 10 |"
        ));
        assert!(numbers_agree(
            "- Renewal API: done\n- Reservation screen, in progress"
        ));
        assert!(!numbers_agree(
            "- Renewal API: 10 hours\n- Reservation screen: 16 hours"
        ));
        assert!(!numbers_agree(
            "Renewal API (16 hours) and Reservation screen (6 hours)."
        ));
        assert!(!numbers_agree(
            "Task | Hours |\nRenewal API | 18 |\nReservation screen | 10 |"
        ));
        assert!(!numbers_agree(
            "Task | Time (h) |\nRenewal API | 10 |\nReservation screen | 16 |"
        ));
        assert!(!numbers_agree("- Renewal API: 1,6 hours"));
    }
}
