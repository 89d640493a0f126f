//! Crash-safe writes in separate steps, so the engine can journal between them and a
//! crash-injection test can kill the process at each boundary:
//!
//! 1. [`Workspace::stage`]: write the new content to a temp file in the target's own folder
//!    (creating folders beneath the root as needed, never through links) and fsync it;
//! 2. [`Staged::publish`]: rename it over the target (atomic on POSIX) and fsync the folder.
//!
//! A crash leaves either the old file or the new one, never a torn one; at worst a temp file
//! named `.rein-tmp-…` stays behind, which [`Workspace::stale_temps`] finds and
//! [`Workspace::clean_stale_temps`] removes.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::beneath::{self, EntryKind, OFlags};
use crate::confine::{RelPath, TEMP_PREFIX};
use crate::error::{ConfinementError, Result, WorkspaceError};
use crate::walk::{WalkOptions, Walker};
use crate::workspace::Workspace;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// New content written and synced to a temp file beside its target, not yet visible there.
/// Dropping it without [`Staged::publish`] removes the temp file.
#[derive(Debug)]
pub struct Staged {
    dir: OwnedFd,
    temp: RelPath,
    temp_name: String,
    target: RelPath,
    target_name: String,
    /// The target did not exist when staged: publishing must not replace one that appeared.
    create: bool,
    finished: bool,
}

impl Staged {
    /// The file this will replace or create.
    pub fn target(&self) -> &RelPath {
        &self.target
    }

    /// Where the staged bytes are now (a `.rein-tmp-` name in the same folder).
    pub fn temp(&self) -> &RelPath {
        &self.temp
    }

    /// Renames the temp file over the target and fsyncs the folder, so the change survives a
    /// power cut. On failure the temp file is removed and the target is unchanged.
    ///
    /// When the target did not exist at [`Workspace::stage`], the rename is `RENAME_NOREPLACE`:
    /// a file created there in the meantime is never replaced
    /// ([`WorkspaceError::AppearedMeanwhile`]).
    pub fn publish(mut self) -> Result<()> {
        self.finished = true;
        let dir = self.dir.as_fd();
        let renamed = if self.create {
            beneath::rename_noreplace_at(dir, &self.temp_name, &self.target_name)
        } else {
            beneath::rename_at(dir, &self.temp_name, &self.target_name)
        };
        if let Err(e) = renamed {
            let _ = beneath::unlink_at(dir, &self.temp_name);
            if self.create && e.raw_os_error() == Some(libc::EEXIST) {
                return Err(WorkspaceError::AppearedMeanwhile {
                    path: self.target.clone(),
                });
            }
            return Err(WorkspaceError::io("replace", &self.target, e));
        }
        beneath::fsync(dir).map_err(|e| WorkspaceError::io("sync the folder of", &self.target, e))
    }

    /// Abandons the staged content and removes the temp file.
    pub fn discard(mut self) -> Result<()> {
        self.finished = true;
        beneath::unlink_at(self.dir.as_fd(), &self.temp_name)
            .map_err(|e| WorkspaceError::io("remove", &self.temp, e))
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.finished {
            let _ = beneath::unlink_at(self.dir.as_fd(), &self.temp_name);
        }
    }
}

impl Workspace {
    /// Step 1 of an atomic write: see the module docs. Refuses a target that is a folder or a
    /// link; keeps an existing file's permission bits.
    pub fn stage(&self, target: &RelPath, bytes: &[u8]) -> Result<Staged> {
        self.stage_as(target, &self.new_temp_path(target), bytes, None)
    }

    /// A fresh temp name beside `target`, for [`Workspace::stage_as`]. A caller that journals
    /// its writes records this name before staging, so that recovery removes exactly the temp
    /// files it made and never a person's file that merely starts with `.rein-tmp-`.
    pub fn new_temp_path(&self, target: &RelPath) -> RelPath {
        target.temp_sibling(&unique_suffix())
    }

