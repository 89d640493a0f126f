#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Policy files: parsing, clear errors naming the file and line, safe defaults, precedence.

use rein_engine::policy::{Policy, PolicyAction, PolicyError, Rule};
use rein_workspace::{desk_registry, sandbox_registry};

fn load(text: &str) -> Result<Policy, PolicyError> {
    Policy::from_toml_str(text, "policy.toml", &desk_registry())
}

fn action(policy: &Policy, tool: &str, mutates: bool, path: Option<&str>) -> PolicyAction {
    policy.decide(tool, mutates, path).action
}

#[test]
fn defaults_allow_reads_and_ask_for_every_change() {
    let p = Policy::safe_default();
    assert_eq!(
        action(&p, "read_file", false, Some("a")),
        PolicyAction::Allow
    );
    assert_eq!(action(&p, "list_dir", false, None), PolicyAction::Allow);
    for tool in ["create_file", "edit_file", "replace_file", "delete_file"] {
        assert_eq!(
            action(&p, tool, true, Some("a")),
            PolicyAction::Ask,
            "{tool}"
        );
    }
    assert!(p.decide("edit_file", true, None).source.contains("default"));
    // An empty file is the defaults.
    let empty = load("").unwrap();
    assert_eq!(
        action(&empty, "delete_file", true, Some("a")),
        PolicyAction::Ask
    );
}

#[test]
fn a_policy_file_loads_and_names_its_rules() {
    let text = r#"
# comment
[[rule]]
tool = "delete_file"
action = "deny"

[[rule]]
tool = "edit_file"
paths = ["notes/**", "*.md"]
action = "allow"
"#;
    let p = load(text).unwrap();
    let d = p.decide("delete_file", true, Some("x.txt"));
    assert_eq!(d.action, PolicyAction::Deny);
    assert!(d.source.contains("policy.toml line 4"), "{}", d.source);
    assert_eq!(
        action(&p, "edit_file", true, Some("notes/a/b.txt")),
        PolicyAction::Allow
    );
    assert_eq!(
        action(&p, "edit_file", true, Some("README.md")),
        PolicyAction::Allow
    );
    // `*` does not cross folders.
    assert_eq!(
        action(&p, "edit_file", true, Some("docs/README.md")),
        PolicyAction::Ask
    );
    // Paths are normalised before matching.
    assert_eq!(
        action(&p, "edit_file", true, Some("./notes//a.txt")),
        PolicyAction::Allow
    );
    // A path rule does not match a call without a path.
    assert_eq!(action(&p, "edit_file", true, None), PolicyAction::Ask);
}

#[test]
fn the_most_specific_rule_wins_and_deny_wins_ties() {
    let p = Policy::from_rules(vec![
        Rule::new("*", &[], PolicyAction::Allow).unwrap(),
        Rule::new("*", &["secrets/**"], PolicyAction::Deny).unwrap(),
        Rule::new("read_file", &[], PolicyAction::Allow).unwrap(),
        Rule::new("read_file", &["secrets/public/**"], PolicyAction::Allow).unwrap(),
        Rule::new("edit_file", &[], PolicyAction::Allow).unwrap(),
        Rule::new("edit_file", &[], PolicyAction::Deny).unwrap(),
    ]);
    // Tool + paths (2) beats a path-only deny (1).
    assert_eq!(
        action(&p, "read_file", false, Some("secrets/public/a")),
        PolicyAction::Allow
    );
    // Equal specificity (1 each): the deny on secrets beats the read_file allow.
    assert_eq!(
        action(&p, "read_file", false, Some("secrets/key")),
        PolicyAction::Deny
    );
    // Wildcard with paths (1) beats wildcard alone (0).
    assert_eq!(
        action(&p, "list_dir", false, Some("secrets")),
        PolicyAction::Allow
    );
    assert_eq!(
        action(&p, "list_dir", false, Some("secrets/x")),
        PolicyAction::Deny
    );
    assert_eq!(
        action(&p, "delete_file", true, Some("a")),
        PolicyAction::Allow
    );
    // Two rules for the same tool: deny wins.
    assert_eq!(action(&p, "edit_file", true, Some("a")), PolicyAction::Deny);
    // Rule order does not matter.
    let reversed = Policy::from_rules(vec![
        Rule::new("edit_file", &[], PolicyAction::Deny).unwrap(),
        Rule::new("edit_file", &[], PolicyAction::Allow).unwrap(),
    ]);
    assert_eq!(
        action(&reversed, "edit_file", true, Some("a")),
        PolicyAction::Deny
    );
    // Ask beats allow at equal specificity too.
    let ask = Policy::from_rules(vec![
        Rule::new("create_file", &[], PolicyAction::Allow).unwrap(),
        Rule::new("create_file", &[], PolicyAction::Ask).unwrap(),
    ]);
    assert_eq!(
        action(&ask, "create_file", true, Some("a")),
        PolicyAction::Ask
    );
}

