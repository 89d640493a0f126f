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
//! A combining mark continues a word too, and a label set in which one label starts another
//! before a word-ending character (`c` and `c++`) is refused: there the shorter label's end
//! would be the longer one's next piece (`rein_protocol::model::label_set_problem`).

use std::collections::HashSet;
use std::time::Instant;

use llama_cpp_2::token::LlamaToken;
use rein_protocol::model::{ChooseReply, ChooseRequest, DecisionSource, LabelProbability};

use crate::engine::LlamaEngine;
use crate::error::{LlamaError, Result};

const MAX_LABELS: usize = 64;

/// Spellings are scored from the most likely first token down; the least likely ones, whose
/// first tokens together hold at most this much probability, are not decoded (a spelling can
/// hold no more probability than its first token). So the labels' masses are undercounted by
/// at most this in all, which after normalising over a mass of at least one half (the decision
/// floor on label mass) moves a label by at most 20 bps. It saves most of the decoding, and
/// decoding is most of a warm decision beyond the request's own eval: every spelling decoded
/// costs a token's pass plus the output layer over the whole vocabulary. On the router suite
/// (0.5B, seven labels) 1e-4 kept 13 spellings a decision, 2e-3 kept 5 and halved the label
/// scoring time without changing a route.
const PRUNED_MASS_BUDGET: f64 = 1e-3;

/// What `choose` needs from one position's logits: the log of the softmax's normaliser and
/// the probability of every token that continues the word before it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Step {
    pub log_norm: f64,
    pub continuing: f64,
}

impl Step {
    /// One pass over the vocabulary (two for a stable maximum); nothing is allocated.
    pub(crate) fn of(logits: &[f32], continues: &[bool]) -> Step {
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let mut sum = 0.0f64;
        let mut continuing = 0.0f64;
        for (i, &l) in logits.iter().enumerate() {
            let e = (l as f64 - max).exp();
            sum += e;
            if continues.get(i).copied().unwrap_or(false) {
                continuing += e;
            }
        }
        Step {
            log_norm: sum.ln() + max,
            continuing: if sum > 0.0 { continuing / sum } else { 0.0 },
        }
    }

    /// The log-probability of `token` at this position.
    pub(crate) fn log_prob(&self, logits: &[f32], token: u32) -> f64 {
        logits
            .get(token as usize)
            .map_or(f64::NEG_INFINITY, |&l| l as f64 - self.log_norm)
    }

    /// The probability that the word ends here (the next token does not continue it).
    pub(crate) fn end(&self) -> f64 {
        (1.0 - self.continuing).clamp(0.0, 1.0)
    }
}

