//! What a model is asked and what it answers, whichever backend serves it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
}

impl ChatMessage {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
        }
    }
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }
}

/// A prompt is either a conversation rendered with the model's own chat template, or raw text
/// given to the model as it is (base models such as Gemma 270M have no template).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Prompt {
    Chat { messages: Vec<ChatMessage> },
    Raw { text: String },
}

impl Prompt {
    pub fn chat(messages: Vec<ChatMessage>) -> Self {
        Prompt::Chat { messages }
    }
    pub fn raw(text: impl Into<String>) -> Self {
        Prompt::Raw { text: text.into() }
    }
}

/// Sampling settings for one role. `temperature == 0` means greedy decoding.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SamplingProfile {
    pub temperature: f32,
    pub top_k: i32,
    pub top_p: f32,
    pub repeat_penalty: f32,
}

impl SamplingProfile {
    /// The acting model: nearly deterministic, with a light penalty against loops.
    pub const ACTOR: SamplingProfile = SamplingProfile {
        temperature: 0.1,
        top_k: 50,
        top_p: 1.0,
        repeat_penalty: 1.1,
    };
    /// Conversation runs a little warmer than the working loop.
    pub const CHAT: SamplingProfile = SamplingProfile {
        temperature: 0.3,
        top_k: 50,
        top_p: 1.0,
        repeat_penalty: 1.1,
    };
    /// Judges and gates must be repeatable: greedy.
    pub const JUDGE: SamplingProfile = SamplingProfile {
        temperature: 0.0,
        top_k: 1,
        top_p: 1.0,
        repeat_penalty: 1.0,
    };

    pub fn is_greedy(&self) -> bool {
        self.temperature <= 0.0 || self.top_k == 1
    }

