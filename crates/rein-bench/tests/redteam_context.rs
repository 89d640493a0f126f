#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of `rein bench --context`: records (`RunResult.context`), `check_consistent`, the
//! report's naming of the window and the ablation's arm setting, attacked with crafted
//! results. A test that fails documents a defect (it asserts the correct behaviour); the
//! others are regression tests.

use rein_bench::ablation::{ablation, Arm};
use rein_bench::render::{html, markdown, terminal, write_outputs, REPORT_MD};
use rein_bench::report::Report;
use rein_bench::results::{canonical_text, check_consistent, read_results, RunResult};
use serde_json::json;

/// One run of `model` on task `task` of suite `suite`, repeat `repeat`, with `context`.
fn run(
    suite: &str,
    model: &str,
    task: &str,
    repeat: u32,
    passed: bool,
    context: Option<u32>,
) -> RunResult {
    RunResult {
        suite: suite.into(),
        task: task.into(),
        category: "c".into(),
        split: if task.starts_with('h') {
            "heldout"
        } else {
            "dev"
        }
        .into(),
        model: model.into(),
        seed: 7 + u64::from(repeat),
        repeat,
        passed,
        reason: if passed { "ok" } else { "failed a check" }.into(),
        contract_sha256: format!("{task:0>64}"),
        model_identity: format!("{model}.gguf (qwen2) sha256:abc"),
        steps: 3,
        wall_ms: 1000,
        levers: Some(json!({"read-back": true, "rewrite-section": true})),
        context,
        ..RunResult::default()
    }
}

/// A results line as `append_result` writes it, with its `context` replaced by `raw` (raw JSON
/// text, or `None` to leave the field out).
fn line_with_context(raw: Option<&str>) -> String {
    line_of("t1", raw)
}

/// [`line_with_context`] for a run of task `task`.
fn line_of(task: &str, raw: Option<&str>) -> String {
    let mut v = serde_json::to_value(run("s", "m", task, 0, true, None)).unwrap();
    let text = serde_json::to_string(&v).unwrap();
    match raw {
        None => text,
        Some(raw) => {
            v.as_object_mut().unwrap().remove("context");
            let text = serde_json::to_string(&v).unwrap();
            format!("{},\"context\":{raw}}}", &text[..text.len() - 1])
        }
    }
}

fn write_file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.jsonl");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

// ------------------------------------------------------------------ parsing the record

#[test]
fn null_and_absent_context_read_as_the_default_and_write_back_absent() {
    let absent = line_of("t1", None);
    let null = line_of("t2", Some("null"));
    let wide = line_of("t3", Some("8192"));
    let (_d, path) = write_file(&format!("{absent}\n{null}\n{wide}\n"));
    let runs = read_results(&path).unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0].context, None);
    assert_eq!(runs[1].context, None);
    assert_eq!(runs[2].context, Some(8192));
    // null and absent are one setting: no spurious "two windows" refusal between them.
    check_consistent(&runs[..2]).unwrap();
    // Written back, null is absent and a window is the last field.
    let text = canonical_text(&runs[1..]).unwrap();
    assert!(!text.contains("null"), "{text}");
    assert!(text.contains(",\"context\":8192}\n"), "{text}");
}

#[test]
fn malformed_context_values_are_refused_with_their_line() {
    for raw in [
        "-1",
        "\"8192\"",
        "8192.0",
        "1e4",
        "4294967296",
        "true",
        "[8192]",
        "{\"tokens\":8192}",
    ] {
        let good = line_with_context(None);
        let bad = line_with_context(Some(raw));
        let (_d, path) = write_file(&format!("{good}\n{bad}\n"));
        let e = match read_results(&path) {
            Ok(runs) => panic!("context {raw} read as {:?}", runs[1].context),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(":2") || e.contains("line 2"), "{raw}: {e}");
    }
    // A second `context` key cannot override the first one unnoticed.
    let twice = line_with_context(Some("8192"));
    let twice = format!("{},\"context\":null}}", &twice[..twice.len() - 1]);
    let (_d, path) = write_file(&format!("{twice}\n"));
    assert!(read_results(&path).is_err());
}

#[test]
fn a_whole_line_with_a_bad_context_at_the_end_of_the_file_is_not_dropped_as_a_cut_off_write() {
    // read_results forgives a last line without its newline as "a write cut off by a kill".
    // But a line that is a whole JSON object (closing brace and all) was not cut off: here it
    // is a run whose `context` is out of u32 range. It vanishes from the results silently: the
    // report, merge and ablation lose a run and nobody is told.
    let good = line_with_context(None);
    let mut other = run("s", "m", "t2", 0, false, None);
    other.context = Some(1);
    let bad = other
        .to_line()
        .unwrap()
        .replace("\"context\":1", "\"context\":-8192");
    assert!(serde_json::from_str::<serde_json::Value>(&bad).is_ok());
    let (_d, path) = write_file(&format!("{good}\n{bad}"));
    let read = read_results(&path);
    assert!(
        read.is_err(),
        "a complete record with a bad context was dropped silently: {:?}",
        read.map(|r| r.len())
    );
}

