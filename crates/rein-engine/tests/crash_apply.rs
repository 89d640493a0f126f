#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Crash injection for the exactly-once apply. This test binary re-executes itself as the
//! applying process (`<exe> child ...`, which submits one call through the gate as `rein tool`
//! does) with `REIN_CRASH_AT` naming a boundary of the apply protocol; the child installs a
//! crash hook (the engine's `crash-hooks` feature, on for its tests only) that stops there, and
//! this parent kills it with SIGKILL. Further trials kill the child at a random moment.
//! After each kill: the journal opens cleanly, recovery leaves no intent, the file holds
//! exactly the old or the new content (never torn, never lost), no temp file is left, a call
//! with the same id but other arguments is an id conflict (never a replay, never a second
//! effect), and re-submitting the same call replays (or, if the effect never happened, applies
//! once). Runs without libtest (`harness = false`) so it can re-execute itself.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rein_engine::apply::{install_crash_hook, recover, CRASH_POINTS};
use rein_engine::gate::{AllowAll, CallExecutor, Gate, GateConfig};
use rein_engine::policy::Policy;
use rein_journal::{CallScope, ChangeState, Journal};
use rein_protocol::{GateOutcome, ToolCall};
use rein_workspace::{desk_registry, Workspace};
use serde_json::{json, Value};

/// Trials per (boundary, operation) pair.
const REPEATS: usize = 3;
/// Trials that kill at a random moment instead of at a named boundary.
const RANDOM_TRIALS: usize = 24;
const CALL_ID: &str = "crash-call-1";
/// The environment variable naming the boundary the child stops at.
const CRASH_ENV: &str = "REIN_CRASH_AT";
/// The line the child prints on stderr when it stops at a boundary.
const CRASH_MARKER: &str = "rein-crash-point:";
/// A file no trial's call touches: a call under another's id must never create it.
const OTHER_FILE: &str = "other.txt";

/// The child's crash hook: at the boundary `REIN_CRASH_AT` names, say so and wait for SIGKILL.
fn stop_at_named_point(point: &str) {
    use std::io::Write;
    if std::env::var_os(CRASH_ENV).is_none_or(|wanted| wanted != point) {
        return;
    }
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{CRASH_MARKER} {point}");
    let _ = err.flush();
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("child") {
        child(&args[2..]);
        return;
    }
    run_trials();
}

/// The applying process: recovery on start, then one call through the gate.
fn child(args: &[String]) {
    let [journal_path, root, tool, arguments] = args else {
        panic!("child needs JOURNAL ROOT TOOL ARGS, got {args:?}");
    };
    assert!(install_crash_hook(stop_at_named_point));
    let journal = Journal::open(journal_path).unwrap();
    let ws = Workspace::open(Path::new(root)).unwrap();
    recover(&journal, &ws).unwrap();
    let registry = desk_registry();
    let mut gate = Gate::new(GateConfig::desk(
        &registry,
        &ws,
        &journal,
        Policy::safe_default(),
        None,
    ));
    let call = ToolCall {
        id: CALL_ID.into(),
        tool: tool.clone(),
        arguments: serde_json::from_str(arguments).unwrap(),
    };
    let report = gate.submit(&call, &mut AllowAll);
    println!("{}", serde_json::to_string(&report).unwrap());
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Edit,
    Replace,
    Create,
    Delete,
}

const OPS: [Op; 4] = [Op::Edit, Op::Replace, Op::Create, Op::Delete];

/// Big enough that a torn write would show.
fn old_content() -> Vec<u8> {
    let mut text = String::new();
    for i in 0..4000 {
        text.push_str(&format!("line {i} of the original file\n"));
    }
    text.push_str("MARKER\n");
    text.into_bytes()
}

