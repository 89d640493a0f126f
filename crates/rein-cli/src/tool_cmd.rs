//! `rein tool --workspace DIR NAME ARGS_JSON`: one call through the execution gate, printed as
//! `{"outcome", "reason", "result"}`. The scripting and debugging entry point: exit 0 when the
//! call was executed or replayed, 2 for every refusal.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use rein_engine::apply::recover;
use rein_engine::gate::{
    ApprovalDecision, ApprovalRequest, Approver, CallExecutor, Gate, GateConfig, NoApprover,
    PreImage, PreImageApprover,
};
use rein_engine::policy::Policy;
use rein_journal::Journal;
use rein_models::DataDir;
use rein_protocol::display::{escape_line, json_safe};
use rein_protocol::{GateOutcome, GateReport, ToolCall};
use rein_workspace::{desk_registry, Workspace};
use serde_json::Value;

use crate::exit::BAD_INPUT;

#[derive(Debug, clap::Args)]
pub struct ToolArgs {
    /// The folder the tool may touch.
    #[arg(long)]
    workspace: PathBuf,
    /// A registered desk tool (list_dir, read_file, edit_file, ...).
    name: String,
    /// The tool's arguments as one JSON object, e.g. '{"path": "notes.txt"}'.
    args_json: String,
    /// The call id; the same id with the same arguments replays instead of acting again.
    /// Default: a fresh id.
    #[arg(long)]
    id: Option<String>,
    /// A policy file (TOML) of allow/ask/deny rules; default: reads allowed, changes ask.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Approve this call's change up front (for scripts); without it a change asks at the
    /// terminal, or ends as approval-required when there is no terminal. A change to an
    /// existing file also needs --expect-before; alone, --approve only creates new files.
    #[arg(long)]
    approve: bool,
    /// With --approve: the pre-image the approved diff was computed from, i.e. the
    /// `before_sha256` printed with it in the approval-required result (or `absent` for a new
    /// file). The change applies only while the file still holds exactly that content;
    /// otherwise it ends approval-required with the new diff and its own before_sha256.
    #[arg(long, value_name = "SHA256|absent", requires = "approve")]
    expect_before: Option<String>,
    /// Most calls to execute (0 refuses every call as budget-exhausted).
    #[arg(long)]
    budget: Option<u32>,
}

/// Runs `rein tool`; prints one JSON document on stdout whatever happens.
pub fn run(args: ToolArgs) -> Result<i32> {
    let report = match gate_call(&args) {
        Ok(report) => report,
        Err(error) => {
            let reason = format!("{error:#}");
            eprintln!("rein: {}", escape_line(&reason));
            GateReport {
                outcome: GateOutcome::Invalid,
                reason,
                result: Value::Null,
            }
        }
    };
    // Exact JSON; hidden characters inside its strings are written as \u escapes.
    println!("{}", json_safe(&serde_json::to_string(&report)?));
    Ok(match report.outcome {
        GateOutcome::Executed | GateOutcome::Replayed => 0,
        _ => BAD_INPUT,
    })
}

fn gate_call(args: &ToolArgs) -> Result<GateReport> {
    let arguments: Value = serde_json::from_str(&args.args_json).with_context(|| {
        format!(
            "ARGS_JSON is not valid JSON; give the arguments of {} as one JSON object, e.g. \
             '{{\"path\": \"notes.txt\"}}'",
            args.name
        )
    })?;
    let workspace = open_workspace(&args.workspace)?;
    let journal = open_journal()?;
    recover_and_report(&journal, &workspace)?;
    let registry = desk_registry();
    let policy = match &args.policy {
        Some(path) => {
            let mut policy = Policy::from_toml_file(path, &registry)?;
            // A policy file in the workspace is out of every tool's reach: a model allowed to
            // edit files could otherwise rewrite its own policy.
            if let Some(rel) = inside(path, &args.workspace) {
                policy.protect(&rel);
            }
            policy
        }
        None => Policy::safe_default(),
    };
    let call = ToolCall {
        id: args.id.clone().unwrap_or_else(fresh_call_id),
        tool: args.name.clone(),
        arguments,
    };
    let mut gate = Gate::new(GateConfig::desk(
        &registry,
        &workspace,
        &journal,
        policy,
        args.budget,
    ));
    let mut approver: Box<dyn Approver> = if args.approve {
        // Bound to the pre-image the person was shown; without one, only new files.
        Box::new(match &args.expect_before {
            Some(text) => PreImageApprover::expecting(
                PreImage::parse(text).map_err(|e| anyhow::anyhow!("--expect-before: {e}"))?,
            ),
            None => PreImageApprover::unstated(),
        })
    } else if stdin_is_terminal() {
        Box::new(TerminalApprover)
    } else {
        Box::new(NoApprover)
    };
    Ok(gate.submit(&call, approver.as_mut()))
}

/// `file` relative to the folder `dir` when it lies inside it (both with links resolved).
fn inside(file: &Path, dir: &Path) -> Option<String> {
    let file = std::fs::canonicalize(file).ok()?;
    let dir = std::fs::canonicalize(dir).ok()?;
    file.strip_prefix(&dir)
        .ok()
        .and_then(|rel| rel.to_str())
        .map(str::to_string)
}

/// Opens the workspace folder, with a next step when it cannot be; refuses one that holds
/// Rein's data folder or lies inside it.
pub fn open_workspace(dir: &Path) -> Result<Workspace> {
    crate::open::open_workspace(dir)
}

/// `<REIN_HOME>/journal.db`, created on first use.
pub fn open_journal() -> Result<Journal> {
    let home = DataDir::from_env()?;
    let path = home.root().join("journal.db");
    Journal::open(&path).map_err(anyhow::Error::from)
}

/// Recovery on start: resolves interrupted changes of this workspace and tells the person
/// about any conflict (a file that holds neither the old nor the new content).
pub fn recover_and_report(journal: &Journal, workspace: &Workspace) -> Result<()> {
    let report = recover(journal, workspace)?;
    for line in report.conflict_lines() {
        eprintln!("rein: warning: {}", escape_line(&line));
    }
    Ok(())
}

/// A call id no earlier call has: time, process and a counter.
fn fresh_call_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("tool-{nanos:x}-{}", std::process::id())
}

fn stdin_is_terminal() -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(0) == 1 }
}

/// Shows the diff on stderr, escaped and flagged (see [`crate::run_cmd::terminal_prompt`]), and
/// reads y/N from the terminal itself (`/dev/tty`), so piped output cannot answer for the person.
struct TerminalApprover;

impl Approver for TerminalApprover {
    fn decide(&mut self, request: &ApprovalRequest) -> ApprovalDecision {
        let Ok(tty) = std::fs::OpenOptions::new().read(true).open("/dev/tty") else {
            return ApprovalDecision::Unavailable;
        };
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(crate::run_cmd::terminal_prompt(request).as_bytes());
        let _ = err.flush();
        let mut answer = String::new();
        if BufReader::new(tty).read_line(&mut answer).is_err() {
            return ApprovalDecision::Unavailable;
        }
        match answer.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => ApprovalDecision::AllowOnce,
            _ => ApprovalDecision::Deny {
                reason: "answered no at the terminal".into(),
            },
        }
    }
}
