//! The child side of `rein worker`: load one model, say who it is, then answer requests read
//! from stdin, one JSON line each, until stdin closes or a shutdown arrives.

use std::io::{BufRead, Write};

use rein_protocol::model::ModelIdentity;
use rein_protocol::worker::{WorkerReply, WorkerRequest};

use crate::engine::{EngineOptions, LlamaEngine};
use crate::error::{LlamaError, Result};

#[derive(Debug, Clone)]
pub struct WorkerConfig {
    pub engine: EngineOptions,
    /// How the parent named the model (catalog name).
    pub spec: String,
}

fn send(out: &mut impl Write, reply: &WorkerReply) -> std::io::Result<()> {
    let line = serde_json::to_string(reply).map_err(std::io::Error::other)?;
    out.write_all(line.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Runs the worker until its parent closes stdin. Errors before the hello (the model did not
/// load) are returned so the process exits non-zero with the message on stderr.
pub fn serve(config: WorkerConfig) -> Result<()> {
    let engine_options = config.engine.clone();
    let mut engine = LlamaEngine::load(engine_options)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    // What the loaded file says it is. No hash: the parent verified the file itself, and a
    // worker repeating a hash it was handed would prove nothing.
    let identity = ModelIdentity {
        spec: config.spec.clone(),
        name: engine.name.clone(),
        architecture: engine.architecture.clone(),
        sha256: None,
        context_tokens: engine.context_tokens(),
        parameters: engine.parameters,
        tensors: engine.tensors,
    };
    let io = |e: std::io::Error| LlamaError::Decode(format!("cannot write to the parent: {e}"));
    send(
        &mut out,
        &WorkerReply::Hello {
            identity,
            load_ms: engine.load_ms,
            threads: engine.threads(),
        },
    )
    .map_err(io)?;

    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let line =
            line.map_err(|e| LlamaError::Decode(format!("cannot read from the parent: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let request: WorkerRequest = match serde_json::from_str(&line) {
            Ok(r) => r,
            Err(e) => {
                send(
                    &mut out,
                    &WorkerReply::Error {
                        id: 0,
                        message: format!("unreadable request: {e}"),
                    },
                )
                .map_err(io)?;
                continue;
            }
        };
        if let Some(id) = request_id(&request) {
            engine.on_progress(Some(Box::new(move |done, total| {
                // A lost progress line only risks a timeout; the reply itself reports errors.
                let _ = send(
                    &mut std::io::stdout().lock(),
                    &WorkerReply::Progress {
                        id,
                        done_tokens: u32::try_from(done).unwrap_or(u32::MAX),
                        total_tokens: u32::try_from(total).unwrap_or(u32::MAX),
                    },
                );
            })));
        }
        let reply = match request {
            WorkerRequest::Shutdown => return Ok(()),
            WorkerRequest::Complete { id, request } => {
                let mut write_error = None;
                let result = engine.complete(&request, &mut |text| {
                    if write_error.is_none() {
                        if let Err(e) = send(
                            &mut out,
                            &WorkerReply::Text {
                                id,
                                text: text.to_string(),
                            },
                        ) {
                            write_error = Some(e);
                        }
                    }
                });
                if let Some(e) = write_error {
                    return Err(io(e));
                }
                match result {
                    Ok(completion) => WorkerReply::Completed { id, completion },
                    Err(LlamaError::PromptTooLong { tokens, context }) => {
                        WorkerReply::PromptTooLong {
                            id,
                            tokens: u32::try_from(tokens).unwrap_or(u32::MAX),
                            context,
                        }
                    }
                    Err(e) => WorkerReply::Error {
                        id,
                        message: e.to_string(),
                    },
                }
            }
            WorkerRequest::Choose { id, request } => match engine.choose(&request) {
                Ok(reply) => WorkerReply::Chosen { id, reply },
                Err(e) => WorkerReply::Error {
                    id,
                    message: e.to_string(),
                },
            },
            WorkerRequest::Stats { id } => WorkerReply::Stats {
                id,
                stats: engine.stats(),
            },
            WorkerRequest::ResetCache { id } => {
                engine.reset_cache();
                WorkerReply::CacheReset { id }
            }
        };
        engine.on_progress(None);
        send(&mut out, &reply).map_err(io)?;
    }
    Ok(())
}

/// The id of a request that decodes a prompt (and so reports progress).
fn request_id(request: &WorkerRequest) -> Option<u64> {
    match request {
        WorkerRequest::Complete { id, .. } | WorkerRequest::Choose { id, .. } => Some(*id),
        _ => None,
    }
}
