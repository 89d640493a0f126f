//! `rein serve`: the local web UI (crates/rein-web, docs/web-api.md) on 127.0.0.1, guarded by a
//! launch token. The pages drive the same engine as the terminal: chat sessions run the loop of
//! `rein chat --json` (chat_cmd::drive), bench runs are `rein bench --task` runs, and the run
//! viewer reads the journal like `rein journal show`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use rein_bench::suite::{Suite, Task};
use rein_journal::{ChangeId, ChatStore, ConversationId, RunId, RunStatus, TurnRole};
use rein_models::Model;
use rein_models::{Catalog, DataDir};
use rein_protocol::chat::{ChatEvent, ChatRequest, EventKind};
use rein_web::{ChatSink, Config, Engine, RunSink, SuiteRequest};
use serde_json::{json, Value};

use crate::chat_cmd::{drive, with_session, Incoming};
use crate::open::ModelKnobs;

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The port on 127.0.0.1 (default 0: any free port; the URL printed at start names it).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// A folder the cowork page may work in (repeatable); the page cannot add others.
    #[arg(long)]
    workspace: Vec<PathBuf>,
    /// A model the bench page offers (repeatable): a catalog name, `openai:URL#MODEL` or
    /// `scripted:FILE` (default: every catalog model that is present).
    #[arg(long)]
    model: Vec<String>,
    /// An agent suite the bench page offers (repeatable; default: suites/toy and suites/desk,
    /// found in the current folder or beside the `rein` executable).
    #[arg(long)]
    suite: Vec<PathBuf>,
    /// The cowork page's actor (default: the catalog's actor).
    #[arg(long)]
    chat_model: Option<String>,
    /// The decision model that routes and reviews in the cowork page.
    #[arg(long)]
    decision_model: Option<String>,
    /// Allow an `openai:` endpoint that is not on this machine.
    #[arg(long)]
    allow_remote: bool,
    /// TESTS ONLY: approval cards live this many milliseconds instead of 600 s (the browser
    /// tests let a card expire with it). Never use it for real work.
    #[arg(long, hide = true)]
    test_approval_lifetime_ms: Option<i64>,
}

/// Example tasks for the bench page's "Try" chips (toy tasks whose checks `infer` reads).
const EXAMPLES: &[&str] = &[
    "Create a file called note.txt with the content 'hello world', then read it back.",
    "Create a file called todo.txt with the content 'buy milk', then list the files.",
    "Set the variable greeting to 'hello'.",
];

pub fn run(args: ServeArgs, json: bool) -> Result<i32> {
    let mut workspaces = Vec::new();
    for dir in &args.workspace {
        let canonical = std::fs::canonicalize(dir)
            .with_context(|| format!("--workspace {}: no such folder", dir.display()))?;
        if !canonical.is_dir() {
            bail!("--workspace {} is not a folder", dir.display());
        }
        crate::open::refuse_data_dir_overlap(&canonical)?;
        workspaces.push(canonical);
    }
    let models = if args.model.is_empty() {
        present_models()?
    } else {
        args.model.clone()
    };
    let suites = load_suites(&args.suite)?;
    let engine = CliEngine {
        models,
        suites,
        chat_model: args.chat_model,
        decision_model: args.decision_model,
        allow_remote: args.allow_remote,
        approval_lifetime_ms: args.test_approval_lifetime_ms,
    };
    let config = Config {
        port: args.port,
        token: rein_web::new_token()?,
        workspaces,
        engine: Arc::new(engine),
    };
    rein_web::run_blocking(config, |config| {
        let url = rein_web::launch_url(config);
        let mut out = std::io::stdout().lock();
        if json {
            let _ = writeln!(out, "{}", json!({"url": url, "port": config.port}));
        } else {
            let _ = writeln!(
                out,
                "rein serve: open {url}\n(listening on 127.0.0.1 only; the link carries this \
                 launch's token; Ctrl-C stops the server)"
            );
        }
        let _ = out.flush();
    })?;
    Ok(0)
}

