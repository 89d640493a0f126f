//! From the model's reply to a BFCL verdict, and from verdicts to accuracy per model and
//! decoding mode with a Wilson 95 % interval.

use std::collections::BTreeMap;

use rein_engine::agent::Reply;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::check::{check, Call, Category, Mismatch};
use super::data::Question;
use super::names::{NameMap, DECLINE};
use crate::stats::{median, wilson};

/// How the reply was decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decoding {
    /// Only replies the action schema allows can be sampled (embedded models: a grammar;
    /// OpenAI-compatible servers: `response_format`).
    Constrained,
    /// Free text, read strictly and then with Rein's repair, as for any unconstrained model.
    Unconstrained,
}

impl Decoding {
    pub fn as_str(self) -> &'static str {
        match self {
            Decoding::Constrained => "constrained",
            Decoding::Unconstrained => "unconstrained",
        }
    }
}

/// The calls a reply amounts to: none for [`DECLINE`] or an unreadable reply (BFCL counts a
/// reply it cannot decode as "no call"), else one call under its original name. A tool name
/// that was not offered is kept as given, so the checker rejects it by name.
pub fn calls_of(reply: &Reply, names: &NameMap) -> Vec<Call> {
    match reply {
        Reply::FormatError(_) => Vec::new(),
        Reply::Action { action, .. } if action.action == DECLINE => Vec::new(),
        Reply::Action { action, .. } => vec![Call {
            name: names
                .original(&action.action)
                .unwrap_or(&action.action)
                .to_string(),
            arguments: action.parameters.clone(),
        }],
    }
}

/// Scores one reply to one question.
pub fn score(q: &Question, names: &NameMap, reply: &Reply) -> (Vec<Call>, Result<(), Mismatch>) {
    let calls = calls_of(reply, names);
    let verdict = check(q.category, &q.functions, &calls, &q.ground_truth);
    (calls, verdict)
}

/// One question answered by one model in one mode: a line of `results.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BfclResult {
    /// `bfcl:simple`, `bfcl:multiple` or `bfcl:irrelevance`.
    pub suite: String,
    pub id: String,
    pub model: String,
    pub decoding: Decoding,
    pub seed: u32,
    pub correct: bool,
    /// BFCL's error type when not correct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The reply could not be read as an action, even with repair.
    pub format_error: bool,
    /// Repairs the reply needed to be read.
    #[serde(default)]
    pub repairs: Vec<String>,
    /// The calls, under their BFCL names: `[{"name", "arguments"}]`.
    pub calls: Value,
    pub raw: String,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub seconds: f64,
    /// The `bfcl-eval` release the questions came from.
    pub data: String,
}

impl BfclResult {
    /// The record of one scored reply.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        q: &Question,
        model: &str,
        decoding: Decoding,
        seed: u32,
        reply: &Reply,
        calls: &[Call],
        verdict: &Result<(), Mismatch>,
        raw: String,
        data: &str,
    ) -> BfclResult {
        let (error_type, error) = match verdict {
            Ok(()) => (None, None),
            Err(m) => (Some(m.error_type.clone()), Some(m.message.clone())),
        };
        let (format_error, repairs) = match reply {
            Reply::FormatError(_) => (true, Vec::new()),
            Reply::Action { repairs, .. } => (false, repairs.clone()),
        };
        BfclResult {
            suite: suite_name(q.category),
            id: q.id.clone(),
            model: model.to_string(),
            decoding,
            seed,
            correct: verdict.is_ok(),
            error_type,
            error,
            format_error,
            repairs,
            calls: Value::Array(
                calls
                    .iter()
                    .map(|c| json!({ "name": c.name, "arguments": c.arguments }))
                    .collect(),
            ),
            raw,
            prompt_tokens: 0,
            completion_tokens: 0,
            seconds: 0.0,
            data: data.to_string(),
        }
    }
}

impl BfclResult {
    /// The record of a question the model failed to answer at all (its server or worker
    /// failed, or refused the schema): wrong in every category, irrelevance included, since
    /// the model said nothing.
    pub fn model_error(
        q: &Question,
        model: &str,
        decoding: Decoding,
        seed: u32,
        message: String,
        data: &str,
    ) -> BfclResult {
        BfclResult {
            suite: suite_name(q.category),
            id: q.id.clone(),
            model: model.to_string(),
            decoding,
            seed,
            correct: false,
            error_type: Some(MODEL_ERROR.to_string()),
            error: Some(message),
            format_error: false,
            repairs: Vec::new(),
            calls: Value::Array(Vec::new()),
            raw: String::new(),
            prompt_tokens: 0,
            completion_tokens: 0,
            seconds: 0.0,
            data: data.to_string(),
        }
    }
}

/// The error type of a question the model did not answer (not one of BFCL's).
pub const MODEL_ERROR: &str = "rein:model_error";

/// `bfcl:<category>`.
pub fn suite_name(c: Category) -> String {
    format!("bfcl:{}", c.as_str())
}

/// Accuracy of one (suite, model, decoding).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Accuracy {
    pub suite: String,
    pub model: String,
    pub decoding: Decoding,
    pub n: u64,
    pub correct: u64,
    pub accuracy: f64,
    pub wilson_low: f64,
    pub wilson_high: f64,
    pub format_errors: u64,
    pub repaired: u64,
    pub median_seconds: f64,
    pub total_seconds: f64,
}

/// Accuracy per (suite, model, decoding), sorted by those keys.
pub fn summarise(results: &[BfclResult]) -> Vec<Accuracy> {
    let mut groups: BTreeMap<(String, String, Decoding), Vec<&BfclResult>> = BTreeMap::new();
    for r in results {
        groups
            .entry((r.suite.clone(), r.model.clone(), r.decoding))
            .or_default()
            .push(r);
    }
    groups
        .into_iter()
        .map(|((suite, model, decoding), rs)| {
            let n = rs.len() as u64;
            let correct = rs.iter().filter(|r| r.correct).count() as u64;
            let (wilson_low, wilson_high) = wilson(correct, n);
            let secs: Vec<f64> = rs.iter().map(|r| r.seconds).collect();
            Accuracy {
                suite,
                model,
                decoding,
                n,
                correct,
                accuracy: if n == 0 {
                    0.0
                } else {
                    correct as f64 / n as f64
                },
                wilson_low,
                wilson_high,
                format_errors: rs.iter().filter(|r| r.format_error).count() as u64,
                repaired: rs.iter().filter(|r| !r.repairs.is_empty()).count() as u64,
                median_seconds: median(&secs).unwrap_or(0.0),
                total_seconds: rs.iter().map(|r| r.seconds).sum(),
            }
        })
        .collect()
}

/// The table as Markdown: one row per (suite, model, decoding).
pub fn markdown(rows: &[Accuracy]) -> String {
    let mut s = String::from(
        "| suite | model | decoding | correct | accuracy | Wilson 95 % | format errors | repaired | median s | total s |\n\
         | --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {}/{} | {:.1} % | {:.1}–{:.1} % | {} | {} | {:.2} | {:.1} |\n",
            r.suite,
            r.model.replace('|', "\\|"),
            r.decoding.as_str(),
            r.correct,
            r.n,
            100.0 * r.accuracy,
            100.0 * r.wilson_low,
            100.0 * r.wilson_high,
            r.format_errors,
            r.repaired,
            r.median_seconds,
            r.total_seconds,
        ));
    }
    s
}
