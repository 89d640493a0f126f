//! The `router` suite: labelled requests over the chat router's seven intents, written as people
//! write. A suite folder with `kind = "router"` in its `suite.toml` holds a `requests.toml`:
//!
//! ```toml
//! [[request]]
//! id = "summarize-pasted-minutes"   # [a-z0-9][a-z0-9_-]*, unique
//! text = """..."""                  # the request as typed; not empty
//! intent = "summarize"              # one of INTENTS
//! split = "dev"                     # or "heldout"
//! note = "why this label"           # optional
//! ```
//!
//! `rein bench check-suite` validates the suite and prints its counts; `rein bench SUITE
//! --models M` scores the router on it (crates/rein-cli/src/bench_cmd/router.rs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::BenchError;
use crate::suite::{valid_name, Split, SUITE_FILE};

/// The router's intents, in the chat issue's order.
pub const INTENTS: [&str; 7] = [
    "general",
    "explore",
    "summarize",
    "related",
    "report",
    "vision",
    "voice",
];
/// The file of a router suite that holds its requests.
pub const REQUESTS_FILE: &str = "requests.toml";
/// The `kind` of a router suite.
pub const KIND: &str = "router";

/// One labelled request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RouteRequest {
    pub id: String,
    pub text: String,
    pub intent: String,
    pub split: Split,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A loaded router suite; requests in file order.
#[derive(Debug, Clone)]
pub struct RouterSuite {
    pub name: String,
    pub description: String,
    pub dir: PathBuf,
    pub requests: Vec<RouteRequest>,
}

/// Counts of a router suite, for `check-suite`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RouterCounts {
    pub suite: String,
    pub requests: usize,
    pub dev: usize,
    pub heldout: usize,
    /// intent → (dev, heldout)
    pub per_intent: BTreeMap<String, SplitCounts>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SplitCounts {
    pub dev: usize,
    pub heldout: usize,
}

fn invalid(path: &Path, field: impl Into<String>, message: impl Into<String>) -> BenchError {
    BenchError::Invalid {
        path: path.to_path_buf(),
        field: field.into(),
        message: message.into(),
    }
}

fn read_table(path: &Path) -> Result<toml::Table, BenchError> {
    let text = std::fs::read_to_string(path).map_err(|e| BenchError::io(path, "read", e))?;
    text.parse().map_err(|e: toml::de::Error| BenchError::Io {
        path: path.to_path_buf(),
        message: format!("not valid TOML: {}", e.message()),
    })
}

/// The `kind` named in a suite folder's `suite.toml` (`"tasks"` when it names none).
pub fn suite_kind(dir: &Path) -> Result<String, BenchError> {
    let path = dir.join(SUITE_FILE);
    if !path.is_file() {
        return Err(BenchError::Io {
            path,
            message: "missing: a suite folder holds a suite.toml (see suites/README.md)".into(),
        });
    }
    match read_table(&path)?.get("kind") {
        None => Ok("tasks".into()),
        Some(toml::Value::String(k)) => Ok(k.clone()),
        Some(other) => Err(invalid(
            &path,
            "kind",
            format!("must be a string, not a {}", other.type_str()),
        )),
    }
}

fn string_field(
    path: &Path,
    table: &toml::Table,
    field: &str,
    label: &str,
) -> Result<Option<String>, BenchError> {
    match table.get(field) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(invalid(
            path,
            label,
            format!("must be a string, not a {}", other.type_str()),
        )),
    }
}

fn required(
    path: &Path,
    table: &toml::Table,
    field: &str,
    label: &str,
) -> Result<String, BenchError> {
    string_field(path, table, field, label)?
        .ok_or_else(|| invalid(path, label, "missing (required)"))
}

fn refuse_unknown(
    path: &Path,
    table: &toml::Table,
    allowed: &[&str],
    at: &str,
) -> Result<(), BenchError> {
    for key in table.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(invalid(
                path,
                format!("{at}{key}"),
                format!("unknown field; the fields are: {}", allowed.join(", ")),
            ));
        }
    }
    Ok(())
}

