#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of lever `whole-reads` (commit 9488acd): a `read_file` call for a line range of a
//! short file runs as a whole-file read, with a note saying so. Each attack tries to get the
//! judge to credit a read the model was not shown, to get past a policy or the workspace's
//! confinement through the pre-check, to make the lever loop, panic or hang, or to make the
//! note, the journal or the repeat accounting say something untrue. Every attack is kept;
//  the six that found a hole are marked `// Was a hole, mended:`.

#[path = "agent_support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};

use rein_engine::agent::{
    AgentOptions, CapHit, RunEnd, WorkspaceWorld, MAX_STEPS_WITHOUT_PROGRESS,
};
use rein_engine::checks::World;
use rein_engine::gate::{AllowAll, ApprovalDecision, ApprovalRequest, Approver, DenyAll};
use rein_engine::memory::{run_memory, MemoryRunEnv};
use rein_engine::mission::Mission;
use rein_engine::policy::Policy;
use rein_journal::{CallScope, Journal};
use rein_models::ScriptedModel;
use rein_workspace::Workspace;
use serde_json::{json, Value};
use support::{
    check_facts, desk_policy, finish_line, gold_text, line, outcomes, read_summary, user_messages,
    write_summary, Harness, PromptRecorder, Ran,
};

const NOTES: &str = "notes/meeting-notes.md";
const OVERVIEW: &str = "notes/overview.md";
const TASKS: &str = "data/tasks.csv";
const NOTE_MARK: &str = "Rein read all";

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

/// desk_task's reads with `second` as the second call, then the gold report written, read
/// back and finished (as the lever's own tests script it).
fn script(second: Value) -> String {
    line("read_file", json!({"path": OVERVIEW}))
        + &line("read_file", second)
        + &line("read_file", json!({"path": TASKS}))
        + &write_summary(&gold_text())
        + &read_summary()
        + &finish_line()
}

fn lever(whole_reads: bool) -> impl FnOnce(&mut AgentOptions) {
    move |o: &mut AgentOptions| {
        o.levers.whole_reads = whole_reads;
        o.limits.attempts = 1;
    }
}

fn run(h: Harness, script: &str, whole_reads: bool, policy: Policy) -> Ran {
    Ran::of(h, script, &mut AllowAll, policy, lever(whole_reads))
}

/// desk_task with extra files written straight into its workspace (not inputs).
fn with_files(files: &[(&str, &[u8])]) -> Harness {
    let h = Harness::new("desk_task");
    for (p, bytes) in files {
        let f = h.workspace.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, bytes).unwrap();
    }
    h
}

/// The step outcome of step `n` (from 1).
fn outcome_of(r: &Ran, n: usize) -> String {
    outcomes(&r.events)[n - 1].1.clone()
}

/// The JSON result of step `n` as request `request` shows it (`Null` when none is shown).
fn shown_json(r: &Ran, request: usize, n: usize) -> Value {
    let shown = r.shown_result(request, n, "read_file");
    match shown.find('{') {
        Some(start) => serde_json::Deserializer::from_str(&shown[start..])
            .into_iter::<Value>()
            .next()
            .and_then(Result::ok)
            .unwrap_or(Value::Null),
        None => Value::Null,
    }
}

/// The same call made with the lever off and on: the step-2 result each run shows (request
/// 2, right after the call), and both runs.
fn on_and_off(make: impl Fn() -> Harness, second: Value, policy: &str) -> (Ran, Ran) {
    let off = run(make(), &script(second.clone()), false, desk_policy(policy));
    let on = run(make(), &script(second), true, desk_policy(policy));
    (off, on)
}

// ---------------------------------------------------------------------------------------------
// 1. The judge and the note: credit and "read all" only for what the model was shown
// ---------------------------------------------------------------------------------------------

/// An approver that changes a workspace file while it is asked about the first read of it
/// (between Rein's size check and the tool's read), and puts the original back when it is
/// asked about the next call (the report's write), so the inputs end as they began.
struct Meddler {
    file: PathBuf,
    target: &'static str,
    during: Vec<u8>,
    original: Option<Vec<u8>>,
    restored: bool,
}

