#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red-team probes of `write_json` for a file edited in place (lever `write-json`): the tool is
//! offered for a deliverable listed in the mission's `editable` only when the file as the run
//! found it round-trips byte for byte through Rein's serialiser
//! (`rein_workspace::desk::json_layout_kept`). Each test tries one way to have `write_json`
//! reformat such a file anyway: constrained or unconstrained calls, odd path spellings,
//! verified sampling, retries, every lever at once, a first step that changes the file, a
//! mission that lists the tool itself; and `json_layout_kept` itself on numbers, escapes,
//! empty containers, duplicate keys, BOM, CRLF, deep nesting and a large file. A test marked
//! Two were holes (a mission that lists `write_json` itself), mended and marked so.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, Levers, RunOutcome};
use rein_engine::gate::AllowAll;
use rein_engine::mission::Mission;
use rein_models::{Model, ScriptedModel};
use rein_protocol::{Completion, CompletionRequest, FinishReason};
use rein_workspace::desk::{json_layout_kept, serialise_json};
use serde_json::{json, Value};
use support::{journal_events, line, missions_dir, user_messages, Harness};

const TASK: &str = "edit-json-settings";
const SETTINGS: &str = "config/settings.json";
const INPUT: &str = "config/settings.defaults.json";
const INLINE_LANGS: &str = "\"languages\": [\"en\", \"de\"],";
const PRETTY_LANGS: &str = "\"languages\": [\n    \"en\",\n    \"de\"\n  ],";

type Options = rein_engine::agent::AgentOptions;

// ---------------------------------------------------------------------------------------------
// Helpers

fn fixture_text() -> String {
    std::fs::read_to_string(
        missions_dir()
            .join("../suites/desk")
            .join(TASK)
            .join("fixtures")
            .join(SETTINGS),
    )
    .unwrap()
}

fn gold_text() -> String {
    std::fs::read_to_string(
        missions_dir()
            .join("../suites/desk")
            .join(TASK)
            .join("judge/gold/files")
            .join(SETTINGS),
    )
    .unwrap()
}

fn pretty(text: &str) -> String {
    serialise_json(&serde_json::from_str(text).unwrap()).unwrap()
}

fn gold_doc() -> Value {
    serde_json::from_str(&gold_text()).unwrap()
}

fn read_settings() -> String {
    line("read_file", json!({ "path": SETTINGS }))
}

fn read_input() -> String {
    line("read_file", json!({ "path": INPUT }))
}

fn write_json_at(path: &str) -> String {
    line("write_json", json!({"path": path, "document": gold_doc()}))
}

fn edit(old: &str, new: &str) -> String {
    line(
        "edit_file",
        json!({"path": SETTINGS, "old_text": old, "new_text": new}),
    )
}

fn finish() -> String {
    line("finish", json!({"summary": "done"}))
}

/// Whether a request lets the model name `write_json`: its decoding schema has the tool, or,
/// unconstrained, its system prompt (the tool list) names it.
fn offers_write_json(request: &CompletionRequest) -> bool {
    match &request.json_schema {
        Some(schema) => schema.to_string().contains("\"write_json\""),
        None => {
            let rein_protocol::Prompt::Chat { messages } = &request.prompt else {
                panic!("a chat prompt");
            };
            messages
                .iter()
                .filter(|m| m.role == rein_protocol::Role::System)
                .any(|m| m.content.contains("write_json"))
        }
    }
}

/// Whether a request is `change-list`'s question, not a step's.
fn is_list_request(request: &CompletionRequest) -> bool {
    user_messages(request)
        .last()
        .is_some_and(|m| m.contains("list every change the task asks for in it"))
}

/// A scripted model that records every request and answers `change-list`'s question with a
/// fixed list, every other request from the action script.
struct Recorder {
    actions: ScriptedModel,
    requests: Vec<CompletionRequest>,
}

impl Recorder {
    fn new(script: &str) -> Recorder {
        Recorder {
            actions: ScriptedModel::from_str_named(script, std::path::Path::new("redteam.jsonl"))
                .unwrap(),
            requests: Vec::new(),
        }
    }
}

