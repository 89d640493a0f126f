//! Lever `plain-counts`: the figures of Rein's `folder_stats` call (lever `folder-stats`) are
//! shown as plain lines, each figure after the words that say what it counts (`7 .js files`,
//! `app/test: 2 files`), instead of the tool's JSON. The 1.5B, given
//! `"files":13,...,"extensions":{"js":7,...}` on explore-project-tree, wrote
//! `JavaScript files: 13`, the first number of the result, and kept it through three attempts.
//!
//! Only the presentation changes: the lines are made from the result as Rein showed it, after
//! [`super::folder_facts::withhold_disputed`], so a figure withheld there is withheld here too,
//! and every key this module does not know is kept as `key: value`.

use serde_json::{Map, Value};

/// How much of a result [`plain_counts`] shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// The totals, each folder and each file.
    Files,
    /// The totals and each folder.
    Folders,
    /// The totals only.
    Totals,
}

/// Keys [`plain_counts`] words itself; any other key is kept as `key: value`.
const WORDED: &[&str] = &[
    "path",
    "files",
    "extensions",
    "no_extension",
    "folders",
    "list",
    "total_lines",
    "total_rows",
    "most_files",
    "most_lines",
    "most_rows",
    "deepest",
    "empty",
    "same_content",
];

/// The `folder_stats` result `result` as plain lines, with as much as `detail` asks for; `None`
/// when it is not an object with a path (an error, a refusal), which is then shown as it is.
pub fn plain_counts(result: &Value, detail: Detail) -> Option<String> {
    let o = result.as_object()?;
    let path = o.get("path")?.as_str()?;
    let mut lines = vec![format!("Counts of {} and everything under it:", name(path))];
    if let Some(n) = o.get("files") {
        lines.push(format!(
            "- Files in all: {} (every extension, every sub-folder)",
            figure(n)
        ));
    }
    if let Some(ext) = by_extension(o) {
        lines.push(format!("- Files by extension: {ext}"));
    }
    for (key, words) in [
        ("total_lines", "Lines of all the files together"),
        (
            "total_rows",
            "Data rows of all the tables together (headers not counted)",
        ),
    ] {
        if let Some(n) = o.get(key) {
            lines.push(format!("- {words}: {}", figure(n)));
        }
    }
    for (key, one, tied) in [
        (
            "most_files",
            "Folder with the most files of its own",
            "Folders tied for the most files of their own",
        ),
        (
            "most_lines",
            "File with the most lines",
            "Files tied for the most lines",
        ),
        (
            "most_rows",
            "File with the most data rows",
            "Files tied for the most data rows",
        ),
        (
            "deepest",
            "File with the most folders above it",
            "Files tied for the most folders above them",
        ),
        ("empty", "Empty files (0 bytes)", "Empty files (0 bytes)"),
    ] {
        if let Some(paths) = o.get(key) {
            let words = if paths.as_array().is_some_and(|a| a.len() > 1) {
                tied
            } else {
                one
            };
            lines.push(format!("- {words}: {}", path_list(paths)));
        }
    }
    if let Some(groups) = o.get("same_content") {
        lines.push(format!(
            "- Files whose content is exactly the same as each other: {}",
            groups_of(groups)
        ));
    }
    // `truncated: false` says nothing; `true` stays, with the notes that say what was cut.
    let unworded = o
        .iter()
        .filter(|(k, v)| !WORDED.contains(&k.as_str()) && (*k != "truncated" || **v != false));
    for (key, value) in unworded {
        lines.push(format!("- {}: {}", key.replace('_', " "), figure(value)));
    }
    if detail != Detail::Totals {
        if let Some(folders) = o.get("folders").and_then(Value::as_object) {
            lines.push("Each folder's own files (its sub-folders' files not counted):".into());
            lines.extend(folders.iter().map(|(name, f)| folder_line(name, f)));
        }
    }
    if detail == Detail::Files {
        if let Some(files) = o.get("list").and_then(Value::as_array) {
            // A file's line is copied whole into the list item a task asks for (`- <path>: <N>
            // rows`): its rows are `rows`, as the task says, with what they count said here.
            lines.push("Each file (rows are data rows, the header not counted):".into());
            lines.extend(files.iter().map(file_line));
        }
    }
    Some(lines.join("\n"))
}

