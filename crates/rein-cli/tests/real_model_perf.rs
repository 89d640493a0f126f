#![allow(clippy::unwrap_used, clippy::expect_used)]

//! `rein perf` compares the engine with a bare decode loop call for call. These tests check,
//! with the real 0.5B model, that the count it gives the bare loop is the engine's own: every
//! decode leaves one token in the KV cache, so the cache after a reply is the prompt plus the
//! decodes. Set REIN_SKIP_MODEL_TESTS=1 to skip them on a machine without the model.

use rein_llama::{generation_decode_calls, EngineOptions, LlamaEngine};
use rein_models::embedded::launch_for;
use rein_models::{Catalog, CompletionRequest, DataDir, FinishReason, Prompt, SamplingProfile};

const MODEL: &str = "qwen2.5-coder-0.5b";
const PROMPT: &str = "Count upwards without stopping: 1, 2, 3, 4,";

fn skip() -> bool {
    std::env::var("REIN_SKIP_MODEL_TESTS").is_ok_and(|v| v == "1")
}

fn options() -> EngineOptions {
    let catalog = Catalog::builtin().unwrap();
    let entry = catalog.get(MODEL).unwrap();
    let dir = DataDir::from_env().unwrap();
    let launch = launch_for(entry, &dir, env!("CARGO_BIN_EXE_rein").into())
        .unwrap_or_else(|e| panic!("{e}\n(pull the model first, or set REIN_SKIP_MODEL_TESTS=1)"));
    EngineOptions {
        model_path: launch.model_path,
        use_mmap: false,
        threads: launch.threads,
        context_tokens: 512,
        batch_tokens: rein_llama::DEFAULT_BATCH_TOKENS,
        expected_size: Some(launch.size),
        gguf_template: false,
        prefix_store: None,
    }
}

#[test]
fn real_model_perf_gives_the_bare_loop_the_engines_decode_count() {
    if skip() {
        return;
    }
    let options = options();
    let mut engine = LlamaEngine::load(options.clone()).unwrap();

    // Cut by max_tokens: the last sampled token is never decoded.
    let cut = CompletionRequest::new(Prompt::raw(PROMPT), 6, SamplingProfile::JUDGE);
    let reply = engine.complete(&cut, &mut |_| {}).unwrap();
    assert_eq!(reply.finish, FinishReason::Length, "{reply:?}");
    let decodes = generation_decode_calls(reply.finish, reply.completion_tokens);
    assert_eq!(decodes, 5);
    assert_eq!(
        engine.cached_tokens(),
        (reply.prompt_tokens + decodes) as usize
    );

    // Ended by a stop string: the token that completed it is not decoded either.
    engine.reset_cache();
    let mut stopped = CompletionRequest::new(Prompt::raw(PROMPT), 24, SamplingProfile::JUDGE);
    stopped.stop = vec![" 7".into()];
    let reply = engine.complete(&stopped, &mut |_| {}).unwrap();
    let decodes = generation_decode_calls(reply.finish, reply.completion_tokens);
    assert_eq!(
        engine.cached_tokens(),
        (reply.prompt_tokens + decodes) as usize,
        "{reply:?}"
    );

    // The bare loop reads the prompt as the same tokens and makes exactly that many decodes.
    let bare = rein_llama::reference::run(&options, PROMPT, decodes as usize).unwrap();
    assert_eq!(bare.prompt_tokens, reply.prompt_tokens as usize);
    assert_eq!(bare.generation_decode_calls, decodes as usize);
    assert!(bare.cold_start_ms >= bare.load_ms + bare.cold_prompt_ms);
}

#[test]
fn real_model_bare_loop_refuses_more_decodes_than_the_context_holds() {
    if skip() {
        return;
    }
    let err = rein_llama::reference::run(&options(), PROMPT, 600).unwrap_err();
    let err = err.to_string();
    assert!(
        err.contains("600 generated tokens") && err.contains("512"),
        "{err}"
    );
}
