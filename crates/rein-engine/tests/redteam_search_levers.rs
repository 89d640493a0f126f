#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of the levers `wider-search`, `answer-lines` and `read-cited`, and of the line
//! `find-inputs` ended the task with (commits db82472, 0f520a6, 4513cce). Each probe asserts the
//! behaviour the lever claims or must keep: a hostile user (policies with deny, ask and
//! `hide_names`, symlinks, odd paths and globs, task prompts crafted with regex characters,
//! quotes and other files' templates, inputs sharing a stem or a path suffix) and a hostile
//! model (odd patterns, repeated calls, texts naming many inputs, steps that do not run).
//! Probes that found a defect assert the correct behaviour and are ignored with the defect
//! named; the rest are kept as regression tests. Defects found on 0f520a6 and fixed since (the
//! tests now pass): Rein's words search made twice or split again, a glob said to match no
//! name when policy skipped its files, a longer path naming an input, a hold counted as a step
//! without progress and its asked-for write as a repeat (also drawn away by repeat-escape), a
//! hold in a task with no inputs_read check, and find-inputs' task line (search_text named
//! without the tool; "only a few inputs" told to a counting task).

#[path = "agent_support/mod.rs"]
mod support;

use std::path::PathBuf;

use rein_engine::agent::{AgentEvent, Levers};
use rein_engine::gate::{AllowAll, ApprovalDecision, Approver, ScriptedApprover};
use rein_engine::policy::Policy;
use serde_json::{json, Value};
use support::{
    caps, desk_policy, finish_line, journal_events, line, set_prompt, user_messages, Harness, Ran,
};

const ANSWER: &str = "out/answer.md";
const NOTE: &str = "notes/2024-05-14-ops-sync.md";
/// The first words of the line `find-inputs` ended a picked-inputs task with in 0f520a6.
const FIND_FIRST_START: &str = "Only a few of these inputs hold what the task asks for.";

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

fn levers(f: impl FnOnce(&mut Levers)) -> Levers {
    let mut l = Levers::DEFAULT;
    f(&mut l);
    l
}

fn run_with(
    h: Harness,
    script: &str,
    approver: &mut dyn Approver,
    policy: Policy,
    levers: Levers,
) -> Ran {
    Ran::of(h, script, approver, policy, |o| {
        o.levers = levers;
        o.limits.attempts = 1;
    })
}

fn run_safe(h: Harness, script: &str, levers: Levers) -> Ran {
    run_with(h, script, &mut AllowAll, Policy::safe_default(), levers)
}

/// The last user message of request `i` (the feedback of step `i`, from 1).
fn feedback(r: &Ran, i: usize) -> String {
    user_messages(&r.model.requests[i]).last().unwrap().clone()
}

/// The task message: the first user message of the first request.
fn task_text(r: &Ran) -> String {
    user_messages(&r.model.requests[0])[0].clone()
}

/// (action, outcome) of the model's own steps only (Rein's calls are step 0).
fn model_outcomes(r: &Ran) -> Vec<(String, String)> {
    support::model_outcomes(&r.events)
}

/// Rein's `wider-search` searches of the run: (parameters, detail).
fn reins(r: &Ran) -> Vec<(Value, Value)> {
    r.rein_searches("wider-search")
}

/// The call ids of Rein's calls, from the events.
fn rein_call_ids(r: &Ran) -> Vec<String> {
    r.events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Step(s) if s.step == 0 => s.call_id.clone(),
            _ => None,
        })
        .collect()
}

fn search(params: Value) -> String {
    line("search_text", params)
}

fn read(path: &str) -> String {
    line("read_file", json!({ "path": path }))
}

fn write(path: &str, content: &str) -> String {
    line("create_file", json!({"path": path, "content": content}))
}

fn wider() -> Levers {
    levers(|l| l.wider_search = true)
}

/// search-cert-expiry under `policy`, with `wider-search` on, every change allowed.
fn cert_wider(script: &str, policy: Policy) -> Ran {
    run_with(
        Harness::desk_suite("search-cert-expiry"),
        script,
        &mut AllowAll,
        policy,
        wider(),
    )
}

fn cited() -> Levers {
    levers(|l| l.read_cited = true)
}

fn renewal_answer() -> String {
    write(
        ANSWER,
        &format!("File: {NOTE}\nTerm: 24 months\nMonthly cost: 1,850 EUR\n"),
    )
}

fn read_back_and_finish() -> String {
    read(ANSWER) + &finish_line()
}

// ---------------------------------------------------------------------------------------------
// wider-search
// ---------------------------------------------------------------------------------------------

#[test]
fn wider_search_never_repeats_its_own_words_search() {
    // Two words no service file holds, no glob: the designed widening is one words search.
    let script = search(json!({"pattern": "zebra quokka", "path": "services"}));
    let r = cert_wider(&script, Policy::safe_default());
    let rein = reins(&r);
    assert!(!rein.is_empty(), "the words were searched");
    assert_eq!(rein[0].0["pattern"], "zebra|quokka");
    for (i, a) in rein.iter().enumerate() {
        for b in &rein[i + 1..] {
            assert_ne!(a.0, b.0, "Rein made the same search twice: {rein:?}");
        }
    }
    assert_eq!(rein.len(), 1, "{rein:?}");
}

