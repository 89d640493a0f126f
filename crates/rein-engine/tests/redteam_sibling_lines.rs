#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red-team attacks on lever `sibling-lines` (with `line-fields`): `stated::section_template`
//! as `line_fields::line_fields` uses it. Each test asserts the SAFE behaviour the lever
//! promises: it passes when the code is right and fails when the attack found a hole.

#[path = "line_fields_support/mod.rs"]
mod line_fields_support;
#[path = "agent_support/mod.rs"]
mod support;

use line_fields_support::{failed, finish, read, run};
use rein_engine::agent::{Levers, Outline};
use serde_json::{json, Value};
use support::{line, Harness};

const TASK: &str = "report-gradebook";
const REPORT: &str = "out/grade-report.md";
const COURSES: [&str; 3] = ["Math", "Physics", "History"];
const FIGURES: [&str; 3] = ["average", "best", "fails"];

/// report-gradebook with its three courses renamed `names` (prompt, headings, checks' sections
/// and regexes), and `edit` applied to the mission JSON after.
fn courses(names: [&str; 3], edit: impl FnOnce(&mut Value)) -> Harness {
    Harness::desk_suite_mission(TASK, |m| {
        let mut prompt = m["prompt"].as_str().unwrap().to_string();
        for (old, new) in COURSES.iter().zip(names) {
            prompt = prompt.replace(&format!("'## {old}'"), &format!("'## {new}'"));
            prompt = prompt.replace(&format!("'{old} "), &format!("'{new} "));
        }
        m["prompt"] = json!(prompt);
        for c in m["checks"].as_array_mut().unwrap() {
            if c["kind"] == "report_complete" {
                let mut hs: Vec<String> = names.iter().map(|s| s.to_string()).collect();
                hs.push("Overall".into());
                c["headings"] = json!(hs);
            }
            if c["kind"] != "numeric_consistency" {
                continue;
            }
            let Some(i) = COURSES.iter().position(|k| c["section"] == *k) else {
                continue;
            };
            let id = c["id"].as_str().unwrap().to_string();
            let figure = FIGURES.iter().find(|f| id.ends_with(*f)).unwrap();
            c["section"] = json!(names[i]);
            c["stated"]["regex"] = json!(format!(
                r"(?im)^\s*{} {figure}\s*:\s*(.*?)\.?\s*$",
                regex::escape(names[i])
            ));
        }
        edit(m);
    })
}

fn set_prompt(m: &mut Value, f: impl FnOnce(&str) -> String) {
    let p = m["prompt"].as_str().unwrap().to_string();
    m["prompt"] = json!(f(&p));
}

fn set_regex(m: &mut Value, id: &str, regex: &str) {
    support::check_mut(m, id)["stated"]["regex"] = json!(regex);
}

/// The outline's line fields with the lever on or off: (heading, template).
fn fields(h: &Harness, siblings: bool) -> Vec<(String, String)> {
    let Some(o) = Outline::of(&h.contract) else {
        return Vec::new();
    };
    o.with_line_fields(&h.contract, siblings)
        .lines
        .iter()
        .map(|f| (f.heading.clone(), f.template.clone()))
        .collect()
}

/// Every field of the outline: its line with a number is one its own check reads back as that
/// number; no two fields share a label; no label is a heading.
fn fields_are_sound(h: &Harness) {
    let Some(o) = Outline::of(&h.contract) else {
        return;
    };
    let o = o.with_line_fields(&h.contract, true);
    let mut labels: Vec<String> = Vec::new();
    for f in &o.lines {
        // Twelve as the field's pattern writes it (`12`, `12.0` where one decimal is asked).
        let twelve = ["12", "12.0", "12.00"]
            .into_iter()
            .find(|v| regex::Regex::new(&f.pattern()).unwrap().is_match(v))
            .unwrap();
        let l = f
            .line(twelve)
            .unwrap_or_else(|| panic!("{f:?} writes no line of {twelve}"));
        assert!(l.contains(twelve), "{l}");
        let key = f.label.to_lowercase();
        assert!(!labels.contains(&key), "two fields `{key}`");
        assert!(
            !o.headings.iter().any(|(_, h)| h.to_lowercase() == key),
            "label is a heading: {f:?}"
        );
        labels.push(key);
    }
}

