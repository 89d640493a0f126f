#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `task-search` lever on the desk suite's tasks: before the first step of a task that
//! picks among many inputs, Rein searches them for the words of the task's description that few
//! files hold, through the gate, and the first prompt shows what it found; the judge is left as
//! it was, and the policy holds for Rein's searches as for the model's.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::{AllowAll, ApprovalDecision, Approver, ScriptedApprover};
use rein_engine::policy::Policy;
use serde_json::{json, Value};
use support::{desk_policy, finish_line, journal_events, line, Harness, Ran};

const ANSWER: &str = "out/answer.md";

fn run_with(
    h: Harness,
    script: &str,
    approver: &mut dyn Approver,
    policy: Policy,
    on: bool,
) -> Ran {
    let levers = Levers {
        task_search: on,
        find_inputs: true,
        ..Levers::DEFAULT
    };
    Ran::one_attempt(h, script, approver, policy, levers)
}

fn run_on(task: &str, script: &str, on: bool) -> Ran {
    run_with(
        Harness::desk_suite(task),
        script,
        &mut AllowAll,
        Policy::safe_default(),
        on,
    )
}

fn host_answer() -> String {
    line("read_file", json!({"path": "hosts/db-03.txt"}))
        + &line(
            "create_file",
            json!({"path": ANSWER, "content": "Host: db-03\nIP: 10.20.2.26\nRAM: 64 GB\n"}),
        )
        + &line("read_file", json!({ "path": ANSWER }))
        + &finish_line()
}

/// Rein's `task-search` searches of the run: (parameters, detail).
fn reins(r: &Ran) -> Vec<(Value, Value)> {
    r.rein_searches("task-search")
}

#[test]
fn the_first_prompt_shows_the_lines_of_the_task_s_rare_words_and_the_run_passes() {
    let r = run_on("search-host-inventory", &host_answer(), true);
    assert!(r.out.passed(), "{}", r.out.reason());
    // Rein's search is no step of the model's.
    assert_eq!(r.out.figures.steps, 4);
    let rein = reins(&r);
    assert_eq!(rein.len(), 1, "{rein:?}");
    assert_eq!(rein[0].0["path"], "hosts");
    assert_eq!(rein[0].1["outcome"], "executed");
    let first = r.model.prompt(0);
    assert!(first.contains("Result of Rein's search 1"), "{first}");
    assert!(first.contains("Software: postgres 12"), "{first}");
    assert!(first.contains("hosts/db-03.txt"), "{first}");
    // The near miss is shown as the tool gave it: nothing is ranked or left out.
    assert!(first.contains("upgraded from postgres 12"), "{first}");
    // The progress note knows the run has searched: read what it named.
    assert!(
        first.contains("read in full with read_file each file your search named"),
        "{first}"
    );
    let events = journal_events(&r.h.journal, r.out.run, "task_search");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["shown"], true, "{:?}", events[0]);
}

#[test]
fn without_the_lever_rein_searches_nothing() {
    let r = run_on("search-host-inventory", &host_answer(), false);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert!(reins(&r).is_empty());
    assert!(!r.model.prompt(0).contains("Rein's search"));
    assert!(journal_events(&r.h.journal, r.out.run, "task_search").is_empty());
}

#[test]
fn too_many_lines_narrow_the_words_to_those_few_files_hold() {
    let r = run_on("search-cert-expiry", &finish_line(), true);
    let rein = reins(&r);
    assert_eq!(rein.len(), 2, "{rein:?}");
    let second = rein[1].0["pattern"].as_str().unwrap();
    assert!(second.contains("cert_expires"), "{second}");
    assert!(!second.contains("|service|"), "{second}");
    let first = r.model.prompt(0);
    assert!(
        first.contains("not shown: most of them lines of words many"),
        "{first}"
    );
    assert!(first.contains("Result of Rein's search 2"), "{first}");
    assert!(first.contains("cert_expires: 2025-01-17"), "{first}");
    assert!(first.contains("services/pricing.yaml"), "{first}");
}

#[test]
fn the_judge_is_as_it_was_rein_s_search_reads_no_file() {
    // Answered from Rein's lines alone: inputs-read still needs db-03 read in full first.
    let script = line(
        "create_file",
        json!({"path": ANSWER, "content": "Host: db-03\nIP: 10.20.2.26\nRAM: 64 GB\n"}),
    ) + &line("read_file", json!({ "path": ANSWER }))
        + &finish_line();
    let r = run_on("search-host-inventory", &script, true);
    assert!(!r.out.passed());
    assert!(r.out.reason().contains("inputs-read"), "{}", r.out.reason());
}

#[test]
fn a_task_that_needs_every_input_is_not_searched() {
    let r = Ran::of(
        Harness::new("desk_task"),
        &finish_line(),
        &mut AllowAll,
        Policy::safe_default(),
        |o| {
            o.levers.task_search = true;
            o.limits.attempts = 1;
        },
    );
    assert!(reins(&r).is_empty());
    let events = journal_events(&r.h.journal, r.out.run, "task_search");
    assert_eq!(events.len(), 1);
    assert!(
        events[0]["not_applied"]
            .as_str()
            .unwrap()
            .contains("does not pick"),
        "{:?}",
        events[0]
    );
}

