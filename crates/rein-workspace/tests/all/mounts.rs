//! Bind mounts inside the workspace. A bind mount of an outside folder lives on the same
//! filesystem (same `st_dev`), so only the mount id tells it apart: reads, writes, listings and
//! searches through it must be refused by both opening methods.
//!
//! Mounting needs a private mount namespace: the test re-runs itself under `unshare` (as root
//! a mount namespace is enough; otherwise a user namespace maps us to root in it). Where
//! neither is permitted it says so on stderr and skips, never silently.

use std::fs;
use std::path::Path;
use std::process::Command;

use rein_workspace::{RelPath, WalkOptions, Walker, Workspace, WorkspaceError};
use serde_json::{json, Value};

use crate::support::{both, data, desk, Fixture};

/// Set in the child process that runs inside the new mount namespace.
const CHILD_ENV: &str = "REIN_WORKSPACE_MOUNT_NAMESPACE_CHILD";
const TEST_NAME: &str = "mounts::a_bind_mount_inside_the_workspace_is_never_crossed";

/// `unshare` arguments to try, in order: plain (as root), then with a user namespace.
const UNSHARE_ARGS: [&[&str]; 2] = [
    &["--mount", "--propagation", "private"],
    &[
        "--user",
        "--map-root-user",
        "--mount",
        "--propagation",
        "private",
    ],
];

