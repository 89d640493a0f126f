#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `told-draws` lever on desk_task with `--samples 3`: an extra draw that follows a draw Rein
//! refused before judging it is shown that draft and the refusal (as the next step would show
//! them); after a draw cut at the reply cap it is asked for a shorter call under
//! `short-after-cut`'s caps; a judged draw's failures are never told; nothing of this reaches
//! the run's transcript.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{Levers, RunOutcome, SHORT_TEXT_MAX_CHARS};
use rein_engine::gate::AllowAll;
use rein_protocol::FinishReason;
use serde_json::{json, Value};
use support::{
    gold_fields, line, reads, sampled, sampling_events, wrong_total_fields, Harness,
    PromptRecorder, Tap,
};

const SUMMARY: &str = "out/summary.md";
const REFUSED_NOTE: &str = "Rein checked that call before running it and refused it";
const PASTED: &str = "this draft pasted under two headings";
const CUT_NOTE: &str = "ran past the 384-token reply cap";

/// The first write of seeds 1, 2 and 4: one pasted text under two headings.
fn pasted_fields() -> Value {
    let pasted = "Harbor Library app\n\nGoal: a phone app for members, this draft pasted under two headings.";
    let mut fields = gold_fields();
    fields["Project summary"] = json!(pasted);
    fields["Goal"] = json!(pasted);
    fields
}

fn levers(told: bool) -> Levers {
    let mut l = Levers::DEFAULT;
    l.write_sections = true;
    l.short_after_cut = true;
    l.told_draws = told;
    l
}

/// desk_task's reads, one `write_sections` reply per element, then the read-back and finish.
fn writes(fields: &[Value]) -> String {
    let mut script = reads();
    for f in fields {
        script += &line("write_sections", f.clone());
    }
    script + &read_back_and_finish()
}

fn read_back_and_finish() -> String {
    line("read_file", json!({"path": SUMMARY})) + &line("finish", json!({"summary": "done"}))
}

struct Ran {
    h: Harness,
    outcome: RunOutcome,
    events: Vec<rein_engine::agent::AgentEvent>,
    model: PromptRecorder,
}

fn run_with(script: &str, levers: Levers, samples: u32, tap: Option<Tap>) -> Ran {
    run_tweaked(script, levers, samples, tap, |_| {})
}

fn run_tweaked(
    script: &str,
    levers: Levers,
    samples: u32,
    tap: Option<Tap>,
    tweak: impl FnOnce(&mut rein_engine::agent::AgentOptions),
) -> Ran {
    let h = Harness::new("desk_task");
    let mut model = match tap {
        Some(tap) => PromptRecorder::tapped(script, "told.jsonl", tap),
        None => PromptRecorder::new(script, "told.jsonl"),
    };
    let (outcome, events) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.samples = samples;
        o.constrained = true;
        o.limits.attempts = 1;
        tweak(o);
    });
    Ran {
        h,
        outcome,
        events,
        model,
    }
}

fn run(
    script: &str,
    levers: Levers,
    tap: Option<Tap>,
) -> (
    RunOutcome,
    Vec<rein_engine::agent::AgentEvent>,
    PromptRecorder,
) {
    let r = run_with(script, levers, 3, tap);
    (r.outcome, r.events, r.model)
}

/// A tap that cuts request `at` off at the reply cap.
fn cut_at(at: usize) -> Tap {
    cut_all(vec![at])
}

/// The messages of request `i` after those of request `j`, as text (`None` when request `i`
/// does not start with all of `j`'s).
fn added_after(model: &PromptRecorder, i: usize, j: usize) -> Option<String> {
    let all = |k: usize| -> Vec<String> {
        match &model.requests[k].prompt {
            rein_protocol::Prompt::Chat { messages } => {
                messages.iter().map(|m| format!("{m:?}")).collect()
            }
            other => vec![format!("{other:?}")],
        }
    };
    let (longer, shorter) = (all(i), all(j));
    longer
        .starts_with(&shorter)
        .then(|| longer[shorter.len()..].join("\n"))
}

