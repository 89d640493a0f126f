//! Errors, written for the person (or model) reading them: what was wrong and what to do.

use std::io;

use crate::confine::RelPath;

/// A model-supplied path broke a confinement rule. Each variant names the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfinementError {
    #[error(
        "the path is empty; name a file or folder inside the workspace, like \"notes/todo.md\""
    )]
    Empty,
    #[error("the path contains a NUL byte, which no file name may contain")]
    Nul,
    #[error("\"..\" is not allowed: paths may not step up out of a folder; name the file from the workspace root instead")]
    ParentComponent,
    // The example is the path's own file name: a small model copies the example it is given
    // (the 0.5B, told `like "notes/todo.md"`, wrote to notes/todo.md twelve times).
    #[error("\"{path}\" is an absolute path; paths are relative to the workspace root: a file at its top is just its name, like \"{name}\"")]
    Absolute { path: String, name: String },
    #[error("\"{path}\" starts with \"~\" (a home-folder shorthand); use a path relative to the workspace root")]
    HomeShorthand { path: String },
    #[error("\"{component}\" is a Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with or without an extension); choose another name")]
    DeviceName { component: String },
    #[error(
        "\"{component}\" ends with a dot or a space, which some systems silently drop; remove it"
    )]
    TrailingDotOrSpace { component: String },
    #[error("\"{}\" contains the character {character:?}, which is not allowed in workspace paths (use \"/\" to separate folders; avoid \\ : < > \" | ? * and control characters)", escaped(.component))]
    ForbiddenCharacter { component: String, character: char },
    #[error("\"{}\" contains U+{:04X} ({what}), an invisible or text-direction character that can make a name look like another one; remove it and type the name with visible characters only", escaped(.component), u32::from(*.character))]
    InvisibleCharacter {
        component: String,
        character: char,
        what: &'static str,
    },
    #[error("\"{component}\" cannot be used: {why}")]
    ReservedName {
        component: String,
        why: &'static str,
    },
    #[error("the path is {bytes} bytes long; the limit is {max}")]
    TooLong { bytes: usize, max: usize },
    #[error("one name in the path is {bytes} bytes long; the limit is {max}")]
    ComponentTooLong { bytes: usize, max: usize },
    #[error("the path is {depth} folders deep; the limit is {max}")]
    TooDeep { depth: usize, max: usize },
    #[error("\"{path}\" is a {kind}; links are never followed inside the workspace, so name the real file instead")]
    Link { path: String, kind: &'static str },
    #[error("\"{path}\" leads outside the workspace, which is never allowed")]
    Escapes { path: String },
    #[error("\"{path}\" is a mount point (another filesystem, or a bind mount of a folder that may lie outside the workspace); Rein never crosses into one, so use files that live in the workspace itself")]
    MountPoint { path: String },
}

impl ConfinementError {
    /// A short stable name of the broken rule, for journals and JSON output.
    pub fn rule(&self) -> &'static str {
        match self {
            ConfinementError::Empty => "empty",
            ConfinementError::Nul => "nul",
            ConfinementError::ParentComponent => "parent_component",
            ConfinementError::Absolute { .. } => "absolute",
            ConfinementError::HomeShorthand { .. } => "home_shorthand",
            ConfinementError::DeviceName { .. } => "device_name",
            ConfinementError::TrailingDotOrSpace { .. } => "trailing_dot_or_space",
            ConfinementError::ForbiddenCharacter { .. } => "forbidden_character",
            ConfinementError::InvisibleCharacter { .. } => "invisible_character",
            ConfinementError::ReservedName { .. } => "reserved_name",
            ConfinementError::TooLong { .. } => "too_long",
            ConfinementError::ComponentTooLong { .. } => "component_too_long",
            ConfinementError::TooDeep { .. } => "too_deep",
            ConfinementError::Link { .. } => "link",
            ConfinementError::Escapes { .. } => "escapes",
            ConfinementError::MountPoint { .. } => "mount_point",
        }
    }
}

/// A name as it may be shown: control, invisible and text-direction characters are written as
/// `\u{...}` escapes, so an error message cannot hide or reorder text on a terminal.
fn escaped(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_control() || crate::confine::invisible_character(c).is_some() {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// Anything that can go wrong opening a workspace or touching a file in it.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("the workspace folder {path} could not be opened: {source}; check that it exists, is a folder and that you may read it")]
    OpenRoot { path: String, source: io::Error },
    #[error("refusing to use {path} as a workspace: {why}")]
    RefusedRoot { path: String, why: String },
    #[error("{0}")]
    Confinement(#[from] ConfinementError),
    #[error("\"{path}\" is a {kind}, not a regular file")]
    NotAFile { path: RelPath, kind: &'static str },
    #[error("\"{path}\" is not a folder")]
    NotADirectory { path: RelPath },
    #[error("\"{path}\" does not exist")]
    NotFound { path: RelPath },
    #[error("\"{path}\" appeared after the change was checked (something else created it); nothing was overwritten: look at the new file and propose the change again")]
    AppearedMeanwhile { path: RelPath },
    #[error("\"{path}\" is {size} bytes, more than the {max} bytes allowed here; work on a smaller file")]
    TooLarge { path: RelPath, size: u64, max: u64 },
    #[error("could not {op} \"{path}\": {source}{}", hint(.source))]
    Io {
        op: &'static str,
        path: RelPath,
        source: io::Error,
    },
}

impl WorkspaceError {
    pub(crate) fn io(op: &'static str, path: &RelPath, source: io::Error) -> WorkspaceError {
        WorkspaceError::Io {
            op,
            path: path.clone(),
            source,
        }
    }
}

/// A plain-language next step for the errors a person can do something about.
fn hint(err: &io::Error) -> &'static str {
    match err.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => {
            " (the disk is full: free some space and try again; the file was left as it was)"
        }
        Some(libc::EROFS) => " (the file system is read-only; nothing was changed)",
        Some(libc::EACCES) | Some(libc::EPERM) => {
            " (permission denied: check the file's owner and permissions)"
        }
        Some(libc::EMFILE) | Some(libc::ENFILE) => " (too many open files; try again)",
        _ => "",
    }
}

/// Result alias for workspace operations.
pub type Result<T, E = WorkspaceError> = std::result::Result<T, E>;
