//! The semantic checks. `grounded` is literal and never asks a model: a claim absent from the
//! frozen input bytes fails outright. `decision` asks a decision model for label probabilities
//! and passes only at or above a floor; any doubt (no decider, an error, an undeclared label, a
//! probability outside [0, 1]) fails closed.

use serde_json::Value;

use super::numeric::{locate, Located};
use super::spec::Locator;
use super::text::{clip, preview};
use super::Ctx;

/// Default floor of a decision check, in basis points of probability (8,000 = 0.80).
pub const SEMANTIC_FLOOR_BPS: u32 = 8_000;

/// At most this many characters of the artifact go into a decision prompt.
pub const DECISION_ARTIFACT_CLIP_CHARS: usize = 8_000;

/// A decision model: chooses among labels by their probabilities, never by free text.
pub trait Decider {
    /// Probabilities (0.0..=1.0) for the labels, as the model gives them.
    fn choose(&mut self, prompt: &str, labels: &[String]) -> Result<Vec<(String, f64)>, String>;
}

pub(crate) fn grounded(
    cx: &Ctx<'_>,
    path: &str,
    claim: &Locator,
    sources: &[String],
) -> (bool, Vec<String>) {
    let claims = match locate(cx, path, claim) {
        Ok(Located::Text(t)) => vec![t],
        Ok(Located::Json(v)) => match string_leaves(&v) {
            Ok(c) => c,
            Err(fact) => return (false, vec![format!("{path}: {fact}")]),
        },
        Err(fact) => return (false, vec![fact]),
    };
    // Chosen sources are not named in the facts (a retry shows them): which input holds the
    // answer is often the task. Every input may be named; the prompt lists them.
    let chosen = !sources.is_empty();
    let sources: Vec<String> = if chosen {
        sources.to_vec()
    } else {
        cx.contract.inputs.iter().map(|h| h.path.clone()).collect()
    };
    let where_from = if chosen {
        "the input the task is about".to_string()
    } else {
        sources.join(", ")
    };
    let mut texts = Vec::with_capacity(sources.len());
    for s in &sources {
        match cx.read_frozen_input(s) {
            Ok(b) => texts.push((s.as_str(), b)),
            Err(fact) => return (false, vec![fact]),
        }
    }
    if claims.is_empty() {
        return (false, vec![format!("{path}: no claim to ground")]);
    }
    let mut ok = true;
    let mut facts = Vec::new();
    for c in &claims {
        let c = c.trim();
        if c.is_empty() {
            ok = false;
            facts.push(format!("{path}: an empty claim cannot be grounded"));
            continue;
        }
        let found: Vec<&str> = texts
            .iter()
            .filter(|(_, b)| contains(b, c.as_bytes()))
            .map(|(s, _)| *s)
            .collect();
        if found.is_empty() {
            ok = false;
            facts.push(format!(
                "claim `{}` occurs in none of: {where_from}",
                preview(c)
            ));
        } else if chosen {
            facts.push(format!("claim `{}` found in {where_from}", preview(c)));
        } else {
            facts.push(format!(
                "claim `{}` found in {}",
                preview(c),
                found.join(", ")
            ));
        }
    }
    (ok, facts)
}

/// Every string in a JSON value (a string itself, or the string leaves of a container). A bare
/// number or boolean is refused: grounding is for text, numbers have `numeric_consistency`.
fn string_leaves(v: &Value) -> Result<Vec<String>, String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    match v {
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Array(_) | Value::Object(_) => {
            let mut out = Vec::new();
            walk(v, &mut out);
            Ok(out)
        }
        other => Err(format!("the claim is {other}, not a string")),
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Each input put into a decision prompt is clipped to this many characters.
pub const DECISION_INPUT_CLIP_CHARS: usize = 2_000;

/// What a decision check asks.
pub(crate) struct Ask<'a> {
    pub prompt: &'a str,
    pub labels: &'a [String],
    pub expected: &'a str,
    pub path: Option<&'a str>,
    pub section: Option<&'a str>,
    pub inputs: &'a [String],
    pub floor_bps: Option<u32>,
}

pub(crate) fn decision(
    cx: &Ctx<'_>,
    decider: Option<&mut dyn Decider>,
    ask: &Ask<'_>,
) -> (bool, Vec<String>) {
    let (labels, expected) = (ask.labels, ask.expected);
    let floor = ask.floor_bps.unwrap_or(SEMANTIC_FLOOR_BPS);
    let mut facts = vec![format!("floor {floor} bps for `{expected}`")];
    let Some(decider) = decider else {
        facts.push("no decision model was given: a semantic check fails closed without one".into());
        return (false, facts);
    };
    let mut full_prompt = ask.prompt.to_string();
    if !ask.inputs.is_empty() {
        let mut excerpts = String::new();
        for i in ask.inputs {
            let text = match cx.read_frozen_input(i) {
                Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                Err(fact) => {
                    facts.push(fact);
                    return (false, facts);
                }
            };
            let (body, clipped) = clip(&text, DECISION_INPUT_CLIP_CHARS);
            if clipped {
                facts.push(format!(
                    "{i}: clipped to {DECISION_INPUT_CLIP_CHARS} characters for the prompt"
                ));
            }
            excerpts.push_str(&format!("{i}:\n{body}\n"));
        }
        full_prompt = if full_prompt.contains("{inputs}") {
            full_prompt.replace("{inputs}", &excerpts)
        } else {
            format!("{excerpts}\n{full_prompt}")
        };
    }
    if let Some(p) = ask.path {
        let text = match cx
            .read_prose(p, false)
            .and_then(|prose| prose.scope(ask.section).map_err(|e| format!("{p}: {e}")))
        {
            Ok(t) => t,
            Err(fact) => {
                facts.push(fact);
                return (false, facts);
            }
        };
        let (body, clipped) = clip(&text, DECISION_ARTIFACT_CLIP_CHARS);
        if clipped {
            facts.push(format!(
                "{p}: clipped to {DECISION_ARTIFACT_CLIP_CHARS} characters for the prompt"
            ));
        }
        full_prompt = if full_prompt.contains("{artifact}") {
            full_prompt.replace("{artifact}", body)
        } else {
            format!("{full_prompt}\n\n{p}:\n{body}")
        };
    }
    let reply = match decider.choose(&full_prompt, labels) {
        Ok(r) => r,
        Err(e) => {
            facts.push(format!("decision model error: {e}"));
            return (false, facts);
        }
    };
    let mut expected_p = None;
    let mut shown = Vec::new();
    for (label, p) in &reply {
        if !labels.contains(label) {
            facts.push(format!(
                "decision model answered undeclared label `{}`",
                preview(label)
            ));
            return (false, facts);
        }
        if !p.is_finite() || !(0.0..=1.0).contains(p) {
            facts.push(format!(
                "decision model gave `{label}` probability {p}, outside [0, 1]"
            ));
            return (false, facts);
        }
        shown.push(format!("{label} {} bps", to_bps(*p)));
        if label == expected {
            expected_p = Some(*p);
        }
    }
    facts.push(format!("decision model: {}", shown.join(", ")));
    match expected_p {
        None => {
            facts.push(format!("no probability for `{expected}`"));
            (false, facts)
        }
        Some(p) => (to_bps(p) >= floor, facts),
    }
}

/// Basis points, rounded down (a hair of slack for binary fractions like 0.29 * 10,000), so a
/// probability just under the floor never rounds up into a pass.
fn to_bps(p: f64) -> u32 {
    (p * 10_000.0 + 1e-6).floor() as u32
}
