#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The OpenAI backend's reading of labels written in capitals, to
//! set beside the embedded backend's (`rein-cli/tests/choose_real_model.rs`).

use rein_models::{ChatMessage, ChooseRequest, Model, OpenAiModel, Prompt};
use rein_testkit::FakeOpenAi;

#[test]
fn upper_case_labels_count_the_models_capitalised_answer() {
    let server = FakeOpenAi::start().unwrap();
    server.set_logprob_tree(&[
        ("", &[("Yes", 0.9f64.ln()), ("No", 0.1f64.ln())]),
        ("Yes", &[("", 0.0)]),
        ("No", &[("", 0.0)]),
    ]);
    let mut m = OpenAiModel::new(&server.url(), "qwen", false).unwrap();
    for labels in [["yes", "no"], ["YES", "NO"]] {
        let r = m
            .choose(&ChooseRequest {
                prompt: Prompt::chat(vec![ChatMessage::user("Q?")]),
                labels: labels.iter().map(|s| s.to_string()).collect(),
            })
            .unwrap();
        eprintln!("{labels:?}: {r:?}");
        assert!((r.label_mass.unwrap() - 1.0).abs() < 1e-9, "{r:?}");
        assert!((r.probabilities[0].probability - 0.9).abs() < 1e-9, "{r:?}");
    }
}
