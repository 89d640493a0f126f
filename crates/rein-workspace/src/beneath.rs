//! The filesystem half of confinement: every open happens *beneath* the workspace root's file
//! descriptor and never follows a link, so a symlink swapped in after [`crate::Workspace::resolve`]
//! checked a path cannot redirect a read or a write.
//!
//! On Linux 5.6+ this is one `openat2` call with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//! RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV`. Where the kernel lacks it (ENOSYS, or a seccomp
//! filter that answers EPERM), the same guarantee comes from a walk: one `openat` per component
//! with `O_NOFOLLOW | O_DIRECTORY`, refusing to cross into another filesystem. Paths reaching
//! this module already passed the lexical rules, so they hold no `..` to climb with.
//!
//! This is the only module with `unsafe` code; each block is one libc call on owned buffers.

use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

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
    pub mtime: i64,
}

impl Stat {
    fn from_raw(st: &libc::stat) -> Stat {
        let kind = match st.st_mode & libc::S_IFMT {
            libc::S_IFREG => EntryKind::File,
            libc::S_IFDIR => EntryKind::Dir,
            libc::S_IFLNK => EntryKind::Symlink,
            _ => EntryKind::Other,
        };
        Stat {
            kind,
            size: u64::try_from(st.st_size).unwrap_or(0),
            #[allow(clippy::useless_conversion)] // nlink_t is u32 on some targets
            nlink: u64::from(st.st_nlink),
            mode: st.st_mode & 0o7777,
            #[allow(clippy::useless_conversion)]
            dev: u64::from(st.st_dev),
            mtime: st.st_mtime,
        }
    }
}

fn cstr(name: &str) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Retries a call interrupted by a signal.
fn retry<T>(mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match f() {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            other => return other,
        }
    }
}

