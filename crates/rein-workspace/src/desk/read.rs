//! Read tools: `list_dir`, `read_file`, `file_info`, and `finish`.

use serde_json::{json, Value};

use super::{
    file_error, not_found, object_schema, path_arg, path_schema, text_of, text_of_prefix,
    thousands, workspace,
};
use crate::beneath::EntryKind;
use crate::tool::{args, Tool, ToolContext, ToolError, ToolOutput};

/// Most entries `list_dir` shows.
pub const LIST_DIR_MAX_ENTRIES: usize = 500;
/// Most characters of file content one `read_file` call returns (small models have small
/// contexts; a longer file is read in line ranges).
pub const READ_FILE_MAX_CHARS: usize = 12_000;
/// Most bytes `read_file` loads from disk; beyond this it says the file was only partly read.
pub const READ_FILE_MAX_BYTES: u64 = 8 * 1024 * 1024;
/// Largest file whose SHA-256 `read_file` (of a binary file) and `file_info` compute: hashing
/// reads every byte, and a sparse file of terabytes takes hours. Larger files get no hash and
/// a note saying so.
pub const HASH_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// The SHA-256 of a file a tool was named, or JSON null and a sentence for the note when it
/// is larger than [`HASH_MAX_BYTES`].
fn capped_sha256(
    ws: &crate::Workspace,
    rel: &crate::RelPath,
) -> Result<(Value, Option<String>), ToolError> {
    match ws.sha256_capped(rel, HASH_MAX_BYTES) {
        Ok(sha) => Ok((json!(sha), None)),
        Err(crate::WorkspaceError::TooLarge { size, .. }) => Ok((
            Value::Null,
            Some(format!(
                "It is not hashed: at {} bytes it is over the {} byte hashing cap.",
                thousands(usize::try_from(size).unwrap_or(usize::MAX)),
                thousands(HASH_MAX_BYTES as usize)
            )),
        )),
        Err(e) => Err(file_error(e)),
    }
}

pub struct ListDir;

impl Tool for ListDir {
    fn name(&self) -> &str {
        "list_dir"
    }
    fn description(&self) -> &str {
        "List the files and folders in a folder of the workspace (default: the workspace root)."
    }
    fn schema(&self) -> Value {
        object_schema(
            json!({ "path": path_schema("folder to list, relative to the workspace root; \".\" for the root") }),
            &[],
        )
    }
    fn mutates(&self) -> bool {
        false
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let ws = workspace(ctx, self.name())?;
        let rel = path_arg(ws, self.name(), a, Some("."))?;
        let listing = ws.list_dir(&rel).map_err(|e| match e {
            crate::WorkspaceError::NotFound { path } => not_found(&path),
            crate::WorkspaceError::NotADirectory { path } => ToolError::Refused(format!(
                "\"{path}\" is a file, not a folder; use read_file to read it"
            )),
            other => other.into(),
        })?;
        // Policy: hidden entries are only counted; skipped ones are named, nothing more.
        let shown = super::visible_entries(ctx, &listing.entries);
        let total = shown.entries.len();
        let entries: Vec<Value> = shown
            .entries
            .iter()
            .take(LIST_DIR_MAX_ENTRIES)
            .map(|(e, skipped)| {
                let mut v = json!({ "name": e.name, "kind": e.kind.as_str() });
                if *skipped {
                    v["skipped_by_policy"] = json!(true);
                } else if let Some(size) = e.size {
                    v["size"] = json!(size);
                }
                v
            })
            .collect();
        let mut out = json!({ "path": rel, "entries": entries, "total": total, "truncated": total > LIST_DIR_MAX_ENTRIES });
        if total > LIST_DIR_MAX_ENTRIES {
            out["note"] = json!(format!(
                "Showing the first {LIST_DIR_MAX_ENTRIES} of {} entries (the list_dir cap); use find_files with a pattern to narrow it down.",
                thousands(total)
            ));
        }
        // Names that cannot be addressed are policy's business too: a name such as
        // "password_is_hunter2\n.txt" under a hidden folder was listed here before. The path
        // built for the question is only asked about, never opened.
        let filter = super::path_filter(ctx);
        let mut hidden = shown.hidden;
        let unaddressable: Vec<&String> = listing
            .unaddressable
            .iter()
            .filter(|name| {
                let probe = crate::RelPath::from_trusted(if rel.is_root() {
                    name.to_string()
                } else {
                    format!("{rel}/{name}")
                });
                let hide = filter.visible(&probe) == super::Visibility::Hidden;
                hidden += usize::from(hide);
                !hide
            })
            .collect();
        super::note_hidden(&mut out, hidden, "entry", "entries");
        if !unaddressable.is_empty() {
            out["unaddressable"] = json!(unaddressable);
        }
        Ok(ToolOutput::Data(out))
    }
}

