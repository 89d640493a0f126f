#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Lever `combined-totals` (with `table-facts`): once the model has read two or more tables of
//! the same columns whole, and no table input of the task is left unread, the step's message
//! ends with Rein's figures over all their rows as one table; report-timesheets' three weekly
//! CSVs are the case it was built for.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::json;
use support::{finish_line, line, Harness, Ran};

const TIMESHEETS: &str = "../suites/desk/report-timesheets";
const WEEKS: [&str; 3] = [
    "timesheets/2024-W10.csv",
    "timesheets/2024-W11.csv",
    "timesheets/2024-W12.csv",
];
const REPORT: &str = "## By person\nInes: 40 hours\nMarek: 22 hours\nSofia: 38 hours\nTariq: 64 hours\n\n## By project\nharbor-app: 26 hours\nintranet: 70 hours\nsupport: 68 hours\n\nTotal: 164 hours\n";
/// How the figures start in a step's message.
const COMBINED: &str = "Rein's figures over the ";

fn report_and_finish() -> String {
    line(
        "create_file",
        json!({"path": "out/hours.md", "content": REPORT}),
    ) + &line("read_file", json!({"path": "out/hours.md"}))
        + &finish_line()
}

fn run(h: Harness, script: &str, combined: bool, table_facts: bool, globs: bool) -> Ran {
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers.table_facts = table_facts;
        o.levers.combined_totals = combined;
        o.levers.glob_reads = globs;
        o.limits.attempts = 1;
    })
}

fn week_by_week() -> String {
    WEEKS
        .iter()
        .map(|w| line("read_file", json!({ "path": w })))
        .collect::<String>()
        + &report_and_finish()
}

#[test]
fn reads_of_same_column_tables_bring_figures_over_all_of_them() {
    let on = run(Harness::new(TIMESHEETS), &week_by_week(), true, true, false);
    assert!(on.out.passed(), "{}", on.out.reason());
    let first = on.shown_result(1, 1, "read_file");
    assert!(
        !first.contains(COMBINED),
        "one table is nothing to combine: {first}"
    );
    // Two weeks of three: figures over part of the set are withheld while a table input is
    // unread (the 1.5B copied them as the whole set's).
    let second = on.shown_result(2, 2, "read_file");
    assert!(!second.contains(COMBINED), "{second}");
    let third = on.shown_result(3, 3, "read_file");
    assert!(
        third.contains("Rein's figures over the 3 tables"),
        "{third}"
    );
    for figure in [
        r#""Ines":"40""#,
        r#""Marek":"22""#,
        r#""Sofia":"38""#,
        r#""Tariq":"64""#,
        r#""harbor-app":"26""#,
        r#""intranet":"70""#,
        r#""support":"68""#,
        r#""sum":"164""#,
    ] {
        assert!(third.contains(figure), "{figure} missing: {third}");
    }
    // Reading the report back is no table read: nothing more is said.
    assert!(!on.shown_result(5, 5, "read_file").contains(COMBINED));
}

#[test]
fn without_the_lever_or_without_table_facts_nothing_is_combined() {
    for (combined, facts) in [(false, true), (true, false)] {
        let r = run(
            Harness::new(TIMESHEETS),
            &week_by_week(),
            combined,
            facts,
            false,
        );
        assert!(r.out.passed(), "{}", r.out.reason());
        assert!(
            r.model.prompts().iter().all(|p| !p.contains(COMBINED)),
            "combined {combined}, table facts {facts}"
        );
    }
}

#[test]
fn a_glob_read_of_the_weeks_ends_with_the_figures_once() {
    let script = line("read_file", json!({"path": "timesheets/*.csv"})) + &report_and_finish();
    let on = run(Harness::new(TIMESHEETS), &script, true, true, true);
    assert!(on.out.passed(), "{}", on.out.reason());
    let shown = on.shown_result(1, 1, "find_files");
    assert_eq!(shown.matches(COMBINED).count(), 1, "{shown}");
    assert!(
        shown.contains("Rein's figures over the 3 tables"),
        "{shown}"
    );
    assert!(shown.contains(r#""Tariq":"64""#), "{shown}");
    // After the glob's note, so the reads come first.
    assert!(
        shown.find("Your glob listed") < shown.find(COMBINED),
        "{shown}"
    );
}

#[test]
fn a_week_changed_after_its_read_is_left_out_of_the_figures() {
    // The model reads W10 and W11; W10 is changed before W12's read: the figures cover only
    // the tables as the model was shown them (W11 and W12).
    let h = Harness::new(TIMESHEETS);
    let w10 = h.workspace.join(WEEKS[0]);
    let script = week_by_week();
    let mut model = support::PromptRecorder::tapped(
        &script,
        "script.jsonl",
        Box::new(move |call, _, _| {
            if call == 2 {
                std::fs::write(&w10, "person,project,hours\nInes,intranet,99\n").unwrap();
            }
        }),
    );
    let (_, _) = h.run_gated_with_policy(&mut model, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers.table_facts = true;
        o.levers.combined_totals = true;
        o.limits.attempts = 1;
    });
    let prompt = model.prompt(3);
    let after_w12 = prompt
        .rsplit("Result of step 3 (read_file)")
        .next()
        .unwrap();
    assert!(
        after_w12.contains("Rein's figures over the 2 tables")
            && after_w12.contains(r#"[\"timesheets/2024-W11.csv\",\"timesheets/2024-W12.csv\"]"#),
        "{after_w12}"
    );
    assert!(!after_w12.contains("99"), "{after_w12}");
}

#[test]
fn a_retry_after_a_failed_verdict_is_given_the_figures_again() {
    let wrong = REPORT.replace("Ines: 40", "Ines: 41");
    let script = WEEKS
        .iter()
        .map(|w| line("read_file", json!({ "path": w })))
        .collect::<String>()
        + &line(
            "create_file",
            json!({"path": "out/hours.md", "content": wrong}),
        )
        + &line("read_file", json!({"path": "out/hours.md"}))
        + &finish_line()
        + &line(
            "replace_file",
            json!({"path": "out/hours.md", "content": REPORT}),
        )
        + &line("read_file", json!({"path": "out/hours.md"}))
        + &finish_line();
    let r = Ran::of(
        Harness::new(TIMESHEETS),
        &script,
        &mut AllowAll,
        Policy::safe_default(),
        |o| {
            o.levers.table_facts = true;
            o.levers.combined_totals = true;
            o.levers.monotone_attempts = true;
            o.limits.attempts = 2;
        },
    );
    assert!(r.out.passed(), "{}", r.out.reason());
    // The first prompt of attempt 2 (after six replies) starts a fresh transcript.
    let retry = r.model.prompt(6);
    assert!(
        retry.contains("Rein's figures over the 3 tables"),
        "{retry}"
    );
    assert!(retry.contains(r#"\"Ines\":\"40\""#), "{retry}");
}
