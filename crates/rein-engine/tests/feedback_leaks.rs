//! Red team of what the model reads from the judge: the retry feedback (`CheckResult::feedback`),
//! the `requirements` lever and the `checklist` lever. Each test is a way a shown fact could
//! reveal an expected value, a gold file or the task's answer, and must fail if it does.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;

use rein_engine::agent::{checklist_note, clip, MAX_FAILED_CHECK_CHARS};
use rein_engine::checks::{
    evaluate, requirement, requirements_message, Check, CheckResult, MemWorld, TraceEntry,
};
use rein_engine::mission::{FrozenContract, Mission};
use serde_json::{json, Value};
use tempfile::TempDir;

const POLICY_A: &str = "# Equipment\nEquipment must be returned within 7 working days.\n";
const POLICY_B: &str = "# Travel\nBook trains at least 3 days ahead.\n";
const POLICY_C: &str = "# Gifts\nDeclare gifts above 50 EUR.\n";
const TASKS_CSV: &str = "task,hours\nA,12\nB,16\n";

/// A search-like mission over three policies and a CSV; the answer is `policies/equipment.md`.
fn contract(checks: Value) -> (TempDir, FrozenContract) {
    let dir = TempDir::new().unwrap();
    for (p, c) in inputs() {
        let f = dir.path().join("fixtures").join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, c).unwrap();
    }
    let m = json!({
        "id": "leak", "mode": "automatic", "prompt": "find the equipment clause",
        "inputs": inputs().iter().map(|(p, _)| *p).collect::<Vec<_>>(),
        "tools": ["read_file", "create_file", "list_dir", "finish"],
        "required_artifact": "out/answer.md",
        "checks": checks
    });
    let path = dir.path().join("mission.json");
    std::fs::write(&path, m.to_string()).unwrap();
    let c = Mission::load(&path).unwrap();
    (dir, c)
}

fn inputs() -> [(&'static str, &'static str); 4] {
    [
        ("policies/equipment.md", POLICY_A),
        ("policies/travel.md", POLICY_B),
        ("policies/gifts.md", POLICY_C),
        ("data/tasks.csv", TASKS_CSV),
    ]
}

fn world(answer: Option<&str>) -> MemWorld {
    let mut w = MemWorld::new();
    for (p, c) in inputs() {
        w.set_file(p, c);
    }
    if let Some(a) = answer {
        w.set_file("out/answer.md", a);
    }
    w
}

fn read(path: &str) -> TraceEntry {
    TraceEntry::new("read_file", Some(path), "executed", false).with_full_read(true)
}

/// The one check's result.
fn judge(check: Value, w: &MemWorld, trace: &[TraceEntry]) -> CheckResult {
    let (_d, c) = contract(json!([check]));
    evaluate(&c, w, trace, None).checks.remove(0)
}

fn said(r: &CheckResult) -> String {
    r.feedback.join(" | ")
}

#[test]
fn a_variable_set_failure_never_says_the_expected_value() {
    let check = json!({"id": "v", "kind": "variable_set", "name": "code", "expected": "7421"});
    let w = world(None).with_variable("code", json!("1111"));
    let r = judge(check, &w, &[]);
    assert!(!r.passed);
    assert!(!said(&r).contains("7421"), "{}", said(&r));
    // The person still reads it.
    assert!(r.facts.iter().any(|f| f.contains("7421")), "{:?}", r.facts);
}

#[test]
fn numeric_statements_do_not_say_which_candidate_agrees() {
    // Four candidate deadlines at once: the feedback must not single out the right one (7).
    let check = json!({"id": "n", "kind": "numeric_consistency", "path": "out/answer.md",
        "stated": {"regex": "(?im)^deadline:\\s*(.*?)\\s*$"},
        "expected": {"from": "matches", "paths": ["policies/equipment.md"],
                     "pattern": "returned within (\\d+) working days", "op": "max"},
        "tolerance": 0, "units": ["working days"]});
    let shotgun = |order: [u32; 4]| {
        let text: String = order
            .iter()
            .map(|n| format!("Deadline: {n} working days\n"))
            .collect();
        let r = judge(check.clone(), &world(Some(&text)), &[]);
        assert!(!r.passed);
        // Which statement agrees is the answer: the model's facts must be the same whichever
        // position the right value takes, once the numbers themselves are taken out.
        said(&r)
            .replace(&order.map(|n| format!("`{n} working days`")).join(""), "")
            .chars()
            .filter(|c| !c.is_ascii_digit())
            .collect::<String>()
    };
    assert_eq!(shotgun([5, 6, 7, 8]), shotgun([7, 5, 6, 8]));
    let r = judge(
        check,
        &world(Some("Deadline: 6 working days\nDeadline: 7 working days\n")),
        &[],
    );
    assert!(!said(&r).contains("agrees"), "{}", said(&r));
    assert!(
        r.facts.iter().any(|f| f.contains("agrees")),
        "the person still reads which one agrees: {:?}",
        r.facts
    );
}

