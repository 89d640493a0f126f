//! The real router and gates behind the turn engine's [`Reviewers`]: every route and review is
//! scored by one decision model (or fails closed when there is none).

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rein_models::Model;
use rein_protocol::cowork::{EvidenceReview, Route, WriteReview};

use crate::review::{review_answer, review_write, Proposal};
use crate::route::{route, route_request};
use crate::turn::Reviewers;

/// The message of the warm-up decision: any text does, only the prefix before it is kept.
const WARM_UP_TEXT: &str = "hello";

/// Routes and reviews with a decision model; `None` is an outage everywhere (keyword routes,
/// every write held, every answer cautioned).
pub struct ModelReviewers {
    /// Shared with the warm-up thread, which holds it while it evaluates the router's prefix.
    decider: Arc<Mutex<Option<Box<dyn Model>>>>,
}

impl ModelReviewers {
    pub fn new(decider: Option<Box<dyn Model>>) -> Self {
        Self {
            decider: Arc::new(Mutex::new(decider)),
        }
    }

    /// Evaluates the router's fixed instruction and examples once, in the background, while
    /// the person types: the first message's route then finds them cached instead of paying
    /// for ~480 uncached tokens, which can pass the 12 s decision deadline on a busy machine.
    /// A route asked meanwhile waits for the warm-up to end (the wait is not counted against
    /// its deadline). `None` when there is no decision model.
    pub fn warm(&self) -> Option<JoinHandle<()>> {
        let has_model = self
            .decider
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .is_some();
        if !has_model {
            return None;
        }
        let decider = Arc::clone(&self.decider);
        let (holding, held) = std::sync::mpsc::channel();
        let handle = std::thread::spawn(move || {
            let mut guard = decider.lock().unwrap_or_else(|p| p.into_inner());
            let _ = holding.send(());
            let Some(model) = guard.as_mut() else {
                return;
            };
            // Its answer is of no use; a failure shows again at the first real decision. A panic
            // leaves the model in no known state: it is dropped, and every decision after is an
            // outage (keyword routes, writes held) rather than a crash of the session.
            let asked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                model.choose(&route_request(WARM_UP_TEXT))
            }));
            if asked.is_err() {
                *guard = None;
            }
        });
        // Returns once the warm-up holds the model, so a route asked next always comes after it.
        let _ = held.recv();
        Some(handle)
    }

    fn with_decider<T>(&mut self, f: impl FnOnce(Option<&mut dyn Model>) -> T) -> T {
        let mut guard = self.decider.lock().unwrap_or_else(|p| p.into_inner());
        match guard.as_mut() {
            Some(model) => f(Some(model.as_mut())),
            None => f(None),
        }
    }
}

impl Reviewers for ModelReviewers {
    fn route(&mut self, text: &str) -> Route {
        self.with_decider(|decider| route(text, decider))
    }

    fn review_write(
        &mut self,
        request: &str,
        path: &str,
        diff: &str,
        excerpt: &str,
    ) -> WriteReview {
        let proposal = Proposal {
            path: path.to_string(),
            diff: diff.to_string(),
            excerpt: excerpt.to_string(),
        };
        self.with_decider(|decider| review_write(decider, request, &proposal))
    }

    fn review_answer(
        &mut self,
        question: &str,
        answer: &str,
        excerpts: &[String],
    ) -> EvidenceReview {
        self.with_decider(|decider| review_answer(decider, question, answer, excerpts))
    }
}
