//! The OpenAI-compatible HTTP backend (llama-server, Ollama, vLLM): streamed completions over
//! server-sent events, `response_format` JSON schema, and `choose` from top logprobs.
//!
//! Chat prompts go to `/v1/chat/completions`; raw prompts (base models) to `/v1/completions`.
//! Endpoints are pinned to loopback unless the caller opts in (`--allow-remote` or
//! `REIN_ALLOW_REMOTE=1`), and a non-loopback endpoint is announced before anything is sent
//! (a notice, which callers show and journal). Redirects are never followed, so a loopback
//! server cannot send a request elsewhere. `https://` goes over rustls with the Mozilla roots
//! (plus the PEM file `REIN_CA_FILE` names); an API key comes only from `REIN_API_KEY_<HOST>`
//! (see [`api_key_env_name`]) and is never sent in clear text to another machine.
//!
//! A request with a JSON schema carries it as `response_format: {type: json_schema}`. The
//! first such request finds out whether the endpoint takes it: a 400 or 422 answer makes the
//! model send it again without, read replies with repair from then on, and say so in a notice.
//! An endpoint that takes the field is still held to it: a reply it finished that is not JSON
//! marks it as ignoring the schema (a notice again), since accepting a field proves nothing.
//!
//! The repeat penalty is never sent above 1.0 (see `complete`): a server applies it to the
//! prompt as well, which is a different quantity from the embedded model's.

mod choose;
mod client;
mod endpoint;
mod stream;

use std::io::BufReader;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Map, Value};

pub use choose::{score_labels, ChooseProblem, LabelScores, MAX_REQUESTS};
pub use client::{ServedModel, CA_FILE_ENV};
pub use endpoint::{
    allow_remote_from_env, api_key_env_name, check_endpoint, is_loopback, ApiKey, Endpoint,
    ALLOW_REMOTE_ENV, API_KEY_ENV_PREFIX,
};

use crate::error::{ModelError, Result};
use crate::{
    check_label_mass, ChooseReply, ChooseRequest, Completion, CompletionRequest, DecisionSource,
    FinishReason, LabelProbability, Model, ModelIdentity, Prompt, Role,
};
use client::Client;
use stream::{SseReader, StopScanner};

/// How many top tokens `choose` asks for.
pub const TOP_LOGPROBS: u32 = 20;

/// Default connect timeout.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Default read timeout (between bytes of a reply, not for the whole reply).
pub const READ_TIMEOUT: Duration = Duration::from_secs(300);

const NO_LOGPROBS: &str = "this endpoint does not return logprobs, so choose is not supported by it; use an embedded model for decisions";

/// Settings of an OpenAI-compatible endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiOptions {
    /// Base URL, with or without `/v1`.
    pub url: String,
    /// Model id sent in each request.
    pub model: String,
    /// Allow a host other than loopback.
    pub allow_remote: bool,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    /// Sent as `Authorization: Bearer KEY`; from `REIN_API_KEY_<HOST>` (see [`api_key_env_name`]).
    pub api_key: Option<ApiKey>,
    /// Extra trusted root certificates (PEM), beside the Mozilla roots; from `REIN_CA_FILE`.
    pub extra_roots_pem: Option<Vec<u8>>,
}

impl OpenAiOptions {
    /// The options as given, with no key and no extra roots.
    pub fn new(url: impl Into<String>, model: impl Into<String>, allow_remote: bool) -> Self {
        OpenAiOptions {
            url: url.into(),
            model: model.into(),
            allow_remote,
            connect_timeout: CONNECT_TIMEOUT,
            read_timeout: READ_TIMEOUT,
            api_key: None,
            extra_roots_pem: None,
        }
    }

    /// [`OpenAiOptions::new`] plus what the environment gives: the API key in
    /// `REIN_API_KEY_<HOST>` and the certificates in the file `REIN_CA_FILE` names.
    pub fn from_env(
        url: impl Into<String>,
        model: impl Into<String>,
        allow_remote: bool,
    ) -> Result<Self> {
        let mut opts = OpenAiOptions::new(url, model, allow_remote);
        let endpoint = check_endpoint(&opts.url, opts.allow_remote)?;
        opts.api_key = ApiKey::from_env(&endpoint.host);
        if let Some(file) = std::env::var_os(CA_FILE_ENV).filter(|v| !v.is_empty()) {
            let pem = std::fs::read(&file).map_err(|e| {
                ModelError::BadRequest(format!(
                    "{CA_FILE_ENV}={}: cannot read it ({e}); name a PEM file of CA certificates or unset it",
                    std::path::Path::new(&file).display()
                ))
            })?;
            opts.extra_roots_pem = Some(pem);
        }
        Ok(opts)
    }
}

