//! Instants as people and logs read them: UTC, RFC 3339, to the second.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `at` as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_seconds(at: SystemTime) -> String {
    humantime::format_rfc3339_seconds(at).to_string()
}

/// Unix milliseconds (as the stores keep them) as `YYYY-MM-DDTHH:MM:SSZ`; an instant before
/// 1970 is shown as the epoch rather than failing a listing.
pub fn utc_millis(millis: i64) -> String {
    let millis = u64::try_from(millis).unwrap_or(0);
    utc_seconds(UNIX_EPOCH + Duration::from_millis(millis))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(utc_millis(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_millis(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(utc_millis(1_700_000_000_123), "2023-11-14T22:13:20Z");
        assert_eq!(utc_millis(-5), "1970-01-01T00:00:00Z");
    }
}
