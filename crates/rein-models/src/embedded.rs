//! The parent side of embedded models: each model runs in its own `rein worker` child process,
//! started from a command line built in one place, checked by a handshake, and supervised so a
//! crash or a hang becomes a clear error and no worker outlives Rein.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rein_protocol::model::{
    ChooseReply, ChooseRequest, Completion, CompletionRequest, ModelIdentity,
};
use rein_protocol::worker::{WorkerReply, WorkerRequest, WorkerStats};

use crate::{check_label_mass, Model, ModelError, Result};

/// How long a worker may take to load its model and say hello.
pub const DEFAULT_LOAD_TIMEOUT: Duration = Duration::from_secs(180);
/// The longest silence allowed while a request is in flight (no token, no reply).
pub const DEFAULT_REPLY_TIMEOUT: Duration = Duration::from_secs(120);
/// Lines of the worker's stderr kept to explain a crash.
const STDERR_TAIL_LINES: usize = 20;

/// Everything needed to start one worker. Every value comes from the catalog, the verified
/// model file or Rein's own settings; none comes from a model's output.
#[derive(Debug, Clone)]
pub struct WorkerLaunch {
    /// The `rein` executable (or, in tests, a stand-in that speaks the same protocol).
    pub exe: PathBuf,
    pub spec: String,
    pub model_path: PathBuf,
    /// The SHA-256 the parent verified the file against before this launch.
    pub sha256: String,
    pub size: u64,
    /// The fingerprint of the file version that was verified; the file must still be that
    /// version once the worker has loaded it (`None` only for stand-in workers in tests).
    pub verified: Option<crate::FileFingerprint>,
    /// What the worker must report from the GGUF it loaded, compared exactly.
    pub expected: ExpectedIdentity,
    pub threads: u32,
    pub context_tokens: u32,
    /// Render chat prompts with the GGUF's own Jinja template (lever `gguf-template`) instead
    /// of llama.cpp's built-in matcher.
    pub gguf_template: bool,
    /// Where the worker keeps its first long prompt's cache for the next worker of this model
    /// file, and looks for one (`None`: nothing on disk). See [`prefix_store_dir`].
    pub prefix_store: Option<PathBuf>,
    pub load_timeout: Duration,
    pub reply_timeout: Duration,
}

/// What a GGUF's header must say for the worker to be trusted: each field is compared exactly
/// (no case folding, no substring) with what the worker read from the file it loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedIdentity {
    /// `general.name`
    pub name: String,
    /// `general.architecture`
    pub architecture: String,
    /// Elements of all tensors.
    pub parameters: u64,
    /// Tensors in the tensor table.
    pub tensors: u64,
}

impl ExpectedIdentity {
    /// The fields that differ between this and `reported`, each as `field: expected X, the
    /// file says Y`; empty when they agree.
    pub fn differences(&self, reported: &ModelIdentity) -> Vec<String> {
        let mut out = Vec::new();
        if reported.name != self.name {
            out.push(format!(
                "general.name: expected {:?}, the file says {:?}",
                self.name, reported.name
            ));
        }
        if reported.architecture != self.architecture {
            out.push(format!(
                "general.architecture: expected {:?}, the file says {:?}",
                self.architecture, reported.architecture
            ));
        }
        if reported.parameters != self.parameters {
            out.push(format!(
                "parameters: expected {}, the file has {}",
                self.parameters, reported.parameters
            ));
        }
        if reported.tensors != self.tensors {
            out.push(format!(
                "tensors: expected {}, the file has {}",
                self.tensors, reported.tensors
            ));
        }
        out
    }
}

/// What the GGUF header at `path` says, as a worker would report it.
pub fn header_identity(spec: &str, path: &std::path::Path) -> Result<ModelIdentity> {
    let header = rein_protocol::gguf::GgufHeader::read_file(path)
        .map_err(|e| ModelError::Refused(e.to_string()))?;
    Ok(ModelIdentity {
        spec: spec.to_string(),
        name: header.name().to_string(),
        architecture: header.architecture().to_string(),
        parameters: header.parameter_count,
        tensors: header.tensor_count,
        context_tokens: header
            .context_length()
            .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)),
        sha256: None,
    })
}

