//! The report as people and CI systems read it: a terminal table, `report.md`, a self-contained
//! `report.html` (inline CSS and SVG, no script, no external request, readable without colour)
//! and JUnit XML (one testcase per run).
//!
//! Every name that comes from results (suite, task, model, reason) is escaped for its medium:
//! hidden and control characters made visible first, then the medium's own metacharacters. No
//! renderer prints a time or a path, so the same results render to the same bytes.

use std::fmt::Write as _;
use std::path::Path;

use rein_protocol::display::escape_line;

use crate::error::BenchError;
use crate::report::{Comparison, GroupStats, ModelReport, Report};
use crate::results::{check_consistent, write_atomic, write_canonical, RunResult, RESULTS_FILE};

pub const REPORT_MD: &str = "report.md";
pub const REPORT_HTML: &str = "report.html";
pub const JUNIT_XML: &str = "junit.xml";

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn opt(x: Option<f64>, f: fn(f64) -> String) -> String {
    x.map(f).unwrap_or_else(|| "-".into())
}

fn num1(x: f64) -> String {
    format!("{x:.1}")
}

fn secs(ms: f64) -> String {
    format!("{:.1}s", ms / 1000.0)
}

pub(crate) fn pvalue(p: f64) -> String {
    if p < 0.0001 {
        "<0.0001".into()
    } else {
        format!("{p:.4}")
    }
}

/// The columns of a model/category row, as plain (unescaped) strings.
fn row_cells(g: &GroupStats) -> Vec<String> {
    vec![
        format!("{}/{}", g.passes, g.runs),
        pct(g.pass_rate),
        format!("{}-{}", pct(g.wilson_low), pct(g.wilson_high)),
        opt(g.mean_pass_rate, pct),
        match g.pass_hat_k {
            Some(p) => format!("{} (k={})", pct(p), g.k),
            None => "-".into(),
        },
        opt(g.median_steps, num1),
        opt(g.median_wall_ms, secs),
        opt(g.median_tokens_per_s, num1),
        opt(g.format_error_rate, pct),
        opt(g.repair_rate, pct),
        opt(g.cap_hit_rate, pct),
        opt(g.harness_overhead, pct),
        opt(g.tasks_per_minute, num1),
    ]
}

const HEAD: [&str; 15] = [
    "model",
    "category",
    "passed",
    "rate",
    "95% CI",
    "mean",
    "pass^k",
    "steps",
    "wall",
    "tok/s",
    "fmt err",
    "repair",
    "cap hit",
    "overhead",
    "tasks/min",
];

fn rows(report: &Report) -> Vec<(&ModelReport, &GroupStats)> {
    let mut out = Vec::new();
    for m in &report.models {
        out.push((m, &m.overall));
        for c in &m.categories {
            out.push((m, c));
        }
    }
    out
}

fn comparison_line(c: &Comparison) -> String {
    format!(
        "{} vs {}: {} pairs; both pass {}, both fail {}, only {} {}, only {} {}; exact McNemar p = {}",
        c.model_a,
        c.model_b,
        c.pairs,
        c.both_pass,
        c.both_fail,
        c.model_a,
        c.only_a,
        c.model_b,
        c.only_b,
        pvalue(c.p_value)
    )
}

// ---------------------------------------------------------------- terminal

