//! One step: the plan, the model's action through the gate, and what the transcript keeps.

use super::*;
use crate::repair::FormatError;

impl<'a> Agent<'a> {
    /// The plan phase: one reply, a list of at most `max_plan_steps` steps.
    pub(super) fn plan(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<Option<RunEnd>, AgentError> {
        if let Some(end) = self.stop_for_caps(st, on_event)? {
            return Ok(Some(end));
        }
        st.figures.steps += 1;
        let started = Instant::now();
        let made = make_plan(
            self.model,
            st.transcript.messages(),
            self.options.limits.max_plan_steps,
            self.options.constrained,
            self.options.seed,
        );
        let plan = match made {
            Ok(p) => p,
            Err(e) => {
                return Ok(Some(RunEnd::ModelFailed {
                    message: e.to_string(),
                }))
            }
        };
        add_tokens(&mut st.figures, &plan.completion);
        let mut step = NewStep::new(StepKind::Note);
        step.attempt = st.attempt_id;
        step.reply = Some(plan.raw.clone());
        step.detail = json!({"plan": plan.steps, "proposed": plan.proposed});
        step.prompt_tokens = Some(plan.completion.prompt_tokens);
        step.completion_tokens = Some(plan.completion.completion_tokens);
        step.elapsed_ms = Some(started.elapsed().as_millis() as u64);
        self.env.journal.append_step(self.env.run, &step)?;
        if plan.steps.is_empty() {
            st.figures.format_errors += 1;
        }
        if plan.proposed > self.options.limits.max_plan_steps {
            let hit = CapHit::PlanSteps {
                limit: self.options.limits.max_plan_steps,
                proposed: plan.proposed,
            };
            self.cap(st, &hit, on_event)?;
        }
        on_event(&AgentEvent::Plan {
            steps: plan.steps.clone(),
        });
        if !plan.steps.is_empty() {
            let text: Vec<String> = plan
                .steps
                .iter()
                .enumerate()
                .map(|(i, s)| format!("{}. {s}", i + 1))
                .collect();
            st.transcript.push_head(ChatMessage::user(format!(
                "Your plan (for reference; act one tool call at a time):\n{}",
                text.join("\n")
            )));
        }
        Ok(None)
    }

    /// Steps until finish is accepted (`None`) or the run must stop.
    pub(super) fn act(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<Option<RunEnd>, AgentError> {
        // What the backend has to say before the first request (a remote endpoint's host).
        self.model_notices(on_event)?;
        let budget = prompt_budget(self.context_tokens(), MAX_REPLY_TOKENS);
        loop {
            if let Some(end) = self.stop_for_caps(st, on_event)? {
                return Ok(Some(end));
            }
            // Lever `change-list`: the list is a step of its own, then the caps are looked at
            // again.
            if self.lists_changes_now(st) {
                st.figures.trimmed_steps += st.transcript.fit(budget) as u32;
                self.clip_to_fit(st, budget)?;
                self.ask_change_list(st, on_event)?;
                continue;
            }
            // Per step: what decoding offers follows the workspace (see `offered_tools`), and
            // is `finish` alone once the work is done (`finish-when-met`).
            // ... and never offers `finish` on the very bytes a failed verdict judged
            // (`change-before-finish`).
            let withheld = self.unchanged_failure(st).is_some();
            let rules_ready = !withheld && self.finish_rules_ready(st);
            if rules_ready {
                self.hold_total_before_finish(st)?;
            }
            let ready = rules_ready && !self.total_pending(st);
            if self.auto_finish(st, ready, on_event)? {
                return Ok(None);
            }
            let tools = if ready {
                vec!["finish".to_string()]
            } else {
                without_finish_if(withheld, self.offered_tools())
            };
            st.figures.trimmed_steps += st.transcript.fit(budget) as u32;
            self.clip_to_fit(st, budget)?;
            st.figures.steps += 1;
            let n = st.figures.steps;
            if self.options.constrained {
                self.hold_copied_strings(st, n)?;
            }
            self.hold_no_paste(st, n)?;
            let schema = self
                .options
                .constrained
                .then(|| self.action_schema(&tools, false, &st.held, None));
            let short_schema = schema
                .as_ref()
                .filter(|_| self.options.levers.short_after_cut)
                .map(|_| {
                    self.action_schema(
                        &tools,
                        true,
                        &st.held,
                        st.cut_list.as_ref().map(|l| l.items),
                    )
                });
            let started = Instant::now();
            let sampling = self.action_sampling();
            let messages = st.transcript.messages();
            let estimate = estimate_tokens(&messages);
            let schema = match &short_schema {
                Some(short) if st.last_reply_cut => Some(short),
                _ => schema.as_ref(),
            };
            let asked = ask_action(
                self.model,
                messages,
                AskWith {
                    schema,
                    sampling,
                    seed: self.options.seed,
                    no_paste: st.no_paste.as_ref(),
                },
                &mut |_| {},
            );
            self.model_notices(on_event)?;
            let asked = match asked {
                Ok(a) => {
                    st.transcript
                        .calibrate(estimate, a.completion.prompt_tokens);
                    a
                }
                Err(e) => {
                    // The estimate was short: learn the model's count, trim, and ask again.
                    // Each retry trims at least one step, so this ends; when nothing is left
                    // to trim the failure stands.
                    if let ModelError::PromptTooLong { tokens, .. } = e {
                        let trimmed = st.transcript.fit_after_overflow(estimate, tokens, budget);
                        if trimmed > 0 || self.clip_to_fit(st, budget)? {
                            st.figures.trimmed_steps += trimmed as u32;
                            st.figures.steps -= 1;
                            continue;
                        }
                    }
                    let message = e.to_string();
                    let mut step = NewStep::new(StepKind::Note);
                    step.attempt = st.attempt_id;
                    step.detail = json!({"model_error": message});
                    step.elapsed_ms = Some(started.elapsed().as_millis() as u64);
                    self.env.journal.append_step(self.env.run, &step)?;
                    return Ok(Some(RunEnd::ModelFailed { message }));
                }
            };
            add_tokens(&mut st.figures, &asked.completion);
            if ready && self.options.constrained {
                self.env.journal.append_event(
                    Some(self.env.run),
                    "finish_when_met",
                    &json!({"step": n, "attempt": st.attempt}),
                )?;
            }
            let asked = if self.options.levers.repeat_escape {
                self.escape_repeat(st, n, asked, schema, &tools)?
            } else {
                asked
            };
            let asked = self.sample_write(st, n, asked, schema, on_event)?;
            st.last_reply_cut = matches!(&asked.reply, Reply::FormatError(e) if e.cut_at.is_some());
            st.cut_list = st.last_reply_cut.then(|| looped_list(&asked.raw)).flatten();
            match self.step(st, n, &asked, started, on_event)? {
                StepEnd::Continue => {}
                StepEnd::FinishAccepted => return Ok(None),
                StepEnd::Stop(end) => return Ok(Some(end)),
            }
        }
    }

    /// Journals and reports what the model backend has to say (a restarted worker).
    pub(super) fn model_notices(
        &mut self,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<(), AgentError> {
        for message in self.model.take_notices() {
            self.env.journal.append_event(
                Some(self.env.run),
                "model_notice",
                &json!({ "message": message }),
            )?;
            on_event(&AgentEvent::ModelNotice { message });
        }
        Ok(())
    }

    /// One reply: a format error, or an action sent through the gate (or refused before it).
    pub(super) fn step(
        &mut self,
        st: &mut State,
        n: u32,
        asked: &Asked,
        started: Instant,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<StepEnd, AgentError> {
        let (action, repairs) = match &asked.reply {
            Reply::FormatError(e) => {
                return self.format_error_step(st, n, asked, e, started, on_event)
            }
            Reply::Action { action, repairs } => (action, repairs),
        };
        if !repairs.is_empty() {
            st.figures.repaired += 1;
        }
        let tool = action.action.clone();
        let params = Value::Object(action.parameters.clone());
        let call_id = format!("run{}-step{n}", self.env.run);
        let tools = self.tools();
        let known = tools.contains(&tool) && self.env.registry.get(self.gate_tool(&tool)).is_some();
        let mut kind = StepKind::Action;
        let mut accepted = false;
        let mut holds = Holds::default();
        let mut stop: Option<RunEnd> = None;
        let (typed_refusal, gate_args) = match known
            .then(|| self.typed_arguments(&tool, &params))
            .flatten()
        {
            Some(Err(reason)) => (Some(reason), None),
            Some(Ok(args)) => (None, Some(args)),
            None => (None, None),
        };
        // Lever `whole-reads`: a line range of a short file runs as a read of the whole file.
        let widened = known
            .then(|| self.widened_read(st, &tool, &params))
            .flatten();
        let gate_args = gate_args.or_else(|| widened.as_ref().map(|w| (w.args.clone(), None)));
        // Lever `glob-reads`: a glob or a folder to read runs as find_files, then Rein's reads.
        let globbed = known.then(|| self.glob_read(&tool, &params)).flatten();
        // The tool that ran for the model's call, as the trace and the model's result name it.
        let ran_tool = if globbed.is_some() {
            "find_files"
        } else {
            tool.as_str()
        };
        let mut report = if !known {
            st.figures.unknown_tools += 1;
            kind = StepKind::Refusal;
            let reason = format!(
                "unknown tool \"{tool}\"; this mission's tools are: {}",
                tools.join(", ")
            );
            if self.options.bench {
                stop = Some(RunEnd::UnknownTool {
                    message: format!(
                        "the model called {reason}; a bench run stops at an unknown tool"
                    ),
                });
            }
            GateReport {
                outcome: GateOutcome::Invalid,
                reason,
                result: Value::Null,
            }
        } else if let Some(reason) = over_long_summary(&tool, &params) {
            GateReport {
                outcome: GateOutcome::Invalid,
                reason,
                result: Value::Null,
            }
        } else if let Some((at, chars)) = input_over_cap(&params, "parameters") {
            kind = StepKind::Cap;
            let hit = CapHit::InputChars {
                limit: MAX_INPUT_CHARS,
                chars,
                what: format!("`{at}` of {tool}"),
            };
            self.announce_cap(&hit, on_event)?;
            GateReport {
                outcome: GateOutcome::Invalid,
                reason: format!("{}; split it into smaller pieces", hit.message()),
                result: Value::Null,
            }
        } else if let Some(reason) = typed_refusal {
            GateReport {
                outcome: GateOutcome::Invalid,
                reason,
                result: Value::Null,
            }
        } else if let Some(reason) = self.read_cited_hold(
            st,
            &tool,
            &params,
            gate_args.as_ref().map_or(&params, |(args, _)| args),
            n,
        )? {
            kind = StepKind::Refusal;
            holds.read = true;
            GateReport {
                outcome: GateOutcome::Invalid,
                reason,
                result: Value::Null,
            }
        } else if let Some(reason) = self.echo_hold(
            st,
            &tool,
            gate_args.as_ref().map_or(&params, |(args, _)| args),
            n,
        )? {
            kind = StepKind::Refusal;
            GateReport {
                outcome: GateOutcome::Invalid,
                reason,
                result: Value::Null,
            }
        } else if tool == "finish" {
            match self.finish_refusal(st, n, &mut holds)? {
                Some(reason) => {
                    kind = StepKind::Refusal;
                    self.refuse_finish(st, n, reason, on_event)?
                }
                None => {
                    let report = self.submit(&call_id, &tool, &params);
                    accepted = report.outcome.ran();
                    report
                }
            }
        } else if self.options.memory && tool == "final_answer" {
            // No finish rules: the answer ends the attempt and proves nothing by itself.
            let report = self.submit(&call_id, &tool, &params);
            accepted = report.outcome.ran();
            report
        } else if let Some(glob) = &globbed {
            self.submit(&call_id, "find_files", &glob.find_args)
        } else if let Some((args, note)) = gate_args {
            let mut report = self.submit(&call_id, self.gate_tool(&tool), &args);
            if let Some(note) = note.filter(|_| report.outcome == GateOutcome::Executed) {
                report.reason = joined_reasons(&report.reason, &note);
            }
            report
        } else {
            self.submit(&call_id, &tool, &params)
        };
        if accepted {
            on_event(&AgentEvent::FinishAccepted { step: n });
        }
        if self.rewrites_whole() {
            report.reason = without_edit_advice(&report.reason);
        } else if self.edits_lines() {
            report.reason = with_line_advice(&report.reason);
        }
        let tables_before = self.combines_tables().then(|| st.shown_tables.clone());
        self.prepare_read_result(st, ran_tool, &mut report);
        if let Some(read) = &widened {
            self.settle_widened_read(st, read, &mut report);
        }
        if let Some(glob) = &globbed {
            self.say_glob_ran(glob, &mut report);
        }
        let writes = self.call_writes(&tool);
        if self.options.levers.document_facts && !self.options.memory && writes {
            add_document_facts(
                self.env.world,
                &self.env.contract.mission.required_artifact,
                trace_target(&tool, &params),
                &mut report,
            );
        }
        if report.outcome == GateOutcome::ApprovalRequired {
            stop = Some(RunEnd::ApprovalUnavailable {
                message: format!(
                    "{tool} needs a person's approval and none could be asked ({}); run `rein run` in a terminal, or with --approve=all in an empty workspace",
                    report.reason
                ),
            });
        }
        let path = trace_target(&tool, &params);
        let mutates = self
            .env
            .registry
            .get(self.gate_tool(&tool))
            .is_none_or(|t| t.mutates());
        let repeated = st
            .calls
            .iter()
            .find(|(t, p, _)| {
                *t == tool && (*p == params || widened.as_ref().is_some_and(|w| *p == w.args))
                    // Another spelling of a glob already read (`notes`, `./notes/`) lists
                    // and reads the same files.
                    || *t == glob_reads::GLOB_CALL && globbed.as_ref().is_some_and(|g| *p == g.find_args)
            })
            .map(|(_, _, step)| *step)
            .filter(|_| !(tool == "finish" && st.finish_is_new()));
        if !holds.read {
            st.calls.push((tool.clone(), params.clone(), n));
        }
        // A widened read is the whole-file read that ran: another range of the same file, or
        // the whole-file call itself, repeats it.
        if let Some(read) = widened.as_ref().filter(|_| report.outcome.ran()) {
            st.calls.push((tool.clone(), read.args.clone(), n));
        }
        if let Some(glob) = globbed.as_ref().filter(|_| report.outcome.ran()) {
            st.calls
                .push((glob_reads::GLOB_CALL.to_string(), glob.find_args.clone(), n));
        }
        if report.outcome == GateOutcome::Executed && mutates {
            if let Some(change) = report.result.get("change_id").and_then(Value::as_i64) {
                st.attempt_changes
                    .push((ChangeId(change), path.unwrap_or_default().to_string()));
            }
        }
        let refused_finish = kind == StepKind::Refusal;
        st.stalled = if holds.any() {
            st.stalled
        } else if repeated.is_some() || refused_finish || !report.outcome.ran() {
            // A call that did not run (refused, failed, invalid) moves nothing forward either:
            // the 1.5B read a file past its end one range at a time for 35 turns, each call new.
            st.stalled + 1
        } else {
            0
        };
        let ran_path = globbed
            .as_ref()
            .map_or(path, |glob| glob.find_args["path"].as_str());
        let mut entry = self.trace_entry(ran_tool, ran_path, &report, mutates);
        let shown_back = self.show_back(&entry);
        entry.shown_back = shown_back.is_some();
        let pinned = self.pinned_input(&entry);
        let trace_from = st.trace.len();
        st.trace.push(entry);
        let summary = summarize(&tool, &params, &report);
        let ev = StepEvent {
            step: n,
            attempt: st.attempt,
            kind: kind.to_string(),
            thought: action.thought.clone(),
            action: Some(tool.clone()),
            parameters: Some(params.clone()),
            call_id: Some(call_id),
            outcome: report.outcome.as_str().into(),
            summary: summary.clone(),
            repaired: !repairs.is_empty(),
            prompt_tokens: asked.completion.prompt_tokens,
            cached_tokens: asked.completion.cached_tokens,
            completion_tokens: asked.completion.completion_tokens,
            elapsed_ms: started.elapsed().as_millis() as u64,
        };
        let mut detail = step_detail(&params, &report, &summary);
        detail["repairs"] = json!(repairs);
        detail["cached_tokens"] = json!(asked.completion.cached_tokens);
        self.record(st, kind, &ev, Some(&asked.raw), detail)?;
        on_event(&AgentEvent::Step(ev));
        let mut feedback = result_message(n, ran_tool, &report);
        if let Some(shown) = shown_back {
            feedback.push('\n');
            feedback.push_str(&shown);
        }
        if tool == "search_text" {
            feedback.push_str(&self.search_wider(st, &params, &report, on_event)?);
        }
        let mut pins: Vec<String> = pinned.into_iter().collect();
        if let Some(glob) = &globbed {
            let reads = self.glob_reads(st, glob, &report, on_event)?;
            feedback.push_str(&reads.shown);
            pins.extend(reads.pinned);
        }
        // Rein's own wording in the step's result, which lever `no-echo` holds a paste of.
        let mut rein_said: Vec<String> = Vec::new();
        if holds.read {
            rein_said.push(report.reason.clone());
            // Lever `cited-reads`: the inputs the held write named, read for the model.
            let (reads, note) = self.cited_reads(st, on_event)?;
            feedback.push_str(&reads.shown);
            pins.extend(reads.pinned);
            rein_said.push(note);
        }
        // Lever `file-notes`: asked on the step's result as the model reads it so far, the same
        // prefix as the next step's prompt.
        self.note_files(st, trace_from, &asked.raw, &feedback, on_event)?;
        // Lever `combined-totals`: only after a step whose reads showed a table.
        if tables_before.is_some_and(|before| before != st.shown_tables) {
            let note = self.combined_figures(&st.trace, &st.shown_tables, &mut st.combined_given);
            feedback.push_str(&note);
        }
        if let Some(earlier) = repeated {
            // Small models loop on one call; say so plainly (a hint: the call still ran).
            feedback.push_str(&format!(
                "\nYou made exactly this call already at step {earlier}; its result is above. Do the next thing instead."
            ));
        }
        // Lever `read-cited`: the model's own held write, which `no-echo` lets it send again.
        // Not pinned (lever `keep-inputs`): a later attempt would be told to send a stale call.
        let given_back = self.held_draft_back(st, n)?;
        if !given_back.text.is_empty() {
            feedback.push_str(&given_back.text);
            pins.clear();
        }
        rein_said.extend(given_back.rein_words);
        // The model's own notes, not Rein's words (lever `no-echo` lets a write copy them).
        feedback.push_str(&self.file_notes_message(st));
        let notes_from = feedback.len();
        if !self.options.memory {
            feedback.push('\n');
            feedback.push_str(&self.progress_after(st, &tool, refused_finish, holds));
        }
        feedback.push_str(&self.notes_after_progress(st));
        st.rein_notes = feedback[notes_from..].to_string();
        // The words around the model's notes are Rein's (lever `file-notes`), the notes not.
        if let Some(frame) = st.file_notes_shown.trim_start().lines().next() {
            st.rein_notes.push('\n');
            st.rein_notes.push_str(frame);
        }
        for words in rein_said.iter().filter(|w| !w.is_empty()) {
            st.rein_notes.push('\n');
            st.rein_notes.push_str(words);
        }
        let messages = vec![
            ChatMessage::assistant(asked.raw.clone()),
            ChatMessage::user(feedback),
        ];
        let record = format!("step {n}: {tool} {} -> {}", path.unwrap_or(""), summary);
        if pins.is_empty() {
            st.transcript.push(messages, record);
        } else {
            st.transcript.push_pinned_all(messages, record, &pins);
        }
        Ok(match (stop, accepted) {
            (Some(end), _) => StepEnd::Stop(end),
            (None, true) => StepEnd::FinishAccepted,
            (None, false) => StepEnd::Continue,
        })
    }

    /// A reply no action could be read from: counted, journaled, and told back to the model
    /// with what to do about it (a shorter call after a cut reply).
    fn format_error_step(
        &mut self,
        st: &mut State,
        n: u32,
        asked: &Asked,
        e: &FormatError,
        started: Instant,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<StepEnd, AgentError> {
        st.figures.format_errors += 1;
        // A reply cut at the cap moves nothing forward, and the next is cut as often as not: the
        // 1.5B sent 21 in a row on explore-log-lines until the 900 s timeout (`ex21c-ask/`).
        // Other unreadable replies neither count nor reset.
        if e.cut_at.is_some() {
            st.stalled += 1;
        }
        // The generic advice (write a long file in parts with create_file) sent the
        // 1.5B from a cut write_sections call to a pasted create_file.
        let shorter = |writer: &str| match writer {
            WRITE_SECTIONS => "a few short sentences in your own words under each heading",
            _ => "only the values the document needs",
        };
        let message = match (self.cut_writer(asked), e.cut_at) {
            (Some(writer), Some(cap)) => format!(
                "Your reply was cut off at {cap} tokens, the most one reply may have, \
                 before it was complete, so nothing was done. Make the {writer} call \
                 shorter: one short sentence of thought, and {}; it writes the whole \
                 file in one call.",
                shorter(writer)
            ),
            // Edited by lines (lever `line-edits`): neither create_file nor edit_file
            // is offered, and a cut reply is most often one line repeated.
            (None, Some(cap)) if self.edits_lines() => format!(
                "Your reply was cut off at {cap} tokens, the most one reply may have, \
                 before it was complete, so nothing was done. Make the edit_lines call \
                 shorter: one short sentence of thought, one change for each line the \
                 task asks to change, each `line` copied whole from the file and \
                 `new_line` holding only the text that takes its place."
            ),
            // Written whole (lever `whole-rewrite`): no later edit can add a rest.
            (None, Some(cap)) if self.rewrites_whole() => format!(
                "Your reply was cut off at {cap} tokens, the most one reply may have, \
                 before it was complete, so nothing was done. Write the file with \
                 replace_file in one call: one short sentence of thought, then the \
                 file's whole text."
            ),
            _ => e.to_string(),
        };
        let message = match &st.cut_list {
            Some(list) => message + &loop_note(list, self.holds_looped_list()),
            None => message,
        };
        let ev = StepEvent {
            step: n,
            attempt: st.attempt,
            kind: "format_error".into(),
            thought: None,
            action: None,
            parameters: None,
            call_id: None,
            outcome: "format-error".into(),
            summary: format!("no action could be read: {}", e.detail),
            repaired: false,
            prompt_tokens: asked.completion.prompt_tokens,
            cached_tokens: asked.completion.cached_tokens,
            completion_tokens: asked.completion.completion_tokens,
            elapsed_ms: started.elapsed().as_millis() as u64,
        };
        self.record(
            st,
            StepKind::FormatError,
            &ev,
            Some(&asked.raw),
            json!({"message": message}),
        )?;
        on_event(&AgentEvent::Step(ev));
        st.transcript.push(
            vec![
                ChatMessage::assistant(asked.raw.clone()),
                ChatMessage::user(message),
            ],
            format!("step {n}: unreadable reply (format error)"),
        );
        Ok(StepEnd::Continue)
    }

    /// Why the model's finish is refused (the finish rules) or held once by a lever (in order:
    /// `change-list`, `own-totals`, `review-edits`), if it is; a hold is marked in `holds` and
    /// journaled.
    fn finish_refusal(
        &mut self,
        st: &mut State,
        n: u32,
        holds: &mut Holds,
    ) -> Result<Option<String>, AgentError> {
        let ruled = match self.unchanged_failure(st) {
            Some(failed) => Err(FinishRefusal::FailedUnchanged {
                path: self.env.contract.mission.required_artifact.clone(),
                checks: failed.checks.join(", "),
            }),
            None => check_finish(
                self.env.contract,
                self.env.world,
                &st.trace,
                self.env.input_hashes,
            ),
        };
        if let Err(refusal) = ruled {
            let tools = self.tools();
            let offered = |t: &'static str| tools.iter().any(|have| have == t).then_some(t);
            let typed = self.deliverable_writer();
            return Ok(Some(
                refusal.reason_with(
                    typed.or_else(|| offered("create_file")),
                    typed
                        .or_else(|| offered("replace_file"))
                        .or_else(|| offered("edit_lines")),
                ),
            ));
        }
        if let Some(hold) = self.change_hold(st) {
            holds.change = true;
            self.journal_hold("change_list_hold", n, st.attempt)?;
            return Ok(Some(hold));
        }
        if let Some((hold, next)) = self.total_hold(st, n)? {
            holds.total_next = Some(next);
            return Ok(Some(hold));
        }
        if let Some(review) = self.edit_review(st) {
            holds.review = true;
            self.journal_hold("edit_review", n, st.attempt)?;
            return Ok(Some(review));
        }
        Ok(None)
    }

    /// The journal's event for a finish held at step `n` of `attempt` (`kind` names the hold).
    fn journal_hold(&self, kind: &str, n: u32, attempt: u32) -> Result<(), AgentError> {
        self.env.journal.append_event(
            Some(self.env.run),
            kind,
            &json!({"step": n, "attempt": attempt}),
        )?;
        Ok(())
    }

    /// A refused or held finish: counted, journaled, announced, and the report the model reads.
    fn refuse_finish(
        &mut self,
        st: &mut State,
        n: u32,
        reason: String,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<GateReport, AgentError> {
        st.figures.finish_refusals += 1;
        self.env.journal.append_event(
            Some(self.env.run),
            "finish_refused",
            &json!({"step": n, "reason": reason}),
        )?;
        on_event(&AgentEvent::FinishRefused {
            step: n,
            reason: reason.clone(),
        });
        Ok(GateReport {
            outcome: GateOutcome::Denied,
            reason,
            result: json!({"finished": false}),
        })
    }

    /// The progress note after a step of `tool`: what is done and the next step, a lever's
    /// next step in place of the default one.
    fn progress_after(&self, st: &State, tool: &str, refused_finish: bool, holds: Holds) -> String {
        let tools = without_finish_if(self.unchanged_failure(st).is_some(), self.tools());
        let mut progress = progress_parts(
            self.env.contract,
            &st.trace,
            self.deliverable_writer(),
            &tools,
            self.find_inputs_note(),
            holds.review,
            self.reads_globs(),
        );
        // A finish the finish rules refused keeps their advice.
        let rules_refused = tool == "finish" && refused_finish && !holds.holds_finish();
        if let Some(next) = self
            .next_change_step(st, rules_refused)
            .filter(|_| !holds.review)
        {
            progress.next = next;
        }
        if let Some(next) = holds.total_next {
            progress.next = next;
        }
        progress.text()
    }

    /// Rein's notes after the progress note: the folder's figures (lever `folder-stats`), the
    /// checklist, the task reminder, and that finish would now be accepted.
    fn notes_after_progress(&self, st: &State) -> String {
        let mut feedback = String::new();
        if let Some(figures) = &st.folder_figures {
            feedback.push('\n');
            feedback.push_str(figures);
        }
        if self.options.levers.checklist {
            feedback.push('\n');
            feedback.push_str(&checklist_note(
                self.env.contract,
                self.env.world,
                &st.trace,
            ));
        }
        if self.options.levers.task_reminder {
            feedback.push('\n');
            feedback.push_str(&task_reminder(self.env.contract, &st.trace));
        }
        if self.unchanged_failure(st).is_none() && self.finish_ready(st) {
            feedback.push_str(&format!(
                "\nRein checked {}: finish would be accepted and every requirement it checks before finish is met. Call finish now; the rest is judged after it.",
                self.env.contract.mission.required_artifact
            ));
        }
        feedback
    }

    /// A read's result as the model is shown it: Rein's facts added (the table facts of a
    /// table, lever `table-facts`; the label lines of an input fields are copied from, lever
    /// `label-lines`), then cut at a line to what the prompt shows whole; the table facts
    /// remembered for later feedback are those left in it.
    pub(super) fn prepare_read_result(&self, st: &mut State, tool: &str, report: &mut GateReport) {
        // The lever offers the tool and says to copy its numbers: a count, Rein's or the
        // model's, is held to what the judge's is (a figure it counts otherwise is withheld),
        // before the step's summary and the journal see it.
        if tool == FOLDER_STATS && self.options.levers.folder_stats && report.outcome.ran() {
            st.folder_withheld = crate::agent::folder_facts::withhold_disputed(
                self.env.contract,
                self.env.world,
                &mut report.result,
            );
        }
        // A row count the judge makes otherwise is never handed out, by Rein's call or the
        // model's (lever `stats-first` shows only agreeing figures of its own calls).
        if matches!(tool, "table_stats" | "table_rows") && report.outcome.ran() {
            crate::agent::folder_facts::withhold_disputed_table_rows(
                self.env.contract,
                self.env.world,
                &mut report.result,
            );
        }
        if tool == crate::agent::row_query::TABLE_ROWS && report.outcome.ran() {
            crate::agent::row_query::withhold_disputed_matches(
                self.env.contract,
                self.env.world,
                &mut report.result,
            );
        }
        // The rows holding a column's largest and smallest number are lever `named-rows`'
        // (the tool gives them to every caller): without it the answer is as before the lever.
        // How the filtered rows split over the short columns is lever `row-query`'s too.
        if tool == "table_stats" && !self.options.levers.row_query {
            if let Some(fields) = report.result.as_object_mut() {
                for key in ["counts", "counts_note"] {
                    fields.shift_remove(key);
                }
            }
        }
        if tool == "table_stats" && !self.options.levers.named_rows {
            if let Some(fields) = report.result.as_object_mut() {
                for key in ["max_rows", "max_rows_note", "min_rows", "min_rows_note"] {
                    fields.shift_remove(key);
                }
            }
        }
        if self.options.memory {
            return;
        }
        if self.options.levers.table_facts {
            add_table_facts(self.env.world, tool, report);
        }
        if self.options.levers.label_lines {
            let whole = shows_whole_file(&report.result);
            add_label_lines(self.env.world, self.env.contract, tool, whole, report);
        }
        if tool == "read_file" && report.outcome == GateOutcome::Executed {
            let offered = self.tools().iter().any(|t| t == "table_stats");
            fit_read_result(&mut report.result, offered);
        }
        if self.options.levers.table_facts {
            remember_table_facts(&mut st.table_facts, report);
        }
        if self.combines_tables() && tool == "read_file" && report.outcome == GateOutcome::Executed
        {
            let whole = shows_whole_file(&report.result);
            remember_shown_table(&mut st.shown_tables, &report.result, whole);
        }
    }

    /// Cuts the last step's longest message when the prompt is over `budget` with every other
    /// step trimmed, and journals the cut (a `context_cut` event); whether it cut.
    pub(super) fn clip_to_fit(&mut self, st: &mut State, budget: u32) -> Result<bool, AgentError> {
        let cut = st.transcript.clip_last(budget);
        if cut > 0 {
            self.env.journal.append_event(
                Some(self.env.run),
                "context_cut",
                &json!({"attempt": st.attempt, "characters": cut, "budget_tokens": budget}),
            )?;
        }
        Ok(cut > 0)
    }
}

/// What a lever's hold did this step. A held step is no step without progress: the model is
/// asked for a look or a read, not a change of course.
#[derive(Debug, Default)]
struct Holds {
    /// Lever `review-edits`: a finish held for a review; the progress note defers to it.
    review: bool,
    /// Lever `read-cited`: a write held until an input it names is read; asked again once the
    /// read is made, it is no repeat then.
    read: bool,
    /// Lever `change-list`: a finish held while the model's list of changes has some left.
    change: bool,
    /// Lever `own-totals`: a finish held for a total that disagrees with what the deliverable
    /// lists; the progress note's next step after it.
    total_next: Option<String>,
}

impl Holds {
    fn any(&self) -> bool {
        self.holds_finish() || self.read
    }

    /// Whether a lever, not the finish rules, held the finish.
    fn holds_finish(&self) -> bool {
        self.review || self.change || self.total_next.is_some()
    }
}