/// Catalog models whose file is present.
fn present_models() -> Result<Vec<String>> {
    let catalog = Catalog::builtin()?;
    let dir = DataDir::from_env()?;
    Ok(catalog
        .models
        .iter()
        .filter(|m| dir.model_path(m).is_file())
        .map(|m| m.name.clone())
        .collect())
}

/// Pass rates per task and model over finished runs (a run still running is left out, and so
/// is one closed as interrupted because its process ended: a bench redoes it; an aborted one
/// counts as not passed), with the Wilson 95 % interval of `rein bench`'s report.
/// Like is compared with like: a suite run counts for `SUITE/TASK`, an ad-hoc task for
/// `adhoc:` and its contract's SHA-256 (the same words make the same contract), any other run
/// for its mission.
fn compare_runs(runs: &[rein_journal::RunSummary]) -> Value {
    let mut by_task: std::collections::BTreeMap<(String, &str), (u64, u64)> = Default::default();
    for r in runs {
        let interrupted = r
            .verdict
            .as_ref()
            .is_some_and(|v| v.get("interrupted") == Some(&Value::Bool(true)));
        if r.status == RunStatus::Running || interrupted {
            continue;
        }
        let meta = |k: &str| r.meta.get(k).and_then(Value::as_str);
        let what = match (meta("command"), meta("suite"), meta("task")) {
            (Some("bench --task"), _, _) => format!(
                "adhoc:{}",
                r.contract_sha
                    .as_deref()
                    .unwrap_or("-")
                    .get(..12)
                    .unwrap_or("-")
            ),
            (_, Some(suite), Some(task)) => format!("{suite}/{task}"),
            _ => r.mission_id.clone().unwrap_or_else(|| "-".into()),
        };
        let entry = by_task
            .entry((what, r.model.as_deref().unwrap_or("-")))
            .or_default();
        entry.0 += 1;
        if r.status == RunStatus::Pass {
            entry.1 += 1;
        }
    }
    Value::Array(
        by_task
            .into_iter()
            .map(|((mission, model), (n, passes))| {
                let (low, high) = rein_bench::stats::wilson(passes, n);
                json!({
                    "mission": mission,
                    "model": model,
                    "runs": n,
                    "passes": passes,
                    "rate": passes as f64 / n as f64,
                    "low": low,
                    "high": high,
                })
            })
            .collect(),
    )
}

/// `<REIN_HOME>/chat.db`, where `rein chat` and the cowork page keep conversations.
fn open_chat_store() -> Result<ChatStore, String> {
    let home = DataDir::from_env().map_err(|e| format!("{e:#}"))?;
    ChatStore::open(home.root().join("chat.db")).map_err(|e| e.to_string())
}

/// One conversation step by step, for the run viewer: the conversation, its turns (messages),
/// turn runs, approval cards as they stand now (state, decided_at), and one `timeline` in the
/// order things happened: each recorded event (route, tool call, gate outcome, hold, card,
/// decision, caution, turn end, error), with the person's message put just before the start
/// of the turn it opened. A conversation recorded before chat.db kept events has only its
/// messages in the timeline.
fn conversation_view(store: &ChatStore, id: ConversationId) -> Result<Option<Value>, String> {
    let Some(conversation) = store.conversation(id).map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    let turns = store.turns(id).map_err(|e| e.to_string())?;
    let runs = store.turn_runs(id).map_err(|e| e.to_string())?;
    let approvals = store
        .conversation_approvals(id)
        .map_err(|e| e.to_string())?;
    let events = store.events(id).map_err(|e| e.to_string())?;
    let message = |t: &rein_journal::Turn| {
        json!({"kind": "message", "role": t.role, "content": t.content, "at": t.created_at,
               "turn_run": t.meta.get("turn_run")})
    };
    let mut timeline = Vec::new();
    if events.is_empty() {
        timeline.extend(turns.iter().map(message));
    } else {
        let mut asked: std::collections::BTreeMap<i64, Vec<&rein_journal::Turn>> =
            Default::default();
        for t in turns.iter().filter(|t| t.role == TurnRole::User) {
            if let Some(run) = t.meta.get("turn_run").and_then(Value::as_i64) {
                asked.entry(run).or_default().push(t);
            }
        }
        for e in &events {
            if e.kind == "turn_started" {
                if let Some(said) = e.turn_run.and_then(|run| asked.remove(&run)) {
                    timeline.extend(said.into_iter().map(message));
                }
            }
            timeline.push(json!({"kind": "event", "event": e.event, "at": e.at}));
        }
        // A message whose turn start was not kept still shows, at the end.
        timeline.extend(asked.into_values().flatten().map(message));
    }
    Ok(Some(json!({
        "conversation": conversation,
        "turns": turns,
        "turn_runs": runs,
        "approvals": approvals,
        "timeline": timeline,
    })))
}

