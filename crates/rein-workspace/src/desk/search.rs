//! `search_text` (ripgrep's matcher and searcher over files read beneath the root) and
//! `find_files` (globs). Both honour `.gitignore`/`.ignore` and never show Rein's temp files,
//! and both ask the context's [`super::PathFilter`] about every file: `search_text` never reads
//! a file that is not [`Visibility::Shown`] and counts it in `skipped_by_policy`; `find_files`
//! never names a [`Visibility::Hidden`] file and counts it in `hidden_by_policy`.

use std::time::{Duration, Instant};

use globset::{GlobBuilder, GlobMatcher};
use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::UTF8;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use serde_json::{json, Value};

use super::{
    count_of, note_hidden, object_schema, path_arg, path_filter, path_schema, text_of, thousands,
    workspace, Visibility,
};
use crate::tool::{args, Tool, ToolContext, ToolError, ToolOutput};
use crate::workspace::Workspace;
use crate::RelPath;

/// Most matching lines one `search_text` call returns.
pub const SEARCH_MAX_MATCHES: usize = 100;
/// Files larger than this are skipped by `search_text` (and counted as skipped).
pub const SEARCH_MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
/// Longest matching line shown; longer lines are cut with "…".
pub const SEARCH_MAX_LINE_CHARS: usize = 300;
/// Largest compiled pattern `search_text` accepts (the matcher's default is 100 MiB): its
/// size is roughly the work per byte searched.
pub const SEARCH_REGEX_MAX_BYTES: usize = 64 << 10;
/// How long one `search_text` call searches before it stops and says so.
pub const SEARCH_TIME_BUDGET: Duration = Duration::from_secs(10);
/// About how many bytes are searched between two looks at the clock (whole lines: a longer
/// line is one chunk).
const SEARCH_CHUNK_BYTES: usize = 64 * 1024;
/// Most memory the pattern's lazy DFA may take while searching (the default is 1,000 MiB).
pub const SEARCH_DFA_MAX_BYTES: usize = 16 << 20;
/// Most paths one `find_files` call returns.
pub const FIND_FILES_MAX_RESULTS: usize = 200;

pub struct SearchText;

