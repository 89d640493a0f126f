#![allow(clippy::unwrap_used, clippy::expect_used)]

//! The `answer-lines` lever on the desk suite's search tasks: a deliverable the task quotes as
//! "exactly N lines" of `Label: <placeholder>` is held by constrained decoding to those lines.
//! The gold answer of every such task is let through by llguidance under the very schema the
//! run sent; what the 1.5B wrote (an input pasted whole, the template with its placeholders, a
//! record of six lines) is not. Without the lever, or for a task with no such lines, nothing is
//! held.

#[path = "agent_support/mod.rs"]
mod support;

use std::path::PathBuf;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use serde_json::{json, Value};
use support::{line, Harness, PromptRecorder};

const ANSWER: &str = "out/answer.md";

/// The desk tasks whose prompt quotes their answer as "exactly N lines".
const TEMPLATED: [&str; 6] = [
    "search-budget-approval",
    "search-cert-expiry",
    "search-host-inventory",
    "search-hosting-renewal",
    "search-legacy-flag",
    "search-policy-clause",
];

fn task_dir(task: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../suites/desk")
        .join(task)
}

fn gold(task: &str) -> String {
    std::fs::read_to_string(task_dir(task).join("judge/gold/files/out/answer.md")).unwrap()
}

fn levers(answer_lines: bool) -> Levers {
    Levers {
        answer_lines,
        ..Levers::DEFAULT
    }
}

/// `tool`'s parameters schema in the first request of a constrained run of `h`'s mission; every
/// schema the run sent must be one llguidance builds.
fn offered(h: &Harness, levers: Levers, tool: &str) -> Value {
    support::first_offered_branches(h, levers)
        .into_iter()
        .find(|b| b["properties"]["action"]["const"] == tool)
        .map(|b| b["properties"]["parameters"].clone())
        .unwrap_or_else(|| panic!("{tool} is not offered"))
}

/// Whether llguidance lets `content` through, whole, as the JSON string of `schema`.
fn lets_through(schema: &Value, content: &str) -> bool {
    let text = serde_json::to_string(content).unwrap();
    let n =
        rein_llama::schema_accepted_len(&rein_llama::with_fixed_separators(schema), &text).unwrap();
    n == text.len()
}

