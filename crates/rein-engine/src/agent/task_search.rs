//! Lever `task-search`: before the first step of a task that picks which of its many inputs to
//! read, and whose contract names some of them as the ones it needs (a search, not a count of
//! every file), Rein makes the search a person would type first. Its words are those of the task's
//! description (the prompt before it names the deliverable), never a check's: a contract's
//! checks may hold the answer. The first search looks for all of them; while some word is held
//! by many of the searched files, such words are left out and it is made again, at most
//! [`TASK_SEARCHES_MAX`] times. Every search goes through the gate as Rein's
//! call, so it reads no file the model's own search could not; the lines it names are shown as
//! the tool gave them, unranked, and no file is named as the answer.

use std::sync::LazyLock;

use regex::{Regex, RegexBuilder};
use rein_workspace::desk::SEARCH_REGEX_MAX_BYTES;
use serde_json::{json, Value};

use super::prompt::{inputs_read_paths, task_picks_inputs};
use super::wider_search::text_words;
use crate::checks::CheckSpec;
use crate::mission::FrozenContract;

/// Most searches Rein makes before the first step: all the task's words, then twice at most
/// with fewer of them.
pub const TASK_SEARCHES_MAX: usize = 3;

/// Most matched lines a search may name to be shown whole.
pub const TASK_SEARCH_SHOWN_LINES: usize = 30;

/// Most characters of a search's whole result (its JSON: paths, line numbers and lines) for it
/// to be shown whole: about 1,200 tokens of the first prompt, whose head is never trimmed, and
/// under the prompt's cut of a result ([`super::prompt::MAX_RESULT_CHARS`]), so no line of it
/// is lost.
pub const TASK_SEARCH_SHOWN_CHARS: usize = 4_000;

/// Longest pattern Rein's search may have: `search_text`'s own limit.
const PATTERN_MAX_CHARS: usize = 1_000;

/// Most words of the description the first search looks for.
pub const TASK_SEARCH_MAX_WORDS: usize = 24;

/// A word held by more than one in this many of the files searched is a common one (`service`
/// in every YAML file of a folder of services).
const COMMON_SHARE: u64 = 4;

/// Words of a task's instructions rather than of what it looks for.
const INSTRUCTION_WORDS: &[&str] = &[
    "find", "write", "read", "call", "finish", "change", "exactly", "lines", "line", "every",
    "each", "these", "those", "them", "then",
];

/// What to do after one of Rein's searches.
#[derive(Debug, Clone, PartialEq)]
pub enum AfterSearch {
    /// Show its result whole: few enough lines, none, or a call the gate did not run.
    Show,
    /// Some words are in many files: search again for these words only.
    Narrow(Vec<String>),
    /// Too many lines to show and no word to leave out; why, in words the model is shown.
    Stop(String),
}

/// The folder Rein searches and the words it looks for first, or why the lever does not apply.
pub fn task_search_plan(
    contract: &FrozenContract,
    tools: &[String],
) -> Result<(String, Vec<String>), String> {
    let m = &contract.mission;
    if !tools.iter().any(|t| t == "search_text") {
        return Err("the mission does not offer search_text".into());
    }
    if !task_picks_inputs(contract) {
        return Err(
            "the task does not pick among many inputs (it needs every one, or has few)".into(),
        );
    }
    // A task with no check naming the inputs it needs counts or lists them all (explore-*):
    // which lines hold its words is no help there.
    if !inputs_read_paths(contract).any(|paths| !paths.is_empty()) {
        return Err("no check names some inputs as the ones the task needs: it does not look for a few of them".into());
    }
    calls_stay_the_model_s(contract)?;
    let Some(description) = description(&m.prompt, &m.required_artifact) else {
        return Err(format!(
            "the task's text does not name its deliverable `{}`, so its description is unknown",
            m.required_artifact
        ));
    };
    let words: Vec<String> = text_words(description)
        .into_iter()
        .filter(|w| !INSTRUCTION_WORDS.contains(&w.to_lowercase().as_str()))
        .collect();
    let words = searchable(names_and_last_words(words, TASK_SEARCH_MAX_WORDS));
    if words.is_empty() {
        return Err("the task's description holds no word to search for".into());
    }
    Ok((inputs_folder(&m.inputs), words))
}