impl Tool for SearchText {
    fn name(&self) -> &str {
        "search_text"
    }
    fn description(&self) -> &str {
        "Search the text of files for a regular expression (or a literal string with literal=true). Honours .gitignore. Returns matching lines with their file and line number."
    }
    // The descriptions stay as the benches measured them: the readings of a wildcard path and
    // a folder-name glob only accept what was refused or matched nothing before.
    fn schema(&self) -> Value {
        object_schema(
            json!({
                "pattern": { "type": "string", "minLength": 1, "maxLength": 1000, "description": "regular expression, or plain text when literal is true" },
                "literal": { "type": "boolean", "description": "treat pattern as plain text (default false)" },
                "case_insensitive": { "type": "boolean", "description": "ignore letter case (default false)" },
                "path": path_schema("folder or file to search in (default: the whole workspace)"),
                "glob": { "type": "string", "minLength": 1, "maxLength": 500, "description": "only files whose path matches this glob, e.g. \"*.md\"" },
            }),
            &["pattern"],
        )
    }
    fn mutates(&self) -> bool {
        false
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let ws = workspace(ctx, self.name())?;
        let tool = self.name();
        let pattern = args::str(tool, a, "pattern")?;
        // `*` and `?` are never in a workspace path, so a path holding them is a glob: the
        // 1.5B wrote `services/*.yaml` as the path and was refused twice before reading every
        // file one at a time.
        let mut notes = Vec::new();
        let (start, path_glob) = match args::opt_str(a, "path").and_then(glob_path) {
            Some(GlobPath { folder, glob }) => {
                let start = ws.resolve(&folder)?;
                // Every other rule of workspace paths holds for the glob too (no `..`, no `\`),
                // checked on its text alone.
                RelPath::parse(&glob.replace(['*', '?'], "_"))?;
                notes.push(format!(
                    "The path \"{glob}\" holds a glob: searched \"{start}\" for files matching it."
                ));
                (start, Some(glob_matcher(tool, &glob)?))
            }
            None => (path_arg(ws, tool, a, Some("."))?, None),
        };
        let filters: Vec<NameGlob> = args::opt_str(a, "glob")
            .map(|g| glob_matcher(tool, g))
            .transpose()?
            .into_iter()
            .chain(path_glob)
            .collect();
        let matcher = RegexMatcherBuilder::new()
            .size_limit(SEARCH_REGEX_MAX_BYTES)
            .dfa_size_limit(SEARCH_DFA_MAX_BYTES)
            .case_insensitive(args::opt_bool(a, "case_insensitive").unwrap_or(false))
            .fixed_strings(args::opt_bool(a, "literal").unwrap_or(false))
            .build(pattern)
            .map_err(|e| ToolError::InvalidArguments {
                tool: tool.to_string(),
                message: format!("the pattern is not a valid regular expression ({e}); set literal=true to search for plain text"),
            })?;
        let walk = super::policy_walk(ws, ctx, &start).map_err(super::file_error)?;
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .binary_detection(BinaryDetection::quit(0))
            .build();
        let policy = path_filter(ctx);
        let mut stats = Stats::default();
        // Decided for every file before searching, so the count does not depend on where the
        // match cap stops; a hidden file counts whatever the glob, so it confirms no name.
        let mut searchable = Vec::new();
        for entry in &walk.files {
            let visibility = policy.visible(&entry.path);
            if visibility == Visibility::Hidden {
                stats.policy += 1;
                continue;
            }
            if !filters.iter().all(|f| f.keeps(&entry.path)) {
                stats
                    .glob_missed
                    .get_or_insert_with(|| entry.path.to_string());
                continue;
            }
            if visibility == Visibility::Skipped {
                stats.policy += 1;
                continue;
            }
            searchable.push(entry);
        }
        let mut matches: Vec<Value> = Vec::new();
        let mut hit_cap = false;
        // A pattern can cost time in proportion to its size for every byte searched (a
        // thousand-way repetition took 20 s for one 2 MiB file): the clock is read between
        // chunks of whole lines, and the search stops when the budget is spent.
        let deadline = Instant::now() + SEARCH_TIME_BUDGET;
        let mut out_of_time: Option<String> = None;
        'files: for entry in searchable {
            // A hard link (no size) is refused where it is read, and counted there.
            if entry.size.is_some_and(|size| size > SEARCH_MAX_FILE_BYTES) {
                stats.too_large += 1;
                continue;
            }
            let Some(bytes) = read_text_candidate(ws, &entry.path, &mut stats)? else {
                continue;
            };
            stats.searched += 1;
            let path = entry.path.to_string();
            let mut lines_before = 0u64;
            for chunk in line_chunks(&bytes, SEARCH_CHUNK_BYTES) {
                if Instant::now() >= deadline {
                    out_of_time = Some(path.clone());
                    break 'files;
                }
                let result = searcher.search_slice(
                    &matcher,
                    chunk,
                    UTF8(|line_number, line| {
                        if matches.len() >= SEARCH_MAX_MATCHES {
                            hit_cap = true;
                            return Ok(false);
                        }
                        let line_number = lines_before + line_number;
                        matches.push(
                            json!({ "path": path, "line": line_number, "text": clip_line(line) }),
                        );
                        Ok(true)
                    }),
                );
                if result.is_err() {
                    stats.unreadable += 1;
                    break;
                }
                if hit_cap {
                    break 'files;
                }
                lines_before += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
            }
        }
        let truncated = hit_cap || walk.truncated || out_of_time.is_some();
        let mut out = json!({
            "pattern": pattern,
            "matches": matches,
            "files_searched": stats.searched,
            "truncated": truncated,
        });
        if hit_cap {
            notes.push(format!("Stopped after {SEARCH_MAX_MATCHES} matches (the search_text cap); narrow the pattern, path or glob to see the rest."));
        }
        if walk.truncated {
            notes.push(format!(
                "The workspace walk stopped after {} entries; search a sub-folder with path.",
                thousands(crate::MAX_WALK_ENTRIES)
            ));
        }
        if let Some(at) = out_of_time {
            notes.push(format!(
                "Stopped after {} s (the search_text time cap) while searching \"{at}\"; a \
                 simpler pattern (fewer repetitions) or a narrower path or glob finishes sooner.",
                SEARCH_TIME_BUDGET.as_secs()
            ));
        }
        if stats.binary > 0 {
            notes.push(format!(
                "{} binary or non-UTF-8 files were not searched.",
                stats.binary
            ));
        }
        if stats.too_large > 0 {
            notes.push(format!(
                "{} files over {} bytes were skipped.",
                stats.too_large,
                thousands(SEARCH_MAX_FILE_BYTES as usize)
            ));
        }
        if stats.unreadable > 0 {
            notes.push(format!("{} files could not be read.", stats.unreadable));
        }
        if stats.searched == 0 && searchable_none_by_glob(&stats) {
            // A small model globbed `*.eml` over files named `01.eml.txt`, saw no match, and
            // read all 22 files one at a time instead.
            notes.push(format!(
                "No file matched the glob, so nothing was searched; the files there are named like \"{}\": search again with a glob that matches such names, or with none.",
                stats.glob_missed.as_deref().unwrap_or_default()
            ));
        } else if stats.searched > 0 && matches.is_empty() {
            notes.push(format!(
                "No line of the {} matched; search again with fewer or other words (case_insensitive: true ignores case).",
                count_of(stats.searched, "file searched", "files searched")
            ));
        }
        if stats.policy > 0 {
            out["skipped_by_policy"] = json!(stats.policy);
            notes.push(format!(
                "{} skipped by policy (not searched).",
                count_of(stats.policy, "file was", "files were")
            ));
        }
        if !notes.is_empty() {
            out["note"] = json!(notes.join(" "));
        }
        Ok(ToolOutput::Data(out))
    }
}

