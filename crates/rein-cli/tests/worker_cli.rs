#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `rein worker` refuses model files that are not what the catalog promised, with a clear
//! message and exit code 3, before it says hello.

use std::process::Command;

fn worker(path: &std::path::Path, size: u64) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rein"))
        .args(["worker", "--spec", "test", "--model-path"])
        .arg(path)
        .args(["--size", &size.to_string(), "--template", "builtin"])
        .args(["--threads", "1", "--context", "512"])
        .output()
        .unwrap()
}

#[test]
fn a_truncated_model_file_is_refused_by_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.gguf");
    std::fs::write(&path, b"GGUF\x03\x00\x00\x00").unwrap();
    let out = worker(&path, 491_400_064);
    assert_eq!(out.status.code(), Some(3));
    assert!(out.stdout.is_empty(), "no hello for a bad file");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("truncated"), "{err}");
    assert!(err.contains("rein models pull"), "{err}");
}

#[test]
fn a_corrupt_model_file_is_refused_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.gguf");
    let bytes: Vec<u8> = b"GGUF"
        .iter()
        .copied()
        .chain((0..4096u32).map(|i| (i * 7) as u8))
        .collect();
    std::fs::write(&path, &bytes).unwrap();
    let out = worker(&path, bytes.len() as u64);
    assert_eq!(out.status.code(), Some(3));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot load the model file"), "{err}");
}

#[test]
fn a_missing_model_file_is_refused() {
    let out = worker(std::path::Path::new("/nonexistent/model.gguf"), 10);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/model.gguf"), "{err}");
}