/// The report as a plain-text table for a terminal (names escaped).
pub fn terminal(report: &Report) -> String {
    let mut table: Vec<Vec<String>> = vec![HEAD.iter().map(|s| s.to_string()).collect()];
    for (m, g) in rows(report) {
        let mut r = vec![escape_line(&m.labelled()), escape_line(&g.category)];
        r.extend(row_cells(g));
        table.push(r);
    }
    let widths: Vec<usize> = (0..HEAD.len())
        .map(|i| {
            table
                .iter()
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in &table {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    for c in &report.comparisons {
        out.push_str(&escape_line(&comparison_line(c)));
        out.push('\n');
        for d in &c.discordant {
            let _ = writeln!(
                out,
                "  {}/{} repeat {}: passed only by {}",
                escape_line(&d.suite),
                escape_line(&d.task),
                d.repeat,
                escape_line(&d.passed_by)
            );
        }
    }
    for m in &report.models {
        if let Some(s) = &m.sampling {
            out.push_str(&escape_line(&s.sentence(&m.model)));
            out.push('\n');
        }
    }
    let _ = writeln!(out, "{} runs", report.runs);
    out
}

// ---------------------------------------------------------------- markdown

/// Escapes a string for a Markdown table cell or text: hidden characters made visible, then
/// HTML metacharacters as entities and Markdown's own characters with backslashes.
pub fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in escape_line(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '|' | '*' | '_' | '`' | '[' | ']' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `report.md`.
pub fn markdown(report: &Report) -> String {
    let mut out = String::from("# Bench report\n\n");
    let suites: Vec<String> = report.suites.iter().map(|s| md_escape(s)).collect();
    let _ = writeln!(
        out,
        "{} runs; suites: {}; models: {}.\n",
        report.runs,
        if suites.is_empty() {
            "-".into()
        } else {
            suites.join(", ")
        },
        report.models.len()
    );
    out.push_str(
        "Pass rate with its Wilson 95 % interval; `mean`: mean over tasks of each task's pass \
         rate; `pass^k`: probability that all k repeats of a task pass (tau-bench estimator); \
         medians of steps, wall time and completion tokens per second; format errors and repairs \
         per step; cap hits per run; `overhead`: the share of the runs' whole time (fresh \
         workspace, loop, judge, journal) not spent waiting for the model; `tasks/min`: runs \
         per minute of run time, one worker's pace.\n\n",
    );
    out.push_str("## Pass rates\n\n");
    out.push_str(&format!("| {} |\n", HEAD.join(" | ")));
    out.push_str(&format!("|{}\n", " --- |".repeat(HEAD.len())));
    for (m, g) in rows(report) {
        let mut cells = vec![md_escape(&m.labelled()), md_escape(&g.category)];
        cells.extend(row_cells(g).iter().map(|c| md_escape(c)));
        if g.category == crate::report::ALL {
            cells[1] = "**all**".into();
        }
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out.push_str("\n## Models\n\n");
    for m in &report.models {
        let ids: Vec<String> = m.identities.iter().map(|i| md_escape(i)).collect();
        let _ = writeln!(out, "- {}: {}", md_escape(&m.labelled()), ids.join("; "));
    }
    for m in &report.models {
        if let Some(s) = &m.sampling {
            let _ = writeln!(out, "\n{}", md_escape(&s.sentence(&m.model)));
        }
    }
    if !report.comparisons.is_empty() {
        out.push_str("\n## Paired comparisons\n\n");
        for c in &report.comparisons {
            let _ = writeln!(out, "- {}", md_escape(&comparison_line(c)));
            for d in &c.discordant {
                let _ = writeln!(
                    out,
                    "  - {}/{} repeat {}: passed only by {}",
                    md_escape(&d.suite),
                    md_escape(&d.task),
                    d.repeat,
                    md_escape(&d.passed_by)
                );
            }
        }
    }
    out.push_str("\n## Runs\n\n| suite | task | split | model | repeat | seed | verdict | steps | wall | reason |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for r in &report.results {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            md_escape(&r.suite),
            md_escape(&r.task),
            md_escape(&r.split),
            md_escape(&r.model),
            r.repeat,
            r.seed,
            if r.passed { "pass" } else { "FAIL" },
            r.steps,
            secs(r.wall_ms as f64),
            md_escape(&r.reason)
        );
    }
    out
}

// ---------------------------------------------------------------- html

/// Escapes for HTML text and attribute values (hidden characters made visible first).
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in escape_line(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const CSS: &str = "body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;\
margin:2em auto;max-width:1200px;padding:0 1em;box-sizing:border-box;color:#111;background:#fff;line-height:1.4}\
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #999}\
table{border-collapse:collapse;font-size:.9em;margin:.5em 0}\
th,td{border:1px solid #999;padding:.25em .5em;text-align:left;vertical-align:top}\
th{background:#eee}td.n{text-align:right;font-variant-numeric:tabular-nums}\
th,td{padding:.2em .35em}\
tr.all td{font-weight:bold}.fail{font-weight:bold;text-decoration:underline}\
svg{display:block;margin:.5em 0;max-width:100%;height:auto}svg text{font-size:12px;fill:#111}\
p.note{font-size:.85em;color:#333}div.wide{overflow-x:auto}\
td.model{max-width:22em;overflow-wrap:anywhere}td.n{white-space:nowrap}";

/// `report.html`: self-contained, no script, no external request.
pub fn html(report: &Report) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n");
    out.push_str("<title>Bench report</title>\n<style>");
    out.push_str(CSS);
    out.push_str("</style>\n</head>\n<body>\n<h1>Bench report</h1>\n");
    let suites: Vec<String> = report.suites.iter().map(|s| html_escape(s)).collect();
    let _ = writeln!(
        out,
        "<p>{} runs; suites: {}; models: {}.</p>",
        report.runs,
        if suites.is_empty() {
            "-".into()
        } else {
            suites.join(", ")
        },
        report.models.len()
    );
    out.push_str("<h2>Pass rates</h2>\n");
    out.push_str(&pass_rate_svg(report));
    out.push_str("<p class=\"note\">Bars: pass rate; whiskers: Wilson 95 % interval. Bold rows are a model's overall figures.</p>\n");
    for m in &report.models {
        if let Some(s) = &m.sampling {
            let _ = writeln!(
                out,
                "<p class=\"note\">{}</p>",
                html_escape(&s.sentence(&m.model))
            );
        }
    }
    out.push_str("<div class=\"wide\"><table>\n<tr>");
    for h in HEAD {
        let _ = write!(out, "<th>{}</th>", html_escape(h));
    }
    out.push_str("</tr>\n");
    for (m, g) in rows(report) {
        let class = if g.category == crate::report::ALL {
            " class=\"all\""
        } else {
            ""
        };
        // A category row sits under its model's bold row; repeating a long model name there
        // only widened the table past the page.
        let model = if class.is_empty() {
            String::new()
        } else {
            html_escape(&m.labelled())
        };
        let _ = write!(
            out,
            "<tr{class}><td class=\"model\">{model}</td><td>{}</td>",
            html_escape(&g.category)
        );
        for c in row_cells(g) {
            let _ = write!(out, "<td class=\"n\">{}</td>", html_escape(&c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n");
    out.push_str("<p class=\"note\">overhead: the share of the runs' whole time (fresh workspace, loop, judge, journal) not spent waiting for the model; tasks/min: runs per minute of run time, one worker's pace (<code>--jobs J</code> does up to J times as many).</p>\n");
    out.push_str("<h2>Wall time per run</h2>\n");
    out.push_str(&strip_svg(
        report,
        |g| g.wall_ms.iter().map(|&w| w as f64 / 1000.0).collect(),
        "s",
    ));
    out.push_str("<h2>Steps per run</h2>\n");
    out.push_str(&strip_svg(
        report,
        |g| g.steps.iter().map(|&s| f64::from(s)).collect(),
        "steps",
    ));
    out.push_str("<p class=\"note\">Each mark is one run: a filled circle passed, an open circle failed. The box spans the quartiles; the tall line is the median.</p>\n");
    out.push_str("<h2>Models</h2>\n<ul>\n");
    for m in &report.models {
        let ids: Vec<String> = m.identities.iter().map(|i| html_escape(i)).collect();
        let _ = writeln!(
            out,
            "<li>{}: {}</li>",
            html_escape(&m.labelled()),
            ids.join("; ")
        );
    }
    out.push_str("</ul>\n");
    if !report.comparisons.is_empty() {
        out.push_str("<h2>Paired comparisons</h2>\n<ul>\n");
        for c in &report.comparisons {
            let _ = write!(out, "<li>{}", html_escape(&comparison_line(c)));
            if !c.discordant.is_empty() {
                out.push_str("<ul>");
                for d in &c.discordant {
                    let _ = write!(
                        out,
                        "<li>{}/{} repeat {}: passed only by {}</li>",
                        html_escape(&d.suite),
                        html_escape(&d.task),
                        d.repeat,
                        html_escape(&d.passed_by)
                    );
                }
                out.push_str("</ul>");
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ul>\n");
    }
    out.push_str("<h2>Runs</h2>\n<div class=\"wide\"><table>\n<tr><th>suite</th><th>task</th><th>split</th><th>model</th><th>repeat</th><th>seed</th><th>verdict</th><th>steps</th><th>wall</th><th>reason</th></tr>\n");
    for r in &report.results {
        let verdict = if r.passed {
            "pass".to_string()
        } else {
            "<span class=\"fail\">FAIL</span>".to_string()
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{verdict}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            html_escape(&r.suite),
            html_escape(&r.task),
            html_escape(&r.split),
            html_escape(&r.model),
            r.repeat,
            r.seed,
            r.steps,
            secs(r.wall_ms as f64),
            html_escape(&r.reason)
        );
    }
    out.push_str("</table></div>\n</body>\n</html>\n");
    out
}

const LABEL_W: f64 = 300.0;
const PLOT_W: f64 = 600.0;
const ROW_H: f64 = 26.0;

/// Horizontal bars of pass rate with Wilson whiskers, one per model and category.
fn pass_rate_svg(report: &Report) -> String {
    let rows = rows(report);
    let height = 30.0 + ROW_H * rows.len() as f64 + 20.0;
    let width = LABEL_W + PLOT_W + 220.0;
    let mut s = format!(
        "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"Pass rates with 95% intervals\">\n"
    );
    // Axis: 0, 25, 50, 75, 100 %.
    for i in 0..=4 {
        let x = LABEL_W + PLOT_W * f64::from(i) / 4.0;
        let _ = writeln!(
            s,
            "<line x1=\"{x}\" y1=\"20\" x2=\"{x}\" y2=\"{}\" stroke=\"#bbb\" stroke-dasharray=\"2,3\"/><text x=\"{x}\" y=\"14\" text-anchor=\"middle\">{}%</text>",
            height - 20.0,
            i * 25
        );
    }
    for (i, (m, g)) in rows.iter().enumerate() {
        let y = 26.0 + ROW_H * i as f64;
        let all = g.category == crate::report::ALL;
        let label = if all {
            format!("{} (all)", m.model)
        } else {
            format!("    {}", g.category)
        };
        let w = PLOT_W * g.pass_rate;
        let (fill, weight) = if all {
            ("#555", "bold")
        } else {
            ("#aaa", "normal")
        };
        let lo = LABEL_W + PLOT_W * g.wilson_low;
        let hi = LABEL_W + PLOT_W * g.wilson_high;
        let mid = y + ROW_H / 2.0 - 3.0;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-weight=\"{weight}\" xml:space=\"preserve\">{}</text>\
<rect x=\"{LABEL_W}\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\" fill=\"{fill}\" stroke=\"#111\" stroke-width=\"0.5\"/>\
<line x1=\"{lo:.1}\" y1=\"{mid}\" x2=\"{hi:.1}\" y2=\"{mid}\" stroke=\"#000\" stroke-width=\"1.5\"/>\
<line x1=\"{lo:.1}\" y1=\"{}\" x2=\"{lo:.1}\" y2=\"{}\" stroke=\"#000\" stroke-width=\"1.5\"/>\
<line x1=\"{hi:.1}\" y1=\"{}\" x2=\"{hi:.1}\" y2=\"{}\" stroke=\"#000\" stroke-width=\"1.5\"/>\
<text x=\"{}\" y=\"{}\">{}/{} = {} [{}, {}]</text>",
            LABEL_W - 8.0,
            y + 13.0,
            html_escape(&clip_middle(&label, 44)),
            ROW_H - 8.0,
            mid - 5.0,
            mid + 5.0,
            mid - 5.0,
            mid + 5.0,
            LABEL_W + PLOT_W + 10.0,
            y + 13.0,
            g.passes,
            g.runs,
            pct(g.pass_rate),
            pct(g.wilson_low),
            pct(g.wilson_high)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// At most `max` characters: the start and the end of a longer text with "..." between, so
/// names that share a long prefix (paths of scripts, URLs) stay told apart.
fn clip_middle(s: &str, max: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= max {
        return s.to_string();
    }
    let keep = max.saturating_sub(3);
    let head = keep / 3;
    let tail = keep - head;
    let start: String = chars[..head].iter().collect();
    let end: String = chars[chars.len() - tail..].iter().collect();
    format!("{start}...{end}")
}

/// An axis or median figure with as many decimals as a chart running up to `max` needs.
fn tick(x: f64, max: f64) -> String {
    if max >= 20.0 {
        format!("{x:.0}")
    } else if max >= 2.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A strip of one mark per run and a quartile box, one row per model.
fn strip_svg(report: &Report, values: fn(&GroupStats) -> Vec<f64>, unit: &str) -> String {
    let per_model: Vec<(&ModelReport, Vec<f64>)> = report
        .models
        .iter()
        .map(|m| (m, values(&m.overall)))
        .collect();
    let max = per_model
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0f64, f64::max);
    let max = if max > 0.0 { max } else { 1.0 };
    let row_h = 40.0;
    let height = 40.0 + row_h * per_model.len() as f64;
    let width = LABEL_W + PLOT_W + 220.0;
    let mut s = format!(
        "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"{} per run\">\n",
        html_escape(unit)
    );
    for i in 0..=4 {
        let x = LABEL_W + PLOT_W * f64::from(i) / 4.0;
        let _ = writeln!(
            s,
            "<line x1=\"{x}\" y1=\"20\" x2=\"{x}\" y2=\"{}\" stroke=\"#bbb\" stroke-dasharray=\"2,3\"/><text x=\"{x}\" y=\"14\" text-anchor=\"middle\">{} {}</text>",
            height - 10.0,
            tick(max * f64::from(i) / 4.0, max),
            html_escape(unit)
        );
    }
    for (i, (m, v)) in per_model.iter().enumerate() {
        let y = 26.0 + row_h * i as f64;
        let cy = y + row_h / 2.0 - 4.0;
        let sx = |x: f64| LABEL_W + PLOT_W * x / max;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            LABEL_W - 8.0,
            cy + 4.0,
            html_escape(&clip_middle(&m.model, 44))
        );
        if let Some((q1, q2, q3)) = crate::stats::quartiles(v) {
            let _ = writeln!(
                s,
                "<rect x=\"{:.1}\" y=\"{}\" width=\"{:.1}\" height=\"{}\" fill=\"none\" stroke=\"#000\"/><line x1=\"{:.1}\" y1=\"{}\" x2=\"{:.1}\" y2=\"{}\" stroke=\"#000\" stroke-width=\"2.5\"/><text x=\"{}\" y=\"{}\">median {} {}</text>",
                sx(q1),
                cy - 10.0,
                (sx(q3) - sx(q1)).max(1.0),
                20.0,
                sx(q2),
                cy - 14.0,
                sx(q2),
                cy + 14.0,
                LABEL_W + PLOT_W + 10.0,
                cy + 4.0,
                tick(q2, max),
                html_escape(unit)
            );
        }
        for (x, passed) in v.iter().zip(&m.overall.passed) {
            let fill = if *passed { "#000" } else { "#fff" };
            let _ = writeln!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{cy}\" r=\"3.5\" fill=\"{fill}\" stroke=\"#000\"/>",
                sx(*x)
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

// ---------------------------------------------------------------- junit

/// Escapes for XML text and attributes. Characters XML 1.0 cannot hold at all (most controls)
/// are made visible by `escape_line` first.
pub fn xml_escape(s: &str) -> String {
    html_escape(s)
}

/// JUnit XML: one testsuite per (suite, model), one testcase per run.
pub fn junit(results: &[RunResult]) -> String {
    let mut sorted = results.to_vec();
    crate::results::sort_canonical(&mut sorted);
    let failures = sorted.iter().filter(|r| !r.passed).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"rein bench\" tests=\"{}\" failures=\"{failures}\">",
        sorted.len()
    );
    let mut groups: Vec<((String, String), Vec<&RunResult>)> = Vec::new();
    for r in &sorted {
        let key = (r.suite.clone(), r.model.clone());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    for ((suite, model), runs) in &groups {
        let fails = runs.iter().filter(|r| !r.passed).count();
        let time: u64 = runs.iter().map(|r| r.wall_ms).sum();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{} [{}]\" tests=\"{}\" failures=\"{fails}\" time=\"{:.3}\">",
            xml_escape(suite),
            xml_escape(model),
            runs.len(),
            time as f64 / 1000.0
        );
        for r in runs {
            let _ = write!(
                out,
                "    <testcase classname=\"{}.{}\" name=\"{} #{}\" time=\"{:.3}\"",
                xml_escape(&r.suite),
                xml_escape(&r.category),
                xml_escape(&r.task),
                r.repeat,
                r.wall_ms as f64 / 1000.0
            );
            if r.passed {
                out.push_str("/>\n");
            } else {
                let _ = writeln!(
                    out,
                    ">\n      <failure message=\"{}\" type=\"verdict\">model {} seed {} contract {}</failure>\n    </testcase>",
                    xml_escape(&r.reason),
                    xml_escape(&r.model),
                    r.seed,
                    xml_escape(&r.contract_sha256)
                );
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Writes `results.jsonl` (canonical), `report.md`, `report.html` and `junit.xml` into `dir`
/// and returns the report. The same results give the same bytes.
pub fn write_outputs(dir: &Path, results: &[RunResult]) -> Result<Report, BenchError> {
    check_consistent(results)?;
    std::fs::create_dir_all(dir).map_err(|e| BenchError::io(dir, "create", e))?;
    let report = Report::build(results);
    write_canonical(&dir.join(RESULTS_FILE), results)?;
    write_atomic(&dir.join(REPORT_MD), markdown(&report).as_bytes())?;
    write_atomic(&dir.join(REPORT_HTML), html(&report).as_bytes())?;
    write_atomic(&dir.join(JUNIT_XML), junit(results).as_bytes())?;
    Ok(report)
}
