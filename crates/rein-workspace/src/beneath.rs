//! The filesystem half of confinement: every open happens *beneath* the workspace root's file
//! descriptor and never follows a link, so a symlink swapped in after [`crate::Workspace::resolve`]
//! checked a path cannot redirect a read or a write.
//!
//! On Linux 5.6+ this is one `openat2` call with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//! RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV`. Where the kernel lacks it (ENOSYS, or a seccomp
//! filter that answers EPERM), the same guarantee comes from a walk: one `openat` per component
//! with `O_NOFOLLOW | O_DIRECTORY`, refusing to cross into another mount. Paths reaching this
//! module already passed the lexical rules, so they hold no `..` to climb with.
//!
//! "Another mount" is decided by the mount id (statx `STATX_MNT_ID`, or `/proc/self/fdinfo` on
//! kernels before 5.8) as well as the device number: a bind mount of an outside folder lives on
//! the same filesystem, so its `st_dev` alone would let it pass. See [`Anchor`].
//!
//! Every system call goes through `rustix`, so this crate has no `unsafe` code.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

pub(crate) use rustix::fs::OFlags;
use rustix::fs::{AtFlags, FileType, Mode, RenameFlags, ResolveFlags, StatxFlags};
use rustix::io::{retry_on_intr, Errno};

use crate::confine::RelPath;

/// What kind of filesystem object an entry is, read without following links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    Other,
}

impl EntryKind {
    /// The lowercase word used in tool output.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Dir => "dir",
            EntryKind::Symlink => "symlink",
            EntryKind::Other => "other",
        }
    }
}

/// The few `stat` fields Rein uses.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stat {
    pub kind: EntryKind,
    pub size: u64,
    pub nlink: u64,
    pub mode: u32,
    pub dev: u64,
    pub ino: u64,
    pub mtime: i64,
}

impl Stat {
    // The field types differ between targets (u32 on some, u64 on others).
    #[allow(clippy::useless_conversion, clippy::unnecessary_fallible_conversions)]
    fn from_raw(st: &rustix::fs::Stat) -> Stat {
        let kind = match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => EntryKind::File,
            FileType::Directory => EntryKind::Dir,
            FileType::Symlink => EntryKind::Symlink,
            _ => EntryKind::Other,
        };
        Stat {
            kind,
            size: u64::try_from(st.st_size).unwrap_or(0),
            nlink: u64::from(st.st_nlink),
            mode: st.st_mode & 0o7777,
            dev: u64::from(st.st_dev),
            ino: u64::from(st.st_ino),
            mtime: i64::from(st.st_mtime),
        }
    }
}

/// Retries a call interrupted by a signal and turns the error into an [`io::Error`].
fn retry<T>(f: impl FnMut() -> rustix::io::Result<T>) -> io::Result<T> {
    retry_on_intr(f).map_err(io::Error::from)
}

