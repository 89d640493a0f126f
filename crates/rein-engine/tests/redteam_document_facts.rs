#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of the `document-facts` lever on doc_extract: every figure it gives must be true of
//! the deliverable as it is on disk, nothing comes from the inputs or the contract, nothing is
//! added to a read, a refused, denied or invalid write, a write of another file or a memory
//! task, and a large or wide document gets bounded facts in bounded time without pushing the
//! write's own result (its change id) out of the clipped message.

#[path = "agent_support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rein_engine::agent::{AgentOptions, Levers, RunOutcome, MAX_RESULT_CHARS};
use rein_engine::gate::{AllowAll, ApprovalDecision, ApprovalRequest, Approver};
use rein_engine::memory::{run_memory, start_sandbox, MemoryRunEnv};
use rein_engine::mission::Mission;
use rein_journal::Journal;
use serde_json::{json, Value};
use support::{line, Harness, PromptRecorder};

const FIELDS: &str = "out/fields.json";

fn reads() -> String {
    ["invoice_001.txt", "invoice_002.txt", "invoice_003.txt"]
        .iter()
        .map(|f| line("read_file", json!({ "path": format!("invoices/{f}") })))
        .collect()
}

fn finish() -> String {
    line("finish", json!({"summary": "Done."}))
}

fn invoices(totals: [&str; 3], extra: &str) -> String {
    format!(
        r#"{{"invoices": [
  {{"invoice_number": "INV-2024-001", "date": "2024-03-04", "vendor": "Northwind Paper Co.", "total": {}}},
  {{"invoice_number": "INV-2024-002", "date": "2024-03-11", "vendor": "Bayside Cleaning Ltd", "total": {}}},
  {{"invoice_number": "INV-2024-003", "date": "2024-03-20", "vendor": "Quayside Books", "total": {}}}{extra}
], "grand_total": 954.80}}"#,
        totals[0], totals[1], totals[2]
    )
}

/// One action step as the journal recorded it: the tool, its path, outcome and result (the
/// result clipped at MAX_RESULT_CHARS exactly as the model was shown it).
struct Recorded {
    action: String,
    path: Option<String>,
    outcome: String,
    result: String,
}

fn recorded(h: &Harness, out: &RunOutcome) -> Vec<Recorded> {
    h.journal
        .run_trace(out.run)
        .unwrap()
        .steps
        .into_iter()
        .filter_map(|s| {
            let d = &s.step.detail;
            Some(Recorded {
                action: s.step.action.clone()?,
                path: d["parameters"]["path"].as_str().map(str::to_string),
                outcome: d["outcome"].as_str().unwrap_or_default().to_string(),
                result: d["result"].as_str().unwrap_or_default().to_string(),
            })
        })
        .collect()
}

fn run_with(
    h: &Harness,
    script: &str,
    approver: &mut dyn Approver,
) -> (RunOutcome, Vec<Recorded>, PromptRecorder) {
    let mut model = PromptRecorder::new(script, "redteam_document_facts.jsonl");
    let (out, _) = h.run_gated(&mut model, approver, |o| {
        o.levers = Levers {
            document_facts: true,
            ..Levers::DEFAULT
        };
        o.limits.attempts = 1;
    });
    let steps = recorded(h, &out);
    (out, steps, model)
}

fn run(script: &str) -> (Harness, Vec<Recorded>) {
    let h = Harness::new("doc_extract");
    let (_, steps, _) = run_with(&h, script, &mut AllowAll);
    (h, steps)
}

/// The document_facts of a recorded result that is not clipped.
fn facts(r: &Recorded) -> Option<Value> {
    let v: Value = serde_json::from_str(&r.result).expect("an unclipped result");
    v.get("document_facts").cloned()
}

fn step<'r>(steps: &'r [Recorded], action: &str, path: &str) -> Vec<&'r Recorded> {
    steps
        .iter()
        .filter(|s| s.action == action && s.path.as_deref() == Some(path))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// (1) Every figure is true of the document on disk.
