//! Rein's stores: three SQLite files, each with its own type.
//!
//! - [`Journal`] (`journal.db`): verified runs, their steps, attempts, tool calls, check results
//!   and events; content-addressed artifacts; frozen acceptance specs; and the changes of the
//!   exactly-once apply protocol. Append-only, enforced by triggers in the schema.
//! - [`ChatStore`] (`chat.db`): conversations, turns and approval cards. A conversation is not a
//!   verified run: chat never writes the journal.
//! - [`JobStore`] (`jobs.db`): long-running jobs; a job left running by a process that is gone
//!   becomes `interrupted` when the store is opened, and is never resumed silently. A bench job
//!   also holds its work items ([`BenchItem`]), each queued, running, done or interrupted.
//!
//! Every file uses WAL mode, foreign keys, a busy timeout and `user_version` migrations (see
//! [`migrate`]). A file that is not the right Rein store, is damaged, or was written by a newer
//! Rein is refused with an error naming it, and left untouched. No SQL exists outside this crate.
//! Timestamps are unix milliseconds.

pub mod bench_items;
pub mod chat;
mod db;
pub mod error;
pub mod jobs;
pub mod journal;
pub mod migrate;

pub use bench_items::{BenchItem, BenchItemId, BenchItemState, NewBenchItem};
pub use chat::{
    Approval, ApprovalId, ApprovalStatus, ChatEventRecord, ChatStore, Conversation, ConversationId,
    History, NewApproval, Turn, TurnId, TurnRole, TurnRun, TurnRunId, TurnRunStatus,
    APPROVAL_LIFETIME_MS,
};
pub use error::{Error, Result};
pub use jobs::{Job, JobId, JobOwner, JobState, JobStore, NewJob};
pub use journal::{
    AcceptanceSpec, Attempt, AttemptId, CallOutcome, CallRecord, CallScope, Change, ChangeId,
    ChangeIntent, ChangeState, CheckId, CheckResult, Event, EventId, Journal, NewCheck, NewRun,
    NewStep, RecordedCall, Replay, RunId, RunKind, RunStatus, RunSummary, RunTrace, Step, StepId,
    StepKind, ToolCallId, TraceStep,
};
pub use migrate::StoreKind;

/// The current time in unix milliseconds.
pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

pub use rein_protocol::canonical::{canonical_json, sha256_hex};

/// Whether `text` is a lower-case hex SHA-256 (64 characters of `0-9a-f`).
pub fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
