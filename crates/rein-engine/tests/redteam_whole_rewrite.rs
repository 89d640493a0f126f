#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red-team probes of the `whole-rewrite` lever (a small file edited in place is written whole
//! with `replace_file`, `edit_file` not offered) and of `folder-stats`' withholding, now in
//! `prepare_read_result`. A test marked "Red-team defect, mended" failed on the code the red team
//! attacked and asserts the behaviour since mended; every other test is a probe that held.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentOptions, Levers, RunEnd};
use rein_engine::gate::AllowAll;
use rein_engine::mission::Mission;
use rein_engine::policy::Policy;
use rein_protocol::FinishReason;
use serde_json::{json, Value};
use support::{
    allowed_tools, drop_tools, finish_line, journal_events, line, Harness, PromptRecorder, Ran,
};

const FILE: &str = "data/members.csv";
const TASK: &str = "edit-csv-emails";

const EDIT_TASKS: [(&str, &str); 8] = [
    ("edit-config-values", "config/app.toml"),
    ("edit-crontab", "config/crontab.txt"),
    ("edit-csv-emails", "data/members.csv"),
    ("edit-env-rotate", "config/staging.env"),
    ("edit-gitignore", "project/gitignore.txt"),
    ("edit-json-settings", "config/settings.json"),
    ("edit-rust-function", "src/discount.rs"),
    ("edit-shell-script", "scripts/backup.sh"),
];

fn desk(task: &str) -> std::path::PathBuf {
    support::missions_dir().join("../suites/desk").join(task)
}

fn gold() -> String {
    std::fs::read_to_string(desk(TASK).join("judge/gold/files").join(FILE)).unwrap()
}

fn fixture_text() -> String {
    std::fs::read_to_string(desk(TASK).join("fixtures").join(FILE)).unwrap()
}

fn read_file() -> String {
    line("read_file", json!({ "path": FILE }))
}

fn reads() -> String {
    line("read_file", json!({"path": "data/README.txt"})) + &read_file()
}

fn replace(content: &str) -> String {
    line("replace_file", json!({"path": FILE, "content": content}))
}

fn rewrite(content: &str) -> String {
    reads() + &replace(content) + &read_file() + &finish_line()
}

fn whole(on: bool) -> Levers {
    Levers {
        whole_rewrite: on,
        monotone_attempts: true,
        ..Levers::DEFAULT
    }
}

/// `h`'s mission, constrained, on `script` with `levers`, one attempt, options then `tweak`ed.
fn run_with(
    h: Harness,
    script: &str,
    levers: Levers,
    tweak: impl FnOnce(&mut AgentOptions),
) -> Ran {
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = 1;
        tweak(o);
    })
}

fn run(h: Harness, script: &str, on: bool) -> Ran {
    run_with(h, script, whole(on), |_| {})
}

fn offers(r: &Ran, request: usize, tool: &str) -> bool {
    allowed_tools(&r.model.requests[request])
        .iter()
        .any(|t| t == tool)
}

fn no_request_offers_edit_file(r: &Ran) {
    assert!(!r.model.requests.is_empty());
    for (i, req) in r.model.requests.iter().enumerate() {
        let tools = allowed_tools(req);
        assert!(!tools.is_empty(), "request {i} is constrained");
        assert!(!tools.contains(&"edit_file".to_string()), "{i}: {tools:?}");
    }
}

fn every_request_offers_edit_file(r: &Ran) {
    assert!(!r.model.requests.is_empty());
    for (i, req) in r.model.requests.iter().enumerate() {
        let tools = allowed_tools(req);
        assert!(tools.contains(&"edit_file".to_string()), "{i}: {tools:?}");
    }
}

/// The prompts that name `edit_file` anywhere (the system prompt, results, notes, feedback).
fn prompts_naming_edit_file(r: &Ran) -> Vec<(usize, String)> {
    r.model
        .prompts()
        .into_iter()
        .enumerate()
        .filter(|(_, p)| p.contains("edit_file"))
        .collect()
}

/// The text around the first `edit_file` in a prompt, for a readable failure.
fn around_edit_file(p: &str) -> String {
    let at = p.find("edit_file").unwrap_or(0);
    let from = p[..at].char_indices().rev().nth(200).map_or(0, |(i, _)| i);
    let to = p[at..]
        .char_indices()
        .nth(120)
        .map_or(p.len(), |(i, _)| at + i);
    p[from..to].to_string()
}

fn assert_never_told_edit_file(r: &Ran) {
    let named = prompts_naming_edit_file(r);
    assert!(
        named.is_empty(),
        "the model is told of edit_file, which the run does not offer: request {} ... {} ...",
        named[0].0,
        around_edit_file(&named[0].1)
    );
}

