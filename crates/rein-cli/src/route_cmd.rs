//! `rein route TEXT`: the router's intent, source and confidence for one message.

use std::time::Duration;

use clap::Args;
use rein_models::Catalog;
use rein_protocol::cowork::DECISION_TIMEOUT_MS;

use crate::open::open_model;

#[derive(Debug, Args)]
pub struct RouteArgs {
    /// The decision model: a catalog name, `openai:URL#MODEL` or `scripted:FILE` (default: the
    /// catalog's `decision` model).
    #[arg(long)]
    model: Option<String>,
    /// How long to wait for the decision model, in milliseconds, before the keyword route
    /// stands (default: chat's deadline, 12000). A cold `rein route` loads the model and reads
    /// the whole prompt within it, which can take longer on a slow CPU than chat's warm worker.
    #[arg(long, value_name = "MS", default_value_t = DECISION_TIMEOUT_MS,
          value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    deadline_ms: u64,
    /// The message to route.
    text: String,
}

/// What `--model` means for the gates and the router when it is not given.
pub fn default_decision() -> anyhow::Result<String> {
    let catalog = Catalog::builtin()?;
    catalog
        .default_for("decision")
        .map(|e| e.name.clone())
        .ok_or_else(|| anyhow::anyhow!("the catalog names no default decision model; pass --model"))
}

pub fn run(args: RouteArgs, json: bool) -> anyhow::Result<i32> {
    if args.text.trim().is_empty() {
        anyhow::bail!("the message is empty; give the text to route as the argument");
    }
    let spec = match args.model {
        Some(m) => m,
        None => default_decision()?,
    };
    let deadline = Duration::from_millis(args.deadline_ms);
    // A model that cannot be opened is an outage: the keyword route stands and says why.
    let route = match open_model(&spec, false) {
        Ok(mut model) => {
            rein_chat::route::route_with_deadline(&args.text, Some(model.as_mut()), deadline)
        }
        Err(error) => {
            let mut route = rein_chat::route(&args.text, None);
            if route.note.is_some() {
                route.note = Some(format!(
                    "the decision model {spec} could not be opened ({error:#}); the keyword \
                     route stands"
                ));
            }
            route
        }
    };
    if json {
        println!("{}", serde_json::to_string(&route)?);
    } else {
        println!(
            "{} ({}, {} bps; keywords said {}) in {:.0} ms",
            route.intent,
            route.source.as_str(),
            route.confidence_bps,
            route.keyword_intent,
            route.latency_ms
        );
        if let Some(note) = &route.note {
            println!("note: {note}");
        }
    }
    Ok(0)
}
