//! One pull of a model at a time: an advisory `flock` on `<file>.lock`. The kernel releases it
//! when its holder exits, however it exits, so there is no stale lock to guess about and no race
//! between creating the file and writing to it. The file holds the holder's process id only to
//! name it in the refusal; the lock itself is the flock.
//!
//! The holder removes the file before it lets go. A process that opened the old file just
//! before that finds, once it holds its flock, that the path no longer names the file it
//! locked, and starts again, so two holders never lock two different files.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::{ModelError, Result};
use crate::paths::with_suffix;

/// Holds the pull lock until dropped: the file is removed, then closed (which releases it).
#[derive(Debug)]
pub(crate) struct PullLock {
    path: PathBuf,
    _file: File,
}

impl Drop for PullLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Tries to take the lock on the file the path names now.
const ATTEMPTS: usize = 5;

/// Takes the pull lock of `model_file`, or says who holds it.
pub(crate) fn acquire(model: &str, model_file: &Path) -> Result<PullLock> {
    let path = with_suffix(model_file, "lock");
    let io = |source| ModelError::Io {
        path: path.display().to_string(),
        source,
    };
    for _ in 0..ATTEMPTS {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(held_by(model, &mut file)),
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        let locked = file.metadata().map_err(io)?;
        let still_named = std::fs::metadata(&path)
            .is_ok_and(|now| now.dev() == locked.dev() && now.ino() == locked.ino());
        if !still_named {
            // The previous holder removed it while this process was opening it.
            continue;
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        return Ok(PullLock { path, _file: file });
    }
    Err(ModelError::Refused(format!(
        "the pull lock {} changed hands {ATTEMPTS} times while this rein tried to take it; try again",
        path.display()
    )))
}

/// The refusal when another process holds the lock.
fn held_by(model: &str, file: &mut File) -> ModelError {
    let mut holder = String::new();
    let _ = file.read_to_string(&mut holder);
    let holder = holder.trim();
    let who = if holder.is_empty() {
        "another rein".to_string()
    } else {
        format!("another rein (process {holder})")
    };
    ModelError::Refused(format!("{who} is pulling {model}; wait for it to finish"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_blocks_and_is_free_once_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("m.gguf");
        let lock = acquire("m", &model).unwrap();
        // A second open file description contends like another process would.
        let e = acquire("m", &model).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("is pulling m"), "{text}");
        assert!(
            text.contains(&format!("process {}", std::process::id())),
            "{text}"
        );
        drop(lock);
        assert!(!with_suffix(&model, "lock").exists());
        let again = acquire("m", &model).unwrap();
        drop(again);
    }

    #[test]
    fn a_file_left_behind_by_a_dead_puller_is_no_lock() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("m.gguf");
        // What a killed puller leaves: the file, with a pid, but no flock.
        std::fs::write(with_suffix(&model, "lock"), "4294967294\n").unwrap();
        let lock = acquire("m", &model).unwrap();
        let written = std::fs::read_to_string(with_suffix(&model, "lock")).unwrap();
        assert_eq!(written.trim(), std::process::id().to_string());
        drop(lock);
    }
}
