//! Loading and freezing a mission: the frozen contract that every attempt judges against.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::MissionError;
use super::schema::Mission;
use super::validate::validate;
use crate::checks::{Check, CHECK_KINDS};
use rein_protocol::canonical::{canonical_json, sha256_hex};

/// The file name looked up when `Mission::load` is given a folder.
pub const MISSION_FILE_NAME: &str = "mission.json";

/// A frozen input: its workspace path and the SHA-256 of its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputHash {
    pub path: String,
    pub sha256: String,
}

/// A mission as loaded, validated and hashed. It is never edited afterwards: retries and
/// replans read this copy, and a file changed on disk is refused by `verify_unchanged`.
#[derive(Debug, Clone, PartialEq)]
pub struct FrozenContract {
    pub mission: Mission,
    /// RFC 8785 canonical JSON of the parsed mission (defaults filled in), the text the journal
    /// stores in its acceptance specs.
    pub canonical_json: String,
    /// SHA-256 (hex) of `canonical_json`.
    pub sha256: String,
    /// The mission file this contract was read from.
    pub source: PathBuf,
    /// Folder the inputs are copied from.
    pub fixtures_dir: PathBuf,
    /// SHA-256 of each input fixture, in the order of `mission.inputs`, taken at load.
    pub inputs: Vec<InputHash>,
    /// What the validator found weak but not wrong (e.g. a number pattern with no anchor), for
    /// the person who wrote the mission.
    pub warnings: Vec<String>,
}

impl Mission {
    /// Reads, validates, canonicalises and hashes a mission file (or `<dir>/mission.json`).
    pub fn load(path: impl AsRef<Path>) -> Result<FrozenContract, MissionError> {
        let source = resolve(path.as_ref());
        let text = std::fs::read_to_string(&source).map_err(|e| MissionError::Read {
            path: source.clone(),
            source: e,
        })?;
        let mission = Mission::parse(&text, &source)?;
        FrozenContract::freeze(mission, &source)
    }

    /// Parses mission JSON, naming the field of any error (`checks[2].kind`, ...). `origin` only
    /// labels errors. It does not look at fixtures: see `FrozenContract::freeze`.
    pub fn parse(text: &str, origin: &Path) -> Result<Mission, MissionError> {
        let value: Value = serde_json::from_str(text).map_err(|e| MissionError::Syntax {
            path: origin.to_path_buf(),
            message: e.to_string(),
        })?;
        let invalid = |field: String, message: String| MissionError::Invalid {
            path: origin.to_path_buf(),
            field,
            message,
        };
        let Some(obj) = value.as_object() else {
            return Err(invalid(
                "(root)".into(),
                "a mission is one JSON object".into(),
            ));
        };
        check_top_level(obj).map_err(|(field, message)| invalid(field, message))?;
        if let Some(Value::Array(checks)) = obj.get("checks") {
            for (i, c) in checks.iter().enumerate() {
                let kind = c.get("kind").and_then(Value::as_str);
                let known = CHECK_KINDS.join(", ");
                match kind {
                    None => {
                        return Err(invalid(
                            format!("checks[{i}].kind"),
                            format!("missing or not a string; one of: {known}"),
                        ))
                    }
                    Some(k) if !CHECK_KINDS.contains(&k) => {
                        return Err(invalid(
                            format!("checks[{i}].kind"),
                            format!("unknown check kind `{k}`; known kinds: {known}"),
                        ))
                    }
                    Some(_) => {}
                }
                if let Err(e) = serde_json::from_value::<Check>(c.clone()) {
                    let id = c.get("id").and_then(Value::as_str).unwrap_or("?");
                    return Err(invalid(format!("checks[{i}] (id `{id}`)"), e.to_string()));
                }
            }
        }
        serde_json::from_value::<Mission>(value)
            .map_err(|e| invalid("mission".into(), e.to_string()))
    }
}

