//! The bare llama-cpp-2 decode loop that `rein perf` measures the embedded backend against:
//! the same GGUF, prompt, threads and context, with nothing of Rein's around it.

use std::time::Instant;

use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::sampling::LlamaSampler;
use serde::Serialize;

use crate::engine::{backend, context_params, load_model, read_rss, EngineOptions};
use crate::error::{LlamaError, Result};

#[derive(Debug, Clone, Serialize)]
pub struct ReferenceFigures {
    pub load_ms: f64,
    pub prompt_tokens: usize,
    pub prompt_ms: f64,
    pub generated_tokens: usize,
    pub generation_ms: f64,
    pub peak_rss_bytes: u64,
}

/// Loads the model, decodes `prompt` whole, then generates `generate` tokens greedily.
pub fn run(options: &EngineOptions, prompt: &str, generate: usize) -> Result<ReferenceFigures> {
    let decode_err = |e: &dyn std::fmt::Display| LlamaError::Decode(e.to_string());
    let started = Instant::now();
    let model = load_model(options)?;
    let mut ctx = model
        .new_context(backend()?, context_params(options))
        .map_err(|e| decode_err(&e))?;
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;

    let tokens = model.vocab().tokenize(prompt.as_bytes(), true, true);
    let batch_size = options.batch_tokens.max(32) as usize;
    let mut batch = LlamaBatch::new(batch_size, 1);
    let started = Instant::now();
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
    let prompt_ms = started.elapsed().as_secs_f64() * 1000.0;

    let mut sampler = LlamaSampler::greedy();
    let started = Instant::now();
    let mut pos = tokens.len();
    let mut generated = 0;
    let mut one = LlamaBatch::new(1, 1);
    while generated < generate {
        let token = sampler.sample(&ctx, last);
        generated += 1;
        one.clear();
        one.add(token, pos as i32, &[0], true)
            .map_err(|e| decode_err(&e))?;
        ctx.decode(&mut one).map_err(|e| decode_err(&e))?;
        last = 0;
        pos += 1;
    }
    let generation_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(ReferenceFigures {
        load_ms,
        prompt_tokens: tokens.len(),
        prompt_ms,
        generated_tokens: generated,
        generation_ms,
        peak_rss_bytes: read_rss().0,
    })
}