// ------------------------------------------------------------------ check_consistent

#[test]
fn check_consistent_refuses_default_and_a_window_for_one_model_in_either_order() {
    let default_first = [
        run("s", "m", "t1", 0, true, None),
        run("s", "m", "t2", 0, true, Some(8192)),
    ];
    let e = check_consistent(&default_first).unwrap_err().to_string();
    assert!(
        e.contains("its default window") && e.contains("--context 8192"),
        "{e}"
    );
    let mut window_first = default_first.clone();
    window_first.reverse();
    assert!(check_consistent(&window_first).is_err());
    // Null read from a file and a missing field are the same default: still refused.
    let e = check_consistent(&[
        run("s", "m", "t1", 0, true, Some(8192)),
        run("s", "m", "t1", 1, true, Some(8192)),
        run("s", "m", "t2", 0, true, None),
    ])
    .unwrap_err()
    .to_string();
    assert!(e.contains("model m"), "{e}");
}

#[test]
fn check_consistent_refuses_two_windows_of_one_model_across_suites() {
    // The same model on two suites, each bench with its own --context: one name, two settings.
    let runs = [
        run("s1", "m", "t1", 0, true, Some(4096)),
        run("s2", "m", "t1", 0, true, Some(8192)),
    ];
    let e = check_consistent(&runs).unwrap_err().to_string();
    assert!(
        e.contains("--context 4096") && e.contains("--context 8192"),
        "{e}"
    );
    // The duplicate check is not what refuses it: the keys differ.
    assert_ne!(runs[0].key(), runs[1].key());
}

#[test]
fn check_consistent_refuses_a_window_no_bench_could_have_run() {
    // `rein bench --context` refuses anything below 1024 tokens (open.rs MIN_CONTEXT_TOKENS),
    // but a results file is trusted: a crafted `"context":0` merges and is reported as
    // "context window 0 tokens (--context)".
    for impossible in [0, 1, 1023] {
        let runs = [
            run("s", "m", "t1", 0, true, Some(impossible)),
            run("s", "m", "t2", 0, true, Some(impossible)),
        ];
        assert!(
            check_consistent(&runs).is_err(),
            "context {impossible} passed check_consistent"
        );
    }
}

// ------------------------------------------------------------------ the report

#[test]
fn the_markdown_html_and_json_reports_name_each_models_window() {
    // One report, one window: models at two windows are refused (see below), so both ran here
    // with 8192, named right after each model's name, before any text from the model file.
    let mixed = [
        run("s", "a", "t1", 0, true, None),
        run("s", "b", "t1", 0, true, Some(8192)),
    ];
    assert!(check_consistent(&mixed).is_err());
    let runs = [
        run("s", "a", "t1", 0, true, Some(8192)),
        run("s", "a", "t2", 0, false, Some(8192)),
        run("s", "b", "t1", 0, true, Some(8192)),
        run("s", "b", "t2", 0, true, Some(8192)),
    ];
    check_consistent(&runs).unwrap();
    let report = Report::build(&runs);
    let md = markdown(&report);
    assert!(
        md.contains("- b (--context 8192): b.gguf (qwen2) sha256:abc\n"),
        "{md}"
    );
    assert!(
        md.contains("- a (--context 8192): a.gguf (qwen2) sha256:abc\n"),
        "{md}"
    );
    assert!(html(&report).contains("b (--context 8192): b.gguf"));
    let doc = serde_json::to_value(&report).unwrap();
    assert_eq!(doc["models"][1]["contexts"], json!([8192]));
    assert_eq!(doc["models"][0]["contexts"], json!([8192]));
    let plain = Report::build(&[run("s", "a", "t1", 0, true, None)]);
    let doc = serde_json::to_value(&plain).unwrap();
    assert!(doc["models"][0].get("contexts").is_none());
    // write_outputs writes the same.
    let dir = tempfile::tempdir().unwrap();
    write_outputs(dir.path(), &runs).unwrap();
    let written = std::fs::read_to_string(dir.path().join(REPORT_MD)).unwrap();
    assert_eq!(written, md);
}

#[test]
fn the_report_never_names_a_mix_of_default_and_a_window_as_one_setting() {
    // Report::build and write_outputs (both public) take results unchecked. With half of a
    // model's runs at the default window and half at 8192, the note reads "context window 8192
    // tokens (--context)", as if every run had 8192: the default runs are filtered out of
    // `contexts` (report.rs filter_map(|r| r.context)). Either refuse the mix or name it.
    let runs = [
        run("s", "m", "t1", 0, false, None),
        run("s", "m", "t2", 0, false, None),
        run("s", "m", "t3", 0, true, Some(8192)),
        run("s", "m", "t4", 0, true, Some(8192)),
    ];
    let dir = tempfile::tempdir().unwrap();
    let Ok(report) = write_outputs(dir.path(), &runs) else {
        return; // refusing the mix is correct too
    };
    let note = report.models[0].labelled();
    assert!(
        note.contains("default"),
        "two settings reported as one: {note:?}"
    );
}

