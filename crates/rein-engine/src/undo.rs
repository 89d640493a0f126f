//! Undo an applied change (DESIGN principle 6): restore its pre-image from the journal's
//! artifacts, remove a file it created, or recreate one it deleted, but only while the file
//! still holds exactly what the change left there. Anything else means someone edited the file
//! since, and overwriting that edit would lose work, so undo refuses and says what it found.
//!
//! An undo is applied through the same exactly-once protocol as any change (with `undo_of`
//! set), so it is journaled, crash-safe, and can itself be undone. A file recreated by an undo
//! gets back the permission bits it had when it was deleted (recorded with the pre-image).

use std::time::{SystemTime, UNIX_EPOCH};

use rein_journal::{CallScope, ChangeId, ChangeState, Journal};
use rein_workspace::{Proposal, RelPath, Workspace, WorkspaceError};
use serde::Serialize;

use crate::apply::{apply, show_sha, ApplyError, ApplyRequest, ChangeKind};

/// A committed undo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UndoReport {
    /// The new change that reverted `undo_of` (undo it to redo).
    pub change_id: ChangeId,
    pub undo_of: ChangeId,
    pub path: String,
    /// What the undo did to the file.
    pub kind: ChangeKind,
    /// The exact diff the undo applied.
    pub diff: String,
}

/// Why an undo was refused. The file is untouched in every case.
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    #[error("there is no change {0}; `rein changes` lists them")]
    NotFound(ChangeId),
    #[error(
        "change {change} belongs to the workspace {belongs}, not {given}; run the undo with \
         --workspace {belongs}"
    )]
    OtherWorkspace {
        change: ChangeId,
        belongs: String,
        given: String,
    },
    #[error("change {change} was already undone by change {by}; undo change {by} to redo it")]
    AlreadyUndone { change: ChangeId, by: String },
    #[error("change {change} is {state}, so there is nothing applied to undo")]
    NotApplied {
        change: ChangeId,
        state: ChangeState,
    },
    #[error(
        "\"{path}\" changed since change {change} (expected {}, found {}); it was not \
         overwritten: restore it by hand, or undo the later change first",
        show_sha(.expected.as_deref()),
        show_sha(.found.as_deref())
    )]
    Changed {
        change: ChangeId,
        path: String,
        expected: Option<String>,
        found: Option<String>,
    },
    #[error(
        "the journal has no copy of the content with sha256 {sha256} that change {change} \
         needs; the journal may be damaged, restore it from a backup"
    )]
    MissingArtifact { change: ChangeId, sha256: String },
    #[error("change {change} names the path \"{path}\", which is not a usable workspace path: {message}")]
    BadPath {
        change: ChangeId,
        path: String,
        message: String,
    },
    #[error("{0}")]
    Apply(#[from] ApplyError),
    #[error("{0}")]
    Journal(#[from] rein_journal::Error),
    #[error("{0}")]
    Workspace(#[from] WorkspaceError),
}

/// Reverts change `id` in `workspace`; see the module docs.
pub fn undo(
    journal: &Journal,
    workspace: &Workspace,
    id: ChangeId,
) -> Result<UndoReport, UndoError> {
    let change = journal.change(id)?.ok_or(UndoError::NotFound(id))?;
    let root = workspace.display_root();
    if change.workspace != root {
        return Err(UndoError::OtherWorkspace {
            change: id,
            belongs: change.workspace,
            given: root,
        });
    }
    match change.state {
        ChangeState::Committed => {}
        ChangeState::Undone => {
            return Err(UndoError::AlreadyUndone {
                change: id,
                by: change
                    .undone_by
                    .map_or_else(|| "?".to_string(), |c| c.to_string()),
            })
        }
        state => return Err(UndoError::NotApplied { change: id, state }),
    }
    let path = RelPath::parse(&change.path).map_err(|e| UndoError::BadPath {
        change: id,
        path: change.path.clone(),
        message: e.to_string(),
    })?;
    let found = workspace.sha256_of(&path)?;
    if found != change.after_sha {
        return Err(UndoError::Changed {
            change: id,
            path: change.path,
            expected: change.after_sha,
            found,
        });
    }
    let current = artifact(journal, id, change.after_sha.as_deref())?;
    let restored = artifact(journal, id, change.before_sha.as_deref())?;
    let proposal = Proposal::new(path, current, restored);
    let scope = CallScope::Workspace(root);
    let call_id = undo_call_id(id);
    let applied = apply(
        journal,
        workspace,
        ApplyRequest {
            scope: &scope,
            call_id: &call_id,
            proposal: &proposal,
            undo_of: Some(id),
            // No tool call makes an undo: its id never replays a call.
            fingerprint: None,
            create_mode: change.before_mode,
        },
    )?;
    Ok(UndoReport {
        change_id: applied.change_id,
        undo_of: id,
        path: applied.path,
        kind: applied.kind,
        diff: proposal.diff,
    })
}

/// The stored content for `sha` (`None` stays `None`: the file is absent on that side).
fn artifact(
    journal: &Journal,
    change: ChangeId,
    sha: Option<&str>,
) -> Result<Option<Vec<u8>>, UndoError> {
    let Some(sha) = sha else {
        return Ok(None);
    };
    journal
        .get_artifact(sha)?
        .map(Some)
        .ok_or_else(|| UndoError::MissingArtifact {
            change,
            sha256: sha.to_string(),
        })
}

/// A fresh call id for an undo: an undo that ended in a conflict must not block a later one.
fn undo_call_id(change: ChangeId) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("undo-{change}-{nanos:x}-{}", std::process::id())
}
