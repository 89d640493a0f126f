//! The caps that stop a run: which one fired, journaled and reported.

use super::*;

impl<'a> Agent<'a> {
    /// Checks the caps that stop a run; records and reports the one that fired.
    pub(super) fn stop_for_caps(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<Option<RunEnd>, AgentError> {
        let limits = self.options.limits;
        let elapsed = self.clock.elapsed();
        let hit = if elapsed >= limits.timeout {
            Some(CapHit::RunTimeout {
                limit_secs: limits.timeout.as_secs(),
                elapsed_secs: elapsed.as_secs(),
            })
        } else if st.figures.steps >= limits.max_turns {
            Some(CapHit::Turns {
                limit: limits.max_turns,
            })
        } else if st.stalled >= MAX_STEPS_WITHOUT_PROGRESS {
            Some(CapHit::NoProgress {
                limit: MAX_STEPS_WITHOUT_PROGRESS,
            })
        } else {
            None
        };
        match hit {
            Some(hit) => {
                self.cap(st, &hit, on_event)?;
                Ok(Some(RunEnd::Cap { hit }))
            }
            None => Ok(None),
        }
    }

    pub(super) fn cap(
        &mut self,
        st: &State,
        hit: &CapHit,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<(), AgentError> {
        let mut step = NewStep::new(StepKind::Cap);
        step.attempt = st.attempt_id;
        step.detail = json!({"cap": hit, "message": hit.message()});
        self.env.journal.append_step(self.env.run, &step)?;
        self.announce_cap(hit, on_event)
    }

    /// Journals a cap that fired (a `cap` event) and tells the caller's events.
    pub(super) fn announce_cap(
        &self,
        hit: &CapHit,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<(), AgentError> {
        self.env.journal.append_event(
            Some(self.env.run),
            "cap",
            &json!({"cap": hit.name(), "message": hit.message()}),
        )?;
        on_event(&AgentEvent::Cap {
            cap: hit.name().into(),
            message: hit.message(),
        });
        Ok(())
    }
}
