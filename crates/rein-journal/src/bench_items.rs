//! The work items of a bench job in `jobs.db`: one per run (suite, task, model, repeat, seed).
//!
//! Items move `queued → running → done | interrupted` (enforced by a trigger). A done item holds
//! the run's result record, so a bench cut off mid-way loses no judged run. An interrupted item
//! (its process died while it ran, or the run failed with an error) is kept for the record and
//! never reopened: the run is redone as a new item with the next attempt number.

use rusqlite::{params, Row, Transaction};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::db::{id_type, text_enum};
use crate::error::{invalid, not_found, Error, Result};
use crate::jobs::{Job, JobId, JobStore};
use crate::now_millis;

id_type! {
    /// A bench work item.
    BenchItemId
}

text_enum! {
    /// Where a bench work item stands.
    BenchItemState {
        Queued = "queued",
        Running = "running",
        Done = "done",
        /// Cut off (its process ended) or failed with an error; redone as a new item.
        Interrupted = "interrupted",
    }
}

/// What [`JobStore::queue_bench_item`] records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewBenchItem {
    pub suite: String,
    pub task: String,
    pub model: String,
    pub repeat: u32,
    pub seed: u64,
}

/// One work item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchItem {
    pub id: BenchItemId,
    pub job: JobId,
    pub suite: String,
    pub task: String,
    pub model: String,
    pub repeat: u32,
    pub seed: u64,
    /// 1 for the first try of this run in its job, 2 after one interruption, ...
    pub attempt: u32,
    pub state: BenchItemState,
    /// The run's result record, once done.
    pub result: Option<Value>,
    /// The journal run that recorded it, once done.
    pub journal_run: Option<i64>,
    /// Why it was interrupted.
    pub note: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

const ITEM_COLUMNS: &str = "i.id, i.job_id, i.suite, i.task, i.model, i.repeat, i.seed, \
    i.attempt, i.state, i.result, i.journal_run, i.note, i.created_at, i.updated_at";

fn item_row(r: &Row<'_>) -> rusqlite::Result<(BenchItem, String)> {
    let result: Option<String> = r.get(9)?;
    let seed: i64 = r.get(6)?;
    Ok((
        BenchItem {
            id: r.get(0)?,
            job: r.get(1)?,
            suite: r.get(2)?,
            task: r.get(3)?,
            model: r.get(4)?,
            repeat: r.get(5)?,
            seed: u64::try_from(seed).unwrap_or(0),
            attempt: r.get(7)?,
            state: r.get(8)?,
            result: None,
            journal_run: r.get(10)?,
            note: r.get(11)?,
            created_at: r.get(12)?,
            updated_at: r.get(13)?,
        },
        result.unwrap_or_else(|| "null".into()),
    ))
}

/// Marks the running items of job `job` interrupted (its process is gone); called in the
/// transaction that interrupts the job.
pub(crate) fn interrupt_running_items(
    tx: &Transaction<'_>,
    job: JobId,
    note: &str,
    now: i64,
) -> rusqlite::Result<usize> {
    tx.execute(
        "UPDATE bench_items SET state = 'interrupted', note = ?2, updated_at = ?3
         WHERE job_id = ?1 AND state = 'running'",
        params![job, note, now],
    )
}

impl JobStore {
    /// The latest bench job that wrote to the output folder `workspace` (a canonical path).
    pub fn latest_bench_job(&self, workspace: &str) -> Result<Option<Job>> {
        let id: Option<JobId> = self
            .db
            .rows(
                "find the bench job of a folder",
                "SELECT id FROM jobs WHERE kind = 'bench' AND workspace = ?1
                 ORDER BY id DESC LIMIT 1",
                [workspace],
                |r| r.get(0),
            )?
            .into_iter()
            .next();
        match id {
            Some(id) => self.job(id),
            None => Ok(None),
        }
    }

