//! `find_related`: files that probably belong with a given one, ranked by plain, explainable
//! signals (no model): a shared name stem (`parser.rs` ↔ `parser_test.rs`), a mention of the
//! file's name, and shared *distinctive* terms (words rare across the workspace, weighted by
//! inverse document frequency, so `the` or `return` count for nothing).
//!
//! Only files the context's [`super::PathFilter`] shows are candidates: a file policy keeps
//! from this tool is neither read, ranked nor counted in the document frequencies (which would
//! otherwise confirm guessed words), only counted in `skipped_by_policy`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::{
    count_of, file_error, not_found, object_schema, path_arg, path_filter, path_schema, text_of,
    thousands, workspace, Visibility,
};
use crate::tool::{args, Tool, ToolContext, ToolError, ToolOutput};
use crate::RelPath;

/// Default (and maximum) number of results.
pub const RELATED_MAX_RESULTS: usize = 10;
/// Most candidate files read; past this the ranking says it looked at only part.
pub const RELATED_MAX_FILES: usize = 2_000;
/// Bytes read per file for term extraction.
const RELATED_MAX_FILE_BYTES: u64 = 256 * 1024;
/// Terms kept per file (at most `u16::MAX`: shared terms are kept as `u16` indices).
const MAX_TERMS: usize = 4_000;
const _: () = assert!(MAX_TERMS <= u16::MAX as usize);
/// Shared terms named in a reason.
const REASON_TERMS: usize = 5;
const STEM_EXACT: f64 = 3.0;
const STEM_CONTAINS: f64 = 2.0;
const STEM_TOKEN: f64 = 1.0;
const MENTION: f64 = 1.5;
const TERMS_WEIGHT: f64 = 3.0;

const STOP_WORDS: [&str; 24] = [
    "this", "that", "with", "from", "have", "will", "your", "what", "when", "then", "there",
    "which", "would", "should", "could", "into", "than", "they", "their", "been", "were", "return",
    "self", "true",
];

pub struct FindRelated;

impl Tool for FindRelated {
    fn name(&self) -> &str {
        "find_related"
    }
    fn description(&self) -> &str {
        "Find files related to a given file: same name stem, files that mention it, and files sharing its distinctive words. Ranked, with scores and reasons."
    }
    fn schema(&self) -> Value {
        object_schema(
            json!({
                "path": path_schema("the file to find relatives of"),
                "max_results": { "type": "integer", "minimum": 1, "maximum": RELATED_MAX_RESULTS, "description": "how many to return (default 10)" },
            }),
            &["path"],
        )
    }
    fn mutates(&self) -> bool {
        false
    }
    fn run(&self, ctx: &mut ToolContext<'_>, a: &Value) -> Result<ToolOutput, ToolError> {
        let ws = workspace(ctx, self.name())?;
        let target = path_arg(ws, self.name(), a, None)?;
        let limit = args::opt_u64(a, "max_results").map_or(RELATED_MAX_RESULTS, |n| {
            (n as usize).clamp(1, RELATED_MAX_RESULTS)
        });
        let (bytes, _) = ws
            .read_prefix(&target, RELATED_MAX_FILE_BYTES)
            .map_err(file_error)?
            .ok_or_else(|| not_found(&target))?;
        let target_terms = text_of_lenient(&bytes).map(terms).unwrap_or_default();

        let walk = super::policy_walk(ws, ctx, &RelPath::root())?;
        let policy = path_filter(ctx);
        let mut skipped = 0usize;
        let mut candidates: Vec<&RelPath> = Vec::new();
        for path in walk.files.iter().map(|e| &e.path).filter(|p| **p != target) {
            if policy.visible(path) == Visibility::Shown {
                candidates.push(path);
            } else {
                skipped += 1;
            }
        }
        let looked_at = candidates.len().min(RELATED_MAX_FILES);
        let over_cap = candidates.len() > RELATED_MAX_FILES;
        // Only what ranking needs is kept of each file: whether it mentions the target's name
        // and the target's terms it shares. Keeping every text and term set (2,000 files of
        // 256 KiB) took over a gigabyte for one call.
        let target_name = target.file_name().unwrap_or_default();
        // The target's terms, sorted; a file keeps the indices of those it shares.
        let target_list: Vec<&str> = target_terms.iter().map(String::as_str).collect();
        let mut docs: Vec<Doc> = Vec::new();
        for path in candidates.into_iter().take(RELATED_MAX_FILES) {
            let bytes = match ws.read_prefix(path, RELATED_MAX_FILE_BYTES) {
                Ok(Some((b, _))) => b,
                _ => Vec::new(),
            };
            let text = text_of_lenient(&bytes);
            let mentions = target_name.len() >= 3 && text.is_some_and(|x| x.contains(target_name));
            let shared = text
                .map(terms)
                .unwrap_or_default()
                .iter()
                .filter_map(|t| target_list.binary_search(&t.as_str()).ok())
                .map(|i| i as u16)
                .collect();
            docs.push(Doc {
                path: path.clone(),
                mentions,
                shared,
            });
        }
        let ranked = rank(&target, &target_terms, &docs);
        let results: Vec<Value> = ranked
            .iter()
            .take(limit)
            .map(|r| json!({ "path": r.path, "score": (r.score * 1000.0).round() / 1000.0, "reasons": r.reasons }))
            .collect();
        let mut out = json!({ "path": target, "related": results, "files_considered": looked_at });
        let mut notes = Vec::new();
        if over_cap || walk.truncated {
            notes.push(format!(
                "Only the first {} files of the workspace were considered (the find_related cap).",
                thousands(RELATED_MAX_FILES)
            ));
        }
        if skipped > 0 {
            out["skipped_by_policy"] = json!(skipped);
            notes.push(format!(
                "{} skipped by policy (not read or ranked).",
                count_of(skipped, "file was", "files were")
            ));
        }
        if !notes.is_empty() {
            out["note"] = json!(notes.join(" "));
        }
        Ok(ToolOutput::Data(out))
    }
}

