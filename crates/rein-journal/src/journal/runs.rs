//! Runs, attempts, steps, check results and events, and the trace `rein journal show` prints.

use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::calls::RecordedCall;
use super::changes::Change;
use super::{Journal, RunId};
use crate::db::{id_type, text_enum};
use crate::error::{invalid, not_found, Error, Result};
use crate::jobs::{host_key, JobOwner};
use crate::{is_sha256_hex, now_millis};

id_type! {
    /// An attempt within a run (one strategy, retried up to its cap).
    AttemptId
}
id_type! {
    /// A step of a run.
    StepId
}
id_type! {
    /// A check result of a run.
    CheckId
}
id_type! {
    /// An event in the journal.
    EventId
}

text_enum! {
    /// What started a run.
    RunKind {
        /// `rein run MISSION`: a verified mission.
        Mission = "mission",
        /// One task of `rein bench`.
        Bench = "bench",
        /// `rein tool`, when it is journaled as a run.
        Tool = "tool",
    }
}

text_enum! {
    /// Where a run stands. Only `running` changes, once, to one of the others.
    RunStatus {
        Running = "running",
        /// The judge's verdict was pass.
        Pass = "pass",
        /// The judge's verdict was fail.
        Fail = "fail",
        /// The run stopped without a verdict (a cap, an error, the person).
        Aborted = "aborted",
    }
}

text_enum! {
    /// What kind of step the agent loop recorded.
    StepKind {
        /// The model chose an action; it went through the gate.
        Action = "action",
        /// No action could be read from the reply; the model was told (this costs a step).
        FormatError = "format_error",
        /// The harness refused something (a `finish` without evidence, an unknown tool).
        Refusal = "refusal",
        /// A cap fired.
        Cap = "cap",
        /// Anything else worth showing in the trace.
        Note = "note",
    }
}

/// What [`Journal::begin_run`] records about a new run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewRun {
    pub kind: RunKind,
    pub mission_id: Option<String>,
    /// The frozen contract this run is judged by; must be stored first
    /// ([`Journal::store_acceptance_spec`]).
    pub contract_sha: Option<String>,
    pub workspace: Option<String>,
    pub model: Option<String>,
    /// Anything else worth keeping (budgets, model identity, command line).
    pub meta: Value,
}

impl NewRun {
    /// A run of `kind` with nothing else known yet.
    pub fn new(kind: RunKind) -> NewRun {
        NewRun {
            kind,
            mission_id: None,
            contract_sha: None,
            workspace: None,
            model: None,
            meta: Value::Object(Default::default()),
        }
    }
}

/// One run as `rein journal list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub id: RunId,
    pub kind: RunKind,
    pub mission_id: Option<String>,
    pub contract_sha: Option<String>,
    pub workspace: Option<String>,
    pub model: Option<String>,
    pub meta: Value,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub status: RunStatus,
    pub verdict: Option<Value>,
    /// Number of steps recorded.
    pub steps: i64,
    /// Sums over the steps that recorded tokens.
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
}

/// One attempt of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub id: AttemptId,
    pub run: RunId,
    /// 1, 2, ... within the run.
    pub seq: i64,
    pub strategy: String,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub outcome: Option<String>,
}

/// What [`Journal::append_step`] records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewStep {
    pub kind: StepKind,
    pub attempt: Option<AttemptId>,
    pub thought: Option<String>,
    /// The tool the model chose.
    pub action: Option<String>,
    /// The id of the tool call sent to the gate; links the step to its [`RecordedCall`].
    pub call_id: Option<String>,
    /// The model's raw reply, when worth keeping (always for format errors).
    pub reply: Option<String>,
    /// Anything else: parameters, the message fed back, which cap fired.
    pub detail: Value,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    pub elapsed_ms: Option<u64>,
}

impl NewStep {
    /// A step of `kind` with nothing else filled in.
    pub fn new(kind: StepKind) -> NewStep {
        NewStep {
            kind,
            attempt: None,
            thought: None,
            action: None,
            call_id: None,
            reply: None,
            detail: Value::Object(Default::default()),
            prompt_tokens: None,
            completion_tokens: None,
            elapsed_ms: None,
        }
    }
}