impl Model for Recorder {
    fn identity(&self) -> &rein_protocol::ModelIdentity {
        self.actions.identity()
    }
    fn complete(
        &mut self,
        request: &CompletionRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> rein_models::Result<Completion> {
        self.requests.push(request.clone());
        if is_list_request(request) {
            return Ok(Completion {
                text: json!({"changes": ["autosaveSeconds becomes 10", "add \"fr\" at the end of languages"]})
                    .to_string(),
                finish: FinishReason::Stop,
                prompt_tokens: 10,
                cached_tokens: 0,
                completion_tokens: 10,
                prompt_ms: 0.0,
                generation_ms: 0.0,
            });
        }
        self.actions.complete(request, on_text)
    }
    fn choose(
        &mut self,
        request: &rein_protocol::ChooseRequest,
    ) -> rein_models::Result<rein_protocol::ChooseReply> {
        self.actions.choose(request)
    }
}

struct Ran {
    h: Harness,
    out: RunOutcome,
    events: Vec<AgentEvent>,
    requests: Vec<CompletionRequest>,
}

impl Ran {
    fn on_disk(&self) -> String {
        std::fs::read_to_string(self.h.workspace.join(SETTINGS)).unwrap()
    }

    /// Every step of `action`, as (outcome, summary).
    fn steps(&self, action: &str) -> Vec<(String, String)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Step(s) if s.action.as_deref() == Some(action) => {
                    Some((s.outcome.clone(), s.summary.clone()))
                }
                _ => None,
            })
            .collect()
    }

    /// The run's tools as its `levers` journal event lists them.
    fn journaled_tools(&self) -> Vec<String> {
        journal_events(&self.h.journal, self.out.run, "levers")[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect()
    }

    /// The step requests (not `change-list`'s question) that offered `write_json`.
    fn offering(&self) -> Vec<usize> {
        self.requests
            .iter()
            .enumerate()
            .filter(|(_, r)| !is_list_request(r))
            .filter(|(_, r)| offers_write_json(r))
            .map(|(i, _)| i)
            .collect()
    }

    fn step_requests(&self) -> usize {
        self.requests.iter().filter(|r| !is_list_request(r)).count()
    }
}

fn run_with(h: Harness, script: &str, tweak: impl FnOnce(&mut Options)) -> Ran {
    let mut model = Recorder::new(script);
    let (out, events) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = write_json_only();
        o.limits.attempts = 1;
        tweak(o);
    });
    Ran {
        h,
        out,
        events,
        requests: model.requests,
    }
}

fn write_json_only() -> Levers {
    Levers {
        write_json: true,
        ..Levers::DEFAULT
    }
}

/// Every lever, with `edit_file` kept (neither `whole-rewrite` nor `line-edits`).
fn all_on_with_edit_file() -> Levers {
    Levers {
        whole_rewrite: false,
        line_edits: false,
        ..support::ALL_ON_BUT_NOTES
    }
}

/// edit-json-settings with its file, and its gold, rewritten by `f`.
fn settings_task(f: impl Fn(&str) -> String + 'static) -> Harness {
    Harness::desk_suite_with(TASK, move |dir| {
        let file = dir.join(SETTINGS);
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, f(&text)).unwrap();
        let gold_file = dir.join("../judge/gold/files").join(SETTINGS);
        let gold = std::fs::read_to_string(&gold_file).unwrap();
        std::fs::write(&gold_file, f(&gold)).unwrap();
    })
}

/// The file as any `write_json` of the gold document would leave it.
fn reformatted_gold() -> String {
    serialise_json(&gold_doc()).unwrap()
}

/// The safe outcome of a run on a file in another layout: no request offered `write_json`, the
/// run's tools do not list it, no `write_json` step ran, and the file never took the layout
/// `write_json` writes.
fn assert_never_reformatted(r: &Ran, what: &str) {
    assert!(
        r.offering().is_empty(),
        "{what}: requests {:?} offered write_json",
        r.offering()
    );
    assert!(
        !r.journaled_tools().iter().any(|t| t == "write_json"),
        "{what}: {:?}",
        r.journaled_tools()
    );
    for (outcome, summary) in r.steps("write_json") {
        assert_ne!(outcome, "executed", "{what}: {summary}");
    }
    assert_ne!(
        r.on_disk(),
        reformatted_gold(),
        "{what}: the file was reformatted"
    );
}

// ---------------------------------------------------------------------------------------------
// Claim 1: no path of the run lets write_json reformat a file in another layout.

#[test]
fn constrained_and_unconstrained_runs_never_offer_or_run_write_json() {
    for constrained in [false, true] {
        let script = read_input()
            + &read_settings()
            + &write_json_at(SETTINGS)
            + &write_json_at("./config/settings.json")
            + &write_json_at("config//settings.json")
            + &write_json_at("./config/./settings.json")
            + &finish();
        let r = run_with(Harness::desk_suite(TASK), &script, |o| {
            o.constrained = constrained
        });
        assert_never_reformatted(&r, &format!("constrained {constrained}"));
        assert_eq!(r.on_disk(), fixture_text());
        if !constrained {
            assert_eq!(r.steps("write_json").len(), 4);
            for (outcome, summary) in r.steps("write_json") {
                assert_eq!(outcome, "invalid", "{summary}");
            }
        }
    }
}