#[test]
fn inputs_read_of_chosen_inputs_never_names_them() {
    // The contract names the one policy that holds the answer: naming it is the answer.
    let check = json!({"id": "r", "kind": "inputs_read", "paths": ["policies/equipment.md"],
        "before_writing": "out/answer.md"});
    for trace in [
        vec![],
        vec![read("policies/travel.md")],
        vec![TraceEntry::new(
            "read_file",
            Some("policies/equipment.md"),
            "executed",
            false,
        )],
    ] {
        let r = judge(check.clone(), &world(None), &trace);
        assert!(!r.passed);
        assert!(!said(&r).contains("equipment"), "{}", said(&r));
        assert!(r.facts.iter().any(|f| f.contains("equipment")));
    }
    // Read after writing: still not named.
    let trace = [
        TraceEntry::new("create_file", Some("out/answer.md"), "executed", true),
        read("policies/equipment.md"),
    ];
    let r = judge(check.clone(), &world(Some("x")), &trace);
    assert!(!r.passed);
    assert!(!said(&r).contains("equipment"), "{}", said(&r));
    // Every input (no list in the contract): the names are the prompt's own and are said.
    let all = json!({"id": "r", "kind": "inputs_read"});
    let r = judge(all, &world(None), &[read("policies/travel.md")]);
    assert!(
        said(&r).contains("policies/gifts.md: never read"),
        "{}",
        said(&r)
    );
}

#[test]
fn a_negated_statement_is_not_quoted_back() {
    // Candidates written negated: quoting the one that matched names the answer.
    let check = json!({"id": "s", "kind": "statement", "path": "out/answer.md",
        "all": ["equipment", "7 working days"], "unnegated": true});
    let text = "Equipment is not due in 5 working days. Equipment is not due in 7 working days. \
                Equipment is not due in 9 working days.\n";
    let r = judge(check, &world(Some(text)), &[]);
    assert!(!r.passed);
    assert!(!said(&r).contains('7'), "{}", said(&r));
    assert!(said(&r).contains("negated"), "{}", said(&r));
}

