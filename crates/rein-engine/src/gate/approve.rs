//! The person's side of the gate: an [`Approver`] sees the exact change and answers for this
//! one call only. Anything but [`ApprovalDecision::AllowOnce`] leaves the workspace untouched.
//!
//! An approval is bound to the pre-image its diff was computed from
//! ([`ApprovalRequest::before_sha256`]). An approver that answers at once (a terminal prompt)
//! answers for the request in front of it, and apply refuses if the file changes before the
//! write. An approval given ahead of time, after seeing the diff in an earlier step, names the
//! pre-image it saw: [`PreImageApprover`] allows only while the request still has it.

use std::fmt;

use crate::apply::show_sha;

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
    /// True for the first of two requests of a change to a file whose reading policy asks
    /// about (see [`crate::policy::CONTENT_READERS`]): the tool must read the file before it
    /// can compute its change, so the person is asked before it reads (`diff` is empty and
    /// nothing is changed yet); the change itself is a second request, with its diff. Without
    /// this first request a model could learn the file's content from whether a guessed edit
    /// fails. Also set for a change naming a file whose name policy hides from listings: the
    /// tool's answer ("already exists") would confirm the name.
    pub reads_protected_content: bool,
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

/// Approves everything, whatever the diff. Only for tests and for changes nobody could lose
/// anything by (`rein run --approve=all` in a folder that was empty); a script that approves one
/// change it was shown uses [`PreImageApprover`].
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl Approver for AllowAll {
    fn decide(&mut self, _request: &ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::AllowOnce
    }
}

/// What `rein run --approve=all` approves: creating a file that is absent, and a change to a
/// file that holds what this run put there, by path: an editable file of its mission still
/// holding its starting content, or what a change it approved wrote there, the latest or an
/// earlier one (Rein's own undo of a worse attempt, lever `monotone-attempts`, puts an earlier
/// version back without asking the approver, and the run then changes it again). Nothing
/// else: not a frozen input (the mission says it must not change), not a file a person saved
/// into the folder while the run was going, not the same content under another name (a link,
/// or a path spelled with `..`), nor a read that a policy asks about (it changes nothing of
/// the run's; the person asked to be asked). [`AllowAll`] approved any change, so a person's
/// file could be overwritten or deleted without anyone being asked; approving up front is
/// meant only for changes nobody can lose anything by.
#[derive(Debug, Clone, Default)]
pub struct OwnWorkApprover {
    /// Per workspace path (normal form), the SHA-256 of every content this run put there (the
    /// editable file's starting content first): what it may change there.
    known: std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
}

impl OwnWorkApprover {
    /// Approves new files, and changes to each `(path, sha256)` of `editable` (a mission's
    /// editable files as copied into the workspace) while the file still holds that content,
    /// and to what it approved since.
    pub fn new(editable: impl IntoIterator<Item = (String, String)>) -> OwnWorkApprover {
        OwnWorkApprover {
            known: editable
                .into_iter()
                .filter_map(|(path, sha)| {
                    crate::checks::normalize_rel(&path)
                        .ok()
                        .map(|p| (p, [sha.to_ascii_lowercase()].into()))
                })
                .collect(),
        }
    }

    /// What `--approve=all` approves in a run of `contract`'s mission: its editable files as
    /// the contract froze them, and what the run writes.
    pub fn for_contract(contract: &crate::mission::FrozenContract) -> OwnWorkApprover {
        OwnWorkApprover::new(
            contract
                .editable
                .iter()
                .map(|h| (h.path.clone(), h.sha256.clone())),
        )
    }
}

impl Approver for OwnWorkApprover {
    fn decide(&mut self, request: &ApprovalRequest) -> ApprovalDecision {
        if request.reads_protected_content || is_read(request) {
            // Nothing of the run's is changed: a person's policy asks before this read, and
            // approving the run's writes up front is no answer to that question.
            return ApprovalDecision::Deny {
                reason: format!(
                    "{} would read {}, which policy asks about, and approving up front covers \
                     only changes to the files the run creates and the mission's editable \
                     files; run without --approve=all to be asked",
                    request.tool,
                    if request.path.is_empty() {
                        "the folder".to_string()
                    } else {
                        format!("\"{}\"", request.path)
                    }
                ),
            };
        }
        if request.path.is_empty() && request.before_sha256.is_none() {
            // A change that names no file (a sandbox's final answer) changes none of a
            // person's files.
            return ApprovalDecision::AllowOnce;
        }
        let Ok(path) = crate::checks::normalize_rel(&request.path) else {
            return ApprovalDecision::Deny {
                reason: format!(
                    "\"{}\" is not a workspace path (`..` or an absolute path), and approving \
                     up front covers only files named inside the folder",
                    request.path
                ),
            };
        };
        let ours = match &request.before_sha256 {
            None => true,
            Some(sha) => self
                .known
                .get(&path)
                .is_some_and(|k| k.contains(&sha.to_ascii_lowercase())),
        };
        if !ours {
            return ApprovalDecision::Deny {
                reason: format!(
                    "\"{}\" holds content this run did not put there (a frozen input, or a file \
                     saved into the folder while it ran?), and approving up front covers only \
                     the files the run creates and the mission's editable files; run without \
                     --approve=all to be asked",
                    request.path
                ),
            };
        }
        // A deleted file's versions stay the run's own: an undo may put one back.
        if let Some(after) = &request.after_sha256 {
            self.known
                .entry(path)
                .or_default()
                .insert(after.to_ascii_lowercase());
        }
        ApprovalDecision::AllowOnce
    }
}

