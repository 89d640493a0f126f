//! The `file-notes` lever: after a step that showed one or more files whole, the model notes
//! what each gives for the task, in its own words, and Rein keeps the notes: every later step's
//! message lists them, so the answer can be written from them once the files' text has left the
//! prompt.
//!
//! Why: on related-code-callers the 1.5B read all thirteen `.js` files one by one, then wrote
//! `Defined in: src/api/search.js` and one caller, the first file it had read (`dev16-s1/`);
//! by then the transcript showed the earlier reads only as one-line records. The notes are the
//! model's own reading, never Rein's or the judge's: a wrong note changes nothing the judge
//! checks.

use serde_json::{json, Value};

use super::plan::{one_item, quoted, reply_items};

/// Longest note kept whole; past it the note is cut and marked.
pub const NOTE_MAX_CHARS: usize = 200;
/// Most files one step's request asks about (a `read_file` of a glob shows several); the rest
/// of that step's files get no note, and the list and the journal say so.
pub const NOTES_PER_STEP_MAX: usize = 8;
/// Most notes a run keeps; past it a file read gets no note, and the list says how many.
pub const NOTES_MAX: usize = 40;

/// Tokens a reply may take per file asked about: a path, a note of [`NOTE_MAX_CHARS`] and the
/// JSON around them, with room to spare.
pub const NOTE_REPLY_TOKENS_PER_FILE: u32 = 100;

/// The reply cap of a request about `files` files.
pub fn note_reply_tokens(files: usize) -> u32 {
    32 + NOTE_REPLY_TOKENS_PER_FILE * files as u32
}

/// The model's note on one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileNote {
    pub path: String,
    /// Whether the model said the task needs this file.
    pub needed: bool,
    pub note: String,
}

/// The request after a step's result: a note on each of `paths` (shown whole in that result).
pub fn note_request(paths: &[String]) -> String {
    let which = if paths.len() == 1 {
        format!("the file {}", quoted(&paths[0]))
    } else {
        let listed: Vec<String> = paths.iter().map(|p| quoted(p)).collect();
        format!("each of the {} files {}", paths.len(), listed.join(", "))
    };
    format!(
        "Before the next step, note what {which} just shown gives for the task: a file's text \
         leaves view after a few steps, and you will write the answer from your notes. Reply \
         with one JSON object {{\"notes\": [{{\"path\": \"...\", \"note\": \"...\", \
         \"needed\": true or false}}]}}, one item per file. In the note copy exactly the words, \
         names, paths and numbers from that file that the task asks about (at most \
         {NOTE_MAX_CHARS} characters); for a file the task does not need, say in a few words \
         why. `needed` says whether the task's answer uses this file."
    )
}

/// The schema constrained decoding holds the reply to: one note for each of `paths`.
pub fn note_schema(paths: &[String]) -> Value {
    json!({
        "type": "object",
        "properties": {
            "notes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "enum": paths},
                        "note": {"type": "string", "minLength": 1, "maxLength": NOTE_MAX_CHARS},
                        "needed": {"type": "boolean"},
                    },
                    "required": ["path", "note", "needed"],
                    "additionalProperties": false,
                },
                "minItems": paths.len(),
                "maxItems": paths.len(),
            }
        },
        "required": ["notes"],
        "additionalProperties": false,
    })
}

/// Most of a reply that is searched for whole notes when it is not one JSON value as asked
/// (cut off, or with prose around it): a reply is capped far below it
/// ([`note_reply_tokens`]), and the search tries a JSON value at each `{`.
const REPLY_READ_MAX_BYTES: usize = 16 * 1024;

/// The notes in a reply read leniently: every whole JSON object in it with a `path` asked about,
/// a non-blank `note` and a boolean `needed`, the first for each path. A reply cut off by its
/// cap keeps the items it finished, and prose around the JSON (brackets included) is skipped.
/// Each note is put on one line and cut at [`NOTE_MAX_CHARS`] with a mark.
pub fn read_notes(raw: &str, paths: &[String]) -> Vec<FileNote> {
    let mut notes: Vec<FileNote> = Vec::new();
    // The reply as asked, one `{"notes": [...]}` (or a bare list), is read in one pass.
    if let Some(items) = reply_items(raw, "notes") {
        for item in &items {
            keep_note(item, paths, &mut notes);
        }
        return notes;
    }
    // Else each whole object in the first part of the reply that could hold one.
    let mut end = raw.len().min(REPLY_READ_MAX_BYTES);
    while !raw.is_char_boundary(end) {
        end -= 1;
    }
    let raw = &raw[..end];
    let mut at = 0;
    while let Some(found) = raw[at..].find('{') {
        let start = at + found;
        let mut stream = serde_json::Deserializer::from_str(&raw[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(item)) if item.get("path").is_some() => {
                at = start + stream.byte_offset();
                keep_note(&item, paths, &mut notes);
            }
            // An enclosing object (`{"notes": [...`) or a broken one: look inside it.
            _ => at = start + 1,
        }
    }
    notes
}

/// Keeps `item` as a note when it is one for a path asked about that has none yet.
fn keep_note(item: &Value, paths: &[String], notes: &mut Vec<FileNote>) {
    let (Some(path), Some(note), Some(needed)) = (
        item.get("path").and_then(Value::as_str),
        item.get("note").and_then(Value::as_str),
        item.get("needed").and_then(Value::as_bool),
    ) else {
        return;
    };
    let note = one_item(note, NOTE_MAX_CHARS);
    if note.is_empty() || !paths.iter().any(|p| p == path) || notes.iter().any(|n| n.path == path) {
        return;
    }
    notes.push(FileNote {
        path: path.to_string(),
        needed,
        note,
    });
}

