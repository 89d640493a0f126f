//! `score_labels` (OpenAI-compatible choose): the meaning on models given as trees of top
//! tokens, then a red team's attacks kept as regressions. Each attack asserts the safe
//! behaviour: the decision is refused (an error, which callers treat as an outage), fails the
//! label-mass floor, or is right.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use rein_models::openai::{score_labels, LabelScores};
use rein_models::LABEL_MASS_FLOOR;
use rein_models::{ChatMessage, ChooseRequest, Model, ModelError, OpenAiModel, Prompt};
use rein_testkit::FakeOpenAi;

fn labels(l: &[&str]) -> Vec<String> {
    l.iter().map(|s| s.to_string()).collect()
}

/// A model as the top tokens (token, probability) after each reply start; unknown starts have
/// no tops.
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

fn score(l: &[&str], steps: &[(&str, &[(&str, f64)])]) -> LabelScores {
    score_labels(&labels(l), tree(steps)).unwrap()
}

/// The error of a refused scoring; panics when the labels were scored.
fn refusal(l: &[&str], steps: &[(&str, &[(&str, f64)])]) -> String {
    match score_labels(&labels(l), tree(steps)) {
        Err(e) => e,
        Ok(s) => panic!("scored instead of refused: {s:?}"),
    }
}

fn argmax(s: &LabelScores) -> usize {
    (0..s.probabilities.len())
        .max_by(|&a, &b| s.probabilities[a].total_cmp(&s.probabilities[b]))
        .unwrap()
}

