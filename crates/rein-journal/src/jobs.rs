//! `jobs.db`: long-running jobs and their states.
//!
//! States move `queued → running | failed`, `running → done | failed | interrupted`,
//! `interrupted → queued | failed` (enforced by a trigger; every change is logged to
//! `job_events` by trigger too). A running job records the process that owns it; when the store
//! is opened, a job still marked running whose owner is gone becomes `interrupted` and is listed
//! in [`JobStore::interrupted_on_open`]. It is never resumed silently: a person requeues it.
//! Jobs owned by a live process (another `rein` using the same file) are left alone.

use std::path::Path;

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::db::{id_type, text_enum, Db};
use crate::error::{invalid, not_found, Error, Result};
use crate::migrate::StoreKind;
use crate::now_millis;

id_type! {
    /// A job.
    JobId
}

text_enum! {
    /// Where a job stands.
    JobState {
        Queued = "queued",
        Running = "running",
        /// Found running after its process had gone; waits for a person.
        Interrupted = "interrupted",
        Done = "done",
        Failed = "failed",
    }
}

/// The process that runs a job: its pid and its start time (clock ticks since boot, from
/// `/proc/PID/stat`), so a reused pid is not mistaken for the owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobOwner {
    pub pid: u32,
    /// 0 where the platform does not tell.
    pub started: u64,
}

impl JobOwner {
    /// This process.
    pub fn current() -> JobOwner {
        let pid = std::process::id();
        JobOwner {
            pid,
            started: process_start(pid).unwrap_or(0),
        }
    }

    /// Whether this process still runs. Where `/proc` is unavailable this answers `false`, so
    /// a job left running is interrupted rather than trusted (fail closed).
    pub fn is_alive(&self) -> bool {
        if self.pid == std::process::id() && self.started == JobOwner::current().started {
            return true;
        }
        match process_start(self.pid) {
            Some(started) => self.started == 0 || started == self.started,
            None => false,
        }
    }

    /// Whether this owner's process has certainly ended: it ran under `host` (its
    /// [`host_key`] as recorded), which is this process's, and no process with its pid (and
    /// start time, when known) exists. Whatever this process cannot see answers `false`: a
    /// process in another container or pid namespace, or on a system without `/proc`.
    pub fn has_ended(&self, host: &str) -> bool {
        if host_key().as_deref() != Some(host) {
            return false;
        }
        match process_start(self.pid) {
            Some(started) => self.started != 0 && started != self.started,
            None => true,
        }
    }
}

/// This machine's boot and this process's pid namespace (`<boot id>/<namespace>`), or `None`
/// where `/proc` does not tell: a pid means the same process only under the same key.
pub fn host_key() -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let namespace = std::fs::read_link("/proc/self/ns/pid").ok()?;
    Some(format!("{}/{}", boot.trim(), namespace.display()))
}

fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 22 (starttime); fields after the command name, which ends at the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// What [`JobStore::enqueue`] records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewJob {
    pub kind: String,
    pub title: String,
    pub workspace: Option<String>,
    /// What to do, for the code that runs the job.
    pub spec: Value,
}

/// A job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub id: JobId,
    pub kind: String,
    pub title: String,
    pub workspace: Option<String>,
    pub spec: Value,
    pub state: JobState,
    pub progress: Option<Value>,
    pub result: Option<Value>,
    pub error: Option<String>,
    pub owner: Option<JobOwner>,
    pub created_at: i64,
    pub updated_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
}

/// The jobs store.
#[derive(Debug)]
pub struct JobStore {
    pub(crate) db: Db,
    interrupted: Vec<JobId>,
}

const JOB_COLUMNS: &str = "id, kind, title, workspace, spec, state, progress, result, error, \
    owner_pid, owner_started, created_at, updated_at, started_at, finished_at";

impl JobStore {
    /// Open `jobs.db` at `path`, creating and migrating it as needed, and mark every job left
    /// running by a process that is gone as interrupted.
    pub fn open(path: impl AsRef<Path>) -> Result<JobStore> {
        let mut store = JobStore {
            db: Db::open(path.as_ref(), StoreKind::Jobs)?,
            interrupted: Vec::new(),
        };
        store.interrupted = store.interrupt_orphans()?;
        Ok(store)
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.db.path
    }

