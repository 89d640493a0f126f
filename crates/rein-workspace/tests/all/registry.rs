//! Registry: names, schemas, the action schema, validation and the input cap.

use rein_workspace::desk::FINISH_SUMMARY_MAX_CHARS;
use rein_workspace::{
    desk_registry, sandbox_registry, RegistryError, Tool, ToolContext, ToolError, ToolOutput,
    ToolRegistry, MAX_INPUT_CHARS,
};
use serde_json::{json, Value};

use crate::support::Fixture;

#[test]
fn desk_and_sandbox_tool_names_are_exact() {
    assert_eq!(
        desk_registry().names(),
        vec![
            "list_dir",
            "read_file",
            "search_text",
            "find_files",
            "find_related",
            "file_info",
            "table_stats",
            "table_rows",
            "folder_stats",
            "calculate",
            "create_file",
            "edit_file",
            "edit_lines",
            "replace_file",
            "delete_file",
            "write_json",
            "write_sections",
            "finish"
        ]
    );
    assert_eq!(
        sandbox_registry().names(),
        vec![
            "create_file",
            "read_file",
            "list_files",
            "delete_file",
            "set_variable",
            "get_variable",
            "final_answer"
        ]
    );
}

#[test]
fn mutation_flags() {
    let desk = desk_registry();
    for name in ["create_file", "edit_file", "replace_file", "delete_file"] {
        assert!(desk.get(name).unwrap().mutates(), "{name}");
    }
    for name in [
        "list_dir",
        "read_file",
        "search_text",
        "find_files",
        "find_related",
        "file_info",
        "finish",
    ] {
        assert!(!desk.get(name).unwrap().mutates(), "{name}");
    }
    let sandbox = sandbox_registry();
    for name in ["create_file", "delete_file", "set_variable", "final_answer"] {
        assert!(sandbox.get(name).unwrap().mutates(), "{name}");
    }
}

#[test]
fn every_parameter_schema_is_a_closed_object_and_paths_are_called_path() {
    for registry in [desk_registry(), sandbox_registry()] {
        for tool in registry.schemas().as_array().unwrap() {
            let params = &tool["parameters"];
            assert_eq!(params["type"], "object", "{tool}");
            assert_eq!(params["additionalProperties"], false, "{tool}");
            for (key, prop) in params["properties"].as_object().unwrap() {
                assert!(
                    !key.contains("file") || key == "path",
                    "file arguments are named path: {key}"
                );
                if prop["type"] == "string" {
                    assert!(
                        prop["maxLength"].as_u64().unwrap() <= MAX_INPUT_CHARS as u64,
                        "{tool}"
                    );
                }
            }
        }
    }
}

fn action_validator(registry: &ToolRegistry) -> jsonschema::Validator {
    jsonschema::validator_for(&registry.action_schema()).unwrap()
}

#[test]
fn action_schema_accepts_a_good_action_and_rejects_bad_ones() {
    let registry = desk_registry();
    let v = action_validator(&registry);
    let good = json!({"thought": "look first", "action": "read_file", "parameters": {"path": "a.txt", "start_line": 1}});
    assert!(v.is_valid(&good));
    assert!(v.is_valid(&json!({"thought": "", "action": "finish", "parameters": {}})));
    assert!(v.is_valid(&json!({"thought": "", "action": "finish", "parameters": {"summary": "s".repeat(FINISH_SUMMARY_MAX_CHARS)}})));
    let bad: [Value; 8] = [
        json!({"thought": "x", "action": "run_shell", "parameters": {"cmd": "rm -rf /"}}),
        json!({"thought": "x", "action": "read_file", "parameters": {}}),
        json!({"thought": "x", "action": "read_file", "parameters": {"path": 5}}),
        json!({"thought": "x", "action": "read_file", "parameters": {"path": "a", "extra": 1}}),
        json!({"action": "read_file", "parameters": {"path": "a"}}),
        json!({"thought": "x", "action": "read_file", "parameters": {"path": "a"}, "more": true}),
        json!({"thought": "x", "action": "list_dir", "parameters": {"path": "x".repeat(5000)}}),
        json!({"thought": "x", "action": "finish", "parameters": {"summary": "s".repeat(FINISH_SUMMARY_MAX_CHARS + 1)}}),
    ];
    for b in bad {
        assert!(!v.is_valid(&b), "should be rejected: {b}");
    }
}

