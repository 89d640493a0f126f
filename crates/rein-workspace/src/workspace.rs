//! [`Workspace`]: the one folder a run may touch, held as an open directory descriptor.
//!
//! Every read, listing and write in Rein goes through a `Workspace`. It never hands out an
//! absolute path to a file inside it (only the root, as text, for display), so other crates
//! cannot bypass confinement by accident.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::beneath::{self, Anchor, EntryKind, OFlags, OpenMethod, Stat};
use crate::confine::{RelPath, TEMP_PREFIX};
use crate::error::{ConfinementError, Result, WorkspaceError};

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub path: RelPath,
    pub kind: EntryKind,
    /// See [`file_size`].
    pub size: Option<u64>,
}

/// A directory's entries, plus names that exist but cannot be addressed (not UTF-8, or
/// breaking a confinement rule such as a device name), so listings never hide them silently.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub entries: Vec<DirEntry>,
    pub unaddressable: Vec<String>,
}

/// Metadata of one file or folder, read without following links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    pub path: RelPath,
    pub kind: EntryKind,
    /// See [`file_size`].
    pub size: Option<u64>,
    /// Permission bits, e.g. 0o644.
    pub mode: u32,
    /// Last modification, seconds since the Unix epoch.
    pub modified: i64,
}

/// The size in bytes of a file with one name; `None` for a folder or link, and for a file with
/// more than one name (a hard link): the workspace opens none, and its size may be that of a
/// file policy protects under its other name.
pub(crate) fn file_size(stat: &Stat) -> Option<u64> {
    (stat.kind == EntryKind::File && stat.nlink == 1).then_some(stat.size)
}

/// A confined folder. Cheap to share by reference; all methods take `&self`.
#[derive(Debug)]
pub struct Workspace {
    root: OwnedFd,
    anchor: Anchor,
    canonical_root: PathBuf,
    identity: String,
    method: OpenMethod,
}

impl Workspace {
    /// Opens `root` (which must be an existing folder). Links in `root` itself are resolved once
    /// here, by the person's choice of folder; inside it, no link is ever followed.
    ///
    /// Refuses a folder that is, or lies inside, git's own data: a `.git` folder or a bare
    /// repository (a folder with `HEAD`, `objects/` and `refs/`), where a model could write
    /// hooks that git later runs as programs.
    pub fn open(root: &Path) -> Result<Workspace> {
        let open_err = |source: io::Error| WorkspaceError::OpenRoot {
            path: root.display().to_string(),
            source,
        };
        let canonical_root = std::fs::canonicalize(root).map_err(open_err)?;
        let refused = |why: String| WorkspaceError::RefusedRoot {
            path: canonical_root.display().to_string(),
            why,
        };
        if let Some(why) = git_refusal(&canonical_root) {
            return Err(refused(why));
        }
        let fd = rustix::io::retry_on_intr(|| {
            rustix::fs::open(
                &canonical_root,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOCTTY,
                rustix::fs::Mode::empty(),
            )
        })
        .map_err(|e| open_err(e.into()))?;
        let stat = beneath::stat_fd(fd.as_fd()).map_err(open_err)?;
        if stat.kind != EntryKind::Dir {
            return Err(open_err(io::Error::from_raw_os_error(libc::ENOTDIR)));
        }
        let anchor = Anchor::of(fd.as_fd()).map_err(|e| refused(e.to_string()))?;
        let method = beneath::probe(fd.as_fd());
        let identity = identity_of(&canonical_root, &stat);
        Ok(Workspace {
            root: fd,
            anchor,
            canonical_root,
            identity,
            method,
        })
    }

    /// Like [`Workspace::open`] but forcing the component walk instead of `openat2`, so tests
    /// can exercise the fallback on kernels that have `openat2`.
    pub fn open_with_walk_fallback(root: &Path) -> Result<Workspace> {
        let mut ws = Workspace::open(root)?;
        ws.method = OpenMethod::Walk;
        Ok(ws)
    }

    /// Which opening method this workspace uses (for diagnostics).
    pub fn open_method(&self) -> OpenMethod {
        self.method
    }

