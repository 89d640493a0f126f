//! The errors of the bench library. Each names the file (and field or line) it is about.

use std::path::PathBuf;

use rein_engine::cases::CaseError;
use rein_engine::mission::MissionError;

/// Why a suite, a results file or a merge was refused.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error("{}: field {field}: {message}", path.display())]
    Invalid {
        path: PathBuf,
        field: String,
        message: String,
    },
    #[error("{}: the task's mission: {source}", task_toml.display())]
    Mission {
        task_toml: PathBuf,
        #[source]
        source: MissionError,
    },
    #[error("task {task}: the judge's cases cannot be run: {source}")]
    Cases {
        task: String,
        #[source]
        source: CaseError,
    },
    #[error("{}: line {line}: {message}", path.display())]
    Results {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{0}")]
    Merge(String),
    #[error("{0}")]
    Shard(String),
}

impl BenchError {
    pub(crate) fn io(path: impl Into<PathBuf>, what: &str, e: std::io::Error) -> BenchError {
        BenchError::Io {
            path: path.into(),
            message: format!("cannot {what}: {e}"),
        }
    }
}
