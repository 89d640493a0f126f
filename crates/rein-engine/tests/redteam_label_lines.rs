#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of the `label-lines` lever: inputs where the quoted lines could differ from what
//! the judge reads (normalisation, BOM, CRLF, lookalike labels), what the model was shown
//! (a clipped or replayed result), or where the lever could blow up (odd bytes, many labels).

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{begin_mission_run, Agent, AgentOptions, Levers, RunEnv, WorkspaceWorld};
use rein_engine::checks::normalize;
use rein_engine::gate::{AllowAll, Approver, CallExecutor};
use rein_engine::mission::Mission;
use rein_models::Model;
use rein_protocol::{GateOutcome, GateReport, Prompt, ToolCall};
use rein_workspace::{desk_registry, Workspace};
use serde_json::{json, Value};
use support::{line, Harness, PromptRecorder};

const INV1: &str = "invoices/invoice_001.txt";
const INV2: &str = "invoices/invoice_002.txt";
const INVOICES: [&str; 3] = [INV1, INV2, "invoices/invoice_003.txt"];

/// invoice_001.txt as frozen in doc_extract (10 lines).
const ORIGINAL: &str = "INVOICE\nInvoice number: INV-2024-001\nDate: 2024-03-04\nVendor: Northwind Paper Co.\nBill to: Harbor Library\n\nPrinter paper, 10 boxes          120.00\nToner cartridges, 2              180.50\n\nTotal due: 300.50 EUR\n";

const ALL_FOUR: [&str; 4] = [
    "2: Invoice number: INV-2024-001",
    "3: Date: 2024-03-04",
    "4: Vendor: Northwind Paper Co.",
    "10: Total due: 300.50 EUR",
];

fn levers(on: bool) -> Levers {
    Levers {
        label_lines: on,
        ..Levers::DEFAULT
    }
}

fn read(path: &str) -> String {
    line("read_file", json!({ "path": path }))
}

/// doc_extract with invoice 1 (and others) rewritten to `files` bytes and the mission JSON
/// edited by `edit`, frozen so.
fn mission(files: &[(&str, Vec<u8>)], edit: impl FnOnce(&mut Value)) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let mdir = dir.path().join("mission");
    support::copy_dir(&support::missions_dir().join("doc_extract"), &mdir);
    for (path, bytes) in files {
        std::fs::write(mdir.join("fixtures").join(path), bytes).unwrap();
    }
    let file = mdir.join("mission.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    Harness::load(dir, file)
}

fn invoice(text: &str) -> Harness {
    mission(&[(INV1, text.as_bytes().to_vec())], |_| {})
}

/// The `entries_match` check's fields, replaced.
fn set_fields(v: &mut Value, fields: Value) {
    let checks = v["checks"].as_array_mut().unwrap();
    let c = checks
        .iter_mut()
        .find(|c| c["kind"] == "entries_match")
        .unwrap();
    c["fields"] = fields;
    c["unique"] = json!([]);
}

/// Every message of request `i`, joined.
fn text_of(model: &PromptRecorder, i: usize) -> String {
    match &model.requests[i].prompt {
        Prompt::Chat { messages } => messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        Prompt::Raw { text } => text.clone(),
    }
}

/// The part of the prompt after step `n` that shows step `n`'s result.
fn step_result(model: &PromptRecorder, n: usize) -> String {
    let text = text_of(model, n);
    let head = format!("Result of step {n} (");
    let at = text
        .rfind(&head)
        .unwrap_or_else(|| panic!("no {head} in {text}"));
    let rest = &text[at..];
    let end = rest[1..]
        .find("Result of step ")
        .map_or(rest.len(), |e| e + 1);
    rest[..end].to_string()
}

/// The lines `labelled_lines` quotes in a shown result, or None when it has none.
fn quoted(shown: &str) -> Option<Vec<String>> {
    let key = "\"labelled_lines\":";
    let at = shown.find(key)?;
    let mut it = serde_json::Deserializer::from_str(&shown[at + key.len()..]).into_iter::<Value>();
    let v = it
        .next()
        .unwrap()
        .expect("labelled_lines is whole JSON in the prompt");
    Some(
        v["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_string())
            .collect(),
    )
}

/// A one-attempt run of `script` through the real gate; the recorder.
fn run(h: &Harness, script: &str, levers: Levers) -> PromptRecorder {
    let mut model = PromptRecorder::new(script, "redteam_label_lines.jsonl");
    let _ = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.limits.attempts = 1;
    });
    model
}

