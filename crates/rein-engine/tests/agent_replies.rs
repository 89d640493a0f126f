#![allow(clippy::unwrap_used, clippy::expect_used)]

//! What the loop does with replies it cannot use, tools it does not have, approvals nobody can
//! give, models that fail, and prompts that outgrow the context window.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, RunEnd, MAX_REPLY_TOKENS};
use rein_engine::gate::{AllowAll, NoApprover};
use rein_journal::{RunStatus, StepKind};
use rein_models::{
    ChooseReply, ChooseRequest, Completion, CompletionRequest, Model, ModelIdentity, ScriptedModel,
};
use support::{fixture, Harness};

#[test]
fn a_repairable_reply_is_read_and_an_unreadable_one_costs_a_step() {
    let h = Harness::new("desk_task");
    let (out, events) = h.run_fixture("malformed.jsonl", |_| {});
    assert!(out.passed(), "{:#?}", out.document());
    assert_eq!(out.figures.steps, 7);
    assert_eq!(out.figures.format_errors, 1);
    assert_eq!(out.figures.repaired, 1);
    let steps: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Step(s) => Some(s),
            _ => None,
        })
        .collect();
    assert!(steps[0].repaired && steps[0].outcome == "executed");
    assert_eq!(steps[1].kind, "format_error");
    assert_eq!(steps[1].outcome, "format-error");
    let trace = h.journal.run_trace(out.run).unwrap();
    let bad = &trace.steps[1].step;
    assert_eq!(bad.kind, StepKind::FormatError);
    assert_eq!(
        bad.reply.as_deref(),
        Some("I will read the meeting notes next, then the tasks.")
    );
    assert!(bad.detail["message"]
        .as_str()
        .unwrap()
        .contains("Reply with exactly one such object"));
}

#[test]
fn exhausted_replies_end_the_run_cleanly() {
    let h = Harness::new("desk_task");
    let (out, events) = h.run_fixture("exhausted.jsonl", |_| {});
    let RunEnd::ModelFailed { message } = &out.end else {
        panic!("{:?}", out.end)
    };
    assert!(message.contains("no replies left"), "{message}");
    assert_eq!(out.exit_code(), 3);
    assert!(
        matches!(events.last(), Some(AgentEvent::RunEnded { status, .. }) if status == "aborted")
    );
    let trace = h.journal.run_trace(out.run).unwrap();
    assert_eq!(trace.run.status, RunStatus::Aborted);
    assert_eq!(trace.run.verdict.as_ref().unwrap()["end"], "model_failed");
    // Two actions and the note of the failure.
    assert_eq!(trace.steps.len(), 3);
    assert!(trace.steps[2].step.detail["model_error"].is_string());
}

#[test]
fn an_unknown_tool_is_refused_and_counted_in_a_mission() {
    let h = Harness::new("desk_task");
    let (out, events) = h.run_fixture("unknown_tool.jsonl", |_| {});
    assert!(out.passed());
    assert_eq!(out.figures.unknown_tools, 1);
    let first = events.iter().find_map(|e| match e {
        AgentEvent::Step(s) => Some(s.clone()),
        _ => None,
    });
    let first = first.unwrap();
    assert_eq!(first.outcome, "invalid");
    assert!(
        first.summary.contains("unknown tool \"run_shell\""),
        "{}",
        first.summary
    );
}

#[test]
fn an_unknown_tool_stops_a_bench_run_at_once() {
    let h = Harness::new("desk_task");
    let (out, _) = h.run_fixture("unknown_tool.jsonl", |o| o.bench = true);
    let RunEnd::UnknownTool { message } = &out.end else {
        panic!("{:?}", out.end)
    };
    assert!(message.contains("run_shell"), "{message}");
    assert_eq!(out.figures.steps, 1);
    assert_eq!(out.exit_code(), 1);
}

