//! `rein run MISSION --workspace DIR`: a verified mission. Prints each step as it happens, then
//! each check with its facts and the verdict; exit 0 pass, 1 fail, 2 refusal or bad input,
//! 3 model failure. `--json` prints the events as JSON lines and the verdict document last.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use rein_engine::agent::{
    begin_mission_run, Agent, AgentEvent, AgentOptions, RunEnv, RunOutcome, WorkspaceWorld,
    MAX_TURNS_PER_JOB,
};
use rein_engine::gate::{
    AllowAll, ApprovalDecision, ApprovalRequest, Approver, Gate, GateConfig, GateTarget,
};
use rein_engine::mission::{materialise_inputs, FrozenContract, Mission, Mode};
use rein_engine::policy::Policy;
use rein_journal::{CallScope, Journal};
use rein_models::{DataDir, Model};
use rein_workspace::{desk_registry, Workspace};
use serde_json::json;

use crate::open::{default_actor, open_model};

/// Environment variable naming the folder that holds missions by name.
pub const MISSIONS_ENV: &str = "REIN_MISSIONS";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Approve {
    /// Approve every change up front (refused unless the workspace was empty at the start).
    All,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// A mission file, a mission folder, or the name of a mission under missions/.
    mission: String,
    /// The folder the run works in (created if missing).
    #[arg(long)]
    workspace: PathBuf,
    /// A catalog name, `openai:URL#MODEL` or `scripted:FILE` (default: the catalog's actor).
    #[arg(long)]
    model: Option<String>,
    /// `--approve=all` approves every change up front; only in a workspace that was empty.
    #[arg(long, value_enum)]
    approve: Option<Approve>,
    /// Fewer turns than the mission's budget (at most 64).
    #[arg(long)]
    max_turns: Option<u32>,
    /// Ask the model for a short plan (at most 8 steps) before acting.
    #[arg(long)]
    plan: bool,
    /// Sampling seed.
    #[arg(long, default_value_t = 0)]
    seed: u32,
    /// Allow an `openai:` endpoint that is not on this machine.
    #[arg(long)]
    allow_remote: bool,
}

pub fn run(args: RunArgs, json: bool) -> anyhow::Result<i32> {
    let mission_file = resolve_mission(&args.mission)?;
    let contract = Mission::load(&mission_file)?;
    if contract.mission.mode == Mode::HumanReviewOnly {
        bail!(
            "{}",
            rein_engine::checks::JudgeError::HumanReviewOnly {
                id: contract.id().to_string()
            }
        );
    }
    let was_empty = prepare_dir(&args.workspace)?;
    if args.approve == Some(Approve::All) && !was_empty {
        bail!(
            "--approve=all is refused: {} was not empty when the run started, and approving up \
             front could change a person's own files; use an empty (or new) folder, or leave out \
             --approve to be asked for each change",
            args.workspace.display()
        );
    }
    let hashes = materialise_inputs(&contract, &args.workspace)?;
    let journal = open_journal()?;
    let spec = match args.model {
        Some(m) => m,
        None => default_actor()?,
    };
    let mut model = open_model(&spec, args.allow_remote)?;
    let mut options = AgentOptions::for_mission(&contract, model.identity());
    if let Some(n) = args.max_turns {
        if n == 0 || n > MAX_TURNS_PER_JOB {
            bail!("--max-turns must be between 1 and {MAX_TURNS_PER_JOB}, not {n}");
        }
        options.limits.max_turns = options.limits.max_turns.min(n);
    }
    options.plan = args.plan;
    options.seed = args.seed;
    let mut approver: Box<dyn Approver> = match args.approve {
        Some(Approve::All) => Box::new(AllowAll),
        None => Box::new(TtyApprover::open()),
    };
    let meta = json!({
        "command": "run",
        "approve": if args.approve.is_some() { "all" } else { "ask" },
        "mission_file": mission_file.display().to_string(),
    });
    let outcome = drive(
        &contract,
        &mission_file,
        &args.workspace,
        &hashes,
        &journal,
        model.as_mut(),
        approver.as_mut(),
        None,
        options,
        meta,
        &mut Printer::new(json),
    )?;
    Ok(outcome.exit_code())
}

