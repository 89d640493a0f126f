#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of the `folder-stats` lever and of `folder_stats` through the gate: no figure the
//! model is shown (by Rein's call or by its own) is one the judge's check would reject; what a
//! policy keeps from `read_file` changes nothing the model sees and what it hides from
//! `find_files` is never named; the lever makes no check pass that would fail without it; a
//! recorded result is not replayed under a policy that narrows the walk.

#[path = "agent_support/mod.rs"]
mod support;

#[path = "gate_support/mod.rs"]
mod gate_support;

use gate_support::GateEnv;
use rein_engine::agent::Levers;
use rein_engine::checks::{judge_agrees, Aggregate, CheckSpec, Computed, DirWorld};
use rein_engine::gate::{AllowAll, Approver, DenyAll, NoApprover};
use rein_engine::policy::{Policy, PolicyAction};
use rein_protocol::{GateOutcome, ToolCall};
use rein_workspace::desk::{Visibility, FOLDER_STATS_MAX_LISTED};
use serde_json::{json, Value};
use support::{
    check_facts, desk_policy, finish_line, first_json, journal_events, line, user_messages,
    verdict_ids, Harness, Ran, FOLDER_STATS_LABEL,
};

fn run_with(
    h: Harness,
    script: &str,
    approver: &mut dyn Approver,
    policy: Policy,
    on: bool,
) -> Ran {
    let levers = Levers {
        folder_stats: on,
        ..Levers::DEFAULT
    };
    Ran::one_attempt(h, script, approver, policy, levers)
}

fn run_edited(task: &str, fixtures: impl FnOnce(&std::path::Path), script: &str) -> Ran {
    run_with(
        Harness::desk_suite_edited(task, fixtures, |_| {}),
        script,
        &mut AllowAll,
        Policy::safe_default(),
        true,
    )
}

/// A run of `task` with `extra` files (not inputs) written into its workspace.
fn run_with_extra(
    task: &str,
    fixtures: impl FnOnce(&std::path::Path),
    extra: &[(String, String)],
) -> Ran {
    let h = Harness::desk_suite_edited(task, fixtures, |_| {});
    for (rel, text) in extra {
        let p = h.workspace.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    run_with(
        h,
        &finish_line(),
        &mut AllowAll,
        Policy::safe_default(),
        true,
    )
}

/// The message of the first prompt that holds the result of Rein's call, without the
/// progress note after it (which names the mission's inputs whatever the policy).
fn shown_message(r: &Ran) -> String {
    let m = r.first_message_with(FOLDER_STATS_LABEL);
    match m.find("\nProgress: ") {
        Some(i) => m[..i].to_string(),
        None => m,
    }
}

fn shown_result(r: &Ran) -> Value {
    first_json(&shown_message(r))
}

fn entry<'v>(result: &'v Value, path: &str) -> Option<&'v Value> {
    result["list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
}

/// Every figure of `result` that a numeric check of the run's contract judges is one the judge
/// accepts: each file's `rows` (a row count of the file), each file's `lines` (a count of every
/// line), and a total over files that a check counts over (its paths hold every file the total
/// adds up).
fn assert_judge_accepts_every_figure(r: &Ran, result: &Value) {
    let world = DirWorld::new(&r.h.workspace);
    let agrees = |spec: &CheckSpec, figure: &Value| {
        judge_agrees(&r.h.contract, &world, spec, &figure.to_string())
    };
    for check in &r.h.contract.mission.checks {
        let CheckSpec::NumericConsistency { expected, .. } = &check.spec else {
            continue;
        };
        match expected {
            Computed::Csv {
                path,
                op: Aggregate::Count,
                filter: None,
                ..
            } => {
                if let Some(rows) = entry(result, path).and_then(|e| e.get("rows")) {
                    assert!(
                        agrees(&check.spec, rows),
                        "{}: rows {rows} shown for {path}, the judge counts otherwise: {result}",
                        check.id
                    );
                }
            }
            Computed::Lines { path, pattern } if pattern == "^" => {
                if let Some(lines) = entry(result, path).and_then(|e| e.get("lines")) {
                    assert!(
                        agrees(&check.spec, lines),
                        "{}: lines {lines} shown for {path}, the judge counts otherwise: {result}",
                        check.id
                    );
                }
            }
            Computed::Matches {
                paths,
                op: Aggregate::Count,
                ..
            } => {
                for (field, total) in [("lines", "total_lines"), ("rows", "total_rows")] {
                    let Some(n) = result.get(total) else {
                        continue;
                    };
                    let added: Vec<&str> = result["list"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|f| f.get(field).is_some())
                        .map(|f| f["path"].as_str().unwrap())
                        .collect();
                    if added.iter().all(|p| paths.iter().any(|q| q == p)) {
                        assert!(
                            agrees(&check.spec, n),
                            "{}: {total} {n} shown over the files it counts, the judge counts otherwise: {result}",
                            check.id
                        );
                    }
                }
            }
            _ => {}
        }
    }
}

fn append(dir: &std::path::Path, rel: &str, more: &[u8]) {
    let p = dir.join(rel);
    let mut bytes = std::fs::read(&p).unwrap();
    bytes.extend_from_slice(more);
    std::fs::write(p, bytes).unwrap();
}

/// explore-log-lines asks for the sum of the logs' lines and judges it as the count of their
/// non-empty lines: with a blank line in a log, `total_lines` (every line) was shown, and a
/// model that copied it failed `total-lines`. Each file's own count still agrees with its check.
#[test]
fn a_total_the_judge_counts_otherwise_is_not_shown() {
    let r = run_edited(
        "explore-log-lines",
        |dir| append(dir, "logs/api.log", b"\n"),
        &finish_line(),
    );
    let shown = shown_result(&r);
    assert_judge_accepts_every_figure(&r, &shown);
    assert!(shown.get("total_lines").is_none(), "{shown}");
    assert_eq!(entry(&shown, "logs/api.log").unwrap()["lines"], 24);
    assert_eq!(shown["most_lines"], json!(["logs/worker.log"]), "{shown}");
    // Said among the figures, before the per-file list the model is shown clipped.
    let message = shown_message(&r);
    let at = |key: &str| {
        message
            .find(key)
            .unwrap_or_else(|| panic!("{key}: {message}"))
    };
    assert!(at("\"withheld\":") < at("\"list\":"), "{message}");
    assert!(at("\"truncated\":") < at("\"list\":"), "{message}");
    let events = journal_events(&r.h.journal, r.out.run, "folder_stats");
    assert_eq!(
        events[0]["withheld_totals"],
        json!(["total_lines"]),
        "{events:?}"
    );
}

