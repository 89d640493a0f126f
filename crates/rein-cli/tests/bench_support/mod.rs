//! What the `rein bench` end-to-end tests share: the repository root and the binary run with
//! its own data folder.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `rein ARGS` with `home` as its data folder and no terminal on stdin.
pub fn rein(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(args)
        .env("REIN_HOME", home)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The JSON lines of a file (results.jsonl).
pub fn lines(p: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