/// A recorded step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub id: StepId,
    pub run: RunId,
    /// 1, 2, ... within the run.
    pub seq: i64,
    pub kind: StepKind,
    pub attempt: Option<AttemptId>,
    pub thought: Option<String>,
    pub action: Option<String>,
    pub call_id: Option<String>,
    pub reply: Option<String>,
    pub detail: Value,
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub elapsed_ms: Option<i64>,
    pub created_at: i64,
}

/// What [`Journal::record_check`] records: one deterministic check and the facts it read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewCheck {
    pub attempt: Option<AttemptId>,
    /// The check kind (`file_exists`, `json_schema`, ...).
    pub kind: String,
    /// The check's name in the contract.
    pub name: String,
    pub passed: bool,
    /// Advice for the person that never decides the verdict (an unqualified semantic check).
    #[serde(default)]
    pub advisory: bool,
    pub facts: Value,
}

/// A recorded check result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub id: CheckId,
    pub run: RunId,
    /// 1, 2, ... within the run.
    pub seq: i64,
    pub attempt: Option<AttemptId>,
    pub kind: String,
    pub name: String,
    pub passed: bool,
    /// Advice for the person that never decides the verdict (an unqualified semantic check).
    #[serde(default)]
    pub advisory: bool,
    pub facts: Value,
    pub created_at: i64,
}

/// A recorded event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub id: EventId,
    pub run: Option<RunId>,
    pub kind: String,
    pub payload: Value,
    pub created_at: i64,
}

/// A step with the gate's decision on its call, if it made one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceStep {
    #[serde(flatten)]
    pub step: Step,
    /// The latest gate decision recorded for the step's call id in this run.
    pub call: Option<RecordedCall>,
}

/// Everything recorded about one run, each list in the order it was recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunTrace {
    pub run: RunSummary,
    pub attempts: Vec<Attempt>,
    pub steps: Vec<TraceStep>,
    /// Every gate decision in the run, including calls no step names.
    pub tool_calls: Vec<RecordedCall>,
    pub checks: Vec<CheckResult>,
    pub events: Vec<Event>,
    /// Changes applied (or attempted) by calls of this run.
    pub changes: Vec<Change>,
}

const RUN_COLUMNS: &str = "r.id, r.kind, r.mission_id, r.contract_sha, r.workspace, r.model, \
    r.meta, r.started_at, r.finished_at, r.status, r.verdict, \
    (SELECT count(*) FROM steps s WHERE s.run_id = r.id), \
    (SELECT coalesce(sum(prompt_tokens), 0) FROM steps s WHERE s.run_id = r.id), \
    (SELECT coalesce(sum(completion_tokens), 0) FROM steps s WHERE s.run_id = r.id)";

