//! Label probabilities from an endpoint's top logprobs of the first generated token.
//!
//! The meaning is the embedded backend's (see `rein_llama`'s `choose`): a label's probability is
//! the sum over its surface variants (any case, with or without one leading space) of the
//! probability of the whole label followed by the end of the word. An endpoint gives only the
//! top 20 tokens of the first position, so this backend measures what one token can show:
//! a top token counts for a label when (lower-cased, one leading space removed) it is the label
//! or a prefix of it and of no other label. A token that begins two labels ("edit" for `edit` and
//! `edit_file`) is counted for neither, since the token after it (not asked for) decides; that
//! probability then shows as missing label mass. The labels' probabilities are normalised over
//! the labels and `label_mass` is the share they held before; the caller fails a decision whose
//! mass is under [`crate::LABEL_MASS_FLOOR`]. Mass outside the top tokens is unknown and so is
//! not counted for any label.
use serde_json::Value;

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

/// The labels' probabilities normalised over the labels, and the mass they held before that.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelScores {
    pub probabilities: Vec<f64>,
    pub mass: f64,
}

/// Each label's probability under the rule above; `mass` is 0 (and the shares equal) when no top
/// token can be attributed to exactly one label.
pub fn label_probabilities(tops: &[(String, f64)], labels: &[String]) -> LabelScores {
    let lower: Vec<String> = labels.iter().map(|l| l.trim().to_lowercase()).collect();
    let mut mass = vec![0.0f64; labels.len()];
    for (token, logprob) in tops {
        // One leading space is part of a variant (" Yes"); a newline or tab is not.
        let t = token.strip_prefix(' ').unwrap_or(token).to_lowercase();
        if t.is_empty() || !logprob.is_finite() {
            continue;
        }
        let hits: Vec<usize> = lower
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with(&t))
            .map(|(i, _)| i)
            .collect();
        // A token that begins several labels ("edit" for edit and edit_file) cannot say which
        // one the model meant from one token: its probability is left out of every label, so
        // the label mass shows what was not measured and a low one fails the decision.
        if let [only] = hits[..] {
            mass[only] += logprob.exp();
        }
    }
    let total: f64 = mass.iter().sum();
    if total <= 0.0 || !total.is_finite() {
        let share = 1.0 / labels.len().max(1) as f64;
        return LabelScores {
            probabilities: vec![share; labels.len()],
            mass: 0.0,
        };
    }
    LabelScores {
        probabilities: mass.into_iter().map(|m| m / total).collect(),
        mass: total.min(1.0),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(l: &[&str]) -> Vec<String> {
        l.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn variants_sum_and_shared_prefixes_count_for_no_label() {
        let tops = vec![
            (" Sum".to_string(), 0.5f64.ln()),
            ("re".to_string(), 0.2f64.ln()),
            ("REPORT".to_string(), 0.1f64.ln()),
            ("xyz".to_string(), 0.1f64.ln()),
            (" ".to_string(), 0.05f64.ln()),
            ("\nread".to_string(), 0.05f64.ln()),
        ];
        let s = label_probabilities(&tops, &labels(&["summarize", "read", "report"]));
        // summarize 0.5; "re" begins read and report: neither; report 0.1; a newline is not a
        // leading-space variant, so "\nread" counts for nothing.
        assert!((s.mass - 0.6).abs() < 1e-9, "{s:?}");
        let p = &s.probabilities;
        assert!((p[0] - 0.5 / 0.6).abs() < 1e-9, "{p:?}");
        assert_eq!(p[1], 0.0);
        assert!((p[2] - 0.1 / 0.6).abs() < 1e-9, "{p:?}");
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let none = label_probabilities(&tops[3..4], &labels(&["summarize", "read"]));
        assert_eq!(none.mass, 0.0);
        assert_eq!(none.probabilities, vec![0.5, 0.5]);
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
