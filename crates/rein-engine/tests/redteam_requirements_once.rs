#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of the `requirements-once` lever: missions whose sections and headings differ in
//! small ways, checks scoped to sections that are no heading, and what else in the prompts
//! refers to the numbered requirements. A test that fails names a defect and says what is
//! right; a test that passes probes a claim that held and stays as a regression test.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::checks::{requirement, table_stats_hint};
use rein_engine::gate::AllowAll;
use serde_json::{json, Value};
use support::{
    finish_line, gold_fields, line, reads, times_said, user_messages, Harness, PromptRecorder,
};

/// The requirement the task says for check `id`.
fn said_of(h: &Harness, id: &str) -> String {
    let c = h
        .contract
        .mission
        .checks
        .iter()
        .find(|c| c.id == id)
        .unwrap();
    requirement(&c.spec)
}

fn levers(once: bool) -> Levers {
    Levers {
        facts_tools: true,
        requirements: true,
        write_sections: true,
        requirements_once: once,
        ..Levers::DEFAULT
    }
}

/// The user messages of every request of a run of `h` with `levers` on `script`.
fn run_prompts(h: &Harness, levers: Levers, script: &str) -> Vec<Vec<String>> {
    let mut model = PromptRecorder::new(script, "redteam_requirements_once.jsonl");
    h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers;
        o.limits.attempts = 1;
    });
    model.requests.iter().map(user_messages).collect()
}

/// The task message of a run with `levers`.
fn task(h: &Harness, levers: Levers) -> String {
    run_prompts(h, levers, &finish_line())[0][0].clone()
}

