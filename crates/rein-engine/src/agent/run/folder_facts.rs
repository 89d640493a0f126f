//! Lever `folder-stats`: the `folder_stats` call Rein makes before the first step (see
//! [`crate::agent::folder_facts`]).

use super::*;
use crate::agent::asked_counts::{asked_kinds, keep_asked};
use crate::agent::folder_facts::{
    first_plain_counts, folder_facts_plan, restated_figures, restated_plain_counts, FOLDER_STATS,
};
use crate::agent::prompt::{labelled_result, labelled_text};

/// The thought the journal shows for the call Rein made for the model.
const FOLDER_STATS_THOUGHT: &str =
    "Rein counted the inputs' folder for the model before its first step (lever folder-stats)";

impl<'a> Agent<'a> {
    /// Whether the progress note follows `find-inputs` (search for the few inputs that matter):
    /// not where `folder-stats` counts the inputs, a task that counts its files rather than
    /// looks for a few of them (the 1.5B, told to search first, searched `letter` and read the
    /// letters of an archive one by one under Rein's counts).
    pub(super) fn find_inputs_note(&self) -> bool {
        self.options.levers.find_inputs && !self.counts_shown()
    }

    /// Whether `folder-stats` applies to this run: Rein shows the inputs' counts before the
    /// first step.
    pub(super) fn counts_shown(&self) -> bool {
        self.options.levers.folder_stats
            && folder_facts_plan(self.env.contract, &self.tools()).is_ok()
    }

    /// Lever `folder-stats`: Rein's `folder_stats` call on the folder the inputs share, through
    /// the gate, as turns for the transcript's head, each figure a check counts otherwise
    /// withheld; its figures are kept to repeat after each step ([`restated_figures`]).
    pub(super) fn folder_stats_calls(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<Vec<ChatMessage>, AgentError> {
        let params = match folder_facts_plan(self.env.contract, &self.tools()) {
            Ok(params) => params,
            Err(reason) => {
                self.env.journal.append_event(
                    Some(self.env.run),
                    "folder_stats",
                    &json!({"calls": [], "not_applied": reason}),
                )?;
                return Ok(Vec::new());
            }
        };
        let id = self.rein_call_id("folder-stats", 0);
        let origin = (FOLDER_STATS_THOUGHT, Lever::FolderStats);
        let mut report = self.call_for_model(st, on_event, &id, FOLDER_STATS, &params, origin)?;
        let withheld = if report.outcome.ran() {
            // Lever `asked-counts`: the journal's step (above) keeps the whole result.
            if self.options.levers.asked_counts {
                report.result = keep_asked(&report.result, asked_kinds(self.env.contract));
            }
            st.folder_figures = if self.options.levers.plain_counts {
                restated_plain_counts(&report.result)
            } else {
                restated_figures(&report.result)
            };
            std::mem::take(&mut st.folder_withheld)
        } else {
            Default::default()
        };
        self.env.journal.append_event(
            Some(self.env.run),
            "folder_stats",
            &json!({
                "calls": [params],
                "outcome": report.outcome.as_str(),
                "withheld": withheld.paths,
                "withheld_totals": withheld.totals,
            }),
        )?;
        let call = ChatMessage::assistant(action_text(
            "Count the files, lines and rows under the inputs' folder before reading them.",
            FOLDER_STATS,
            &params.to_string(),
        ));
        let label = "Result of Rein's folder_stats call (made for you before your first step; copy its numbers, and which files the task means is yours to decide)";
        let words = self
            .options
            .levers
            .plain_counts
            .then(|| first_plain_counts(&report.result))
            .flatten();
        st.folder_words.clone_from(&words);
        let shown = match words {
            Some(text) => labelled_text(label, &report, Some(&text)),
            None => labelled_result(label, &report),
        };
        Ok(vec![call, ChatMessage::user(shown)])
    }
}
