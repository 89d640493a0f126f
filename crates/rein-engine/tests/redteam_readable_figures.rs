#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red-team attacks on lever `readable-figures` (commit e80505f): a `write_sections` or
//! `rewrite_section` call whose composed file the judge would read a figure from, but not as one
//! number (or not in its section, or too often), is refused before the gate with the judge's
//! facts. Each test asserts the SAFE behaviour: it passes where the claim held and fails, saying
//! what is wrong and what is right, where the attack found a hole.

#[path = "agent_support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};

use rein_engine::agent::{AgentEvent, Levers, Outline, RunOutcome};
use rein_engine::checks::{evaluate_selected, CheckSpec, DirWorld, Locator};
use rein_engine::gate::AllowAll;
use rein_workspace::desk::{render_sections, Section};
use serde_json::{json, Map, Value};
use support::{finish_line, line, missions_dir, step_outcomes, Harness, PromptRecorder};

fn norm(h: &str) -> String {
    h.trim().trim_end_matches('#').trim().to_lowercase()
}

/// An ATX heading line outside code: (level, text).
fn atx(line: &str) -> Option<(u8, String)> {
    let l = line.trim_end_matches('\r');
    let t = l.trim_start_matches(' ');
    if l.len() - t.len() > 3 {
        return None;
    }
    let hashes = t.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &t[hashes..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    Some((
        hashes as u8,
        rest.trim().trim_end_matches('#').trim().to_string(),
    ))
}

/// `text` cut at the outline's headings into `write_sections` parameters (the title from a
/// level-1 heading before the first one), or `None` when some required heading is missing.
fn split(outline: &Outline, text: &str) -> Option<Value> {
    let mut fields = Map::new();
    fields.insert("path".into(), json!(outline.path));
    let mut next = 0usize;
    let mut current: Option<(String, Vec<&str>)> = None;
    let mut fence: Option<&str> = None;
    for l in text.split('\n') {
        let t = l.trim_start();
        for f in ["```", "~~~"] {
            if t.starts_with(f) {
                fence = match fence {
                    Some(o) if o == f => None,
                    None => Some(f),
                    o => o,
                };
            }
        }
        if fence.is_none() {
            if let Some((level, h)) = atx(l) {
                if next < outline.headings.len() && norm(&h) == norm(&outline.headings[next].1) {
                    if let Some((name, body)) = current.take() {
                        fields.insert(name, json!(body.join("\n").trim_matches('\n')));
                    }
                    current = Some((outline.headings[next].1.clone(), Vec::new()));
                    next += 1;
                    continue;
                }
                if outline.title && level == 1 && next == 0 && current.is_none() {
                    fields.insert("title".into(), json!(h));
                    continue;
                }
            }
        }
        if let Some((_, body)) = current.as_mut() {
            body.push(l);
        }
    }
    let (name, body) = current?;
    fields.insert(name, json!(body.join("\n").trim_matches('\n')));
    (next == outline.headings.len()).then_some(Value::Object(fields))
}

fn outline(h: &Harness, line_fields: bool, readable: bool) -> Option<Outline> {
    let mut o = Outline::of(&h.contract)?;
    if line_fields {
        o = o.with_line_fields(&h.contract, false);
    }
    if readable {
        o = o.with_figure_checks(&h.contract);
    }
    Some(o)
}

/// Every numeric check on the deliverable, judged on `text` written there: (id, passed, facts).
fn numeric_verdicts(h: &Harness, path: &str, text: &str) -> Vec<(String, bool, Vec<String>)> {
    let p = h.workspace.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    let world = DirWorld::new(&h.workspace);
    let keep = |s: &CheckSpec| matches!(s, CheckSpec::NumericConsistency { path: p, .. } if rein_engine::checks::same_path(p, path));
    let out = evaluate_selected(&h.contract, &world, &[], &keep)
        .into_iter()
        .map(|(_, r)| (r.id, r.passed, r.facts))
        .collect();
    std::fs::remove_file(&p).unwrap();
    out
}

/// Every task folder with a Markdown deliverable: (harness loader name, folder).
fn task_dirs() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for base in [missions_dir().join("../suites/desk"), missions_dir()] {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&base)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("mission.json").exists())
            .collect();
        dirs.sort();
        for d in dirs {
            out.push((d.file_name().unwrap().to_string_lossy().to_string(), d));
        }
    }
    out
}

fn harness_of(dir: &Path) -> Harness {
    let tmp = tempfile::tempdir().unwrap();
    let mdir = tmp.path().join("mission");
    support::copy_dir(dir, &mdir);
    Harness::load(tmp, mdir.join("mission.json"))
}

