#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `own-totals` lever on the desk suite: a finish is held once per attempt while the
//! deliverable states a total that disagrees with the sum of the figures it lists itself, with
//! both figures; the next finish is judged as before. The figures are the document's own, so
//! a wrong list gets no help from the judge, and a total that agrees is never held.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::json;
use support::{finish_line, finish_refusals, journal_events, line, Ran};

const ARCHIVE: &str = "out/archive.md";
const RECEIPTS: &str = "out/receipts.json";

fn archive(counts: [u32; 4], total: u32) -> String {
    let years: String = (2021..=2024)
        .zip(counts)
        .map(|(y, n)| format!("- {y}: {n} letters\n"))
        .collect();
    format!("# Archive\n\n{years}\nBusiest year: 2022\nTotal letters: {total}\n")
}

fn create(path: &str, content: &str) -> String {
    line("create_file", json!({"path": path, "content": content}))
}

fn edit(path: &str, old: &str, new: &str) -> String {
    line(
        "edit_file",
        json!({"path": path, "old_text": old, "new_text": new}),
    )
}

fn read(path: &str) -> String {
    line("read_file", json!({ "path": path }))
}

fn levers(own_totals: bool) -> Levers {
    Levers {
        own_totals,
        ..Levers::DEFAULT
    }
}

fn run_task(task: &str, script: &str, levers: Levers, max_turns: Option<u32>) -> Ran {
    let h = support::Harness::desk_suite(task);
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = levers;
        o.limits.attempts = 1;
        if let Some(turns) = max_turns {
            o.limits.max_turns = turns;
        }
    })
}

fn archive_run(script: &str, own_totals: bool) -> Ran {
    run_task("explore-archive-years", script, levers(own_totals), None)
}

fn receipts_read() -> String {
    [
        "2024-07-02-hardware",
        "2024-07-05-lunch",
        "2024-07-11-train",
        "2024-07-19-books",
    ]
    .iter()
    .map(|r| read(&format!("receipts/{r}.txt")))
    .collect()
}

fn receipts(total: &str) -> String {
    let gold = std::fs::read_to_string(
        support::missions_dir()
            .join("../suites/desk/extract-receipts/judge/gold/files")
            .join(RECEIPTS),
    )
    .unwrap();
    gold.replace("\"total\": 211.43", &format!("\"total\": {total}"))
}

/// The 1.5B's run on explore-archive-years (`ho15-on/`): four right counts, a wrong total.
#[test]
fn a_total_that_disagrees_with_the_listed_figures_holds_the_finish_once_with_both() {
    let script = create(ARCHIVE, &archive([4, 7, 5, 3], 24))
        + &read(ARCHIVE)
        + &finish_line()
        + &edit(ARCHIVE, "Total letters: 24", "Total letters: 19")
        + &read(ARCHIVE)
        + &finish_line();
    let r = archive_run(&script, true);
    assert!(r.out.passed(), "{}", r.out.reason());
    let refusals = finish_refusals(&r.events);
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(
        refusals[0].contains("\"Total letters: 24\" states 24")
            && refusals[0]
                .contains("the 4 list items before it in its section (4 + 7 + 5 + 3) add up to 19")
            && refusals[0].contains("with edit_file"),
        "{}",
        refusals[0]
    );
    let held = journal_events(&r.h.journal, r.out.run, "own_total_hold");
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(
        (held[0]["stated"].as_str(), held[0]["sum"].as_str()),
        (Some("24"), Some("19"))
    );
    // The progress note after the hold names the fix, not another finish.
    let after = support::user_messages(&r.model.requests[3]).join("\n");
    assert!(
        after.contains("Suggested next step: if the line \"Total letters: 24\" in out/archive.md is the sum of what it lists, change it to 19 with edit_file"),
        "{after}"
    );
}

#[test]
fn with_the_lever_off_the_same_run_is_judged_at_its_first_finish_and_fails() {
    let script = create(ARCHIVE, &archive([4, 7, 5, 3], 24)) + &read(ARCHIVE) + &finish_line();
    let r = archive_run(&script, false);
    assert!(!r.out.passed());
    assert!(support::failed(&r.out).contains(&"total-letters".to_string()));
    assert!(finish_refusals(&r.events).is_empty());
}

#[test]
fn a_second_finish_in_the_attempt_is_judged_even_with_the_total_unchanged() {
    let script = create(ARCHIVE, &archive([4, 7, 5, 3], 24))
        + &read(ARCHIVE)
        + &finish_line()
        + &finish_line();
    let r = archive_run(&script, true);
    assert!(!r.out.passed());
    assert_eq!(finish_refusals(&r.events).len(), 1);
    assert!(support::failed(&r.out).contains(&"total-letters".to_string()));
}

/// The sum is the document's: wrong counts that add up to their total are not held (the
/// judge fails them), and a held total is told the sum of the wrong counts, never the judge's.
#[test]
fn the_sum_told_is_the_documents_own_and_an_agreeing_total_is_never_held() {
    let agreeing = create(ARCHIVE, &archive([4, 7, 5, 4], 20)) + &read(ARCHIVE) + &finish_line();
    let r = archive_run(&agreeing, true);
    assert!(finish_refusals(&r.events).is_empty());
    assert!(!r.out.passed());
    assert!(support::failed(&r.out).contains(&"year-2024".to_string()));

    let script = create(ARCHIVE, &archive([4, 7, 5, 4], 24))
        + &read(ARCHIVE)
        + &finish_line()
        + &finish_line();
    let r = archive_run(&script, true);
    let refusals = finish_refusals(&r.events);
    assert!(refusals[0].contains("add up to 20"), "{refusals:?}");
    assert!(
        !refusals[0].contains("19"),
        "the judge's total leaked: {refusals:?}"
    );

    let right = create(ARCHIVE, &archive([4, 7, 5, 3], 19)) + &read(ARCHIVE) + &finish_line();
    let r = archive_run(&right, true);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert!(journal_events(&r.h.journal, r.out.run, "own_total_hold").is_empty());
}

