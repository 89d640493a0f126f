//! The guard in front of every route: Host (DNS rebinding), the launch token (cookie, or the
//! URL's `?token=` on the first visit), Origin on every state-changing request (cross-site
//! requests), and the security headers on every answer. No CORS header is ever sent.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State as AxState};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;

use crate::{State, WebError};

/// The cookie that carries the launch token after the first visit.
pub const COOKIE_NAME: &str = "rein_token";

/// Bytes of randomness in a launch token (shown as hex: 64 characters).
const TOKEN_BYTES: usize = 32;

/// The Content-Security-Policy of every answer: scripts, styles and connections from this
/// server only, no inline script or style, no frames, no outside request of any kind.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                       connect-src 'self'; base-uri 'none'; form-action 'self'; \
                       frame-ancestors 'none'";

/// A fresh random launch token.
pub fn new_token() -> Result<String, WebError> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| WebError::Random(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

pub(crate) fn wrap(app: Router, state: Arc<State>) -> Router {
    app.layer(middleware::from_fn_with_state(state, guard))
}

async fn guard(AxState(state): AxState<Arc<State>>, request: Request, next: Next) -> Response {
    let wants_html = accepts_html(request.headers());
    let mut response = match check(&state, &request) {
        Ok(Some(redirect)) => *redirect,
        Ok(None) => next.run(request).await,
        // A person who opened a page gets a short page; a script gets JSON. Neither gets data.
        Err(refusal) if wants_html => refusal.into_page(),
        Err(refusal) => refusal.into_response(),
    };
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// A refusal: status and a message for the person, answered as `{"error": message}`.
pub(crate) fn refuse(status: StatusCode, message: impl Into<String>) -> Response {
    Refusal::new(status, message).into_response()
}

/// A refusal not yet turned into a response (small, so `Result<_, Refusal>` stays cheap).
#[derive(Debug)]
pub(crate) struct Refusal {
    status: StatusCode,
    message: String,
}

impl Refusal {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Refusal {
        Refusal {
            status,
            message: message.into(),
        }
    }
}

impl Refusal {
    /// The refusal as a short HTML page for a person (same status, no data, no script, no
    /// outside request; the message is escaped).
    pub(crate) fn into_page(self) -> Response {
        let page = format!(
            "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>Rein: refused</title>\n</head>\n<body>\n<main>\n<h1>Refused ({})</h1>\n\
             <p>{}</p>\n<p>Nothing was read or changed.</p>\n</main>\n</body>\n</html>\n",
            self.status.as_u16(),
            html_escape(&self.message)
        );
        (
            self.status,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            page,
        )
            .into_response()
    }
}

/// `s` safe inside HTML text or a quoted attribute.
fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Whether the request is a page visit (a browser's `Accept` names `text/html`).
fn accepts_html(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| item.split(';').next().map(str::trim) == Some("text/html"))
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message });
        (self.status, axum::Json(body)).into_response()
    }
}

/// `Ok(None)`: pass; `Ok(Some(r))`: answer with `r` (the first visit's redirect); `Err(r)`:
/// refused with `r`.
fn check(state: &State, request: &Request) -> Result<Option<Box<Response>>, Refusal> {
    let port = state.config.port;
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !own_host(host, port) {
        return Err(Refusal::new(
            StatusCode::FORBIDDEN,
            format!(
                "refused: this server answers only to 127.0.0.1:{port} or localhost:{port}, and \
                 the request named host {host:?} (a page on another site may not reach it)"
            ),
        ));
    }
    if !is_safe(request.method()) {
        let origin = headers
            .get(header::ORIGIN)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        if origin != format!("http://{host}") {
            return Err(Refusal::new(
                StatusCode::FORBIDDEN,
                format!(
                    "refused: a {} request must come from this server's own pages (Origin \
                     http://{host}), and this one came from {}",
                    request.method(),
                    if origin.is_empty() {
                        "no origin".to_string()
                    } else {
                        format!("{origin:?}")
                    }
                ),
            ));
        }
    }
    let token = state.config.token.as_str();
    if cookie_token(headers).is_some_and(|t| same(t, token)) {
        return Ok(None);
    }
    if let Some(given) = query_token(request.uri().query()) {
        if same(given, token) && *request.method() == Method::GET {
            // First visit: set the cookie and send the browser to the same path without the
            // token, so it stays out of the address bar, the history and any Referer.
            let cookie = format!("{COOKIE_NAME}={token}; HttpOnly; SameSite=Strict; Path=/");
            // One leading `/`: `//host/...` would send the browser to another server.
            let location = format!("/{}", request.uri().path().trim_start_matches(['/', '\\']));
            let mut response = Response::new(Body::empty());
            *response.status_mut() = StatusCode::SEE_OTHER;
            let headers = response.headers_mut();
            if let (Ok(cookie), Ok(location)) = (
                HeaderValue::from_str(&cookie),
                HeaderValue::from_str(&location),
            ) {
                headers.insert(header::SET_COOKIE, cookie);
                headers.insert(header::LOCATION, location);
                return Ok(Some(Box::new(response)));
            }
        }
    }
    Err(Refusal::new(
        StatusCode::UNAUTHORIZED,
        "refused: this request does not carry the launch token; open the URL that `rein serve` \
         printed when it started (it sets a cookie on the first visit)",
    ))
}

fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD)
}

fn own_host(host: &str, port: u16) -> bool {
    host == format!("127.0.0.1:{port}") || host == format!("localhost:{port}")
}

fn cookie_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE_NAME)
        .map(|(_, value)| value)
}

fn query_token(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| *name == "token")
        .map(|(_, value)| value)
}

/// Compares in time that depends on the length only, not on where the first difference is.
fn same(given: &str, token: &str) -> bool {
    given.len() == token.len()
        && given
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}
