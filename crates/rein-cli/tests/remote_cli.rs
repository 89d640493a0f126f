#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A remote endpoint end to end through the binary: https against the TLS fake server (its
//! certificate signed by a root made in the test), the API key from REIN_API_KEY_<HOST> and
//! nowhere else, the action schema sent as `response_format`, and `models list --endpoint`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use rein_testkit::{FakeOpenAi, FakeReply};
use serde_json::Value;

const KEY: &str = "sk-remote-cli-9f3e1a77";
const KEY_VAR: &str = "REIN_API_KEY_127_0_0_1";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Env {
    home: tempfile::TempDir,
    scratch: tempfile::TempDir,
    ca: PathBuf,
}

impl Env {
    fn new(server: &FakeOpenAi) -> Env {
        let scratch = tempfile::tempdir().unwrap();
        let ca = scratch.path().join("root.pem");
        std::fs::write(&ca, server.root_pem().unwrap()).unwrap();
        Env {
            home: tempfile::tempdir().unwrap(),
            scratch,
            ca,
        }
    }

    fn rein(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_rein"))
            .args(args)
            .env("REIN_HOME", self.home.path())
            .env("REIN_MISSIONS", repo().join("missions"))
            .env("REIN_CA_FILE", &self.ca)
            .env(KEY_VAR, KEY)
            .env_remove("REIN_ALLOW_REMOTE")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Every file under `dir`, as bytes (the journal database, its WAL, anything else).
fn all_bytes(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            all_bytes(&p, out);
        } else if let Ok(b) = std::fs::read(&p) {
            out.push((p, b));
        }
    }
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn a_run_over_https_with_a_key_sends_the_schema_and_never_records_the_key() {
    let server = FakeOpenAi::start_tls().unwrap();
    server.require_key(KEY);
    let script =
        std::fs::read_to_string(repo().join("crates/rein-engine/tests/fixtures/agent/good.jsonl"))
            .unwrap();
    for line in script.lines().filter(|l| !l.trim().is_empty()) {
        server.push(FakeReply::stream(&[line]));
    }
    let env = Env::new(&server);
    let ws = env.scratch.path().join("ws");
    let spec = format!("openai:{}/v1#qwen", server.url());
    let out = env.rein(&[
        "run",
        "desk_task",
        "--workspace",
        ws.to_str().unwrap(),
        "--model",
        &spec,
        "--approve=all",
        "--json",
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(ws.join("out/summary.md").is_file());

    let posts = server.posts();
    assert_eq!(posts.len(), 6, "one request per step");
    for p in &posts {
        assert_eq!(
            p.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert_eq!(
            p.body["response_format"]["type"], "json_schema",
            "{:?}",
            p.body
        );
        assert!(p.body["response_format"]["json_schema"]["schema"]["anyOf"].is_array());
    }
    // The detection is recorded in the journal as a model notice.
    let show = env.rein(&["journal", "show", "1", "--json"]);
    assert_eq!(show.status.code(), Some(0), "{}", text(&show.stderr));
    assert!(
        text(&show.stdout).contains("accepted the action schema"),
        "{}",
        text(&show.stdout)
    );

    // The key is nowhere: not on stdout or stderr, not in the journal or any file Rein wrote.
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
    assert!(!text(&show.stdout).contains(KEY));
    let mut files = Vec::new();
    all_bytes(env.home.path(), &mut files);
    all_bytes(&ws, &mut files);
    assert!(files.len() > 1, "the journal was written");
    for (path, bytes) in &files {
        assert!(!contains(bytes, KEY), "the key is in {}", path.display());
    }
    // Loopback: no warning about content leaving the machine.
    assert!(!stderr.contains("not this machine"), "{stderr}");
}

#[test]
fn models_list_endpoint_shows_what_the_server_serves() {
    let server = FakeOpenAi::start_tls().unwrap();
    server.require_key(KEY);
    server.set_models(Some(vec!["qwen2.5-coder-0.5b".into(), "other".into()]));
    let env = Env::new(&server);
    let out = env.rein(&["models", "list", "--endpoint", &server.url(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = doc["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["qwen2.5-coder-0.5b", "other"]);

    let out = env.rein(&["models", "list", "--endpoint", &server.url()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("qwen2.5-coder-0.5b"));

    // Without the key the server's 401 comes back with the variable to set.
    let out = Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["models", "list", "--endpoint", &server.url()])
        .env("REIN_HOME", env.home.path())
        .env("REIN_CA_FILE", &env.ca)
        .env_remove(KEY_VAR)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains(KEY_VAR), "{}", text(&out.stderr));

    // A remote host still needs the opt-in.
    let out = env.rein(&["models", "list", "--endpoint", "https://192.0.2.7:8443"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--allow-remote"));
}

#[test]
fn a_key_in_the_url_is_refused_and_not_echoed() {
    let server = FakeOpenAi::start_tls().unwrap();
    let env = Env::new(&server);
    let secret = "hunter2-in-url";
    let spec = format!("openai:https://me:{secret}@127.0.0.1:9/v1#qwen");
    for args in [
        vec!["ask", "--model", spec.as_str(), "hello"],
        vec!["models", "list", "--endpoint", &spec[7..spec.len() - 5]],
    ] {
        let out = env.rein(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(!all.contains(secret), "{all}");
        assert!(all.contains("REIN_API_KEY_"), "{all}");
    }
    assert!(server.requests().is_empty());
}
