//! The exactly-once apply protocol's records.
//!
//! Apply: [`Journal::put_artifact`] both contents → [`Journal::record_intent`] → write a temp
//! file, fsync, rename, fsync the directory → [`Journal::mark_committed`] (or
//! [`Journal::mark_not_applied`] when the write failed before the rename).
//!
//! Recovery, on start: for each of [`Journal::pending_intents`], hash the file: the new content
//! → `mark_committed`; the old → `mark_not_applied`; anything else → [`Journal::mark_conflict`]
//! (shown to the person, never overwritten).
//!
//! Undo: record an intent with `undo_of` set, whose contents are the original's swapped; when
//! that change is committed, the original becomes `undone` in the same transaction (enforced by
//! a trigger). An undo is itself a change, so it can be undone the same way.

use rusqlite::{params, OptionalExtension, Row, Transaction};
use serde::{Deserialize, Serialize};

use super::{CallScope, Journal, RunId};
use crate::db::{id_type, text_enum};
use crate::error::{invalid, not_found, Error, Result};
use crate::{is_sha256_hex, now_millis};

id_type! {
    /// A change to one file (`rein undo CHANGE`).
    ChangeId
}

text_enum! {
    /// Where a change stands in the apply protocol.
    ChangeState {
        /// Recorded before the file was touched; not yet resolved.
        Intent = "intent",
        /// The file holds the new content.
        Committed = "committed",
        /// The file still held the old content: nothing happened.
        NotApplied = "not_applied",
        /// The file held neither: left for the person, never overwritten.
        Conflict = "conflict",
        /// Committed, then reverted by the committed change that names it in `undo_of`.
        Undone = "undone",
    }
}

/// What [`Journal::record_intent`] records before a file is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeIntent {
    pub scope: CallScope,
    pub call_id: String,
    /// The workspace root, as the caller canonicalised it.
    pub workspace: String,
    /// The file, relative to the workspace, `/`-separated.
    pub path: String,
    /// SHA-256 of the current content, `None` when the file is absent (a create).
    pub before_sha: Option<String>,
    /// SHA-256 of the new content, `None` to delete the file.
    pub after_sha: Option<String>,
    /// The change this one reverts, for an undo.
    pub undo_of: Option<ChangeId>,
    /// The gate's fingerprint of the call that makes this change (tool and arguments); `None`
    /// for a change no tool call makes (an undo). A call id is replayed from its change only
    /// when the fingerprints are equal.
    pub fingerprint: Option<String>,
    /// The temp file the apply will stage beside the target (relative to the workspace),
    /// recorded before it exists so that recovery removes exactly that file and nothing else.
    pub temp_path: Option<String>,
    /// The permission bits of the pre-image (`None`: absent, or not known), so that an undo
    /// which recreates the file restores them.
    pub before_mode: Option<u32>,
}

/// The largest permission value a change records (`0o7777`).
const MAX_MODE: u32 = 0o7777;

/// A recorded change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub id: ChangeId,
    pub scope: CallScope,
    pub call_id: String,
    pub workspace: String,
    pub path: String,
    pub before_sha: Option<String>,
    pub after_sha: Option<String>,
    pub state: ChangeState,
    /// For a conflict: the SHA-256 recovery found, or `None` with `found_absent`.
    pub found_sha: Option<String>,
    /// For a conflict: recovery found no file.
    pub found_absent: bool,
    pub created_at: i64,
    /// When the intent was resolved (committed, not applied or conflict).
    pub resolved_at: Option<i64>,
    pub undone_at: Option<i64>,
    /// The change this one reverts.
    pub undo_of: Option<ChangeId>,
    /// The committed change that reverted this one.
    pub undone_by: Option<ChangeId>,
    /// The fingerprint of the call that made it (see [`ChangeIntent::fingerprint`]); `None` for
    /// an undo, and for a change recorded by schema version 1 whose call was never recorded as
    /// executed.
    pub fingerprint: Option<String>,
    /// The temp file its apply staged (see [`ChangeIntent::temp_path`]).
    pub temp_path: Option<String>,
    /// The permission bits of the pre-image (see [`ChangeIntent::before_mode`]).
    pub before_mode: Option<u32>,
}

impl Change {
    /// The run whose call made this change, if any.
    pub fn run(&self) -> Option<RunId> {
        self.scope.run()
    }
}

