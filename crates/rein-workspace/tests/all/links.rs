//! Links at every position, a symlinked root, and links swapped in after `resolve`.

use std::fs;

use rein_workspace::{ConfinementError, RelPath, Workspace, WorkspaceError};

use crate::support::{both, symlink, Fixture};

fn is_link_error(e: &WorkspaceError) -> bool {
    matches!(
        e,
        WorkspaceError::Confinement(ConfinementError::Link { .. })
    )
}

#[test]
fn symlink_at_a_middle_component_is_refused() {
    let fx = Fixture::new();
    fx.write("real/file.txt", "inside");
    symlink(fx.root.join("real"), fx.path("alias"));
    symlink(&fx.outside, fx.path("out"));
    let ws = fx.ws();
    let err = ws.resolve("alias/file.txt").unwrap_err();
    assert_eq!(
        err,
        ConfinementError::Link {
            path: "alias".into(),
            kind: "symbolic link"
        }
    );
    assert!(err.to_string().contains("alias"), "{err}");
    assert_eq!(ws.resolve("out/secret.txt").unwrap_err().rule(), "link");
    assert_eq!(
        ws.resolve("real/file.txt").unwrap().as_str(),
        "real/file.txt"
    );
}

#[test]
fn symlink_at_the_leaf_is_refused_even_dangling() {
    let fx = Fixture::new();
    symlink(fx.outside.join("secret.txt"), fx.path("leaf.txt"));
    symlink(fx.outside.join("nope"), fx.path("dangling.txt"));
    symlink("sibling.txt", fx.path("inner.txt"));
    fx.write("sibling.txt", "x");
    let ws = fx.ws();
    for p in ["leaf.txt", "dangling.txt", "inner.txt"] {
        assert_eq!(ws.resolve(p).unwrap_err().rule(), "link", "{p}");
    }
}

#[test]
fn hard_links_are_refused() {
    let fx = Fixture::new();
    // Same filesystem (both under one temp dir), so a hard link is possible.
    fs::hard_link(fx.outside.join("secret.txt"), fx.path("hard.txt")).unwrap();
    let ws = fx.ws();
    let err = ws.resolve("hard.txt").unwrap_err();
    assert!(err.to_string().contains("hard link"), "{err}");
    let err = ws
        .read_bytes(&RelPath::parse("hard.txt").unwrap())
        .unwrap_err();
    assert!(is_link_error(&err), "{err}");
    // Nor is its size given: it may be that of a file policy protects under its other name.
    let hard = RelPath::parse("hard.txt").unwrap();
    assert_eq!(ws.info(&hard).unwrap().unwrap().size, None);
    let listing = ws.list_dir(&RelPath::root()).unwrap();
    let entry = listing
        .entries
        .iter()
        .find(|e| e.name == "hard.txt")
        .unwrap();
    assert_eq!(entry.size, None, "{entry:?}");
}

