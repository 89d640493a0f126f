use thiserror::Error;

pub type Result<T, E = ModelError> = std::result::Result<T, E>;

/// Every way asking a model can fail. Messages say what happened and what to do next.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ModelError {
    #[error("bad request: {0}")]
    BadRequest(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("the scripted model has no replies left ({used} used from {file}); add lines to the file or shorten the run")]
    ScriptExhausted { file: String, used: usize },
    #[error("model worker failed: {0}")]
    Worker(String),
    #[error("model worker did not answer within {seconds} s; it was stopped")]
    Timeout { seconds: u64 },
    #[error("model identity mismatch: asked for {expected}, the worker reports {actual}")]
    IdentityMismatch { expected: String, actual: String },
    #[error("endpoint error: {0}")]
    Endpoint(String),
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Catalog(String),
    #[error("I/O error on {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl ModelError {
    /// The process exit code for this failure: 2 for bad input or refusal, 3 for model failures.
    pub fn exit_code(&self) -> i32 {
        match self {
            ModelError::BadRequest(_)
            | ModelError::Refused(_)
            | ModelError::Catalog(_)
            | ModelError::Unsupported(_) => 2,
            _ => 3,
        }
    }

    /// Whether trying the same call again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, ModelError::Timeout { .. } | ModelError::Endpoint(_))
    }
}
