//! The semantic checks (grounded, decision) and the human_review_only refusal.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::Path;

use rein_engine::checks::{
    evaluate, evaluate_automatic, Decider, JudgeError, MemWorld, SEMANTIC_FLOOR_BPS,
};
use rein_engine::mission::{FrozenContract, Mission};
use serde_json::{json, Value};
use tempfile::TempDir;

const INVOICE: &str = "Invoice number: INV-7\nVendor: Northwind Paper Co.\nTotal due: 300.50\n";
const OTHER: &str = "Vendor: Bayside Cleaning Ltd\n";

fn contract(mode: &str, checks: Value) -> (TempDir, FrozenContract) {
    let dir = TempDir::new().unwrap();
    for (p, c) in [("docs/a.txt", INVOICE), ("docs/b.txt", OTHER)] {
        let f = dir.path().join("fixtures").join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, c).unwrap();
    }
    let m = json!({
        "id": "sem", "mode": mode, "prompt": "p",
        "inputs": ["docs/a.txt", "docs/b.txt"],
        "tools": ["read_file", "create_file", "finish"],
        "required_artifact": "out/f.json",
        "checks": checks
    });
    let path = dir.path().join("mission.json");
    std::fs::write(&path, m.to_string()).unwrap();
    let c = Mission::load(Path::new(&path)).unwrap();
    (dir, c)
}

fn world(artifact: &str) -> MemWorld {
    MemWorld::new()
        .with_file("docs/a.txt", INVOICE)
        .with_file("docs/b.txt", OTHER)
        .with_file("out/f.json", artifact)
}

/// A decider that answers fixed probabilities and counts its calls.
struct Fixed {
    reply: Result<Vec<(String, f64)>, String>,
    calls: usize,
    last_prompt: String,
}

impl Fixed {
    fn new(reply: Result<Vec<(&str, f64)>, &str>) -> Self {
        Self {
            reply: reply
                .map(|v| v.into_iter().map(|(l, p)| (l.to_string(), p)).collect())
                .map_err(str::to_string),
            calls: 0,
            last_prompt: String::new(),
        }
    }
}

impl Decider for Fixed {
    fn choose(&mut self, prompt: &str, _labels: &[String]) -> Result<Vec<(String, f64)>, String> {
        self.calls += 1;
        self.last_prompt = prompt.to_string();
        self.reply.clone()
    }
}

fn grounded(claim: Value, sources: Value) -> Value {
    json!([{"id": "g", "kind": "grounded", "path": "out/f.json", "claim": claim, "sources": sources}])
}

