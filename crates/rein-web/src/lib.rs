//! Rein's local web UI (`rein serve`): an axum server bound to 127.0.0.1, guarded by a random
//! launch token, serving embedded pages (cowork, bench, run viewer) and a small HTTP API
//! (docs/web-api.md).
//!
//! The pages drive the same engine as the terminal through the same protocol types: a chat
//! session's events are exactly the `rein_protocol::chat::ChatEvent`s of `rein chat --json`,
//! and its commands are the `ChatRequest`s, sent as typed POST requests. This crate knows no
//! model, store or workspace: the binary hands it an [`Engine`] that does the work, so the
//! engine never depends on the web and the router is tested with a fake one.
//!
//! | module | what it holds |
//! | --- | --- |
//! | `guard` | the launch token, Host and Origin checks, the security headers |
//! | `hub` | an append-only event log per session or run, streamed as server-sent events |
//! | `api` | the JSON commands and reads |
//! | `assets` | the embedded pages, scripts and styles |
//! | `prose` | the actor's streamed reply as prose (thought, answer), not raw JSON |
//! | `shown` | model text made visible (controls, bidi) with the terminal's display helper |

mod api;
mod assets;
mod guard;
mod hub;
mod prose;
mod shown;

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

use axum::Router;
use rein_protocol::chat::{ChatEvent, ChatRequest};
use serde_json::Value;

pub use guard::{new_token, COOKIE_NAME};
pub use hub::Hub;
pub use shown::shown;

/// Errors of starting the server.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error("cannot listen on 127.0.0.1:{port} ({source}); pick another port with --port N")]
    Bind {
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("the web server stopped: {0}")]
    Serve(#[source] std::io::Error),
    #[error("cannot make a launch token: the system's random source failed ({0})")]
    Random(String),
}

/// Where a chat session's events go (called from the session's own thread).
pub type ChatSink = Box<dyn FnMut(ChatEvent) + Send>;
/// Where a bench run's events go: each `rein_engine::agent::AgentEvent` as JSON.
pub type RunSink<'a> = &'a mut (dyn FnMut(Value) + Send);

/// What the web asks of the engine. The binary implements it over the real stores and models;
/// every method that does work blocks, and is called off the async runtime.
pub trait Engine: Send + Sync + 'static {
    /// The models the bench page offers (catalog names, `scripted:FILE`, ...).
    fn models(&self) -> Vec<String>;
    /// Example tasks for the bench page's "Try" chips.
    fn examples(&self) -> Vec<String>;
    /// Runs a chat session on `workspace` (one the server was given) until `requests` is
    /// closed: exactly the loop of `rein chat --json`, fed from the channel. Blocks.
    fn run_chat(&self, workspace: PathBuf, requests: Receiver<ChatRequest>, sink: ChatSink);
    /// Runs one ad-hoc bench task with `model`; the agent's events go to `sink` as they happen,
    /// and the result document (verdict, reason, sandbox files, variables, actions) is
    /// returned. Blocks.
    fn run_task(&self, task: &str, model: &str, sink: RunSink<'_>) -> Result<Value, String>;
    /// The agent suites the bench page offers: `[{"name", "description", "tasks": [{"id",
    /// "category", "split", "sandbox"}]}]`.
    fn suites(&self) -> Value;
    /// Runs the chosen tasks of a suite with one model through `rein bench`'s engine (a fresh
    /// sandbox per task, every run journaled). Events go to `sink` as they happen:
    /// `suite_started`, then per task `task_started`, the agent's events, `token`s and
    /// `task_result`; it stops before the next task (and at the current run's next model call)
    /// once `stop` is set. Returns the summary. Blocks.
    fn run_suite(
        &self,
        request: &SuiteRequest,
        stop: &AtomicBool,
        sink: RunSink<'_>,
    ) -> Result<Value, String>;
    /// Every run in the journal (`rein journal list --json`).
    fn journal_list(&self) -> Result<Value, String>;
    /// One run step by step (`rein journal show RUN --json`); `None` when there is no such run.
    fn journal_show(&self, run: i64) -> Result<Option<Value>, String>;
    /// Every chat conversation in chat.db: `[{"id", "workspace", "title", "model",
    /// "created_at"}]`, oldest first.
    fn conversations(&self) -> Result<Value, String>;
    /// One conversation step by step: `{"conversation", "turns", "turn_runs", "approvals",
    /// "timeline"}` (docs/web-api.md); `None` when there is no such conversation.
    fn conversation(&self, id: i64) -> Result<Option<Value>, String>;
    /// Pass rates per mission and model over the journal's finished runs, each with its Wilson
    /// 95 % interval: `[{"mission", "model", "runs", "passes", "rate", "low", "high"}]`.
    fn compare(&self) -> Result<Value, String>;
    /// Applied changes of a workspace, newest first (`rein changes --json`).
    fn changes(&self, workspace: PathBuf) -> Result<Value, String>;
    /// Reverts one applied change of a workspace (`rein undo`).
    fn undo(&self, workspace: PathBuf, change: i64) -> Result<Value, String>;
}