/// A hold on the run's last turn would leave the file unjudged.
#[test]
fn no_hold_on_the_last_turn() {
    let script = create(ARCHIVE, &archive([4, 7, 5, 3], 24)) + &read(ARCHIVE) + &finish_line();
    let r = run_task("explore-archive-years", &script, levers(true), Some(3));
    assert!(finish_refusals(&r.events).is_empty());
    assert!(support::failed(&r.out).contains(&"total-letters".to_string()));
}

/// With `finish-when-met` and `auto-finish`, Rein holds its own finish as it would the
/// model's: the model is told in the transcript, gets its step, and once the line is fixed Rein
/// finishes.
#[test]
fn auto_finish_is_held_for_a_disagreeing_total_and_finishes_once_it_is_fixed() {
    let script = create(ARCHIVE, &archive([4, 7, 5, 3], 24))
        + &read(ARCHIVE)
        + &edit(ARCHIVE, "Total letters: 24", "Total letters: 19")
        + &read(ARCHIVE);
    let r = auto_run(&script);
    assert!(r.out.passed(), "{}", r.out.reason());
    let held = journal_events(&r.h.journal, r.out.run, "own_total_hold");
    assert_eq!(held.len(), 1, "{held:?}");
    let told = support::user_messages(&r.model.requests[2]).join("\n");
    assert!(
        told.contains("Rein did not finish for you. Not finished yet: in out/archive.md, the line \"Total letters: 24\" states 24")
            && told.contains("Suggested next step: if the line"),
        "{told}"
    );
    let auto = journal_events(&r.h.journal, r.out.run, "auto_finish");
    assert_eq!(auto.len(), 1, "{auto:?}");
    assert_eq!(auto[0]["accepted"], true);
}

/// The model gets one step after Rein's hold: a step that leaves the total as it is (a read)
/// is followed by Rein's finish, and the judge fails the total. Nothing loops.
#[test]
fn after_reins_hold_one_step_that_fixes_nothing_is_followed_by_reins_finish() {
    let script = create(ARCHIVE, &archive([4, 7, 5, 3], 24))
        + &read(ARCHIVE)
        + &read(ARCHIVE)
        + &read(ARCHIVE);
    let r = auto_run(&script);
    assert!(!r.out.passed());
    assert!(support::failed(&r.out).contains(&"total-letters".to_string()));
    assert_eq!(r.out.figures.steps, 3, "{}", r.out.reason());
    assert_eq!(
        journal_events(&r.h.journal, r.out.run, "own_total_hold").len(),
        1
    );
}

fn auto_run(script: &str) -> Ran {
    let levers = Levers {
        finish_when_met: true,
        auto_finish: true,
        ..levers(true)
    };
    let h = support::Harness::desk_suite("explore-archive-years");
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = levers;
        o.limits.attempts = 1;
        o.constrained = true;
    })
}

/// The 1.5B's extract-receipts run (`dev16-s1/`): four right totals and a grand total of
/// 189.43 where they sum to 211.43.
#[test]
fn a_json_total_that_disagrees_with_its_entries_is_held_and_then_judged() {
    let script = receipts_read()
        + &create(RECEIPTS, &receipts("189.43"))
        + &read(RECEIPTS)
        + &finish_line()
        + &edit(RECEIPTS, "\"total\": 189.43", "\"total\": 211.43")
        + &read(RECEIPTS)
        + &finish_line();
    let r = run_task("extract-receipts", &script, levers(true), None);
    assert!(r.out.passed(), "{}", r.out.reason());
    let refusals = finish_refusals(&r.events);
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(
        refusals[0].contains("\"total\" states 189.43")
            && refusals[0].contains("the \"total\" of the 4 entries of \"receipts\" (94.78 + 19 + 41.9 + 55.75) add up to 211.43"),
        "{}",
        refusals[0]
    );
}

/// With `write-json`, the document Rein serialises is read the same way.
#[test]
fn a_write_json_document_is_read_for_its_total_too() {
    let mut doc: serde_json::Value = serde_json::from_str(&receipts("189.43")).unwrap();
    let script = receipts_read()
        + &line(
            "write_json",
            json!({"path": RECEIPTS, "document": doc.clone()}),
        )
        + &read(RECEIPTS)
        + &finish_line()
        + &finish_line();
    let with_json = Levers {
        write_json: true,
        ..levers(true)
    };
    let r = run_task("extract-receipts", &script, with_json, None);
    assert_eq!(
        finish_refusals(&r.events).len(),
        1,
        "{:?} {:?} {:?}",
        finish_refusals(&r.events),
        support::step_outcomes(&r.h, &r.out, "write_json"),
        r.events
            .iter()
            .filter_map(|e| match e {
                rein_engine::agent::AgentEvent::Step(s) => {
                    Some((s.action.clone(), s.outcome.clone(), s.summary.clone()))
                }
                _ => None,
            })
            .collect::<Vec<_>>()
    );
    assert!(!r.out.passed());
    doc["total"] = json!(211.43);
    let script = receipts_read()
        + &line("write_json", json!({"path": RECEIPTS, "document": doc}))
        + &read(RECEIPTS)
        + &finish_line();
    let r = run_task("extract-receipts", &script, with_json, None);
    assert!(finish_refusals(&r.events).is_empty());
    assert!(r.out.passed(), "{}", r.out.reason());
}
