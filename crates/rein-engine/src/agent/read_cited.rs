//! Lever `read-cited`: in a task that picks which of its many inputs to read, the first write of
//! the deliverable is held while its text names an input the run has not read in full. The
//! contract's `inputs_read` check wants the inputs an answer rests on read before that first
//! write, so such a write fails it for good, whatever the later attempts do. Which inputs the
//! answer rests on is never told: only the inputs the model's own text names are.

use std::collections::HashMap;

use serde_json::Value;

use crate::checks::{last_write, read_whole_at, same_path, CheckSpec, TraceEntry};
use crate::mission::FrozenContract;

use super::glob_reads::{plural, with_plan_left, Plan};
use super::prompt::task_picks_inputs;

/// Shortest file stem an answer is taken to name as a word (`17` of `mail/17.eml.txt` is a
/// number of many things).
const MIN_STEM_CHARS: usize = 3;

/// The inputs the first write of the deliverable `path`, with `params`, names and the run has
/// not read in full, in the order of the mission's inputs; empty when the lever does not
/// apply (another file, a deliverable written before, a task that reads every input).
///
/// `counted`: Rein showed the inputs' counts before the first step (lever `folder-stats`), so
/// a task that reads every input is held too: given every row count, the 1.5B wrote
/// explore-csv-rows' table after reading only the README, and failed `inputs-read` for good.
pub fn cited_unread(
    contract: &FrozenContract,
    trace: &[TraceEntry],
    path: &str,
    params: &Value,
    counted: bool,
) -> Vec<String> {
    let m = &contract.mission;
    if !same_path(path, &m.required_artifact)
        || last_write(trace, &m.required_artifact).is_some()
        || !(counted || task_picks_inputs(contract))
        || !reads_before_writing(contract)
    {
        return Vec::new();
    }
    let mut text = String::new();
    collect_text(params, true, &mut text);
    let text = text.to_lowercase();
    let mut stems: HashMap<String, usize> = HashMap::new();
    for input in &m.inputs {
        *stems.entry(stem(input)).or_default() += 1;
    }
    m.inputs
        .iter()
        .filter(|input| read_whole_at(trace, input).is_none())
        .filter(|input| {
            let named = holds_word(&text, &input.to_lowercase());
            let stem = stem(input);
            let by_stem = stem.chars().count() >= MIN_STEM_CHARS
                && stems.get(&stem) == Some(&1)
                && holds_word(&text, &stem);
            named || by_stem
        })
        .cloned()
        .collect()
}

/// Whether the contract wants inputs read before the deliverable is first written (an
/// `inputs_read` check with `before_writing` naming it): without one, a write before a read
/// fails nothing, and holding it would only cost a step.
fn reads_before_writing(contract: &FrozenContract) -> bool {
    let artifact = &contract.mission.required_artifact;
    contract.mission.checks.iter().any(|c| {
        matches!(
            &c.spec,
            CheckSpec::InputsRead { before_writing: Some(b), .. } if same_path(b, artifact)
        )
    })
}

/// Every string of `value` but a top-level `path`, one a line.
fn collect_text(value: &Value, top: bool, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|v| collect_text(v, false, out)),
        Value::Object(fields) => fields
            .iter()
            .filter(|(k, _)| !(top && k.as_str() == "path"))
            .for_each(|(_, v)| collect_text(v, false, out)),
        _ => {}
    }
}

/// The file name before its first `.`, lower case (`notes/2024-05-14-ops-sync.md` is
/// `2024-05-14-ops-sync`, `services/pricing.yaml` is `pricing`).
fn stem(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split('.').next().unwrap_or(name).to_lowercase()
}

/// Whether `word` occurs in `text` with no letter, digit, `_`, `-` or `/` on either side (both
/// lower case): `archive/notes/a.md` does not name `notes/a.md`, nor `x/pricing` `pricing`.
fn holds_word(text: &str, word: &str) -> bool {
    let part = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '/');
    text.match_indices(word).any(|(at, _)| {
        // `./notes/a.md` names `notes/a.md`.
        let before = text[..at].trim_end_matches("./").chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(part) && !after.is_some_and(part)
    })
}

/// A first write of the deliverable that [`cited_unread`] held: the model's own call, given
/// back once the inputs it named are read ([`held_draft_note`]).
#[derive(Debug, Clone)]
pub struct CitedDraft {
    /// The step that sent it.
    pub step: u32,
    /// The inputs it named that held it.
    pub unread: Vec<String>,
    pub tool: String,
    pub params: Value,
}

