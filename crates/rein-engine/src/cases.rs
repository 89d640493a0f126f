//! The judge, tested rather than trusted: every mission ships a gold deliverable that must pass
//! and near misses that must fail, and `check_mission` runs the judge on each of them.
//!
//! Layout, beside `mission.json`:
//!
//! ```text
//! judge/gold/files/<workspace files>              the correct deliverable (must pass)
//! judge/gold_variants/<name>/files/...            other correct spellings (must pass)
//! judge/near_misses/<name>/case.json              {"class", "why", "caught_by", "trace"?, "deleted"?}
//! judge/near_misses/<name>/files/...              the deliverable that is wrong in one way
//! ```
//!
//! A case's world is what a run starts with (the mission's inputs and editable files, copied
//! from its fixtures) overlaid with its `files/`, less the paths its `deleted` lists. Its trace
//! is the one in `case.json`, or by default: every input and editable file read in full, every
//! editable file the case changed written with its final content, the deliverable written
//! (an editable deliverable only if the case changed it: a run that left it as it was never
//! wrote it), read back, then `finish`. Verdicts come from the same checks every run uses, with
//! no decider: a decision not yet qualified (as every decision of the shipped human-review-only
//! missions is) is left to a person, listed in the report and never named by a near miss; a
//! qualified one runs, and with no decider fails closed.
//! A trace call is `{"tool", "path"?, "outcome"?, "full_read"?, "lines"?, "writes"?,
//! "content"?}`; `lines` (`[first, last, total]`) is a read by line range, the lines it showed
//! whole (`missions/desk_task/judge/near_misses/process-ranges-gap`).
//!
//! ## Memory-sandbox tasks ([`CaseSandbox::Memory`])
//!
//! A memory case is a final sandbox state plus the action log that led to it:
//!
//! ```text
//! judge/gold/case.json                 {"trace": [...], "variables"?: {...}}   (required)
//! judge/gold/files/<sandbox files>     the final files (may be absent: no files)
//! judge/near_misses/<name>/case.json   {"class", "why", "caught_by", "trace", "variables"?}
//! judge/near_misses/<name>/files/...
//! ```
//!
//! `files/` is the *whole* final sandbox (not overlaid on the fixtures, so a deletion can be
//! written), `variables` its variables (name → JSON value), and `trace` the action log, which a
//! memory case must give: `[{"tool": "create_file", "path": "a.txt"}, {"tool": "list_files"},
//! {"tool": "final_answer"}]` (`outcome` defaults to `executed`). The rules of a memory run apply
//! on top of the contract's checks, as two more checks a near miss may name in `caught_by`:
//! [`UNREGISTERED_TOOL_CHECK`] (a call of a tool the mission does not list stops the run and
//! fails it; nothing after it executes) and [`FINAL_ANSWER_CHECK`] (a run that never reached an
//! executed `final_answer` fails; reaching it proves nothing by itself). A workspace case is held
//! to the finish rules too, as [`FINISH_RULES_CHECK`]: a gold that a run
//! could not finish with fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::checks::{evaluate_without_decider, CheckResult, MemWorld, TraceEntry, Verdict, World};
use crate::mission::{sha256_hex, FrozenContract};

/// The folder of a mission's judge cases.
pub const CASES_DIR: &str = "judge";

/// The check a memory case fails when its action log calls a tool the mission does not list.
pub const UNREGISTERED_TOOL_CHECK: &str = "harness:unregistered_tool";
/// The check a memory case fails when its action log never reaches an executed `final_answer`.
pub const FINAL_ANSWER_CHECK: &str = "harness:final_answer";
/// The check a workspace case fails when its action log finishes where the finish rules would
/// refuse: a gold deliverable a run could never finish with (fewer words than the floor, say) is
/// a defect of the task, not a pass.
pub const FINISH_RULES_CHECK: &str = "harness:finish_rules";

/// Where a mission's actions land, and so how its cases are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseSandbox {
    /// A workspace folder: fixtures overlaid with the case's files.
    Dir,
    /// The in-memory sandbox: the case's files and variables are the whole final state.
    Memory,
}

/// Tools whose call changes what it names (`set_variable` a variable, as the sandbox tool says:
/// a case's trace must be marked as a real run's is, or the cases judge another trace).
const MUTATING_TOOLS: &[&str] = &[
    "set_variable",
    "create_file",
    "edit_file",
    "edit_lines",
    "replace_file",
    "delete_file",
    "write_json",
    "write_sections",
];

