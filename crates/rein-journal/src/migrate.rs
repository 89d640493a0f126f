//! Opening a store file safely and bringing its schema up to date.
//!
//! Each store has numbered SQL files under `migrations/<store>/`; migration `N` takes a file from
//! `user_version` `N - 1` to `N` in one transaction. A file is only ever written after it has
//! been recognised as the right Rein store (or is new and empty), so a foreign or damaged file is
//! reported and left untouched.

use std::fs;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use crate::error::{sql, sql_at, Error, Result, BUSY_TIMEOUT_MS};

/// One schema step: the SQL that takes a file from `version - 1` to `version`.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: u32,
    pub name: &'static str,
    pub sql: &'static str,
}

const JOURNAL: &[Migration] = &[
    Migration {
        version: 1,
        name: "0001_init",
        sql: include_str!("../migrations/journal/0001_init.sql"),
    },
    Migration {
        version: 2,
        name: "0002_change_bindings",
        sql: include_str!("../migrations/journal/0002_change_bindings.sql"),
    },
    Migration {
        version: 3,
        name: "0003_check_advisory",
        sql: include_str!("../migrations/journal/0003_check_advisory.sql"),
    },
    Migration {
        version: 4,
        name: "0004_run_owner",
        sql: include_str!("../migrations/journal/0004_run_owner.sql"),
    },
    Migration {
        version: 5,
        name: "0005_run_owner_host",
        sql: include_str!("../migrations/journal/0005_run_owner_host.sql"),
    },
];

const CHAT: &[Migration] = &[
    Migration {
        version: 1,
        name: "0001_init",
        sql: include_str!("../migrations/chat/0001_init.sql"),
    },
    Migration {
        version: 2,
        name: "0002_turn_runs",
        sql: include_str!("../migrations/chat/0002_turn_runs.sql"),
    },
    Migration {
        version: 3,
        name: "0003_events",
        sql: include_str!("../migrations/chat/0003_events.sql"),
    },
];

const JOBS: &[Migration] = &[
    Migration {
        version: 1,
        name: "0001_init",
        sql: include_str!("../migrations/jobs/0001_init.sql"),
    },
    Migration {
        version: 2,
        name: "0002_bench_items",
        sql: include_str!("../migrations/jobs/0002_bench_items.sql"),
    },
];

/// The three Rein stores. Each is a separate SQLite file with its own schema history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreKind {
    Journal,
    Chat,
    Jobs,
}

impl StoreKind {
    pub const ALL: [StoreKind; 3] = [StoreKind::Journal, StoreKind::Chat, StoreKind::Jobs];

    /// The usual file name in Rein's data directory.
    pub fn file_name(self) -> &'static str {
        match self {
            StoreKind::Journal => "journal.db",
            StoreKind::Chat => "chat.db",
            StoreKind::Jobs => "jobs.db",
        }
    }

    /// A short name for messages.
    pub fn label(self) -> &'static str {
        match self {
            StoreKind::Journal => "journal",
            StoreKind::Chat => "chat",
            StoreKind::Jobs => "jobs",
        }
    }

    /// The SQLite `application_id` that marks a file as this store ("RNJL", "RNCH", "RNJB").
    pub fn application_id(self) -> i32 {
        let tag: &[u8; 4] = match self {
            StoreKind::Journal => b"RNJL",
            StoreKind::Chat => b"RNCH",
            StoreKind::Jobs => b"RNJB",
        };
        i32::from_be_bytes(*tag)
    }

    /// Every migration of this store, in order; `migrations()[i].version == i + 1`.
    pub fn migrations(self) -> &'static [Migration] {
        match self {
            StoreKind::Journal => JOURNAL,
            StoreKind::Chat => CHAT,
            StoreKind::Jobs => JOBS,
        }
    }

    /// The schema version this build writes.
    pub fn latest_version(self) -> u32 {
        self.migrations().last().map_or(0, |m| m.version)
    }

    fn from_application_id(id: i32) -> Option<StoreKind> {
        StoreKind::ALL
            .into_iter()
            .find(|k| k.application_id() == id)
    }
}

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Open (creating if absent or empty) a store file at the latest schema version.
pub(crate) fn open_store(path: &Path, kind: StoreKind) -> Result<Connection> {
    open_at(path, kind, kind.latest_version())
}

