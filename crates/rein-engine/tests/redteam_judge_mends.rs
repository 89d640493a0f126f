//! Red team of commit 251ae2b: HTML `<h1>`-`<h6>` headings and the single-`#` repair of the
//! prose reader, `not_copied` per section (summarize-feedback), the per-section number-line
//! counters of report-timesheets, and stats-first's figures written with their check's
//! decimals.
//!
//! Each deliverable is judged by the task's own frozen contract (its mission.json, its
//! fixtures) with the deliverable put in the world, as `rein check-mission` judges it; only the
//! checks that read the deliverable decide here. A hole is `#[ignore = "HOLE: ..."]` and asserts
//! what the judge (or Rein) should do, so it fails today; the attacks that hold are plain tests.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

#[path = "agent_support/mod.rs"]
mod support;

#[path = "judge_support/mod.rs"]
mod judge;

use judge::{failed_of, gold, judge_with, Tally, DESK, SUMMARY};
use serde_json::{json, Value};
use support::{check_mut, finish_line, stats_first_prompts, stats_results, task_lines, Harness};

const FEEDBACK: &str = "summarize-feedback";
const FEEDBACK_PATH: &str = "out/feedback-summary.md";
const INCIDENT: &str = "summarize-incident";
const INCIDENT_PATH: &str = "out/incident-summary.md";
const HOURS: &str = "report-timesheets";
const HOURS_PATH: &str = "out/hours.md";

const COMPLAINT: &str =
    "The most common complaint is that sync loses or overwrites notes that were \
                         edited offline; it comes up in six responses, mostly from mobile users.";
const PRAISE: &str = "People like the new editor, easy sharing with a team and the templates.";

/// The gold of summarize-feedback with its Main complaint and Praise bodies replaced.
fn feedback_with(complaint: &str, praise: &str) -> String {
    let g = gold(FEEDBACK, FEEDBACK_PATH);
    assert!(g.contains(COMPLAINT) && g.contains(PRAISE));
    g.replace(COMPLAINT, complaint).replace(PRAISE, praise)
}

