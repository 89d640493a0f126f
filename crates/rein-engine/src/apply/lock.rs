//! One applier at a time per journal. Recovery decides an intent's fate from the file's
//! content, which is only sound if no other process is between intent and commit on it; an
//! advisory `flock` beside the journal gives that. The kernel drops it when a process dies, so a
//! crash never leaves it held.
//!
//! Applies take milliseconds, so a process waits for the lock, but not forever: after
//! [`APPLY_LOCK_WAIT`] it gives up with a message naming the holder, which writes its pid,
//! command line and start time into the lock file while it holds the lock.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// How long a process waits for another one's apply or recovery before giving up.
pub const APPLY_LOCK_WAIT: Duration = Duration::from_secs(30);
/// How often a waiting process tries the lock again.
const POLL: Duration = Duration::from_millis(20);
/// The longest command line written into the lock file.
const MAX_COMMAND_CHARS: usize = 200;
/// The most of the lock file read back for a message.
const MAX_HOLDER_BYTES: u64 = 1024;

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("could not lock {path} for applying: {cause}; check that the data folder is writable")]
    Io { path: String, cause: std::io::Error },
    #[error(
        "another Rein process is applying or recovering changes and has held {path} for more \
         than the {waited_secs} s this one waits ({holder}); nothing was changed: let it finish \
         and try again, or stop that process if it is stuck"
    )]
    Busy {
        path: String,
        /// Who holds it, as the holder wrote it: pid, command and since when.
        holder: String,
        waited_secs: u64,
    },
}

/// Held for the duration of one apply or one recovery.
#[derive(Debug)]
pub struct ApplyLock {
    file: File,
}

impl ApplyLock {
    /// Takes the lock beside `journal_path`, waiting at most [`APPLY_LOCK_WAIT`].
    pub fn acquire(journal_path: &Path) -> Result<ApplyLock, LockError> {
        ApplyLock::acquire_within(journal_path, APPLY_LOCK_WAIT)
    }

    /// Takes the lock beside `journal_path`, waiting at most `wait`.
    pub fn acquire_within(journal_path: &Path, wait: Duration) -> Result<ApplyLock, LockError> {
        let path = lock_path(journal_path);
        let io = |cause| LockError::Io {
            path: path.display().to_string(),
            cause,
        };
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(io)?;
        let deadline = Instant::now() + wait;
        loop {
            // SAFETY: flock on a descriptor we own; no memory is involved.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc == 0 {
                let lock = ApplyLock { file };
                // Who holds it is only for messages: a failure to say so is no reason to fail.
                let _ = lock.write_holder();
                return Ok(lock);
            }
            let err = std::io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EWOULDBLOCK) => {}
                _ => return Err(io(err)),
            }
            if Instant::now() >= deadline {
                return Err(LockError::Busy {
                    path: path.display().to_string(),
                    holder: read_holder(&path),
                    waited_secs: wait.as_secs(),
                });
            }
            std::thread::sleep(POLL);
        }
    }

    fn write_holder(&self) -> std::io::Result<()> {
        let line = format!(
            "pid {}, `{}`, since {}\n",
            std::process::id(),
            command_line(),
            rein_protocol::time::utc_seconds(SystemTime::now())
        );
        self.file.set_len(0)?;
        self.file.write_all_at(line.as_bytes(), 0)?;
        Ok(())
    }
}

impl Drop for ApplyLock {
    fn drop(&mut self) {
        // Still held here: the lock goes when the file is closed, after this.
        let _ = self.file.set_len(0);
    }
}

/// `<journal>.apply-lock`.
pub fn lock_path(journal_path: &Path) -> PathBuf {
    let mut name = journal_path.as_os_str().to_owned();
    name.push(".apply-lock");
    PathBuf::from(name)
}

/// What the holder wrote, made safe to print.
fn read_holder(path: &Path) -> String {
    let mut text = String::new();
    let read = File::open(path)
        .and_then(|f| f.take(MAX_HOLDER_BYTES).read_to_string(&mut text))
        .is_ok();
    let text = printable(text.trim());
    if read && !text.is_empty() {
        format!("held by {text}")
    } else {
        "the holder did not say who it is".to_string()
    }
}

/// This process's command line, shortened and with control characters escaped.
fn command_line() -> String {
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let line = printable(&args.join(" "));
    if line.chars().count() <= MAX_COMMAND_CHARS {
        return line;
    }
    let mut shown: String = line.chars().take(MAX_COMMAND_CHARS).collect();
    shown.push_str("...");
    shown
}

/// `text` with control characters (and the backquotes that delimit the command) escaped.
fn printable(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escape = c.is_control() || c == '`';
            let shown: Vec<char> = if escape {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            shown
        })
        .collect()
}
