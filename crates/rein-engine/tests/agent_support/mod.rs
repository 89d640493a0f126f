//! Shared set-up for the agent loop tests: a desk mission copied to a temp folder (so a test
//! may edit it), a workspace with its inputs, a journal, and a small executor that runs the
//! registry directly, standing in for the execution gate.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use rein_engine::agent::{
    begin_mission_run, Agent, AgentEvent, AgentOptions, Candidate, Clock, RunEnv, RunOutcome,
    WorkspaceWorld,
};
use rein_engine::gate::{AllowAll, ApprovalDecision, ApprovalRequest, Approver, CallExecutor};
use rein_engine::mission::{materialise_inputs, FrozenContract, InputHash, Mission};
use rein_journal::Journal;
use rein_models::{Model, ScriptedModel};
use rein_protocol::{GateOutcome, GateReport, ToolCall};
use rein_workspace::{desk_registry, ToolContext, ToolError, ToolOutput, ToolRegistry, Workspace};
use serde_json::json;

/// Every lever on but `file-notes`, which asks the model about each file a step read: a
/// script written as a list of actions has no replies for those questions (the lever's own
/// tests answer them).
pub const ALL_ON_BUT_NOTES: rein_engine::agent::Levers = rein_engine::agent::Levers {
    file_notes: false,
    ..rein_engine::agent::Levers::ALL_ON
};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agent")
        .join(name)
}

pub fn missions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../missions")
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

/// Runs the registry on the workspace directly: reads execute, proposals are shown to the
/// approver and written on AllowOnce. Enough to drive the loop; the real gate adds the
/// journal's exactly-once protocol.
pub struct DirectExecutor {
    pub registry: ToolRegistry,
    pub workspace: Workspace,
    pub root: PathBuf,
    pub changes: u32,
}

impl CallExecutor for DirectExecutor {
    /// No policy here: every file may be read.
    fn reads_freely(&self, _path: &str) -> bool {
        true
    }

    fn submit(&mut self, call: &ToolCall, approver: &mut dyn Approver) -> GateReport {
        let report = |outcome, reason: String, result| GateReport {
            outcome,
            reason,
            result,
        };
        let mut ctx = ToolContext::Desk(&self.workspace);
        match self.registry.call(&mut ctx, &call.tool, &call.arguments) {
            Err(e @ (ToolError::UnknownTool { .. } | ToolError::InvalidArguments { .. })) => {
                report(GateOutcome::Invalid, e.to_string(), json!(null))
            }
            Err(e) => report(GateOutcome::Invalid, e.to_string(), json!(null)),
            Ok(ToolOutput::Data(v)) => report(GateOutcome::Executed, String::new(), v),
            Ok(ToolOutput::Proposal(p)) => {
                let request = ApprovalRequest {
                    call_id: call.id.clone(),
                    tool: call.tool.clone(),
                    path: p.path.to_string(),
                    diff: p.diff.clone(),
                    before_sha256: p.before_sha256(),
                    after_sha256: p.after_sha256(),
                    reads_protected_content: false,
                };
                match approver.decide(&request) {
                    ApprovalDecision::AllowOnce => {
                        let target = self.root.join(p.path.to_string());
                        match &p.after {
                            Some(bytes) => {
                                std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                                std::fs::write(&target, bytes).unwrap();
                            }
                            None => std::fs::remove_file(&target).unwrap(),
                        }
                        self.changes += 1;
                        report(
                            GateOutcome::Executed,
                            String::new(),
                            json!({"applied": true, "change_id": self.changes, "path": p.path.to_string(), "diff": p.diff}),
                        )
                    }
                    ApprovalDecision::Deny { reason } => {
                        report(GateOutcome::Denied, reason, json!(null))
                    }
                    ApprovalDecision::Unavailable => report(
                        GateOutcome::ApprovalRequired,
                        "nobody to ask".into(),
                        json!(null),
                    ),
                }
            }
        }
    }
}

/// A clock stuck at a chosen elapsed time, or advancing one second per reading.
pub struct FakeClock {
    pub start: Duration,
    pub step: Duration,
    pub reads: std::cell::Cell<u32>,
}

impl FakeClock {
    pub fn fixed(secs: u64) -> FakeClock {
        FakeClock {
            start: Duration::from_secs(secs),
            step: Duration::ZERO,
            reads: std::cell::Cell::new(0),
        }
    }
    pub fn ticking() -> FakeClock {
        FakeClock {
            start: Duration::ZERO,
            step: Duration::from_secs(1),
            reads: std::cell::Cell::new(0),
        }
    }
}

impl Clock for FakeClock {
    fn elapsed(&self) -> Duration {
        let n = self.reads.get();
        self.reads.set(n + 1);
        self.start + self.step * n
    }
}

/// A mission copied to a temp folder, its workspace and a journal.
pub struct Harness {
    pub dir: tempfile::TempDir,
    pub mission_file: PathBuf,
    pub workspace: PathBuf,
    pub contract: FrozenContract,
    pub hashes: Vec<InputHash>,
    pub journal: Journal,
}

impl Harness {
    pub fn new(mission: &str) -> Harness {
        Harness::with_edit(mission, |_| {})
    }

