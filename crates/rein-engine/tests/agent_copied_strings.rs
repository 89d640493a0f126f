#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `copied-strings` lever on doc_extract: with `write_json`, the strings its contract says
//! are copied (the `grounded` claim on the whole document, the `entries_match` text fields) are
//! held by constrained decoding to runs of whole words of one line of the invoices this run has
//! read whole. llguidance itself is asked what it lets through.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use serde_json::{json, Value};
use support::{
    constrained_run, doc_extract_fields, line, write_json_document, Harness, PromptRecorder,
};

fn levers(copied: bool) -> Levers {
    Levers {
        write_json: true,
        copied_strings: copied,
        ..Levers::DEFAULT
    }
}

fn read(file: &str) -> String {
    line("read_file", json!({ "path": format!("invoices/{file}") }))
}

/// How much of `document` (as compact JSON with the prompt's separators) llguidance lets
/// through under `schema`; the whole text when all of it.
fn accepted(schema: &Value, document: &Value) -> (usize, String) {
    let text = serde_json::to_string(document)
        .unwrap()
        .replace("\",\"", "\", \"")
        .replace("\":", "\": ")
        .replace(",{", ", {")
        .replace("],", "], ")
        .replace(",\"", ", \"");
    let n =
        rein_llama::schema_accepted_len(&rein_llama::with_fixed_separators(schema), &text).unwrap();
    (n, text)
}

fn all_reads() -> String {
    ["invoice_001.txt", "invoice_002.txt", "invoice_003.txt"]
        .iter()
        .map(|f| read(f))
        .collect()
}

#[test]
fn after_the_reads_a_vendor_with_an_invented_full_stop_cannot_be_written() {
    let h = Harness::new("doc_extract");
    let (requests, events) = constrained_run(&h, &all_reads(), levers(true));
    // Request 4 comes after the three reads.
    let schema = write_json_document(&requests, 3);
    let vendor = &schema["properties"]["invoices"]["items"]["properties"]["vendor"];
    assert!(vendor["pattern"].as_str().unwrap().starts_with("^(?:"));
    // The schema's own format rules stand.
    assert_eq!(
        schema["properties"]["invoices"]["items"]["properties"]["invoice_number"]["pattern"],
        "^INV-[0-9]{4}-[0-9]{3}$"
    );
    rein_llama::check_schema_grammar(&schema).unwrap();

    let (n, text) = accepted(&schema, &doc_extract_fields(true));
    assert_eq!(n, text.len(), "the right document is let through: {text}");
    // The 1.5B's document: refused at the invented full stop after `Ltd`.
    let (n, text) = accepted(&schema, &doc_extract_fields(false));
    assert_eq!(
        &text[..n],
        &text[..text.find("Ltd.").unwrap() + 3],
        "{text}"
    );
    // The judge's numbers are not the lever's: the wrong total still decodes.
    let mut wrong_total = doc_extract_fields(true);
    wrong_total["invoices"][0]["total"] = json!(120.0);
    let (n, text) = accepted(&schema, &wrong_total);
    assert_eq!(n, text.len());

    let last = events.last().unwrap();
    assert_eq!(
        last["held"],
        json!([
            "/invoices/0/date",
            "/invoices/0/invoice_number",
            "/invoices/0/vendor",
            ""
        ])
    );
    assert_eq!(last["not_held"], json!([]));
}

#[test]
fn only_inputs_read_whole_are_copied_from() {
    let h = Harness::new("doc_extract");
    let part = line(
        "read_file",
        json!({"path": "invoices/invoice_003.txt", "start_line": 1, "end_line": 4}),
    );
    let (requests, events) = constrained_run(&h, &(read("invoice_001.txt") + &part), levers(true));
    // Before any read nothing is held, and the journal says why.
    let first = write_json_document(&requests, 0);
    assert!(
        first["properties"]["invoices"]["items"]["properties"]["vendor"]
            .get("pattern")
            .is_none()
    );
    assert_eq!(events[0]["held"], json!([]));
    assert!(events[0]["not_held"][0]["why"]
        .as_str()
        .unwrap()
        .contains("no input it may be copied from has been read whole yet"));

    // After a whole read of invoice 1 and a part of invoice 3: invoice 1's vendor only.
    let schema = write_json_document(&requests, 2);
    assert!(all_vendors(&schema, "Northwind Paper Co."));
    assert!(
        !all_vendors(&schema, "Quayside Books"),
        "invoice 3 was read in part only"
    );
    assert!(
        !all_vendors(&schema, "Bayside Cleaning Ltd"),
        "invoice 2 was not read"
    );
}

/// Whether llguidance lets the right document through with every vendor set to `vendor`.
fn all_vendors(schema: &Value, vendor: &str) -> bool {
    let mut doc = doc_extract_fields(true);
    for entry in doc["invoices"].as_array_mut().unwrap() {
        entry["vendor"] = json!(vendor);
    }
    let (n, text) = accepted(schema, &doc);
    n == text.len()
}

#[test]
fn with_the_lever_off_nothing_is_held_or_journaled() {
    let h = Harness::new("doc_extract");
    let (requests, events) = constrained_run(&h, &all_reads(), levers(false));
    let schema = write_json_document(&requests, 3);
    let (n, text) = accepted(&schema, &doc_extract_fields(false));
    assert_eq!(n, text.len());
    assert!(events.is_empty());
}

#[test]
fn an_edited_input_is_not_copied_from() {
    // The run's own copy of invoice 2 changed after it was frozen (a person's editor, say):
    // its lines are not the frozen bytes the judge grounds against, so none is offered.
    let h = Harness::new("doc_extract");
    let p = h.workspace.join("invoices/invoice_002.txt");
    let script = read("invoice_001.txt") + &read("invoice_002.txt");
    let mut model = PromptRecorder::tapped(
        &script,
        "copied_strings.jsonl",
        Box::new(move |call, _, _| {
            if call == 0 {
                std::fs::write(&p, "Vendor: Invented Vendor Ltd.\n").unwrap();
            }
        }),
    );
    let _ = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers(true);
        o.constrained = true;
        o.limits.attempts = 1;
    });
    let schema = write_json_document(&model.requests, 2);
    assert!(!all_vendors(&schema, "Invented Vendor Ltd."));
    assert!(!all_vendors(&schema, "Bayside Cleaning Ltd"));
    assert!(all_vendors(&schema, "Northwind Paper Co."));
}
