//! The judge's and the finish rules' view of a real workspace, read through the confined
//! resolver: a check can no more follow a link out of the folder than a tool can.

use rein_workspace::{ConfinementError, Workspace, WorkspaceError};

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

impl World for WorkspaceWorld<'_> {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, WorldError> {
        let invalid = |reason: String| WorldError::InvalidPath {
            path: path.to_string(),
            reason,
        };
        let rel = self
            .workspace
            .resolve(path)
            .map_err(|e: ConfinementError| invalid(e.to_string()))?;
        match self.workspace.read_bytes(&rel) {
            Ok(b) => Ok(b),
            Err(WorkspaceError::NotFound { .. }) => Ok(None),
            Err(e @ WorkspaceError::Confinement(_)) => Err(invalid(e.to_string())),
            Err(e) => Err(WorldError::Io {
                path: path.to_string(),
                source: std::io::Error::other(e.to_string()),
            }),
        }
    }

    /// A desk workspace has no sandbox variables.
    fn variable(&self, _name: &str) -> Option<serde_json::Value> {
        None
    }
}
