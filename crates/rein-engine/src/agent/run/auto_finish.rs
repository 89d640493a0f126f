//! Lever `auto-finish`: the finish Rein makes itself once `finish-when-met` would offer the
//! model nothing else.

use super::*;

/// The thought the journal shows for Rein's finish.
const AUTO_FINISH_THOUGHT: &str =
    "Rein called finish for the model: the next step could offer nothing else (lever auto-finish)";

/// The summary of Rein's finish: it claims nothing about the work (the judge reads the files).
const AUTO_FINISH_SUMMARY: &str = "Finished by Rein: the finish rules accept the deliverable and every requirement checked before finish is met; the judge checks the rest.";

impl<'a> Agent<'a> {
    /// Lever `auto-finish`: when the next step would offer `finish` alone (`ready`, see
    /// [`Agent::finish_ready`], under constrained decoding), Rein calls it through the gate
    /// itself, once per attempt.
    /// Returns whether the finish was accepted; when the gate did not let it through, the
    /// journal says so and the model is asked as usual for the rest of the attempt.
    pub(super) fn auto_finish(
        &mut self,
        st: &mut State,
        ready: bool,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<bool, AgentError> {
        // Without constrained decoding `finish-when-met` only asks for finish: the model can
        // still do something else, so Rein does not answer for it.
        if !ready
            || !self.options.constrained
            || !self.options.levers.auto_finish
            || st.auto_finish_refused_in == Some(st.attempt)
        {
            return Ok(false);
        }
        let id = self.rein_call_id("finish", st.attempt.saturating_sub(1) as usize);
        let params = json!({ "summary": AUTO_FINISH_SUMMARY });
        let report = self.call_for_model(
            st,
            on_event,
            &id,
            "finish",
            &params,
            (AUTO_FINISH_THOUGHT, Lever::AutoFinish),
        )?;
        let accepted = report.outcome.ran();
        self.env.journal.append_event(
            Some(self.env.run),
            "auto_finish",
            &json!({
                "attempt": st.attempt,
                "after_step": st.figures.steps,
                "accepted": accepted,
                "gate": report.outcome.as_str(),
            }),
        )?;
        if !accepted {
            st.auto_finish_refused_in = Some(st.attempt);
            return Ok(false);
        }
        // As the model writes an action, so an attempt that goes on from this transcript
        // reads the finish as one of the run's calls.
        let call = action_text(AUTO_FINISH_THOUGHT, "finish", &params.to_string());
        st.transcript.push(
            vec![
                ChatMessage::assistant(call),
                ChatMessage::user(format!("Result of Rein's finish: {}", report.reason)),
            ],
            format!("Rein's finish after step {}", st.figures.steps),
        );
        on_event(&AgentEvent::FinishAccepted {
            step: st.figures.steps,
        });
        Ok(true)
    }
}
