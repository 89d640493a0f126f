//! A recursive walk of the workspace through directory descriptors (never by path, never
//! through links), honouring `.gitignore` and `.ignore` files the way ripgrep does, using the
//! `ignore` crate's matcher. Search tools build on it; so does the stale-temp scan.

use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;

use crate::beneath::{self, Anchor, EntryKind, OFlags};
use crate::confine::{RelPath, TEMP_PREFIX};
use crate::error::{Result, WorkspaceError};
use crate::workspace::{DirEntry, Workspace};

/// Most entries one walk visits before it stops and says so.
pub const MAX_WALK_ENTRIES: usize = 20_000;
/// Largest ignore file read (bigger ones are skipped: they are not hand-written rules).
const MAX_IGNORE_FILE_BYTES: u64 = 256 * 1024;
const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];

/// What a walk includes.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// Honour `.gitignore` and `.ignore` files (true for every tool a model uses).
    pub respect_ignore_files: bool,
    /// Include Rein's `.rein-tmp-` files (only the stale-temp scan wants them).
    pub include_temps: bool,
    /// Stop after this many entries.
    pub max_entries: usize,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            respect_ignore_files: true,
            include_temps: false,
            max_entries: MAX_WALK_ENTRIES,
        }
    }
}

/// What a walk found, and what it left out and why.
#[derive(Debug, Clone, Default)]
pub struct WalkResult {
    /// Regular files, in depth-first name order.
    pub files: Vec<DirEntry>,
    /// Links seen and not followed.
    pub skipped_links: usize,
    /// Entries whose names cannot be addressed (not UTF-8, device names...).
    pub unaddressable: usize,
    /// True when `max_entries` stopped the walk early.
    pub truncated: bool,
}

/// Walks beneath a [`Workspace`].
pub struct Walker<'w> {
    ws: &'w Workspace,
    options: WalkOptions,
    /// Whether an ignore file may be read for its rules ([`Walker::reading_ignore_files`]).
    ignore_file_readable: Option<&'w dyn Fn(&RelPath) -> bool>,
}

/// An ignore file's rules and the folder they apply from.
struct Rules {
    base: RelPath,
    matcher: Gitignore,
}

