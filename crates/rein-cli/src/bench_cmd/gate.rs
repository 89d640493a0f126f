//! `rein bench suites/gate --models M`: the write gate on labelled request/proposal pairs
//! (suites/gate/pairs.toml), reporting false holds and false allows at the write floor per model.

use std::path::Path;

use anyhow::Context;
use rein_chat::review::{review_write, Proposal};
use rein_protocol::cowork::WRITE_FLOOR_BPS;
use rein_protocol::display::escape_line;
use serde::Deserialize;

/// The file that makes a folder a gate calibration suite.
pub const PAIRS_FILE: &str = "pairs.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Pairs {
    pair: Vec<Pair>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Pair {
    id: String,
    aligned: bool,
    request: String,
    path: String,
    #[serde(default)]
    excerpt: String,
    diff: String,
}

/// `None` unless every suite given is a gate suite.
pub fn maybe_run(args: &super::RunBenchArgs, json: bool) -> Option<anyhow::Result<i32>> {
    if args.suites.is_empty()
        || !args
            .suites
            .iter()
            .all(|d| Path::new(d).join(PAIRS_FILE).is_file())
    {
        return None;
    }
    Some(run(args, json))
}

fn run(args: &super::RunBenchArgs, json: bool) -> anyhow::Result<i32> {
    let mut report = Vec::new();
    for dir in &args.suites {
        let path = Path::new(dir).join(PAIRS_FILE);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let pairs: Pairs = toml::from_str(&text).with_context(|| {
            format!(
                "{} is not a list of [[pair]] entries (id, aligned, request, path, excerpt, diff)",
                path.display()
            )
        })?;
        for spec in &args.models {
            let mut model = crate::open::open_model(spec, args.allow_remote)?;
            let (mut false_holds, mut false_allows, mut aligned, mut misaligned) = (0, 0, 0, 0);
            let mut rows = Vec::new();
            for pair in &pairs.pair {
                let proposal = Proposal {
                    path: pair.path.clone(),
                    diff: pair.diff.clone(),
                    excerpt: pair.excerpt.clone(),
                };
                let review = review_write(Some(model.as_mut()), &pair.request, &proposal);
                if pair.aligned {
                    aligned += 1;
                    false_holds += usize::from(!review.allowed);
                } else {
                    misaligned += 1;
                    false_allows += usize::from(review.allowed);
                }
                if !json {
                    println!(
                        "  {:<34} aligned {:<5} {} ({} bps, {:?}, {:.0} ms)",
                        escape_line(&pair.id),
                        pair.aligned,
                        if review.allowed { "allowed" } else { "held" },
                        review.confidence_bps,
                        review.source,
                        review.latency_ms
                    );
                }
                rows.push(
                    serde_json::json!({ "id": pair.id, "aligned": pair.aligned, "review": review }),
                );
            }
            if !json {
                println!(
                    "suite {} model {}: false holds {false_holds}/{aligned}, false allows \
                     {false_allows}/{misaligned} at {WRITE_FLOOR_BPS} bps",
                    escape_line(dir),
                    escape_line(spec)
                );
            }
            report.push(serde_json::json!({
                "suite": dir, "model": spec, "floor_bps": WRITE_FLOOR_BPS,
                "false_holds": false_holds, "aligned": aligned,
                "false_allows": false_allows, "misaligned": misaligned, "pairs": rows,
            }));
        }
    }
    if json {
        println!("{}", serde_json::json!({ "gate": report }));
    }
    Ok(0)
}
