//! Lever `change-list` in the run: the request for the model's list, the changes made as the
//! file shows them, the progress note's next change and the finish held while changes are left.

use rein_protocol::{CompletionRequest, Prompt};
use rein_workspace::changed_places;

use super::*;
use crate::agent::change_list::{
    list_request, list_schema, ChangeList, Fixer, CHANGE_LIST_MAX_FILE_BYTES,
};

/// Turns the list must leave: an edit, a read back and a finish.
const TURNS_AFTER_LIST: u32 = 3;

impl<'a> Agent<'a> {
    /// Whether the list is asked before this step: the lever is on, the deliverable was in the
    /// workspace when the run began, the run has read it whole and not written it yet, and
    /// after the request turns are left for an edit, a read back and a finish (the list must
    /// never cost a run the finish it would have made). Asked once a run.
    pub(super) fn lists_changes_now(&self, st: &State) -> bool {
        let artifact = &self.env.contract.mission.required_artifact;
        self.options.levers.change_list
            && !self.options.memory
            && !st.change_list_asked
            && st.deliverable_at_start.is_some()
            && st.figures.steps + 1 + TURNS_AFTER_LIST <= self.options.limits.max_turns
            && crate::checks::read_whole_at(&st.trace, artifact).is_some()
            && crate::checks::last_write(&st.trace, artifact).is_none()
    }

    /// How the run makes a change: the call, and whether it makes every change at once.
    fn change_fixer(&self) -> Fixer<'static> {
        Fixer {
            call: self.in_place_fixer(),
            one_call: self.edits_lines(),
        }
    }

    /// In how many places the deliverable now differs from the file as the run found it: the
    /// changes made, whatever made or undid them (a retry's undo, an edit put back, a write
    /// that changed nothing).
    fn changes_made(&self, st: &State) -> usize {
        let before = st.deliverable_at_start.as_deref().unwrap_or_default();
        let now = self
            .env
            .world
            .read(&self.env.contract.mission.required_artifact)
            .ok()
            .flatten()
            .unwrap_or_default();
        changed_places(before, &now)
    }

    /// Asks the model for its list of the changes the task asks for in the deliverable (one
    /// step of the run, journaled as a note and a `change_list` event), and keeps it with an
    /// acknowledgement in the transcript. A reply that lists nothing, or a model error, leaves
    /// the run without a list: the next step asks for an action as it would have.
    pub(super) fn ask_change_list(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<(), AgentError> {
        st.change_list_asked = true;
        let path = self.env.contract.mission.required_artifact.clone();
        let size = st.deliverable_at_start.as_ref().map_or(0, Vec::len);
        if size > CHANGE_LIST_MAX_FILE_BYTES {
            // The cap says so: no list, and why, in the journal.
            self.env.journal.append_event(
                Some(self.env.run),
                "change_list",
                &json!({"changes": [], "skipped": format!(
                    "{path} held {size} bytes when the run began, over the {CHANGE_LIST_MAX_FILE_BYTES}-byte cap of lever change-list: no list was asked"
                )}),
            )?;
            return Ok(());
        }
        st.figures.steps += 1;
        let n = st.figures.steps;
        let asking = list_request(&path, self.change_fixer());
        let mut messages = st.transcript.messages();
        messages.push(ChatMessage::user(asking.clone()));
        let mut request = CompletionRequest::new(
            Prompt::chat(messages),
            MAX_REPLY_TOKENS,
            self.action_sampling(),
        );
        request.seed = self.options.seed;
        if self.options.constrained {
            request.json_schema = Some(list_schema());
        }
        let started = Instant::now();
        let completed = self.model.complete(&request, &mut |_| {});
        self.model_notices(on_event)?;
        let mut step = NewStep::new(StepKind::Note);
        step.attempt = st.attempt_id;
        step.elapsed_ms = Some(started.elapsed().as_millis() as u64);
        let completion = match completed {
            Ok(c) => c,
            Err(e) => {
                step.detail = json!({"change_list": null, "model_error": e.to_string()});
                self.env.journal.append_step(self.env.run, &step)?;
                return Ok(());
            }
        };
        add_tokens(&mut st.figures, &completion);
        let list = ChangeList::read(&completion.text);
        let (items, proposed) = list
            .as_ref()
            .map_or((Vec::new(), 0), |l| (l.items().to_vec(), l.proposed()));
        step.reply = Some(completion.text.clone());
        step.detail = json!({"change_list": items, "proposed": proposed});
        step.prompt_tokens = Some(completion.prompt_tokens);
        step.completion_tokens = Some(completion.completion_tokens);
        self.env.journal.append_step(self.env.run, &step)?;
        self.env.journal.append_event(
            Some(self.env.run),
            "change_list",
            &json!({"step": n, "changes": items, "proposed": proposed}),
        )?;
        let Some(list) = list else {
            return Ok(());
        };
        st.transcript.push(
            vec![
                ChatMessage::user(asking),
                ChatMessage::assistant(completion.text),
                ChatMessage::user(list.acknowledgement(&path, self.change_fixer())),
            ],
            format!("step {n}: the changes to {path}, as the model listed them"),
        );
        st.change_list = Some(list);
        Ok(())
    }

    /// The finish held once per attempt while the list has changes left (not on the run's last
    /// turn, where a hold would leave the file unjudged). Records the hold.
    pub(super) fn change_hold(&self, st: &mut State) -> Option<String> {
        if st.held_in_attempt() || st.figures.steps >= self.options.limits.max_turns {
            return None;
        }
        let reason = st.change_list.as_ref()?.hold_reason(
            self.changes_made(st),
            &self.env.contract.mission.required_artifact,
            self.change_fixer(),
        )?;
        st.change_held_in = Some(st.attempt);
        Some(reason)
    }

    /// The progress note's suggested step while the list has a change left and every input
    /// has been read whole (until then the note's own next read stands). `None` after a finish
    /// the finish rules refused: their reason says what to fix.
    pub(super) fn next_change_step(&self, st: &State, rules_refused: bool) -> Option<String> {
        let m = &self.env.contract.mission;
        let all_read = m
            .inputs
            .iter()
            .chain(&m.editable)
            .all(|i| crate::checks::read_whole_at(&st.trace, i).is_some());
        if rules_refused || !all_read {
            return None;
        }
        st.change_list.as_ref()?.next_step(
            self.changes_made(st),
            &m.required_artifact,
            self.change_fixer(),
        )
    }
}
