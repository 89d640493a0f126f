//! Test support for Rein: a fake OpenAI-compatible server on 127.0.0.1, over plain http or
//! over TLS with a certificate made for the test (see [`FakeOpenAi::start_tls`]).
//!
//! The server answers `GET /v1/models` from a configurable list and every `POST` with the next
//! scripted [`FakeReply`] (streamed SSE chunks, logprobs, an HTTP error, or any raw response),
//! recording each request so a test can check what was sent (for example that a
//! `response_format` JSON schema was included). It binds to loopback only, serves on plain
//! threads, and stops when dropped.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

/// One request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Every header as received (name lower-cased).
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (`Value::Null` when empty or not JSON).
    pub body: Value,
    pub raw_body: String,
}

impl RecordedRequest {
    /// The value of header `name` (any case), if it was sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What the server answers to the next `POST`.
#[derive(Debug, Clone, PartialEq)]
pub enum FakeReply {
    /// A streamed completion: one SSE chunk per delta (chat or completions shape, matching the
    /// request path), then a chunk with `finish_reason` and usage, then `data: [DONE]`.
    /// The bytes are written in small pieces that do not line up with event boundaries.
    Stream { deltas: Vec<String>, finish: String },
    /// A stream that is cut off after these deltas (no finish, no `[DONE]`).
    BrokenStream { deltas: Vec<String> },
    /// A non-streamed reply whose first token has these top logprobs (token, logprob).
    Logprobs { top: Vec<(String, f64)> },
    /// A non-streamed reply without any logprobs.
    NoLogprobs { text: String },
    /// An HTTP error with an OpenAI-style error body.
    Error { status: u16, message: String },
    /// Anything else: status, content type and body as given.
    Raw {
        status: u16,
        content_type: String,
        body: String,
    },
}

impl FakeReply {
    pub fn stream(deltas: &[&str]) -> Self {
        FakeReply::Stream {
            deltas: deltas.iter().map(|s| s.to_string()).collect(),
            finish: "stop".into(),
        }
    }
    pub fn logprobs(top: &[(&str, f64)]) -> Self {
        FakeReply::Logprobs {
            top: top.iter().map(|(t, p)| (t.to_string(), *p)).collect(),
        }
    }
    pub fn error(status: u16, message: &str) -> Self {
        FakeReply::Error {
            status,
            message: message.into(),
        }
    }
}

#[derive(Default)]
struct State {
    replies: VecDeque<FakeReply>,
    requests: Vec<RecordedRequest>,
    models: Option<Vec<String>>,
    /// When set, a request without `Authorization: Bearer <key>` gets 401.
    required_key: Option<String>,
    /// When set, a `POST` with a `response_format` gets this HTTP status (a server that refuses
    /// JSON schemas); the scripted reply is kept for the next request.
    refuse_response_format: Option<u16>,
    /// When set, a non-streamed request for logprobs is answered from this map: the top
    /// tokens (token, logprob) after the reply's start (the content of a final assistant
    /// message, or the whole raw prompt); a start it lacks gets no top tokens' worth of mass
    /// (one `"\u{1}"` token, which spells no label). The queued replies wait.
    logprob_tree: Option<HashMap<String, Vec<(String, f64)>>>,
}

/// A fake OpenAI-compatible server on 127.0.0.1 (an ephemeral port).
pub struct FakeOpenAi {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// The test-only root certificate (PEM) that signed the server's certificate, for TLS.
    root_pem: Option<String>,
}

/// A TLS server configuration for 127.0.0.1 and localhost, and the PEM of the test-only root
/// that signed its certificate (both made now, with fresh keys).
fn test_tls() -> std::io::Result<(Arc<rustls::ServerConfig>, String)> {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let err = std::io::Error::other;
    let ca_key = KeyPair::generate().map_err(err)?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "rein test-only root");
    let ca = ca.self_signed(&ca_key).map_err(err)?;
    let leaf_key = KeyPair::generate().map_err(err)?;
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .map_err(err)?
        .signed_by(&leaf_key, &ca, &ca_key)
        .map_err(err)?;
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(std::io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone()], key)
        .map_err(std::io::Error::other)?;
    Ok((Arc::new(config), ca.pem()))
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

