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

use super::answer_lines::AnswerLines;
use super::bodies::constrain_bodies;
use super::caps::{input_over_cap, CapHit, Clock, Limits, SystemClock, MAX_INPUT_CHARS};
use super::caps::{MAX_REPLY_TOKENS, MAX_STEPS_WITHOUT_PROGRESS};
use super::checklist::{checklist_note, shown_checks_met};
use super::combined_totals::{combined_note, remember_shown_table, still_as_shown, ShownTable};
use super::copied::{
    copied_text_pattern, hold_document, HeldStrings, NoPattern, COPIED_PATTERN_MAX_CHARS,
};
use super::document_facts::add_document_facts;
use super::error::AgentError;
use super::event::{AgentEvent, StepEvent, UndoneChange};
use super::facts::{add_table_facts, earlier_table_facts, is_table_file, remember_table_facts};
use super::folder_facts::FOLDER_STATS;
use super::inputs_first::{action_text, files_to_read, read_turns};
use super::label_lines::add_label_lines;
use super::levers::{shorten_texts, Lever, Levers, SHORT_TEXT_MAX_CHARS};
use super::line_edits::{edits_by_line, with_line_advice, EDIT_LINES, LINE_FIXER, LINE_RETRY_NOTE};
use super::looped::{loop_note, looped_list, LoopedList};
use super::no_paste::{no_paste_sources, NoPasteSources};
use super::outcome::{RunEnd, RunFigures, RunOutcome};
use super::plan::make_plan;
use super::prompt::{
    memory_retry_feedback, memory_system_prompt, memory_task_message, mission_action_schema,
    progress_note, progress_parts, result_message, result_shown_whole, source_lines_note,
    summarize, system_prompt, task_message, task_reminder, type_document,
};
use super::read_cited::{cited_unread, held_reason, CitedDraft};
use super::read_fit::fit_read_result;
use super::rewrite::REWRITE_SECTION;
use super::row_query::TABLE_ROWS;
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
use super::whole_reads::{whole_read_note, widened_read, WidenedRead};
use super::whole_rewrite::{text_bytes, without_edit_advice, writes_whole, WHOLE_RETRY_NOTE};
use crate::checks::{
    evaluate, is_variable_tool, requirement, requirements_message_of, same_path, schema_violations,
    table_stats_hint, CheckSpec, Decider, Locator, TraceEntry, Verdict, World,
};
use crate::finish::{check_finish, FinishRefusal};
use crate::gate::{Approver, CallExecutor};
use crate::mission::{sha256_hex, FrozenContract, InputHash, Mode};

mod attempts;
mod auto_finish;
mod change_list;
mod cited;
mod draws;
mod echo;
mod file_notes;
mod first_calls;
mod folder_facts;
mod glob_reads;
mod own_totals;
mod steps;
mod stops;
mod task_search;
mod tools;
mod whole_reads;
mod wider;

/// Most writes one input holds (lever `read-cited`): the 1.5B, held once, wrote the same
/// answer again at once; an input it cannot read in full must not hold the run for good.
pub const CITED_HOLDS_MAX: u32 = 3;

