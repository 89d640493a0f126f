#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Path rules cover every file a tool reads or lists, not only the `path` it names: a recursive
//! tool (search_text, find_files, find_related, list_dir, file_info on a folder) cannot walk
//! around a `deny secrets/**`. Each call goes through the gate, as `rein tool` sends it.

#[path = "gate_support/mod.rs"]
mod gate_support;

use gate_support::GateEnv;
use rein_engine::gate::{
    AllowAll, ApprovalDecision, Approver, CallExecutor, Gate, GateConfig, NoApprover,
    ScriptedApprover,
};
use rein_engine::policy::{Policy, PolicyAction, PolicyError, Rule};
use rein_protocol::{GateOutcome, GateReport, ToolCall};
use rein_workspace::desk::Visibility;
use rein_workspace::{desk_registry, Workspace};
use serde_json::{json, Value};

/// The secret's contents; a word of it is also in `notes/plan.md`, nowhere else.
const SECRET: &str = "API_KEY=hunter2\nzebrafish rotation schedule\n";
const DENY_SECRETS: &str = "[[rule]]\ntool = \"*\"\npaths = [\"secrets/**\"]\naction = \"deny\"\n";

type Env = GateEnv;

impl GateEnv {
    fn new() -> Env {
        GateEnv::with_files(&[
            ("secrets/key.env", SECRET),
            (
                "notes/plan.md",
                "launch plan\nthe zebrafish tank moves on monday\n",
            ),
            ("notes/todo.md", "water the plants\nlaunch checklist\n"),
        ])
    }

    fn submit(&self, policy_toml: &str, tool: &str, arguments: Value) -> GateReport {
        self.submit_with(self.policy(policy_toml), tool, arguments, &mut NoApprover)
    }

    /// The result of a call that must run.
    fn run(&self, policy_toml: &str, tool: &str, arguments: Value) -> Value {
        let report = self.submit(policy_toml, tool, arguments);
        assert_eq!(report.outcome, GateOutcome::Executed, "{report:?}");
        report.result
    }
}

/// Nothing of the secret, not even its name, anywhere in `result`.
fn reveals_nothing(result: &Value) {
    let text = result.to_string();
    for leak in ["key.env", "hunter2", "API_KEY", "rotation"] {
        assert!(!text.contains(leak), "{leak} leaked: {text}");
    }
}

fn note(result: &Value) -> &str {
    result["note"].as_str().unwrap_or_default()
}

#[test]
fn without_a_policy_every_file_is_searched_as_before() {
    let env = Env::new();
    let result = env.run("", "search_text", json!({"pattern": "hunter2"}));
    assert_eq!(result["matches"][0]["path"], "secrets/key.env", "{result}");
    assert!(result.get("skipped_by_policy").is_none(), "{result}");
    assert_eq!(result["files_searched"], 3);
}