    /// Jobs this open found running without a live owner and marked interrupted: tell the person.
    pub fn interrupted_on_open(&self) -> &[JobId] {
        &self.interrupted
    }

    /// Queue a new job.
    pub fn enqueue(&self, job: &NewJob) -> Result<JobId> {
        if job.kind.is_empty() {
            return Err(invalid(self.path(), "a job needs a kind"));
        }
        let spec = self.db.to_json("job spec", &job.spec)?;
        let now = now_millis();
        self.db
            .conn
            .execute(
                "INSERT INTO jobs (kind, title, workspace, spec, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                params![job.kind, job.title, job.workspace, spec, now],
            )
            .map_err(self.db.err("queue a job"))?;
        Ok(JobId(self.db.conn.last_insert_rowid()))
    }

    /// Claim a queued job for `owner` (normally [`JobOwner::current`]).
    pub fn start(&self, id: JobId, owner: &JobOwner) -> Result<()> {
        let started = i64::try_from(owner.started).unwrap_or(i64::MAX);
        self.transition(id, &[JobState::Queued], JobState::Running, |tx, now| {
            tx.execute(
                "UPDATE jobs SET state = 'running', owner_pid = ?2, owner_started = ?3,
                                 started_at = ?4, updated_at = ?4 WHERE id = ?1",
                params![id, owner.pid, started, now],
            )
        })
    }

    /// Record progress of a running job.
    pub fn set_progress(&self, id: JobId, progress: &Value) -> Result<()> {
        let progress = self.db.to_json("job progress", progress)?;
        self.transition(id, &[JobState::Running], JobState::Running, |tx, now| {
            tx.execute(
                "UPDATE jobs SET progress = ?2, updated_at = ?3 WHERE id = ?1",
                params![id, progress, now],
            )
        })
    }

    /// A running job finished with `result`.
    pub fn finish(&self, id: JobId, result: &Value) -> Result<()> {
        let result = self.db.to_json("job result", result)?;
        self.transition(id, &[JobState::Running], JobState::Done, |tx, now| {
            tx.execute(
                "UPDATE jobs SET state = 'done', result = ?2, owner_pid = NULL,
                                 owner_started = NULL, finished_at = ?3, updated_at = ?3
                 WHERE id = ?1",
                params![id, result, now],
            )
        })
    }

    /// A job failed, or a person cancelled a queued or interrupted one.
    pub fn fail(&self, id: JobId, error: &str) -> Result<()> {
        let from = [JobState::Queued, JobState::Running, JobState::Interrupted];
        self.transition(id, &from, JobState::Failed, |tx, now| {
            tx.execute(
                "UPDATE jobs SET state = 'failed', error = ?2, owner_pid = NULL,
                                 owner_started = NULL, finished_at = ?3, updated_at = ?3
                 WHERE id = ?1",
                params![id, error, now],
            )
        })
    }

    /// A person asks for an interrupted job to run again: it goes back to the queue.
    pub fn requeue(&self, id: JobId) -> Result<()> {
        self.transition(id, &[JobState::Interrupted], JobState::Queued, |tx, now| {
            tx.execute(
                "UPDATE jobs SET state = 'queued', updated_at = ?2 WHERE id = ?1",
                params![id, now],
            )
        })
    }

    /// One job.
    pub fn job(&self, id: JobId) -> Result<Option<Job>> {
        let sql = format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1");
        let row = self
            .db
            .conn
            .query_row(&sql, [id], job_row)
            .optional()
            .map_err(self.db.err("read a job"))?;
        row.map(|row| row.decode(&self.db)).transpose()
    }

    /// Every job, oldest first.
    pub fn jobs(&self) -> Result<Vec<Job>> {
        let sql = format!("SELECT {JOB_COLUMNS} FROM jobs ORDER BY id");
        let mut stmt = self
            .db
            .conn
            .prepare_cached(&sql)
            .map_err(self.db.err("list jobs"))?;
        let rows = stmt
            .query_map([], job_row)
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(self.db.err("list jobs"))?;
        rows.into_iter().map(|row| row.decode(&self.db)).collect()
    }

