//! The action schema a step's reply is held to, and the typed arguments of the deliverable's tools
//! (`write_json`, copied strings).

use super::*;

impl<'a> Agent<'a> {
    /// The action schema for constrained decoding over `tools`, with `write_json`'s document
    /// typed by the contract's schema when that lever applies; `short` holds its texts to
    /// [`SHORT_TEXT_MAX_CHARS`] (the reply after a cut one, lever `short-after-cut`).
    /// `held` are the deliverable's copied strings and their patterns (lever `copied-strings`).
    /// `looped`: with `short`, the items a cut reply wrote before its list began again (see
    /// [`crate::agent::looped`]), which a list template's list is held to.
    pub(super) fn action_schema(
        &self,
        tools: &[String],
        short: bool,
        held: &[HeldStrings],
        looped: Option<usize>,
    ) -> Value {
        // A file written whole (lever `whole-rewrite`) cannot be written in shorter parts.
        let short = short && !self.rewrites_whole();
        let mut s = mission_action_schema(self.env.registry, tools);
        let sections = self.typed_sections();
        if let Some(outline) = &sections {
            outline.type_action_schema(&mut s);
        }
        if let Some(outline) = self
            .rewrite_outline()
            .filter(|_| tools.iter().any(|t| t == REWRITE_SECTION))
        {
            // Shaped as the registry's write_sections branch: the same envelope and thought.
            let full = mission_action_schema(self.env.registry, &[WRITE_SECTIONS.to_string()]);
            if let Some(template) = full["anyOf"].get(0).cloned() {
                outline.add_rewrite_branch(&mut s, template);
            }
        }
        if short {
            s = shorten_texts(&s, SHORT_TEXT_MAX_CHARS);
        }
        // Typed after the cut's shortening, so a held string's bounds (its own, the cut's) stay
        // in its pattern and are not set again beside it (see `hold_document`).
        if let Some((path, mut document)) = self.typed_json() {
            if short {
                document = shorten_texts(&document, SHORT_TEXT_MAX_CHARS);
            }
            hold_document(&mut document, held);
            type_document(&mut s, WRITE_JSON, &path, &document);
        }
        if let Some(lines) = self.answer_lines() {
            lines.type_action_schema(
                &mut s,
                &self.env.contract.mission.required_artifact,
                looped.filter(|_| short),
            );
        }
        // An `openai:` endpoint's grammar reads a JSON Schema `pattern` its own way (llama-server
        // wants it anchored, others match it whole): only llguidance gets one.
        let outline = sections.or_else(|| self.rewrite_outline());
        if let Some(outline) = outline.filter(|_| !is_endpoint(self.model.identity())) {
            let levers = &self.options.levers;
            let lines = if levers.stated_lines {
                stated_lines(self.env.contract, &outline)
            } else {
                Vec::new()
            };
            constrain_bodies(&mut s, &outline, &lines, levers.plain_bodies, short);
        }
        s
    }

    /// With `answer-lines` and an embedded model, for a deliverable no typed writer writes: the
    /// lines the task quotes for it (see [`AnswerLines::of_task_or_list`]).
    pub(super) fn answer_lines(&self) -> Option<AnswerLines> {
        if !self.options.levers.answer_lines
            || self.options.memory
            || is_endpoint(self.model.identity())
            || self.typed_json().is_some()
        {
            return None;
        }
        let m = &self.env.contract.mission;
        let template = AnswerLines::of_task_or_list(&m.prompt, &m.required_artifact)?;
        // A heading and its lines say more than `write_sections`' one free field for that
        // heading (the 1.5B wrote prose in it on explore-project-tree): the template wins.
        let sections_typed = self.options.levers.write_sections && self.outline().is_some();
        (template.heading.is_some() || !sections_typed).then_some(template)
    }

    /// Whether [`Self::answer_lines`] holds a template with a heading: then `write_sections`
    /// and `rewrite_section` are not offered.
    pub(super) fn headed_template(&self) -> bool {
        self.answer_lines().is_some_and(|t| t.heading.is_some())
    }

    /// With `write-json`, for a desk mission whose deliverable has a `json_schema` check: the
    /// deliverable's path and that schema, which type `write_json`'s `document`. Not for a
    /// file the task edits in place unless `write_json` keeps its layout (see
    /// [`Self::json_layout_lost`]).
    pub(super) fn typed_json(&self) -> Option<(String, Value)> {
        self.json_deliverable().filter(|_| !self.json_layout_lost())
    }

