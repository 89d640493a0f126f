#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `read-cited` lever: in a task that picks which of its many inputs to read, the first
//! write of the deliverable is held (nothing written) while its text names an input the run has
//! not read in full; read, the same write goes through and the run can pass. Without the lever
//! the write runs and the contract's inputs-read check fails the run for good. The lever never
//! names an input the model's text did not, and leaves later writes and small tasks alone.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::json;
use support::{finish_line, journal_events, line, Harness, Ran};

const ANSWER: &str = "out/answer.md";
const NOTE: &str = "notes/2024-05-14-ops-sync.md";

/// A policy with one rule on `read_file` of the note: `action` is `deny` or `ask`.
fn note_rule(action: &str) -> Policy {
    Policy::from_toml_str(
        &format!("[[rule]]\ntool = \"read_file\"\npaths = [\"{NOTE}\"]\naction = \"{action}\"\n"),
        "test policy",
        &rein_workspace::desk_registry(),
    )
    .unwrap()
}

fn run_on(task: &str, script: &str, read_cited: bool) -> Ran {
    Ran::of(
        Harness::desk_suite(task),
        script,
        &mut AllowAll,
        Policy::safe_default(),
        |o| {
            o.levers = Levers {
                read_cited,
                ..Levers::DEFAULT
            };
            o.limits.attempts = 1;
        },
    )
}

fn renewal_answer() -> String {
    line(
        "create_file",
        json!({"path": ANSWER, "content": format!("File: {NOTE}\nTerm: 24 months\nMonthly cost: 1,850 EUR\n")}),
    )
}

fn read_back_and_finish() -> String {
    line("read_file", json!({ "path": ANSWER })) + &finish_line()
}

/// (action, outcome) of each step of the run.
fn outcomes(r: &Ran) -> Vec<(String, String)> {
    support::outcomes(&r.events)
}

/// The 1.5B's run (`ws-search/`): a search, the right answer written from its lines (held),
/// the note read, the answer written again, read back and finished.
fn search_write_read_write() -> String {
    line(
        "search_text",
        json!({"pattern": "Cloudline", "path": "notes"}),
    ) + &renewal_answer()
        + &line("read_file", json!({ "path": NOTE }))
        + &renewal_answer()
        + &read_back_and_finish()
}

#[test]
fn an_answer_naming_an_unread_note_is_held_until_the_note_is_read() {
    let r = run_on("search-hosting-renewal", &search_write_read_write(), true);
    assert!(r.out.passed(), "{}", r.out.reason());
    let steps = outcomes(&r);
    assert_eq!(
        steps[1],
        ("create_file".into(), "invalid".into()),
        "{steps:?}"
    );
    assert_eq!(
        steps[3],
        ("create_file".into(), "executed".into()),
        "{steps:?}"
    );
    let after_hold = r.model.prompt(2);
    assert!(
        after_hold.contains("held by Rein, nothing was written (lever read-cited): your text names notes/2024-05-14-ops-sync.md, not read in full yet"),
        "{after_hold}"
    );
    let events = journal_events(&r.h.journal, r.out.run, "read_cited");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["unread"], json!([NOTE]));
}

#[test]
fn without_the_lever_the_write_runs_and_the_run_fails_on_inputs_read() {
    let script = line(
        "search_text",
        json!({"pattern": "Cloudline", "path": "notes"}),
    ) + &renewal_answer()
        + &line("read_file", json!({ "path": NOTE }))
        + &read_back_and_finish();
    let r = run_on("search-hosting-renewal", &script, false);
    assert!(!r.out.passed());
    assert_eq!(r.out.reason(), "checks failed: inputs-read");
    assert!(journal_events(&r.h.journal, r.out.run, "read_cited").is_empty());
}