    /// Copies the mission, lets the test edit its JSON first, then loads it.
    pub fn with_edit(mission: &str, edit: impl FnOnce(&mut serde_json::Value)) -> Harness {
        Harness::with_fixtures(mission, |_, v| edit(v))
    }

    /// Copies the mission, lets the test change its fixtures folder and its JSON first, then
    /// loads it.
    pub fn with_fixtures(
        mission: &str,
        edit: impl FnOnce(&Path, &mut serde_json::Value),
    ) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let mdir = dir.path().join("mission");
        copy_dir(&missions_dir().join(mission), &mdir);
        let mission_file = mdir.join("mission.json");
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&mission_file).unwrap()).unwrap();
        edit(&mdir.join("fixtures"), &mut v);
        std::fs::write(&mission_file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        Harness::load(dir, mission_file)
    }

    /// A task of the desk suite (`suites/desk/<task>`), copied with its fixtures.
    pub fn desk_suite(task: &str) -> Harness {
        Harness::desk_suite_with(task, |_| {})
    }

    /// [`Harness::desk_suite`] with its fixtures folder changed by `edit` before it is loaded.
    pub fn desk_suite_with(task: &str, edit: impl FnOnce(&Path)) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let mdir = dir.path().join("mission");
        copy_dir(&missions_dir().join("../suites/desk").join(task), &mdir);
        edit(&mdir.join("fixtures"));
        Harness::load(dir, mdir.join("mission.json"))
    }

    /// [`Harness::desk_suite`] with its `mission.json` changed by `edit` before it is loaded.
    pub fn desk_suite_mission(task: &str, edit: impl FnOnce(&mut serde_json::Value)) -> Harness {
        Harness::desk_suite_edited(task, |_| {}, edit)
    }

    /// explore-csv-rows with a row of empty cells added to data/customers.csv: the judge counts
    /// it, `folder_stats` and `table_stats` do not, so the file's row count is disputed.
    pub fn csv_rows_disputed() -> Harness {
        Harness::desk_suite_with("explore-csv-rows", |dir| {
            let p = dir.join("data/customers.csv");
            let mut text = std::fs::read_to_string(&p).unwrap();
            text.push_str(",,\n");
            std::fs::write(p, text).unwrap();
        })
    }

    /// [`Harness::desk_suite`] with its fixtures folder changed by `fixtures`, then its
    /// `mission.json` by `mission`, before it is loaded.
    pub fn desk_suite_edited(
        task: &str,
        fixtures: impl FnOnce(&Path),
        mission: impl FnOnce(&mut serde_json::Value),
    ) -> Harness {
        Harness::desk_suite_with(task, |dir| {
            fixtures(dir);
            let file = dir.parent().unwrap().join("mission.json");
            let mut m: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            mission(&mut m);
            std::fs::write(&file, m.to_string()).unwrap();
        })
    }

    /// Loads the mission at `mission_file` and sets up a workspace and a journal in `dir`.
    pub fn load(dir: tempfile::TempDir, mission_file: PathBuf) -> Harness {
        let contract = Mission::load(&mission_file).unwrap();
        let workspace = dir.path().join("ws");
        std::fs::create_dir_all(&workspace).unwrap();
        let hashes = materialise_inputs(&contract, &workspace).unwrap();
        let journal = Journal::open(dir.path().join("journal.db")).unwrap();
        Harness {
            dir,
            mission_file,
            workspace,
            contract,
            hashes,
            journal,
        }
    }

    pub fn executor(&self) -> DirectExecutor {
        DirectExecutor {
            registry: desk_registry(),
            workspace: Workspace::open(&self.workspace).unwrap(),
            root: self.workspace.clone(),
            changes: 0,
        }
    }

    /// Runs with a scripted model from a fixture file.
    pub fn run_fixture(
        &self,
        fixture_name: &str,
        tweak: impl FnOnce(&mut AgentOptions),
    ) -> (RunOutcome, Vec<AgentEvent>) {
        let mut model = ScriptedModel::load(fixture(fixture_name)).unwrap();
        self.run_model(&mut model, &mut AllowAll, tweak, None, &mut |_| {})
    }

    /// Runs with any model, approver, option tweak, clock and extra event hook.
    pub fn run_model(
        &self,
        model: &mut dyn Model,
        approver: &mut dyn Approver,
        tweak: impl FnOnce(&mut AgentOptions),
        clock: Option<FakeClock>,
        hook: &mut dyn FnMut(&AgentEvent),
    ) -> (RunOutcome, Vec<AgentEvent>) {
        let registry = desk_registry();
        let mut exec = self.executor();
        let ws = Workspace::open(&self.workspace).unwrap();
        let world = WorkspaceWorld::new(&ws);
        let run = begin_mission_run(
            &self.journal,
            &self.contract,
            &self.workspace.display().to_string(),
            model.identity(),
            json!({}),
        )
        .unwrap();
        let env = RunEnv {
            contract: &self.contract,
            mission_file: &self.mission_file,
            world: &world,
            registry: &registry,
            input_hashes: &self.hashes,
            journal: &self.journal,
            run,
            workspace_label: self.workspace.display().to_string(),
        };
        let mut options = AgentOptions::for_mission(&self.contract, model.identity());
        tweak(&mut options);
        let mut agent = Agent::new(env, model, &mut exec, approver).with_options(options);
        if let Some(c) = clock {
            agent = agent.with_clock(c);
        }
        let mut events = Vec::new();
        let outcome = agent
            .run(&mut |e| {
                hook(e);
                events.push(e.clone());
            })
            .unwrap();
        (outcome, events)
    }
}

