#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of `OwnWorkApprover` refusing reads that policy asks about (commit 8744b3f): under
//! `rein run --approve=all` / `rein bench`, can a read a person's policy asks about still show
//! protected content, or a hint of it (a hash, a size, a line count, whether a guess was right),
//! through any reading tool, a change that reads first, a replay, another spelling of the path,
//! a link, or a walk? And are the run's own changes still approved, with a refusal recording
//! nothing? A test that exposes a hole is marked `#[ignore = "HOLE: ..."]`; the rest hold.

mod desk_support;

use desk_support::call;

use rein_engine::gate::{
    AllowAll, ApprovalDecision, ApprovalRequest, Approver, CallExecutor, Gate, GateConfig,
    GateTarget, OwnWorkApprover,
};
use rein_engine::policy::{Policy, PolicyAction, Rule};
use rein_journal::{CallScope, ChangeId, Journal};
use rein_protocol::canonical::sha256_hex;
use rein_protocol::{GateOutcome, GateReport};
use rein_workspace::desk::{render_sections, serialise_json, Section};
use rein_workspace::{desk_registry, sandbox_registry, Sandbox};
use serde_json::{json, Value};

/// The protected file's content: a password and two rarer words a walk could match on.
const SECRET: &str = "hunter2 zanzibar quokka\n";
/// A protected table.
const TABLE: &str = "name,amount\nalice,4242\n";
/// A public file sharing the secret's rarer words (so `find_related` would rank the secret).
const NOTES: &str = "zanzibar quokka trip notes\n";
const INPUT: &str = "input\n";

fn sha(text: &str) -> String {
    sha256_hex(text.as_bytes())
}

/// A workspace as a person's folder: the run's editable `a.txt`, a public folder and a
/// `secrets` folder (with a nested one) whose reading policy asks.
fn setup() -> desk_support::Env {
    let env = desk_support::env(INPUT);
    for dir in ["secrets/sub", "public"] {
        std::fs::create_dir_all(env.root.join(dir)).unwrap();
    }
    std::fs::write(env.root.join("secrets/key.txt"), SECRET).unwrap();
    std::fs::write(env.root.join("secrets/sub/deep.txt"), SECRET).unwrap();
    std::fs::write(env.root.join("secrets/pay.csv"), TABLE).unwrap();
    std::fs::write(env.root.join("public/notes.txt"), NOTES).unwrap();
    env
}

fn ask_read(paths: &[&str]) -> Vec<Rule> {
    vec![Rule::new("read_file", paths, PolicyAction::Ask).unwrap()]
}

/// What `--approve=all` builds for a mission whose editable file is `a.txt`.
fn own_work() -> OwnWorkApprover {
    OwnWorkApprover::new([("a.txt".to_string(), sha(INPUT))])
}

/// The protected content, or a hint of it, that `r` shows, if any.
fn leak(r: &GateReport) -> Option<String> {
    let shown = format!("{} {}", r.reason, r.result);
    let hints = [
        "hunter2".to_string(),
        "4242".to_string(),
        "alice".to_string(),
        sha(SECRET),
        sha(TABLE),
    ];
    hints.into_iter().find(|h| shown.contains(h.as_str()))
}

fn assert_no_leak(what: &str, r: &GateReport) {
    assert_eq!(leak(r), None, "{what} shows protected content: {r:?}");
}

/// Every file of the folder (outside the journal) with its bytes.
fn snapshot(env: &desk_support::Env) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &std::path::Path, base: &std::path::Path, out: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            let meta = std::fs::symlink_metadata(&p).unwrap();
            let name = p.strip_prefix(base).unwrap().display().to_string();
            if meta.is_dir() {
                walk(&p, base, out);
            } else if meta.is_file() {
                out.push((name, std::fs::read(&p).unwrap()));
            } else {
                out.push((name, b"<link>".to_vec()));
            }
        }
    }
    let mut out = Vec::new();
    walk(&env.root, &env.root, &mut out);
    out
}

fn change_count(env: &desk_support::Env) -> usize {
    env.journal.changes(&env.ws.display_root()).unwrap().len()
}

/// A refusal of a read policy asks about: approval-required, saying why, showing nothing.
fn assert_read_refused(what: &str, r: &GateReport) {
    assert_eq!(r.outcome, GateOutcome::ApprovalRequired, "{what}: {r:?}");
    assert!(r.reason.contains("policy asks about"), "{what}: {r:?}");
    assert_eq!(r.result, Value::Null, "{what}: {r:?}");
    assert_no_leak(what, r);
}

// ------------------------------------------------------------------ reads naming the file