#[test]
fn search_text_does_not_return_a_denied_file_and_counts_it() {
    let env = Env::new();
    let result = env.run(DENY_SECRETS, "search_text", json!({"pattern": "."}));
    reveals_nothing(&result);
    let paths: Vec<&str> = result["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"notes/plan.md"), "{result}");
    assert_eq!(result["files_searched"], 2, "{result}");
    assert_eq!(result["skipped_by_policy"], 1, "{result}");
    assert!(
        note(&result).contains("1 file was skipped by policy"),
        "{result}"
    );
    // Searching inside the folder, or for the secret itself, finds nothing either.
    let result = env.run(
        DENY_SECRETS,
        "search_text",
        json!({"pattern": "hunter2", "path": "secrets"}),
    );
    assert_eq!(result["matches"], json!([]), "{result}");
    assert!(!result.to_string().contains("key.env"), "{result}");
    assert_eq!(result["skipped_by_policy"], 1);
}

#[test]
fn the_skipped_count_does_not_depend_on_the_glob_so_it_confirms_no_name() {
    let env = Env::new();
    for glob in ["key.*", "nothing-like-it.txt", "*.md"] {
        let result = env.run(
            DENY_SECRETS,
            "search_text",
            json!({"pattern": ".", "glob": glob}),
        );
        reveals_nothing(&result);
        assert_eq!(result["skipped_by_policy"], 1, "{glob}: {result}");
    }
}

#[test]
fn a_wildcard_path_or_a_folder_glob_reads_nothing_a_rule_denies() {
    // search_text reads `secrets/*` as the folder `secrets` with a glob, and a bare folder
    // name as a glob keeps that folder's files: neither may walk around the rule, and the
    // answer is the same whether the guessed name exists or not.
    let env = Env::new();
    for (path, glob) in [
        (Some("secrets/*"), None),
        (Some("secrets/key.*"), None),
        (Some("secrets/nothing-like-it*"), None),
        (Some("*"), Some("secrets")),
        (None, Some("secrets")),
        (Some("s*/*.env"), None),
    ] {
        let mut arguments = json!({"pattern": "schedule"});
        if let Some(path) = path {
            arguments["path"] = json!(path);
        }
        if let Some(glob) = glob {
            arguments["glob"] = json!(glob);
        }
        let report = env.submit(DENY_SECRETS, "search_text", arguments.clone());
        let result = report.result.clone();
        reveals_nothing(&result);
        reveals_nothing(&json!(report.reason));
        if report.outcome == GateOutcome::Executed {
            assert_eq!(result["matches"], json!([]), "{arguments}: {result}");
            assert_eq!(result["skipped_by_policy"], 1, "{arguments}: {result}");
        } else {
            assert_eq!(
                report.outcome,
                GateOutcome::Denied,
                "{arguments}: {report:?}"
            );
        }
    }
}

#[test]
fn find_related_does_not_rank_or_read_a_denied_file() {
    let env = Env::new();
    // "zebrafish" is in the target and the secret only: before, the secret ranked, confirming
    // the guessed word.
    let result = env.run(
        DENY_SECRETS,
        "find_related",
        json!({"path": "notes/plan.md"}),
    );
    reveals_nothing(&result);
    assert_eq!(result["skipped_by_policy"], 1, "{result}");
    assert_eq!(result["files_considered"], 1, "{result}");
    assert!(
        note(&result).contains("1 file was skipped by policy"),
        "{result}"
    );
    let related = result["related"].as_array().unwrap();
    assert!(
        related.iter().all(|r| r["path"] == "notes/todo.md"),
        "{result}"
    );
    // The secret itself cannot be the target.
    let report = env.submit(
        DENY_SECRETS,
        "find_related",
        json!({"path": "secrets/key.env"}),
    );
    assert_eq!(report.outcome, GateOutcome::Denied, "{report:?}");
}

#[test]
fn find_files_hides_a_denied_name_and_only_counts_it() {
    let env = Env::new();
    let result = env.run(DENY_SECRETS, "find_files", json!({"pattern": "**/*.env"}));
    reveals_nothing(&result);
    assert_eq!(result["files"], json!([]));
    assert_eq!(result["total"], 0);
    assert_eq!(result["hidden_by_policy"], 1, "{result}");
    assert!(note(&result).contains("hidden by policy"), "{result}");
    // The count is the same for a pattern that could not match it: no name oracle.
    let result = env.run(DENY_SECRETS, "find_files", json!({"pattern": "*.md"}));
    assert_eq!(result["total"], 2, "{result}");
    assert_eq!(result["hidden_by_policy"], 1, "{result}");
}

#[test]
fn list_dir_hides_a_denied_name_and_only_counts_it() {
    let env = Env::new();
    let result = env.run(DENY_SECRETS, "list_dir", json!({"path": "secrets"}));
    reveals_nothing(&result);
    assert_eq!(result["entries"], json!([]));
    assert_eq!(result["total"], 0);
    assert_eq!(result["hidden_by_policy"], 1, "{result}");
    assert!(
        note(&result).contains("1 entry hidden by policy"),
        "{result}"
    );
    // file_info on the folder counts only what a listing shows.
    let result = env.run(DENY_SECRETS, "file_info", json!({"path": "secrets"}));
    reveals_nothing(&result);
    assert_eq!(result["entries"], 0, "{result}");
    assert_eq!(result["hidden_by_policy"], 1, "{result}");
}

#[test]
fn the_named_file_stays_denied_for_read_file_and_file_info() {
    let env = Env::new();
    for tool in ["read_file", "file_info"] {
        let report = env.submit(DENY_SECRETS, tool, json!({"path": "secrets/key.env"}));
        assert_eq!(report.outcome, GateOutcome::Denied, "{tool}: {report:?}");
        assert_eq!(report.result, Value::Null);
        // A spelling of the same path is the same path.
        let report = env.submit(DENY_SECRETS, tool, json!({"path": "./secrets//key.env"}));
        assert_eq!(report.outcome, GateOutcome::Denied, "{tool}: {report:?}");
    }
}

#[test]
fn hide_names_false_lists_the_name_but_never_the_content() {
    let env = Env::new();
    let policy = format!("{DENY_SECRETS}hide_names = false\n");
    let result = env.run(&policy, "find_files", json!({"pattern": "**/*.env"}));
    assert_eq!(result["files"], json!(["secrets/key.env"]), "{result}");
    assert!(result.get("hidden_by_policy").is_none(), "{result}");
    let result = env.run(&policy, "list_dir", json!({"path": "secrets"}));
    assert_eq!(
        result["entries"],
        json!([{"name": "key.env", "kind": "file", "skipped_by_policy": true}]),
        "no size either: {result}"
    );
    let result = env.run(&policy, "search_text", json!({"pattern": "hunter2"}));
    assert_eq!(result["matches"], json!([]), "{result}");
    assert_eq!(result["skipped_by_policy"], 1, "{result}");
    let result = env.run(&policy, "find_related", json!({"path": "notes/plan.md"}));
    assert!(!result.to_string().contains("key.env"), "{result}");
    assert_eq!(result["skipped_by_policy"], 1, "{result}");
}

#[test]
fn files_under_an_ask_rule_are_skipped_by_recursive_tools_even_when_the_call_is_approved() {
    let env = Env::new();
    let ask = "[[rule]]\ntool = \"*\"\npaths = [\"secrets/**\"]\naction = \"ask\"\n";
    // The search itself needs no approval, and approving one would not cover files the
    // person was never shown.
    for approver in [&mut NoApprover as &mut dyn Approver, &mut AllowAll] {
        let report = env.submit_with(
            env.policy(ask),
            "search_text",
            json!({"pattern": "hunter2"}),
            approver,
        );
        assert_eq!(report.outcome, GateOutcome::Executed, "{report:?}");
        assert_eq!(report.result["matches"], json!([]), "{report:?}");
        assert_eq!(report.result["skipped_by_policy"], 1, "{report:?}");
    }
    // Names under an ask rule stay listed by default.
    let result = env.run(ask, "find_files", json!({"pattern": "**/*.env"}));
    assert_eq!(result["files"], json!(["secrets/key.env"]), "{result}");
    // The file itself is read with its own call, which asks.
    let report = env.submit(ask, "read_file", json!({"path": "secrets/key.env"}));
    assert_eq!(report.outcome, GateOutcome::ApprovalRequired, "{report:?}");
    let report = env.submit_with(
        env.policy(ask),
        "read_file",
        json!({"path": "secrets/key.env"}),
        &mut AllowAll,
    );
    assert_eq!(report.outcome, GateOutcome::Executed, "{report:?}");
    assert_eq!(report.result["content"], SECRET);
    // hide_names = true on an ask rule hides the name too.
    let hidden = format!("{ask}hide_names = true\n");
    let result = env.run(&hidden, "find_files", json!({"pattern": "**/*.env"}));
    assert_eq!(result["files"], json!([]), "{result}");
    assert_eq!(result["hidden_by_policy"], 1, "{result}");
}

#[test]
fn a_more_specific_allow_shows_its_files_to_the_tool_it_names() {
    let env = Env::new();
    let policy = format!(
        "{DENY_SECRETS}\n[[rule]]\ntool = \"search_text\"\npaths = [\"secrets/*.env\"]\naction = \"allow\"\n"
    );
    let result = env.run(&policy, "search_text", json!({"pattern": "hunter2"}));
    assert_eq!(result["matches"][0]["path"], "secrets/key.env", "{result}");
    assert!(result.get("skipped_by_policy").is_none(), "{result}");
    // Other tools still do not see it.
    let result = env.run(&policy, "find_files", json!({"pattern": "**/*.env"}));
    assert_eq!(result["hidden_by_policy"], 1, "{result}");
}

#[test]
fn visibility_follows_precedence_and_fails_closed_at_ties() {
    let rules = |order: bool| {
        let mut rules = vec![
            Rule::new("search_text", &[], PolicyAction::Ask).unwrap(),
            Rule::new("*", &["private/**"], PolicyAction::Ask).unwrap(),
            Rule::new("*", &["secrets/**"], PolicyAction::Deny).unwrap(),
            Rule::new("*", &["secrets/**"], PolicyAction::Deny)
                .unwrap()
                .with_hide_names(false)
                .unwrap(),
            Rule::new("*", &["docs/**"], PolicyAction::Allow).unwrap(),
        ];
        if order {
            rules.reverse();
        }
        Policy::from_rules(rules)
    };
    for policy in [rules(false), rules(true)] {
        // A rule with paths beats an equally specific one without; hiding beats naming.
        assert_eq!(
            policy.visibility("search_text", "private/a"),
            Visibility::Skipped
        );
        assert_eq!(
            policy.visibility("search_text", "secrets/a"),
            Visibility::Hidden
        );
        // A rule without paths was the call's business: the file is shown.
        assert_eq!(
            policy.visibility("search_text", "docs/a"),
            Visibility::Shown
        );
        assert_eq!(policy.visibility("search_text", "a"), Visibility::Shown);
        assert_eq!(policy.visibility("list_dir", "a"), Visibility::Shown);
    }
    // A deny for reading holds for every tool that reads, not only read_file; it does not
    // keep names from the listing tools.
    let only_read = Policy::from_rules(vec![Rule::new(
        "read_file",
        &["secrets/**"],
        PolicyAction::Deny,
    )
    .unwrap()]);
    for tool in ["read_file", "search_text", "find_related"] {
        assert_eq!(
            only_read.visibility(tool, "secrets/a"),
            Visibility::Hidden,
            "{tool}"
        );
    }
    assert_eq!(
        only_read.visibility("find_files", "secrets/a"),
        Visibility::Shown
    );
    // An allow widens only the tool it names.
    let allow_read = Policy::from_rules(vec![
        Rule::new("*", &["secrets/**"], PolicyAction::Deny).unwrap(),
        Rule::new("read_file", &["secrets/**"], PolicyAction::Allow).unwrap(),
    ]);
    assert_eq!(
        allow_read.visibility("search_text", "secrets/a"),
        Visibility::Hidden
    );
    assert_eq!(
        Policy::safe_default().visibility("search_text", "secrets/a"),
        Visibility::Shown
    );
}

#[test]
fn hide_names_is_refused_where_it_could_have_no_effect() {
    let registry = desk_registry();
    let load = |text: &str| Policy::from_toml_str(text, "policy.toml", &registry);
    for (text, why) in [
        (
            "[[rule]]\ntool = \"*\"\npaths = [\"a/**\"]\naction = \"allow\"\nhide_names = true\n",
            "allow rule",
        ),
        (
            "[[rule]]\ntool = \"read_file\"\naction = \"deny\"\n\nhide_names = false\n",
            "without `paths`",
        ),
    ] {
        let err = load(text).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, PolicyError::HideNames { .. }), "{message}");
        assert!(message.contains("policy.toml line"), "{message}");
        assert!(message.contains(why), "{message}");
    }
    let err = load("[[rule]]\ntool = \"read_file\"\naction = \"deny\"\n\nhide_names = false\n")
        .unwrap_err();
    assert!(err.to_string().contains("line 5"), "{err}");
    assert!(load(
        "[[rule]]\ntool = \"*\"\npaths = [\"a\"]\naction = \"deny\"\nhide_names = \"yes\"\n"
    )
    .is_err());
    assert!(Rule::new("*", &[], PolicyAction::Deny)
        .unwrap()
        .with_hide_names(true)
        .is_err());
    assert!(Rule::new("*", &["a/**"], PolicyAction::Ask)
        .unwrap()
        .with_hide_names(true)
        .is_ok());
}

