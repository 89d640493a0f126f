//! Shared by the router and the gates: clipping evidence to a character cap, and asking the
//! decision model with a deadline.
//!
//! The deadline. `Model::choose` blocks and the gates are handed a borrowed `&mut dyn Model`,
//! which cannot be moved into a detached thread; a scoped thread would have to be joined before
//! returning anyway. So the deadline is enforced on the answer, not on the wait: a decision that
//! arrives after [`DECISION_TIMEOUT_MS`] is discarded and treated as a timeout (the write is held,
//! the answer cautioned, the route falls back to keywords). The wait itself is bounded by the
//! backend: the embedded worker and the OpenAI client have their own request timeouts.

use std::time::{Duration, Instant};

use rein_models::Model;
use rein_protocol::{ChooseReply, ChooseRequest};

/// `text` cut to at most `cap` characters (on a character boundary), and how many were cut.
pub fn clip_chars(text: &str, cap: usize) -> (&str, usize) {
    match text.char_indices().nth(cap) {
        Some((at, _)) => (&text[..at], text[at..].chars().count()),
        None => (text, 0),
    }
}

/// What became of one decision.
#[derive(Debug)]
pub enum Decision {
    Reply(ChooseReply),
    /// The model answered, but after the deadline; its answer is not used.
    Late {
        elapsed_ms: f64,
    },
    Failed(String),
}

/// Asks `model` and discards an answer that came after `deadline` (see the module's note).
pub fn choose_by(model: &mut dyn Model, request: &ChooseRequest, deadline: Duration) -> Decision {
    let started = Instant::now();
    let result = model.choose(request);
    let elapsed = started.elapsed();
    if elapsed > deadline {
        return Decision::Late {
            elapsed_ms: elapsed.as_secs_f64() * 1000.0,
        };
    }
    match result {
        Ok(reply) => Decision::Reply(reply),
        Err(e) => Decision::Failed(e.to_string()),
    }
}

/// The probability of `label` in basis points (0 when absent), rounded down so an edge is never
/// rounded over a floor.
pub fn bps_of(reply: &ChooseReply, label: &str) -> u32 {
    reply
        .probabilities
        .iter()
        .find(|p| p.label == label)
        .map(|p| to_bps(p.probability))
        .unwrap_or(0)
}

pub fn to_bps(probability: f64) -> u32 {
    if !probability.is_finite() || probability <= 0.0 {
        return 0;
    }
    // The small epsilon keeps 0.55 (stored as 0.55000000000000004 or 0.5499999999999999) at
    // 5,500 rather than 5,499: scripted and logit probabilities are not exact decimals.
    ((probability.min(1.0) * 10_000.0) + 1e-6).floor() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_counts_characters_not_bytes() {
        assert_eq!(clip_chars("héllo", 10), ("héllo", 0));
        assert_eq!(clip_chars("héllo", 2), ("hé", 3));
        assert_eq!(clip_chars("日本語", 1), ("日", 2));
        assert_eq!(clip_chars("", 0), ("", 0));
    }

    #[test]
    fn bps_edges_do_not_round_over_a_floor() {
        assert_eq!(to_bps(0.5499), 5_499);
        assert_eq!(to_bps(0.55), 5_500);
        assert_eq!(to_bps(0.7499), 7_499);
        assert_eq!(to_bps(0.75), 7_500);
        assert_eq!(to_bps(f64::NAN), 0);
        assert_eq!(to_bps(1.5), 10_000);
    }
}