#[test]
fn every_reading_tool_naming_a_protected_file_is_refused_whatever_it_asks() {
    let env = setup();
    let registry = desk_registry();
    let mut gate = env.gate_with(&registry, ask_read(&["secrets/**"]));
    let mut a = own_work();
    // Pairs of calls whose answers would differ if the tool ran (a right and a wrong guess,
    // an existing and a missing column, a match and none): both must end the same way.
    let pairs = [
        (
            ("read_file", json!({"path": "secrets/key.txt"})),
            (
                "read_file",
                json!({"path": "secrets/key.txt", "start_line": 5}),
            ),
        ),
        (
            (
                "search_text",
                json!({"path": "secrets/key.txt", "pattern": "hunter2"}),
            ),
            (
                "search_text",
                json!({"path": "secrets/key.txt", "pattern": "letmein"}),
            ),
        ),
        (
            (
                "search_text",
                json!({"path": "./secrets//key.txt", "pattern": "hunt.r2"}),
            ),
            (
                "search_text",
                json!({"path": "secrets/sub/deep.txt", "pattern": "hunt.r2"}),
            ),
        ),
        (
            ("find_related", json!({"path": "secrets/key.txt"})),
            ("find_related", json!({"path": "secrets/sub/deep.txt"})),
        ),
        (
            ("file_info", json!({"path": "secrets/key.txt"})),
            ("file_info", json!({"path": "secrets/pay.csv"})),
        ),
        (
            (
                "table_stats",
                json!({"path": "secrets/pay.csv", "column": "amount"}),
            ),
            (
                "table_stats",
                json!({"path": "secrets/pay.csv", "column": "no_such_column"}),
            ),
        ),
        (
            (
                "table_rows",
                json!({"path": "secrets/pay.csv", "where": "amount > 100"}),
            ),
            (
                "table_rows",
                json!({"path": "secrets/pay.csv", "where": "nope = 1"}),
            ),
        ),
        (
            ("folder_stats", json!({"path": "secrets/key.txt"})),
            ("folder_stats", json!({"path": "secrets/sub"})),
        ),
    ];
    let before = snapshot(&env);
    for (i, ((t1, a1), (t2, a2))) in pairs.into_iter().enumerate() {
        let r1 = gate.submit(&call(&format!("p{i}a"), t1, a1.clone()), &mut a);
        let r2 = gate.submit(&call(&format!("p{i}b"), t2, a2.clone()), &mut a);
        assert_read_refused(&format!("{t1} {a1}"), &r1);
        assert_read_refused(&format!("{t2} {a2}"), &r2);
        if a1["path"] == a2["path"] {
            assert_eq!(
                r1.reason, r2.reason,
                "{t1}: the answer depends on the guess"
            );
        }
    }
    // The same read again, with the same id: asked (and refused) again, never replayed.
    let again = gate.submit(
        &call("p0a", "read_file", json!({"path": "secrets/key.txt"})),
        &mut a,
    );
    assert_read_refused("the same read again", &again);
    assert_eq!(snapshot(&env), before);
    assert_eq!(change_count(&env), 0);
}

#[test]
fn every_spelling_of_a_protected_path_under_every_spelling_of_the_rule_is_refused() {
    let env = setup();
    // Another folder differing only in case: the same folder on a case-insensitive disk.
    std::fs::create_dir_all(env.root.join("Secrets")).unwrap();
    std::fs::write(env.root.join("Secrets/Key.txt"), SECRET).unwrap();
    let registry = desk_registry();
    let rules: [&[&str]; 7] = [
        &["secrets/**"],
        &["secrets"],
        &["secrets/"],
        &["./secrets"],
        &["Secrets/*"],
        &["SECRETS/**"],
        &["secrets/**/*.txt"],
    ];
    let paths = [
        "secrets/key.txt",
        "./secrets//key.txt",
        "secrets/./key.txt",
        "secrets/key.txt/",
        "./secrets/sub/../key.txt",
        "secrets/sub/deep.txt",
        "secrets//sub/./deep.txt",
        "Secrets/Key.txt",
        "SECRETS/KEY.TXT",
        "sEcReTs/sub/deep.txt",
    ];
    for rule in rules {
        let mut gate = env.gate_with(&registry, ask_read(rule));
        let mut a = own_work();
        for (i, path) in paths.iter().enumerate() {
            let what = format!("rule {rule:?}, path {path:?}");
            let r = gate.submit(
                &call(
                    &format!("{}-r{i}", rule[0]),
                    "read_file",
                    json!({ "path": path }),
                ),
                &mut a,
            );
            assert_no_leak(&what, &r);
            assert_ne!(r.outcome, GateOutcome::Executed, "{what}: {r:?}");
            // An edit that reads first, with the right guess: nothing shown, nothing written.
            let r = gate.submit(
                &call(
                    &format!("{}-e{i}", rule[0]),
                    "edit_file",
                    json!({"path": path, "old_text": "hunter2", "new_text": "x"}),
                ),
                &mut a,
            );
            assert_no_leak(&what, &r);
            assert_ne!(r.outcome, GateOutcome::Executed, "{what}: {r:?}");
        }
    }
    assert_eq!(env.read("secrets/key.txt").unwrap(), SECRET);
    assert_eq!(env.read("secrets/sub/deep.txt").unwrap(), SECRET);
    assert_eq!(env.read("Secrets/Key.txt").unwrap(), SECRET);
    assert_eq!(change_count(&env), 0);
}

// ------------------------------------------------------------------ walks over the folder

/// The facts `result` gives about the protected `key.txt` (any letter case): a hash, a line
/// or row count, a score. (Not its size: a rule for reading keeps content, and `list_dir`
/// gives sizes by design; a rule for every tool withholds them too, see below.)
fn facts_about_secrets(result: &Value) -> Vec<String> {
    let mut found = Vec::new();
    fn visit(v: &Value, found: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                let names_a_secret = ["path", "name"].iter().any(|k| {
                    m.get(*k)
                        .and_then(Value::as_str)
                        .is_some_and(|p| p.to_lowercase().contains("key.txt"))
                });
                if names_a_secret {
                    for k in ["bytes", "sha256", "lines", "rows", "score", "text"] {
                        if m.contains_key(k) {
                            found.push(format!("{k} in {v}"));
                        }
                    }
                }
                m.values().for_each(|x| visit(x, found));
            }
            Value::Array(a) => a.iter().for_each(|x| visit(x, found)),
            _ => {}
        }
    }
    visit(result, &mut found);
    found
}

