use thiserror::Error;

pub type Result<T, E = LlamaError> = std::result::Result<T, E>;

#[derive(Debug, Error)]
pub enum LlamaError {
    #[error("cannot load the model file {path}: {reason}. Run `rein models verify` and, if it fails, `rein models pull` again")]
    Load { path: String, reason: String },
    #[error("the model file {path} is {actual} bytes, the catalog expects {expected}: it is truncated or not the catalog's file; run `rein models pull` again")]
    WrongSize {
        path: String,
        expected: u64,
        actual: u64,
    },
    #[error("cannot create a llama.cpp context: {0}")]
    Context(String),
    #[error("the model has no chat template; send a raw prompt instead")]
    NoChatTemplate,
    #[error("cannot render the chat template: {0}")]
    Template(String),
    #[error(
        "the prompt has {tokens} tokens, more than the context window of {context}; shorten it"
    )]
    PromptTooLong { tokens: usize, context: u32 },
    #[error("decoding failed: {0}")]
    Decode(String),
    #[error("the JSON schema cannot be used for constrained decoding: {0}")]
    Schema(String),
    #[error("bad request: {0}")]
    BadRequest(String),
}
