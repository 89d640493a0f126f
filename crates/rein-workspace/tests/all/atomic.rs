//! Staged writes, publish, removal and stale temp files.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use rein_workspace::{RelPath, WorkspaceError, TEMP_PREFIX};
use serde_json::json;

use crate::support::{data, Fixture};

fn rel(p: &str) -> RelPath {
    RelPath::parse(p).unwrap()
}

#[test]
fn stage_then_publish_replaces_atomically() {
    let fx = Fixture::new();
    fx.write("doc.md", "old");
    let ws = fx.ws();
    let staged = ws.stage(&rel("doc.md"), b"new").unwrap();
    // Between the steps the target is untouched and the temp is recognisable.
    assert_eq!(fs::read_to_string(fx.path("doc.md")).unwrap(), "old");
    let temp = staged.temp().clone();
    assert!(temp.file_name().unwrap().starts_with(TEMP_PREFIX));
    assert_eq!(fs::read_to_string(fx.path(temp.as_str())).unwrap(), "new");
    assert_eq!(ws.stale_temps().unwrap(), vec![temp.clone()]);
    staged.publish().unwrap();
    assert_eq!(fs::read_to_string(fx.path("doc.md")).unwrap(), "new");
    assert!(ws.stale_temps().unwrap().is_empty());
    assert_eq!(ws.read_bytes(&rel("doc.md")).unwrap().unwrap(), b"new");
}

#[test]
fn stage_creates_parent_folders_beneath_the_root() {
    let fx = Fixture::new();
    let ws = fx.ws();
    ws.write_atomic(&rel("x/y/z/new.txt"), b"deep").unwrap();
    assert_eq!(
        fs::read_to_string(fx.path("x/y/z/new.txt")).unwrap(),
        "deep"
    );
}

#[test]
fn publish_keeps_the_permission_bits_of_the_replaced_file() {
    let fx = Fixture::new();
    fx.write("run.sh", "#!/bin/sh\n");
    fs::set_permissions(fx.path("run.sh"), fs::Permissions::from_mode(0o750)).unwrap();
    let ws = fx.ws();
    ws.write_atomic(&rel("run.sh"), b"#!/bin/sh\necho hi\n")
        .unwrap();
    assert_eq!(
        fs::metadata(fx.path("run.sh"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o750
    );
}

#[test]
fn dropping_or_discarding_a_staged_write_removes_its_temp() {
    let fx = Fixture::new();
    let ws = fx.ws();
    drop(ws.stage(&rel("a.txt"), b"x").unwrap());
    ws.stage(&rel("b.txt"), b"x").unwrap().discard().unwrap();
    assert!(ws.stale_temps().unwrap().is_empty());
    assert!(!fx.path("a.txt").exists() && !fx.path("b.txt").exists());
}

#[test]
fn a_crash_between_steps_leaves_the_target_whole_and_a_findable_temp() {
    let fx = Fixture::new();
    fx.write("keep/data.json", "{\"v\":1}");
    fx.write(".gitignore", "keep/\n");
    let ws = fx.ws();
    // `forget` is what a SIGKILL does: no destructor runs.
    std::mem::forget(ws.stage(&rel("keep/data.json"), b"{\"v\":2}").unwrap());
    std::mem::forget(ws.stage(&rel("top.txt"), b"new").unwrap());
    assert_eq!(
        fs::read_to_string(fx.path("keep/data.json")).unwrap(),
        "{\"v\":1}"
    );
    let stale = ws.stale_temps().unwrap();
    assert_eq!(stale.len(), 2, "{stale:?}");
    // Never shown by listing or search tools.
    let listing = data(&ws, "list_dir", json!({}));
    assert!(!listing.to_string().contains(TEMP_PREFIX), "{listing}");
    let found = data(&ws, "find_files", json!({"pattern": "*"}));
    assert!(!found.to_string().contains(TEMP_PREFIX), "{found}");
    let hits = data(&ws, "search_text", json!({"pattern": "new"}));
    assert!(!hits.to_string().contains(TEMP_PREFIX), "{hits}");
    // A model cannot name them either.
    assert_eq!(
        ws.resolve(stale[0].as_str()).unwrap_err().rule(),
        "reserved_name"
    );
    let cleaned = ws.clean_stale_temps().unwrap();
    assert_eq!(cleaned, stale);
    assert!(ws.stale_temps().unwrap().is_empty());
    assert!(!fx.path("top.txt").exists());
}

#[test]
fn remove_is_idempotent_and_refuses_folders() {
    let fx = Fixture::new();
    fx.write("d/f.txt", "x");
    let ws = fx.ws();
    assert!(ws.remove(&rel("d/f.txt")).unwrap());
    assert!(!ws.remove(&rel("d/f.txt")).unwrap());
    assert!(!ws.remove(&rel("nowhere/f.txt")).unwrap());
    assert!(matches!(
        ws.remove(&rel("d")).unwrap_err(),
        WorkspaceError::NotAFile { .. }
    ));
    assert!(matches!(
        ws.stage(&rel("d"), b"x").unwrap_err(),
        WorkspaceError::NotAFile { .. }
    ));
}

#[test]
fn read_and_hash_report_absence_as_none() {
    let fx = Fixture::new();
    fx.write("a.bin", [0u8, 1, 2, 255]);
    let ws = fx.ws();
    assert_eq!(ws.read_bytes(&rel("missing.txt")).unwrap(), None);
    assert_eq!(ws.sha256_of(&rel("missing.txt")).unwrap(), None);
    assert_eq!(ws.read_bytes(&rel("a.bin/inner")).unwrap(), None);
    use sha2::Digest;
    let expected = hex::encode(sha2::Sha256::digest([0u8, 1, 2, 255]));
    assert_eq!(ws.sha256_of(&rel("a.bin")).unwrap().unwrap(), expected);
    let fifo_err = {
        let status = std::process::Command::new("mkfifo")
            .arg(fx.path("pipe"))
            .status();
        status
            .ok()
            .filter(|s| s.success())
            .map(|_| ws.read_bytes(&rel("pipe")).unwrap_err())
    };
    if let Some(err) = fifo_err {
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
}
