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
    findings.extend(cpu_findings(
        &rein_llama::cpu::built_features(),
        &cpu_flags(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default()),
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

/// The flags of the first processor in /proc/cpuinfo.
fn cpu_flags(cpuinfo: &str) -> Vec<String> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, flags)| flags.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// What llama.cpp was built to use against what the CPU has: a used feature the CPU lacks is a
/// failure (the worker would die of an illegal instruction), an unused one a warning (slower).
fn cpu_findings(built: &[(&str, bool)], cpu: &[String]) -> Vec<Finding> {
    let listed = |want: bool, from_cpu: bool| -> Vec<&str> {
        built
            .iter()
            .filter(|(name, used)| {
                if from_cpu {
                    cpu.iter().any(|f| f == name) == want
                } else {
                    *used == want
                }
            })
            .map(|(name, _)| *name)
            .collect()
    };
    let used = listed(true, false);
    let has = listed(true, true);
    let mut findings = vec![finding(
        "cpu features",
        true,
        format!(
            "llama.cpp built with: {}; this CPU has: {}",
            join_or_none(&used),
            if cpu.is_empty() {
                "unknown (no /proc/cpuinfo flags)".to_string()
            } else {
                join_or_none(&has)
            }
        ),
        "",
        false,
    )];
    if cpu.is_empty() {
        return findings;
    }
    let missing: Vec<&str> = used.iter().filter(|f| !has.contains(f)).copied().collect();
    let unused: Vec<&str> = has.iter().filter(|f| !used.contains(f)).copied().collect();
    if !missing.is_empty() {
        findings.push(finding(
            "cpu features missing",
            false,
            format!(
                "this build uses {} which this CPU lacks: embedded models will crash",
                missing.join(", ")
            ),
            "rebuild rein on this machine (./scripts/setup.sh)",
            true,
        ));
    }
    if !unused.is_empty() {
        findings.push(finding(
            "cpu features unused",
            false,
            format!(
                "this CPU has {} but this build does not use them: inference is slower than it could be",
                unused.join(", ")
            ),
            "rebuild with RUSTFLAGS=\"-C target-cpu=native\" cargo build --release -p rein-cli (the binary then runs only on CPUs like this one)",
            false,
        ));
    }
    findings
}

fn join_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "none of those checked".to_string()
    } else {
        names.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(s: &str) -> Vec<String> {
        cpu_flags(&format!("processor : 0\nflags\t\t: {s}\n"))
    }

    #[test]
    fn a_feature_the_cpu_lacks_fails_and_an_unused_one_warns() {
        let built = [("avx", true), ("avx2", true), ("avx512f", false)];
        let same = cpu_findings(&built, &flags("fpu avx avx2"));
        assert_eq!(same.len(), 1);
        assert_eq!(same[0].status, "ok");
        assert!(
            same[0].detail.contains("built with: avx avx2"),
            "{}",
            same[0].detail
        );

        let old_cpu = cpu_findings(&built, &flags("fpu avx"));
        assert_eq!(old_cpu[1].status, "fail");
        assert!(
            old_cpu[1].detail.contains("uses avx2"),
            "{}",
            old_cpu[1].detail
        );

        let new_cpu = cpu_findings(&built, &flags("avx avx2 avx512f"));
        assert_eq!(new_cpu[1].status, "warn");
        assert!(
            new_cpu[1].detail.contains("has avx512f"),
            "{}",
            new_cpu[1].detail
        );

        assert_eq!(cpu_findings(&built, &[]).len(), 1);
    }
}
