//! What the apply and undo tests share: a workspace with one file, a journal beside it, and a
//! gate over the desk tools with the safe default policy.
#![allow(dead_code)]

use std::path::PathBuf;

use rein_engine::gate::{Gate, GateConfig};
use rein_engine::policy::{Policy, Rule};
use rein_journal::{CallScope, Journal};
use rein_protocol::ToolCall;
use rein_workspace::{ToolRegistry, Workspace};

pub struct Env {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub ws: Workspace,
    pub journal: Journal,
}

/// A fresh workspace holding `a.txt` with `a_txt`, and an empty journal outside it.
pub fn env(a_txt: &str) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.txt"), a_txt).unwrap();
    let ws = Workspace::open(&root).unwrap();
    let journal = Journal::open(dir.path().join("journal.db")).unwrap();
    Env {
        dir,
        root,
        ws,
        journal,
    }
}

impl Env {
    /// A new gate, as a new `rein tool` process would build it.
    pub fn gate<'a>(&'a self, registry: &'a ToolRegistry) -> Gate<'a> {
        self.gate_with(registry, Vec::new())
    }

    /// A new gate whose policy is the safe defaults plus `rules`.
    pub fn gate_with<'a>(&'a self, registry: &'a ToolRegistry, rules: Vec<Rule>) -> Gate<'a> {
        Gate::new(GateConfig::desk(
            registry,
            &self.ws,
            &self.journal,
            Policy::from_rules(rules),
            None,
        ))
    }

    pub fn scope(&self) -> CallScope {
        CallScope::Workspace(self.ws.display_root())
    }

    pub fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(name)).ok()
    }
}

/// A call of `tool` with `arguments`, under call id `id`.
pub fn call(id: &str, tool: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        tool: tool.into(),
        arguments,
    }
}
