//! The agent loop of a verified mission.
//!
//! Each step builds the prompt (system rules and the mission's tools, the task with its
//! required deliverable, the trace so far), asks the model for exactly one action
//! `{"thought", "action", "parameters"}`, sends it as a [`rein_protocol::ToolCall`] through the
//! execution gate ([`crate::gate::CallExecutor`]) and feeds the gate's report back. `finish` is
//! accepted only when the finish rules ([`crate::finish::check_finish`]) find evidence on disk;
//! then the judge runs the frozen contract's checks. A failed verdict starts another attempt
//! (up to the cap) with the failed checks as feedback; the contract on disk is re-verified before
//! every attempt.
//!
//! Every step is written to the journal and reported as an [`AgentEvent`]; every cap fires with
//! a sentence a person can read ([`CapHit::message`]); a model failure ends the run with its
//! reason, never a panic.
//!
//! | module | what it holds |
//! | --- | --- |
//! | `caps` | the hard caps, the limits of one run, the clock |
//! | `prompt` | system rules, tool signatures, the task, result messages, the action schema |
//! | `trim` | fitting the transcript into the context window |
//! | `read_fit` | a `read_file` result cut at a line to what the prompt shows |
//! | `step` | asking for one action and reading it (strictly, else with repair) |
//! | `plan` | the optional plan phase |
//! | `run` | the loop itself |
//! | `sections` | the `write-sections` lever: a Markdown deliverable's outline as tool fields |
//! | `stated` | the `stated-lines` lever: a section field held to hold a quoted number line |
//! | `bodies` | the decoding patterns of section fields (`stated-lines`, `plain-bodies`) |
//! | `outcome` | how a run ended, its figures and verdict document |
//! | `event` | what fronts render |
//! | `world` | the judge's view of a confined workspace |
//! | `decide` | a model as the judge's decider |
//! | `inputs_first` | the `inputs-first` lever: which inputs Rein reads before the first step |
//! | `edit_review` | the `review-edits` lever: a held finish shows the run's own edits |
//! | `change_list` | the `change-list` lever: the model's list of changes to a file edited in place, counted off |
//! | `stats_first` | the `stats-first` lever: which table figures Rein computes before the first step |
//! | `answer_lines` | the `answer-lines` lever: the lines a task quotes for its deliverable |
//! | `looped` | a reply cut at the reply cap while it wrote its list over again |
//! | `read_cited` | the `read-cited` lever: a first write held while it names an unread input |
//! | `wider_search` | the `wider-search` lever: the search Rein makes again after one that matched nothing |
//! | `task_search` | the `task-search` lever: the search of the task's words Rein makes before the first step |

mod answer_lines;
mod asked_counts;
mod bodies;
mod caps;
mod change_list;
mod checklist;
mod combined_totals;
mod copied;
pub use checklist::checklist_note;
mod decide;
mod document_facts;
mod edit_review;
mod error;
mod event;
mod facts;
mod file_notes;
mod folder_facts;
mod glob_reads;
mod inputs_first;
mod label_lines;
mod levers;
mod line_edits;
mod line_fields;
mod looped;
mod named_rows;
mod no_echo;
mod no_paste;
mod outcome;
mod own_totals;
mod plain_counts;
mod plan;
mod prompt;
mod read_cited;
mod read_fit;
mod readable_figures;
mod rewrite;
mod row_query;
mod run;
mod sampling;
mod sections;
mod stated;
mod stats_first;
mod step;
mod task_search;
mod trim;
mod whole_reads;
mod whole_rewrite;
mod wider_search;
mod world;

pub use caps::{
    input_over_cap, CapHit, Clock, Limits, SystemClock, MAX_ATTEMPTS_PER_STRATEGY, MAX_INPUT_CHARS,
    MAX_PLAN_STEPS, MAX_REPLY_TOKENS, MAX_STEPS_WITHOUT_PROGRESS, MAX_TURNS_PER_JOB, RUN_TIMEOUT,
};
pub use change_list::{
    ChangeList, CHANGE_LIST_MAX_FILE_BYTES, CHANGE_LIST_MAX_ITEMS, CHANGE_MAX_CHARS,
};
pub use decide::ModelDecider;
pub use error::AgentError;
pub use event::{AgentEvent, StepEvent, UndoneChange};
pub use file_notes::{NOTES_MAX, NOTES_PER_STEP_MAX, NOTE_MAX_CHARS};
pub use levers::{shorten_texts, Lever, LeverError, Levers, SHORT_TEXT_MAX_CHARS};
pub use outcome::{RunEnd, RunFigures, RunOutcome};
pub use plan::{read_plan, MAX_PLAN_STEP_CHARS};
pub use prompt::{
    clip, mission_action_schema, signature, system_prompt, task_message, type_document,
    MAX_FAILED_CHECK_CHARS, MAX_RESULT_CHARS, MAX_THOUGHT_CHARS,
};
pub use rewrite::REWRITE_SECTION;
pub use run::{
    begin_mission_run, is_embedded, takes_action_schema, Agent, AgentOptions, RunEnv, FACTS_TOOLS,
    MAX_DELIVERABLE_CHARS, REPEAT_ESCAPE_DRAWS, STRATEGY, WRITE_JSON,
};
pub use sampling::{
    best, judge_candidate, Candidate, OverlayWorld, MAX_SAMPLES, SAMPLE_TEMPERATURE,
};
pub use sections::{Outline, DEFAULT_HEADING_LEVEL, TITLE_FIELD, WRITE_SECTIONS};
pub use step::{ask_action, read_reply, AskWith, Asked, Reply};
pub use trim::{
    estimate_tokens, prompt_budget, Transcript, CHARS_PER_TOKEN, DEFAULT_CONTEXT_TOKENS,
};
pub use world::WorkspaceWorld;
