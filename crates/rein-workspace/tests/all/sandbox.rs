//! The bench sandbox tools on an in-memory sandbox.

use rein_workspace::{sandbox_registry, ActionRecord, Sandbox, ToolContext, ToolError, ToolOutput};
use serde_json::{json, Value};

use crate::support::Fixture;

fn call(sandbox: &mut Sandbox, tool: &str, args: Value) -> Result<Value, ToolError> {
    sandbox_registry()
        .call(&mut ToolContext::Sandbox(sandbox), tool, &args)
        .map(|o| match o {
            ToolOutput::Data(v) => v,
            other => panic!("sandbox tools return data, got {other:?}"),
        })
}

#[test]
fn files_round_trip_and_the_action_log_records_everything() {
    let mut sb = Sandbox::new();
    assert_eq!(
        call(
            &mut sb,
            "create_file",
            json!({"path": "note.txt", "content": "hello world"})
        )
        .unwrap()["created"],
        true
    );
    assert_eq!(
        call(&mut sb, "read_file", json!({"path": "./note.txt"})).unwrap()["content"],
        "hello world"
    );
    assert_eq!(
        call(
            &mut sb,
            "create_file",
            json!({"path": "note.txt", "content": "v2"})
        )
        .unwrap()["overwritten"],
        true
    );
    assert_eq!(
        call(&mut sb, "list_files", json!({})).unwrap()["files"],
        json!(["note.txt"])
    );
    assert_eq!(
        call(&mut sb, "delete_file", json!({"path": "note.txt"})).unwrap()["deleted"],
        true
    );
    let err = call(&mut sb, "read_file", json!({"path": "note.txt"})).unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
    assert!(sb.called("delete_file"));
    assert!(!sb.called("set_variable"));
    assert_eq!(
        sb.actions.last(),
        Some(&ActionRecord {
            action: "read_file".into(),
            ok: false
        })
    );
    assert_eq!(sb.actions.len(), 6);
}

#[test]
fn variables_and_final_answer() {
    let mut sb = Sandbox::new();
    call(
        &mut sb,
        "set_variable",
        json!({"name": "total", "value": "42"}),
    )
    .unwrap();
    assert_eq!(
        call(&mut sb, "get_variable", json!({"name": "total"})).unwrap()["value"],
        "42"
    );
    assert!(call(&mut sb, "get_variable", json!({"name": "nope"}))
        .unwrap_err()
        .to_string()
        .contains("no variable"));
    call(&mut sb, "final_answer", json!({"answer": "42"})).unwrap();
    assert_eq!(sb.final_answer.as_deref(), Some("42"));
    assert_eq!(sb.variables.get("total"), Some(&json!("42")));
}

#[test]
fn sandbox_paths_follow_the_same_rules() {
    let mut sb = Sandbox::new();
    for bad in ["../x", "/etc/passwd", "CON", "a."] {
        let err = call(&mut sb, "create_file", json!({"path": bad, "content": "x"})).unwrap_err();
        assert!(matches!(err, ToolError::Confinement(_)), "{bad}: {err}");
    }
    assert!(sb.files.is_empty());
}

#[test]
fn sandbox_tools_refuse_a_real_folder_and_invalid_arguments() {
    let fx = Fixture::new();
    let ws = fx.ws();
    let err = sandbox_registry()
        .call(&mut ToolContext::Desk(&ws), "list_files", &json!({}))
        .unwrap_err();
    assert!(matches!(err, ToolError::WrongContext { .. }), "{err}");
    let mut sb = Sandbox::new();
    let err = call(&mut sb, "set_variable", json!({"name": "x"})).unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
}
