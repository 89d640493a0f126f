//! Missions: verified tasks with frozen inputs, a tool list and an acceptance contract.
//!
//! `Mission::load` reads a mission file, refuses anything malformed with an error naming the
//! file and field, and freezes it: the canonical JSON (RFC 8785) of the parsed mission and its
//! SHA-256. Every attempt, retry or replan judges against that frozen copy; a file edited on
//! disk mid-run is detected by `FrozenContract::verify_unchanged`.

mod contract;
mod error;
mod inputs;
mod schema;
mod validate;

pub use contract::{FrozenContract, InputHash, MISSION_FILE_NAME};
pub use error::MissionError;
pub use inputs::materialise_inputs;
pub use rein_protocol::canonical::{canonical_json, sha256_hex};
pub use schema::{Budgets, Mission, Mode};
