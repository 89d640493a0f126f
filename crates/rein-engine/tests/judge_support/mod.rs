//! Judging a deliverable as `rein check-mission` does, for the red-team files of the judge: the
//! task's frozen contract (its mission.json, its fixtures) with the deliverable put in the world;
//! only the checks that read the deliverable decide.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use rein_engine::checks::{evaluate, MemWorld, Verdict};
use rein_engine::mission::{FrozenContract, Mission};

/// The folder of a desk task (desk_task is a mission of its own).
pub fn task_dir(task: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if task == "desk_task" {
        root.join("missions/desk_task")
    } else {
        root.join("suites/desk").join(task)
    }
}

/// Every file under `dir`, as (path relative to `base`, bytes).
pub fn files_under(base: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            files_under(base, &p, out);
        } else {
            let rel = p
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, std::fs::read(&p).unwrap()));
        }
    }
}

/// The task's gold deliverable at `path`.
pub fn gold(task: &str, path: &str) -> String {
    std::fs::read_to_string(task_dir(task).join("judge/gold/files").join(path)).unwrap()
}

/// `contract` judging `content` at `path`, the files under `inputs` beside it.
pub fn judge_with(contract: &FrozenContract, inputs: &Path, path: &str, content: &str) -> Verdict {
    let mut files = Vec::new();
    files_under(inputs, inputs, &mut files);
    let mut w = MemWorld::new();
    for (p, b) in files {
        w.set_file(&p, b);
    }
    w.set_file(path, content);
    evaluate(contract, &w, &[], None)
}

/// The task's contract judging `content` at `path`, the fixtures beside it as frozen.
pub fn judge(task: &str, path: &str, content: &str) -> Verdict {
    let dir = task_dir(task);
    let contract: FrozenContract = Mission::load(&dir).unwrap();
    judge_with(&contract, &dir.join("fixtures"), path, content)
}

/// The ids of the failed checks of `v` that read the deliverable (not the trace, not a model).
pub fn failed_of(v: &Verdict) -> Vec<String> {
    v.checks
        .iter()
        .filter(|c| !c.passed && !c.advisory)
        .filter(|c| {
            !matches!(
                c.kind.as_str(),
                "written_this_run" | "inputs_read" | "decision"
            )
        })
        .map(|c| c.id.clone())
        .collect()
}

pub fn failed(task: &str, path: &str, content: &str) -> Vec<String> {
    failed_of(&judge(task, path, content))
}

/// What a test found wrong: every case is judged before the test fails, so a hole's test
/// names each of its cases that the judge gets wrong.
#[derive(Default)]
pub struct Tally(Vec<String>);

impl Tally {
    /// A wrong deliverable: some check must fail it.
    pub fn rejected(&mut self, task: &str, path: &str, content: &str, why: &str) {
        if failed(task, path, content).is_empty() {
            self.0
                .push(format!("{task}: {why}: judged pass:\n{content}\n"));
        }
    }

    /// A wrong deliverable (`why`) that `id` must fail.
    pub fn caught_by(&mut self, task: &str, path: &str, content: &str, id: &str, why: &str) {
        let f = failed(task, path, content);
        if !f.iter().any(|x| x == id) {
            self.0.push(format!(
                "{task}: {why}: {id} did not fail it (failed: {f:?}):\n{content}\n"
            ));
        }
    }

    /// A right deliverable: no check may fail it.
    pub fn accepted(&mut self, task: &str, path: &str, content: &str, why: &str) {
        let f = failed(task, path, content);
        if !f.is_empty() {
            self.0
                .push(format!("{task}: {why}: failed {f:?}:\n{content}\n"));
        }
    }

    pub fn note(&mut self, s: String) {
        self.0.push(s);
    }

    pub fn check(self) {
        assert!(self.0.is_empty(), "{}", self.0.join("\n"));
    }
}

pub const DESK: &str = "desk_task";
pub const SUMMARY: &str = "out/summary.md";