/// The strategy name of the loop's attempts (one strategy today: act, then retry with the
/// judge's failed checks as feedback).
pub const STRATEGY: &str = "act";

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
    /// Whether the files the task edits in place were small text when the run began (lever
    /// `whole-rewrite`): measured the first time the lever asks, which is when the run's levers
    /// and tools are journaled, before any step; never measured with the lever off.
    small_editables: std::cell::OnceCell<bool>,
    /// Lever `line-edits`: whether the deliverable is edited by lines, decided once.
    line_editable: std::cell::OnceCell<bool>,
    /// Lever `write-json`, for a deliverable edited in place: whether `write_json` would write
    /// it back in the layout it had when the run began (measured as `small_editables` is).
    json_layout_kept: std::cell::OnceCell<bool>,
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
    /// The tables the model's reads last showed whole, with the text shown (lever
    /// `combined-totals`), and the sets of them already given combined figures.
    shown_tables: Vec<ShownTable>,
    combined_given: Vec<Vec<ShownTable>>,
    /// The figures of Rein's `folder_stats` call, repeated after each step's result (lever
    /// `folder-stats`).
    folder_figures: Option<String>,
    /// Rein's `folder_stats` figures in words as shown before the first step (lever
    /// `plain-counts`): a tool's result, which a deliverable may repeat (lever `no-echo`).
    folder_words: Option<String>,
    /// What the last `folder_stats` result took out before it was shown and journalled (lever
    /// `folder-stats`), for the journal's `folder_stats` event of Rein's own call.
    folder_withheld: crate::agent::folder_facts::Withheld,
    /// Whether the last reply was cut off at the reply cap (lever `short-after-cut`).
    last_reply_cut: bool,
    /// The list the last reply, cut at the reply cap, wrote over again (see
    /// [`crate::agent::looped`]).
    cut_list: Option<LoopedList>,
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
    /// The attempt in which the gate did not let Rein's own finish through (lever
    /// `auto-finish`): the model is asked for it instead for the rest of that attempt.
    auto_finish_refused_in: Option<u32>,
    /// How many writes each input held (lever `read-cited`), up to [`CITED_HOLDS_MAX`].
    cited_held: Vec<(String, u32)>,
    /// The last write `read-cited` held, given back once the inputs it named are read.
    cited_draft: Option<CitedDraft>,
    /// Files whose widened read (lever `whole-reads`) was not shown whole: their ranges are
    /// left as asked from then on, so a cut that names where to read on is never widened back.
    cut_whole_reads: Vec<String>,
    /// The attempt and how many writes in it were held for repeating Rein's words (lever
    /// `no-echo`), up to [`crate::agent::no_echo::ECHO_HOLDS_MAX`].
    echo_held: (u32, u32),
    /// The notes Rein added after the last step's result (progress, checklist, reminders):
    /// Rein's own wording, which lever `no-echo` holds a write to.
    rein_notes: String,
    /// The deliverable as it was in the workspace when the run began: an edit task's file,
    /// changed in place one `edit_file` at a time (lever `finish-when-met` leaves its finish to
    /// the model; lever `review-edits` shows the changes since).
    deliverable_at_start: Option<Vec<u8>>,
    /// The attempt in which a finish was held for a review (lever `review-edits`).
    reviewed_in: Option<u32>,
    /// The model's list of the changes to a deliverable edited in place, counted off (lever
    /// `change-list`); whether it was asked; the attempt in which a finish was held for it.
    change_list: Option<super::change_list::ChangeList>,
    change_list_asked: bool,
    change_held_in: Option<u32>,
    /// The attempt in which a finish was held for a total that disagrees with what the
    /// deliverable lists (lever `own-totals`), and the step count then.
    total_held_in: Option<u32>,
    total_held_at: Option<u32>,
    /// The model's notes on the files it read whole (lever `file-notes`), and the files read
    /// whole that have none because of a cap.
    file_notes: Vec<super::file_notes::FileNote>,
    file_notes_unnoted: Vec<String>,
    /// The list of notes as a step's message last showed it.
    file_notes_shown: String,
}

impl State {
    /// Whether a `finish` now may end otherwise than an earlier identical call: a change ran
    /// since the latest finish, or a review asked for it in this attempt (lever
    /// `review-edits`). A finish's outcome turns on the workspace, not on its summary, so such
    /// a call is no repeat: `repeat-escape` drew the 1.5B's finish after its second edit away
    /// from `finish` three times (it called `find_files` and `calculate` instead, thinking
    /// "Call finish.").
    fn finish_is_new(&self) -> bool {
        let changed_since = self
            .trace
            .iter()
            .rev()
            .take_while(|e| e.tool != "finish")
            .any(|e| e.mutated && e.executed());
        changed_since || self.held_in_attempt()
    }

    /// Whether a finish was held in this attempt, for a review, the list of changes or a
    /// total: one hold an attempt, then the next finish is judged.
    fn held_in_attempt(&self) -> bool {
        [self.reviewed_in, self.change_held_in, self.total_held_in].contains(&Some(self.attempt))
    }
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
            small_editables: std::cell::OnceCell::new(),
            line_editable: std::cell::OnceCell::new(),
            json_layout_kept: std::cell::OnceCell::new(),
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

    /// Whether a step's reads may end with Rein's figures over the tables of the same columns
    /// read so far (lever `combined-totals`, with `table-facts`).
    pub(super) fn combines_tables(&self) -> bool {
        let levers = &self.options.levers;
        levers.combined_totals && levers.table_facts && !self.options.memory
    }

    /// Lever `combined-totals`' figures over the tables of the same columns the model has
    /// been shown whole (`shown`), once no table input of the task is left unread (see
    /// [`combined_note`]); `given` holds the sets given figures already.
    fn combined_figures(
        &self,
        trace: &[crate::checks::TraceEntry],
        shown: &[ShownTable],
        given: &mut Vec<Vec<ShownTable>>,
    ) -> String {
        let waiting = self
            .env
            .contract
            .mission
            .inputs
            .iter()
            .any(|i| is_table_file(i) && crate::checks::read_whole_at(trace, i).is_none());
        let tables = if waiting {
            Vec::new()
        } else {
            still_as_shown(self.env.world, shown)
        };
        combined_note(&tables, given, waiting)
    }

