#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Editable fixtures: files a mission copies into the workspace and lets the run change ("edit
//! this config"), and the two checks that judge such an edit (`file_equals` on the whole file,
//! `nothing_else_changed` on the rest). `--approve=all` approves a change to an editable file of
//! the run's mission, by path and starting content, and still nothing else: not a frozen input,
//! not the same file reached by another spelling or through a link.

mod desk_support;

use desk_support::call;

use std::path::Path;

use rein_engine::checks::{evaluate, MemWorld, TraceEntry, World, WorldError};
use rein_engine::gate::{
    ApprovalDecision, ApprovalRequest, Approver, CallExecutor, OwnWorkApprover,
};
use rein_engine::mission::{materialise_inputs, sha256_hex, FrozenContract, Mission};
use rein_protocol::GateOutcome;
use rein_workspace::desk_registry;
use serde_json::{json, Value};

const APP: &str = "[server]\nport = 8080\n\n[logging]\nlevel = \"debug\"\n";
const EDITED: &str = "[server]\nport = 9090\n\n[logging]\nlevel = \"debug\"\n";
const README: &str = "Change requests go through #platform.\n";

/// A mission folder: `config/app.toml` editable, `config/README.md` frozen, the expected file
/// at `expected/app.toml`; `mission` is merged over the defaults.
fn mission_dir(extra: Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let fx = dir.path().join("fixtures/config");
    std::fs::create_dir_all(&fx).unwrap();
    std::fs::write(fx.join("app.toml"), APP).unwrap();
    std::fs::write(fx.join("README.md"), README).unwrap();
    std::fs::create_dir_all(dir.path().join("expected")).unwrap();
    std::fs::write(dir.path().join("expected/app.toml"), EDITED).unwrap();
    let mut m = json!({
        "id": "edit-port",
        "mode": "automatic",
        "prompt": "Set the port to 9090 in config/app.toml, in place.",
        "inputs": ["config/README.md"],
        "editable": ["config/app.toml"],
        "tools": ["read_file", "edit_file", "create_file", "finish"],
        "required_artifact": "config/app.toml",
        "checks": [
            {"id": "whole-file", "kind": "file_equals", "path": "config/app.toml",
             "expected_file": "expected/app.toml"},
            {"id": "nothing-else", "kind": "nothing_else_changed"},
            {"id": "inputs-unchanged", "kind": "inputs_unchanged"},
            {"id": "read-first", "kind": "inputs_read", "paths": ["config/app.toml"],
             "before_writing": "config/app.toml"}
        ]
    });
    for (k, v) in extra.as_object().unwrap() {
        m[k] = v.clone();
    }
    std::fs::write(dir.path().join("mission.json"), m.to_string()).unwrap();
    dir
}

fn load(dir: &Path) -> Result<FrozenContract, String> {
    Mission::load(dir).map_err(|e| e.to_string())
}

#[test]
fn editable_files_are_hashed_copied_and_part_of_the_contract() {
    let dir = mission_dir(json!({}));
    let c = load(dir.path()).unwrap();
    assert_eq!(c.editable.len(), 1);
    assert_eq!(c.editable[0].sha256, sha256_hex(APP.as_bytes()));
    assert_eq!(
        c.editable_hash("./config/app.toml"),
        Some(c.editable[0].sha256.as_str())
    );
    assert!(
        c.input_hash("config/app.toml").is_none(),
        "editable is not frozen"
    );
    assert!(c.canonical_json.contains("\"editable\""));

    let ws = tempfile::tempdir().unwrap();
    let copied = materialise_inputs(&c, ws.path()).unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.path().join("config/app.toml")).unwrap(),
        APP
    );
    // Only inputs come back: they are what the finish rules hold unchanged.
    assert_eq!(copied.len(), 1);
    assert_eq!(copied[0].path, "config/README.md");

    // The editable fixture and the expected file are part of the contract on disk.
    std::fs::write(dir.path().join("fixtures/config/app.toml"), "port = 1\n").unwrap();
    let e = c.verify_unchanged(dir.path()).unwrap_err().to_string();
    assert!(e.contains("config/app.toml"), "{e}");
    std::fs::write(dir.path().join("fixtures/config/app.toml"), APP).unwrap();
    c.verify_unchanged(dir.path()).unwrap();
    std::fs::write(dir.path().join("expected/app.toml"), "port = 1\n").unwrap();
    let e = c.verify_unchanged(dir.path()).unwrap_err().to_string();
    assert!(e.contains("expected/app.toml"), "{e}");
}

