//! What the `line-fields` tests share: summarize-feedback's report written with
//! `write_sections` by a scripted model, through the real gate.

#![allow(dead_code)]

pub use crate::support::failed;
use crate::support::{line, Harness, PromptRecorder};
use rein_engine::agent::{Levers, RunOutcome};
use rein_engine::gate::AllowAll;
use serde_json::{json, Value};

pub const REPORT: &str = "out/feedback-summary.md";

/// `write-sections` with the levers that hold its fields, and `line-fields` as asked.
pub fn levers(line_fields: bool) -> Levers {
    Levers {
        write_sections: true,
        stated_lines: true,
        plain_bodies: true,
        line_fields,
        ..Levers::DEFAULT
    }
}

/// One attempt with constrained decoding, every change allowed.
pub fn run(h: &Harness, script: &str, levers: Levers) -> (RunOutcome, PromptRecorder) {
    let mut model = PromptRecorder::new(script, "line_fields.jsonl");
    let (out, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = 1;
    });
    (out, model)
}

/// summarize-feedback's two inputs, read whole.
pub fn reads() -> String {
    ["feedback/README.md", "feedback/responses.csv"]
        .iter()
        .map(|p| line("read_file", json!({ "path": p })))
        .collect()
}

/// Reading `path` back, then finish.
pub fn finish(path: &str) -> String {
    line("read_file", json!({ "path": path })) + &line("finish", json!({"summary": "done"}))
}

/// The report's sections, with `numbers` under Numbers.
pub fn sections(numbers: &str) -> Value {
    json!({
        "path": REPORT,
        "Feedback summary": "What users said in the in-app survey this month.",
        "Numbers": numbers,
        "Main complaint": "Sync loses notes that were edited offline, mostly on phones.",
        "Praise": "People like the new editor, easy sharing and the templates.",
    })
}

/// `v` with the three line fields.
pub fn with_fields(
    mut v: Value,
    responses: impl Into<Value>,
    rating: impl Into<Value>,
    mobile: impl Into<Value>,
) -> Value {
    v["Responses"] = responses.into();
    v["Average rating"] = rating.into();
    v["Mobile responses"] = mobile.into();
    v
}

/// A file of the workspace, empty when it does not exist.
pub fn read(h: &Harness, path: &str) -> String {
    std::fs::read_to_string(h.workspace.join(path)).unwrap_or_default()
}

/// The `write_sections` parameters schema of `task`'s first request, with `levers`.
pub fn first_schema(task: &str, levers: Levers) -> Value {
    let h = Harness::desk_suite(task);
    let (_, model) = run(&h, "", levers);
    model.requests[0].json_schema.as_ref().unwrap()["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["properties"]["action"]["const"] == "write_sections")
        .map(|b| b["properties"]["parameters"].clone())
        .unwrap()
}
