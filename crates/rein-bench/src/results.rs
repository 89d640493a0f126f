//! One record per run, as one line of `results.jsonl` (JSON object, fields in a stable order).
//!
//! A bench appends a line as each run finishes; the canonical file, written by
//! [`write_canonical`], holds the same records sorted by (suite, task, model, repeat), so two
//! benches with the same runs write the same bytes whatever order their runs finished in.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::BenchError;
use rein_models::embedded::MIN_CONTEXT_TOKENS;

/// The results file of a bench output folder.
pub const RESULTS_FILE: &str = "results.jsonl";

/// The verdict and the figures of one run. Field order is the order of the JSON line; fields
/// added after the first release have defaults, so older files still read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub suite: String,
    pub task: String,
    pub category: String,
    /// `dev` or `heldout`.
    pub split: String,
    /// The model as given on the command line (`scripted:FILE`, a catalog name, `openai:URL#M`).
    pub model: String,
    pub seed: u64,
    /// 0-based repeat number.
    pub repeat: u32,
    pub passed: bool,
    /// The judge's reason (or why the run stopped).
    pub reason: String,
    /// SHA-256 of the mission's frozen contract the verdict was judged against.
    pub contract_sha256: String,
    /// What the model said it is (GGUF name and SHA-256, endpoint model id, script hash).
    pub model_identity: String,
    pub steps: u32,
    pub wall_ms: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Replies that were not one well-formed action.
    pub format_errors: u32,
    /// Replies repaired into an action.
    pub repairs: u32,
    /// A cap (turns, time, tokens) stopped the run.
    pub cap_hit: bool,
    /// The run's finish was accepted by the finish rules.
    pub finish_accepted: bool,
    /// Time spent waiting for the model (every completion and choice, as the harness saw it).
    #[serde(default)]
    pub model_ms: u64,
    /// The run's whole time in the bench: fresh workspace, loop, judge, journal. With
    /// `model_ms` it gives the harness overhead; 0 when not measured.
    #[serde(default)]
    pub total_ms: u64,
    /// What happened, step by step, and what the model streamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<RunTrace>,
    /// A memory-sandbox run's final sandbox and action log (absent for a directory run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryRecord>,
    /// The harness levers of the run, `{"facts-tools": true, ...}` (absent in a results file
    /// written before levers were recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levers: Option<serde_json::Value>,
    /// Verified sampling: candidates drawn per write of the deliverable (absent or 1: off).
    /// With more than one, `passed` is the best-of-K run's verdict, never pass@1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u32>,
    /// At the run's last sampled write: whether the first draw (what the run would have
    /// proposed without sampling) and the proposed one passed every check on their scratch
    /// view. Absent when no write was sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_draw_passed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen_draw_passed: Option<bool>,
    /// Candidates drawn over the run's sampled writes, first draws included (drawing stops at
    /// a clean candidate). Absent when no write was sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_draws: Option<u32>,
    /// Model requests for notes on the files read (lever `file-notes`), beside the turns.
    /// Absent when none was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note_requests: Option<u32>,
    /// The context window, in tokens, asked of an embedded model with `--context` (absent:
    /// the model's default window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<u32>,
    /// SHA-256 of the `rein` executable that ran the bench (absent in a results file written
    /// before builds were recorded): an ablation whose arms ran different builds measures the
    /// code change along with the lever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_sha256: Option<String>,
}

/// The recorder's account of a run: the step trace and the model's raw streamed replies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunTrace {
    pub steps: Vec<TraceStep>,
    /// Every completion the model streamed, in order (the plan's included), as raw text.
    pub stream: Vec<StreamedReply>,
}

/// One step of a run as the journal recorded it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceStep {
    pub seq: u32,
    /// `action`, `format_error`, `refusal`, `cap` or `note`.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought: Option<String>,
    /// Who made the step's call when it was not the model: `rein` for a read or a
    /// `table_stats` call the harness made for it (levers `inputs-first`, `stats-first`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<serde_json::Value>,
    /// The gate's decision on the step's call (`executed`, `denied`, ...), if it made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_reason: Option<String>,
    /// What came back: the tool's summary, or the message fed back to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub elapsed_ms: u64,
}

/// One completion as streamed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamedReply {
    /// The pieces as they arrived, joined.
    pub text: String,
    pub ms: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// What a memory-sandbox run left: the final files and variables, and every action the model