    /// The workspace's identity, which is also how its root is shown to a person: journals
    /// scope changes, replays and approvals by it. Not for opening files: use the methods of
    /// `Workspace`, which stay beneath the root.
    ///
    /// For a root whose canonical path is UTF-8 it is that path, exactly as before, so
    /// existing journals keep matching. Any other root gets `non-UTF-8 path <path with the
    /// bytes that are not UTF-8, "%" and control characters percent-encoded> (device D, inode
    /// I)`: lossless, and never starting with "/", so it can equal neither another folder's
    /// path nor the identity of another non-UTF-8 folder.
    pub fn display_root(&self) -> String {
        self.identity.clone()
    }

    /// The single gate for model-supplied paths: checks the lexical rules, then walks the
    /// existing part of the path component by component refusing links (symbolic and hard),
    /// then checks that the canonical form of what exists stays inside the workspace.
    ///
    /// A path that does not exist yet resolves fine (it may be about to be created). Passing
    /// here is not a licence to follow links later: every access re-opens beneath the root
    /// without following any, so a link swapped in afterwards is refused then too.
    pub fn resolve(&self, model_path: &str) -> Result<RelPath, ConfinementError> {
        let rel = RelPath::parse(model_path)?;
        self.check_links(&rel)?;
        Ok(rel)
    }

