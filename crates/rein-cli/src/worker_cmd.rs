//! `rein worker`: the child process that serves one model. Started only by the supervisor in
//! rein-models, whose `WorkerLaunch::command` is the one place this command line is built.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct WorkerArgs {
    #[arg(long)]
    spec: String,
    #[arg(long)]
    model_path: PathBuf,
    #[arg(long)]
    size: u64,
    #[arg(long)]
    threads: u32,
    #[arg(long)]
    context: u32,
    /// How chat prompts are rendered: `gguf` (the file's own Jinja template) or `builtin`
    /// (llama.cpp's matcher).
    #[arg(long, value_parser = ["gguf", "builtin"])]
    template: String,
    /// Where prompt prefixes are kept across workers of this model file.
    #[arg(long, requires = "model_sha256")]
    prefix_store: Option<PathBuf>,
    /// The verified SHA-256 of the model file, which keys the prefix store.
    #[arg(long, requires = "prefix_store")]
    model_sha256: Option<String>,
}

pub fn run(args: WorkerArgs) -> anyhow::Result<i32> {
    let config = rein_llama::worker::WorkerConfig {
        engine: rein_llama::EngineOptions {
            model_path: args.model_path,
            use_mmap: false,
            threads: args.threads,
            context_tokens: args.context,
            batch_tokens: rein_llama::DEFAULT_BATCH_TOKENS,
            expected_size: Some(args.size),
            gguf_template: args.template == "gguf",
            prefix_store: args
                .prefix_store
                .zip(args.model_sha256)
                .map(|(dir, sha)| rein_llama::prefix_store::PrefixStore::new(dir, &sha)),
        },
        spec: args.spec,
    };
    match rein_llama::worker::serve(config) {
        Ok(()) => Ok(0),
        Err(e) => {
            eprintln!("rein worker: {e}");
            Ok(3)
        }
    }
}
