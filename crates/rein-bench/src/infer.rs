//! Requirements of an ad-hoc memory task (`rein bench --task "PROMPT"`), inferred from its words
//! as HarnessBench's judge does, and turned into ordinary checks of a generated mission.
//!
//! - A verb asks for its action: create/write/overwrite → `create_file`, read → `read_file`,
//!   list → `list_files`, delete/remove → `delete_file`, store/save/remember → `set_variable`,
//!   recall/retrieve → `get_variable`. A negated verb ("don't delete", "without reading",
//!   "never list") asks for nothing.
//! - A file name (`note.txt`, quoted or not) must exist at the end, or be gone when the last verb
//!   before its last mention is an (un-negated) delete. A quoted text after a created file's name
//!   and one of "content", "containing", "text", "saying" is its exact content.
//! - "variable called/named X" must be set; a quoted value in the same store clause is its value.
//!
//! The inference is keyword-based and says so: every requirement is marked `inferred` in the
//! report. A task from which nothing can be inferred is refused (there is no default pass).

use std::collections::BTreeMap;

use regex::Regex;
use serde::Serialize;
use serde_json::{json, Value};

/// One inferred requirement, as a check of the generated mission.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Requirement {
    /// The check's id in the generated mission.
    pub check: String,
    /// What was required, in words.
    pub what: String,
    /// The words of the task it came from.
    pub because: String,
    /// Always true: the report marks these as inferred, not written by a person.
    pub inferred: bool,
    /// The check, as it stands in the mission.
    #[serde(skip)]
    pub spec: Value,
}

/// Why no task could be made of the words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InferError {
    #[error("the task is empty; type what the agent should do, e.g. --task \"Create a file called note.txt with the content 'hello world', then read it back\"")]
    Empty,
    #[error("no requirement can be inferred from {task:?}: name an action (create, read, list, delete, store, recall) or a file (like note.txt), so the judge has something to check; there is no default pass")]
    Nothing { task: String },
    #[error("the inference cannot judge {what} in {task:?}: a PASS would not mean the task was done. Rephrase with the actions it reads (create, read, list, delete, store, recall, with file names and quoted contents), or write a suite task with its own contract (see suites/toy)")]
    Unsupported { what: String, task: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Create,
    Read,
    List,
    Delete,
    Store,
    Recall,
}

impl Verb {
    fn tool(self) -> &'static str {
        match self {
            Verb::Create => "create_file",
            Verb::Read => "read_file",
            Verb::List => "list_files",
            Verb::Delete => "delete_file",
            Verb::Store => "set_variable",
            Verb::Recall => "get_variable",
        }
    }

    fn of(word: &str) -> Option<Verb> {
        const WORDS: &[(Verb, &[&str])] = &[
            (
                Verb::Create,
                &[
                    "create",
                    "creates",
                    "created",
                    "creating",
                    "write",
                    "writes",
                    "wrote",
                    "written",
                    "writing",
                    "overwrite",
                    "overwrites",
                    "overwrote",
                    "overwritten",
                    "overwriting",
                ],
            ),
            (Verb::Read, &["read", "reads", "reading"]),
            (Verb::List, &["list", "lists", "listed", "listing"]),
            (
                Verb::Delete,
                &[
                    "delete", "deletes", "deleted", "deleting", "remove", "removes", "removed",
                    "removing",
                ],
            ),
            (
                Verb::Store,
                &[
                    "set",
                    "sets",
                    "setting",
                    "store",
                    "stores",
                    "stored",
                    "storing",
                    "save",
                    "saves",
                    "saved",
                    "saving",
                    "remember",
                    "remembers",
                    "remembered",
                    "remembering",
                ],
            ),
            (
                Verb::Recall,
                &[
                    "recall",
                    "recalls",
                    "recalled",
                    "recalling",
                    "retrieve",
                    "retrieves",
                    "retrieved",
                    "retrieving",
                ],
            ),
        ];
        let w = word.to_ascii_lowercase();
        WORDS
            .iter()
            .find(|(_, words)| words.contains(&w.as_str()))
            .map(|(v, _)| *v)
    }
}

