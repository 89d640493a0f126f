//! The HTTP side of an endpoint: one `ureq` agent (rustls for https, no redirects), the API key
//! on every request, `GET /v1/models`, and error messages that say what to do.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::endpoint::{api_key_env_name, check_endpoint, ApiKey, Endpoint};
use super::{is_timeout, server_message, OpenAiOptions};
use crate::error::{ModelError, Result};

/// The environment variable naming a PEM file of extra root certificates trusted for https
/// endpoints, beside the built-in Mozilla roots (a server with its own certificate).
pub const CA_FILE_ENV: &str = "REIN_CA_FILE";

/// One model an endpoint serves, as `GET /v1/models` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServedModel {
    pub id: String,
    /// Who the server says owns it (`llamacpp`, `library` for Ollama, `vllm`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owned_by: Option<String>,
}

/// A checked endpoint and the agent that talks to it.
pub(crate) struct Client {
    pub endpoint: Endpoint,
    agent: ureq::Agent,
    key: Option<ApiKey>,
    pub read_timeout: Duration,
}

impl Client {
    /// Checks the URL (loopback unless allowed), refuses to send a key in clear text to another
    /// machine, and builds the agent (with the extra roots when given).
    pub fn new(opts: &OpenAiOptions) -> Result<Client> {
        let endpoint = check_endpoint(&opts.url, opts.allow_remote)?;
        if opts.api_key.is_some() && !endpoint.https && !endpoint.loopback {
            return Err(ModelError::Refused(format!(
                "refusing to send the API key ({}) to {} over plain http, where anyone on the way can read it; use an https:// URL",
                api_key_env_name(&endpoint.host),
                endpoint.host
            )));
        }
        let mut builder = ureq::AgentBuilder::new()
            .timeout_connect(opts.connect_timeout)
            .timeout_read(opts.read_timeout)
            .timeout_write(opts.read_timeout)
            .redirects(0)
            .user_agent(concat!("rein/", env!("CARGO_PKG_VERSION")));
        if let Some(pem) = &opts.extra_roots_pem {
            builder = builder.tls_config(Arc::new(tls_config(pem)?));
        }
        Ok(Client {
            endpoint,
            agent: builder.build(),
            key: opts.api_key.clone(),
            read_timeout: opts.read_timeout,
        })
    }

    fn with_key(&self, request: ureq::Request) -> ureq::Request {
        match &self.key {
            Some(key) => request.set("Authorization", &key.bearer()),
            None => request,
        }
    }

    /// `GET`; the error is boxed (`ureq::Error` is large) and left raw for the caller to sort.
    pub fn get(&self, path: &str) -> std::result::Result<ureq::Response, Box<ureq::Error>> {
        self.with_key(self.agent.get(&self.endpoint.url(path)))
            .call()
            .map_err(Box::new)
    }

    pub fn post_raw(
        &self,
        path: &str,
        body: &Value,
    ) -> std::result::Result<ureq::Response, Box<ureq::Error>> {
        self.with_key(self.agent.post(&self.endpoint.url(path)))
            .send_json(body)
            .map_err(Box::new)
    }

    pub fn post(&self, path: &str, body: &Value) -> Result<ureq::Response> {
        self.post_raw(path, body)
            .map_err(|e| self.error(&self.endpoint.url(path), *e))
    }

    /// `GET /v1/models`: `Ok(None)` when the server answers with an HTTP error other than an
    /// authentication failure (it has no such route), an error when it cannot be reached.
    pub fn models(&self) -> Result<Option<Vec<ServedModel>>> {
        let url = self.endpoint.url("models");
        let response = match self.get("models").map_err(|e| *e) {
            Ok(r) => r,
            Err(ureq::Error::Status(code, _)) if code != 401 && code != 403 => return Ok(None),
            Err(e) => return Err(self.error(&url, e)),
        };
        let Ok(body) = response.into_json::<Value>() else {
            return Ok(None);
        };
        let Some(data) = body.get("data").and_then(Value::as_array) else {
            return Ok(None);
        };
        Ok(Some(
            data.iter()
                .filter_map(|m| {
                    Some(ServedModel {
                        id: m.get("id")?.as_str()?.to_string(),
                        owned_by: m
                            .get("owned_by")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                    })
                })
                .collect(),
        ))
    }

    /// A person-readable error for a failed request.
    pub fn error(&self, url: &str, e: ureq::Error) -> ModelError {
        match e {
            ureq::Error::Status(code, response) => {
                let body = response.into_string().unwrap_or_default();
                let hint = if code == 401 || code == 403 {
                    let var = api_key_env_name(&self.endpoint.host);
                    if self.key.is_some() {
                        format!("; the server refused the key in {var}: check it")
                    } else {
                        format!("; the server wants an API key: set {var}")
                    }
                } else {
                    String::new()
                };
                ModelError::Endpoint(format!(
                    "HTTP {code} from {url}: {}{hint}",
                    server_message(&body)
                ))
            }
            ureq::Error::Transport(t) => {
                let timed_out = t.kind() == ureq::ErrorKind::Io
                    && std::error::Error::source(&t)
                        .and_then(|s| s.downcast_ref::<std::io::Error>())
                        .is_some_and(is_timeout);
                if timed_out {
                    return ModelError::Timeout {
                        seconds: self.read_timeout.as_secs(),
                    };
                }
                let tls = if self.endpoint.https {
                    format!(
                        " (a server with its own certificate: put that certificate, PEM, in a file named by {CA_FILE_ENV})"
                    )
                } else {
                    String::new()
                };
                ModelError::Endpoint(format!(
                    "cannot reach {url}: {t}; start the server or check the URL{tls}"
                ))
            }
        }
    }
}

/// A rustls client configuration trusting the Mozilla roots and every certificate in `pem`.
fn tls_config(pem: &[u8]) -> Result<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;

    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let bad = |why: String| {
        ModelError::BadRequest(format!(
            "the extra root certificates ({CA_FILE_ENV}) {why}; give a PEM file of CA certificates"
        ))
    };
    let mut added = 0;
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(|e| bad(format!("cannot be read: {e}")))?;
        roots
            .add(cert)
            .map_err(|e| bad(format!("hold a certificate rustls refuses: {e}")))?;
        added += 1;
    }
    if added == 0 {
        return Err(bad("hold no certificate".into()));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(format!("cannot be used: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}