impl Meddler {
    fn new(ws: &Path, target: &'static str, during: Vec<u8>) -> Meddler {
        Meddler {
            file: ws.join(target),
            target,
            during,
            original: None,
            restored: false,
        }
    }
}

impl Approver for Meddler {
    fn decide(&mut self, request: &ApprovalRequest) -> ApprovalDecision {
        if request.tool == "read_file" && request.path == self.target && self.original.is_none() {
            self.original = Some(std::fs::read(&self.file).unwrap());
            std::fs::write(&self.file, &self.during).unwrap();
        } else if let (Some(original), false) = (&self.original, self.restored) {
            std::fs::write(&self.file, original).unwrap();
            self.restored = true;
        }
        ApprovalDecision::AllowOnce
    }
}

const ASK_NOTES: &str =
    "[[rule]]\ntool = \"read_file\"\npaths = [\"notes/meeting-notes.md\"]\naction = \"ask\"\n";

fn meddled(during: Vec<u8>) -> Ran {
    let h = Harness::new("desk_task");
    let mut approver = Meddler::new(&h.workspace, NOTES, during);
    let s = script(json!({"path": NOTES, "start_line": 7, "end_line": 7}));
    let r = Ran::of(h, &s, &mut approver, desk_policy(ASK_NOTES), lever(true));
    assert!(approver.original.is_some(), "the read was asked about");
    r
}

fn grown_notes() -> Vec<u8> {
    let mut text = std::fs::read_to_string(
        support::missions_dir()
            .join("desk_task/fixtures")
            .join(NOTES),
    )
    .unwrap();
    for i in 0..300 {
        text.push_str(&format!(
            "- Action item {i:03}: follow up with the team next week.\n"
        ));
    }
    text.into_bytes()
}

#[test]
fn a_file_grown_between_the_check_and_the_read_is_not_credited_as_read_whole() {
    // The notes grow past 16,000 bytes after Rein found them short and before the tool reads
    // them: the result is cut, and the judge must not count them read.
    // Since the fourteenth session a read policy asks about is not widened at all (Rein does
    // not look at a file before the gate unless policy lets read_file show it freely): the
    // model's one line runs as asked, and the judge still does not count the file read.
    let r = meddled(grown_notes());
    let result = shown_json(&r, 2, 2);
    assert_eq!(result["end_line"], json!(7), "{result}");
    let (passed, facts) = check_facts(&r.out, "inputs-read");
    assert!(!passed, "{facts}");
    assert!(
        facts.contains(&format!("{NOTES}: read only in part")),
        "{facts}"
    );
}

