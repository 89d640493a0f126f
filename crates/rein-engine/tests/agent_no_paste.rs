#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `no-paste` lever: with a `not_copied` check in the contract, each request of the run
//! carries the prose texts that check compares against that the run has read whole so far
//! (JSON-escaped, as a reply spells them), the run length a copy may reach, and the tables
//! read whole (as read: they are held at their row ends only); without the check, or with the lever off, none does; a file policy keeps from
//! `read_file` is never held.
//! The judge is unchanged: the same replies get the same verdict either way.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{Levers, RunOutcome};
use rein_engine::gate::AllowAll;
use rein_protocol::{CompletionRequest, NoPaste};
use serde_json::json;
use support::{gold_fields, line, missions_dir, reads, Harness, PromptRecorder};

fn levers(on: bool) -> Levers {
    Levers {
        write_sections: true,
        no_paste: on,
        ..Levers::DEFAULT
    }
}

/// The requests and the outcome of a one-attempt run of `h`'s mission on `script`.
fn run(h: &Harness, script: &str, on: bool) -> (Vec<CompletionRequest>, RunOutcome) {
    let mut model = PromptRecorder::new(script, "no_paste.jsonl");
    let (outcome, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers(on);
        o.limits.attempts = 1;
    });
    (model.requests, outcome)
}

fn gold_script() -> String {
    reads()
        + &line("write_sections", gold_fields())
        + &line("read_file", json!({"path": "out/summary.md"}))
        + &line("finish", json!({"summary": "Wrote the summary."}))
}

fn fixture(mission: &str, path: &str) -> String {
    std::fs::read_to_string(missions_dir().join(mission).join("fixtures").join(path)).unwrap()
}

/// A fixture as the history holds it: inside a JSON string, without its quotes.
fn escaped(mission: &str, path: &str) -> String {
    let text = fixture(mission, path);
    let quoted = serde_json::Value::String(text).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

fn no_paste_events(h: &Harness, outcome: &RunOutcome) -> Vec<serde_json::Value> {
    support::journal_events(&h.journal, outcome.run, "no_paste")
}

#[test]
fn every_request_of_an_own_words_mission_carries_its_inputs() {
    let h = Harness::new("desk_task");
    let (requests, outcome) = run(&h, &gold_script(), true);
    assert!(outcome.verdict.as_ref().unwrap().passed, "{outcome:?}");
    let text = |p: &str| escaped("desk_task", p);
    // The CSV is held apart, as read, at its row ends only.
    let held = |n: usize| -> Vec<String> {
        ["notes/overview.md", "notes/meeting-notes.md"][..n]
            .iter()
            .map(|p| text(p))
            .collect()
    };
    assert!(text("notes/overview.md").contains("\\n"));
    // Nothing before the first read; then each input once it has been read whole.
    assert!(requests[0].no_paste.is_none());
    for (i, n) in [(1, 1), (2, 2), (3, 2), (4, 2), (5, 2)] {
        assert_eq!(
            requests[i].no_paste,
            Some(NoPaste {
                sources: held(n),
                // Half of the check's 8-word runs.
                allowed_tokens: 4,
                // The reply's own repeats count until the report is written (request 3
                // writes it), never in the edits after.
                own_repeats: i <= 3,
                tables: if i >= 3 {
                    vec![fixture("desk_task", "data/tasks.csv")]
                } else {
                    vec![]
                },
                // The check's 8-word runs, for the tables' row ends.
                table_run_words: 8,
            }),
            "request {i}"
        );
    }
    assert_eq!(requests.len(), 6);
    let held_events = support::journal_events(&h.journal, outcome.run, "no_paste_held");
    assert_eq!(
        held_events,
        vec![
            json!({"step": 2, "sources": ["notes/overview.md"], "tables": [], "cut": [], "own_repeats": true}),
            json!({"step": 3, "sources": ["notes/overview.md", "notes/meeting-notes.md"], "tables": [], "cut": [], "own_repeats": true}),
            json!({"step": 4, "sources": ["notes/overview.md", "notes/meeting-notes.md"], "tables": ["data/tasks.csv"], "cut": [], "own_repeats": true}),
            json!({"step": 5, "sources": ["notes/overview.md", "notes/meeting-notes.md"], "tables": ["data/tasks.csv"], "cut": [], "own_repeats": false}),
        ]
    );
    let events = no_paste_events(&h, &outcome);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        events[0]["sources"],
        json!(["notes/overview.md", "notes/meeting-notes.md"])
    );
    assert_eq!(events[0]["row_end_tables"], json!(["data/tasks.csv"]));
    assert_eq!(events[0]["allowed_tokens"], 4);
    // A scripted model ignores it, and the journal says whether the backend applies it.
    assert_eq!(events[0]["backend_applies"], false);
}

