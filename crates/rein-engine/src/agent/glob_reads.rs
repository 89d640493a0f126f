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
/// Characters one read's result takes besides its escaped text, its column totals and its
/// path (shown twice, in the label and in the result): the label's words, keys and numbers.
const READ_FRAME_CHARS: usize = 250;
/// Most files the note names among those not read (all are counted).
const NAMED_LEFT_MAX: usize = 12;
/// The wildcards of a glob; a path part holding one is no folder to walk.
const WILDCARDS: [char; 4] = ['*', '?', '[', '{'];
/// `read_file`'s line range: dropped from a glob, whose files are each read whole. The 1.5B's
/// first glob on explore-csv-rows came with `start_line` 1 and `end_line` 24 and was refused.
const RANGE_KEYS: [&str; 2] = ["start_line", "end_line"];

/// A `read_file` call that stands for a `find_files` call.
#[derive(Debug, Clone, PartialEq)]
pub struct GlobRead {
    /// The path as the model gave it.
    pub asked: String,
    /// The `find_files` call that runs instead: `{"pattern": ..., "path": ...}`.
    pub find_args: Value,
    /// The line-range keys the call gave, dropped (each listed file is read whole).
    pub dropped: Vec<&'static str>,
}

/// The `find_files` call a `read_file` call stands for, or `None` (left as it is): a call
/// with any key but `path` and a valid line range (`start_line`, `end_line`: whole numbers
/// from 1, dropped); a path without `*` or `?` that `is_folder` does not confirm; the
/// workspace's root; an absolute path or one with `..` (left for `read_file` to refuse).
/// The folder walked is the path's parts before the first that holds a wildcard (`[`, `{`
/// too, once `*` or `?` makes it a glob: `{notes,data}/*` walks the whole workspace).
pub fn glob_read(params: &Value, is_folder: impl FnOnce(&str) -> bool) -> Option<GlobRead> {
    let fields = params.as_object()?;
    let valid_line = |v: &Value| v.as_u64().is_some_and(|n| n >= 1);
    let known = |(key, value): (&String, &Value)| {
        key == "path" || (RANGE_KEYS.contains(&key.as_str()) && valid_line(value))
    };
    if !fields.iter().all(known) {
        return None;
    }
    let dropped: Vec<&'static str> = RANGE_KEYS
        .into_iter()
        .filter(|k| fields.contains_key(*k))
        .collect();
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
        Some(g) => {
            let plain = parts.iter().take_while(|p| !p.contains(WILDCARDS)).count();
            let folder = if plain == 0 {
                ".".to_string()
            } else {
                parts[..plain].join("/")
            };
            json!({"pattern": g.glob, "path": folder})
        }
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
        dropped,
    })
}

/// Whether `path` is a dot file (or lies under a dot folder) that the model's glob `asked`
/// does not name with a dot: as a shell's `*` and `ls` do, `config/*` and `config` leave out
/// `config/.env`; `config/.*` names it.
pub fn unnamed_dot_file(asked: &str, path: &str) -> bool {
    let named = asked
        .split('/')
        .any(|part| part.starts_with('.') && part != "." && part != "..");
    !named && path.split('/').any(|part| part.starts_with('.'))
}

/// What Rein could tell of a listed file before reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// Text whose read would show this many characters of it (JSON-escaped), with what other
    /// levers add to that read (`table-facts`' column totals).
    Text { shown_chars: usize },
    /// Not text as the tools take it (binary, not UTF-8).
    NotText,
    /// Larger than one glob's share of the prompt, or gone since the listing.
    TooLong,
    /// Policy does not let `read_file` show it without asking, so Rein did not look.
    Kept,
}

/// What Rein did with a glob's listing: the files read and shown whole, the files read but
/// not shown whole (changed since the look, or cut), and the files left, with why.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    pub whole: Vec<String>,
    pub cut: Vec<String>,
    pub left: Vec<(String, &'static str)>,
}

