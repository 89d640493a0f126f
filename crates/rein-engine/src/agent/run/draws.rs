//! Verified sampling: the draws of a deliverable's write, each judged in a scratch copy.

use super::*;

impl<'a> Agent<'a> {
    /// Candidates per write of the deliverable: 1 for a memory-sandbox task (it has no
    /// deliverable file), else the option, within [`MAX_SAMPLES`].
    pub(super) fn samples(&self) -> u32 {
        if self.options.memory {
            1
        } else {
            self.options.samples.clamp(1, MAX_SAMPLES)
        }
    }

    /// The tool of a reply that writes the deliverable, if it is one.
    pub(super) fn deliverable_write(&self, asked: &Asked) -> Result<String, String> {
        let Reply::Action { action, .. } = &asked.reply else {
            return Err("no action could be read".into());
        };
        let tool = &action.action;
        // `rewrite_section` writes the deliverable as the `write_sections` call it becomes.
        let writes = self.tools().contains(tool) && self.call_writes(tool);
        let params = Value::Object(action.parameters.clone());
        match trace_target(tool, &params) {
            Some(path)
                if writes && same_path(path, &self.env.contract.mission.required_artifact) =>
            {
                Ok(tool.clone())
            }
            _ => Err(format!("{tool} does not write the deliverable")),
        }
    }

