//! The execution gate: the one way a tool call reaches the world (DESIGN principles 3 and 5).
//!
//! Every call gets exactly one [`GateOutcome`], decided in this order:
//!
//! 1. **invalid**: malformed id, unknown tool, arguments failing the schema or the input cap;
//! 2. **denied**: policy says deny (before replay: a result recorded under another policy is
//!    never handed out under one that denies the call; nor is the recorded result of a tool
//!    that walks folders replayed under a policy with path rules for it);
//! 3. **replayed** / **id-conflict**: the id is looked up in the journal, in its gate records
//!    and in its changes (a change records the fingerprint of the call that made it); the same
//!    fingerprint returns the recorded result without acting again, another fingerprint (or a
//!    change no call made, such as an undo) is refused;
//! 4. **budget-exhausted**: checked before anything runs; only executed calls consume budget;
//! 5. **approval-required**: policy says ask and the person did not allow this one call (a
//!    change is computed first, without writing, so the person sees the exact diff; the
//!    approval is bound to the pre-image that diff was computed from, see [`PreImageApprover`]);
//! 6. **executed**: the call ran; a desk change was applied exactly once by [`crate::apply`].
//!
//! Every decision, all seven kinds, is recorded in the journal.
//!
//! Three mappings onto the seven outcomes are choices, made so that nothing happens twice and
//! nothing happens unasked: a tool that refuses its arguments (a missing file, a path outside
//! the workspace, a failed write) is **invalid** and costs no budget; a change whose file moved
//! away from the approved pre-image is **approval-required** (the approval no longer applies);
//! a call id whose change is still an unresolved intent or a conflict is
//! **approval-required** until recovery or the person resolves it, and is never re-applied.

mod approve;
mod fingerprint;
mod preview;

use rein_journal::{CallOutcome, CallRecord, CallScope, Journal, Replay};
use rein_protocol::{GateOutcome, GateReport, ToolCall};
use rein_workspace::desk::PathFilter;
use rein_workspace::{
    Proposal, Sandbox, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, Workspace,
};
use serde_json::{json, Value};

pub use approve::{
    AllowAll, ApprovalDecision, ApprovalRequest, Approver, DenyAll, NoApprover, OwnWorkApprover,
    PreImage, PreImageApprover, ScriptedApprover,
};
pub use fingerprint::{fingerprint, invalid_id_key, valid_call_id, MAX_CALL_ID_CHARS};

use crate::apply::{apply, ApplyError, ApplyRequest, ChangeKind};
use crate::policy::{Policy, PolicyAction};

/// Anything that takes a tool call and answers with one gate outcome. The agent loop is
/// written against this, so tests can drive it with a stand-in.
pub trait CallExecutor {
    fn submit(&mut self, call: &ToolCall, approver: &mut dyn Approver) -> GateReport;

    /// Reverts an applied change through the journal's undo ([`crate::undo::undo`]), so the
    /// undo is itself a journaled change a person can see and undo. An executor that keeps no
    /// journal of changes refuses, and nothing is changed.
    fn undo_change(
        &mut self,
        change: rein_journal::ChangeId,
    ) -> Result<crate::undo::UndoReport, String> {
        Err(format!(
            "change {change} cannot be undone here: this executor keeps no journal of changes"
        ))
    }

    /// What a change would do, computed as the gate computes it before asking (validated,
    /// under policy, nothing written, asked, journaled or counted against a budget): verified
    /// sampling judges candidate writes on it. Refused for a read, a call policy denies, a file
    /// whose content policy protects (its post-image shows that content), and any executor
    /// that cannot compute one.
    fn preview(&self, call: &ToolCall) -> Result<Proposal, String> {
        Err(format!(
            "{} cannot be previewed here: this executor computes no changes ahead",
            call.tool
        ))
    }

    /// Whether policy lets `read_file` show the file at `path` without asking a person
    /// (nothing run, asked, journaled or counted): a lever that looks at a file before its
    /// read goes through the gate (its size, whether it is text) looks only where this holds,
    /// so it never reads what policy keeps or asks about. An executor that cannot say answers
    /// no, and such a lever leaves the call as the model made it.
    fn reads_freely(&self, _path: &str) -> bool {
        false
    }
}

