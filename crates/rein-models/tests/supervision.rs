#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Worker supervision against a stand-in worker: this test binary re-executes itself as the
//! worker (`<exe> worker ...`, the same command line the supervisor builds for `rein worker`)
//! or as a parent that dies. It runs without libtest (`harness = false`) so it can do that.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rein_models::embedded::{EmbeddedModel, ExpectedIdentity, WorkerLaunch};
use rein_models::{ChooseRequest, CompletionRequest, Model, ModelError, Prompt, SamplingProfile};
use rein_protocol::gguf::{write_test_header, GgufHeader};
use rein_protocol::model::{
    ChooseReply, Completion, DecisionSource, FinishReason, LabelProbability, ModelIdentity,
};
use rein_protocol::worker::{WorkerReply, WorkerRequest, WorkerStats};

const MODE_ENV: &str = "REIN_FAKE_WORKER_MODE";
/// In mode `stall-once`, the file whose absence makes the worker stall (it creates it first),
/// so the first worker hangs and the restarted one answers.
const MARKER_ENV: &str = "REIN_FAKE_WORKER_MARKER";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("worker") => fake_worker(&args),
        Some("parent") => fake_parent(),
        _ => run_tests(),
    }
}

fn arg_value(args: &[String], flag: &str) -> String {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_default()
}

fn say(reply: &WorkerReply) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", serde_json::to_string(reply).unwrap());
    let _ = out.flush();
}

fn fake_worker(args: &[String]) {
    let mode = std::env::var(MODE_ENV).unwrap_or_default();
    eprintln!("fake worker starting in mode {mode:?}");
    if mode == "silent" {
        std::thread::sleep(Duration::from_secs(600));
    }
    if mode == "garbage" {
        println!("this is not the protocol");
        std::thread::sleep(Duration::from_secs(600));
    }
    // Like the real worker, report what the GGUF at --model-path says it is.
    let header = GgufHeader::read_file(std::path::Path::new(&arg_value(args, "--model-path")))
        .expect("the fake worker reads its model's header");
    let name = if mode == "mismatch" {
        "Some Other Model".to_string()
    } else {
        header.name().to_string()
    };
    say(&WorkerReply::Hello {
        identity: ModelIdentity {
            spec: arg_value(args, "--spec"),
            name,
            architecture: header.architecture().into(),
            sha256: None,
            context_tokens: 4096,
            parameters: header.parameter_count,
            tensors: header.tensor_count,
        },
        load_ms: 1.0,
        threads: 1,
    });
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { return };
        let request: WorkerRequest = serde_json::from_str(&line).unwrap();
        match mode.as_str() {
            "crash" => {
                eprintln!("fake worker: simulated fault");
                std::process::abort();
            }
            "hang" => std::thread::sleep(Duration::from_secs(600)),
            "stall-once" => {
                let marker = PathBuf::from(std::env::var(MARKER_ENV).unwrap());
                if !marker.exists() {
                    std::fs::write(&marker, "stalled").unwrap();
                    std::thread::sleep(Duration::from_secs(600));
                }
            }
            "slow-progress" => {
                // Longer in all than the 1 s silence limit, never silent for as long.
                if let WorkerRequest::Complete { id, .. } = &request {
                    for done in 1..=6 {
                        std::thread::sleep(Duration::from_millis(400));
                        say(&WorkerReply::Progress {
                            id: *id,
                            done_tokens: done * 512,
                            total_tokens: 3072,
                        });
                    }
                }
            }
            "too-long" => {
                if let WorkerRequest::Complete { id, .. } = &request {
                    say(&WorkerReply::PromptTooLong {
                        id: *id,
                        tokens: 6178,
                        context: 4096,
                    });
                    continue;
                }
            }
            _ => {}
        }
        match request {
            WorkerRequest::Shutdown => return,
            WorkerRequest::Complete { id, .. } => {
                for piece in ["hel", "lo"] {
                    say(&WorkerReply::Text {
                        id,
                        text: piece.into(),
                    });
                }
                say(&WorkerReply::Completed {
                    id,
                    completion: Completion {
                        text: "hello".into(),
                        finish: FinishReason::Stop,
                        prompt_tokens: 3,
                        cached_tokens: 0,
                        completion_tokens: 2,
                        prompt_ms: 1.0,
                        generation_ms: 1.0,
                    },
                });
            }
            WorkerRequest::Choose { id, request } => {
                let p = 1.0 / request.labels.len() as f64;
                say(&WorkerReply::Chosen {
                    id,
                    reply: ChooseReply {
                        probabilities: request
                            .labels
                            .iter()
                            .map(|l| LabelProbability {
                                label: l.clone(),
                                probability: p,
                            })
                            .collect(),
                        source: DecisionSource::Logits,
                        // A prompt saying "low-mass" gets a reply whose labels held little.
                        label_mass: Some(match &request.prompt {
                            Prompt::Raw { text } if text == "low-mass" => 0.2,
                            _ => 0.9,
                        }),
                        prompt_tokens: 1,
                        cached_tokens: 0,
                        elapsed_ms: 1.0,
                        prompt_ms: None,
                        scored_spellings: None,
                        cpu_ms: None,
                    },
                });
            }
            WorkerRequest::Stats { id } => say(&WorkerReply::Stats {
                id,
                stats: WorkerStats::default(),
            }),
            WorkerRequest::ResetCache { id } => say(&WorkerReply::CacheReset { id }),
        }
    }
}

