//! A memory-sandbox run (the bench's `sandbox = "memory"`, HarnessBench's toy world): the same
//! agent loop as a mission run, with the sandbox tools acting on a fresh in-memory [`Sandbox`]
//! through the gate, and the judge reading that sandbox through [`SandboxWorld`].
//!
//! What differs from a desk run, and why:
//! - `final_answer` ends an attempt with no finish rules: the judge alone decides from the
//!   sandbox and the action log, so reaching `final_answer` proves nothing by itself.
//! - An action naming an unregistered tool stops the run at once (bench mode), with a fail
//!   whose reason names the tool; nothing after it executes.
//! - The sandbox starts with the mission's inputs (copied from its fixtures, as text) and any
//!   starting variables the task declares; each run gets its own.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;

use rein_journal::{CallScope, Journal};
use rein_models::Model;
use rein_protocol::{GateReport, ToolCall};
use rein_workspace::{sandbox_registry, Sandbox, ToolRegistry};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::{begin_mission_run, Agent, AgentError, AgentEvent, AgentOptions, RunOutcome};
use crate::checks::{normalize_rel, World, WorldError};
use crate::gate::{Approver, CallExecutor, Gate, GateConfig, GateTarget};
use crate::mission::FrozenContract;
use crate::policy::Policy;

/// The judge's and the loop's view of a sandbox shared with the gate (never borrowed by both at
/// once: the loop reads between calls).
#[derive(Debug)]
pub struct SandboxWorld<'a> {
    cell: &'a RefCell<Sandbox>,
}

impl<'a> SandboxWorld<'a> {
    pub fn new(cell: &'a RefCell<Sandbox>) -> Self {
        Self { cell }
    }
}

impl World for SandboxWorld<'_> {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, WorldError> {
        let key = normalize_rel(path).map_err(|reason| WorldError::InvalidPath {
            path: path.to_string(),
            reason,
        })?;
        Ok(self
            .cell
            .borrow()
            .files
            .get(&key)
            .map(|c| c.as_bytes().to_vec()))
    }

    fn variable(&self, name: &str) -> Option<Value> {
        self.cell.borrow().variables.get(name).cloned()
    }

    fn files(&self) -> Result<Option<Vec<String>>, WorldError> {
        Ok(Some(sandbox_files(&self.cell.borrow())))
    }
}

/// The sandbox's file names in the judge's normal form (a name that does not normalise is
/// listed as it is, so it still counts as a file nobody asked for).
fn sandbox_files(sandbox: &Sandbox) -> Vec<String> {
    sandbox
        .files
        .keys()
        .map(|k| normalize_rel(k).unwrap_or_else(|_| k.clone()))
        .collect()
}

/// A judge world over a sandbox value (for judge cases and tests).
impl World for Sandbox {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, WorldError> {
        let key = normalize_rel(path).map_err(|reason| WorldError::InvalidPath {
            path: path.to_string(),
            reason,
        })?;
        Ok(self.files.get(&key).map(|c| c.as_bytes().to_vec()))
    }

    fn variable(&self, name: &str) -> Option<Value> {
        self.variables.get(name).cloned()
    }

    fn files(&self) -> Result<Option<Vec<String>>, WorldError> {
        Ok(Some(sandbox_files(self)))
    }
}

/// Sends each call through a gate over the shared sandbox. The gate lives for one call, so the
/// sandbox is free for the judge between calls; replay still holds (it is keyed in the journal).
struct SandboxExecutor<'a> {
    registry: &'a ToolRegistry,
    cell: &'a RefCell<Sandbox>,
    journal: &'a Journal,
    scope: CallScope,
}

impl CallExecutor for SandboxExecutor<'_> {
    fn submit(&mut self, call: &ToolCall, approver: &mut dyn Approver) -> GateReport {
        let mut sandbox = self.cell.borrow_mut();
        let mut gate = Gate::new(GateConfig {
            registry: self.registry,
            target: GateTarget::Sandbox(&mut sandbox),
            journal: self.journal,
            scope: self.scope.clone(),
            policy: Policy::safe_default(),
            budget: None,
        });
        gate.submit(call, approver)
    }
}

