#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The levers: each changes what the model sees or how it is asked, and is recorded with the
//! run; none changes what the judge checks.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, Levers, RunOutcome, REPEAT_ESCAPE_DRAWS};
use rein_engine::gate::AllowAll;
use serde_json::{json, Value};
use support::{allowed_tools, fixture, journal_events, outcomes, Harness, PromptRecorder};

fn run(h: &Harness, model: &mut PromptRecorder, levers: Levers) -> (RunOutcome, Vec<AgentEvent>) {
    h.run_model(
        model,
        &mut AllowAll,
        |o| o.levers = levers,
        None,
        &mut |_| {},
    )
}

fn line(v: Value) -> String {
    v.to_string() + "\n"
}

fn events_of(h: &Harness, out: &RunOutcome, kind: &str) -> Vec<Value> {
    journal_events(&h.journal, out.run, kind)
}

#[test]
fn the_levers_are_journaled_with_the_run() {
    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::fixture("good.jsonl");
    let on = support::ALL_ON_BUT_NOTES;
    let (out, _) = run(&h, &mut model, on);
    assert!(out.passed());
    let ev = events_of(&h, &out, "levers");
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0]["levers"], on.to_json());
    assert!(ev[0]["tools"]
        .as_array()
        .unwrap()
        .contains(&json!("table_stats")));
}

#[test]
fn facts_tools_adds_table_stats_and_calculate_only_when_on() {
    let stats = line(json!({"thought": "sum", "action": "table_stats",
        "parameters": {"path": "data/tasks.csv", "column": "hours"}}));
    let calc = line(json!({"thought": "add", "action": "calculate",
        "parameters": {"expression": "12 + 16 + 10 + 14 + 8 + 4"}}));
    let good = std::fs::read_to_string(fixture("good.jsonl")).unwrap();
    let script = format!("{stats}{calc}{good}");

    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(&script, "levers.jsonl");
    let levers = Levers {
        facts_tools: true,
        ..Levers::DEFAULT
    };
    let (out, events) = run(&h, &mut model, levers);
    assert!(out.passed(), "{}", out.reason());
    let steps = outcomes(&events);
    assert_eq!(steps[0], ("table_stats".into(), "executed".into()));
    assert_eq!(steps[1], ("calculate".into(), "executed".into()));
    let prompt = model.prompt(0);
    assert!(prompt.contains("- table_stats {"));
    // The task names the call that gives the total, never the total.
    assert!(
        prompt.contains(
            r#"call table_stats with {\"path\":\"data/tasks.csv\",\"column\":\"hours\"} and copy the \"sum\""#
        ),
        "{prompt}"
    );
    assert!(!prompt.contains("64"), "{prompt}");
    // The judge is the same contract: the tool list is the run's, the contract's hash is not.
    assert_eq!(out.contract_sha256, h.contract.sha256);

    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(&script, "levers.jsonl");
    let (_, events) = run(&h, &mut model, Levers::DEFAULT);
    let steps = outcomes(&events);
    assert_eq!(
        steps[0].1, "invalid",
        "table_stats is not a tool of desk_task without the lever"
    );
    assert!(!model.prompt(0).contains("table_stats"));
}

#[test]
fn requirements_put_the_checks_in_the_task_without_computed_values() {
    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::fixture("good.jsonl");
    let levers = Levers {
        requirements: true,
        ..Levers::DEFAULT
    };
    let (out, _) = run(&h, &mut model, levers);
    assert!(out.passed());
    let prompt = model.prompt(0);
    assert!(
        prompt.contains("Requirements (the harness checks"),
        "{prompt}"
    );
    assert!(
        prompt.contains("sum of the column \\\"hours\\\""),
        "{prompt}"
    );
    assert!(prompt.contains(&format!("{}. ", h.contract.mission.checks.len())));
    // The hours sum to 64: the model must compute it, never read it.
    assert!(!prompt.contains("64"), "{prompt}");

    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::fixture("good.jsonl");
    run(&h, &mut model, Levers::DEFAULT);
    assert!(!model.prompt(0).contains("Requirements (the harness checks"));
}