    pub fn for_role(role: &str) -> Option<SamplingProfile> {
        match role {
            "actor" => Some(Self::ACTOR),
            "chat" => Some(Self::CHAT),
            "judge" | "decision" => Some(Self::JUDGE),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletionRequest {
    pub prompt: Prompt,
    pub max_tokens: u32,
    #[serde(default)]
    pub stop: Vec<String>,
    pub sampling: SamplingProfile,
    #[serde(default)]
    pub seed: u32,
    /// When set, decoding is constrained so the reply is JSON valid against this schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_schema: Option<serde_json::Value>,
    /// When set, an embedded model is steered off long verbatim copies of these texts (see
    /// [`NoPaste`]); other backends ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_paste: Option<NoPaste>,
}

/// Texts a reply should not copy at length: each token that would extend a run copied from
/// one of `sources` past `allowed_tokens` tokens is penalised, more steeply the longer the run
/// (as llama.cpp's DRY sampler does; the reply's own repeats count only with `own_repeats`).
/// A soft penalty on the logits, never a mask: names and short phrases stay copyable, and what
/// the grammar forces is still forced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoPaste {
    pub sources: Vec<String>,
    pub allowed_tokens: u32,
    /// Runs the reply repeats from its own earlier tokens count as copies too (one text
    /// written under two headings). Off for an edit, whose `new_text` rightly repeats most of
    /// its `old_text`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own_repeats: bool,
    /// Tables (CSV or TSV text, as read) whose rows must not be pasted one straight after
    /// another: once the reply has copied the end of a row, a token that would not start a
    /// word of its own (a line break, a comma, the next row's first word) is penalised, so
    /// each row is followed by a word such as a unit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<String>,
    /// The judge's run length for `tables` (`min_run_words`): a row end is held only where
    /// joining the next row would make a verbatim run that long that neither row makes alone.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub table_run_words: u32,
}

impl CompletionRequest {
    pub fn new(prompt: Prompt, max_tokens: u32, sampling: SamplingProfile) -> Self {
        Self {
            prompt,
            max_tokens,
            stop: Vec::new(),
            sampling,
            seed: 0,
            json_schema: None,
            no_paste: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model ended its turn (end-of-generation token, or the grammar completed).
    Stop,
    /// A stop string appeared; it is not part of the text.
    StopString,
    /// `max_tokens` was reached: the reply was cut.
    Length,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    pub text: String,
    pub finish: FinishReason,
    pub prompt_tokens: u32,
    /// Prompt tokens taken from the cache instead of being decoded again.
    #[serde(default)]
    pub cached_tokens: u32,
    pub completion_tokens: u32,
    #[serde(default)]
    pub prompt_ms: f64,
    #[serde(default)]
    pub generation_ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChooseRequest {
    pub prompt: Prompt,
    pub labels: Vec<String>,
}

/// Whether `c`, right after a label's spelling, continues its word, so the label has not
/// ended there: a letter, digit, `_`, `-`, or a combining mark (`e` + U+0301 is `é`).
pub fn continues_word(c: char) -> bool {
    c.is_alphanumeric()
        || c == '_'
        || c == '-'
        || matches!(c, '\u{0300}'..='\u{036F}' | '\u{1AB0}'..='\u{1AFF}' | '\u{1DC0}'..='\u{1DFF}' | '\u{20D0}'..='\u{20FF}' | '\u{FE20}'..='\u{FE2F}')
}

/// Text as `choose` compares spellings: lower case, final sigma as sigma (so a spelling split
/// after a final-looking sigma still begins the label).
pub fn fold_case(text: &str) -> String {
    text.to_lowercase().replace('ς', "σ")
}

/// A label as `choose` compares it: surrounding spaces trimmed, then [`fold_case`].
pub fn label_key(label: &str) -> String {
    fold_case(label.trim())
}

/// Why `labels` cannot be scored with `choose`'s one meaning, if they cannot: a label is empty,
/// two are the same ignoring case and surrounding spaces, or one is the start of another that
/// goes on with a character that ends a word (`pass` and `pass with notes`, `c` and `c++`,
/// `web` and `web.search`): the end of the shorter would be the first piece of the longer, so
/// the shorter would take its probability. `edit` and `edit_file` are fine (`_` continues the
/// word).
pub fn label_set_problem(labels: &[String]) -> Option<String> {
    let keys: Vec<String> = labels.iter().map(|l| label_key(l)).collect();
    for (i, (label, key)) in labels.iter().zip(&keys).enumerate() {
        if key.is_empty() {
            return Some("a label is empty".into());
        }
        if keys[..i].contains(key) {
            return Some(format!(
                "label {label:?} appears twice (labels are compared ignoring case and surrounding spaces); give each label a distinct name"
            ));
        }
    }
    for (short, short_key) in labels.iter().zip(&keys) {
        for (long, long_key) in labels.iter().zip(&keys) {
            let next = long_key
                .strip_prefix(short_key.as_str())
                .and_then(|rest| rest.chars().next());
            if next.is_some_and(|c| !continues_word(c)) {
                return Some(format!(
                    "label {short:?} is the start of label {long:?}, which goes on with {:?}: the end of the one could not be told from the rest of the other; rename one (e.g. {:?})",
                    next.unwrap_or(' '),
                    long.trim().replace(|c: char| !continues_word(c), "_")
                ));
            }
        }
    }
    None
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelProbability {
    pub label: String,
    pub probability: f64,
}

/// Where a decision came from, so a fallback can never pass for a model's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionSource {
    Logits,
    Logprobs,
    Scripted,
    Keywords,
    Floor,
    Timeout,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChooseReply {
    /// Every label with its probability; they sum to 1.
    pub probabilities: Vec<LabelProbability>,
    pub source: DecisionSource,
    /// The share of probability the labels held before normalising (1.0 when every bit of the
    /// model's mass went to a label); `None` where the backend has not measured it.
    #[serde(default)]
    pub label_mass: Option<f64>,
    #[serde(default)]
    pub prompt_tokens: u32,
    #[serde(default)]
    pub cached_tokens: u32,
    #[serde(default)]
    pub elapsed_ms: f64,
    /// Of `elapsed_ms`, the time spent evaluating the prompt tokens not already cached (the
    /// rest scored the labels); `None` where the backend does not measure it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_ms: Option<f64>,
    /// How many label spellings were decoded to score the labels (embedded backend).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scored_spellings: Option<u32>,
    /// CPU time the decision took, all threads (embedded backend): on a machine busy with other
    /// work, `elapsed_ms` says how long it waited and this how much work it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ms: Option<f64>,
}

impl ChooseReply {
    /// The most probable label and its probability in basis points.
    pub fn best(&self) -> Option<(&str, u32)> {
        self.probabilities
            .iter()
            .max_by(|a, b| a.probability.total_cmp(&b.probability))
            .map(|p| (p.label.as_str(), (p.probability * 10_000.0).round() as u32))
    }
}

/// Who a model says it is. The embedded worker reads it from the GGUF it loaded; the parent
/// compares name, architecture, parameter and tensor counts exactly with the catalog, and a
/// mismatch is a hard failure. `sha256` is the hash the parent itself verified the file against.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelIdentity {
    /// How the model was asked for: catalog name, `openai:...` or `scripted:...`.
    pub spec: String,
    /// GGUF `general.name`, or the remote model id.
    pub name: String,
    /// GGUF `general.architecture`, or "remote"/"scripted".
    pub architecture: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    #[serde(default)]
    pub context_tokens: u32,
    /// Parameters (tensor elements) of an embedded model, as the loaded GGUF says; 0 elsewhere.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub parameters: u64,
    /// Tensors in an embedded model's GGUF; 0 elsewhere.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tensors: u64,
}

fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}
