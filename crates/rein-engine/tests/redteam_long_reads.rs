#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of long reads: a `read_file` result cut at a line to what the prompt shows
//! (`fit_read_result`), the judge's `inputs_read` crediting line ranges that cover a file, and
//! the `keep-inputs` lever's pinned reads. Each attack tries to get an input credited as read
//! in full without the model having been shown all of it, or to make the new code panic, lose
//! data or misreport. Each test marked `Fixed defect` failed on the code first red-teamed; all pass now.

#[path = "agent_support/mod.rs"]
mod support;

use std::collections::VecDeque;

use rein_engine::agent::{estimate_tokens, AgentOptions, RunOutcome, Transcript, MAX_RESULT_CHARS};
use rein_engine::checks::{evaluate, MemWorld, TraceEntry};
use rein_engine::gate::AllowAll;
use rein_models::{Model, ScriptedModel};
use rein_protocol::{ChatMessage, Completion, CompletionRequest, Prompt};
use serde_json::json;
use support::{
    copy_dir, finish_line, gold_text, line, missions_dir, read_summary, write_summary, Harness,
    PromptRecorder,
};

const NOTES: &str = "notes/meeting-notes.md";
const TASKS: &str = "data/tasks.csv";

// ---------------------------------------------------------------------------------------------
// Harness: desk_task with a meeting-notes file we choose, and a model that follows the cut notes.
// ---------------------------------------------------------------------------------------------

/// desk_task with `extra` appended to the meeting notes (the real notes stay first, so the
/// gold report still passes every content check).
/// `n` lines of meeting-note filler, about 56 characters each.
fn action_items(n: usize) -> String {
    (0..n)
        .map(|i| format!("- Action item {i:03}: follow up with the team next week.\n"))
        .collect()
}

fn notes_harness(extra: &str) -> Harness {
    harness_with(|mdir| {
        let notes = mdir.join("fixtures").join(NOTES);
        let mut text = std::fs::read_to_string(&notes).unwrap();
        text.push_str(extra);
        std::fs::write(&notes, text).unwrap();
    })
}

fn harness_with(edit: impl FnOnce(&std::path::Path)) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let mdir = dir.path().join("mission");
    copy_dir(&missions_dir().join("desk_task"), &mdir);
    edit(&mdir);
    Harness::load(dir, mdir.join("mission.json"))
}

fn notes_text(h: &Harness) -> String {
    std::fs::read_to_string(h.workspace.join(NOTES)).unwrap()
}

fn total_lines(h: &Harness) -> u64 {
    notes_text(h).split_inclusive('\n').count() as u64
}

/// The text of one prompt's messages joined, unescaped (what the model reads).
fn prompt_text(req: &CompletionRequest) -> String {
    match &req.prompt {
        Prompt::Chat { messages } => messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n---\n"),
        Prompt::Raw { text } => text.clone(),
    }
}

/// The last message of a prompt (the newest result and notes).
fn last_message(req: &CompletionRequest) -> String {
    match &req.prompt {
        Prompt::Chat { messages } => messages
            .last()
            .map(|m| m.content.clone())
            .unwrap_or_default(),
        Prompt::Raw { text } => text.clone(),
    }
}

/// A model that plays `plan` in order, but after a read of `follow` whose result says
/// "Call read_file with start_line=N to read on" first reads `follow` from line N: an honest
/// model reading a long input in the parts it is told to.
struct Follower {
    inner: ScriptedModel,
    plan: VecDeque<String>,
    follow: Option<String>,
    pub requests: Vec<CompletionRequest>,
    /// How many continuation reads it made.
    pub continued: usize,
}

impl Follower {
    fn new(plan: &str, follow: Option<&str>) -> Follower {
        let filler = finish_line().repeat(400);
        Follower {
            inner: ScriptedModel::from_str_named(&filler, std::path::Path::new("follower.jsonl"))
                .unwrap(),
            plan: plan.lines().map(|l| l.to_string() + "\n").collect(),
            follow: follow.map(str::to_string),
            requests: Vec::new(),
            continued: 0,
        }
    }

    fn next_text(&mut self, req: &CompletionRequest) -> String {
        if let Some(path) = &self.follow {
            let last = last_message(req);
            let about_it = last.contains(&format!("\"path\":\"{path}\""));
            let marker = "Call read_file with start_line=";
            if about_it {
                if let Some(i) = last.rfind(marker) {
                    let digits: String = last[i + marker.len()..]
                        .chars()
                        .take_while(char::is_ascii_digit)
                        .collect();
                    if let Ok(n) = digits.parse::<u64>() {
                        self.continued += 1;
                        assert!(self.continued < 200, "follower looped");
                        return line("read_file", json!({"path": path, "start_line": n}));
                    }
                }
            }
        }
        self.plan.pop_front().unwrap_or_else(finish_line)
    }
}

