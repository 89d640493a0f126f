//! Lever `own-totals` in the run: the deliverable's total that disagrees with what it lists,
//! read off the file before a finish, and the finish held once per attempt for it.

use super::*;
use crate::agent::own_totals::{disagreement, Disagreement};

/// Largest deliverable (bytes) read for its totals: far above any report or extract a task
/// asks for, and the reading is line by line.
const OWN_TOTALS_MAX_FILE_BYTES: usize = 256 * 1024;

impl<'a> Agent<'a> {
    /// The total a finish would now be held for: the lever is on, no finish was held in this
    /// attempt yet (for this or another lever), a turn is left after the hold, and the
    /// deliverable states a total that disagrees with the sum of what it lists (see
    /// [`disagreement`]).
    fn own_total(&self, st: &State) -> Option<Disagreement> {
        if st.held_in_attempt() || st.figures.steps >= self.options.limits.max_turns {
            return None;
        }
        self.total_disagreement()
    }

    /// Whether a finish Rein would make or offer alone (`auto-finish`, `finish-when-met`)
    /// waits for a total that disagrees with what the deliverable lists: its hold can still
    /// fire, or it fired and the model has not had its step since.
    pub(super) fn total_pending(&self, st: &State) -> bool {
        let just_held =
            st.total_held_in == Some(st.attempt) && st.total_held_at == Some(st.figures.steps);
        (just_held && self.total_disagreement().is_some()) || self.own_total(st).is_some()
    }

    /// With `finish-when-met`, called once the finish rules are met
    /// (`finish_rules_ready`): when the deliverable states a total
    /// that disagrees with what it lists, Rein holds its own finish as it would the model's,
    /// and tells the model in the transcript. Without this, a model that never calls finish
    /// itself would never be finished for.
    pub(super) fn hold_total_before_finish(&self, st: &mut State) -> Result<(), AgentError> {
        if !self.options.levers.own_totals {
            return Ok(());
        }
        let Some((hold, next)) = self.total_hold(st, st.figures.steps)? else {
            return Ok(());
        };
        // A note, not a finish call in the transcript: shown Rein's finish as an assistant
        // turn, the 1.5B copied it as its own next call in all three runs it came up in
        // (`ot17b-on/`: explore-archive-years, extract-receipts, extract-service-ports).
        st.transcript.push(
            vec![ChatMessage::user(format!(
                "Rein did not finish for you. {hold}\nSuggested next step: {next}."
            ))],
            format!("Rein's finish held after step {}", st.figures.steps),
        );
        Ok(())
    }

    fn total_disagreement(&self) -> Option<Disagreement> {
        if !self.options.levers.own_totals || self.options.memory {
            return None;
        }
        let path = &self.env.contract.mission.required_artifact;
        let bytes = self.env.world.read(path).ok().flatten()?;
        if bytes.len() > OWN_TOTALS_MAX_FILE_BYTES {
            return None;
        }
        disagreement(path, std::str::from_utf8(&bytes).ok()?)
    }

    /// The finish held for [`Self::own_total`], recorded: the hold's message and the progress
    /// note's next step, each naming the call that fixes the line.
    pub(super) fn total_hold(
        &self,
        st: &mut State,
        step: u32,
    ) -> Result<Option<(String, String)>, AgentError> {
        let Some(d) = self.own_total(st) else {
            return Ok(None);
        };
        st.total_held_in = Some(st.attempt);
        st.total_held_at = Some(st.figures.steps);
        self.env.journal.append_event(
            Some(self.env.run),
            "own_total_hold",
            &json!({
                "step": step,
                "attempt": st.attempt,
                "stated_at": d.stated_at,
                "stated": d.stated.normalize().to_string(),
                "sum": d.sum.normalize().to_string(),
                "items": d.items,
            }),
        )?;
        let (path, fixer) = (
            &self.env.contract.mission.required_artifact,
            self.total_fixer(),
        );
        Ok(Some((d.message(path, fixer), d.next_step(path, fixer))))
    }

    /// The call a total line is fixed with: `rewrite_section` where the run offers it, else
    /// the small change of a file edited in place.
    fn total_fixer(&self) -> &'static str {
        if self.rewrite_outline().is_some() {
            "rewrite_section (its heading and the section's whole new text)"
        } else {
            self.in_place_fixer()
        }
    }
}