#[test]
fn a_service_named_by_its_file_stem_counts_as_cited() {
    let answer = line(
        "create_file",
        json!({"path": ANSWER, "content": "Service: pricing\nOwner: emil@shop.example\nExpires: 2025-01-17\n"}),
    );
    let script = answer.clone()
        + &line("read_file", json!({"path": "services/pricing.yaml"}))
        + &answer
        + &read_back_and_finish();
    let r = run_on("search-cert-expiry", &script, true);
    assert!(r.out.passed(), "{}", r.out.reason());
    let events = journal_events(&r.h.journal, r.out.run, "read_cited");
    assert_eq!(events[0]["unread"], json!(["services/pricing.yaml"]));
    // The owner's address and the date name no input: only the stem was held.
    assert!(r
        .model
        .prompt(1)
        .contains("your text names services/pricing.yaml,"));
}

#[test]
fn a_word_that_is_only_part_of_a_longer_one_names_no_input() {
    // `search` is the stem of services/search.yaml; `research` and `search-api` are not it.
    let script = line("read_file", json!({"path": "services/pricing.yaml"}))
        + &line(
            "create_file",
            json!({"path": ANSWER, "content": "Service: pricing\nOwner: emil@shop.example (research, search-api)\nExpires: 2025-01-17\n"}),
        );
    let r = run_on("search-cert-expiry", &script, true);
    assert_eq!(outcomes(&r)[1], ("create_file".into(), "executed".into()));
}

#[test]
fn only_the_first_write_is_held() {
    // Written once (naming nothing unread), then rewritten naming an unread input: the first
    // write already settled what the inputs-read check reads, so holding the second helps
    // nothing.
    let script = line("read_file", json!({"path": "services/pricing.yaml"}))
        + &line(
            "create_file",
            json!({"path": ANSWER, "content": "Service: pricing\nOwner: emil@shop.example\nExpires: 2025-01-17\n"}),
        )
        + &line(
            "replace_file",
            json!({"path": ANSWER, "content": "Service: reviews\nOwner: hana@shop.example\nExpires: 2026-01-17\n"}),
        );
    let r = run_on("search-cert-expiry", &script, true);
    let steps = outcomes(&r);
    assert_eq!(steps[1].1, "executed", "{steps:?}");
    assert_eq!(steps[2].1, "executed", "{steps:?}");
}

#[test]
fn a_task_that_reads_every_input_is_left_alone() {
    // desk_task: three inputs, every one needed; the write names data/tasks.csv unread.
    let script = support::write_summary(&support::gold_text());
    let r = Ran::desk_task(&script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = Levers {
            read_cited: true,
            write_sections: true,
            ..Levers::DEFAULT
        };
        o.limits.attempts = 1;
    });
    assert_eq!(outcomes(&r)[0].1, "executed", "{:?}", outcomes(&r));
}

#[test]
fn an_input_whose_read_was_refused_holds_no_more_writes() {
    // A policy keeps the note from read_file: holding again would only spend the run's steps.
    let policy = note_rule("deny");
    let script = renewal_answer() + &line("read_file", json!({ "path": NOTE })) + &renewal_answer();
    let r = Ran::of(
        Harness::desk_suite("search-hosting-renewal"),
        &script,
        &mut AllowAll,
        policy,
        |o| {
            o.levers = Levers {
                read_cited: true,
                ..Levers::DEFAULT
            };
            o.limits.attempts = 1;
        },
    );
    let steps = outcomes(&r);
    assert_eq!(
        steps[..3],
        [
            ("create_file".to_string(), "invalid".to_string()),
            ("read_file".to_string(), "denied".to_string()),
            ("create_file".to_string(), "executed".to_string()),
        ],
        "{steps:?}"
    );
    assert_eq!(
        journal_events(&r.h.journal, r.out.run, "read_cited").len(),
        1
    );
    // The input cannot be read: the held write comes back after the refused read.
    assert!(r
        .model
        .prompt(2)
        .contains(&format!("Rein holds your write of step 1 {GIVEN_BACK}")));
}