/// A suite run the bench page asks for (`POST /api/suite-runs`): one task of the suite, or
/// every task of a split (`dev` when neither is given, as `rein bench`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteRequest {
    pub suite: String,
    pub model: String,
    #[serde(default)]
    pub task: Option<String>,
    #[serde(default)]
    pub split: Option<String>,
}

/// What `rein serve` was started with.
#[derive(Clone)]
pub struct Config {
    /// The port the server listens on (0: any free one; the real one is filled in by [`bind`]).
    pub port: u16,
    /// The launch token every request must carry (cookie, or `?token=` on the first visit).
    pub token: String,
    /// The only folders a session may work in, as given on the command line (canonical).
    pub workspaces: Vec<PathBuf>,
    pub engine: Arc<dyn Engine>,
}

/// A live chat session: its request channel and its event log.
pub(crate) struct ChatHandle {
    pub requests: Mutex<Sender<ChatRequest>>,
    pub hub: Arc<Hub>,
    pub workspace: PathBuf,
}

/// Shared state of the server.
pub(crate) struct State {
    pub config: Config,
    pub sessions: Mutex<HashMap<u64, Arc<ChatHandle>>>,
    pub runs: Mutex<HashMap<u64, Arc<Hub>>>,
    /// The stop flag of each suite run (an ad-hoc task is one short run and has none).
    pub stops: Mutex<HashMap<u64, Arc<AtomicBool>>>,
    /// Bench runs still working (each holds a model).
    pub running: std::sync::atomic::AtomicUsize,
    pub next_id: AtomicU64,
}

/// Chat sessions kept live at once (each holds an actor model, maybe a worker process):
/// opening one more ends the oldest, whose page is told so.
pub const MAX_LIVE_SESSIONS: usize = 3;
/// Bench runs working at once; one more is refused (429) until one finishes.
pub const MAX_LIVE_RUNS: usize = 4;
/// Run logs kept for the pages (each holds up to [`hub::MAX_EVENTS`] events): starting one more
/// drops the oldest that has ended. The journal keeps every run.
pub const MAX_KEPT_RUNS: usize = 32;

impl State {
    pub fn fresh_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// The whole application: pages, API and the guard in front of them.
pub fn router(config: Config) -> Router {
    let state = Arc::new(State {
        config,
        sessions: Mutex::new(HashMap::new()),
        runs: Mutex::new(HashMap::new()),
        stops: Mutex::new(HashMap::new()),
        running: std::sync::atomic::AtomicUsize::new(0),
        next_id: AtomicU64::new(0),
    });
    let app = Router::new()
        .merge(assets::routes())
        .merge(api::routes())
        .with_state(state.clone());
    guard::wrap(app, state)
}

/// Binds 127.0.0.1:`config.port` (loopback only, never another address) and returns the
/// listener with the real port written back into the config.
pub async fn bind(config: &mut Config) -> Result<tokio::net::TcpListener, WebError> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, config.port));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| WebError::Bind {
            port: config.port,
            source,
        })?;
    config.port = listener.local_addr().map_err(WebError::Serve)?.port();
    Ok(listener)
}

/// The URL to print at start: the first visit sets the cookie and drops the token from the
/// address bar.
pub fn launch_url(config: &Config) -> String {
    format!("http://127.0.0.1:{}/?token={}", config.port, config.token)
}

/// Serves until the process ends.
pub async fn serve(listener: tokio::net::TcpListener, config: Config) -> Result<(), WebError> {
    axum::serve(listener, router(config))
        .await
        .map_err(WebError::Serve)
}

/// Binds, calls `ready` with the real port filled in (to print the URL), and serves until the
/// process ends, on a runtime of its own (the caller needs no async runtime).
pub fn run_blocking(mut config: Config, ready: impl FnOnce(&Config)) -> Result<(), WebError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(WebError::Serve)?;
    runtime.block_on(async move {
        let listener = bind(&mut config).await?;
        ready(&config);
        serve(listener, config).await
    })
}
