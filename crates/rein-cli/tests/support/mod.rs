//! What the `rein tool`, `rein changes` and `rein undo` tests share: a data dir and a workspace
//! of their own, and the binary run against them.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

pub struct Env {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub ws: PathBuf,
}

pub fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("notes.txt"), "alpha\nbeta\n").unwrap();
    Env {
        _dir: dir,
        home,
        ws,
    }
}

impl Env {
    pub fn rein(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_rein"))
            .args(args)
            .env("REIN_HOME", &self.home)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    pub fn tool(&self, name: &str, json: &str, extra: &[&str]) -> (i32, Value) {
        let ws = self.ws.to_str().unwrap();
        let mut args = vec!["tool", "--workspace", ws, name, json];
        args.extend_from_slice(extra);
        let out = self.rein(&args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let report: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON document ({e}): {stdout:?}; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        for key in ["outcome", "reason", "result"] {
            assert!(report.get(key).is_some(), "{key} missing: {report}");
        }
        (out.status.code().unwrap(), report)
    }

    pub fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.ws.join(name)).ok()
    }
}

/// Whether the tests that load the packaged models are skipped (REIN_SKIP_MODEL_TESTS=1).
pub fn skip_model_tests() -> bool {
    std::env::var("REIN_SKIP_MODEL_TESTS").is_ok_and(|v| v == "1")
}

/// A data dir of its own at `home` that sees the installed models, so a real-model test never
/// touches the real journal or chat store. Returns the models folder.
pub fn home_with_installed_models(home: &std::path::Path) -> PathBuf {
    std::fs::create_dir_all(home).unwrap();
    let models = rein_models::DataDir::from_env().unwrap().models_dir();
    std::os::unix::fs::symlink(&models, home.join("models")).unwrap();
    models
}
