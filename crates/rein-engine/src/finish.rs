//! When `finish` is refused. A small model will claim success sincerely with nothing to show,
//! so `finish` is accepted only when the deliverable exists, is real content, was written by this
//! run (and is still what it wrote), was re-read after it was last written, and no frozen input
//! was touched. Each refusal's text is fed back to the
//! model as the result of its `finish` call.

use regex::Regex;

use crate::checks::{count_words, last_write, seen_since_write, TraceEntry, World};
use crate::mission::{sha256_hex, FrozenContract, InputHash};

/// Minimum words of a deliverable when the mission does not set `min_words`.
pub const DEFAULT_FINISH_MIN_WORDS: usize = 20;

/// Why `finish` was refused. `Display` is the message for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FinishRefusal {
    #[error("finish refused: the required deliverable `{path}` does not exist; write it with create_file, read it back, then finish")]
    Missing { path: String },
    #[error("finish refused: cannot read the required deliverable `{path}`: {error}")]
    Unreadable { path: String, error: String },
    #[error("finish refused: the required deliverable `{path}` is empty; write the real content")]
    Empty { path: String },
    #[error("finish refused: input `{input}` was overwritten ({detail}); inputs are frozen, restore it and write only the deliverable `{artifact}`")]
    InputOverwritten {
        input: String,
        artifact: String,
        detail: String,
    },
    #[error("finish refused: `{path}` is a placeholder (it contains `{marker}`); replace it with the real content")]
    Placeholder { path: String, marker: String },
    #[error("finish refused: `{path}` has {words} words, fewer than the minimum of {min}; write the full deliverable")]
    TooFewWords {
        path: String,
        words: usize,
        min: usize,
    },
    #[error("finish refused: `{path}` was not written in this run; a file that was already there is not this run's work: write it with create_file or replace_file, read it back, then finish")]
    NotWrittenThisRun { path: String },
    #[error("finish refused: `{path}` is not what this run last wrote to it; write it again, read it back, then finish")]
    ChangedSinceWritten { path: String },
    #[error("finish refused: re-read the output first: `{path}` was written after you last read it; call read_file on it, check it, then finish")]
    NotReread { path: String },
    #[error("finish refused: `{path}` is the very file that failed {checks}, and those checks read only that file, so they would fail again; nothing was judged: change it to meet them (the failed checks say what they found), read it back, then finish")]
    FailedUnchanged { path: String, checks: String },
}

impl FinishRefusal {
    /// The text fed back to the model.
    pub fn reason(&self) -> String {
        self.to_string()
    }

    /// [`FinishRefusal::reason`] naming, where it says how to write the deliverable, the tool
    /// this run offers for that: `create` for a file that does not exist yet, `replace` for one
    /// that does (`None`: no tool named). A small model copies the tool it is told.
    pub fn reason_with(&self, create: Option<&str>, replace: Option<&str>) -> String {
        let with = |tool: Option<&str>| tool.map(|t| format!(" with {t}")).unwrap_or_default();
        match self {
            FinishRefusal::Missing { path } => format!(
                "finish refused: the required deliverable `{path}` does not exist; write it{}, read it back, then finish",
                with(create)
            ),
            FinishRefusal::NotWrittenThisRun { path } => format!(
                "finish refused: `{path}` was not written in this run; a file that was already there is not this run's work: write it{}, read it back, then finish",
                with(replace)
            ),
            _ => self.reason(),
        }
    }
}

