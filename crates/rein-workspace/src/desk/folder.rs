//! `folder_stats`: the counts a person gets from `find`, `wc -l` and `fdupes` over a folder,
//! as facts a model copies instead of counting list items itself (the 1.5B wrote a file's
//! character count as its row count, and five letters for every year of an archive).
//!
//! Every file under the folder (or only those a glob picks) is counted per folder and per
//! extension; each listed file gets its size, its lines (text files), its data rows (tables the
//! way `table_stats` reads them) and its depth; then the files with the most lines, rows and
//! folders above them, the empty files, and the groups of files with the same content. Policy
//! works as in `find_files`: a hidden file is only counted in `hidden_by_policy`, and a file
//! the policy keeps from tools is counted by name, never read.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::search::glob_matcher;
use super::table::Table;
use super::{
    note_hidden, object_schema, path_arg, path_filter, path_schema, text_of, thousands, workspace,
    Visibility, READ_FILE_MAX_BYTES,
};
use crate::tool::{args, Tool, ToolContext, ToolError, ToolOutput};
use crate::RelPath;

/// Most files one `folder_stats` call lists one by one; the counts cover every file.
pub const FOLDER_STATS_MAX_LISTED: usize = 100;
/// Most paths one call names in each of `most_files`, `most_lines`, `most_rows`, `deepest`,
/// `empty` and `same_content` (all groups together); `<key>_of` gives the whole count.
pub const FOLDER_STATS_MAX_NAMED: usize = 20;
/// Most bytes one call reads for lines, rows and content; files past it are counted by name
/// and size only, and the result says so.
pub const FOLDER_STATS_MAX_READ_BYTES: u64 = 64 * 1024 * 1024;

/// The file names read as tables for their `rows`.
const TABLE_EXTENSIONS: &[&str] = &["csv", "tsv", "jsonl", "ndjson"];

pub struct FolderStats;

impl Tool for FolderStats {
    fn name(&self) -> &str {
        "folder_stats"
    }
    fn description(&self) -> &str {
        "Count the files under a folder (sub-folders included): per folder and per extension, each file's bytes, lines, data rows (CSV/TSV/JSON lines, header not counted) and depth, the total lines, the files with the most lines, rows and folders above them, the empty files and the files with the same content. Copy its numbers instead of counting."
    }
    fn schema(&self) -> Value {
        object_schema(
            json!({
                "path": path_schema("folder to count (default: the whole workspace)"),
                "pattern": { "type": "string", "minLength": 1, "maxLength": 500, "description": "only files whose path matches this glob, e.g. \"*.csv\" or \"*.{toml,yaml}\"; without a \"/\" it matches file names" },
            }),
            &[],
        )
    }
    fn mutates(&self) -> bool {
        false
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let ws = workspace(ctx, self.name())?;
        let start = path_arg(ws, self.name(), a, Some("."))?;
        let pattern = args::opt_str(a, "pattern");
        let matcher = pattern.map(|p| glob_matcher(self.name(), p)).transpose()?;
        let walk = super::policy_walk(ws, ctx, &start).map_err(super::file_error)?;
        let policy = path_filter(ctx);
        let mut hidden = 0usize;
        let mut files = Vec::new();
        let mut budget = FOLDER_STATS_MAX_READ_BYTES;
        for entry in &walk.files {
            let visibility = policy.visible(&entry.path);
            if visibility == Visibility::Hidden {
                hidden += 1;
                continue;
            }
            if matcher.as_ref().is_some_and(|m| !m.hits(&entry.path)) {
                continue;
            }
            let mut file = FileFacts::named(&entry.path);
            if visibility == Visibility::Skipped {
                file.skipped = true;
            } else {
                file.bytes = entry.size;
                // No size: a hard link, which the workspace does not open.
                let size = entry.size.unwrap_or(u64::MAX);
                if size > READ_FILE_MAX_BYTES || size > budget {
                    file.unread = true;
                } else {
                    budget -= size;
                    match ws.read_bytes_capped(&entry.path, READ_FILE_MAX_BYTES) {
                        Ok(Some(bytes)) => file.read_from(&bytes),
                        // Gone or grown since the walk, a hard link the workspace will not
                        // open, or not readable: counted by name, not read. One such file
                        // failed the whole count before.
                        Ok(None) | Err(_) => file.unread = true,
                    }
                }
            }
            files.push(file);
        }
        let (mut out, capped) = summary(&files, &start, pattern);
        let mut notes = Vec::new();
        if walk.truncated {
            notes.push(format!(
                "The walk stopped after {} entries: the counts cover only the files it reached; count a sub-folder with path.",
                thousands(crate::MAX_WALK_ENTRIES)
            ));
        }
        if let Some(n) = out.get("listed_of").and_then(Value::as_u64) {
            notes.push(format!(
                "Only the first {FOLDER_STATS_MAX_LISTED} of {} files are listed one by one (the folder_stats cap); every count covers them all. Use a narrower path or pattern to list the rest.",
                thousands(n as usize)
            ));
        }
        if !capped.is_empty() {
            notes.push(format!(
                "{} name only their first {FOLDER_STATS_MAX_NAMED} paths (their first {FOLDER_STATS_MAX_LISTED} folders for folders; the folder_stats cap): the field with the same name and `_of` gives how many there are.",
                capped.join(", ")
            ));
        }
        if let Some(n) = out.get("unread").and_then(Value::as_u64) {
            notes.push(format!(
                "{} not read (over the {} byte read cap of one file or of the call, or not readable): no lines, rows or content facts for them, and they are in no total.",
                counted(n, "file was", "files were"),
                thousands(READ_FILE_MAX_BYTES as usize)
            ));
        }
        if let Some(n) = out.get("not_text").and_then(Value::as_u64) {
            notes.push(format!(
                "{} not UTF-8 text (binary, or another encoding): no lines or rows for them, and they are in no total or largest.",
                counted(n, "file is", "files are")
            ));
        }
        if let Some(n) = out.get("skipped_by_policy").and_then(Value::as_u64) {
            notes.push(format!(
                "{} kept from tools by policy: counted by name only.",
                counted(n, "file is", "files are")
            ));
        }
        if !notes.is_empty() {
            out["note"] = json!(notes.join(" "));
        }
        out["truncated"] =
            json!(walk.truncated || out.get("listed_of").is_some() || !capped.is_empty());
        note_hidden(
            &mut out,
            hidden,
            "file under the counted folder is",
            "files under the counted folder are",
        );
        Ok(ToolOutput::Data(figures_first(out)))
    }
}

