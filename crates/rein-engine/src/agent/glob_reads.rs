//! Lever `glob-reads`: a `read_file` call whose `path` is a glob (`hiring/*.md`, `*.csv`) or a
//! folder (`hiring`, `hiring/`) runs as the `find_files` call for that glob, and Rein then reads
//! the files it lists, each whole and each through the gate as a read of its own, and shows
//! them after the listing. The 1.5B read summarize-interviews' interview notes one at a time and
//! rewrote the whole summary after each read (losing the one before) until the no-progress cap;
//! on explore-archive-years it read one letter of twenty and wrote counts for all of them.
//!
//! Which files are read stays the model's choice: its glob names them, and the listing is the
//! gate's `find_files` answer (policy's path rules apply to it as to any walk). Rein looks at a
//! listed file before reading it (its size, whether it is text) only where policy lets
//! `read_file` show it without asking; any other file is named for the model to read itself.
//! Caps say so when they fire: at most [`GLOB_READS_MAX_FILES`] files and
//! [`GLOB_READS_MAX_CHARS`] characters of results per call; the files left are named.

use rein_workspace::desk::glob_path;
use serde_json::{json, Value};

/// Most files Rein reads for one `read_file` call with a glob.
pub const GLOB_READS_MAX_FILES: usize = 24;
/// Most characters the results of one glob's reads take in the prompt together: as much as
/// one read's shown result.
pub const GLOB_READS_MAX_CHARS: usize = super::prompt::MAX_RESULT_CHARS;
/// Characters one read's result takes besides its escaped text and path: its label, keys and
/// line numbers.
const READ_FRAME_CHARS: usize = 200;
/// Most files the note names among those not read.
const NAMED_LEFT_MAX: usize = 12;

/// A `read_file` call that stands for a `find_files` call.
#[derive(Debug, Clone, PartialEq)]
pub struct GlobRead {
    /// The path as the model gave it.
    pub asked: String,
    /// The `find_files` call that runs instead: `{"pattern": ..., "path": ...}`.
    pub find_args: Value,
}

/// The `find_files` call a `read_file` call stands for, or `None` (left as it is): a call
/// with any key but `path`; a path without `*` or `?` that `is_folder` does not confirm; the
/// workspace's root; an absolute path or one with `..` (left for `read_file` to refuse).
pub fn glob_read(params: &Value, is_folder: impl FnOnce(&str) -> bool) -> Option<GlobRead> {
    let fields = params.as_object()?;
    if fields.len() != 1 {
        return None;
    }
    let asked = fields.get("path")?.as_str()?;
    if asked.starts_with('/') || asked.contains('\\') {
        return None;
    }
    let parts: Vec<&str> = asked
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.is_empty() || parts.contains(&"..") {
        return None;
    }
    let find_args = match glob_path(asked) {
        Some(g) => json!({"pattern": g.glob, "path": g.folder}),
        None => {
            let folder = parts.join("/");
            if !is_folder(&folder) {
                return None;
            }
            json!({"pattern": format!("{folder}/*"), "path": folder})
        }
    };
    Some(GlobRead {
        asked: asked.to_string(),
        find_args,
    })
}

/// What Rein could tell of a listed file before reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// Text of this many characters, as a read's result escapes it.
    Text { shown_chars: usize },
    /// Not text as the tools take it (binary, not UTF-8), or gone.
    NotText,
    /// Larger than one glob's share of the prompt.
    TooLong,
    /// Policy does not let `read_file` show it without asking, so Rein did not look.
    Kept,
}

/// Which listed files Rein reads, in the listing's order, and which it leaves, with why.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    pub read: Vec<String>,
    pub left: Vec<(String, &'static str)>,
}

