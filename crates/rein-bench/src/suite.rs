//! Suites and tasks on disk. The format is documented in `suites/README.md`:
//!
//! ```text
//! <suite>/suite.toml            name, description
//! <suite>/<task-id>/task.toml   category, split, sandbox, [mission], [id], [variables]
//! <suite>/<task-id>/mission.json ... (or `mission = "<path relative to the task folder>"`)
//! ```
//!
//! Loading validates every field (errors name the file and the field) and loads every task's
//! mission with `Mission::load`, so a loaded suite holds frozen contracts.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use rein_engine::mission::{FrozenContract, Mission};
use serde::{Deserialize, Serialize};

use crate::error::BenchError;

/// The suite's own file.
pub const SUITE_FILE: &str = "suite.toml";
/// The bench fields of a task.
pub const TASK_FILE: &str = "task.toml";
/// Longest suite name, task id or category.
pub const MAX_NAME_LEN: usize = 64;

/// Which part of a suite a task belongs to: prompts and settings are tuned on `dev` only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    Dev,
    Heldout,
}

impl Split {
    pub fn as_str(self) -> &'static str {
        match self {
            Split::Dev => "dev",
            Split::Heldout => "heldout",
        }
    }
}

impl fmt::Display for Split {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a task's actions land.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sandbox {
    /// A fresh temp directory seeded from the mission's fixtures; the desk tools.
    Dir,
    /// A fresh in-memory sandbox (files and variables) seeded from the mission's inputs and the
    /// task's `variables`; the sandbox tools, ending at `final_answer`.
    Memory,
}

impl Sandbox {
    pub fn as_str(self) -> &'static str {
        match self {
            Sandbox::Dir => "dir",
            Sandbox::Memory => "memory",
        }
    }
}

/// The tools a memory task may list (the sandbox registry's).
pub const MEMORY_TOOLS: &[&str] = &[
    "create_file",
    "read_file",
    "list_files",
    "delete_file",
    "set_variable",
    "get_variable",
    "final_answer",
];

/// One bench task: a mission plus its bench fields.
#[derive(Debug, Clone)]
pub struct Task {
    /// The task folder's name.
    pub id: String,
    pub category: String,
    pub split: Split,
    pub sandbox: Sandbox,
    /// Memory tasks: the variables the sandbox starts with (name → text).
    pub variables: BTreeMap<String, String>,
    /// The task folder.
    pub dir: PathBuf,
    /// Its `task.toml`.
    pub task_file: PathBuf,
    /// The mission folder or file the contract was loaded from.
    pub mission_path: PathBuf,
    pub contract: FrozenContract,
}

/// A loaded suite; tasks sorted by id.
#[derive(Debug, Clone)]
pub struct Suite {
    pub name: String,
    pub description: String,
    pub dir: PathBuf,
    pub tasks: Vec<Task>,
}

/// True for a name that may be a suite name, task id or category: `[a-z0-9][a-z0-9_-]*`, at most
/// [`MAX_NAME_LEN`] characters.
pub fn valid_name(s: &str) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    s.len() <= MAX_NAME_LEN
        && (first.is_ascii_lowercase() || first.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

const NAME_RULE: &str = "must match [a-z0-9][a-z0-9_-]* (at most 64 characters)";

/// A TOML file read into a table, with field access that names file and field in its errors.
struct Fields {
    path: PathBuf,
    table: toml::Table,
}

impl Fields {
    fn read(path: &Path, allowed: &[&str]) -> Result<Fields, BenchError> {
        let text = std::fs::read_to_string(path).map_err(|e| BenchError::io(path, "read", e))?;
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| BenchError::Io {
            path: path.to_path_buf(),
            message: format!("not valid TOML: {}", e.message()),
        })?;
        for key in table.keys() {
            if !allowed.contains(&key.as_str()) {
                return Err(BenchError::Invalid {
                    path: path.to_path_buf(),
                    field: key.clone(),
                    message: format!("unknown field; the fields are: {}", allowed.join(", ")),
                });
            }
        }
        Ok(Fields {
            path: path.to_path_buf(),
            table,
        })
    }

    fn invalid(&self, field: &str, message: impl Into<String>) -> BenchError {
        BenchError::Invalid {
            path: self.path.clone(),
            field: field.to_string(),
            message: message.into(),
        }
    }

    fn optional(&self, field: &str) -> Result<Option<String>, BenchError> {
        match self.table.get(field) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.invalid(
                field,
                format!("must be a string, not a {}", other.type_str()),
            )),
        }
    }

    fn required(&self, field: &str) -> Result<String, BenchError> {
        self.optional(field)?
            .ok_or_else(|| self.invalid(field, "missing (required)"))
    }

    fn name(&self, field: &str) -> Result<String, BenchError> {
        let v = self.required(field)?;
        if !valid_name(&v) {
            return Err(self.invalid(field, format!("{v:?} {NAME_RULE}")));
        }
        Ok(v)
    }
}

