//! Cowork chat over one workspace: the router (a hint, never a permission), the write and
//! evidence gates scored by the decision model, and the turns that propose changes the person
//! allows once. The types every interface speaks are in `rein_protocol::cowork`.

pub mod decide;
pub mod review;
pub mod route;
pub mod turn;
pub mod wiring;

pub use review::{review_answer, review_write, Proposal};
pub use route::route;
