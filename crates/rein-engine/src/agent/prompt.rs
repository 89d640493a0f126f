//! The prompt of one step. It is a growing prefix: the system rules, the tools and the task come
//! first and never change within a run, then each step appends the model's reply and the gate's
//! report. An embedded worker keeps its KV cache between calls and decodes only the new suffix,
//! so a stable prefix makes every step after the first cheap (about 14x on these CPUs).

use rein_protocol::GateReport;
use rein_workspace::ToolRegistry;
use serde_json::{json, Value};

use crate::mission::FrozenContract;

/// Characters of one tool result fed back to the model. A full `read_file` answer (up to 12,000
/// characters) would fill a small model's context in a few steps; the model can read a line
/// range when it needs more.
pub const MAX_RESULT_CHARS: usize = 6_000;
/// Characters of the `thought` under constrained decoding: one short sentence.
pub const MAX_THOUGHT_CHARS: usize = 160;

/// The rules and the tools: the first message of every step.
pub fn system_prompt(registry: &ToolRegistry, tools: &[String]) -> String {
    let mut s = String::from(
        "You are the actor of Rein, a harness that checks your work. You complete one task inside a \
workspace folder by calling tools, exactly one tool per reply.\n\
Reply with exactly one JSON object and nothing else, in this form:\n\
{\"thought\": \"<one short sentence>\", \"action\": \"<tool name>\", \"parameters\": {...}}\n\
For example: {\"thought\": \"Read the first input.\", \"action\": \"read_file\", \"parameters\": {\"path\": \"notes/a.md\"}}\n\n\
Rules:\n\
- Paths are relative to the workspace root.\n\
- Read each input file once, before you write. Never change the input files.\n\
- Do not repeat a call you already made: its result is above.\n\
- A person sees every change as a diff and may deny it.\n\
- Write the deliverable in full: real content, no placeholders, no TODO.\n\
- After writing the deliverable, read it back with read_file, then call finish.\n\
- finish is refused until the deliverable exists, is complete and was read back after the last write.\n\n\
Tools:\n",
    );
    s.push_str(&tool_lines(registry, tools));
    s
}

/// The rules and the tools of a memory-sandbox task (the bench's toy tasks): files and variables
/// held in memory, and `final_answer` to end.
pub fn memory_system_prompt(registry: &ToolRegistry, tools: &[String]) -> String {
    let mut s = String::from(
        "You are the actor of Rein, a harness that checks your work. You complete one task inside a \
sandbox of files and variables by calling tools, exactly one tool per reply.\n\
Reply with exactly one JSON object and nothing else, in this form:\n\
{\"thought\": \"<one short sentence>\", \"action\": \"<tool name>\", \"parameters\": {...}}\n\
For example: {\"thought\": \"Create the file.\", \"action\": \"create_file\", \"parameters\": {\"path\": \"a.txt\", \"content\": \"hi\"}}\n\n\
Rules:\n\
- Only the tools below exist; calling any other tool stops the run and fails it.\n\
- Do every step the task asks for, in the order it asks.\n\
- Do not repeat a call you already made: its result is above.\n\
- When every step is done, call final_answer. The harness then checks the sandbox itself; what you say does not count.\n\n\
Tools:\n",
    );
    s.push_str(&tool_lines(registry, tools));
    s
}

/// The most of one failed check's facts the model reads after a failed attempt: room for a
/// count and the lines it names (`not_copied` names the most copied lines of the deliverable).
pub const MAX_FAILED_CHECK_CHARS: usize = 480;

/// The task of a memory-sandbox run: the prompt and the files it starts with.
pub fn memory_task_message(contract: &FrozenContract) -> String {
    let m = &contract.mission;
    let mut s = format!("Task: {}\n", m.prompt.trim());
    if !m.inputs.is_empty() {
        s.push_str(&format!(
            "\nThe sandbox starts with these files: {}\n",
            m.inputs.join(", ")
        ));
    }
    s
}

