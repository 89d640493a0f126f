//! Endpoint URLs: normalising the base URL, refusing non-loopback hosts without an opt-in, and
//! the per-endpoint API key.
//!
//! An endpoint's API key is read from the environment only, from a variable named after its
//! host: `REIN_API_KEY_<HOST>`, the host upper-cased with every character other than A-Z and
//! 0-9 made `_` (`api.example.com` -> `REIN_API_KEY_API_EXAMPLE_COM`, `127.0.0.1` ->
//! `REIN_API_KEY_127_0_0_1`). There is no catch-all variable, so a key is only ever sent to the
//! host it was set for; a URL carrying credentials (`https://user:key@host`) is refused, so a key
//! never sits on a command line (nor, through the model spec, in the journal).

use url::{Host, Url};

use crate::error::{ModelError, Result};

/// The environment variable that opts in to non-loopback endpoints (`REIN_ALLOW_REMOTE=1`).
pub const ALLOW_REMOTE_ENV: &str = "REIN_ALLOW_REMOTE";

/// The prefix of the variable holding an endpoint's API key (see the module documentation).
pub const API_KEY_ENV_PREFIX: &str = "REIN_API_KEY_";

/// The environment variable that holds the API key for `host`.
pub fn api_key_env_name(host: &str) -> String {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let mut name = String::from(API_KEY_ENV_PREFIX);
    name.extend(host.chars().map(|c| {
        if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        }
    }));
    name
}

/// An API key. Its `Debug` never shows it, so it cannot reach a log by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// A key as given; `None` when it is empty or only spaces.
    pub fn new(key: impl Into<String>) -> Option<ApiKey> {
        let key = key.into().trim().to_string();
        (!key.is_empty()).then_some(ApiKey(key))
    }

    /// The key read from `REIN_API_KEY_<HOST>`, if that is set and not empty.
    pub fn from_env(host: &str) -> Option<ApiKey> {
        std::env::var(api_key_env_name(host))
            .ok()
            .and_then(ApiKey::new)
    }

    /// The `Authorization` header value.
    pub(crate) fn bearer(&self) -> String {
        format!("Bearer {}", self.0)
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<hidden>)")
    }
}

/// Whether `REIN_ALLOW_REMOTE` is set to `1`, `true` or `yes`.
pub fn allow_remote_from_env() -> bool {
    std::env::var(ALLOW_REMOTE_ENV)
        .map(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
        .unwrap_or(false)
}

/// A checked endpoint: the base URL without a trailing `/v1` and the host it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// e.g. `http://127.0.0.1:8080` (no trailing slash, no `/v1`).
    pub base: String,
    pub host: String,
    pub loopback: bool,
    /// Whether the endpoint is reached over TLS.
    pub https: bool,
}

impl Endpoint {
    /// `<base>/v1/<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("{}/v1/{}", self.base, path.trim_start_matches('/'))
    }
}

/// Whether a host is on this machine's loopback: 127.0.0.0/8, ::1 or `localhost`.
pub fn is_loopback(host: &Host<&str>) -> bool {
    match host {
        Host::Ipv4(ip) => ip.is_loopback(),
        Host::Ipv6(ip) => ip.is_loopback(),
        Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
    }
}