impl Harness {
    /// Runs through the real execution gate (journal, exactly-once apply, undo) under
    /// `Policy::safe_default()`, with any model, approver and option tweak.
    pub fn run_gated(
        &self,
        model: &mut dyn Model,
        approver: &mut dyn Approver,
        tweak: impl FnOnce(&mut AgentOptions),
    ) -> (RunOutcome, Vec<AgentEvent>) {
        self.run_gated_with_policy(
            model,
            approver,
            rein_engine::policy::Policy::safe_default(),
            tweak,
        )
    }

    /// [`Harness::run_gated`] under another policy.
    pub fn run_gated_with_policy(
        &self,
        model: &mut dyn Model,
        approver: &mut dyn Approver,
        policy: rein_engine::policy::Policy,
        tweak: impl FnOnce(&mut AgentOptions),
    ) -> (RunOutcome, Vec<AgentEvent>) {
        self.run_gated_with_decider(model, approver, policy, None, tweak)
    }

    /// [`Harness::run_gated_with_policy`] with a decider for the contract's decision checks.
    pub fn run_gated_with_decider(
        &self,
        model: &mut dyn Model,
        approver: &mut dyn Approver,
        policy: rein_engine::policy::Policy,
        decider: Option<&mut dyn rein_engine::checks::Decider>,
        tweak: impl FnOnce(&mut AgentOptions),
    ) -> (RunOutcome, Vec<AgentEvent>) {
        self.run_gated_inner(model, approver, policy, decider, None, tweak)
    }

    /// [`Harness::run_gated_with_policy`] with `meddle` called before each call reaches the
    /// gate: a stand-in for a world that changes while the run goes on (another process
    /// writing the workspace).
    pub fn run_gated_meddled(
        &self,
        model: &mut dyn Model,
        approver: &mut dyn Approver,
        policy: rein_engine::policy::Policy,
        meddle: &mut dyn FnMut(&ToolCall),
        tweak: impl FnOnce(&mut AgentOptions),
    ) -> (RunOutcome, Vec<AgentEvent>) {
        self.run_gated_inner(model, approver, policy, None, Some(meddle), tweak)
    }

    fn run_gated_inner(
        &self,
        model: &mut dyn Model,
        approver: &mut dyn Approver,
        policy: rein_engine::policy::Policy,
        decider: Option<&mut dyn rein_engine::checks::Decider>,
        meddle: Option<&mut dyn FnMut(&ToolCall)>,
        tweak: impl FnOnce(&mut AgentOptions),
    ) -> (RunOutcome, Vec<AgentEvent>) {
        let registry = desk_registry();
        let ws = Workspace::open(&self.workspace).unwrap();
        let run = begin_mission_run(
            &self.journal,
            &self.contract,
            &ws.display_root(),
            model.identity(),
            json!({}),
        )
        .unwrap();
        let mut gate = rein_engine::gate::Gate::new(rein_engine::gate::GateConfig {
            registry: &registry,
            target: rein_engine::gate::GateTarget::Desk(&ws),
            journal: &self.journal,
            scope: rein_journal::CallScope::Run(run),
            policy,
            budget: None,
        });
        let world = WorkspaceWorld::new(&ws);
        let env = RunEnv {
            contract: &self.contract,
            mission_file: &self.mission_file,
            world: &world,
            registry: &registry,
            input_hashes: &self.hashes,
            journal: &self.journal,
            run,
            workspace_label: ws.display_root(),
        };
        let mut options = AgentOptions::for_mission(&self.contract, model.identity());
        tweak(&mut options);
        let mut events = Vec::new();
        let mut meddled;
        let exec: &mut dyn CallExecutor = match meddle {
            Some(meddle) => {
                meddled = Meddling { gate, meddle };
                &mut meddled
            }
            None => &mut gate,
        };
        let mut agent = Agent::new(env, model, exec, approver).with_options(options);
        if let Some(d) = decider {
            agent = agent.with_decider(d);
        }
        let outcome = agent.run(&mut |e| events.push(e.clone())).unwrap();
        (outcome, events)
    }
}

/// Each sampled write's candidates and the index of the one proposed, in order.
pub fn sampled(events: &[AgentEvent]) -> Vec<(Vec<Candidate>, usize)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Sampled {
                candidates, chosen, ..
            } => Some((candidates.clone(), *chosen)),
            _ => None,
        })
        .collect()
}

/// The payloads of a run's `verified_sampling` journal events, in order.
pub fn sampling_events(journal: &Journal, run: rein_journal::RunId) -> Vec<serde_json::Value> {
    journal_events(journal, run, "verified_sampling")
}