#[test]
fn walking_tools_over_a_folder_holding_a_protected_file_show_none_of_it() {
    let env = setup();
    let registry = desk_registry();
    let mut gate = env.gate_with(&registry, ask_read(&["secrets/**"]));
    let mut a = own_work();
    let calls = [
        ("search_text", json!({"pattern": "hunt.r2"})),
        (
            "search_text",
            json!({"pattern": "HUNT.R2", "case_insensitive": true}),
        ),
        ("search_text", json!({"pattern": "hunt.r2", "path": "."})),
        (
            "search_text",
            json!({"pattern": "hunt.r2", "path": "*/key.txt"}),
        ),
        (
            "search_text",
            json!({"pattern": "hunt.r2", "path": "secrets/*.txt"}),
        ),
        ("search_text", json!({"pattern": "hunt.r2", "path": "**/*"})),
        (
            "search_text",
            json!({"pattern": "hunt.r2", "glob": "*.txt"}),
        ),
        ("search_text", json!({"pattern": "42.2"})),
        ("search_text", json!({"pattern": "."})),
        ("find_files", json!({"pattern": "*"})),
        (
            "find_files",
            json!({"pattern": "**/key.txt", "path": "secrets"}),
        ),
        ("folder_stats", json!({})),
        ("folder_stats", json!({"path": "secrets"})),
        (
            "folder_stats",
            json!({"path": "secrets", "pattern": "*.csv"}),
        ),
        ("find_related", json!({"path": "public/notes.txt"})),
        ("list_dir", json!({"path": "secrets"})),
        ("list_dir", json!({"path": "secrets/sub"})),
        ("file_info", json!({"path": "secrets"})),
        ("file_info", json!({"path": "secrets/sub"})),
    ];
    for (i, (tool, args)) in calls.into_iter().enumerate() {
        let what = format!("{tool} {args}");
        let r = gate.submit(&call(&format!("w{i}"), tool, args), &mut a);
        assert_no_leak(&what, &r);
        assert_eq!(
            facts_about_secrets(&r.result),
            Vec::<String>::new(),
            "{what}"
        );
        if tool == "search_text" {
            let in_secrets = r.result["matches"].as_array().map_or(0, |m| {
                m.iter()
                    .filter(|h| {
                        h["path"]
                            .as_str()
                            .unwrap_or("")
                            .to_lowercase()
                            .contains("secrets")
                    })
                    .count()
            });
            assert_eq!(
                in_secrets, 0,
                "{what}: a protected file's line matched: {r:?}"
            );
        }
        if tool == "find_related" {
            assert!(
                !r.result.to_string().to_lowercase().contains("secrets/"),
                "{what}: a protected file was ranked by its content: {r:?}"
            );
        }
    }
    // Under a rule for every tool, listings withhold the protected files' sizes as well.
    let rules = vec![Rule::new("*", &["secrets/**"], PolicyAction::Ask).unwrap()];
    let mut gate = env.gate_with(&registry, rules);
    for (i, (tool, args, list)) in [
        ("list_dir", json!({"path": "secrets"}), "entries"),
        ("folder_stats", json!({}), "list"),
        ("find_files", json!({"pattern": "*"}), "files"),
    ]
    .into_iter()
    .enumerate()
    {
        let r = gate.submit(&call(&format!("ws{i}"), tool, args), &mut a);
        assert_eq!(r.outcome, GateOutcome::Executed, "{tool}: {r:?}");
        assert_no_leak(tool, &r);
        for e in r.result[list].as_array().unwrap() {
            let name = e["path"].as_str().or(e["name"].as_str()).unwrap_or("");
            if name.ends_with("key.txt") {
                for k in ["size", "bytes", "lines"] {
                    assert!(e.get(k).is_none(), "{tool} gives {k} of {name}: {e}");
                }
            }
        }
    }
}

#[test]
fn folder_stats_does_not_say_a_protected_file_equals_a_public_one() {
    // If the secret were hashed, `same_content` would pair it with its public copy, and the
    // copy's content would then be the secret's.
    let env = desk_support::env(INPUT);
    std::fs::create_dir_all(env.root.join("secrets")).unwrap();
    std::fs::create_dir_all(env.root.join("public")).unwrap();
    std::fs::write(env.root.join("secrets/key.txt"), "guess me\n").unwrap();
    std::fs::write(env.root.join("public/a.txt"), "guess me\n").unwrap();
    let registry = desk_registry();
    let mut gate = env.gate_with(&registry, ask_read(&["secrets"]));
    let r = gate.submit(&call("fs", "folder_stats", json!({})), &mut own_work());
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    assert!(
        !r.result["same_content"].to_string().contains("secrets"),
        "{r:?}"
    );
    assert!(!r.result.to_string().contains(&sha("guess me\n")), "{r:?}");
}

#[test]
fn a_whole_folder_read_that_policy_asks_about_is_refused_naming_the_folder() {
    let env = setup();
    let registry = desk_registry();
    let rules = ["search_text", "find_files", "list_dir", "folder_stats"]
        .iter()
        .map(|t| Rule::new(t, &[], PolicyAction::Ask).unwrap())
        .collect();
    let mut gate = env.gate_with(&registry, rules);
    let mut a = own_work();
    for (i, (tool, args)) in [
        ("search_text", json!({"pattern": "hunter2"})),
        ("find_files", json!({"pattern": "*"})),
        ("list_dir", json!({})),
        ("folder_stats", json!({})),
    ]
    .into_iter()
    .enumerate()
    {
        let r = gate.submit(&call(&format!("f{i}"), tool, args), &mut a);
        assert_read_refused(tool, &r);
        assert!(r.reason.contains("the folder"), "{r:?}");
    }
}

// ------------------------------------------------------------------ changes that read first

