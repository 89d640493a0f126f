//! Label probabilities from an endpoint's top logprobs, one position at a time.
//!
//! The meaning is the embedded backend's (see `rein_llama`'s `choose`): a label's probability is
//! the sum over its surface variants (any case, with or without one leading space) of the
//! probability of the whole label followed by the end of the word (the next token does not
//! continue it: anything but a letter, digit, `_` or `-`). An endpoint shows only the top 20
//! tokens of one position per request, so the labels are scored as a tree of continuations: the
//! first request gives the first token; every text so far that spells a label (lower-cased, one
//! leading space removed) or begins one is sent again with that text as the start of the
//! reply (a final assistant message, or appended to a raw prompt), and its top tokens give the
//! next step and the end of the word. So `edit` does not win over `edit_file` by being its prefix:
//! after `edit`, a `_file` continues the word and counts for `edit_file` only. A top token that
//! spells a label and then a non-word character (`yes.`) ends the label inside itself.
//!
//! What the tree does not reach is counted for no label, so it shows as missing label mass and
//! the caller fails a decision whose mass is under [`crate::LABEL_MASS_FLOOR`]: probability
//! outside the top tokens, branches under [`MIN_BRANCH`] and branches past [`MAX_REQUESTS`];
//! when the branches left unfollowed hold enough to change which label is best, the decision is
//! refused instead ([`ChooseProblem::Unsettled`]). Also refused, never guessed: a label set in
//! which one label starts another before a word-ending character (`c` and `c++`: the end of
//! the one is the other's next piece; see `label_set_problem`), top logprobs that are not a
//! distribution (a logprob above 0, probabilities adding up to more than 1), and an endpoint
//! that answers a continuation with the bare prompt's tokens (it starts a new reply instead of
//! continuing the started one).
use rein_protocol::model::{continues_word, fold_case, label_key, label_set_problem};
use serde_json::Value;

/// Requests one decision may make (the first included). Two-label yes/no decisions take three
/// (the first token, then the end of each label), seven one-token labels eight.
pub const MAX_REQUESTS: usize = 16;

/// A text so far whose probability is below this is not continued: a label can hold no more
/// than the text it starts with, so at most this much per pruned branch goes uncounted (the
/// embedded backend prunes spellings by the same rule).
pub const MIN_BRANCH: f64 = 1e-3;

/// `(token, logprob)` pairs of the first token, from either response shape:
/// chat (`logprobs.content[0].top_logprobs: [{token, logprob}]`) or legacy completions
/// (`logprobs.top_logprobs[0]: {token: logprob}`). `None` when the response has neither.
pub fn top_logprobs(response: &Value) -> Option<Vec<(String, f64)>> {
    let logprobs = response.pointer("/choices/0/logprobs")?;
    if let Some(tops) = logprobs
        .pointer("/content/0/top_logprobs")
        .and_then(Value::as_array)
    {
        let pairs: Vec<(String, f64)> = tops
            .iter()
            .filter_map(|t| {
                Some((
                    t.get("token")?.as_str()?.to_string(),
                    t.get("logprob")?.as_f64()?,
                ))
            })
            .collect();
        return (!pairs.is_empty()).then_some(pairs);
    }
    if let Some(map) = logprobs
        .pointer("/top_logprobs/0")
        .and_then(Value::as_object)
    {
        let pairs: Vec<(String, f64)> = map
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
            .collect();
        return (!pairs.is_empty()).then_some(pairs);
    }
    None
}

/// The labels' probabilities normalised over the labels, the mass they held before that, and
/// the requests the scoring took.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelScores {
    pub probabilities: Vec<f64>,
    pub mass: f64,
    pub requests: usize,
}