    /// The typed writer (`write_sections`, `write_json`) a reply cut off at the reply cap was
    /// calling, with `told-draws` and constrained decoding: the cut text is then a prefix of one
    /// call that starts with its thought, and a quote not escaped before `action` can only open
    /// that key (inside a JSON string every quote is escaped).
    pub(super) fn cut_writer(&self, asked: &Asked) -> Option<&'static str> {
        static CALL: LazyLock<Option<Regex>> = LazyLock::new(|| {
            Regex::new(
                r#"^\s*\{\s*"thought"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"action"\s*:\s*"([a-z_]+)""#,
            )
            .ok()
        });
        let Reply::FormatError(e) = &asked.reply else {
            return None;
        };
        if e.cut_at.is_none()
            || !self.options.levers.told_draws
            || !self.options.constrained
            || self.samples() <= 1
        {
            return None;
        }
        let writer = self.deliverable_writer()?;
        let called = CALL.as_ref()?.captures(&asked.raw)?.get(1)?.as_str();
        (called == writer).then_some(writer)
    }

    /// The context window the prompt must fit: the run's setting, else the model's.
    pub(super) fn context_tokens(&self) -> u32 {
        self.options
            .context_tokens
            .unwrap_or(self.model.identity().context_tokens)
    }

    /// Verified sampling: when the step's reply writes the deliverable, judge it on a scratch
    /// view with the contract's checks and, while no candidate so far is clean (every check
    /// the scratch view can rule on passed), draw another for the same tool (another seed,
    /// [`SAMPLE_TEMPERATURE`], the same prompt and so the same cached prefix), up to K in all.
    /// The best goes on (the first draw unless another is strictly better). Stopping at the
    /// first clean draw proposes what drawing all K would: a later draw is chosen only when
    /// strictly better, and nothing beats clean. Journaled and reported; the run's transcript
    /// keeps only the reply that is proposed. With `told-draws`, an extra draw after one the
    /// tool refused (or one cut at the reply cap) also sees that draft and Rein's answer to it
    /// (see [`Told`]): a redraw with the step's own feedback, which the bench's best-of-K
    /// figures include.
    pub(super) fn sample_write(
        &mut self,
        st: &mut State,
        n: u32,
        asked: Asked,
        schema: Option<&Value>,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<Asked, AgentError> {
        let k = self.samples();
        if k <= 1 {
            return Ok(asked);
        }
        // With `told-draws`, a write cut off at the reply cap is drawn again too, told so.
        let tool = match self.deliverable_write(&asked) {
            Ok(tool) => tool,
            Err(_) => match self.cut_writer(&asked) {
                Some(writer) => writer.to_string(),
                None => return Ok(asked),
            },
        };
        st.figures.sampled_writes += 1;
        let own = self.action_sampling();
        // The extra draws are held to the schema the first one was drawn under (after a cut
        // reply, the short one), narrowed to its tool.
        let narrowed = schema.map(|s| only_tool(s, &tool));
        let (first, refusal) =
            self.judge_draw(st, n, 1, &asked, self.options.seed, own.temperature);
        let told_draws = self.options.levers.told_draws;
        let mut told = Told::default();
        if told_draws {
            told = Told::after(&asked, refusal.as_deref());
        }
        let budget = prompt_budget(self.context_tokens(), MAX_REPLY_TOKENS);
        let mut candidates = vec![first];
        let mut draws = vec![asked];
        let mut failure = None;
        let mut stopped = None;
        for draw in 2..=k {
            if candidates.iter().any(|c| c.clean) {
                break;
            }
            // The run's timeout holds between draws too: K slow draws must not run past it.
            // The draws made so far compete; the cap fires before the next step.
            let timeout = self.options.limits.timeout;
            if self.clock.elapsed() >= timeout {
                stopped = Some(format!(
                    "the run timeout of {} s was reached after {} of {k} draws",
                    timeout.as_secs(),
                    draw - 1
                ));
                break;
            }
            let mut sampling = own;
            sampling.temperature = sampling.temperature.max(SAMPLE_TEMPERATURE);
            let seed = draw_seed("verified-sampling", self.options.seed, n, draw);
            // After a cut draw, the next is held to short texts as the step after a cut reply
            // is.
            let after_cut = told.cut();
            let looped = told.looped_items();
            // What the draw before it did is told only when the prompt still fits: a prompt
            // over the budget would be cut at the context's end, not at the reply cap.
            let mut messages = st.transcript.messages();
            let kept = messages.len();
            messages.extend(told.messages(MAX_REPLY_TOKENS));
            if st.transcript.estimate_of(&messages) > budget {
                messages.truncate(kept);
                told = Told::Nothing;
            }
            let short = (after_cut && self.options.levers.short_after_cut)
                .then(|| {
                    narrowed.as_ref().map(|_| {
                        self.action_schema(std::slice::from_ref(&tool), true, &st.held, looped)
                    })
                })
                .flatten();
            match ask_action(
                self.model,
                messages,
                AskWith {
                    schema: short.as_ref().or(narrowed.as_ref()),
                    sampling,
                    seed,
                    no_paste: st.no_paste.as_ref(),
                },
                &mut |_| {},
            ) {
                Ok(a) => {
                    add_tokens(&mut st.figures, &a.completion);
                    let (mut judged, refusal) =
                        self.judge_draw(st, n, draw, &a, seed, sampling.temperature);
                    judged.told = told.note(MAX_REPLY_TOKENS);
                    if told_draws {
                        told = Told::after(&a, refusal.as_deref());
                    }
                    candidates.push(judged);
                    draws.push(a);
                }
                // The draws made so far still compete; the ordinary path reports a failing
                // model at the next step.
                Err(e) => {
                    failure = Some(e.to_string());
                    break;
                }
            }
        }
        // With no candidate judged (no preview could be computed, e.g. policy keeps the
        // deliverable's content) there is no scratch verdict to report: the first draw goes on
        // as without sampling.
        let chosen = match best(&candidates) {
            Some(chosen) => {
                st.figures.first_draw_passed = Some(candidates[0].passed);
                st.figures.chosen_draw_passed = Some(candidates[chosen].passed);
                chosen
            }
            None => 0,
        };
        st.figures.sample_draws += candidates.len() as u32;
        self.env.journal.append_event(
            Some(self.env.run),
            "verified_sampling",
            &json!({"step": n, "samples": k, "drawn": candidates.len(),
                    "candidates": candidates, "chosen": chosen,
                    "model_failure": failure, "stopped": stopped}),
        )?;
        on_event(&AgentEvent::Sampled {
            step: n,
            candidates,
            chosen,
        });
        Ok(draws.swap_remove(chosen))
    }

    /// The ids of the contract's semantic checks: a scratch view judges without a decision
    /// model, so these fail closed there whatever the candidate wrote.
    pub(super) fn semantic_check_ids(&self) -> Vec<String> {
        self.env
            .contract
            .mission
            .checks
            .iter()
            .filter(|c| c.spec.is_semantic())
            .map(|c| c.id.clone())
            .collect()
    }

    /// One candidate judged on a scratch view: its change computed by the gate without
    /// writing, laid over the workspace, and the contract's checks run on that. With it, the
    /// tool's own refusal of the call, when that is why it was not judged (what the step would
    /// have answered it).
    pub(super) fn judge_draw(
        &self,
        st: &State,
        n: u32,
        draw: u32,
        asked: &Asked,
        seed: u32,
        temperature: f32,
    ) -> (Candidate, Option<String>) {
        let mut c = Candidate {
            draw,
            seed,
            temperature,
            tool: None,
            passed_checks: 0,
            failed: Vec::new(),
            passed: false,
            clean: false,
            skipped: None,
            told: None,
        };
        let Reply::Action { action, .. } = &asked.reply else {
            c.skipped = Some("no action could be read".into());
            return (c, None);
        };
        c.tool = Some(action.action.clone());
        let params = Value::Object(action.parameters.clone());
        let tool = match self.deliverable_write(asked) {
            Ok(tool) => tool,
            Err(why) => {
                c.skipped = Some(why);
                return (c, None);
            }
        };
        // The arguments the gate would get, as the step gives them.
        let arguments = match self.typed_arguments(&tool, &params) {
            Some(Ok((args, _))) => args,
            // A refusal of the call's own content; `rewrite_section`'s also answer the file on
            // disk (write it whole first), which a draw held to that tool cannot act on.
            Some(Err(why)) => {
                c.skipped = Some(why.clone());
                let told = (tool == WRITE_SECTIONS || tool == WRITE_JSON).then_some(why);
                return (c, told);
            }
            None => params,
        };
        let call = ToolCall {
            id: format!("run{}-step{n}-draw{draw}", self.env.run),
            tool: self.gate_tool(&action.action).to_string(),
            arguments,
        };
        match self.executor.preview(&call) {
            Err(why) => c.skipped = Some(why),
            Ok(proposal) => {
                let v = judge_candidate(
                    self.env.contract,
                    self.env.world,
                    &st.trace,
                    &action.action,
                    &proposal,
                );
                c.record(&v, &self.semantic_check_ids());
            }
        }
        (c, None)
    }
}