/// named, in order, with the gate's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryRecord {
    pub files: BTreeMap<String, String>,
    pub variables: BTreeMap<String, serde_json::Value>,
    pub actions: Vec<rein_engine::memory::MemoryAction>,
}

/// What identifies a run: (suite, task, model, repeat). Two records with the same key are the
/// same run twice.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunKey {
    pub suite: String,
    pub task: String,
    pub model: String,
    pub repeat: u32,
}

impl std::fmt::Display for RunKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} model {} repeat {}",
            self.suite, self.task, self.model, self.repeat
        )
    }
}

impl RunResult {
    /// The record of a judged run. `model` is the model as given on the command line; `repeat`
    /// is 0-based.
    #[allow(clippy::too_many_arguments)]
    pub fn from_outcome(
        suite: &str,
        task: &crate::suite::Task,
        model: &str,
        identity: &rein_protocol::ModelIdentity,
        seed: u32,
        repeat: u32,
        outcome: &rein_engine::agent::RunOutcome,
        memory: Option<MemoryRecord>,
    ) -> RunResult {
        let f = &outcome.figures;
        RunResult {
            suite: suite.to_string(),
            task: task.id.clone(),
            category: task.category.clone(),
            split: task.split.as_str().to_string(),
            model: model.to_string(),
            seed: u64::from(seed),
            repeat,
            passed: outcome.passed(),
            reason: outcome.reason(),
            contract_sha256: outcome.contract_sha256.clone(),
            model_identity: format!(
                "{} ({}){}",
                identity.name,
                identity.architecture,
                identity
                    .sha256
                    .as_ref()
                    .map(|h| format!(" sha256:{h}"))
                    .unwrap_or_default()
            ),
            steps: f.steps,
            wall_ms: f.elapsed_ms,
            prompt_tokens: f.prompt_tokens,
            completion_tokens: f.completion_tokens,
            format_errors: f.format_errors,
            repairs: f.repaired,
            cap_hit: matches!(outcome.end, rein_engine::agent::RunEnd::Cap { .. }),
            finish_accepted: outcome.finish_accepted,
            // The bench runner measures these around the run and fills them in.
            model_ms: 0,
            total_ms: 0,
            trace: None,
            memory,
            levers: None,
            samples: (f.samples > 1).then_some(f.samples),
            first_draw_passed: f.first_draw_passed,
            chosen_draw_passed: f.chosen_draw_passed,
            sample_draws: (f.sampled_writes > 0).then_some(f.sample_draws),
            note_requests: (f.note_requests > 0).then_some(f.note_requests),
            // The bench runner fills these in from `--context` and its own executable.
            context: None,
            harness_sha256: None,
        }
    }

    pub fn key(&self) -> RunKey {
        RunKey {
            suite: self.suite.clone(),
            task: self.task.clone(),
            model: self.model.clone(),
            repeat: self.repeat,
        }
    }

    /// The JSON line (no newline).
    pub fn to_line(&self) -> Result<String, BenchError> {
        serde_json::to_string(self)
            .map_err(|e| BenchError::Merge(format!("cannot encode a result: {e}")))
    }
}

/// Sorts into the canonical order: (suite, task, model, repeat), then the rest of the record so
/// the order is total even for duplicates.
pub fn sort_canonical(results: &mut [RunResult]) {
    results.sort_by(|a, b| {
        a.key()
            .cmp(&b.key())
            .then_with(|| a.seed.cmp(&b.seed))
            .then_with(|| a.passed.cmp(&b.passed))
            .then_with(|| a.reason.cmp(&b.reason))
    });
}

/// Reads a results file. Blank lines are skipped; any other line that is not a result is an
/// error naming the file and line. A missing file reads as no results.
pub fn read_results(path: &Path) -> Result<Vec<RunResult>, BenchError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(BenchError::io(path, "read", e)),
    };
    let mut out = Vec::new();
    let lines: Vec<&str> = text.split('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<RunResult>(line) {
            Ok(r) => out.push(r),
            // A last line without its newline that is not even JSON is a write cut off by a
            // kill: the run is redone. A whole JSON line is judged like any other.
            Err(_)
                if i + 1 == lines.len()
                    && !text.ends_with('\n')
                    && serde_json::from_str::<serde_json::Value>(line).is_err() => {}
            Err(e) => {
                return Err(BenchError::Results {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message: format!("not a run result: {e}"),
                })
            }
        }
    }
    Ok(out)
}