/// Decides whether `finish` may be accepted now. Pure: it reads the world and the trace and
/// changes nothing. `input_hashes` are the hashes recorded when the inputs were copied in.
pub fn check_finish(
    contract: &FrozenContract,
    world: &dyn World,
    trace: &[TraceEntry],
    input_hashes: &[InputHash],
) -> Result<(), FinishRefusal> {
    let artifact = contract.mission.required_artifact.as_str();
    let bytes = match world.read(artifact) {
        Ok(Some(b)) => b,
        Ok(None) => {
            return Err(FinishRefusal::Missing {
                path: artifact.into(),
            })
        }
        Err(e) => {
            return Err(FinishRefusal::Unreadable {
                path: artifact.into(),
                error: e.to_string(),
            })
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    if text.trim().is_empty() {
        return Err(FinishRefusal::Empty {
            path: artifact.into(),
        });
    }

    check_inputs(contract, world, trace, input_hashes)?;

    if let Some(marker) = find_placeholder(&text) {
        return Err(FinishRefusal::Placeholder {
            path: artifact.into(),
            marker,
        });
    }
    let min = contract
        .mission
        .min_words
        .map(|m| m as usize)
        .unwrap_or(DEFAULT_FINISH_MIN_WORDS);
    let words = count_words(&text);
    if words < min {
        return Err(FinishRefusal::TooFewWords {
            path: artifact.into(),
            words,
            min,
        });
    }

    let Some(w) = last_write(trace, artifact) else {
        return Err(FinishRefusal::NotWrittenThisRun {
            path: artifact.into(),
        });
    };
    if trace[w].written_sha256.as_deref() != Some(sha256_hex(&bytes).as_str()) {
        return Err(FinishRefusal::ChangedSinceWritten {
            path: artifact.into(),
        });
    }
    if !seen_since_write(trace, w, artifact) {
        return Err(FinishRefusal::NotReread {
            path: artifact.into(),
        });
    }
    Ok(())
}

fn check_inputs(
    contract: &FrozenContract,
    world: &dyn World,
    trace: &[TraceEntry],
    input_hashes: &[InputHash],
) -> Result<(), FinishRefusal> {
    let artifact = contract.mission.required_artifact.clone();
    let overwritten = |input: &str, detail: String| FinishRefusal::InputOverwritten {
        input: input.into(),
        artifact: artifact.clone(),
        detail,
    };
    for input in &contract.inputs {
        if let Some(i) = trace.iter().position(|e| e.mutated_path(&input.path)) {
            // The model's own step: Rein's reads before its first step are not steps of its.
            let step = trace[..=i].iter().filter(|e| !e.by_rein).count();
            return Err(overwritten(
                &input.path,
                format!("{} changed it at step {step}", trace[i].tool),
            ));
        }
    }
    for recorded in input_hashes {
        match world.read(&recorded.path) {
            Ok(Some(b)) => {
                let now = sha256_hex(&b);
                if now != recorded.sha256 {
                    return Err(overwritten(
                        &recorded.path,
                        format!("sha256 {} is now {now}", recorded.sha256),
                    ));
                }
            }
            Ok(None) => return Err(overwritten(&recorded.path, "it no longer exists".into())),
            Err(e) => {
                return Err(overwritten(
                    &recorded.path,
                    format!("it cannot be read: {e}"),
                ))
            }
        }
    }
    Ok(())
}

/// Template markers that show a draft was never filled in. They are matched against the
/// normalised text (`checks::normalize`), so a zero-width space inside `TBD` hides nothing.
const PLACEHOLDER_PATTERNS: &[&str] = &[
    r"\{\{[^{}\n]*\}\}",
    r"(?i)\[\s*(todo|tbd|tbc|placeholder|fill\s*(it\s*)?in|insert[^\]]*|to be [a-z ]*|\.\.\.|…)\s*\]",
    r"(?i)\(\s*(todo|tbd|tbc|placeholder|fill\s*(it\s*)?in|insert[^)]*|to be (written|added|completed|done|filled|decided|determined|confirmed)[^)]*)\s*\)",
    // `[Your name]`, `[DATE]`: a bracketed slot, not a link (`[add a book](url)`).
    r"(?im)\[\s*(your|enter|add)\b[^\]\n]*\](?:[^(]|$)",
    r"(?m)\[\s*(DATE|NAME|AUTHOR|TITLE|NUMBER|AMOUNT|VALUE|OWNER|EMAIL|PHONE|COMPANY|PROJECT|PROJECT NAME|N)\s*\](?:[^(]|$)",
    r"\bTODO\b",
    r"(?i)\bTBD\b",
    r"(?i)\bTBC\b",
    r"\bFIXME\b",
    r"\bXXX+\b",
    r"\?{3,}",
    r"(?i)lorem ipsum",
    r"(?i)<\s*(insert|fill|your)",
    r"(?i)\byour (text|content|summary|answer|report) (goes )?here\b",
    r"(?i)\bto be (written|filled in|completed) later\b",
];

/// The first placeholder marker in the text, if any (after normalisation).
pub fn find_placeholder(text: &str) -> Option<String> {
    let text = crate::checks::normalize(text);
    PLACEHOLDER_PATTERNS.iter().find_map(|p| {
        Regex::new(p)
            .ok()
            .and_then(|re| re.find(&text).map(|m| m.as_str().to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        assert!(find_placeholder("Hello {{ name }}").is_some());
        assert!(find_placeholder("Status: TODO").is_some());
        assert!(find_placeholder("see [todo]").is_some());
        assert!(find_placeholder("Lorem ipsum dolor").is_some());
        assert!(find_placeholder("<Insert summary>").is_some());
        assert!(find_placeholder("Total: TBD").is_some());
        for hidden in [
            "Risks: (to be written later)",
            "Goal: [fill in]",
            "Owner: XXX",
            "Total hours: ???",
            "Total: T\u{200b}BD",
            "[Insert the goal]",
            "(TBD)",
            "Launch date: tbd",
            "Prepared by: [Your Name]",
            "Date: [DATE]",
            "Total: [N]",
        ] {
            assert!(find_placeholder(hidden).is_some(), "{hidden:?}");
        }
        assert!(find_placeholder("The todos are done; mastodon; {\"a\": {}}").is_none());
        assert!(find_placeholder("Is it ready? We think so. (to be fair, mostly)").is_none());
        assert!(
            find_placeholder("Use [Add a reservation](https://x) or [DATE](https://y).").is_none()
        );
        assert!(find_placeholder("").is_none());
    }
}
