//! One loaded model with one context whose KV cache outlives requests.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use llguidance::api::TopLevelGrammar;
use llguidance::{Matcher, ParserFactory};
use rein_protocol::model::{
    Completion, CompletionRequest, FinishReason, NoPaste, Prompt, SamplingProfile,
};
use rein_protocol::worker::WorkerStats;

use crate::copy_penalty::CopyPenalty;
use crate::error::{LlamaError, Result};
use crate::prefix::reuse_prefix;
use crate::prefix_store::PrefixStore;
use crate::row_ends::{Lead, RowEnds};
use crate::stop::StopScanner;
use crate::template::ChatTemplate;

/// How many recent tokens the repetition penalty looks at.
const PENALTY_LAST_N: i32 = 64;
/// Tokens decoded per batch while processing a prompt.
pub const DEFAULT_BATCH_TOKENS: u32 = 512;

/// Largest micro-batch handed to the CPU backend in one graph.
const MAX_MICRO_BATCH: u32 = 256;

/// Sequences a context holds besides the prompt's own (sequence 0): `choose` scores up to this
/// many label spellings in one decode, each on its own copy of the cached prompt (a copy tags
/// the prompt's cells with the sequence; nothing is recomputed).
pub(crate) const BRANCH_SEQUENCES: usize = 32;

#[derive(Debug, Clone)]
pub struct EngineOptions {
    pub model_path: PathBuf,
    /// Map the file instead of reading it. Off for workers: see `load_model`.
    pub use_mmap: bool,
    pub threads: u32,
    pub context_tokens: u32,
    /// Batch size for prompt processing.
    pub batch_tokens: u32,
    /// The size the catalog expects; a different size means a truncated or foreign file.
    pub expected_size: Option<u64>,
    /// Render chat prompts with the GGUF's own Jinja template (lever `gguf-template`) rather
    /// than llama.cpp's built-in matcher.
    pub gguf_template: bool,
    /// Where the worker's first long prompt is kept for the next worker of the same model, and
    /// looked for (see [`crate::prefix_store`]); `None` keeps nothing on disk.
    pub prefix_store: Option<PrefixStore>,
}

/// llama.cpp allows one backend per process; the worker and the perf reference share it.
pub(crate) fn backend() -> Result<&'static LlamaBackend> {
    static BACKEND: OnceLock<std::result::Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(
                llama_cpp_2::LogOptions::default().with_logs_enabled(false),
            );
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LlamaError::Context(e.clone()))
}

