//! `rein check-mission MISSION`: the judge on trial. Runs the mission's checks on its gold
//! deliverable (must pass) and its near misses (must fail, on the checks each case names), and
//! prints the counts. Exit 0 when the judge is right on every case, 1 when it is not.

use clap::Args;
use rein_engine::cases::{check_mission, CaseKind, CaseReport};
use rein_engine::mission::Mission;

use crate::run_cmd::resolve_mission;

#[derive(Debug, Args)]
pub struct CheckMissionArgs {
    /// Mission files, mission folders, or names of missions under missions/.
    #[arg(required = true)]
    missions: Vec<String>,
}

pub fn run(args: CheckMissionArgs, json: bool) -> anyhow::Result<i32> {
    let mut reports = Vec::new();
    for m in &args.missions {
        let contract = Mission::load(resolve_mission(m)?)?;
        for w in &contract.warnings {
            eprintln!("rein: warning: {w}");
        }
        reports.push(check_mission(&contract)?);
    }
    let ok = reports.iter().all(CaseReport::ok);
    if json {
        let doc = if reports.len() == 1 {
            serde_json::to_value(&reports[0])?
        } else {
            serde_json::json!({ "missions": reports, "ok": ok })
        };
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        for r in &reports {
            print_report(r);
        }
    }
    Ok(if ok { 0 } else { 1 })
}

fn print_report(r: &CaseReport) {
    println!("{} (contract {})", r.mission, &r.contract_sha256[..12]);
    for c in &r.cases {
        let mark = if c.as_expected { "ok  " } else { "FAIL" };
        let kind = match c.kind {
            CaseKind::Gold => "gold",
            CaseKind::GoldVariant => "gold variant",
            CaseKind::NearMiss => "near miss",
        };
        let verdict = if c.passed { "pass" } else { "fail" };
        let caught = if c.failed_checks.is_empty() {
            String::new()
        } else {
            format!(" [failed: {}]", c.failed_checks.join(", "))
        };
        println!(
            "  {mark} {kind:<12} {:<40} judged {verdict}{caught}",
            c.name
        );
        if !c.not_caught_by.is_empty() {
            println!(
                "       expected these checks to fail too: {}",
                c.not_caught_by.join(", ")
            );
        }
        if !c.as_expected && c.kind != CaseKind::NearMiss {
            for check in c.verdict.checks.iter().filter(|k| !k.passed && !k.advisory) {
                println!("       {}: {}", check.id, check.facts.join("; "));
            }
        }
    }
    if !r.left_to_a_person.is_empty() {
        println!(
            "  not judged here: {} (a decision not yet qualified: a person reviews it; `rein qualify` measures it)",
            r.left_to_a_person.join(", ")
        );
    }
    println!(
        "  gold {}/{} passed; near misses {}/{} failed; false passes {}; false fails {}; wrong catcher {}: {}",
        r.gold_passed,
        r.gold,
        r.near_misses_failed,
        r.near_misses,
        r.false_passes,
        r.false_fails,
        r.wrong_catcher,
        if r.ok() { "the judge is right on every case" } else { "THE JUDGE IS WRONG" }
    );
}