/// Verified sampling: the first draw edits the file (a write of the deliverable, so more are
/// drawn); the extra draws call `write_json`. They are never judged as writes, never chosen,
/// and nothing reformats the file.
#[test]
fn sampled_write_json_draws_are_never_proposed() {
    for samples in [3, 4] {
        for constrained in [false, true] {
            let script = read_input()
                + &read_settings()
                + &edit("\"autosaveSeconds\": 30", "\"autosaveSeconds\": 10")
                + &write_json_at(SETTINGS)
                + &write_json_at("./config/settings.json")
                + &write_json_at("config//settings.json")
                + &write_json_at(SETTINGS)
                + &finish();
            let r = run_with(Harness::desk_suite(TASK), &script, |o| {
                o.constrained = constrained;
                o.samples = samples;
            });
            let what = format!("samples {samples}, constrained {constrained}");
            assert_never_reformatted(&r, &what);
            let sampled = support::sampled(&r.events);
            assert!(!sampled.is_empty(), "{what}: the edit was sampled");
            for (candidates, chosen) in &sampled {
                let c = &candidates[*chosen];
                assert_ne!(
                    c.tool.as_deref(),
                    Some("write_json"),
                    "{what}: {candidates:?}"
                );
                for c in candidates {
                    if c.tool.as_deref() == Some("write_json") {
                        assert!(c.skipped.is_some(), "{what}: {candidates:?}");
                    }
                }
            }
            // Only the edit changed the file.
            assert_eq!(
                r.on_disk(),
                fixture_text().replace("\"autosaveSeconds\": 30", "\"autosaveSeconds\": 10"),
                "{what}"
            );
        }
    }
}

/// Retries (plain and monotone): a failed first attempt, then `write_json` in every later one.
#[test]
fn later_attempts_never_get_write_json() {
    for monotone in [false, true] {
        for constrained in [false, true] {
            let attempt = read_input()
                + &read_settings()
                + &edit("\"autosaveSeconds\": 30", "\"autosaveSeconds\": 10")
                + &read_settings()
                + &finish()
                + &write_json_at(SETTINGS)
                + &write_json_at("./config/settings.json")
                + &read_settings()
                + &finish();
            let script = attempt.repeat(3);
            let r = run_with(Harness::desk_suite(TASK), &script, |o| {
                o.constrained = constrained;
                o.levers.monotone_attempts = monotone;
                o.limits.attempts = 3;
            });
            let what = format!("monotone {monotone}, constrained {constrained}");
            assert!(!r.out.passed(), "{what}");
            assert!(
                support::attempts_finished(&r.events).len() >= 2,
                "{what}: {:?}",
                support::attempts_finished(&r.events)
            );
            assert_never_reformatted(&r, &what);
        }
    }
}

/// Every lever on (with and without `edit_file`), `change-list` and `review-edits` among them,
/// sampled draws and three attempts, constrained or not.
#[test]
fn every_lever_on_never_offers_or_runs_write_json() {
    for levers in [all_on_with_edit_file(), support::ALL_ON_BUT_NOTES] {
        assert!(levers.change_list && levers.review_edits && levers.write_json);
        for constrained in [false, true] {
            for samples in [1, 3] {
                let attempt = read_input()
                    + &read_settings()
                    + &write_json_at(SETTINGS)
                    + &edit("\"autosaveSeconds\": 30", "\"autosaveSeconds\": 10")
                    + &write_json_at(SETTINGS)
                    + &write_json_at("config//settings.json")
                    + &read_settings()
                    + &finish()
                    + &write_json_at(SETTINGS)
                    + &finish();
                let script = attempt.repeat(3);
                let r = run_with(Harness::desk_suite(TASK), &script, |o| {
                    o.levers = levers;
                    o.constrained = constrained;
                    o.samples = samples;
                    o.limits.attempts = 3;
                });
                let what = format!(
                    "line_edits {}, constrained {constrained}, samples {samples}",
                    levers.line_edits
                );
                assert!(r.step_requests() > 3, "{what}: the run made steps");
                assert_never_reformatted(&r, &what);
            }
        }
    }
}

