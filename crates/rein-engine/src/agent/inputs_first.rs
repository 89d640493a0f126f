//! Lever `inputs-first`: before the model's first step, Rein reads the mission's input files
//! (and the files it may edit) itself, whole, through the gate like any call, and the
//! transcript starts with those calls and their results, as the model's own reads would have
//! left it. A small model spends its first steps on those reads: on
//! desk_task the 1.5B's three reads cost two of its five steps (about 35 s of 173 s), and every
//! step is another chance to drift.
//!
//! Never where which files were read is part of the answer: a contract whose `inputs_read`
//! names a proper subset of the inputs (a search: which file holds it) withholds those names,
//! and a contract that judges the calls themselves (`actions_called`) keeps its calls the
//! model's. The reads are journaled as Rein's, and the judge's facts say so.

use rein_protocol::{ChatMessage, GateReport};
use serde_json::json;

use super::prompt::labelled_result;
use crate::checks::{same_path, CheckSpec, World};
use crate::mission::FrozenContract;

/// At most this many characters of inputs in all are read up front (about 2,000 tokens of a
/// 4,096-token context); larger inputs are left to the model's own reads.
pub const INPUTS_FIRST_MAX_CHARS: usize = 6_000;

/// The files Rein reads before the first step, in the mission's order (inputs, then editable
/// files), or why it reads none.
pub fn files_to_read(
    contract: &FrozenContract,
    world: &dyn World,
    tools: &[String],
) -> Result<Vec<String>, String> {
    let m = &contract.mission;
    if !tools.iter().any(|t| t == "read_file") {
        return Err("the mission does not offer read_file".into());
    }
    let mut files: Vec<String> = Vec::new();
    for p in m.inputs.iter().chain(&m.editable) {
        if !files.iter().any(|f| same_path(f, p)) {
            files.push(p.clone());
        }
    }
    if files.is_empty() {
        return Err("the mission names no input files".into());
    }
    for c in &m.checks {
        match &c.spec {
            CheckSpec::InputsRead { paths, .. } if !paths.is_empty() => {
                let same_set = paths.iter().all(|p| files.iter().any(|f| same_path(f, p)))
                    && files.iter().all(|f| paths.iter().any(|p| same_path(f, p)));
                if !same_set {
                    return Err(format!(
                        "check `{}` names some of the inputs as the ones the task needs: which files those are is part of the task",
                        c.id
                    ));
                }
            }
            CheckSpec::ActionsCalled { .. } => {
                return Err(format!(
                    "check `{}` judges the run's calls: they stay the model's",
                    c.id
                ));
            }
            _ => {}
        }
    }
    let mut chars = 0usize;
    for f in &files {
        let bytes = match world.read(f) {
            Ok(Some(b)) => b,
            Ok(None) => return Err(format!("{f} does not exist")),
            Err(e) => return Err(format!("{f} could not be read: {e}")),
        };
        chars += String::from_utf8_lossy(&bytes).chars().count();
    }
    if chars > INPUTS_FIRST_MAX_CHARS {
        return Err(format!(
            "the inputs hold {chars} characters, more than the {INPUTS_FIRST_MAX_CHARS} read up front; the model reads them itself"
        ));
    }
    Ok(files)
}

/// A call Rein makes for the model, as the assistant turn the model would have written:
/// `parameters` is the JSON text of the call's parameters.
pub fn action_text(thought: &str, tool: &str, parameters: &str) -> String {
    // Written as the model writes an action (keys in the schema's order, its separators).
    format!(
        r#"{{"thought": {}, "action": {}, "parameters": {parameters}}}"#,
        json!(thought),
        json!(tool)
    )
}

/// The turns the transcript's head carries after the task: each read as the call the model
/// would have made and the result it would have got, so the model goes on from where its own
/// reads would have left it (the caller adds the progress note after the last turn of all).
pub fn read_turns(reads: &[(String, GateReport)]) -> Vec<ChatMessage> {
    let mut turns = Vec::new();
    for (i, (path, report)) in reads.iter().enumerate() {
        let call = action_text(
            &format!("Read the whole of {path}."),
            "read_file",
            &format!(r#"{{"path": {}}}"#, json!(path)),
        );
        turns.push(ChatMessage::assistant(call));
        turns.push(ChatMessage::user(labelled_result(
            &format!(
                "Result of Rein's read {} (read_file, made for you before your first step)",
                i + 1
            ),
            report,
        )));
    }
    turns
}
