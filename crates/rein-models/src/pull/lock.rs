//! One pull of a model at a time: `<file>.lock` holds the puller's process id. A lock whose
//! process is gone (checked through /proc on Linux) is stale and taken over.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{ModelError, Result};
use crate::paths::with_suffix;

/// Removes the lock file when dropped.
#[derive(Debug)]
pub(crate) struct PullLock {
    path: PathBuf,
}

impl Drop for PullLock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        // Without /proc, assume the holder is alive: fail closed.
        true
    }
}

/// Takes the pull lock of `model_file`, or says who holds it.
pub(crate) fn acquire(model: &str, model_file: &Path) -> Result<PullLock> {
    let path = with_suffix(model_file, "lock");
    for _ in 0..2 {
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut f) => {
                let _ = writeln!(f, "{}", std::process::id());
                return Ok(PullLock { path });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let holder = fs::read_to_string(&path)
                    .ok()
                    .and_then(|s| s.trim().parse::<u32>().ok());
                match holder {
                    Some(pid) if process_alive(pid) => {
                        return Err(ModelError::Refused(format!(
                            "another rein (process {pid}) is pulling {model}; wait for it to finish, or delete {} if it is gone",
                            path.display()
                        )))
                    }
                    _ => {
                        let _ = fs::remove_file(&path);
                    }
                }
            }
            Err(e) => {
                return Err(ModelError::Io {
                    path: path.display().to_string(),
                    source: e,
                });
            }
        }
    }
    Err(ModelError::Refused(format!(
        "cannot take the pull lock {}; delete it if no other rein is running",
        path.display()
    )))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_live_holder_blocks_and_a_stale_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("m.gguf");
        let lock = acquire("m", &model).unwrap();
        let e = acquire("m", &model).unwrap_err();
        assert!(e.to_string().contains("is pulling m"), "{e}");
        drop(lock);
        assert!(!with_suffix(&model, "lock").exists());

        // A lock left by a process that no longer exists is taken over.
        fs::write(with_suffix(&model, "lock"), "4294967294\n").unwrap();
        let lock = acquire("m", &model).unwrap();
        drop(lock);
        fs::write(with_suffix(&model, "lock"), "garbage").unwrap();
        assert!(acquire("m", &model).is_ok());
    }
}