/// A mission cannot name its editable file, its deliverable or the checked path with an odd
/// spelling: the contract refuses it at load (one file, one name), so `same_path` is never the
/// only thing between an odd spelling and a missed "in place".
#[test]
fn odd_spellings_in_the_mission_are_refused_at_load() {
    let spellings = [
        "./config/settings.json",
        "config//settings.json",
        "config/./settings.json",
    ];
    for odd in spellings {
        for field in ["editable", "required_artifact", "check"] {
            let dir = tempfile::tempdir().unwrap();
            let mdir = dir.path().join("mission");
            support::copy_dir(&missions_dir().join("../suites/desk").join(TASK), &mdir);
            let file = mdir.join("mission.json");
            let mut m: Value =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            match field {
                "editable" => m["editable"] = json!([odd]),
                "required_artifact" => m["required_artifact"] = json!(odd),
                _ => support::check_mut(&mut m, "valid-json")["path"] = json!(odd),
            }
            std::fs::write(&file, m.to_string()).unwrap();
            match Mission::load(&file) {
                Err(_) => {}
                // Loaded: the run must still not offer write_json.
                Ok(_) => {
                    let h = Harness::load(dir, file);
                    let script = read_settings() + &write_json_at(SETTINGS) + &write_json_at(odd);
                    let r = run_with(h, &script, |o| o.constrained = true);
                    assert_never_reformatted(&r, &format!("{field} = {odd}"));
                    assert_eq!(r.on_disk(), fixture_text(), "{field} = {odd}");
                }
            }
        }
    }
}

/// The file in layouts `write_json` would not keep, found so at the start: BOM, CRLF, no final
/// newline, two final newlines, trailing spaces, tabs, four spaces, an escaped slash, a
/// `\u` escape of a plain letter, `1.0e1`, a duplicate key, an empty object spelled over two
/// lines. None is offered `write_json`.
#[test]
fn files_in_other_layouts_are_never_offered_write_json() {
    type Change = fn(&str) -> String;
    let layouts: Vec<(&str, Change)> = vec![
        ("bom", |t| format!("\u{feff}{}", pretty(t))),
        ("crlf", |t| pretty(t).replace('\n', "\r\n")),
        ("no final newline", |t| pretty(t).trim_end().to_string()),
        ("two final newlines", |t| pretty(t) + "\n"),
        ("trailing space", |t| pretty(t).replacen(",\n", ", \n", 1)),
        ("tabs", |t| pretty(t).replace("  ", "\t")),
        ("four spaces", |t| pretty(t).replace("  ", "    ")),
        ("escaped slash", |t| {
            pretty(t).replace("https://", "https:\\/\\/")
        }),
        ("unicode escape", |t| {
            pretty(t).replace("Fieldnotes", "Fi\\u0065ldnotes")
        }),
        ("number spelling", |t| {
            pretty(t).replace("\"autosaveSeconds\": 30", "\"autosaveSeconds\": 3e1")
        }),
        ("duplicate key", |t| {
            pretty(t).replacen(
                "\"theme\": \"light\",",
                "\"theme\": \"light\",\n  \"theme\": \"light\",",
                1,
            )
        }),
        ("space before colon", |t| pretty(t).replace("\": ", "\" : ")),
        ("empty object over lines", |t| {
            pretty(t).replacen("  \"sync\": {", "  \"x\": {\n  },\n  \"sync\": {", 1)
        }),
    ];
    for (name, change) in layouts {
        let file_now = change(&fixture_text());
        assert!(!json_layout_kept(file_now.as_bytes()), "{name}");
        let h = Harness::desk_suite_with(TASK, |dir| {
            std::fs::write(dir.join(SETTINGS), &file_now).unwrap();
        });
        let script = read_settings() + &write_json_at(SETTINGS) + &finish();
        let r = run_with(h, &script, |o| o.constrained = true);
        assert!(r.offering().is_empty(), "{name}: {:?}", r.offering());
        assert!(
            r.steps("write_json").iter().all(|(o, _)| o != "executed"),
            "{name}"
        );
        assert_eq!(r.on_disk(), file_now, "{name}");
    }
}