impl FakeOpenAi {
    /// Starts the server. `GET /v1/models` lists `fake-model` until [`FakeOpenAi::set_models`].
    pub fn start() -> std::io::Result<FakeOpenAi> {
        FakeOpenAi::launch(None)
    }

    /// Starts the server over TLS, with a certificate for 127.0.0.1 signed by a root made for
    /// this server alone ([`FakeOpenAi::root_pem`]); [`FakeOpenAi::url`] is then `https://`.
    pub fn start_tls() -> std::io::Result<FakeOpenAi> {
        let (config, root) = test_tls()?;
        let mut server = FakeOpenAi::launch(Some(config))?;
        server.root_pem = Some(root);
        Ok(server)
    }

    fn launch(tls: Option<Arc<rustls::ServerConfig>>) -> std::io::Result<FakeOpenAi> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State {
            models: Some(vec!["fake-model".into()]),
            ..State::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (state.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if sp.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let st = st.clone();
                let tls = tls.clone();
                std::thread::spawn(move || {
                    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
                    match tls {
                        None => {
                            let Ok(read) = conn.try_clone() else { return };
                            let _ = serve(BufReader::new(read), conn.try_clone(), &st);
                            let _ = conn.shutdown(Shutdown::Both);
                        }
                        Some(config) => {
                            let Ok(session) = rustls::ServerConnection::new(config) else {
                                return;
                            };
                            let tcp = conn;
                            let stream = rustls::StreamOwned::new(session, tcp);
                            let shared = Arc::new(Mutex::new(stream));
                            let _ = serve(
                                BufReader::new(SharedStream(shared.clone())),
                                Ok(SharedStream(shared.clone())),
                                &st,
                            );
                            let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
                            s.conn.send_close_notify();
                            let _ = s.flush();
                            let _ = s.sock.shutdown(Shutdown::Both);
                        }
                    }
                });
            }
        });
        Ok(FakeOpenAi {
            addr,
            state,
            stop,
            thread: Some(thread),
            root_pem: None,
        })
    }

    /// The PEM of the test-only root that signed a TLS server's certificate (`None` for
    /// plain http).
    pub fn root_pem(&self) -> Option<&str> {
        self.root_pem.as_deref()
    }

    /// Makes every request without `Authorization: Bearer <key>` fail with 401.
    pub fn require_key(&self, key: &str) {
        lock(&self.state).required_key = Some(key.to_string());
    }

    /// Makes every `POST` carrying a `response_format` fail with `status` (as servers that do
    /// not take JSON schemas answer); the scripted replies wait for the next requests.
    pub fn refuse_response_format(&self, status: u16) {
        lock(&self.state).refuse_response_format = Some(status);
    }

    /// Answers `choose` requests from a model given as the top tokens (token, logprob) after
    /// each reply start; see `State::logprob_tree`.
    pub fn set_logprob_tree(&self, steps: &[(&str, &[(&str, f64)])]) {
        let tree = steps
            .iter()
            .map(|(start, tops)| {
                let tops = tops.iter().map(|(t, l)| (t.to_string(), *l)).collect();
                (start.to_string(), tops)
            })
            .collect();
        lock(&self.state).logprob_tree = Some(tree);
    }

    /// `http://127.0.0.1:PORT`, or `https://` for a TLS server (no `/v1`).
    pub fn url(&self) -> String {
        let scheme = if self.root_pem.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queues the reply to the next `POST`.
    pub fn push(&self, reply: FakeReply) {
        lock(&self.state).replies.push_back(reply);
    }

    /// The ids `GET /v1/models` lists; `None` makes it answer 404.
    pub fn set_models(&self, models: Option<Vec<String>>) {
        lock(&self.state).models = models;
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state).requests.clone()
    }

    /// The `response_format` of every `POST` that carried one (how a test sees that a JSON
    /// schema was sent and acknowledged).
    pub fn response_formats(&self) -> Vec<Value> {
        self.posts()
            .into_iter()
            .filter_map(|r| r.body.get("response_format").cloned())
            .collect()
    }

    /// The `POST` requests received so far.
    pub fn posts(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == "POST")
            .collect()
    }
}

