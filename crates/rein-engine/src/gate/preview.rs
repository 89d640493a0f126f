//! What a sandbox mutation would change, as a diff a person can approve. Sandbox tools act on
//! the in-memory sandbox directly, so the gate runs them on a copy first and shows the
//! difference; only an approved copy replaces the sandbox.

use rein_workspace::{Proposal, RelPath, Sandbox};
use sha2::{Digest, Sha256};

/// The change from `before` to `after`: a unified diff per changed file, one line per changed
/// variable and for the final answer. Also the hashes of the one file changed, if exactly one.
pub(crate) struct Preview {
    pub diff: String,
    pub before_sha256: Option<String>,
    pub after_sha256: Option<String>,
}

pub(crate) fn sandbox_preview(before: &Sandbox, after: &Sandbox) -> Preview {
    let mut diff = String::new();
    let mut hashes = Vec::new();
    let paths: std::collections::BTreeSet<&String> =
        before.files.keys().chain(after.files.keys()).collect();
    for path in paths {
        let old = before.files.get(path);
        let new = after.files.get(path);
        if old == new {
            continue;
        }
        let sha = |s: Option<&String>| s.map(|s| hex::encode(Sha256::digest(s.as_bytes())));
        hashes.push((sha(old), sha(new)));
        match RelPath::parse(path) {
            Ok(rel) => {
                let proposal = Proposal::new(
                    rel,
                    old.map(|s| s.as_bytes().to_vec()),
                    new.map(|s| s.as_bytes().to_vec()),
                );
                diff.push_str(&proposal.diff);
            }
            Err(_) => diff.push_str(&format!("file {path:?} changes\n")),
        }
    }
    let names: std::collections::BTreeSet<&String> = before
        .variables
        .keys()
        .chain(after.variables.keys())
        .collect();
    for name in names {
        let old = before.variables.get(name);
        let new = after.variables.get(name);
        if old != new {
            let show =
                |v: Option<&serde_json::Value>| v.map_or("unset".to_string(), |v| v.to_string());
            diff.push_str(&format!(
                "variable {name}: {} -> {}\n",
                show(old),
                show(new)
            ));
        }
    }
    if before.final_answer != after.final_answer {
        diff.push_str(&format!(
            "final answer: {}\n",
            serde_json::Value::from(after.final_answer.clone())
        ));
    }
    let (before_sha256, after_sha256) = match hashes.as_slice() {
        [(old, new)] => (old.clone(), new.clone()),
        _ => (None, None),
    };
    Preview {
        diff,
        before_sha256,
        after_sha256,
    }
}