/// A large file (about 6 MB) in another layout: not offered. The same file in `write_json`'s
/// layout: offered (it would be kept).
#[test]
fn a_large_file_is_measured_whole() {
    let mut doc = serde_json::from_str::<Value>(&fixture_text()).unwrap();
    let big: Vec<Value> = (0..400_000).map(|i| json!(format!("l{i:06}"))).collect();
    doc["languages"] = Value::Array(big);
    let canonical = serialise_json(&doc).unwrap();
    assert!(canonical.len() > 5_000_000);
    // One inline list deep in the file: only the last bytes differ from the canonical layout.
    let mut inline = canonical.clone();
    let at = inline.rfind("\n  }\n}\n").unwrap();
    inline.replace_range(at.., "\n  }\n}\n".replace("\n  }", " }").as_str());
    assert!(json_layout_kept(canonical.as_bytes()));
    assert!(!json_layout_kept(inline.as_bytes()));
    for (text, offered) in [(inline, false), (canonical, true)] {
        let h = Harness::desk_suite_with(TASK, |dir| {
            std::fs::write(dir.join(SETTINGS), &text).unwrap();
        });
        let r = run_with(h, &line("list_dir", json!({"path": "config"})), |o| {
            o.constrained = true
        });
        assert_eq!(!r.offering().is_empty(), offered, "offered {offered}");
    }
}

// ---------------------------------------------------------------------------------------------
// Claim 2: the decision is the file's as the run found it.

/// The file in another layout; the first write makes it exactly `write_json`'s layout. Still
/// not offered, and a later `write_json` is refused (in this attempt and the next).
#[test]
fn an_edit_that_makes_the_file_pretty_does_not_open_write_json() {
    for constrained in [false, true] {
        for monotone in [false, true] {
            let first = read_input() + &read_settings() + &edit(INLINE_LANGS, PRETTY_LANGS);
            let rest = read_settings()
                + &write_json_at(SETTINGS)
                + &finish()
                + &read_input()
                + &read_settings()
                + &write_json_at(SETTINGS)
                + &finish();
            let r = run_with(Harness::desk_suite(TASK), &(first + &rest), |o| {
                o.constrained = constrained;
                o.levers.monotone_attempts = monotone;
                o.limits.attempts = 2;
            });
            let what = format!("constrained {constrained}, monotone {monotone}");
            assert_eq!(r.steps("edit_file")[0].0, "executed", "{what}");
            assert!(r.offering().is_empty(), "{what}: {:?}", r.offering());
            for (outcome, summary) in r.steps("write_json") {
                assert_ne!(outcome, "executed", "{what}: {summary}");
            }
            assert_ne!(r.on_disk(), reformatted_gold(), "{what}");
        }
    }
}

/// The other way: the file in `write_json`'s layout at the start, the first write puts its list
/// inline. `write_json` stays offered at every step (and writes the start's layout back).
#[test]
fn an_edit_that_breaks_the_layout_does_not_close_write_json() {
    for constrained in [false, true] {
        let h = settings_task(pretty);
        let script = read_input()
            + &read_settings()
            + &edit(PRETTY_LANGS, INLINE_LANGS)
            + &read_settings()
            + &write_json_at(SETTINGS)
            + &read_settings()
            + &finish();
        let r = run_with(h, &script, |o| o.constrained = constrained);
        let what = format!("constrained {constrained}");
        assert_eq!(
            r.offering().len(),
            r.step_requests(),
            "{what}: {:?}",
            r.offering()
        );
        assert_eq!(r.steps("write_json")[0].0, "executed", "{what}");
        assert_eq!(r.on_disk(), reformatted_gold(), "{what}");
        assert!(r.out.passed(), "{what}: {}", r.out.reason());
    }
}

// ---------------------------------------------------------------------------------------------
// A mission that lists `write_json` among its own tools.

fn listing_write_json(m: &mut Value) {
    m["tools"].as_array_mut().unwrap().push(json!("write_json"));
}

/// The lever's gate only governs the `write_json` it adds: a mission that lists the tool itself
/// gets it for a file in another layout, and its write reformats the file.
#[test]
// Was a hole, mended: `write_json` is taken out of the tools wherever the layout is lost.
fn a_mission_listing_write_json_does_not_reformat_a_file_in_another_layout() {
    for constrained in [false, true] {
        let h = Harness::desk_suite_mission(TASK, listing_write_json);
        let script = read_input() + &read_settings() + &write_json_at(SETTINGS) + &finish();
        let r = run_with(h, &script, |o| o.constrained = constrained);
        let what = format!("constrained {constrained}");
        for (outcome, summary) in r.steps("write_json") {
            assert_ne!(outcome, "executed", "{what}: {summary}");
        }
        assert_eq!(r.on_disk(), fixture_text(), "{what}");
    }
}

