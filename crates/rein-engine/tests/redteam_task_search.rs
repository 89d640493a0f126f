#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of the lever `task-search` (commits 7f0c939 and 6387593): before the first step of
//! a task that picks among many inputs, Rein searches the folder the inputs share for the words
//! of the task's description, through the gate, narrowing at most three times, and shows what
//! it found. Each probe asserts a behaviour the lever claims or must keep, against a hostile
//! user (policies with deny, ask and `hide_names`, symlinks out of the workspace, prompts with
//! regex characters, Unicode, words at the length limit, odd artifact mentions, inputs in odd
//! folders) and hostile fixtures (results at the tool's cap, long paths and lines, no match). A
//! probe that found a defect asserts the correct behaviour and says `Was a DEFECT` in its doc:
//! the nine it found were mended in the commit after this file's first version (the whole
//! result measured, clipped lines, the words kept, the pattern's size, word boundaries, the
//! progress note); the rest are kept as regression tests.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, Levers};
use rein_engine::gate::{AllowAll, ApprovalDecision, Approver, ScriptedApprover};
use rein_engine::policy::Policy;
use rein_protocol::{Prompt, Role};
use serde_json::{json, Value};
use support::{
    caps, desk_policy, finish_line, journal_events, last_progress_note, line, set_prompt, Harness,
    Ran,
};

const ANSWER: &str = "out/answer.md";
/// Most searches Rein makes before the first step (`TASK_SEARCHES_MAX`).
const SEARCHES_MAX: usize = 3;
/// The search_text schema's longest pattern.
const PATTERN_MAX_CHARS: usize = 1_000;
/// What the lever's progress note says once the run has searched.
const READ_NAMED: &str = "each file your search named";
/// A token no fixture holds: it must never reach a prompt or the journal when it is only in a
/// file the model may not search.
const SECRET: &str = "zebrasecret4711";

const TASKS: [&str; 8] = [
    "search-budget-approval",
    "search-cert-expiry",
    "search-host-inventory",
    "search-hosting-renewal",
    "search-invoice-amount",
    "search-legacy-flag",
    "search-payment-timeout",
    "search-policy-clause",
];

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

fn levers(task_search: bool) -> Levers {
    Levers {
        task_search,
        find_inputs: true,
        ..Levers::DEFAULT
    }
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

fn run_on(h: Harness, script: &str) -> Ran {
    run_with(
        h,
        script,
        &mut AllowAll,
        Policy::safe_default(),
        levers(true),
    )
}

/// search-host-inventory with its prompt's description (before `Find it and write`) replaced.
fn hosts_described(description: &str) -> Harness {
    let description = description.to_string();
    Harness::desk_suite_edited(
        "search-host-inventory",
        |_| {},
        |m| {
            set_prompt(m, |p| {
                let at = p.find("Find it and write").unwrap();
                format!("{description} {}", &p[at..])
            })
        },
    )
}

/// Rein's `task-search` searches of the run: (parameters, detail).
fn reins(r: &Ran) -> Vec<(Value, Value)> {
    r.rein_searches("task-search")
}

/// The words of one of Rein's patterns (`(?:\ba\b|\bb\b)`), unescaped.
fn pattern_words(params: &Value) -> Vec<String> {
    let p = params["pattern"].as_str().unwrap();
    let inner = p
        .strip_prefix("(?:")
        .and_then(|p| p.strip_suffix(')'))
        .unwrap_or_else(|| panic!("not a words pattern: {p}"));
    inner
        .split('|')
        .map(|w| w.replace(r"\b", "").replace('\\', ""))
        .collect()
}

/// The messages of the first prompt from Rein's first call on: its calls, their results and
/// the progress note after them.
fn rein_turns(r: &Ran) -> Vec<(Role, String)> {
    let Prompt::Chat { messages } = &r.model.requests[0].prompt else {
        panic!("a chat prompt");
    };
    messages
        .iter()
        .skip_while(|m| {
            !m.content
                .contains("Search the inputs for the words of the task")
        })
        .map(|m| (m.role, m.content.clone()))
        .collect()
}

/// The user turn that shows Rein's last search.
fn last_result_turn(r: &Ran) -> String {
    rein_turns(r)
        .into_iter()
        .rev()
        .find(|(role, c)| *role == Role::User && c.contains("Result of Rein's search"))
        .map(|(_, c)| c)
        .expect("a result of Rein's search in the first prompt")
}

/// Every prompt of the run and its whole journal, as one text.
fn everything(r: &Ran) -> String {
    let mut all = r.model.prompts().join("\n");
    all.push_str(&serde_json::to_string(&r.h.journal.run_trace(r.out.run).unwrap()).unwrap());
    all
}

/// The matches of a search step's journaled result (parsed when it was not clipped).
fn result_matches(detail: &Value) -> Option<Vec<Value>> {
    let text = detail["result"].as_str()?;
    let v: Value = serde_json::from_str(text).ok()?;
    v["matches"].as_array().cloned()
}

/// What every task-search run must keep: at most three searches, each after the first made only
/// because the one before it ran, with strictly fewer words and no more lines; Rein's words are
/// the description's; the shown result is whole.
fn assert_sane(r: &Ran, what: &str) {
    let rein = reins(r);
    assert!(rein.len() <= SEARCHES_MAX, "{what}: {rein:?}");
    for pair in rein.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        assert_eq!(
            a.1["outcome"], "executed",
            "{what}: searched again after {:?}",
            a.1
        );
        let (wa, wb) = (pattern_words(&a.0), pattern_words(&b.0));
        assert!(wb.len() < wa.len(), "{what}: {wa:?} -> {wb:?}");
        assert!(
            wb.iter().all(|w| wa.contains(w)),
            "{what}: {wa:?} -> {wb:?}"
        );
        if let (Some(ma), Some(mb)) = (result_matches(&a.1), result_matches(&b.1)) {
            assert!(mb.len() <= ma.len(), "{what}: {} -> {}", ma.len(), mb.len());
        }
        assert_eq!(a.0["path"], b.0["path"], "{what}");
    }
    let events = journal_events(&r.h.journal, r.out.run, "task_search");
    assert_eq!(events.len(), 1, "{what}: {events:?}");
    assert_eq!(
        events[0]["calls"].as_array().unwrap().len(),
        rein.len(),
        "{what}"
    );
}

