//! Loading and freezing a mission: the frozen contract that every attempt judges against.

use std::collections::BTreeMap;
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
    /// SHA-256 of each editable fixture as the run starts with it, in the order of
    /// `mission.editable`, taken at load.
    pub editable: Vec<InputHash>,
    /// The bytes of every `expected_file` a check names (by its path relative to the mission
    /// folder), read at load: the judge compares against what was frozen, not what is on disk
    /// when it runs.
    pub expected_files: BTreeMap<String, Vec<u8>>,
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
        let inputs = hash_fixtures(source, &fixtures_dir, "inputs", &mission.inputs)?;
        let editable = hash_fixtures(source, &fixtures_dir, "editable", &mission.editable)?;
        let mut expected_files = BTreeMap::new();
        for (i, check) in mission.checks.iter().enumerate() {
            if let crate::checks::CheckSpec::FileEquals { expected_file, .. } = &check.spec {
                let file = base.join(expected_file);
                let bytes = std::fs::read(&file).map_err(|e| MissionError::Invalid {
                    path: source.to_path_buf(),
                    field: format!("checks[{i}].expected_file"),
                    message: format!("cannot read {}: {e}", file.display()),
                })?;
                expected_files.insert(expected_file.clone(), bytes);
            }
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
            editable,
            expected_files,
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

    /// The starting SHA-256 of an editable file, if `path` is one.
    pub fn editable_hash(&self, path: &str) -> Option<&str> {
        self.editable
            .iter()
            .find(|h| crate::checks::same_path(&h.path, path))
            .map(|h| h.sha256.as_str())
    }

    /// Re-reads the mission file (and its fixtures) and refuses if the canonical hash, or any
    /// input's, editable file's or expected file's hash, differs from the frozen one. An edit that makes the file unreadable or
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
        let fixtures = self.inputs.iter().map(|h| (h, now.input_hash(&h.path)));
        let editable = self
            .editable
            .iter()
            .map(|h| (h, now.editable_hash(&h.path)));
        for (old, new) in fixtures.chain(editable) {
            let new = new.map(str::to_string).unwrap_or_else(|| "missing".into());
            if new != old.sha256 {
                return Err(MissionError::InputChanged {
                    path: source.clone(),
                    input: old.path.clone(),
                    old: old.sha256.clone(),
                    new,
                });
            }
        }
        for (path, old) in &self.expected_files {
            let new = now.expected_files.get(path);
            if new != Some(old) {
                return Err(MissionError::InputChanged {
                    path: source.clone(),
                    input: path.clone(),
                    old: sha256_hex(old),
                    new: new.map_or_else(|| "missing".into(), |b| sha256_hex(b)),
                });
            }
        }
        Ok(())
    }
}

/// The SHA-256 of each fixture of a list (`inputs` or `editable`), in order.
fn hash_fixtures(
    source: &Path,
    fixtures_dir: &Path,
    field: &str,
    paths: &[String],
) -> Result<Vec<InputHash>, MissionError> {
    let mut out = Vec::with_capacity(paths.len());
    for (i, p) in paths.iter().enumerate() {
        let file = fixtures_dir.join(p);
        let bytes = std::fs::read(&file).map_err(|e| MissionError::Invalid {
            path: source.to_path_buf(),
            field: format!("{field}[{i}]"),
            message: format!("cannot read fixture {}: {e}", file.display()),
        })?;
        out.push(InputHash {
            path: p.clone(),
            sha256: sha256_hex(&bytes),
        });
    }
    Ok(out)
}

/// Top-level fields of a mission file, and whether each is required.
const FIELDS: &[(&str, bool)] = &[
    ("id", true),
    ("mode", true),
    ("description", false),
    ("prompt", true),
    ("fixtures", false),
    ("inputs", false),
    ("editable", false),
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
            "inputs" | "editable" | "tools" => {
                serde_json::from_value::<Vec<String>>(v.clone()).map(|_| ())
            }
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
