//! The test bench: suites of verified tasks, the judge tested on them, statistics with
//! uncertainty, results and the reports people read, and the partition of a bench into shards.
//!
//! - [`suite`]: a suite folder (`suite.toml`, one folder per task with `task.toml`), loaded and
//!   validated; the format is documented in `suites/README.md`.
//! - [`infer`]: the requirements of an ad-hoc memory task (`rein bench --task`), from its words.
//! - [`check`]: the judge on trial for a whole suite (`rein bench check-suite`).
//! - [`stats`]: Wilson intervals, exact McNemar, pass^k, medians.
//! - [`results`]: one [`results::RunResult`] per run, as lines of `results.jsonl`.
//! - [`report`]: per model and category, paired comparisons; rendered by [`render`].
//! - [`ablation`]: benches that differ only in their levers, each against a baseline.
//! - [`shard`]: which shard runs which work item, and merging shard outputs.
//! - [`bfcl`]: the Berkeley Function Calling Leaderboard questions, scored by its AST rules.
//! - [`router`]: the labelled routing requests of the `router` suite.

pub mod ablation;
pub mod bfcl;
pub mod check;
pub mod error;
pub mod infer;
pub mod render;
pub mod report;
pub mod results;
pub mod router;
pub mod shard;
pub mod stats;
pub mod suite;

pub use error::BenchError;
