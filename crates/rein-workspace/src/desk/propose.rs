//! Mutating desk tools. They read the current state and return a [`Proposal`] (exact before
//! and after bytes plus a diff); they never write. A person approves the proposal and the
//! engine applies it, bound to the before-image's hash.

use serde_json::{json, Value};

use super::{
    file_error, not_found, object_schema, path_arg, path_schema, text_of, text_schema, thousands,
    workspace, READ_FILE_MAX_BYTES,
};
use crate::beneath::EntryKind;
use crate::error::WorkspaceError;
use crate::tool::{args, Proposal, Tool, ToolContext, ToolError, ToolOutput};
use crate::workspace::Workspace;
use crate::RelPath;

/// Largest existing file a change may be proposed for (edit, replace or delete): the
/// `read_file` cap, so every proposal is of a file a model could read whole, its before and
/// after fit in memory and a person can review the diff. Checked from the open file's
/// metadata before anything is read.
pub(crate) const PROPOSE_MAX_FILE_BYTES: u64 = READ_FILE_MAX_BYTES;

/// Refuses when an ancestor of `path` exists but is not a folder (the write could never work).
fn check_parents(ws: &Workspace, path: &RelPath) -> Result<(), ToolError> {
    let mut cursor = path.parent();
    while let Some(dir) = cursor {
        match ws.info(&dir)? {
            Some(info) if info.kind == EntryKind::Dir => return Ok(()),
            Some(info) => {
                return Err(ToolError::Refused(format!(
                    "\"{path}\" cannot be created because \"{dir}\" is a {}, not a folder",
                    info.kind.as_str()
                )))
            }
            None => cursor = dir.parent(),
        }
    }
    Ok(())
}

/// The current bytes of an existing regular file of at most [`PROPOSE_MAX_FILE_BYTES`], or a
/// refusal naming the right tool (or saying the file is too large, before reading any of it).
pub(super) fn existing(
    ws: &Workspace,
    path: &RelPath,
    instead: &str,
) -> Result<Vec<u8>, ToolError> {
    match ws.read_bytes_capped(path, PROPOSE_MAX_FILE_BYTES) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(ToolError::Refused(format!("{} {instead}", not_found(path)))),
        Err(WorkspaceError::TooLarge { path, size, max }) => Err(ToolError::Refused(format!(
            "\"{path}\" is {} bytes; changes are proposed only for files of at most {} bytes (the read_file cap), so that the whole file can be kept for undo and the change reviewed. Nothing was read: change a smaller file, or change this one outside Rein",
            thousands(usize::try_from(size).unwrap_or(usize::MAX)),
            thousands(usize::try_from(max).unwrap_or(usize::MAX)),
        ))),
        Err(e) => Err(file_error(e)),
    }
}

pub(super) fn unchanged(path: &RelPath) -> ToolError {
    ToolError::Refused(format!(
        "the new content of \"{path}\" is identical to the current content; nothing to change"
    ))
}

pub struct CreateFile;

impl Tool for CreateFile {
    fn name(&self) -> &str {
        "create_file"
    }
    fn description(&self) -> &str {
        "Propose creating a new file with the given content (refused if the file exists). Folders are created as needed. A person approves the change."
    }
    fn schema(&self) -> Value {
        object_schema(
            json!({ "path": path_schema("new file, relative to the workspace root"), "content": text_schema("the full text of the new file") }),
            &["path", "content"],
        )
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let ws = workspace(ctx, self.name())?;
        let path = path_arg(ws, self.name(), a, None)?;
        let content = args::str(self.name(), a, "content")?;
        if let Some(info) = ws.info(&path)? {
            return Err(ToolError::Refused(format!(
                "\"{path}\" already exists (a {}); use edit_file or replace_file to change a file",
                info.kind.as_str()
            )));
        }
        check_parents(ws, &path)?;
        Ok(ToolOutput::Proposal(Proposal::new(
            path,
            None,
            Some(content.as_bytes().to_vec()),
        )))
    }
}

