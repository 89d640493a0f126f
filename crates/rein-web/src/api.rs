//! The HTTP API the pages use (docs/web-api.md). Commands are typed POST requests with a JSON
//! body; a body that is not the expected JSON is refused with 400 and a message. A chat
//! command is handed to the session as the same `ChatRequest` that `rein chat --json` reads;
//! its outcome (including a refusal, such as a double approve) arrives as events.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{Path, State as AxState};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rein_protocol::chat::ChatRequest;
use rein_protocol::cowork::MAX_MESSAGE_CHARS;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::guard::{refuse, Refusal};
use crate::hub::Hub;
use crate::{ChatHandle, State, SuiteRequest};

type St = AxState<Arc<State>>;

pub(crate) fn routes() -> Router<Arc<State>> {
    Router::new()
        .route("/api/config", get(config))
        .route("/api/sessions", post(start_session))
        .route("/api/sessions/{id}/events", get(session_events))
        .route("/api/sessions/{id}/message", post(message))
        .route("/api/sessions/{id}/approve", post(approve))
        .route("/api/sessions/{id}/deny", post(deny))
        .route("/api/sessions/{id}/interrupt", post(interrupt))
        .route("/api/sessions/{id}/changes", get(changes))
        .route("/api/sessions/{id}/undo", post(undo))
        .route("/api/runs", post(start_run))
        .route("/api/runs/{id}/events", get(run_events))
        .route("/api/runs/{id}/stop", post(stop_run))
        .route("/api/suite-runs", post(start_suite_run))
        .route("/api/journal", get(journal_list))
        .route("/api/journal/{run}", get(journal_show))
        .route("/api/compare", get(compare))
        .route("/api/conversations", get(conversations))
        .route("/api/conversations/{id}", get(conversation))
}

/// Reads a JSON body, or refuses with 400 and what was wrong.
fn body<T: DeserializeOwned>(bytes: &Bytes, expected: &str) -> Result<T, Refusal> {
    serde_json::from_slice(bytes).map_err(|e| {
        Refusal::new(
            StatusCode::BAD_REQUEST,
            format!("the request body is not {expected} ({e})"),
        )
    })
}

fn id_of(raw: &str, what: &str) -> Result<u64, Refusal> {
    raw.parse::<u64>().map_err(|_| {
        Refusal::new(
            StatusCode::NOT_FOUND,
            format!("{} is not a {what} id", echo(raw)),
        )
    })
}

/// `value`'s fields, plus `shown`: the same with model text made visible (what pages render).
fn with_shown(value: Value) -> Value {
    let shown = crate::shown(&value);
    match value {
        Value::Object(mut map) => {
            map.insert("shown".into(), shown);
            Value::Object(map)
        }
        other => json!({"value": other, "shown": shown}),
    }
}

fn engine_error(message: String) -> Response {
    refuse(StatusCode::INTERNAL_SERVER_ERROR, message)
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, Response> {
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result.map_err(engine_error),
        Err(e) => Err(engine_error(format!("the work stopped unexpectedly ({e})"))),
    }
}