/// One run of a mission in a prepared workspace through the real gate. Shared with `qualify`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn drive(
    contract: &FrozenContract,
    mission_file: &Path,
    workspace_dir: &Path,
    hashes: &[rein_engine::mission::InputHash],
    journal: &Journal,
    model: &mut dyn Model,
    approver: &mut dyn Approver,
    decider: Option<&mut dyn rein_engine::checks::Decider>,
    options: AgentOptions,
    meta: serde_json::Value,
    printer: &mut Printer,
) -> anyhow::Result<RunOutcome> {
    let workspace = Workspace::open(workspace_dir)?;
    // Changes left pending by a crash are resolved before any new call is submitted.
    rein_engine::apply::recover(journal, &workspace)?;
    let registry = desk_registry();
    let run = begin_mission_run(
        journal,
        contract,
        &workspace.display_root(),
        model.identity(),
        meta,
    )?;
    let mut gate = Gate::new(GateConfig {
        registry: &registry,
        target: GateTarget::Desk(&workspace),
        journal,
        scope: CallScope::Run(run),
        policy: Policy::safe_default(),
        budget: None,
    });
    let world = WorkspaceWorld::new(&workspace);
    let env = RunEnv {
        contract,
        mission_file,
        world: &world,
        registry: &registry,
        input_hashes: hashes,
        journal,
        run,
        workspace_label: workspace.display_root(),
    };
    let mut agent = Agent::new(env, model, &mut gate, approver).with_options(options);
    if let Some(d) = decider {
        agent = agent.with_decider(d);
    }
    let outcome = agent.run(&mut |e| printer.event(e))?;
    printer.done(&outcome);
    Ok(outcome)
}

/// Where a mission is: a path that exists, else a name under `$REIN_MISSIONS`, `./missions`, or
/// a `missions/` folder beside (or above) the `rein` executable.
pub(crate) fn resolve_mission(arg: &str) -> anyhow::Result<PathBuf> {
    let direct = PathBuf::from(arg);
    if direct.exists() {
        return Ok(direct);
    }
    let mut tried = vec![direct.display().to_string()];
    let is_name = !arg.is_empty() && !arg.contains(['/', '\\']) && !arg.ends_with(".json");
    if is_name {
        let mut roots = Vec::new();
        if let Some(dir) = std::env::var_os(MISSIONS_ENV) {
            roots.push(PathBuf::from(dir));
        }
        roots.push(PathBuf::from("missions"));
        if let Ok(exe) = std::env::current_exe() {
            roots.extend(exe.ancestors().skip(1).map(|a| a.join("missions")));
        }
        for root in roots {
            let candidate = root.join(arg);
            if candidate.join("mission.json").is_file() {
                return Ok(candidate);
            }
            tried.push(candidate.display().to_string());
        }
    }
    bail!(
        "no mission {arg:?}: give a mission.json, a mission folder, or the name of one under \
         missions/ (set {MISSIONS_ENV} to the folder); looked at: {}",
        tried.join(", ")
    )
}

/// Creates the workspace folder if missing; whether it was empty before anything was copied.
fn prepare_dir(dir: &Path) -> anyhow::Result<bool> {
    if !dir.exists() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the workspace {}", dir.display()))?;
        return Ok(true);
    }
    if !dir.is_dir() {
        bail!("the workspace {} is not a folder", dir.display());
    }
    let mut entries = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the workspace {}", dir.display()))?;
    Ok(entries.next().is_none())
}

/// `<REIN_HOME>/journal.db`.
pub(crate) fn open_journal() -> anyhow::Result<Journal> {
    let dir = DataDir::from_env()?;
    let path = dir.root().join("journal.db");
    Journal::open(&path).with_context(|| format!("cannot open the journal {}", path.display()))
}

/// Renders the loop's events: lines for a person, or JSON lines.
pub(crate) struct Printer {
    json: bool,
    quiet: bool,
}

impl Printer {
    pub fn new(json: bool) -> Printer {
        Printer { json, quiet: false }
    }

    /// Prints nothing (qualification prints its own summary).
    pub fn quiet() -> Printer {
        Printer {
            json: false,
            quiet: true,
        }
    }

