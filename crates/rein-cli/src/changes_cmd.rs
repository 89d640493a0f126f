//! `rein changes` and `rein undo CHANGE`: the applied changes of a workspace, and their undo.
//! Both run recovery first, so an interrupted change is resolved (or shown as a conflict)
//! before anything is listed or reverted.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use rein_engine::apply::ChangeKind;
use rein_engine::undo::undo;
use rein_journal::{Change, ChangeId, ChangeState};
use rein_protocol::display::{escape_line, json_safe, show_diff};
use serde_json::{json, Value};

use crate::tool_cmd::{open_journal, open_workspace, recover_and_report};

#[derive(Debug, clap::Args)]
pub struct ChangesArgs {
    /// The workspace whose changes to list (default: the current folder).
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// Also list changes that were never applied (interrupted before the file was touched).
    #[arg(long)]
    all: bool,
}

#[derive(Debug, clap::Args)]
pub struct UndoArgs {
    /// The change number, from `rein changes`.
    change: String,
    /// The workspace (default: the one the change was made in).
    #[arg(long)]
    workspace: Option<PathBuf>,
}

/// `rein changes`.
pub fn changes(args: ChangesArgs, as_json: bool) -> Result<i32> {
    let dir = match args.workspace {
        Some(dir) => dir,
        None => std::env::current_dir()
            .context("cannot read the current folder; pass --workspace DIR")?,
    };
    let (root, listed) = list_changes(&dir, args.all)?;
    if as_json {
        println!(
            "{}",
            json_safe(&serde_json::to_string_pretty(&changes_json(
                &root, &listed
            ))?)
        );
        return Ok(0);
    }
    if listed.is_empty() {
        println!("no changes recorded for {}", escape_line(&root));
        return Ok(0);
    }
    println!(
        "{:<6} {:<20} {:<8} {:<11} {:<8} PATH",
        "ID", "TIME (UTC)", "KIND", "STATE", "UNDO OF"
    );
    for c in &listed {
        println!(
            "{:<6} {:<20} {:<8} {:<11} {:<8} {}",
            c.id.to_string(),
            rein_protocol::time::utc_millis(c.created_at),
            ChangeKind::of_change(c).as_str(),
            c.state.as_str(),
            c.undo_of.map_or_else(String::new, |u| u.to_string()),
            escape_line(&c.path)
        );
    }
    Ok(0)
}

/// The changes of the workspace at `dir` (recovered first), newest first; with `all`, also
/// those never applied. Returns the workspace's display root too.
pub(crate) fn list_changes(dir: &std::path::Path, all: bool) -> Result<(String, Vec<Change>)> {
    let workspace = open_workspace(dir)?;
    let journal = open_journal()?;
    recover_and_report(&journal, &workspace)?;
    let root = workspace.display_root();
    let listed: Vec<Change> = journal
        .changes(&root)?
        .into_iter()
        .filter(|c| all || c.state != ChangeState::NotApplied)
        .collect();
    Ok((root, listed))
}

/// The document `rein changes --json` prints.
pub(crate) fn changes_json(root: &str, listed: &[Change]) -> Value {
    let changes: Vec<Value> = listed.iter().map(change_json).collect();
    json!({ "workspace": root, "changes": changes })
}

/// Reverts change `id` of the workspace at `dir` (recovered first); the document `rein undo
/// --json` prints.
pub(crate) fn undo_in(dir: &std::path::Path, id: ChangeId) -> Result<Value> {
    let workspace = open_workspace(dir)?;
    let journal = open_journal()?;
    recover_and_report(&journal, &workspace)?;
    match journal.change(id)? {
        Some(change) if change.workspace == workspace.display_root() => {}
        _ => bail!("there is no change {id} in this workspace; the changes list shows them"),
    }
    let report = undo(&journal, &workspace, id)?;
    Ok(json!({
        "undone": report.undo_of,
        "change_id": report.change_id,
        "path": report.path,
        "kind": report.kind,
        "diff": report.diff,
    }))
}

/// `rein undo CHANGE`.
pub fn undo_change(args: UndoArgs, as_json: bool) -> Result<i32> {
    let Ok(id) = args
        .change
        .trim()
        .trim_start_matches('#')
        .parse::<i64>()
        .map(ChangeId)
    else {
        bail!(
            "\"{}\" is not a change number; `rein changes` lists them",
            escape_line(&args.change)
        );
    };
    // Refuse an overlapping workspace before the journal is opened (and so created).
    if let Some(dir) = &args.workspace {
        crate::open::refuse_data_dir_overlap(dir)?;
    }
    let journal = open_journal()?;
    let dir = match args.workspace {
        Some(dir) => dir,
        None => match journal.change(id)? {
            Some(change) => PathBuf::from(change.workspace),
            None => bail!("there is no change {id}; `rein changes` lists them"),
        },
    };
    let workspace = open_workspace(&dir)?;
    recover_and_report(&journal, &workspace)?;
    let report = undo(&journal, &workspace, id)?;
    if as_json {
        println!(
            "{}",
            json_safe(&serde_json::to_string_pretty(&json!({
                "undone": report.undo_of,
                "change_id": report.change_id,
                "path": report.path,
                "kind": report.kind,
                "diff": report.diff,
            }))?)
        );
    } else {
        let diff = show_diff(&report.diff);
        print!("{}", diff.text);
        if let Some(warning) = diff.warning() {
            println!("{warning}");
        }
        println!(
            "undid change {}: \"{}\" {} (this is change {}; `rein undo {}` redoes it)",
            report.undo_of,
            escape_line(&report.path),
            report.kind,
            report.change_id,
            report.change_id
        );
    }
    Ok(0)
}

fn change_json(c: &Change) -> Value {
    json!({
        "id": c.id,
        "time": rein_protocol::time::utc_millis(c.created_at),
        "time_ms": c.created_at,
        "path": c.path,
        "kind": ChangeKind::of_change(c),
        "state": c.state.as_str(),
        "undo_of": c.undo_of,
        "undone_by": c.undone_by,
        "call_id": c.call_id,
        "before_sha256": c.before_sha,
        "after_sha256": c.after_sha,
    })
}
