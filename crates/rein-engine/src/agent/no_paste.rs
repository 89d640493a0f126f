//! The `no-paste` lever: when the contract says the deliverable must be in the model's own
//! words (a `not_copied` check), an embedded model decodes every reply with the inputs that
//! check compares against as a penalty history (llama.cpp's DRY sampler, see
//! [`rein_protocol::NoPaste`]): a token that would extend a run copied from them beyond a few
//! tokens loses logit, more the longer the run. Names and short phrases stay copyable; a pasted
//! paragraph, a CSV row or one text under two headings does not come out at temperature 0.1.
//! Only inputs the run has read whole are held: the penalty falls exactly where a reply
//! would follow the text, so holding a file the model was never shown (one policy keeps from
//! `read_file`) would tell it something of that file.
//!
//! The judge is untouched: `not_copied` still counts near-copies (a word changed every few
//! words), so a reply nudged off a copy one word at a time still fails it.

use rein_protocol::NoPaste;

use crate::checks::{read_whole_at, CheckSpec, TraceEntry, World};
use crate::mission::FrozenContract;

/// Most characters of source text one run's history holds, all sources together: the worker
/// is sent them with every request and scans them at every token. A prompt shows at most
/// 6,000 characters of one read, so longer inputs are never pasted whole anyway.
pub const MAX_SOURCE_CHARS: usize = 48_000;

/// What a run may hold against pastes: the sources' texts, to be held once read.
#[derive(Debug, Clone, PartialEq)]
pub struct NoPasteSources {
    /// Each source file with its text as the history holds it.
    pub texts: Vec<(String, String)>,
    pub allowed_tokens: u32,
    /// The files left out or cut at [`MAX_SOURCE_CHARS`], or that could not be read: a cap
    /// says so when it fires.
    pub cut: Vec<String>,
}

impl NoPasteSources {
    /// The source files, in order.
    pub fn paths(&self) -> Vec<&str> {
        self.texts.iter().map(|(p, _)| p.as_str()).collect()
    }

    /// The history of the next request, with the files it holds: the sources the run has
    /// read whole so far (`None` before the first).
    pub fn held(&self, trace: &[TraceEntry]) -> Option<(Vec<&str>, NoPaste)> {
        let read: Vec<&(String, String)> = self
            .texts
            .iter()
            .filter(|(p, _)| read_whole_at(trace, p).is_some())
            .collect();
        (!read.is_empty()).then(|| {
            let paths = read.iter().map(|(p, _)| p.as_str()).collect();
            let sources = read.iter().map(|(_, t)| t.clone()).collect();
            (
                paths,
                NoPaste {
                    sources,
                    allowed_tokens: self.allowed_tokens,
                },
            )
        })
    }
}

/// The texts a run may hold against pastes, or `None` when the contract has no `not_copied` check (a
/// mission that asks for copied values must not be steered off them) or none of its sources
/// can be read. Sources are the check's, else every input, each once, JSON-escaped as they
/// appear inside the string fields of a reply. A copied run starts to cost at half the
/// check's `min_run_words` in tokens (about a third of the words the check counts), so the
/// penalty is steep before a run reaches the check's length.
pub fn no_paste_sources(contract: &FrozenContract, world: &dyn World) -> Option<NoPasteSources> {
    let mut wanted: Vec<&str> = Vec::new();
    let mut allowed: Option<u32> = None;
    for check in &contract.mission.checks {
        let CheckSpec::NotCopied {
            sources,
            min_run_words,
            ..
        } = &check.spec
        else {
            continue;
        };
        let these: Vec<&str> = if sources.is_empty() {
            contract.mission.inputs.iter().map(String::as_str).collect()
        } else {
            sources.iter().map(String::as_str).collect()
        };
        for p in these {
            if !wanted.contains(&p) {
                wanted.push(p);
            }
        }
        // A contract's runs are at least 4 words long, so this is at least 2.
        let here = min_run_words / 2;
        allowed = Some(allowed.map_or(here, |a| a.min(here)));
    }
    let allowed_tokens = allowed?;
    let mut cut = Vec::new();
    let mut read: Vec<(String, String)> = Vec::new();
    for p in wanted {
        match world.read(p).ok().flatten() {
            Some(bytes) => read.push((
                p.to_string(),
                json_escaped(&String::from_utf8_lossy(&bytes)),
            )),
            None => cut.push(format!("{p}: not readable, left out")),
        }
    }
    // The room goes to the shortest texts first, so one long file cannot crowd out the rest;
    // the history keeps the contract's order.
    let mut by_length: Vec<usize> = (0..read.len()).collect();
    by_length.sort_by_key(|&i| read[i].1.len());
    let mut room = MAX_SOURCE_CHARS;
    let mut kept: Vec<Option<String>> = vec![None; read.len()];
    for i in by_length {
        let (p, text) = &read[i];
        let chars = text.chars().count();
        if room == 0 {
            cut.push(format!(
                "{p}: left out, over {MAX_SOURCE_CHARS} characters in all"
            ));
        } else if chars > room {
            cut.push(format!(
                "{p}: only its first {room} of {chars} characters, over {MAX_SOURCE_CHARS} in all"
            ));
            kept[i] = Some(text.chars().take(room).collect());
            room = 0;
        } else {
            room -= chars;
            kept[i] = Some(text.clone());
        }
    }
    let texts: Vec<(String, String)> = read
        .into_iter()
        .zip(kept)
        .filter_map(|((p, _), k)| k.map(|k| (p, k)))
        .collect();
    (!texts.is_empty()).then_some(NoPasteSources {
        texts,
        allowed_tokens,
        cut,
    })
}

/// A text as it is written inside a JSON string (without the quotes): how a reply that pastes
/// it spells it.
fn json_escaped(text: &str) -> String {
    let quoted = serde_json::Value::String(text.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pasted_text_is_spelled_as_a_reply_would_spell_it() {
        assert_eq!(json_escaped("a \"b\"\nc\\d\te"), "a \\\"b\\\"\\nc\\\\d\\te");
        assert_eq!(json_escaped(""), "");
    }
}
