//! Lever `label-lines`: a whole read of an input that an `entries_match` check copies fields
//! from carries, first, the lines of that input that start with the fields' labels, quoted as
//! they are with their line numbers. Input lines the model has just been shown, never a value
//! computed from them. The 1.5B copied invoice 1's first line amount (120.00) as its total in
//! four of five doc_extract runs, where the line that starts with `Total due:` says 300.50.
//!
//! A label that starts several lines of the file is not quoted at all: which of them the judge
//! reads would tell the answer.

use rein_protocol::GateReport;
use serde_json::{json, Value};

use super::prompt::MAX_RESULT_CHARS;
use crate::checks::{normalize, same_path, CheckSpec, World};
use crate::mission::{sha256_hex, FrozenContract};

/// Adds `labelled_lines` to the result of a `read_file` that ran and read `path` whole, when
/// `path` is a frozen input (still its frozen bytes) an `entries_match` check copies from and
/// at least one of that check's labels starts exactly one of its lines.
pub fn add_label_lines(
    world: &dyn World,
    contract: &FrozenContract,
    tool: &str,
    whole: bool,
    report: &mut GateReport,
) {
    if tool != "read_file"
        || !whole
        || !report.outcome.ran()
        || report.result.get("labelled_lines").is_some()
    {
        return;
    }
    let Some(path) = report.result.get("path").and_then(Value::as_str) else {
        return;
    };
    let labels: Vec<&str> = contract
        .mission
        .checks
        .iter()
        .filter_map(|c| match &c.spec {
            CheckSpec::EntriesMatch {
                sources, fields, ..
            } if sources.iter().any(|s| same_path(s, path)) => Some(fields),
            _ => None,
        })
        .flat_map(|fields| fields.values().map(|rule| rule.label.as_str()))
        .collect();
    if labels.is_empty() {
        return;
    }
    let Some(frozen) = contract.input_hash(path) else {
        return;
    };
    let Ok(Some(bytes)) = world.read(path) else {
        return;
    };
    if sha256_hex(&bytes) != frozen {
        return;
    }
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return;
    };
    // Only lines of the text this result shows (a replayed result carries the content
    // recorded back then).
    if report.result.get("content").and_then(Value::as_str) != Some(text) {
        return;
    }
    let lines = labelled_lines(text, &labels);
    if lines.is_empty() {
        return;
    }
    let quoted = json!({
        "note": "The lines of this file that start with the labels the task's fields are copied from, as they are: copy each value from the rest of its label's line.",
        "lines": lines,
    });
    // First in the result, like the table facts; nothing when the prompt would clip the
    // result, since a quoted line could lie past what is shown.
    if let Value::Object(fields) = &report.result {
        let mut with = serde_json::Map::new();
        with.insert("labelled_lines".to_string(), quoted);
        with.extend(fields.clone());
        let with = Value::Object(with);
        if with.to_string().chars().count() <= MAX_RESULT_CHARS {
            report.result = with;
        }
    }
}

/// `N: line` for each line of `text` that is the only one to start (after blanks) with one of
/// `labels`, in file order, each line once. The judge reads the normalised text (BOM and
/// invisible characters removed, NFKC): a label counts only when it starts exactly one line
/// there too, the same one.
fn labelled_lines(text: &str, labels: &[&str]) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let judged = normalize(text);
    let judged: Vec<&str> = judged.lines().collect();
    if judged.len() != lines.len() {
        return Vec::new();
    }
    let only = |lines: &[&str], label: &str| {
        let mut hits = (0..lines.len()).filter(|&i| lines[i].trim_start().starts_with(label));
        match (hits.next(), hits.next()) {
            (Some(i), None) => Some(i),
            _ => None,
        }
    };
    let mut numbers: Vec<usize> = labels
        .iter()
        .filter_map(|label| {
            let i = only(&lines, label)?;
            (only(&judged, label) == Some(i)).then_some(i)
        })
        .collect();
    numbers.sort_unstable();
    numbers.dedup();
    numbers
        .into_iter()
        .map(|i| format!("{}: {}", i + 1, lines[i].trim_end()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const INVOICE: &str = "INVOICE\nInvoice number: INV-2024-001\nVendor: Northwind Paper Co.\n\nPrinter paper, 10 boxes          120.00\n\nTotal due: 300.50 EUR  \n";

    #[test]
    fn each_label_s_one_line_is_quoted_in_file_order() {
        assert_eq!(
            labelled_lines(INVOICE, &["Total due:", "Vendor:", "Invoice number:"]),
            vec![
                "2: Invoice number: INV-2024-001",
                "3: Vendor: Northwind Paper Co.",
                "7: Total due: 300.50 EUR",
            ]
        );
    }

    #[test]
    fn a_label_on_several_lines_or_on_none_is_not_quoted() {
        let text = "Total: 10\nnote\n  Total: 12\nDate: 2024-01-02\n";
        assert_eq!(
            labelled_lines(text, &["Total:", "Date:", "Paid:"]),
            vec!["4: Date: 2024-01-02"]
        );
        // Two labels of one line quote it once.
        assert_eq!(
            labelled_lines("Date: 1\n", &["Date:", "Date"]),
            vec!["1: Date: 1"]
        );
        assert!(labelled_lines("", &["Date:"]).is_empty());
        // A label inside a line is not its start.
        assert!(labelled_lines("Due Date: 5\n", &["Date:"]).is_empty());
    }
}