/// Words that negate the verb right after them (or one word later: "do not delete").
const NEGATIONS: &[&str] = &[
    "don't",
    "dont",
    "do not",
    "not",
    "never",
    "without",
    "no",
    "doesn't",
    "shouldn't",
    "mustn't",
    "avoid",
    "avoiding",
];

/// Words whose meaning the inference cannot turn into checks: a task using one is refused
/// rather than judged on the part that was understood (each was a false pass or fail).
const UNSUPPORTED: &[(&str, &[&str])] = &[
    (
        "appending",
        &[
            "append",
            "appends",
            "appended",
            "appending",
            "add",
            "adds",
            "added",
        ],
    ),
    (
        "copying",
        &[
            "copy",
            "copies",
            "copied",
            "copying",
            "duplicate",
            "duplicates",
        ],
    ),
    (
        "renaming or moving",
        &[
            "rename", "renames", "renamed", "renaming", "move", "moves", "moved", "moving",
        ],
    ),
    (
        "editing in place",
        &[
            "edit", "edits", "edited", "modify", "modifies", "update", "updates", "replace",
            "replaces", "change", "changes", "insert",
        ],
    ),
    ("an empty file", &["empty", "blank"]),
    ("\"only\"", &["only", "just", "solely"]),
    ("an alternative", &["instead", "rather", "either", "or"]),
    (
        "a condition",
        &[
            "if", "unless", "when", "whether", "except", "until", "once", "while",
        ],
    ),
    (
        "an order other than the words'",
        &["before", "after", "afterwards", "last", "finally", "later"],
    ),
    // The red team's second round: each let a run that missed the word pass.
    (
        "a repetition",
        &[
            "twice",
            "thrice",
            "times",
            "again",
            "repeat",
            "repeats",
            "repeated",
            "repeatedly",
        ],
    ),
    (
        "a folder",
        &[
            "folder",
            "folders",
            "directory",
            "directories",
            "subfolder",
            "subdirectory",
        ],
    ),
    (
        "a transformed or extended content",
        &[
            "uppercase",
            "lowercase",
            "capitalised",
            "capitalized",
            "capitals",
            "reverse",
            "reversed",
            "followed",
            "plus",
            "translated",
        ],
    ),
];

/// Number words a count of files may be given in.
const NUMBER_WORDS: &[&str] = &[
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve",
];

/// "read" in these phrases is about the instructions, not a file.
const NOT_A_FILE_READ: &[&str] = &["carefully", "through", "aloud"];

/// One token of the task: a word, a quoted text, or a clause break.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Quoted(String),
    Break,
}

fn tokens(task: &str) -> Vec<Token> {
    // A fixed pattern (the unit tests run it); no tokens rather than a panic.
    let Ok(re) = Regex::new(
        r#"'([^']*)'|"([^"]*)"|“([^”]*)”|‘([^’]*)’|([A-Za-z0-9_][A-Za-z0-9_.'’/-]*[A-Za-z0-9_])|([A-Za-z0-9])|([,;:!?]|\.(?:\s|$))"#,
    ) else {
        return Vec::new();
    };
    re.captures_iter(task)
        .filter_map(|c| {
            if let Some(q) = c.get(1).or(c.get(2)).or(c.get(3)).or(c.get(4)) {
                Some(Token::Quoted(q.as_str().to_string()))
            } else if let Some(w) = c.get(5).or(c.get(6)) {
                Some(Token::Word(w.as_str().replace('’', "'")))
            } else {
                c.get(7).map(|_| Token::Break)
            }
        })
        .collect()
}

/// A file name: a word with an extension of letters (`note.txt`, `logs/a.md`).
fn is_file_name(s: &str) -> bool {
    Regex::new(r"^[A-Za-z0-9_][A-Za-z0-9_./-]*\.[A-Za-z][A-Za-z0-9]{0,7}$")
        .is_ok_and(|re| re.is_match(s))
        && !s.contains("..")
        && !s.ends_with('/')
}

/// What the task says, verb by verb.
#[derive(Debug, Default)]
struct Reading {
    /// Actions asked for, in the order first asked, with the word that asked.
    actions: Vec<(Verb, String)>,
    /// Each file's last state: (must exist, the verb word that decided).
    files: BTreeMap<String, (bool, String)>,
    /// Exact contents of created files.
    contents: BTreeMap<String, String>,
    /// Variables to be set, with a value when one was given.
    variables: BTreeMap<String, Option<String>>,
    /// Files to be read back after their last write ("read it back").
    read_back: Vec<String>,
    /// Counts of files the task gives ("three files").
    counts: Vec<(usize, String)>,
    /// The task orders its actions ("then", "first").
    ordered: bool,
    /// The first thing the inference cannot judge.
    unsupported: Option<String>,
}