/// Text of a (possibly cut) prefix; binary files have no terms.
fn text_of_lenient(bytes: &[u8]) -> Option<&str> {
    super::text_of_prefix(bytes, true).or_else(|| text_of(bytes))
}

/// One candidate as ranking sees it.
struct Doc {
    path: RelPath,
    /// Whether its text contains the target's file name.
    mentions: bool,
    /// The target's terms it contains, as indices into the target's sorted terms (at most
    /// [`MAX_TERMS`], so they fit a `u16`).
    shared: Vec<u16>,
}

struct Ranked {
    path: RelPath,
    score: f64,
    reasons: Vec<String>,
}

fn rank(target: &RelPath, target_terms: &BTreeSet<String>, docs: &[Doc]) -> Vec<Ranked> {
    let target_list: Vec<&String> = target_terms.iter().collect();
    // Document frequency over the candidates plus the target itself.
    let n = docs.len() + 1;
    let mut df: BTreeMap<&str, usize> = BTreeMap::new();
    for doc in docs {
        for &i in &doc.shared {
            *df.entry(target_list[usize::from(i)].as_str()).or_insert(1) += 1;
        }
    }
    let idf = |term: &str| -> f64 {
        let d = df.get(term).copied().unwrap_or(1);
        // Terms in more than half the files are not distinctive.
        if n >= 4 && d * 2 > n {
            0.0
        } else {
            ((n as f64 + 1.0) / d as f64).ln()
        }
    };
    let total_weight: f64 = target_terms.iter().map(|t| idf(t)).sum();
    let target_stem = stem(target);
    let target_name = target.file_name().unwrap_or_default();
    let mut ranked = Vec::new();
    for doc in docs {
        let path = &doc.path;
        let mut score = 0.0;
        let mut reasons = Vec::new();
        if let Some((s, why)) = stem_score(&target_stem, &stem(path)) {
            score += s;
            reasons.push(why);
        }
        if doc.mentions {
            score += MENTION;
            reasons.push(format!("mentions {target_name}"));
        }
        if total_weight > 0.0 {
            let mut shared: Vec<(&String, f64)> = doc
                .shared
                .iter()
                .map(|&i| target_list[usize::from(i)])
                .map(|x| (x, idf(x)))
                .filter(|(_, w)| *w > 0.0)
                .collect();
            let weight: f64 = shared.iter().map(|(_, w)| w).sum();
            if weight > 0.0 {
                score += TERMS_WEIGHT * weight / total_weight;
                shared.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
                let names: Vec<&str> = shared
                    .iter()
                    .take(REASON_TERMS)
                    .map(|(x, _)| x.as_str())
                    .collect();
                reasons.push(format!(
                    "shares {} distinctive terms, e.g. {}",
                    shared.len(),
                    names.join(", ")
                ));
            }
        }
        if score > 0.0 {
            ranked.push(Ranked {
                path: path.clone(),
                score,
                reasons,
            });
        }
    }
    ranked.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
    });
    ranked
}

/// The file name before its first dot, lowercased: `Parser.test.ts` → `parser`.
fn stem(path: &RelPath) -> String {
    let name = path.file_name().unwrap_or_default();
    let name = name.trim_start_matches('.');
    name.split('.').next().unwrap_or(name).to_lowercase()
}

fn stem_tokens(stem: &str) -> BTreeSet<&str> {
    const NOISE: [&str; 5] = ["test", "tests", "spec", "mod", "index"];
    stem.split(|c: char| !c.is_alphanumeric())
        .filter(|t| t.len() >= 3 && !NOISE.contains(t))
        .collect()
}

fn stem_score(target: &str, other: &str) -> Option<(f64, String)> {
    if target.is_empty() || other.is_empty() {
        return None;
    }
    if target == other {
        return Some((STEM_EXACT, format!("same name stem \"{target}\"")));
    }
    let (t, o) = (stem_tokens(target), stem_tokens(other));
    if t.is_empty() || o.is_empty() {
        return None;
    }
    if t.is_subset(&o) || o.is_subset(&t) {
        return Some((
            STEM_CONTAINS,
            format!("name stem \"{other}\" contains \"{target}\" or the other way round"),
        ));
    }
    let shared: Vec<&str> = t.intersection(&o).copied().collect();
    if shared.is_empty() {
        None
    } else {
        Some((
            STEM_TOKEN,
            format!("name shares \"{}\"", shared.join("\", \"")),
        ))
    }
}

/// Words of four or more characters (identifiers included), lowercased, minus common words.
fn terms(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if out.len() >= MAX_TERMS {
            break;
        }
        let chars = word.chars().count();
        if !(4..=40).contains(&chars) || word.chars().all(|c| c.is_ascii_digit() || c == '_') {
            continue;
        }
        let lower = word.to_lowercase();
        if !STOP_WORDS.contains(&lower.as_str()) {
            out.insert(lower);
        }
    }
    out
}
