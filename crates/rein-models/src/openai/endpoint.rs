//! Endpoint URLs: normalising the base URL and refusing non-loopback hosts without an opt-in.

use url::{Host, Url};

use crate::error::{ModelError, Result};

/// The environment variable that opts in to non-loopback endpoints (`REIN_ALLOW_REMOTE=1`).
pub const ALLOW_REMOTE_ENV: &str = "REIN_ALLOW_REMOTE";

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
    match parsed.scheme() {
        "http" => {}
        "https" => {
            return Err(ModelError::Unsupported(format!(
                "endpoint {url}: this build of rein speaks plain http only; reach the server over http (e.g. an SSH tunnel to 127.0.0.1)"
            )))
        }
        other => {
            return Err(ModelError::BadRequest(format!(
                "endpoint {url}: scheme {other}: is not supported; use http://"
            )))
        }
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
        assert!(matches!(
            check_endpoint("https://127.0.0.1", false),
            Err(ModelError::Unsupported(_))
        ));
    }
}