/// Loads the model without mmap: with mmap, the file's pages stay resident beside the
/// repacked copies of the weights that the CPU backend makes, and the process holds the
/// weights twice. Reading into buffers once keeps peak RSS near the file size.
pub(crate) fn load_model(options: &EngineOptions) -> Result<LlamaModel> {
    let path = options.model_path.display().to_string();
    let meta = std::fs::metadata(&options.model_path).map_err(|e| LlamaError::Load {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    if let Some(expected) = options.expected_size {
        if meta.len() != expected {
            return Err(LlamaError::WrongSize {
                path,
                expected,
                actual: meta.len(),
            });
        }
    }
    let params = LlamaModelParams::default().with_use_mmap(options.use_mmap);
    LlamaModel::load_from_file(backend()?, &options.model_path, &params).map_err(|e| {
        LlamaError::Load {
            path,
            reason: format!("{e} (not a valid GGUF file, or corrupt)"),
        }
    })
}

pub(crate) fn context_params(options: &EngineOptions) -> LlamaContextParams {
    let threads = i32::try_from(options.threads.max(1)).unwrap_or(1);
    LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(options.context_tokens.max(256)))
        .with_n_batch(options.batch_tokens.max(32))
        // A smaller micro-batch keeps the compute buffers (part of peak RSS) down; prompt
        // throughput on CPU barely changes between 256 and 512.
        .with_n_ubatch(options.batch_tokens.clamp(32, MAX_MICRO_BATCH))
        .with_n_threads(threads)
        .with_n_threads_batch(threads)
}

/// Whether a saved sequence of this model holds every position, so that a stored prompt can be
/// cut to a shorter prefix: not with a sliding attention window (a saved state keeps only the
/// window's last positions for those layers) nor a recurrent state (it cannot be cut at all).
fn keeps_whole_prefixes(model: &LlamaModel, architecture: &str) -> bool {
    let window = model
        .meta_val_str(&format!("{architecture}.attention.sliding_window"))
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    window == 0 && !model.is_recurrent() && !model.is_hybrid()
}

/// Receives (prompt tokens done, prompt tokens in all) while a prompt is decoded.
pub type ProgressHook = Box<dyn FnMut(usize, usize)>;

/// How one reply is steered off pastes: the copy penalty, and the row-end rule with the
/// vocabulary's leads when tables are held.
struct Steering {
    copies: CopyPenalty,
    rows: Option<(RowEnds, std::sync::Arc<Vec<Lead>>)>,
}

pub struct LlamaEngine {
    model: &'static LlamaModel,
    ctx: LlamaContext<'static>,
    /// The GGUF's own Jinja chat template (`tokenizer.chat_template`), if it has one.
    template: Option<ChatTemplate>,
    /// llama.cpp's built-in rendering of the same template family, used while the lever
    /// `gguf-template` is off.
    builtin_template: Option<LlamaChatTemplate>,
    /// Texts of control tokens; message contents are defused so they cannot inject them.
    control_texts: Vec<String>,
    /// Tokens whose keys and values the context holds, position by position.
    cached: Vec<LlamaToken>,
    /// No prompt decoded yet: the next one may come from, and go to, the prefix store.
    fresh: bool,
    /// Batch index of the last decoded position that produced logits.
    last_logits: i32,
    /// Per token id: whether its text continues a word (see `choose`); built on first use.
    continues: Option<std::sync::Arc<Vec<bool>>>,
    /// Per token id: how its text goes on from a word (see `row_ends`); built on first use.
    leads: Option<std::sync::Arc<Vec<Lead>>>,
    parser_factory: Option<ParserFactory>,
    options: EngineOptions,
    /// Told (tokens decoded, prompt tokens) after each prompt batch; see [`Self::on_progress`].
    progress: Option<ProgressHook>,
    pub name: String,
    pub architecture: String,
    /// Parameters as llama.cpp counts them (elements of all tensors).
    pub parameters: u64,
    /// Tensors in the GGUF's tensor table.
    pub tensors: u64,
    pub load_ms: f64,
}

impl LlamaEngine {
    pub fn load(mut options: EngineOptions) -> Result<Self> {
        let started = Instant::now();
        // One model per worker process for its whole life, so leaking it gives the context
        // the 'static borrow it needs without a self-referential struct.
        let model: &'static LlamaModel = Box::leak(Box::new(load_model(&options)?));
        // One unified KV buffer shared by all sequences, so the label branches of `choose` reuse
        // the prompt's cells instead of each sequence getting a slice of the window.
        let params = context_params(&options)
            .with_n_seq_max(BRANCH_SEQUENCES as u32 + 1)
            .with_kv_unified(true);
        let ctx = model
            .new_context(backend()?, params)
            .map_err(|e| LlamaError::Context(e.to_string()))?;
        let builtin_template = model.chat_template(None).ok();
        let vocab = model.vocab();
        let control_texts = vocab
            .tokens()
            .filter(|t| vocab.is_control(*t) || vocab.is_eog(*t))
            .map(|t| String::from_utf8_lossy(&vocab.token_to_piece(t, true, None)).into_owned())
            .filter(|s| s.len() > 1)
            .collect();
        // Name, architecture and parameters as llama.cpp loaded them; the tensor count, which
        // llama.cpp does not expose, from the file's own header.
        let name = model.meta_val_str("general.name").unwrap_or_default();
        let architecture = model
            .meta_val_str("general.architecture")
            .unwrap_or_default();
        let header =
            rein_protocol::gguf::GgufHeader::read_file(&options.model_path).map_err(|e| {
                LlamaError::Load {
                    path: options.model_path.display().to_string(),
                    reason: e.to_string(),
                }
            })?;
        let token_text =
            |t| String::from_utf8_lossy(&vocab.token_to_piece(t, true, None)).into_owned();
        // Parsed only when it will render: a user's GGUF whose template minijinja cannot
        // read still loads with the built-in matcher.
        let template = header
            .chat_template()
            .filter(|_| options.gguf_template)
            .map(|source| {
                ChatTemplate::new(source, &token_text(vocab.bos()), &token_text(vocab.eos()))
            })
            .transpose()?;
        if !keeps_whole_prefixes(model, &architecture) {
            options.prefix_store = None;
        }
        Ok(Self {
            model,
            ctx,
            template,
            builtin_template,
            control_texts,
            cached: Vec::new(),
            fresh: true,
            last_logits: 0,
            continues: None,
            leads: None,
            parser_factory: None,
            options,
            progress: None,
            name,
            architecture,
            parameters: model.n_params(),
            tensors: header.tensor_count,
            load_ms: started.elapsed().as_secs_f64() * 1000.0,
        })
    }

    /// Sets (or clears) the hook told of prompt progress. The worker uses it to keep its parent
    /// informed through prompts that take minutes to decode.
    pub fn on_progress(&mut self, hook: Option<ProgressHook>) {
        self.progress = hook;
    }

    pub fn context_tokens(&self) -> u32 {
        self.ctx.n_ctx()
    }

    pub fn threads(&self) -> u32 {
        self.options.threads
    }

    pub fn has_chat_template(&self) -> bool {
        if self.options.gguf_template {
            self.template.is_some()
        } else {
            self.builtin_template.is_some()
        }
    }

    /// Renders a prompt to tokens with the model's own chat template (or as raw text).
    pub fn tokenize_prompt(&self, prompt: &Prompt) -> Result<Vec<LlamaToken>> {
        let text = match prompt {
            Prompt::Raw { text } => self.defuse(text),
            Prompt::Chat { messages } => self.render_chat(messages)?,
        };
        let mut tokens = self.model.vocab().tokenize(text.as_bytes(), true, true);
        let bos = self.model.vocab().bos();
        if tokens.len() >= 2 && tokens[0] == bos && tokens[1] == bos {
            tokens.remove(0);
        }
        Ok(tokens)
    }

    fn render_chat(&self, messages: &[rein_protocol::ChatMessage]) -> Result<String> {
        let defused: Vec<_> = messages
            .iter()
            .map(|m| rein_protocol::ChatMessage::new(m.role, self.defuse(&m.content)))
            .collect();
        if self.options.gguf_template {
            let template = self.template.as_ref().ok_or(LlamaError::NoChatTemplate)?;
            return template.render(&defused, true);
        }
        let template = self
            .builtin_template
            .as_ref()
            .ok_or(LlamaError::NoChatTemplate)?;
        let chat = defused
            .into_iter()
            .map(|m| {
                LlamaChatMessage::new(crate::template::role_name(m.role).to_string(), m.content)
                    .map_err(|e| LlamaError::Template(e.to_string()))
            })
            .collect::<Result<Vec<_>>>()?;
        self.model
            .apply_chat_template(template, &chat, true)
            .map_err(|e| LlamaError::Template(e.to_string()))
    }

    /// Breaks up any control-token text inside content (a file could contain `<|im_start|>`),
    /// so only the template itself can open or close a turn.
    fn defuse(&self, text: &str) -> String {
        let mut out = text.replace('\0', "");
        for control in &self.control_texts {
            if out.contains(control.as_str()) {
                let mut chars = control.chars();
                let first = chars.next().map(String::from).unwrap_or_default();
                let broken = format!("{first}\u{200b}{}", chars.as_str());
                out = out.replace(control.as_str(), &broken);
            }
        }
        out
    }

    /// Decodes `tokens`, reusing the longest common prefix already in the KV cache.
    /// Returns how many tokens came from the cache.
    pub(crate) fn eval_prompt(&mut self, tokens: &[LlamaToken]) -> Result<usize> {
        if tokens.is_empty() {
            return Err(LlamaError::BadRequest("the prompt is empty".into()));
        }
        let context = self.ctx.n_ctx();
        if tokens.len() >= context as usize {
            return Err(LlamaError::PromptTooLong {
                tokens: tokens.len(),
                context,
            });
        }
        // Only a new worker's first prompt meets the store: a cache reset on purpose (a cold
        // measurement) stays cold.
        let first = std::mem::replace(&mut self.fresh, false);
        let loaded = if first {
            self.load_stored_prefix(tokens)
        } else {
            0
        };
        let mut keep = reuse_prefix(&self.cached, tokens);
        if keep < self.cached.len() {
            let removed = self
                .ctx
                .clear_kv_cache_seq(Some(0), Some(keep as u32), None)
                .map_err(|e| LlamaError::Decode(e.to_string()))?;
            if !removed {
                self.ctx.clear_kv_cache();
                keep = 0;
            }
            self.cached.truncate(keep);
        }
        if loaded > 0 && keep > 0 && self.ctx.kv_cache_seq_pos_min(0) != 0 {
            // A loaded state must hold every position from 0; if not, decode it all.
            self.ctx.clear_kv_cache();
            self.cached.clear();
            keep = 0;
        }
        // Chunks of one micro-batch: llama.cpp computes a micro-batch at a time anyway, and the
        // progress hook then hears from every one, so a long prompt on a busy machine never
        // looks like a silent worker to the parent.
        let batch_size = self.options.batch_tokens.clamp(32, MAX_MICRO_BATCH) as usize;
        let mut batch = LlamaBatch::new(batch_size, 1);
        let rest = &tokens[keep..];
        for (chunk_index, chunk) in rest.chunks(batch_size).enumerate() {
            batch.clear();
            let start = keep + chunk_index * batch_size;
            for (i, token) in chunk.iter().enumerate() {
                let pos = start + i;
                let last = pos + 1 == tokens.len();
                batch
                    .add(*token, pos as i32, &[0], last)
                    .map_err(|e| LlamaError::Decode(e.to_string()))?;
            }
            self.ctx
                .decode(&mut batch)
                .map_err(|e| LlamaError::Decode(e.to_string()))?;
            self.cached.extend_from_slice(chunk);
            self.last_logits = chunk.len() as i32 - 1;
            if let Some(hook) = self.progress.as_mut() {
                hook(self.cached.len(), tokens.len());
            }
        }
        if first && PrefixStore::worth_storing(tokens, loaded) {
            self.store_prefix();
        }
        Ok(keep)
    }

    /// For a new worker's first prompt: the stored prompt sharing the longest prefix with
    /// `tokens`, loaded into sequence 0 whole. Returns how many tokens it shares (0 when none
    /// could be loaded).
    fn load_stored_prefix(&mut self, tokens: &[LlamaToken]) -> usize {
        // Borrowed, not cloned: the store computes its key (a hash of the executable) once.
        let Some(store) = self.options.prefix_store.as_ref() else {
            return 0;
        };
        let Some(found) = store.best_match(tokens, self.ctx.n_ctx() as usize) else {
            return 0;
        };
        if !store.intact(&found) {
            store.discard(&found.path);
            return 0;
        }
        match self
            .ctx
            .state_seq_load_file(&found.path, 0, found.tokens.len())
        {
            // What it shares with this prompt stays; the caller drops the rest.
            Ok((read, _)) if read == found.tokens => {
                store.touch(&found.path);
                self.cached = read;
                found.shared
            }
            _ => {
                // Unreadable or not what its name says: forget it and decode as usual.
                self.ctx.clear_kv_cache();
                self.cached.clear();
                store.discard(&found.path);
                0
            }
        }
    }

    /// Keeps the prompt just decoded for the next worker of this model. A failure to save
    /// costs nothing but the time the next worker spends decoding it again.
    fn store_prefix(&self) {
        let Some(store) = self.options.prefix_store.as_ref() else {
            return;
        };
        if let Err(e) = store.store(&self.cached, |path| {
            self.ctx.state_seq_save_file(path, 0, &self.cached).is_ok()
        }) {
            eprintln!("rein worker: the prompt prefix was not kept on disk: {e}");
        }
    }

    /// Appends one token to the context and computes its logits.
    fn eval_token(&mut self, token: LlamaToken, batch: &mut LlamaBatch) -> Result<()> {
        batch.clear();
        batch
            .add(token, self.cached.len() as i32, &[0], true)
            .map_err(|e| LlamaError::Decode(e.to_string()))?;
        self.ctx
            .decode(batch)
            .map_err(|e| LlamaError::Decode(e.to_string()))?;
        self.cached.push(token);
        self.last_logits = 0;
        Ok(())
    }

    pub(crate) fn last_logits(&self) -> &[f32] {
        self.ctx.get_logits_ith(self.last_logits)
    }

    /// Per token id, whether the token continues the word before it. End-of-generation tokens
    /// never do; the table is built once per worker (it walks the whole vocabulary).
    pub(crate) fn continuation_table(&mut self) -> std::sync::Arc<Vec<bool>> {
        if let Some(table) = &self.continues {
            return table.clone();
        }
        let table = std::sync::Arc::new(self.per_token(false, crate::choose::continues_word));
        self.continues = Some(table.clone());
        table
    }

    /// Per token id, how its text goes on from a word just written; built once per worker.
    fn lead_table(&mut self) -> std::sync::Arc<Vec<Lead>> {
        if let Some(table) = &self.leads {
            return table.clone();
        }
        let table = std::sync::Arc::new(self.per_token(Lead::Wordless, Lead::of));
        self.leads = Some(table.clone());
        table
    }

    /// `of(text)` for every token of the vocabulary, by id; `none` for end-of-generation and
    /// control tokens, which have no text of their own.
    fn per_token<T: Clone>(&self, none: T, of: impl Fn(&str) -> T) -> Vec<T> {
        let vocab = self.model.vocab();
        let n = self.model.n_vocab().max(0) as usize;
        let mut table = vec![none; n];
        for token in vocab.tokens() {
            let id = token.0 as usize;
            if id < n && !vocab.is_eog(token) && !vocab.is_control(token) {
                let piece = vocab.token_to_piece(token, false, None);
                table[id] = of(&String::from_utf8_lossy(&piece));
            }
        }
        table
    }

    pub(crate) fn vocab_tokenize(&self, text: &str) -> Vec<LlamaToken> {
        self.model.vocab().tokenize(text.as_bytes(), false, false)
    }

    /// Scores `branches` (token sequences, each to be read right after the cached prompt) and
    /// forgets them again: `visit(branch, position, logits)` receives the logits after each
    /// token of each branch. Branches are decoded side by side, [`BRANCH_SEQUENCES`] at a time
    /// and within one batch, each in its own sequence holding a copy of the prompt, so one
    /// decode scores them all and no branch sees another.
    pub(crate) fn score_branches(
        &mut self,
        branches: &[Vec<LlamaToken>],
        visit: &mut dyn FnMut(usize, usize, &[f32]),
    ) -> Result<()> {
        let base = self.cached.len();
        let batch_cap = self.options.batch_tokens.max(32) as usize;
        if base + branches.iter().map(Vec::len).max().unwrap_or(0) >= self.ctx.n_ctx() as usize {
            return Err(LlamaError::PromptTooLong {
                tokens: base + branches.iter().map(Vec::len).max().unwrap_or(0),
                context: self.ctx.n_ctx(),
            });
        }
        let mut start = 0;
        while start < branches.len() {
            // A group: as many branches as there are sequences and the batch holds.
            let mut end = start;
            let mut tokens = 0;
            while end < branches.len()
                && end - start < BRANCH_SEQUENCES
                && tokens + branches[end].len() <= batch_cap
            {
                tokens += branches[end].len();
                end += 1;
            }
            if end == start {
                return Err(LlamaError::BadRequest(format!(
                    "a label is {} tokens long; labels must fit one batch of {batch_cap} tokens",
                    branches[start].len()
                )));
            }
            let group = &branches[start..end];
            let mut batch = LlamaBatch::new(tokens.max(1), 1);
            for (k, branch) in group.iter().enumerate() {
                let seq = (k + 1) as i32;
                if base > 0 {
                    self.ctx
                        .copy_kv_cache_seq(0, seq, None, Some(base as u32))
                        .map_err(|e| LlamaError::Decode(e.to_string()))?;
                }
                for (j, token) in branch.iter().enumerate() {
                    batch
                        .add(*token, (base + j) as i32, &[seq], true)
                        .map_err(|e| LlamaError::Decode(e.to_string()))?;
                }
            }
            let decoded = self
                .ctx
                .decode(&mut batch)
                .map_err(|e| LlamaError::Decode(e.to_string()));
            if decoded.is_ok() {
                let mut index = 0i32;
                for (k, branch) in group.iter().enumerate() {
                    for j in 0..branch.len() {
                        visit(start + k, j, self.ctx.get_logits_ith(index));
                        index += 1;
                    }
                }
            }
            // The branches go whatever happened; the prompt's own sequence 0 stays.
            for k in 0..group.len() {
                self.ctx
                    .clear_kv_cache_seq(Some((k + 1) as u32), None, None)
                    .map_err(|e| LlamaError::Decode(e.to_string()))?;
            }
            decoded?;
            self.report_alive();
            start = end;
        }
        Ok(())
    }

    /// Tells the progress hook (the parent's silence limit) that work goes on after the prompt:
    /// the prompt is done, so it reports the cached tokens as both done and total.
    pub(crate) fn report_alive(&mut self) {
        let cached = self.cached.len();
        if let Some(hook) = self.progress.as_mut() {
            hook(cached, cached);
        }
    }

    pub fn reset_cache(&mut self) {
        // A reset asks for a cold cache: the prefix store must not fill it either.
        self.fresh = false;
        self.ctx.clear_kv_cache();
        self.cached.clear();
    }

    pub fn cached_tokens(&self) -> usize {
        self.cached.len()
    }

    fn sampler(&mut self, request: &CompletionRequest) -> Result<LlamaSampler> {
        let mut chain = Vec::new();
        if let Some(schema) = &request.json_schema {
            chain.push(self.schema_sampler(schema)?);
        }
        let profile: SamplingProfile = request.sampling;
        if (profile.repeat_penalty - 1.0).abs() > f32::EPSILON {
            chain.push(LlamaSampler::penalties(
                self.model.n_vocab(),
                PENALTY_LAST_N,
                profile.repeat_penalty,
                0.0,
                0.0,
            ));
        }
        if profile.is_greedy() {
            chain.push(LlamaSampler::greedy());
        } else {
            if profile.top_k > 0 {
                chain.push(LlamaSampler::top_k(profile.top_k));
            }
            if profile.top_p < 1.0 {
                chain.push(LlamaSampler::top_p(profile.top_p, 1));
            }
            chain.push(LlamaSampler::temp(profile.temperature));
            chain.push(LlamaSampler::dist(request.seed));
        }
        Ok(LlamaSampler::chain_simple(chain))
    }

    fn schema_sampler(&mut self, schema: &serde_json::Value) -> Result<LlamaSampler> {
        if self.parser_factory.is_none() {
            let env = LlamaSampler::llguidance_tok_env(self.model);
            let factory =
                ParserFactory::new_simple(&env).map_err(|e| LlamaError::Schema(e.to_string()))?;
            self.parser_factory = Some(factory);
        }
        let factory = self
            .parser_factory
            .as_ref()
            .ok_or_else(|| LlamaError::Schema("no parser".into()))?;
        let parser = factory
            .create_parser(TopLevelGrammar::from_json_schema(with_fixed_separators(
                schema,
            )))
            .map_err(|e| LlamaError::Schema(e.to_string()))?;
        Ok(LlamaSampler::from(Matcher::new(Ok(parser))))
    }

    /// The no-paste steering of one reply: the copy penalty over `np.sources`, and the row-end
    /// rule over `np.tables` when there are any.
    fn steering(&mut self, np: &NoPaste) -> Steering {
        let rows = (!np.tables.is_empty()).then(|| {
            (
                RowEnds::new(np.tables.iter().map(String::as_str), np.table_run_words),
                self.lead_table(),
            )
        });
        Steering {
            copies: self.copy_penalty(np),
            rows,
        }
    }

    /// The no-paste penalty over `np.sources`, each in its canonical tokenization.
    fn copy_penalty(&self, np: &NoPaste) -> CopyPenalty {
        let vocab = self.model.vocab();
        let sources = np.sources.iter().map(|text| {
            vocab
                .tokenize(text.as_bytes(), false, false)
                .into_iter()
                .map(|t| t.0)
                .collect()
        });
        let penalty = CopyPenalty::new(sources, np.allowed_tokens);
        if np.own_repeats {
            penalty.counting_own_repeats()
        } else {
            penalty
        }
    }

    /// One token as `sampler.sample` picks it after the no-paste penalty has come off the
    /// logits of the tokens that would carry on a copied run; both then take the token.
    fn sample_off_copies(
        &self,
        sampler: &mut LlamaSampler,
        steering: &mut Steering,
    ) -> Result<LlamaToken> {
        let mut penalties = steering.copies.penalties();
        if let Some((rows, leads)) = &steering.rows {
            for (id, p) in rows.penalties(leads) {
                let slot = penalties.entry(id).or_insert(0.0);
                *slot = slot.max(p);
            }
        }
        let mut candidates =
            LlamaTokenDataArray::from_iter(self.ctx.candidates_ith(self.last_logits), false);
        for (&id, &p) in &penalties {
            // `candidates_ith` lists the vocabulary in id order.
            let at = usize::try_from(id)
                .ok()
                .filter(|&i| candidates.data.get(i).is_some_and(|c| c.id().0 == id));
            let at = at.or_else(|| candidates.data.iter().position(|c| c.id().0 == id));
            if let Some(c) = at.and_then(|i| candidates.data.get_mut(i)) {
                c.set_logit(c.logit() - p);
            }
        }
        candidates.apply_sampler(sampler);
        let token = candidates
            .selected_token()
            .ok_or_else(|| LlamaError::Decode("the sampler chain selected no token".into()))?;
        sampler.accept(token);
        steering.copies.accept(token.0);
        if let Some((rows, _)) = &mut steering.rows {
            let piece = self.model.vocab().token_to_piece(token, false, None);
            rows.accept(&String::from_utf8_lossy(&piece));
        }
        Ok(token)
    }

    /// Generates a completion, streaming text pieces to `on_text` as they become final.
    pub fn complete(
        &mut self,
        request: &CompletionRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion> {
        if request.max_tokens == 0 {
            return Err(LlamaError::BadRequest(
                "max_tokens must be at least 1".into(),
            ));
        }
        let tokens = self.tokenize_prompt(&request.prompt)?;
        let mut sampler = self.sampler(request)?;
        let mut no_paste = request.no_paste.as_ref().map(|np| self.steering(np));
        let started = Instant::now();
        let cached = self.eval_prompt(&tokens)?;
        let prompt_ms = started.elapsed().as_secs_f64() * 1000.0;

        let started = Instant::now();
        let mut scanner = StopScanner::new(&request.stop);
        let mut batch = LlamaBatch::new(1, 1);
        let mut produced = 0u32;
        let context = self.ctx.n_ctx() as usize;
        let finish = loop {
            let token = match no_paste.as_mut() {
                None => sampler.sample(&self.ctx, self.last_logits),
                Some(copies) => self.sample_off_copies(&mut sampler, copies)?,
            };
            if self.model.vocab().is_eog(token) {
                break FinishReason::Stop;
            }
            produced += 1;
            let piece = self.model.vocab().token_to_piece(token, false, None);
            let shown = scanner.push(&piece);
            if !shown.is_empty() {
                on_text(&shown);
            }
            if scanner.stopped() {
                break FinishReason::StopString;
            }
            if produced >= request.max_tokens || self.cached.len() + 1 >= context {
                break FinishReason::Length;
            }
            self.eval_token(token, &mut batch)?;
        };
        let tail = scanner.finish();
        if !tail.is_empty() {
            on_text(&tail);
        }
        Ok(Completion {
            text: scanner.text().to_string(),
            finish,
            prompt_tokens: tokens.len() as u32,
            cached_tokens: cached as u32,
            completion_tokens: produced,
            prompt_ms,
            generation_ms: started.elapsed().as_secs_f64() * 1000.0,
        })
    }

    pub fn stats(&self) -> WorkerStats {
        let (peak, rss) = read_rss();
        WorkerStats {
            peak_rss_bytes: peak,
            rss_bytes: rss,
            cached_tokens: self.cached.len() as u32,
            context_tokens: self.ctx.n_ctx(),
        }
    }
}

/// How many single-token decodes [`LlamaEngine::complete`] made for a reply of `produced`
/// tokens that ended with `finish`. The loop decodes each produced token before sampling the
/// next, except the one it stops on: a reply cut by `max_tokens` or a stop string ends on a
/// produced token it never decodes, while one ended by the model ends on an end-of-generation
/// token that is not counted as produced. `rein perf` gives the bare loop exactly this many
/// decodes, so generation speed is compared call for call.
pub fn generation_decode_calls(finish: FinishReason, produced: u32) -> u32 {
    match finish {
        FinishReason::Stop => produced,
        FinishReason::StopString | FinishReason::Length => produced.saturating_sub(1),
    }
}

/// CPU time this process has used so far (user and system, all threads), in milliseconds; 0
/// where unavailable. A decision's CPU time over its wall time shows how much of the wait was
/// the machine being busy with something else.
pub(crate) fn process_cpu_ms() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage only writes the struct it is given, which is zeroed and large enough.
    let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } == 0;
    if !ok {
        return 0.0;
    }
    // SAFETY: initialised by the call above (and zeroed before it).
    let usage = unsafe { usage.assume_init() };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    ms(usage.ru_utime) + ms(usage.ru_stime)
}

