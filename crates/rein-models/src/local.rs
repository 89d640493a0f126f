//! A user's own GGUF files: run one directly (`--model gguf:PATH`) or name it in the user's
//! catalog, `<REIN_HOME>/catalog.toml`, with `rein models add NAME PATH`.
//!
//! What is checked for a local file: the parent reads its GGUF header (name, architecture,
//! parameter and tensor counts) and hashes it (SHA-256, cached in `<REIN_HOME>/cache/hashes/`
//! under its size, times, device and inode, so it is read once until it changes); the worker
//! reports what the file it loaded says, which must equal the header exactly. A model added to
//! the user's catalog is pinned: its hash and header at `add` time must still hold at each start.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::catalog::{Catalog, CATALOG_SCHEMA};
use crate::embedded::{
    check_header, default_threads, header_identity, ExpectedIdentity, WorkerLaunch,
    DEFAULT_CONTEXT_TOKENS, DEFAULT_LOAD_TIMEOUT, DEFAULT_REPLY_TIMEOUT,
};
use crate::error::{ModelError, Result};
use crate::paths::{with_suffix, DataDir};
use crate::pull::cached_hash;

/// The user's catalog: models added with `rein models add`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserCatalog {
    pub schema: u32,
    #[serde(rename = "model", default)]
    pub models: Vec<UserModel>,
}

/// One added model: where it is and what it was when added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserModel {
    pub name: String,
    /// Absolute, canonical path of the GGUF.
    pub path: PathBuf,
    pub gguf_name: String,
    pub architecture: String,
    pub parameters: u64,
    pub tensors: u64,
    pub chat_template: bool,
    #[serde(default)]
    pub context_tokens: u32,
    pub bytes: u64,
    pub sha256: String,
}

impl UserModel {
    fn expected(&self) -> ExpectedIdentity {
        ExpectedIdentity {
            name: self.gguf_name.clone(),
            architecture: self.architecture.clone(),
            parameters: self.parameters,
            tensors: self.tensors,
        }
    }
}

impl UserCatalog {
    /// The user's catalog in `dir`; empty when the file does not exist.
    pub fn load(dir: &DataDir) -> Result<UserCatalog> {
        let path = dir.user_catalog_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(UserCatalog {
                    schema: CATALOG_SCHEMA,
                    models: Vec::new(),
                })
            }
            Err(e) => return Err(io_error(&path, e)),
        };
        let catalog: UserCatalog = toml::from_str(&text).map_err(|e| {
            ModelError::Catalog(format!(
                "your model catalog {} is malformed: {e}; fix it or remove the entry",
                path.display()
            ))
        })?;
        if catalog.schema != CATALOG_SCHEMA {
            return Err(ModelError::Catalog(format!(
                "your model catalog {} has schema {} (this build reads schema {CATALOG_SCHEMA})",
                path.display(),
                catalog.schema
            )));
        }
        Ok(catalog)
    }

    /// Whether this model's file is present and its hash cache says it still has the pinned
    /// hash (no hashing: a changed file shows as not verified until it is used or re-added).
    pub fn verified(model: &UserModel, dir: &DataDir) -> bool {
        model.path.is_file()
            && crate::pull::marker_matches(
                &model.path,
                &dir.hash_cache_entry(&model.path),
                &model.sha256,
            )
    }

    pub fn get(&self, name: &str) -> Option<&UserModel> {
        self.models.iter().find(|m| m.name == name)
    }

    /// Writes the catalog whole (a temporary file renamed over the old one).
    fn save(&self, dir: &DataDir) -> Result<()> {
        let path = dir.user_catalog_path();
        let text = toml::to_string(self)
            .map_err(|e| ModelError::Catalog(format!("cannot write the model catalog: {e}")))?;
        std::fs::create_dir_all(dir.root()).map_err(|e| io_error(dir.root(), e))?;
        let tmp = with_suffix(&path, "tmp");
        std::fs::write(
            &tmp,
            format!("# Models added with `rein models add`.\n{text}"),
        )
        .map_err(|e| io_error(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io_error(&path, e)
        })
    }
}