#[test]
fn a_change_that_reads_a_protected_file_first_ends_the_same_whatever_its_guess() {
    let env = setup();
    let conf = serialise_json(&json!({"k": "hunter2"})).unwrap();
    std::fs::write(env.root.join("secrets/conf.json"), &conf).unwrap();
    let sections = |body: &str| {
        vec![Section {
            level: 2,
            heading: "Key".into(),
            body: body.into(),
        }]
    };
    let md = render_sections(None, &sections("hunter2")).unwrap().text;
    std::fs::write(env.root.join("secrets/notes.md"), &md).unwrap();
    let registry = desk_registry();
    let mut gate = env.gate_with(&registry, ask_read(&["secrets/**"]));
    let mut a = own_work();
    let section_args = |path: &str, body: &str| json!({"path": path, "sections": [{"heading": "Key", "level": 2, "body": body}]});
    // (right guess: the tool would propose or say "unchanged"; wrong: it would refuse).
    let pairs = [
        (
            "edit_file",
            json!({"path": "secrets/key.txt", "old_text": "hunter2", "new_text": "x"}),
            json!({"path": "secrets/key.txt", "old_text": "letmein", "new_text": "x"}),
        ),
        (
            "edit_file",
            json!({"path": "secrets/key.txt", "old_text": "a", "new_text": "x"}),
            json!({"path": "secrets/key.txt", "old_text": "q", "new_text": "x"}),
        ),
        (
            "edit_lines",
            json!({"path": "secrets/key.txt", "changes": [{"line": "hunter2 zanzibar quokka", "new_line": "x"}]}),
            json!({"path": "secrets/key.txt", "changes": [{"line": "letmein", "new_line": "x"}]}),
        ),
        (
            "replace_file",
            json!({"path": "secrets/key.txt", "content": SECRET}),
            json!({"path": "secrets/key.txt", "content": "other\n"}),
        ),
        (
            "write_json",
            json!({"path": "secrets/conf.json", "document": {"k": "hunter2"}}),
            json!({"path": "secrets/conf.json", "document": {"k": "letmein"}}),
        ),
        (
            "write_sections",
            section_args("secrets/notes.md", "hunter2"),
            section_args("secrets/notes.md", "letmein"),
        ),
        (
            "delete_file",
            json!({"path": "secrets/key.txt"}),
            json!({"path": "secrets/gone.txt"}),
        ),
        (
            "write_json",
            json!({"path": "secrets/conf.json", "document": {"k": "hunter2"}}),
            json!({"path": "secrets/new.json", "document": {"k": "hunter2"}}),
        ),
        (
            "replace_file",
            json!({"path": "secrets/pay.csv", "content": TABLE}),
            json!({"path": "secrets/pay.txt", "content": TABLE}),
        ),
    ];
    let before = snapshot(&env);
    for (i, (tool, right, wrong)) in pairs.into_iter().enumerate() {
        let r1 = gate.submit(&call(&format!("m{i}a"), tool, right.clone()), &mut a);
        let r2 = gate.submit(&call(&format!("m{i}b"), tool, wrong.clone()), &mut a);
        for (args, r) in [(&right, &r1), (&wrong, &r2)] {
            let what = format!("{tool} {args}");
            assert_read_refused(&what, r);
        }
        let p1 = right["path"].as_str().unwrap();
        let p2 = wrong["path"].as_str().unwrap();
        assert_eq!(
            r1.reason.replace(p1, "<path>"),
            r2.reason.replace(p2, "<path>"),
            "{tool}: the answer depends on the guess"
        );
    }
    assert_eq!(snapshot(&env), before, "a refused change wrote something");
    assert_eq!(change_count(&env), 0, "a refused change was journaled");
}

// ------------------------------------------------------------------ replays

#[test]
fn results_recorded_under_an_open_policy_are_not_replayed_under_one_that_asks() {
    let env = setup();
    let registry = desk_registry();
    let reads = [
        ("old-read", "read_file", json!({"path": "secrets/key.txt"})),
        (
            "old-search",
            "search_text",
            json!({"pattern": "hunter2", "path": "secrets"}),
        ),
        ("old-walk", "search_text", json!({"pattern": "hunter2"})),
        (
            "old-stats",
            "table_stats",
            json!({"path": "secrets/pay.csv", "column": "amount", "group_by": "name"}),
        ),
        ("old-info", "file_info", json!({"path": "secrets/key.txt"})),
        ("old-fstats", "folder_stats", json!({})),
    ];
    let edit = call(
        "old-edit",
        "edit_file",
        json!({"path": "secrets/key.txt", "old_text": "zanzibar", "new_text": "zebra"}),
    );
    {
        // A session where the person's policy let everything be read.
        let mut open = env.gate_with(&registry, Vec::new());
        for (id, tool, args) in &reads {
            let r = open.submit(&call(id, tool, args.clone()), &mut own_work());
            assert_eq!(r.outcome, GateOutcome::Executed, "{id}: {r:?}");
            let shown = leak(&r).is_some()
                || r.result["same_content"]
                    .to_string()
                    .contains("secrets/key.txt");
            assert!(shown, "{id}: the open read shows the secret: {r:?}");
        }
        // And a person approved an edit of the secret at a terminal.
        let r = open.submit(&edit, &mut AllowAll);
        assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
        assert!(r.result["diff"].as_str().unwrap().contains("hunter2"));
    }
    let mut asking = env.gate_with(&registry, ask_read(&["secrets/**"]));
    let mut a = own_work();
    for (id, tool, args) in &reads {
        let r = asking.submit(&call(id, tool, args.clone()), &mut a);
        assert_ne!(r.outcome, GateOutcome::Replayed, "{id}: {r:?}");
        assert_ne!(r.outcome, GateOutcome::Executed, "{id}: {r:?}");
        assert_eq!(r.result, Value::Null, "{id}: {r:?}");
        assert_no_leak(id, &r);
    }
    // The edit is replayed (it was applied), its diff withheld.
    let r = asking.submit(&edit, &mut a);
    assert_eq!(r.outcome, GateOutcome::Replayed, "{r:?}");
    assert!(!r.result.to_string().contains("hunter2"), "{r:?}");
    assert_eq!(r.result["diff_withheld"], json!(true), "{r:?}");
    // A refused id reused for other arguments: a conflict that shows nothing either.
    let r = asking.submit(
        &call("old-read", "read_file", json!({"path": "secrets/pay.csv"})),
        &mut a,
    );
    assert_eq!(r.outcome, GateOutcome::IdConflict, "{r:?}");
    assert_no_leak("id conflict", &r);
}