/// Worse, and new with the change: `write_json`'s own holds (only the deliverable's path, only
/// a document that follows the deliverable's schema) hang on `typed_json`, so with the layout
/// not kept a listed `write_json` writes any file with any document.
#[test]
// Was a hole, mended: the tool is not offered, so neither call runs.
fn a_mission_listing_write_json_keeps_its_path_and_schema_holds() {
    let h = Harness::desk_suite_mission(TASK, listing_write_json);
    let script = read_input()
        + &read_settings()
        + &write_json_at("config/other.json")
        + &line(
            "write_json",
            json!({"path": SETTINGS, "document": {"appName": 1}}),
        )
        + &finish();
    let r = run_with(h, &script, |_| {});
    for (outcome, summary) in r.steps("write_json") {
        assert_ne!(outcome, "executed", "{summary}");
    }
    assert!(!r.h.workspace.join("config/other.json").exists());
    assert_eq!(r.on_disk(), fixture_text());
}

/// The contrast that makes the one above a regression: the same mission with the file in
/// `write_json`'s layout (kept, so `typed_json` holds) refuses both calls before the gate, as
/// every run did before the change.
#[test]
fn a_mission_listing_write_json_is_held_when_the_layout_is_kept() {
    let h = Harness::desk_suite_edited(
        TASK,
        |dir| {
            let file = dir.join(SETTINGS);
            let text = std::fs::read_to_string(&file).unwrap();
            std::fs::write(&file, pretty(&text)).unwrap();
        },
        listing_write_json,
    );
    let script = read_input()
        + &read_settings()
        + &write_json_at("config/other.json")
        + &line(
            "write_json",
            json!({"path": SETTINGS, "document": {"appName": 1}}),
        )
        + &finish();
    let r = run_with(h, &script, |_| {});
    let steps = r.steps("write_json");
    assert_eq!(steps.len(), 2);
    for (outcome, summary) in steps {
        assert_eq!(outcome, "invalid", "{summary}");
    }
    assert!(!r.h.workspace.join("config/other.json").exists());
    assert_eq!(r.on_disk(), pretty(&fixture_text()));
}

// ---------------------------------------------------------------------------------------------
// Claim 4: deliverables the run creates keep write_json as before.

#[test]
fn a_created_deliverable_keeps_write_json() {
    for levers in [write_json_only(), all_on_with_edit_file()] {
        let h = Harness::new("doc_extract");
        let r = run_with(h, &line("list_dir", json!({"path": "."})), |o| {
            o.levers = levers;
            o.constrained = true;
        });
        assert!(!r.offering().is_empty());
        assert!(r.offering().contains(&0), "{:?}", r.offering());
        assert!(r.journaled_tools().iter().any(|t| t == "write_json"));
        let doc = support::write_json_document(&r.requests, 0);
        assert_eq!(
            doc["type"], "object",
            "typed by the contract's schema: {doc}"
        );
    }
    // A stale deliverable in another layout already in the workspace (not editable): the run
    // writes it whole, as before the change.
    let h = Harness::new("doc_extract");
    std::fs::create_dir_all(h.workspace.join("out")).unwrap();
    std::fs::write(h.workspace.join("out/fields.json"), "{\"invoices\": []}").unwrap();
    let r = run_with(h, &line("list_dir", json!({"path": "."})), |o| {
        o.constrained = true
    });
    assert!(r.offering().contains(&0));
}

// ---------------------------------------------------------------------------------------------
// Claim 3: `json_layout_kept` is exact.

/// Whether `bytes` would be written back unchanged by `write_json` of their own document.
fn round_trips(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|d| serialise_json(&d).ok())
        .is_some_and(|t| t.as_bytes() == bytes)
}

