//! The Berkeley Function Calling Leaderboard through Rein's action decoding
//! (`rein bench bfcl:simple`, `bfcl:multiple`, `bfcl:irrelevance`).
//!
//! | module | what it holds |
//! | --- | --- |
//! | `fetch` | pip downloads the `bfcl-eval` wheel; only its JSON data files are taken out |
//! | `data` | the question and possible-answer files, and the seeded sample of `--limit` |
//! | `names` | dotted BFCL names ↔ valid tool names, reversibly |
//! | `prompt` | a question as a Rein step: the agent's reply form, tools, action schema |
//! | `check` | BFCL's AST-matching rules, reimplemented |
//! | `score` | reply → calls → verdict; accuracy with Wilson intervals |

pub mod check;
pub mod data;
pub mod fetch;
pub mod names;
pub mod prompt;
pub mod score;

use std::path::PathBuf;

pub use check::{Call, Category, Mismatch};
pub use score::{BfclResult, Decoding};

/// Why BFCL data could not be fetched or read.
#[derive(Debug, thiserror::Error)]
pub enum BfclError {
    #[error("{}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error("{}: line {line}: {message}", path.display())]
    Data {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{}: no {what} (is the BFCL data folder complete? fetch it again with `rein bench fetch bfcl`)", path.display())]
    Missing { path: PathBuf, what: String },
    #[error("the BFCL questions (bfcl-eval {release}) are not fetched yet (looked in {}); run `rein bench fetch bfcl` first", path.display())]
    NotFetched { path: PathBuf, release: String },
    #[error("the bfcl-eval wheel {}: {message}", path.display())]
    Wheel { path: PathBuf, message: String },
    #[error("{0:?} is not a bfcl-eval release (a version such as 2026.3.23)")]
    Release(String),
    #[error(transparent)]
    Pip(#[from] rein_models::ModelError),
}

/// Parses `bfcl:<category>`; `None` for anything that does not start with `bfcl:`, an error
/// for an unknown category.
pub fn parse_suite(s: &str) -> Option<Result<Category, String>> {
    let rest = s.strip_prefix("bfcl:")?;
    Some(Category::parse(rest).ok_or_else(|| {
        format!(
            "unknown BFCL category {rest:?}; the categories are: {}",
            Category::ALL
                .map(|c| format!("bfcl:{}", c.as_str()))
                .join(", ")
        )
    }))
}