/// `out` with its counts, totals and notes first, then its maps and lists of paths, the per-file
/// `list` last: a model is shown a long result clipped (the engine clips it at 6,000
/// characters), and before, everything after the list (totals, largest, copies, the note
/// about the caps, `truncated`) was cut off. The order of a map that keeps insertion order.
fn figures_first(out: Value) -> Value {
    let Value::Object(map) = out else {
        return out;
    };
    let rank = |k: &str, v: &Value| match v {
        _ if k == "list" => 2,
        Value::Array(_) | Value::Object(_) => 1,
        _ => 0,
    };
    let mut fields: Vec<(String, Value)> = map.into_iter().collect();
    fields.sort_by_key(|(k, v)| rank(k, v));
    Value::Object(fields.into_iter().collect())
}

fn counted(n: u64, one: &str, many: &str) -> String {
    super::count_of(n as usize, one, many)
}

/// What `folder_stats` tells of one file.
#[derive(Debug)]
struct FileFacts {
    path: String,
    folder: String,
    /// `None` for a file with no extension, which the result counts apart so that no
    /// sentinel in the extension map can collide with a real extension.
    extension: Option<String>,
    depth: usize,
    bytes: Option<u64>,
    lines: Option<usize>,
    rows: Option<usize>,
    sha256: Option<String>,
    skipped: bool,
    unread: bool,
}

impl FileFacts {
    fn named(path: &RelPath) -> FileFacts {
        let name = path.file_name().unwrap_or_default();
        let extension = match name.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() && !ext.is_empty() => Some(ext.to_lowercase()),
            _ => None,
        };
        FileFacts {
            path: path.as_str().to_string(),
            folder: path
                .parent()
                .map_or_else(|| ".".to_string(), |p| p.to_string()),
            extension,
            depth: path.depth().saturating_sub(1),
            bytes: None,
            lines: None,
            rows: None,
            sha256: None,
            skipped: false,
            unread: false,
        }
    }

    /// Lines as `wc -l` would count them plus an unterminated last line, the rows of a table,
    /// and the content's hash.
    fn read_from(&mut self, bytes: &[u8]) {
        self.sha256 = Some(format!("{:x}", Sha256::digest(bytes)));
        let Some(text) = text_of(bytes) else {
            return;
        };
        self.lines = Some(text.split_inclusive('\n').count());
        if self
            .extension
            .as_deref()
            .is_some_and(|ext| TABLE_EXTENSIONS.contains(&ext))
        {
            self.rows = Table::parse(&self.path, text).ok().map(|t| t.rows.len());
        }
    }

    fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("path".into(), json!(self.path));
        if self.skipped {
            o.insert("skipped_by_policy".into(), json!(true));
        }
        if let Some(b) = self.bytes {
            o.insert("bytes".into(), json!(b));
        }
        // A table's rows before its lines: the 1.5B, asked for rows, copied the first figure
        // of an entry (53 lines for 52 rows).
        if let Some(r) = self.rows {
            o.insert("rows".into(), json!(r));
        }
        if let Some(l) = self.lines {
            o.insert("lines".into(), json!(l));
        }
        o.insert("depth".into(), json!(self.depth));
        Value::Object(o)
    }
}