// ---------------------------------------------------------------------------------------------

#[test]
fn an_entry_labelled_total_is_not_left_out_of_a_sum() {
    // The model adds a fourth entry for the total: the field's values sum to 2109.60. The table
    // code leaves a row labelled Total out of its figures, which made the facts say the field
    // sums to 1054.8 over four entries: the model's own total "confirmed" by a false figure.
    let extra = r#",
  {"invoice_number": "Total", "date": "2024-03-31", "vendor": "All", "total": 1054.80}"#;
    let doc = invoices(["300.50", "450.00", "304.30"], extra);
    let (h, steps) =
        run(&(reads() + &line("create_file", json!({"path": FIELDS, "content": doc})) + &finish()));
    let write = step(&steps, "create_file", FIELDS)[0];
    let f = facts(write).expect("facts");
    let a = &f["arrays"][0];
    assert_eq!(a["entries"], 4, "{f}");
    let sum = a["sums"]["total"].as_str();
    assert!(sum.is_none() || sum == Some("2109.6"), "a false sum: {f}");
    let on_disk: Value =
        serde_json::from_slice(&std::fs::read(h.workspace.join(FIELDS)).unwrap()).unwrap();
    assert_eq!(on_disk["invoices"].as_array().unwrap().len(), 4);
}

#[test]
fn a_number_serde_would_round_is_not_summed_as_its_rounded_value() {
    // On disk the totals are 300.50000000000000001 and 1.0000000000000001: serde_json reads the
    // nearest f64 (300.5, 1.0) and the facts summed those, a figure the document does not hold.
    let doc = invoices(
        ["300.50000000000000001", "450.00", "1.0000000000000001"],
        "",
    );
    let (_, steps) =
        run(&(reads() + &line("create_file", json!({"path": FIELDS, "content": doc})) + &finish()));
    let f = facts(step(&steps, "create_file", FIELDS)[0]).expect("facts");
    let sum = f["arrays"][0]["sums"]["total"].as_str();
    assert!(
        sum.is_none() || sum == Some("751.50000000000000011"),
        "a rounded sum: {f}"
    );
    assert_eq!(f["arrays"][0]["entries"], 3);
}

#[test]
fn exact_decimals_mixed_fields_key_order_and_big_integers() {
    // 0.1 + 0.2 is 0.3; keys in another order or missing; a field of numbers and strings, nulls,
    // bools or nested values gets no sum; u64::MAX twice is exact. (An integer past 15 digits
    // in an entry makes the table code refuse that entry's fractional numbers: an omission.)
    let doc = r#"{"rows": [
      {"a": 0.1, "b": 1, "c": "x", "e": 1, "f": 1, "g": 1, "h": -0},
      {"a": 0.2, "c": 2, "b": null, "e": true, "f": [1], "g": {"v": 1}, "h": -0.0},
      {"a": 0.00, "z": 5}
    ], "big": [{"d": 18446744073709551615}, {"d": 18446744073709551615}], "grand_total": 1}"#;
    let (_, steps) =
        run(&(reads() + &line("create_file", json!({"path": FIELDS, "content": doc})) + &finish()));
    let f = facts(step(&steps, "create_file", FIELDS)[0]).expect("facts");
    let a = &f["arrays"][0];
    assert_eq!(a["entries"], 3, "{f}");
    assert_eq!(a["sums"]["a"], "0.3", "{f}");
    assert_eq!(f["arrays"][1]["sums"]["d"], "36893488147419103230", "{f}");
    assert_eq!(a["sums"]["z"], "5", "{f}");
    for mixed in ["b", "c", "e", "f", "g"] {
        assert!(a["sums"].get(mixed).is_none(), "{mixed}: {f}");
    }
    if let Some(h) = a["sums"].get("h") {
        assert!(h == "0" || h == "-0", "{f}");
    }
}