/// What the tools act on.
#[derive(Debug)]
pub enum GateTarget<'a> {
    /// A real folder: changes are proposals applied through the journal.
    Desk(&'a Workspace),
    /// The bench's in-memory sandbox: changes apply in memory (replay still holds).
    Sandbox(&'a mut Sandbox),
}

/// Everything a gate needs. For a desk session outside a run, the scope must be
/// `CallScope::Workspace(workspace.display_root())` ([`GateConfig::desk`] does that).
#[derive(Debug)]
pub struct GateConfig<'a> {
    pub registry: &'a ToolRegistry,
    pub target: GateTarget<'a>,
    pub journal: &'a Journal,
    pub scope: CallScope,
    pub policy: Policy,
    /// Most calls this gate executes (`None`: no limit). Replays and refusals cost nothing.
    pub budget: Option<u32>,
}

impl<'a> GateConfig<'a> {
    /// A desk gate scoped to the workspace itself (as `rein tool` uses it).
    pub fn desk(
        registry: &'a ToolRegistry,
        workspace: &'a Workspace,
        journal: &'a Journal,
        policy: Policy,
        budget: Option<u32>,
    ) -> GateConfig<'a> {
        GateConfig {
            registry,
            target: GateTarget::Desk(workspace),
            journal,
            scope: CallScope::Workspace(workspace.display_root()),
            policy,
            budget,
        }
    }
}

/// The execution gate. See the module docs.
#[derive(Debug)]
pub struct Gate<'a> {
    registry: &'a ToolRegistry,
    target: GateTarget<'a>,
    journal: &'a Journal,
    scope: CallScope,
    policy: Policy,
    budget: Option<u32>,
    used: u32,
}

/// One decision before it is recorded.
struct Decision {
    outcome: GateOutcome,
    reason: String,
    result: Value,
}

impl Decision {
    fn new(outcome: GateOutcome, reason: impl Into<String>, result: Value) -> Decision {
        Decision {
            outcome,
            reason: reason.into(),
            result,
        }
    }

    fn invalid(reason: impl Into<String>) -> Decision {
        Decision::new(GateOutcome::Invalid, reason, Value::Null)
    }
}

/// Tools whose result covers files beyond the one path they name (see [`PathFilter`]).
const WALKING_TOOLS: [&str; 6] = [
    "search_text",
    "find_files",
    "folder_stats",
    "find_related",
    "list_dir",
    "file_info",
];

/// Recorded arguments and results larger than this are replaced by a summary (an invalid call
/// may carry anything).
const MAX_RECORDED_INVALID_BYTES: usize = 64 * 1024;