impl<'w> Walker<'w> {
    pub fn new(ws: &'w Workspace, options: WalkOptions) -> Walker<'w> {
        Walker {
            ws,
            options,
            ignore_file_readable: None,
        }
    }

    /// Reads only the ignore files `readable` lets through for their rules; the others apply
    /// none. Which files an ignore file leaves out tells what it says, so one that policy keeps
    /// from a tool must not shape that tool's walk.
    pub fn reading_ignore_files(mut self, readable: &'w dyn Fn(&RelPath) -> bool) -> Walker<'w> {
        self.ignore_file_readable = Some(readable);
        self
    }

    /// Walks `start` (a folder, or a single file which is returned alone). Ignore files in the
    /// folders above `start` apply too, as they would for `git status`.
    pub fn walk(&self, start: &RelPath) -> Result<WalkResult> {
        let mut result = WalkResult::default();
        if let Some(info) = self.ws.info(start)? {
            if info.kind == EntryKind::File {
                let name = start.file_name().unwrap_or_default().to_string();
                result.files.push(DirEntry {
                    name,
                    path: start.clone(),
                    kind: info.kind,
                    size: info.size,
                });
                return Ok(result);
            }
        }
        let dir = self
            .ws
            .open_dir_opt(start)?
            .ok_or_else(|| WorkspaceError::NotFound {
                path: start.clone(),
            })?;
        let mut rules = Vec::new();
        if self.options.respect_ignore_files {
            self.ancestor_rules(start, &mut rules)?;
        }
        let mut visited = 0usize;
        self.walk_dir(dir.as_fd(), start, &mut rules, &mut visited, &mut result)?;
        Ok(result)
    }

    /// Rules from the folders between the root and `start` (exclusive of `start`, which
    /// `walk_dir` loads itself).
    fn ancestor_rules(&self, start: &RelPath, rules: &mut Vec<Rules>) -> Result<()> {
        let mut chain = Vec::new();
        let mut cursor = start.parent();
        while let Some(dir) = cursor {
            cursor = dir.parent();
            chain.push(dir);
        }
        for dir in chain.into_iter().rev() {
            if let Some(fd) = self.ws.open_dir_opt(&dir)? {
                if let Some(r) = load_rules(
                    fd.as_fd(),
                    &dir,
                    self.ws.root_anchor(),
                    self.ignore_file_readable,
                ) {
                    rules.push(r);
                }
            }
        }
        Ok(())
    }

    fn walk_dir(
        &self,
        dir: BorrowedFd<'_>,
        rel: &RelPath,
        rules: &mut Vec<Rules>,
        visited: &mut usize,
        result: &mut WalkResult,
    ) -> Result<()> {
        let pushed = if self.options.respect_ignore_files {
            match load_rules(dir, rel, self.ws.root_anchor(), self.ignore_file_readable) {
                Some(r) => {
                    rules.push(r);
                    true
                }
                None => false,
            }
        } else {
            false
        };
        let names = beneath::read_dir_names(dir).map_err(|e| WorkspaceError::io("list", rel, e))?;
        for name in names {
            if *visited >= self.options.max_entries {
                result.truncated = true;
                break;
            }
            *visited += 1;
            let Ok(name) = name else {
                result.unaddressable += 1;
                continue;
            };
            let is_temp = name.starts_with(TEMP_PREFIX);
            if name.eq_ignore_ascii_case(".git") || (is_temp && !self.options.include_temps) {
                continue;
            }
            let path = if is_temp {
                RelPath::from_trusted(if rel.is_root() {
                    name.clone()
                } else {
                    format!("{rel}/{name}")
                })
            } else {
                match rel.join(&name) {
                    Ok(p) => p,
                    Err(_) => {
                        result.unaddressable += 1;
                        continue;
                    }
                }
            };
            let stat = match beneath::stat_at(dir, &name) {
                Ok(s) => s,
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
                Err(e) => return Err(WorkspaceError::io("inspect", &path, e)),
            };
            let is_dir = stat.kind == EntryKind::Dir;
            if self.options.respect_ignore_files && is_ignored(rules, &path, is_dir) {
                continue;
            }
            // A mount point (a bind-mounted file or folder of the outside, even on the same
            // filesystem) is not part of the workspace: neither listed nor entered. Where
            // statx cannot tell by name, folders are checked once opened and files when read.
            if matches!(stat.kind, EntryKind::File | EntryKind::Dir) {
                match self.ws.root_anchor().may_hold(dir, &name) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
                    Err(e) => return Err(WorkspaceError::io("inspect", &path, e)),
                }
            }
            match stat.kind {
                EntryKind::File => result.files.push(DirEntry {
                    name,
                    path,
                    kind: stat.kind,
                    size: crate::workspace::file_size(&stat),
                }),
                EntryKind::Dir => {
                    let child: OwnedFd = match beneath::openat_nofollow(
                        dir,
                        path.file_name().unwrap_or_default(),
                        OFlags::RDONLY | OFlags::DIRECTORY,
                        0,
                    ) {
                        Ok(fd) => fd,
                        // Replaced by a link or removed since the stat: skip, never follow.
                        Err(_) => {
                            result.skipped_links += 1;
                            continue;
                        }
                    };
                    // Another filesystem or mount is here (by device or mount id, so a bind
                    // mount of an outside folder is caught too): not part of the workspace.
                    if self.ws.root_anchor().check(child.as_fd()).is_err() {
                        continue;
                    }
                    self.walk_dir(child.as_fd(), &path, rules, visited, result)?;
                    if result.truncated {
                        break;
                    }
                }
                EntryKind::Symlink => result.skipped_links += 1,
                EntryKind::Other => {}
            }
        }
        if pushed {
            rules.pop();
        }
        Ok(())
    }
}

/// Deepest rules decide first; a whitelist (`!pattern`) match keeps the entry.
fn is_ignored(rules: &[Rules], path: &RelPath, is_dir: bool) -> bool {
    for r in rules.iter().rev() {
        let Some(relative) = relative_to(path, &r.base) else {
            continue;
        };
        match r.matcher.matched(Path::new(&relative), is_dir) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => {}
        }
    }
    false
}

fn relative_to(path: &RelPath, base: &RelPath) -> Option<String> {
    if base.is_root() {
        return Some(path.as_str().to_string());
    }
    path.as_str()
        .strip_prefix(base.as_str())?
        .strip_prefix('/')
        .map(str::to_string)
}

/// Reads `.gitignore` and `.ignore` in one folder (through its descriptor, never via a link or
/// from another mount).
fn load_rules(
    dir: BorrowedFd<'_>,
    rel: &RelPath,
    anchor: &Anchor,
    readable: Option<&dyn Fn(&RelPath) -> bool>,
) -> Option<Rules> {
    let mut builder = GitignoreBuilder::new(".");
    let mut any = false;
    for file in IGNORE_FILES {
        if let Some(readable) = readable {
            match rel.join(file) {
                Ok(path) if readable(&path) => {}
                _ => continue,
            }
        }
        let Ok(fd) = beneath::openat_nofollow(dir, file, OFlags::RDONLY | OFlags::NONBLOCK, 0)
        else {
            continue;
        };
        // A hard link is read by no tool: its rules would tell what its other name holds.
        match beneath::stat_fd(fd.as_fd()) {
            Ok(s)
                if crate::workspace::file_size(&s).is_some_and(|n| n <= MAX_IGNORE_FILE_BYTES) => {}
            _ => continue,
        }
        if anchor.check(fd.as_fd()).is_err() {
            continue;
        }
        let mut text = String::new();
        if std::fs::File::from(fd).read_to_string(&mut text).is_err() {
            continue;
        }
        for line in text.lines() {
            // A malformed line is skipped, as git does.
            if builder.add_line(None, line).is_ok() {
                any = true;
            }
        }
    }
    if !any {
        return None;
    }
    builder.build().ok().map(|matcher| Rules {
        base: rel.clone(),
        matcher,
    })
}
