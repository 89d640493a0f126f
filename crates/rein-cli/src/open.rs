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