/// Refuses the file at `path` when its header does not say exactly what `expected` says.
pub fn check_header(spec: &str, path: &std::path::Path, expected: &ExpectedIdentity) -> Result<()> {
    let differences = expected.differences(&header_identity(spec, path)?);
    if differences.is_empty() {
        Ok(())
    } else {
        Err(ModelError::IdentityMismatch {
            model: spec.to_string(),
            path: path.display().to_string(),
            differences: differences.join("; "),
        })
    }
}

/// The default thread count for a worker: the physical cores this process may use. A second
/// hardware thread of a core shares its arithmetic units, and llama.cpp's matrix work gains
/// nothing from it while the two threads wait on each other.
pub fn default_threads() -> u32 {
    let usable = std::thread::available_parallelism().map_or(1, |n| n.get());
    let physical = physical_cores(std::path::Path::new("/sys/devices/system/cpu"));
    physical.map_or(usable, |p| p.min(usable)).max(1) as u32
}

/// Distinct (package, core) pairs of the CPUs listed under `cpu_dir` (Linux sysfs layout), or
/// `None` when the topology cannot be read.
pub fn physical_cores(cpu_dir: &std::path::Path) -> Option<usize> {
    let mut cores = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(cpu_dir).ok()?.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let is_cpu = name
            .strip_prefix("cpu")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if !is_cpu {
            continue;
        }
        let read = |what: &str| {
            std::fs::read_to_string(entry.path().join("topology").join(what))
                .ok()
                .map(|s| s.trim().to_string())
        };
        if let (Some(package), Some(core)) = (read("physical_package_id"), read("core_id")) {
            cores.insert((package, core));
        }
    }
    (!cores.is_empty()).then_some(cores.len())
}

