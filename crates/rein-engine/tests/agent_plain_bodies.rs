#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `plain-bodies` lever on desk_task: every `write_sections` field and `rewrite_section`'s
//! `text` are held by constrained decoding to have no line that starts with `#` or `\#`; with
//! `stated-lines` too, the Tasks field holds both rules in one anchored pattern.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::agent::SHORT_TEXT_MAX_CHARS;
use rein_engine::gate::AllowAll;
use rein_protocol::FinishReason;
use serde_json::{json, Value};
use support::{line, reads, Harness, PromptRecorder};

const SUMMARY: &str = "out/summary.md";
const FIELDS: [&str; 4] = ["Project summary", "Goal", "Tasks", "Risks"];

/// Every action schema the run sent can be built by llguidance as a request's would be.
fn all_buildable(model: &PromptRecorder) {
    for (i, r) in model.requests.iter().enumerate() {
        if let Some(schema) = &r.json_schema {
            if let Err(e) = rein_llama::check_schema_grammar(schema) {
                panic!("request {i}: llguidance cannot build its schema: {e}");
            }
        }
    }
}

/// The parameters schema of `tool` in the last request that offered it.
fn offered_parameters(levers: Levers, tool: &str) -> Value {
    let h = Harness::new("desk_task");
    let script = reads()
        + &line(
            "write_sections",
            json!({"path": SUMMARY, "Project summary": "x", "Goal": "y", "Tasks": "z", "Risks": "w"}),
        );
    let mut model = PromptRecorder::new(&script, "plain_bodies.jsonl");
    let _ = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = 1;
    });
    all_buildable(&model);
    model
        .requests
        .iter()
        .rev()
        .find_map(|r| {
            r.json_schema.as_ref()?["anyOf"]
                .as_array()?
                .iter()
                .find(|b| b["properties"]["action"]["const"] == tool)
                .map(|b| b["properties"]["parameters"].clone())
        })
        .unwrap_or_else(|| panic!("{tool} was never offered"))
}

fn levers(plain_bodies: bool, stated_lines: bool) -> Levers {
    Levers {
        write_sections: true,
        rewrite_section: true,
        plain_bodies,
        stated_lines,
        ..Levers::DEFAULT
    }
}

fn sections(tasks: &str, risks: &str) -> Value {
    json!({"path": SUMMARY, "Project summary": "The Harbor Library app.", "Goal": "Renew loans.",
           "Tasks": tasks, "Risks": risks})
}

#[test]
fn no_field_of_write_sections_can_hold_a_heading_line() {
    let params = offered_parameters(levers(true, false), "write_sections");
    for field in FIELDS {
        let f = &params["properties"][field];
        assert!(
            f["pattern"].as_str().unwrap().starts_with('^'),
            "{field}: {f}"
        );
        // llguidance builds a plain-body pattern under the input cap (rein-llama's test).
        assert_eq!(f["maxLength"], 32000, "{field}: {f}");
        assert_eq!(f["minLength"], 1, "{field}: {f}");
    }
    let v = jsonschema::validator_for(&params).unwrap();
    assert!(v.is_valid(&sections(
        "- Renewal API: 16 hours\n\n1. C# code",
        "- Keys late."
    )));
    // What the 1.5B wrote on seed 1: its own headings inside the Tasks field.
    for tasks in [
        "### Tasks\n- Renewal API",
        "- Renewal API\n\n### Risks\n- Keys late",
        "- Renewal API\n\\### Tasks",
        "- a\n   ## Risks",
    ] {
        assert!(!v.is_valid(&sections(tasks, "- Keys late.")), "{tasks:?}");
    }
    assert!(!v.is_valid(&sections("- a", "## Risks")));
}