/// Whether an endpoint constrains replies by a JSON schema, as found on the first request that
/// carried one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StructuredOutput {
    /// No request with a schema was made yet.
    Unknown,
    /// The endpoint took `response_format: {type: json_schema}` (llama-server, vLLM, Ollama's
    /// `/v1`); the schema is sent with every request that has one.
    JsonSchema,
    /// The endpoint refused it (HTTP 400 or 422): replies are read with repair.
    Refused,
    /// The endpoint took the field but did not follow it: a reply it finished on its own (not
    /// cut by the token cap or a stop string) was not JSON. The schema is no longer sent and
    /// replies are read with repair.
    Ignored,
}

/// Lists what an endpoint serves (`GET /v1/models`), for `rein models list --endpoint URL`.
pub fn list_models(opts: &OpenAiOptions) -> Result<Vec<ServedModel>> {
    let client = Client::new(opts)?;
    client.models()?.ok_or_else(|| {
        ModelError::Endpoint(format!(
            "{} does not list its models (no JSON list at GET /v1/models); is it an OpenAI-compatible server?",
            client.endpoint.url("models")
        ))
    })
}

/// The warning owed before workspace content goes to `endpoint`: `None` on loopback.
pub fn remote_warning(endpoint: &Endpoint) -> Option<String> {
    (!endpoint.loopback).then(|| {
        format!(
            "workspace content (the task, file contents, tool results) will be sent to {}, which is not this machine{}",
            endpoint.host,
            if endpoint.https { "" } else { ", in clear text (plain http)" }
        )
    })
}

/// A model behind an OpenAI-compatible endpoint.
pub struct OpenAiModel {
    client: Client,
    model: String,
    identity: ModelIdentity,
    structured: StructuredOutput,
    notices: Vec<String>,
    /// Whether the notice that the repeat penalty is not sent was given (once per model).
    penalty_noticed: bool,
}

impl std::fmt::Debug for OpenAiModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiModel")
            .field("endpoint", &self.client.endpoint)
            .field("model", &self.model)
            .field("identity", &self.identity)
            .field("structured", &self.structured)
            .finish()
    }
}

impl OpenAiModel {
    /// [`OpenAiOptions::from_env`] (the key and extra roots from the environment), then
    /// [`OpenAiModel::with_options`].
    pub fn new(url: &str, model: &str, allow_remote: bool) -> Result<OpenAiModel> {
        OpenAiModel::with_options(OpenAiOptions::from_env(url, model, allow_remote)?)
    }

    /// Checks the URL (loopback unless `allow_remote`), then asks `GET /v1/models` who serves.
    /// A non-loopback endpoint queues its [`remote_warning`] as the first notice.
    pub fn with_options(opts: OpenAiOptions) -> Result<OpenAiModel> {
        if opts.model.trim().is_empty() {
            return Err(ModelError::BadRequest(
                "the endpoint's model name is empty".into(),
            ));
        }
        let client = Client::new(&opts)?;
        let notices = remote_warning(&client.endpoint).into_iter().collect();
        let mut model = OpenAiModel {
            identity: ModelIdentity {
                spec: format!("openai:{}#{}", opts.url, opts.model),
                name: opts.model.clone(),
                architecture: "remote".into(),
                sha256: None,
                context_tokens: 0,
                ..ModelIdentity::default()
            },
            client,
            model: opts.model,
            structured: StructuredOutput::Unknown,
            notices,
            penalty_noticed: false,
        };
        model.identity.name = model.served_model_name()?;
        Ok(model)
    }

    /// The endpoint this model talks to.
    pub fn endpoint(&self) -> &Endpoint {
        &self.client.endpoint
    }

    /// What the endpoint did with the JSON schema so far.
    pub fn structured_output(&self) -> StructuredOutput {
        self.structured
    }

    /// `GET /v1/models`: the requested id when listed, the only id when the server lists one
    /// (llama-server serves one model whatever is asked), else the requested name. A server that
    /// cannot be reached is an error; one without `/v1/models` is not.
    fn served_model_name(&self) -> Result<String> {
        let Some(models) = self.client.models()? else {
            return Ok(self.model.clone());
        };
        Ok(match models.as_slice() {
            [only] => only.id.clone(),
            _ => self.model.clone(),
        })
    }

    fn post(&self, path: &str, body: &Value) -> Result<ureq::Response> {
        self.client.post(path, body)
    }

