#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `wider-search` lever on the desk suite's search tasks: after a `search_text` call of the
//! model's that matched no line, Rein searches again for it through the gate (the glob dropped,
//! then the pattern's words), shows the model both results, and journals its calls as its own;
//! the judge is left as it was, and the policy holds for Rein's search as for the model's.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::{json, Value};
use support::{desk_policy, finish_line, line, Harness, Ran};

const ANSWER: &str = "out/answer.md";

fn run_on(h: Harness, script: &str, policy: Policy, wider_search: bool) -> Ran {
    Ran::of(h, script, &mut AllowAll, policy, |o| {
        o.levers = Levers {
            wider_search,
            find_inputs: true,
            ..Levers::DEFAULT
        };
        o.limits.attempts = 1;
    })
}

fn cert_expiry(script: &str, wider_search: bool) -> Ran {
    run_on(
        Harness::desk_suite("search-cert-expiry"),
        script,
        Policy::safe_default(),
        wider_search,
    )
}

/// The 1.5B's search on search-cert-expiry (`s8-search/`): the two YAML keys on one line, and
/// a date the task never gave.
fn yaml_search() -> String {
    line(
        "search_text",
        json!({"pattern": "tls: cert_expires: 2025-03-14", "path": "services/*.yaml", "glob": "*.yaml"}),
    )
}

fn answer() -> String {
    line(
        "create_file",
        json!({"path": ANSWER, "content": "Service: pricing\nOwner: emil@shop.example\nExpires: 2025-01-17\n"}),
    ) + &line("read_file", json!({ "path": ANSWER }))
        + &finish_line()
}

/// Rein's `wider-search` searches of the run: (parameters, detail).
fn reins(r: &Ran) -> Vec<(Value, Value)> {
    r.rein_searches("wider-search")
}

#[test]
fn a_search_that_matched_nothing_is_made_again_with_its_words_and_shown() {
    let script =
        yaml_search() + &line("read_file", json!({"path": "services/pricing.yaml"})) + &answer();
    let r = cert_expiry(&script, true);
    assert!(r.out.passed(), "{}", r.out.reason());
    // The model's steps alone count as its steps; Rein's search is journaled as Rein's.
    assert_eq!(r.out.figures.steps, 5);
    let rein = reins(&r);
    assert_eq!(rein.len(), 1, "{rein:?}");
    assert_eq!(
        rein[0].0,
        json!({"pattern": "tls|cert_expires|2025\\-03\\-14", "literal": false, "case_insensitive": true, "path": "services/*.yaml", "glob": "*.yaml"})
    );
    assert_eq!(rein[0].1["outcome"], "executed", "{:?}", rein[0].1);
    let after = r.model.prompt(1);
    assert!(
        after.contains("Nothing matched, so Rein searched again for you (lever wider-search): no line held the whole pattern"),
        "{after}"
    );
    // The line the task needs is among those shown, with its file.
    assert!(after.contains("services/pricing.yaml"), "{after}");
    assert!(after.contains("cert_expires: 2025-01-17"), "{after}");
    // Shown after the model's own result, before the progress note.
    let own = after.rfind("Result of step 1 (search_text)").unwrap();
    let rein = after.rfind("Result of Rein's search").unwrap();
    let note = after.rfind("Progress: ").unwrap();
    assert!(own < rein && rein < note, "{after}");
}

#[test]
fn without_the_lever_the_model_sees_its_empty_result_alone() {
    let script =
        yaml_search() + &line("read_file", json!({"path": "services/pricing.yaml"})) + &answer();
    let r = cert_expiry(&script, false);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert!(reins(&r).is_empty());
    let after = r.model.prompt(1);
    assert!(!after.contains("Rein searched again"), "{after}");
    assert!(!after.contains("2025-01-17"), "{after}");
}

#[test]
fn a_glob_that_fit_no_file_is_dropped_then_the_words_are_searched() {
    // The 1.5B's call on search-budget-approval: `*.eml` over files named `01.eml.txt`.
    let script = line(
        "search_text",
        json!({"pattern": "approved amount", "path": "mail", "glob": "*.eml"}),
    );
    let r = run_on(
        Harness::desk_suite("search-budget-approval"),
        &script,
        Policy::safe_default(),
        true,
    );
    let rein = reins(&r);
    assert_eq!(rein.len(), 2, "{rein:?}");
    assert_eq!(
        rein[0].0,
        json!({"pattern": "approved amount", "path": "mail"})
    );
    assert_eq!(rein[1].0["pattern"], "approved|amount");
    assert_eq!(rein[1].0["path"], "mail");
    assert!(rein[1].0.get("glob").is_none());
    let after = r.model.prompt(1);
    assert!(after.contains("the glob matched no file name"), "{after}");
    assert!(after.contains("mail/17.eml.txt"), "{after}");
    assert!(after.contains("increases by 15,000 EUR"), "{after}");
}

#[test]
fn a_search_that_matched_is_left_alone() {
    let script = line(
        "search_text",
        json!({"pattern": "cert_expires: 2025-01", "literal": true}),
    ) + &line("read_file", json!({"path": "services/pricing.yaml"}))
        + &answer();
    let r = cert_expiry(&script, true);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert!(reins(&r).is_empty());
    assert!(!r.model.prompt(1).contains("Rein searched again"));
}

#[test]
fn the_judge_is_as_it_was_the_wider_search_does_not_read_the_file() {
    // Answered from Rein's search lines alone: the inputs-read check still needs the file read
    // in full before the write.
    let r = cert_expiry(&(yaml_search() + &answer()), true);
    assert!(!r.out.passed());
    assert!(r.out.reason().contains("inputs-read"), "{}", r.out.reason());
}

#[test]
fn the_policy_holds_for_rein_s_search_a_denied_file_is_never_searched() {
    let policy = desk_policy(
        "[[rule]]\ntool = \"*\"\npaths = [\"services/pricing.yaml\"]\naction = \"deny\"\n",
    );
    let r = run_on(
        Harness::desk_suite("search-cert-expiry"),
        &yaml_search(),
        policy,
        true,
    );
    let rein = reins(&r);
    assert_eq!(rein.len(), 1, "{rein:?}");
    let after = r.model.prompt(1);
    assert!(after.contains("Rein searched again"), "{after}");
    assert!(after.contains("skipped by policy"), "{after}");
    // The task names every input; no result line may come from the denied one.
    assert!(
        !after.contains(r#"\"path\":\"services/pricing.yaml\""#),
        "{after}"
    );
    assert!(
        after.contains(r#"\"path\":\"services/mailer.yaml\""#),
        "{after}"
    );
    assert!(!after.contains("2025-01-17"), "{after}");
    assert!(!after.contains("emil@"), "{after}");
}

#[test]
fn a_search_the_gate_refused_is_not_made_again() {
    let script = line(
        "search_text",
        json!({"pattern": "tls cert", "path": "../outside"}),
    );
    let r = cert_expiry(&script, true);
    assert!(reins(&r).is_empty());
    assert!(!r.model.prompt(1).contains("Rein searched again"));
}
