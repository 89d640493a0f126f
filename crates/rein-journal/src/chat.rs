//! `chat.db`: conversations with a person, their turns, and approval cards.
//!
//! An approval card is one proposed mutation shown to the person, bound to the call's
//! fingerprint and to the file's pre-image. It lives [`APPROVAL_LIFETIME_MS`]; the store expires
//! due cards in batches ([`ChatStore::expire_due`]) and refuses to approve a card past its
//! deadline. Status moves only `pending → approved | denied | expired` and
//! `approved → applied | failed` (enforced by a trigger as well).

use std::path::Path;

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::db::{id_type, text_enum, Db};
use crate::error::{invalid, not_found, Error, Result};
use crate::migrate::StoreKind;
use crate::{canonical_json, is_sha256_hex};

/// How long an approval card stays valid: 600 s.
pub const APPROVAL_LIFETIME_MS: i64 = 600_000;

id_type! {
    /// A conversation.
    ConversationId
}
id_type! {
    /// A turn of a conversation.
    TurnId
}
id_type! {
    /// An approval card.
    ApprovalId
}
id_type! {
    /// One run of a chat turn: from the person's message to Rein's answer.
    TurnRunId
}

text_enum! {
    /// How a turn run stands or ended.
    TurnRunStatus {
        /// The actor is working; no other message is accepted meanwhile.
        Running = "running",
        /// Ended in an answer.
        Answered = "answered",
        /// Ended with a change waiting for the person's decision.
        Proposed = "proposed",
        /// Stopped at the tool-round cap.
        Stopped = "stopped",
        /// The person interrupted it, or the process running it went away. Never resumed.
        Interrupted = "interrupted",
        /// The model or the store failed.
        Failed = "failed",
    }
}

text_enum! {
    /// Who spoke in a turn.
    TurnRole {
        System = "system",
        User = "user",
        Assistant = "assistant",
        Tool = "tool",
    }
}

text_enum! {
    /// Where an approval card stands.
    ApprovalStatus {
        /// Shown to the person, not yet decided.
        Pending = "pending",
        /// The person allowed it; it may be applied once.
        Approved = "approved",
        Denied = "denied",
        /// Not decided within its lifetime.
        Expired = "expired",
        /// Approved and applied.
        Applied = "applied",
        /// Approved, but applying it failed (the file changed, the disk was full...).
        Failed = "failed",
    }
}

/// A conversation in a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conversation {
    pub id: ConversationId,
    pub workspace: String,
    pub title: String,
    pub model: Option<String>,
    pub created_at: i64,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub id: TurnId,
    pub conversation: ConversationId,
    /// 1, 2, ... within the conversation.
    pub seq: i64,
    pub role: TurnRole,
    pub content: String,
    pub meta: Value,
    pub created_at: i64,
}

/// One run of a chat turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnRun {
    pub id: TurnRunId,
    pub conversation: ConversationId,
    pub status: TurnRunStatus,
    /// How it ended, in Rein's words.
    pub note: Option<String>,
    pub started_at: i64,
    pub ended_at: Option<i64>,
}

/// The messages a prompt keeps: at most `cap`, newest last, and how many older ones were left
/// out (the interface says so with [`History::trim_note`]).
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub trimmed: usize,
    pub messages: Vec<Turn>,
}

impl History {
    /// The note that stands in for trimmed messages (`None` when nothing was trimmed).
    pub fn trim_note(&self) -> Option<String> {
        (self.trimmed > 0).then(|| {
            format!(
                "[{} earlier message(s) of this conversation were trimmed to keep the history \
                 bounded; they are still in chat.db]",
                self.trimmed
            )
        })
    }
}

/// One recorded event of a conversation (`chat_events`): what the person was shown, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatEventRecord {
    /// The event's number in its session.
    pub seq: i64,
    /// The turn run it belongs to, if any.
    pub turn_run: Option<i64>,
    /// The event's `type` (`route`, `tool_call`, `hold`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// The protocol's `ChatEvent`, as JSON.
    pub event: Value,
    /// When it happened (unix ms).
    pub at: i64,
}

/// What [`ChatStore::request_approval`] records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewApproval {
    pub conversation: Option<ConversationId>,
    pub workspace: String,
    pub call_id: String,
    pub tool: String,
    pub arguments: Value,
    /// The gate's fingerprint of tool and arguments: the approval allows exactly this call.
    pub fingerprint: String,
    pub path: Option<String>,
    /// The pre-image the approval is bound to (`None`: the file is absent).
    pub before_sha: Option<String>,
    pub after_sha: Option<String>,
    /// The exact diff shown to the person.
    pub diff: String,
}

