#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `rein models add NAME PATH`, `rein models list` with the user's catalog, and clear errors
//! for a bad path, a file that is not a GGUF and a duplicate name. Crafted GGUF headers only:
//! no model is loaded.

mod support;

use rein_protocol::gguf::write_test_header;

fn gguf(path: &std::path::Path, name: &str) {
    let bytes = write_test_header(
        &[("general.name", name), ("general.architecture", "llama")],
        &[("llama.context_length", 4096)],
        &[("w", &[8, 8])],
    );
    std::fs::write(path, bytes).unwrap();
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn models_add_lists_the_model_and_refuses_bad_input() {
    let env = support::env();
    let file = env.ws.join("mine.gguf");
    gguf(&file, "My Model");
    let path = file.to_str().unwrap();

    let out = env.rein(&["models", "add", "mine", path]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("added mine (My Model"),
        "{}",
        text(&out)
    );
    let catalog = std::fs::read_to_string(env.home.join("catalog.toml")).unwrap();
    assert!(catalog.contains("gguf_name = \"My Model\""), "{catalog}");

    let out = env.rein(&["--json", "models", "list"]);
    assert!(out.status.success(), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let models = doc["models"].as_array().unwrap();
    let mine = models.iter().find(|m| m["name"] == "mine").unwrap();
    assert_eq!(mine["source"], "user");
    assert_eq!(mine["verified"], true);
    assert!(models
        .iter()
        .any(|m| m["name"] == "qwen2.5-coder-0.5b" && m["source"] == "shipped"));

    for (args, want) in [
        (
            vec!["models", "add", "mine", path],
            "already in your catalog",
        ),
        (
            vec!["models", "add", "qwen2.5-coder-1.5b", path],
            "shipped catalog",
        ),
        (
            vec!["models", "add", "other", "/nonexistent/x.gguf"],
            "cannot open the model file",
        ),
    ] {
        let out = env.rein(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(want), "{args:?}: {}", text(&out));
    }
    let notes = env.ws.join("notes.txt");
    let out = env.rein(&["models", "add", "other", notes.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("is not a GGUF file"), "{}", text(&out));

    // A pinned model whose file changed is refused before any worker starts.
    gguf(&file, "My Modem");
    let out = env.rein(&["ask", "--model", "mine", "hi"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out).contains("changed since it was added"),
        "{}",
        text(&out)
    );
    // gguf: with a path that is not there says so.
    let out = env.rein(&["ask", "--model", "gguf:/nonexistent/x.gguf", "hi"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("cannot open the model file"),
        "{}",
        text(&out)
    );
}