/// Starts a worker, prints its pid, then waits to be killed.
fn fake_parent() {
    let model = EmbeddedModel::start(launch()).unwrap();
    println!("{}", model.pid());
    std::io::stdout().flush().unwrap();
    std::thread::sleep(Duration::from_secs(600));
}

/// A GGUF header (no weights) saying it is `name`, written once per name for this test run.
fn fake_gguf(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "rein-supervision-{}-{}.gguf",
        std::process::id(),
        name.replace(' ', "_")
    ));
    if !path.exists() {
        let bytes = write_test_header(
            &[("general.name", name), ("general.architecture", "fake")],
            &[],
            &[("w", &[2, 3]), ("b", &[3])],
        );
        std::fs::write(&path, bytes).unwrap();
    }
    path
}

fn launch() -> WorkerLaunch {
    launch_of(&fake_gguf("Fake Model 1B"))
}

fn launch_of(model_path: &std::path::Path) -> WorkerLaunch {
    WorkerLaunch {
        exe: std::env::current_exe().unwrap(),
        spec: "fake-1b".into(),
        model_path: model_path.to_path_buf(),
        sha256: "ab".repeat(32),
        size: 1,
        verified: None,
        expected: ExpectedIdentity {
            name: "Fake Model 1B".into(),
            architecture: "fake".into(),
            parameters: 9,
            tensors: 2,
        },
        threads: 1,
        context_tokens: 4096,
        gguf_template: false,
        prefix_store: None,
        load_timeout: Duration::from_secs(2),
        reply_timeout: Duration::from_secs(1),
    }
}

fn start(mode: &str) -> Result<EmbeddedModel, ModelError> {
    std::env::set_var(MODE_ENV, mode);
    EmbeddedModel::start(launch())
}