impl Model for Follower {
    fn identity(&self) -> &rein_protocol::ModelIdentity {
        self.inner.identity()
    }
    fn complete(
        &mut self,
        request: &CompletionRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> rein_models::Result<Completion> {
        self.requests.push(request.clone());
        let mut c = self.inner.complete(request, on_text)?;
        c.text = self.next_text(request).trim_end().to_string();
        Ok(c)
    }
    fn choose(
        &mut self,
        request: &rein_protocol::ChooseRequest,
    ) -> rein_models::Result<rein_protocol::ChooseReply> {
        self.inner.choose(request)
    }
}

fn run_model(
    h: &Harness,
    model: &mut dyn Model,
    tweak: impl FnOnce(&mut AgentOptions),
) -> RunOutcome {
    let (outcome, _) = h.run_gated(model, &mut AllowAll, |o| {
        o.limits.attempts = 1;
        tweak(o);
    });
    outcome
}

fn inputs_read(outcome: &RunOutcome) -> (bool, String) {
    support::check_facts(outcome, "inputs-read")
}

/// Reads the other two inputs whole and the notes whole (to be followed), writes the gold
/// report, reads it back, finishes.
fn honest_plan() -> String {
    line("read_file", json!({"path": "notes/overview.md"}))
        + &line("read_file", json!({"path": NOTES}))
        + &line("read_file", json!({"path": TASKS}))
        + &write_summary(&gold_text())
        + &read_summary()
        + &finish_line()
}

/// Every result message of a read of `path` the model was shown, in order.
fn shown_reads(requests: &[CompletionRequest], path: &str) -> Vec<String> {
    let mut out = Vec::new();
    for r in requests {
        let last = last_message(r);
        if last.contains("(read_file): executed") && last.contains(&format!("\"path\":\"{path}\""))
        {
            out.push(last);
        }
    }
    out
}

/// Lines `[first, last]` each shown read of `path` gave whole, from the result JSON (a line
/// cut inside does not count), checked against the file: every such line must appear in the
/// content exactly as on disk.
fn lines_really_shown(requests: &[CompletionRequest], path: &str, file: &str) -> Vec<u64> {
    let file_lines: Vec<&str> = file.split_inclusive('\n').collect();
    let mut seen = vec![false; file_lines.len()];
    for msg in shown_reads(requests, path) {
        let body = &msg[msg.find('\n').unwrap() + 1..];
        // Only a result the prompt did not clip is parseable JSON.
        let Ok(v) = serde_json::from_str::<serde_json::Value>(body.lines().next().unwrap()) else {
            continue;
        };
        let content = v["content"].as_str().unwrap();
        let start = v["start_line"].as_u64().unwrap() as usize;
        for (k, l) in content.split_inclusive('\n').enumerate() {
            let n = start + k;
            if file_lines.get(n - 1) == Some(&l) {
                seen[n - 1] = true;
            }
        }
    }
    seen.iter()
        .enumerate()
        .filter(|(_, s)| !**s)
        .map(|(i, _)| i as u64 + 1)
        .collect()
}

/// The honest follower on `extra` notes: the judge must credit the notes exactly when every
/// line was shown whole, and every shown result must fit the prompt unclipped.
fn follow_and_check(extra: &str) -> (Harness, Follower, RunOutcome) {
    let h = notes_harness(extra);
    let mut model = Follower::new(&honest_plan(), Some(NOTES));
    let outcome = run_model(&h, &mut model, |_| {});
    for msg in shown_reads(&model.requests, NOTES) {
        assert!(
            !msg.contains("more characters not shown"),
            "a read result was clipped by the prompt: {msg}"
        );
    }
    (h, model, outcome)
}

// ---------------------------------------------------------------------------------------------
// Attacks on the cut (fit_read_result) through whole runs.
// ---------------------------------------------------------------------------------------------

/// JSON escaping doubles quotes and backslashes and makes a control character six characters:
/// a file of 4,500 raw characters is far over 6,000 in the result. Regression: cut at a line,
/// never clipped, and credited only once a follower has read every line.
#[test]
fn escaping_heavy_lines_are_cut_by_their_json_length_and_credited_only_when_all_shown() {
    let mut extra = String::new();
    for i in 0..120 {
        extra.push_str(&format!(
            "- q{i:03} \"{}\" \\{}\\ \u{1}\u{2}\u{7f}\t end\n",
            "\"".repeat(10),
            "\\".repeat(6)
        ));
    }
    let raw = extra.chars().count();
    assert!(raw < MAX_RESULT_CHARS, "{raw}");
    let (h, model, outcome) = follow_and_check(&extra);
    assert!(model.continued >= 1, "the read was never cut");
    let unseen = lines_really_shown(&model.requests, NOTES, &notes_text(&h));
    assert!(unseen.is_empty(), "lines never shown: {unseen:?}");
    let (passed, facts) = inputs_read(&outcome);
    assert!(passed, "{facts}");
    assert!(facts.contains("line ranges"), "{facts}");
}

/// Same, but without the follower reading on: the first cut read alone must not count.
#[test]
fn escaping_heavy_notes_read_once_are_not_read_in_full() {
    let mut extra = String::new();
    for i in 0..120 {
        extra.push_str(&format!("- q{i:03} \"{}\"\u{1}\n", "\\\"".repeat(12)));
    }
    let h = notes_harness(&extra);
    let mut model = Follower::new(&honest_plan(), None);
    let outcome = run_model(&h, &mut model, |_| {});
    let (passed, facts) = inputs_read(&outcome);
    assert!(!passed, "{facts}");
    assert!(facts.contains("read only in part"), "{facts}");
}

/// CRLF line endings: `\r\n` takes four characters in the JSON. Lines are still whole lines of
/// the file and the count lines up with what read_file numbers.
#[test]
fn crlf_notes_are_cut_at_whole_lines_and_credited_when_covered() {
    let mut extra = String::new();
    for i in 0..200 {
        extra.push_str(&format!(
            "- CRLF action item {i:03}: follow up next week.\r\n"
        ));
    }
    let (h, model, outcome) = follow_and_check(&extra);
    assert!(model.continued >= 1);
    for msg in shown_reads(&model.requests, NOTES) {
        let v: serde_json::Value =
            serde_json::from_str(msg[msg.find('\n').unwrap() + 1..].lines().next().unwrap())
                .unwrap();
        if v["truncated"] == json!(true) {
            let c = v["content"].as_str().unwrap();
            assert!(c.ends_with('\n'), "cut mid-line: {c:?}");
            assert!(v.get("cut_inside_line").is_none(), "{v}");
        }
    }
    assert!(lines_really_shown(&model.requests, NOTES, &notes_text(&h)).is_empty());
    let (passed, facts) = inputs_read(&outcome);
    assert!(passed, "{facts}");
}

/// Multi-byte UTF-8 (accents, CJK, emoji, a combining mark): the cap counts characters, so a
/// cut must not split one and must count them as the prompt does.
#[test]
fn multibyte_lines_are_counted_in_characters_and_cut_between_lines() {
    let mut extra = String::new();
    for i in 0..150 {
        extra.push_str(&format!(
            "- 項目 {i:03}: café e\u{301} 🚀🚀 — «suivi» la semaine prochaine.\n"
        ));
    }
    let (h, model, outcome) = follow_and_check(&extra);
    assert!(model.continued >= 1);
    assert!(lines_really_shown(&model.requests, NOTES, &notes_text(&h)).is_empty());
    let (passed, facts) = inputs_read(&outcome);
    assert!(passed, "{facts}");
}

/// A last line without a trailing newline that alone is longer than the room (but shorter than
/// read_file's 12,000): it is cut inside, so it is never shown whole and the notes can never
/// be credited, however the model reads. No panic, no credit.
#[test]
fn a_last_line_longer_than_the_prompt_shows_is_never_credited() {
    let mut extra = String::new();
    for i in 0..40 {
        extra.push_str(&format!("- item {i:03}: follow up next week.\n"));
    }
    extra.push_str(&"z".repeat(8_000)); // the last line, no newline
    let h = notes_harness(&extra);
    let total = total_lines(&h);
    // The model reads the head, then the last line by itself, then once more from it.
    let plan = line("read_file", json!({"path": "notes/overview.md"}))
        + &line(
            "read_file",
            json!({"path": NOTES, "start_line": 1, "end_line": total - 1}),
        )
        + &line("read_file", json!({"path": NOTES, "start_line": total}))
        + &line(
            "read_file",
            json!({"path": NOTES, "start_line": total, "end_line": total}),
        )
        + &line("read_file", json!({"path": TASKS}))
        + &write_summary(&gold_text())
        + &read_summary()
        + &finish_line();
    let mut model = Follower::new(&plan, None);
    let outcome = run_model(&h, &mut model, |_| {});
    let reads = shown_reads(&model.requests, NOTES);
    assert!(
        reads.iter().any(|m| m.contains("Cut inside line")),
        "{reads:?}"
    );
    let (passed, facts) = inputs_read(&outcome);
    assert!(!passed, "{facts}");
}

/// Reads by paths that name the same file (`./notes/…`, `notes//…`) combine with each other,
/// and a read of another file with the same line count never does.
#[test]
fn ranges_by_equivalent_paths_combine_and_other_files_do_not() {
    let extra = action_items(200);
    let h = notes_harness(&extra);
    let total = total_lines(&h);
    let half = total / 2;
    let base = line("read_file", json!({"path": "notes/overview.md"}))
        + &line("read_file", json!({"path": TASKS}));
    let tail = write_summary(&gold_text()) + &read_summary() + &finish_line();
    // Half by "./", half by "//": covers it.
    let plan = base.clone()
        + &line(
            "read_file",
            json!({"path": format!("./{NOTES}"), "start_line": 1, "end_line": half}),
        )
        + &line(
            "read_file",
            json!({"path": "notes//meeting-notes.md", "start_line": half + 1}),
        )
        + &tail;
    let mut model = Follower::new(&plan, Some("notes//meeting-notes.md"));
    let outcome = run_model(&h, &mut model, |_| {});
    let (passed, facts) = inputs_read(&outcome);
    // Each half must itself fit: else the follower read on and the test says nothing.
    assert!(passed, "{facts}");

    // Half of the notes and "the other half" from a copy of it the model made elsewhere.
    let h = notes_harness(&extra);
    let copy = notes_text(&h);
    let plan =
        base + &line(
            "create_file",
            json!({"path": "scratch/copy.md", "content": copy}),
        ) + &line(
            "read_file",
            json!({"path": NOTES, "start_line": 1, "end_line": half}),
        ) + &line(
            "read_file",
            json!({"path": "scratch/copy.md", "start_line": half + 1}),
        ) + &tail;
    let mut model = Follower::new(&plan, None);
    let outcome = run_model(&h, &mut model, |_| {});
    let (passed, facts) = inputs_read(&outcome);
    assert!(!passed, "{facts}");
}

/// Invalid and refused range reads (end before start, start past the end, line 0) and a read
/// denied by policy prove nothing and do not panic; line 0 reads from line 1.
#[test]
fn invalid_refused_and_zero_ranges_prove_nothing() {
    let extra = action_items(200);
    let h = notes_harness(&extra);
    let total = total_lines(&h);
    let plan = line("read_file", json!({"path": "notes/overview.md"}))
        + &line("read_file", json!({"path": TASKS}))
        + &line(
            "read_file",
            json!({"path": NOTES, "start_line": 50, "end_line": 10}),
        )
        + &line("read_file", json!({"path": NOTES, "start_line": total + 1}))
        + &line("read_file", json!({"path": NOTES, "start_line": u64::MAX}))
        + &line(
            "read_file",
            json!({"path": NOTES, "start_line": 0, "end_line": 0}),
        )
        + &line(
            "read_file",
            json!({"path": NOTES, "start_line": total, "end_line": u64::MAX}),
        )
        + &write_summary(&gold_text())
        + &read_summary()
        + &finish_line();
    let mut model = Follower::new(&plan, None);
    let outcome = run_model(&h, &mut model, |_| {});
    let (passed, facts) = inputs_read(&outcome);
    assert!(!passed, "{facts}");
}

/// A file over read_file's 8 MiB: every read is `file_truncated`, so no range is recorded and
/// no set of ranges reads it in full (total_lines counts only the prefix).
#[test]
fn a_file_larger_than_read_file_loads_is_never_read_in_full_by_ranges() {
    let line_text = "- Action item: follow up with the team next week, again.\n";
    let n = (9 * 1024 * 1024) / line_text.len() + 1;
    let h = notes_harness(&line_text.repeat(n));
    let plan = line("read_file", json!({"path": "notes/overview.md"}))
        + &line("read_file", json!({"path": TASKS}))
        + &line(
            "read_file",
            json!({"path": NOTES, "start_line": 1, "end_line": 20}),
        )
        + &line(
            "read_file",
            json!({"path": NOTES, "start_line": 21, "end_line": 40}),
        )
        + &write_summary(&gold_text())
        + &read_summary()
        + &finish_line();
    let mut model = Follower::new(&plan, None);
    let outcome = run_model(&h, &mut model, |_| {});
    let (passed, facts) = inputs_read(&outcome);
    assert!(!passed, "{facts}");
    let reads = shown_reads(&model.requests, NOTES);
    assert!(
        reads.iter().all(|m| m.contains("file_truncated")),
        "{reads:?}"
    );
}

/// The same range read many times, overlapping ranges out of order and a range repeated after
/// the file was covered: the credit lands on the read that completed the cover.
#[test]
fn repeated_and_unordered_ranges_credit_the_completing_read() {
    let extra = action_items(200);
    let h = notes_harness(&extra);
    let total = total_lines(&h);
    let third = total / 3;
    let mut plan = line("read_file", json!({"path": "notes/overview.md"}))
        + &line("read_file", json!({"path": TASKS}));
    for _ in 0..5 {
        plan += &line(
            "read_file",
            json!({"path": NOTES, "start_line": 2 * third, "end_line": total}),
        );
    }
    plan += &line(
        "read_file",
        json!({"path": NOTES, "start_line": third, "end_line": 2 * third + 1}),
    );
    plan += &line(
        "read_file",
        json!({"path": NOTES, "start_line": 1, "end_line": third}),
    );
    plan += &(write_summary(&gold_text()) + &read_summary() + &finish_line());
    let mut model = Follower::new(&plan, None);
    let outcome = run_model(&h, &mut model, |_| {});
    let (passed, facts) = inputs_read(&outcome);
    assert!(passed, "{facts}");
    // The 7 calls of the model before the completing read plus it: call 9 is the last range.
    assert!(
        facts.contains("in 7 line ranges, the last at call 9"),
        "{facts}"
    );
}

// ---------------------------------------------------------------------------------------------
// What the model is told about a cut read.
// ---------------------------------------------------------------------------------------------

/// Regression (was a defect in an earlier state of the change: `progress_note` counted any
/// executed read, so a cut read was "every input was read"): after a read the prompt cut, the
/// progress note must not call the input read, and must say to read on.
#[test]
fn progress_note_does_not_call_a_cut_read_done() {
    let extra = action_items(200);
    let h = notes_harness(&extra);
    // The notes last, so the note after them is the one that matters.
    let plan = line("read_file", json!({"path": "notes/overview.md"}))
        + &line("read_file", json!({"path": TASKS}))
        + &line("read_file", json!({"path": NOTES}))
        + &write_summary(&gold_text())
        + &read_summary()
        + &finish_line();
    let mut model = Follower::new(&plan, None);
    let outcome = run_model(&h, &mut model, |_| {});
    let (passed, _) = inputs_read(&outcome);
    assert!(!passed);
    let after = last_message(&model.requests[3]);
    assert!(after.contains("Cut after line"), "{after}");
    assert!(
        after.contains("read the rest of notes/meeting-notes.md"),
        "{after}"
    );
    assert!(
        !after.contains("every input was read"),
        "progress note contradicts the cut: {}",
        &after[after.find("Progress:").unwrap_or(0)..]
    );
}

// ---------------------------------------------------------------------------------------------
// Lever table-facts: the column totals come first in the result and take the content's room.
// ---------------------------------------------------------------------------------------------

/// tasks.csv with `columns` more numeric columns named by `name_len` characters. Rein's totals
/// list at most 20 columns (TOTALS_MAX_COLUMNS), so only long names make them large: with 60
/// columns of 48 they (~2,900 characters) stay and leave room for a line or so a read; with
/// 20 of 180 they are over half a result and are left out.
fn wide_csv_harness(columns: usize, name_len: usize, extra_rows: usize) -> Harness {
    harness_with(|mdir| {
        let csv = mdir.join("fixtures").join(TASKS);
        let text = std::fs::read_to_string(&csv).unwrap();
        let mut out = String::new();
        for (i, l) in text.lines().enumerate() {
            out.push_str(l);
            for c in 0..columns {
                if i == 0 {
                    out.push_str(&format!(",{}_{c:03}", "m".repeat(name_len)));
                } else {
                    out.push_str(&format!(",{}", (i * 7 + c) % 97));
                }
            }
            out.push('\n');
        }
        for r in 0..extra_rows {
            out.push_str(&format!("Extra task {r:03},Tom,planned,1"));
            for c in 0..columns {
                out.push_str(&format!(",{}", (r + c) % 97));
            }
            out.push('\n');
        }
        std::fs::write(&csv, out).unwrap();
    })
}

/// Regression (a defect in an earlier state of the change: totals with no room left emptied
/// the content, said "that line alone is longer" and were still clipped): with table-facts,
/// a table whose totals leave no room is cut at a line with the totals left out, never clipped,
/// and credited exactly when every line was shown whole.
#[test]
fn table_facts_larger_than_the_room_leave_room_for_lines() {
    for (columns, name_len, rows) in [(60, 48, 40), (25, 95, 60)] {
        let h = wide_csv_harness(columns, name_len, rows);
        let raw = std::fs::read_to_string(h.workspace.join(TASKS)).unwrap();
        let plan = line("read_file", json!({"path": "notes/overview.md"}))
            + &line("read_file", json!({"path": NOTES}))
            + &line("read_file", json!({"path": TASKS}))
            + &write_summary(&gold_text())
            + &read_summary()
            + &finish_line();
        let mut model = Follower::new(&plan, Some(TASKS));
        let outcome = run_model(&h, &mut model, |o| o.levers.table_facts = true);
        let reads = shown_reads(&model.requests, TASKS);
        assert!(reads.len() >= 2, "set-up: the read was not cut: {reads:?}");
        for r in &reads {
            assert!(!r.contains("more characters not shown"), "clipped: {r}");
            assert!(
                !r.contains("that line alone is longer"),
                "false reason: {r}"
            );
        }
        let unseen = lines_really_shown(&model.requests, TASKS, &raw);
        let (passed, facts) = inputs_read(&outcome);
        assert_eq!(passed, unseen.is_empty(), "unseen {unseen:?}: {facts}");
        assert!(passed, "{columns}: {facts}");
    }
}

/// Fixed defect: when `fit_read_result` leaves the column totals out and then every line of the
/// result fits, it still marks the read `truncated: true` and says "Cut after line 7 of 7 …
/// Call read_file with start_line=8 to read on": a false cut, and the read it asks for is
/// refused (the file has 7 lines). (The judge still credits the read: lines [1,7,7].)
#[test]
fn totals_left_out_then_every_line_fits_is_not_called_a_cut() {
    let h = wide_csv_harness(60, 48, 0);
    let plan = line("read_file", json!({"path": TASKS})) + &finish_line();
    let mut model = Follower::new(&plan, Some(TASKS));
    let _ = run_model(&h, &mut model, |o| o.levers.table_facts = true);
    let read = last_message(&model.requests[1]);
    assert!(
        read.contains("column totals were left out"),
        "set-up: {read}"
    );
    let v: serde_json::Value =
        serde_json::from_str(read[read.find('\n').unwrap() + 1..].lines().next().unwrap()).unwrap();
    let (end, total) = (
        v["end_line"].as_u64().unwrap(),
        v["total_lines"].as_u64().unwrap(),
    );
    assert_eq!(end, total, "set-up: not every line fits");
    assert!(
        v["truncated"] == json!(false) && !read.contains(&format!("start_line={}", total + 1)),
        "a whole file called cut: {}",
        v["note"]
    );
}

/// Fixed defect: when `fit_read_result` leaves the column totals out it tells the model "call
/// table_stats for a column's figures", but `table_stats` is offered only with lever
/// facts-tools (off by default, and desk_task does not list it): the model is pointed to a
/// tool it does not have, and a call of it is invalid.
#[test]
fn the_totals_left_out_note_names_only_an_offered_tool() {
    let h = wide_csv_harness(25, 95, 0);
    let plan = line("read_file", json!({"path": TASKS}))
        + &line("table_stats", json!({"path": TASKS, "column": "hours"}))
        + &finish_line();
    let mut model = Follower::new(&plan, None);
    let _ = run_model(&h, &mut model, |o| {
        o.levers.table_facts = true;
        o.levers.facts_tools = false;
    });
    let read = last_message(&model.requests[1]);
    assert!(read.contains("column totals were left out"), "{read}");
    let system = prompt_text(&model.requests[0]);
    let offered = system.contains("table_stats");
    let after_call = last_message(&model.requests[2]);
    // model's call of it comes back invalid.
    assert!(
        offered || !read.contains("table_stats"),
        "the note names table_stats, which this run does not offer; its call came back: {}",
        &after_call[..after_call.len().min(300)]
    );
}

/// Fixed defect: `add_read_facts` remembers the column totals (`remember_table_facts`) before
/// `fit_read_result` leaves them out, so a monotone retry's feedback says "Figures your reads
/// of tables returned earlier in this run" and lists totals no read ever showed the model
/// (facts.rs: "they are what the model saw"). Misreport of what the model was shown.
#[test]
fn totals_left_out_of_every_read_are_not_recalled_as_returned() {
    let h = wide_csv_harness(25, 95, 0);
    // Attempt 1: reads the table (totals left out), writes a wrong total, finishes.
    let plan = line("read_file", json!({"path": "notes/overview.md"}))
        + &line("read_file", json!({"path": NOTES}))
        + &line("read_file", json!({"path": TASKS}))
        + &write_summary(&support::wrong_total_text())
        + &read_summary()
        + &finish_line();
    let mut model = Follower::new(&plan, None);
    let (_outcome, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.limits.attempts = 2;
        o.levers.table_facts = true;
        o.levers.monotone_attempts = true;
    });
    let shown = shown_reads(&model.requests, TASKS);
    assert!(!shown.is_empty());
    assert!(
        shown.iter().all(|r| !r.contains("column_totals")),
        "set-up: a read showed the totals"
    );
    let later: Vec<String> = model.requests.iter().map(prompt_text).collect();
    let recalled = later
        .iter()
        .find(|p| p.contains("Figures your reads of tables returned earlier"));
    assert!(
        recalled.is_none(),
        "totals never shown are recalled as returned: {}",
        recalled.map_or("", |p| &p[p.find("Figures your reads").unwrap()..]
            [..400.min(p.len() - p.find("Figures your reads").unwrap())])
    );
}