/// Files counted by extension, with the files that have none counted apart (`no_extension`).
#[derive(Debug, Default)]
struct ByExtension<'a> {
    named: BTreeMap<&'a str, usize>,
    none: usize,
}

impl<'a> ByExtension<'a> {
    fn add(&mut self, file: &'a FileFacts) {
        match &file.extension {
            Some(ext) => *self.named.entry(ext).or_default() += 1,
            None => self.none += 1,
        }
    }

    /// Sets `extensions` on `facts`, and `no_extension` when any file has none.
    fn put_into(&self, facts: &mut Value) {
        facts["extensions"] = json!(self.named);
        if self.none > 0 {
            facts["no_extension"] = json!(self.none);
        }
    }
}

/// The result over `files`, and the keys whose paths were cut at a cap.
fn summary(
    files: &[FileFacts],
    start: &RelPath,
    pattern: Option<&str>,
) -> (Value, Vec<&'static str>) {
    let mut folders: BTreeMap<&str, (usize, ByExtension)> = BTreeMap::new();
    let mut extensions = ByExtension::default();
    for f in files {
        let folder = folders.entry(&f.folder).or_default();
        folder.0 += 1;
        folder.1.add(f);
        extensions.add(f);
    }
    let top = folders.values().map(|(n, _)| *n).max().unwrap_or(0);
    let most_files: Vec<String> = folders
        .iter()
        .filter(|(_, (n, _))| *n == top)
        .map(|(name, _)| name.to_string())
        .collect();
    let folders_of = folders.len();
    let folders: Map<String, Value> = folders
        .into_iter()
        .take(FOLDER_STATS_MAX_LISTED)
        .map(|(name, (n, by_ext))| {
            let mut facts = json!({ "files": n });
            by_ext.put_into(&mut facts);
            (name.to_string(), facts)
        })
        .collect();
    let mut out = json!({
        "path": start.to_string(),
        "files": files.len(),
        "folders": folders,
        "list": files.iter().take(FOLDER_STATS_MAX_LISTED).map(FileFacts::to_json).collect::<Vec<_>>(),
    });
    extensions.put_into(&mut out);
    let mut capped = Vec::new();
    if folders_of > FOLDER_STATS_MAX_LISTED {
        out["folders_of"] = json!(folders_of);
        capped.push("folders");
    }
    if !files.is_empty() {
        name_paths(&mut out, "most_files", most_files, &mut capped);
    }
    if let Some(p) = pattern {
        out["pattern"] = json!(p);
    }
    if files.len() > FOLDER_STATS_MAX_LISTED {
        out["listed_of"] = json!(files.len());
    }
    let with_lines: Vec<(&FileFacts, usize)> =
        files.iter().filter_map(|f| Some((f, f.lines?))).collect();
    if !with_lines.is_empty() {
        out["total_lines"] = json!(with_lines.iter().map(|(_, n)| n).sum::<usize>());
        name_paths(&mut out, "most_lines", most(&with_lines), &mut capped);
    }
    let with_rows: Vec<(&FileFacts, usize)> =
        files.iter().filter_map(|f| Some((f, f.rows?))).collect();
    if !with_rows.is_empty() {
        out["total_rows"] = json!(with_rows.iter().map(|(_, n)| n).sum::<usize>());
        name_paths(&mut out, "most_rows", most(&with_rows), &mut capped);
    }
    let depths: Vec<(&FileFacts, usize)> = files.iter().map(|f| (f, f.depth)).collect();
    if !depths.is_empty() {
        name_paths(&mut out, "deepest", most(&depths), &mut capped);
    }
    let empty: Vec<String> = files
        .iter()
        .filter(|f| f.bytes == Some(0))
        .map(|f| f.path.clone())
        .collect();
    name_paths(&mut out, "empty", empty, &mut capped);
    let groups = same_content(files);
    let in_groups: usize = groups.iter().map(Vec::len).sum();
    let mut room = FOLDER_STATS_MAX_NAMED;
    let shown: Vec<Vec<String>> = groups
        .into_iter()
        .map_while(|g| {
            (room > 0).then(|| {
                let take = g.len().min(room);
                room -= take;
                g.into_iter().take(take).collect()
            })
        })
        .collect();
    out["same_content"] = json!(shown);
    if in_groups > FOLDER_STATS_MAX_NAMED {
        out["same_content_files_of"] = json!(in_groups);
        capped.push("same_content");
    }
    let unread = files.iter().filter(|f| f.unread).count();
    if unread > 0 {
        out["unread"] = json!(unread);
    }
    // Read, and no lines: `wc -l` would count them, the totals do not.
    let not_text = files
        .iter()
        .filter(|f| f.sha256.is_some() && f.lines.is_none())
        .count();
    if not_text > 0 {
        out["not_text"] = json!(not_text);
    }
    let skipped = files.iter().filter(|f| f.skipped).count();
    if skipped > 0 {
        out["skipped_by_policy"] = json!(skipped);
    }
    (out, capped)
}

