//! Asking the model for one action and reading it.
//!
//! A reply decoded under the action schema (embedded, or an endpoint that took it as
//! `response_format`) is valid JSON by construction and is read strictly. Any other reply goes
//! through `repair::extract_action_detailed`; a reply that needed repair is marked so
//! the figures can show it, and one that cannot be read becomes a format error that costs the
//! step. So does a reply cut off at the reply cap, however much of it could be read.

use rein_models::{Model, ModelError};
use rein_protocol::{
    ChatMessage, Completion, CompletionRequest, FinishReason, NoPaste, Prompt, SamplingProfile,
};
use serde_json::Value;

use super::caps::MAX_REPLY_TOKENS;
use crate::repair::{extract_action_detailed, Action, FormatError};

/// What the model's reply turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Action {
        action: Action,
        /// The repairs that were needed (empty for a clean reply).
        repairs: Vec<String>,
    },
    FormatError(FormatError),
}

/// A reply with its raw text and token figures.
#[derive(Debug, Clone)]
pub struct Asked {
    pub reply: Reply,
    pub raw: String,
    pub completion: Completion,
}

/// How one action is asked for besides its prompt: the actor's sampling and seed, the action
/// schema when decoding is constrained, and the texts not to paste (lever `no-paste`).
#[derive(Debug, Clone, Copy)]
pub struct AskWith<'a> {
    pub schema: Option<&'a Value>,
    pub sampling: SamplingProfile,
    pub seed: u32,
    pub no_paste: Option<&'a NoPaste>,
}

/// One request to the model: the prompt so far and how to ask (see [`AskWith`]), under the
/// reply cap.
pub fn ask_action(
    model: &mut dyn Model,
    messages: Vec<ChatMessage>,
    with: AskWith<'_>,
    on_text: &mut dyn FnMut(&str),
) -> Result<Asked, ModelError> {
    let mut request =
        CompletionRequest::new(Prompt::chat(messages), MAX_REPLY_TOKENS, with.sampling);
    request.seed = with.seed;
    request.json_schema = with.schema.cloned();
    request.no_paste = with.no_paste.cloned();
    let completion = model.complete(&request, on_text)?;
    let raw = completion.text.clone();
    // A reply cut at the cap is never repaired into an action: repair would close the JSON
    // and run a call whose content was cut (a half-written file written as if whole).
    let reply = if completion.finish == FinishReason::Length {
        Reply::FormatError(FormatError::cut(request.max_tokens))
    } else {
        read_reply(&raw)
    };
    Ok(Asked {
        reply,
        raw,
        completion,
    })
}

/// Reads one action: strictly first, then with repair.
pub fn read_reply(raw: &str) -> Reply {
    if let Ok(action) = serde_json::from_str::<Action>(raw.trim()) {
        if !action.action.trim().is_empty() {
            return Reply::Action {
                action,
                repairs: Vec::new(),
            };
        }
    }
    match extract_action_detailed(raw) {
        Ok(e) => {
            let mut repairs = e.repairs;
            if repairs.is_empty() {
                // Strict parsing failed, so something was fixed even if the repairer names
                // nothing (a reshaped field, say): never report such a reply as clean.
                repairs.push("the reply needed normalising to be read".into());
            }
            Reply::Action {
                action: e.action,
                repairs,
            }
        }
        Err(e) => Reply::FormatError(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_and_repaired_replies() {
        match read_reply(r#"{"thought":"t","action":"read_file","parameters":{"path":"a"}}"#) {
            Reply::Action { action, repairs } => {
                assert_eq!(action.action, "read_file");
                assert!(repairs.is_empty());
            }
            other => panic!("{other:?}"),
        }
        match read_reply("Sure! ```json\n{'action': 'list_dir', 'parameters': {},}\n```") {
            Reply::Action { action, repairs } => {
                assert_eq!(action.action, "list_dir");
                assert!(!repairs.is_empty());
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            read_reply("I will now read the file."),
            Reply::FormatError(_)
        ));
    }
}
