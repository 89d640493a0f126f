//! A reader for the header of a GGUF file: its metadata and tensor table, never its weights.
//!
//! Both sides of the worker protocol read it: the parent to learn what a user's own GGUF says it
//! is, the worker to report what the file it loaded says. Every length read from the file is
//! checked against a cap before anything is allocated, so a hostile or truncated file is an
//! error, never a panic or a huge allocation.

use std::collections::BTreeMap;
use std::io::{BufReader, Read};
use std::path::Path;

use thiserror::Error;

/// `GGUF` as a little-endian u32.
const MAGIC: [u8; 4] = *b"GGUF";
/// Longest metadata key accepted (the format's own limit is 65,535 bytes).
const MAX_KEY_BYTES: u64 = 65_535;
/// Longest string value accepted (chat templates are a few KiB; 16 MiB is far past any).
const MAX_STRING_BYTES: u64 = 16 << 20;
/// Most metadata entries, tensors and array elements accepted.
const MAX_ENTRIES: u64 = 1 << 24;
/// Most tensor dimensions (ggml's GGML_MAX_DIMS).
const MAX_DIMS: u32 = 4;
/// How deep arrays of arrays may nest.
const MAX_ARRAY_DEPTH: u32 = 2;

/// Why a file's header could not be read.
#[derive(Debug, Error)]
pub enum GgufError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a GGUF file (it does not start with the bytes GGUF); give the path of a .gguf model file")]
    NotGguf { path: String },
    #[error("{path} is GGUF version {version}, which this build does not read (versions 2 and 3 are read); convert it with a current llama.cpp")]
    Version { path: String, version: u32 },
    #[error("{path} has a malformed GGUF header: {problem}; the file is truncated or corrupt")]
    Malformed { path: String, problem: String },
}

/// One metadata value. Arrays keep only their length (token lists run to 150,000 strings).
#[derive(Debug, Clone, PartialEq)]
pub enum GgufValue {
    Uint(u64),
    Int(i64),
    Float(f64),
    Bool(bool),
    String(String),
    Array { len: u64 },
}

/// What a GGUF header says about the model in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct GgufHeader {
    pub version: u32,
    /// Tensors in the file's tensor table.
    pub tensor_count: u64,
    /// Elements of all tensors together (what llama.cpp reports as the parameter count).
    pub parameter_count: u64,
    pub metadata: BTreeMap<String, GgufValue>,
}

