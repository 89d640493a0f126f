//! Lever `copied-strings`: with `write_json`, the text values a contract says are copied from
//! the inputs (a `grounded` check's JSON claim, an `entries_match` text field) are held by
//! constrained decoding to a run of whole words of one line of the inputs this run has read
//! whole. The model still chooses which words; the judge checks them as before.
//!
//! A run may drop the punctuation that ends its last word or starts its first, or a part of
//! it (`Co` and `Co.` from `Co.),`, `boxes` from `boxes,`): still a substring, so still
//! grounded. A value that spans two lines, or a part of a word, cannot be written while the
//! lever is on (the registry's own schema check still takes it from a remote model, which is
//! never held by a pattern).
//!
//! The pattern is one alternation over the runs that start at each word: O(words x line
//! length) characters a line. Past [`COPIED_PATTERN_MAX_CHARS`] it is not used at all, and the
//! run's journal says so. A string with its own `minLength`/`maxLength` gets the pattern of the
//! runs of that length instead, and no bounds: llguidance proves a pattern meeting bounds
//! non-empty by a bounded search, which a long `minLength` over many lines runs out of (the
//! schema then cannot be built, and `write_json` is lost).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// Longest pattern the lever hands to decoding: about 8 KB of ordinary prose lines; past it,
/// the values are not held (and the journal says so).
pub const COPIED_PATTERN_MAX_CHARS: usize = 40_000;

/// Punctuation a run may leave off the end of its last word.
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '"', '\''];
/// Punctuation a run may leave off the start of its first word (and a byte order mark, which a
/// file saved with one glues to its first word).
const LEADING: &[char] = &['(', '[', '"', '\'', '\u{feff}'];

/// Where the held strings are in the deliverable's schema (a JSON Pointer into the document;
/// every string under it is held), the pattern that holds them, and the texts it is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldStrings {
    pub pointer: String,
    pub pattern: String,
    pub texts: Vec<String>,
}

/// What holding did at one pointer: the strings given a pattern, and the free strings left free
/// because no run fits them (their own length bounds; the lines every check on them allows).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Holding {
    pub held: usize,
    pub unfit: usize,
}

/// Why no pattern was made from the texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoPattern {
    /// No line of the texts holds a word.
    NoWords,
    /// The pattern would have this many characters, over [`COPIED_PATTERN_MAX_CHARS`].
    OverCap(usize),
}

/// The anchored pattern of a value copied from one line of `texts`: a run of whole words with
/// the whitespace between them as written.
pub fn copied_text_pattern(texts: &[&str]) -> Result<String, NoPattern> {
    copied_text_pattern_within(texts, 0, usize::MAX)
}

/// [`copied_text_pattern`] of the runs of `min..=max` characters only (`NoWords` when none).
pub fn copied_text_pattern_within(
    texts: &[&str],
    min: usize,
    max: usize,
) -> Result<String, NoPattern> {
    let mut runs = BTreeSet::new();
    // A line's runs are about as long as its tails together; said before they are built, so
    // a long line costs no more than counting.
    let mut size = 0usize;
    for text in texts {
        for line in text.lines() {
            size += tails_len(line);
            if size > COPIED_PATTERN_MAX_CHARS {
                return Err(NoPattern::OverCap(size));
            }
            line_runs(line, min, max, &mut runs);
        }
    }
    if runs.is_empty() {
        return Err(NoPattern::NoWords);
    }
    let body: Vec<&str> = runs.iter().map(String::as_str).collect();
    let pattern = format!("^(?:{})$", body.join("|"));
    if pattern.len() > COPIED_PATTERN_MAX_CHARS {
        return Err(NoPattern::OverCap(pattern.len()));
    }
    Ok(pattern)
}

/// The characters of every tail of `line` that starts at a word, together: a lower bound of
/// the size of its runs' pattern.
fn tails_len(line: &str) -> usize {
    let words = words(line);
    let mut tail = 0;
    let mut total = 0;
    for w in words.iter().rev() {
        tail += w.text.len() + w.gap.len();
        total += tail;
    }
    total
}

