//! The chat protocol: what a person (or a front end) sends to a chat session, and what the
//! session reports back. `rein chat DIR --json` writes these as JSON lines (one request per
//! stdin line, one event per stdout line); the terminal chat renders the same events, and the
//! web pages reuse them. docs/chat-protocol.md documents every field.
//!
//! Every request carries an `id` chosen by the sender; every event carries a session-wide `seq`
//! (1, 2, ...) and, when it answers a request, that request's id in `request`.

use serde::{Deserialize, Serialize};

use crate::cowork::{EvidenceReview, Route, WriteReview};

/// One request, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ChatRequest {
    /// The person's message. Refused while a turn is running (messages are not queued).
    UserMessage { id: String, text: String },
    /// Allow the approval card once. There is no "always".
    Approve { id: String, approval: i64 },
    /// Refuse the approval card.
    Deny {
        id: String,
        approval: i64,
        #[serde(default)]
        reason: Option<String>,
    },
    /// Stop the running turn after the current model call; it is recorded as interrupted and
    /// never resumed.
    Interrupt { id: String },
}

impl ChatRequest {
    pub fn id(&self) -> &str {
        match self {
            ChatRequest::UserMessage { id, .. }
            | ChatRequest::Approve { id, .. }
            | ChatRequest::Deny { id, .. }
            | ChatRequest::Interrupt { id } => id,
        }
    }
}

/// One event: a sequence number, the request it answers (if any), the turn it belongs to (if
/// any), and what happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatEvent {
    pub seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<i64>,
    /// Unix milliseconds, from the session's clock.
    pub at: i64,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEnd {
    /// The actor answered.
    Answered,
    /// The actor proposed a change that now waits for the person's decision.
    Proposed,
    /// The turn reached the tool-round cap and stopped.
    Stopped,
    /// The person interrupted it.
    Interrupted,
    /// The model or a store failed; `message` says what to do.
    Failed,
}

impl TurnEnd {
    pub fn as_str(self) -> &'static str {
        match self {
            TurnEnd::Answered => "answered",
            TurnEnd::Proposed => "proposed",
            TurnEnd::Stopped => "stopped",
            TurnEnd::Interrupted => "interrupted",
            TurnEnd::Failed => "failed",
        }
    }
}

/// The person's decision on an approval card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    AllowOnce,
    Deny,
}

/// One row of the side-by-side view of a diff: the old line on the left, the new on the right.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideBySideRow {
    /// `same`, `removed`, `added`, `changed`, or `gap` (lines between hunks not shown).
    pub kind: String,
    #[serde(default)]
    pub old_line: Option<u64>,
    #[serde(default)]
    pub old: Option<String>,
    #[serde(default)]
    pub new_line: Option<u64>,
    #[serde(default)]
    pub new: Option<String>,
}

/// What happened, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// The session is ready (first event).
    SessionStarted {
        conversation: i64,
        workspace: String,
        actor: String,
        #[serde(default)]
        decision: Option<String>,
    },
    /// A message was accepted and a turn began.
    TurnStarted { conversation: i64 },
    /// The router's answer: a hint for the actor, never a permission.
    Route { route: Route },
    /// A piece of the actor's reply as it streams (model text: escape before showing it).
    Token { text: String },
    /// The actor called a tool; reads run at once, changes go to the write gate.
    ToolCall {
        call_id: String,
        tool: String,
        arguments: serde_json::Value,
        /// `executed` (a read ran), `proposed` (a change went to the write gate), `invalid`.
        outcome: String,
        /// A short account of the result, in Rein's words.
        summary: String,
    },
    /// The write gate's review of a proposed change.
    GateOutcome {
        call_id: String,
        path: String,
        review: WriteReview,
    },
    /// The change was held: no approval card, nothing written.
    Hold {
        call_id: String,
        path: String,
        confidence_bps: u32,
        reason: String,
    },
    /// An approval card: the exact diff, a side-by-side view, allow once or deny.
    ApprovalRequested {
        approval: i64,
        call_id: String,
        tool: String,
        path: String,
        diff: String,
        side_by_side: Vec<SideBySideRow>,
        before_sha256: Option<String>,
        after_sha256: Option<String>,
        expires_at: i64,
        remaining_ms: i64,
    },
    /// The person decided.
    ApprovalDecided {
        approval: i64,
        decision: Decision,
        decided_at: i64,
    },
    /// Cards that reached their deadline undecided (expired together, in one batch).
    ApprovalExpired { approvals: Vec<i64> },
    /// The approved change was applied exactly once, journaled and undoable.
    ApprovalApplied {
        approval: i64,
        change_id: i64,
        path: String,
        /// The command that reverts it.
        undo: String,
    },
    /// The approved change was not applied (the file changed since, ...); nothing was written.
    ApprovalFailed { approval: i64, reason: String },
    /// The answer was not well supported by what was read (advisory).
    Caution { review: EvidenceReview },
    /// The turn ended; `message` is the answer or what stopped it.
    TurnEnded { status: TurnEnd, message: String },
    /// A request was refused or something failed; `message` says what to do.
    Error { message: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_read_as_documented_and_refuse_unknown_fields() {
        let parse = |s: &str| serde_json::from_str::<ChatRequest>(s);
        assert_eq!(
            parse(r#"{"type":"user_message","id":"m1","text":"hi"}"#).ok(),
            Some(ChatRequest::UserMessage {
                id: "m1".into(),
                text: "hi".into()
            })
        );
        assert_eq!(
            parse(r#"{"type":"approve","id":"a","approval":3}"#)
                .ok()
                .map(|r| r.id().to_string()),
            Some("a".into())
        );
        assert!(parse(r#"{"type":"deny","id":"d","approval":3}"#).is_ok());
        assert!(parse(r#"{"type":"interrupt","id":"i"}"#).is_ok());
        // No "always", no smuggled fields, no approving by path.
        assert!(parse(r#"{"type":"approve","id":"a","approval":3,"always":true}"#).is_err());
        assert!(parse(r#"{"type":"allow_always","id":"a","approval":3}"#).is_err());
        assert!(parse(r#"{"type":"approve","id":"a","path":"x"}"#).is_err());
    }

    #[test]
    fn events_are_flat_objects_with_a_type() {
        let event = ChatEvent {
            seq: 4,
            request: Some("m1".into()),
            turn: Some(2),
            at: 10,
            kind: EventKind::TurnEnded {
                status: TurnEnd::Stopped,
                message: "m".into(),
            },
        };
        let value = serde_json::to_value(&event).unwrap_or_default();
        assert_eq!(
            value,
            serde_json::json!({"seq": 4, "request": "m1", "turn": 2, "at": 10,
                               "type": "turn_ended", "status": "stopped", "message": "m"})
        );
        let back: Result<ChatEvent, _> = serde_json::from_value(value);
        assert_eq!(back.ok(), Some(event));
    }
}