#[test]
fn a_mission_without_editable_files_keeps_its_contract_hash() {
    let dir = mission_dir(json!({"editable": [], "required_artifact": "out/app.toml",
        "checks": [{"id": "x", "kind": "file_exists", "path": "out/app.toml"}]}));
    let c = load(dir.path()).unwrap();
    assert!(
        !c.canonical_json.contains("editable"),
        "{}",
        c.canonical_json
    );
}

#[test]
fn bad_editable_lists_and_expected_files_are_refused() {
    let cases = [
        (
            json!({"editable": ["config/README.md"]}),
            "is also an input",
        ),
        (
            json!({"editable": ["./config/app.toml"]}),
            "write `./config/app.toml` as",
        ),
        (
            json!({"editable": ["config/../config/app.toml"]}),
            "`..` is not allowed",
        ),
        (
            json!({"editable": ["config/app.toml", "config/app.toml"]}),
            "listed twice",
        ),
        (json!({"editable": ["config/missing.toml"]}), "missing file"),
        (json!({"editable": ["/etc/passwd"]}), "absolute"),
    ];
    for (extra, want) in cases {
        let dir = mission_dir(extra.clone());
        let e = load(dir.path()).unwrap_err();
        assert!(e.contains(want), "{extra}: {e}");
    }
    for (expected, want) in [
        ("../outside.toml", "`..` is not allowed"),
        ("expected/nope.toml", "missing file"),
    ] {
        let dir = mission_dir(json!({}));
        let mut m: Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("mission.json")).unwrap())
                .unwrap();
        m["checks"][0]["expected_file"] = json!(expected);
        std::fs::write(dir.path().join("mission.json"), m.to_string()).unwrap();
        let e = load(dir.path()).unwrap_err();
        assert!(e.contains(want), "{expected}: {e}");
    }
}

#[cfg(unix)]
#[test]
fn an_editable_fixture_or_expected_file_that_is_a_link_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.toml"), "key = 1\n").unwrap();
    let dir = mission_dir(json!({}));
    let app = dir.path().join("fixtures/config/app.toml");
    std::fs::remove_file(&app).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.toml"), &app).unwrap();
    let e = load(dir.path()).unwrap_err();
    assert!(e.contains("not a regular file"), "{e}");

    let dir = mission_dir(json!({}));
    let exp = dir.path().join("expected/app.toml");
    std::fs::remove_file(&exp).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.toml"), &exp).unwrap();
    let e = load(dir.path()).unwrap_err();
    assert!(e.contains("not a regular file"), "{e}");
}

/// The world a run of `c` starts with, plus `files`, less `deleted`.
fn world(c: &FrozenContract, files: &[(&str, &str)], deleted: &[&str]) -> MemWorld {
    let mut w = MemWorld::new()
        .with_file("config/app.toml", APP)
        .with_file("config/README.md", README);
    for (p, b) in files {
        w.set_file(p, b.as_bytes().to_vec());
    }
    for p in deleted {
        w.remove_file(p);
    }
    assert!(c.editable_hash("config/app.toml").is_some());
    w
}

fn edited_trace(w: &dyn World, also: &[&str]) -> Vec<TraceEntry> {
    let hash = |p: &str| w.read(p).unwrap().map(|b| sha256_hex(&b));
    let mut t = vec![
        TraceEntry::new("read_file", Some("config/app.toml"), "executed", false)
            .with_full_read(true),
        TraceEntry::new("edit_file", Some("config/app.toml"), "executed", true)
            .with_written(hash("config/app.toml")),
    ];
    for p in also {
        t.push(TraceEntry::new("edit_file", Some(p), "executed", true).with_written(hash(p)));
    }
    t
}

fn failed(c: &FrozenContract, w: &dyn World, trace: &[TraceEntry]) -> Vec<String> {
    evaluate(c, w, trace, None)
        .checks
        .into_iter()
        .filter(|r| !r.passed)
        .map(|r| r.id)
        .collect()
}