#[test]
fn a_draw_after_a_refused_one_sees_the_draft_and_the_refusal_and_the_run_does_not() {
    let script = writes(&[pasted_fields(), gold_fields()]);
    let Ran {
        h,
        outcome,
        events,
        model,
    } = run_with(&script, levers(true), 3, None);
    assert!(
        outcome.verdict.as_ref().is_some_and(|v| v.passed),
        "{outcome:?}"
    );
    let journaled = &sampling_events(&h.journal, outcome.run)[0]["candidates"];
    assert_eq!(journaled[0]["told"], Value::Null);
    assert!(journaled[1]["told"]
        .as_str()
        .unwrap()
        .contains(REFUSED_NOTE));
    // Requests 0-2 read, 3 is the first draw, 4 the told second draw, 5 the read-back step.
    let told = added_after(&model, 4, 3).expect("the told draw extends the first draw's prompt");
    assert!(told.contains(PASTED), "the draft: {told}");
    assert!(told.contains(REFUSED_NOTE), "{told}");
    assert!(
        told.contains("the same text under `Project summary`, `Goal`"),
        "{told}"
    );
    let (candidates, chosen) = &sampled(&events)[0];
    assert_eq!(candidates.len(), 2, "drawing stops at the clean told draw");
    assert!(candidates[0].skipped.is_some() && candidates[0].told.is_none());
    assert!(candidates[1].skipped.is_none());
    let note = candidates[1]
        .told
        .as_deref()
        .expect("the journal keeps the note");
    assert!(note.contains(REFUSED_NOTE), "{note}");
    assert_eq!(*chosen, 1);
    // The next step's prompt has the proposed write as the model's reply, not the refused
    // draft or Rein's note to the draw.
    let next = model.prompt(5);
    assert!(!next.contains(REFUSED_NOTE), "{next}");
    assert!(!next.contains(PASTED), "{next}");
}

#[test]
fn without_the_lever_every_draw_gets_the_same_prompt() {
    let script = writes(&[pasted_fields(), gold_fields()]);
    let (_, events, model) = run(&script, levers(false), None);
    assert_eq!(added_after(&model, 4, 3).as_deref(), Some(""));
    assert!(sampled(&events)[0].0.iter().all(|c| c.told.is_none()));
}

#[test]
fn a_judged_draw_s_failures_are_never_told() {
    let wrong = wrong_total_fields();
    let script = writes(&[wrong, gold_fields()]);
    let (_, events, model) = run(&script, levers(true), None);
    assert_eq!(
        added_after(&model, 4, 3).as_deref(),
        Some(""),
        "nothing told"
    );
    let (candidates, chosen) = &sampled(&events)[0];
    assert!(candidates[0].failed.contains(&"total-hours".to_string()));
    assert!(candidates[1].told.is_none());
    assert_eq!(*chosen, 1);
}

#[test]
fn after_a_cut_draw_only_the_next_is_asked_for_a_shorter_call_under_short_caps() {
    let script = writes(&[pasted_fields(), pasted_fields(), gold_fields()]);
    // The second draw (request 4) is cut off at the reply cap.
    let (_, events, model) = run(&script, levers(true), Some(cut_at(4)));
    let second = added_after(&model, 4, 3).unwrap();
    assert!(
        second.contains(REFUSED_NOTE) && !second.contains(CUT_NOTE),
        "{second}"
    );
    // The third is told of the draw just before it: the cut, not the older refusal.
    let third = added_after(&model, 5, 3).expect("the third draw extends the first's prompt");
    assert!(third.contains(CUT_NOTE), "{third}");
    assert!(
        !third.contains(REFUSED_NOTE) && !third.contains(PASTED),
        "{third}"
    );
    let (candidates, _) = &sampled(&events)[0];
    assert_eq!(candidates.len(), 3);
    assert_eq!(
        candidates[1].skipped.as_deref(),
        Some("no action could be read")
    );
    assert!(candidates[2]
        .told
        .as_deref()
        .is_some_and(|t| t.contains(CUT_NOTE)));
    assert_eq!(
        write_sections_fields(&model, 5)["Goal"]["maxLength"],
        json!(SHORT_TEXT_MAX_CHARS)
    );
    assert_ne!(
        write_sections_fields(&model, 4)["Goal"]["maxLength"],
        json!(SHORT_TEXT_MAX_CHARS)
    );
    for (i, r) in model.requests.iter().enumerate() {
        if let Some(schema) = &r.json_schema {
            rein_llama::check_schema_grammar(schema)
                .unwrap_or_else(|e| panic!("request {i}: llguidance cannot build it: {e}"));
        }
    }
}