/// Create a new store file at exactly `version` (0 leaves it empty), as an older Rein would
/// have left it. For migration tests and tools; refuses a file that already has content.
pub fn create_at_version(path: &Path, kind: StoreKind, version: u32) -> Result<()> {
    if version > kind.latest_version() {
        return Err(Error::TooNew {
            path: path.to_path_buf(),
            store: kind.label(),
            found: version,
            supported: kind.latest_version(),
        });
    }
    if fs::metadata(path).map(|m| m.len() > 0).unwrap_or(false) {
        return Err(crate::error::invalid(
            path,
            "create_at_version needs a new file, and this one already has content",
        ));
    }
    open_at(path, kind, version).map(drop)
}

/// Read a store file's schema version without changing it (0 for a new or empty file).
pub fn schema_version(path: &Path, kind: StoreKind) -> Result<u32> {
    if !check_header(path, kind)? {
        return Ok(0);
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(sql_at(path, "open the database read-only"))?;
    let (_, version) = identify(&conn, path, kind)?;
    Ok(version)
}

fn open_at(path: &Path, kind: StoreKind, target: u32) -> Result<Connection> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|source| Error::Io {
            path: parent.to_path_buf(),
            action: "create the data directory",
            source,
        })?;
    }
    check_header(path, kind)?;
    // One opener at a time per store: creating a store, switching it to WAL and migrating it are
    // several steps, and openers racing through them saw a half-made store as foreign or timed
    // out on the WAL switch (six bench workers opening a new journal at once).
    let _opening = OpenLock::take(path)?;
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn =
        Connection::open_with_flags(path, flags).map_err(sql_at(path, "open the database"))?;
    conn.busy_timeout(Duration::from_millis(BUSY_TIMEOUT_MS))
        .map_err(sql_at(path, "set the busy timeout"))?;
    // The mark, the version and the schema are read in one snapshot: read one by one, a store
    // that another process created in between looked like a foreign database (a mark of 0 read
    // before its first migration committed, its tables after).
    {
        let snapshot = Transaction::new_unchecked(&conn, TransactionBehavior::Deferred)
            .map_err(sql_at(path, "read the database header"))?;
        identify(&snapshot, path, kind)?;
        snapshot
            .commit()
            .map_err(sql_at(path, "read the database header"))?;
    }

    // Only now, with the file recognised, is anything written.
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(sql_at(path, "switch to WAL mode"))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(Error::CannotWrite {
            path: path.to_path_buf(),
            action: "switch to WAL mode".into(),
            detail: format!(
                "SQLite kept journal mode {mode:?} (the file system may not support it)"
            ),
        });
    }
    conn.execute_batch(
        "PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL; PRAGMA recursive_triggers = ON;",
    )
    .map_err(sql_at(path, "configure the connection"))?;
    migrate(&conn, path, kind, target)?;
    Ok(conn)
}

/// An advisory `flock` on `<store>.open-lock`, held while a store is opened. SQLite's own locks
/// are `fcntl` locks on the store itself, which this never touches.
struct OpenLock {
    _file: fs::File,
}

impl OpenLock {
    fn take(path: &Path) -> Result<OpenLock> {
        let mut name = path.as_os_str().to_os_string();
        name.push(".open-lock");
        let lock_path = std::path::PathBuf::from(name);
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|source| Error::Io {
                path: lock_path.clone(),
                action: "open the store's open lock",
                source,
            })?;
        let started = std::time::Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(OpenLock { _file: file }),
                Err(fs::TryLockError::WouldBlock)
                    if started.elapsed() < Duration::from_millis(BUSY_TIMEOUT_MS) =>
                {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(Error::Busy {
                        path: path.to_path_buf(),
                        action: "open the store (another process is opening it)".into(),
                        waited_ms: BUSY_TIMEOUT_MS,
                    })
                }
                Err(fs::TryLockError::Error(source)) => {
                    return Err(Error::Io {
                        path: lock_path,
                        action: "lock the store's open lock",
                        source,
                    })
                }
            }
        }
    }
}

