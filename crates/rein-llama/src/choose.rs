//! Decisions by label probability, read from the logits after the prompt.
//!
//! When every label starts with a different token, one forward pass over the prompt is enough:
//! a label's score is the log-probability of its first token, and the scores are normalised
//! over the closed label set. When two labels share a first token, that cannot tell them apart,
//! so every label is scored by the log-probability of its whole token sequence.

use std::collections::HashSet;
use std::time::Instant;

use llama_cpp_2::token::LlamaToken;
use rein_protocol::model::{ChooseReply, ChooseRequest, DecisionSource, LabelProbability, Prompt};

use crate::engine::LlamaEngine;
use crate::error::{LlamaError, Result};

const MAX_LABELS: usize = 64;

fn log_softmax(logits: &[f32]) -> Vec<f64> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let sum: f64 = logits.iter().map(|&l| (l as f64 - max).exp()).sum();
    let log_sum = sum.ln() + max;
    logits.iter().map(|&l| l as f64 - log_sum).collect()
}

/// Normalises log-scores into probabilities over the labels (they sum to 1).
pub(crate) fn normalise(scores: &[f64]) -> Vec<f64> {
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
    let sum: f64 = exps.iter().sum();
    exps.iter().map(|e| e / sum).collect()
}

impl LlamaEngine {
    pub fn choose(&mut self, request: &ChooseRequest) -> Result<ChooseReply> {
        validate_labels(&request.labels)?;
        let started = Instant::now();
        let prompt_tokens = self.tokenize_prompt(&request.prompt)?;
        let cached = self.eval_prompt(&prompt_tokens)?;
        // A raw few-shot prompt such as "Intent:" is continued after a space; a chat prompt
        // ends with the assistant's turn opened, where the answer starts directly.
        let lead = match &request.prompt {
            Prompt::Raw { text } if !text.ends_with(char::is_whitespace) => " ",
            _ => "",
        };
        let label_tokens: Vec<Vec<LlamaToken>> = request
            .labels
            .iter()
            .map(|l| self.vocab_tokenize(&format!("{lead}{l}")))
            .collect();
        if label_tokens.iter().any(Vec::is_empty) {
            return Err(LlamaError::BadRequest(
                "a label tokenizes to nothing".into(),
            ));
        }
        let first = log_softmax(self.last_logits());
        let firsts: HashSet<LlamaToken> = label_tokens.iter().map(|t| t[0]).collect();
        let scores: Vec<f64> = if firsts.len() == label_tokens.len() {
            label_tokens
                .iter()
                .map(|t| first[t[0].0 as usize])
                .collect()
        } else {
            let mut scores = Vec::with_capacity(label_tokens.len());
            for tokens in &label_tokens {
                let mut score = first[tokens[0].0 as usize];
                if tokens.len() > 1 {
                    let logits = self.score_continuation(&tokens[..tokens.len() - 1])?;
                    for (step, next) in logits.iter().zip(&tokens[1..]) {
                        score += log_softmax(step)[next.0 as usize];
                    }
                }
                scores.push(score);
            }
            scores
        };
        let probabilities = normalise(&scores)
            .into_iter()
            .zip(&request.labels)
            .map(|(probability, label)| LabelProbability {
                label: label.clone(),
                probability,
            })
            .collect();
        Ok(ChooseReply {
            probabilities,
            source: DecisionSource::Logits,
            label_mass: None,
            prompt_tokens: prompt_tokens.len() as u32,
            cached_tokens: cached as u32,
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
        })
    }
}

fn validate_labels(labels: &[String]) -> Result<()> {
    if labels.len() < 2 {
        return Err(LlamaError::BadRequest(
            "choose needs at least two labels".into(),
        ));
    }
    if labels.len() > MAX_LABELS {
        return Err(LlamaError::BadRequest(format!(
            "choose takes at most {MAX_LABELS} labels, got {}",
            labels.len()
        )));
    }
    let mut seen = HashSet::new();
    for label in labels {
        if label.trim().is_empty() {
            return Err(LlamaError::BadRequest("a label is empty".into()));
        }
        if !seen.insert(label) {
            return Err(LlamaError::BadRequest(format!(
                "label {label:?} appears twice"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_sum_to_one_and_keep_order() {
        let p = normalise(&[-0.1, -2.0, -5.0]);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(p[0] > p[1] && p[1] > p[2]);
    }

    #[test]
    fn log_softmax_matches_a_hand_computation() {
        let lp = log_softmax(&[0.0, 0.0]);
        assert!((lp[0] - (0.5f64).ln()).abs() < 1e-9);
    }

    #[test]
    fn labels_are_validated() {
        assert!(validate_labels(&["a".into()]).is_err());
        assert!(validate_labels(&["a".into(), "a".into()]).is_err());
        assert!(validate_labels(&["a".into(), " ".into()]).is_err());
        assert!(validate_labels(&["a".into(), "b".into()]).is_ok());
    }
}
