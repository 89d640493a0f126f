#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `rein bench bfcl:...` end to end with a scripted model on the vendored BFCL sample, and
//! `rein bench check-suite` on the router suite.

#[path = "bench_support/mod.rs"]
mod bench_support;

use bench_support::{rein, repo};
use std::path::Path;

/// The vendored sample laid out as `rein bench fetch bfcl` leaves the real data.
fn install_sample(home: &Path) {
    let src = repo().join("crates/rein-bench/tests/data/bfcl");
    let dst = home.join("bench/bfcl/2026.3.23");
    std::fs::create_dir_all(dst.join("possible_answer")).unwrap();
    for rel in [
        "BFCL_v4_simple_python.json",
        "BFCL_v4_multiple.json",
        "BFCL_v4_irrelevance.json",
        "possible_answer/BFCL_v4_simple_python.json",
        "possible_answer/BFCL_v4_multiple.json",
    ] {
        std::fs::copy(src.join(rel), dst.join(rel)).unwrap();
    }
    std::fs::write(dst.join("SOURCE.json"), "{}").unwrap();
}

#[test]
fn bfcl_irrelevance_with_a_scripted_model() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    let out_s = out.to_str().unwrap();
    let script = scratch.path().join("replies.jsonl");
    std::fs::write(
        &script,
        [
            r#"{"thought":"no tool","action":"decline","parameters":{"reason":"BMI is not area"}}"#,
            r#"{"thought":"no tool","action":"decline","parameters":{"reason":"sum is not roots"}}"#,
            r#"{"thought":"try","action":"distance_calculator_calculate","parameters":{"coordinate_1":[1.0,2.0],"coordinate_2":[3.0,4.0]}}"#,
            r#""I cannot help with that.""#,
        ]
        .join("\n"),
    )
    .unwrap();
    let model = format!("scripted:{}", script.display());
    let args = [
        "bench",
        "bfcl:irrelevance",
        "--models",
        &model,
        "--decoding",
        "unconstrained",
        "--out",
        out_s,
    ];

    // Not fetched yet: a clear error naming the fetch command.
    let o = rein(home.path(), &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0));
    assert!(err.contains("rein bench fetch bfcl"), "{err}");

    install_sample(home.path());
    let o = rein(home.path(), &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let verdicts: Vec<(String, bool, bool)> = rows
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["correct"].as_bool().unwrap(),
                r["format_error"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        vec![
            ("irrelevance_0".into(), true, false),
            ("irrelevance_1".into(), true, false),
            ("irrelevance_2".into(), false, false),
            ("irrelevance_3".into(), true, true),
        ]
    );
    // The call is recorded under its BFCL name, mapped back from the tool name.
    assert_eq!(rows[2]["calls"][0]["name"], "distance_calculator.calculate");
    assert_eq!(rows[2]["error_type"], "irrelevance_error:decoder_success");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("| 3/4 | 75.0 %"), "{report}");

    // An output folder with answers is not overwritten; --resume keeps them and asks nothing
    // (the script has no replies left, so any question asked would fail the run).
    let o = rein(home.path(), &args);
    assert_ne!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--resume"));
    let mut resumed = args.to_vec();
    resumed.push("--resume");
    let o = rein(home.path(), &resumed);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn bfcl_flags_and_names_are_checked() {
    let home = tempfile::tempdir().unwrap();
    let o = rein(
        home.path(),
        &["bench", "bfcl:parallel", "--models", "scripted:x"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        err.contains("bfcl:simple, bfcl:multiple, bfcl:irrelevance"),
        "{err}"
    );
    let suite = repo().join("suites/missions");
    let o = rein(
        home.path(),
        &[
            "bench",
            suite.to_str().unwrap(),
            "--models",
            "scripted:x",
            "--limit",
            "3",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0));
    assert!(err.contains("bfcl: suites only"), "{err}");
    let o = rein(home.path(), &["bench", "fetch", "glue"]);
    assert_ne!(o.status.code(), Some(0));
}

#[test]
fn check_suite_validates_the_router_suite() {
    let home = tempfile::tempdir().unwrap();
    let suite = repo().join("suites/router");
    let o = rein(
        home.path(),
        &["bench", "check-suite", suite.to_str().unwrap()],
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    for intent in [
        "general",
        "explore",
        "summarize",
        "related",
        "report",
        "vision",
        "voice",
    ] {
        assert!(text.contains(intent), "{text}");
    }
    let o = rein(
        home.path(),
        &["--json", "bench", "check-suite", suite.to_str().unwrap()],
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    assert_eq!(doc["router_suites"][0]["suite"], "router", "{doc}");
    assert!(doc["router_suites"][0]["requests"].as_u64().unwrap() >= 42);
}

#[test]
fn a_question_the_model_does_not_answer_is_wrong_even_for_irrelevance() {
    let home = tempfile::tempdir().unwrap();
    install_sample(home.path());
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out");
    let script = scratch.path().join("one.jsonl");
    // One reply for four questions: the scripted model fails on the other three.
    std::fs::write(
        &script,
        r#"{"thought":"no","action":"decline","parameters":{"reason":"no tool fits"}}"#,
    )
    .unwrap();
    let model = format!("scripted:{}", script.display());
    let o = rein(
        home.path(),
        &[
            "bench",
            "bfcl:irrelevance",
            "--models",
            &model,
            "--decoding",
            "constrained",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    // Three failures in a row stop the run, with the reason.
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("in a row"), "{err}");
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(rows[0]["correct"], true);
    for r in &rows[1..] {
        assert_eq!(r["correct"], false, "{r}");
        assert_eq!(r["error_type"], "rein:model_error");
    }
}
