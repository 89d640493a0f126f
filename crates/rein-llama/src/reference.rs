//! The bare llama-cpp-2 decode loop that `rein perf` measures the embedded backend against:
//! the same GGUF, prompt, engine options (threads, context, batch, no mmap) and the same number
//! of decode calls, with nothing of Rein's around it.

use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use serde::Serialize;

use crate::engine::{backend, context_params, load_model, read_rss, EngineOptions};
use crate::error::{LlamaError, Result};

#[derive(Debug, Clone, Serialize)]
pub struct ReferenceFigures {
    /// Model load and context creation.
    pub load_ms: f64,
    /// From nothing to the first sampled token: load, the prompt decoded in a fresh context,
    /// one sample. The embedded side's counterpart is a worker spawned and asked once.
    pub cold_start_ms: f64,
    /// The first decode of the prompt in the fresh context (part of `cold_start_ms`).
    pub cold_prompt_ms: f64,
    pub prompt_tokens: usize,
    /// The prompt decoded again after the KV cache was cleared: a warm decode, as the embedded
    /// side's prompt figure is.
    pub prompt_ms: f64,
    /// Single-token decode calls in the generation figure (as many as the caller asked for).
    pub generation_decode_calls: usize,
    /// `generation_decode_calls` decodes and one more sample than decodes, as the embedded
    /// loop does: it samples the token it stops on without decoding it.
    pub generation_ms: f64,
    pub peak_rss_bytes: u64,
}

fn decode_err(e: &dyn std::fmt::Display) -> LlamaError {
    LlamaError::Decode(e.to_string())
}

/// Decodes `tokens` from position 0 in batches of `batch_size`, logits on the last token only
/// (as the engine does). Returns the batch index of the last token's logits.
fn decode_prompt(ctx: &mut LlamaContext, tokens: &[LlamaToken], batch_size: usize) -> Result<i32> {
    let mut batch = LlamaBatch::new(batch_size, 1);
    let mut last = 0;
    for (c, chunk) in tokens.chunks(batch_size).enumerate() {
        batch.clear();
        for (i, t) in chunk.iter().enumerate() {
            let pos = c * batch_size + i;
            batch
                .add(*t, pos as i32, &[0], pos + 1 == tokens.len())
                .map_err(|e| decode_err(&e))?;
        }
        ctx.decode(&mut batch).map_err(|e| decode_err(&e))?;
        last = chunk.len() as i32 - 1;
    }
    Ok(last)
}

/// Loads the model, decodes `prompt` cold and samples once (the cold start), clears the KV
/// cache and decodes the prompt again (the warm prompt figure), then makes exactly
/// `decode_calls` greedy single-token decodes, sampling before each and once after the last.
pub fn run(options: &EngineOptions, prompt: &str, decode_calls: usize) -> Result<ReferenceFigures> {
    let started = Instant::now();
    let model = load_model(options)?;
    let mut ctx = model
        .new_context(backend()?, context_params(options))
        .map_err(|e| decode_err(&e))?;
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;

    let tokens = model.vocab().tokenize(prompt.as_bytes(), true, true);
    if tokens.is_empty() {
        return Err(LlamaError::BadRequest("the prompt is empty".into()));
    }
    let context = ctx.n_ctx() as usize;
    if tokens.len() + decode_calls >= context {
        return Err(LlamaError::BadRequest(format!(
            "the prompt ({} tokens) and {decode_calls} generated tokens do not fit the context window of {context}; generate fewer tokens",
            tokens.len()
        )));
    }
    let batch_size = options.batch_tokens.max(32) as usize;
    let mut sampler = LlamaSampler::greedy();

    let cold = Instant::now();
    let last = decode_prompt(&mut ctx, &tokens, batch_size)?;
    let cold_prompt_ms = cold.elapsed().as_secs_f64() * 1000.0;
    // The first token: its value does not matter, only that the reply would have one.
    let _ = sampler.sample(&ctx, last);
    let cold_start_ms = started.elapsed().as_secs_f64() * 1000.0;

    ctx.clear_kv_cache();
    let warm = Instant::now();
    let mut last = decode_prompt(&mut ctx, &tokens, batch_size)?;
    let prompt_ms = warm.elapsed().as_secs_f64() * 1000.0;

    let started = Instant::now();
    let mut one = LlamaBatch::new(1, 1);
    for pos in tokens.len()..tokens.len() + decode_calls {
        let token = sampler.sample(&ctx, last);
        one.clear();
        one.add(token, pos as i32, &[0], true)
            .map_err(|e| decode_err(&e))?;
        ctx.decode(&mut one).map_err(|e| decode_err(&e))?;
        last = 0;
    }
    // The token the engine stops on: sampled, never decoded.
    let _ = sampler.sample(&ctx, last);
    let generation_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(ReferenceFigures {
        load_ms,
        cold_start_ms,
        cold_prompt_ms,
        prompt_tokens: tokens.len(),
        prompt_ms,
        generation_decode_calls: decode_calls,
        generation_ms,
        peak_rss_bytes: read_rss().0,
    })
}
