//! Red team of the judge changes of 117d533 (and the timesheets counter of 0648ac4): a
//! deliverable that is wrong by the task's prompt must fail, a careful right one must pass.
//!
//! Each case is judged by the task's own frozen contract (its mission.json, its fixtures) with
//! the deliverable put in the world; only the checks that read the deliverable decide here (the
//! trace checks and the unqualified decisions are left out, as no run is replayed). The holes
//! are `#[ignore = "HOLE: ..."]`: each asserts what the judge should say, so it fails today.
//! The attacks that hold are plain tests.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

#[path = "judge_support/mod.rs"]
mod judge;

use judge::{gold, Tally, DESK, SUMMARY};

/// desk_task's gold with its Tasks section's list replaced by `body`.
fn desk_with_tasks(body: &str) -> String {
    let g = gold(DESK, SUMMARY);
    let (head, rest) = g.split_once("## Tasks\n\n").unwrap();
    let (_, risks) = rest.split_once("## Risks").unwrap();
    format!("{head}## Tasks\n\n{body}\nTotal hours: 64\n\n## Risks{risks}")
}

/// The rows of data/tasks.csv, `,` between cells.
const ROWS: [[&str; 4]; 6] = [
    ["Renewal screen design", "Priya", "done", "12"],
    ["Renewal API", "Jonas", "done", "16"],
    ["Reservation screen", "Priya", "in progress", "10"],
    ["Catalogue search integration", "Jonas", "blocked", "14"],
    ["Accessibility testing", "Tom", "planned", "8"],
    ["Release checklist", "Maya", "planned", "4"],
];