#[test]
fn a_schema_bound_does_not_say_too_low_or_too_high() {
    let check = json!({"id": "j", "kind": "json_schema", "path": "out/answer.md",
        "schema": {"type": "object", "properties": {"days": {"type": "integer", "minimum": 7, "maximum": 7}}}});
    let low = judge(check.clone(), &world(Some(r#"{"days": 3}"#)), &[]);
    let high = judge(check, &world(Some(r#"{"days": 12}"#)), &[]);
    assert!(!low.passed && !high.passed);
    assert_eq!(said(&low), said(&high));
    let short = json!({"id": "j", "kind": "json_schema", "path": "out/answer.md",
        "schema": {"type": "object", "properties": {"code": {"type": "string", "minLength": 4, "maxLength": 4}}}});
    let a = judge(short.clone(), &world(Some(r#"{"code": "ab"}"#)), &[]);
    let b = judge(short, &world(Some(r#"{"code": "abcdefg"}"#)), &[]);
    assert_eq!(said(&a), said(&b));
}

fn spec(v: Value) -> String {
    let mut v = v;
    v["id"] = json!("x");
    let c: Check = serde_json::from_value(v).unwrap();
    requirement(&c.spec)
}

#[test]
fn requirements_never_render_what_the_check_withholds() {
    // The answer file of a search task, in each place a contract may name it.
    let answer_bearing = [
        json!({"kind": "content_matches", "path": "out/answer.md",
               "pattern": "(?im)^policy:\\s*policies/equipment\\.md$", "regex": true}),
        json!({"kind": "content_matches", "path": "out/answer.md", "pattern": "policies/equipment.md"}),
        json!({"kind": "statement", "path": "out/answer.md", "all": ["equipment", "7 working days"]}),
        json!({"kind": "inputs_read", "paths": ["policies/equipment.md"]}),
        json!({"kind": "numeric_consistency", "path": "out/answer.md",
               "stated": {"regex": "Deadline: (.*)"},
               "expected": {"from": "matches", "paths": ["policies/equipment.md"],
                            "pattern": "returned within (\\d+) working days", "op": "max"},
               "tolerance": 0}),
        json!({"kind": "numeric_consistency", "path": "out/answer.md",
               "stated": {"regex": "Count: (.*)"},
               "expected": {"from": "lines", "path": "policies/equipment.md", "pattern": "returned"},
               "tolerance": 0}),
        json!({"kind": "content_absent", "path": "out/answer.md", "pattern": "policies/travel.md"}),
        json!({"kind": "decision", "path": "out/answer.md", "labels": ["yes", "no"], "expected": "yes",
               "prompt": "{artifact}\nThe equipment policy gives 7 working days. Does the answer state that deadline?"}),
    ];
    for s in answer_bearing {
        let text = spec(s.clone());
        for word in ["equipment", "travel", "7 working", "returned"] {
            assert!(!text.contains(word), "{s}\n{text}");
        }
    }
}

#[test]
fn the_shipped_missions_requirements_quote_no_answer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // (mission, answer text that only the contract holds)
    for (m, answers) in [
        ("missions/screen_qa", vec!["Push notifications off"]),
        ("missions/voice_intake", vec!["self-checkout"]),
        ("missions/desk_task", vec!["API keys", "api keys"]),
        (
            "suites/desk/search-policy-clause",
            vec!["policies/equipment", "returned within"],
        ),
    ] {
        let contract = Mission::load(root.join(m)).unwrap();
        let text = requirements_message(&contract);
        for a in answers {
            assert!(!text.contains(a), "{m}: {a}\n{text}");
        }
    }
}

/// The checklist a model reads after a step on the search mission.
fn checklist(checks: &Value, w: &MemWorld, trace: &[TraceEntry]) -> String {
    let (_d, c) = contract(checks.clone());
    checklist_note(&c, w, trace)
}

#[test]
fn the_checklist_is_no_oracle_for_the_answer() {
    let checks = json!([
        {"id": "exists", "kind": "file_exists", "path": "out/answer.md", "non_empty": true},
        {"id": "read", "kind": "inputs_read", "paths": ["policies/equipment.md"]},
        {"id": "policy", "kind": "content_matches", "path": "out/answer.md",
         "pattern": "(?im)^policy:\\s*policies/equipment\\.md$", "regex": true},
        {"id": "one", "kind": "content_absent", "path": "out/answer.md", "pattern": "policies/travel.md"},
        {"id": "days", "kind": "numeric_consistency", "path": "out/answer.md",
         "stated": {"regex": "(?im)^deadline:\\s*(.*?)\\s*$"},
         "expected": {"from": "matches", "paths": ["policies/equipment.md"],
                      "pattern": "returned within (\\d+) working days", "op": "max"},
         "tolerance": 0, "units": ["working days"]},
        {"id": "says", "kind": "statement", "path": "out/answer.md", "all": ["7 working days"]},
        {"id": "var", "kind": "variable_set", "name": "days", "expected": 7}
    ]);
    // Reading the right policy or a wrong one, writing the right answer or a wrong one, setting
    // the variable right or wrong: the checklist must read the same (only `exists` may change).
    let wrong = world(Some(
        "Policy: policies/travel.md\nDeadline: 5 working days\n",
    ))
    .with_variable("days", json!(5));
    let right = world(Some(
        "Policy: policies/equipment.md\nDeadline: 7 working days\n",
    ))
    .with_variable("days", json!(7));
    let a = checklist(&checks, &wrong, &[read("policies/travel.md")]);
    let b = checklist(&checks, &right, &[read("policies/equipment.md")]);
    assert_eq!(a, b);
    assert!(!a.contains("equipment") && !a.contains("travel"), "{a}");
    // Before the deliverable exists, its absence is said.
    let c = checklist(&checks, &world(None), &[]);
    assert!(c.contains("out/answer.md"), "{c}");
}

#[test]
fn the_checklist_does_not_change_the_verdict() {
    let checks = json!([
        {"id": "exists", "kind": "file_exists", "path": "out/answer.md", "non_empty": true},
        {"id": "days", "kind": "numeric_consistency", "path": "out/answer.md",
         "stated": {"regex": "(?im)^deadline:\\s*(.*?)\\s*$"},
         "expected": {"from": "matches", "paths": ["policies/equipment.md"],
                      "pattern": "returned within (\\d+) working days", "op": "max"},
         "tolerance": 0, "units": ["working days"]}
    ]);
    let (_d, c) = contract(checks);
    let w = world(Some("Deadline: 5 working days\n"));
    let before = evaluate(&c, &w, &[], None);
    let note = checklist_note(&c, &w, &[]);
    let after = evaluate(&c, &w, &[], None);
    assert_eq!(before, after);
    assert!(!after.passed);
    // A checklist that lists nothing is not a pass.
    assert!(!note.contains("every requirement") || !after.passed);
}

#[test]
fn the_checklist_survives_hostile_files() {
    let checks = json!([
        {"id": "exists", "kind": "file_exists", "path": "out/answer.md", "non_empty": true},
        {"id": "shape", "kind": "report_complete", "path": "out/answer.md", "headings": ["Answer"]},
        {"id": "ph", "kind": "no_placeholders", "path": "out/answer.md"},
        {"id": "own", "kind": "not_copied", "path": "out/answer.md", "min_run_words": 5, "max_fraction": 0.5},
        {"id": "json", "kind": "json_schema", "path": "out/answer.md", "schema": {"type": "object"}},
        {"id": "nothing", "kind": "nothing_else_changed"}
    ]);
    let mut bytes = vec![0xff, 0xfe, 0x00, b'\n'];
    bytes.extend(std::iter::repeat_n(b'a', 2_000_000));
    for content in [
        bytes.clone(),
        b"\xc3\x28 invalid utf-8 \xe2\x80\xae reversed".to_vec(),
        b"".to_vec(),
    ] {
        let mut w = world(None);
        w.set_file("out/answer.md", content);
        let note = checklist(&checks, &w, &[]);
        assert!(note.starts_with("Checklist"), "{note}");
        assert!(note.chars().count() < 2_500, "{}", note.len());
    }
}

#[test]
fn the_checklist_of_a_huge_deliverable_stays_short() {
    // desk_task with a 1 MB deliverable: every check the checklist runs reads it each step.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../missions/desk_task");
    let c = Mission::load(&root).unwrap();
    let mut w = MemWorld::new();
    for h in &c.inputs {
        let bytes = std::fs::read(root.join("fixtures").join(&h.path)).unwrap();
        w.set_file(&h.path, bytes);
    }
    let line = "The Harbor Library app lets members renew loans from a phone. ";
    let mut big = String::from("# Project summary\n\n## Goal\n\n");
    while big.len() < 1_000_000 {
        big.push_str(line);
        big.push('\n');
    }
    w.set_file("out/summary.md", big);
    let trace = [read("notes/overview.md")];
    let note = checklist_note(&c, &w, &trace);
    assert!(note.starts_with("Checklist"), "{note}");
    assert!(note.chars().count() < 2_500, "{note}");
}

#[test]
fn a_forbidden_text_failure_does_not_name_the_decoy() {
    // A list task with one check per wrong file: a model that lists every file must not learn,
    // from the retry, which of its lines are the wrong ones (the rest would be the answer).
    let list = "- policies/equipment.md\n- policies/travel.md\n- policies/gifts.md\n";
    for decoy in ["policies/travel.md", "policies/gifts.md"] {
        let check = json!({"id": "not", "kind": "content_absent", "path": "out/answer.md",
            "pattern": decoy});
        let r = judge(check, &world(Some(list)), &[]);
        assert!(!r.passed);
        let s = said(&r);
        assert!(!s.contains("travel") && !s.contains("gifts"), "{s}");
        assert!(!s.contains("line 2") && !s.contains("line 3"), "{s}");
        assert!(r.facts.iter().any(|f| f.contains(decoy)), "{:?}", r.facts);
    }
}

#[test]
fn a_failed_not_copied_names_only_the_deliverable_s_own_text_on_hostile_files() {
    let check = json!({"id": "own", "kind": "not_copied", "path": "out/answer.md",
        "min_run_words": 5, "max_fraction": 0.2});
    let paste = "Equipment must be returned within 7 working days.";
    let mut huge = String::new();
    while huge.len() < 1_000_000 {
        huge.push_str(paste);
        huge.push('\n');
    }
    let mut variants: Vec<Vec<u8>> = vec![
        // CRLF, a lone CR and U+2028 inside a line, an empty line.
        format!("# A\r\n\r\n{paste}\r\nx\ry {paste}\u{2028}{paste}\n\n").into_bytes(),
        // Lookalikes and combining marks that read as the input: the deliverable's own
        // letters are what is shown.
        "Equ\u{0456}pment mu\u{0301}st be returned within 7 working days, all of it.\n"
            .as_bytes()
            .to_vec(),
        huge.into_bytes(),
        // One line far longer than an excerpt, with a multi-byte character at the cut.
        format!("{}{paste}", "é".repeat(47)).into_bytes(),
    ];
    let mut bad = b"\xff\xfe ".to_vec();
    bad.extend_from_slice(paste.as_bytes());
    bad.extend_from_slice(b" \xc3\x28\n");
    variants.push(bad);
    for bytes in variants {
        let mut w = world(None);
        w.set_file("out/answer.md", bytes.clone());
        let r = judge(check.clone(), &w, &[]);
        let fact = said(&r);
        assert!(!r.passed, "{fact}");
        let shown = fact
            .split("most copied: ")
            .nth(1)
            .unwrap_or_else(|| panic!("{fact}"));
        let text = String::from_utf8_lossy(&bytes);
        for excerpt in shown.split('`').skip(1).step_by(2) {
            let excerpt = excerpt.trim_end_matches('…');
            assert!(
                text.contains(excerpt),
                "{excerpt:?} is not the deliverable's"
            );
        }
        assert!(fact.chars().count() < 1_000, "{}", fact.len());
    }
}

/// A JSON deliverable of the wrong shape is named by its kind, not echoed: the schema crate's
/// own message starts with the whole document, so a few kilobytes of it pushed the reason ("is
/// not of type object") past the feedback's clip and the model read only its own file back.
#[test]
fn a_wrong_json_shape_is_said_in_a_line_whatever_the_document_size() {
    let entries: Vec<Value> = (0..60)
        .map(|i| json!({"merchant": format!("Shop number {i}"), "total": i}))
        .collect();
    let mut w = world(None);
    w.set_file(
        "out/receipts.json",
        serde_json::to_string_pretty(&entries).unwrap(),
    );
    let check = json!({"id": "schema", "kind": "json_schema", "path": "out/receipts.json",
        "schema": {"type": "object", "required": ["receipts"]}});
    let r = judge(check, &w, &[]);
    assert!(!r.passed);
    assert_eq!(
        said(&r),
        "out/receipts.json: An array here, where the schema needs an object"
    );
}

/// Many statements of a number, some wrong: the reason leads, so the feedback's clip cuts the
/// list of statements, never the conclusion (it came last, after a list longer than the clip).
#[test]
fn a_long_list_of_wrong_statements_keeps_its_reason_within_the_clip() {
    let check = json!({"id": "n", "kind": "numeric_consistency", "path": "out/answer.md",
        "stated": {"regex": "(?im)^deadline:\\s*(.*?)\\s*$"},
        "expected": {"from": "matches", "paths": ["policies/equipment.md"],
                     "pattern": "returned within (\\d+) working days", "op": "max"},
        "tolerance": 0, "units": ["working days"]});
    let text: String = (0..12)
        .map(|i| format!("Deadline: {} working days\n", 1_000_000 + i))
        .collect();
    let r = judge(check, &world(Some(&text)), &[]);
    assert!(!r.passed);
    let conclusion =
        "not all 12 statements agree with the value computed from the inputs; every one must";
    assert!(r.feedback[0].starts_with(conclusion), "{:?}", r.feedback);
    let joined = r.feedback.join("; ");
    assert!(joined.chars().count() > MAX_FAILED_CHECK_CHARS, "{joined}");
    assert!(clip(&joined, MAX_FAILED_CHECK_CHARS).contains(conclusion));
}