fn quoted_template(task: &str) -> String {
    let mission: Value = serde_json::from_str(
        &std::fs::read_to_string(task_dir(task).join("mission.json")).unwrap(),
    )
    .unwrap();
    mission["prompt"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|l| l.contains(": <"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_templated_task_s_gold_answer_is_let_through_and_its_bare_template_is_not() {
    for task in TEMPLATED {
        let h = Harness::desk_suite(task);
        for tool in ["create_file", "replace_file"] {
            let params = offered(&h, levers(true), tool);
            assert_eq!(params["properties"]["path"]["const"], ANSWER, "{task}");
            let content = &params["properties"]["content"];
            assert!(content["pattern"].is_string(), "{task} {tool}: {content}");
            let gold = gold(task);
            assert!(lets_through(content, &gold), "{task}: {gold:?}");
            assert!(lets_through(content, gold.trim_end()), "{task}");
            let bare = quoted_template(task);
            assert_eq!(bare.lines().count(), gold.lines().count(), "{task}");
            assert!(!lets_through(content, &bare), "{task}: {bare:?}");
        }
    }
}

#[test]
fn what_the_1_5b_wrote_is_not_let_through() {
    let budget = offered(
        &Harness::desk_suite("search-budget-approval"),
        levers(true),
        "create_file",
    );
    let content = &budget["properties"]["content"];
    // The e-mail it had found, pasted whole (`ws-search/`, 5 December).
    let mail = std::fs::read_to_string(
        task_dir("search-budget-approval").join("fixtures/mail/17.eml.txt"),
    )
    .unwrap();
    assert!(!lets_through(content, &mail));
    let host = offered(
        &Harness::desk_suite("search-host-inventory"),
        levers(true),
        "create_file",
    );
    // Six lines of a host record for three.
    let record = "Host: app-01\nIP: 10.20.0.11\nOS: Debian 12\nRAM: 16 GB\nSoftware: python 3.11\nOwner: web";
    assert!(!lets_through(&host["properties"]["content"], record));
    assert!(lets_through(
        &host["properties"]["content"],
        "Host: app-01\nIP: 10.20.0.11\nRAM: 16 GB"
    ));
    // A filler blank; the string closed with a quote inside a line (`ws-search/`'s
    // search-hosting-renewal: `1,850 EUR per month."}}`, then 300 tokens of prose in the string).
    assert!(!lets_through(
        &host["properties"]["content"],
        "Host: app-01\nIP: 10.20.0.11\nRAM: 16 GB per host.\"}}"
    ));
    assert!(!lets_through(
        &host["properties"]["content"],
        "Host:  \nIP: 10.20.0.11\nRAM: 16 GB"
    ));
}

#[test]
fn a_heading_a_list_then_the_lines_holds_the_writers_and_lets_each_gold_through() {
    for (task, artifact) in [
        ("explore-archive-years", "out/archive.md"),
        ("explore-csv-rows", "out/tables.md"),
        ("explore-log-lines", "out/log_lines.md"),
        // Their lines quoted in the sentence that names the deliverable.
        ("explore-config-formats", "out/config-files.md"),
        ("related-code-callers", "out/callers.md"),
    ] {
        let h = Harness::desk_suite(task);
        for tool in ["create_file", "replace_file"] {
            let params = offered(&h, levers(true), tool);
            assert_eq!(params["properties"]["path"]["const"], artifact, "{task}");
            let content = &params["properties"]["content"];
            let gold =
                std::fs::read_to_string(task_dir(task).join("judge/gold/files").join(artifact))
                    .unwrap();
            assert!(lets_through(content, &gold), "{task}: {gold:?}");
            // Every shape the judge's gold variants spell (`./` paths, a full stop after an
            // answer line) is let through too.
            // An intro line of its own before the list (a variant of related-code-callers)
            // is not the task's shape: the template holds the model to the task's own.
            for variant in variants(task, artifact) {
                let own_intro = variant.contains("Files that call parseInvoice:");
                assert_eq!(
                    lets_through(content, &variant),
                    !own_intro,
                    "{task}: {variant:?}"
                );
            }
            // What the 1.5B wrote (`fs2-explore/`): the list, and no closing lines.
            let list_only: String = gold
                .lines()
                .take_while(|l| l.is_empty() || l.starts_with('#') || l.starts_with("- "))
                .collect::<Vec<_>>()
                .join("\n");
            assert!(!lets_through(content, &list_only), "{task}: {list_only:?}");
        }
    }
}

#[test]
fn without_the_lever_or_a_template_the_writers_are_free() {
    let off = offered(
        &Harness::desk_suite("search-cert-expiry"),
        levers(false),
        "create_file",
    );
    assert!(off["properties"]["content"].get("pattern").is_none());
    assert!(off["properties"]["path"].get("const").is_none());
    // explore-share-cleanup's lines belong to two sections the task names in quotes, with no
    // heading of the whole file: no template.
    let explore = offered(
        &Harness::desk_suite("explore-share-cleanup"),
        levers(true),
        "create_file",
    );
    assert!(explore["properties"]["content"].get("pattern").is_none());
    assert!(explore["properties"]["path"].get("const").is_none());
}

#[test]
fn the_judge_is_as_it_was_an_answer_in_the_template_s_shape_still_fails_on_its_values() {
    // The shape is held; the values are the model's and the judge's. (A scripted model is not
    // held by the schema: this run writes what the lever would have let through.)
    let h = Harness::desk_suite("search-cert-expiry");
    let script = line("read_file", json!({"path": "services/reviews.yaml"}))
        + &line(
            "create_file",
            json!({"path": ANSWER, "content": "Service: reviews\nOwner: kim@shop.example\nExpires: 2026-01-17\n"}),
        )
        + &line("read_file", json!({ "path": ANSWER }))
        + &support::finish_line();
    let mut model = PromptRecorder::new(&script, "answer_lines_judge.jsonl");
    let (out, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers(true);
        o.limits.attempts = 1;
    });
    assert!(!out.passed());
    assert!(out.reason().contains("service"), "{}", out.reason());
}

/// The deliverables of a task's gold variants.
fn variants(task: &str, artifact: &str) -> Vec<String> {
    let dir = task_dir(task).join("judge/gold_variants");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let file = entry.unwrap().path().join("files").join(artifact);
        out.push(std::fs::read_to_string(file).unwrap());
    }
    assert!(!out.is_empty(), "{task}");
    out
}

#[test]
fn a_heading_and_its_lines_take_the_place_of_write_sections() {
    // explore-project-tree: a heading the contract requires, then four quoted lines; the 1.5B
    // wrote prose in write_sections' one field (`fs2-explore/`).
    let h = Harness::desk_suite("explore-project-tree");
    let with = Levers {
        answer_lines: true,
        write_sections: true,
        rewrite_section: true,
        ..Levers::DEFAULT
    };
    let branches = support::first_offered_branches(&h, with);
    let tools: Vec<&str> = branches
        .iter()
        .filter_map(|b| b["properties"]["action"]["const"].as_str())
        .collect();
    assert!(!tools.contains(&"write_sections"), "{tools:?}");
    assert!(!tools.contains(&"rewrite_section"), "{tools:?}");
    let content = &offered(&h, with, "create_file")["properties"]["content"];
    let gold = std::fs::read_to_string(
        task_dir("explore-project-tree").join("judge/gold/files/out/tree.md"),
    )
    .unwrap();
    assert!(lets_through(content, &gold), "{gold:?}");
    assert!(!lets_through(
        content,
        "# Project tree\nA small HTTP API.\n"
    ));
    // The judge also takes the lines as list items with units (a gold variant); the template
    // holds the model to the task's own shape, which the judge takes too.
    for variant in variants("explore-project-tree", "out/tree.md") {
        let list_items = variant.contains("\n- ");
        assert_eq!(lets_through(content, &variant), !list_items, "{variant:?}");
    }
    // Without answer-lines, write_sections is offered as before.
    let without = Levers {
        answer_lines: false,
        ..with
    };
    let branches = support::first_offered_branches(&h, without);
    assert!(branches
        .iter()
        .any(|b| b["properties"]["action"]["const"] == "write_sections"));
}

#[test]
fn a_control_character_fills_no_line_and_no_list_item() {
    // The 1.5B filled related-code-callers' template with `\u0000` escapes, one token each,
    // until the reply cap, 19 times in one run (`fs6/`): the classes refused `<`, `>`, `"`,
    // `\` and blanks, not control characters.
    let h = Harness::desk_suite("related-code-callers");
    let content = &offered(&h, levers(true), "create_file")["properties"]["content"];
    let gold = std::fs::read_to_string(
        task_dir("related-code-callers").join("judge/gold/files/out/callers.md"),
    )
    .unwrap();
    assert!(lets_through(content, &gold), "{gold:?}");
    for bad in ["\u{0}", "\u{7}", "\u{1b}[31m", "\u{7f}"] {
        let in_line = gold.replace("src/invoice/parse.js", &format!("src/{bad}parse.js"));
        assert!(!lets_through(content, &in_line), "{in_line:?}");
        let in_item = gold.replace("- test/parse.test.js", &format!("- {bad}"));
        assert!(!lets_through(content, &in_item), "{in_item:?}");
    }
    // A tab inside a line is refused too; a space is not.
    let tabbed = gold.replace("Callers: 4", "Callers:\t4");
    assert!(!lets_through(content, &tabbed));
    assert!(lets_through(
        content,
        &gold.replace("Callers: 4", "Callers: 4 files")
    ));
}
