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
//! outside the top tokens, branches under [`MIN_BRANCH`] and branches past [`MAX_REQUESTS`]. An
//! endpoint that does not continue a final assistant message (it starts a new reply instead)
//! gives ends that continue the word, so its decisions fail closed as low label mass rather than
//! guess.
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

/// A character that continues a word, so a label followed by it has not ended.
fn continues_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// A reply's text as a label spelling: one leading space removed, lower case.
fn spelling(text: &str) -> String {
    text.strip_prefix(' ').unwrap_or(text).to_lowercase()
}

/// Scores `labels` under the rule above. `next(start)` gives the top tokens after a reply that
/// starts with `start` (`""` for the first request); its error ends the scoring. `mass` is 0
/// (and the shares equal) when no label was reached.
pub fn score_labels<E>(
    labels: &[String],
    mut next: impl FnMut(&str) -> Result<Vec<(String, f64)>, E>,
) -> Result<LabelScores, E> {
    let lower: Vec<String> = labels.iter().map(|l| l.trim().to_lowercase()).collect();
    let mut mass = vec![0.0f64; labels.len()];
    // Texts to continue, with their probabilities; the likeliest is continued first.
    let mut open: Vec<(f64, String)> = vec![(1.0, String::new())];
    let mut requests = 0;
    while requests < MAX_REQUESTS {
        let Some(likeliest) = (0..open.len()).max_by(|&a, &b| open[a].0.total_cmp(&open[b].0))
        else {
            break;
        };
        let (p, start) = open.remove(likeliest);
        let tops = next(&start)?;
        requests += 1;
        let so_far = spelling(&start);
        let spelled = lower.iter().position(|l| *l == so_far);
        for (token, logprob) in tops {
            let q = p * logprob.exp();
            if !q.is_finite() || q <= 0.0 {
                continue;
            }
            // The start spells a label and this token does not continue the word: it ends.
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
            for (l, label) in lower.iter().enumerate() {
                // A label that ends inside this token ("yes." or "yes\n"); one the start already
                // spelled ended above.
                let ended = label.len() > so_far.len()
                    && said
                        .strip_prefix(label.as_str())
                        .and_then(|rest| rest.chars().next())
                        .is_some_and(|c| !continues_word(c));
                if ended {
                    mass[l] += q;
                }
            }
            if q >= MIN_BRANCH && lower.iter().any(|l| l.starts_with(&said)) {
                open.push((q, text));
            }
        }
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
    use std::collections::HashMap;

    fn labels(l: &[&str]) -> Vec<String> {
        l.iter().map(|s| s.to_string()).collect()
    }

    /// A model given as the top tokens after each reply start; a start it lacks has no tops.
    fn tree(
        steps: &[(&str, &[(&str, f64)])],
    ) -> impl FnMut(&str) -> Result<Vec<(String, f64)>, String> {
        let steps: HashMap<String, Vec<(String, f64)>> = steps
            .iter()
            .map(|(start, tops)| {
                let tops = tops.iter().map(|(t, p)| (t.to_string(), p.ln())).collect();
                (start.to_string(), tops)
            })
            .collect();
        move |start| Ok(steps.get(start).cloned().unwrap_or_default())
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn a_label_counts_once_its_word_has_ended() {
        let s = score_labels(
            &labels(&["yes", "no"]),
            tree(&[
                ("", &[("Yes", 0.6), (" no", 0.3), ("I", 0.1)]),
                // "Yes" then the end of generation or a full stop; "Yesterday" is not yes.
                ("Yes", &[("", 0.8), (".", 0.1), ("terday", 0.1)]),
                (" no", &[("\n", 1.0)]),
            ]),
        )
        .unwrap();
        assert!(close(s.mass, 0.6 * 0.9 + 0.3), "{s:?}");
        assert!(close(s.probabilities[0], 0.54 / 0.84), "{s:?}");
        assert_eq!(s.requests, 3);
    }

    #[test]
    fn a_prefix_label_does_not_take_the_longer_labels_mass() {
        let s = score_labels(
            &labels(&["edit", "edit_file", "read"]),
            tree(&[
                ("", &[("edit", 0.9), (" read", 0.1)]),
                ("edit", &[("_file", 0.8), ("\n", 0.2)]),
                ("edit_file", &[("", 1.0)]),
                (" read", &[(" ", 1.0)]),
            ]),
        )
        .unwrap();
        let p = &s.probabilities;
        assert!(close(s.mass, 1.0), "{s:?}");
        assert!(
            close(p[0], 0.18) && close(p[1], 0.72) && close(p[2], 0.1),
            "{s:?}"
        );
        assert_eq!(s.requests, 4);
    }

    #[test]
    fn case_and_space_variants_and_split_spellings_add_up() {
        let s = score_labels(
            &labels(&["summarize", "read"]),
            tree(&[
                (
                    "",
                    &[
                        ("Summ", 0.4),
                        (" summarize", 0.2),
                        ("READ", 0.1),
                        (" ", 0.2),
                    ],
                ),
                ("Summ", &[("arize", 1.0)]),
                ("Summarize", &[("", 1.0)]),
                (" summarize", &[(":", 1.0)]),
                ("READ", &[("", 1.0)]),
                // One space, then the word: the leading-space variant spelled in two tokens.
                (" ", &[("Read", 0.5), ("\n", 0.5)]),
                (" Read", &[("", 1.0)]),
            ]),
        )
        .unwrap();
        assert!(close(s.mass, 0.4 + 0.2 + 0.1 + 0.1), "{s:?}");
        assert!(close(s.probabilities[0], 0.6 / 0.8), "{s:?}");
    }

    #[test]
    fn a_label_that_ends_inside_its_token_needs_no_second_request() {
        let s = score_labels(
            &labels(&["yes", "no"]),
            tree(&[("", &[("yes.", 0.5), ("no,", 0.25), ("nope", 0.25)])]),
        )
        .unwrap();
        assert!(close(s.mass, 0.75), "{s:?}");
        assert_eq!(s.requests, 1);
    }

    #[test]
    fn an_endpoint_that_starts_a_new_reply_instead_of_continuing_fails_closed() {
        // Asked to continue "Yes", it answers afresh: "Yes" again, which continues the word.
        let s = score_labels(
            &labels(&["yes", "no"]),
            tree(&[
                ("", &[("Yes", 0.9), ("No", 0.1)]),
                ("Yes", &[("Yes", 0.9), ("No", 0.1)]),
                ("No", &[("Yes", 0.9), ("No", 0.1)]),
            ]),
        )
        .unwrap();
        assert!(s.mass < crate::LABEL_MASS_FLOOR, "{s:?}");
    }

    #[test]
    fn requests_are_capped_and_unlikely_branches_are_not_asked() {
        let mut asked = Vec::new();
        let many: Vec<String> = (0..40).map(|i| format!("label{i}")).collect();
        let s = score_labels(&many, |start: &str| -> Result<_, String> {
            asked.push(start.to_string());
            Ok(if start.is_empty() {
                (0..20)
                    .map(|i| (format!("label{i}"), (0.0499f64).ln()))
                    .collect()
            } else {
                vec![("".to_string(), 0.0)]
            })
        })
        .unwrap();
        assert_eq!(s.requests, MAX_REQUESTS);
        assert_eq!(asked.len(), MAX_REQUESTS);
        // The first request and 15 label ends: 15 of the 20 labels seen are counted.
        assert!(close(s.mass, 15.0 * 0.0499), "{s:?}");
        let mut rare = Vec::new();
        score_labels(
            &labels(&["yes", "no"]),
            |start: &str| -> Result<_, String> {
                rare.push(start.to_string());
                Ok(if start.is_empty() {
                    vec![
                        ("yes".into(), (0.9995f64).ln()),
                        ("no".into(), (0.0005f64).ln()),
                    ]
                } else {
                    vec![("".into(), 0.0)]
                })
            },
        )
        .unwrap();
        assert_eq!(rare, vec!["".to_string(), "yes".to_string()]);
    }

    #[test]
    fn an_error_ends_the_scoring() {
        let e = score_labels(&labels(&["a"]), |_: &str| -> Result<Vec<_>, String> {
            Err("down".into())
        });
        assert_eq!(e.unwrap_err(), "down");
        let none = score_labels(&labels(&["a", "b"]), tree(&[("", &[("xyz", 0.9)])])).unwrap();
        assert_eq!((none.mass, none.probabilities), (0.0, vec![0.5, 0.5]));
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