#[test]
fn wider_search_splits_only_the_model_s_pattern_never_its_own() {
    // One hyphenated word the model gave: the words search is that word, ignoring case.
    let script = search(json!({"pattern": "cert-expires", "path": "services"}));
    let r = cert_wider(&script, Policy::safe_default());
    let rein = reins(&r);
    assert!(!rein.is_empty());
    assert_eq!(rein[0].0["pattern"], "cert\\-expires");
    assert_eq!(rein.len(), 1, "{rein:?}");
}

#[test]
fn a_glob_whose_files_policy_skipped_is_not_said_to_match_no_name() {
    // Every service file is listed by name but never read (deny, hide_names = false): the
    // model's glob matched all 22 names, policy skipped them.
    let p = desk_policy(
        "[[rule]]\ntool = \"read_file\"\npaths = [\"services/**\"]\naction = \"deny\"\nhide_names = false\n",
    );
    let script = search(json!({"pattern": "cert_expires: 2025-01", "glob": "*.yaml"}));
    let r = cert_wider(&script, p);
    let after = feedback(&r, 1);
    assert!(after.contains("skipped by policy"), "{after}");
    // What holds already: no content of a skipped file reaches the model.
    assert!(!after.contains("2025-01-17"), "{after}");
    assert!(
        !after.contains("the glob matched no file name"),
        "Rein says the glob matched no name; it matched every file, policy skipped them: {after}"
    );
}

#[test]
fn a_file_denied_to_read_file_is_never_shown_by_rein_s_search() {
    // A deny of read_file covers search_text (a content reader); with or without its name.
    for hide in ["", "hide_names = false\n"] {
        let p = desk_policy(&format!(
            "[[rule]]\ntool = \"read_file\"\npaths = [\"services/pricing.yaml\"]\naction = \"deny\"\n{hide}"
        ));
        let script =
            search(json!({"pattern": "tls: cert_expires: 2025-03-14", "path": "services"}));
        let r = cert_wider(&script, p);
        let rein = reins(&r);
        let after = feedback(&r, 1);
        assert_eq!(rein.len(), 1, "{hide}: {rein:?} {after}");
        assert!(after.contains("services/mailer.yaml"), "{hide}: {after}");
        assert!(!after.contains("2025-01-17"), "{hide}: {after}");
        assert!(!after.contains("emil@"), "{hide}: {after}");
    }
}

#[test]
#[ignore = "KNOWN LIMIT (README, wider-search): a file the policy hides anywhere in the folder is counted in skipped_by_policy whatever the glob, and Rein keeps a glob when the policy skipped files, so an empty glob is not dropped there"]
fn an_unrelated_hidden_file_does_not_stop_the_glob_from_being_dropped() {
    // The policy hides pricing.yaml (deny hides names): it counts as skipped whatever the
    // glob, so it says nothing of the glob; `*.yml` matched none of the 21 visible names.
    let p = desk_policy(
        "[[rule]]\ntool = \"*\"\npaths = [\"services/pricing.yaml\"]\naction = \"deny\"\n",
    );
    let script = search(
        json!({"pattern": "tls: cert_expires: 2025-03-14", "path": "services", "glob": "*.yml"}),
    );
    let r = cert_wider(&script, p);
    let rein = reins(&r);
    let after = feedback(&r, 1);
    assert!(!rein.is_empty(), "the glob was never dropped: {after}");
    assert!(rein[0].0.get("glob").is_none(), "{rein:?}");
    assert!(!after.contains("2025-01-17"), "{after}");
}

#[test]
fn rein_s_search_is_asked_about_under_an_ask_rule_and_a_no_ends_the_widening() {
    let p = desk_policy("[[rule]]\ntool = \"search_text\"\naction = \"ask\"\n");
    let mut approver = ScriptedApprover::new([
        ApprovalDecision::AllowOnce,
        ApprovalDecision::Deny {
            reason: "not that one".into(),
        },
    ]);
    let script = search(json!({"pattern": "approved amount", "path": "mail", "glob": "*.eml"}));
    let r = run_with(
        Harness::desk_suite("search-budget-approval"),
        &script,
        &mut approver,
        p,
        wider(),
    );
    let rein = reins(&r);
    assert_eq!(
        rein.len(),
        1,
        "a denied search is not widened further: {rein:?}"
    );
    // A person's no ends a call as approval-required (the gate's word for it).
    assert_eq!(rein[0].1["outcome"], "approval-required", "{:?}", rein[0].1);
    assert_eq!(
        approver.seen.len(),
        2,
        "the person was asked about Rein's call too"
    );
    assert_eq!(approver.seen[1].tool, "search_text");
    let after = feedback(&r, 1);
    assert!(!after.contains("increases by 15,000 EUR"), "{after}");
}

#[test]
fn without_anyone_to_ask_rein_s_search_ends_as_approval_required_and_the_run_goes_on() {
    let p = desk_policy("[[rule]]\ntool = \"search_text\"\naction = \"ask\"\n");
    let mut approver = ScriptedApprover::new([ApprovalDecision::AllowOnce]);
    let script = search(json!({"pattern": "approved amount", "path": "mail", "glob": "*.eml"}))
        + &read("mail/17.eml.txt");
    let r = run_with(
        Harness::desk_suite("search-budget-approval"),
        &script,
        &mut approver,
        p,
        wider(),
    );
    let rein = reins(&r);
    assert_eq!(rein.len(), 1, "{rein:?}");
    assert_eq!(rein[0].1["outcome"], "approval-required", "{:?}", rein[0].1);
    // Rein's call never stops the run as the model's own would: the model's next step ran.
    let own = model_outcomes(&r);
    assert_eq!(own[1], ("read_file".into(), "executed".into()), "{own:?}");
}