impl Drop for FakeOpenAi {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A TLS stream shared by the reading and the writing half of one connection.
struct SharedStream(Arc<Mutex<rustls::StreamOwned<rustls::ServerConnection, TcpStream>>>);

impl Read for SharedStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).read(buf)
    }
}

impl Write for SharedStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).flush()
    }
}

fn serve<R: Read, W: Write>(
    mut reader: BufReader<R>,
    out: std::io::Result<W>,
    state: &Mutex<State>,
) -> std::io::Result<()> {
    let mut out = out?;
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let mut content_length = 0usize;
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                content_length = v.trim().parse().unwrap_or(0);
            }
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let mut body = vec![0u8; content_length];
    reader.read_exact(&mut body)?;
    let raw_body = String::from_utf8_lossy(&body).into_owned();
    let json_body: Value = serde_json::from_str(&raw_body).unwrap_or(Value::Null);
    let request = RecordedRequest {
        method: method.clone(),
        path: path.clone(),
        headers,
        body: json_body,
        raw_body,
    };
    if method.is_empty() {
        return Ok(());
    }
    let reply = {
        let mut st = lock(state);
        st.requests.push(request.clone());
        let authorised = st.required_key.as_ref().is_none_or(|key| {
            request.header("authorization") == Some(format!("Bearer {key}").as_str())
        });
        if !authorised {
            Some(FakeReply::error(401, "Invalid API key"))
        } else if method == "GET" {
            if path.trim_end_matches('/') == "/v1/models" {
                match &st.models {
                    Some(ids) => Some(FakeReply::Raw {
                        status: 200,
                        content_type: "application/json".into(),
                        body: json!({"object": "list", "data": ids.iter().map(|id| json!({"id": id, "object": "model", "owned_by": "fake"})).collect::<Vec<_>>()}).to_string(),
                    }),
                    None => Some(FakeReply::error(404, "File Not Found")),
                }
            } else {
                Some(FakeReply::error(404, "File Not Found"))
            }
        } else if let (Some(status), Some(_)) = (
            st.refuse_response_format,
            request.body.get("response_format"),
        ) {
            Some(FakeReply::error(
                status,
                "response_format type json_schema is not supported",
            ))
        } else if let (Some(tree), true) = (
            st.logprob_tree.as_ref(),
            request.body.get("logprobs").is_some() && request.body["stream"] != json!(true),
        ) {
            let top = tree
                .get(&reply_start(&request.body))
                .cloned()
                .unwrap_or_else(|| vec![("\u{1}".to_string(), 0.0)]);
            Some(FakeReply::Logprobs { top })
        } else {
            st.replies.pop_front()
        }
    };
    let reply = reply
        .unwrap_or_else(|| FakeReply::error(500, "the fake server has no scripted reply left"));
    respond(&mut out, &request, reply)?;
    out.flush()
}

