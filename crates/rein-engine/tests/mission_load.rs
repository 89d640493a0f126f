//! Loading, validating, freezing and materialising missions.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::{Path, PathBuf};

use rein_engine::mission::{materialise_inputs, Budgets, Mission, MissionError, Mode};
use serde_json::{json, Value};
use tempfile::TempDir;

/// One edit of a mission's JSON.
type Edit = Box<dyn Fn(&mut Value)>;

fn missions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../missions")
}

/// Writes a mission and its fixtures into a fresh folder and returns the mission file path.
fn write_mission(dir: &Path, mission: &str, fixtures: &[(&str, &str)]) -> PathBuf {
    for (p, content) in fixtures {
        let f = dir.join("fixtures").join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, content).unwrap();
    }
    let path = dir.join("mission.json");
    std::fs::write(&path, mission).unwrap();
    path
}

fn base() -> Value {
    json!({
        "id": "t",
        "mode": "automatic",
        "prompt": "Summarise notes.md into out/r.md.",
        "inputs": ["notes.md"],
        "tools": ["read_file", "create_file", "finish"],
        "required_artifact": "out/r.md",
        "checks": [
            {"id": "exists", "kind": "file_exists", "path": "out/r.md"},
            {"id": "order", "kind": "actions_called", "tools": ["read_file", "create_file"], "ordered": true}
        ]
    })
}

fn load_value(
    v: &Value,
) -> (
    TempDir,
    Result<rein_engine::mission::FrozenContract, MissionError>,
) {
    let dir = TempDir::new().unwrap();
    let path = write_mission(dir.path(), &v.to_string(), &[("notes.md", "hello notes\n")]);
    let r = Mission::load(&path);
    (dir, r)
}

#[test]
fn every_shipped_mission_loads() {
    let mut ids = Vec::new();
    for entry in std::fs::read_dir(missions_dir()).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("mission.json").is_file() {
            continue;
        }
        let c = Mission::load(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        assert_eq!(c.sha256.len(), 64);
        assert_eq!(c.inputs.len(), c.mission.inputs.len());
        ids.push((c.mission.id.clone(), c.mission.mode));
    }
    ids.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        ids,
        vec![
            ("desk_task".to_string(), Mode::Automatic),
            ("doc_extract".to_string(), Mode::Automatic),
            ("screen_qa".to_string(), Mode::HumanReviewOnly),
            ("voice_intake".to_string(), Mode::HumanReviewOnly),
        ]
    );
}

#[test]
fn desk_task_meets_the_issue() {
    let c = Mission::load(missions_dir().join("desk_task")).unwrap();
    let m = &c.mission;
    assert_eq!(m.required_artifact, "out/summary.md");
    for t in [
        "list_dir",
        "read_file",
        "search_text",
        "find_files",
        "find_related",
        "file_info",
        "create_file",
        "edit_file",
        "replace_file",
        "delete_file",
    ] {
        assert!(m.tools.iter().any(|x| x == t), "missing tool {t}");
    }
    let deterministic = m.checks.iter().filter(|c| !c.spec.is_semantic()).count();
    assert!(
        deterministic >= 7,
        "only {deterministic} deterministic checks"
    );
    let kinds: Vec<&str> = m.checks.iter().map(|c| c.spec.kind()).collect();
    for k in [
        "file_exists",
        "report_complete",
        "content_matches",
        "numeric_consistency",
        "content_absent",
        "file_absent",
        "inputs_read",
        "written_this_run",
        "statement",
        "mentions_all",
        "no_placeholders",
        "not_copied",
    ] {
        assert!(kinds.contains(&k), "desk_task lacks {k}");
    }
}

#[test]
fn defaults_are_filled_in() {
    let (_d, c) = load_value(&base());
    let c = c.unwrap();
    assert_eq!(c.mission.budgets, Budgets::default());
    assert_eq!(c.mission.budgets.max_turns, 64);
    assert_eq!(c.mission.budgets.max_seconds, 900);
    assert_eq!(c.mission.budgets.max_plan_steps, 8);
    assert_eq!(c.mission.budgets.attempts_per_strategy, 3);
    assert_eq!(c.mission.fixtures, "fixtures");
    assert!(c.canonical_json.contains("\"max_turns\":64"));
}

#[test]
fn hash_is_stable_under_key_order_and_whitespace() {
    let (_d, a) = load_value(&base());
    let a = a.unwrap();
    // Same mission: keys reversed, pretty-printed, a default written out explicitly.
    let dir = TempDir::new().unwrap();
    let text = r#"
    {
      "checks": [
        {"kind": "file_exists", "path": "out/r.md", "id": "exists"},
        {"ordered": true, "tools": ["read_file", "create_file"], "kind": "actions_called", "id": "order"}
      ],
      "required_artifact": "out/r.md",
      "tools": ["read_file", "create_file", "finish"],
      "budgets": {"max_turns": 64},
      "inputs": ["notes.md"],
      "prompt": "Summarise notes.md into out/r.md.",
      "mode": "automatic",
      "id": "t"
    }"#;
    let b = Mission::load(write_mission(
        dir.path(),
        text,
        &[("notes.md", "hello notes\n")],
    ))
    .unwrap();
    assert_eq!(a.sha256, b.sha256);
    assert_eq!(a.canonical_json, b.canonical_json);
}

