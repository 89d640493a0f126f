#![allow(clippy::unwrap_used, clippy::expect_used)]
//! On the embedded backend with the real 0.5B: a label's probability
//! sums its case and leading-space spellings (so the labels as written in another case give the
//! same decision), and a prefix label does not win over the longer label by being its start.
//! Set REIN_SKIP_MODEL_TESTS=1 to skip.

use rein_models::embedded::{launch_for, EmbeddedModel};
use rein_models::{Catalog, ChatMessage, ChooseRequest, DataDir, Model, Prompt};

fn start() -> EmbeddedModel {
    let catalog = Catalog::builtin().unwrap();
    let entry = catalog.get("qwen2.5-coder-0.5b").unwrap();
    let dir = DataDir::from_env().unwrap();
    let mut launch = launch_for(entry, &dir, env!("CARGO_BIN_EXE_rein").into()).unwrap();
    launch.threads = 1;
    launch.prefix_store = None;
    EmbeddedModel::start(launch).unwrap()
}

fn ask(prompt: &str, labels: &[&str]) -> ChooseRequest {
    ChooseRequest {
        prompt: Prompt::chat(vec![ChatMessage::user(prompt)]),
        labels: labels.iter().map(|s| s.to_string()).collect(),
    }
}

fn same_decision(q: &str, a: &[&str], b: &[&str]) {
    let mut model = start();
    let x = model.choose(&ask(q, a)).unwrap();
    let y = model
        .choose(&ask(q, b))
        .unwrap_or_else(|e| panic!("{b:?} after {a:?} gave {x:?}: {e:?}"));
    eprintln!("{a:?}: {x:?}\n{b:?}: {y:?}");
    for (p, r) in x.probabilities.iter().zip(&y.probabilities) {
        assert!(
            (p.probability - r.probability).abs() < 1e-4,
            "the label's written case changed its probability: {x:?} vs {y:?}"
        );
    }
    assert!((x.label_mass.unwrap() - y.label_mass.unwrap()).abs() < 1e-4);
}

fn skip() -> bool {
    std::env::var("REIN_SKIP_MODEL_TESTS").is_ok_and(|v| v == "1")
}

const Q: &str = "Is Paris the capital of France? Reply with one word only, yes or no.";

#[test]
fn real_model_capitalised_labels_score_as_lower_case_ones() {
    if skip() {
        return;
    }
    same_decision(Q, &["yes", "no"], &["Yes", "No"]);
}

/// The issue: "the sum over its surface variants (case, leading space)". A label written in
/// capitals must count the model's "Yes" too (the OpenAI backend folds case and does).
#[test]
fn real_model_upper_case_labels_score_as_lower_case_ones() {
    if skip() {
        return;
    }
    same_decision(Q, &["yes", "no"], &["YES", "NO"]);
}

#[test]
fn real_model_a_prefix_label_does_not_win_over_the_longer_one() {
    if skip() {
        return;
    }
    let mut model = start();
    for (word, want) in [("edit_file", "edit_file"), ("edit", "edit")] {
        let r = model
            .choose(&ask(
                &format!("Repeat this word exactly, nothing else: {word}"),
                &["edit", "edit_file"],
            ))
            .unwrap();
        eprintln!("{word}: {r:?}");
        assert_eq!(r.best().unwrap().0, want, "{r:?}");
    }
}