/// A log that is not UTF-8: the tool gives it no lines (its check is the model's), and the
/// total it shows would leave it out, so it is not shown either.
#[test]
fn a_total_that_leaves_out_a_log_is_not_shown() {
    let r = run_edited(
        "explore-log-lines",
        |dir| append(dir, "logs/cron.log", b"caf\xe9 run\n"),
        &finish_line(),
    );
    let shown = shown_result(&r);
    assert_judge_accepts_every_figure(&r, &shown);
    assert!(entry(&shown, "logs/cron.log")
        .unwrap()
        .get("lines")
        .is_none());
    assert!(shown.get("total_lines").is_none(), "{shown}");
    assert!(shown.get("most_lines").is_none(), "{shown}");
}

/// Every spelling of a CSV where the tool and the judge's parser may part: each row count
/// shown is the judge's or is withheld.
#[test]
fn every_row_count_shown_is_the_judge_s_whatever_the_csv_holds() {
    let variants: &[(&str, &[u8])] = &[
        ("row of empty cells", b",,,\n"),
        ("blank-looking row", b"   \n"),
        ("tab row", b"\t\n"),
        ("trailing comma row", b"99,x,y,z,\n"),
        ("quote inside a cell", b"98,ab\"c,x,y\n"),
        ("text after a closing quote", b"97,\"ab\"c,x,y\n"),
        ("quoted line break", b"96,\"two\nlines\",x,y\n"),
        ("quoted CRLF", b"95,\"two\r\nlines\",x,y\r\n"),
        ("bare CR endings", b"94,a,b,c\r93,a,b,c\r"),
        ("no final newline", b"92,a,b,c"),
        ("late NUL", b"91,a\0b,c,d\n"),
        ("non-UTF-8 cell", b"90,caf\xe9,c,d\n"),
        ("unterminated quote", b"89,\"open,c,d\n"),
    ];
    for (what, more) in variants {
        let r = run_edited(
            "explore-csv-rows",
            |dir| {
                // No final newline in the file before the row, for some variants.
                append(dir, "data/customers.csv", more);
                append(dir, "data/suppliers.csv", more);
            },
            &finish_line(),
        );
        let shown = shown_result(&r);
        // Captured, and shown only when an assertion below fails: which variant it was.
        println!("{what}: {}", entry(&shown, "data/customers.csv").unwrap());
        assert_judge_accepts_every_figure(&r, &shown);
    }
    // And files that are only a header, or start with a BOM and use CRLF.
    let r = run_edited(
        "explore-csv-rows",
        |dir| {
            std::fs::write(dir.join("data/suppliers.csv"), "id,name\n").unwrap();
            let p = dir.join("data/products.csv");
            let text = std::fs::read_to_string(&p).unwrap().replace('\n', "\r\n");
            std::fs::write(p, format!("\u{feff}{text}")).unwrap();
        },
        &finish_line(),
    );
    let shown = shown_result(&r);
    assert_judge_accepts_every_figure(&r, &shown);
    assert_eq!(entry(&shown, "data/suppliers.csv").unwrap()["rows"], 0);
    assert_eq!(entry(&shown, "data/products.csv").unwrap()["rows"], 9);
}

/// A file whose rows the judge counts otherwise, past the 100 files listed one by one: its
/// figure is not listed, and before, the total and the largest it feeds were shown anyway.
#[test]
fn a_disputed_file_past_the_listing_cap_withholds_its_totals_too() {
    // Sorted before data/customers.csv: it falls past the listing cap.
    let extra: Vec<(String, String)> = (0..FOLDER_STATS_MAX_LISTED)
        .map(|i| (format!("data/a-extra/t{i:03}.csv"), "id\n1\n".to_string()))
        .collect();
    let r = run_with_extra(
        "explore-csv-rows",
        |dir| append(dir, "data/customers.csv", b",,,\n"),
        &extra,
    );
    let message = shown_message(&r);
    assert!(!message.contains("\"data/customers.csv\""), "{message}");
    assert!(!message.contains("total_rows"), "{message}");
    assert!(!message.contains("most_rows"), "{message}");
    // Every checked table is past the cap here: none of their figures can be compared.
    let events = journal_events(&r.h.journal, r.out.run, "folder_stats");
    let withheld = events[0]["withheld"].as_array().unwrap();
    assert!(
        withheld.contains(&json!("data/customers.csv")),
        "{events:?}"
    );
    // The counts that do not depend on the rows are still shown (`total_lines` is not:
    // `Orders in total` adds up three tables).
    assert!(message.contains("\"files\":"), "{message}");
    assert!(message.contains("\"extensions\""), "{message}");
}

/// With many files the per-file list is what the model is shown clipped (at 6,000 characters):
/// before, the totals, the largest, the copies and the note about the caps came after it and
/// were cut off.
#[test]
fn the_counts_and_the_notes_come_before_the_per_file_list() {
    let extra: Vec<(String, String)> = (0..FOLDER_STATS_MAX_LISTED + 20)
        .map(|i| {
            (
                format!("data/zz-extra/a-somewhat-long-table-name-{i:03}.csv"),
                format!("id\n{i}\n"),
            )
        })
        .collect();
    let r = run_with_extra("explore-csv-rows", |_| {}, &extra);
    let message = shown_message(&r);
    assert!(
        message.contains("more characters not shown"),
        "not clipped: {message}"
    );
    // (`deepest`, `empty` and `same_content` name every file they hold, so a long `deepest`
    // still pushes the later ones out: see the workspace crate's red team.)
    // The totals are withheld (`Orders in total` adds up three tables), their note shown.
    for key in [
        "work that figure out yourself",
        "\"most_rows\"",
        "\"truncated\":true",
        "Only the first 100",
    ] {
        assert!(message.contains(key), "{key} cut off: {message}");
    }
}