/// An approval card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    pub id: ApprovalId,
    pub conversation: Option<ConversationId>,
    pub workspace: String,
    pub call_id: String,
    pub tool: String,
    pub arguments: Value,
    pub fingerprint: String,
    pub path: Option<String>,
    pub before_sha: Option<String>,
    pub after_sha: Option<String>,
    pub diff: String,
    pub status: ApprovalStatus,
    /// Why it was denied or failed.
    pub note: Option<String>,
    pub created_at: i64,
    pub expires_at: i64,
    pub decided_at: Option<i64>,
    pub finished_at: Option<i64>,
}

/// The chat store. Times are passed in (unix ms) so callers and tests control the clock.
#[derive(Debug)]
pub struct ChatStore {
    db: Db,
    /// How long a card lives: [`APPROVAL_LIFETIME_MS`] except in tests (see
    /// [`ChatStore::set_approval_lifetime_ms`]).
    approval_lifetime_ms: i64,
}

const APPROVAL_COLUMNS: &str = "id, conversation_id, workspace, call_id, tool, arguments, \
    fingerprint, path, before_sha, after_sha, diff, status, note, created_at, expires_at, \
    decided_at, finished_at";

impl ChatStore {
    /// Open `chat.db` at `path`, creating and migrating it as needed.
    pub fn open(path: impl AsRef<Path>) -> Result<ChatStore> {
        Ok(ChatStore {
            db: Db::open(path.as_ref(), StoreKind::Chat)?,
            approval_lifetime_ms: APPROVAL_LIFETIME_MS,
        })
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.db.path
    }

    /// For tests only (the web UI's browser tests let a card expire in seconds): cards requested
    /// from now on live `ms` milliseconds instead of [`APPROVAL_LIFETIME_MS`]; at least 1.
    pub fn set_approval_lifetime_ms(&mut self, ms: i64) {
        self.approval_lifetime_ms = ms.max(1);
    }

    /// Start a conversation in a workspace.
    pub fn create_conversation(
        &self,
        workspace: &str,
        title: &str,
        model: Option<&str>,
        now: i64,
    ) -> Result<ConversationId> {
        if workspace.is_empty() {
            return Err(invalid(self.path(), "a conversation needs a workspace"));
        }
        self.db
            .conn
            .execute(
                "INSERT INTO conversations (workspace, title, model, created_at)
                 VALUES (?1, ?2, ?3, ?4)",
                params![workspace, title, model, now],
            )
            .map_err(self.db.err("start a conversation"))?;
        Ok(ConversationId(self.db.conn.last_insert_rowid()))
    }

    /// One conversation.
    pub fn conversation(&self, id: ConversationId) -> Result<Option<Conversation>> {
        self.db
            .conn
            .query_row(
                "SELECT id, workspace, title, model, created_at FROM conversations WHERE id = ?1",
                [id],
                conversation_row,
            )
            .optional()
            .map_err(self.db.err("read a conversation"))
    }

    /// The conversations of a workspace, oldest first.
    pub fn conversations(&self, workspace: &str) -> Result<Vec<Conversation>> {
        self.db.rows(
            "list conversations",
            "SELECT id, workspace, title, model, created_at FROM conversations
             WHERE workspace = ?1 ORDER BY id",
            [workspace],
            conversation_row,
        )
    }