impl Plan {
    pub fn reads(&self) -> usize {
        self.whole.len() + self.cut.len()
    }
}

/// What reads a glob's files: a look before each read, and the read itself.
pub trait ListedReader {
    /// What can be told of the file before reading it.
    fn look(&mut self, path: &str) -> Look;
    /// Reads the file: the characters the model is shown, and whether they show it whole.
    fn read(&mut self, path: &str) -> (usize, bool);
}

/// Reads the files of `listed` for the glob `asked` (`None`: files the model named one by one,
/// dot files among them), in the listing's order: each that the reader's look finds text, while
/// the files and the characters shown so far stay under the caps. A file over the characters
/// left is left and smaller ones after it are still read.
pub fn read_listed(asked: Option<&str>, listed: &[String], reader: &mut dyn ListedReader) -> Plan {
    let mut plan = Plan::default();
    let mut used = 0;
    for path in listed {
        if plan.reads() == GLOB_READS_MAX_FILES {
            plan.left
                .push((path.clone(), "over the cap on files read for one call"));
            continue;
        }
        if asked.is_some_and(|asked| unnamed_dot_file(asked, path)) {
            plan.left.push((
                path.clone(),
                "a dot file, read only when the glob names it with its dot",
            ));
            continue;
        }
        match reader.look(path) {
            Look::Kept => plan
                .left
                .push((path.clone(), "policy asks before it is read, or keeps it")),
            Look::NotText => plan.left.push((path.clone(), "not a text file")),
            Look::TooLong => plan
                .left
                .push((path.clone(), "too long to be read with the others")),
            Look::Text { shown_chars } => {
                let estimate = shown_chars + 2 * path.chars().count() + READ_FRAME_CHARS;
                if used + estimate > GLOB_READS_MAX_CHARS {
                    plan.left
                        .push((path.clone(), "over the characters read for one call"));
                    continue;
                }
                let (shown, whole) = reader.read(path);
                used += shown;
                if whole {
                    plan.whole.push(path.clone());
                } else {
                    plan.cut.push(path.clone());
                }
            }
        }
    }
    plan
}

/// The characters a text takes as a read's result shows it: JSON-escaped, with its quotes.
pub fn shown_chars(text: &str) -> usize {
    super::read_fit::escaped_len(text).saturating_add(2)
}

/// The reason the model's call gets, before the gate's: what it ran as.
pub fn ran_as_note(read: &GlobRead) -> String {
    let mut note = format!(
        "your read_file path \"{}\" names several files, so it ran as find_files {} (lever glob-reads)",
        read.asked, read.find_args
    );
    if !read.dropped.is_empty() {
        note.push_str(&format!(
            "; its {} {} dropped: Rein reads each listed file whole",
            read.dropped.join(" and "),
            if read.dropped.len() == 1 {
                "was"
            } else {
                "were"
            }
        ));
    }
    note
}

/// What the model reads after Rein's reads: how many files the glob listed, which were read
/// and shown whole, which were not shown whole, which were left (and why), and how to go on.
pub fn glob_note(listed: usize, plan: &Plan, truncated: bool) -> String {
    if listed == 0 {
        return "Your glob matched no file; nothing was read. Use list_dir or find_files to see the names."
            .to_string();
    }
    let opening = format!(
        "Your glob listed {listed} file{}{}; Rein read {} of them for you (lever glob-reads), each a read_file call of its own, shown above: {} shown whole.",
        plural(listed),
        if truncated { " (its list was cut)" } else { "" },
        plan.reads(),
        plan.whole.len(),
    );
    with_plan_left(
        opening,
        plan,
        "named in the listing above or by find_files with a narrower pattern",
        "read those with read_file, one path or a narrower glob at a time.",
    )
}

