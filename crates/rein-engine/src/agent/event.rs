//! What the loop reports as it goes. Every front (the terminal, `--json` lines, the web UI)
//! renders these same events, so the loop never depends on a front.

use rein_journal::RunId;
use serde::Serialize;
use serde_json::Value;

use crate::checks::CheckResult;

/// One step as it happened: the model's action, the gate's outcome and a short result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepEvent {
    /// 1, 2, ... within the run (turns, across attempts).
    pub step: u32,
    pub attempt: u32,
    /// `action`, `format_error`, `refusal` (a refused finish or unknown tool) or `cap`.
    pub kind: String,
    pub thought: Option<String>,
    pub action: Option<String>,
    pub parameters: Option<Value>,
    pub call_id: Option<String>,
    /// The gate's outcome (`executed`, `denied`, ...) or the loop's own (`refused`,
    /// `format-error`, `cap`).
    pub outcome: String,
    /// One line for a person: what happened.
    pub summary: String,
    /// Whether the reply needed repair to be read (never for constrained decoding).
    pub repaired: bool,
    pub prompt_tokens: u32,
    pub cached_tokens: u32,
    pub completion_tokens: u32,
    pub elapsed_ms: u64,
}

/// One change the harness undid, and the change that undid it (`rein undo UNDO_CHANGE` redoes
/// it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UndoneChange {
    pub change: i64,
    pub undo_change: i64,
    pub path: String,
    pub diff: String,
}

/// Everything the loop reports, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AgentEvent {
    RunStarted {
        run: RunId,
        mission: String,
        contract_sha256: String,
        model: String,
        workspace: String,
        max_turns: u32,
        timeout_secs: u64,
    },
    AttemptStarted {
        attempt: u32,
    },
    Plan {
        steps: Vec<String>,
    },
    Step(StepEvent),
    Cap {
        cap: String,
        message: String,
    },
    /// Something happened to the model backend that a person should know (a worker was
    /// restarted after a crash or a silence).
    ModelNotice {
        message: String,
    },
    FinishRefused {
        step: u32,
        reason: String,
    },
    FinishAccepted {
        step: u32,
    },
    Check(CheckResult),
    AttemptFinished {
        attempt: u32,
        outcome: String,
    },
    /// The `monotone-attempts` lever undid an attempt's changes through the journal: they made
    /// a check fail that the previous version passed (`broke`), so the previous version stands.
    /// `error` says why an undo stopped short (the file changed since); the world is then
    /// judged as it is.
    AttemptUndone {
        attempt: u32,
        broke: Vec<String>,
        undone: Vec<UndoneChange>,
        error: Option<String>,
    },
    /// Verified sampling drew `candidates` for a write of the deliverable and proposes
    /// `chosen` (an index into them) through the gate.
    Sampled {
        step: u32,
        candidates: Vec<super::sampling::Candidate>,
        chosen: usize,
    },
    /// The run ended; `status` is `pass`, `fail` or `aborted`.
    RunEnded {
        run: RunId,
        status: String,
        reason: String,
    },
}
