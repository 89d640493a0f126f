//! The judge: deterministic checks of the world, plus the two semantic checks.
//!
//! Every check reads the world (never the model's claims) and reports what it read as facts, so
//! a verdict can be explained and replayed. Anything that cannot be read or computed fails the
//! check (fail closed).
//!
//! | kind | passes when |
//! | --- | --- |
//! | `file_exists` | the file exists (non-empty with `non_empty`) |
//! | `file_absent` | the file does not exist |
//! | `content_matches` / `content_absent` | the text has / lacks the literal or regex pattern |
//! | `json_schema` | the file is JSON valid against the schema |
//! | `numeric_consistency` | a number stated in the artifact equals one computed from a frozen input |
//! | `report_complete` | headings / JSON fields present, word count within bounds |
//! | `actions_called` | the tools were executed (optionally in order) |
//! | `variable_set` | a sandbox variable is set (to the expected value) |
//! | `grounded` | claimed strings occur literally in frozen input bytes |
//! | `decision` | a decision model gives the expected label at least the floor (advisory until qualified) |
//! | `statement` | one sentence of a section states every required fact (optionally unnegated) |
//! | `mentions_all` | every value of a frozen CSV column is mentioned in a section (and any number stated beside one is its row's) |
//! | `not_copied` | the artifact is not mostly pasted from the inputs |
//! | `no_placeholders` | no template marker as the text reads, no bidi control |
//! | `inputs_read` | every input was read in full before the deliverable was first written |
//! | `written_this_run` | this run's last change of the file produced its final content |
//! | `entries_match` | entry i of a JSON array holds the values its own source i labels |
//! | `inputs_unchanged` | every frozen input still has its frozen bytes and no call of the run changed it |
//! | `file_equals` | the whole file equals the mission's expected file (line endings normalised) |
//! | `nothing_else_changed` | no file but the deliverable, the editable files and `allow` was created, changed or deleted |
//!
//! Text is judged as it renders (`normalize`) and prose as a person reads it (`reading`:
//! lookalike letters of other scripts read as Latin), Markdown through its prose (`prose`):
//! comments and code are not content, emphasis is not part of a heading, HTML that may not show
//! counts against a deliverable and never for it, and text holding a bidi control is not read. Numbers are parsed strictly
//! (`numbers`), JSON strictly (`json`). Facts computed from the inputs (an expected value, a
//! missing list) are *withheld*: journaled and shown to the person, never fed back to the model.

mod actions;
mod changes;
mod csv;
mod entries;
mod evaluate;
mod files;
mod json;
mod normalize;
mod numbers;
mod numeric;
pub(crate) use numeric::column_index;
pub use numeric::{judge_agrees, stated_in_line, statements_in};
mod paths;
mod process;
mod prose;
mod report;
mod requirement;
mod semantic;
mod spec;
mod statement;
pub(crate) mod text;
mod trace;
mod world;

pub use evaluate::{
    evaluate, evaluate_automatic, evaluate_selected, evaluate_without_decider, CheckResult,
    JudgeError, Verdict,
};
pub use json::parse_strict as parse_json_strict;
pub use normalize::normalize;
pub(crate) use numeric::written_with_decimals;
pub use paths::{normalize_rel, same_path};
pub use requirement::{
    exact_decimals, requirement, requirements_message, requirements_message_of, table_stats_call,
    table_stats_group_call, table_stats_hint, TableStatsCall, MAX_QUOTED_CHARS,
};
pub use semantic::{Decider, DECISION_ARTIFACT_CLIP_CHARS, SEMANTIC_FLOOR_BPS};
pub use spec::{
    Aggregate, CallSpec, Check, CheckSpec, Computed, FieldRule, FinalNewline, LineEndings, Locator,
    Occurrences, PathCall, RowFilter, RowNumbers, ValueSource, CHECK_KINDS,
};
pub(crate) use statement::is_table;
pub use text::count_words;
pub use trace::{is_variable_tool, last_write, read_whole_at, seen_since_write, TraceEntry};
pub use world::{DirWorld, MemWorld, World, WorldError};

use crate::mission::FrozenContract;

/// One check's outcome: whether it passed, the facts a model may be told, the facts withheld
/// from the model because they come from the inputs (expected values), and the lines of frozen
/// inputs a failed check compared against, quoted unchanged (told only under `source-lines`).
#[derive(Debug, Default)]
pub(crate) struct Judged {
    pub passed: bool,
    pub facts: Vec<String>,
    pub withheld: Vec<String>,
    pub quoted: Vec<String>,
}

impl Judged {
    pub fn say(&mut self, fact: impl Into<String>) {
        self.facts.push(fact.into());
    }

    pub fn withhold(&mut self, fact: impl Into<String>) {
        self.withheld.push(fact.into());
    }

