//! How a run ended, its figures, and the verdict document the journal and `--json` keep.

use rein_journal::{RunId, RunStatus};
use serde::Serialize;
use serde_json::{json, Value};

use super::caps::CapHit;
use crate::checks::Verdict;

/// Why the loop stopped.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "end", rename_all = "snake_case")]
pub enum RunEnd {
    /// `finish` was accepted and the judge ruled.
    Judged,
    /// A cap fired (turns, run timeout, attempts).
    Cap { hit: CapHit },
    /// The model or its worker failed (an error, a crash, replies exhausted).
    ModelFailed { message: String },
    /// The contract (or an input fixture) changed on disk mid-run.
    ContractChanged { message: String },
    /// A change needed a person's approval and nobody could be asked.
    ApprovalUnavailable { message: String },
    /// Bench mode: the model named a tool that does not exist.
    UnknownTool { message: String },
    /// The run was refused before it started (human-review-only mission, over-long task).
    Refused { message: String },
}

impl RunEnd {
    pub fn name(&self) -> &'static str {
        match self {
            RunEnd::Judged => "judged",
            RunEnd::Cap { .. } => "cap",
            RunEnd::ModelFailed { .. } => "model_failed",
            RunEnd::ContractChanged { .. } => "contract_changed",
            RunEnd::ApprovalUnavailable { .. } => "approval_unavailable",
            RunEnd::UnknownTool { .. } => "unknown_tool",
            RunEnd::Refused { .. } => "refused",
        }
    }

    /// A sentence for the person.
    pub fn message(&self) -> String {
        match self {
            RunEnd::Judged => "finish was accepted and the judge ruled".into(),
            RunEnd::Cap { hit } => hit.message(),
            RunEnd::ModelFailed { message } => format!("the model failed: {message}"),
            RunEnd::ContractChanged { message }
            | RunEnd::ApprovalUnavailable { message }
            | RunEnd::UnknownTool { message }
            | RunEnd::Refused { message } => message.clone(),
        }
    }
}

/// Counts over the run, for the verdict and the bench's figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RunFigures {
    /// Model replies (turns), including format errors and the plan.
    pub steps: u32,
    pub attempts: u32,
    /// Replies from which no action could be read.
    pub format_errors: u32,
    /// Replies that were read only after repair.
    pub repaired: u32,
    /// Calls to a tool the mission does not have.
    pub unknown_tools: u32,
    pub finish_refusals: u32,
    /// Steps trimmed from the prompt to fit the context window.
    pub trimmed_steps: u32,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub completion_tokens: u64,
    pub elapsed_ms: u64,
    /// Candidates drawn per write of the deliverable (verified sampling; 1 = off).
    pub samples: u32,
    /// Writes of the deliverable that were sampled.
    pub sampled_writes: u32,
    /// Candidates drawn over those writes, the first draws included (drawing stops at a
    /// clean candidate, so this is at most `samples` times `sampled_writes`).
    pub sample_draws: u32,
    /// At the last sampled write where a candidate was judged: whether the first draw (what the run would have proposed
    /// without sampling) passed every check on its scratch view, and whether the one proposed
    /// did. The first is a pass@1 estimate, the second best-of-K; neither is the verdict.
    pub first_draw_passed: Option<bool>,
    pub chosen_draw_passed: Option<bool>,
    /// Model requests for the model's notes on files it read (lever `file-notes`): requests
    /// beside the turns, not counted in `steps`.
    pub note_requests: u32,
}

/// Everything about how a run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunOutcome {
    pub run: RunId,
    pub mission: String,
    pub contract_sha256: String,
    /// `pass` only when finish was accepted and every check passed.
    #[serde(serialize_with = "status_str")]
    pub status: RunStatus,
    pub end: RunEnd,
    /// The judge's last verdict, if it ruled (also after a cap, for the record).
    pub verdict: Option<Verdict>,
    pub finish_accepted: bool,
    pub figures: RunFigures,
}

fn status_str<S: serde::Serializer>(s: &RunStatus, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(&s.to_string())
}

impl RunOutcome {
    pub fn passed(&self) -> bool {
        self.status == RunStatus::Pass
    }

    /// DESIGN.md's exit codes: 0 pass, 1 fail, 2 refusal, 3 model failure.
    pub fn exit_code(&self) -> i32 {
        match &self.end {
            _ if self.passed() => 0,
            RunEnd::ModelFailed { .. } => 3,
            RunEnd::ContractChanged { .. }
            | RunEnd::ApprovalUnavailable { .. }
            | RunEnd::Refused { .. } => 2,
            _ => 1,
        }
    }

    /// The reason the run ended as it did, in one sentence.
    pub fn reason(&self) -> String {
        match (&self.end, &self.verdict) {
            (RunEnd::Judged, Some(v)) if v.passed => "every check passed".into(),
            (RunEnd::Judged, Some(v)) => {
                // Advice never decides the verdict, so it is not among the reasons.
                let failed: Vec<&str> = v
                    .checks
                    .iter()
                    .filter(|c| !c.passed && !c.advisory)
                    .map(|c| c.id.as_str())
                    .collect();
                format!("checks failed: {}", failed.join(", "))
            }
            (end, _) => end.message(),
        }
    }

    /// The verdict document: what `finish_run` stores and `rein run --json` prints last.
    pub fn document(&self) -> Value {
        json!({
            "run": self.run,
            "mission": self.mission,
            "contract_sha256": self.contract_sha256,
            "status": self.status.to_string(),
            "passed": self.passed(),
            "end": self.end.name(),
            "reason": self.reason(),
            "finish_accepted": self.finish_accepted,
            "judge_passed": self.verdict.as_ref().map(|v| v.passed),
            "checks": self.verdict.as_ref().map(|v| v.checks.clone()).unwrap_or_default(),
            "figures": self.figures,
            "exit_code": self.exit_code(),
        })
    }
}
