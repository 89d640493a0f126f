#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of `OwnWorkApprover` keeping every version the run put at a path (not only the
//! latest): can a run under `--approve=all` / `rein bench` now change content it never wrote?
//! A test that exposes a hole fails now and says "HOLE:"; one that holds passes.

mod desk_support;

use desk_support::call;

use rein_engine::gate::{
    ApprovalDecision, ApprovalRequest, Approver, CallExecutor, OwnWorkApprover,
};
use rein_protocol::canonical::sha256_hex;
use rein_protocol::GateOutcome;
use rein_workspace::desk_registry;
use serde_json::json;

const README: &str = "Change requests go through #platform.\n";

fn sha(text: &str) -> String {
    sha256_hex(text.as_bytes())
}

fn req(path: &str, before: Option<&str>, after: Option<&str>) -> ApprovalRequest {
    ApprovalRequest {
        call_id: "c".into(),
        tool: "replace_file".into(),
        path: path.into(),
        diff: "--- a\n+++ b\n".into(),
        before_sha256: before.map(str::to_string),
        after_sha256: after.map(str::to_string),
        reads_protected_content: false,
    }
}

fn allows(a: &mut OwnWorkApprover, r: &ApprovalRequest) -> bool {
    a.decide(r) == ApprovalDecision::AllowOnce
}

// ---------------------------------------------------------------- the approver alone

#[test]
fn a_frozen_input_holding_content_the_run_wrote_elsewhere_is_denied() {
    let mut a = OwnWorkApprover::new([("config/app.toml".to_string(), sha("app\n"))]);
    // The run copies the frozen README into its own file: README's hash is now "ours" there.
    assert!(allows(
        &mut a,
        &req("out/copy.md", None, Some(&sha(README)))
    ));
    assert!(allows(
        &mut a,
        &req("out/copy.md", Some(&sha(README)), Some(&sha("x\n")))
    ));
    // ... but not at the frozen input's path, nor at the editable file's path.
    assert!(!allows(
        &mut a,
        &req("config/README.md", Some(&sha(README)), Some(&sha("y\n")))
    ));
    assert!(!allows(
        &mut a,
        &req("config/README.md", Some(&sha(README)), None)
    ));
    assert!(!allows(
        &mut a,
        &req("config/app.toml", Some(&sha(README)), None)
    ));
    // The editable file's starting content is not ours at another path either.
    assert!(!allows(
        &mut a,
        &req("config/other.toml", Some(&sha("app\n")), None)
    ));
}

#[test]
fn same_file_spellings_are_one_path_and_others_are_denied() {
    let x = sha("x\n");
    let fresh = || {
        let mut a = OwnWorkApprover::default();
        assert!(allows(&mut a, &req("out/a.md", None, Some(&x))));
        a
    };
    // Spellings of the same file: the run's own.
    for same in [
        "out/a.md",
        "./out/a.md",
        "out//a.md",
        "out/./a.md",
        "out/a.md/",
    ] {
        assert!(allows(&mut fresh(), &req(same, Some(&x), None)), "{same}");
    }
    // Not the same file, or not a workspace path at all.
    for other in [
        "../ws/out/a.md",
        "out/b/../a.md",
        "/out/a.md",
        "//out/a.md",
        "out\\a.md",
        ".\\out\\a.md",
        "OUT/a.md",
        "out/A.md",
        "out/a.MD",
        "out/a.md.bak",
        "out",
        "out/a.md/x",
        "out/a.md\0",
        " out/a.md",
        "",
        ".",
        "./",
    ] {
        assert!(
            !allows(&mut fresh(), &req(other, Some(&x), None)),
            "{other:?}"
        );
    }
}

#[test]
fn hex_case_is_the_same_content_and_nothing_more() {
    let x = sha("x\n");
    let mut a = OwnWorkApprover::new([("e.txt".to_string(), x.to_ascii_uppercase())]);
    assert!(allows(&mut a, &req("e.txt", Some(&x), None)));
    assert!(allows(
        &mut a,
        &req("e.txt", Some(&x.to_ascii_uppercase()), None)
    ));
    // A hash that is not the content's (whitespace, a prefix) is not ours.
    assert!(!allows(&mut a, &req("e.txt", Some(&format!(" {x}")), None)));
    assert!(!allows(&mut a, &req("e.txt", Some(&x[..63]), None)));
    assert!(!allows(&mut a, &req("e.txt", Some(""), None)));
}