#[test]
fn a_symlink_out_of_the_workspace_is_never_searched_by_rein() {
    let h = Harness::desk_suite("search-cert-expiry");
    let outside = h.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        outside.join("secret.yaml"),
        "zebra_secret: quokka-token-1234\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, h.workspace.join("services/zz-link")).unwrap();
    std::os::unix::fs::symlink(
        outside.join("secret.yaml"),
        h.workspace.join("services/zz-file.yaml"),
    )
    .unwrap();
    let script =
        search(json!({"pattern": "quokka token", "path": "services", "glob": "*.nothing"}))
            + &search(json!({"pattern": "quokka token", "path": "services/zz-link/*.nothing"}));
    let r = run_safe(h, &script, wider());
    for i in 1..r.model.requests.len() {
        let after = feedback(&r, i);
        assert!(!after.contains("quokka-token-1234"), "request {i}: {after}");
        assert!(!after.contains("zebra_secret"), "request {i}: {after}");
    }
    for (params, _) in reins(&r) {
        let path = params["path"].as_str().unwrap_or(".");
        assert!(!path.starts_with('/') && !path.contains(".."), "{params}");
    }
}

#[test]
fn a_search_out_of_the_workspace_is_not_made_again() {
    // Each of these fails at the gate (or the tool): nothing ran, so nothing is widened.
    let paths = [
        "../*",
        "/etc/*.conf",
        "services/../../*.yaml",
        "services\\*.yaml",
        "~/*",
        "services/**/../../*",
    ];
    let script: String = paths
        .iter()
        .map(|p| search(json!({"pattern": "root password", "path": p})))
        .collect();
    let r = cert_wider(&script, Policy::safe_default());
    let own = model_outcomes(&r);
    assert_eq!(own.len(), paths.len(), "{own:?}");
    for (i, (tool, outcome)) in own.iter().enumerate() {
        assert_eq!(tool, "search_text");
        assert_ne!(outcome, "executed", "{}: {own:?}", paths[i]);
    }
    assert!(reins(&r).is_empty(), "{:?}", reins(&r));
}

/// Patterns a hostile model may give: broken regexes, escapes, Unicode with case folding, only
/// punctuation, numbers, very long words.
fn odd_patterns() -> Vec<Value> {
    vec![
        json!({"pattern": "\\"}),
        json!({"pattern": "(unclosed group"}),
        json!({"pattern": "Größe Straße ÄÖÜ"}),
        json!({"pattern": "İstanbul ǅemal ﬃx café naïve"}),
        json!({"pattern": "😀🎉 emoji words 🎉"}),
        json!({"pattern": "--- @@@ ,,, ... |||"}),
        json!({"pattern": "\\b\\w+\\d{3,}\\b"}),
        json!({"pattern": "1,234.56|€ 9.99 (total)"}),
        json!({"pattern": "a.b.c.d.e.f.g.h"}),
        json!({"pattern": "C:\\Temp\\some file", "literal": true}),
        json!({"pattern": "\\p{Greek}+ \\x41BCD \\u{1F600}"}),
        json!({"pattern": format!("{} {}", "ǅ".repeat(100), "ß".repeat(100)), "case_insensitive": false}),
        json!({"pattern": "y".repeat(200)}),
        json!({"pattern": "[[:alpha:]]+ (?i)zebra (?P<n>quokka)"}),
        json!({"pattern": "nul\u{0}byte zebra"}),
        json!({"pattern": "@@@-x-@@@ --a-- @b@"}),
    ]
}

#[test]
fn no_pattern_makes_rein_panic_or_search_more_than_twice() {
    for params in odd_patterns() {
        let mut params = params;
        params["path"] = json!("services");
        let r = cert_wider(&search(params.clone()), Policy::safe_default());
        let rein = reins(&r);
        assert!(rein.len() <= 2, "{params}: {rein:?}");
        for (p, d) in &rein {
            // Rein's own words search is always a valid regular expression.
            assert_ne!(
                d["outcome"], "invalid",
                "{params}: Rein's call {p} was refused: {d}"
            );
            assert_eq!(p["path"], "services", "{params}: {p}");
        }
    }
}

#[test]
fn rein_never_makes_a_search_the_tool_refuses_for_its_size() {
    for word in ["x".repeat(999), "ǅ".repeat(600)] {
        let params = json!({"pattern": word, "path": "services"});
        let r = cert_wider(&search(params.clone()), Policy::safe_default());
        assert_eq!(model_outcomes(&r)[0].1, "executed");
        for (p, d) in reins(&r) {
            assert_ne!(
                d["outcome"], "invalid",
                "Rein's call was refused: {}",
                d["reason"]
            );
            assert!(p["pattern"].is_string());
        }
    }
}