/// The prompt before its first mention of `artifact` as a whole path (not the tail of a
/// longer one), trimmed; `None` when it is not named or nothing comes before it.
pub fn description<'p>(prompt: &'p str, artifact: &str) -> Option<&'p str> {
    if artifact.is_empty() {
        return None;
    }
    let is_path_char = |c: char| c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-');
    let at = prompt.match_indices(artifact).map(|(i, _)| i).find(|&i| {
        prompt[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !is_path_char(c))
            && ends_a_path(&prompt[i + artifact.len()..])
    })?;
    let before = prompt[..at].trim();
    (!before.is_empty()).then_some(before)
}

/// At most `max` of `words`, in their order: every name among them first (see
/// [`looks_like_a_name`]), then the last of the others. A task says what to find last, after
/// its background ("hosts/ holds one record per server. Exactly one server still runs
/// postgres 12.").
fn names_and_last_words(words: Vec<String>, max: usize) -> Vec<String> {
    if words.len() <= max {
        return words;
    }
    let names = words
        .iter()
        .filter(|w| looks_like_a_name(w))
        .count()
        .min(max);
    let mut others_left = max - names;
    let mut names_left = names;
    let mut kept: Vec<String> = Vec::new();
    for word in words.into_iter().rev() {
        let slot = if looks_like_a_name(&word) {
            &mut names_left
        } else {
            &mut others_left
        };
        if *slot > 0 {
            *slot -= 1;
            kept.push(word);
        }
    }
    kept.reverse();
    kept
}

/// `words` less the longest ones while their pattern is longer than `search_text` takes or
/// compiles past its size limit (long words searched ignoring case grow large), so Rein's
/// call is never refused as invalid.
fn searchable(mut words: Vec<String>) -> Vec<String> {
    let fits = |words: &[String]| {
        let pattern = pattern_of(words);
        pattern.chars().count() <= PATTERN_MAX_CHARS
            && RegexBuilder::new(&pattern)
                .case_insensitive(true)
                .size_limit(SEARCH_REGEX_MAX_BYTES)
                .build()
                .is_ok()
    };
    while !words.is_empty() && !fits(&words) {
        let longest = (0..words.len())
            .max_by_key(|&i| (words[i].chars().count(), i))
            .unwrap_or(0);
        words.remove(longest);
    }
    words
}

/// Whether a path ends where `rest` starts: nothing more, a character no path holds, or a
/// full stop that ends a sentence (`out/answer.md.` but not `out/answer.md.bak`).
fn ends_a_path(rest: &str) -> bool {
    let mut chars = rest.chars();
    match chars.next() {
        None => true,
        Some('.') => chars.next().is_none_or(|c| !c.is_alphanumeric()),
        Some(c) => !(c.is_alphanumeric() || matches!(c, '/' | '_' | '-')),
    }
}

/// `Err` with the reason when a check judges the run's calls (`actions_called`): the judge
/// counts every executed call of the trace, so a call Rein made before the first step would
/// count as the model's, and the calls stay the model's.
pub fn calls_stay_the_model_s(contract: &FrozenContract) -> Result<(), String> {
    match contract
        .mission
        .checks
        .iter()
        .find(|c| matches!(c.spec, CheckSpec::ActionsCalled { .. }))
    {
        Some(c) => Err(format!(
            "check `{}` judges the run's calls: they stay the model's",
            c.id
        )),
        None => Ok(()),
    }
}

/// The folder all `inputs` are in (`.` when they share none).
pub fn inputs_folder(inputs: &[String]) -> String {
    let parents: Vec<Vec<&str>> = inputs
        .iter()
        .map(|i| {
            let parts: Vec<&str> = i
                .trim_start_matches("./")
                .split('/')
                .filter(|p| !p.is_empty() && *p != ".")
                .collect();
            parts[..parts.len().saturating_sub(1)].to_vec()
        })
        .collect();
    let Some(first) = parents.first() else {
        return ".".into();
    };
    let shared = (0..first.len())
        .take_while(|&k| parents.iter().all(|p| p.get(k) == first.get(k)))
        .count();
    if shared == 0 {
        ".".into()
    } else {
        first[..shared].join("/")
    }
}

/// The `search_text` parameters of a search of `folder` for lines that hold any of `words`
/// as a whole word, ignoring case.
pub fn search_params(folder: &str, words: &[String]) -> Value {
    json!({
        "pattern": pattern_of(words),
        "path": folder,
        "case_insensitive": true,
    })
}

