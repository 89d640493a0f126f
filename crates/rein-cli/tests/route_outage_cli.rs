#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A decision whose labels held little probability is an outage
//! with its source recorded, end to end through `rein route` against the fake OpenAI server;
//! the same tree with the mass on the label is a model decision (the control).

use std::process::Command;

use rein_testkit::FakeOpenAi;
use serde_json::Value;

fn rein_route(server: &FakeOpenAi, extra: &[&str]) -> std::process::Output {
    let spec = format!("openai:{}/v1#qwen", server.url());
    let mut args = vec!["--json", "route", "--model", &spec];
    args.extend_from_slice(extra);
    args.push("please transcribe voice_memo_0612.m4a for me");
    Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(&args)
        .env("REIN_HOME", tempfile::tempdir().unwrap().path())
        .output()
        .unwrap()
}

fn route_with(server: &FakeOpenAi, extra: &[&str]) -> Value {
    let out = rein_route(server, extra);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_deadline_flag_is_taken_and_a_zero_one_is_refused() {
    let server = FakeOpenAi::start().unwrap();
    server.set_logprob_tree(&[
        ("", &[("audio", 0.9f64.ln()), ("I", 0.1f64.ln())]),
        ("audio", &[("", 0.0)]),
    ]);
    let v = route_with(&server, &["--deadline-ms", "60000"]);
    assert_eq!(v["intent"], "voice", "{v}");
    assert_ne!(v["source"], "outage", "{v}");

    let out = rein_route(&server, &["--deadline-ms", "0"]);
    assert_eq!(out.status.code(), Some(2), "a zero deadline is bad usage");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--deadline-ms"),
        "the error names the flag: {err}"
    );
}

#[test]
fn low_label_mass_routes_as_an_outage_with_the_reason() {
    let server = FakeOpenAi::start().unwrap();
    // Normalised over the labels "audio" would be 1.0, but it held 0.1 of the probability.
    server.set_logprob_tree(&[
        (
            "",
            &[
                ("I", 0.7f64.ln()),
                ("The", 0.2f64.ln()),
                ("audio", 0.1f64.ln()),
            ],
        ),
        ("audio", &[("", 0.0)]),
    ]);
    let v = route_with(&server, &[]);
    assert_eq!(v["source"], "outage", "{v}");
    let note = v["note"].as_str().unwrap_or_default();
    assert!(note.contains("0.1"), "the note names the mass: {v}");

    // Control: the same labels with the mass on them is the model's decision.
    let server = FakeOpenAi::start().unwrap();
    server.set_logprob_tree(&[
        ("", &[("audio", 0.9f64.ln()), ("I", 0.1f64.ln())]),
        ("audio", &[("", 0.0)]),
    ]);
    let v = route_with(&server, &[]);
    // The model was heard ("keyword" when it agrees with the keywords).
    assert!(v["source"] == "model" || v["source"] == "keyword", "{v}");
    assert_eq!(v["intent"], "voice", "{v}");
    let mass = v["label_mass"].as_f64().expect("label_mass is reported");
    assert!((mass - 0.9).abs() < 1e-6, "{v}");
}
