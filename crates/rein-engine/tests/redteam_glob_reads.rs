#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of lever `glob-reads` (commit c772f41): a `read_file` call whose only key is `path`
//! and whose path is a glob or a folder runs as `find_files`, and Rein then reads each listed
//! file whole, each through the gate as a call of its own, up to 24 files and 6,000 characters,
//! naming the files it left. Each attack tries to get a file policy keeps (or one outside the
//! workspace, or one the model never named) into the prompt, to get the judge to credit a read
//! the model was not shown whole, to make the note or the journal say something untrue, to break
//! the caps, or to dodge the no-progress cap. Every attack is kept: a test asserts what should
//! hold, so the ones that fail name a hole.

#[path = "agent_support/mod.rs"]
mod support;

use std::collections::HashSet;
use std::path::Path;

use rein_engine::agent::{
    AgentOptions, CapHit, RunEnd, MAX_RESULT_CHARS, MAX_STEPS_WITHOUT_PROGRESS,
};
use rein_engine::gate::AllowAll;
use rein_engine::memory::{run_memory, MemoryRunEnv};
use rein_engine::mission::Mission;
use rein_engine::policy::Policy;
use rein_journal::{CallScope, Journal};
use rein_models::{Model, ScriptedModel};
use rein_protocol::ToolCall;
use serde_json::{json, Value};
use support::{
    check_facts, desk_policy, drop_tools, finish_line, finish_refusals, gold_text, line,
    read_summary, write_summary, Harness, Ran, RecordingApprover,
};

const NOTES: &str = "notes/meeting-notes.md";
const OVERVIEW: &str = "notes/overview.md";
const TASKS: &str = "data/tasks.csv";
/// A line of the meeting notes as a read's result shows it.
const NOTES_LINE: &str = "Next meeting: 26 May.";
/// A line of the overview as a read's result shows it.
const OVERVIEW_LINE: &str = "Launch target: 30 June";
/// How Rein labels each of its reads for a glob.
const REIN_READ: &str = "Result of Rein's read of ";
/// Most characters Rein's reads for one glob take in the prompt (`GLOB_READS_MAX_CHARS`,
/// which is one read's shown result).
const GLOB_CHARS: usize = MAX_RESULT_CHARS;

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

/// desk_task with `first` as the model's first call (its glob), the table read, then the gold
/// report written, read back and finished.
fn script(first: Value) -> String {
    line("read_file", first)
        + &line("read_file", json!({"path": TASKS}))
        + &write_summary(&gold_text())
        + &read_summary()
        + &finish_line()
}

fn glob_reads(on: bool) -> impl FnOnce(&mut AgentOptions) {
    move |o: &mut AgentOptions| {
        o.levers.glob_reads = on;
        o.limits.attempts = 1;
    }
}

fn run(h: Harness, script: &str, on: bool, policy: Policy) -> Ran {
    Ran::of(h, script, &mut AllowAll, policy, glob_reads(on))
}

/// desk_task with extra files written straight into its workspace (no inputs).
fn with_files(files: &[(&str, &[u8])]) -> Harness {
    let h = Harness::new("desk_task");
    add_files(&h, files);
    h
}

fn add_files(h: &Harness, files: &[(&str, &[u8])]) {
    for (p, bytes) in files {
        let f = h.workspace.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, bytes).unwrap();
    }
}

/// Every prompt of the run, as one text.
fn all_prompts(r: &Ran) -> String {
    r.model.prompts().join("\n")
}

/// The message of step `n` in request `n` (the request right after it): the find_files
/// result with its note, then Rein's reads, up to the progress note.
fn glob_step(r: &Ran, n: usize) -> String {
    r.shown_result(n, n, "find_files")
}

/// The paths Rein read for the model's globs, from the journal, in order.
fn rein_glob_reads(r: &Ran) -> Vec<String> {
    r.rein_reads("glob-reads")
        .into_iter()
        .map(|(path, _)| path)
        .collect()
}

/// The number N of "N shown whole" in a glob's note (the note's wording since the mend; it
/// said "Rein read N of them whole" before the reads ran).
fn claimed_whole(message: &str) -> Option<usize> {
    let at = message.find(" shown whole.")?;
    message[..at].split_whitespace().last()?.parse().ok()
}

/// Each of Rein's reads in a glob step's message: (path, outcome, the result shown, if any).
fn rein_results(message: &str) -> Vec<(String, String, Value)> {
    message
        .split(REIN_READ)
        .skip(1)
        .map(|part| {
            let (path, rest) = part
                .split_once(" (read_file, for your glob): ")
                .unwrap_or((part, ""));
            let outcome = rest
                .split(|c: char| c.is_whitespace())
                .next()
                .unwrap_or_default()
                .to_string();
            let result = rest
                .find('{')
                .and_then(|start| {
                    serde_json::Deserializer::from_str(&rest[start..])
                        .into_iter::<Value>()
                        .next()
                        .and_then(Result::ok)
                })
                .unwrap_or(Value::Null);
            (path.to_string(), outcome, result)
        })
        .collect()
}

/// Whether a read's shown result is the whole text of a file.
fn shown_whole(outcome: &str, result: &Value) -> bool {
    outcome == "executed"
        && result["truncated"] == json!(false)
        && result.get("binary").is_none()
        && result["content"].is_string()
}

/// The characters Rein's reads take in a glob step's message, labels included (up to the note
/// that follows them).
fn reads_chars(message: &str) -> usize {
    let end = message.find("\nYour glob listed").unwrap_or(message.len());
    message[..end]
        .find(&format!("\n{REIN_READ}"))
        .map_or(0, |at| message[at..end].trim_end().chars().count())
}

/// `h`'s mission replaying `script` through the real gate under `policy`, `meddle` called
/// before each call reaches it; glob-reads on, one attempt, then `tweak`.
fn run_meddled(
    h: Harness,
    script: &str,
    policy: Policy,
    meddle: impl FnMut(&ToolCall),
    tweak: impl FnOnce(&mut AgentOptions),
) -> Ran {
    Ran::meddled(h, script, policy, meddle, |o| {
        glob_reads(true)(o);
        tweak(o);
    })
}