#[test]
fn hash_changes_with_any_semantic_edit() {
    let (_d, a) = load_value(&base());
    let a = a.unwrap();
    let edits: Vec<Edit> = vec![
        Box::new(|v| v["prompt"] = json!("Something else.")),
        Box::new(|v| v["mode"] = json!("human_review_only")),
        Box::new(|v| v["budgets"] = json!({"max_turns": 63})),
        Box::new(|v| v["checks"][0]["path"] = json!("out/other.md")),
        Box::new(|v| v["checks"][1]["ordered"] = json!(false)),
        Box::new(|v| v["tools"] = json!(["read_file", "create_file", "finish", "list_dir"])),
        Box::new(|v| v["min_words"] = json!(30)),
    ];
    for (i, edit) in edits.iter().enumerate() {
        let mut v = base();
        edit(&mut v);
        let (_d, b) = load_value(&v);
        assert_ne!(a.sha256, b.unwrap().sha256, "edit {i} kept the hash");
    }
}

fn invalid(v: &Value) -> String {
    let (_d, r) = load_value(v);
    match r {
        Err(e) => e.to_string(),
        Ok(_) => panic!("loaded an invalid mission: {v}"),
    }
}

#[test]
fn unknown_check_kind_names_the_field() {
    let mut v = base();
    v["checks"][1] = json!({"id": "x", "kind": "vibes_ok"});
    let e = invalid(&v);
    assert!(e.contains("mission.json"), "{e}");
    assert!(e.contains("checks[1].kind"), "{e}");
    assert!(e.contains("unknown check kind `vibes_ok`"), "{e}");
}

#[test]
fn unknown_fields_are_refused() {
    let mut v = base();
    v["checks"][0]["non_emtpy"] = json!(true);
    let e = invalid(&v);
    assert!(
        e.contains("checks[0] (id `exists`)") && e.contains("non_emtpy"),
        "{e}"
    );
    let mut v = base();
    v["promt"] = json!("typo");
    assert!(invalid(&v).contains("promt"));
}

#[test]
fn missing_fixture_is_refused() {
    let mut v = base();
    v["inputs"] = json!(["notes.md", "data/missing.csv"]);
    let e = invalid(&v);
    assert!(
        e.contains("inputs[1]") && e.contains("missing fixture"),
        "{e}"
    );
}

#[test]
fn artifact_that_is_an_input_is_refused() {
    let mut v = base();
    v["required_artifact"] = json!("notes.md");
    let e = invalid(&v);
    assert!(
        e.contains("required_artifact") && e.contains("also an input"),
        "{e}"
    );
}

#[test]
fn artifact_that_is_an_input_in_another_letter_case_is_refused() {
    // On a case-insensitive file system (macOS, Windows) `NOTES.md` opens `notes.md`: the
    // deliverable would overwrite a frozen input.
    let mut v = base();
    v["required_artifact"] = json!("NOTES.md");
    let e = invalid(&v);
    assert!(
        e.contains("required_artifact") && e.contains("letter case"),
        "{e}"
    );
}

#[test]
fn other_invalid_contracts_are_refused() {
    let cases: Vec<(Edit, &str)> = vec![
        (Box::new(|v| v["checks"] = json!([])), "checks"),
        (
            Box::new(|v| v["inputs"] = json!(["../etc/passwd"])),
            "inputs[0]",
        ),
        (
            Box::new(|v| v["required_artifact"] = json!("./out/r.md")),
            "required_artifact",
        ),
        (
            Box::new(
                |v| v["checks"][0] = json!({"id": "r", "kind": "content_matches", "path": "out/r.md", "pattern": "(", "regex": true}),
            ),
            "checks[0].pattern",
        ),
        (
            Box::new(|v| v["checks"][1]["tools"] = json!(["delete_file"])),
            "checks[1].tools[0]",
        ),
        (
            Box::new(|v| v["checks"][1]["id"] = json!("exists")),
            "checks[1].id",
        ),
        (
            Box::new(
                |v| v["checks"][0] = json!({"id": "d", "kind": "decision", "prompt": "ok?", "labels": ["yes", "no"], "expected": "yes", "floor_bps": 5000}),
            ),
            "checks[0].floor_bps",
        ),
        (
            Box::new(
                |v| v["checks"][0] = json!({"id": "n", "kind": "numeric_consistency", "path": "out/r.md", "stated": {"regex": "(\\d+)"}, "expected": {"from": "lines", "path": "out/other.txt", "pattern": "x"}}),
            ),
            "checks[0].expected.path",
        ),
        (
            Box::new(
                |v| v["checks"][0] = json!({"id": "n", "kind": "numeric_consistency", "path": "out/r.md", "stated": {"regex": "\\d+"}, "expected": {"from": "lines", "path": "notes.md", "pattern": "x"}}),
            ),
            "checks[0].stated.regex",
        ),
        (
            Box::new(|v| v["budgets"] = json!({"max_turns": 0})),
            "budgets.max_turns",
        ),
        (Box::new(|v| v["mode"] = json!("yolo")), "mode"),
    ];
    for (edit, field) in cases {
        let mut v = base();
        edit(&mut v);
        let e = invalid(&v);
        assert!(e.contains(field), "expected field {field} in: {e}");
    }
}