/// The files of `listed` Rein reads for one glob: each that `look` finds text, while the
/// files and characters stay under the caps; later smaller files are still read when one is
/// over the characters left.
pub fn plan_reads(listed: &[String], mut look: impl FnMut(&str) -> Look) -> Plan {
    let mut plan = Plan::default();
    let mut used = 0;
    for path in listed {
        if plan.read.len() == GLOB_READS_MAX_FILES {
            plan.left
                .push((path.clone(), "over the cap on files read for one call"));
            continue;
        }
        match look(path) {
            Look::Kept => plan
                .left
                .push((path.clone(), "policy asks before it is read, or keeps it")),
            Look::NotText => plan.left.push((path.clone(), "not a text file")),
            Look::TooLong => plan
                .left
                .push((path.clone(), "too long to be read with the others")),
            Look::Text { shown_chars } => {
                let cost = shown_chars + path.chars().count() + READ_FRAME_CHARS;
                if used + cost > GLOB_READS_MAX_CHARS {
                    plan.left
                        .push((path.clone(), "over the characters read for one call"));
                } else {
                    used += cost;
                    plan.read.push(path.clone());
                }
            }
        }
    }
    plan
}

/// The characters a file's text takes as a read's result shows it (JSON-escaped).
pub fn shown_chars(text: &str) -> usize {
    serde_json::to_string(text).map_or(usize::MAX, |s| s.chars().count())
}

/// What the model reads before the results: what its call became, how many files the glob
/// listed, which Rein read and which it left (and why), and how to read the rest.
pub fn glob_note(read: &GlobRead, listed: usize, plan: &Plan, truncated: bool) -> String {
    let mut s = format!(
        "Your read_file path \"{}\" names several files, so it ran as find_files {}",
        read.asked, read.find_args
    );
    if listed == 0 {
        s.push_str(
            " and matched no file; nothing was read. Use list_dir or find_files to see the names.",
        );
        return s;
    }
    s.push_str(&format!(
        ", which listed {listed} file{}{}; Rein read {} of them whole for you (lever glob-reads), each a read_file call of its own, shown below.",
        plural(listed),
        if truncated { " (its list was cut)" } else { "" },
        plan.read.len()
    ));
    if !plan.left.is_empty() {
        s.push_str(&format!(" Not read ({}):", plan.left.len()));
        for (path, why) in plan.left.iter().take(NAMED_LEFT_MAX) {
            s.push_str(&format!(" {path} ({why});"));
        }
        if plan.left.len() > NAMED_LEFT_MAX {
            s.push_str(&format!(" and {} more;", plan.left.len() - NAMED_LEFT_MAX));
        }
        s.push_str(" read those with read_file, one path or a narrower glob at a time.");
    }
    s
}

/// Most unread files the suggested glob read names one by one; past it they are counted.
const SUGGESTED_NAMED_MAX: usize = 4;