fn no_progress() -> RunEnd {
    RunEnd::Cap {
        hit: CapHit::NoProgress {
            limit: MAX_STEPS_WITHOUT_PROGRESS,
        },
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Policy: what policy keeps or asks about never reaches the prompt through a glob
// ---------------------------------------------------------------------------------------------

#[test]
fn a_kept_file_never_reaches_the_prompt_whatever_the_rule_or_glob_spelling() {
    let policies = [
        // Letter case: a deny rule ignores it.
        "[[rule]]\ntool = \"read_file\"\npaths = [\"NOTES/Meeting-Notes.MD\"]\naction = \"deny\"\n",
        // A `./` spelling in the rule.
        "[[rule]]\ntool = \"read_file\"\npaths = [\"./notes/meeting-notes.md\"]\naction = \"ask\"\n",
        // A glob in the rule.
        "[[rule]]\ntool = \"read_file\"\npaths = [\"notes/*-notes.md\"]\naction = \"deny\"\n",
        // Every tool: the name is hidden from the listing too.
        "[[rule]]\ntool = \"*\"\npaths = [\"notes/meeting-notes.md\"]\naction = \"deny\"\n",
        // A listing rule: find_files hides the name, so Rein never sees it to read.
        "[[rule]]\ntool = \"list_dir\"\npaths = [\"notes/meeting-notes.md\"]\naction = \"deny\"\n",
        // The folder itself, for reading.
        "[[rule]]\ntool = \"read_file\"\npaths = [\"Notes/\"]\naction = \"ask\"\n",
    ];
    for policy in policies {
        for asked in ["notes/*.md", "./notes//", "notes", "**/*", "*", "./*/*.md"] {
            let mut approver = RecordingApprover::default();
            let r = Ran::of(
                Harness::new("desk_task"),
                &script(json!({ "path": asked })),
                &mut approver,
                desk_policy(policy),
                glob_reads(true),
            );
            let prompts = all_prompts(&r);
            assert!(
                !prompts.contains(NOTES_LINE),
                "{policy} / {asked}: the kept notes reached the prompt"
            );
            if !policy.contains("Notes/") {
                // The lever ran: the overview, which no rule keeps, was read for the glob.
                assert!(
                    prompts.contains(OVERVIEW_LINE),
                    "{policy} / {asked}: the overview was not read"
                );
            }
            assert!(
                !rein_glob_reads(&r).iter().any(|p| p == NOTES),
                "{policy} / {asked}: Rein read the kept notes: {:?}",
                rein_glob_reads(&r)
            );
            assert!(
                !approver.asked.iter().any(|(t, _)| t == "read_file"),
                "{policy} / {asked}: Rein asked a person about a read: {:?}",
                approver.asked
            );
            let (passed, facts) = check_facts(&r.out, "inputs-read");
            assert!(!passed, "{policy} / {asked}: {facts}");
            assert!(
                facts.contains(&format!("{NOTES}: never read")),
                "{policy} / {asked}: {facts}"
            );
        }
    }
}

#[test]
fn an_allow_list_policy_lets_rein_read_only_what_it_allows() {
    // Everything denied but listing and reading the overview: a glob over the whole workspace
    // lists every file, and Rein reads the overview alone, asking nobody.
    let policy = "[[rule]]\ntool = \"*\"\naction = \"deny\"\n\n\
                  [[rule]]\ntool = \"find_files\"\naction = \"allow\"\n\n\
                  [[rule]]\ntool = \"read_file\"\npaths = [\"notes/overview.md\"]\naction = \"allow\"\n";
    for asked in ["**/*", "*", "notes", "data/*.csv"] {
        let mut approver = RecordingApprover::default();
        let r = Ran::of(
            Harness::new("desk_task"),
            &(line("read_file", json!({ "path": asked })) + &finish_line()),
            &mut approver,
            desk_policy(policy),
            glob_reads(true),
        );
        let read = rein_glob_reads(&r);
        let expect: Vec<String> = if asked == "data/*.csv" {
            Vec::new()
        } else {
            vec![OVERVIEW.to_string()]
        };
        assert_eq!(read, expect, "{asked}");
        let prompts = all_prompts(&r);
        assert!(!prompts.contains(NOTES_LINE), "{asked}");
        assert!(!prompts.contains("Release checklist,Maya"), "{asked}");
        assert!(approver.asked.is_empty(), "{asked}: {:?}", approver.asked);
    }
}

#[test]
fn a_denied_find_files_reads_nothing() {
    for (policy, denied) in [
        ("[[rule]]\ntool = \"find_files\"\naction = \"deny\"\n", true),
        (
            "[[rule]]\ntool = \"find_files\"\npaths = [\"notes\"]\naction = \"deny\"\n",
            true,
        ),
        // The listing runs and hides every name under notes/.
        (
            "[[rule]]\ntool = \"list_dir\"\npaths = [\"notes/**\"]\naction = \"deny\"\n",
            false,
        ),
    ] {
        for asked in ["notes/*.md", "notes"] {
            let r = run(
                Harness::new("desk_task"),
                &script(json!({ "path": asked })),
                true,
                desk_policy(policy),
            );
            if denied {
                assert_eq!(
                    support::outcomes(&r.events)[0].1,
                    "denied",
                    "{policy} / {asked}"
                );
            }
            assert!(rein_glob_reads(&r).is_empty(), "{policy} / {asked}");
            assert!(!all_prompts(&r).contains(NOTES_LINE), "{policy} / {asked}");
            assert!(
                !all_prompts(&r).contains(OVERVIEW_LINE),
                "{policy} / {asked}"
            );
        }
    }
}

#[test]
fn a_glob_s_line_range_is_dropped_and_said_so() {
    // Changed on purpose (fifteenth session): the 1.5B's first glob on explore-csv-rows came
    // with start_line 1 and end_line 24 and was refused as a path. A valid range is now dropped
    // from a glob or a folder, the step's reason says so, and each file is still read whole
    // under the same caps, so the range cannot widen what the lever would read without it.
    for params in [
        json!({"path": "notes/*.md", "start_line": 1, "end_line": 2}),
        json!({"path": "notes", "end_line": 1}),
    ] {
        let with_range = run(
            Harness::new("desk_task"),
            &script(params.clone()),
            true,
            Policy::safe_default(),
        );
        let plain = run(
            Harness::new("desk_task"),
            &script(json!({"path": params["path"]})),
            true,
            Policy::safe_default(),
        );
        let shown = glob_step(&with_range, 1);
        assert!(
            shown.contains(" dropped: Rein reads each listed file whole"),
            "{shown}"
        );
        assert!(
            shown.contains(NOTES_LINE) && shown.contains(OVERVIEW_LINE),
            "{shown}"
        );
        assert_eq!(
            rein_glob_reads(&with_range),
            rein_glob_reads(&plain),
            "{params}"
        );
        assert!(with_range.out.passed(), "{}", with_range.out.reason());
        // The journal keeps the model's call as it was made, range and all.
        let first = with_range
            .h
            .journal
            .run_trace(with_range.out.run)
            .unwrap()
            .steps;
        let asked = first
            .iter()
            .find(|t| t.step.detail["by"] != "rein" && t.step.action.is_some())
            .unwrap();
        assert_eq!(asked.step.detail["parameters"], params);
    }
}

#[test]
fn a_refused_glob_tells_the_model_its_read_file_ran_as_find_files() {
    // Was a hole, mended: the step's reason says what the call ran as, whether or not the listing ran.
    // The model called read_file; a policy that keeps find_files refuses the call it became.
    // The note that says so is added only when the listing ran, so the model reads "Result of
    // step 1 (find_files): denied - policy denies find_files" for a tool it never called, with
    // nothing naming its own path or what its call became.
    let r = run(
        Harness::new("desk_task"),
        &script(json!({"path": "notes/*.md"})),
        true,
        desk_policy("[[rule]]\ntool = \"find_files\"\naction = \"deny\"\n"),
    );
    let shown = glob_step(&r, 1);
    assert!(
        shown.contains("notes/*.md") && shown.contains("ran as find_files"),
        "the model is not told what became of its read_file call: {shown}"
    );
}

// ---------------------------------------------------------------------------------------------
// 2. Files the model never named: hidden, ignored, links, escapes
// ---------------------------------------------------------------------------------------------

#[test]
fn a_gitignored_file_in_the_folder_is_neither_listed_nor_read() {
    let h = || {
        with_files(&[
            ("config/.gitignore", b"local.md\n"),
            ("config/local.md", b"IGNORED-TEXT-4411\n"),
            ("config/app.md", b"APP-TEXT-7788\n"),
        ])
    };
    for asked in ["config", "config/*", "config/*.md", "**/*.md"] {
        let r = run(
            h(),
            &script(json!({ "path": asked })),
            true,
            Policy::safe_default(),
        );
        let prompts = all_prompts(&r);
        assert!(!prompts.contains("IGNORED-TEXT-4411"), "{asked}");
        assert!(
            !rein_glob_reads(&r).iter().any(|p| p.ends_with("local.md")),
            "{asked}"
        );
        assert!(
            prompts.contains("APP-TEXT-7788"),
            "{asked}: app.md not read"
        );
    }
}

#[test]
fn a_hidden_dotfile_is_not_read_for_a_folder_or_a_plain_star() {
    // Was a hole, mended: a dot file is read only when the glob names a dot; it is named as left otherwise.
    // A folder read or a `*` reads `.env` as well: globset's `*` matches a leading dot, where a
    // shell's (and `ls`) leaves dotfiles out. A secret the model never named goes into the
    // prompt and, as Rein's read's recorded result, into the journal.
    let h = || {
        with_files(&[
            ("config/.env", b"API_TOKEN=SECRET-TOKEN-9931\n"),
            ("config/app.md", b"APP-TEXT-7788\n"),
        ])
    };
    for asked in ["config", "config/", "config/*", "*"] {
        let r = run(
            h(),
            &script(json!({ "path": asked })),
            true,
            Policy::safe_default(),
        );
        assert!(
            all_prompts(&r).contains("APP-TEXT-7788"),
            "{asked}: the set-up reads app.md"
        );
        assert!(
            !all_prompts(&r).contains("SECRET-TOKEN-9931"),
            "{asked}: Rein read config/.env for a glob that names no dotfile: {:?}",
            rein_glob_reads(&r)
        );
    }
}

#[test]
fn links_in_the_folder_are_never_followed() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "OUTSIDE-SECRET-5150\n").unwrap();
    let make = || {
        let h = Harness::new("desk_task");
        std::os::unix::fs::symlink(
            outside.path().join("secret.md"),
            h.workspace.join("notes/link.md"),
        )
        .unwrap();
        std::os::unix::fs::symlink(outside.path(), h.workspace.join("notes/up")).unwrap();
        h
    };
    for asked in [
        "notes/*",
        "notes/**",
        "notes/*.md",
        "**/*",
        "notes/up/*",
        "notes/link.md/*",
    ] {
        let r = run(
            make(),
            &script(json!({ "path": asked })),
            true,
            Policy::safe_default(),
        );
        assert!(!all_prompts(&r).contains("OUTSIDE-SECRET-5150"), "{asked}");
        assert!(
            !rein_glob_reads(&r)
                .iter()
                .any(|p| p.contains("link") || p.starts_with("notes/up")),
            "{asked}: {:?}",
            rein_glob_reads(&r)
        );
    }
}

