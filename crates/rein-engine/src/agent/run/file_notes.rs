//! Lever `file-notes` in the run: which files a step showed whole, the model's notes on them
//! (asked after the step's result, before Rein's own notes), and the list every later step's
//! message ends its result with.

use rein_protocol::{CompletionRequest, Prompt};

use super::*;
use crate::agent::file_notes::{
    note_reply_tokens, note_request, note_schema, notes_message, read_notes, NOTES_MAX,
    NOTES_PER_STEP_MAX,
};

impl<'a> Agent<'a> {
    /// Whether this run notes the files it reads: the lever is on, outside a memory sandbox,
    /// and the deliverable is one the run writes anew (a file edited in place is read to be
    /// changed, not to gather an answer).
    fn notes_files(&self, st: &State) -> bool {
        self.options.levers.file_notes && !self.options.memory && st.deliverable_at_start.is_none()
    }

    /// The files the trace entries from `from` on showed whole that have no note yet (the
    /// deliverable never), at most [`NOTES_PER_STEP_MAX`]; and how many such files were left
    /// over by that cap or by [`NOTES_MAX`].
    fn files_to_note(&self, st: &State, from: usize) -> (Vec<String>, usize) {
        let artifact = &self.env.contract.mission.required_artifact;
        let mut fresh: Vec<String> = Vec::new();
        for e in st.trace.get(from..).unwrap_or_default() {
            let Some(path) = e.path.as_deref() else {
                continue;
            };
            let whole = e.full_read
                || e.lines_shown
                    .is_some_and(|[first, last, total]| first == 1 && last == total);
            if e.tool != "read_file"
                || !e.executed()
                || !whole
                || crate::checks::same_path(path, artifact)
                || st.file_notes.iter().any(|n| n.path == path)
                || fresh.iter().any(|p| p == path)
            {
                continue;
            }
            fresh.push(path.to_string());
        }
        let room = NOTES_MAX
            .saturating_sub(st.file_notes.len())
            .min(NOTES_PER_STEP_MAX);
        let left = fresh.len().saturating_sub(room);
        fresh.truncate(room);
        (fresh, left)
    }

    /// Asks the model for its notes on the files the step's trace entries from `from` on showed
    /// whole, with `reply` (the step's call) and `shown` (its result as the model reads it so
    /// far) after the transcript: the same prefix the next step's prompt starts with. Keeps the
    /// notes (a note step and a `file_notes` event in the journal). A model error, a prompt
    /// that does not fit, or a reply with no note leaves the step as it would have been, and
    /// the journal says why.
    pub(super) fn note_files(
        &mut self,
        st: &mut State,
        from: usize,
        reply: &str,
        shown: &str,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<(), AgentError> {
        if !self.notes_files(st) {
            return Ok(());
        }
        let (paths, left) = self.files_to_note(st, from);
        st.file_notes_unkept += left;
        if paths.is_empty() {
            return Ok(());
        }
        let asking = note_request(&paths);
        let tail = vec![
            ChatMessage::assistant(reply.to_string()),
            ChatMessage::user(format!("{shown}\n\n{asking}")),
        ];
        let reply_tokens = note_reply_tokens(paths.len());
        let budget = prompt_budget(self.context_tokens(), reply_tokens);
        let tail_tokens = estimate_tokens(&tail);
        st.figures.trimmed_steps += st.transcript.fit(budget.saturating_sub(tail_tokens)) as u32;
        let mut messages = st.transcript.messages();
        messages.extend(tail);
        let mut step = NewStep::new(StepKind::Note);
        step.attempt = st.attempt_id;
        if estimate_tokens(&messages) > budget {
            step.detail = json!({"file_notes": null, "paths": paths, "skipped": "the files' text does not fit the prompt with the transcript"});
            self.env.journal.append_step(self.env.run, &step)?;
            return Ok(());
        }
        let mut request =
            CompletionRequest::new(Prompt::chat(messages), reply_tokens, self.action_sampling());
        request.seed = self.options.seed;
        if self.options.constrained {
            request.json_schema = Some(note_schema(&paths));
        }
        let started = Instant::now();
        let completed = self.model.complete(&request, &mut |_| {});
        self.model_notices(on_event)?;
        step.elapsed_ms = Some(started.elapsed().as_millis() as u64);
        let completion = match completed {
            Ok(c) => c,
            Err(e) => {
                step.detail =
                    json!({"file_notes": null, "paths": paths, "model_error": e.to_string()});
                self.env.journal.append_step(self.env.run, &step)?;
                return Ok(());
            }
        };
        add_tokens(&mut st.figures, &completion);
        let notes = read_notes(&completion.text, &paths);
        let kept: Vec<Value> = notes
            .iter()
            .map(|n| json!({"path": n.path, "needed": n.needed, "note": n.note}))
            .collect();
        step.reply = Some(completion.text.clone());
        step.detail = json!({"file_notes": kept, "paths": paths});
        step.prompt_tokens = Some(completion.prompt_tokens);
        step.completion_tokens = Some(completion.completion_tokens);
        self.env.journal.append_step(self.env.run, &step)?;
        self.env.journal.append_event(
            Some(self.env.run),
            "file_notes",
            &json!({"step": st.figures.steps, "notes": kept, "asked": paths}),
        )?;
        st.file_notes.extend(notes);
        Ok(())
    }

    /// The notes kept so far, for the step's message (empty without any).
    pub(super) fn file_notes_message(&self, st: &State) -> String {
        if !self.notes_files(st) {
            return String::new();
        }
        notes_message(&st.file_notes, st.file_notes_unkept)
    }
}