#[test]
fn the_terminal_report_names_the_context_window() {
    // What `rein bench`, `rein bench report` and `rein bench merge` print is render::terminal:
    // it did not mention the window, so the table people read after a bench hid the setting.
    let runs = [
        run("s", "a", "t1", 0, true, Some(8192)),
        run("s", "a", "t2", 0, false, Some(8192)),
    ];
    check_consistent(&runs).unwrap();
    let out = terminal(&Report::build(&runs));
    assert!(
        out.contains("8192"),
        "terminal report hides --context:\n{out}"
    );
}

#[test]
fn a_paired_comparison_of_models_run_with_different_windows_is_refused() {
    // Bench 1: model a with --context 8192; bench 2: model b at its default. A per-model check
    // let `rein bench merge` take both, and the paired comparison "a vs b ... exact McNemar p"
    // read as a model comparison while the two ran with different windows.
    let mut runs = Vec::new();
    for t in 0..8 {
        let task = format!("t{t}");
        runs.push(run("s", "a", &task, 0, true, Some(8192)));
        runs.push(run("s", "b", &task, 0, t < 2, None));
    }
    // Refused: one report compares models at one window only.
    let e = check_consistent(&runs).unwrap_err().to_string();
    assert!(
        e.contains("--context 8192") && e.contains("its default window"),
        "{e}"
    );
}

// ------------------------------------------------------------------ the ablation

fn arm(name: &str, context: Option<u32>, rewrite: bool, outcomes: &[(&str, bool)]) -> Arm {
    Arm {
        name: name.into(),
        results: outcomes
            .iter()
            .map(|(t, p)| {
                let mut r = run("desk", "qwen", t, 0, *p, context);
                r.levers = Some(json!({"read-back": true, "rewrite-section": rewrite}));
                r
            })
            .collect(),
    }
}

#[test]
fn ablation_refuses_a_baseline_that_mixes_windows() {
    let mut base = arm("base", None, true, &[("d1", true), ("d2", true)]);
    base.results[1].context = Some(8192);
    let other = arm("other", None, true, &[("d1", true), ("d2", true)]);
    let e = ablation(&base, &[other]).unwrap_err().to_string();
    assert!(e.contains("base") && e.contains("default and 8192"), "{e}");
}

#[test]
fn ablation_refuses_an_arm_that_mixes_windows_across_its_models() {
    // One window per model (each model's runs agree), but two models of one arm at two windows:
    // the arm's row would pool them as one setting.
    let base = arm("base", None, true, &[("d1", true), ("d2", true)]);
    let mut mixed = arm("mixed", None, true, &[("d1", true), ("d2", true)]);
    let mut other_model = mixed.results.clone();
    for r in &mut other_model {
        r.model = "llama".into();
        r.context = Some(8192);
    }
    mixed.results.extend(other_model);
    assert!(check_consistent(&mixed.results).is_err());
    assert!(ablation(&base, &[mixed]).is_err());
}

#[test]
fn ablation_names_a_window_and_a_lever_changed_together() {
    let base = arm("base", Some(8192), true, &[("d1", true), ("d2", false)]);
    let back = arm("back", None, false, &[("d1", false), ("d2", false)]);
    let table = ablation(&base, &[back]).unwrap();
    let row = table
        .rows
        .iter()
        .find(|r| r.arm == "back" && r.split == "dev")
        .unwrap();
    assert_eq!(
        row.changed,
        vec![
            "rewrite-section=off".to_string(),
            "context=default".to_string()
        ]
    );
    assert!(table
        .markdown()
        .contains("| back | rewrite-section=off, context=default | dev |"));
    // Same window, same levers: no change claimed.
    let same = arm("same", Some(8192), true, &[("d1", true), ("d2", true)]);
    let table = ablation(&base, &[same]).unwrap();
    assert!(table.rows.iter().all(|r| r.changed.is_empty()));
}

#[test]
fn ablation_names_the_window_every_arm_shares() {
    // Baseline and arm both ran with --context 2048. The table's header names the baseline's
    // levers but not its window, and the JSON (`baseline_levers`) has no window either: the
    // lever's effect is reported without the (non-default) setting it was measured at.
    let base = arm("base", Some(2048), true, &[("d1", true), ("d2", true)]);
    let off = arm("off", Some(2048), false, &[("d1", false), ("d2", true)]);
    let table = ablation(&base, &[off]).unwrap();
    let md = table.markdown();
    let header = md.lines().next().unwrap();
    assert!(
        header.contains("2048"),
        "the ablation never says its arms ran with --context 2048: {header}"
    );
}