#[test]
fn action_schema_uses_only_simple_keywords_and_lists_thought_first() {
    let schema = desk_registry().action_schema();
    let text = schema.to_string();
    for exotic in [
        "$ref",
        "oneOf",
        "allOf",
        "patternProperties",
        "if",
        "dependentSchemas",
        "format",
    ] {
        assert!(
            !text.contains(&format!("\"{exotic}\"")),
            "{exotic} in action schema"
        );
    }
    let branch = &schema["anyOf"][0];
    let keys: Vec<&String> = branch["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["thought", "action", "parameters"]);
    assert_eq!(branch["properties"]["action"]["const"], "list_dir");
    assert_eq!(schema["anyOf"].as_array().unwrap().len(), 18);
}

#[test]
fn validate_names_the_problem() {
    let registry = desk_registry();
    assert!(registry
        .validate("read_file", &json!({"path": "a"}))
        .is_ok());
    let e = registry
        .validate("read_file", &json!({"path": 5}))
        .unwrap_err();
    assert!(e.contains("/path") && e.contains("string"), "{e}");
    let e = registry.validate("nope", &json!({})).unwrap_err();
    assert!(e.contains("unknown tool") && e.contains("read_file"), "{e}");
    let e = registry.validate("read_file", &json!("a.txt")).unwrap_err();
    assert!(e.contains("JSON object"), "{e}");
}

/// A document sent where a tool wants text (a model writing JSON as an object instead of a
/// string) is refused in one line naming both kinds, not with the document echoed back in full.
#[test]
fn a_value_of_the_wrong_kind_is_named_not_echoed() {
    let registry = desk_registry();
    let rows: Vec<Value> = (0..200)
        .map(|i| json!({"name": format!("row {i}"), "amount": i}))
        .collect();
    let e = registry
        .validate(
            "create_file",
            &json!({"path": "out/rows.json", "content": {"rows": rows}}),
        )
        .unwrap_err();
    assert_eq!(
        e,
        "at /content: An object here, where the schema needs a string"
    );
    let e = registry
        .validate("create_file", &json!({"content": "text"}))
        .unwrap_err();
    assert_eq!(e, "the required field \"path\" is missing");
}

#[test]
fn input_cap_at_its_edge() {
    let registry = desk_registry();
    let at_cap = "a".repeat(MAX_INPUT_CHARS);
    assert!(registry
        .validate("create_file", &json!({"path": "x.txt", "content": at_cap}))
        .is_ok());
    // Characters, not bytes: 32,000 two-byte characters are still fine.
    assert!(registry
        .validate(
            "create_file",
            &json!({"path": "x.txt", "content": "é".repeat(MAX_INPUT_CHARS)})
        )
        .is_ok());
    let over = "a".repeat(MAX_INPUT_CHARS + 1);
    let e = registry
        .validate("create_file", &json!({"path": "x.txt", "content": over}))
        .unwrap_err();
    assert!(
        e.contains("`content`") && e.contains("32,001") && e.contains("32,000"),
        "{e}"
    );
    let e = registry
        .validate(
            "finish",
            &json!({"summary": "s".repeat(MAX_INPUT_CHARS + 1)}),
        )
        .unwrap_err();
    assert!(e.contains("summary"), "{e}");
}

#[test]
fn unknown_tools_never_run_and_invalid_arguments_are_refused_before_running() {
    let fx = Fixture::new();
    let ws = fx.ws();
    let registry = desk_registry();
    let err = registry
        .call(&mut ToolContext::Desk(&ws), "shell", &json!({"cmd": "ls"}))
        .unwrap_err();
    assert!(matches!(err, ToolError::UnknownTool { .. }), "{err}");
    let err = registry
        .call(
            &mut ToolContext::Desk(&ws),
            "create_file",
            &json!({"path": "a.txt"}),
        )
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
    assert!(!fx.path("a.txt").exists());
}

struct Custom(&'static str, Value);

impl Tool for Custom {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "test"
    }
    fn schema(&self) -> Value {
        self.1.clone()
    }
    fn run(&self, _: &mut ToolContext<'_>, _: &Value) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::Data(json!(null)))
    }
}

#[test]
fn registration_rejects_duplicates_bad_names_and_bad_schemas() {
    let mut r = ToolRegistry::new();
    r.register(Box::new(Custom("mine", json!({"type": "object"}))))
        .unwrap();
    assert!(matches!(
        r.register(Box::new(Custom("mine", json!({})))),
        Err(RegistryError::Duplicate(_))
    ));
    assert!(matches!(
        r.register(Box::new(Custom("Bad Name", json!({})))),
        Err(RegistryError::BadName(_))
    ));
    assert!(matches!(
        r.register(Box::new(Custom("typo", json!({"type": "objekt"})))),
        Err(RegistryError::BadSchema { .. })
    ));
    // Default: a tool that does not say is treated as mutating.
    assert!(r.get("mine").unwrap().mutates());
}

/// Every number a tool takes is bounded above, and every string too: under constrained
/// decoding an unbounded integer lets a small model spend its whole reply on digits (seen:
/// `"end_line": 1000…` for 384 tokens), and the gate then refuses what it cannot parse.
#[test]
fn every_tool_parameter_is_bounded_so_a_reply_cannot_run_on() {
    fn unbounded(schema: &Value, at: &str, found: &mut Vec<String>) {
        match schema {
            Value::Object(map) => {
                let kind = map.get("type").and_then(Value::as_str);
                match kind {
                    Some("integer") | Some("number") if !map.contains_key("maximum") => {
                        found.push(format!("{at}: no maximum"))
                    }
                    Some("string")
                        if !map.contains_key("maxLength")
                            && !map.contains_key("enum")
                            && !map.contains_key("const") =>
                    {
                        found.push(format!("{at}: no maxLength"))
                    }
                    _ => {}
                }
                for (k, v) in map {
                    unbounded(v, &format!("{at}/{k}"), found);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    unbounded(v, &format!("{at}/{i}"), found);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    for registry in [desk_registry(), sandbox_registry()] {
        for name in registry.names() {
            let tool = registry.get(name).unwrap();
            // write_json's document follows the contract's own schema, given per run.
            unbounded(&tool.schema(), name, &mut found);
        }
    }
    assert!(found.is_empty(), "unbounded parameters: {found:#?}");
}