pub struct ReadFile;

impl Tool for ReadFile {
    fn name(&self) -> &str {
        "read_file"
    }
    fn description(&self) -> &str {
        "Read a text file, optionally only lines start_line..end_line (1-based, inclusive). Long output is cut and says where to continue."
    }
    fn schema(&self) -> Value {
        object_schema(
            json!({
                "path": path_schema("file to read, relative to the workspace root"),
                // A file read_file takes has at most READ_FILE_MAX_BYTES lines; the bound also
                // keeps constrained decoding from spending a reply on digits (the 1.5B, its
                // repeat penalty off, wrote end_line as "1000..." for 384 tokens).
                "start_line": { "type": "integer", "minimum": 1, "maximum": READ_FILE_MAX_BYTES, "description": "first line to read (default 1)" },
                "end_line": { "type": "integer", "minimum": 1, "maximum": READ_FILE_MAX_BYTES, "description": "last line to read (default: the end)" },
            }),
            &["path"],
        )
    }
    fn mutates(&self) -> bool {
        false
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let ws = workspace(ctx, self.name())?;
        let rel = path_arg(ws, self.name(), a, None)?;
        let (bytes, size) = ws
            .read_prefix(&rel, READ_FILE_MAX_BYTES)
            .map_err(file_error)?
            .ok_or_else(|| not_found(&rel))?;
        let partial = size > bytes.len() as u64;
        let Some(text) = text_of_prefix(&bytes, partial) else {
            let (sha256, not_hashed) = capped_sha256(ws, &rel)?;
            let mut note = format!(
                "\"{rel}\" is a binary or non-UTF-8 file ({} bytes); its content is not shown.",
                thousands(size as usize)
            );
            if let Some(why) = not_hashed {
                note = format!("{note} {why}");
            }
            return Ok(ToolOutput::Data(json!({
                "path": rel,
                "binary": true,
                "size": size,
                "sha256": sha256,
                "note": note,
            })));
        };
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let total = lines.len();
        let line = |key: &str| -> Result<Option<usize>, ToolError> {
            Ok(args::opt_uint(self.name(), a, key)?
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX)))
        };
        let start = line("start_line")?.unwrap_or(1).max(1);
        // An empty file has no line 1; its default range still reads it whole (as empty).
        let end = line("end_line")?.unwrap_or(total.max(1));
        if start > total.max(1) {
            return Err(ToolError::Refused(format!(
                "\"{rel}\" has only {total} lines; start_line must be at most {}",
                total.max(1)
            )));
        }
        if end < start {
            return Err(ToolError::InvalidArguments {
                tool: self.name().to_string(),
                message: format!("end_line ({end}) is before start_line ({start})"),
            });
        }
        let end = end.min(total);
        let (content, last, cut_mid_line) = take_lines(&lines, start, end);
        let truncated = last < end || cut_mid_line;
        let mut out = json!({
            "path": rel,
            "start_line": start,
            "end_line": last,
            "total_lines": total,
            "content": content,
            "truncated": truncated,
        });
        let mut notes = Vec::new();
        if cut_mid_line {
            out["cut_inside_line"] = json!(true);
            notes.push(format!(
                "Cut inside line {last}: output is capped at {} characters and that line alone is longer.",
                thousands(READ_FILE_MAX_CHARS)
            ));
        } else if truncated {
            notes.push(format!(
                "Cut after line {last} of {total}: output is capped at {} characters. Call read_file with start_line={} to read on.",
                thousands(READ_FILE_MAX_CHARS),
                last + 1
            ));
        }
        if partial {
            out["file_truncated"] = json!(true);
            notes.push(format!(
                "The file is {} bytes; only the first {} were read, so total_lines counts only those.",
                thousands(size as usize),
                thousands(bytes.len())
            ));
        }
        if !notes.is_empty() {
            out["note"] = json!(notes.join(" "));
        }
        Ok(ToolOutput::Data(out))
    }
}