#[derive(Default)]
struct Stats {
    searched: usize,
    /// Files policy keeps this tool from reading.
    policy: usize,
    binary: usize,
    too_large: usize,
    unreadable: usize,
    /// The first file the glob left out, as an example of the names there.
    glob_missed: Option<String>,
}

/// Whether the glob alone left nothing to search: it left out a file and none was searched,
/// skipped or unreadable for another reason.
fn searchable_none_by_glob(stats: &Stats) -> bool {
    stats.glob_missed.is_some()
        && stats.policy + stats.binary + stats.too_large + stats.unreadable == 0
}

/// Reads a file for searching: `None` (and counted) when it is binary, vanished or unreadable.
fn read_text_candidate(
    ws: &Workspace,
    path: &RelPath,
    stats: &mut Stats,
) -> Result<Option<Vec<u8>>, ToolError> {
    match ws.read_prefix(path, SEARCH_MAX_FILE_BYTES) {
        Ok(Some((bytes, _))) => {
            if text_of(&bytes).is_none() {
                stats.binary += 1;
                return Ok(None);
            }
            Ok(Some(bytes))
        }
        Ok(None) => Ok(None),
        Err(_) => {
            stats.unreadable += 1;
            Ok(None)
        }
    }
}

/// `bytes` in pieces of whole lines of about `size` bytes (a longer line is a piece of its own).
fn line_chunks(bytes: &[u8], size: usize) -> impl Iterator<Item = &[u8]> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = if rest.len() <= size {
            rest.len()
        } else {
            rest[size..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(rest.len(), |i| size + i + 1)
        };
        let (chunk, tail) = rest.split_at(end);
        rest = tail;
        Some(chunk)
    })
}

fn clip_line(line: &str) -> String {
    let line = line.trim_end_matches(['\n', '\r']);
    if line.chars().count() <= SEARCH_MAX_LINE_CHARS {
        line.to_string()
    } else {
        let mut cut: String = line.chars().take(SEARCH_MAX_LINE_CHARS).collect();
        cut.push('…');
        cut
    }
}

/// A glob that may match anywhere below the root: `*.md` matches `notes/a.md` too.
/// A compiled `glob` or `pattern` argument.
pub(super) struct NameGlob {
    matcher: GlobMatcher,
    /// Without a `/`: it also matches a file name alone.
    name_only: bool,
    /// Without a `/` or a wildcard: a name, which `search_text` also matches to folder names.
    plain_name: bool,
}

impl NameGlob {
    /// Matches the whole relative path; a pattern without `/` also matches the file name alone.
    pub(super) fn hits(&self, path: &RelPath) -> bool {
        self.matcher.is_match(path.as_str())
            || (self.name_only && path.file_name().is_some_and(|n| self.matcher.is_match(n)))
    }

    /// `search_text`'s filter: as [`NameGlob::hits`], and a plain name also keeps every file
    /// beneath a folder of that name: the 1.5B gave `services` as the glob for the files in
    /// `services/`. A glob with wildcards keeps to file names, so `*.md` never takes in a
    /// folder `archive.md/`.
    fn keeps(&self, path: &RelPath) -> bool {
        self.hits(path)
            || (self.plain_name
                && path
                    .parent()
                    .is_some_and(|folder| folder.components().any(|c| self.matcher.is_match(c))))
    }
}