const CHANGE_COLUMNS: &str = "c.id, c.run_id, c.workspace, c.call_id, c.path, c.before_sha, \
    c.after_sha, c.state, c.found_sha, c.found_absent, c.created_at, c.resolved_at, c.undone_at, \
    c.undo_of, (SELECT u.id FROM changes u WHERE u.undo_of = c.id \
                AND u.state IN ('committed', 'undone')), c.fingerprint, c.temp_path, c.before_mode";

impl Journal {
    /// Record the intent to change one file, before touching it. Both contents must already be
    /// stored as artifacts. Refused when the call already has a change (replay it instead), when
    /// the call id already belongs to a change made with other arguments (even one that was not
    /// applied), when the file has an unresolved intent, or when an undo does not exactly revert
    /// its original.
    pub fn record_intent(&self, intent: &ChangeIntent) -> Result<ChangeId> {
        self.validate_intent(intent)?;
        self.db.write("record a change intent", |tx| {
            if let CallScope::Run(run) = &intent.scope {
                self.run_exists(tx, *run)?;
            }
            for sha in [&intent.before_sha, &intent.after_sha]
                .into_iter()
                .flatten()
            {
                if !self.has_artifact(sha)? {
                    return Err(not_found(
                        self.path(),
                        format!("artifact {sha} (store the content with put_artifact first)"),
                    ));
                }
            }
            let key = intent.scope.key();
            if let Some(other) = self.change_by(
                tx,
                "c.scope_key = ?1 AND c.call_id = ?2 AND c.fingerprint IS NOT ?3",
                params![key, intent.call_id, intent.fingerprint],
            )? {
                return Err(Error::Duplicate {
                    path: self.path().to_path_buf(),
                    scope: intent.scope.to_string(),
                    call_id: intent.call_id.clone(),
                    existing: format!(
                        "change {} ({}), made by {}",
                        other.id,
                        other.state,
                        made_by(&other)
                    ),
                });
            }
            if let Some(existing) = self.change_by(
                tx,
                "c.scope_key = ?1 AND c.call_id = ?2 \
                AND c.state <> 'not_applied'",
                params![key, intent.call_id],
            )? {
                return Err(Error::Duplicate {
                    path: self.path().to_path_buf(),
                    scope: intent.scope.to_string(),
                    call_id: intent.call_id.clone(),
                    existing: format!("change {} ({})", existing.id, existing.state),
                });
            }
            if let Some(target) = intent.undo_of {
                self.validate_undo(tx, intent, target)?;
            }
            if let Some(pending) = self.change_by(
                tx,
                "c.workspace = ?1 AND c.path = ?2 AND c.state = 'intent'",
                params![intent.workspace, intent.path],
            )? {
                return Err(invalid(
                    self.path(),
                    format!(
                        "{} has an unresolved change ({}); run recovery before changing it again",
                        intent.path, pending.id
                    ),
                ));
            }
            tx.execute(
                "INSERT INTO changes (scope_key, call_id, run_id, workspace, path, before_sha,
                                      after_sha, created_at, undo_of, fingerprint, temp_path,
                                      before_mode)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    key,
                    intent.call_id,
                    intent.scope.run(),
                    intent.workspace,
                    intent.path,
                    intent.before_sha,
                    intent.after_sha,
                    now_millis(),
                    intent.undo_of,
                    intent.fingerprint,
                    intent.temp_path,
                    intent.before_mode
                ],
            )
            .map_err(self.db.err("record a change intent"))?;
            Ok(ChangeId(tx.last_insert_rowid()))
        })
    }

    /// The file now holds the new content. For an undo, the change it reverts becomes `undone`
    /// in the same transaction. Calling it again on a committed change does nothing.
    pub fn mark_committed(&self, id: ChangeId) -> Result<()> {
        self.resolve(id, ChangeState::Committed, None)
    }

    /// The file still holds the old content: the change did not happen. Idempotent.
    pub fn mark_not_applied(&self, id: ChangeId) -> Result<()> {
        self.resolve(id, ChangeState::NotApplied, None)
    }

    /// The file holds neither content (`found_sha`, or `None` when it is absent). The change is
    /// left for the person; nothing is overwritten. Idempotent.
    pub fn mark_conflict(&self, id: ChangeId, found_sha: Option<&str>) -> Result<()> {
        if let Some(sha) = found_sha {
            if !is_sha256_hex(sha) {
                return Err(invalid(self.path(), format!("{sha:?} is not a SHA-256")));
            }
        }
        self.resolve(id, ChangeState::Conflict, Some(found_sha))
    }

    /// Intents of a workspace that were never resolved (a crash between intent and commit),
    /// oldest first: what recovery must look at.
    pub fn pending_intents(&self, workspace: &str) -> Result<Vec<Change>> {
        self.changes_by(
            "c.workspace = ?1 AND c.state = 'intent' ORDER BY c.id",
            params![workspace],
        )
    }

    /// Every change of a workspace, oldest first (`rein changes`).
    pub fn changes(&self, workspace: &str) -> Result<Vec<Change>> {
        self.changes_by("c.workspace = ?1 ORDER BY c.id", params![workspace])
    }

    /// One change.
    pub fn change(&self, id: ChangeId) -> Result<Option<Change>> {
        self.change_by(&self.db.conn, "c.id = ?1", params![id])
    }

    /// A change of this call id that was not made by a call with `fingerprint` (another
    /// fingerprint, or none: an undo, or a change of schema version 1 whose call is unknown).
    /// Such a change means the id is taken: a call with this fingerprint must not be replayed
    /// from it, nor apply anything under that id.
    pub fn change_with_other_fingerprint(
        &self,
        scope: &CallScope,
        call_id: &str,
        fingerprint: &str,
    ) -> Result<Option<Change>> {
        self.change_by(
            &self.db.conn,
            "c.scope_key = ?1 AND c.call_id = ?2 AND c.fingerprint IS NOT ?3 \
             ORDER BY c.id LIMIT 1",
            params![scope.key(), call_id, fingerprint],
        )
    }

    /// The latest change recorded for a call id, if any.
    pub fn change_for_call(&self, scope: &CallScope, call_id: &str) -> Result<Option<Change>> {
        self.change_by(
            &self.db.conn,
            "c.scope_key = ?1 AND c.call_id = ?2 ORDER BY c.id DESC LIMIT 1",
            params![scope.key(), call_id],
        )
    }

    pub(crate) fn changes_of_run(&self, run: RunId) -> Result<Vec<Change>> {
        self.changes_by("c.run_id = ?1 ORDER BY c.id", params![run])
    }

    fn validate_intent(&self, intent: &ChangeIntent) -> Result<()> {
        if intent.call_id.is_empty() || intent.workspace.is_empty() || intent.path.is_empty() {
            return Err(invalid(
                self.path(),
                "a change intent needs a call id, workspace and path",
            ));
        }
        if let CallScope::Workspace(root) = &intent.scope {
            if root != &intent.workspace {
                return Err(invalid(
                    self.path(),
                    format!(
                        "call scope {} does not match workspace {}",
                        intent.scope, intent.workspace
                    ),
                ));
            }
        }
        if intent.before_sha.is_none() && intent.after_sha.is_none() {
            return Err(invalid(
                self.path(),
                format!(
                    "change of {}: absent before and after is not a change",
                    intent.path
                ),
            ));
        }
        for sha in [&intent.before_sha, &intent.after_sha, &intent.fingerprint]
            .into_iter()
            .flatten()
        {
            if !is_sha256_hex(sha) {
                return Err(invalid(self.path(), format!("{sha:?} is not a SHA-256")));
            }
        }
        if intent.temp_path.as_deref() == Some("") {
            return Err(invalid(
                self.path(),
                "a change intent's temp file needs a name",
            ));
        }
        if let Some(mode) = intent.before_mode {
            if mode > MAX_MODE {
                return Err(invalid(
                    self.path(),
                    format!("{mode:#o} is not a permission mode (at most {MAX_MODE:#o})"),
                ));
            }
        }
        Ok(())
    }

    fn validate_undo(
        &self,
        tx: &Transaction<'_>,
        intent: &ChangeIntent,
        target: ChangeId,
    ) -> Result<()> {
        let original = self
            .change_by(tx, "c.id = ?1", params![target])?
            .ok_or_else(|| not_found(self.path(), format!("change {target}")))?;
        if original.state != ChangeState::Committed {
            return Err(Error::Transition {
                path: self.path().to_path_buf(),
                what: format!("change {target}"),
                from: original.state.to_string(),
                to: "undone (only a committed change can be undone)".into(),
            });
        }
        let reverts = original.workspace == intent.workspace
            && original.path == intent.path
            && original.after_sha == intent.before_sha
            && original.before_sha == intent.after_sha;
        if !reverts {
            return Err(invalid(
                self.path(),
                format!(
                    "an undo of change {target} must restore {} from its post-image to its \
                     pre-image in the same workspace",
                    original.path
                ),
            ));
        }
        if let Some(other) = self.change_by(
            tx,
            "c.undo_of = ?1 AND c.state IN ('intent', 'committed', 'undone')",
            params![target],
        )? {
            return Err(invalid(
                self.path(),
                format!(
                    "change {target} already has an undo in progress (change {})",
                    other.id
                ),
            ));
        }
        Ok(())
    }

    fn resolve(&self, id: ChangeId, to: ChangeState, found: Option<Option<&str>>) -> Result<()> {
        let action = format!("mark change {id} {to}");
        self.db.write(&action, |tx| {
            let change = self
                .change_by(tx, "c.id = ?1", params![id])?
                .ok_or_else(|| not_found(self.path(), format!("change {id}")))?;
            if change.state == to {
                return Ok(());
            }
            if change.state != ChangeState::Intent {
                return Err(Error::Transition {
                    path: self.path().to_path_buf(),
                    what: format!("change {id}"),
                    from: change.state.to_string(),
                    to: to.to_string(),
                });
            }
            if to == ChangeState::Committed {
                if let Some(target) = change.undo_of {
                    let original = self.change_by(tx, "c.id = ?1", params![target])?;
                    if let Some(original) = original.filter(|c| c.state != ChangeState::Committed) {
                        return Err(Error::Transition {
                            path: self.path().to_path_buf(),
                            what: format!("change {target} (undone by change {id})"),
                            from: original.state.to_string(),
                            to: ChangeState::Undone.to_string(),
                        });
                    }
                }
            }
            let (found_sha, found_absent) = match found {
                Some(Some(sha)) => (Some(sha), false),
                Some(None) => (None, true),
                None => (None, false),
            };
            tx.execute(
                "UPDATE changes SET state = ?2, resolved_at = ?3, found_sha = ?4, found_absent = ?5
                 WHERE id = ?1",
                params![id, to, now_millis(), found_sha, found_absent],
            )
            .map_err(self.db.err(&action))?;
            Ok(())
        })
    }

    fn change_by(
        &self,
        conn: &rusqlite::Connection,
        filter: &str,
        args: impl rusqlite::Params,
    ) -> Result<Option<Change>> {
        let sql = format!("SELECT {CHANGE_COLUMNS} FROM changes c WHERE {filter}");
        conn.prepare_cached(&sql)
            .and_then(|mut stmt| stmt.query_row(args, change_row).optional())
            .map_err(self.db.err("read a change"))
    }

    fn changes_by(&self, filter: &str, args: impl rusqlite::Params) -> Result<Vec<Change>> {
        let sql = format!("SELECT {CHANGE_COLUMNS} FROM changes c WHERE {filter}");
        self.db.rows("read changes", &sql, args, change_row)
    }
}