    /// Append a turn to a conversation.
    pub fn append_turn(
        &self,
        conversation: ConversationId,
        role: TurnRole,
        content: &str,
        meta: &Value,
        now: i64,
    ) -> Result<TurnId> {
        let meta = self.db.to_json("turn meta", meta)?;
        self.db.write("record a turn", |tx| {
            let exists: bool = tx
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM conversations WHERE id = ?1)",
                    [conversation],
                    |r| r.get(0),
                )
                .map_err(self.db.err("record a turn"))?;
            if !exists {
                return Err(not_found(
                    self.path(),
                    format!("conversation {conversation}"),
                ));
            }
            tx.execute(
                "INSERT INTO turns (conversation_id, seq, role, content, meta, created_at)
                 VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM turns
                              WHERE conversation_id = ?1), ?2, ?3, ?4, ?5)",
                params![conversation, role, content, meta, now],
            )
            .map_err(self.db.err("record a turn"))?;
            Ok(TurnId(tx.last_insert_rowid()))
        })
    }

    /// The last `limit` turns of a conversation, oldest first (the history a prompt keeps).
    pub fn recent_turns(&self, conversation: ConversationId, limit: usize) -> Result<Vec<Turn>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.db.rows_with_json(
            "read turns",
            "SELECT * FROM (
                 SELECT id, conversation_id, seq, role, content, meta, created_at
                 FROM turns WHERE conversation_id = ?1 ORDER BY seq DESC LIMIT ?2)
             ORDER BY seq",
            params![conversation, limit],
            |r| {
                Ok((
                    Turn {
                        id: r.get(0)?,
                        conversation: r.get(1)?,
                        seq: r.get(2)?,
                        role: r.get(3)?,
                        content: r.get(4)?,
                        meta: Value::Null,
                        created_at: r.get(6)?,
                    },
                    r.get(5)?,
                ))
            },
            |turn| format!("meta of turn {}", turn.id),
            |turn, meta| turn.meta = meta,
        )
    }

    /// The most recent `cap` messages of a conversation, and how many older ones were trimmed.
    /// Messages are never deleted (the table is append-only); trimming only bounds what a
    /// prompt sees.
    pub fn history(&self, conversation: ConversationId, cap: usize) -> Result<History> {
        let total: i64 = self
            .db
            .conn
            .query_row(
                "SELECT count(*) FROM turns WHERE conversation_id = ?1",
                [conversation],
                |r| r.get(0),
            )
            .map_err(self.db.err("count messages"))?;
        let total = usize::try_from(total).unwrap_or(0);
        let messages = self.recent_turns(conversation, cap)?;
        Ok(History {
            trimmed: total.saturating_sub(messages.len()),
            messages,
        })
    }

    /// Starts a turn run. Refused with [`Error::TurnRunning`] while the conversation has one
    /// running: one active turn per conversation (the unique index guards other processes).
    pub fn begin_turn_run(&self, conversation: ConversationId, now: i64) -> Result<TurnRunId> {
        self.db.write("start a turn", |tx| {
            let exists: bool = tx
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM conversations WHERE id = ?1)",
                    [conversation],
                    |r| r.get(0),
                )
                .map_err(self.db.err("start a turn"))?;
            if !exists {
                return Err(not_found(
                    self.path(),
                    format!("conversation {conversation}"),
                ));
            }
            let running: Option<i64> = tx
                .query_row(
                    "SELECT id FROM turn_runs WHERE conversation_id = ?1 AND status = 'running'",
                    [conversation],
                    |r| r.get(0),
                )
                .optional()
                .map_err(self.db.err("start a turn"))?;
            if let Some(turn) = running {
                return Err(Error::TurnRunning {
                    conversation: conversation.0,
                    turn,
                });
            }
            tx.execute(
                "INSERT INTO turn_runs (conversation_id, started_at) VALUES (?1, ?2)",
                params![conversation, now],
            )
            .map_err(self.db.err("start a turn"))?;
            Ok(TurnRunId(tx.last_insert_rowid()))
        })
    }

    /// Ends a running turn run with `status` (anything but running), once.
    pub fn end_turn_run(
        &self,
        id: TurnRunId,
        status: TurnRunStatus,
        note: Option<&str>,
        now: i64,
    ) -> Result<()> {
        if status == TurnRunStatus::Running {
            return Err(invalid(self.path(), "a turn cannot end as running"));
        }
        self.db.write(&format!("end turn {id}"), |tx| {
            let current: Option<TurnRunStatus> = tx
                .query_row("SELECT status FROM turn_runs WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(self.db.err("end a turn"))?;
            match current {
                None => Err(not_found(self.path(), format!("turn {id}"))),
                Some(TurnRunStatus::Running) => {
                    tx.execute(
                        "UPDATE turn_runs SET status = ?2, note = ?3, ended_at = ?4 WHERE id = ?1",
                        params![id, status, note, now],
                    )
                    .map_err(self.db.err("end a turn"))?;
                    Ok(())
                }
                Some(from) => Err(Error::Transition {
                    path: self.path().to_path_buf(),
                    what: format!("turn {id}"),
                    from: from.to_string(),
                    to: status.to_string(),
                }),
            }
        })
    }

    /// Closes as interrupted every turn of `conversation` still marked running (left so by a
    /// process that went away); returns them so the interface can show them. Called when a
    /// conversation is opened: such a turn is shown as interrupted, never resumed.
    pub fn interrupt_running(
        &self,
        conversation: ConversationId,
        now: i64,
    ) -> Result<Vec<TurnRunId>> {
        self.db.write("close interrupted turns", |tx| {
            let ids: Vec<TurnRunId> = tx
                .prepare_cached(
                    "SELECT id FROM turn_runs WHERE conversation_id = ?1 AND status = 'running'",
                )
                .and_then(|mut stmt| {
                    stmt.query_map([conversation], |r| r.get(0))?
                        .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(self.db.err("close interrupted turns"))?;
            tx.execute(
                "UPDATE turn_runs SET status = 'interrupted', ended_at = ?2,
                     note = 'the process running this turn went away; it was not resumed'
                 WHERE conversation_id = ?1 AND status = 'running'",
                params![conversation, now],
            )
            .map_err(self.db.err("close interrupted turns"))?;
            Ok(ids)
        })
    }

    /// The turn runs of a conversation, oldest first.
    pub fn turn_runs(&self, conversation: ConversationId) -> Result<Vec<TurnRun>> {
        self.db.rows(
            "list turns",
            "SELECT id, conversation_id, status, note, started_at, ended_at FROM turn_runs
             WHERE conversation_id = ?1 ORDER BY id",
            [conversation],
            |r| {
                Ok(TurnRun {
                    id: r.get(0)?,
                    conversation: r.get(1)?,
                    status: r.get(2)?,
                    note: r.get(3)?,
                    started_at: r.get(4)?,
                    ended_at: r.get(5)?,
                })
            },
        )
    }

    /// Show a card to the person: pending until `now + APPROVAL_LIFETIME_MS`. Refused while the
    /// same call already has a live (pending or approved) card.
    pub fn request_approval(&self, approval: &NewApproval, now: i64) -> Result<ApprovalId> {
        if approval.workspace.is_empty() || approval.call_id.is_empty() {
            return Err(invalid(
                self.path(),
                "an approval needs a workspace and a call id",
            ));
        }
        for sha in [
            Some(&approval.fingerprint),
            approval.before_sha.as_ref(),
            approval.after_sha.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            if !is_sha256_hex(sha) {
                return Err(invalid(self.path(), format!("{sha:?} is not a SHA-256")));
            }
        }
        let arguments = canonical_json(&approval.arguments);
        self.db.write("record an approval request", |tx| {
            let live: Option<ApprovalId> = tx
                .query_row(
                    "SELECT id FROM approvals WHERE workspace = ?1 AND call_id = ?2
                     AND status IN ('pending', 'approved')",
                    params![approval.workspace, approval.call_id],
                    |r| r.get(0),
                )
                .optional()
                .map_err(self.db.err("record an approval request"))?;
            if let Some(live) = live {
                return Err(Error::Duplicate {
                    path: self.path().to_path_buf(),
                    scope: format!("workspace {}", approval.workspace),
                    call_id: approval.call_id.clone(),
                    existing: format!("live approval {live}"),
                });
            }
            tx.execute(
                "INSERT INTO approvals (conversation_id, workspace, call_id, tool, arguments,
                                        fingerprint, path, before_sha, after_sha, diff, created_at,
                                        expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    approval.conversation,
                    approval.workspace,
                    approval.call_id,
                    approval.tool,
                    arguments,
                    approval.fingerprint,
                    approval.path,
                    approval.before_sha,
                    approval.after_sha,
                    approval.diff,
                    now,
                    now.saturating_add(self.approval_lifetime_ms)
                ],
            )
            .map_err(self.db.err("record an approval request"))?;
            Ok(ApprovalId(tx.last_insert_rowid()))
        })
    }

    /// The person allows the card. Refused, and the card expired, when `now` is at or past its
    /// deadline: a stale approval never permits anything.
    pub fn approve(&self, id: ApprovalId, now: i64) -> Result<Approval> {
        let outcome = self.db.write("approve", |tx| {
            let card = self.approval_in(tx, id)?;
            if card.status != ApprovalStatus::Pending {
                return Err(self.transition(&card, ApprovalStatus::Approved));
            }
            if now >= card.expires_at {
                self.set_status(tx, id, ApprovalStatus::Expired, now, None)?;
                return Ok(Err(Error::ApprovalExpired {
                    path: self.path().to_path_buf(),
                    id: id.0,
                    expires_at: card.expires_at,
                }));
            }
            self.set_status(tx, id, ApprovalStatus::Approved, now, None)?;
            Ok(Ok(()))
        })?;
        outcome?;
        self.approval(id)?
            .ok_or_else(|| not_found(self.path(), format!("approval {id}")))
    }

    /// The person refuses the card.
    pub fn deny(&self, id: ApprovalId, now: i64, note: Option<&str>) -> Result<()> {
        self.move_card(
            id,
            ApprovalStatus::Pending,
            ApprovalStatus::Denied,
            now,
            note,
        )
    }

    /// The approved change was applied.
    pub fn mark_applied(&self, id: ApprovalId, now: i64) -> Result<()> {
        self.move_card(
            id,
            ApprovalStatus::Approved,
            ApprovalStatus::Applied,
            now,
            None,
        )
    }

    /// Applying the approved change failed; `note` says why.
    pub fn mark_failed(&self, id: ApprovalId, now: i64, note: &str) -> Result<()> {
        self.move_card(
            id,
            ApprovalStatus::Approved,
            ApprovalStatus::Failed,
            now,
            Some(note),
        )
    }

    /// Expire, in one transaction, every pending card whose deadline is at or before `now`;
    /// returns their ids so the interface can take the cards down.
    pub fn expire_due(&self, now: i64) -> Result<Vec<ApprovalId>> {
        self.db.write("expire approvals", |tx| {
            let due: Vec<ApprovalId> = tx
                .prepare_cached(
                    "SELECT id FROM approvals WHERE status = 'pending' AND expires_at <= ?1
                     ORDER BY id",
                )
                .and_then(|mut stmt| {
                    stmt.query_map([now], |r| r.get(0))?
                        .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(self.db.err("expire approvals"))?;
            tx.execute(
                "UPDATE approvals SET status = 'expired', decided_at = ?1
                 WHERE status = 'pending' AND expires_at <= ?1",
                [now],
            )
            .map_err(self.db.err("expire approvals"))?;
            Ok(due)
        })
    }

    /// One card.
    pub fn approval(&self, id: ApprovalId) -> Result<Option<Approval>> {
        match self.approval_in(&self.db.conn, id) {
            Ok(card) => Ok(Some(card)),
            Err(Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Every conversation of every workspace, oldest first (the run viewer lists them).
    pub fn all_conversations(&self) -> Result<Vec<Conversation>> {
        self.db.rows(
            "list conversations",
            "SELECT id, workspace, title, model, created_at FROM conversations ORDER BY id",
            [],
            conversation_row,
        )
    }

    /// Every turn of a conversation, oldest first.
    pub fn turns(&self, conversation: ConversationId) -> Result<Vec<Turn>> {
        self.recent_turns(conversation, usize::MAX)
    }

    /// Keeps one event of a conversation as the person saw it (`event` is the protocol's
    /// `ChatEvent` as JSON; `kind` its `type`). Append-only.
    pub fn record_event(
        &self,
        conversation: ConversationId,
        event: &ChatEventRecord,
    ) -> Result<()> {
        if event.kind.is_empty() || event.seq <= 0 {
            return Err(invalid(
                self.path(),
                "a chat event needs a type and a sequence number above 0",
            ));
        }
        let body = self.db.to_json("chat event", &event.event)?;
        self.db
            .conn
            .execute(
                "INSERT INTO chat_events (conversation_id, seq, turn_run, type, event, at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    conversation,
                    event.seq,
                    event.turn_run,
                    event.kind,
                    body,
                    event.at
                ],
            )
            .map_err(self.db.err("record a chat event"))?;
        Ok(())
    }

    /// The recorded events of a conversation, in the order they happened.
    pub fn events(&self, conversation: ConversationId) -> Result<Vec<ChatEventRecord>> {
        self.db.rows_with_json(
            "read chat events",
            "SELECT seq, turn_run, type, event, at FROM chat_events
             WHERE conversation_id = ?1 ORDER BY id",
            [conversation],
            |r| {
                Ok((
                    ChatEventRecord {
                        seq: r.get(0)?,
                        turn_run: r.get(1)?,
                        kind: r.get(2)?,
                        event: Value::Null,
                        at: r.get(4)?,
                    },
                    r.get(3)?,
                ))
            },
            |e| format!("chat event {}", e.seq),
            |e, event| e.event = event,
        )
    }

    /// The approval cards of a conversation, oldest first, as they stand now.
    pub fn conversation_approvals(&self, conversation: ConversationId) -> Result<Vec<Approval>> {
        let sql = format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE conversation_id = ?1 ORDER BY id"
        );
        let rows = self
            .db
            .rows("list approvals", &sql, [conversation], approval_row)?;
        rows.into_iter().map(|row| row.decode(&self.db)).collect()
    }

    /// The pending cards of a workspace, oldest first (some may be past their deadline until the
    /// next [`ChatStore::expire_due`]).
    pub fn pending_approvals(&self, workspace: &str) -> Result<Vec<Approval>> {
        let sql = format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals
             WHERE workspace = ?1 AND status = 'pending' ORDER BY id"
        );
        let rows = self
            .db
            .rows("list approvals", &sql, [workspace], approval_row)?;
        rows.into_iter().map(|row| row.decode(&self.db)).collect()
    }

    fn move_card(
        &self,
        id: ApprovalId,
        from: ApprovalStatus,
        to: ApprovalStatus,
        now: i64,
        note: Option<&str>,
    ) -> Result<()> {
        self.db.write(&format!("mark approval {id} {to}"), |tx| {
            let card = self.approval_in(tx, id)?;
            if card.status != from {
                return Err(self.transition(&card, to));
            }
            self.set_status(tx, id, to, now, note)
        })
    }

    fn set_status(
        &self,
        conn: &rusqlite::Connection,
        id: ApprovalId,
        to: ApprovalStatus,
        now: i64,
        note: Option<&str>,
    ) -> Result<()> {
        let sql = match to {
            ApprovalStatus::Applied | ApprovalStatus::Failed => {
                "UPDATE approvals SET status = ?2, finished_at = ?3, note = coalesce(?4, note)
                 WHERE id = ?1"
            }
            _ => {
                "UPDATE approvals SET status = ?2, decided_at = ?3, note = coalesce(?4, note)
                 WHERE id = ?1"
            }
        };
        conn.execute(sql, params![id, to, now, note])
            .map_err(self.db.err(&format!("mark approval {id} {to}")))?;
        Ok(())
    }

    fn approval_in(&self, conn: &rusqlite::Connection, id: ApprovalId) -> Result<Approval> {
        let sql = format!("SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = ?1");
        conn.query_row(&sql, [id], approval_row)
            .optional()
            .map_err(self.db.err("read an approval"))?
            .ok_or_else(|| not_found(self.path(), format!("approval {id}")))?
            .decode(&self.db)
    }

    fn transition(&self, card: &Approval, to: ApprovalStatus) -> Error {
        Error::Transition {
            path: self.path().to_path_buf(),
            what: format!("approval {}", card.id),
            from: card.status.to_string(),
            to: to.to_string(),
        }
    }
}

fn conversation_row(r: &Row<'_>) -> rusqlite::Result<Conversation> {
    Ok(Conversation {
        id: r.get(0)?,
        workspace: r.get(1)?,
        title: r.get(2)?,
        model: r.get(3)?,
        created_at: r.get(4)?,
    })
}

struct ApprovalRow {
    approval: Approval,
    arguments: String,
}

impl ApprovalRow {
    fn decode(mut self, db: &Db) -> Result<Approval> {
        let id = self.approval.id;
        self.approval.arguments =
            db.parse_json(&format!("arguments of approval {id}"), &self.arguments)?;
        Ok(self.approval)
    }
}

fn approval_row(r: &Row<'_>) -> rusqlite::Result<ApprovalRow> {
    Ok(ApprovalRow {
        approval: Approval {
            id: r.get(0)?,
            conversation: r.get(1)?,
            workspace: r.get(2)?,
            call_id: r.get(3)?,
            tool: r.get(4)?,
            arguments: Value::Null,
            fingerprint: r.get(6)?,
            path: r.get(7)?,
            before_sha: r.get(8)?,
            after_sha: r.get(9)?,
            diff: r.get(10)?,
            status: r.get(11)?,
            note: r.get(12)?,
            created_at: r.get(13)?,
            expires_at: r.get(14)?,
            decided_at: r.get(15)?,
            finished_at: r.get(16)?,
        },
        arguments: r.get(5)?,
    })
}