/// The suites given with `--suite`, or the default agent suites that can be found.
fn load_suites(given: &[PathBuf]) -> Result<Vec<Suite>> {
    if !given.is_empty() {
        return given
            .iter()
            .map(|dir| {
                Suite::load(dir).with_context(|| {
                    format!(
                        "--suite {}: not an agent suite (router and gate suites are not run \
                         from the bench page)",
                        dir.display()
                    )
                })
            })
            .collect();
    }
    let mut roots = vec![PathBuf::from("suites")];
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().skip(1).map(|a| a.join("suites")));
    }
    let mut suites = Vec::new();
    for name in DEFAULT_SUITES {
        if let Some(dir) = roots.iter().map(|r| r.join(name)).find(|d| d.is_dir()) {
            suites.push(Suite::load(&dir)?);
        }
    }
    Ok(suites)
}

/// The agent suites the bench page offers by default (router and gate suites are not agent
/// suites).
const DEFAULT_SUITES: &[&str] = &["toy", "desk"];

/// A model that refuses every call once the person pressed Stop: the run in progress ends at
/// its next model call (journaled as a model failure) instead of running to its caps.
struct Stoppable<'a> {
    inner: &'a mut dyn Model,
    stop: &'a AtomicBool,
}

const STOPPED: &str = "stopped by the person on the bench page";

impl Model for Stoppable<'_> {
    fn identity(&self) -> &rein_models::ModelIdentity {
        self.inner.identity()
    }
    fn complete(
        &mut self,
        request: &rein_models::CompletionRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> rein_models::Result<rein_models::Completion> {
        if self.stop.load(Ordering::SeqCst) {
            return Err(rein_models::ModelError::Refused(STOPPED.into()));
        }
        self.inner.complete(request, on_text)
    }
    fn choose(
        &mut self,
        request: &rein_models::ChooseRequest,
    ) -> rein_models::Result<rein_models::ChooseReply> {
        if self.stop.load(Ordering::SeqCst) {
            return Err(rein_models::ModelError::Refused(STOPPED.into()));
        }
        self.inner.choose(request)
    }
    fn take_notices(&mut self) -> Vec<String> {
        self.inner.take_notices()
    }
}

/// Characters of model output a suite run sends in one `token` event (at least).
const TOKEN_BATCH_CHARS: usize = 48;

/// Sends the pending model output as one `token` event once it holds at least `least`
/// characters (0: whatever there is).
fn flush_pieces(tx: &mpsc::Sender<Value>, pending: &Mutex<String>, least: usize) {
    let Ok(mut p) = pending.lock() else {
        return;
    };
    if !p.is_empty() && p.chars().count() >= least {
        let _ = tx.send(json!({"event": "token", "text": std::mem::take(&mut *p)}));
    }
}

