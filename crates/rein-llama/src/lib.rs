//! The embedded llama.cpp runtime. It runs only inside a `rein worker` child process, one model
//! per process, so a crash or a runaway decode can never take Rein down with it.
//!
//! The parent side (spawning, supervision, identity checks) lives in `rein-models`; this crate
//! is the child side: load a GGUF, keep its KV cache across requests, decode only the new
//! suffix of a growing prompt, sample with a role's profile, constrain to a JSON schema with
//! llguidance, and read label probabilities from logits.

mod choose;
mod copy_penalty;
pub mod cpu;
mod engine;
mod error;
mod prefix;
pub mod prefix_store;
pub mod reference;
mod row_ends;
mod stop;
pub mod template;
pub mod worker;

pub use engine::{
    check_schema_grammar, generation_decode_calls, schema_accepted_len, with_fixed_separators,
    EngineOptions, LlamaEngine, DEFAULT_BATCH_TOKENS,
};
pub use error::{LlamaError, Result};
pub use prefix::reuse_prefix;
pub use stop::StopScanner;