impl Op {
    fn file(self) -> &'static str {
        match self {
            Op::Create => "made/new.txt",
            _ => "big.txt",
        }
    }

    fn call(self) -> (&'static str, Value) {
        match self {
            Op::Edit => (
                "edit_file",
                json!({"path": "big.txt", "old_text": "MARKER", "new_text": "EDITED"}),
            ),
            Op::Replace => (
                "replace_file",
                json!({"path": "big.txt", "content": "r".repeat(30_000)}),
            ),
            Op::Create => (
                "create_file",
                json!({"path": "made/new.txt", "content": "c".repeat(20_000)}),
            ),
            Op::Delete => ("delete_file", json!({"path": "big.txt"})),
        }
    }

    /// Calls under the same id with other arguments: the same tool changed a little, and
    /// another tool on another file.
    fn other_calls(self) -> [(&'static str, Value); 2] {
        let same_tool = match self {
            Op::Edit => (
                "edit_file",
                json!({"path": "big.txt", "old_text": "MARKER", "new_text": "OTHER"}),
            ),
            Op::Replace => (
                "replace_file",
                json!({"path": "big.txt", "content": "something else"}),
            ),
            Op::Create => (
                "create_file",
                json!({"path": "made/new.txt", "content": "other content"}),
            ),
            Op::Delete => ("delete_file", json!({"path": "made/none.txt"})),
        };
        let other_file = (
            "create_file",
            json!({"path": OTHER_FILE, "content": "a second effect"}),
        );
        [same_tool, other_file]
    }

    fn before(self) -> Option<Vec<u8>> {
        match self {
            Op::Create => None,
            _ => Some(old_content()),
        }
    }

    fn after(self) -> Option<Vec<u8>> {
        match self {
            Op::Edit => Some(
                String::from_utf8(old_content())
                    .unwrap()
                    .replace("MARKER", "EDITED")
                    .into_bytes(),
            ),
            Op::Replace => Some("r".repeat(30_000).into_bytes()),
            Op::Create => Some("c".repeat(20_000).into_bytes()),
            Op::Delete => None,
        }
    }
}

struct Trial {
    _dir: tempfile::TempDir,
    root: PathBuf,
    journal: PathBuf,
    op: Op,
}

impl Trial {
    fn new(op: Op) -> Trial {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("big.txt"), old_content()).unwrap();
        let journal = dir.path().join("home/journal.db");
        Trial {
            _dir: dir,
            root,
            journal,
            op,
        }
    }

    fn spawn(&self, crash_at: Option<&str>) -> Child {
        let (tool, args) = self.op.call();
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.arg("child")
            .arg(&self.journal)
            .arg(&self.root)
            .arg(tool)
            .arg(args.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_remove(CRASH_ENV);
        if let Some(point) = crash_at {
            cmd.env(CRASH_ENV, point);
        }
        cmd.spawn().unwrap()
    }

    fn content(&self) -> Option<Vec<u8>> {
        std::fs::read(self.root.join(self.op.file())).ok()
    }
}

/// Waits for the child to announce `point` on stderr, then SIGKILLs it.
fn kill_at(child: &mut Child, point: &str) {
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let wanted = format!("{CRASH_MARKER} {point}");
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line == wanted => break,
            Ok(_) => continue,
            Err(_) => {
                let _ = child.kill();
                let status = child.wait().unwrap();
                let mut out = String::new();
                if let Some(mut stdout) = child.stdout.take() {
                    let _ = std::io::Read::read_to_string(&mut stdout, &mut out);
                }
                panic!("the child never reached {point}: {status:?} {out}");
            }
        }
    }
    sigkill(child);
}

fn sigkill(child: &mut Child) -> bool {
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc_kill(pid, 9) };
    let status = child.wait().unwrap();
    status.signal() == Some(9)
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