// ------------------------------------------------------------------ links

#[cfg(unix)]
fn link_env() -> desk_support::Env {
    let env = setup();
    std::os::unix::fs::symlink("../secrets/key.txt", env.root.join("public/alias.txt")).unwrap();
    std::os::unix::fs::symlink("secrets", env.root.join("pubdir")).unwrap();
    std::os::unix::fs::symlink("key.txt", env.root.join("secrets/inner.txt")).unwrap();
    env
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_to_a_protected_file_reads_nothing_and_tells_no_guess() {
    let env = link_env();
    let registry = desk_registry();
    let mut gate = env.gate_with(&registry, ask_read(&["secrets/**"]));
    let mut a = own_work();
    for (i, (tool, args)) in [
        ("read_file", json!({"path": "public/alias.txt"})),
        ("read_file", json!({"path": "pubdir/key.txt"})),
        ("read_file", json!({"path": "secrets/inner.txt"})),
        ("file_info", json!({"path": "public/alias.txt"})),
        (
            "table_stats",
            json!({"path": "pubdir/pay.csv", "column": "amount"}),
        ),
        (
            "search_text",
            json!({"pattern": "hunt.r2", "path": "public/alias.txt"}),
        ),
        (
            "search_text",
            json!({"pattern": "hunt.r2", "path": "pubdir"}),
        ),
        ("search_text", json!({"pattern": "hunt.r2"})),
        ("find_related", json!({"path": "public/alias.txt"})),
        ("folder_stats", json!({"path": "public"})),
        ("list_dir", json!({"path": "pubdir"})),
    ]
    .into_iter()
    .enumerate()
    {
        let what = format!("{tool} {args}");
        let r = gate.submit(&call(&format!("l{i}"), tool, args), &mut a);
        assert_no_leak(&what, &r);
        assert_eq!(
            facts_about_secrets(&r.result),
            Vec::<String>::new(),
            "{what}"
        );
    }
    // An edit through a link: a right and a wrong guess end the same way, nothing written.
    for path in ["public/alias.txt", "pubdir/key.txt"] {
        let mut seen = Vec::new();
        for (j, old) in ["hunter2", "letmein"].into_iter().enumerate() {
            let r = gate.submit(
                &call(
                    &format!("le-{}-{j}", path.replace('/', "_")),
                    "edit_file",
                    json!({"path": path, "old_text": old, "new_text": "x"}),
                ),
                &mut a,
            );
            assert_no_leak(path, &r);
            assert_ne!(r.outcome, GateOutcome::Executed, "{path}: {r:?}");
            seen.push((r.outcome, r.reason));
        }
        assert_eq!(seen[0], seen[1], "{path}: the answer depends on the guess");
    }
    assert_eq!(env.read("secrets/key.txt").unwrap(), SECRET);
    assert_eq!(change_count(&env), 0);
}

#[cfg(unix)]
#[test]
fn a_hard_link_to_a_protected_file_reads_nothing_and_tells_no_guess() {
    let env = setup();
    std::fs::hard_link(
        env.root.join("secrets/key.txt"),
        env.root.join("public/hard.txt"),
    )
    .unwrap();
    let registry = desk_registry();
    let mut gate = env.gate_with(&registry, ask_read(&["secrets/**"]));
    let mut a = own_work();
    for (i, (tool, args)) in [
        ("read_file", json!({"path": "public/hard.txt"})),
        ("file_info", json!({"path": "public/hard.txt"})),
        (
            "search_text",
            json!({"pattern": "hunt.r2", "path": "public"}),
        ),
        ("search_text", json!({"pattern": "hunt.r2"})),
        ("find_related", json!({"path": "public/notes.txt"})),
        ("find_related", json!({"path": "public/hard.txt"})),
    ]
    .into_iter()
    .enumerate()
    {
        let what = format!("{tool} {args}");
        let r = gate.submit(&call(&format!("h{i}"), tool, args), &mut a);
        assert_no_leak(&what, &r);
        assert!(!r.result.to_string().contains("\"lines\""), "{what}: {r:?}");
    }
    let mut seen = Vec::new();
    for (j, old) in ["hunter2", "letmein"].into_iter().enumerate() {
        let r = gate.submit(
            &call(
                &format!("he{j}"),
                "edit_file",
                json!({"path": "public/hard.txt", "old_text": old, "new_text": "x"}),
            ),
            &mut a,
        );
        assert_no_leak("edit through a hard link", &r);
        assert_ne!(r.outcome, GateOutcome::Executed, "{r:?}");
        seen.push((r.outcome, r.reason));
    }
    assert_eq!(seen[0], seen[1], "the answer depends on the guess");
    assert_eq!(env.read("secrets/key.txt").unwrap(), SECRET);
}

/// Was a hole, mended: under a `*` ask rule, `list_dir`, `folder_stats` and `file_info` gave the
/// byte size of a hard link to a protected file, which they withhold under its own name. A file
/// with more than one name now has no size in the workspace (it opens none of them).
#[cfg(unix)]
#[test]
fn a_hard_link_to_a_protected_file_does_not_give_its_size() {
    let env = setup();
    std::fs::hard_link(
        env.root.join("secrets/key.txt"),
        env.root.join("public/hard.txt"),
    )
    .unwrap();
    let registry = desk_registry();
    // A rule for every tool: listings name the protected files but withhold their sizes.
    let rules = vec![Rule::new("*", &["secrets/**"], PolicyAction::Ask).unwrap()];
    let mut gate = env.gate_with(&registry, rules);
    let mut a = own_work();
    let size = SECRET.len() as u64;
    // Through its own folder, the size is withheld ...
    let r = gate.submit(&call("hs0", "list_dir", json!({"path": "secrets"})), &mut a);
    let key = r.result["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "key.txt")
        .unwrap()
        .clone();
    assert!(key.get("size").is_none(), "{key}");
    // ... and through the other name it must be too.
    for (i, (tool, args, list)) in [
        ("list_dir", json!({"path": "public"}), "entries"),
        ("folder_stats", json!({"path": "public"}), "list"),
    ]
    .into_iter()
    .enumerate()
    {
        let r = gate.submit(&call(&format!("hs{}", i + 1), tool, args), &mut a);
        assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
        let entry = r.result[list]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "hard.txt" || e["path"] == "public/hard.txt")
            .unwrap()
            .clone();
        for k in ["size", "bytes"] {
            assert_ne!(
                entry.get(k),
                Some(&json!(size)),
                "{tool} gives the size: {entry}"
            );
        }
    }
    // Named, the hard link is refused before `file_info` looks, with no figure of it.
    let r = gate.submit(
        &call("hs3", "file_info", json!({"path": "public/hard.txt"})),
        &mut a,
    );
    assert_eq!(r.outcome, GateOutcome::Invalid, "{r:?}");
    assert!(r.reason.contains("hard link"), "{r:?}");
    assert!(!format!("{r:?}").contains(&size.to_string()), "{r:?}");
}

// ------------------------------------------------------------------ names policy hides

/// Was a hole (older than the approver change), mended: create_file answered "already
/// exists" for a hidden name and created an absent one, which confirmed names that list_dir
/// and find_files hide. Now a change naming a hidden name is asked about before its tool
/// looks, and approving up front does not answer that.
#[test]
fn create_file_does_not_confirm_a_name_that_policy_hides() {
    let env = setup();
    let registry = desk_registry();
    let rules = vec![Rule::new("*", &["secrets/**"], PolicyAction::Ask)
        .unwrap()
        .with_hide_names(true)
        .unwrap()];
    let mut gate = env.gate_with(&registry, rules);
    let mut a = own_work();
    // The names are hidden from listings ...
    let r = gate.submit(&call("n0", "find_files", json!({"pattern": "*"})), &mut a);
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    assert!(!r.result.to_string().contains("key.txt"), "{r:?}");
    // ... so guessing one must not be answered either.
    let hit = gate.submit(
        &call(
            "n1",
            "create_file",
            json!({"path": "secrets/key.txt", "content": "x\n"}),
        ),
        &mut a,
    );
    let miss = gate.submit(
        &call(
            "n2",
            "create_file",
            json!({"path": "secrets/nokey.txt", "content": "x\n"}),
        ),
        &mut a,
    );
    assert_eq!(
        hit.outcome, miss.outcome,
        "a hidden name is confirmed: {hit:?} / {miss:?}"
    );
    assert_eq!(hit.outcome, GateOutcome::ApprovalRequired, "{hit:?}");
    assert_eq!(hit.reason, miss.reason.replace("nokey.txt", "key.txt"));
    assert!(!env.root.join("secrets/nokey.txt").exists());
    // A name policy does not hide is created up front as before.
    let r = gate.submit(
        &call(
            "n3",
            "create_file",
            json!({"path": "public/new.txt", "content": "x\n"}),
        ),
        &mut a,
    );
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
}

// ------------------------------------------------------------------ the run's own work

#[test]
fn the_runs_own_work_is_still_approved_up_front_including_after_undo() {
    let env = setup();
    let registry = desk_registry();
    // An unrelated ask rule, as a person's policy would have.
    let mut gate = env.gate_with(&registry, ask_read(&["secrets/**"]));
    let mut a = own_work();
    let mut step = 0;
    let mut run = |gate: &mut Gate<'_>, a: &mut OwnWorkApprover, tool: &str, args: Value| {
        step += 1;
        let r = gate.submit(&call(&format!("o{step}"), tool, args.clone()), a);
        assert_eq!(r.outcome, GateOutcome::Executed, "{tool} {args}: {r:?}");
        ChangeId(r.result["change_id"].as_i64().unwrap())
    };
    let sections = json!([{"heading": "A", "level": 2, "body": "one"}]);
    let sections2 = json!([{"heading": "A", "level": 2, "body": "two"}]);
    run(
        &mut gate,
        &mut a,
        "create_file",
        json!({"path": "out/r.md", "content": "v1\n"}),
    );
    let v2 = run(
        &mut gate,
        &mut a,
        "replace_file",
        json!({"path": "out/r.md", "content": "v2\n"}),
    );
    run(
        &mut gate,
        &mut a,
        "edit_lines",
        json!({"path": "out/r.md", "changes": [{"line": "v2", "new_line": "v3"}]}),
    );
    run(
        &mut gate,
        &mut a,
        "write_json",
        json!({"path": "out/d.json", "document": {"n": 1}}),
    );
    run(
        &mut gate,
        &mut a,
        "write_json",
        json!({"path": "out/d.json", "document": {"n": 2}}),
    );
    run(
        &mut gate,
        &mut a,
        "write_sections",
        json!({"path": "out/s.md", "sections": sections}),
    );
    run(
        &mut gate,
        &mut a,
        "write_sections",
        json!({"path": "out/s.md", "sections": sections2}),
    );
    // An empty new file: its diff may be empty, but it is a change, not a read.
    run(
        &mut gate,
        &mut a,
        "create_file",
        json!({"path": "out/empty.txt", "content": ""}),
    );
    run(
        &mut gate,
        &mut a,
        "replace_file",
        json!({"path": "out/empty.txt", "content": "now\n"}),
    );
    run(
        &mut gate,
        &mut a,
        "replace_file",
        json!({"path": "out/empty.txt", "content": ""}),
    );
    run(
        &mut gate,
        &mut a,
        "delete_file",
        json!({"path": "out/empty.txt"}),
    );
    run(
        &mut gate,
        &mut a,
        "create_file",
        json!({"path": "out/empty.txt", "content": ""}),
    );
    // The mission's editable file at its starting content, and after Rein's undo.
    let edit = run(
        &mut gate,
        &mut a,
        "edit_file",
        json!({"path": "a.txt", "old_text": "input", "new_text": "edited"}),
    );
    gate.undo_change(edit).unwrap();
    assert_eq!(env.read("a.txt").unwrap(), INPUT);
    run(
        &mut gate,
        &mut a,
        "edit_file",
        json!({"path": "a.txt", "old_text": "input", "new_text": "again"}),
    );
    // Rein's undo puts an earlier version of the run's file back; the run may change it.
    let r_now = env.read("out/r.md").unwrap();
    assert_eq!(r_now, "v3\n");
    let last = env
        .journal
        .changes(&env.ws.display_root())
        .unwrap()
        .into_iter()
        .filter(|c| c.path == "out/r.md")
        .map(|c| c.id)
        .max()
        .unwrap();
    gate.undo_change(last).unwrap();
    assert_eq!(env.read("out/r.md").unwrap(), "v2\n");
    gate.undo_change(v2).unwrap();
    assert_eq!(env.read("out/r.md").unwrap(), "v1\n");
    run(
        &mut gate,
        &mut a,
        "edit_file",
        json!({"path": "out/r.md", "old_text": "v1", "new_text": "v4"}),
    );
    run(
        &mut gate,
        &mut a,
        "delete_file",
        json!({"path": "out/r.md"}),
    );
    run(
        &mut gate,
        &mut a,
        "create_file",
        json!({"path": "out/r.md", "content": "v5\n"}),
    );
    // Creating an absent file is the run's own, even in a folder whose reading policy asks.
    run(
        &mut gate,
        &mut a,
        "create_file",
        json!({"path": "secrets/new.txt", "content": "mine\n"}),
    );
    assert_eq!(env.read("out/r.md").unwrap(), "v5\n");
    assert_eq!(env.read("a.txt").unwrap(), "again\n");
    assert_eq!(env.read("secrets/key.txt").unwrap(), SECRET);
}