impl GgufHeader {
    /// Reads the header of the file at `path` (only the header is read, not the weights).
    pub fn read_file(path: &Path) -> Result<GgufHeader, GgufError> {
        let shown = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|source| GgufError::Io {
            path: shown.clone(),
            source,
        })?;
        GgufHeader::read(BufReader::with_capacity(1 << 16, file), &shown)
    }

    /// Reads a header from `input`; `path` only names the source in errors.
    pub fn read(input: impl Read, path: &str) -> Result<GgufHeader, GgufError> {
        let mut r = Reader {
            input,
            path: path.to_string(),
        };
        let magic = r.bytes4().map_err(|e| match e {
            GgufError::Malformed { .. } => GgufError::NotGguf { path: path.into() },
            other => other,
        })?;
        if magic != MAGIC {
            return Err(GgufError::NotGguf { path: path.into() });
        }
        let version = r.u32()?;
        if !(2..=3).contains(&version) {
            return Err(GgufError::Version {
                path: path.into(),
                version,
            });
        }
        let tensor_count = r.count("tensor count")?;
        let kv_count = r.count("metadata count")?;
        let mut metadata = BTreeMap::new();
        for _ in 0..kv_count {
            let key = r.string(MAX_KEY_BYTES, "metadata key")?;
            let kind = r.u32()?;
            let value = r.value(kind, 0)?;
            if metadata.insert(key.clone(), value).is_some() {
                return Err(r.malformed(format!("metadata key {key:?} appears twice")));
            }
        }
        let mut parameter_count: u64 = 0;
        for _ in 0..tensor_count {
            let name = r.string(MAX_KEY_BYTES, "tensor name")?;
            let dims = r.u32()?;
            if dims == 0 || dims > MAX_DIMS {
                return Err(r.malformed(format!("tensor {name:?} has {dims} dimensions")));
            }
            let mut elements: u64 = 1;
            for _ in 0..dims {
                let d = r.u64()?;
                elements = elements
                    .checked_mul(d)
                    .ok_or_else(|| r.malformed(format!("tensor {name:?} is impossibly large")))?;
            }
            let _ggml_type = r.u32()?;
            let _offset = r.u64()?;
            parameter_count = parameter_count
                .checked_add(elements)
                .ok_or_else(|| r.malformed("the tensor sizes overflow".into()))?;
        }
        Ok(GgufHeader {
            version,
            tensor_count,
            parameter_count,
            metadata,
        })
    }

    /// A string metadata value.
    pub fn string(&self, key: &str) -> Option<&str> {
        match self.metadata.get(key) {
            Some(GgufValue::String(s)) => Some(s),
            _ => None,
        }
    }

    /// An unsigned integer metadata value (any integer width; negative values are not).
    pub fn uint(&self, key: &str) -> Option<u64> {
        match self.metadata.get(key) {
            Some(GgufValue::Uint(v)) => Some(*v),
            Some(GgufValue::Int(v)) => u64::try_from(*v).ok(),
            _ => None,
        }
    }

    /// `general.name`, empty when absent.
    pub fn name(&self) -> &str {
        self.string("general.name").unwrap_or_default()
    }

    /// `general.architecture`, empty when absent.
    pub fn architecture(&self) -> &str {
        self.string("general.architecture").unwrap_or_default()
    }

    /// The Jinja chat template (`tokenizer.chat_template`), if the file has one.
    pub fn chat_template(&self) -> Option<&str> {
        self.string("tokenizer.chat_template")
    }

    /// The training context length (`<architecture>.context_length`), if given.
    pub fn context_length(&self) -> Option<u64> {
        self.uint(&format!("{}.context_length", self.architecture()))
    }
}

struct Reader<R> {
    input: R,
    path: String,
}

impl<R: Read> Reader<R> {
    fn malformed(&self, problem: String) -> GgufError {
        GgufError::Malformed {
            path: self.path.clone(),
            problem,
        }
    }

