#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red-team attacks on lever `plain-counts` (Rein's `folder_stats` figures shown as plain lines,
//! commits 336536f and f8b1c17): that nothing `folder-stats` withholds is said in words in the
//! first prompt, the repeat after a step or a retry (disputed rows, a non-UTF-8 log, a log
//! counted by some of its lines, part-sums, policy-hidden and policy-skipped files); that each
//! worded figure is the tool's, for the path it belongs to, whatever the file names hold
//! (commas, a look-alike colon, a line break, an extension spelt `(none)`); that no key, cap or
//! cut is lost without a word; and that with the lever off the model sees the JSON as before.
//! A test marked `#[ignore = "HOLE: ..."]` fails on the code it was written against.

#[path = "agent_support/mod.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::{json, Value};
use support::{
    desk_policy, finish_line, first_json, line, user_messages, Harness, Ran, FOLDER_STATS_LABEL,
};

/// How the plain repeat (after a step, in a retry) starts.
const PLAIN_MARK: &str = "Rein's counts from its folder_stats call";
/// How the JSON repeat starts, before the folder's path.
const JSON_MARK: &str = "Rein's counts of ";

fn levers(plain: bool) -> Levers {
    Levers {
        folder_stats: true,
        plain_counts: plain,
        ..Levers::DEFAULT
    }
}

/// How a test sets up a task's harness.
type Setup = Box<dyn Fn() -> Harness>;

/// One attempt, a single `finish`: enough for the first prompt.
fn first_only(h: Harness, plain: bool) -> Ran {
    Ran::one_attempt(
        h,
        &finish_line(),
        &mut AllowAll,
        Policy::safe_default(),
        levers(plain),
    )
}

/// A deliverable finish accepts (every heading the tasks ask for, enough words) and the judge
/// fails.
const WRONG_DELIVERABLE: &str = "# Tables\n\n# Log lines\n\n# Project tree\n\n## Counts\n\nThis report was written before any input was read, so each figure in it is a guess the checks reject.\n\n## Latency\n\nSlowest request: 1 ms\n";

/// A wrong deliverable written at `out`, read back and finished, then a retry that finishes
/// again: the first prompt, the repeat after a step (request 1) and a retry's message.
fn with_retry(h: Harness, policy: Policy, plain: bool, out: &str) -> Ran {
    let script = line(
        "create_file",
        json!({"path": out, "content": WRONG_DELIVERABLE}),
    ) + &line("read_file", json!({ "path": out }))
        + &finish_line()
        + &finish_line();
    Ran::of(h, &script, &mut AllowAll, policy, |o| {
        o.levers = Levers {
            monotone_attempts: true,
            ..levers(plain)
        };
        o.limits.attempts = 2;
    })
}

/// The counts' lines of `message` from the line holding `mark` on: the marker line, then each
/// line of the plain wording (`Counts of`, `Each ...`, `- ...`).
fn plain_block(message: &str, mark: &str) -> Option<String> {
    let start = message.find(mark)?;
    let mut lines = message[start..].lines();
    let mut kept = vec![lines.next()?.to_string()];
    kept.extend(
        lines
            .take_while(|l| {
                l.starts_with("- ") || l.starts_with("Counts of ") || l.starts_with("Each ")
            })
            .map(str::to_string),
    );
    Some(kept.join("\n"))
}

/// The three places the model reads Rein's counts in a [`with_retry`] run: (where, text). The
/// repeat and the retry must both hold the counts, or checking them would prove nothing.
fn three_places(r: &Ran) -> Vec<(&'static str, String)> {
    let first = counts_shown_first(r);
    let after = user_messages(&r.model.requests[1]).last().cloned().unwrap();
    let after = plain_block(&after, PLAIN_MARK)
        .unwrap_or_else(|| panic!("no counts repeated after the first step: {after}"));
    let retry = r.retry_message();
    let retry = plain_block(&retry, PLAIN_MARK)
        .unwrap_or_else(|| panic!("no counts in the retry: {retry}"));
    vec![
        ("first prompt", first),
        ("after a step", after),
        ("retry", retry),
    ]
}

/// The first prompt's message with Rein's counts, up to the progress note after them (which
/// names the inputs, hidden or not, as the task does).
fn counts_shown_first(r: &Ran) -> String {
    let first = r.first_message_with(FOLDER_STATS_LABEL);
    first.split("\nProgress:").next().unwrap().to_string()
}

