//! jobs.db: a job left running by a process that is gone becomes interrupted on open and is
//! never resumed silently; a job of a live process is left alone.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{raw, temp};
use rein_journal::{Error, JobOwner, JobState, JobStore, NewJob};
use serde_json::json;

fn job(title: &str) -> NewJob {
    NewJob {
        kind: "bench".into(),
        title: title.into(),
        workspace: None,
        spec: json!({"suite": "toy"}),
    }
}

/// An owner that cannot be alive: pids on Linux stay below 2^22.
const GONE: JobOwner = JobOwner {
    pid: 999_999_999,
    started: 1,
};

#[test]
fn running_jobs_of_a_dead_process_are_interrupted_on_reopen() {
    let dir = temp();
    let path = dir.path().join("jobs.db");
    let (dead, mine, queued) = {
        let jobs = JobStore::open(&path).unwrap();
        assert!(jobs.interrupted_on_open().is_empty());
        let dead = jobs.enqueue(&job("dead")).unwrap();
        let mine = jobs.enqueue(&job("mine")).unwrap();
        let queued = jobs.enqueue(&job("queued")).unwrap();
        jobs.start(dead, &GONE).unwrap();
        jobs.start(mine, &JobOwner::current()).unwrap();
        (dead, mine, queued)
    };
    let jobs = JobStore::open(&path).unwrap();
    assert_eq!(jobs.interrupted_on_open(), [dead]);
    let interrupted = jobs.job(dead).unwrap().unwrap();
    assert_eq!(interrupted.state, JobState::Interrupted);
    assert!(interrupted.owner.is_none());
    assert!(interrupted.error.unwrap().contains("pid 999999999"));
    assert_eq!(jobs.job(mine).unwrap().unwrap().state, JobState::Running);
    assert_eq!(jobs.job(queued).unwrap().unwrap().state, JobState::Queued);

    // Not resumed silently: it cannot be started until a person requeues it.
    assert!(matches!(
        jobs.start(dead, &JobOwner::current()),
        Err(Error::Transition { .. })
    ));
    jobs.requeue(dead).unwrap();
    jobs.start(dead, &JobOwner::current()).unwrap();
    jobs.finish(dead, &json!({"ok": true})).unwrap();
    let history: Vec<JobState> = jobs
        .history(dead)
        .unwrap()
        .into_iter()
        .map(|(_, to, _)| to)
        .collect();
    assert_eq!(
        history,
        [
            JobState::Queued,
            JobState::Running,
            JobState::Interrupted,
            JobState::Queued,
            JobState::Running,
            JobState::Done
        ]
    );
}

#[test]
fn the_current_process_is_alive_and_a_missing_one_is_not() {
    assert!(JobOwner::current().is_alive());
    assert!(!GONE.is_alive());
    if std::path::Path::new("/proc/self/stat").exists() {
        let me = JobOwner::current();
        assert_ne!(me.started, 0);
        // The same pid with another start time is a reused pid, not the owner.
        let reused = JobOwner {
            pid: 1,
            started: u64::MAX,
        };
        assert!(!reused.is_alive());
    }
}

#[test]
fn job_lifecycle_and_refused_transitions() {
    let dir = temp();
    let jobs = JobStore::open(dir.path().join("jobs.db")).unwrap();
    let a = jobs.enqueue(&job("a")).unwrap();
    assert!(jobs.finish(a, &json!(null)).is_err());
    assert!(jobs.set_progress(a, &json!({"done": 1})).is_err());
    jobs.start(a, &JobOwner::current()).unwrap();
    assert!(jobs.start(a, &JobOwner::current()).is_err());
    jobs.set_progress(a, &json!({"done": 3, "of": 10})).unwrap();
    jobs.fail(a, "worker crashed").unwrap();
    let failed = jobs.job(a).unwrap().unwrap();
    assert_eq!(failed.state, JobState::Failed);
    assert_eq!(failed.progress, Some(json!({"done": 3, "of": 10})));
    assert!(failed.finished_at.is_some());
    assert!(jobs.requeue(a).is_err());
    assert!(jobs.fail(a, "again").is_err());
    // A queued job can be cancelled.
    let b = jobs.enqueue(&job("b")).unwrap();
    jobs.fail(b, "cancelled").unwrap();
    assert_eq!(jobs.jobs().unwrap().len(), 2);

    let conn = raw(jobs.path());
    assert!(conn
        .execute("UPDATE jobs SET state = 'queued' WHERE id = ?1", [a.0])
        .is_err());
    assert!(conn.execute("DELETE FROM jobs", []).is_err());
    assert!(conn.execute("DELETE FROM job_events", []).is_err());
}

