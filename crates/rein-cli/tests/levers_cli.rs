#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `--lever NAME=on|off` on `rein run` and `rein bench`: a misspelt lever is refused before
//! anything runs, and the bench records the run's levers in results.jsonl.

#[path = "bench_support/mod.rs"]
mod bench_support;

use std::path::Path;
use std::process::Output;

use bench_support::{lines, rein, repo};

fn script(name: &str) -> String {
    let p = repo()
        .join("crates/rein-engine/tests/fixtures/agent")
        .join(name);
    format!("scripted:{}", p.display())
}

/// `rein run desk_task` in `ws` with `model` (a `--model` spec), `--approve=all` and each
/// `--lever` setting.
fn run_desk_task(home: &Path, ws: &Path, model: &str, levers: &[&str]) -> Output {
    let mission = repo().join("missions/desk_task");
    let mut args = vec![
        "run".to_string(),
        mission.display().to_string(),
        "--workspace".into(),
        ws.display().to_string(),
        "--model".into(),
        model.to_string(),
        "--approve=all".into(),
    ];
    for l in levers {
        args.extend(["--lever".to_string(), (*l).to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    rein(home, &args)
}

/// `rein bench suites/missions` into `out` with the scripted model `model` and one `--lever`
/// setting: the rows of its results.jsonl.
fn bench_missions(home: &Path, out: &Path, model: &str, lever: &str) -> Vec<serde_json::Value> {
    let suite = repo().join("suites/missions");
    let o = rein(
        home,
        &[
            "bench",
            suite.to_str().unwrap(),
            "--models",
            &script(model),
            "--lever",
            lever,
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(
        o.status.code().is_some(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    lines(&out.join("results.jsonl"))
}

#[test]
fn an_unknown_lever_is_refused_with_the_names_before_anything_runs() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let ws = scratch.path().join("ws");
    let o = run_desk_task(home.path(), &ws, &script("good.jsonl"), &["fact-tools=on"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown lever `fact-tools`"), "{err}");
    assert!(
        err.contains("facts-tools, requirements, repeat-escape, repeat-penalty, monotone-attempts, write-json, write-sections, checklist, gguf-template, task-reminder, table-facts, short-after-cut, read-back, rewrite-section"),
        "{err}"
    );
    assert!(!ws.exists(), "nothing was prepared for a refused run");
}

/// `--help` of `rein run` and `rein bench` names every lever the engine has (a list written out
/// by hand there had fallen two levers behind).
#[test]
fn the_help_of_run_and_bench_names_every_lever() {
    let home = tempfile::tempdir().unwrap();
    for command in ["run", "bench"] {
        let o = rein(home.path(), &[command, "--help"]);
        assert_eq!(o.status.code(), Some(0));
        let help = String::from_utf8_lossy(&o.stdout).replace(['\n', ' '], "");
        for lever in rein_engine::agent::Lever::ALL {
            assert!(
                help.contains(&format!("{},", lever.name()))
                    || help.contains(&format!("{}.", lever.name())),
                "`rein {command} --help` does not name {}",
                lever.name()
            );
        }
    }
}

#[test]
fn a_run_with_levers_passes_and_the_bench_records_them() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let ws = scratch.path().join("ws");
    let o = run_desk_task(
        home.path(),
        &ws,
        &script("good.jsonl"),
        // `file-notes` asks the model about each file it reads, and the script has no replies
        // for those questions (its tests are the engine's `agent_file_notes`).
        &["all=on", "repeat-penalty=off", "file-notes=off"],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );

    let out = scratch.path().join("out");
    let rows = bench_missions(home.path(), &out, "no_reread.jsonl", "requirements=on");
    assert!(!rows.is_empty());
    // Each run records the build that ran it, so an ablation can tell builds apart.
    let build =
        rein_protocol::canonical::sha256_hex(&std::fs::read(env!("CARGO_BIN_EXE_rein")).unwrap());
    for r in rows {
        assert_eq!(r["harness_sha256"], build.as_str(), "{r}");
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

/// `--lever write-sections=on` through `rein run`: the scripted model gives the text under
/// each required heading, Rein writes the report with the headings in order, the judge passes
/// it, and the journal records the lever, the tool and the change. Off, the same reply names
/// a tool the mission does not offer, and nothing is written.
#[test]
fn write_sections_through_rein_run_writes_the_report_and_is_journaled() {
    let gold =
        std::fs::read_to_string(repo().join("missions/desk_task/judge/gold/files/out/summary.md"))
            .unwrap();
    // The gold report's bodies, one field per heading.
    let mut fields = serde_json::Map::new();
    fields.insert("path".into(), serde_json::json!("out/summary.md"));
    for part in gold.split("\n## ") {
        let part = part.trim_start_matches("# ");
        let (heading, body) = part.split_once("\n\n").unwrap();
        fields.insert(heading.into(), serde_json::json!(body.trim()));
    }
    assert_eq!(fields.len(), 5, "{fields:?}");
    let call = |action: &str, parameters: serde_json::Value| {
        serde_json::json!({"thought": "t", "action": action, "parameters": parameters}).to_string()
    };
    let mut replies: Vec<String> = [
        "notes/overview.md",
        "notes/meeting-notes.md",
        "data/tasks.csv",
    ]
    .iter()
    .map(|p| call("read_file", serde_json::json!({ "path": p })))
    .collect();
    replies.push(call("write_sections", serde_json::Value::Object(fields)));
    replies.push(call(
        "read_file",
        serde_json::json!({"path": "out/summary.md"}),
    ));
    replies.push(call("finish", serde_json::json!({"summary": "done"})));
    let scratch = tempfile::tempdir().unwrap();
    let script = scratch.path().join("model.jsonl");
    std::fs::write(&script, replies.join("\n")).unwrap();
    let model = format!("scripted:{}", script.display());

    let home = tempfile::tempdir().unwrap();
    let ws = scratch.path().join("ws");
    let o = run_desk_task(home.path(), &ws, &model, &["write-sections=on"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(text.contains("write_sections"), "{text}");
    assert_eq!(
        std::fs::read_to_string(ws.join("out/summary.md")).unwrap(),
        gold
    );
    let show = rein(home.path(), &["journal", "show", "1", "--json"]);
    let trace: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    let levers = trace["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "levers")
        .expect("the levers event");
    assert_eq!(
        levers["payload"]["levers"]["write-sections"], true,
        "{levers}"
    );
    assert!(levers["payload"]["tools"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("write_sections")));
    let step = trace["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["action"] == "write_sections")
        .unwrap();
    assert_eq!(step["call"]["outcome"], "executed", "{step}");
    assert_eq!(trace["changes"].as_array().unwrap().len(), 1);

    // Off (the default): no such tool, nothing written.
    let home = tempfile::tempdir().unwrap();
    let ws = scratch.path().join("ws-off");
    let o = run_desk_task(home.path(), &ws, &model, &[]);
    // The scripted model runs out of replies after the refused call: a model failure (3).
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{text}");
    assert!(text.contains("unknown tool \"write_sections\""), "{text}");
    assert!(!ws.join("out/summary.md").exists());
}

/// `inputs-first` from the command line: Rein's reads are shown as Rein's, at the terminal and
/// in `rein journal show`, and the scripted model's own reads after them still work.
#[test]
fn rein_s_reads_are_shown_as_rein_s() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let ws = scratch.path().join("ws");
    let o = run_desk_task(
        home.path(),
        &ws,
        &script("good.jsonl"),
        &["inputs-first=on"],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert_eq!(
        out.matches("Rein read this input for the model before its first step")
            .count(),
        3,
        "{out}"
    );
    let o = rein(home.path(), &["journal", "show", "1"]);
    let shown = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        shown
            .matches("by: Rein (lever inputs-first), not the model")
            .count(),
        3,
        "{shown}"
    );
    assert!(
        shown.contains("(by Rein before the first step, lever inputs-first or stats-first)"),
        "{shown}"
    );

    // The bench's step trace names them too.
    let out = scratch.path().join("out");
    let rows = bench_missions(home.path(), &out, "good.jsonl", "inputs-first=on");
    let desk = rows.iter().find(|r| r["task"] == "desk_task").unwrap();
    let steps = desk["trace"]["steps"].as_array().unwrap();
    let by: Vec<_> = steps.iter().map(|s| s["by"].as_str()).collect();
    assert_eq!(&by[..3], &[Some("rein"); 3], "{desk}");
    assert!(by[3..].iter().all(Option::is_none), "{desk}");
}