/// Peak and current resident set size of this process, from /proc (0 where unavailable).
pub(crate) fn read_rss() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// Builds the grammar llguidance would decode `schema` with (fixed separators included) over a
/// byte-level vocabulary, or says why it cannot: what fails here (a regex the lexer runs out of
/// fuel on, an unsatisfiable schema) fails a real request the same way, whatever the model's
/// tokens. For tests that hold a schema builder to what decoding can use.
pub fn check_schema_grammar(schema: &serde_json::Value) -> Result<()> {
    let env = llguidance::toktrie::ApproximateTokEnv::single_byte_env();
    let factory = ParserFactory::new_simple(&env).map_err(|e| LlamaError::Schema(e.to_string()))?;
    factory
        .create_parser(TopLevelGrammar::from_json_schema(with_fixed_separators(
            schema,
        )))
        .map(|_| ())
        .map_err(|e| LlamaError::Schema(e.to_string()))
}

/// How many bytes of `text` llguidance lets through under `schema` (as it is: wrap it in
/// [`with_fixed_separators`] to decode as a request would), over a byte-level vocabulary:
/// `text.len()` when all of it. For tests that hold a schema's patterns to what they refuse.
pub fn schema_accepted_len(schema: &serde_json::Value, text: &str) -> Result<usize> {
    let env = llguidance::toktrie::ApproximateTokEnv::single_byte_env();
    let factory = ParserFactory::new_simple(&env).map_err(|e| LlamaError::Schema(e.to_string()))?;
    let parser = factory
        .create_parser(TopLevelGrammar::from_json_schema(schema.clone()))
        .map_err(|e| LlamaError::Schema(e.to_string()))?;
    let mut matcher = Matcher::new(Ok(parser));
    let tokens: Vec<u32> = text.bytes().map(u32::from).collect();
    matcher
        .validate_tokens(&tokens)
        .map_err(|e| LlamaError::Schema(e.to_string()))
}

