//! SHA-256 verification of model files, and the `<file>.sha256` marker that records a
//! verification so a 1 GB file is not hashed again on every start.
//!
//! The marker holds `<sha256> <size> <mtime ns> <ctime ns> <device> <inode>`; it counts only
//! while the file's fingerprint (all five) is unchanged, and, for a catalog model, while the
//! hash equals the catalog's pin. A user's own GGUF keeps its marker in the hash cache under the
//! data directory (`cache/hashes/`), never beside the file.

use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::catalog::CatalogEntry;
use crate::error::{ModelError, Result};
use crate::paths::{with_suffix, DataDir};

/// SHA-256 (lowercase hex) and size of a file.
pub use rein_protocol::digest::hash_file;

/// Where the verification marker of a model file lives.
pub fn marker_path(model_file: &Path) -> PathBuf {
    with_suffix(model_file, "sha256")
}

/// What identifies one version of a file without reading it: size, modification and change
/// times, device and inode. The change time cannot be set back by a program, so bytes rewritten
/// in place with the old modification time restored still count as a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileFingerprint {
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub dev: u64,
    pub ino: u64,
}

impl FileFingerprint {
    /// The fingerprint of the file at `path` now (links followed).
    pub fn of(path: &Path) -> io::Result<FileFingerprint> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path)?;
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Ok(FileFingerprint {
            size: meta.len(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }

    fn to_line(self, sha256: &str) -> String {
        format!(
            "{sha256} {} {} {} {} {}\n",
            self.size, self.mtime_ns, self.ctime_ns, self.dev, self.ino
        )
    }

    fn from_line(line: &str) -> Option<(String, FileFingerprint)> {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [sha, size, mtime, ctime, dev, ino] = parts[..] else {
            return None;
        };
        Some((
            sha.to_string(),
            FileFingerprint {
                size: size.parse().ok()?,
                mtime_ns: mtime.parse().ok()?,
                ctime_ns: ctime.parse().ok()?,
                dev: dev.parse().ok()?,
                ino: ino.parse().ok()?,
            },
        ))
    }
}

/// The hash a marker records for `path`, if the file is still the version it was made for.
fn marker_hash(path: &Path, marker: &Path) -> Option<String> {
    let text = std::fs::read_to_string(marker).ok()?;
    let (sha, recorded) = FileFingerprint::from_line(&text)?;
    (FileFingerprint::of(path).ok()? == recorded).then_some(sha)
}

/// Writes a marker whole or not at all (a temporary file renamed over it).
fn write_marker_at(marker: &Path, sha256: &str, fp: FileFingerprint) -> Result<()> {
    if let Some(parent) = marker.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
    }
    let tmp = with_suffix(marker, "tmp");
    std::fs::write(&tmp, fp.to_line(sha256)).map_err(|e| io_err(&tmp, e))?;
    std::fs::rename(&tmp, marker).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_err(marker, e)
    })
}

/// Records that `path` was hashed to `sha256` just now.
pub(crate) fn write_marker(path: &Path, sha256: &str) -> Result<()> {
    let fp = FileFingerprint::of(path).map_err(|e| io_err(path, e))?;
    write_marker_at(&marker_path(path), sha256, fp)
}

pub(crate) fn remove_marker(path: &Path) {
    let _ = std::fs::remove_file(marker_path(path));
}

/// Whether the marker says this file was verified against `expected_sha256` and the file has
/// not changed since (same size, times, device and inode).
pub fn marker_valid(path: &Path, expected_sha256: &str) -> bool {
    marker_matches(path, &marker_path(path), expected_sha256)
}

/// Whether the hash cache entry `marker` records `expected_sha256` for the file's current
/// version (no hashing).
pub fn marker_matches(path: &Path, marker: &Path, expected_sha256: &str) -> bool {
    marker_hash(path, marker).as_deref() == Some(expected_sha256)
}

/// The SHA-256 and fingerprint of `path`, taken from the hash cache entry `marker` while the
/// file's fingerprint is unchanged, else hashed now and recorded there. A file that changes
/// while it is hashed is an error, not a hash of mixed versions.
pub fn cached_hash(path: &Path, marker: &Path) -> Result<(String, FileFingerprint)> {
    let before = FileFingerprint::of(path).map_err(|e| io_err(path, e))?;
    if let Some(sha) = marker_hash(path, marker) {
        return Ok((sha, before));
    }
    let (sha, _) = hash_file(path).map_err(|e| io_err(path, e))?;
    let after = FileFingerprint::of(path).map_err(|e| io_err(path, e))?;
    if after != before {
        return Err(ModelError::Refused(format!(
            "{} changed while it was being hashed; run the command again once nothing writes to it",
            path.display()
        )));
    }
    write_marker_at(marker, &sha, after)?;
    Ok((sha, after))
}

