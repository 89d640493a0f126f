#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Issue 8 item 8b: the apply lock waits a bounded time, then says who holds it.

use std::time::{Duration, Instant};

use rein_engine::apply::{lock_path, ApplyLock, LockError, APPLY_LOCK_WAIT};

#[test]
fn the_wait_is_thirty_seconds() {
    assert_eq!(APPLY_LOCK_WAIT, Duration::from_secs(30));
}

#[test]
fn a_held_lock_times_out_with_a_message_naming_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.db");
    // flock locks belong to an open file: a second open in this process contends like another
    // process would.
    let held = ApplyLock::acquire(&journal).unwrap();
    let written = std::fs::read_to_string(lock_path(&journal)).unwrap();
    assert!(
        written.starts_with(&format!("pid {}, `", std::process::id())),
        "{written}"
    );
    let since = written
        .split(", since ")
        .nth(1)
        .unwrap_or_default()
        .trim_end();
    assert!(
        since.len() == 20 && since.starts_with("20") && since.ends_with('Z'),
        "{written}"
    );

    let wait = Duration::from_millis(300);
    let started = Instant::now();
    let err = ApplyLock::acquire_within(&journal, wait).unwrap_err();
    let waited = started.elapsed();
    // A lower bound only: how long past the wait a loaded machine takes to give up is not a
    // behaviour (no timed tests).
    assert!(waited >= wait, "gave up after {waited:?}");
    let LockError::Busy { holder, .. } = &err else {
        panic!("expected Busy, got {err:?}");
    };
    assert!(
        holder.contains(&format!("pid {}", std::process::id())),
        "{holder}"
    );
    let text = err.to_string();
    let exe = std::env::args().next().unwrap();
    let exe_name = std::path::Path::new(&exe)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(text.contains(&exe_name), "the command is named: {text}");
    assert!(text.contains("since"), "{text}");
    assert!(text.contains("nothing was changed"), "{text}");
    assert!(
        text.contains(&lock_path(&journal).display().to_string()),
        "{text}"
    );

    // Released: the next one gets it at once, and the file names the new holder only while held.
    drop(held);
    assert_eq!(std::fs::read_to_string(lock_path(&journal)).unwrap(), "");
    let again = ApplyLock::acquire_within(&journal, wait).unwrap();
    drop(again);
}

#[test]
fn a_lock_freed_while_waiting_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.db");
    let held = ApplyLock::acquire(&journal).unwrap();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        drop(held);
    });
    let lock = ApplyLock::acquire_within(&journal, Duration::from_secs(600)).unwrap();
    drop(lock);
    releaser.join().unwrap();
}