// ------------------------------------------------------------------ refusals record nothing

fn read_req(path: &str) -> ApprovalRequest {
    ApprovalRequest {
        call_id: "r".into(),
        tool: "read_file".into(),
        path: path.into(),
        diff: String::new(),
        before_sha256: None,
        after_sha256: None,
        reads_protected_content: false,
    }
}

fn change_req(path: &str, before: Option<&str>, after: Option<&str>) -> ApprovalRequest {
    ApprovalRequest {
        call_id: "c".into(),
        tool: "replace_file".into(),
        path: path.into(),
        diff: "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n".into(),
        before_sha256: before.map(str::to_string),
        after_sha256: after.map(str::to_string),
        reads_protected_content: false,
    }
}

fn allows(a: &mut OwnWorkApprover, r: &ApprovalRequest) -> bool {
    a.decide(r) == ApprovalDecision::AllowOnce
}

#[test]
fn a_refused_read_adds_no_version_of_the_runs_own_and_removes_none() {
    let input = sha(INPUT);
    let (x, y, z) = (sha("x\n"), sha("y\n"), sha("z\n"));
    let mut a = own_work();
    // A first request of a change whose reading policy asks, whatever hashes it carries.
    for (path, before, after) in [
        ("out/new.md", None, Some(x.as_str())),
        ("a.txt", Some(input.as_str()), Some(y.as_str())),
        ("a.txt", None, None),
        ("", None, Some(x.as_str())),
    ] {
        let mut r = change_req(path, before, after);
        r.reads_protected_content = true;
        let d = a.decide(&r);
        assert!(
            matches!(&d, ApprovalDecision::Deny { reason } if reason.contains("policy asks about")),
            "{path}: {d:?}"
        );
    }
    // Reads, with or without a path, in any spelling.
    for path in [
        "",
        ".",
        "a.txt",
        "./a.txt",
        "out/new.md",
        "../x",
        "/etc/passwd",
    ] {
        let d = a.decide(&read_req(path));
        assert!(
            matches!(&d, ApprovalDecision::Deny { reason } if reason.contains("policy asks about")),
            "{path}: {d:?}"
        );
    }
    // None of the refused after-hashes became the run's own ...
    assert!(!allows(
        &mut a,
        &change_req("out/new.md", Some(&x), Some(&z))
    ));
    assert!(!allows(&mut a, &change_req("a.txt", Some(&y), Some(&z))));
    assert!(!allows(&mut a, &change_req("out/new.md", Some(&x), None)));
    // ... and the editable file's starting content still is.
    assert!(allows(&mut a, &change_req("a.txt", Some(&input), Some(&z))));
    assert!(allows(&mut a, &change_req("a.txt", Some(&z), Some(&x))));
    // A real change of an absent file is still approved and recorded.
    assert!(allows(&mut a, &change_req("out/new.md", None, Some(&y))));
    assert!(allows(&mut a, &change_req("out/new.md", Some(&y), None)));
}

