//! The judge's and the finish rules' view of a real workspace, read through the confined
//! resolver: a check can no more follow a link out of the folder than a tool can.

use rein_workspace::{
    ConfinementError, RelPath, WalkOptions, Walker, Workspace, WorkspaceError, MAX_WALK_ENTRIES,
};

use crate::checks::{World, WorldError};

/// A [`World`] over a confined [`Workspace`].
#[derive(Debug)]
pub struct WorkspaceWorld<'a> {
    workspace: &'a Workspace,
}

impl<'a> WorkspaceWorld<'a> {
    pub fn new(workspace: &'a Workspace) -> Self {
        Self { workspace }
    }
}

impl WorkspaceWorld<'_> {
    /// `read` of the confined workspace applied to `path`: a missing file is `Ok(None)`, and
    /// so is one that `read` refuses as too large.
    fn read_with(
        &self,
        path: &str,
        read: impl FnOnce(&Workspace, &RelPath) -> Result<Option<Vec<u8>>, WorkspaceError>,
    ) -> Result<Option<Vec<u8>>, WorldError> {
        let invalid = |reason: String| WorldError::InvalidPath {
            path: path.to_string(),
            reason,
        };
        let rel = self
            .workspace
            .resolve(path)
            .map_err(|e: ConfinementError| invalid(e.to_string()))?;
        match read(self.workspace, &rel) {
            Ok(b) => Ok(b),
            Err(WorkspaceError::NotFound { .. } | WorkspaceError::TooLarge { .. }) => Ok(None),
            Err(e @ WorkspaceError::Confinement(_)) => Err(invalid(e.to_string())),
            Err(e) => Err(WorldError::Io {
                path: path.to_string(),
                source: std::io::Error::other(e.to_string()),
            }),
        }
    }
}

impl World for WorkspaceWorld<'_> {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, WorldError> {
        self.read_with(path, |ws, rel| ws.read_bytes(rel))
    }

    /// Refuses a file over `max` by its size, before reading any of it.
    fn read_small(&self, path: &str, max: u64) -> Result<Option<Vec<u8>>, WorldError> {
        self.read_with(path, |ws, rel| ws.read_bytes_capped(rel, max))
    }

    /// From the folder's own metadata (links not followed), not a walk of the workspace: a
    /// link anywhere in it fails [`World::files`].
    fn is_folder(&self, path: &str) -> bool {
        self.workspace.resolve(path).is_ok_and(|rel| {
            matches!(
                self.workspace.info(&rel),
                Ok(Some(info)) if info.kind == rein_workspace::EntryKind::Dir
            )
        })
    }

    /// A desk workspace has no sandbox variables.
    fn variable(&self, _name: &str) -> Option<serde_json::Value> {
        None
    }

    /// Every file, ignore files not honoured (an ignored file is still a change). A link, a
    /// name that cannot be addressed or a walk cut short is an error: the starting state of a
    /// run holds none, so the listing could not be compared.
    fn files(&self) -> Result<Option<Vec<String>>, WorldError> {
        let walker = Walker::new(
            self.workspace,
            WalkOptions {
                respect_ignore_files: false,
                include_temps: false,
                max_entries: MAX_WALK_ENTRIES,
            },
        );
        let fail = |what: String| WorldError::Io {
            path: ".".to_string(),
            source: std::io::Error::other(what),
        };
        let walked = walker
            .walk(&RelPath::root())
            .map_err(|e| fail(e.to_string()))?;
        if walked.skipped_links > 0 {
            return Err(fail(format!(
                "the workspace holds {} link(s), which are not followed",
                walked.skipped_links
            )));
        }
        if walked.unaddressable > 0 {
            return Err(fail(format!(
                "the workspace holds {} name(s) that cannot be addressed",
                walked.unaddressable
            )));
        }
        if walked.truncated {
            return Err(fail("the workspace is too large to list".to_string()));
        }
        Ok(Some(
            walked
                .files
                .into_iter()
                .map(|f| f.path.as_str().to_string())
                .collect(),
        ))
    }
}