/// One word of a line and the whitespace that follows it.
struct Word<'a> {
    text: &'a str,
    gap: &'a str,
}

fn words(line: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let mut rest = line.trim_start();
    while !rest.is_empty() {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (text, after) = rest.split_at(end);
        let next = after.len() - after.trim_start().len();
        let (gap, tail) = after.split_at(next);
        out.push(Word { text, gap });
        rest = tail;
    }
    out
}

/// Adds, for each word of `line`, the pattern of the runs of `min..=max` characters that start
/// there (and after each part of its opening punctuation).
fn line_runs(line: &str, min: usize, max: usize, runs: &mut BTreeSet<String>) {
    let words = words(line);
    for j in 0..words.len() {
        let mut first = words[j].text;
        loop {
            if let Some(run) = runs_from(first, &words[j..], min, max) {
                runs.insert(run);
            }
            match first.strip_prefix(LEADING) {
                Some(rest) if !rest.trim_start_matches(LEADING).is_empty() => first = rest,
                _ => break,
            }
        }
    }
}

/// The runs that start with `first` (the text of `words[0]`, or its end) and go on through
/// `words`, nested so a run may stop after any word, or inside the closing punctuation of its
/// last one, where its length is within `min..=max`. `None` when no run is.
fn runs_from(first: &str, words: &[Word<'_>], min: usize, max: usize) -> Option<String> {
    // The pieces a run is made of, in order; a run may end after each (when its length fits).
    let mut pieces: Vec<(String, bool)> = Vec::new();
    let mut last = None;
    let mut len = 0usize;
    'words: for (i, w) in words.iter().enumerate() {
        let (gap, text) = if i == 0 {
            ("", first)
        } else {
            (words[i - 1].gap, w.text)
        };
        let core = text.trim_end_matches(TRAILING);
        let mut parts = Vec::new();
        if core.is_empty() || core.len() == text.len() {
            parts.push(format!("{gap}{text}"));
        } else {
            parts.push(format!("{gap}{core}"));
            parts.extend(text[core.len()..].chars().map(String::from));
        }
        for part in parts {
            len += part.chars().count();
            if len > max {
                break 'words;
            }
            let may_end = len >= min;
            pieces.push((esc(&part), may_end));
            if may_end {
                last = Some(pieces.len());
            }
        }
    }
    let pieces = &pieces[..last?];
    let mut out = pieces[0].0.clone();
    for (piece, _) in &pieces[1..] {
        out.push_str("(?:");
        out.push_str(piece);
    }
    // The group of piece i may be left out when the run may end after piece i - 1.
    for i in (1..pieces.len()).rev() {
        out.push(')');
        if pieces[i - 1].1 {
            out.push('?');
        }
    }
    Some(out)
}

fn esc(s: &str) -> String {
    regex::escape(s)
}

/// Holds the free strings of `document` (a deliverable's schema) at each of `held`'s pointers
/// (JSON Pointers into documents of that schema: a name of `properties` steps there, else a
/// number steps into `items`). A string that has its own `pattern`, a `const`, an `enum` or a
/// `format` keeps its own rule. A string two of them reach is held to the lines both may copy
/// from, whatever the order of their checks; one with its own `minLength`/`maxLength` to the
/// runs of that length, its bounds then in the pattern. A string no run fits is left as it is.
/// For each of `held`, what was done, or `None` where its pointer leads nowhere in the schema.
pub fn hold_document(document: &mut Value, held: &[HeldStrings]) -> Vec<Option<Holding>> {
    // Where in the schema each one's free strings are, and which of them reach each.
    let places: Vec<Option<Vec<String>>> = held
        .iter()
        .map(|h| free_strings(document, &h.pointer))
        .collect();
    let mut reached: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
    for (i, found) in places.iter().enumerate() {
        for at in found.iter().flatten() {
            reached.entry(at).or_default().insert(i);
        }
    }
    let mut fitted: BTreeMap<&str, bool> = BTreeMap::new();
    for (at, who) in &reached {
        let fit = match document.pointer_mut(at) {
            Some(Value::Object(node)) => hold_node(node, who, held),
            _ => false,
        };
        fitted.insert(at, fit);
    }
    places
        .iter()
        .map(|found| {
            found.as_ref().map(|f| {
                let mut done = Holding::default();
                for at in f {
                    if fitted.get(at.as_str()).copied().unwrap_or(false) {
                        done.held += 1;
                    } else {
                        done.unfit += 1;
                    }
                }
                done
            })
        })
        .collect()
}

