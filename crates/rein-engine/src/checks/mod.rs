//! The judge: deterministic checks of the world, plus the two semantic checks.
//!
//! Every check reads the world (never the model's claims) and reports what it read as facts, so
//! a verdict can be explained and replayed. Anything that cannot be read or computed fails the
//! check (fail closed).
//!
//! | kind | passes when |
//! | --- | --- |
//! | `file_exists` | the file exists (non-empty with `non_empty`) |
//! | `file_absent` | the file does not exist |
//! | `content_matches` / `content_absent` | the text has / lacks the literal or regex pattern |
//! | `json_schema` | the file is JSON valid against the schema |
//! | `numeric_consistency` | a number stated in the artifact equals one computed from a frozen input |
//! | `report_complete` | headings / JSON fields present, word count within bounds |
//! | `actions_called` | the tools were executed (optionally in order) |
//! | `variable_set` | a sandbox variable is set (to the expected value) |
//! | `grounded` | claimed strings occur literally in frozen input bytes |
//! | `decision` | a decision model gives the expected label at least the floor |

mod actions;
mod csv;
mod evaluate;
mod files;
mod numeric;
mod paths;
mod report;
mod semantic;
mod spec;
pub(crate) mod text;
mod trace;
mod world;

pub use evaluate::{evaluate, evaluate_automatic, CheckResult, JudgeError, Verdict};
pub use paths::{normalize_rel, same_path};
pub use semantic::{Decider, DECISION_ARTIFACT_CLIP_CHARS, SEMANTIC_FLOOR_BPS};
pub use spec::{Aggregate, Check, CheckSpec, Computed, Locator, RowFilter, CHECK_KINDS};
pub use text::{count_words, markdown_headings};
pub use trace::TraceEntry;
pub use world::{DirWorld, MemWorld, World, WorldError};

use crate::mission::FrozenContract;

/// What every check may read: the frozen contract, the world and the trace.
pub(crate) struct Ctx<'a> {
    pub contract: &'a FrozenContract,
    pub world: &'a dyn World,
    pub trace: &'a [TraceEntry],
}

impl Ctx<'_> {
    /// Reads a file that must exist; the error is a fact to report.
    pub fn read_required(&self, path: &str) -> Result<Vec<u8>, String> {
        match self.world.read(path) {
            Ok(Some(b)) => Ok(b),
            Ok(None) => Err(format!("{path}: does not exist")),
            Err(e) => Err(format!("{path}: {e}")),
        }
    }

    pub fn read_text(&self, path: &str) -> Result<String, String> {
        self.read_required(path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// Reads a frozen input and proves it is still the frozen bytes, so values are never
    /// computed from an input the model has changed.
    pub fn read_frozen_input(&self, path: &str) -> Result<Vec<u8>, String> {
        let Some(frozen) = self.contract.input_hash(path) else {
            return Err(format!("{path}: not a frozen input of this mission"));
        };
        let bytes = self.read_required(path)?;
        let now = crate::mission::sha256_hex(&bytes);
        if now != frozen {
            return Err(format!(
                "{path}: input changed since it was frozen (sha256 {frozen}, now {now})"
            ));
        }
        Ok(bytes)
    }
}