    /// The filesystem rules of [`Workspace::resolve`] for an already-parsed path.
    pub fn check_links(&self, rel: &RelPath) -> Result<(), ConfinementError> {
        let components: Vec<&str> = rel.components().collect();
        let mut dir: Option<OwnedFd> = None;
        let mut prefix = RelPath::root();
        for (i, name) in components.iter().enumerate() {
            let here = dir.as_ref().map_or(self.root.as_fd(), |fd| fd.as_fd());
            prefix = prefix.join(name)?;
            let stat = match beneath::stat_at(here, name) {
                Ok(stat) => stat,
                // Nothing more exists: the rest will be created beneath what we checked.
                Err(_) => break,
            };
            // A mount point at any position (the leaf included): statx tells without opening.
            match self.anchor.may_hold(here, name) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(ConfinementError::MountPoint {
                        path: prefix.to_string(),
                    })
                }
                // Vanished or unreadable: like a failed stat, the open will check again.
                Err(_) => break,
            }
            let is_last = i + 1 == components.len();
            match stat.kind {
                EntryKind::Symlink => {
                    return Err(ConfinementError::Link {
                        path: prefix.to_string(),
                        kind: "symbolic link",
                    })
                }
                EntryKind::File if stat.nlink > 1 => {
                    return Err(ConfinementError::Link {
                        path: prefix.to_string(),
                        kind: "hard link (a file with more than one name, possibly outside)",
                    })
                }
                EntryKind::Dir if !is_last => {
                    let next =
                        beneath::openat_nofollow(here, name, OFlags::RDONLY | OFlags::DIRECTORY, 0)
                            .map_err(|e| self.map_confinement(&prefix, &e))?;
                    // Another device or mount (a bind mount of an outside folder included).
                    if self.anchor.check(next.as_fd()).is_err() {
                        return Err(ConfinementError::MountPoint {
                            path: prefix.to_string(),
                        });
                    }
                    dir = Some(next);
                }
                // A file in the middle (the open will fail with "not a folder") or the leaf.
                _ => break,
            }
        }
        // Canonical-form check: the deepest folder we reached must still be the root or lie
        // under it (a bind mount or a concurrent move would show up here).
        let deepest = dir.as_ref().map_or(self.root.as_fd(), |fd| fd.as_fd());
        if let Some(actual) = beneath::fd_path(deepest) {
            if !actual.starts_with(&self.canonical_root) {
                return Err(ConfinementError::Escapes {
                    path: rel.to_string(),
                });
            }
        }
        Ok(())
    }

    fn map_confinement(&self, rel: &RelPath, err: &io::Error) -> ConfinementError {
        match err.raw_os_error() {
            Some(libc::ELOOP) => ConfinementError::Link {
                path: rel.to_string(),
                kind: "symbolic link",
            },
            _ => ConfinementError::Escapes {
                path: rel.to_string(),
            },
        }
    }

    /// Opens `rel` beneath the root with `flags`, mapping link and escape errors to the
    /// confinement rule they broke.
    pub(crate) fn open_raw(&self, rel: &RelPath, flags: OFlags) -> io::Result<OwnedFd> {
        beneath::open_beneath(self.root.as_fd(), &self.anchor, self.method, rel, flags, 0)
    }

    /// Turns an open error into the most useful [`WorkspaceError`].
    pub(crate) fn open_error(
        &self,
        op: &'static str,
        rel: &RelPath,
        err: io::Error,
    ) -> WorkspaceError {
        match err.raw_os_error() {
            Some(libc::ELOOP) => WorkspaceError::Confinement(ConfinementError::Link {
                path: self
                    .first_link(rel)
                    .unwrap_or_else(|| rel.clone())
                    .to_string(),
                kind: "symbolic link",
            }),
            // An escape or a mount crossing; the lexical walk tells which when it can.
            Some(libc::EXDEV) => WorkspaceError::Confinement(match self.check_links(rel) {
                Err(e @ ConfinementError::MountPoint { .. }) => e,
                _ => ConfinementError::Escapes {
                    path: rel.to_string(),
                },
            }),
            Some(libc::ENOENT) => WorkspaceError::NotFound { path: rel.clone() },
            // The walk fallback meets a link where it expects a folder as "not a folder".
            Some(libc::ENOTDIR) => match self.first_link(rel) {
                Some(link) => WorkspaceError::Confinement(ConfinementError::Link {
                    path: link.to_string(),
                    kind: "symbolic link",
                }),
                None => WorkspaceError::io(op, rel, err),
            },
            _ => WorkspaceError::io(op, rel, err),
        }
    }

    /// The first component of `rel` that is a symbolic link, for precise error messages.
    fn first_link(&self, rel: &RelPath) -> Option<RelPath> {
        match self.check_links(rel) {
            Err(ConfinementError::Link { path, .. }) => RelPath::parse(&path).ok(),
            _ => None,
        }
    }

    /// Opens a regular file for reading; `Ok(None)` when nothing is there.
    pub(crate) fn open_file(&self, rel: &RelPath) -> Result<Option<(File, Stat)>> {
        // O_NONBLOCK: opening a FIFO must not hang; regular files ignore the flag.
        let fd = match self.open_raw(rel, OFlags::RDONLY | OFlags::NONBLOCK) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(None),
            // A file where a folder should be means "absent", unless it is a link.
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) && self.first_link(rel).is_none() => {
                return Ok(None)
            }
            Err(e) => return Err(self.open_error("open", rel, e)),
        };
        let stat =
            beneath::stat_fd(fd.as_fd()).map_err(|e| WorkspaceError::io("inspect", rel, e))?;
        match stat.kind {
            EntryKind::File if stat.nlink > 1 => Err(ConfinementError::Link {
                path: rel.to_string(),
                kind: "hard link (a file with more than one name, possibly outside)",
            }
            .into()),
            EntryKind::File => Ok(Some((File::from(fd), stat))),
            kind => Err(WorkspaceError::NotAFile {
                path: rel.clone(),
                kind: kind.as_str(),
            }),
        }
    }

    /// The whole content of a file, `None` if it does not exist.
    pub fn read_bytes(&self, rel: &RelPath) -> Result<Option<Vec<u8>>> {
        let Some((mut file, stat)) = self.open_file(rel)? else {
            return Ok(None);
        };
        let mut bytes = Vec::with_capacity(usize::try_from(stat.size).unwrap_or(0));
        file.read_to_end(&mut bytes)
            .map_err(|e| WorkspaceError::io("read", rel, e))?;
        Ok(Some(bytes))
    }

    /// The whole content of a file of at most `max` bytes; `None` if it does not exist. The
    /// size is checked on the open file before anything is read, so refusing a huge file costs
    /// nothing, and a file that grows past `max` while it is read is refused too
    /// ([`WorkspaceError::TooLarge`]).
    pub fn read_bytes_capped(&self, rel: &RelPath, max: u64) -> Result<Option<Vec<u8>>> {
        let Some((file, stat)) = self.open_file(rel)? else {
            return Ok(None);
        };
        let too_large = |size: u64| WorkspaceError::TooLarge {
            path: rel.clone(),
            size,
            max,
        };
        if stat.size > max {
            return Err(too_large(stat.size));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(stat.size).unwrap_or(0));
        file.take(max.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| WorkspaceError::io("read", rel, e))?;
        if bytes.len() as u64 > max {
            return Err(too_large(bytes.len() as u64));
        }
        Ok(Some(bytes))
    }

    /// At most `max` bytes from the start of a file and its full size; `None` if absent. Tools
    /// use this so a huge file never has to fit in memory.
    pub fn read_prefix(&self, rel: &RelPath, max: u64) -> Result<Option<(Vec<u8>, u64)>> {
        let Some((file, stat)) = self.open_file(rel)? else {
            return Ok(None);
        };
        let mut bytes = Vec::new();
        file.take(max)
            .read_to_end(&mut bytes)
            .map_err(|e| WorkspaceError::io("read", rel, e))?;
        Ok(Some((bytes, stat.size)))
    }

    /// Lowercase hex SHA-256 of a file's content, `None` if it does not exist. Streams, so any
    /// size works, in time proportional to the size: for a file a model names, use
    /// [`Workspace::sha256_capped`].
    pub fn sha256_of(&self, rel: &RelPath) -> Result<Option<String>> {
        self.sha256_within(rel, u64::MAX)
    }

    /// Like [`Workspace::sha256_of`] for a file of at most `max` bytes; a larger one is
    /// [`WorkspaceError::TooLarge`], told from the open file's size before anything is read
    /// (and counted while reading, in case it grows). Hashing a 100 GiB sparse file takes
    /// minutes and a 16 TiB one hours: a tool must not hang on a file it was merely named.
    pub fn sha256_capped(&self, rel: &RelPath, max: u64) -> Result<Option<String>> {
        self.sha256_within(rel, max)
    }

    fn sha256_within(&self, rel: &RelPath, max: u64) -> Result<Option<String>> {
        let Some((file, stat)) = self.open_file(rel)? else {
            return Ok(None);
        };
        let too_large = |size: u64| WorkspaceError::TooLarge {
            path: rel.clone(),
            size,
            max,
        };
        if stat.size > max {
            return Err(too_large(stat.size));
        }
        let mut file = file.take(max.saturating_add(1));
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 64 * 1024];
        let mut total = 0u64;
        loop {
            let n = file
                .read(&mut buf)
                .map_err(|e| WorkspaceError::io("read", rel, e))?;
            if n == 0 {
                break;
            }
            total += n as u64;
            if total > max {
                return Err(too_large(total));
            }
            hasher.update(&buf[..n]);
        }
        Ok(Some(hex::encode(hasher.finalize())))
    }

    /// Metadata of a file or folder (not following links); `None` if absent.
    pub fn info(&self, rel: &RelPath) -> Result<Option<FileInfo>> {
        let stat = if rel.is_root() {
            beneath::stat_fd(self.root.as_fd())
                .map_err(|e| WorkspaceError::io("inspect", rel, e))?
        } else {
            let Some(parent) = self.open_dir_opt(&rel.parent().unwrap_or_default())? else {
                return Ok(None);
            };
            let name = rel.file_name().unwrap_or_default();
            match beneath::stat_at(parent.as_fd(), name) {
                Ok(stat) => stat,
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(None),
                Err(e) => return Err(WorkspaceError::io("inspect", rel, e)),
            }
        };
        Ok(Some(FileInfo {
            path: rel.clone(),
            kind: stat.kind,
            size: file_size(&stat),
            mode: stat.mode,
            modified: stat.mtime,
        }))
    }

    /// True when something (of any kind, links included) exists at `rel`.
    pub fn exists(&self, rel: &RelPath) -> Result<bool> {
        Ok(self.info(rel)?.is_some())
    }

    /// Opens a directory beneath the root; `None` if absent.
    pub(crate) fn open_dir_opt(&self, rel: &RelPath) -> Result<Option<OwnedFd>> {
        match self.open_raw(rel, OFlags::RDONLY | OFlags::DIRECTORY) {
            Ok(fd) => Ok(Some(fd)),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) && self.first_link(rel).is_none() => {
                Err(WorkspaceError::NotADirectory { path: rel.clone() })
            }
            Err(e) => Err(self.open_error("open folder", rel, e)),
        }
    }

    /// The entries of a folder, sorted by name, without Rein's temp files.
    pub fn list_dir(&self, rel: &RelPath) -> Result<Listing> {
        let dir = self
            .open_dir_opt(rel)?
            .ok_or_else(|| WorkspaceError::NotFound { path: rel.clone() })?;
        list_fd(dir.as_fd(), rel, &self.anchor).map_err(|e| WorkspaceError::io("list", rel, e))
    }

    pub(crate) fn root_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.root.as_fd()
    }

    /// The root's device and mount: nothing on another belongs to the workspace.
    pub(crate) fn root_anchor(&self) -> &Anchor {
        &self.anchor
    }
}