#[test]
fn repeat_escape_redraws_a_repeated_call_with_another_seed_and_temperature() {
    let read = |p: &str| {
        line(json!({"thought": "read", "action": "read_file", "parameters": {"path": p}}))
    };
    let good = std::fs::read_to_string(fixture("good.jsonl")).unwrap();
    // The model reads the overview, then asks for exactly that read again before going on.
    let script = format!(
        "{}{}{good}",
        read("notes/overview.md"),
        read("notes/overview.md")
    );

    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(&script, "levers.jsonl");
    let levers = Levers {
        repeat_escape: true,
        ..Levers::DEFAULT
    };
    let (out, events) = run(&h, &mut model, levers);
    assert!(out.passed(), "{}", out.reason());
    // The repeat was drawn again (the redraw got good.jsonl's first line, itself a repeat
    // of the overview, and the third draw the meeting notes): no step ran the repeat.
    let steps = outcomes(&events);
    let overview_reads = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Step(s) if s.parameters.as_ref().and_then(|p| p.get("path")) == Some(&json!("notes/overview.md"))))
        .count();
    assert_eq!(overview_reads, 1, "{steps:?}");
    let escapes = events_of(&h, &out, "repeat_escape");
    assert_eq!(escapes.len(), 2);
    assert_eq!(escapes[0]["repeats_step"], json!(1));
    let (first, redraw) = (&model.requests[1], &model.requests[2]);
    assert_ne!(first.seed, redraw.seed);
    assert!(redraw.sampling.temperature > first.sampling.temperature);

    // Off: the same script runs the repeat as a step.
    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(&script, "levers.jsonl");
    let (out_off, events) = run(&h, &mut model, Levers::DEFAULT);
    assert!(out_off.passed());
    let overview_reads = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Step(s) if s.parameters.as_ref().and_then(|p| p.get("path")) == Some(&json!("notes/overview.md"))))
        .count();
    assert_eq!(overview_reads, 3);
    assert!(events_of(&h, &out_off, "repeat_escape").is_empty());
}

#[test]
fn repeat_escape_gives_up_after_its_draws_and_the_repeat_counts() {
    let read = line(
        json!({"thought": "read", "action": "read_file", "parameters": {"path": "notes/overview.md"}}),
    );
    let script = read.repeat(12);
    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(&script, "levers.jsonl");
    let levers = Levers {
        repeat_escape: true,
        ..Levers::DEFAULT
    };
    let (out, _) = h.run_model(
        &mut model,
        &mut AllowAll,
        |o| {
            o.levers = levers;
            o.limits.max_turns = 3;
        },
        None,
        &mut |_| {},
    );
    assert!(!out.passed());
    // Step 1, then steps 2 and 3 each with their redraws: 1 + 2 * (1 + draws) requests.
    assert_eq!(
        model.requests.len() as u32,
        1 + 2 * (1 + REPEAT_ESCAPE_DRAWS)
    );
    assert_eq!(out.figures.steps, 3);
}

#[test]
fn repeat_penalty_off_samples_actions_without_the_penalty() {
    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::fixture("good.jsonl");
    let (out, _) = run(&h, &mut model, Levers::DEFAULT);
    assert!(out.passed());
    let actor = rein_protocol::SamplingProfile::ACTOR.repeat_penalty;
    assert!(actor > 1.0);
    assert!(model
        .requests
        .iter()
        .all(|r| r.sampling.repeat_penalty == actor));

    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::fixture("good.jsonl");
    let levers = Levers {
        repeat_penalty: false,
        ..Levers::DEFAULT
    };
    let (out, _) = run(&h, &mut model, levers);
    assert!(out.passed());
    assert!(model
        .requests
        .iter()
        .all(|r| r.sampling.repeat_penalty == 1.0));
    // The rest of the profile is the actor's.
    assert!(model
        .requests
        .iter()
        .all(|r| r.sampling.temperature == rein_protocol::SamplingProfile::ACTOR.temperature));
}