    /// With `write-json`, whether the deliverable is a JSON file with a schema that the task
    /// edits in place, in a layout `write_json` would not keep: then `write_json` is not
    /// offered, even where the mission lists it. A file found with an inline list or another
    /// indentation would be reformatted whole, which no task that keeps the rest of the file
    /// accepts (the 1.5B did so on edit-json-settings).
    pub(super) fn json_layout_lost(&self) -> bool {
        let m = &self.env.contract.mission;
        self.json_deliverable().is_some()
            && m.editable
                .iter()
                .any(|e| same_path(e, &m.required_artifact))
            && !*self.json_layout_kept.get_or_init(|| {
                // A file not there yet has no layout to keep.
                match self.env.world.read(&m.required_artifact) {
                    Ok(None) => true,
                    Ok(Some(bytes)) => rein_workspace::desk::json_layout_kept(&bytes),
                    Err(_) => false,
                }
            })
    }

    /// The deliverable's path and schema for `write_json` (lever `write-json`), whatever its
    /// layout.
    fn json_deliverable(&self) -> Option<(String, Value)> {
        if !self.options.levers.write_json
            || self.options.memory
            || self.env.registry.get(WRITE_JSON).is_none()
        {
            return None;
        }
        let m = &self.env.contract.mission;
        m.checks.iter().find_map(|c| match &c.spec {
            CheckSpec::JsonSchema { path, schema } if same_path(path, &m.required_artifact) => {
                Some((path.clone(), schema.clone()))
            }
            _ => None,
        })
    }

    /// With `copied-strings`, `write_json` and an embedded model: for each check that says
    /// strings of the deliverable are copied from inputs (a `grounded` check's JSON Pointer
    /// claim, an `entries_match` text field), where they are and the pattern of the lines of
    /// those inputs this run has read whole (still their frozen bytes), or why none was made.
    pub(super) fn copied_strings(
        &self,
        st: &State,
    ) -> Vec<(String, Result<HeldStrings, NoPattern>)> {
        if !self.options.levers.copied_strings || is_endpoint(self.model.identity()) {
            return Vec::new();
        }
        let Some((deliverable, _)) = self.typed_json() else {
            return Vec::new();
        };
        let read = read_whole(st);
        let c = self.env.contract;
        let all_inputs: Vec<String> = c.inputs.iter().map(|h| h.path.clone()).collect();
        let mut out = Vec::new();
        for check in &c.mission.checks {
            let (pointers, sources) = match &check.spec {
                CheckSpec::Grounded {
                    path,
                    claim: Locator::Pointer(p),
                    sources,
                } if same_path(path, &deliverable) => (
                    vec![p.clone()],
                    if sources.is_empty() {
                        &all_inputs
                    } else {
                        sources
                    },
                ),
                CheckSpec::EntriesMatch {
                    path,
                    array,
                    sources,
                    fields,
                    ..
                } if same_path(path, &deliverable) => (
                    fields
                        .iter()
                        .filter(|(_, rule)| !rule.number)
                        .map(|(name, _)| {
                            format!("{array}/0/{}", name.replace('~', "~0").replace('/', "~1"))
                        })
                        .collect(),
                    sources,
                ),
                _ => continue,
            };
            let texts: Vec<String> = sources
                .iter()
                .filter(|src| read.iter().any(|r| same_path(r, src)))
                .filter_map(|src| {
                    let frozen = c.input_hash(src)?;
                    let bytes = self.env.world.read(src).ok()??;
                    (sha256_hex(&bytes) == frozen)
                        .then(|| String::from_utf8(bytes).ok())
                        .flatten()
                })
                .collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let pattern = copied_text_pattern(&refs);
            for pointer in pointers {
                let held = pattern.clone().map(|pattern| HeldStrings {
                    pointer: pointer.clone(),
                    pattern,
                    texts: texts.clone(),
                });
                out.push((pointer, held));
            }
        }
        out
    }