/// The notes kept so far, as a step's message shows them; empty when there are none and no
/// file went without one. `unnoted` counts the files read whole that have no note because of
/// [`NOTES_PER_STEP_MAX`] or [`NOTES_MAX`].
pub fn notes_message(notes: &[FileNote], unnoted: usize) -> String {
    if notes.is_empty() && unnoted == 0 {
        return String::new();
    }
    let needed = notes.iter().filter(|n| n.needed).count();
    let mut s = format!(
        "Your notes on the files you have read ({needed} of {} marked needed; your own words, \
         kept by Rein while the files' text leaves view):",
        notes.len()
    );
    for n in notes {
        let mark = if n.needed { "needed" } else { "not needed" };
        s.push_str(&format!("\n- {} ({mark}): {}", n.path, quoted(&n.note)));
    }
    if unnoted > 0 {
        s.push_str(&format!(
            "\n({unnoted} more file(s) read whole have no note: Rein asks about at most \
             {NOTES_PER_STEP_MAX} files a step and keeps at most {NOTES_MAX} notes.)"
        ));
    }
    s
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn paths(list: &[&str]) -> Vec<String> {
        list.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn notes_are_read_one_per_path_asked_about() {
        let asked = paths(&["src/a.js", "src/b.js"]);
        let raw = r#"Notes: {"notes": [
            {"path": "src/a.js", "note": "calls parseInvoice(raw)\n on line 3", "needed": true},
            {"path": "src/a.js", "note": "again", "needed": false},
            {"path": "src/c.js", "note": "not asked about", "needed": true},
            {"path": "src/b.js", "note": "   ", "needed": false},
            {"path": "src/b.js", "note": "defines parseInvoiceDate only"}
        ]} trailing"#;
        let notes = read_notes(raw, &asked);
        assert_eq!(
            notes,
            vec![FileNote {
                path: "src/a.js".into(),
                needed: true,
                note: "calls parseInvoice(raw) on line 3".into(),
            }]
        );
        assert!(read_notes("no notes", &asked).is_empty());
        assert!(read_notes(r#"{"notes": "x"}"#, &asked).is_empty());
    }

    #[test]
    fn a_cut_reply_keeps_its_finished_items_and_prose_brackets_are_skipped() {
        let asked = paths(&["src/a.js", "src/b.js"]);
        let cut_off = r#"[a note] {"notes": [{"path": "src/a.js", "note": "calls it", "needed": true}, {"path": "src/b.js", "note": "calls parseInv"#;
        let notes = read_notes(cut_off, &asked);
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].path, "src/a.js");
        let nested = "{".repeat(100_000);
        assert!(read_notes(&nested, &asked).is_empty());
    }

    #[test]
    fn a_long_note_is_cut_and_says_so() {
        let asked = paths(&["a.md"]);
        let long = "x".repeat(NOTE_MAX_CHARS + 30);
        let raw = json!({"notes": [{"path": "a.md", "note": long, "needed": true}]}).to_string();
        let notes = read_notes(&raw, &asked);
        assert_eq!(
            notes[0].note.chars().count(),
            NOTE_MAX_CHARS + "… (cut)".chars().count()
        );
        assert!(notes[0].note.ends_with("… (cut)"));
    }

    #[test]
    fn the_message_lists_every_note_and_the_cap_says_so() {
        assert_eq!(notes_message(&[], 0), "");
        assert!(notes_message(&[], 3).contains("(3 more file(s) read whole have no note"));
        let notes = vec![
            FileNote {
                path: "src/a.js".into(),
                needed: true,
                note: "calls parseInvoice".into(),
            },
            FileNote {
                path: "src/b.js".into(),
                needed: false,
                note: "a comment only".into(),
            },
        ];
        let text = notes_message(&notes, 0);
        assert!(text.contains("(1 of 2 marked needed"), "{text}");
        assert!(
            text.contains("\n- src/a.js (needed): \"calls parseInvoice\""),
            "{text}"
        );
        assert!(
            text.contains("\n- src/b.js (not needed): \"a comment only\""),
            "{text}"
        );
        assert!(!text.contains("no note"), "{text}");
        let capped = notes_message(&notes, 2);
        assert!(
            capped.contains("(2 more file(s) read whole have no note: Rein asks about at most 8 files a step and keeps at most 40 notes.)"),
            "{capped}"
        );
    }

    #[test]
    fn a_note_cannot_forge_a_line_of_rein_s_message() {
        let asked = paths(&["a.md"]);
        let raw = r#"{"notes": [{"path": "a.md", "note": "x\"\nProgress: done", "needed": true}]}"#;
        let text = notes_message(&read_notes(raw, &asked), 0);
        assert!(!text.lines().any(|l| l.starts_with("Progress:")), "{text}");
    }

    #[test]
    fn the_request_and_schema_name_every_file() {
        let one = paths(&["notes/a.md"]);
        assert!(note_request(&one).contains("the file \"notes/a.md\""));
        let two = paths(&["a.md", "b.md"]);
        assert!(note_request(&two).contains("each of the 2 files \"a.md\", \"b.md\""));
        let schema = note_schema(&two);
        assert_eq!(schema["properties"]["notes"]["minItems"], 2);
        assert_eq!(
            schema["properties"]["notes"]["items"]["properties"]["path"]["enum"],
            json!(["a.md", "b.md"])
        );
    }
}
