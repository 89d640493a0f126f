//! Several processes on one file: WAL and the busy timeout let them all write, including when
//! they race to create and migrate a new file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use rein_journal::{Journal, NewRun, NewStep, RunId, RunKind, StepKind};
use serde_json::json;

const CHILD_ENV: &str = "REIN_JOURNAL_TEST_CHILD";
const WRITES: usize = 40;

/// The body of each child process; does nothing when run as an ordinary test.
#[test]
fn child_writer() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (path, worker) = spec.rsplit_once('|').unwrap();
    let journal = Journal::open(path).unwrap();
    let run = journal.begin_run(&NewRun::new(RunKind::Bench)).unwrap();
    for i in 0..WRITES {
        journal
            .append_event(None, "tick", &json!({"worker": worker, "i": i}))
            .unwrap();
        journal
            .append_step(run, &NewStep::new(StepKind::Note))
            .unwrap();
        journal
            .put_artifact(format!("shared {i}").as_bytes())
            .unwrap();
    }
    journal
        .finish_run(run, rein_journal::RunStatus::Pass, &json!({}))
        .unwrap();
}

#[test]
fn processes_racing_on_a_new_file_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.db");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..4)
        .map(|w| {
            Command::new(&exe)
                .args(["--exact", "child_writer", "--nocapture", "--test-threads=1"])
                .env(CHILD_ENV, format!("{}|{w}", path.display()))
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a writer process failed");
    }
    let journal = Journal::open(&path).unwrap();
    assert_eq!(journal.global_events().unwrap().len(), 4 * WRITES);
    let runs = journal.list_runs().unwrap();
    assert_eq!(runs.len(), 4);
    for run in &runs {
        assert_eq!(run.steps, WRITES as i64);
        let seqs: Vec<i64> = journal
            .run_trace(run.id)
            .unwrap()
            .steps
            .iter()
            .map(|s| s.step.seq)
            .collect();
        assert_eq!(seqs, (1..=WRITES as i64).collect::<Vec<_>>());
    }
    assert!(journal.run_trace(RunId(99)).is_err());
}