fn write(path: &str, content: &str) -> String {
    line("create_file", json!({"path": path, "content": content}))
}

fn read(path: &str) -> String {
    line("read_file", json!({ "path": path }))
}

/// (action, outcome) of the model's own steps only (Rein's calls are step 0).
fn model_outcomes(r: &Ran) -> Vec<(String, String)> {
    support::model_outcomes(&r.events)
}

/// The feedback of the model's step `i` (from 1): the last user message of request `i`.
fn feedback(r: &Ran, i: usize) -> String {
    support::user_messages(&r.model.requests[i])
        .last()
        .unwrap()
        .clone()
}

/// Adds files that are no inputs to the run's workspace (the folder Rein searches).
fn add_files(h: &Harness, files: &[(String, String)]) {
    for (path, text) in files {
        let to = h.workspace.join(path);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, text).unwrap();
    }
}

/// search-host-inventory where db-03.txt (the answer) also holds `extra`.
fn hosts_with_db03(extra: &str) -> Harness {
    let extra = extra.to_string();
    Harness::desk_suite_with("search-host-inventory", move |fixtures| {
        let f = fixtures.join("hosts/db-03.txt");
        let mut text = std::fs::read_to_string(&f).unwrap();
        text.push_str(&extra);
        std::fs::write(f, text).unwrap();
    })
}

// ---------------------------------------------------------------------------------------------
// 1. Rein's searches go through the gate
// ---------------------------------------------------------------------------------------------

#[test]
fn a_file_denied_to_read_file_is_never_shown_with_or_without_its_name() {
    for hide in ["", "hide_names = false\n", "hide_names = true\n"] {
        let p = desk_policy(&format!(
            "[[rule]]\ntool = \"read_file\"\npaths = [\"hosts/db-03.txt\"]\naction = \"deny\"\n{hide}"
        ));
        let h = hosts_with_db03(&format!("Note: postgres {SECRET}\n"));
        let r = run_with(h, &finish_line(), &mut AllowAll, p, levers(true));
        let rein = reins(&r);
        assert!(!rein.is_empty(), "{hide}");
        assert!(!everything(&r).contains(SECRET), "{hide}");
        for (_, d) in &rein {
            let result = d["result"].as_str().unwrap();
            assert!(!result.contains("hosts/db-03.txt"), "{hide}: {result}");
        }
        let shown = last_result_turn(&r);
        assert!(!shown.contains("db-03"), "{hide}: {shown}");
        assert!(shown.contains("skipped by policy"), "{hide}: {shown}");
        assert_sane(&r, hide);
    }
}

#[test]
fn a_name_hidden_from_listings_is_never_named_by_rein_s_search() {
    // A deny of list_dir holds for every tool that names files (search_text among them).
    for tool in ["list_dir", "find_files", "*"] {
        let p = desk_policy(&format!(
            "[[rule]]\ntool = \"{tool}\"\npaths = [\"hosts/db-03.txt\"]\naction = \"deny\"\n"
        ));
        let h = hosts_with_db03(&format!("Note: postgres {SECRET}\n"));
        let r = run_with(h, &finish_line(), &mut AllowAll, p, levers(true));
        let rein = reins(&r);
        assert!(!rein.is_empty(), "{tool}");
        for (_, d) in &rein {
            let result = d["result"].as_str().unwrap();
            assert!(!result.contains("db-03"), "{tool}: {result}");
        }
        for (_, turn) in rein_turns(&r) {
            assert!(!turn.contains("db-03"), "{tool}: {turn}");
        }
        assert!(!everything(&r).contains(SECRET), "{tool}");
    }
}

#[test]
fn an_ask_rule_on_one_file_skips_it_without_asking_about_rein_s_search() {
    // The search names the folder, not the file: the rule is not the call's, so nobody is
    // asked; the file it covers is not read (approving a search is not approving each file).
    let p =
        desk_policy("[[rule]]\ntool = \"*\"\npaths = [\"hosts/db-03.txt\"]\naction = \"ask\"\n");
    let mut approver = ScriptedApprover::new([ApprovalDecision::AllowOnce]);
    let h = hosts_with_db03(&format!("Note: postgres {SECRET}\n"));
    let r = run_with(h, &finish_line(), &mut approver, p, levers(true));
    let rein = reins(&r);
    assert_eq!(rein.len(), 1, "{rein:?}");
    assert_eq!(rein[0].1["outcome"], "executed");
    assert!(approver.seen.is_empty(), "{:?}", approver.seen.len());
    assert!(!everything(&r).contains(SECRET));
    assert!(!rein[0].1["result"]
        .as_str()
        .unwrap()
        .contains("\"hosts/db-03.txt\""));
}

#[test]
fn an_ask_rule_on_the_inputs_folder_reads_none_of_its_files_approved_or_not() {
    for paths in ["hosts/**", "hosts"] {
        let p = desk_policy(&format!(
            "[[rule]]\ntool = \"search_text\"\npaths = [\"{paths}\"]\naction = \"ask\"\n"
        ));
        let mut approver = ScriptedApprover::new([ApprovalDecision::AllowOnce]);
        let h = hosts_with_db03(&format!("Note: postgres {SECRET}\n"));
        let r = run_with(h, &finish_line(), &mut approver, p, levers(true));
        let rein = reins(&r);
        assert_eq!(rein.len(), 1, "{paths}: {rein:?}");
        assert!(approver.seen.len() <= 1, "{paths}");
        assert!(!everything(&r).contains(SECRET), "{paths}");
        let shown = last_result_turn(&r);
        assert!(!shown.contains("Software: postgres"), "{paths}: {shown}");
    }
}