/// Whether `request` asks about a read (a call that changes nothing: no diff, no content
/// before or after), not a change.
fn is_read(request: &ApprovalRequest) -> bool {
    request.diff.is_empty() && request.before_sha256.is_none() && request.after_sha256.is_none()
}

/// Refuses everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAll;

impl Approver for DenyAll {
    fn decide(&mut self, _request: &ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::Deny {
            reason: "the person declined every change in this session".into(),
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

/// The pre-image an approval was given for: the SHA-256 of the content the diff was computed
/// from, or absent (the change creates the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreImage {
    Absent,
    Sha256(String),
}

impl PreImage {
    /// From a request's or a proposal's `before_sha256` (`None`: absent).
    pub fn from_sha256(sha256: Option<String>) -> PreImage {
        match sha256 {
            Some(sha) => PreImage::Sha256(sha),
            None => PreImage::Absent,
        }
    }

    /// `absent`, or 64 hex digits (either case), as a person or script writes it.
    pub fn parse(text: &str) -> Result<PreImage, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("absent") {
            return Ok(PreImage::Absent);
        }
        if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(PreImage::Sha256(text.to_ascii_lowercase()));
        }
        Err(format!(
            "{text:?} is not a pre-image: give the before_sha256 shown with the diff (64 hex \
             digits), or `absent` for a new file"
        ))
    }

    /// The hash, `None` for absent.
    pub fn sha256(&self) -> Option<&str> {
        match self {
            PreImage::Absent => None,
            PreImage::Sha256(sha) => Some(sha),
        }
    }
}

impl fmt::Display for PreImage {
    /// `absent` or the hash: what `--expect-before` takes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.sha256().unwrap_or("absent"))
    }
}

/// An approval given ahead of time by someone who saw the diff in an earlier step (a script's
/// `rein tool --approve --expect-before SHA`): allows one call, and only while the request's
/// pre-image is the one that diff was computed from. The gate builds the request from the file
/// as it is now, so a file edited since the diff was shown has another pre-image: the approved
/// diff is not the one that would apply, and the call is not approved (apply then checks the
/// file once more right before writing).
///
/// With no pre-image stated, only calls that need none pass: one that creates a new file, or
/// one that changes no file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreImageApprover {
    expected: Option<PreImage>,
}

impl PreImageApprover {
    /// Approves a change whose pre-image is `expected`.
    pub fn expecting(expected: PreImage) -> PreImageApprover {
        PreImageApprover {
            expected: Some(expected),
        }
    }

    /// Approves only calls that create a file or change none.
    pub fn unstated() -> PreImageApprover {
        PreImageApprover { expected: None }
    }
}

impl Approver for PreImageApprover {
    fn decide(&mut self, request: &ApprovalRequest) -> ApprovalDecision {
        let changes_a_file = !request.diff.is_empty()
            || request.before_sha256.is_some()
            || request.after_sha256.is_some();
        let found = PreImage::from_sha256(request.before_sha256.clone());
        match &self.expected {
            _ if !changes_a_file => ApprovalDecision::AllowOnce,
            Some(expected) if *expected == found => ApprovalDecision::AllowOnce,
            Some(expected) => ApprovalDecision::Deny {
                reason: format!(
                    "the approval was for \"{}\" holding {}, but it now holds {}, so the diff \
                     that was approved is not the one that would apply; look at the new diff \
                     and approve it with its own pre-image",
                    request.path,
                    show_sha(expected.sha256()),
                    show_sha(found.sha256())
                ),
            },
            None if found == PreImage::Absent => ApprovalDecision::AllowOnce,
            None => ApprovalDecision::Deny {
                reason: format!(
                    "\"{}\" exists, and an approval given in advance for a change to an existing \
                     file must name the pre-image of the diff that was shown: pass its \
                     before_sha256 (`rein tool ... --approve --expect-before SHA`); without \
                     one, --approve only creates new files",
                    request.path
                ),
            },
        }
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
