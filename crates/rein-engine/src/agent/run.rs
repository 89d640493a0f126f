//! The loop: one action per step through the gate, finish refusals, attempts, caps, the judge.

use std::path::Path;
use std::sync::LazyLock;
use std::time::Instant;

use regex::Regex;
use rein_journal::{
    AttemptId, ChangeId, Journal, NewCheck, NewRun, NewStep, RunId, RunKind, RunStatus, StepKind,
};
use rein_models::{Model, ModelError};
use rein_protocol::{
    ChatMessage, GateOutcome, GateReport, ModelIdentity, NoPaste, SamplingProfile, ToolCall,
};
use rein_workspace::ToolRegistry;
use serde_json::{json, Value};

use super::bodies::constrain_bodies;
use super::caps::{input_over_cap, CapHit, Clock, Limits, SystemClock, MAX_INPUT_CHARS};
use super::caps::{MAX_REPLY_TOKENS, MAX_STEPS_WITHOUT_PROGRESS};
use super::checklist::{checklist_note, shown_checks_met};
use super::copied::{
    copied_text_pattern, hold_document, HeldStrings, NoPattern, COPIED_PATTERN_MAX_CHARS,
};
use super::document_facts::add_document_facts;
use super::error::AgentError;
use super::event::{AgentEvent, StepEvent, UndoneChange};
use super::facts::{add_table_facts, earlier_table_facts, remember_table_facts};
use super::inputs_first::{files_to_read, read_turns};
use super::label_lines::add_label_lines;
use super::levers::{shorten_texts, Lever, Levers, SHORT_TEXT_MAX_CHARS};
use super::no_paste::{no_paste_sources, NoPasteSources};
use super::outcome::{RunEnd, RunFigures, RunOutcome};
use super::plan::make_plan;
use super::prompt::{
    memory_retry_feedback, memory_system_prompt, memory_task_message, mission_action_schema,
    progress_note, result_message, result_shown_whole, source_lines_note, summarize, system_prompt,
    task_message, task_reminder, type_document,
};
use super::read_fit::fit_read_result;
use super::rewrite::REWRITE_SECTION;
use super::sampling::{
    best, draw_seed, judge_candidate, Candidate, Told, MAX_SAMPLES, SAMPLE_TEMPERATURE,
};
use super::sections::{Outline, WRITE_SECTIONS};
use super::stated::stated_lines;
use super::stats_first::{
    calls_to_make as stats_calls, stats_turns, tables_to_read, withheld_because, Planned,
    TablesToRead,
};
use super::step::{ask_action, AskWith, Asked, Reply};
use super::trim::{estimate_tokens, prompt_budget, Transcript};
use crate::checks::{
    evaluate, is_variable_tool, requirement, requirements_message, same_path, schema_violations,
    table_stats_hint, CheckSpec, Decider, Locator, TraceEntry, Verdict, World,
};
use crate::finish::{check_finish, FinishRefusal};
use crate::gate::{Approver, CallExecutor};
use crate::mission::{sha256_hex, FrozenContract, InputHash, Mode};

/// The strategy name of the loop's attempts (one strategy today: act, then retry with the
/// judge's failed checks as feedback).
pub const STRATEGY: &str = "act";

/// The share of the prompt budget the first prompt may take with `stats-first`'s reads and
/// calls; past it Rein makes none of them and the model makes its own.
const REIN_TURNS_MAX_PERCENT: u32 = 70;

/// About the characters of one `stats-first` call and its result in the prompt.
const STATS_TURN_CHARS: usize = 500;

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

/// The tools the `facts-tools` lever adds: deterministic reads that compute what a small model
/// gets wrong (sums, counts, arithmetic).
pub const FACTS_TOOLS: &[&str] = &["table_stats", "calculate"];

/// The tool the `write-json` lever adds for a JSON deliverable with a schema.
pub const WRITE_JSON: &str = "write_json";

/// Characters of the current deliverable shown to the model when a `monotone-attempts` retry
/// starts from it; a longer one is clipped and says so.
pub const MAX_DELIVERABLE_CHARS: usize = 6_000;

/// Extra draws the `repeat-escape` lever makes for a reply that repeats an earlier call.
pub const REPEAT_ESCAPE_DRAWS: u32 = 2;

/// How the loop runs.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentOptions {
    pub limits: Limits,
    /// Bench mode: an unknown tool stops the run at once instead of costing a step.
    pub bench: bool,
    /// A memory-sandbox task (the bench's `sandbox = "memory"`): the prompts speak of the
    /// sandbox, and an executed `final_answer` ends the attempt with no finish rules: the judge
    /// alone decides from the sandbox and the action log.
    pub memory: bool,
    /// Send the mission's action schema with each request: an embedded model constrains
    /// decoding with it, an endpoint gets it as `response_format` (see [`takes_action_schema`]).
    pub constrained: bool,
    /// Ask the model for a short plan (at most `limits.max_plan_steps` steps) before acting.
    pub plan: bool,
    /// Refuse `human_review_only` missions (every ordinary run); `rein qualify` turns it off.
    pub automatic_judgment: bool,
    /// The context window to fit; `None` takes the model's reported one.
    pub context_tokens: Option<u32>,
    /// The actor's sampling (DESIGN.md: temperature 0.1, top-k 50); `--temperature` changes it.
    pub sampling: SamplingProfile,
    pub seed: u32,
    /// The harness-side levers of this run (recorded with it).
    pub levers: Levers,
    /// Candidates drawn and judged on a scratch view at each write of the deliverable
    /// (verified sampling); 1 proposes the ordinary draw. The mission's `budgets.samples`,
    /// else 1; `--samples` overrides; at most [`MAX_SAMPLES`].
    pub samples: u32,
}

impl AgentOptions {
    /// The mission's budgets, and the action schema for every model that can take it (a
    /// scripted reply goes through repair instead).
    pub fn for_mission(contract: &FrozenContract, model: &ModelIdentity) -> AgentOptions {
        AgentOptions {
            limits: Limits::from_budgets(&contract.mission.budgets),
            bench: false,
            memory: false,
            constrained: takes_action_schema(model),
            plan: false,
            automatic_judgment: true,
            context_tokens: None,
            sampling: SamplingProfile::ACTOR,
            seed: 0,
            levers: Levers::DEFAULT,
            samples: contract.mission.budgets.samples.unwrap_or(1),
        }
    }
}

/// Whether a model is given the action schema: an embedded model decodes under it, an
/// `openai:` endpoint gets it as `response_format` (and, if the endpoint refuses that, its
/// replies are read with repair, said in a model notice). A scripted model replays text and
/// takes no schema.
pub fn takes_action_schema(model: &ModelIdentity) -> bool {
    rein_models::ModelSpec::parse(&model.spec)
        .is_ok_and(|s| !matches!(s, rein_models::ModelSpec::Scripted(_)))
}

/// An action schema with only the branches of one tool (the whole schema when it has none).
fn only_tool(schema: &Value, tool: &str) -> Value {
    let Some(branches) = schema["anyOf"].as_array() else {
        return schema.clone();
    };
    let kept: Vec<Value> = branches
        .iter()
        .filter(|b| b["properties"]["action"]["const"].as_str() == Some(tool))
        .cloned()
        .collect();
    if kept.is_empty() {
        return schema.clone();
    }
    let mut narrowed = schema.clone();
    narrowed["anyOf"] = Value::Array(kept);
    narrowed
}

/// Whether a model is an `openai:` endpoint.
fn is_endpoint(model: &ModelIdentity) -> bool {
    matches!(
        rein_models::ModelSpec::parse(&model.spec),
        Ok(rein_models::ModelSpec::OpenAi { .. })
    )
}

/// Whether a model runs embedded (its spec is a catalog name or `gguf:PATH`).
pub fn is_embedded(model: &ModelIdentity) -> bool {
    rein_models::ModelSpec::parse(&model.spec).is_ok_and(|s| s.is_embedded())
}