/// Why a folder may not be a workspace because it is git's own data, or `None`. A `.git`
/// folder is recognised by name (any case) at the root or above it; a bare repository, only
/// when it has all of `HEAD` (a file), `objects/` and `refs/` (folders), as git itself checks,
/// so an ordinary folder is never refused by accident.
fn git_refusal(canonical_root: &Path) -> Option<String> {
    for dir in canonical_root.ancestors() {
        let relation = if dir == canonical_root {
            "it is".to_string()
        } else {
            format!("it lies inside {}, which is", dir.display())
        };
        let is_dot_git = dir
            .file_name()
            .is_some_and(|n| n.as_bytes().eq_ignore_ascii_case(b".git"));
        if is_dot_git {
            return Some(format!(
                "{relation} a .git folder, git's own data, where a changed hook or config runs \
                 as a program the next time git is used; open the repository's working folder \
                 (the one that contains .git) instead"
            ));
        }
        if is_bare_repository(dir) {
            return Some(format!(
                "{relation} a bare git repository (it has HEAD, objects/ and refs/), where a \
                 changed hook or config runs as a program the next time git is used; open a \
                 working copy (git clone) instead"
            ));
        }
    }
    None
}

fn is_bare_repository(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
}

/// See [`Workspace::display_root`].
fn identity_of(canonical_root: &Path, stat: &Stat) -> String {
    match canonical_root.to_str() {
        Some(text) => text.to_string(),
        None => format!(
            "non-UTF-8 path {} (device {}, inode {})",
            percent_encode(canonical_root.as_os_str().as_bytes()),
            stat.dev,
            stat.ino
        ),
    }
}