/// Every Markdown heading of `text` (`# X`, `## X`) written as the HTML heading of its level.
fn html_headings(text: &str) -> String {
    text.lines()
        .map(|l| {
            let hashes = l.chars().take_while(|c| *c == '#').count();
            if hashes > 0 && l[hashes..].starts_with(' ') {
                format!("<h{hashes}>{}</h{hashes}>", l[hashes..].trim())
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

// =============================================================================================
// 1a. HTML headings.

#[test]
fn a_report_with_its_headings_in_html_passes() {
    let mut t = Tally::default();
    for (task, path) in [
        (DESK, SUMMARY),
        (FEEDBACK, FEEDBACK_PATH),
        (INCIDENT, INCIDENT_PATH),
        (HOURS, HOURS_PATH),
    ] {
        let g = gold(task, path);
        t.accepted(task, path, &html_headings(&g), "every heading as <hN>");
        t.accepted(
            task,
            path,
            &html_headings(&g)
                .replace("<h2>", "<H2 id=\"s\">")
                .replace("</h2>", "</H2>"),
            "<H2 id=..> headings",
        );
        t.accepted(
            task,
            path,
            &html_headings(&g)
                .replace("<h2>", "<div><h2>")
                .replace("</h2>", "</h2></div>"),
            "headings wrapped in <div>",
        );
    }
    t.check();
}

/// The gold of desk_task with a neutral extra section whose title is `extra`, before Risks.
fn desk_with_extra(extra: &str) -> String {
    gold(DESK, SUMMARY).replacen(
        "## Risks",
        &format!("{extra}\n\nThe next meeting is on Monday at ten, in the usual room.\n\n## Risks"),
        1,
    )
}

#[test]
fn an_extra_html_heading_that_shows_fails_in_every_spelling() {
    let mut t = Tally::default();
    for extra in [
        "<H3>Notes</H3>",
        "<h4 id=\"notes\" title=\"n\">Notes</h4>",
        "<h2>N&#111;tes</h2>",
        "<h2><b>Notes</b></h2>",
        "<div align=\"left\"><h5>Notes</h5></div>",
        "> <h2>Notes</h2>",
        "- <h2>Notes</h2>",
        "Some text first. <h2>Notes</h2>",
        "<h2>Notes",
    ] {
        t.caught_by(
            DESK,
            SUMMARY,
            &desk_with_extra(extra),
            "summary-complete",
            extra,
        );
    }
    t.check();
}

#[test]
fn an_html_heading_that_cannot_show_is_no_extra_section() {
    let mut t = Tally::default();
    for hidden in [
        "<!-- <h2>Notes</h2> -->",
        "<!--\n\n<h2>Notes</h2>\n\n-->",
        "```\n<h2>Notes</h2>\n```",
        "    <h2>Notes</h2>",
        "<div hidden><h2>Notes</h2></div>",
        "<h2 style=\"display:none\">Notes</h2>",
        "<h2 class=\"sr-only\">Notes</h2>",
        "`<h2>Notes</h2>`",
    ] {
        let right = gold(DESK, SUMMARY).replacen("## Risks", &format!("{hidden}\n\n## Risks"), 1);
        t.accepted(DESK, SUMMARY, &right, hidden);
    }
    t.check();
}

#[test]
fn a_required_heading_that_cannot_show_is_missing() {
    let mut t = Tally::default();
    for hidden in [
        "<h2 hidden>Risks</h2>",
        "<!-- <h2>Risks</h2> -->",
        "<h2 style=\"display:none\">Risks</h2>",
        "<h2><span style=\"display:none\">Risks</span></h2>",
    ] {
        let wrong = gold(DESK, SUMMARY).replace("## Risks", hidden);
        t.caught_by(DESK, SUMMARY, &wrong, "summary-complete", hidden);
    }
    t.check();
}

/// Was a hole, mended in the same session (found by this file's red team).
#[test]
fn person_lines_swallowed_by_an_html_heading_block_fail() {
    let mut t = Tally::default();
    let wrong = gold(HOURS, HOURS_PATH)
        .replace("## By person\n\n", "<h2>By person</h2>\n")
        .replace("## By project\n\n", "<h2>By project</h2>\n")
        .replace("- ", "");
    t.rejected(
        HOURS,
        HOURS_PATH,
        &wrong,
        "the person lines rendered as one paragraph",
    );
    t.check();
}

/// Was a hole, mended in the same session (found by this file's red team).
#[test]
fn an_empty_heading_does_not_end_a_section() {
    let mut t = Tally::default();
    for empty in ["<h2></h2>", "<h2>&nbsp;</h2>", "##"] {
        let wrong = gold(HOURS, HOURS_PATH).replace(
            "- Tariq: 64 hours\n",
            &format!(
                "- Tariq: 64 hours\n\n{empty}\n\n- Ines, intranet: 24 hours\n- Ines, support: 10 hours\n\
                 - Tariq, harbor-app: 20 hours\n- Tariq, support: 26 hours\n- Tariq, intranet: 18 hours\n"
            ),
        );
        t.rejected(
            HOURS,
            HOURS_PATH,
            &wrong,
            &format!("{empty} then a breakdown"),
        );
    }
    t.check();
}

#[test]
fn an_empty_heading_before_a_paste_is_still_caught_where_headings_are_exact() {
    let mut t = Tally::default();
    for empty in ["<h2></h2>", "<h2>&nbsp;</h2>", "##"] {
        let pasted = feedback_with(
            COMPLAINT,
            &format!(
                "{PRAISE}\n\n{empty}\n\nFast and clean, the new editor is great. Sharing with my team \
                 is so easy now. Templates save me time every day."
            ),
        );
        t.rejected(
            FEEDBACK,
            FEEDBACK_PATH,
            &pasted,
            &format!("{empty} then a paste"),
        );
    }
    t.check();
}

// =============================================================================================
// 1b. `#Word` without a space.

/// Was a hole, mended in the same session (found by this file's red team).
#[test]
fn compact_single_hash_headings_are_headings() {
    let mut t = Tally::default();
    let g = gold(DESK, SUMMARY);
    let compact: String = g
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.replacen("## ", "#", 1).replacen("# ", "#", 1) + "\n")
        .collect();
    t.accepted(DESK, SUMMARY, &compact, "`#Goal` after a paragraph line");
    let ruled = g.replace("\n## ", "\n---\n#");
    t.accepted(DESK, SUMMARY, &ruled, "`#Goal` right after a `---` rule");
    let after_list = g
        .replace("\nTotal hours: 64\n", "\n- Total hours: 64\n")
        .replace("- Total hours: 64\n\n## Risks", "- Total hours: 64\n#Risks");
    t.accepted(
        DESK,
        SUMMARY,
        &after_list,
        "`#Risks` right after a list item",
    );
    t.check();
}

/// Was a hole, mended in the same session (found by this file's red team).
#[test]
fn two_wrapped_lines_starting_with_channels_stay_text() {
    let mut t = Tally::default();
    let right = gold(INCIDENT, INCIDENT_PATH).replace(
        "which did not help; the expired",
        "which did not help;\n#payments was told, and\n#checkout-oncall then saw that the expired",
    );
    t.accepted(
        INCIDENT,
        INCIDENT_PATH,
        &right,
        "`#payments` then `#checkout-oncall`",
    );
    t.check();
}

#[test]
fn single_hash_repairs_that_hold() {
    let mut t = Tally::default();
    // `##Risks` right after a text line is still a heading, and `#Notes` after a heading too.
    let g = gold(DESK, SUMMARY);
    let right = g.replace("Total hours: 64\n\n## Risks", "Total hours: 64\n##Risks");
    t.accepted(DESK, SUMMARY, &right, "`##Risks` after a text line");
    let wrong = g.replace(
        "## Risks\n\n",
        "## Risks\n#Notes\nThe next meeting is on Monday at ten.\n\n",
    );
    t.caught_by(
        DESK,
        SUMMARY,
        &wrong,
        "summary-complete",
        "`#Notes` after a heading",
    );
    // `#1` and `#64` never become headings, first line of a paragraph or not.
    let right = g.replace(
        "Total hours: 64\n",
        "Total hours: 64\n\n#1 risk below, #64 is the total.\n",
    );
    t.accepted(DESK, SUMMARY, &right, "`#1 risk` after a blank line");
    t.check();
}

// =============================================================================================
// 2. not_copied per section.

#[test]
fn a_paste_in_a_section_fails_however_the_section_is_marked() {
    let mut t = Tally::default();
    let paste = "Fast and clean, the new editor is great. Sharing with my team is so easy now. \
                 Templates save me time every day. Best notes app I have used.";
    for (why, text) in [
        (
            "<h2>Praise</h2>",
            feedback_with(COMPLAINT, paste).replace("## Praise", "<h2>Praise</h2>"),
        ),
        (
            "a paste hidden in <div hidden>",
            feedback_with(COMPLAINT, &format!("{PRAISE}\n\n<div hidden>{paste}</div>")),
        ),
        (
            "a paste as image alt text",
            feedback_with(COMPLAINT, &format!("{PRAISE}\n\n![{paste}](x.png)")),
        ),
        (
            "a paste in a table",
            feedback_with(
                COMPLAINT,
                &format!(
                    "{PRAISE}\n\n| Quote |\n|---|\n| {} |",
                    paste.replace(". ", ". |\n| ")
                ),
            ),
        ),
        (
            "a paste under a second ## Praise",
            feedback_with(COMPLAINT, PRAISE) + "\n## Praise\n\n" + paste + "\n",
        ),
    ] {
        t.caught_by(FEEDBACK, FEEDBACK_PATH, &text, "praise-own-words", why);
    }
    t.check();
}

#[test]
#[ignore = "HOLE (false pass): praise-own-words/complaint-own-words read responses.csv as a \
            table, where only a verbatim run counts (gap 0); a small model turns first person \
            into third when it pastes, `Templates save them time every day.`, which cuts every \
            run under 5 words: the five praise (three complaint) responses pasted one after \
            another pass all three not_copied checks (reading the comments column as \
            prose, pieces of 3 words chained across gaps, was tried and does not catch it: a \
            word changes every 2-3 words)"]
fn responses_pasted_with_their_pronouns_changed_fail() {
    let mut t = Tally::default();
    let praise = "Fast and clean, their new editor is great. Sharing with their team is so easy. \
                  Templates save them time every day. The widget is handy. It is the best notes \
                  app they have used.";
    t.rejected(
        FEEDBACK,
        FEEDBACK_PATH,
        &feedback_with(COMPLAINT, praise),
        "the praise responses pasted, `my`/`me`/`I` made `their`/`them`/`they`",
    );
    let complaint = "Sync conflict wiped their edits from the plane. After sync their offline \
                     changes were gone. The app lost their notes when they went offline.";
    t.rejected(
        FEEDBACK,
        FEEDBACK_PATH,
        &feedback_with(complaint, PRAISE),
        "three complaint responses pasted, pronouns changed",
    );
    t.check();
}

/// Was a hole, mended in the same session (found by this file's red team).
#[test]
fn a_one_sentence_praise_in_own_words_passes() {
    let mut t = Tally::default();
    for praise in [
        "Users say the new editor is great.",
        "Most agree the new editor is great.",
    ] {
        t.accepted(
            FEEDBACK,
            FEEDBACK_PATH,
            &feedback_with(COMPLAINT, praise),
            praise,
        );
    }
    t.check();
}

#[test]
fn summaries_in_own_words_pass_and_a_quoted_response_is_allowed() {
    let mut t = Tally::default();
    for (complaint, praise) in [
        (
            "Sync is the big one: edits made offline get lost or overwritten once the app \
             reconnects, which six people report.",
            "The editor, team sharing and the templates get the most thanks.",
        ),
        (
            "Losing offline edits to sync; one user wrote \"Offline edits disappeared after \
             sync.\" and five others say much the same.",
            "People enjoy the editor and templates; one called it the \"best notes app I have \
             used\".",
        ),
    ] {
        t.accepted(
            FEEDBACK,
            FEEDBACK_PATH,
            &feedback_with(complaint, praise),
            "own words",
        );
    }
    t.check();
}

#[test]
fn a_missing_or_renamed_section_fails_rather_than_passes_unread() {
    let mut t = Tally::default();
    let g = gold(FEEDBACK, FEEDBACK_PATH);
    let paste = "Fast and clean, the new editor is great. Sharing with my team is so easy now.";
    for (why, text) in [
        (
            "Praise renamed",
            g.replace("## Praise", "## What users like"),
        ),
        (
            "Praise renamed, pasted",
            g.replace("## Praise", "## Likes").replace(PRAISE, paste),
        ),
        (
            "Praise heading styled away",
            g.replace("## Praise", "<h2 class=\"x\">Praise</h2>"),
        ),
    ] {
        t.caught_by(FEEDBACK, FEEDBACK_PATH, &text, "praise-own-words", why);
    }
    t.check();
}

// =============================================================================================
// 3. report-timesheets: number lines per section.

/// The gold of report-timesheets with `after` added after the By person lines and `project`
/// after the By project lines (before the total).
fn hours_with(after_person: &str, after_project: &str) -> String {
    gold(HOURS, HOURS_PATH)
        .replace(
            "- Tariq: 64 hours\n",
            &format!("- Tariq: 64 hours\n{after_person}"),
        )
        .replace(
            "- support: 68 hours\n",
            &format!("- support: 68 hours\n{after_project}"),
        )
}

/// Ines's and Tariq's hours per project (weeks 10 to 12), each line written by `row`.
fn breakdown(row: impl Fn(&str, &str, u32) -> String) -> String {
    [
        ("Ines", "intranet", 24),
        ("Ines", "support", 10),
        ("Ines", "harbor-app", 6),
        ("Tariq", "intranet", 18),
        ("Tariq", "harbor-app", 20),
        ("Tariq", "support", 26),
    ]
    .iter()
    .map(|(p, j, h)| row(p, j, *h) + "\n")
    .collect()
}

#[test]
fn a_breakdown_under_by_person_fails_in_the_spellings_the_counter_reads() {
    let mut t = Tally::default();
    for extra in [
        breakdown(|p, j, h| format!("- {p} on {j}: {h} hours")),
        breakdown(|p, j, h| format!("  - {p} / {j} = {h}")),
        breakdown(|p, j, h| format!("- {p} – {j} – {h} h")),
        breakdown(|p, j, h| format!("- {p}, {j}, {h} hrs")),
        breakdown(|p, j, h| format!("- {p} {j} ({h} hours)")),
        format!(
            "\n| Person | Project | Hours |\n|---|---|---|\n{}",
            breakdown(|p, j, h| format!("| {p} | {j} | {h} |"))
        ),
    ] {
        t.caught_by(
            HOURS,
            HOURS_PATH,
            &hours_with(&extra, ""),
            "one-line-per-person",
            "a breakdown under By person",
        );
    }
    // And a breakdown by person under By project.
    let extra = breakdown(|p, j, h| format!("  - {j}, {p}: {h} hours"));
    t.caught_by(
        HOURS,
        HOURS_PATH,
        &hours_with("", &extra),
        "one-line-per-project",
        "a breakdown under By project",
    );
    t.check();
}

/// Was a hole, mended in the same session (found by this file's red team).
#[test]
fn a_breakdown_with_bare_numbers_under_by_person_fails() {
    let mut t = Tally::default();
    for (why, extra) in [
        (
            "`  - intranet 24`",
            breakdown(|_, j, h| format!("  - {j} {h}")),
        ),
        (
            "`Ines,intranet,24`",
            "\n".to_string() + &breakdown(|p, j, h| format!("{p},{j},{h}  ")),
        ),
        (
            "`Ines\\tintranet\\t24`",
            "\n".to_string() + &breakdown(|p, j, h| format!("{p}\t{j}\t{h}  ")),
        ),
        (
            "`- Ines, intranet (24)`",
            breakdown(|p, j, h| format!("- {p}, {j} ({h})")),
        ),
        (
            "`- 24 hours on intranet`",
            breakdown(|_, j, h| format!("  - {h} hours on {j}")),
        ),
        ("`- Total 164`", "- Total 164\n".to_string()),
    ] {
        t.rejected(HOURS, HOURS_PATH, &hours_with(&extra, ""), why);
    }
    t.check();
}

/// Was a hole, mended in the same session (found by this file's red team).
#[test]
fn one_explanatory_sentence_with_hours_passes() {
    let mut t = Tally::default();
    t.accepted(
        HOURS,
        HOURS_PATH,
        &hours_with(
            "\nMarek was on holiday in week 11 (0 hours that week).\n",
            "",
        ),
        "a note on Marek's holiday under By person",
    );
    t.accepted(
        HOURS,
        HOURS_PATH,
        &(gold(HOURS, HOURS_PATH)
            + "\nAll 164 hours were logged by four people on three projects.\n"),
        "a closing sentence after the total",
    );
    t.accepted(
        HOURS,
        HOURS_PATH,
        &gold(HOURS, HOURS_PATH).replace(
            "## By person\n\n",
            "## By person\n\nFour people logged 164 hours in total:\n\n",
        ),
        "an intro sentence under By person",
    );
    t.check();
}

#[test]
fn right_hours_reports_pass_in_careful_layouts() {
    let mut t = Tally::default();
    let g = gold(HOURS, HOURS_PATH);
    for (why, right) in [
        (
            "the total under its own heading",
            g.replace("Total: 164 hours", "## Total\n\nTotal: 164 hours"),
        ),
        (
            "bold labels",
            g.replace("- Ines:", "- **Ines:**")
                .replace("- intranet:", "- **intranet:**"),
        ),
        (
            "numbered lists",
            g.replace("- Ines", "1. Ines")
                .replace("- Marek", "2. Marek")
                .replace("- Sofia", "3. Sofia")
                .replace("- Tariq", "4. Tariq"),
        ),
        (
            "a note without a figure of hours",
            hours_with("\nMarek was on holiday in week 11.\n", ""),
        ),
        (
            "a summary line before the sections",
            g.replace(
                "# Hours, weeks 10 to 12\n",
                "# Hours, weeks 10 to 12\n\nFour people, three projects: 164 hours in 3 weeks.\n",
            ),
        ),
        ("the headings in HTML", html_headings(&g)),
    ] {
        t.accepted(HOURS, HOURS_PATH, &right, why);
    }
    t.check();
}

#[test]
fn the_total_in_each_section_fails_in_other_layouts() {
    let mut t = Tally::default();
    for (why, wrong) in [
        (
            "`Total: 164` in By person",
            hours_with("- Total: 164 hours\n", ""),
        ),
        (
            "`**All** = 164` in By person",
            hours_with("**All** = 164\n", ""),
        ),
        (
            "a table row in By person",
            hours_with("\n| Total | 164 |\n|---|---|\n", ""),
        ),
        (
            "two extra lines in By project",
            hours_with("", "- All projects: 164 hours\n- Average: 54.7 h\n"),
        ),
    ] {
        t.rejected(HOURS, HOURS_PATH, &wrong, why);
    }
    t.check();
}

// =============================================================================================
// 4. stats-first: a figure written with its check's decimals.

/// The lines stats-first gives for `h`'s first prompt, and the stats results shown.
fn shown(h: &Harness) -> (Vec<String>, String, Value) {
    let (prompts, event) = stats_first_prompts(h, false, &finish_line());
    let first = prompts[0].clone();
    (task_lines(&first), stats_results(&first), event)
}

/// The key of a `Label: value` line (its label, lower case, without a list marker).
fn label_of(line: &str) -> Option<String> {
    let l = line.trim().trim_start_matches("- ").trim();
    l.split_once(':').map(|(k, _)| k.trim().to_lowercase())
}

/// `gold` with every line whose label a shown line has replaced by the shown line.
fn with_lines(gold: &str, lines: &[String]) -> (String, usize) {
    let mut replaced = 0;
    let out = gold
        .lines()
        .map(|g| {
            match lines
                .iter()
                .find(|s| label_of(s).is_some() && label_of(s) == label_of(g))
            {
                Some(s) => {
                    replaced += 1;
                    let marker = if g.trim_start().starts_with("- ") {
                        "- "
                    } else {
                        ""
                    };
                    format!("{marker}{s}")
                }
                None => g.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    (out, replaced)
}

#[test]
fn every_line_stats_first_gives_is_one_the_judge_accepts() {
    let mut t = Tally::default();
    // report-energy-meters quotes no line of its own (its mean is checked by agent_stats_first).
    for (task, path) in [
        ("report-expenses", "out/expense-report.md"),
        ("report-gradebook", "out/grade-report.md"),
        ("report-sales-regions", "out/sales-report.md"),
        (FEEDBACK, FEEDBACK_PATH),
        ("summarize-interviews", "out/hiring-summary.md"),
    ] {
        let h = Harness::desk_suite(task);
        let (lines, results, _) = shown(&h);
        let (report, replaced) = with_lines(&gold(task, path), &lines);
        if replaced == 0 {
            t.note(format!("{task}: no line given ({results})"));
            continue;
        }
        t.accepted(task, path, &report, &format!("the lines {lines:?}"));
    }
    t.check();
}

#[test]
fn a_half_way_mean_is_shown_rounded_away_from_zero_and_the_judge_takes_it() {
    // 3.125 with two decimals: Rein shows 3.13 (the gold writes 3.12); both within 0.005.
    let h = Harness::desk_suite(FEEDBACK);
    let (lines, results, _) = shown(&h);
    assert!(
        lines.iter().any(|l| l == "Average rating: 3.13"),
        "{lines:?} {results}"
    );
    let mut t = Tally::default();
    for v in ["3.13", "3.12"] {
        t.accepted(
            FEEDBACK,
            FEEDBACK_PATH,
            &gold(FEEDBACK, FEEDBACK_PATH)
                .replace("Average rating: 3.12", &format!("Average rating: {v}")),
            v,
        );
    }
    t.check();
}

#[test]
fn decimals_zero_shows_a_whole_number_the_judge_takes() {
    let h = Harness::desk_suite_mission(FEEDBACK, |m| {
        let c = check_mut(m, "average-rating");
        c["decimals"] = json!(0);
        c["tolerance"] = json!(0.5);
    });
    let (lines, results, event) = shown(&h);
    assert!(
        lines.iter().any(|l| l == "Average rating: 3"),
        "{lines:?} {results} {event}"
    );
    let report = gold(FEEDBACK, FEEDBACK_PATH).replace("Average rating: 3.12", "Average rating: 3");
    let v = judge_with(&h.contract, &h.workspace, FEEDBACK_PATH, &report);
    assert!(failed_of(&v).is_empty(), "{:?}", failed_of(&v));
}

/// Was a hole, mended in the same session (found by this file's red team).
#[test]
fn the_same_mean_asked_twice_is_shown_with_each_check_s_decimals() {
    let h = Harness::desk_suite_mission("report-energy-meters", |m| {
        let mut plain = check_mut(m, "m01-average").clone();
        plain["id"] = json!("m01-mean-exact");
        plain["stated"]["regex"] = json!("(?im)^\\s*exact m-01 mean\\s*:\\s*(.*?)\\s*$");
        plain.as_object_mut().unwrap().remove("decimals");
        m["checks"].as_array_mut().unwrap().insert(0, plain);
    });
    let (lines, results, event) = shown(&h);
    assert!(results.contains(": 1073.3 "), "{lines:?} {results} {event}");
}

#[test]
fn a_mean_double_rounded_by_the_tool_is_withheld_never_shown_wrong() {
    // Scores summing to 24.0299976 over 6 rows: the mean 4.0049996 is 4.00 to two decimals,
    // but table_stats gives it to six, 4.005, and half away from zero makes that 4.01: 0.0050004
    // from the mean, outside the judge's 0.005. Rein must not show 4.01 (it withholds the call;
    // the model is left to compute a figure Rein could have given as 4.00).
    let h = Harness::desk_suite_with("summarize-interviews", |dir| {
        let csv = dir.join("hiring/scores.csv");
        let text = std::fs::read_to_string(&csv).unwrap();
        std::fs::write(&csv, text.replace("Wen,culture,5", "Wen,culture,5.0299976")).unwrap();
    });
    let (lines, results, event) = shown(&h);
    assert!(!results.contains("4.01"), "{lines:?} {results} {event}");
    let report = gold("summarize-interviews", "out/hiring-summary.md");
    let v = judge_with(&h.contract, &h.workspace, "out/hiring-summary.md", &report);
    assert!(
        failed_of(&v).is_empty(),
        "4.00 is right: {:?}",
        failed_of(&v)
    );
    let v = judge_with(
        &h.contract,
        &h.workspace,
        "out/hiring-summary.md",
        &report.replace("Average score: 4.00", "Average score: 4.01"),
    );
    assert!(failed_of(&v).contains(&"average".to_string()));
}

#[test]
fn a_negative_cell_the_judge_cannot_read_withholds_the_figure() {
    // The judge reads a table's cells unsigned: a negative amount makes its figure unknown, so
    // no rounded negative (`-0.00`, `-12.50`) is ever shown.
    let h = Harness::desk_suite_with("summarize-interviews", |dir| {
        let csv = dir.join("hiring/scores.csv");
        let text = std::fs::read_to_string(&csv).unwrap();
        std::fs::write(&csv, text.replace("Wen,culture,5", "Wen,culture,-24.02")).unwrap();
    });
    let (_, results, event) = shown(&h);
    assert!(!results.contains("(its \"mean\")"), "{results} {event}");
}

/// Was a hole, mended in the same session (found by this file's red team).
#[test]
fn a_huge_figure_is_shown_with_the_decimals_asked_or_not_at_all() {
    // One rating of 7e28: the sum (7e28 + 48) and the mean (4375000000000000000000000003) are
    // exact in the tool; the judge's f64 mean is the same number.
    let h = Harness::desk_suite_with(FEEDBACK, |dir| {
        let csv = dir.join("feedback/responses.csv");
        let text = std::fs::read_to_string(&csv).unwrap();
        let changed = text.replace("101,mobile,2,", "101,mobile,70000000000000000000000000000,");
        assert_ne!(changed, text);
        std::fs::write(&csv, changed).unwrap();
    });
    let (lines, results, event) = shown(&h);
    for l in &lines {
        if let Some(v) = l.strip_prefix("Average rating: ") {
            let right = v.split_once('.').map(|(_, d)| d.len()) == Some(2);
            // Shown, it must be a line the judge takes.
            let report = gold(FEEDBACK, FEEDBACK_PATH).replace("Average rating: 3.12", l);
            let v = judge_with(&h.contract, &h.workspace, FEEDBACK_PATH, &report);
            assert!(
                right && !failed_of(&v).contains(&"average-rating".to_string()),
                "shown `{l}`, judged {:?} ({results} {event})",
                failed_of(&v)
            );
        }
    }
}

#[test]
fn grouped_figures_are_written_with_the_decimals_asked_and_the_judge_takes_them() {
    // named-rows: every warehouse's sum is shown; with `decimals: 1` on the three checks each is
    // written with one decimal, the largest too, and the line the model makes of it passes.
    let h = Harness::desk_suite_mission("report-stock-warehouses", |m| {
        for id in ["units-bristol", "units-glasgow", "units-leeds"] {
            check_mut(m, id)["decimals"] = json!(1);
        }
    });
    let (prompts, event) = stats_first_prompts(&h, true, &finish_line());
    let results = stats_results(&prompts[0]);
    assert!(
        results.contains(
            "Bristol: 33.0\\n  Glasgow: 66.0\\n  Leeds: 173.0\\nThe largest of them: Leeds (173.0)"
        ),
        "{results} {event}"
    );
    let path = "out/stock-report.md";
    let report = gold("report-stock-warehouses", path)
        .replace("Bristol: 33 units", "Bristol: 33.0 units")
        .replace("Glasgow: 66 units", "Glasgow: 66.0 units")
        .replace("Leeds: 173 units", "Leeds: 173.0 units");
    let v = judge_with(&h.contract, &h.workspace, path, &report);
    assert!(failed_of(&v).is_empty(), "{:?}", failed_of(&v));
}
