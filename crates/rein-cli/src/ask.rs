//! `rein ask`: stream one answer from a model.

use std::io::Write;

use anyhow::bail;
use clap::Args;
use rein_protocol::display::{Mode, StreamEscaper};
use rein_protocol::model::{ChatMessage, CompletionRequest, Prompt, SamplingProfile};

use crate::open::{default_actor, open_model_with, ModelKnobs};

/// Longest prompt accepted, in characters (DESIGN.md: one input).
pub const MAX_INPUT_CHARS: usize = 32_000;

#[derive(Debug, Args)]
pub struct AskArgs {
    /// A catalog name, `openai:URL#MODEL` or `scripted:FILE` (default: the catalog's actor).
    #[arg(long)]
    model: Option<String>,
    /// Longest answer, in tokens.
    #[arg(long, default_value_t = 512)]
    max_tokens: u32,
    /// A system message to put before the prompt.
    #[arg(long)]
    system: Option<String>,
    /// Sampling seed.
    #[arg(long, default_value_t = 0)]
    seed: u32,
    /// Allow an `openai:` endpoint that is not on this machine.
    #[arg(long)]
    allow_remote: bool,
    #[command(flatten)]
    knobs: ModelKnobs,
    /// The question.
    prompt: String,
}

pub fn run(args: AskArgs, json: bool) -> anyhow::Result<i32> {
    let chars = args.prompt.chars().count();
    if args.prompt.trim().is_empty() {
        bail!("the prompt is empty; give the question as the last argument");
    }
    if chars > MAX_INPUT_CHARS {
        bail!("the prompt has {chars} characters, more than the limit of {MAX_INPUT_CHARS}; shorten it");
    }
    let spec = match args.model {
        Some(m) => m,
        None => default_actor()?,
    };
    // Checks every knob (temperature included) before anything loads.
    let mut model = open_model_with(&spec, args.allow_remote, &args.knobs)?;
    let mut messages = Vec::new();
    if let Some(system) = args.system {
        messages.push(ChatMessage::system(system));
    }
    messages.push(ChatMessage::user(args.prompt));
    let mut request = CompletionRequest::new(
        Prompt::chat(messages),
        args.max_tokens,
        SamplingProfile::CHAT,
    );
    request.seed = args.seed;
    if let Some(t) = args.knobs.temperature {
        request.sampling.temperature = t;
    }

    let stdout = std::io::stdout();
    // Model text reaches the terminal escaped (DESIGN principle 9): no control or bidi
    // character can move the cursor or hide what the model said. One escaper for the whole
    // answer, so a run of combining marks streamed one token at a time is still cut.
    let mut escaper = StreamEscaper::new(Mode::Text);
    let completion = model.complete(&request, &mut |text| {
        if !json {
            let mut out = stdout.lock();
            let _ = out.write_all(escaper.push(text).as_bytes());
            let _ = out.flush();
        }
    })?;
    if !json {
        let _ = stdout.lock().write_all(escaper.finish().as_bytes());
    }
    if json {
        let doc = serde_json::json!({
            "model": model.identity(),
            "text": completion.text,
            "finish": completion.finish,
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens,
            "prompt_ms": completion.prompt_ms,
            "generation_ms": completion.generation_ms,
        });
        println!("{}", rein_protocol::display::json_safe(&doc.to_string()));
    } else {
        println!();
        let tps = if completion.generation_ms > 0.0 {
            completion.completion_tokens as f64 * 1000.0 / completion.generation_ms
        } else {
            0.0
        };
        eprintln!(
            "[{}: {} prompt tokens, {} generated at {tps:.1} tokens/s{}]",
            model.identity().name,
            completion.prompt_tokens,
            completion.completion_tokens,
            if completion.finish == rein_protocol::FinishReason::Length {
                "; cut at --max-tokens"
            } else {
                ""
            }
        );
    }
    Ok(0)
}
