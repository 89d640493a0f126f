//! A bench as a job in `jobs.db`: the job (its output folder's canonical path, its arguments,
//! its state) and one work item per run. Results are recorded there as they finish (and in
//! results.jsonl), so `--resume` keeps every judged run, and a run found running whose process
//! is gone is kept as `interrupted` and done again as a new item.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Mutex;

use anyhow::{bail, Context};
use rein_bench::results::{append_result, read_results, RunKey, RunResult};
use rein_journal::{
    BenchItem, BenchItemId, BenchItemState, JobId, JobOwner, JobState, JobStore, NewBenchItem,
    NewJob,
};
use rein_models::DataDir;
use rein_protocol::display::escape_line;
use serde_json::Value;

/// The bench's job, shared by its workers.
pub(super) struct BenchJob {
    store: Mutex<JobStore>,
    pub id: JobId,
    /// Runs already judged (results.jsonl and the done items of earlier jobs of the folder).
    pub judged: Vec<RunResult>,
    /// Queued items left by the job this one resumes, by run.
    queued: BTreeMap<RunKey, BenchItemId>,
}

fn key_of(i: &BenchItem) -> RunKey {
    RunKey {
        suite: i.suite.clone(),
        task: i.task.clone(),
        model: i.model.clone(),
        repeat: i.repeat,
    }
}

impl BenchJob {
    /// Opens jobs.db, checks the folder against earlier benches (and the judged runs with
    /// `check`) and starts this bench's job.
    pub fn begin(
        out: &Path,
        results_file: &Path,
        resume: bool,
        spec: Value,
        check: impl FnOnce(&[RunResult]) -> anyhow::Result<()>,
    ) -> anyhow::Result<Self> {
        let folder = out
            .canonicalize()
            .with_context(|| format!("cannot resolve {}", out.display()))?
            .display()
            .to_string();
        let path = DataDir::from_env()?.root().join("jobs.db");
        let store = JobStore::open(&path)
            .with_context(|| format!("cannot open the job store {}", path.display()))?;
        let prior = store.latest_bench_job(&folder)?;
        if let Some(j) = prior.as_ref().filter(|j| j.state == JobState::Running) {
            bail!(
                "another rein bench (job {}, pid {}) is writing {}: wait for it, or give another --out",
                j.id,
                j.owner.map_or(0, |o| o.pid),
                escape_line(&folder)
            );
        }
        let in_file = read_results(results_file)?;
        if !resume {
            if !in_file.is_empty() {
                bail!(
                    "{} already holds {} run(s): add --resume to keep them and run the rest, or \
                     give another --out",
                    results_file.display(),
                    in_file.len()
                );
            }
            if let Some(j) = prior.as_ref().filter(|j| j.state != JobState::Done) {
                bail!(
                    "an earlier bench on {} (job {}) ended {}: add --resume to keep its judged \
                     runs and do the rest, or give another --out",
                    escape_line(&folder),
                    j.id,
                    j.state
                );
            }
        }
        let items = if resume {
            store.bench_items(&folder)?
        } else {
            Vec::new()
        };
        let mut judged = in_file;
        let mut seen: BTreeSet<RunKey> = judged.iter().map(RunResult::key).collect();
        // A run recorded done in jobs.db whose line never reached results.jsonl (cut off
        // between the two writes) is written there now, not run again.
        let mut recovered = 0;
        for i in items.iter().filter(|i| i.state == BenchItemState::Done) {
            let Some(v) = &i.result else { continue };
            let r: RunResult = serde_json::from_value(v.clone()).with_context(|| {
                format!(
                    "bench item {} in {} holds no run result",
                    i.id,
                    path.display()
                )
            })?;
            if seen.insert(r.key()) {
                append_result(results_file, &r)?;
                judged.push(r);
                recovered += 1;
            }
        }
        if recovered > 0 {
            eprintln!(
                "rein: bench: {recovered} judged run(s) found in {} but not in {}: written there",
                path.display(),
                results_file.display()
            );
        }
        for i in items
            .iter()
            .filter(|i| i.state == BenchItemState::Interrupted && !seen.contains(&key_of(i)))
        {
            eprintln!(
                "rein: bench: {}/{} {} #{} was cut off (attempt {}: {}); it runs again",
                escape_line(&i.suite),
                escape_line(&i.task),
                escape_line(&i.model),
                i.repeat,
                i.attempt,
                escape_line(i.note.as_deref().unwrap_or("no note"))
            );
        }
        check(&judged)?;
        let owner = JobOwner::current();
        let id = match prior.filter(|j| resume && j.state == JobState::Interrupted) {
            Some(j) => {
                store.requeue(j.id)?;
                j.id
            }
            None => store.enqueue(&NewJob {
                kind: "bench".into(),
                title: format!("rein bench --out {folder}"),
                workspace: Some(folder.clone()),
                spec,
            })?,
        };
        store.start(id, &owner)?;
        let queued = items
            .iter()
            .filter(|i| i.job == id && i.state == BenchItemState::Queued)
            .map(|i| (key_of(i), i.id))
            .collect();
        Ok(BenchJob {
            store: Mutex::new(store),
            id,
            judged,
            queued,
        })
    }

    fn store(&self) -> anyhow::Result<std::sync::MutexGuard<'_, JobStore>> {
        self.store
            .lock()
            .map_err(|_| anyhow::anyhow!("a bench worker panicked"))
    }

    /// The item of a run to do: the queued one the resumed job left, or a new one.
    pub fn queue(&mut self, key: &RunKey, seed: u64) -> anyhow::Result<BenchItemId> {
        if let Some(id) = self.queued.remove(key) {
            return Ok(id);
        }
        let item = NewBenchItem {
            suite: key.suite.clone(),
            task: key.task.clone(),
            model: key.model.clone(),
            repeat: key.repeat,
            seed,
        };
        Ok(self.store()?.queue_bench_item(self.id, &item)?)
    }

    pub fn start(&self, item: BenchItemId) -> anyhow::Result<()> {
        Ok(self.store()?.start_bench_item(item)?)
    }

    pub fn done(&self, item: BenchItemId, r: &RunResult, run: Option<i64>) -> anyhow::Result<()> {
        Ok(self
            .store()?
            .finish_bench_item(item, &serde_json::to_value(r)?, run)?)
    }

    pub fn interrupted(&self, item: BenchItemId, why: &str) -> anyhow::Result<()> {
        Ok(self.store()?.interrupt_bench_item(item, why)?)
    }

    /// The bench ended: done with `summary`, or failed with `error`.
    pub fn end(&self, outcome: Result<Value, String>) -> anyhow::Result<()> {
        let store = self.store()?;
        match outcome {
            Ok(summary) => store.finish(self.id, &summary)?,
            Err(e) => store.fail(self.id, &e)?,
        }
        Ok(())
    }
}