pub struct EditFile;

impl Tool for EditFile {
    fn name(&self) -> &str {
        "edit_file"
    }
    fn description(&self) -> &str {
        "Propose replacing one exact piece of text in a file: old_text must occur exactly once (copy it from read_file, with enough surrounding lines to be unique)."
    }
    fn schema(&self) -> Value {
        object_schema(
            json!({
                "path": path_schema("file to edit, relative to the workspace root"),
                "old_text": { "type": "string", "minLength": 1, "maxLength": crate::MAX_INPUT_CHARS, "description": "exact text to replace; must occur exactly once" },
                "new_text": text_schema("text to put in its place"),
            }),
            &["path", "old_text", "new_text"],
        )
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let ws = workspace(ctx, self.name())?;
        let path = path_arg(ws, self.name(), a, None)?;
        let old_text = args::str(self.name(), a, "old_text")?;
        let new_text = args::str(self.name(), a, "new_text")?;
        if old_text.is_empty() {
            return Err(ToolError::InvalidArguments {
                tool: self.name().to_string(),
                message: "old_text is empty; give the exact text to replace".to_string(),
            });
        }
        let before = existing(ws, &path, "(use create_file for a new file)")?;
        let Some(text) = text_of(&before) else {
            return Err(ToolError::Refused(format!(
                "\"{path}\" is a binary or non-UTF-8 file ({} bytes); edit_file only edits text",
                before.len()
            )));
        };
        let count = occurrences(text, old_text);
        match count {
            0 => Err(ToolError::Refused(format!(
                "old_text was not found in \"{path}\" (0 occurrences); read the file and copy the text exactly, including spaces and line breaks"
            ))),
            1 => {
                let after = text.replacen(old_text, new_text, 1);
                if after == text {
                    return Err(unchanged(&path));
                }
                Ok(ToolOutput::Proposal(Proposal::new(path, Some(before.clone()), Some(after.into_bytes()))))
            }
            n => Err(ToolError::Refused(format!(
                "old_text occurs {n} times in \"{path}\"; it must occur exactly once, so include more of the surrounding lines"
            ))),
        }
    }
}

/// Occurrences of `needle` in `haystack`: 0, 1, or (when there are more) at least 2 and at
/// least the number of non-overlapping ones, so "aa" in "aaa" is 2 (the edit would be
/// ambiguous). In time linear in the sizes: counting every overlapping occurrence by stepping
/// one character at a time took a minute for a 2,000-character `old_text` in an 8 MiB file of
/// one repeated letter, and a quarter of an hour for one of 32,000.
fn occurrences(haystack: &str, needle: &str) -> usize {
    let Some(first) = haystack.find(needle) else {
        return 0;
    };
    // Step one character, not one byte, to stay on a char boundary.
    let next = first + haystack[first..].chars().next().map_or(1, char::len_utf8);
    if haystack[next..].find(needle).is_none() {
        return 1;
    }
    haystack.matches(needle).count().max(2)
}

pub struct ReplaceFile;

impl Tool for ReplaceFile {
    fn name(&self) -> &str {
        "replace_file"
    }
    fn description(&self) -> &str {
        "Propose replacing the whole content of an existing file. A person approves the change."
    }
    fn schema(&self) -> Value {
        object_schema(
            json!({ "path": path_schema("existing file, relative to the workspace root"), "content": text_schema("the full new text of the file") }),
            &["path", "content"],
        )
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let ws = workspace(ctx, self.name())?;
        let path = path_arg(ws, self.name(), a, None)?;
        let content = args::str(self.name(), a, "content")?;
        let before = existing(ws, &path, "(use create_file for a new file)")?;
        if before == content.as_bytes() {
            return Err(unchanged(&path));
        }
        Ok(ToolOutput::Proposal(Proposal::new(
            path,
            Some(before),
            Some(content.as_bytes().to_vec()),
        )))
    }
}

