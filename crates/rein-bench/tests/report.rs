#![allow(clippy::unwrap_used, clippy::expect_used)]

use rein_bench::render::{html, junit, markdown, terminal, write_outputs, REPORT_MD};
use rein_bench::report::{Report, ALL};
use rein_bench::results::{append_result, canonical_text, read_results, RunResult, RESULTS_FILE};

fn run(
    model: &str,
    task: &str,
    category: &str,
    repeat: u32,
    passed: bool,
    steps: u32,
    wall_ms: u64,
) -> RunResult {
    RunResult {
        suite: "s".into(),
        task: task.into(),
        category: category.into(),
        split: "dev".into(),
        model: model.into(),
        seed: 7 + u64::from(repeat),
        repeat,
        passed,
        reason: if passed {
            "all checks passed".into()
        } else {
            "total-hours: stated 35, expected 34".into()
        },
        contract_sha256: format!("{:0>64}", task.len()),
        model_identity: format!("{model}.gguf sha256:abc"),
        steps,
        wall_ms,
        prompt_tokens: 1000,
        completion_tokens: 200,
        format_errors: u32::from(!passed),
        repairs: 1,
        cap_hit: !passed && repeat == 1,
        finish_accepted: passed,
        model_ms: wall_ms * 9 / 10,
        total_ms: wall_ms,
        trace: None,
        memory: None,
        levers: None,
        samples: None,
        first_draw_passed: None,
        chosen_draw_passed: None,
        sample_draws: None,
        note_requests: None,
        context: None,
        harness_sha256: None,
    }
}

