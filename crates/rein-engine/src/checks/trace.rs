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
    /// For an executed `read_file` of text: the lines the model was shown whole, as
    /// `[first, last, total]` (reads by line range that together cover a file count as reading
    /// it in full).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines_shown: Option<[u64; 3]>,
    /// A search Rein made for the model whose lines it was not shown (lever `task-search`: too
    /// many to show, or none matched): it named the model no file to read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lines_unseen: bool,
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
            lines_shown: None,
            lines_unseen: false,
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

    /// Records the lines a read showed whole (`[first, last, total]`).
    pub fn with_lines_shown(mut self, lines: Option<[u64; 3]>) -> Self {
        self.lines_shown = lines;
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

    /// An executed `read_file` of `path`, whole or in part.
    pub fn reads(&self, path: &str) -> bool {
        self.tool == "read_file" && self.executed() && self.targets(path)
    }

    /// An executed `read_file` of the whole file at `path`.
    pub fn read_in_full(&self, path: &str) -> bool {
        self.full_read && self.reads(path)
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

/// Where the model had first seen all of `path`: the index of a whole read, or of the range
/// read that completed, with the reads before it, every line of the file (reads that give the
/// file another length, and a change of the file, start over). Returns the index and how many
/// reads it took.
pub fn read_whole_at(trace: &[TraceEntry], path: &str) -> Option<(usize, usize)> {
    let mut total = None;
    let mut spans: Vec<(u64, u64)> = Vec::new();
    for (i, e) in trace.iter().enumerate() {
        if e.read_in_full(path) {
            return Some((i, 1));
        }
        // Lines shown before a change of the file are lines of another text.
        if e.mutated_path(path) {
            spans.clear();
            continue;
        }
        let Some([first, last, lines]) = e.lines_shown.filter(|_| e.reads(path)) else {
            continue;
        };
        if total != Some(lines) {
            total = Some(lines);
            spans.clear();
        }
        spans.push((first, last));
        spans.sort_unstable();
        let mut covered = 0;
        for &(a, b) in &spans {
            if a > covered + 1 {
                break;
            }
            covered = covered.max(b);
        }
        if covered >= lines && lines > 0 {
            return Some((i, spans.len()));
        }
    }
    None
}

/// The index of the last executed change of `path` in a trace.
pub fn last_write(trace: &[TraceEntry], path: &str) -> Option<usize> {
    trace.iter().rposition(|e| e.mutated_path(path))
}

/// Whether the model has seen `path` as it is since the change at `write`: a `read_file` of it
/// after that change, or the change's own result showing it whole (lever `read-back`).
pub fn seen_since_write(trace: &[TraceEntry], write: usize, path: &str) -> bool {
    trace[write].shown_back || trace[write + 1..].iter().any(|e| e.reads(path))
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

    fn range(path: &str, first: u64, last: u64, total: u64) -> TraceEntry {
        TraceEntry::from_gate("read_file", Some(path), GateOutcome::Executed, false)
            .with_lines_shown(Some([first, last, total]))
    }

    #[test]
    fn line_ranges_that_cover_a_file_read_it_whole_where_the_last_one_lands() {
        let log = "logs/app.log";
        let other = TraceEntry::from_gate("list_dir", Some("."), GateOutcome::Executed, false);
        let trace = vec![
            range(log, 101, 240, 240),
            other,
            range(log, 1, 60, 240),
            range(log, 50, 100, 240),
        ];
        assert_eq!(read_whole_at(&trace, log), Some((3, 3)));
        assert_eq!(read_whole_at(&trace[..3], log), None, "lines 61-100 unseen");
        // Overlaps and order do not matter; a gap of one line does.
        let gap = vec![range(log, 1, 99, 240), range(log, 101, 240, 240)];
        assert_eq!(read_whole_at(&gap, log), None);
        // A whole read is one read.
        let whole =
            vec![
                TraceEntry::from_gate("read_file", Some(log), GateOutcome::Executed, false)
                    .with_full_read(true),
            ];
        assert_eq!(read_whole_at(&whole, log), Some((0, 1)));
    }

    #[test]
    fn ranges_that_are_not_evidence_do_not_count() {
        let log = "logs/app.log";
        let denied = TraceEntry::from_gate("read_file", Some(log), GateOutcome::Denied, false)
            .with_lines_shown(Some([1, 120, 240]));
        let other_file = range("logs/old.log", 121, 240, 240);
        assert_eq!(
            read_whole_at(&[denied, other_file, range(log, 121, 240, 240)], log),
            None
        );
        // Reads that saw the file at another length start over: the halves of two files.
        let changed = vec![range(log, 1, 120, 240), range(log, 121, 300, 300)];
        assert_eq!(read_whole_at(&changed, log), None);
        // A read with no lines recorded (cut inside its only line, or bytes cut) proves nothing.
        let unrecorded =
            TraceEntry::from_gate("read_file", Some(log), GateOutcome::Executed, false);
        assert_eq!(read_whole_at(&[unrecorded], log), None);
        // Another tool's entry with lines (none should have them) does not count either.
        let mut search = range(log, 1, 240, 240);
        search.tool = "search_text".into();
        assert_eq!(read_whole_at(&[search], log), None);
    }
}