// ---------------------------------------------------------------------------------------------
// (c) Rein never chooses between two lines.
// ---------------------------------------------------------------------------------------------

/// The task quotes two lines for Physics' average that its check reads (`'Physics mean: N'`,
/// and `'Physics average: N'` to forbid it): the task's own lines leave the choice open, so
/// `line-fields` makes no field of them. The lever must not then settle it by making
/// `'Physics average: N'` from Math's line: that is Rein choosing, and here it picks the very
/// line the task forbids.
#[test]
fn two_quoted_lines_for_the_section_are_not_settled_by_a_sibling_line() {
    let h = Harness::desk_suite_mission(TASK, |m| {
        set_prompt(m, |p| {
            format!("{p} Physics points are weighted, so under '## Physics' write 'Physics mean: N', never 'Physics average: N'.")
        });
        set_regex(
            m,
            "physics-average",
            r"(?im)^\s*physics (?:average|mean)\s*:\s*(.*?)\.?\s*$",
        );
    });
    let off = fields(&h, false);
    assert!(
        !off.iter().any(|(hd, _)| hd == "Physics"),
        "line-fields alone leaves the choice open: {off:?}"
    );
    let on = fields(&h, true);
    let physics: Vec<&(String, String)> = on
        .iter()
        .filter(|(hd, t)| hd == "Physics" && !t.contains("best") && !t.contains("fails"))
        .collect();
    assert!(
        physics.is_empty(),
        "Rein chose a line for Physics' average where the task quotes two: {physics:?}"
    );
}

/// Two headings each give a line for the section (`Applied Math` and `Math` both in the label
/// `Applied Math average`), and the check reads both: no field.
#[test]
fn two_made_lines_the_check_reads_give_no_field() {
    let h = courses(["Applied Math", "Math", "History"], |m| {
        // Math's (the second course's) check reads a line anywhere, with or without `Applied`.
        set_regex(m, "physics-average", r"(?i)math average\s*:\s*([0-9.]+)");
    });
    let on = fields(&h, true);
    assert!(
        !on.iter()
            .any(|(hd, t)| hd == "Math" && t.contains("average")),
        "{on:?}"
    );
    fields_are_sound(&h);
}

/// A heading that holds another as a word (`Applied Math`, `Math`) with anchored regexes: each
/// section gets its own line, read by its own check.
#[test]
fn a_heading_inside_another_heading_gives_each_its_own_line() {
    let h = courses(["Applied Math", "Math", "History"], |_| {});
    let on = fields(&h, true);
    assert!(
        on.contains(&("Math".to_string(), "Math average: N".to_string())),
        "{on:?}"
    );
    fields_are_sound(&h);
}

// ---------------------------------------------------------------------------------------------
// (c) No field for a placeholder label.
// ---------------------------------------------------------------------------------------------

