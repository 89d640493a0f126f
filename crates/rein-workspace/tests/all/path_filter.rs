//! The path filter of a desk context: every tool that reads or lists more than the one path it
//! was given asks it about each file; hidden files are only counted, skipped ones are named but
//! never read; without a filter everything is shown, as before.

use rein_workspace::desk::{PathFilter, ShowAll, Visibility};
use rein_workspace::{desk_registry, RelPath, ToolContext, ToolOutput, Workspace};
use serde_json::{json, Value};

use crate::support::{data, Fixture};

/// Hides everything under `hidden/`, skips everything under `skipped/`.
#[derive(Debug)]
struct ByFolder;

impl PathFilter for ByFolder {
    fn visible(&self, path: &RelPath) -> Visibility {
        let p = path.as_str();
        if p.starts_with("hidden/") {
            Visibility::Hidden
        } else if p.starts_with("skipped/") {
            Visibility::Skipped
        } else {
            Visibility::Shown
        }
    }
}

fn filtered(ws: &Workspace, filter: &dyn PathFilter, tool: &str, args: Value) -> Value {
    let mut ctx = ToolContext::FilteredDesk {
        workspace: ws,
        filter,
    };
    match desk_registry().call(&mut ctx, tool, &args).unwrap() {
        ToolOutput::Data(v) => v,
        other => panic!("expected data, got {other:?}"),
    }
}

fn fixture() -> Fixture {
    let fx = Fixture::new();
    fx.write("open/plan.md", "the walrus plan\n");
    fx.write("hidden/walrus.key", "walrus secret one\n");
    fx.write("skipped/walrus.log", "walrus secret two\n");
    fx
}

fn leaks(v: &Value, what: &[&str]) -> Option<String> {
    let text = v.to_string();
    what.iter()
        .find(|w| text.contains(*w))
        .map(|w| format!("{w} in {text}"))
}

#[test]
fn search_text_reads_only_shown_files_and_counts_the_rest() {
    let fx = fixture();
    let ws = fx.ws();
    let v = filtered(&ws, &ByFolder, "search_text", json!({"pattern": "walrus"}));
    assert_eq!(
        v["matches"],
        json!([{"path": "open/plan.md", "line": 1, "text": "the walrus plan"}])
    );
    assert_eq!(v["files_searched"], 1);
    assert_eq!(v["skipped_by_policy"], 2, "{v}");
    assert!(
        v["note"]
            .as_str()
            .unwrap()
            .contains("2 files were skipped by policy"),
        "{v}"
    );
    // A glob narrows what skipped files count, never what hidden files count.
    let v = filtered(
        &ws,
        &ByFolder,
        "search_text",
        json!({"pattern": "walrus", "glob": "*.md"}),
    );
    assert_eq!(v["skipped_by_policy"], 1, "{v}");
    // A single hidden file given as the path is not read either.
    let v = filtered(
        &ws,
        &ByFolder,
        "search_text",
        json!({"pattern": "walrus", "path": "hidden/walrus.key"}),
    );
    assert_eq!(v["matches"], json!([]));
    assert_eq!(v["skipped_by_policy"], 1);
}

#[test]
fn find_files_names_skipped_files_and_only_counts_hidden_ones() {
    let fx = fixture();
    let ws = fx.ws();
    let v = filtered(&ws, &ByFolder, "find_files", json!({"pattern": "walrus.*"}));
    assert_eq!(v["files"], json!(["skipped/walrus.log"]), "{v}");
    assert_eq!(v["total"], 1);
    assert_eq!(v["hidden_by_policy"], 1, "{v}");
    assert_eq!(leaks(&v, &["walrus.key"]), None);
    let v = filtered(&ws, &ByFolder, "find_files", json!({"pattern": "*.md"}));
    assert_eq!(
        v["hidden_by_policy"], 1,
        "a pattern that cannot match counts it too: {v}"
    );
}

#[test]
fn find_related_considers_only_shown_files() {
    let fx = fixture();
    let ws = fx.ws();
    let v = filtered(
        &ws,
        &ByFolder,
        "find_related",
        json!({"path": "open/plan.md"}),
    );
    assert_eq!(v["related"], json!([]), "{v}");
    assert_eq!(v["files_considered"], 0);
    assert_eq!(v["skipped_by_policy"], 2);
    assert_eq!(leaks(&v, &["walrus.key", "walrus.log", "secret"]), None);
    // Unfiltered, both rank by the shared word and name.
    let v = data(&ws, "find_related", json!({"path": "open/plan.md"}));
    assert_eq!(v["related"].as_array().unwrap().len(), 2, "{v}");
}

#[test]
fn list_dir_and_file_info_count_hidden_entries_and_mark_skipped_ones() {
    let fx = fixture();
    fx.write("mixed/a.txt", "a");
    fx.write("mixed/b.txt", "bb");
    let ws = fx.ws();
    let v = filtered(&ws, &ByFolder, "list_dir", json!({"path": "hidden"}));
    assert_eq!(v["entries"], json!([]));
    assert_eq!(v["total"], 0);
    assert_eq!(v["hidden_by_policy"], 1);
    assert!(
        v["note"]
            .as_str()
            .unwrap()
            .contains("1 entry hidden by policy"),
        "{v}"
    );
    let v = filtered(&ws, &ByFolder, "list_dir", json!({"path": "skipped"}));
    assert_eq!(
        v["entries"],
        json!([{"name": "walrus.log", "kind": "file", "skipped_by_policy": true}])
    );
    assert!(v.get("hidden_by_policy").is_none());
    // The folders themselves are not under the rules.
    let v = filtered(&ws, &ByFolder, "list_dir", json!({}));
    assert_eq!(v["total"], 4, "{v}");
    let v = filtered(&ws, &ByFolder, "file_info", json!({"path": "hidden"}));
    assert_eq!(v["entries"], 0);
    assert_eq!(v["hidden_by_policy"], 1);
    let v = filtered(&ws, &ByFolder, "file_info", json!({"path": "mixed"}));
    assert_eq!(v["entries"], 2);
    assert!(v.get("hidden_by_policy").is_none());
}

#[test]
fn show_all_and_a_plain_desk_context_change_nothing() {
    let fx = fixture();
    let ws = fx.ws();
    for (tool, args) in [
        ("search_text", json!({"pattern": "walrus"})),
        ("find_files", json!({"pattern": "walrus.*"})),
        ("find_related", json!({"path": "open/plan.md"})),
        ("list_dir", json!({"path": "hidden"})),
        ("file_info", json!({"path": "hidden"})),
    ] {
        let plain = data(&ws, tool, args.clone());
        let shown = filtered(&ws, &ShowAll, tool, args);
        assert_eq!(plain, shown, "{tool}");
        assert!(plain.get("skipped_by_policy").is_none(), "{tool}: {plain}");
        assert!(plain.get("hidden_by_policy").is_none(), "{tool}: {plain}");
    }
}

#[test]
fn sandbox_tools_still_refuse_a_filtered_desk_context() {
    let fx = fixture();
    let ws = fx.ws();
    let mut ctx = ToolContext::FilteredDesk {
        workspace: &ws,
        filter: &ShowAll,
    };
    let err = rein_workspace::sandbox_registry()
        .call(&mut ctx, "list_files", &json!({}))
        .unwrap_err();
    assert!(err.to_string().contains("sandbox"), "{err}");
}
