#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `write-sections` lever on desk_task (a Markdown deliverable whose `report_complete`
//! check lists headings in order): a `write_sections` tool with one text field per required
//! heading, Rein writing the heading lines itself, no body able to make or hide a heading,
//! held to the deliverable's path and to every field before the gate, and applied through the
//! same gate, diff and approval as any change.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentEvent, Levers, Outline, RunOutcome, StepEvent};
use rein_engine::gate::{AllowAll, DenyAll};
use rein_protocol::CompletionRequest;
use serde_json::{json, Value};
use support::{
    failed, gold_fields, gold_text, line, reads, step_outcomes, Harness, PromptRecorder,
};

const SUMMARY: &str = "out/summary.md";

fn on() -> Levers {
    Levers {
        write_sections: true,
        ..Levers::DEFAULT
    }
}

fn run(
    h: &Harness,
    script: &str,
    levers: Levers,
    constrained: bool,
    approver: &mut dyn rein_engine::gate::Approver,
) -> (RunOutcome, Vec<AgentEvent>, Vec<CompletionRequest>) {
    let mut model = PromptRecorder::new(script, "write_sections.jsonl");
    let (out, events) = h.run_gated(&mut model, approver, |o| {
        o.levers = levers;
        o.constrained = constrained;
        o.limits.attempts = 1;
    });
    (out, events, model.requests)
}

fn steps<'e>(events: &'e [AgentEvent], action: &str) -> Vec<&'e StepEvent> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Step(s) if s.action.as_deref() == Some(action) => Some(s),
            _ => None,
        })
        .collect()
}

fn reasons(h: &Harness, out: &RunOutcome, action: &str) -> Vec<String> {
    step_outcomes(h, out, action)
        .into_iter()
        .map(|(_, reason)| reason)
        .collect()
}