#[test]
fn a_refused_edit_through_the_gate_writes_and_journals_nothing_and_keeps_the_run_s_files() {
    let env = setup();
    let registry = desk_registry();
    let mut a = own_work();
    {
        // The person asks before a.txt is read: the edit of the editable file is refused.
        let mut gate = env.gate_with(&registry, ask_read(&["a.txt"]));
        for (i, old) in ["input", "nope"].into_iter().enumerate() {
            let r = gate.submit(
                &call(
                    &format!("x{i}"),
                    "edit_file",
                    json!({"path": "a.txt", "old_text": old, "new_text": "edited"}),
                ),
                &mut a,
            );
            assert_read_refused("edit of a.txt", &r);
            assert!(!r.reason.contains("input"), "{r:?}");
        }
        assert_eq!(env.read("a.txt").unwrap(), INPUT);
        assert_eq!(change_count(&env), 0);
    }
    // The same approver, under a policy that lets a.txt be read: the editable file at its
    // starting content is still the run's own.
    let mut gate = env.gate_with(&registry, Vec::new());
    let r = gate.submit(
        &call(
            "x2",
            "edit_file",
            json!({"path": "a.txt", "old_text": "input", "new_text": "edited"}),
        ),
        &mut a,
    );
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    assert_eq!(env.read("a.txt").unwrap(), "edited\n");
}