/// A number as it is, any other value as its JSON.
fn figure(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A path or extension as it is when it holds only letters, digits and `._-/`, else JSON-quoted:
/// a name cannot then pass for words of the line it is on (`a.log, b.log` as two files, a
/// look-alike colon and a forged figure after it, `a.x 9 files with no extension`).
fn name(text: &str) -> String {
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c));
    if plain && !text.is_empty() {
        text.to_string()
    } else {
        Value::String(text.to_string()).to_string()
    }
}

/// A named path of the result: [`name`] of a string, the JSON of anything else.
fn named(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), name)
}

/// `1 line`, `2 lines`: `n` (a figure of the result) with the word that fits it.
fn counted(n: &Value, one: &str, many: &str) -> String {
    let word = if n.as_u64() == Some(1) { one } else { many };
    format!("{} {word}", figure(n))
}

/// `7 .js files, 2 .yaml files, 1 file with no extension`: the `extensions` of `facts` most
/// first, then by name, then its `no_extension`; `None` when `facts` has neither.
fn by_extension(facts: &Map<String, Value>) -> Option<String> {
    let ext = facts.get("extensions").and_then(Value::as_object);
    let none = facts.get("no_extension");
    if ext.is_none() && none.is_none() {
        return None;
    }
    let mut pairs: Vec<(&String, u64)> = ext
        .into_iter()
        .flatten()
        .map(|(name, n)| (name, n.as_u64().unwrap_or(0)))
        .collect();
    pairs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let file = |n: u64| if n == 1 { "file" } else { "files" };
    let mut said: Vec<String> = pairs
        .iter()
        .map(|(ext, n)| format!("{n} {} {}", name(&format!(".{ext}")), file(*n)))
        .collect();
    if let Some(n) = none {
        said.push(counted(
            n,
            "file with no extension",
            "files with no extension",
        ));
    }
    Some(if said.is_empty() {
        "none".into()
    } else {
        said.join(", ")
    })
}

/// `a, b` or `none`.
fn path_list(paths: &Value) -> String {
    match paths.as_array() {
        Some(a) if a.is_empty() => "none".into(),
        Some(a) => a.iter().map(named).collect::<Vec<_>>().join(", "),
        None => figure(paths),
    }
}

/// `(a, b); (c, d)` or `none`.
fn groups_of(groups: &Value) -> String {
    match groups.as_array() {
        Some(a) if a.is_empty() => "none".into(),
        Some(a) => a
            .iter()
            .map(|g| format!("({})", path_list(g)))
            .collect::<Vec<_>>()
            .join("; "),
        None => figure(groups),
    }
}

/// `- app/test: 2 files (2 .js files)`.
fn folder_line(folder: &str, facts: &Value) -> String {
    let files = facts
        .get("files")
        .map_or_else(|| "? files".into(), |n| counted(n, "file", "files"));
    match facts.as_object().and_then(by_extension) {
        Some(ext) => format!("- {}: {files} ({ext})", name(folder)),
        None => format!("- {}: {files}", name(folder)),
    }
}