/// The lever offers the tool to the model too, whose description says to copy its numbers: a
/// figure the judge counts otherwise is withheld from the model's own call as from Rein's.
#[test]
fn the_model_s_own_call_withholds_what_the_judge_counts_otherwise() {
    let script = line(
        "folder_stats",
        json!({"path": "data", "pattern": "customers.csv"}),
    ) + &finish_line();
    let r = run_edited(
        "explore-csv-rows",
        |dir| append(dir, "data/customers.csv", b",,,\n"),
        &script,
    );
    let message = user_messages(&r.model.requests[1])
        .into_iter()
        .find(|m| m.contains("Result of step 1 (folder_stats)"))
        .unwrap_or_else(|| panic!("{}", r.model.prompt(1)));
    let result = first_json(&message);
    assert_eq!(result["files"], 1, "{result}");
    let customers = entry(&result, "data/customers.csv").unwrap();
    assert!(customers.get("rows").is_none(), "{customers}");
    assert!(result.get("total_rows").is_none(), "{result}");
    assert_judge_accepts_every_figure(&r, &result);
}

/// The files of explore-csv-rows' fixtures.
const CSV_TASK_FILES: [&str; 7] = [
    "data/README.md",
    "data/archive/orders-2022.csv",
    "data/archive/orders-2023.csv",
    "data/customers.csv",
    "data/orders.csv",
    "data/products.csv",
    "data/suppliers.csv",
];

/// Policies of every shape a rule can take: on read_file, on the listers, on `*`, on
/// folder_stats itself, on a folder, asking, with names shown or hidden, and allow lists.
const POLICIES: &[&str] = &[
    "[[rule]]\ntool = \"read_file\"\naction = \"deny\"\npaths = [\"data/customers.csv\"]\n",
    "[[rule]]\ntool = \"read_file\"\naction = \"deny\"\npaths = [\"data/customers.csv\"]\nhide_names = false\n",
    "[[rule]]\ntool = \"list_dir\"\naction = \"deny\"\npaths = [\"data/archive/**\"]\n",
    "[[rule]]\ntool = \"find_files\"\naction = \"deny\"\npaths = [\"data/archive/*\"]\nhide_names = false\n",
    "[[rule]]\ntool = \"*\"\naction = \"deny\"\npaths = [\"data/archive\"]\n",
    "[[rule]]\ntool = \"folder_stats\"\naction = \"deny\"\npaths = [\"data/products.csv\"]\n",
    "[[rule]]\ntool = \"read_file\"\naction = \"ask\"\npaths = [\"data/*.csv\"]\n",
    "[[rule]]\ntool = \"*\"\naction = \"ask\"\npaths = [\"data/archive/**\"]\nhide_names = true\n",
    "[[rule]]\ntool = \"*\"\naction = \"deny\"\npaths = [\"**/README.md\", \"data/orders.csv\"]\n",
    "[[rule]]\ntool = \"*\"\naction = \"allow\"\npaths = [\"data\", \"data/*.csv\"]\n\n[[rule]]\ntool = \"*\"\naction = \"deny\"\n",
    "[[rule]]\ntool = \"*\"\naction = \"allow\"\npaths = [\"data\", \"data/archive/**\"]\n\n[[rule]]\ntool = \"*\"\naction = \"deny\"\n",
    "[[rule]]\ntool = \"folder_stats\"\naction = \"allow\"\n\n[[rule]]\ntool = \"read_file\"\naction = \"deny\"\npaths = [\"data/suppliers.csv\"]\nhide_names = false\n",
];

/// What the model is shown of Rein's call under `policy` (the whole message: a denial is a
/// result too), with the files read_file may not read rewritten by `body`.
fn shown_under(policy: &str, approver: &mut dyn Approver, body: Option<&[u8]>) -> (String, Ran) {
    let r = run_under(policy, approver, body, &finish_line());
    (shown_message(&r), r)
}

/// explore-csv-rows run with `script` under `policy`, the files read_file may not read
/// rewritten by `body`.
fn run_under(policy: &str, approver: &mut dyn Approver, body: Option<&[u8]>, script: &str) -> Ran {
    let p = desk_policy(policy);
    let kept: Vec<&str> = CSV_TASK_FILES
        .into_iter()
        .filter(|f| p.decide("read_file", false, Some(f)).action != PolicyAction::Allow)
        .collect();
    let h = Harness::desk_suite_edited(
        "explore-csv-rows",
        |dir| {
            if let Some(body) = body {
                for f in &kept {
                    std::fs::write(dir.join(f), body).unwrap();
                }
            }
        },
        |_| {},
    );
    run_with(h, script, approver, desk_policy(policy), true)
}

/// What a policy keeps from read_file changes nothing the model is shown, whatever those files
/// hold (nothing, a copy of a file it may read, many rows); a file read_file may not read has
/// no figure; a name find_files may not show is never named.
#[test]
fn what_a_policy_keeps_from_read_file_changes_nothing_the_model_sees() {
    let copy = std::fs::read(
        support::missions_dir().join("../suites/desk/explore-csv-rows/fixtures/data/products.csv"),
    )
    .unwrap();
    let many: Vec<u8> = (0..400)
        .flat_map(|i| format!("{i},a,b,c\n").into_bytes())
        .collect();
    for policy in POLICIES {
        let (base, r) = shown_under(policy, &mut AllowAll, None);
        let p = desk_policy(policy);
        for f in CSV_TASK_FILES {
            if p.visibility("find_files", f) == Visibility::Hidden {
                assert!(!base.contains(f), "{policy}: {f} named: {base}");
            }
        }
        let ran = rein_workspace_ran(&r);
        if ran {
            let result = first_json(&base);
            for e in result["list"].as_array().unwrap() {
                let path = e["path"].as_str().unwrap();
                let readable =
                    p.decide("read_file", false, Some(path)).action == PolicyAction::Allow;
                if !readable {
                    for field in ["bytes", "lines", "rows"] {
                        assert!(e.get(field).is_none(), "{policy}: {field} of {path}: {e}");
                    }
                }
            }
        }
        for body in [&b""[..], &copy, &many] {
            let (other, _) = shown_under(policy, &mut AllowAll, Some(body));
            assert_eq!(
                other, base,
                "{policy}: the kept files' content changed what is shown"
            );
        }
    }
}

fn rein_workspace_ran(r: &Ran) -> bool {
    let calls = r.rein_calls("folder-stats", "folder_stats");
    calls.len() == 1 && calls[0].1["outcome"] == "executed"
}