/// Sets `key` to `paths`, at most [`FOLDER_STATS_MAX_NAMED`] of them; past the cap `<key>_of`
/// says how many there are and `capped` gets the key.
fn name_paths(out: &mut Value, key: &'static str, paths: Vec<String>, capped: &mut Vec<&str>) {
    if paths.len() > FOLDER_STATS_MAX_NAMED {
        out[format!("{key}_of")] = json!(paths.len());
        capped.push(key);
    }
    out[key] = json!(paths
        .into_iter()
        .take(FOLDER_STATS_MAX_NAMED)
        .collect::<Vec<_>>());
}

/// Every path that ties for the largest figure (`most_lines`, `most_rows`, `deepest`).
fn most(figures: &[(&FileFacts, usize)]) -> Vec<String> {
    let top = figures.iter().map(|(_, n)| *n).max().unwrap_or(0);
    figures
        .iter()
        .filter(|(_, n)| *n == top)
        .map(|(f, _)| f.path.clone())
        .collect()
}

/// Groups of two or more non-empty files whose bytes are the same, in listing order.
fn same_content(files: &[FileFacts]) -> Vec<Vec<String>> {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for f in files.iter().filter(|f| f.bytes.is_some_and(|b| b > 0)) {
        let Some(sha) = f.sha256.as_deref() else {
            continue;
        };
        match groups.iter_mut().find(|(s, _)| *s == sha) {
            Some((_, paths)) => paths.push(f.path.clone()),
            None => groups.push((sha, vec![f.path.clone()])),
        }
    }
    groups
        .into_iter()
        .filter(|(_, paths)| paths.len() > 1)
        .map(|(_, paths)| paths)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Workspace;

    fn stats(files: &[(&str, &[u8])], a: Value) -> Value {
        let dir = tempfile::tempdir().unwrap();
        for (path, body) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        let ws = Workspace::open(dir.path()).unwrap();
        let mut ctx = ToolContext::Desk(&ws);
        match FolderStats.run(&mut ctx, &a).unwrap() {
            ToolOutput::Data(v) => v,
            other => panic!("not data: {other:?}"),
        }
    }

    #[test]
    fn counts_per_folder_and_extension_and_lists_each_file() {
        let v = stats(
            &[
                ("archive/README.txt", b"about\n"),
                ("archive/2021/a.txt", b"x\n"),
                ("archive/2021/b.txt", b"y\n"),
                ("archive/2022/c.txt", b"z\n"),
                ("archive/2022/d.pdf", b"%PDF\0"),
            ],
            json!({"path": "archive"}),
        );
        assert_eq!(v["files"], 5);
        assert_eq!(v["folders"]["archive/2021"]["files"], 2);
        assert_eq!(v["folders"]["archive/2022"]["extensions"]["pdf"], 1);
        assert_eq!(v["folders"]["archive"]["files"], 1);
        assert_eq!(v["extensions"]["txt"], 4);
        assert_eq!(v["most_files"], json!(["archive/2021", "archive/2022"]));
        assert_eq!(v["total_lines"], 4, "the binary file has no lines: {v}");
        assert_eq!(v["deepest"].as_array().unwrap().len(), 4);
        assert_eq!(v["truncated"], false);
    }

    #[test]
    fn files_without_an_extension_are_counted_apart_from_every_real_extension() {
        // `notes.(none)` has a real extension that once collided with the tool's own
        // spelling of "no extension".
        let v = stats(
            &[
                ("share/Makefile", b"all:\n"),
                ("share/.env", b"A=1\n"),
                ("share/notes.(none)", b"x\n"),
                ("share/sub/a.csv", b"h\n1\n"),
            ],
            json!({"path": "share"}),
        );
        assert_eq!(v["no_extension"], 2, "{v}");
        assert_eq!(v["extensions"], json!({"(none)": 1, "csv": 1}), "{v}");
        assert_eq!(v["folders"]["share"]["no_extension"], 2, "{v}");
        assert_eq!(v["folders"]["share"]["extensions"]["(none)"], 1, "{v}");
        assert!(
            v["folders"]["share/sub"].get("no_extension").is_none(),
            "{v}"
        );
    }

    #[test]
    fn lines_rows_and_the_largest_are_facts_of_the_bytes() {
        let v = stats(
            &[
                ("logs/a.log", b"one\ntwo\nthree"),
                ("logs/b.log", b"1\n2\n3\n4\n"),
                ("data/t.csv", b"id,note\n1,\"two\nlines\"\n2,x\n\n"),
            ],
            json!({}),
        );
        let list = v["list"].as_array().unwrap();
        let of = |p: &str| list.iter().find(|f| f["path"] == p).unwrap().clone();
        assert_eq!(
            of("logs/a.log")["lines"],
            3,
            "an unterminated last line counts"
        );
        assert_eq!(of("logs/b.log")["lines"], 4);
        assert_eq!(
            of("data/t.csv")["rows"],
            2,
            "a quoted line break is one row"
        );
        assert_eq!(of("data/t.csv")["lines"], 5);
        assert_eq!(v["most_lines"], json!(["data/t.csv"]));
        assert_eq!(v["most_rows"], json!(["data/t.csv"]));
        assert_eq!(v["total_lines"], 12);
    }

    #[test]
    fn a_glob_picks_the_files_counted() {
        let v = stats(
            &[
                ("services/api/config.toml", b"a=1\n"),
                ("services/api/README.md", b"# api\n"),
                ("services/web/flags.yaml", b"a: 1\n"),
            ],
            json!({"path": "services", "pattern": "*.{toml,yaml}"}),
        );
        assert_eq!(v["files"], 2);
        assert_eq!(v["folders"]["services/api"]["files"], 1);
        assert_eq!(v["pattern"], "*.{toml,yaml}");
    }

    #[test]
    fn empty_files_and_same_content_groups() {
        let v = stats(
            &[
                ("share/contacts.csv", b"name\nAda\n"),
                ("share/old/copy.csv", b"name\nAda\n"),
                ("share/near.csv", b"name\nAda \n"),
                ("share/empty.txt", b""),
                ("share/also-empty.md", b""),
                ("share/blank.txt", b" \n"),
            ],
            json!({"path": "share"}),
        );
        assert_eq!(
            v["empty"],
            json!(["share/also-empty.md", "share/empty.txt"])
        );
        assert_eq!(
            v["same_content"],
            json!([["share/contacts.csv", "share/old/copy.csv"]]),
            "empty files are not a copy group; a near copy is no copy"
        );
    }

    #[test]
    fn a_bad_glob_or_a_missing_folder_is_refused_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let mut ctx = ToolContext::Desk(&ws);
        let err = FolderStats
            .run(&mut ctx, &json!({"pattern": "a[b"}))
            .unwrap_err();
        assert!(err.to_string().contains("not valid"), "{err}");
        assert!(FolderStats
            .run(&mut ctx, &json!({"path": "nowhere"}))
            .is_err());
    }

    #[test]
    fn the_list_is_capped_and_says_so_while_the_counts_cover_all() {
        let names: Vec<String> = (0..FOLDER_STATS_MAX_LISTED + 5)
            .map(|i| format!("d/f{i:03}.txt"))
            .collect();
        let files: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b"x\n"[..])).collect();
        let v = stats(&files, json!({}));
        assert_eq!(v["files"], FOLDER_STATS_MAX_LISTED + 5);
        assert_eq!(v["list"].as_array().unwrap().len(), FOLDER_STATS_MAX_LISTED);
        assert_eq!(v["total_lines"], FOLDER_STATS_MAX_LISTED + 5);
        assert_eq!(v["truncated"], true);
        assert!(
            v["note"].as_str().unwrap().contains("folder_stats cap"),
            "{v}"
        );
    }
}
