//! Tool calls: every decision of the execution gate, and the lookup that makes a retried call a
//! replay instead of a second effect.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::changes::{made_by, Change, ChangeState};
use super::{CallScope, Journal, RunId};
use crate::db::{id_type, text_enum};
use crate::error::{invalid, Error, Result};
use crate::{canonical_json, is_sha256_hex, now_millis};

id_type! {
    /// One recorded gate decision.
    ToolCallId
}

text_enum! {
    /// The gate's outcome for a call. The names are those of `rein_protocol::GateOutcome`
    /// (convert with `as_str()` / `parse()`).
    CallOutcome {
        Invalid = "invalid",
        Denied = "denied",
        ApprovalRequired = "approval-required",
        BudgetExhausted = "budget-exhausted",
        /// The effect happened. At most one such record per call id and scope.
        Executed = "executed",
        Replayed = "replayed",
        IdConflict = "id-conflict",
    }
}

impl CallOutcome {
    /// Whether a record with this outcome binds its call id to its fingerprint. Invalid calls and
    /// id conflicts do not: they were refused before the id meant anything.
    pub fn binds_id(self) -> bool {
        !matches!(self, CallOutcome::Invalid | CallOutcome::IdConflict)
    }
}

/// What [`Journal::record_tool_call`] records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    pub scope: CallScope,
    pub call_id: String,
    pub tool: String,
    /// Stored as canonical JSON (RFC 8785).
    pub arguments: Value,
    /// SHA-256 hex of the canonical JSON of tool and arguments, as the gate computed it.
    pub fingerprint: String,
    pub outcome: CallOutcome,
    pub reason: String,
    pub result: Value,
}

/// A recorded gate decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedCall {
    pub id: ToolCallId,
    pub scope: CallScope,
    pub call_id: String,
    pub tool: String,
    pub arguments: Value,
    pub fingerprint: String,
    pub outcome: CallOutcome,
    pub reason: String,
    pub result: Value,
    pub created_at: i64,
}

/// What the gate must do with a call id it is about to evaluate ([`Journal::check_replay`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "replay", rename_all = "snake_case")]
pub enum Replay {
    /// No effect has happened for this id (it is new, or was only asked, denied or refused):
    /// evaluate it.
    New,
    /// It was executed: return this recorded result and do not act again.
    Executed { call: RecordedCall },
    /// Its change was applied (and maybe undone since) but the gate's result was never recorded,
    /// as after a crash between the two: report the change, do not act again.
    Applied { change: Change },
    /// Its change is unresolved (an intent awaiting recovery) or in conflict: refuse until
    /// recovery or the person has resolved it.
    Unresolved { change: Change },
    /// The id is bound to a different tool or arguments: id-conflict.
    Conflict { bound: RecordedCall },
    /// The id already made a change, and not with this tool and these arguments (another
    /// fingerprint, or an undo's id): id-conflict, never a replay of that change.
    ChangeConflict { change: Change },
}

const CALL_COLUMNS: &str = "id, run_id, workspace, call_id, tool, arguments, fingerprint, \
    outcome, reason, result, created_at";

