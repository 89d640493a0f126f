//! The real router and gates behind the turn engine's [`Reviewers`]: every route and review is
//! scored by one decision model (or fails closed when there is none).

use rein_models::Model;
use rein_protocol::cowork::{EvidenceReview, Route, WriteReview};

use crate::review::{review_answer, review_write, Proposal};
use crate::route::route;
use crate::turn::Reviewers;

/// Routes and reviews with a decision model; `None` is an outage everywhere (keyword routes,
/// every write held, every answer cautioned).
pub struct ModelReviewers {
    decider: Option<Box<dyn Model>>,
}

impl ModelReviewers {
    pub fn new(decider: Option<Box<dyn Model>>) -> Self {
        Self { decider }
    }

    fn decider(&mut self) -> Option<&mut dyn Model> {
        match self.decider.as_mut() {
            Some(model) => Some(model.as_mut()),
            None => None,
        }
    }
}

impl Reviewers for ModelReviewers {
    fn route(&mut self, text: &str) -> Route {
        route(text, self.decider())
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
        review_write(self.decider(), request, &proposal)
    }

    fn review_answer(
        &mut self,
        question: &str,
        answer: &str,
        excerpts: &[String],
    ) -> EvidenceReview {
        review_answer(self.decider(), question, answer, excerpts)
    }
}
