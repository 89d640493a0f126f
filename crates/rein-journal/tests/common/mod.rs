//! Helpers shared by the store tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use rein_journal::{CallScope, ChangeIntent, Journal};

pub fn temp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

pub fn journal(dir: &Path) -> Journal {
    Journal::open(dir.join("journal.db")).unwrap()
}

/// A raw connection for poking at the schema the way a careless tool would.
pub fn raw(path: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    conn
}

/// The schema of a database as sorted `type name sql` lines, for comparing two files.
pub fn schema(path: &Path) -> Vec<String> {
    let conn = raw(path);
    let mut stmt = conn
        .prepare("SELECT type, name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name")
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok(format!(
                "{} {} {}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?
            ))
        })
        .unwrap();
    rows.map(|r| r.unwrap()).collect()
}

pub fn user_version(path: &Path) -> u32 {
    raw(path)
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

/// Deterministic pseudo-random bytes (xorshift), so a failure can be reproduced.
pub fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed & 0xff) as u8
        })
        .collect()
}

pub fn ws(dir: &Path) -> String {
    dir.join("ws").to_string_lossy().into_owned()
}

pub fn intent(
    workspace: &str,
    call_id: &str,
    path: &str,
    before: Option<&str>,
    after: Option<&str>,
) -> ChangeIntent {
    ChangeIntent {
        scope: CallScope::Workspace(workspace.to_string()),
        call_id: call_id.to_string(),
        workspace: workspace.to_string(),
        path: path.to_string(),
        before_sha: before.map(str::to_string),
        after_sha: after.map(str::to_string),
        undo_of: None,
        fingerprint: None,
        temp_path: None,
        before_mode: None,
    }
}

pub fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}