/// Whether `task` states `said` as a numbered requirement.
fn numbered(task: &str, said: &str) -> bool {
    task.lines().any(|line| {
        line.split_once(". ")
            .filter(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
            .is_some_and(|(_, rest)| rest == said)
    })
}

/// The heading a check is listed under in `task`, if any.
fn under_heading(task: &str, said: &str) -> Option<String> {
    task.lines().find_map(|line| {
        let (h, rest) = line.strip_prefix("- `")?.split_once("`: ")?;
        (rest == said
            || rest
                .strip_prefix(said)
                .is_some_and(|r| r.starts_with(" To get")))
        .then(|| h.to_string())
    })
}

fn push_check(v: &mut Value, check: Value) {
    v["checks"].as_array_mut().unwrap().push(check);
}

fn content_check(id: &str, path: &str, section: &str, pattern: &str) -> Value {
    json!({"id": id, "kind": "content_matches", "path": path, "pattern": pattern,
           "case_insensitive": true, "section": section})
}

/// Probe (holds): a section that differs from its heading only in case, surrounding spaces, a
/// trailing colon or emphasis is the same section to the judge (`heading_key`), is listed under
/// that heading, and is said exactly once.
#[test]
fn sections_spelled_differently_from_their_heading_are_said_once() {
    let h = Harness::with_edit("desk_task", |v| {
        push_check(
            v,
            content_check("a", "out/summary.md", "  TASKS:  ", "hours"),
        );
        push_check(v, content_check("b", "out/summary.md", "**Risks**", "keys"));
        push_check(v, content_check("c", "out/summary.md", "## goal", "app"));
        push_check(
            v,
            content_check("d", "out/summary.md", "`Goal`:", "members"),
        );
    });
    let once = task(&h, levers(true));
    for c in &h.contract.mission.checks {
        let said = requirement(&c.spec);
        let alike = h
            .contract
            .mission
            .checks
            .iter()
            .filter(|k| requirement(&k.spec) == said)
            .count();
        assert_eq!(times_said(&once, &said), alike, "{}: {once}", c.id);
    }
    for (id, heading) in [("a", "Tasks"), ("b", "Risks"), ("c", "Goal"), ("d", "Goal")] {
        let said = said_of(&h, id);
        assert_eq!(
            under_heading(&once, &said).as_deref(),
            Some(heading),
            "{id}"
        );
        assert!(!numbered(&once, &said), "{id}");
    }
}

/// Probe (holds): sections that are not one of the outline's headings (inner spacing, a
/// singular, a heading the report does not require, the title the prompt asks for) stay in the
/// numbered list, once.
#[test]
fn sections_that_are_no_heading_stay_numbered() {
    // The report's required headings without `Project summary`: the prompt's
    // '# Project summary' is then the `title` field, not a heading of the outline.
    let h = Harness::with_edit("desk_task", |v| {
        for c in v["checks"].as_array_mut().unwrap() {
            if c["id"] == "summary-complete" {
                c["headings"] = json!(["Goal", "Tasks", "Risks"]);
            }
        }
        push_check(
            v,
            content_check("spaced", "out/summary.md", "Ta sks", "hours"),
        );
        push_check(
            v,
            content_check("singular", "out/summary.md", "Task", "hours"),
        );
        push_check(
            v,
            content_check("other", "out/summary.md", "Next steps", "release"),
        );
        push_check(
            v,
            content_check("titled", "out/summary.md", "Project summary", "Harbor"),
        );
        push_check(
            v,
            content_check("inner", "out/summary.md", "Goal  Risks", "x"),
        );
    });
    let once = task(&h, levers(true));
    assert!(once.contains("`title` is the report's title"), "{once}");
    for id in ["spaced", "singular", "other", "titled", "inner"] {
        let said = said_of(&h, id);
        assert!(numbered(&once, &said), "{id} must stay numbered: {once}");
        assert_eq!(times_said(&once, &said), 1, "{id}");
        assert!(under_heading(&once, &said).is_none(), "{id}");
    }
}

/// Probe (holds): headings that repeat (after `heading_key`) make no outline, so the lever
/// changes nothing.
#[test]
fn repeated_headings_change_nothing() {
    let h = Harness::with_edit("desk_task", |v| {
        for c in v["checks"].as_array_mut().unwrap() {
            if c["id"] == "summary-complete" {
                c["headings"] = json!(["Project summary", "Goal", "Tasks", "tasks:", "Risks"]);
            }
        }
    });
    assert_eq!(task(&h, levers(true)), task(&h, levers(false)));
}

/// Probe (holds): with `requirements` off (no numbered list), the lever still says every
/// `table_stats` hint exactly once.
#[test]
fn without_the_numbered_list_every_hint_is_still_given_once() {
    let h = Harness::new("desk_task");
    let off = |once| Levers {
        requirements: false,
        ..levers(once)
    };
    let once = task(&h, off(true));
    let twice = task(&h, off(false));
    for c in &h.contract.mission.checks {
        if let Some(hint) = table_stats_hint(&c.spec, &h.contract.mission.prompt) {
            assert!(twice.contains(&hint));
            assert_eq!(once.matches(hint.trim()).count(), 1, "{}: {once}", c.id);
        }
    }
}

/// ATTACK (defect found). A check on ANOTHER file whose section happens to share a heading's
/// name ("Tasks" of `out/notes.md`). `lists_under_heading` (like `section_requirements`)
/// compares only the section, never the check's path with the outline's, so the lever drops
/// it from the numbered list and its only statement is under "What the text under each heading
/// must do" as if it were a requirement on the `Tasks` field of out/summary.md: filling that
/// field cannot meet it.
///
/// Correct behaviour: only a check on the outline's own file (`same_path(path, outline.path)`)
/// counts as listed under a heading; a check on another file keeps its numbered line.
#[test]
fn a_check_on_another_file_with_a_heading_named_section_stays_numbered() {
    let h = Harness::with_edit("desk_task", |v| {
        push_check(
            v,
            content_check("notes-tasks", "out/notes.md", "Tasks", "owner"),
        );
    });
    let once = task(&h, levers(true));
    let c = h
        .contract
        .mission
        .checks
        .iter()
        .find(|c| c.id == "notes-tasks")
        .unwrap();
    let said = requirement(&c.spec);
    assert_eq!(times_said(&once, &said), 1, "{once}");
    assert!(
        numbered(&once, &said),
        "a check on out/notes.md is said only under out/summary.md's `{}` field:\n{once}",
        under_heading(&once, &said).unwrap_or_default()
    );
}

/// The checklist lines (`- N. text`) of a prompt's last user message.
fn checklist_lines(user: &[String]) -> Vec<(String, String)> {
    let last = user.last().unwrap();
    let Some(at) = last.find("Checklist:") else {
        return Vec::new();
    };
    last[at..]
        .lines()
        .filter_map(|l| {
            let (n, rest) = l.strip_prefix("- ")?.split_once(". ")?;
            (!n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
                .then(|| (n.to_string(), rest.to_string()))
        })
        .collect()
}

/// Probe (holds without the lever) and ATTACK (defect found with it). The `checklist` lever
/// numbers an unmet requirement by its place in the contract (`N. requirement`, the number
/// the task's numbered list gave it). With `requirements-once` the numbered list is renumbered
/// 1..k over the checks not under a heading, so the checklist's `13. ... no placeholder`
/// names a number the task does not have (or another requirement's), and the model cannot
/// match the two.
///
/// Correct behaviour: every `N. text` the checklist shows is the task's requirement `N.`
/// (keep the contract's numbers in the shortened list, or number the checklist the same way).
#[test]
fn checklist_numbers_match_the_tasks_numbered_requirements() {
    let h = Harness::new("desk_task");
    // A report with a placeholder: every check the checklist shows is met but
    // `no-placeholder`, the 13th check of the contract.
    let mut draft = gold_fields();
    draft["Risks"] = json!(format!("{} TODO", draft["Risks"].as_str().unwrap()));
    let script = reads()
        + &line("write_sections", draft)
        + &line("read_file", json!({"path": "out/summary.md"}))
        + &finish_line();
    for once in [false, true] {
        let lv = Levers {
            checklist: true,
            ..levers(once)
        };
        let prompts = run_prompts(&h, lv, &script);
        let task = &prompts[0][0];
        let mut seen = 0;
        for user in &prompts[1..] {
            for (n, text) in checklist_lines(user) {
                seen += 1;
                let in_task = task.lines().any(|l| {
                    l.strip_prefix(&format!("{n}. "))
                        .is_some_and(|r| text.starts_with(r))
                });
                assert!(
                    in_task,
                    "requirements-once={once}: the checklist's `{n}. {text}` is not the task's \
                     requirement {n}:\n{task}"
                );
            }
        }
        assert!(seen > 0, "the checklist showed an unmet requirement");
    }
}
