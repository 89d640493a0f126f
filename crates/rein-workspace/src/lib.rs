//! rein-workspace: the only way Rein touches a workspace folder, and the tools a model may call.
//!
//! * [`Workspace::resolve`] is the one gate for model-supplied paths ([`confine`] holds the
//!   lexical rules, [`ConfinementError`] names the rule a path broke).
//! * Every access opens beneath the root descriptor without following links ([`beneath`]), so a
//!   link swapped in after the check changes nothing.
//! * Writes are staged and published in separate, crash-safe steps ([`Workspace::stage`],
//!   [`Staged::publish`]).
//! * [`ToolRegistry`] holds typed tools with JSON schemas; [`desk_registry`] works on a real
//!   folder (mutations become [`Proposal`]s, never writes), [`sandbox_registry`] on the bench's
//!   in-memory [`Sandbox`].
//!
//! Every system call goes through `rustix`'s safe wrappers: this crate has no `unsafe` code.

#![forbid(unsafe_code)]

mod atomic;
mod beneath;
pub mod confine;
pub mod desk;
mod error;
mod registry;
mod sandbox;
mod schema_error;
mod tool;
mod walk;
mod workspace;

pub use atomic::Staged;
pub use beneath::{EntryKind, OpenMethod};
pub use confine::{RelPath, TEMP_PREFIX};
pub use desk::desk_registry;
pub use error::{ConfinementError, Result, WorkspaceError};
pub use registry::{RegistryError, ToolRegistry, MAX_INPUT_CHARS, MAX_THOUGHT_CHARS};
pub use sandbox::{sandbox_registry, ActionRecord, Sandbox};
pub use schema_error::{describe_schema_error, kind_of, printable, schema_error_place};
pub use tool::{
    changed_places, unified_diff, Proposal, ProposalKind, Tool, ToolContext, ToolError, ToolOutput,
};
pub use walk::{WalkOptions, WalkResult, Walker, MAX_WALK_ENTRIES};
pub use workspace::{DirEntry, FileInfo, Listing, Workspace};