fn io_error(path: &Path, source: std::io::Error) -> ModelError {
    ModelError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// The canonical path of a local GGUF, or a clear error when it is missing or not a file.
fn canonical_file(path: &Path) -> Result<PathBuf> {
    let canonical = std::fs::canonicalize(path).map_err(|e| {
        ModelError::BadRequest(format!(
            "cannot open the model file {}: {e}; give the path of a .gguf file",
            path.display()
        ))
    })?;
    if !canonical.is_file() {
        return Err(ModelError::BadRequest(format!(
            "{} is not a file; give the path of a .gguf file",
            path.display()
        )));
    }
    Ok(canonical)
}

fn context_for(trained: u32) -> u32 {
    if trained > 0 {
        trained.min(DEFAULT_CONTEXT_TOKENS)
    } else {
        DEFAULT_CONTEXT_TOKENS
    }
}

/// The launch record for a local GGUF. With `pinned` (a model of the user's catalog), the file
/// must still have the hash and header recorded when it was added; without (`gguf:PATH`), its
/// own header is what the worker must report.
pub fn launch_for_local(
    spec: &str,
    path: &Path,
    pinned: Option<&UserModel>,
    dir: &DataDir,
    exe: PathBuf,
) -> Result<WorkerLaunch> {
    let canonical = canonical_file(path)?;
    let header = header_identity(spec, &canonical)?;
    let (sha256, fingerprint) = cached_hash(&canonical, &dir.hash_cache_entry(&canonical))?;
    let expected = match pinned {
        Some(model) => {
            if sha256 != model.sha256 || fingerprint.size != model.bytes {
                return Err(ModelError::Refused(format!(
                    "{} changed since it was added as {} (SHA-256 {sha256}, {} bytes; added as \
                     {}, {} bytes); if the new file is the one you want, add it again under \
                     another name or edit {}",
                    canonical.display(),
                    model.name,
                    fingerprint.size,
                    model.sha256,
                    model.bytes,
                    dir.user_catalog_path().display()
                )));
            }
            let expected = model.expected();
            check_header(spec, &canonical, &expected)?;
            expected
        }
        None => ExpectedIdentity {
            name: header.name.clone(),
            architecture: header.architecture.clone(),
            parameters: header.parameters,
            tensors: header.tensors,
        },
    };
    Ok(WorkerLaunch {
        exe,
        spec: spec.to_string(),
        model_path: canonical,
        sha256,
        size: fingerprint.size,
        verified: Some(fingerprint),
        expected,
        threads: default_threads(),
        context_tokens: context_for(header.context_tokens),
        gguf_template: false,
        prefix_store: crate::embedded::prefix_store_dir(dir),
        load_timeout: DEFAULT_LOAD_TIMEOUT,
        reply_timeout: DEFAULT_REPLY_TIMEOUT,
    })
}

/// The training context window a local GGUF's header gives (0 when it gives none).
pub fn trained_context(path: &Path) -> Result<u32> {
    Ok(header_identity("", &canonical_file(path)?)?.context_tokens)
}

/// Adds the GGUF at `path` to the user's catalog as `name`: checks that the name is free (in
/// the shipped catalog and the user's), that the file is a GGUF, and pins its hash and header.
pub fn add(name: &str, path: &Path, builtin: &Catalog, dir: &DataDir) -> Result<UserModel> {
    if name.is_empty()
        || name.contains(|c: char| c.is_whitespace() || matches!(c, ':' | '/' | '\\' | '#'))
    {
        return Err(ModelError::BadRequest(format!(
            "model name {name:?} must be non-empty, without spaces, ':', '/', '\\' or '#'"
        )));
    }
    if builtin.models.iter().any(|m| m.name == name) {
        return Err(ModelError::BadRequest(format!(
            "{name} is a model of the shipped catalog; choose another name"
        )));
    }
    let mut catalog = UserCatalog::load(dir)?;
    if let Some(existing) = catalog.get(name) {
        return Err(ModelError::BadRequest(format!(
            "{name} is already in your catalog ({}); choose another name or remove it from {}",
            existing.path.display(),
            dir.user_catalog_path().display()
        )));
    }
    let canonical = canonical_file(path)?;
    let header = rein_protocol::gguf::GgufHeader::read_file(&canonical)
        .map_err(|e| ModelError::BadRequest(e.to_string()))?;
    let (sha256, fingerprint) = cached_hash(&canonical, &dir.hash_cache_entry(&canonical))?;
    let model = UserModel {
        name: name.to_string(),
        path: canonical,
        gguf_name: header.name().to_string(),
        architecture: header.architecture().to_string(),
        parameters: header.parameter_count,
        tensors: header.tensor_count,
        chat_template: header.chat_template().is_some(),
        context_tokens: header
            .context_length()
            .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)),
        bytes: fingerprint.size,
        sha256,
    };
    catalog.schema = CATALOG_SCHEMA;
    catalog.models.push(model.clone());
    catalog.save(dir)?;
    Ok(model)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rein_protocol::gguf::write_test_header;

    fn gguf(dir: &Path, file: &str, name: &str) -> PathBuf {
        let path = dir.join(file);
        let bytes = write_test_header(
            &[("general.name", name), ("general.architecture", "llama")],
            &[("llama.context_length", 2048)],
            &[("w", &[4, 4])],
        );
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn add_pins_the_file_and_refuses_bad_input() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path().join("home"));
        let builtin = Catalog::builtin().unwrap();
        let file = gguf(tmp.path(), "mine.gguf", "My Model");
        let added = add("mine", &file, &builtin, &dir).unwrap();
        assert_eq!(
            (added.gguf_name.as_str(), added.parameters, added.tensors),
            ("My Model", 16, 1)
        );
        assert_eq!(added.context_tokens, 2048);
        let loaded = UserCatalog::load(&dir).unwrap();
        assert_eq!(loaded.get("mine"), Some(&added));

        let e = add("mine", &file, &builtin, &dir).unwrap_err().to_string();
        assert!(e.contains("already in your catalog"), "{e}");
        let e = add("qwen2.5-coder-0.5b", &file, &builtin, &dir)
            .unwrap_err()
            .to_string();
        assert!(e.contains("shipped catalog"), "{e}");
        let e = add("other", &tmp.path().join("absent.gguf"), &builtin, &dir)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot open the model file"), "{e}");
        let text = tmp.path().join("notes.txt");
        std::fs::write(&text, "hello").unwrap();
        let e = add("other", &text, &builtin, &dir).unwrap_err().to_string();
        assert!(e.contains("is not a GGUF file"), "{e}");
        let e = add("a b", &file, &builtin, &dir).unwrap_err().to_string();
        assert!(e.contains("without spaces"), "{e}");
        // The failures left the catalog as it was.
        assert_eq!(UserCatalog::load(&dir).unwrap().models.len(), 1);
    }

    #[test]
    fn a_pinned_file_that_changed_is_refused_and_gguf_path_takes_its_header() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = DataDir::at(tmp.path().join("home"));
        let file = gguf(tmp.path(), "mine.gguf", "My Model");
        let added = add("mine", &file, &Catalog::builtin().unwrap(), &dir).unwrap();
        let launch =
            launch_for_local("mine", &file, Some(&added), &dir, PathBuf::from("rein")).unwrap();
        assert_eq!(launch.sha256, added.sha256);
        assert_eq!(launch.expected.name, "My Model");
        assert_eq!(launch.context_tokens, 2048);

        // Same size, another name in the header: the pin refuses it.
        gguf(tmp.path(), "mine.gguf", "My Modem");
        let e = launch_for_local("mine", &file, Some(&added), &dir, PathBuf::from("rein"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("changed since it was added"), "{e}");
        // As gguf:PATH, the header now read is what the worker must report.
        let launch = launch_for_local("gguf:x", &file, None, &dir, PathBuf::from("rein")).unwrap();
        assert_eq!(launch.expected.name, "My Modem");
        assert_ne!(launch.sha256, added.sha256);
    }
}