const DENY_READ_ONLY: &str =
    "[[rule]]\ntool = \"read_file\"\npaths = [\"secrets/**\"]\naction = \"deny\"\n";
const ASK_READ_ONLY: &str =
    "[[rule]]\ntool = \"read_file\"\npaths = [\"secrets/**\"]\naction = \"ask\"\n";

/// The regression for the author's report: a rule that names only read_file kept the secret
/// from read_file, while search_text returned its lines, find_related ranked it (and, given
/// it as the target, named its words), file_info gave its hash and line count, and
/// edit/replace/delete_file put its content in their diff. A person who denies reading a path
/// means that no tool reads it.
#[test]
fn a_deny_for_read_file_alone_keeps_the_content_from_every_tool() {
    let env = Env::new();
    let result = env.run(
        DENY_READ_ONLY,
        "search_text",
        json!({"pattern": "API|hunter|zebra"}),
    );
    reveals_nothing(&result);
    assert_eq!(result["skipped_by_policy"], 1, "{result}");
    let result = env.run(
        DENY_READ_ONLY,
        "search_text",
        json!({"pattern": "x", "path": "secrets"}),
    );
    reveals_nothing(&result);
    let result = env.run(
        DENY_READ_ONLY,
        "find_related",
        json!({"path": "notes/plan.md"}),
    );
    reveals_nothing(&result);
    assert_eq!(result["skipped_by_policy"], 1, "{result}");
    for (tool, args) in [
        ("read_file", json!({"path": "secrets/key.env"})),
        ("find_related", json!({"path": "secrets/key.env"})),
        ("file_info", json!({"path": "secrets/key.env"})),
        (
            "search_text",
            json!({"pattern": "hunter2", "path": "secrets/key.env"}),
        ),
        (
            "edit_file",
            json!({"path": "secrets/key.env", "old_text": "API_KEY=h", "new_text": "x"}),
        ),
        (
            "replace_file",
            json!({"path": "secrets/key.env", "content": "x"}),
        ),
        ("delete_file", json!({"path": "./secrets//key.env"})),
        (
            "table_stats",
            json!({"path": "secrets/key.env", "column": "API_KEY=hunter2"}),
        ),
    ] {
        let report = env.submit_with(env.policy(DENY_READ_ONLY), tool, args, &mut AllowAll);
        assert_eq!(report.outcome, GateOutcome::Denied, "{tool}: {report:?}");
        assert_eq!(report.result, Value::Null, "{tool}");
        assert!(!report.reason.contains("hunter2"), "{tool}: {report:?}");
    }
    assert_eq!(
        std::fs::read_to_string(env.root.join("secrets/key.env")).unwrap(),
        SECRET
    );
    // Names are not what a read rule protects: the listing tools still list it.
    let result = env.run(DENY_READ_ONLY, "find_files", json!({"pattern": "*.env"}));
    assert_eq!(result["files"], json!(["secrets/key.env"]), "{result}");
}