#[test]
fn a_placeholder_label_gives_no_sibling_field() {
    for quoted in [
        "'<Course> average: N', '<Course> best: N' and '<Course> fails: N'",
        "'X average: N', 'X best: N' and 'X fails: N'",
        "'{Course} average: N', '{Course} best: N' and '{Course} fails: N'",
        "'Course average: N', 'Course best: N' and 'Course fails: N'",
    ] {
        let h = Harness::desk_suite_mission(TASK, |m| {
            set_prompt(m, |p| {
                p.replace(
                    "'Math average: N' (mean points, one decimal), 'Math best: N' (highest points) and 'Math fails: N'",
                    quoted,
                )
            });
        });
        let on = fields(&h, true);
        assert!(on.iter().all(|(hd, _)| hd == "Overall"), "{quoted}: {on:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// (e) Hostile headings: no panic, and every field still sound.
// ---------------------------------------------------------------------------------------------

#[test]
fn hostile_headings_do_not_panic_and_give_sound_fields() {
    let sets: [[&str; 3]; 12] = [
        ["Math", "C++", "History"],
        ["Math", "Physics (lab)", "a|b"],
        ["Math", ".*", "\\d+"],
        ["Math", "$1", "${0}"],
        ["Math", "Mathé", "数学"],
        ["Math", "Mathematics", "Math2"],
        ["Math", "Math average", "History"],
        ["Math", "Physics: N", "History: lab"],
        ["Math", "N", "X"],
        ["Math", "average", "best"],
        ["Math", "Physics\u{200b}", "Hi\u{301}story"],
        ["Math", "[", "(?x)"],
    ];
    for names in sets {
        let h = courses(names, |_| {});
        let on = fields(&h, true);
        eprintln!("{names:?}: {on:?}");
        fields_are_sound(&h);
        // The first course's lines are the task's; no other field than a course's or Overall's.
        for (hd, _) in &on {
            assert!(names.contains(&hd.as_str()) || hd == "Overall", "{hd}");
        }
    }
}

/// A heading that is a prefix of a word of the label (`Math` in `Mathematics average`) is no
/// whole word of it: no line is made from it.
#[test]
fn a_heading_that_is_a_prefix_of_a_label_word_makes_no_line() {
    let h = courses(["Mathematics", "Math", "History"], |m| {
        // Physics' (now Math's) check would read `Math average: N` if it were made.
        let _ = m;
    });
    let on = fields(&h, true);
    // `Mathematics average: N` holds `Math` only as a prefix: Math's line can only come from
    // Mathematics as a whole word, which gives `Math average: N` — right; but never
    // `Mathaverage` or `Mathematicsematics` and the like.
    for (_, t) in &on {
        assert!(
            !t.contains("ematicsematics") && !t.contains("Mathaverage"),
            "{t}"
        );
    }
    fields_are_sound(&h);
}

/// A heading equal to the label of the quoted line (`Math average` as a section) makes no field
/// whose label is a heading.
#[test]
fn a_heading_equal_to_a_label_gives_no_field_named_as_a_heading() {
    let h = courses(["Math", "Math average", "History"], |_| {});
    fields_are_sound(&h);
}

/// A prompt with many quoted lines and many sections: computing the fields stays quick (the
/// lever compiles a regex for each quoted line, heading and check).
#[test]
fn many_quoted_lines_and_sections_stay_quick() {
    let n = 30;
    let names: Vec<String> = (0..n).map(|i| format!("Course{i}")).collect();
    let h = Harness::desk_suite_mission(TASK, |m| {
        let mut quoted = String::new();
        for i in 0..400 {
            quoted.push_str(&format!("'Course0 figure{i}: N', "));
        }
        set_prompt(m, |p| format!("{p} Lines such as {quoted}."));
        let mut checks: Vec<Value> = Vec::new();
        let mut hs = names.clone();
        hs.push("Overall".into());
        for c in m["checks"].as_array().unwrap() {
            if c["kind"] == "report_complete" {
                let mut c = c.clone();
                c["headings"] = json!(hs);
                checks.push(c);
            } else if c["kind"] != "numeric_consistency" {
                checks.push(c.clone());
            }
        }
        for (i, name) in names.iter().enumerate() {
            checks.push(json!({
                "id": format!("c{i}"), "kind": "numeric_consistency", "path": REPORT,
                "stated": {"regex": format!(r"(?im)^\s*{name} figure399\s*:\s*(.*?)\.?\s*$")},
                "expected": {"from": "csv", "path": "grades/term-1.csv", "op": "max", "column": "points"},
                "tolerance": 0, "section": name
            }));
        }
        m["checks"] = json!(checks);
    });
    let started = std::time::Instant::now();
    let off = fields(&h, false);
    let took_off = started.elapsed();
    let started = std::time::Instant::now();
    let on = fields(&h, true);
    let took = started.elapsed();
    eprintln!(
        "{} fields in {took:?} ({} in {took_off:?} without the lever)",
        on.len(),
        off.len()
    );
    assert_eq!(on.len(), n, "{on:?}");
    // A ratio, not a time: the machine is shared.
    assert!(
        took.as_secs_f64() < took_off.as_secs_f64() * 2.0 + 1.0,
        "line fields took {took:?} with the lever, {took_off:?} without"
    );
}

// ---------------------------------------------------------------------------------------------
// (a)/(b) Through a run: the sibling lines are read where they are written; a wrong number
// still fails.
// ---------------------------------------------------------------------------------------------

fn levers(siblings: bool, line_fields: bool) -> Levers {
    Levers {
        write_sections: true,
        stated_lines: true,
        plain_bodies: true,
        line_fields,
        sibling_lines: siblings,
        ..Levers::DEFAULT
    }
}

fn reads() -> String {
    ["grades/README.md", "grades/term-1.csv"]
        .iter()
        .map(|p| line("read_file", json!({ "path": p })))
        .collect()
}

/// A course section's text that states its own line otherwise, as the 1.5B wrote it: with the
/// field's right number, the file must not state another (refused, or the judge passes it).
#[test]
fn a_section_text_that_states_the_sibling_figure_otherwise_is_refused_or_passes() {
    let h = Harness::desk_suite(TASK);
    let v = json!({
        "path": REPORT,
        "Math": "Math was the strongest course this term.",
        "Math average": "78.1", "Math best": "96", "Math fails": "0",
        "Physics": "Physics average: 71 | Physics best: 90 | Physics fails: 2\n**Physics average:** 75",
        "Physics average": "70.4", "Physics best": "90", "Physics fails": "2",
        "History": "History had the most fails.",
        "History average": "63.5", "History best": "87", "History fails": "3",
        "Overall": "Five fails across the three courses.",
        "Fails in total": "5",
    });
    let script = reads() + &line("write_sections", v) + &finish(REPORT);
    let (out, _) = run(&h, &script, levers(true, true));
    if h.workspace.join(REPORT).exists() {
        let f = failed(&out);
        assert!(
            !f.iter().any(|id| id.starts_with("physics")),
            "Rein wrote Physics' lines with right numbers, yet {f:?} failed:\n{}",
            read(&h, REPORT)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// (d) The lever off, or without line-fields, changes nothing.
// ---------------------------------------------------------------------------------------------

fn write_sections_schema(h: &Harness, l: Levers) -> Value {
    let (_, model) = run(h, &reads(), l);
    model.requests[0].json_schema.as_ref().unwrap()["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["properties"]["action"]["const"] == "write_sections")
        .map(|b| b["properties"]["parameters"].clone())
        .unwrap()
}

#[test]
fn without_line_fields_the_lever_changes_nothing() {
    let h = Harness::desk_suite(TASK);
    let both_off = write_sections_schema(&h, levers(false, false));
    let h = Harness::desk_suite(TASK);
    let sibling_only = write_sections_schema(&h, levers(true, false));
    assert_eq!(both_off, sibling_only);
    let h = Harness::desk_suite(TASK);
    let (_, m1) = run(&h, &reads(), levers(false, false));
    let h = Harness::desk_suite(TASK);
    let (_, m2) = run(&h, &reads(), levers(true, false));
    assert_eq!(m1.prompt(0), m2.prompt(0));
}

#[test]
fn lever_off_every_desk_task_has_only_the_task_s_lines() {
    let dir = support::missions_dir().join("../suites/desk");
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if !e.path().join("mission.json").exists() {
            continue;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        let h = Harness::desk_suite(&name);
        let off = fields(&h, false);
        let on = fields(&h, true);
        // On adds to off and never takes or changes a line of it.
        for f in &off {
            assert!(
                on.contains(f),
                "{name}: {f:?} lost with the lever on: {on:?}"
            );
        }
        fields_are_sound(&h);
    }
}