    /// Every item of every bench job of the output folder `workspace`, oldest first.
    pub fn bench_items(&self, workspace: &str) -> Result<Vec<BenchItem>> {
        let sql = format!(
            "SELECT {ITEM_COLUMNS} FROM bench_items i JOIN jobs j ON j.id = i.job_id
             WHERE j.kind = 'bench' AND j.workspace = ?1 ORDER BY i.id"
        );
        self.db.rows_with_json(
            "list bench items",
            &sql,
            [workspace],
            item_row,
            |i: &BenchItem| format!("result of bench item {}", i.id),
            |i: &mut BenchItem, v: Value| i.result = (!v.is_null()).then_some(v),
        )
    }

    /// Queues a run for `job`, with the attempt number after the ones it already has.
    pub fn queue_bench_item(&self, job: JobId, item: &NewBenchItem) -> Result<BenchItemId> {
        let seed = i64::try_from(item.seed)
            .map_err(|_| invalid(self.path(), format!("seed {} is too large", item.seed)))?;
        self.db.write("queue a bench item", |tx| {
            let now = now_millis();
            tx.execute(
                "INSERT INTO bench_items (job_id, suite, task, model, repeat, seed, attempt,
                                          created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6,
                         1 + (SELECT coalesce(max(attempt), 0) FROM bench_items
                              WHERE job_id = ?1 AND suite = ?2 AND task = ?3 AND model = ?4
                                AND repeat = ?5),
                         ?7, ?7)",
                params![
                    job,
                    item.suite,
                    item.task,
                    item.model,
                    item.repeat,
                    seed,
                    now
                ],
            )
            .map_err(self.db.err("queue a bench item"))?;
            Ok(BenchItemId(tx.last_insert_rowid()))
        })
    }

    /// A worker takes a queued item.
    pub fn start_bench_item(&self, id: BenchItemId) -> Result<()> {
        self.item_transition(
            id,
            BenchItemState::Queued,
            BenchItemState::Running,
            |tx, now| {
                tx.execute(
                    "UPDATE bench_items SET state = 'running', updated_at = ?2 WHERE id = ?1",
                    params![id, now],
                )
            },
        )
    }

    /// A running item was judged: `result` is its record.
    pub fn finish_bench_item(
        &self,
        id: BenchItemId,
        result: &Value,
        journal_run: Option<i64>,
    ) -> Result<()> {
        let text = self.db.to_json("bench item result", result)?;
        self.item_transition(
            id,
            BenchItemState::Running,
            BenchItemState::Done,
            |tx, now| {
                tx.execute(
                    "UPDATE bench_items SET state = 'done', result = ?2, journal_run = ?3,
                                        updated_at = ?4 WHERE id = ?1",
                    params![id, text, journal_run, now],
                )
            },
        )
    }

    /// A running item stopped without a verdict (an error); `note` says why.
    pub fn interrupt_bench_item(&self, id: BenchItemId, note: &str) -> Result<()> {
        self.item_transition(
            id,
            BenchItemState::Running,
            BenchItemState::Interrupted,
            |tx, now| {
                tx.execute(
                    "UPDATE bench_items SET state = 'interrupted', note = ?2, updated_at = ?3
                     WHERE id = ?1",
                    params![id, note, now],
                )
            },
        )
    }

    fn item_transition(
        &self,
        id: BenchItemId,
        from: BenchItemState,
        to: BenchItemState,
        update: impl FnOnce(&Transaction<'_>, i64) -> rusqlite::Result<usize>,
    ) -> Result<()> {
        let action = format!("move bench item {id} to {to}");
        self.db.write(&action, |tx| {
            let state: BenchItemState = tx
                .query_row("SELECT state FROM bench_items WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
                .map_err(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => {
                        not_found(self.path(), format!("bench item {id}"))
                    }
                    e => self.db.err(&action)(e),
                })?;
            if state != from {
                return Err(Error::Transition {
                    path: self.path().to_path_buf(),
                    what: format!("bench item {id}"),
                    from: state.to_string(),
                    to: to.to_string(),
                });
            }
            update(tx, now_millis()).map_err(self.db.err(&action))?;
            Ok(())
        })
    }
}