/// Stores the frozen contract in the journal's acceptance specs and starts a mission run.
pub fn begin_mission_run(
    journal: &Journal,
    contract: &FrozenContract,
    workspace: &str,
    model: &ModelIdentity,
    meta: Value,
) -> Result<RunId, AgentError> {
    journal.store_acceptance_spec(contract.id(), &contract.sha256, &contract.canonical_json)?;
    let mut run = NewRun::new(RunKind::Mission);
    run.mission_id = Some(contract.id().to_string());
    run.contract_sha = Some(contract.sha256.clone());
    run.workspace = Some(workspace.to_string());
    run.model = Some(model.spec.clone());
    let mut meta = match meta {
        Value::Object(m) => m,
        _ => Default::default(),
    };
    meta.insert("model_identity".into(), json!(model));
    meta.insert("budgets".into(), json!(contract.mission.budgets));
    run.meta = Value::Object(meta);
    Ok(journal.begin_run(&run)?)
}

/// What a run works on: the frozen contract, the world, the tools and the journal.
pub struct RunEnv<'a> {
    pub contract: &'a FrozenContract,
    /// The mission file, re-verified against the frozen contract before every attempt.
    pub mission_file: &'a Path,
    /// The workspace as the finish rules and the judge read it.
    pub world: &'a dyn World,
    /// The tools (their schemas go into the prompt; the gate holds its own copy to run them).
    pub registry: &'a ToolRegistry,
    /// Hashes of the inputs as copied into the workspace.
    pub input_hashes: &'a [InputHash],
    pub journal: &'a Journal,
    pub run: RunId,
    /// The workspace as a person reads it (for events only).
    pub workspace_label: String,
}

/// The agent loop for one run. Build it, then [`Agent::run`].
pub struct Agent<'a> {
    env: RunEnv<'a>,
    model: &'a mut dyn Model,
    executor: &'a mut dyn CallExecutor,
    approver: &'a mut dyn Approver,
    decider: Option<&'a mut dyn Decider>,
    options: AgentOptions,
    clock: Box<dyn Clock + 'a>,
}

/// Mutable state of a run.
struct State {
    transcript: Transcript,
    trace: Vec<TraceEntry>,
    /// Every call the model made: tool, parameters and step, to notice a repeated call.
    calls: Vec<(String, Value, u32)>,
    /// Steps in a row that repeated an earlier call or had finish refused.
    stalled: u32,
    figures: RunFigures,
    attempt: u32,
    attempt_id: Option<AttemptId>,
    /// Changes this attempt applied (id and path), in order: what an undo of the attempt
    /// reverts, newest first.
    attempt_changes: Vec<(ChangeId, String)>,
    started: Instant,
    /// The `column_totals` the model was given for each table it read (lever `table-facts`),
    /// latest per path: a monotone retry starts a fresh transcript and repeats them.
    table_facts: Vec<(String, Value)>,
    /// Whether the last reply was cut off at the reply cap (lever `short-after-cut`).
    last_reply_cut: bool,
    /// The deliverable a failed verdict judged, when every check it failed is settled by
    /// those bytes (lever `change-before-finish`).
    failed_as_is: Option<FailedAsIs>,
    /// The deliverable's copied strings held this step (lever `copied-strings`).
    held: Vec<HeldStrings>,
    /// The texts replies may be steered off pasting (lever `no-paste`), and those held for
    /// this step's requests: the ones read whole so far.
    no_paste_sources: Option<NoPasteSources>,
    no_paste: Option<NoPaste>,
    /// What `no_paste_held` last journaled: the held prose sources and tables, what was cut,
    /// and whether the reply's own repeats count.
    no_paste_shown: (Vec<String>, Vec<String>, Vec<String>, bool),
}

/// A deliverable that failed checks its bytes settle: finishing it unchanged is pointless.
struct FailedAsIs {
    sha256: String,
    checks: Vec<String>,
}

/// What the last undo of an attempt did, for the next attempt's feedback.
struct Restored {
    attempt: u32,
    broke: Vec<String>,
    error: Option<String>,
}

/// The deciding checks `best` passed that `candidate` does not: a candidate with any is
/// worse, whatever else it fixed (no trade of one check for another).
fn regressions(best: &Verdict, candidate: &Verdict) -> Vec<String> {
    best.checks
        .iter()
        .filter(|b| b.passed && !b.advisory)
        .filter(|b| {
            !candidate
                .checks
                .iter()
                .any(|c| c.id == b.id && c.passed && !c.advisory)
        })
        .map(|b| b.id.clone())
        .collect()
}

/// How one step ended, for the loop.
enum StepEnd {
    Continue,
    FinishAccepted,
    Stop(RunEnd),
}

