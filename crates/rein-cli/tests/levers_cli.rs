#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `--lever NAME=on|off` on `rein run` and `rein bench`: a misspelt lever is refused before
//! anything runs, and the bench records the run's levers in results.jsonl.

#[path = "bench_support/mod.rs"]
mod bench_support;

use bench_support::{lines, rein, repo};

fn script(name: &str) -> String {
    let p = repo()
        .join("crates/rein-engine/tests/fixtures/agent")
        .join(name);
    format!("scripted:{}", p.display())
}

#[test]
fn an_unknown_lever_is_refused_with_the_names_before_anything_runs() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let ws = scratch.path().join("ws");
    let mission = repo().join("missions/desk_task");
    let o = rein(
        home.path(),
        &[
            "run",
            mission.to_str().unwrap(),
            "--workspace",
            ws.to_str().unwrap(),
            "--model",
            &script("good.jsonl"),
            "--approve=all",
            "--lever",
            "fact-tools=on",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown lever `fact-tools`"), "{err}");
    assert!(
        err.contains("facts-tools, requirements, repeat-escape, repeat-penalty"),
        "{err}"
    );
    assert!(!ws.exists(), "nothing was prepared for a refused run");
}

#[test]
fn a_run_with_levers_passes_and_the_bench_records_them() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let ws = scratch.path().join("ws");
    let mission = repo().join("missions/desk_task");
    let o = rein(
        home.path(),
        &[
            "run",
            mission.to_str().unwrap(),
            "--workspace",
            ws.to_str().unwrap(),
            "--model",
            &script("good.jsonl"),
            "--approve=all",
            "--lever",
            "all=on",
            "--lever",
            "repeat-penalty=off",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );

    let out = scratch.path().join("out");
    let suite = repo().join("suites/missions");
    let o = rein(
        home.path(),
        &[
            "bench",
            suite.to_str().unwrap(),
            "--models",
            &script("no_reread.jsonl"),
            "--lever",
            "requirements=on",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(
        o.status.code().is_some(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let rows = lines(&out.join("results.jsonl"));
    assert!(!rows.is_empty());
    for r in rows {
        assert_eq!(r["levers"]["requirements"], true, "{r}");
        assert_eq!(r["levers"]["facts-tools"], false, "{r}");
        assert_eq!(r["levers"]["repeat-penalty"], true, "{r}");
    }
}
