#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `source-lines` lever on doc_extract: after a failed verdict the next attempt's feedback
//! quotes the input lines the failed checks compared against (the `Total due:` and `Vendor:`
//! lines), in the plain retry and in a `monotone-attempts` retry; never the expected sum, never
//! before a verdict, and nothing with the lever off.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;

use support::{doc_extract_attempt, Harness, PromptRecorder};

const TOTAL_LINE: &str = "invoices/invoice_001.txt line 10: Total due: 300.50 EUR";
const VENDOR_LINE: &str = "invoices/invoice_002.txt line 4: Vendor: Bayside Cleaning Ltd";

fn run(levers: Levers) -> (String, PromptRecorder) {
    let h = Harness::new("doc_extract");
    let mut model = PromptRecorder::new(
        &(doc_extract_attempt(false) + &doc_extract_attempt(true)),
        "source_lines.jsonl",
    );
    let (out, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.limits.attempts = 2;
    });
    let end = if out.passed() {
        "passed".to_string()
    } else {
        out.reason()
    };
    (end, model)
}

/// The first prompt of attempt 2: calls 0-5 are attempt 1 (three reads, write, read back,
/// finish).
const RETRY: usize = 6;

#[test]
fn the_retry_quotes_the_lines_the_failed_checks_compare_against() {
    let (passed, model) = run(Levers {
        source_lines: true,
        ..Levers::DEFAULT
    });
    assert_eq!(passed, "passed", "attempt 2 writes the right document");
    let retry = model.prompt(RETRY);
    assert!(retry.contains("these checks failed"), "{retry}");
    assert!(retry.contains(TOTAL_LINE), "{retry}");
    assert!(retry.contains(VENDOR_LINE), "{retry}");
    assert!(
        retry.contains("invoices/invoice_003.txt line 10: Total due: 304.30 EUR"),
        "the grand total's lines are quoted too: {retry}"
    );
    // Each line once, though two checks quote invoice 1's total line.
    assert_eq!(retry.matches(TOTAL_LINE).count(), 1, "{retry}");
    // Never the expected sum before the model writes it itself; no quote before a verdict.
    for i in 0..=RETRY {
        assert!(
            !model.prompt(i).contains("1054.8"),
            "prompt {i} holds the expected sum"
        );
    }
    for i in 0..RETRY {
        assert!(!model.prompt(i).contains(TOTAL_LINE), "prompt {i}");
    }
}

#[test]
fn a_monotone_retry_quotes_them_as_well() {
    let (passed, model) = run(Levers {
        source_lines: true,
        monotone_attempts: true,
        ..Levers::DEFAULT
    });
    assert_eq!(passed, "passed");
    let retry = model.prompt(RETRY);
    assert!(retry.contains("These checks fail"), "{retry}");
    assert!(retry.contains(TOTAL_LINE), "{retry}");
    assert!(retry.contains(VENDOR_LINE), "{retry}");
}

#[test]
fn without_the_lever_no_line_is_quoted() {
    for monotone in [false, true] {
        let (passed, model) = run(Levers {
            monotone_attempts: monotone,
            ..Levers::DEFAULT
        });
        assert_eq!(passed, "passed");
        let retry = model.prompt(RETRY);
        assert!(retry.contains("entries-match"), "{retry}");
        assert!(!retry.contains("line 10: Total due"), "{retry}");
        assert!(!retry.contains("quoted from the files"), "{retry}");
    }
}