/// `openat(dir, name, flags | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, mode)` for a single component.
pub(crate) fn openat_nofollow(
    dir: BorrowedFd<'_>,
    name: &str,
    flags: OFlags,
    mode: u32,
) -> io::Result<OwnedFd> {
    let flags = flags | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NOCTTY;
    let mode = Mode::from_raw_mode(mode);
    retry(|| rustix::fs::openat(dir, name, flags, mode))
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`: what the entry itself is, never its link target.
pub(crate) fn stat_at(dir: BorrowedFd<'_>, name: &str) -> io::Result<Stat> {
    let st = retry(|| rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW))?;
    Ok(Stat::from_raw(&st))
}

/// `fstat` on an open descriptor.
pub(crate) fn stat_fd(fd: BorrowedFd<'_>) -> io::Result<Stat> {
    let st = retry(|| rustix::fs::fstat(fd))?;
    Ok(Stat::from_raw(&st))
}

/// `fsync` a file or directory descriptor.
pub(crate) fn fsync(fd: BorrowedFd<'_>) -> io::Result<()> {
    retry(|| rustix::fs::fsync(fd))
}

/// `mkdirat(dir, name, 0o777)` (the umask applies).
pub(crate) fn mkdir_at(dir: BorrowedFd<'_>, name: &str) -> io::Result<()> {
    retry(|| rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o777)))
}

/// `renameat(dir, from, dir, to)`: atomically replaces `to` (a link at `to` is replaced, not
/// followed).
pub(crate) fn rename_at(dir: BorrowedFd<'_>, from: &str, to: &str) -> io::Result<()> {
    retry(|| rustix::fs::renameat(dir, from, dir, to))
}

/// `renameat2(dir, from, dir, to, RENAME_NOREPLACE)`: like [`rename_at`] but fails with EEXIST
/// when `to` exists, atomically, so publishing a new file never replaces one that appeared
/// after it was checked. Where the filesystem cannot do that (EINVAL) or the kernel lacks
/// `renameat2` (ENOSYS), it checks for `to` right before a plain rename: a window of one
/// system call.
pub(crate) fn rename_noreplace_at(dir: BorrowedFd<'_>, from: &str, to: &str) -> io::Result<()> {
    match retry_on_intr(|| rustix::fs::renameat_with(dir, from, dir, to, RenameFlags::NOREPLACE)) {
        Ok(()) => Ok(()),
        Err(Errno::INVAL) | Err(Errno::NOSYS) => match stat_at(dir, to) {
            Ok(_) => Err(io::Error::from(Errno::EXIST)),
            Err(e) if e.raw_os_error() == Some(Errno::NOENT.raw_os_error()) => {
                rename_at(dir, from, to)
            }
            Err(e) => Err(e),
        },
        Err(e) => Err(e.into()),
    }
}

/// `unlinkat(dir, name, 0)`: removes a file entry (a link is removed itself, never its target).
pub(crate) fn unlink_at(dir: BorrowedFd<'_>, name: &str) -> io::Result<()> {
    retry(|| rustix::fs::unlinkat(dir, name, AtFlags::empty()))
}

/// `fchmod` on an open descriptor.
pub(crate) fn chmod_fd(fd: BorrowedFd<'_>, mode: u32) -> io::Result<()> {
    retry(|| rustix::fs::fchmod(fd, Mode::from_raw_mode(mode)))
}

/// The names in a directory (except `.` and `..`), read through its descriptor. Names that are
/// not UTF-8 are returned as `Err(lossy)` so callers can count them without addressing them.
pub(crate) fn read_dir_names(dir: BorrowedFd<'_>) -> io::Result<Vec<Result<String, String>>> {
    // `read_from` reopens the directory itself ("."), so the listing starts at the beginning
    // whatever was read through `dir` before, and `dir`'s own offset is left alone.
    let mut entries = rustix::fs::Dir::read_from(dir)?;
    let mut names = Vec::new();
    while let Some(entry) = entries.read() {
        let entry = entry?;
        let bytes = entry.file_name().to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        names.push(match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s.to_string()),
            Err(_) => Err(OsStr::from_bytes(bytes).to_string_lossy().into_owned()),
        });
    }
    names.sort();
    Ok(names)
}

/// The kernel's name for an open descriptor (via /proc), used for the canonical-form check.
pub(crate) fn fd_path(fd: BorrowedFd<'_>) -> Option<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()
}

/// The id of the mount an open descriptor lives on: statx's `STATX_MNT_ID` (Linux 5.8+), else
/// the `mnt_id` line of `/proc/self/fdinfo` (Linux 3.15+). Both give the same id as
/// `/proc/self/mountinfo`.
pub(crate) fn mount_id(fd: BorrowedFd<'_>) -> io::Result<u64> {
    match retry_on_intr(|| rustix::fs::statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID)) {
        Ok(stx) if stx.stx_mask & StatxFlags::MNT_ID.bits() != 0 => return Ok(stx.stx_mnt_id),
        // statx missing or without mount ids (or filtered): ask /proc instead.
        Ok(_) | Err(Errno::NOSYS) | Err(Errno::PERM) | Err(Errno::INVAL) => {}
        Err(e) => return Err(e.into()),
    }
    mount_id_from_proc(fd)
}

/// The `mnt_id` line of `/proc/self/fdinfo/<fd>`.
fn mount_id_from_proc(fd: BorrowedFd<'_>) -> io::Result<u64> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd()))
        .map_err(|_| no_mount_ids())?;
    info.lines()
        .find_map(|line| line.strip_prefix("mnt_id:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(no_mount_ids)
}

fn no_mount_ids() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "this system reports no mount ids (statx lacks STATX_MNT_ID and /proc/self/fdinfo is \
         unreadable), so Rein cannot tell a bind mount from a folder; use Linux 5.8 or later, \
         or make /proc available",
    )
}

/// The mount id of the entry `name` in `dir` itself (not following a link), when statx can
/// tell (Linux 5.8+); `None` where it cannot. For cheap per-file checks in walks; opening the
/// file checks again in any case.
pub(crate) fn mount_id_at(dir: BorrowedFd<'_>, name: &str) -> io::Result<Option<u64>> {
    let flags = AtFlags::SYMLINK_NOFOLLOW | AtFlags::NO_AUTOMOUNT;
    match retry_on_intr(|| rustix::fs::statx(dir, name, flags, StatxFlags::MNT_ID)) {
        Ok(stx) if stx.stx_mask & StatxFlags::MNT_ID.bits() != 0 => Ok(Some(stx.stx_mnt_id)),
        Ok(_) | Err(Errno::NOSYS) | Err(Errno::PERM) | Err(Errno::INVAL) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Where the workspace root lives: its device and its mount. A folder or file on another
/// device *or another mount* is not part of the workspace, even on the same filesystem (a bind
/// mount of an outside folder has the root's `st_dev` but its own mount id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Anchor {
    pub dev: u64,
    pub mnt_id: u64,
}

impl Anchor {
    /// The anchor of an open directory (the workspace root).
    pub(crate) fn of(fd: BorrowedFd<'_>) -> io::Result<Anchor> {
        Ok(Anchor {
            dev: stat_fd(fd)?.dev,
            mnt_id: mount_id(fd)?,
        })
    }

    /// `Ok(())` when `fd` lies on the root's device and mount, EXDEV otherwise.
    pub(crate) fn check(&self, fd: BorrowedFd<'_>) -> io::Result<()> {
        if stat_fd(fd)?.dev != self.dev || mount_id(fd)? != self.mnt_id {
            return Err(io::Error::from(Errno::XDEV));
        }
        Ok(())
    }

    /// False when the entry `name` in `dir` is known to be on another mount (statx can tell);
    /// true when it is on the root's, or when this kernel cannot say without opening it.
    pub(crate) fn may_hold(&self, dir: BorrowedFd<'_>, name: &str) -> io::Result<bool> {
        Ok(mount_id_at(dir, name)?.is_none_or(|id| id == self.mnt_id))
    }
}

/// How files are opened beneath the root; decided once per workspace by probing the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMethod {
    /// `openat2` with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV (Linux 5.6+).
    Openat2,
    /// One `openat(O_NOFOLLOW | O_DIRECTORY)` per component, checking device and mount id.
    Walk,
}

fn openat2(dir: BorrowedFd<'_>, path: &str, flags: OFlags, mode: u32) -> io::Result<OwnedFd> {
    let flags = flags | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NOCTTY;
    // The kernel refuses a mode without O_CREAT.
    let mode = if flags.contains(OFlags::CREATE) {
        Mode::from_raw_mode(mode)
    } else {
        Mode::empty()
    };
    let resolve = ResolveFlags::BENEATH
        | ResolveFlags::NO_SYMLINKS
        | ResolveFlags::NO_MAGICLINKS
        | ResolveFlags::NO_XDEV;
    let mut attempts = 0;
    loop {
        match rustix::fs::openat2(dir, path, flags, mode, resolve) {
            Ok(fd) => return Ok(fd),
            Err(Errno::INTR) => continue,
            // EAGAIN: a concurrent rename raced the beneath check; the kernel asks us to retry.
            Err(Errno::AGAIN) if attempts < 16 => attempts += 1,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Probes whether `openat2` works here (it may be missing or blocked by seccomp).
pub(crate) fn probe(root: BorrowedFd<'_>) -> OpenMethod {
    match openat2(root, ".", OFlags::RDONLY | OFlags::DIRECTORY, 0) {
        Ok(_) => OpenMethod::Openat2,
        Err(_) => OpenMethod::Walk,
    }
}

/// Opens `rel` beneath `root` without following any link or crossing any mount, by `method`.
///
/// Errors keep the kernel's errno: ELOOP for a link met on the way (or at the leaf), EXDEV for
/// an escape or a mount crossing, ENOENT, ENOTDIR and the rest as usual.
pub(crate) fn open_beneath(
    root: BorrowedFd<'_>,
    anchor: &Anchor,
    method: OpenMethod,
    rel: &RelPath,
    flags: OFlags,
    mode: u32,
) -> io::Result<OwnedFd> {
    let path = if rel.is_root() { "." } else { rel.as_str() };
    if method == OpenMethod::Openat2 {
        match openat2(root, path, flags, mode) {
            Err(e) if e.raw_os_error() == Some(Errno::NOSYS.raw_os_error()) => {}
            other => return other,
        }
    }
    walk_open(root, anchor, rel, flags, mode)
}

/// The fallback: walk directory by directory with O_NOFOLLOW | O_DIRECTORY, checking that each
/// step (and the leaf) stays on the root's device and mount.
fn walk_open(
    root: BorrowedFd<'_>,
    anchor: &Anchor,
    rel: &RelPath,
    flags: OFlags,
    mode: u32,
) -> io::Result<OwnedFd> {
    let components: Vec<&str> = rel.components().collect();
    let Some((last, dirs)) = components.split_last() else {
        return openat_nofollow(root, ".", flags, mode);
    };
    let mut current: Option<OwnedFd> = None;
    for name in dirs {
        let dir = current.as_ref().map_or(root, |fd| fd.as_fd());
        let next = openat_nofollow(dir, name, OFlags::RDONLY | OFlags::DIRECTORY, 0)?;
        anchor.check(next.as_fd())?;
        current = Some(next);
    }
    let dir = current.as_ref().map_or(root, |fd| fd.as_fd());
    let fd = openat_nofollow(dir, last, flags, mode)?;
    anchor.check(fd.as_fd())?;
    Ok(fd)
}

/// Opens (creating as needed) the directory `rel` beneath `root`, one component at a time, never
/// through a link or into another mount. Each directory created is made durable by syncing its
/// parent.
pub(crate) fn ensure_dir_beneath(
    root: BorrowedFd<'_>,
    anchor: &Anchor,
    rel: &RelPath,
) -> io::Result<OwnedFd> {
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY;
    let mut current = openat_nofollow(root, ".", dir_flags, 0)?;
    for name in rel.components() {
        let dir = current.as_fd();
        let next = match openat_nofollow(dir, name, dir_flags, 0) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(Errno::NOENT.raw_os_error()) => {
                match mkdir_at(dir, name) {
                    Ok(()) => fsync(dir)?,
                    Err(e) if e.raw_os_error() == Some(Errno::EXIST.raw_os_error()) => {}
                    Err(e) => return Err(e),
                }
                openat_nofollow(dir, name, dir_flags, 0)?
            }
            Err(e) => return Err(e),
        };
        anchor.check(next.as_fd())?;
        current = next;
    }
    Ok(current)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The fallback for kernels before 5.8 must give the very id statx gives, or a workspace
    /// opened one way would see its own folders as foreign mounts.
    #[test]
    fn proc_and_statx_agree_on_mount_ids() {
        for path in ["/", "/proc", "/tmp", "."] {
            let Ok(fd) = rustix::fs::open(path, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
            else {
                continue;
            };
            let statx = rustix::fs::statx(&fd, "", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID);
            match statx {
                Ok(stx) if stx.stx_mask & StatxFlags::MNT_ID.bits() != 0 => {
                    assert_eq!(
                        mount_id_from_proc(fd.as_fd()).unwrap(),
                        stx.stx_mnt_id,
                        "{path}"
                    );
                }
                _ => eprintln!("statx gives no mount ids here; only /proc is used"),
            }
            assert_eq!(
                mount_id(fd.as_fd()).unwrap(),
                mount_id_from_proc(fd.as_fd()).unwrap()
            );
        }
        // /proc is a mount of its own: the ids differ from the root's.
        let root = rustix::fs::open("/", OFlags::RDONLY, Mode::empty()).unwrap();
        let proc = rustix::fs::open("/proc", OFlags::RDONLY, Mode::empty()).unwrap();
        assert_ne!(
            mount_id(root.as_fd()).unwrap(),
            mount_id(proc.as_fd()).unwrap()
        );
    }
}
