//! Turning `--model` into a running model.

use anyhow::Context;
use rein_models::embedded::{launch_for, EmbeddedModel};
use rein_models::{Catalog, DataDir, Model, ModelSpec};

/// What `--model` means when it is not given: the default actor of the catalog.
pub fn default_actor() -> anyhow::Result<String> {
    let catalog = Catalog::builtin()?;
    catalog
        .default_for("actor")
        .map(|e| e.name.clone())
        .context("the catalog names no default actor")
}

pub fn open_model(spec: &str, allow_remote: bool) -> anyhow::Result<Box<dyn Model>> {
    match ModelSpec::parse(spec)? {
        ModelSpec::Catalog(name) => Ok(Box::new(start_embedded(&name)?)),
        ModelSpec::OpenAi { url, model } => {
            let allow_remote = allow_remote || rein_models::openai::allow_remote_from_env();
            Ok(Box::new(rein_models::OpenAiModel::new(
                &url,
                &model,
                allow_remote,
            )?))
        }
        ModelSpec::Scripted(path) => Ok(Box::new(rein_models::ScriptedModel::load(&path)?)),
    }
}

pub fn start_embedded(name: &str) -> anyhow::Result<EmbeddedModel> {
    let catalog = Catalog::builtin()?;
    let entry = catalog.get(name)?;
    let dir = DataDir::from_env()?;
    let exe =
        std::env::current_exe().context("cannot find the rein executable to start a worker")?;
    let launch = launch_for(entry, &dir, exe)?;
    Ok(EmbeddedModel::start(launch)?)
}

/// Opens the folder a command will act on, after [`refuse_data_dir_overlap`].
pub fn open_workspace(dir: &std::path::Path) -> anyhow::Result<rein_workspace::Workspace> {
    refuse_data_dir_overlap(dir)?;
    rein_workspace::Workspace::open(dir).map_err(anyhow::Error::from)
}

/// Refuses a workspace that contains Rein's data folder (journal, models) or lies inside it:
/// tools could then overwrite the journal, and with it every saved pre-image that undo needs.
/// Both paths are compared canonicalized (links resolved; the parts of a folder that does not
/// exist yet taken as written). Call it before anything is written to the workspace.
pub fn refuse_data_dir_overlap(dir: &std::path::Path) -> anyhow::Result<()> {
    let data = DataDir::from_env()?;
    check_apart(dir, data.root())
}

fn check_apart(workspace: &std::path::Path, data: &std::path::Path) -> anyhow::Result<()> {
    let ws = canonical_as_far_as_exists(workspace)?;
    let home = canonical_as_far_as_exists(data)?;
    let advice = "tools could overwrite the journal and lose every saved pre-image; choose \
                  another folder, or move the data folder by setting REIN_HOME";
    if home.starts_with(&ws) {
        anyhow::bail!(
            "the workspace {} contains Rein's data folder {}: {advice}",
            ws.display(),
            home.display(),
        );
    }
    if ws.starts_with(&home) {
        anyhow::bail!(
            "the workspace {} lies inside Rein's data folder {}: {advice}",
            ws.display(),
            home.display(),
        );
    }
    Ok(())
}

/// `path` made absolute and canonicalized as far as it exists: links in existing parts are
/// resolved, and the parts that do not exist yet (a folder a command will create) are added
/// as written, `.` and `..` among them applied lexically.
fn canonical_as_far_as_exists(path: &std::path::Path) -> anyhow::Result<std::path::PathBuf> {
    use std::path::Component;
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .context("cannot read the current folder")?
            .join(path)
    };
    let mut resolved = std::path::PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => resolved.push(component),
            Component::CurDir => {}
            // What is resolved so far has no links left, so `..` is its parent.
            Component::ParentDir => {
                resolved.pop();
            }
            Component::Normal(name) => {
                let next = resolved.join(name);
                resolved = std::fs::canonicalize(&next).unwrap_or(next);
            }
        }
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::check_apart;

    #[test]
    fn a_workspace_and_the_data_folder_must_not_nest() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let inside = ws.join(".rein");
        let err = check_apart(&ws, &inside).unwrap_err().to_string();
        assert!(err.contains("contains Rein's data folder"), "{err}");
        let err = check_apart(&inside.join("x"), &inside)
            .unwrap_err()
            .to_string();
        assert!(err.contains("lies inside Rein's data folder"), "{err}");
        let err = check_apart(&ws, &ws).unwrap_err().to_string();
        assert!(err.contains("contains"), "{err}");
        // Through a link, and through `..`.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&ws, &link).unwrap();
        assert!(check_apart(&link, &ws.join("home")).is_err());
        assert!(check_apart(&ws.join("sub/.."), &ws.join("home")).is_err());
        // Apart, or merely sharing a name prefix: fine.
        check_apart(&ws, &dir.path().join("home")).unwrap();
        check_apart(&ws, &dir.path().join("ws-home")).unwrap();
    }
}
