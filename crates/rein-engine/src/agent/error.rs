//! Failures of the loop's own machinery. A model failure, a cap or a refusal is not an error:
//! it ends the run with a reason ([`super::RunEnd`]). These are what stop the harness from
//! recording at all, which must never pass silently.

/// The journal could not record the run.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("the journal could not record the run: {0}")]
    Journal(#[from] rein_journal::Error),
}