// ---------------------------------------------------------------------------------------------
// Lever inputs-first: Rein's own reads before the first step.
// ---------------------------------------------------------------------------------------------

/// Notes of about 4,000 raw characters (under the lever's 6,000 for all inputs together) whose
/// JSON is over 6,000: a line-ful of quotes.
fn quoted_notes() -> String {
    let mut extra = String::new();
    for i in 0..70 {
        extra.push_str(&format!("- \"{i:02}\" {}\n", "\"".repeat(40)));
    }
    extra
}

/// Regression (a defect in an earlier state of the change, where `read_inputs_first` did not
/// call `fit_read_result`): Rein's own read before the first step of notes under the lever's
/// 6,000 raw characters but over 6,000 in JSON must reach the model cut at a line, never
/// clipped mid-JSON, and is not a read in full.
#[test]
fn inputs_first_reads_are_cut_at_a_line_too() {
    let extra = quoted_notes();
    let h = notes_harness(&extra);
    let inputs = support::workspace_chars(&h, &["notes/overview.md", NOTES, TASKS]);
    assert!(inputs <= 6_000, "{inputs}: the lever would not apply");
    let plan = write_summary(&gold_text()) + &read_summary() + &finish_line();
    let mut model = PromptRecorder::new(&plan, "inputs_first_quotes.jsonl");
    let outcome = run_model(&h, &mut model, |o| o.levers.inputs_first = true);
    let first = prompt_text(&model.requests[0]);
    assert!(
        first.contains("made for you before your first step"),
        "lever did not apply"
    );
    let (passed, facts) = inputs_read(&outcome);
    assert!(!passed, "{facts}");
    assert!(
        first.contains("Call read_file with start_line="),
        "no read-on note"
    );
    assert!(
        !first.contains("more characters not shown"),
        "Rein's read was clipped mid-JSON: {}",
        &first[first
            .find("more characters not shown")
            .unwrap()
            .saturating_sub(200)..]
    );
}

