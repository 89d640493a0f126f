//! `--model` parsing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use rein_models::{ModelError, ModelSpec};

#[test]
fn the_three_forms() {
    assert_eq!(
        ModelSpec::parse("qwen2.5-coder-0.5b").unwrap(),
        ModelSpec::Catalog("qwen2.5-coder-0.5b".into())
    );
    assert_eq!(
        ModelSpec::parse("openai:http://127.0.0.1:8080/v1#qwen:7b").unwrap(),
        ModelSpec::OpenAi {
            url: "http://127.0.0.1:8080/v1".into(),
            model: "qwen:7b".into()
        }
    );
    assert_eq!(
        ModelSpec::parse("openai:http://localhost:11434#llama3.2#q4").unwrap(),
        ModelSpec::OpenAi {
            url: "http://localhost:11434#llama3.2".into(),
            model: "q4".into()
        }
    );
    assert_eq!(
        ModelSpec::parse("scripted:tests/fixtures/replies.jsonl").unwrap(),
        ModelSpec::Scripted(PathBuf::from("tests/fixtures/replies.jsonl"))
    );
    assert_eq!(
        ModelSpec::parse("gguf:models/my model.gguf").unwrap(),
        ModelSpec::Gguf(PathBuf::from("models/my model.gguf"))
    );
    assert!(ModelSpec::parse("gguf:").is_err());
    assert!(ModelSpec::parse("gguf:x.gguf").unwrap().is_embedded());
    for s in [
        "qwen2.5-coder-0.5b",
        "gguf:/tmp/m.gguf",
        "openai:http://127.0.0.1:8080#m",
        "scripted:a b.jsonl",
    ] {
        assert_eq!(ModelSpec::parse(s).unwrap().to_string(), s);
        assert_eq!(s.parse::<ModelSpec>().unwrap().to_string(), s);
    }
}

#[test]
fn bad_specs_say_what_is_accepted() {
    for (s, want) in [
        ("", "empty"),
        ("   ", "empty"),
        ("openai:http://127.0.0.1:8080", "#MODEL"),
        ("openai:http://127.0.0.1:8080#", "empty"),
        ("openai:not a url#m", "not a URL"),
        ("openai:ftp://127.0.0.1#m", "http://"),
        ("scripted:", "file path"),
        ("ollama:llama3", "unknown model kind \"ollama\""),
        ("some/path.gguf", "no spaces, slashes"),
        ("two words", "no spaces"),
    ] {
        let e = ModelSpec::parse(s).unwrap_err();
        assert!(matches!(e, ModelError::BadRequest(_)), "{s}: {e}");
        let msg = e.to_string();
        assert!(msg.contains(want), "{s}: {msg}");
        assert!(msg.contains("openai:URL#MODEL or scripted:FILE"), "{msg}");
        assert_eq!(e.exit_code(), 2);
    }
}