#[test]
fn a_folder_read_works_in_a_workspace_that_holds_a_link() {
    // Was a hole, mended: a folder is told by its own metadata, not by a walk of the workspace.
    // The folder spelling is confirmed with `World::files`, which refuses a workspace holding
    // any link at all ("the workspace holds 1 link(s)"). One link anywhere and `read_file
    // notes` is answered "is a folder, not a file", though the system prompt says read_file
    // takes a folder (and `notes/*` still runs as find_files in the same workspace).
    let outside = tempfile::tempdir().unwrap();
    let h = Harness::new("desk_task");
    std::fs::create_dir_all(h.workspace.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(outside.path(), h.workspace.join("elsewhere/up")).unwrap();
    let r = run(
        h,
        &script(json!({"path": "notes"})),
        true,
        Policy::safe_default(),
    );
    let second = r.model.prompt(1);
    assert!(
        second.contains("Result of step 1 (find_files)") && second.contains(NOTES_LINE),
        "the folder read was not run as find_files: {}",
        r.shown_result(1, 1, "read_file")
    );
}

#[test]
fn escapes_absolute_and_odd_paths_are_answered_as_without_the_lever() {
    for asked in [
        "../*",
        "../",
        "..",
        "./..",
        "notes/../../*",
        "notes/*/..",
        "notes/../*",
        "/etc/*",
        "/etc",
        "/",
        "notes\\*.md",
        ".",
        "./",
        "",
    ] {
        let s = line("read_file", json!({ "path": asked })) + &finish_line();
        let off = run(Harness::new("desk_task"), &s, false, Policy::safe_default());
        let on = run(Harness::new("desk_task"), &s, true, Policy::safe_default());
        let shown = on.shown_result(1, 1, "read_file");
        assert_eq!(off.shown_result(1, 1, "read_file"), shown, "{asked}");
        assert!(rein_glob_reads(&on).is_empty(), "{asked}");
    }
    // Other keys, a line range that read_file would refuse, or a path that is no string: left
    // as they are. (A valid line range is dropped since the fifteenth session: see
    // `a_glob_s_line_range_is_dropped_and_said_so`.)
    for params in [
        json!({"path": "notes/*.md", "start_line": 0}),
        json!({"path": "notes", "end_line": "3"}),
        json!({"path": "notes/*.md", "start_line": 1, "limit": 5}),
        json!({"path": ["notes/*.md"]}),
        json!({"paths": "notes/*.md"}),
    ] {
        let s = line("read_file", params.clone()) + &finish_line();
        let off = run(Harness::new("desk_task"), &s, false, Policy::safe_default());
        let on = run(Harness::new("desk_task"), &s, true, Policy::safe_default());
        assert_eq!(
            off.shown_result(1, 1, "read_file"),
            on.shown_result(1, 1, "read_file"),
            "{params}"
        );
        assert!(rein_glob_reads(&on).is_empty(), "{params}");
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Glob forms
// ---------------------------------------------------------------------------------------------

#[test]
fn classes_and_double_stars_read_what_they_match() {
    for (asked, expect) in [
        ("notes/[mo]*.md", vec![NOTES, OVERVIEW]),
        ("notes/?verview.md", vec![OVERVIEW]),
        ("**/*.md", vec![NOTES, OVERVIEW]),
        ("[nd]*/*", vec![TASKS, NOTES, OVERVIEW]),
        ("data/*.csv", vec![TASKS]),
    ] {
        let r = run(
            Harness::new("desk_task"),
            &(line("read_file", json!({ "path": asked })) + &finish_line()),
            true,
            Policy::safe_default(),
        );
        let mut read = rein_glob_reads(&r);
        read.sort();
        let mut expect: Vec<String> = expect.iter().map(|s| s.to_string()).collect();
        expect.sort();
        assert_eq!(read, expect, "{asked}: {}", glob_step(&r, 1));
    }
}

#[test]
fn a_brace_glob_over_folders_reads_their_files() {
    // Was a hole, mended: the folder walked stops at the first part holding any wildcard, `{` and `[` too.
    // `glob_path` takes the parts before the first `*` or `?` as the folder to walk, so
    // `{notes,data}/*` walks a folder named "{notes,data}", which does not exist: find_files is
    // refused ("not found") although its own glob (globset) matches both folders' files.
    let r = run(
        Harness::new("desk_task"),
        &(line("read_file", json!({"path": "{notes,data}/*"})) + &finish_line()),
        true,
        Policy::safe_default(),
    );
    let mut read = rein_glob_reads(&r);
    read.sort();
    assert_eq!(
        read,
        vec![TASKS.to_string(), NOTES.to_string(), OVERVIEW.to_string()],
        "{}",
        glob_step(&r, 1)
    );
}

// ---------------------------------------------------------------------------------------------
// 4. The deliverable's own folder
// ---------------------------------------------------------------------------------------------

#[test]
fn the_deliverable_read_by_a_folder_glob_counts_as_read_back_only_when_shown_whole() {
    // Read back through `out`: Rein shows the report whole, so finish is accepted.
    let s = line("read_file", json!({"path": "notes"}))
        + &line("read_file", json!({"path": TASKS}))
        + &write_summary(&gold_text())
        + &line("read_file", json!({"path": "out"}))
        + &finish_line();
    let r = run(Harness::new("desk_task"), &s, true, Policy::safe_default());
    assert!(r.out.passed(), "{}", r.out.reason());
    assert!(rein_glob_reads(&r).iter().any(|p| p == "out/summary.md"));
    assert!(glob_step(&r, 4).contains("# Project summary"));

    // A report too long to be read with the glob is named, not read: finish asks for a read.
    let long = gold_text() + "\n" + &"More words about the project here. ".repeat(220);
    let s = line("read_file", json!({"path": "notes"}))
        + &line("read_file", json!({"path": TASKS}))
        + &write_summary(&long)
        + &line("read_file", json!({"path": "out/"}))
        + &finish_line();
    let r = run(Harness::new("desk_task"), &s, true, Policy::safe_default());
    assert!(!rein_glob_reads(&r).iter().any(|p| p == "out/summary.md"));
    assert!(
        glob_step(&r, 4).contains("out/summary.md (too long to be read with the others)"),
        "{}",
        glob_step(&r, 4)
    );
    let refusals = finish_refusals(&r.events);
    assert!(
        refusals
            .iter()
            .any(|f| f.contains("re-read the output first")),
        "{refusals:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// 5. The note and the judge: "read whole" only for what was shown whole
// ---------------------------------------------------------------------------------------------

/// Asserts that the note's count of files read whole is the count of Rein's reads the model
/// was shown whole, and that every read it made is listed.
fn note_matches_reads(label: &str, message: &str) -> Result<(), String> {
    let claimed = claimed_whole(message).ok_or(format!("{label}: no count in {message}"))?;
    let results = rein_results(message);
    let whole = results.iter().filter(|(_, o, r)| shown_whole(o, r)).count();
    if claimed != whole {
        return Err(format!(
            "{label}: the note says Rein read {claimed} whole, {whole} of its {} reads were shown whole: {message}",
            results.len()
        ));
    }
    Ok(())
}

#[test]
fn the_whole_read_note_holds_when_table_facts_come_first() {
    // One CSV whose escaped text fits the glob's 6,000 characters by itself, but not with the
    // column totals lever `table-facts` puts ahead of it: the plan counts the text and a
    // 200-character frame, the read's result carries the totals too and is cut by
    // `fit_read_result`, and the note says "Rein read 1 of them whole".
    let mut csv = String::from("label,a,b,c\n");
    let path = "tables/t.csv";
    while serde_json::to_string(&(csv.clone() + "r0000,1,2,3\n"))
        .unwrap()
        .chars()
        .count()
        + path.len()
        + 200
        <= GLOB_CHARS
    {
        let n = csv.lines().count();
        csv.push_str(&format!("r{n:04},1,2,3\n"));
    }
    let h = with_files(&[(path, csv.as_bytes())]);
    let r = Ran::of(
        h,
        &(line("read_file", json!({"path": "tables"})) + &finish_line()),
        &mut AllowAll,
        Policy::safe_default(),
        |o| {
            o.levers.glob_reads = true;
            o.levers.table_facts = true;
            o.limits.attempts = 1;
        },
    );
    let message = glob_step(&r, 1);
    // Was a hole, mended: the look now counts the totals, so the table is left and named,
    // and the note counts what was shown whole.
    assert!(rein_glob_reads(&r).is_empty(), "{message}");
    assert!(
        message.contains(&format!("{path} (over the characters read for one call)")),
        "{message}"
    );
    note_matches_reads("table facts", &message).unwrap();
}

#[test]
fn the_whole_read_note_holds_when_a_file_changes_after_the_look() {
    // Was a hole, mended: the note is now written after the reads and counts the reads shown whole.
    // The note is worded from Rein's look before the reads, not from the reads that ran: a file
    // that grows, turns binary or goes between the look and its read gets "Rein read 2 of them
    // whole" beside a result that is cut, binary, or a refusal.
    let cases: [(&str, Option<Vec<u8>>); 3] = [
        (
            "grown",
            Some("- a line of filler text\n".repeat(800).into_bytes()),
        ),
        ("binary", Some(b"\x00\x01\x02 not text\n".to_vec())),
        ("gone", None),
    ];
    let mut wrong = Vec::new();
    for (name, during) in cases {
        let h = with_files(&[("docs/a.md", b"alpha\n"), ("docs/b.md", b"beta\n")]);
        let target = h.workspace.join("docs/a.md");
        let mut done = false;
        let r = run_meddled(
            h,
            &(line("read_file", json!({"path": "docs"})) + &finish_line()),
            Policy::safe_default(),
            |call| {
                if !done && call.tool == "read_file" && call.id.contains("rein-glob") {
                    done = true;
                    match &during {
                        Some(bytes) => std::fs::write(&target, bytes).unwrap(),
                        None => std::fs::remove_file(&target).unwrap(),
                    }
                }
            },
            |_| {},
        );
        assert!(done, "{name}: Rein made no read");
        if let Err(e) = note_matches_reads(name, &glob_step(&r, 1)) {
            wrong.push(e);
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n---\n"));
}

#[test]
fn a_file_swapped_for_a_link_after_the_look_is_not_read() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.md");
    std::fs::write(&secret, "OUTSIDE-SECRET-6262\n").unwrap();
    let h = with_files(&[("docs/a.md", b"alpha\n"), ("docs/b.md", b"beta\n")]);
    let target = h.workspace.join("docs/a.md");
    let mut done = false;
    let r = run_meddled(
        h,
        &(line("read_file", json!({"path": "docs/*.md"})) + &finish_line()),
        Policy::safe_default(),
        |call| {
            if !done && call.tool == "read_file" && call.id.contains("rein-glob") {
                done = true;
                std::fs::remove_file(&target).unwrap();
                std::os::unix::fs::symlink(&secret, &target).unwrap();
            }
        },
        |_| {},
    );
    assert!(done);
    assert!(!all_prompts(&r).contains("OUTSIDE-SECRET-6262"));
    let results = rein_results(&glob_step(&r, 1));
    let a = results.iter().find(|(p, _, _)| p == "docs/a.md").unwrap();
    assert_ne!(a.1, "executed", "{a:?}");
}

#[test]
fn an_input_grown_before_reins_read_is_not_credited_as_read_whole() {
    // The meeting notes grow past what a read shows after Rein looked at them and before its
    // read, and are put back at the model's next call: the read is cut, and the judge must not
    // count them read in full.
    let h = Harness::new("desk_task");
    let file = h.workspace.join(NOTES);
    let original = std::fs::read(&file).unwrap();
    let mut grown = original.clone();
    for i in 0..400 {
        grown.extend(format!("- Action item {i:03}: follow up with the team next week.\n").bytes());
    }
    let mut state = 0;
    let r = run_meddled(
        h,
        &script(json!({"path": "notes/*.md"})),
        Policy::safe_default(),
        |call| {
            if state == 0 && call.tool == "read_file" && call.arguments["path"] == NOTES {
                state = 1;
                std::fs::write(&file, &grown).unwrap();
            } else if state == 1 && !call.id.contains("rein-glob") {
                state = 2;
                std::fs::write(&file, &original).unwrap();
            }
        },
        |_| {},
    );
    assert_eq!(state, 2);
    let (passed, facts) = check_facts(&r.out, "inputs-read");
    assert!(!passed, "{facts}");
    assert!(
        facts.contains(&format!("{NOTES}: read only in part")),
        "{facts}"
    );
}

// ---------------------------------------------------------------------------------------------
// 6. Caps
// ---------------------------------------------------------------------------------------------

#[test]
fn a_file_exactly_at_the_character_cap_is_read_whole_and_one_more_is_left() {
    // Cost = escaped text + the path twice + 250 (since the mend of the long-names hole);
    // "a" * k escapes to k + 2.
    let path_len = "edge/a/exact.md".len();
    let k = GLOB_CHARS - 250 - 2 * path_len - 2;
    let exact = "a".repeat(k);
    let over = "a".repeat(k + 1);
    let h = with_files(&[
        ("edge/a/exact.md", exact.as_bytes()),
        ("edge/b/exact.md", over.as_bytes()),
    ]);
    let s = line("read_file", json!({"path": "edge/a"}))
        + &line("read_file", json!({"path": "edge/b/*"}))
        + &finish_line();
    let r = run(h, &s, true, Policy::safe_default());
    let first = glob_step(&r, 1);
    assert!(first.contains("Rein read 1 of them"), "{first}");
    let results = rein_results(&first);
    assert_eq!(results.len(), 1, "{first}");
    assert!(shown_whole(&results[0].1, &results[0].2), "{first}");
    assert_eq!(results[0].2["content"], json!(exact));
    let second = glob_step(&r, 2);
    assert!(second.contains("Rein read 0 of them"), "{second}");
    assert!(
        second.contains("edge/b/exact.md (over the characters read for one call)"),
        "{second}"
    );
    assert!(rein_results(&second).is_empty(), "{second}");
}

#[test]
fn long_file_names_keep_the_reads_within_the_character_cap() {
    // Was a hole, mended: the look counts the path twice and a 250-character frame, and the characters of each read as shown count before the next.
    // The plan counts each file's path once and 200 characters for "its label, keys and line
    // numbers"; the model reads the path twice (in the label and in the result) and the frame
    // is near 145 characters. With 108-character paths the reads of one glob take more than
    // the 6,000 characters the note and the system prompt promise.
    let names: Vec<String> = (0..24)
        .map(|i| format!("long/{i:02}-{}.md", "n".repeat(100)))
        .collect();
    let bodies: Vec<String> = (0..24).map(|i| format!("note {i}\n")).collect();
    let files: Vec<(&str, &[u8])> = names
        .iter()
        .zip(&bodies)
        .map(|(n, b)| (n.as_str(), b.as_bytes()))
        .collect();
    let r = run(
        with_files(&files),
        &(line("read_file", json!({"path": "long"})) + &finish_line()),
        true,
        Policy::safe_default(),
    );
    let message = glob_step(&r, 1);
    assert!(!rein_glob_reads(&r).is_empty());
    let chars = reads_chars(&message);
    assert!(
        chars <= GLOB_CHARS,
        "Rein's {} reads take {chars} characters of the prompt, over the cap of {GLOB_CHARS}",
        rein_glob_reads(&r).len()
    );
}

#[test]
fn table_facts_keep_the_reads_within_the_character_cap() {
    // Was a hole, mended: the look counts the column totals `table-facts` adds.
    // Lever `table-facts` puts column totals (and a 230-character note) ahead of every CSV
    // read; the plan never counts them, so 24 small tables read for one glob take over twice
    // the 6,000 characters.
    let names: Vec<String> = (0..24).map(|i| format!("tables/t{i:02}.csv")).collect();
    let csv = "a,b,c,d,e,f\n1,2,3,4,5,6\n";
    let files: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), csv.as_bytes())).collect();
    let r = Ran::of(
        with_files(&files),
        &(line("read_file", json!({"path": "tables/*.csv"})) + &finish_line()),
        &mut AllowAll,
        Policy::safe_default(),
        |o| {
            o.levers.glob_reads = true;
            o.levers.table_facts = true;
            o.limits.attempts = 1;
        },
    );
    let message = glob_step(&r, 1);
    assert!(!rein_glob_reads(&r).is_empty());
    let chars = reads_chars(&message);
    assert!(
        chars <= GLOB_CHARS,
        "Rein's {} reads take {chars} characters of the prompt, over the cap of {GLOB_CHARS}",
        rein_glob_reads(&r).len()
    );
}

#[test]
fn a_listing_cut_at_the_find_files_cap_says_so() {
    let names: Vec<String> = (0..230).map(|i| format!("heap/f{i:03}.md")).collect();
    let files: Vec<(&str, &[u8])> = names
        .iter()
        .map(|n| (n.as_str(), b"x\n" as &[u8]))
        .collect();
    let r = run(
        with_files(&files),
        &(line("read_file", json!({"path": "heap/*.md"})) + &finish_line()),
        true,
        Policy::safe_default(),
    );
    let message = glob_step(&r, 1);
    assert!(message.contains("(its list was cut)"), "{message}");
    assert!(rein_glob_reads(&r).len() <= 24);
    assert!(message.contains("Not read ("), "{message}");
}

#[test]
fn every_file_left_is_counted_and_those_not_named_are_said_to_be() {
    // Was a hole ("each file left named" was promised): the note names twelve and says "and N
    // more"; the rest are named only by the listing, which the prompt clips at 6,000
    // characters, so with 150 files of 45-character paths the last ones are named nowhere the
    // model can read. Mended by the promise: every file left is counted, the first twelve are
    // named, and the note says where the others are listed.
    let names: Vec<String> = (0..150)
        .map(|i| format!("many/{i:03}-{}.md", "x".repeat(36)))
        .collect();
    let files: Vec<(&str, &[u8])> = names
        .iter()
        .map(|n| (n.as_str(), b"x\n" as &[u8]))
        .collect();
    let r = run(
        with_files(&files),
        &(line("read_file", json!({"path": "many"})) + &finish_line()),
        true,
        Policy::safe_default(),
    );
    let message = glob_step(&r, 1);
    let read: HashSet<String> = rein_glob_reads(&r).into_iter().collect();
    let left = names.iter().filter(|n| !read.contains(*n)).count();
    let unnamed = names
        .iter()
        .filter(|n| !read.contains(*n) && !message.contains(n.as_str()))
        .count();
    assert!(message.contains(&format!("Not read ({left})")), "{message}");
    assert!(
        unnamed == 0
            || message.contains(
                "more, named in the listing above or by find_files with a narrower pattern"
            ),
        "{unnamed} files left unread are named nowhere and not said to be: {message}"
    );
}

// ---------------------------------------------------------------------------------------------
// 7. Repeats and the no-progress cap
// ---------------------------------------------------------------------------------------------

/// Twenty spellings of one folder read, each of which runs the same find_files call
/// (`{"pattern": "notes/*", "path": "notes"}`) and the same reads.
fn spellings() -> Vec<&'static str> {
    vec![
        "notes",
        "notes/",
        "./notes",
        "./notes/",
        "notes//",
        ".//notes",
        "notes/./",
        "./notes//",
        "notes/*",
        "./notes/*",
        "notes//*",
        "./notes//*",
        ".//notes/*",
        "notes/./*",
        "./notes/./*",
        "././notes/*",
        "notes///*",
        "././notes",
        "./././notes/",
        "notes/.//*",
    ]
}

#[test]
fn spellings_of_one_glob_count_as_no_progress() {
    // Was a hole, mended: another spelling of a glob already read (the same find_files call) is now a repeat.
    // The repeat check and the no-progress count look at the model's parameters, not at the
    // find_files call that ran. Without the lever these calls are refused and the run stops at
    // the no-progress cap after eight; with it each new spelling runs the identical listing and
    // the identical reads, counts as progress, and the run goes on until the script (or the
    // turn cap) ends it, each step putting the same files into the prompt again.
    let mut s = String::new();
    for p in spellings() {
        s.push_str(&line("read_file", json!({ "path": p })));
    }
    s.push_str(&finish_line());
    let off = run(Harness::new("desk_task"), &s, false, Policy::safe_default());
    assert_eq!(off.out.end, no_progress(), "{:?}", off.out.end);
    let on = run(Harness::new("desk_task"), &s, true, Policy::safe_default());
    let second = glob_step(&on, 2);
    let listings = support::outcomes(&on.events)
        .iter()
        .filter(|(a, o)| a == "read_file" && o == "executed")
        .count();
    assert!(
        on.out.end == no_progress() && second.contains("You made exactly this call already"),
        "the run ended {:?} after {listings} executed reads (the model's listings and Rein's \
         reads), no spelling called a repeat; step 2 showed: {second}",
        on.out.end
    );
}

// ---------------------------------------------------------------------------------------------
// 8. Where the lever must stay off
// ---------------------------------------------------------------------------------------------

#[test]
fn a_mission_without_find_files_is_left_as_it_is() {
    let h = || Harness::with_edit("desk_task", |m| drop_tools(m, &["find_files"]));
    for asked in ["notes/*.md", "notes", "notes/"] {
        let s = line("read_file", json!({ "path": asked })) + &finish_line();
        let off = run(h(), &s, false, Policy::safe_default());
        let on = run(h(), &s, true, Policy::safe_default());
        assert_eq!(
            off.shown_result(1, 1, "read_file"),
            on.shown_result(1, 1, "read_file"),
            "{asked}"
        );
        assert!(rein_glob_reads(&on).is_empty(), "{asked}");
        assert!(!on.model.prompt(0).contains("read_file also takes a glob"));
    }
}

#[test]
fn a_memory_run_is_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("journal.db")).unwrap();
    let mdir = dir.path().join("m");
    std::fs::create_dir_all(&mdir).unwrap();
    let m = json!({
        "id": "mem",
        "mode": "automatic",
        "prompt": "Do the task.",
        "inputs": [],
        "tools": ["create_file", "read_file", "list_files", "final_answer"],
        "checks": [{"id": "a", "kind": "file_exists", "path": "a.txt"}],
        "budgets": {"max_turns": 10, "attempts_per_strategy": 1}
    });
    std::fs::write(mdir.join("mission.json"), m.to_string()).unwrap();
    let contract = Mission::load(&mdir).unwrap();
    for asked in ["*", "*.txt", "d", "d/"] {
        let lines = [
            line(
                "create_file",
                json!({"path": "d/a.txt", "content": "one\n"}),
            ),
            line("read_file", json!({ "path": asked })),
            line("final_answer", json!({"answer": "done"})),
        ]
        .concat();
        let mut seen = Vec::new();
        for on in [false, true] {
            let mut model = ScriptedModel::from_str_named(&lines, Path::new("mem.jsonl")).unwrap();
            let mut options = AgentOptions::for_mission(&contract, Model::identity(&model));
            options.levers.glob_reads = on;
            let r = run_memory(
                MemoryRunEnv {
                    contract: &contract,
                    mission_file: &contract.source,
                    journal: &journal,
                    meta: json!({}),
                },
                rein_workspace::Sandbox::new(),
                &mut model,
                &mut AllowAll,
                options,
                &mut |_| {},
            )
            .unwrap();
            let actions: Vec<(String, String)> = r
                .actions
                .iter()
                .map(|a| (a.action.clone(), a.outcome.clone()))
                .collect();
            seen.push(actions);
        }
        assert_eq!(seen[0], seen[1], "{asked}");
    }
}

