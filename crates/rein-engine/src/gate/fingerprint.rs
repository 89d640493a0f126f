//! Call ids and fingerprints: what makes a retried call recognisable as the same call.

use rein_protocol::canonical::{canonical_json, sha256_hex};
use serde_json::{json, Value};

/// Longest call id the gate accepts.
pub const MAX_CALL_ID_CHARS: usize = 128;

/// Whether `id` is a usable call id: 1 to 128 characters of `A-Z a-z 0-9 . _ : -`. Narrow on
/// purpose: ids end up in file names, logs and JSON, and a model should not be able to smuggle
/// anything through one.
pub fn valid_call_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_CALL_ID_CHARS
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

/// SHA-256 (hex) of the RFC 8785 canonical JSON of `{"tool": .., "arguments": ..}`: the same
/// call written with other key order or number spelling has the same fingerprint.
pub fn fingerprint(tool: &str, arguments: &Value) -> String {
    let value = json!({ "tool": tool, "arguments": arguments });
    sha256_hex(canonical_json(&value).as_bytes())
}

/// The id under which a call with an unusable id is journaled: derived from the raw id so the
/// record can be traced, and containing `!` so it can never collide with a valid id.
pub fn invalid_id_key(raw: &str) -> String {
    format!("!invalid-id:{}", &sha256_hex(raw.as_bytes())[..16])
}