#[test]
fn odd_keys_and_duplicate_keys_are_described_as_serde_reads_them() {
    // A key with a quote, a newline and a NUL, and a key written twice (the last value counts, as
    // for every JSON reader Rein's checks use).
    let doc = r#"{"rows": [{"k\"\n\u0000": 1, "n": 1, "n": 5}, {"k\"\n\u0000": 2, "n": 1}]}"#;
    let (_, steps) =
        run(&(reads() + &line("create_file", json!({"path": FIELDS, "content": doc})) + &finish()));
    let f = facts(step(&steps, "create_file", FIELDS)[0]).expect("facts");
    assert_eq!(f["arrays"][0]["sums"]["k\"\n\u{0}"], "3", "{f}");
    assert_eq!(f["arrays"][0]["sums"]["n"], "6", "{f}");
}

// ---------------------------------------------------------------------------------------------
// (2) Nothing from the inputs or the contract; nothing for other calls.
// ---------------------------------------------------------------------------------------------

#[test]
fn path_spellings_of_the_deliverable_get_the_facts_of_the_file_and_other_files_none() {
    let first = invoices(["1", "2", "3"], "");
    let second = invoices(["10", "20", "30"], "");
    let script = reads()
        + &line(
            "create_file",
            json!({"path": "./out/fields.json", "content": first}),
        )
        + &line(
            "replace_file",
            json!({"path": "out//fields.json", "content": second}),
        )
        + &line(
            "create_file",
            json!({"path": "out/Fields.json", "content": second}),
        )
        + &line(
            "create_file",
            json!({"path": "out/fields.json.bak", "content": second}),
        )
        + &line(
            "create_file",
            json!({"path": "out/fields.jsonl", "content": second}),
        )
        + &line("read_file", json!({"path": FIELDS}))
        + &finish();
    let (_, steps) = run(&script);
    let f1 = facts(step(&steps, "create_file", "./out/fields.json")[0]).expect("facts");
    assert_eq!(f1["arrays"][0]["sums"]["total"], "6", "{f1}");
    let f2 = facts(step(&steps, "replace_file", "out//fields.json")[0]).expect("facts");
    assert_eq!(f2["arrays"][0]["sums"]["total"], "60", "{f2}");
    for other in ["out/Fields.json", "out/fields.json.bak", "out/fields.jsonl"] {
        let s = step(&steps, "create_file", other)[0];
        assert_eq!(s.outcome, "executed", "{other}");
        assert!(
            !s.result.contains("document_facts"),
            "{other}: {}",
            s.result
        );
    }
    let read = step(&steps, "read_file", FIELDS)[0];
    assert!(!read.result.contains("document_facts"), "{}", read.result);
    // Nothing from the inputs or the contract: the right totals and grand total appear nowhere.
    for s in &steps {
        if let Some(f) = s
            .result
            .contains("document_facts")
            .then(|| facts(s))
            .flatten()
        {
            let text = f.to_string();
            assert!(
                !text.contains("1054.8") && !text.contains("954.8"),
                "{text}"
            );
        }
    }
}

/// Denies the first change it is asked about, allows the rest.
struct DenyFirst(bool);

impl Approver for DenyFirst {
    fn decide(&mut self, _: &ApprovalRequest) -> ApprovalDecision {
        if std::mem::replace(&mut self.0, true) {
            ApprovalDecision::AllowOnce
        } else {
            ApprovalDecision::Deny {
                reason: "no".into(),
            }
        }
    }
}

#[test]
fn a_write_the_person_declines_carries_no_facts() {
    let doc = invoices(["1", "2", "3"], "");
    let script =
        reads() + &line("create_file", json!({"path": FIELDS, "content": doc})) + &finish();
    let h = Harness::new("doc_extract");
    let (_, steps, _) = run_with(&h, &script, &mut DenyFirst(false));
    let write = step(&steps, "create_file", FIELDS)[0];
    assert_eq!(write.outcome, "approval-required");
    assert!(!write.result.contains("document_facts"), "{}", write.result);
}

