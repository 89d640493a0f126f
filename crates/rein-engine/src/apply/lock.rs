//! One applier at a time per journal. Recovery decides an intent's fate from the file's
//! content, which is only sound if no other process is between intent and commit on it; an
//! advisory `flock` beside the journal gives that. The kernel drops it when a process dies, so a
//! crash never leaves it held.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Held for the duration of one apply or one recovery.
#[derive(Debug)]
pub struct ApplyLock {
    _file: File,
}

impl ApplyLock {
    /// Blocks until the lock beside `journal_path` is free. Applies take milliseconds, so
    /// waiting is the right thing to do.
    pub fn acquire(journal_path: &Path) -> std::io::Result<ApplyLock> {
        let path = lock_path(journal_path);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)?;
        loop {
            // SAFETY: flock on a descriptor we own; no memory is involved.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
            if rc == 0 {
                return Ok(ApplyLock { _file: file });
            }
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EINTR) {
                return Err(err);
            }
        }
    }
}

/// `<journal>.apply-lock`.
pub fn lock_path(journal_path: &Path) -> PathBuf {
    let mut name = journal_path.as_os_str().to_owned();
    name.push(".apply-lock");
    PathBuf::from(name)
}
