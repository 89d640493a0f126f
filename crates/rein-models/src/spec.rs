//! What `--model` accepts: a catalog name, `openai:URL#MODEL`, or `scripted:FILE`.

use std::fmt;
use std::path::PathBuf;

use crate::error::{ModelError, Result};

/// A parsed `--model` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    /// A model from the catalog, run embedded (`qwen2.5-coder-0.5b`).
    Catalog(String),
    /// An OpenAI-compatible endpoint: `openai:http://127.0.0.1:8080#qwen`.
    OpenAi { url: String, model: String },
    /// A replay model answering from a JSON Lines file: `scripted:path/to/replies.jsonl`.
    Scripted(PathBuf),
    /// A local GGUF file run embedded, identified by its own header: `gguf:models/my.gguf`.
    Gguf(PathBuf),
}

const FORMS: &str =
    "use a catalog name (see `rein models list`), gguf:PATH, openai:URL#MODEL or scripted:FILE";

impl ModelSpec {
    pub fn parse(s: &str) -> Result<ModelSpec> {
        let bad = |why: String| {
            Err(ModelError::BadRequest(format!(
                "--model {s:?}: {why}; {FORMS}"
            )))
        };
        let s_trim = s.trim();
        if s_trim.is_empty() {
            return bad("empty model name".into());
        }
        if let Some(rest) = s_trim.strip_prefix("openai:") {
            let Some((url, model)) = rest.rsplit_once('#') else {
                return bad("an openai: model needs #MODEL after the URL, e.g. openai:http://127.0.0.1:8080#qwen".into());
            };
            if model.trim().is_empty() {
                return bad("the model name after # is empty".into());
            }
            let parsed = match url::Url::parse(url) {
                Ok(u) => u,
                Err(e) => return bad(format!("{url:?} is not a URL ({e})")),
            };
            if !matches!(parsed.scheme(), "http" | "https") {
                return bad(format!(
                    "the endpoint URL must start with http:// or https://, not {}:",
                    parsed.scheme()
                ));
            }
            if parsed.host_str().is_none_or(str::is_empty) {
                return bad(format!("{url:?} has no host"));
            }
            return Ok(ModelSpec::OpenAi {
                url: url.to_string(),
                model: model.trim().to_string(),
            });
        }
        if let Some(file) = s_trim.strip_prefix("scripted:") {
            if file.is_empty() {
                return bad("scripted: needs a file path, e.g. scripted:replies.jsonl".into());
            }
            return Ok(ModelSpec::Scripted(PathBuf::from(file)));
        }
        if let Some(file) = s_trim.strip_prefix("gguf:") {
            if file.is_empty() {
                return bad("gguf: needs a file path, e.g. gguf:models/my-model.gguf".into());
            }
            return Ok(ModelSpec::Gguf(PathBuf::from(file)));
        }
        if let Some((scheme, _)) = s_trim.split_once(':') {
            return bad(format!("unknown model kind {scheme:?}"));
        }
        if s_trim.contains(char::is_whitespace) || s_trim.contains(['/', '\\', '#']) {
            return bad("a catalog name has no spaces, slashes or '#'".into());
        }
        Ok(ModelSpec::Catalog(s_trim.to_string()))
    }

    /// Whether this is an embedded catalog model.
    pub fn is_catalog(&self) -> bool {
        matches!(self, ModelSpec::Catalog(_))
    }

    /// Whether this model runs embedded, in a worker (a catalog name or a local GGUF).
    pub fn is_embedded(&self) -> bool {
        matches!(self, ModelSpec::Catalog(_) | ModelSpec::Gguf(_))
    }
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelSpec::Catalog(name) => f.write_str(name),
            ModelSpec::OpenAi { url, model } => write!(f, "openai:{url}#{model}"),
            ModelSpec::Scripted(path) => write!(f, "scripted:{}", path.display()),
            ModelSpec::Gguf(path) => write!(f, "gguf:{}", path.display()),
        }
    }
}

impl std::str::FromStr for ModelSpec {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<ModelSpec> {
        ModelSpec::parse(s)
    }
}
