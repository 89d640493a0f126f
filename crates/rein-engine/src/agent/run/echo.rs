//! Lever `no-echo`: the hold of a write of the deliverable that repeats Rein's own words (see
//! [`crate::agent::no_echo`]).

use super::*;
use crate::agent::no_echo::{echoed, held_reason, ECHO_HOLDS_MAX};

impl<'a> Agent<'a> {
    /// Lever `no-echo`: why a write of the deliverable is held (its new text, as the gate would
    /// compute it, repeats runs of Rein's messages that the task, the inputs and the deliverable
    /// as it stands do not hold), journaled as a `no_echo` event; `None` to let it through to
    /// the gate. `arguments` are the ones the gate would get.
    pub(super) fn echo_hold(
        &self,
        st: &mut State,
        tool: &str,
        arguments: &Value,
        n: u32,
    ) -> Result<Option<String>, AgentError> {
        if !self.options.levers.no_echo || self.options.memory || !self.call_writes(tool) {
            return Ok(None);
        }
        let held = if st.echo_held.0 == st.attempt {
            st.echo_held.1
        } else {
            0
        };
        if held >= ECHO_HOLDS_MAX {
            return Ok(None);
        }
        let m = &self.env.contract.mission;
        let call = ToolCall {
            id: format!("run{}-step{n}-echo", self.env.run),
            tool: self.gate_tool(tool).to_string(),
            arguments: arguments.clone(),
        };
        let Ok(proposal) = self.executor.preview(&call) else {
            return Ok(None);
        };
        let after = match proposal.after.as_deref().map(std::str::from_utf8) {
            Some(Ok(text)) if same_path(proposal.path.as_str(), &m.required_artifact) => text,
            _ => return Ok(None),
        };
        // Rein's own wording: each check's requirement as the model is told it, the task
        // message (the prompt in it is allowed below) and the notes Rein added after the last
        // step. Not a tool's result (file names, lines of the inputs, the model's own text in
        // a diff), which a deliverable may rightly repeat.
        let mut rein: Vec<String> = m
            .checks
            .iter()
            .map(|chk| self.hinted_requirement(&chk.spec))
            .collect();
        rein.extend(st.transcript.head().iter().map(|msg| msg.content.clone()));
        rein.push(st.rein_notes.clone());
        let world = self.env.world;
        // Rein's `folder_stats` figures in words (lever `plain-counts`) are a tool's result: a
        // file's line, `- data/orders.csv: 37 rows`, is what a list of the tables rightly says.
        // The repeat after each step holds the same lines under a sentence of Rein's own.
        let facts = st.folder_words.as_deref();
        let allowed = || {
            let mut texts: Vec<String> = vec![m.prompt.clone()];
            texts.extend(facts.map(str::to_string));
            for path in m
                .inputs
                .iter()
                .chain(&m.editable)
                .chain(std::iter::once(&m.required_artifact))
            {
                if let Ok(Some(bytes)) = world.read(path) {
                    texts.push(String::from_utf8_lossy(&bytes).into_owned());
                }
            }
            texts
        };
        let passages = echoed(after, &rein, allowed);
        if passages.is_empty() {
            return Ok(None);
        }
        st.echo_held = (st.attempt, held + 1);
        self.env.journal.append_event(
            Some(self.env.run),
            "no_echo",
            &json!({"step": n, "attempt": st.attempt, "passages": passages}),
        )?;
        Ok(Some(held_reason(&m.required_artifact, &passages)))
    }
}