#[test]
fn the_words_are_the_description_s_never_a_check_s() {
    let tasks = [
        "search-budget-approval",
        "search-cert-expiry",
        "search-host-inventory",
        "search-hosting-renewal",
        "search-invoice-amount",
        "search-legacy-flag",
        "search-payment-timeout",
        "search-policy-clause",
    ];
    for task in tasks {
        let r = run_on(task, &finish_line(), true);
        let prompt = r.h.contract.mission.prompt.to_lowercase();
        let artifact = &r.h.contract.mission.required_artifact;
        let description = &prompt[..prompt.find(artifact.as_str()).unwrap()];
        let events = journal_events(&r.h.journal, r.out.run, "task_search");
        assert_eq!(events.len(), 1, "{task}");
        let calls = events[0]["calls"].as_array().unwrap();
        assert!(!calls.is_empty(), "{task}: {:?}", events[0]);
        for word in events[0]["words"].as_array().unwrap() {
            let word = word.as_str().unwrap().to_lowercase();
            assert!(description.contains(&word), "{task}: {word}");
        }
        // Each search is one of Rein's, journaled as the event says.
        assert_eq!(reins(&r).len(), calls.len(), "{task}");
    }
}

#[test]
fn a_denied_file_is_never_searched_by_rein() {
    let p =
        desk_policy("[[rule]]\ntool = \"*\"\npaths = [\"hosts/db-03.txt\"]\naction = \"deny\"\n");
    let r = run_with(
        Harness::desk_suite("search-host-inventory"),
        &finish_line(),
        &mut AllowAll,
        p,
        true,
    );
    assert!(!reins(&r).is_empty());
    let first = r.model.prompt(0);
    assert!(first.contains("skipped by policy"), "{first}");
    // The task lists every input by name; no line of Rein's search may come from db-03.
    assert!(
        !first.contains(r#"\"path\":\"hosts/db-03.txt\""#),
        "{first}"
    );
    assert!(!first.contains(r#"postgres 12\""#), "{first}");
    assert!(first.contains("upgraded from postgres 12"), "{first}");
}

#[test]
fn rein_s_search_is_asked_about_under_an_ask_rule_and_a_no_is_shown_as_such() {
    let p = desk_policy("[[rule]]\ntool = \"search_text\"\naction = \"ask\"\n");
    let mut approver = ScriptedApprover::new([ApprovalDecision::Deny {
        reason: "not now".into(),
    }]);
    let r = run_with(
        Harness::desk_suite("search-host-inventory"),
        &finish_line(),
        &mut approver,
        p,
        true,
    );
    let rein = reins(&r);
    assert_eq!(
        rein.len(),
        1,
        "a refused search is not made again: {rein:?}"
    );
    assert_eq!(rein[0].1["outcome"], "approval-required");
    assert_eq!(approver.seen.len(), 1);
    assert_eq!(approver.seen[0].tool, "search_text");
    let first = r.model.prompt(0);
    assert!(first.contains("search_text was not approved"), "{first}");
    assert!(!first.contains("Software: postgres"), "{first}");
}

#[test]
fn a_contract_that_judges_the_calls_keeps_them_the_model_s() {
    // The judge counts every executed call: Rein's search must not stand in for the model's.
    let h = Harness::desk_suite_mission("search-host-inventory", |m| {
        m["checks"].as_array_mut().unwrap().push(json!({
            "id": "searched", "kind": "actions_called", "tools": ["search_text"]
        }));
    });
    let r = run_with(
        h,
        &host_answer(),
        &mut AllowAll,
        Policy::safe_default(),
        true,
    );
    assert!(reins(&r).is_empty());
    assert!(
        !r.out.passed(),
        "the model never searched: {}",
        r.out.reason()
    );
    assert!(r.out.reason().contains("searched"), "{}", r.out.reason());
    let events = journal_events(&r.h.journal, r.out.run, "task_search");
    assert!(
        events[0]["not_applied"]
            .as_str()
            .unwrap()
            .contains("judges the run's calls"),
        "{:?}",
        events[0]
    );
}

#[test]
fn a_task_that_counts_every_file_is_not_searched() {
    // explore-archive-years picks among 20 inputs but needs none in particular: it counts them.
    let r = run_on("explore-archive-years", &finish_line(), true);
    assert!(reins(&r).is_empty());
    let events = journal_events(&r.h.journal, r.out.run, "task_search");
    assert!(
        events[0]["not_applied"]
            .as_str()
            .unwrap()
            .contains("no check names some inputs"),
        "{:?}",
        events[0]
    );
}

#[test]
fn rein_s_search_is_the_same_whichever_input_the_contract_wants() {
    // The contract's inputs_read check names the answer's file; Rein's words come from the
    // task's text alone, so naming another file there changes nothing the model is shown.
    let first_prompt = |wanted: &str| {
        let wanted = wanted.to_string();
        let h = Harness::desk_suite_mission("search-cert-expiry", move |m| {
            for c in m["checks"].as_array_mut().unwrap() {
                if c["kind"] == "inputs_read" {
                    c["paths"] = json!([wanted]);
                }
            }
        });
        let r = run_with(
            h,
            &finish_line(),
            &mut AllowAll,
            Policy::safe_default(),
            true,
        );
        assert!(!reins(&r).is_empty());
        r.model.prompt(0)
    };
    let pricing = first_prompt("services/pricing.yaml");
    assert!(pricing.contains("Result of Rein's search"), "{pricing}");
    assert_eq!(pricing, first_prompt("services/wishlist.yaml"));
}