/// The lines quoted after a whole read of `path` as step 1.
fn quoted_on_read(h: &Harness, path: &str) -> Option<Vec<String>> {
    let m = run(h, &read(path), levers(true));
    quoted(&step_result(&m, 1))
}

/// What the judge reads: the normalised frozen text and the lines that start with `label`.
fn judge_lines(bytes: &[u8], label: &str) -> Vec<(usize, String)> {
    normalize(&String::from_utf8_lossy(bytes))
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with(label))
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect()
}

#[test]
fn baseline_whole_read_quotes_the_four_label_lines() {
    let h = invoice(ORIGINAL);
    assert_eq!(quoted_on_read(&h, INV1).unwrap(), ALL_FOUR);
    // "./" spells the same path.
    assert_eq!(
        quoted_on_read(&h, "./invoices/invoice_001.txt").unwrap(),
        ALL_FOUR
    );
}

/// A second `Total due:` line that only the judge's normalisation makes one: the judge sees
/// two candidates (and reads the first), so neither may be quoted.
#[test]
fn a_lookalike_second_label_line_quotes_neither() {
    let lookalikes = [
        "\u{ff34}otal due: 120.00 EUR",  // full-width T
        "\u{1d413}otal due: 120.00 EUR", // mathematical bold T
        "Total\u{200b} due: 120.00 EUR", // zero-width space inside
        "\u{200b}Total due: 120.00 EUR", // zero-width space before
        "\u{2060}Total due: 120.00 EUR", // word joiner before
        "\u{feff}Total due: 120.00 EUR", // a BOM mid-file
        "Tot\u{ad}al due: 120.00 EUR",   // soft hyphen
        "Total\u{a0}due: 120.00 EUR",    // no-break space
        "Total due\u{ff1a} 120.00 EUR",  // full-width colon
        "Total\u{2002}due: 120.00 EUR",  // en space
    ];
    let cases: Vec<(&str, bool)> = lookalikes
        .iter()
        .flat_map(|f| [(*f, true), (*f, false)])
        .collect();
    // Three cases a run, one an invoice.
    for group in cases.chunks(3) {
        let files: Vec<(&str, Vec<u8>)> = group
            .iter()
            .zip(INVOICES)
            .map(|(&(fake, before), path)| {
                // Before the real line (the judge reads the fake) or after it (the judge reads
                // the real one, but quoting it would still pick among the two).
                let text = if before {
                    ORIGINAL.replacen("\n\nPrinter", &format!("\n{fake}\nPrinter"), 1)
                } else {
                    format!("{ORIGINAL}{fake}\n")
                };
                let judge = judge_lines(text.as_bytes(), "Total due:");
                assert_eq!(judge.len(), 2, "premise: the judge sees two in {text:?}");
                assert_eq!(judge[0].0, if before { 6 } else { 10 });
                (path, text.into_bytes())
            })
            .collect();
        let h = mission(&files, |_| {});
        let script: String = files.iter().map(|(p, _)| read(p)).collect();
        let m = run(&h, &script, levers(true));
        for (n, case) in group.iter().enumerate() {
            let q = quoted(&step_result(&m, n + 1)).unwrap_or_default();
            assert!(
                !q.iter().any(|l| l.contains("due")),
                "{case:?}: quoted {q:?}"
            );
            assert!(q.contains(&ALL_FOUR[0].to_string()), "{case:?}: {q:?}");
        }
    }
}

/// A BOM before line 1: the judge strips it and reads line 1 as a label line.
#[test]
fn a_bom_before_a_label_line_counts_for_the_judge() {
    // The judge's first `Invoice number:` is line 1 (INV-2024-999): line 3 may not be quoted.
    let text = format!("\u{feff}Invoice number: INV-2024-999\n{ORIGINAL}");
    assert_eq!(judge_lines(text.as_bytes(), "Invoice number:").len(), 2);
    let h = invoice(&text);
    let q = quoted_on_read(&h, INV1).unwrap();
    assert!(!q.iter().any(|l| l.contains("Invoice number")), "{q:?}");
    assert_eq!(
        q,
        [
            "4: Date: 2024-03-04",
            "5: Vendor: Northwind Paper Co.",
            "11: Total due: 300.50 EUR"
        ]
    );

    // A BOM before a line no label starts: numbering unchanged.
    let h = invoice(&format!("\u{feff}{ORIGINAL}"));
    assert_eq!(quoted_on_read(&h, INV1).unwrap(), ALL_FOUR);
}

