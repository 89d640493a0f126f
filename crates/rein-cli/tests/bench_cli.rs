#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `rein bench` end to end with a scripted model: runs, results.jsonl, --resume, shards, merge.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rein(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(args)
        .env("REIN_HOME", home)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn lines(p: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_scripted_bench_runs_resumes_shards_and_merges() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let suite = repo().join("suites/missions");
    let suite = suite.to_str().unwrap();
    let script = repo().join("crates/rein-engine/tests/fixtures/agent/no_reread.jsonl");
    let model = format!("scripted:{}", script.display());
    let out = scratch.path().join("out");
    let o = rein(
        home.path(),
        &[
            "bench",
            suite,
            "--models",
            &model,
            "--repeats",
            "2",
            "--jobs",
            "2",
            "--seed",
            "5",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let rows = lines(&out.join("results.jsonl"));
    assert_eq!(rows.len(), 4);
    // The script solves desk_task; on doc_extract it runs out of replies: a fail, with a reason.
    for r in &rows {
        let pass = r["task"] == "desk_task";
        assert_eq!(r["passed"], pass, "{r}");
        assert_eq!(r["contract_sha256"].as_str().unwrap().len(), 64);
        assert_eq!(r["seed"], 5 + r["repeat"].as_u64().unwrap());
        assert!(r["steps"].as_u64().unwrap() > 0);
    }
    for f in ["report.md", "report.html", "junit.xml"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    // Without --resume an existing results file is refused; with it only the new runs are done.
    let o = rein(
        home.path(),
        &[
            "bench",
            suite,
            "--models",
            &model,
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("add --resume"));
    let o = rein(
        home.path(),
        &[
            "bench",
            suite,
            "--models",
            &model,
            "--repeats",
            "3",
            "--resume",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("2 run(s) to do (4 kept"));
    assert_eq!(lines(&out.join("results.jsonl")).len(), 6);

    // Two shards cover the same runs exactly once; merged they hold all six.
    let mut dirs = Vec::new();
    for k in ["1/2", "2/2"] {
        let d = scratch.path().join(format!("shard{}", &k[..1]));
        let o = rein(
            home.path(),
            &[
                "bench",
                suite,
                "--models",
                &model,
                "--repeats",
                "3",
                "--shard",
                k,
                "--out",
                d.to_str().unwrap(),
            ],
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        dirs.push(d);
    }
    let merged = scratch.path().join("merged");
    let o = rein(
        home.path(),
        &[
            "bench",
            "merge",
            dirs[0].to_str().unwrap(),
            dirs[1].to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let keys = |p: &Path| -> Vec<(String, u64, bool)> {
        lines(&p.join("results.jsonl"))
            .iter()
            .map(|r| {
                (
                    r["task"].as_str().unwrap().to_string(),
                    r["repeat"].as_u64().unwrap(),
                    r["passed"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(keys(&merged), keys(&out));
    // A shard merged with itself is refused.
    let o = rein(
        home.path(),
        &[
            "bench",
            "merge",
            dirs[0].to_str().unwrap(),
            dirs[0].to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("appears more than once"));
}