fn read(task: &str) -> Reading {
    let toks = tokens(task);
    let mut r = Reading::default();
    let mut verb: Option<(Verb, bool, String)> = None; // (verb, negated, word)
    let mut last_file: Option<String> = None;
    let mut content_cue = false;
    let mut variable_cue = false;
    let mut pending_value: Option<String> = None;
    let mut store_var: Option<String> = None;
    let mut pending_content: Option<String> = None;
    let word_at = |k: usize| match toks.get(k) {
        Some(Token::Word(w)) => w.to_ascii_lowercase(),
        _ => String::new(),
    };
    for (i, t) in toks.iter().enumerate() {
        match t {
            Token::Break => {
                content_cue = false;
                variable_cue = false;
                pending_content = None;
            }
            Token::Word(w) => {
                let lw = w.to_ascii_lowercase();
                let instructions_read = Verb::of(&lw) == Some(Verb::Read)
                    && (NOT_A_FILE_READ.contains(&word_at(i + 1).as_str())
                        || word_at(i + 1) == "the"
                            && matches!(
                                word_at(i + 2).as_str(),
                                "task" | "instructions" | "prompt" | "question"
                            ));
                if let Some(v) = Verb::of(&lw).filter(|_| !instructions_read) {
                    let before = |k: usize| match i.checked_sub(k).map(|j| &toks[j]) {
                        Some(Token::Word(p)) => p.to_ascii_lowercase(),
                        _ => String::new(),
                    };
                    let (b1, b2) = (before(1), before(2));
                    let negated = NEGATIONS.contains(&b1.as_str())
                        || NEGATIONS.contains(&format!("{b2} {b1}").as_str())
                        || (NEGATIONS.contains(&b2.as_str()) && b1 == "to");
                    if !negated && !r.actions.iter().any(|(a, _)| *a == v) {
                        r.actions.push((v, w.clone()));
                    }
                    verb = Some((v, negated, w.clone()));
                    content_cue = false;
                    variable_cue = false;
                    if v != Verb::Store {
                        store_var = None;
                        pending_value = None;
                    }
                    continue;
                }
                if is_file_name(w) {
                    note_file(&mut r, w, verb.as_ref());
                    take_pending_content(&mut r, w, verb.as_ref(), &mut pending_content);
                    last_file = Some(w.clone());
                    continue;
                }
                match lw.as_str() {
                    "content" | "contents" | "containing" | "contains" | "text" | "saying"
                    | "says" => content_cue = true,
                    "with" if matches!(verb, Some((Verb::Create, false, _))) => {
                        content_cue = last_file.is_some();
                    }
                    "variable" | "variables" | "key" => variable_cue = true,
                    "called" | "named" | "the" | "a" | "with" | "as" | "of" | "its" => {}
                    _ if variable_cue => {
                        variable_cue = false;
                        if matches!(verb, Some((Verb::Store, false, _))) {
                            r.variables.insert(w.clone(), pending_value.take());
                            store_var = Some(w.clone());
                        }
                    }
                    "it" => match (&verb, &last_file) {
                        (Some((Verb::Delete, false, _)), Some(f)) => {
                            let f = f.clone();
                            note_file(&mut r, &f, verb.as_ref());
                        }
                        (Some((Verb::Read, false, _)), Some(f)) if !r.read_back.contains(f) => {
                            r.read_back.push(f.clone());
                        }
                        _ => {}
                    },
                    "then" | "first" => r.ordered = true,
                    _ => {
                        let next = word_at(i + 1);
                        let number = NUMBER_WORDS.iter().position(|n| *n == lw).or_else(|| {
                            lw.chars()
                                .all(|c| c.is_ascii_digit())
                                .then(|| lw.parse().ok())
                                .flatten()
                        });
                        if let Some(n) =
                            number.filter(|_| matches!(next.as_str(), "file" | "files"))
                        {
                            r.counts.push((n, format!("{w} {next}")));
                        } else if let Some((what, _)) = UNSUPPORTED
                            .iter()
                            .find(|(_, words)| words.contains(&lw.as_str()))
                        {
                            r.unsupported
                                .get_or_insert_with(|| format!("{what} (\"{w}\")"));
                        } else if NEGATIONS.contains(&lw.as_str())
                            && Verb::of(&next).is_none()
                            && !(next == "to" && Verb::of(&word_at(i + 2)).is_some())
                            && !NEGATIONS.contains(&format!("{lw} {next}").as_str())
                        {
                            r.unsupported.get_or_insert_with(|| {
                                format!(
                                    "a negation of something other than an action (\"{w} {next}\")"
                                )
                            });
                        }
                    }
                }
            }
            Token::Quoted(q) => {
                if is_file_name(q) {
                    note_file(&mut r, q, verb.as_ref());
                    take_pending_content(&mut r, q, verb.as_ref(), &mut pending_content);
                    last_file = Some(q.clone());
                    continue;
                }
                if variable_cue {
                    variable_cue = false;
                    if matches!(verb, Some((Verb::Store, false, _))) && !q.trim().is_empty() {
                        r.variables.insert(q.clone(), pending_value.take());
                        store_var = Some(q.clone());
                    }
                    continue;
                }
                match &verb {
                    Some((Verb::Create, false, _)) if content_cue => {
                        if let Some(f) = &last_file {
                            r.contents.insert(f.clone(), q.clone());
                        }
                        content_cue = false;
                    }
                    // "Write 'hello' into note.txt": the text comes before its file.
                    Some((Verb::Create, false, _)) => pending_content = Some(q.clone()),
                    Some((Verb::Store, false, _)) => match &store_var {
                        Some(name) => {
                            r.variables.insert(name.clone(), Some(q.clone()));
                        }
                        None => pending_value = Some(q.clone()),
                    },
                    _ => {}
                }
            }
        }
    }
    r
}