/// `openat(dir, name, flags | O_CLOEXEC | O_NOFOLLOW, mode)` for a single component.
pub(crate) fn openat_nofollow(
    dir: BorrowedFd<'_>,
    name: &str,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<OwnedFd> {
    let c = cstr(name)?;
    let flags = flags | libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_NOCTTY;
    retry(|| {
        // SAFETY: `c` is a valid NUL-terminated string; the fd is borrowed and open.
        let fd = check(unsafe {
            libc::openat(dir.as_raw_fd(), c.as_ptr(), flags, libc::c_uint::from(mode))
        })?;
        // SAFETY: openat returned a fresh descriptor that nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    })
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`: what the entry itself is, never its link target.
pub(crate) fn stat_at(dir: BorrowedFd<'_>, name: &str) -> io::Result<Stat> {
    let c = cstr(name)?;
    // SAFETY: zeroed `stat` is a valid value for a plain C struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    retry(|| {
        // SAFETY: valid string and out-pointer; the fd is borrowed and open.
        check(unsafe {
            libc::fstatat(
                dir.as_raw_fd(),
                c.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        })
    })?;
    Ok(Stat::from_raw(&st))
}

/// `fstat` on an open descriptor.
pub(crate) fn stat_fd(fd: BorrowedFd<'_>) -> io::Result<Stat> {
    // SAFETY: zeroed `stat` is a valid value for a plain C struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer; the fd is borrowed and open.
    check(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) })?;
    Ok(Stat::from_raw(&st))
}

/// `fsync` a file or directory descriptor.
pub(crate) fn fsync(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: plain call on an open descriptor.
    retry(|| check(unsafe { libc::fsync(fd.as_raw_fd()) }).map(|_| ()))
}

/// `mkdirat(dir, name, 0o777)` (the umask applies).
pub(crate) fn mkdir_at(dir: BorrowedFd<'_>, name: &str) -> io::Result<()> {
    let c = cstr(name)?;
    // SAFETY: valid string; the fd is borrowed and open.
    check(unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), 0o777) }).map(|_| ())
}

/// `renameat(dir, from, dir, to)`: atomically replaces `to` (a link at `to` is replaced, not
/// followed).
pub(crate) fn rename_at(dir: BorrowedFd<'_>, from: &str, to: &str) -> io::Result<()> {
    let (f, t) = (cstr(from)?, cstr(to)?);
    // SAFETY: valid strings; the fd is borrowed and open.
    check(unsafe { libc::renameat(dir.as_raw_fd(), f.as_ptr(), dir.as_raw_fd(), t.as_ptr()) })
        .map(|_| ())
}

/// `unlinkat(dir, name, 0)`: removes a file entry (a link is removed itself, never its target).
pub(crate) fn unlink_at(dir: BorrowedFd<'_>, name: &str) -> io::Result<()> {
    let c = cstr(name)?;
    // SAFETY: valid string; the fd is borrowed and open.
    check(unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) }).map(|_| ())
}

/// `fchmod` on an open descriptor.
pub(crate) fn chmod_fd(fd: BorrowedFd<'_>, mode: u32) -> io::Result<()> {
    // SAFETY: plain call on an open descriptor.
    check(unsafe { libc::fchmod(fd.as_raw_fd(), mode as libc::mode_t) }).map(|_| ())
}

/// The names in a directory (except `.` and `..`), read through its descriptor. Names that are
/// not UTF-8 are returned as `Err(lossy)` so callers can count them without addressing them.
pub(crate) fn read_dir_names(dir: BorrowedFd<'_>) -> io::Result<Vec<Result<String, String>>> {
    // fdopendir takes ownership of the descriptor it gets, so give it a duplicate.
    let dup = dir.try_clone_to_owned()?;
    let raw: RawFd = std::os::fd::IntoRawFd::into_raw_fd(dup);
    // SAFETY: `raw` is an open directory descriptor we own; on success DIR owns it.
    let dirp = unsafe { libc::fdopendir(raw) };
    if dirp.is_null() {
        let err = io::Error::last_os_error();
        // SAFETY: fdopendir failed, so we still own `raw`.
        unsafe { libc::close(raw) };
        return Err(err);
    }
    // A duplicate shares the file offset; start from the beginning whatever happened before.
    // SAFETY: `dirp` is a valid DIR*.
    unsafe { libc::rewinddir(dirp) };
    let mut names = Vec::new();
    loop {
        // SAFETY: `dirp` is valid; errno is reset so end-of-directory can be told from errors.
        unsafe { *libc::__errno_location() = 0 };
        // SAFETY: `dirp` is valid until closedir below.
        let entry = unsafe { libc::readdir(dirp) };
        if entry.is_null() {
            let err = io::Error::last_os_error();
            // SAFETY: `dirp` is valid and closed exactly once.
            unsafe { libc::closedir(dirp) };
            if err.raw_os_error().unwrap_or(0) != 0 {
                return Err(err);
            }
            break;
        }
        // SAFETY: readdir returned a valid dirent whose d_name is NUL-terminated.
        let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
        let bytes = name.to_bytes();
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

/// How files are opened beneath the root; decided once per workspace by probing the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMethod {
    /// `openat2` with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS (Linux 5.6+).
    Openat2,
    /// One `openat(O_NOFOLLOW | O_DIRECTORY)` per component.
    Walk,
}

#[cfg(target_os = "linux")]
fn openat2(
    dir: BorrowedFd<'_>,
    path: &str,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<OwnedFd> {
    let c = cstr(path)?;
    // SAFETY: zeroed open_how is valid (all-integer struct); fields are set below.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_NOCTTY) as u64;
    how.mode = if flags & libc::O_CREAT != 0 {
        u64::from(mode)
    } else {
        0
    };
    how.resolve = libc::RESOLVE_BENEATH
        | libc::RESOLVE_NO_SYMLINKS
        | libc::RESOLVE_NO_MAGICLINKS
        | libc::RESOLVE_NO_XDEV;
    let mut attempts = 0;
    loop {
        // SAFETY: valid string, valid open_how pointer and its exact size.
        let ret = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir.as_raw_fd(),
                c.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if ret >= 0 {
            let fd = RawFd::try_from(ret).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
            // SAFETY: the syscall returned a fresh descriptor that nothing else owns.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        let err = io::Error::last_os_error();
        // EAGAIN: a concurrent rename raced the beneath check; the kernel asks us to retry.
        let again = matches!(err.raw_os_error(), Some(libc::EINTR) | Some(libc::EAGAIN));
        if again && attempts < 16 {
            attempts += 1;
            continue;
        }
        return Err(err);
    }
}

/// Probes whether `openat2` works here (it may be missing or blocked by seccomp).
pub(crate) fn probe(root: BorrowedFd<'_>) -> OpenMethod {
    #[cfg(target_os = "linux")]
    {
        match openat2(root, ".", libc::O_RDONLY | libc::O_DIRECTORY, 0) {
            Ok(_) => OpenMethod::Openat2,
            Err(_) => OpenMethod::Walk,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = root;
        OpenMethod::Walk
    }
}

/// Opens `rel` beneath `root` without following any link, by `method`.
///
/// Errors keep the kernel's errno: ELOOP for a link met on the way (or at the leaf), EXDEV for
/// an escape or a mount crossing, ENOENT, ENOTDIR and the rest as usual.
pub(crate) fn open_beneath(
    root: BorrowedFd<'_>,
    root_dev: u64,
    method: OpenMethod,
    rel: &RelPath,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<OwnedFd> {
    let path = if rel.is_root() { "." } else { rel.as_str() };
    #[cfg(target_os = "linux")]
    if method == OpenMethod::Openat2 {
        match openat2(root, path, flags, mode) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {}
            other => return other,
        }
    }
    let _ = (method, path);
    walk_open(root, root_dev, rel, flags, mode)
}

/// The fallback: walk directory by directory with O_NOFOLLOW | O_DIRECTORY.
fn walk_open(
    root: BorrowedFd<'_>,
    root_dev: u64,
    rel: &RelPath,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<OwnedFd> {
    let components: Vec<&str> = rel.components().collect();
    let Some((last, dirs)) = components.split_last() else {
        return openat_nofollow(root, ".", flags, mode);
    };
    let mut current: Option<OwnedFd> = None;
    for name in dirs {
        let dir = current.as_ref().map_or(root, |fd| fd.as_fd());
        let next = openat_nofollow(dir, name, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
        if stat_fd(next.as_fd())?.dev != root_dev {
            return Err(io::Error::from_raw_os_error(libc::EXDEV));
        }
        current = Some(next);
    }
    let dir = current.as_ref().map_or(root, |fd| fd.as_fd());
    let fd = openat_nofollow(dir, last, flags, mode)?;
    if stat_fd(fd.as_fd())?.dev != root_dev {
        return Err(io::Error::from_raw_os_error(libc::EXDEV));
    }
    Ok(fd)
}

/// Opens (creating as needed) the directory `rel` beneath `root`, one component at a time, never
/// through a link. Each directory created is made durable by syncing its parent.
pub(crate) fn ensure_dir_beneath(
    root: BorrowedFd<'_>,
    root_dev: u64,
    rel: &RelPath,
) -> io::Result<OwnedFd> {
    let mut current = openat_nofollow(root, ".", libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
    for name in rel.components() {
        let dir = current.as_fd();
        let next = match openat_nofollow(dir, name, libc::O_RDONLY | libc::O_DIRECTORY, 0) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                match mkdir_at(dir, name) {
                    Ok(()) => fsync(dir)?,
                    Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
                    Err(e) => return Err(e),
                }
                openat_nofollow(dir, name, libc::O_RDONLY | libc::O_DIRECTORY, 0)?
            }
            Err(e) => return Err(e),
        };
        if stat_fd(next.as_fd())?.dev != root_dev {
            return Err(io::Error::from_raw_os_error(libc::EXDEV));
        }
        current = next;
    }
    Ok(current)
}