fn write_sections_branch(request: &CompletionRequest) -> Option<Value> {
    request.json_schema.as_ref().unwrap()["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["properties"]["action"]["const"] == "write_sections")
        .map(|b| b["properties"]["parameters"].clone())
}

#[test]
fn the_schema_has_one_required_field_per_heading_in_the_contracts_order() {
    // Three required headings, quoted in the prompt at level 2 (and a level-1 title that is
    // not one of them, so its text is the model's).
    let h = Harness::with_edit("desk_task", |v| {
        v["prompt"] = json!("Write out/summary.md with the title '# Harbor Library' and the sections '## Risks', '## Goal' and '## Tasks', in that order.");
        for c in v["checks"].as_array_mut().unwrap() {
            if c["kind"] == "report_complete" {
                c["headings"] = json!(["Risks", "Goal", "Tasks"]);
            }
        }
    });
    let outline = Outline::of(&h.contract).unwrap();
    assert_eq!(
        outline.headings,
        vec![
            (2, "Risks".to_string()),
            (2, "Goal".to_string()),
            (2, "Tasks".to_string())
        ]
    );
    assert!(outline.title);
    let (_, _, requests) = run(&h, &reads(), on(), true, &mut AllowAll);
    let params = write_sections_branch(&requests[0]).expect("write_sections is offered");
    let names: Vec<&String> = params["properties"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["path", "title", "Risks", "Goal", "Tasks"]);
    assert_eq!(
        params["required"],
        json!(["path", "title", "Risks", "Goal", "Tasks"])
    );
    assert_eq!(params["additionalProperties"], json!(false));
    assert_eq!(params["properties"]["path"]["const"], SUMMARY);
    assert_eq!(params["properties"]["Goal"]["type"], "string");
    assert_eq!(params["properties"]["Goal"]["minLength"], 1);
    // The model reads the same fields, and how the headings are written.
    let prompt = format!("{:?}", requests[0].prompt);
    assert!(
        prompt.contains(r#"write_sections {\"path\": string, \"title\": string, \"Risks\": string, \"Goal\": string, \"Tasks\": string}"#),
        "{prompt}"
    );
    assert!(
        prompt.contains("'# <title>', '## Risks', '## Goal', '## Tasks'"),
        "{prompt}"
    );

    // desk_task itself: the prompt quotes '# Project summary', so it is level 1 and no title.
    let o = Outline::of(&Harness::new("desk_task").contract).unwrap();
    assert!(!o.title);
    assert_eq!(
        o.headings.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
        [1, 2, 2, 2]
    );
}

#[test]
fn a_reply_with_every_section_writes_the_report_and_passes() {
    let h = Harness::new("desk_task");
    let script = reads()
        + &line("write_sections", gold_fields())
        + &line("read_file", json!({ "path": SUMMARY }))
        + &line("finish", json!({"summary": "done"}));
    let (out, events, _) = run(&h, &script, on(), false, &mut AllowAll);
    assert!(out.passed(), "{}", out.reason());
    assert_eq!(
        std::fs::read_to_string(h.workspace.join(SUMMARY)).unwrap(),
        gold_text(),
        "Rein writes the headings in order, each body under its own"
    );
    assert_eq!(steps(&events, "write_sections")[0].outcome, "executed");
    // The lever and the tool are in the journal.
    let trace = h.journal.run_trace(out.run).unwrap();
    let levers: Vec<&Value> = trace
        .events
        .iter()
        .filter(|e| e.kind == "levers")
        .map(|e| &e.payload)
        .collect();
    assert_eq!(levers[0]["levers"]["write-sections"], true);
    assert!(levers[0]["tools"]
        .as_array()
        .unwrap()
        .contains(&json!("write_sections")));
}

#[test]
fn a_smuggled_heading_line_is_written_as_text_and_the_outline_stands() {
    let h = Harness::new("desk_task");
    let mut fields = gold_fields();
    // The Tasks body ends with its own `## Risks` and a denial: as a heading, it would open a
    // second Risks section the risk checks read.
    let tasks = fields["Tasks"].as_str().unwrap().to_string();
    fields["Tasks"] = json!(format!("## Tasks\n{tasks}\n## Risks\nThere are no risks."));
    let script = reads()
        + &line("write_sections", fields)
        + &line("read_file", json!({ "path": SUMMARY }))
        + &line("finish", json!({"summary": "done"}));
    let (out, events, _) = run(&h, &script, on(), false, &mut AllowAll);
    assert_eq!(steps(&events, "write_sections")[0].outcome, "executed");
    let written = std::fs::read_to_string(h.workspace.join(SUMMARY)).unwrap();
    assert!(written.contains("\n\\## Tasks\n"), "{written}");
    assert!(
        written.contains("\n\\## Risks\nThere are no risks."),
        "{written}"
    );
    assert_eq!(written.matches("\n## ").count(), 3, "{written}");
    let r = reasons(&h, &out, "write_sections");
    assert!(r[0].contains("were written as text"), "{r:?}");
    assert!(r[0].contains("2 in `Tasks`"), "{r:?}");
    // The judge reads the escaped line as text: the denial is still caught where it stands.
    assert!(!out.passed());
    let failed: Vec<String> = out
        .verdict
        .as_ref()
        .unwrap()
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.id.clone())
        .collect();
    assert!(
        failed.contains(&"risk-not-denied-anywhere".to_string()),
        "{failed:?}"
    );
    assert!(
        !failed.contains(&"summary-complete".to_string()),
        "{failed:?}"
    );
    assert!(
        !failed.contains(&"risk-not-denied".to_string()),
        "{failed:?}"
    );
}

#[test]
fn a_body_that_would_make_or_hide_a_heading_is_refused_and_nothing_is_written() {
    let h = Harness::new("desk_task");
    let base = gold_fields();
    let tricks = [
        // A setext heading: text with a line of `-` under it.
        ("Tasks", "Risks\n-----\nThere are no risks."),
        ("Goal", "Summary\n=====\nText."),
        // An HTML heading.
        ("Goal", "<h2>Risks</h2>\n\nThere are no risks."),
        // An unclosed fence swallows the headings after it.
        ("Goal", "```\nThe goal."),
        // An unclosed comment hides them.
        ("Goal", "The goal.\n\n<!--"),
    ];
    let script: String = reads()
        + &tricks
            .iter()
            .map(|(field, body)| {
                let mut f = base.clone();
                f[*field] = json!(body);
                line("write_sections", f)
            })
            .collect::<String>();
    let (out, events, _) = run(&h, &script, on(), false, &mut AllowAll);
    let w = steps(&events, "write_sections");
    assert_eq!(w.len(), tricks.len());
    let got: Vec<&str> = w.iter().map(|s| s.outcome.as_str()).collect();
    assert_eq!(
        got,
        vec!["invalid"; tricks.len()],
        "{:?}",
        reasons(&h, &out, "write_sections")
    );
    assert!(!h.workspace.join(SUMMARY).exists(), "nothing was written");
    for r in reasons(&h, &out, "write_sections") {
        assert!(r.contains("nothing was written"), "{r}");
    }
}

#[test]
fn a_placeholder_written_as_a_tag_is_refused_and_named() {
    // The 1.5B filled summarize-support-week's `'<Category> tickets: N'` as `<sync> tickets:
    // 15`: an element the judge reads as hiding the rest of the file, the next heading too.
    let h = Harness::new("desk_task");
    let mut f = gold_fields();
    f["Goal"] = json!("Tickets: 40\n<sync> tickets: 15");
    let script = reads() + &line("write_sections", f);
    let (out, events, _) = run(&h, &script, on(), false, &mut AllowAll);
    let w = steps(&events, "write_sections");
    assert_eq!(w[0].outcome.as_str(), "invalid");
    let why = &reasons(&h, &out, "write_sections")[0];
    assert!(
        why.contains("`<sync>` reads as an HTML tag that is never closed")
            && why.contains("without angle brackets")
            && why.contains("nothing was written"),
        "{why}"
    );
    assert!(!h.workspace.join(SUMMARY).exists(), "nothing was written");
}

#[test]
fn a_missing_empty_or_unknown_field_or_another_path_is_refused_before_the_gate() {
    let h = Harness::new("desk_task");
    let mut missing = gold_fields();
    missing.as_object_mut().unwrap().remove("Risks");
    let mut empty = gold_fields();
    empty["Goal"] = json!("  \n");
    let mut number = gold_fields();
    number["Tasks"] = json!(64);
    let mut extra = gold_fields();
    extra["Notes"] = json!("more");
    let mut elsewhere = gold_fields();
    elsewhere["path"] = json!("notes/overview.md");
    let mut escape = gold_fields();
    escape["path"] = json!("../summary.md");
    let bad = [missing, empty, number, extra, elsewhere, escape];
    let script: String = reads()
        + &bad
            .iter()
            .map(|f| line("write_sections", f.clone()))
            .collect::<String>();
    let overview = std::fs::read(h.workspace.join("notes/overview.md")).unwrap();
    let (out, events, _) = run(&h, &script, on(), false, &mut AllowAll);
    for s in steps(&events, "write_sections") {
        assert_eq!(s.outcome, "invalid", "{}", s.summary);
    }
    assert!(!h.workspace.join(SUMMARY).exists(), "nothing was written");
    assert_eq!(
        std::fs::read(h.workspace.join("notes/overview.md")).unwrap(),
        overview
    );
    let r = reasons(&h, &out, "write_sections");
    assert!(r[0].contains("missing `Risks`"), "{r:?}");
    assert!(r[1].contains("empty `Goal`"), "{r:?}");
    assert!(r[2].contains("not text: `Tasks`"), "{r:?}");
    assert!(r[3].contains("unknown fields `Notes`"), "{r:?}");
    assert!(r[4].contains("writes only the deliverable"), "{r:?}");
    assert!(r[5].contains("writes only the deliverable"), "{r:?}");
}

#[test]
fn write_sections_goes_through_approval_like_any_change() {
    let h = Harness::new("desk_task");
    let script = reads() + &line("write_sections", gold_fields());
    let (_, events, _) = run(&h, &script, on(), false, &mut DenyAll);
    assert_eq!(
        steps(&events, "write_sections")[0].outcome,
        "approval-required"
    );
    assert!(!h.workspace.join(SUMMARY).exists());
}

#[test]
fn an_edit_after_write_sections_works_and_the_fixed_report_passes() {
    let h = Harness::new("desk_task");
    let mut wrong = gold_fields();
    let tasks = wrong["Tasks"]
        .as_str()
        .unwrap()
        .replace("Total hours: 64", "Total hours: 72");
    wrong["Tasks"] = json!(tasks);
    let script = reads()
        + &line("write_sections", wrong)
        + &line(
            "edit_file",
            json!({"path": SUMMARY, "old_text": "Total hours: 72", "new_text": "Total hours: 64"}),
        )
        + &line("read_file", json!({ "path": SUMMARY }))
        + &line("finish", json!({"summary": "done"}));
    let (out, events, _) = run(&h, &script, on(), false, &mut AllowAll);
    assert_eq!(steps(&events, "edit_file")[0].outcome, "executed");
    assert!(out.passed(), "{}", out.reason());
    assert_eq!(
        std::fs::read_to_string(h.workspace.join(SUMMARY)).unwrap(),
        gold_text()
    );
}

#[test]
fn off_or_without_required_headings_there_is_no_write_sections() {
    let h = Harness::new("desk_task");
    let (_, _, requests) = run(&h, &reads(), Levers::DEFAULT, true, &mut AllowAll);
    assert!(write_sections_branch(&requests[0]).is_none());
    assert!(!format!("{:?}", requests[0].prompt).contains("write_sections"));

    // doc_extract's deliverable is JSON: no outline, no tool.
    let h = Harness::new("doc_extract");
    assert!(Outline::of(&h.contract).is_none());
    let (_, _, requests) = run(&h, &reads(), on(), true, &mut AllowAll);
    assert!(write_sections_branch(&requests[0]).is_none());

    // A heading that cannot be a field (`path`) or repeats another: no tool rather than a
    // tool that cannot write the outline.
    for headings in [json!(["Goal", "path"]), json!(["Goal", "goal"])] {
        let h = Harness::with_edit("desk_task", |v| {
            for c in v["checks"].as_array_mut().unwrap() {
                if c["kind"] == "report_complete" {
                    c["headings"] = headings.clone();
                }
            }
        });
        assert!(Outline::of(&h.contract).is_none(), "{headings}");
    }
}

/// Red team: a Risks section that leaves out the main risk, and the risk stated under a fake
/// `Risks` heading hidden in another body by a look-alike, an invisible character, another
/// line break or a container block. Whatever the judge's reader takes for a heading the gate
/// refuses (the outline would differ), and whatever it does not stays in its own section: the
/// report never passes on the hidden statement.
#[test]
fn a_heading_hidden_by_lookalikes_invisibles_or_containers_never_carries_a_section() {
    let planted = "The supplier has not yet delivered the API keys, which blocks the work.";
    let tricks = [
        format!("\u{200b}## Risks\n{planted}"),
        format!("\u{feff}## Risks\n{planted}"),
        format!("\u{ff03}\u{ff03} Risks\n{planted}"),
        format!("\u{a0}## Risks\n{planted}"),
        format!("\u{2060}## Risks\n{planted}"),
        format!("Text.\r## Risks\r{planted}"),
        format!("Text.\u{2028}## Risks\u{2028}{planted}"),
        format!("Text.\u{85}## Risks\u{85}{planted}"),
        format!("> ## Risks\n> {planted}"),
        format!("- ## Risks\n  {planted}"),
        format!("\t## Risks\n{planted}"),
        format!("Risks\n\u{2014}\u{2014}\u{2014}\n{planted}"),
        format!("<h2\u{200b}>Risks</h2>\n{planted}"),
        format!("## Risks {{#risks}}\n{planted}"),
    ];
    // The control: the same report with the statement under the real Risks heading passes,
    // so a trick that carried it would pass too.
    let h = Harness::new("desk_task");
    let mut fields = gold_fields();
    fields["Risks"] = json!(planted);
    let script = reads()
        + &line("write_sections", fields)
        + &line("read_file", json!({ "path": SUMMARY }))
        + &line("finish", json!({"summary": "done"}));
    let (out, _, _) = run(&h, &script, on(), false, &mut AllowAll);
    assert!(out.passed(), "the control fails: {}", out.reason());
    for trick in &tricks {
        let h = Harness::new("desk_task");
        let mut fields = gold_fields();
        let tasks = fields["Tasks"].as_str().unwrap().to_string();
        fields["Tasks"] = json!(format!("{tasks}\n\n{trick}"));
        fields["Risks"] =
            json!("Scope may grow if new feature requests arrive late in the project.");
        let script = reads()
            + &line("write_sections", fields)
            + &line("read_file", json!({ "path": SUMMARY }))
            + &line("finish", json!({"summary": "done"}));
        let (out, events, _) = run(&h, &script, on(), false, &mut AllowAll);
        let outcome = steps(&events, "write_sections")[0].outcome.clone();
        eprintln!("{trick:?}: {outcome}");
        assert!(!out.passed(), "{trick:?} passed ({outcome})");
        if outcome == "executed" {
            let failed = failed(&out);
            assert!(
                failed.contains(&"risk-stated".to_string()),
                "{trick:?}: the hidden statement counted for Risks: {failed:?}"
            );
        } else {
            assert_eq!(outcome, "invalid", "{trick:?}");
            assert!(!h.workspace.join(SUMMARY).exists(), "{trick:?}");
        }
    }
}

/// Red team: bodies that are empty in every way a reader sees (blank, invisible, a lone
/// escape, only a comment) are refused or fail the section's word floor; a CRLF body is
/// written with plain line ends.
#[test]
fn empty_looking_bodies_do_not_fill_a_section_and_crlf_is_normalised() {
    for empty in [
        "\u{200b}",
        "\u{feff}\u{200b}\u{2060}",
        "<!-- -->",
        "\\",
        "&nbsp;",
        "\u{3000}",
    ] {
        let h = Harness::new("desk_task");
        let mut fields = gold_fields();
        fields["Goal"] = json!(empty);
        let script = reads()
            + &line("write_sections", fields)
            + &line("read_file", json!({ "path": SUMMARY }))
            + &line("finish", json!({"summary": "done"}));
        let (out, _, _) = run(&h, &script, on(), false, &mut AllowAll);
        assert!(!out.passed(), "an empty-looking Goal {empty:?} passed");
    }
    let h = Harness::new("desk_task");
    let mut fields = gold_fields();
    for f in ["Goal", "Tasks", "Risks"] {
        let body = fields[f].as_str().unwrap().replace('\n', "\r\n");
        fields[f] = json!(body);
    }
    let script = reads()
        + &line("write_sections", fields)
        + &line("read_file", json!({ "path": SUMMARY }))
        + &line("finish", json!({"summary": "done"}));
    let (out, _, _) = run(&h, &script, on(), false, &mut AllowAll);
    let written = std::fs::read_to_string(h.workspace.join(SUMMARY)).unwrap();
    assert!(!written.contains('\r'), "{written:?}");
    assert!(out.passed(), "{}", out.reason());
}

#[test]
fn the_progress_note_suggests_the_tool_the_lever_offers_for_the_deliverable() {
    let script = reads()
        + &line("write_sections", gold_fields())
        + &line("read_file", json!({ "path": SUMMARY }))
        + &line("finish", json!({"summary": "done"}));
    let suggested = |requests: &[CompletionRequest]| -> String {
        // The prompt after the last input was read: the deliverable is not written yet.
        format!("{:?}", requests[3].prompt)
    };
    let h = Harness::new("desk_task");
    let (out, _, requests) = run(&h, &script, on(), false, &mut AllowAll);
    assert!(out.passed(), "{}", out.reason());
    let prompt = suggested(&requests);
    assert!(
        prompt
            .contains("Suggested next step: write the whole of out/summary.md with write_sections"),
        "{prompt}"
    );
    assert!(!prompt.contains("with create_file."), "{prompt}");

    let h = Harness::new("desk_task");
    let (_, _, requests) = run(&h, &script, Levers::DEFAULT, false, &mut AllowAll);
    assert!(suggested(&requests)
        .contains("Suggested next step: write the whole of out/summary.md with create_file"));
}

#[test]
fn one_text_copied_under_several_headings_is_refused_and_short_equal_bodies_are_not() {
    let h = Harness::new("desk_task");
    let overview = std::fs::read_to_string(h.workspace.join("notes/overview.md")).unwrap();
    let mut copied = gold_fields();
    copied["Goal"] = json!(overview);
    // The same text with other line breaks and case is still a copy.
    copied["Tasks"] = json!(overview.replace('\n', "  ").to_uppercase());
    let script = reads() + &line("write_sections", copied);
    let (out, events, _) = run(&h, &script, on(), false, &mut AllowAll);
    assert_eq!(steps(&events, "write_sections")[0].outcome, "invalid");
    assert!(!h.workspace.join(SUMMARY).exists(), "nothing was written");
    let r = reasons(&h, &out, "write_sections");
    assert!(
        r[0].contains("the same text under `Goal`, `Tasks`"),
        "{r:?}"
    );

    // Two sections that both say a short "None so far." are not a copy: written as usual.
    let h = Harness::new("desk_task");
    let mut short = gold_fields();
    short["Goal"] = json!("None so far.");
    short["Risks"] = json!("None so far.");
    let script = reads() + &line("write_sections", short);
    let (_, events, _) = run(&h, &script, on(), false, &mut AllowAll);
    assert_eq!(steps(&events, "write_sections")[0].outcome, "executed");
}

#[test]
fn each_section_s_requirements_are_named_under_its_heading_without_an_expected_value() {
    let h = Harness::new("desk_task");
    let script = reads()
        + &line("write_sections", gold_fields())
        + &line("read_file", json!({ "path": SUMMARY }))
        + &line("finish", json!({"summary": "done"}));
    let (out, _, requests) = run(&h, &script, on(), false, &mut AllowAll);
    assert!(out.passed(), "{}", out.reason());
    let task = format!("{:?}", requests[0].prompt);
    assert!(
        task.contains("What the text under each heading must do"),
        "{task}"
    );
    // desk_task's total-hours check stands in section Tasks: named there, its value never.
    let tasks_line = task
        .split("\\n")
        .find(|l| l.starts_with("- `Tasks`:") && l.contains(r#"sum of the column \"hours\""#))
        .unwrap_or_else(|| panic!("no Tasks requirement naming the total: {task}"));
    assert!(
        tasks_line.contains("state it in the section"),
        "{tasks_line}"
    );
    assert!(!task.contains("64"), "{task}");
    assert!(task.contains("- `Risks`:"), "{task}");

    let h = Harness::new("desk_task");
    let (_, _, requests) = run(&h, &script, Levers::DEFAULT, false, &mut AllowAll);
    assert!(!format!("{:?}", requests[0].prompt).contains("What the text under each heading"));
}