#[test]
fn a_model_repeating_an_empty_search_gets_at_most_two_searches_per_call_each_with_its_own_id() {
    let call = search(json!({"pattern": "approved amount", "path": "mail", "glob": "*.eml"}));
    let script = call.repeat(3);
    let r = run_safe(
        Harness::desk_suite("search-budget-approval"),
        &script,
        wider(),
    );
    assert_eq!(
        model_outcomes(&r).len(),
        3,
        "Rein's searches are no steps of the model's"
    );
    let rein = reins(&r);
    assert!(rein.len() <= 6, "{rein:?}");
    let ids = rein_call_ids(&r);
    assert_eq!(ids.len(), rein.len());
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
    // Every Rein call ran afresh (never a replay of an earlier id).
    for (_, d) in &rein {
        assert_eq!(d["outcome"], "executed", "{d}");
    }
}

#[test]
fn a_search_cut_by_the_walk_cap_is_never_widened() {
    // More entries than one walk takes: what was not searched is unknown, so nothing is
    // widened, with or without a glob.
    let h = Harness::desk_suite("search-cert-expiry");
    let bulk = h.workspace.join("bulk");
    std::fs::create_dir_all(&bulk).unwrap();
    for i in 0..20_050 {
        std::fs::write(bulk.join(format!("f{i}.txt")), "x\n").unwrap();
    }
    let script = search(json!({"pattern": "zebra quokka", "path": "bulk"}))
        + &search(json!({"pattern": "zebra quokka", "path": "bulk", "glob": "*.nothing"}));
    let r = run_safe(h, &script, wider());
    let own = model_outcomes(&r);
    assert_eq!(own.len(), 2, "{own:?}");
    assert!(
        feedback(&r, 1).contains("The workspace walk stopped"),
        "{}",
        feedback(&r, 1)
    );
    assert!(reins(&r).is_empty(), "{:?}", reins(&r));
}

#[test]
fn a_search_of_one_file_whose_words_show_its_lines_is_still_no_read_for_the_judge() {
    let script = search(
        json!({"pattern": "service owner port replicas tls cert_expires", "literal": true, "path": "services/pricing.yaml"}),
    ) + &write(
        ANSWER,
        "Service: pricing\nOwner: emil@shop.example\nExpires: 2025-01-17\n",
    ) + &read_back_and_finish();
    let r = cert_wider(&script, Policy::safe_default());
    assert_eq!(reins(&r).len(), 1);
    assert!(feedback(&r, 1).contains("cert_expires: 2025-01-17"));
    assert!(!r.out.passed());
    assert!(r.out.reason().contains("inputs-read"), "{}", r.out.reason());
}

#[test]
fn a_search_that_did_not_run_or_matched_is_never_widened() {
    let script = search(json!({"pattern": "(bad", "path": "services"}))
        + &search(json!({"pattern": "zebra", "path": "services", "glob": "["}))
        + &search(json!({"pattern": "cert_expires", "path": "services"}))
        + &search(json!({"pattern": "zebra", "path": "no-such-folder"}));
    let r = cert_wider(&script, Policy::safe_default());
    assert!(reins(&r).is_empty(), "{:?}", reins(&r));
}

// ---------------------------------------------------------------------------------------------
// read-cited
// ---------------------------------------------------------------------------------------------

/// search-hosting-renewal with a copy of the note as another input, `old/<NOTE>`: the two share
/// a stem, so only a path names either.
fn renewal_with_old_copy() -> Harness {
    Harness::desk_suite_edited(
        "search-hosting-renewal",
        |fixtures| {
            let from = fixtures.join(NOTE);
            let to = fixtures.join("old").join(NOTE);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(from, to).unwrap();
        },
        |m| {
            m["inputs"]
                .as_array_mut()
                .unwrap()
                .push(json!(format!("old/{NOTE}")));
        },
    )
}

#[test]
fn a_longer_path_ending_in_an_input_s_path_does_not_name_that_input() {
    let old = format!("old/{NOTE}");
    let script = read(&old)
        + &write(
            ANSWER,
            &format!("File: {old}\nTerm: 24 months\nMonthly cost: 1,850 EUR\n"),
        );
    let r = run_safe(renewal_with_old_copy(), &script, cited());
    let events = journal_events(&r.h.journal, r.out.run, "read_cited");
    assert!(
        events.is_empty(),
        "held for an input the text did not name: {events:?}"
    );
    assert_eq!(
        model_outcomes(&r)[1],
        ("create_file".into(), "executed".into())
    );
}

#[test]
fn an_input_named_with_a_leading_dot_slash_is_still_named() {
    let script = write(
        ANSWER,
        &format!("File: ./{NOTE}\nTerm: 24 months\nMonthly cost: 1,850 EUR\n"),
    ) + &read(NOTE)
        + &write(
            ANSWER,
            &format!("File: ./{NOTE}\nTerm: 24 months\nMonthly cost: 1,850 EUR\n"),
        )
        + &read_back_and_finish();
    let r = run_safe(
        Harness::desk_suite("search-hosting-renewal"),
        &script,
        cited(),
    );
    let events = journal_events(&r.h.journal, r.out.run, "read_cited");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["unread"], json!([NOTE]));
}

#[test]
fn inputs_sharing_a_stem_are_named_by_their_path_only() {
    // "2024-05-14-ops-sync" is the stem of two inputs: the stem alone names neither.
    let script = write(
        ANSWER,
        "File: the 2024-05-14-ops-sync note\nTerm: 24 months\nMonthly cost: 1,850 EUR\n",
    );
    let r = run_safe(renewal_with_old_copy(), &script, cited());
    assert!(journal_events(&r.h.journal, r.out.run, "read_cited").is_empty());
    assert_eq!(model_outcomes(&r)[0].1, "executed");
    // Its exact path does name it.
    let r = run_safe(renewal_with_old_copy(), &renewal_answer(), cited());
    let events = journal_events(&r.h.journal, r.out.run, "read_cited");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["unread"], json!([NOTE]), "{events:?}");
}