#[test]
fn a_deny_for_list_dir_alone_keeps_the_names_from_every_tool_that_lists() {
    let env = Env::new();
    let deny_list = "[[rule]]\ntool = \"list_dir\"\npaths = [\"secrets/**\"]\naction = \"deny\"\n";
    let result = env.run(deny_list, "find_files", json!({"pattern": "**"}));
    reveals_nothing(&result);
    assert_eq!(result["hidden_by_policy"], 1, "{result}");
    let result = env.run(deny_list, "search_text", json!({"pattern": "API"}));
    reveals_nothing(&result);
    let result = env.run(deny_list, "list_dir", json!({"path": "secrets"}));
    reveals_nothing(&result);
    // find_files names the same files as list_dir.
    let deny_find = deny_list.replace("list_dir", "find_files");
    let result = env.run(&deny_find, "list_dir", json!({"path": "secrets"}));
    reveals_nothing(&result);
    assert_eq!(result["hidden_by_policy"], 1, "{result}");
}

/// Under an ask for reading, a change to the file is asked about before its tool reads it,
/// and its diff never goes back to the caller: before, a change the person refused (or that
/// nobody could approve) returned the whole diff, i.e. the file, and edit_file's refusals
/// ("old_text was not found") told a guessed prefix of the secret from a wrong one.
#[test]
fn under_an_ask_for_reading_a_change_neither_returns_the_content_nor_answers_guesses() {
    let env = Env::new();
    for policy in [
        ASK_READ_ONLY.to_string(),
        DENY_SECRETS.replace("deny", "ask"),
    ] {
        let mut outcomes = Vec::new();
        for guess in ["API_KEY=h", "API_KEY=x"] {
            let args = json!({"path": "secrets/key.env", "old_text": guess, "new_text": "y"});
            let report = env.submit_with(env.policy(&policy), "edit_file", args, &mut NoApprover);
            assert_eq!(report.outcome, GateOutcome::ApprovalRequired, "{report:?}");
            assert!(!report.to_string_lossy().contains("hunter2"), "{report:?}");
            outcomes.push((report.outcome, report.result));
        }
        assert_eq!(
            outcomes[0], outcomes[1],
            "a right and a wrong guess look alike"
        );
        for (tool, args) in [
            (
                "replace_file",
                json!({"path": "secrets/key.env", "content": "x"}),
            ),
            ("delete_file", json!({"path": "secrets/key.env"})),
        ] {
            // The person allows the read, sees the diff, and says no: the model gets no diff.
            let mut person = ScriptedApprover::new([
                ApprovalDecision::AllowOnce,
                ApprovalDecision::Deny {
                    reason: "no".into(),
                },
            ]);
            let report = env.submit_with(env.policy(&policy), tool, args, &mut person);
            assert_eq!(report.outcome, GateOutcome::ApprovalRequired, "{report:?}");
            assert!(!report.to_string_lossy().contains("hunter2"), "{report:?}");
            assert!(report.result.get("diff").is_none(), "{report:?}");
            assert_eq!(report.result["diff_withheld"], true, "{report:?}");
            assert_eq!(person.seen.len(), 2);
            assert!(person.seen[0].reads_protected_content && person.seen[0].diff.is_empty());
            assert!(
                person.seen[1].diff.contains("hunter2"),
                "the person sees it"
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(env.root.join("secrets/key.env")).unwrap(),
        SECRET
    );
}

#[test]
fn an_allowed_change_to_a_file_the_model_may_not_read_is_applied_without_its_diff() {
    let env = Env::new();
    // Every tool asks under secrets/, but edit_file is allowed there by name (more specific).
    let policy = format!(
        "{}\n[[rule]]\ntool = \"edit_file\"\npaths = [\"secrets/*.env\"]\naction = \"allow\"\n",
        DENY_SECRETS.replace("deny", "ask")
    );
    let args = json!({"path": "secrets/key.env", "old_text": "zebrafish", "new_text": "koi"});
    let report = env.submit_with(env.policy(&policy), "edit_file", args, &mut NoApprover);
    assert_eq!(report.outcome, GateOutcome::Executed, "{report:?}");
    assert!(!report.to_string_lossy().contains("hunter2"), "{report:?}");
    assert_eq!(report.result["diff_withheld"], true, "{report:?}");
    // Where reading is allowed, the diff is shown as before.
    let args = json!({"path": "notes/todo.md", "old_text": "water", "new_text": "feed"});
    let report = env.submit_with(env.policy(&policy), "edit_file", args, &mut AllowAll);
    assert_eq!(report.outcome, GateOutcome::Executed, "{report:?}");
    assert!(
        report.result["diff"].as_str().unwrap().contains("+feed"),
        "{report:?}"
    );
}

trait Lossy {
    fn to_string_lossy(&self) -> String;
}

impl Lossy for GateReport {
    fn to_string_lossy(&self) -> String {
        format!("{} {}", self.reason, self.result)
    }
}

/// Before, `paths = ["secrets"]` denied listing the folder but read_file of `secrets/key.env`
/// ran, `["secrets/"]` matched nothing at all (paths are matched without a trailing slash), and
/// `["secrets/*"]` left `secrets/deeper/x.txt` readable.
#[test]
fn a_deny_for_a_folder_covers_everything_in_it_however_it_is_written() {
    let env = Env::new();
    std::fs::create_dir_all(env.root.join("secrets/deeper")).unwrap();
    std::fs::write(env.root.join("secrets/deeper/x.txt"), "hunter2 again\n").unwrap();
    for glob in [
        "secrets",
        "secrets/",
        "./secrets/",
        "secrets/*",
        "secrets/**",
        "*crets",
    ] {
        let policy = format!("[[rule]]\ntool = \"*\"\npaths = [\"{glob}\"]\naction = \"deny\"\n");
        for file in ["secrets/key.env", "secrets/deeper/x.txt"] {
            let report = env.submit(&policy, "read_file", json!({ "path": file }));
            assert_eq!(
                report.outcome,
                GateOutcome::Denied,
                "{glob} {file}: {report:?}"
            );
        }
        let result = env.run(&policy, "search_text", json!({"pattern": "hunt.r"}));
        reveals_nothing(&result);
        assert_eq!(result["skipped_by_policy"], 2, "{glob}: {result}");
        let result = env.run(&policy, "find_files", json!({"pattern": "**"}));
        assert!(!result.to_string().contains("secrets/"), "{glob}: {result}");
    }
    // An allow widens nothing: "notes" allows a call on the folder, not its files.
    let policy = "[[rule]]\ntool = \"edit_file\"\npaths = [\"notes\"]\naction = \"allow\"\n";
    let args = json!({"path": "notes/todo.md", "old_text": "water", "new_text": "feed"});
    let report = env.submit(policy, "edit_file", args);
    assert_eq!(report.outcome, GateOutcome::ApprovalRequired, "{report:?}");
}

/// On a case-insensitive filesystem (ext4 casefold, vfat, a Mac or Windows share)
/// `Secrets/key.env` opens `secrets/key.env`: a deny must hold for every spelling.
#[test]
fn a_deny_or_ask_ignores_letter_case_and_an_allow_does_not() {
    let policy = Policy::from_rules(vec![
        Rule::new("*", &["secrets/**"], PolicyAction::Deny).unwrap(),
        Rule::new("*", &["private/*.txt"], PolicyAction::Ask).unwrap(),
        Rule::new("edit_file", &["notes/**"], PolicyAction::Allow).unwrap(),
    ]);
    for path in ["Secrets/key.env", "SECRETS/KEY.ENV", "./sEcReTs//a/b"] {
        assert_eq!(
            policy.decide("read_file", false, Some(path)).action,
            PolicyAction::Deny,
            "{path}"
        );
        assert_eq!(policy.visibility("search_text", path), Visibility::Hidden);
    }
    assert_eq!(
        policy
            .decide("read_file", false, Some("Private/A.TXT"))
            .action,
        PolicyAction::Ask
    );
    assert_eq!(
        policy.decide("edit_file", true, Some("Notes/a.md")).action,
        PolicyAction::Ask,
        "the allow is for notes/, not Notes/"
    );
    assert_eq!(
        policy.decide("edit_file", true, Some("notes/a.md")).action,
        PolicyAction::Allow
    );
}

/// A name that cannot be addressed (a newline in it, put there outside Rein) was listed under
/// `unaddressable` whatever the policy: `password_is_hunter2\n.txt` under a hidden folder.
#[test]
fn a_name_that_cannot_be_addressed_is_hidden_by_policy_like_any_other() {
    let env = Env::new();
    std::fs::write(env.root.join("secrets/hunter2\n.txt"), "x").unwrap();
    std::fs::write(env.root.join("notes/odd\n.txt"), "x").unwrap();
    let result = env.run(DENY_SECRETS, "list_dir", json!({"path": "secrets"}));
    reveals_nothing(&result);
    assert!(result.get("unaddressable").is_none(), "{result}");
    assert_eq!(result["hidden_by_policy"], 2, "{result}");
    // Elsewhere it is still listed, so nothing is hidden silently.
    let result = env.run(DENY_SECRETS, "list_dir", json!({"path": "notes"}));
    assert_eq!(result["unaddressable"], json!(["odd\n.txt"]), "{result}");
}

/// Each `rein tool` gives its own policy, and a call id replays across processes: before, a
/// read recorded under no policy was replayed, secret and all, to a call with the same id under
/// a policy that denies it, and so was a search that had quoted the secret.
#[test]
fn a_result_recorded_under_another_policy_is_not_replayed_where_this_one_denies() {
    let env = Env::new();
    let ws = Workspace::open(&env.root).unwrap();
    let submit = |policy: &str, tool: &str, id: &str, args: Value| {
        let mut gate = Gate::new(GateConfig::desk(
            &env.registry,
            &ws,
            &env.journal,
            env.policy(policy),
            None,
        ));
        let call = ToolCall {
            id: id.into(),
            tool: tool.into(),
            arguments: args,
        };
        gate.submit(&call, &mut NoApprover)
    };
    let read = json!({"path": "secrets/key.env"});
    let search = json!({"pattern": "API"});
    assert_eq!(
        submit("", "read_file", "r1", read.clone()).outcome,
        GateOutcome::Executed
    );
    assert_eq!(
        submit("", "search_text", "s1", search.clone()).outcome,
        GateOutcome::Executed
    );
    for (tool, id, args) in [("read_file", "r1", read), ("search_text", "s1", search)] {
        let report = submit(DENY_SECRETS, tool, id, args.clone());
        assert_eq!(report.outcome, GateOutcome::Denied, "{tool}: {report:?}");
        assert!(!report.to_string_lossy().contains("hunter2"), "{report:?}");
        // Under the policy it ran with, it still replays.
        let report = submit("", tool, id, args);
        assert_eq!(report.outcome, GateOutcome::Replayed, "{tool}: {report:?}");
    }
}

/// The same for a policy that asks: a recorded read is not shown again unless the person
/// allows it, and a recorded change's diff is not shown where reading the file asks.
#[test]
fn a_result_recorded_under_another_policy_is_asked_about_where_this_one_asks() {
    let env = Env::new();
    let ask = DENY_SECRETS.replace("deny", "ask");
    let ws = Workspace::open(&env.root).unwrap();
    let submit = |policy: &str, tool: &str, id: &str, args: Value, approver: &mut dyn Approver| {
        let mut gate = Gate::new(GateConfig::desk(
            &env.registry,
            &ws,
            &env.journal,
            env.policy(policy),
            None,
        ));
        let call = ToolCall {
            id: id.into(),
            tool: tool.into(),
            arguments: args,
        };
        gate.submit(&call, approver)
    };
    let read = json!({"path": "secrets/key.env"});
    let edit = json!({"path": "secrets/key.env", "old_text": "zebrafish", "new_text": "koi"});
    let r = submit("", "read_file", "r1", read.clone(), &mut NoApprover);
    assert_eq!(r.outcome, GateOutcome::Executed);
    let r = submit("", "edit_file", "e1", edit.clone(), &mut AllowAll);
    assert_eq!(r.outcome, GateOutcome::Executed);
    assert!(r.result["diff"].as_str().unwrap().contains("hunter2"));

    let r = submit(&ask, "read_file", "r1", read.clone(), &mut NoApprover);
    assert_eq!(r.outcome, GateOutcome::ApprovalRequired, "{r:?}");
    assert!(!r.to_string_lossy().contains("hunter2"), "{r:?}");
    let r = submit(&ask, "read_file", "r1", read, &mut AllowAll);
    assert_eq!(r.outcome, GateOutcome::Replayed, "{r:?}");
    let r = submit(&ask, "edit_file", "e1", edit, &mut NoApprover);
    assert_eq!(r.outcome, GateOutcome::Replayed, "{r:?}");
    assert!(!r.to_string_lossy().contains("hunter2"), "{r:?}");
    assert_eq!(r.result["diff_withheld"], true, "{r:?}");
}
