//! The mission file format.

use serde::{Deserialize, Serialize};

use crate::checks::Check;

/// Whether checks may decide a run on their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The judge's verdict stands.
    Automatic,
    /// Semantic checks are not yet qualified: a person must judge, the engine refuses to.
    HumanReviewOnly,
}

impl Mode {
    pub fn as_str(&self) -> &'static str {
        match self {
            Mode::Automatic => "automatic",
            Mode::HumanReviewOnly => "human_review_only",
        }
    }
}

/// Caps of one run. Defaults are the design's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Budgets {
    pub max_turns: u32,
    pub max_seconds: u64,
    pub max_plan_steps: u32,
    pub attempts_per_strategy: u32,
    /// Candidate writes of the deliverable drawn and judged on a scratch view before one is
    /// proposed (verified sampling); absent means one, the ordinary draw. `--samples` overrides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples: Option<u32>,
}

impl Budgets {
    pub const DEFAULT_MAX_TURNS: u32 = 64;
    pub const DEFAULT_MAX_SECONDS: u64 = 900;
    pub const DEFAULT_MAX_PLAN_STEPS: u32 = 8;
    pub const DEFAULT_ATTEMPTS_PER_STRATEGY: u32 = 3;
}

impl Default for Budgets {
    fn default() -> Self {
        Self {
            max_turns: Self::DEFAULT_MAX_TURNS,
            max_seconds: Self::DEFAULT_MAX_SECONDS,
            max_plan_steps: Self::DEFAULT_MAX_PLAN_STEPS,
            attempts_per_strategy: Self::DEFAULT_ATTEMPTS_PER_STRATEGY,
            samples: None,
        }
    }
}

pub(crate) fn default_fixtures() -> String {
    "fixtures".to_string()
}

/// A mission as written in `mission.json`. Paths in `inputs`, `editable`, `required_artifact` and
/// checks are workspace-relative; an input is read from `<mission folder>/<fixtures>/<input>` and
/// copied to `<workspace>/<input>`, and so is an editable file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mission {
    pub id: String,
    pub mode: Mode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub prompt: String,
    #[serde(default = "default_fixtures")]
    pub fixtures: String,
    #[serde(default)]
    pub inputs: Vec<String>,
    /// Fixture files copied into the workspace that the run may change ("edit this config"):
    /// hashed at load like inputs, never frozen. Empty for most missions, and then left out of
    /// the canonical JSON, so contracts written before the field keep their hash.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub editable: Vec<String>,
    pub tools: Vec<String>,
    /// The file `finish` is judged against. Empty (left out) only in a mission without
    /// `finish`: a memory-sandbox task ends at `final_answer` and the judge reads the sandbox.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub required_artifact: String,
    pub checks: Vec<Check>,
    #[serde(default)]
    pub budgets: Budgets,
    /// Minimum words of the deliverable before `finish` is accepted (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_words: Option<u32>,
}
