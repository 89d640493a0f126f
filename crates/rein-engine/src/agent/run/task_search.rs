//! Lever `task-search`: the searches of the task's words Rein makes before the first step (see
//! [`crate::agent::task_search`]).

use super::*;
use crate::agent::prompt::labelled_result;
use crate::agent::task_search::{
    after_search, search_params, task_search_plan, AfterSearch, TASK_SEARCHES_MAX,
};

/// The thought the journal shows for a search Rein made for the model before its first step.
const TASK_SEARCH_THOUGHT: &str =
    "Rein searched the inputs for the task's words before the model's first step (lever task-search)";

impl<'a> Agent<'a> {
    /// Lever `task-search`: Rein's searches of the task's words, through the gate, as turns for
    /// the transcript's head (a search that named too many lines is shown as a count).
    pub(super) fn task_search_calls(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<Vec<ChatMessage>, AgentError> {
        let (folder, mut words) = match task_search_plan(self.env.contract, &self.tools()) {
            Ok(plan) => plan,
            Err(reason) => {
                self.env.journal.append_event(
                    Some(self.env.run),
                    "task_search",
                    &json!({"calls": [], "not_applied": reason}),
                )?;
                return Ok(Vec::new());
            }
        };
        let mut turns = Vec::new();
        let mut made = Vec::new();
        let mut shown = false;
        let mut stopped = None;
        for i in 0..TASK_SEARCHES_MAX {
            let params = search_params(&folder, &words);
            let id = self.rein_call_id("task-search", i);
            let origin = (TASK_SEARCH_THOUGHT, Lever::TaskSearch);
            let report = self.call_for_model(st, on_event, &id, "search_text", &params, origin)?;
            made.push(params.clone());
            let thought = if i == 0 {
                format!(
                    "Search the inputs for the words of the task: {}.",
                    quoted(&words)
                )
            } else {
                format!(
                    "Search again for the words of the task that few files hold: {}.",
                    quoted(&words)
                )
            };
            turns.push(ChatMessage::assistant(action_text(
                &thought,
                "search_text",
                &params.to_string(),
            )));
            let label = format!(
                "Result of Rein's search {} (search_text, made for you before your first step with the task's own words; which files matter is yours to decide)",
                i + 1
            );
            let next = if report.outcome.ran() {
                after_search(&words, &report.result)
            } else {
                AfterSearch::Show
            };
            let next = match next {
                AfterSearch::Narrow(_) if i + 1 == TASK_SEARCHES_MAX => AfterSearch::Stop(
                    "Rein made as many searches as it makes before your first step".into(),
                ),
                next => next,
            };
            let named = named_lines(&report.result);
            let none_matched = report
                .result
                .get("matches")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty);
            // A search whose lines the model is not shown named it no file to read: the
            // progress note does not count it as the run's search.
            if let Some(entry) = st.trace.last_mut() {
                entry.lines_unseen = next != AfterSearch::Show || none_matched;
            }
            match next {
                AfterSearch::Show => {
                    turns.push(ChatMessage::user(labelled_result(&label, &report)));
                    shown = true;
                    break;
                }
                AfterSearch::Narrow(fewer) => {
                    turns.push(ChatMessage::user(format!(
                        "{label}: {named}, not shown: most of them lines of words many of the files hold. Rein searched again for the words that few files hold: {}.",
                        quoted(&fewer)
                    )));
                    words = fewer;
                }
                AfterSearch::Stop(why) => {
                    turns.push(ChatMessage::user(format!(
                        "{label}: {named}, too many to show here ({why}). Search with a rarer word of the task yourself."
                    )));
                    stopped = Some(why);
                    break;
                }
            }
        }
        self.env.journal.append_event(
            Some(self.env.run),
            "task_search",
            &json!({"calls": made, "words": words, "shown": shown, "stopped": stopped}),
        )?;
        Ok(turns)
    }
}

/// How many lines in how many files a search named, in words (`100 lines in 22 files, cut at
/// the tool's cap`).
fn named_lines(result: &Value) -> String {
    let matches = result
        .get("matches")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut files: Vec<&str> = matches
        .iter()
        .filter_map(|m| m.get("path").and_then(Value::as_str))
        .collect();
    files.sort_unstable();
    files.dedup();
    let cut = if result.get("truncated").and_then(Value::as_bool) == Some(false) {
        ""
    } else {
        ", cut at the tool's cap"
    };
    format!("{} lines in {} files{cut}", matches.len(), files.len())
}

/// `words` each in double quotes, comma-separated, as the model is shown them.
fn quoted(words: &[String]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    quoted.join(", ")
}
