//! Lever `file-notes` in the run: which files a step showed whole, the model's notes on them
//! (asked after the step's result, before Rein's own notes), and the list of notes a step's
//! message shows when it changed or has left the prompt.

use rein_protocol::{CompletionRequest, Prompt};

use super::*;
use crate::agent::file_notes::{
    note_reply_tokens, note_request, note_schema, notes_message, read_notes, NOTES_MAX,
    NOTES_PER_STEP_MAX,
};

/// Share of the run's time after which no note is asked: the notes must not take the time
/// the answer is written in.
const NOTES_TIME_SHARE_PERCENT: u32 = 75;

impl<'a> Agent<'a> {
    /// Whether this run notes the files it reads: the lever is on, outside a memory sandbox,
    /// and the deliverable is one the run writes anew (a file edited in place is read to be
    /// changed, not to gather an answer).
    fn notes_files(&self, st: &State) -> bool {
        self.options.levers.file_notes && !self.options.memory && st.deliverable_at_start.is_none()
    }

    /// The files (in normal form) the trace entries from `from` on showed whole that have no
    /// note yet (the deliverable never), at most [`NOTES_PER_STEP_MAX`] and what is left of
    /// [`NOTES_MAX`]; the others are kept in `file_notes_unnoted` until a note is taken.
    fn files_to_note(&self, st: &mut State, from: usize) -> Vec<String> {
        let artifact = &self.env.contract.mission.required_artifact;
        let mut fresh: Vec<String> = Vec::new();
        for e in st.trace.get(from..).unwrap_or_default() {
            let Some(path) = e
                .path
                .as_deref()
                .and_then(|p| crate::checks::normalize_rel(p).ok())
            else {
                continue;
            };
            let whole = e.full_read
                || e.lines_shown
                    .is_some_and(|[first, last, total]| first == 1 && last == total);
            if !e.reads(&path)
                || !whole
                || crate::checks::same_path(&path, artifact)
                || st.file_notes.iter().any(|n| n.path == path)
                || fresh.contains(&path)
            {
                continue;
            }
            fresh.push(path);
        }
        let room = NOTES_MAX
            .saturating_sub(st.file_notes.len())
            .min(NOTES_PER_STEP_MAX);
        for left in fresh.iter().skip(room) {
            if !st.file_notes_unnoted.contains(left) {
                st.file_notes_unnoted.push(left.clone());
            }
        }
        fresh.truncate(room);
        fresh
    }

    /// Asks the model for its notes on the files the step's trace entries from `from` on showed
    /// whole, with `reply` (the step's call) and `shown` (its result as the model reads it so
    /// far) after the transcript: the same prefix the next step's prompt starts with. Keeps the
    /// notes (a note step and a `file_notes` event in the journal). A file changed since its
    /// note loses it. Not on the run's last turn, nor once [`NOTES_TIME_SHARE_PERCENT`] of its
    /// time is spent. A model error, a prompt that does not fit, or a reply with no note keeps
    /// nothing, and the journal says why.
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
        let changed: Vec<String> = st
            .file_notes
            .iter()
            .filter(|n| st.trace[from..].iter().any(|e| e.mutated_path(&n.path)))
            .map(|n| n.path.clone())
            .collect();
        st.file_notes.retain(|n| !changed.contains(&n.path));
        let paths = self.files_to_note(st, from);
        if paths.is_empty() {
            return Ok(());
        }
        let unnoted: Vec<String> = st.file_notes_unnoted.clone();
        let mut step = NewStep::new(StepKind::Note);
        step.attempt = st.attempt_id;
        let late =
            self.clock.elapsed() >= self.options.limits.timeout / 100 * NOTES_TIME_SHARE_PERCENT;
        let skipped = if st.figures.steps >= self.options.limits.max_turns {
            Some("the run's last turn: no later step would show the notes")
        } else if late {
            Some("three quarters of the run's time are spent")
        } else {
            None
        };
        if let Some(why) = skipped {
            st.file_notes_unnoted.extend(paths.iter().cloned());
            step.detail = json!({"file_notes": null, "paths": paths, "skipped": why});
            self.env.journal.append_step(self.env.run, &step)?;
            return Ok(());
        }
        let asking = note_request(&paths);
        let tail = vec![
            ChatMessage::assistant(reply.to_string()),
            ChatMessage::user(format!("{shown}\n\n{asking}")),
        ];
        let reply_tokens = note_reply_tokens(paths.len());
        let budget = prompt_budget(self.context_tokens(), reply_tokens);
        // Fitted on a copy: the run's own transcript is trimmed to the actions' budget only.
        let mut view = st.transcript.clone();
        view.fit(budget.saturating_sub(view.estimate_of(&tail)));
        let mut messages = view.messages();
        messages.extend(tail);
        if view.estimate_of(&messages) > budget {
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
        st.figures.note_requests += 1;
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
        st.file_notes_unnoted
            .retain(|p| !notes.iter().any(|n| &n.path == p));
        self.env.journal.append_event(
            Some(self.env.run),
            "file_notes",
            &json!({"step": st.figures.steps, "notes": kept, "asked": paths, "unnoted": unnoted}),
        )?;
        st.file_notes.extend(notes);
        Ok(())
    }

    /// What a step's message adds for the notes: the whole list when it changed since it was
    /// last shown or that message has left the prompt (trimmed, or a new attempt's fresh
    /// transcript), and the older copy is then taken out, so a prompt holds one; else nothing.
    /// Starts with a line break.
    pub(super) fn file_notes_message(&self, st: &mut State) -> String {
        if !self.notes_files(st) {
            return String::new();
        }
        let list = notes_message(&st.file_notes, st.file_notes_unnoted.len());
        if list.is_empty() {
            return String::new();
        }
        // With the line break before it: taking an older copy out leaves its message as it was.
        let list = format!("\n{list}");
        if list == st.file_notes_shown && st.transcript.shows(&list) {
            return String::new();
        }
        let older = std::mem::take(&mut st.file_notes_shown);
        st.transcript.remove_text(&older);
        st.file_notes_shown = list.clone();
        list
    }
}