impl<'a> Gate<'a> {
    pub fn new(config: GateConfig<'a>) -> Gate<'a> {
        Gate {
            registry: config.registry,
            target: config.target,
            journal: config.journal,
            scope: config.scope,
            policy: config.policy,
            budget: config.budget,
            used: 0,
        }
    }

    /// Calls executed so far against the budget; keep it in a checkpoint.
    pub fn budget_used(&self) -> u32 {
        self.used
    }

    /// Restores the budget already used, when resuming from a checkpoint.
    pub fn resume_budget(&mut self, used: u32) {
        self.used = used;
    }

    pub fn registry(&self) -> &ToolRegistry {
        self.registry
    }

    pub fn scope(&self) -> &CallScope {
        &self.scope
    }

    /// The sandbox, for a sandbox gate (the judge reads it).
    pub fn sandbox(&self) -> Option<&Sandbox> {
        match &self.target {
            GateTarget::Sandbox(sandbox) => Some(sandbox),
            GateTarget::Desk(_) => None,
        }
    }

    /// Whether the content of the file a call names may reach the caller without a person's
    /// approval (policy allows reading it); a call that names no file is open.
    fn content_access(&self, path: Option<&str>) -> ContentAccess {
        match path {
            Some(path)
                if self.policy.decide("read_file", false, Some(path)).action
                    != PolicyAction::Allow =>
            {
                ContentAccess::Protected
            }
            _ => ContentAccess::Open,
        }
    }

    fn decide(&mut self, call: &ToolCall, fp: &str, approver: &mut dyn Approver) -> Decision {
        if !valid_call_id(&call.id) {
            let shown: String = call.id.chars().take(64).collect();
            return Decision::invalid(format!(
                "the call id {shown:?} is not usable: give 1 to {MAX_CALL_ID_CHARS} characters of \
                 letters, digits, '.', '_', ':' or '-'"
            ));
        }
        if let Err(message) = self.registry.validate(&call.tool, &call.arguments) {
            return Decision::invalid(message);
        }
        let Some(tool) = self.registry.get(&call.tool) else {
            return Decision::invalid(format!("unknown tool \"{}\"", call.tool));
        };
        // Policy before replay: a recorded result is the answer to a call that was allowed
        // when it ran, perhaps under another policy (each `rein tool` gives its own), and
        // replaying it under one that denies the call would hand out what that policy keeps.
        let path = call.arguments.get("path").and_then(Value::as_str);
        let policy = self.policy.decide(&call.tool, tool.mutates(), path);
        if policy.action == PolicyAction::Deny {
            return Decision::new(
                GateOutcome::Denied,
                format!(
                    "policy denies {} ({}); nothing was done{}",
                    call.tool,
                    policy.source,
                    if self.replay(call, fp).is_some() {
                        " and the result recorded for this call id is not shown"
                    } else {
                        ""
                    }
                ),
                Value::Null,
            );
        }
        // Whether the content of the named file may reach the caller without a person's
        // approval: otherwise a change's diff (which shows it) is withheld from the result,
        // and a change that asks is asked about before its tool reads the file.
        let content = self.content_access(path);
        if let Some(mut decision) = self.replay(call, fp) {
            if decision.outcome != GateOutcome::Replayed {
                return decision;
            }
            // A read this policy asks about is asked about before its recorded result is
            // shown again, as it would be before running.
            if policy.action == PolicyAction::Ask && !tool.mutates() {
                if let Err(refused) = ask(
                    approver,
                    &request(call, String::new(), None, None),
                    Value::Null,
                ) {
                    return refused;
                }
            }
            if let Some(path) = path.and_then(|p| rein_workspace::RelPath::parse(p).ok()) {
                withhold_diff(&mut decision.result, &path, content);
            }
            // A walk's recorded result may name or quote files this policy hides.
            if decision.outcome == GateOutcome::Replayed
                && WALKING_TOOLS.contains(&call.tool.as_str())
                && self.policy.narrows(&call.tool)
            {
                return Decision::new(
                    GateOutcome::Denied,
                    format!(
                        "call {} was already executed, but its recorded result is not replayed \
                         under a policy with path rules for {}: it may show files this policy \
                         keeps from it; call again with a new id",
                        call.id, call.tool
                    ),
                    Value::Null,
                );
            }
            return decision;
        }
        if let Some(limit) = self.budget {
            if self.used >= limit {
                return Decision::new(
                    GateOutcome::BudgetExhausted,
                    format!(
                        "the budget of {limit} executed call(s) is used up; {} was not run",
                        call.tool
                    ),
                    Value::Null,
                );
            }
        }
        let approved = policy.action == PolicyAction::Allow;
        let decision = match &mut self.target {
            GateTarget::Desk(workspace) => desk(
                DeskCall {
                    registry: self.registry,
                    journal: self.journal,
                    scope: &self.scope,
                    workspace,
                    call,
                    fp,
                    tool,
                    content,
                    name_hidden: path.is_some_and(|p| self.policy.hides_name(p)),
                    // Every file the tool reads or lists beyond `path` is checked too.
                    filter: &self.policy.path_filter(&call.tool, path),
                },
                approved,
                approver,
            ),
            GateTarget::Sandbox(sandbox) => {
                sandbox_call(self.registry, sandbox, call, tool, approved, approver)
            }
        };
        if decision.outcome == GateOutcome::Executed {
            self.used = self.used.saturating_add(1);
        }
        decision
    }

    /// Step 2: `Some` when the journal already knows this id.
    fn replay(&self, call: &ToolCall, fp: &str) -> Option<Decision> {
        let replay = match self.journal.check_replay(&self.scope, &call.id, fp) {
            Ok(replay) => replay,
            Err(e) => {
                return Some(Decision::invalid(format!(
                    "the journal could not be read to check call id {} for replay ({e}); \
                     nothing was done",
                    call.id
                )))
            }
        };
        match replay {
            Replay::New => None,
            Replay::Executed { call: recorded } => Some(Decision::new(
                GateOutcome::Replayed,
                format!(
                    "call {} was already executed; this is its recorded result and nothing \
                     was done again",
                    call.id
                ),
                recorded.result,
            )),
            Replay::Applied { change } => Some(Decision::new(
                GateOutcome::Replayed,
                format!(
                    "call {} was already applied as change {} (its result was not recorded, \
                     as after a crash); nothing was done again",
                    call.id, change.id
                ),
                json!({
                    "applied": true,
                    "change_id": change.id,
                    "path": change.path,
                    "kind": ChangeKind::of_change(&change),
                    "state": change.state.as_str(),
                    "before_sha256": change.before_sha,
                    "after_sha256": change.after_sha,
                }),
            )),
            Replay::Unresolved { change } => Some(Decision::new(
                GateOutcome::ApprovalRequired,
                format!(
                    "call {} has change {} to \"{}\" that is {} (interrupted, or in conflict); \
                     nothing was done: let recovery run (start rein again) or resolve the file \
                     by hand",
                    call.id,
                    change.id,
                    change.path,
                    change.state.as_str()
                ),
                json!({ "change_id": change.id, "state": change.state.as_str() }),
            )),
            Replay::Conflict { bound } => Some(Decision::new(
                GateOutcome::IdConflict,
                format!(
                    "call id {} was already used for {} with other arguments; nothing was done: \
                     give a new call a new id",
                    call.id, bound.tool
                ),
                json!({ "bound_tool": bound.tool, "bound_fingerprint": bound.fingerprint }),
            )),
            Replay::ChangeConflict { change } => {
                let made_by = match change.undo_of {
                    Some(target) => format!("by the undo of change {target}"),
                    None if change.fingerprint.is_some() => "by a call with other arguments".into(),
                    None => "by a call whose arguments were not recorded".into(),
                };
                Some(Decision::new(
                    GateOutcome::IdConflict,
                    format!(
                        "call id {} already made change {} to \"{}\" ({}), {made_by}; nothing \
                         was done and nothing was replayed: give a new call a new id",
                        call.id,
                        change.id,
                        change.path,
                        change.state.as_str()
                    ),
                    json!({
                        "bound_change_id": change.id,
                        "bound_path": change.path,
                        "bound_fingerprint": change.fingerprint,
                    }),
                ))
            }
        }
    }

    fn record(&self, call: &ToolCall, fp: &str, decision: &Decision) -> rein_journal::Result<()> {
        let valid_id = valid_call_id(&call.id);
        let call_id = if valid_id {
            call.id.clone()
        } else {
            invalid_id_key(&call.id)
        };
        let invalid = decision.outcome == GateOutcome::Invalid;
        self.journal.record_tool_call(&CallRecord {
            scope: self.scope.clone(),
            call_id,
            tool: call.tool.chars().take(128).collect(),
            arguments: if invalid {
                bounded(&call.arguments)
            } else {
                call.arguments.clone()
            },
            fingerprint: fp.to_string(),
            outcome: call_outcome(decision.outcome),
            reason: decision.reason.clone(),
            result: decision.result.clone(),
        })?;
        Ok(())
    }
}

impl CallExecutor for Gate<'_> {
    fn submit(&mut self, call: &ToolCall, approver: &mut dyn Approver) -> GateReport {
        let fp = fingerprint(&call.tool, &call.arguments);
        let mut decision = self.decide(call, &fp, approver);
        if let Err(e) = self.record(call, &fp, &decision) {
            decision.reason = format!(
                "{} (warning: the journal could not record this decision: {e})",
                decision.reason
            );
        }
        GateReport {
            outcome: decision.outcome,
            reason: decision.reason,
            result: decision.result,
        }
    }

