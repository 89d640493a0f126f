//! The bench's in-memory sandbox (files plus a variable store) and its seven tools. A fresh
//! [`Sandbox`] per run gives every model the same starting world; the judge reads its final
//! state and action log, never the model's account of what it did.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{json, Value};

use crate::desk::{object_schema, path_schema, text_schema};
use crate::registry::ToolRegistry;
use crate::tool::{args, Tool, ToolContext, ToolError, ToolOutput};
use crate::RelPath;

/// Most files one sandbox holds; past it `create_file` refuses.
pub const SANDBOX_MAX_FILES: usize = 1_000;
/// Most variables one sandbox holds.
pub const SANDBOX_MAX_VARIABLES: usize = 1_000;

/// One tool call the sandbox saw, in order, whether or not it succeeded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ActionRecord {
    pub action: String,
    pub ok: bool,
}

/// Files (path → text), variables (name → JSON value), the final answer and the action log.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sandbox {
    pub files: BTreeMap<String, String>,
    pub variables: BTreeMap<String, Value>,
    pub final_answer: Option<String>,
    pub actions: Vec<ActionRecord>,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox::default()
    }

    /// True when the action log holds a successful call of `action`.
    pub fn called(&self, action: &str) -> bool {
        self.actions.iter().any(|a| a.ok && a.action == action)
    }
}

/// The sandbox tools.
pub fn sandbox_registry() -> ToolRegistry {
    ToolRegistry::with_builtins(vec![
        Box::new(SandboxTool::CreateFile),
        Box::new(SandboxTool::ReadFile),
        Box::new(SandboxTool::ListFiles),
        Box::new(SandboxTool::DeleteFile),
        Box::new(SandboxTool::SetVariable),
        Box::new(SandboxTool::GetVariable),
        Box::new(SandboxTool::FinalAnswer),
    ])
}

/// The seven sandbox tools; one type because they share the logging and the context check.
#[derive(Debug, Clone, Copy)]
enum SandboxTool {
    CreateFile,
    ReadFile,
    ListFiles,
    DeleteFile,
    SetVariable,
    GetVariable,
    FinalAnswer,
}

fn name_schema() -> Value {
    json!({ "type": "string", "minLength": 1, "maxLength": 128, "description": "variable name" })
}

impl Tool for SandboxTool {
    fn name(&self) -> &str {
        match self {
            SandboxTool::CreateFile => "create_file",
            SandboxTool::ReadFile => "read_file",
            SandboxTool::ListFiles => "list_files",
            SandboxTool::DeleteFile => "delete_file",
            SandboxTool::SetVariable => "set_variable",
            SandboxTool::GetVariable => "get_variable",
            SandboxTool::FinalAnswer => "final_answer",
        }
    }

    fn description(&self) -> &str {
        match self {
            SandboxTool::CreateFile => {
                "Create a file with the given content (an existing file is overwritten)."
            }
            SandboxTool::ReadFile => "Read a file's content.",
            SandboxTool::ListFiles => "List all files.",
            SandboxTool::DeleteFile => "Delete a file.",
            SandboxTool::SetVariable => "Store a value under a variable name.",
            SandboxTool::GetVariable => "Read a stored variable.",
            SandboxTool::FinalAnswer => "Give the final answer and end the task.",
        }
    }

    fn schema(&self) -> Value {
        match self {
            SandboxTool::CreateFile => object_schema(
                json!({ "path": path_schema("file name"), "content": text_schema("file content") }),
                &["path", "content"],
            ),
            SandboxTool::ReadFile | SandboxTool::DeleteFile => {
                object_schema(json!({ "path": path_schema("file name") }), &["path"])
            }
            SandboxTool::ListFiles => object_schema(json!({}), &[]),
            SandboxTool::SetVariable => object_schema(
                json!({ "name": name_schema(), "value": text_schema("value to store") }),
                &["name", "value"],
            ),
            SandboxTool::GetVariable => object_schema(json!({ "name": name_schema() }), &["name"]),
            SandboxTool::FinalAnswer => object_schema(
                json!({ "answer": text_schema("the final answer") }),
                &["answer"],
            ),
        }
    }

    fn mutates(&self) -> bool {
        matches!(
            self,
            SandboxTool::CreateFile
                | SandboxTool::DeleteFile
                | SandboxTool::SetVariable
                | SandboxTool::FinalAnswer
        )
    }

    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let ToolContext::Sandbox(sandbox) = ctx else {
            return Err(ToolError::WrongContext {
                tool: self.name().to_string(),
                needs: "the bench sandbox",
            });
        };
        let result = self.apply(sandbox, a);
        sandbox.actions.push(ActionRecord {
            action: self.name().to_string(),
            ok: result.is_ok(),
        });
        result.map(ToolOutput::Data)
    }
}