#[test]
fn without_short_after_cut_a_draw_after_a_cut_keeps_the_first_draw_s_schema() {
    let script = writes(&[pasted_fields(), pasted_fields(), gold_fields()]);
    let mut l = levers(true);
    l.short_after_cut = false;
    let (_, _, model) = run(&script, l, Some(cut_at(4)));
    assert!(added_after(&model, 5, 3).unwrap().contains(CUT_NOTE));
    assert_eq!(model.requests[5].json_schema, model.requests[4].json_schema);
}

#[test]
fn a_draw_skipped_for_another_reason_is_not_told_a_refusal() {
    // The second draw reads instead of writing (an endpoint that ignores the schema would):
    // the step would have run it, so the third draw is told nothing.
    let script = reads()
        + &line("write_sections", pasted_fields())
        + &line("read_file", json!({"path": "notes/overview.md"}))
        + &line("write_sections", gold_fields())
        + &read_back_and_finish();
    let (_, events, model) = run(&script, levers(true), None);
    assert!(added_after(&model, 4, 3).unwrap().contains(REFUSED_NOTE));
    assert_eq!(
        added_after(&model, 5, 3).as_deref(),
        Some(""),
        "nothing told"
    );
    let (candidates, chosen) = &sampled(&events)[0];
    assert!(candidates[1].skipped.is_some() && candidates[2].told.is_none());
    assert_eq!(*chosen, 2);
}

#[test]
fn nothing_is_told_when_the_prompt_would_no_longer_fit() {
    // A long refused draft: with the context set just above the transcript, telling it would
    // push the prompt past the budget, so the next draw gets the plain prompt.
    let mut long = pasted_fields();
    let pasted = format!("{PASTED} {}", "word ".repeat(1200));
    long["Project summary"] = json!(pasted);
    long["Goal"] = json!(pasted);
    let script = writes(&[long, gold_fields()]);
    let (_, _, probe) = run(&script, levers(true), None);
    let rein_protocol::Prompt::Chat { messages } = &probe.requests[3].prompt else {
        panic!("a chat prompt");
    };
    let transcript = rein_engine::agent::estimate_tokens(messages);
    // Budget = context - reply cap - margin: room for the transcript and 300 tokens more.
    let context = transcript + 300 + 384 + 128;
    let Ran { events, model, .. } = run_tweaked(&script, levers(true), 3, None, |o| {
        o.context_tokens = Some(context);
    });
    assert_eq!(
        added_after(&model, 4, 3).as_deref(),
        Some(""),
        "nothing told"
    );
    assert!(
        sampled(&events)[0].0[1].told.is_none(),
        "the journal says nothing was told"
    );
    assert!(
        added_after(&probe, 4, 3).unwrap().contains(REFUSED_NOTE),
        "told with room"
    );
}