/// Why labels could not be scored: each is a refusal, never a guess.
#[derive(Debug, Clone, PartialEq)]
pub enum ChooseProblem {
    /// The label set has no one meaning (see [`label_set_problem`]).
    Labels(String),
    /// A reply's top logprobs are not part of a probability distribution (a logprob above 0,
    /// or probabilities that add up to more than 1).
    NotADistribution(String),
    /// Asked to continue a reply, the endpoint answered as it did to the bare prompt: it does
    /// not continue a final assistant message.
    NotContinued,
    /// Requests ran out, or branches too unlikely to follow were left, with enough probability
    /// in them to change which label is best.
    Unsettled { unresolved: f64, lead: f64 },
}

impl std::fmt::Display for ChooseProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChooseProblem::Labels(why) => write!(f, "{why}"),
            ChooseProblem::NotADistribution(why) => write!(
                f,
                "the endpoint's top logprobs are not a probability distribution ({why}); choose cannot trust them"
            ),
            ChooseProblem::NotContinued => write!(
                f,
                "the endpoint does not continue a reply that was started for it (a final assistant message): choose needs that to score whole labels; use llama-server or an embedded model for decisions"
            ),
            ChooseProblem::Unsettled { unresolved, lead } => write!(
                f,
                "choose could not settle the labels within {MAX_REQUESTS} requests: {unresolved:.3} of the probability was not followed, and the best label leads by only {lead:.3}; use labels with fewer spellings or an embedded model"
            ),
        }
    }
}

impl From<ChooseProblem> for String {
    fn from(p: ChooseProblem) -> String {
        p.to_string()
    }
}

/// A reply's text as a label spelling: one leading space removed, then [`fold_case`] (nothing
/// trimmed: a trailing blank ends the word, it does not vanish).
fn spelling(text: &str) -> String {
    fold_case(text.strip_prefix(' ').unwrap_or(text))
}

/// Logprobs a little above 0, and sums a little above 1, are rounding, not manufactured
/// probability.
const ROUNDING: f64 = 1e-3;

/// Refuses top tokens that are not part of one distribution.
fn check_distribution(tops: &[(String, f64)]) -> Result<(), ChooseProblem> {
    if let Some((token, lp)) = tops.iter().find(|(_, lp)| *lp > ROUNDING) {
        return Err(ChooseProblem::NotADistribution(format!(
            "token {token:?} has logprob {lp}"
        )));
    }
    let total: f64 = tops
        .iter()
        .map(|(_, lp)| lp.exp())
        .filter(|p| p.is_finite())
        .sum();
    if total > 1.0 + ROUNDING {
        return Err(ChooseProblem::NotADistribution(format!(
            "the top tokens' probabilities add up to {total:.3}"
        )));
    }
    Ok(())
}

/// Whether a continuation's top tokens are the bare prompt's (the same leading tokens, in the
/// same order, with the same logprobs): the endpoint started a new reply instead.
fn same_as_first(tops: &[(String, f64)], first: &[(String, f64)]) -> bool {
    let n = tops.len().min(first.len()).min(5);
    n > 0
        && tops.len().min(5) == first.len().min(5)
        && tops[..n]
            .iter()
            .zip(&first[..n])
            .all(|((a, x), (b, y))| a == b && (x - y).abs() < 0.01)
}