/// An ask rule for the files, with an approver that says no to everything: the walk does not
/// ask, it skips them. An ask for the call itself: the approver is asked and its no is what
/// the model is shown, with no figure.
#[test]
fn under_ask_rules_a_refusing_approver_leaks_nothing() {
    let (message, r) = shown_under(
        "[[rule]]\ntool = \"read_file\"\naction = \"ask\"\npaths = [\"data/customers.csv\"]\n",
        &mut DenyAll,
        None,
    );
    assert!(rein_workspace_ran(&r), "{message}");
    let result = first_json(&message);
    let customers = entry(&result, "data/customers.csv").unwrap();
    assert_eq!(customers["skipped_by_policy"], true, "{customers}");
    assert!(customers.get("bytes").is_none(), "{customers}");

    let (message, r) = shown_under(
        "[[rule]]\ntool = \"folder_stats\"\naction = \"ask\"\n",
        &mut DenyAll,
        None,
    );
    assert!(!rein_workspace_ran(&r), "{message}");
    assert!(!message.contains("rows"), "{message}");
    assert!(!message.contains("customers"), "{message}");
    // The run goes on: the model got its first step.
    assert!(!r.model.requests.is_empty());
}

/// A policy that denies folder_stats outright: Rein's call is denied and says so, and nothing
/// of the folder is shown.
#[test]
fn a_denied_call_shows_nothing_of_the_folder() {
    for policy in [
        "[[rule]]\ntool = \"folder_stats\"\naction = \"deny\"\n",
        "[[rule]]\ntool = \"read_file\"\naction = \"deny\"\n",
        "[[rule]]\ntool = \"list_dir\"\naction = \"deny\"\npaths = [\"data\"]\n",
    ] {
        let (message, r) = shown_under(policy, &mut AllowAll, None);
        assert!(!rein_workspace_ran(&r), "{policy}: {message}");
        assert!(message.contains("denied"), "{policy}: {message}");
        assert!(!message.contains(".csv"), "{policy}: {message}");
    }
}

/// The lever makes no check pass that fails without it: the same replies judged with and
/// without it, on every explore task, reading the inputs or not, copying Rein's figures.
#[test]
fn the_lever_changes_no_check_s_verdict() {
    let tasks: [(&str, &str, &str); 3] = [
        (
            "explore-csv-rows",
            "out/tables.md",
            "# Tables\n\n- data/archive/orders-2022.csv: 52 rows\n- data/archive/orders-2023.csv: 44 rows\n- data/customers.csv: 14 rows\n- data/orders.csv: 37 rows\n- data/products.csv: 9 rows\n- data/suppliers.csv: 5 rows\n\nLargest: data/archive/orders-2022.csv\nOrders in total: 133\n",
        ),
        (
            "explore-log-lines",
            "out/log_lines.md",
            "# Log lines\n\n- logs/api.log: 23\n- logs/cron.log: 9\n- logs/nginx/access.log: 27\n- logs/nginx/error.log: 6\n- logs/worker.log: 31\n\nLongest: logs/worker.log\nTotal lines: 96\n",
        ),
        (
            "explore-share-cleanup",
            "out/cleanup.md",
            "# Cleanup\n\n## Empty files\n\n- share/notes/empty-note.md\n- share/drafts/letter.txt\n- share/photos/index.txt\n\nEmpty: 3\n\n## Copies\n\n- share/old/contacts-copy.csv\n- share/exports/contacts_2024.csv\n\nCopies: 2\n",
        ),
    ];
    for (task, out, text) in tasks {
        let inputs = Harness::desk_suite(task).contract.mission.inputs.clone();
        let reads: String = inputs
            .iter()
            .map(|p| line("read_file", json!({ "path": p })))
            .collect();
        let write = line("create_file", json!({"path": out, "content": text}))
            + &line("read_file", json!({ "path": out }))
            + &finish_line();
        let own_count = line("folder_stats", json!({})) + &write;
        for script in [reads.clone() + &write, write.clone(), own_count] {
            let on = run_with(
                Harness::desk_suite(task),
                &script,
                &mut AllowAll,
                Policy::safe_default(),
                true,
            );
            let off = run_with(
                Harness::desk_suite(task),
                &script,
                &mut AllowAll,
                Policy::safe_default(),
                false,
            );
            assert_eq!(verdict_ids(&on), verdict_ids(&off), "{task}: {script}");
        }
        // Copying without reading fails the reads check with or without the lever.
        let on = run_with(
            Harness::desk_suite(task),
            &write,
            &mut AllowAll,
            Policy::safe_default(),
            true,
        );
        assert!(!check_facts(&on.out, "inputs-read").0, "{task}");
    }
}

fn not_applied(h: Harness) -> String {
    let r = run_with(
        h,
        &finish_line(),
        &mut AllowAll,
        Policy::safe_default(),
        true,
    );
    assert!(r.rein_calls("folder-stats", "folder_stats").is_empty());
    let events = journal_events(&r.h.journal, r.out.run, "folder_stats");
    assert_eq!(events.len(), 1, "{events:?}");
    events[0]["not_applied"].as_str().unwrap().to_string()
}

