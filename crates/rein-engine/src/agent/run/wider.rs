//! Lever `wider-search`: after a `search_text` call of the model's that matched no line, the
//! wider searches Rein makes for it (see [`crate::agent::wider_search`]).

use super::*;
use crate::agent::prompt::labelled_result;
use crate::agent::wider_search::wider_search;

/// The thought the journal shows for a search Rein made again for the model.
const WIDER_SEARCH_THOUGHT: &str =
    "Rein searched again for the model: its search matched no line (lever wider-search)";

/// Most wider searches after one call of the model's: the glob dropped, then the words.
const WIDER_SEARCHES_PER_CALL: usize = 2;

impl<'a> Agent<'a> {
    /// The wider searches after the model's `search_text` call with `params` that gave
    /// `report`, each through the gate as Rein's call, and the text that shows them to the
    /// model after its own result (empty when the lever is off or nothing was widened).
    pub(super) fn search_wider(
        &mut self,
        st: &mut State,
        params: &Value,
        report: &GateReport,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<String, AgentError> {
        if !self.options.levers.wider_search || self.options.memory || !report.outcome.ran() {
            return Ok(String::new());
        }
        let mut shown = String::new();
        let (mut params, mut result) = (params.clone(), report.result.clone());
        for _ in 0..WIDER_SEARCHES_PER_CALL {
            let Some(wider) = wider_search(&params, &result) else {
                break;
            };
            let made = st
                .trace
                .iter()
                .filter(|e| e.by_rein && e.tool == "search_text")
                .count();
            let id = self.rein_call_id("search", made);
            let origin = (WIDER_SEARCH_THOUGHT, Lever::WiderSearch);
            let report =
                self.call_for_model(st, on_event, &id, "search_text", &wider.params, origin)?;
            shown.push_str(&format!(
                "\nNothing matched, so Rein searched again for you (lever wider-search): {}. Its call: {}\n{}",
                wider.why,
                wider.params,
                labelled_result("Result of Rein's search", &report)
            ));
            // Rein's own words search is not split again (its escaped `2025\-03\-14` would
            // give `2025`, a widening no one asked for).
            if !report.outcome.ran() || wider.by_words {
                break;
            }
            (params, result) = (wider.params, report.result);
        }
        Ok(shown)
    }
}