impl Fields {
    /// `[variables]`: a memory task's starting variables, each a string.
    fn variables(&self, sandbox: Sandbox) -> Result<BTreeMap<String, String>, BenchError> {
        let Some(v) = self.table.get("variables") else {
            return Ok(BTreeMap::new());
        };
        if sandbox != Sandbox::Memory {
            return Err(self.invalid(
                "variables",
                "only a memory task (sandbox = \"memory\") starts with variables",
            ));
        }
        let Some(table) = v.as_table() else {
            return Err(self.invalid(
                "variables",
                format!("must be a table of name = \"text\", not a {}", v.type_str()),
            ));
        };
        let mut out = BTreeMap::new();
        for (name, value) in table {
            let Some(text) = value.as_str() else {
                return Err(self.invalid(
                    &format!("variables.{name}"),
                    format!("must be a string, not a {}", value.type_str()),
                ));
            };
            if name.is_empty() || name.chars().count() > 128 {
                return Err(self.invalid("variables", "a variable name has 1 to 128 characters"));
            }
            out.insert(name.clone(), text.to_string());
        }
        Ok(out)
    }
}

/// A memory task's mission lists only sandbox tools, and `final_answer` (its only way to end).
fn check_memory_tools(fields: &Fields, contract: &FrozenContract) -> Result<(), BenchError> {
    let tools = &contract.mission.tools;
    if let Some(t) = tools.iter().find(|t| !MEMORY_TOOLS.contains(&t.as_str())) {
        return Err(fields.invalid(
            "sandbox",
            format!(
                "a memory task's mission lists only sandbox tools ({}); its mission lists `{t}`",
                MEMORY_TOOLS.join(", ")
            ),
        ));
    }
    if !tools.iter().any(|t| t == "final_answer") {
        return Err(fields.invalid(
            "sandbox",
            "a memory task's mission must list final_answer: it is how a memory run ends",
        ));
    }
    Ok(())
}