#[test]
fn links_are_refused_on_every_access_path() {
    let fx = Fixture::new();
    symlink(&fx.outside, fx.path("out"));
    symlink(fx.outside.join("secret.txt"), fx.path("leaf.txt"));
    for ws in both(&fx.root) {
        let through = RelPath::parse("out/secret.txt").unwrap();
        let leaf = RelPath::parse("leaf.txt").unwrap();
        assert!(is_link_error(&ws.read_bytes(&through).unwrap_err()));
        assert!(is_link_error(&ws.read_bytes(&leaf).unwrap_err()));
        assert!(is_link_error(&ws.sha256_of(&leaf).unwrap_err()));
        assert!(is_link_error(&ws.stage(&through, b"x").unwrap_err()));
        assert!(is_link_error(&ws.stage(&leaf, b"x").unwrap_err()));
        assert!(is_link_error(&ws.remove(&leaf).unwrap_err()));
        assert!(ws.list_dir(&RelPath::parse("out").unwrap()).is_err());
        assert!(is_link_error(
            &ws.stage(&RelPath::parse("out/new.txt").unwrap(), b"x")
                .unwrap_err()
        ));
    }
    assert_eq!(
        fs::read_to_string(fx.outside.join("secret.txt")).unwrap(),
        "TOP SECRET"
    );
    assert!(!fx.outside.join("new.txt").exists());
    assert!(fx
        .path("leaf.txt")
        .symlink_metadata()
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn a_symlinked_root_is_followed_once_at_open() {
    let fx = Fixture::new();
    fx.write("docs/a.md", "hello");
    let alias = fx.root.parent().unwrap().join("ws-alias");
    symlink(&fx.root, &alias);
    let ws = Workspace::open(&alias).unwrap();
    let rel = ws.resolve("docs/a.md").unwrap();
    assert_eq!(ws.read_bytes(&rel).unwrap().unwrap(), b"hello");
    assert_eq!(
        ws.display_root(),
        fs::canonicalize(&fx.root).unwrap().display().to_string()
    );
}

#[test]
fn a_symlinked_subfolder_of_the_root_is_refused() {
    let fx = Fixture::new();
    fx.write("data/x.txt", "x");
    symlink(fx.path("data"), fx.path("linked-data"));
    let ws = fx.ws();
    assert_eq!(ws.resolve("linked-data/x.txt").unwrap_err().rule(), "link");
    assert_eq!(ws.resolve("linked-data").unwrap_err().rule(), "link");
}

#[test]
fn a_link_swapped_in_after_resolve_cannot_redirect_a_read() {
    let fx = Fixture::new();
    fs::write(fx.outside.join("file.txt"), "OUTSIDE").unwrap();
    for ws in both(&fx.root) {
        fx.write("sub/file.txt", "inside");
        let rel = ws.resolve("sub/file.txt").unwrap();
        // Swap the folder for a link to the outside after the check.
        fs::rename(fx.path("sub"), fx.path("sub-old")).unwrap();
        symlink(&fx.outside, fx.path("sub"));
        let err = ws.read_bytes(&rel).unwrap_err();
        assert!(is_link_error(&err), "{:?}: {err}", ws.open_method());
        assert!(err.to_string().contains("sub"), "{err}");
        fs::remove_file(fx.path("sub")).unwrap();
        fs::remove_dir_all(fx.path("sub-old")).unwrap();
    }
}

#[test]
fn a_link_swapped_in_at_the_leaf_cannot_redirect_a_read_or_write() {
    let fx = Fixture::new();
    for ws in both(&fx.root) {
        fx.write("notes.txt", "inside");
        let rel = ws.resolve("notes.txt").unwrap();
        fs::remove_file(fx.path("notes.txt")).unwrap();
        symlink(fx.outside.join("secret.txt"), fx.path("notes.txt"));
        assert!(is_link_error(&ws.read_bytes(&rel).unwrap_err()));
        assert!(is_link_error(&ws.stage(&rel, b"overwrite").unwrap_err()));
        fs::remove_file(fx.path("notes.txt")).unwrap();
    }
    assert_eq!(
        fs::read_to_string(fx.outside.join("secret.txt")).unwrap(),
        "TOP SECRET"
    );
}

#[test]
fn a_link_swapped_in_after_stage_cannot_redirect_the_publish() {
    let fx = Fixture::new();
    for ws in both(&fx.root) {
        fx.write("sub/file.txt", "old");
        let rel = ws.resolve("sub/file.txt").unwrap();
        let staged = ws.stage(&rel, b"new").unwrap();
        fs::rename(fx.path("sub"), fx.path("sub-old")).unwrap();
        symlink(&fx.outside, fx.path("sub"));
        staged.publish().unwrap();
        // The write landed in the folder that was checked, never outside.
        assert_eq!(
            fs::read_to_string(fx.path("sub-old/file.txt")).unwrap(),
            "new"
        );
        assert!(!fx.outside.join("file.txt").exists());
        fs::remove_file(fx.path("sub")).unwrap();
        fs::remove_dir_all(fx.path("sub-old")).unwrap();
    }
}

#[test]
fn a_link_swapped_in_for_a_middle_folder_cannot_redirect_a_new_write() {
    let fx = Fixture::new();
    for ws in both(&fx.root) {
        fs::create_dir_all(fx.path("a/b")).unwrap();
        let rel = ws.resolve("a/b/new.txt").unwrap();
        fs::remove_dir(fx.path("a/b")).unwrap();
        symlink(&fx.outside, fx.path("a/b"));
        let err = ws.stage(&rel, b"x").unwrap_err();
        assert!(is_link_error(&err), "{err}");
        fs::remove_file(fx.path("a/b")).unwrap();
    }
    assert!(!fx.outside.join("new.txt").exists());
}

#[test]
fn reports_the_open_method() {
    let fx = Fixture::new();
    let ws = fx.ws();
    eprintln!("open method on this kernel: {:?}", ws.open_method());
    assert_eq!(
        Workspace::open_with_walk_fallback(&fx.root)
            .unwrap()
            .open_method(),
        rein_workspace::OpenMethod::Walk
    );
}

#[test]
fn opening_a_missing_or_non_folder_root_says_so() {
    let fx = Fixture::new();
    let err = Workspace::open(&fx.root.join("missing")).unwrap_err();
    assert!(err.to_string().contains("could not be opened"), "{err}");
    fx.write("f.txt", "x");
    let err = Workspace::open(&fx.path("f.txt")).unwrap_err();
    assert!(err.to_string().contains("folder"), "{err}");
}
