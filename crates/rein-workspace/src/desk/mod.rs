//! The desk tool set: reads and change proposals on a real folder. Read tools return data;
//! mutating tools return [`crate::Proposal`]s and never write (the engine applies approved
//! proposals through the journal).

mod calc;
mod combined;
mod folder;
mod lines;
mod propose;
mod read;
mod related;
mod row_where;
mod rows;
mod search;
mod sections;
mod table;

use std::fmt;

use serde_json::{json, Value};

use crate::confine::{RelPath, MAX_PATH_BYTES};
use crate::error::WorkspaceError;
use crate::registry::{ToolRegistry, MAX_INPUT_CHARS};
use crate::tool::{args, ToolContext, ToolError};
use crate::walk::{WalkOptions, WalkResult, Walker};
use crate::workspace::{DirEntry, Workspace};

pub use calc::{evaluate as calculate, CALC_DECIMALS, CALC_MAX_CHARS};
pub use combined::{
    combined_totals, NotCombined, COMBINED_MAX_FILES, COMBINED_MAX_GROUPINGS,
    COMBINED_MAX_GROUP_VALUES,
};
pub use folder::{FOLDER_STATS_MAX_LISTED, FOLDER_STATS_MAX_NAMED, FOLDER_STATS_MAX_READ_BYTES};
pub use lines::{
    apply_changes, LineChange, LinesError, EDIT_LINES_MAX_CHANGES, EDIT_LINES_MAX_NAMED,
    EDIT_LINES_MAX_NEW_CHARS, EDIT_LINES_MAX_REPEATS,
};
pub use propose::{json_layout_kept, serialise_json};
pub use read::{
    FINISH_SUMMARY_MAX_CHARS, HASH_MAX_BYTES, LIST_DIR_MAX_ENTRIES, READ_FILE_MAX_BYTES,
    READ_FILE_MAX_CHARS,
};
pub use related::{RELATED_MAX_FILES, RELATED_MAX_RESULTS};
pub use row_where::{same_cell_value, WHERE_MAX_CHARS, WHERE_MAX_CONDITIONS};
pub use rows::{COUNTED_MAX_COLUMNS, ROWS_MAX_LISTED};
pub use search::{
    glob_path, GlobPath, FIND_FILES_MAX_RESULTS, SEARCH_DFA_MAX_BYTES, SEARCH_MAX_FILE_BYTES,
    SEARCH_MAX_LINE_CHARS, SEARCH_MAX_MATCHES, SEARCH_REGEX_MAX_BYTES, SEARCH_TIME_BUDGET,
};
pub use sections::{render_sections, Rendered, Section, HEADING_MAX_CHARS, SECTIONS_MAX};
pub use table::{
    column_totals, json_number_tokens, parse_number, Table, MEAN_DECIMALS, TABLE_MAX_BYTES,
    TABLE_MAX_DISTINCT, TOTALS_MAX_COLUMNS,
};

/// How many leading bytes are sniffed for a NUL, the classic binary marker.
const BINARY_SNIFF_BYTES: usize = 8192;

/// The desk tools, in the order a model should think of them.
pub fn desk_registry() -> ToolRegistry {
    ToolRegistry::with_builtins(vec![
        Box::new(read::ListDir),
        Box::new(read::ReadFile),
        Box::new(search::SearchText),
        Box::new(search::FindFiles),
        Box::new(related::FindRelated),
        Box::new(read::FileInfoTool),
        Box::new(table::TableStats),
        Box::new(rows::TableRows),
        Box::new(folder::FolderStats),
        Box::new(calc::Calculate),
        Box::new(propose::CreateFile),
        Box::new(propose::EditFile),
        Box::new(lines::EditLines),
        Box::new(propose::ReplaceFile),
        Box::new(propose::DeleteFile),
        Box::new(propose::WriteJson),
        Box::new(sections::WriteSections),
        Box::new(read::Finish),
    ])
}

/// Whether the tools take `bytes` as text (see [`text_of`]): UTF-8 without a NUL byte near the
/// start; `edit_file` and `edit_lines` refuse any other file.
pub fn is_text(bytes: &[u8]) -> bool {
    text_of(bytes).is_some()
}

/// `Some(text)` when `bytes` is UTF-8 text without NUL bytes near the start; binary and
/// non-UTF-8 content is reported as such and never converted lossily.
pub(crate) fn text_of(bytes: &[u8]) -> Option<&str> {
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// Like [`text_of`] for a prefix that may have been cut inside a multi-byte character.
pub(crate) fn text_of_prefix(bytes: &[u8], cut: bool) -> Option<&str> {
    if !cut {
        return text_of(bytes);
    }
    if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
        return None;
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => Some(s),
        // Only an incomplete character at the very end is forgiven.
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&bytes[..e.valid_up_to()]).ok(),
        Err(_) => None,
    }
}

/// How one file or folder appears to a desk tool that reads or lists more than the one path it
/// was given (`search_text`, `find_files`, `find_related`, `list_dir`, `file_info` on a
/// folder). The path a call names is not asked about: the gate has already decided that one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// Listed and read as usual.
    Shown,
    /// Listed by name but never read: recursive tools leave its content out and say how many
    /// files they skipped.
    Skipped,
    /// Neither read nor named: listings only count it, whatever pattern the call gave, so a
    /// count cannot confirm a guessed name.
    Hidden,
}

