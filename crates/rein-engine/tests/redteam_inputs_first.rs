#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of the `inputs-first` lever: where Rein's reads up front could weaken the judge,
//! leak what the model is to find, lie in the journal, or break a run. Every attack is kept
//! here as a regression test.

#[path = "agent_support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rein_engine::agent::{AgentEvent, Levers, RunOutcome};
use rein_engine::gate::{AllowAll, ApprovalDecision, ApprovalRequest, Approver};
use serde_json::{json, Value};
use support::{
    copy_dir, finish_line, finish_refusals, journal_events, line, missions_dir, Harness,
    PromptRecorder,
};

const CAP: usize = 6_000;

fn levers(on: bool) -> Levers {
    Levers {
        inputs_first: on,
        ..Levers::DEFAULT
    }
}

fn run(
    h: &Harness,
    script: &str,
    levers: Levers,
    tweak: impl FnOnce(&mut rein_engine::agent::AgentOptions),
) -> (RunOutcome, Vec<AgentEvent>, PromptRecorder) {
    let mut model = PromptRecorder::new(script, "redteam_inputs_first.jsonl");
    let (outcome, events) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.limits.attempts = 1;
        tweak(o);
    });
    (outcome, events, model)
}

fn check(outcome: &RunOutcome, id: &str) -> Option<(bool, String)> {
    outcome
        .verdict
        .as_ref()?
        .checks
        .iter()
        .find(|c| c.id == id)
        .map(|c| (c.passed, c.facts.join("; ")))
}

/// The one `inputs_first` event of the run: the files read, or why none were.
fn inputs_first_event(h: &Harness, outcome: &RunOutcome) -> Option<Value> {
    let events = journal_events(&h.journal, outcome.run, "inputs_first");
    assert!(events.len() <= 1, "{events:?}");
    events.into_iter().next()
}

/// How many files Rein read up front in the run (it must have said).
fn files_read_up_front(h: &Harness, outcome: &RunOutcome) -> usize {
    inputs_first_event(h, outcome).expect("an inputs_first event")["read"]
        .as_array()
        .unwrap()
        .len()
}

fn not_applied(h: &Harness, outcome: &RunOutcome) -> String {
    let e = inputs_first_event(h, outcome).expect("an inputs_first event");
    assert_eq!(e["read"], json!([]), "{e}");
    e["not_applied"].as_str().unwrap().to_string()
}

/// Every file under `root`, by relative path, with its bytes.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let p = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.strip_prefix(root).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap_or_default(),
                );
            }
        }
    }
    out
}

/// Steps Rein journaled as its own (`by: rein`).
fn rein_steps(h: &Harness, outcome: &RunOutcome) -> Vec<rein_journal::TraceStep> {
    h.journal
        .run_trace(outcome.run)
        .unwrap()
        .steps
        .into_iter()
        .filter(|t| t.step.detail.get("by").is_some())
        .collect()
}

/// desk_task with its three inputs rewritten to `texts` (overview, meeting notes, tasks).
fn desk_task_with(texts: [&[u8]; 3]) -> Harness {
    let h = Harness::new("desk_task");
    for (p, t) in [
        "notes/overview.md",
        "notes/meeting-notes.md",
        "data/tasks.csv",
    ]
    .iter()
    .zip(texts)
    {
        std::fs::write(h.workspace.join(p), t).unwrap();
    }
    h
}

// ---------------------------------------------------------------------------------------------
// Which missions the lever applies to: every mission under suites/ and missions/.
// ---------------------------------------------------------------------------------------------

