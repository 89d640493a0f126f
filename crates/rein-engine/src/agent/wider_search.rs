//! Lever `wider-search`: the search Rein makes again for the model after a `search_text` call
//! of its matched no line. Two widenings, in this order: a glob that left no file to search is
//! dropped, then a pattern no line holds is split into its words, any of which a line may hold,
//! ignoring case. The wider call goes through the gate like any other: the path is the one
//! the model gave (or the folder its wildcard path walks), so it never reaches a file the
//! model's own call could not.

use serde_json::{json, Map, Value};

use rein_workspace::desk::glob_path;

/// Most words of a pattern the wider search looks for.
pub const WIDER_SEARCH_MAX_WORDS: usize = 6;

/// Longest word kept: a longer one is no word of a search (999 `x`s searched ignoring case
/// compile past the tool's pattern-size limit, and Rein's call would be refused).
const MAX_WORD_CHARS: usize = 64;

/// Shortest word kept: shorter ones (`a`, `is`, a regex's `d` of `\d`) match nearly every line.
const MIN_WORD_CHARS: usize = 3;

/// Words that hold no clue of where an answer is: a line holding one is no better than any
/// other, and the 100-line cap of `search_text` would be spent on them.
const FILLER_WORDS: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "from", "was", "were", "are", "has", "have",
    "had", "not", "but", "into", "its", "our", "your", "their", "any", "all", "one", "who",
    "which", "what", "when", "where", "there", "been", "will", "than", "then",
];

/// A search Rein makes for the model, and why, in words the model is shown.
#[derive(Debug, Clone, PartialEq)]
pub struct WiderSearch {
    pub params: Value,
    pub why: String,
    /// Whether it searches the words of the pattern: the last widening there is.
    pub by_words: bool,
}

/// The next wider search after a `search_text` call with `params` gave `result`, or `None`
/// when it matched a line, stopped early (a cap: what it did not search is unknown), or there
/// is nothing to widen.
pub fn wider_search(params: &Value, result: &Value) -> Option<WiderSearch> {
    let matched = result
        .get("matches")
        .and_then(Value::as_array)
        .is_none_or(|m| !m.is_empty());
    let cut = result.get("truncated").and_then(Value::as_bool) != Some(false);
    if matched || cut {
        return None;
    }
    let searched = result.get("files_searched").and_then(Value::as_u64)?;
    let mut wider = params.as_object()?.clone();
    let path = wider
        .get("path")
        .and_then(Value::as_str)
        .map(str::to_string);
    let path_glob = path.as_deref().and_then(glob_path);
    let has_glob = wider.contains_key("glob") || path_glob.is_some();
    // Files the policy skipped may be the ones the glob matched: the glob is kept, and the
    // model is not told it matched no file name.
    let skipped = result
        .get("skipped_by_policy")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    if searched == 0 && has_glob && skipped == 0 {
        return Some(without_glob(wider, path_glob.map(|g| g.folder), path));
    }
    if searched == 0 {
        return None;
    }
    let pattern = wider.get("pattern").and_then(Value::as_str)?;
    let literal = wider.get("literal").and_then(Value::as_bool) == Some(true);
    let words = pattern_words(pattern, literal);
    let ignored_case = wider.get("case_insensitive").and_then(Value::as_bool) == Some(true);
    let alone = words.len() == 1 && words[0] == pattern;
    if words.is_empty() || (alone && ignored_case) {
        return None;
    }
    let alternatives: Vec<String> = words.iter().map(|w| regex::escape(w)).collect();
    wider.insert("pattern".into(), json!(alternatives.join("|")));
    wider.insert("literal".into(), json!(false));
    wider.insert("case_insensitive".into(), json!(true));
    let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    let why = if words.len() == 1 {
        format!(
            "no line held the pattern; searched again for {}, ignoring case",
            quoted[0]
        )
    } else {
        format!(
            "no line held the whole pattern; searched again for the lines that hold any of its words ({}), ignoring case",
            quoted.join(", ")
        )
    };
    Some(WiderSearch {
        params: Value::Object(wider),
        why,
        by_words: true,
    })
}