#[test]
fn a_read_cited_hold_is_no_step_without_progress() {
    // Seven steps that did not run (reads of missing files), then the write the lever holds:
    // the hold is Rein's, and must not be the step that ends the run.
    let misses: String = (1..=7).map(|i| read(&format!("missing/{i}.txt"))).collect();
    let script =
        misses + &renewal_answer() + &read(NOTE) + &renewal_answer() + &read_back_and_finish();
    let r = run_safe(
        Harness::desk_suite("search-hosting-renewal"),
        &script,
        cited(),
    );
    let capped = caps(&r.events);
    assert!(
        !capped.iter().any(|(cap, _)| cap == "no_progress"),
        "{capped:?}"
    );
    assert!(r.out.passed(), "{}", r.out.reason());
}

#[test]
fn the_write_again_after_a_hold_is_not_called_a_repeat() {
    let script = renewal_answer() + &read(NOTE) + &renewal_answer() + &read_back_and_finish();
    let r = run_safe(
        Harness::desk_suite("search-hosting-renewal"),
        &script,
        cited(),
    );
    assert!(r.out.passed(), "{}", r.out.reason());
    let own = model_outcomes(&r);
    assert_eq!(own[2], ("create_file".into(), "executed".into()), "{own:?}");
    let after = feedback(&r, 3);
    assert!(
        !after.contains("You made exactly this call already"),
        "the held write never ran; its repeat is what the hold asked for: {after}"
    );
}

#[test]
fn repeat_escape_leaves_the_write_a_hold_asked_for_alone() {
    let script = renewal_answer() + &read(NOTE) + &renewal_answer() + &read_back_and_finish();
    let r = run_safe(
        Harness::desk_suite("search-hosting-renewal"),
        &script,
        levers(|l| {
            l.read_cited = true;
            l.repeat_escape = true;
        }),
    );
    let own = model_outcomes(&r);
    assert_eq!(own[2], ("create_file".into(), "executed".into()), "{own:?}");
    assert!(journal_events(&r.h.journal, r.out.run, "repeat_escape").is_empty());
    assert!(r.out.passed(), "{}", r.out.reason());
}

#[test]
fn a_task_without_an_inputs_read_check_is_not_held() {
    let gold = std::fs::read_to_string(
        support::missions_dir()
            .join("../suites/desk/explore-project-tree/judge/gold/files/out/tree.md"),
    )
    .unwrap();
    let script = line("find_files", json!({"pattern": "**/*", "path": "app"}))
        + &write("out/tree.md", &gold)
        + &read("out/tree.md")
        + &finish_line();
    let r = run_safe(
        Harness::desk_suite("explore-project-tree"),
        &script,
        cited(),
    );
    let events = journal_events(&r.h.journal, r.out.run, "read_cited");
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(model_outcomes(&r)[1].1, "executed");
    assert!(r.out.passed(), "{}", r.out.reason());
}

/// The hold's text in a feedback message (its reason and the next call it names), with the
/// inputs it names replaced by `*`.
fn hold_wording(after: &str, named: &[&str]) -> String {
    let at = after.find("held by Rein").expect("a hold");
    let end = after[at..].find("}}").expect("the hold's next call") + at + "}}".len();
    let mut said = after[at..end].to_string();
    for n in named {
        said = said.replace(n, "*");
    }
    said
}

#[test]
fn a_hold_names_exactly_the_inputs_the_text_named_and_reads_alike_for_any_input() {
    // Decoys named by stem and by path; the input the judge needs (pricing) is not named.
    let decoys = write(
        ANSWER,
        "Service: accounts\nOwner: see services/billing.yaml\nExpires: 2025-01-17\n",
    );
    let r = run_safe(Harness::desk_suite("search-cert-expiry"), &decoys, cited());
    let events = journal_events(&r.h.journal, r.out.run, "read_cited");
    assert_eq!(
        events[0]["unread"],
        json!(["services/accounts.yaml", "services/billing.yaml"])
    );
    let decoy_hold = hold_wording(&feedback(&r, 1), &[]);
    assert!(!decoy_hold.contains("pricing"), "{decoy_hold}");
    // One decoy alone, then the needed input alone: the hold reads the same either way, so
    // it says nothing of which file holds the answer.
    let one = |service: &str| {
        let script = write(
            ANSWER,
            &format!("Service: {service}\nOwner: x@shop.example\nExpires: 2025-01-17\n"),
        );
        let r = run_safe(Harness::desk_suite("search-cert-expiry"), &script, cited());
        let path = format!("services/{service}.yaml");
        hold_wording(&feedback(&r, 1), &[path.as_str()])
    };
    assert_eq!(one("accounts"), one("pricing"));
}

