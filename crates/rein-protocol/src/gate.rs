//! A tool call as the harness receives it, and the one outcome the execution gate gives it.

use serde::{Deserialize, Serialize};

/// One call of a registered tool. The id makes the effect happen at most once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub tool: String,
    #[serde(default)]
    pub arguments: serde_json::Value,
}

/// Exactly one of these for every call that reaches the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GateOutcome {
    Invalid,
    Denied,
    ApprovalRequired,
    BudgetExhausted,
    Executed,
    Replayed,
    IdConflict,
}

impl GateOutcome {
    pub fn as_str(&self) -> &'static str {
        match self {
            GateOutcome::Invalid => "invalid",
            GateOutcome::Denied => "denied",
            GateOutcome::ApprovalRequired => "approval-required",
            GateOutcome::BudgetExhausted => "budget-exhausted",
            GateOutcome::Executed => "executed",
            GateOutcome::Replayed => "replayed",
            GateOutcome::IdConflict => "id-conflict",
        }
    }

    /// Whether the call took effect: run now, or its journaled result replayed.
    pub fn ran(self) -> bool {
        matches!(self, GateOutcome::Executed | GateOutcome::Replayed)
    }
}

/// What `rein tool` prints and what the agent loop feeds back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateReport {
    pub outcome: GateOutcome,
    pub reason: String,
    pub result: serde_json::Value,
}
