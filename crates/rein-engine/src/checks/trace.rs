//! The run trace as the judge and the finish rules see it: one entry per tool call, in order.

use serde::{Deserialize, Serialize};

use super::paths::same_path;

/// One tool call of the run, with the gate's outcome (`GateOutcome::as_str`, e.g. `executed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceEntry {
    pub tool: String,
    pub path: Option<String>,
    pub outcome: String,
    pub mutated: bool,
}

impl TraceEntry {
    pub fn new(tool: &str, path: Option<&str>, outcome: &str, mutated: bool) -> Self {
        Self {
            tool: tool.to_string(),
            path: path.map(str::to_string),
            outcome: outcome.to_string(),
            mutated,
        }
    }

    /// Only calls whose effect happened count as evidence: `executed`, or `replayed` (an effect
    /// that happened earlier under the same id). Denied, invalid or held calls do not.
    pub fn executed(&self) -> bool {
        self.outcome == "executed" || self.outcome == "replayed"
    }

    /// True when the call named this workspace path (after normalisation).
    pub fn targets(&self, path: &str) -> bool {
        self.path.as_deref().is_some_and(|p| same_path(p, path))
    }

    /// An executed call that changed the file at `path`.
    pub fn mutated_path(&self, path: &str) -> bool {
        self.mutated && self.executed() && self.targets(path)
    }
}
