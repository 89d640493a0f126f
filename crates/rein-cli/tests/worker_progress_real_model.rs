#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The real worker (`rein worker`, the 0.5B) sends progress lines
//! while it decodes a long uncached prompt, before its reply. The supervision tests prove the
//! parent resets its silence limit on them; this proves the worker sends them.
//! Set REIN_SKIP_MODEL_TESTS=1 to skip.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use rein_models::embedded::launch_for;
use rein_models::{Catalog, CompletionRequest, DataDir, Prompt, SamplingProfile};
use rein_protocol::worker::{WorkerReply, WorkerRequest};

#[test]
fn real_model_worker_reports_progress_through_a_long_prompt() {
    if std::env::var("REIN_SKIP_MODEL_TESTS").is_ok_and(|v| v == "1") {
        return;
    }
    let catalog = Catalog::builtin().unwrap();
    let entry = catalog.get("qwen2.5-coder-0.5b").unwrap();
    let dir = DataDir::from_env().unwrap();
    let mut launch = launch_for(entry, &dir, env!("CARGO_BIN_EXE_rein").into()).unwrap();
    launch.threads = 1;
    launch.prefix_store = None;
    let mut child = launch
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let hello: WorkerReply = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert!(matches!(hello, WorkerReply::Hello { .. }), "{hello:?}");

    // About 1,200 tokens of distinct words: several 256-token micro-batches.
    let text: String = (0..600).map(|i| format!("item{i} ")).collect();
    let request = WorkerRequest::Complete {
        id: 7,
        request: CompletionRequest::new(Prompt::raw(text), 1, SamplingProfile::JUDGE),
    };
    writeln!(stdin, "{}", serde_json::to_string(&request).unwrap()).unwrap();
    stdin.flush().unwrap();
    let mut progress = Vec::new();
    loop {
        let reply: WorkerReply = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        match reply {
            WorkerReply::Progress {
                id, done_tokens, ..
            } => {
                assert_eq!(id, 7);
                progress.push(done_tokens);
            }
            WorkerReply::Completed { id, completion } => {
                assert_eq!(id, 7);
                eprintln!(
                    "prompt {} tokens, progress {progress:?}",
                    completion.prompt_tokens
                );
                assert!(completion.prompt_tokens > 768, "{completion:?}");
                break;
            }
            WorkerReply::Text { .. } => {}
            other => panic!("{other:?}"),
        }
    }
    assert!(progress.len() >= 3, "{progress:?}");
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
    writeln!(
        stdin,
        "{}",
        serde_json::to_string(&WorkerRequest::Shutdown).unwrap()
    )
    .unwrap();
    drop(stdin);
    child.wait().unwrap();
}