    fn fill(&mut self, buf: &mut [u8]) -> Result<(), GgufError> {
        self.input.read_exact(buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                self.malformed("it ends inside the header".into())
            } else {
                GgufError::Io {
                    path: self.path.clone(),
                    source: e,
                }
            }
        })
    }

    fn bytes4(&mut self) -> Result<[u8; 4], GgufError> {
        let mut b = [0u8; 4];
        self.fill(&mut b)?;
        Ok(b)
    }

    /// An `n`-byte little-endian unsigned value.
    fn small(&mut self, n: usize) -> Result<u64, GgufError> {
        let mut b = [0u8; 8];
        self.fill(&mut b[..n])?;
        Ok(u64::from_le_bytes(b))
    }

    fn u32(&mut self) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.bytes4()?))
    }

    fn u64(&mut self) -> Result<u64, GgufError> {
        let mut b = [0u8; 8];
        self.fill(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn count(&mut self, what: &str) -> Result<u64, GgufError> {
        let n = self.u64()?;
        if n > MAX_ENTRIES {
            return Err(self.malformed(format!("{what} {n} is past the limit of {MAX_ENTRIES}")));
        }
        Ok(n)
    }

    fn string(&mut self, cap: u64, what: &str) -> Result<String, GgufError> {
        let len = self.u64()?;
        if len > cap {
            return Err(self.malformed(format!(
                "a {what} of {len} bytes is past the limit of {cap}"
            )));
        }
        let mut buf = vec![0u8; len as usize];
        self.fill(&mut buf)?;
        String::from_utf8(buf).map_err(|_| self.malformed(format!("a {what} is not UTF-8")))
    }

    fn skip(&mut self, n: u64) -> Result<(), GgufError> {
        let copied = std::io::copy(&mut (&mut self.input).take(n), &mut std::io::sink()).map_err(
            |source| GgufError::Io {
                path: self.path.clone(),
                source,
            },
        )?;
        if copied != n {
            return Err(self.malformed("it ends inside the header".into()));
        }
        Ok(())
    }

    fn value(&mut self, kind: u32, depth: u32) -> Result<GgufValue, GgufError> {
        Ok(match kind {
            0 => GgufValue::Uint(self.small(1)?),
            1 => GgufValue::Int(i64::from(self.small(1)? as u8 as i8)),
            2 => GgufValue::Uint(self.small(2)?),
            3 => GgufValue::Int(i64::from(self.small(2)? as u16 as i16)),
            4 => GgufValue::Uint(self.small(4)?),
            5 => GgufValue::Int(i64::from(self.small(4)? as u32 as i32)),
            6 => GgufValue::Float(f64::from(f32::from_bits(self.small(4)? as u32))),
            7 => match self.small(1)? {
                0 => GgufValue::Bool(false),
                1 => GgufValue::Bool(true),
                b => return Err(self.malformed(format!("a boolean holds {b}"))),
            },
            8 => GgufValue::String(self.string(MAX_STRING_BYTES, "string value")?),
            9 => {
                if depth >= MAX_ARRAY_DEPTH {
                    return Err(self.malformed("arrays nest too deeply".into()));
                }
                let inner = self.u32()?;
                let len = self.count("array length")?;
                match inner {
                    // Fixed-width elements are skipped without reading them one by one.
                    0 | 1 | 7 => self.skip(len)?,
                    2 | 3 => self.skip(len * 2)?,
                    4..=6 => self.skip(len * 4)?,
                    10..=12 => self.skip(len * 8)?,
                    8 => {
                        for _ in 0..len {
                            let n = self.u64()?;
                            if n > MAX_STRING_BYTES {
                                return Err(self.malformed(format!(
                                    "an array string of {n} bytes is past the limit"
                                )));
                            }
                            self.skip(n)?;
                        }
                    }
                    9 => {
                        for _ in 0..len {
                            let kind = self.u32()?;
                            if kind != 9 {
                                // An array of arrays carries each inner array's type again.
                                return Err(self.malformed("a nested array is not an array".into()));
                            }
                            self.value(9, depth + 1)?;
                        }
                    }
                    other => {
                        return Err(self.malformed(format!("unknown array element type {other}")))
                    }
                }
                GgufValue::Array { len }
            }
            10 => GgufValue::Uint(self.small(8)?),
            11 => GgufValue::Int(self.small(8)? as i64),
            12 => GgufValue::Float(f64::from_bits(self.small(8)?)),
            other => return Err(self.malformed(format!("unknown value type {other}"))),
        })
    }
}

/// Writes a GGUF header (version 3) with string and u32 metadata and tensors of the given
/// shapes, for tests that need a file that looks like a model. Not a model: no weights follow.
pub fn write_test_header(
    strings: &[(&str, &str)],
    uints: &[(&str, u32)],
    tensors: &[(&str, &[u64])],
) -> Vec<u8> {
    let mut out = Vec::new();
    let string = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&(tensors.len() as u64).to_le_bytes());
    out.extend_from_slice(&((strings.len() + uints.len()) as u64).to_le_bytes());
    for (key, value) in strings {
        string(&mut out, key);
        out.extend_from_slice(&8u32.to_le_bytes());
        string(&mut out, value);
    }
    for (key, value) in uints {
        string(&mut out, key);
        out.extend_from_slice(&4u32.to_le_bytes());
        out.extend_from_slice(&value.to_le_bytes());
    }
    let mut offset = 0u64;
    for (name, dims) in tensors {
        string(&mut out, name);
        out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
        for d in *dims {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(&0u32.to_le_bytes()); // F32
        out.extend_from_slice(&offset.to_le_bytes());
        offset += dims.iter().product::<u64>() * 4;
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        write_test_header(
            &[
                ("general.name", "Tiny Test"),
                ("general.architecture", "llama"),
                ("tokenizer.chat_template", "{{ messages }}"),
            ],
            &[("llama.context_length", 2048)],
            &[("a", &[4, 3]), ("b", &[5])],
        )
    }

    #[test]
    fn reads_names_counts_and_template() {
        let h = GgufHeader::read(&sample()[..], "t").unwrap();
        assert_eq!(h.name(), "Tiny Test");
        assert_eq!(h.architecture(), "llama");
        assert_eq!(h.chat_template(), Some("{{ messages }}"));
        assert_eq!(h.context_length(), Some(2048));
        assert_eq!(h.tensor_count, 2);
        assert_eq!(h.parameter_count, 17);
    }

    #[test]
    fn arrays_are_skipped_by_length() {
        let mut bytes = sample();
        // Append one more key (a string array) by rewriting the kv count and inserting it
        // after the header counts.
        let mut extra = Vec::new();
        extra.extend_from_slice(&(3u64).to_le_bytes());
        extra.extend_from_slice(b"tok");
        extra.extend_from_slice(&9u32.to_le_bytes());
        extra.extend_from_slice(&8u32.to_le_bytes());
        extra.extend_from_slice(&2u64.to_le_bytes());
        for s in ["ab", "c"] {
            extra.extend_from_slice(&(s.len() as u64).to_le_bytes());
            extra.extend_from_slice(s.as_bytes());
        }
        bytes[16..24].copy_from_slice(&5u64.to_le_bytes());
        bytes.splice(24..24, extra);
        let h = GgufHeader::read(&bytes[..], "t").unwrap();
        assert_eq!(h.metadata.get("tok"), Some(&GgufValue::Array { len: 2 }));
        assert_eq!(h.name(), "Tiny Test");
        assert_eq!(h.parameter_count, 17);
    }

    #[test]
    fn hostile_headers_are_errors_not_panics() {
        let good = sample();
        // Every truncation fails cleanly.
        for cut in 0..good.len() {
            let e = GgufHeader::read(&good[..cut], "t").unwrap_err();
            assert!(
                matches!(e, GgufError::Malformed { .. } | GgufError::NotGguf { .. }),
                "cut {cut}: {e}"
            );
        }
        let e = GgufHeader::read(&b"PK\x03\x04 not a model"[..], "x.zip").unwrap_err();
        assert!(matches!(e, GgufError::NotGguf { .. }), "{e}");
        let mut v1 = good.clone();
        v1[4..8].copy_from_slice(&1u32.to_le_bytes());
        assert!(matches!(
            GgufHeader::read(&v1[..], "t").unwrap_err(),
            GgufError::Version { version: 1, .. }
        ));
        // A huge key length is refused before allocating.
        let mut huge = good.clone();
        huge[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = GgufHeader::read(&huge[..], "t").unwrap_err();
        assert!(e.to_string().contains("past the limit"), "{e}");
        // A huge tensor count too.
        let mut many = good.clone();
        many[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(GgufHeader::read(&many[..], "t").is_err());
        // Dimensions whose product overflows.
        let big = write_test_header(&[], &[], &[("w", &[u64::MAX, 3])]);
        let e = GgufHeader::read(&big[..], "t").unwrap_err();
        assert!(e.to_string().contains("impossibly large"), "{e}");
        // Flipping any single byte never panics.
        for i in 0..good.len() {
            let mut b = good.clone();
            b[i] ^= 0xff;
            let _ = GgufHeader::read(&b[..], "t");
        }
    }
}