fn on_disk(r: &Ran, path: &str) -> Vec<u8> {
    std::fs::read(r.h.workspace.join(path)).unwrap()
}

// ---------------------------------------------------------------------------------------------
// When the lever applies: the deliverable, its size and encoding, the mission's tools.
// ---------------------------------------------------------------------------------------------

/// Paths are compared as strings; a `./` spelling of the deliverable or of an editable file
/// could make the lever miss a file it should write whole. The contract refuses such spellings
/// at load, so the strings always agree.
#[test]
fn a_dot_slash_spelling_of_the_deliverable_or_an_editable_file_is_refused_at_load() {
    for (field, value) in [
        ("required_artifact", json!("./data/members.csv")),
        ("editable", json!(["./data/members.csv"])),
        ("required_artifact", json!("data//members.csv")),
        ("editable", json!(["data/./members.csv"])),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mdir = dir.path().join("mission");
        support::copy_dir(&desk(TASK), &mdir);
        let file = mdir.join("mission.json");
        let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        m[field] = value.clone();
        std::fs::write(&file, m.to_string()).unwrap();
        let loaded = Mission::load(&file);
        assert!(loaded.is_err(), "{field} = {value} was accepted");
    }
}

/// Every one of the desk suite's eight edit tasks (86 to 397 bytes) is written whole, the
/// `.env` one included (a file a workspace might keep from a read).
#[test]
fn every_desk_edit_task_is_written_whole_under_the_lever() {
    for (task, file) in EDIT_TASKS {
        let r = run(
            Harness::desk_suite(task),
            &line("read_file", json!({ "path": file })),
            true,
        );
        assert!(!offers(&r, 0, "edit_file"), "{task}");
        assert!(offers(&r, 0, "replace_file"), "{task}");
        let levers = journal_events(&r.h.journal, r.out.run, "levers");
        let tools = levers[0]["tools"].as_array().unwrap();
        assert!(!tools.contains(&json!("edit_file")), "{task}: {tools:?}");
        // The same task without the lever keeps edit_file.
        let r = run(Harness::desk_suite(task), &finish_line(), false);
        assert!(offers(&r, 0, "edit_file"), "{task}");
    }
}

/// The size is decided when the run begins: a whole rewrite that grows the file past 600 bytes
/// does not bring edit_file back, in this attempt or the next.
#[test]
fn a_deliverable_grown_past_the_size_mid_run_stays_written_whole() {
    let mut big = gold();
    for i in 8..30 {
        big.push_str(&format!(
            "M-{i:03},Member {i},member{i}@example.org,2024-02-01\n"
        ));
    }
    assert!(big.len() > 600);
    let script = reads() + &replace(&big) + &read_file() + &finish_line() + &read_file();
    let r = run_with(Harness::desk_suite(TASK), &script, whole(true), |o| {
        o.limits.attempts = 2;
    });
    assert!(r.model.requests.len() >= 5, "{}", r.model.requests.len());
    no_request_offers_edit_file(&r);
    assert!(!r.out.passed());
}

/// And the other way: a file over the size at the start keeps edit_file all run, even once
/// a whole rewrite made it small.
#[test]
fn a_deliverable_shrunk_below_the_size_mid_run_keeps_edit_file() {
    let h = Harness::desk_suite_with(TASK, |dir| {
        let p = dir.join(FILE);
        let mut text = std::fs::read_to_string(&p).unwrap();
        for i in 8..30 {
            text.push_str(&format!(
                "M-{i:03},Member {i},member{i}@example.org,2024-02-01\n"
            ));
        }
        std::fs::write(p, text).unwrap();
    });
    let script = reads() + &replace(&gold()) + &read_file() + &read_file();
    let r = run(h, &script, true);
    every_request_offers_edit_file(&r);
}

/// The boundary: exactly 600 bytes of text is written whole, 601 is not. Multi-byte text is
/// counted in bytes, not characters.
#[test]
fn six_hundred_bytes_is_written_whole_and_six_hundred_and_one_is_not() {
    for (len, whole_expected) in [(600usize, true), (601, false)] {
        let h = Harness::desk_suite_with(TASK, |dir| {
            let p = dir.join(FILE);
            let mut text = std::fs::read_to_string(&p).unwrap();
            // 'é' is two bytes: pad with it, then one ASCII byte if odd.
            while text.len() + 2 <= len {
                text.push('é');
            }
            while text.len() < len {
                text.push('x');
            }
            assert_eq!(text.len(), len);
            std::fs::write(p, text).unwrap();
        });
        let r = run(h, &finish_line(), true);
        assert_eq!(!offers(&r, 0, "edit_file"), whole_expected, "{len} bytes");
    }
}