/// Appends one result as a line and flushes it (a bench records each run as it finishes).
pub fn append_result(path: &Path, result: &RunResult) -> Result<(), BenchError> {
    let mut line = result.to_line()?;
    line.push('\n');
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| BenchError::io(path, "open for appending", e))?;
    f.write_all(line.as_bytes())
        .and_then(|()| f.sync_data())
        .map_err(|e| BenchError::io(path, "append to", e))
}

/// The canonical text of a results file: records sorted, one per line, each line ending in a
/// newline.
pub fn canonical_text(results: &[RunResult]) -> Result<String, BenchError> {
    let mut sorted = results.to_vec();
    sort_canonical(&mut sorted);
    let mut out = String::new();
    for r in &sorted {
        out.push_str(&r.to_line()?);
        out.push('\n');
    }
    Ok(out)
}

/// Writes the canonical results file (atomically: a temp file renamed over it).
pub fn write_canonical(path: &Path, results: &[RunResult]) -> Result<(), BenchError> {
    write_atomic(path, canonical_text(results)?.as_bytes())
}

/// Writes a file through a temp file in the same folder, renamed into place.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), BenchError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| BenchError::io(&tmp, "write", e))?;
    std::fs::rename(&tmp, path).map_err(|e| BenchError::io(path, "replace", e))
}

/// A run's `--context` as an error message names it.
pub fn context_setting(context: Option<u32>) -> String {
    context.map_or_else(
        || "its default window".to_string(),
        |t| format!("--context {t}"),
    )
}

/// Checks that no run appears twice, that every task was judged against one contract, that
/// every run of a task drew the same number of candidates per write (best-of-K and pass@1
/// verdicts never mix in one pass rate or comparison), and that every run asked for one
/// context window (a possible one).
pub fn check_consistent(results: &[RunResult]) -> Result<(), BenchError> {
    let mut seen: BTreeMap<RunKey, ()> = BTreeMap::new();
    let mut contracts: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut samples: BTreeMap<(String, String), u32> = BTreeMap::new();
    let mut first_window: Option<(Option<u32>, String)> = None;
    let verdict = |k: u32| {
        if k > 1 {
            format!("best-of-{k}")
        } else {
            "pass@1".to_string()
        }
    };
    for r in results {
        let k = r.samples.unwrap_or(1);
        let first = *samples
            .entry((r.suite.clone(), r.task.clone()))
            .or_insert(k);
        if first != k {
            return Err(BenchError::Merge(format!(
                "task {}/{} was run with {} and with {} candidates per write (--samples): its \
                 verdicts would mix {} and {}; re-run them with \
                 one --samples",
                r.suite,
                r.task,
                first.min(k),
                first.max(k),
                verdict(first.min(k)),
                verdict(first.max(k))
            )));
        }
        if let Some(c) = r.context.filter(|c| *c < MIN_CONTEXT_TOKENS) {
            return Err(BenchError::Merge(format!(
                "model {} has a context window of {c} tokens, below the {MIN_CONTEXT_TOKENS} \
                 any bench runs with: this results file was not written by `rein bench`",
                r.model
            )));
        }
        // One report, one window: a model's figures, and every comparison of two models, are
        // read as made at the same setting.
        match &first_window {
            Some((first, model)) if *first != r.context => {
                return Err(BenchError::Merge(format!(
                    "model {model} was run with {} and model {} with {}: one report would \
                     mix two settings; merge benches run with one --context, or compare them \
                     with `rein bench ablation`",
                    context_setting(*first),
                    r.model,
                    context_setting(r.context)
                )));
            }
            Some(_) => {}
            None => first_window = Some((r.context, r.model.clone())),
        }
        if seen.insert(r.key(), ()).is_some() {
            return Err(BenchError::Merge(format!(
                "the run {} appears more than once; each run must come from exactly one shard",
                r.key()
            )));
        }
        let task = (r.suite.clone(), r.task.clone());
        match contracts.get(&task) {
            Some(h) if *h != r.contract_sha256 => {
                return Err(BenchError::Merge(format!(
                    "task {}/{} was judged against two different contracts ({} and {}): the \
                     mission changed between shards; re-run them from one checkout",
                    r.suite,
                    r.task,
                    short(h),
                    short(&r.contract_sha256)
                )))
            }
            Some(_) => {}
            None => {
                contracts.insert(task, r.contract_sha256.clone());
            }
        }
    }
    Ok(())
}

fn short(h: &str) -> &str {
    h.get(..12).unwrap_or(h)
}