/// Regression (same earlier defect, the note's side): after inputs-first's cut read the
/// progress note must not say "every input was read".
#[test]
fn inputs_first_progress_does_not_call_a_clipped_read_done() {
    let h = notes_harness(&quoted_notes());
    let plan = write_summary(&gold_text()) + &read_summary() + &finish_line();
    let mut model = PromptRecorder::new(&plan, "inputs_first_quotes.jsonl");
    let outcome = run_model(&h, &mut model, |o| o.levers.inputs_first = true);
    let (passed, _) = inputs_read(&outcome);
    assert!(!passed);
    let first = prompt_text(&model.requests[0]);
    assert!(
        !first.contains("every input was read"),
        "{}",
        &first[first.rfind("Progress:").unwrap_or(0)..]
    );
}

// ---------------------------------------------------------------------------------------------
// The judge on traces (read_whole_at through `evaluate`).
// ---------------------------------------------------------------------------------------------

fn judge_trace(trace: &[TraceEntry]) -> (bool, String) {
    let h = harness_with(|_| {});
    let mut w = MemWorld::new();
    for p in &h.contract.mission.inputs {
        w.set_file(p, std::fs::read_to_string(h.workspace.join(p)).unwrap());
    }
    w.set_file("out/summary.md", gold_text());
    let v = evaluate(&h.contract, &w, trace, None);
    let c = v.checks.iter().find(|c| c.id == "inputs-read").unwrap();
    (c.passed, c.facts.join("; "))
}