#[test]
fn a_model_that_writes_again_without_reading_is_held_up_to_three_times() {
    // The 1.5B, held once, wrote the same answer again at once (`s4-search/`).
    let script = renewal_answer().repeat(4);
    let r = run_on("search-hosting-renewal", &script, true);
    let steps: Vec<String> = outcomes(&r).into_iter().map(|(_, o)| o).take(4).collect();
    assert_eq!(steps, ["invalid", "invalid", "invalid", "executed"]);
    assert!(r
        .model
        .prompt(1)
        .contains(r#"Your next call: {\"action\": \"read_file\", \"parameters\": {\"path\": \"notes/2024-05-14-ops-sync.md\"}}"#));
}

const GIVEN_BACK: &str = "no longer (lever read-cited): the files it named are read, or cannot be";

#[test]
fn the_held_write_is_given_back_once_its_input_is_read() {
    // The 1.5B in explore-csv-rows (`ex21c-ask/`): held, it read the two files its table named,
    // then wrote a table of those two alone. The held write comes back to send again.
    let r = run_on("search-hosting-renewal", &search_write_read_write(), true);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert!(!r.model.prompt(2).contains(GIVEN_BACK));
    let after_read = r.model.prompt(3);
    assert!(
        after_read.contains(&format!("Rein holds your write of step 2 {GIVEN_BACK}")),
        "{after_read}"
    );
    assert!(
        after_read.contains("Monthly cost: 1,850 EUR"),
        "the held write's own text: {after_read}"
    );
    let released = journal_events(&r.h.journal, r.out.run, "read_cited_released");
    assert_eq!(released.len(), 1, "{released:?}");
    assert_eq!(released[0]["held_at"], json!(2));
    // Once (the earlier result is still in the transcript), not after every step from then on.
    assert_eq!(r.model.prompt(4).matches(GIVEN_BACK).count(), 1);
}

#[test]
fn the_held_write_waits_for_every_input_it_named() {
    let answer = line(
        "create_file",
        json!({"path": ANSWER, "content": "Service: pricing\nOwner: emil@shop.example (not search)\nExpires: 2025-01-17\n"}),
    );
    let script = answer.clone()
        + &line("read_file", json!({"path": "services/pricing.yaml"}))
        + &line("read_file", json!({"path": "services/search.yaml"}))
        + &answer;
    let r = run_on("search-cert-expiry", &script, true);
    let held = journal_events(&r.h.journal, r.out.run, "read_cited");
    assert_eq!(
        held[0]["unread"],
        json!(["services/pricing.yaml", "services/search.yaml"]),
        "{held:?}"
    );
    assert!(!r.model.prompt(2).contains(GIVEN_BACK), "one still unread");
    assert!(r
        .model
        .prompt(3)
        .contains(&format!("Rein holds your write of step 1 {GIVEN_BACK}")));
    assert_eq!(outcomes(&r)[3], ("create_file".into(), "executed".into()));
}

#[test]
fn a_write_made_since_the_hold_is_not_followed_by_the_stale_one() {
    // Held, then a first write naming nothing unread ran: the deliverable exists, and the held
    // text is stale.
    let script = renewal_answer()
        + &line(
            "create_file",
            json!({"path": ANSWER, "content": "Term: 24 months\nMonthly cost: 1,850 EUR\n"}),
        )
        + &line("read_file", json!({ "path": NOTE }));
    let r = run_on("search-hosting-renewal", &script, true);
    assert_eq!(outcomes(&r)[1], ("create_file".into(), "executed".into()));
    assert!(!r.model.prompt(3).contains(GIVEN_BACK));
    assert!(journal_events(&r.h.journal, r.out.run, "read_cited_released").is_empty());
}

#[test]
fn without_the_lever_nothing_is_given_back() {
    let script = renewal_answer() + &line("read_file", json!({ "path": NOTE }));
    let r = run_on("search-hosting-renewal", &script, false);
    assert!(!r.model.prompt(2).contains(GIVEN_BACK));
    assert!(journal_events(&r.h.journal, r.out.run, "read_cited_released").is_empty());
}

/// With `cited-reads` too.
fn run_reading(task: &str, script: &str, policy: Policy) -> Ran {
    Ran::of(
        Harness::desk_suite(task),
        script,
        &mut AllowAll,
        policy,
        |o| {
            o.levers = Levers {
                read_cited: true,
                cited_reads: true,
                ..Levers::DEFAULT
            };
            o.limits.attempts = 1;
        },
    )
}

const REIN_READS: &str =
    "Rein read this file for the model's write that named it unread (lever cited-reads)";

#[test]
fn with_cited_reads_rein_reads_what_the_held_write_named_and_gives_it_back() {
    // One write, held, read for, sent again: no read of the model's own.
    let script = line(
        "search_text",
        json!({"pattern": "Cloudline", "path": "notes"}),
    ) + &renewal_answer()
        + &renewal_answer()
        + &read_back_and_finish();
    let r = run_reading("search-hosting-renewal", &script, Policy::safe_default());
    assert!(r.out.passed(), "{}", r.out.reason());
    let after_hold = r.model.prompt(2);
    assert!(
        after_hold.contains("not read in full yet, and the answer must rest on inputs read before it is first written; Rein reads it for you now (lever cited-reads), below"),
        "{after_hold}"
    );
    assert!(
        after_hold.contains("Rein read 1 of the 1 file your held write named (lever cited-reads)"),
        "{after_hold}"
    );
    assert!(after_hold.contains(&format!("Rein holds your write of step 2 {GIVEN_BACK}")));
    // The note's own lines are in the prompt: the read's result, labelled as Rein's.
    assert!(
        after_hold.contains(&format!(
            "Result of Rein's read of {NOTE} (read_file, named by your held write)"
        )),
        "{after_hold}"
    );
    let rein_reads: Vec<_> = r
        .events
        .iter()
        .filter_map(|e| match e {
            rein_engine::agent::AgentEvent::Step(s) if s.thought.as_deref() == Some(REIN_READS) => {
                s.parameters.clone()
            }
            _ => None,
        })
        .collect();
    assert_eq!(rein_reads, [json!({ "path": NOTE })]);
    let inputs_read = r
        .out
        .verdict
        .as_ref()
        .unwrap()
        .checks
        .iter()
        .find(|c| c.id == "inputs-read")
        .map(|c| c.facts.join("; "))
        .unwrap();
    assert!(
        inputs_read.contains("the files its held write named, lever cited-reads"),
        "{inputs_read}"
    );
}

#[test]
fn cited_reads_reads_every_named_input_in_one_step() {
    let answer = line(
        "create_file",
        json!({"path": ANSWER, "content": "Service: pricing\nOwner: emil@shop.example (not search)\nExpires: 2025-01-17\n"}),
    );
    let r = run_reading(
        "search-cert-expiry",
        &(answer.clone() + &answer),
        Policy::safe_default(),
    );
    let after_hold = r.model.prompt(1);
    assert!(
        after_hold.contains("Rein read 2 of the 2 files your held write named (lever cited-reads), each a read_file call of its own, shown above: 2 shown whole."),
        "{after_hold}"
    );
    assert_eq!(
        outcomes(&r).last().unwrap(),
        &("create_file".into(), "executed".into())
    );
}

#[test]
fn a_file_policy_asks_about_is_left_for_the_model_and_the_write_stays_held() {
    let policy = note_rule("ask");
    let r = run_reading("search-hosting-renewal", &renewal_answer(), policy);
    let after_hold = r.model.prompt(1);
    assert!(
        after_hold.contains(&format!("Rein read 0 of the 1 file your held write named (lever cited-reads), each a read_file call of its own, shown above: 0 shown whole. Not read (1): {NOTE} (policy asks before it is read, or keeps it); read those with read_file yourself before you write.")),
        "{after_hold}"
    );
    assert!(
        !after_hold.contains(GIVEN_BACK),
        "still unread: {after_hold}"
    );
    assert!(!r.events.iter().any(|e| matches!(e,
        rein_engine::agent::AgentEvent::Step(s) if s.thought.as_deref() == Some(REIN_READS))));
}

#[test]
fn without_read_cited_cited_reads_does_nothing() {
    let r = Ran::of(
        Harness::desk_suite("search-hosting-renewal"),
        &renewal_answer(),
        &mut AllowAll,
        Policy::safe_default(),
        |o| {
            o.levers = Levers {
                cited_reads: true,
                ..Levers::DEFAULT
            };
            o.limits.attempts = 1;
        },
    );
    assert_eq!(outcomes(&r)[0], ("create_file".into(), "executed".into()));
    assert!(!r.model.prompt(1).contains("lever cited-reads"));
}