#[test]
fn off_or_without_an_own_words_check_no_request_carries_it() {
    let h = Harness::new("desk_task");
    let (requests, off_outcome) = run(&h, &gold_script(), false);
    assert!(requests.iter().all(|r| r.no_paste.is_none()));
    assert!(no_paste_events(&h, &off_outcome).is_empty());
    // The same replies, the same verdict: the lever changes requests, never the judge.
    let h2 = Harness::new("desk_task");
    let (_, on_outcome) = run(&h2, &gold_script(), true);
    assert_eq!(
        on_outcome.verdict.as_ref().unwrap().checks,
        off_outcome.verdict.as_ref().unwrap().checks
    );

    // doc_extract asks for copied values: it has no not_copied check, and is never steered.
    let h = Harness::new("doc_extract");
    let (requests, outcome) = run(
        &h,
        &line("read_file", json!({"path": "invoices/invoice_001.txt"})),
        true,
    );
    assert!(!requests.is_empty());
    assert!(requests.iter().all(|r| r.no_paste.is_none()));
    assert!(no_paste_events(&h, &outcome).is_empty());
}

#[test]
fn a_check_s_own_sources_and_the_strictest_run_length_are_used() {
    let h = Harness::with_edit("desk_task", |m| {
        let checks = m["checks"].as_array_mut().unwrap();
        let own = checks.iter_mut().find(|c| c["id"] == "own-words").unwrap();
        own["sources"] = json!(["notes/overview.md"]);
        own["min_run_words"] = json!(12);
        checks.push(json!({"id": "own-words-notes", "kind": "not_copied",
            "path": "out/summary.md", "sources": ["notes/meeting-notes.md", "notes/overview.md"],
            "min_run_words": 10, "max_fraction": 0.75}));
    });
    let (requests, _) = run(&h, &reads(), true);
    let np = requests.last().unwrap().no_paste.as_ref().unwrap();
    assert_eq!(
        np.sources,
        vec![
            escaped("desk_task", "notes/overview.md"),
            escaped("desk_task", "notes/meeting-notes.md")
        ]
    );
    assert_eq!(np.allowed_tokens, 5);
    // The shortest runs a contract may count (5 words) still leave two-token names copyable.
    let h = Harness::with_edit("desk_task", |m| {
        let checks = m["checks"].as_array_mut().unwrap();
        let own = checks.iter_mut().find(|c| c["id"] == "own-words").unwrap();
        own["min_run_words"] = json!(5);
    });
    let (requests, _) = run(&h, &reads(), true);
    assert_eq!(
        requests
            .last()
            .unwrap()
            .no_paste
            .as_ref()
            .unwrap()
            .allowed_tokens,
        2
    );
}

#[test]
fn a_table_takes_no_room_from_the_prose() {
    // 40,000 characters of prose (40,400 escaped) and a 20,000-character CSV: the prose is
    // held whole, the table beside it.
    let prose = format!("{}\n", "w".repeat(99)).repeat(400);
    let csv = format!("t,{}\n", "1".repeat(97)).repeat(200);
    let h = Harness::with_fixtures("desk_task", |fixtures, m| {
        add_input(fixtures, m, "notes/big.md", &prose);
        add_input(fixtures, m, "data/big.csv", &csv);
    });
    let script = reads()
        + &read_in_ranges("notes/big.md", 400, 40)
        + &read_in_ranges("data/big.csv", 200, 40);
    let (requests, outcome) = run(&h, &script, true);
    let last = requests.last().unwrap().no_paste.as_ref().unwrap();
    let big = last.sources.iter().find(|s| s.starts_with("www")).unwrap();
    assert_eq!(big.chars().count(), 40_400, "the prose is held whole");
    assert_eq!(last.tables.len(), 2);
    assert!(last.tables.contains(&csv));
    let held = support::journal_events(&h.journal, outcome.run, "no_paste_held");
    assert_eq!(held.last().unwrap()["cut"], json!([]));
}

/// Writes `text` to the fixture `path` and makes it an input of the mission `m`.
fn add_input(fixtures: &std::path::Path, m: &mut serde_json::Value, path: &str, text: &str) {
    std::fs::write(fixtures.join(path), text).unwrap();
    m["inputs"].as_array_mut().unwrap().push(json!(path));
}

