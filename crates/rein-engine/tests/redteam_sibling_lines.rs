#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Outline;
use support::Harness;

fn desk_tasks() -> Vec<String> {
    let dir = support::missions_dir().join("../suites/desk");
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            e.path()
                .join("mission.json")
                .exists()
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect();
    v.sort();
    v
}

#[test]
fn explore() {
    for t in desk_tasks() {
        let h = Harness::desk_suite(&t);
        let Some(o) = Outline::of(&h.contract) else {
            continue;
        };
        let off = o.clone().with_line_fields(&h.contract, false).lines;
        let on = o.clone().with_line_fields(&h.contract, true).lines;
        let offl: Vec<_> = off
            .iter()
            .map(|f| (f.heading.clone(), f.template.clone()))
            .collect();
        let onl: Vec<_> = on
            .iter()
            .map(|f| (f.heading.clone(), f.template.clone()))
            .collect();
        println!(
            "{t}: headings {:?}\n  off {offl:?}\n  on  {onl:?}",
            o.headings
        );
    }
}