/// Model a: t1 passes twice, t2 once of two, t3 never (category x: t1, t2; y: t3).
/// Model b: t1 passes twice, t2 never, t3 twice.
fn sample() -> Vec<RunResult> {
    vec![
        run("a", "t1", "x", 0, true, 4, 2000),
        run("a", "t1", "x", 1, true, 6, 4000),
        run("a", "t2", "x", 0, true, 5, 1000),
        run("a", "t2", "x", 1, false, 8, 8000),
        run("a", "t3", "y", 0, false, 9, 10000),
        run("a", "t3", "y", 1, false, 10, 10000),
        run("b", "t1", "x", 0, true, 3, 1000),
        run("b", "t1", "x", 1, true, 3, 1000),
        run("b", "t2", "x", 0, false, 3, 1000),
        run("b", "t2", "x", 1, false, 3, 1000),
        run("b", "t3", "y", 0, true, 3, 1000),
        run("b", "t3", "y", 1, true, 3, 1000),
    ]
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn the_report_has_the_right_numbers() {
    let mut results = sample();
    results.reverse(); // order of arrival does not matter
    let r = Report::build(&results);
    assert_eq!(r.runs, 12);
    assert_eq!(r.models.len(), 2);
    let a = &r.models[0];
    assert_eq!(a.model, "a");
    assert_eq!(a.identities, ["a.gguf sha256:abc"]);
    let o = &a.overall;
    assert_eq!(o.category, ALL);
    assert_eq!((o.passes, o.runs, o.tasks, o.k), (3, 6, 3, 2));
    assert!(close(o.pass_rate, 0.5));
    let (lo, hi) = rein_bench::stats::wilson(3, 6);
    assert!(close(o.wilson_low, lo) && close(o.wilson_high, hi));
    // Mean over tasks of (1, 0.5, 0) = 0.5; pass^2 = mean(1, 0, 0) = 1/3.
    assert!(close(o.mean_pass_rate.unwrap(), 0.5));
    assert!(close(o.pass_hat_k.unwrap(), 1.0 / 3.0));
    // Steps 4,6,5,8,9,10 -> median 7; walls 1,2,4,8,10,10 s -> median 6 s.
    assert!(close(o.median_steps.unwrap(), 7.0));
    assert!(close(o.median_wall_ms.unwrap(), 6000.0));
    // tokens/s: 200 tokens over 2,4,1,8,10,10 s -> 100,50,200,25,20,20 -> median 37.5.
    assert!(close(o.median_tokens_per_s.unwrap(), 37.5));
    // 3 format errors and 6 repairs over 42 steps; 2 cap hits (failed repeat-1 runs) of 6 runs.
    assert!(close(o.format_error_rate.unwrap(), 3.0 / 42.0));
    assert!(close(o.repair_rate.unwrap(), 6.0 / 42.0));
    assert!(close(o.cap_hit_rate.unwrap(), 2.0 / 6.0));
    // Model time is 9/10 of each run's 35 s in all: overhead 10 %; 6 runs in 35 s = 10.29/min.
    assert!(close(o.harness_overhead.unwrap(), 0.1));
    assert!(close(o.tasks_per_minute.unwrap(), 6.0 * 60.0 / 35.0));
    let cats: Vec<(&str, u64, u64)> = a
        .categories
        .iter()
        .map(|c| (c.category.as_str(), c.passes, c.runs))
        .collect();
    assert_eq!(cats, [("x", 3, 4), ("y", 0, 2)]);
    // The paired comparison: pairs on (task, repeat). a only: t2#0; b only: t3#0, t3#1.
    assert_eq!(r.comparisons.len(), 1);
    let c = &r.comparisons[0];
    assert_eq!((c.model_a.as_str(), c.model_b.as_str()), ("a", "b"));
    assert_eq!(
        (c.pairs, c.both_pass, c.both_fail, c.only_a, c.only_b),
        (6, 2, 1, 1, 2)
    );
    assert!(close(c.p_value, 1.0));
    let disc: Vec<(&str, u32, &str)> = c
        .discordant
        .iter()
        .map(|d| (d.task.as_str(), d.repeat, d.passed_by.as_str()))
        .collect();
    assert_eq!(disc, [("t2", 0, "a"), ("t3", 0, "b"), ("t3", 1, "b")]);
}

#[test]
fn results_round_trip_in_a_stable_order() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(RESULTS_FILE);
    let mut results = sample();
    results.reverse();
    for r in &results {
        append_result(&path, r).unwrap();
    }
    let back = read_results(&path).unwrap();
    assert_eq!(back, results);
    let text = canonical_text(&back).unwrap();
    let first = text.lines().next().unwrap();
    let fields = [
        "suite",
        "task",
        "category",
        "split",
        "model",
        "seed",
        "repeat",
        "passed",
        "reason",
        "contract_sha256",
        "model_identity",
        "steps",
        "wall_ms",
        "prompt_tokens",
        "completion_tokens",
        "format_errors",
        "repairs",
        "cap_hit",
        "finish_accepted",
    ];
    let mut at = 0;
    for f in fields {
        let i = first[at..]
            .find(&format!("\"{f}\":"))
            .unwrap_or_else(|| panic!("{f} out of order in {first}"));
        at += i;
    }
    assert!(first.starts_with("{\"suite\":\"s\",\"task\":\"t1\",\"category\":\"x\",\"split\":\"dev\",\"model\":\"a\",\"seed\":7,\"repeat\":0,"));
    // Canonical order whatever the arrival order.
    assert_eq!(text, canonical_text(&sample()).unwrap());
}

#[test]
fn a_bad_results_line_is_named_and_a_cut_off_last_line_is_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(RESULTS_FILE);
    let good = sample()[0].to_line().unwrap();
    std::fs::write(&path, format!("{good}\nnot json\n{good}\n")).unwrap();
    let e = read_results(&path).unwrap_err().to_string();
    assert!(e.contains("results.jsonl: line 2: not a run result"), "{e}");
    // A kill mid-write leaves a last line without its newline: that run is simply not there.
    std::fs::write(&path, format!("{good}\n{}", &good[..20])).unwrap();
    assert_eq!(read_results(&path).unwrap().len(), 1);
    assert!(read_results(&tmp.path().join("none.jsonl"))
        .unwrap()
        .is_empty());
}

