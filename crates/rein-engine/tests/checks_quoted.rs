//! The input lines a failed check quotes (told to the model only under lever `source-lines`):
//! the label line of a wrong `entries_match` field, the lines a `numeric_consistency` value is
//! taken from by pattern. Never a passing check's, never for a count, never a computed value,
//! and none at all when more lines match than the cap.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::PathBuf;

use rein_engine::checks::{evaluate, CheckResult, MemWorld, Verdict};
use rein_engine::mission::{FrozenContract, Mission};
use serde_json::{json, Value};
use tempfile::TempDir;

fn doc_extract() -> FrozenContract {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../missions/doc_extract/mission.json");
    Mission::load(&path).unwrap()
}

fn invoices() -> MemWorld {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../missions/doc_extract/fixtures/invoices");
    let mut w = MemWorld::new();
    for n in 1..=3 {
        let name = format!("invoice_00{n}.txt");
        let text = std::fs::read_to_string(dir.join(&name)).unwrap();
        w.set_file(&format!("invoices/{name}"), text);
    }
    w
}

/// The three invoices as the 1.5B wrote them: invoice 1's first line amount as its total, a
/// full stop after a vendor, and the sum of those totals as the grand total.
fn wrong_fields() -> Value {
    json!({
        "invoices": [
            {"invoice_number": "INV-2024-001", "date": "2024-03-04", "vendor": "Northwind Paper Co.", "total": 120.00},
            {"invoice_number": "INV-2024-002", "date": "2024-03-11", "vendor": "Bayside Cleaning Ltd.", "total": 450.00},
            {"invoice_number": "INV-2024-003", "date": "2024-03-20", "vendor": "Quayside Books", "total": 304.30}
        ],
        "grand_total": 874.30
    })
}

fn judge(fields: &Value) -> Verdict {
    let mut w = invoices();
    w.set_file("out/fields.json", fields.to_string());
    evaluate(&doc_extract(), &w, &[], None)
}

fn check<'v>(v: &'v Verdict, id: &str) -> &'v CheckResult {
    v.checks.iter().find(|c| c.id == id).unwrap()
}

#[test]
fn a_wrong_field_quotes_the_label_line_of_its_own_source() {
    let v = judge(&wrong_fields());
    let entries = check(&v, "entries-match");
    assert!(!entries.passed);
    assert_eq!(
        entries.quoted,
        vec![
            "invoices/invoice_001.txt line 10: Total due: 300.50 EUR".to_string(),
            "invoices/invoice_002.txt line 4: Vendor: Bayside Cleaning Ltd".to_string(),
        ]
    );
    // What the model may be told otherwise still names no value from the inputs.
    assert!(
        entries.feedback.iter().all(|f| !f.contains("300.50")),
        "{:?}",
        entries.feedback
    );
}

#[test]
fn a_wrong_sum_quotes_the_lines_it_adds_and_never_the_sum() {
    let v = judge(&wrong_fields());
    let total = check(&v, "grand-total");
    assert!(!total.passed);
    assert_eq!(
        total.quoted,
        vec![
            "invoices/invoice_001.txt line 10: Total due: 300.50 EUR".to_string(),
            "invoices/invoice_002.txt line 9: Total due: 450.00 EUR".to_string(),
            "invoices/invoice_003.txt line 10: Total due: 304.30 EUR".to_string(),
        ]
    );
    for c in &v.checks {
        for q in c.quoted.iter().chain(&c.feedback) {
            assert!(!q.contains("1054.8"), "the expected sum leaked: {q}");
        }
    }
}

#[test]
fn passing_checks_quote_nothing() {
    let mut right = wrong_fields();
    right["invoices"][0]["total"] = json!(300.50);
    right["invoices"][1]["vendor"] = json!("Bayside Cleaning Ltd");
    right["grand_total"] = json!(1054.80);
    let v = judge(&right);
    // With no run behind it the process checks (written this run, inputs read) fail, and quote
    // nothing: they compare against no input line.
    for id in [
        "entries-match",
        "grand-total",
        "strings-grounded",
        "fields-schema",
    ] {
        assert!(check(&v, id).passed, "{id}: {:?}", check(&v, id).facts);
    }
    assert!(v.checks.iter().any(|c| !c.passed));
    assert!(
        v.checks.iter().all(|c| c.quoted.is_empty()),
        "{:?}",
        v.checks
    );
    // Only the grand total wrong: the entries check passes and quotes nothing.
    right["grand_total"] = json!(1000);
    let v = judge(&right);
    assert!(check(&v, "entries-match").quoted.is_empty());
    assert_eq!(check(&v, "grand-total").quoted.len(), 3);
}

/// A mission over one log with `numeric_consistency` checks whose expected values come from
/// matched lines: a count, a sum over few lines, a sum over more lines than the cap.
fn log_contract(dir: &TempDir, log: &str, checks: Value) -> (FrozenContract, MemWorld) {
    let f = dir.path().join("fixtures/logs/app.log");
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::write(&f, log).unwrap();
    let m = json!({
        "id": "q", "mode": "automatic", "prompt": "p",
        "inputs": ["logs/app.log"],
        "tools": ["read_file", "create_file", "finish"],
        "required_artifact": "out/r.json",
        "checks": checks
    });
    let path = dir.path().join("mission.json");
    std::fs::write(&path, m.to_string()).unwrap();
    let w = MemWorld::new().with_file("logs/app.log", log);
    (Mission::load(&path).unwrap(), w)
}

fn numeric(op: &str, pattern: &str) -> Value {
    json!({"id": op, "kind": "numeric_consistency", "path": "out/r.json",
           "stated": {"pointer": "/n"},
           "expected": {"from": "matches", "paths": ["logs/app.log"], "pattern": pattern, "op": op},
           "tolerance": 0})
}

#[test]
fn a_count_quotes_no_lines_and_too_many_lines_quote_none() {
    let few = "ok\npaid: 3\nok\npaid: 4\n";
    let dir = TempDir::new().unwrap();
    let (c, mut w) = log_contract(
        &dir,
        few,
        json!([
            numeric("count", r"(?m)^paid: (\d+)$"),
            numeric("sum", r"(?m)^paid: (\d+)$")
        ]),
    );
    w.set_file("out/r.json", r#"{"n": 99}"#);
    let v = evaluate(&c, &w, &[], None);
    assert!(
        check(&v, "count").quoted.is_empty(),
        "a count's lines would say the count"
    );
    assert_eq!(
        check(&v, "sum").quoted,
        vec![
            "logs/app.log line 2: paid: 3",
            "logs/app.log line 4: paid: 4"
        ]
    );

    let many: String = (1..=9).map(|i| format!("paid: {i}\n")).collect();
    let dir = TempDir::new().unwrap();
    let (c, mut w) = log_contract(&dir, &many, json!([numeric("sum", r"(?m)^paid: (\d+)$")]));
    w.set_file("out/r.json", r#"{"n": 1}"#);
    let v = evaluate(&c, &w, &[], None);
    assert!(!v.passed);
    assert!(
        check(&v, "sum").quoted.is_empty(),
        "nine lines are over the cap of eight: a partial list would read as the whole"
    );
}
