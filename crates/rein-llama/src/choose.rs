//! Decisions by label probability, read from the logits after the prompt.
//!
//! One meaning, shared with the OpenAI backend: a label's probability is the sum, over its
//! surface variants (as written, lower case, capitalised, upper case; each with and without a
//! leading space), of the probability of the variant's whole token sequence times the
//! probability that the label ends there (the next token does not continue the word: it is
//! end-of-generation, whitespace, punctuation, anything but a letter, digit, `_` or `-`). The
//! end term is what keeps `edit` from winning over `edit_file` by being its prefix. The label
//! probabilities are then normalised over the labels, and `label_mass` reports the share of the
//! model's probability they held before that; the parent fails a decision whose mass is low.

use std::collections::HashSet;
use std::time::Instant;

use llama_cpp_2::token::LlamaToken;
use rein_protocol::model::{ChooseReply, ChooseRequest, DecisionSource, LabelProbability};

use crate::engine::LlamaEngine;
use crate::error::{LlamaError, Result};

const MAX_LABELS: usize = 64;

/// A variant whose first token is less likely than this cannot move any label's probability at
/// the precision decisions use, so its continuation is not decoded (saves decode steps).
const MIN_FIRST_PROBABILITY: f64 = 1e-6;

fn log_softmax(logits: &[f32]) -> Vec<f64> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let sum: f64 = logits.iter().map(|&l| (l as f64 - max).exp()).sum();
    let log_sum = sum.ln() + max;
    logits.iter().map(|&l| l as f64 - log_sum).collect()
}

/// The spellings of a label a model may produce: as written, lower case, capitalised and upper
/// case, each bare and after one space; without duplicates, in that order.
pub(crate) fn surface_variants(label: &str) -> Vec<String> {
    let mut chars = label.chars();
    let capitalised = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    };
    let mut forms: Vec<String> = Vec::new();
    for form in [
        label.to_string(),
        label.to_lowercase(),
        capitalised,
        label.to_uppercase(),
    ] {
        if !forms.contains(&form) {
            forms.push(form);
        }
    }
    let mut variants = Vec::with_capacity(forms.len() * 2);
    for form in forms {
        let spaced = format!(" {form}");
        variants.push(form);
        variants.push(spaced);
    }
    variants
}