    /// Line `number` (1-based) of frozen input `path` as the check read it (normalised as every
    /// check reads text): an input line, never a value computed from one.
    pub fn quote(&mut self, path: &str, number: usize, line: &str) {
        self.quoted.push(format!("{path} line {number}: {line}"));
    }
}

impl From<(bool, Vec<String>)> for Judged {
    fn from((passed, facts): (bool, Vec<String>)) -> Judged {
        Judged {
            passed,
            facts,
            ..Judged::default()
        }
    }
}

/// What a model may be told of a JSON document that does not follow a contract's schema, in
/// the `json_schema` check's words (empty: it follows it). `path` names the file in the facts.
pub fn schema_violations(
    path: &str,
    schema: &serde_json::Value,
    instance: &serde_json::Value,
) -> Vec<String> {
    let j = files::schema_judged(path, schema, instance);
    if j.passed {
        Vec::new()
    } else {
        j.facts
    }
}

/// The headings of a Markdown document as the judge reads them, in order, as (level, key:
/// compared as `report_complete` compares them); `Err` when an element may restyle the page,
/// so what shows cannot be told (the checks that read prose fail closed on it).
pub(crate) fn markdown_headings(path: &str, text: &str) -> Result<Vec<(u8, String)>, String> {
    let p = prose::Prose::of(path, text.as_bytes(), false);
    if let Some(by) = &p.restyled_by {
        return Err(format!(
            "{path} would hold a {by} element, which can hide any of its text from a person; remove it"
        ));
    }
    Ok(p.headings()
        .into_iter()
        .map(|(level, h)| (level, prose::heading_key(h)))
        .collect())
}

/// Every line of a Markdown document as the judge reads it, in both of its readings (code
/// and comments left out, then kept): (heading level, text, doubtful). Two documents that read
/// the same here state the same to every check.
pub(crate) fn markdown_reading(path: &str, text: &str) -> Vec<(Option<u8>, String, bool)> {
    [false, true]
        .into_iter()
        .flat_map(|include_code| prose::Prose::of(path, text.as_bytes(), include_code).lines)
        .map(|l| (l.heading, l.text, l.doubtful))
        .collect()
}

/// A file's prose from its bytes, as every check reads it (see [`Ctx::read_prose`]).
pub(crate) fn prose_of(
    path: &str,
    bytes: &[u8],
    include_code: bool,
) -> Result<prose::Prose, String> {
    if let Some(c) = normalize::reorder_control(&String::from_utf8_lossy(bytes)) {
        return Err(format!(
            "{path}: holds the bidi control U+{:04X}, which shows text in another order than it is written; remove it",
            c as u32
        ));
    }
    let prose = prose::Prose::of(path, bytes, include_code);
    if let Some(element) = &prose.restyled_by {
        return Err(format!(
            "{path}: holds a {element} element, which can hide any of its text from a person; remove it"
        ));
    }
    Ok(prose)
}

pub(crate) use prose::{heading_key, is_markdown};

/// What every check may read: the frozen contract, the world and the trace.
pub(crate) struct Ctx<'a> {
    pub contract: &'a FrozenContract,
    pub world: &'a dyn World,
    pub trace: &'a [TraceEntry],
}

impl Ctx<'_> {
    /// Reads a file that must exist; the error is a fact to report.
    pub fn read_required(&self, path: &str) -> Result<Vec<u8>, String> {
        match self.world.read(path) {
            Ok(Some(b)) => Ok(b),
            Ok(None) => Err(format!("{path}: does not exist")),
            Err(e) => Err(format!("{path}: {e}")),
        }
    }

    /// A file's prose (see `prose`), for content checks. A file holding a bidi embedding,
    /// override or isolate control is not read: it shows in another order than it is stored
    /// (`64` shown as `46`), so no check can say what it states (fail closed); nor is a
    /// Markdown file holding a `<style>` or `<script>` element, which can hide any text.
    pub fn read_prose(&self, path: &str, include_code: bool) -> Result<prose::Prose, String> {
        prose_of(path, &self.read_required(path)?, include_code)
    }

    /// Reads a frozen input and proves it is still the frozen bytes, so values are never
    /// computed from an input the model has changed.
    pub fn read_frozen_input(&self, path: &str) -> Result<Vec<u8>, String> {
        let Some(frozen) = self.contract.input_hash(path) else {
            return Err(format!("{path}: not a frozen input of this mission"));
        };
        let bytes = self.read_required(path)?;
        let now = crate::mission::sha256_hex(&bytes);
        if now != frozen {
            return Err(format!(
                "{path}: input changed since it was frozen (sha256 {frozen}, now {now})"
            ));
        }
        Ok(bytes)
    }
}
