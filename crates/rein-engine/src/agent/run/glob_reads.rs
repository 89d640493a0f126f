//! Lever `glob-reads`: a `read_file` call for a glob or a folder runs as `find_files`, and Rein
//! reads the files listed (see [`crate::agent::glob_reads`]).

use super::*;
use crate::agent::facts::table_facts_of;
use crate::agent::glob_reads::{
    glob_note, glob_read, ran_as_note, read_listed, shown_chars, GlobRead, ListedReader, Look,
    Plan, GLOB_READS_MAX_CHARS,
};
use crate::agent::prompt::labelled_result;
use rein_workspace::desk::is_text;

/// Whose call Rein's reads of listed files stand for: the journal's thought and lever, the
/// prefix of their call ids, and what each result's label says they were read for.
#[derive(Debug, Clone, Copy)]
pub(super) struct ReadsFor {
    pub(super) thought: &'static str,
    pub(super) lever: Lever,
    pub(super) id: &'static str,
    pub(super) what: &'static str,
}

/// Reads for the model's glob (lever `glob-reads`).
const FOR_GLOB: ReadsFor = ReadsFor {
    thought: "Rein read this file for the model's read_file call with a glob or a folder (lever glob-reads)",
    lever: Lever::GlobReads,
    id: "glob",
    what: "for your glob",
};

/// How the calls a step made are remembered for a glob's `find_files` call: a later glob that
/// runs the same call repeats it.
pub(super) const GLOB_CALL: &str = "read_file glob";

/// Characters the totals' key takes in a read's result besides their value:
/// `"column_totals":` and a comma.
const TOTALS_KEY_CHARS: usize = "\"column_totals\":,".len();

/// What the system prompt says of `read_file` with the lever.
pub(super) const GLOB_READS_TOOL_NOTE: &str = "- read_file also takes a glob or a folder as its path (\"notes/*.md\", \"notes\"): the matching files are listed and each is read whole for you, up to 24 files and 6,000 characters in all.\n";

/// Rein's reads of listed files (a glob's, a held write's), one at a time, collected into
/// `out`; the first error of the journal stops the rest.
struct ListedReads<'r, 'a> {
    agent: &'r mut Agent<'a>,
    st: &'r mut State,
    on_event: &'r mut dyn FnMut(&AgentEvent),
    out: &'r mut GlobReads,
    error: Option<AgentError>,
    reads_for: ReadsFor,
}

impl ListedReader for ListedReads<'_, '_> {
    fn look(&mut self, path: &str) -> Look {
        self.agent.look_before_reading(path)
    }

    fn read(&mut self, path: &str) -> (usize, bool) {
        if self.error.is_some() {
            return (0, false);
        }
        match self
            .agent
            .listed_file_read(self.st, path, self.on_event, self.reads_for)
        {
            Ok((text, pinned)) => {
                let whole = self.st.trace.last().is_some_and(|e| e.full_read);
                self.out.pinned.extend(pinned);
                self.out.shown.push('\n');
                self.out.shown.push_str(&text);
                (text.chars().count(), whole)
            }
            Err(e) => {
                self.error = Some(e);
                (0, false)
            }
        }
    }
}

/// What Rein's reads for one glob gave: the text that shows them and the note after them, and
/// the inputs they showed whole (pinned with lever `keep-inputs`).
pub(super) struct GlobReads {
    pub shown: String,
    pub pinned: Vec<String>,
}

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
    /// folder (a folder as the world's metadata says, links not followed).
    pub(super) fn glob_read(&self, tool: &str, params: &Value) -> Option<GlobRead> {
        if tool != "read_file" || !self.reads_globs() {
            return None;
        }
        let world = self.env.world;
        glob_read(params, |folder| world.is_folder(folder))
    }

    /// Rein's reads of the files the glob's `find_files` call listed (`report`, its reason now
    /// saying what the model's call ran as), each through the gate as a call of its own, on the
    /// trace as Rein's so the judge sees who asked; nothing is read when the listing did not
    /// run. The note after them counts what was shown whole and names what was left.
    pub(super) fn glob_reads(
        &mut self,
        st: &mut State,
        read: &GlobRead,
        report: &GateReport,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<GlobReads, AgentError> {
        let mut out = GlobReads {
            shown: String::new(),
            pinned: Vec::new(),
        };
        if report.outcome != GateOutcome::Executed {
            return Ok(out);
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
        let plan = self.read_files_for(
            st,
            on_event,
            (Some(&read.asked), &listed),
            FOR_GLOB,
            &mut out,
        )?;
        out.shown.push('\n');
        out.shown
            .push_str(&glob_note(listed.len(), &plan, truncated));
        Ok(out)
    }

    /// Rein's reads of the files `listed` for the glob `asked` (see [`read_listed`]; `None`:
    /// files named one by one), each through the gate as a call of its own for `reads_for`,
    /// their results added to `out`; what was read, shown whole or left.
    pub(super) fn read_files_for(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
        (asked, listed): (Option<&str>, &[String]),
        reads_for: ReadsFor,
        out: &mut GlobReads,
    ) -> Result<Plan, AgentError> {
        let mut reader = ListedReads {
            agent: self,
            st,
            on_event,
            out,
            error: None,
            reads_for,
        };
        let plan = read_listed(asked, listed, &mut reader);
        match reader.error.take() {
            Some(e) => Err(e),
            None => Ok(plan),
        }
    }

    /// One of Rein's reads of listed files: the text that shows it, and the input it showed
    /// whole (for lever `keep-inputs`).
    fn listed_file_read(
        &mut self,
        st: &mut State,
        path: &str,
        on_event: &mut dyn FnMut(&AgentEvent),
        reads_for: ReadsFor,
    ) -> Result<(String, Option<String>), AgentError> {
        let made = st.trace.iter().filter(|e| e.by_rein).count();
        let id = self.rein_call_id(reads_for.id, made);
        let params = json!({ "path": path });
        let origin = (reads_for.thought, reads_for.lever);
        let report = self.call_for_model(st, on_event, &id, "read_file", &params, origin)?;
        let pinned = st.trace.last().and_then(|e| self.pinned_input(e));
        let text = labelled_result(
            &format!(
                "Result of Rein's read of {path} (read_file, {})",
                reads_for.what
            ),
            &report,
        );
        Ok((text, pinned))
    }

    /// What Rein tells of a listed file before reading it: only where policy lets `read_file`
    /// show it without asking, at most [`GLOB_READS_MAX_CHARS`] bytes of it.
    fn look_before_reading(&self, path: &str) -> Look {
        if !self.executor.reads_freely(path) {
            return Look::Kept;
        }
        match self.env.world.read_small(path, GLOB_READS_MAX_CHARS as u64) {
            Ok(Some(bytes)) if is_text(&bytes) => match std::str::from_utf8(&bytes) {
                Ok(text) => {
                    let totals = if self.options.levers.table_facts {
                        table_facts_of(path, text)
                            .map_or(0, |t| t.to_string().chars().count() + TOTALS_KEY_CHARS)
                    } else {
                        0
                    };
                    Look::Text {
                        shown_chars: shown_chars(text) + totals,
                    }
                }
                Err(_) => Look::NotText,
            },
            Ok(Some(_)) | Err(_) => Look::NotText,
            Ok(None) => Look::TooLong,
        }
    }

    /// The reason of the glob's `find_files` step, put before the gate's own.
    pub(super) fn say_glob_ran(&self, read: &GlobRead, report: &mut GateReport) {
        report.reason = joined_reasons(&ran_as_note(read), &report.reason);
    }
}
