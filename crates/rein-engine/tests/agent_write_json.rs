#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `write-json` lever on doc_extract (a JSON deliverable with a `json_schema` check): a
//! `write_json` tool whose `document` is the JSON itself, typed by the contract's schema in
//! the decoding schema, held to that schema and to the deliverable's path before the gate, and
//! applied through the same gate, diff and approval as any change.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, Levers, RunOutcome, StepEvent};
use rein_engine::checks::CheckSpec;
use rein_engine::gate::{AllowAll, DenyAll};
use rein_models::ScriptedModel;
use rein_protocol::CompletionRequest;
use serde_json::{json, Value};
use support::{missions_dir, Harness, PromptRecorder};

const FIELDS: &str = "out/fields.json";

fn line(action: &str, parameters: Value) -> String {
    json!({"thought": "Next.", "action": action, "parameters": parameters}).to_string() + "\n"
}

fn gold() -> Value {
    let text = std::fs::read_to_string(
        missions_dir().join("doc_extract/judge/gold/files/out/fields.json"),
    )
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn reads() -> String {
    (1..=3)
        .map(|i| {
            line(
                "read_file",
                json!({"path": format!("invoices/invoice_00{i}.txt")}),
            )
        })
        .collect()
}

fn write_json() -> Levers {
    Levers {
        write_json: true,
        ..Levers::DEFAULT
    }
}

fn run(
    h: &Harness,
    script: &str,
    levers: Levers,
    constrained: bool,
    approver: &mut dyn rein_engine::gate::Approver,
) -> (RunOutcome, Vec<AgentEvent>, Vec<CompletionRequest>) {
    let mut model = PromptRecorder::new(script, "write_json.jsonl");
    let (out, events) = h.run_gated(&mut model, approver, |o| {
        o.levers = levers;
        o.constrained = constrained;
        o.limits.attempts = 1;
    });
    (out, events, model.requests)
}

fn steps<'e>(events: &'e [AgentEvent], action: &str) -> Vec<&'e StepEvent> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Step(s) if s.action.as_deref() == Some(action) => Some(s),
            _ => None,
        })
        .collect()
}

#[test]
fn a_valid_document_is_written_exactly_as_serialised_and_passes() {
    let h = Harness::new("doc_extract");
    let script = reads()
        + &line("write_json", json!({"path": FIELDS, "document": gold()}))
        + &line("read_file", json!({"path": FIELDS}))
        + &line("finish", json!({"summary": "done"}));
    let (out, events, requests) = run(&h, &script, write_json(), false, &mut AllowAll);
    assert!(out.passed(), "{}", out.reason());
    let written = std::fs::read_to_string(h.workspace.join(FIELDS)).unwrap();
    assert_eq!(
        written,
        rein_workspace::desk::serialise_json(&gold()).unwrap()
    );
    assert!(written.ends_with("}\n") && written.contains("\n  \"invoices\""));
    let w = steps(&events, "write_json");
    assert_eq!(w[0].outcome, "executed");
    // The tool is offered and the task says how to use it.
    let first = format!("{:?}", requests[0].prompt);
    assert!(first.contains("write_json"), "{first}");
    assert!(first.contains("give the JSON document itself"));
}