#[test]
fn a_bind_mount_inside_the_workspace_is_never_crossed() {
    if std::env::var_os(CHILD_ENV).is_some() {
        in_private_namespace();
        return;
    }
    let mut refusals = Vec::new();
    for args in UNSHARE_ARGS {
        // Can this sandbox make a mount namespace and bind-mount in it at all?
        let probe = Command::new("unshare")
            .args(args)
            .args(["sh", "-c", "d=$(mktemp -d) && mount --bind \"$d\" \"$d\" && umount \"$d\"; r=$?; rmdir \"$d\"; exit $r"])
            .output();
        match probe {
            Ok(out) if out.status.success() => {}
            Ok(out) => {
                refusals.push(format!(
                    "unshare {}: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
                continue;
            }
            Err(e) => {
                refusals.push(format!("unshare could not be run: {e}"));
                break;
            }
        }
        let exe = std::env::current_exe().unwrap();
        let out = Command::new("unshare")
            .args(args)
            .arg(&exe)
            .args([TEST_NAME, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "the bind-mount test failed inside the mount namespace:\n{stdout}\n{stderr}"
        );
        eprint!("{stderr}");
        return;
    }
    eprintln!(
        "SKIPPED {TEST_NAME}: this sandbox does not permit a private mount namespace ({})",
        refusals.join("; ")
    );
}

fn mount_bind(from: &Path, to: &Path) {
    let out = Command::new("mount")
        .arg("--bind")
        .arg(from)
        .arg(to)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mount --bind failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn umount(at: &Path) {
    let _ = Command::new("umount").arg(at).status();
}

fn rel(p: &str) -> RelPath {
    RelPath::parse(p).unwrap()
}

/// Records a breach unless `result` is a confinement refusal.
fn refused(
    breaches: &mut Vec<String>,
    what: &str,
    result: Result<impl std::fmt::Debug, WorkspaceError>,
) {
    match result {
        Err(WorkspaceError::Confinement(e)) => eprintln!("{what}: refused ({})", e.rule()),
        other => breaches.push(format!("{what} was not refused: {other:?}")),
    }
}

/// Runs inside the private mount namespace (see the module docs).
fn in_private_namespace() {
    let fx = Fixture::new();
    fx.write("inside.txt", "inside");
    fx.write("file-mount.txt", "placeholder");
    fs::create_dir(fx.path("mnt")).unwrap();
    fs::create_dir(fx.outside.join("deeper")).unwrap();
    fs::write(fx.outside.join("deeper/more.txt"), "TOP SECRET TOO").unwrap();
    // A folder and a single file of the outside, bind-mounted inside the workspace: the same
    // filesystem, so the same st_dev as the root.
    mount_bind(&fx.outside, &fx.path("mnt"));
    mount_bind(&fx.outside.join("secret.txt"), &fx.path("file-mount.txt"));
    assert_eq!(
        fs::read_to_string(fx.path("mnt/secret.txt")).unwrap(),
        "TOP SECRET"
    );

    let mut breaches = Vec::new();
    for ws in both(&fx.root) {
        let method = format!("{:?}", ws.open_method());
        eprintln!("-- {method}");
        for breach in check_refusals(&ws) {
            breaches.push(format!("{method}: {breach}"));
        }
    }

    // Unmount before anything can fail, so the temp folder's removal cannot reach through.
    umount(&fx.path("file-mount.txt"));
    umount(&fx.path("mnt"));
    assert!(
        breaches.is_empty(),
        "the bind mount was crossed:\n{}",
        breaches.join("\n")
    );
    // Nothing outside changed.
    assert_eq!(
        fs::read_to_string(fx.outside.join("secret.txt")).unwrap(),
        "TOP SECRET"
    );
    assert_eq!(
        fs::read_to_string(fx.outside.join("deeper/more.txt")).unwrap(),
        "TOP SECRET TOO"
    );
    let mut names: Vec<String> = fs::read_dir(&fx.outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["deeper", "secret.txt"]);
}

fn check_refusals(ws: &Workspace) -> Vec<String> {
    let mut breaches = Vec::new();
    let b = &mut breaches;
    // The lexical+link gate refuses the paths...
    for p in [
        "mnt/secret.txt",
        "mnt/new.txt",
        "mnt/deeper/more.txt",
        "mnt/deeper",
    ] {
        if let Ok(ok) = ws.resolve(p) {
            b.push(format!("resolve({p}) passed: {ok:?}"));
        }
    }
    // ...and every access refuses them even without it (a path checked earlier, a mount
    // appearing later).
    refused(b, "read", ws.read_bytes(&rel("mnt/secret.txt")));
    refused(b, "read prefix", ws.read_prefix(&rel("mnt/secret.txt"), 64));
    refused(b, "hash", ws.sha256_of(&rel("mnt/secret.txt")));
    refused(b, "read deeper", ws.read_bytes(&rel("mnt/deeper/more.txt")));
    refused(
        b,
        "read a file mount",
        ws.read_bytes(&rel("file-mount.txt")),
    );
    refused(b, "info", ws.info(&rel("mnt/secret.txt")));
    refused(b, "list", ws.list_dir(&rel("mnt")));
    refused(b, "list deeper", ws.list_dir(&rel("mnt/deeper")));
    refused(b, "write new", ws.stage(&rel("mnt/new.txt"), b"x"));
    refused(
        b,
        "write deeper",
        ws.stage(&rel("mnt/deeper/new.txt"), b"x"),
    );
    refused(b, "overwrite", ws.stage(&rel("mnt/secret.txt"), b"x"));
    refused(b, "remove", ws.remove(&rel("mnt/secret.txt")));

    // A listing names the mount points as unaddressable, and shows nothing of them.
    let listing = ws.list_dir(&RelPath::root()).unwrap();
    let names: Vec<&str> = listing.entries.iter().map(|e| e.name.as_str()).collect();
    if names != ["inside.txt"] || listing.unaddressable != ["file-mount.txt", "mnt"] {
        b.push(format!("the root listing shows a mount point: {listing:?}"));
    }

    // The walker (search, find_files, find_related, the stale-temp scan) stays out of it.
    let walk = Walker::new(ws, WalkOptions::default())
        .walk(&RelPath::root())
        .unwrap();
    let files: Vec<&str> = walk.files.iter().map(|f| f.path.as_str()).collect();
    if files != ["inside.txt"] {
        b.push(format!("the walk crossed a mount: {files:?}"));
    }

    // And the tools a model uses say no.
    let hits = data(ws, "search_text", json!({"pattern": "TOP SECRET"}));
    if hits["matches"] != json!([]) {
        b.push(format!("search_text found {}", hits["matches"]));
    }
    let found = data(ws, "find_files", json!({"pattern": "*.txt"}));
    if found["files"] != json!(["inside.txt"]) {
        b.push(format!("find_files found {}", found["files"]));
    }
    for (tool, args) in [
        ("read_file", json!({"path": "mnt/secret.txt"})),
        ("read_file", json!({"path": "file-mount.txt"})),
        ("list_dir", json!({"path": "mnt"})),
        ("file_info", json!({"path": "mnt/secret.txt"})),
        (
            "create_file",
            json!({"path": "mnt/new.txt", "content": "x"}),
        ),
        (
            "replace_file",
            json!({"path": "mnt/secret.txt", "content": "x"}),
        ),
        ("delete_file", json!({"path": "mnt/secret.txt"})),
    ] {
        match desk(ws, tool, args.clone()) {
            Err(e) => eprintln!("{tool} {args}: {e}"),
            Ok(out) => b.push(format!(
                "{tool} {args} was not refused: {:?}",
                out.to_json()
            )),
        }
    }
    let _: Value = data(ws, "read_file", json!({"path": "inside.txt"}));
    breaches
}