/// The spellings of a label a model may produce: as written, lower case, capitalised (the
/// label's first letter raised, and the lower-case form's, so `YES` also counts `Yes`) and upper
/// case, each bare and after one space; without duplicates, in that order. The OpenAI backend
/// folds case on whatever tokens the endpoint returns; here every spelling costs a decode, so
/// only these are scored (a mixed case such as `yEs` is not).
pub(crate) fn surface_variants(label: &str) -> Vec<String> {
    let capitalise = |text: &str| -> String {
        let mut chars = text.chars();
        match chars.next() {
            Some(first) => first.to_uppercase().chain(chars).collect(),
            None => String::new(),
        }
    };
    let lower = label.to_lowercase();
    let mut forms: Vec<String> = Vec::new();
    for form in [
        label.to_string(),
        lower.clone(),
        capitalise(label),
        capitalise(&lower),
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
        .is_some_and(rein_protocol::model::continues_word)
}

/// Which candidates (by first-token probability) are decoded: all but the least likely ones
/// whose first-token probabilities sum to at most `budget`. Returns a keep flag per candidate.
pub(crate) fn keep_likely(first_probabilities: &[f64], budget: f64) -> Vec<bool> {
    let mut order: Vec<usize> = (0..first_probabilities.len()).collect();
    order.sort_by(|&a, &b| first_probabilities[a].total_cmp(&first_probabilities[b]));
    let mut keep = vec![true; first_probabilities.len()];
    let mut pruned = 0.0;
    for i in order {
        let p = first_probabilities[i].max(0.0);
        if !p.is_finite() || pruned + p > budget {
            break;
        }
        pruned += p;
        keep[i] = false;
    }
    keep
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

/// One spelling being scored: its label, tokens, the log-probability of its tokens so far and
/// the probability that the word ends after its last token.
struct Candidate {
    label: usize,
    tokens: Vec<LlamaToken>,
    log_prob: f64,
    end: f64,
}

impl Candidate {
    /// Takes in the logits read after token `position` of the spelling: the next token's
    /// log-probability, or after the last token the probability that the word ends there (which
    /// keeps `edit` from winning over `edit_file` by being its prefix).
    fn advance(&mut self, position: usize, logits: &[f32], continues: &[bool]) {
        let step = Step::of(logits, continues);
        match self.tokens.get(position + 1) {
            Some(next) => self.log_prob += step.log_prob(logits, next.0 as u32),
            None => self.end = step.end(),
        }
    }

    fn probability(&self) -> f64 {
        self.log_prob.exp() * self.end
    }
}

impl LlamaEngine {
    pub fn choose(&mut self, request: &ChooseRequest) -> Result<ChooseReply> {
        validate_labels(&request.labels)?;
        let started = Instant::now();
        let cpu_started = crate::engine::process_cpu_ms();
        let prompt_tokens = self.tokenize_prompt(&request.prompt)?;
        let cached = self.eval_prompt(&prompt_tokens)?;
        let prompt_ms = started.elapsed().as_secs_f64() * 1000.0;
        let continues = self.continuation_table();
        // Building the table walks the whole vocabulary once per worker; on a busy machine that
        // can take long enough for the parent to wonder.
        self.report_alive();
        let first_logits = self.last_logits();
        let first = Step::of(first_logits, continues.as_slice());
        // Each distinct token sequence is counted once, for the first label that spells it
        // (labels that differ only by case are refused, so this is only a guard).
        let mut seen: HashSet<Vec<LlamaToken>> = HashSet::new();
        let mut candidates: Vec<Candidate> = Vec::new();
        for (index, label) in request.labels.iter().enumerate() {
            for variant in surface_variants(label) {
                let tokens = self.vocab_tokenize(&variant);
                if tokens.is_empty() || !seen.insert(tokens.clone()) {
                    continue;
                }
                let log_prob = first.log_prob(first_logits, tokens[0].0 as u32);
                candidates.push(Candidate {
                    label: index,
                    tokens,
                    log_prob,
                    end: 0.0,
                });
            }
        }
        let firsts: Vec<f64> = candidates.iter().map(|c| c.log_prob.exp()).collect();
        let keep = keep_likely(&firsts, PRUNED_MASS_BUDGET);
        let mut kept: Vec<Candidate> = candidates
            .into_iter()
            .zip(keep)
            .filter_map(|(c, k)| k.then_some(c))
            .collect();
        let branches: Vec<Vec<LlamaToken>> = kept.iter().map(|c| c.tokens.clone()).collect();
        self.score_branches(&branches, &mut |branch, position, logits| {
            kept[branch].advance(position, logits, continues.as_slice());
        })?;
        let mut masses = vec![0.0f64; request.labels.len()];
        for c in &kept {
            masses[c.label] += c.probability();
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
            prompt_ms: Some(prompt_ms),
            scored_spellings: Some(kept.len() as u32),
            cpu_ms: Some(crate::engine::process_cpu_ms() - cpu_started),
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
    // Case and leading-space variants are folded into one label, so two labels that differ
    // only by case would share their probability; a label that starts another before a
    // word-ending character would take the longer one's probability as its own end.
    match rein_protocol::model::label_set_problem(labels) {
        Some(problem) => Err(LlamaError::BadRequest(problem)),
        None => Ok(()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_step_reads_log_probabilities_and_the_end_of_a_word() {
        // Toy vocabulary: 0 ".", 1 "edit", 2 "_file"; equal logits.
        let continues = vec![false, true, true];
        let step = Step::of(&[0.0, 0.0, 0.0], &continues);
        assert!((step.log_prob(&[0.0, 0.0, 0.0], 1) - (1.0f64 / 3.0).ln()).abs() < 1e-9);
        assert!((step.end() - 1.0 / 3.0).abs() < 1e-9);
        // A token outside the vocabulary has no probability rather than a wrong one.
        assert_eq!(step.log_prob(&[0.0, 0.0, 0.0], 7), f64::NEG_INFINITY);
        // Large logits do not overflow.
        let step = Step::of(&[1000.0, 0.0, 0.0], &continues);
        assert!(step.end() > 0.999_999 && step.log_prob(&[1000.0, 0.0, 0.0], 0).abs() < 1e-9);
    }

    #[test]
    fn only_the_least_likely_spellings_within_the_budget_are_skipped() {
        let keep = keep_likely(&[0.6, 0.00004, 0.3, 0.00005, 0.00003], 1e-4);
        // 0.00003 + 0.00004 fit the budget; adding 0.00005 would not.
        assert_eq!(keep, vec![true, false, true, true, false]);
        // Nothing is skipped when even the least likely is over the budget.
        assert_eq!(keep_likely(&[0.5, 0.5], 1e-4), vec![true, true]);
        assert_eq!(keep_likely(&[], 1e-4), Vec::<bool>::new());
        // NaN is never skipped (it cannot be bounded).
        assert_eq!(keep_likely(&[f64::NAN, 0.9], 1e-4), vec![true, true]);
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
        // A label written in capitals still counts the model's usual `Yes` (the OpenAI backend
        // folds case, and both must mean the same).
        let v = surface_variants("YES");
        for want in ["YES", " YES", "yes", " yes", "Yes", " Yes"] {
            assert!(v.contains(&want.to_string()), "{want} missing from {v:?}");
        }
        assert_eq!(v.len(), 6, "duplicates in {v:?}");
        let v = surface_variants("editFile");
        for want in ["editFile", "editfile", "EditFile", "Editfile", "EDITFILE"] {
            assert!(v.contains(&want.to_string()), "{want} missing from {v:?}");
        }
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

    /// Logits over a toy vocabulary from probabilities (their logs; the rest goes to token 0,
    /// which stands for everything else).
    fn logits(pairs: &[(usize, f64)], n: usize) -> Vec<f32> {
        let mut p = vec![0.0f64; n];
        for &(t, q) in pairs {
            p[t] = q;
        }
        p[0] += (1.0 - p.iter().sum::<f64>()).max(0.0);
        p.iter().map(|q| q.ln() as f32).collect()
    }

    fn scored(tokens: &[i32], first: &[f32], after: &[Vec<f32>], continues: &[bool]) -> f64 {
        let step = Step::of(first, continues);
        let tokens: Vec<LlamaToken> = tokens.iter().map(|&t| LlamaToken(t)).collect();
        let mut c = Candidate {
            label: 0,
            log_prob: step.log_prob(first, tokens[0].0 as u32),
            tokens,
            end: 0.0,
        };
        for (position, l) in after.iter().enumerate() {
            c.advance(position, l, continues);
        }
        c.probability()
    }

    #[test]
    fn a_prefix_label_does_not_win_by_being_a_prefix() {
        // Toy vocabulary: 0 other, 1 "edit", 2 "_file", 3 ".", 4 "ing".
        let continues = vec![false, true, true, false, true];
        // The model writes "edit" then "_file" with probability 0.9: the answer is edit_file.
        let first = logits(&[(1, 0.8)], 5);
        let after_edit = logits(&[(2, 0.9), (3, 0.1)], 5);
        let after_file = logits(&[(3, 1.0)], 5);
        let edit = scored(&[1], &first, std::slice::from_ref(&after_edit), &continues);
        let edit_file = scored(&[1, 2], &first, &[after_edit, after_file], &continues);
        assert!((edit - 0.8 * 0.1).abs() < 1e-5, "{edit}");
        assert!((edit_file - 0.8 * 0.9).abs() < 1e-5, "{edit_file}");
        let (p, mass) = label_distribution(&[edit, edit_file]);
        assert!(p[1] > p[0]);
        assert!((mass - 0.8).abs() < 1e-5);
    }

    #[test]
    fn multi_token_labels_multiply_their_conditionals() {
        let continues = vec![false, true, true, false, true];
        let steps = [logits(&[(2, 0.5)], 5), logits(&[(4, 0.25)], 5)];
        let p = scored(&[1, 2], &logits(&[(1, 0.5)], 5), &steps, &continues);
        assert!((p - 0.5 * 0.5 * 0.75).abs() < 1e-5, "{p}");
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
        // A label that starts another before a word-ending character has no one meaning (its
        // end would be the longer label's next piece); `_` continues the word.
        for (short, long) in [
            ("pass", "pass with notes"),
            ("c", "C++"),
            ("web", "web.search"),
        ] {
            let e = validate_labels(&[short.into(), long.into()]).unwrap_err();
            assert!(e.to_string().contains("is the start of label"), "{e}");
        }
        assert!(validate_labels(&["edit".into(), "edit_file".into()]).is_ok());
        // A combining mark continues the word: "cafe" + U+0301 is not the end of "cafe".
        assert!(continues_word("\u{301}"));
        assert!(!continues_word("."));
    }
}