/// The document of one finished suite task, shaped like `rein bench --task --json`'s so the
/// page shows both the same way: verdict and reason, final files, variables, action log.
fn task_document(
    result: &rein_bench::results::RunResult,
    run: Option<RunId>,
    dir_files: std::collections::BTreeMap<String, String>,
) -> Value {
    let (files, variables, actions) = match &result.memory {
        Some(m) => (
            serde_json::to_value(&m.files).unwrap_or_default(),
            serde_json::to_value(&m.variables).unwrap_or_default(),
            serde_json::to_value(&m.actions).unwrap_or_default(),
        ),
        None => (
            serde_json::to_value(dir_files).unwrap_or_default(),
            json!({}),
            Value::Array(
                result
                    .trace
                    .iter()
                    .flat_map(|t| t.steps.iter())
                    .filter(|s| s.action.is_some())
                    .map(|s| {
                        json!({"step": s.seq, "action": s.action, "parameters": s.parameters,
                               "outcome": s.gate})
                    })
                    .collect(),
            ),
        ),
    };
    json!({
        "suite": result.suite,
        "task": result.task,
        "category": result.category,
        "split": result.split,
        "model": result.model,
        "verdict": if result.passed { "pass" } else { "fail" },
        "reason": result.reason,
        "sandbox": {"files": files, "variables": variables},
        "actions": actions,
        "steps": result.steps,
        "cap_hit": result.cap_hit,
        "contract_sha256": result.contract_sha256,
        "run": run,
    })
}

struct CliEngine {
    models: Vec<String>,
    suites: Vec<Suite>,
    chat_model: Option<String>,
    decision_model: Option<String>,
    allow_remote: bool,
    approval_lifetime_ms: Option<i64>,
}

impl Engine for CliEngine {
    fn models(&self) -> Vec<String> {
        self.models.clone()
    }

    fn examples(&self) -> Vec<String> {
        EXAMPLES.iter().map(|s| s.to_string()).collect()
    }

    fn run_chat(&self, workspace: PathBuf, requests: Receiver<ChatRequest>, mut sink: ChatSink) {
        // chat_cmd::drive reads lines already parsed (or refused); the web parses its own.
        let (tx, rx) = mpsc::channel::<Incoming>();
        std::thread::spawn(move || {
            for request in requests {
                if tx.send(Ok(request)).is_err() {
                    break;
                }
            }
        });
        let result = with_session(
            &workspace,
            self.chat_model.as_deref(),
            self.decision_model.clone(),
            self.allow_remote,
            &ModelKnobs::default(),
            self.approval_lifetime_ms,
            |session, decision| {
                drive(session, decision, &rx, &mut *sink);
                Ok(0)
            },
        );
        if let Err(e) = result {
            sink(ChatEvent {
                seq: 0,
                request: None,
                turn: None,
                at: rein_journal::now_millis(),
                kind: EventKind::Error {
                    message: format!("the chat session could not start: {e:#}"),
                },
            });
        }
    }

    fn run_task(&self, task: &str, model: &str, sink: RunSink<'_>) -> Result<Value, String> {
        let sink = std::sync::Mutex::new(sink);
        let mut forward = |event: &rein_engine::agent::AgentEvent| {
            if let Ok(value) = serde_json::to_value(event) {
                if let Ok(mut sink) = sink.lock() {
                    sink(value);
                }
            }
        };
        let mut tokens = |piece: &str| {
            if let Ok(mut sink) = sink.lock() {
                sink(json!({"event": "token", "text": piece}));
            }
        };
        crate::bench_cmd::memory::adhoc(
            task,
            model,
            0,
            self.allow_remote,
            &mut forward,
            &mut tokens,
        )
        .map(|(doc, _, _)| doc)
        .map_err(|e| format!("{e:#}"))
    }

