#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `requirements-once` lever: with `write-sections`, a check the task lists under its
//! section's heading is not listed again in the numbered requirements, nor its `table_stats`
//! hint given twice. No check may go unsaid: every check of every desk suite task with a
//! Markdown outline is still in the task, once.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::checks::{requirement, table_stats_hint};
use rein_engine::gate::AllowAll;
use support::{finish_line, missions_dir, times_said, user_messages, Harness, PromptRecorder};

fn levers(once: bool) -> Levers {
    Levers {
        facts_tools: true,
        requirements: true,
        write_sections: true,
        requirements_once: once,
        ..Levers::DEFAULT
    }
}

/// The task message of a run with `levers`: the first user message of its first prompt.
fn task(h: &Harness, levers: Levers) -> String {
    let mut model = PromptRecorder::new(&finish_line(), "requirements_once.jsonl");
    h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.limits.attempts = 1;
    });
    user_messages(&model.requests[0]).remove(0)
}

#[test]
fn report_gradebook_lists_each_figure_and_its_hint_once() {
    let h = Harness::desk_suite("report-gradebook");
    let twice = task(&h, levers(false));
    let once = task(&h, levers(true));
    let checks = &h.contract.mission.checks;
    let hinted = checks
        .iter()
        .filter(|c| table_stats_hint(&c.spec, &h.contract.mission.prompt).is_some())
        .count();
    assert!(hinted >= 6, "{hinted} figures with a table_stats call");
    assert_eq!(twice.matches("call table_stats with").count(), 2 * hinted);
    assert_eq!(once.matches("call table_stats with").count(), hinted);
    for c in checks {
        assert_eq!(times_said(&once, &requirement(&c.spec)), 1, "{}", c.id);
    }
    // A figure was said twice, and is now only under its heading.
    let math = checks.iter().find(|c| c.id == "math-average").unwrap();
    let math = requirement(&math.spec);
    assert_eq!(times_said(&twice, &math), 2);
    assert!(once
        .lines()
        .any(|l| l.starts_with("- `Math`: ") && l.contains(&math)));
    // The seven checks of no section keep the numbered list, numbered 1-7.
    assert!(once.contains("Requirements (the harness checks each one on disk"));
    assert!(once.lines().any(|l| l.starts_with("7. ")));
    assert!(!once.lines().any(|l| l.starts_with("8. ")));
    assert!(
        once.len() * 10 < twice.len() * 7,
        "at least 30 % shorter: {} against {} characters",
        once.len(),
        twice.len()
    );
}

#[test]
fn every_check_of_every_desk_task_is_said_once_with_the_lever() {
    let root = missions_dir().join("../suites/desk");
    let mut tasks: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("mission.json").exists())
        .collect();
    tasks.sort();
    let mut with_outline = 0;
    for task_dir in tasks {
        let name = task_dir.file_name().unwrap().to_string_lossy().to_string();
        let h = Harness::desk_suite(&name);
        let once = task(&h, levers(true));
        let twice = task(&h, levers(false));
        if !once.contains("with write_sections") {
            assert_eq!(once, twice, "{name}: no outline, nothing changes");
            continue;
        }
        with_outline += 1;
        let checks = &h.contract.mission.checks;
        for check in checks {
            let said = requirement(&check.spec);
            // Checks whose values are the answer can read alike (three listed files: "a line
            // the task asks for"); each is still said once.
            let alike = checks
                .iter()
                .filter(|c| requirement(&c.spec) == said)
                .count();
            assert_eq!(
                times_said(&once, &said),
                alike,
                "{name}: check {} must be said once",
                check.id
            );
            assert!(times_said(&twice, &said) >= alike, "{name}: {}", check.id);
        }
    }
    assert!(with_outline >= 10, "{with_outline} tasks with an outline");
}

#[test]
fn desk_task_says_each_check_once_too() {
    let h = Harness::new("desk_task");
    let once = task(&h, levers(true));
    let twice = task(&h, levers(false));
    for check in &h.contract.mission.checks {
        assert_eq!(
            times_said(&once, &requirement(&check.spec)),
            1,
            "{}",
            check.id
        );
    }
    assert!(once.len() < twice.len());
}