pub(crate) fn io_err(path: &Path, source: io::Error) -> ModelError {
    ModelError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// What `rein models list` shows for one model (no hashing: `verified` comes from the marker).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelStatus {
    pub name: String,
    pub display_name: String,
    pub roles: Vec<String>,
    pub default_for: Vec<String>,
    pub bytes: u64,
    pub path: PathBuf,
    pub present: bool,
    pub verified: bool,
}

/// The status of one catalog model in this data directory, without hashing it.
pub fn status(entry: &CatalogEntry, dir: &DataDir) -> ModelStatus {
    let path = dir.model_path(entry);
    let present = path.is_file();
    let verified = present && marker_valid(&path, &entry.sha256);
    ModelStatus {
        name: entry.name.clone(),
        display_name: entry.display_name.clone(),
        roles: entry.roles.clone(),
        default_for: entry.default_for.clone(),
        bytes: entry.bytes,
        path,
        present,
        verified,
    }
}

/// What `rein models verify` found for one model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyReport {
    pub name: String,
    pub path: PathBuf,
    pub present: bool,
    /// True when the file is present and its size and SHA-256 match the catalog.
    pub verified: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual_sha256: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual_bytes: Option<u64>,
    /// Why it failed, when present but not verified (the next step is `rein models pull NAME`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// Re-hashes a model file (ignoring any marker) and refreshes or removes its marker.
/// An absent file is reported as not present, not as an error.
pub fn verify(entry: &CatalogEntry, dir: &DataDir) -> Result<VerifyReport> {
    let path = dir.model_path(entry);
    let mut report = VerifyReport {
        name: entry.name.clone(),
        path: path.clone(),
        present: false,
        verified: false,
        actual_sha256: None,
        actual_bytes: None,
        problem: None,
    };
    if !path.exists() {
        remove_marker(&path);
        return Ok(report);
    }
    report.present = true;
    let (sha, size) = hash_file(&path).map_err(|e| io_err(&path, e))?;
    report.verified = sha == entry.sha256 && size == entry.bytes;
    if report.verified {
        write_marker(&path, &sha)?;
    } else {
        remove_marker(&path);
        report.problem = Some(if size != entry.bytes {
            format!(
                "{} is {size} bytes, expected {} (truncated or corrupt)",
                path.display(),
                entry.bytes
            )
        } else {
            format!("SHA-256 mismatch: expected {}, got {sha}", entry.sha256)
        });
    }
    report.actual_sha256 = Some(sha);
    report.actual_bytes = Some(size);
    Ok(report)
}

/// The path of a model that is present and verified, ready to load. Trusts a marker whose
/// fingerprint still matches; otherwise hashes the file once. Any problem is a `NotReady` error
/// naming the pull command.
pub fn ensure_ready(entry: &CatalogEntry, dir: &DataDir) -> Result<PathBuf> {
    ensure_verified(entry, dir).map(|(path, _)| path)
}

/// [`ensure_ready`], also giving the fingerprint of the version that was verified, so a caller
/// can tell later whether the file it loaded is still that version.
pub fn ensure_verified(entry: &CatalogEntry, dir: &DataDir) -> Result<(PathBuf, FileFingerprint)> {
    let path = dir.model_path(entry);
    let not_ready = |reason: String| ModelError::NotReady {
        model: entry.name.clone(),
        reason,
    };
    if !path.is_file() {
        return Err(not_ready(format!("{} is not present", path.display())));
    }
    let (sha, fp) = cached_hash(&path, &marker_path(&path))?;
    if fp.size != entry.bytes {
        return Err(not_ready(format!(
            "{} is {} bytes, expected {} (truncated or corrupt)",
            path.display(),
            fp.size,
            entry.bytes
        )));
    }
    if sha != entry.sha256 {
        return Err(not_ready(format!(
            "SHA-256 mismatch: expected {}, got {sha}",
            entry.sha256
        )));
    }
    Ok((path, fp))
}