/// Whether a token's text continues the word before it (so the label would not end there).
pub(crate) fn continues_word(piece: &str) -> bool {
    piece
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// The probability that the label ends after its last token: one minus the probability of
/// every token that continues the word.
pub(crate) fn end_probability(next_logprobs: &[f64], continues: &[bool]) -> f64 {
    let continuing: f64 = next_logprobs
        .iter()
        .zip(continues)
        .filter(|(_, &c)| c)
        .map(|(lp, _)| lp.exp())
        .sum();
    (1.0 - continuing).clamp(0.0, 1.0)
}

/// The probability of one variant: its whole token sequence times the end term.
/// `steps[i]` are the log-probabilities before token `i`; `steps[tokens.len()]` after the last.
pub(crate) fn variant_probability(steps: &[Vec<f64>], tokens: &[u32], continues: &[bool]) -> f64 {
    if steps.len() != tokens.len() + 1 {
        return 0.0;
    }
    let sequence: f64 = tokens
        .iter()
        .zip(steps)
        .map(|(&t, lp)| lp.get(t as usize).copied().unwrap_or(f64::NEG_INFINITY))
        .sum();
    sequence.exp() * end_probability(&steps[tokens.len()], continues)
}

/// Each label's probability normalised over the labels, and the mass they held before that.
/// With no mass at all the labels are given equal shares and the mass is 0, so the caller's
/// floor fails the decision rather than a division by zero inventing one.
pub(crate) fn label_distribution(masses: &[f64]) -> (Vec<f64>, f64) {
    let total: f64 = masses.iter().filter(|m| m.is_finite()).sum();
    if total <= 0.0 || !total.is_finite() || masses.is_empty() {
        let share = 1.0 / masses.len().max(1) as f64;
        return (vec![share; masses.len()], 0.0);
    }
    (
        masses
            .iter()
            .map(|m| if m.is_finite() { m / total } else { 0.0 })
            .collect(),
        total.min(1.0),
    )
}

impl LlamaEngine {
    pub fn choose(&mut self, request: &ChooseRequest) -> Result<ChooseReply> {
        validate_labels(&request.labels)?;
        let started = Instant::now();
        let prompt_tokens = self.tokenize_prompt(&request.prompt)?;
        let cached = self.eval_prompt(&prompt_tokens)?;
        let first = log_softmax(self.last_logits());
        let continues = self.continuation_table();
        // Each distinct token sequence is counted once, for the first label that spells it
        // (labels that differ only by case are refused, so this is only a guard).
        let mut seen: HashSet<Vec<LlamaToken>> = HashSet::new();
        let mut masses = vec![0.0f64; request.labels.len()];
        for (index, label) in request.labels.iter().enumerate() {
            for variant in surface_variants(label) {
                let tokens = self.vocab_tokenize(&variant);
                if tokens.is_empty() || !seen.insert(tokens.clone()) {
                    continue;
                }
                if first.get(tokens[0].0 as usize).map_or(0.0, |lp| lp.exp())
                    < MIN_FIRST_PROBABILITY
                {
                    continue;
                }
                let mut steps = vec![first.clone()];
                for logits in self.score_continuation(&tokens)? {
                    steps.push(log_softmax(&logits));
                }
                let ids: Vec<u32> = tokens.iter().map(|t| t.0 as u32).collect();
                let p = variant_probability(&steps, &ids, continues.as_slice());
                masses[index] += p;
            }
        }
        let (shares, mass) = label_distribution(&masses);
        let probabilities = shares
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
            label_mass: Some(mass),
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
        // Case and leading-space variants are folded into one label, so two labels that differ
        // only by case would share their probability.
        if !seen.insert(label.trim().to_lowercase()) {
            return Err(LlamaError::BadRequest(format!(
                "label {label:?} appears twice (labels are compared ignoring case and surrounding spaces); give each label a distinct name"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// Log-probabilities over a toy vocabulary from plain probabilities (the rest is spread
    /// over token 0, which stands for everything else).
    fn dist(pairs: &[(usize, f64)], n: usize) -> Vec<f64> {
        let mut p = vec![0.0; n];
        for &(t, q) in pairs {
            p[t] = q;
        }
        let rest = 1.0 - p.iter().sum::<f64>();
        p[0] += rest.max(0.0);
        p.iter().map(|q| q.ln()).collect()
    }

    #[test]
    fn log_softmax_matches_a_hand_computation() {
        let lp = log_softmax(&[0.0, 0.0]);
        assert!((lp[0] - (0.5f64).ln()).abs() < 1e-9);
    }

    #[test]
    fn variants_cover_case_and_leading_space_once_each() {
        let v = surface_variants("yes");
        for want in ["yes", " yes", "Yes", " Yes", "YES", " YES"] {
            assert!(v.contains(&want.to_string()), "{want} missing from {v:?}");
        }
        assert_eq!(v.len(), 6, "duplicates in {v:?}");
        let v = surface_variants("edit_file");
        assert!(v.contains(&"Edit_file".to_string()) && v.contains(&" EDIT_FILE".to_string()));
    }

    #[test]
    fn words_continue_and_punctuation_ends() {
        assert!(continues_word("_file"));
        assert!(continues_word("ing"));
        assert!(continues_word("-up"));
        assert!(!continues_word(" file"));
        assert!(!continues_word("."));
        assert!(!continues_word("\n"));
        assert!(!continues_word(""));
    }

    // Toy vocabulary: 0 other, 1 "edit", 2 "_file", 3 ".", 4 "ing".
    fn toy_continues() -> Vec<bool> {
        vec![false, true, true, false, true]
    }

    #[test]
    fn a_prefix_label_does_not_win_by_being_a_prefix() {
        // The model writes "edit" then "_file" with probability 0.9: the answer is edit_file.
        let first = dist(&[(1, 0.8)], 5);
        let after_edit = dist(&[(2, 0.9), (3, 0.1)], 5);
        let after_file = dist(&[(3, 1.0)], 5);
        let c = toy_continues();
        let edit = variant_probability(&[first.clone(), after_edit.clone()], &[1], &c);
        let edit_file = variant_probability(&[first, after_edit, after_file], &[1, 2], &c);
        assert!((edit - 0.8 * 0.1).abs() < 1e-9, "{edit}");
        assert!((edit_file - 0.8 * 0.9).abs() < 1e-9, "{edit_file}");
        let (p, mass) = label_distribution(&[edit, edit_file]);
        assert!(p[1] > p[0]);
        assert!((mass - 0.8).abs() < 1e-9);
    }

    #[test]
    fn multi_token_labels_multiply_their_conditionals() {
        let steps = vec![
            dist(&[(1, 0.5)], 5),
            dist(&[(2, 0.5)], 5),
            dist(&[(4, 0.25)], 5),
        ];
        let p = variant_probability(&steps, &[1, 2], &toy_continues());
        assert!((p - 0.5 * 0.5 * 0.75).abs() < 1e-9, "{p}");
        // A mismatched number of steps scores nothing rather than reading past the end.
        assert_eq!(
            variant_probability(&steps[..2], &[1, 2], &toy_continues()),
            0.0
        );
    }

    #[test]
    fn mass_is_reported_and_shares_sum_to_one() {
        let (p, mass) = label_distribution(&[0.06, 0.02]);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!((p[0] - 0.75).abs() < 1e-9);
        // Before normalising the labels held 8 %: a 0.75 here must not read as confidence.
        assert!((mass - 0.08).abs() < 1e-9);
        let (p, mass) = label_distribution(&[0.0, 0.0]);
        assert_eq!(mass, 0.0);
        assert_eq!(p, vec![0.5, 0.5]);
    }

    #[test]
    fn labels_are_validated() {
        assert!(validate_labels(&["a".into()]).is_err());
        assert!(validate_labels(&["a".into(), "a".into()]).is_err());
        assert!(validate_labels(&["yes".into(), "Yes".into()]).is_err());
        assert!(validate_labels(&["a".into(), " ".into()]).is_err());
        assert!(validate_labels(&["a".into(), "b".into()]).is_ok());
    }
}