fn write_sections_fields(model: &PromptRecorder, i: usize) -> Value {
    let schema = model.requests[i].json_schema.clone().unwrap();
    let branch = schema["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["properties"]["action"]["const"] == "write_sections")
        .cloned()
        .unwrap();
    branch["properties"]["parameters"]["properties"].clone()
}

#[test]
fn a_cut_shortens_only_the_draw_after_it() {
    // Four draws: refused, cut, judged (a wrong total), then one told nothing and held to the
    // ordinary schema again.
    let wrong = wrong_total_fields();
    let script = writes(&[pasted_fields(), pasted_fields(), wrong, gold_fields()]);
    let r = run_with(&script, levers(true), 4, Some(cut_at(4)));
    assert!(added_after(&r.model, 5, 3).unwrap().contains(CUT_NOTE));
    assert_eq!(
        added_after(&r.model, 6, 3).as_deref(),
        Some(""),
        "nothing told"
    );
    assert_eq!(
        r.model.requests[6].json_schema,
        r.model.requests[4].json_schema
    );
    assert_ne!(
        r.model.requests[5].json_schema,
        r.model.requests[4].json_schema
    );
    let (candidates, chosen) = &sampled(&r.events)[0];
    assert_eq!(candidates.len(), 4);
    assert!(candidates[3].told.is_none());
    assert_eq!(*chosen, 3);
}

#[test]
fn a_rewrite_section_refusal_is_not_told() {
    // Before the report exists, rewrite_section answers "write it whole with write_sections
    // first": a draw held to rewrite_section cannot do that, so nothing is told.
    let mut l = levers(true);
    l.rewrite_section = true;
    let rewrite = line(
        "rewrite_section",
        json!({"path": SUMMARY, "heading": "Goal", "text": "The app lets members renew loans."}),
    );
    let script = reads()
        + &rewrite
        + &rewrite
        + &rewrite
        + &line("write_sections", gold_fields())
        + &read_back_and_finish();
    let r = run_with(&script, l, 3, None);
    let (candidates, _) = &sampled(&r.events)[0];
    assert!(candidates[0]
        .skipped
        .as_deref()
        .is_some_and(|s| s.contains("does not exist yet")));
    assert!(candidates.iter().all(|c| c.told.is_none()));
    assert_eq!(added_after(&r.model, 4, 3).as_deref(), Some(""));
}

/// A tap that cuts every request in `calls` off at the reply cap.
fn cut_all(calls: Vec<usize>) -> Tap {
    Box::new(move |call, request, c| {
        if calls.contains(&call) {
            let keep = c.text.chars().count() / 2;
            c.text = c.text.chars().take(keep).collect();
            c.finish = FinishReason::Length;
            c.completion_tokens = request.max_tokens;
        }
    })
}

#[test]
fn a_first_write_cut_at_the_cap_is_drawn_again_shorter() {
    let script = writes(&[gold_fields(), gold_fields()]);
    let r = run_with(&script, levers(true), 3, Some(cut_at(3)));
    assert!(
        r.outcome.verdict.as_ref().is_some_and(|v| v.passed),
        "{:?}",
        r.outcome
    );
    let second = added_after(&r.model, 4, 3).expect("the redraw extends the first's prompt");
    assert!(
        second.contains(CUT_NOTE) && !second.contains(REFUSED_NOTE),
        "{second}"
    );
    assert_eq!(
        write_sections_fields(&r.model, 4)["Goal"]["maxLength"],
        json!(SHORT_TEXT_MAX_CHARS)
    );
    let (candidates, chosen) = &sampled(&r.events)[0];
    assert_eq!(candidates.len(), 2);
    assert_eq!(
        candidates[0].skipped.as_deref(),
        Some("no action could be read")
    );
    assert!(candidates[1].passed && *chosen == 1);
    assert_eq!(
        r.outcome.figures.first_draw_passed,
        Some(false),
        "pass@1 stays honest"
    );
}

#[test]
fn without_the_lever_a_cut_first_write_ends_the_step_with_the_generic_advice() {
    let script = writes(&[gold_fields(), gold_fields()]);
    let r = run_with(&script, levers(false), 3, Some(cut_at(3)));
    // The only sampled write is the next step's whole one.
    let writes = sampled(&r.events);
    assert_eq!(writes.len(), 1);
    assert!(writes[0].0[0].skipped.is_none());
    let next = r.model.prompt(4);
    assert!(next.contains("create it with its first part"), "{next}");
}

#[test]
fn after_every_draw_of_a_write_is_cut_the_step_asks_for_shorter_fields_not_parts() {
    let script = writes(&[gold_fields(), gold_fields(), gold_fields(), gold_fields()]);
    let r = run_with(&script, levers(true), 3, Some(cut_all(vec![3, 4, 5])));
    let (candidates, chosen) = &sampled(&r.events)[0];
    assert_eq!(candidates.len(), 3);
    assert!(candidates.iter().all(|c| c.skipped.is_some()));
    assert_eq!(*chosen, 0);
    let next = r.model.prompt(6);
    assert!(
        next.contains("Make the write_sections call shorter"),
        "{next}"
    );
    assert!(!next.contains("create it with its first part"), "{next}");
}

#[test]
fn a_cut_call_of_another_tool_that_names_the_writer_in_its_thought_is_not_redrawn() {
    // The thought quotes the writer's key (escaped inside the string); the call is create_file.
    let create = json!({
        "thought": "Not \"action\": \"write_sections\" this time.",
        "action": "create_file",
        "parameters": {"path": SUMMARY, "content": "x".repeat(400)}
    })
    .to_string()
        + "\n";
    let script =
        reads() + &create + &line("write_sections", gold_fields()) + &read_back_and_finish();
    let r = run_with(&script, levers(true), 3, Some(cut_at(3)));
    let writes = sampled(&r.events);
    assert!(
        writes.iter().all(|(c, _)| c[0].skipped.is_none()),
        "no cut draw was sampled"
    );
    assert!(r.model.prompt(4).contains("create it with its first part"));
}

#[test]
fn with_one_sample_the_lever_changes_nothing() {
    let script = writes(&[gold_fields(), gold_fields()]);
    let r = run_with(&script, levers(true), 1, Some(cut_at(3)));
    assert!(sampled(&r.events).is_empty());
    assert!(r.model.prompt(4).contains("create it with its first part"));
}
