#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `stated-lines` lever on desk_task: the task quotes `'Total hours: N'` and the contract's
//! numeric check reads that line under Tasks, so constrained decoding holds `write_sections`'s
//! `Tasks` field to contain `Total hours: ` and a digit. The number is the model's; the judge
//! is unchanged.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use serde_json::{json, Value};
use support::{line, reads, Harness, PromptRecorder};

const SUMMARY: &str = "out/summary.md";

/// The `write_sections` parameters schema of every request, in order.
fn section_schemas(stated_lines: bool) -> Vec<Value> {
    let h = Harness::new("desk_task");
    let script = reads()
        + &line(
            "write_sections",
            json!({"path": SUMMARY, "Project summary": "x", "Goal": "y", "Tasks": "z", "Risks": "w"}),
        );
    let mut model = PromptRecorder::new(&script, "stated_lines.jsonl");
    let _ = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = Levers {
            write_sections: true,
            stated_lines,
            ..Levers::DEFAULT
        };
        o.constrained = true;
        o.limits.attempts = 1;
    });
    model
        .requests
        .iter()
        .filter_map(|r| {
            r.json_schema.as_ref()?["anyOf"]
                .as_array()?
                .iter()
                .find(|b| b["properties"]["action"]["const"] == "write_sections")
                .map(|b| b["properties"]["parameters"].clone())
        })
        .collect()
}

#[test]
fn the_tasks_field_must_hold_the_total_line_and_only_with_the_lever() {
    let on = section_schemas(true);
    assert!(!on.is_empty());
    for params in &on {
        let props = &params["properties"];
        assert_eq!(
            props["Tasks"]["pattern"], "\\nTotal hours: [0-9]",
            "{params}"
        );
        // llguidance cannot build the pattern under the 32,000-character cap (rein-llama's
        // test); the reply cap bounds the text.
        assert!(props["Tasks"].get("maxLength").is_none(), "{params}");
        for other in ["Project summary", "Goal", "Risks"] {
            assert!(props[other].get("pattern").is_none(), "{other}: {params}");
        }
    }
    // What the pattern means to a JSON Schema validator: the line anywhere in the text, with
    // a number the model chose (a wrong one is the judge's to fail, not the decoder's).
    let v = jsonschema::validator_for(&on[0]).unwrap();
    let with = |tasks: &str| json!({"path": SUMMARY, "Project summary": "x", "Goal": "y", "Tasks": tasks, "Risks": "w"});
    assert!(v.is_valid(&with("- Renewal API: 16 hours\nTotal hours: 64")));
    assert!(v.is_valid(&with("- x\nTotal hours: 72")));
    assert!(!v.is_valid(&with("- x keysTotal hours: 72")));
    assert!(!v.is_valid(&with("- Renewal API: 16 hours")));
    assert!(!v.is_valid(&with("Total hours: N")));

    for params in section_schemas(false) {
        assert!(
            params["properties"]["Tasks"].get("pattern").is_none(),
            "{params}"
        );
    }
}