/// Check the file header without SQLite. Returns whether the file has content.
fn check_header(path: &Path, kind: StoreKind) -> Result<bool> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(source) => {
            return Err(Error::Io {
                path: path.to_path_buf(),
                action: "inspect the file",
                source,
            })
        }
    };
    if !meta.is_file() {
        return Err(Error::NotADatabase {
            path: path.to_path_buf(),
            store: kind.label(),
        });
    }
    if meta.len() == 0 {
        return Ok(false);
    }
    let mut header = [0u8; 16];
    let mut file = fs::File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        action: "open the file",
        source,
    })?;
    let read = read_up_to(&mut file, &mut header).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        action: "read the file header",
        source,
    })?;
    if read < header.len() || &header != SQLITE_MAGIC {
        return Err(Error::NotADatabase {
            path: path.to_path_buf(),
            store: kind.label(),
        });
    }
    Ok(true)
}

fn read_up_to(file: &mut fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// Confirm the file is this store (or new) and return its `(application_id, user_version)`.
fn identify(conn: &Connection, path: &Path, kind: StoreKind) -> Result<(i32, u32)> {
    let read = |pragma: &str| -> Result<i64> {
        conn.query_row(&format!("PRAGMA {pragma}"), [], |r| r.get(0))
            .map_err(sql_at(path, "read the database header"))
    };
    let app_id = read("application_id")? as i32;
    let version = read("user_version")?;
    let objects: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(sql_at(path, "read the database schema"))?;
    if app_id == 0 {
        if version == 0 && objects == 0 {
            return Ok((0, 0));
        }
        return Err(Error::ForeignDatabase {
            path: path.to_path_buf(),
            store: kind.label(),
            found: format!("it has {objects} schema objects and no Rein mark"),
        });
    }
    if app_id != kind.application_id() {
        let found = match StoreKind::from_application_id(app_id) {
            Some(other) => format!("it is Rein's {}", other.file_name()),
            None => format!("its application id is {app_id:#010x}"),
        };
        return Err(Error::ForeignDatabase {
            path: path.to_path_buf(),
            store: kind.label(),
            found,
        });
    }
    let version = u32::try_from(version).map_err(|_| Error::Corrupt {
        path: path.to_path_buf(),
        detail: format!("schema version {version} is not a valid version"),
    })?;
    if version > kind.latest_version() {
        return Err(Error::TooNew {
            path: path.to_path_buf(),
            store: kind.label(),
            found: version,
            supported: kind.latest_version(),
        });
    }
    Ok((app_id, version))
}

/// Apply every missing migration up to `target`, one transaction each. Several processes may
/// race here: each step re-reads the version under the write lock.
fn migrate(conn: &Connection, path: &Path, kind: StoreKind, target: u32) -> Result<()> {
    loop {
        let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
            .map_err(sql_at(path, "start a migration"))?;
        let (_, version) = identify(&tx, path, kind)?;
        if version >= target {
            return Ok(());
        }
        let Some(step) = kind.migrations().iter().find(|m| m.version == version + 1) else {
            return Err(Error::Corrupt {
                path: path.to_path_buf(),
                detail: format!("no migration leads from schema version {version}"),
            });
        };
        let fail = |source| Error::Migration {
            path: path.to_path_buf(),
            store: kind.label(),
            version: step.version,
            name: step.name,
            source: Box::new(source),
        };
        tx.execute_batch(step.sql).map_err(fail)?;
        tx.pragma_update(None, "user_version", step.version)
            .map_err(fail)?;
        if version == 0 {
            tx.pragma_update(None, "application_id", kind.application_id())
                .map_err(fail)?;
        }
        tx.commit()
            .map_err(|e| sql(path, format!("commit migration {}", step.name), e))?;
    }
}
