//! `rein bench check-suite` on a router suite: validates its labelled requests and prints the
//! counts per intent and split. Scoring waits for `rein route`.

use std::path::Path;

use rein_bench::router::{suite_kind, RouterCounts, RouterSuite, KIND};
use rein_protocol::display::escape_line;

/// Loads and prints a router suite; `None` when the folder is a task suite.
pub fn check(dir: &str, json: bool) -> anyhow::Result<Option<RouterCounts>> {
    if suite_kind(Path::new(dir))? != KIND {
        return Ok(None);
    }
    let suite = RouterSuite::load(dir)?;
    let counts = suite.counts();
    if !json {
        print_counts(&counts);
    }
    Ok(Some(counts))
}

fn print_counts(c: &RouterCounts) {
    println!("suite {} (router)", escape_line(&c.suite));
    println!(
        "  {:<10} {:>5} {:>5} {:>8}",
        "intent", "total", "dev", "heldout"
    );
    for (intent, s) in &c.per_intent {
        println!(
            "  {:<10} {:>5} {:>5} {:>8}",
            escape_line(intent),
            s.dev + s.heldout,
            s.dev,
            s.heldout
        );
    }
    let share = if c.requests == 0 {
        0.0
    } else {
        100.0 * c.heldout as f64 / c.requests as f64
    };
    println!(
        "  {} requests; dev {}; heldout {} ({share:.0} %); valid (scored once `rein route` exists)",
        c.requests, c.dev, c.heldout
    );
}