impl WorkerLaunch {
    /// Builds the worker's command line: fixed flags, each with a value from the launch record.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.exe);
        command
            .arg("worker")
            .arg("--spec")
            .arg(&self.spec)
            .arg("--model-path")
            .arg(&self.model_path)
            .arg("--size")
            .arg(self.size.to_string())
            .arg("--threads")
            .arg(self.threads.to_string())
            .arg("--context")
            .arg(self.context_tokens.to_string())
            .arg("--template")
            .arg(if self.gguf_template {
                "gguf"
            } else {
                "builtin"
            });
        if let Some(store) = &self.prefix_store {
            command
                .arg("--prefix-store")
                .arg(store)
                .arg("--model-sha256")
                .arg(&self.sha256);
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                // Its own process group, so the whole worker can be signalled at once.
                if libc::setpgid(0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // Die with the parent, even if the parent is killed outright.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have died before prctl took effect.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        command
    }
}

enum Line {
    Reply(WorkerReply),
    Garbled(String),
    Closed,
}

/// A model served by a supervised worker process.
pub struct EmbeddedModel {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    identity: ModelIdentity,
    launch: WorkerLaunch,
    next_id: u64,
    failed: Option<String>,
    /// Times the worker was started again after a crash or a timeout (at most
    /// [`MAX_RESTARTS`] per model).
    restarts: u32,
    /// What a person should know about this model's session (a restart), not yet taken.
    notices: Vec<String>,
    pub load_ms: f64,
}

/// How often a crashed or silent worker is started again before its failure stands.
pub const MAX_RESTARTS: u32 = 1;

impl EmbeddedModel {
    /// Starts the worker and waits for its hello; any identity mismatch stops it.
    pub fn start(launch: WorkerLaunch) -> Result<Self> {
        let mut child = launch.command().spawn().map_err(|e| {
            ModelError::Worker(format!("cannot start {}: {e}", launch.exe.display()))
        })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let (tx, lines) = mpsc::channel();
        if let Some(stdout) = stdout {
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    let parsed = match serde_json::from_str::<WorkerReply>(&line) {
                        Ok(reply) => Line::Reply(reply),
                        Err(_) => Line::Garbled(line),
                    };
                    if tx.send(parsed).is_err() {
                        return;
                    }
                }
                let _ = tx.send(Line::Closed);
            });
        }
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(stderr) = stderr {
            let tail = Arc::clone(&stderr_tail);
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
                    if let Ok(mut tail) = tail.lock() {
                        if tail.len() == STDERR_TAIL_LINES {
                            tail.pop_front();
                        }
                        tail.push_back(line);
                    }
                }
            });
        }
        let placeholder = ModelIdentity {
            spec: launch.spec.clone(),
            name: String::new(),
            architecture: String::new(),
            ..ModelIdentity::default()
        };
        let mut model = EmbeddedModel {
            child,
            stdin,
            lines,
            stderr_tail,
            identity: placeholder,
            launch,
            next_id: 1,
            failed: None,
            restarts: 0,
            notices: Vec::new(),
            load_ms: 0.0,
        };
        let hello = model.next_line(model.launch.load_timeout, "loading the model")?;
        match hello {
            WorkerReply::Hello {
                identity, load_ms, ..
            } => {
                model.identity = model.check_identity(&identity)?;
                model.load_ms = load_ms;
                Ok(model)
            }
            other => {
                let err = model.fail(format!(
                    "the worker's first message was not a hello: {other:?}"
                ));
                Err(err)
            }
        }
    }

    /// Compares what the worker read from the GGUF with what was expected, exactly, then
    /// checks that the file is still the version whose hash was verified before the launch.
    /// On success the identity carries the verified hash (the worker does not claim one).
    fn check_identity(&mut self, reported: &ModelIdentity) -> Result<ModelIdentity> {
        let launch = self.launch.clone();
        let differences = launch.expected.differences(reported);
        if !differences.is_empty() {
            self.kill();
            return Err(ModelError::IdentityMismatch {
                model: launch.spec,
                path: launch.model_path.display().to_string(),
                differences: differences.join("; "),
            });
        }
        if let Some(verified) = launch.verified {
            let now = crate::FileFingerprint::of(&launch.model_path).ok();
            if now != Some(verified) {
                self.kill();
                return Err(ModelError::Refused(format!(
                    "{} changed between its hash check and its loading (size, times or inode \
                     differ); the loaded bytes are not the verified ones, so the model was not \
                     used. Run the command again once nothing writes to the file",
                    launch.model_path.display()
                )));
            }
        }
        let mut identity = reported.clone();
        identity.sha256 = Some(launch.sha256);
        Ok(identity)
    }

    /// The worker's process id (for tests and diagnostics).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn kill(&mut self) {
        // Once the leader is reaped its pid (and so the group id) may belong to someone else:
        // the group is signalled only while the child is known not to be reaped.
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: signalling our own child's process group; the child is not reaped yet.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Whether `error` killed the worker and a restart is still allowed.
    fn may_restart(&self, error: &ModelError) -> bool {
        self.failed.is_some()
            && self.restarts < MAX_RESTARTS
            && matches!(error, ModelError::Worker(_) | ModelError::Timeout { .. })
    }

    /// Replaces the failed worker with a fresh one for the same launch; the failure it
    /// replaces becomes a notice.
    fn restart(&mut self, error: &ModelError) -> Result<()> {
        let mut fresh = EmbeddedModel::start(self.launch.clone())?;
        fresh.restarts = self.restarts + 1;
        fresh.notices = std::mem::take(&mut self.notices);
        fresh.notices.push(format!(
            "the worker of {} stopped ({error}); it was started again and the request sent again",
            self.launch.spec
        ));
        fresh.next_id = self.next_id;
        drop(std::mem::replace(self, fresh));
        Ok(())
    }

    /// Runs `attempt`, and once more on a fresh worker when the first try killed the worker.
    fn with_restart<T>(&mut self, mut attempt: impl FnMut(&mut Self) -> Result<T>) -> Result<T> {
        match attempt(self) {
            Err(e) if self.may_restart(&e) => {
                self.restart(&e)?;
                attempt(self)
            }
            other => other,
        }
    }

    fn stderr_tail(&self) -> String {
        self.stderr_tail
            .lock()
            .map(|t| t.iter().cloned().collect::<Vec<_>>().join(" | "))
            .unwrap_or_default()
    }

    /// Marks the worker failed, stops it, and returns the error to report.
    fn fail(&mut self, message: String) -> ModelError {
        self.kill();
        let tail = self.stderr_tail();
        let message = if tail.is_empty() {
            message
        } else {
            format!("{message}; its last words: {tail}")
        };
        self.failed = Some(message.clone());
        ModelError::Worker(message)
    }

    fn next_line(&mut self, timeout: Duration, doing: &str) -> Result<WorkerReply> {
        if let Some(reason) = &self.failed {
            return Err(ModelError::Worker(format!(
                "the worker already failed: {reason}"
            )));
        }
        match self.lines.recv_timeout(timeout) {
            Ok(Line::Reply(reply)) => Ok(reply),
            Ok(Line::Garbled(line)) => {
                let shown: String = line.chars().take(200).collect();
                Err(self.fail(format!(
                    "the worker wrote something that is not protocol while {doing}: {shown}"
                )))
            }
            Ok(Line::Closed) | Err(RecvTimeoutError::Disconnected) => {
                // Give the exit status a moment to be collected.
                std::thread::sleep(Duration::from_millis(50));
                let status = match self.child.try_wait() {
                    Ok(Some(status)) => status.to_string(),
                    _ => "still running, but it closed its output".to_string(),
                };
                Err(self.fail(format!("the worker exited while {doing} ({status})")))
            }
            Err(RecvTimeoutError::Timeout) => {
                self.fail(String::new());
                let seconds = timeout.as_secs();
                Err(ModelError::Timeout { seconds })
            }
        }
    }

    fn send(&mut self, request: &WorkerRequest) -> Result<()> {
        if let Some(reason) = &self.failed {
            return Err(ModelError::Worker(format!(
                "the worker already failed: {reason}"
            )));
        }
        let line = serde_json::to_string(request)
            .map_err(|e| ModelError::BadRequest(format!("cannot encode the request: {e}")))?;
        let written = match self.stdin.as_mut() {
            Some(stdin) => stdin
                .write_all(line.as_bytes())
                .and_then(|_| stdin.write_all(b"\n"))
                .and_then(|_| stdin.flush()),
            None => Err(std::io::Error::other("stdin closed")),
        };
        written.map_err(|e| self.fail(format!("cannot write to the worker: {e}")))
    }

    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Waits for the reply to `id`, passing streamed text on. Errors reported by the worker for
    /// this request leave the worker running.
    fn await_reply(&mut self, id: u64, on_text: &mut dyn FnMut(&str)) -> Result<WorkerReply> {
        let timeout = self.launch.reply_timeout;
        loop {
            match self.next_line(timeout, "answering")? {
                WorkerReply::Text { id: rid, text } if rid == id => on_text(&text),
                // Each line resets the silence limit: that is all progress is for.
                WorkerReply::Progress { .. } => {}
                WorkerReply::PromptTooLong {
                    id: rid,
                    tokens,
                    context,
                } if rid == id => return Err(ModelError::PromptTooLong { tokens, context }),
                WorkerReply::Error { id: rid, message } if rid == id || rid == 0 => {
                    return Err(
                        if message.starts_with("bad request") || message.contains("JSON schema") {
                            ModelError::BadRequest(message)
                        } else {
                            ModelError::Worker(message)
                        },
                    );
                }
                reply => {
                    if reply_id(&reply) == Some(id) {
                        return Ok(reply);
                    }
                }
            }
        }
    }

    pub fn stats(&mut self) -> Result<WorkerStats> {
        let id = self.take_id();
        self.send(&WorkerRequest::Stats { id })?;
        match self.await_reply(id, &mut |_| {})? {
            WorkerReply::Stats { stats, .. } => Ok(stats),
            other => Err(self.fail(format!("unexpected reply to stats: {other:?}"))),
        }
    }

    pub fn reset_cache(&mut self) -> Result<()> {
        let id = self.take_id();
        self.send(&WorkerRequest::ResetCache { id })?;
        self.await_reply(id, &mut |_| {}).map(|_| ())
    }
}