/// Replies that read `path` whole in ranges of `lines` lines, `total` lines in all.
fn read_in_ranges(path: &str, total: u64, lines: u64) -> String {
    (0..total.div_ceil(lines))
        .map(|i| {
            let start = i * lines + 1;
            line(
                "read_file",
                json!({"path": path, "start_line": start, "end_line": (start + lines - 1).min(total)}),
            )
        })
        .collect()
}

#[test]
fn the_room_goes_to_the_shortest_sources_read_and_the_journal_says_what_was_cut() {
    // Two 30,000-character inputs, 300 lines of 100 characters, read whole in ranges.
    let row = format!("{}\n", "w".repeat(99));
    let h = Harness::with_fixtures("desk_task", |fixtures, m| {
        for name in ["notes/big-a.md", "notes/big-b.md"] {
            add_input(fixtures, m, name, &row.repeat(300));
        }
    });
    let script = reads()
        + &read_in_ranges("notes/big-a.md", 300, 40)
        + &read_in_ranges("notes/big-b.md", 300, 40);
    let (requests, outcome) = run(&h, &script, true);
    let last = requests.last().unwrap().no_paste.as_ref().unwrap();
    let total: usize = last.sources.iter().map(|s| s.chars().count()).sum();
    assert_eq!(total, 48_000, "the prose is held to its cap");
    assert_eq!(last.sources.len(), 4, "the CSV is held apart");
    assert_eq!(last.tables, vec![fixture("desk_task", "data/tasks.csv")]);
    assert_eq!(
        last.sources[1],
        escaped("desk_task", "notes/meeting-notes.md")
    );
    assert_eq!(
        last.sources[2].chars().count(),
        30_300,
        "big-a whole, newlines escaped"
    );
    let held = support::journal_events(&h.journal, outcome.run, "no_paste_held");
    let final_cut = &held.last().unwrap()["cut"];
    let cut = final_cut.as_array().unwrap();
    assert_eq!(cut.len(), 1, "{cut:?}");
    assert!(
        cut[0]
            .as_str()
            .unwrap()
            .starts_with("notes/big-b.md: only its first ")
            && cut[0]
                .as_str()
                .unwrap()
                .ends_with(" of 30300 characters, over 48000 in all"),
        "{cut:?}"
    );
}

#[test]
fn an_input_changed_under_the_run_an_empty_one_and_crlf_lines() {
    let h = Harness::with_fixtures("desk_task", |fixtures, m| {
        add_input(fixtures, m, "notes/blank.md", " \n");
        std::fs::write(
            fixtures.join("notes/meeting-notes.md"),
            "Keys are late.\r\nAsk again.\r\n",
        )
        .unwrap();
    });
    // The overview is rewritten on disk before the model's first read runs: what it reads
    // whole is not the frozen text, and the frozen text is never held.
    let ws = h.workspace.clone();
    let tap: support::Tap = Box::new(move |call, _, _| {
        if call == 0 {
            std::fs::write(
                ws.join("notes/overview.md"),
                "A new overview, never frozen.\n",
            )
            .unwrap();
        }
    });
    let script = reads() + &line("read_file", json!({"path": "notes/blank.md"}));
    let mut model = PromptRecorder::tapped(&script, "no_paste_changed.jsonl", tap);
    let (outcome, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers(true);
        o.limits.attempts = 1;
    });
    let last = model.requests.last().unwrap().no_paste.as_ref().unwrap();
    // Only the notes, with LF line ends as a reply writes them; the blank file holds nothing.
    assert_eq!(
        last.sources,
        vec!["Keys are late.\\nAsk again.\\n".to_string()]
    );
    let held = support::journal_events(&h.journal, outcome.run, "no_paste_held");
    assert_eq!(
        held.last().unwrap()["cut"],
        json!(["notes/overview.md: changed since it was frozen, left out"])
    );
    for r in &model.requests {
        if let Some(np) = &r.no_paste {
            assert!(!np
                .sources
                .iter()
                .any(|s| s.contains("never frozen") || s.contains("Harbor")));
        }
    }
}

