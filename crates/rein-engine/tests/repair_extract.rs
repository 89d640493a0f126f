//! Reading one action from a model's reply: clean, repairable and unrecoverable replies.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use proptest::prelude::*;
use rein_engine::repair::{extract_action, extract_action_detailed, Action};
use serde_json::{json, Map, Value};

fn action(thought: Option<&str>, name: &str, params: Value) -> Action {
    let parameters = match params {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    Action {
        thought: thought.map(str::to_string),
        action: name.to_string(),
        parameters,
    }
}

fn read(path: &str) -> Action {
    action(Some("look"), "read_file", json!({"path": path}))
}

#[test]
fn clean_reply_needs_no_repair() {
    let r = extract_action_detailed(
        r#"{"thought": "look", "action": "read_file", "parameters": {"path": "a.md"}}"#,
    )
    .unwrap();
    assert_eq!(r.action, read("a.md"));
    assert!(r.repairs.is_empty(), "{:?}", r.repairs);
}

#[test]
fn repairs_small_faults() {
    let cases: &[(&str, &str)] = &[
        ("chatter and fences", "Sure! Here is my action:\n```json\n{\"thought\": \"look\", \"action\": \"read_file\", \"parameters\": {\"path\": \"a.md\"}}\n```\nLet me know."),
        ("trailing commas", r#"{"thought": "look", "action": "read_file", "parameters": {"path": "a.md",},}"#),
        ("missing closers", r#"{"thought": "look", "action": "read_file", "parameters": {"path": "a.md""#),
        ("missing closers after comma", "{\"thought\": \"look\", \"action\": \"read_file\", \"parameters\": {\"path\": \"a.md\",\n"),
        ("single quotes", r#"{'thought': 'look', 'action': 'read_file', 'parameters': {'path': 'a.md'}}"#),
        ("unquoted keys", r#"{thought: "look", action: "read_file", parameters: {path: "a.md"}}"#),
        ("comments", "{\"thought\": \"look\", // why\n \"action\": \"read_file\", /* tool */ \"parameters\": {\"path\": \"a.md\"}}"),
        ("parameters as a string", r#"{"thought": "look", "action": "read_file", "parameters": "{\"path\": \"a.md\"}"}"#),
        ("spaces in the name", r#"{"thought": "look", "action": " read_file ", "parameters": {"path": "a.md"}}"#),
        ("braces in chatter first", "I will call {read_file} now. {\"thought\": \"look\", \"action\": \"read_file\", \"parameters\": {\"path\": \"a.md\"}}"),
        ("example object first", "Params look like {\"path\": \"x\"}.\n{\"thought\": \"look\", \"action\": \"read_file\", \"parameters\": {\"path\": \"a.md\"}}"),
        ("raw newline in a string", "{\"thought\": \"look\", \"action\": \"read_file\", \"parameters\": {\"path\": \"a.md\"}, \"x\": \"a\nb\"}"),
    ];
    for (name, reply) in cases {
        let r = extract_action_detailed(reply).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.action, read("a.md"), "{name}");
        assert!(!r.repairs.is_empty(), "{name}: a repair must be reported");
    }
}

#[test]
fn python_literals_and_defaults() {
    let a = extract_action(
        r#"{"action": "finish", "parameters": {"ok": True, "skip": False, "x": None}}"#,
    )
    .unwrap();
    assert_eq!(
        a,
        action(
            None,
            "finish",
            json!({"ok": true, "skip": false, "x": null})
        )
    );
    let a = extract_action(r#"{"action": "list_dir"}"#).unwrap();
    assert_eq!(a, action(None, "list_dir", json!({})));
    let a = extract_action(r#"{"action": "list_dir", "parameters": null}"#).unwrap();
    assert!(a.parameters.is_empty());
}

#[test]
fn strings_with_braces_and_escapes_are_respected() {
    let reply = r#"{"thought": "a } and { and \" and \\", "action": "create_file", "parameters": {"path": "o.md", "content": "x {{y}} ]"}} trailing }"#;
    let a = extract_action(reply).unwrap();
    assert_eq!(a.thought.as_deref(), Some("a } and { and \" and \\"));
    assert_eq!(a.parameters["content"], "x {{y}} ]");
}

#[test]
fn takes_the_first_action_of_several() {
    let a = extract_action(r#"{"action": "list_dir"} {"action": "finish"}"#).unwrap();
    assert_eq!(a.action, "list_dir");
}

#[test]
fn unrecoverable_replies_explain_the_format() {
    let cases: &[(&str, &str)] = &[
        ("I think the answer is 42.", "no JSON object"),
        ("", "no JSON object"),
        (
            r#"{"tool": "read_file", "parameters": {}}"#,
            "no \"action\" key",
        ),
        (r#"{"action": 3}"#, "must be a tool name string"),
        (r#"{"action": ""}"#, "empty"),
        (
            r#"{"action": "read_file", "parameters": [1, 2]}"#,
            "must be an object",
        ),
        (
            r#"{"action": "read_file", "parameters": "a.md"}"#,
            "must be an object",
        ),
        (r#"{"action": read_file}"#, "could not be read"),
        (
            r#"{"action": "read_file", "parameters": {"path"}}"#,
            "could not be read",
        ),
        (r#"{"action": "x"]"#, "no JSON object"),
    ];
    for (reply, want) in cases {
        let e = extract_action(reply).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("Your reply was not one JSON object of the form {\"thought\": \"...\", \"action\": \"<tool name>\", \"parameters\": {...}};"), "{msg}");
        assert!(msg.contains(want), "{reply:?}: {msg}");
        assert!(msg.ends_with("Reply with exactly one such object and nothing else."));
    }
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        ".*".prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn any_action() -> impl Strategy<Value = Action> {
    (
        prop::option::of(".*"),
        "[a-z][a-z_]{0,19}",
        prop::collection::btree_map("[a-z_]{1,10}|.{0,6}", json_value(), 0..5),
    )
        .prop_map(|(thought, name, params)| Action {
            thought,
            action: name,
            parameters: params.into_iter().collect(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn valid_actions_round_trip_unchanged(a in any_action(), pretty in any::<bool>(), fence in any::<bool>(), chatter in "[a-zA-Z .,!?\n]{0,40}") {
        let body = if pretty { serde_json::to_string_pretty(&a).unwrap() } else { serde_json::to_string(&a).unwrap() };
        let clean = extract_action_detailed(&body).unwrap();
        prop_assert_eq!(&clean.action, &a);
        prop_assert!(clean.repairs.is_empty(), "{:?}", clean.repairs);
        let wrapped = if fence { format!("{chatter}\n```json\n{body}\n```\n{chatter}") } else { format!("{chatter}{body}{chatter}") };
        prop_assert_eq!(extract_action(&wrapped).unwrap(), a);
    }

    #[test]
    fn never_panics(s in ".{0,200}") {
        let _ = extract_action(&s);
    }
}

/// The repairer never shortens a string to fit a schema cap: an over-long finish summary comes
/// out whole (and is refused whole by the agent loop), also when its closing quote is missing.
#[test]
fn an_over_long_summary_is_read_whole_never_cut_to_the_cap() {
    let long = "word ".repeat(200);
    let reply = format!(
        "{{\"thought\": \"done\", \"action\": \"finish\", \"parameters\": {{\"summary\": \"{long}\"}}}}"
    );
    let got = rein_engine::repair::extract_action_detailed(&reply).unwrap();
    assert!(got.repairs.is_empty(), "{:?}", got.repairs);
    assert_eq!(got.action.parameters["summary"], long.as_str());
    let open = format!(
        "{{\"thought\": \"done\", \"action\": \"finish\", \"parameters\": {{\"summary\": \"{long}"
    );
    if let Ok(got) = rein_engine::repair::extract_action_detailed(&open) {
        assert!(!got.repairs.is_empty(), "a repair is reported");
        assert_eq!(got.action.parameters["summary"], long.as_str());
    }
}
