//! The caps of one run. Every loop is bounded, and when a bound is hit the person reads why
//! (DESIGN.md, principle 4): each [`CapHit`] renders a sentence, never a silent stop.

use std::time::{Duration, Instant};

use crate::mission::Budgets;

/// Model replies (turns) per job, across all its attempts.
pub const MAX_TURNS_PER_JOB: u32 = 64;
/// Steps a plan may have; a longer plan is cut to this.
pub const MAX_PLAN_STEPS: u32 = 8;
/// Attempts of one strategy before the run gives up with the last verdict.
pub const MAX_ATTEMPTS_PER_STRATEGY: u32 = 3;
/// Wall time of one run.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(900);
/// Characters of one input (the task prompt, or one string the model sends to a tool). Equal to
/// the tool registry's own cap, which the gate enforces as well; checking here too lets the
/// loop say which cap fired before anything reaches the gate.
pub const MAX_INPUT_CHARS: usize = 32_000;
/// Tokens of one model reply in the agent loop: enough for a short report in `create_file`,
/// small enough that a rambling model cannot eat the run's time.
pub const MAX_REPLY_TOKENS: u32 = 384;
/// Steps in a row without progress (a call repeated from earlier in the run, a call that did not
/// run, or a refused finish) before the run stops: a small model that loops would otherwise
/// burn every turn.
pub const MAX_STEPS_WITHOUT_PROGRESS: u32 = 8;

/// The limits in force for one run: the mission's budgets, never above the hard caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_turns: u32,
    pub max_plan_steps: u32,
    pub attempts: u32,
    pub timeout: Duration,
}

impl Limits {
    /// The mission's budgets clamped to the hard caps (a mission may ask for less, never more).
    pub fn from_budgets(b: &Budgets) -> Limits {
        Limits {
            max_turns: b.max_turns.clamp(1, MAX_TURNS_PER_JOB),
            max_plan_steps: b.max_plan_steps.clamp(1, MAX_PLAN_STEPS),
            attempts: b.attempts_per_strategy.clamp(1, MAX_ATTEMPTS_PER_STRATEGY),
            timeout: Duration::from_secs(b.max_seconds).min(RUN_TIMEOUT),
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::from_budgets(&Budgets::default())
    }
}

/// A cap that fired, with what was counted. `message` is what the person reads.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "cap", rename_all = "snake_case")]
pub enum CapHit {
    Turns {
        limit: u32,
    },
    PlanSteps {
        limit: u32,
        proposed: u32,
    },
    Attempts {
        limit: u32,
    },
    RunTimeout {
        limit_secs: u64,
        elapsed_secs: u64,
    },
    NoProgress {
        limit: u32,
    },
    InputChars {
        limit: usize,
        chars: usize,
        what: String,
    },
}

impl CapHit {
    /// Short name for events and the journal.
    pub fn name(&self) -> &'static str {
        match self {
            CapHit::Turns { .. } => "turns",
            CapHit::PlanSteps { .. } => "plan_steps",
            CapHit::Attempts { .. } => "attempts",
            CapHit::RunTimeout { .. } => "run_timeout",
            CapHit::NoProgress { .. } => "no_progress",
            CapHit::InputChars { .. } => "input_chars",
        }
    }

    pub fn message(&self) -> String {
        match self {
            CapHit::Turns { limit } => format!(
                "stopped after {limit} turns (the cap on turns per job) without an accepted finish"
            ),
            CapHit::PlanSteps { limit, proposed } => format!(
                "the plan had {proposed} steps; only the first {limit} were kept (the cap on plan steps)"
            ),
            CapHit::Attempts { limit } => format!(
                "stopped after {limit} attempts (the cap on attempts per strategy); the last verdict stands"
            ),
            CapHit::RunTimeout {
                limit_secs,
                elapsed_secs,
            } => format!(
                "stopped: the run took {elapsed_secs} s, reaching the run timeout of {limit_secs} s"
            ),
            CapHit::NoProgress { limit } => format!(
                "stopped: {limit} steps in a row made no progress (each repeated an earlier call, was a call that did not run, was a reply cut off at the reply cap, or was a refused finish)"
            ),
            CapHit::InputChars { limit, chars, what } => format!(
                "{what} has {chars} characters, more than the cap of {limit} characters per input; it was not used"
            ),
        }
    }

    /// Whether the run stops when this cap fires (an over-long tool input only costs a step, and
    /// an over-long plan is cut).
    pub fn stops_run(&self) -> bool {
        matches!(
            self,
            CapHit::Turns { .. }
                | CapHit::Attempts { .. }
                | CapHit::RunTimeout { .. }
                | CapHit::NoProgress { .. }
        )
    }
}

/// Elapsed time since the run started. A trait so tests can make the timeout fire without
/// waiting 900 seconds.
pub trait Clock {
    fn elapsed(&self) -> Duration;
}

/// The real clock.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    started: Instant,
}

impl SystemClock {
    pub fn start() -> SystemClock {
        SystemClock {
            started: Instant::now(),
        }
    }
}

impl Clock for SystemClock {
    fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

/// The longest string anywhere in a JSON value over the input cap, with where it is.
pub fn input_over_cap(v: &serde_json::Value, at: &str) -> Option<(String, usize)> {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            let n = s.chars().count();
            (n > MAX_INPUT_CHARS).then(|| (at.to_string(), n))
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| input_over_cap(x, &format!("{at}[{i}]"))),
        Value::Object(map) => map
            .iter()
            .find_map(|(k, x)| input_over_cap(x, &format!("{at}.{k}"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_never_exceed_the_hard_caps() {
        let generous = Budgets {
            max_turns: 1_000,
            max_seconds: 100_000,
            max_plan_steps: 50,
            attempts_per_strategy: 9,
            samples: None,
        };
        let l = Limits::from_budgets(&generous);
        assert_eq!(l.max_turns, MAX_TURNS_PER_JOB);
        assert_eq!(l.timeout, RUN_TIMEOUT);
        assert_eq!(l.max_plan_steps, MAX_PLAN_STEPS);
        assert_eq!(l.attempts, MAX_ATTEMPTS_PER_STRATEGY);
        assert_eq!(Limits::default().max_turns, 64);
    }

    #[test]
    fn input_cap_matches_the_registry() {
        assert_eq!(MAX_INPUT_CHARS, rein_workspace::MAX_INPUT_CHARS);
        let ok = serde_json::json!({"content": "a".repeat(MAX_INPUT_CHARS)});
        assert!(input_over_cap(&ok, "parameters").is_none());
        let over = serde_json::json!({"content": "a".repeat(MAX_INPUT_CHARS + 1)});
        assert_eq!(
            input_over_cap(&over, "parameters"),
            Some(("parameters.content".into(), MAX_INPUT_CHARS + 1))
        );
    }
}
