//! `rein chat DIR`: talk to a folder. The terminal chat renders the session's events; with
//! `--json` the same events are JSON lines on stdout and requests are JSON lines on stdin
//! (docs/chat-protocol.md). Either way the actor only reads and proposes: a change is written
//! only after the write gate passes it and the person allows it once.

use std::cell::RefCell;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use rein_chat::turn::{Reviewers, Session, SessionOptions, SystemClock};
use rein_chat::wiring::ModelReviewers;
use rein_engine::agent::takes_action_schema;
use rein_journal::ChatStore;
use rein_models::DataDir;
use rein_protocol::chat::{ChatEvent, ChatRequest, Decision, EventKind, TurnEnd};
use rein_protocol::display::{escape_line, escape_text, json_safe, show_diff, Mode, StreamEscaper};

use crate::open::{default_actor, open_model, open_model_with, ModelKnobs};
use crate::tool_cmd::{open_journal, open_workspace, recover_and_report};

#[derive(Debug, clap::Args)]
pub struct ChatArgs {
    /// The folder to talk about; the only one the chat may read or change.
    dir: PathBuf,
    /// The actor: a catalog name, `openai:URL#MODEL` or `scripted:FILE` (default: the catalog's
    /// actor).
    #[arg(long)]
    model: Option<String>,
    /// The decision model that routes requests and reviews proposals and answers.
    #[arg(long)]
    decision_model: Option<String>,
    /// Allow an `openai:` endpoint that is not on this machine.
    #[arg(long)]
    allow_remote: bool,
    #[command(flatten)]
    knobs: ModelKnobs,
}

/// How often expiry is checked while waiting for the person.
const TICK: Duration = Duration::from_secs(1);

pub fn run(args: ChatArgs, json: bool) -> Result<i32> {
    let terminal = is_terminal(0) && is_terminal(1);
    if !json && !terminal {
        bail!(
            "`rein chat` without --json needs a terminal on stdin and stdout; from a script or \
             another program use `rein chat {} --json` (JSON lines on stdin and stdout, see \
             docs/chat-protocol.md)",
            args.dir.display()
        );
    }
    let json_mode = json;
    with_session(
        &args.dir,
        args.model.as_deref(),
        args.decision_model,
        args.allow_remote,
        &args.knobs,
        None,
        |session, decision| {
            if json_mode {
                json_loop(session, decision)
            } else {
                terminal_loop(session, decision)
            }
        },
    )
}