#[test]
fn file_equals_reads_the_whole_file_with_line_endings_normalised() {
    let dir = mission_dir(json!({}));
    let c = load(dir.path()).unwrap();
    let crlf = EDITED.replace('\n', "\r\n");
    let no_final_newline = EDITED.trim_end_matches('\n');
    for good in [EDITED, crlf.as_str(), no_final_newline] {
        let w = world(&c, &[("config/app.toml", good)], &[]);
        assert_eq!(
            failed(&c, &w, &edited_trace(&w, &[])),
            Vec::<String>::new(),
            "{good:?}"
        );
    }
    let extra_blank = format!("{EDITED}\n");
    let extra_line = format!("{EDITED}workers = 4\n");
    let one_wrong = EDITED.replace("9090", "9091");
    let quoted = EDITED.replace("9090", "\"9090\"");
    for bad in [
        extra_blank.as_str(),
        extra_line.as_str(),
        one_wrong.as_str(),
        quoted.as_str(),
        APP,
    ] {
        let w = world(&c, &[("config/app.toml", bad)], &[]);
        let v = evaluate(&c, &w, &edited_trace(&w, &[]), None);
        let whole = v.checks.iter().find(|r| r.id == "whole-file").unwrap();
        assert!(!whole.passed, "{bad:?}");
        // The model is told where, never what the expected line is.
        assert!(
            !whole.feedback.join("\n").contains("9090\"") || bad == quoted,
            "{whole:?}"
        );
        assert!(whole.facts.join("\n").contains("should be"), "{whole:?}");
    }
    let w = world(&c, &[("config/app.toml", &one_wrong)], &[]);
    let v = evaluate(&c, &w, &edited_trace(&w, &[]), None);
    let whole = v.checks.iter().find(|r| r.id == "whole-file").unwrap();
    assert!(whole.feedback.join("\n").contains("line 2"), "{whole:?}");
    assert!(
        !whole.feedback.join("\n").contains("port = 9090"),
        "{whole:?}"
    );
}

#[test]
fn nothing_else_changed_catches_a_new_file_a_deleted_input_and_a_change_put_back() {
    let dir = mission_dir(json!({}));
    let c = load(dir.path()).unwrap();
    let w = world(&c, &[("config/app.toml", EDITED)], &[]);
    assert!(failed(&c, &w, &edited_trace(&w, &[])).is_empty());

    // A backup, a copy in out/, a scratch file: each is a change the task did not ask for.
    for extra in ["config/app.toml.bak", "out/app.toml", "notes.txt"] {
        let w = world(&c, &[("config/app.toml", EDITED), (extra, APP)], &[]);
        assert_eq!(
            failed(&c, &w, &edited_trace(&w, &[])),
            ["nothing-else"],
            "{extra}"
        );
    }
    // The frozen neighbour deleted, or changed.
    let w = world(&c, &[("config/app.toml", EDITED)], &["config/README.md"]);
    let f = failed(&c, &w, &edited_trace(&w, &[]));
    assert!(f.contains(&"nothing-else".to_string()), "{f:?}");
    // A file created and deleted again leaves no trace on disk, but the trace has it.
    let w = world(&c, &[("config/app.toml", EDITED)], &[]);
    let mut t = edited_trace(&w, &[]);
    t.push(TraceEntry::new("create_file", Some("tmp.txt"), "executed", true).with_written(None));
    assert_eq!(failed(&c, &w, &t), ["nothing-else"]);
    // A refused call changed nothing and does not count.
    let mut t = edited_trace(&w, &[]);
    t.push(TraceEntry::new(
        "create_file",
        Some("tmp.txt"),
        "denied",
        true,
    ));
    assert!(failed(&c, &w, &t).is_empty());
    // `allow` names a deliverable the task may also write.
    let dir = mission_dir(json!({"checks": [
        {"id": "nothing-else", "kind": "nothing_else_changed", "allow": ["out/changes.md"]}]}));
    let c = load(dir.path()).unwrap();
    let w = world(
        &c,
        &[("config/app.toml", EDITED), ("out/changes.md", "port\n")],
        &[],
    );
    assert!(failed(&c, &w, &edited_trace(&w, &["out/changes.md"])).is_empty());
    // A frozen input is never allowed.
    let dir = mission_dir(json!({"checks": [
        {"id": "nothing-else", "kind": "nothing_else_changed", "allow": ["config/README.md"]}]}));
    assert!(load(dir.path()).unwrap_err().contains("frozen input"));
}