/// One entry of a memory run's action log: every action the model named, in order, with the
/// gate's outcome (`executed`, `invalid` for an unknown tool, `failed`...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryAction {
    pub step: u32,
    pub action: String,
    pub parameters: Value,
    pub outcome: String,
}

/// A finished memory run: the verdict, the final sandbox and the action log.
#[derive(Debug, Clone)]
pub struct MemoryRun {
    pub outcome: RunOutcome,
    pub sandbox: Sandbox,
    pub actions: Vec<MemoryAction>,
}

/// Why a starting sandbox could not be built.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("cannot read the starting file {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the starting file {path} is not UTF-8 text; sandbox files hold text")]
    NotText { path: String },
}

/// The sandbox a run starts from: the mission's inputs (read from its fixtures) and `variables`.
pub fn start_sandbox(
    contract: &FrozenContract,
    variables: &BTreeMap<String, String>,
) -> Result<Sandbox, MemoryError> {
    let mut sandbox = Sandbox::new();
    for input in &contract.mission.inputs {
        let file = contract.fixtures_dir.join(input);
        let bytes = std::fs::read(&file).map_err(|source| MemoryError::Io {
            path: input.clone(),
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|_| MemoryError::NotText {
            path: input.clone(),
        })?;
        sandbox.files.insert(input.clone(), text);
    }
    for (k, v) in variables {
        sandbox
            .variables
            .insert(k.clone(), Value::String(v.clone()));
    }
    Ok(sandbox)
}

/// What a memory run needs besides the model.
pub struct MemoryRunEnv<'a> {
    pub contract: &'a FrozenContract,
    /// The mission file, re-verified against the frozen contract before every attempt.
    pub mission_file: &'a Path,
    pub journal: &'a Journal,
    /// Journal metadata of the run (command, suite, task, seed...).
    pub meta: Value,
}

/// Runs one memory task against `start` (a fresh sandbox) through the agent loop. `options` is
/// taken as given except that bench mode (an unknown tool stops the run) and memory mode are
/// always on.
pub fn run_memory(
    env: MemoryRunEnv<'_>,
    start: Sandbox,
    model: &mut dyn Model,
    approver: &mut dyn Approver,
    mut options: AgentOptions,
    on_event: &mut dyn FnMut(&AgentEvent),
) -> Result<MemoryRun, AgentError> {
    options.bench = true;
    options.memory = true;
    let registry = sandbox_registry();
    let label = format!("memory:{}", env.contract.id());
    let run = begin_mission_run(
        env.journal,
        env.contract,
        &label,
        model.identity(),
        env.meta,
    )?;
    let cell = RefCell::new(start);
    let world = SandboxWorld::new(&cell);
    let mut executor = SandboxExecutor {
        registry: &registry,
        cell: &cell,
        journal: env.journal,
        scope: CallScope::Run(run),
    };
    let run_env = crate::agent::RunEnv {
        contract: env.contract,
        mission_file: env.mission_file,
        world: &world,
        registry: &registry,
        input_hashes: &env.contract.inputs,
        journal: env.journal,
        run,
        workspace_label: label.clone(),
    };
    let mut actions = Vec::new();
    let outcome = Agent::new(run_env, model, &mut executor, approver)
        .with_options(options)
        .run(&mut |e| {
            if let AgentEvent::Step(s) = e {
                if let Some(action) = &s.action {
                    actions.push(MemoryAction {
                        step: s.step,
                        action: action.clone(),
                        parameters: s.parameters.clone().unwrap_or(Value::Null),
                        outcome: s.outcome.clone(),
                    });
                }
            }
            on_event(e);
        })?;
    let sandbox = cell.into_inner();
    // The journal keeps the final state beside the steps, so a run can be read back whole.
    env.journal.append_event(
        Some(outcome.run),
        "sandbox_final",
        &serde_json::json!({"files": sandbox.files, "variables": sandbox.variables}),
    )?;
    Ok(MemoryRun {
        outcome,
        sandbox,
        actions,
    })
}