// ---------------------------------------------------------------------------------------------
// 9. The journal and call ids
// ---------------------------------------------------------------------------------------------

#[test]
fn the_journal_keeps_the_models_call_and_the_gate_records_what_ran() {
    let r = run(
        Harness::new("desk_task"),
        &script(json!({"path": "./notes//*.md"})),
        true,
        Policy::safe_default(),
    );
    let trace = r.h.journal.run_trace(r.out.run).unwrap();
    let model_step = trace
        .steps
        .iter()
        .find(|t| t.step.detail["by"] != "rein" && t.step.action.is_some())
        .unwrap();
    assert_eq!(model_step.step.action.as_deref(), Some("read_file"));
    assert_eq!(
        model_step.step.detail["parameters"],
        json!({"path": "./notes//*.md"})
    );
    let scope = CallScope::Run(r.out.run);
    let id = model_step.step.call_id.clone().unwrap();
    let recorded = r.h.journal.find_tool_call(&scope, &id).unwrap().unwrap();
    assert_eq!(recorded.tool, "find_files");
    assert_eq!(
        recorded.arguments,
        json!({"pattern": "notes/*.md", "path": "notes"})
    );
    let reins: Vec<_> = trace
        .steps
        .iter()
        .filter(|t| t.step.detail["lever"] == "glob-reads")
        .collect();
    assert_eq!(reins.len(), 2);
    for t in reins {
        assert_eq!(t.step.detail["by"], "rein");
        let id = t.step.call_id.clone().unwrap();
        assert!(id.contains("-rein-glob"), "{id}");
        let recorded = r.h.journal.find_tool_call(&scope, &id).unwrap().unwrap();
        assert_eq!(recorded.tool, "read_file");
        assert_eq!(recorded.arguments, t.step.detail["parameters"]);
    }
}