#[test]
fn an_input_in_allow_deleted_may_go_but_not_be_rewritten_or_recreated() {
    let dir = mission_dir(json!({"checks": [
        {"id": "nothing-else", "kind": "nothing_else_changed",
         "allow_deleted": ["config/README.md"]}]}));
    let c = load(dir.path()).unwrap();
    let delete = || TraceEntry::new("delete_file", Some("config/README.md"), "executed", true);
    // Deleted, as the task may ask.
    let w = world(&c, &[("config/app.toml", EDITED)], &["config/README.md"]);
    let mut t = edited_trace(&w, &[]);
    t.push(delete());
    assert!(failed(&c, &w, &t).is_empty());
    // Kept as frozen is fine too.
    let w = world(&c, &[("config/app.toml", EDITED)], &[]);
    assert!(failed(&c, &w, &edited_trace(&w, &[])).is_empty());
    // Deleted and written again, with other bytes or the same ones: not a deletion.
    for recreated in ["other\n", README] {
        let w = world(
            &c,
            &[("config/app.toml", EDITED), ("config/README.md", recreated)],
            &[],
        );
        let mut t = edited_trace(&w, &[]);
        t.push(delete());
        t.push(
            TraceEntry::new("create_file", Some("config/README.md"), "executed", true)
                .with_written(None),
        );
        assert_eq!(failed(&c, &w, &t), ["nothing-else"], "{recreated:?}");
    }
    // Rewritten before it was deleted: the write was not asked for.
    let w = world(&c, &[("config/app.toml", EDITED)], &["config/README.md"]);
    let mut t = edited_trace(&w, &[]);
    t.push(
        TraceEntry::new("create_file", Some("config/README.md"), "executed", true)
            .with_written(None),
    );
    t.push(delete());
    assert_eq!(failed(&c, &w, &t), ["nothing-else"]);
    // Only an input can be listed as deletable.
    let dir = mission_dir(json!({"checks": [
        {"id": "nothing-else", "kind": "nothing_else_changed",
         "allow_deleted": ["config/other.md"]}]}));
    assert!(load(dir.path()).unwrap_err().contains("not an input"));
}

#[test]
fn file_equals_can_require_exact_line_endings_and_a_final_newline() {
    let dir = mission_dir(json!({"checks": [
        {"id": "whole-file", "kind": "file_equals", "path": "config/app.toml",
         "expected_file": "expected/app.toml", "line_endings": "exact",
         "final_newline": "required"}]}));
    let c = load(dir.path()).unwrap();
    let check = |text: &str| {
        let w = world(&c, &[("config/app.toml", text)], &[]);
        let v = evaluate(&c, &w, &edited_trace(&w, &[]), None);
        let whole = v.checks.into_iter().find(|r| r.id == "whole-file").unwrap();
        (whole.passed, whole.feedback.join("\n"))
    };
    assert!(check(EDITED).0);
    let (passed, why) = check(&EDITED.replace('\n', "\r\n"));
    assert!(!passed && why.contains("line endings"), "{why}");
    let (passed, why) = check(EDITED.trim_end_matches('\n'));
    assert!(!passed && why.contains("newline"), "{why}");
    let (passed, _) = check(&EDITED.replace("9090", "9091"));
    assert!(!passed);
    // The options are part of the contract: the same mission without them hashes otherwise.
    let plain = load(
        mission_dir(json!({"checks": [
        {"id": "whole-file", "kind": "file_equals", "path": "config/app.toml",
         "expected_file": "expected/app.toml"}]}))
        .path(),
    )
    .unwrap();
    assert_ne!(plain.sha256, c.sha256);
}

/// A world that cannot list its files.
struct Unlisted(MemWorld);

impl World for Unlisted {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, WorldError> {
        self.0.read(path)
    }
    fn variable(&self, name: &str) -> Option<Value> {
        self.0.variable(name)
    }
}

#[test]
fn nothing_else_changed_fails_closed_on_a_world_it_cannot_list() {
    let dir = mission_dir(json!({}));
    let c = load(dir.path()).unwrap();
    let w = Unlisted(world(&c, &[("config/app.toml", EDITED)], &[]));
    assert_eq!(failed(&c, &w, &edited_trace(&w, &[])), ["nothing-else"]);
}

fn request(path: &str, before: Option<&str>) -> ApprovalRequest {
    ApprovalRequest {
        call_id: "c".into(),
        tool: "edit_file".into(),
        path: path.into(),
        diff: "-a\n+b\n".into(),
        before_sha256: before.map(str::to_string),
        after_sha256: Some(sha256_hex(b"after")),
        reads_protected_content: false,
    }
}