    /// Posts a completion request; on the first request with a schema, a 400 or 422 answer is
    /// taken as a refusal of `response_format`: the request is sent again without it and the
    /// endpoint is marked [`StructuredOutput::Refused`] (with a notice). If the request without
    /// the schema fails too, the schema was not the problem: that error is returned and nothing
    /// is recorded.
    fn post_completion(
        &mut self,
        path: &str,
        mut body: Map<String, Value>,
    ) -> Result<ureq::Response> {
        let url = self.client.endpoint.url(path);
        let with_schema = body.contains_key("response_format");
        if !with_schema || self.structured != StructuredOutput::Unknown {
            return self.post(path, &Value::Object(body));
        }
        match self
            .client
            .post_raw(path, &Value::Object(body.clone()))
            .map_err(|e| *e)
        {
            Ok(r) => {
                self.structured = StructuredOutput::JsonSchema;
                self.notices.push(format!(
                    "{} accepted the action schema as response_format json_schema: replies are expected to follow it (a finished reply that is not JSON would show that the server ignores it)",
                    self.client.endpoint.host
                ));
                Ok(r)
            }
            Err(ureq::Error::Status(code @ (400 | 422), response)) => {
                let said = server_message(&response.into_string().unwrap_or_default());
                body.remove("response_format");
                let retry = self.post(path, &Value::Object(body))?;
                self.structured = StructuredOutput::Refused;
                self.notices.push(format!(
                    "{} refused response_format json_schema (HTTP {code}: {said}); its replies are read with repair instead of being constrained by the schema",
                    self.client.endpoint.host
                ));
                Ok(retry)
            }
            Err(e) => Err(self.client.error(&url, e)),
        }
    }

    /// An endpoint that took the schema is held to it: a reply it finished on its own that is
    /// not JSON shows that it ignores the field (a server that accepts unknown fields and drops
    /// them, like Ollama's `/v1/completions`), so the endpoint is marked
    /// [`StructuredOutput::Ignored`] and a notice says so instead of a claim that never held.
    fn check_followed_schema(&mut self, text: &str) {
        if self.structured != StructuredOutput::JsonSchema
            || serde_json::from_str::<Value>(text.trim()).is_ok()
        {
            return;
        }
        self.structured = StructuredOutput::Ignored;
        self.notices.push(format!(
            "{} took response_format json_schema but did not follow it (a reply it finished, {} characters, was not JSON); the schema is no longer sent and replies are read with repair",
            self.client.endpoint.host,
            text.chars().count()
        ));
    }

    /// The request body shared by `complete` and `choose`, and the path it goes to.
    fn base_body(&self, prompt: &Prompt) -> (&'static str, Map<String, Value>) {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        match prompt {
            Prompt::Chat { messages } => {
                let messages: Vec<Value> = messages
                    .iter()
                    .map(|m| json!({"role": role_name(m.role), "content": m.content}))
                    .collect();
                body.insert("messages".into(), Value::Array(messages));
                ("chat/completions", body)
            }
            Prompt::Raw { text } => {
                body.insert("prompt".into(), json!(text));
                ("completions", body)
            }
        }
    }
}

/// A choose request's body for a reply that starts with `start`: the start as a final
/// assistant message for chat (llama-server continues it; added to one the prompt ends with),
/// appended to a raw prompt.
fn continued(body: &Map<String, Value>, start: &str) -> Map<String, Value> {
    let mut body = body.clone();
    if start.is_empty() {
        return body;
    }
    if let Some(Value::Array(messages)) = body.get_mut("messages") {
        // A prompt that already ends with the assistant's words is continued from them.
        match messages.last_mut() {
            Some(last) if last["role"] == "assistant" => {
                let before = last["content"].as_str().unwrap_or_default();
                last["content"] = json!(format!("{before}{start}"));
            }
            _ => messages.push(json!({"role": "assistant", "content": start})),
        }
    } else if let Some(Value::String(prompt)) = body.get_mut("prompt") {
        prompt.push_str(start);
    }
    body
}

impl From<ChooseProblem> for ModelError {
    fn from(problem: ChooseProblem) -> ModelError {
        match problem {
            ChooseProblem::Labels(why) => ModelError::BadRequest(why),
            ChooseProblem::NotContinued => ModelError::Unsupported(problem.to_string()),
            ChooseProblem::NotADistribution(_) | ChooseProblem::Unsettled { .. } => {
                ModelError::Endpoint(problem.to_string())
            }
        }
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
    )
}