    /// The tools of this run: the mission's, and with `facts-tools` the facts tools the
    /// registry has (with `folder-stats`, `folder_stats` too), for a desk mission that reads
    /// files (a memory-sandbox task keeps its own).
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
        // Desk tools a lever adds beside one the run offers already.
        for (on, beside, tool) in [
            (self.options.levers.folder_stats, "read_file", FOLDER_STATS),
            (self.options.levers.row_query, "table_stats", TABLE_ROWS),
        ] {
            if on
                && !self.options.memory
                && tools.iter().any(|t| t == beside)
                && self.env.registry.get(tool).is_some()
                && !tools.iter().any(|t| t == tool)
            {
                tools.push(tool.to_string());
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
        if self.rewrites_whole() {
            tools.retain(|t| t != "edit_file");
        }
        if self.edits_lines() {
            tools.retain(|t| t != "edit_file" && t != "replace_file");
            if !tools.iter().any(|t| t == EDIT_LINES) {
                tools.push(EDIT_LINES.to_string());
            }
        }
        if self.json_layout_lost() {
            tools.retain(|t| t != WRITE_JSON);
        }
        tools
    }

    /// The call a small change to the deliverable is made with: `edit_file`, with
    /// `whole-rewrite` (which does not offer it) `replace_file` and the whole file, with
    /// `line-edits` `edit_lines`.
    pub(super) fn in_place_fixer(&self) -> &'static str {
        if self.edits_lines() {
            LINE_FIXER
        } else if self.rewrites_whole() {
            "replace_file (the whole file)"
        } else {
            "edit_file"
        }
    }