    pub fn event(&mut self, e: &AgentEvent) {
        if self.quiet {
            return;
        }
        if self.json {
            if let Ok(line) = serde_json::to_string(e) {
                println!("{line}");
            }
            return;
        }
        match e {
            AgentEvent::RunStarted {
                run,
                mission,
                contract_sha256,
                model,
                workspace,
                max_turns,
                timeout_secs,
            } => {
                println!(
                    "run {run}: mission {mission} (contract {}) with {model} in {workspace}",
                    &contract_sha256[..contract_sha256.len().min(12)]
                );
                println!("caps: {max_turns} turns, {timeout_secs} s");
            }
            AgentEvent::AttemptStarted { attempt } if *attempt > 1 => {
                println!("attempt {attempt}:");
            }
            AgentEvent::AttemptStarted { .. } => {}
            AgentEvent::Plan { steps } => {
                println!("plan:");
                for (i, s) in steps.iter().enumerate() {
                    println!("  {}. {s}", i + 1);
                }
            }
            AgentEvent::Step(s) => {
                let action = s.action.as_deref().unwrap_or("(no action)");
                let path = s
                    .parameters
                    .as_ref()
                    .and_then(|p| p.get("path"))
                    .and_then(|p| p.as_str())
                    .map(|p| format!(" {p}"))
                    .unwrap_or_default();
                println!(
                    "{:>3}. {action}{path} -> {}: {}  [{} + {} tokens, {:.1} s]",
                    s.step,
                    s.outcome,
                    s.summary,
                    s.prompt_tokens,
                    s.completion_tokens,
                    s.elapsed_ms as f64 / 1000.0
                );
                if let Some(t) = s.thought.as_deref().filter(|t| !t.trim().is_empty()) {
                    println!("     thought: {}", one_line(t, 160));
                }
            }
            AgentEvent::Cap { message, .. } => println!("cap: {message}"),
            AgentEvent::FinishRefused { .. } | AgentEvent::FinishAccepted { .. } => {}
            AgentEvent::Check(c) => {
                let mark = if c.passed { "pass" } else { "FAIL" };
                println!("[{mark}] {} ({}): {}", c.id, c.kind, c.facts.join("; "));
            }
            AgentEvent::AttemptFinished { attempt, outcome } => {
                println!("attempt {attempt}: {outcome}");
            }
            AgentEvent::RunEnded { .. } => {}
        }
    }

    pub fn done(&mut self, outcome: &RunOutcome) {
        if self.quiet {
            return;
        }
        if self.json {
            println!(
                "{}",
                json!({"event": "verdict", "verdict": outcome.document()})
            );
            return;
        }
        let f = &outcome.figures;
        let word = if outcome.passed() { "PASS" } else { "FAIL" };
        println!("verdict: {word} ({})", outcome.reason());
        println!(
            "{} steps, {} attempt(s), {} format error(s), {} finish refusal(s), {} + {} tokens, {:.1} s",
            f.steps,
            f.attempts,
            f.format_errors,
            f.finish_refusals,
            f.prompt_tokens,
            f.completion_tokens,
            f.elapsed_ms as f64 / 1000.0
        );
        println!("journal: rein journal show {}", outcome.run);
    }
}

fn one_line(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        flat.chars().take(max).collect::<String>() + "..."
    }
}

/// Asks the person at the terminal, showing the exact diff. Without a terminal (stdin is not
/// one, or `/dev/tty` cannot be opened) nobody can be asked and the change ends
/// approval-required.
struct TtyApprover {
    tty: Option<std::fs::File>,
}

impl TtyApprover {
    fn open() -> TtyApprover {
        // SAFETY: isatty only inspects the descriptor.
        let interactive = unsafe { libc::isatty(0) } == 1;
        let tty = interactive
            .then(|| {
                std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open("/dev/tty")
                    .ok()
            })
            .flatten();
        TtyApprover { tty }
    }
}

impl Approver for TtyApprover {
    fn decide(&mut self, request: &ApprovalRequest) -> ApprovalDecision {
        let Some(tty) = self.tty.as_mut() else {
            return ApprovalDecision::Unavailable;
        };
        let shown = format!(
            "\n{} wants to change {} (call {}):\n{}\nAllow once? [y/N] ",
            request.tool, request.path, request.call_id, request.diff
        );
        if tty.write_all(shown.as_bytes()).is_err() {
            return ApprovalDecision::Unavailable;
        }
        let _ = tty.flush();
        let mut answer = String::new();
        let Ok(reader) = tty.try_clone() else {
            return ApprovalDecision::Unavailable;
        };
        if std::io::BufReader::new(reader)
            .read_line(&mut answer)
            .is_err()
        {
            return ApprovalDecision::Unavailable;
        }
        match answer.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => ApprovalDecision::AllowOnce,
            _ => ApprovalDecision::Deny {
                reason: "the person denied this change at the terminal".into(),
            },
        }
    }
}