/// The lever stays out where it has nothing to count: a row count with a filter (a figure the
/// tool does not make) and no other count; an `actions_called` check; a read-only tool list.
#[test]
fn the_lever_is_not_applied_where_it_has_nothing_to_count() {
    let why = not_applied(Harness::desk_suite_mission("explore-csv-rows", |m| {
        let checks: Vec<Value> = m["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] != "numeric_consistency")
            .cloned()
            .chain([json!({
                "id": "filtered",
                "kind": "numeric_consistency",
                "path": "out/tables.md",
                "stated": {"regex": "(?im)^\\s*paid\\s*:\\s*(.*?)\\s*$"},
                "expected": {"from": "csv", "path": "data/orders.csv", "op": "count", "filter": {"column": "id", "equals": "1"}},
                "tolerance": 0
            })])
            .collect();
        m["checks"] = json!(checks);
    }));
    assert!(why.contains("no check counts"), "{why}");
    let why = not_applied(Harness::desk_suite_mission("explore-log-lines", |m| {
        m["checks"].as_array_mut().unwrap().push(json!({
            "id": "called",
            "kind": "actions_called",
            "tools": ["read_file"]
        }));
    }));
    assert!(why.contains("called"), "{why}");
    // A mission without inputs has nothing to count, whatever its checks.
    let why = not_applied(Harness::desk_suite_mission("explore-log-lines", |m| {
        m["inputs"] = json!([]);
        let checks: Vec<Value> = m["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] == "file_exists" || c["kind"] == "written_this_run")
            .cloned()
            .collect();
        m["checks"] = json!(checks);
    }));
    assert!(why.contains("no inputs"), "{why}");
}

/// A folder_stats result recorded under one policy is not replayed under one that narrows the
/// walk (a rule on read_file or list_dir holds for it), and still replays where nothing
/// narrows.
#[test]
fn a_recorded_count_is_not_replayed_under_a_policy_that_narrows_it() {
    let env = GateEnv::with_files(&[
        ("box/open.txt", "one\n"),
        ("box/secret.txt", "hunter2\nline two\n"),
    ]);
    let submit = |policy: &str, id: &str| {
        let call = ToolCall {
            id: id.into(),
            tool: "folder_stats".into(),
            arguments: json!({"path": "box"}),
        };
        env.submit_call(env.policy(policy), &call, &mut NoApprover)
    };
    let first = submit("", "c1");
    assert_eq!(first.outcome, GateOutcome::Executed);
    assert!(first.result.to_string().contains("box/secret.txt"));
    for policy in [
        "[[rule]]\ntool = \"read_file\"\naction = \"deny\"\npaths = [\"box/secret.txt\"]\n",
        "[[rule]]\ntool = \"list_dir\"\naction = \"deny\"\npaths = [\"box/secret.txt\"]\nhide_names = false\n",
        "[[rule]]\ntool = \"folder_stats\"\naction = \"ask\"\npaths = [\"**/secret*\"]\n",
    ] {
        let again = submit(policy, "c1");
        assert_eq!(again.outcome, GateOutcome::Denied, "{policy}: {again:?}");
        assert!(!again.result.to_string().contains("secret"), "{again:?}");
    }
    assert_eq!(submit("", "c1").outcome, GateOutcome::Replayed);
    // A fresh call under the narrowing policy counts the file only.
    let fresh = submit(
        "[[rule]]\ntool = \"read_file\"\naction = \"deny\"\npaths = [\"box/secret.txt\"]\n",
        "c2",
    );
    assert_eq!(fresh.outcome, GateOutcome::Executed);
    assert_eq!(fresh.result["hidden_by_policy"], 1, "{fresh:?}");
    assert_eq!(fresh.result["total_lines"], 1, "{fresh:?}");
}

/// A row count the judge makes of a TSV or a JSON-lines file (it reads each as comma-separated
/// text with a header line): each figure shown is the judge's or is withheld.
#[test]
fn tsv_and_json_lines_rows_are_the_judge_s_or_withheld() {
    let h = Harness::desk_suite_edited(
        "explore-csv-rows",
        |dir| {
            std::fs::write(
                dir.join("data/plain.tsv"),
                "id\tname\n1\tAda\n2\t\"Bo\tx\"\n3\tsay \"hi\"\n",
            )
            .unwrap();
            std::fs::write(
                dir.join("data/events.jsonl"),
                "{\"id\":1,\"note\":\"a,b\"}\n\n{\"id\":2}\n{\"id\":3}\n",
            )
            .unwrap();
        },
        |m| {
            for p in ["data/plain.tsv", "data/events.jsonl"] {
                m["inputs"].as_array_mut().unwrap().push(json!(p));
                m["checks"].as_array_mut().unwrap().push(json!({
                    "id": format!("rows-{p}"),
                    "kind": "numeric_consistency",
                    "path": "out/tables.md",
                    "stated": {"regex": format!("(?im)^\\s*{}\\s*:\\s*(.*?)\\s*$", regex::escape(p))},
                    "expected": {"from": "csv", "path": p, "op": "count"},
                    "tolerance": 0
                }));
            }
        },
    );
    let r = run_with(
        h,
        &finish_line(),
        &mut AllowAll,
        Policy::safe_default(),
        true,
    );
    let shown = shown_result(&r);
    assert_judge_accepts_every_figure(&r, &shown);
    // The tool counts three events; the judge, reading a header line, two.
    let events = entry(&shown, "data/events.jsonl").unwrap();
    assert!(events.get("rows").is_none(), "{events}");
}

/// A check that counts a file's lines matching a pattern (its ERROR lines) applies the lever
/// but is not of the figure `lines` gives: that file's `lines` is withheld, never shown for a
/// model to copy as its ERROR lines (it was shown as `lines: 23` before).
#[test]
fn a_file_s_lines_are_not_shown_where_its_check_counts_some_of_them() {
    let h = Harness::desk_suite_mission("explore-log-lines", |m| {
        m["checks"].as_array_mut().unwrap().push(json!({
            "id": "api-errors",
            "kind": "numeric_consistency",
            "path": "out/log_lines.md",
            "stated": {"regex": "(?im)^\\s*api errors\\s*:\\s*(.*?)\\s*$"},
            "expected": {"from": "lines", "path": "logs/api.log", "pattern": "ERROR"},
            "tolerance": 0
        }));
    });
    let r = run_with(
        h,
        &finish_line(),
        &mut AllowAll,
        Policy::safe_default(),
        true,
    );
    let shown = shown_result(&r);
    let check =
        r.h.contract
            .mission
            .checks
            .iter()
            .find(|c| c.id == "api-errors")
            .unwrap();
    let api = entry(&shown, "logs/api.log").unwrap();
    if let Some(lines) = api.get("lines") {
        let world = DirWorld::new(&r.h.workspace);
        assert!(
            judge_agrees(&r.h.contract, &world, &check.spec, &lines.to_string()),
            "lines {lines} shown for logs/api.log, whose check counts its ERROR lines"
        );
    }
    assert!(api.get("lines").is_none(), "{api}");
    assert!(api["withheld"].as_str().is_some(), "{api}");
    assert!(shown.get("total_lines").is_none(), "{shown}");
}

// ---------------------------------------------------------------------------------------------
// Red team of 286d0eb: a total the task adds up only part of is withheld (`sums_some_of`), and
// Rein's figures are repeated after each step's result (`restated_figures`).
// ---------------------------------------------------------------------------------------------

/// One step before finish, so the first step's result (and the line repeated after it) is read.
fn one_step() -> String {
    line("list_dir", json!({"path": "data"})) + &finish_line()
}

/// The "Rein's counts of" line after step `i`'s result, if any.
fn restated_after(r: &Ran, i: usize) -> Option<String> {
    let said = user_messages(&r.model.requests[i]).last().cloned().unwrap();
    said.lines()
        // The figures as JSON; past its size the repeat is a sentence saying where they are.
        .find(|l| l.starts_with("Rein's counts of") && l.contains('{'))
        .map(str::to_string)
}

/// The restated figures repeat only what the first prompt showed: every key they hold is in
/// the shown result (read as text: a long one is clipped) with the same value, and each file
/// of the per-file list with some of the fields shown for it, with the same values. `None`
/// where no line is repeated (too long).
fn assert_restated_within_shown(r: &Ran) -> Option<Value> {
    let message = shown_message(r);
    let line = restated_after(r, 1)?;
    let repeated = first_json(&line);
    for (k, v) in repeated.as_object().unwrap() {
        if k == "list" {
            let shown = first_json(&message);
            for file in v.as_array().unwrap() {
                let listed = entry(&shown, file["path"].as_str().unwrap())
                    .unwrap_or_else(|| panic!("{file} repeated, not listed: {message}"));
                for (field, value) in file.as_object().unwrap() {
                    assert_eq!(&listed[field], value, "{file} repeated, shown {listed}");
                }
            }
            continue;
        }
        let pair = format!("{}:{v}", json!(k));
        assert!(
            message.contains(&pair),
            "{pair} repeated, not shown so: {line}\nshown: {message}"
        );
    }
    for key in ["path", "truncated"] {
        assert!(repeated.get(key).is_none(), "{key}: {line}");
    }
    Some(repeated)
}

fn orders_total_paths(m: &mut Value, paths: Value) {
    let c = m["checks"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["id"] == "orders-total")
        .unwrap();
    c["expected"]["paths"] = paths;
}

/// Claim (a): in every case where something is withheld (a file's rows the judge counts
/// otherwise, a total over logs with a blank line, a log that is not UTF-8, a disputed table
/// past the listing cap, a part-sum total), the line repeated after each step holds no key or
/// value the first prompt did not show, hence no withheld total or file figure.
#[test]
fn the_restated_line_never_holds_what_the_shown_result_withheld() {
    let extra: Vec<(String, String)> = (0..FOLDER_STATS_MAX_LISTED)
        .map(|i| (format!("data/a-extra/t{i:03}.csv"), "id\n1\n".to_string()))
        .collect();
    type Edit = Box<dyn Fn(&std::path::Path)>;
    let cases: Vec<(&str, &str, Edit, bool)> = vec![
        ("explore-csv-rows", "plain", Box::new(|_| {}), false),
        (
            "explore-csv-rows",
            "disputed customers",
            Box::new(|d| append(d, "data/customers.csv", b",,,\n")),
            false,
        ),
        (
            "explore-csv-rows",
            "disputed past the cap",
            Box::new(|d| append(d, "data/customers.csv", b",,,\n")),
            true,
        ),
        (
            "explore-log-lines",
            "blank line",
            Box::new(|d| append(d, "logs/api.log", b"\n")),
            false,
        ),
        (
            "explore-log-lines",
            "not UTF-8",
            Box::new(|d| append(d, "logs/cron.log", b"caf\xe9 run\n")),
            false,
        ),
    ];
    for (task, what, edit, past_cap) in cases {
        let h = Harness::desk_suite_edited(task, |d| edit(d), |_| {});
        if past_cap {
            for (rel, text) in &extra {
                let p = h.workspace.join(rel);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, text).unwrap();
            }
        }
        let r = run_with(h, &one_step(), &mut AllowAll, Policy::safe_default(), true);
        let message = shown_message(&r);
        let Some(repeated) = assert_restated_within_shown(&r) else {
            // Too long to repeat: a sentence says so, with no figure.
            let said = user_messages(&r.model.requests[1]).last().cloned().unwrap();
            assert!(said.contains("too long to repeat here"), "{what}: {said}");
            println!("{task} / {what}: no line repeated");
            continue;
        };
        println!("{task} / {what}: {repeated}");
        for total in ["total_rows", "total_lines", "most_rows", "most_lines"] {
            if !message.contains(&format!("\"{total}\"")) {
                assert!(repeated.get(total).is_none(), "{what}: {total}: {repeated}");
            }
        }
        for e in ["data/customers.csv", "logs/api.log", "logs/cron.log"] {
            assert!(
                !repeated.to_string().contains(&format!("\"{e}\":")),
                "{what}: {repeated}"
            );
        }
        if !past_cap {
            assert_judge_accepts_every_figure(&r, &shown_result(&r));
        }
    }
}

/// Claim (a), behaviour 1 past the listing cap: explore-csv-rows with 100 more one-row
/// tables. `Orders in total` still adds up 3 of the tables and no check counts over all of
/// them, yet `withhold_totals` returns before `sums_some_of` once `listed_of` is set:
/// `total_rows` (all 106 tables) and `total_lines` are shown, "copy its numbers", and repeated
/// after each step where the line fits, the figure the commit withholds below the cap.
#[test]
fn past_the_listing_cap_a_total_the_task_adds_up_only_part_of_is_still_shown() {
    let extra: Vec<(String, String)> = (0..FOLDER_STATS_MAX_LISTED)
        .map(|i| (format!("data/zz-extra/t{i:03}.csv"), format!("id\n{i}\n")))
        .collect();
    let r = run_with_extra_script("explore-csv-rows", &extra, &one_step());
    let message = shown_message(&r);
    assert!(message.contains("\"listed_of\""), "{message}");
    let line = restated_after(&r, 1).unwrap_or_default();
    println!("repeated: {line}");
    for total in ["\"total_rows\"", "\"total_lines\""] {
        assert!(
            !message.contains(total) && !line.contains(total),
            "{total} shown past the cap while the task adds up 3 tables: {}",
            &message[..message.find("\"folders\"").unwrap_or(message.len())]
        );
    }
}

fn run_with_extra_script(task: &str, extra: &[(String, String)], script: &str) -> Ran {
    let h = Harness::desk_suite(task);
    for (rel, text) in extra {
        let p = h.workspace.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    run_with(h, script, &mut AllowAll, Policy::safe_default(), true)
}

/// Claim (a), behaviour 1 with a file of the part-sum that has no figure: data/archive/
/// orders-2023.csv not UTF-8 (the judge still counts its rows, reading it lossily). The check
/// adds up 3 tables, 2 of which the total adds up; `sums_some_of` asks that every path of the
/// check have a figure, so `total_rows` of the 5 other tables is shown and repeated, a figure
/// no line of the task asks for and the one the 1.5B copied for `Orders in total`.
#[test]
fn a_part_sum_file_that_is_not_utf8_lets_the_whole_total_through() {
    let r = run_edited(
        "explore-csv-rows",
        |d| append(d, "data/archive/orders-2023.csv", b"9999,1,1.0,caf\xe9\n"),
        &one_step(),
    );
    let shown = shown_result(&r);
    assert!(entry(&shown, "data/archive/orders-2023.csv")
        .unwrap()
        .get("rows")
        .is_none());
    let line = restated_after(&r, 1).unwrap();
    assert!(
        shown.get("total_rows").is_none() && !line.contains("\"total_rows\""),
        "total_rows {} shown and repeated: {line}",
        shown["total_rows"]
    );
}

/// Claims (a)/(c), behaviour 1 under a policy that hides one table of the part-sum
/// (read_file deny on data/orders.csv): the decision may depend on the policy and the check's
/// paths alone, yet `sums_some_of` needs each path listed with a figure, so `total_rows` of the
/// visible tables (none of the task's lines) is shown and repeated "to copy".
#[test]
fn a_part_sum_file_the_policy_hides_lets_the_whole_total_through() {
    let policy =
        "[[rule]]\ntool = \"read_file\"\naction = \"deny\"\npaths = [\"data/orders.csv\"]\n";
    let h = Harness::desk_suite("explore-csv-rows");
    let r = run_with(h, &one_step(), &mut AllowAll, desk_policy(policy), true);
    let shown = shown_result(&r);
    assert!(entry(&shown, "data/orders.csv").is_none(), "{shown}");
    let line = restated_after(&r, 1).unwrap();
    assert!(!line.contains("data/orders.csv"), "{line}");
    assert!(
        shown.get("total_rows").is_none() && !line.contains("\"total_rows\""),
        "total_rows {} shown and repeated: {line}",
        shown["total_rows"]
    );
}

/// Behaviour 1's note: `sums_some_of` takes any match-count pattern, so a check counting the
/// ` 500 ` lines of two logs (no check summing every log) withholds `total_lines`; the note
/// told the model to "add their figures from the list with calculate", the sum of the two
/// logs' `lines` (23 + 31 = 54), which the judge refuses (it counts 500s). It now says only
/// that the figure is the model's to work out.
#[test]
fn the_part_sum_note_never_points_at_a_sum_the_judge_refuses() {
    let h = Harness::desk_suite_mission("explore-log-lines", |m| {
        let checks = m["checks"].as_array_mut().unwrap();
        checks.retain(|c| c["id"] != "total-lines");
        checks.push(json!({
            "id": "failed-requests",
            "kind": "numeric_consistency",
            "path": "out/log_lines.md",
            "stated": {"regex": "(?im)^\\s*failed\\s*:\\s*(.*?)\\s*$"},
            "expected": {"from": "matches", "paths": ["logs/api.log", "logs/worker.log"],
                         "pattern": " 500 ", "op": "count"},
            "tolerance": 0
        }));
    });
    let r = run_with(h, &one_step(), &mut AllowAll, Policy::safe_default(), true);
    let shown = shown_result(&r);
    let said = shown["withheld"].as_str().unwrap_or_default();
    // The total is not the count, and the note sends the model to no sum of listed figures.
    assert!(shown.get("total_lines").is_none(), "{shown}");
    assert!(said.contains("work that figure out yourself"), "{said}");
    assert!(!said.contains("from the list"), "{said}");
}

/// Claims (b) and (d): the part-sum withholding is the same whether the part equals the whole
/// (the other tables header only: 133 = 133, or all six empty: 0 = 0) or the judge's value
/// moves (a row the orders pattern does not match): nothing of the judge's value decides it.
#[test]
fn the_part_sum_withholding_does_not_follow_the_judge_s_value() {
    let base = run_edited("explore-csv-rows", |_| {}, &one_step());
    let base_shown = shown_result(&base);
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    type Edit = Box<dyn Fn(&std::path::Path)>;
    let header_only = |d: &std::path::Path, f: &str| {
        let p = d.join(f);
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(p, format!("{}\n", text.lines().next().unwrap())).unwrap();
    };
    let variants: Vec<(&str, Edit)> = vec![
        (
            "part equals whole",
            Box::new(move |d| {
                for f in [
                    "data/customers.csv",
                    "data/products.csv",
                    "data/suppliers.csv",
                ] {
                    header_only(d, f);
                }
            }),
        ),
        (
            "all zero rows",
            Box::new(move |d| {
                for f in CSV_TASK_FILES.iter().filter(|f| f.ends_with(".csv")) {
                    header_only(d, f);
                }
            }),
        ),
        (
            "judge's value moves",
            Box::new(|d| append(d, "data/orders.csv", b"77,x,y\n")),
        ),
    ];
    for (what, edit) in variants {
        let r = run_edited("explore-csv-rows", |d| edit(d), &one_step());
        let shown = shown_result(&r);
        assert_eq!(keys(&shown), keys(&base_shown), "{what}: {shown}");
        assert_eq!(shown["withheld"], base_shown["withheld"], "{what}");
        let events = journal_events(&r.h.journal, r.out.run, "folder_stats");
        assert_eq!(
            events[0]["withheld_totals"],
            json!(["total_lines", "total_rows"]),
            "{what}: {events:?}"
        );
        let line = assert_restated_within_shown(&r).unwrap();
        assert!(line.get("total_rows").is_none(), "{what}: {line}");
    }
}

/// Claim (d): odd part-sum paths. `./` spellings, a path that is no input (outside the counted
/// folder) and an empty list are refused when the mission loads, so no contract Rein counts
/// for holds them; a duplicated path, a part-sum over an input outside the counted folder's
/// tables, a count over every table, and empty logs in a folder with an empty sub-folder
/// neither panic nor repeat anything the first prompt did not show.
#[test]
fn odd_part_sum_paths_neither_panic_nor_misbehave() {
    let three = [
        "data/orders.csv",
        "data/archive/orders-2022.csv",
        "data/archive/orders-2023.csv",
    ];
    let dotted: Vec<String> = three.iter().map(|p| format!("./{p}")).collect();
    for (what, paths) in [
        ("./ paths", json!(dotted)),
        ("not an input", json!(["data/orders.csv", "other/x.csv"])),
        ("no paths", json!([])),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mdir = dir.path().join("mission");
        support::copy_dir(
            &support::missions_dir().join("../suites/desk/explore-csv-rows"),
            &mdir,
        );
        let file = mdir.join("mission.json");
        let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        orders_total_paths(&mut m, paths);
        std::fs::write(&file, m.to_string()).unwrap();
        let loaded = rein_engine::mission::Mission::load(&file);
        assert!(loaded.is_err(), "{what}: loaded");
    }
    let base = shown_result(&run_edited("explore-csv-rows", |_| {}, &one_step()));
    // A duplicated path: still a sum over some of the tables.
    let mut doubled: Vec<&str> = three.to_vec();
    doubled.push("data/orders.csv");
    let h = Harness::desk_suite_mission("explore-csv-rows", |m| {
        orders_total_paths(m, json!(doubled))
    });
    let r = run_with(h, &one_step(), &mut AllowAll, Policy::safe_default(), true);
    let shown = shown_result(&r);
    assert_eq!(shown["withheld"], base["withheld"], "{shown}");
    assert!(assert_restated_within_shown(&r).is_some());
    // One table counted twice (`paths.len() >= 2` counts paths, not files): observed, not
    // asserted, the totals are withheld as "adds up only some of these files" though the check
    // names one file (harmless: withholding shows no number).
    let h = Harness::desk_suite_mission("explore-csv-rows", |m| {
        orders_total_paths(m, json!(["data/orders.csv", "data/orders.csv"]))
    });
    let r = run_with(h, &one_step(), &mut AllowAll, Policy::safe_default(), true);
    println!("one table twice: withheld {}", shown_result(&r)["withheld"]);
    assert!(assert_restated_within_shown(&r).is_some());
    // An input outside data/ (the counted folder becomes the workspace) in the part-sum.
    let h = Harness::desk_suite_edited(
        "explore-csv-rows",
        |d| {
            std::fs::create_dir_all(d.join("other")).unwrap();
            std::fs::write(d.join("other/x.csv"), "id,customer_id,total\n1,2,3.0\n").unwrap();
        },
        |m| {
            m["inputs"]
                .as_array_mut()
                .unwrap()
                .push(json!("other/x.csv"));
            orders_total_paths(m, json!(["data/orders.csv", "other/x.csv"]));
        },
    );
    let r = run_with(h, &one_step(), &mut AllowAll, Policy::safe_default(), true);
    let shown = shown_result(&r);
    println!(
        "outside data/: path {} withheld {}",
        shown["path"], shown["withheld"]
    );
    assert!(assert_restated_within_shown(&r).is_some());
    // A count over every table and the README besides the part-sum: nothing is a part-sum.
    let h = Harness::desk_suite_mission("explore-csv-rows", |m| {
        m["checks"].as_array_mut().unwrap().push(json!({
            "id": "all-rows",
            "kind": "numeric_consistency",
            "path": "out/tables.md",
            "stated": {"regex": "(?im)^\\s*all rows\\s*:\\s*(.*?)\\s*$"},
            "expected": {"from": "matches", "paths": CSV_TASK_FILES, "pattern": "(?m)^\\d", "op": "count"},
            "tolerance": 0
        }));
    });
    let r = run_with(h, &one_step(), &mut AllowAll, Policy::safe_default(), true);
    let shown = shown_result(&r);
    println!("count over all: withheld {}", shown["withheld"]);
    assert!(
        !shown["withheld"]
            .as_str()
            .unwrap_or_default()
            .contains("only some"),
        "{shown}"
    );
    assert!(assert_restated_within_shown(&r).is_some());
    // Empty logs and an empty sub-folder, with a count over two of the logs.
    let h = Harness::desk_suite_edited(
        "explore-log-lines",
        |d| {
            for f in ["logs/api.log", "logs/cron.log", "logs/worker.log"] {
                std::fs::write(d.join(f), "").unwrap();
            }
            std::fs::create_dir_all(d.join("logs/empty")).unwrap();
        },
        |m| {
            let c = m["checks"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .find(|c| c["id"] == "total-lines")
                .unwrap();
            c["expected"]["paths"] = json!(["logs/api.log", "logs/cron.log"]);
        },
    );
    let r = run_with(h, &one_step(), &mut AllowAll, Policy::safe_default(), true);
    let shown = shown_result(&r);
    assert!(shown.get("total_lines").is_none(), "{shown}");
    assert!(assert_restated_within_shown(&r).is_some());
}

/// Claim (c): under every policy shape, the line repeated after each step is a part of what
/// the first prompt showed, names no file find_files may not name, holds nothing of a file the
/// policy keeps from read_file (it is the same whatever those files hold), and is absent where
/// Rein's call did not run.
#[test]
fn the_restated_line_holds_the_policy() {
    let many: Vec<u8> = (0..400)
        .flat_map(|i| format!("{i},a,b,c\n").into_bytes())
        .collect();
    for policy in POLICIES {
        let p = desk_policy(policy);
        let run = |body: Option<&[u8]>| run_under(policy, &mut AllowAll, body, &one_step());
        let r = run(None);
        let line = restated_after(&r, 1);
        if !rein_workspace_ran(&r) {
            assert_eq!(line, None, "{policy}");
            continue;
        }
        let line = line.unwrap_or_else(|| panic!("{policy}: no counts after step 1"));
        assert!(assert_restated_within_shown(&r).is_some(), "{policy}");
        for f in CSV_TASK_FILES {
            if p.visibility("find_files", f) == Visibility::Hidden {
                assert!(!line.contains(f), "{policy}: {f} named: {line}");
            }
        }
        for body in [&b""[..], &many] {
            let other = run(Some(body));
            assert_eq!(
                restated_after(&other, 1).as_deref(),
                Some(line.as_str()),
                "{policy}: the kept files' content changed the repeated line"
            );
        }
    }
}
