#![allow(clippy::unwrap_used, clippy::expect_used)]

//! A reply cut off at the reply cap is never run, however much of it could be read: repair would
//! close the JSON and write the cut content as if it were whole.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{
    AgentEvent, CapHit, RunEnd, MAX_REPLY_TOKENS, MAX_STEPS_WITHOUT_PROGRESS, SHORT_TEXT_MAX_CHARS,
};
use rein_engine::gate::AllowAll;
use rein_protocol::FinishReason;
use support::{fixture, Harness, PromptRecorder};

/// The good run's script with its fourth reply, the one that writes the report, sent twice;
/// the first comes back as a model stopped by the cap leaves it: a third of its text missing,
/// `Length`, max_tokens spent.
fn model_cut_at_the_fourth_reply() -> PromptRecorder {
    let good = std::fs::read_to_string(fixture("good.jsonl")).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let mut script = lines[..4].to_vec();
    script.extend_from_slice(&lines[3..]);
    PromptRecorder::tapped(
        &script.join("\n"),
        "cut.jsonl",
        Box::new(|call, request, c| {
            if call == 3 {
                let keep = c.text.chars().count() * 2 / 3;
                c.text = c.text.chars().take(keep).collect();
                c.finish = FinishReason::Length;
                c.completion_tokens = request.max_tokens;
            }
        }),
    )
}

#[test]
fn a_reply_cut_at_the_cap_writes_nothing_and_says_why() {
    let h = Harness::new("desk_task");
    let mut model = model_cut_at_the_fourth_reply();
    let mut after_cut = None;
    let ws = h.workspace.clone();
    let (out, events) = h.run_model(&mut model, &mut AllowAll, |_| {}, None, &mut |e| {
        if let AgentEvent::Step(s) = e {
            if s.step == 4 {
                after_cut = Some(ws.join("out/summary.md").exists());
            }
        }
    });
    let steps: Vec<(u32, String)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Step(s) => Some((s.step, s.outcome.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(steps[3], (4, "format-error".to_string()), "{steps:?}");
    assert_eq!(after_cut, Some(false), "the cut reply wrote nothing");
    assert!(
        model.prompt(4).contains(&format!(
            "Your reply was cut off at {MAX_REPLY_TOKENS} tokens, the most one reply may have"
        )),
        "{}",
        model.prompt(4)
    );
    // The whole reply, sent again, is written and the run goes on to pass.
    assert_eq!(steps[4], (5, "executed".to_string()), "{steps:?}");
    assert!(out.passed(), "{}", out.reason());
}

/// The schema's `maxLength` of `create_file`'s content in a request's action schema.
fn content_cap(request: &rein_protocol::CompletionRequest) -> Option<u64> {
    let schema = request.json_schema.as_ref()?;
    schema["anyOf"]
        .as_array()?
        .iter()
        .find(|b| b["properties"]["action"]["const"] == "create_file")
        .and_then(|b| b["properties"]["parameters"]["properties"]["content"]["maxLength"].as_u64())
}

#[test]
fn short_after_cut_holds_only_the_next_reply_s_texts_to_the_short_cap() {
    let run = |lever: bool| {
        let h = Harness::new("desk_task");
        let mut model = model_cut_at_the_fourth_reply();
        let (out, _) = h.run_model(
            &mut model,
            &mut AllowAll,
            |o| {
                o.constrained = true;
                o.levers.short_after_cut = lever;
            },
            None,
            &mut |_| {},
        );
        assert!(out.passed(), "{}", out.reason());
        model.requests.iter().map(content_cap).collect::<Vec<_>>()
    };
    let caps = run(true);
    let full = caps[0];
    assert!(full.is_some_and(|c| c > SHORT_TEXT_MAX_CHARS), "{caps:?}");
    // Only the request right after the cut reply (the fifth) is held short.
    assert_eq!(caps[4], Some(SHORT_TEXT_MAX_CHARS), "{caps:?}");
    for (i, cap) in caps.iter().enumerate().filter(|(i, _)| *i != 4) {
        assert_eq!(*cap, full, "request {i}: {caps:?}");
    }
    // Off, every request has the full schema.
    assert!(run(false).iter().all(|c| *c == full));
}

/// Replies cut at the cap, one after another, stop at the no-progress cap: the 1.5B sent 21 of
/// them in a row on explore-log-lines until the 900 s timeout (`ex21c-ask/`).
#[test]
fn replies_cut_again_and_again_stop_at_the_no_progress_cap() {
    let good = std::fs::read_to_string(fixture("good.jsonl")).unwrap();
    let write = good.lines().nth(3).unwrap().to_string();
    let script = vec![write; 2 * MAX_STEPS_WITHOUT_PROGRESS as usize].join("\n");
    let mut model = PromptRecorder::tapped(
        &script,
        "cut-all.jsonl",
        Box::new(|_, request, c| {
            let keep = c.text.chars().count() / 2;
            c.text = c.text.chars().take(keep).collect();
            c.finish = FinishReason::Length;
            c.completion_tokens = request.max_tokens;
        }),
    );
    let h = Harness::new("desk_task");
    let (out, events) = h.run_model(&mut model, &mut AllowAll, |_| {}, None, &mut |_| {});
    assert_eq!(
        out.end,
        RunEnd::Cap {
            hit: CapHit::NoProgress {
                limit: MAX_STEPS_WITHOUT_PROGRESS
            }
        },
        "{}",
        out.reason()
    );
    let steps = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Step(_)))
        .count();
    assert_eq!(steps, MAX_STEPS_WITHOUT_PROGRESS as usize);
    assert!(!h.workspace.join("out/summary.md").exists());
}