impl RouterSuite {
    /// Loads and validates a router suite folder.
    pub fn load(dir: impl AsRef<Path>) -> Result<RouterSuite, BenchError> {
        let dir = dir.as_ref();
        let suite_file = dir.join(SUITE_FILE);
        let kind = suite_kind(dir)?;
        if kind != KIND {
            return Err(invalid(
                &suite_file,
                "kind",
                format!("{kind:?} is not a router suite (kind = \"{KIND}\")"),
            ));
        }
        let table = read_table(&suite_file)?;
        refuse_unknown(&suite_file, &table, &["name", "description", "kind"], "")?;
        let name = required(&suite_file, &table, "name", "name")?;
        if !valid_name(&name) {
            return Err(invalid(
                &suite_file,
                "name",
                format!("{name:?} must match [a-z0-9][a-z0-9_-]* (at most 64 characters)"),
            ));
        }
        let description = required(&suite_file, &table, "description", "description")?;
        if description.trim().is_empty() {
            return Err(invalid(
                &suite_file,
                "description",
                "is empty; say what the suite measures",
            ));
        }
        let path = dir.join(REQUESTS_FILE);
        if !path.is_file() {
            return Err(BenchError::Io {
                path,
                message: "missing: a router suite holds its labelled requests in requests.toml"
                    .into(),
            });
        }
        let requests = parse_requests(&path, &read_table(&path)?)?;
        Ok(RouterSuite {
            name,
            description,
            dir: dir.to_path_buf(),
            requests,
        })
    }

    /// Requests per intent and split.
    pub fn counts(&self) -> RouterCounts {
        let mut per_intent: BTreeMap<String, SplitCounts> = INTENTS
            .iter()
            .map(|i| (i.to_string(), SplitCounts::default()))
            .collect();
        for r in &self.requests {
            let c = per_intent.entry(r.intent.clone()).or_default();
            match r.split {
                Split::Dev => c.dev += 1,
                Split::Heldout => c.heldout += 1,
            }
        }
        let heldout = self
            .requests
            .iter()
            .filter(|r| r.split == Split::Heldout)
            .count();
        RouterCounts {
            suite: self.name.clone(),
            requests: self.requests.len(),
            dev: self.requests.len() - heldout,
            heldout,
            per_intent,
        }
    }
}

/// Parses and validates the `[[request]]` entries of a requests file.
pub fn parse_requests(path: &Path, table: &toml::Table) -> Result<Vec<RouteRequest>, BenchError> {
    refuse_unknown(path, table, &["request"], "")?;
    let Some(entries) = table.get("request") else {
        return Err(invalid(path, "request", "no [[request]] entries"));
    };
    let Some(entries) = entries.as_array() else {
        return Err(invalid(
            path,
            "request",
            "must be an array of tables ([[request]])",
        ));
    };
    let mut out: Vec<RouteRequest> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let at = format!("request[{i}].");
        let label = |f: &str| format!("{at}{f}");
        let Some(t) = entry.as_table() else {
            return Err(invalid(path, format!("request[{i}]"), "must be a table"));
        };
        refuse_unknown(path, t, &["id", "text", "intent", "split", "note"], &at)?;
        let id = required(path, t, "id", &label("id"))?;
        if !valid_name(&id) {
            return Err(invalid(
                path,
                label("id"),
                format!("{id:?} must match [a-z0-9][a-z0-9_-]* (at most 64 characters)"),
            ));
        }
        if let Some(first) = out.iter().position(|r| r.id == id) {
            return Err(invalid(
                path,
                label("id"),
                format!("{id:?} is used twice (first by request[{first}]); ids are unique"),
            ));
        }
        let text = required(path, t, "text", &label("text"))?;
        if text.trim().is_empty() {
            return Err(invalid(
                path,
                label("text"),
                format!("request {id:?} has an empty text"),
            ));
        }
        let intent = required(path, t, "intent", &label("intent"))?;
        if !INTENTS.contains(&intent.as_str()) {
            return Err(invalid(
                path,
                label("intent"),
                format!(
                    "{intent:?} is not an intent; the intents are: {}",
                    INTENTS.join(", ")
                ),
            ));
        }
        let split = match required(path, t, "split", &label("split"))?.as_str() {
            "dev" => Split::Dev,
            "heldout" => Split::Heldout,
            other => {
                return Err(invalid(
                    path,
                    label("split"),
                    format!("{other:?} is not one of \"dev\", \"heldout\""),
                ))
            }
        };
        let note = string_field(path, t, "note", &label("note"))?;
        out.push(RouteRequest {
            id,
            text,
            intent,
            split,
            note,
        });
    }
    Ok(out)
}