/// What the model is told once no input its held write named holds it: the write itself, as
/// a call to send again, since the 1.5B otherwise writes again from the files it read last.
pub fn held_draft_note(draft: &CitedDraft) -> GivenBack {
    let call = serde_json::json!({"action": draft.tool, "parameters": draft.params});
    let before = format!(
        "Rein holds your write of step {} no longer (lever read-cited): the files it named are read, or cannot be. That write was:",
        draft.step
    );
    let after = "Send it again now, changing only what the files you read show otherwise.";
    GivenBack {
        text: format!("\n{before}\n{call}\n{after}"),
        rein_words: vec![before, after.to_string()],
    }
}

/// A held write given back: the text the model reads, and Rein's own sentences around the
/// model's call (lever `no-echo` holds a paste of those, not of the call).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GivenBack {
    pub text: String,
    pub rein_words: Vec<String>,
}

/// What the model reads after Rein's reads for a held write (lever `cited-reads`): how many of
/// the files it named were read and shown whole, and those not (with why, to read itself).
pub fn cited_reads_note(named: usize, plan: &Plan) -> String {
    let opening = format!(
        "Rein read {} of the {named} file{} your held write named (lever cited-reads), each a read_file call of its own, shown above: {} shown whole.",
        plan.reads(),
        plural(named),
        plan.whole.len(),
    );
    with_plan_left(
        opening,
        plan,
        "named in the held write's message above",
        "read those with read_file yourself before you write.",
    )
}

/// What the model is told of a held write; `rein_reads`: Rein reads the inputs for it (lever
/// `cited-reads`), so the model is not asked to.
pub fn held_reason(unread: &[String], rein_reads: bool) -> String {
    if rein_reads {
        return format!(
            "held by Rein, nothing was written (lever read-cited): your text names {}, not read in full yet, and the answer must rest on inputs read before it is first written; Rein reads {} for you now (lever cited-reads), below",
            unread.join(", "),
            if unread.len() == 1 { "it" } else { "them" },
        );
    }
    let (them, it) = if unread.len() == 1 {
        ("it", "it")
    } else {
        ("them", "each")
    };
    format!(
        "held by Rein, nothing was written (lever read-cited): your text names {}, not read in full yet; the answer must rest on inputs read before it is first written, so read {it} in full with read_file first, then write again (or leave {them} out if {} not what the task asks for). Your next call: {{\"action\": \"read_file\", \"parameters\": {{\"path\": \"{}\"}}}}",
        unread.join(", "),
        if unread.len() == 1 { "it is" } else { "they are" },
        unread[0],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_is_whole_only_between_other_characters() {
        assert!(holds_word("service: pricing\n", "pricing"));
        assert!(holds_word(
            "file: 2024-05-14-ops-sync.md",
            "2024-05-14-ops-sync"
        ));
        // Inside a path, a stem is a folder's or another file's: the path is matched whole.
        assert!(!holds_word(
            "file: notes/2024-05-14-ops-sync.md",
            "2024-05-14-ops-sync"
        ));
        assert!(holds_word(
            "file: notes/2024-05-14-ops-sync.md",
            "notes/2024-05-14-ops-sync.md"
        ));
        assert!(!holds_word("service: pricing-api", "pricing"));
        assert!(!holds_word("repricing", "pricing"));
        assert!(holds_word("(pricing).", "pricing"));
        assert!(!holds_word("archive/notes/a.md", "notes/a.md"));
        assert!(holds_word("file: ./notes/a.md", "notes/a.md"));
        assert!(holds_word("file: notes/a.md.", "notes/a.md"));
    }

    #[test]
    fn the_stem_is_the_name_before_its_first_dot() {
        assert_eq!(stem("mail/17.eml.txt"), "17");
        assert_eq!(stem("services/Pricing.yaml"), "pricing");
        assert_eq!(stem("README"), "readme");
    }

    #[test]
    fn the_text_is_every_string_but_the_path() {
        let mut text = String::new();
        let params = serde_json::json!({"path": "services/auth.yaml", "document": {"file": "a", "n": 3, "list": ["b"]}});
        collect_text(&params, true, &mut text);
        assert_eq!(text, "a\nb\n");
    }
}