/// The call without its glob: the folder a wildcard path walks, else the path as given.
fn without_glob(
    mut wider: Map<String, Value>,
    folder: Option<String>,
    path: Option<String>,
) -> WiderSearch {
    wider.remove("glob");
    let searched = match folder {
        Some(folder) => {
            wider.insert("path".into(), json!(folder));
            folder
        }
        None => path.unwrap_or_else(|| ".".into()),
    };
    WiderSearch {
        params: Value::Object(wider),
        why: format!(
            "the glob matched no file name, so nothing was searched; searched every file of \"{searched}\" for the same pattern"
        ),
        by_words: false,
    }
}

/// The words of a search pattern, in order, each once (ignoring case), at most
/// [`WIDER_SEARCH_MAX_WORDS`]: runs of letters, digits, `_`, `-` and `@`, with a `.` or `,`
/// between two such characters kept (`1,234.56`, `emil@shop.example`). In a regular
/// expression a backslash and the character after it part words (`\d`, `\b`, `\.`).
/// Words shorter than three characters and filler words are left out.
pub fn pattern_words(pattern: &str, literal: bool) -> Vec<String> {
    let mut words = words_of(pattern, literal);
    words.truncate(WIDER_SEARCH_MAX_WORDS);
    words
}

/// The words of plain text, in order, each once (ignoring case), as [`pattern_words`] finds
/// them in a literal pattern, however many.
pub fn text_words(text: &str) -> Vec<String> {
    words_of(text, true)
}

fn words_of(pattern: &str, literal: bool) -> Vec<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let is_word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '@');
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let last = current.chars().last();
        // In a regular expression `.` is any character: it joins two digits (`1,234.56`) only.
        let joins = match c {
            ',' => {
                last.is_some_and(char::is_alphanumeric) && next.is_some_and(char::is_alphanumeric)
            }
            '.' if literal => {
                last.is_some_and(char::is_alphanumeric) && next.is_some_and(char::is_alphanumeric)
            }
            '.' => {
                last.is_some_and(|l| l.is_ascii_digit()) && next.is_some_and(|n| n.is_ascii_digit())
            }
            _ => false,
        };
        if is_word(c) || joins {
            current.push(c);
            i += 1;
            continue;
        }
        keep_word(&mut words, std::mem::take(&mut current));
        // `\d`, `\s`, `\b`: the escaped character is the pattern's syntax, not a word's.
        i += if c == '\\' && !literal { 2 } else { 1 };
    }
    keep_word(&mut words, current);
    words
}