/// Decides the [`Visibility`] of workspace paths for one call. The engine fills it from its
/// policy for the tool being called; without one ([`ToolContext::Desk`]) everything is shown.
pub trait PathFilter: fmt::Debug + Send + Sync {
    fn visible(&self, path: &RelPath) -> Visibility;
}

/// The filter of a context without policy: every path is [`Visibility::Shown`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ShowAll;

impl PathFilter for ShowAll {
    fn visible(&self, _path: &RelPath) -> Visibility {
        Visibility::Shown
    }
}

/// The filter of a desk context ([`ShowAll`] when it has none).
pub(crate) fn path_filter<'a>(ctx: &'a ToolContext<'_>) -> &'a dyn PathFilter {
    match ctx {
        ToolContext::FilteredDesk { filter, .. } => *filter,
        ToolContext::Desk(_) | ToolContext::Sandbox(_) => &ShowAll,
    }
}

/// Walks `start` for a desk tool: an ignore file that the context's policy does not show the tool
/// applies no rules (see [`Walker::reading_ignore_files`]).
pub(crate) fn policy_walk(
    ws: &Workspace,
    ctx: &ToolContext<'_>,
    start: &RelPath,
) -> crate::error::Result<WalkResult> {
    let filter = path_filter(ctx);
    let readable = |p: &RelPath| filter.visible(p) == Visibility::Shown;
    Walker::new(ws, WalkOptions::default())
        .reading_ignore_files(&readable)
        .walk(start)
}

/// A folder's entries as a listing may show them: each shown one with whether policy keeps
/// its content from the tool (list it by name, nothing more), and how many are hidden.
pub(crate) struct VisibleEntries<'e> {
    pub entries: Vec<(&'e DirEntry, bool)>,
    pub hidden: usize,
}

/// Sorts `entries` through the context's filter (see [`VisibleEntries`]).
pub(crate) fn visible_entries<'e>(
    ctx: &ToolContext<'_>,
    entries: &'e [DirEntry],
) -> VisibleEntries<'e> {
    let filter = path_filter(ctx);
    let mut out = VisibleEntries {
        entries: Vec::with_capacity(entries.len()),
        hidden: 0,
    };
    for entry in entries {
        match filter.visible(&entry.path) {
            Visibility::Shown => out.entries.push((entry, false)),
            Visibility::Skipped => out.entries.push((entry, true)),
            Visibility::Hidden => out.hidden += 1,
        }
    }
    out
}

/// Adds `hidden_by_policy` and a sentence about it to a listing's result (after any note).
pub(crate) fn note_hidden(out: &mut Value, hidden: usize, one: &str, many: &str) {
    if hidden == 0 {
        return;
    }
    out["hidden_by_policy"] = json!(hidden);
    let note = format!(
        "{} hidden by policy (not listed).",
        count_of(hidden, one, many)
    );
    out["note"] = match out.get("note").and_then(Value::as_str) {
        Some(before) => json!(format!("{before} {note}")),
        None => json!(note),
    };
}

/// "1 file" / "2 files", for the notes that say what policy left out.
pub(crate) fn count_of(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{} {many}", thousands(n))
    }
}

/// The workspace of a desk context, or a refusal for any other context.
pub(crate) fn workspace<'a>(
    ctx: &'a ToolContext<'_>,
    tool: &str,
) -> Result<&'a Workspace, ToolError> {
    match ctx {
        ToolContext::Desk(ws) => Ok(ws),
        ToolContext::FilteredDesk { workspace, .. } => Ok(workspace),
        ToolContext::Sandbox(_) => Err(ToolError::WrongContext {
            tool: tool.to_string(),
            needs: "a workspace folder",
        }),
    }
}

/// Resolves the `path` argument (or `default` when it is optional and missing).
pub(crate) fn path_arg(
    ws: &Workspace,
    tool: &str,
    a: &Value,
    default: Option<&str>,
) -> Result<RelPath, ToolError> {
    let raw = match (args::opt_str(a, "path"), default) {
        (Some(p), _) => p,
        (None, Some(d)) => d,
        (None, None) => args::str(tool, a, "path")?,
    };
    Ok(ws.resolve(raw)?)
}

/// Turns "is a folder" into a refusal that tells the model which tool fits.
pub(crate) fn file_error(e: WorkspaceError) -> ToolError {
    match e {
        WorkspaceError::NotAFile { path, kind: "dir" } => ToolError::Refused(format!(
            "\"{path}\" is a folder, not a file; use list_dir to see what is in it"
        )),
        other => other.into(),
    }
}

/// The refusal for a file that is not there.
pub(crate) fn not_found(path: &RelPath) -> ToolError {
    ToolError::Refused(format!(
        "\"{path}\" does not exist; use list_dir or find_files to find the right name"
    ))
}

/// Schema building blocks, kept to what constrained decoding handles well.
pub(crate) fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

pub(crate) fn path_schema(description: &str) -> Value {
    json!({ "type": "string", "minLength": 1, "maxLength": MAX_PATH_BYTES, "description": description })
}

pub(crate) fn text_schema(description: &str) -> Value {
    json!({ "type": "string", "maxLength": MAX_INPUT_CHARS, "description": description })
}

/// `1,234,567` style, for numbers a person reads in cap messages.
pub(crate) fn thousands(n: usize) -> String {
    let digits: Vec<char> = n.to_string().chars().collect();
    let groups: Vec<String> = digits
        .rchunks(3)
        .rev()
        .map(|g| g.iter().collect())
        .collect();
    groups.join(",")
}
