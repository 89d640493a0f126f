//! Apply an approved change exactly once (DESIGN principles 5 and 6).
//!
//! [`apply`] runs the journal's protocol against a real workspace:
//!
//! 1. store the pre-image and post-image as artifacts (nothing overwritten is ever lost);
//! 2. check the file still hashes to the pre-image the person approved (else refuse, write
//!    nothing: the approval is bound to that hash);
//! 3. record the intent, with the call's fingerprint (a replay answers only for that call),
//!    the temp file's name (recovery removes exactly that file) and the pre-image's mode (an
//!    undo that recreates the file restores it); 4. write the temp file beside the target and
//!    fsync it; 5. check the pre-image again, then rename over the target and fsync the folder
//!    (or remove the file); 6. read the result back, then record the commit.
//!
//! A crash anywhere leaves the old file or the new one, never a torn one, and an intent that
//! [`recover`] resolves on the next start by looking at the file. The whole sequence holds an
//! [`ApplyLock`] so recovery in another process never judges an apply that is still running.

mod crash;
mod lock;
mod recover;

use std::fmt;

use rein_journal::{CallScope, Change, ChangeId, ChangeIntent, Journal};
use rein_workspace::{Proposal, RelPath, Workspace, WorkspaceError};
use serde::Serialize;

use crash::crash_point;
#[cfg(feature = "crash-hooks")]
#[doc(hidden)]
pub use crash::{install_crash_hook, CRASH_POINTS};
pub use lock::{lock_path, ApplyLock, LockError, APPLY_LOCK_WAIT};
pub use recover::{recover, RecoveryReport};

/// What a change does to its file, as `rein changes` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Created,
    Edited,
    Deleted,
}

impl ChangeKind {
    /// From the pre- and post-image hashes (`None`: absent).
    pub fn of(before: Option<&str>, after: Option<&str>) -> ChangeKind {
        match (before, after) {
            (None, _) => ChangeKind::Created,
            (Some(_), None) => ChangeKind::Deleted,
            (Some(_), Some(_)) => ChangeKind::Edited,
        }
    }

    /// The kind of a recorded change.
    pub fn of_change(change: &Change) -> ChangeKind {
        ChangeKind::of(change.before_sha.as_deref(), change.after_sha.as_deref())
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Created => "created",
            ChangeKind::Edited => "edited",
            ChangeKind::Deleted => "deleted",
        }
    }
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A hash or "absent", for messages.
pub(crate) fn show_sha(sha: Option<&str>) -> String {
    match sha {
        Some(sha) => format!("sha256 {sha}"),
        None => "absent".to_string(),
    }
}

/// Why a change was not applied. In every case but [`ApplyError::Conflict`] the file is as it
/// was before.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(
        "\"{path}\" changed after the change was proposed (approved against {}, found {}); \
         nothing was written: propose the change again",
        show_sha(.expected.as_deref()),
        show_sha(.found.as_deref())
    )]
    Stale {
        path: String,
        expected: Option<String>,
        found: Option<String>,
    },
    #[error(
        "\"{path}\" does not hold the new content after writing it (expected {}, found {}): \
         something else changed it at the same moment; change {change} is left as a conflict \
         for you to inspect",
        show_sha(.expected.as_deref()),
        show_sha(.found.as_deref())
    )]
    Conflict {
        change: ChangeId,
        path: String,
        expected: Option<String>,
        found: Option<String>,
    },
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Journal(#[from] rein_journal::Error),
    /// Not a `#[source]`: the message already holds the cause, and `{:#}` would print it twice.
    #[error("{0}; nothing was changed")]
    Workspace(WorkspaceError),
}

impl From<WorkspaceError> for ApplyError {
    fn from(e: WorkspaceError) -> ApplyError {
        ApplyError::Workspace(e)
    }
}

/// One change to apply.
#[derive(Debug, Clone, Copy)]
pub struct ApplyRequest<'a> {
    /// Where `call_id` is unique; for a workspace scope it must name `workspace.display_root()`.
    pub scope: &'a CallScope,
    pub call_id: &'a str,
    pub proposal: &'a Proposal,
    /// The change this one reverts, for an undo.
    pub undo_of: Option<ChangeId>,
    /// The gate's fingerprint of the call (`None` for a change no tool call makes, an undo):
    /// the journal replays this call id only for a call with the same fingerprint.
    pub fingerprint: Option<&'a str>,
    /// Permission bits for the file if this change creates it (an undo recreating a deleted
    /// file passes the mode it had); `None`: the usual default. An existing file keeps its own.
    pub create_mode: Option<u32>,
}

/// A committed change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Applied {
    pub change_id: ChangeId,
    pub path: String,
    pub kind: ChangeKind,
    pub before_sha256: Option<String>,
    pub after_sha256: Option<String>,
}