fn whole(path: &str) -> TraceEntry {
    TraceEntry::new("read_file", Some(path), "executed", false).with_full_read(true)
}

fn range(path: &str, outcome: &str, lines: [u64; 3]) -> TraceEntry {
    TraceEntry::new("read_file", Some(path), outcome, false).with_lines_shown(Some(lines))
}

fn write() -> TraceEntry {
    TraceEntry::new("create_file", Some("out/summary.md"), "executed", true)
}

/// Ranges seen at another length start over, a denied/invalid/held range is no evidence, a
/// replayed one is, and a range recorded after the deliverable was written is too late.
#[test]
fn judge_ranges_edge_cases() {
    let base = vec![whole("notes/overview.md"), whole(TASKS)];
    let with = |mut extra: Vec<TraceEntry>| {
        let mut t = base.clone();
        t.append(&mut extra);
        t
    };
    // Covered, out of order.
    let (ok, f) = judge_trace(&with(vec![
        range(NOTES, "executed", [6, 10, 10]),
        range(NOTES, "executed", [1, 5, 10]),
        write(),
    ]));
    assert!(ok, "{f}");
    // Replayed counts as executed.
    let (ok, f) = judge_trace(&with(vec![
        range(NOTES, "replayed", [1, 5, 10]),
        range(NOTES, "executed", [6, 10, 10]),
        write(),
    ]));
    assert!(ok, "{f}");
    for bad in [
        "denied",
        "invalid",
        "approval-required",
        "budget-exhausted",
        "id-conflict",
    ] {
        let (ok, f) = judge_trace(&with(vec![
            range(NOTES, bad, [1, 5, 10]),
            range(NOTES, "executed", [6, 10, 10]),
            write(),
        ]));
        assert!(!ok, "{bad}: {f}");
    }
    // A/B/A lengths: the version with 12 lines in between starts the cover over.
    let (ok, f) = judge_trace(&with(vec![
        range(NOTES, "executed", [1, 5, 10]),
        range(NOTES, "executed", [1, 6, 12]),
        range(NOTES, "executed", [6, 10, 10]),
        write(),
    ]));
    assert!(!ok, "{f}");
    // Completed after the write: too late.
    let (ok, f) = judge_trace(&with(vec![
        range(NOTES, "executed", [1, 5, 10]),
        write(),
        range(NOTES, "executed", [6, 10, 10]),
    ]));
    assert!(!ok, "{f}");
    assert!(f.contains(NOTES), "{f}");
}