#[test]
fn writes_to_another_file_are_never_held_and_any_spelling_of_the_deliverable_is() {
    let other = write(
        "out/notes.md",
        "candidates: pricing, accounts, services/billing.yaml\n",
    );
    let r = run_safe(Harness::desk_suite("search-cert-expiry"), &other, cited());
    assert_eq!(
        model_outcomes(&r)[0],
        ("create_file".into(), "executed".into())
    );
    assert!(journal_events(&r.h.journal, r.out.run, "read_cited").is_empty());
    let spelled = write(
        "./out//answer.md",
        "Service: pricing\nOwner: emil@shop.example\nExpires: 2025-01-17\n",
    );
    let r = run_safe(Harness::desk_suite("search-cert-expiry"), &spelled, cited());
    assert_eq!(model_outcomes(&r)[0].1, "invalid");
    assert_eq!(
        journal_events(&r.h.journal, r.out.run, "read_cited")[0]["unread"],
        json!(["services/pricing.yaml"])
    );
}

#[test]
fn a_write_held_three_times_goes_through_the_fourth_and_the_judge_still_fails_it() {
    // The model ignores the hold and writes the same text again without reading.
    let answer = write(
        ANSWER,
        "Service: pricing\nOwner: emil@shop.example\nExpires: 2025-01-17\n",
    );
    let script = answer.repeat(4) + &read_back_and_finish();
    let r = run_safe(Harness::desk_suite("search-cert-expiry"), &script, cited());
    let own: Vec<String> = model_outcomes(&r).into_iter().map(|(_, o)| o).collect();
    assert_eq!(
        own[..4],
        ["invalid", "invalid", "invalid", "executed"],
        "{own:?}"
    );
    assert_eq!(
        journal_events(&r.h.journal, r.out.run, "read_cited").len(),
        3
    );
    assert!(!r.out.passed());
    assert!(r.out.reason().contains("inputs-read"), "{}", r.out.reason());
}

#[test]
fn a_model_naming_new_inputs_each_write_is_held_at_most_three_times_per_input_and_then_writes() {
    // Each write names one more unread input, then the last text is written again and again.
    let services = ["accounts", "auth", "billing"];
    let text =
        |names: &str| format!("Service: {names}\nOwner: x@shop.example\nExpires: 2025-01-17\n");
    let mut script = String::new();
    for i in 1..=services.len() {
        script += &write(ANSWER, &text(&services[..i].join(", ")));
    }
    script += &write(ANSWER, &text(&services.join(", "))).repeat(4);
    let r = run_safe(Harness::desk_suite("search-cert-expiry"), &script, cited());
    let own = model_outcomes(&r);
    let first_run = own
        .iter()
        .position(|(_, o)| o == "executed")
        .unwrap_or_else(|| panic!("no write went through: {own:?}"));
    assert!(
        own[..first_run].iter().all(|(_, o)| o == "invalid"),
        "{own:?}"
    );
    let events = journal_events(&r.h.journal, r.out.run, "read_cited");
    assert_eq!(events.len(), first_run);
    for service in services {
        let path = format!("services/{service}.yaml");
        let holds = events
            .iter()
            .filter(|e| {
                e["unread"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|u| u == &json!(path))
            })
            .count();
        assert!(holds <= 3, "{path} held {holds} writes: {events:?}");
    }
}

#[test]
fn a_read_that_failed_for_its_arguments_does_not_end_the_holds_of_its_input() {
    let script = line("read_file", json!({"path": NOTE, "start_line": 9999}))
        + &renewal_answer()
        + &read(NOTE)
        + &renewal_answer()
        + &read_back_and_finish();
    let r = run_safe(
        Harness::desk_suite("search-hosting-renewal"),
        &script,
        cited(),
    );
    let own = model_outcomes(&r);
    assert_eq!(own[0], ("read_file".into(), "invalid".into()), "{own:?}");
    assert_eq!(
        own[1],
        ("create_file".into(), "invalid".into()),
        "the note is readable: the write naming it must be held: {own:?}"
    );
    assert!(r.out.passed(), "{}", r.out.reason());
}

#[test]
fn an_input_hidden_by_policy_holds_one_write_and_never_blocks_the_run() {
    let p = desk_policy(
        "[[rule]]\ntool = \"*\"\npaths = [\"services/pricing.yaml\"]\naction = \"deny\"\n",
    );
    let answer = write(
        ANSWER,
        "Service: pricing\nOwner: emil@shop.example\nExpires: 2025-01-17\n",
    );
    let script = answer.clone() + &read("services/pricing.yaml") + &answer;
    let r = run_with(
        Harness::desk_suite("search-cert-expiry"),
        &script,
        &mut AllowAll,
        p,
        cited(),
    );
    let own = model_outcomes(&r);
    assert_eq!(
        own.iter().map(|(_, o)| o.as_str()).collect::<Vec<_>>(),
        ["invalid", "denied", "executed"],
        "{own:?}"
    );
}

#[test]
fn unicode_and_long_texts_are_read_without_panic_and_letters_bind_words() {
    // A letter (any script) next to a stem makes another word; CJK, combining marks and
    // case-changing letters do not break the scan.
    let text = format!(
        "Service: pricingä Äaccounts billingß\nOwner: İstanbul ǅ ﬃ 東京 e\u{301}\nExpires: 2025-01-17\n{}",
        "ÄÖÜ ß İ ǅ 😀 ".repeat(2_000)
    );
    let r = run_safe(
        Harness::desk_suite("search-cert-expiry"),
        &write(ANSWER, &text),
        cited(),
    );
    assert!(journal_events(&r.h.journal, r.out.run, "read_cited").is_empty());
    assert_eq!(model_outcomes(&r)[0].1, "executed");
    // The same long text with a stem as a word at its very end is held.
    let r = run_safe(
        Harness::desk_suite("search-cert-expiry"),
        &write(ANSWER, &format!("{text}(pricing)")),
        cited(),
    );
    assert_eq!(
        journal_events(&r.h.journal, r.out.run, "read_cited")[0]["unread"],
        json!(["services/pricing.yaml"])
    );
}

