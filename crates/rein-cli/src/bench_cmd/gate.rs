//! `rein bench suites/gate --models M`: the write gate on labelled request/proposal pairs
//! (suites/gate/pairs.toml), reporting false holds and false allows at the write floor per model.

use std::path::Path;

use anyhow::Context;
use rein_bench::suite::Split;
use rein_chat::review::{review_write_with_deadline, Proposal};
use rein_protocol::cowork::{DECISION_TIMEOUT_MS, WRITE_FLOOR_BPS};
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
    /// `dev` (the prompt is tuned on these) or `heldout` (measured, never tuned on).
    split: Split,
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
    if args.context.is_some() {
        return Some(Err(super::context_not_here("a gate suite")));
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
                "{} is not a list of [[pair]] entries (id, aligned, request, path, excerpt, diff, \
                 split = \"dev\" or \"heldout\")",
                path.display()
            )
        })?;
        for spec in &args.models {
            let mut model = crate::open::open_model(spec, args.allow_remote)?;
            let (mut false_holds, mut false_allows, mut aligned, mut misaligned) = (0, 0, 0, 0);
            let mut latencies: Vec<f64> = Vec::new();
            let mut over_deadline = 0usize;
            let mut rows = Vec::new();
            let chosen = pairs
                .pair
                .iter()
                .filter(|p| args.split == "all" || p.split.as_str() == args.split);
            for pair in chosen {
                let proposal = Proposal {
                    path: pair.path.clone(),
                    diff: pair.diff.clone(),
                    excerpt: pair.excerpt.clone(),
                };
                let mut watched = super::recording::Recording::new(model.as_mut());
                let review = review_write_with_deadline(
                    Some(&mut watched),
                    &pair.request,
                    &proposal,
                    super::router::BENCH_DEADLINE,
                );
                over_deadline += usize::from(review.latency_ms > DECISION_TIMEOUT_MS as f64);
                let mass = watched.last_choice.as_ref().and_then(|r| r.label_mass);
                latencies.push(review.latency_ms);
                if pair.aligned {
                    aligned += 1;
                    false_holds += usize::from(!review.allowed);
                } else {
                    misaligned += 1;
                    false_allows += usize::from(review.allowed);
                }
                if !json {
                    println!(
                        "  {:<38} aligned {:<5} {} ({} bps, {:?}, label mass {}, {:.0} ms)",
                        escape_line(&pair.id),
                        pair.aligned,
                        if review.allowed { "allowed" } else { "held" },
                        review.confidence_bps,
                        review.source,
                        mass.map(|m| format!("{m:.2}"))
                            .unwrap_or_else(|| "-".into()),
                        review.latency_ms
                    );
                }
                rows.push(serde_json::json!({
                    "id": pair.id, "aligned": pair.aligned, "split": pair.split, "review": review, "label_mass": mass,
                }));
            }
            latencies.sort_by(f64::total_cmp);
            let median_ms = latencies.get(latencies.len() / 2).copied();
            if !json {
                println!(
                    "suite {} model {} split {}: false holds {false_holds}/{aligned}, false allows \
                     {false_allows}/{misaligned} at {WRITE_FLOOR_BPS} bps; median review {}; \
                     {over_deadline} reviews over chat's {DECISION_TIMEOUT_MS} ms deadline (the \
                     bench waits for them; chat would hold)",
                    escape_line(dir),
                    escape_line(spec),
                    args.split,
                    median_ms
                        .map(|m| format!("{m:.0} ms"))
                        .unwrap_or_else(|| "-".into())
                );
            }
            report.push(serde_json::json!({
                "suite": dir, "model": spec, "split": args.split, "floor_bps": WRITE_FLOOR_BPS,
                "false_holds": false_holds, "aligned": aligned,
                "false_allows": false_allows, "misaligned": misaligned,
                "median_review_ms": median_ms, "over_chat_deadline": over_deadline,
                "pairs": rows,
            }));
        }
    }
    if json {
        println!("{}", serde_json::json!({ "gate": report }));
    }
    Ok(0)
}
