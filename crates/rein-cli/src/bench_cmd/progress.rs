//! What a person sees while a bench runs: an indicatif bar (done/total, passes so far, ETA) when
//! stderr is a terminal, and one plain line per finished run otherwise (tests and CI read those).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rein_bench::results::RunResult;
use rein_protocol::display::escape_line;

pub(super) enum Progress {
    Bar(ProgressBar),
    Lines { total: usize },
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress::Lines { total };
        }
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "rein: bench [{bar:30}] {pos}/{len} runs, {msg}, {elapsed} elapsed, ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
        bar.set_message("0 passed");
        Progress::Bar(bar)
    }

    /// Run number `done` (1-based) finished; `passes` runs of this bench passed so far.
    pub fn finished(&self, done: u64, passes: u64, r: &RunResult) {
        let verdict = if r.passed {
            "pass".to_string()
        } else {
            format!("fail: {}", escape_line(&r.reason))
        };
        let what = format!(
            "{}/{} {} #{}: {verdict}",
            escape_line(&r.suite),
            escape_line(&r.task),
            escape_line(&r.model),
            r.repeat,
        );
        match self {
            Progress::Bar(bar) => {
                bar.set_position(done);
                bar.set_message(format!("{passes} passed"));
                if !r.passed {
                    bar.println(format!("rein: bench {what}"));
                }
            }
            Progress::Lines { total } => {
                eprintln!("rein: bench [{done}/{total}, {passes} passed] {what}");
            }
        }
    }

    pub fn done(&self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}
