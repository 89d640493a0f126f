#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The router, request by request with `oneshot` and a fake engine: the token, Host and Origin
//! rules, the security headers, and every command (good, bad JSON, oversized, unknown ids, a
//! workspace the server was not given).

use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use rein_protocol::chat::{ChatEvent, ChatRequest, EventKind};
use rein_web::{ChatSink, Config, Engine, RunSink};
use serde_json::{json, Value};
use tower::ServiceExt;

const PORT: u16 = 4321;
const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const HOST: &str = "127.0.0.1:4321";
const ORIGIN: &str = "http://127.0.0.1:4321";

/// Answers every request it gets with an `error` event naming it, so a test sees what reached
/// the session.
#[derive(Default)]
struct FakeEngine {
    seen: Mutex<Vec<ChatRequest>>,
    /// While set, runs wait (up to 5 s) before they finish.
    slow_runs: std::sync::atomic::AtomicBool,
}

impl Engine for FakeEngine {
    fn models(&self) -> Vec<String> {
        vec!["scripted:/tmp/x.jsonl".into()]
    }
    fn examples(&self) -> Vec<String> {
        vec!["Set the variable x to 1.".into()]
    }
    fn run_chat(&self, workspace: PathBuf, requests: Receiver<ChatRequest>, mut sink: ChatSink) {
        let mut seq = 0;
        let mut emit = |kind| {
            seq += 1;
            sink(ChatEvent {
                seq,
                request: None,
                turn: None,
                at: 0,
                kind,
            })
        };
        emit(EventKind::SessionStarted {
            conversation: 1,
            workspace: workspace.display().to_string(),
            actor: "fake".into(),
            decision: None,
        });
        for request in requests {
            emit(EventKind::Error {
                message: format!("seen {}", request.id()),
            });
            if let Ok(mut seen) = self.seen.lock() {
                seen.push(request);
            }
        }
    }
    fn run_task(&self, task: &str, model: &str, sink: RunSink<'_>) -> Result<Value, String> {
        for _ in 0..500 {
            if !self.slow_runs.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        sink(json!({"event": "step", "thought": "<script>alert(1)</script>\u{202e}"}));
        Ok(json!({"task": task, "model": model, "verdict": "pass"}))
    }
    fn suites(&self) -> Value {
        json!([{"name": "toy", "description": "", "tasks": [{"id": "note-hello", "split": "dev"}]}])
    }
    fn run_suite(
        &self,
        request: &rein_web::SuiteRequest,
        stop: &std::sync::atomic::AtomicBool,
        sink: RunSink<'_>,
    ) -> Result<Value, String> {
        sink(json!({"event": "suite_started", "total": 1}));
        // Runs until stopped (at most 5 s).
        for _ in 0..500 {
            if stop.load(std::sync::atomic::Ordering::SeqCst) {
                return Ok(json!({"suite": request.suite, "stopped": true}));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(json!({"suite": request.suite, "stopped": false}))
    }
    fn journal_list(&self) -> Result<Value, String> {
        Ok(json!([{"id": 1}]))
    }
    fn journal_show(&self, run: i64) -> Result<Option<Value>, String> {
        Ok((run == 1).then(|| json!({"run": {"id": 1}, "steps": []})))
    }
    fn conversations(&self) -> Result<Value, String> {
        Ok(json!([{"id": 3, "workspace": "/ws", "title": "chat"}]))
    }
    fn conversation(&self, id: i64) -> Result<Option<Value>, String> {
        Ok((id == 3).then(|| {
            json!({"conversation": {"id": 3}, "timeline": [
                {"kind": "message", "role": "user", "content": "<img src=x>\u{202e}"}
            ]})
        }))
    }
    fn compare(&self) -> Result<Value, String> {
        Ok(
            json!([{"model": "m\u{202e}", "runs": 2, "passes": 1, "rate": 0.5, "low": 0.1, "high": 0.9}]),
        )
    }
    fn changes(&self, workspace: PathBuf) -> Result<Value, String> {
        Ok(json!({"workspace": workspace, "changes": []}))
    }
    fn undo(&self, _: PathBuf, change: i64) -> Result<Value, String> {
        if change == 7 {
            Ok(json!({"undone": 7}))
        } else {
            Err(format!("there is no change {change} in this workspace"))
        }
    }
}

struct App {
    router: Router,
    engine: Arc<FakeEngine>,
    _dir: tempfile::TempDir,
    workspace: PathBuf,
}

fn app() -> App {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().canonicalize().unwrap();
    let engine = Arc::new(FakeEngine::default());
    let router = rein_web::router(Config {
        port: PORT,
        token: TOKEN.into(),
        workspaces: vec![workspace.clone()],
        engine: engine.clone(),
    });
    App {
        router,
        engine,
        _dir: dir,
        workspace,
    }
}

fn get(uri: &str) -> axum::http::request::Builder {
    Request::get(uri)
        .header(header::HOST, HOST)
        .header(header::COOKIE, format!("rein_token={TOKEN}"))
}

fn post(uri: &str) -> axum::http::request::Builder {
    Request::post(uri)
        .header(header::HOST, HOST)
        .header(header::ORIGIN, ORIGIN)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::COOKIE, format!("rein_token={TOKEN}"))
}

async fn send(app: &App, request: Request<Body>) -> (StatusCode, axum::http::HeaderMap, Value) {
    let response = app.router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, headers, body)
}

async fn post_json(app: &App, uri: &str, body: &str) -> (StatusCode, Value) {
    let (s, _, b) = send(app, post(uri).body(Body::from(body.to_string())).unwrap()).await;
    (s, b)
}

fn message(body: &Value) -> String {
    body["error"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn without_the_token_every_request_is_refused_with_a_message() {
    let app = app();
    for uri in [
        "/",
        "/cowork",
        "/assets/common.js",
        "/api/config",
        "/api/journal",
    ] {
        let (status, _, body) = send(
            &app,
            Request::get(uri)
                .header(header::HOST, HOST)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{uri}");
        assert!(message(&body).contains("launch token"), "{body}");
    }
    // A wrong token, in the cookie or the URL, and one that is a prefix of the real one.
    for cookie in ["rein_token=nope", &format!("rein_token={}", &TOKEN[..10])] {
        let (status, _, _) = send(
            &app,
            Request::get("/api/config")
                .header(header::HOST, HOST)
                .header(header::COOKIE, cookie)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{cookie}");
    }
    let (status, _, _) = send(
        &app,
        Request::get("/?token=wrong")
            .header(header::HOST, HOST)
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // A POST without the cookie is refused even with the right Origin.
    let (status, _, _) = send(
        &app,
        Request::post("/api/sessions")
            .header(header::HOST, HOST)
            .header(header::ORIGIN, ORIGIN)
            .body(Body::from("{}"))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_first_visit_sets_an_http_only_strict_cookie_and_drops_the_token_from_the_url() {
    let app = app();
    let (status, headers, _) = send(
        &app,
        Request::get(format!("/cowork?token={TOKEN}"))
            .header(header::HOST, HOST)
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(headers[header::LOCATION], "/cowork");
    let cookie = headers[header::SET_COOKIE].to_str().unwrap();
    assert!(
        cookie.starts_with(&format!("rein_token={TOKEN};")),
        "{cookie}"
    );
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    // The token in the URL of a POST is not a login.
    let (status, _, _) = send(
        &app,
        Request::post(format!("/api/sessions?token={TOKEN}"))
            .header(header::HOST, HOST)
            .header(header::ORIGIN, ORIGIN)
            .body(Body::from("{}"))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_foreign_host_is_refused_even_with_the_token() {
    let app = app();
    for host in [
        "evil.example:4321",
        "127.0.0.1:9999",
        "127.0.0.1",
        "localhost",
        "127.0.0.1:4321.evil.example",
        "",
    ] {
        let mut request =
            Request::get("/api/config").header(header::COOKIE, format!("rein_token={TOKEN}"));
        if !host.is_empty() {
            request = request.header(header::HOST, host);
        }
        let (status, _, body) = send(&app, request.body(Body::empty()).unwrap()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{host}");
        assert!(message(&body).contains("answers only to"), "{body}");
    }
    let (status, _, _) = send(
        &app,
        Request::get("/api/config")
            .header(header::HOST, "localhost:4321")
            .header(header::COOKIE, format!("rein_token={TOKEN}"))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_state_changing_request_needs_the_servers_own_origin() {
    let app = app();
    for origin in [
        None,
        Some("http://evil.example"),
        Some("null"),
        Some("http://localhost:4321"),
        Some("https://127.0.0.1:4321"),
    ] {
        // The session command, and this round's suite run and stop: a cross-site page can
        // neither start a bench nor stop one.
        for (uri, payload) in [
            ("/api/sessions", "{}"),
            ("/api/suite-runs", r#"{"suite":"toy","model":"scripted:x"}"#),
            ("/api/runs/1/stop", "{}"),
        ] {
            let mut request = Request::post(uri)
                .header(header::HOST, HOST)
                .header(header::COOKIE, format!("rein_token={TOKEN}"));
            if let Some(o) = origin {
                request = request.header(header::ORIGIN, o);
            }
            let (status, _, body) = send(&app, request.body(Body::from(payload)).unwrap()).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{uri} {origin:?}");
            assert!(message(&body).contains("Origin"), "{body}");
        }
    }
    assert!(app.engine.seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn every_answer_carries_the_csp_and_nosniff_and_no_cors() {
    let app = app();
    for request in [
        get("/cowork").body(Body::empty()).unwrap(),
        get("/assets/cowork.js").body(Body::empty()).unwrap(),
        Request::get("/api/config")
            .header(header::HOST, HOST)
            .body(Body::empty())
            .unwrap(),
        Request::get("/")
            .header(header::HOST, "evil.example")
            .body(Body::empty())
            .unwrap(),
    ] {
        let (_, headers, _) = send(&app, request).await;
        let csp = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(csp.contains("script-src 'self'"), "{csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert!(headers
            .keys()
            .all(|k| !k.as_str().starts_with("access-control-")));
    }
    let (status, headers, body) =
        send(&app, get("/assets/cowork.js").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert!(headers[header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .starts_with("text/javascript"));
    assert!(!body.as_str().unwrap_or_default().contains("innerHTML"));
}

#[tokio::test]
async fn pages_have_no_inline_script_or_style() {
    let app = app();
    for page in ["/cowork", "/bench", "/runs"] {
        let (status, _, body) = send(&app, get(page).body(Body::empty()).unwrap()).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let html = body.as_str().unwrap();
        assert!(
            html.contains("<script type=\"module\" src=\"/assets/"),
            "{page}"
        );
        assert!(
            !html.contains("<script>") && !html.contains("style="),
            "{page}"
        );
        assert!(!html.contains(" on") || !html.contains("onclick"), "{page}");
        assert!(
            !html.contains("http://") && !html.contains("https://"),
            "{page}"
        );
    }
}

async fn start_session(app: &App) -> u64 {
    let (status, body) = post_json(app, "/api/sessions", "{}").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["session"].as_u64().unwrap()
}

async fn wait_seen(app: &App, n: usize) -> Vec<ChatRequest> {
    for _ in 0..200 {
        let seen = app.engine.seen.lock().unwrap().clone();
        if seen.len() >= n {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the session did not see {n} requests");
}

#[tokio::test]
async fn chat_commands_reach_the_session_as_typed_requests() {
    let app = app();
    let s = start_session(&app).await;
    let (status, body) = post_json(
        &app,
        &format!("/api/sessions/{s}/message"),
        r#"{"text":"hello"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let first = body["request"].as_str().unwrap().to_string();
    for (path, body) in [
        ("approve", r#"{"approval":3}"#),
        ("deny", r#"{"approval":4,"reason":"no"}"#),
        ("interrupt", "{}"),
    ] {
        let (status, b) = post_json(&app, &format!("/api/sessions/{s}/{path}"), body).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{path}: {b}");
    }
    let seen = wait_seen(&app, 4).await;
    assert_eq!(
        seen[0],
        ChatRequest::UserMessage {
            id: first,
            text: "hello".into()
        }
    );
    assert!(matches!(seen[1], ChatRequest::Approve { approval: 3, .. }));
    assert!(
        matches!(&seen[2], ChatRequest::Deny { approval: 4, reason: Some(r), .. } if r == "no")
    );
    assert!(matches!(seen[3], ChatRequest::Interrupt { .. }));
}

#[tokio::test]
async fn bad_json_and_wrong_shapes_are_400_with_a_message_and_reach_nothing() {
    let app = app();
    let s = start_session(&app).await;
    for (path, body) in [
        (format!("/api/sessions/{s}/message"), "not json"),
        (format!("/api/sessions/{s}/message"), r#"{"txt":"hi"}"#),
        (
            format!("/api/sessions/{s}/message"),
            r#"{"text":"hi","always":true}"#,
        ),
        (format!("/api/sessions/{s}/approve"), r#"{"approval":"3"}"#),
        (
            format!("/api/sessions/{s}/approve"),
            r#"{"approval":3,"always":true}"#,
        ),
        (
            format!("/api/sessions/{s}/approve"),
            r#"{"path":"notes.txt"}"#,
        ),
        (format!("/api/sessions/{s}/deny"), ""),
        (format!("/api/sessions/{s}/interrupt"), "[]"),
        (format!("/api/sessions/{s}/undo"), r#"{"change":"x"}"#),
        ("/api/sessions".to_string(), r#"{"workspace":3}"#),
        ("/api/runs".to_string(), r#"{"task":"x"}"#),
    ] {
        let (status, b) = post_json(&app, &path, body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path} {body}: {b}");
        assert!(message(&b).contains("request body is not"), "{b}");
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(app.engine.seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_message_over_32000_characters_is_refused_and_one_at_the_limit_goes_through() {
    let app = app();
    let s = start_session(&app).await;
    let uri = format!("/api/sessions/{s}/message");
    // Characters, not bytes: 32,001 two-byte characters.
    let over = json!({"text": "é".repeat(32_001)}).to_string();
    let (status, b) = post_json(&app, &uri, &over).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        message(&b).contains("32001 characters") && message(&b).contains("32000"),
        "{b}"
    );
    let (status, b) = post_json(&app, &uri, r#"{"text":"   "}"#).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{b}");
    let at = json!({"text": "é".repeat(32_000)}).to_string();
    let (status, _) = post_json(&app, &uri, &at).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(wait_seen(&app, 1).await.len(), 1);
    let task = json!({"task": "a".repeat(32_001), "model": "scripted:/tmp/x.jsonl"}).to_string();
    let (status, b) = post_json(&app, "/api/runs", &task).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{b}");
}

#[tokio::test]
async fn unknown_session_run_and_journal_ids_are_404_with_a_message() {
    let app = app();
    for (method, uri) in [
        ("POST", "/api/sessions/99/message"),
        ("POST", "/api/sessions/abc/approve"),
        ("GET", "/api/sessions/99/events"),
        ("GET", "/api/sessions/99/changes"),
        ("GET", "/api/runs/99/events"),
        ("GET", "/api/runs/-1/events"),
        ("GET", "/api/journal/2"),
        ("GET", "/api/journal/x"),
        ("GET", "/api/conversations/4"),
        ("GET", "/api/conversations/x"),
        ("GET", "/api/conversations/-"),
        ("GET", "/no-such-page"),
    ] {
        let request = if method == "POST" {
            post(uri).body(Body::from(r#"{"text":"hi"}"#)).unwrap()
        } else {
            get(uri).body(Body::empty()).unwrap()
        };
        let (status, _, b) = send(&app, request).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{uri}: {b}");
        assert!(!message(&b).is_empty(), "{uri}: {b}");
    }
    let (status, _, b) = send(&app, get("/api/journal/1").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{b}");
    let (status, _, b) = send(&app, get("/api/compare").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{b}");
    assert_eq!(b["shown"][0]["model"], "m\\u{202e}");
}

#[tokio::test]
async fn a_workspace_the_server_was_not_given_is_refused() {
    let app = app();
    let other = tempfile::tempdir().unwrap();
    let inside = app.workspace.join("sub");
    let dotdot = format!("{}/../", app.workspace.display());
    for w in [
        other.path().display().to_string(),
        inside.display().to_string(),
        dotdot,
        "/".to_string(),
    ] {
        let (status, b) =
            post_json(&app, "/api/sessions", &json!({"workspace": w}).to_string()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{w}: {b}");
        assert!(
            message(&b).contains("not a folder `rein serve` was given"),
            "{b}"
        );
    }
    let given = json!({"workspace": app.workspace.display().to_string()}).to_string();
    let (status, _) = post_json(&app, "/api/sessions", &given).await;
    assert_eq!(status, StatusCode::CREATED);
}

#[tokio::test]
async fn with_no_workspace_given_a_session_is_refused() {
    let engine = Arc::new(FakeEngine::default());
    let router = rein_web::router(Config {
        port: PORT,
        token: TOKEN.into(),
        workspaces: vec![],
        engine,
    });
    let dir = tempfile::tempdir().unwrap();
    let app = App {
        router,
        engine: Arc::new(FakeEngine::default()),
        workspace: dir.path().to_path_buf(),
        _dir: dir,
    };
    let (status, b) = post_json(&app, "/api/sessions", "{}").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(message(&b).contains("--workspace"), "{b}");
}

#[tokio::test]
async fn undo_and_changes_go_to_the_sessions_workspace() {
    let app = app();
    let s = start_session(&app).await;
    let (status, _, b) = send(
        &app,
        get(&format!("/api/sessions/{s}/changes"))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(b["workspace"], app.workspace.display().to_string());
    let (status, b) = post_json(&app, &format!("/api/sessions/{s}/undo"), r#"{"change":7}"#).await;
    assert_eq!(status, StatusCode::OK, "{b}");
    let (status, b) = post_json(&app, &format!("/api/sessions/{s}/undo"), r#"{"change":8}"#).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(message(&b).contains("no change 8"), "{b}");
}

/// Reads an SSE body until it ends, returning each event's data as JSON.
async fn sse_events(app: &App, uri: &str) -> Vec<Value> {
    let response = app
        .router
        .clone()
        .oneshot(get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/event-stream"
    );
    let bytes = tokio::time::timeout(Duration::from_secs(10), response.into_body().collect())
        .await
        .expect("the stream ends once the run is over")
        .unwrap()
        .to_bytes();
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

#[tokio::test]
async fn a_run_streams_its_events_with_model_text_shown_escaped_then_its_result_then_ends() {
    let app = app();
    let (status, b) = post_json(
        &app,
        "/api/runs",
        r#"{"task":"Set the variable x to 1.","model":"scripted:/tmp/x.jsonl"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    let run = b["run"].as_u64().unwrap();
    let events = sse_events(&app, &format!("/api/runs/{run}/events")).await;
    assert_eq!(events.len(), 3, "{events:#?}");
    assert_eq!(
        events[0]["event"]["thought"],
        "<script>alert(1)</script>\u{202e}"
    );
    assert_eq!(
        events[0]["shown"]["thought"],
        "<script>alert(1)</script>\\u{202e}"
    );
    assert_eq!(events[1]["event"]["event"], "result");
    assert_eq!(events[1]["event"]["result"]["verdict"], "pass");
    assert_eq!(events[2]["event"]["type"], "stream_end");
    // A model the server does not offer is refused.
    let (status, b) = post_json(
        &app,
        "/api/runs",
        r#"{"task":"x","model":"scripted:/etc/passwd"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(message(&b).contains("not one of the models"), "{b}");
}

#[tokio::test]
async fn a_reconnecting_page_gets_only_what_it_missed() {
    let app = app();
    let (_, b) = post_json(
        &app,
        "/api/runs",
        r#"{"task":"Set the variable x to 1.","model":"scripted:/tmp/x.jsonl"}"#,
    )
    .await;
    let run = b["run"].as_u64().unwrap();
    let all = sse_events(&app, &format!("/api/runs/{run}/events")).await;
    let response = app
        .router
        .clone()
        .oneshot(
            get(&format!("/api/runs/{run}/events"))
                .header("last-event-id", "0")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains("id: 0\n"), "{text}");
    assert!(
        text.contains("id: 1\n") && text.contains("id: 2\n"),
        "{text}"
    );
    assert_eq!(all.len(), 3);
}

#[tokio::test]
async fn opening_more_sessions_than_the_cap_ends_the_oldest_and_says_so() {
    let app = app();
    let first = start_session(&app).await;
    let mut last = first;
    for _ in 0..rein_web::MAX_LIVE_SESSIONS {
        last = start_session(&app).await;
    }
    let (status, b) = post_json(
        &app,
        &format!("/api/sessions/{first}/message"),
        r#"{"text":"hi"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{b}");
    let (status, b) = post_json(
        &app,
        &format!("/api/sessions/{last}/message"),
        r#"{"text":"hi"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{b}");
}

#[tokio::test]
async fn runs_past_the_cap_are_refused_until_one_finishes() {
    let app = app();
    app.engine
        .slow_runs
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let body = r#"{"task":"Set the variable x to 1.","model":"scripted:/tmp/x.jsonl"}"#;
    for _ in 0..rein_web::MAX_LIVE_RUNS {
        let (status, b) = post_json(&app, "/api/runs", body).await;
        assert_eq!(status, StatusCode::CREATED, "{b}");
    }
    let (status, b) = post_json(&app, "/api/runs", body).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(message(&b).contains("at most 4 at once"), "{b}");
    app.engine
        .slow_runs
        .store(false, std::sync::atomic::Ordering::SeqCst);
    let mut started = false;
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        if post_json(&app, "/api/runs", body).await.0 == StatusCode::CREATED {
            started = true;
            break;
        }
    }
    assert!(started, "a run starts again once the others finished");
}

#[tokio::test]
async fn conversations_are_listed_and_shown_with_model_text_made_visible() {
    let app = app();
    let (status, _, b) = send(&app, get("/api/conversations").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{b}");
    assert_eq!(b["conversations"][0]["id"], 3);
    assert_eq!(b["shown"][0]["workspace"], "/ws");
    let (status, _, b) = send(
        &app,
        get("/api/conversations/3").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{b}");
    assert_eq!(
        b["conversation"]["timeline"][0]["content"],
        "<img src=x>\u{202e}"
    );
    assert_eq!(b["shown"]["timeline"][0]["content"], "<img src=x>\\u{202e}");
    // Without the token: refused, no data.
    let request = Request::get("/api/conversations/3")
        .header(header::HOST, HOST)
        .body(Body::empty())
        .unwrap();
    let (status, _, b) = send(&app, request).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(b.get("conversation").is_none(), "{b}");
}

#[tokio::test]
async fn a_suite_run_is_checked_started_and_stopped() {
    let app = app();
    for (body, why) in [
        (
            r#"{"suite":"desk","model":"scripted:/tmp/x.jsonl"}"#,
            "not a suite",
        ),
        (
            r#"{"suite":"toy","model":"other"}"#,
            "not one of the models",
        ),
        (
            r#"{"suite":"toy","model":"scripted:/tmp/x.jsonl","task":"nope"}"#,
            "no task",
        ),
        (
            r#"{"suite":"toy","model":"scripted:/tmp/x.jsonl","split":"train"}"#,
            "dev, heldout or all",
        ),
        (
            r#"{"suite":"toy","model":"scripted:/tmp/x.jsonl","task":"note-hello","split":"dev"}"#,
            "not both",
        ),
        (
            r#"{"suite":"toy","model":"scripted:/tmp/x.jsonl","tasks":[]}"#,
            "request body",
        ),
        (r#"{"suite":"toy"}"#, "request body"),
    ] {
        let (status, b) = post_json(&app, "/api/suite-runs", body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {b}");
        assert!(message(&b).contains(why), "{body}: {b}");
    }
    let (status, b) = post_json(
        &app,
        "/api/suite-runs",
        r#"{"suite":"toy","model":"scripted:/tmp/x.jsonl","task":"note-hello"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    let run = b["run"].as_u64().unwrap();
    let (status, b) = post_json(&app, &format!("/api/runs/{run}/stop"), "{\"now\":1}").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{b}");
    let (status, b) = post_json(&app, &format!("/api/runs/{run}/stop"), "{}").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{b}");
    let (status, b) = post_json(&app, "/api/runs/999/stop", "{}").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{b}");
    // The run ends stopped: its log says so.
    let events = sse_events(&app, &format!("/api/runs/{run}/events")).await;
    assert!(
        events
            .iter()
            .any(|e| e["event"]["event"] == "result" && e["event"]["result"]["stopped"] == true),
        "{events:?}"
    );
    // An ad-hoc run has nothing to stop.
    let (status, b) = post_json(
        &app,
        "/api/runs",
        r#"{"task":"Set the variable x to 1.","model":"scripted:/tmp/x.jsonl"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    let adhoc = b["run"].as_u64().unwrap();
    let (status, b) = post_json(&app, &format!("/api/runs/{adhoc}/stop"), "{}").await;
    assert_eq!(status, StatusCode::CONFLICT, "{b}");
    let (_, _, b) = send(&app, get("/api/config").body(Body::empty()).unwrap()).await;
    assert_eq!(b["suites"][0]["name"], "toy");
}

#[tokio::test]
async fn a_refused_page_visit_gets_a_short_page_and_a_script_gets_json() {
    let app = app();
    let html = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    for (host, cookie, status) in [
        (HOST, false, StatusCode::UNAUTHORIZED),
        ("evil<script>.example:4321", true, StatusCode::FORBIDDEN),
    ] {
        let mut request = Request::get("/cowork")
            .header(header::HOST, host)
            .header(header::ACCEPT, html);
        if cookie {
            request = request.header(header::COOKIE, format!("rein_token={TOKEN}"));
        }
        let response = app
            .router
            .clone()
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), status);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "text/html; charset=utf-8"
        );
        assert!(response
            .headers()
            .contains_key(header::CONTENT_SECURITY_POLICY));
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let page = String::from_utf8_lossy(&bytes);
        assert!(page.contains("<h1>Refused"), "{page}");
        assert!(!page.contains("<script"), "the host is escaped: {page}");
        assert!(!page.contains("Approvals"), "no page content leaks: {page}");
        if cookie {
            assert!(page.contains("evil&lt;script&gt;.example"), "{page}");
        } else {
            assert!(page.contains("launch token"), "{page}");
        }
    }
    // A script (fetch sends */*) still gets JSON.
    let request = Request::get("/api/config")
        .header(header::HOST, HOST)
        .header(header::ACCEPT, "*/*")
        .body(Body::empty())
        .unwrap();
    let (status, headers, b) = send(&app, request).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(headers[header::CONTENT_TYPE], "application/json");
    assert!(message(&b).contains("launch token"));
}

// ---------------------------------------------------------------------------------------------
// Red team: suite runs, stop, the first visit's redirect.

#[tokio::test]
async fn a_suite_name_or_task_that_is_not_offered_verbatim_is_refused() {
    let app = app();
    for body in [
        r#"{"suite":"../toy","model":"scripted:/tmp/x.jsonl"}"#,
        r#"{"suite":"/toy","model":"scripted:/tmp/x.jsonl"}"#,
        r#"{"suite":"toy/","model":"scripted:/tmp/x.jsonl"}"#,
        r#"{"suite":"TOY","model":"scripted:/tmp/x.jsonl"}"#,
        r#"{"suite":"toy\u0000","model":"scripted:/tmp/x.jsonl"}"#,
        r#"{"suite":"/etc/passwd","model":"scripted:/tmp/x.jsonl"}"#,
        r#"{"suite":"toy","model":"scripted:/tmp/x.jsonl","task":"../note-hello"}"#,
        r#"{"suite":"toy","model":"scripted:/tmp/x.jsonl","task":"note-hello/"}"#,
        r#"{"suite":"toy","model":"scripted:/tmp/x.jsonl","split":"ALL"}"#,
        r#"{"suite":"toy","model":"scripted:/tmp/x.jsonl","split":""}"#,
        r#"{"suite":"toy","model":"scripted:/tmp/../tmp/x.jsonl"}"#,
        r#"{"suite":"toy","model":"scripted:/tmp/x.jsonl","split":null,"task":null,"x":1}"#,
        r#"{"suite":["toy"],"model":"scripted:/tmp/x.jsonl"}"#,
    ] {
        let (status, b) = post_json(&app, "/api/suite-runs", body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {b}");
        assert!(!message(&b).is_empty(), "{body}");
    }
    // A huge split is refused without being echoed whole.
    let huge = format!(
        r#"{{"suite":"toy","model":"scripted:/tmp/x.jsonl","split":"{}"}}"#,
        "x".repeat(100_000)
    );
    let (status, b) = post_json(&app, "/api/suite-runs", &huge).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{b}");
    assert!(
        message(&b).len() < 2_000,
        "{} bytes echoed",
        message(&b).len()
    );
    assert!(message(&b).contains("..."), "the clip says so: {b}");
    let long = "x".repeat(100_000);
    for (uri, body) in [
        ("/api/sessions", json!({ "workspace": long })),
        ("/api/runs", json!({"task": "t", "model": long})),
        ("/api/suite-runs", json!({"suite": long, "model": "m"})),
    ] {
        let (status, b) = post_json(&app, uri, &body.to_string()).await;
        assert!(status.is_client_error(), "{uri}: {status}");
        let n = message(&b).len();
        assert!(n > 0 && n < 2_000, "{uri}: {n} bytes echoed");
    }
    // Nothing was started by any of them.
    let (status, _) = post_json(&app, "/api/runs/1/stop", "{}").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn suite_runs_share_the_cap_on_live_runs_and_stopping_an_ended_run_says_so() {
    let app = app();
    let body = r#"{"suite":"toy","model":"scripted:/tmp/x.jsonl","split":"all"}"#;
    let mut runs = Vec::new();
    for _ in 0..rein_web::MAX_LIVE_RUNS {
        let (status, b) = post_json(&app, "/api/suite-runs", body).await;
        assert_eq!(status, StatusCode::CREATED, "{b}");
        runs.push(b["run"].as_u64().unwrap());
    }
    let (status, b) = post_json(&app, "/api/suite-runs", body).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{b}");
    assert!(message(&b).contains("at most 4 at once"), "{b}");
    let (status, _) = post_json(
        &app,
        "/api/runs",
        r#"{"task":"Set the variable x to 1.","model":"scripted:/tmp/x.jsonl"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    for run in &runs {
        let (status, b) = post_json(&app, &format!("/api/runs/{run}/stop"), "{}").await;
        assert_eq!(status, StatusCode::ACCEPTED, "{b}");
    }
    for run in &runs {
        let _ = sse_events(&app, &format!("/api/runs/{run}/events")).await;
    }
    // The run is over: a stop now is no "stopping".
    let (status, b) = post_json(&app, &format!("/api/runs/{}/stop", runs[0]), "{}").await;
    assert_eq!(status, StatusCode::CONFLICT, "{b}");
    assert!(message(&b).contains("already ended"), "{b}");
    // Bogus ids.
    for id in ["-1", "18446744073709551616", "1%2F..", "abc"] {
        let (status, b) = post_json(&app, &format!("/api/runs/{id}/stop"), "{}").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{id}: {b}");
    }
    // Without the Origin, or with the token only in the URL, a stop is refused.
    let request = Request::post(format!("/api/runs/{}/stop", runs[1]))
        .header(header::HOST, HOST)
        .header(header::COOKIE, format!("rein_token={TOKEN}"))
        .body(Body::from("{}"))
        .unwrap();
    assert_eq!(send(&app, request).await.0, StatusCode::FORBIDDEN);
    let request = Request::post(format!("/api/runs/{}/stop?token={TOKEN}", runs[1]))
        .header(header::HOST, HOST)
        .header(header::ORIGIN, ORIGIN)
        .body(Body::from("{}"))
        .unwrap();
    assert_eq!(send(&app, request).await.0, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_first_visit_never_redirects_off_the_server() {
    let app = app();
    for path in ["//evil.example/x", "///evil.example", "/\\evil.example"] {
        let request = match Request::get(format!("{path}?token={TOKEN}"))
            .header(header::HOST, HOST)
            .body(Body::empty())
        {
            Ok(r) => r,
            Err(_) => continue,
        };
        let (status, headers, _) = send(&app, request).await;
        if status != StatusCode::SEE_OTHER {
            continue;
        }
        let location = headers[header::LOCATION].to_str().unwrap();
        assert!(
            location.starts_with('/') && !location.starts_with("//") && !location.contains('\\'),
            "{path}: redirected to {location}"
        );
    }
}

#[tokio::test]
async fn ended_run_logs_are_kept_up_to_a_cap_and_a_dropped_one_says_so() {
    let app = app();
    let body = r#"{"task":"Set the variable x to 1.","model":"scripted:/tmp/x.jsonl"}"#;
    let mut ids = Vec::new();
    for _ in 0..rein_web::MAX_KEPT_RUNS + 2 {
        let (status, b) = post_json(&app, "/api/runs", body).await;
        assert_eq!(status, StatusCode::CREATED, "{b}");
        let id = b["run"].as_u64().unwrap();
        let _ = sse_events(&app, &format!("/api/runs/{id}/events")).await;
        ids.push(id);
    }
    // The oldest ended logs are dropped (each holds up to 100,000 events), and a page that asks
    // for one is told why.
    let (status, _, b) = send(
        &app,
        get(&format!("/api/runs/{}/events", ids[0]))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{b}");
    assert!(message(&b).contains("keeps the last"), "{b}");
    let last = ids.last().unwrap();
    let events = sse_events(&app, &format!("/api/runs/{last}/events")).await;
    assert!(!events.is_empty());
}