/// A deliverable that is not UTF-8 keeps edit_file (replace_file's content is a string: a
/// model could not keep its bytes).
#[test]
fn a_non_utf8_deliverable_keeps_edit_file() {
    let h = Harness::desk_suite_with(TASK, |dir| {
        let p = dir.join(FILE);
        let mut bytes = std::fs::read(&p).unwrap();
        bytes.extend_from_slice(&[0xff, 0xfe, b'\n']);
        std::fs::write(p, bytes).unwrap();
    });
    let r = run(h, &finish_line(), true);
    assert!(offers(&r, 0, "edit_file"));
}

/// An empty deliverable has nothing to keep: edit_file stays (it cannot edit an empty file
/// either, but the lever claims nothing for it).
#[test]
fn an_empty_deliverable_keeps_edit_file() {
    let h = Harness::desk_suite_with(TASK, |dir| {
        std::fs::write(dir.join(FILE), b"").unwrap();
    });
    let r = run(h, &finish_line(), true);
    assert!(offers(&r, 0, "edit_file"));
}

/// Without replace_file nothing changes (the model must keep a way to write); without edit_file
/// there is nothing to take away.
#[test]
fn without_replace_file_or_edit_file_the_lever_changes_nothing() {
    let h = Harness::desk_suite_mission(TASK, |m| drop_tools(m, &["replace_file"]));
    let r = run(h, &finish_line(), true);
    every_request_offers_edit_file(&r);
    assert!(!offers(&r, 0, "replace_file"));
    let h = Harness::desk_suite_mission(TASK, |m| drop_tools(m, &["edit_file"]));
    let r = run(h, &finish_line(), true);
    assert!(offers(&r, 0, "replace_file"));
    assert!(!offers(&r, 0, "edit_file"));
}

/// A mission with a second editable file, far over the size: `edit_file` goes for every file,
/// so the lever does not apply (the red team's risk, mended: the large file keeps its small
/// edits). The journal's `levers` event agrees with what is offered.
#[test]
fn a_second_large_editable_file_keeps_edit_file() {
    let h = Harness::desk_suite_edited(
        TASK,
        |dir| std::fs::write(dir.join("data/big.csv"), "a,b\n".repeat(1000)).unwrap(),
        |m| m["editable"] = json!([FILE, "data/big.csv"]),
    );
    let r = run(h, &finish_line(), true);
    assert!(offers(&r, 0, "edit_file"));
    let levers = journal_events(&r.h.journal, r.out.run, "levers");
    let journal_tools = levers[0]["tools"].as_array().unwrap().clone();
    assert!(journal_tools.contains(&json!("edit_file")));
}