/// What the model reads when an attempt's final answer was judged and failed: which checks
/// failed, as in a desk run, without the expected values.
pub fn memory_retry_feedback(v: &crate::checks::Verdict) -> String {
    let mut s = String::from("The harness checked the sandbox and these checks failed:\n");
    for c in v.checks.iter().filter(|c| !c.passed && !c.advisory) {
        let facts = clip(&c.feedback.join("; "), MAX_FAILED_CHECK_CHARS);
        s.push_str(&format!("- {} ({}): {facts}\n", c.id, c.kind));
    }
    s.push_str("Do the missing steps, then call final_answer again.");
    s
}

/// The most the quoted input lines of a failed verdict take in the next attempt's feedback
/// (lever `source-lines`): eight invoice lines fit with room to spare.
pub const MAX_SOURCE_LINES_CHARS: usize = 1_200;

/// The lines of the inputs that a verdict's failed deciding checks compared against (lever
/// `source-lines`), each once, in check order; empty when no failed check quotes a line.
/// Only lines of files in `read_whole` (the run's own executed full reads) are told: a quote
/// never shows a file the model has not seen, such as one policy keeps from `read_file`.
/// Lines that do not fit under [`MAX_SOURCE_LINES_CHARS`] are counted, not silently dropped.
pub fn source_lines_note(v: &crate::checks::Verdict, read_whole: &[String]) -> String {
    let seen = |q: &str| {
        read_whole.iter().any(|p| {
            q.strip_prefix(p.as_str())
                .is_some_and(|r| r.starts_with(" line "))
        })
    };
    let mut lines: Vec<&str> = Vec::new();
    for c in v.checks.iter().filter(|c| !c.passed && !c.advisory) {
        for q in &c.quoted {
            if seen(q) && !lines.contains(&q.as_str()) {
                lines.push(q);
            }
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "The lines of the inputs those checks compare against, quoted from the files:\n",
    );
    let mut used = 0;
    for (i, line) in lines.iter().enumerate() {
        let shown = format!("- {}\n", clip(line, MAX_SOURCE_LINES_CHARS / 4));
        let chars = shown.chars().count();
        if used + chars > MAX_SOURCE_LINES_CHARS {
            s.push_str(&format!(
                "- ... and {} more lines not shown (read the files they are in)\n",
                lines.len() - i
            ));
            break;
        }
        used += chars;
        s.push_str(&shown);
    }
    s
}

fn tool_lines(registry: &ToolRegistry, tools: &[String]) -> String {
    let mut s = String::new();
    let schemas = registry.schemas();
    for tool in tools {
        let Some(entry) = schemas
            .as_array()
            .and_then(|a| a.iter().find(|t| t["name"] == tool.as_str()))
        else {
            continue;
        };
        let description = entry["description"].as_str().unwrap_or("");
        s.push_str(&format!(
            "- {tool} {}: {description}\n",
            signature(&entry["parameters"])
        ));
    }
    s
}

/// `{"path": string, "start_line"?: integer}`: a tool's parameters as a small model reads them
/// best (the full JSON schema is what constrains decoding, not what explains it).
pub fn signature(schema: &Value) -> String {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else {
        return "{}".into();
    };
    let parts: Vec<String> = props
        .iter()
        .map(|(name, p)| {
            let ty = match &p["type"] {
                Value::String(t) => t.clone(),
                Value::Array(ts) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join("|"),
                _ => "value".into(),
            };
            let opt = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            format!("\"{name}\"{opt}: {ty}")
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// The task: the mission's prompt, its frozen inputs and its required deliverable. It is never
/// trimmed from the prompt.
pub fn task_message(contract: &FrozenContract) -> String {
    let m = &contract.mission;
    let mut s = format!("Task: {}\n\n", m.prompt.trim());
    if !m.inputs.is_empty() {
        s.push_str(&format!(
            "Input files (frozen; read them, never change them): {}\n",
            m.inputs.join(", ")
        ));
    }
    if !m.editable.is_empty() {
        s.push_str(&format!(
            "Files to edit in place (read them first; change nothing else): {}\n",
            m.editable.join(", ")
        ));
    }
    s.push_str(&format!(
        "Deliverable: {} (the harness checks it on disk before it accepts finish).\n",
        m.required_artifact
    ));
    s
}

/// The action schema of the registry restricted to the mission's tools, for constrained
/// decoding: the model can then only name a tool the mission allows.
pub fn mission_action_schema(registry: &ToolRegistry, tools: &[String]) -> Value {
    let full = registry.action_schema();
    let branches: Vec<Value> = full["anyOf"]
        .as_array()
        .map(|b| {
            b.iter()
                .filter(|branch| {
                    branch["properties"]["action"]["const"]
                        .as_str()
                        .is_some_and(|name| tools.iter().any(|t| t == name))
                })
                .cloned()
                .map(|mut branch| {
                    // A small model left free copies the whole task into its thought, spending
                    // a hundred tokens a step; a short thought leaves the budget to the action.
                    branch["properties"]["thought"]["maxLength"] = json!(MAX_THOUGHT_CHARS);
                    branch
                })
                .collect()
        })
        .unwrap_or_default();
    json!({ "anyOf": branches })
}

/// Types `tool`'s parameters in an action schema: `path` can only be `path`, and `document`
/// must follow `document` (the contract's schema of the deliverable), so constrained decoding
/// writes a document of the right shape, never JSON inside a string.
pub fn type_document(action_schema: &mut Value, tool: &str, path: &str, document: &Value) {
    let Some(branches) = action_schema["anyOf"].as_array_mut() else {
        return;
    };
    for branch in branches {
        if branch["properties"]["action"]["const"].as_str() != Some(tool) {
            continue;
        }
        let props = &mut branch["properties"]["parameters"]["properties"];
        props["path"] = json!({ "type": "string", "const": path });
        props["document"] = document.clone();
    }
}

/// What the model reads after its action: the gate's outcome, its reason and the result,
/// clipped to [`MAX_RESULT_CHARS`].
pub fn result_message(step: u32, tool: &str, report: &GateReport) -> String {
    labelled_result(&format!("Result of step {step} ({tool})"), report)
}

/// A call's result as the model reads it, after `label`: the gate's outcome, its reason and
/// the result, clipped to [`MAX_RESULT_CHARS`].
pub fn labelled_result(label: &str, report: &GateReport) -> String {
    let body = (!report.result.is_null()).then(|| report.result.to_string());
    labelled_text(label, report, body.as_deref())
}

/// [`labelled_result`] with `body` in place of the result's JSON (Rein's counts in words,
/// lever `plain-counts`), clipped the same way.
pub fn labelled_text(label: &str, report: &GateReport, body: Option<&str>) -> String {
    let mut s = format!("{label}: {}", report.outcome.as_str());
    if !report.reason.is_empty() {
        s.push_str(&format!(" - {}", report.reason));
    }
    if let Some(body) = body {
        s.push('\n');
        s.push_str(&clip(body, MAX_RESULT_CHARS));
    }
    s
}

/// Where the work stands, from the trace (not from the model's claims): which inputs were read,
/// and whether the deliverable was written and read back. Small models lose track of this and
/// loop; the note is a hint, never authority.
///
/// `typed` is the typed writer a lever offers for the deliverable (`write_json`,
/// `write_sections`), and `tools` the run's tool list. A small model copies the suggested step
/// into its next call, so the note names only a tool the run offers: the typed one, else
/// `create_file` (the 1.5B, offered `write_sections`, wrote with `create_file` as the note said
/// and lost a heading), and no tool at all when the run offers none that fits.
///
/// With `find_inputs` (lever `find-inputs`), a task among many inputs that needs only the ones
/// it picks ([`task_picks_inputs`]) is not walked through them one by one: the note counts the
/// inputs read and suggests finding the ones that matter with `search_text` first.
///
/// After a finish held for a review (`held_for_review`, lever `review-edits`) the next step is
/// the review's: finish again, or make the change the diff lacks.
pub fn progress_note(
    contract: &FrozenContract,
    trace: &[crate::checks::TraceEntry],
    typed: Option<&str>,
    tools: &[String],
    find_inputs: bool,
    held_for_review: bool,
    globs: bool,
) -> String {
    progress_parts(
        contract,
        trace,
        typed,
        tools,
        find_inputs,
        held_for_review,
        globs,
    )
    .text()
}

/// A progress note in its two parts: where the run stands, and the suggested next step (which
/// lever `change-list` replaces with the next change on the model's list).
pub struct ProgressNote {
    pub standing: String,
    pub next: String,
}

impl ProgressNote {
    pub fn text(&self) -> String {
        format!(
            "Progress: {}. Suggested next step: {}.",
            self.standing, self.next
        )
    }
}

/// [`progress_note`] before it is written out.
pub fn progress_parts(
    contract: &FrozenContract,
    trace: &[crate::checks::TraceEntry],
    typed: Option<&str>,
    tools: &[String],
    find_inputs: bool,
    held_for_review: bool,
    globs: bool,
) -> ProgressNote {
    let m = &contract.mission;
    let offered = |t: &'static str| tools.iter().any(|have| have == t).then_some(t);
    let with = |tool: Option<&str>| tool.map(|t| format!(" with {t}")).unwrap_or_default();
    let writer = typed.or_else(|| offered("create_file"));
    let unread: Vec<&str> = m
        .inputs
        .iter()
        .chain(&m.editable)
        // Read as the judge counts it: every line shown, in one read or in line ranges.
        .filter(|i| crate::checks::read_whole_at(trace, i).is_none())
        .map(String::as_str)
        .collect();
    let partly_read = |path: &str| trace.iter().any(|e| e.reads(path));
    let artifact = m.required_artifact.as_str();
    let last_write = crate::checks::last_write(trace, artifact);
    let seen = last_write.is_some_and(|w| crate::checks::seen_since_write(trace, w, artifact));
    let in_place = m.editable.iter().any(|e| e == artifact);
    let (deliverable, next) = match (last_write, seen) {
        (None, _) if in_place => (
            format!("{artifact} is not edited yet"),
            match offered("edit_lines")
                .or_else(|| offered("edit_file"))
                .or_else(|| offered("replace_file"))
            {
                // Lever `line-edits`: one call names every line to change.
                Some("edit_lines") => format!(
                    "edit {artifact} in place with edit_lines: every change the task asks for in this one call, each naming a current line and the lines that take its place"
                ),
                // Written whole (lever `whole-rewrite`): one call holds every change.
                Some("replace_file") => format!(
                    "edit {artifact} in place with replace_file: its whole new text, every change the task asks for made in this one call and every other line as it is"
                ),
                tool => format!("edit {artifact} in place{}", with(tool)),
            },
        ),
        (None, _) => (
            format!("{artifact} is not written yet"),
            format!("write the whole of {artifact}{}", with(writer)),
        ),
        // `finish` is left out while the deliverable holds bytes that failed
        // (`change-before-finish`): then the step is to change it.
        (Some(_), true) if offered("finish").is_none() => (
            format!("{artifact} is written and was read back"),
            format!("change {artifact} to meet the failed checks; finish is offered again once it differs from the version that failed"),
        ),
        (Some(_), true) => (
            format!("{artifact} is written and was read back"),
            "call finish if it is complete, else fix it".to_string(),
        ),
        (Some(_), _) => (
            format!("{artifact} is written but not read back since"),
            format!("read {artifact} back with read_file"),
        ),
    };
    let refused = trace
        .last()
        // Refused by the finish rules (denied), not for its own arguments (invalid).
        .is_some_and(|e| e.tool == "finish" && e.outcome == "denied");
    let next = if held_for_review {
        format!(
            "call finish again if the diff above holds every change the task asks for (only a change it lacks is made first{})",
            with(offered("edit_file").or_else(|| offered("edit_lines")))
        )
    } else if refused {
        // Not written yet: replace_file refuses a file that does not exist.
        let rewriter = if last_write.is_none() && !in_place {
            writer
        } else {
            typed
                .or_else(|| offered("replace_file"))
                .or_else(|| offered("edit_lines"))
        };
        let how = match rewriter {
            Some("replace_file") => " (replace_file with its full content)".to_string(),
            Some("edit_lines") => " (edit_lines, every change in one call)".to_string(),
            Some(t) => format!(" ({t})"),
            None => String::new(),
        };
        format!("fix {artifact} as the refusal says{how}, then read it back")
    } else {
        next
    };
    if find_inputs && task_picks_inputs(contract) {
        let (inputs, next) = picked_inputs_progress(contract, trace, tools, last_write, next);
        return ProgressNote {
            standing: format!("{inputs}; {deliverable}"),
            next,
        };
    }
    let (inputs, next) = match unread.first() {
        None => ("every input was read".to_string(), next),
        Some(first) => (
            format!(
                "not yet read{}: {}",
                if unread.iter().any(|u| partly_read(u)) {
                    " in full"
                } else {
                    ""
                },
                unread.join(", ")
            ),
            if partly_read(first) {
                format!("read the rest of {first} with read_file, from the start_line its cut read names")
            } else {
                // Lever `glob-reads`: the first input's unread neighbours in one call.
                globs
                    .then(|| super::glob_reads::glob_suggestion(&unread))
                    .flatten()
                    .unwrap_or_else(|| format!("read the whole of {first} with read_file"))
            },
        ),
    };
    ProgressNote {
        standing: format!("{inputs}; {deliverable}"),
        next,
    }
}

/// Fewest inputs for which lever `find-inputs` applies: below it, reading each input costs a
/// few steps; the desk suite's search tasks have 21 to 24 and its report tasks at most 4.
pub const FIND_INPUTS_MIN: usize = 8;

/// Whether the task picks which of its inputs to read: at least [`FIND_INPUTS_MIN`] inputs and
/// no `inputs_read` check that needs every one of them (a check naming some of them keeps
/// their names to itself: which files hold the answer is part of a search task). The desk
/// suite's search tasks need one file of 21 to 24; the progress note named every unread input
/// in turn, and the 1.5B read all of them, one step each, and never called `search_text`.
pub fn task_picks_inputs(contract: &FrozenContract) -> bool {
    use crate::checks::same_path;
    let m = &contract.mission;
    // Every input some inputs_read check needs, over all of them; one that names none needs all.
    let mut needed: Vec<&str> = Vec::new();
    for paths in inputs_read_paths(contract) {
        if paths.is_empty() {
            return false;
        }
        needed.extend(paths.iter().map(String::as_str));
    }
    m.inputs.len() >= FIND_INPUTS_MIN
        && !m
            .inputs
            .iter()
            .all(|i| needed.iter().any(|p| same_path(p, i)))
}

/// The `paths` of each `inputs_read` check of the contract (empty: every input).
pub(crate) fn inputs_read_paths(contract: &FrozenContract) -> impl Iterator<Item = &Vec<String>> {
    contract
        .mission
        .checks
        .iter()
        .filter_map(|c| match &c.spec {
            crate::checks::CheckSpec::InputsRead { paths, .. } => Some(paths),
            _ => None,
        })
}

/// The progress note's inputs part and next step for a task that picks its inputs: how many
/// were read in full, and, until the run has searched or written, a search first (with a tool
/// the run offers); then the files the search named, read in full before the first write.
fn picked_inputs_progress(
    contract: &FrozenContract,
    trace: &[crate::checks::TraceEntry],
    tools: &[String],
    last_write: Option<usize>,
    next: String,
) -> (String, String) {
    let m = &contract.mission;
    let offered = |t: &'static str| tools.iter().any(|have| have == t).then_some(t);
    let read = m
        .inputs
        .iter()
        .filter(|i| crate::checks::read_whole_at(trace, i).is_some())
        .count();
    let why = if inputs_read_paths(contract).next().is_some() {
        "the task needs only some of them, and which ones is part of the task"
    } else {
        "which of them to read is the task's to decide"
    };
    let inputs = format!(
        "{read} of the {} inputs read in full ({why})",
        m.inputs.len()
    );
    let searched = trace.iter().any(|e| {
        e.executed()
            && !e.lines_unseen
            && matches!(
                e.tool.as_str(),
                "search_text" | "find_files" | "find_related"
            )
    });
    let finder = offered("search_text").or_else(|| offered("find_files"));
    let next = match (searched, last_write, finder) {
        (false, None, Some(f)) => format!(
            "find the files that hold what the task asks for with {f} (a word or pattern from the task), then read in full only the files it names"
        ),
        (true, None, _) if offered("read_file").is_some() => format!(
            "read in full with read_file each file your search named that you have not read yet, then {next} (a search that named no file is made again with other words, not answered by reading every file)"
        ),
        _ => next,
    };
    (inputs, next)
}

/// At most `max` characters of `text`, saying how much was cut.
/// Characters of the task that a `task-reminder` repeats.
pub const REMINDER_TASK_CHARS: usize = 1_200;
/// Most calls a `task-reminder` lists (the latest ones).
pub const REMINDER_CALLS: usize = 24;

/// The `task-reminder` lever's note after a step: the calls of this run that ran, then the
/// task again. A small model reads the newest lines of its prompt most; the 0.5B, its task
/// far above, went on calling tools in the order of the tool list ("Create the files." as the
/// thought of all twelve steps) after it had done what was asked.
pub fn task_reminder(contract: &FrozenContract, trace: &[crate::checks::TraceEntry]) -> String {
    let m = &contract.mission;
    let ran: Vec<String> = trace
        .iter()
        .filter(|e| e.executed())
        .map(|e| {
            let call = match &e.path {
                Some(p) => format!("{} {p}", e.tool),
                None => e.tool.clone(),
            };
            if e.by_rein {
                format!("{call} (by Rein)")
            } else {
                call
            }
        })
        .collect();
    let calls = match ran.len() {
        0 => "none yet".to_string(),
        n if n > REMINDER_CALLS => format!(
            "{} earlier, then {}",
            n - REMINDER_CALLS,
            ran[n - REMINDER_CALLS..].join(", ")
        ),
        _ => ran.join(", "),
    };
    let finish = if m.tools.iter().any(|t| t == "final_answer") {
        "final_answer"
    } else {
        "finish"
    };
    // Calls Rein made for the model (levers inputs-first, stats-first, auto-finish) are
    // named as Rein's, never as the model's own.
    let whose = if trace.iter().any(|e| e.by_rein) {
        "The calls that ran, in order (\"by Rein\": Rein made it for you)"
    } else {
        "The calls of yours that ran, in order"
    };
    format!(
        "Reminder. {whose}: {calls}.\nThe task: {}\nDo the next thing the task asks that is not done yet; once all of it is done, call {finish}.",
        clip(m.prompt.trim(), REMINDER_TASK_CHARS)
    )
}

/// Whether the model reads `report`'s result whole: [`result_message`] clips it at
/// [`MAX_RESULT_CHARS`] of its JSON, where a quote or a line break takes two characters.
pub fn result_shown_whole(report: &GateReport) -> bool {
    report.result.to_string().chars().count() <= MAX_RESULT_CHARS
}

pub fn clip(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}... [{} more characters not shown]", n - max)
}

/// One line for a person: what the step did.
pub fn summarize(tool: &str, parameters: &Value, report: &GateReport) -> String {
    let path = parameters.get("path").and_then(Value::as_str);
    let r = &report.result;
    let mut s = match (report.outcome.as_str(), tool) {
        ("executed" | "replayed", "read_file") => {
            let chars = r
                .get("content")
                .and_then(Value::as_str)
                .map(|c| c.chars().count());
            match (path, chars) {
                (Some(p), Some(c)) => format!("read {p} ({c} characters)"),
                (Some(p), None) => format!("read {p}"),
                _ => "read a file".into(),
            }
        }
        ("executed" | "replayed", "finish") => "finish accepted".into(),
        ("executed" | "replayed", _) if r.get("applied").and_then(Value::as_bool) == Some(true) => {
            let change = r
                .get("change_id")
                .map(|c| format!(" (change {c})"))
                .unwrap_or_default();
            format!("applied to {}{change}", path.unwrap_or("?"))
        }
        ("executed" | "replayed", _) => {
            let body = r.to_string();
            match path {
                Some(p) => format!("{p}: {}", clip(&body, 100)),
                None => clip(&body, 100),
            }
        }
        // The outcome itself is shown beside the summary; say why.
        _ if report.reason.is_empty() => clip(&r.to_string(), 120),
        _ => clip(&report.reason, 240),
    };
    s = s.replace('\n', " ");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_mark_optional_parameters() {
        let schema = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "start_line": {"type": "integer"}},
            "required": ["path"]
        });
        assert_eq!(
            signature(&schema),
            r#"{"path": string, "start_line"?: integer}"#
        );
    }

    #[test]
    fn restricted_schema_keeps_only_mission_tools() {
        let reg = rein_workspace::desk_registry();
        let tools = vec!["read_file".to_string(), "finish".to_string()];
        let s = mission_action_schema(&reg, &tools);
        let branches = s["anyOf"].as_array().cloned().unwrap_or_default();
        let names: Vec<&str> = branches
            .iter()
            .filter_map(|b| b["properties"]["action"]["const"].as_str())
            .collect();
        assert_eq!(names, vec!["read_file", "finish"]);
    }

    #[test]
    fn a_task_reminder_lists_what_ran_latest_last_and_names_the_run_s_finish() {
        use crate::checks::TraceEntry;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../missions/desk_task");
        let contract = crate::mission::Mission::load(&dir).unwrap();
        let mut trace = vec![
            TraceEntry::new("read_file", Some("a.md"), "executed", false),
            TraceEntry::new("create_file", Some("../x"), "refused", true),
        ];
        let note = task_reminder(&contract, &trace);
        assert!(note.contains("in order: read_file a.md.\n"), "{note}");
        assert!(!note.contains("../x"), "a refused call did not run: {note}");
        assert!(note.ends_with("call finish."), "{note}");
        for i in 0..30 {
            trace.push(TraceEntry::new(
                "read_file",
                Some(&format!("f{i}.md")),
                "executed",
                false,
            ));
        }
        let note = task_reminder(&contract, &trace);
        assert!(
            note.contains("in order: 7 earlier, then read_file f6.md,"),
            "{note}"
        );
        assert!(note.contains("read_file f29.md.\n"), "{note}");
        let mut memory = contract.clone();
        memory.mission.tools.push("final_answer".into());
        memory.mission.prompt = "x".repeat(REMINDER_TASK_CHARS + 5);
        let note = task_reminder(&memory, &[]);
        assert!(note.contains("in order: none yet."), "{note}");
        assert!(note.contains("[5 more characters not shown]"), "{note}");
        assert!(note.ends_with("call final_answer."), "{note}");
    }

    #[test]
    fn clip_says_what_was_cut() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcdef", 3), "abc... [3 more characters not shown]");
    }
}