/// The pattern of lines that hold any of `words` whole.
fn pattern_of(words: &[String]) -> String {
    let alternatives: Vec<String> = words.iter().map(|w| whole_word_pattern(w)).collect();
    format!("(?:{})", alternatives.join("|"))
}

/// `word` escaped, with a word boundary at each end that is a regex word character (`\b` after
/// the `₂` of `CO₂`, which the regex does not count as one, would never match).
fn whole_word_pattern(word: &str) -> String {
    static WORD_CHAR: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\w$").ok());
    let is_word_char = |c: Option<char>| {
        c.is_some_and(|c| {
            WORD_CHAR
                .as_ref()
                .is_some_and(|w| w.is_match(c.encode_utf8(&mut [0; 4])))
        })
    };
    let start = if is_word_char(word.chars().next()) {
        r"\b"
    } else {
        ""
    };
    let end = if is_word_char(word.chars().last()) {
        r"\b"
    } else {
        ""
    };
    format!("{start}{}{end}", regex::escape(word))
}

/// What to do after the search for `words` gave `result`: while some word is held by more
/// than a quarter of the files searched (and is no name), search again without such words (and
/// without those no line held); else show the result if it is small enough.
pub fn after_search(words: &[String], result: &Value) -> AfterSearch {
    let Some(matches) = result.get("matches").and_then(Value::as_array) else {
        return AfterSearch::Show;
    };
    let cut = result.get("truncated").and_then(Value::as_bool) != Some(false);
    let chars = result.to_string().chars().count();
    let small =
        !cut && matches.len() <= TASK_SEARCH_SHOWN_LINES && chars <= TASK_SEARCH_SHOWN_CHARS;
    // A line the tool clipped may hold a word past its cut: such a word is unseen, not absent.
    let clipped = matches.iter().any(|m| {
        m.get("text")
            .and_then(Value::as_str)
            .is_some_and(|t| t.ends_with('…'))
    });
    let unseen_may_be_there = cut || clipped;
    let searched = result
        .get("files_searched")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let common = (searched / COMMON_SHARE).max(1);
    let counted: Vec<(&String, u64)> = words.iter().zip(files_holding(words, matches)).collect();
    let is_common = |(word, files): &(&String, u64)| *files > common && !looks_like_a_name(word);
    let kept: Vec<String> = counted
        .iter()
        .filter(|c| !is_common(c))
        // Not in the lines named: in none of the files, unless the tool cut its result.
        .filter(|(_, files)| *files > 0 || unseen_may_be_there)
        .map(|(word, _)| (*word).clone())
        .collect();
    if counted.iter().any(is_common) && !kept.is_empty() {
        return AfterSearch::Narrow(kept);
    }
    if small {
        return AfterSearch::Show;
    }
    AfterSearch::Stop(if kept.is_empty() {
        format!("every word of the task it found is in more than {common} of the {searched} files searched")
    } else {
        "the words of the task that few files hold still name too many lines to show".into()
    })
}

/// How many files the `matches` name a line of that holds each of `words` (as a whole word,
/// ignoring case).
pub fn files_holding(words: &[String], matches: &[Value]) -> Vec<u64> {
    words
        .iter()
        .map(|word| {
            let Some(holds) = whole_word(word) else {
                return 0;
            };
            let mut files: Vec<&str> = matches
                .iter()
                .filter(|m| {
                    m.get("text")
                        .and_then(Value::as_str)
                        .is_some_and(|t| holds.is_match(t))
                })
                .filter_map(|m| m.get("path").and_then(Value::as_str))
                .collect();
            files.sort_unstable();
            files.dedup();
            files.len() as u64
        })
        .collect()
}

fn whole_word(word: &str) -> Option<Regex> {
    RegexBuilder::new(&whole_word_pattern(word))
        .case_insensitive(true)
        .build()
        .ok()
}

