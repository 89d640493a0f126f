//! rein-engine: the parts of Rein that decide. This crate holds the mission contracts and the
//! deterministic judge (`mission`, `checks`), the rules that refuse a premature `finish`
//! (`finish`), and the reader that turns a model's reply into one action (`repair`).

pub mod agent;
pub mod apply;
pub mod cases;
pub mod checks;
pub mod finish;
pub mod gate;
pub mod memory;
pub mod mission;
pub mod policy;
pub mod repair;
pub mod undo;