impl Journal {
    /// Record one gate decision. Refused when it would bind a call id to a second fingerprint,
    /// or record a second effect for the same call id.
    pub fn record_tool_call(&self, call: &CallRecord) -> Result<ToolCallId> {
        if call.call_id.is_empty() {
            return Err(invalid(self.path(), "a tool call needs an id"));
        }
        if !is_sha256_hex(&call.fingerprint) {
            return Err(invalid(
                self.path(),
                format!(
                    "fingerprint {:?} is not a lower-case SHA-256",
                    call.fingerprint
                ),
            ));
        }
        let arguments = canonical_json(&call.arguments);
        let result = self.db.to_json("tool call result", &call.result)?;
        self.db.write("record a tool call", |tx| {
            if let CallScope::Run(run) = &call.scope {
                self.run_exists(tx, *run)?;
            }
            let key = call.scope.key();
            if call.outcome.binds_id() {
                if let Some(bound) = self.bound_call(tx, &key, &call.call_id)? {
                    if bound.fingerprint != call.fingerprint {
                        return Err(self.duplicate(
                            &call.scope,
                            &call.call_id,
                            format!("a record for {} with another fingerprint", bound.tool),
                        ));
                    }
                }
            }
            if call.outcome.binds_id() {
                if let Some(change) = self.change_with_other_fingerprint(
                    &call.scope,
                    &call.call_id,
                    &call.fingerprint,
                )? {
                    return Err(self.duplicate(
                        &call.scope,
                        &call.call_id,
                        format!("change {}, made by {}", change.id, made_by(&change)),
                    ));
                }
            }
            if call.outcome == CallOutcome::Executed
                && self.executed_call(tx, &key, &call.call_id)?.is_some()
            {
                return Err(self.duplicate(
                    &call.scope,
                    &call.call_id,
                    "an executed record".into(),
                ));
            }
            tx.execute(
                "INSERT INTO tool_calls (run_id, workspace, scope_key, call_id, tool, arguments,
                                         fingerprint, outcome, reason, result, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    call.scope.run(),
                    call.scope.workspace(),
                    key,
                    call.call_id,
                    call.tool,
                    arguments,
                    call.fingerprint,
                    call.outcome,
                    call.reason,
                    result,
                    now_millis()
                ],
            )
            .map_err(self.db.err("record a tool call"))?;
            Ok(ToolCallId(tx.last_insert_rowid()))
        })
    }

    /// The record that answers "what happened to this call id": its executed record if there
    /// is one, else the first record that bound the id, else the latest record of any kind.
    pub fn find_tool_call(&self, scope: &CallScope, call_id: &str) -> Result<Option<RecordedCall>> {
        let key = scope.key();
        if let Some(call) = self.executed_call(&self.db.conn, &key, call_id)? {
            return Ok(Some(call));
        }
        if let Some(call) = self.bound_call(&self.db.conn, &key, call_id)? {
            return Ok(Some(call));
        }
        self.query_call(
            &self.db.conn,
            &format!(
                "SELECT {CALL_COLUMNS} FROM tool_calls WHERE scope_key = ?1 AND call_id = ?2
                 ORDER BY id DESC LIMIT 1"
            ),
            &key,
            call_id,
        )
    }

    /// Every record for a call id, oldest first.
    pub fn tool_call_history(&self, scope: &CallScope, call_id: &str) -> Result<Vec<RecordedCall>> {
        let sql = format!(
            "SELECT {CALL_COLUMNS} FROM tool_calls WHERE scope_key = ?1 AND call_id = ?2 ORDER BY id"
        );
        let rows = self.db.rows(
            "read tool calls",
            &sql,
            params![scope.key(), call_id],
            call_row,
        )?;
        rows.into_iter().map(|row| row.decode(self)).collect()
    }

    /// Decide, from the journal alone, whether a call with this id and fingerprint is new, a
    /// replay, or an id conflict; also covers an effect whose gate record was lost to a crash.
    /// The fingerprint is compared with every record of the id, gate decisions and changes
    /// alike: a change is replayed only for the call that made it.
    pub fn check_replay(
        &self,
        scope: &CallScope,
        call_id: &str,
        fingerprint: &str,
    ) -> Result<Replay> {
        self.db.read("check a call for replay", |tx| {
            let key = scope.key();
            if let Some(bound) = self.bound_call(tx, &key, call_id)? {
                if bound.fingerprint != fingerprint {
                    return Ok(Replay::Conflict { bound });
                }
            }
            if let Some(change) = self.change_with_other_fingerprint(scope, call_id, fingerprint)? {
                return Ok(Replay::ChangeConflict { change });
            }
            if let Some(call) = self.executed_call(tx, &key, call_id)? {
                return Ok(Replay::Executed { call });
            }
            if let Some(change) = self.change_for_call(scope, call_id)? {
                return Ok(match change.state {
                    ChangeState::Committed | ChangeState::Undone => Replay::Applied { change },
                    ChangeState::Intent | ChangeState::Conflict => Replay::Unresolved { change },
                    ChangeState::NotApplied => Replay::New,
                });
            }
            Ok(Replay::New)
        })
    }

    pub(crate) fn tool_calls_of_run(&self, run: RunId) -> Result<Vec<RecordedCall>> {
        let sql = format!("SELECT {CALL_COLUMNS} FROM tool_calls WHERE run_id = ?1 ORDER BY id");
        let rows = self.db.rows("read tool calls", &sql, [run], call_row)?;
        rows.into_iter().map(|row| row.decode(self)).collect()
    }

    fn executed_call(
        &self,
        conn: &rusqlite::Connection,
        key: &str,
        call_id: &str,
    ) -> Result<Option<RecordedCall>> {
        self.query_call(
            conn,
            &format!(
                "SELECT {CALL_COLUMNS} FROM tool_calls
                 WHERE scope_key = ?1 AND call_id = ?2 AND outcome = 'executed'"
            ),
            key,
            call_id,
        )
    }

    fn bound_call(
        &self,
        conn: &rusqlite::Connection,
        key: &str,
        call_id: &str,
    ) -> Result<Option<RecordedCall>> {
        self.query_call(
            conn,
            &format!(
                "SELECT {CALL_COLUMNS} FROM tool_calls
                 WHERE scope_key = ?1 AND call_id = ?2 AND outcome NOT IN ('invalid', 'id-conflict')
                 ORDER BY id LIMIT 1"
            ),
            key,
            call_id,
        )
    }

    fn query_call(
        &self,
        conn: &rusqlite::Connection,
        sql: &str,
        key: &str,
        call_id: &str,
    ) -> Result<Option<RecordedCall>> {
        let row = conn
            .prepare_cached(sql)
            .and_then(|mut stmt| stmt.query_row(params![key, call_id], call_row).optional())
            .map_err(self.db.err("look up a tool call"))?;
        row.map(|row| row.decode(self)).transpose()
    }

    pub(crate) fn run_exists(&self, conn: &rusqlite::Connection, run: RunId) -> Result<()> {
        let exists: bool = conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?1)",
                [run],
                |r| r.get(0),
            )
            .map_err(self.db.err("look up a run"))?;
        if exists {
            Ok(())
        } else {
            Err(crate::error::not_found(self.path(), format!("run {run}")))
        }
    }

    fn duplicate(&self, scope: &CallScope, call_id: &str, existing: String) -> Error {
        Error::Duplicate {
            path: self.path().to_path_buf(),
            scope: scope.to_string(),
            call_id: call_id.to_string(),
            existing,
        }
    }
}

struct CallRow {
    call: RecordedCall,
    arguments: String,
    result: String,
}

impl CallRow {
    fn decode(mut self, journal: &Journal) -> Result<RecordedCall> {
        let id = self.call.id;
        self.call.arguments = journal
            .db
            .parse_json(&format!("arguments of tool call {id}"), &self.arguments)?;
        self.call.result = journal
            .db
            .parse_json(&format!("result of tool call {id}"), &self.result)?;
        Ok(self.call)
    }
}

fn call_row(r: &Row<'_>) -> rusqlite::Result<CallRow> {
    let run: Option<RunId> = r.get(1)?;
    let workspace: Option<String> = r.get(2)?;
    Ok(CallRow {
        call: RecordedCall {
            id: r.get(0)?,
            scope: CallScope::from_columns(run, workspace),
            call_id: r.get(3)?,
            tool: r.get(4)?,
            arguments: Value::Null,
            fingerprint: r.get(6)?,
            outcome: r.get(7)?,
            reason: r.get(8)?,
            result: Value::Null,
            created_at: r.get(10)?,
        },
        arguments: r.get(5)?,
        result: r.get(9)?,
    })
}