    fn reads_freely(&self, path: &str) -> bool {
        matches!(self.target, GateTarget::Desk(_))
            && rein_workspace::RelPath::parse(path).is_ok()
            && self.policy.decide("read_file", false, Some(path)).action == PolicyAction::Allow
    }

    fn preview(&self, call: &ToolCall) -> Result<Proposal, String> {
        self.registry.validate(&call.tool, &call.arguments)?;
        let Some(tool) = self.registry.get(&call.tool) else {
            return Err(format!("unknown tool \"{}\"", call.tool));
        };
        if !tool.mutates() {
            return Err(format!(
                "{} changes nothing, so it has no preview",
                call.tool
            ));
        }
        let path = call.arguments.get("path").and_then(Value::as_str);
        if self.policy.decide(&call.tool, true, path).action == PolicyAction::Deny {
            return Err(format!("policy denies {}", call.tool));
        }
        if self.content_access(path) == ContentAccess::Protected {
            return Err(format!(
                "policy protects the content of the file {} names, so it is not previewed",
                call.tool
            ));
        }
        let GateTarget::Desk(workspace) = &self.target else {
            return Err("the bench sandbox's changes are not previewed".to_string());
        };
        let filter = self.policy.path_filter(&call.tool, path);
        let output = self
            .registry
            .call(
                &mut ToolContext::FilteredDesk {
                    workspace,
                    filter: &filter,
                },
                &call.tool,
                &call.arguments,
            )
            .map_err(|e| e.to_string())?;
        match output {
            ToolOutput::Proposal(p) => Ok(p),
            ToolOutput::Data(_) => Err(format!("{} proposed no change", call.tool)),
        }
    }

