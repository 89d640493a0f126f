//! Lever `read-cited`: the hold of a first write of the deliverable that names an input the run
//! has not read in full (see [`crate::agent::read_cited`]), and the held write given back once
//! those inputs are read.

use super::glob_reads::{GlobReads, ReadsFor};
use super::*;
use crate::agent::read_cited::{cited_reads_note, held_draft_note, GivenBack};
use crate::checks::{last_write, read_whole_at};

impl<'a> Agent<'a> {
    /// Lever `read-cited`: why the model's first write of the deliverable is held (its text
    /// names inputs not read in full, see [`cited_unread`], that can still hold it), journaled
    /// as a `read_cited` event; `None` to let it through to the gate. The held call is kept to
    /// give back once its inputs are read ([`Self::held_draft_back`]). `arguments` are the ones
    /// the gate would get: a call they make invalid goes to the gate to be refused as such, not
    /// held, read for and given back to fail the same way.
    pub(super) fn read_cited_hold(
        &self,
        st: &mut State,
        tool: &str,
        params: &Value,
        arguments: &Value,
        n: u32,
    ) -> Result<Option<String>, AgentError> {
        let path = trace_target(tool, params);
        let (true, false, Some(path)) = (
            self.options.levers.read_cited && self.call_writes(tool),
            self.options.memory,
            path,
        ) else {
            return Ok(None);
        };
        let unread = self.cited_still_holding(st, path, params);
        // Checked only for a call it would hold, off the path of every other write.
        let valid = || {
            self.env
                .registry
                .validate(self.gate_tool(tool), arguments)
                .is_ok()
        };
        if unread.is_empty() || !valid() {
            return Ok(None);
        }
        for input in &unread {
            match st.cited_held.iter_mut().find(|(i, _)| i == input) {
                Some((_, n)) => *n += 1,
                None => st.cited_held.push((input.clone(), 1)),
            }
        }
        st.cited_draft = Some(CitedDraft {
            step: n,
            unread: unread.clone(),
            tool: tool.to_string(),
            params: params.clone(),
        });
        self.env.journal.append_event(
            Some(self.env.run),
            "read_cited",
            &json!({"step": n, "attempt": st.attempt, "unread": unread}),
        )?;
        Ok(Some(held_reason(&unread, self.reads_cited())))
    }

    /// The inputs a write of `path` with `params` names, not read in full, that can still hold
    /// it. An input whose read the gate refused, or that held [`CITED_HOLDS_MAX`] writes,
    /// holds no more: the model cannot, or will not, read it, and holding would only end the
    /// run.
    fn cited_still_holding(&self, st: &State, path: &str, params: &Value) -> Vec<String> {
        let holds = |input: &String| {
            let held = st
                .cited_held
                .iter()
                .find(|(i, _)| i == input)
                .map_or(0, |(_, n)| *n);
            held < CITED_HOLDS_MAX && !read_refused(st, input)
        };
        cited_unread(
            self.env.contract,
            &st.trace,
            path,
            params,
            self.counts_shown(),
        )
        .into_iter()
        .filter(holds)
        .collect()
    }

    /// Lever `read-cited`: once every input the held write named is read in full (or its read
    /// was refused), that write given back to send again, journaled as a `read_cited_released`
    /// event; empty while one is still unread, or when none is held. Why: in explore-csv-rows
    /// the 1.5B's held table had all seven rows right; after reading the two archived files
    /// it named, it wrote a table of those two alone, the files it had just read.
    pub(super) fn held_draft_back(&self, st: &mut State, n: u32) -> Result<GivenBack, AgentError> {
        let Some(draft) = st.cited_draft.as_ref() else {
            return Ok(GivenBack::default());
        };
        let Some(path) = trace_target(&draft.tool, &draft.params) else {
            st.cited_draft = None;
            return Ok(GivenBack::default());
        };
        // Written since (the model wrote again on its own): the draft is stale, and no write
        // is held any more once the deliverable exists.
        if last_write(&st.trace, path).is_some() {
            st.cited_draft = None;
            return Ok(GivenBack::default());
        }
        // Only once every input it named is read in full (by Rein's reads in the same step,
        // lever `cited-reads`) or cannot be read: one that held it the most times it may is
        // still unread, and the hold that used that up says to read it first.
        let settled =
            |input: &String| read_whole_at(&st.trace, input).is_some() || read_refused(st, input);
        if !draft.unread.iter().all(settled) {
            return Ok(GivenBack::default());
        }
        let Some(draft) = st.cited_draft.take() else {
            return Ok(GivenBack::default());
        };
        self.env.journal.append_event(
            Some(self.env.run),
            "read_cited_released",
            &json!({"step": n, "attempt": st.attempt, "held_at": draft.step}),
        )?;
        Ok(held_draft_note(&draft))
    }
}

/// Reads for a held write (lever `cited-reads`).
const FOR_CITED: ReadsFor = ReadsFor {
    thought: "Rein read this file for the model's write that named it unread (lever cited-reads)",
    lever: Lever::CitedReads,
    id: "cited",
    what: "named by your held write",
};

impl<'a> Agent<'a> {
    /// Whether Rein reads the inputs a held write named (lever `cited-reads`, with
    /// `read-cited`), outside a memory sandbox, with `read_file` offered.
    pub(super) fn reads_cited(&self) -> bool {
        let levers = &self.options.levers;
        levers.read_cited
            && levers.cited_reads
            && !self.options.memory
            && self.tools().iter().any(|t| t == "read_file")
    }

    /// Lever `cited-reads`: Rein's reads of the inputs the write just held named, each through
    /// the gate as a call of its own, on the trace as Rein's, with the caps of `glob-reads`
    /// (policy's asking rules kept: such a file is left for the model to read); the note after
    /// them says what was shown whole and what was left (also returned alone: Rein's words).
    pub(super) fn cited_reads(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<(GlobReads, String), AgentError> {
        let mut out = GlobReads {
            shown: String::new(),
            pinned: Vec::new(),
        };
        let unread = match st.cited_draft.as_ref() {
            Some(draft) if self.reads_cited() => draft.unread.clone(),
            _ => return Ok((out, String::new())),
        };
        let plan = self.read_files_for(st, on_event, (None, &unread), FOR_CITED, &mut out)?;
        let note = cited_reads_note(unread.len(), &plan);
        out.shown.push('\n');
        out.shown.push_str(&note);
        Ok((out, note))
    }
}

/// Whether the gate refused a read of `input` in this run (denied, or a person said no): the
/// model cannot read it. Invalid is the call's own fault (a line past the end): the input can
/// still be read.
fn read_refused(st: &State, input: &str) -> bool {
    st.trace.iter().any(|e| {
        e.tool == "read_file"
            && !e.executed()
            && e.outcome != GateOutcome::Invalid.as_str()
            && e.path.as_deref().is_some_and(|p| same_path(p, input))
    })
}