/// Lines `start..=end` (1-based) up to the character cap: the text, the last line included,
/// and whether that line had to be cut.
fn take_lines(lines: &[&str], start: usize, end: usize) -> (String, usize, bool) {
    let mut content = String::new();
    let mut chars = 0usize;
    let mut last = start.saturating_sub(1);
    for (i, line) in lines.iter().enumerate().take(end).skip(start - 1) {
        let n = line.chars().count();
        if chars + n > READ_FILE_MAX_CHARS {
            if content.is_empty() {
                content = line.chars().take(READ_FILE_MAX_CHARS).collect();
                return (content, i + 1, true);
            }
            break;
        }
        content.push_str(line);
        chars += n;
        last = i + 1;
    }
    (content, last, false)
}

pub struct FileInfoTool;

impl Tool for FileInfoTool {
    fn name(&self) -> &str {
        "file_info"
    }
    fn description(&self) -> &str {
        "Facts about a file or folder: whether it exists, kind, size, modification time, SHA-256, whether it is text and how many lines."
    }
    fn schema(&self) -> Value {
        object_schema(
            json!({ "path": path_schema("file or folder, relative to the workspace root") }),
            &["path"],
        )
    }
    fn mutates(&self) -> bool {
        false
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let ws = workspace(ctx, self.name())?;
        let rel = path_arg(ws, self.name(), a, None)?;
        let Some(info) = ws.info(&rel)? else {
            return Ok(ToolOutput::Data(json!({ "path": rel, "exists": false })));
        };
        let mut out = json!({
            "path": rel,
            "exists": true,
            "kind": info.kind.as_str(),
            "mode": format!("{:04o}", info.mode),
            "modified_unix": info.modified,
        });
        match (info.kind, info.size) {
            (EntryKind::File, None) => {
                out["note"] = json!(HARD_LINK_NOTE);
            }
            (EntryKind::File, Some(size)) => {
                out["size"] = json!(size);
                let (sha256, not_hashed) = capped_sha256(ws, &rel)?;
                out["sha256"] = sha256;
                if let Some(why) = not_hashed {
                    out["note"] = json!(why);
                }
                if size <= READ_FILE_MAX_BYTES {
                    // Capped on the open file too: it may have grown since `info`.
                    match ws.read_bytes_capped(&rel, READ_FILE_MAX_BYTES) {
                        Ok(Some(bytes)) => match text_of(&bytes) {
                            Some(text) => {
                                out["text"] = json!(true);
                                out["lines"] = json!(text.split_inclusive('\n').count());
                            }
                            None => out["text"] = json!(false),
                        },
                        Ok(None) | Err(crate::WorkspaceError::TooLarge { .. }) => {}
                        Err(e) => return Err(file_error(e)),
                    }
                }
            }
            (EntryKind::Dir, _) => {
                let listing = ws.list_dir(&rel)?;
                let shown = super::visible_entries(ctx, &listing.entries);
                out["entries"] = json!(shown.entries.len());
                super::note_hidden(&mut out, shown.hidden, "entry", "entries");
            }
            _ => {}
        }
        Ok(ToolOutput::Data(out))
    }
}

/// What `file_info` says of a file with more than one name, whose size it does not give.
const HARD_LINK_NOTE: &str = "a file with more than one name (a hard link): Rein opens none, so its size and content are not given";

/// Longest `finish` summary. The summary proves nothing (the harness checks the files), and
/// the 1.5B spent 145 s on a summary that ran into the 384-token reply cap and was thrown away;
/// at 400 characters it still spent about 30 s of each finish (two a run) writing about 110
/// tokens at 3 to 4 a second on two cores. Under constrained decoding the string closes here.
pub const FINISH_SUMMARY_MAX_CHARS: usize = 160;

pub struct Finish;

impl Tool for Finish {
    fn name(&self) -> &str {
        "finish"
    }
    fn description(&self) -> &str {
        "Say the task is done, with a short summary. The harness checks the work before accepting it."
    }
    fn schema(&self) -> Value {
        object_schema(
            json!({ "summary": {
                "type": "string",
                "maxLength": FINISH_SUMMARY_MAX_CHARS,
                "description": "what was done, in one sentence",
            } }),
            &[],
        )
    }
    fn mutates(&self) -> bool {
        false
    }
    fn run(&self, _ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::Data(
            json!({ "finished": true, "summary": args::opt_str(a, "summary") }),
        ))
    }
}