/// The passing reports of a task: its gold and its gold variants, at the deliverable.
fn passing_reports(dir: &Path, deliverable: &str) -> Vec<(String, String)> {
    let judge = dir.join("judge");
    let mut out = Vec::new();
    let gold = judge.join("gold/files").join(deliverable);
    if gold.exists() {
        out.push(("gold".into(), std::fs::read_to_string(gold).unwrap()));
    }
    if let Ok(rd) = std::fs::read_dir(judge.join("gold_variants")) {
        let mut vs: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
        vs.sort();
        for v in vs {
            let f = v.join("files").join(deliverable);
            if f.exists() {
                out.push((
                    format!("variant {}", v.file_name().unwrap().to_string_lossy()),
                    std::fs::read_to_string(f).unwrap(),
                ));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Shared run helpers (report-gradebook, as the author's tests).
// ---------------------------------------------------------------------------------------------

const GRADEBOOK: &str = "report-gradebook";
const REPORT: &str = "out/grade-report.md";
const GOLD_PHYSICS: &str = "Physics average: 70.4\nPhysics best: 90\nPhysics fails: 2";
const GOLD_HISTORY: &str = "History average: 63.5\nHistory best: 87\nHistory fails: 3";
const JOINED_PHYSICS: &str = "Physics average: 70.4 | Physics best: 90 | Physics fails: 2";

fn gradebook(physics: &str, history: &str) -> Value {
    json!({
        "path": REPORT,
        "Math": "Math average: 78.1\nMath best: 96\nMath fails: 0",
        "Physics": physics,
        "History": history,
        "Overall": "Fails in total: 5",
    })
}

fn levers(readable: bool, rewrite: bool, line_fields: bool) -> Levers {
    Levers {
        write_sections: true,
        rewrite_section: rewrite,
        line_fields,
        readable_figures: readable,
        ..Levers::DEFAULT
    }
}

/// Runs `calls` (tool, parameters) after reading the grades, then reads the report back and
/// finishes.
fn run_calls(
    h: &Harness,
    calls: &[(&str, Value)],
    l: Levers,
) -> (RunOutcome, Vec<AgentEvent>, PromptRecorder) {
    let mut script = line("read_file", json!({"path": "grades/term-1.csv"}));
    for (tool, params) in calls {
        script.push_str(&line(tool, params.clone()));
    }
    script.push_str(&line("read_file", json!({"path": REPORT})));
    script.push_str(&finish_line());
    let mut model = PromptRecorder::new(&script, "redteam_readable_figures.jsonl");
    let (out, events) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = l;
        o.limits.attempts = 1;
    });
    (out, events, model)
}

/// The regexes of an outline's figure checks, joined.
fn patterns(o: &Outline) -> String {
    o.figure_checks
        .iter()
        .filter_map(|c| match c {
            CheckSpec::NumericConsistency {
                stated: Locator::Regex(p),
                ..
            } => Some(p.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every run of ASCII digits (with decimals) in `s`.
fn numbers_in(s: &str) -> Vec<String> {
    let re = regex::Regex::new(r"\d+(?:\.\d+)?").unwrap();
    re.find_iter(s).map(|m| m.as_str().to_string()).collect()
}

/// Bodies of `params` with each body passed through `f`.
fn map_bodies(outline: &Outline, params: &Value, f: &dyn Fn(&str) -> String) -> Value {
    let mut p = params.clone();
    for (_, h) in &outline.headings {
        if let Some(b) = p[h.as_str()].as_str() {
            p[h.as_str()] = json!(f(b));
        }
    }
    p
}

/// Passing-report shapes a model may write: (name, transform of a body).
#[allow(clippy::type_complexity)]
fn shapes() -> Vec<(&'static str, Box<dyn Fn(&str) -> String>)> {
    let label = regex::Regex::new(r"(?m)^(\s*)([^:\n|]{1,40}):\s").unwrap();
    let label2 = label.clone();
    let label3 = label.clone();
    let big = regex::Regex::new(r"\b(\d{1,3})(\d{3})\b").unwrap();
    vec![
        ("as is", Box::new(|b: &str| b.to_string())),
        ("crlf", Box::new(|b: &str| b.replace('\n', "\r\n"))),
        ("hard breaks", Box::new(|b: &str| b.replace('\n', "  \n"))),
        (
            "bullets",
            Box::new(|b: &str| {
                b.split('\n')
                    .map(|l| {
                        if l.trim().is_empty() {
                            l.to_string()
                        } else {
                            format!("- {l}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
        ),
        (
            "numbered",
            Box::new(|b: &str| {
                b.split('\n')
                    .enumerate()
                    .map(|(i, l)| {
                        if l.trim().is_empty() {
                            l.to_string()
                        } else {
                            format!("{}. {l}", i + 1)
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
        ),
        (
            "bold labels",
            Box::new(move |b: &str| label.replace_all(b, "$1**$2:** ").to_string()),
        ),
        (
            "italic labels",
            Box::new(move |b: &str| label2.replace_all(b, "$1_$2_: ").to_string()),
        ),
        (
            "code labels",
            Box::new(move |b: &str| label3.replace_all(b, "$1`$2`: ").to_string()),
        ),
        (
            "blank lines between",
            Box::new(|b: &str| b.replace('\n', "\n\n")),
        ),
        (
            "html comments between",
            Box::new(|b: &str| b.replace('\n', "\n<!-- draft 12 | 3 -->\n")),
        ),
        (
            "trailing comment",
            Box::new(|b: &str| format!("{b}\n\n<!-- Physics average: 1 | 2 -->")),
        ),
        (
            "decoy in a code block",
            Box::new(|b: &str| {
                format!("{b}\n\n```\nPhysics average: 1 | Physics best: 2\nTotal: 9 | 9\n```")
            }),
        ),
        (
            "decoy in a tilde block",
            Box::new(|b: &str| format!("{b}\n\n~~~text\nfails in total: 1 | 2\n~~~")),
        ),
        (
            "indented code decoy",
            Box::new(|b: &str| format!("{b}\n\n    Math average: 7 | 8")),
        ),
        (
            "thousands separators",
            Box::new(move |b: &str| big.replace_all(b, "$1,$2").to_string()),
        ),
        (
            "trailing periods",
            Box::new(|b: &str| {
                b.split('\n')
                    .map(|l| {
                        if l.trim().is_empty() || l.ends_with('.') {
                            l.to_string()
                        } else {
                            format!("{l}.")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
        ),
        (
            "blockquote",
            Box::new(|b: &str| {
                b.split('\n')
                    .map(|l| format!("> {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
        ),
        (
            "subsection line",
            Box::new(|b: &str| format!("### Details\n\n{b}")),
        ),
        (
            "html div",
            Box::new(|b: &str| format!("<div>\n\n{b}\n\n</div>")),
        ),
        ("tabs", Box::new(|b: &str| b.replace(": ", ":\t"))),
        (
            "intro sentence with numbers",
            Box::new(|b: &str| {
                format!("This term 3 groups wrote 2 tests (see note 1 | 2).\n\n{b}")
            }),
        ),
        (
            "table of figures",
            Box::new(|b: &str| format!("{b}\n\n| What | N |\n|---|---|\n| a | 1 |\n| b | 2 |")),
        ),
        (
            "nbsp after colon",
            Box::new(|b: &str| b.replace(": ", ":\u{a0}")),
        ),
    ]
}

/// The file `write_sections` writes from the gate arguments `args`.
fn rendered(args: &Value) -> String {
    let sections: Vec<Section> = args["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| Section {
            level: u8::try_from(s["level"].as_u64().unwrap()).unwrap(),
            heading: s["heading"].as_str().unwrap().to_string(),
            body: s["body"].as_str().unwrap().to_string(),
        })
        .collect();
    render_sections(args["title"].as_str(), &sections)
        .unwrap()
        .text
}

/// The expected values the judge withholds for the deliverable's numeric checks, read from its
/// facts of `text` (a passing report).
fn expected_values(h: &Harness, path: &str, text: &str) -> Vec<String> {
    let eq = regex::Regex::new(r"=\s*(-?\d+(?:\.\d+)?)\s*$").unwrap();
    let lines = regex::Regex::new(r"^expected: [^:]+: (\d+) lines match").unwrap();
    let mut out = Vec::new();
    for (_, _, facts) in numeric_verdicts(h, path, text) {
        for f in facts.iter().filter(|f| f.starts_with("expected:")) {
            if let Some(c) = eq.captures(f).or_else(|| lines.captures(f)) {
                out.push(c[1].to_string());
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// R1: a report the judge would pass is never refused.
// ---------------------------------------------------------------------------------------------

/// Every desk task and mission with a Markdown deliverable and required headings: its gold and
/// gold variants, each in two dozen shapes a model writes (CRLF, lists, emphasis, comments,
/// code decoys, thousands separators, quotes, subsection lines, HTML blocks, tables, no-break
/// spaces...), composed through `write_sections`. Wherever the lever refuses a file, the judge
/// must fail one of the deliverable's numeric checks on that same file (the lever is never
/// stricter than the judge); and every gold composed as it is must be accepted.
#[test]
fn r1_no_report_the_judge_passes_is_refused_in_any_shape() {
    let mut composed = 0;
    let mut refused_and_failing = 0;
    let mut holes = Vec::new();
    for (name, dir) in task_dirs() {
        let h = harness_of(&dir);
        let (Some(off), Some(on)) = (outline(&h, false, false), outline(&h, false, true)) else {
            continue;
        };
        for (what, text) in passing_reports(&dir, &off.path) {
            let Some(params) = split(&off, &text) else {
                continue;
            };
            for (shape, f) in shapes() {
                let p = map_bodies(&off, &params, &*f);
                let Ok((args, _)) = off.gate_arguments(&p) else {
                    continue;
                };
                composed += 1;
                let file = rendered(&args);
                let failing: Vec<String> = numeric_verdicts(&h, &off.path, &file)
                    .into_iter()
                    .filter(|v| !v.1)
                    .map(|v| v.0)
                    .collect();
                match on.gate_arguments(&p) {
                    Ok(_) => {}
                    Err(_) if !failing.is_empty() => refused_and_failing += 1,
                    Err(why) => holes.push(format!(
                        "{name} {what} ({shape}): every numeric check passes, yet refused: {why}\n--- file ---\n{file}"
                    )),
                }
                if shape == "as is" && failing.is_empty() {
                    assert!(on.gate_arguments(&p).is_ok(), "{name} {what}");
                }
            }
        }
    }
    assert!(composed > 300, "only {composed} files composed");
    println!("{composed} files composed; {refused_and_failing} refused, each failing the judge");
    assert!(
        holes.is_empty(),
        "a report the judge passes must be written; refused:\n{}",
        holes.join("\n\n")
    );
}

/// The same, end to end for report-gradebook: the gold written in several shapes through the
/// real gate with the lever on is executed and passes.
#[test]
fn r1_gradebook_shapes_pass_end_to_end() {
    for body in [
        "Physics average: 70.4\r\nPhysics best: 90\r\nPhysics fails: 2",
        "- **Physics average:** 70.4\n- **Physics best:** 90\n- **Physics fails:** 2",
        "Physics average: 70.4.\nPhysics best: 90.\nPhysics fails: 2.",
        "Physics average: 70.4 <!-- mean of 9 | rows -->\nPhysics best: 90\nPhysics fails: 2",
        "### Physics figures\n\nPhysics average: 70.4\nPhysics best: 90\nPhysics fails: 2\n\n<!--\nPhysics best: 100 | 1\n-->",
    ] {
        let h = Harness::desk_suite(GRADEBOOK);
        let (out, _, _) = run_calls(
            &h,
            &[("write_sections", gradebook(body, GOLD_HISTORY))],
            levers(true, false, false),
        );
        let w = step_outcomes(&h, &out, "write_sections");
        assert_eq!(w[0].0, "executed", "{body:?}: {w:?}");
        assert!(out.passed(), "{body:?}: {}", out.reason());
    }
}

// ---------------------------------------------------------------------------------------------
// R2: nothing of the expected value reaches the model.
// ---------------------------------------------------------------------------------------------

/// Hostile rewrites of every gold (every digit as `x`, every section's lines joined with `|`,
/// a word after every number, every number doubled, each figure line twice, figures moved to
/// the first section): every refusal may say only numbers the model wrote (or the path and
/// headings hold), and never an expected value the model did not write.
#[test]
fn r2_refusals_say_no_number_the_model_did_not_write() {
    let digit = regex::Regex::new(r"\d").unwrap();
    let num = regex::Regex::new(r"\d+(?:\.\d+)?").unwrap();
    #[allow(clippy::type_complexity)]
    let hostile: Vec<(&str, Box<dyn Fn(&str) -> String>)> = vec![
        (
            "digits as x",
            Box::new(move |b: &str| digit.replace_all(b, "x").to_string()),
        ),
        (
            "joined",
            Box::new(|b: &str| {
                b.split('\n')
                    .filter(|l| !l.trim().is_empty())
                    .collect::<Vec<_>>()
                    .join(" | ")
            }),
        ),
        (
            "word after",
            Box::new(move |b: &str| num.replace_all(b, "$0 roughly").to_string()),
        ),
        ("twice", Box::new(|b: &str| format!("{b}\n\n{b}"))),
        (
            "doubled",
            Box::new(|b: &str| {
                regex::Regex::new(r"\d+(?:\.\d+)?")
                    .unwrap()
                    .replace_all(b, |c: &regex::Captures| {
                        let v: f64 = c[0].parse().unwrap();
                        format!("{}", v * 2.0 + 1.0)
                    })
                    .to_string()
            }),
        ),
    ];
    let mut refusals = 0;
    let mut leaks = Vec::new();
    for (name, dir) in task_dirs() {
        let h = harness_of(&dir);
        let (Some(off), Some(on)) = (outline(&h, false, false), outline(&h, false, true)) else {
            continue;
        };
        for (what, text) in passing_reports(&dir, &off.path) {
            let Some(params) = split(&off, &text) else {
                continue;
            };
            let expected = expected_values(&h, &off.path, &text);
            let mut cases: Vec<(String, Value)> = hostile
                .iter()
                .map(|(n, f)| (n.to_string(), map_bodies(&off, &params, &**f)))
                .collect();
            // Every section's text moved under the first heading, the others a word.
            let mut moved = params.clone();
            let all: Vec<String> = off
                .headings
                .iter()
                .filter_map(|(_, h)| params[h.as_str()].as_str().map(str::to_string))
                .collect();
            for (i, (_, hd)) in off.headings.iter().enumerate() {
                moved[hd.as_str()] = json!(if i == 0 {
                    all.join("\n\n")
                } else {
                    format!("See above ({i}).")
                });
            }
            cases.push(("moved".into(), moved));
            for (case, p) in cases {
                let Err(why) = on.gate_arguments(&p) else {
                    continue;
                };
                if off.gate_arguments(&p).is_err() {
                    continue;
                }
                refusals += 1;
                let mut known = p.to_string();
                known.push_str(&off.path);
                // The refusal quotes the check's own regex (`\x{2013}` of desk_task's).
                known.push_str(&patterns(&on));
                for (_, hd) in &off.headings {
                    known.push_str(hd);
                }
                for n in numbers_in(&why) {
                    if !known.contains(&n) {
                        leaks.push(format!(
                            "{name} {what} ({case}): says {n}, not the model's: {why}"
                        ));
                    }
                }
                for e in &expected {
                    if why.contains(e.as_str()) && !p.to_string().contains(e.as_str()) {
                        leaks.push(format!(
                            "{name} {what} ({case}): says the expected value {e}: {why}"
                        ));
                    }
                }
            }
        }
    }
    assert!(refusals > 30, "only {refusals} refusals");
    assert!(
        leaks.is_empty(),
        "a refusal must hold only what the model wrote:\n{}",
        leaks.join("\n")
    );
}

/// A hostile contract: extra numeric checks on the Physics section whose tolerance, units and
/// expected sources hold the answer's digits, located by regexes with quantifiers, and one
/// allowing exactly one statement. The model writes no digit at all; the refusal must hold none
/// (beyond the contract's own pattern text it quotes) and never the expected value.
#[test]
fn r2_hostile_contract_says_no_expected_value() {
    let h = Harness::desk_suite_mission(GRADEBOOK, |m| {
        let checks = m["checks"].as_array_mut().unwrap();
        checks.push(json!({
            "id": "hostile-once", "kind": "numeric_consistency", "path": REPORT,
            "stated": {"regex": "(?im)^\\s*physics median\\s*:\\s*(.*?)\\s*$"},
            "expected": {"from": "csv", "path": "grades/term-1.csv", "op": "mean", "column": "points",
                         "filter": {"column": "course", "equals": "physics"}},
            "tolerance": 70.4, "units": ["pts"], "occurrences": "exactly_one", "section": "Physics"
        }));
        checks.push(json!({
            "id": "hostile-sum", "kind": "numeric_consistency", "path": REPORT,
            "stated": {"regex": "(?im)^\\s*physics points\\s*:\\s*(.*?)\\s*$"},
            "expected": {"from": "csv", "path": "grades/term-1.csv", "op": "sum", "column": "points"},
            "units": ["points"], "section": "History"
        }));
    });
    let on = outline(&h, false, true).unwrap();
    let physics = "Physics median: seventy pts or so\nPhysics median: about seventy\nPhysics points: many points | more\nPhysics average: unknown\nPhysics best: ninety | high";
    let p = gradebook(physics, "History average: n/a");
    let why = on.gate_arguments(&p).unwrap_err();
    let sum = expected_values(
        &h,
        REPORT,
        "## Math\n\n## Physics\n\n## History\n\nPhysics points: 1\n\n## Overall\n",
    );
    assert!(!sum.is_empty());
    for e in sum
        .iter()
        .chain(["70.4".to_string(), "90".to_string()].iter())
    {
        assert!(
            !why.contains(e.as_str()),
            "says the expected value {e}: {why}"
        );
    }
    let only_counts: Vec<String> = numbers_in(&why)
        .into_iter()
        .filter(|n| !p.to_string().contains(n.as_str()))
        .collect();
    // The only number the model did not write is the count of its own statements (`2
    // statements of the number; this check allows exactly one`).
    assert!(
        only_counts.iter().all(|n| n == "2") && why.contains("2 statements"),
        "numbers the model did not write: {only_counts:?} in {why}"
    );
}

// ---------------------------------------------------------------------------------------------
// R3: a refused call writes nothing; hostile text does not panic; the refusal is bounded.
// ---------------------------------------------------------------------------------------------

/// The gold is written, then a joined write_sections and a joined rewrite_section are refused:
/// the file on disk is the gold byte for byte and the journal says `invalid` for both.
#[test]
fn r3_refused_calls_leave_the_file_untouched() {
    let h = Harness::desk_suite(GRADEBOOK);
    let (out, _, _) = run_calls(
        &h,
        &[
            ("write_sections", gradebook(GOLD_PHYSICS, GOLD_HISTORY)),
            ("write_sections", gradebook(JOINED_PHYSICS, GOLD_HISTORY)),
            (
                "rewrite_section",
                json!({"path": REPORT, "heading": "Physics", "text": JOINED_PHYSICS}),
            ),
            (
                "rewrite_section",
                json!({"path": REPORT, "heading": "Overall", "text": "Fails in total: 5 of 40 rows"}),
            ),
        ],
        levers(true, true, false),
    );
    let w = step_outcomes(&h, &out, "write_sections");
    let r = step_outcomes(&h, &out, "rewrite_section");
    assert_eq!(w[0].0, "executed", "{w:?}");
    assert_eq!(w[1].0, "invalid", "{w:?}");
    assert_eq!(r.len(), 2, "{r:?}");
    assert!(r.iter().all(|(o, _)| o == "invalid"), "{r:?}");
    assert!(
        r[0].1
            .starts_with("rewrite_section would write figure lines"),
        "{r:?}"
    );
    let on_disk = std::fs::read_to_string(h.workspace.join(REPORT)).unwrap();
    let gold = rendered(
        &outline(&h, false, false)
            .unwrap()
            .gate_arguments(&gradebook(GOLD_PHYSICS, GOLD_HISTORY))
            .unwrap()
            .0,
    );
    assert_eq!(on_disk, gold, "a refused call changed the file");
    assert!(out.passed(), "{}", out.reason());
}

/// Hostile bodies: NUL, bidi controls, unclosed fences and comments, nested HTML, a style
/// element, lone CRs, a megabyte of statements. None panics, each answers within seconds, and
/// a refusal still holds no digit the model did not write.
#[test]
fn r3_hostile_text_does_not_panic() {
    let h = Harness::desk_suite(GRADEBOOK);
    let on = outline(&h, false, true).unwrap();
    let huge: String = (0..40_000)
        .map(|i| format!("Physics average: {i} | x\n"))
        .collect();
    let bodies: Vec<String> = vec![
        "Physics average: 70.4\u{0}\nPhysics best: 9\u{0}0".into(),
        "Physics average: \u{202E}4.07\u{202C}\nPhysics best: 90".into(),
        "Physics average: 70.4\u{2066}\nPhysics best: 90".into(),
        "Physics average: 70.4\n```\nPhysics best: 90 | x".into(),
        "Physics average: 70.4\n<!-- Physics best: 90 | x".into(),
        "<div><div><span>Physics average: 70.4 | x</span></div>\n\nPhysics best: 90".into(),
        "<details><summary>Physics average: 70.4 | 1</summary>\n\nPhysics best: 90 | 2\n</details>"
            .into(),
        "<style>p{}</style>\nPhysics average: 70.4".into(),
        "Physics average: 70.4\rPhysics best: 90\rPhysics fails: 2".into(),
        "Physics average: \u{FEFF}70.4\nPhysics best: ９０".into(),
        "Physics average: 1e400\nPhysics best: 99999999999999999999999999999999999999999".into(),
        "Physics average: ".to_string() + &"9".repeat(400) + ".5",
        huge,
    ];
    let code_point = regex::Regex::new(r"U\+[0-9A-F]{4}").unwrap();
    for b in &bodies {
        let t = std::time::Instant::now();
        let r = on.gate_arguments(&gradebook(b, GOLD_HISTORY));
        let secs = t.elapsed().as_secs_f64();
        assert!(secs < 20.0, "{secs}s for a {}-char body", b.len());
        if let Err(why) = r {
            let written = gradebook(b, GOLD_HISTORY).to_string();
            // A bidi control is named by its code point (`U+202E`).
            let why = code_point.replace_all(&why, "U+code").to_string();
            for n in numbers_in(&why) {
                assert!(
                    written.contains(&n) || REPORT.contains(&n),
                    "says {n}: {}",
                    &why[..why.len().min(400)]
                );
            }
        }
    }
}

/// The longest refusal a model may be sent before it floods the prompt: the gate clips a
/// tool's result at 6,000 characters (`MAX_RESULT_CHARS`); a refusal should not be longer.
const BOUNDED_CHARS: usize = 6_000;

/// 300 distinct unreadable statements of one figure (about 9,000 characters, within the
/// 32,000-character input cap): the judge says one fact per statement and the refusal lists
/// them all, unclipped, in the model's next prompt.
#[test]
fn r3_refusal_of_many_unreadable_statements_is_bounded() {
    let h = Harness::desk_suite(GRADEBOOK);
    let physics: String = (0..300)
        .map(|i| format!("Physics average: 70.4 q{i}\n"))
        .collect();
    let p = gradebook(&physics, GOLD_HISTORY);
    let why = outline(&h, false, true)
        .unwrap()
        .gate_arguments(&p)
        .unwrap_err();
    // End to end: what the model reads next.
    let (out, _, model) = run_calls(&h, &[("write_sections", p)], levers(true, false, false));
    let w = step_outcomes(&h, &out, "write_sections");
    assert_eq!(w[0].0, "invalid");
    // The whole refusal reaches the model's next prompt, down to the last statement's fact.
    let next = model.prompt(2);
    assert!(
        next.contains("70.4 q299"),
        "the next prompt holds the whole refusal"
    );
    assert!(
        why.chars().count() <= BOUNDED_CHARS,
        "the refusal is {} characters ({} facts of one figure, each listed): it must be capped \
         (say, the first few facts and a count of the rest), not flood the prompt. Its start: {}",
        why.chars().count(),
        why.matches("states `").count(),
        &why[..why.len().min(300)]
    );
}

/// A contract with 100 figure checks on one section, each stated unreadably once.
#[test]
fn r3_refusal_of_a_hundred_failing_checks_is_bounded() {
    let h = Harness::desk_suite_mission(GRADEBOOK, |m| {
        let checks = m["checks"].as_array_mut().unwrap();
        for i in 0..100 {
            checks.push(json!({
                "id": format!("item-{i}"), "kind": "numeric_consistency", "path": REPORT,
                "stated": {"regex": format!("(?im)^\\s*item {i} count\\s*:\\s*(.*?)\\s*$")},
                "expected": {"from": "csv", "path": "grades/term-1.csv", "op": "count"},
                "section": "Physics"
            }));
        }
    });
    let physics: String = GOLD_PHYSICS.to_string()
        + "\n"
        + &(0..100)
            .map(|i| format!("Item {i} count: {i} or so\n"))
            .collect::<String>();
    let why = outline(&h, false, true)
        .unwrap()
        .gate_arguments(&gradebook(&physics, GOLD_HISTORY))
        .unwrap_err();
    assert!(
        why.chars().count() <= BOUNDED_CHARS,
        "the refusal is {} characters for 100 failing checks: it must be capped. Its start: {}",
        why.chars().count(),
        &why[..why.len().min(300)]
    );
}

// ---------------------------------------------------------------------------------------------
// R4: lever off as before; with line-fields, no livelock.
// ---------------------------------------------------------------------------------------------

/// With the lever off the outline holds no figure check, the joined report is written, and
/// every prompt and decoding schema of a run is the same with the lever on and off (the lever
/// only ever speaks in a refusal).
#[test]
fn r4_lever_off_is_as_before_and_on_changes_no_prompt() {
    let h = Harness::desk_suite(GRADEBOOK);
    assert!(outline(&h, false, false).unwrap().figure_checks.is_empty());
    assert!(outline(&h, true, false).unwrap().figure_checks.is_empty());
    let run = |on: bool| {
        let h = Harness::desk_suite(GRADEBOOK);
        let script = line("read_file", json!({"path": "grades/term-1.csv"}))
            + &line("write_sections", gradebook(GOLD_PHYSICS, GOLD_HISTORY))
            + &line("read_file", json!({"path": REPORT}))
            + &finish_line();
        let mut model = PromptRecorder::new(&script, "r4.jsonl");
        let (out, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
            o.levers = levers(on, true, false);
            o.constrained = true;
            o.limits.attempts = 1;
        });
        assert!(out.passed(), "{}", out.reason());
        model
            .requests
            .iter()
            .map(|r| (format!("{:?}", r.prompt), r.json_schema.clone()))
            .collect::<Vec<_>>()
    };
    let (off, on) = (run(false), run(true));
    assert_eq!(off.len(), on.len());
    for (i, (a, b)) in off.iter().zip(&on).enumerate() {
        // The journal's run ids and paths differ between the two workspaces.
        assert_eq!(a.1, b.1, "schema of call {i}");
        assert_eq!(a.0.len(), b.0.len(), "prompt of call {i}");
    }
    let h2 = Harness::desk_suite(GRADEBOOK);
    let (out, _, _) = run_calls(
        &h2,
        &[("write_sections", gradebook(JOINED_PHYSICS, GOLD_HISTORY))],
        levers(false, true, false),
    );
    assert_eq!(step_outcomes(&h2, &out, "write_sections")[0].0, "executed");
    let _ = h;
}

/// Every task with line fields, both levers on: with each field a plain number and each text a
/// sentence without any figure, the only figure lines are Rein's own; no such call may be
/// refused (the model could not change them). The same with the gold's own numbers in the
/// fields and the gold's texts, which `line-fields` trims of the lines it writes itself.
/// `n` as a line field whose `pattern` holds it: plain, or with the decimals its check asks for.
fn field_value(pattern: &str, n: f64) -> String {
    let held = regex::Regex::new(pattern).unwrap();
    std::iter::once(format!("{n}"))
        .chain((0..=6).map(|d| format!("{n:.d$}")))
        .find(|v| held.is_match(v))
        .unwrap_or_else(|| format!("{n}"))
}

#[test]
fn r4_rein_s_own_lines_are_never_refused() {
    let mut tried = 0;
    let mut refused = Vec::new();
    for (name, dir) in task_dirs() {
        let h = harness_of(&dir);
        let Some(both) = outline(&h, true, true) else {
            continue;
        };
        if both.lines.is_empty() {
            continue;
        }
        let mut p = Map::new();
        p.insert("path".into(), json!(both.path));
        if both.title {
            p.insert("title".into(), json!("Report"));
        }
        for (i, (_, hd)) in both.headings.iter().enumerate() {
            p.insert(hd.clone(), json!(format!("Text {i}.")));
        }
        for (i, f) in both.lines.iter().enumerate() {
            p.insert(
                f.label.clone(),
                json!(field_value(&f.pattern(), (7 + i) as f64)),
            );
        }
        tried += 1;
        if let Err(why) = both.gate_arguments(&Value::Object(p.clone())) {
            refused.push(format!("{name} (plain texts): {why}"));
        }
        // The gold's texts with the gold's figures in the fields.
        let off = outline(&h, false, false).unwrap();
        for (what, text) in passing_reports(&dir, &both.path) {
            let Some(gold) = split(&off, &text) else {
                continue;
            };
            let mut q = gold.as_object().unwrap().clone();
            for f in &both.lines {
                let v = text
                    .lines()
                    .find_map(|l| rein_engine::checks::stated_in_line(&f.check, l))
                    .map(|n| field_value(&f.pattern(), n));
                if let Some(v) = v {
                    q.insert(f.label.clone(), json!(v));
                }
            }
            // A gold whose lines the checks' regexes do not read one by one (list items,
            // bold labels) gives no field value: not a case for this test.
            if both.lines.iter().any(|f| !q.contains_key(&f.label)) {
                continue;
            }
            if off.gate_arguments(&gold).is_err() {
                continue;
            }
            tried += 1;
            if let Err(why) = both.gate_arguments(&Value::Object(q)) {
                refused.push(format!("{name} {what}: {why}"));
            }
        }
    }
    assert!(tried > 10, "{tried}");
    assert!(
        refused.is_empty(),
        "with both levers, a call whose only figures are Rein's own lines (or the gold's) must be written:\n{}",
        refused.join("\n")
    );
}

/// report-gradebook with both levers: the Math lines are fields (Rein writes them), the Physics
/// lines are the model's. A joined Physics line is refused by `readable-figures`, a joined Math
/// text is taken out by `line-fields`; after the model does what the refusal says, the call is
/// written and passes.
#[test]
fn r4_both_refusals_lead_to_a_write() {
    let h = Harness::desk_suite(GRADEBOOK);
    let fields = |math: &str, physics: &str| {
        json!({
            "path": REPORT,
            "Math": math, "Math average": "78.1", "Math best": "96", "Math fails": "0",
            "Physics": physics, "History": GOLD_HISTORY,
            "Overall": "All courses above.", "Fails in total": "5",
        })
    };
    let (out, _, model) = run_calls(
        &h,
        &[
            (
                "write_sections",
                fields(
                    "Math average: 78.1 | Math best: 96 | Math fails: 0",
                    JOINED_PHYSICS,
                ),
            ),
            (
                "write_sections",
                fields(
                    "Math average: 78.1 | Math best: 96 | Math fails: 0",
                    GOLD_PHYSICS,
                ),
            ),
        ],
        levers(true, false, true),
    );
    let w = step_outcomes(&h, &out, "write_sections");
    assert_eq!(w[0].0, "invalid", "{w:?}");
    assert!(w[0].1.contains("cannot read as one number"), "{w:?}");
    assert_eq!(w[1].0, "executed", "{w:?}");
    assert!(out.passed(), "{}", out.reason());
    let _ = model;
}

// ---------------------------------------------------------------------------------------------
// R5: rewrite_section on a file whose other sections are unreadable.
// ---------------------------------------------------------------------------------------------

/// The file was written with `create_file` (which the lever does not guard) with the Physics
/// and the History averages followed by a word. The model then rewrites Physics right: refused,
/// because of History; it rewrites History right: refused, because of Physics. Neither
/// refusal names the section at fault, and neither says how out (rewrite that section, or
/// write the whole file with write_sections): every rewrite the model can make alone is
/// refused. A rewrite must be judged on what it changes, or the refusal must say where the
/// unreadable line stands and that write_sections writes the whole file.
#[test]
fn r5_rewrite_section_is_not_trapped_by_another_section() {
    let h = Harness::desk_suite(GRADEBOOK);
    let bad = "## Math\n\nMath average: 78.1\nMath best: 96\nMath fails: 0\n\n## Physics\n\nPhysics average: 70.4 points\nPhysics best: 90\nPhysics fails: 2\n\n## History\n\nHistory average: 63.5 points\nHistory best: 87\nHistory fails: 3\n\n## Overall\n\nFails in total: 5\n";
    let (out, _, _) = run_calls(
        &h,
        &[
            ("create_file", json!({"path": REPORT, "content": bad})),
            (
                "rewrite_section",
                json!({"path": REPORT, "heading": "Physics", "text": GOLD_PHYSICS}),
            ),
            (
                "rewrite_section",
                json!({"path": REPORT, "heading": "History", "text": GOLD_HISTORY}),
            ),
        ],
        levers(true, true, false),
    );
    assert_eq!(step_outcomes(&h, &out, "create_file")[0].0, "executed");
    let r = step_outcomes(&h, &out, "rewrite_section");
    assert_eq!(r.len(), 2, "{r:?}");
    if r.iter().any(|(o, _)| o == "executed") {
        return;
    }
    // Both refused: the model needs to be told where the fault is and how out.
    for ((_, why), other) in r.iter().zip(["History", "Physics"]) {
        assert!(
            why.contains(&format!("`{other}`")) && why.contains("write_sections"),
            "rewriting one section right was refused because of the unreadable line under \
             `{other}`, which the refusal neither names nor says how to fix (rewrite `{other}`, \
             or write the whole file with write_sections); the model rewriting `{other}` next \
             is refused again because of this section: a trap. Refusal: {why}"
        );
    }
}

/// The same trap where the escape exists: after both rewrites are refused, write_sections of
/// the whole file is written (the model is not locked out for good).
#[test]
fn r5_write_sections_gets_out_of_the_trap() {
    let h = Harness::desk_suite(GRADEBOOK);
    let bad = "## Math\n\nMath average: 78.1\nMath best: 96\nMath fails: 0\n\n## Physics\n\nPhysics average: 70.4 points\nPhysics best: 90\nPhysics fails: 2\n\n## History\n\nHistory average: 63.5 points\nHistory best: 87\nHistory fails: 3\n\n## Overall\n\nFails in total: 5\n";
    let (out, _, _) = run_calls(
        &h,
        &[
            ("create_file", json!({"path": REPORT, "content": bad})),
            (
                "rewrite_section",
                json!({"path": REPORT, "heading": "Physics", "text": GOLD_PHYSICS}),
            ),
            ("write_sections", gradebook(GOLD_PHYSICS, GOLD_HISTORY)),
        ],
        levers(true, true, false),
    );
    // Since the mend, the rewrite of Physics is not refused for History's old line either;
    // write_sections then writes the whole file.
    assert_eq!(step_outcomes(&h, &out, "rewrite_section")[0].0, "executed");
    assert_eq!(step_outcomes(&h, &out, "write_sections")[0].0, "executed");
    assert!(out.passed(), "{}", out.reason());
}

// ---------------------------------------------------------------------------------------------
// The absent-figure exemption, matched on the judge's wording.
// ---------------------------------------------------------------------------------------------

/// A figure counts as "absent" when every fact the judge says of it contains the words
/// `no statement matches`; the judge quotes the statement as written, so a statement holding
/// those words is taken for an absent figure and written, and the judge fails it. Absence must
/// be decided from the statements read (none matched), not from the wording of a fact.
#[test]
fn an_unreadable_statement_quoting_the_absence_words_is_not_taken_for_absent() {
    let h = Harness::desk_suite(GRADEBOOK);
    let physics = "Physics average: 70.4 (no statement matches the old sheet)\nPhysics best: 90\nPhysics fails: 2";
    let p = gradebook(physics, GOLD_HISTORY);
    let on = outline(&h, false, true).unwrap();
    let file = rendered(
        &outline(&h, false, false)
            .unwrap()
            .gate_arguments(&p)
            .unwrap()
            .0,
    );
    let failing: Vec<String> = numeric_verdicts(&h, REPORT, &file)
        .into_iter()
        .filter(|v| !v.1)
        .map(|v| v.0)
        .collect();
    assert_eq!(failing, vec!["physics-average".to_string()]);
    assert!(
        on.gate_arguments(&p).is_err(),
        "the judge cannot read `70.4 (no statement matches the old sheet)` as one number, yet \
         the call is written: the statement's own words made it look absent"
    );
}

// ---------------------------------------------------------------------------------------------
// The refusal's advice against a task line that goes on after its number.
// ---------------------------------------------------------------------------------------------

/// report-sales-regions quotes its region lines as `'<Region>: N EUR from N orders'`: text
/// follows the number. A line with a word too many (`(est.)`) is refused, and the refusal tells
/// the model to write "nothing after the number but its unit". Doing so (`North: 16,515.17
/// EUR`) is written (the figure is now absent for the regex, which needs `from`) and fails two
/// checks. The advice must not contradict the task's own line.
#[test]
fn the_advice_does_not_contradict_a_line_that_goes_on_after_its_number() {
    let h = Harness::desk_suite("report-sales-regions");
    let on = outline(&h, false, true).unwrap();
    let off = outline(&h, false, false).unwrap();
    let by_region = |north: &str| {
        json!({
            "path": "out/sales-report.md",
            "By region": format!("{north}\n- South: 7,975.86 EUR from 7 orders\n- East: 2,908.34 EUR from 4 orders\n- West: 12,610.95 EUR from 7 orders\n\nBest region: North"),
            "Overall": "Revenue: 40,010.32 EUR\nOrders: 30\nAverage order: 1,333.68 EUR",
        })
    };
    let why = on
        .gate_arguments(&by_region("- North: 16,515.17 EUR (est.) from 12 orders"))
        .unwrap_err();
    // The model follows the advice to the letter.
    let followed = by_region("- North: 16,515.17 EUR");
    let accepted = on.gate_arguments(&followed).is_ok();
    let file = rendered(&off.gate_arguments(&followed).unwrap().0);
    let failing: Vec<String> = numeric_verdicts(&h, "out/sales-report.md", &file)
        .into_iter()
        .filter(|v| !v.1)
        .map(|v| v.0)
        .collect();
    assert!(
        !(accepted && !failing.is_empty() && why.contains("nothing after the number but its unit")),
        "the refusal says to write nothing after the number but its unit; the task's line is \
         '<Region>: N EUR from N orders', and the line written that way is accepted and fails \
         {failing:?}. The advice should send the model to the task's line (or the judge's \
         statement) only. Refusal: {why}"
    );
}