/// Writes a JSON file from the document itself: the model never escapes JSON inside a JSON
/// string, and Rein does the serialising (pretty, with a final newline). Creates the file or
/// replaces its content, as one proposal a person approves like any other change.
pub struct WriteJson;

impl Tool for WriteJson {
    fn name(&self) -> &str {
        "write_json"
    }
    fn description(&self) -> &str {
        "Propose writing a JSON file from the document itself (give the JSON value as `document`, not a string holding JSON): Rein writes it pretty-printed with a final newline, creating the file or replacing its content. A person approves the change."
    }
    fn schema(&self) -> Value {
        object_schema(
            json!({
                "path": path_schema("JSON file to write, relative to the workspace root"),
                "document": { "description": "the JSON document itself" },
            }),
            &["path", "document"],
        )
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let ws = workspace(ctx, self.name())?;
        let path = path_arg(ws, self.name(), a, None)?;
        let Some(document) = a.get("document") else {
            return Err(ToolError::InvalidArguments {
                tool: self.name().to_string(),
                message: "document is missing; give the JSON document itself".to_string(),
            });
        };
        let text = serialise_json(document).map_err(|e| ToolError::InvalidArguments {
            tool: self.name().to_string(),
            message: e,
        })?;
        propose_whole_file(ws, path, text, self.name())
    }
}

/// The proposal of a tool that writes a whole file from text Rein composed (`write_json`,
/// `write_sections`): refused over one input's cap, creates the file or replaces its content,
/// refused when nothing would change.
pub(super) fn propose_whole_file(
    ws: &Workspace,
    path: RelPath,
    text: String,
    tool: &str,
) -> Result<ToolOutput, ToolError> {
    let chars = text.chars().count();
    if chars > crate::MAX_INPUT_CHARS {
        return Err(ToolError::Refused(format!(
            "the document is {} characters once written; one input may be at most {} characters, so nothing was written: write a smaller document",
            thousands(chars),
            thousands(crate::MAX_INPUT_CHARS)
        )));
    }
    let before = match ws.info(&path)? {
        None => {
            check_parents(ws, &path)?;
            None
        }
        Some(info) if info.kind == EntryKind::File => Some(existing(ws, &path, "")?),
        Some(info) => {
            return Err(ToolError::Refused(format!(
                "\"{path}\" is a {}, not a file; {tool} writes a file",
                info.kind.as_str()
            )))
        }
    };
    if before.as_deref() == Some(text.as_bytes()) {
        return Err(unchanged(&path));
    }
    Ok(ToolOutput::Proposal(Proposal::new(
        path,
        before,
        Some(text.into_bytes()),
    )))
}

/// A JSON document as `write_json` writes it: pretty-printed (two spaces), one final newline.
pub fn serialise_json(document: &Value) -> Result<String, String> {
    let mut text = serde_json::to_string_pretty(document)
        .map_err(|e| format!("the document cannot be written as JSON: {e}"))?;
    text.push('\n');
    Ok(text)
}

/// Whether `write_json` would write a file back in the layout it has: `bytes` are JSON, and
/// serialising their document gives the same bytes. A file in another layout (an inline list,
/// four-space indentation, no final newline) would be reformatted whole by any `write_json`.
pub fn json_layout_kept(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|doc| serialise_json(&doc).ok())
        .is_some_and(|text| text.as_bytes() == bytes)
}

pub struct DeleteFile;

