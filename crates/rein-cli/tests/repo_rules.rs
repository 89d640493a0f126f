#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Rules about the tree itself: Rein is Rust, and stays so.

use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            if !matches!(name.as_str(), ".git" | "target" | "tgt" | "node_modules") {
                python_files(&path, found);
            }
        } else if name.ends_with(".py")
            || name.ends_with(".pyi")
            || name.ends_with(".pyw")
            || matches!(
                name.as_str(),
                "pyproject.toml" | "setup.py" | "setup.cfg" | "requirements.txt" | "Pipfile"
            )
        {
            found.push(path);
        }
    }
}

#[test]
fn no_python_source_is_in_the_tree() {
    let mut found = Vec::new();
    python_files(&repo_root(), &mut found);
    assert!(
        found.is_empty(),
        "Rein is Rust; remove these Python files: {found:?}"
    );
}

#[test]
fn the_python_rule_sees_a_python_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
    std::fs::write(dir.path().join("a/b/tool.py"), "print(1)").unwrap();
    let mut found = Vec::new();
    python_files(dir.path(), &mut found);
    assert_eq!(found.len(), 1);
}
