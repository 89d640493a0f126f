//! The [`Tool`] trait and what tools return: data for reads, [`Proposal`]s for changes.

use serde_json::{json, Value};

use crate::confine::RelPath;
use crate::desk::PathFilter;
use crate::error::{ConfinementError, WorkspaceError};
use crate::sandbox::Sandbox;
use crate::workspace::Workspace;

/// What a tool acts on. Desk tools need a real folder, sandbox tools the bench's in-memory
/// sandbox; a tool called with the other kind refuses with [`ToolError::WrongContext`].
#[derive(Debug)]
pub enum ToolContext<'a> {
    /// A real folder where every file is visible (no policy narrows it).
    Desk(&'a Workspace),
    /// A real folder seen through a [`PathFilter`] (the gate fills it from policy): a desk tool
    /// that reads or lists more than the one path it was given asks the filter for each file.
    FilteredDesk {
        workspace: &'a Workspace,
        filter: &'a dyn PathFilter,
    },
    Sandbox(&'a mut Sandbox),
}

/// A typed tool a model may call.
pub trait Tool: Send + Sync {
    /// The exact name the model writes in `"action"`.
    fn name(&self) -> &str;
    /// One or two sentences the model reads to choose the tool.
    fn description(&self) -> &str;
    /// JSON schema of the `parameters` object (types, required, properties, enum/const,
    /// maxLength, additionalProperties false: what constrained decoding handles well).
    fn schema(&self) -> Value;
    /// Whether the call changes anything. True when in doubt: a mutation waits for approval.
    fn mutates(&self) -> bool {
        true
    }
    /// Runs the tool on already-validated arguments.
    fn run(&self, ctx: &mut ToolContext<'_>, args: &Value) -> Result<ToolOutput, ToolError>;
}

/// What a tool produced.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// The answer of a read (or of a sandbox action), as JSON for the model.
    Data(Value),
    /// A change to show a person; nothing has been written.
    Proposal(Proposal),
}

impl ToolOutput {
    /// JSON for the model, the journal and `rein tool`.
    pub fn to_json(&self) -> Value {
        match self {
            ToolOutput::Data(v) => v.clone(),
            ToolOutput::Proposal(p) => p.to_json(),
        }
    }
}

/// Whether a proposal creates, modifies or deletes its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProposalKind {
    Create,
    Modify,
    Delete,
}

impl ProposalKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProposalKind::Create => "create",
            ProposalKind::Modify => "modify",
            ProposalKind::Delete => "delete",
        }
    }
}

/// A proposed change to one file: exact bytes before and after, and a unified diff for the
/// person who approves it. `before` is what the approval is bound to: apply must refuse when
/// the file no longer hashes to [`Proposal::before_sha256`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    pub path: RelPath,
    /// Current content, `None` when the file does not exist.
    pub before: Option<Vec<u8>>,
    /// New content, `None` for a deletion.
    pub after: Option<Vec<u8>>,
    pub diff: String,
}

impl Proposal {
    /// Builds a proposal and its diff.
    pub fn new(path: RelPath, before: Option<Vec<u8>>, after: Option<Vec<u8>>) -> Proposal {
        let diff = unified_diff(&path, before.as_deref(), after.as_deref());
        Proposal {
            path,
            before,
            after,
            diff,
        }
    }

    pub fn kind(&self) -> ProposalKind {
        match (&self.before, &self.after) {
            (None, _) => ProposalKind::Create,
            (Some(_), None) => ProposalKind::Delete,
            (Some(_), Some(_)) => ProposalKind::Modify,
        }
    }

    /// SHA-256 (hex) of the pre-image, `None` for "absent".
    pub fn before_sha256(&self) -> Option<String> {
        self.before.as_deref().map(sha256_hex)
    }

    /// SHA-256 (hex) of the post-image, `None` for a deletion.
    pub fn after_sha256(&self) -> Option<String> {
        self.after.as_deref().map(sha256_hex)
    }

    /// A JSON summary (hashes and diff, not the raw bytes).
    pub fn to_json(&self) -> Value {
        json!({
            "proposal": self.kind().as_str(),
            "path": self.path,
            "before_sha256": self.before_sha256(),
            "after_sha256": self.after_sha256(),
            "before_bytes": self.before.as_ref().map(Vec::len),
            "after_bytes": self.after.as_ref().map(Vec::len),
            "diff": self.diff,
        })
    }
}

pub use rein_protocol::canonical::sha256_hex;

/// How long a diff looks for the shortest form before it settles for a longer exact one.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// In how many separate places `after` differs from `before`, by lines: a run of changed,
/// added or removed lines with no unchanged line inside it counts once, and equal texts count
/// none. Bounded by the same timeout as [`unified_diff`] (past it, the count is of an exact diff
/// that may not be the shortest). Where either side is not UTF-8, a change anywhere is one place.
pub fn changed_places(before: &[u8], after: &[u8]) -> usize {
    match (std::str::from_utf8(before), std::str::from_utf8(after)) {
        (Ok(old), Ok(new)) => similar::TextDiff::configure()
            .timeout(DIFF_TIMEOUT)
            .diff_lines(old, new)
            .grouped_ops(0)
            .len(),
        _ => usize::from(before != after),
    }
}

