//! Cowork chat: the router's answer, the decision model's reviews of a proposed write and of an
//! answer, and the numbers that bound them. The chat engine, the terminal chat, `rein chat --json`
//! and the web pages all speak these types.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::model::LabelProbability;

/// Messages shorter than this many characters keep their keyword route; no model is asked.
pub const SHORT_MESSAGE_CHARS: usize = 24;
/// The request is clipped to this many characters before the router's decision model sees it.
pub const ROUTE_CLIP_CHARS: usize = 8_000;
/// The router's decision model counts only at or above this confidence.
pub const ROUTE_FLOOR_BPS: u32 = 5_500;
/// Below this confidence a proposed write is held: no approval card, nothing written.
pub const WRITE_FLOOR_BPS: u32 = 7_500;
/// Below this confidence an answer is shown with a caution (advisory, never blocking).
pub const EVIDENCE_FLOOR_BPS: u32 = 6_500;
/// A gate decision that takes longer than this holds (write gate) or cautions (evidence gate).
pub const DECISION_TIMEOUT_MS: u64 = 12_000;
/// Evidence the gate's decision model sees, in characters: all of it together.
pub const GATE_EVIDENCE_CAP_CHARS: usize = 7_000;
/// ... of which the person's request.
pub const GATE_REQUEST_CAP_CHARS: usize = 3_000;
/// ... of which one file excerpt.
pub const GATE_EXCERPT_CAP_CHARS: usize = 2_000;
/// Tool rounds one chat turn may take; then the turn stops and says so.
pub const MAX_TOOL_ROUNDS: u32 = 12;
/// Messages of a conversation kept as history; older ones are trimmed with a note.
pub const HISTORY_CAP_MESSAGES: usize = 240;
/// The longest message a person may send, in characters.
pub const MAX_MESSAGE_CHARS: usize = 32_000;

/// What a request is about. A route grants the actor hints (which tools to mention first), never
/// permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    General,
    Explore,
    Summarize,
    Related,
    Report,
    Vision,
    Voice,
}

impl Intent {
    /// Every intent, in the order the labels are offered to the decision model.
    pub const ALL: [Intent; 7] = [
        Intent::General,
        Intent::Explore,
        Intent::Summarize,
        Intent::Related,
        Intent::Report,
        Intent::Vision,
        Intent::Voice,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            Intent::General => "general",
            Intent::Explore => "explore",
            Intent::Summarize => "summarize",
            Intent::Related => "related",
            Intent::Report => "report",
            Intent::Vision => "vision",
            Intent::Voice => "voice",
        }
    }
}

impl fmt::Display for Intent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Intent {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Intent::ALL
            .into_iter()
            .find(|intent| intent.as_str() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = Intent::ALL.iter().map(Intent::as_str).collect();
                format!("unknown intent `{s}`; the intents are {}", known.join(", "))
            })
    }
}

/// Where a route came from, so a fallback never passes for the model's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RouteSource {
    /// The decision model's label, at or above the floor.
    Model,
    /// The keyword table; the model agreed, or a confident `general` was vetoed.
    Keyword,
    /// The message was too short to ask the model.
    ShortMessage,
    /// The model was asked, but its best label was below the floor.
    Floor,
    /// The model could not answer (no model, error, timeout, too little label mass).
    Outage,
}

impl RouteSource {
    pub fn as_str(&self) -> &'static str {
        match self {
            RouteSource::Model => "model",
            RouteSource::Keyword => "keyword",
            RouteSource::ShortMessage => "short-message",
            RouteSource::Floor => "floor",
            RouteSource::Outage => "outage",
        }
    }
}

/// The router's answer for one request (`rein route TEXT --json` prints exactly this).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Route {
    pub intent: Intent,
    pub source: RouteSource,
    /// Confidence in the chosen intent, in basis points (the model's probability when the model
    /// decided; the keyword route's own confidence otherwise).
    pub confidence_bps: u32,
    /// The keyword table's route, which stands whenever the model does not decide.
    pub keyword_intent: Intent,
    /// Every label's probability, when the model was asked; empty otherwise.
    #[serde(default)]
    pub probabilities: Vec<LabelProbability>,
    /// The share of probability the labels held before normalising, when the model was asked.
    #[serde(default)]
    pub label_mass: Option<f64>,
    /// Why the model did not decide, when it did not (the outage's error, the floor, the veto).
    #[serde(default)]
    pub note: Option<String>,
    pub latency_ms: f64,
}

/// Where a gate review came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReviewSource {
    /// The decision model scored it.
    Model,
    /// The decision model took longer than [`DECISION_TIMEOUT_MS`].
    Timeout,
    /// No decision model, or it failed (fails closed: a write is held, an answer cautioned).
    Outage,
}

/// The write gate's review of one proposed change, before any approval card exists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WriteReview {
    /// False means held: no approval card, nothing written.
    pub allowed: bool,
    /// The decision model's confidence that the change matches the request.
    pub confidence_bps: u32,
    pub floor_bps: u32,
    pub source: ReviewSource,
    /// In Rein's words, why: shown to the person, and to the actor when held.
    pub reason: String,
    /// Characters of evidence cut to fit the caps (0 when nothing was cut).
    #[serde(default)]
    pub clipped_chars: usize,
    pub latency_ms: f64,
}

/// The evidence gate's review of an answer against the excerpts actually read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvidenceReview {
    /// True means the answer is shown with a visible caution.
    pub caution: bool,
    pub confidence_bps: u32,
    pub floor_bps: u32,
    pub source: ReviewSource,
    pub reason: String,
    pub latency_ms: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intents_round_trip_through_their_names() {
        for intent in Intent::ALL {
            assert_eq!(intent.as_str().parse::<Intent>(), Ok(intent));
            let json = serde_json::to_string(&intent).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", intent.as_str()));
        }
        let error = "shopping".parse::<Intent>().err().unwrap_or_default();
        assert!(
            error.contains("shopping") && error.contains("summarize"),
            "{error}"
        );
    }

    #[test]
    fn route_sources_serialise_as_the_cli_names_them() {
        for source in [
            RouteSource::Model,
            RouteSource::Keyword,
            RouteSource::ShortMessage,
            RouteSource::Floor,
            RouteSource::Outage,
        ] {
            let json = serde_json::to_string(&source).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", source.as_str()));
        }
    }
}
