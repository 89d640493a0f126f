//! The run trace as the judge and the finish rules see it: one entry per tool call, in order.

use rein_protocol::GateOutcome;
use serde::{Deserialize, Serialize};

use super::paths::same_path;

/// The sandbox's variable tools (`set_variable`, `get_variable`): the trace records the variable
/// they name as their `path`, so a check about files must tell them apart.
pub fn is_variable_tool(tool: &str) -> bool {
    matches!(tool, "set_variable" | "get_variable")
}

/// One tool call of the run, with the gate's outcome (`GateOutcome::as_str`, e.g. `executed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceEntry {
    pub tool: String,
    pub path: Option<String>,
    pub outcome: String,
    pub mutated: bool,
    /// A `read_file` that returned the whole file (no line range, nothing cut).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub full_read: bool,
    /// For an executed change: the SHA-256 of the file it left on disk (`None`: no file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_sha256: Option<String>,
    /// For an executed write of the deliverable: Rein read the file back at once and the
    /// model got it whole with the write's result (lever `read-back`), which counts as reading
    /// it back for the finish rule. Never a read for the judge's checks of what the model did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shown_back: bool,
    /// A read Rein made for the model before its first step (lever `inputs-first`), with its
    /// result among the transcript's first turns: the model had the file, but did not ask
    /// for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_rein: bool,
}

impl TraceEntry {
    pub fn new(tool: &str, path: Option<&str>, outcome: &str, mutated: bool) -> Self {
        Self {
            tool: tool.to_string(),
            path: path.map(str::to_string),
            outcome: outcome.to_string(),
            mutated,
            full_read: false,
            written_sha256: None,
            shown_back: false,
            by_rein: false,
        }
    }

    /// Marks a call Rein made for the model (lever `inputs-first`).
    pub fn by_rein(mut self) -> Self {
        self.by_rein = true;
        self
    }

    /// Marks a read that returned the whole file.
    pub fn with_full_read(mut self, full: bool) -> Self {
        self.full_read = full;
        self
    }

    /// Records the hash of what an executed change left on disk.
    pub fn with_written(mut self, sha256: Option<String>) -> Self {
        self.written_sha256 = sha256;
        self
    }

    /// An entry from the gate's typed outcome.
    pub fn from_gate(tool: &str, path: Option<&str>, outcome: GateOutcome, mutated: bool) -> Self {
        Self::new(tool, path, outcome.as_str(), mutated)
    }

    /// Only calls whose effect happened count as evidence: `executed`, or `replayed` (an effect
    /// that happened earlier under the same id). Denied, invalid or held calls do not.
    pub fn executed(&self) -> bool {
        self.outcome == GateOutcome::Executed.as_str()
            || self.outcome == GateOutcome::Replayed.as_str()
    }

    /// True when the call named this workspace path (after normalisation).
    pub fn targets(&self, path: &str) -> bool {
        self.path.as_deref().is_some_and(|p| same_path(p, path))
    }

    /// An executed `read_file` of the whole file at `path`.
    pub fn read_in_full(&self, path: &str) -> bool {
        self.tool == "read_file" && self.full_read && self.executed() && self.targets(path)
    }

    /// A call of a sandbox variable tool: its `path` names a variable, not a file.
    pub fn names_variable(&self) -> bool {
        is_variable_tool(&self.tool)
    }

    /// An executed call that changed the file at `path`.
    pub fn mutated_path(&self, path: &str) -> bool {
        self.mutated && self.executed() && self.targets(path)
    }
}

/// The index of the last executed change of `path` in a trace.
pub fn last_write(trace: &[TraceEntry], path: &str) -> Option<usize> {
    trace.iter().rposition(|e| e.mutated_path(path))
}

/// Whether the model has seen `path` as it is since the change at `write`: a `read_file` of it
/// after that change, or the change's own result showing it whole (lever `read-back`).
pub fn seen_since_write(trace: &[TraceEntry], write: usize, path: &str) -> bool {
    trace[write].shown_back
        || trace[write + 1..]
            .iter()
            .any(|e| e.tool == "read_file" && e.executed() && e.targets(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_effects_count() {
        let e = TraceEntry::from_gate(
            "create_file",
            Some("./out/a.md"),
            GateOutcome::Executed,
            true,
        );
        assert!(e.executed() && e.mutated_path("out/a.md"));
        let r = TraceEntry::from_gate("create_file", Some("out/a.md"), GateOutcome::Replayed, true);
        assert!(r.mutated_path("out/a.md"));
        for o in [
            GateOutcome::Denied,
            GateOutcome::Invalid,
            GateOutcome::ApprovalRequired,
            GateOutcome::BudgetExhausted,
            GateOutcome::IdConflict,
        ] {
            let d = TraceEntry::from_gate("create_file", Some("out/a.md"), o, true);
            assert!(!d.executed() && !d.mutated_path("out/a.md"), "{o:?}");
        }
    }
}