/// A unified diff with three lines of context. Every side that is UTF-8 is shown as text, a
/// NUL byte or two included (the display escapes them): a model writes only text, and before,
/// one NUL made its whole file "Binary file run.sh changed (absent -> 48 bytes ...)", so the
/// person approved a script they never saw; likewise text replacing a real binary file. Only
/// content that is not UTF-8 is described (size and hash) instead of dumped.
pub fn unified_diff(path: &RelPath, before: Option<&[u8]>, after: Option<&[u8]>) -> String {
    let old_name = if before.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_string()
    };
    let new_name = if after.is_some() {
        format!("b/{path}")
    } else {
        "/dev/null".to_string()
    };
    fn as_text(b: Option<&[u8]>) -> Option<&str> {
        match b {
            None => Some(""),
            Some(bytes) => std::str::from_utf8(bytes).ok(),
        }
    }
    match (as_text(before), as_text(after)) {
        // A minimal diff of two large, very different texts takes time in proportion to both
        // sizes multiplied (replacing a file of a million lines ran for more than five
        // minutes); past the timeout the diff is still exact, only not the shortest.
        (Some(old), Some(new)) => similar::TextDiff::configure()
            .timeout(DIFF_TIMEOUT)
            .diff_lines(old, new)
            .unified_diff()
            .context_radius(3)
            .header(&old_name, &new_name)
            .to_string(),
        (old, new) => {
            // One side is not UTF-8: that side is described, the other shown whole.
            let describe = |b: Option<&[u8]>| {
                b.map_or_else(
                    || "absent".to_string(),
                    |b| format!("{} bytes, sha256 {}", b.len(), sha256_hex(b)),
                )
            };
            let mut out = format!(
                "Binary file {path} changed ({} -> {})\n",
                describe(before),
                describe(after)
            );
            for (side, text, sign) in [(before, old, '-'), (after, new, '+')] {
                if let (Some(_), Some(text)) = (side, text) {
                    out.push_str(&format!(
                        "{} {} (text, shown whole)\n",
                        if sign == '-' { "---" } else { "+++" },
                        if sign == '-' { &old_name } else { &new_name }
                    ));
                    for line in text.split_inclusive('\n') {
                        out.push(sign);
                        out.push_str(line);
                    }
                    if !text.is_empty() && !text.ends_with('\n') {
                        out.push_str("\n\\ No newline at end of file\n");
                    }
                }
            }
            out
        }
    }
}

/// Why a tool call did not produce output. Messages speak to the model and the person alike.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("unknown tool \"{name}\"; the tools are: {}", known.join(", "))]
    UnknownTool { name: String, known: Vec<String> },
    #[error("invalid arguments for {tool}: {message}")]
    InvalidArguments { tool: String, message: String },
    #[error("{0}")]
    Refused(String),
    #[error("{tool} works on {needs}, which this session does not have")]
    WrongContext { tool: String, needs: &'static str },
    #[error("{0}")]
    Confinement(#[from] ConfinementError),
    #[error("{0}")]
    Workspace(WorkspaceError),
}

impl From<WorkspaceError> for ToolError {
    fn from(e: WorkspaceError) -> Self {
        match e {
            WorkspaceError::Confinement(c) => ToolError::Confinement(c),
            other => ToolError::Workspace(other),
        }
    }
}

/// Small typed accessors for already-validated arguments.
pub(crate) mod args {
    use serde_json::Value;

    use super::ToolError;

    pub fn str<'a>(tool: &str, args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
        opt_str(args, key).ok_or_else(|| ToolError::InvalidArguments {
            tool: tool.to_string(),
            message: format!("the string argument `{key}` is required"),
        })
    }

    pub fn opt_str<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
        args.get(key).and_then(Value::as_str)
    }

    pub fn opt_u64(args: &Value, key: &str) -> Option<u64> {
        args.get(key).and_then(Value::as_u64)
    }

    /// An optional whole-number argument. A value that is present but is not a plain
    /// non-negative integer (`3.0`, `-1`, `"3"`) is refused, never silently ignored.
    pub fn opt_uint(tool: &str, args: &Value, key: &str) -> Result<Option<u64>, ToolError> {
        match args.get(key) {
            None => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| ToolError::InvalidArguments {
                tool: tool.to_string(),
                message: format!(
                    "`{key}` must be a whole number of at least 0 written without a decimal point, like 3; got {v}"
                ),
            }),
        }
    }

    pub fn opt_bool(args: &Value, key: &str) -> Option<bool> {
        args.get(key).and_then(Value::as_bool)
    }
}

#[cfg(test)]
mod changed_places_tests {
    use super::changed_places;

    #[test]
    fn places_are_runs_of_changed_lines() {
        let start = "a\nb\nc\nd\ne\n";
        assert_eq!(changed_places(start.as_bytes(), start.as_bytes()), 0);
        // Two lines apart: two places; two lines side by side: one.
        assert_eq!(changed_places(start.as_bytes(), b"a\nB\nc\nD\ne\n"), 2);
        assert_eq!(changed_places(start.as_bytes(), b"a\nB\nC\nd\ne\n"), 1);
        // An added last line and a removed first one are places too.
        assert_eq!(changed_places(start.as_bytes(), b"b\nc\nd\ne\nf\n"), 2);
        // A change made and then made back leaves nothing.
        assert_eq!(changed_places(b"", b""), 0);
        assert_eq!(changed_places(b"x", b"y"), 1);
        assert_eq!(changed_places(b"\xff\n", b"\xfe\n"), 1);
        assert_eq!(changed_places(b"\xff\n", b"\xff\n"), 0);
    }
}