impl Tool for DeleteFile {
    fn name(&self) -> &str {
        "delete_file"
    }
    fn description(&self) -> &str {
        "Propose deleting a file (not a folder). The content is kept so the change can be undone."
    }
    fn schema(&self) -> Value {
        object_schema(
            json!({ "path": path_schema("file to delete, relative to the workspace root") }),
            &["path"],
        )
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let ws = workspace(ctx, self.name())?;
        let path = path_arg(ws, self.name(), a, None)?;
        let before = existing(ws, &path, "(nothing to delete)")?;
        Ok(ToolOutput::Proposal(Proposal::new(
            path,
            Some(before),
            None,
        )))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{json_layout_kept, occurrences};
    use crate::tool::{ToolContext, ToolOutput};
    use crate::Workspace;
    use serde_json::json;

    fn write_json(dir: &std::path::Path, args: serde_json::Value) -> Result<ToolOutput, String> {
        let ws = Workspace::open(dir).unwrap();
        crate::desk_registry()
            .call(&mut ToolContext::Desk(&ws), "write_json", &args)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn write_json_proposes_exactly_the_serialised_document() {
        let dir = tempfile::tempdir().unwrap();
        let doc = json!({"a": [1, 2.5, "x\"y"], "b": null});
        let out = write_json(dir.path(), json!({"path": "out/f.json", "document": doc})).unwrap();
        let ToolOutput::Proposal(p) = out else {
            panic!("not a proposal")
        };
        let text = format!("{}\n", serde_json::to_string_pretty(&doc).unwrap());
        assert_eq!(p.before, None);
        assert_eq!(p.after.as_deref(), Some(text.as_bytes()));
        assert!(
            !dir.path().join("out/f.json").exists(),
            "a proposal writes nothing"
        );
        // An existing file is replaced; the same content is refused as no change.
        std::fs::create_dir_all(dir.path().join("out")).unwrap();
        std::fs::write(dir.path().join("out/f.json"), "{}\n").unwrap();
        let ToolOutput::Proposal(p) =
            write_json(dir.path(), json!({"path": "out/f.json", "document": doc})).unwrap()
        else {
            panic!("not a proposal")
        };
        assert_eq!(p.before.as_deref(), Some(&b"{}\n"[..]));
        let e = write_json(dir.path(), json!({"path": "out/f.json", "document": {}})).unwrap_err();
        assert!(e.contains("identical"), "{e}");
    }

    #[test]
    fn json_layout_is_kept_only_when_serialising_gives_the_same_bytes() {
        let pretty = "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": \"x\"\n}\n";
        assert!(json_layout_kept(pretty.as_bytes()));
        // Key order is the file's own: not sorted on the way back.
        assert!(json_layout_kept(b"{\n  \"z\": 1,\n  \"a\": 2\n}\n"));
        for other in [
            "{\n  \"a\": [1, 2],\n  \"b\": \"x\"\n}\n",
            "{\n    \"a\": 1\n}\n",
            "{\n  \"a\": 1\n}",
            "{\r\n  \"a\": 1\r\n}\r\n",
            "{\"a\":1}\n",
            "{\n  \"a\": 1.50\n}\n",
            "{\n  \"a\": \"\\u00e9\"\n}\n",
            "not json",
            "",
        ] {
            assert!(!json_layout_kept(other.as_bytes()), "{other:?}");
        }
        assert!(!json_layout_kept(&[0xff, 0xfe]));
    }

    #[test]
    fn write_json_refuses_paths_outside_the_workspace_and_folders() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("out")).unwrap();
        for bad in ["../escape.json", "/etc/x.json", "out"] {
            let e = write_json(dir.path(), json!({"path": bad, "document": {"a": 1}}));
            assert!(e.is_err(), "{bad}");
        }
        assert!(!dir.path().parent().unwrap().join("escape.json").exists());
    }

    #[test]
    fn counts_overlapping_and_multibyte() {
        assert_eq!(occurrences("aaa", "aa"), 2);
        assert_eq!(occurrences("héhé", "hé"), 2);
        assert_eq!(occurrences("abc", "x"), 0);
        assert_eq!(occurrences("abc", "b"), 1);
        assert_eq!(occurrences("abababab", "ab"), 4);
        assert_eq!(occurrences("aaaa", "aa"), 2);
    }
}
