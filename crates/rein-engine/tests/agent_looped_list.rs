#![allow(clippy::unwrap_used, clippy::expect_used)]

//! A reply cut off at the reply cap while it wrote its list over again: the next reply is told
//! where the list began again, and with `short-after-cut` and a list template of `answer-lines`
//! its list is held to the items before the repeat. The 1.5B wrote explore-log-lines' five logs,
//! then two of them again and again until the cap, eight replies in a row (`ex22-ask/`).

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use rein_protocol::FinishReason;
use serde_json::{json, Value};
use support::{line, Harness, PromptRecorder};

const LOG_LINES: &str = "out/log_lines.md";

fn list(items: &[&str]) -> String {
    let mut s = String::from("# Log lines\n");
    for i in items {
        s.push_str(&format!("- {i}\n"));
    }
    s
}

/// The model's first reply writes five logs and then the two nginx logs again and again, and
/// comes back cut at the cap; the second writes the list once.
fn looping_then_whole() -> PromptRecorder {
    let five = [
        "logs/api.log: 23",
        "logs/cron.log: 9",
        "logs/nginx/access.log: 27",
        "logs/nginx/error.log: 6",
        "logs/worker.log: 31",
    ];
    let mut looping: Vec<&str> = five.to_vec();
    for _ in 0..6 {
        looping.extend(["logs/nginx/access.log: 27", "logs/nginx/error.log: 6"]);
    }
    let whole = list(&five) + "\nLongest: logs/worker.log\nTotal lines: 96\n";
    let script = line(
        "create_file",
        json!({"path": LOG_LINES, "content": list(&looping)}),
    ) + &line("create_file", json!({"path": LOG_LINES, "content": whole}));
    PromptRecorder::tapped(
        &script,
        "looping.jsonl",
        Box::new(|call, request, c| {
            if call == 0 {
                let keep = c.text.chars().count() * 3 / 4;
                c.text = c.text.chars().take(keep).collect();
                c.finish = FinishReason::Length;
                c.completion_tokens = request.max_tokens;
            }
        }),
    )
}

fn content_pattern(schema: &Option<Value>) -> String {
    schema.as_ref().unwrap()["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["properties"]["action"]["const"] == "create_file")
        .unwrap()["properties"]["parameters"]["properties"]["content"]["pattern"]
        .as_str()
        .unwrap()
        .to_string()
}

fn run(short_after_cut: bool) -> PromptRecorder {
    let h = Harness::desk_suite("explore-log-lines");
    let mut model = looping_then_whole();
    h.run_model(
        &mut model,
        &mut AllowAll,
        |o| {
            o.constrained = true;
            o.levers = Levers {
                answer_lines: true,
                short_after_cut,
                ..Levers::DEFAULT
            };
            o.limits.attempts = 1;
        },
        None,
        &mut |_| {},
    );
    model
}

#[test]
fn the_reply_after_a_looping_cut_is_told_and_its_list_held_to_the_items_before_the_repeat() {
    let model = run(true);
    assert!(model.requests.len() >= 2);
    let after = model.prompt(1);
    assert!(
        after.contains("Your list began again after 5 items: `- logs/nginx/access.log: 27` was written a second time. Write each item once, then the lines after the list. Rein holds your next list to at most 5 items (lever short-after-cut)."),
        "{after}"
    );
    let first = content_pattern(&model.requests[0].json_schema);
    let second = content_pattern(&model.requests[1].json_schema);
    assert!(first.contains(")+"), "unbounded before the cut: {first}");
    assert!(second.contains("){1,5}"), "held to five after it: {second}");
    let re = regex::Regex::new(&second).unwrap();
    let five = "# Log lines\n- logs/api.log: 23\n- logs/cron.log: 9\n- logs/nginx/access.log: 27\n- logs/nginx/error.log: 6\n- logs/worker.log: 31\n\nLongest: logs/worker.log\nTotal lines: 96\n";
    assert!(re.is_match(five));
    let six = five.replace(
        "- logs/worker.log: 31\n",
        "- logs/worker.log: 31\n- logs/api.log: 23\n",
    );
    assert!(!re.is_match(&six));
    // Only the reply right after the cut is held.
    if let Some(r) = model.requests.get(2) {
        assert!(content_pattern(&r.json_schema).contains(")+"));
    }
}

#[test]
fn without_short_after_cut_the_repeat_is_told_and_the_list_left_free() {
    let model = run(false);
    let after = model.prompt(1);
    assert!(
        after.contains("Your list began again after 5 items"),
        "{after}"
    );
    assert!(!after.contains("Rein holds your next list"), "{after}");
    assert!(content_pattern(&model.requests[1].json_schema).contains(")+"));
}
