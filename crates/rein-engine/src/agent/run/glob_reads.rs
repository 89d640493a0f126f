//! Lever `glob-reads`: a `read_file` call for a glob or a folder runs as `find_files`, and Rein
//! reads the files listed (see [`crate::agent::glob_reads`]).

use super::*;
use crate::agent::glob_reads::{
    glob_note, glob_read, plan_reads, shown_chars, GlobRead, Look, Plan, GLOB_READS_MAX_CHARS,
};
use crate::agent::prompt::labelled_result;
use rein_workspace::desk::is_text;

/// The thought the journal shows for a read Rein made for the model's glob.
const GLOB_READ_THOUGHT: &str =
    "Rein read this file for the model's read_file call with a glob or a folder (lever glob-reads)";

/// What the system prompt says of `read_file` with the lever.
pub(super) const GLOB_READS_TOOL_NOTE: &str = "- read_file also takes a glob or a folder as its path (\"notes/*.md\", \"notes\"): the matching files are listed and each is read whole for you, up to 24 files and 6,000 characters in all.\n";

impl<'a> Agent<'a> {
    /// Whether a `read_file` call may stand for a `find_files` call in this run: the lever is
    /// on, outside a memory sandbox, with both tools offered.
    pub(super) fn reads_globs(&self) -> bool {
        let tools = self.tools();
        self.options.levers.glob_reads
            && !self.options.memory
            && ["read_file", "find_files"]
                .iter()
                .all(|t| tools.iter().any(|have| have == t))
    }

    /// The `find_files` call the model's `read_file` call stands for, if it names a glob or a
    /// folder. A folder is confirmed by the world's listing, asked only for a path that cannot
    /// be read as a file.
    pub(super) fn glob_read(&self, tool: &str, params: &Value) -> Option<GlobRead> {
        if tool != "read_file" || !self.reads_globs() {
            return None;
        }
        let world = self.env.world;
        glob_read(params, |folder| {
            world.read_small(folder, 0).is_err()
                && world.files().ok().flatten().is_some_and(|files| {
                    files.iter().any(|f| {
                        f.strip_prefix(folder)
                            .is_some_and(|rest| rest.starts_with('/'))
                    })
                })
        })
    }

    /// After the glob's `find_files` call: which listed files Rein reads (looking only at files
    /// policy lets `read_file` show without asking), and the note that says what ran, put before
    /// the gate's own reason. Nothing is read when the listing did not run.
    pub(super) fn plan_glob_reads(&self, read: &GlobRead, report: &mut GateReport) -> Plan {
        if report.outcome != GateOutcome::Executed {
            return Plan::default();
        }
        let listed: Vec<String> = report.result["files"]
            .as_array()
            .map(|files| {
                files
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let truncated = report.result["truncated"].as_bool().unwrap_or(false);
        let plan = plan_reads(&listed, |path| self.look_before_reading(path));
        let note = glob_note(read, listed.len(), &plan, truncated);
        report.reason = [note.as_str(), report.reason.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("; ");
        plan
    }

    fn look_before_reading(&self, path: &str) -> Look {
        if !self.executor.reads_freely(path) {
            return Look::Kept;
        }
        match self.env.world.read_small(path, GLOB_READS_MAX_CHARS as u64) {
            Ok(Some(bytes)) if is_text(&bytes) => match std::str::from_utf8(&bytes) {
                Ok(text) => Look::Text {
                    shown_chars: shown_chars(text),
                },
                Err(_) => Look::NotText,
            },
            Ok(Some(_)) => Look::NotText,
            // Over the size looked at (or gone since the listing: then its own read says so).
            Ok(None) => Look::TooLong,
            Err(_) => Look::NotText,
        }
    }

    /// Rein's reads of the planned files, each through the gate as a call of its own (on the
    /// trace as Rein's, so the judge sees who asked), and the text that shows them to the
    /// model after the listing.
    pub(super) fn glob_reads(
        &mut self,
        st: &mut State,
        plan: &Plan,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<String, AgentError> {
        let mut shown = String::new();
        for path in &plan.read {
            let made = st.trace.iter().filter(|e| e.by_rein).count();
            let id = self.rein_call_id("glob", made);
            let params = json!({ "path": path });
            let origin = (GLOB_READ_THOUGHT, Lever::GlobReads);
            let report = self.call_for_model(st, on_event, &id, "read_file", &params, origin)?;
            shown.push('\n');
            shown.push_str(&labelled_result(
                &format!("Result of Rein's read of {path} (read_file, for your glob)"),
                &report,
            ));
        }
        Ok(shown)
    }
}