impl Journal {
    /// Start a run and return its id.
    pub fn begin_run(&self, run: &NewRun) -> Result<RunId> {
        if let Some(sha) = &run.contract_sha {
            if !is_sha256_hex(sha) {
                return Err(invalid(
                    self.path(),
                    format!("contract sha {sha:?} is not a SHA-256"),
                ));
            }
        }
        let meta = self.db.to_json("run meta", &run.meta)?;
        self.interrupt_orphaned_runs()?;
        let owner = JobOwner::current();
        let host = host_key();
        self.db.write("start a run", |tx| {
            if let Some(sha) = &run.contract_sha {
                let known: bool = tx
                    .query_row(
                        "SELECT EXISTS (SELECT 1 FROM acceptance_specs WHERE sha256 = ?1)",
                        [sha],
                        |r| r.get(0),
                    )
                    .map_err(self.db.err("start a run"))?;
                if !known {
                    return Err(not_found(
                        self.path(),
                        format!("acceptance spec {sha} (store it before starting the run)"),
                    ));
                }
            }
            tx.execute(
                "INSERT INTO runs (kind, mission_id, contract_sha, workspace, model, meta, started_at,
                                   owner_pid, owner_started, owner_host)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    run.kind,
                    run.mission_id,
                    run.contract_sha,
                    run.workspace,
                    run.model,
                    meta,
                    now_millis(),
                    owner.pid,
                    i64::try_from(owner.started).unwrap_or(0),
                    host
                ],
            )
            .map_err(self.db.err("start a run"))?;
            Ok(RunId(tx.last_insert_rowid()))
        })
    }

    /// Records every run still `running` whose process has certainly ended (a killed bench, a
    /// crash) as aborted, with an `interrupted` event that says so. Only runs begun under this
    /// process's boot and pid namespace are judged ([`host_key`]); a run of another container,
    /// of a system without `/proc`, or of an earlier version that recorded no owner is left as
    /// it is, since aborting a live run cannot be undone. Called as each run begins. Returns the
    /// runs it closed.
    pub fn interrupt_orphaned_runs(&self) -> Result<Vec<RunId>> {
        let Some(host) = host_key() else {
            return Ok(Vec::new());
        };
        self.db.write("close interrupted runs", |tx| {
            let running: Vec<(RunId, u32, Option<i64>)> = tx
                .prepare_cached(
                    "SELECT id, owner_pid, owner_started FROM runs
                     WHERE status = 'running' AND owner_pid IS NOT NULL AND owner_host = ?1
                     ORDER BY id",
                )
                .and_then(|mut stmt| {
                    stmt.query_map([&host], |r| Ok((RunId(r.get(0)?), r.get(1)?, r.get(2)?)))?
                        .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(self.db.err("close interrupted runs"))?;
            let now = now_millis();
            let mut closed = Vec::new();
            for (run, pid, started) in running {
                let owner = JobOwner {
                    pid,
                    started: started.and_then(|s| u64::try_from(s).ok()).unwrap_or(0),
                };
                if !owner.has_ended(&host) {
                    continue;
                }
                let note = format!(
                    "interrupted: its process (pid {pid}) ended before the run did, so it has no \
                     verdict"
                );
                let verdict =
                    serde_json::json!({ "reason": note, "interrupted": true }).to_string();
                let changed = tx
                    .execute(
                        "UPDATE runs SET status = 'aborted', verdict = ?2, finished_at = ?3
                         WHERE id = ?1 AND status = 'running'",
                        params![run, verdict, now],
                    )
                    .map_err(self.db.err("close interrupted runs"))?;
                if changed == 0 {
                    continue;
                }
                tx.execute(
                    "INSERT INTO events (run_id, kind, payload, created_at)
                     VALUES (?1, 'interrupted', ?2, ?3)",
                    params![run, serde_json::json!({ "note": note }).to_string(), now],
                )
                .map_err(self.db.err("close interrupted runs"))?;
                closed.push(run);
            }
            Ok(closed)
        })
    }

    /// Finish a run once, with its status and verdict (the facts that decided it).
    pub fn finish_run(&self, run: RunId, status: RunStatus, verdict: &Value) -> Result<()> {
        if status == RunStatus::Running {
            return Err(invalid(
                self.path(),
                "a run cannot be finished with status running",
            ));
        }
        let verdict = self.db.to_json("verdict", verdict)?;
        self.db.write("finish a run", |tx| {
            let current: Option<RunStatus> = tx
                .query_row("SELECT status FROM runs WHERE id = ?1", [run], |r| r.get(0))
                .optional()
                .map_err(self.db.err("finish a run"))?;
            match current {
                None => Err(not_found(self.path(), format!("run {run}"))),
                Some(RunStatus::Running) => {
                    tx.execute(
                        "UPDATE runs SET status = ?2, verdict = ?3, finished_at = ?4 WHERE id = ?1",
                        params![run, status, verdict, now_millis()],
                    )
                    .map_err(self.db.err("finish a run"))?;
                    Ok(())
                }
                Some(other) => Err(Error::Transition {
                    path: self.path().to_path_buf(),
                    what: format!("run {run}"),
                    from: other.to_string(),
                    to: status.to_string(),
                }),
            }
        })
    }

    /// Start attempt number n+1 of a run with the named strategy.
    pub fn begin_attempt(&self, run: RunId, strategy: &str) -> Result<AttemptId> {
        self.db.write("start an attempt", |tx| {
            self.require_running(tx, run)?;
            tx.execute(
                "INSERT INTO attempts (run_id, seq, strategy, started_at)
                 VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM attempts WHERE run_id = ?1),
                         ?2, ?3)",
                params![run, strategy, now_millis()],
            )
            .map_err(self.db.err("start an attempt"))?;
            Ok(AttemptId(tx.last_insert_rowid()))
        })
    }

    /// Finish an attempt once, with a short outcome (`passed`, `failed: ...`, `replanned`).
    pub fn finish_attempt(&self, attempt: AttemptId, outcome: &str) -> Result<()> {
        self.db.write("finish an attempt", |tx| {
            let finished: Option<Option<i64>> = tx
                .query_row(
                    "SELECT finished_at FROM attempts WHERE id = ?1",
                    [attempt],
                    |r| r.get(0),
                )
                .optional()
                .map_err(self.db.err("finish an attempt"))?;
            match finished {
                None => Err(not_found(self.path(), format!("attempt {attempt}"))),
                Some(Some(_)) => Err(Error::Transition {
                    path: self.path().to_path_buf(),
                    what: format!("attempt {attempt}"),
                    from: "finished".into(),
                    to: "finished again".into(),
                }),
                Some(None) => {
                    tx.execute(
                        "UPDATE attempts SET finished_at = ?2, outcome = ?3 WHERE id = ?1",
                        params![attempt, now_millis(), outcome],
                    )
                    .map_err(self.db.err("finish an attempt"))?;
                    Ok(())
                }
            }
        })
    }

    /// Append the next step of a running run.
    pub fn append_step(&self, run: RunId, step: &NewStep) -> Result<StepId> {
        let detail = self.db.to_json("step detail", &step.detail)?;
        let elapsed = step
            .elapsed_ms
            .map(|ms| i64::try_from(ms).unwrap_or(i64::MAX));
        self.db.write("record a step", |tx| {
            self.require_running(tx, run)?;
            self.require_attempt_of(tx, run, step.attempt)?;
            tx.execute(
                "INSERT INTO steps (run_id, seq, attempt_id, kind, thought, action, call_id, reply,
                                    detail, prompt_tokens, completion_tokens, elapsed_ms, created_at)
                 VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM steps WHERE run_id = ?1),
                         ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    run,
                    step.attempt,
                    step.kind,
                    step.thought,
                    step.action,
                    step.call_id,
                    step.reply,
                    detail,
                    step.prompt_tokens,
                    step.completion_tokens,
                    elapsed,
                    now_millis()
                ],
            )
            .map_err(self.db.err("record a step"))?;
            Ok(StepId(tx.last_insert_rowid()))
        })
    }

    /// Record one check result of a run (the judge may run after the actor stopped, so the run
    /// must exist but need not be running).
    pub fn record_check(&self, run: RunId, check: &NewCheck) -> Result<CheckId> {
        let facts = self.db.to_json("check facts", &check.facts)?;
        self.db.write("record a check result", |tx| {
            self.require_run(tx, run)?;
            self.require_attempt_of(tx, run, check.attempt)?;
            tx.execute(
                "INSERT INTO check_results (run_id, attempt_id, seq, kind, name, passed, facts,
                                            created_at, advisory)
                 VALUES (?1, ?2, (SELECT coalesce(max(seq), 0) + 1 FROM check_results
                                  WHERE run_id = ?1), ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    run,
                    check.attempt,
                    check.kind,
                    check.name,
                    check.passed,
                    facts,
                    now_millis(),
                    check.advisory
                ],
            )
            .map_err(self.db.err("record a check result"))?;
            Ok(CheckId(tx.last_insert_rowid()))
        })
    }

    /// Append an event, tied to a run or (for things like crash recovery) to none.
    pub fn append_event(&self, run: Option<RunId>, kind: &str, payload: &Value) -> Result<EventId> {
        if kind.is_empty() {
            return Err(invalid(self.path(), "an event needs a kind"));
        }
        let payload = self.db.to_json("event payload", payload)?;
        self.db.write("record an event", |tx| {
            if let Some(run) = run {
                self.require_run(tx, run)?;
            }
            tx.execute(
                "INSERT INTO events (run_id, kind, payload, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![run, kind, payload, now_millis()],
            )
            .map_err(self.db.err("record an event"))?;
            Ok(EventId(tx.last_insert_rowid()))
        })
    }

    /// Every run, oldest first.
    pub fn list_runs(&self) -> Result<Vec<RunSummary>> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs r ORDER BY r.id");
        let rows = self.db.rows("list runs", &sql, [], run_row)?;
        rows.into_iter().map(|row| row.decode(self)).collect()
    }

    /// One run's summary.
    pub fn run(&self, run: RunId) -> Result<Option<RunSummary>> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs r WHERE r.id = ?1");
        let row = self
            .db
            .conn
            .query_row(&sql, [run], run_row)
            .optional()
            .map_err(self.db.err("read a run"))?;
        row.map(|row| row.decode(self)).transpose()
    }

    /// Events not tied to any run (crash recovery and the like), oldest first.
    pub fn global_events(&self) -> Result<Vec<Event>> {
        self.events_where("run_id IS NULL", None)
    }

    /// Everything recorded about a run, from one consistent snapshot.
    pub fn run_trace(&self, run: RunId) -> Result<RunTrace> {
        self.db.read("read a run trace", |_| {
            let summary = self
                .run(run)?
                .ok_or_else(|| not_found(self.path(), format!("run {run}")))?;
            let attempts = self.attempts(run)?;
            let tool_calls = self.tool_calls_of_run(run)?;
            let steps =
                self.steps(run)?
                    .into_iter()
                    .map(|step| {
                        let call = step.call_id.as_ref().and_then(|id| {
                            tool_calls.iter().rev().find(|c| &c.call_id == id).cloned()
                        });
                        TraceStep { step, call }
                    })
                    .collect();
            Ok(RunTrace {
                run: summary,
                attempts,
                steps,
                checks: self.checks(run)?,
                events: self.events_where("run_id = ?1", Some(run))?,
                changes: self.changes_of_run(run)?,
                tool_calls,
            })
        })
    }

    fn attempts(&self, run: RunId) -> Result<Vec<Attempt>> {
        self.db.rows(
            "read attempts",
            "SELECT id, run_id, seq, strategy, started_at, finished_at, outcome
             FROM attempts WHERE run_id = ?1 ORDER BY seq",
            [run],
            |r| {
                Ok(Attempt {
                    id: r.get(0)?,
                    run: r.get(1)?,
                    seq: r.get(2)?,
                    strategy: r.get(3)?,
                    started_at: r.get(4)?,
                    finished_at: r.get(5)?,
                    outcome: r.get(6)?,
                })
            },
        )
    }

    fn steps(&self, run: RunId) -> Result<Vec<Step>> {
        self.db.rows_with_json(
            "read steps",
            "SELECT id, run_id, seq, kind, attempt_id, thought, action, call_id, reply, detail,
                    prompt_tokens, completion_tokens, elapsed_ms, created_at
             FROM steps WHERE run_id = ?1 ORDER BY seq",
            [run],
            |r| {
                Ok((
                    Step {
                        id: r.get(0)?,
                        run: r.get(1)?,
                        seq: r.get(2)?,
                        kind: r.get(3)?,
                        attempt: r.get(4)?,
                        thought: r.get(5)?,
                        action: r.get(6)?,
                        call_id: r.get(7)?,
                        reply: r.get(8)?,
                        detail: Value::Null,
                        prompt_tokens: r.get(10)?,
                        completion_tokens: r.get(11)?,
                        elapsed_ms: r.get(12)?,
                        created_at: r.get(13)?,
                    },
                    r.get(9)?,
                ))
            },
            |step| format!("detail of step {}", step.id),
            |step, detail| step.detail = detail,
        )
    }

    fn checks(&self, run: RunId) -> Result<Vec<CheckResult>> {
        self.db.rows_with_json(
            "read check results",
            "SELECT id, run_id, seq, attempt_id, kind, name, passed, facts, created_at, advisory
             FROM check_results WHERE run_id = ?1 ORDER BY seq",
            [run],
            |r| {
                Ok((
                    CheckResult {
                        id: r.get(0)?,
                        run: r.get(1)?,
                        seq: r.get(2)?,
                        attempt: r.get(3)?,
                        kind: r.get(4)?,
                        name: r.get(5)?,
                        passed: r.get(6)?,
                        advisory: r.get(9)?,
                        facts: Value::Null,
                        created_at: r.get(8)?,
                    },
                    r.get(7)?,
                ))
            },
            |check| format!("facts of check {}", check.id),
            |check, facts| check.facts = facts,
        )
    }

    fn events_where(&self, filter: &str, run: Option<RunId>) -> Result<Vec<Event>> {
        let sql = format!(
            "SELECT id, run_id, kind, payload, created_at FROM events WHERE {filter} ORDER BY id"
        );
        self.db.rows_with_json(
            "read events",
            &sql,
            rusqlite::params_from_iter(run),
            |r| {
                Ok((
                    Event {
                        id: r.get(0)?,
                        run: r.get(1)?,
                        kind: r.get(2)?,
                        payload: Value::Null,
                        created_at: r.get(4)?,
                    },
                    r.get(3)?,
                ))
            },
            |event| format!("payload of event {}", event.id),
            |event, payload| event.payload = payload,
        )
    }

    fn require_run(&self, tx: &rusqlite::Transaction<'_>, run: RunId) -> Result<RunStatus> {
        tx.query_row("SELECT status FROM runs WHERE id = ?1", [run], |r| r.get(0))
            .optional()
            .map_err(self.db.err("look up a run"))?
            .ok_or_else(|| not_found(self.path(), format!("run {run}")))
    }

    fn require_running(&self, tx: &rusqlite::Transaction<'_>, run: RunId) -> Result<()> {
        match self.require_run(tx, run)? {
            RunStatus::Running => Ok(()),
            other => Err(invalid(
                self.path(),
                format!("run {run} is already finished ({other}); nothing more can be added to it"),
            )),
        }
    }

    fn require_attempt_of(
        &self,
        tx: &rusqlite::Transaction<'_>,
        run: RunId,
        attempt: Option<AttemptId>,
    ) -> Result<()> {
        let Some(attempt) = attempt else {
            return Ok(());
        };
        let owner: Option<RunId> = tx
            .query_row(
                "SELECT run_id FROM attempts WHERE id = ?1",
                [attempt],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.db.err("look up an attempt"))?;
        match owner {
            Some(owner) if owner == run => Ok(()),
            Some(owner) => Err(invalid(
                self.path(),
                format!("attempt {attempt} belongs to run {owner}, not run {run}"),
            )),
            None => Err(not_found(self.path(), format!("attempt {attempt}"))),
        }
    }
}