/// A memory-sandbox run is never changed by the lever.
#[test]
fn in_a_memory_run_the_lever_changes_nothing() {
    let r = run_with(
        Harness::desk_suite(TASK),
        &finish_line(),
        whole(true),
        |o| {
            o.memory = true;
        },
    );
    let levers = journal_events(&r.h.journal, r.out.run, "levers");
    let tools = levers[0]["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("edit_file")), "{tools:?}");
    assert!(offers(&r, 0, "edit_file"));
}

// ---------------------------------------------------------------------------------------------
// edit_file stays out: unconstrained, sampled, escaped, every lever on.
// ---------------------------------------------------------------------------------------------

/// Unconstrained, an edit_file call is refused as an unknown tool, changes nothing, and a
/// bench run stops at it.
#[test]
fn unconstrained_an_edit_file_call_is_refused_and_a_bench_run_stops() {
    let edit = line(
        "edit_file",
        json!({"path": FILE, "old_text": "Ada.Brandt@Example.org ", "new_text": "ada.brandt@example.org"}),
    );
    let script = reads() + &edit + &finish_line();
    let r = run_with(Harness::desk_suite(TASK), &script, whole(true), |o| {
        o.constrained = false;
    });
    assert_eq!(r.out.figures.unknown_tools, 1);
    assert_eq!(on_disk(&r, FILE), fixture_text().into_bytes());
    let r = run_with(Harness::desk_suite(TASK), &script, whole(true), |o| {
        o.constrained = false;
        o.bench = true;
    });
    assert!(
        matches!(r.out.end, RunEnd::UnknownTool { .. }),
        "{:?}",
        r.out.end
    );
    assert_eq!(on_disk(&r, FILE), fixture_text().into_bytes());
}

/// Verified sampling, constrained: the extra draws are held to replace_file alone.
#[test]
fn sampled_draws_are_held_to_replace_file() {
    let wrong = gold().replace("mia.sato@example.org", "MIA.SATO@example.org");
    let script = reads()
        + &replace(&wrong)
        + &replace(&wrong.replace("paul.martin", "Paul.martin"))
        + &replace(&gold())
        + &read_file()
        + &finish_line();
    let r = run_with(Harness::desk_suite(TASK), &script, whole(true), |o| {
        o.samples = 3;
    });
    no_request_offers_edit_file(&r);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert_eq!(on_disk(&r, FILE), gold().into_bytes());
}

/// Verified sampling, unconstrained: a draw that calls edit_file is never judged nor chosen,
/// and nothing it would write reaches the file.
#[test]
fn an_unconstrained_edit_file_draw_is_never_chosen() {
    let wrong = gold().replace("mia.sato@example.org", "MIA.SATO@example.org");
    let edit_to_gold = line(
        "edit_file",
        json!({"path": FILE, "old_text": "Paul Martin,paul.martin@Example.org", "new_text": "Paul Martin,paul.martin@example.org"}),
    );
    let script =
        reads() + &replace(&wrong) + &edit_to_gold + &edit_to_gold + &read_file() + &finish_line();
    let r = run_with(Harness::desk_suite(TASK), &script, whole(true), |o| {
        o.samples = 3;
        o.constrained = false;
    });
    let sampled = support::sampled(&r.events);
    assert_eq!(sampled.len(), 1, "{sampled:?}");
    let (candidates, chosen) = &sampled[0];
    assert_eq!(candidates[*chosen].tool.as_deref(), Some("replace_file"));
    for c in candidates
        .iter()
        .filter(|c| c.tool.as_deref() == Some("edit_file"))
    {
        assert!(c.skipped.is_some(), "{c:?}");
    }
    assert_eq!(on_disk(&r, FILE), wrong.into_bytes());
}

/// Every lever on (review-edits aside, see its own test): no request offers edit_file, in
/// either attempt, through repeat-escape, change-before-finish, finish-when-met, auto-finish
/// and the checklist.
#[test]
fn with_every_other_lever_on_no_request_offers_edit_file() {
    let levers = Levers {
        review_edits: false,
        // change-list's request is no action and takes a line of the script; its own sweep
        // is in redteam_change_list.rs.
        change_list: false,
        ..support::ALL_ON_BUT_NOTES
    };
    let wrong = gold().replace("mia.sato@example.org", "MIA.SATO@EXAMPLE.ORG");
    // A repeated read (repeat-escape draws again), a wrong rewrite, a finish, then a repeated
    // finish on the unchanged file (change-before-finish), then the right file.
    let script = reads()
        + &read_file()
        + &replace(&wrong)
        + &read_file()
        + &finish_line()
        + &finish_line()
        + &replace(&gold())
        + &read_file()
        + &finish_line()
        + &finish_line();
    let r = run_with(Harness::desk_suite(TASK), &script, levers, |o| {
        o.limits.attempts = 3;
    });
    no_request_offers_edit_file(&r);
}

/// Same sweep, unconstrained: the system prompt's tool list never names edit_file, nor does
/// any note (progress, retry, checklist) of a run with every lever on but review-edits.
#[test]
fn with_every_other_lever_on_no_prompt_names_edit_file() {
    let levers = Levers {
        review_edits: false,
        // change-list's request is no action and takes a line of the script; its own sweep
        // is in redteam_change_list.rs.
        change_list: false,
        ..support::ALL_ON_BUT_NOTES
    };
    let wrong = gold().replace("mia.sato@example.org", "MIA.SATO@EXAMPLE.ORG");
    let script = reads()
        + &replace(&wrong)
        + &read_file()
        + &finish_line()
        + &replace(&gold())
        + &read_file()
        + &finish_line();
    let r = run_with(Harness::desk_suite(TASK), &script, levers, |o| {
        o.limits.attempts = 2;
    });
    assert_never_told_edit_file(&r);
    // The plain retry (monotone off) too.
    let levers = Levers {
        review_edits: false,
        change_list: false,
        monotone_attempts: false,
        ..support::ALL_ON_BUT_NOTES
    };
    let r = run_with(Harness::desk_suite(TASK), &script, levers, |o| {
        o.limits.attempts = 2;
    });
    assert_never_told_edit_file(&r);
}

/// The journal's `levers` event lists exactly the tools the first request offers (facts tools
/// and folder_stats added, edit_file taken away).
#[test]
fn the_levers_event_lists_the_tools_truly_offered() {
    let levers = Levers {
        facts_tools: true,
        folder_stats: true,
        ..whole(true)
    };
    let r = run_with(Harness::desk_suite(TASK), &finish_line(), levers, |_| {});
    let ev = journal_events(&r.h.journal, r.out.run, "levers");
    let mut journalled: Vec<String> = ev[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    let mut offered = allowed_tools(&r.model.requests[0]);
    journalled.sort();
    offered.sort();
    assert_eq!(journalled, offered);
}

// ---------------------------------------------------------------------------------------------
// Messages that still send the model to edit_file.
// ---------------------------------------------------------------------------------------------

// Red-team defect, mended: lever `review-edits` holds the first finish with a review whose last sentence says
// "make that change with edit_file first" -- a tool the run does not offer under the lever
// (edit_review.rs:36, `review_reason` has no say in which writer the run offers; called from
// run.rs:536). The 1.5B copies the suggested tool into its next call, which is refused as
// unknown (and stops a bench run).
#[test]
fn a_held_finish_under_the_lever_does_not_send_the_model_to_edit_file() {
    let partial = fixture_text().replace("Ada.Brandt@Example.org ", "ada.brandt@example.org");
    let script = rewrite(&partial) + &finish_line();
    let levers = Levers {
        review_edits: true,
        ..whole(true)
    };
    let r = run_with(Harness::desk_suite(TASK), &script, levers, |_| {});
    let held = support::finish_refusals(&r.events);
    assert!(
        held.iter()
            .any(|h| h.contains("finish held once for a review")),
        "{held:?}"
    );
    no_request_offers_edit_file(&r);
    assert_never_told_edit_file(&r);
}

// Red-team defect, mended: `create_file` on the deliverable (a small model's usual first try at "writing the
// file") is refused by the tool with "use edit_file or replace_file to change a file"
// (rein-workspace/src/desk/propose.rs:83), and Rein passes that reason to the model unchanged
// under the lever, so the model is told to use the tool it is not offered.
#[test]
fn a_refused_create_file_under_the_lever_does_not_suggest_edit_file() {
    let script =
        reads() + &line("create_file", json!({"path": FILE, "content": gold()})) + &read_file();
    let r = run(Harness::desk_suite(TASK), &script, true);
    no_request_offers_edit_file(&r);
    assert_never_told_edit_file(&r);
}

// Red-team defect, mended: a whole rewrite cut off at the reply cap is answered with the generic advice "a long
// file written in parts (create it with its first part, then add the rest with edit_file)"
// (repair.rs:51-55, passed on by run/steps.rs:216-224, where only a typed writer gets its own
// advice via `cut_writer`). Under the lever edit_file is not offered and the file must be
// written whole in one call, so the advice is wrong twice; short-after-cut is off for the
// lever (run/tools.rs), so nothing else tells the model how to fit.
#[test]
fn a_cut_whole_rewrite_is_not_told_to_add_the_rest_with_edit_file() {
    let script = reads() + &replace(&gold()) + &replace(&gold()) + &read_file();
    let h = Harness::desk_suite(TASK);
    let mut model = PromptRecorder::tapped(
        &script,
        "cut.jsonl",
        Box::new(|call, request, c| {
            if call == 2 {
                let keep = c.text.chars().count() / 2;
                c.text = c.text.chars().take(keep).collect();
                c.finish = FinishReason::Length;
                c.completion_tokens = request.max_tokens;
            }
        }),
    );
    let (out, events) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = Levers {
            short_after_cut: true,
            ..whole(true)
        };
        o.constrained = true;
        o.limits.attempts = 1;
    });
    let r = Ran {
        out,
        events,
        model,
        h,
    };
    assert!(
        r.model.prompt(3).contains("cut off"),
        "{}",
        r.model.prompt(3)
    );
    no_request_offers_edit_file(&r);
    assert_never_told_edit_file(&r);
}