    /// The state history of a job: `(from, to, at)`, oldest first.
    pub fn history(&self, id: JobId) -> Result<Vec<(Option<JobState>, JobState, i64)>> {
        let mut stmt = self
            .db
            .conn
            .prepare_cached(
                "SELECT from_state, to_state, at FROM job_events WHERE job_id = ?1 ORDER BY id",
            )
            .map_err(self.db.err("read job history"))?;
        let rows = stmt
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(self.db.err("read job history"))?;
        Ok(rows)
    }

    fn interrupt_orphans(&self) -> Result<Vec<JobId>> {
        self.db.write("mark interrupted jobs", |tx| {
            let running: Vec<(JobId, Option<u32>, Option<i64>)> = tx
                .prepare_cached(
                    "SELECT id, owner_pid, owner_started FROM jobs WHERE state = 'running'
                     ORDER BY id",
                )
                .and_then(|mut stmt| {
                    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                        .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(self.db.err("mark interrupted jobs"))?;
            let now = now_millis();
            let mut interrupted = Vec::new();
            for (id, pid, started) in running {
                let owner = pid.map(|pid| JobOwner {
                    pid,
                    started: started.and_then(|s| u64::try_from(s).ok()).unwrap_or(0),
                });
                if owner.is_some_and(|o| o.is_alive()) {
                    continue;
                }
                let note = match owner {
                    Some(o) => format!(
                        "interrupted: its process (pid {}) ended while it ran",
                        o.pid
                    ),
                    None => "interrupted: it had no owning process".to_string(),
                };
                tx.execute(
                    "UPDATE jobs SET state = 'interrupted', owner_pid = NULL, owner_started = NULL,
                                     error = ?2, updated_at = ?3 WHERE id = ?1",
                    params![id, note, now],
                )
                .map_err(self.db.err("mark interrupted jobs"))?;
                crate::bench_items::interrupt_running_items(tx, id, &note, now)
                    .map_err(self.db.err("mark interrupted jobs"))?;
                interrupted.push(id);
            }
            Ok(interrupted)
        })
    }

    fn transition(
        &self,
        id: JobId,
        from: &[JobState],
        to: JobState,
        update: impl FnOnce(&rusqlite::Transaction<'_>, i64) -> rusqlite::Result<usize>,
    ) -> Result<()> {
        let action = format!("move job {id} to {to}");
        self.db.write(&action, |tx| {
            let state: JobState = tx
                .query_row("SELECT state FROM jobs WHERE id = ?1", [id], |r| r.get(0))
                .optional()
                .map_err(self.db.err(&action))?
                .ok_or_else(|| not_found(self.path(), format!("job {id}")))?;
            if !from.contains(&state) {
                return Err(Error::Transition {
                    path: self.path().to_path_buf(),
                    what: format!("job {id}"),
                    from: state.to_string(),
                    to: to.to_string(),
                });
            }
            update(tx, now_millis()).map_err(self.db.err(&action))?;
            Ok(())
        })
    }
}

struct JobRow {
    job: Job,
    spec: String,
    progress: Option<String>,
    result: Option<String>,
}

impl JobRow {
    fn decode(mut self, db: &Db) -> Result<Job> {
        let id = self.job.id;
        self.job.spec = db.parse_json(&format!("spec of job {id}"), &self.spec)?;
        self.job.progress = self
            .progress
            .map(|p| db.parse_json(&format!("progress of job {id}"), &p))
            .transpose()?;
        self.job.result = self
            .result
            .map(|r| db.parse_json(&format!("result of job {id}"), &r))
            .transpose()?;
        Ok(self.job)
    }
}

fn job_row(r: &Row<'_>) -> rusqlite::Result<JobRow> {
    let pid: Option<u32> = r.get(9)?;
    let started: Option<i64> = r.get(10)?;
    Ok(JobRow {
        job: Job {
            id: r.get(0)?,
            kind: r.get(1)?,
            title: r.get(2)?,
            workspace: r.get(3)?,
            spec: Value::Null,
            state: r.get(5)?,
            progress: None,
            result: None,
            error: r.get(8)?,
            owner: pid.map(|pid| JobOwner {
                pid,
                started: started.and_then(|s| u64::try_from(s).ok()).unwrap_or(0),
            }),
            created_at: r.get(11)?,
            updated_at: r.get(12)?,
            started_at: r.get(13)?,
            finished_at: r.get(14)?,
        },
        spec: r.get(4)?,
        progress: r.get(6)?,
        result: r.get(7)?,
    })
}