// ---------------------------------------------------------------------------------------------
// answer-lines
// ---------------------------------------------------------------------------------------------

fn task_dir(task: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../suites/desk")
        .join(task)
}

/// The tool branches of the first request of a constrained run of `h`'s mission with
/// `answer-lines` on; every schema the run sent must be one llguidance builds.
fn offered_all(h: &Harness) -> Vec<Value> {
    support::first_offered_branches(h, levers(|l| l.answer_lines = true))
}

/// `tool`'s parameters schema among `branches` (`None` when the tool is not offered).
fn params_of(branches: &[Value], tool: &str) -> Option<Value> {
    branches
        .iter()
        .find(|b| b["properties"]["action"]["const"] == tool)
        .map(|b| b["properties"]["parameters"].clone())
}

fn offered(h: &Harness, tool: &str) -> Option<Value> {
    params_of(&offered_all(h), tool)
}

/// The `content` schema of create_file under answer-lines, and whether it holds a pattern.
fn content_of(h: &Harness) -> (Value, bool) {
    let params = offered(h, "create_file").expect("create_file is offered");
    let content = params["properties"]["content"].clone();
    let held = content.get("pattern").is_some();
    (content, held)
}

/// Whether llguidance lets `content` through, whole, as the JSON string of `schema`.
fn lets_through(schema: &Value, content: &str) -> bool {
    let text = serde_json::to_string(content).unwrap();
    let n =
        rein_llama::schema_accepted_len(&rein_llama::with_fixed_separators(schema), &text).unwrap();
    n == text.len()
}

fn budget_with(f: impl FnOnce(&str) -> String) -> Harness {
    Harness::desk_suite_mission("search-budget-approval", |m| set_prompt(m, f))
}

const BUDGET_INTRO: &str = "Find that e-mail and write out/answer.md with exactly three lines:";
const BUDGET_GOLD: &str =
    "File: mail/17.eml.txt\nApproved by: anna.berg@example.com\nApproved amount: 15,000 EUR\n";

#[test]
fn another_file_s_template_is_never_applied_to_the_deliverable() {
    let h = budget_with(|p| {
        p.replace(
            BUDGET_INTRO,
            "Find that e-mail. Its summary goes to archive/out/answer.md with exactly three lines:",
        ) + "\nWrite out/answer.md with the path of that e-mail alone."
    });
    let (content, held) = content_of(&h);
    assert!(
        !held,
        "the deliverable is held to archive/out/answer.md's lines: {content}"
    );
    assert!(lets_through(&content, "mail/17.eml.txt\n"));
}

#[test]
fn a_template_whose_shape_needs_a_quote_or_backslash_stays_writable() {
    let quoted = budget_with(|p| {
        p.replace(
            "Approved by: <the sender's e-mail address>",
            "Approved by: \"<the sender's name>\"",
        )
    });
    let (content, held) = content_of(&quoted);
    let answer = "File: mail/17.eml.txt\nApproved by: \"Anna Berg\"\nApproved amount: 15,000 EUR\n";
    assert!(!held || lets_through(&content, answer), "{content}");
    let backslash =
        budget_with(|p| p.replace("File: <its path>", "File: <its folder>\\<its file name>"));
    let (content, held) = content_of(&backslash);
    let answer =
        "File: mail\\17.eml.txt\nApproved by: anna.berg@example.com\nApproved amount: 15,000 EUR\n";
    assert!(!held || lets_through(&content, answer), "{content}");
}

#[test]
fn regex_characters_and_unicode_of_the_task_are_literal_in_the_pattern() {
    let label = "Approved amount: .*+?[x]{2}|^$#&~\\ €😀 (a/b) 'q' ";
    let h = budget_with(|p| {
        p.replace(
            "Approved amount: <the approved increase> EUR",
            &format!("{label}<the approved increase> EUR"),
        )
    });
    let (content, held) = content_of(&h);
    assert!(held, "{content}");
    let with = |amount_line: &str| {
        format!("File: mail/17.eml.txt\nApproved by: anna.berg@example.com\n{amount_line}\n")
    };
    assert!(lets_through(&content, &with(&format!("{label}15,000 EUR"))));
    // `.*` is no wildcard, `|` no alternative, `^$` no anchors.
    assert!(!lets_through(
        &content,
        &with("Approved amount: 15,000 EUR")
    ));
    assert!(!lets_through(
        &content,
        &with("Approved amount: xx+?[x]{2}|^$#&~\\ €😀 (a/b) 'q' 15,000 EUR")
    ));
    assert!(!lets_through(&content, &with("Approved amount: ")));
    assert!(!lets_through(&content, "File: mail/17.eml.txt"));
}