/// Applies one proposal exactly once; see the module docs for the steps.
pub fn apply(
    journal: &Journal,
    workspace: &Workspace,
    request: ApplyRequest<'_>,
) -> Result<Applied, ApplyError> {
    let proposal = request.proposal;
    let path = &proposal.path;
    let before_sha = match &proposal.before {
        Some(bytes) => Some(journal.put_artifact(bytes)?),
        None => None,
    };
    let after_sha = match &proposal.after {
        Some(bytes) => Some(journal.put_artifact(bytes)?),
        None => None,
    };
    let _lock = ApplyLock::acquire(journal.path())?;
    ensure_unchanged(workspace, path, before_sha.as_deref())?;
    let before_mode = match &proposal.before {
        Some(_) => workspace
            .info(path)?
            .map(|info| info.mode & PERMISSION_BITS),
        None => None,
    };
    // Named before it exists, so that recovery knows it is ours.
    let temp = proposal
        .after
        .as_ref()
        .map(|_| workspace.new_temp_path(path));
    let change = journal.record_intent(&ChangeIntent {
        scope: request.scope.clone(),
        call_id: request.call_id.to_string(),
        workspace: workspace.display_root(),
        path: path.to_string(),
        before_sha: before_sha.clone(),
        after_sha: after_sha.clone(),
        undo_of: request.undo_of,
        fingerprint: request.fingerprint.map(str::to_string),
        temp_path: temp.as_ref().map(|t| t.to_string()),
        before_mode,
    })?;
    crash_point("after-intent");
    let staging = Staging {
        temp: temp.as_ref(),
        create_mode: request.create_mode,
    };
    if let Err(failure) = write(workspace, path, proposal, before_sha.as_deref(), staging) {
        match failure {
            WriteFailure::Untouched(error) => {
                journal.mark_not_applied(change)?;
                return Err(error);
            }
            // The file may or may not have been replaced (a failed folder fsync comes after
            // the rename): decide from what is on disk, as recovery would.
            WriteFailure::Unknown(error) => {
                settle(journal, workspace, change, path, &before_sha, &after_sha)?;
                return Err(error);
            }
        }
    }
    crash_point("after-rename");
    let found = workspace.sha256_of(path)?;
    crash_point("before-commit");
    if found != after_sha {
        journal.mark_conflict(change, found.as_deref())?;
        return Err(ApplyError::Conflict {
            change,
            path: path.to_string(),
            expected: after_sha,
            found,
        });
    }
    journal.mark_committed(change)?;
    crash_point("after-commit");
    Ok(Applied {
        change_id: change,
        path: path.to_string(),
        kind: ChangeKind::of(before_sha.as_deref(), after_sha.as_deref()),
        before_sha256: before_sha,
        after_sha256: after_sha,
    })
}

/// Refuses unless `path` still hashes to `expected` (`None`: absent).
fn ensure_unchanged(
    workspace: &Workspace,
    path: &RelPath,
    expected: Option<&str>,
) -> Result<(), ApplyError> {
    let found = workspace.sha256_of(path)?;
    if found.as_deref() == expected {
        Ok(())
    } else {
        Err(ApplyError::Stale {
            path: path.to_string(),
            expected: expected.map(str::to_string),
            found,
        })
    }
}

/// The permission bits a change records and restores (`rwx` for all, setuid, setgid, sticky).
const PERMISSION_BITS: u32 = 0o7777;

/// Where and how step 4 stages the new content.
#[derive(Clone, Copy)]
struct Staging<'a> {
    /// The temp name recorded in the intent (`None` for a deletion, which stages nothing).
    temp: Option<&'a RelPath>,
    create_mode: Option<u32>,
}

/// How a write failed: before the target could have been touched, or possibly after.
enum WriteFailure {
    Untouched(ApplyError),
    Unknown(ApplyError),
}

/// Steps 4 and 5: stage, re-check the pre-image, publish (or remove).
fn write(
    workspace: &Workspace,
    path: &RelPath,
    proposal: &Proposal,
    before_sha: Option<&str>,
    staging: Staging<'_>,
) -> Result<(), WriteFailure> {
    let untouched = |e: ApplyError| WriteFailure::Untouched(e);
    match &proposal.after {
        Some(bytes) => {
            let temp = match staging.temp {
                Some(temp) => temp.clone(),
                None => workspace.new_temp_path(path),
            };
            let staged = workspace
                .stage_as(path, &temp, bytes, staging.create_mode)
                .map_err(|e| untouched(e.into()))?;
            crash_point("after-temp-write");
            // The narrowest window we can give a concurrent editor: check right before rename.
            // Dropping `staged` on the error path removes the temp file.
            ensure_unchanged(workspace, path, before_sha).map_err(untouched)?;
            staged
                .publish()
                .map_err(|e| WriteFailure::Unknown(e.into()))?;
        }
        None => {
            crash_point("after-temp-write");
            ensure_unchanged(workspace, path, before_sha).map_err(untouched)?;
            workspace
                .remove(path)
                .map_err(|e| WriteFailure::Unknown(e.into()))?;
        }
    }
    Ok(())
}

/// After a failed write: resolve the intent from the file's content.
fn settle(
    journal: &Journal,
    workspace: &Workspace,
    change: ChangeId,
    path: &RelPath,
    before_sha: &Option<String>,
    after_sha: &Option<String>,
) -> Result<(), ApplyError> {
    let found = workspace.sha256_of(path)?;
    if &found == after_sha {
        journal.mark_committed(change)?;
    } else if &found == before_sha {
        journal.mark_not_applied(change)?;
    } else {
        journal.mark_conflict(change, found.as_deref())?;
    }
    Ok(())
}
