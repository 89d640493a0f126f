//! Shared set-up for tests that send tool calls through the gate with a policy: a workspace of
//! given files beside a journal, and one fresh gate per call, as one `rein tool` process makes
//! it. A test file adds its own helpers with an `impl GateEnv` block of its own.

#![allow(dead_code)]

use std::path::PathBuf;

use rein_engine::gate::{Approver, CallExecutor, Gate, GateConfig};
use rein_engine::policy::Policy;
use rein_journal::Journal;
use rein_protocol::{GateReport, ToolCall};
use rein_workspace::desk::glob_path;
use rein_workspace::{desk_registry, ToolRegistry, Workspace};
use serde_json::Value;

pub struct GateEnv {
    /// Holds the workspace (`ws/`), the journal (`home/`) and whatever a test puts beside them.
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub journal: Journal,
    pub registry: ToolRegistry,
}

impl GateEnv {
    /// A workspace holding `files` (relative path, text).
    pub fn with_files(files: &[(&str, &str)]) -> GateEnv {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        for (rel, text) in files {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let journal = Journal::open(dir.path().join("home/journal.db")).unwrap();
        GateEnv {
            dir,
            root,
            journal,
            registry: desk_registry(),
        }
    }

    pub fn policy(&self, toml: &str) -> Policy {
        Policy::from_toml_str(toml, "policy.toml", &self.registry).unwrap()
    }

    /// A call with an id no other call of the test binary has.
    pub fn call(tool: &str, arguments: Value) -> ToolCall {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        ToolCall {
            id: format!("call-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
            tool: tool.into(),
            arguments,
        }
    }

    /// One call through a fresh gate with `policy`.
    pub fn submit_with(
        &self,
        policy: Policy,
        tool: &str,
        arguments: Value,
        approver: &mut dyn Approver,
    ) -> GateReport {
        self.submit_call(policy, &GateEnv::call(tool, arguments), approver)
    }

    /// `call` (its id as given: a replay test repeats one) through a fresh gate with `policy`.
    pub fn submit_call(
        &self,
        policy: Policy,
        call: &ToolCall,
        approver: &mut dyn Approver,
    ) -> GateReport {
        let ws = Workspace::open(&self.root).unwrap();
        let mut gate = Gate::new(GateConfig::desk(
            &self.registry,
            &ws,
            &self.journal,
            policy,
            None,
        ));
        gate.submit(call, approver)
    }
}

/// The distinct files a `search_text` result quotes, sorted.
pub fn matched_paths(result: &Value) -> Vec<String> {
    let mut out: Vec<String> = result["matches"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|m| m["path"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.dedup();
    out
}

/// Everything a caller sees of a report: outcome, reason and result.
pub fn whole(report: &GateReport) -> String {
    format!(
        "{} | {} | {}",
        report.outcome.as_str(),
        report.reason,
        report.result
    )
}

/// [`whole`] without what the caller wrote itself: the result's echoed `pattern`, and `echoed`
/// (a path as given, without a leading `./`, and the folder and glob `search_text` reads from
/// it), each replaced by `<echo>`.
pub fn answer_beyond(report: &GateReport, echoed: &str) -> String {
    let mut report = report.clone();
    if let Some(o) = report.result.as_object_mut() {
        o.remove("pattern");
    }
    let mut text = whole(&report);
    let mut echoes = vec![
        echoed.to_string(),
        echoed.trim_start_matches("./").to_string(),
    ];
    if let Some(g) = glob_path(echoed) {
        echoes.push(g.glob);
        echoes.push(g.folder);
    }
    echoes.sort_by_key(|e| std::cmp::Reverse(e.len()));
    for e in echoes.iter().filter(|e| e.len() > 1) {
        text = text.replace(e.as_str(), "<echo>");
    }
    text
}
