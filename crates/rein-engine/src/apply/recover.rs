//! Recovery on start: every intent without a commit is resolved from what is on disk, and
//! temp files of interrupted writes are removed. Nothing is ever overwritten here: a file that
//! holds neither the old nor the new content is a conflict for the person to look at.

use rein_journal::{Change, ChangeId, Journal};
use rein_workspace::{RelPath, Workspace};
use serde::Serialize;

use super::{lock_path, show_sha, ApplyError, ApplyLock};

/// What recovery did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RecoveryReport {
    /// Intents whose file held the new content: recorded as committed.
    pub committed: Vec<ChangeId>,
    /// Intents whose file still held the old content: nothing had happened.
    pub not_applied: Vec<ChangeId>,
    /// Intents whose file held neither: left for the person, untouched.
    pub conflicts: Vec<Change>,
    /// Temp files of interrupted writes that were removed.
    pub temps_removed: Vec<String>,
}

impl RecoveryReport {
    /// Whether recovery found anything at all.
    pub fn is_empty(&self) -> bool {
        self.committed.is_empty()
            && self.not_applied.is_empty()
            && self.conflicts.is_empty()
            && self.temps_removed.is_empty()
    }

    /// One line per conflict, for showing to the person.
    pub fn conflict_lines(&self) -> Vec<String> {
        self.conflicts
            .iter()
            .map(|c| {
                let found = if c.found_absent {
                    "absent".to_string()
                } else {
                    show_sha(c.found_sha.as_deref())
                };
                format!(
                    "change {} to \"{}\" was interrupted and the file now holds neither the old \
                     content ({}) nor the new ({}) but {found}; it was left as it is: inspect it \
                     and keep or restore it by hand",
                    c.id,
                    c.path,
                    show_sha(c.before_sha.as_deref()),
                    show_sha(c.after_sha.as_deref()),
                )
            })
            .collect()
    }
}

/// Resolves every pending intent of `workspace` and removes stale temp files. Run it on start,
/// before any call is submitted.
pub fn recover(journal: &Journal, workspace: &Workspace) -> Result<RecoveryReport, ApplyError> {
    let _lock = ApplyLock::acquire(journal.path()).map_err(|source| ApplyError::Lock {
        path: lock_path(journal.path()).display().to_string(),
        source,
    })?;
    let mut report = RecoveryReport::default();
    for intent in journal.pending_intents(&workspace.display_root())? {
        // `None`: now a folder, a link, unreadable: neither image, so a conflict.
        let found = RelPath::parse(&intent.path)
            .ok()
            .and_then(|path| workspace.sha256_of(&path).ok());
        match found {
            Some(found) if found == intent.after_sha => {
                journal.mark_committed(intent.id)?;
                report.committed.push(intent.id);
            }
            Some(found) if found == intent.before_sha => {
                journal.mark_not_applied(intent.id)?;
                report.not_applied.push(intent.id);
            }
            found => {
                let found = found.flatten();
                journal.mark_conflict(intent.id, found.as_deref())?;
                if let Some(change) = journal.change(intent.id)? {
                    report.conflicts.push(change);
                }
            }
        }
    }
    report.temps_removed = workspace
        .clean_stale_temps()?
        .into_iter()
        .map(|p| p.to_string())
        .collect();
    Ok(report)
}
