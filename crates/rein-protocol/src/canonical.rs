//! RFC 8785 (JSON Canonicalization Scheme) for `serde_json::Value`, and SHA-256 in hex.
//!
//! Written here rather than taken from `serde_jcs` 0.1, which orders object keys by their UTF-8
//! escaped bytes instead of UTF-16 code units as the RFC requires.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The canonical JSON text of a value: no whitespace, object members sorted by the UTF-16 code
/// units of their names, strings with the minimal escapes, numbers in ECMAScript form.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

/// Lower-case hex SHA-256 of bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&format_number(n)),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(k, out);
                out.push(':');
                write_value(v, out);
            }
            out.push('}');
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn format_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return format_f64(i as f64);
    }
    if let Some(u) = n.as_u64() {
        return format_f64(u as f64);
    }
    format_f64(n.as_f64().unwrap_or(0.0))
}

/// ECMAScript `Number.prototype.toString` for finite doubles (RFC 8785 §3.2.2.3), built on
/// Rust's shortest round-trip digits.
pub(crate) fn format_f64(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    if !x.is_finite() {
        // serde_json never holds these; keep output well-defined anyway.
        return "null".to_string();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    // `{:e}` gives the shortest digits that round-trip: "d.ddde±x".
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (sci.as_str(), 0),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    let n = exp + 1; // position of the decimal point relative to the digits
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        let (a, b) = digits.split_at(n as usize);
        format!("{a}.{b}")
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let esign = if e >= 0 { "+" } else { "-" };
        let (first, rest) = digits.split_at(1);
        if rest.is_empty() {
            format!("{first}e{esign}{}", e.abs())
        } else {
            format!("{first}.{rest}e{esign}{}", e.abs())
        }
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_ecmascript() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-7, "1e-7"),
            (1e-6, "0.000001"),
            (123.456, "123.456"),
            (4.5e-10, "4.5e-10"),
            (333_333_333.333_333_3, "333333333.3333333"),
            (1e23, "1e+23"),
            (9007199254740992.0, "9007199254740992"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
        ];
        for (x, want) in cases {
            assert_eq!(format_f64(*x), *want, "{x}");
        }
    }

    #[test]
    fn rfc_8785_key_order_uses_utf16() {
        // RFC 8785 section 3.2.3: sorting by UTF-16 code units puts U+1F600 before U+FB33.
        let v: Value = serde_json::from_str(
            r#"{"\u20ac":"Euro","\r":"CR","\ufb33":"Dalet","1":"One","\ud83d\ude00":"Emoji","\u0080":"Control","\u00f6":"o"}"#,
        )
        .unwrap_or(Value::Null);
        let want = "{\"\\r\":\"CR\",\"1\":\"One\",\"\u{80}\":\"Control\",\"\u{f6}\":\"o\",\"\u{20ac}\":\"Euro\",\"\u{1f600}\":\"Emoji\",\"\u{fb33}\":\"Dalet\"}";
        assert_eq!(canonical_json(&v), want);
    }

    #[test]
    fn strings_and_literals() {
        let v = serde_json::json!({"b": [true, null, "a\"\\\n\u{1}é"], "a": 1.0});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":1,"b":[true,null,"a\"\\\n\u0001é"]}"#
        );
    }
}