/// Fixed defect (hardening, not reachable by the model's own tools in one run without failing
/// `inputs-unchanged`): the cover is combined across reads without asking whether the file
/// changed between them; only its line count is compared. A change of the input between
/// two range reads that keeps the line count (the model's own `replace_file` of an input
/// here) still counts as the input read in full, though no version of it was ever shown
/// whole. Recording the file's SHA-256 with `lines_shown` (or starting over at any executed
/// change of the path) would close it.
#[test]
fn a_change_between_ranges_starts_the_cover_over() {
    let base = vec![whole("notes/overview.md"), whole(TASKS)];
    let mut t = base;
    t.push(range(NOTES, "executed", [1, 5, 10]));
    t.push(TraceEntry::new(
        "replace_file",
        Some(NOTES),
        "executed",
        true,
    ));
    t.push(range(NOTES, "executed", [6, 10, 10]));
    t.push(write());
    let (ok, f) = judge_trace(&t);
    assert!(!ok, "{f}");
}

/// A hand-made trace (a journal or case file is JSON) with lines_shown out of range must not
/// panic the judge nor credit: `[0, 10, 10]` names a line 0, `[1, u64::MAX, u64::MAX]`
/// overflows `covered + 1`.
#[test]
fn absurd_line_numbers_neither_panic_nor_credit_more_than_they_say() {
    let base = vec![whole("notes/overview.md"), whole(TASKS)];
    let mut t = base.clone();
    t.push(range(NOTES, "executed", [1, u64::MAX, u64::MAX]));
    t.push(range(NOTES, "executed", [u64::MAX, u64::MAX, u64::MAX]));
    t.push(write());
    let r = std::panic::catch_unwind(|| judge_trace(&t));
    assert!(r.is_ok(), "the judge panicked on u64::MAX line numbers");
    // first > last: an empty range.
    let mut t = base;
    t.push(range(NOTES, "executed", [9, 2, 10]));
    t.push(range(NOTES, "executed", [1, 1, 10]));
    t.push(write());
    let (ok, f) = judge_trace(&t);
    assert!(!ok, "{f}");
}