#[test]
fn a_deleted_file_recreated_by_a_person_with_other_content_is_denied() {
    let mut a = OwnWorkApprover::default();
    assert!(allows(&mut a, &req("r.md", None, Some(&sha("v1\n")))));
    assert!(allows(
        &mut a,
        &req("r.md", Some(&sha("v1\n")), Some(&sha("v2\n")))
    ));
    assert!(allows(&mut a, &req("r.md", Some(&sha("v2\n")), None)));
    // A person saves their own r.md.
    assert!(!allows(&mut a, &req("r.md", Some(&sha("mine\n")), None)));
    assert!(!allows(
        &mut a,
        &req("r.md", Some(&sha("mine\n")), Some(&sha("v1\n")))
    ));
    // The same bytes the run wrote (an undo puts one back): ours, nothing is lost.
    assert!(allows(&mut a, &req("r.md", Some(&sha("v1\n")), None)));
}

#[test]
fn a_persons_content_at_an_editable_path_is_denied() {
    let start = sha("start\n");
    let mut a = OwnWorkApprover::new([("cfg.toml".to_string(), start.clone())]);
    assert!(!allows(
        &mut a,
        &req("cfg.toml", Some(&sha("person\n")), Some(&start))
    ));
    assert!(allows(
        &mut a,
        &req("cfg.toml", Some(&start), Some(&sha("run\n")))
    ));
    assert!(!allows(
        &mut a,
        &req("cfg.toml", Some(&sha("person\n")), None)
    ));
    // Back at its starting content (by the undo or a person's revert): the same bytes the
    // mission froze, so nothing is lost by changing it (by design).
    assert!(allows(&mut a, &req("cfg.toml", Some(&start), None)));
}

#[test]
fn a_request_naming_no_file_records_nothing_and_a_pre_image_without_a_path_is_denied() {
    let x = sha("x\n");
    let mut a = OwnWorkApprover::default();
    assert!(!allows(&mut a, &req("", Some(&x), Some(&x))));
    // No path and no pre-image: approved (a sandbox's final answer), but its after hash is
    // no one's.
    assert!(allows(&mut a, &req("", None, Some(&x))));
    // A read of the folder that policy asks about is no change: refused.
    let mut read = req("", None, None);
    read.diff.clear();
    assert!(!allows(&mut a, &read));
    for path in ["", ".", "x", "out/x"] {
        assert!(!allows(&mut a, &req(path, Some(&x), None)), "{path:?}");
    }
}

#[test]
fn a_denied_request_adds_no_version() {
    let y = sha("y\n");
    let mut a = OwnWorkApprover::new([("e.txt".to_string(), sha("e\n"))]);
    // Denied: the person's content is not ours; its after hash must not become ours.
    assert!(!allows(&mut a, &req("e.txt", Some(&sha("p\n")), Some(&y))));
    assert!(!allows(&mut a, &req("e.txt", Some(&y), None)));
    // A path that does not normalise records nothing under any spelling.
    assert!(!allows(&mut a, &req("../e.txt", None, Some(&y))));
    assert!(!allows(&mut a, &req("e.txt", Some(&y), None)));
}

#[test]
fn approved_versions_are_per_path_not_per_prefix_or_folder() {
    let x = sha("x\n");
    let mut a = OwnWorkApprover::default();
    assert!(allows(&mut a, &req("out/a.md", None, Some(&x))));
    for other in [
        "out",
        "out/a",
        "out/a.md.orig",
        "out/a.md/b",
        "a.md",
        "x/out/a.md",
    ] {
        assert!(!allows(&mut a, &req(other, Some(&x), None)), "{other}");
    }
}

// ---------------------------------------------------------------- through the gate

/// A workspace with a frozen `config/README.md` and `thesis/chapter1.md` (a person's).
fn env() -> desk_support::Env {
    let env = desk_support::env("person's a.txt\n");
    std::fs::create_dir_all(env.root.join("config")).unwrap();
    std::fs::write(env.root.join("config/README.md"), README).unwrap();
    std::fs::create_dir_all(env.root.join("thesis")).unwrap();
    std::fs::write(env.root.join("thesis/chapter1.md"), "three years\n").unwrap();
    env
}

#[test]
fn gate_frozen_input_with_content_the_run_copied_elsewhere_stays() {
    let env = env();
    let registry = desk_registry();
    let mut gate = env.gate(&registry);
    let mut a = OwnWorkApprover::default();
    let r = gate.submit(
        &call(
            "c1",
            "create_file",
            json!({"path": "out/copy.md", "content": README}),
        ),
        &mut a,
    );
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    for (id, tool, args) in [
        (
            "c2",
            "edit_file",
            json!({"path": "config/README.md", "old_text": "#platform", "new_text": "#ops"}),
        ),
        ("c3", "delete_file", json!({"path": "config/README.md"})),
        (
            "c4",
            "replace_file",
            json!({"path": "./config//README.md", "content": "gone\n"}),
        ),
        (
            "c5",
            "edit_file",
            json!({"path": "out/../config/README.md", "old_text": "#platform", "new_text": "#ops"}),
        ),
    ] {
        let r = gate.submit(&call(id, tool, args), &mut a);
        assert_ne!(r.outcome, GateOutcome::Executed, "{id}: {r:?}");
    }
    assert_eq!(env.read("config/README.md").unwrap(), README);
}