/// Probes with the answer a careful reader expects: `Some(kept)`, or `None` where only the
/// safety property is asserted (kept implies an exact round trip).
fn probes() -> Vec<(String, Option<bool>)> {
    let obj = |v: &str| format!("{{\n  \"a\": {v}\n}}\n");
    let mut p: Vec<(String, Option<bool>)> = vec![
        // Empty containers.
        ("{}\n".into(), Some(true)),
        ("{\n}\n".into(), Some(false)),
        ("{ }\n".into(), Some(false)),
        ("[]\n".into(), Some(true)),
        ("[\n]\n".into(), Some(false)),
        (obj("{}"), Some(true)),
        (obj("[]"), Some(true)),
        (obj("{\n  }"), Some(false)),
        (obj("[\n  ]"), Some(false)),
        ("[\n  [],\n  [\n    []\n  ],\n  {}\n]\n".into(), Some(true)),
        ("[\n  [],\n  [[]],\n  {}\n]\n".into(), Some(false)),
        // Numbers.
        (obj("1.0"), Some(true)),
        (obj("1"), Some(true)),
        (obj("1.00"), Some(false)),
        (obj("1e3"), Some(false)),
        (obj("1E3"), Some(false)),
        (obj("1000.0"), Some(true)),
        (obj("-0"), Some(false)),
        (obj("-0.0"), Some(true)),
        (obj("0"), Some(true)),
        (obj("01"), Some(false)),
        (obj("18446744073709551615"), Some(true)),
        (obj("18446744073709551616"), Some(false)),
        (obj("-9223372036854775808"), Some(true)),
        (obj("-9223372036854775809"), Some(false)),
        (obj("0.1"), Some(true)),
        (obj("0.10"), Some(false)),
        (obj("0.30000000000000004"), Some(true)),
        (obj("0.3000000000000000444"), Some(false)),
        (obj("1e400"), Some(false)),
        (obj("1e20"), None),
        (obj("1e+20"), None),
        (obj("100000000000000000000.0"), None),
        (obj("1.5e-7"), None),
        (obj("0.00000015"), None),
        (obj("5e-324"), None),
        (obj("1.7976931348623157e308"), None),
        (obj("123456789012345678901234567890"), Some(false)),
        // Strings and escapes.
        (obj("\"é\""), Some(true)),
        (obj("\"\\u00e9\""), Some(false)),
        (obj("\"\\u00E9\""), Some(false)),
        (obj("\"a/b\""), Some(true)),
        (obj("\"a\\/b\""), Some(false)),
        (obj("\"\\n\\t\\\"\\\\\""), Some(true)),
        (obj("\"\\u000a\""), Some(false)),
        (obj("\"\\b\\f\\r\""), Some(true)),
        (obj("\"\\u0008\""), Some(false)),
        (obj("\"\\u001f\""), Some(true)),
        (obj("\"\\u001F\""), Some(false)),
        (obj("\"\u{7f}\""), Some(true)),
        (obj("\"\\u007f\""), Some(false)),
        (obj("\"\u{2028}\""), Some(true)),
        (obj("\"\\u2028\""), Some(false)),
        (obj("\"\\ud83d\\ude00\""), Some(false)),
        (obj("\"\u{1f600}\""), Some(true)),
        (obj("\"\\ud800\""), Some(false)),
        (obj("\"\u{1f}\""), Some(false)),
        // Keys.
        ("{\n  \"z\": 1,\n  \"a\": 2\n}\n".into(), Some(true)),
        ("{\n  \"a\": 1,\n  \"a\": 1\n}\n".into(), Some(false)),
        ("{\n  \"a\": 1,\n  \"a\": 2\n}\n".into(), Some(false)),
        (
            "{\n  \"a\": 1,\n  \"b\": 2,\n  \"a\": 3\n}\n".into(),
            Some(false),
        ),
        ("{\n  \"\\u0061\": 1\n}\n".into(), Some(false)),
        // Whitespace, line ends, BOM.
        ("\u{feff}{}\n".into(), Some(false)),
        ("{}".into(), Some(false)),
        ("{}\n\n".into(), Some(false)),
        ("{}\r\n".into(), Some(false)),
        ("{} \n".into(), Some(false)),
        (" {}\n".into(), Some(false)),
        ("\n{}\n".into(), Some(false)),
        ("{}\n ".into(), Some(false)),
        ("{\n  \"a\": 1 \n}\n".into(), Some(false)),
        ("{\r\n  \"a\": 1\r\n}\r\n".into(), Some(false)),
        ("{\n  \"a\": 1\r\n}\n".into(), Some(false)),
        ("{\n\t\"a\": 1\n}\n".into(), Some(false)),
        ("{\n  \"a\":1\n}\n".into(), Some(false)),
        ("{\n  \"a\" : 1\n}\n".into(), Some(false)),
        ("{\n  \"a\": [1, 2]\n}\n".into(), Some(false)),
        ("{\n  \"a\": [\n    1,\n    2\n  ]\n}\n".into(), Some(true)),
        (
            "{\n  \"a\": [\n    1,\n    2,\n  ]\n}\n".into(),
            Some(false),
        ),
        // Not JSON, or more than one document.
        ("".into(), Some(false)),
        ("\n".into(), Some(false)),
        ("{}\n{}\n".into(), Some(false)),
        ("// c\n{}\n".into(), Some(false)),
        ("null\n".into(), Some(true)),
        ("\"x\"\n".into(), Some(true)),
    ];
    // Nesting: shallow enough to parse, and past serde_json's recursion limit.
    for depth in [1usize, 50, 126, 127, 128, 129, 200, 1000] {
        let mut v = json!([]);
        for _ in 0..depth {
            v = json!([v]);
        }
        // serde_json's serialiser has no depth limit.
        let text = serialise_json(&v).unwrap();
        p.push((text, None));
    }
    p
}