/// The start of the reply a request asks to continue: a final assistant message's content
/// (chat), or the raw prompt.
fn reply_start(body: &Value) -> String {
    if let Some(prompt) = body.get("prompt").and_then(Value::as_str) {
        return prompt.to_string();
    }
    body.get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .filter(|m| m["role"] == "assistant")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn status_text(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        422 => "Unprocessable Entity",
        404 => "Not Found",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn write_full(
    out: &mut impl Write,
    status: u16,
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        status_text(status),
        body.len()
    )?;
    out.flush()
}

fn chunk_json(chat: bool, delta: Option<&str>, finish: Option<&str>) -> Value {
    let choice = if chat {
        json!({"index": 0, "delta": delta.map_or(json!({}), |d| json!({"content": d})), "finish_reason": finish})
    } else {
        json!({"index": 0, "text": delta.unwrap_or(""), "finish_reason": finish})
    };
    json!({"id": "fake", "object": if chat { "chat.completion.chunk" } else { "text_completion" }, "model": "fake-model", "choices": [choice]})
}

/// Writes an SSE body in pieces of 7 bytes, so events are split across reads.
fn write_sse(out: &mut impl Write, events: &[String], done: bool) -> std::io::Result<()> {
    write!(out, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n")?;
    out.flush()?;
    let mut body = String::new();
    for e in events {
        body.push_str("data: ");
        body.push_str(e);
        body.push_str("\n\n");
    }
    if done {
        body.push_str("data: [DONE]\n\n");
    }
    for piece in body.as_bytes().chunks(7) {
        out.write_all(piece)?;
        out.flush()?;
    }
    Ok(())
}

fn respond(
    out: &mut impl Write,
    request: &RecordedRequest,
    reply: FakeReply,
) -> std::io::Result<()> {
    let chat = request.path.contains("chat/completions");
    match reply {
        FakeReply::Stream { deltas, finish } => {
            let mut events: Vec<String> = deltas
                .iter()
                .map(|d| chunk_json(chat, Some(d), None).to_string())
                .collect();
            events.push(chunk_json(chat, None, Some(&finish)).to_string());
            let mut usage = chunk_json(chat, None, None);
            usage["choices"] = json!([]);
            usage["usage"] = json!({"prompt_tokens": 11, "completion_tokens": deltas.len(), "total_tokens": 11 + deltas.len()});
            events.push(usage.to_string());
            write_sse(out, &events, true)
        }
        FakeReply::BrokenStream { deltas } => {
            let events: Vec<String> = deltas
                .iter()
                .map(|d| chunk_json(chat, Some(d), None).to_string())
                .collect();
            write_sse(out, &events, false)
        }
        FakeReply::Logprobs { top } => {
            let first = top.first().map(|(t, _)| t.clone()).unwrap_or_default();
            let body = if chat {
                let tops: Vec<Value> = top
                    .iter()
                    .map(|(t, l)| json!({"token": t, "logprob": l}))
                    .collect();
                json!({"id": "fake", "object": "chat.completion", "choices": [{"index": 0,
                    "message": {"role": "assistant", "content": first},
                    "logprobs": {"content": [{"token": first, "logprob": top.first().map_or(0.0, |x| x.1), "top_logprobs": tops}]},
                    "finish_reason": "length"}], "usage": {"prompt_tokens": 9, "completion_tokens": 1}})
            } else {
                let map: serde_json::Map<String, Value> =
                    top.iter().map(|(t, l)| (t.clone(), json!(l))).collect();
                json!({"id": "fake", "object": "text_completion", "choices": [{"index": 0, "text": first,
                    "logprobs": {"tokens": [first], "top_logprobs": [map]}, "finish_reason": "length"}]})
            };
            write_full(out, 200, "application/json", &body.to_string())
        }
        FakeReply::NoLogprobs { text } => {
            let body = json!({"id": "fake", "object": "chat.completion", "choices": [{"index": 0,
                "message": {"role": "assistant", "content": text}, "finish_reason": "length"}]});
            write_full(out, 200, "application/json", &body.to_string())
        }
        FakeReply::Error { status, message } => {
            let body =
                json!({"error": {"code": status, "message": message, "type": "server_error"}});
            write_full(out, status, "application/json", &body.to_string())
        }
        FakeReply::Raw {
            status,
            content_type,
            body,
        } => write_full(out, status, &content_type, &body),
    }
}