// ------------------------------------------------------------------ the bench sandbox

#[test]
fn the_sandbox_refuses_a_read_policy_asks_about_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("journal.db")).unwrap();
    let registry = sandbox_registry();
    let mut sandbox = Sandbox::new();
    sandbox
        .files
        .insert("secrets/key.txt".into(), SECRET.into());
    let start = sandbox.clone();
    let mut a = own_work();
    {
        let mut gate = Gate::new(GateConfig {
            registry: &registry,
            target: GateTarget::Sandbox(&mut sandbox),
            journal: &journal,
            scope: CallScope::Workspace("sandbox:redteam".into()),
            policy: Policy::from_rules(ask_read(&["secrets/**"])),
            budget: None,
        });
        for (i, path) in ["secrets/key.txt", "./secrets//key.txt", "SECRETS/key.txt"]
            .into_iter()
            .enumerate()
        {
            let r = gate.submit(
                &call(&format!("s{i}"), "read_file", json!({ "path": path })),
                &mut a,
            );
            assert_read_refused(path, &r);
        }
        for (i, (tool, args)) in [
            ("delete_file", json!({"path": "secrets/key.txt"})),
            (
                "create_file",
                json!({"path": "secrets/key.txt", "content": "x\n"}),
            ),
            (
                "create_file",
                json!({"path": "secrets/key.txt", "content": SECRET}),
            ),
        ]
        .into_iter()
        .enumerate()
        {
            let r = gate.submit(&call(&format!("sm{i}"), tool, args.clone()), &mut a);
            assert_no_leak(&format!("{tool} {args}"), &r);
            assert_ne!(r.outcome, GateOutcome::Executed, "{tool} {args}: {r:?}");
        }
    }
    assert_eq!(sandbox.files, start.files);
}

/// Was a hole (a regression of 8744b3f, mended): final_answer names no file, and its request
/// was refused as "not a workspace path".
#[test]
fn the_sandbox_runs_own_changes_are_still_approved_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("journal.db")).unwrap();
    let registry = sandbox_registry();
    let mut sandbox = Sandbox::new();
    let mut a = OwnWorkApprover::default();
    let mut gate = Gate::new(GateConfig {
        registry: &registry,
        target: GateTarget::Sandbox(&mut sandbox),
        journal: &journal,
        scope: CallScope::Workspace("sandbox:own".into()),
        policy: Policy::safe_default(),
        budget: None,
    });
    for (i, (tool, args)) in [
        (
            "create_file",
            json!({"path": "notes.txt", "content": "mine\n"}),
        ),
        (
            "create_file",
            json!({"path": "notes.txt", "content": "mine, v2\n"}),
        ),
        ("set_variable", json!({"name": "total", "value": "42"})),
        ("delete_file", json!({"path": "notes.txt"})),
        ("final_answer", json!({"answer": "42"})),
    ]
    .into_iter()
    .enumerate()
    {
        let r = gate.submit(&call(&format!("so{i}"), tool, args.clone()), &mut a);
        assert_eq!(r.outcome, GateOutcome::Executed, "{tool} {args}: {r:?}");
    }
}

/// Was a hole, mended: under a `read_file` ask rule, `list_dir` gave each protected file's byte
/// size, which `file_info` (refused) and `folder_stats` (skipped) withhold. `list_dir` now lists
/// such a file by name only.
#[test]
fn list_dir_does_not_give_the_size_of_a_file_whose_reading_policy_asks() {
    let env = setup();
    let registry = desk_registry();
    let mut gate = env.gate_with(&registry, ask_read(&["secrets/**"]));
    let mut a = own_work();
    let r = gate.submit(
        &call("ld0", "folder_stats", json!({"path": "secrets"})),
        &mut a,
    );
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    assert!(!r.result.to_string().contains("\"bytes\""), "{r:?}");
    let r = gate.submit(&call("ld1", "list_dir", json!({"path": "secrets"})), &mut a);
    assert_eq!(r.outcome, GateOutcome::Executed, "{r:?}");
    for e in r.result["entries"].as_array().unwrap() {
        assert!(e.get("size").is_none(), "list_dir gives the size: {e}");
    }
}