#[test]
fn a_no_to_the_narrowed_search_ends_the_searches_and_nothing_unapproved_is_shown() {
    // search-cert-expiry narrows once: the first search is approved, the second refused.
    let p = desk_policy("[[rule]]\ntool = \"search_text\"\naction = \"ask\"\n");
    let mut approver = ScriptedApprover::new([
        ApprovalDecision::AllowOnce,
        ApprovalDecision::Deny {
            reason: "not that one".into(),
        },
    ]);
    let r = run_with(
        Harness::desk_suite("search-cert-expiry"),
        &finish_line(),
        &mut approver,
        p,
        levers(true),
    );
    let rein = reins(&r);
    assert_eq!(rein.len(), 2, "{rein:?}");
    assert_eq!(rein[1].1["outcome"], "approval-required");
    assert_eq!(
        approver.seen.len(),
        2,
        "asked about each of Rein's calls, once"
    );
    let shown = last_result_turn(&r);
    assert!(shown.contains("not approved"), "{shown}");
    // The refused search's lines are nowhere in the prompt.
    for (_, turn) in rein_turns(&r) {
        assert!(!turn.contains("cert_expires: 2025-01-17"), "{turn}");
    }
    assert_sane(&r, "ask");
}

#[test]
fn nobody_to_ask_leaves_rein_s_search_refused_and_the_run_goes_on() {
    let p = desk_policy("[[rule]]\ntool = \"search_text\"\naction = \"ask\"\n");
    let mut approver = ScriptedApprover::new([]);
    let r = run_with(
        Harness::desk_suite("search-host-inventory"),
        &(read("hosts/db-03.txt") + &finish_line()),
        &mut approver,
        p,
        levers(true),
    );
    let rein = reins(&r);
    assert_eq!(rein.len(), 1, "{rein:?}");
    assert_eq!(rein[0].1["outcome"], "approval-required");
    let own = model_outcomes(&r);
    assert_eq!(own[0], ("read_file".into(), "executed".into()), "{own:?}");
}

#[test]
fn symlinks_out_of_the_workspace_are_never_searched_by_rein() {
    let h = Harness::desk_suite("search-host-inventory");
    let outside = h.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        outside.join("secret.txt"),
        format!("Software: postgres 12 {SECRET}\n"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, h.workspace.join("hosts/zz-link")).unwrap();
    std::os::unix::fs::symlink(
        outside.join("secret.txt"),
        h.workspace.join("hosts/zz-file.txt"),
    )
    .unwrap();
    let r = run_on(h, &finish_line());
    assert!(!reins(&r).is_empty());
    assert!(!everything(&r).contains(SECRET));
    assert_sane(&r, "symlinks");
}

#[test]
fn an_inputs_folder_that_is_a_symlink_out_of_the_workspace_is_never_searched() {
    let h = Harness::desk_suite("search-host-inventory");
    let outside = h.dir.path().join("outside-hosts");
    std::fs::rename(h.workspace.join("hosts"), &outside).unwrap();
    std::fs::write(
        outside.join("zz-secret.txt"),
        format!("Software: postgres 12 {SECRET}\n"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, h.workspace.join("hosts")).unwrap();
    let r = run_on(h, &finish_line());
    let rein = reins(&r);
    assert_eq!(rein.len(), 1, "{rein:?}");
    assert!(!everything(&r).contains(SECRET));
}

#[test]
fn what_rein_does_never_depends_on_a_hidden_file_s_content() {
    // Two runs that differ only in what the hidden db-03.txt holds: many of the task's words,
    // or none of them. Rein's calls, what it shows and what it journals must be the same.
    let p = || {
        desk_policy("[[rule]]\ntool = \"*\"\npaths = [\"hosts/db-03.txt\"]\naction = \"deny\"\n")
    };
    let loud = "server record still runs hosts holds per postgres\n".repeat(40);
    let runs: Vec<Ran> = ["", loud.as_str()]
        .iter()
        .map(|extra| {
            run_with(
                hosts_with_db03(extra),
                &finish_line(),
                &mut AllowAll,
                p(),
                levers(true),
            )
        })
        .collect();
    let calls: Vec<Vec<Value>> = runs
        .iter()
        .map(|r| reins(r).into_iter().map(|(p, _)| p).collect())
        .collect();
    assert_eq!(calls[0], calls[1]);
    assert_eq!(rein_turns(&runs[0]), rein_turns(&runs[1]));
    let events: Vec<Vec<Value>> = runs
        .iter()
        .map(|r| journal_events(&r.h.journal, r.out.run, "task_search"))
        .collect();
    assert_eq!(events[0], events[1]);
}

// ---------------------------------------------------------------------------------------------
// 2. The words are the description's, never a check's
// ---------------------------------------------------------------------------------------------

/// The whole words (3 characters or more, letters, digits, `_`) of `text`, lowercased.
fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .collect()
}