#[test]
fn crlf_and_bom_keep_read_file_s_numbering_and_the_lines_as_shown() {
    let crlf = ORIGINAL.replace('\n', "\r\n");
    for text in [crlf.clone(), format!("\u{feff}{crlf}")] {
        let h = invoice(&text);
        let m = run(&h, &read(INV1), levers(true));
        let shown = step_result(&m, 1);
        assert_eq!(quoted(&shown).unwrap(), ALL_FOUR, "{shown}");
        // read_file's own numbering: line 10 of its content is the total.
        let at = shown.find('{').unwrap();
        let mut it = serde_json::Deserializer::from_str(&shown[at..]).into_iter::<Value>();
        let r = it.next().unwrap().unwrap();
        let content = r["content"].as_str().unwrap();
        assert_eq!(r["total_lines"], 10);
        assert!(content
            .split_inclusive('\n')
            .nth(9)
            .unwrap()
            .starts_with("Total due: 300.50 EUR"));
    }
}

#[test]
fn whitespace_variants_of_a_repeated_label_quote_neither() {
    for other in [
        "\tTotal due: 120.00 EUR",
        "   Total due: 120.00 EUR",
        "\u{3000}Total due: 120.00 EUR",
        "\u{a0}Total due: 120.00 EUR",
        "\u{0b}\u{0c}Total due: 120.00 EUR",
        "Total due: 120.00 EUR",
    ] {
        let text = ORIGINAL.replacen("\n\nPrinter", &format!("\n{other}\nPrinter"), 1);
        let q = quoted_on_read(&invoice(&text), INV1).unwrap_or_default();
        assert!(!q.iter().any(|l| l.contains("due")), "{other:?}: {q:?}");
    }
}

#[test]
fn a_label_that_is_a_prefix_of_another() {
    // `Total:` is not a prefix of `Total due:`: each starts its own line.
    let text = ORIGINAL.replacen("\n\nPrinter", "\nTotal: 5.00 EUR\nPrinter", 1);
    let h = mission(&[(INV1, text.into_bytes())], |v| {
        set_fields(
            v,
            json!({"a": {"label": "Total:"}, "b": {"label": "Total due:"}}),
        )
    });
    assert_eq!(
        quoted_on_read(&h, INV1).unwrap(),
        ["6: Total: 5.00 EUR", "10: Total due: 300.50 EUR"]
    );

    // `Total` starts both lines: not quoted for it; `Total due:` still quoted, once.
    let text = ORIGINAL.replacen("\n\nPrinter", "\nTotal: 5.00 EUR\nPrinter", 1);
    let h = mission(&[(INV1, text.into_bytes())], |v| {
        set_fields(
            v,
            json!({"a": {"label": "Total"}, "b": {"label": "Total due:"}}),
        )
    });
    assert_eq!(
        quoted_on_read(&h, INV1).unwrap(),
        ["10: Total due: 300.50 EUR"]
    );

    // `Total` and `Total due:` both start only line 10: quoted once.
    let h = mission(&[], |v| {
        set_fields(
            v,
            json!({"a": {"label": "Total"}, "b": {"label": "Total due:"}}),
        )
    });
    assert_eq!(
        quoted_on_read(&h, INV1).unwrap(),
        ["10: Total due: 300.50 EUR"]
    );
}