#[test]
fn a_document_that_breaks_the_schema_is_refused_and_nothing_is_written() {
    let h = Harness::new("doc_extract");
    let mut extra = gold();
    extra["note"] = json!("an extra field");
    let mut short = gold();
    short["invoices"].as_array_mut().unwrap().pop();
    let bad = [
        // JSON inside a JSON string: the very thing the tool exists to avoid.
        json!(serde_json::to_string(&gold()).unwrap()),
        extra,
        short,
        json!({"invoices": [], "grand_total": "1054.80"}),
    ];
    let script: String = reads()
        + &bad
            .iter()
            .map(|d| line("write_json", json!({"path": FIELDS, "document": d})))
            .collect::<String>();
    let (out, events, _) = run(&h, &script, write_json(), false, &mut AllowAll);
    assert!(!out.passed());
    let w = steps(&events, "write_json");
    assert_eq!(w.len(), bad.len());
    for s in &w {
        assert_eq!(s.outcome, "invalid", "{}", s.summary);
    }
    assert!(!h.workspace.join(FIELDS).exists(), "nothing was written");
    // The reason the model reads is the check's own model-safe words.
    let trace = h.journal.run_trace(out.run).unwrap();
    let reasons: Vec<String> = trace
        .steps
        .iter()
        .filter(|s| s.step.action.as_deref() == Some("write_json"))
        .map(|s| {
            s.step.detail["reason"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert!(
        reasons[0].contains("does not follow the deliverable's schema"),
        "{reasons:?}"
    );
    assert!(
        !reasons.iter().any(|r| r.contains("^INV-")),
        "no pattern read out: {reasons:?}"
    );
}

#[test]
fn write_json_to_another_path_is_refused_as_a_change_outside_the_deliverable() {
    let h = Harness::new("doc_extract");
    let input = std::fs::read(h.workspace.join("invoices/invoice_001.txt")).unwrap();
    let script: String = reads()
        + &[
            "invoices/invoice_001.txt",
            "out/other.json",
            "../escape.json",
            "/tmp/x.json",
        ]
        .iter()
        .map(|p| line("write_json", json!({"path": p, "document": gold()})))
        .collect::<String>();
    let (_, events, _) = run(&h, &script, write_json(), false, &mut AllowAll);
    for s in steps(&events, "write_json") {
        assert_eq!(s.outcome, "invalid", "{}", s.summary);
    }
    assert_eq!(
        std::fs::read(h.workspace.join("invoices/invoice_001.txt")).unwrap(),
        input
    );
    assert!(!h.workspace.join("out/other.json").exists());
    assert!(!h.workspace.parent().unwrap().join("escape.json").exists());
}

#[test]
fn write_json_goes_through_approval_like_any_change() {
    let h = Harness::new("doc_extract");
    let script = reads() + &line("write_json", json!({"path": FIELDS, "document": gold()}));
    let (_, events, _) = run(&h, &script, write_json(), false, &mut DenyAll);
    assert_eq!(steps(&events, "write_json")[0].outcome, "approval-required");
    assert!(!h.workspace.join(FIELDS).exists());
}

#[test]
fn constrained_decoding_types_the_document_with_the_contract_schema() {
    let h = Harness::new("doc_extract");
    let contract_schema = h
        .contract
        .mission
        .checks
        .iter()
        .find_map(|c| match &c.spec {
            CheckSpec::JsonSchema { schema, .. } => Some(schema.clone()),
            _ => None,
        })
        .unwrap();
    let script = reads();
    let (_, _, requests) = run(&h, &script, write_json(), true, &mut AllowAll);
    let schema = requests[0].json_schema.as_ref().expect("constrained");
    let branch = schema["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["properties"]["action"]["const"] == "write_json")
        .expect("write_json is offered");
    let params = &branch["properties"]["parameters"]["properties"];
    assert_eq!(params["document"], contract_schema);
    assert_eq!(params["path"]["const"], FIELDS);

    // Off: no write_json, nothing typed.
    let h = Harness::new("doc_extract");
    let off = Levers {
        write_json: false,
        ..Levers::DEFAULT
    };
    let (_, _, requests) = run(&h, &reads(), off, true, &mut AllowAll);
    let schema = requests[0].json_schema.as_ref().unwrap();
    assert!(!schema.to_string().contains("write_json"));
}

#[test]
fn a_mission_without_a_json_schema_gets_no_write_json() {
    let h = Harness::new("desk_task");
    let (_, _, requests) = run(&h, &reads(), write_json(), true, &mut AllowAll);
    assert!(!requests[0]
        .json_schema
        .as_ref()
        .unwrap()
        .to_string()
        .contains("write_json"));
}

/// Red team: verified sampling over `write_json` candidates. One breaks the deliverable's
/// schema (refused before the gate, so never judged and never proposed), one states a wrong
/// grand total, one names the deliverable with an odd spelling and is right: it is proposed
/// and the real judge agrees with its scratch verdict. Nothing else is written.
#[test]
fn sampled_write_json_candidates_are_held_to_the_schema_before_they_are_judged() {
    let h = Harness::new("doc_extract");
    let mut wrong = gold();
    wrong["grand_total"] = json!(1000.0);
    let mut extra = gold();
    extra["note"] = json!("an extra field");
    let script = reads()
        + &line("write_json", json!({"path": FIELDS, "document": wrong}))
        + &line("write_json", json!({"path": FIELDS, "document": extra}))
        + &line(
            "write_json",
            json!({"path": "out/other.json", "document": gold()}),
        )
        + &line(
            "write_json",
            json!({"path": "./out//fields.json", "document": gold()}),
        )
        + &line("read_file", json!({"path": FIELDS}))
        + &line("finish", json!({"summary": "done"}));
    let mut model =
        ScriptedModel::from_str_named(&script, std::path::Path::new("sampled.jsonl")).unwrap();
    let (out, events) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = write_json();
        o.samples = 4;
        o.limits.attempts = 1;
    });
    let (candidates, chosen) = support::sampled(&events)
        .into_iter()
        .next()
        .expect("the write was sampled");
    assert_eq!(chosen, 3, "{candidates:?}");
    assert!(candidates[0].skipped.is_none() && !candidates[0].passed);
    assert!(
        candidates[1].skipped.as_deref().unwrap().contains("schema"),
        "{candidates:?}"
    );
    assert!(candidates[2].skipped.is_some(), "{candidates:?}");
    assert!(candidates[3].passed, "{candidates:?}");
    assert!(out.passed(), "{}", out.reason());
    assert!(!h.workspace.join("out/other.json").exists());
    assert_eq!(out.figures.first_draw_passed, Some(false));
    assert_eq!(out.figures.chosen_draw_passed, Some(true));
}

const SETTINGS: &str = "config/settings.json";

/// A run of edit-json-settings (a JSON file edited in place, with a `json_schema` check) with
/// its fixtures changed by `fixtures`, on `script`.
fn settings_run(
    fixtures: impl FnOnce(&std::path::Path),
    script: &str,
    constrained: bool,
) -> (Harness, RunOutcome, Vec<AgentEvent>, Vec<CompletionRequest>) {
    let h = Harness::desk_suite_with("edit-json-settings", fixtures);
    let (out, events, requests) = run(&h, script, write_json(), constrained, &mut AllowAll);
    (h, out, events, requests)
}

fn settings_gold() -> String {
    std::fs::read_to_string(
        missions_dir()
            .join("../suites/desk/edit-json-settings/judge/gold/files/config/settings.json"),
    )
    .unwrap()
}

/// The task keeps the file's layout (`"languages": ["en"]` on one line), and `write_json`
/// writes every list one item a line: it could never pass, and the 1.5B reached for it after an
/// `edit_file` missed. It is not offered, and the task message does not name it.
#[test]
fn a_file_edited_in_place_in_another_layout_gets_no_write_json() {
    let read = line("read_file", json!({"path": SETTINGS}));
    let (_, _, _, requests) = settings_run(|_| {}, &read, true);
    assert!(
        !support::allowed_tools(&requests[0]).contains(&"write_json".to_string()),
        "{:?}",
        support::allowed_tools(&requests[0])
    );
    assert!(!format!("{:?}", requests[0].prompt).contains("write_json"));
}

/// A model that calls `write_json` anyway (unconstrained) changes nothing: the call is not one
/// this run offers.
#[test]
fn write_json_called_anyway_on_a_file_in_another_layout_writes_nothing() {
    let gold: Value = serde_json::from_str(&settings_gold()).unwrap();
    let script = line("read_file", json!({"path": SETTINGS}))
        + &line("write_json", json!({"path": SETTINGS, "document": gold}))
        + &line("finish", json!({"summary": "done"}));
    let (h, out, events, _) = settings_run(|_| {}, &script, false);
    assert!(!out.passed());
    let fixture = std::fs::read_to_string(
        missions_dir().join("../suites/desk/edit-json-settings/fixtures/config/settings.json"),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(h.workspace.join(SETTINGS)).unwrap(),
        fixture
    );
    assert!(steps(&events, "write_json")
        .iter()
        .all(|s| s.outcome != "executed"));
}

/// The same task with the file (and its gold) in the layout `write_json` writes: the tool keeps
/// that layout, so it is offered and its write passes the whole-file check.
#[test]
fn a_file_edited_in_place_in_write_json_layout_keeps_write_json() {
    let pretty = |text: &str| {
        rein_workspace::desk::serialise_json(&serde_json::from_str(text).unwrap()).unwrap()
    };
    let gold = pretty(&settings_gold());
    let gold_doc: Value = serde_json::from_str(&gold).unwrap();
    let script = line("read_file", json!({"path": SETTINGS}))
        + &line(
            "write_json",
            json!({"path": SETTINGS, "document": gold_doc}),
        )
        + &line("read_file", json!({"path": SETTINGS}))
        + &line("finish", json!({"summary": "done"}));
    let h = Harness::desk_suite_with("edit-json-settings", |dir| {
        let file = dir.join(SETTINGS);
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, pretty(&text)).unwrap();
        let gold_file = dir.join("../judge/gold/files").join(SETTINGS);
        std::fs::write(&gold_file, &gold).unwrap();
    });
    let (out, _, requests) = run(&h, &script, write_json(), true, &mut AllowAll);
    assert!(support::allowed_tools(&requests[0]).contains(&"write_json".to_string()));
    assert!(out.passed(), "{}", out.reason());
    assert_eq!(
        std::fs::read_to_string(h.workspace.join(SETTINGS)).unwrap(),
        gold
    );
}