/// Keeps UTF-8 text readable and percent-encodes everything else, "%" itself and control
/// characters included, so different byte strings never encode alike.
fn percent_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '%' || c.is_control() {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Lists an open directory. Temp files are left out (see [`crate::Workspace::stale_temps`]).
/// A mount point (a bind-mounted file or folder, possibly of the outside) is listed as
/// unaddressable: its name shows, nothing of what is mounted there.
pub(crate) fn list_fd(
    dir: std::os::fd::BorrowedFd<'_>,
    rel: &RelPath,
    anchor: &Anchor,
) -> io::Result<Listing> {
    let mut listing = Listing::default();
    for name in beneath::read_dir_names(dir)? {
        let name = match name {
            Ok(name) => name,
            Err(lossy) => {
                listing.unaddressable.push(lossy);
                continue;
            }
        };
        if name.starts_with(TEMP_PREFIX) {
            continue;
        }
        let Ok(path) = rel.join(&name) else {
            listing.unaddressable.push(name);
            continue;
        };
        let stat = match beneath::stat_at(dir, &name) {
            Ok(stat) => stat,
            // Vanished between readdir and stat: it is simply not there any more.
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
            Err(e) => return Err(e),
        };
        match anchor.may_hold(dir, &name) {
            Ok(true) => {}
            Ok(false) => {
                listing.unaddressable.push(name);
                continue;
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
            Err(e) => return Err(e),
        }
        listing.entries.push(DirEntry {
            name,
            path,
            kind: stat.kind,
            size: file_size(&stat),
        });
    }
    Ok(listing)
}

impl Default for RelPath {
    fn default() -> Self {
        RelPath::root()
    }
}