/// The server's own error message from an error body (`{"error": {"message": ...}}` or
/// `{"error": "..."}`), else the start of the body, on one line.
fn server_message(body: &str) -> String {
    let from_json = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        let e = v.get("error")?;
        e.get("message")
            .and_then(Value::as_str)
            .or_else(|| e.as_str())
            .map(str::to_string)
    });
    let text = from_json.unwrap_or_else(|| body.trim().chars().take(300).collect());
    if text.is_empty() {
        "(empty body)".into()
    } else {
        text.replace(['\n', '\r'], " ")
    }
}

/// What one streamed chunk says.
#[derive(Debug, Default)]
struct Chunk {
    text: String,
    finish: Option<String>,
}

fn parse_chunk(v: &Value) -> Chunk {
    let choice = v.pointer("/choices/0");
    let text = choice
        .and_then(|c| c.pointer("/delta/content").or_else(|| c.get("text")))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let finish = choice
        .and_then(|c| c.get("finish_reason"))
        .and_then(Value::as_str)
        .map(str::to_string);
    Chunk { text, finish }
}

fn as_u32(v: Option<&Value>) -> Option<u32> {
    v.and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
}

impl Model for OpenAiModel {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    fn complete(
        &mut self,
        request: &CompletionRequest,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<Completion> {
        let started = Instant::now();
        let (path, mut body) = self.base_body(&request.prompt);
        let s = &request.sampling;
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
        body.insert("max_tokens".into(), json!(request.max_tokens));
        body.insert("temperature".into(), json!(s.temperature.max(0.0)));
        body.insert("top_p".into(), json!(s.top_p));
        body.insert("top_k".into(), json!(s.top_k));
        // An embedded model's repeat penalty looks at the reply's own tokens; llama-server feeds
        // the whole prompt into its sampler, so the same penalty there also pushes the model
        // away from the paths and numbers it just read (on desk_task, greedy, it sent a 0.5B
        // re-reading one file until the no-progress cap). Endpoints get no penalty.
        body.insert("repeat_penalty".into(), json!(1.0));
        if s.repeat_penalty != 1.0 && !self.penalty_noticed {
            self.penalty_noticed = true;
            self.notices.push(format!(
                "{}: the repeat penalty ({}) is not sent; a server applies it over the prompt as well as the reply (llama-server does), which penalises copying what was just read, so endpoints decode with repeat_penalty 1.0 (as an embedded model with --lever repeat-penalty=off)",
                self.client.endpoint.host, s.repeat_penalty
            ));
        }
        body.insert("seed".into(), json!(request.seed));
        if !request.stop.is_empty() {
            body.insert("stop".into(), json!(request.stop));
        }
        let send_schema = matches!(
            self.structured,
            StructuredOutput::Unknown | StructuredOutput::JsonSchema
        );
        if let Some(schema) = request.json_schema.as_ref().filter(|_| send_schema) {
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": "action", "schema": schema, "strict": true}}),
            );
        }
        let sent_schema = body.contains_key("response_format");
        let response = self.post_completion(path, body)?;
        let url = self.client.endpoint.url(path);
        let mut events = SseReader::new(BufReader::new(response.into_reader()));
        let mut stops = StopScanner::new(&request.stop);
        let mut text = String::new();
        let mut finish: Option<FinishReason> = None;
        let mut ended = false;
        let mut first_token_ms = None;
        let mut completion = Completion {
            text: String::new(),
            finish: FinishReason::Stop,
            prompt_tokens: 0,
            cached_tokens: 0,
            completion_tokens: 0,
            prompt_ms: 0.0,
            generation_ms: 0.0,
        };
        loop {
            let event = match events.next_event() {
                Ok(Some(e)) => e,
                Ok(None) => break,
                Err(e) if is_timeout(&e) => {
                    return Err(ModelError::Timeout {
                        seconds: self.client.read_timeout.as_secs(),
                    })
                }
                Err(e) => {
                    return Err(ModelError::Endpoint(format!(
                        "reading the stream from {url} failed: {e}"
                    )))
                }
            };
            let data = event.trim();
            if data == "[DONE]" {
                ended = true;
                break;
            }
            let value: Value = serde_json::from_str(data).map_err(|e| {
                ModelError::Endpoint(format!(
                    "{url} sent an event that is not JSON ({e}): {}",
                    server_message(data)
                ))
            })?;
            if value.get("error").is_some() {
                return Err(ModelError::Endpoint(format!(
                    "{url} reported: {}",
                    server_message(data)
                )));
            }
            if let Some(usage) = value.get("usage").filter(|u| u.is_object()) {
                completion.prompt_tokens = as_u32(usage.get("prompt_tokens")).unwrap_or(0);
                completion.completion_tokens = as_u32(usage.get("completion_tokens")).unwrap_or(0);
                if let Some(c) = as_u32(usage.pointer("/prompt_tokens_details/cached_tokens")) {
                    completion.cached_tokens = c;
                }
            }
            if let Some(t) = value.get("timings") {
                // llama-server reports its own timings.
                completion.prompt_ms = t.get("prompt_ms").and_then(Value::as_f64).unwrap_or(0.0);
                completion.generation_ms =
                    t.get("predicted_ms").and_then(Value::as_f64).unwrap_or(0.0);
                if let Some(c) = as_u32(t.get("cache_n")) {
                    completion.cached_tokens = c;
                }
            }
            let chunk = parse_chunk(&value);
            if !chunk.text.is_empty() {
                first_token_ms.get_or_insert_with(|| started.elapsed().as_secs_f64() * 1000.0);
                let (out, hit) = stops.push(&chunk.text);
                if !out.is_empty() {
                    on_text(&out);
                    text.push_str(&out);
                }
                if hit {
                    finish = Some(FinishReason::StopString);
                    ended = true;
                    break;
                }
            }
            if let Some(reason) = chunk.finish {
                finish = Some(if reason == "length" {
                    FinishReason::Length
                } else {
                    FinishReason::Stop
                });
            }
        }
        if finish != Some(FinishReason::StopString) {
            let rest = stops.finish();
            if !rest.is_empty() {
                on_text(&rest);
                text.push_str(&rest);
            }
        }
        let finish = match (finish, ended) {
            (Some(f), _) => f,
            (None, true) => FinishReason::Stop,
            (None, false) => {
                return Err(ModelError::Endpoint(format!(
                    "{url} closed the stream before the reply finished; check the server's log"
                )))
            }
        };
        if completion.prompt_ms == 0.0 && completion.generation_ms == 0.0 {
            let total = started.elapsed().as_secs_f64() * 1000.0;
            let first = first_token_ms.unwrap_or(total);
            completion.prompt_ms = first;
            completion.generation_ms = total - first;
        }
        if sent_schema && finish == FinishReason::Stop {
            self.check_followed_schema(&text);
        }
        completion.text = text;
        completion.finish = finish;
        Ok(completion)
    }