#[test]
fn an_unknown_tool_is_refused_with_its_line() {
    let err =
        load("[[rule]]\naction = \"allow\"\n\n[[rule]]\ntool = \"shell\"\naction = \"allow\"\n")
            .unwrap_err();
    assert!(matches!(
        err,
        PolicyError::Toml { .. } | PolicyError::UnknownTool { .. }
    ));
    let err = load("[[rule]]\ntool = \"read_file\"\naction = \"allow\"\n\n[[rule]]\ntool = \"shell\"\naction = \"allow\"\n")
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, PolicyError::UnknownTool { .. }), "{text}");
    assert!(text.contains("policy.toml line 6"), "{text}");
    assert!(
        text.contains("\"shell\"") && text.contains("read_file"),
        "{text}"
    );
    // Sandbox tool names are checked against the sandbox registry.
    let ok = Policy::from_toml_str(
        "[[rule]]\ntool = \"set_variable\"\naction = \"allow\"\n",
        "p.toml",
        &sandbox_registry(),
    );
    assert!(ok.is_ok());
    assert!(load("[[rule]]\ntool = \"set_variable\"\naction = \"allow\"\n").is_err());
}

#[test]
fn an_unknown_action_is_refused_with_its_line() {
    let err = load("[[rule]]\ntool = \"read_file\"\n\naction = \"maybe\"\n").unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, PolicyError::UnknownAction { .. }), "{text}");
    assert!(text.contains("policy.toml line 4"), "{text}");
    assert!(text.contains("allow, ask or deny"), "{text}");
}

#[test]
fn bad_toml_and_unknown_fields_name_the_file_and_line() {
    for (text, line) in [
        ("[[rule]]\ntool = \"read_file\"\naction = allow\n", "line 3"),
        (
            "[[rule]]\ntool = \"read_file\"\naction = \"allow\"\npath = [\"a\"]\n",
            "line 4",
        ),
        (
            "[[rules]]\ntool = \"read_file\"\naction = \"allow\"\n[[rulez]]\n",
            "line 4",
        ),
        ("[[rule]]\ntool = 5\naction = \"allow\"\n", "line 2"),
    ] {
        let err = load(text).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, PolicyError::Toml { .. }), "{message}");
        assert!(message.contains("policy.toml"), "{message}");
        assert!(message.contains(line), "{text:?}: {message}");
        assert!(!message.contains('\n'), "one line: {message}");
    }
}

#[test]
fn bad_globs_and_empty_paths_are_refused() {
    let err =
        load("[[rule]]\ntool = \"read_file\"\npaths = [\"a[\"]\naction = \"deny\"\n").unwrap_err();
    assert!(matches!(err, PolicyError::Glob { .. }), "{err}");
    assert!(err.to_string().contains("line 3"), "{err}");
    let err = load("[[rule]]\ntool = \"read_file\"\npaths = []\naction = \"deny\"\n").unwrap_err();
    assert!(matches!(err, PolicyError::EmptyPaths { .. }), "{err}");
    assert!(Rule::new("read_file", &["{"], PolicyAction::Deny).is_err());
}

#[test]
fn a_missing_policy_file_names_the_path() {
    let err = Policy::from_toml_file(
        std::path::Path::new("/nonexistent/policy.toml"),
        &desk_registry(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("/nonexistent/policy.toml"), "{err}");
}