/// Why the cases cannot be run.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    #[error("{mission}: no judge cases: {dir} does not exist; add judge/gold/files/ with the correct deliverable and judge/near_misses/<name>/ with wrong ones")]
    NoCases { mission: String, dir: PathBuf },
    #[error("{mission}: no gold deliverable: {dir} is missing or empty")]
    NoGold { mission: String, dir: PathBuf },
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

/// What kind of case, and so what the judge must say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseKind {
    Gold,
    GoldVariant,
    NearMiss,
}

impl CaseKind {
    pub fn must_pass(self) -> bool {
        self != CaseKind::NearMiss
    }
}

/// `case.json`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    #[serde(default)]
    class: String,
    #[serde(default)]
    why: String,
    #[serde(default)]
    caught_by: Vec<String>,
    #[serde(default)]
    trace: Option<Vec<CaseCall>>,
    /// Workspace files the case removed (a fixture deleted by the run).
    #[serde(default)]
    deleted: Vec<String>,
    /// Memory cases only: the final sandbox variables.
    #[serde(default)]
    variables: Option<BTreeMap<String, serde_json::Value>>,
}

/// One call of a case's trace.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseCall {
    tool: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    outcome: Option<String>,
    #[serde(default)]
    full_read: Option<bool>,
    /// The lines a read showed whole, `[first, last, total]` (a read by line range); a call
    /// with them is not a whole read unless `full_read` says so.
    #[serde(default)]
    lines: Option<[u64; 3]>,
    /// `final`: this call left the final content of its path; `other`: something else.
    #[serde(default)]
    writes: Option<String>,
    /// The exact text this call left in its path (for a file changed again or deleted later).
    #[serde(default)]
    content: Option<String>,
}

/// The judge's answer on one case.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    pub name: String,
    pub kind: CaseKind,
    pub class: String,
    pub why: String,
    /// The judge's verdict.
    pub passed: bool,
    /// The verdict is the one the case requires.
    pub as_expected: bool,
    pub failed_checks: Vec<String>,
    /// Checks named in `caught_by` that did not fail.
    pub not_caught_by: Vec<String>,
    pub verdict: Verdict,
}

/// Every case of a mission, judged, with the counts.
#[derive(Debug, Clone, Serialize)]
pub struct CaseReport {
    pub mission: String,
    pub contract_sha256: String,
    pub gold: usize,
    pub gold_passed: usize,
    pub near_misses: usize,
    pub near_misses_failed: usize,
    /// Near misses the judge passed: the judge is broken.
    pub false_passes: usize,
    /// Correct deliverables the judge failed.
    pub false_fails: usize,
    /// Near misses that failed, but not on every check their case names.
    pub wrong_catcher: usize,
    /// Checks no program decides here: decisions not yet qualified, which a person reviews.
    pub left_to_a_person: Vec<String>,
    pub cases: Vec<CaseResult>,
}

impl CaseReport {
    /// Gold passes, every near miss fails on the checks it names.
    pub fn ok(&self) -> bool {
        self.false_passes == 0 && self.false_fails == 0 && self.wrong_catcher == 0 && self.gold > 0
    }
}

/// Runs the judge on every case of a workspace (`dir`) mission.
pub fn check_mission(contract: &FrozenContract) -> Result<CaseReport, CaseError> {
    check_mission_in(contract, CaseSandbox::Dir)
}

/// Runs the judge on every case of the mission, read as cases of `sandbox`.
pub fn check_mission_in(
    contract: &FrozenContract,
    sandbox: CaseSandbox,
) -> Result<CaseReport, CaseError> {
    let mission_dir = contract.source.parent().unwrap_or(Path::new("."));
    let dir = mission_dir.join(CASES_DIR);
    let id = contract.id().to_string();
    if !dir.is_dir() {
        return Err(CaseError::NoCases { mission: id, dir });
    }
    let gold_dir = dir.join("gold");
    match sandbox {
        CaseSandbox::Dir if files_of(&gold_dir.join("files"))?.is_empty() => {
            return Err(CaseError::NoGold {
                mission: id,
                dir: gold_dir.join("files"),
            });
        }
        CaseSandbox::Memory if !gold_dir.join("case.json").is_file() => {
            return Err(CaseError::NoGold {
                mission: id,
                dir: gold_dir.join("case.json"),
            });
        }
        _ => {}
    }
    let fixtures = starting_files(contract)?;
    let mut cases = vec![run_case(
        contract,
        sandbox,
        &fixtures,
        "gold",
        CaseKind::Gold,
        &gold_dir,
    )?];
    for (kind, sub) in [
        (CaseKind::GoldVariant, "gold_variants"),
        (CaseKind::NearMiss, "near_misses"),
    ] {
        for (name, case_dir) in subdirs(&dir.join(sub))? {
            cases.push(run_case(
                contract, sandbox, &fixtures, &name, kind, &case_dir,
            )?);
        }
    }
    let count = |f: &dyn Fn(&CaseResult) -> bool| cases.iter().filter(|c| f(c)).count();
    Ok(CaseReport {
        mission: id,
        contract_sha256: contract.sha256.clone(),
        gold: count(&|c| c.kind.must_pass()),
        gold_passed: count(&|c| c.kind.must_pass() && c.passed),
        near_misses: count(&|c| !c.kind.must_pass()),
        near_misses_failed: count(&|c| !c.kind.must_pass() && !c.passed),
        false_passes: count(&|c| !c.kind.must_pass() && c.passed),
        false_fails: count(&|c| c.kind.must_pass() && !c.passed),
        wrong_catcher: count(&|c| !c.kind.must_pass() && !c.passed && !c.not_caught_by.is_empty()),
        left_to_a_person: left_to_a_person(contract),
        cases,
    })
}

