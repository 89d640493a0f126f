//! SHA-256 verification of model files, and the `<file>.sha256` marker that records a
//! verification so a 1 GB file is not hashed again on every start.
//!
//! The marker holds `<sha256> <size> <mtime in ns since the epoch>`; it counts only while the
//! file's size and modification time are unchanged and the hash equals the catalog's pin.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::catalog::CatalogEntry;
use crate::error::{ModelError, Result};
use crate::paths::{with_suffix, DataDir};

const BUF: usize = 1 << 20;

/// SHA-256 (lowercase hex) and size of a file.
pub fn hash_file(path: &Path) -> io::Result<(String, u64)> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; BUF];
    let mut total = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        total += n as u64;
    }
    Ok((hex::encode(hasher.finalize()), total))
}

/// Where the verification marker of a model file lives.
pub fn marker_path(model_file: &Path) -> PathBuf {
    with_suffix(model_file, "sha256")
}

fn fingerprint(path: &Path) -> io::Result<(u64, u128)> {
    let meta = std::fs::metadata(path)?;
    let mtime = meta
        .modified()?
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    Ok((meta.len(), mtime))
}

/// Records that `path` was hashed to `sha256` just now.
pub(crate) fn write_marker(path: &Path, sha256: &str) -> Result<()> {
    let marker = marker_path(path);
    let (size, mtime) = fingerprint(path).map_err(|e| io_err(path, e))?;
    std::fs::write(&marker, format!("{sha256} {size} {mtime}\n")).map_err(|e| io_err(&marker, e))
}

pub(crate) fn remove_marker(path: &Path) {
    let _ = std::fs::remove_file(marker_path(path));
}

/// Whether the marker says this file was verified against `expected_sha256` and the file has
/// not changed since.
pub fn marker_valid(path: &Path, expected_sha256: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(marker_path(path)) else {
        return false;
    };
    let Ok((size, mtime)) = fingerprint(path) else {
        return false;
    };
    let mut parts = text.split_whitespace();
    parts.next() == Some(expected_sha256)
        && parts.next() == Some(size.to_string().as_str())
        && parts.next() == Some(mtime.to_string().as_str())
        && parts.next().is_none()
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

/// The path of a model that is present and verified, ready to load. Trusts a valid marker;
/// otherwise hashes the file once. Any problem is a `NotReady` error naming the pull command.
pub fn ensure_ready(entry: &CatalogEntry, dir: &DataDir) -> Result<PathBuf> {
    let path = dir.model_path(entry);
    if !path.is_file() {
        return Err(ModelError::NotReady {
            model: entry.name.clone(),
            reason: format!("{} is not present", path.display()),
        });
    }
    if marker_valid(&path, &entry.sha256) {
        return Ok(path);
    }
    let report = verify(entry, dir)?;
    if report.verified {
        Ok(path)
    } else {
        Err(ModelError::NotReady {
            model: entry.name.clone(),
            reason: report
                .problem
                .unwrap_or_else(|| "the file does not verify".into()),
        })
    }
}
