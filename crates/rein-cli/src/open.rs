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

/// Runtime knobs of a model, shared by the commands that open one.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ModelKnobs {
    /// Threads of an embedded model's worker (default: the physical cores this process may use).
    #[arg(long)]
    pub threads: Option<u32>,
    /// Context window of an embedded model, in tokens (default: 6,144, or the model's own
    /// window if smaller).
    #[arg(long)]
    pub context: Option<u32>,
    /// Sampling temperature (default: the command's profile; 0 is greedy).
    #[arg(long)]
    pub temperature: Option<f32>,
    /// Render chat prompts with the GGUF's own template (set from lever `gguf-template`).
    #[arg(skip)]
    pub gguf_template: bool,
    /// Keep no prompt prefix on disk and load none (`rein perf`: its cold figures must be
    /// cold).
    #[arg(skip)]
    pub no_prefix_store: bool,
}

/// Most worker threads accepted.
pub const MAX_THREADS: u32 = 256;
pub use rein_models::embedded::MIN_CONTEXT_TOKENS;
/// Highest temperature accepted.
pub const MAX_TEMPERATURE: f32 = 2.0;

impl ModelKnobs {
    /// Refuses a temperature outside 0..=MAX_TEMPERATURE (NaN included).
    fn check_temperature(&self) -> anyhow::Result<()> {
        match self.temperature {
            Some(t) if !(0.0..=MAX_TEMPERATURE).contains(&t) => {
                anyhow::bail!("--temperature must be between 0 and {MAX_TEMPERATURE}, not {t}")
            }
            _ => Ok(()),
        }
    }
}

pub fn open_model(spec: &str, allow_remote: bool) -> anyhow::Result<Box<dyn Model>> {
    open_model_with(spec, allow_remote, &ModelKnobs::default())
}

/// The actor of an agent run under `levers`: rendered as lever `gguf-template` says, so what
/// the journal records as the run's levers is how its prompts were rendered.
pub fn open_actor(
    spec: &str,
    allow_remote: bool,
    levers: &rein_engine::agent::Levers,
) -> anyhow::Result<Box<dyn Model>> {
    open_bench_actor(spec, allow_remote, levers, 1, None)
}

/// [`open_actor`] for one of `workers` bench workers on this machine: an embedded model gets
/// its share of the physical cores (at least one thread), so two workers on two cores run two
/// threads, not four that wait on each other. One worker keeps the default threads.
pub fn open_bench_actor(
    spec: &str,
    allow_remote: bool,
    levers: &rein_engine::agent::Levers,
    workers: usize,
    context: Option<u32>,
) -> anyhow::Result<Box<dyn Model>> {
    let embedded = ModelSpec::parse(spec)?.is_embedded();
    let knobs = ModelKnobs {
        gguf_template: levers.gguf_template,
        context,
        threads: worker_share(rein_models::embedded::default_threads(), workers)
            .filter(|_| embedded),
        ..ModelKnobs::default()
    };
    open_model_with(spec, allow_remote, &knobs)
}

/// The threads each of `workers` workers gets out of `cores`: `None` (the default) for one
/// worker, else an equal share, at least one.
fn worker_share(cores: u32, workers: usize) -> Option<u32> {
    let workers = u32::try_from(workers).unwrap_or(u32::MAX);
    (workers > 1).then(|| (cores / workers).max(1))
}

/// [`open_model`] with runtime knobs; a knob that does not apply to the kind of model named
/// is refused rather than ignored.
pub fn open_model_with(
    spec: &str,
    allow_remote: bool,
    knobs: &ModelKnobs,
) -> anyhow::Result<Box<dyn Model>> {
    knobs.check_temperature()?;
    let parsed = ModelSpec::parse(spec)?;
    if !parsed.is_embedded() && (knobs.threads.is_some() || knobs.context.is_some()) {
        anyhow::bail!(
            "--threads and --context apply to an embedded model (a catalog name or gguf:PATH); \
             {spec} runs elsewhere: set them on its server"
        );
    }
    match parsed {
        ModelSpec::Catalog(name) => Ok(Box::new(start_embedded_with(&name, knobs)?)),
        ModelSpec::Gguf(path) => Ok(Box::new(start_local(
            &format!("gguf:{}", path.display()),
            &path,
            None,
            knobs,
        )?)),
        ModelSpec::OpenAi { url, model } => {
            let allow_remote = allow_remote || rein_models::openai::allow_remote_from_env();
            let model = rein_models::OpenAiModel::new(&url, &model, allow_remote)?;
            // Said before any workspace content is sent; the run journals it as a model notice.
            if let Some(warning) = rein_models::openai::remote_warning(model.endpoint()) {
                eprintln!("rein: warning: {warning}");
            }
            Ok(Box::new(model))
        }
        ModelSpec::Scripted(path) => Ok(Box::new(rein_models::ScriptedModel::load(&path)?)),
    }
}

pub fn start_embedded(name: &str) -> anyhow::Result<EmbeddedModel> {
    start_embedded_with(name, &ModelKnobs::default())
}

