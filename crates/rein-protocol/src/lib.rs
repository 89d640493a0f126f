//! Serde types shared by every Rein crate: model requests and replies, tool calls and gate
//! outcomes. Behaviour lives elsewhere; this crate only names things.

pub mod canonical;
pub mod chat;
pub mod cowork;
pub mod digest;
pub mod display;
pub mod gate;
pub mod gguf;
pub mod model;
pub mod time;
pub mod worker;

pub use gate::{GateOutcome, GateReport, ToolCall};
pub use model::{
    ChatMessage, ChooseReply, ChooseRequest, Completion, CompletionRequest, DecisionSource,
    FinishReason, LabelProbability, ModelIdentity, NoPaste, Prompt, Role, SamplingProfile,
};