/// What the world must look like after a kill and recovery. Returns whether the effect had
/// happened before the kill.
fn verify(trial: &Trial, label: &str) -> bool {
    let journal = Journal::open(&trial.journal)
        .unwrap_or_else(|e| panic!("{label}: the journal does not open cleanly: {e}"));
    let ws = Workspace::open(&trial.root).unwrap();
    let report = recover(&journal, &ws).unwrap();
    assert!(
        report.conflicts.is_empty(),
        "{label}: conflicts {:?}",
        report.conflicts
    );
    assert!(
        ws.stale_temps().unwrap().is_empty(),
        "{label}: temp files left"
    );
    assert!(
        journal
            .pending_intents(&ws.display_root())
            .unwrap()
            .is_empty(),
        "{label}"
    );

    let content = trial.content();
    let applied = if content == trial.op.after() {
        true
    } else if content == trial.op.before() {
        false
    } else {
        panic!(
            "{label}: the file is torn or lost: {:?} bytes",
            content.as_ref().map(Vec::len)
        );
    };
    let scope = CallScope::Workspace(ws.display_root());
    let change = journal.change_for_call(&scope, CALL_ID).unwrap();
    match (&change, applied) {
        (Some(c), true) => assert_eq!(c.state, ChangeState::Committed, "{label}"),
        (Some(c), false) => assert_eq!(c.state, ChangeState::NotApplied, "{label}"),
        (None, false) => {}
        (None, true) => panic!("{label}: the file changed without a journaled change"),
    }
    if let Some(c) = &change {
        assert!(
            c.fingerprint.is_some(),
            "{label}: the change has no fingerprint"
        );
    }

    // Other arguments under the same id, whenever the id has a change: an id conflict, never a
    // replay and never an effect (an id that never reached the journal is simply new).
    let registry = desk_registry();
    if change.is_some() {
        for (tool, args) in trial.op.other_calls() {
            let call = ToolCall {
                id: CALL_ID.into(),
                tool: tool.into(),
                arguments: args,
            };
            let mut gate = Gate::new(GateConfig::desk(
                &registry,
                &ws,
                &journal,
                Policy::safe_default(),
                None,
            ));
            let r = gate.submit(&call, &mut AllowAll);
            assert_eq!(r.outcome, GateOutcome::IdConflict, "{label}: {tool}: {r:?}");
            assert!(
                r.reason.contains("nothing was done"),
                "{label}: {}",
                r.reason
            );
            assert_eq!(content, trial.content(), "{label}: {tool} changed the file");
            assert!(
                !trial.root.join(OTHER_FILE).exists(),
                "{label}: {tool} had an effect"
            );
        }
        let changes = journal.changes(&ws.display_root()).unwrap();
        assert_eq!(changes.len(), 1, "{label}: {changes:?}");
    }

    // Re-submit the same id: a replay if the effect happened, else exactly one apply.
    let (tool, args) = trial.op.call();
    let call = ToolCall {
        id: CALL_ID.into(),
        tool: tool.into(),
        arguments: args,
    };
    let mut gate = Gate::new(GateConfig::desk(
        &registry,
        &ws,
        &journal,
        Policy::safe_default(),
        None,
    ));
    let r = gate.submit(&call, &mut AllowAll);
    let expected = if applied {
        GateOutcome::Replayed
    } else {
        GateOutcome::Executed
    };
    assert_eq!(r.outcome, expected, "{label}: {r:?}");
    assert_eq!(trial.content(), trial.op.after(), "{label}");
    assert_eq!(
        gate.submit(&call, &mut AllowAll).outcome,
        GateOutcome::Replayed,
        "{label}"
    );
    let committed = journal
        .changes(&ws.display_root())
        .unwrap()
        .iter()
        .filter(|c| c.state == ChangeState::Committed && c.call_id == CALL_ID)
        .count();
    assert_eq!(committed, 1, "{label}: exactly one effect");
    applied
}

/// Expected effect state when killed at each boundary.
fn applied_at(point: &str) -> bool {
    !matches!(point, "after-intent" | "after-temp-write")
}

/// A small deterministic generator; the seed is printed so a failure can be replayed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

fn run_trials() {
    let started = Instant::now();
    let mut trials = 0usize;
    for point in CRASH_POINTS {
        for op in OPS {
            for repeat in 0..REPEATS {
                let label = format!("{op:?} killed at {point} (#{repeat})");
                let trial = Trial::new(op);
                let mut child = trial.spawn(Some(point));
                kill_at(&mut child, point);
                let applied = verify(&trial, &label);
                assert_eq!(applied, applied_at(point), "{label}");
                trials += 1;
            }
        }
    }
    let boundary_trials = trials;

    let seed = std::env::var("REIN_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    let mut rng = Lcg(seed);
    // Spread the kills over the whole life of a child, measured on an uninterrupted one.
    let lifetime = {
        let trial = Trial::new(Op::Edit);
        let start = Instant::now();
        let out = trial.spawn(None).wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["outcome"], "executed", "{report}");
        start.elapsed()
    };
    let spread = u64::try_from(lifetime.as_micros())
        .unwrap_or(u64::MAX)
        .max(1);
    let (mut before, mut after) = (0, 0);
    for i in 0..RANDOM_TRIALS {
        let op = OPS[i % OPS.len()];
        let label = format!("{op:?} killed at random (#{i}, seed {seed})");
        let trial = Trial::new(op);
        let mut child = trial.spawn(None);
        let delay = Duration::from_micros(spread / 4 + rng.next() % spread);
        std::thread::sleep(delay);
        let killed = sigkill(&mut child);
        let applied = verify(&trial, &label);
        if killed && !applied {
            before += 1;
        } else {
            after += 1;
        }
        trials += 1;
    }
    println!(
        "crash trials: {trials} ({boundary_trials} killed with SIGKILL at the boundaries {} x {} \
         operations x {REPEATS}; {RANDOM_TRIALS} killed at random moments over a {:.0} ms child lifetime, seed {seed}: {before} \
         before the effect, {after} after) in {:.1}s; every one recovered with no duplicate \
         effect, no torn or lost file, and a journal that opens cleanly",
        CRASH_POINTS.join(", "),
        OPS.len(),
        lifetime.as_secs_f64() * 1000.0,
        started.elapsed().as_secs_f64()
    );
    assert!(trials >= 50);
}