/// A quoted text given before a created file's name is that file's content.
fn take_pending_content(
    r: &mut Reading,
    name: &str,
    verb: Option<&(Verb, bool, String)>,
    pending: &mut Option<String>,
) {
    if let (Some((Verb::Create, false, _)), Some(text)) = (verb, pending.take()) {
        r.contents.insert(name.to_string(), text);
    }
}

fn note_file(r: &mut Reading, name: &str, verb: Option<&(Verb, bool, String)>) {
    let (exists, word) = match verb {
        Some((Verb::Delete, false, w)) => (false, w.clone()),
        // "do not create b.txt": it must not be there.
        Some((Verb::Create, true, w)) => (false, w.clone()),
        Some((_, _, w)) => (true, w.clone()),
        None => (true, String::new()),
    };
    r.files.insert(name.to_string(), (exists, word));
}

/// The requirements of `task`, in a stable order: actions (in the order asked), files, contents,
/// variables.
pub fn infer(task: &str) -> Result<Vec<Requirement>, InferError> {
    if task.trim().is_empty() {
        return Err(InferError::Empty);
    }
    let r = read(task);
    if let Some(what) = r.unsupported {
        return Err(InferError::Unsupported {
            what,
            task: task.to_string(),
        });
    }
    for (n, words) in &r.counts {
        if *n != r.files.len() {
            return Err(InferError::Unsupported {
                what: format!(
                    "a count of files (\"{words}\") without as many file names ({} named)",
                    r.files.len()
                ),
                task: task.to_string(),
            });
        }
    }
    let mut out = Vec::new();
    for (verb, word) in &r.actions {
        let tool = verb.tool();
        out.push(Requirement {
            check: format!("inferred-{tool}"),
            what: format!("{tool} was executed"),
            because: format!("the task says \"{word}\""),
            inferred: true,
            spec: json!({"kind": "actions_called", "tools": [tool]}),
        });
    }
    if r.ordered && r.actions.len() > 1 {
        let tools: Vec<&str> = r.actions.iter().map(|(v, _)| v.tool()).collect();
        out.push(Requirement {
            check: "inferred-order".into(),
            what: format!("in this order: {}", tools.join(" → ")),
            because: "the task orders its actions (\"then\", \"first\")".into(),
            inferred: true,
            spec: json!({"kind": "actions_called", "tools": tools, "ordered": true}),
        });
    }
    for file in &r.read_back {
        out.push(Requirement {
            check: format!("inferred-read-back-{file}"),
            what: format!("{file} was read after its last write"),
            because: format!("the task asks to read {file} back"),
            inferred: true,
            spec: json!({"kind": "actions_called", "tools": [
                {"tool": "read_file", "path": file, "after_last_write": true}]}),
        });
    }
    for (file, (exists, word)) in &r.files {
        let because = if word.is_empty() {
            format!("the task names {file}")
        } else {
            format!("the task names {file} after \"{word}\"")
        };
        if *exists {
            out.push(Requirement {
                check: format!("inferred-exists-{file}"),
                what: format!("{file} exists"),
                because,
                inferred: true,
                spec: json!({"kind": "file_exists", "path": file}),
            });
        } else {
            out.push(Requirement {
                check: format!("inferred-absent-{file}"),
                what: format!("{file} is gone"),
                because,
                inferred: true,
                spec: json!({"kind": "file_absent", "path": file}),
            });
        }
    }
    for (file, content) in &r.contents {
        if r.files.get(file).is_some_and(|(exists, _)| !exists) {
            continue;
        }
        out.push(Requirement {
            check: format!("inferred-content-{file}"),
            what: format!("{file} holds exactly {content:?}"),
            because: format!("the task gives {file} the quoted content {content:?}"),
            inferred: true,
            spec: exact_content(file, content),
        });
    }
    for (name, value) in &r.variables {
        let (what, spec) = match value {
            Some(v) => (
                format!("variable {name} = {v:?}"),
                json!({"kind": "variable_set", "name": name, "expected": v}),
            ),
            None => (
                format!("variable {name} is set"),
                json!({"kind": "variable_set", "name": name}),
            ),
        };
        out.push(Requirement {
            check: format!("inferred-variable-{name}"),
            what,
            because: format!("the task stores a variable named {name}"),
            inferred: true,
            spec,
        });
    }
    if out.is_empty() {
        return Err(InferError::Nothing {
            task: task.to_string(),
        });
    }
    Ok(out)
}