#[test]
fn call_ids_stay_unique_with_every_lever_that_calls_for_the_model() {
    // inputs-first, stats-first, folder-stats, task-search, wider-search and auto-finish all
    // make calls of their own; over two attempts with globs in each, no id is used twice and
    // the gate never answers one with a replay or an id conflict.
    let attempt = |total: &str| {
        line("read_file", json!({"path": "notes"}))
            + &line("search_text", json!({"query": "risk"}))
            + &line("read_file", json!({"path": "data/*"}))
            + &line("read_file", json!({"path": "./notes/*.md"}))
            + &write_summary(&gold_text().replace("Total hours: 64", total))
            + &read_summary()
            + &line("read_file", json!({"path": "out"}))
            + &finish_line()
    };
    let s = attempt("Total hours: 72") + &attempt("Total hours: 64");
    let r = Ran::of(
        Harness::new("desk_task"),
        &s,
        &mut AllowAll,
        Policy::safe_default(),
        |o| {
            o.levers = support::ALL_ON_BUT_NOTES;
            o.limits.attempts = 2;
        },
    );
    let trace = r.h.journal.run_trace(r.out.run).unwrap();
    let mut seen = HashSet::new();
    for t in &trace.steps {
        if let Some(id) = &t.step.call_id {
            assert!(seen.insert(id.clone()), "call id {id} used twice");
        }
        let outcome = t.step.detail["outcome"].as_str().unwrap_or_default();
        assert!(
            outcome != "replayed" && outcome != "id-conflict",
            "{}",
            t.step.detail
        );
    }
    assert!(
        rein_glob_reads(&r).len() >= 2,
        "the lever made no reads: {:?}",
        support::outcomes(&r.events)
    );
}

