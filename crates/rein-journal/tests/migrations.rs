//! Opening store files: migrations from every earlier version, and refusing files that are not
//! ours, are damaged, or are newer than this build.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;

use common::{files_in, noise, raw, schema, temp, user_version};
use rein_journal::migrate::{create_at_version, schema_version};
use rein_journal::{ChatStore, Error, JobStore, Journal, StoreKind};

fn open(kind: StoreKind, path: &std::path::Path) -> Result<(), Error> {
    match kind {
        StoreKind::Journal => Journal::open(path).map(drop),
        StoreKind::Chat => ChatStore::open(path).map(drop),
        StoreKind::Jobs => JobStore::open(path).map(drop),
    }
}

#[test]
fn migrations_are_numbered_from_one_without_gaps() {
    for kind in StoreKind::ALL {
        let migrations = kind.migrations();
        assert!(!migrations.is_empty(), "{kind:?} has no migrations");
        for (i, m) in migrations.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1, "{kind:?} {}", m.name);
            assert!(
                m.name.starts_with(&format!("{:04}_", m.version)),
                "{}",
                m.name
            );
        }
    }
}

#[test]
fn a_missing_file_is_created_at_the_latest_version_in_wal_mode() {
    let dir = temp();
    for kind in StoreKind::ALL {
        let path = dir.path().join("sub").join(kind.file_name());
        open(kind, &path).unwrap();
        assert_eq!(user_version(&path), kind.latest_version());
        assert_eq!(schema_version(&path, kind).unwrap(), kind.latest_version());
        let conn = raw(&path);
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let app: i32 = conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .unwrap();
        assert_eq!(app, kind.application_id());
        // Opening again is a no-op.
        open(kind, &path).unwrap();
        assert_eq!(user_version(&path), kind.latest_version());
    }
}

#[test]
fn an_empty_file_is_initialised() {
    let dir = temp();
    for kind in StoreKind::ALL {
        let path = dir.path().join(kind.file_name());
        fs::write(&path, b"").unwrap();
        open(kind, &path).unwrap();
        assert_eq!(user_version(&path), kind.latest_version());
    }
}

/// Every earlier version (0 = empty file, 1, 2, ...) migrates to exactly the schema a new file
/// gets. Adding migration 0002 makes this test cover 1 -> 2 with no change here.
#[test]
fn every_earlier_version_migrates_to_the_current_schema() {
    let dir = temp();
    for kind in StoreKind::ALL {
        let fresh = dir.path().join(format!("fresh-{}", kind.file_name()));
        open(kind, &fresh).unwrap();
        let want = schema(&fresh);
        for version in 0..=kind.latest_version() {
            let path = dir.path().join(format!("v{version}-{}", kind.file_name()));
            create_at_version(&path, kind, version).unwrap();
            assert_eq!(user_version(&path), version, "{kind:?} built at v{version}");
            open(kind, &path).unwrap();
            assert_eq!(
                user_version(&path),
                kind.latest_version(),
                "{kind:?} from v{version}"
            );
            assert_eq!(schema(&path), want, "{kind:?} migrated from v{version}");
        }
    }
}

#[test]
fn data_written_at_version_one_survives_migration() {
    let dir = temp();
    let path = dir.path().join("journal.db");
    create_at_version(&path, StoreKind::Journal, 1).unwrap();
    raw(&path)
        .execute(
            "INSERT INTO events (kind, payload, created_at) VALUES ('old', '{\"a\":1}', 1)",
            [],
        )
        .unwrap();
    let journal = Journal::open(&path).unwrap();
    let events = journal.global_events().unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].kind, "old");
    assert_eq!(events[0].payload, serde_json::json!({"a": 1}));
}

/// Migration 0002 (issue 8): a version-1 change learns the fingerprint of the call that made
/// it when that call was recorded as executed; any other change keeps none, so its id can never
/// replay it for other arguments. Its intents still move through the apply protocol.
#[test]
fn changes_written_at_version_one_are_bound_to_their_executed_call() {
    let dir = temp();
    let path = dir.path().join("journal.db");
    create_at_version(&path, StoreKind::Journal, 1).unwrap();
    let sha = rein_journal::sha256_hex(b"x");
    let fp = "f".repeat(64);
    let other = "e".repeat(64);
    {
        let conn = raw(&path);
        conn.execute(
            "INSERT INTO artifacts (sha256, bytes, size, created_at) VALUES (?1, x'78', 1, 1)",
            [&sha],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO tool_calls (workspace, scope_key, call_id, tool, arguments, fingerprint,
                                     outcome, reason, result, created_at)
             VALUES ('/w', 'workspace:/w', 'c1', 'create_file', '{}', ?1, 'executed', '', 'null', 1)",
            [&fp],
        )
        .unwrap();
        conn.execute_batch(&format!(
            "INSERT INTO changes (scope_key, call_id, workspace, path, after_sha, state,
                                  created_at, resolved_at)
             VALUES ('workspace:/w', 'c1', '/w', 'a.txt', '{sha}', 'committed', 1, 2),
                    ('workspace:/w', 'c2', '/w', 'b.txt', '{sha}', 'intent', 1, NULL);"
        ))
        .unwrap();
    }
    let journal = Journal::open(&path).unwrap();
    let changes = journal.changes("/w").unwrap();
    assert_eq!(changes[0].fingerprint.as_deref(), Some(fp.as_str()));
    assert_eq!(changes[1].fingerprint, None);
    assert_eq!(changes[1].temp_path, None);
    assert_eq!(changes[1].before_mode, None);
    let scope = rein_journal::CallScope::Workspace("/w".into());
    assert!(matches!(
        journal.check_replay(&scope, "c1", &other).unwrap(),
        rein_journal::Replay::Conflict { .. }
    ));
    assert!(matches!(
        journal.check_replay(&scope, "c2", &fp).unwrap(),
        rein_journal::Replay::ChangeConflict { .. }
    ));
    assert!(matches!(
        journal.check_replay(&scope, "c1", &fp).unwrap(),
        rein_journal::Replay::Executed { .. }
    ));
    journal.mark_committed(changes[1].id).unwrap();
}