/// The rows, each written by `row`, one a line; the release checklist's hours as `hours`.
fn rows(hours: &str, row: impl Fn([&str; 4]) -> String) -> String {
    ROWS.iter()
        .map(|r| {
            let mut r = *r;
            if r[0] == "Release checklist" {
                r[3] = hours;
            }
            row(r) + "\n"
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The gold of every audited task passes here: the harness judges as check-mission does.

const AUDITED: [(&str, &str); 12] = [
    (DESK, SUMMARY),
    ("summarize-feedback", "out/feedback-summary.md"),
    ("summarize-incident", "out/incident-summary.md"),
    ("summarize-weekly-notes", "out/summary.md"),
    ("summarize-interviews", "out/hiring-summary.md"),
    ("summarize-support-week", "out/support-week.md"),
    ("report-energy-meters", "out/energy.md"),
    ("report-sales-regions", "out/sales-report.md"),
    ("report-expenses", "out/expense-report.md"),
    ("report-gradebook", "out/grade-report.md"),
    ("report-timesheets", "out/hours.md"),
    ("edit-json-settings", "config/settings.json"),
];

#[test]
fn every_gold_passes_the_checks_that_read_it() {
    let mut t = Tally::default();
    for (task, path) in AUDITED {
        t.accepted(task, path, &gold(task, path), "gold");
    }
    t.check();
}

// ---------------------------------------------------------------------------------------------
// 1. report_complete `no_other_headings`.

/// (task, artifact, the heading its extra section goes before, or "" for the end)
const EXACT_HEADINGS: [(&str, &str, &str); 4] = [
    (DESK, SUMMARY, ""),
    (
        "summarize-feedback",
        "out/feedback-summary.md",
        "## Main complaint",
    ),
    (
        "summarize-incident",
        "out/incident-summary.md",
        "## Follow-ups",
    ),
    ("summarize-weekly-notes", "out/summary.md", ""),
];

/// The gold with a section `extra` (its title line) holding neutral text the checks accept.
fn with_extra_section(task: &str, path: &str, before: &str, extra: &str) -> String {
    let g = gold(task, path);
    let body = "The next meeting is on Monday at ten, in the usual room.\n";
    if before.is_empty() {
        format!("{g}\n{extra}\n\n{body}")
    } else {
        g.replacen(before, &format!("{extra}\n\n{body}\n{before}"), 1)
    }
}

#[test]
fn an_extra_markdown_section_fails_every_task_that_asks_for_exactly_these_headings() {
    let mut t = Tally::default();
    for (task, path, before) in EXACT_HEADINGS {
        let id = if task == DESK {
            "summary-complete"
        } else {
            "sections"
        };
        for extra in [
            "## Notes",
            "Notes\n-----",
            "### Notes:",
            "#Notes",
            "- ### Notes",
        ] {
            t.caught_by(
                task,
                path,
                &with_extra_section(task, path, before, extra),
                id,
                extra,
            );
        }
    }
    t.check();
}

#[test]
/// Was a hole, mended: an HTML heading is a heading to the judge too.
fn an_extra_html_h2_section_fails_too() {
    let mut t = Tally::default();
    for (task, path, before) in EXACT_HEADINGS {
        for (why, extra) in [
            ("an extra <h2>Notes</h2> section", "<h2>Notes</h2>"),
            ("an extra <h3>Notes</h3> section", "<h3>Notes</h3>"),
        ] {
            t.rejected(
                task,
                path,
                &with_extra_section(task, path, before, extra),
                why,
            );
        }
    }
    t.check();
}

#[test]
#[ignore = "HOLE: a bold line standing alone above a paragraph (`**Notes**`) is a section title \
            to a person; no_other_headings sees a paragraph"]
fn an_extra_bold_pseudo_heading_fails_too() {
    let mut t = Tally::default();
    for (task, path, before) in EXACT_HEADINGS {
        for (why, extra) in [
            ("an extra **Notes** section", "**Notes**"),
            (
                "an extra <details><summary>Notes</summary> section",
                "<details open><summary>Notes</summary>",
            ),
        ] {
            t.rejected(
                task,
                path,
                &with_extra_section(task, path, before, extra),
                why,
            );
        }
    }
    t.check();
}

#[test]
/// Was a false fail, mended: a single `#` before a letter is made a heading only where no
/// paragraph goes on (a wrapped line `#payments ...` stays text).
fn a_wrapped_line_starting_with_a_channel_name_is_no_heading() {
    let mut t = Tally::default();
    let task = "summarize-incident";
    let path = "out/incident-summary.md";
    let report = gold(task, path).replace(
        "which did not help; the expired",
        "which did not help;\n#payments was then told that the expired",
    );
    t.accepted(
        task,
        path,
        &report,
        "`#payments` at the start of a wrapped line",
    );
    t.check();
}

// ---------------------------------------------------------------------------------------------
// 2. mentions_all `numbers`: a bare number after a value.

#[test]
fn a_pasted_row_with_wrong_hours_fails_in_the_forms_the_rule_reads() {
    let mut t = Tally::default();
    let table = format!(
        "| Task | Owner | Status | Hours |\n|---|---|---|---|\n{}",
        rows("5", |r| format!("| {} |", r.join(" | ")))
    );
    for wrong in [
        rows("5", |r| r.join(",")),
        rows("5", |r| r.join(", ")),
        rows("5", |r| format!("- {}", r.join(";"))),
        rows("5", |r| format!("{},{}", r[0], r[3])).replace('\n', "\n\n"),
        rows("5", |r| format!("{}: {} hours", r[0], r[3])),
        table,
    ] {
        t.caught_by(
            DESK,
            SUMMARY,
            &desk_with_tasks(&wrong),
            "tasks-listed",
            "wrong hours",
        );
    }
    t.check();
}

/// Was a hole, mended in the same session (the review of commit 117d533).
#[test]
fn a_pasted_row_with_wrong_hours_fails_with_a_full_stop_or_quotes() {
    let mut t = Tally::default();
    for (why, wrong) in [
        (
            "`Release checklist,Maya,planned,5.`",
            rows("5", |r| format!("{}.", r.join(","))),
        ),
        (
            "`- Release checklist, Maya, planned, 5.`",
            rows("5", |r| format!("- {}.", r.join(", "))),
        ),
        (
            "`\"Release checklist\",\"Maya\",\"planned\",\"5\"`",
            rows("5", |r| {
                r.iter()
                    .map(|c| format!("\"{c}\""))
                    .collect::<Vec<_>>()
                    .join(",")
                    + "  "
            }),
        ),
    ] {
        t.rejected(DESK, SUMMARY, &desk_with_tasks(&wrong), why);
    }
    t.check();
}

#[test]
#[ignore = "HOLE: was a hole for every separator but `,`/`;`, mended but for tabs: the judge \
            reads white space folded (the prose reader folds a tab as a browser does), so a \
            tab-separated row is words, and its wrong hours pass"]
fn a_tab_separated_row_with_wrong_hours_fails() {
    let mut t = Tally::default();
    let wrong = rows("5", |r| r.join("\t") + "  ");
    t.rejected(
        DESK,
        SUMMARY,
        &desk_with_tasks(&wrong),
        "a tab-separated row",
    );
    let right = rows("4", |r| r.join("\t") + "  ");
    t.accepted(
        DESK,
        SUMMARY,
        &desk_with_tasks(&right),
        "a tab-separated row with the right hours",
    );
    t.check();
}

/// Was a hole, mended: a bare hours figure after a task in another separator than `,`/`;`.
#[test]
fn a_bare_wrong_hours_figure_fails_in_other_separators() {
    let mut t = Tally::default();
    for (why, wrong) in [
        (
            "`- Release checklist: 5`",
            rows("5", |r| format!("- {}: {}", r[0], r[3])),
        ),
        (
            "`- Release checklist - 5`",
            rows("5", |r| format!("- {} - {}", r[0], r[3])),
        ),
        (
            "`- Release checklist (5)`",
            rows("5", |r| format!("- {} ({})", r[0], r[3])),
        ),
        (
            "a ` | ` row outside a table",
            rows("5", |r| r.join(" | ")).replace('\n', "\n\n"),
        ),
    ] {
        t.rejected(DESK, SUMMARY, &desk_with_tasks(&wrong), why);
    }
    t.check();
}

#[test]
#[ignore = "HOLE: a row broken by a soft line break (or <br>) before its hours cell renders as \
            one line, but the rule reads the number on a line of its own and misses it"]
fn a_pasted_row_broken_before_its_hours_fails() {
    let mut t = Tally::default();
    for brk in ["\n", "<br>"] {
        let wrong = rows("5", |r| r.join(",")).replace(
            "Release checklist,Maya,planned,5",
            &format!("Release checklist,Maya,planned,{brk}5"),
        );
        t.rejected(
            DESK,
            SUMMARY,
            &desk_with_tasks(&wrong),
            &format!("{brk:?} before `5`"),
        );
    }
    t.check();
}

/// Was a hole, mended in the same session (the review of commit 117d533).
#[test]
fn a_plural_mention_with_wrong_hours_fails() {
    let mut t = Tally::default();
    let wrong = gold(DESK, SUMMARY).replace(
        "- Reservation screen: 10 hours, Priya is working on it.",
        "- Reservation screens: 11 hours, Priya is working on them.",
    );
    t.rejected(DESK, SUMMARY, &wrong, "reservation screen at 11 hours");
    t.check();
}

/// Was a hole, mended in the same session (the review of commit 117d533).
#[test]
fn a_date_with_a_comma_before_the_year_is_not_hours() {
    let mut t = Tally::default();
    let right = rows("4", |r| {
        format!("- {}: {} hours, {} ({})", r[0], r[3], r[2], r[1])
    })
    .replace(
        "- Release checklist: 4 hours, planned (Maya)",
        "- Release checklist: 4 hours, Maya, before the launch on June 30, 2024",
    );
    t.accepted(
        DESK,
        SUMMARY,
        &desk_with_tasks(&right),
        "a US date after a task",
    );
    t.check();
}

#[test]
fn right_task_rows_pass_in_every_careful_layout() {
    let mut t = Tally::default();
    let table = |outer: bool| {
        let row = |r: [&str; 4]| {
            if outer {
                format!("| {} |", r.join(" | "))
            } else {
                r.join(" | ")
            }
        };
        let head = if outer {
            "| Task | Owner | Status | Hours |\n|---|---|---|---|\n"
        } else {
            "Task | Owner | Status | Hours\n---|---|---|---\n"
        };
        format!("{head}{}", rows("4", row))
    };
    for right in [
        rows("4", |r| r.join(",")),
        rows("4", |r| r.join(", ") + "  "),
        rows("4", |r| {
            r.iter()
                .map(|c| format!("\"{c}\""))
                .collect::<Vec<_>>()
                .join(",")
                + "  "
        }),
        rows("4", |r| {
            format!("1. {}, {}, {}, {} hours", r[0], r[1], r[2], r[3])
        }),
        table(true),
        table(false),
        rows("4", |r| {
            format!("- {}: {} hours, {} ({})", r[0], r[3], r[2], r[1])
        })
        .replace(
            "- Release checklist: 4 hours, planned (Maya)",
            "- Release checklist: 4 hours, Maya; launch 30.06",
        ),
        rows("4", |r| {
            format!("- {}: {} hours, {}, step 1 of 6", r[0], r[3], r[1])
        }),
    ] {
        t.accepted(DESK, SUMMARY, &desk_with_tasks(&right), "right rows");
    }
    t.check();
}

// ---------------------------------------------------------------------------------------------
// 3. The new content_absent checks.

/// Judged by the 117d533 regexes (`one-decimal`, `two-decimals`) or by numeric_consistency's
/// `decimals` (the mend in progress beside this audit): either way the deliverable fails.
#[test]
fn unrounded_figures_on_their_own_line_fail() {
    let mut t = Tally::default();
    for (task, path, from, to, id) in [
        (
            "report-energy-meters",
            "out/energy.md",
            "M-01 average: 1,073.3 kWh per month",
            "M-01 average: `1073.33` kWh per month",
            "one-decimal",
        ),
        (
            "report-energy-meters",
            "out/energy.md",
            "M-01 average: 1,073.3 kWh per month",
            "- M-01 average: 1,073.33 kWh per month",
            "one-decimal",
        ),
        (
            "report-gradebook",
            "out/grade-report.md",
            "Math average: 78.1",
            "Math average: 78.10",
            "one-decimal",
        ),
        (
            "report-expenses",
            "out/expense-report.md",
            "- Travel: 2,374.68 EUR",
            "- Travel: 2,374.680 EUR",
            "two-decimals",
        ),
        (
            "summarize-feedback",
            "out/feedback-summary.md",
            "Average rating: 3.12",
            "**Average rating:** 3.125",
            "two-decimals",
        ),
    ] {
        t.rejected(task, path, &gold(task, path).replace(from, to), id);
    }
    t.check();
}

#[test]
#[ignore = "HOLE: the decimals checks (the 117d533 regexes, and numeric_consistency's \
            `decimals`) read one prose line, and a soft line break splits what renders as one \
            line: `Average rating: 3.12` + newline + `(3.125 before rounding)` shows the \
            unrounded figure on the answer's line and passes, in all four tasks"]
fn an_unrounded_figure_after_a_soft_break_fails() {
    let mut t = Tally::default();
    for (task, path, line) in [
        (
            "summarize-feedback",
            "out/feedback-summary.md",
            "Average rating: 3.12",
        ),
        (
            "report-energy-meters",
            "out/energy.md",
            "M-01 average: 1,073.3 kWh per month",
        ),
        (
            "report-sales-regions",
            "out/sales-report.md",
            "Average order: 1,333.68 EUR",
        ),
        (
            "report-gradebook",
            "out/grade-report.md",
            "Physics average: 70.4",
        ),
    ] {
        let unrounded = match task {
            "summarize-feedback" => "3.125",
            "report-energy-meters" => "1,073.333",
            "report-sales-regions" => "1,333.677",
            _ => "70.39999999999999",
        };
        let wrong =
            gold(task, path).replace(line, &format!("{line}\n({unrounded} before rounding)"));
        t.rejected(
            task,
            path,
            &wrong,
            "the unrounded figure on the answer's rendered line",
        );
    }
    t.check();
}

/// Was a hole, mended in the same session (the review of commit 117d533).
#[test]
fn float_noise_in_the_other_money_lines_fails() {
    let mut t = Tally::default();
    for (task, path, from, to) in [
        (
            "report-sales-regions",
            "out/sales-report.md",
            "Revenue: 40,010.32 EUR",
            "Revenue: 40010.320000000014 EUR",
        ),
        (
            "report-expenses",
            "out/expense-report.md",
            "Total: 3,798.82 EUR",
            "Total: 3798.8199999999997 EUR",
        ),
        (
            "report-expenses",
            "out/expense-report.md",
            "Largest: 419.23 EUR",
            "Largest: 419.230 EUR",
        ),
    ] {
        t.rejected(task, path, &gold(task, path).replace(from, to), to);
    }
    t.check();
}

/// A hole at 117d533 (check-mission: `Average score: 4` and `4.0` judged pass, as the
/// `two-decimals` regex fails only too many decimals); mended in the working tree beside this
/// audit by `"decimals": 2` on the `average` check, which judges both ways.
#[test]
fn too_few_decimals_fail() {
    let mut t = Tally::default();
    let (task, path) = ("summarize-interviews", "out/hiring-summary.md");
    for v in ["4", "4.0"] {
        let wrong = gold(task, path).replace("Average score: 4.00", &format!("Average score: {v}"));
        t.rejected(task, path, &wrong, &format!("Average score: {v}"));
    }
    t.check();
}

const FEEDBACK: &str = "summarize-feedback";
const FEEDBACK_PATH: &str = "out/feedback-summary.md";
const PRAISE: &str = "People like the new editor, easy sharing with a team and the templates.";

#[test]
fn a_complaint_in_praise_fails_in_the_words_of_the_responses() {
    let mut t = Tally::default();
    for p in [
        "People like the new editor, but I miss keyboard shortcuts for headings.",
        "People like the new editor; some would like a dark mode.",
        "People like sharing, though search is slow and PDF export cuts off tables.",
    ] {
        let wrong = gold(FEEDBACK, FEEDBACK_PATH).replace(PRAISE, p);
        t.caught_by(FEEDBACK, FEEDBACK_PATH, &wrong, "praise-not-a-complaint", p);
    }
    t.check();
}

/// Was a hole, mended in the same session (the review of commit 117d533).
#[test]
fn a_complaint_in_praise_fails_in_other_words() {
    let mut t = Tally::default();
    for p in [
        "People like the new editor and team sharing, although notes sometimes disappear.",
        "People like the new editor and team sharing, but several say notes get overwritten.",
        "People like the new editor; some wish for heading shortcuts and a dark theme.",
        "People like the new editor, though search gets sluggish with many notebooks.",
        "People like the new editor and team sharing; exported tables get clipped though.",
    ] {
        let wrong = gold(FEEDBACK, FEEDBACK_PATH).replace(PRAISE, p);
        t.rejected(FEEDBACK, FEEDBACK_PATH, &wrong, p);
    }
    t.check();
}

#[test]
fn praise_in_the_responses_own_terms_passes() {
    let mut t = Tally::default();
    let right = gold(FEEDBACK, FEEDBACK_PATH).replace(
        PRAISE,
        "People like the new editor (fast and clean), easy sharing with a team, the templates \
         and the mobile widget.",
    );
    t.accepted(FEEDBACK, FEEDBACK_PATH, &right, "praise");
    t.check();
}

#[test]
/// Was a hole, mended in the contract: own-words per section (Main complaint, Praise) too.
fn a_pasted_response_fails_whatever_the_rest_says() {
    let mut t = Tally::default();
    let g = gold(FEEDBACK, FEEDBACK_PATH);
    let pasted = g
        .replace(
            "The most common complaint is that sync loses or overwrites notes that were edited \
             offline; it comes up in six responses, mostly from mobile users.",
            "The app lost my notes when I went offline on the train. Sync overwrote them.",
        )
        .replace(
            PRAISE,
            "People like the new editor, which several of them describe as clean and quick to \
             use. Sharing notes with a whole team has become easy, and the templates are said \
             to save time every single day. Mobile users find the home-screen widget handy, and \
             one reviewer even calls it the best notes app they have ever used.",
        );
    t.rejected(
        FEEDBACK,
        FEEDBACK_PATH,
        &pasted,
        "the main complaint pasted",
    );
    let short = g.replace(
        PRAISE,
        "Templates save me time every day. Widget is handy. Best notes app I have used. \
         Sharing with my team is so easy now.",
    );
    t.rejected(
        FEEDBACK,
        FEEDBACK_PATH,
        &short,
        "four responses pasted as Praise",
    );
    t.check();
}

const SUPPORT: &str = "summarize-support-week";
const SUPPORT_PATH: &str = "out/support-week.md";

fn support_with(after_sync: &str) -> String {
    gold(SUPPORT, SUPPORT_PATH).replace(
        "Sync tickets: 15\n",
        &format!("Sync tickets: 15\n{after_sync}"),
    )
}

#[test]
fn every_category_as_ticket_lines_fails() {
    let mut t = Tally::default();
    let wrong = support_with("Export tickets: 12\nLogin tickets: 8\n");
    t.caught_by(
        SUPPORT,
        SUPPORT_PATH,
        &wrong,
        "top-category-only",
        "every category's count",
    );
    t.check();
}

/// Was a hole, mended in the same session (the review of commit 117d533).
#[test]
fn every_category_fails_in_any_layout() {
    let mut t = Tally::default();
    for (why, wrong) in [
        ("a table", support_with(
            "\n| Category | Tickets |\n|---|---|\n| sync | 15 |\n| export | 12 |\n| login | 8 |\n\
             | billing | 3 |\n| other | 2 |\n",
        )),
        ("one line", support_with("By category: sync 15, export 12, login 8, billing 3, other 2\n")),
        ("`Export: 12`", support_with("Export: 12\nLogin: 8\nBilling: 3\nOther: 2\n")),
        ("`Export tickets = 12`", support_with("Export tickets = 12\nLogin tickets = 8\nBilling tickets = 3\n")),
        ("`- Export tickets 12`", support_with("- Export tickets 12\n- Login tickets 8\n- Billing tickets 3\n")),
        ("a section of its own", gold(SUPPORT, SUPPORT_PATH)
            + "\n## By category\n\nExport tickets: 12\nLogin tickets: 8\nBilling tickets: 3\n"),
    ] {
        t.rejected(SUPPORT, SUPPORT_PATH, &wrong, why);
    }
    t.check();
}

/// Was a hole, mended in the same session (the review of commit 117d533).
#[test]
fn naming_the_top_category_passes() {
    let mut t = Tally::default();
    let right = gold(SUPPORT, SUPPORT_PATH).replace(
        "Sync tickets: 15\n",
        "Category with the most tickets: sync\nSync tickets: 15\n",
    );
    t.accepted(SUPPORT, SUPPORT_PATH, &right, "the top category named");
    t.check();
}

const HOURS: &str = "report-timesheets";
const HOURS_PATH: &str = "out/hours.md";

#[test]
/// Was a hole, mended in the contract: the counter reads `=` and a number followed by hours too.
fn a_total_in_each_section_fails_in_any_spelling() {
    let mut t = Tally::default();
    for sep in [" = ", " "] {
        let label = if sep == " " { "All people" } else { "Total" };
        let wrong = gold(HOURS, HOURS_PATH)
            .replace(
                "- Tariq: 64 hours\n",
                &format!("- Tariq: 64 hours\n- {label}{sep}164 hours\n"),
            )
            .replace(
                "- support: 68 hours\n",
                &format!("- support: 68 hours\n- Total{sep}164 hours\n"),
            );
        t.rejected(
            HOURS,
            HOURS_PATH,
            &wrong,
            &format!("`{label}{sep}164 hours`"),
        );
    }
    t.check();
}

#[test]
/// Was a false fail, mended in the contract: a heading line is never counted.
fn a_title_with_a_number_passes() {
    let mut t = Tally::default();
    for title in [
        "# Hours, weeks 10 – 12",
        "# Timesheets: 2024, weeks 10 to 12",
    ] {
        let right = gold(HOURS, HOURS_PATH).replace("# Hours, weeks 10 to 12", title);
        t.accepted(HOURS, HOURS_PATH, &right, title);
    }
    t.check();
}

#[test]
fn a_title_with_an_em_dash_and_no_number_after_it_passes() {
    let mut t = Tally::default();
    let right =
        gold(HOURS, HOURS_PATH).replace("# Hours, weeks 10 to 12", "# Hours — weeks 10 to 12");
    t.accepted(HOURS, HOURS_PATH, &right, "a title");
    t.check();
}

const JSON_TASK: &str = "edit-json-settings";
const JSON_PATH: &str = "config/settings.json";

#[test]
fn a_changed_layout_of_the_settings_file_fails() {
    let mut t = Tally::default();
    let g = gold(JSON_TASK, JSON_PATH);
    for wrong in [
        g.trim_end_matches('\n').to_string(),
        format!("{g}\n"),
        format!("{}\r", g.trim_end_matches('\n')),
        format!("\u{feff}{g}"),
        g.replace("  ", "\t"),
        g.replace("\"light\",", "\"light\",  "),
    ] {
        t.caught_by(
            JSON_TASK,
            JSON_PATH,
            &wrong,
            "whole-file",
            "a changed layout",
        );
    }
    t.check();
}

/// Was a hole, mended in the same session (the review of commit 117d533).
#[test]
fn crlf_line_breaks_fail() {
    let mut t = Tally::default();
    let g = gold(JSON_TASK, JSON_PATH);
    for (why, wrong) in [
        ("CRLF line breaks", g.replace('\n', "\r\n")),
        (
            "a CRLF after the last line",
            format!("{}\r\n", g.trim_end_matches('\n')),
        ),
    ] {
        t.rejected(JSON_TASK, JSON_PATH, &wrong, why);
    }
    t.check();
}