// ---------------------------------------------------------------------------------------------
// Lever keep-inputs: the transcript's pinned reads.
// ---------------------------------------------------------------------------------------------

fn read_step(path: &str, size: usize) -> Vec<ChatMessage> {
    vec![
        ChatMessage::assistant(format!(
            "{{\"action\": \"read_file\", \"path\": \"{path}\"}}"
        )),
        ChatMessage::user(format!("{path}: {}", "t".repeat(size))),
    ]
}

fn other_step(i: usize, size: usize) -> Vec<ChatMessage> {
    vec![
        ChatMessage::assistant(format!("{{\"action\": \"list_dir\", \"n\": {i}}}")),
        ChatMessage::user("x".repeat(size)),
    ]
}

/// Pinned reads that alone exceed the budget: trimmed oldest first until the prompt fits,
/// the last step always kept, and the note lists every trimmed one.
#[test]
fn pinned_reads_alone_over_budget_trim_down_to_it() {
    let mut t = Transcript::new(vec![ChatMessage::system("rules")]);
    for i in 0..6 {
        t.push_pinned(
            read_step(&format!("notes/{i}.md"), 3_500),
            format!("step {}: read notes/{i}.md", i + 1),
            &format!("notes/{i}.md"),
        );
    }
    t.push(other_step(99, 100), "step 7: list_dir");
    let budget = 2_500;
    let n = t.fit(budget);
    let m = t.messages();
    assert!(estimate_tokens(&m) <= budget, "{}", estimate_tokens(&m));
    assert!(n >= 4, "{n}");
    let note = m.iter().find(|x| x.content.contains("trimmed")).unwrap();
    for i in 0..n {
        assert!(
            note.content.contains(&format!("read notes/{i}.md")),
            "{}",
            note.content
        );
    }
    // The newest pinned read survives.
    assert!(m.iter().any(|x| x.content.starts_with("notes/5.md")));
    assert_eq!(t.fit(budget), 0, "a second fit trims nothing more");
    // A last step that alone is over: everything else goes, it stays.
    let mut t = Transcript::new(vec![ChatMessage::system("rules")]);
    t.push_pinned(read_step("notes/a.md", 700), "step 1", "notes/a.md");
    t.push_pinned(read_step("notes/b.md", 20_000), "step 2", "notes/b.md");
    t.fit(1_000);
    let m = t.messages();
    assert!(m.iter().any(|x| x.content.starts_with("notes/b.md")));
    assert!(!m.iter().any(|x| x.content.starts_with("notes/a.md")));
}