/// A Markdown report edited in place (desk report-timesheets with its report given as an
/// editable file of a few bytes): the deliverable is written whole.
fn in_place_report() -> Harness {
    Harness::desk_suite_edited(
        "report-timesheets",
        |dir| {
            std::fs::create_dir_all(dir.join("out")).unwrap();
            std::fs::write(
                dir.join("out/hours.md"),
                "# Hours\n\n## By person\n\n## By project\n\nTotal: 0 hours\n",
            )
            .unwrap();
        },
        |m| m["editable"] = json!(["out/hours.md"]),
    )
}

// Red-team defect, mended: with `write-sections`, the task message of a Markdown deliverable edited in place says
// "To fix the report later, use edit_file." (run.rs:650-656 picks `edit_file` as the fixer
// whenever rewrite-section is off, without asking whether the run offers it).
#[test]
fn write_sections_task_note_does_not_name_edit_file_under_the_lever() {
    let levers = Levers {
        write_sections: true,
        ..whole(true)
    };
    let r = run_with(
        in_place_report(),
        &line("read_file", json!({"path": "out/hours.md"})),
        levers,
        |_| {},
    );
    no_request_offers_edit_file(&r);
    assert_never_told_edit_file(&r);
}

// Red-team defect, mended: with `rewrite-section` and `monotone-attempts`, a retry on a Markdown deliverable
// edited in place says "rewrite_section ... or edit_file with old_text copied exactly from the
// text above" (run/attempts.rs:302-307: the rewrite_outline branch comes before the
// rewrites_whole one and names edit_file unconditionally).
#[test]
fn rewrite_section_retry_does_not_name_edit_file_under_the_lever() {
    let levers = Levers {
        rewrite_section: true,
        ..whole(true)
    };
    // Every line there, every figure wrong: the judge fails it.
    let report = "# Hours\n\n## By person\n\nInes: 1 hours\nMarek: 1 hours\nSofia: 1 hours\nTariq: 1 hours\n\n## By project\n\nharbor-app: 1 hours\nintranet: 1 hours\nsupport: 1 hours\n\nTotal: 1 hours\n";
    let script = ["2024-W10.csv", "2024-W11.csv", "2024-W12.csv", "README.md"]
        .iter()
        .map(|f| line("read_file", json!({ "path": format!("timesheets/{f}") })))
        .collect::<String>()
        + &line("read_file", json!({"path": "out/hours.md"}))
        + &line(
            "replace_file",
            json!({"path": "out/hours.md", "content": report}),
        )
        + &line("read_file", json!({"path": "out/hours.md"}))
        + &finish_line()
        + &line("read_file", json!({"path": "out/hours.md"}));
    let r = run_with(in_place_report(), &script, levers, |o| {
        o.limits.attempts = 2;
    });
    assert!(
        r.model
            .prompts()
            .iter()
            .any(|p| p.contains("now reads, as the JSON string of replace_file")),
        "no retry reached: {:?} {:?} {:?}",
        r.out.end,
        support::finish_refusals(&r.events),
        support::outcomes(&r.events)
    );
    no_request_offers_edit_file(&r);
    assert_never_told_edit_file(&r);
}