/// Gives the string schema `node` the pattern of the runs `who` (indices into `held`) all
/// allow, within its own length bounds; `false` when there is none.
fn hold_node(
    node: &mut serde_json::Map<String, Value>,
    who: &BTreeSet<usize>,
    held: &[HeldStrings],
) -> bool {
    let bound = |k: &str| {
        node.get(k)
            .and_then(Value::as_u64)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
    };
    let (min, max) = (bound("minLength"), bound("maxLength"));
    let bounded = min.is_some() || max.is_some();
    let pattern = match who.iter().collect::<Vec<_>>()[..] {
        [&one] if !bounded => Ok(held[one].pattern.clone()),
        _ => {
            // The lines every one of them may copy from.
            let mut lines: Option<BTreeSet<&str>> = None;
            for &i in who {
                let these: BTreeSet<&str> = held[i].texts.iter().flat_map(|t| t.lines()).collect();
                lines = Some(match lines {
                    None => these,
                    Some(l) => l.intersection(&these).copied().collect(),
                });
            }
            let lines: Vec<&str> = lines.unwrap_or_default().into_iter().collect();
            copied_text_pattern_within(&lines, min.unwrap_or(0), max.unwrap_or(usize::MAX))
        }
    };
    let Ok(pattern) = pattern else {
        return false;
    };
    node.insert("pattern".into(), Value::String(pattern));
    node.remove("minLength");
    node.remove("maxLength");
    true
}

/// The places (JSON Pointers into the schema itself) of the free strings of `schema` at the
/// document pointer `pointer`; `None` when it leads nowhere in the schema.
fn free_strings(schema: &Value, pointer: &str) -> Option<Vec<String>> {
    let mut at = schema;
    let mut place = String::new();
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        if let Some(next) = at.get("properties").and_then(|p| p.get(&token)) {
            place.push_str(&format!("/properties/{}", escape_token(&token)));
            at = next;
        } else if token.parse::<usize>().is_ok() || token == "-" {
            at = at.get("items")?;
            place.push_str("/items");
        } else {
            return None;
        }
    }
    let mut out = Vec::new();
    collect_free(at, &place, &mut out);
    Some(out)
}

fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn collect_free(schema: &Value, place: &str, out: &mut Vec<String>) {
    let Value::Object(map) = schema else { return };
    let is_string = map.get("type").and_then(Value::as_str) == Some("string");
    let fixed = ["pattern", "const", "enum", "format"]
        .iter()
        .any(|k| map.contains_key(*k));
    if is_string && !fixed {
        out.push(place.to_string());
    }
    for key in ["properties", "patternProperties"] {
        if let Some(Value::Object(children)) = map.get(key) {
            for (name, c) in children {
                collect_free(c, &format!("{place}/{key}/{}", escape_token(name)), out);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = map.get(key) {
            collect_free(child, &format!("{place}/{key}"), out);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = map.get(key) {
            for (i, c) in children.iter().enumerate() {
                collect_free(c, &format!("{place}/{key}/{i}"), out);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use regex::Regex;
    use serde_json::json;

    use super::*;

    const INVOICE: &str = "INVOICE\nInvoice number: INV-2024-002\nVendor: Bayside Cleaning Ltd\r\n\nMonthly cleaning, March          450.00\n\n(Paid) Total due: 450.00 EUR\n";

    fn held() -> Regex {
        Regex::new(&copied_text_pattern(&[INVOICE, "Vendor: Northwind Paper Co."]).unwrap())
            .unwrap()
    }

    #[test]
    fn runs_of_whole_words_of_one_line_are_held() {
        let re = held();
        for good in [
            "Bayside Cleaning Ltd",
            "Vendor: Bayside Cleaning Ltd",
            "Vendor",
            "INV-2024-002",
            "Northwind Paper Co.",
            "Northwind Paper Co",
            "Monthly cleaning",
            "Monthly cleaning, March",
            "cleaning, March          450.00",
            "Paid",
            "(Paid) Total due",
            "Paid) Total due: 450.00 EUR",
            "450.00",
        ] {
            assert!(re.is_match(good), "{good:?}");
        }
    }

    #[test]
    fn what_the_inputs_do_not_hold_word_for_word_is_not() {
        let re = held();
        for bad in [
            "Bayside Cleaning Ltd.",
            "Quayside Books",
            "Bayside  Cleaning Ltd",
            "Cleaning Lt",
            "ayside",
            "March 450.00",
            "Ltd\nMonthly",
            "Ltd\r",
            "",
            " Bayside",
            "Co..",
            "450",
            "Total due: 300.50 EUR",
        ] {
            assert!(!re.is_match(bad), "{bad:?}");
        }
    }

    #[test]
    fn regex_characters_of_the_inputs_are_literal() {
        let re =
            Regex::new(&copied_text_pattern(&["Cost (net): $1.5*2 [a|b] ^x"]).unwrap()).unwrap();
        assert!(re.is_match("$1.5*2 [a|b] ^x"));
        assert!(re.is_match("net"));
        assert!(!re.is_match("$1x5*2"));
        assert!(!re.is_match("a"));
    }

    #[test]
    fn no_words_and_an_over_long_pattern_are_said() {
        assert_eq!(
            copied_text_pattern(&["", "  \n\t\n"]),
            Err(NoPattern::NoWords)
        );
        assert_eq!(copied_text_pattern(&[]), Err(NoPattern::NoWords));
        let long = "word ".repeat(400);
        match copied_text_pattern(&[&long]) {
            Err(NoPattern::OverCap(n)) => assert!(n > COPIED_PATTERN_MAX_CHARS),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn strings_under_the_pointer_are_held_and_own_rules_kept() {
        let schema = json!({"type": "object", "properties": {
            "invoices": {"type": "array", "items": {"type": "object", "properties": {
                "invoice_number": {"type": "string", "pattern": "^INV-[0-9]{4}-[0-9]{3}$"},
                "vendor": {"type": "string", "minLength": 2},
                "kind": {"type": "string", "enum": ["a", "b"]},
                "total": {"type": "number"}}}},
            "note": {"type": "string"}}});
        let texts = vec!["Vendor: Bayside Cleaning Ltd".to_string()];
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let held = |pointer: &str| HeldStrings {
            pointer: pointer.into(),
            pattern: copied_text_pattern(&refs).unwrap(),
            texts: texts.clone(),
        };
        let mut all = schema.clone();
        let done = hold_document(&mut all, &[held("")]);
        assert_eq!(done, vec![Some(Holding { held: 2, unfit: 0 })]);
        let item = &all["properties"]["invoices"]["items"]["properties"];
        // The vendor's own minLength is in its pattern now: runs of 2 characters or more.
        let vendor = Regex::new(item["vendor"]["pattern"].as_str().unwrap()).unwrap();
        assert!(vendor.is_match("Bayside Cleaning Ltd") && !vendor.is_match("Ltd."));
        assert!(item["vendor"].get("minLength").is_none());
        assert_eq!(item["invoice_number"]["pattern"], "^INV-[0-9]{4}-[0-9]{3}$");
        assert!(item["kind"].get("pattern").is_none());
        assert!(item["total"].get("pattern").is_none());
        assert_eq!(
            all["properties"]["note"]["pattern"],
            copied_text_pattern(&refs).unwrap()
        );

        let mut one = schema.clone();
        assert!(hold_document(&mut one, &[held("/invoices/0/vendor")])[0].is_some());
        assert!(
            one["properties"]["invoices"]["items"]["properties"]["vendor"]["pattern"].is_string()
        );
        assert!(one["properties"]["note"].get("pattern").is_none());

        let mut nowhere = schema.clone();
        let done = hold_document(
            &mut nowhere,
            &[held("/invoices/0/missing"), held("/absent")],
        );
        assert_eq!(done, vec![None, None]);
        assert_eq!(nowhere, schema);
    }
}
