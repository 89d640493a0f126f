#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `--samples K` on `rein run`: a count outside 1 to 8 is refused before anything runs; with a
//! scripted model whose first draw is wrong and second right, the run proposes the second,
//! says so at the terminal, and its verdict document keeps pass@1 and best-of-K apart.

#[path = "bench_support/mod.rs"]
mod bench_support;

use bench_support::{rein, repo};
use serde_json::json;

fn line(action: &str, parameters: serde_json::Value) -> String {
    json!({"thought": "Next.", "action": action, "parameters": parameters}).to_string() + "\n"
}

/// Reads the inputs, then two candidate writes (a wrong total, then the gold report), reads
/// the report back and finishes.
fn script(dir: &std::path::Path) -> String {
    let gold =
        std::fs::read_to_string(repo().join("crates/rein-engine/tests/fixtures/agent/report.md"))
            .unwrap();
    let mut s = String::new();
    for p in [
        "notes/overview.md",
        "notes/meeting-notes.md",
        "data/tasks.csv",
    ] {
        s += &line("read_file", json!({"path": p}));
    }
    for content in [gold.replace("Total hours: 64", "Total hours: 72"), gold] {
        s += &line(
            "create_file",
            json!({"path": "out/summary.md", "content": content}),
        );
    }
    s += &line("read_file", json!({"path": "out/summary.md"}));
    s += &line("finish", json!({"summary": "done"}));
    let path = dir.join("sampling.jsonl");
    std::fs::write(&path, s).unwrap();
    format!("scripted:{}", path.display())
}

fn run(
    samples: &str,
    json_out: bool,
) -> (std::process::Output, std::path::PathBuf, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let ws = home.path().join("ws");
    let model = script(home.path());
    let mission = repo().join("missions/desk_task");
    let mut args = vec![
        "run".to_string(),
        mission.display().to_string(),
        "--workspace".into(),
        ws.display().to_string(),
        "--model".into(),
        model,
        "--approve=all".into(),
        "--samples".into(),
        samples.into(),
    ];
    if json_out {
        args.push("--json".into());
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = rein(&home.path().join("home"), &refs);
    (o, ws, home)
}

#[test]
fn a_count_outside_one_to_eight_is_refused_before_anything_runs() {
    for bad in ["0", "9"] {
        let (o, ws, _home) = run(bad, false);
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--samples must be between 1 and 8"), "{err}");
        assert!(!ws.exists(), "nothing was prepared for a refused run");
    }
}

#[test]
fn the_better_candidate_is_proposed_and_shown() {
    let (o, ws, _home) = run("2", false);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("verified sampling at step 4: 2 candidate(s), proposing draw 2"),
        "{out}"
    );
    assert!(out.contains("failed: total-hours"), "{out}");
    let written = std::fs::read_to_string(ws.join("out/summary.md")).unwrap();
    assert!(written.contains("Total hours: 64"));
}

#[test]
fn the_verdict_document_keeps_pass_at_one_apart_from_best_of_k() {
    let (o, _ws, _home) = run("2", true);
    let out = String::from_utf8_lossy(&o.stdout);
    let last: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let verdict = &last["verdict"];
    assert_eq!(verdict["passed"], true, "{out}");
    let f = &verdict["figures"];
    assert_eq!(f["samples"], 2);
    assert_eq!(f["sampled_writes"], 1);
    assert_eq!(f["first_draw_passed"], false);
    assert_eq!(f["chosen_draw_passed"], true);
    assert!(
        out.lines().any(|l| l.contains("\"event\":\"sampled\"")),
        "the candidates are an event of the JSON stream"
    );
}
