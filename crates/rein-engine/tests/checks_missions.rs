//! The shipped missions are achievable: a good deliverable passes every check, and typical
//! failures of a small model fail the checks they should.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::PathBuf;

use rein_engine::checks::{evaluate_automatic, MemWorld, TraceEntry, Verdict};
use rein_engine::finish::check_finish;
use rein_engine::mission::{FrozenContract, Mission};

fn load(id: &str) -> FrozenContract {
    Mission::load(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../missions")
            .join(id),
    )
    .unwrap()
}

fn fresh(c: &FrozenContract) -> MemWorld {
    let mut w = MemWorld::new();
    for h in &c.inputs {
        w.set_file(
            &h.path,
            std::fs::read(c.fixtures_dir.join(&h.path)).unwrap(),
        );
    }
    w
}

fn trace(artifact: &str) -> Vec<TraceEntry> {
    vec![
        TraceEntry::new("list_dir", Some("."), "executed", false),
        TraceEntry::new("read_file", Some("notes/overview.md"), "executed", false),
        TraceEntry::new("create_file", Some(artifact), "executed", true),
        TraceEntry::new("read_file", Some(artifact), "executed", false),
    ]
}

fn failed(v: &Verdict) -> Vec<&str> {
    v.checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.id.as_str())
        .collect()
}

const SUMMARY: &str = "# Project summary\n\n## Goal\nThe Harbor Library app lets members renew loans and reserve \
books on their phones instead of using paper forms.\n\n## Tasks\n- Renewal screen design (done)\n- Renewal API (done)\n\
- Reservation screen (in progress)\n- Catalogue search integration (blocked)\n- Accessibility testing (planned)\n\
- Release checklist (planned)\n\nTotal hours: 64\n\n## Risks\nThe catalogue supplier has not delivered the search API \
keys, so reservations cannot be tested.\n";

#[test]
fn desk_task_good_summary_passes() {
    let c = load("desk_task");
    let w = fresh(&c).with_file("out/summary.md", SUMMARY);
    let t = trace("out/summary.md");
    let v = evaluate_automatic(&c, &w, &t, None).unwrap();
    assert!(v.passed, "{:#?}", v.checks);
    assert_eq!(check_finish(&c, &w, &t, &c.inputs), Ok(()));
}

#[test]
fn desk_task_typical_failures() {
    let c = load("desk_task");
    let t = trace("out/summary.md");
    let wrong_total = SUMMARY.replace("Total hours: 64", "Total hours: 60");
    let v = evaluate_automatic(
        &c,
        &fresh(&c).with_file("out/summary.md", wrong_total),
        &t,
        None,
    )
    .unwrap();
    assert_eq!(failed(&v), vec!["total-hours"]);

    let no_risks = SUMMARY
        .split("## Risks")
        .next()
        .unwrap_or_default()
        .to_string();
    let v = evaluate_automatic(
        &c,
        &fresh(&c).with_file("out/summary.md", no_risks),
        &t,
        None,
    )
    .unwrap();
    assert_eq!(failed(&v), vec!["summary-complete", "names-main-risk"]);

    let stray = fresh(&c)
        .with_file("out/summary.md", SUMMARY)
        .with_file("summary.md", SUMMARY);
    let v = evaluate_automatic(&c, &stray, &t, None).unwrap();
    assert_eq!(failed(&v), vec!["no-stray-root-summary"]);

    let v = evaluate_automatic(&c, &fresh(&c), &[], None).unwrap();
    assert!(!v.passed);
    assert!(failed(&v).contains(&"summary-exists") && failed(&v).contains(&"read-before-write"));
}

const FIELDS: &str = r#"{
  "invoices": [
    {"invoice_number": "INV-2024-001", "date": "2024-03-04", "vendor": "Northwind Paper Co.", "total": 300.50},
    {"invoice_number": "INV-2024-002", "date": "2024-03-11", "vendor": "Bayside Cleaning Ltd", "total": 450.00},
    {"invoice_number": "INV-2024-003", "date": "2024-03-20", "vendor": "Quayside Books", "total": 304.30}
  ],
  "grand_total": 1054.80
}"#;

#[test]
fn doc_extract_good_fields_pass() {
    let c = load("doc_extract");
    let w = fresh(&c).with_file("out/fields.json", FIELDS);
    let t = trace("out/fields.json");
    let v = evaluate_automatic(&c, &w, &t, None).unwrap();
    assert!(v.passed, "{:#?}", v.checks);
    assert_eq!(check_finish(&c, &w, &t, &c.inputs), Ok(()));
}

#[test]
fn doc_extract_typical_failures() {
    let c = load("doc_extract");
    let t = trace("out/fields.json");
    let run = |fields: String| {
        evaluate_automatic(
            &c,
            &fresh(&c).with_file("out/fields.json", fields),
            &t,
            None,
        )
        .unwrap()
    };

    let invented = FIELDS.replace("Quayside Books", "Quayside Bookshop");
    assert_eq!(failed(&run(invented)), vec!["strings-grounded"]);

    let wrong_sum = FIELDS.replace("1054.80", "1050.80");
    assert_eq!(failed(&run(wrong_sum)), vec!["grand-total"]);

    let swapped_vendor = FIELDS.replacen("Northwind Paper Co.", "Bayside Cleaning Ltd", 1);
    assert_eq!(failed(&run(swapped_vendor)), vec!["first-vendor-grounded"]);

    let string_total = FIELDS.replace("\"total\": 300.50", "\"total\": \"300.50\"");
    assert_eq!(failed(&run(string_total)), vec!["fields-schema"]);
}
