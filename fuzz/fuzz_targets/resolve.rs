//! Fuzzes the path resolver: whatever the model sends, a path that resolves must be relative,
//! normalised, free of `..` and NUL, stable under re-parsing, and must never read the secret
//! placed beside the workspace (reached only through a link, which must be refused).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rein_workspace::{RelPath, Workspace};

const SECRET: &[u8] = b"FUZZ-SECRET";

fn fixture() -> &'static (PathBuf, Workspace) {
    static FIXTURE: OnceLock<(PathBuf, Workspace)> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("rein-fuzz-{}", std::process::id()));
        let root = base.join("ws");
        let outside = base.join("outside");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret"), SECRET).unwrap();
        std::fs::write(root.join("a/file"), b"inside").unwrap();
        let _ = std::os::unix::fs::symlink(&outside, root.join("out"));
        let _ = std::os::unix::fs::symlink(outside.join("secret"), root.join("a/leaf"));
        let ws = Workspace::open(&root).unwrap();
        (root, ws)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (_, ws) = fixture();
    let Ok(rel) = ws.resolve(text) else { return };
    let s = rel.as_str();
    assert!(!s.starts_with('/'), "absolute: {s:?}");
    assert!(!s.contains('\0'), "NUL: {s:?}");
    assert!(
        rel.components()
            .all(|c| c != ".." && c != "." && !c.is_empty()),
        "{s:?}"
    );
    assert_eq!(
        RelPath::parse(s).ok().as_ref(),
        Some(&rel),
        "re-parse changed {s:?}"
    );
    if let Ok(Some(bytes)) = ws.read_bytes(&rel) {
        assert_ne!(bytes, SECRET, "{s:?} read the secret outside the workspace");
    }
});
