//! Every lexical confinement rule at its edge.

use rein_workspace::confine::{MAX_COMPONENT_BYTES, MAX_DEPTH, MAX_PATH_BYTES};
use rein_workspace::{ConfinementError, RelPath};

use crate::support::Fixture;

fn rule(path: &str) -> &'static str {
    match RelPath::parse(path) {
        Ok(p) => panic!("{path:?} should be refused, resolved to {p:?}"),
        Err(e) => e.rule(),
    }
}

fn ok(path: &str) -> String {
    RelPath::parse(path)
        .unwrap_or_else(|e| panic!("{path:?} should pass: {e}"))
        .to_string()
}

#[test]
fn parent_components() {
    for p in ["..", "../x", "a/..", "a/../b", "a/b/../../..", "./.."] {
        assert_eq!(rule(p), "parent_component", "{p}");
    }
    // Names that merely contain dots are fine.
    assert_eq!(ok("..a"), "..a");
    assert_eq!(ok("a..b/c"), "a..b/c");
    assert_eq!(ok(".hidden"), ".hidden");
}

#[test]
fn absolute_paths() {
    for p in [
        "/etc/passwd",
        "/",
        "//server/share",
        "\\windows",
        "C:\\x",
        "c:x",
        "C:/Windows",
    ] {
        assert_eq!(rule(p), "absolute", "{p}");
    }
    assert_eq!(rule("~/x"), "home_shorthand");
    // The example in the message is the path's own file name, never another file a small model
    // would copy: the 0.5B, told `like "notes/todo.md"`, wrote to notes/todo.md twelve times.
    for (p, name) in [
        ("/workspace/shopping.txt", "shopping.txt"),
        ("/workspace/notes/", "notes"),
        ("C:\\x\\a.md", "a.md"),
        ("c:a.md", "notes.md"),
        ("/", "notes.md"),
    ] {
        let msg = RelPath::parse(p).unwrap_err().to_string();
        assert!(msg.contains(&format!("like \"{name}\"")), "{p}: {msg}");
    }
}

#[test]
fn empty_and_nul() {
    assert_eq!(rule(""), "empty");
    assert_eq!(rule("   "), "empty");
    assert_eq!(rule("a\0b"), "nul");
    assert_eq!(rule("\0"), "nul");
    // "." names the root itself.
    assert!(RelPath::parse(".").unwrap().is_root());
    assert_eq!(ok("./a//b/./"), "a/b");
}

#[test]
fn device_names() {
    for p in [
        "CON",
        "con",
        "con.txt",
        "COM1",
        "com9.log",
        "LPT9.md",
        "lpt1",
        "PRN",
        "AUX.c",
        "NUL",
        "dir/nul.tar.gz",
        "CON .txt",
    ] {
        assert_eq!(rule(p), "device_name", "{p}");
    }
    for p in [
        "CONSOLE",
        "COM0",
        "COM10",
        "LPT",
        "icon.txt",
        "contact.md",
        "nullable/x",
        "auxiliary",
    ] {
        ok(p);
    }
}

#[test]
fn trailing_dot_or_space() {
    for p in ["a.", "a ", "dir./x", "dir /x", "file.txt.", "..."] {
        assert_eq!(rule(p), "trailing_dot_or_space", "{p}");
    }
    ok(" leading");
    ok("a.b");
}

#[test]
fn forbidden_characters_and_reserved_names() {
    for p in [
        "a\\b",
        "ab:c",
        "what?",
        "star*",
        "pipe|x",
        "tab\tname",
        "line\nbreak",
    ] {
        assert_eq!(rule(p), "forbidden_character", "{p:?}");
    }
    assert_eq!(rule(".git/config"), "reserved_name");
    assert_eq!(rule("sub/.GIT/hooks/pre-commit"), "reserved_name");
    assert_eq!(rule(".rein-tmp-abc"), "reserved_name");
    ok(".gitignore");
    ok(".github/workflows/ci.yml");
}

#[test]
fn length_limits_at_the_edge() {
    let name = "n".repeat(MAX_COMPONENT_BYTES);
    ok(&name);
    assert_eq!(rule(&format!("{name}n")), "component_too_long");

    let deep = vec!["d"; MAX_DEPTH].join("/");
    ok(&deep);
    assert_eq!(rule(&format!("{deep}/d")), "too_deep");

    let long = vec!["x".repeat(200); MAX_PATH_BYTES / 201 + 1].join("/");
    assert!(long.len() > MAX_PATH_BYTES);
    assert_eq!(rule(&long), "too_long");
}

#[test]
fn messages_name_the_rule_and_what_to_do() {
    let msg = RelPath::parse("../x").unwrap_err().to_string();
    assert!(
        msg.contains("..") && msg.contains("workspace root"),
        "{msg}"
    );
    let msg = RelPath::parse("/etc/passwd").unwrap_err().to_string();
    assert!(
        msg.contains("absolute") && msg.contains("relative"),
        "{msg}"
    );
    let msg = RelPath::parse("COM1.txt").unwrap_err().to_string();
    assert!(msg.contains("device name"), "{msg}");
}

#[test]
fn resolve_applies_the_same_rules() {
    let fx = Fixture::new();
    let ws = fx.ws();
    assert_eq!(
        ws.resolve("../outside/secret.txt").unwrap_err(),
        ConfinementError::ParentComponent
    );
    assert!(matches!(
        ws.resolve("/etc/passwd"),
        Err(ConfinementError::Absolute { .. })
    ));
    // A path that does not exist yet resolves: it may be about to be created.
    assert_eq!(
        ws.resolve("new/dir/file.md").unwrap().as_str(),
        "new/dir/file.md"
    );
}

#[test]
fn relpath_serde_round_trip_reapplies_rules() {
    let p = RelPath::parse("a/b.txt").unwrap();
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(json, "\"a/b.txt\"");
    assert_eq!(serde_json::from_str::<RelPath>(&json).unwrap(), p);
    assert!(serde_json::from_str::<RelPath>("\"../etc\"").is_err());
    assert_eq!(serde_json::to_string(&RelPath::root()).unwrap(), "\".\"");
}