/// A check that the file holds exactly `content` (surrounding blank space aside).
pub fn exact_content(path: &str, content: &str) -> Value {
    json!({
        "kind": "content_matches",
        "path": path,
        "pattern": format!(r"\A\s*{}\s*\z", regex::escape(content.trim())),
        "regex": true,
    })
}

/// The mission of an ad-hoc task: the prompt, the sandbox tools and the inferred checks.
pub fn mission_json(task: &str, requirements: &[Requirement], max_turns: u32) -> Value {
    let checks: Vec<Value> = requirements
        .iter()
        .map(|r| {
            let mut c = r.spec.clone();
            c["id"] = json!(r.check);
            c
        })
        .collect();
    json!({
        "id": "adhoc",
        "mode": "automatic",
        "description": "An ad-hoc memory-sandbox task typed with rein bench --task; its checks are inferred from its words.",
        "prompt": task,
        "tools": crate::suite::MEMORY_TOOLS,
        "checks": checks,
        "budgets": {"max_turns": max_turns, "max_seconds": 600, "max_plan_steps": 4, "attempts_per_strategy": 1}
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn checks(task: &str) -> Vec<String> {
        infer(task).unwrap().into_iter().map(|r| r.check).collect()
    }

    fn spec(task: &str, check: &str) -> Value {
        infer(task)
            .unwrap()
            .into_iter()
            .find(|r| r.check == check)
            .map(|r| r.spec)
            .unwrap_or(Value::Null)
    }

    #[test]
    fn the_seed_note_task() {
        let t = "Create a file called note.txt with the content 'hello world', then read it back.";
        assert_eq!(
            checks(t),
            [
                "inferred-create_file",
                "inferred-read_file",
                "inferred-order",
                "inferred-read-back-note.txt",
                "inferred-exists-note.txt",
                "inferred-content-note.txt"
            ]
        );
        let c = spec(t, "inferred-content-note.txt");
        assert_eq!(c["path"], "note.txt");
        assert_eq!(c["pattern"], r"\A\s*hello world\s*\z");
        assert!(infer(t).unwrap().iter().all(|r| r.inferred));
    }

    #[test]
    fn three_files_then_list() {
        let t = "Create three files called a.txt, b.txt and c.txt, then list them.";
        assert_eq!(
            checks(t),
            [
                "inferred-create_file",
                "inferred-list_files",
                "inferred-order",
                "inferred-exists-a.txt",
                "inferred-exists-b.txt",
                "inferred-exists-c.txt"
            ]
        );
    }

    #[test]
    fn a_file_named_for_deletion_must_be_gone() {
        let t = "Create temp.txt and keep.txt, then delete temp.txt.";
        let c = checks(t);
        assert!(c.contains(&"inferred-absent-temp.txt".to_string()), "{c:?}");
        assert!(c.contains(&"inferred-exists-keep.txt".to_string()), "{c:?}");
        assert!(c.contains(&"inferred-delete_file".to_string()), "{c:?}");
        assert_eq!(spec(t, "inferred-absent-temp.txt")["kind"], "file_absent");
    }

    #[test]
    fn negated_verbs_ask_for_nothing() {
        for t in [
            "Create a.txt but don't delete b.txt.",
            "Create a.txt but do not delete b.txt.",
            "Create a.txt and never delete b.txt.",
            "Create a.txt without deleting b.txt.",
        ] {
            let c = checks(t);
            assert!(
                !c.contains(&"inferred-delete_file".to_string()),
                "{t}: {c:?}"
            );
            // The file kept from deletion must still be there.
            assert!(
                c.contains(&"inferred-exists-b.txt".to_string()),
                "{t}: {c:?}"
            );
            assert!(!c.iter().any(|x| x.contains("absent")), "{t}: {c:?}");
        }
        let c = checks("Don't read anything; list the files.");
        assert_eq!(c, ["inferred-list_files"]);
    }

    #[test]
    fn variables_store_and_recall() {
        let t = "Store the value 'blue' in a variable named color, then retrieve it.";
        assert_eq!(
            checks(t),
            [
                "inferred-set_variable",
                "inferred-get_variable",
                "inferred-order",
                "inferred-variable-color"
            ]
        );
        let v = spec(t, "inferred-variable-color");
        assert_eq!(v["kind"], "variable_set");
        assert_eq!(v["expected"], "blue");
        let t = "Remember 42 in a variable called answer and recall it.";
        let v = spec(t, "inferred-variable-answer");
        assert_eq!(v["kind"], "variable_set");
        assert!(
            v.get("expected").is_none(),
            "an unquoted value is not guessed: {v}"
        );
        assert!(checks(t).contains(&"inferred-get_variable".to_string()));
    }

    #[test]
    fn every_verb_maps_to_its_tool() {
        for (word, tool) in [
            ("create", "create_file"),
            ("write", "create_file"),
            ("read", "read_file"),
            ("list", "list_files"),
            ("delete", "delete_file"),
            ("remove", "delete_file"),
            ("store", "set_variable"),
            ("save", "set_variable"),
            ("remember", "set_variable"),
            ("recall", "get_variable"),
            ("retrieve", "get_variable"),
        ] {
            let c = checks(&format!("Please {word} something."));
            assert_eq!(c, [format!("inferred-{tool}")], "{word}");
        }
        // Words that merely contain a verb are not verbs.
        assert!(infer("Get ready and be creative.").is_err());
    }

    #[test]
    fn quoted_names_and_double_quotes() {
        let t = "Write \"report.md\" containing \"all good\".";
        let c = checks(t);
        assert!(
            c.contains(&"inferred-exists-report.md".to_string()),
            "{c:?}"
        );
        assert_eq!(
            spec(t, "inferred-content-report.md")["pattern"],
            r"\A\s*all good\s*\z"
        );
        // A regex character in the content is matched literally.
        let t = "Create a.txt with the content 'cost: $5 (net)'.";
        let p = spec(t, "inferred-content-a.txt")["pattern"].clone();
        let re = Regex::new(p.as_str().unwrap()).unwrap();
        assert!(re.is_match("cost: $5 (net)\n") && !re.is_match("cost: $5 (net) extra"));
    }

    /// The red team's false passes: each task is now refused, or its requirements catch the
    /// wrong run (shown by the check that does).
    #[test]
    fn words_it_cannot_judge_are_refused_not_half_judged() {
        for (task, word) in [
            ("Create three files and list them.", "three files"),
            (
                "Create log.txt with the content 'line 1'. Then append 'line 2' to log.txt.",
                "append",
            ),
            (
                "Create a.txt with the content 'x', then copy it to b.txt.",
                "copy",
            ),
            (
                "Create a.txt with the content 'x'. Rename a.txt to b.txt.",
                "Rename",
            ),
            ("Create an empty file called empty.txt.", "empty"),
            ("Create only note.txt with the content 'a'.", "only"),
            ("Create a.txt, not b.txt.", "not b.txt"),
            ("Create b.txt instead of a.txt.", "instead"),
            ("If old.txt exists, delete it; then create new.txt.", "If"),
            ("Before creating a.txt, list the files.", "Before"),
            ("Create a.txt with the content 'hi' twice.", "twice"),
            (
                "Create notes.txt with the content 'hi' in the folder docs.",
                "folder",
            ),
            (
                "Create a.txt with the content 'hi' in uppercase.",
                "uppercase",
            ),
            (
                "Create a.txt with the content 'hi' followed by your name.",
                "followed",
            ),
        ] {
            match infer(task) {
                Err(InferError::Unsupported { what, .. }) => {
                    assert!(what.contains(word), "{task}: {what}")
                }
                other => panic!("{task}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_red_teams_other_cases_are_judged_right() {
        // A quoted text before its file, and one after "with", is the content.
        assert_eq!(
            spec("Write 'hello' into note.txt.", "inferred-content-note.txt")["pattern"],
            r"\A\s*hello\s*\z"
        );
        assert_eq!(
            spec(
                "Create note.txt with 'hello world'.",
                "inferred-content-note.txt"
            )["pattern"],
            r"\A\s*hello world\s*\z"
        );
        // "set" stores.
        let t = "Set the variable color to 'blue', then create done.txt.";
        assert_eq!(spec(t, "inferred-variable-color")["expected"], "blue");
        // Order: listing after creating does not pass "list, then create".
        let o = spec("List the files, then create a.txt.", "inferred-order");
        assert_eq!(o["tools"], json!(["list_files", "create_file"]));
        assert_eq!(o["ordered"], true);
        // "read it back" is a read of that file after its last write.
        let r = spec(
            "Create note.txt with the content 'hi', then read it back.",
            "inferred-read-back-note.txt",
        );
        assert_eq!(r["tools"][0]["after_last_write"], true);
        // "delete it" deletes the file named before: it must be gone, not kept.
        let c = checks("Create scratch.txt with the content 'temp', read it back, then delete it.");
        assert!(
            c.contains(&"inferred-absent-scratch.txt".to_string()),
            "{c:?}"
        );
        assert!(
            !c.contains(&"inferred-exists-scratch.txt".to_string()),
            "{c:?}"
        );
        // "do not create b.txt": b.txt must be absent, not present.
        let c = checks("Create a.txt with the content 'x', but do not create b.txt.");
        assert!(c.contains(&"inferred-absent-b.txt".to_string()), "{c:?}");
        // Reading the task is not reading a file.
        let c = checks("Read the task carefully and create note.txt.");
        assert!(!c.contains(&"inferred-read_file".to_string()), "{c:?}");
        // A count that matches the names is fine.
        assert!(infer("Create two files called a.txt and b.txt.").is_ok());
    }

    #[test]
    fn nothing_to_infer_is_refused() {
        assert_eq!(infer("  "), Err(InferError::Empty));
        let e = infer("Say hello to the user.").unwrap_err();
        assert!(e.to_string().contains("no default pass"), "{e}");
    }

    #[test]
    fn the_mission_holds_every_requirement_as_a_check() {
        let t = "Create a.txt with the content 'x', then read it.";
        let reqs = infer(t).unwrap();
        let m = mission_json(t, &reqs, 12);
        let ids: Vec<&str> = m["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(
            ids,
            reqs.iter().map(|r| r.check.as_str()).collect::<Vec<_>>()
        );
        assert_eq!(m["prompt"], t);
        assert!(m["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("final_answer")));
        assert!(m.get("required_artifact").is_none());
    }
}
