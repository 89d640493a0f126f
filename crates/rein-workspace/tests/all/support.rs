//! Shared fixtures: a temp folder with a workspace inside and an "outside" folder beside it.

use std::fs;
use std::path::{Path, PathBuf};

use rein_workspace::{desk_registry, ToolContext, ToolError, ToolOutput, ToolRegistry, Workspace};
use serde_json::Value;
use tempfile::TempDir;

pub struct Fixture {
    pub _tmp: TempDir,
    pub root: PathBuf,
    pub outside: PathBuf,
}

impl Fixture {
    pub fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        let outside = tmp.path().join("outside");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret.txt"), "TOP SECRET").unwrap();
        Fixture {
            _tmp: tmp,
            root,
            outside,
        }
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }

    pub fn ws(&self) -> Workspace {
        Workspace::open(&self.root).unwrap()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
}

pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// Both opening methods, so the `openat2` path and the walk fallback are each tested.
pub fn both(root: &Path) -> Vec<Workspace> {
    vec![
        Workspace::open(root).unwrap(),
        Workspace::open_with_walk_fallback(root).unwrap(),
    ]
}

/// Runs a desk tool through the registry (validation included).
pub fn desk(ws: &Workspace, tool: &str, args: Value) -> Result<ToolOutput, ToolError> {
    let registry: ToolRegistry = desk_registry();
    registry.call(&mut ToolContext::Desk(ws), tool, &args)
}

/// Runs a desk tool that must return data.
pub fn data(ws: &Workspace, tool: &str, args: Value) -> Value {
    match desk(ws, tool, args).unwrap() {
        ToolOutput::Data(v) => v,
        other => panic!("expected data, got {other:?}"),
    }
}

/// The answer of `table_rows` on `path` with `where_`, which must not be refused.
pub fn table_rows(f: &Fixture, path: &str, where_: &str) -> Value {
    data(
        &f.ws(),
        "table_rows",
        serde_json::json!({"path": path, "where": where_}),
    )
}

/// The refusal of `table_rows` on `path` with `where_`, which must be refused.
pub fn table_rows_refusal(f: &Fixture, path: &str, where_: &str) -> String {
    refusal(
        &f.ws(),
        "table_rows",
        serde_json::json!({"path": path, "where": where_}),
    )
}

/// The cells of `column` of a `table_rows` answer's listed matching rows.
pub fn listed_cells(out: &Value, column: &str) -> Vec<String> {
    out["matching_rows"]
        .as_array()
        .unwrap_or_else(|| panic!("no matching_rows: {out}"))
        .iter()
        .map(|r| r[column].as_str().unwrap_or("?").to_string())
        .collect()
}

/// The refusal message of a desk tool that must refuse.
pub fn refusal(ws: &Workspace, tool: &str, args: Value) -> String {
    match desk(ws, tool, args) {
        Err(e) => e.to_string(),
        Ok(out) => panic!("expected a refusal, got {out:?}"),
    }
}