/// Opens everything a chat session on `dir` needs (workspace, journal with recovery, chat.db,
/// actor, router and gates), starts a conversation and hands the session to `drive`. The
/// terminal, `--json` and `rein serve` all go through here. `approval_lifetime_ms` overrides
/// the store's 600 s (tests only; see `rein serve`).
pub(crate) fn with_session(
    dir: &std::path::Path,
    model: Option<&str>,
    decision_model: Option<String>,
    allow_remote: bool,
    knobs: &ModelKnobs,
    approval_lifetime_ms: Option<i64>,
    drive: impl FnOnce(&mut Session<'_>, Option<String>) -> Result<i32>,
) -> Result<i32> {
    let workspace = open_workspace(dir)?;
    let journal = open_journal()?;
    recover_and_report(&journal, &workspace)?;
    let home = DataDir::from_env()?;
    let mut store = ChatStore::open(home.root().join("chat.db"))?;
    if let Some(ms) = approval_lifetime_ms {
        store.set_approval_lifetime_ms(ms);
    }
    let spec = match model {
        Some(m) => m.to_string(),
        None => default_actor()?,
    };
    let mut actor = open_model_with(&spec, allow_remote, knobs)?;
    let mut reviewers = reviewers_for(decision_model.as_deref(), allow_remote);
    let conversation = store
        .create_conversation(
            &workspace.display_root(),
            "chat",
            Some(&spec),
            rein_journal::now_millis(),
        )
        .context("could not start a conversation in chat.db")?;
    let mut options = SessionOptions {
        constrained: takes_action_schema(actor.identity()),
        ..SessionOptions::default()
    };
    if let Some(t) = knobs.temperature {
        options.sampling.temperature = t;
    }
    let clock = SystemClock;
    let mut session = Session::new(
        &store,
        &journal,
        &workspace,
        conversation,
        actor.as_mut(),
        reviewers.as_mut(),
        &clock,
        options,
    );
    drive(&mut session, decision_model)
}

/// The router and gates for a decision model.
///
/// The router and gates over the decision model (`--decision-model`, default: the catalog's
/// decision model). A model that cannot be opened fails closed, and says so: keyword routes,
/// every write held, every answer cautioned.
fn reviewers_for(decision_model: Option<&str>, allow_remote: bool) -> Box<dyn Reviewers> {
    let spec = match decision_model {
        Some(m) => m.to_string(),
        None => match crate::route_cmd::default_decision() {
            Ok(m) => m,
            Err(e) => {
                eprintln!("rein: chat: {e:#}; every write will be held");
                return Box::new(ModelReviewers::new(None));
            }
        },
    };
    match open_model(&spec, allow_remote) {
        Ok(model) => {
            // Only an embedded worker keeps the evaluated prefix in its own KV cache; a
            // scripted decision model would spend a scripted answer on it.
            let embedded = rein_engine::agent::is_embedded(model.identity());
            let reviewers = ModelReviewers::new(Some(model));
            if embedded {
                // The router's prefix is evaluated while the person types the first message.
                drop(reviewers.warm());
            }
            Box::new(reviewers)
        }
        Err(e) => {
            eprintln!(
                "rein: chat: the decision model {spec} could not be opened ({e:#}); every write \
                 will be held and every answer cautioned"
            );
            Box::new(ModelReviewers::new(None))
        }
    }
}

/// What the stdin reader hands over: a request, or why a line was refused.
pub(crate) type Incoming = std::result::Result<ChatRequest, String>;

fn spawn_reader() -> Receiver<Incoming> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            let parsed = serde_json::from_str::<ChatRequest>(&line).map_err(|e| {
                format!(
                    "could not read the request line ({e}); each line must be one JSON object \
                     with a \"type\" of user_message, approve, deny or interrupt and an \"id\""
                )
            });
            if tx.send(parsed).is_err() {
                break;
            }
        }
    });
    rx
}

fn json_loop(session: &mut Session<'_>, decision: Option<String>) -> Result<i32> {
    let stdout = std::io::stdout();
    let mut sink = |event: ChatEvent| {
        if let Ok(text) = serde_json::to_string(&event) {
            let mut out = stdout.lock();
            let _ = writeln!(out, "{}", json_safe(&text));
            let _ = out.flush();
        }
    };
    drive(session, decision, &spawn_reader(), &mut sink);
    Ok(0)
}

