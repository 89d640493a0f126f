//! Partitioning a bench across machines, and merging the shards back.
//!
//! A work item is (suite, task, model, repeat). Its key is those four joined by U+001F (a
//! character no name contains), and it belongs to shard `1 + (sha256(key) mod N)`, the whole
//! 256-bit digest read as a big-endian number. So every machine computes the same partition
//! with no coordination, and adding a model or repeat never moves the other items.

use std::path::{Path, PathBuf};

use rein_protocol::canonical::sha256_hex;

use crate::error::BenchError;
use crate::results::{check_consistent, read_results, RunResult, RESULTS_FILE};

/// `--shard K/N`: this is shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The whole bench as one shard.
    pub const ALL: Shard = Shard { index: 1, count: 1 };

    /// Parses `K/N` with 1 <= K <= N.
    pub fn parse(s: &str) -> Result<Shard, BenchError> {
        let bad = |why: &str| {
            BenchError::Shard(format!(
                "--shard {s:?}: {why}; write K/N with 1 <= K <= N, e.g. 2/4"
            ))
        };
        let (k, n) = s.split_once('/').ok_or_else(|| bad("no '/'"))?;
        let index: u64 = k
            .trim()
            .parse()
            .map_err(|_| bad("K is not a whole number"))?;
        let count: u64 = n
            .trim()
            .parse()
            .map_err(|_| bad("N is not a whole number"))?;
        if count == 0 {
            return Err(bad("N is 0"));
        }
        if index == 0 || index > count {
            return Err(bad("K is out of range"));
        }
        Ok(Shard { index, count })
    }

    /// Whether this shard runs the item.
    pub fn holds(&self, suite: &str, task: &str, model: &str, repeat: u32) -> bool {
        shard_of(suite, task, model, repeat, self.count) == self.index
    }
}

/// The key of a work item.
pub fn item_key(suite: &str, task: &str, model: &str, repeat: u32) -> String {
    format!("{suite}\u{1f}{task}\u{1f}{model}\u{1f}{repeat}")
}

/// The 1-based shard of a work item among `count` shards (`count` 0 is treated as 1).
pub fn shard_of(suite: &str, task: &str, model: &str, repeat: u32, count: u64) -> u64 {
    let count = count.max(1);
    let digest = sha256_hex(item_key(suite, task, model, repeat).as_bytes());
    let mut r: u128 = 0;
    for pair in digest.as_bytes().chunks(2) {
        let byte = std::str::from_utf8(pair)
            .ok()
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            .unwrap_or(0);
        r = (r * 256 + u128::from(byte)) % u128::from(count);
    }
    // r < count, so it fits.
    1 + u64::try_from(r).unwrap_or(0)
}

/// Reads `results.jsonl` from each shard folder and returns them combined, refusing a missing
/// results file, a run present twice and a task judged against two contracts.
pub fn merge_results(dirs: &[PathBuf]) -> Result<Vec<RunResult>, BenchError> {
    let mut all = Vec::new();
    for d in dirs {
        let file = results_path(d);
        if !file.is_file() {
            return Err(BenchError::Merge(format!(
                "{}: no {RESULTS_FILE} here; give the --out folders of the shards",
                d.display()
            )));
        }
        all.extend(read_results(&file)?);
    }
    check_consistent(&all)?;
    Ok(all)
}

fn results_path(d: &Path) -> PathBuf {
    if d.is_file() {
        d.to_path_buf()
    } else {
        d.join(RESULTS_FILE)
    }
}