#[test]
fn refused_and_invalid_writes_and_invalid_edits_carry_no_facts() {
    let doc = invoices(["1", "2", "3"], "");
    let script = reads()
        // Invalid: no content.
        + &line("create_file", json!({"path": FIELDS}))
        // Executed.
        + &line("create_file", json!({"path": FIELDS, "content": doc}))
        // Refused: the file exists.
        + &line("create_file", json!({"path": FIELDS, "content": invoices(["7", "7", "7"], "")}))
        // Refused: old_text not found.
        + &line("edit_file", json!({"path": FIELDS, "old_text": "no such text", "new_text": "x"}))
        // Executed, and leaves the file invalid JSON.
        + &line("edit_file", json!({"path": FIELDS, "old_text": "\"grand_total\"", "new_text": "grand_total"}))
        // Executed, valid again: facts of the new document.
        + &line("edit_file", json!({"path": FIELDS, "old_text": "grand_total", "new_text": "\"grand_total\""}))
        + &line("edit_file", json!({"path": FIELDS, "old_text": "\"total\": 3", "new_text": "\"total\": 300"}))
        + &finish();
    let h = Harness::new("doc_extract");
    let (_, steps, _) = run_with(&h, &script, &mut AllowAll);
    let creates = step(&steps, "create_file", FIELDS);
    let edits = step(&steps, "edit_file", FIELDS);
    let outcomes: Vec<&str> = creates
        .iter()
        .chain(&edits)
        .map(|s| s.outcome.as_str())
        .collect();
    assert_eq!(
        outcomes,
        ["invalid", "executed", "invalid", "invalid", "executed", "executed", "executed"],
        "{outcomes:?}"
    );
    let with_facts: Vec<bool> = creates
        .iter()
        .chain(&edits)
        .map(|s| s.result.contains("document_facts"))
        .collect();
    // Only the executed writes that leave valid JSON.
    assert_eq!(
        with_facts,
        [false, true, false, false, false, true, true],
        "{outcomes:?}"
    );
    assert_eq!(
        facts(creates[1]).unwrap()["arrays"][0]["sums"]["total"],
        "6"
    );
    assert_eq!(facts(edits[2]).unwrap()["arrays"][0]["sums"]["total"], "6");
    assert_eq!(
        facts(edits[3]).unwrap()["arrays"][0]["sums"]["total"],
        "303"
    );
}

#[test]
fn a_memory_sandbox_task_gets_no_facts() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("journal.db")).unwrap();
    let mdir = dir.path().join("m");
    std::fs::create_dir(&mdir).unwrap();
    let m = json!({
        "id": "mem",
        "mode": "automatic",
        "prompt": "Write the rows to out.json.",
        "required_artifact": "out.json",
        "tools": ["create_file", "read_file", "list_files", "delete_file", "set_variable",
                  "get_variable", "final_answer"],
        "checks": [{"id": "a", "kind": "content_matches", "path": "out.json", "pattern": "rows"}],
        "budgets": {"max_turns": 10, "attempts_per_strategy": 1}
    });
    std::fs::write(mdir.join("mission.json"), m.to_string()).unwrap();
    let contract = Mission::load(&mdir).unwrap();
    let doc = json!({"rows": [{"n": 1}, {"n": 2}]}).to_string();
    let script = line("create_file", json!({"path": "out.json", "content": doc}))
        + &line("read_file", json!({"path": "out.json"}))
        + &line("final_answer", json!({"answer": "done"}));
    let mut model = PromptRecorder::new(&script, "mem.jsonl");
    let mut options = AgentOptions::for_mission(&contract, rein_models::Model::identity(&model));
    options.levers = support::ALL_ON_BUT_NOTES;
    options.limits.attempts = 1;
    let r = run_memory(
        MemoryRunEnv {
            contract: &contract,
            mission_file: &contract.source,
            journal: &journal,
            meta: json!({}),
        },
        start_sandbox(&contract, &BTreeMap::new()).unwrap(),
        &mut model,
        &mut AllowAll,
        options,
        &mut |_| {},
    )
    .unwrap();
    assert!(r.actions.len() >= 2, "{}", r.actions.len());
    assert!(model.requests.len() >= 2);
    assert!(model
        .prompts()
        .iter()
        .all(|p| !p.contains("document_facts")));
}