    /// Sets the step's copied strings (lever `copied-strings`) and journals, when the lever
    /// applies, which are held and why any is not (no input read yet, the pattern's cap).
    pub(super) fn hold_copied_strings(&self, st: &mut State, step: u32) -> Result<(), AgentError> {
        let found = self.copied_strings(st);
        st.held = found
            .iter()
            .filter_map(|(_, h)| h.as_ref().ok().cloned())
            .collect();
        if found.is_empty() {
            return Ok(());
        }
        let mut not_held: Vec<Value> = found
            .iter()
            .filter_map(|(pointer, h)| match h {
                Ok(_) => None,
                Err(NoPattern::NoWords) => Some(json!({"pointer": pointer,
                    "why": "no input it may be copied from has been read whole yet"})),
                Err(NoPattern::OverCap(chars)) => Some(json!({"pointer": pointer,
                    "why": format!("the inputs read give a pattern of {chars} characters, over the cap of {COPIED_PATTERN_MAX_CHARS}: these strings are not held")})),
            })
            .collect();
        // What the deliverable's schema makes of them: a pointer may lead nowhere in it, and
        // no run may fit a string (its own length bounds, another check's sources).
        let holdings = self
            .typed_json()
            .map(|(_, mut document)| hold_document(&mut document, &st.held))
            .unwrap_or_default();
        let mut held: Vec<&str> = Vec::new();
        for (h, done) in st.held.iter().zip(&holdings) {
            match done {
                None => not_held.push(json!({"pointer": h.pointer,
                    "why": "the pointer leads nowhere in the deliverable's schema"})),
                Some(done) => {
                    if done.unfit > 0 {
                        not_held.push(json!({"pointer": h.pointer,
                            "why": format!("no run of the inputs read fits {} string(s) there (their own length bounds, or another check's sources): they are left free", done.unfit)}));
                    }
                    if done.held > 0 || done.unfit == 0 {
                        held.push(h.pointer.as_str());
                    }
                }
            }
        }
        self.env.journal.append_event(
            Some(self.env.run),
            "copied_strings",
            &json!({"step": step, "held": held, "not_held": not_held}),
        )?;
        Ok(())
    }

    /// Why a `write_json` call is refused before the gate: it names another file than the
    /// deliverable, or its document does not follow the deliverable's schema (what decoding
    /// enforces for an embedded model; a scripted or remote one is held to it here).
    pub(super) fn write_json_refusal(&self, params: &Value) -> Option<String> {
        let (path, schema) = self.typed_json()?;
        let given = params
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !same_path(given, &path) {
            return Some(format!(
                "write_json writes only the deliverable \"{path}\", not \"{given}\"; nothing was written"
            ));
        }
        // A missing document is the gate's to refuse (the tool's own schema).
        let document = params.get("document")?;
        let facts = schema_violations(&path, &schema, document);
        (!facts.is_empty()).then(|| {
            format!(
                "the document does not follow the deliverable's schema, so nothing was written: {}",
                facts.join("; ")
            )
        })
    }

    /// What the gate gets for a call of a typed tool: `write_json`'s document checked against
    /// the deliverable's schema, `write_sections`'s fields composed into sections (with a note
    /// for the model when a body line was written as text). `Err` says why the call is refused
    /// before the gate, nothing written; `None` for any other tool, whose parameters go as
    /// they are.
    pub(super) fn typed_arguments(
        &self,
        tool: &str,
        params: &Value,
    ) -> Option<Result<(Value, Option<String>), String>> {
        if tool == WRITE_JSON {
            return Some(match self.write_json_refusal(params) {
                Some(why) => Err(why),
                None => Ok((params.clone(), None)),
            });
        }
        if tool == WRITE_SECTIONS {
            return self.typed_sections().map(|o| o.gate_arguments(params));
        }
        if tool == REWRITE_SECTION {
            let outline = self.rewrite_outline()?;
            return Some(match self.env.world.read(&outline.path) {
                Ok(bytes) => match bytes.as_deref().map(std::str::from_utf8).transpose() {
                    Ok(current) => outline.rewrite_arguments(current, params),
                    Err(_) => Err(format!(
                        "{} is not UTF-8 text, so its sections cannot be read; write it whole with {WRITE_SECTIONS}; nothing was written",
                        outline.path
                    )),
                },
                Err(e) => Err(format!("cannot read {}: {e}; nothing was written", outline.path)),
            });
        }
        None
    }

    /// The sampling of an action: the actor profile, without its repeat penalty when the
    /// `repeat-penalty` lever is off (JSON repeats brackets, keys and paths by nature, and at
    /// temperature 0.1 a penalty of 1.1 flips the top token when two choices are close).
    pub(super) fn action_sampling(&self) -> SamplingProfile {
        let mut s = self.options.sampling;
        if !self.options.levers.repeat_penalty {
            s.repeat_penalty = 1.0;
        }
        s
    }

    /// Whether the reply after one cut while it wrote its list over again has its list held to
    /// the items before the repeat: lever `short-after-cut`, constrained decoding, and a list
    /// template of lever `answer-lines` typing the deliverable's content.
    pub(super) fn holds_looped_list(&self) -> bool {
        self.options.levers.short_after_cut
            && self.options.constrained
            && !self.rewrites_whole()
            && self.answer_lines().is_some_and(|lines| lines.list)
    }
}
