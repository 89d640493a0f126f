//! The `no-paste` lever: when the contract says the deliverable must be in the model's own
//! words (a `not_copied` check), an embedded model decodes every reply with the prose inputs
//! that check compares against as the texts of a copy penalty (see
//! [`rein_protocol::NoPaste`]): a token that would extend a run copied from them beyond a few
//! tokens loses logit, more the longer the run; until the run has written the deliverable, a
//! run the reply repeats from itself counts too (not after, when most writes are edits whose
//! `new_text` keeps their `old_text`). Names and short phrases stay copyable; a paragraph or
//! one text under two headings pasted in the sources' own tokens does not come out at
//! temperature 0.1 (spelled with other tokens, or with a comma dropped, a run starts again:
//! the steering is best effort).
//! Tables (CSV, TSV) are not held token by token: task names must come out verbatim
//! (`mentions_all`), and held so, a row's name was bent mid-word (`Renewal API` into
//! `Renewal AP` on desk_task, seed 0) and `tasks-listed` failed. Left free, the 1.5B pasted the
//! rows one after another, which the judge's `not_copied` reads as one verbatim run of the
//! table (it failed seeds 0 and 9 of the bench for it). So a table is held at its row ends only
//! (see [`NoPaste::tables`]): after a copied row, the reply must write a word of its own (`12
//! hours`) before the next row, which cuts the run at every row and keeps each row verbatim.
//! Only inputs the run has read whole, still holding their frozen bytes, are held: the penalty
//! falls exactly where a reply would follow the text, so holding a file the model was never
//! shown (one policy keeps from `read_file`), or an older text of one, would tell it something
//! of that file.
//!
//! The judge is untouched: `not_copied` still counts near-copies (a word changed every few
//! words), so a reply nudged off a copy one word at a time still fails it.

use rein_protocol::NoPaste;

use crate::checks::{is_table, read_whole_at, CheckSpec, TraceEntry, World};
use crate::mission::{sha256_hex, FrozenContract};

/// Most characters of source text one request's history holds, all prose sources together
/// (and as many again for the tables, held at their row ends only): the
/// worker is sent them with every request and scans them at every token. A prompt shows at
/// most 6,000 characters of one read, so longer inputs are never pasted whole anyway.
pub const MAX_SOURCE_CHARS: usize = 48_000;
/// Largest source file read at all: four bytes a character of the cap.
const MAX_SOURCE_BYTES: usize = 4 * MAX_SOURCE_CHARS;

/// Which inputs a run may hold against pastes, once the run has read them whole.
#[derive(Debug, Clone, PartialEq)]
pub struct NoPasteSources {
    /// The prose source files, in the contract's order.
    pub paths: Vec<String>,
    /// The table sources, held at their row ends only (see the module's note).
    pub tables: Vec<String>,
    pub allowed_tokens: u32,
    /// The shortest `min_run_words` of the checks over the tables.
    pub table_run_words: u32,
}

/// One step's history and what it left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub paths: Vec<String>,
    /// The tables whose row ends are held (see [`NoPaste::tables`]).
    pub tables: Vec<String>,
    /// `None` while nothing is held.
    pub history: Option<NoPaste>,
    /// Sources read whole but left out or cut: changed since they were frozen, too large, or
    /// past [`MAX_SOURCE_CHARS`] in all. A cap says so when it fires.
    pub cut: Vec<String>,
}

