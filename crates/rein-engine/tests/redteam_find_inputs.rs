#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red-team probes of the `find-inputs` lever (the progress note of a task that picks a few of
//! many inputs counts reads instead of naming the next unread input). Each test asserts one
//! behaviour: no note names an input (least of all the one the contract's `inputs_read` check
//! secretly needs), a task that needs every input keeps the note that names them however its
//! checks spell or split that, the threshold is where it says, and the judge is unchanged. One
//! found a defect, fixed since: checks that each need half the inputs need them all.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::{json, Value};
use support::{finish_line, line, Harness, Ran};

const ANSWER: &str = "out/answer.md";
const SECRET: &str = "services/pricing.yaml";

fn levers(find_inputs: bool) -> Levers {
    Levers {
        find_inputs,
        ..Levers::DEFAULT
    }
}

fn run_with(h: Harness, script: &str, levers: Levers, attempts: u32) -> Ran {
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = levers;
        o.limits.attempts = attempts;
    })
}

/// search-cert-expiry with its mission JSON changed by `f` before it is loaded.
fn cert_expiry_with(f: impl FnOnce(&mut Value)) -> Harness {
    Harness::desk_suite_mission("search-cert-expiry", f)
}

/// The progress note after a first read of `services/accounts.yaml`, with the lever on.
fn note_after_first_read(h: Harness) -> String {
    let r = run_with(h, &read("services/accounts.yaml"), levers(true), 1);
    support::last_progress_note(&r, 1)
}