fn alive(pid: u32) -> bool {
    // A zombie has exited; only a live process counts.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

fn wait_dead(pid: u32, within: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < within {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    !alive(pid)
}

fn request() -> CompletionRequest {
    CompletionRequest::new(Prompt::raw("hi"), 8, SamplingProfile::JUDGE)
}

fn a_healthy_worker_streams_chooses_and_exits_on_drop() {
    let mut model = start("ok").unwrap();
    let pid = model.pid();
    assert_eq!(model.identity().name, "Fake Model 1B");
    let mut pieces = Vec::new();
    let completion = model
        .complete(&request(), &mut |t| pieces.push(t.to_string()))
        .unwrap();
    assert_eq!(pieces, ["hel", "lo"]);
    assert_eq!(completion.text, "hello");
    let reply = model
        .choose(&ChooseRequest {
            prompt: Prompt::raw("x"),
            labels: vec!["a".into(), "b".into()],
        })
        .unwrap();
    let sum: f64 = reply.probabilities.iter().map(|p| p.probability).sum();
    assert!((sum - 1.0).abs() < 1e-9);
    // Low label mass fails closed as an outage, and is an answer, not a crash: the same
    // worker keeps serving.
    let e = model
        .choose(&ChooseRequest {
            prompt: Prompt::raw("low-mass"),
            labels: vec!["a".into(), "b".into()],
        })
        .unwrap_err();
    assert!(matches!(e, ModelError::LowLabelMass { .. }), "{e}");
    assert_eq!(model.pid(), pid);
    assert!(model.take_notices().is_empty());
    drop(model);
    assert!(
        wait_dead(pid, Duration::from_secs(3)),
        "worker {pid} outlived its model"
    );
}

fn the_worker_has_its_own_process_group() {
    let model = start("ok").unwrap();
    let pid = model.pid();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = stat.rsplit(')').next().unwrap();
    let pgrp: u32 = after.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert_eq!(pgrp, pid);
}

fn an_identity_mismatch_is_a_hard_failure() {
    let err = start("mismatch").err().expect("a mismatch must not start");
    assert!(matches!(err, ModelError::IdentityMismatch { .. }), "{err}");
    assert!(err.to_string().contains("Some Other Model"), "{err}");
}

/// The worker reports what the GGUF header says; names are compared exactly, so a name that
/// merely contains the expected one (or differs in case) is refused, as are other counts.
fn a_gguf_whose_header_differs_is_refused() {
    std::env::set_var(MODE_ENV, "ok");
    for name in ["Fake Model 1B Evil Twin", "fake model 1b"] {
        let err = EmbeddedModel::start(launch_of(&fake_gguf(name)))
            .err()
            .expect("a different general.name must not start");
        let text = err.to_string();
        assert!(matches!(err, ModelError::IdentityMismatch { .. }), "{text}");
        assert!(
            text.contains("general.name: expected \"Fake Model 1B\""),
            "{text}"
        );
        assert!(text.contains(name), "{text}");
    }
    let mut other_counts = launch();
    other_counts.expected.parameters = 10;
    other_counts.expected.tensors = 3;
    let text = EmbeddedModel::start(other_counts)
        .err()
        .unwrap()
        .to_string();
    assert!(
        text.contains("parameters: expected 10, the file has 9"),
        "{text}"
    );
    assert!(
        text.contains("tensors: expected 3, the file has 2"),
        "{text}"
    );
    // The identity of a model that starts carries the hash the parent verified, not one the
    // worker claims.
    let model = EmbeddedModel::start(launch()).unwrap();
    assert_eq!(
        model.identity().sha256.as_deref(),
        Some("ab".repeat(32).as_str())
    );
    assert_eq!(
        (model.identity().parameters, model.identity().tensors),
        (9, 2)
    );
}

/// A file that changes after its hash was verified (here: touched, so its fingerprint moves)
/// is refused once the worker has loaded it.
fn a_file_changed_after_verification_is_refused() {
    std::env::set_var(MODE_ENV, "ok");
    let path = fake_gguf("Fake Model 1B");
    let mut l = launch();
    l.verified = Some(rein_models::FileFingerprint::of(&path).unwrap());
    EmbeddedModel::start(l.clone()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, bytes).unwrap();
    let err = EmbeddedModel::start(l)
        .err()
        .expect("a changed file must not be used");
    assert!(
        err.to_string().contains("changed between its hash check"),
        "{err}"
    );
}

fn a_crash_becomes_a_clear_error() {
    let mut model = start("crash").unwrap();
    let pid = model.pid();
    let err = model.complete(&request(), &mut |_| {}).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ModelError::Worker(_)), "{text}");
    assert!(text.contains("exited"), "{text}");
    assert!(
        text.contains("simulated fault"),
        "stderr tail missing: {text}"
    );
    assert!(wait_dead(pid, Duration::from_secs(3)));
    let again = model.complete(&request(), &mut |_| {}).unwrap_err();
    assert!(again.to_string().contains("already failed"), "{again}");
}

fn progress_keeps_a_slow_prompt_alive() {
    let mut model = start("slow-progress").unwrap();
    let pid = model.pid();
    let started = Instant::now();
    let completion = model.complete(&request(), &mut |_| {}).unwrap();
    assert_eq!(completion.text, "hello");
    assert!(
        started.elapsed() > Duration::from_secs(2),
        "not slow enough to test"
    );
    assert_eq!(
        model.pid(),
        pid,
        "a worker that reports progress was replaced"
    );
    assert!(model.take_notices().is_empty());
}

fn a_stalled_worker_is_restarted_once_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::env::set_var(MARKER_ENV, dir.path().join("stalled"));
    let mut model = start("stall-once").unwrap();
    let first = model.pid();
    let completion = model.complete(&request(), &mut |_| {}).unwrap();
    assert_eq!(completion.text, "hello");
    assert_ne!(model.pid(), first, "the stalled worker was not replaced");
    assert!(wait_dead(first, Duration::from_secs(3)));
    let notices = model.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("started again"), "{notices:?}");
    assert!(notices[0].contains("fake-1b"), "{notices:?}");
    assert!(model.take_notices().is_empty(), "a notice is given once");
}