impl NoPasteSources {
    /// The history of the next request: the sources the run has read whole so far that still
    /// hold their frozen bytes (an input changed under the run is not the text the model was
    /// shown), empty ones dropped; prose with newlines as LF, JSON-escaped, tables as read.
    /// Prose and tables each fit in [`MAX_SOURCE_CHARS`], the shortest first.
    pub fn held(&self, contract: &FrozenContract, world: &dyn World, trace: &[TraceEntry]) -> Held {
        let mut cut = Vec::new();
        let (mut prose_read, mut tables_read) = (Vec::new(), Vec::new());
        let prose = self.paths.iter().map(|p| (p, false));
        for (p, table) in prose.chain(self.tables.iter().map(|p| (p, true))) {
            if read_whole_at(trace, p).is_none() || trace.iter().any(|e| e.mutated_path(p)) {
                continue;
            }
            let Some(bytes) = world.read(p).ok().flatten() else {
                cut.push(format!("{p}: not readable, left out"));
                continue;
            };
            if contract.input_hash(p) != Some(sha256_hex(&bytes).as_str()) {
                cut.push(format!("{p}: changed since it was frozen, left out"));
                continue;
            }
            if bytes.len() > MAX_SOURCE_BYTES {
                cut.push(format!("{p}: over {MAX_SOURCE_BYTES} bytes, left out"));
                continue;
            }
            let Ok(text) = std::str::from_utf8(&bytes) else {
                cut.push(format!("{p}: not UTF-8 text, left out"));
                continue;
            };
            if text.trim().is_empty() {
                continue;
            }
            // A table's rows are read as words, where a line break is one, as the judge reads
            // them; prose is matched token by token as a reply would spell it.
            if table {
                tables_read.push((p.clone(), text.to_string()));
            } else {
                prose_read.push((p.clone(), json_escaped(&text.replace("\r\n", "\n"))));
            }
        }
        let (paths, sources) = fit_to_room(prose_read, &mut cut);
        let (tables, table_texts) = fit_to_room(tables_read, &mut cut);
        let history = (!sources.is_empty() || !table_texts.is_empty()).then(|| NoPaste {
            sources,
            allowed_tokens: self.allowed_tokens,
            own_repeats: !deliverable_written(contract, trace),
            tables: table_texts,
            table_run_words: self.table_run_words,
        });
        Held {
            paths,
            tables,
            history,
            cut,
        }
    }
}

/// The texts that fit in [`MAX_SOURCE_CHARS`], in their order, as (paths, texts): the room
/// goes to the shortest first, so one long file cannot crowd out the rest; what does not fit
/// whole is cut, and `cut` says so. Prose and tables each have their own room.
fn fit_to_room(read: Vec<(String, String)>, cut: &mut Vec<String>) -> (Vec<String>, Vec<String>) {
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
    read.into_iter()
        .zip(kept)
        .filter_map(|((p, _), k)| k.map(|k| (p, k)))
        .unzip()
}

/// Whether the run has written the deliverable. Until it has, the next write is a whole one,
/// where a text repeated under a second heading is a paste too; after, most writes are edits,
/// whose `new_text` keeps most of its `old_text` (on desk_task, a penalty on that repeat made
/// the 1.5B change rows it did not need to, `Jonas` to `Jonah`, until the run timed out;
/// without one before the first write it wrote the same text under Project summary and Goal).
/// A whole rewrite after the first write (`replace_file`, `write_sections`) goes without it
/// too; a stale file left from before the run does not count as written.
fn deliverable_written(contract: &FrozenContract, trace: &[TraceEntry]) -> bool {
    let artifact = &contract.mission.required_artifact;
    trace.iter().any(|e| e.mutated_path(artifact))
}

/// The inputs a run may hold against pastes, or `None` when the contract has no `not_copied`
/// check (a mission that asks for copied values must not be steered off them). Sources are the
/// check's, else every input, each once, tables apart. A copied run starts to cost at half
/// the check's `min_run_words` in tokens (about a third of the words the check counts), so the
/// penalty is steep before a run reaches the check's length; a check over tables only does not
/// tighten the prose's run length (its tables are held at their row ends, which needs none),
/// and sets it only when no check holds prose (for the reply's own repeats).
pub fn no_paste_sources(contract: &FrozenContract) -> Option<NoPasteSources> {
    let mut paths: Vec<String> = Vec::new();
    let mut tables: Vec<String> = Vec::new();
    let mut allowed: Option<u32> = None;
    let mut allowed_by_tables: Option<u32> = None;
    let mut table_run_words: u32 = 0;
    for check in &contract.mission.checks {
        let CheckSpec::NotCopied {
            sources,
            min_run_words,
            ..
        } = &check.spec
        else {
            continue;
        };
        let these = if sources.is_empty() {
            &contract.mission.inputs
        } else {
            sources
        };
        let mut holds_prose = false;
        for p in these {
            let table = is_table(p);
            holds_prose |= !table;
            if table {
                table_run_words = match table_run_words {
                    0 => *min_run_words,
                    n => n.min(*min_run_words),
                };
            }
            let list = if table { &mut tables } else { &mut paths };
            if !list.contains(p) {
                list.push(p.clone());
            }
        }
        // A contract's runs are at least 4 words long, so this is at least 2.
        let here = min_run_words / 2;
        let slot = if holds_prose {
            &mut allowed
        } else {
            &mut allowed_by_tables
        };
        *slot = Some(slot.map_or(here, |a| a.min(here)));
    }
    Some(NoPasteSources {
        paths,
        tables,
        allowed_tokens: allowed.or(allowed_by_tables)?,
        table_run_words,
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