    fn undo_change(
        &mut self,
        change: rein_journal::ChangeId,
    ) -> Result<crate::undo::UndoReport, String> {
        match &self.target {
            GateTarget::Desk(workspace) => {
                crate::undo::undo(self.journal, workspace, change).map_err(|e| e.to_string())
            }
            GateTarget::Sandbox(_) => Err(format!(
                "change {change} cannot be undone: the bench sandbox keeps no journal of changes"
            )),
        }
    }
}

fn call_outcome(outcome: GateOutcome) -> CallOutcome {
    match outcome {
        GateOutcome::Invalid => CallOutcome::Invalid,
        GateOutcome::Denied => CallOutcome::Denied,
        GateOutcome::ApprovalRequired => CallOutcome::ApprovalRequired,
        GateOutcome::BudgetExhausted => CallOutcome::BudgetExhausted,
        GateOutcome::Executed => CallOutcome::Executed,
        GateOutcome::Replayed => CallOutcome::Replayed,
        GateOutcome::IdConflict => CallOutcome::IdConflict,
    }
}

/// `value`, or a summary of it when it is too large to keep for a refused call.
fn bounded(value: &Value) -> Value {
    let bytes = value.to_string().len();
    if bytes <= MAX_RECORDED_INVALID_BYTES {
        value.clone()
    } else {
        json!({ "omitted": "arguments too large to record for an invalid call", "bytes": bytes })
    }
}

/// Asks the person; `Err` carries the approval-required decision.
fn ask(
    approver: &mut dyn Approver,
    request: &ApprovalRequest,
    pending: Value,
) -> Result<(), Decision> {
    match approver.decide(request) {
        ApprovalDecision::AllowOnce => Ok(()),
        ApprovalDecision::Deny { reason } => Err(Decision::new(
            GateOutcome::ApprovalRequired,
            format!(
                "{} was not approved: {reason}; nothing was done",
                request.tool
            ),
            pending,
        )),
        ApprovalDecision::Unavailable => {
            let up_front = if request.reads_protected_content {
                format!(
                    "`rein tool --approve --expect-before SHA`, SHA being the sha256 of the file \
                     as you last saw it; {} must read \"{}\", which policy asks about, to work \
                     out the change, and its diff is not shown here",
                    request.tool, request.path
                )
            } else if request.diff.is_empty() {
                "`rein tool --approve`".to_string()
            } else {
                format!(
                    "`rein tool --approve --expect-before {}`, which applies exactly this diff \
                     and only while the file holds what it was computed from",
                    PreImage::from_sha256(request.before_sha256.clone())
                )
            };
            Err(Decision::new(
                GateOutcome::ApprovalRequired,
                format!(
                    "{} needs a person's approval and there was no one to ask; nothing was done \
                     (approve it up front with {up_front}, or run it at a terminal)",
                    request.tool
                ),
                pending,
            ))
        }
    }
}