/// A runs row before its JSON columns are decoded.
struct RunRow {
    summary: RunSummary,
    meta: String,
    verdict: Option<String>,
}

impl RunRow {
    fn decode(mut self, journal: &Journal) -> Result<RunSummary> {
        let id = self.summary.id;
        self.summary.meta = journal
            .db
            .parse_json(&format!("meta of run {id}"), &self.meta)?;
        self.summary.verdict = self
            .verdict
            .map(|v| journal.db.parse_json(&format!("verdict of run {id}"), &v))
            .transpose()?;
        Ok(self.summary)
    }
}

fn run_row(r: &Row<'_>) -> rusqlite::Result<RunRow> {
    Ok(RunRow {
        summary: RunSummary {
            id: r.get(0)?,
            kind: r.get(1)?,
            mission_id: r.get(2)?,
            contract_sha: r.get(3)?,
            workspace: r.get(4)?,
            model: r.get(5)?,
            meta: Value::Null,
            started_at: r.get(7)?,
            finished_at: r.get(8)?,
            status: r.get(9)?,
            verdict: None,
            steps: r.get(11)?,
            prompt_tokens: r.get(12)?,
            completion_tokens: r.get(13)?,
        },
        meta: r.get(6)?,
        verdict: r.get(10)?,
    })
}