#[test]
fn random_bytes_are_refused_with_the_file_named_and_left_untouched() {
    let dir = temp();
    for (i, kind) in StoreKind::ALL.into_iter().enumerate() {
        let path = dir.path().join(kind.file_name());
        let bytes = noise(8192, 0x9e37_79b9 + i as u64);
        fs::write(&path, &bytes).unwrap();
        let err = open(kind, &path).unwrap_err();
        assert!(matches!(err, Error::NotADatabase { .. }), "{err:?}");
        let message = err.to_string();
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains("untouched"), "{message}");
        assert_eq!(fs::read(&path).unwrap(), bytes, "the file was changed");
    }
    // No -wal or -shm files were created beside them.
    assert_eq!(files_in(dir.path()).len(), 3);
}

#[test]
fn a_damaged_database_is_refused_with_the_file_named_and_left_untouched() {
    let dir = temp();
    let path = dir.path().join("journal.db");
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend(noise(4096 * 3, 7));
    fs::write(&path, &bytes).unwrap();
    let err = Journal::open(&path).unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("will not re-create"), "{message}");
    assert_eq!(fs::read(&path).unwrap(), bytes);
}

#[test]
fn a_truncated_header_is_refused() {
    let dir = temp();
    let path = dir.path().join("journal.db");
    fs::write(&path, b"SQLite").unwrap();
    let err = Journal::open(&path).unwrap_err();
    assert!(matches!(err, Error::NotADatabase { .. }), "{err:?}");
    assert_eq!(fs::read(&path).unwrap(), b"SQLite");
}

#[test]
fn a_foreign_sqlite_database_is_refused() {
    let dir = temp();
    let path = dir.path().join("journal.db");
    raw(&path)
        .execute_batch("CREATE TABLE notes (body TEXT);")
        .unwrap();
    let before = fs::read(&path).unwrap();
    let err = Journal::open(&path).unwrap_err();
    assert!(matches!(err, Error::ForeignDatabase { .. }), "{err:?}");
    assert!(err.to_string().contains(&path.display().to_string()));
    assert_eq!(fs::read(&path).unwrap(), before);
}

#[test]
fn another_rein_store_is_refused_by_name() {
    let dir = temp();
    let path = dir.path().join("chat.db");
    ChatStore::open(&path).unwrap();
    let err = Journal::open(&path).unwrap_err();
    assert!(matches!(err, Error::ForeignDatabase { .. }), "{err:?}");
    assert!(err.to_string().contains("Rein's chat.db"), "{err}");
}

#[test]
fn a_newer_schema_version_is_refused_with_a_message() {
    let dir = temp();
    for kind in StoreKind::ALL {
        let path = dir.path().join(kind.file_name());
        open(kind, &path).unwrap();
        let newer = kind.latest_version() + 1;
        raw(&path)
            .pragma_update(None, "user_version", newer)
            .unwrap();
        let err = open(kind, &path).unwrap_err();
        match &err {
            Error::TooNew {
                found, supported, ..
            } => {
                assert_eq!(*found, newer);
                assert_eq!(*supported, kind.latest_version());
            }
            other => panic!("expected TooNew, got {other:?}"),
        }
        let message = err.to_string();
        assert!(message.contains("upgrade Rein"), "{message}");
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert_eq!(user_version(&path), newer, "the version was changed");
    }
}

#[test]
fn a_directory_is_refused() {
    let dir = temp();
    let path = dir.path().join("journal.db");
    fs::create_dir(&path).unwrap();
    let err = Journal::open(&path).unwrap_err();
    assert!(matches!(err, Error::NotADatabase { .. }), "{err:?}");
}

#[test]
fn create_at_version_refuses_a_file_with_content() {
    let dir = temp();
    let path = dir.path().join("journal.db");
    Journal::open(&path).unwrap();
    assert!(create_at_version(&path, StoreKind::Journal, 0).is_err());
    let newer = StoreKind::Journal.latest_version() + 1;
    let other = dir.path().join("other.db");
    assert!(matches!(
        create_at_version(&other, StoreKind::Journal, newer),
        Err(Error::TooNew { .. })
    ));
}

#[test]
fn many_openers_of_a_new_store_agree_it_is_theirs() {
    // Bench workers open the same fresh journal at once; one of them creates it while the
    // others look. Before the header was read in one snapshot, a looker could see the tables
    // without the mark and call the store foreign.
    for round in 0..20 {
        let dir = temp();
        let path = dir.path().join(format!("journal-{round}.db"));
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(6));
        let handles: Vec<_> = (0..6)
            .map(|_| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    Journal::open(&path).map(drop)
                })
            })
            .collect();
        for h in handles {
            if let Err(e) = h.join().unwrap() {
                panic!("round {round}: {e}");
            }
        }
    }
}