#[test]
fn the_approver_allows_the_editable_file_by_path_and_content_only() {
    let app = sha256_hex(APP.as_bytes());
    let readme = sha256_hex(README.as_bytes());
    let fresh = || OwnWorkApprover::new([("config/app.toml".to_string(), app.clone())]);
    let allow = |a: &mut OwnWorkApprover, r: &ApprovalRequest| {
        matches!(a.decide(r), ApprovalDecision::AllowOnce)
    };
    assert!(allow(&mut fresh(), &request("config/app.toml", Some(&app))));
    assert!(allow(
        &mut fresh(),
        &request("./config/app.toml", Some(&app))
    ));
    assert!(
        allow(&mut fresh(), &request("out/new.md", None)),
        "a new file"
    );
    // A frozen input, though the run copied it in.
    assert!(!allow(
        &mut fresh(),
        &request("config/README.md", Some(&readme))
    ));
    // The editable file's content under another name: a link to it, a copy, a `..` spelling.
    assert!(!allow(&mut fresh(), &request("link.toml", Some(&app))));
    assert!(!allow(
        &mut fresh(),
        &request("config/app.toml.bak", Some(&app))
    ));
    assert!(!allow(
        &mut fresh(),
        &request("./config/../config/app.toml", Some(&app))
    ));
    assert!(!allow(
        &mut fresh(),
        &request("/abs/config/app.toml", Some(&app))
    ));
    // The editable file after a person changed it.
    assert!(!allow(
        &mut fresh(),
        &request("config/app.toml", Some(&readme))
    ));
    // What the run wrote is its own; deleting it and creating it again too.
    let mut a = fresh();
    assert!(allow(&mut a, &request("config/app.toml", Some(&app))));
    assert!(allow(
        &mut a,
        &request("config/app.toml", Some(&sha256_hex(b"after")))
    ));
    // An earlier version the run put there is still its own: Rein's undo of a worse attempt
    // (lever `monotone-attempts`) puts one back, and the next attempt edits it.
    assert!(
        allow(&mut a, &request("config/app.toml", Some(&app))),
        "an earlier version of the run's own"
    );
    // Content the run never put there is not.
    assert!(
        !allow(
            &mut a,
            &request("config/app.toml", Some(&sha256_hex(b"a person's")))
        ),
        "content the run never wrote"
    );
}

#[test]
fn through_the_gate_only_the_editable_file_changes() {
    let env = desk_support::env("unrelated\n");
    std::fs::create_dir_all(env.root.join("config")).unwrap();
    std::fs::write(env.root.join("config/app.toml"), APP).unwrap();
    std::fs::write(env.root.join("config/README.md"), README).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("config/app.toml", env.root.join("link.toml")).unwrap();
    let registry = desk_registry();
    let mut gate = env.gate(&registry);
    let mut approver =
        OwnWorkApprover::new([("config/app.toml".to_string(), sha256_hex(APP.as_bytes()))]);
    let edit = |path: &str| json!({"path": path, "old_text": "8080", "new_text": "9090"});
    let readme_edit =
        json!({"path": "config/README.md", "old_text": "#platform", "new_text": "#ops"});

    let r = gate.submit(&call("c1", "edit_file", readme_edit), &mut approver);
    assert_eq!(r.outcome, GateOutcome::ApprovalRequired, "{r:?}");
    let r = gate.submit(
        &call("c2", "edit_file", edit("./config/../config/app.toml")),
        &mut approver,
    );
    assert_ne!(r.outcome, GateOutcome::Executed, "{r:?}");
    #[cfg(unix)]
    {
        let r = gate.submit(&call("c3", "edit_file", edit("link.toml")), &mut approver);
        assert_ne!(r.outcome, GateOutcome::Executed, "{r:?}");
    }
    let r = gate.submit(
        &call(
            "c4",
            "replace_file",
            json!({"path": "a.txt", "content": "x\n"}),
        ),
        &mut approver,
    );
    assert_eq!(
        r.outcome,
        GateOutcome::ApprovalRequired,
        "a file the run did not put there"
    );
    assert_eq!(env.read("config/app.toml").unwrap(), APP);
    assert_eq!(env.read("config/README.md").unwrap(), README);
    assert_eq!(env.read("a.txt").unwrap(), "unrelated\n");

    let r = gate.submit(
        &call("c5", "edit_file", edit("config/app.toml")),
        &mut approver,
    );
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    assert_eq!(env.read("config/app.toml").unwrap(), EDITED);
}

#[test]
fn the_readme_example_is_the_fixture_and_its_judge_is_right() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixture = root.join("tests/fixtures/edit-port");
    let readme = std::fs::read_to_string(root.join("../../suites/README.md")).unwrap();
    let mission = std::fs::read_to_string(fixture.join("mission.json")).unwrap();
    assert!(
        readme.contains(mission.trim_end()),
        "suites/README.md shows another edit-port mission than the fixture"
    );
    let c = Mission::load(&fixture).unwrap();
    let report = rein_engine::cases::check_mission(&c).unwrap();
    assert!(report.ok(), "{report:#?}");
    assert_eq!((report.gold, report.near_misses), (1, 2));
}