#[test]
fn no_word_of_a_check_reaches_rein_s_pattern_unless_the_description_holds_it() {
    for task in TASKS {
        let r = run_on(Harness::desk_suite(task), &finish_line());
        let m = &r.h.contract.mission;
        let artifact = m.required_artifact.as_str();
        let description = &m.prompt[..m.prompt.find(artifact).unwrap()];
        let described = tokens(description);
        let checks: Vec<String> = m
            .checks
            .iter()
            .flat_map(|c| tokens(&serde_json::to_string(&c.spec).unwrap()))
            .collect();
        let rein = reins(&r);
        assert!(!rein.is_empty(), "{task}");
        for (params, _) in &rein {
            for word in pattern_words(params) {
                for part in tokens(&word) {
                    assert!(
                        described.contains(&part) || !checks.contains(&part),
                        "{task}: `{part}` of a check is in Rein's pattern {params}"
                    );
                    assert!(described.contains(&part), "{task}: {part} of {params}");
                }
            }
        }
        assert_sane(&r, task);
    }
}

#[test]
fn text_after_the_deliverable_and_the_mission_s_description_are_never_searched() {
    let h = Harness::desk_suite_edited(
        "search-host-inventory",
        |_| {},
        |m| {
            m["description"] = json!("zebradesc says the answer is db-03");
            set_prompt(m, |p| {
                format!("{p}\nGrader note: zebragold is db-03 at 10.20.2.26.")
            });
            m["checks"].as_array_mut().unwrap().push(json!({
                "id": "gold", "kind": "content_matches", "path": ANSWER, "pattern": "zebragold"
            }));
        },
    );
    let r = run_on(h, &finish_line());
    let rein = reins(&r);
    assert!(!rein.is_empty());
    for (params, _) in &rein {
        let p = params["pattern"].as_str().unwrap().to_lowercase();
        for bad in ["zebragold", "zebradesc", "db", "10", "grader"] {
            assert!(
                !pattern_words(params)
                    .iter()
                    .any(|w| w.to_lowercase() == bad),
                "{bad} in {p}"
            );
        }
    }
}

#[test]
fn the_description_ends_at_the_deliverable_s_first_whole_mention() {
    // Named first as the tail of a longer path and with a suffix: neither ends the description.
    let h = hosts_described(
        "Ignore archive/out/answer.md and out/answer.md.bak (zebraold). hosts/ holds one record per server. Exactly one server still runs postgres 12.",
    );
    let r = run_on(h, &finish_line());
    let rein = reins(&r);
    assert!(!rein.is_empty());
    let words = pattern_words(&rein[0].0);
    assert!(words.iter().any(|w| w == "postgres"), "{words:?}");
    assert!(words.iter().any(|w| w == "zebraold"), "{words:?}");
    // Named twice: the text between the two mentions is no description.
    let h = Harness::desk_suite_edited(
        "search-host-inventory",
        |_| {},
        |m| {
            set_prompt(m, |p| {
                p.replacen(
                    "Find it and write out/answer.md",
                    "Find it and write out/answer.md (zebrabetween), then write out/answer.md",
                    1,
                )
            })
        },
    );
    let r = run_on(h, &finish_line());
    let rein = reins(&r);
    assert!(!rein.is_empty());
    assert!(!pattern_words(&rein[0].0)
        .iter()
        .any(|w| w == "zebrabetween"));
}

// ---------------------------------------------------------------------------------------------
// 3. The judge is as it was
// ---------------------------------------------------------------------------------------------

#[test]
fn a_search_that_shows_a_file_s_only_line_is_still_no_read_for_the_judge() {
    // db-03 is one line: Rein's search shows all of it. inputs-read still wants a read_file.
    let h = Harness::desk_suite_with("search-host-inventory", |fixtures| {
        std::fs::write(fixtures.join("hosts/db-03.txt"), "Software: postgres 12\n").unwrap();
    });
    let script =
        write(ANSWER, "Host: db-03\nIP: 10.20.2.26\nRAM: 64 GB\n") + &read(ANSWER) + &finish_line();
    let r = run_on(h, &script);
    let shown = last_result_turn(&r);
    assert!(shown.contains("hosts/db-03.txt"), "{shown}");
    let (passed, facts) = support::check_facts(&r.out, "inputs-read");
    assert!(!passed, "{facts}");
}

#[test]
fn no_check_judges_otherwise_with_rein_s_search() {
    for task in TASKS {
        let script = write(
            &Harness::desk_suite(task).contract.mission.required_artifact,
            "File: x\n",
        ) + &finish_line();
        let verdicts: Vec<Vec<(String, bool)>> = [false, true]
            .iter()
            .map(|&on| {
                let r = run_with(
                    Harness::desk_suite(task),
                    &script,
                    &mut AllowAll,
                    Policy::safe_default(),
                    levers(on),
                );
                assert_eq!(reins(&r).is_empty(), !on, "{task}");
                support::verdict_ids(&r)
            })
            .collect();
        assert_eq!(verdicts[0], verdicts[1], "{task}");
    }
}