/// `schema` with llguidance told to write JSON with exactly `", "` between items and `": "`
/// after keys, and no other whitespace between tokens (unless the schema sets its own
/// `x-guidance`). By default the grammar allows any run of whitespace there, and a model whose
/// text hit a `maxLength` kept "writing" in blanks: the 1.5B spent eight replies in a row,
/// 384 tokens each, on spaces and newlines after a capped thought, until its run timed out.
/// The separators are the ones the agent's prompt shows, so nothing the model would write
/// is lost.
pub fn with_fixed_separators(schema: &serde_json::Value) -> serde_json::Value {
    let mut schema = schema.clone();
    if let Some(map) = schema.as_object_mut() {
        map.entry("x-guidance").or_insert_with(|| {
            serde_json::json!({
                "whitespace_flexible": false,
                "item_separator": ", ",
                "key_separator": ": ",
            })
        });
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An object with one required text field `name` held to `pattern`, capped at `cap`.
    fn one_text_field(name: &str, pattern: &str, cap: Option<u64>) -> serde_json::Value {
        let mut field = serde_json::json!({"type": "string", "minLength": 1, "pattern": pattern});
        if let Some(cap) = cap {
            field["maxLength"] = cap.into();
        }
        with_fixed_separators(&serde_json::json!({"type": "object",
            "properties": {name: field}, "required": [name],
            "additionalProperties": false}))
    }

    /// How many bytes of `text` the grammar of `schema` accepts, one byte per token.
    fn accepted(schema: &serde_json::Value, text: &str) -> usize {
        schema_accepted_len(schema, text).unwrap()
    }

    #[test]
    fn constrained_json_has_the_prompt_s_separators_and_no_free_whitespace() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "thought": {"type": "string", "maxLength": 8},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["thought", "tags"],
            "additionalProperties": false
        });
        let fixed = with_fixed_separators(&schema);
        let good = r#"{"thought": "a  b", "tags": ["x", "y"]}"#;
        assert_eq!(accepted(&fixed, good), good.len());
        // After a capped thought the old grammar let blanks run on; now the next byte after
        // the closing quote can only be the separator's.
        let runaway = "{\"thought\": \"12345678\"   \n\n   ";
        assert_eq!(
            accepted(&schema, runaway),
            runaway.len(),
            "the default allows it"
        );
        let stop = "{\"thought\": \"12345678\"".len();
        assert_eq!(accepted(&fixed, runaway), stop);
        // Compact or spread-out JSON is not what the prompt shows, and is refused.
        assert!(accepted(&fixed, r#"{"thought":"a""#) < 12);
        assert!(accepted(&fixed, "{ \"thought\"") < 2);
        // A schema's own x-guidance is kept.
        let own =
            serde_json::json!({"x-guidance": {"whitespace_flexible": true}, "type": "object"});
        assert_eq!(with_fixed_separators(&own), own);
    }

    /// The `stated-lines` lever holds a section's text to a JSON schema `pattern` that
    /// searches for a labelled number at a line start: the string cannot close before the line
    /// is there (JSON-escaped newline included). With no length cap, and with the 250 of
    /// `short-after-cut`; with the 32,000-character input cap llguidance runs out of fuel
    /// building the lexer, so the lever drops that cap from the field.
    #[test]
    fn a_string_pattern_is_searched_for_and_the_string_cannot_close_without_it() {
        for cap in [None, Some(250)] {
            let mut field = serde_json::json!({"type": "string", "minLength": 1,
                                               "pattern": "\\nTotal hours: [0-9]"});
            if let Some(cap) = cap {
                field["maxLength"] = cap.into();
            }
            pattern_holds(&with_fixed_separators(&serde_json::json!({
                "type": "object",
                "properties": {"Tasks": field},
                "required": ["Tasks"],
                "additionalProperties": false
            })));
        }
        let capped = serde_json::json!({"type": "object", "properties": {"Tasks":
            {"type": "string", "maxLength": 32000, "pattern": "\\nTotal hours: [0-9]"}}});
        let env = llguidance::toktrie::ApproximateTokEnv::single_byte_env();
        let factory = ParserFactory::new_simple(&env).unwrap();
        assert!(
            factory
                .create_parser(TopLevelGrammar::from_json_schema(capped))
                .is_err(),
            "if llguidance learns to build this, the lever may keep the cap"
        );
    }

    /// The `plain-bodies` lever holds a section's text to an anchored pattern (rein-engine's
    /// `agent::bodies`): no line starts with `#` or `\#`, and with a stated line the text must
    /// hold it. llguidance refuses the heading's `#` as it is written. The plain pattern builds
    /// under any cap; the one with a stated line only with none (the engine drops the cap, and
    /// after a cut keeps the 250 with the searched stated pattern alone).
    #[test]
    fn an_anchored_body_pattern_refuses_a_heading_line_where_it_starts() {
        // rein-engine's `plain_body_pattern`, as its test pins them.
        const PLAIN: &str = r"^[ \t]*(?:(?:[^#\\ \t\r\n]|\\[^#\r\n])[^\r\n]*)?(?:\r?\n[ \t]*(?:(?:[^#\\ \t\r\n]|\\[^#\r\n])[^\r\n]*)?)*$";
        const TOTAL: &str = r"^[ \t]*(?:(?:[^#\\ \t\r\n]|\\[^#\r\n])[^\r\n]*)?(?:\r?\n[ \t]*(?:(?:[^#\\ \t\r\n]|\\[^#\r\n])[^\r\n]*)?)*\r?\nTotal hours: [0-9][^\r\n]*(?:\r?\n[ \t]*(?:(?:[^#\\ \t\r\n]|\\[^#\r\n])[^\r\n]*)?)*$";
        let (plain, total) = (PLAIN, TOTAL);
        let schema = |pattern: &str, cap: Option<u64>| one_text_field("Tasks", pattern, cap);
        for cap in [None, Some(250), Some(32000)] {
            let plain = schema(plain, cap);
            let good = r####"{"Tasks": "- Renewal API: 16 hours\n\n1. C# and #tags"}"####;
            assert_eq!(accepted(&plain, good), good.len());
            let crlf = r####"{"Tasks": "\\*literal* and\r\n- b"}"####;
            assert_eq!(accepted(&plain, crlf), crlf.len());
            for bad in [
                r####"{"Tasks": "### Tasks"####,
                r####"{"Tasks": "- a\n\n### Risks"####,
                r####"{"Tasks": "- a\n  ## Risks"####,
                r####"{"Tasks": "- a\r### Risks"####,
            ] {
                assert_eq!(accepted(&plain, bad), bad.find('#').unwrap(), "{bad}");
            }
            let escaped = r####"{"Tasks": "- a\n\\### Tasks"####;
            // A backslash may start a line (`\*x`), but not before a `#`.
            assert_eq!(
                accepted(&plain, escaped),
                escaped.find('#').unwrap(),
                "`\\#`"
            );
            // Nor as a JSON escape.
            let unicode = r####"{"Tasks": "\u0023"####;
            assert!(
                accepted(&plain, unicode) < unicode.len(),
                "`\\u0023` is `#`"
            );
        }

        let uncapped = schema(total, None);
        let good = r####"{"Tasks": "- a\nTotal hours: 64\nMore."}"####;
        assert_eq!(accepted(&uncapped, good), good.len());
        let missing = r####"{"Tasks": "- a"}"####;
        assert_eq!(accepted(&uncapped, missing), missing.len() - 2);
        let heading = r####"{"Tasks": "- a\nTotal hours: 64\n### Risks"####;
        assert_eq!(accepted(&uncapped, heading), heading.find('#').unwrap());
        let env = llguidance::toktrie::ApproximateTokEnv::single_byte_env();
        let factory = ParserFactory::new_simple(&env).unwrap();
        assert!(
            factory
                .create_parser(TopLevelGrammar::from_json_schema(schema(total, Some(250))))
                .is_err(),
            "if llguidance learns to build this, the short schema may keep both rules"
        );
    }

    fn pattern_holds(schema: &serde_json::Value) {
        let good = r#"{"Tasks": "- Renewal API: 16 hours\nTotal hours: 64"}"#;
        assert_eq!(accepted(schema, good), good.len());
        let later = r#"{"Tasks": "- a\nTotal hours: 64 hours.\nMore."}"#;
        assert_eq!(accepted(schema, later), later.len());
        let glued = r#"{"Tasks": "- a keysTotal hours: 6"}"#;
        assert_eq!(
            accepted(schema, glued),
            glued.len() - 2,
            "a line of its own"
        );
        let missing = r#"{"Tasks": "- Renewal API: 16 hours"}"#;
        assert_eq!(
            accepted(schema, missing),
            missing.len() - 2,
            "the closing quote is refused"
        );
        let placeholder = r#"{"Tasks": "Total hours: N"}"#;
        assert!(accepted(schema, placeholder) < placeholder.len());
    }

    #[test]
    fn fixed_separators_hold_for_the_action_shape_nested_and_empty() {
        // The agent's action schema: one branch per tool, nested parameters, arrays of objects.
        let schema = serde_json::json!({"anyOf": [
            {"type": "object", "properties": {
                "thought": {"type": "string"}, "action": {"const": "read_file"},
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                    "required": ["path"], "additionalProperties": false}},
             "required": ["thought", "action", "parameters"], "additionalProperties": false},
            {"type": "object", "properties": {
                "thought": {"type": "string"}, "action": {"const": "write_sections"},
                "parameters": {"type": "object", "properties": {
                    "sections": {"type": "array", "items": {"type": "object",
                        "properties": {"heading": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
                        "required": ["heading", "tags"], "additionalProperties": false}}},
                    "required": ["sections"], "additionalProperties": false}},
             "required": ["thought", "action", "parameters"], "additionalProperties": false}
        ]});
        let fixed = with_fixed_separators(&schema);
        for good in [
            r#"{"thought": "Read the first input.", "action": "read_file", "parameters": {"path": "notes/a.md"}}"#,
            r#"{"thought": "x", "action": "write_sections", "parameters": {"sections": [{"heading": "Goal", "tags": []}, {"heading": "Risks", "tags": ["a", "b"]}]}}"#,
            r#"{"thought": "x", "action": "write_sections", "parameters": {"sections": []}}"#,
        ] {
            assert_eq!(accepted(&fixed, good), good.len(), "{good}");
        }
        // Free whitespace is refused at every level, not only at the top.
        let nested = r#"{"thought": "x", "action": "read_file", "parameters": {"path" :"#;
        assert!(accepted(&fixed, nested) < nested.len());
        let spread = "{\"thought\": \"x\", \"action\": \"write_sections\", \"parameters\": {\"sections\": [\n";
        assert!(accepted(&fixed, spread) < spread.len());
        let inner = r#"{"thought": "x", "action": "write_sections", "parameters": {"sections": [{"heading": "Goal",  "#;
        assert!(accepted(&fixed, inner) < inner.len());
        // Nor before the object or after it ends: a reply cannot run on in blanks there.
        let done = r#"{"thought": "x", "action": "read_file", "parameters": {"path": "a"}}"#;
        assert_eq!(accepted(&fixed, &format!("{done} \n\n")), done.len());
        assert_eq!(accepted(&fixed, &format!(" \n{done}")), 0);
    }

    #[test]
    fn the_token_the_loop_stops_on_is_not_decoded() {
        // max_tokens 128 reached: 128 sampled, the last one never decoded.
        assert_eq!(generation_decode_calls(FinishReason::Length, 128), 127);
        assert_eq!(generation_decode_calls(FinishReason::StopString, 5), 4);
        // The model ended after 40 tokens: all 40 decoded, the end token only sampled.
        assert_eq!(generation_decode_calls(FinishReason::Stop, 40), 40);
        assert_eq!(generation_decode_calls(FinishReason::Stop, 0), 0);
        assert_eq!(generation_decode_calls(FinishReason::Length, 0), 0);
    }
}