/// Whether `word` names one thing rather than saying something: a key (`cert_expires`), a
/// dotted name or figure (`invoices.created`, `1,234.56`), an address, letters with digits
/// (`K-2019-004`), or a camel-case name (`parseInvoice`). Such a word is searched however many
/// files hold it.
fn looks_like_a_name(word: &str) -> bool {
    let letters = word.chars().any(char::is_alphabetic);
    let digits = word.chars().any(|c| c.is_ascii_digit());
    let camel = word
        .chars()
        .zip(word.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    word.contains(['_', '.', '@']) || (letters && digits) || camel
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    fn line(path: &str, text: &str) -> Value {
        json!({"path": path, "line": 1, "text": text})
    }

    #[test]
    fn the_description_ends_where_the_deliverable_is_named() {
        let prompt = "hosts/ holds one record per server. Exactly one server still runs postgres 12. Find it and write out/answer.md with exactly three lines:\nHost: <x>";
        assert_eq!(
            description(prompt, "out/answer.md"),
            Some("hosts/ holds one record per server. Exactly one server still runs postgres 12. Find it and write")
        );
        assert_eq!(
            description("write archive/out/answer.md", "out/answer.md"),
            None
        );
        assert_eq!(
            description("write out/answer.md.bak", "out/answer.md"),
            None
        );
        assert_eq!(description("out/answer.md first", "out/answer.md"), None);
        assert_eq!(description("no deliverable here", "out/answer.md"), None);
        assert_eq!(
            description("Read x, then write out/answer.md.", "out/answer.md"),
            Some("Read x, then write")
        );
    }

    #[test]
    fn the_inputs_folder_is_the_one_they_share() {
        let f = |i: &[&str]| inputs_folder(&words(i));
        assert_eq!(f(&["hosts/a.txt", "hosts/b.txt"]), "hosts");
        assert_eq!(f(&["a/b/c.txt", "a/b/d/e.txt"]), "a/b");
        assert_eq!(f(&["a/x.txt", "b/y.txt"]), ".");
        assert_eq!(f(&["x.txt", "y.txt"]), ".");
        assert_eq!(f(&["./notes/a.md", "notes/b.md"]), "notes");
        assert_eq!(f(&[]), ".");
    }

    #[test]
    fn the_pattern_holds_each_word_escaped_and_whole() {
        let p = search_params("invoices", &words(&["1,234.56", "due"]));
        assert_eq!(p["pattern"], r"(?:\b1,234\.56\b|\bdue\b)");
        assert_eq!(p["path"], "invoices");
        assert_eq!(p["case_insensitive"], true);
        let p = search_params(".", &words(&["CO₂", "-x"]));
        assert_eq!(p["pattern"], r"(?:\bCO₂|\-x\b)");
    }

    #[test]
    fn few_lines_of_rare_words_are_shown() {
        let result = json!({"matches": [line("hosts/db-03.txt", "Software: postgres 12")],
            "files_searched": 24, "truncated": false});
        assert_eq!(
            after_search(&words(&["postgres", "server"]), &result),
            AfterSearch::Show
        );
        let none = json!({"matches": [], "files_searched": 24, "truncated": false});
        assert_eq!(after_search(&words(&["x"]), &none), AfterSearch::Show);
    }

    #[test]
    fn words_many_files_hold_are_left_out_but_names_are_kept() {
        let mut matches = Vec::new();
        for i in 0..22 {
            let path = format!("services/s{i}.yaml");
            matches.push(line(&path, &format!("service: s{i}")));
            matches.push(line(
                &path,
                &format!("  cert_expires: 2025-0{}-01", i % 9 + 1),
            ));
        }
        matches.push(line(
            "services/s3.yaml",
            "# the previous certificate expired",
        ));
        let result = json!({"matches": matches, "files_searched": 22, "truncated": false});
        let w = words(&["service", "tls", "certificate", "cert_expires", "2025"]);
        assert_eq!(
            after_search(&w, &result),
            AfterSearch::Narrow(words(&["certificate", "cert_expires"]))
        );
    }

    #[test]
    fn a_cut_search_keeps_the_words_it_may_not_have_reached() {
        let matches: Vec<Value> = (0..100)
            .map(|i| line(&format!("mail/{i:02}.txt"), "From: team@x"))
            .collect();
        let result = json!({"matches": matches, "files_searched": 22, "truncated": true});
        assert_eq!(
            after_search(&words(&["team", "approved"]), &result),
            AfterSearch::Narrow(words(&["approved"]))
        );
    }

    #[test]
    fn with_no_word_to_leave_out_rein_stops() {
        let matches: Vec<Value> = (0..40)
            .map(|i| line(&format!("d/{i}.yaml"), "legacy_pdf: false"))
            .collect();
        let result = json!({"matches": matches, "files_searched": 40, "truncated": false});
        assert!(matches!(
            after_search(&words(&["legacy_pdf"]), &result),
            AfterSearch::Stop(_)
        ));
        let common: Vec<Value> = (0..40)
            .map(|i| line(&format!("d/{i}.txt"), "the team"))
            .collect();
        let result = json!({"matches": common, "files_searched": 40, "truncated": false});
        assert!(matches!(
            after_search(&words(&["team"]), &result),
            AfterSearch::Stop(_)
        ));
    }

    #[test]
    fn a_small_result_is_narrowed_too_when_a_common_word_fills_it() {
        // search-budget-approval: `team` is in the `To:` line of every e-mail.
        let mut matches: Vec<Value> = (0..22)
            .map(|i| line(&format!("mail/{i:02}.eml.txt"), "To: team@example.com"))
            .collect();
        matches.push(line("mail/17.eml.txt", "Approved: the budget increase"));
        let result = json!({"matches": matches, "files_searched": 22, "truncated": false});
        assert_eq!(
            after_search(&words(&["team", "budget", "approved", "finally"]), &result),
            AfterSearch::Narrow(words(&["budget", "approved"]))
        );
        // Only common words, few lines: shown as they are.
        let few = json!({"matches": [line("a.txt", "the team"), line("b.txt", "the team")],
            "files_searched": 2, "truncated": false});
        assert_eq!(after_search(&words(&["team"]), &few), AfterSearch::Show);
    }

    #[test]
    fn long_lines_count_against_what_is_shown() {
        let long = "x".repeat(TASK_SEARCH_SHOWN_CHARS + 1);
        let result = json!({"matches": [line("a.txt", &format!("postgres {long}"))],
            "files_searched": 40, "truncated": false});
        assert!(matches!(
            after_search(&words(&["postgres"]), &result),
            AfterSearch::Stop(_)
        ));
        // Paths count too: they are shown with each line.
        let deep = format!("hosts/{}/db.txt", "archive/".repeat(20));
        let matches: Vec<Value> = (0..29).map(|_| line(&deep, "postgres 15")).collect();
        let result = json!({"matches": matches, "files_searched": 40, "truncated": false});
        assert!(matches!(
            after_search(&words(&["postgres"]), &result),
            AfterSearch::Stop(_)
        ));
    }

    #[test]
    fn a_word_past_a_clipped_line_s_end_is_kept() {
        let clipped = format!("{}…", "team ".repeat(60));
        let matches: Vec<Value> = (0..20)
            .map(|i| line(&format!("n/{i}.md"), &clipped))
            .collect();
        let result = json!({"matches": matches, "files_searched": 20, "truncated": false});
        assert_eq!(
            after_search(&words(&["team", "cloudline"]), &result),
            AfterSearch::Narrow(words(&["cloudline"]))
        );
    }

    #[test]
    fn the_words_that_say_what_to_find_are_kept_over_the_background() {
        let background = [
            "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
        ];
        let many: Vec<String> = background
            .iter()
            .flat_map(|a| background.iter().map(move |b| format!("{a}{b}")))
            .collect();
        let mut all = many.clone();
        all.extend(words(&["cert_expires", "postgres"]));
        let kept = names_and_last_words(all, 10);
        assert_eq!(kept.len(), 10);
        assert_eq!(kept.last().map(String::as_str), Some("postgres"));
        assert!(kept.iter().any(|w| w == "cert_expires"));
    }

    #[test]
    fn a_pattern_is_never_longer_than_the_tool_takes() {
        let long: Vec<String> = (0..20).map(|i| format!("{}{i}", "y".repeat(58))).collect();
        let kept = searchable(long);
        assert!(!kept.is_empty());
        assert!(pattern_of(&kept).chars().count() <= PATTERN_MAX_CHARS);
    }

    #[test]
    fn a_word_is_counted_whole_and_per_file() {
        let matches = vec![
            line("a.yaml", "cert_expires: 2025"),
            line("a.yaml", "expires: soon"),
            line("b.yaml", "Expires: later"),
        ];
        assert_eq!(
            files_holding(&words(&["expires", "cert_expires"]), &matches),
            [2, 1]
        );
    }

    #[test]
    fn names_are_told_from_words() {
        for name in [
            "cert_expires",
            "invoices.created",
            "1,234.56",
            "K-2019-004",
            "a@b.c",
            "parseInvoice",
        ] {
            assert!(looks_like_a_name(name), "{name}");
        }
        for word in ["service", "2025", "e-mails", "EUR", "Cloudline"] {
            assert!(!looks_like_a_name(word), "{word}");
        }
    }
}
