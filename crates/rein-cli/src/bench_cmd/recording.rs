//! The recorder: a model wrapper that times every call and keeps what the model streamed, and
//! the step trace read back from the journal. Model time is measured here, around the calls, so
//! it counts everything the harness waited for (the worker process, the HTTP round trip).

use std::time::Instant;

use rein_bench::results::{RunTrace, StreamedReply, TraceStep};
use rein_journal::{Journal, RunId};
use rein_models::{
    ChooseReply, ChooseRequest, Completion, CompletionRequest, Model, ModelIdentity,
};
use serde_json::Value;

/// Forwards every call to `inner`, timing it and keeping each completion's streamed text (and
/// handing each piece to `tap` as it arrives, when there is one: the web UI's live stream).
pub(crate) struct Recording<'a> {
    inner: &'a mut dyn Model,
    pub stream: Vec<StreamedReply>,
    pub model_ms: f64,
    tap: Option<&'a mut (dyn FnMut(&str) + Send)>,
    /// The last decision's reply (its timing and label mass), when it succeeded.
    pub last_choice: Option<ChooseReply>,
}

impl<'a> Recording<'a> {
    pub fn new(inner: &'a mut dyn Model) -> Recording<'a> {
        Recording {
            inner,
            stream: Vec::new(),
            model_ms: 0.0,
            tap: None,
            last_choice: None,
        }
    }

    /// A recording that also hands every streamed piece to `tap`.
    pub fn tapped(
        inner: &'a mut dyn Model,
        tap: &'a mut (dyn FnMut(&str) + Send),
    ) -> Recording<'a> {
        Recording {
            tap: Some(tap),
            ..Recording::new(inner)
        }
    }
}

impl Model for Recording<'_> {
    fn identity(&self) -> &ModelIdentity {
        self.inner.identity()
    }

    fn complete(
        &mut self,
        request: &CompletionRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> rein_models::Result<Completion> {
        let started = Instant::now();
        let mut text = String::new();
        let tap = &mut self.tap;
        let reply = self.inner.complete(request, &mut |piece| {
            text.push_str(piece);
            if let Some(tap) = tap.as_mut() {
                tap(piece);
            }
            on_text(piece);
        });
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        self.model_ms += ms;
        let (prompt_tokens, completion_tokens) = match &reply {
            Ok(c) => (u64::from(c.prompt_tokens), u64::from(c.completion_tokens)),
            Err(_) => (0, 0),
        };
        self.stream.push(StreamedReply {
            text,
            ms: ms.round() as u64,
            prompt_tokens,
            completion_tokens,
        });
        reply
    }

    fn choose(&mut self, request: &ChooseRequest) -> rein_models::Result<ChooseReply> {
        let started = Instant::now();
        let reply = self.inner.choose(request);
        self.model_ms += started.elapsed().as_secs_f64() * 1000.0;
        self.last_choice = reply.as_ref().ok().cloned();
        reply
    }
}

/// The step trace of journal run `run`, with the streamed replies beside it.
pub(super) fn trace(
    journal: &Journal,
    run: RunId,
    stream: Vec<StreamedReply>,
) -> anyhow::Result<RunTrace> {
    let t = journal.run_trace(run)?;
    let text = |d: &Value, key: &str| d.get(key).and_then(Value::as_str).map(str::to_string);
    let steps = t
        .steps
        .iter()
        .map(|ts| {
            let s = &ts.step;
            TraceStep {
                seq: u32::try_from(s.seq).unwrap_or(u32::MAX),
                kind: s.kind.to_string(),
                thought: s.thought.clone(),
                by: text(&s.detail, "by"),
                action: s.action.clone(),
                parameters: s.detail.get("parameters").cloned(),
                gate: ts.call.as_ref().map(|c| c.outcome.to_string()),
                gate_reason: ts
                    .call
                    .as_ref()
                    .map(|c| c.reason.clone())
                    .filter(|r| !r.is_empty()),
                result: ["summary", "message", "model_error"]
                    .iter()
                    .find_map(|k| text(&s.detail, k)),
                prompt_tokens: s
                    .prompt_tokens
                    .and_then(|n| u64::try_from(n).ok())
                    .unwrap_or(0),
                completion_tokens: s
                    .completion_tokens
                    .and_then(|n| u64::try_from(n).ok())
                    .unwrap_or(0),
                elapsed_ms: s
                    .elapsed_ms
                    .and_then(|n| u64::try_from(n).ok())
                    .unwrap_or(0),
            }
        })
        .collect();
    Ok(RunTrace { steps, stream })
}
