//! A decision model as the judge's [`Decider`]: label probabilities from the model's logits
//! (or logprobs), with the judges' greedy profile implied by `choose`.

use rein_models::Model;
use rein_protocol::{ChatMessage, ChooseRequest, Prompt};

use crate::checks::Decider;

/// Lends a [`Model`] to the decision checks.
pub struct ModelDecider<'a> {
    model: &'a mut dyn Model,
}

impl<'a> ModelDecider<'a> {
    pub fn new(model: &'a mut dyn Model) -> Self {
        Self { model }
    }
}

impl Decider for ModelDecider<'_> {
    fn choose(&mut self, prompt: &str, labels: &[String]) -> Result<Vec<(String, f64)>, String> {
        let request = ChooseRequest {
            prompt: Prompt::chat(vec![ChatMessage::user(prompt)]),
            labels: labels.to_vec(),
        };
        let reply = self.model.choose(&request).map_err(|e| e.to_string())?;
        Ok(reply
            .probabilities
            .into_iter()
            .map(|p| (p.label, p.probability))
            .collect())
    }
}
