//! `rein serve`: the local web UI (crates/rein-web, docs/web-api.md) on 127.0.0.1, guarded by a
//! launch token. The pages drive the same engine as the terminal: chat sessions run the loop of
//! `rein chat --json` (chat_cmd::drive), bench runs are `rein bench --task` runs, and the run
//! viewer reads the journal like `rein journal show`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use rein_journal::{ChangeId, ChatStore, ConversationId, RunId, RunStatus, TurnRole};
use rein_models::{Catalog, DataDir};
use rein_protocol::chat::{ChatEvent, ChatRequest, EventKind};
use rein_web::{ChatSink, Config, Engine, RunSink};
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
    let engine = CliEngine {
        models,
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

/// Pass rates per mission and model over finished runs (a run still running is left out; an
/// aborted one counts as not passed), with the Wilson 95 % interval of `rein bench`'s report.
/// Every ad-hoc task is mission `adhoc`, so that row mixes tasks; the page says so.
fn compare_runs(runs: &[rein_journal::RunSummary]) -> Value {
    let mut by_model: std::collections::BTreeMap<(&str, &str), (u64, u64)> = Default::default();
    for r in runs {
        if r.status == RunStatus::Running {
            continue;
        }
        let key = (
            r.mission_id.as_deref().unwrap_or("-"),
            r.model.as_deref().unwrap_or("-"),
        );
        let entry = by_model.entry(key).or_default();
        entry.0 += 1;
        if r.status == RunStatus::Pass {
            entry.1 += 1;
        }
    }
    Value::Array(
        by_model
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

struct CliEngine {
    models: Vec<String>,
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
}