/// Scores `labels` under the rule above. `next(start)` gives the top tokens after a reply that
/// starts with `start` (`""` for the first request); its error ends the scoring. `mass` is 0
/// (and the shares equal) when no label was reached. The labels must pass
/// [`label_set_problem`]; a reply that is not a distribution, an endpoint that does not
/// continue, and a ranking the unfollowed branches could change are refused.
pub fn score_labels<E: From<ChooseProblem>>(
    labels: &[String],
    mut next: impl FnMut(&str) -> Result<Vec<(String, f64)>, E>,
) -> Result<LabelScores, E> {
    if let Some(problem) = label_set_problem(labels) {
        return Err(ChooseProblem::Labels(problem).into());
    }
    let keys: Vec<String> = labels.iter().map(|l| label_key(l)).collect();
    let mut mass = vec![0.0f64; labels.len()];
    // Texts to continue, with their probabilities; the likeliest is continued first.
    let mut open: Vec<(f64, String)> = vec![(1.0, String::new())];
    // Probability in label prefixes too unlikely to follow.
    let mut pruned = 0.0f64;
    let mut first: Option<Vec<(String, f64)>> = None;
    let mut requests = 0;
    while requests < MAX_REQUESTS {
        let Some(likeliest) = (0..open.len()).max_by(|&a, &b| open[a].0.total_cmp(&open[b].0))
        else {
            break;
        };
        let (p, start) = open.remove(likeliest);
        let tops = next(&start)?;
        requests += 1;
        check_distribution(&tops)?;
        match &first {
            None => first = Some(tops.clone()),
            Some(first) if same_as_first(&tops, first) => {
                return Err(ChooseProblem::NotContinued.into())
            }
            Some(_) => {}
        }
        let so_far = spelling(&start);
        let spelled = keys.iter().position(|k| *k == so_far);
        for (token, logprob) in tops {
            let q = p * logprob.exp();
            if !q.is_finite() || q <= 0.0 {
                continue;
            }
            // The start spells a label and this token does not continue the word: it ends.
            // (No other label goes on from here with such a character: label_set_problem.)
            if let Some(l) = spelled {
                if !token.chars().next().is_some_and(continues_word) {
                    mass[l] += q;
                }
            }
            if token.is_empty() {
                continue;
            }
            let text = format!("{start}{token}");
            let said = spelling(&text);
            for (l, key) in keys.iter().enumerate() {
                // A label that ends inside this token ("yes." or "yes\n"); one the start already
                // spelled ended above.
                let ended = key.len() > so_far.len()
                    && said
                        .strip_prefix(key.as_str())
                        .and_then(|rest| rest.chars().next())
                        .is_some_and(|c| !continues_word(c));
                if ended {
                    mass[l] += q;
                }
            }
            if keys.iter().any(|k| k.starts_with(&said)) {
                if q >= MIN_BRANCH {
                    open.push((q, text));
                } else {
                    pruned += q;
                }
            }
        }
    }
    let unresolved = pruned + open.iter().map(|(q, _)| q).sum::<f64>();
    let mut ranked = mass.clone();
    ranked.sort_by(|a, b| b.total_cmp(a));
    let best = ranked.first().copied().unwrap_or(0.0);
    let lead = best - ranked.get(1).copied().unwrap_or(0.0);
    if unresolved > 0.0 && lead <= unresolved {
        return Err(ChooseProblem::Unsettled { unresolved, lead }.into());
    }
    let total: f64 = mass.iter().sum();
    if total <= 0.0 || !total.is_finite() {
        let share = 1.0 / labels.len().max(1) as f64;
        return Ok(LabelScores {
            probabilities: vec![share; labels.len()],
            mass: 0.0,
            requests,
        });
    }
    Ok(LabelScores {
        probabilities: mass.into_iter().map(|m| m / total).collect(),
        mass: total.min(1.0),
        requests,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_prompt_that_ends_with_the_assistants_words_is_continued_from_them() {
        use serde_json::Map;
        let mut body = Map::new();
        body.insert(
            "messages".into(),
            json!([{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "Answer:"}]),
        );
        let next = crate::openai::continued(&body, " yes");
        assert_eq!(
            next["messages"],
            json!([{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "Answer: yes"}])
        );
    }

    #[test]
    fn both_response_shapes() {
        let chat = json!({"choices":[{"logprobs":{"content":[{"token":"a","logprob":-0.1,
            "top_logprobs":[{"token":"a","logprob":-0.1},{"token":"b","logprob":-2.0}]}]}}]});
        assert_eq!(top_logprobs(&chat).unwrap().len(), 2);
        let legacy = json!({"choices":[{"logprobs":{"top_logprobs":[{"a":-0.1,"b":-2.0}]}}]});
        assert_eq!(top_logprobs(&legacy).unwrap().len(), 2);
        assert!(top_logprobs(&json!({"choices":[{"logprobs":null}]})).is_none());
        assert!(top_logprobs(&json!({"choices":[{}]})).is_none());
    }
}