#[test]
fn grounded_passes_on_literal_occurrence() {
    let (_d, c) = contract(
        "automatic",
        grounded(json!({"pointer": "/vendor"}), json!([])),
    );
    let v = evaluate(
        &c,
        &world(r#"{"vendor": "Northwind Paper Co."}"#),
        &[],
        None,
    );
    assert!(v.passed, "{v:?}");
    assert!(
        v.checks[0].facts[0].contains("found in docs/a.txt"),
        "{v:?}"
    );
}

#[test]
fn grounded_fails_without_consulting_any_model() {
    let (_d, c) = contract(
        "automatic",
        grounded(json!({"pointer": "/vendor"}), json!([])),
    );
    let mut decider = Fixed::new(Ok(vec![("yes", 1.0)]));
    let v = evaluate(
        &c,
        &world(r#"{"vendor": "Northwind Paper Company"}"#),
        &[],
        Some(&mut decider),
    );
    assert!(!v.passed);
    assert_eq!(decider.calls, 0);
    assert!(v.checks[0].facts[0].contains("occurs in none of"), "{v:?}");
}

#[test]
fn grounded_respects_sources_containers_and_regex() {
    // Present in b.txt but the check only allows a.txt.
    let (_d, c) = contract(
        "automatic",
        grounded(json!({"pointer": "/vendor"}), json!(["docs/a.txt"])),
    );
    let v = evaluate(
        &c,
        &world(r#"{"vendor": "Bayside Cleaning Ltd"}"#),
        &[],
        None,
    );
    assert!(!v.passed);
    // A chosen source may be the answer (the one log with the order): the facts, which a retry
    // shows the model, do not name it.
    assert!(
        v.checks[0].facts[0].contains("occurs in none of: the input the task is about"),
        "{v:?}"
    );
    assert!(!format!("{v:?}").contains("a.txt"), "{v:?}");

    // Every string leaf of a container must be grounded; numbers are left to numeric checks.
    let (_d, c) = contract(
        "automatic",
        grounded(json!({"pointer": "/items"}), json!([])),
    );
    let ok = r#"{"items": [{"n": "INV-7", "v": "Bayside Cleaning Ltd", "t": 300.5}]}"#;
    assert!(evaluate(&c, &world(ok), &[], None).passed);
    let bad = r#"{"items": [{"n": "INV-7", "v": "Made Up Inc"}]}"#;
    let v = evaluate(&c, &world(bad), &[], None);
    assert!(!v.passed);
    assert_eq!(v.checks[0].facts.len(), 2, "{v:?}");

    // A bare number or an empty claim is never grounded.
    let (_d, c) = contract("automatic", grounded(json!({"pointer": "/t"}), json!([])));
    assert!(!evaluate(&c, &world(r#"{"t": 300.5}"#), &[], None).passed);
    let (_d, c) = contract("automatic", grounded(json!({"pointer": "/v"}), json!([])));
    assert!(!evaluate(&c, &world(r#"{"v": "  "}"#), &[], None).passed);

    let (_d, c) = contract(
        "automatic",
        grounded(json!({"regex": "Vendor: (.+)"}), json!([])),
    );
    assert!(evaluate(&c, &world("Vendor: Northwind Paper Co.\n"), &[], None).passed);
    assert!(!evaluate(&c, &world("Vendor: Nobody\n"), &[], None).passed);
}

#[test]
fn grounded_refuses_a_changed_input() {
    let (_d, c) = contract(
        "automatic",
        grounded(json!({"pointer": "/vendor"}), json!([])),
    );
    let w = world(r#"{"vendor": "Made Up Inc"}"#).with_file("docs/a.txt", "Vendor: Made Up Inc");
    let v = evaluate(&c, &w, &[], None);
    assert!(!v.passed);
    assert!(
        v.checks[0].facts[0].contains("changed since it was frozen"),
        "{v:?}"
    );
}

/// A qualified decision check (it decides the verdict of an automatic mission).
fn decision(floor: Option<u32>) -> Value {
    let mut c = json!({"id": "d", "kind": "decision", "path": "out/f.json", "qualified": true,
        "prompt": "Is this right?\n{artifact}", "labels": ["yes", "no"], "expected": "yes"});
    if let Some(f) = floor {
        c["floor_bps"] = json!(f);
    }
    json!([c])
}

#[test]
fn decision_floor_is_8000_bps() {
    assert_eq!(SEMANTIC_FLOOR_BPS, 8_000);
    let (_d, c) = contract("automatic", decision(None));
    let w = world(r#"{"x": 1}"#);
    for (p, pass) in [
        (0.80, true),
        (0.7999, false),
        (0.79999, false),
        (0.95, true),
        (0.5, false),
    ] {
        let mut d = Fixed::new(Ok(vec![("yes", p), ("no", 1.0 - p)]));
        let v = evaluate(&c, &w, &[], Some(&mut d));
        assert_eq!(v.passed, pass, "p={p}: {v:?}");
        assert_eq!(d.calls, 1);
        assert!(
            d.last_prompt.contains("Is this right?\n{\"x\": 1}"),
            "{}",
            d.last_prompt
        );
    }
    let (_d, c) = contract("automatic", decision(Some(9_000)));
    let mut d = Fixed::new(Ok(vec![("yes", 0.85), ("no", 0.15)]));
    assert!(!evaluate(&c, &w, &[], Some(&mut d)).passed);
}

#[test]
fn decision_fails_closed() {
    let (_d, c) = contract("automatic", decision(None));
    let w = world(r#"{"x": 1}"#);

    let v = evaluate(&c, &w, &[], None);
    assert!(!v.passed);
    assert!(
        v.checks[0]
            .facts
            .iter()
            .any(|f| f.contains("no decision model")),
        "{v:?}"
    );

    let mut d = Fixed::new(Err("worker timed out after 12 s"));
    let v = evaluate(&c, &w, &[], Some(&mut d));
    assert!(!v.passed);
    assert!(
        v.checks[0]
            .facts
            .iter()
            .any(|f| f.contains("worker timed out after 12 s")),
        "{v:?}"
    );

    let mut d = Fixed::new(Ok(vec![("maybe", 0.99)]));
    assert!(!evaluate(&c, &w, &[], Some(&mut d)).passed);
    let mut d = Fixed::new(Ok(vec![("yes", 1.5)]));
    assert!(!evaluate(&c, &w, &[], Some(&mut d)).passed);
    let mut d = Fixed::new(Ok(vec![("yes", f64::NAN)]));
    assert!(!evaluate(&c, &w, &[], Some(&mut d)).passed);
    let mut d = Fixed::new(Ok(vec![("no", 0.99)]));
    assert!(!evaluate(&c, &w, &[], Some(&mut d)).passed);

    // A missing artifact fails before any model is asked.
    let mut d = Fixed::new(Ok(vec![("yes", 1.0)]));
    let empty = MemWorld::new()
        .with_file("docs/a.txt", INVOICE)
        .with_file("docs/b.txt", OTHER);
    assert!(!evaluate(&c, &empty, &[], Some(&mut d)).passed);
    assert_eq!(d.calls, 0);
}

#[test]
fn an_unqualified_decision_is_advice_and_never_decides_the_verdict() {
    let mut checks = decision(None);
    checks[0]["qualified"] = json!(false);
    checks
        .as_array_mut()
        .unwrap()
        .push(json!({"id": "exists", "kind": "file_exists", "path": "out/f.json"}));
    let (_d, c) = contract("automatic", checks);
    let w = world(r#"{"x": 1}"#);
    // A confident "yes" does not make a pass out of a failed deterministic check...
    let mut d = Fixed::new(Ok(vec![("yes", 0.99), ("no", 0.01)]));
    let v = evaluate(
        &c,
        &MemWorld::new().with_file("docs/a.txt", INVOICE),
        &[],
        Some(&mut d),
    );
    assert!(!v.passed && v.checks[0].advisory, "{v:?}");
    // ...and a confident "no" does not fail a deliverable the code accepted: it is reported.
    let mut d = Fixed::new(Ok(vec![("yes", 0.01), ("no", 0.99)]));
    let v = evaluate(&c, &w, &[], Some(&mut d));
    assert!(
        v.passed && v.checks[0].advisory && !v.checks[0].passed,
        "{v:?}"
    );
    // Only advisory checks: nothing decides, so nothing passes.
    let (_d, c) = contract("automatic", {
        let mut only = decision(None);
        only[0]["qualified"] = json!(false);
        only
    });
    let mut d = Fixed::new(Ok(vec![("yes", 1.0), ("no", 0.0)]));
    assert!(!evaluate(&c, &w, &[], Some(&mut d)).passed);
}

#[test]
fn human_review_only_is_refused_for_automatic_judgment() {
    let (_d, c) = contract("human_review_only", decision(None));
    let w = world(r#"{"x": 1}"#);
    let mut d = Fixed::new(Ok(vec![("yes", 1.0)]));
    let e = evaluate_automatic(&c, &w, &[], Some(&mut d)).unwrap_err();
    assert_eq!(e, JudgeError::HumanReviewOnly { id: "sem".into() });
    let msg = e.to_string();
    assert!(msg.starts_with("mission sem is human_review_only: its semantic checks have not been qualified for automatic judgment"), "{msg}");
    assert!(msg.contains("rein qualify sem"), "{msg}");
    assert_eq!(d.calls, 0);

    let (_d, c) = contract("automatic", decision(None));
    assert!(
        evaluate_automatic(&c, &w, &[], Some(&mut d))
            .unwrap()
            .passed
    );
}

#[test]
fn shipped_human_review_missions_are_refused() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../missions");
    for id in ["screen_qa", "voice_intake"] {
        let c = Mission::load(root.join(id)).unwrap();
        let e = evaluate_automatic(&c, &MemWorld::new(), &[], None).unwrap_err();
        assert!(e
            .to_string()
            .contains(&format!("mission {id} is human_review_only")));
    }
}
