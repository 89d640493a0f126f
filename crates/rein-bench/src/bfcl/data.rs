//! The BFCL question and possible-answer files, as fetched into Rein's data folder: one JSON
//! object per line, `{"id", "question": [[{"role", "content"}]], "function": [...]}` and
//! `{"id", "ground_truth": [{name: {param: [answers]}}]}`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rein_protocol::canonical::sha256_hex;
use serde::Deserialize;
use serde_json::Value;

use super::check::Category;
use super::BfclError;

/// One message of a question.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Message {
    pub role: String,
    pub content: String,
}

/// One question with its functions and (except for irrelevance) its possible answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub id: String,
    pub category: Category,
    /// The first turn's messages (these categories have one turn).
    pub messages: Vec<Message>,
    pub functions: Vec<Value>,
    pub ground_truth: Vec<Value>,
}

#[derive(Deserialize)]
struct RawQuestion {
    id: String,
    question: Vec<Vec<Message>>,
    function: Vec<Value>,
}

#[derive(Deserialize)]
struct RawAnswer {
    id: String,
    ground_truth: Vec<Value>,
}

/// The stem of a category's files: `BFCL_v<N>_<stem>.json`.
pub fn file_stem(category: Category) -> &'static str {
    match category {
        Category::Simple => "simple_python",
        Category::Multiple => "multiple",
        Category::Irrelevance => "irrelevance",
    }
}

/// The newest `BFCL_v<N>_<stem>.json` in `dir` (versions compared as numbers).
pub fn find_file(dir: &Path, stem: &str) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    let suffix = format!("_{stem}.json");
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let version = name.strip_prefix("BFCL_v")?.strip_suffix(&suffix)?;
            let version: u32 = version.parse().ok()?;
            Some((version, e.path()))
        })
        .max()
        .map(|(_, p)| p)
}

fn read_lines<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Vec<T>, BfclError> {
    let text = std::fs::read_to_string(path).map_err(|e| BfclError::Io {
        path: path.to_path_buf(),
        message: format!("cannot read: {e}"),
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let item = serde_json::from_str(line).map_err(|e| BfclError::Data {
            path: path.to_path_buf(),
            line: i + 1,
            message: e.to_string(),
        })?;
        out.push(item);
    }
    Ok(out)
}

/// Loads one category from a data folder holding `BFCL_v*_<stem>.json` and
/// `possible_answer/BFCL_v*_<stem>.json`. Every question of a scored category must have an
/// answer; a question without one is an error, not a silent skip.
pub fn load(dir: &Path, category: Category) -> Result<Vec<Question>, BfclError> {
    let stem = file_stem(category);
    let qfile = find_file(dir, stem).ok_or_else(|| BfclError::Missing {
        path: dir.to_path_buf(),
        what: format!("BFCL_v*_{stem}.json"),
    })?;
    let raw: Vec<RawQuestion> = read_lines(&qfile)?;
    let mut answers: HashMap<String, Vec<Value>> = HashMap::new();
    if category != Category::Irrelevance {
        let adir = dir.join("possible_answer");
        let afile = find_file(&adir, stem).ok_or_else(|| BfclError::Missing {
            path: adir.clone(),
            what: format!("BFCL_v*_{stem}.json"),
        })?;
        for a in read_lines::<RawAnswer>(&afile)? {
            answers.insert(a.id, a.ground_truth);
        }
    }
    let mut out = Vec::with_capacity(raw.len());
    for (i, q) in raw.into_iter().enumerate() {
        let ground_truth = if category == Category::Irrelevance {
            Vec::new()
        } else {
            answers.remove(&q.id).ok_or_else(|| BfclError::Data {
                path: qfile.clone(),
                line: i + 1,
                message: format!("question {} has no possible answer", q.id),
            })?
        };
        let messages = q.question.into_iter().next().unwrap_or_default();
        if messages.is_empty() || q.function.is_empty() {
            return Err(BfclError::Data {
                path: qfile.clone(),
                line: i + 1,
                message: format!("question {} has no message or no function", q.id),
            });
        }
        out.push(Question {
            id: q.id,
            category,
            messages,
            functions: q.function,
            ground_truth,
        });
    }
    Ok(out)
}

/// A deterministic sample of `limit` questions for `seed`: those whose SHA-256 of
/// `seed:id` is smallest, kept in file order. The same seed gives the same questions on every
/// machine, and a larger limit keeps the smaller sample's questions.
pub fn sample(questions: Vec<Question>, limit: Option<usize>, seed: u32) -> Vec<Question> {
    let Some(limit) = limit else {
        return questions;
    };
    let mut keyed: Vec<(String, usize)> = questions
        .iter()
        .enumerate()
        .map(|(i, q)| (sha256_hex(format!("{seed}:{}", q.id).as_bytes()), i))
        .collect();
    keyed.sort();
    let mut keep: Vec<usize> = keyed.into_iter().take(limit).map(|(_, i)| i).collect();
    keep.sort_unstable();
    let mut keep = keep.into_iter().peekable();
    questions
        .into_iter()
        .enumerate()
        .filter_map(|(i, q)| {
            if keep.peek() == Some(&i) {
                keep.next();
                Some(q)
            } else {
                None
            }
        })
        .collect()
}