// ---------------------------------------------------------------------------------------------
// The judge is as it was.
// ---------------------------------------------------------------------------------------------

/// Whole rewrites that are wrong in ways a rewrite invites (an extra final newline, a trailing
/// space, a reordered row, a byte-order mark) are judged exactly as with the lever off, and
/// none passes.
#[test]
fn wrong_whole_rewrites_fail_with_the_lever_as_without_it() {
    let g = gold();
    let mut lines: Vec<&str> = g.lines().collect();
    lines.swap(2, 3);
    let swapped = lines.join("\n") + "\n";
    // CRLF and a missing final newline pass either way: file_equals normalises them by
    // default (checks/spec.rs, `FileEquals`), a documented rule the lever does not change.
    for (name, content) in [
        ("crlf", g.replace('\n', "\r\n")),
        ("no final newline", g.trim_end_matches('\n').to_string()),
    ] {
        let on = run(Harness::desk_suite(TASK), &rewrite(&content), true);
        let off = run(Harness::desk_suite(TASK), &rewrite(&content), false);
        assert_eq!(on.out.passed(), off.out.passed(), "{name}");
        assert_eq!(
            support::verdict_ids(&on),
            support::verdict_ids(&off),
            "{name}"
        );
    }
    let variants = [
        ("extra final newline", format!("{g}\n")),
        (
            "trailing space",
            g.replacen("2021-03-04\n", "2021-03-04 \n", 1),
        ),
        ("rows swapped", swapped),
        ("bom", format!("\u{feff}{g}")),
    ];
    for (name, content) in variants {
        let verdicts: Vec<(bool, Vec<(String, bool)>)> = [true, false]
            .into_iter()
            .map(|on| {
                let r = run(Harness::desk_suite(TASK), &rewrite(&content), on);
                (r.out.passed(), support::verdict_ids(&r))
            })
            .collect();
        assert!(!verdicts[0].0, "{name} passed under the lever");
        assert_eq!(verdicts[0], verdicts[1], "{name}");
    }
}

/// A whole rewrite of another file as well as the deliverable: the judge still fails the
/// change it was not asked for.
#[test]
fn a_whole_rewrite_of_the_readme_too_fails() {
    let script = reads()
        + &replace(&gold())
        + &line(
            "replace_file",
            json!({"path": "data/README.txt", "content": "gone\n"}),
        )
        + &read_file()
        + &finish_line();
    let r = run(Harness::desk_suite(TASK), &script, true);
    assert!(!r.out.passed());
}