/// Whether `line` states a figure of `word`: a digit, a space, then `word` (`23 lines`).
fn states_figure(line: &str, word: &str) -> bool {
    line.match_indices(&format!(" {word}"))
        .any(|(i, _)| line[..i].ends_with(|c: char| c.is_ascii_digit()))
}

/// The line of `text` that starts with `prefix`.
fn line_starting<'t>(text: &'t str, prefix: &str) -> Option<&'t str> {
    text.lines().find(|l| l.starts_with(prefix))
}

/// `(path, bytes)` of every file under `dir` of the workspace `root`, sorted by path.
fn files_on_disk(root: &Path, dir: &str) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, rel: &str, out: &mut Vec<(String, Vec<u8>)>) {
        for entry in std::fs::read_dir(root.join(rel)).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().into_string().unwrap();
            let path = format!("{rel}/{name}");
            if entry.file_type().unwrap().is_dir() {
                walk(root, &path, out);
            } else {
                out.push((path, std::fs::read(entry.path()).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, dir, &mut out);
    out.sort();
    out
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

/// `None` for a file with no extension.
fn extension_of(path: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap();
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && !ext.is_empty() => Some(ext.to_lowercase()),
        _ => None,
    }
}

/// `7 .js files, 1 .md file, 2 files with no extension`, most first, then by name, the files
/// with no extension last, from extensions counted here.
fn extension_words(counts: &BTreeMap<Option<String>, usize>) -> String {
    let file = |n: usize| if n == 1 { "file" } else { "files" };
    let mut pairs: Vec<(&String, usize)> = counts
        .iter()
        .filter_map(|(ext, n)| Some((ext.as_ref()?, *n)))
        .collect();
    pairs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut said: Vec<String> = pairs
        .iter()
        .map(|(ext, n)| format!("{n} .{ext} {}", file(*n)))
        .collect();
    if let Some(n) = counts.get(&None) {
        said.push(format!("{n} {} with no extension", file(*n)));
    }
    said.join(", ")
}

// --- Claim 1: nothing withheld is said in words ------------------------------------------------

#[test]
fn a_disputed_row_count_is_unsaid_after_a_step_and_in_a_retry() {
    let r = with_retry(
        Harness::csv_rows_disputed(),
        Policy::safe_default(),
        true,
        "out/tables.md",
    );
    for (place, text) in three_places(&r) {
        if let Some(customers) = line_starting(&text, "- data/customers.csv:") {
            assert!(!states_figure(customers, "rows"), "{place}: {customers}");
        }
        for cut in [
            "Data rows of all the tables together",
            "File with the most data rows",
        ] {
            assert!(!text.contains(cut), "{place} says {cut:?}: {text}");
        }
    }
}

#[test]
fn a_copy_of_a_disputed_table_does_not_say_the_withheld_count() {
    let h = Harness::csv_rows_disputed();
    let customers = std::fs::read(h.workspace.join("data/customers.csv")).unwrap();
    write(&h.workspace, "data/backup/customers.csv", &customers);
    let r = first_only(h, true);
    let shown = r.first_message_with(FOLDER_STATS_LABEL);
    let same = line_starting(&shown, "- Files whose content is exactly the same")
        .unwrap_or_else(|| panic!("no same-content line: {shown}"));
    assert!(
        same.contains("data/customers.csv") && same.contains("data/backup/customers.csv"),
        "{same}"
    );
    let own = line_starting(&shown, "- data/customers.csv:").unwrap();
    assert!(!states_figure(own, "rows"), "{own}");
    let copy = line_starting(&shown, "- data/backup/customers.csv:").unwrap();
    assert!(
        !states_figure(copy, "rows"),
        "the withheld count of data/customers.csv, said for its copy: {copy}\n{same}"
    );
}

#[test]
fn a_non_utf8_log_leaves_no_total_and_no_longest_in_words() {
    // Latin-1 `é` in cron.log: the tool gives it no lines and leaves it out of the total (87),
    // the judge reads it and counts 96; the total and the longest go.
    let h = Harness::desk_suite_with("explore-log-lines", |dir| {
        let p = dir.join("logs/cron.log");
        let mut bytes = std::fs::read(&p).unwrap();
        let at = bytes.iter().position(|b| *b == b'\n').unwrap();
        bytes.splice(at..at, [b' ', 0xE9]);
        std::fs::write(p, bytes).unwrap();
    });
    let r = with_retry(h, Policy::safe_default(), true, "out/log_lines.md");
    let places = three_places(&r);
    for (place, text) in &places {
        for cut in [
            "Lines of all the files together",
            "File with the most lines",
        ] {
            assert!(!text.contains(cut), "{place} says {cut:?}: {text}");
        }
        if let Some(cron) = line_starting(text, "- logs/cron.log:") {
            assert!(!states_figure(cron, "lines"), "{place}: {cron}");
        }
    }
    // The note that the log is no UTF-8 text stays, in words.
    assert!(places[0].1.contains("- not text: 1"), "{}", places[0].1);
}

#[test]
fn a_log_counted_by_some_of_its_lines_has_no_line_count_in_words() {
    // report-log-errors counts the ERROR lines of logs/service.log (140 lines): the file's
    // `lines` is withheld, with the total and the longest.
    let r = with_retry(
        Harness::desk_suite("report-log-errors"),
        Policy::safe_default(),
        true,
        "out/log-report.md",
    );
    for (place, text) in three_places(&r) {
        assert!(!text.contains("140"), "{place}: {text}");
        for cut in [
            "Lines of all the files together",
            "File with the most lines",
        ] {
            assert!(!text.contains(cut), "{place} says {cut:?}: {text}");
        }
        if let Some(log) = line_starting(&text, "- logs/service.log:") {
            assert!(!states_figure(log, "lines"), "{place}: {log}");
            assert!(log.contains("count it yourself"), "{place}: {log}");
        }
    }
}

#[test]
fn a_total_the_task_adds_up_only_in_part_is_unsaid_in_all_three_places() {
    let r = with_retry(
        Harness::desk_suite("explore-csv-rows"),
        Policy::safe_default(),
        true,
        "out/tables.md",
    );
    for (place, text) in three_places(&r) {
        for cut in [
            "Data rows of all the tables together",
            "Lines of all the files together",
            // The six tables' rows together.
            "161",
        ] {
            assert!(!text.contains(cut), "{place} says {cut:?}: {text}");
        }
        assert!(text.contains("adds up only some"), "{place}: {text}");
    }
}

#[test]
fn policy_hidden_and_skipped_files_stay_unsaid_in_words() {
    let policy = desk_policy(
        r#"
[[rule]]
tool = "read_file"
action = "deny"
paths = ["data/archive/**"]
hide_names = true

[[rule]]
tool = "read_file"
action = "ask"
paths = ["data/suppliers.csv"]
hide_names = true

[[rule]]
tool = "read_file"
action = "ask"
paths = ["data/customers.csv"]
hide_names = false
"#,
    );
    let r = with_retry(
        Harness::desk_suite("explore-csv-rows"),
        policy,
        true,
        "out/tables.md",
    );
    let places = three_places(&r);
    for (place, text) in &places {
        for hidden in ["orders-2022", "orders-2023", "archive", "suppliers"] {
            assert!(!text.contains(hidden), "{place} names {hidden}: {text}");
        }
        if let Some(customers) = line_starting(text, "- data/customers.csv:") {
            assert!(customers.contains("skipped by policy: true"), "{customers}");
            for figure in ["bytes", "lines", "rows"] {
                assert!(!customers.contains(figure), "{place}: {customers}");
            }
        }
    }
    let first = &places[0].1;
    assert!(first.contains("- hidden by policy: 3"), "{first}");
    assert!(
        first.contains("- Files in all: 4 (every extension, every sub-folder)"),
        "{first}"
    );
    assert!(
        first.contains("- Files by extension: 3 .csv files, 1 .md file"),
        "{first}"
    );
    assert!(first.contains("- skipped by policy: 1"), "{first}");
}

// --- Claim 2: each worded figure is the tool's, for its own path -------------------------------

#[test]
fn depth_own_files_extensions_and_lines_match_the_tree_on_disk() {
    let r = first_only(Harness::desk_suite("explore-project-tree"), true);
    let shown = r.first_message_with(FOLDER_STATS_LABEL);
    let files = files_on_disk(&r.h.workspace, "app");
    assert_eq!(files.len(), 13);
    let mut folders: BTreeMap<String, BTreeMap<Option<String>, usize>> = BTreeMap::new();
    let mut extensions: BTreeMap<Option<String>, usize> = BTreeMap::new();
    for (path, bytes) in &files {
        let lines = std::str::from_utf8(bytes)
            .unwrap()
            .split_inclusive('\n')
            .count();
        // Each file's line holds its lines only (a .js file is no table); its size and depth
        // are left out, the deepest file has a line of its own (checked below).
        let expected = format!("- {path}: {lines} lines");
        let said = line_starting(&shown, &format!("- {path}:"))
            .unwrap_or_else(|| panic!("{path} not said: {shown}"));
        assert_eq!(said, expected);
        let (parent, _) = path.rsplit_once('/').unwrap();
        *folders
            .entry(parent.to_string())
            .or_default()
            .entry(extension_of(path))
            .or_default() += 1;
        *extensions.entry(extension_of(path)).or_default() += 1;
    }
    for (folder, by_ext) in &folders {
        let n: usize = by_ext.values().sum();
        let file = if n == 1 { "file" } else { "files" };
        let expected = format!("- {folder}: {n} {file} ({})", extension_words(by_ext));
        let said = line_starting(&shown, &format!("- {folder}:"))
            .unwrap_or_else(|| panic!("{folder} not said: {shown}"));
        assert_eq!(said, expected, "a folder's own files only");
    }
    assert!(
        shown.contains(&format!(
            "- Files by extension: {}\n",
            extension_words(&extensions)
        )),
        "{shown}"
    );
    let deepest = files
        .iter()
        .map(|(p, _)| p.matches('/').count())
        .max()
        .unwrap();
    let expected: BTreeSet<&str> = files
        .iter()
        .filter(|(p, _)| p.matches('/').count() == deepest)
        .map(|(p, _)| p.as_str())
        .collect();
    let said: BTreeSet<&str> = line_starting(&shown, "- File with the most folders above it: ")
        .unwrap()
        .trim_start_matches("- File with the most folders above it: ")
        .split(", ")
        .collect();
    assert_eq!(said, expected);
}

#[test]
fn empty_files_and_same_content_groups_match_the_share_on_disk() {
    let r = first_only(Harness::desk_suite("explore-share-cleanup"), true);
    let shown = r.first_message_with(FOLDER_STATS_LABEL);
    let files = files_on_disk(&r.h.workspace, "share");
    let empty: BTreeSet<&str> = files
        .iter()
        .filter(|(_, b)| b.is_empty())
        .map(|(p, _)| p.as_str())
        .collect();
    assert_eq!(empty.len(), 3, "{empty:?}");
    let said: BTreeSet<&str> = line_starting(&shown, "- Empty files (0 bytes): ")
        .unwrap_or_else(|| panic!("{shown}"))
        .trim_start_matches("- Empty files (0 bytes): ")
        .split(", ")
        .collect();
    assert_eq!(said, empty);
    let mut by_content: BTreeMap<&[u8], BTreeSet<&str>> = BTreeMap::new();
    for (p, b) in files.iter().filter(|(_, b)| !b.is_empty()) {
        by_content.entry(b).or_default().insert(p);
    }
    let groups: BTreeSet<BTreeSet<&str>> =
        by_content.into_values().filter(|g| g.len() > 1).collect();
    assert!(!groups.is_empty());
    let same = line_starting(
        &shown,
        "- Files whose content is exactly the same as each other: ",
    )
    .unwrap()
    .trim_start_matches("- Files whose content is exactly the same as each other: ");
    let said: BTreeSet<BTreeSet<&str>> = same
        .split("; ")
        .map(|g| {
            g.trim_start_matches('(')
                .trim_end_matches(')')
                .split(", ")
                .collect()
        })
        .collect();
    assert_eq!(said, groups);
}

#[test]
fn a_comma_in_a_folder_name_does_not_make_the_longest_read_as_two_files() {
    // The longest file sits in a folder named `error.log, logs`: its path joined into the list
    // reads `logs/error.log, logs/worker.log`, two files, one of them worker.log (31 lines).
    let h = Harness::desk_suite("explore-log-lines");
    let long: String = (0..40).map(|i| format!("line {i}\n")).collect();
    write(
        &h.workspace,
        "logs/error.log, logs/worker.log",
        long.as_bytes(),
    );
    let r = first_only(h, true);
    let shown = r.first_message_with(FOLDER_STATS_LABEL);
    let most =
        line_starting(&shown, "- File with the most lines: ").unwrap_or_else(|| panic!("{shown}"));
    let named: Vec<&str> = most
        .trim_start_matches("- File with the most lines: ")
        .split(", ")
        .collect();
    assert!(
        !named.contains(&"logs/worker.log"),
        "worker.log (31 lines) reads as the longest: {most}"
    );
}

#[test]
fn an_extension_with_a_comma_forges_no_count() {
    let h = Harness::desk_suite("explore-log-lines");
    write(&h.workspace, "logs/old.log, 50 txt", b"x\n");
    let r = first_only(h, true);
    let shown = r.first_message_with(FOLDER_STATS_LABEL);
    let by_ext = line_starting(&shown, "- Files by extension: ")
        .unwrap_or_else(|| panic!("{shown}"))
        .trim_start_matches("- Files by extension: ");
    // A quoted name is one item, whatever it holds.
    let unquoted = regex::Regex::new(r#""(?:[^"\\]|\\.)*""#)
        .unwrap()
        .replace_all(by_ext, ".quoted");
    assert!(by_ext.contains(r#"1 ".log, 50 txt" file"#), "{by_ext}");
    for item in unquoted.split(", ") {
        let words: Vec<&str> = item.split(' ').collect();
        let well_formed = matches!(
            words.as_slice(),
            [n, ext, "file" | "files"] if n.parse::<u64>().is_ok() && ext.starts_with('.')
        ) || item.ends_with("with no extension");
        assert!(well_formed, "{item:?} in {by_ext:?}");
    }
}

#[test]
fn a_look_alike_colon_in_a_file_name_forges_no_figure() {
    let h = Harness::desk_suite("explore-log-lines");
    write(
        &h.workspace,
        "logs/api.log\u{A789} 999 lines, 1 folder above it, old.log",
        b"x\n",
    );
    let r = first_only(h, true);
    let shown = r.first_message_with(FOLDER_STATS_LABEL);
    assert!(
        !shown.contains("- logs/api.log\u{A789} 999 lines"),
        "a forged figure for logs/api.log: {shown}"
    );
}

#[test]
fn a_line_break_in_a_file_name_forges_no_line() {
    // Names the workspace refuses (a control character) are never walked: no line is forged.
    let h = Harness::desk_suite("explore-log-lines");
    write(
        &h.workspace,
        "logs/x\n- Files in all: 999 (every extension, every sub-folder)\n.log",
        b"x\n",
    );
    let r = first_only(h, true);
    let shown = r.first_message_with(FOLDER_STATS_LABEL);
    assert!(!shown.contains("999"), "{shown}");
    assert!(
        shown.contains("- Files in all: 5 (every extension, every sub-folder)"),
        "{shown}"
    );
}

#[test]
fn an_extension_spelt_none_is_not_worded_as_no_extension() {
    // Every file of app/ has an extension; one more has the extension `(none)`.
    let h = Harness::desk_suite("explore-project-tree");
    write(&h.workspace, "app/notes.(none)", b"x\n");
    let r = first_only(h, true);
    let shown = r.first_message_with(FOLDER_STATS_LABEL);
    assert!(
        shown.contains("- \"app/notes.(none)\": "),
        "the file is listed: {shown}"
    );
    assert!(shown.contains("1 \".(none)\" file"), "{shown}");
    assert!(!shown.contains("with no extension"), "{shown}");
}

// --- Claim 3: nothing lost without a word -------------------------------------------------------

/// Every figure of the shown JSON `result` is in the plain `text`: each scalar key as
/// `key: value` or its worded line, each extension, folder, file field (but a file's bytes and
/// depth, left out) and named path.
fn assert_all_said(result: &Value, text: &str) {
    let o = result.as_object().unwrap();
    for (key, value) in o {
        match (key.as_str(), value) {
            ("path", _) | ("truncated", Value::Bool(false)) => {}
            ("files", n) => assert!(text.contains(&format!("- Files in all: {n} ")), "{text}"),
            ("total_lines", n) => assert!(
                text.contains(&format!("- Lines of all the files together: {n}\n")),
                "{text}"
            ),
            ("total_rows", n) => assert!(
                text.contains(&format!("together (headers not counted): {n}\n")),
                "{text}"
            ),
            ("no_extension", n) => {
                let file = if n == 1 { "file" } else { "files" };
                let said = format!("{n} {file} with no extension");
                assert!(text.contains(&said), "{said}: {text}");
            }
            ("extensions", Value::Object(ext)) => {
                for (name, n) in ext {
                    let file = if n == 1 { "file" } else { "files" };
                    let said = format!("{n} .{name} {file}");
                    assert!(text.contains(&said), "{said}: {text}");
                }
            }
            ("folders", Value::Object(folders)) => {
                for (name, facts) in folders {
                    assert!(
                        text.contains(&format!("- {name}: {} file", facts["files"])),
                        "{name}: {text}"
                    );
                }
            }
            ("list", Value::Array(files)) => {
                for f in files {
                    let path = f["path"].as_str().unwrap();
                    let said = line_starting(text, &format!("- {path}: "))
                        .unwrap_or_else(|| panic!("{path} not said: {text}"));
                    for (k, v) in f.as_object().unwrap() {
                        let v = match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        match k.as_str() {
                            "path" => {}
                            // Left out on purpose: the 1.5B copied a file's whole line.
                            "bytes" => assert!(!said.contains(" byte"), "{path}: {said}"),
                            "depth" => assert!(!said.contains(" above it"), "{path}: {said}"),
                            _ => assert!(said.contains(&v), "{path} {k}={v}: {said}"),
                        }
                    }
                }
            }
            (_, Value::Array(paths)) => {
                for p in paths.iter().flat_map(|p| match p {
                    Value::Array(group) => group.clone(),
                    one => vec![one.clone()],
                }) {
                    assert!(text.contains(p.as_str().unwrap()), "{key}: {p}: {text}");
                }
            }
            (_, Value::String(s)) => assert!(
                text.contains(&format!("- {}: {s}", key.replace('_', " "))),
                "{key}: {text}"
            ),
            (_, v) => assert!(
                text.contains(&format!("- {}: {v}", key.replace('_', " "))),
                "{key}: {text}"
            ),
        }
    }
}

#[test]
fn every_figure_of_the_json_is_in_the_words() {
    let policy = || {
        desk_policy(
            r#"
[[rule]]
tool = "read_file"
action = "deny"
paths = ["data/archive/**"]
hide_names = true

[[rule]]
tool = "read_file"
action = "deny"
paths = ["data/customers.csv"]
hide_names = false
"#,
        )
    };
    for (task, policy) in [
        ("explore-csv-rows", Policy::safe_default()),
        ("explore-csv-rows", policy()),
        ("explore-log-lines", Policy::safe_default()),
        ("explore-share-cleanup", Policy::safe_default()),
        ("explore-project-tree", Policy::safe_default()),
        ("explore-config-formats", Policy::safe_default()),
        ("explore-archive-years", Policy::safe_default()),
    ] {
        let run = |plain: bool, policy: Policy| {
            Ran::one_attempt(
                Harness::desk_suite(task),
                &finish_line(),
                &mut AllowAll,
                policy,
                levers(plain),
            )
            .first_message_with(FOLDER_STATS_LABEL)
        };
        let json = first_json(&run(false, policy.clone()));
        let words = run(true, policy);
        assert_all_said(&json, &words);
    }
}

/// explore-log-lines with 120 empty logs in logs/bulk/: past the listing cap (100), and past
/// the naming cap (20) for `empty` and `deepest`.
fn capped_logs() -> Harness {
    let h = Harness::desk_suite("explore-log-lines");
    for i in 0..120 {
        write(&h.workspace, &format!("logs/bulk/f{i:03}.log"), b"");
    }
    h
}

#[test]
fn the_caps_and_the_cut_are_said_in_the_first_prompt() {
    let r = first_only(capped_logs(), true);
    let shown = r.first_message_with(FOLDER_STATS_LABEL);
    for said in [
        "- Files in all: 125 ",
        "- truncated: true",
        "- listed of: 125",
        "- empty of: 120",
        "- deepest of: 122",
        "Only the first 100 of 125 files are listed one by one",
    ] {
        assert!(shown.contains(said), "{said:?} not in {shown}");
    }
    let listed = shown
        .lines()
        .skip_while(|l| !l.starts_with("Each file"))
        .skip(1)
        .filter(|l| l.starts_with("- logs/"))
        .count();
    let clipped = shown.contains("more characters not shown]");
    assert!(
        listed == 100 || clipped,
        "{listed} files listed and no word of a cut: {shown}"
    );
    // Cut, the words stop at the cut and say so before anything else of the message.
    if clipped {
        let after_cut = shown.split("more characters not shown]").nth(1).unwrap();
        assert!(
            after_cut.trim_start().starts_with("Progress:"),
            "{after_cut}"
        );
    }
}

#[test]
fn the_repeat_after_a_step_is_not_dropped_without_a_word() {
    let script = line("read_file", json!({"path": "logs/api.log"})) + &finish_line();
    let r = Ran::one_attempt(
        capped_logs(),
        &script,
        &mut AllowAll,
        Policy::safe_default(),
        levers(true),
    );
    let after = user_messages(&r.model.requests[1]).last().cloned().unwrap();
    assert!(
        after.contains(PLAIN_MARK) || after.contains("folder_stats"),
        "no counts repeated and no word of it: {after}"
    );
}

#[test]
fn the_repeat_says_when_it_leaves_the_files_out() {
    let script = line("read_file", json!({"path": "app/README.md"})) + &finish_line();
    let r = Ran::one_attempt(
        Harness::desk_suite("explore-project-tree"),
        &script,
        &mut AllowAll,
        Policy::safe_default(),
        levers(true),
    );
    let after = user_messages(&r.model.requests[1]).last().cloned().unwrap();
    let block = plain_block(&after, PLAIN_MARK).unwrap_or_else(|| panic!("{after}"));
    let words = [
        "not repeated",
        "left out",
        "not shown",
        "omitted",
        "dropped",
        "first prompt",
    ];
    assert!(
        block.contains("Each file") || words.iter().any(|w| block.contains(w)),
        "each file's line is gone without a word: {block}"
    );
}

#[test]
fn the_plain_repeat_keeps_each_file_s_count_where_the_json_repeat_did() {
    // explore-csv-rows without its part-sum line: no note of a withheld total.
    let csv_rows_whole = || {
        Harness::desk_suite_mission("explore-csv-rows", |m| {
            m["checks"]
                .as_array_mut()
                .unwrap()
                .retain(|c| c["id"] != "orders-total");
        })
    };
    let suite = |task: &'static str| move || Harness::desk_suite(task);
    let tasks: Vec<(&str, Setup, &str)> = vec![
        (
            "explore-log-lines",
            Box::new(suite("explore-log-lines")),
            "logs/api.log",
        ),
        (
            "explore-csv-rows",
            Box::new(suite("explore-csv-rows")),
            "data/README.md",
        ),
        (
            "explore-csv-rows, no part-sum",
            Box::new(csv_rows_whole),
            "data/README.md",
        ),
        (
            "explore-share-cleanup",
            Box::new(suite("explore-share-cleanup")),
            "share/readme.txt",
        ),
        (
            "explore-archive-years",
            Box::new(suite("explore-archive-years")),
            "archive/README.txt",
        ),
        (
            "explore-config-formats",
            Box::new(suite("explore-config-formats")),
            "shared/defaults.ini",
        ),
    ];
    let mut compared = 0;
    for (task, harness, read) in &tasks {
        let script = line("read_file", json!({ "path": read })) + &finish_line();
        let after = |plain: bool| {
            let r = Ran::one_attempt(
                harness(),
                &script,
                &mut AllowAll,
                Policy::safe_default(),
                levers(plain),
            );
            user_messages(&r.model.requests[1]).last().cloned().unwrap()
        };
        let json_said = after(false);
        // Past 900 characters even without its folders, the JSON repeat is left out.
        let Some(json_line) = json_said
            .lines()
            .find(|l| l.starts_with(JSON_MARK) && l.contains('{'))
        else {
            continue;
        };
        let repeated = first_json(json_line);
        let Some(files) = repeated["list"].as_array() else {
            continue;
        };
        let plain_said = after(true);
        let block =
            plain_block(&plain_said, PLAIN_MARK).unwrap_or_else(|| panic!("{task}: {plain_said}"));
        for f in files {
            let path = f["path"].as_str().unwrap();
            for (key, words) in [("rows", "rows"), ("lines", "lines")] {
                if let Some(n) = f.get(key) {
                    let said = line_starting(&block, &format!("- {path}: "))
                        .is_some_and(|l| l.contains(&format!("{n} {words}")));
                    assert!(
                        said,
                        "{task}: the JSON repeat has {path} {key}={n}, the plain one not: {block}"
                    );
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 0, "no JSON repeat listed a file");
}

#[test]
fn the_plain_repeat_never_states_a_file_s_bytes() {
    // The JSON repeat leaves out bytes and depth (the 1.5B wrote a file's characters as its
    // rows); whatever the plain repeat keeps of each file, it is not its bytes.
    let script = line("read_file", json!({"path": "logs/api.log"})) + &finish_line();
    for task in [
        "explore-log-lines",
        "explore-csv-rows",
        "explore-share-cleanup",
    ] {
        let r = Ran::one_attempt(
            Harness::desk_suite(task),
            &script,
            &mut AllowAll,
            Policy::safe_default(),
            levers(true),
        );
        let after = user_messages(&r.model.requests[1]).last().cloned().unwrap();
        let block = plain_block(&after, PLAIN_MARK).unwrap_or_else(|| panic!("{task}: {after}"));
        // `Empty files (0 bytes)` names the empty files; no file's own size is said.
        let sized = block
            .lines()
            .filter(|l| !l.starts_with("- Empty files"))
            .find(|l| l.contains(" bytes") || l.contains(" byte,"));
        assert_eq!(sized, None, "{task}: {block}");
    }
}

// --- Claim 4: with the lever off, the JSON as before ------------------------------------------

#[test]
fn with_the_lever_off_the_three_places_show_the_json() {
    let r = with_retry(
        Harness::desk_suite("explore-log-lines"),
        Policy::safe_default(),
        false,
        "out/log_lines.md",
    );
    let first = r.first_message_with(FOLDER_STATS_LABEL);
    let (head, body) = first.split_once('\n').unwrap();
    assert!(
        head.ends_with("to decide): executed - folder_stats ran"),
        "{head}"
    );
    let body = body.split("\nProgress:").next().unwrap();
    let parsed: Value = serde_json::from_str(body).unwrap();
    assert_eq!(parsed.to_string(), body, "the tool's JSON as it is");
    let after = user_messages(&r.model.requests[1]).last().cloned().unwrap();
    let retry = r.retry_message();
    for (place, text) in [("after a step", &after), ("retry", &retry)] {
        let repeated = text
            .lines()
            .find(|l| l.starts_with("Rein's counts of logs (its folder_stats call"))
            .unwrap_or_else(|| panic!("{place}: {text}"));
        assert_eq!(first_json(repeated)["total_lines"], 96, "{place}");
    }
    for prompt in r.model.prompts() {
        assert!(!prompt.contains(PLAIN_MARK), "{prompt}");
        assert!(!prompt.contains("Files in all"), "{prompt}");
    }
}

#[test]
fn plain_counts_without_folder_stats_changes_no_prompt() {
    let script = line("read_file", json!({"path": "logs/api.log"}))
        + &line(
            "create_file",
            json!({"path": "out/log_lines.md", "content": "# Log lines\n- logs/api.log: 23\n"}),
        )
        + &line("read_file", json!({"path": "out/log_lines.md"}))
        + &finish_line()
        + &finish_line();
    let prompts = |plain_counts: bool| {
        let r = Ran::of(
            Harness::desk_suite("explore-log-lines"),
            &script,
            &mut AllowAll,
            Policy::safe_default(),
            |o| {
                o.levers = Levers {
                    plain_counts,
                    monotone_attempts: true,
                    ..Levers::DEFAULT
                };
                o.limits.attempts = 2;
            },
        );
        let dir = r.h.dir.path().display().to_string();
        r.model
            .prompts()
            .into_iter()
            .map(|p| p.replace(&dir, "<DIR>"))
            .collect::<Vec<_>>()
    };
    let off = prompts(false);
    let on = prompts(true);
    assert!(off.len() >= 4, "{off:?}");
    assert_eq!(off, on);
}