#[test]
fn gate_deleted_then_recreated_by_a_person_is_not_touched() {
    let env = env();
    let registry = desk_registry();
    let mut gate = env.gate(&registry);
    let mut a = OwnWorkApprover::default();
    let steps = [
        call(
            "c1",
            "create_file",
            json!({"path": "r.md", "content": "v1\n"}),
        ),
        call(
            "c2",
            "replace_file",
            json!({"path": "r.md", "content": "v2\n"}),
        ),
        call("c3", "delete_file", json!({"path": "r.md"})),
    ];
    for s in &steps {
        let r = gate.submit(s, &mut a);
        assert_eq!(r.outcome, GateOutcome::Executed, "{}: {r:?}", s.id);
    }
    std::fs::write(env.root.join("r.md"), "the person's r.md\n").unwrap();
    for (id, tool, args) in [
        ("c4", "delete_file", json!({"path": "r.md"})),
        (
            "c5",
            "replace_file",
            json!({"path": "./r.md", "content": "v1\n"}),
        ),
        (
            "c6",
            "edit_file",
            json!({"path": "r.md", "old_text": "person", "new_text": "model"}),
        ),
        (
            "c7",
            "create_file",
            json!({"path": "r.md", "content": "v1\n"}),
        ),
    ] {
        let r = gate.submit(&call(id, tool, args), &mut a);
        assert_ne!(r.outcome, GateOutcome::Executed, "{id}: {r:?}");
    }
    assert_eq!(env.read("r.md").unwrap(), "the person's r.md\n");
}

#[test]
fn gate_an_earlier_version_put_back_may_be_changed_again() {
    // The reason for the change: the undo restores v1 without asking; the next edit passes.
    let env = env();
    let registry = desk_registry();
    let mut gate = env.gate(&registry);
    let mut a = OwnWorkApprover::default();
    for s in [
        call(
            "c1",
            "create_file",
            json!({"path": "r.md", "content": "v1\n"}),
        ),
        call(
            "c2",
            "replace_file",
            json!({"path": "r.md", "content": "v2\n"}),
        ),
    ] {
        assert_eq!(gate.submit(&s, &mut a).outcome, GateOutcome::Executed);
    }
    std::fs::write(env.root.join("r.md"), "v1\n").unwrap();
    let r = gate.submit(
        &call(
            "c3",
            "edit_file",
            json!({"path": "r.md", "old_text": "v1", "new_text": "v3"}),
        ),
        &mut a,
    );
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    assert_eq!(env.read("r.md").unwrap(), "v3\n");
}

#[cfg(unix)]
#[test]
fn gate_a_run_file_swapped_for_a_link_to_a_frozen_input_with_the_same_content() {
    let env = env();
    let registry = desk_registry();
    let mut gate = env.gate(&registry);
    let mut a = OwnWorkApprover::default();
    // The run wrote README's exact content at out/r.md, so README's hash is ours there.
    for s in [
        call(
            "c1",
            "create_file",
            json!({"path": "out/r.md", "content": README}),
        ),
        call(
            "c2",
            "create_file",
            json!({"path": "out2/README.md", "content": README}),
        ),
    ] {
        assert_eq!(gate.submit(&s, &mut a).outcome, GateOutcome::Executed);
    }
    // A race swaps the file for a link to the frozen input, and the folder for a link to
    // the frozen folder.
    std::fs::remove_file(env.root.join("out/r.md")).unwrap();
    std::os::unix::fs::symlink("../config/README.md", env.root.join("out/r.md")).unwrap();
    std::fs::remove_dir_all(env.root.join("out2")).unwrap();
    std::os::unix::fs::symlink("config", env.root.join("out2")).unwrap();
    let edit = |p: &str| json!({"path": p, "old_text": "#platform", "new_text": "#ops"});
    for (id, tool, args) in [
        ("c3", "edit_file", edit("out/r.md")),
        (
            "c4",
            "replace_file",
            json!({"path": "out/r.md", "content": "x\n"}),
        ),
        ("c5", "edit_file", edit("out2/README.md")),
        ("c6", "delete_file", json!({"path": "out2/README.md"})),
    ] {
        let r = gate.submit(&call(id, tool, args), &mut a);
        assert_ne!(r.outcome, GateOutcome::Executed, "{id}: {r:?}");
        assert_eq!(env.read("config/README.md").unwrap(), README, "{id}");
    }
    // The delete of the link itself (not its target) would be harmless; the target stays.
    let _ = gate.submit(
        &call("c7", "delete_file", json!({"path": "out/r.md"})),
        &mut a,
    );
    assert_eq!(env.read("config/README.md").unwrap(), README);
}