/// A model reading the same input many times: only the newest is pinned, so the older copies
/// go first, and a fresh attempt keeps one copy, not all of them.
#[test]
fn the_same_input_read_many_times_is_kept_once() {
    let mut t = Transcript::new(vec![ChatMessage::system("rules")]);
    for i in 0..8 {
        t.push_pinned(
            read_step("notes/a.md", 700),
            format!("step {}: read a", i + 1),
            "notes/a.md",
        );
    }
    t.push(other_step(9, 10), "step 9");
    let per_read = estimate_tokens(&read_step("notes/a.md", 700));
    t.fit(per_read * 3);
    let copies = |t: &Transcript| {
        t.messages()
            .iter()
            .filter(|x| x.content.starts_with("notes/a.md"))
            .count()
    };
    assert!(copies(&t) >= 1, "the newest read of a must stay");
    t.restart();
    assert_eq!(copies(&t), 1, "a fresh attempt keeps exactly one copy");
    // Without any trim first: restart still keeps one copy.
    let mut t = Transcript::new(vec![ChatMessage::system("rules")]);
    for i in 0..4 {
        t.push_pinned(
            read_step("notes/a.md", 70),
            format!("step {i}"),
            "notes/a.md",
        );
    }
    t.restart();
    assert_eq!(copies(&t), 1);
    assert!(!t.messages().iter().any(|x| x.content.contains("trimmed")));
}

/// Fixed defect (lever gap): `pinned_input` compares the read's path with the mission's inputs as
/// strings (`i == path`), and `push_pinned` unpins an older read by string too, while the judge
/// and every other lever use `same_path`. A whole read of `./notes/overview.md` is an input
/// read for the judge but not pinned, so keep-inputs trims it like any step.
/// Seen end to end: with a small context, the notes read as `./…` are gone from the last
/// prompt while the same read by its plain name is kept.
#[test]
fn keep_inputs_pins_an_input_read_by_an_equivalent_path() {
    fn last_prompt_keeps_notes(path: &str) -> bool {
        let h = harness_with(|_| {});
        let mut plan = line("read_file", json!({"path": path}));
        for i in 0..30 {
            plan += &line(
                "list_dir",
                json!({"path": if i % 2 == 0 { "notes" } else { "data" }}),
            );
        }
        plan += &finish_line();
        let mut model = Follower::new(&plan, None);
        let _ = run_model(&h, &mut model, |o| {
            o.levers.keep_inputs = true;
            o.context_tokens = Some(2_600);
        });
        let last = prompt_text(model.requests.last().unwrap());
        assert!(
            last.contains("trimmed"),
            "no trim happened: raise the steps"
        );
        last.contains("Jonas reported that the catalogue supplier")
    }
    assert!(
        last_prompt_keeps_notes(NOTES),
        "plain path not kept: test set-up is off"
    );
    assert!(last_prompt_keeps_notes(&format!("./{NOTES}")));
}
