//! Recovery on start: every intent without a commit is resolved from what is on disk, and the
//! temp file its interrupted write may have left is removed: only that one, by the name the
//! intent recorded, never another file that happens to be called `.rein-tmp-…` (it may be a
//! person's). Nothing is ever overwritten here: a file that holds neither the old nor the new
//! content is a conflict for the person to look at.

use rein_journal::{Change, ChangeId, Journal};
use rein_workspace::{RelPath, Workspace, TEMP_PREFIX};
use serde::Serialize;

use super::{show_sha, ApplyError, ApplyLock};

/// What recovery did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RecoveryReport {
    /// Intents whose file held the new content: recorded as committed.
    pub committed: Vec<ChangeId>,
    /// Intents whose file still held the old content: nothing had happened.
    pub not_applied: Vec<ChangeId>,
    /// Intents whose file held neither: left for the person, untouched.
    pub conflicts: Vec<Change>,
    /// Temp files of interrupted writes that were removed (each named by its intent).
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

/// Resolves every pending intent of `workspace` and removes the temp files those intents
/// recorded. Run it on start, before any call is submitted.
pub fn recover(journal: &Journal, workspace: &Workspace) -> Result<RecoveryReport, ApplyError> {
    let _lock = ApplyLock::acquire(journal.path())?;
    let mut report = RecoveryReport::default();
    for intent in journal.pending_intents(&workspace.display_root())? {
        // First the temp file, while the intent still names it: a crash here leaves the
        // intent pending, and the next recovery tries again.
        if let Some((target, name)) = intent_temp(&intent) {
            if workspace.remove_temp(&target, name)? {
                report.temps_removed.extend(intent.temp_path.clone());
            }
        }
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
    Ok(report)
}

/// The temp file an intent recorded, as its target and its file name, if it is one the apply
/// could have made: a `.rein-tmp-` name beside the intent's own file. Anything else is
/// ignored, never removed.
fn intent_temp(intent: &Change) -> Option<(RelPath, &str)> {
    let temp = intent.temp_path.as_deref()?;
    let target = RelPath::parse(&intent.path).ok()?;
    let (folder, name) = match temp.rsplit_once('/') {
        Some((folder, name)) => (folder, name),
        None => ("", temp),
    };
    let beside = target.parent().is_some_and(|p| p.as_str() == folder);
    (beside && name.starts_with(TEMP_PREFIX)).then_some((target, name))
}