pub(super) fn glob_matcher(tool: &str, pattern: &str) -> Result<NameGlob, ToolError> {
    let glob = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| ToolError::InvalidArguments {
            tool: tool.to_string(),
            message: format!("the glob \"{pattern}\" is not valid: {e}"),
        })?;
    let name_only = !pattern.contains('/');
    Ok(NameGlob {
        matcher: glob.compile_matcher(),
        name_only,
        plain_name: name_only && !pattern.contains(['*', '?', '[', '{']),
    })
}

/// A `path` argument holding `*` or `?`, characters never in a workspace path, read as a glob
/// by `search_text`. The policy decides such a call as one naming [`GlobPath::folder`], the
/// folder walked: the glob can only narrow what that folder holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobPath {
    /// The folders before the first wildcard (`.` for none), or `/` for an absolute path,
    /// which the workspace refuses.
    pub folder: String,
    /// The whole path without empty and `.` parts (`./notes//*.md` is `notes/*.md`).
    pub glob: String,
}

/// The glob a `path` argument spells, if it holds `*` or `?`.
pub fn glob_path(path: &str) -> Option<GlobPath> {
    if !path.contains(['*', '?']) {
        return None;
    }
    let parts: Vec<&str> = path
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    let plain = parts
        .iter()
        .take_while(|part| !part.contains(['*', '?']))
        .count();
    let folder = if path.starts_with('/') {
        "/".to_string()
    } else if plain == 0 {
        ".".to_string()
    } else {
        parts[..plain].join("/")
    };
    Some(GlobPath {
        folder,
        glob: parts.join("/"),
    })
}

pub struct FindFiles;

impl Tool for FindFiles {
    fn name(&self) -> &str {
        "find_files"
    }
    fn description(&self) -> &str {
        "Find files whose path matches a glob such as \"*.md\", \"src/**/*.rs\" or \"report_?.txt\". Honours .gitignore."
    }
    fn schema(&self) -> Value {
        object_schema(
            json!({
                "pattern": { "type": "string", "minLength": 1, "maxLength": 500, "description": "glob; without a \"/\" it matches file names at any depth" },
                "path": path_schema("folder to search in (default: the whole workspace)"),
            }),
            &["pattern"],
        )
    }
    fn mutates(&self) -> bool {
        false
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let ws = workspace(ctx, self.name())?;
        let pattern = args::str(self.name(), a, "pattern")?;
        let start = path_arg(ws, self.name(), a, Some("."))?;
        let matcher = glob_matcher(self.name(), pattern)?;
        let walk = super::policy_walk(ws, ctx, &start).map_err(super::file_error)?;
        let policy = path_filter(ctx);
        // A hidden file counts whatever the pattern, so the count confirms no guessed name.
        let mut hidden = 0usize;
        let mut hits: Vec<&RelPath> = Vec::new();
        for path in walk.files.iter().map(|e| &e.path) {
            if policy.visible(path) == Visibility::Hidden {
                hidden += 1;
            } else if matcher.hits(path) {
                hits.push(path);
            }
        }
        let total = hits.len();
        let files: Vec<Value> = hits
            .iter()
            .take(FIND_FILES_MAX_RESULTS)
            .map(|p| json!(p))
            .collect();
        let truncated = total > FIND_FILES_MAX_RESULTS || walk.truncated;
        let mut out =
            json!({ "pattern": pattern, "files": files, "total": total, "truncated": truncated });
        if total > FIND_FILES_MAX_RESULTS {
            out["note"] = json!(format!(
                "Showing the first {FIND_FILES_MAX_RESULTS} of {} matches (the find_files cap); use a narrower pattern or path.",
                thousands(total)
            ));
        } else if walk.truncated {
            out["note"] = json!(format!(
                "The workspace walk stopped after {} entries; search a sub-folder with path.",
                thousands(crate::MAX_WALK_ENTRIES)
            ));
        }
        // Counted over the whole walk, matching or not.
        note_hidden(
            &mut out,
            hidden,
            "file under the searched folder is",
            "files under the searched folder are",
        );
        Ok(ToolOutput::Data(out))
    }
}