/// The payloads of a run's journal events of `kind`, in order.
/// The ids of the checks the last verdict failed (none without a verdict).
pub fn failed(out: &RunOutcome) -> Vec<String> {
    out.verdict
        .as_ref()
        .map(|v| {
            v.checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| c.id.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// Each step of `action` in the run's journal: its gate outcome and reason, in order.
pub fn step_outcomes(h: &Harness, out: &RunOutcome, action: &str) -> Vec<(String, String)> {
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    h.journal
        .run_trace(out.run)
        .unwrap()
        .steps
        .iter()
        .filter(|s| s.step.action.as_deref() == Some(action))
        .map(|s| {
            (
                text(&s.step.detail["outcome"]),
                text(&s.step.detail["reason"]),
            )
        })
        .collect()
}

/// Every prompt of a run of `h` with `stats-first` (and `facts-tools`), `named-rows` on or off,
/// replaying `script`, one attempt; and the `stats_first` journal event (null without one).
pub fn stats_first_prompts(
    h: &Harness,
    named_rows: bool,
    script: &str,
) -> (Vec<String>, serde_json::Value) {
    let mut model = PromptRecorder::new(script, "stats_first_prompts.jsonl");
    let (outcome, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = rein_engine::agent::Levers {
            facts_tools: true,
            stats_first: true,
            named_rows,
            ..rein_engine::agent::Levers::DEFAULT
        };
        o.limits.attempts = 1;
    });
    let event = journal_events(&h.journal, outcome.run, "stats_first")
        .into_iter()
        .next()
        .unwrap_or(serde_json::Value::Null);
    (model.prompts(), event)
}

/// The text of Rein's table_stats results in a recorded first prompt (what the model is told of
/// them), joined with `|`.
pub fn stats_results(first: &str) -> String {
    first
        .split("Result of Rein's table_stats call")
        .skip(1)
        .map(|r| r.split("content:").next().unwrap_or(r))
        .collect::<Vec<_>>()
        .join("|")
}

pub fn journal_events(
    journal: &Journal,
    run: rein_journal::RunId,
    kind: &str,
) -> Vec<serde_json::Value> {
    journal
        .run_trace(run)
        .unwrap()
        .events
        .into_iter()
        .filter(|e| e.kind == kind)
        .map(|e| e.payload)
        .collect()
}

/// The tools a constrained request lets the model name.
pub fn allowed_tools(request: &rein_protocol::CompletionRequest) -> Vec<String> {
    request.json_schema.as_ref().map_or_else(Vec::new, |s| {
        s["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                b["properties"]["action"]["const"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    })
}

/// The refusal reasons of `finish`, in order.
pub fn finish_refusals(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::FinishRefused { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

/// The messages of caps that fired, in order.
pub fn caps(events: &[AgentEvent]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Cap { cap, message } => Some((cap.clone(), message.clone())),
            _ => None,
        })
        .collect()
}

/// What a [`PromptRecorder`] may change in a reply before the run sees it: called with the
/// call's index (from 0), the request and the completion.
pub type Tap =
    Box<dyn FnMut(usize, &rein_protocol::CompletionRequest, &mut rein_protocol::Completion) + Send>;

/// A scripted model that keeps every request it was sent (prompt, seed, schema, sampling).
pub struct PromptRecorder {
    pub inner: ScriptedModel,
    pub requests: Vec<rein_protocol::CompletionRequest>,
    tap: Option<Tap>,
}

impl PromptRecorder {
    /// Replays `script` (JSON lines), named `name` in its errors.
    pub fn new(script: &str, name: &str) -> PromptRecorder {
        PromptRecorder {
            inner: ScriptedModel::from_str_named(script, Path::new(name)).unwrap(),
            requests: Vec::new(),
            tap: None,
        }
    }

    /// Replays the fixture file `name`.
    pub fn fixture(name: &str) -> PromptRecorder {
        PromptRecorder::new(&std::fs::read_to_string(fixture(name)).unwrap(), name)
    }

    /// The same, with each reply passed through `tap` (a model cut by its cap, say).
    pub fn tapped(script: &str, name: &str, tap: Tap) -> PromptRecorder {
        PromptRecorder {
            tap: Some(tap),
            ..PromptRecorder::new(script, name)
        }
    }

    /// The prompt of call `i` (from 0), as text.
    pub fn prompt(&self, i: usize) -> String {
        format!("{:?}", self.requests[i].prompt)
    }

    /// Every prompt sent, as text.
    pub fn prompts(&self) -> Vec<String> {
        (0..self.requests.len()).map(|i| self.prompt(i)).collect()
    }
}

impl Model for PromptRecorder {
    fn identity(&self) -> &rein_protocol::ModelIdentity {
        self.inner.identity()
    }
    fn complete(
        &mut self,
        request: &rein_protocol::CompletionRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> rein_models::Result<rein_protocol::Completion> {
        let call = self.requests.len();
        self.requests.push(request.clone());
        let mut completion = self.inner.complete(request, on_text)?;
        if let Some(tap) = self.tap.as_mut() {
            tap(call, request, &mut completion);
        }
        Ok(completion)
    }
    fn choose(
        &mut self,
        request: &rein_protocol::ChooseRequest,
    ) -> rein_models::Result<rein_protocol::ChooseReply> {
        self.inner.choose(request)
    }
}

/// One scripted reply: `action` with `parameters` (JSON line).
pub fn line(action: &str, parameters: serde_json::Value) -> String {
    json!({"thought": "Next.", "action": action, "parameters": parameters}).to_string() + "\n"
}

/// desk_task's gold report.
pub fn gold_text() -> String {
    std::fs::read_to_string(missions_dir().join("desk_task/judge/gold/files/out/summary.md"))
        .unwrap()
}

/// The gold report cut into its sections' bodies, as the tool's fields.
pub fn gold_fields() -> serde_json::Value {
    let text = gold_text();
    let mut fields = serde_json::Map::new();
    fields.insert("path".into(), json!("out/summary.md"));
    let mut current: Option<(String, Vec<&str>)> = None;
    for l in text.lines() {
        if let Some(h) = l.strip_prefix("## ").or_else(|| l.strip_prefix("# ")) {
            if let Some((name, body)) = current.take() {
                fields.insert(name, json!(body.join("\n").trim()));
            }
            current = Some((h.to_string(), Vec::new()));
        } else if let Some((_, body)) = current.as_mut() {
            body.push(l);
        }
    }
    let (name, body) = current.unwrap();
    fields.insert(name, json!(body.join("\n").trim()));
    serde_json::Value::Object(fields)
}

/// Replies that read desk_task's three inputs in full.
pub fn reads() -> String {
    [
        "notes/overview.md",
        "notes/meeting-notes.md",
        "data/tasks.csv",
    ]
    .iter()
    .map(|p| line("read_file", json!({ "path": p })))
    .collect()
}

/// doc_extract's deliverable as the 1.5B wrote it (invoice 1's first line amount as its total,
/// a full stop after the second vendor) or the right document.
pub fn doc_extract_fields(right: bool) -> serde_json::Value {
    let (total, vendor, grand) = if right {
        (300.50, "Bayside Cleaning Ltd", 1054.80)
    } else {
        (120.00, "Bayside Cleaning Ltd.", 874.30)
    };
    json!({
        "invoices": [
            {"invoice_number": "INV-2024-001", "date": "2024-03-04", "vendor": "Northwind Paper Co.", "total": total},
            {"invoice_number": "INV-2024-002", "date": "2024-03-11", "vendor": vendor, "total": 450.00},
            {"invoice_number": "INV-2024-003", "date": "2024-03-20", "vendor": "Quayside Books", "total": 304.30}
        ],
        "grand_total": grand
    })
}

/// One doc_extract attempt: read the three invoices in full, write `doc_extract_fields(right)`
/// (created when wrong, replaced when right, as a second attempt would), read it back, finish.
pub fn doc_extract_attempt(right: bool) -> String {
    let reads: String = ["invoice_001.txt", "invoice_002.txt", "invoice_003.txt"]
        .iter()
        .map(|f| line("read_file", json!({ "path": format!("invoices/{f}") })))
        .collect();
    let path = "out/fields.json";
    let content = doc_extract_fields(right).to_string();
    reads
        + &line(
            if right { "replace_file" } else { "create_file" },
            json!({ "path": path, "content": content }),
        )
        + &line("read_file", json!({ "path": path }))
        + &line(
            "finish",
            json!({"summary": "Extracted the three invoices."}),
        )
}

/// desk_task's deliverable.
pub const SUMMARY: &str = "out/summary.md";

/// A reply that creates desk_task's report with `text`.
pub fn write_summary(text: &str) -> String {
    line("create_file", json!({ "path": SUMMARY, "content": text }))
}

/// A reply that replaces desk_task's report with `text`.
pub fn rewrite_summary(text: &str) -> String {
    line("replace_file", json!({ "path": SUMMARY, "content": text }))
}

/// A reply that reads desk_task's report back.
pub fn read_summary() -> String {
    line("read_file", json!({ "path": SUMMARY }))
}

/// A reply that calls finish.
pub fn finish_line() -> String {
    line("finish", json!({"summary": "Wrote the summary."}))
}

/// desk_task's gold report with the total stated as 72 where the column sums to 64.
pub fn wrong_total_text() -> String {
    let gold = gold_text();
    assert!(gold.contains("Total hours: 64"), "{gold}");
    gold.replace("Total hours: 64", "Total hours: 72")
}

/// The gold fields with a wrong total, which the judge fails on `total-hours` (an answer
/// check: the checklist never shows it).
pub fn wrong_total_fields() -> serde_json::Value {
    let mut wrong = gold_fields();
    let tasks = wrong["Tasks"].as_str().unwrap().to_string();
    assert!(tasks.contains("Total hours: 64"), "{tasks}");
    wrong["Tasks"] = json!(tasks.replace("Total hours: 64", "Total hours: 72"));
    wrong
}

/// A scripted desk_task run through the real gate, kept whole for the test to read.
pub struct Ran {
    pub out: RunOutcome,
    pub events: Vec<AgentEvent>,
    pub model: PromptRecorder,
    pub h: Harness,
}

impl Ran {
    /// desk_task replaying `script` under `policy` and `approver`, its options set by `tweak`.
    pub fn desk_task(
        script: &str,
        approver: &mut dyn Approver,
        policy: rein_engine::policy::Policy,
        tweak: impl FnOnce(&mut AgentOptions),
    ) -> Ran {
        Ran::of(Harness::new("desk_task"), script, approver, policy, tweak)
    }

    /// `h`'s mission replaying `script`, as [`Ran::desk_task`] does desk_task's.
    pub fn of(
        h: Harness,
        script: &str,
        approver: &mut dyn Approver,
        policy: rein_engine::policy::Policy,
        tweak: impl FnOnce(&mut AgentOptions),
    ) -> Ran {
        let mut model = PromptRecorder::new(script, "script.jsonl");
        let (out, events) = h.run_gated_with_policy(&mut model, approver, policy, tweak);
        Ran {
            out,
            events,
            model,
            h,
        }
    }

    /// The result of step `n` (a call of `tool`) as request `request` shows it, up to the
    /// progress note.
    pub fn shown_result(&self, request: usize, n: usize, tool: &str) -> String {
        let label = format!("Result of step {n} ({tool})");
        let m = user_messages(&self.model.requests[request])
            .into_iter()
            .find(|m| m.contains(&label))
            .unwrap_or_else(|| panic!("no {label} in {}", self.model.prompt(request)));
        m.split("Progress:").next().unwrap().to_string()
    }

    /// The first message of a `monotone-attempts` retry (the failed checks and what they
    /// found); panics when the run had no retry.
    pub fn retry_message(&self) -> String {
        self.model
            .requests
            .iter()
            .flat_map(user_messages)
            .find(|m| m.contains("These checks fail"))
            .expect("a retry")
    }

    /// The first prompt's user message that holds `label` (the result of a call Rein made
    /// before the first step).
    pub fn first_message_with(&self, label: &str) -> String {
        user_messages(&self.model.requests[0])
            .into_iter()
            .find(|m| m.contains(label))
            .unwrap_or_else(|| panic!("no `{label}` in {}", self.model.prompt(0)))
    }

    /// The `read_file` calls Rein made for the model under `lever` (`glob-reads`,
    /// `cited-reads`), from the journal: (path, outcome), in order.
    pub fn rein_reads(&self, lever: &str) -> Vec<(String, String)> {
        self.rein_steps()
            .filter(|d| d["lever"] == lever)
            .map(|d| {
                assert_eq!(d["action"], "read_file", "{d}");
                (
                    d["parameters"]["path"].as_str().unwrap().to_string(),
                    d["outcome"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    /// [`Ran::of`] under `policy` with `meddle` called before each call reaches the gate (see
    /// [`Harness::run_gated_meddled`]), approving everything.
    pub fn meddled(
        h: Harness,
        script: &str,
        policy: rein_engine::policy::Policy,
        mut meddle: impl FnMut(&ToolCall),
        tweak: impl FnOnce(&mut AgentOptions),
    ) -> Ran {
        let mut model = PromptRecorder::new(script, "meddled.jsonl");
        let (out, events) =
            h.run_gated_meddled(&mut model, &mut AllowAll, policy, &mut meddle, tweak);
        Ran {
            out,
            events,
            model,
            h,
        }
    }

    /// [`Ran::of`] with `levers` and one attempt.
    pub fn one_attempt(
        h: Harness,
        script: &str,
        approver: &mut dyn Approver,
        policy: rein_engine::policy::Policy,
        levers: rein_engine::agent::Levers,
    ) -> Ran {
        Ran::of(h, script, approver, policy, |o| {
            o.levers = levers;
            o.limits.attempts = 1;
        })
    }

    /// Rein's `search_text` calls for `lever` of the run, from the journal: (parameters,
    /// detail); every call of Rein's must be one.
    pub fn rein_searches(&self, lever: &str) -> Vec<(serde_json::Value, serde_json::Value)> {
        self.rein_calls(lever, "search_text")
    }

    /// Rein's calls of the run, each of `tool` for `lever`: (parameters, detail).
    pub fn rein_calls(
        &self,
        lever: &str,
        tool: &str,
    ) -> Vec<(serde_json::Value, serde_json::Value)> {
        self.rein_steps()
            .map(|d| {
                assert_eq!(d["action"], tool, "{d}");
                assert_eq!(d["lever"], lever);
                (d["parameters"].clone(), d)
            })
            .collect()
    }

    /// The details of the steps Rein took itself in the run (`by: rein`), from the journal,
    /// each with its `action`.
    fn rein_steps(&self) -> impl Iterator<Item = serde_json::Value> {
        self.h
            .journal
            .run_trace(self.out.run)
            .unwrap()
            .steps
            .into_iter()
            .filter(|t| t.step.detail["by"] == "rein")
            .map(|t| {
                let mut d = t.step.detail;
                d["action"] = serde_json::json!(t.step.action);
                d
            })
    }
}

/// The user messages of one request's chat prompt, in order.
pub fn user_messages(request: &rein_protocol::CompletionRequest) -> Vec<String> {
    let rein_protocol::Prompt::Chat { messages } = &request.prompt else {
        panic!("a chat prompt");
    };
    messages
        .iter()
        .filter(|m| m.role == rein_protocol::Role::User)
        .map(|m| m.content.clone())
        .collect()
}

/// The lines of `task` that state `said` as a whole requirement: a numbered one (`N. said`),
/// or one under a heading (``- `H`: said``, a hint after it).
pub fn times_said(task: &str, said: &str) -> usize {
    task.lines()
        .filter(|line| {
            let numbered = line
                .split_once(". ")
                .filter(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
                .is_some_and(|(_, rest)| rest == said);
            let under = line
                .strip_prefix("- `")
                .and_then(|rest| rest.split_once("`: "))
                .is_some_and(|(_, rest)| {
                    rest == said
                        || rest
                            .strip_prefix(said)
                            .is_some_and(|r| r.starts_with(" To get"))
                });
            numbered || under
        })
        .count()
}

/// The outcome of each attempt that finished, in order.
pub fn attempts_finished(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::AttemptFinished { outcome, .. } => Some(outcome.clone()),
            _ => None,
        })
        .collect()
}

/// Whether request `call` (from 0) let the model name `finish`.
pub fn offers_finish(model: &PromptRecorder, call: usize) -> bool {
    allowed_tools(&model.requests[call])
        .iter()
        .any(|t| t == "finish")
}

/// Runs `h`'s mission once, constrained, with `levers` on `script`: the requests and the
/// payloads of the run's `copied_strings` journal events.
pub fn constrained_run(
    h: &Harness,
    script: &str,
    levers: rein_engine::agent::Levers,
) -> (
    Vec<rein_protocol::CompletionRequest>,
    Vec<serde_json::Value>,
) {
    let mut model = PromptRecorder::new(script, "constrained.jsonl");
    let (out, _) = h.run_gated(&mut model, &mut rein_engine::gate::AllowAll, |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = 1;
    });
    let events = journal_events(&h.journal, out.run, "copied_strings");
    (model.requests, events)
}

/// The `document` schema `write_json` offered in request `i`.
pub fn write_json_document(
    requests: &[rein_protocol::CompletionRequest],
    i: usize,
) -> serde_json::Value {
    let schema = requests[i]
        .json_schema
        .as_ref()
        .expect("a constrained request");
    schema["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["properties"]["action"]["const"] == "write_json")
        .map(|b| b["properties"]["parameters"]["properties"]["document"].clone())
        .expect("write_json is offered")
}

/// Whether check `id` of a run's verdict passed, and its facts joined.
pub fn check_facts(outcome: &RunOutcome, id: &str) -> (bool, String) {
    let c = outcome
        .verdict
        .as_ref()
        .unwrap()
        .checks
        .iter()
        .find(|c| c.id == id)
        .unwrap();
    (c.passed, c.facts.join("; "))
}

/// Characters of the files at `paths` in `h`'s workspace, together.
pub fn workspace_chars(h: &Harness, paths: &[&str]) -> usize {
    paths
        .iter()
        .map(|p| {
            std::fs::read_to_string(h.workspace.join(p))
                .unwrap()
                .chars()
                .count()
        })
        .sum()
}

/// The check `id` of a mission's JSON, to edit before it is loaded.
pub fn check_mut<'a>(m: &'a mut serde_json::Value, id: &str) -> &'a mut serde_json::Value {
    m["checks"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["id"] == id)
        .unwrap()
}

/// Changes a mission JSON's prompt with `f`, which must change it.
pub fn set_prompt(m: &mut serde_json::Value, f: impl FnOnce(&str) -> String) {
    let p = m["prompt"].as_str().unwrap().to_string();
    let changed = f(&p);
    assert_ne!(changed, p, "the edit changed the prompt");
    m["prompt"] = json!(changed);
}

/// The lines stats-first showed as "The task's line with it: ...", in order, in a prompt as
/// [`PromptRecorder::prompt`] gives it.
pub fn task_lines(first: &str) -> Vec<String> {
    const MARK: &str = "The task's line with it: ";
    first
        .match_indices(MARK)
        .map(|(i, _)| {
            let rest = &first[i + MARK.len()..];
            // The prompt is Debug-formatted: a line ends at an escaped newline or a quote.
            let end = [rest.find("\\n"), rest.find('"')]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(rest.len());
            rest[..end].to_string()
        })
        .collect()
}

/// desk_task's reads, a report with the total wrong, read back, then the gold report, read
/// back: a first attempt that the judge fails and a second that passes.
pub fn wrong_then_right() -> String {
    reads()
        + &line("write_sections", wrong_total_fields())
        + &read_summary()
        + &line("write_sections", gold_fields())
        + &read_summary()
}

/// The progress note in the prompt of request `i` of `r`: the last one in it.
pub fn last_progress_note(r: &Ran, i: usize) -> String {
    let prompt = r.model.prompt(i);
    let at = prompt.rfind("Progress: ").expect("a progress note");
    let note = &prompt[at..];
    // The prompt is Debug text: the note ends at an escaped line break or the message's end.
    let end = [".\\n", ".\""]
        .iter()
        .filter_map(|e| note.find(e))
        .min()
        .map_or(note.len(), |e| e + 1);
    note[..end].to_string()
}

/// Each check of the run's verdict, as (id, passed).
pub fn verdict_ids(r: &Ran) -> Vec<(String, bool)> {
    r.out
        .verdict
        .as_ref()
        .unwrap()
        .checks
        .iter()
        .map(|c| (c.id.clone(), c.passed))
        .collect()
}

/// (action, outcome) of each step the events report, Rein's calls included.
pub fn outcomes(events: &[AgentEvent]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Step(s) => Some((s.action.clone().unwrap_or_default(), s.outcome.clone())),
            _ => None,
        })
        .collect()
}

/// (action, outcome) of the model's own steps only: Rein's calls are step 0.
pub fn model_outcomes(events: &[AgentEvent]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Step(s) if s.step > 0 => {
                Some((s.action.clone().unwrap_or_default(), s.outcome.clone()))
            }
            _ => None,
        })
        .collect()
}

/// The tool branches of the first request of a constrained run of `h`'s mission with `levers`
/// (one `list_dir` step); every schema the run sent must be one llguidance builds.
pub fn first_offered_branches(
    h: &Harness,
    levers: rein_engine::agent::Levers,
) -> Vec<serde_json::Value> {
    let script = line("list_dir", json!({"path": "."}));
    let mut model = PromptRecorder::new(&script, "first_offered.jsonl");
    let _ = h.run_gated(&mut model, &mut rein_engine::gate::AllowAll, |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = 1;
    });
    for (i, r) in model.requests.iter().enumerate() {
        if let Some(schema) = &r.json_schema {
            if let Err(e) = rein_llama::check_schema_grammar(schema) {
                panic!("request {i}: llguidance cannot build its schema: {e}");
            }
        }
    }
    model.requests[0].json_schema.as_ref().unwrap()["anyOf"]
        .as_array()
        .unwrap()
        .clone()
}

/// A policy for the desk tools from its TOML `text`.
pub fn desk_policy(text: &str) -> rein_engine::policy::Policy {
    rein_engine::policy::Policy::from_toml_str(
        text,
        "test policy",
        &rein_workspace::desk_registry(),
    )
    .unwrap()
}

/// A mission JSON's `tools` without `dropped`.
pub fn drop_tools(mission: &mut serde_json::Value, dropped: &[&str]) {
    let tools: Vec<serde_json::Value> = mission["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| !t.as_str().is_some_and(|t| dropped.contains(&t)))
        .cloned()
        .collect();
    mission["tools"] = serde_json::json!(tools);
}

/// How the first prompt labels the result of Rein's `folder_stats` call (lever `folder-stats`).
pub const FOLDER_STATS_LABEL: &str = "Result of Rein's folder_stats call";

/// The first JSON object of `message`, parsed.
pub fn first_json(message: &str) -> serde_json::Value {
    let start = message
        .find('{')
        .unwrap_or_else(|| panic!("no result in {message}"));
    let mut de =
        serde_json::Deserializer::from_str(&message[start..]).into_iter::<serde_json::Value>();
    de.next()
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}: {message}"))
}

/// report-deploys' June file, whose `failed` rows a check counts.
pub const DEPLOYS_JUNE: &str = "data/deploys-2024-06.csv";

/// Adds a June deploy of status `FAILED` to report-deploys' fixtures in `dir`: the judge's
/// filter (`failed`, case counting) leaves it out, a case-blind tool counts it.
pub fn add_failed_deploy(dir: &Path) {
    let p = dir.join(DEPLOYS_JUNE);
    let mut text = std::fs::read_to_string(&p).unwrap();
    text.push_str("2024-06-28,orders,FAILED,12\n");
    std::fs::write(p, text).unwrap();
}

impl Harness {
    /// report-deploys with [`add_failed_deploy`]: the judge counts 3 rows of status `failed`,
    /// `status = failed` read ignoring case matches 4.
    pub fn deploys_disputed() -> Harness {
        Harness::desk_suite_with("report-deploys", add_failed_deploy)
    }
}

/// The figures a shown `table_rows` answer gives the count of its rows by: `rows`, the number
/// of rows listed (when all are listed), and the sum of each `counts` column.
pub fn row_figures(result: &serde_json::Value) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    if let Some(n) = result.get("rows").and_then(serde_json::Value::as_u64) {
        out.push(("rows".to_string(), n));
    }
    if let Some(listed) = result
        .get("matching_rows")
        .and_then(serde_json::Value::as_array)
    {
        if result.get("matching_rows_note").is_none() {
            out.push(("matching_rows listed".to_string(), listed.len() as u64));
        }
    }
    if let Some(counts) = result.get("counts").and_then(serde_json::Value::as_object) {
        for (column, values) in counts {
            let sum: u64 = values
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v["rows"].as_u64().unwrap())
                .sum();
            out.push((format!("counts.{column} summed"), sum));
        }
    }
    out
}

/// The real gate with `meddle` called before each call reaches it (see
/// [`Harness::run_gated_meddled`]); every other duty is the gate's.
pub struct Meddling<'g, 'm> {
    pub gate: rein_engine::gate::Gate<'g>,
    pub meddle: &'m mut dyn FnMut(&ToolCall),
}

impl CallExecutor for Meddling<'_, '_> {
    fn submit(&mut self, call: &ToolCall, approver: &mut dyn Approver) -> GateReport {
        (self.meddle)(call);
        self.gate.submit(call, approver)
    }
    fn undo_change(
        &mut self,
        change: rein_journal::ChangeId,
    ) -> Result<rein_engine::undo::UndoReport, String> {
        self.gate.undo_change(change)
    }
    fn preview(&self, call: &ToolCall) -> Result<rein_workspace::Proposal, String> {
        self.gate.preview(call)
    }
    fn reads_freely(&self, path: &str) -> bool {
        self.gate.reads_freely(path)
    }
}

/// An approver that allows everything and keeps every request's tool and path.
#[derive(Default)]
pub struct RecordingApprover {
    pub asked: Vec<(String, String)>,
}

impl Approver for RecordingApprover {
    fn decide(&mut self, request: &ApprovalRequest) -> ApprovalDecision {
        self.asked
            .push((request.tool.clone(), request.path.clone()));
        ApprovalDecision::AllowOnce
    }
}
