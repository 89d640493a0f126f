//! The person's side of the gate: an [`Approver`] sees the exact change and answers for this
//! one call only. Anything but [`ApprovalDecision::AllowOnce`] leaves the workspace untouched.

/// What a person is asked to approve: one call and the exact diff it would apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    pub call_id: String,
    pub tool: String,
    /// The file the call changes (or the variable it sets, in a sandbox); empty when none.
    pub path: String,
    /// The exact unified diff that will be applied; empty for a call that changes nothing.
    pub diff: String,
    /// SHA-256 of the file the diff was computed against (`None`: the file is absent). The
    /// approval is bound to it: if the file changes before apply, apply refuses.
    pub before_sha256: Option<String>,
    /// SHA-256 of the content after the change (`None`: the file is deleted).
    pub after_sha256: Option<String>,
}

/// A person's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Apply this one call, once. A retry with a new id asks again.
    AllowOnce,
    /// The person said no.
    Deny { reason: String },
    /// There is no person to ask (no terminal, a script): the call ends as approval-required.
    Unavailable,
}

/// Something that can answer approval requests: a terminal prompt, a web card, a test.
pub trait Approver {
    fn decide(&mut self, request: &ApprovalRequest) -> ApprovalDecision;
}

/// Approves everything. Only for scripts and tests that approve up front (`rein tool --approve`).
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl Approver for AllowAll {
    fn decide(&mut self, _request: &ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::AllowOnce
    }
}

/// Refuses everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAll;

impl Approver for DenyAll {
    fn decide(&mut self, _request: &ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::Deny {
            reason: "every change is refused in this session".into(),
        }
    }
}

/// Nobody to ask: every request ends as approval-required.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoApprover;

impl Approver for NoApprover {
    fn decide(&mut self, _request: &ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::Unavailable
    }
}

/// Records every request it sees and answers from a script of decisions (then `Unavailable`);
/// lets tests check that the person saw exactly the diff that was applied.
#[derive(Debug, Clone, Default)]
pub struct ScriptedApprover {
    pub answers: std::collections::VecDeque<ApprovalDecision>,
    pub seen: Vec<ApprovalRequest>,
}

impl ScriptedApprover {
    pub fn new(answers: impl IntoIterator<Item = ApprovalDecision>) -> ScriptedApprover {
        ScriptedApprover {
            answers: answers.into_iter().collect(),
            seen: Vec::new(),
        }
    }
}

impl Approver for ScriptedApprover {
    fn decide(&mut self, request: &ApprovalRequest) -> ApprovalDecision {
        self.seen.push(request.clone());
        self.answers
            .pop_front()
            .unwrap_or(ApprovalDecision::Unavailable)
    }
}