fn request(
    call: &ToolCall,
    diff: String,
    before: Option<String>,
    after: Option<String>,
) -> ApprovalRequest {
    let target = ["path", "name"]
        .iter()
        .find_map(|k| call.arguments.get(*k).and_then(Value::as_str))
        .unwrap_or_default();
    ApprovalRequest {
        call_id: call.id.clone(),
        tool: call.tool.clone(),
        path: target.to_string(),
        diff,
        before_sha256: before,
        after_sha256: after,
        reads_protected_content: false,
    }
}

/// Whether the content of the file a call names may reach the caller (the model, or the
/// output of `rein tool`) without a person's approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ContentAccess {
    /// Policy allows reading it: diffs are shown in results.
    Open,
    /// Policy denies reading it or asks first: a diff (whose context and removed lines are
    /// the file's content) never goes into a result, only to the person asked.
    Protected,
}

/// A proposal as the caller may see it: with its diff only when the file's content is open
/// to the caller.
fn proposal_result(proposal: &Proposal, content: ContentAccess) -> Value {
    let mut out = proposal.to_json();
    withhold_diff(&mut out, &proposal.path, content);
    out
}

/// Removes `diff` from a result when the file's content is protected, and says why.
fn withhold_diff(out: &mut Value, path: &rein_workspace::RelPath, content: ContentAccess) {
    if content == ContentAccess::Open {
        return;
    }
    if let Some(map) = out.as_object_mut().filter(|m| m.contains_key("diff")) {
        map.remove("diff");
        map.insert("diff_withheld".into(), json!(true));
        map.insert(
            "note".into(),
            json!(format!(
                "The diff is not shown here: policy does not let \"{path}\" be read without a \
                 person's approval, and a diff shows the file's content. The person asked sees \
                 it (run at a terminal)."
            )),
        );
    }
}

fn tool_failed(e: &ToolError) -> Decision {
    Decision::invalid(format!("{e}; nothing was done"))
}

fn executed(reason: String, result: Value) -> Decision {
    Decision::new(GateOutcome::Executed, reason, result)
}

/// One call on a real folder, with what the gate knows about it.
struct DeskCall<'c> {
    registry: &'c ToolRegistry,
    journal: &'c Journal,
    scope: &'c CallScope,
    workspace: &'c Workspace,
    call: &'c ToolCall,
    fp: &'c str,
    tool: &'c dyn Tool,
    content: ContentAccess,
    /// Policy hides the name the call gives from listings (`hide_names`).
    name_hidden: bool,
    filter: &'c dyn PathFilter,
}