#[test]
fn syntax_errors_name_the_file() {
    let dir = TempDir::new().unwrap();
    let path = write_mission(dir.path(), "{\"id\": ", &[]);
    let e = Mission::load(&path).unwrap_err().to_string();
    assert!(
        e.contains("mission.json") && e.contains("not valid JSON"),
        "{e}"
    );
}

#[test]
fn contract_changed_on_disk_is_refused() {
    let dir = TempDir::new().unwrap();
    let path = write_mission(
        dir.path(),
        &base().to_string(),
        &[("notes.md", "hello notes\n")],
    );
    let frozen = Mission::load(&path).unwrap();
    frozen.verify_unchanged(&path).unwrap();

    // Reformatting is not a change.
    std::fs::write(&path, serde_json::to_string_pretty(&base()).unwrap()).unwrap();
    frozen.verify_unchanged(&path).unwrap();

    // Weakening a check is.
    let mut v = base();
    v["checks"][1]["ordered"] = json!(false);
    std::fs::write(&path, v.to_string()).unwrap();
    let e = frozen.verify_unchanged(&path).unwrap_err();
    let new = Mission::load(&path).unwrap().sha256;
    match &e {
        MissionError::ContractChanged { old, new: now, .. } => {
            assert_eq!(old, &frozen.sha256);
            assert_eq!(now, &new);
        }
        other => panic!("unexpected {other}"),
    }
    let msg = e.to_string();
    assert!(
        msg.contains("changed on disk mid-run")
            && msg.contains(&frozen.sha256)
            && msg.contains(&new),
        "{msg}"
    );

    // Breaking the file is a change too.
    std::fs::write(&path, "{").unwrap();
    assert!(matches!(
        frozen.verify_unchanged(&path),
        Err(MissionError::ContractChanged { .. })
    ));
}

#[test]
fn fixture_changed_on_disk_is_refused() {
    let dir = TempDir::new().unwrap();
    let path = write_mission(
        dir.path(),
        &base().to_string(),
        &[("notes.md", "hello notes\n")],
    );
    let frozen = Mission::load(&path).unwrap();
    std::fs::write(dir.path().join("fixtures/notes.md"), "edited").unwrap();
    let e = frozen.verify_unchanged(&path).unwrap_err();
    assert!(
        matches!(e, MissionError::InputChanged { ref input, .. } if input == "notes.md"),
        "{e}"
    );
    let ws = TempDir::new().unwrap();
    assert!(matches!(
        materialise_inputs(&frozen, ws.path()),
        Err(MissionError::InputChanged { .. })
    ));
}

#[test]
fn materialise_copies_and_hashes_inputs() {
    let c = Mission::load(missions_dir().join("desk_task")).unwrap();
    let ws = TempDir::new().unwrap();
    let copied = materialise_inputs(&c, ws.path()).unwrap();
    assert_eq!(copied, c.inputs);
    for h in &copied {
        let bytes = std::fs::read(ws.path().join(&h.path)).unwrap();
        assert_eq!(rein_engine::mission::sha256_hex(&bytes), h.sha256);
    }
    // Identical files are fine a second time; a person's different file is never overwritten.
    materialise_inputs(&c, ws.path()).unwrap();
    std::fs::write(ws.path().join("data/tasks.csv"), "mine").unwrap();
    let e = materialise_inputs(&c, ws.path()).unwrap_err();
    assert!(matches!(e, MissionError::WouldOverwrite { .. }), "{e}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("data/tasks.csv")).unwrap(),
        "mine"
    );
}

#[test]
fn a_number_pattern_without_an_anchor_is_warned_about() {
    let numeric = |regex: &str| {
        let mut v = base();
        v["checks"][1] = json!({"id": "n", "kind": "numeric_consistency", "path": "out/r.md",
            "stated": {"regex": regex},
            "expected": {"from": "lines", "path": "notes.md", "pattern": "notes"}});
        let (_d, r) = load_value(&v);
        r.unwrap().warnings
    };
    // Reads the first number anywhere: warned, still loaded.
    let w = numeric(r"([0-9]+)");
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("checks[1].stated") && w[0].contains("no anchor"),
        "{w:?}"
    );
    assert_eq!(numeric(r"(?i)total\W*([0-9]+)").len(), 1);
    // A line anchor and a literal label: no warning (inline flags and escapes are not captures).
    assert!(numeric(r"(?im)^\s*total hours\s*:\s*(.*?)\s*$").is_empty());
    assert!(numeric(r"(?m)^Errors \(all\): ([0-9]+)$").is_empty());
}