#[cfg(unix)]
#[test]
fn gate_a_run_file_swapped_for_a_hard_link_to_a_frozen_input_never_writes_through() {
    let env = env();
    let registry = desk_registry();
    let mut gate = env.gate(&registry);
    let mut a = OwnWorkApprover::default();
    let r = gate.submit(
        &call(
            "c1",
            "create_file",
            json!({"path": "out/r.md", "content": README}),
        ),
        &mut a,
    );
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    std::fs::remove_file(env.root.join("out/r.md")).unwrap();
    std::fs::hard_link(env.root.join("config/README.md"), env.root.join("out/r.md")).unwrap();
    // Same bytes as the run's version: approved or not, the frozen input's inode must not
    // be written through.
    for (id, tool, args) in [
        (
            "c2",
            "edit_file",
            json!({"path": "out/r.md", "old_text": "#platform", "new_text": "#ops"}),
        ),
        (
            "c3",
            "replace_file",
            json!({"path": "out/r.md", "content": "x\n"}),
        ),
        ("c4", "delete_file", json!({"path": "out/r.md"})),
    ] {
        let _ = gate.submit(&call(id, tool, args), &mut a);
        assert_eq!(env.read("config/README.md").unwrap(), README, "{id}");
    }
}

#[test]
fn gate_no_folder_or_root_is_deleted_as_a_new_file() {
    // A folder has no content hash: a request for it must not pass as "creating an absent file".
    let env = env();
    let registry = desk_registry();
    let mut gate = env.gate(&registry);
    let mut a = OwnWorkApprover::default();
    for (id, path) in [
        ("c1", "thesis"),
        ("c2", "thesis/"),
        ("c3", "."),
        ("c4", ""),
        ("c5", "./thesis/."),
    ] {
        let r = gate.submit(&call(id, "delete_file", json!({ "path": path })), &mut a);
        assert_ne!(r.outcome, GateOutcome::Executed, "{id} {path:?}: {r:?}");
    }
    for (id, path) in [("c6", "thesis"), ("c7", ".")] {
        let r = gate.submit(
            &call(id, "replace_file", json!({"path": path, "content": "x\n"})),
            &mut a,
        );
        assert_ne!(r.outcome, GateOutcome::Executed, "{id} {path:?}: {r:?}");
    }
    assert_eq!(env.read("thesis/chapter1.md").unwrap(), "three years\n");
    assert_eq!(env.read("config/README.md").unwrap(), README);
}

#[test]
fn gate_a_persons_file_under_a_new_spelling_is_not_a_new_file() {
    // `create_file` on a path spelled to reach an existing person's file must see it exists.
    let env = env();
    let registry = desk_registry();
    let mut gate = env.gate(&registry);
    let mut a = OwnWorkApprover::default();
    for (id, path) in [
        ("c1", "./thesis/chapter1.md"),
        ("c2", "thesis//chapter1.md"),
        ("c3", "x/../thesis/chapter1.md"),
        ("c4", "thesis\\chapter1.md"),
    ] {
        let r = gate.submit(
            &call(id, "replace_file", json!({"path": path, "content": "x\n"})),
            &mut a,
        );
        assert_ne!(r.outcome, GateOutcome::Executed, "{id} {path:?}: {r:?}");
        let r = gate.submit(
            &call(&format!("{id}d"), "delete_file", json!({ "path": path })),
            &mut a,
        );
        assert_ne!(r.outcome, GateOutcome::Executed, "{id} {path:?}: {r:?}");
    }
    assert_eq!(env.read("thesis/chapter1.md").unwrap(), "three years\n");
}

// ---------------------------------------------------------------- rein bench

#[test]
fn bench_dir_tasks_use_the_own_work_approver() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let runner = std::fs::read_to_string(root.join("../rein-cli/src/bench_cmd/runner.rs")).unwrap();
    let start = runner.find("fn run_one(").expect("run_one");
    let body = &runner[start..];
    let end = body[1..].find("\nfn ").map_or(body.len(), |i| i + 1);
    let body = &body[..end];
    assert!(
        body.contains("OwnWorkApprover::for_contract(contract)"),
        "run_one must approve with OwnWorkApprover"
    );
    assert!(
        body.contains("Sandbox::Memory"),
        "memory tasks branch off first"
    );
    assert!(
        !runner.contains("AllowAll"),
        "runner.rs approves nothing wholesale"
    );
    // Only the in-memory sandbox (no person's files) may use AllowAll.
    let bench = root.join("../rein-cli/src/bench_cmd");
    for entry in std::fs::read_dir(&bench).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            if text.contains("AllowAll") {
                assert!(p.ends_with("memory.rs"), "{} uses AllowAll", p.display());
            }
        }
    }
}