/// A call on a real folder. A read under "ask" is asked before it runs; a change is computed
/// as a proposal (nothing written), shown, and applied only when allowed. A change to a file
/// whose content is protected is asked about before its tool reads the file, too, and so is
/// a change naming a file whose name policy hides: its tool's answer ("already exists") would
/// confirm the name that listings keep back.
fn desk(c: DeskCall<'_>, mut approved: bool, approver: &mut dyn Approver) -> Decision {
    let call = c.call;
    let reads_first = c.tool.mutates()
        && c.content == ContentAccess::Protected
        && (c.name_hidden || crate::policy::CONTENT_READERS.contains(&call.tool.as_str()));
    if (!c.tool.mutates() || reads_first) && !approved {
        let mut req = request(call, String::new(), None, None);
        req.reads_protected_content = reads_first;
        if let Err(refused) = ask(approver, &req, Value::Null) {
            return refused;
        }
        // A read is approved now; a change still shows its diff below.
        approved = !c.tool.mutates();
    }
    let output = match c.registry.call(
        &mut ToolContext::FilteredDesk {
            workspace: c.workspace,
            filter: c.filter,
        },
        &call.tool,
        &call.arguments,
    ) {
        Ok(output) => output,
        Err(e) => return tool_failed(&e),
    };
    let proposal = match output {
        ToolOutput::Data(data) => return executed(format!("{} ran", call.tool), data),
        ToolOutput::Proposal(proposal) => proposal,
    };
    if !approved {
        let mut req = request(
            call,
            proposal.diff.clone(),
            proposal.before_sha256(),
            proposal.after_sha256(),
        );
        // The file the change applies to, as the workspace resolved it, not as the call
        // spelled it: an approval names the file that will change.
        req.path = proposal.path.as_str().to_string();
        if let Err(refused) = ask(approver, &req, proposal_result(&proposal, c.content)) {
            return refused;
        }
    }
    // Apply refuses unless the file still holds the pre-image the person was shown.
    apply_desk(&c, &proposal)
}

fn apply_desk(c: &DeskCall<'_>, proposal: &Proposal) -> Decision {
    let call = c.call;
    let request = ApplyRequest {
        scope: c.scope,
        call_id: &call.id,
        proposal,
        undo_of: None,
        fingerprint: Some(c.fp),
        create_mode: None,
    };
    match apply(c.journal, c.workspace, request) {
        Ok(applied) => {
            let mut result = json!({
                "applied": true,
                "change_id": applied.change_id,
                "path": applied.path,
                "kind": applied.kind,
                "diff": proposal.diff,
                "before_sha256": applied.before_sha256,
                "after_sha256": applied.after_sha256,
            });
            withhold_diff(&mut result, &proposal.path, c.content);
            executed(
                format!(
                    "{} applied: \"{}\" {} (change {}; `rein undo {}` reverts it)",
                    call.tool, applied.path, applied.kind, applied.change_id, applied.change_id
                ),
                result,
            )
        }
        // The approval was for a pre-image that is gone: it no longer applies.
        Err(stale @ ApplyError::Stale { .. }) => Decision::new(
            GateOutcome::ApprovalRequired,
            stale.to_string(),
            proposal_result(proposal, c.content),
        ),
        Err(e) => Decision::invalid(format!("{} could not be applied: {e}", call.tool)),
    }
}

/// A call on the bench sandbox. A change runs on a copy; the copy replaces the sandbox only
/// when policy or the person allows it.
fn sandbox_call(
    registry: &ToolRegistry,
    sandbox: &mut Sandbox,
    call: &ToolCall,
    tool: &dyn Tool,
    approved: bool,
    approver: &mut dyn Approver,
) -> Decision {
    if !tool.mutates() {
        if !approved {
            if let Err(refused) = ask(
                approver,
                &request(call, String::new(), None, None),
                Value::Null,
            ) {
                return refused;
            }
        }
        return match registry.call(
            &mut ToolContext::Sandbox(sandbox),
            &call.tool,
            &call.arguments,
        ) {
            Ok(output) => executed(format!("{} ran", call.tool), output.to_json()),
            Err(e) => tool_failed(&e),
        };
    }
    let mut copy = sandbox.clone();
    let output = registry.call(
        &mut ToolContext::Sandbox(&mut copy),
        &call.tool,
        &call.arguments,
    );
    let output = match output {
        Ok(output) => output,
        Err(e) => {
            // A failed call changes no state, but the judge sees it in the action log.
            *sandbox = copy;
            return tool_failed(&e);
        }
    };
    if !approved {
        let change = preview::sandbox_preview(sandbox, &copy);
        let req = request(call, change.diff, change.before_sha256, change.after_sha256);
        if let Err(refused) = ask(approver, &req, Value::Null) {
            return refused;
        }
    }
    *sandbox = copy;
    executed(format!("{} ran", call.tool), output.to_json())
}
