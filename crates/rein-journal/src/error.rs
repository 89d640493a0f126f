//! One error type for every store, written for the person who reads it: which file, what
//! happened, what to do.

use std::path::{Path, PathBuf};

use rusqlite::ErrorCode;

/// Everything that can go wrong in a Rein store.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file exists but is not a SQLite database at all.
    #[error(
        "{path} is not a Rein {store} database (it is not a SQLite file); Rein left it untouched. \
         Move it aside or point Rein at another data directory"
    )]
    NotADatabase { path: PathBuf, store: &'static str },

    /// The file is a SQLite database, but not one of Rein's (or another Rein store).
    #[error(
        "{path} is a SQLite database but not a Rein {store} database ({found}); Rein left it \
         untouched. Move it aside or point Rein at another data directory"
    )]
    ForeignDatabase {
        path: PathBuf,
        store: &'static str,
        found: String,
    },

    /// SQLite reports damage inside the file.
    #[error(
        "{path} is damaged ({detail}); Rein will not re-create it. Restore it from a backup, or \
         move it aside to start a new one"
    )]
    Corrupt { path: PathBuf, detail: String },

    /// The file was written by a newer Rein.
    #[error(
        "{path} has schema version {found}, but this build of Rein knows {store} versions up to \
         {supported}; upgrade Rein to open it (the file was left untouched)"
    )]
    TooNew {
        path: PathBuf,
        store: &'static str,
        found: u32,
        supported: u32,
    },

    /// A migration script failed; the file stays at the version before it.
    #[error("{path}: migrating the {store} schema to version {version} ({name}) failed: {source}")]
    Migration {
        path: PathBuf,
        store: &'static str,
        version: u32,
        name: &'static str,
        #[source]
        source: Box<rusqlite::Error>,
    },

    /// Another process held the database lock for longer than the busy timeout.
    #[error(
        "{path} is locked by another process (waited {waited_ms} ms while trying to {action}); \
         try again when the other Rein command has finished"
    )]
    Busy {
        path: PathBuf,
        action: String,
        waited_ms: u64,
    },

    /// The disk is full or the file is read-only.
    #[error("{path}: could not {action}: {detail}; free space or fix the permissions, then retry")]
    CannotWrite {
        path: PathBuf,
        action: String,
        detail: String,
    },

    /// A file-system error around the database file.
    #[error("{path}: could not {action}: {source}")]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },

    /// Any other SQLite error.
    #[error("{path}: could not {action}: {source}")]
    Sqlite {
        path: PathBuf,
        action: String,
        #[source]
        source: Box<rusqlite::Error>,
    },

    /// A row the caller named does not exist.
    #[error("{path}: {what} does not exist")]
    NotFound { path: PathBuf, what: String },

    /// The caller passed something the store refuses (not a SHA-256, not JSON, ...).
    #[error("{path}: {what}")]
    Invalid { path: PathBuf, what: String },

    /// A state change the protocol does not allow.
    #[error("{path}: {what} is {from}; it cannot become {to}")]
    Transition {
        path: PathBuf,
        what: String,
        from: String,
        to: String,
    },

    /// The call id already has a record that this one would duplicate.
    #[error("{path}: call id {call_id:?} in {scope} already has {existing}; replay it instead of recording it again")]
    Duplicate {
        path: PathBuf,
        scope: String,
        call_id: String,
        existing: String,
    },

    /// A stored artifact no longer hashes to its key.
    #[error("{path}: artifact {sha256} does not match its SHA-256 (the database is damaged); restore it from a backup")]
    ArtifactMismatch { path: PathBuf, sha256: String },

    /// An approval was decided after it had expired.
    #[error(
        "{path}: approval {id} expired at {expires_at} (unix ms); it was not applied. Ask again"
    )]
    ApprovalExpired {
        path: PathBuf,
        id: i64,
        expires_at: i64,
    },

    /// A conversation already has a turn running: a second message is refused, not queued.
    #[error(
        "conversation {conversation} already has turn {turn} running; wait for it to end or \
         interrupt it, then send the message again (messages are not queued)"
    )]
    TurnRunning { conversation: i64, turn: i64 },

    /// A JSON column did not parse, or a value could not be serialised.
    #[error("{path}: bad JSON in {what}: {source}")]
    Json {
        path: PathBuf,
        what: String,
        #[source]
        source: serde_json::Error,
    },
}

/// Results of every store operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The busy timeout every connection uses.
pub(crate) const BUSY_TIMEOUT_MS: u64 = 5_000;

/// Map a SQLite error to the variant a person can act on.
pub(crate) fn sql(path: &Path, action: impl Into<String>, source: rusqlite::Error) -> Error {
    let action = action.into();
    if let rusqlite::Error::SqliteFailure(failure, message) = &source {
        let detail = message.clone().unwrap_or_else(|| failure.to_string());
        match failure.code {
            ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase => {
                return Error::Corrupt {
                    path: path.to_path_buf(),
                    detail,
                };
            }
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
                return Error::Busy {
                    path: path.to_path_buf(),
                    action,
                    waited_ms: BUSY_TIMEOUT_MS,
                };
            }
            ErrorCode::DiskFull | ErrorCode::ReadOnly | ErrorCode::PermissionDenied => {
                return Error::CannotWrite {
                    path: path.to_path_buf(),
                    action,
                    detail,
                };
            }
            _ => {}
        }
    }
    Error::Sqlite {
        path: path.to_path_buf(),
        action,
        source: Box::new(source),
    }
}

/// A closure for `map_err` that keeps the file name and the action.
pub(crate) fn sql_at<'a>(
    path: &'a Path,
    action: &'a str,
) -> impl FnOnce(rusqlite::Error) -> Error + 'a {
    move |source| sql(path, action, source)
}

pub(crate) fn invalid(path: &Path, what: impl Into<String>) -> Error {
    Error::Invalid {
        path: path.to_path_buf(),
        what: what.into(),
    }
}

pub(crate) fn not_found(path: &Path, what: impl Into<String>) -> Error {
    Error::NotFound {
        path: path.to_path_buf(),
        what: what.into(),
    }
}

pub(crate) fn json(path: &Path, what: impl Into<String>, source: serde_json::Error) -> Error {
    Error::Json {
        path: path.to_path_buf(),
        what: what.into(),
        source,
    }
}