#[test]
fn two_checks_keep_their_labels_to_their_own_sources() {
    let h = mission(&[], |v| {
        v["checks"].as_array_mut().unwrap().push(json!({
            "id": "bill-to", "kind": "entries_match", "path": "out/fields.json",
            "array": "/bill", "sources": [INV1],
            "fields": {"bill_to": {"label": "Bill to:"}, "again": {"label": "Total due:"}}
        }));
    });
    assert_eq!(
        quoted_on_read(&h, INV1).unwrap(),
        [
            ALL_FOUR[0],
            ALL_FOUR[1],
            ALL_FOUR[2],
            "5: Bill to: Harbor Library",
            ALL_FOUR[3]
        ]
    );
    // invoice_002 is no source of the second check: its `Bill to:` line is not quoted.
    let q = quoted_on_read(&h, INV2).unwrap();
    assert!(!q.iter().any(|l| l.contains("Bill to")), "{q:?}");
    assert!(
        q.iter().any(|l| l.contains("Invoice number: INV-2024-002")),
        "{q:?}"
    );
}

/// Labels the judge can never find (its text is normalised, its label is not): a raw match
/// is not the line the judge reads.
#[test]
fn a_label_the_judge_cannot_match_is_not_quoted() {
    // Full-width colon in the label and in the file: NFKC folds the file's, not the label.
    let text = ORIGINAL.replace("Total due:", "Total due\u{ff1a}");
    let h = mission(&[(INV1, text.clone().into_bytes())], |v| {
        set_fields(
            v,
            json!({"a": {"label": "Invoice number:"}, "b": {"label": "Total due\u{ff1a}"}}),
        )
    });
    assert!(judge_lines(text.as_bytes(), "Total due\u{ff1a}").is_empty());
    assert_eq!(quoted_on_read(&h, INV1).unwrap(), [ALL_FOUR[0]]);

    // An invisible label passes the contract's blank test; the judge never sees it.
    let text = ORIGINAL.replace("Vendor:", "\u{200b}Vendor:");
    let h = mission(&[(INV1, text.into_bytes())], |v| {
        set_fields(
            v,
            json!({"a": {"label": "Invoice number:"}, "b": {"label": "\u{200b}"}}),
        )
    });
    assert_eq!(quoted_on_read(&h, INV1).unwrap(), [ALL_FOUR[0]]);
}

#[test]
fn empty_and_blank_labels_are_refused_by_the_contract() {
    for label in ["", " ", "\t\n"] {
        let dir = tempfile::tempdir().unwrap();
        let mdir = dir.path().join("mission");
        support::copy_dir(&support::missions_dir().join("doc_extract"), &mdir);
        let file = mdir.join("mission.json");
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        set_fields(&mut v, json!({"a": {"label": label}}));
        std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        assert!(Mission::load(&file).is_err(), "label {label:?} accepted");
    }
}

#[test]
fn part_reads_quote_nothing() {
    let h = invoice(ORIGINAL);
    let script = [
        json!({"path": INV1, "start_line": 2}),
        json!({"path": INV1, "start_line": 1, "end_line": 9}),
        json!({"path": INV1, "end_line": 2}),
        json!({"path": INV1, "start_line": 1, "end_line": 999}),
    ]
    .iter()
    .map(|p| line("read_file", p.clone()))
    .collect::<String>();
    let m = run(&h, &script, levers(true));
    for n in 1..=3 {
        assert_eq!(quoted(&step_result(&m, n)), None, "step {n}");
    }
    // 1..999 of a 10-line file is the whole file.
    assert_eq!(quoted(&step_result(&m, 4)).unwrap(), ALL_FOUR);
}

/// A file read whole by read_file (under its 12,000-character cap) but longer than what the
/// prompt shows of a result, so Rein cuts it at a line: quoting its last label line would show
/// a line the model was not shown in that read.
#[test]
fn a_result_the_prompt_clips_quotes_nothing_beyond_what_is_shown() {
    let filler: String = (0..150)
        .map(|i| format!("Item {i:03}, assorted stationery and office supplies     1.00\n"))
        .collect();
    let text = ORIGINAL.replacen("\n\nPrinter", &format!("\n{filler}Printer"), 1);
    assert!(text.chars().count() < 12_000 && text.chars().count() > 6_000);
    let h = invoice(&text);
    let m = run(&h, &read(INV1), levers(true));
    let shown = step_result(&m, 1);
    // Rein cuts the result at a line, says so, and quotes no line past the cut.
    assert!(shown.contains("Cut after line"), "premise: cut: {shown}");
    assert!(!shown.contains("more characters not shown"));
    assert!(shown.contains("\"truncated\":true"));
    assert!(
        !shown.contains("300.50"),
        "the total line is past the clip, yet shown: {}",
        &shown[..shown.len().min(600)]
    );

    // Past read_file's own cap: truncated, nothing quoted.
    let filler: String = (0..400)
        .map(|i| format!("Item {i:03}, assorted stationery and office supplies     1.00\n"))
        .collect();
    let text = ORIGINAL.replacen("\n\nPrinter", &format!("\n{filler}Printer"), 1);
    let h = invoice(&text);
    let m = run(&h, &read(INV1), levers(true));
    let shown = step_result(&m, 1);
    assert!(quoted(&shown).is_none());
    assert!(!shown.contains("300.50"));
}

