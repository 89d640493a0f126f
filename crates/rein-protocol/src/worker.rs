//! The line protocol between Rein and a `rein worker` child: one JSON object per line on the
//! child's stdin (requests) and stdout (replies). No network port is ever opened.

use serde::{Deserialize, Serialize};

use crate::model::{ChooseReply, ChooseRequest, Completion, CompletionRequest, ModelIdentity};

/// What the parent asks of a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum WorkerRequest {
    Complete {
        id: u64,
        request: CompletionRequest,
    },
    Choose {
        id: u64,
        request: ChooseRequest,
    },
    /// Figures for `rein perf` and `rein doctor`.
    Stats {
        id: u64,
    },
    /// Drop the KV cache, so the next prompt is decoded whole (used to measure the cache's worth).
    ResetCache {
        id: u64,
    },
    Shutdown,
}

/// What a worker says back. `Hello` comes once, first, before any request is read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorkerReply {
    Hello {
        identity: ModelIdentity,
        load_ms: f64,
        threads: u32,
    },
    Text {
        id: u64,
        text: String,
    },
    /// Sent after each batch of prompt tokens is decoded: a long uncached prompt takes minutes
    /// on a small CPU, and the parent's silence limit is on lack of progress, not on length.
    Progress {
        id: u64,
        done_tokens: u32,
        total_tokens: u32,
    },
    Completed {
        id: u64,
        completion: Completion,
    },
    Chosen {
        id: u64,
        reply: ChooseReply,
    },
    Stats {
        id: u64,
        stats: WorkerStats,
    },
    CacheReset {
        id: u64,
    },
    /// The prompt does not fit the context window (the caller may shorten it and ask again).
    PromptTooLong {
        id: u64,
        tokens: u32,
        context: u32,
    },
    Error {
        id: u64,
        message: String,
    },
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkerStats {
    /// Peak resident set size of the worker process, from /proc (VmHWM).
    pub peak_rss_bytes: u64,
    pub rss_bytes: u64,
    /// Tokens currently held in the KV cache.
    pub cached_tokens: u32,
    pub context_tokens: u32,
}