#[test]
fn checklist_tells_what_is_not_met_yet_without_computed_values() {
    // good.jsonl with the total written as 72 (the hours sum to 64), then read back and fixed.
    let good = std::fs::read_to_string(fixture("good.jsonl")).unwrap();
    let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
    let right = lines[3].clone();
    assert!(right.contains("Total hours: 64"), "{right}");
    lines[3] = right.replace("Total hours: 64", "Total hours: 72");
    let fix = line(json!({"thought": "fix the total", "action": "edit_file",
        "parameters": {"path": "out/summary.md", "old_text": "Total hours: 72",
                       "new_text": "Total hours: 64"}}));
    let reread = lines[4].clone();
    lines.insert(5, fix.trim_end().to_string());
    lines.insert(6, reread);
    let script = lines.join("\n") + "\n";

    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(&script, "levers.jsonl");
    let levers = Levers {
        checklist: true,
        ..Levers::DEFAULT
    };
    let (out, _) = run(&h, &mut model, levers);
    assert!(out.passed(), "{}", out.reason());
    let asked = model.prompts();
    // Before anything is written, the deliverable is missing.
    assert!(asked[1].contains("Checklist: "), "{}", asked[1]);
    assert!(asked[1].contains("out/summary.md"), "{}", asked[1]);
    // After the wrong total: the total is not named, met or not (its status after every step
    // would let a model search for the value); it is counted as judged after finish.
    let after_write = &asked[4];
    let note = &after_write[after_write.rfind("Checklist:").unwrap()..];
    assert!(
        !note.contains("sum of the column") && !note.contains("72"),
        "{note}"
    );
    assert!(note.contains("judged only after you call finish"), "{note}");
    let after_fix = &asked[6];
    assert_eq!(
        note,
        &after_fix[after_fix.rfind("Checklist:").unwrap()..],
        "the wrong and the right total read the same"
    );
    for p in &asked {
        assert!(!p.contains("64") || p.contains("Total hours: 64"), "{p}");
        if let Some(at) = p.rfind("Checklist:") {
            assert!(!p[at..].contains("64"), "{}", &p[at..]);
        }
    }
    // After the fix, everything the harness can check is met.
    let last = asked.last().unwrap();
    assert!(
        last.contains("every requirement the harness checks before finish is met"),
        "{last}"
    );

    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(&script, "levers.jsonl");
    run(&h, &mut model, Levers::DEFAULT);
    assert!(model.prompts().iter().all(|p| !p.contains("Checklist:")));
}

#[test]
fn repeat_escape_last_draw_may_not_name_the_repeated_tool() {
    let read = line(
        json!({"thought": "read", "action": "read_file", "parameters": {"path": "notes/overview.md"}}),
    );
    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(&read.repeat(12), "levers.jsonl");
    let levers = Levers {
        repeat_escape: true,
        ..Levers::DEFAULT
    };
    let (out, _) = h.run_model(
        &mut model,
        &mut AllowAll,
        |o| {
            o.levers = levers;
            o.constrained = true;
            o.limits.max_turns = 2;
        },
        None,
        &mut |_| {},
    );
    assert!(!out.passed());
    let tools: Vec<Vec<String>> = model.requests.iter().map(allowed_tools).collect();
    // Step 1, step 2, its first redraw: every tool; the last redraw: all but read_file.
    assert_eq!(tools.len() as u32, 2 + REPEAT_ESCAPE_DRAWS);
    assert!(tools[0].contains(&"read_file".to_string()), "{tools:?}");
    assert_eq!(tools[0], tools[1]);
    assert_eq!(tools[1], tools[2]);
    let last = tools.last().unwrap();
    assert!(!last.contains(&"read_file".to_string()), "{last:?}");
    assert_eq!(
        last.len() + 1,
        tools[0].len(),
        "only the repeated tool is left out"
    );
    let escapes = events_of(&h, &out, "repeat_escape");
    assert_eq!(escapes.last().unwrap()["excluded"], "read_file");
    assert!(escapes[0]["excluded"].is_null());
}

#[test]
fn task_reminder_repeats_the_task_after_the_calls_that_ran() {
    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::fixture("good.jsonl");
    let levers = Levers {
        task_reminder: true,
        ..Levers::DEFAULT
    };
    let (out, _) = run(&h, &mut model, levers);
    assert!(out.passed(), "{}", out.reason());
    let prompt = |i: usize| model.prompt(i);
    assert!(
        !prompt(0).contains("Reminder."),
        "nothing ran before step 1"
    );
    let second = prompt(1);
    assert!(
        second.contains("Reminder. The calls of yours that ran, in order: read_file notes/overview.md.\\nThe task: Read notes/overview.md"),
        "{second}"
    );
    assert!(second.contains("once all of it is done, call finish."));
    let third = prompt(2);
    assert!(
        third.contains("in order: read_file notes/overview.md, read_file notes/meeting-notes.md."),
        "{third}"
    );

    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::fixture("good.jsonl");
    run(&h, &mut model, Levers::DEFAULT);
    assert!(!model.prompt(1).contains("Reminder."));
}