fn keep_word(words: &mut Vec<String>, word: String) {
    let word = word.trim_matches(|c| matches!(c, '-' | '@')).to_string();
    let lower = word.to_lowercase();
    let chars = word.chars().count();
    if !(MIN_WORD_CHARS..=MAX_WORD_CHARS).contains(&chars)
        || FILLER_WORDS.contains(&lower.as_str())
        || words.iter().any(|w| w.to_lowercase() == lower)
    {
        return;
    }
    words.push(word);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty(searched: u64) -> Value {
        json!({"pattern": "x", "matches": [], "files_searched": searched, "truncated": false})
    }

    #[test]
    fn a_yaml_path_pattern_splits_into_its_keys_and_date() {
        assert_eq!(
            pattern_words("tls: cert_expires: 2025-03-14", false),
            ["tls", "cert_expires", "2025-03-14"]
        );
    }

    #[test]
    fn numbers_and_addresses_keep_their_inner_marks() {
        assert_eq!(
            pattern_words("Total due: 1,234.56 EUR", true),
            ["Total", "due", "1,234.56", "EUR"]
        );
        assert_eq!(
            pattern_words("emil@shop.example", true),
            ["emil@shop.example"]
        );
    }

    #[test]
    fn regex_escapes_and_short_or_filler_words_are_left_out() {
        assert_eq!(
            pattern_words(r"\bthe\s+approved\s+amount\b.*\d+", false),
            ["approved", "amount"]
        );
        assert_eq!(pattern_words(r"a|is|of|\d\d", false), Vec::<String>::new());
        // In a regular expression `.` after a letter is a wildcard, not part of the word.
        assert_eq!(pattern_words("legacy.pdf", false), ["legacy", "pdf"]);
        assert_eq!(pattern_words("legacy.pdf", true), ["legacy.pdf"]);
    }

    #[test]
    fn words_are_kept_once_ignoring_case_and_capped() {
        assert_eq!(pattern_words("Budget budget BUDGET", true), ["Budget"]);
        let many = pattern_words("alpha beta gamma delta epsilon zeta theta iota", true);
        assert_eq!(many.len(), WIDER_SEARCH_MAX_WORDS);
        assert_eq!(many[0], "alpha");
    }

    #[test]
    fn a_glob_that_left_nothing_is_dropped_first() {
        let params = json!({"pattern": "approved amount", "path": "mail", "glob": "*.eml"});
        let wider = wider_search(&params, &empty(0)).unwrap();
        assert_eq!(
            wider.params,
            json!({"pattern": "approved amount", "path": "mail"})
        );
        assert!(wider.why.contains("\"mail\""), "{}", wider.why);
        // Then, if that matched nothing either, the words.
        let next = wider_search(&wider.params, &empty(22)).unwrap();
        assert_eq!(next.params["pattern"], "approved|amount");
        assert_eq!(next.params["case_insensitive"], true);
        assert_eq!(next.params["path"], "mail");
    }

    #[test]
    fn a_wildcard_path_that_left_nothing_searches_its_folder() {
        let params = json!({"pattern": "x", "path": "./services//*.yml"});
        let wider = wider_search(&params, &empty(0)).unwrap();
        assert_eq!(wider.params, json!({"pattern": "x", "path": "services"}));
    }

    #[test]
    fn words_are_searched_as_escaped_alternatives() {
        let params = json!({"pattern": "tls: cert_expires: 2025-03-14", "path": "services/*.yaml", "glob": "*.yaml"});
        let wider = wider_search(&params, &empty(22)).unwrap();
        assert_eq!(
            wider.params,
            json!({"pattern": "tls|cert_expires|2025\\-03\\-14", "literal": false, "case_insensitive": true, "path": "services/*.yaml", "glob": "*.yaml"})
        );
        assert!(wider.why.contains("\"cert_expires\""), "{}", wider.why);
        let literal = json!({"pattern": "1,234.56 (EUR)", "literal": true});
        let wider = wider_search(&literal, &empty(3)).unwrap();
        assert_eq!(wider.params["pattern"], "1,234\\.56|EUR");
        assert_eq!(wider.params["literal"], false);
    }

    #[test]
    fn a_single_word_is_widened_by_case_only() {
        let wider = wider_search(&json!({"pattern": "Postgres"}), &empty(5)).unwrap();
        assert_eq!(wider.params["pattern"], "Postgres");
        assert_eq!(wider.params["case_insensitive"], true);
        assert!(wider.why.contains("ignoring case"));
        let already = json!({"pattern": "Postgres", "case_insensitive": true});
        assert_eq!(wider_search(&already, &empty(5)), None);
    }

    #[test]
    fn nothing_is_widened_after_a_match_a_cap_or_an_empty_folder() {
        let params = json!({"pattern": "approved amount", "glob": "*.eml"});
        let matched = json!({"matches": [{"path": "a", "line": 1, "text": "x"}], "files_searched": 1, "truncated": false});
        assert_eq!(wider_search(&params, &matched), None);
        let cut = json!({"matches": [], "files_searched": 4, "truncated": true});
        assert_eq!(wider_search(&params, &cut), None);
        assert_eq!(
            wider_search(&json!({"pattern": "approved amount"}), &empty(0)),
            None
        );
        assert_eq!(wider_search(&json!({"pattern": r"\d+"}), &empty(3)), None);
        assert_eq!(wider_search(&params, &json!({"error": "x"})), None);
        // Files the policy skipped may be the glob's: it is kept.
        let skipped =
            json!({"matches": [], "files_searched": 0, "truncated": false, "skipped_by_policy": 2});
        assert_eq!(wider_search(&params, &skipped), None);
    }
}