/// The checks whose verdict is a person's here: decisions not yet qualified.
fn left_to_a_person(contract: &FrozenContract) -> Vec<String> {
    contract
        .mission
        .checks
        .iter()
        .filter(|c| c.spec.is_advisory())
        .map(|c| c.id.clone())
        .collect()
}

fn run_case(
    contract: &FrozenContract,
    sandbox: CaseSandbox,
    fixtures: &BTreeMap<String, Vec<u8>>,
    name: &str,
    kind: CaseKind,
    case_dir: &Path,
) -> Result<CaseResult, CaseError> {
    let case_file = case_dir.join("case.json");
    let case: CaseFile = if case_file.is_file() {
        let text = std::fs::read_to_string(&case_file).map_err(|source| CaseError::Io {
            path: case_file.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|e| CaseError::Invalid {
            path: case_file.clone(),
            message: e.to_string(),
        })?
    } else if kind == CaseKind::NearMiss {
        return Err(CaseError::Invalid {
            path: case_file,
            message: "a near miss needs a case.json saying its class and the check that catches it"
                .into(),
        });
    } else {
        CaseFile::default()
    };
    if kind == CaseKind::NearMiss && case.caught_by.is_empty() {
        return Err(CaseError::Invalid {
            path: case_file,
            message: "`caught_by` must name at least one check".into(),
        });
    }
    let mut known: Vec<&str> = contract
        .mission
        .checks
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    if sandbox == CaseSandbox::Memory {
        known.extend([UNREGISTERED_TOOL_CHECK, FINAL_ANSWER_CHECK]);
    } else {
        known.push(FINISH_RULES_CHECK);
    }
    if let Some(unknown) = case.caught_by.iter().find(|c| !known.contains(&c.as_str())) {
        return Err(CaseError::Invalid {
            path: case_file,
            message: format!("`caught_by` names `{unknown}`, which is not a check of this mission"),
        });
    }
    let checks = &contract.mission.checks;
    let for_a_person = |id: &&String| checks.iter().any(|c| &c.id == *id && c.spec.is_advisory());
    if let Some(decision) = case.caught_by.iter().find(for_a_person) {
        return Err(CaseError::Invalid {
            path: case_file,
            message: format!(
                "`caught_by` names `{decision}`, a decision not yet qualified: no program decides it \
                 here, a person does; name a check a program decides, or leave this wrong answer \
                 out of the cases (the mission's review catches it)"
            ),
        });
    }
    if sandbox == CaseSandbox::Memory {
        return run_memory_case(contract, name, kind, case_dir, &case_file, case);
    }
    if case.variables.is_some() {
        return Err(CaseError::Invalid {
            path: case_file,
            message: "`variables` is for memory-sandbox tasks only".into(),
        });
    }
    let mut world = MemWorld::new();
    for (p, b) in fixtures {
        world.set_file(p, b.clone());
    }
    for (p, b) in files_of(&case_dir.join("files"))? {
        world.set_file(&p, b);
    }
    for p in &case.deleted {
        world.remove_file(p);
    }
    let trace = match &case.trace {
        Some(calls) => calls
            .iter()
            .map(|c| trace_entry(c, &world))
            .collect::<Result<Vec<_>, String>>()
            .map_err(|message| CaseError::Invalid {
                path: case_file.clone(),
                message,
            })?,
        None => default_trace(contract, &world),
    };
    let mut verdict = evaluate_without_decider(contract, &world, &trace);
    if let Some(refused) = finish_refused(contract, &world, &trace, kind.must_pass()) {
        verdict.passed = false;
        verdict.checks.push(refused);
    }
    Ok(case_result(name, kind, case, verdict))
}

/// The finish rules on a case: the refusal a run would get at its first executed `finish`,
/// with the log up to it, as a failed check. A case that must pass is held to them at the end
/// of its log when it never finishes: a run passes only after an accepted finish, so a gold no
/// run could finish with is no gold. `None` when they accept, or a near miss never finishes.
fn finish_refused(
    contract: &FrozenContract,
    world: &dyn World,
    trace: &[TraceEntry],
    must_pass: bool,
) -> Option<CheckResult> {
    let at = trace
        .iter()
        .position(|e| e.tool == "finish" && e.executed())
        .or(must_pass.then_some(trace.len()))?;
    let refusal =
        crate::finish::check_finish(contract, world, &trace[..at], &contract.inputs).err()?;
    Some(CheckResult {
        id: FINISH_RULES_CHECK.into(),
        kind: "harness".into(),
        passed: false,
        facts: vec![format!(
            "the action log finishes where a run's finish would be refused ({})",
            refusal.reason()
        )],
        feedback: Vec::new(),
        quoted: Vec::new(),
        advisory: false,
    })
}

/// A memory case: its files and variables are the whole final sandbox, its trace the action
/// log, and the run's own rules (unregistered tool, no final answer) judge beside the checks.
fn run_memory_case(
    contract: &FrozenContract,
    name: &str,
    kind: CaseKind,
    case_dir: &Path,
    case_file: &Path,
    case: CaseFile,
) -> Result<CaseResult, CaseError> {
    let invalid = |message: String| CaseError::Invalid {
        path: case_file.to_path_buf(),
        message,
    };
    let Some(calls) = &case.trace else {
        return Err(invalid(
            "a memory case needs its action log: `trace`, e.g. [{\"tool\": \"create_file\", \"path\": \"a.txt\"}, {\"tool\": \"final_answer\"}]".into(),
        ));
    };
    let mut world = rein_workspace::Sandbox::new();
    for (p, b) in files_of(&case_dir.join("files"))? {
        let text = String::from_utf8(b).map_err(|_| {
            invalid(format!(
                "files/{p} is not UTF-8 text; sandbox files hold text"
            ))
        })?;
        world.files.insert(p, text);
    }
    world.variables = case.variables.clone().unwrap_or_default();
    let mut trace = calls
        .iter()
        .map(|c| trace_entry(c, &world))
        .collect::<Result<Vec<_>, String>>()
        .map_err(invalid)?;
    let tools = &contract.mission.tools;
    let stop = trace.iter().position(|e| !tools.contains(&e.tool));
    let mut rules = Vec::new();
    if let Some(at) = stop {
        rules.push(CheckResult {
            id: UNREGISTERED_TOOL_CHECK.into(),
            kind: "harness".into(),
            passed: false,
            facts: vec![format!(
                "action {} called `{}`, which is not a registered tool: the run stops there and fails",
                at + 1,
                trace[at].tool
            )],
            feedback: Vec::new(),
            quoted: Vec::new(),
            advisory: false,
        });
        // Nothing after the stop executes.
        trace.truncate(at + 1);
    }
    let answered = trace
        .iter()
        .any(|e| e.tool == "final_answer" && e.executed());
    if !answered && stop.is_none() {
        rules.push(CheckResult {
            id: FINAL_ANSWER_CHECK.into(),
            kind: "harness".into(),
            passed: false,
            facts: vec!["the action log never reaches an executed final_answer".into()],
            feedback: Vec::new(),
            quoted: Vec::new(),
            advisory: false,
        });
    }
    let mut verdict = evaluate_without_decider(contract, &world, &trace);
    if !rules.is_empty() {
        verdict.passed = false;
        verdict.checks.extend(rules);
    }
    Ok(case_result(name, kind, case, verdict))
}

fn case_result(name: &str, kind: CaseKind, case: CaseFile, verdict: Verdict) -> CaseResult {
    let failed_checks: Vec<String> = verdict
        .checks
        .iter()
        .filter(|c| !c.passed && !c.advisory)
        .map(|c| c.id.clone())
        .collect();
    let not_caught_by: Vec<String> = case
        .caught_by
        .iter()
        .filter(|c| !failed_checks.contains(c))
        .cloned()
        .collect();
    let passed = verdict.passed;
    let as_expected = if kind.must_pass() {
        passed
    } else {
        !passed && not_caught_by.is_empty()
    };
    CaseResult {
        name: name.to_string(),
        kind,
        class: case.class,
        why: case.why,
        passed,
        as_expected,
        failed_checks,
        not_caught_by,
        verdict,
    }
}

/// What a run starts with: each input and editable file, from the fixtures.
fn starting_files(contract: &FrozenContract) -> Result<BTreeMap<String, Vec<u8>>, CaseError> {
    let mut out = BTreeMap::new();
    for h in contract.inputs.iter().chain(&contract.editable) {
        let path = contract.fixtures_dir.join(&h.path);
        let bytes = std::fs::read(&path).map_err(|source| CaseError::Io { path, source })?;
        out.insert(h.path.clone(), bytes);
    }
    Ok(out)
}

/// Every input and editable file read in full, the editable files the case changed written in
/// place, the deliverable written with its final content, read back, finish.
fn default_trace(contract: &FrozenContract, world: &dyn World) -> Vec<TraceEntry> {
    let m = &contract.mission;
    let mut trace: Vec<TraceEntry> = m
        .inputs
        .iter()
        .chain(&m.editable)
        .map(|i| TraceEntry::new("read_file", Some(i), "executed", false).with_full_read(true))
        .collect();
    let artifact = m.required_artifact.as_str();
    for e in &contract.editable {
        let now = final_hash(world, &e.path);
        if now.as_deref() != Some(e.sha256.as_str()) {
            trace.push(
                TraceEntry::new("edit_file", Some(&e.path), "executed", true).with_written(now),
            );
        }
    }
    if contract.editable_hash(artifact).is_none() {
        trace.push(
            TraceEntry::new("create_file", Some(artifact), "executed", true)
                .with_written(final_hash(world, artifact)),
        );
    }
    trace
        .push(TraceEntry::new("read_file", Some(artifact), "executed", false).with_full_read(true));
    trace.push(TraceEntry::new("finish", None, "executed", false));
    trace
}

fn final_hash(world: &dyn World, path: &str) -> Option<String> {
    world.read(path).ok().flatten().map(|b| sha256_hex(&b))
}

fn trace_entry(c: &CaseCall, world: &dyn World) -> Result<TraceEntry, String> {
    let outcome = c.outcome.as_deref().unwrap_or("executed");
    let mutated = c.writes.is_some() || MUTATING_TOOLS.contains(&c.tool.as_str());
    let mut e = TraceEntry::new(&c.tool, c.path.as_deref(), outcome, mutated)
        .with_full_read(
            c.full_read
                .unwrap_or(c.tool == "read_file" && c.lines.is_none()),
        )
        .with_lines_shown(c.lines);
    if let Some(text) = &c.content {
        if c.writes.is_some() || c.path.is_none() {
            return Err(format!(
                "trace call {}: `content` needs a `path` and cannot go with `writes`",
                c.tool
            ));
        }
        return Ok(e.with_written(Some(sha256_hex(text.as_bytes()))));
    }
    match (c.writes.as_deref(), c.path.as_deref()) {
        (None, _) => {}
        (Some("final"), Some(p)) => e = e.with_written(final_hash(world, p)),
        (Some("other"), Some(_)) => e = e.with_written(Some("0".repeat(64))),
        (Some(w), _) => {
            return Err(format!(
                "trace call {} {}: `writes` must be \"final\" or \"other\" and needs a `path`, got {w:?}",
                c.tool,
                c.path.as_deref().unwrap_or("")
            ))
        }
    }
    Ok(e)
}

/// Every file below `dir`, keyed by its `/`-separated path relative to `dir` (empty when `dir`
/// does not exist).
fn files_of(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, CaseError> {
    let mut out = BTreeMap::new();
    if !dir.is_dir() {
        return Ok(out);
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|source| CaseError::Io {
            path: d.clone(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| CaseError::Io {
                path: d.clone(),
                source,
            })?;
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .map(|r| r.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default();
                let bytes = std::fs::read(&p).map_err(|source| CaseError::Io {
                    path: p.clone(),
                    source,
                })?;
                out.insert(rel, bytes);
            }
        }
    }
    Ok(out)
}

/// The sub-folders of `dir` by name, sorted (none when `dir` does not exist).
fn subdirs(dir: &Path) -> Result<Vec<(String, PathBuf)>, CaseError> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|source| CaseError::Io {
        path: dir.to_path_buf(),
        source,
    })? {
        let entry = entry.map_err(|source| CaseError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        if entry.path().is_dir() {
            out.push((
                entry.file_name().to_string_lossy().into_owned(),
                entry.path(),
            ));
        }
    }
    out.sort();
    Ok(out)
}