/// The person still approves one exact diff: the approver is asked once for the whole
/// rewrite, with the fixture's and the gold's hashes, and the diff holds every changed line.
#[test]
fn the_person_approves_one_exact_diff_of_the_whole_rewrite() {
    use rein_engine::gate::{ApprovalDecision, ApprovalRequest, Approver};
    use sha2::Digest;
    struct Keep(Vec<ApprovalRequest>);
    impl Approver for Keep {
        fn decide(&mut self, r: &ApprovalRequest) -> ApprovalDecision {
            self.0.push(r.clone());
            ApprovalDecision::AllowOnce
        }
    }
    let mut keep = Keep(Vec::new());
    let r = Ran::of(
        Harness::desk_suite(TASK),
        &rewrite(&gold()),
        &mut keep,
        Policy::safe_default(),
        |o| {
            o.levers = whole(true);
            o.constrained = true;
            o.limits.attempts = 1;
        },
    );
    assert!(r.out.passed(), "{}", r.out.reason());
    let writes: Vec<&ApprovalRequest> =
        keep.0.iter().filter(|a| a.tool == "replace_file").collect();
    assert_eq!(writes.len(), 1, "{:?}", keep.0);
    let hex = |b: &[u8]| format!("{:x}", sha2::Sha256::digest(b));
    assert_eq!(
        writes[0].before_sha256.as_deref(),
        Some(hex(fixture_text().as_bytes()).as_str())
    );
    assert_eq!(
        writes[0].after_sha256.as_deref(),
        Some(hex(gold().as_bytes()).as_str())
    );
    for changed in [
        "Ada.Brandt@Example.org ",
        " MIA.SATO",
        "Olga.Petrova",
        "paul.martin@Example",
    ] {
        assert!(
            writes[0].diff.contains(changed),
            "{changed}: {}",
            writes[0].diff
        );
    }
}

// ---------------------------------------------------------------------------------------------
// folder-stats: a withheld figure is never shown nor journalled as the step's.
// ---------------------------------------------------------------------------------------------

/// explore-csv-rows with a row of empty cells in customers.csv: the judge counts it, the tool
/// does not, so its rows and the totals are withheld.
fn disputed_csv_rows() -> Harness {
    Harness::csv_rows_disputed()
}

fn folder_levers() -> Levers {
    Levers {
        folder_stats: true,
        monotone_attempts: true,
        ..Levers::DEFAULT
    }
}

/// Whether a journalled value holds `total_rows`, a figure withheld when a file's rows are
/// disputed (the tool leaves the empty-cell row out, the judge counts it).
fn raw_total_rows(v: &Value) -> bool {
    v.to_string().contains("total_rows")
}

// Red team: the journal's trace attaches to each step the gate's recorded call, whose
// `result` is the tool's own output, recorded before the agent withholds. Kept by design as the
// audit of what the tool returned; what the model was shown is the step's own record (its
// `detail.result` and `summary`, which `rein journal show` prints), and the `folder_stats`
// event names what was withheld. This test pins both halves, so neither drifts unseen.
#[test]
fn the_trace_of_a_folder_stats_step_shows_what_the_model_saw_and_keeps_the_tool_s_output() {
    // Rein's call before the first step, and the model's own call as its first step.
    let script = line("folder_stats", json!({"path": "data"})) + &finish_line();
    let r = run_with(disputed_csv_rows(), &script, folder_levers(), |_| {});
    let trace = r.h.journal.run_trace(r.out.run).unwrap();
    let steps: Vec<_> = trace
        .steps
        .iter()
        .filter(|t| t.step.action.as_deref() == Some("folder_stats"))
        .collect();
    assert_eq!(steps.len(), 2);
    for step in steps {
        let by = step.step.detail["by"].clone();
        assert!(
            !raw_total_rows(&step.step.detail),
            "{by}: {}",
            step.step.detail
        );
        let call = step.call.as_ref().expect("the step's recorded call");
        assert!(
            raw_total_rows(&call.result),
            "the gate's record ({by}) is the tool's output: {}",
            call.result
        );
    }
    let events = journal_events(&r.h.journal, r.out.run, "folder_stats");
    assert_eq!(events[0]["withheld"], json!(["data/customers.csv"]));
}

/// The model's own folder_stats call, on the workspace, on the data folder, with a pattern: its
/// journalled step (detail.result, summary), the step event, and what the model is shown next
/// never hold the withheld figures.
#[test]
fn the_model_s_own_folder_stats_calls_never_show_or_journal_a_withheld_figure() {
    for params in [
        json!({}),
        json!({"path": "."}),
        json!({"path": "data"}),
        json!({"path": "data/"}),
        json!({"path": "data", "pattern": "*.csv"}),
    ] {
        let script = line("folder_stats", params.clone()) + &finish_line();
        let r = run_with(disputed_csv_rows(), &script, folder_levers(), |_| {});
        let trace = r.h.journal.run_trace(r.out.run).unwrap();
        let own: Vec<&Value> = trace
            .steps
            .iter()
            .filter(|t| {
                t.step.detail["by"] != "rein" && t.step.action.as_deref() == Some("folder_stats")
            })
            .map(|t| &t.step.detail)
            .collect();
        assert_eq!(own.len(), 1, "{params}");
        for field in ["result", "summary"] {
            let text = own[0][field].to_string();
            assert!(!text.contains("total_rows"), "{params} {field}: {text}");
        }
        for e in &r.events {
            if let rein_engine::agent::AgentEvent::Step(s) = e {
                assert!(!s.summary.contains("total_rows"), "{params}: {}", s.summary);
            }
        }
        // The prompt after the call: no total_rows anywhere.
        let after = r.model.prompt(1);
        assert!(!after.contains("total_rows"), "{params}: {after}");
    }
}