#[test]
fn a_long_label_still_gives_a_schema_llguidance_builds() {
    // `offered` panics if any request's schema cannot be built.
    let long = "x".repeat(2_000);
    let h = budget_with(|p| p.replace("File: <its path>", &format!("File: {long} <its path>")));
    let (content, held) = content_of(&h);
    assert!(held);
    assert!(lets_through(
        &content,
        &format!(
            "File: {long} mail/17.eml.txt\nApproved by: anna.berg@example.com\nApproved amount: 15,000 EUR"
        )
    ));
}

/// A named change of a task prompt.
type PromptEdit = (&'static str, Box<dyn Fn(&str) -> String>);

#[test]
fn a_count_that_does_not_match_or_a_broken_template_holds_nothing() {
    let cases: Vec<PromptEdit> = vec![
        (
            "four lines for three",
            Box::new(|p: &str| p.replace("exactly three lines", "exactly four lines")),
        ),
        (
            "a prose line inside",
            Box::new(|p: &str| p.replace("File: <its path>", "Give the file's path first.")),
        ),
        (
            "a blank line after the intro",
            Box::new(|p: &str| p.replace(BUDGET_INTRO, &format!("{BUDGET_INTRO}\n"))),
        ),
        (
            "a count past ten in words",
            Box::new(|p: &str| p.replace("exactly three lines", "exactly eleven lines")),
        ),
        (
            "zero",
            Box::new(|p: &str| p.replace("exactly three lines", "exactly 0 lines")),
        ),
        (
            "a huge number",
            Box::new(|p: &str| {
                p.replace(
                    "exactly three lines",
                    "exactly 99999999999999999999999999 lines",
                )
            }),
        ),
        (
            "fullwidth digits",
            Box::new(|p: &str| p.replace("exactly three lines", "exactly ３ lines")),
        ),
        (
            "no colon after lines",
            Box::new(|p: &str| {
                p.replace(
                    BUDGET_INTRO,
                    "Find that e-mail and write out/answer.md with exactly three lines.",
                )
            }),
        ),
    ];
    for (name, f) in cases {
        let h = budget_with(|p| f(p));
        let (content, held) = content_of(&h);
        assert!(!held, "{name}: {content}");
        assert!(lets_through(&content, BUDGET_GOLD), "{name}");
    }
}

#[test]
fn every_desk_task_the_lever_holds_lets_its_gold_answer_through() {
    let mut held_tasks = Vec::new();
    for entry in std::fs::read_dir(task_dir("")).unwrap() {
        let dir = entry.unwrap().path();
        let mission = dir.join("mission.json");
        if !mission.exists() {
            continue;
        }
        let m: Value = serde_json::from_str(&std::fs::read_to_string(&mission).unwrap()).unwrap();
        // The lever needs "exactly" in the task.
        if !m["prompt"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("exactly")
        {
            continue;
        }
        let task = dir.file_name().unwrap().to_str().unwrap().to_string();
        let branches = offered_all(&Harness::desk_suite(&task));
        for tool in ["create_file", "replace_file"] {
            let Some(params) = params_of(&branches, tool) else {
                continue;
            };
            let content = &params["properties"]["content"];
            if content.get("pattern").is_none() {
                continue;
            }
            let artifact = m["required_artifact"].as_str().unwrap();
            assert_eq!(params["properties"]["path"]["const"], artifact, "{task}");
            let gold =
                std::fs::read_to_string(dir.join("judge/gold/files").join(artifact)).unwrap();
            assert!(lets_through(content, &gold), "{task} {tool}: {gold:?}");
            assert!(
                lets_through(content, &gold.replace('\n', "\r\n")),
                "{task} {tool}: CRLF"
            );
            held_tasks.push(task.clone());
        }
    }
    held_tasks.dedup();
    assert!(held_tasks.len() >= 6, "{held_tasks:?}");
}

// ---------------------------------------------------------------------------------------------
// find-inputs: the task's closing line
// ---------------------------------------------------------------------------------------------

fn find_inputs() -> Levers {
    levers(|l| l.find_inputs = true)
}

// The line `find-inputs` ended a picked-inputs task with in 0f520a6 ("Only a few of these
// inputs hold what the task asks for. First find them with search_text, ...") was found to
// name search_text in a run without it and to tell counting tasks that only a few inputs
// matter; 4513cce took it out. These keep it out.

#[test]
fn the_task_message_is_the_same_with_find_inputs_on_or_off() {
    let task = |levers: Levers| {
        let r = run_safe(
            Harness::desk_suite("search-cert-expiry"),
            &read("services/accounts.yaml"),
            levers,
        );
        task_text(&r)
    };
    let on = task(find_inputs());
    assert_eq!(on, task(Levers::DEFAULT));
    assert!(!on.contains(FIND_FIRST_START), "{on}");
}

#[test]
fn the_task_message_names_no_tool_the_run_lacks() {
    let h = Harness::desk_suite_mission("search-cert-expiry", |m| {
        support::drop_tools(m, &["search_text", "find_files"]);
    });
    let r = run_safe(h, &read("services/accounts.yaml"), find_inputs());
    let task = task_text(&r);
    assert!(!task.contains("search_text"), "{task}");
}

#[test]
fn a_counting_task_without_an_inputs_read_check_is_not_told_only_a_few_inputs_matter() {
    let r = run_safe(
        Harness::desk_suite("explore-archive-years"),
        &line("list_dir", json!({"path": "archive"})),
        find_inputs(),
    );
    let task = task_text(&r);
    assert!(!task.contains(FIND_FIRST_START), "{task}");
}