#[test]
fn a_file_policy_keeps_from_read_file_is_never_held() {
    let policy = rein_engine::policy::Policy::from_toml_str(
        "[[rule]]\ntool = \"read_file\"\npaths = [\"notes/meeting-notes.md\"]\naction = \"deny\"\n",
        "test policy",
        &rein_workspace::desk_registry(),
    )
    .unwrap();
    let h = Harness::new("desk_task");
    // A part read of the overview holds nothing either: the model has not seen the rest.
    let script = line(
        "read_file",
        json!({"path": "notes/overview.md", "start_line": 1, "end_line": 2}),
    ) + &reads();
    let mut model = PromptRecorder::new(&script, "no_paste_policy.jsonl");
    let (_, events) = h.run_gated_with_policy(&mut model, &mut AllowAll, policy, |o| {
        o.levers = levers(true);
        o.limits.attempts = 1;
    });
    assert!(events.iter().any(|e| matches!(e,
        rein_engine::agent::AgentEvent::Step(s) if s.outcome == "denied")));
    let requests = model.requests;
    assert!(requests[0].no_paste.is_none());
    assert!(requests[1].no_paste.is_none(), "a part read holds nothing");
    let notes = escaped("desk_task", "notes/meeting-notes.md");
    for r in &requests {
        if let Some(np) = &r.no_paste {
            assert!(!np.sources.contains(&notes), "a denied file was held");
        }
    }
    let last = requests.last().unwrap().no_paste.as_ref().unwrap();
    assert_eq!(
        last.sources,
        vec![escaped("desk_task", "notes/overview.md")]
    );
}

#[test]
fn a_stale_deliverable_from_before_the_run_does_not_stop_own_repeats_counting() {
    let h = Harness::with_fixtures("desk_task", |fixtures, _| {
        std::fs::create_dir_all(fixtures.join("out")).unwrap();
        std::fs::write(fixtures.join("out/summary.md"), "# An old summary\n").unwrap();
    });
    let (requests, _) = run(&h, &gold_script(), true);
    let own: Vec<bool> = requests
        .iter()
        .filter_map(|r| r.no_paste.as_ref().map(|np| np.own_repeats))
        .collect();
    // Reads 2 and 3 and the write count the reply's own repeats; the read back and finish
    // after the write do not.
    assert_eq!(own, vec![true, true, true, false, false]);
}

#[test]
fn a_table_is_held_at_its_row_ends_only_even_when_a_check_names_it() {
    // A second check over tables only: they are held as tables (row ends), never as prose
    // texts, their shorter runs set nothing, and the journal names them.
    let with_tables = |m: &mut serde_json::Value| {
        m["checks"]
            .as_array_mut()
            .unwrap()
            .push(json!({"id": "own-rows",
            "kind": "not_copied", "path": "out/summary.md",
            "sources": ["data/tasks.csv", "data/Other.TSV"],
            "min_run_words": 4, "max_fraction": 0.75}));
    };
    let h = Harness::with_fixtures("desk_task", |fixtures, m| {
        add_input(fixtures, m, "data/Other.TSV", "task\thours\nA\t1\n");
        with_tables(m);
    });
    let script = reads() + &line("read_file", json!({"path": "data/Other.TSV"}));
    let (requests, outcome) = run(&h, &script, true);
    let np = requests.last().unwrap().no_paste.as_ref().unwrap();
    assert_eq!(np.sources.len(), 2, "the notes only");
    assert_eq!(
        np.tables,
        vec![
            fixture("desk_task", "data/tasks.csv"),
            "task\thours\nA\t1\n".to_string()
        ]
    );
    assert_eq!(np.allowed_tokens, 4, "the prose check's 8-word runs");
    assert_eq!(np.table_run_words, 4, "the table check's runs");
    let events = no_paste_events(&h, &outcome);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        events[0]["row_end_tables"],
        json!(["data/tasks.csv", "data/Other.TSV"])
    );

    // Only checks over tables: the tables are still held at their row ends, no prose, and the
    // tables' run length counts the reply's own repeats.
    let h = Harness::with_fixtures("desk_task", |fixtures, m| {
        add_input(fixtures, m, "data/Other.TSV", "task\thours\nA\t1\n");
        m["checks"]
            .as_array_mut()
            .unwrap()
            .retain(|c| c["id"] != "own-words");
        with_tables(m);
    });
    let (requests, outcome) = run(&h, &script, true);
    let np = requests.last().unwrap().no_paste.as_ref().unwrap();
    assert!(np.sources.is_empty());
    assert_eq!(np.tables.len(), 2);
    assert_eq!(
        np.allowed_tokens, 2,
        "half of the table check's 4-word runs"
    );
    let events = no_paste_events(&h, &outcome);
    assert_eq!(events[0]["sources"], json!([]));
    assert_eq!(
        events[0]["row_end_tables"],
        json!(["data/tasks.csv", "data/Other.TSV"])
    );
}
