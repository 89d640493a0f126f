//! Lever `copied-strings`: with `write_json`, the text values a contract says are copied from
//! the inputs (a `grounded` check's JSON claim, an `entries_match` text field) are held by
//! constrained decoding to a run of whole words of one line of the inputs this run has read
//! whole. The model still chooses which words; the judge checks them as before.
//!
//! A run may drop the punctuation that ends its last word or starts its first (`Co` from
//! `Co.`, `boxes` from `boxes,`): still a substring, so still grounded. A value that spans two
//! lines, or a part of a word, cannot be written while the lever is on (the registry's own
//! schema check still takes it from a remote model, which is never held by a pattern).
//!
//! The pattern is one alternation over the runs that start at each word: O(words x line
//! length) characters a line. Past [`COPIED_PATTERN_MAX_CHARS`] it is not used at all, and the
//! run's journal says so.

use std::collections::BTreeSet;

use serde_json::Value;

/// Longest pattern the lever hands to decoding: about 8 KB of ordinary prose lines; past it,
/// the values are not held (and the journal says so).
pub const COPIED_PATTERN_MAX_CHARS: usize = 40_000;

/// Punctuation a run may leave off the end of its last word.
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '"', '\''];
/// Punctuation a run may leave off the start of its first word.
const LEADING: &[char] = &['(', '[', '"', '\''];

/// Where the held strings are in the deliverable's schema (a JSON Pointer into the document;
/// every string under it is held) and the pattern that holds them.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldStrings {
    pub pointer: String,
    pub pattern: String,
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
            line_runs(line, &mut runs);
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

/// Adds, for each word of `line`, the pattern of the runs that start there (and, when the word
/// opens with punctuation, of those that start after it).
fn line_runs(line: &str, runs: &mut BTreeSet<String>) {
    let words = words(line);
    // `from[j]`: the runs that start at word j, nested so a run may stop after any word.
    let mut from: Vec<String> = vec![String::new(); words.len()];
    for j in (0..words.len()).rev() {
        let more = from
            .get(j + 1)
            .map(|next| format!("{}{next}", esc(words[j].gap)));
        from[j] = word_then(words[j].text, more.as_deref());
        runs.insert(from[j].clone());
        let opened = words[j].text.trim_start_matches(LEADING);
        if !opened.is_empty() && opened.len() < words[j].text.len() {
            runs.insert(word_then(opened, more.as_deref()));
        }
    }
}

/// A word, then optionally `more` (the gap and the runs from the next word); the run may also
/// end on the word without its closing punctuation.
fn word_then(word: &str, more: Option<&str>) -> String {
    let core = word.trim_end_matches(TRAILING);
    let more = more.map(|m| format!("(?:{m})?")).unwrap_or_default();
    if core.is_empty() || core.len() == word.len() {
        return format!("{}{more}", esc(word));
    }
    format!("{}(?:{}{more})?", esc(core), esc(&word[core.len()..]))
}

fn esc(s: &str) -> String {
    regex::escape(s)
}

/// Holds every free string of `schema` at `pointer` (a JSON Pointer into documents of that
/// schema: a number steps into `items`, a name into `properties`) to `pattern`. A string that
/// already has a `pattern`, a `const`, an `enum` or a `format` keeps its own rule. `false` when the
/// pointer leads nowhere in the schema.
pub fn hold_strings(schema: &mut Value, pointer: &str, pattern: &str) -> bool {
    let mut at = schema;
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let next = if token.parse::<usize>().is_ok() || token == "-" {
            at.get_mut("items")
        } else {
            at.get_mut("properties").and_then(|p| p.get_mut(&token))
        };
        match next {
            Some(n) => at = n,
            None => return false,
        }
    }
    hold_all(at, pattern);
    true
}

fn hold_all(schema: &mut Value, pattern: &str) {
    let Value::Object(map) = schema else { return };
    let is_string = map.get("type").and_then(Value::as_str) == Some("string");
    let fixed = ["pattern", "const", "enum", "format"]
        .iter()
        .any(|k| map.contains_key(*k));
    if is_string && !fixed {
        map.insert("pattern".into(), Value::String(pattern.to_string()));
    }
    for key in ["properties", "patternProperties"] {
        if let Some(Value::Object(children)) = map.get_mut(key) {
            children.values_mut().for_each(|c| hold_all(c, pattern));
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = map.get_mut(key) {
            hold_all(child, pattern);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = map.get_mut(key) {
            children.iter_mut().for_each(|c| hold_all(c, pattern));
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
        let mut all = schema.clone();
        assert!(hold_strings(&mut all, "", "^x$"));
        let item = &all["properties"]["invoices"]["items"]["properties"];
        assert_eq!(item["vendor"]["pattern"], "^x$");
        assert_eq!(item["vendor"]["minLength"], 2);
        assert_eq!(item["invoice_number"]["pattern"], "^INV-[0-9]{4}-[0-9]{3}$");
        assert!(item["kind"].get("pattern").is_none());
        assert!(item["total"].get("pattern").is_none());
        assert_eq!(all["properties"]["note"]["pattern"], "^x$");

        let mut one = schema.clone();
        assert!(hold_strings(&mut one, "/invoices/0/vendor", "^y$"));
        assert_eq!(
            one["properties"]["invoices"]["items"]["properties"]["vendor"]["pattern"],
            "^y$"
        );
        assert!(one["properties"]["note"].get("pattern").is_none());

        let mut nowhere = schema.clone();
        assert!(!hold_strings(&mut nowhere, "/invoices/0/missing", "^z$"));
        assert!(!hold_strings(&mut nowhere, "/absent", "^z$"));
        assert_eq!(nowhere, schema);
    }
}