/// `- data/orders.csv: 12 rows, 13 lines, 410 bytes, depth 1`, with any other field kept.
fn file_line(file: &Value) -> String {
    let Some(o) = file.as_object() else {
        return format!("- {}", figure(file));
    };
    let path = o.get("path").map(named).unwrap_or_else(|| "?".into());
    let mut parts = Vec::new();
    for (key, one, many) in [
        ("rows", "row", "rows"),
        ("lines", "line", "lines"),
        ("bytes", "byte", "bytes"),
        ("depth", "folder above it", "folders above it"),
    ] {
        if let Some(n) = o.get(key) {
            parts.push(counted(n, one, many));
        }
    }
    for (key, value) in o
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "path" | "rows" | "lines" | "bytes" | "depth"))
    {
        parts.push(format!("{}: {}", key.replace('_', " "), figure(value)));
    }
    if parts.is_empty() {
        format!("- {path}")
    } else {
        format!("- {path}: {}", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn project_tree() -> Value {
        json!({
            "path": "app", "files": 4, "total_lines": 20, "truncated": false,
            "folders": {
                "app": {"files": 1, "extensions": {"md": 1}},
                "app/test": {"files": 2, "extensions": {"js": 2}},
                "app/src/db": {"files": 1, "extensions": {"js": 1}},
            },
            "extensions": {"js": 3, "md": 1},
            "most_files": ["app/test"], "most_lines": ["app/README.md"],
            "deepest": ["app/src/db/pool.js"], "empty": [], "same_content": [],
            "list": [
                {"path": "app/README.md", "bytes": 185, "lines": 8, "depth": 1},
                {"path": "app/src/db/pool.js", "bytes": 107, "lines": 2, "depth": 3},
            ],
        })
    }

    #[test]
    fn each_figure_follows_the_words_that_say_what_it_counts() {
        let text = plain_counts(&project_tree(), Detail::Files).unwrap();
        assert!(text.contains("- Files in all: 4 (every extension, every sub-folder)"));
        assert!(text.contains("- Files by extension: 3 .js files, 1 .md file"));
        assert!(text.contains("- app/test: 2 files (2 .js files)"));
        assert!(text.contains("- File with the most folders above it: app/src/db/pool.js"));
        assert!(text.contains("- Empty files (0 bytes): none"));
        assert!(text.contains("- app/src/db/pool.js: 2 lines, 107 bytes, 3 folders above it"));
        assert!(!text.contains("truncated"), "{text}");
    }

    #[test]
    fn less_detail_drops_the_files_then_the_folders() {
        let folders = plain_counts(&project_tree(), Detail::Folders).unwrap();
        assert!(folders.contains("- app/test: 2 files"));
        assert!(!folders.contains("Each file"));
        let totals = plain_counts(&project_tree(), Detail::Totals).unwrap();
        assert!(!totals.contains("app/test: 2 files"));
        assert!(totals.contains("- Files in all: 4"));
    }

    #[test]
    fn withheld_figures_and_unknown_keys_are_kept_as_they_are() {
        let result = json!({
            "path": "logs", "files": 2, "extensions": {"log": 2},
            "withheld": "total_lines: a check of the task counts these files otherwise; count it yourself",
            "listed_of": 140,
            "list": [
                {"path": "logs/a.log", "bytes": 9, "depth": 1,
                 "withheld": "lines: this file is counted otherwise by the task's check; count it yourself"},
            ],
        });
        let text = plain_counts(&result, Detail::Files).unwrap();
        assert!(text.contains("- withheld: total_lines: a check of the task counts"));
        assert!(text.contains("- listed of: 140"));
        let cut = json!({"path": "big", "files": 140, "truncated": true});
        let cut_text = plain_counts(&cut, Detail::Totals).unwrap();
        assert!(cut_text.contains("- truncated: true"), "{cut_text}");
        assert!(text.contains(
            "- logs/a.log: 9 bytes, 1 folder above it, withheld: lines: this file is counted otherwise"
        ));
        assert!(!text.contains("Lines of all the files"), "{text}");
    }

    #[test]
    fn files_without_an_extension_and_same_content_groups_read_as_words() {
        let result = json!({
            "path": "share", "files": 4, "extensions": {"csv": 2, "(none)": 1},
            "no_extension": 1,
            "same_content": [["share/a.csv", "share/old/a.csv"]],
        });
        let text = plain_counts(&result, Detail::Totals).unwrap();
        // A real extension `(none)` is an extension like any other.
        assert!(
            text.contains("2 .csv files, 1 \".(none)\" file, 1 file with no extension\n"),
            "{text}"
        );
        assert!(
            !text.contains("no extension:"),
            "worded, not kept as a key: {text}"
        );
        assert!(text.contains("exactly the same as each other: (share/a.csv, share/old/a.csv)"));
    }

    #[test]
    fn anything_but_a_counted_folder_is_not_worded() {
        assert_eq!(plain_counts(&json!("error"), Detail::Files), None);
        assert_eq!(plain_counts(&json!({"files": 3}), Detail::Files), None);
    }
}
