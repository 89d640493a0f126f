//! What Rein does for the model before its first step: `inputs-first`'s reads, `stats-first`'s
//! reads and `table_stats` calls, `task-search`'s searches and `folder-stats`' count.

use super::*;

/// The share of the prompt budget the first prompt may take with `stats-first`'s reads and
/// calls; past it Rein makes none of them and the model makes its own.
const REIN_TURNS_MAX_PERCENT: u32 = 70;

/// About the characters of one `stats-first` call and its result in the prompt.
const STATS_TURN_CHARS: usize = 500;
/// About how many more characters a call's turn takes with lever `named-rows` (the rows that
/// hold a largest figure, or each group's figure).
const NAMED_ROWS_TURN_CHARS: usize = 300;

/// The thought the journal shows for a read Rein made for the model (lever `inputs-first`).
const INPUTS_FIRST_THOUGHT: &str =
    "Rein read this input for the model before its first step (lever inputs-first)";

/// The thought the journal shows for a read of a table Rein made for the model before its
/// figures (lever `stats-first`).
const STATS_FIRST_READ_THOUGHT: &str =
    "Rein read this table for the model before its figures (lever stats-first)";

/// The thought the journal shows for a `table_stats` call Rein made for the model (lever
/// `stats-first`).
const STATS_FIRST_THOUGHT: &str =
    "Rein computed this table figure for the model before its first step (lever stats-first)";

