//! Chat turns: one person's message, the actor's reads and proposals, the write gate, approval
//! cards the person allows once, and the answer with its evidence review.
//!
//! The router and the two gates are reached through [`Reviewers`], so this module never decides
//! a route or a review itself; the real implementations live beside it (route.rs, review.rs)
//! and are wired in by the binary. Time comes from a [`Clock`], so expiry is testable.
//!
//! | module | what it holds |
//! | --- | --- |
//! | `session` | [`Session`]: turns, approvals, expiry, interrupts |
//! | `prompt` | the actor's chat rules and the messages Rein writes to it |
//! | `side` | the side-by-side view of a unified diff |

mod prompt;
mod session;
mod side;

use std::cell::Cell;

use rein_protocol::cowork::{
    EvidenceReview, Intent, ReviewSource, Route, RouteSource, WriteReview, EVIDENCE_FLOOR_BPS,
    WRITE_FLOOR_BPS,
};

pub use prompt::{
    chat_system_prompt, held_message, repeated_hold_message, round_cap_message, INTERRUPTED_MESSAGE,
};
pub use session::{Session, SessionOptions};
pub use side::side_by_side;

/// The router and the two gates, as the turn engine calls them.
pub trait Reviewers {
    /// The route of a person's message (a hint for the actor, never a permission).
    fn route(&mut self, text: &str) -> Route;
    /// The write gate: does this change match the request? `allowed == false` holds it.
    fn review_write(&mut self, request: &str, path: &str, diff: &str, excerpt: &str)
        -> WriteReview;
    /// The evidence gate: is the answer supported by what was read? Advisory.
    fn review_answer(
        &mut self,
        question: &str,
        answer: &str,
        excerpts: &[String],
    ) -> EvidenceReview;
}

/// Used until the real router and gates are wired in: routes everything `general` (recorded as
/// an outage), holds every write and cautions every answer. Fails closed, as a missing decision
/// model must.
#[derive(Debug, Default, Clone, Copy)]
pub struct UnwiredReviewers;

const UNWIRED: &str = "no decision model is wired into this build of `rein chat`";

impl Reviewers for UnwiredReviewers {
    fn route(&mut self, _text: &str) -> Route {
        Route {
            intent: Intent::General,
            source: RouteSource::Outage,
            confidence_bps: 0,
            keyword_intent: Intent::General,
            probabilities: Vec::new(),
            label_mass: None,
            note: Some(UNWIRED.to_string()),
            latency_ms: 0.0,
        }
    }

    fn review_write(&mut self, _: &str, _: &str, _: &str, _: &str) -> WriteReview {
        WriteReview {
            allowed: false,
            confidence_bps: 0,
            floor_bps: WRITE_FLOOR_BPS,
            source: ReviewSource::Outage,
            reason: format!("{UNWIRED}, so no change can be reviewed"),
            clipped_chars: 0,
            latency_ms: 0.0,
        }
    }

    fn review_answer(&mut self, _: &str, _: &str, _: &[String]) -> EvidenceReview {
        EvidenceReview {
            caution: true,
            confidence_bps: 0,
            floor_bps: EVIDENCE_FLOOR_BPS,
            source: ReviewSource::Outage,
            reason: format!("{UNWIRED}, so the answer was not checked against what was read"),
            latency_ms: 0.0,
        }
    }
}

/// Wall-clock time in unix milliseconds.
pub trait Clock {
    fn now_ms(&self) -> i64;
}

/// The real clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        rein_journal::now_millis()
    }
}

/// A clock a test moves by hand.
#[derive(Debug, Default)]
pub struct FakeClock {
    now: Cell<i64>,
}

impl FakeClock {
    pub fn at(now_ms: i64) -> FakeClock {
        FakeClock {
            now: Cell::new(now_ms),
        }
    }

    pub fn advance(&self, ms: i64) {
        self.now.set(self.now.get().saturating_add(ms));
    }
}

impl Clock for FakeClock {
    fn now_ms(&self) -> i64 {
        self.now.get()
    }
}