impl FrozenContract {
    /// Validates a parsed mission against its folder, hashes its fixtures and freezes it.
    pub fn freeze(mission: Mission, source: &Path) -> Result<FrozenContract, MissionError> {
        let base = source.parent().unwrap_or(Path::new("."));
        let fixtures_dir = base.join(&mission.fixtures);
        let warnings = validate(&mission, source, &fixtures_dir)?;
        let mut inputs = Vec::with_capacity(mission.inputs.len());
        for (i, input) in mission.inputs.iter().enumerate() {
            let file = fixtures_dir.join(input);
            let bytes = std::fs::read(&file).map_err(|e| MissionError::Invalid {
                path: source.to_path_buf(),
                field: format!("inputs[{i}]"),
                message: format!("cannot read fixture {}: {e}", file.display()),
            })?;
            inputs.push(InputHash {
                path: input.clone(),
                sha256: sha256_hex(&bytes),
            });
        }
        let value = serde_json::to_value(&mission).map_err(|e| MissionError::Invalid {
            path: source.to_path_buf(),
            field: "mission".into(),
            message: format!("cannot serialise for canonicalisation: {e}"),
        })?;
        let canonical = canonical_json(&value);
        let sha256 = sha256_hex(canonical.as_bytes());
        Ok(FrozenContract {
            mission,
            canonical_json: canonical,
            sha256,
            source: source.to_path_buf(),
            fixtures_dir,
            inputs,
            warnings,
        })
    }

    pub fn id(&self) -> &str {
        &self.mission.id
    }

    /// The frozen SHA-256 of an input, if `path` is one.
    pub fn input_hash(&self, path: &str) -> Option<&str> {
        self.inputs
            .iter()
            .find(|h| crate::checks::same_path(&h.path, path))
            .map(|h| h.sha256.as_str())
    }

    /// Re-reads the mission file (and its fixtures) and refuses if the canonical hash, or any
    /// input's hash, differs from the frozen one. An edit that makes the file unreadable or
    /// invalid is a change too.
    pub fn verify_unchanged(&self, path: impl AsRef<Path>) -> Result<(), MissionError> {
        let source = resolve(path.as_ref());
        let changed = |new: String| MissionError::ContractChanged {
            path: source.clone(),
            old: self.sha256.clone(),
            new,
        };
        let now = match Mission::load(&source) {
            Ok(c) => c,
            Err(e) => return Err(changed(format!("unreadable or invalid ({e})"))),
        };
        if now.sha256 != self.sha256 {
            return Err(changed(now.sha256));
        }
        for old in &self.inputs {
            let new = now
                .input_hash(&old.path)
                .map(str::to_string)
                .unwrap_or_else(|| "missing".into());
            if new != old.sha256 {
                return Err(MissionError::InputChanged {
                    path: source.clone(),
                    input: old.path.clone(),
                    old: old.sha256.clone(),
                    new,
                });
            }
        }
        Ok(())
    }
}

/// Top-level fields of a mission file, and whether each is required.
const FIELDS: &[(&str, bool)] = &[
    ("id", true),
    ("mode", true),
    ("description", false),
    ("prompt", true),
    ("fixtures", false),
    ("inputs", false),
    ("tools", true),
    ("required_artifact", false),
    ("checks", true),
    ("budgets", false),
    ("min_words", false),
];

/// Names the top-level field at fault (serde's own errors from `from_value` do not).
fn check_top_level(obj: &serde_json::Map<String, Value>) -> Result<(), (String, String)> {
    use super::schema::{Budgets, Mode};
    let known: Vec<&str> = FIELDS.iter().map(|(f, _)| *f).collect();
    for key in obj.keys() {
        if !known.contains(&key.as_str()) {
            return Err((
                key.clone(),
                format!("unknown field; known fields: {}", known.join(", ")),
            ));
        }
    }
    for (field, required) in FIELDS {
        let Some(v) = obj.get(*field) else {
            if *required {
                return Err((field.to_string(), "missing required field".into()));
            }
            continue;
        };
        let r = match *field {
            "mode" => serde_json::from_value::<Mode>(v.clone()).map(|_| ()),
            "budgets" => serde_json::from_value::<Budgets>(v.clone()).map(|_| ()),
            "inputs" | "tools" => serde_json::from_value::<Vec<String>>(v.clone()).map(|_| ()),
            "min_words" => serde_json::from_value::<u32>(v.clone()).map(|_| ()),
            "checks" => serde_json::from_value::<Vec<Value>>(v.clone()).map(|_| ()),
            _ => serde_json::from_value::<String>(v.clone()).map(|_| ()),
        };
        r.map_err(|e| (field.to_string(), e.to_string()))?;
    }
    Ok(())
}

fn resolve(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(MISSION_FILE_NAME)
    } else {
        path.to_path_buf()
    }
}
