//! `journal.db`: what happened in verified runs, append-only.
//!
//! Writers: the agent loop ([`Journal::begin_run`], [`Journal::append_step`],
//! [`Journal::record_check`], [`Journal::finish_run`]), the execution gate
//! ([`Journal::record_tool_call`], [`Journal::check_replay`]), the apply protocol
//! ([`Journal::put_artifact`], [`Journal::record_intent`], [`Journal::mark_committed`], ...), and
//! mission loading ([`Journal::store_acceptance_spec`]). Readers: `rein journal list|show`
//! ([`Journal::list_runs`], [`Journal::run_trace`]) and `rein changes|undo`.

mod calls;
mod changes;
mod content;
mod runs;

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::db::{id_type, Db};
use crate::error::Result;
use crate::migrate::StoreKind;

pub use calls::{CallOutcome, CallRecord, RecordedCall, Replay, ToolCallId};
pub use changes::{Change, ChangeId, ChangeIntent, ChangeState};
pub use content::AcceptanceSpec;
pub use runs::{
    Attempt, AttemptId, CheckId, CheckResult, Event, EventId, NewCheck, NewRun, NewStep, RunKind,
    RunStatus, RunSummary, RunTrace, Step, StepId, StepKind, TraceStep,
};

id_type! {
    /// A run in the journal (`rein journal show RUN`).
    RunId
}

/// The journal store. See the module documentation.
#[derive(Debug)]
pub struct Journal {
    db: Db,
}

impl Journal {
    /// Open `journal.db` at `path`, creating it (and its directory) if absent and migrating it to
    /// the current schema. Refuses a file that is not a Rein journal, is damaged, or is newer.
    pub fn open(path: impl AsRef<Path>) -> Result<Journal> {
        Ok(Journal {
            db: Db::open(path.as_ref(), StoreKind::Journal)?,
        })
    }

    /// The file this journal lives in.
    pub fn path(&self) -> &Path {
        &self.db.path
    }
}

/// Where a call id is unique: within a run, or (for calls outside any run, such as `rein tool`)
/// within a workspace. Replay and exactly-once apply are keyed by scope and call id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallScope {
    Run(RunId),
    Workspace(String),
}

impl CallScope {
    /// The text key stored with each row (`run:12`, `workspace:/path`).
    pub(crate) fn key(&self) -> String {
        match self {
            CallScope::Run(run) => format!("run:{run}"),
            CallScope::Workspace(root) => format!("workspace:{root}"),
        }
    }

    pub(crate) fn run(&self) -> Option<RunId> {
        match self {
            CallScope::Run(run) => Some(*run),
            CallScope::Workspace(_) => None,
        }
    }

    pub(crate) fn workspace(&self) -> Option<&str> {
        match self {
            CallScope::Run(_) => None,
            CallScope::Workspace(root) => Some(root),
        }
    }

    pub(crate) fn from_columns(run: Option<RunId>, workspace: Option<String>) -> CallScope {
        match run {
            Some(run) => CallScope::Run(run),
            None => CallScope::Workspace(workspace.unwrap_or_default()),
        }
    }
}

impl fmt::Display for CallScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallScope::Run(run) => write!(f, "run {run}"),
            CallScope::Workspace(root) => write!(f, "workspace {root}"),
        }
    }
}
