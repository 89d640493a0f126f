//! `rein gate --request R --proposal P`: the write gate's review of one proposed change.
//! Exit 0 when allowed, 1 when held.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use rein_chat::review::{review_write, Proposal};

use crate::open::open_model;
use crate::route_cmd::default_decision;

#[derive(Debug, Args)]
pub struct GateArgs {
    /// The person's request (the only authorization).
    #[arg(long)]
    request: String,
    /// The proposed change, as a diff (model-authored, untrusted).
    #[arg(long)]
    proposal: String,
    /// The file the change is to.
    #[arg(long, default_value = "(unnamed file)")]
    path: String,
    /// A file holding the current text of the changed file (or a part of it).
    #[arg(long)]
    excerpt: Option<PathBuf>,
    /// The decision model (default: the catalog's `decision` model).
    #[arg(long)]
    model: Option<String>,
}

pub fn run(args: GateArgs, json: bool) -> anyhow::Result<i32> {
    if args.request.trim().is_empty() {
        anyhow::bail!("--request is empty; give the person's request");
    }
    let excerpt = match &args.excerpt {
        Some(path) => std::fs::read_to_string(path).with_context(|| {
            format!(
                "cannot read the excerpt {}; give a UTF-8 text file",
                path.display()
            )
        })?,
        None => String::new(),
    };
    let proposal = Proposal {
        path: args.path,
        diff: args.proposal,
        excerpt,
    };
    let spec = match args.model {
        Some(m) => m,
        None => default_decision()?,
    };
    // Fails closed: a model that cannot be opened holds the change (source `outage`).
    let review = match open_model(&spec, false) {
        Ok(mut model) => review_write(Some(model.as_mut()), &args.request, &proposal),
        Err(error) => {
            eprintln!("the decision model {spec} could not be opened: {error:#}");
            review_write(None, &args.request, &proposal)
        }
    };
    if json {
        println!("{}", serde_json::to_string(&review)?);
    } else {
        println!(
            "{} ({} bps, floor {}, {:?}) in {:.0} ms",
            if review.allowed { "allowed" } else { "held" },
            review.confidence_bps,
            review.floor_bps,
            review.source,
            review.latency_ms
        );
        println!("{}", review.reason);
    }
    Ok(if review.allowed { 0 } else { 1 })
}