// ---------------------------------------------------------------------------------------------
// (3) Bounded time and size; the write's own result stays in the clipped message.
// ---------------------------------------------------------------------------------------------

#[test]
fn many_repeated_fields_do_not_push_the_change_id_out_of_the_clipped_result() {
    // Two entries of 200 fields (about 19,000 characters written, under the input cap), every
    // value repeated: each field's counts went into the facts, 10,000 characters ahead of the
    // write's own result, so the model, shown 6,000, never saw its change id.
    let entry: serde_json::Map<String, Value> = (0..200)
        .map(|i| (format!("field_{i:0>34}"), json!("a")))
        .collect();
    let doc = json!({"rows": [entry.clone(), entry]}).to_string();
    assert!(doc.chars().count() < 32_000);
    let (_, steps) =
        run(&(reads() + &line("create_file", json!({"path": FIELDS, "content": doc})) + &finish()));
    let write = step(&steps, "create_file", FIELDS)[0];
    assert_eq!(write.outcome, "executed");
    let shown: String = write.result.chars().take(MAX_RESULT_CHARS).collect();
    assert!(shown.contains("\"change_id\""), "{}", &shown[..300]);
}

#[test]
fn long_sum_names_in_many_arrays_do_not_push_the_change_id_out() {
    // Four arrays of twenty numeric fields of 100-character names: the sums alone were 10,000
    // characters.
    let entry: serde_json::Map<String, Value> =
        (0..20).map(|i| (format!("{i:0>100}"), json!(1))).collect();
    let arr = json!([entry.clone(), entry]);
    let doc = json!({"a": arr, "b": arr, "c": arr, "d": arr}).to_string();
    assert!(doc.chars().count() < 32_000, "{}", doc.len());
    let (_, steps) =
        run(&(reads() + &line("create_file", json!({"path": FIELDS, "content": doc})) + &finish()));
    let write = step(&steps, "create_file", FIELDS)[0];
    assert_eq!(write.outcome, "executed");
    let shown: String = write.result.chars().take(MAX_RESULT_CHARS).collect();
    assert!(shown.contains("\"change_id\""), "{}", &shown[..300]);
}

/// Runs reads, an edit of a large deliverable already in the workspace, and finish; the time of
/// the whole run.
fn time_large_edit(doc: &str, lever: bool) -> (Duration, Vec<Recorded>) {
    let h = Harness::new("doc_extract");
    std::fs::create_dir_all(h.workspace.join("out")).unwrap();
    std::fs::write(h.workspace.join(FIELDS), doc).unwrap();
    let script = reads()
        + &line(
            "edit_file",
            json!({"path": FIELDS, "old_text": "\"first\": 1", "new_text": "\"first\": 2"}),
        )
        + &finish();
    let mut model = PromptRecorder::new(&script, "large.jsonl");
    let started = Instant::now();
    let (out, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = Levers {
            document_facts: lever,
            ..Levers::DEFAULT
        };
        o.limits.attempts = 1;
    });
    let took = started.elapsed();
    (took, recorded(&h, &out))
}