/// `opening`, then the files of `plan` not shown whole and those left (with why, the first
/// [`NAMED_LEFT_MAX`] by name, the rest counted and said to be `more_named`), then `go_on`.
pub fn with_plan_left(mut s: String, plan: &Plan, more_named: &str, go_on: &str) -> String {
    if !plan.cut.is_empty() {
        s.push_str(&format!(
            " Not shown whole (read the rest with read_file): {}.",
            plan.cut.join(", ")
        ));
    }
    if !plan.left.is_empty() {
        s.push_str(&format!(" Not read ({}):", plan.left.len()));
        for (path, why) in plan.left.iter().take(NAMED_LEFT_MAX) {
            s.push_str(&format!(" {path} ({why});"));
        }
        if plan.left.len() > NAMED_LEFT_MAX {
            s.push_str(&format!(
                " and {} more, {more_named};",
                plan.left.len() - NAMED_LEFT_MAX
            ));
        }
        s.push(' ');
        s.push_str(go_on);
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

/// `s` after a count other than one.
pub fn plural(n: usize) -> &'static str {
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

    struct Fake<L, R> {
        look: L,
        read: R,
    }

    impl<L: FnMut(&str) -> Look, R: FnMut(&str) -> (usize, bool)> ListedReader for Fake<L, R> {
        fn look(&mut self, path: &str) -> Look {
            (self.look)(path)
        }
        fn read(&mut self, path: &str) -> (usize, bool) {
            (self.read)(path)
        }
    }

    fn read_with(
        listed: &[String],
        look: impl FnMut(&str) -> Look,
        read: impl FnMut(&str) -> (usize, bool),
    ) -> Plan {
        read_listed(Some("d/*"), listed, &mut Fake { look, read })
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
        let g = glob_read(&json!({"path": "{notes,data}/*"}), no_folder).unwrap();
        assert_eq!(
            g.find_args,
            json!({"pattern": "{notes,data}/*", "path": "."})
        );
        let g = glob_read(&json!({"path": "a/[xy]/*.md"}), no_folder).unwrap();
        assert_eq!(g.find_args["path"], "a");
    }

    #[test]
    fn a_folder_becomes_its_own_files_only_when_the_world_confirms_it() {
        let g = glob_read(&json!({"path": "hiring/"}), |f| f == "hiring").unwrap();
        assert_eq!(
            g.find_args,
            json!({"pattern": "hiring/*", "path": "hiring"})
        );
        assert!(glob_read(&json!({"path": "notes.md"}), no_folder).is_none());
        assert!(glob_read(&json!({"path": "notes.md", "start_line": 2}), no_folder).is_none());
        // A name with brackets and no `*` or `?` is a file's name, not a glob.
        assert!(glob_read(&json!({"path": "report[1].md"}), no_folder).is_none());
    }

    #[test]
    fn other_calls_are_left_as_they_are() {
        for params in [
            json!({"path": "a/*.md", "start_line": 0}),
            json!({"path": "a/*.md", "end_line": "24"}),
            json!({"path": "a/*.md", "start_line": 1.5}),
            json!({"path": "a/*.md", "start_line": 1, "max_lines": 9}),
            json!({"path": "/etc/*", "end_line": 3}),
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
    fn a_glob_s_line_range_is_dropped_and_the_note_says_so() {
        let g = glob_read(
            &json!({"path": "data/*.csv", "start_line": 1, "end_line": 24}),
            no_folder,
        )
        .unwrap();
        assert_eq!(
            g.find_args,
            json!({"pattern": "data/*.csv", "path": "data"})
        );
        assert_eq!(g.dropped, vec!["start_line", "end_line"]);
        let note = ran_as_note(&g);
        assert!(
            note.ends_with(
                "its start_line and end_line were dropped: Rein reads each listed file whole"
            ),
            "{note}"
        );
        let g = glob_read(&json!({"path": "hiring", "end_line": 3}), |f| f == "hiring").unwrap();
        assert_eq!(g.dropped, vec!["end_line"]);
        assert!(ran_as_note(&g).contains("its end_line was dropped"));
        let plain = glob_read(&json!({"path": "hiring"}), |f| f == "hiring").unwrap();
        assert!(plain.dropped.is_empty());
        assert!(!ran_as_note(&plain).contains("dropped"));
    }

    #[test]
    fn dot_files_are_read_only_when_the_glob_names_the_dot() {
        assert!(unnamed_dot_file("config/*", "config/.env"));
        assert!(unnamed_dot_file("config", "config/.git/HEAD"));
        assert!(unnamed_dot_file("./config/*", "config/.env"));
        assert!(!unnamed_dot_file("config/.*", "config/.env"));
        assert!(!unnamed_dot_file("config/*", "config/app.env"));
    }

    #[test]
    fn reading_keeps_to_both_caps_and_says_why_each_file_was_left() {
        let mut listed: Vec<String> = (0..30).map(|i| format!("d/{i:02}.txt")).collect();
        listed.insert(3, "d/.secret".into());
        let mut asked = Vec::new();
        let plan = read_with(
            &listed,
            |p| match p {
                "d/00.txt" => Look::Kept,
                "d/01.txt" => Look::NotText,
                "d/02.txt" => Look::TooLong,
                _ => Look::Text { shown_chars: 10 },
            },
            |p| {
                asked.push(p.to_string());
                (100, p != "d/05.txt")
            },
        );
        assert_eq!(plan.reads(), GLOB_READS_MAX_FILES);
        assert_eq!(plan.cut, vec!["d/05.txt"]);
        assert_eq!(asked.len(), GLOB_READS_MAX_FILES);
        assert_eq!(plan.reads() + plan.left.len(), 31);
        assert_eq!(plan.left[0].0, "d/00.txt");
        assert!(plan
            .left
            .iter()
            .any(|(p, why)| p == "d/29.txt" && why.contains("cap on files")));
        assert!(plan
            .left
            .iter()
            .any(|(p, why)| p == "d/.secret" && why.contains("dot file")));
    }

    #[test]
    fn the_characters_counted_are_those_shown_and_a_big_file_is_skipped() {
        let listed: Vec<String> = ["d/a.txt", "d/b.txt", "d/c.txt"].map(String::from).to_vec();
        let plan = read_with(
            &listed,
            |p| Look::Text {
                shown_chars: if p == "d/b.txt" {
                    GLOB_READS_MAX_CHARS
                } else {
                    100
                },
            },
            |_| (400, true),
        );
        assert_eq!(plan.whole, vec!["d/a.txt", "d/c.txt"]);
        assert_eq!(
            plan.left,
            vec![(
                "d/b.txt".to_string(),
                "over the characters read for one call"
            )]
        );
        // What a read showed counts, not the look's estimate: a read shown longer than
        // expected leaves less room for the next.
        let plan = read_with(
            &listed,
            |_| Look::Text { shown_chars: 100 },
            |_| (GLOB_READS_MAX_CHARS - 300, true),
        );
        assert_eq!(plan.whole, vec!["d/a.txt"]);
        assert_eq!(plan.left.len(), 2);
    }

    #[test]
    fn the_note_counts_whole_reads_and_names_what_was_left() {
        let none = glob_note(0, &Plan::default(), false);
        assert!(none.contains("matched no file"), "{none}");
        let plan = Plan {
            whole: vec!["h/a.md".into()],
            cut: vec!["h/c.md".into()],
            left: vec![("h/b.md".into(), "not a text file")],
        };
        let note = glob_note(3, &plan, false);
        assert!(note.contains("listed 3 files"), "{note}");
        assert!(note.contains("Rein read 2 of them"), "{note}");
        assert!(note.contains("1 shown whole"), "{note}");
        assert!(
            note.contains("Not shown whole (read the rest with read_file): h/c.md"),
            "{note}"
        );
        assert!(note.contains("h/b.md (not a text file)"), "{note}");
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
}