#[test]
fn with_stated_lines_the_tasks_field_holds_the_total_and_no_heading() {
    let params = offered_parameters(levers(true, true), "write_sections");
    let v = jsonschema::validator_for(&params).unwrap();
    assert!(v.is_valid(&sections(
        "- Renewal API: 16 hours\nTotal hours: 64",
        "- Keys late."
    )));
    assert!(
        !v.is_valid(&sections("- Renewal API: 16 hours", "- Keys late.")),
        "no total"
    );
    assert!(!v.is_valid(&sections(
        "### Tasks\n- Renewal API\nTotal hours: 64",
        "- Keys late."
    )));
    assert!(!v.is_valid(&sections(
        "- a\nTotal hours: 64\n\n### Risks\n- Keys late",
        "- Keys late."
    )));
    // Only Tasks has the stated line.
    assert!(v.is_valid(&sections("- a\nTotal hours: 64", "- Keys late, no total.")));
}

#[test]
fn rewrite_section_text_is_held_too_and_nothing_without_the_lever() {
    let params = offered_parameters(levers(true, false), "rewrite_section");
    let v = jsonschema::validator_for(&params).unwrap();
    let rewrite = |text: &str| json!({"path": SUMMARY, "heading": "Tasks", "text": text});
    assert!(v.is_valid(&rewrite("- Renewal API: 16 hours\nTotal hours: 64")));
    assert!(!v.is_valid(&rewrite("- a\n\n## Risks\n- b")));
    assert!(!v.is_valid(&rewrite("\\### Tasks\n- a")));

    let off = offered_parameters(levers(false, false), "write_sections");
    for field in FIELDS {
        assert!(off["properties"][field].get("pattern").is_none(), "{off}");
    }
    let off = offered_parameters(levers(false, false), "rewrite_section");
    assert!(off["properties"]["text"].get("pattern").is_none(), "{off}");
    // stated-lines alone keeps its searched pattern.
    let stated = offered_parameters(levers(false, true), "write_sections");
    assert_eq!(
        stated["properties"]["Tasks"]["pattern"],
        "\\nTotal hours: [0-9]"
    );
    assert!(stated["properties"]["Goal"].get("pattern").is_none());
}

/// After a reply cut at the cap, `short-after-cut` holds every text to 250 characters; the
/// combined pattern cannot be built under a cap (rein-llama's test), so there the Tasks field
/// keeps the stated line alone, and the other fields their plain-body pattern.
#[test]
fn after_a_cut_reply_every_field_is_capped_and_still_buildable() {
    let h = Harness::new("desk_task");
    let write = line(
        "write_sections",
        json!({"path": SUMMARY, "Project summary": "x", "Goal": "y", "Tasks": "z", "Risks": "w"}),
    );
    let script = reads() + &write + &write;
    let mut model = PromptRecorder::tapped(
        &script,
        "plain_bodies_cut.jsonl",
        Box::new(|call, request, c| {
            if call == 3 {
                c.text = c.text.chars().take(40).collect();
                c.finish = FinishReason::Length;
                c.completion_tokens = request.max_tokens;
            }
        }),
    );
    let _ = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = Levers {
            short_after_cut: true,
            ..levers(true, true)
        };
        o.constrained = true;
        o.limits.attempts = 1;
    });
    let branch = |call: usize, tool: &str| {
        model.requests[call].json_schema.as_ref().unwrap()["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["properties"]["action"]["const"] == tool)
            .map(|b| b["properties"]["parameters"]["properties"].clone())
            .unwrap()
    };
    all_buildable(&model);
    let before = branch(3, "write_sections");
    assert!(before["Tasks"]["pattern"]
        .as_str()
        .unwrap()
        .starts_with('^'));
    assert!(before["Tasks"].get("maxLength").is_none());
    let after = branch(4, "write_sections");
    assert_eq!(
        after["Tasks"]["pattern"], "\\nTotal hours: [0-9]",
        "{after}"
    );
    assert_eq!(after["Tasks"]["maxLength"], SHORT_TEXT_MAX_CHARS);
    for field in ["Project summary", "Goal", "Risks"] {
        assert!(
            after[field]["pattern"].as_str().unwrap().starts_with('^'),
            "{after}"
        );
        assert_eq!(after[field]["maxLength"], SHORT_TEXT_MAX_CHARS, "{after}");
    }
}