#[test]
fn a_5_mb_document_of_distinct_names_is_described_in_bounded_time() {
    // 100,000 entries, every name distinct: writes of one call are capped at 32,000 characters,
    // but edit_file changes a file of any size up to the proposal cap (8 MiB). Counting values by
    // a linear search of those seen took 12 s for this document.
    let rows: Vec<String> = (0..100_000)
        .map(|i| format!(r#"{{"name":"name-{i:0>6}-padding-padding-pad","v":{i}}}"#))
        .collect();
    let doc = format!("{{\"first\": 1, \"rows\": [{}]}}", rows.join(","));
    assert!(doc.len() > 5_000_000, "{}", doc.len());
    let (off, _) = time_large_edit(&doc, false);
    let (on, steps) = time_large_edit(&doc, true);
    let edit = step(&steps, "edit_file", FIELDS)[0];
    assert_eq!(edit.outcome, "executed");
    assert!(
        edit.result.contains("\"entries\":100000"),
        "{}",
        &edit.result[..300]
    );
    assert!(
        edit.result.contains("\"v\":\"4999950000\""),
        "{}",
        &edit.result[..300]
    );
    assert!(
        on < off * 2 + Duration::from_secs(3),
        "lever on {on:?}, off {off:?}"
    );
}

#[test]
fn a_document_of_many_distinct_keys_is_described_in_bounded_time() {
    // Each entry with a key of its own: the table code makes one column per key and one cell
    // per entry and column, so 40,000 entries would be 1.6e9 cells (tens of gigabytes; not run
    // before the fix). 3,000 such entries, a write under the 32,000-character cap, took 2 s.
    let rows: Vec<String> = (0..40_000).map(|i| format!(r#"{{"k{i}":1}}"#)).collect();
    let doc = format!("{{\"first\": 1, \"rows\": [{}]}}", rows.join(","));
    let (off, _) = time_large_edit(&doc, false);
    let (on, steps) = time_large_edit(&doc, true);
    let edit = step(&steps, "edit_file", FIELDS)[0];
    assert_eq!(edit.outcome, "executed");
    assert!(
        edit.result.contains("\"entries\":40000"),
        "{}",
        &edit.result[..300]
    );
    assert!(
        on < off * 2 + Duration::from_secs(3),
        "lever on {on:?}, off {off:?}"
    );
}

#[test]
fn a_deep_long_key_path_is_described_in_bounded_time() {
    // A key of 2 MB above an object of 200,000 keys: the path of every key below it was built
    // as a copy of the 2 MB prefix (400 GB of copying, by the code; not run before the fix)
    // though no array lies there.
    let wide: Vec<String> = (0..200_000).map(|i| format!(r#""k{i}":1"#)).collect();
    let doc = format!(
        "{{\"first\": 1, \"{}\": {{{}}}, \"rows\": [{{\"v\": 1}}, {{\"v\": 2}}]}}",
        "x".repeat(2_000_000),
        wide.join(",")
    );
    let (off, _) = time_large_edit(&doc, false);
    let (on, steps) = time_large_edit(&doc, true);
    let edit = step(&steps, "edit_file", FIELDS)[0];
    assert_eq!(edit.outcome, "executed");
    assert!(
        edit.result.contains("\"v\":\"3\""),
        "{}",
        &edit.result[..300]
    );
    assert!(
        on < off * 2 + Duration::from_secs(3),
        "lever on {on:?}, off {off:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// (4) The journal records what the model was shown.
// ---------------------------------------------------------------------------------------------

#[test]
fn the_journal_records_the_facts_the_model_was_shown_and_the_gate_record_has_none() {
    let doc = invoices(["1", "2", "3"], "");
    let script =
        reads() + &line("create_file", json!({"path": FIELDS, "content": doc})) + &finish();
    let h = Harness::new("doc_extract");
    let (out, steps, model) = run_with(&h, &script, &mut AllowAll);
    let write = step(&steps, "create_file", FIELDS)[0];
    assert!(write.result.contains("document_facts"));
    // What the model was shown is the recorded result (the prompt holds it Debug-escaped).
    let escaped = format!("{:?}", write.result);
    let escaped = &escaped[1..escaped.len() - 1];
    assert!(model.prompt(4).contains(escaped));
    // The gate's own record of the call (what a replay of its id returns) holds no facts: a
    // replay adds none (add_document_facts acts on executed writes only), so no stale figure.
    let trace = h.journal.run_trace(out.run).unwrap();
    let call = trace
        .steps
        .iter()
        .find(|s| s.step.action.as_deref() == Some("create_file"))
        .and_then(|s| s.call.clone())
        .unwrap();
    assert!(!json!(call).to_string().contains("document_facts"));
}