async fn config(AxState(state): St) -> Response {
    let c = &state.config;
    Json(json!({
        "workspaces": c.workspaces.iter().map(|w| w.display().to_string()).collect::<Vec<_>>(),
        "models": c.engine.models(),
        "examples": c.engine.examples(),
        "suites": c.engine.suites(),
        "max_message_chars": MAX_MESSAGE_CHARS,
    }))
    .into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StartSession {
    /// One of the folders `rein serve` was given (the first when absent).
    #[serde(default)]
    workspace: Option<String>,
}

async fn start_session(AxState(state): St, bytes: Bytes) -> Response {
    let start: StartSession = match body(&bytes, "{\"workspace\": PATH}") {
        Ok(s) => s,
        Err(r) => return r.into_response(),
    };
    let given = &state.config.workspaces;
    let workspace = match &start.workspace {
        None => given.first().cloned(),
        Some(w) => given
            .iter()
            .find(|g| g.as_path() == std::path::Path::new(w))
            .cloned(),
    };
    let Some(workspace) = workspace else {
        let message = match &start.workspace {
            None => "no workspace was given to `rein serve`; restart it with --workspace DIR"
                .to_string(),
            Some(w) => format!(
                "refused: {} is not a folder `rein serve` was given (the page cannot widen \
                 them; restart with --workspace {} to add it)",
                echo(w),
                echo(w)
            ),
        };
        return refuse(StatusCode::FORBIDDEN, message);
    };
    let id = state.fresh_id();
    let hub = Arc::new(Hub::default());
    let (tx, rx) = mpsc::channel();
    let handle = Arc::new(ChatHandle {
        requests: Mutex::new(tx),
        hub: hub.clone(),
        workspace: workspace.clone(),
    });
    if let Ok(mut sessions) = state.sessions.lock() {
        // Ending the oldest drops its request channel: its loop finishes the turn it is in,
        // if any, and stops, and its model with it.
        while sessions.len() >= crate::MAX_LIVE_SESSIONS {
            let Some(oldest) = sessions.keys().min().copied() else {
                break;
            };
            if let Some(old) = sessions.remove(&oldest) {
                old.hub.push(json!({"type": "error", "message": format!(
                    "this session was ended because a newer page opened a session and at most \
                     {} are kept live (each holds a model); reload to start a new one",
                    crate::MAX_LIVE_SESSIONS
                )}));
            }
        }
        sessions.insert(id, handle);
    }
    let engine = state.config.engine.clone();
    let sink_hub = hub.clone();
    std::thread::spawn(move || {
        let mut prose = crate::prose::Prose::default();
        let sink = Box::new(move |event: rein_protocol::chat::ChatEvent| {
            let token = match &event.kind {
                rein_protocol::chat::EventKind::Token { text } => Some(prose.push(text)),
                _ => {
                    prose.reset();
                    None
                }
            };
            if let Ok(value) = serde_json::to_value(&event) {
                match token {
                    Some(p) => sink_hub.push_token(value, p),
                    None => sink_hub.push(value),
                }
            }
        });
        engine.run_chat(workspace, rx, sink);
        hub.close();
    });
    (StatusCode::CREATED, Json(json!({ "session": id }))).into_response()
}

fn session(state: &State, raw: &str) -> Result<Arc<ChatHandle>, Refusal> {
    let id = id_of(raw, "session")?;
    state
        .sessions
        .lock()
        .ok()
        .and_then(|s| s.get(&id).cloned())
        .ok_or_else(|| {
            Refusal::new(
                StatusCode::NOT_FOUND,
                format!("there is no session {id}; reload the page to start one"),
            )
        })
}

async fn session_events(
    AxState(state): St,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    match session(&state, &id) {
        Ok(s) => s.hub.clone().sse(&headers).into_response(),
        Err(r) => r.into_response(),
    }
}

/// Hands one request to the session; 202 with the request id its events will carry.
fn send(state: &State, raw: &str, make: impl FnOnce(String) -> ChatRequest) -> Response {
    let handle = match session(state, raw) {
        Ok(h) => h,
        Err(r) => return r.into_response(),
    };
    let request_id = format!("w{}", state.fresh_id());
    let request = make(request_id.clone());
    let sent = handle
        .requests
        .lock()
        .map(|tx| tx.send(request).is_ok())
        .unwrap_or(false);
    if !sent {
        return refuse(
            StatusCode::GONE,
            "this session has ended; reload the page to start a new one",
        );
    }
    (StatusCode::ACCEPTED, Json(json!({ "request": request_id }))).into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Message {
    text: String,
}

async fn message(AxState(state): St, Path(id): Path<String>, bytes: Bytes) -> Response {
    if let Err(r) = session(&state, &id) {
        return r.into_response();
    }
    let m: Message = match body(&bytes, "{\"text\": STRING}") {
        Ok(m) => m,
        Err(r) => return r.into_response(),
    };
    let chars = m.text.chars().count();
    if chars > MAX_MESSAGE_CHARS {
        return refuse(
            StatusCode::BAD_REQUEST,
            format!(
                "the message has {chars} characters, more than the {MAX_MESSAGE_CHARS} one \
                 message may have; shorten it or split it; nothing was sent"
            ),
        );
    }
    if m.text.trim().is_empty() {
        return refuse(
            StatusCode::BAD_REQUEST,
            "the message is empty; type a request",
        );
    }
    send(&state, &id, |id| ChatRequest::UserMessage {
        id,
        text: m.text,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Decide {
    approval: i64,
    #[serde(default)]
    reason: Option<String>,
}

async fn approve(AxState(state): St, Path(id): Path<String>, bytes: Bytes) -> Response {
    if let Err(r) = session(&state, &id) {
        return r.into_response();
    }
    let d: Decide = match body(&bytes, "{\"approval\": NUMBER}") {
        Ok(d) => d,
        Err(r) => return r.into_response(),
    };
    if d.reason.is_some() {
        return refuse(
            StatusCode::BAD_REQUEST,
            "approve takes only {\"approval\": NUMBER}; a reason belongs to deny",
        );
    }
    send(&state, &id, |id| ChatRequest::Approve {
        id,
        approval: d.approval,
    })
}

async fn deny(AxState(state): St, Path(id): Path<String>, bytes: Bytes) -> Response {
    if let Err(r) = session(&state, &id) {
        return r.into_response();
    }
    let d: Decide = match body(&bytes, "{\"approval\": NUMBER, \"reason\": STRING?}") {
        Ok(d) => d,
        Err(r) => return r.into_response(),
    };
    send(&state, &id, |id| ChatRequest::Deny {
        id,
        approval: d.approval,
        reason: d.reason,
    })
}

async fn interrupt(AxState(state): St, Path(id): Path<String>, bytes: Bytes) -> Response {
    if let Err(r) = session(&state, &id) {
        return r.into_response();
    }
    match body::<serde_json::Map<String, Value>>(&bytes, "{}") {
        Ok(map) if map.is_empty() => {}
        Ok(_) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "the request body is not {} (interrupt takes no fields)",
            )
        }
        Err(r) => return r.into_response(),
    }
    send(&state, &id, |id| ChatRequest::Interrupt { id })
}

async fn changes(AxState(state): St, Path(id): Path<String>) -> Response {
    let handle = match session(&state, &id) {
        Ok(h) => h,
        Err(r) => return r.into_response(),
    };
    let engine = state.config.engine.clone();
    let workspace = handle.workspace.clone();
    match blocking(move || engine.changes(workspace)).await {
        Ok(v) => Json(with_shown(v)).into_response(),
        Err(r) => r.into_response(),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Undo {
    change: i64,
}

async fn undo(AxState(state): St, Path(id): Path<String>, bytes: Bytes) -> Response {
    let u: Undo = match body(&bytes, "{\"change\": NUMBER}") {
        Ok(u) => u,
        Err(r) => return r.into_response(),
    };
    let handle = match session(&state, &id) {
        Ok(h) => h,
        Err(r) => return r.into_response(),
    };
    let engine = state.config.engine.clone();
    let workspace: PathBuf = handle.workspace.clone();
    match tokio::task::spawn_blocking(move || engine.undo(workspace, u.change)).await {
        Ok(Ok(v)) => Json(with_shown(v)).into_response(),
        Ok(Err(message)) => refuse(StatusCode::CONFLICT, message),
        Err(e) => engine_error(format!("the undo stopped unexpectedly ({e})")),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StartRun {
    task: String,
    model: String,
}

async fn start_run(AxState(state): St, bytes: Bytes) -> Response {
    let r: StartRun = match body(&bytes, "{\"task\": STRING, \"model\": STRING}") {
        Ok(r) => r,
        Err(r) => return r.into_response(),
    };
    let chars = r.task.chars().count();
    if chars > MAX_MESSAGE_CHARS {
        return refuse(
            StatusCode::BAD_REQUEST,
            format!(
                "the task has {chars} characters, more than the {MAX_MESSAGE_CHARS} a task may \
                 have; shorten it; nothing was run"
            ),
        );
    }
    if r.task.trim().is_empty() {
        return refuse(
            StatusCode::BAD_REQUEST,
            "the task is empty; type one or pick a Try chip",
        );
    }
    let engine = state.config.engine.clone();
    if !engine.models().contains(&r.model) {
        return refuse(
            StatusCode::BAD_REQUEST,
            format!(
                "refused: {} is not one of the models this server offers ({})",
                echo(&r.model),
                engine.models().join(", ")
            ),
        );
    }
    spawn_run(&state, None, move |hub| {
        engine.run_task(&r.task, &r.model, &mut |event| hub.push(event))
    })
}

/// Starts one bench run on its own thread (refused with 429 past [`crate::MAX_LIVE_RUNS`]):
/// its events go to a new log, then `result` or `error`, then `stream_end`. 201 `{"run": N}`.
fn spawn_run(
    state: &Arc<State>,
    stop: Option<Arc<AtomicBool>>,
    work: impl FnOnce(&Hub) -> Result<Value, String> + Send + 'static,
) -> Response {
    let running = state.running.fetch_add(1, Ordering::SeqCst);
    if running >= crate::MAX_LIVE_RUNS {
        state.running.fetch_sub(1, Ordering::SeqCst);
        return refuse(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "{running} runs are already working (at most {} at once, each holds a model); \
                 wait for one to finish; nothing was started",
                crate::MAX_LIVE_RUNS
            ),
        );
    }
    let id = state.fresh_id();
    let hub = Arc::new(Hub::default());
    if let Ok(mut runs) = state.runs.lock() {
        runs.insert(id, hub.clone());
        while runs.len() > crate::MAX_KEPT_RUNS {
            let Some(oldest) = runs
                .iter()
                .filter(|(_, h)| h.is_closed())
                .map(|(id, _)| *id)
                .min()
            else {
                break;
            };
            runs.remove(&oldest);
            if let Ok(mut stops) = state.stops.lock() {
                stops.remove(&oldest);
            }
        }
    }
    if let (Some(stop), Ok(mut stops)) = (stop, state.stops.lock()) {
        stops.insert(id, stop);
    }
    let state = state.clone();
    std::thread::spawn(move || {
        match work(&hub) {
            Ok(doc) => hub.push(json!({"event": "result", "result": doc})),
            Err(message) => hub.push(json!({"event": "error", "message": message})),
        }
        state.running.fetch_sub(1, Ordering::SeqCst);
        hub.close();
    });
    (StatusCode::CREATED, Json(json!({ "run": id }))).into_response()
}

async fn start_suite_run(AxState(state): St, bytes: Bytes) -> Response {
    let r: SuiteRequest = match body(
        &bytes,
        "{\"suite\": NAME, \"model\": STRING, \"task\": ID?, \"split\": \"dev\"|\"heldout\"|\"all\"?}",
    ) {
        Ok(r) => r,
        Err(r) => return r.into_response(),
    };
    let engine = state.config.engine.clone();
    if let Err(refusal) = check_suite_request(&r, &engine.suites(), &engine.models()) {
        return refusal.into_response();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    spawn_run(&state, Some(stop), move |hub| {
        engine.run_suite(&r, &flag, &mut |event| hub.push(event))
    })
}

/// Most characters of a refused name a refusal repeats (clipped with `...`, escaped).
const ECHO_CHARS: usize = 300;

/// A name from a request as a refusal repeats it: quoted, escaped, clipped.
fn echo(s: &str) -> String {
    format!("\"{}\"", rein_protocol::display::clip_line(s, ECHO_CHARS))
}

/// A suite request names a suite, model, task and split the server offers, else 400 with what
/// to pick instead (nothing is started).
fn check_suite_request(r: &SuiteRequest, suites: &Value, models: &[String]) -> Result<(), Refusal> {
    let bad = |m: String| Err(Refusal::new(StatusCode::BAD_REQUEST, m));
    let list = suites.as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = list.iter().filter_map(|s| s["name"].as_str()).collect();
    let Some(suite) = list.iter().find(|s| s["name"] == r.suite.as_str()) else {
        return bad(format!(
            "refused: {} is not a suite this server offers ({}); nothing was run",
            echo(&r.suite),
            names.join(", ")
        ));
    };
    if !models.contains(&r.model) {
        return bad(format!(
            "refused: {} is not one of the models this server offers ({}); nothing was run",
            echo(&r.model),
            models.join(", ")
        ));
    }
    if r.task.is_some() && r.split.is_some() {
        return bad("give a task or a split, not both; nothing was run".into());
    }
    if let Some(split) = &r.split {
        if !["dev", "heldout", "all"].contains(&split.as_str()) {
            return bad(format!(
                "refused: the split is dev, heldout or all, not {}; nothing was run",
                echo(split)
            ));
        }
    }
    if let Some(task) = &r.task {
        let tasks = suite["tasks"].as_array().cloned().unwrap_or_default();
        if !tasks.iter().any(|t| t["id"] == task.as_str()) {
            return bad(format!(
                "refused: suite {} has no task {}; nothing was run",
                echo(&r.suite),
                echo(task)
            ));
        }
    }
    Ok(())
}

async fn stop_run(AxState(state): St, Path(id): Path<String>, bytes: Bytes) -> Response {
    let id = match id_of(&id, "run") {
        Ok(id) => id,
        Err(r) => return r.into_response(),
    };
    match body::<serde_json::Map<String, Value>>(&bytes, "{}") {
        Ok(map) if map.is_empty() => {}
        Ok(_) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "the request body is not {} (stop takes no fields)",
            )
        }
        Err(r) => return r.into_response(),
    }
    let known = state.runs.lock().ok().is_some_and(|r| r.contains_key(&id));
    if !known {
        return refuse(
            StatusCode::NOT_FOUND,
            format!("there is no run {id} on this server{}", kept_note()),
        );
    }
    let ended = state
        .runs
        .lock()
        .ok()
        .and_then(|r| r.get(&id).map(|h| h.is_closed()))
        .unwrap_or(false);
    if ended {
        return refuse(
            StatusCode::CONFLICT,
            format!("run {id} has already ended; there is nothing to stop"),
        );
    }
    let flag = state.stops.lock().ok().and_then(|s| s.get(&id).cloned());
    match flag {
        Some(flag) => {
            flag.store(true, Ordering::SeqCst);
            (StatusCode::ACCEPTED, Json(json!({"stopping": id}))).into_response()
        }
        None => refuse(
            StatusCode::CONFLICT,
            format!("run {id} is one ad-hoc task and cannot be stopped; it ends by itself"),
        ),
    }
}

/// Why a run id may be unknown although it was started here.
fn kept_note() -> String {
    format!(
        " (it keeps the last {} run logs; the runs page shows every run from the journal)",
        crate::MAX_KEPT_RUNS
    )
}

async fn run_events(AxState(state): St, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let id = match id_of(&id, "run") {
        Ok(id) => id,
        Err(r) => return r.into_response(),
    };
    let hub = state.runs.lock().ok().and_then(|r| r.get(&id).cloned());
    match hub {
        Some(hub) => hub.sse(&headers).into_response(),
        None => refuse(
            StatusCode::NOT_FOUND,
            format!(
                "there is no run {id} on this server{}; start one from the bench page",
                kept_note()
            ),
        ),
    }
}

async fn journal_list(AxState(state): St) -> Response {
    let engine = state.config.engine.clone();
    match blocking(move || engine.journal_list()).await {
        Ok(v) => Json(json!({"runs": v, "shown": crate::shown(&v)})).into_response(),
        Err(r) => r.into_response(),
    }
}

async fn journal_show(AxState(state): St, Path(run): Path<String>) -> Response {
    let Ok(run) = run.parse::<i64>() else {
        return refuse(
            StatusCode::NOT_FOUND,
            format!("{} is not a run id; the runs page lists them", echo(&run)),
        );
    };
    let engine = state.config.engine.clone();
    match blocking(move || engine.journal_show(run)).await {
        Ok(Some(v)) => Json(json!({"trace": v, "shown": crate::shown(&v)})).into_response(),
        Ok(None) => refuse(
            StatusCode::NOT_FOUND,
            format!("there is no run {run} in the journal"),
        ),
        Err(r) => r.into_response(),
    }
}

async fn compare(AxState(state): St) -> Response {
    let engine = state.config.engine.clone();
    match blocking(move || engine.compare()).await {
        Ok(v) => Json(json!({"models": v, "shown": crate::shown(&v)})).into_response(),
        Err(r) => r.into_response(),
    }
}

async fn conversations(AxState(state): St) -> Response {
    let engine = state.config.engine.clone();
    match blocking(move || engine.conversations()).await {
        Ok(v) => Json(json!({"conversations": v, "shown": crate::shown(&v)})).into_response(),
        Err(r) => r.into_response(),
    }
}

async fn conversation(AxState(state): St, Path(id): Path<String>) -> Response {
    let Ok(id) = id.parse::<i64>() else {
        return refuse(
            StatusCode::NOT_FOUND,
            format!(
                "{} is not a conversation id; the runs page lists them",
                echo(&id)
            ),
        );
    };
    let engine = state.config.engine.clone();
    match blocking(move || engine.conversation(id)).await {
        Ok(Some(v)) => Json(json!({"conversation": v, "shown": crate::shown(&v)})).into_response(),
        Ok(None) => refuse(
            StatusCode::NOT_FOUND,
            format!("there is no conversation {id} in chat.db"),
        ),
        Err(r) => r.into_response(),
    }
}