#[test]
fn overhead_counts_only_timed_runs_and_never_goes_negative() {
    let mut results = sample();
    // b's runs: one untimed (an older results file), one whose model time exceeds its total.
    results[6].total_ms = 0;
    results[7].model_ms = 5000;
    results[7].total_ms = 1000;
    for r in &mut results[8..] {
        r.model_ms = 250;
        r.total_ms = 1000;
    }
    let r = Report::build(&results);
    let b = &r.models[1].overall;
    // Timed: 5 runs of 1 s; model time 1 s (capped) + 4 x 0.25 s = 2 s of 5 s -> 60 % overhead.
    assert!(close(b.harness_overhead.unwrap(), 0.6));
    assert!(close(b.tasks_per_minute.unwrap(), 60.0));
    for r in &mut results {
        r.total_ms = 0;
    }
    let none = Report::build(&results);
    assert!(none.models[0].overall.harness_overhead.is_none());
    assert!(terminal(&none).contains("overhead"));
}

#[test]
fn names_are_escaped_in_every_output() {
    let mut results = sample();
    results[0].task = "a<b>&\"c|d".into();
    results[0].reason = "<script>alert(1)</script> & more\u{1b}[31m".into();
    results[4].passed = false;
    results[5].category = "<img src=x onerror=alert(1)>".into();
    for r in results.iter_mut().filter(|r| r.model == "b") {
        r.model = "b<svg onload=alert(2)>\u{202e}".into();
    }
    let r = Report::build(&results);

    let md = markdown(&r);
    assert!(md.contains("a&lt;b&gt;&amp;\"c\\|d"), "{md}");
    assert!(md.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; more"));
    assert!(!md.contains("<b>") && !md.contains("<script>") && !md.contains('\u{1b}'));

    let h = html(&r);
    assert!(h.contains("a&lt;b&gt;&amp;&quot;c|d"));
    assert!(h.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; more"));
    assert!(!h.contains("<script") && !h.contains('\u{1b}'));
    assert!(!h.contains("<img") && !h.contains("<svg onload") && !h.contains('\u{202e}'));
    assert!(h.contains("&lt;img src=x onerror=alert(1)&gt;"));

    let j = junit(&results);
    assert!(j.contains("name=\"a&lt;b&gt;&amp;&quot;c|d #0\""), "{j}");
    assert!(!j.contains('\u{1b}'));

    let t = terminal(&r);
    assert!(!t.contains('\u{1b}'));
}

#[test]
fn html_is_self_contained_with_charts() {
    let h = html(&Report::build(&sample()));
    assert!(h.starts_with("<!DOCTYPE html>"));
    assert!(h.contains("<style>") && h.contains("<svg"));
    for banned in [
        "<script", "http:", "https:", "src=", "href=", "@import", "url(",
    ] {
        assert!(!h.contains(banned), "{banned} in report.html");
    }
    // The pass-rate chart labels every bar with its numbers (readable without colour).
    assert!(h.contains("3/6 = 50.0% ["), "{h}");
    assert!(h.contains("4/6 = 66.7% ["));
    // One mark per run in each distribution strip (two strips).
    assert_eq!(h.matches("<circle").count(), 24);
    assert!(h.contains("p = 1.0000"));
}

#[test]
fn markdown_terminal_and_junit_content() {
    let r = Report::build(&sample());
    let md = markdown(&r);
    assert!(md.contains("| a | **all** | 3/6 | 50.0% |"), "{md}");
    assert!(md.contains("| b | **all** | 4/6 | 66.7% |"));
    assert!(md.contains("33.3% (k=2)"));
    assert!(md.contains(
        "a vs b: 6 pairs; both pass 2, both fail 1, only a 1, only b 2; exact McNemar p = 1.0000"
    ));
    assert!(md.contains("  - s/t2 repeat 0: passed only by a"));
    let t = terminal(&r);
    assert!(t.lines().next().unwrap().starts_with("model"));
    assert!(t.contains("12 runs"));
    let j = junit(&sample());
    assert_eq!(j.matches("<testcase ").count(), 12);
    assert!(j.contains("<testsuites name=\"rein bench\" tests=\"12\" failures=\"5\">"));
    assert_eq!(j.matches("<failure ").count(), 5);
    assert!(j.contains("<testsuite name=\"s [a]\" tests=\"6\" failures=\"3\" time=\"35.000\">"));
}

#[test]
fn write_outputs_is_deterministic() {
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    let mut rev = sample();
    rev.reverse();
    write_outputs(one.path(), &sample()).unwrap();
    write_outputs(two.path(), &rev).unwrap();
    for f in [RESULTS_FILE, REPORT_MD, "report.html", "junit.xml"] {
        let a = std::fs::read(one.path().join(f)).unwrap();
        let b = std::fs::read(two.path().join(f)).unwrap();
        assert_eq!(a, b, "{f}");
    }
}

#[test]
fn verified_sampling_is_reported_as_best_of_k_never_as_pass_at_one() {
    let mut runs = sample();
    // Model a sampled: t1 repeat 0 passed only through its second draw, t2 repeat 0 passed
    // with its first draw, t3 sampled a write and failed; t1 repeat 1 never wrote.
    for r in runs.iter_mut().filter(|r| r.model == "a") {
        r.samples = Some(4);
        let draws = match (r.task.as_str(), r.repeat) {
            ("t1", 0) => Some((false, true)),
            ("t2", 0) => Some((true, true)),
            ("t3", 0) => Some((false, false)),
            _ => None,
        };
        r.first_draw_passed = draws.map(|d| d.0);
        r.chosen_draw_passed = draws.map(|d| d.1);
    }
    let report = Report::build(&runs);
    let a = report.models.iter().find(|m| m.model == "a").unwrap();
    let s = a.sampling.as_ref().unwrap();
    assert_eq!(
        (
            s.samples,
            s.runs,
            s.sampled_runs,
            s.first_draw_passed,
            s.chosen_draw_passed,
            s.passes
        ),
        (4, 6, 3, 1, 2, 3)
    );
    let b = report.models.iter().find(|m| m.model == "b").unwrap();
    assert!(b.sampling.is_none(), "model b did not sample");
    for text in [terminal(&report), markdown(&report), html(&report)] {
        assert!(text.contains("best-of-4"), "{text}");
        assert!(text.contains("not pass@1"), "{text}");
        // Without the flag a mission's own budgets.samples still samples: only `--samples 1`
        // gives pass@1.
        assert!(text.contains("--samples 1 for pass@1"), "{text}");
    }
    // A results line written with sampling reads back the same; one without has no fields.
    let line = serde_json::to_string(&runs[0]).unwrap();
    assert!(line.contains("\"samples\":4"));
    let plain = serde_json::to_string(&runs[6]).unwrap();
    assert!(!plain.contains("samples"), "{plain}");
}

#[test]
fn a_context_window_asked_for_is_named_beside_the_model() {
    let mut runs = sample();
    for r in runs.iter_mut() {
        r.context = Some(8192);
    }
    let report = Report::build(&runs);
    let md = markdown(&report);
    assert!(
        md.contains("- b (--context 8192): b.gguf sha256:abc\n"),
        "{md}"
    );
    assert!(md.contains("| a (--context 8192) | **all** |"), "{md}");
    assert!(html(&report).contains("b (--context 8192): b.gguf"));
    assert!(terminal(&report).contains("a (--context 8192)"));
    let plain = markdown(&Report::build(&sample()));
    assert!(plain.contains("- a: a.gguf sha256:abc\n") && !plain.contains("--context"));
}
