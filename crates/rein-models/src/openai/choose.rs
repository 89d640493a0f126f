//! Label probabilities from an endpoint's top logprobs of the first generated token.
//!
//! The rule: a top token counts for a label when, after trimming its leading whitespace, it is a
//! non-empty prefix of the label, compared case-insensitively (" Sum" counts for "summarize").
//! When one token is a prefix of several labels ("re" for "read" and "report"), its probability
//! is split equally among them, since one token cannot tell them apart. The masses are then
//! renormalised over the labels, so they sum to 1. Only the endpoint's top tokens (20 asked for)
//! are seen: mass outside them is unknown and ignored.

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

/// Each label's probability under the rule above, or `None` when no top token begins any label.
pub fn label_probabilities(tops: &[(String, f64)], labels: &[String]) -> Option<Vec<f64>> {
    let lower: Vec<String> = labels.iter().map(|l| l.to_lowercase()).collect();
    let mut mass = vec![0.0f64; labels.len()];
    for (token, logprob) in tops {
        let t = token.trim_start().to_lowercase();
        if t.is_empty() || !logprob.is_finite() {
            continue;
        }
        let hits: Vec<usize> = lower
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with(&t))
            .map(|(i, _)| i)
            .collect();
        if hits.is_empty() {
            continue;
        }
        let share = logprob.exp() / hits.len() as f64;
        for i in hits {
            mass[i] += share;
        }
    }
    let total: f64 = mass.iter().sum();
    if total <= 0.0 || !total.is_finite() {
        return None;
    }
    Some(mass.into_iter().map(|m| m / total).collect())
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
    fn prefixes_count_and_shared_prefixes_split() {
        let tops = vec![
            (" Sum".to_string(), 0.5f64.ln()),
            ("re".to_string(), 0.2f64.ln()),
            ("report".to_string(), 0.1f64.ln()),
            ("xyz".to_string(), 0.1f64.ln()),
            (" ".to_string(), 0.1f64.ln()),
        ];
        let p = label_probabilities(&tops, &labels(&["summarize", "read", "report"])).unwrap();
        // summarize 0.5, read 0.1, report 0.1 + 0.1 = 0.2 → /0.8
        assert!((p[0] - 0.625).abs() < 1e-9, "{p:?}");
        assert!((p[1] - 0.125).abs() < 1e-9, "{p:?}");
        assert!((p[2] - 0.25).abs() < 1e-9, "{p:?}");
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(label_probabilities(&tops[3..], &labels(&["summarize"])).is_none());
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
