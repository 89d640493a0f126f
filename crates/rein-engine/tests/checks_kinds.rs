//! Every deterministic check kind, passing and failing, against an in-memory world.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;

use rein_engine::checks::{evaluate, CheckResult, DirWorld, MemWorld, TraceEntry};
use rein_engine::mission::{FrozenContract, Mission};
use serde_json::{json, Value};
use tempfile::TempDir;

const TASKS_CSV: &str =
    "task,owner,status,hours\nA,Ann,done,12\nB,Bob,open,16.5\n\"C, part 2\",Ann,done,4\n";
const LOG: &str = "ok start\nERROR disk\nok\nERROR net\n";
const DATA_JSON: &str = r#"{"totals": {"items": 7}}"#;

/// Freezes a mission with the given checks over three fixed inputs.
fn contract(checks: Value) -> (TempDir, FrozenContract) {
    let dir = TempDir::new().unwrap();
    for (p, c) in [
        ("data/tasks.csv", TASKS_CSV),
        ("logs/app.log", LOG),
        ("data/d.json", DATA_JSON),
    ] {
        let f = dir.path().join("fixtures").join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, c).unwrap();
    }
    let m = json!({
        "id": "k", "mode": "automatic", "prompt": "p",
        "inputs": ["data/tasks.csv", "logs/app.log", "data/d.json"],
        "tools": ["read_file", "create_file", "list_dir", "finish"],
        "required_artifact": "out/r.md",
        "checks": checks
    });
    let path = dir.path().join("mission.json");
    std::fs::write(&path, m.to_string()).unwrap();
    let c = Mission::load(&path).unwrap();
    (dir, c)
}

fn world_with(artifacts: &[(&str, &str)]) -> MemWorld {
    let mut w = MemWorld::new()
        .with_file("data/tasks.csv", TASKS_CSV)
        .with_file("logs/app.log", LOG)
        .with_file("data/d.json", DATA_JSON);
    for (p, c) in artifacts {
        w.set_file(p, *c);
    }
    w
}

/// Runs one check and returns its result.
fn run_one(check: Value, world: &MemWorld, trace: &[TraceEntry]) -> CheckResult {
    let (_d, c) = contract(json!([check]));
    let v = evaluate(&c, world, trace, None);
    assert_eq!(v.checks.len(), 1);
    assert_eq!(v.passed, v.checks[0].passed);
    v.checks[0].clone()
}

fn passes(check: Value, world: &MemWorld) -> CheckResult {
    let r = run_one(check.clone(), world, &[]);
    assert!(r.passed, "expected pass: {check}\nfacts: {:?}", r.facts);
    assert!(!r.facts.is_empty());
    r
}

fn fails(check: Value, world: &MemWorld) -> CheckResult {
    let r = run_one(check.clone(), world, &[]);
    assert!(!r.passed, "expected fail: {check}\nfacts: {:?}", r.facts);
    assert!(!r.facts.is_empty());
    r
}

#[test]
fn file_exists() {
    let c = json!({"id": "e", "kind": "file_exists", "path": "out/r.md", "non_empty": true});
    let r = passes(c.clone(), &world_with(&[("out/r.md", "one two three")]));
    assert_eq!(r.facts[0], "out/r.md: 13 bytes, 3 words");
    assert_eq!(r.kind, "file_exists");
    fails(c.clone(), &world_with(&[]));
    fails(c, &world_with(&[("out/r.md", "  \n")]));
    passes(
        json!({"id": "e", "kind": "file_exists", "path": "out/r.md"}),
        &world_with(&[("out/r.md", "")]),
    );
}

#[test]
fn file_absent() {
    let c = json!({"id": "a", "kind": "file_absent", "path": "summary.md"});
    passes(c.clone(), &world_with(&[]));
    fails(c, &world_with(&[("summary.md", "stray")]));
}

#[test]
fn content_matches_literal_and_regex() {
    let w = world_with(&[("out/r.md", "The Harbor Library app.\nTotal hours: 32.5\n")]);
    passes(
        json!({"id": "m", "kind": "content_matches", "path": "out/r.md", "pattern": "Harbor Library"}),
        &w,
    );
    fails(
        json!({"id": "m", "kind": "content_matches", "path": "out/r.md", "pattern": "harbor library"}),
        &w,
    );
    passes(
        json!({"id": "m", "kind": "content_matches", "path": "out/r.md", "pattern": "harbor library", "case_insensitive": true}),
        &w,
    );
    // A literal pattern is not a regex: the dot must be a dot.
    fails(
        json!({"id": "m", "kind": "content_matches", "path": "out/r.md", "pattern": "app?"}),
        &w,
    );
    let r = passes(
        json!({"id": "m", "kind": "content_matches", "path": "out/r.md", "pattern": "hours: \\d+", "regex": true}),
        &w,
    );
    assert!(r.facts[0].contains("line 2"), "{:?}", r.facts);
    fails(
        json!({"id": "m", "kind": "content_matches", "path": "out/missing.md", "pattern": "x"}),
        &w,
    );
}

