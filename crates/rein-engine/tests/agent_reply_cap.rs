#![allow(clippy::unwrap_used, clippy::expect_used)]

//! A reply cut off at the reply cap is never run, however much of it could be read: repair would
//! close the JSON and write the cut content as if it were whole.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, MAX_REPLY_TOKENS};
use rein_engine::gate::AllowAll;
use rein_protocol::FinishReason;
use support::{fixture, Harness, PromptRecorder};

#[test]
fn a_reply_cut_at_the_cap_writes_nothing_and_says_why() {
    let good = std::fs::read_to_string(fixture("good.jsonl")).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    // The fourth reply writes the report; it is sent twice, and the first is cut.
    let mut script: Vec<&str> = lines[..4].to_vec();
    script.extend(&lines[3..]);
    let h = Harness::new("desk_task");
    // The fourth call comes back as a model stopped by the cap leaves it: a third of its text
    // missing, `Length`, max_tokens spent.
    let mut model = PromptRecorder::tapped(
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
    );
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