/// Refuses a thread count or context window out of range; `trained` is the model's own
/// window (0 when unknown).
fn check_knobs(name: &str, trained: u32, knobs: &ModelKnobs) -> anyhow::Result<()> {
    if let Some(threads) = knobs.threads {
        if threads == 0 || threads > MAX_THREADS {
            anyhow::bail!("--threads must be between 1 and {MAX_THREADS}, not {threads}");
        }
    }
    if let Some(context) = knobs.context {
        let most = if trained > 0 {
            trained
        } else {
            rein_models::embedded::DEFAULT_CONTEXT_TOKENS
        };
        if !(MIN_CONTEXT_TOKENS..=most).contains(&context) {
            anyhow::bail!(
                "--context must be between {MIN_CONTEXT_TOKENS} and {most} tokens for {name} \
                 (its trained window), not {context}"
            );
        }
    }
    Ok(())
}

/// Checks `--context` for a model before anything loads: a bench checks every model's window
/// before its first run rather than failing a worker mid-way.
pub fn check_context(spec: &str, context: u32) -> anyhow::Result<()> {
    let knobs = ModelKnobs {
        context: Some(context),
        ..ModelKnobs::default()
    };
    match ModelSpec::parse(spec)? {
        ModelSpec::Catalog(name) => {
            let shipped = Catalog::builtin()?
                .models
                .iter()
                .find(|m| m.name == name)
                .map(|m| m.context_tokens);
            let trained = match shipped {
                Some(t) => Some(t),
                None => rein_models::UserCatalog::load(&DataDir::from_env()?)?
                    .get(&name)
                    .map(|m| m.context_tokens),
            };
            // An unknown name is refused when it is opened, with the names that are known.
            match trained {
                Some(t) => check_knobs(&name, t, &knobs),
                None => Ok(()),
            }
        }
        ModelSpec::Gguf(path) => {
            check_knobs(spec, rein_models::local::trained_context(&path)?, &knobs)
        }
        ModelSpec::OpenAi { .. } | ModelSpec::Scripted(_) => anyhow::bail!(
            "--context applies to embedded models (catalog names or gguf:PATH); {spec} is not \
             one: set its window on its server, or bench it without --context"
        ),
    }
}

pub fn start_embedded_with(name: &str, knobs: &ModelKnobs) -> anyhow::Result<EmbeddedModel> {
    let catalog = Catalog::builtin()?;
    let dir = DataDir::from_env()?;
    let Some(entry) = catalog.models.iter().find(|m| m.name == name) else {
        // Not shipped: a model the user added, or an unknown name (listing both catalogs).
        let user = rein_models::UserCatalog::load(&dir)?;
        let Some(model) = user.get(name) else {
            let mut names = catalog.names();
            names.extend(user.models.iter().map(|m| m.name.as_str()));
            anyhow::bail!(
                "unknown model {name}; known models: {}. Add your own GGUF with `rein models \
                 add NAME PATH` or run it with --model gguf:PATH",
                names.join(", ")
            );
        };
        return start_local(name, &model.path.clone(), Some(model), knobs);
    };
    // Knobs are checked before anything is loaded, so a typo costs nothing.
    check_knobs(name, entry.context_tokens, knobs)?;
    let exe =
        std::env::current_exe().context("cannot find the rein executable to start a worker")?;
    let mut launch = launch_for(entry, &dir, exe)?;
    apply_knobs(&mut launch, knobs);
    Ok(EmbeddedModel::start(launch)?)
}

/// Starts a worker on a local GGUF: `gguf:PATH`, or a model of the user's catalog (`pinned`).
fn start_local(
    spec: &str,
    path: &std::path::Path,
    pinned: Option<&rein_models::UserModel>,
    knobs: &ModelKnobs,
) -> anyhow::Result<EmbeddedModel> {
    let trained = match pinned {
        Some(model) => model.context_tokens,
        None => rein_models::local::trained_context(path)?,
    };
    check_knobs(spec, trained, knobs)?;
    let dir = DataDir::from_env()?;
    let exe =
        std::env::current_exe().context("cannot find the rein executable to start a worker")?;
    let mut launch = rein_models::local::launch_for_local(spec, path, pinned, &dir, exe)?;
    apply_knobs(&mut launch, knobs);
    Ok(EmbeddedModel::start(launch)?)
}

fn apply_knobs(launch: &mut rein_models::embedded::WorkerLaunch, knobs: &ModelKnobs) {
    if let Some(threads) = knobs.threads {
        launch.threads = threads;
    }
    if let Some(context) = knobs.context {
        launch.context_tokens = context;
    }
    launch.gguf_template = knobs.gguf_template;
    if knobs.no_prefix_store {
        launch.prefix_store = None;
    }
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
    use super::{check_apart, worker_share};

    #[test]
    fn bench_workers_share_the_cores() {
        assert_eq!(worker_share(2, 1), None);
        assert_eq!(worker_share(2, 0), None);
        assert_eq!(worker_share(2, 2), Some(1));
        assert_eq!(worker_share(8, 3), Some(2));
        assert_eq!(worker_share(2, 5), Some(1));
        assert_eq!(worker_share(4, usize::MAX), Some(1));
    }

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
