//! What the checks may look at: files of the run's workspace and variables of a bench sandbox.
//!
//! Checks never touch the file system directly, so the same judge runs against an in-memory map
//! (tests), a plain directory, or later the confined resolver of `rein-workspace`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::paths::normalize_rel;

/// A failure to read from the world. A missing file is not an error (`Ok(None)`).
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    #[error("`{path}` is not a workspace-relative path: {reason}")]
    InvalidPath { path: String, reason: String },
    #[error("cannot read `{path}`: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// The view of a run's world that checks and finish rules read.
pub trait World {
    /// The bytes of a workspace-relative file, `Ok(None)` when it does not exist.
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, WorldError>;
    /// The bytes of a file of at most `max` bytes: `Ok(None)` when it does not exist or is
    /// larger. A world over a real folder looks at the size before it reads anything.
    fn read_small(&self, path: &str, max: u64) -> Result<Option<Vec<u8>>, WorldError> {
        Ok(self.read(path)?.filter(|b| b.len() as u64 <= max))
    }
    /// A variable of the bench sandbox, if set.
    fn variable(&self, name: &str) -> Option<serde_json::Value>;
    /// Every file of the world, workspace-relative in normal form (a link counts as a file
    /// under its own name); `Ok(None)` when this world cannot list its files, and then a check
    /// that needs the listing fails (it cannot tell what changed).
    fn files(&self) -> Result<Option<Vec<String>>, WorldError> {
        Ok(None)
    }
    /// Whether `path` (workspace-relative, normal form) is a folder holding a file, as far as
    /// this world can tell: by default, whether its listing has a file beneath it.
    fn is_folder(&self, path: &str) -> bool {
        let path = path.trim_end_matches('/');
        self.files().ok().flatten().is_some_and(|files| {
            files.iter().any(|f| {
                f.strip_prefix(path)
                    .is_some_and(|rest| rest.starts_with('/'))
            })
        })
    }
}

/// An in-memory world: a map of paths to bytes and of variables to values.
#[derive(Debug, Clone, Default)]
pub struct MemWorld {
    files: BTreeMap<String, Vec<u8>>,
    variables: BTreeMap<String, serde_json::Value>,
}

impl MemWorld {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces a file; the path is normalised the same way reads are.
    pub fn with_file(mut self, path: &str, bytes: impl Into<Vec<u8>>) -> Self {
        self.set_file(path, bytes);
        self
    }

    pub fn set_file(&mut self, path: &str, bytes: impl Into<Vec<u8>>) {
        let key = normalize_rel(path).unwrap_or_else(|_| path.to_string());
        self.files.insert(key, bytes.into());
    }

    pub fn remove_file(&mut self, path: &str) {
        if let Ok(key) = normalize_rel(path) {
            self.files.remove(&key);
        }
    }

    pub fn with_variable(mut self, name: &str, value: serde_json::Value) -> Self {
        self.variables.insert(name.to_string(), value);
        self
    }
}

impl World for MemWorld {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, WorldError> {
        let key = normalize_rel(path).map_err(|reason| WorldError::InvalidPath {
            path: path.to_string(),
            reason,
        })?;
        Ok(self.files.get(&key).cloned())
    }

    fn variable(&self, name: &str) -> Option<serde_json::Value> {
        self.variables.get(name).cloned()
    }

    fn files(&self) -> Result<Option<Vec<String>>, WorldError> {
        Ok(Some(self.files.keys().cloned().collect()))
    }
}

/// A plain directory. It accepts only relative paths without `..` and refuses a target that
/// resolves (through a symlink) outside the root; the confined resolver replaces it later.
#[derive(Debug, Clone)]
pub struct DirWorld {
    root: PathBuf,
    variables: BTreeMap<String, serde_json::Value>,
}

impl DirWorld {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            variables: BTreeMap::new(),
        }
    }

    pub fn with_variable(mut self, name: &str, value: serde_json::Value) -> Self {
        self.variables.insert(name.to_string(), value);
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl World for DirWorld {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, WorldError> {
        let rel = normalize_rel(path).map_err(|reason| WorldError::InvalidPath {
            path: path.to_string(),
            reason,
        })?;
        let full = self.root.join(&rel);
        let io = |source| WorldError::Io {
            path: rel.clone(),
            source,
        };
        let resolved = match full.canonicalize() {
            Ok(p) => p,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        let root = self.root.canonicalize().map_err(io)?;
        if !resolved.starts_with(&root) {
            return Err(WorldError::InvalidPath {
                path: path.to_string(),
                reason: "it resolves outside the workspace".to_string(),
            });
        }
        if resolved.is_dir() {
            return Err(WorldError::InvalidPath {
                path: path.to_string(),
                reason: "it is a directory".to_string(),
            });
        }
        std::fs::read(&resolved).map(Some).map_err(io)
    }

    fn variable(&self, name: &str) -> Option<serde_json::Value> {
        self.variables.get(name).cloned()
    }

    /// Walks without following links: a link is listed under its own name.
    fn files(&self) -> Result<Option<Vec<String>>, WorldError> {
        let io = |path: &Path, source| WorldError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut out = Vec::new();
        let mut stack = vec![self.root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).map_err(|e| io(&dir, e))? {
                let entry = entry.map_err(|e| io(&dir, e))?;
                let path = entry.path();
                let kind = entry.file_type().map_err(|e| io(&path, e))?;
                if kind.is_dir() {
                    stack.push(path);
                    continue;
                }
                let rel = path.strip_prefix(&self.root).unwrap_or(&path);
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
        out.sort();
        Ok(Some(out))
    }
}