#[test]
fn a_change_nobody_can_approve_ends_the_run_approval_required() {
    let h = Harness::new("desk_task");
    let mut model = ScriptedModel::load(fixture("good.jsonl")).unwrap();
    let (out, _) = h.run_model(&mut model, &mut NoApprover, |_| {}, None, &mut |_| {});
    let RunEnd::ApprovalUnavailable { message } = &out.end else {
        panic!("{:?}", out.end)
    };
    assert!(
        message.contains("create_file needs a person's approval"),
        "{message}"
    );
    assert_eq!(out.exit_code(), 2);
    assert!(!h.workspace.join("out/summary.md").exists());
}

#[test]
fn a_human_review_only_mission_is_refused_for_automatic_judgment() {
    let h = Harness::new("screen_qa");
    let (out, _) = h.run_fixture("good.jsonl", |_| {});
    let RunEnd::Refused { message } = &out.end else {
        panic!("{:?}", out.end)
    };
    assert!(message.contains("human_review_only"), "{message}");
    assert_eq!(out.figures.steps, 0);
    assert_eq!(out.exit_code(), 2);

    // Qualification runs it (and judges every check, semantic ones included).
    let h = Harness::new("screen_qa");
    let (out, _) = h.run_fixture("exhausted.jsonl", |o| o.automatic_judgment = false);
    assert!(matches!(out.end, RunEnd::ModelFailed { .. }));
    assert_eq!(
        out.verdict.unwrap().checks.len(),
        h.contract.mission.checks.len()
    );
}

/// Wraps a scripted model, reporting a small context window and keeping every request.
struct Recording {
    inner: ScriptedModel,
    identity: ModelIdentity,
    requests: Vec<CompletionRequest>,
}

impl Model for Recording {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }
    fn complete(
        &mut self,
        request: &CompletionRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> rein_models::Result<Completion> {
        self.requests.push(request.clone());
        self.inner.complete(request, on_text)
    }
    fn choose(&mut self, request: &ChooseRequest) -> rein_models::Result<ChooseReply> {
        self.inner.choose(request)
    }
}

fn recording(context_tokens: u32, spec: &str) -> Recording {
    let inner = ScriptedModel::load(fixture("good.jsonl")).unwrap();
    let mut identity = inner.identity().clone();
    identity.context_tokens = context_tokens;
    identity.spec = spec.into();
    Recording {
        inner,
        identity,
        requests: Vec::new(),
    }
}

#[test]
fn old_steps_are_trimmed_to_fit_the_context_keeping_the_task() {
    let h = Harness::new("desk_task");
    let mut model = recording(2_000, "scripted:good.jsonl");
    let (out, _) = h.run_model(&mut model, &mut AllowAll, |_| {}, None, &mut |_| {});
    assert!(out.passed(), "{:#?}", out.document());
    assert!(out.figures.trimmed_steps > 0);
    let last = model.requests.last().unwrap();
    let rein_models::Prompt::Chat { messages } = &last.prompt else {
        panic!()
    };
    let text: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
    assert!(text[1].contains("Deliverable: out/summary.md"));
    assert!(
        text[2].contains("trimmed to fit the context window"),
        "{}",
        text[2]
    );
    assert!(
        text[2].contains("read_file notes/overview.md"),
        "{}",
        text[2]
    );
    let chars: usize = text.iter().map(|t| t.len()).sum();
    assert!(chars < 2_000 * 7 / 2, "{chars}");
}

#[test]
fn requests_use_the_actor_profile_the_reply_cap_and_a_growing_prefix() {
    let h = Harness::new("desk_task");
    let mut model = recording(0, "scripted:good.jsonl");
    h.run_model(&mut model, &mut AllowAll, |_| {}, None, &mut |_| {});
    for r in &model.requests {
        assert_eq!(r.max_tokens, MAX_REPLY_TOKENS);
        assert_eq!(r.sampling, rein_models::SamplingProfile::ACTOR);
        assert!(
            r.json_schema.is_none(),
            "scripted replies go through repair"
        );
    }
    // Each prompt starts with the whole previous prompt (KV cache reuse).
    for pair in model.requests.windows(2) {
        let (rein_models::Prompt::Chat { messages: a }, rein_models::Prompt::Chat { messages: b }) =
            (&pair[0].prompt, &pair[1].prompt)
        else {
            panic!()
        };
        assert_eq!(&b[..a.len()], &a[..]);
    }
}