#[test]
fn content_absent_literal_and_regex() {
    let clean = world_with(&[("out/r.md", "A finished report.")]);
    let dirty = world_with(&[("out/r.md", "Intro {{summary}} lorem ipsum")]);
    let c = json!({"id": "n", "kind": "content_absent", "path": "out/r.md", "pattern": "(?i)lorem ipsum|\\{\\{", "regex": true});
    passes(c.clone(), &clean);
    fails(c, &dirty);
    passes(
        json!({"id": "n", "kind": "content_absent", "path": "out/r.md", "pattern": "{{"}),
        &clean,
    );
    fails(
        json!({"id": "n", "kind": "content_absent", "path": "out/r.md", "pattern": "{{"}),
        &dirty,
    );
    // Nothing to judge is not a pass.
    fails(
        json!({"id": "n", "kind": "content_absent", "path": "out/r.md", "pattern": "x"}),
        &world_with(&[]),
    );
}

#[test]
fn json_schema() {
    let schema = json!({"type": "object", "required": ["name", "n"], "properties": {"n": {"type": "integer", "minimum": 1}}});
    let c = json!({"id": "s", "kind": "json_schema", "path": "out/f.json", "schema": schema});
    passes(
        c.clone(),
        &world_with(&[("out/f.json", r#"{"name": "x", "n": 2}"#)]),
    );
    let r = fails(c.clone(), &world_with(&[("out/f.json", r#"{"n": 0}"#)]));
    assert!(
        r.facts.len() >= 2,
        "every schema error is a fact: {:?}",
        r.facts
    );
    assert!(r.facts.iter().any(|f| f.contains("/n")), "{:?}", r.facts);
    let r = fails(c.clone(), &world_with(&[("out/f.json", "{not json")]));
    assert!(r.facts[0].contains("not valid JSON"));
    fails(c, &world_with(&[]));
}

#[test]
fn json_schema_wants_an_integer_written_as_one() {
    let schema = json!({"type": "object", "properties": {
        "port": {"type": "integer"},
        "ratio": {"type": "number"},
        "ports": {"type": "array", "items": {"type": "integer"}},
        "by_name": {"type": "object", "additionalProperties": {"type": "integer"}}}});
    let c = json!({"id": "s", "kind": "json_schema", "path": "out/f.json", "schema": schema});
    passes(
        c.clone(),
        &world_with(&[(
            "out/f.json",
            r#"{"port": 8081, "ratio": 2.0, "ports": [1, -2], "by_name": {"a": 3}}"#,
        )]),
    );
    for bad in [
        r#"{"port": 8081.0}"#,
        r#"{"port": 8.081e3}"#,
        r#"{"port": 8081E0}"#,
        r#"{"ports": [1, 2.0]}"#,
        r#"{"by_name": {"a": 3e0}}"#,
    ] {
        let r = fails(c.clone(), &world_with(&[("out/f.json", bad)]));
        assert!(
            r.facts.iter().any(|f| f.contains("plain integer")),
            "{bad}: {:?}",
            r.facts
        );
    }
}

fn numeric(stated: Value, expected: Value, tolerance: f64) -> Value {
    json!({"id": "num", "kind": "numeric_consistency", "path": "out/r.md", "stated": stated, "expected": expected, "tolerance": tolerance})
}

#[test]
fn numeric_consistency_csv_ops() {
    let re = json!({"regex": "(?i)value\\W*([0-9][0-9,.]*)"});
    let csv =
        |op: &str| json!({"from": "csv", "path": "data/tasks.csv", "op": op, "column": "hours"});
    let w = |n: &str| world_with(&[("out/r.md", &format!("**Value:** {n}"))]);
    let r = passes(numeric(re.clone(), csv("sum"), 0.0), &w("32.5"));
    assert!(
        r.facts
            .iter()
            .any(|f| f.contains("sum of column `hours` over 3 rows = 32.5")),
        "{:?}",
        r.facts
    );
    fails(numeric(re.clone(), csv("sum"), 0.0), &w("33"));
    passes(numeric(re.clone(), csv("sum"), 0.5), &w("33"));
    passes(numeric(re.clone(), csv("min"), 0.0), &w("4"));
    passes(numeric(re.clone(), csv("max"), 0.0), &w("16.5"));
    passes(
        numeric(
            re.clone(),
            json!({"from": "csv", "path": "data/tasks.csv", "op": "mean", "column": "hours"}),
            0.001,
        ),
        &w("10.833"),
    );
    passes(
        numeric(
            re.clone(),
            json!({"from": "csv", "path": "data/tasks.csv", "op": "count"}),
            0.0,
        ),
        &w("3"),
    );
    passes(
        numeric(
            re.clone(),
            json!({"from": "csv", "path": "data/tasks.csv", "op": "sum", "column": "hours", "filter": {"column": "status", "equals": "done"}}),
            0.0,
        ),
        &w("16"),
    );
    let r = fails(
        numeric(
            re.clone(),
            json!({"from": "csv", "path": "data/tasks.csv", "op": "sum", "column": "nope"}),
            0.0,
        ),
        &w("1"),
    );
    assert!(
        r.facts.iter().any(|f| f.contains("no column `nope`")),
        "{:?}",
        r.facts
    );
    let r = fails(
        numeric(re, csv("sum"), 0.0),
        &world_with(&[("out/r.md", "no number here")]),
    );
    assert!(r.facts[0].contains("no statement matches"), "{:?}", r.facts);
}

#[test]
fn numeric_consistency_lines_json_and_pointer() {
    let w = world_with(&[
        ("out/r.md", "Errors: 2\nItems: 7"),
        ("out/f.json", r#"{"errors": 2, "items": 7, "as_text": "7"}"#),
    ]);
    let lines = json!({"from": "lines", "path": "logs/app.log", "pattern": "^ERROR"});
    passes(
        numeric(json!({"regex": "Errors: (\\d+)"}), lines.clone(), 0.0),
        &w,
    );
    fails(
        numeric(json!({"regex": "Items: (\\d+)"}), lines.clone(), 0.0),
        &w,
    );
    let j = json!({"from": "json", "path": "data/d.json", "pointer": "/totals/items"});
    passes(
        numeric(json!({"regex": "Items: (\\d+)"}), j.clone(), 0.0),
        &w,
    );
    let mut c = numeric(json!({"pointer": "/items"}), j.clone(), 0.0);
    c["path"] = json!("out/f.json");
    passes(c.clone(), &w);
    c["stated"] = json!({"pointer": "/errors"});
    fails(c.clone(), &w);
    c["stated"] = json!({"pointer": "/missing"});
    fails(c.clone(), &w);
    // A number written as a string is not a JSON number: refused, not parsed leniently.
    c["stated"] = json!({"pointer": "/as_text"});
    let r = fails(c, &w);
    assert!(r.facts[0].contains("not a JSON number"), "{:?}", r.facts);
    let m = json!({"from": "matches", "paths": ["logs/app.log"], "pattern": "ERROR (\\w+)", "op": "count"});
    passes(numeric(json!({"regex": "Errors: (\\d+)"}), m, 0.0), &w);
}

#[test]
fn numeric_consistency_refuses_a_changed_input() {
    let mut w = world_with(&[("out/r.md", "Value: 3")]);
    let c = numeric(
        json!({"regex": "Value: (\\d+)"}),
        json!({"from": "csv", "path": "data/tasks.csv", "op": "count"}),
        0.0,
    );
    passes(c.clone(), &w);
    // The model rewrote the input so its number would match: the frozen hash catches it.
    w.set_file("data/tasks.csv", "task,hours\nA,1\nB,1\nC,1\n");
    let r = fails(c, &w);
    assert!(
        r.facts
            .iter()
            .any(|f| f.contains("changed since it was frozen")),
        "{:?}",
        r.facts
    );
}

#[test]
fn report_complete_sees_a_section_written_twice_in_any_spelling_a_reader_sees() {
    let report = "# Project summary\n\n## Goal\nShip the app.\n\n## Tasks\nSix tasks.\n\n## Risks\nSupplier keys.\n";
    let check = json!({"id": "rc", "kind": "report_complete", "path": "out/r.md",
        "headings": ["Project summary", "Goal", "Tasks", "Risks"]});
    for again in [
        "Tasks\n-----\nSeven tasks.\n",
        "### **Tasks**:\nSeven tasks.\n",
        "##Tasks\nSeven tasks.\n",
        "> ## Tasks\n> Seven tasks.\n",
        "<details>\n\n## Tasks\n\nSeven tasks.\n\n</details>\n",
        "## T\u{0430}sks\nSeven tasks.\n",
    ] {
        let twice = format!("{report}\n{again}");
        let r = fails(check.clone(), &world_with(&[("out/r.md", twice.as_str())]));
        assert!(
            r.facts.iter().any(|f| f.contains("Tasks (2 times)")),
            "{again:?}: {:?}",
            r.facts
        );
    }
    // What no reader sees as a heading is no second section.
    for hidden in [
        "<!--\n## Tasks\n-->\n",
        "```\n## Tasks\n```\n",
        "    ## Tasks\n",
    ] {
        let with = format!("{report}\n{hidden}");
        passes(check.clone(), &world_with(&[("out/r.md", with.as_str())]));
    }
}

/// A task that asks for "exactly these headings": a section it did not ask for fails in any
/// spelling a reader sees as a heading (the 1.5B added `## Notes` to desk_task), while the
/// required headings may be spelled as before and what no reader sees is no heading.
#[test]
fn report_complete_with_no_other_headings_fails_a_section_nobody_asked_for() {
    let report = "# Project summary\n\n## Goal\nShip the app.\n\n## Tasks:\nSix tasks.\n\n## **risks**\nSupplier keys.\n";
    let check = |only: bool| {
        json!({"id": "rc", "kind": "report_complete", "path": "out/r.md",
            "headings": ["Project summary", "Goal", "Tasks", "Risks"], "in_order": true,
            "no_other_headings": only})
    };
    passes(check(true), &world_with(&[("out/r.md", report)]));
    for extra in [
        "## Notes\nNext meeting: 26 May.\n",
        "Notes\n-----\nNext meeting: 26 May.\n",
        "### Notes:\nNext meeting: 26 May.\n",
        "#Notes\nNext meeting: 26 May.\n",
        "> ## Notes\n> Next meeting: 26 May.\n",
    ] {
        let with = format!("{report}\n{extra}");
        let world = world_with(&[("out/r.md", with.as_str())]);
        let r = fails(check(true), &world);
        assert!(
            r.facts
                .iter()
                .any(|f| f.contains("headings the task does not ask for: `Notes")),
            "{extra:?}: {:?}",
            r.facts
        );
        // Without the flag a heading the contract does not require is free.
        passes(check(false), &world);
    }
    for hidden in [
        "<!--\n## Notes\n-->\n",
        "```\n## Notes\n```\n",
        "    ## Notes\n",
        "**Notes:** next meeting on 26 May.\n",
    ] {
        let with = format!("{report}\n{hidden}");
        passes(check(true), &world_with(&[("out/r.md", with.as_str())]));
    }
    // The rendered requirement says so.
    let (_d, c) = contract(json!([check(true)]));
    let said = rein_engine::checks::requirements_message(&c);
    assert!(
        said.contains("exactly these headings") && said.contains("no other heading"),
        "{said}"
    );
}

#[test]
fn no_other_headings_needs_the_headings_it_allows() {
    let dir = TempDir::new().unwrap();
    let m = json!({
        "id": "k", "mode": "automatic", "prompt": "p", "inputs": [],
        "tools": ["create_file", "finish"], "required_artifact": "out/r.md",
        "checks": [{"id": "rc", "kind": "report_complete", "path": "out/r.md",
            "min_words": 5, "no_other_headings": true}]
    });
    let path = dir.path().join("mission.json");
    std::fs::write(&path, m.to_string()).unwrap();
    let err = Mission::load(&path).unwrap_err().to_string();
    assert!(err.contains("no_other_headings"), "{err}");
}

#[test]
fn report_complete_headings_words_and_fields() {
    let report = "# Project summary\n\n## Goal\nShip the app.\n\n## Tasks:\nSix tasks.\n\n## risks\nSupplier keys.\n";
    let w = world_with(&[
        ("out/r.md", report),
        ("out/f.json", r#"{"a": "x", "b": {"c": 1}, "e": ""}"#),
    ]);
    let h = |hs: Value, min: u64, max: u64| json!({"id": "rc", "kind": "report_complete", "path": "out/r.md", "headings": hs, "min_words": min, "max_words": max});
    passes(
        h(json!(["Project summary", "Goal", "Tasks", "Risks"]), 5, 100),
        &w,
    );
    let r = fails(h(json!(["Goal", "Budget"]), 5, 100), &w);
    assert!(
        r.facts
            .iter()
            .any(|f| f.contains("missing headings: Budget")),
        "{:?}",
        r.facts
    );
    fails(h(json!(["Goal"]), 50, 100), &w);
    fails(h(json!(["Goal"]), 1, 5), &w);
    // A section written twice (the 1.5B left its old Goal, Tasks and Risks above new ones):
    // every heading present and in order, yet which section counts cannot be told.
    let twice = format!("{report}\n## Goal\nShip it soon.\n\n## Tasks\nSix.\n");
    let r = fails(
        h(json!(["Project summary", "Goal", "Tasks", "Risks"]), 5, 100),
        &world_with(&[("out/r.md", twice.as_str())]),
    );
    assert!(
        r.facts.iter().any(|f| f
            .contains("required headings written more than once: Goal (2 times), Tasks (2 times)")),
        "{:?}",
        r.facts
    );
    // A heading the contract does not require may repeat.
    let notes = format!("{report}\n## Note\nA.\n\n## Note\nB.\n");
    passes(
        h(json!(["Project summary", "Goal", "Tasks", "Risks"]), 5, 100),
        &world_with(&[("out/r.md", notes.as_str())]),
    );
    let f = |fs: Value| json!({"id": "rc", "kind": "report_complete", "path": "out/f.json", "fields": fs});
    passes(f(json!(["a", "/b/c"])), &w);
    fails(f(json!(["a", "/b/d"])), &w);
    fails(f(json!(["e"])), &w);
    fails(f(json!(["a"])), &world_with(&[("out/f.json", "not json")]));
}

#[test]
fn actions_called_counts_only_executed_calls_and_order() {
    let w = world_with(&[]);
    let (_d, c) = contract(json!([
        {"id": "any", "kind": "actions_called", "tools": ["create_file", "read_file"]},
        {"id": "ord", "kind": "actions_called", "tools": ["read_file", "create_file"], "ordered": true}
    ]));
    let t = |tool: &str, outcome: &str| {
        TraceEntry::new(tool, Some("x"), outcome, tool == "create_file")
    };
    let good = vec![
        t("list_dir", "executed"),
        t("read_file", "executed"),
        t("create_file", "executed"),
    ];
    let v = evaluate(&c, &w, &good, None);
    assert!(v.passed, "{v:?}");
    let reversed = vec![t("create_file", "executed"), t("read_file", "executed")];
    let v = evaluate(&c, &w, &reversed, None);
    assert!(v.checks[0].passed && !v.checks[1].passed, "{v:?}");
    let denied = vec![t("read_file", "denied"), t("create_file", "executed")];
    let v = evaluate(&c, &w, &denied, None);
    assert!(!v.checks[0].passed && !v.checks[1].passed, "{v:?}");
    let replayed = vec![t("read_file", "replayed"), t("create_file", "executed")];
    assert!(evaluate(&c, &w, &replayed, None).passed);
    assert!(!evaluate(&c, &w, &[], None).passed);
}

#[test]
fn strict_order_refuses_an_earlier_out_of_order_call_but_not_a_repeated_kind() {
    let w = world_with(&[]);
    let (_d, c) = contract(json!([
        {"id": "steps", "kind": "actions_called", "ordered": true, "strict_order": true, "tools": [
            {"tool": "create_file", "path": "s1"}, {"tool": "create_file", "path": "s2"},
            {"tool": "create_file", "path": "s3"}]},
        {"id": "look", "kind": "actions_called", "ordered": true, "strict_order": true,
         "tools": ["list_dir", {"tool": "create_file", "path": "old"}, "list_dir"]}
    ]));
    let t =
        |tool: &str, path: &str| TraceEntry::new(tool, Some(path), "executed", tool != "list_dir");
    let right = vec![
        t("list_dir", ""),
        t("create_file", "s1"),
        t("create_file", "old"),
        t("create_file", "s2"),
        t("list_dir", ""),
        t("create_file", "s3"),
    ];
    let v = evaluate(&c, &w, &right, None);
    assert!(v.passed, "{v:?}");
    // s3 first, then all three in order: a greedy subsequence would pass it.
    let mut early = right.clone();
    early.insert(0, t("create_file", "s3"));
    let v = evaluate(&c, &w, &early, None);
    assert!(!v.checks[0].passed && v.checks[1].passed, "{v:?}");
    assert!(v.checks[0].facts.join(" ").contains("before"), "{v:?}");
    // The second list_dir is of a kind listed earlier: a listing before the write is fine, the
    // write before the first listing is not.
    let delete_first = vec![
        t("create_file", "old"),
        t("list_dir", ""),
        t("create_file", "old"),
        t("list_dir", ""),
    ];
    assert!(!evaluate(&c, &w, &delete_first, None).checks[1].passed);
    // strict_order alone is refused: it refines `ordered`.
    let dir = tempfile::tempdir().unwrap();
    let m = json!({"id": "m", "mode": "automatic", "prompt": "p", "tools": ["create_file"],
        "checks": [{"id": "x", "kind": "actions_called", "strict_order": true,
                    "tools": ["create_file"]}]});
    std::fs::write(dir.path().join("mission.json"), m.to_string()).unwrap();
    let e = rein_engine::mission::Mission::load(dir.path())
        .unwrap_err()
        .to_string();
    assert!(e.contains("ordered"), "{e}");
}

#[test]
fn a_path_call_can_require_what_it_wrote_and_to_come_after_the_last_write() {
    let w = world_with(&[]);
    let (_d, c) = contract(json!([
        {"id": "wrote", "kind": "actions_called", "tools": [
            {"tool": "create_file", "path": "s.txt", "wrote": "temp"}]},
        {"id": "read-back", "kind": "actions_called", "tools": [
            {"tool": "read_file", "path": "s.txt", "after_last_write": true}]}
    ]));
    let write = |text: &str| {
        TraceEntry::new("create_file", Some("s.txt"), "executed", true)
            .with_written(Some(rein_engine::mission::sha256_hex(text.as_bytes())))
    };
    let read = || TraceEntry::new("read_file", Some("s.txt"), "executed", false);
    let delete = || TraceEntry::new("delete_file", Some("s.txt"), "executed", true);
    for ok in ["temp", "temp\n"] {
        let v = evaluate(&c, &w, &[write(ok), read(), delete()], None);
        assert!(v.passed, "{ok:?}: {v:?}");
    }
    for wrong in ["tmp", "temp\n\n", " temp"] {
        let v = evaluate(&c, &w, &[write(wrong), read(), delete()], None);
        assert!(!v.checks[0].passed, "{wrong:?}");
    }
    // Read while it held a first draft, then written again: not read back.
    let v = evaluate(&c, &w, &[write("x"), read(), write("temp")], None);
    assert!(v.checks[0].passed && !v.checks[1].passed, "{v:?}");
    // An unknown option is refused, not ignored.
    let dir = tempfile::tempdir().unwrap();
    let m = json!({"id": "m", "mode": "automatic", "prompt": "p", "tools": ["read_file"],
        "checks": [{"id": "x", "kind": "actions_called",
                    "tools": [{"tool": "read_file", "path": "a", "after_last_wrte": true}]}]});
    std::fs::write(dir.path().join("mission.json"), m.to_string()).unwrap();
    assert!(rein_engine::mission::Mission::load(dir.path()).is_err());
}

#[test]
fn variable_set() {
    let w = world_with(&[]).with_variable("deployed", json!(true));
    passes(
        json!({"id": "v", "kind": "variable_set", "name": "deployed"}),
        &w,
    );
    passes(
        json!({"id": "v", "kind": "variable_set", "name": "deployed", "expected": true}),
        &w,
    );
    fails(
        json!({"id": "v", "kind": "variable_set", "name": "deployed", "expected": false}),
        &w,
    );
    fails(
        json!({"id": "v", "kind": "variable_set", "name": "other"}),
        &w,
    );
}

#[test]
fn verdict_needs_every_check() {
    let (_d, c) = contract(json!([
        {"id": "e", "kind": "file_exists", "path": "out/r.md"},
        {"id": "a", "kind": "file_absent", "path": "out/r.md"}
    ]));
    let v = evaluate(&c, &world_with(&[("out/r.md", "x")]), &[], None);
    assert!(!v.passed);
    assert_eq!(v.mission, "k");
    assert_eq!(v.contract_sha256, c.sha256);
    assert_eq!(
        v.checks.iter().map(|c| c.passed).collect::<Vec<_>>(),
        vec![true, false]
    );
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["checks"][1]["kind"], "file_absent");
}

#[test]
fn dir_world_reads_relative_paths_only() {
    let dir = TempDir::new().unwrap();
    std::fs::create_dir_all(dir.path().join("out")).unwrap();
    std::fs::write(dir.path().join("out/r.md"), "hi").unwrap();
    let w = DirWorld::new(dir.path());
    use rein_engine::checks::World;
    assert_eq!(w.read("out/r.md").unwrap().as_deref(), Some(&b"hi"[..]));
    assert_eq!(w.read("./out//r.md").unwrap().as_deref(), Some(&b"hi"[..]));
    assert!(w.read("out/none.md").unwrap().is_none());
    assert!(w.read("../etc/passwd").is_err());
    assert!(w.read("/etc/passwd").is_err());
    assert!(w.read("out").is_err());
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(Path::new("/etc"), dir.path().join("escape")).unwrap();
        assert!(w.read("escape/hostname").is_err());
    }
}

#[test]
fn the_model_is_never_told_the_contracts_answer() {
    // In a search or edit task the pattern is the answer: a failure says it is missing, and
    // the pattern itself stays with the person and the journal.
    let w = world_with(&[
        ("out/r.md", "The host is web-07.\n"),
        ("out/f.json", r#"{"host": "web-07"}"#),
    ]);
    let r = fails(
        json!({"id": "c", "kind": "content_matches", "path": "out/r.md", "pattern": "db-42.internal"}),
        &w,
    );
    assert!(
        r.feedback.iter().all(|f| !f.contains("db-42")),
        "{:?}",
        r.feedback
    );
    assert!(r.facts.iter().any(|f| f.contains("db-42")), "{:?}", r.facts);
    let r = fails(
        json!({"id": "c", "kind": "content_absent", "path": "out/r.md", "pattern": "web-0[0-9]", "regex": true}),
        &w,
    );
    assert!(
        r.feedback.iter().all(|f| !f.contains("web-0[0-9]")),
        "{:?}",
        r.feedback
    );
    // Where it matched is withheld too: in a list task it would name the wrong item.
    assert!(
        r.feedback.iter().all(|f| !f.contains("web-07")),
        "{:?}",
        r.feedback
    );
    assert!(
        r.facts.iter().any(|f| f.contains("web-07")),
        "{:?}",
        r.facts
    );
    let r = fails(
        json!({"id": "s", "kind": "json_schema", "path": "out/f.json",
               "schema": {"type": "object", "properties": {"host": {"enum": ["db-42.internal"]}}}}),
        &w,
    );
    assert!(
        r.feedback.iter().all(|f| !f.contains("db-42")),
        "{:?}",
        r.feedback
    );
    assert!(
        r.feedback.iter().any(|f| f.contains("`enum` rule")),
        "{:?}",
        r.feedback
    );
    // A missing required property is the prompt's own shape: it may be said.
    let r = fails(
        json!({"id": "s", "kind": "json_schema", "path": "out/f.json",
               "schema": {"type": "object", "required": ["port"]}}),
        &w,
    );
    assert!(
        r.feedback.iter().any(|f| f.contains("port")),
        "{:?}",
        r.feedback
    );
}

/// A stated number is said as written, with how it was read only where that differs: the 1.5B
/// pasted "`1` (read as 1)" into its own line as `1 (read as 1)`.
#[test]
fn a_stated_number_says_how_it_was_read_only_where_that_differs() {
    let csv = json!({"from": "csv", "path": "data/tasks.csv", "op": "count"});
    let re = json!({"regex": "(?i)rows\\W*(.*)$"});
    let plain = fails(
        numeric(re.clone(), csv.clone(), 0.0),
        &world_with(&[("out/r.md", "Rows: 1")]),
    );
    assert!(
        plain.facts.iter().any(|f| f == "the stated number `1`"),
        "{:?}",
        plain.facts
    );
    assert!(
        !plain.facts.iter().any(|f| f.contains("read as")),
        "{:?}",
        plain.facts
    );
    let mut with_units = numeric(re, csv, 0.0);
    with_units["units"] = json!(["rows"]);
    let worded = fails(
        with_units.clone(),
        &world_with(&[("out/r.md", "Rows: 12 rows")]),
    );
    assert!(
        worded
            .facts
            .iter()
            .any(|f| f == "the stated number `12 rows`"),
        "{:?}",
        worded.facts
    );
    let separated = fails(with_units, &world_with(&[("out/r.md", "Rows: 1,200 rows")]));
    assert!(
        separated
            .facts
            .iter()
            .any(|f| f == "the stated number `1,200 rows` (read as 1200)"),
        "{:?}",
        separated.facts
    );
}

/// A bare number in a cell after a value (a pasted row, `B,17`) is the column's when no other
/// column of the source holds a number: a wrong one fails where before only `N hours` was read
/// (the 1.5B wrote `Release checklist,5`, and rows with running totals on one line, and passed).
#[test]
fn mentions_all_reads_a_pasted_row_s_bare_number_in_its_column_s_place() {
    let check = json!({"id": "ml", "kind": "mentions_all", "path": "out/r.md", "section": "Tasks",
        "values": {"from": "csv", "path": "data/tasks.csv", "column": "task"},
        "numbers": {"column": "hours", "units": ["hours", "h"]}});
    let report = |rows: &str| format!("# R\n\n## Tasks\n\n{rows}\n## Risks\n\nNone known.\n");
    for right in [
        "A,Ann,done,12\nB,Bob,open,16.5\n\"C, part 2\",Ann,done,4\n",
        "- A;Ann;done;12\n- B;Bob;open;16.5\n- C, part 2: 4 hours\n",
        "A, Ann, done, 12 hours\nB, Bob, open, 16.5 h\nC, part 2: 4 hours\n",
        "A,12\n\nB,16.5\n\nC, part 2,4\n",
        "A,Ann,done,12; B,Bob,open,16.5; C, part 2,Ann,done,4; Total hours: 32.5\n",
        // Not a row of the table's width: a number there is no hours cell.
        "A (2 people), 12 hours\nB, 16.5 hours\nC, part 2, 4 hours\n",
    ] {
        let text = report(right);
        passes(check.clone(), &world_with(&[("out/r.md", text.as_str())]));
    }
    for wrong in [
        "A,Ann,done,13\nB,Bob,open,16.5\nC, part 2: 4 hours\n",
        "A,Ann,done,12\n\nB,Bob,open,16\n\nC, part 2: 4 hours\n",
        "- A;Ann;done;12\n- B;Bob;open;17\n- C, part 2: 4 hours\n",
        "A,12\n\nB,17\n\nC, part 2: 4 hours\n",
        "A,Ann,done,12; B,Bob,open,28.5; C, part 2,Ann,done,32.5\n",
    ] {
        let text = report(wrong);
        let r = fails(check.clone(), &world_with(&[("out/r.md", text.as_str())]));
        assert!(
            r.facts
                .iter()
                .any(|f| f.contains("which is not its `hours`")),
            "{wrong:?}: {:?}",
            r.facts
        );
    }
}

/// `decimals`: a figure the task asks for with N decimals is written with exactly N; the value
/// may agree and the line still fail (`1073.333333` for "one decimal"), and a right figure
/// written short fails too (`4` for "two decimals").
#[test]
fn numeric_consistency_with_decimals_wants_exactly_that_many() {
    let check = |decimals: u8| {
        let mut c = numeric(
            json!({"regex": "(?im)^\\s*average hours\\s*:\\s*(.*?)\\.?\\s*$"}),
            json!({"from": "csv", "path": "data/tasks.csv", "op": "mean", "column": "hours"}),
            0.01,
        );
        c["decimals"] = json!(decimals);
        c["units"] = json!(["hours", "h"]);
        c
    };
    // The mean of 12, 16.5 and 4 is 10.8333...
    for (decimals, right) in [
        (2, "Average hours: 10.83"),
        (2, "Average hours: 10.83 hours"),
        (1, "Average hours: 10.8 h"),
        (0, "Average hours: 11"),
    ] {
        let mut c = check(decimals);
        c["tolerance"] = json!(if decimals == 0 { 1.0 } else { 0.1 });
        passes(c, &world_with(&[("out/r.md", right)]));
    }
    for (decimals, wrong) in [
        (2, "Average hours: 10.833333"),
        (2, "Average hours: 10.8"),
        (1, "Average hours: 10.83"),
        (2, "Average hours: 10.83\nAverage hours: 10.833"),
    ] {
        let mut c = check(decimals);
        c["tolerance"] = json!(0.1);
        let r = fails(c, &world_with(&[("out/r.md", wrong)]));
        assert!(
            r.facts
                .iter()
                .any(|f| f.contains(&format!("another number of decimals than {decimals}"))),
            "{wrong}: {:?}",
            r.facts
        );
        // The value itself agrees: no fact says otherwise.
        assert!(
            !r.facts.iter().any(|f| f.contains("does not agree")),
            "{wrong}: {:?}",
            r.facts
        );
    }
    let (_d, c) = contract(json!([check(1)]));
    let said = rein_engine::checks::requirements_message(&c);
    assert!(said.contains("write it with exactly 1 decimal;"), "{said}");
}

#[test]
fn decimals_are_refused_on_a_json_number_and_past_six() {
    for (decimals, stated, why) in [
        (
            2,
            json!({"pointer": "/totals/items"}),
            "a JSON number has no written decimals",
        ),
        (
            7,
            json!({"regex": "(?im)^\\s*items\\s*:\\s*(.*?)$"}),
            "more than the 6 decimals",
        ),
    ] {
        let dir = TempDir::new().unwrap();
        let mut check = numeric(
            stated,
            json!({"from": "json", "path": "data/d.json", "pointer": "/totals/items"}),
            0.0,
        );
        check["decimals"] = json!(decimals);
        check["path"] = json!("out/r.md");
        let f = dir.path().join("fixtures/data/d.json");
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, DATA_JSON).unwrap();
        let m = json!({
            "id": "k", "mode": "automatic", "prompt": "p", "inputs": ["data/d.json"],
            "tools": ["read_file", "create_file", "finish"], "required_artifact": "out/r.md",
            "checks": [check]
        });
        let path = dir.path().join("mission.json");
        std::fs::write(&path, m.to_string()).unwrap();
        let err = Mission::load(&path).unwrap_err().to_string();
        assert!(err.contains(why), "{decimals}: {err}");
    }
}