#[test]
fn the_read_all_note_matches_the_result_that_was_shown() {
    // Was a hole, mended: the note is worded from Rein's pre-check, not from the read that ran. A
    // file that changes between the two (grows past what is shown, shrinks, turns binary) gets a
    // note saying "Rein read all 10 lines ... needs no start_line" beside a result that is cut and
    // says "Call read_file with start_line=N to read on", or that has 3 lines, or none.
    let cases: [(&str, Vec<u8>); 3] = [
        ("grown", grown_notes()),
        ("shrunk", b"# Team meeting\nShort now.\nThe end.\n".to_vec()),
        ("binary", b"\x00\x01\x02 not text\n".to_vec()),
    ];
    let mut wrong = Vec::new();
    for (name, during) in cases {
        let r = meddled(during);
        let shown = r.shown_result(2, 2, "read_file");
        let result = shown_json(&r, 2, 2);
        if !shown.contains(NOTE_MARK) {
            continue;
        }
        let said = shown
            .split(NOTE_MARK)
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok());
        let whole = result["start_line"] == json!(1)
            && result["truncated"] == json!(false)
            && result["end_line"] == result["total_lines"];
        if !whole || said != result["total_lines"].as_u64() {
            wrong.push(format!("{name}: {shown}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "a note says the file was read whole where the result does not show it so:\n{}",
        wrong.join("\n---\n")
    );
}

#[test]
fn a_file_with_a_nul_byte_is_not_said_to_be_read_whole() {
    // Was a hole, mended: `widened_read` takes any UTF-8 as text, the tools take text without NUL
    // bytes (`rein_workspace::desk::is_text`). A short UTF-8 file with a NUL is widened, read_file
    // answers "binary, content not shown", and the note says "Rein read all 3 lines".
    let h = || with_files(&[("notes/odd.md", b"first\nsec\x00ond\nthird\n")]);
    let (off, on) = on_and_off(h, json!({"path": "notes/odd.md", "start_line": 2}), "");
    let result = shown_json(&on, 2, 2);
    assert_eq!(result["binary"], json!(true), "{result}");
    assert!(
        !on.shown_result(2, 2, "read_file").contains(NOTE_MARK),
        "{}",
        on.shown_result(2, 2, "read_file")
    );
    assert_eq!(
        off.shown_result(2, 2, "read_file"),
        on.shown_result(2, 2, "read_file")
    );
}

#[test]
fn odd_but_valid_text_is_read_whole_with_a_true_count_and_credited() {
    // CRLF, a lone CR, a BOM, no final newline, multi-byte text and an empty file: each
    // widened read shows the file whole, its note counts the lines the result counts.
    let files: [(&str, &[u8]); 6] = [
        ("odd/crlf.md", b"one\r\ntwo\r\nthree\r\n"),
        ("odd/cr.md", b"one\rtwo\rthree\nfour\n"),
        ("odd/bom.md", b"\xef\xbb\xbfone\ntwo\nthree\n"),
        ("odd/open.md", b"one\ntwo\nthree"),
        (
            "odd/wide.md",
            "\u{e9}t\u{e9}\n\u{65e5}\u{672c}\n\u{1f600}\u{1f600}\n".as_bytes(),
        ),
        ("odd/empty.md", b""),
    ];
    let h = with_files(&files);
    let mut s = String::new();
    for (p, _) in &files {
        s.push_str(&line("read_file", json!({"path": p, "start_line": 3})));
    }
    s.push_str(&finish_line());
    let r = run(h, &s, true, Policy::safe_default());
    for (i, (p, bytes)) in files.iter().enumerate() {
        let n = i + 1;
        let shown = r.shown_result(n, n, "read_file");
        let result = shown_json(&r, n, n);
        assert_eq!(outcome_of(&r, n), "executed", "{p}: {shown}");
        let text = std::str::from_utf8(bytes).unwrap();
        assert_eq!(result["content"], json!(text), "{p}: {shown}");
        assert_eq!(result["truncated"], json!(false), "{p}: {shown}");
        let total = text.split_inclusive('\n').count();
        assert_eq!(result["total_lines"], json!(total), "{p}: {shown}");
        if total >= 3 {
            // Line 3 exists: the range covers part of the file, which is widened.
            assert!(
                shown.contains(&format!("{NOTE_MARK} {total} lines of {p}")),
                "{p}: {shown}"
            );
        }
    }
}

#[test]
fn escaping_that_would_cut_the_shown_result_keeps_the_range() {
    // 2,400 bytes of text whose escaped form is well over the 6,000 shown characters: control
    // characters (six each), quotes and backslashes (two each). Never widened; the range read
    // runs as asked, and nothing is credited as whole.
    let ctl: String = "\u{1}".repeat(1_000) + "\n";
    let quotes = "\"\\".repeat(1_400) + "\n";
    let h = with_files(&[
        ("esc/ctl.md", format!("{ctl}{ctl}end\n").as_bytes()),
        ("esc/quotes.md", format!("{quotes}{quotes}end\n").as_bytes()),
    ]);
    let s = line("read_file", json!({"path": "esc/ctl.md", "start_line": 3}))
        + &line(
            "read_file",
            json!({"path": "esc/quotes.md", "start_line": 3}),
        )
        + &finish_line();
    let r = run(h, &s, true, Policy::safe_default());
    for n in 1..=2 {
        let shown = r.shown_result(n, n, "read_file");
        assert!(!shown.contains(NOTE_MARK), "{shown}");
        let result = shown_json(&r, n, n);
        assert_eq!(result["start_line"], json!(3), "{shown}");
        assert_eq!(result["content"], json!("end\n"), "{shown}");
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Policy: a denied read stays denied and says nothing more with the lever
// ---------------------------------------------------------------------------------------------

#[test]
fn a_denied_or_unapproved_read_shows_the_same_with_the_lever_as_without() {
    let secret = || with_files(&[("private/keys.md", b"alpha\nTOPSECRET-VALUE\ngamma\n")]);
    for second in [
        json!({"path": "private/keys.md", "start_line": 2, "end_line": 2}),
        json!({"path": "./private//keys.md", "start_line": 3}),
    ] {
        for policy in [
            "[[rule]]\ntool = \"read_file\"\npaths = [\"private/**\"]\naction = \"deny\"\n",
            "[[rule]]\ntool = \"*\"\npaths = [\"private\"]\naction = \"deny\"\n",
            "[[rule]]\ntool = \"read_file\"\npaths = [\"PRIVATE/*.md\"]\naction = \"deny\"\n",
        ] {
            let (off, on) = on_and_off(secret, second.clone(), policy);
            let shown = on.shown_result(2, 2, "read_file");
            assert_eq!(outcome_of(&on, 2), "denied", "{policy}: {shown}");
            assert!(!shown.contains("TOPSECRET"), "{shown}");
            assert!(!shown.contains(NOTE_MARK), "{shown}");
            assert!(!shown.contains("3 lines"), "{shown}");
            assert_eq!(off.shown_result(2, 2, "read_file"), shown, "{policy}");
            let prompt = on.model.prompts().join("\n");
            assert!(!prompt.contains("TOPSECRET"), "{policy}");
            assert!(!prompt.contains(NOTE_MARK), "{policy}");
        }
        // A read that asks, refused by the person: the run stops there, saying the same.
        let ask = "[[rule]]\ntool = \"read_file\"\npaths = [\"private/**\"]\naction = \"ask\"\n";
        let mut ends = Vec::new();
        for whole_reads in [false, true] {
            let r = Ran::of(
                secret(),
                &script(second.clone()),
                &mut DenyAll,
                desk_policy(ask),
                lever(whole_reads),
            );
            assert_ne!(outcome_of(&r, 2), "executed");
            let end = r.out.end.message();
            assert!(!end.contains("TOPSECRET"), "{end}");
            assert!(!end.contains(NOTE_MARK), "{end}");
            let prompt = r.model.prompts().join("\n");
            assert!(!prompt.contains("TOPSECRET"), "{prompt}");
            ends.push((outcome_of(&r, 2), end));
        }
        assert_eq!(ends[0], ends[1]);
    }
}

#[test]
fn the_journal_keeps_the_models_call_and_the_gate_records_the_call_that_ran() {
    let r = run(
        Harness::new("desk_task"),
        &script(json!({"path": NOTES, "start_line": 2, "end_line": 3})),
        true,
        Policy::safe_default(),
    );
    let trace = r.h.journal.run_trace(r.out.run).unwrap();
    let step = &trace.steps[1].step;
    assert_eq!(
        step.detail["parameters"],
        json!({"path": NOTES, "start_line": 2, "end_line": 3})
    );
    assert!(
        step.detail["reason"].as_str().unwrap().contains(NOTE_MARK),
        "{}",
        step.detail
    );
    let call_id = step.call_id.clone().unwrap();
    let recorded =
        r.h.journal
            .find_tool_call(&CallScope::Run(r.out.run), &call_id)
            .unwrap()
            .unwrap();
    assert_eq!(recorded.tool, "read_file");
    assert_eq!(recorded.arguments, json!({"path": NOTES}));
}

// ---------------------------------------------------------------------------------------------
// 3. No loop: a widened read that is cut must not send the model to a start_line that the
//    lever widens again into the same cut
// ---------------------------------------------------------------------------------------------

/// A 36-row, 20-numeric-column CSV under 4,000 bytes whose escaped text fits a shown result
/// by itself, but not with the column totals lever `table-facts` puts ahead of it. Row `r`'s
/// label starts `r{r:02}x`.
fn wide_csv() -> String {
    let mut s = String::from("label");
    for c in 1..=20 {
        s.push_str(&format!(",m{c:02}"));
    }
    s.push('\n');
    for r in 1..=36 {
        s.push_str(&format!("r{r:02}x{}", "\\".repeat(20)));
        for c in 1..=20 {
            s.push_str(&format!(",{}", 100 + (r * 7 + c * 13) % 900));
        }
        s.push('\n');
    }
    s
}

const WIDE: &str = "data/wide.csv";

#[test]
fn a_widened_read_cut_by_the_table_totals_does_not_loop() {
    // Was a hole, mended: `widened_read` measures the file alone against the 6,000 shown
    // characters, but lever `table-facts` puts `column_totals` ahead of the content,
    // `fit_read_result` then cuts the read at line K and says "Call read_file with start_line=K+1
    // to read on"; that call is widened again into the very same cut, for ever: no read_file call
    // can show the rest of the file.
    let csv = wide_csv();
    assert!(csv.len() <= 4_000, "{}", csv.len());
    let escaped = serde_json::to_string(&csv).unwrap().chars().count();
    assert!(escaped + WIDE.len() + 2 + 600 <= 6_000, "{escaped}");
    let h = with_files(&[(WIDE, csv.as_bytes())]);
    // The model does as the cut note says: the placeholder second call reads on from the
    // start_line the first result names.
    let placeholder = line("read_file", json!({"path": WIDE, "start_line": 999}));
    let s = line("read_file", json!({"path": WIDE, "start_line": 2}))
        + &placeholder
        + &placeholder
        + &finish_line();
    let tap: support::Tap = Box::new(|call, request, completion| {
        if call == 0 {
            return;
        }
        let prompt = user_messages(request).join("\n");
        let at = prompt
            .rfind("start_line=")
            .expect("a cut note names a start_line");
        let k: u64 = prompt[at + "start_line=".len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap();
        completion.text = line("read_file", json!({"path": WIDE, "start_line": k}))
            .trim_end()
            .to_string();
    });
    let mut model = PromptRecorder::tapped(&s, "wide.jsonl", tap);
    let (out, events) =
        h.run_gated_with_policy(&mut model, &mut AllowAll, Policy::safe_default(), |o| {
            o.levers.whole_reads = true;
            o.levers.table_facts = true;
            o.limits.attempts = 1;
        });
    let r = Ran {
        out,
        events,
        model,
        h,
    };
    let first = shown_json(&r, 1, 1);
    assert!(first.get("column_totals").is_some(), "{first}");
    assert_eq!(
        first["truncated"],
        json!(true),
        "the set-up cuts the first read: {first}"
    );
    let k = first["end_line"].as_u64().unwrap() + 1;
    for n in 2..=3 {
        let result = shown_json(&r, n, n);
        let content = result["content"].as_str().unwrap_or_default();
        // Line k of the file is data row k-1.
        let row = format!("r{:02}x", k - 1);
        assert!(
            content.contains(&row),
            "step {n} asked to read on from line {k} and was shown lines {}..{} again: {}",
            result["start_line"],
            result["end_line"],
            r.shown_result(n, n, "read_file")
        );
    }
}

#[test]
fn a_widened_read_that_fits_is_never_cut_even_at_the_edge() {
    // Files as large as the lever takes, with escaping as heavy as it allows: each widened
    // read shows the whole file, uncut (the default levers, `label-lines` among them).
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    // 4,000 bytes of plain text.
    let plain: String = (0..80)
        .map(|i| format!("{i:02} {}\n", "a".repeat(46)))
        .collect();
    files.push(("edge/plain.md".into(), plain.into_bytes()));
    // Quotes: just under the escaped budget.
    let mut q = String::new();
    while serde_json::to_string(&(q.clone() + "\"\"\"\"\"\"\"\"\n"))
        .unwrap()
        .chars()
        .count()
        + "edge/quotes.md".len()
        + 2
        + 600
        <= 6_000
    {
        q.push_str("\"\"\"\"\"\"\"\"\n");
    }
    files.push(("edge/quotes.md".into(), q.into_bytes()));
    // Multi-byte: 1,333 three-byte characters on short lines.
    let cjk: String = (0..43)
        .map(|_| format!("{}\n", "\u{65e5}".repeat(30)))
        .collect();
    files.push(("edge/cjk.md".into(), cjk.into_bytes()));
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, b)| (p.as_str(), b.as_slice()))
        .collect();
    let h = with_files(&refs);
    let mut s = String::new();
    for (p, _) in &files {
        s.push_str(&line(
            "read_file",
            json!({"path": p, "start_line": 2, "end_line": 2}),
        ));
    }
    s.push_str(&finish_line());
    let r = run(h, &s, true, Policy::safe_default());
    for (i, (p, bytes)) in files.iter().enumerate() {
        let n = i + 1;
        let shown = r.shown_result(n, n, "read_file");
        assert!(shown.contains(NOTE_MARK), "{p}: {shown}");
        let result = shown_json(&r, n, n);
        assert_eq!(result["truncated"], json!(false), "{p}: {shown}");
        assert_eq!(
            result["content"],
            json!(std::str::from_utf8(bytes).unwrap()),
            "{p}"
        );
        assert!(!shown.contains("start_line="), "{p}: {shown}");
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Confinement: the pre-check reads nothing outside the workspace and never hangs
// ---------------------------------------------------------------------------------------------

#[test]
fn read_small_refuses_links_escapes_and_absolute_paths() {
    let dir = tempfile::tempdir().unwrap();
    let ws_dir = dir.path().join("ws");
    std::fs::create_dir_all(ws_dir.join("notes")).unwrap();
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "OUTSIDE-SECRET\n2\n3\n").unwrap();
    std::os::unix::fs::symlink(&outside, ws_dir.join("notes/link.md")).unwrap();
    std::os::unix::fs::symlink(dir.path(), ws_dir.join("up")).unwrap();
    std::fs::hard_link(&outside, ws_dir.join("notes/hard.md")).unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    let world = WorkspaceWorld::new(&ws);
    let abs = outside.display().to_string();
    for path in [
        "notes/link.md",
        "up/outside.txt",
        "notes/hard.md",
        "../outside.txt",
        "notes/../../outside.txt",
        abs.as_str(),
    ] {
        let got = world.read_small(path, 4_000);
        assert!(
            !matches!(got, Ok(Some(_))),
            "{path}: read {:?}",
            got.map(|b| b.map(|b| String::from_utf8_lossy(&b).to_string()))
        );
    }
}

#[test]
fn read_small_checks_the_size_of_a_huge_sparse_file_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let f = std::fs::File::create(dir.path().join("huge.log")).unwrap();
    // A terabyte of holes: reading it would take hours, loading it would fail.
    f.set_len(1 << 40).unwrap();
    std::fs::write(dir.path().join("edge.txt"), "x".repeat(4_000)).unwrap();
    std::fs::write(dir.path().join("over.txt"), "x".repeat(4_001)).unwrap();
    let ws = Workspace::open(dir.path()).unwrap();
    let world = WorkspaceWorld::new(&ws);
    assert!(matches!(world.read_small("huge.log", 4_000), Ok(None)));
    assert_eq!(
        world.read_small("edge.txt", 4_000).unwrap().unwrap().len(),
        4_000
    );
    assert!(matches!(world.read_small("over.txt", 4_000), Ok(None)));
    assert!(matches!(world.read_small("missing.txt", 4_000), Ok(None)));
    assert!(!matches!(world.read_small(".", 4_000), Ok(Some(_))));
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo {}", path.display());
}

#[test]
fn read_small_does_not_block_on_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("pipe.md"));
    let ws = Workspace::open(dir.path()).unwrap();
    let world = WorkspaceWorld::new(&ws);
    // Returning at all is the test: an open or read that blocks never comes back.
    assert!(!matches!(world.read_small("pipe.md", 4_000), Ok(Some(_))));
}

#[test]
fn a_range_of_a_link_an_escape_a_fifo_or_a_huge_file_is_answered_as_without_the_lever() {
    let outside_dir = tempfile::tempdir().unwrap();
    let outside = outside_dir.path().join("outside.txt");
    std::fs::write(&outside, "OUTSIDE-SECRET\n2\n3\n").unwrap();
    let make = || {
        let h = Harness::new("desk_task");
        std::os::unix::fs::symlink(&outside, h.workspace.join("notes/link.md")).unwrap();
        std::os::unix::fs::symlink(outside_dir.path(), h.workspace.join("up")).unwrap();
        mkfifo(&h.workspace.join("notes/pipe.md"));
        let f = std::fs::File::create(h.workspace.join("notes/huge.md")).unwrap();
        f.set_len(1 << 30).unwrap();
        h
    };
    let paths = [
        "notes/link.md".to_string(),
        "up/outside.txt".to_string(),
        "../outside.txt".to_string(),
        "notes/../../outside.txt".to_string(),
        outside.display().to_string(),
        "notes/pipe.md".to_string(),
        "notes/huge.md".to_string(),
    ];
    let mut s = String::new();
    for p in &paths {
        s.push_str(&line("read_file", json!({"path": p, "start_line": 2})));
    }
    s.push_str(&finish_line());
    let off = run(make(), &s, false, Policy::safe_default());
    let on = run(make(), &s, true, Policy::safe_default());
    for (i, p) in paths.iter().enumerate() {
        let n = i + 1;
        let shown = on.shown_result(n, n, "read_file");
        assert!(!shown.contains("OUTSIDE-SECRET"), "{p}: {shown}");
        assert!(!shown.contains(NOTE_MARK), "{p}: {shown}");
        assert_eq!(outcome_of(&on, n), outcome_of(&off, n), "{p}: {shown}");
        assert_eq!(off.shown_result(n, n, "read_file"), shown, "{p}");
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Malformed parameters
// ---------------------------------------------------------------------------------------------

#[test]
fn malformed_ranges_never_panic_and_are_not_widened() {
    // Ranges that are not whole numbers: the call is answered exactly as without the lever.
    for second in [
        json!({"path": NOTES, "start_line": "2"}),
        json!({"path": NOTES, "start_line": -2}),
        json!({"path": NOTES, "end_line": -1}),
        json!({"path": NOTES, "start_line": 2.0}),
        json!({"path": NOTES, "start_line": 2.5}),
        json!({"path": NOTES, "start_line": 1e300}),
        json!({"path": NOTES, "start_line": true}),
        json!({"path": NOTES, "start_line": [2]}),
        json!({"path": NOTES, "start_line": {"n": 2}}),
        json!({"path": NOTES, "start_line": 2, "end_line": "4"}),
        json!({"path": NOTES, "start_line": null, "end_line": null}),
        json!({"path": [NOTES], "start_line": 2}),
        json!({"path": 7, "start_line": 2}),
        json!({"start_line": 2}),
        json!({"path": "", "start_line": 2}),
        json!({"path": "notes/", "start_line": 2}),
        json!({"path": "notes", "start_line": 2}),
    ] {
        let (off, on) = on_and_off(|| Harness::new("desk_task"), second.clone(), "");
        let shown = on.shown_result(2, 2, "read_file");
        assert!(!shown.contains(NOTE_MARK), "{second}: {shown}");
        assert_eq!(off.shown_result(2, 2, "read_file"), shown, "{second}");
    }
}

#[test]
fn out_of_range_whole_numbers_are_widened_without_panic() {
    // Whole numbers the tool or its schema refuses as a range (zero, past the end, past the
    // schema's maximum, u64::MAX, an end before the start): by design shown whole, with a note.
    for second in [
        json!({"path": NOTES, "start_line": 0, "end_line": 0}),
        json!({"path": NOTES, "start_line": 11}),
        json!({"path": NOTES, "start_line": 9_000_000}),
        json!({"path": NOTES, "start_line": u64::MAX, "end_line": u64::MAX}),
        json!({"path": NOTES, "end_line": 0}),
        json!({"path": NOTES, "start_line": 9, "end_line": 3}),
        json!({"path": NOTES, "start_line": 2, "end_line": null}),
    ] {
        let r = run(
            Harness::new("desk_task"),
            &script(second.clone()),
            true,
            Policy::safe_default(),
        );
        let shown = r.shown_result(2, 2, "read_file");
        assert_eq!(outcome_of(&r, 2), "executed", "{second}: {shown}");
        assert!(
            shown.contains("Rein read all 10 lines"),
            "{second}: {shown}"
        );
        assert!(shown.contains("Next meeting: 26 May."), "{second}: {shown}");
    }
}

#[test]
fn a_call_the_schema_refuses_for_another_reason_is_not_widened_into_one_that_runs() {
    // Was a hole, mended: the widened call is built from `path` alone, so everything else the model
    // sent is dropped before the gate validates it: a key read_file does not have (the schema says
    // additionalProperties: false) is refused without the lever and silently runs with it.
    let second = json!({"path": NOTES, "start_line": 7, "end_line": 7, "encoding": "latin-1"});
    let (off, on) = on_and_off(|| Harness::new("desk_task"), second, "");
    assert_eq!(outcome_of(&off, 2), "invalid");
    assert_eq!(
        outcome_of(&on, 2),
        outcome_of(&off, 2),
        "{}",
        on.shown_result(2, 2, "read_file")
    );
}

// ---------------------------------------------------------------------------------------------
// 6. Everything else: repeats, memory runs
// ---------------------------------------------------------------------------------------------

#[test]
fn ranges_that_all_run_the_same_whole_read_count_as_no_progress() {
    // Was a hole, mended: the repeat check and the no-progress count look at the model's
    // parameters, not at the call that ran. Without the lever, reading a short file past its end
    // one range at a time (the 1.5B's habit the lever was made for) hits the no-progress cap after
    // eight calls; with it, every range runs the identical whole read, each counts as progress, and
    // the run goes on to the turn cap.
    let mut s = line("read_file", json!({"path": OVERVIEW}));
    for i in 0..20u64 {
        s.push_str(&line(
            "read_file",
            json!({"path": NOTES, "start_line": 20 + i, "end_line": 26 + i}),
        ));
    }
    s.push_str(&finish_line());
    let no_progress = RunEnd::Cap {
        hit: CapHit::NoProgress {
            limit: MAX_STEPS_WITHOUT_PROGRESS,
        },
    };
    let off = run(Harness::new("desk_task"), &s, false, Policy::safe_default());
    assert_eq!(off.out.end, no_progress, "{:?}", off.out.end);
    let on = run(Harness::new("desk_task"), &s, true, Policy::safe_default());
    assert_eq!(on.out.end, no_progress, "{:?}", on.out.end);
    // The second identical whole read is already a repeat.
    let third = on.shown_result(3, 3, "read_file");
    assert!(
        third.contains("You made exactly this call already"),
        "{third}"
    );
}

#[test]
fn a_memory_run_is_left_as_it_is_by_the_lever() {
    // Was a hole, mended: the memory sandbox's read_file takes no range at all (its schema is
    // `path` only), so a call with start_line is refused there; the lever widens it anyway, into a
    // call that runs, with a note about line ranges, and only for files under 4,000 bytes.
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("journal.db")).unwrap();
    let mdir = dir.path().join("m");
    std::fs::create_dir_all(&mdir).unwrap();
    let m = json!({
        "id": "mem",
        "mode": "automatic",
        "prompt": "Do the task.",
        "inputs": [],
        "tools": ["create_file", "read_file", "final_answer"],
        "checks": [{"id": "a", "kind": "file_exists", "path": "a.txt"}],
        "budgets": {"max_turns": 10, "attempts_per_strategy": 1}
    });
    std::fs::write(mdir.join("mission.json"), m.to_string()).unwrap();
    let contract = Mission::load(&mdir).unwrap();
    let lines = [
        line(
            "create_file",
            json!({"path": "a.txt", "content": "one\ntwo\nthree\n"}),
        ),
        line("read_file", json!({"path": "a.txt", "start_line": 2})),
        line("final_answer", json!({"answer": "done"})),
    ]
    .concat();
    let mut seen = Vec::new();
    for whole_reads in [false, true] {
        let mut model = ScriptedModel::from_str_named(&lines, Path::new("mem.jsonl")).unwrap();
        let mut options =
            AgentOptions::for_mission(&contract, rein_models::Model::identity(&model));
        options.levers.whole_reads = whole_reads;
        let r = run_memory(
            MemoryRunEnv {
                contract: &contract,
                mission_file: &contract.source,
                journal: &journal,
                meta: json!({}),
            },
            rein_workspace::Sandbox::new(),
            &mut model,
            &mut AllowAll,
            options,
            &mut |_| {},
        )
        .unwrap();
        let read = r
            .actions
            .iter()
            .find(|a| a.action == "read_file")
            .map(|a| a.outcome.clone())
            .unwrap();
        seen.push(read);
    }
    assert_eq!(seen[0], "invalid", "{seen:?}");
    assert_eq!(seen[1], seen[0], "{seen:?}");
}