fn inputs_of(m: &Value) -> Vec<String> {
    m["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn read(path: &str) -> String {
    line("read_file", json!({ "path": path }))
}

fn search() -> String {
    line(
        "search_text",
        json!({"pattern": "cert_expires: 2025-01", "literal": true}),
    )
}

fn answer(service: &str, owner: &str, expires: &str) -> String {
    line(
        "create_file",
        json!({"path": ANSWER, "content": format!("Service: {service}\nOwner: {owner}\nExpires: {expires}\n")}),
    ) + &read(ANSWER)
        + &finish_line()
}

fn right_answer() -> String {
    answer("pricing", "emil@shop.example", "2025-01-17")
}

fn notes(r: &Ran) -> Vec<String> {
    (1..r.model.requests.len())
        .map(|i| support::last_progress_note(r, i))
        .collect()
}

#[test]
fn no_note_names_an_input_in_any_state_of_the_run() {
    // A read in part (a line range), a whole read, a search, a refused finish (not read back),
    // a write, a read back: the note of each step counts, never names.
    let script = line(
        "read_file",
        json!({"path": "services/accounts.yaml", "start_line": 1, "end_line": 2}),
    ) + &read("services/auth.yaml")
        + &line("find_files", json!({"pattern": "*.yaml"}))
        + &search()
        + &read(SECRET)
        + &line(
            "create_file",
            json!({"path": ANSWER, "content": "Service: pricing\nOwner: emil@shop.example\nExpires: 2025-01-17\n"}),
        )
        + &finish_line()
        + &read(ANSWER)
        + &finish_line();
    let r = run_with(
        Harness::desk_suite("search-cert-expiry"),
        &script,
        levers(true),
        1,
    );
    assert!(r.out.passed(), "{}", r.out.reason());
    let all = notes(&r);
    assert_eq!(all.len(), 8);
    for (i, note) in all.iter().enumerate() {
        assert!(!note.contains("services/"), "note {i}: {note}");
        assert!(!note.contains(".yaml"), "note {i}: {note}");
        assert!(!note.contains("pricing"), "note {i}: {note}");
    }
    assert!(
        all[0].contains("0 of the 22 inputs read in full"),
        "{}",
        all[0]
    );
    assert!(
        all[1].contains("1 of the 22 inputs read in full"),
        "{}",
        all[1]
    );
    // The refused finish: the note speaks of the deliverable only.
    assert!(
        all[6].contains("fix out/answer.md as the refusal says"),
        "{}",
        all[6]
    );
}

#[test]
fn with_every_lever_on_no_prompt_favours_the_secret_input() {
    // Never read, never searched: every mention of the secret input in any prompt must be
    // matched by one of an input the task does not need (the list of inputs names all of
    // them alike). A wrong answer is judged and retried, so the retry feedback, the checklist,
    // the task reminder and every other note of every lever speak. Every lever but
    // `task-search`, which searches by design: its lines name every file that holds the task's
    // words, the answer's among them, and agent_task_search.rs shows they never depend on which
    // input the contract wants.
    let script = read("services/accounts.yaml")
        + &read("services/auth.yaml")
        + &answer("auth", "someone@shop.example", "2026-03-01")
        + &read("services/billing.yaml")
        + &line(
            "replace_file",
            json!({"path": ANSWER, "content": "Service: billing\nOwner: x@shop.example\nExpires: 2025-09-01\n"}),
        )
        + &read(ANSWER)
        + &finish_line();
    let r = run_with(
        Harness::desk_suite("search-cert-expiry"),
        &script,
        Levers {
            task_search: false,
            folder_stats: false,
            ..support::ALL_ON_BUT_NOTES
        },
        2,
    );
    assert!(!r.out.passed());
    assert!(r.model.requests.len() >= 6, "{}", r.model.requests.len());
    for (i, p) in r.model.prompts().iter().enumerate() {
        let secret = p.matches("pricing").count();
        let other = p.matches("wishlist").count();
        assert_eq!(
            secret, other,
            "prompt {i} names pricing {secret}x, wishlist {other}x: {p}"
        );
        // Nor the answer's values, which only the secret input holds.
        assert!(!p.contains("emil@shop.example"), "prompt {i}: {p}");
        assert!(!p.contains("2025-01-17"), "prompt {i}: {p}");
    }
    for reason in support::finish_refusals(&r.events) {
        assert!(!reason.contains("pricing"), "{reason}");
    }
}

/// Whether search-cert-expiry, its mission JSON changed by `f`, loads; the error if not.
fn loads_with(f: impl FnOnce(&mut Value)) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let mdir = dir.path().join("mission");
    support::copy_dir(
        &support::missions_dir().join("../suites/desk/search-cert-expiry"),
        &mdir,
    );
    let file = mdir.join("mission.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    f(&mut m);
    std::fs::write(&file, m.to_string()).unwrap();
    rein_engine::mission::Mission::load(&file)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn an_inputs_read_path_in_another_spelling_or_outside_the_inputs_is_refused_at_load() {
    // `same_path` in task_picks_inputs could disagree with the judge only on a spelling the
    // contract lets through: it lets none (`./x`, a path that is no input).
    let dotted = loads_with(|m| {
        let paths: Vec<String> = inputs_of(m).iter().map(|p| format!("./{p}")).collect();
        support::check_mut(m, "inputs-read")["paths"] = json!(paths);
    });
    assert!(
        dotted
            .as_ref()
            .is_err_and(|e| e.contains("write `./services/accounts.yaml` as")),
        "{dotted:?}"
    );
    let upper = loads_with(|m| {
        support::check_mut(m, "inputs-read")["paths"] = json!(["services/Pricing.yaml"]);
    });
    assert!(upper.is_err(), "{upper:?}");
    let outside = loads_with(|m| {
        support::check_mut(m, "inputs-read")["paths"] = json!(["out/answer.md"]);
    });
    assert!(
        outside
            .as_ref()
            .is_err_and(|e| e.contains("is not one of the mission's inputs")),
        "{outside:?}"
    );
}

#[test]
fn every_input_and_the_editable_file_listed_keeps_the_note_that_names_them() {
    // Every input (in another order) plus the editable deliverable: every input is needed.
    let h = Harness::desk_suite_with("search-cert-expiry", |fixtures| {
        std::fs::create_dir_all(fixtures.join("out")).unwrap();
        std::fs::write(fixtures.join("out/answer.md"), "Service: ?\n").unwrap();
        let file = fixtures.parent().unwrap().join("mission.json");
        let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        m["editable"] = json!(["out/answer.md"]);
        let mut paths = inputs_of(&m);
        paths.reverse();
        paths.push("out/answer.md".into());
        support::check_mut(&mut m, "inputs-read")["paths"] = json!(paths);
        std::fs::write(&file, m.to_string()).unwrap();
    });
    let note = note_after_first_read(h);
    assert!(note.contains("not yet read: services/auth.yaml"), "{note}");
    assert!(
        note.contains("read the whole of services/auth.yaml"),
        "{note}"
    );
}

#[test]
fn every_input_needed_across_two_checks_keeps_the_note_that_names_them() {
    // Two inputs-read checks, each with half of the inputs: together the judge needs every
    // input read, and the note must not say "the task needs only some of them".
    let h = cert_expiry_with(|m| {
        let inputs = inputs_of(m);
        let (a, b) = inputs.split_at(inputs.len() / 2);
        support::check_mut(m, "inputs-read")["paths"] = json!(a);
        let mut second = support::check_mut(m, "inputs-read").clone();
        second["id"] = json!("inputs-read-rest");
        second["paths"] = json!(b);
        m["checks"].as_array_mut().unwrap().push(second);
    });
    let note = note_after_first_read(h);
    assert!(
        !note.contains("the task needs only some of them"),
        "the judge needs every input: {note}"
    );
    assert!(
        note.contains("read the whole of services/auth.yaml with read_file"),
        "{note}"
    );
}

#[test]
fn an_empty_paths_check_among_others_keeps_the_note_that_names_them() {
    // A chosen-inputs check and a second check with no paths (every input): every input is
    // needed, the note names them.
    let h = cert_expiry_with(|m| {
        let mut all = support::check_mut(m, "inputs-read").clone();
        all["id"] = json!("inputs-read-all");
        all.as_object_mut().unwrap().remove("paths");
        m["checks"].as_array_mut().unwrap().push(all);
    });
    let note = note_after_first_read(h);
    assert!(
        note.contains("read the whole of services/auth.yaml with read_file"),
        "{note}"
    );
}

/// search-cert-expiry cut to its first `n` inputs (the secret one kept, listed last).
fn cert_expiry_inputs(n: usize) -> Harness {
    cert_expiry_with(|m| {
        let mut inputs: Vec<String> = inputs_of(m)
            .into_iter()
            .filter(|p| p != SECRET)
            .take(n - 1)
            .collect();
        inputs.push(SECRET.into());
        m["inputs"] = json!(inputs);
    })
}

#[test]
fn eight_inputs_get_the_counting_note_seven_keep_the_naming_one() {
    let r8 = run_with(
        cert_expiry_inputs(8),
        &read("services/accounts.yaml"),
        levers(true),
        1,
    );
    let note8 = support::last_progress_note(&r8, 1);
    assert!(note8.contains("1 of the 8 inputs read in full"), "{note8}");
    assert!(!note8.contains("services/"), "{note8}");
    let r7 = run_with(
        cert_expiry_inputs(7),
        &read("services/accounts.yaml"),
        levers(true),
        1,
    );
    let note7 = support::last_progress_note(&r7, 1);
    assert!(note7.contains("not yet read: "), "{note7}");
    // Seven inputs, all named alike: the secret one is named among the others, in the
    // mission's order, not singled out.
    assert!(note7.contains(SECRET), "{note7}");
    assert!(
        note7.contains("read the whole of services/auth.yaml"),
        "{note7}"
    );
}

#[test]
fn without_search_tools_the_note_names_no_tool_the_run_lacks_and_no_input() {
    // Neither search_text nor find_files offered: no search is suggested, no input named.
    let h = cert_expiry_with(|m| {
        support::drop_tools(m, &["search_text", "find_files"]);
    });
    let note = note_after_first_read(h);
    assert!(!note.contains("search_text"), "{note}");
    assert!(!note.contains("find_files"), "{note}");
    assert!(!note.contains("services/"), "{note}");
    assert!(note.contains("1 of the 22 inputs read in full"), "{note}");
}

#[test]
fn the_judge_gives_the_same_verdict_with_the_lever_on_or_off() {
    let scripts = [
        // Right, found by a search and read in full.
        search() + &read(SECRET) + &right_answer(),
        // Right values guessed from the search's line alone: inputs-read fails either way.
        search() + &right_answer(),
        // Every input read, a wrong service.
        inputs_of(
            &serde_json::from_str(
                &std::fs::read_to_string(
                    support::missions_dir().join("../suites/desk/search-cert-expiry/mission.json"),
                )
                .unwrap(),
            )
            .unwrap(),
        )
        .iter()
        .map(|p| read(p))
        .collect::<String>()
            + &answer("gateway", "x@shop.example", "2025-01-17"),
    ];
    for (k, script) in scripts.iter().enumerate() {
        let on = run_with(
            Harness::desk_suite("search-cert-expiry"),
            script,
            levers(true),
            1,
        );
        let off = run_with(
            Harness::desk_suite("search-cert-expiry"),
            script,
            levers(false),
            1,
        );
        assert_eq!(on.out.passed(), off.out.passed(), "script {k}");
        assert_eq!(
            support::verdict_ids(&on),
            support::verdict_ids(&off),
            "script {k}"
        );
        assert_eq!(on.out.passed(), k == 0, "script {k}: {}", on.out.reason());
    }
}

#[test]
fn an_in_place_edit_among_many_inputs_is_told_to_edit_its_file_and_names_no_input() {
    // Eight inputs and an editable deliverable: the picked-inputs note still points at the
    // deliverable (which is no input), never at an input.
    let h = Harness::desk_suite_with("search-cert-expiry", |fixtures| {
        std::fs::create_dir_all(fixtures.join("out")).unwrap();
        std::fs::write(fixtures.join("out/answer.md"), "Service: ?\n").unwrap();
        let file = fixtures.parent().unwrap().join("mission.json");
        let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        m["editable"] = json!(["out/answer.md"]);
        std::fs::write(&file, m.to_string()).unwrap();
    });
    let note = note_after_first_read(h);
    assert!(note.contains("out/answer.md is not edited yet"), "{note}");
    assert!(!note.contains("services/"), "{note}");
}