/// A decision the caller would accept (mass at or above the floor).
fn accepted(s: &LabelScores) -> bool {
    !s.mass.is_nan() && s.mass >= LABEL_MASS_FLOOR
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

// ---------------------------------------------------------------------------------------------
// The meaning.

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
fn an_endpoint_that_starts_a_new_reply_instead_of_continuing_is_found_out() {
    // Asked to continue "Yes", it answers afresh: the bare prompt's tokens again.
    let tops: &[(&str, f64)] = &[(" edit", 0.8), ("Yes", 0.1), ("No", 0.1)];
    let e = score_labels(
        &labels(&["yes", "no", "edit"]),
        tree(&[("", tops), (" edit", tops), ("Yes", tops), ("No", tops)]),
    )
    .unwrap_err();
    assert_eq!(
        e,
        rein_models::openai::ChooseProblem::NotContinued.to_string()
    );
}

#[test]
fn a_reply_that_is_not_a_distribution_is_refused() {
    let positive = score_labels(&labels(&["yes", "no"]), |_: &str| -> Result<_, String> {
        Ok(vec![("yes".to_string(), 1.5)])
    });
    assert!(positive.unwrap_err().contains("logprob 1.5"));
    let over = score_labels(
        &labels(&["yes", "no"]),
        tree(&[("", &[("yes", 0.4), ("yes", 0.4), ("no", 0.45)])]),
    );
    assert!(over.unwrap_err().contains("add up to 1.250"));
}

#[test]
fn label_sets_without_one_meaning_are_refused_before_any_request() {
    for set in [
        &["pass", "pass with notes"][..],
        &["c", "C++"],
        &["web", "web.search"],
        &["a", " A "],
        &["a", ""],
    ] {
        let mut asked = 0;
        let e = score_labels(&labels(set), |_: &str| -> Result<Vec<_>, String> {
            asked += 1;
            Ok(vec![])
        });
        assert!(e.is_err(), "{set:?}");
        assert_eq!(asked, 0);
    }
    // A word character after the shorter label keeps the two apart.
    assert!(
        rein_models::label_set_problem(&labels(&["edit", "edit_file", "re-run", "re"])).is_none()
    );
}

#[test]
fn a_combining_mark_or_a_dotted_capital_continues_the_word() {
    let s = score_labels(
        &labels(&["cafe", "multi", "other"]),
        tree(&[
            ("", &[("cafe", 0.5), ("MULTİPLE", 0.4), ("other", 0.1)]),
            ("cafe", &[("\u{301}", 1.0)]),
            ("other", &[("", 1.0)]),
        ]),
    )
    .unwrap();
    assert!(close(s.mass, 0.1), "{s:?}");
}

#[test]
fn requests_are_capped_and_unlikely_branches_are_not_asked() {
    let mut asked = Vec::new();
    let many: Vec<String> = (0..40).map(|i| format!("label{i}")).collect();
    let e = score_labels(&many, |start: &str| -> Result<_, String> {
        asked.push(start.to_string());
        Ok(if start.is_empty() {
            (0..20)
                .map(|i| (format!("label{i}"), (0.0499f64).ln()))
                .collect()
        } else {
            vec![("".to_string(), 0.0)]
        })
    })
    .unwrap_err();
    assert_eq!(asked.len(), rein_models::openai::MAX_REQUESTS);
    // 15 of the 20 labels seen were ended; the 5 left could change the best label.
    assert!(e.contains("could not settle"), "{e}");
    let mut rare = Vec::new();
    let s = score_labels(
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
    assert_eq!(s.requests, 2);
    // A pruned branch that could change the winner is not left out silently.
    let e = score_labels(
        &labels(&["yes", "no"]),
        |start: &str| -> Result<_, String> {
            Ok(match start {
                "" => vec![
                    ("yes".into(), (0.0009f64).ln()),
                    ("no".into(), (0.0008f64).ln()),
                    ("x".into(), (0.99f64).ln()),
                ],
                _ => vec![("".into(), 0.0)],
            })
        },
    )
    .unwrap_err();
    assert!(e.contains("could not settle"), "{e}");
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

// ---------------------------------------------------------------------------------------------
// Prefix labels whose longer label continues with a non-word character.

#[test]
fn prefix_label_takes_longer_labels_mass_across_a_space() {
    // The model says "pass with notes" or "pass with changes", never plain "pass".
    let e = refusal(
        &["pass", "pass with notes", "pass with changes", "fail"],
        &[
            ("", &[("pass", 0.75), ("fail", 0.25)]),
            ("pass", &[(" with", 1.0)]),
            (
                "pass with",
                &[(" notes", 0.4 / 0.75), (" changes", 0.35 / 0.75)],
            ),
            ("pass with notes", &[("", 1.0)]),
            ("pass with changes", &[("", 1.0)]),
            ("fail", &[("", 1.0)]),
        ],
    );
    // The set has no one meaning: the end of the shorter label is the longer one's next piece.
    assert!(e.contains("is the start of label"), "{e}");
}

#[test]
fn prefix_label_takes_longer_labels_mass_across_punctuation() {
    // Language classification: C++ and C# both begin with "c" followed by a non-word char.
    let e = refusal(
        &["c", "c++", "c#"],
        &[
            ("", &[("C", 0.95), ("c", 0.05)]),
            ("C", &[("++", 0.5 / 0.95), ("#", 0.45 / 0.95)]),
            ("c", &[("", 1.0)]),
            ("C++", &[("\n", 1.0)]),
            ("C#", &[("\n", 1.0)]),
        ],
    );
    // The set has no one meaning: the end of the shorter label is the longer one's next piece.
    assert!(e.contains("is the start of label"), "{e}");
}

#[test]
fn prefix_label_takes_longer_label_ending_inside_one_token() {
    // "web.search" is one token; "web" ends inside it (rest ".search") and is counted too.
    let e = refusal(
        &["web", "web.search", "web.fetch"],
        &[
            (
                "",
                &[("web.search", 0.5), ("web.fetch", 0.45), ("web", 0.05)],
            ),
            ("web.search", &[("", 1.0)]),
            ("web.fetch", &[("", 1.0)]),
            ("web", &[("", 1.0)]),
        ],
    );
    // The set has no one meaning: the end of the shorter label is the longer one's next piece.
    assert!(e.contains("is the start of label"), "{e}");
}

#[test]
fn positive_logprob_cannot_manufacture_mass() {
    // 0.2 of the model says "yes", 0.8 "I ..."; the end step reports logprob +ln 4 (> 0).
    let s = score_labels(
        &labels(&["yes", "no"]),
        |start: &str| -> Result<_, String> {
            Ok(match start {
                "" => vec![("yes".into(), 0.2f64.ln()), ("I".into(), 0.8f64.ln())],
                "yes" => vec![("".into(), 4.0f64.ln())],
                _ => vec![],
            })
        },
    )
    .unwrap_err();
    // True label mass is at most 0.2: refused, never inflated.
    assert!(s.contains("not a probability distribution"), "{s}");
}

#[test]
fn positive_logprob_cannot_hijack_the_winner() {
    let s = score_labels(
        &labels(&["yes", "no"]),
        |start: &str| -> Result<_, String> {
            Ok(match start {
                "" => vec![("no".into(), 0.9f64.ln()), ("yes".into(), 3.0)],
                _ => vec![("".into(), 0.0)],
            })
        },
    )
    .unwrap_err();
    assert!(
        s.contains("logprob 3"),
        "a logprob of +3 was not refused: {s}"
    );
}

#[test]
fn duplicated_tokens_summing_over_one_cannot_win() {
    // The same token listed three times: the tops sum to 1.8, an impossible distribution.
    let e = refusal(
        &["yes", "no"],
        &[
            (
                "",
                &[
                    ("yes", 0.4),
                    ("yes", 0.4),
                    ("yes", 0.4),
                    ("no", 0.45),
                    ("I", 0.15),
                ],
            ),
            ("yes", &[("", 1.0)]),
            ("no", &[("", 1.0)]),
        ],
    );
    assert!(e.contains("add up to 1.800"), "{e}");
}

#[test]
fn nan_inf_and_empty_tokens_do_not_panic_or_count() {
    let s = score_labels(
        &labels(&["yes", "no"]),
        |start: &str| -> Result<_, String> {
            Ok(match start {
                "" => vec![
                    ("yes".into(), f64::NAN),
                    ("no".into(), f64::INFINITY),
                    ("yes".into(), f64::NEG_INFINITY),
                    ("".into(), f64::NAN),
                    ("".into(), 0.0),
                    ("Yes".into(), f64::MAX),
                ],
                _ => vec![("".into(), f64::INFINITY), ("".into(), f64::NAN)],
            })
        },
    );
    match s {
        Err(e) => assert!(e.contains("not a probability distribution"), "{e}"),
        Ok(s) => assert!(!accepted(&s) && s.requests <= 16, "{s:?}"),
    }
}

#[test]
fn huge_top_lists_are_bounded_in_requests() {
    let mut asked = 0usize;
    let s = score_labels(
        &labels(&[
            "summary", "chat", "find", "linked", "compute", "image", "audio",
        ]),
        |_start: &str| -> Result<_, String> {
            asked += 1;
            // 50 000 tokens, all label prefixes, all "certain" (logprob 0).
            Ok((0..50_000)
                .map(|i| (if i % 2 == 0 { "s" } else { " S" }.to_string(), 0.0))
                .collect())
        },
    );
    assert!(asked <= 16, "{asked}");
    match s {
        Err(e) => assert!(e.contains("not a probability distribution"), "{e}"),
        Ok(s) => assert!(!accepted(&s), "{s:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Unicode: tokens that continue the word counted as an end.

#[test]
fn dotted_capital_i_continues_the_word() {
    // "MULTİPLE" lowercases to "multi\u{307}ple": U+0307 is not alphanumeric, so "multi" is
    // taken as ended inside the token though the word goes on.
    let s = score(
        &["multi", "single"],
        &[
            ("", &[("MULTİPLE", 0.9), ("single", 0.1)]),
            ("single", &[("", 1.0)]),
        ],
    );
    assert!(
        s.probabilities[0] < 1e-9 && !accepted(&s),
        "\"multi\" was credited with the word MULTİPLE: {s:?}"
    );
}

#[test]
fn combining_mark_continues_the_word() {
    // "cafe" + U+0301 is "café" (decomposed), another word; the mark is not an end.
    let s = score(
        &["cafe", "bar"],
        &[
            ("", &[("cafe", 0.9), ("bar", 0.1)]),
            ("cafe", &[("\u{301}", 1.0)]),
            ("bar", &[("", 1.0)]),
        ],
    );
    assert!(
        s.probabilities[0] < 1e-9 && !accepted(&s),
        "a combining mark was taken as the end of \"cafe\": {s:?}"
    );
}

#[test]
fn final_sigma_in_a_split_spelling_is_still_a_prefix() {
    // Label "ΟΣΑ" spelled "ΟΣ" + "Α": "ΟΣ" lowercases alone to "ος" (final sigma), which is no
    // prefix of "οσα", so the branch is dropped. (Fails closed: undercount, not a wrong answer.)
    let s = score(
        &["ΟΣΑ", "ναι"],
        &[
            ("", &[("ΟΣ", 0.9), ("ναι", 0.1)]),
            ("ΟΣ", &[("Α", 1.0)]),
            ("ΟΣΑ", &[("", 1.0)]),
            ("ναι", &[("", 1.0)]),
        ],
    );
    assert!((s.mass - 1.0).abs() < 1e-9, "{s:?}");
    assert_eq!(argmax(&s), 0, "{s:?}");
}

#[test]
fn dotted_capital_i_label_matches_its_own_spelling() {
    // Held check: a label with İ (lowercase grows a byte) matches its own spellings.
    let s = score(
        &["İzmir", "ankara"],
        &[
            ("", &[("İz", 0.6), (" ANKARA", 0.4)]),
            ("İz", &[("mir", 1.0)]),
            ("İzmir", &[("", 1.0)]),
            (" ANKARA", &[(".", 1.0)]),
        ],
    );
    assert!((s.mass - 1.0).abs() < 1e-9, "{s:?}");
    assert!((s.probabilities[0] - 0.6).abs() < 1e-9, "{s:?}");
}

// ---------------------------------------------------------------------------------------------
// The request cap: uncounted mass concentrated on one label flips the decision.

#[test]
fn request_cap_starves_a_multi_token_label_into_a_confident_wrong_answer() {
    // 0.6 of the model says transcribe_audio_file in six case/space variants (0.1 each), four
    // tokens each; 0.4 says chat. The embedded backend scores all eight variants.
    let variants = ["trans", "Trans", "TRANS", " trans", " Trans", " TRANS"];
    let mut asked = 0;
    let s = score_labels(
        &labels(&["chat", "transcribe_audio_file"]),
        |start: &str| -> Result<_, String> {
            asked += 1;
            let sp = start.strip_prefix(' ').unwrap_or(start).to_lowercase();
            Ok(if start.is_empty() {
                let mut tops: Vec<(String, f64)> = variants
                    .iter()
                    .map(|v| (v.to_string(), 0.1f64.ln()))
                    .collect();
                tops.push(("chat".into(), 0.4f64.ln()));
                tops
            } else if sp == "chat" || sp == "transcribe_audio_file" {
                vec![("".into(), 0.0)]
            } else if sp == "trans" {
                vec![("cribe".into(), 0.0)]
            } else if sp == "transcribe" {
                vec![("_audio".into(), 0.0)]
            } else if sp == "transcribe_audio" {
                vec![("_file".into(), 0.0)]
            } else {
                vec![]
            })
        },
    );
    match s {
        Err(e) => assert!(e.contains("could not settle"), "{e}"),
        Ok(s) => assert!(
            !(accepted(&s) && argmax(&s) == 0),
            "chat (0.4) confidently beat transcribe_audio_file (0.6) after {asked} requests: {s:?}"
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// Over HTTP: the endpoint side.

#[test]
fn endpoint_ignoring_prefill_with_space_led_tokens_fails_closed() {
    // The endpoint answers every continuation afresh with the root distribution, whose tokens
    // start with a space: each fresh " edit" looks like the end of "edit".
    let server = FakeOpenAi::start().unwrap();
    let p = |x: f64| x.ln();
    let tops: &[(&str, f64)] = &[(" edit", p(0.8)), ("edit", p(0.2))];
    server.set_logprob_tree(&[("", tops), (" edit", tops), ("edit", tops)]);
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    let r = m.choose(&ChooseRequest {
        prompt: Prompt::chat(vec![ChatMessage::user("Which tool?")]),
        labels: labels(&["edit", "edit_file"]),
    });
    assert!(
        matches!(
            r,
            Err(ModelError::LowLabelMass { .. } | ModelError::Unsupported(_))
        ),
        "an endpoint that ignores the prefill gave a confident answer: {r:?}"
    );
}

#[test]
fn continuation_of_a_chat_that_already_ends_with_an_assistant_message() {
    // The prompt already prefills "Answer:"; the continuation must extend that reply, not
    // append a second assistant turn after it.
    let server = FakeOpenAi::start().unwrap();
    let p = |x: f64| x.ln();
    server.set_logprob_tree(&[
        ("Answer:", &[(" yes", p(0.9)), (" no", p(0.1))]),
        ("Answer: yes", &[("", 0.0)]),
        ("Answer: no", &[("", 0.0)]),
    ]);
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    let _ = m.choose(&ChooseRequest {
        prompt: Prompt::chat(vec![
            ChatMessage::user("Q?"),
            ChatMessage::assistant("Answer:"),
        ]),
        labels: labels(&["yes", "no"]),
    });
    let posts = server.posts();
    assert!(posts.len() >= 2, "{}", posts.len());
    let msgs = posts[1].body["messages"].as_array().unwrap().clone();
    assert_eq!(
        msgs.len(),
        2,
        "continuation added a second assistant turn: {msgs:?}"
    );
    assert_eq!(msgs[1]["content"], "Answer: yes", "{msgs:?}");
}

#[test]
fn raw_prompt_continuation_is_bounded_and_yes_no_takes_three_requests() {
    // Held check over HTTP.
    let server = FakeOpenAi::start().unwrap();
    let p = |x: f64| x.ln();
    server.set_logprob_tree(&[
        ("Q:", &[(" yes", p(0.7)), (" no", p(0.3))]),
        ("Q: yes", &[(".", 0.0)]),
        ("Q: no", &[("\n", 0.0)]),
    ]);
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    let r = m
        .choose(&ChooseRequest {
            prompt: Prompt::raw("Q:"),
            labels: labels(&["yes", "no"]),
        })
        .unwrap();
    assert_eq!(server.posts().len(), 3);
    assert!((r.probabilities[0].probability - 0.7).abs() < 1e-9, "{r:?}");
}

#[test]
fn no_labels_do_not_panic() {
    // The public scorer, called without labels: nothing to rank, no panic.
    let s = score_labels(&[], tree(&[("", &[("yes", 0.9)])])).unwrap();
    assert!(s.probabilities.is_empty() && s.mass == 0.0, "{s:?}");
}
