//! Lever `read-cited`: the hold of a first write of the deliverable that names an input the run
//! has not read in full (see [`crate::agent::read_cited`]).

use super::*;

impl<'a> Agent<'a> {
    /// Lever `read-cited`: why the model's first write of the deliverable is held (its text
    /// names inputs not read in full, see [`cited_unread`], that can still hold it), journaled
    /// as a `read_cited` event; `None` to let it through to the gate.
    pub(super) fn read_cited_hold(
        &self,
        st: &mut State,
        tool: &str,
        params: &Value,
        n: u32,
    ) -> Result<Option<String>, AgentError> {
        let writes = self.call_writes(tool);
        let path = trace_target(tool, params);
        let (true, false, Some(path)) = (
            self.options.levers.read_cited && writes,
            self.options.memory,
            path,
        ) else {
            return Ok(None);
        };
        // An input whose read the gate refused, or that held CITED_HOLDS_MAX writes, holds no
        // more: the model cannot, or will not, read it, and holding would only end the run.
        let holds = |input: &String| {
            let held = st
                .cited_held
                .iter()
                .find(|(i, _)| i == input)
                .map_or(0, |(_, n)| *n);
            let refused = st.trace.iter().any(|e| {
                // Invalid is the call's own fault (a line past the end): the input can still
                // be read.
                e.tool == "read_file"
                    && !e.executed()
                    && e.outcome != GateOutcome::Invalid.as_str()
                    && e.path.as_deref().is_some_and(|p| same_path(p, input))
            });
            held < CITED_HOLDS_MAX && !refused
        };
        let unread: Vec<String> = cited_unread(
            self.env.contract,
            &st.trace,
            path,
            params,
            self.counts_shown(),
        )
        .into_iter()
        .filter(holds)
        .collect();
        if unread.is_empty() {
            return Ok(None);
        }
        for input in &unread {
            match st.cited_held.iter_mut().find(|(i, _)| i == input) {
                Some((_, n)) => *n += 1,
                None => st.cited_held.push((input.clone(), 1)),
            }
        }
        self.env.journal.append_event(
            Some(self.env.run),
            "read_cited",
            &json!({"step": n, "attempt": st.attempt, "unread": unread}),
        )?;
        Ok(Some(held_reason(&unread)))
    }
}