#[test]
fn odd_bytes_empty_and_huge_files_do_not_break_it() {
    // Not UTF-8: read_file shows it as binary; nothing quoted, no panic.
    let mut bad = ORIGINAL.as_bytes().to_vec();
    bad.extend_from_slice(b"Total due: \xff\xfe 1.00 EUR\n");
    let h = mission(&[(INV1, bad)], |_| {});
    let m = run(&h, &read(INV1), levers(true));
    assert!(quoted(&step_result(&m, 1)).is_none());

    // Empty input.
    let h = mission(&[(INV1, Vec::new())], |_| {});
    let m = run(&h, &read(INV1), levers(true));
    assert!(quoted(&step_result(&m, 1)).is_none());

    // Only a label line, no newline at the end.
    let h = invoice("Total due: 300.50 EUR");
    assert_eq!(
        quoted_on_read(&h, INV1).unwrap(),
        ["1: Total due: 300.50 EUR"]
    );

    // Over read_file's 8 MiB load cap: file_truncated, nothing quoted.
    let mut huge = ORIGINAL.as_bytes().to_vec();
    huge.resize(8 * 1024 * 1024 + 10, b'\n');
    let h = mission(&[(INV1, huge)], |_| {});
    let m = run(&h, &read(INV1), levers(true));
    assert!(quoted(&step_result(&m, 1)).is_none());
}

#[test]
fn very_many_labels_each_one_line() {
    let n = 60;
    let text: String = (0..n).map(|i| format!("F{i:02}: v{i}\n")).collect();
    let fields: serde_json::Map<String, Value> = (0..n)
        .map(|i| (format!("f{i:02}"), json!({"label": format!("F{i:02}:")})))
        .collect();
    let h = mission(&[(INV1, text.into_bytes())], |v| {
        set_fields(v, Value::Object(fields))
    });
    let want: Vec<String> = (0..n)
        .map(|i| format!("{}: F{i:02}: v{i}", i + 1))
        .collect();
    assert_eq!(quoted_on_read(&h, INV1).unwrap(), want);
}

#[test]
fn lever_off_shows_nothing_and_changes_nothing() {
    let text = format!("\u{feff}{}", ORIGINAL.replace('\n', "\r\n"));
    let script = read(INV1) + &read(INV2) + &read("invoices/invoice_003.txt");
    let off = run(&invoice(&text), &script, levers(false));
    // Off, a read's result is what it is with every lever off but the typed writer the
    // progress note names.
    let plain = run(
        &invoice(&text),
        &script,
        Levers::from_settings(&["all=off", "write-json=on"]).unwrap(),
    );
    const {
        assert!(
            Levers::DEFAULT.label_lines,
            "on by default since 3 December"
        )
    };
    for n in 1..=3 {
        let a = step_result(&off, n);
        assert!(!a.contains("labelled_lines"), "{a}");
        assert_eq!(a, step_result(&plain, n));
    }
    // On, the result is the same apart from the quote put first.
    let on = run(&invoice(&text), &script, levers(true));
    for n in 1..=3 {
        let on = step_result(&on, n);
        let off = step_result(&off, n);
        let parse = |s: &str| -> Value {
            let at = s.find('{').unwrap();
            let mut it = serde_json::Deserializer::from_str(&s[at..]).into_iter::<Value>();
            it.next().unwrap().unwrap()
        };
        let mut v = parse(&on);
        assert!(v
            .as_object_mut()
            .unwrap()
            .remove("labelled_lines")
            .is_some());
        assert_eq!(v, parse(&off));
    }
}