    /// The calls a retry after a failed verdict (without `monotone-attempts`) names to fix the
    /// deliverable with: the ones this run offers.
    pub(super) fn retry_fixers(&self) -> &'static str {
        if self.edits_lines() {
            "edit_lines, every change in one call"
        } else if self.rewrites_whole() {
            "replace_file, the whole file"
        } else {
            "edit_file or replace_file"
        }
    }

    /// Lever `line-edits`: whether this run changes its deliverable with `edit_lines`,
    /// `edit_file` and `replace_file` not offered (see [`edits_by_line`]).
    pub(super) fn edits_lines(&self) -> bool {
        self.options.levers.line_edits
            && !self.options.memory
            && self.env.registry.get(EDIT_LINES).is_some()
            && *self.line_editable.get_or_init(|| {
                let m = &self.env.contract.mission;
                edits_by_line(m, &m.tools, |path| {
                    // As the tool reads it: UTF-8 with no NUL near the start.
                    let bytes = self.env.world.read(path).ok().flatten()?;
                    rein_workspace::desk::is_text(&bytes).then_some(bytes.len())
                })
            })
    }

    /// Lever `whole-rewrite`: whether this run writes its deliverable whole with
    /// `replace_file`, `edit_file` not offered (see [`writes_whole`]); never with `line-edits`,
    /// which takes precedence.
    pub(super) fn rewrites_whole(&self) -> bool {
        self.options.levers.whole_rewrite
            && !self.edits_lines()
            && !self.options.memory
            && *self.small_editables.get_or_init(|| {
                let m = &self.env.contract.mission;
                writes_whole(m, &m.tools, |path| {
                    text_bytes(self.env.world.read(path).ok().flatten().as_deref())
                })
            })
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
    /// stands. A deliverable that was in the workspace before the run is left to the model: it
    /// is edited in place, often in several calls, and no check the checklist may show tells
    /// when the last one is done (the 1.5B had auto-finish end four desk edit tasks after the
    /// first of their two or three edits).
    fn finish_ready(&self, st: &State) -> bool {
        // A total that disagrees with what the deliverable lists is held first, and the model
        // gets one step after the hold (lever `own-totals`).
        self.finish_rules_ready(st) && !self.total_pending(st)
    }

    /// [`Self::finish_ready`] whatever the deliverable's totals say.
    fn finish_rules_ready(&self, st: &State) -> bool {
        let c = self.env.contract;
        let artifact = &c.mission.required_artifact;
        self.options.levers.finish_when_met
            && !self.options.memory
            && st.deliverable_at_start.is_none()
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

    /// Lever `review-edits`: the review the first finish of an attempt that the finish rules
    /// accept is held for, when the deliverable was in the workspace before the run and has
    /// changed since, and a turn is left to act on it (a hold on the last turn would leave a
    /// right file unjudged). Once per attempt: asked again, after a first review, for "the
    /// missing change", the 1.5B changed a right value (`level = "warn"` to `"info"`).
    /// Records the review.
    fn edit_review(&self, st: &mut State) -> Option<String> {
        if !self.options.levers.review_edits
            || self.options.memory
            // One hold per attempt: after another lever's, the next finish is judged.
            || st.held_in_attempt()
            || st.figures.steps >= self.options.limits.max_turns
        {
            return None;
        }
        let before = st.deliverable_at_start.as_deref()?;
        let path = &self.env.contract.mission.required_artifact;
        let now = self.env.world.read(path).ok().flatten()?;
        if now == before {
            return None;
        }
        st.reviewed_in = Some(st.attempt);
        Some(super::edit_review::review_reason(
            path,
            before,
            &now,
            &self.env.contract.mission.prompt,
            self.in_place_fixer(),
        ))
    }

    /// With `rewrite-section`, for a desk mission whose Markdown deliverable must have
    /// headings: the outline `rewrite_section` keeps (it writes through `write_sections`; none
    /// where `answer-lines` holds the deliverable to a heading and its lines).
    fn rewrite_outline(&self) -> Option<Outline> {
        if !self.options.levers.rewrite_section || self.headed_template() {
            return None;
        }
        self.outline()
    }

    /// The deliverable's outline when `write_sections` could write it (a desk run whose
    /// registry has the tool), whatever the levers.
    fn outline(&self) -> Option<Outline> {
        if self.options.memory || self.env.registry.get(WRITE_SECTIONS).is_none() {
            return None;
        }
        let mut outline = Outline::of(self.env.contract)?;
        if self.options.levers.line_fields {
            outline =
                outline.with_line_fields(self.env.contract, self.options.levers.sibling_lines);
        }
        if self.options.levers.readable_figures {
            outline = outline.with_figure_checks(self.env.contract);
        }
        Some(outline)
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

    /// Whether a call of `tool` changes a file: the tool it runs as is registered and mutates.
    fn call_writes(&self, tool: &str) -> bool {
        self.env
            .registry
            .get(self.gate_tool(tool))
            .is_some_and(|t| t.mutates())
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
    /// headings: the outline `write_sections` writes (none where `answer-lines` holds the
    /// deliverable to a heading and its lines).
    fn typed_sections(&self) -> Option<Outline> {
        if !self.options.levers.write_sections || self.headed_template() {
            return None;
        }
        self.outline()
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
        if self.reads_globs() {
            s.push_str(glob_reads::GLOB_READS_TOOL_NOTE);
        }
        s
    }

    /// The task message: the mission's, and with `requirements` its checks in plain words.
    fn task(&self, c: &FrozenContract) -> String {
        let mut s = task_message(c);
        // `requirements-once`: a check listed (with its hint) under its heading is not
        // listed again in the numbered requirements nor hinted after them.
        let typed = self.typed_sections();
        let under_heading = |spec: &CheckSpec| {
            self.options.levers.requirements_once
                && typed
                    .as_ref()
                    .is_some_and(|outline| outline.lists_under_heading(spec))
        };
        if self.options.levers.requirements {
            let reqs = requirements_message_of(c, |spec| !under_heading(spec));
            if !reqs.is_empty() {
                s.push('\n');
                s.push_str(&reqs);
            }
        }
        for hint in c
            .mission
            .checks
            .iter()
            .filter(|k| !under_heading(&k.spec))
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
        if let Some(outline) = &typed {
            let fixer = if self.rewrite_outline().is_some() {
                "rewrite_section (one heading and its whole new text)"
            } else {
                self.in_place_fixer()
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
        let finish =
            matches!(&asked.reply, Reply::Action { action, .. } if action.action == "finish");
        if tools == ["finish"] || finish && st.finish_is_new() {
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
                    (!others.is_empty()).then(|| self.action_schema(&others, false, &st.held, None))
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
            shown_tables: Vec::new(),
            combined_given: Vec::new(),
            folder_figures: None,
            folder_words: None,
            folder_withheld: Default::default(),
            last_reply_cut: false,
            cut_list: None,
            failed_as_is: None,
            held: Vec::new(),
            no_paste_sources: None,
            no_paste: None,
            no_paste_shown: Default::default(),
            auto_finish_refused_in: None,
            cited_held: Vec::new(),
            cited_draft: None,
            cut_whole_reads: Vec::new(),
            echo_held: (0, 0),
            rein_notes: String::new(),
            deliverable_at_start: self
                .env
                .world
                .read(&c.mission.required_artifact)
                .ok()
                .flatten(),
            reviewed_in: None,
            change_list: None,
            change_list_asked: false,
            change_held_in: None,
            total_held_in: None,
            file_notes: Vec::new(),
            file_notes_unnoted: Vec::new(),
            file_notes_shown: String::new(),
            total_held_at: None,
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

/// Whether a `read_file` result shows its file whole: from line 1 to the last, nothing cut.
pub(super) fn shows_whole_file(r: &Value) -> bool {
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

/// Two parts of a call's reason, joined with "; ", an empty one left out.
pub(super) fn joined_reasons(first: &str, second: &str) -> String {
    [first, second]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("; ")
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