fn item(task: &str, repeat: u32) -> rein_journal::NewBenchItem {
    rein_journal::NewBenchItem {
        suite: "toy".into(),
        task: task.into(),
        model: "m".into(),
        repeat,
        seed: 7 + u64::from(repeat),
    }
}

#[test]
fn bench_items_of_a_dead_bench_are_interrupted_kept_and_redone_as_a_new_attempt() {
    use rein_journal::BenchItemState::{Done, Interrupted, Queued, Running};
    let dir = temp();
    let path = dir.path().join("jobs.db");
    let bench = |title: &str, folder: &str| NewJob {
        kind: "bench".into(),
        title: title.into(),
        workspace: Some(folder.into()),
        spec: json!({}),
    };
    let (job, done, cut, waiting) = {
        let jobs = JobStore::open(&path).unwrap();
        let other = jobs.enqueue(&bench("elsewhere", "/other")).unwrap();
        jobs.queue_bench_item(other, &item("t1", 0)).unwrap();
        let job = jobs.enqueue(&bench("b", "/out")).unwrap();
        jobs.start(job, &GONE).unwrap();
        let done = jobs.queue_bench_item(job, &item("t1", 0)).unwrap();
        let cut = jobs.queue_bench_item(job, &item("t1", 1)).unwrap();
        let waiting = jobs.queue_bench_item(job, &item("t2", 0)).unwrap();
        jobs.start_bench_item(done).unwrap();
        // Only a running item can finish; a queued one cannot.
        assert!(jobs
            .finish_bench_item(cut, &json!({"passed": true}), None)
            .is_err());
        jobs.finish_bench_item(done, &json!({"passed": true}), Some(4))
            .unwrap();
        jobs.start_bench_item(cut).unwrap();
        (job, done, cut, waiting)
    };
    let jobs = JobStore::open(&path).unwrap();
    assert_eq!(jobs.interrupted_on_open(), [job]);
    let items = jobs.bench_items("/out").unwrap();
    let states: Vec<_> = items.iter().map(|i| (i.id, i.state, i.attempt)).collect();
    assert_eq!(
        states,
        [(done, Done, 1), (cut, Interrupted, 1), (waiting, Queued, 1)]
    );
    assert_eq!(items[0].result, Some(json!({"passed": true})));
    assert_eq!(items[0].journal_run, Some(4));
    assert!(items[1]
        .note
        .as_deref()
        .unwrap()
        .contains("ended while it ran"));
    assert_eq!(jobs.latest_bench_job("/out").unwrap().unwrap().id, job);
    assert!(jobs.latest_bench_job("/nowhere").unwrap().is_none());

    // An interrupted item is never reopened; the run is queued again as attempt 2.
    assert!(jobs.start_bench_item(cut).is_err());
    jobs.requeue(job).unwrap();
    jobs.start(job, &JobOwner::current()).unwrap();
    let again = jobs.queue_bench_item(job, &item("t1", 1)).unwrap();
    jobs.start_bench_item(again).unwrap();
    let items = jobs.bench_items("/out").unwrap();
    let last = items.iter().find(|i| i.id == again).unwrap();
    assert_eq!((last.state, last.attempt), (Running, 2));
    // A done item cannot be run again, and nothing can be deleted or rewritten by hand.
    assert!(jobs.start_bench_item(done).is_err());
    assert!(jobs.interrupt_bench_item(done, "no").is_err());
    let conn = raw(jobs.path());
    assert!(conn.execute("DELETE FROM bench_items", []).is_err());
    assert!(conn
        .execute("UPDATE bench_items SET task = 'x' WHERE id = ?1", [done.0])
        .is_err());
    assert!(conn
        .execute(
            "UPDATE bench_items SET state = 'queued' WHERE id = ?1",
            [cut.0]
        )
        .is_err());
}