fn change_row(r: &Row<'_>) -> rusqlite::Result<Change> {
    let run: Option<RunId> = r.get(1)?;
    let workspace: String = r.get(2)?;
    Ok(Change {
        id: r.get(0)?,
        scope: CallScope::from_columns(run, Some(workspace.clone())),
        workspace,
        call_id: r.get(3)?,
        path: r.get(4)?,
        before_sha: r.get(5)?,
        after_sha: r.get(6)?,
        state: r.get(7)?,
        found_sha: r.get(8)?,
        found_absent: r.get(9)?,
        created_at: r.get(10)?,
        resolved_at: r.get(11)?,
        undone_at: r.get(12)?,
        undo_of: r.get(13)?,
        undone_by: r.get(14)?,
        fingerprint: r.get(15)?,
        temp_path: r.get(16)?,
        before_mode: r.get(17)?,
    })
}

/// What made a change, for messages about a call id that is already taken.
pub(crate) fn made_by(change: &Change) -> String {
    match (&change.fingerprint, change.undo_of) {
        (Some(fp), _) => format!("a call with fingerprint {}", &fp[..fp.len().min(12)]),
        (None, Some(target)) => format!("the undo of change {target}"),
        (None, None) => "a call whose arguments were not recorded".to_string(),
    }
}
