#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `label-lines` lever on doc_extract: a whole read of an invoice its `entries_match` check
//! copies from shows first the lines that start with the fields' labels; a part read, an input
//! no check copies from, a changed input or a label on two lines shows none.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use serde_json::json;
use support::{line, Harness, PromptRecorder};

fn levers(on: bool) -> Levers {
    Levers {
        label_lines: on,
        ..Levers::DEFAULT
    }
}

/// The prompts of a one-attempt run of `h`'s mission on `script`.
fn prompts(h: &Harness, script: &str, levers: Levers) -> Vec<String> {
    let mut model = PromptRecorder::new(script, "label_lines.jsonl");
    let _ = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.limits.attempts = 1;
    });
    model.prompts()
}

fn read(path: &str) -> String {
    line("read_file", json!({ "path": path }))
}

const QUOTED: &str = "2: Invoice number: INV-2024-001";

#[test]
fn a_whole_read_of_a_source_quotes_its_label_lines() {
    let h = Harness::new("doc_extract");
    let p = prompts(&h, &read("invoices/invoice_001.txt"), levers(true));
    let after = &p[1];
    assert!(after.contains("labelled_lines"), "{after}");
    for quoted in [
        QUOTED,
        "3: Date: 2024-03-04",
        "4: Vendor: Northwind Paper Co.",
        "10: Total due: 300.50 EUR",
    ] {
        assert!(after.contains(quoted), "{quoted} in {after}");
    }
    // Not the line the 1.5B copied, nor a line no field is copied from.
    assert!(!after.contains("7: Printer paper"));
    assert!(!after.contains("5: Bill to"));
    // Off: nothing.
    let h = Harness::new("doc_extract");
    let p = prompts(&h, &read("invoices/invoice_001.txt"), levers(false));
    assert!(!p[1].contains("labelled_lines"));
}

#[test]
fn a_part_read_a_changed_input_and_a_repeated_label_quote_nothing() {
    let part = line(
        "read_file",
        json!({"path": "invoices/invoice_001.txt", "start_line": 1, "end_line": 10}),
    );
    // Lines 1-10 of a 10-line file is the whole file; 1-4 is not.
    let short = line(
        "read_file",
        json!({"path": "invoices/invoice_001.txt", "start_line": 1, "end_line": 4}),
    );
    let h = Harness::new("doc_extract");
    let p = prompts(&h, &(short + &part), levers(true));
    assert!(!p[1].contains("labelled_lines"), "{}", p[1]);
    assert!(p[2].contains("labelled_lines"));

    // The workspace copy changed since it was frozen: not quoted.
    let h = Harness::new("doc_extract");
    let file = h.workspace.join("invoices/invoice_002.txt");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("450.00 EUR", "999.00 EUR")).unwrap();
    let p = prompts(&h, &read("invoices/invoice_002.txt"), levers(true));
    assert!(!p[1].contains("labelled_lines"), "{}", p[1]);

    // A mission whose invoice holds `Total due:` twice: that label is not quoted, the others are.
    let h = twice_labelled();
    let p = prompts(&h, &read("invoices/invoice_001.txt"), levers(true));
    assert!(p[1].contains(QUOTED), "{}", p[1]);
    assert!(!p[1].contains("10: Total due"), "{}", p[1]);
    assert!(!p[1].contains("11: Total due"), "{}", p[1]);
}

/// doc_extract with a second `Total due:` line in invoice 1, frozen so.
fn twice_labelled() -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let mdir = dir.path().join("mission");
    support::copy_dir(&support::missions_dir().join("doc_extract"), &mdir);
    let file = mdir.join("fixtures/invoices/invoice_001.txt");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}Total due: 120.00 EUR (last month)\n")).unwrap();
    Harness::load(dir, mdir.join("mission.json"))
}

#[test]
fn an_input_no_check_copies_from_quotes_nothing() {
    // desk_task has no entries_match check.
    let h = Harness::new("desk_task");
    let p = prompts(&h, &read("notes/overview.md"), levers(true));
    assert!(!p[1].contains("labelled_lines"));
}
