#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The router suite's data and its loader.

use std::path::{Path, PathBuf};

use rein_bench::router::{suite_kind, RouterSuite, INTENTS};
use rein_bench::suite::{Split, Suite};

fn router_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/router")
}

#[test]
fn the_router_suite_has_enough_labelled_requests() {
    let suite = RouterSuite::load(router_dir()).unwrap();
    assert_eq!(suite.name, "router");
    let n = suite.requests.len();
    assert!(n >= 42, "{n} requests");
    let counts = suite.counts();
    for intent in INTENTS {
        let c = counts.per_intent[intent];
        assert!(c.dev + c.heldout >= 6, "{intent}: {c:?}");
        assert!(c.heldout >= 1, "{intent} has no heldout request");
    }
    assert_eq!(counts.per_intent.len(), INTENTS.len());
    let heldout = suite
        .requests
        .iter()
        .filter(|r| r.split == Split::Heldout)
        .count();
    let share = heldout as f64 / n as f64;
    assert!((0.15..=0.25).contains(&share), "heldout share {share}");
    assert_eq!(counts.heldout, heldout);
    // Written as people write: some long pasted text and some non-ASCII file names.
    assert!(suite.requests.iter().any(|r| r.text.len() > 400));
    assert!(suite.requests.iter().filter(|r| !r.text.is_ascii()).count() >= 5);
}

#[test]
fn a_router_suite_is_not_a_task_suite() {
    assert_eq!(suite_kind(&router_dir()).unwrap(), "router");
    let err = Suite::load(router_dir()).unwrap_err().to_string();
    assert!(err.contains("field kind"), "{err}");
    let err = RouterSuite::load(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/desk"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a router suite"), "{err}");
}

const GOOD: &str = r#"
[[request]]
id = "a"
text = "hello"
intent = "general"
split = "dev"
"#;

fn load_with(requests: &str) -> Result<RouterSuite, String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("suite.toml"),
        "name = \"r\"\nkind = \"router\"\ndescription = \"d\"\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("requests.toml"), requests).unwrap();
    RouterSuite::load(dir.path()).map_err(|e| e.to_string())
}

#[test]
fn bad_requests_are_clear_errors() {
    assert_eq!(load_with(GOOD).unwrap().requests.len(), 1);
    let cases = [
        (
            GOOD.replace("general", "chitchat"),
            "request[0].intent",
            "is not an intent",
        ),
        (format!("{GOOD}{GOOD}"), "request[1].id", "used twice"),
        (
            GOOD.replace("\"hello\"", "\"  \\n \""),
            "request[0].text",
            "empty text",
        ),
        (
            GOOD.replace("text = \"hello\"\n", ""),
            "request[0].text",
            "missing",
        ),
        (
            GOOD.replace("\"dev\"", "\"test\""),
            "request[0].split",
            "not one of",
        ),
        (
            GOOD.replace("id = \"a\"", "id = \"A b\""),
            "request[0].id",
            "must match",
        ),
        (
            format!("{GOOD}lang = \"en\"\n"),
            "request[0].lang",
            "unknown field",
        ),
        (String::from("x = 1\n"), "x", "unknown field"),
        (String::new(), "request", "no [[request]]"),
        (
            GOOD.replace("split = \"dev\"", "split = 3"),
            "request[0].split",
            "must be a string",
        ),
    ];
    for (text, field, words) in cases {
        let err = load_with(&text).unwrap_err();
        assert!(
            err.contains(&format!("field {field}")) && err.contains(words),
            "{field}: {err}"
        );
        assert!(err.contains("requests.toml"), "{err}");
    }
}
