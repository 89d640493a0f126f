//! The scripted replay backend.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;

use rein_models::{
    ChooseRequest, CompletionRequest, DecisionSource, FinishReason, Model, ModelError, Prompt,
    SamplingProfile, ScriptedModel,
};

fn script(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("replies.jsonl");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    (dir, path)
}

fn req() -> CompletionRequest {
    CompletionRequest::new(Prompt::raw("hi"), 64, SamplingProfile::JUDGE)
}

fn choose_req(labels: &[&str]) -> ChooseRequest {
    ChooseRequest {
        prompt: Prompt::raw("which?"),
        labels: labels.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn strings_objects_and_exhaustion() {
    let (_d, path) = script(
        "\"plain text reply\"\n\n{\"thought\": \"t\", \"action\": \"read_file\", \"parameters\": {\"path\": \"a.txt\"}}\n  \n42\n",
    );
    let mut m = ScriptedModel::load(&path).unwrap();
    assert_eq!(m.remaining(), 3);
    assert_eq!(m.identity().architecture, "scripted");
    assert_eq!(m.identity().name, "replies.jsonl");
    assert!(m.identity().spec.starts_with("scripted:"));
    assert_eq!(m.identity().sha256.as_ref().map(String::len), Some(64));

    let mut pieces = Vec::new();
    let c = m
        .complete(&req(), &mut |t| pieces.push(t.to_string()))
        .unwrap();
    assert_eq!(c.text, "plain text reply");
    assert_eq!(c.finish, FinishReason::Stop);
    assert!(pieces.len() > 1, "streamed in pieces: {pieces:?}");
    assert_eq!(pieces.concat(), c.text);

    let c = m.complete(&req(), &mut |_| {}).unwrap();
    assert_eq!(
        c.text,
        r#"{"thought":"t","action":"read_file","parameters":{"path":"a.txt"}}"#
    );
    let c = m.complete(&req(), &mut |_| {}).unwrap();
    assert_eq!(c.text, "42");

    let e = m.complete(&req(), &mut |_| {}).unwrap_err();
    assert!(
        matches!(e, ModelError::ScriptExhausted { used: 3, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("no replies left"));
    assert_eq!(e.exit_code(), 3);
}

#[test]
fn stop_strings_cut_the_reply() {
    let (_d, path) = script("\"answer</s>ignored\"\n");
    let mut m = ScriptedModel::load(&path).unwrap();
    let mut r = req();
    r.stop = vec!["</s>".into()];
    let mut seen = String::new();
    let c = m.complete(&r, &mut |t| seen.push_str(t)).unwrap();
    assert_eq!(c.text, "answer");
    assert_eq!(seen, "answer");
    assert_eq!(c.finish, FinishReason::StopString);
}

#[test]
fn a_malformed_line_names_its_number() {
    let (_d, path) = script("\"ok\"\n\n{\"unclosed\": \n\"later\"\n");
    let e = ScriptedModel::load(&path).unwrap_err();
    assert!(matches!(e, ModelError::Script { line: 3, .. }), "{e}");
    assert!(e.to_string().contains("line 3"), "{e}");
    assert_eq!(e.exit_code(), 2);

    let e = ScriptedModel::load("/nonexistent/replies.jsonl").unwrap_err();
    assert!(matches!(e, ModelError::Io { .. }), "{e}");
}

#[test]
fn choose_reads_a_label_object() {
    let (_d, path) = script("{\"summarize\": 3, \"read\": 1}\n\"not an object\"\n{\"bogus\": 1}\n{\"read\": -1}\n{\"read\": 0}\n");
    let mut m = ScriptedModel::load(&path).unwrap();
    let r = m
        .choose(&choose_req(&["read", "summarize", "write"]))
        .unwrap();
    assert_eq!(r.source, DecisionSource::Scripted);
    let p: Vec<(&str, f64)> = r
        .probabilities
        .iter()
        .map(|p| (p.label.as_str(), p.probability))
        .collect();
    assert_eq!(p, vec![("read", 0.25), ("summarize", 0.75), ("write", 0.0)]);
    assert_eq!(r.best(), Some(("summarize", 7500)));

    for (line, want) in [
        (2, "expects an object"),
        (3, "not one of the request's labels"),
        (4, "non-negative"),
        (5, "add up to 0"),
    ] {
        let e = m
            .choose(&choose_req(&["read", "summarize", "write"]))
            .unwrap_err();
        assert!(
            matches!(e, ModelError::Script { line: l, .. } if l == line),
            "{e}"
        );
        assert!(e.to_string().contains(want), "{e}");
    }
    assert!(matches!(
        m.choose(&choose_req(&["read"])),
        Err(ModelError::ScriptExhausted { used: 5, .. })
    ));
}
