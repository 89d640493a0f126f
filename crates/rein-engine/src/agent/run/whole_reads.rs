//! Lever `whole-reads`: a line range of a short file read whole (see
//! [`crate::agent::whole_reads`]).

use super::*;

impl<'a> Agent<'a> {
    /// The whole-file read that runs instead of the model's `read_file` call, with the lever,
    /// outside a memory sandbox (whose `read_file` takes no range), for a file policy lets
    /// `read_file` show without asking (Rein looks at it before the gate) and whose widened read
    /// has not been cut before in this run.
    pub(super) fn widened_read(
        &self,
        st: &State,
        tool: &str,
        params: &Value,
    ) -> Option<WidenedRead> {
        if tool != "read_file" || !self.options.levers.whole_reads || self.options.memory {
            return None;
        }
        let path = params.get("path").and_then(Value::as_str)?;
        if !self.executor.reads_freely(path) {
            return None;
        }
        widened_read(self.env.world, params)
            .filter(|w| !st.cut_whole_reads.iter().any(|p| same_path(p, &w.path)))
    }

    /// After a widened read ran: the note that says so when the result, as the prompt shows it,
    /// holds the whole file; else the file is left to its ranges from now on.
    pub(super) fn settle_widened_read(
        &self,
        st: &mut State,
        read: &WidenedRead,
        report: &mut GateReport,
    ) {
        if report.outcome != GateOutcome::Executed {
            return;
        }
        match whole_read_note(read, &report.result) {
            Some(note) => report.reason = format!("{}; {note}", report.reason),
            None => st.cut_whole_reads.push(read.path.clone()),
        }
    }
}