#[test]
fn table_facts_add_the_column_totals_to_a_read_of_a_table_only_when_on() {
    let read = |path: &str| {
        line(json!({"thought": "read", "action": "read_file",
            "parameters": {"path": path}}))
    };
    let good = std::fs::read_to_string(fixture("good.jsonl")).unwrap();
    let script = format!(
        "{}{}{good}",
        read("data/tasks.csv"),
        read("notes/overview.md")
    );
    let levers = Levers {
        table_facts: true,
        ..Levers::DEFAULT
    };

    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(&script, "table_facts.jsonl");
    let (out, _) = run(&h, &mut model, levers);
    // The judge reads the same contract and the same files either way.
    assert!(out.passed(), "{}", out.reason());
    assert_eq!(out.contract_sha256, h.contract.sha256);
    assert!(!model.prompt(0).contains("column_totals"));
    let after_csv = model.prompt(1);
    assert!(after_csv.contains("column_totals"), "{after_csv}");
    // The hours column of the whole file; the text columns (task, owner, status) have none.
    assert!(after_csv.contains(r#"\"column\":\"hours\""#), "{after_csv}");
    assert!(after_csv.contains(r#"\"sum\":\"64\""#), "{after_csv}");
    assert!(
        !after_csv.contains(r#"\"column\":\"owner\""#),
        "{after_csv}"
    );
    // A Markdown file is no table: its read is unchanged.
    let after_md = model.prompt(2);
    assert_eq!(after_md.matches("column_totals").count(), 1, "{after_md}");
    // What the model read is what the journal keeps.
    let trace = h.journal.run_trace(out.run).unwrap();
    assert!(
        trace
            .steps
            .iter()
            .any(|s| s.step.detail.to_string().contains("column_totals")),
        "the journal's step keeps the totals the model saw"
    );

    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(&script, "table_facts.jsonl");
    let (out, _) = run(&h, &mut model, Levers::DEFAULT);
    assert!(out.passed(), "{}", out.reason());
    assert!(model.prompts().iter().all(|p| !p.contains("column_totals")));
}

#[test]
fn table_facts_on_a_table_the_model_wrote_tell_the_truth_and_leave_the_verdict_alone() {
    // The model writes a table with a total row spelled its own way, then reads it back.
    let csv = "item,amount\nPaper,10\nInk,5.50\nTotal (EUR),15.50\n";
    let write = line(json!({"thought": "note costs", "action": "create_file",
        "parameters": {"path": "out/costs.csv", "content": csv}}));
    let read = line(json!({"thought": "read", "action": "read_file",
        "parameters": {"path": "out/costs.csv"}}));
    let good = std::fs::read_to_string(fixture("good.jsonl")).unwrap();
    let script = format!("{write}{read}{good}");
    let verdict = |levers: Levers| {
        let h = Harness::new("desk_task");
        let mut model = PromptRecorder::new(&script, "table_facts_own.jsonl");
        let (out, events) = run(&h, &mut model, levers);
        (
            out.passed(),
            out.reason(),
            outcomes(&events),
            model.prompt(2),
        )
    };
    let on = verdict(Levers {
        table_facts: true,
        ..Levers::DEFAULT
    });
    let off = verdict(Levers::DEFAULT);
    assert_eq!((&on.0, &on.1, &on.2), (&off.0, &off.1, &off.2));
    let after_read = on.3;
    // Counted once: 10 + 5.50, the total row named and left out.
    assert!(after_read.contains(r#"\"sum\":\"15.5\""#), "{after_read}");
    assert!(
        after_read.contains(r#"\"label\":\"Total (EUR)\""#),
        "{after_read}"
    );
    assert!(!off.3.contains("column_totals"));
}

#[test]
fn table_facts_leak_nothing_of_a_table_policy_keeps_from_read_file() {
    let policy = || {
        rein_engine::policy::Policy::from_toml_str(
            "[[rule]]\ntool = \"read_file\"\npaths = [\"data/**\"]\naction = \"deny\"\n",
            "test policy",
            &rein_workspace::desk_registry(),
        )
        .unwrap()
    };
    let read = |path: &str| {
        line(json!({"thought": "read", "action": "read_file", "parameters": {"path": path}}))
    };
    let h = Harness::new("desk_task");
    // A link outside data/ to the denied table: what read_file shows, the totals may add to.
    #[cfg(unix)]
    std::os::unix::fs::symlink("data/tasks.csv", h.workspace.join("link.csv")).unwrap();
    let script = read("data/tasks.csv") + &read("link.csv") + &read("notes/overview.md");
    let mut model = PromptRecorder::new(&script, "table_facts_policy.jsonl");
    let (_, events) = h.run_gated_with_policy(&mut model, &mut AllowAll, policy(), |o| {
        o.levers = Levers {
            table_facts: true,
            ..Levers::DEFAULT
        };
    });
    let steps = outcomes(&events);
    assert_eq!(steps[0], ("read_file".into(), "denied".into()), "{steps:?}");
    let after_denied = model.prompt(1);
    assert!(!after_denied.contains("column_totals"), "{after_denied}");
    // The link: totals only where read_file itself showed the rows.
    let after_link = model.prompt(2);
    let shown = after_link.contains("Priya");
    assert_eq!(
        after_link.contains("column_totals"),
        shown && steps[1].1 == "executed",
        "{steps:?} {after_link}"
    );
}

#[test]
fn the_progress_note_never_names_a_tool_the_run_does_not_offer() {
    // A mission without create_file (and, second, without replace_file), the write-json and
    // write-sections levers on: desk_task's deliverable is Markdown with headings (so
    // write_sections is offered) and has no schema (so write_json is not).
    let read = |path: &str| {
        line(json!({"thought": "read", "action": "read_file", "parameters": {"path": path}}))
    };
    let finish = line(json!({"thought": "done", "action": "finish",
        "parameters": {"summary": "done"}}));
    let script = read("notes/overview.md")
        + &read("notes/meeting-notes.md")
        + &read("data/tasks.csv")
        + &finish
        + &read("notes/overview.md");
    for (dropped, levers) in [
        (
            vec!["create_file"],
            Levers {
                write_json: true,
                ..Levers::DEFAULT
            },
        ),
        (vec!["create_file", "replace_file"], Levers::DEFAULT),
        (
            vec!["create_file"],
            Levers {
                write_json: true,
                write_sections: true,
                ..Levers::DEFAULT
            },
        ),
    ] {
        let h = Harness::with_edit("desk_task", |m| {
            let tools = m["tools"].as_array_mut().unwrap();
            tools.retain(|t| !dropped.iter().any(|d| t == d));
        });
        let mut model = PromptRecorder::new(&script, "progress_tools.jsonl");
        let (out, _) = run(&h, &mut model, levers);
        let offered: Vec<String> = events_of(&h, &out, "levers")[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect();
        let prompts = model.prompts();
        let last = prompts.last().unwrap();
        assert_eq!(last.matches("Progress: ").count(), 5, "{last}");
        let refusals = last.split("finish refused: ").skip(1);
        for note in last.split("Progress: ").skip(1).chain(refusals) {
            let note = note.split(['"', '\\']).next().unwrap_or_default();
            for tool in [
                "create_file",
                "replace_file",
                "edit_file",
                "write_json",
                "write_sections",
            ] {
                if note.contains(tool) {
                    assert!(
                        offered.iter().any(|t| t == tool),
                        "{dropped:?} {levers:?}: the note names {tool}, not offered {offered:?}: {note}"
                    );
                }
            }
        }
    }
}

#[test]
fn table_facts_reach_the_model_for_a_table_longer_than_the_result_clip() {
    // The result the model is shown is clipped; the totals matter most for a long table, of
    // which the model sees only the start, so they must come before the content, not after it.
    let h = Harness::new("desk_task");
    let mut csv = String::from("task,owner,hours\n");
    let mut sum = 0u64;
    for i in 0..400u64 {
        csv.push_str(&format!("Task number {i},Someone {i},{}\n", i % 17));
        sum += i % 17;
    }
    std::fs::write(h.workspace.join("data/big.csv"), &csv).unwrap();
    let script = line(json!({"thought": "read", "action": "read_file",
        "parameters": {"path": "data/big.csv"}}))
        + &std::fs::read_to_string(fixture("good.jsonl")).unwrap();
    let mut model = PromptRecorder::new(&script, "table_facts_long.jsonl");
    run(
        &h,
        &mut model,
        Levers {
            table_facts: true,
            ..Levers::DEFAULT
        },
    );
    let after = model.prompt(1);
    let want = format!(r#"\"column\":\"hours\",\"numbers\":400,\"sum\":\"{sum}\""#);
    assert!(
        after.contains(&want),
        "{want} not in {}",
        &after[after.len() - 3000..]
    );
}

#[test]
fn a_finish_refusal_names_the_writer_the_run_offers() {
    let read = |path: &str| {
        line(json!({"thought": "read", "action": "read_file", "parameters": {"path": path}}))
    };
    let finish = line(json!({"thought": "done", "action": "finish",
        "parameters": {"summary": "done"}}));
    let script = read("notes/overview.md") + &finish + &read("notes/overview.md");
    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(&script, "refusal_writer.jsonl");
    let levers = Levers {
        write_sections: true,
        ..Levers::DEFAULT
    };
    run(&h, &mut model, levers);
    let last = model.prompts().last().cloned().unwrap();
    let refusal = last.split("finish refused: ").nth(1).unwrap();
    let refusal = refusal.split("\\n").next().unwrap();
    assert!(
        refusal.contains("write it with write_sections"),
        "{refusal}"
    );
}

#[test]
fn read_back_shows_the_written_deliverable_and_lets_finish_follow_at_once() {
    // The good script without its read-back of the deliverable.
    let good = std::fs::read_to_string(fixture("good.jsonl")).unwrap();
    let script: String = good
        .lines()
        .filter(|l| !l.contains("Check what I wrote."))
        .map(|l| format!("{l}\n"))
        .collect();
    let levers = Levers {
        read_back: true,
        ..Levers::DEFAULT
    };
    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(&script, "read_back.jsonl");
    let (out, events) = run(&h, &mut model, levers);
    assert!(out.passed(), "{}", out.reason());
    assert_eq!(
        outcomes(&events).last().unwrap(),
        &("finish".to_string(), "executed".to_string())
    );
    // The model got the file as it is on disk, whole, with the write's result.
    let after_write = model.prompt(4);
    let on_disk = std::fs::read_to_string(h.workspace.join("out/summary.md")).unwrap();
    assert!(after_write.contains("Rein read out/summary.md back for you"));
    // Prompts are recorded as debug text: the shown file is escaped the same way.
    let shown = format!("{:?}", format!("<<<\n{on_disk}\n>>>"));
    assert!(
        after_write.contains(shown.trim_matches('"')),
        "{after_write}"
    );
    assert!(
        after_write.contains("written and was read back"),
        "{after_write}"
    );
    // Rein's read is no call of the model's: the trace the judge reads has no read_file of it.
    let trace = h.journal.run_trace(out.run).unwrap();
    assert!(!trace
        .steps
        .iter()
        .any(|s| s.step.action.as_deref() == Some("read_file")
            && s.step.detail.to_string().contains("out/summary.md")));

    // Without the lever the same script's finish is refused for the missing read-back.
    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(&script, "read_back_off.jsonl");
    let (out, events) = run(&h, &mut model, Levers::DEFAULT);
    assert!(!out.passed());
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::FinishRefused { reason, .. } if reason.contains("re-read the output first"))));
    assert!(model.prompts().iter().all(|p| !p.contains("back for you")));
}

#[test]
fn read_back_never_covers_a_file_changed_after_its_write_was_shown() {
    // Write (shown back), then an edit that is refused leaves the file as shown: finish is
    // accepted; an applied edit is shown back again, so the model always saw the last write.
    let good = std::fs::read_to_string(fixture("good.jsonl")).unwrap();
    let mut lines: Vec<String> = good
        .lines()
        .filter(|l| !l.contains("Check what I wrote.") && !l.contains("\"finish\""))
        .map(str::to_string)
        .collect();
    lines.push(
        json!({"thought": "Tighten the goal.", "action": "edit_file", "parameters": {
            "path": "out/summary.md",
            "old_text": "from their phones, replacing",
            "new_text": "from a phone, replacing"}})
        .to_string(),
    );
    lines.push(
        json!({"thought": "Done.", "action": "finish", "parameters": {"summary": "Wrote it."}})
            .to_string(),
    );
    let script = lines.join("\n") + "\n";
    let levers = Levers {
        read_back: true,
        ..Levers::DEFAULT
    };
    let h = Harness::new("desk_task");
    let mut model = PromptRecorder::new(&script, "read_back_edit.jsonl");
    let (out, _) = run(&h, &mut model, levers);
    assert!(out.passed(), "{}", out.reason());
    let after_edit = model.prompt(5);
    assert!(
        after_edit.contains("members renew loans and reserve books from a phone, replacing"),
        "{after_edit}"
    );
}