    /// Non-streamed requests for one token with the top 20 logprobs each, the first after the
    /// prompt and the next after each reply start that spells or begins a label; see
    /// [`score_labels`] for how tokens map to labels. An endpoint that returns no logprobs is
    /// `Unsupported`, never a silent fallback.
    fn choose(&mut self, request: &ChooseRequest) -> Result<ChooseReply> {
        let started = Instant::now();
        if request.labels.is_empty() {
            return Err(ModelError::BadRequest(
                "choose needs at least one label".into(),
            ));
        }
        let (path, mut body) = self.base_body(&request.prompt);
        body.insert("stream".into(), json!(false));
        body.insert("max_tokens".into(), json!(1));
        body.insert("temperature".into(), json!(0.0));
        body.insert("seed".into(), json!(0));
        if path == "completions" {
            body.insert("logprobs".into(), json!(TOP_LOGPROBS));
        } else {
            body.insert("logprobs".into(), json!(true));
            body.insert("top_logprobs".into(), json!(TOP_LOGPROBS));
        }
        let url = self.client.endpoint.url(path);
        let read_timeout = self.client.read_timeout.as_secs();
        let (mut prompt_tokens, mut cached_tokens) = (0, 0);
        let scores = score_labels(&request.labels, |start| {
            let response = self.post(path, &Value::Object(continued(&body, start)))?;
            let value: Value = response.into_json().map_err(|e| {
                if is_timeout(&e) {
                    ModelError::Timeout {
                        seconds: read_timeout,
                    }
                } else {
                    ModelError::Endpoint(format!("{url} sent a reply that is not JSON: {e}"))
                }
            })?;
            if start.is_empty() {
                prompt_tokens = as_u32(value.pointer("/usage/prompt_tokens")).unwrap_or(0);
                cached_tokens = as_u32(value.pointer("/usage/prompt_tokens_details/cached_tokens"))
                    .unwrap_or(0);
            }
            choose::top_logprobs(&value).ok_or_else(|| ModelError::Unsupported(NO_LOGPROBS.into()))
        })?;
        check_label_mass(ChooseReply {
            probabilities: request
                .labels
                .iter()
                .zip(scores.probabilities)
                .map(|(label, probability)| LabelProbability {
                    label: label.clone(),
                    probability,
                })
                .collect(),
            source: DecisionSource::Logprobs,
            label_mass: Some(scores.mass),
            prompt_tokens,
            cached_tokens,
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            prompt_ms: None,
            scored_spellings: None,
            cpu_ms: None,
        })
    }
}
