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

    /// Whether the deliverable now states a total that disagrees with what it lists, held or
    /// not: Rein does not finish for the model (`auto-finish`) nor offer finish alone
    /// (`finish-when-met`) while it does, so a hold is never followed by Rein's own finish on
    /// the same bytes. The model's own finish is judged after the one hold.
    pub(super) fn total_disagrees(&self) -> bool {
        self.total_disagreement().is_some()
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
