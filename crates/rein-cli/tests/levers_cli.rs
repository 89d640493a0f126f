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
        err.contains("facts-tools, requirements, repeat-escape, repeat-penalty, monotone-attempts, write-json, write-sections, checklist, gguf-template"),
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

/// A memory-sandbox task (the toy suite) takes the bench's levers too: recorded in results.jsonl,
/// and `repeat-escape` draws again instead of spending a step on an exact repeat.
#[test]
fn a_memory_task_runs_with_the_benchs_levers() {
    let scratch = tempfile::tempdir().unwrap();
    let suite = scratch.path().join("suite");
    std::fs::create_dir(&suite).unwrap();
    std::fs::write(
        suite.join("suite.toml"),
        "name = \"one\"\ndescription = \"one toy task\"\n",
    )
    .unwrap();
    let task = suite.join("note-hello");
    copy_dir(&repo().join("suites/toy/note-hello"), &task);
    let call = |action: &str, parameters: serde_json::Value| {
        serde_json::json!({"thought": "t", "action": action, "parameters": parameters}).to_string()
    };
    let create = call(
        "create_file",
        serde_json::json!({"path": "note.txt", "content": "hello world"}),
    );
    let read = call("read_file", serde_json::json!({"path": "note.txt"}));
    // The model repeats its create; with the lever the repeat is drawn again (the next line).
    let answer = call(
        "final_answer",
        serde_json::json!({"answer": "note.txt says hello world"}),
    );
    let script = scratch.path().join("model.jsonl");
    std::fs::write(&script, [create.clone(), create, read, answer].join("\n")).unwrap();
    let model = format!("scripted:{}", script.display());
    let mut steps = Vec::new();
    for escape in ["on", "off"] {
        let home = tempfile::tempdir().unwrap();
        let out = scratch.path().join(format!("out-{escape}"));
        let o = rein(
            home.path(),
            &[
                "bench",
                suite.to_str().unwrap(),
                "--models",
                &model,
                "--lever",
                &format!("repeat-escape={escape}"),
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
        assert_eq!(rows.len(), 1);
        assert_eq!(
            rows[0]["levers"]["repeat-escape"],
            escape == "on",
            "{}",
            rows[0]
        );
        steps.push(rows[0]["trace"]["steps"].as_array().unwrap().len());
        if escape == "on" {
            assert_eq!(rows[0]["passed"], true, "{}", rows[0]);
        }
    }
    assert!(
        steps[0] < steps[1],
        "the repeat cost a step only without the lever: {steps:?}"
    );
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