/// The loop of `rein chat --json` and `rein serve`: requests from `rx` until it closes, expiry
/// checked every [`TICK`], requests that arrive during a turn handed to it between model calls.
pub(crate) fn drive(
    session: &mut Session<'_>,
    decision: Option<String>,
    rx: &Receiver<Incoming>,
    sink: &mut dyn FnMut(ChatEvent),
) {
    session.start(decision, sink);
    loop {
        match rx.recv_timeout(TICK) {
            Ok(Ok(request)) => {
                let mut refused = Vec::new();
                let mut inbox = || loop {
                    match rx.try_recv() {
                        Ok(Ok(request)) => return Some(request),
                        Ok(Err(message)) => refused.push(message),
                        Err(_) => return None,
                    }
                };
                session.handle(request, &mut inbox, sink);
                for message in refused {
                    session.refuse(None, message, sink);
                }
            }
            Ok(Err(message)) => session.refuse(None, message, sink),
            Err(RecvTimeoutError::Timeout) => session.tick(sink),
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
}

/// Colour only when NO_COLOR is unset or empty (https://no-color.org).
fn colour() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

struct Painter {
    on: bool,
}

impl Painter {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn diff(&self, diff: &str) -> String {
        let shown = show_diff(diff);
        let mut out = String::new();
        for line in shown.text.lines() {
            let code = if line.starts_with("+++") || line.starts_with("---") {
                "1"
            } else if line.starts_with('+') {
                "32"
            } else if line.starts_with('-') {
                "31"
            } else if line.starts_with("@@") {
                "36"
            } else {
                ""
            };
            out.push_str(&if code.is_empty() {
                line.to_string()
            } else {
                self.paint(code, line)
            });
            out.push('\n');
        }
        if let Some(warning) = shown.warning() {
            out.push_str(&self.paint("33", &warning));
            out.push('\n');
        }
        out
    }
}

/// The actor's streamed tokens on the screen: escaped as they come, and whether a line is open.
struct TokenStream {
    escaper: StreamEscaper,
    open: bool,
}

/// Renders one event for a person; returns the approval cards it shows (id, expiry).
fn render(event: &ChatEvent, painter: &Painter, stream: &mut TokenStream) -> Option<(i64, i64)> {
    let mut out = std::io::stdout().lock();
    // Streamed tokens end without a line break; whatever comes next starts on a line of its own.
    let mut end_stream = |out: &mut std::io::StdoutLock<'_>| {
        let rest = stream.escaper.finish();
        if std::mem::take(&mut stream.open) {
            let _ = writeln!(out, "{}", painter.paint("2", &rest));
        }
    };
    match &event.kind {
        EventKind::Token { text } => {
            stream.open = true;
            let _ = write!(out, "{}", painter.paint("2", &stream.escaper.push(text)));
            let _ = out.flush();
            return None;
        }
        _ => end_stream(&mut out),
    }
    let line = match &event.kind {
        EventKind::SessionStarted {
            conversation,
            workspace,
            actor,
            ..
        } => format!(
            "rein chat: {} (conversation {conversation}), actor {}. Type a request; /quit \
             leaves. Changes are only proposed: you allow each once.",
            escape_line(workspace),
            escape_line(actor)
        ),
        EventKind::TurnStarted { .. } | EventKind::Token { .. } => return None,
        EventKind::Route { route } => painter.paint(
            "2",
            &format!(
                "[route: {} from {}, {} bps{}]",
                route.intent,
                route.source.as_str(),
                route.confidence_bps,
                route
                    .note
                    .as_deref()
                    .map(|n| format!("; {}", escape_line(n)))
                    .unwrap_or_default()
            ),
        ),
        EventKind::ToolCall {
            tool,
            arguments,
            outcome,
            summary,
            ..
        } => painter.paint(
            "2",
            &format!(
                "  \u{b7} {tool} {} -> {outcome}: {}",
                escape_line(&arguments.to_string()),
                escape_line(summary)
            ),
        ),
        EventKind::GateOutcome { path, review, .. } => painter.paint(
            "2",
            &format!(
                "  write gate on \"{}\": {} ({} bps, floor {}, {:?})",
                escape_line(path),
                if review.allowed { "passed" } else { "held" },
                review.confidence_bps,
                review.floor_bps,
                review.source
            ),
        ),
        EventKind::Hold {
            path,
            confidence_bps,
            reason,
            ..
        } => painter.paint(
            "33",
            &format!(
                "Held: the change to \"{}\" was not shown for approval and nothing was written: \
                 {} ({confidence_bps} bps)",
                escape_line(path),
                escape_line(reason)
            ),
        ),
        EventKind::ApprovalRequested {
            approval,
            path,
            diff,
            expires_at,
            ..
        } => {
            let _ = writeln!(
                out,
                "{}",
                painter.paint(
                    "1",
                    &format!("Approval {approval}: change to \"{}\"", escape_line(path))
                )
            );
            let _ = write!(out, "{}", painter.diff(diff));
            return Some((*approval, *expires_at));
        }
        EventKind::ApprovalDecided {
            approval, decision, ..
        } => format!(
            "Approval {approval}: {}",
            match decision {
                Decision::AllowOnce => "allowed once",
                Decision::Deny => "denied; nothing was written",
            }
        ),
        EventKind::ApprovalExpired { approvals } => painter.paint(
            "33",
            &format!(
                "Expired without a decision (nothing was written): approval {}",
                approvals
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        EventKind::ApprovalApplied {
            approval,
            change_id,
            path,
            undo,
        } => painter.paint(
            "32",
            &format!(
                "Applied approval {approval} to \"{}\" as change {change_id}; undo with: {}",
                escape_line(path),
                escape_line(undo)
            ),
        ),
        EventKind::ApprovalFailed { approval, reason } => painter.paint(
            "31",
            &format!(
                "Approval {approval} was not applied: {}",
                escape_line(reason)
            ),
        ),
        EventKind::Caution { review } => painter.paint(
            "33",
            &format!(
                "Caution: this answer is not well supported by what was read ({} bps, below \
                 {}): {}",
                review.confidence_bps,
                review.floor_bps,
                escape_line(&review.reason)
            ),
        ),
        EventKind::TurnEnded { status, message } => match status {
            TurnEnd::Answered => escape_text(message),
            other => painter.paint(
                if *other == TurnEnd::Proposed {
                    "1"
                } else {
                    "33"
                },
                &format!("[{}] {}", other.as_str(), escape_text(message)),
            ),
        },
        EventKind::Error { message } => {
            painter.paint("31", &format!("rein: {}", escape_line(message)))
        }
    };
    let _ = writeln!(out, "{line}");
    None
}

fn terminal_loop(session: &mut Session<'_>, decision: Option<String>) -> Result<i32> {
    let painter = Painter { on: colour() };
    let mut stream = TokenStream {
        escaper: StreamEscaper::new(Mode::Text),
        open: false,
    };
    let cards: RefCell<Vec<(i64, i64)>> = RefCell::new(Vec::new());
    let mut sink = |event: ChatEvent| {
        if let Some(card) = render(&event, &painter, &mut stream) {
            cards.borrow_mut().push(card);
        }
    };
    session.start(decision, &mut sink);
    let stdin = std::io::stdin();
    let mut next_id = 0u64;
    let mut fresh = || {
        next_id += 1;
        format!("t{next_id}")
    };
    loop {
        let _ = write!(std::io::stdout(), "\nyou> ");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            break;
        }
        let text = line.trim_end_matches(['\n', '\r']);
        if text.trim() == "/quit" {
            break;
        }
        if text.trim().is_empty() {
            session.tick(&mut sink);
            continue;
        }
        // The terminal reads one line at a time, so nothing can arrive during a turn; Ctrl-C
        // ends the process, and the turn is shown as interrupted on the next start.
        session.handle(
            ChatRequest::UserMessage {
                id: fresh(),
                text: text.to_string(),
            },
            &mut || None,
            &mut sink,
        );
        let shown = cards.take();
        for (approval, expires_at) in shown {
            let left = (expires_at - rein_journal::now_millis()).max(0) / 1000;
            let _ = write!(
                std::io::stdout(),
                "Allow approval {approval} once [a] or deny [d]? ({}:{:02} left) ",
                left / 60,
                left % 60
            );
            let _ = std::io::stdout().flush();
            let mut answer = String::new();
            if stdin.lock().read_line(&mut answer)? == 0 {
                break;
            }
            let request = match answer.trim().to_ascii_lowercase().as_str() {
                "a" | "allow" | "allow once" | "y" | "yes" => ChatRequest::Approve {
                    id: fresh(),
                    approval,
                },
                _ => ChatRequest::Deny {
                    id: fresh(),
                    approval,
                    reason: Some("denied at the terminal".into()),
                },
            };
            session.handle(request, &mut || None, &mut sink);
        }
    }
    Ok(0)
}

fn is_terminal(fd: i32) -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(fd) == 1 }
}