impl<'a> Agent<'a> {
    /// Levers `inputs-first` and `stats-first`: before the first step Rein reads the mission's
    /// input files and makes the `table_stats` calls the contract's table figures name, through
    /// the gate, journals each call as its own, and the transcript starts with the calls and
    /// their results. Where a lever does not apply, the journal says why and the model makes the
    /// calls itself.
    pub(super) fn calls_before_first_step(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<(), AgentError> {
        if self.options.memory {
            return Ok(());
        }
        let mut turns = Vec::new();
        if self.options.levers.inputs_first {
            turns.extend(self.inputs_first_reads(st, on_event)?);
        }
        if self.options.levers.stats_first {
            let more = self.stats_first_calls(st, on_event, &turns)?;
            turns.extend(more);
        }
        if self.options.levers.task_search {
            turns.extend(self.task_search_calls(st, on_event)?);
        }
        if self.options.levers.folder_stats {
            turns.extend(self.folder_stats_calls(st, on_event)?);
        }
        if let Some(last) = turns.last_mut() {
            let progress = progress_note(
                self.env.contract,
                &st.trace,
                self.deliverable_writer(),
                &self.tools(),
                self.find_inputs_note(),
                false,
                self.reads_globs(),
            );
            last.content.push('\n');
            last.content.push_str(&progress);
        }
        for turn in turns {
            st.transcript.push_head(turn);
        }
        Ok(())
    }

    /// Lever `inputs-first`: Rein's reads of the inputs, as turns for the transcript's head.
    pub(super) fn inputs_first_reads(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<Vec<ChatMessage>, AgentError> {
        let files = match files_to_read(self.env.contract, self.env.world, &self.tools()) {
            Ok(files) => files,
            Err(reason) => {
                self.env.journal.append_event(
                    Some(self.env.run),
                    "inputs_first",
                    &json!({"read": [], "not_applied": reason}),
                )?;
                return Ok(Vec::new());
            }
        };
        let reads = self.reads_for_model(
            st,
            on_event,
            &files,
            "read",
            INPUTS_FIRST_THOUGHT,
            Lever::InputsFirst,
        )?;
        self.env.journal.append_event(
            Some(self.env.run),
            "inputs_first",
            &json!({"read": files}),
        )?;
        Ok(read_turns(&reads))
    }

    /// Lever `stats-first`: Rein's reads of the tables and its `table_stats` calls, as turns
    /// for the transcript's head (a call whose figure the judge would not accept is made and
    /// journaled, not shown).
    /// `before` are the head's turns so far (`inputs-first`'s).
    pub(super) fn stats_first_calls(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
        before: &[ChatMessage],
    ) -> Result<Vec<ChatMessage>, AgentError> {
        let tools = self.tools();
        let named_rows = self.options.levers.named_rows;
        let planned = stats_calls(self.env.contract, &tools, named_rows).and_then(|planned| {
            let tables = tables_to_read(&planned, self.env.world, &st.trace, &tools);
            self.room_for(st, before, &planned, tables.chars)?;
            Ok((planned, tables))
        });
        let (
            mut planned,
            TablesToRead {
                read: tables,
                left: unread,
                ..
            },
        ) = match planned {
            Ok(planned) => planned,
            Err(reason) => {
                self.env.journal.append_event(
                    Some(self.env.run),
                    "stats_first",
                    &json!({"calls": [], "not_applied": reason}),
                )?;
                return Ok(Vec::new());
            }
        };
        planned.left.extend(unread);
        let reads = self.reads_for_model(
            st,
            on_event,
            &tables,
            "table",
            STATS_FIRST_READ_THOUGHT,
            Lever::StatsFirst,
        )?;
        let mut made = Vec::new();
        let mut withheld = Vec::new();
        let mut shown = Vec::new();
        for (i, call) in planned.calls.into_iter().enumerate() {
            let id = self.rein_call_id("stats", i);
            let origin = (STATS_FIRST_THOUGHT, Lever::StatsFirst);
            let report =
                self.call_for_model(st, on_event, &id, "table_stats", &call.params, origin)?;
            made.push(call.params.clone());
            match withheld_because(self.env.contract, self.env.world, &call, &report) {
                Some(why) => withheld.push(json!({"call": call.params, "why": why})),
                None => shown.push((call, report)),
            }
        }
        self.env.journal.append_event(
            Some(self.env.run),
            "stats_first",
            &json!({"read": tables, "calls": made, "withheld": withheld, "left": planned.left}),
        )?;
        let mut turns = read_turns(&reads);
        turns.extend(stats_turns(&shown, self.options.levers.named_rows));
        Ok(turns)
    }

    /// Whether the first prompt has room for `stats-first`'s reads and calls: its head, the
    /// turns `before`, the tables' text and about [`STATS_TURN_CHARS`] per call within
    /// [`REIN_TURNS_MAX_PERCENT`] of the prompt budget. They sit in the head, which is never
    /// trimmed: the 1.5B's first prompt on report-sales-regions with them was 6,627 tokens,
    /// over the 6,144-token window, and the run ended before its first step. Decided before any
    /// call, so the trace never holds a read the model was not shown.
    pub(super) fn room_for(
        &self,
        st: &State,
        before: &[ChatMessage],
        planned: &Planned,
        table_chars: usize,
    ) -> Result<(), String> {
        let mut prompt = st.transcript.messages();
        prompt.extend(before.iter().cloned());
        // Only a call that shows groups or rows takes `named-rows`' extra room: counted on
        // every call, report-sales-regions' five filtered sums (no group, no rows) came to 5,422
        // tokens against 5,320 at 8,192 tokens, and the 1.5B summed the regions itself.
        let calls_chars: usize = planned
            .calls
            .iter()
            .map(|c| {
                STATS_TURN_CHARS
                    + if c.shows_rows() {
                        NAMED_ROWS_TURN_CHARS
                    } else {
                        0
                    }
            })
            .sum();
        let chars = calls_chars + table_chars;
        prompt.push(ChatMessage::user("x".repeat(chars)));
        let needed = st.transcript.estimate_of(&prompt);
        let limit =
            prompt_budget(self.context_tokens(), MAX_REPLY_TOKENS) / 100 * REIN_TURNS_MAX_PERCENT;
        if needed > limit {
            return Err(format!(
                "no room: the first prompt would take about {needed} tokens with the tables and the calls, more than {limit} ({REIN_TURNS_MAX_PERCENT} % of the prompt budget); the model makes them itself"
            ));
        }
        Ok(())
    }

    /// Rein's whole reads of `files` for the model, each through [`Self::call_for_model`] with
    /// the call id of [`Self::rein_call_id`].
    pub(super) fn reads_for_model(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
        files: &[String],
        kind: &str,
        thought: &str,
        lever: Lever,
    ) -> Result<Vec<(String, GateReport)>, AgentError> {
        let mut reads = Vec::new();
        for (i, path) in files.iter().enumerate() {
            let id = self.rein_call_id(kind, i);
            let params = json!({ "path": path });
            let report =
                self.call_for_model(st, on_event, &id, "read_file", &params, (thought, lever))?;
            reads.push((path.clone(), report));
        }
        Ok(reads)
    }

    /// The call id of the `i`th (from 0) call of one `kind` Rein makes for the model:
    /// `run<N>-rein-<kind><i + 1>`.
    pub(super) fn rein_call_id(&self, kind: &str, i: usize) -> String {
        format!("run{}-rein-{kind}{}", self.env.run, i + 1)
    }

    /// One call Rein makes for the model (before its first step, or `auto-finish`'s finish):
    /// through the gate, on the trace as Rein's, journaled and reported as a step of its own
    /// (step 0: no model step was spent on it).
    pub(super) fn call_for_model(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
        call_id: &str,
        tool: &str,
        params: &Value,
        (thought, lever): (&str, Lever),
    ) -> Result<GateReport, AgentError> {
        let started = Instant::now();
        let mut report = self.submit(call_id, tool, params);
        self.prepare_read_result(st, tool, &mut report);
        let path = params.get("path").and_then(Value::as_str);
        let entry = self.trace_entry(tool, path, &report, false).by_rein();
        st.trace.push(entry);
        let summary = summarize(tool, params, &report);
        let ev = StepEvent {
            step: 0,
            attempt: st.attempt.max(1),
            kind: StepKind::Action.to_string(),
            thought: Some(thought.into()),
            action: Some(tool.into()),
            parameters: Some(params.clone()),
            call_id: Some(call_id.to_string()),
            outcome: report.outcome.as_str().into(),
            summary: summary.clone(),
            repaired: false,
            prompt_tokens: 0,
            cached_tokens: 0,
            completion_tokens: 0,
            elapsed_ms: started.elapsed().as_millis() as u64,
        };
        let mut detail = step_detail(params, &report, &summary);
        detail["by"] = json!("rein");
        detail["lever"] = json!(lever.name());
        self.record(st, StepKind::Action, &ev, None, detail)?;
        on_event(&AgentEvent::Step(ev));
        Ok(report)
    }
}