fn mission_files() -> Vec<PathBuf> {
    let root = missions_dir().join("..");
    let mut out = Vec::new();
    let mut stack = vec![root.join("suites"), root.join("missions")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "mission.json") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The missions the lever reads the inputs of (all other runs journal why not, or never get
/// to the first step). Pinned: a mission that joins or leaves this list is a decision.
const APPLIES_TO: &[&str] = &[
    "desk_task",
    "doc_extract",
    "explore-archive-years",
    "explore-config-formats",
    "explore-log-lines",
    "explore-project-tree",
    "extract-applications",
    "extract-bank-statements",
    "extract-flight-bookings",
    "extract-product-specs",
    "extract-receipts",
    "extract-registrations",
    "report-sales-regions",
    "summarize-budget",
    "summarize-feedback",
    "summarize-incident",
    "summarize-interviews",
    "summarize-release",
    "summarize-weekly-notes",
];

#[test]
fn every_mission_in_the_repository_is_excluded_or_read_as_its_contract_allows() {
    let mut applied = Vec::new();
    let files = mission_files();
    assert!(files.len() >= 70, "{files:?}");
    for file in files {
        let src = file.parent().unwrap();
        let name = src.file_name().unwrap().to_string_lossy().to_string();
        let dir = tempfile::tempdir().unwrap();
        let mdir = dir.path().join("mission");
        copy_dir(src, &mdir);
        let h = Harness::load(dir, mdir.join("mission.json"));
        let m: Value =
            serde_json::from_str(&std::fs::read_to_string(h.mission_file.as_path()).unwrap())
                .unwrap();
        let strs = |v: &Value| -> Vec<String> {
            v.as_array()
                .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
                .unwrap_or_default()
        };
        let mut wanted = strs(&m["inputs"]);
        wanted.extend(strs(&m["editable"]));
        let checks = m["checks"].as_array().unwrap();
        let subset = checks.iter().any(|c| {
            let paths = strs(&c["paths"]);
            c["kind"] == "inputs_read"
                && !paths.is_empty()
                && (paths.iter().any(|p| !wanted.contains(p))
                    || wanted.iter().any(|w| !paths.contains(w)))
        });
        let calls_judged = checks.iter().any(|c| c["kind"] == "actions_called");
        let before = snapshot(&h.workspace);
        let (outcome, _, model) = run(&h, &finish_line(), levers(true), |o| {
            o.limits.max_turns = 1;
        });
        let human = m["mode"] == "human_review_only";
        let event = inputs_first_event(&h, &outcome);
        if human {
            // Refused before the first step: Rein reads nothing either.
            assert!(event.is_none(), "{name}: {event:?}");
            assert!(model.requests.is_empty(), "{name}");
            continue;
        }
        let event = event.unwrap_or_else(|| panic!("{name}: no inputs_first event"));
        let read = strs(&event["read"]);
        if read.is_empty() {
            assert!(event["not_applied"].is_string(), "{name}: {event}");
            assert!(rein_steps(&h, &outcome).is_empty(), "{name}");
            assert!(!model.prompt(0).contains("Rein's read"), "{name}");
            continue;
        }
        // Applied: never where the contract names a subset or judges the calls.
        assert!(
            !subset,
            "{name}: read {read:?} where a check names a subset"
        );
        assert!(!calls_judged, "{name}: read where the calls are judged");
        assert_eq!(read, wanted, "{name}");
        assert_eq!(rein_steps(&h, &outcome).len(), read.len(), "{name}");
        assert!(
            model
                .prompt(0)
                .contains(&format!("Result of Rein's read {}", read.len())),
            "{name}"
        );
        // Nothing written: the workspace is as it was (the model only called finish).
        assert_eq!(
            snapshot(&h.workspace),
            before,
            "{name}: the workspace changed"
        );
        // The judge counts the reads, and says whose they were.
        for c in checks.iter().filter(|c| c["kind"] == "inputs_read") {
            let (passed, facts) = check(&outcome, c["id"].as_str().unwrap()).unwrap();
            assert!(passed, "{name}: {facts}");
            if strs(&c["paths"]).is_empty() {
                assert_eq!(
                    facts.matches("by Rein before the first step").count(),
                    read.len(),
                    "{name}: {facts}"
                );
            }
        }
        applied.push(name);
    }
    applied.sort();
    assert_eq!(applied, APPLIES_TO);
}

#[test]
fn every_search_and_related_task_is_excluded_for_its_subset() {
    let root = missions_dir().join("../suites/desk");
    for entry in std::fs::read_dir(&root).unwrap() {
        let src = entry.unwrap().path();
        let name = src.file_name().unwrap().to_string_lossy().to_string();
        if !(name.starts_with("search-") || name.starts_with("related-")) {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let mdir = dir.path().join("mission");
        copy_dir(&src, &mdir);
        let h = Harness::load(dir, mdir.join("mission.json"));
        let (outcome, _, model) = run(&h, &finish_line(), levers(true), |o| {
            o.limits.max_turns = 1;
        });
        let why = not_applied(&h, &outcome);
        assert!(why.contains("part of the task"), "{name}: {why}");
        assert!(!model.prompt(0).contains("Rein's read"), "{name}");
        // The withheld names stay withheld: the check says nothing of which inputs.
        let (passed, facts) = check(&outcome, "inputs-read").unwrap();
        assert!(!passed, "{name}: {facts}");
    }
}

#[test]
fn not_in_memory_mode_even_where_it_would_apply() {
    let h = Harness::new("desk_task");
    let (outcome, _, model) = run(&h, &finish_line(), levers(true), |o| o.memory = true);
    assert!(inputs_first_event(&h, &outcome).is_none());
    assert!(rein_steps(&h, &outcome).is_empty());
    assert!(!model.prompt(0).contains("Rein's read"));
    if let Some((passed, facts)) = check(&outcome, "inputs-read") {
        assert!(!passed, "{facts}");
        assert!(!facts.contains("by Rein"), "{facts}");
    }
}

// ---------------------------------------------------------------------------------------------
// Path spellings and check shapes that could pass a subset off as the whole set.
// ---------------------------------------------------------------------------------------------

fn desk_task_with_inputs_read(checks: Vec<Value>) -> Harness {
    Harness::with_edit("desk_task", move |m| {
        let list = m["checks"].as_array_mut().unwrap();
        list.retain(|c| c["kind"] != "inputs_read");
        list.extend(checks);
    })
}

#[test]
fn a_subset_named_twice_is_still_a_subset() {
    let h = desk_task_with_inputs_read(vec![json!({
        "id": "inputs-read", "kind": "inputs_read",
        "paths": ["data/tasks.csv", "data/tasks.csv", "notes/overview.md", "notes/overview.md"]
    })]);
    let (outcome, _, model) = run(&h, &finish_line(), levers(true), |_| {});
    assert!(not_applied(&h, &outcome).contains("part of the task"));
    assert!(!model.prompt(0).contains("Rein's read"));
}

#[test]
fn a_whole_set_check_beside_a_subset_check_does_not_open_the_subset() {
    let h = desk_task_with_inputs_read(vec![
        json!({"id": "all-read", "kind": "inputs_read"}),
        json!({"id": "which-read", "kind": "inputs_read", "paths": ["data/tasks.csv"]}),
    ]);
    let (outcome, _, _) = run(&h, &finish_line(), levers(true), |_| {});
    assert!(not_applied(&h, &outcome).contains("`which-read`"));
    assert!(!check(&outcome, "which-read").unwrap().0);
    assert!(!check(&outcome, "all-read").unwrap().0);
}

#[test]
fn a_spelling_other_than_the_inputs_own_is_refused_at_load_not_matched() {
    // `./data/tasks.csv` or `data//tasks.csv` in a check could make two spellings of one file
    // look like two files; the loader only takes a path in normal form.
    for p in ["./data/tasks.csv", "data//tasks.csv", "data/tasks.csv/"] {
        let dir = tempfile::tempdir().unwrap();
        let mdir = dir.path().join("mission");
        copy_dir(&missions_dir().join("desk_task"), &mdir);
        let file = mdir.join("mission.json");
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for c in v["checks"].as_array_mut().unwrap() {
            if c["kind"] == "inputs_read" {
                c["paths"] = json!([p, "notes/overview.md", "notes/meeting-notes.md"]);
            }
        }
        std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        let err = rein_engine::mission::Mission::load(&file).unwrap_err();
        assert!(err.to_string().contains("data/tasks.csv"), "{p}: {err}");
    }
    // Another letter case names another file: the lever does not read it as the same one.
    let h = desk_task_with_inputs_read(vec![json!({
        "id": "inputs-read", "kind": "inputs_read",
        "paths": ["data/tasks.csv", "notes/overview.md", "notes/meeting-notes.md"]
    })]);
    let (outcome, _, _) = run(&h, &finish_line(), levers(true), |_| {});
    assert_eq!(files_read_up_front(&h, &outcome), 3);
}

// ---------------------------------------------------------------------------------------------
// The size cap, counted in characters, and what the model is shown.
// ---------------------------------------------------------------------------------------------

/// desk_task's inputs padded so that they hold `total` characters in all, the padding made of
/// `fill` (one character each).
fn desk_task_of_chars(total: usize, fill: char) -> Harness {
    let h = Harness::new("desk_task");
    let keep = support::workspace_chars(&h, &["notes/meeting-notes.md", "data/tasks.csv"]);
    let lines = (total - keep) / 50;
    let mut text = String::new();
    for _ in 0..lines {
        text.extend(std::iter::repeat_n(fill, 49));
        text.push('\n');
    }
    while text.chars().count() + keep < total {
        text.push(fill);
    }
    assert_eq!(text.chars().count() + keep, total);
    std::fs::write(h.workspace.join("notes/overview.md"), text).unwrap();
    h
}

#[test]
fn the_cap_is_inclusive_and_counts_characters_not_bytes() {
    let h = desk_task_of_chars(CAP, 'a');
    let (outcome, _, _) = run(&h, &finish_line(), levers(true), |_| {});
    assert_eq!(files_read_up_front(&h, &outcome), 3);

    let h = desk_task_of_chars(CAP + 1, 'a');
    let (outcome, _, model) = run(&h, &finish_line(), levers(true), |_| {});
    assert!(not_applied(&h, &outcome).contains("6001 characters"));
    assert!(!model.prompt(0).contains("Rein's read"));

    // Two bytes a character: 6,000 characters are about 11,000 bytes, still under the cap.
    let h = desk_task_of_chars(CAP, 'é');
    let (outcome, _, _) = run(&h, &finish_line(), levers(true), |_| {});
    assert_eq!(files_read_up_front(&h, &outcome), 3);
}

#[test]
fn a_read_the_model_is_shown_only_in_part_is_not_a_read_in_full() {
    // Within the cap in characters, but every `"` and line break is two characters of the
    // result's JSON: the model's copy of the overview is clipped ("more characters not
    // shown"). The judge must not then say Rein read it in full for the model.
    let h = desk_task_of_chars(CAP, '"');
    let (outcome, _, model) = run(&h, &finish_line(), levers(true), |_| {});
    assert_eq!(files_read_up_front(&h, &outcome), 3);
    let first = model.prompt(0);
    assert!(first.contains("Cut "), "{first}");
    assert!(!first.contains("more characters not shown"), "{first}");
    let (passed, facts) = check(&outcome, "inputs-read").unwrap();
    assert!(!passed, "{facts}");
    assert!(
        facts.contains("notes/overview.md: read only in part"),
        "{facts}"
    );
    // The other two were shown whole and count.
    assert_eq!(
        facts.matches("by Rein before the first step").count(),
        2,
        "{facts}"
    );
    // When the model then reads the file itself, that read is the model's and is judged as the
    // model's reads always are: cut at a line too (a limit of every read, not of the lever),
    // so one read does not cover it.
    let script = line("read_file", json!({"path": "notes/overview.md"})) + &finish_line();
    let h = desk_task_of_chars(CAP, '"');
    let (outcome, _, _) = run(&h, &script, levers(true), |_| {});
    let (_, facts) = check(&outcome, "inputs-read").unwrap();
    assert!(
        facts.contains("notes/overview.md: read only in part"),
        "{facts}"
    );
}

// ---------------------------------------------------------------------------------------------
// Inputs the gate will not show whole: a symlink out of the workspace, a non-UTF-8 file.
// ---------------------------------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn a_symlinked_input_never_carries_an_outside_file_into_the_prompt() {
    let h = Harness::new("desk_task");
    let secret = h.dir.path().join("secret.txt");
    std::fs::write(&secret, "SECRET-TOKEN-7f3a outside the workspace\n").unwrap();
    let link = h.workspace.join("notes/overview.md");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let (outcome, _, model) = run(&h, &finish_line(), levers(true), |_| {});
    // The judge's view refuses the link as the gate would: the lever reads nothing.
    let why = not_applied(&h, &outcome);
    assert!(
        why.contains("notes/overview.md could not be read") && why.contains("symbolic link"),
        "{why}"
    );
    assert!(rein_steps(&h, &outcome).is_empty());
    for p in model.prompts() {
        assert!(!p.contains("SECRET-TOKEN-7f3a"), "{p}");
    }
    let trace = h.journal.run_trace(outcome.run).unwrap();
    for s in &trace.steps {
        assert!(!s.step.detail.to_string().contains("SECRET-TOKEN-7f3a"));
    }
    for e in &trace.events {
        assert!(!e.payload.to_string().contains("SECRET-TOKEN-7f3a"));
    }
    // Whatever the lever did, the judge does not count the link as the overview read whole
    // by Rein.
    let (passed, facts) = check(&outcome, "inputs-read").unwrap();
    assert!(!passed, "{facts}");
    assert!(
        !facts.contains("notes/overview.md: read in full"),
        "{facts}"
    );
}

#[test]
fn a_non_utf8_input_read_up_front_is_not_a_read_in_full() {
    let h = desk_task_with([
        b"Project overview.\n",
        b"Meeting notes.\n",
        b"task,hours\n\xff\xfe broken,3\n",
    ]);
    let (outcome, _, model) = run(&h, &finish_line(), levers(true), |_| {});
    assert_eq!(files_read_up_front(&h, &outcome), 3);
    let first = model.prompt(0);
    assert!(first.contains("binary or non-UTF-8"), "{first}");
    let (passed, facts) = check(&outcome, "inputs-read").unwrap();
    assert!(!passed, "{facts}");
    assert!(
        facts.contains("data/tasks.csv: read only in part"),
        "{facts}"
    );
    assert_eq!(
        facts.matches("by Rein before the first step").count(),
        2,
        "{facts}"
    );
}

#[test]
fn an_empty_input_read_up_front_is_read_whole_as_empty() {
    // read_file refused an empty file's default range (end_line 0 before start_line 1), so a
    // model could never read an empty input in full; fixed in the tool. Up front, Rein's read
    // is executed, shown as an empty file, and counts as read whole.
    let h = desk_task_with([b"", b"Meeting notes.\n", b"task,hours\nA,3\n"]);
    let (outcome, _, model) = run(&h, &finish_line(), levers(true), |_| {});
    let steps = rein_steps(&h, &outcome);
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[0].step.detail["outcome"], "executed");
    let first = model.prompt(0);
    assert!(
        first.contains(
            "Result of Rein's read 1 (read_file, made for you before your first step): executed"
        ),
        "{first}"
    );
    let (passed, facts) = check(&outcome, "inputs-read").unwrap();
    assert!(passed, "{facts}");
    assert!(
        facts.contains("notes/overview.md: read in full at call 1 (by Rein"),
        "{facts}"
    );
}

// ---------------------------------------------------------------------------------------------
// The gate's policy: a read the policy denies stays denied.
// ---------------------------------------------------------------------------------------------

struct DenyReads {
    asked: Vec<ApprovalRequest>,
}

impl Approver for DenyReads {
    fn decide(&mut self, request: &ApprovalRequest) -> ApprovalDecision {
        self.asked.push(request.clone());
        ApprovalDecision::Deny {
            reason: "not that one".into(),
        }
    }
}

/// A run with the lever on, `finish` alone scripted, under a policy rule `action` (deny or ask)
/// for reads of `data/**`, with an approver that says no to every question.
fn run_with_data_reads(action: &str) -> (Harness, RunOutcome, PromptRecorder, DenyReads) {
    let h = Harness::new("desk_task");
    let policy = rein_engine::policy::Policy::from_toml_str(
        &format!("[[rule]]\ntool = \"read_file\"\npaths = [\"data/**\"]\naction = \"{action}\"\n"),
        "policy.toml",
        &rein_workspace::desk_registry(),
    )
    .unwrap();
    let mut model = PromptRecorder::new(&finish_line(), &format!("{action}.jsonl"));
    let mut approver = DenyReads { asked: Vec::new() };
    let (outcome, _) = h.run_gated_with_policy(&mut model, &mut approver, policy, |o| {
        o.levers = levers(true);
        o.limits.attempts = 1;
    });
    (h, outcome, model, approver)
}

#[test]
fn a_read_the_policy_denies_is_journaled_denied_and_counts_for_nothing() {
    let (h, outcome, model, _) = run_with_data_reads("deny");
    let steps = rein_steps(&h, &outcome);
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[2].step.detail["parameters"]["path"], "data/tasks.csv");
    assert_ne!(steps[2].step.detail["outcome"], "executed");
    let call = steps[2].call.as_ref().expect("the gate journaled the call");
    assert_ne!(call.outcome.to_string(), "executed");
    let first = model.prompt(0);
    let csv = std::fs::read_to_string(h.workspace.join("data/tasks.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(!first.contains(header), "{first}");
    assert!(
        first.contains(
            "Result of Rein's read 3 (read_file, made for you before your first step): denied"
        ),
        "{first}"
    );
    let (passed, facts) = check(&outcome, "inputs-read").unwrap();
    assert!(!passed, "{facts}");
    assert!(facts.contains("data/tasks.csv: never read"), "{facts}");
}

#[test]
fn a_read_the_policy_asks_about_is_put_to_the_person_as_rein_s_and_a_no_counts_for_nothing() {
    let (h, outcome, model, approver) = run_with_data_reads("ask");
    // Whoever is asked can tell the read is Rein's, not the model's.
    assert!(!approver.asked.is_empty());
    for r in &approver.asked {
        assert!(r.call_id.contains("rein-read"), "{:?}", r.call_id);
    }
    let steps = rein_steps(&h, &outcome);
    assert_eq!(steps.len(), 3);
    assert_ne!(steps[2].step.detail["outcome"], "executed");
    let (passed, facts) = check(&outcome, "inputs-read").unwrap();
    assert!(!passed, "{facts}");
    assert!(facts.contains("data/tasks.csv: never read"), "{facts}");
    let csv = std::fs::read_to_string(h.workspace.join("data/tasks.csv")).unwrap();
    assert!(!model.prompt(0).contains(csv.lines().next().unwrap()));
}

// ---------------------------------------------------------------------------------------------
// The deliverable is an editable file: Rein's read of it is not a read back.
// ---------------------------------------------------------------------------------------------

fn edit_config_values() -> Harness {
    let src = missions_dir().join("../suites/desk/edit-config-values");
    let dir = tempfile::tempdir().unwrap();
    let mdir = dir.path().join("mission");
    copy_dir(&src, &mdir);
    let file = mdir.join("mission.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    // Every input and editable file, as the lever reads them.
    for c in v["checks"].as_array_mut().unwrap() {
        if c["kind"] == "inputs_read" {
            c.as_object_mut().unwrap().remove("paths");
        }
    }
    std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    Harness::load(dir, file)
}

#[test]
fn rein_s_read_of_an_editable_deliverable_is_not_the_model_reading_it_back() {
    let h = edit_config_values();
    let artifact = h.contract.mission.required_artifact.clone();
    assert!(h.contract.mission.editable.contains(&artifact));
    let old = std::fs::read_to_string(h.workspace.join(&artifact)).unwrap();
    let new = format!("{old}\n# edited by the model with enough words to count as content\n");
    let script = line("replace_file", json!({"path": artifact, "content": new})) + &finish_line();
    let (outcome, events, model) = run(&h, &script, levers(true), |o| {
        o.limits.max_turns = 2;
    });
    let read = inputs_first_event(&h, &outcome).unwrap()["read"].clone();
    assert_eq!(read, json!(["config/README.md", "config/app.toml"]));
    // Before any write, the note says the file is not edited yet, never that it was read back.
    let first = model.prompt(0);
    assert!(
        first.contains("Progress: every input was read; config/app.toml is not edited yet."),
        "{first}"
    );
    assert!(!first.contains("is written and was read back"), "{first}");
    // The write, then finish without a read back: refused, whatever Rein read before.
    let refusals = finish_refusals(&events);
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(
        refusals[0].contains("re-read the output first"),
        "{refusals:?}"
    );
    assert_ne!(outcome.status.to_string(), "pass");
}

// ---------------------------------------------------------------------------------------------
// The journal: which calls were Rein's, and nothing else.
// ---------------------------------------------------------------------------------------------

#[test]
fn the_journal_tells_rein_s_calls_from_the_model_s_and_the_gate_agrees() {
    let h = Harness::new("desk_task");
    let script = line("read_file", json!({"path": "data/tasks.csv"})) + &finish_line();
    let before = snapshot(&h.workspace);
    let (outcome, events, recorder) = run(&h, &script, levers(true), |_| {});
    assert_eq!(snapshot(&h.workspace), before);
    let trace = h.journal.run_trace(outcome.run).unwrap();
    assert!(trace.changes.is_empty(), "{:?}", trace.changes);
    let rein: Vec<_> = trace
        .steps
        .iter()
        .filter(|t| t.step.detail["by"] == "rein")
        .collect();
    let model: Vec<_> = trace
        .steps
        .iter()
        .filter(|t| t.step.action.is_some() && t.step.detail.get("by").is_none())
        .collect();
    assert_eq!(rein.len(), 3);
    for (i, t) in rein.iter().enumerate() {
        let s = &t.step;
        assert!(s.reply.is_none());
        assert_eq!(s.prompt_tokens.unwrap_or(0), 0);
        assert_eq!(s.completion_tokens.unwrap_or(0), 0);
        assert!(s
            .thought
            .as_deref()
            .unwrap()
            .contains("Rein read this input"));
        let id = s.call_id.as_deref().unwrap();
        assert_eq!(id, format!("run{}-rein-read{}", outcome.run, i + 1));
        let call = t.call.as_ref().expect("the gate journaled Rein's call");
        assert_eq!(call.outcome.to_string(), "executed");
    }
    // Rein's calls come first, and every later step is the model's, with its reply.
    assert!(trace.steps[..3]
        .iter()
        .all(|t| t.step.detail["by"] == "rein"));
    assert!(model.iter().all(|t| t.step.reply.is_some()));
    // The model's own read of a file Rein read is the model's and is not Rein's.
    assert_eq!(model[0].step.detail["parameters"]["path"], "data/tasks.csv");
    // The gate saw exactly Rein's three calls and the model's, no more.
    let ids: Vec<&str> = trace
        .tool_calls
        .iter()
        .map(|c| c.call_id.as_str())
        .collect();
    assert_eq!(ids.iter().filter(|i| i.contains("rein-read")).count(), 3);
    // Rein's steps are not the model's steps: figures count the model's requests alone.
    assert_eq!(outcome.figures.steps as usize, recorder.requests.len());
    assert_eq!(
        outcome.figures.prompt_tokens,
        recorder_prompt_tokens(&h, &outcome)
    );
    let step_events: Vec<u32> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Step(s)
                if s.thought
                    .as_deref()
                    .is_some_and(|t| t.contains("Rein read")) =>
            {
                Some(s.step)
            }
            _ => None,
        })
        .collect();
    assert_eq!(step_events, vec![0, 0, 0]);
}

#[test]
fn with_the_lever_off_nothing_is_journaled_of_it() {
    let h = Harness::new("desk_task");
    let (outcome, _, model) = run(&h, &finish_line(), levers(false), |_| {});
    assert!(inputs_first_event(&h, &outcome).is_none());
    assert!(rein_steps(&h, &outcome).is_empty());
    assert!(!model.prompt(0).contains("Rein's read"));
    let trace = h.journal.run_trace(outcome.run).unwrap();
    assert!(trace
        .tool_calls
        .iter()
        .all(|c| !c.call_id.contains("rein-read")));
}

#[test]
fn the_model_s_own_reads_of_the_same_files_are_not_told_as_repeats_of_rein_s() {
    // Rein's calls are not the model's: a read it makes of a file Rein read is its first.
    let h = Harness::new("desk_task");
    let script = line("read_file", json!({"path": "data/tasks.csv"})) + &finish_line();
    let (_, _, model) = run(&h, &script, levers(true), |_| {});
    assert!(!model
        .prompt(1)
        .contains("You made exactly this call already"));
}

/// The prompt tokens the journal's steps add up to (Rein's read none).
fn recorder_prompt_tokens(h: &Harness, outcome: &RunOutcome) -> u64 {
    h.journal
        .run_trace(outcome.run)
        .unwrap()
        .steps
        .iter()
        .filter_map(|t| t.step.prompt_tokens)
        .map(|n| u64::try_from(n).unwrap())
        .sum()
}