    /// [`Workspace::stage`] into the temp file `temp` (from [`Workspace::new_temp_path`] for this
    /// target). `new_mode` gives the permission bits when the target does not exist yet (an undo
    /// recreating a deleted file); an existing target keeps its own.
    pub fn stage_as(
        &self,
        target: &RelPath,
        temp: &RelPath,
        bytes: &[u8],
        new_mode: Option<u32>,
    ) -> Result<Staged> {
        if temp.parent() != target.parent()
            || !temp.file_name().is_some_and(|n| n.starts_with(TEMP_PREFIX))
        {
            return Err(WorkspaceError::io(
                "stage",
                target,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{temp} is not a {TEMP_PREFIX} file beside it"),
                ),
            ));
        }
        let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
            return Err(WorkspaceError::NotAFile {
                path: target.clone(),
                kind: "folder",
            });
        };
        let dir = beneath::ensure_dir_beneath(self.root_fd(), self.root_anchor(), &parent)
            .map_err(|e| self.open_error("create the folder", &parent, e))?;
        let mode = match beneath::stat_at(dir.as_fd(), name) {
            Ok(stat) => match stat.kind {
                EntryKind::File => Some(stat.mode),
                EntryKind::Symlink => {
                    return Err(ConfinementError::Link {
                        path: target.to_string(),
                        kind: "symbolic link",
                    }
                    .into())
                }
                kind => {
                    return Err(WorkspaceError::NotAFile {
                        path: target.clone(),
                        kind: kind.as_str(),
                    })
                }
            },
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => None,
            Err(e) => return Err(WorkspaceError::io("inspect", target, e)),
        };
        let temp = temp.clone();
        let temp_name = temp.file_name().unwrap_or_default().to_string();
        let fd = beneath::openat_nofollow(
            dir.as_fd(),
            &temp_name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
            0o666,
        )
        .map_err(|e| WorkspaceError::io("create a temporary file for", target, e))?;
        let staged = Staged {
            dir,
            temp,
            temp_name,
            target: target.clone(),
            target_name: name.to_string(),
            create: mode.is_none(),
            finished: false,
        };
        let write = || -> std::io::Result<()> {
            if let Some(mode) = mode.or(new_mode) {
                beneath::chmod_fd(fd.as_fd(), mode)?;
            }
            let mut file = File::from(fd);
            file.write_all(bytes)?;
            file.sync_all()
        };
        // On error `staged` drops here and removes the partial temp file.
        write().map_err(|e| WorkspaceError::io("write", target, e))?;
        Ok(staged)
    }

    /// Both steps at once, for callers that need no journal entry in between.
    pub fn write_atomic(&self, target: &RelPath, bytes: &[u8]) -> Result<()> {
        self.stage(target, bytes)?.publish()
    }

    /// Removes a file and fsyncs its folder. Returns whether there was a file to remove, so a
    /// retried removal is not an error. Refuses folders and links.
    pub fn remove(&self, target: &RelPath) -> Result<bool> {
        let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
            return Err(WorkspaceError::NotAFile {
                path: target.clone(),
                kind: "folder",
            });
        };
        let dir = match self.open_dir_opt(&parent) {
            Ok(Some(dir)) => dir,
            Ok(None) | Err(WorkspaceError::NotADirectory { .. }) => return Ok(false),
            Err(e) => return Err(e),
        };
        match beneath::stat_at(dir.as_fd(), name) {
            Ok(stat) if stat.kind == EntryKind::File => {}
            Ok(stat) if stat.kind == EntryKind::Symlink => {
                return Err(ConfinementError::Link {
                    path: target.to_string(),
                    kind: "symbolic link",
                }
                .into())
            }
            Ok(stat) => {
                return Err(WorkspaceError::NotAFile {
                    path: target.clone(),
                    kind: stat.kind.as_str(),
                })
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(false),
            Err(e) => return Err(WorkspaceError::io("inspect", target, e)),
        }
        beneath::unlink_at(dir.as_fd(), name)
            .map_err(|e| WorkspaceError::io("remove", target, e))?;
        beneath::fsync(dir.as_fd())
            .map_err(|e| WorkspaceError::io("sync the folder of", target, e))?;
        Ok(true)
    }

    /// Temp files left by an interrupted write, anywhere in the workspace (ignore files are not
    /// consulted: a stale temp in an ignored folder is still stale).
    pub fn stale_temps(&self) -> Result<Vec<RelPath>> {
        let options = WalkOptions {
            respect_ignore_files: false,
            include_temps: true,
            ..WalkOptions::default()
        };
        let walk = Walker::new(self, options).walk(&RelPath::root())?;
        Ok(walk
            .files
            .into_iter()
            .filter(|e| e.name.starts_with(TEMP_PREFIX))
            .map(|e| e.path)
            .collect())
    }

    /// Removes the temp file `temp_name` beside `target`: one this crate staged, by the name
    /// the caller recorded from [`Workspace::new_temp_path`]. Returns whether there was one.
    /// Refuses any name but a `.rein-tmp-` file name, and a folder or a link, so nothing else
    /// is ever removed by mistake.
    pub fn remove_temp(&self, target: &RelPath, temp_name: &str) -> Result<bool> {
        let usable = temp_name.starts_with(TEMP_PREFIX)
            && !temp_name.contains(['/', '\0'])
            && target.file_name().is_some();
        let parent = target.parent().unwrap_or_default();
        if !usable {
            return Err(WorkspaceError::io(
                "remove a temporary file beside",
                target,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{temp_name:?} is not a {TEMP_PREFIX} file name"),
                ),
            ));
        }
        let temp = if parent.is_root() {
            RelPath::from_trusted(temp_name.to_string())
        } else {
            RelPath::from_trusted(format!("{}/{temp_name}", parent.as_str()))
        };
        self.remove(&temp)
    }

    /// Removes every file named `.rein-tmp-…` and returns their names. Such a name can also be a
    /// person's own file: Rein's recovery does not call this, it removes only the temp files its
    /// journal recorded ([`Workspace::remove_temp`]).
    pub fn clean_stale_temps(&self) -> Result<Vec<RelPath>> {
        let temps = self.stale_temps()?;
        for temp in &temps {
            let (Some(parent), Some(name)) = (temp.parent(), temp.file_name()) else {
                continue;
            };
            let Some(dir) = self.open_dir_opt(&parent)? else {
                continue;
            };
            match beneath::unlink_at(dir.as_fd(), name) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                Err(e) => return Err(WorkspaceError::io("remove", temp, e)),
            }
            beneath::fsync(dir.as_fd())
                .map_err(|e| WorkspaceError::io("sync the folder of", temp, e))?;
        }
        Ok(temps)
    }
}

/// Unique within this process and, with the pid and clock, across processes.
fn unique_suffix() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{}-{nanos:x}-{count}", std::process::id())
}