fn a_prompt_too_long_is_typed_and_the_worker_stays() {
    let mut model = start("too-long").unwrap();
    let pid = model.pid();
    match model.complete(&request(), &mut |_| {}) {
        Err(ModelError::PromptTooLong { tokens, context }) => {
            assert_eq!((tokens, context), (6178, 4096));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(model.pid(), pid, "a request error restarted the worker");
    assert!(model.take_notices().is_empty());
}

fn a_second_failure_stands() {
    // Every worker of this launch crashes: one restart, then the failure is the run's.
    let mut model = start("crash").unwrap();
    let err = model.complete(&request(), &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("exited"), "{err}");
    assert_eq!(model.take_notices().len(), 1);
    let again = model.complete(&request(), &mut |_| {}).unwrap_err();
    assert!(again.to_string().contains("already failed"), "{again}");
    assert!(model.take_notices().is_empty());
}

fn a_hang_times_out_and_the_worker_is_stopped() {
    let mut model = start("hang").unwrap();
    let pid = model.pid();
    let started = Instant::now();
    let err = model.complete(&request(), &mut |_| {}).unwrap_err();
    assert!(matches!(err, ModelError::Timeout { .. }), "{err}");
    // One restart (a second 1 s silence) before the timeout stands.
    assert!(started.elapsed() < Duration::from_secs(6));
    assert!(wait_dead(pid, Duration::from_secs(3)));
}

fn a_worker_that_never_says_hello_times_out() {
    let started = Instant::now();
    let err = start("silent").err().expect("no hello, no model");
    assert!(matches!(err, ModelError::Timeout { .. }), "{err}");
    assert!(started.elapsed() < Duration::from_secs(6));
}

fn garbage_on_the_protocol_is_refused() {
    let err = start("garbage").err().expect("garbage is not a hello");
    assert!(err.to_string().contains("not protocol"), "{err}");
}

fn a_worker_dies_with_its_parent() {
    let mut parent = Command::new(std::env::current_exe().unwrap())
        .arg("parent")
        .env(MODE_ENV, "ok")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(parent.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let worker: u32 = line.trim().parse().unwrap();
    assert!(alive(worker));
    parent.kill().unwrap();
    parent.wait().unwrap();
    assert!(
        wait_dead(worker, Duration::from_secs(3)),
        "worker {worker} outlived its parent"
    );
}

fn the_command_line_is_fixed_flags_only() {
    let command = launch().command();
    let args: Vec<String> = command
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let flags: Vec<&str> = args.iter().skip(1).step_by(2).map(String::as_str).collect();
    assert_eq!(args[0], "worker");
    assert_eq!(
        flags,
        [
            "--spec",
            "--model-path",
            "--size",
            "--threads",
            "--context",
            "--template"
        ]
    );
    // With a prefix store: its folder and the verified file's SHA-256, which keys it.
    let mut with_store = launch();
    with_store.prefix_store = Some("/data/cache/prefixes".into());
    let args: Vec<String> = with_store
        .command()
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let tail: Vec<&str> = args[args.len() - 4..].iter().map(String::as_str).collect();
    let sha = "ab".repeat(32);
    assert_eq!(
        tail,
        [
            "--prefix-store",
            "/data/cache/prefixes",
            "--model-sha256",
            sha.as_str()
        ]
    );
}

fn run_tests() {
    let tests: [(&str, fn()); 15] = [
        (
            "a_gguf_whose_header_differs_is_refused",
            a_gguf_whose_header_differs_is_refused,
        ),
        (
            "a_file_changed_after_verification_is_refused",
            a_file_changed_after_verification_is_refused,
        ),
        (
            "a_prompt_too_long_is_typed_and_the_worker_stays",
            a_prompt_too_long_is_typed_and_the_worker_stays,
        ),
        (
            "progress_keeps_a_slow_prompt_alive",
            progress_keeps_a_slow_prompt_alive,
        ),
        (
            "a_stalled_worker_is_restarted_once_and_says_so",
            a_stalled_worker_is_restarted_once_and_says_so,
        ),
        ("a_second_failure_stands", a_second_failure_stands),
        (
            "a_healthy_worker_streams_chooses_and_exits_on_drop",
            a_healthy_worker_streams_chooses_and_exits_on_drop,
        ),
        (
            "the_worker_has_its_own_process_group",
            the_worker_has_its_own_process_group,
        ),
        (
            "an_identity_mismatch_is_a_hard_failure",
            an_identity_mismatch_is_a_hard_failure,
        ),
        (
            "a_crash_becomes_a_clear_error",
            a_crash_becomes_a_clear_error,
        ),
        (
            "a_hang_times_out_and_the_worker_is_stopped",
            a_hang_times_out_and_the_worker_is_stopped,
        ),
        (
            "a_worker_that_never_says_hello_times_out",
            a_worker_that_never_says_hello_times_out,
        ),
        (
            "garbage_on_the_protocol_is_refused",
            garbage_on_the_protocol_is_refused,
        ),
        (
            "a_worker_dies_with_its_parent",
            a_worker_dies_with_its_parent,
        ),
        (
            "the_command_line_is_fixed_flags_only",
            the_command_line_is_fixed_flags_only,
        ),
    ];
    let mut failed = 0;
    for (name, test) in tests {
        let outcome = std::panic::catch_unwind(test);
        println!(
            "test {name} ... {}",
            if outcome.is_ok() { "ok" } else { "FAILED" }
        );
        if outcome.is_err() {
            failed += 1;
        }
    }
    println!(
        "\ntest result: {}. {} passed; {failed} failed; 0 ignored; 0 measured; 0 filtered out",
        if failed == 0 { "ok" } else { "FAILED" },
        tests.len() - failed
    );
    if failed > 0 {
        std::process::exit(101);
    }
}
