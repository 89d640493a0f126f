//! Property: no generated path (random components, `..`, `.`, links, device names, absolute
//! prefixes) resolves or opens outside the workspace, by either opening method.

use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use rein_workspace::{RelPath, Workspace};

use crate::support::{both, symlink, Fixture};

const PARTS: [&str; 14] = [
    "a",
    "b",
    "..",
    ".",
    "",
    "file.txt",
    "link_out",
    "link_in",
    "link_file",
    "CON",
    "x ",
    "new",
    "\\..",
    "~",
];

fn fixture() -> Fixture {
    let fx = Fixture::new();
    fx.write("a/b/file.txt", "inside-b");
    fx.write("file.txt", "inside");
    symlink(&fx.outside, fx.path("link_out"));
    symlink(fx.path("a"), fx.path("a/link_in"));
    symlink(fx.outside.join("secret.txt"), fx.path("a/link_file"));
    fx
}

/// Lexically joins `rel` onto `root` and resolves what exists with the OS, for an independent
/// check of where the path really leads.
fn real_location(root: &Path, rel: &RelPath) -> PathBuf {
    let mut p = root.to_path_buf();
    for c in rel.components() {
        p.push(c);
    }
    let mut existing = p.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (
            existing.file_name().map(|n| n.to_owned()),
            existing.parent().map(Path::to_path_buf),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent;
            }
            _ => break,
        }
    }
    let mut canonical = fs::canonicalize(&existing).unwrap_or(existing);
    for name in rest.into_iter().rev() {
        canonical.push(name);
    }
    canonical
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn nothing_resolves_or_opens_outside(
        parts in prop::collection::vec(prop::sample::select(PARTS.to_vec()), 1..6),
        leading_slash in any::<bool>(),
    ) {
        let fx = fixture();
        let root = fs::canonicalize(&fx.root).unwrap();
        let path = format!("{}{}", if leading_slash { "/" } else { "" }, parts.join("/"));
        for ws in both(&fx.root) {
            check(&ws, &root, &fx, &path)?;
        }
    }
}

fn check(ws: &Workspace, root: &Path, fx: &Fixture, path: &str) -> Result<(), TestCaseError> {
    let Ok(rel) = ws.resolve(path) else {
        // Refused paths are also refused lexically or by links; nothing was touched.
        prop_assert_eq!(
            fs::read_to_string(fx.outside.join("secret.txt")).unwrap(),
            "TOP SECRET"
        );
        return Ok(());
    };
    let location = real_location(root, &rel);
    prop_assert!(
        location.starts_with(root),
        "{path:?} -> {rel:?} leads to {location:?}"
    );
    if let Ok(Some(bytes)) = ws.read_bytes(&rel) {
        prop_assert_ne!(bytes, b"TOP SECRET".to_vec());
    }
    if let Ok(staged) = ws.stage(&rel, b"written") {
        staged.publish().unwrap();
    }
    prop_assert_eq!(
        fs::read_to_string(fx.outside.join("secret.txt")).unwrap(),
        "TOP SECRET"
    );
    prop_assert_eq!(fs::read_dir(&fx.outside).unwrap().count(), 1);
    Ok(())
}
