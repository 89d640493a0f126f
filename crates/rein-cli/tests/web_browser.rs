#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The web UI in a real browser: `node web-tests/run.mjs` drives Debian's headless Chromium
//! (playwright-core) against this build's `rein serve` with scripted models (toy bench task,
//! approval cards allowed, denied, expired and stale, undo, hostile text shown as text, no
//! token refused, the run viewer), and one bench run with the real 0.5B model.
//!
//! These need Node, `web-tests/node_modules` (`cd web-tests && npm ci`) and `/usr/bin/chromium`;
//! without them the tests say what is missing and skip (`.ci/run` installs them, so CI runs them).

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Why the browser tests cannot run here, if they cannot.
fn missing() -> Option<String> {
    let web_tests = repo().join("web-tests");
    if !web_tests.join("node_modules/playwright-core").is_dir() {
        return Some(format!(
            "{} has no node_modules/playwright-core: run `(cd web-tests && npm ci)`",
            web_tests.display()
        ));
    }
    if !PathBuf::from("/usr/bin/chromium").is_file() {
        return Some("/usr/bin/chromium is missing: `apt-get install -y chromium`".into());
    }
    if Command::new("node").arg("--version").output().is_err() {
        return Some("node is not installed: `apt-get install -y nodejs npm`".into());
    }
    None
}

/// One browser run at a time: the real-model run would otherwise starve the scripted ones'
/// timeouts on a small machine.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(only: Option<&str>, extra: &[(&str, String)]) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = missing() {
        eprintln!("SKIPPED: the browser tests cannot run here: {why}");
        return;
    }
    let out_dir = repo().join("target/web-tests");
    let mut command = Command::new("node");
    command
        .arg("run.mjs")
        .current_dir(repo().join("web-tests"))
        .env("REIN_BIN", env!("CARGO_BIN_EXE_rein"))
        .env("OUT", &out_dir);
    if let Some(name) = only {
        command.env("REIN_WEB_ONLY", name);
    }
    for (k, v) in extra {
        command.env(k, v);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "the browser tests failed (screenshots in {}):\n{stdout}\n{stderr}",
        out_dir.display()
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
    assert!(
        !stdout.contains("0 passed,"),
        "no browser test ran: {stdout}"
    );
}

#[test]
fn browser_pages_with_scripted_models() {
    run(None, &[]);
}

#[test]
fn real_model_browser_bench_run() {
    if std::env::var("REIN_SKIP_MODEL_TESTS").is_ok_and(|v| v == "1") {
        return;
    }
    let models = rein_models::DataDir::from_env().unwrap().models_dir();
    run(
        Some("real_model_bench"),
        &[("REIN_MODELS_DIR", models.display().to_string())],
    );
}