#[test]
fn embedded_models_decode_under_the_mission_action_schema() {
    let h = Harness::with_edit("desk_task", |v| {
        v["tools"] = serde_json::json!(["read_file", "create_file", "finish"]);
    });
    // A catalog spec marks the model as embedded.
    let mut model = recording(0, "qwen2.5-coder-0.5b");
    h.run_model(&mut model, &mut AllowAll, |_| {}, None, &mut |_| {});
    let schema = model.requests[0].json_schema.as_ref().unwrap();
    let names: Vec<&str> = schema["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["properties"]["action"]["const"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["read_file", "create_file", "finish"]);
    let rein_models::Prompt::Chat { messages } = &model.requests[0].prompt else {
        panic!()
    };
    assert!(messages[0]
        .content
        .contains("- read_file {\"path\": string"));
    assert!(!messages[0].content.contains("- delete_file"));
}

#[test]
fn remote_endpoints_are_sent_the_mission_action_schema() {
    // Before, only embedded models got it and a remote model decoded unconstrained (the 0.5B
    // behind llama-server sent `path` as an array until the no-progress cap).
    let h = Harness::with_edit("desk_task", |v| {
        v["tools"] = serde_json::json!(["read_file", "create_file", "finish"]);
    });
    let mut model = recording(0, "openai:http://127.0.0.1:8080#qwen");
    h.run_model(&mut model, &mut AllowAll, |_| {}, None, &mut |_| {});
    assert!(!model.requests.is_empty());
    for r in &model.requests {
        let schema = r
            .json_schema
            .as_ref()
            .expect("every action request carries the schema");
        assert_eq!(schema["anyOf"].as_array().unwrap().len(), 3);
    }
}

/// A scripted model whose backend restarted once before its first reply.
struct Restarted {
    inner: ScriptedModel,
    notice: Option<String>,
}

impl Model for Restarted {
    fn identity(&self) -> &ModelIdentity {
        self.inner.identity()
    }
    fn complete(
        &mut self,
        request: &CompletionRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> rein_models::Result<Completion> {
        self.inner.complete(request, on_text)
    }
    fn choose(&mut self, request: &ChooseRequest) -> rein_models::Result<ChooseReply> {
        self.inner.choose(request)
    }
    fn take_notices(&mut self) -> Vec<String> {
        self.notice.take().into_iter().collect()
    }
}

#[test]
fn a_worker_restart_is_reported_once_and_journaled() {
    let h = Harness::new("desk_task");
    let mut model = Restarted {
        inner: ScriptedModel::load(fixture("good.jsonl")).unwrap(),
        notice: Some("the worker of m stopped (timeout); it was started again".into()),
    };
    let (out, events) = h.run_model(&mut model, &mut AllowAll, |_| {}, None, &mut |_| {});
    assert!(out.passed(), "{:#?}", out.document());
    let notices: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ModelNotice { message } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 1, "{events:#?}");
    assert!(notices[0].contains("started again"));
    let trace = h.journal.run_trace(out.run).unwrap();
    let journaled: Vec<_> = trace
        .events
        .iter()
        .filter(|e| e.kind == "model_notice")
        .collect();
    assert_eq!(journaled.len(), 1);
    assert!(journaled[0].payload["message"]
        .as_str()
        .unwrap()
        .contains("started again"));
}

/// A scripted model that counts tokens more densely than Rein's estimate (2 characters a token),
/// refuses a prompt longer than its window with its count, as llama.cpp does, and reports
/// accepted prompts at the estimate's density.
struct Dense {
    inner: ScriptedModel,
    identity: ModelIdentity,
    refused: u32,
    longest: u32,
}

impl Dense {
    fn count(request: &CompletionRequest) -> u32 {
        let rein_models::Prompt::Chat { messages } = &request.prompt else {
            return 0;
        };
        messages
            .iter()
            .map(|m| m.content.len() as u32 / 2 + 4)
            .sum()
    }
}

impl Model for Dense {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }
    fn complete(
        &mut self,
        request: &CompletionRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> rein_models::Result<Completion> {
        let tokens = Self::count(request);
        let context = self.identity.context_tokens;
        if tokens + request.max_tokens > context {
            self.refused += 1;
            return Err(rein_models::ModelError::PromptTooLong { tokens, context });
        }
        self.longest = self.longest.max(tokens);
        let mut done = self.inner.complete(request, on_text)?;
        // It under-reports what it accepted, so only a refusal can teach Rein its real count.
        done.prompt_tokens = tokens * 4 / 7;
        Ok(done)
    }
    fn choose(&mut self, request: &ChooseRequest) -> rein_models::Result<ChooseReply> {
        self.inner.choose(request)
    }
}

#[test]
fn a_prompt_the_model_counts_as_too_long_is_trimmed_and_asked_again() {
    let h = Harness::new("desk_task");
    let inner = ScriptedModel::load(fixture("good.jsonl")).unwrap();
    let mut identity = inner.identity().clone();
    identity.context_tokens = 3_600;
    let mut model = Dense {
        inner,
        identity,
        refused: 0,
        longest: 0,
    };
    let (out, _) = h.run_model(&mut model, &mut AllowAll, |_| {}, None, &mut |_| {});
    assert!(out.passed(), "{:#?}", out.document());
    assert!(out.figures.trimmed_steps > 0);
    // Refusals happen at most while the estimate is learned, never for every step.
    assert!(
        (1..=2).contains(&model.refused),
        "refused {} prompts",
        model.refused
    );
    assert!(model.longest <= 3_600, "{}", model.longest);
}

/// The text of the last prompt `model` was sent, and the run's trimmed-step count.
fn last_prompt_with_levers(context: u32, keep_inputs: bool) -> (String, u32) {
    let h = Harness::new("desk_task");
    let mut model = recording(context, "scripted:good.jsonl");
    let (out, _) = h.run_model(
        &mut model,
        &mut AllowAll,
        |o| o.levers.keep_inputs = keep_inputs,
        None,
        &mut |_| {},
    );
    assert!(out.passed(), "{:#?}", out.document());
    let rein_models::Prompt::Chat { messages } = &model.requests.last().unwrap().prompt else {
        panic!()
    };
    let text = messages
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    (text, out.figures.trimmed_steps)
}

/// Lever `keep-inputs`: trimming drops the other steps first, so the inputs' text is still in
/// the prompt when the model writes and checks the report; without it the reads go first.
#[test]
fn kept_inputs_outlast_trimming_and_without_the_lever_they_go_first() {
    // A line of each input as read_file returns it (inside the JSON of its result).
    let lines = [
        "Launch target: 30 June",
        "Next meeting: 26 May",
        "Release checklist,Maya,planned,4",
    ];
    let (kept, trimmed_kept) = last_prompt_with_levers(3_000, true);
    let (plain, trimmed_plain) = last_prompt_with_levers(3_000, false);
    assert!(
        trimmed_kept > 0 && trimmed_plain > 0,
        "{trimmed_kept} {trimmed_plain}"
    );
    for line in lines {
        assert!(
            kept.contains(line),
            "{line} missing with keep-inputs:\n{kept}"
        );
        assert!(
            !plain.contains(line),
            "{line} kept without the lever:\n{plain}"
        );
    }
    assert!(kept.contains("earlier steps were trimmed"), "{kept}");
    assert!(plain.contains("earliest steps were trimmed"), "{plain}");
}