    fn suites(&self) -> Value {
        Value::Array(
            self.suites
                .iter()
                .map(|s| {
                    json!({
                        "name": s.name,
                        "description": s.description,
                        "tasks": s.tasks.iter().map(|t| json!({
                            "id": t.id,
                            "category": t.category,
                            "split": t.split.as_str(),
                            "sandbox": t.sandbox.as_str(),
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect(),
        )
    }

    fn run_suite(
        &self,
        request: &SuiteRequest,
        stop: &AtomicBool,
        sink: RunSink<'_>,
    ) -> Result<Value, String> {
        let suite = self
            .suites
            .iter()
            .find(|s| s.name == request.suite)
            .ok_or_else(|| format!("there is no suite {:?} here", request.suite))?;
        let split = request.split.as_deref().unwrap_or("dev");
        let tasks: Vec<&Task> = suite
            .tasks
            .iter()
            .filter(|t| match &request.task {
                Some(id) => &t.id == id,
                None => split == "all" || t.split.as_str() == split,
            })
            .collect();
        if tasks.is_empty() {
            return Err(format!(
                "suite {} has no task to run for {}",
                suite.name,
                request
                    .task
                    .as_ref()
                    .map_or(format!("split {split}"), |t| format!("task {t:?}"))
            ));
        }
        let total = tasks.len();
        sink(
            json!({"event": "suite_started", "suite": suite.name, "model": request.model,
                    "total": total, "tasks": tasks.iter().map(|t| &t.id).collect::<Vec<_>>()}),
        );
        let (tx, rx) = mpsc::channel::<Value>();
        let model_spec = request.model.clone();
        let allow_remote = self.allow_remote;
        let suite_name = suite.name.clone();
        std::thread::scope(|scope| {
            let worker = scope.spawn(move || -> Result<Value, String> {
                let mut passes = 0usize;
                let mut runs = Vec::new();
                let mut stopped = false;
                let mut open: Option<Box<dyn Model>> = None;
                for (index, task) in tasks.iter().enumerate() {
                    if stop.load(Ordering::SeqCst) {
                        stopped = true;
                        break;
                    }
                    let _ = tx.send(json!({"event": "task_started", "task": task.id,
                                           "index": index + 1, "total": total}));
                    // A scripted model replays from its start for every run, as in `rein bench`.
                    if open.is_none() || model_spec.starts_with("scripted:") {
                        open = Some(
                            crate::open::open_actor(
                                &model_spec,
                                allow_remote,
                                &rein_engine::agent::Levers::DEFAULT,
                            )
                            .map_err(|e| format!("{e:#}"))?,
                        );
                    }
                    let Some(model) = open.as_mut() else {
                        break;
                    };
                    let mut guarded = Stoppable {
                        inner: model.as_mut(),
                        stop,
                    };
                    // The model's pieces go out in batches, so a long suite stays far below
                    // the page log's event cap; an agent event sends what is pending first.
                    let pending = Arc::new(Mutex::new(String::new()));
                    let events = tx.clone();
                    let before = pending.clone();
                    let printer = crate::run_cmd::Printer::tapped(Box::new(move |e| {
                        flush_pieces(&events, &before, 0);
                        if let Ok(v) = serde_json::to_value(e) {
                            let _ = events.send(v);
                        }
                    }));
                    let pieces = tx.clone();
                    let batch = pending.clone();
                    let mut tap = move |piece: &str| {
                        if let Ok(mut p) = batch.lock() {
                            p.push_str(piece);
                        }
                        flush_pieces(&pieces, &batch, TOKEN_BATCH_CHARS);
                    };
                    let watch = crate::bench_cmd::runner::Watch {
                        printer,
                        tap: Some(&mut tap),
                    };
                    let done = crate::bench_cmd::runner::run_single(
                        &suite_name,
                        task,
                        &model_spec,
                        &mut guarded,
                        0,
                        watch,
                    );
                    flush_pieces(&tx, &pending, 0);
                    let (result, run, files) = match done {
                        Ok(done) => done,
                        Err(_) if stop.load(Ordering::SeqCst) => {
                            stopped = true;
                            break;
                        }
                        Err(e) => return Err(format!("task {}: {e:#}", task.id)),
                    };
                    if result.passed {
                        passes += 1;
                    }
                    runs.push(json!({"task": task.id, "passed": result.passed,
                                     "reason": result.reason, "run": run}));
                    let _ = tx.send(json!({"event": "task_result", "task": task.id,
                        "done": index + 1, "total": total, "passes": passes,
                        "result": task_document(&result, run, files)}));
                }
                Ok(
                    json!({"suite": suite_name, "model": model_spec, "total": total,
                          "done": runs.len(), "passes": passes, "stopped": stopped,
                          "runs": runs}),
                )
            });
            for event in rx {
                sink(event);
            }
            worker
                .join()
                .unwrap_or_else(|_| Err("the suite run stopped unexpectedly".into()))
        })
    }

    fn journal_list(&self) -> Result<Value, String> {
        let journal = crate::run_cmd::open_journal().map_err(|e| format!("{e:#}"))?;
        let runs = journal.list_runs().map_err(|e| e.to_string())?;
        serde_json::to_value(runs).map_err(|e| e.to_string())
    }

    fn journal_show(&self, run: i64) -> Result<Option<Value>, String> {
        let journal = crate::run_cmd::open_journal().map_err(|e| format!("{e:#}"))?;
        let id = RunId(run);
        if journal.run(id).map_err(|e| e.to_string())?.is_none() {
            return Ok(None);
        }
        let trace = journal.run_trace(id).map_err(|e| e.to_string())?;
        serde_json::to_value(trace)
            .map(Some)
            .map_err(|e| e.to_string())
    }

    fn conversations(&self) -> Result<Value, String> {
        let store = open_chat_store()?;
        let all = store.all_conversations().map_err(|e| e.to_string())?;
        serde_json::to_value(all).map_err(|e| e.to_string())
    }

    fn conversation(&self, id: i64) -> Result<Option<Value>, String> {
        let store = open_chat_store()?;
        conversation_view(&store, ConversationId(id))
    }

    fn compare(&self) -> Result<Value, String> {
        let journal = crate::run_cmd::open_journal().map_err(|e| format!("{e:#}"))?;
        let runs = journal.list_runs().map_err(|e| e.to_string())?;
        Ok(compare_runs(&runs))
    }

    fn changes(&self, workspace: PathBuf) -> Result<Value, String> {
        let (root, listed) =
            crate::changes_cmd::list_changes(&workspace, false).map_err(|e| format!("{e:#}"))?;
        Ok(crate::changes_cmd::changes_json(&root, &listed))
    }

    fn undo(&self, workspace: PathBuf, change: i64) -> Result<Value, String> {
        crate::changes_cmd::undo_in(&workspace, ChangeId(change)).map_err(|e| format!("{e:#}"))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use rein_journal::ChatEventRecord;

    fn event(seq: i64, turn: Option<i64>, kind: &str) -> ChatEventRecord {
        ChatEventRecord {
            seq,
            turn_run: turn,
            kind: kind.into(),
            event: json!({"type": kind, "seq": seq}),
            at: seq,
        }
    }

    #[test]
    fn a_conversation_reads_in_the_order_it_happened_with_each_message_before_its_turn() {
        let dir = tempfile::tempdir().unwrap();
        let store = ChatStore::open(dir.path().join("chat.db")).unwrap();
        let id = store.create_conversation("/ws", "chat", None, 0).unwrap();
        assert!(conversation_view(&store, ConversationId(id.0 + 1))
            .unwrap()
            .is_none());
        store
            .record_event(id, &event(1, None, "session_started"))
            .unwrap();
        store
            .append_turn(id, TurnRole::User, "first", &json!({"turn_run": 1}), 2)
            .unwrap();
        store
            .record_event(id, &event(2, Some(1), "turn_started"))
            .unwrap();
        store.record_event(id, &event(3, Some(1), "route")).unwrap();
        store
            .record_event(id, &event(4, Some(1), "turn_ended"))
            .unwrap();
        store
            .append_turn(
                id,
                TurnRole::Assistant,
                "answer",
                &json!({"turn_run": 1}),
                5,
            )
            .unwrap();
        store
            .append_turn(id, TurnRole::User, "second", &json!({"turn_run": 2}), 6)
            .unwrap();
        store
            .record_event(id, &event(5, Some(2), "turn_started"))
            .unwrap();
        store.record_event(id, &event(6, Some(2), "hold")).unwrap();
        let view = conversation_view(&store, id).unwrap().unwrap();
        let order: Vec<String> = view["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| match item["kind"].as_str() {
                Some("message") => format!("{}:{}", item["role"], item["content"]),
                _ => item["event"]["type"].as_str().unwrap_or("?").to_string(),
            })
            .collect();
        assert_eq!(
            order,
            [
                "session_started",
                "\"user\":\"first\"",
                "turn_started",
                "route",
                "turn_ended",
                "\"user\":\"second\"",
                "turn_started",
                "hold"
            ]
        );
        assert_eq!(view["turns"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn a_conversation_without_kept_events_shows_its_messages() {
        let dir = tempfile::tempdir().unwrap();
        let store = ChatStore::open(dir.path().join("chat.db")).unwrap();
        let id = store.create_conversation("/ws", "chat", None, 0).unwrap();
        store
            .append_turn(id, TurnRole::User, "hi", &json!({}), 1)
            .unwrap();
        store
            .append_turn(id, TurnRole::Assistant, "hello", &json!({}), 2)
            .unwrap();
        let view = conversation_view(&store, id).unwrap().unwrap();
        assert_eq!(view["timeline"].as_array().unwrap().len(), 2);
        assert_eq!(view["timeline"][1]["content"], "hello");
    }

    fn summary(meta: Value, sha: &str, status: RunStatus) -> rein_journal::RunSummary {
        rein_journal::RunSummary {
            id: RunId(1),
            kind: rein_journal::RunKind::Bench,
            mission_id: Some("adhoc".into()),
            contract_sha: Some(sha.repeat(64)),
            workspace: None,
            model: Some("m".into()),
            meta,
            started_at: 0,
            finished_at: Some(1),
            status,
            verdict: None,
            steps: 1,
            prompt_tokens: 0,
            completion_tokens: 0,
        }
    }

    #[test]
    fn comparison_bars_compare_like_with_like() {
        let adhoc = json!({"command": "bench --task"});
        let toy = json!({"command": "bench", "suite": "toy", "task": "note-hello"});
        let runs = [
            summary(adhoc.clone(), "a", RunStatus::Pass),
            summary(adhoc.clone(), "b", RunStatus::Fail),
            summary(adhoc, "a", RunStatus::Running),
            summary(toy.clone(), "c", RunStatus::Pass),
            summary(toy, "c", RunStatus::Aborted),
        ];
        let rows = compare_runs(&runs);
        let rows: Vec<(String, u64, u64)> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["mission"].as_str().unwrap().to_string(),
                    r["runs"].as_u64().unwrap(),
                    r["passes"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("adhoc:aaaaaaaaaaaa".to_string(), 1, 1),
                ("adhoc:bbbbbbbbbbbb".to_string(), 1, 0),
                ("toy/note-hello".to_string(), 2, 1),
            ]
        );
    }

    #[test]
    fn a_router_suite_is_refused_as_a_bench_page_suite() {
        let suites = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../suites");
        let error = load_suites(&[suites.join("router")]).err().unwrap();
        assert!(
            format!("{error:#}").contains("not an agent suite"),
            "{error:#}"
        );
        let toy = load_suites(&[suites.join("toy")]).unwrap();
        assert_eq!(toy[0].name, "toy");
    }

    #[test]
    fn model_output_of_a_suite_run_goes_out_in_batches_and_nothing_is_lost() {
        let (tx, rx) = mpsc::channel();
        let pending = Mutex::new(String::new());
        let mut all = String::new();
        for piece in [
            "{\"thought\"",
            ": \"a ",
            "long ",
            "thought ",
            "é\u{202e}",
            "x",
        ]
        .repeat(5)
        {
            all.push_str(piece);
            pending.lock().unwrap().push_str(piece);
            flush_pieces(&tx, &pending, TOKEN_BATCH_CHARS);
        }
        flush_pieces(&tx, &pending, 0);
        drop(tx);
        let sent: Vec<Value> = rx.iter().collect();
        assert!(sent.len() < 10, "{} events for 30 pieces", sent.len());
        let joined: String = sent.iter().map(|e| e["text"].as_str().unwrap()).collect();
        assert_eq!(joined, all);
        assert!(sent.iter().all(|e| e["event"] == "token"));
    }
}