#[test]
fn json_layout_kept_is_exactly_the_round_trip() {
    let mut surprises = Vec::new();
    for (text, expected) in probes() {
        let kept = json_layout_kept(text.as_bytes());
        // The safety property: "kept" only where write_json of the file's document writes the
        // very same bytes.
        assert!(
            !kept || round_trips(text.as_bytes()),
            "false kept: {text:?}"
        );
        assert_eq!(kept, round_trips(text.as_bytes()), "{text:?}");
        if let Some(e) = expected {
            if e != kept {
                surprises.push((text.clone(), e, kept));
            }
        }
    }
    // A probe expected not kept but kept would be a hole; the other way is a lesser issue.
    assert!(
        !surprises.iter().any(|(_, e, k)| !e && *k),
        "false kept: {surprises:?}"
    );
    assert!(surprises.is_empty(), "expectations off: {surprises:?}");
}

/// Deep nesting: a canonical file past serde_json's recursion limit (128) cannot be parsed, so
/// it is "not kept" (a false "not kept": the lesser issue, safe).
#[test]
fn deep_nesting_is_not_kept_past_the_parser_limit() {
    let nest = |depth: usize| {
        let mut v = json!([]);
        for _ in 0..depth {
            v = json!([v]);
        }
        serialise_json(&v).unwrap()
    };
    assert!(json_layout_kept(nest(100).as_bytes()));
    let deep = nest(200);
    assert!(!json_layout_kept(deep.as_bytes()));
    assert!(!json_layout_kept(nest(10_000).as_bytes()));
}

/// Bytes that are not UTF-8, in and out of strings.
#[test]
fn bytes_that_are_not_utf8_are_not_kept() {
    for bytes in [
        b"{\n  \"a\": \"\xff\"\n}\n".to_vec(),
        b"\xef\xbb\xbf{}\n".to_vec(),
        b"{}\n\xff".to_vec(),
        b"{}\n\x00".to_vec(),
    ] {
        assert!(!json_layout_kept(&bytes), "{bytes:?}");
    }
}

/// A kept file stays kept through a `write_json` of its document with one value changed: only
/// that value's line differs, so the rest of the file keeps its bytes.
#[test]
fn a_kept_file_changes_only_where_its_document_changes() {
    for (text, _) in probes() {
        if !json_layout_kept(text.as_bytes()) {
            continue;
        }
        let doc: Value = serde_json::from_str(&text).unwrap();
        let Value::Object(map) = &doc else { continue };
        for key in map.keys() {
            let mut changed = doc.clone();
            changed[key] = json!(12345);
            let after = serialise_json(&changed).unwrap();
            let before_lines: Vec<&str> = text.lines().collect();
            let after_lines: Vec<&str> = after.lines().collect();
            let key_line = format!("  {}: ", serde_json::to_string(key).unwrap());
            let at = before_lines
                .iter()
                .position(|l| l.starts_with(&key_line))
                .unwrap();
            // The old value's lines, as the serialiser wrote them one level in.
            let old_lines = serde_json::to_string_pretty(&map[key])
                .unwrap()
                .lines()
                .count();
            // Lines before the changed key, and after its old value, are the same bytes.
            assert_eq!(before_lines[..at], after_lines[..at], "{text:?}");
            assert_eq!(
                before_lines[at + old_lines..],
                after_lines[at + 1..],
                "{text:?}"
            );
            assert_eq!(
                after_lines[at].trim_end_matches(','),
                format!("{key_line}12345"),
                "{text:?}"
            );
            assert!(after.ends_with("}\n"));
        }
    }
}

/// A large kept file and the same file with one byte changed in its middle.
#[test]
fn a_large_file_is_compared_whole() {
    let list: Vec<Value> = (0..200_000)
        .map(|i| json!({"k": i, "v": format!("x{i}")}))
        .collect();
    let text = serialise_json(&json!({ "items": list })).unwrap();
    assert!(text.len() > 8_000_000);
    let started = std::time::Instant::now();
    assert!(json_layout_kept(text.as_bytes()));
    let mid = text.len() / 2;
    let at = text[mid..].find("\"v\": \"").unwrap() + mid;
    let mut bytes = text.clone().into_bytes();
    // "v": "x..." -> "v":  "x..." (one more space): same document, other layout.
    bytes.insert(at + 4, b' ');
    assert!(!json_layout_kept(&bytes));
    let mut escaped = text.clone();
    escaped.replace_range(at + 6..at + 7, "\\u0078");
    assert!(!json_layout_kept(escaped.as_bytes()));
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}