impl Suite {
    /// Loads and validates a suite folder and every task in it.
    pub fn load(dir: impl AsRef<Path>) -> Result<Suite, BenchError> {
        let dir = dir.as_ref();
        let suite_file = dir.join(SUITE_FILE);
        if !suite_file.is_file() {
            return Err(BenchError::Io {
                path: suite_file,
                message: "missing: a suite folder holds a suite.toml (see suites/README.md)".into(),
            });
        }
        let fields = Fields::read(&suite_file, &["name", "description", "kind"])?;
        // Only task suites load here; a router suite holds labelled requests (crate::router).
        if let Some(kind) = fields.optional("kind")? {
            if kind != "tasks" {
                return Err(fields.invalid(
                    "kind",
                    format!("{kind:?}: only \"tasks\" suites hold tasks (a \"router\" suite is loaded by rein_bench::router)"),
                ));
            }
        }
        let name = fields.name("name")?;
        let description = fields.required("description")?;
        if description.trim().is_empty() {
            return Err(fields.invalid("description", "is empty; say what the suite measures"));
        }
        let entries = std::fs::read_dir(dir).map_err(|e| BenchError::io(dir, "list", e))?;
        let mut task_dirs = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| BenchError::io(dir, "list", e))?;
            let path = entry.path();
            if !path.is_dir() {
                continue;
            }
            let fname = entry.file_name().to_string_lossy().into_owned();
            if fname.starts_with('.') || fname.starts_with('_') {
                continue;
            }
            task_dirs.push((fname, path));
        }
        task_dirs.sort();
        let mut tasks = Vec::with_capacity(task_dirs.len());
        for (fname, path) in task_dirs {
            tasks.push(Task::load(&path, &fname)?);
        }
        if tasks.is_empty() {
            return Err(BenchError::Io {
                path: dir.to_path_buf(),
                message: "the suite has no tasks (one folder with a task.toml per task)".into(),
            });
        }
        Ok(Suite {
            name,
            description,
            dir: dir.to_path_buf(),
            tasks,
        })
    }
}

impl Task {
    /// Loads one task folder; `folder_name` is its id.
    pub fn load(dir: &Path, folder_name: &str) -> Result<Task, BenchError> {
        let task_file = dir.join(TASK_FILE);
        if !valid_name(folder_name) {
            return Err(BenchError::Io {
                path: dir.to_path_buf(),
                message: format!(
                    "the task folder's name is its id, and {folder_name:?} {NAME_RULE}"
                ),
            });
        }
        if !task_file.is_file() {
            return Err(BenchError::Io {
                path: task_file,
                message: "missing: every folder of a suite is a task and holds a task.toml \
                          (folders starting with `_` or `.` are skipped)"
                    .into(),
            });
        }
        let fields = Fields::read(
            &task_file,
            &["category", "split", "sandbox", "mission", "id", "variables"],
        )?;
        if let Some(id) = fields.optional("id")? {
            if id != folder_name {
                return Err(fields.invalid(
                    "id",
                    format!("{id:?} differs from the folder name {folder_name:?}; the id is the folder name"),
                ));
            }
        }
        let category = fields.name("category")?;
        let split = match fields.required("split")?.as_str() {
            "dev" => Split::Dev,
            "heldout" => Split::Heldout,
            other => {
                return Err(fields.invalid(
                    "split",
                    format!("{other:?} is not one of \"dev\", \"heldout\""),
                ))
            }
        };
        let sandbox = match fields.required("sandbox")?.as_str() {
            "dir" => Sandbox::Dir,
            "memory" => Sandbox::Memory,
            other => {
                return Err(fields.invalid(
                    "sandbox",
                    format!("{other:?} is not one of \"dir\", \"memory\""),
                ))
            }
        };
        let variables = fields.variables(sandbox)?;
        let mission_path = match fields.optional("mission")? {
            None => dir.to_path_buf(),
            Some(rel) => {
                if rel.trim().is_empty() || Path::new(&rel).is_absolute() {
                    return Err(fields.invalid(
                        "mission",
                        format!("{rel:?} must be a path relative to the task folder"),
                    ));
                }
                let p = dir.join(&rel);
                if !p.exists() {
                    return Err(fields.invalid(
                        "mission",
                        format!("{rel:?} does not exist (looked for {})", p.display()),
                    ));
                }
                p
            }
        };
        let contract = Mission::load(&mission_path).map_err(|source| BenchError::Mission {
            task_toml: task_file.clone(),
            source,
        })?;
        if sandbox == Sandbox::Memory {
            check_memory_tools(&fields, &contract)?;
        }
        Ok(Task {
            id: folder_name.to_string(),
            category,
            split,
            sandbox,
            variables,
            dir: dir.to_path_buf(),
            task_file,
            mission_path,
            contract,
        })
    }
}