impl<'a> Agent<'a> {
    pub fn new(
        env: RunEnv<'a>,
        model: &'a mut dyn Model,
        executor: &'a mut dyn CallExecutor,
        approver: &'a mut dyn Approver,
    ) -> Agent<'a> {
        let options = AgentOptions::for_mission(env.contract, model.identity());
        Agent {
            env,
            model,
            executor,
            approver,
            decider: None,
            options,
            clock: Box::new(SystemClock::start()),
        }
    }

    pub fn with_options(mut self, options: AgentOptions) -> Self {
        self.options = options;
        self
    }

    /// The decision model for `decision` checks (without one they fail closed).
    pub fn with_decider(mut self, decider: &'a mut dyn Decider) -> Self {
        self.decider = Some(decider);
        self
    }

    pub fn with_clock(mut self, clock: impl Clock + 'a) -> Self {
        self.clock = Box::new(clock);
        self
    }

    pub fn options(&self) -> &AgentOptions {
        &self.options
    }

    /// The tools of this run: the mission's, and with `facts-tools` the facts tools the
    /// registry has, for a desk mission that reads files (a memory-sandbox task keeps its own).
    pub fn tools(&self) -> Vec<String> {
        let mut tools = self.env.contract.mission.tools.clone();
        if self.options.levers.facts_tools
            && !self.options.memory
            && tools.iter().any(|t| t == "read_file")
        {
            for t in FACTS_TOOLS {
                if self.env.registry.get(t).is_some() && !tools.iter().any(|have| have == t) {
                    tools.push((*t).to_string());
                }
            }
        }
        if self.typed_json().is_some() && !tools.iter().any(|t| t == WRITE_JSON) {
            tools.push(WRITE_JSON.to_string());
        }
        if self.typed_sections().is_some() && !tools.iter().any(|t| t == WRITE_SECTIONS) {
            tools.push(WRITE_SECTIONS.to_string());
        }
        if self.rewrite_outline().is_some() {
            tools.push(REWRITE_SECTION.to_string());
        }
        tools
    }

    /// The tools constrained decoding offers at this step: [`Self::tools`], without
    /// `rewrite_section` while the deliverable does not exist (the 1.5B called it before the
    /// first write on two seeds of four, was refused each time, and ran out of time).
    fn offered_tools(&self) -> Vec<String> {
        let mut tools = self.tools();
        if let Some(outline) = self.rewrite_outline() {
            if !matches!(self.env.world.read(&outline.path), Ok(Some(_))) {
                tools.retain(|t| t != REWRITE_SECTION);
            }
        }
        tools
    }

    /// Lever `finish-when-met`: this attempt wrote the deliverable, the finish rules would
    /// accept it now, and every deciding check the checklist may show is met. A later attempt
    /// starts with none of its own changes, so a failed verdict is never finished again as it
    /// stands.
    fn finish_ready(&self, st: &State) -> bool {
        let c = self.env.contract;
        let artifact = &c.mission.required_artifact;
        self.options.levers.finish_when_met
            && !self.options.memory
            && self.tools().iter().any(|t| t == "finish")
            && st
                .attempt_changes
                .iter()
                .any(|(_, p)| same_path(p, artifact))
            && check_finish(c, self.env.world, &st.trace, self.env.input_hashes).is_ok()
            && shown_checks_met(c, self.env.world, &st.trace)
    }

    /// Lever `change-before-finish`: what a failed verdict judged, when every deciding check it
    /// failed is settled by the deliverable's bytes ([`CheckSpec::settled_by`]); `None` when
    /// the lever is off, the verdict passed, or a failed check could change another way.
    fn failed_as_is(&self, v: &Verdict) -> Option<FailedAsIs> {
        let c = self.env.contract;
        let artifact = &c.mission.required_artifact;
        if !self.options.levers.change_before_finish || self.options.memory || v.passed {
            return None;
        }
        let failed: Vec<&str> = v
            .checks
            .iter()
            .filter(|r| !r.passed && !r.advisory)
            .map(|r| r.id.as_str())
            .collect();
        let settled = failed.iter().all(|id| {
            c.mission
                .checks
                .iter()
                .find(|k| k.id == *id)
                .is_some_and(|k| k.spec.settled_by(artifact))
        });
        let bytes = self.env.world.read(artifact).ok().flatten()?;
        (settled && !failed.is_empty()).then(|| FailedAsIs {
            sha256: crate::mission::sha256_hex(&bytes),
            checks: failed.iter().map(|s| s.to_string()).collect(),
        })
    }

    /// The failed checks a `finish` now would fail again: the deliverable still holds the bytes
    /// a failed verdict judged (lever `change-before-finish`).
    fn unchanged_failure<'s>(&self, st: &'s State) -> Option<&'s FailedAsIs> {
        let failed = st.failed_as_is.as_ref()?;
        let bytes = self
            .env
            .world
            .read(&self.env.contract.mission.required_artifact)
            .ok()
            .flatten()?;
        (crate::mission::sha256_hex(&bytes) == failed.sha256).then_some(failed)
    }

    /// The retry feedback's last line when `finish` is withheld at the start of attempt `n`
    /// (lever `change-before-finish`), journaled so the run shows why finish was not offered.
    fn finish_withheld(&self, st: &State, n: u32) -> Result<String, AgentError> {
        let Some(failed) = self.unchanged_failure(st) else {
            return Ok(String::new());
        };
        self.env.journal.append_event(
            Some(self.env.run),
            "finish_withheld",
            &json!({"attempt": n, "checks": failed.checks}),
        )?;
        Ok(format!(
            "\nfinish is not offered until {} changes: those checks read only that file, so the same file would fail them again.",
            self.env.contract.mission.required_artifact
        ))
    }

    /// With `rewrite-section`, for a desk mission whose Markdown deliverable must have
    /// headings: the outline `rewrite_section` keeps (it writes through `write_sections`).
    fn rewrite_outline(&self) -> Option<Outline> {
        if !self.options.levers.rewrite_section
            || self.options.memory
            || self.env.registry.get(WRITE_SECTIONS).is_none()
        {
            return None;
        }
        Outline::of(self.env.contract)
    }

    /// The registered tool a call runs as: `rewrite_section` is composed into a
    /// `write_sections` call; every other tool is itself.
    fn gate_tool<'t>(&self, tool: &'t str) -> &'t str {
        if tool == REWRITE_SECTION {
            WRITE_SECTIONS
        } else {
            tool
        }
    }

    /// The typed tool a lever offers for writing the deliverable, which the progress note names.
    fn deliverable_writer(&self) -> Option<&'static str> {
        if self.typed_json().is_some() {
            Some(WRITE_JSON)
        } else if self.typed_sections().is_some() {
            Some(WRITE_SECTIONS)
        } else {
            None
        }
    }

    /// With `write-sections`, for a desk mission whose Markdown deliverable must have
    /// headings: the outline `write_sections` writes.
    fn typed_sections(&self) -> Option<Outline> {
        if !self.options.levers.write_sections
            || self.options.memory
            || self.env.registry.get(WRITE_SECTIONS).is_none()
        {
            return None;
        }
        Outline::of(self.env.contract)
    }

    /// The system prompt of a desk run: `write_sections`'s line names the outline's fields.
    fn desk_system_prompt(&self) -> String {
        let typed = self.typed_sections();
        let rewrite = self.rewrite_outline();
        let others: Vec<String> = self
            .tools()
            .into_iter()
            .filter(|t| {
                !(typed.is_some() && t == WRITE_SECTIONS
                    || rewrite.is_some() && t == REWRITE_SECTION)
            })
            .collect();
        let mut s = system_prompt(self.env.registry, &others);
        if let Some(outline) = typed {
            s.push_str(&outline.tool_line());
        }
        if let Some(outline) = rewrite {
            s.push_str(&outline.rewrite_tool_line());
        }
        s
    }

    /// The action schema for constrained decoding over `tools`, with `write_json`'s document
    /// typed by the contract's schema when that lever applies; `short` holds its texts to
    /// [`SHORT_TEXT_MAX_CHARS`] (the reply after a cut one, lever `short-after-cut`).
    /// `held` are the deliverable's copied strings and their patterns (lever `copied-strings`).
    fn action_schema(&self, tools: &[String], short: bool, held: &[HeldStrings]) -> Value {
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

    /// With `write-json`, for a desk mission whose deliverable has a `json_schema` check: the
    /// deliverable's path and that schema, which type `write_json`'s `document`.
    fn typed_json(&self) -> Option<(String, Value)> {
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
    fn copied_strings(&self, st: &State) -> Vec<(String, Result<HeldStrings, NoPattern>)> {
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
    fn hold_copied_strings(&self, st: &mut State, step: u32) -> Result<(), AgentError> {
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
    fn write_json_refusal(&self, params: &Value) -> Option<String> {
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
    fn typed_arguments(
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
    fn action_sampling(&self) -> SamplingProfile {
        let mut s = self.options.sampling;
        if !self.options.levers.repeat_penalty {
            s.repeat_penalty = 1.0;
        }
        s
    }

    /// The task message: the mission's, and with `requirements` its checks in plain words.
    fn task(&self, c: &FrozenContract) -> String {
        let mut s = task_message(c);
        if self.options.levers.requirements {
            let reqs = requirements_message(c);
            if !reqs.is_empty() {
                s.push('\n');
                s.push_str(&reqs);
            }
        }
        for hint in c
            .mission
            .checks
            .iter()
            .filter_map(|k| self.table_hint(&k.spec))
        {
            s.push_str(&hint);
            s.push('\n');
        }
        if let Some((path, _)) = self.typed_json() {
            s.push_str(&format!(
                "Write {path} with write_json: give the JSON document itself as `document` (not a string holding JSON); it must follow the deliverable's schema, and Rein writes the file.\n"
            ));
        }
        if let Some(outline) = self.typed_sections() {
            let fixer = if self.rewrite_outline().is_some() {
                "rewrite_section (one heading and its whole new text)"
            } else {
                "edit_file"
            };
            s.push_str(&outline.task_note(fixer));
            s.push_str(&outline.section_requirements(c, |spec| self.hinted_requirement(spec)));
        } else if let Some(outline) = self.rewrite_outline() {
            s.push_str(&format!(
                "To fix one section of {} later, call {REWRITE_SECTION} with its heading and its whole new text.\n",
                outline.path
            ));
        }
        s
    }

    /// The `table_stats` call that gives a check's figure, as a hint for the model; `None` when
    /// the run does not offer the tool. With `stats-first` the hint stays: whether Rein makes
    /// the call is known only once the first prompt's room is measured, and the task is part
    /// of that prompt.
    fn table_hint(&self, spec: &CheckSpec) -> Option<String> {
        if !self.offers_table_stats() {
            return None;
        }
        table_stats_hint(spec, &self.env.contract.mission.prompt)
    }

    /// A check's requirement in plain words, followed by its [`Self::table_hint`] if any.
    fn hinted_requirement(&self, spec: &CheckSpec) -> String {
        match self.table_hint(spec) {
            Some(hint) => format!("{} {hint}", requirement(spec)),
            None => requirement(spec),
        }
    }

    /// Whether this run's tools include `table_stats` (with `facts-tools`), so the task may
    /// name the call that gives a check's number.
    fn offers_table_stats(&self) -> bool {
        self.tools().iter().any(|t| t == "table_stats")
    }

    /// The `repeat-escape` lever: while a reply repeats an earlier call of this run exactly
    /// (small models loop on one refused call until the no-progress cap ends the run), draw
    /// again with another seed and a higher temperature, at most [`REPEAT_ESCAPE_DRAWS`] times.
    /// Each draw is journaled; a reply that still repeats goes on as before and counts.
    /// `tools` are the step's: when that is `finish` alone (`finish-when-met`), a repeated
    /// finish stands, since it is judged afresh and would be accepted.
    fn escape_repeat(
        &mut self,
        st: &mut State,
        n: u32,
        mut asked: Asked,
        schema: Option<&Value>,
        tools: &[String],
    ) -> Result<Asked, AgentError> {
        if tools == ["finish"] {
            return Ok(asked);
        }
        for draw in 1..=REPEAT_ESCAPE_DRAWS {
            let Reply::Action { action, .. } = &asked.reply else {
                break;
            };
            let params = Value::Object(action.parameters.clone());
            let Some(earlier) = st
                .calls
                .iter()
                .find(|(t, p, _)| *t == action.action && *p == params)
                .map(|(_, _, step)| *step)
            else {
                break;
            };
            let mut sampling = self.action_sampling();
            sampling.temperature = sampling.temperature.max(0.4 * draw as f32);
            // The last draw may not name the repeated tool at all (constrained decoding only):
            // a small model that redraws the same call at any temperature still has to move on.
            let repeated_tool = action.action.clone();
            let narrowed = (draw == REPEAT_ESCAPE_DRAWS && schema.is_some())
                .then(|| {
                    let others: Vec<String> = tools
                        .iter()
                        .filter(|t| **t != repeated_tool)
                        .cloned()
                        .collect();
                    (!others.is_empty()).then(|| self.action_schema(&others, false, &st.held))
                })
                .flatten();
            let draw_schema = narrowed.as_ref().or(schema);
            let seed = draw_seed("repeat-escape", self.options.seed, n, draw);
            self.env.journal.append_event(
                Some(self.env.run),
                "repeat_escape",
                &json!({"step": n, "draw": draw, "repeats_step": earlier,
                        "tool": action.action, "seed": seed, "temperature": sampling.temperature,
                        "excluded": narrowed.is_some().then_some(&repeated_tool)}),
            )?;
            match ask_action(
                self.model,
                st.transcript.messages(),
                AskWith {
                    schema: draw_schema,
                    sampling,
                    seed,
                    no_paste: st.no_paste.as_ref(),
                },
                &mut |_| {},
            ) {
                Ok(again) => {
                    add_tokens(&mut st.figures, &again.completion);
                    asked = again;
                }
                // The first reply stands; the ordinary path reports a failing model next step.
                Err(_) => break,
            }
        }
        Ok(asked)
    }

    /// Candidates per write of the deliverable: 1 for a memory-sandbox task (it has no
    /// deliverable file), else the option, within [`MAX_SAMPLES`].
    fn samples(&self) -> u32 {
        if self.options.memory {
            1
        } else {
            self.options.samples.clamp(1, MAX_SAMPLES)
        }
    }

    /// The tool of a reply that writes the deliverable, if it is one.
    fn deliverable_write(&self, asked: &Asked) -> Result<String, String> {
        let Reply::Action { action, .. } = &asked.reply else {
            return Err("no action could be read".into());
        };
        let tool = &action.action;
        // `rewrite_section` writes the deliverable as the `write_sections` call it becomes.
        let writes = self.tools().contains(tool)
            && self
                .env
                .registry
                .get(self.gate_tool(tool))
                .is_some_and(|t| t.mutates());
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
    fn cut_writer(&self, asked: &Asked) -> Option<&'static str> {
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
    fn context_tokens(&self) -> u32 {
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
    fn sample_write(
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
                    narrowed
                        .as_ref()
                        .map(|_| self.action_schema(std::slice::from_ref(&tool), true, &st.held))
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
    fn semantic_check_ids(&self) -> Vec<String> {
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
    fn judge_draw(
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

    /// Runs to the end, emitting events as it goes, and finishes the run in the journal.
    pub fn run(mut self, on_event: &mut dyn FnMut(&AgentEvent)) -> Result<RunOutcome, AgentError> {
        let c = self.env.contract;
        let limits = self.options.limits;
        on_event(&AgentEvent::RunStarted {
            run: self.env.run,
            mission: c.id().to_string(),
            contract_sha256: c.sha256.clone(),
            model: self.model.identity().spec.clone(),
            workspace: self.env.workspace_label.clone(),
            max_turns: limits.max_turns,
            timeout_secs: limits.timeout.as_secs(),
        });
        let mut st = State {
            transcript: Transcript::new(if self.options.memory {
                vec![
                    ChatMessage::system(memory_system_prompt(self.env.registry, &c.mission.tools)),
                    ChatMessage::user(memory_task_message(c)),
                ]
            } else {
                vec![
                    ChatMessage::system(self.desk_system_prompt()),
                    ChatMessage::user(self.task(c)),
                ]
            }),
            trace: Vec::new(),
            calls: Vec::new(),
            stalled: 0,
            figures: RunFigures::default(),
            attempt: 0,
            attempt_id: None,
            attempt_changes: Vec::new(),
            started: Instant::now(),
            table_facts: Vec::new(),
            last_reply_cut: false,
            failed_as_is: None,
            held: Vec::new(),
            no_paste_sources: None,
            no_paste: None,
            no_paste_shown: Default::default(),
        };
        self.env.journal.append_event(
            Some(self.env.run),
            "levers",
            &json!({"levers": self.options.levers.to_json(), "tools": self.tools(),
                    "samples": self.samples()}),
        )?;
        st.figures.samples = self.samples();
        self.steer_off_pastes(&mut st)?;
        let (end, verdict, accepted) = match self.refusal_before_start() {
            Some(end) => (end, None, false),
            None => {
                self.calls_before_first_step(&mut st, on_event)?;
                self.attempts(&mut st, on_event)?
            }
        };
        self.finish(st, end, verdict, accepted, on_event)
    }

    /// Sets which inputs the run may hold against pastes (lever `no-paste`) and journals them,
    /// with whether the backend applies the penalty (an `openai:` endpoint's request leaves it
    /// out; a scripted model ignores it).
    fn steer_off_pastes(&self, st: &mut State) -> Result<(), AgentError> {
        if !self.options.levers.no_paste || self.options.memory {
            return Ok(());
        }
        let Some(found) = no_paste_sources(self.env.contract) else {
            return Ok(());
        };
        self.env.journal.append_event(
            Some(self.env.run),
            "no_paste",
            &json!({"sources": found.paths, "row_end_tables": found.tables,
                    "allowed_tokens": found.allowed_tokens,
                    "backend_applies": is_embedded(self.model.identity())}),
        )?;
        st.no_paste_sources = Some(found);
        Ok(())
    }

    /// Holds this step's no-paste history (the sources read whole so far) and journals it
    /// when it changes.
    fn hold_no_paste(&self, st: &mut State, step: u32) -> Result<(), AgentError> {
        let Some(sources) = &st.no_paste_sources else {
            return Ok(());
        };
        let held = sources.held(self.env.contract, self.env.world, &st.trace);
        let own_repeats = held.history.as_ref().is_some_and(|h| h.own_repeats);
        let shown = (held.paths, held.tables, held.cut, own_repeats);
        if shown != st.no_paste_shown {
            self.env.journal.append_event(
                Some(self.env.run),
                "no_paste_held",
                &json!({"step": step, "sources": shown.0, "tables": shown.1,
                        "cut": shown.2, "own_repeats": shown.3}),
            )?;
            st.no_paste_shown = shown;
        }
        st.no_paste = held.history;
        Ok(())
    }

    fn refusal_before_start(&self) -> Option<RunEnd> {
        let m = &self.env.contract.mission;
        if self.options.automatic_judgment && m.mode == Mode::HumanReviewOnly {
            let e = crate::checks::JudgeError::HumanReviewOnly { id: m.id.clone() };
            return Some(RunEnd::Refused {
                message: e.to_string(),
            });
        }
        let chars = m.prompt.chars().count();
        if chars > MAX_INPUT_CHARS {
            let hit = CapHit::InputChars {
                limit: MAX_INPUT_CHARS,
                chars,
                what: "the mission's prompt".into(),
            };
            return Some(RunEnd::Refused {
                message: hit.message(),
            });
        }
        None
    }

    /// Attempts until a pass, a stop, or the attempt cap. Returns the end, the last verdict,
    /// and whether the last finish was accepted.
    fn attempts(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<(RunEnd, Option<Verdict>, bool), AgentError> {
        let limits = self.options.limits;
        let mut last: Option<Verdict> = None;
        // `monotone-attempts`: `last` is the best version's verdict (what is on disk after an
        // undo), and `restored` what the last undo did, for the next attempt's feedback.
        let monotone = self.options.levers.monotone_attempts && !self.options.memory;
        let mut restored: Option<Restored> = None;
        for n in 1..=limits.attempts {
            // Every attempt judges against the frozen copy; a file edited on disk since it was
            // frozen is refused rather than silently ignored or silently adopted.
            if let Err(e) = self.env.contract.verify_unchanged(self.env.mission_file) {
                return Ok((
                    RunEnd::ContractChanged {
                        message: e.to_string(),
                    },
                    last,
                    false,
                ));
            }
            let id = self.env.journal.begin_attempt(self.env.run, STRATEGY)?;
            st.attempt = n;
            st.stalled = 0;
            st.attempt_id = Some(id);
            st.attempt_changes.clear();
            st.figures.attempts = n;
            on_event(&AgentEvent::AttemptStarted { attempt: n });
            if let Some(v) = &last {
                if monotone {
                    // A fresh start from the deliverable as it stands, not from the steps
                    // that led to it.
                    let feedback = self.monotone_feedback(v, restored.take().as_ref(), st)
                        + &self.finish_withheld(st, n)?;
                    st.transcript.restart();
                    st.transcript.push_feedback(
                        ChatMessage::user(feedback),
                        format!("attempt {n} began from the current deliverable"),
                    );
                } else {
                    let feedback = if self.options.memory {
                        memory_retry_feedback(v)
                    } else {
                        let quotes = self.quotes_source_lines(v).then(|| read_whole(st));
                        retry_feedback(v, quotes.as_deref()) + &self.finish_withheld(st, n)?
                    };
                    st.transcript.push_feedback(
                        ChatMessage::user(feedback),
                        format!("attempt {n} began after failed checks"),
                    );
                }
            } else if self.options.plan {
                if let Some(end) = self.plan(st, on_event)? {
                    self.env
                        .journal
                        .finish_attempt(id, &format!("stopped: {}", end.message()))?;
                    return Ok((end, last, false));
                }
            }
            match self.act(st, on_event)? {
                Some(end) => {
                    self.env
                        .journal
                        .finish_attempt(id, &format!("stopped: {}", end.message()))?;
                    // For the record: what the world looks like when the run stopped (with
                    // `monotone-attempts`, after undoing a stopped attempt that made it worse).
                    let verdict = match end {
                        RunEnd::ContractChanged { .. } | RunEnd::ApprovalUnavailable { .. } => None,
                        _ => {
                            let v = self.judge(st, on_event)?;
                            Some(match last.as_ref().filter(|_| monotone) {
                                Some(best) if !regressions(best, &v).is_empty() => {
                                    let broke = regressions(best, &v);
                                    self.undo_attempt(st, n, broke, on_event)?.0
                                }
                                _ => v,
                            })
                        }
                    };
                    return Ok((end, verdict, false));
                }
                None => {
                    let verdict = self.judge(st, on_event)?;
                    let mut outcome = if verdict.passed {
                        "passed".to_string()
                    } else {
                        let deciding = verdict.checks.iter().filter(|c| !c.advisory);
                        format!(
                            "failed: {} of {} checks",
                            deciding.clone().filter(|c| !c.passed).count(),
                            deciding.count()
                        )
                    };
                    let verdict = match last.as_ref().filter(|_| monotone) {
                        Some(best) if !regressions(best, &verdict).is_empty() => {
                            let broke = regressions(best, &verdict);
                            outcome.push_str(&format!(
                                "; undone: it failed {} that the previous version passed",
                                broke.join(", ")
                            ));
                            let (after, r) = self.undo_attempt(st, n, broke, on_event)?;
                            restored = Some(r);
                            after
                        }
                        _ => verdict,
                    };
                    self.env.journal.finish_attempt(id, &outcome)?;
                    on_event(&AgentEvent::AttemptFinished {
                        attempt: n,
                        outcome,
                    });
                    if verdict.passed {
                        return Ok((RunEnd::Judged, Some(verdict), true));
                    }
                    st.failed_as_is = self.failed_as_is(&verdict);
                    last = Some(verdict);
                }
            }
        }
        let hit = CapHit::Attempts {
            limit: limits.attempts,
        };
        self.cap(st, &hit, on_event)?;
        // The last finish was accepted and judged; the cap only stops a further retry.
        Ok((RunEnd::Judged, last, true))
    }

    /// Undoes every change attempt `n` applied, newest first, through the journal's undo (each
    /// undo is itself a journaled change a person sees and can undo), then judges the world
    /// again: the verdict is what is on disk, the previous version when every undo went
    /// through. An undo that is refused (the file changed since) stops the rest and is said.
    fn undo_attempt(
        &mut self,
        st: &mut State,
        n: u32,
        broke: Vec<String>,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<(Verdict, Restored), AgentError> {
        let mut undone = Vec::new();
        let mut error = None;
        for (change, path) in st.attempt_changes.iter().rev() {
            match self.executor.undo_change(*change) {
                Ok(r) => {
                    // The undo is a change of this run: the judge sees it in the trace. What it
                    // restored counts as this run's work only when this run wrote exactly
                    // that content before (else `written_this_run` fails, as it should).
                    let now = self
                        .env
                        .world
                        .read(&r.path)
                        .ok()
                        .flatten()
                        .map(|b| crate::mission::sha256_hex(&b));
                    let ours = now.is_none()
                        || st.trace.iter().any(|e| {
                            e.executed() && e.mutated_path(&r.path) && e.written_sha256 == now
                        });
                    st.trace.push(
                        TraceEntry::new("undo", Some(&r.path), "executed", true)
                            .with_written(if ours { now } else { None }),
                    );
                    undone.push(UndoneChange {
                        change: change.0,
                        undo_change: r.change_id.0,
                        path: r.path,
                        diff: r.diff,
                    });
                }
                Err(e) => {
                    error = Some(format!("change {change} to \"{path}\" was not undone: {e}"));
                    break;
                }
            }
        }
        st.attempt_changes.clear();
        self.env.journal.append_event(
            Some(self.env.run),
            "attempt_undone",
            &json!({"attempt": n, "broke": broke, "undone": undone, "error": error}),
        )?;
        on_event(&AgentEvent::AttemptUndone {
            attempt: n,
            broke: broke.clone(),
            undone,
            error: error.clone(),
        });
        let verdict = self.judge(st, on_event)?;
        Ok((
            verdict,
            Restored {
                attempt: n,
                broke,
                error,
            },
        ))
    }

    /// Whether a retry after `v` quotes input lines (lever `source-lines`): not when a failed
    /// check counts lines or rows, since the lines another check quotes could be those very
    /// lines and so tell the count.
    fn quotes_source_lines(&self, v: &Verdict) -> bool {
        use crate::checks::{Aggregate, Computed};
        let counts = |spec: &CheckSpec| {
            matches!(
                spec,
                CheckSpec::NumericConsistency {
                    expected: Computed::Lines { .. }
                        | Computed::Matches {
                            op: Aggregate::Count,
                            ..
                        }
                        | Computed::Csv {
                            op: Aggregate::Count,
                            ..
                        },
                    ..
                }
            )
        };
        let checks = &self.env.contract.mission.checks;
        self.options.levers.source_lines
            && !v
                .checks
                .iter()
                .filter(|c| !c.passed && !c.advisory)
                .any(|c| checks.iter().any(|k| k.id == c.id && counts(&k.spec)))
    }

    /// What the model reads when a `monotone-attempts` retry starts: what the last undo did,
    /// each failed check as its requirement in plain words and the facts it found (never a
    /// value computed from the inputs, never a gold file), the deliverable as it stands, and
    /// the ask for the smallest edit.
    fn monotone_feedback(&self, v: &Verdict, restored: Option<&Restored>, st: &State) -> String {
        let table_facts = &st.table_facts;
        let c = self.env.contract;
        let path = &c.mission.required_artifact;
        let mut s = String::new();
        if let Some(r) = restored {
            s.push_str(&format!(
                "Your attempt {} made {} fail, which passed before, so its changes were undone \
                 and the better version stands.",
                r.attempt,
                r.broke.join(", ")
            ));
            if let Some(e) = &r.error {
                s.push_str(&format!(" Not everything could be undone: {e}."));
            }
            s.push('\n');
        }
        s.push_str(
            "The harness checked the deliverable on disk. These checks fail (what each requires, \
             and what it found):\n",
        );
        for chk in v.checks.iter().filter(|c| !c.passed && !c.advisory) {
            let wants = c
                .mission
                .checks
                .iter()
                .find(|k| k.id == chk.id)
                .map(|k| self.hinted_requirement(&k.spec))
                .unwrap_or_default();
            let found = super::prompt::clip(
                &chk.feedback.join("; "),
                super::prompt::MAX_FAILED_CHECK_CHARS,
            );
            s.push_str(&format!(
                "- {} ({}): requires: {wants} Found: {found}\n",
                chk.id, chk.kind
            ));
        }
        if self.quotes_source_lines(v) {
            s.push_str(&source_lines_note(v, &read_whole(st)));
        }
        match self.env.world.read(path) {
            Ok(Some(bytes)) => s.push_str(&format!(
                "The deliverable {path} now reads, between the lines <<< and >>>:\n<<<\n{}\n>>>\n",
                super::prompt::clip(&String::from_utf8_lossy(&bytes), MAX_DELIVERABLE_CHARS)
            )),
            _ => s.push_str(&format!("The deliverable {path} does not exist yet.\n")),
        }
        s.push_str(&earlier_table_facts(table_facts));
        if self.rewrite_outline().is_some() {
            s.push_str(
                "Keep everything that passes. Make the smallest change that fixes the failed \
                 checks: rewrite_section with the heading of the section to fix and its whole new \
                 text (keep what passes in it), or edit_file with old_text copied exactly from the \
                 text above; do not rewrite the whole file. Then check it and call finish.",
            );
        } else {
            s.push_str(
                "Keep everything that passes. Make the smallest edit that fixes the failed checks: \
                 edit_file with old_text copied exactly from the text above and the new_text to put \
                 in its place; do not rewrite the whole file. Then read it back and call finish.",
            );
        }
        s
    }

    /// The plan phase: one reply, a list of at most `max_plan_steps` steps.
    fn plan(
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
    fn act(
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
            // Per step: what decoding offers follows the workspace (see `offered_tools`), and
            // is `finish` alone once the work is done (`finish-when-met`).
            // ... and never offers `finish` on the very bytes a failed verdict judged
            // (`change-before-finish`).
            let withheld = self.unchanged_failure(st).is_some();
            let ready = !withheld && self.finish_ready(st);
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
                .then(|| self.action_schema(&tools, false, &st.held));
            let short_schema = schema
                .as_ref()
                .filter(|_| self.options.levers.short_after_cut)
                .map(|_| self.action_schema(&tools, true, &st.held));
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
            match self.step(st, n, &asked, started, on_event)? {
                StepEnd::Continue => {}
                StepEnd::FinishAccepted => return Ok(None),
                StepEnd::Stop(end) => return Ok(Some(end)),
            }
        }
    }

    /// Journals and reports what the model backend has to say (a restarted worker).
    fn model_notices(&mut self, on_event: &mut dyn FnMut(&AgentEvent)) -> Result<(), AgentError> {
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

    /// Checks the caps that stop a run; records and reports the one that fired.
    fn stop_for_caps(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<Option<RunEnd>, AgentError> {
        let limits = self.options.limits;
        let elapsed = self.clock.elapsed();
        let hit = if elapsed >= limits.timeout {
            Some(CapHit::RunTimeout {
                limit_secs: limits.timeout.as_secs(),
                elapsed_secs: elapsed.as_secs(),
            })
        } else if st.figures.steps >= limits.max_turns {
            Some(CapHit::Turns {
                limit: limits.max_turns,
            })
        } else if st.stalled >= MAX_STEPS_WITHOUT_PROGRESS {
            Some(CapHit::NoProgress {
                limit: MAX_STEPS_WITHOUT_PROGRESS,
            })
        } else {
            None
        };
        match hit {
            Some(hit) => {
                self.cap(st, &hit, on_event)?;
                Ok(Some(RunEnd::Cap { hit }))
            }
            None => Ok(None),
        }
    }

    fn cap(
        &mut self,
        st: &State,
        hit: &CapHit,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<(), AgentError> {
        let mut step = NewStep::new(StepKind::Cap);
        step.attempt = st.attempt_id;
        step.detail = json!({"cap": hit, "message": hit.message()});
        self.env.journal.append_step(self.env.run, &step)?;
        self.env.journal.append_event(
            Some(self.env.run),
            "cap",
            &json!({"cap": hit.name(), "message": hit.message()}),
        )?;
        on_event(&AgentEvent::Cap {
            cap: hit.name().into(),
            message: hit.message(),
        });
        Ok(())
    }

    /// One reply: a format error, or an action sent through the gate (or refused before it).
    fn step(
        &mut self,
        st: &mut State,
        n: u32,
        asked: &Asked,
        started: Instant,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<StepEnd, AgentError> {
        let (action, repairs) = match &asked.reply {
            Reply::FormatError(e) => {
                st.figures.format_errors += 1;
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
                    _ => e.to_string(),
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
                return Ok(StepEnd::Continue);
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
        let mut stop: Option<RunEnd> = None;
        let (typed_refusal, gate_args) = match known
            .then(|| self.typed_arguments(&tool, &params))
            .flatten()
        {
            Some(Err(reason)) => (Some(reason), None),
            Some(Ok(args)) => (None, Some(args)),
            None => (None, None),
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
            self.env.journal.append_event(
                Some(self.env.run),
                "cap",
                &json!({"cap": hit.name(), "message": hit.message()}),
            )?;
            on_event(&AgentEvent::Cap {
                cap: hit.name().into(),
                message: hit.message(),
            });
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
        } else if tool == "finish" {
            let refused = match self.unchanged_failure(st) {
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
            match refused {
                Err(refusal) => {
                    st.figures.finish_refusals += 1;
                    kind = StepKind::Refusal;
                    let tools = self.tools();
                    let offered = |t: &'static str| tools.iter().any(|have| have == t).then_some(t);
                    let typed = self.deliverable_writer();
                    let reason = refusal.reason_with(
                        typed.or_else(|| offered("create_file")),
                        typed.or_else(|| offered("replace_file")),
                    );
                    self.env.journal.append_event(
                        Some(self.env.run),
                        "finish_refused",
                        &json!({"step": n, "reason": reason}),
                    )?;
                    on_event(&AgentEvent::FinishRefused {
                        step: n,
                        reason: reason.clone(),
                    });
                    GateReport {
                        outcome: GateOutcome::Denied,
                        reason,
                        result: json!({"finished": false}),
                    }
                }
                Ok(()) => {
                    let report = self.submit(&call_id, &tool, &params);
                    if report.outcome == GateOutcome::Executed
                        || report.outcome == GateOutcome::Replayed
                    {
                        accepted = true;
                        on_event(&AgentEvent::FinishAccepted { step: n });
                    }
                    report
                }
            }
        } else if self.options.memory && tool == "final_answer" {
            // No finish rules: the answer ends the attempt and proves nothing by itself.
            let report = self.submit(&call_id, &tool, &params);
            if report.outcome == GateOutcome::Executed || report.outcome == GateOutcome::Replayed {
                accepted = true;
                on_event(&AgentEvent::FinishAccepted { step: n });
            }
            report
        } else if let Some((args, note)) = gate_args {
            let mut report = self.submit(&call_id, self.gate_tool(&tool), &args);
            if let Some(note) = note.filter(|_| report.outcome == GateOutcome::Executed) {
                report.reason = [report.reason.as_str(), &note]
                    .iter()
                    .filter(|s| !s.is_empty())
                    .copied()
                    .collect::<Vec<_>>()
                    .join("; ");
            }
            report
        } else {
            self.submit(&call_id, &tool, &params)
        };
        self.prepare_read_result(st, &tool, &mut report);
        let writes = self
            .env
            .registry
            .get(self.gate_tool(&tool))
            .is_some_and(|t| t.mutates());
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
            .find(|(t, p, _)| *t == tool && *p == params)
            .map(|(_, _, step)| *step);
        st.calls.push((tool.clone(), params.clone(), n));
        if report.outcome == GateOutcome::Executed && mutates {
            if let Some(change) = report.result.get("change_id").and_then(Value::as_i64) {
                st.attempt_changes
                    .push((ChangeId(change), path.unwrap_or_default().to_string()));
            }
        }
        let refused_finish = kind == StepKind::Refusal;
        st.stalled = if repeated.is_some() || refused_finish {
            st.stalled + 1
        } else {
            0
        };
        let mut entry = self.trace_entry(&tool, path, &report, mutates);
        let shown_back = self.show_back(&entry);
        entry.shown_back = shown_back.is_some();
        let pinned = self.pinned_input(&entry);
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
        let mut feedback = result_message(n, &tool, &report);
        if let Some(shown) = shown_back {
            feedback.push('\n');
            feedback.push_str(&shown);
        }
        if let Some(earlier) = repeated {
            // Small models loop on one call; say so plainly (a hint: the call still ran).
            feedback.push_str(&format!(
                "\nYou made exactly this call already at step {earlier}; its result is above. Do the next thing instead."
            ));
        }
        if !self.options.memory {
            feedback.push('\n');
            let tools = without_finish_if(self.unchanged_failure(st).is_some(), self.tools());
            feedback.push_str(&progress_note(
                self.env.contract,
                &st.trace,
                self.deliverable_writer(),
                &tools,
            ));
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
        let messages = vec![
            ChatMessage::assistant(asked.raw.clone()),
            ChatMessage::user(feedback),
        ];
        let record = format!("step {n}: {tool} {} -> {}", path.unwrap_or(""), summary);
        match pinned {
            Some(input) => st.transcript.push_pinned(messages, record, &input),
            None => st.transcript.push(messages, record),
        }
        Ok(match (stop, accepted) {
            (Some(end), _) => StepEnd::Stop(end),
            (None, true) => StepEnd::FinishAccepted,
            (None, false) => StepEnd::Continue,
        })
    }

    /// A read's result as the model is shown it: Rein's facts added (the table facts of a
    /// table, lever `table-facts`; the label lines of an input fields are copied from, lever
    /// `label-lines`), then cut at a line to what the prompt shows whole; the table facts
    /// remembered for later feedback are those left in it.
    fn prepare_read_result(&self, st: &mut State, tool: &str, report: &mut GateReport) {
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
    }

    /// Cuts the last step's longest message when the prompt is over `budget` with every other
    /// step trimmed, and journals the cut (a `context_cut` event); whether it cut.
    fn clip_to_fit(&mut self, st: &mut State, budget: u32) -> Result<bool, AgentError> {
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

    /// Levers `inputs-first` and `stats-first`: before the first step Rein reads the mission's
    /// input files and makes the `table_stats` calls the contract's table figures name, through
    /// the gate, journals each call as its own, and the transcript starts with the calls and
    /// their results. Where a lever does not apply, the journal says why and the model makes the
    /// calls itself.
    fn calls_before_first_step(
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
        if let Some(last) = turns.last_mut() {
            let progress = progress_note(
                self.env.contract,
                &st.trace,
                self.deliverable_writer(),
                &self.tools(),
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
    fn inputs_first_reads(
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
    fn stats_first_calls(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
        before: &[ChatMessage],
    ) -> Result<Vec<ChatMessage>, AgentError> {
        let planned = stats_calls(self.env.contract, &self.tools()).and_then(|planned| {
            let tables = tables_to_read(&planned, self.env.world, &st.trace, &self.tools());
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
            let id = format!("run{}-rein-stats{}", self.env.run, i + 1);
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
        turns.extend(stats_turns(&shown));
        Ok(turns)
    }

    /// Whether the first prompt has room for `stats-first`'s reads and calls: its head, the
    /// turns `before`, the tables' text and about [`STATS_TURN_CHARS`] per call within
    /// [`REIN_TURNS_MAX_PERCENT`] of the prompt budget. They sit in the head, which is never
    /// trimmed: the 1.5B's first prompt on report-sales-regions with them was 6,627 tokens,
    /// over the 6,144-token window, and the run ended before its first step. Decided before any
    /// call, so the trace never holds a read the model was not shown.
    fn room_for(
        &self,
        st: &State,
        before: &[ChatMessage],
        planned: &Planned,
        table_chars: usize,
    ) -> Result<(), String> {
        let mut prompt = st.transcript.messages();
        prompt.extend(before.iter().cloned());
        let chars = planned.calls.len() * STATS_TURN_CHARS + table_chars;
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
    /// the call id `run<N>-rein-<kind><i>`.
    fn reads_for_model(
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
            let id = format!("run{}-rein-{kind}{}", self.env.run, i + 1);
            let params = json!({ "path": path });
            let report =
                self.call_for_model(st, on_event, &id, "read_file", &params, (thought, lever))?;
            reads.push((path.clone(), report));
        }
        Ok(reads)
    }

    /// One call Rein makes for the model before its first step: through the gate, on the trace
    /// as Rein's, journaled and reported as a step of its own.
    fn call_for_model(
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
            attempt: 1,
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

    /// With the `read-back` lever, what the model reads after an applied write of the
    /// deliverable: the file as it is on disk now, whole (a file too long to show whole is not
    /// shown back, and the model reads it with `read_file` as before).
    fn show_back(&self, entry: &TraceEntry) -> Option<String> {
        let path = &self.env.contract.mission.required_artifact;
        if !self.options.levers.read_back || self.options.memory || !entry.mutated_path(path) {
            return None;
        }
        let bytes = self.env.world.read(path).ok().flatten()?;
        let text = std::str::from_utf8(&bytes).ok()?;
        if text.chars().count() > MAX_DELIVERABLE_CHARS
            || entry.written_sha256.as_deref() != Some(crate::mission::sha256_hex(&bytes).as_str())
        {
            return None;
        }
        Some(format!(
            "Rein read {path} back for you; it now reads, between the lines <<< and >>>:\n<<<\n{text}\n>>>\nCheck it against the task: fix what is wrong, or call finish if it is complete."
        ))
    }

    /// The input file a step read whole, whose text trimming keeps longest (lever
    /// `keep-inputs`); `None` for any other step.
    fn pinned_input(&self, entry: &TraceEntry) -> Option<String> {
        let path = entry.path.as_deref()?;
        if !(self.options.levers.keep_inputs && entry.full_read && entry.executed()) {
            return None;
        }
        // Pinned under the mission's own spelling, so `./notes/a.md` releases `notes/a.md`.
        self.env
            .contract
            .mission
            .inputs
            .iter()
            .find(|i| crate::checks::same_path(i, path))
            .cloned()
    }

    /// The trace entry of a call, with what the judge needs to know of its effect: whether a
    /// read showed the model the whole file or which lines of it, and what an executed change
    /// left on disk.
    fn trace_entry(
        &self,
        tool: &str,
        path: Option<&str>,
        report: &GateReport,
        mutates: bool,
    ) -> TraceEntry {
        let entry = TraceEntry::from_gate(tool, path, report.outcome, mutates);
        if !entry.executed() {
            return entry;
        }
        let r = &report.result;
        // A sandbox read always returns the whole file. A file read is whole only if the model
        // was shown all of it.
        let shown = tool == "read_file" && !self.options.memory && result_shown_whole(report);
        let full_read =
            tool == "read_file" && (self.options.memory || (shown && shows_whole_file(r)));
        let lines = shown.then(|| shown_lines(r)).flatten();
        let written = match path {
            Some(p) if mutates && !is_variable_tool(tool) => self
                .env
                .world
                .read(p)
                .ok()
                .flatten()
                .map(|b| crate::mission::sha256_hex(&b)),
            _ => None,
        };
        entry
            .with_full_read(full_read)
            .with_lines_shown(lines)
            .with_written(written)
    }

    fn submit(&mut self, call_id: &str, tool: &str, params: &Value) -> GateReport {
        let call = ToolCall {
            id: call_id.to_string(),
            tool: tool.to_string(),
            arguments: params.clone(),
        };
        self.executor.submit(&call, self.approver)
    }

    fn record(
        &self,
        st: &State,
        kind: StepKind,
        ev: &StepEvent,
        raw: Option<&str>,
        detail: Value,
    ) -> Result<(), AgentError> {
        let mut step = NewStep::new(kind);
        step.attempt = st.attempt_id;
        step.thought = ev.thought.clone();
        step.action = ev.action.clone();
        step.call_id = ev.call_id.clone();
        step.reply = raw.map(str::to_string);
        step.detail = detail;
        step.prompt_tokens = Some(ev.prompt_tokens);
        step.completion_tokens = Some(ev.completion_tokens);
        step.elapsed_ms = Some(ev.elapsed_ms);
        self.env.journal.append_step(self.env.run, &step)?;
        Ok(())
    }

    /// The judge: every check of the frozen contract against the world, each recorded.
    fn judge(
        &mut self,
        st: &State,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<Verdict, AgentError> {
        let decider: Option<&mut dyn Decider> = match self.decider {
            Some(ref mut d) => Some(&mut **d),
            None => None,
        };
        let verdict = evaluate(self.env.contract, self.env.world, &st.trace, decider);
        for check in &verdict.checks {
            self.env.journal.record_check(
                self.env.run,
                &NewCheck {
                    attempt: st.attempt_id,
                    kind: check.kind.clone(),
                    name: check.id.clone(),
                    passed: check.passed,
                    advisory: check.advisory,
                    facts: json!(check.facts),
                },
            )?;
            on_event(&AgentEvent::Check(check.clone()));
        }
        Ok(verdict)
    }

    fn finish(
        self,
        st: State,
        end: RunEnd,
        verdict: Option<Verdict>,
        accepted: bool,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<RunOutcome, AgentError> {
        let mut figures = st.figures;
        figures.elapsed_ms = st.started.elapsed().as_millis() as u64;
        let passed = accepted && verdict.as_ref().is_some_and(|v| v.passed);
        let status = match &end {
            _ if passed => RunStatus::Pass,
            RunEnd::Judged => RunStatus::Fail,
            _ => RunStatus::Aborted,
        };
        let outcome = RunOutcome {
            run: self.env.run,
            mission: self.env.contract.id().to_string(),
            contract_sha256: self.env.contract.sha256.clone(),
            status,
            end,
            verdict,
            finish_accepted: accepted,
            figures,
        };
        let doc = outcome.document();
        self.env
            .journal
            .append_event(Some(self.env.run), "run_ended", &doc)?;
        self.env.journal.finish_run(self.env.run, status, &doc)?;
        on_event(&AgentEvent::RunEnded {
            run: self.env.run,
            status: status.to_string(),
            reason: outcome.reason(),
        });
        Ok(outcome)
    }
}

/// What the journal keeps of a step's call: its parameters, the gate's outcome and reason, the
/// summary, and the result as the prompt clips it.
fn step_detail(params: &Value, report: &GateReport, summary: &str) -> Value {
    json!({
        "parameters": params,
        "outcome": report.outcome.as_str(),
        "reason": report.reason,
        "summary": summary,
        "result": super::prompt::clip(&report.result.to_string(), super::prompt::MAX_RESULT_CHARS),
    })
}

fn add_tokens(f: &mut RunFigures, c: &rein_protocol::Completion) {
    f.prompt_tokens += u64::from(c.prompt_tokens);
    f.cached_tokens += u64::from(c.cached_tokens);
    f.completion_tokens += u64::from(c.completion_tokens);
}

/// What the model reads when an attempt's finish was accepted but the judge failed it: which
/// checks failed and what the deliverable stated. Never a value computed from the inputs (the
/// expected total, the missing names): those stay in the journal, and the model must get them
/// from the inputs or from a tool that computes them visibly. With `source_lines` (the lever)
/// the input lines the failed checks compared against follow, of the files in `source_lines`.
fn retry_feedback(v: &Verdict, source_lines: Option<&[String]>) -> String {
    let mut s =
        String::from("The harness checked your deliverable on disk and these checks failed:\n");
    for c in v.checks.iter().filter(|c| !c.passed && !c.advisory) {
        let facts = super::prompt::clip(
            &c.feedback.join("; "),
            super::prompt::MAX_FAILED_CHECK_CHARS,
        );
        s.push_str(&format!("- {} ({}): {facts}\n", c.id, c.kind));
    }
    if let Some(read) = source_lines {
        s.push_str(&source_lines_note(v, read));
    }
    s.push_str(
        "Re-read the inputs you need, fix the deliverable (edit_file or replace_file), read it back, then call finish again.",
    );
    s
}

/// Whether a `read_file` result shows its file whole: from line 1 to the last, nothing cut.
fn shows_whole_file(r: &Value) -> bool {
    r.get("start_line").and_then(Value::as_u64) == Some(1)
        && r.get("truncated").and_then(Value::as_bool) == Some(false)
        && r.get("file_truncated").and_then(Value::as_bool) != Some(true)
        && r.get("end_line").and_then(Value::as_u64) == r.get("total_lines").and_then(Value::as_u64)
}

/// The lines of a file a `read_file` result shows whole, as `[first, last, total]`: none for a
/// file read only in part of its bytes, and a line cut inside is not shown whole.
fn shown_lines(r: &Value) -> Option<[u64; 3]> {
    let number = |key: &str| r.get(key).and_then(Value::as_u64);
    if r.get("file_truncated").and_then(Value::as_bool) == Some(true) || r.get("content").is_none()
    {
        return None;
    }
    let (first, last, total) = (
        number("start_line")?,
        number("end_line")?,
        number("total_lines")?,
    );
    let inside = r.get("cut_inside_line").and_then(Value::as_bool) == Some(true);
    let last = if inside { last.checked_sub(1)? } else { last };
    (first <= last).then_some([first, last, total])
}

/// The files this run was shown whole, in one `read_file` or in line ranges that cover them
/// (levers `source-lines` and `copied-strings` use lines of these only).
fn read_whole(st: &State) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for p in st
        .trace
        .iter()
        .filter_map(|e| e.path.as_ref().filter(|p| e.reads(p)))
    {
        if !paths.contains(p) {
            paths.push(p.clone());
        }
    }
    paths.retain(|p| crate::checks::read_whole_at(&st.trace, p).is_some());
    paths
}

/// `tools` without `finish` when it is withheld (lever `change-before-finish`): what the action
/// schema offers and what the progress note may name.
fn without_finish_if(withheld: bool, mut tools: Vec<String>) -> Vec<String> {
    if withheld {
        tools.retain(|t| t != "finish");
    }
    tools
}

/// What a trace entry is about: the file a call named, or the variable a variable tool named
/// (so a check can tell which variable was read or set).
fn trace_target<'p>(tool: &str, params: &'p Value) -> Option<&'p str> {
    let key = if is_variable_tool(tool) {
        "name"
    } else {
        "path"
    };
    params.get(key).and_then(Value::as_str)
}

/// Why a `finish` is refused before the gate when its summary is over the cap: a model not
/// held to the schema while it decodes (a remote one) gets what to do instead of the schema's
/// echo of its whole summary, or the input cap's "split it into smaller pieces".
fn over_long_summary(tool: &str, params: &Value) -> Option<String> {
    use rein_workspace::desk::FINISH_SUMMARY_MAX_CHARS;
    let chars = params.get("summary")?.as_str()?.chars().count();
    (tool == "finish" && chars > FINISH_SUMMARY_MAX_CHARS).then(|| {
        format!(
            "the finish summary has {chars} characters, more than the cap of {FINISH_SUMMARY_MAX_CHARS}; nothing was checked: call finish again with a summary of at most {FINISH_SUMMARY_MAX_CHARS} characters (a sentence or two: the files are what is checked)"
        )
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Verified sampling narrows the schema the first draw was held to, so a short schema
    /// (after a cut reply) stays short for the extra draws.
    #[test]
    fn only_tool_keeps_that_tool_s_branches_as_they_are() {
        let branch = |tool: &str, cap: u64| {
            json!({"type": "object", "properties": {"action": {"const": tool},
                   "parameters": {"type": "object", "properties": {"content": {"type": "string", "maxLength": cap}}}}})
        };
        let schema = json!({"anyOf": [branch("read_file", 250), branch("create_file", 250), branch("rewrite_section", 250)]});
        let narrowed = only_tool(&schema, "create_file");
        assert_eq!(narrowed["anyOf"], json!([branch("create_file", 250)]));
        assert_eq!(
            only_tool(&schema, "rewrite_section")["anyOf"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        assert_eq!(only_tool(&schema, "unknown"), schema);
        assert_eq!(
            only_tool(&json!({"type": "object"}), "x"),
            json!({"type": "object"})
        );
    }
}
