#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `document-facts` lever on doc_extract: a write of the JSON deliverable returns the counts
//! and sums of the document as written (the model's own entries), never a figure from the
//! inputs or the contract; a read, a write of another file, or the lever off adds nothing.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use serde_json::json;
use support::{line, Harness, PromptRecorder};

const FIELDS: &str = "out/fields.json";

/// The three invoices with the right totals and a wrong grand total (1054.80 is right).
fn document() -> String {
    json!({
        "invoices": [
            {"invoice_number": "INV-2024-001", "date": "2024-03-04", "vendor": "Northwind Paper Co.", "total": 300.50},
            {"invoice_number": "INV-2024-002", "date": "2024-03-11", "vendor": "Bayside Cleaning Ltd", "total": 450.00},
            {"invoice_number": "INV-2024-003", "date": "2024-03-20", "vendor": "Quayside Books", "total": 304.30}
        ],
        "grand_total": 954.80
    })
    .to_string()
}

fn run(script: &str, lever: bool) -> PromptRecorder {
    let h = Harness::new("doc_extract");
    let mut model = PromptRecorder::new(script, "document_facts.jsonl");
    h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = Levers {
            document_facts: lever,
            ..Levers::DEFAULT
        };
        o.limits.attempts = 1;
    });
    model
}

fn reads() -> String {
    ["invoice_001.txt", "invoice_002.txt", "invoice_003.txt"]
        .iter()
        .map(|f| line("read_file", json!({ "path": format!("invoices/{f}") })))
        .collect()
}

#[test]
fn a_write_of_the_deliverable_returns_the_sums_of_its_own_entries() {
    let script = reads()
        + &line(
            "create_file",
            json!({"path": "notes.json", "content": document()}),
        )
        + &line(
            "create_file",
            json!({"path": FIELDS, "content": document()}),
        )
        + &line("read_file", json!({ "path": FIELDS }))
        + &line("finish", json!({"summary": "Done."}));
    let model = run(&script, true);
    // Call 5 follows the write of the deliverable: its result carries the facts, first.
    let after_write = model.prompt(5);
    let at = after_write.rfind("Result of step 5").unwrap();
    let result = &after_write[at..];
    assert!(result.contains("document_facts"), "{result}");
    assert!(result.contains(r#"\"array\":\"invoices\""#), "{result}");
    assert!(result.contains(r#"\"entries\":3"#), "{result}");
    // The sum of the model's own three totals, exact; not the grand total it wrote.
    assert!(result.contains(r#"\"total\":\"1054.8\""#), "{result}");
    assert!(result.contains("not from the inputs"), "{result}");
    // A write of another JSON file (step 4) and the read back (step 6) carry none.
    let other = &model.prompt(4)[model.prompt(4).rfind("Result of step 4").unwrap()..];
    assert!(!other.contains("document_facts"), "{other}");
    let read = &model.prompt(6)[model.prompt(6).rfind("Result of step 6").unwrap()..];
    assert!(!read.contains("document_facts"), "{read}");
}

#[test]
fn without_the_lever_a_write_carries_no_facts() {
    let script = reads()
        + &line(
            "create_file",
            json!({"path": FIELDS, "content": document()}),
        )
        + &line("read_file", json!({ "path": FIELDS }))
        + &line("finish", json!({"summary": "Done."}));
    let model = run(&script, false);
    assert!(model
        .prompts()
        .iter()
        .all(|p| !p.contains("document_facts")));
}