// ---------------------------------------------------------------------------------------------
// 10. Lever interplay: keep-inputs
// ---------------------------------------------------------------------------------------------

/// The last prompt of a desk_task run with keep-inputs and glob-reads in a 2,600-token window,
/// whose model reads the meeting notes with `reads`, then lists folders until the run stops.
fn last_prompt_after_trimming(reads: &[Value]) -> String {
    let mut s: String = reads.iter().map(|p| line("read_file", p.clone())).collect();
    for i in 0..30 {
        s.push_str(&line(
            "list_dir",
            json!({"path": if i % 2 == 0 { "notes" } else { "data" }}),
        ));
    }
    s.push_str(&finish_line());
    let r = Ran::of(
        Harness::new("desk_task"),
        &s,
        &mut AllowAll,
        Policy::safe_default(),
        |o| {
            o.levers.glob_reads = true;
            o.levers.keep_inputs = true;
            o.context_tokens = Some(2_600);
            o.limits.attempts = 1;
        },
    );
    let last = r.model.prompts().pop().unwrap();
    assert!(
        last.contains("trimmed"),
        "no trim happened: raise the steps"
    );
    last
}

#[test]
fn keep_inputs_keeps_the_inputs_rein_read_for_a_glob() {
    // Was a hole, mended: a glob's step is pinned for every input Rein read whole in it.
    // Lever keep-inputs pins a step that read an input whole, so trimming drops it last. Rein's
    // reads for a glob read inputs whole, but the step is the model's find_files, which reads
    // nothing (`pinned_input` looks at that entry alone): the inputs go with the first trim,
    // while the same inputs read one call at a time are kept.
    let own = last_prompt_after_trimming(&[json!({ "path": NOTES })]);
    assert!(
        own.contains(NOTES_LINE),
        "test set-up is off: the input read by the model is gone"
    );
    let globbed = last_prompt_after_trimming(&[json!({"path": "notes/meeting-*.md"})]);
    assert!(
        globbed.contains(NOTES_LINE),
        "the input Rein read whole for the model's glob was trimmed first"
    );
}