fn reply_id(reply: &WorkerReply) -> Option<u64> {
    match reply {
        WorkerReply::Hello { .. } => None,
        WorkerReply::Text { id, .. }
        | WorkerReply::Progress { id, .. }
        | WorkerReply::Completed { id, .. }
        | WorkerReply::Chosen { id, .. }
        | WorkerReply::Stats { id, .. }
        | WorkerReply::CacheReset { id }
        | WorkerReply::PromptTooLong { id, .. }
        | WorkerReply::Error { id, .. } => Some(*id),
    }
}

impl Model for EmbeddedModel {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    fn complete(
        &mut self,
        request: &CompletionRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion> {
        self.with_restart(|model| {
            let id = model.take_id();
            model.send(&WorkerRequest::Complete {
                id,
                request: request.clone(),
            })?;
            match model.await_reply(id, on_text)? {
                WorkerReply::Completed { completion, .. } => Ok(completion),
                other => Err(model.fail(format!("unexpected reply to a completion: {other:?}"))),
            }
        })
    }

    fn choose(&mut self, request: &ChooseRequest) -> Result<ChooseReply> {
        // The floor is checked outside the restart wrapper: low mass is an answer, not a crash.
        let reply = self.with_restart(|model| {
            let id = model.take_id();
            model.send(&WorkerRequest::Choose {
                id,
                request: request.clone(),
            })?;
            match model.await_reply(id, &mut |_| {})? {
                WorkerReply::Chosen { reply, .. } => Ok(reply),
                other => Err(model.fail(format!("unexpected reply to choose: {other:?}"))),
            }
        })?;
        check_label_mass(reply)
    }

    fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }
}