/// The retry after a failed verdict repeats Rein's counts: never the withheld ones.
#[test]
fn a_retry_never_repeats_a_withheld_figure() {
    let script = line(
        "create_file",
        json!({"path": "out/tables.md", "content": "# Tables\n\n- data/orders.csv: 37 rows\n"}),
    ) + &line("read_file", json!({"path": "out/tables.md"}))
        + &finish_line()
        + &line("read_file", json!({"path": "out/tables.md"}));
    for monotone in [true, false] {
        let levers = Levers {
            monotone_attempts: monotone,
            ..folder_levers()
        };
        let r = run_with(disputed_csv_rows(), &script, levers, |o| {
            o.limits.attempts = 2;
        });
        for (i, p) in r.model.prompts().iter().enumerate() {
            assert!(
                !p.contains("total_rows"),
                "monotone {monotone}, request {i}"
            );
            assert!(!p.contains("most_rows"), "monotone {monotone}, request {i}");
        }
    }
}

// Was a defect (lever interaction), mended: with `folder-stats` and `facts-tools` on, the row count
// folder-stats withholds for data/customers.csv ("counted otherwise by the task's check; count
// it yourself") reaches the model through its own `table_stats` call on the same file
// (`rows_in_file: 14`, `rows: 14`; the judge counts 15 with the empty-cell row). The
// withholding in `prepare_read_result` (run/steps.rs:573-582) covers only FOLDER_STATS; the
// other counting tool the same run offers hands out the disputed figure unchanged.
#[test]
fn a_row_count_withheld_from_folder_stats_is_not_shown_by_table_stats() {
    let levers = Levers {
        facts_tools: true,
        ..folder_levers()
    };
    let script = line(
        "table_stats",
        json!({"path": "data/customers.csv", "column": "id"}),
    ) + &finish_line();
    let r = run_with(disputed_csv_rows(), &script, levers, |_| {});
    // Rein's own count withheld it.
    let events = journal_events(&r.h.journal, r.out.run, "folder_stats");
    assert_eq!(events[0]["withheld"], json!(["data/customers.csv"]));
    let after = r.model.prompt(1);
    let at = after.find("Result of step 1 (table_stats)").unwrap();
    let shown = &after[at..];
    let shown = &shown[..shown.find("Progress:").unwrap_or(shown.len())];
    assert!(shown.contains("executed"), "{shown}");
    for figure in ["\\\"rows_in_file\\\":14", "\\\"rows\\\":14"] {
        assert!(!shown.contains(figure), "{figure} shown: {shown}");
    }
}

/// report-deploys counts the June deploys whose status is `failed`; the tool's filter ignores
/// case, the judge's does not, so with a `FAILED` row added their counts differ: the model's
/// own `table_stats` with that filter is not shown its `rows`, and without the row it is.
#[test]
fn a_filtered_row_count_the_judge_makes_otherwise_is_withheld_from_table_stats() {
    let call = line(
        "table_stats",
        json!({"path": "data/deploys-2024-06.csv", "column": "duration_s",
               "filter_column": "status", "filter_value": "failed"}),
    ) + &finish_line();
    let levers = Levers {
        facts_tools: true,
        ..Levers::DEFAULT
    };
    for disputed in [true, false] {
        let h = Harness::desk_suite_with("report-deploys", |dir| {
            if disputed {
                support::add_failed_deploy(dir);
            }
        });
        let r = run_with(h, &call, levers, |_| {});
        let shown = support::user_messages(&r.model.requests[1])
            .into_iter()
            .find(|m| m.contains("Result of step 1 (table_stats)"))
            .unwrap();
        let shown = shown.split("Progress:").next().unwrap();
        assert!(shown.contains("executed"), "{shown}");
        let result = support::first_json(shown);
        assert_eq!(
            result.get("rows").is_some(),
            !disputed,
            "disputed {disputed}: {shown}"
        );
        assert_eq!(shown.contains("count them yourself"), disputed, "{shown}");
        // The count of every row is no check's: it stays. (The filtered rows' other figures,
        // their numeric cells and distinct values, stay too: a known limit.)
        assert!(result.get("rows_in_file").is_some(), "{shown}");
    }
}