/// Runs `script` with the lever on through the registry directly, with each read's report
/// passed through `doctor` before the run sees it.
fn run_doctored(
    h: &Harness,
    script: &str,
    doctor: impl FnMut(&ToolCall, GateReport) -> GateReport,
) -> PromptRecorder {
    struct Doctored<F> {
        inner: support::DirectExecutor,
        doctor: F,
    }
    impl<F: FnMut(&ToolCall, GateReport) -> GateReport> CallExecutor for Doctored<F> {
        fn submit(&mut self, call: &ToolCall, approver: &mut dyn Approver) -> GateReport {
            let r = self.inner.submit(call, approver);
            (self.doctor)(call, r)
        }
    }
    let mut model = PromptRecorder::new(script, "doctored.jsonl");
    let mut exec = Doctored {
        inner: h.executor(),
        doctor,
    };
    let registry = desk_registry();
    let ws = Workspace::open(&h.workspace).unwrap();
    let world = WorkspaceWorld::new(&ws);
    let run = begin_mission_run(
        &h.journal,
        &h.contract,
        &h.workspace.display().to_string(),
        model.identity(),
        json!({}),
    )
    .unwrap();
    let env = RunEnv {
        contract: &h.contract,
        mission_file: &h.mission_file,
        world: &world,
        registry: &registry,
        input_hashes: &h.hashes,
        journal: &h.journal,
        run,
        workspace_label: h.workspace.display().to_string(),
    };
    let mut options = AgentOptions::for_mission(&h.contract, model.identity());
    options.levers = levers(true);
    options.limits.attempts = 1;
    let mut approver = AllowAll;
    let agent = Agent::new(env, &mut model, &mut exec, &mut approver).with_options(options);
    let _ = agent.run(&mut |_| {});
    model
}

#[test]
fn denied_failed_and_stale_reads_get_nothing() {
    let h = invoice(ORIGINAL);
    // The executor's own run quotes (the doctoring is what changes the outcome).
    let m = run_doctored(&h, &read(INV1), |_, r| r);
    assert_eq!(quoted(&step_result(&m, 1)).unwrap(), ALL_FOUR);

    // A whole-looking result under an outcome that did not run (an approval-required one
    // ends the run before the model is asked again).
    for outcome in [
        GateOutcome::Denied,
        GateOutcome::Invalid,
        GateOutcome::BudgetExhausted,
        GateOutcome::IdConflict,
    ] {
        let m = run_doctored(&h, &read(INV1), |_, mut r| {
            r.outcome = outcome;
            r
        });
        let shown = step_result(&m, 1);
        assert!(quoted(&shown).is_none(), "{outcome:?}: {shown}");
    }

    // A replayed result recorded when the file said otherwise: the lever may not quote the
    // file as it is now against the content the model is shown.
    let m = run_doctored(&h, &read(INV1), |_, mut r| {
        r.outcome = GateOutcome::Replayed;
        let c = r.result["content"]
            .as_str()
            .unwrap()
            .replace("300.50", "999.00");
        r.result["content"] = json!(c);
        r
    });
    let shown = step_result(&m, 1);
    assert!(shown.contains("999.00"), "premise: {shown}");
    assert!(
        !shown.contains("300.50"),
        "quoted against what was shown: {shown}"
    );

    // The input missing from the workspace: the read fails.
    let h = invoice(ORIGINAL);
    std::fs::remove_file(h.workspace.join(INV1)).unwrap();
    let m = run(&h, &read(INV1), levers(true));
    assert!(quoted(&step_result(&m, 1)).is_none());

    // Another tool that shows the same lines.
    let h = invoice(ORIGINAL);
    let m = run(
        &h,
        &line(
            "search_text",
            json!({"pattern": "Total due", "path": "invoices"}),
        ),
        levers(true),
    );
    assert!(quoted(&step_result(&m, 1)).is_none());
}

#[test]
fn an_input_changed_since_frozen_then_restored() {
    let h = invoice(ORIGINAL);
    let file = h.workspace.join(INV1);
    std::fs::write(&file, ORIGINAL.replace("300.50", "300.51")).unwrap();
    assert!(quoted_on_read(&h, INV1).is_none());
    // Restored to its frozen bytes: quoted again (it is what the read shows).
    std::fs::write(&file, ORIGINAL).unwrap();
    assert_eq!(quoted_on_read(&h, INV1).unwrap(), ALL_FOUR);
}