impl SandboxTool {
    fn apply(&self, sandbox: &mut Sandbox, a: &Value) -> Result<Value, ToolError> {
        let tool = self.name();
        // Sandbox paths obey the same lexical rules as real ones, so a model learns one habit.
        let path = || -> Result<String, ToolError> {
            Ok(RelPath::parse(args::str(tool, a, "path")?)?.to_string())
        };
        match self {
            SandboxTool::CreateFile => {
                let path = path()?;
                let content = args::str(tool, a, "content")?.to_string();
                if !sandbox.files.contains_key(&path) && sandbox.files.len() >= SANDBOX_MAX_FILES {
                    return Err(ToolError::Refused(format!(
                        "the sandbox already holds {SANDBOX_MAX_FILES} files, its limit"
                    )));
                }
                let overwritten = sandbox.files.insert(path.clone(), content).is_some();
                Ok(json!({ "path": path, "created": !overwritten, "overwritten": overwritten }))
            }
            SandboxTool::ReadFile => {
                let path = path()?;
                match sandbox.files.get(&path) {
                    Some(content) => Ok(json!({ "path": path, "content": content })),
                    None => Err(ToolError::Refused(no_such_file(sandbox, &path, tool))),
                }
            }
            SandboxTool::ListFiles => {
                Ok(json!({ "files": sandbox.files.keys().collect::<Vec<_>>() }))
            }
            SandboxTool::DeleteFile => {
                let path = path()?;
                match sandbox.files.remove(&path) {
                    Some(_) => Ok(json!({ "path": path, "deleted": true })),
                    None => Err(ToolError::Refused(no_such_file(sandbox, &path, tool))),
                }
            }
            SandboxTool::SetVariable => {
                let name = args::str(tool, a, "name")?.to_string();
                let value = a.get("value").cloned().unwrap_or(Value::Null);
                if !sandbox.variables.contains_key(&name)
                    && sandbox.variables.len() >= SANDBOX_MAX_VARIABLES
                {
                    return Err(ToolError::Refused(format!(
                        "the sandbox already holds {SANDBOX_MAX_VARIABLES} variables, its limit"
                    )));
                }
                sandbox.variables.insert(name.clone(), value.clone());
                Ok(json!({ "name": name, "value": value }))
            }
            SandboxTool::GetVariable => {
                let name = args::str(tool, a, "name")?;
                match sandbox.variables.get(name) {
                    Some(value) => Ok(json!({ "name": name, "value": value })),
                    None => Err(ToolError::Refused(format!(
                        "no variable named \"{name}\" is set"
                    ))),
                }
            }
            SandboxTool::FinalAnswer => {
                let answer = args::str(tool, a, "answer")?.to_string();
                sandbox.final_answer = Some(answer.clone());
                Ok(json!({ "final_answer": answer }))
            }
        }
    }
}

/// Files a refusal names when it lists what exists.
const LISTED_FILES: usize = 10;

/// Why `path` names no file, in words that help a small model on: several names packed into one
/// path (`"a.tmp, b.tmp"`) are named back with "one file per call", else the files that exist.
/// Nothing was done either way.
fn no_such_file(sandbox: &Sandbox, path: &str, tool: &str) -> String {
    let parts: Vec<&str> = path
        .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .map(str::trim)
        .filter(|p| !p.is_empty() && *p != "and")
        .collect();
    if parts.len() > 1 && parts.iter().all(|p| sandbox.files.contains_key(*p)) {
        let named: Vec<String> = parts.iter().map(|p| format!("\"{p}\"")).collect();
        return format!(
            "\"{path}\" does not exist: a path names one file; call {tool} once for each of {}; \
             nothing was done",
            named.join(", ")
        );
    }
    if sandbox.files.is_empty() {
        return format!("\"{path}\" does not exist: the sandbox holds no files; nothing was done");
    }
    let mut names: Vec<String> = sandbox
        .files
        .keys()
        .take(LISTED_FILES)
        .map(|p| format!("\"{p}\""))
        .collect();
    if sandbox.files.len() > LISTED_FILES {
        names.push(format!("and {} more", sandbox.files.len() - LISTED_FILES));
    }
    format!(
        "\"{path}\" does not exist; the files are {}; nothing was done",
        names.join(", ")
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod no_such_file_tests {
    use super::*;

    fn sandbox(files: &[&str]) -> Sandbox {
        let mut s = Sandbox::default();
        for f in files {
            s.files.insert((*f).to_string(), String::new());
        }
        s
    }

    #[test]
    fn several_names_in_one_path_are_named_back_one_per_call() {
        let s = sandbox(&["a.tmp", "b.tmp", "keep.txt"]);
        for packed in [
            "a.tmp, b.tmp",
            "a.tmp b.tmp",
            "a.tmp;b.tmp",
            "a.tmp and b.tmp",
        ] {
            let m = no_such_file(&s, packed, "delete_file");
            assert!(
                m.contains("call delete_file once for each of \"a.tmp\", \"b.tmp\""),
                "{packed}: {m}"
            );
        }
        // A part that does not exist: no such advice, the listing instead.
        let m = no_such_file(&s, "a.tmp, c.tmp", "delete_file");
        assert!(!m.contains("once for each"), "{m}");
        assert!(
            m.contains("the files are \"a.tmp\", \"b.tmp\", \"keep.txt\""),
            "{m}"
        );
    }

    #[test]
    fn the_listing_is_capped_and_says_so_and_an_empty_sandbox_says_so() {
        let names: Vec<String> = (0..25).map(|i| format!("f{i:02}.txt")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let m = no_such_file(&sandbox(&refs), "x.txt", "read_file");
        assert!(m.contains("and 15 more"), "{m}");
        assert!(!m.contains("f10.txt"), "{m}");
        let m = no_such_file(&sandbox(&[]), "x.txt", "read_file");
        assert!(m.contains("holds no files"), "{m}");
    }
}