impl Drop for EmbeddedModel {
    fn drop(&mut self) {
        if self.failed.is_none() {
            let _ = self.send(&WorkerRequest::Shutdown);
            drop(self.stdin.take());
            for _ in 0..40 {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(25));
            }
        }
        self.kill();
    }
}

/// The context window a worker opens. 6,144 tokens keeps the 1.5B worker under 1.5 GB peak
/// RSS (its KV cache costs 28 KiB a token) while leaving room for an agent run; the loop trims
/// old steps to stay inside it.
pub const DEFAULT_CONTEXT_TOKENS: u32 = 6144;
/// Smallest context window accepted: the system rules and one step need this much.
pub const MIN_CONTEXT_TOKENS: u32 = 1024;

/// The launch record for a catalog model whose file is present and verified.
pub fn launch_for(
    entry: &crate::catalog::CatalogEntry,
    dir: &crate::paths::DataDir,
    exe: PathBuf,
) -> Result<WorkerLaunch> {
    let (model_path, verified) = crate::pull::ensure_verified(entry, dir)?;
    let expected = ExpectedIdentity {
        name: entry.gguf_name.clone(),
        architecture: entry.architecture.clone(),
        parameters: entry.parameters,
        tensors: entry.tensors,
    };
    // The header is read here too, so a wrong file fails before a worker is started.
    check_header(&entry.name, &model_path, &expected)?;
    let context = if entry.context_tokens > 0 {
        entry.context_tokens.min(DEFAULT_CONTEXT_TOKENS)
    } else {
        DEFAULT_CONTEXT_TOKENS
    };
    Ok(WorkerLaunch {
        exe,
        spec: entry.name.clone(),
        model_path,
        sha256: entry.sha256.clone(),
        size: entry.bytes,
        verified: Some(verified),
        expected,
        threads: default_threads(),
        context_tokens: context,
        gguf_template: false,
        prefix_store: prefix_store_dir(dir),
        load_timeout: DEFAULT_LOAD_TIMEOUT,
        reply_timeout: DEFAULT_REPLY_TIMEOUT,
    })
}

/// Turns the prompt prefix store off (`off`); anything else leaves it on.
pub const PREFIX_STORE_ENV: &str = "REIN_PREFIX_STORE";

/// `<home>/cache/prefixes`, where workers keep prompt prefixes across runs, unless
/// `REIN_PREFIX_STORE=off`.
pub fn prefix_store_dir(dir: &crate::paths::DataDir) -> Option<PathBuf> {
    let off = std::env::var(PREFIX_STORE_ENV).is_ok_and(|v| v.eq_ignore_ascii_case("off"));
    (!off).then(|| dir.root().join("cache").join("prefixes"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::physical_cores;

    #[test]
    fn hyperthreads_count_once() {
        let dir = tempfile::tempdir().unwrap();
        // Two packages; cpu0/cpu2 and cpu1/cpu3 are hardware threads of the same cores.
        for (cpu, package, core) in [(0, 0, 0), (1, 0, 1), (2, 0, 0), (3, 0, 1), (4, 1, 0)] {
            let topology = dir.path().join(format!("cpu{cpu}/topology"));
            std::fs::create_dir_all(&topology).unwrap();
            std::fs::write(topology.join("physical_package_id"), format!("{package}\n")).unwrap();
            std::fs::write(topology.join("core_id"), format!("{core}\n")).unwrap();
        }
        std::fs::create_dir_all(dir.path().join("cpufreq")).unwrap();
        assert_eq!(physical_cores(dir.path()), Some(3));
        assert_eq!(physical_cores(&dir.path().join("missing")), None);
    }
}