/// The progress note's suggested step with the lever, when two or more unread inputs sit in the
/// folder of the first one (`unread` in the note's order): one `read_file` call with that
/// folder's glob (`hiring/*.md` when they share an extension, else `hiring/*`). `None` for a
/// first input at the workspace's root (a glob without a folder matches at any depth) or alone
/// in its folder among the unread.
pub fn glob_suggestion(unread: &[&str]) -> Option<String> {
    let folder_of = |p: &str| p.rsplit_once('/').map(|(folder, _)| folder.to_string());
    let folder = folder_of(unread.first()?)?;
    let siblings: Vec<&str> = unread
        .iter()
        .copied()
        .filter(|u| folder_of(u).as_deref() == Some(folder.as_str()))
        .collect();
    if siblings.len() < 2 || folder.contains(['*', '?', '[', '{']) {
        return None;
    }
    let extension = |p: &str| {
        p.rsplit_once('/')
            .map_or(p, |(_, name)| name)
            .rsplit_once('.')
            .map(|(_, e)| e.to_string())
            .filter(|e| !e.is_empty() && !e.contains(['*', '?', '[', '{']))
    };
    let shared = extension(siblings[0]).filter(|e| {
        siblings
            .iter()
            .all(|s| extension(s).as_deref() == Some(e.as_str()))
    });
    let glob = match shared {
        Some(e) => format!("{folder}/*.{e}"),
        None => format!("{folder}/*"),
    };
    let named = if siblings.len() > SUGGESTED_NAMED_MAX {
        format!("the {} unread files of {folder}/", siblings.len())
    } else {
        siblings.join(", ")
    };
    Some(format!(
        "read {named} at once with read_file {}",
        json!({ "path": glob })
    ))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_folder(_: &str) -> bool {
        false
    }

    #[test]
    fn a_glob_becomes_find_files_in_the_folder_before_its_first_wildcard() {
        let g = glob_read(&json!({"path": "./hiring//*.md"}), no_folder).unwrap();
        assert_eq!(
            g.find_args,
            json!({"pattern": "hiring/*.md", "path": "hiring"})
        );
        let g = glob_read(&json!({"path": "*.csv"}), no_folder).unwrap();
        assert_eq!(g.find_args, json!({"pattern": "*.csv", "path": "."}));
    }

    #[test]
    fn a_folder_becomes_its_own_files_only_when_the_world_confirms_it() {
        let g = glob_read(&json!({"path": "hiring/"}), |f| f == "hiring").unwrap();
        assert_eq!(
            g.find_args,
            json!({"pattern": "hiring/*", "path": "hiring"})
        );
        assert!(glob_read(&json!({"path": "notes.md"}), no_folder).is_none());
    }

    #[test]
    fn other_calls_are_left_as_they_are() {
        for params in [
            json!({"path": "a/*.md", "start_line": 2}),
            json!({"path": "/etc/*"}),
            json!({"path": "../*.md"}),
            json!({"path": "a/../../*"}),
            json!({"path": "."}),
            json!({"path": "./"}),
            json!({"path": "a\\*.md"}),
            json!({"path": 7}),
            json!("a/*.md"),
        ] {
            assert!(glob_read(&params, |_| true).is_none(), "{params}");
        }
    }

    #[test]
    fn the_plan_keeps_to_both_caps_and_says_why_each_file_was_left() {
        let listed: Vec<String> = (0..30).map(|i| format!("d/{i:02}.txt")).collect();
        let plan = plan_reads(&listed, |p| match p {
            "d/00.txt" => Look::Kept,
            "d/01.txt" => Look::NotText,
            "d/02.txt" => Look::TooLong,
            _ => Look::Text { shown_chars: 10 },
        });
        assert_eq!(plan.read.len(), GLOB_READS_MAX_FILES);
        assert_eq!(plan.read.len() + plan.left.len(), 30);
        assert_eq!(plan.left[0].0, "d/00.txt");
        assert!(plan
            .left
            .iter()
            .any(|(p, why)| p == "d/29.txt" && why.contains("cap on files")));

        let big = plan_reads(&listed[..3], |p| Look::Text {
            shown_chars: if p == "d/01.txt" {
                GLOB_READS_MAX_CHARS
            } else {
                100
            },
        });
        assert_eq!(big.read, vec!["d/00.txt", "d/02.txt"]);
        assert_eq!(
            big.left,
            vec![(
                "d/01.txt".to_string(),
                "over the characters read for one call"
            )]
        );
    }

    #[test]
    fn the_suggestion_reads_the_first_unread_input_s_folder_at_once() {
        assert_eq!(
            glob_suggestion(&["hiring/a.md", "data/x.csv", "hiring/b.md"]).unwrap(),
            r#"read hiring/a.md, hiring/b.md at once with read_file {"path":"hiring/*.md"}"#
        );
        let mixed = glob_suggestion(&["h/scores.csv", "h/irene.md"]).unwrap();
        assert!(mixed.ends_with(r#"{"path":"h/*"}"#), "{mixed}");
        let many: Vec<String> = (0..6).map(|i| format!("logs/d{i}.log")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let s = glob_suggestion(&many).unwrap();
        assert!(
            s.starts_with("read the 6 unread files of logs/ at once"),
            "{s}"
        );
        for alone in [
            &["a.md", "b.md"][..],
            &["hiring/a.md", "data/b.md"][..],
            &["h*/a.md", "h*/b.md"][..],
            &[][..],
        ] {
            assert!(glob_suggestion(alone).is_none(), "{alone:?}");
        }
    }

    #[test]
    fn the_note_names_what_was_left_and_says_when_nothing_matched() {
        let g = glob_read(&json!({"path": "h/*.md"}), no_folder).unwrap();
        let none = glob_note(&g, 0, &Plan::default(), false);
        assert!(none.contains("matched no file"), "{none}");
        let plan = Plan {
            read: vec!["h/a.md".into()],
            left: vec![("h/b.md".into(), "not a text file")],
        };
        let note = glob_note(&g, 2, &plan, false);
        assert!(note.contains("listed 2 files"), "{note}");
        assert!(note.contains("Rein read 1 of them"), "{note}");
        assert!(note.contains("h/b.md (not a text file)"), "{note}");
    }
}