#[test]
fn any_actions_called_check_keeps_the_calls_the_model_s() {
    for tools in [json!(["read_file"]), json!(["search_text", "read_file"])] {
        let h = Harness::desk_suite_mission("search-host-inventory", |m| {
            m["checks"].as_array_mut().unwrap().push(json!({
                "id": "called", "kind": "actions_called", "tools": tools, "ordered": true
            }));
        });
        let r = run_on(h, &finish_line());
        assert!(reins(&r).is_empty());
        let events = journal_events(&r.h.journal, r.out.run, "task_search");
        assert!(
            events[0]["not_applied"]
                .as_str()
                .unwrap()
                .contains("judges the run's calls"),
            "{events:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Robustness
// ---------------------------------------------------------------------------------------------

/// Rein's calls ran (the tool did not refuse them), within the schema's pattern size.
fn assert_rein_calls_valid(r: &Ran, what: &str) {
    let rein = reins(r);
    assert!(!rein.is_empty(), "{what}");
    for (p, d) in &rein {
        assert_ne!(
            d["outcome"], "invalid",
            "{what}: Rein's call was refused: {}",
            d["reason"]
        );
        let chars = p["pattern"].as_str().unwrap().chars().count();
        assert!(chars <= PATTERN_MAX_CHARS, "{what}: {chars}");
    }
}

#[test]
fn regex_characters_unicode_and_long_descriptions_search_without_panic() {
    // Under the prompt's cap (MAX_INPUT_CHARS), past which the run is refused before it starts.
    let long = "Cloudline server record holds ".repeat(900);
    let descriptions = [
        r"hosts/ (holds) [one] record+ per server? ^Exactly$ {one} still runs postgres|12 \d \b .* $ (?i) \\ \Q\E ???".to_string(),
        "hosts/ hält Größe Straße İstanbul ǅemal ﬃx café naïve 😀🎉 Σίσυφος server postgres".to_string(),
        format!("hosts/ {long} postgres"),
        "hosts/ --- @@@ ,,, ... ||| @a@ -b- 1,234.56 a.b.c K-2019-004 e-mails emil@shop.example postgres".to_string(),
        "hosts/ tab\tand\r\nCRLF postgres\u{200b}zero width".to_string(),
    ];
    for d in descriptions {
        let r = run_on(hosts_described(&d), &finish_line());
        let what: String = d.chars().take(60).collect();
        assert_rein_calls_valid(&r, &what);
        assert_sane(&r, &what);
        let words = pattern_words(&reins(&r)[0].0);
        assert!(words.len() <= 24, "{what}: {words:?}");
    }
}

/// Was a DEFECT (mended): 24 words of up to 64 characters make a pattern over search_text's 1,000-character
/// schema limit (1,242 here): Rein's only search is refused as invalid and the first prompt
/// shows the refusal as "Rein's search".
#[test]
fn words_at_the_length_limit_never_make_a_search_the_tool_refuses() {
    // 20 distinct words of 60 letters: each is a word text_words keeps (3 to 64 characters).
    let words: Vec<String> = (0..20)
        .map(|i| format!("{}{}", "q".repeat(59), char::from(b'a' + i)))
        .collect();
    let r = run_on(
        hosts_described(&format!("hosts/ {} postgres", words.join(" "))),
        &finish_line(),
    );
    assert_rein_calls_valid(&r, "64-char words");
}

/// Was a DEFECT (mended): under the character limit, long words of letters with several cases compile past
/// the tool's 64 KiB regex limit when searched ignoring case: refused as invalid.
#[test]
fn unicode_words_with_case_folding_at_the_length_limit_never_make_a_refused_search() {
    // Under the pattern's character limit, but each letter has three cases.
    let words: Vec<String> = (0..14)
        .map(|i| format!("{}{}", "ǅσ".repeat(31), char::from(b'a' + i)))
        .collect();
    let r = run_on(
        hosts_described(&format!("hosts/ {} postgres", words.join(" "))),
        &finish_line(),
    );
    assert_rein_calls_valid(&r, "unicode words");
}

/// Was a DEFECT (mended): `text_words` keeps `CO₂` (₂ is alphanumeric to Rust) but `\bCO₂\b` can never match
/// (₂ is no regex word character, so no boundary follows it): the word is searched in vain.
/// Decomposed accents (`cafe\u{301}`) fail alike the other way round.
#[test]
fn a_word_ending_in_a_subscript_is_found_where_the_files_hold_it() {
    // `CO₂` is a word of the task (₂ is a number to `char::is_alphanumeric`), but not a word
    // character to the regex: `\bCO₂\b` matches no line at all.
    let h = Harness::desk_suite_edited(
        "search-host-inventory",
        |fixtures| {
            let f = fixtures.join("hosts/db-03.txt");
            let text = std::fs::read_to_string(&f).unwrap() + "Sensor: CO₂ level high\n";
            std::fs::write(f, text).unwrap();
        },
        |m| {
            set_prompt(m, |p| {
                let at = p.find("Find it and write").unwrap();
                format!("hosts/ zzz CO₂ {}", &p[at..])
            })
        },
    );
    let r = run_on(h, &finish_line());
    let rein = reins(&r);
    assert!(
        pattern_words(&rein[0].0).iter().any(|w| w == "CO₂"),
        "{rein:?}"
    );
    let shown = last_result_turn(&r);
    assert!(shown.contains("Sensor: CO₂ level high"), "{shown}");
}

#[test]
fn an_ordinary_greek_or_cyrillic_description_makes_a_search_the_tool_runs() {
    for d in [
        "hosts/ Ο φάκελος περιέχει αρχεία διακομιστών της εταιρείας. Ακριβώς ένας διακομιστής εκτελεί ακόμη παλαιότερη έκδοση βάσης δεδομένων postgres, σύμφωνα με την τελευταία απογραφή του τμήματος υποδομών.",
        "hosts/ В папке лежат описания серверов компании. Ровно один сервер всё ещё работает со старой версией базы данных postgres, согласно последней инвентаризации отдела инфраструктуры и эксплуатации.",
    ] {
        let r = run_on(hosts_described(d), &finish_line());
        assert_rein_calls_valid(&r, d);
        assert_sane(&r, d);
    }
}

/// Was a DEFECT (mended): the first 24 words are kept, so a description with a background of 24 distinct
/// words loses the sentence that says what to find (usually the last, before the deliverable).
#[test]
fn the_sentence_that_names_what_to_find_is_searched_after_a_longer_background() {
    // A background of 26 distinct words, then the sentence with the one rare word.
    let h = hosts_described(
        "hosts/ holds one record per machine of the platform team: web frontends, caches, queues, monitoring nodes and databases, kept by operations after every quarterly audit with the owners and finance. Exactly one server still runs postgres 12.",
    );
    let r = run_on(h, &finish_line());
    let rein = reins(&r);
    let words = pattern_words(&rein[0].0);
    assert!(
        words.iter().any(|w| w == "postgres"),
        "the task's rare word was cut off at 24 words: {words:?}"
    );
}

/// Was a DEFECT (mended): words are counted in the matched lines as the tool shows them, clipped at 300
/// characters; a word matched past the clip counts as in no file and is dropped, and Rein
/// stops saying every word it found is common, though the rare word is in one file.
#[test]
fn a_rare_word_past_the_tool_s_line_clip_is_kept_when_narrowing() {
    // search_text shows 300 characters of a line: a word the search matched further on is
    // not in the text Rein counts, and counted as held by no file it is left out.
    let h = hosts_described(
        "hosts/ holds one record per server. Exactly one note mentions the zebrakey rollout.",
    );
    let mut files: Vec<(String, String)> = (0..30)
        .map(|i| {
            (
                format!("hosts/rack-{i:02}.txt"),
                "Location: server room 2\n".into(),
            )
        })
        .collect();
    files.push((
        "hosts/zz-ops.md".into(),
        format!(
            "Ops diary: {} and at last the zebrakey rollout was done.\n",
            "lorem ipsum dolor sit amet ".repeat(12)
        ),
    ));
    add_files(&h, &files);
    let r = run_on(h, &finish_line());
    assert_sane(&r, "clip");
    // Narrowed to the words few files hold, the search names one line: the zebrakey one.
    let events = journal_events(&r.h.journal, r.out.run, "task_search");
    let shown = last_result_turn(&r);
    assert!(
        shown.contains("hosts/zz-ops.md"),
        "the line of the task's rare word is not shown ({:?}): {shown}",
        events[0]
    );
}

/// search-host-inventory with its inputs moved by `place` (old path to new path), the
/// mission's inputs and checks following them.
fn hosts_moved(place: impl Fn(&str) -> String + Copy) -> Harness {
    Harness::desk_suite_edited(
        "search-host-inventory",
        |fixtures| {
            for e in std::fs::read_dir(fixtures.join("hosts")).unwrap() {
                let name = e.unwrap().file_name().into_string().unwrap();
                let to = fixtures.join(place(&format!("hosts/{name}")));
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(fixtures.join("hosts").join(&name), to).unwrap();
            }
        },
        |m| {
            let text = m.to_string();
            let mut out = text.clone();
            for i in m["inputs"].as_array().unwrap() {
                let from = i.as_str().unwrap();
                out = out.replace(&format!("\"{from}\""), &format!("\"{}\"", place(from)));
            }
            *m = serde_json::from_str(&out).unwrap();
        },
    )
}

#[test]
fn inputs_in_the_root_or_in_different_folders_are_searched_from_the_root() {
    let root = hosts_moved(|p| p.trim_start_matches("hosts/").to_string());
    assert!(root
        .contract
        .mission
        .inputs
        .iter()
        .all(|i| !i.contains('/')));
    let split = hosts_moved(|p| {
        if p.starts_with("hosts/db-") {
            p.replace("hosts/", "db/")
        } else {
            p.to_string()
        }
    });
    for (what, h) in [("root", root), ("split", split)] {
        let r = run_on(h, &finish_line());
        let rein = reins(&r);
        assert!(!rein.is_empty(), "{what}");
        assert_eq!(rein[0].0["path"], ".", "{what}");
        assert_rein_calls_valid(&r, what);
        assert_sane(&r, what);
        let shown = last_result_turn(&r);
        assert!(shown.contains("postgres 12"), "{what}: {shown}");
    }
}

#[test]
fn few_inputs_all_needed_no_search_text_or_memory_mode_make_no_search() {
    let few = Harness::desk_suite_mission("search-host-inventory", |m| {
        let inputs: Vec<Value> = m["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| {
                let i = i.as_str().unwrap();
                i.starts_with("hosts/db-") || i == "hosts/app-01.txt"
            })
            .cloned()
            .collect();
        assert!(inputs.len() < 8);
        m["inputs"] = json!(inputs);
    });
    let all = Harness::desk_suite_mission("search-host-inventory", |m| {
        let inputs = m["inputs"].clone();
        support::check_mut(m, "inputs-read")["paths"] = inputs;
    });
    let every = Harness::desk_suite_mission("search-host-inventory", |m| {
        support::check_mut(m, "inputs-read")["paths"] = json!([]);
    });
    let no_search = Harness::desk_suite_mission("search-host-inventory", |m| {
        let tools: Vec<Value> = m["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t.as_str() != Some("search_text"))
            .cloned()
            .collect();
        m["tools"] = json!(tools);
    });
    for (what, h, why) in [
        ("few", few, "does not pick"),
        ("all", all, "does not pick"),
        ("every", every, "does not pick"),
        ("no search_text", no_search, "search_text"),
    ] {
        let r = run_on(h, &finish_line());
        assert!(reins(&r).is_empty(), "{what}");
        let events = journal_events(&r.h.journal, r.out.run, "task_search");
        assert_eq!(events.len(), 1, "{what}");
        assert!(
            events[0]["not_applied"].as_str().unwrap().contains(why),
            "{what}: {events:?}"
        );
        assert!(!r.model.prompt(0).contains("Rein's search"), "{what}");
    }
    let r = Ran::of(
        Harness::desk_suite("search-host-inventory"),
        &finish_line(),
        &mut AllowAll,
        Policy::safe_default(),
        |o| {
            o.levers = levers(true);
            o.memory = true;
            o.limits.attempts = 1;
        },
    );
    assert!(reins(&r).is_empty());
    assert!(!r.model.prompt(0).contains("Rein's search"));
}

#[test]
fn a_search_at_the_tool_s_cap_narrows_at_most_three_times_and_never_grows() {
    // Files that are no inputs in the searched folder: 150 lines of one common word, then
    // many files holding a rarer one, so each search is cut at the tool's 100 lines.
    let layouts: Vec<Vec<(String, String)>> = vec![
        vec![(
            "hosts/zz-log.txt".into(),
            "postgres 12 restarted\n".repeat(150),
        )],
        (0..40)
            .map(|i| {
                (
                    format!("hosts/extra-{i:02}.txt"),
                    "server record holds\n".repeat(6) + &"postgres\n".repeat(4),
                )
            })
            .collect(),
        (0..60)
            .map(|i| {
                (
                    format!("hosts/more-{i:02}.txt"),
                    "runs still\npostgres per\n".repeat(3),
                )
            })
            .collect(),
    ];
    for (k, files) in layouts.iter().enumerate() {
        let h = Harness::desk_suite("search-host-inventory");
        add_files(&h, files);
        let r = run_on(h, &finish_line());
        let what = format!("layout {k}");
        assert_sane(&r, &what);
        if k == 0 {
            let turns: Vec<String> = rein_turns(&r).into_iter().map(|t| t.1).collect();
            assert!(
                turns.iter().any(|t| t.contains("cut at the tool's cap")),
                "{what}: {turns:?}"
            );
        }
        assert_rein_calls_valid(&r, &what);
        let shown = last_result_turn(&r);
        assert!(
            shown.chars().count() <= 8_000,
            "{what}: {}",
            shown.chars().count()
        );
    }
}

/// Was a DEFECT (mended): "small" counted lines and their text only; paths and JSON were not
/// counted, and the result was then clipped at MAX_RESULT_CHARS (6,000): a result Rein showed
/// "whole" lost its tail, here the answer's own line (db-03). Now the whole result's JSON is
/// measured: a result is shown unclipped or not at all.
#[test]
fn a_search_shown_whole_is_shown_whole_in_the_first_prompt() {
    // 29 lines of the task's rare word (≤ 30 lines, ≤ 3,000 characters of text: "small"),
    // in files with ordinary long paths; many other files keep the word rare.
    let h = Harness::desk_suite("search-host-inventory");
    let mut files: Vec<(String, String)> = (0..25)
        .map(|i| {
            (
                format!("hosts/archive/retired-2023-q4/datacenter-frankfurt-rack-07/decommissioned-db-node-{i:02}-replaced-by-cluster.txt"),
                format!("Software: postgres 9.6 on the old storage array, migrated and switched off in December, ticket OPS-{i:04}\n"),
            )
        })
        .collect();
    files.extend((0..100).map(|i| {
        (
            format!("hosts/spare/spare-{i:03}.txt"),
            "Owner: ops\n".into(),
        )
    }));
    add_files(&h, &files);
    let r = run_on(h, &finish_line());
    let events = journal_events(&r.h.journal, r.out.run, "task_search");
    let shown = last_result_turn(&r);
    assert!(
        !shown.contains("more characters not shown"),
        "a result Rein shows was clipped ({} characters): {shown}",
        shown.chars().count()
    );
    // Too large to show whole here (29 long paths): shown as a count, never cut.
    assert_eq!(events[0]["shown"], false, "{events:?}");
    assert!(shown.contains("too many to show here"), "{shown}");
}

#[test]
fn an_empty_result_and_a_refused_search_are_shown_once_without_panic() {
    let r = run_on(hosts_described("hosts/ zebra quokka"), &finish_line());
    let rein = reins(&r);
    assert_eq!(rein.len(), 1, "{rein:?}");
    assert_eq!(rein[0].1["outcome"], "executed");
    let events = journal_events(&r.h.journal, r.out.run, "task_search");
    assert_eq!(events[0]["shown"], true);
    let p = desk_policy("[[rule]]\ntool = \"search_text\"\naction = \"deny\"\n");
    let r = run_with(
        Harness::desk_suite("search-host-inventory"),
        &finish_line(),
        &mut AllowAll,
        p,
        levers(true),
    );
    let rein = reins(&r);
    assert_eq!(rein.len(), 1, "{rein:?}");
    assert_eq!(rein[0].1["outcome"], "denied");
    assert!(last_result_turn(&r).contains("denied"));
}

#[test]
fn every_desk_task_keeps_the_searches_sane() {
    for task in TASKS {
        let r = run_on(Harness::desk_suite(task), &finish_line());
        assert_sane(&r, task);
        assert_rein_calls_valid(&r, task);
    }
}

// ---------------------------------------------------------------------------------------------
// 5. The progress note after Rein's search
// ---------------------------------------------------------------------------------------------

#[test]
fn after_a_shown_search_with_lines_the_note_says_read_what_it_named() {
    let r = run_on(Harness::desk_suite("search-host-inventory"), &finish_line());
    let note = last_progress_note(&r, 0);
    assert!(note.contains(READ_NAMED), "{note}");
}

#[test]
fn after_a_refused_search_the_note_does_not_speak_of_what_it_named() {
    let p = desk_policy("[[rule]]\ntool = \"search_text\"\naction = \"ask\"\n");
    let mut approver = ScriptedApprover::new([ApprovalDecision::Deny {
        reason: "no".into(),
    }]);
    let r = run_with(
        Harness::desk_suite("search-host-inventory"),
        &finish_line(),
        &mut approver,
        p,
        levers(true),
    );
    let note = last_progress_note(&r, 0);
    assert!(!note.contains(READ_NAMED), "{note}");
}

/// Was a DEFECT (mended; with the two below): the note counts any executed search_text of the trace, Rein's
/// included, as "the run has searched", so after a search that showed no line it says to read
/// "each file your search named", then write.
#[test]
fn after_a_search_that_named_no_line_the_note_does_not_say_read_what_it_named() {
    let r = run_on(hosts_described("hosts/ zebra quokka"), &finish_line());
    assert!(last_result_turn(&r).contains("\"matches\":[]"));
    let note = last_progress_note(&r, 0);
    assert!(!note.contains(READ_NAMED), "{note}");
}

/// Was a DEFECT (mended): Rein's turn says "Search with a rarer word of the task yourself", the note right
/// after it says to read the files "your search named" (never shown), then write.
#[test]
fn after_a_search_too_large_to_show_the_note_does_not_say_read_what_it_named() {
    // 40 more files with the task's one rare word: every word is common, nothing is shown.
    let h = Harness::desk_suite("search-host-inventory");
    let files: Vec<(String, String)> = (0..40)
        .map(|i| {
            (
                format!("hosts/old-{i:02}.txt"),
                "Software: postgres 15\n".into(),
            )
        })
        .collect();
    add_files(&h, &files);
    let r = run_on(h, &finish_line());
    let events = journal_events(&r.h.journal, r.out.run, "task_search");
    assert_eq!(events[0]["shown"], false, "{events:?}");
    assert!(last_result_turn(&r).contains("too many to show"));
    let note = last_progress_note(&r, 0);
    assert!(!note.contains(READ_NAMED), "{note}");
}

/// Was a DEFECT (mended): the first search ran but was shown as a count, the second was refused; the note
/// still says to read the files the search named.
#[test]
fn after_an_approved_search_then_a_refused_narrowing_the_note_does_not_say_read_what_it_named() {
    // The first search ran but was shown as a count only; the second was refused.
    let p = desk_policy("[[rule]]\ntool = \"search_text\"\naction = \"ask\"\n");
    let mut approver = ScriptedApprover::new([
        ApprovalDecision::AllowOnce,
        ApprovalDecision::Deny {
            reason: "no".into(),
        },
    ]);
    let r = run_with(
        Harness::desk_suite("search-cert-expiry"),
        &finish_line(),
        &mut approver,
        p,
        levers(true),
    );
    assert_eq!(reins(&r).len(), 2);
    let note = last_progress_note(&r, 0);
    assert!(!note.contains(READ_NAMED), "{note}");
}

// ---------------------------------------------------------------------------------------------
// 6. Steps, caps, repeats, ids and the journal
// ---------------------------------------------------------------------------------------------

#[test]
fn rein_s_searches_are_no_steps_and_do_not_bring_the_no_progress_cap_closer() {
    let script = read("hosts/no-such-file.txt").repeat(12) + &finish_line();
    let runs: Vec<Ran> = [false, true]
        .iter()
        .map(|&on| {
            run_with(
                Harness::desk_suite("search-host-inventory"),
                &script,
                &mut AllowAll,
                Policy::safe_default(),
                levers(on),
            )
        })
        .collect();
    assert!(reins(&runs[0]).is_empty());
    assert!(!reins(&runs[1]).is_empty());
    assert_eq!(runs[0].out.figures.steps, runs[1].out.figures.steps);
    assert_eq!(caps(&runs[0].events), caps(&runs[1].events));
    assert_eq!(model_outcomes(&runs[0]), model_outcomes(&runs[1]));
}

#[test]
fn the_model_making_rein_s_exact_search_is_not_told_it_repeated_a_step() {
    let first = run_on(Harness::desk_suite("search-host-inventory"), &finish_line());
    let params = reins(&first)[0].0.clone();
    let script = line("search_text", params) + &finish_line();
    let r = run_on(Harness::desk_suite("search-host-inventory"), &script);
    let own = model_outcomes(&r);
    assert_eq!(own[0], ("search_text".into(), "executed".into()), "{own:?}");
    let after = feedback(&r, 1);
    assert!(!after.contains("at step 0"), "{after}");
}

#[test]
fn call_ids_stay_unique_with_wider_search_and_every_call_runs_afresh() {
    let script = line(
        "search_text",
        json!({"pattern": "zebra quokka", "path": "hosts"}),
    ) + &line(
        "search_text",
        json!({"pattern": "zebra quokka", "path": "hosts", "glob": "*.md"}),
    ) + &finish_line();
    let r = run_with(
        Harness::desk_suite("search-host-inventory"),
        &script,
        &mut AllowAll,
        Policy::safe_default(),
        Levers {
            wider_search: true,
            ..levers(true)
        },
    );
    let ids: Vec<String> = r
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Step(s) => s.call_id.clone(),
            _ => None,
        })
        .collect();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
    let outcomes = support::outcomes(&r.events);
    assert!(
        outcomes.iter().all(|(_, o)| o != "replayed"),
        "{outcomes:?}"
    );
}

#[test]
fn the_levers_event_records_task_search_on_and_off() {
    for on in [false, true] {
        let r = run_with(
            Harness::desk_suite("search-host-inventory"),
            &finish_line(),
            &mut AllowAll,
            Policy::safe_default(),
            levers(on),
        );
        let events = journal_events(&r.h.journal, r.out.run, "levers");
        assert_eq!(events[0]["levers"]["task-search"], on, "{events:?}");
    }
}

#[test]
fn a_second_attempt_searches_nothing_again() {
    // A first attempt that fails its checks and a second: Rein's searches are made once.
    let script = write(ANSWER, "Host: x\n") + &read(ANSWER) + &finish_line() + &finish_line();
    let r = Ran::of(
        Harness::desk_suite("search-host-inventory"),
        &script,
        &mut AllowAll,
        Policy::safe_default(),
        |o| {
            o.levers = levers(true);
            o.limits.attempts = 2;
        },
    );
    assert_eq!(reins(&r).len(), 1);
    let events = journal_events(&r.h.journal, r.out.run, "task_search");
    assert_eq!(events.len(), 1);
}