/// Parses an endpoint URL (with or without `/v1`) and applies the loopback rule: a host other
/// than 127.0.0.0/8, ::1 or localhost is refused unless `allow_remote`.
pub fn check_endpoint(url: &str, allow_remote: bool) -> Result<Endpoint> {
    let mut parsed = Url::parse(url.trim()).map_err(|e| {
        ModelError::BadRequest(format!(
            "endpoint {url:?} is not a URL ({e}); use e.g. http://127.0.0.1:8080"
        ))
    })?;
    let https = match parsed.scheme() {
        "http" => false,
        "https" => true,
        other => {
            return Err(ModelError::BadRequest(format!(
                "endpoint {url}: scheme {other}: is not supported; use http:// or https://"
            )))
        }
    };
    if !parsed.username().is_empty() || parsed.password().is_some() {
        // Not echoed: the URL holds the secret.
        return Err(ModelError::BadRequest(
            "the endpoint URL carries a user name or password; remove it and put the API key in the environment variable REIN_API_KEY_<HOST> (see `rein models list --help`)".into(),
        ));
    }
    let Some(host) = parsed.host() else {
        return Err(ModelError::BadRequest(format!(
            "endpoint {url} has no host"
        )));
    };
    let loopback = is_loopback(&host);
    let host = host.to_string();
    if !loopback && !allow_remote {
        return Err(ModelError::Refused(format!(
            "refusing endpoint host {host}: it is not on this machine's loopback (127.0.0.0/8, ::1, localhost); pass --allow-remote or set {ALLOW_REMOTE_ENV}=1 to use it"
        )));
    }
    parsed.set_query(None);
    parsed.set_fragment(None);
    let mut base = parsed.as_str().trim_end_matches('/').to_string();
    if let Some(stripped) = base.strip_suffix("/v1") {
        base = stripped.to_string();
    }
    Ok(Endpoint {
        base,
        host,
        loopback,
        https,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_with_and_without_v1() {
        for u in [
            "http://127.0.0.1:8080",
            "http://127.0.0.1:8080/",
            "http://127.0.0.1:8080/v1",
            "http://127.0.0.1:8080/v1/",
        ] {
            let e = check_endpoint(u, false).unwrap();
            assert_eq!(e.base, "http://127.0.0.1:8080", "{u}");
            assert_eq!(
                e.url("chat/completions"),
                "http://127.0.0.1:8080/v1/chat/completions"
            );
        }
        let e = check_endpoint("http://localhost:1/proxy/v1", false).unwrap();
        assert_eq!(e.url("models"), "http://localhost:1/proxy/v1/models");
    }

    #[test]
    fn loopback_hosts() {
        for u in [
            "http://127.0.0.1",
            "http://127.8.9.10:1",
            "http://[::1]:8080",
            "http://LOCALHOST:80",
        ] {
            assert!(check_endpoint(u, false).is_ok(), "{u}");
        }
        for u in [
            "http://10.0.0.1",
            "http://192.168.1.2:8080",
            "http://[::ffff:7f00:1]",
            "http://example.invalid",
            "http://localhost.example.invalid",
            "http://128.0.0.1",
        ] {
            let e = check_endpoint(u, false).unwrap_err();
            assert!(matches!(e, ModelError::Refused(_)), "{u}: {e}");
            assert!(e.to_string().contains("--allow-remote"), "{e}");
            assert!(e.to_string().contains(ALLOW_REMOTE_ENV), "{e}");
            assert_eq!(e.exit_code(), 2);
            assert!(check_endpoint(u, true).is_ok(), "{u} with opt-in");
        }
    }

    #[test]
    fn bad_urls() {
        assert!(matches!(
            check_endpoint("not a url", false),
            Err(ModelError::BadRequest(_))
        ));
        assert!(matches!(
            check_endpoint("ftp://127.0.0.1", false),
            Err(ModelError::BadRequest(_))
        ));
        assert!(check_endpoint("https://127.0.0.1", false).unwrap().https);
        assert!(!check_endpoint("http://127.0.0.1", false).unwrap().https);
    }

    #[test]
    fn credentials_in_the_url_are_refused_without_echoing_them() {
        for u in [
            "https://user:s3cret-key@127.0.0.1:8080",
            "http://:s3cret-key@127.0.0.1",
            "https://s3cret-key@127.0.0.1",
        ] {
            let e = check_endpoint(u, true).unwrap_err();
            assert!(matches!(e, ModelError::BadRequest(_)), "{u}: {e}");
            assert!(!e.to_string().contains("s3cret"), "{e}");
            assert!(e.to_string().contains("REIN_API_KEY_"), "{e}");
        }
    }

    #[test]
    fn key_variables_are_named_after_the_host() {
        assert_eq!(
            api_key_env_name("api.example.com"),
            "REIN_API_KEY_API_EXAMPLE_COM"
        );
        assert_eq!(api_key_env_name("127.0.0.1"), "REIN_API_KEY_127_0_0_1");
        assert_eq!(api_key_env_name("[::1]"), "REIN_API_KEY___1");
        assert_eq!(api_key_env_name("my-host"), "REIN_API_KEY_MY_HOST");
    }

    #[test]
    fn a_key_never_shows_in_debug_output() {
        let k = ApiKey::new("sk-very-secret").unwrap();
        assert!(!format!("{k:?}").contains("very-secret"));
        assert!(ApiKey::new("  ").is_none());
    }
}
