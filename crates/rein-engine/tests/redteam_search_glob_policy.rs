#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red team of commit 1f62682: the policy decides `search_text` with a wildcard `path` as a
//! call naming the folder walked (`GlobPath::folder`), and per-file visibility still filters
//! each walked file. Attacks: allow lists in every form, ask rules, hide_names, case, trailing
//! `/`, `**` against the folder itself, brackets and braces (also as real folder names),
//! content access and approvals, the other tools with a `*` in their path, and the policy
//! file's own protection. Every call goes through the gate, as `rein tool` sends it. Each
//! attack is kept, whether it held or found a defect.

use std::collections::BTreeMap;
use std::path::Path;

#[path = "gate_support/mod.rs"]
mod gate_support;

use gate_support::{answer_beyond, matched_paths, whole, GateEnv};
use rein_engine::gate::{
    AllowAll, ApprovalDecision, Approver, CallExecutor, Gate, GateConfig, NoApprover,
    ScriptedApprover,
};
use rein_engine::policy::Policy;
use rein_protocol::{GateOutcome, GateReport};
use rein_workspace::desk::glob_path;
use rein_workspace::Workspace;
use serde_json::{json, Value};

/// The secret's contents.
const SECRET: &str = "API_KEY=hunter2\nzebrafish rotation schedule\n";

/// Every file of the workspace; each holds "zebrafish" so a search for `.` names every file
/// it read.
const FILES: [(&str, &str); 14] = [
    ("secrets/key.env", SECRET),
    ("public/readme.md", "public zebrafish page\n"),
    ("public/sub/page.md", "sub zebrafish page\n"),
    ("notes/public/n.md", "notes public zebrafish\n"),
    ("notes/plan.md", "the zebrafish tank moves\n"),
    ("notes/sub/deep.txt", "deep zebrafish note\n"),
    ("archive.md/old.txt", "archived zebrafish letter\n"),
    ("{a,b}/lit.txt", "brace-folder zebrafish\n"),
    ("a/x.txt", "a zebrafish\n"),
    ("b/x.txt", "b zebrafish\n"),
    ("[x]/lit.txt", "bracket-folder zebrafish\n"),
    ("x/y.txt", "x zebrafish\n"),
    ("Public/upper.md", "upper zebrafish\n"),
    ("pub{lic}/odd.md", "odd zebrafish\n"),
];

type Env = GateEnv;

impl GateEnv {
    fn new() -> Env {
        GateEnv::with_files(&FILES)
    }

    fn submit(
        &self,
        toml: &str,
        tool: &str,
        arguments: Value,
        approver: &mut dyn Approver,
    ) -> GateReport {
        self.submit_with(self.policy(toml), tool, arguments, approver)
    }

    fn preview_with(&self, policy: Policy, tool: &str, arguments: Value) -> Result<String, String> {
        let ws = Workspace::open(&self.root).unwrap();
        let gate = Gate::new(GateConfig::desk(
            &self.registry,
            &ws,
            &self.journal,
            policy,
            None,
        ));
        gate.preview(&GateEnv::call(tool, arguments))
            .map(|p| p.to_json().to_string())
    }

    /// `search_text` for every line (`.`) under `path`.
    fn search(&self, toml: &str, path: &str, approver: &mut dyn Approver) -> GateReport {
        self.submit(
            toml,
            "search_text",
            json!({"pattern": ".", "path": path}),
            approver,
        )
    }

    /// Whether `read_file` of `file` runs under `toml` without anyone asked.
    fn read_file_runs(&self, toml: &str, file: &str) -> bool {
        self.submit(toml, "read_file", json!({"path": file}), &mut NoApprover)
            .outcome
            == GateOutcome::Executed
    }

    /// Every file under the root with its bytes, to show nothing changed.
    fn snapshot(&self) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        snapshot_into(&self.root, &self.root, &mut out);
        out
    }
}

fn snapshot_into(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            snapshot_into(root, &path, out);
        } else {
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            out.insert(rel, std::fs::read(&path).unwrap());
        }
    }
}

fn skipped(result: &Value) -> u64 {
    result["skipped_by_policy"].as_u64().unwrap_or(0)
}

fn secret_leaks(text: &str) -> Option<&'static str> {
    ["hunter2", "API_KEY", "rotation"]
        .into_iter()
        .find(|leak| text.contains(leak))
}

// ---------------------------------------------------------------------------------------------
// Policies of every form.
// ---------------------------------------------------------------------------------------------

/// A policy and whether its keeps hide names (so the skipped count must not move with the
/// glob part, and `secrets/key.env` must never be named).
struct Case {
    name: &'static str,
    toml: &'static str,
    hides_secret_name: bool,
}

/// A deny for the real folders named `{a,b}` and `[x]`, escaped so the globs name them.
const ESCAPED_LITERAL: &str =
    "[[rule]]\ntool = \"*\"\npaths = [\"\\\\{a,b\\\\}\", \"\\\\[x\\\\]/**\"]\naction = \"deny\"\n";
/// A deny for what `{a,b}` and `[x]` mean as globs.
const GLOB_MEANING: &str = "[[rule]]\ntool = \"*\"\npaths = [\"a/**\", \"x\"]\naction = \"deny\"\n";
/// search_text only under a `public` folder.
const ONLY_PUBLIC: &str = "[[rule]]\ntool = \"search_text\"\naction = \"deny\"\n\n\
     [[rule]]\ntool = \"search_text\"\npaths = [\"**/public/**\"]\naction = \"allow\"\n";
/// search_text only under `public/`.
const ONLY_PUBLIC_ROOT: &str = "[[rule]]\ntool = \"search_text\"\naction = \"deny\"\n\n\
     [[rule]]\ntool = \"search_text\"\npaths = [\"public/**\"]\naction = \"allow\"\n";
/// search_text asks outside a `public` folder.
const ASK_OUTSIDE_PUBLIC: &str = "[[rule]]\ntool = \"search_text\"\naction = \"ask\"\n\n\
     [[rule]]\ntool = \"search_text\"\npaths = [\"**/public/**\"]\naction = \"allow\"\n";
/// `deny` hides names by default.
const DENY_SECRETS: &str = "[[rule]]\ntool = \"*\"\npaths = [\"secrets/**\"]\naction = \"deny\"\n";

const CASES: &[Case] = &[
    Case {
        name: "search_text allow-list **/public/**",
        toml: ONLY_PUBLIC,
        hides_secret_name: false,
    },
    Case {
        name: "search_text allow-list public/**",
        toml: ONLY_PUBLIC_ROOT,
        hides_secret_name: false,
    },
    Case {
        name: "search_text allow-list public/ (trailing slash)",
        toml: "[[rule]]\ntool = \"search_text\"\naction = \"deny\"\n\n[[rule]]\ntool = \"search_text\"\npaths = [\"public/\"]\naction = \"allow\"\n",
        hides_secret_name: false,
    },
    Case {
        name: "search_text allow-list ./public",
        toml: "[[rule]]\ntool = \"search_text\"\naction = \"deny\"\n\n[[rule]]\ntool = \"search_text\"\npaths = [\"./public\"]\naction = \"allow\"\n",
        hides_secret_name: false,
    },
    Case {
        name: "search_text allow-list public/* (one level)",
        toml: "[[rule]]\ntool = \"search_text\"\naction = \"deny\"\n\n[[rule]]\ntool = \"search_text\"\npaths = [\"public/*\"]\naction = \"allow\"\n",
        hides_secret_name: false,
    },
    Case {
        name: "search_text allow-list [pP]ublic/** and {a,b}/**",
        toml: "[[rule]]\ntool = \"search_text\"\naction = \"deny\"\n\n[[rule]]\ntool = \"search_text\"\npaths = [\"[pP]ublic/**\", \"{a,b}/**\"]\naction = \"allow\"\n",
        hides_secret_name: false,
    },
    Case {
        name: "* allow-list public/**",
        toml: "[[rule]]\ntool = \"*\"\naction = \"deny\"\n\n[[rule]]\ntool = \"*\"\npaths = [\"public/**\"]\naction = \"allow\"\n",
        hides_secret_name: false,
    },
    Case {
        name: "read_file allow-list (search_text denied by coverage)",
        toml: "[[rule]]\ntool = \"read_file\"\naction = \"deny\"\n\n[[rule]]\ntool = \"read_file\"\npaths = [\"public/**\"]\naction = \"allow\"\n",
        hides_secret_name: false,
    },
    Case {
        name: "search_text ask-list **/public/**",
        toml: ASK_OUTSIDE_PUBLIC,
        hides_secret_name: false,
    },
    Case {
        name: "deny * secrets/** (names hidden)",
        toml: DENY_SECRETS,
        hides_secret_name: true,
    },
    Case {
        name: "deny * secrets/ hide_names = false",
        toml: "[[rule]]\ntool = \"*\"\npaths = [\"secrets/\"]\naction = \"deny\"\nhide_names = false\n",
        hides_secret_name: false,
    },
    Case {
        name: "deny * SECRETS (case, exact folder)",
        toml: "[[rule]]\ntool = \"*\"\npaths = [\"SECRETS\"]\naction = \"deny\"\n",
        hides_secret_name: true,
    },
    Case {
        name: "ask read_file secrets/**",
        toml: "[[rule]]\ntool = \"read_file\"\npaths = [\"secrets/**\"]\naction = \"ask\"\n",
        hides_secret_name: false,
    },
    Case {
        name: "ask read_file secrets hide_names = true",
        toml: "[[rule]]\ntool = \"read_file\"\npaths = [\"secrets\"]\naction = \"ask\"\nhide_names = true\n",
        hides_secret_name: true,
    },
    Case {
        name: "deny list_dir secrets/ (covers search_text)",
        toml: "[[rule]]\ntool = \"list_dir\"\npaths = [\"secrets/\"]\naction = \"deny\"\n",
        hides_secret_name: true,
    },
    Case {
        name: "deny search_text secrets/*.env",
        toml: "[[rule]]\ntool = \"search_text\"\npaths = [\"secrets/*.env\"]\naction = \"deny\"\n",
        hides_secret_name: true,
    },
    Case {
        name: "deny * **/*.env",
        toml: "[[rule]]\ntool = \"*\"\npaths = [\"**/*.env\"]\naction = \"deny\"\n",
        hides_secret_name: true,
    },
    Case {
        name: "deny * secrets/key.env (the file alone)",
        toml: "[[rule]]\ntool = \"*\"\npaths = [\"secrets/key.env\"]\naction = \"deny\"\n",
        hides_secret_name: true,
    },
    Case {
        name: "deny * on literal folders \\{a,b\\} and \\[x\\]",
        toml: ESCAPED_LITERAL,
        hides_secret_name: false,
    },
    Case {
        name: "deny * a/** and x (what {a,b} and [x] mean as globs)",
        toml: GLOB_MEANING,
        hides_secret_name: false,
    },
];

const WILDCARD_PATHS: &[&str] = &[
    "*",
    "**",
    "?*",
    "*/*",
    "**/*",
    "public/*",
    "public/**",
    "public/*/",
    "public//*",
    "./public/./*",
    "public/s?b/*",
    "public/sub/*",
    "public/sub/page.m?",
    "p*/**",
    "?ublic/*",
    "[ps]ublic/*",
    "[pP]ublic/**",
    "Public/*",
    "PUBLIC/*",
    "notes/*/n.md",
    "notes/p?blic/*",
    "notes/public/*",
    "*/public/*",
    "**/public/**",
    "{*/public/x,secrets/key.env}",
    "{public,secrets}/*",
    "{public/x,secrets}/*",
    "public/{x,../secrets}/*",
    "pub{lic}/*",
    "pub{lic,lic/../../secrets}/*",
    "{a,b}/*",
    "{a,b}/**",
    "a/*",
    "[x]/*",
    "[x]/**",
    "x/*",
    "secrets/*",
    "SECRETS/*",
    "Secrets/*",
    "./secrets//*",
    "secrets/key.env/*",
    "secrets/key.e?v",
    "s*/key.env",
    "archive.md/*",
    "public/../secrets/*",
    "public/sub/../../secrets/*",
];

/// Claim 1: a wildcard path is decided as its walked folder, reads only what that folder's
/// plain call reads, and only files `read_file` may read; its hidden count is the folder's.
#[test]
fn every_policy_form_decides_a_wildcard_path_as_the_plain_walked_folder() {
    let env = Env::new();
    let mut wrong = Vec::new();
    for case in CASES {
        for &path in WILDCARD_PATHS {
            let folder = glob_path(path).unwrap().folder;
            for allow in [false, true] {
                let (wild, plain) = if allow {
                    (
                        env.search(case.toml, path, &mut AllowAll),
                        env.search(case.toml, &folder, &mut AllowAll),
                    )
                } else {
                    (
                        env.search(case.toml, path, &mut NoApprover),
                        env.search(case.toml, &folder, &mut NoApprover),
                    )
                };
                let at = format!(
                    "[{}] path {path:?} (folder {folder:?}, approver {}):",
                    case.name,
                    if allow { "AllowAll" } else { "none" }
                );
                // The policy part of the decision is the folder's.
                let refused_by_policy = |o: GateOutcome| {
                    matches!(o, GateOutcome::Denied | GateOutcome::ApprovalRequired)
                };
                if refused_by_policy(plain.outcome) && wild.outcome != plain.outcome {
                    wrong.push(format!(
                        "{at} the folder is {} but the wildcard path is {}",
                        whole(&plain),
                        whole(&wild)
                    ));
                    continue;
                }
                if refused_by_policy(wild.outcome) && wild.outcome != plain.outcome {
                    wrong.push(format!(
                        "{at} the wildcard path is {} but the folder is {}",
                        whole(&wild),
                        whole(&plain)
                    ));
                    continue;
                }
                if wild.outcome != GateOutcome::Executed {
                    continue;
                }
                let wild_read = matched_paths(&wild.result);
                let plain_read = matched_paths(&plain.result);
                for file in &wild_read {
                    if !plain_read.contains(file) {
                        wrong.push(format!("{at} read {file}, which the folder's call did not"));
                    }
                    if !env.read_file_runs(case.toml, file) {
                        wrong.push(format!("{at} read {file}, which read_file may not"));
                    }
                }
                if skipped(&wild.result) > skipped(&plain.result)
                    || (case.hides_secret_name && skipped(&wild.result) != skipped(&plain.result))
                {
                    wrong.push(format!(
                        "{at} skipped_by_policy {} but the folder's call {}",
                        skipped(&wild.result),
                        skipped(&plain.result)
                    ));
                }
                let beyond = answer_beyond(&wild, path);
                if case.hides_secret_name && beyond.contains("key.env") {
                    wrong.push(format!("{at} named the hidden file: {beyond}"));
                }
                if let Some(leak) = secret_leaks(&beyond) {
                    if !env.read_file_runs(case.toml, "secrets/key.env")
                        || !plain_read.contains(&"secrets/key.env".to_string())
                    {
                        wrong.push(format!("{at} {leak} leaked: {beyond}"));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Claim 1, the allow list and the folder itself: `public/**` does not match `public`, so a
/// wildcard path walking `public` is denied as `public` is (safe, if strict), while one walking
/// `public/sub` is allowed and reads only under it.
#[test]
fn a_double_star_allow_rule_and_the_folder_itself() {
    let env = Env::new();
    let toml = ONLY_PUBLIC_ROOT;
    for path in [
        "public",
        "public/*",
        "public/*.md",
        "public/**",
        "public/?eadme.md",
    ] {
        let report = env.search(toml, path, &mut NoApprover);
        assert_eq!(report.outcome, GateOutcome::Denied, "{path}: {report:?}");
    }
    let report = env.search(toml, "public/sub/*", &mut NoApprover);
    assert_eq!(report.outcome, GateOutcome::Executed, "{report:?}");
    assert_eq!(matched_paths(&report.result), vec!["public/sub/page.md"]);
}

/// Claim 1, the earlier attack in more spellings: the first wildcard inside a later
/// component, `?` first, brackets and braces before the first wildcard, with an allow list.
#[test]
fn an_allow_list_is_not_widened_by_any_brace_or_bracket_spelling() {
    let env = Env::new();
    let toml = ONLY_PUBLIC;
    for path in [
        "{*/public/x,secrets/key.env}",
        "{?/public/x,secrets/key.env}",
        "{x/public/y,secrets}/*",
        "notes/public/../../secrets/*",
        "notes/public/{x,../../secrets}/*",
        "x/public/*/../../../secrets/*",
        "[n]otes/public/*",
        "notes/public/[*]",
        "notes/public/{n.md,../../secrets/key.env}?",
        "notes/{public/x,../secrets/key.env}*",
        "notes/public/x/../../../s?crets/key.env",
        "**/public/**/../../secrets/*",
    ] {
        let report = env.search(toml, path, &mut AllowAll);
        if report.outcome == GateOutcome::Executed {
            for file in matched_paths(&report.result) {
                assert!(
                    file.split('/').any(|c| c == "public"),
                    "{path} read {file} outside public/: {}",
                    report.result
                );
            }
        }
        let beyond = answer_beyond(&report, path);
        assert!(secret_leaks(&beyond).is_none(), "{path}: {beyond}");
    }
}

/// Claim 1 with a real folder literally named `{a,b}` or `[x]`: the wildcard path walks the
/// literal folder, whose glob (meaning `a/` or `x/`) keeps none of its files; a rule naming the
/// literal folder (escaped) still keeps it; a rule for what the braces mean never lets the
/// literal folder's call read `a/` or `x/`.
#[test]
fn real_folders_named_like_globs() {
    let env = Env::new();
    let escaped = ESCAPED_LITERAL;
    for path in ["{a,b}/*", "{a,b}/**", "[x]/*", "[x]/**"] {
        let report = env.search(escaped, path, &mut AllowAll);
        if report.outcome == GateOutcome::Executed {
            assert_eq!(
                matched_paths(&report.result),
                Vec::<String>::new(),
                "{path}"
            );
        }
        let report = env.search(GLOB_MEANING, path, &mut AllowAll);
        assert_eq!(report.outcome, GateOutcome::Executed, "{path}: {report:?}");
        let read = matched_paths(&report.result);
        assert!(
            read.iter()
                .all(|f| !f.starts_with("a/") && !f.starts_with("x/")),
            "{path}: {read:?}"
        );
    }
    // `\{a,b\}` keeps the literal folder itself (and what is beneath): its call and every
    // wildcard path walking it are denied; `\[x\]/**` keeps what is beneath `[x]`.
    for path in ["{a,b}", "{a,b}/*", "{a,b}/**", "{a,b}/lit.tx?"] {
        let report = env.search(escaped, path, &mut AllowAll);
        assert_eq!(report.outcome, GateOutcome::Denied, "{path}: {report:?}");
    }
    for path in ["[x]", "[x]/*", "[x]/lit.tx?", "?x?/*", "*"] {
        let report = env.search(escaped, path, &mut AllowAll);
        assert_eq!(report.outcome, GateOutcome::Executed, "{path}: {report:?}");
        let read = matched_paths(&report.result);
        assert!(
            !read
                .iter()
                .any(|f| f.starts_with("[x]/") || f.starts_with("{a,b}/")),
            "{path}: {read:?}"
        );
    }
}

/// Claim 1, ask rules: a wildcard path that the policy asks about is asked about (once, with
/// the path as given), and a person's approval reads only what it would for the folder.
#[test]
fn an_ask_list_asks_for_a_wildcard_path_as_for_its_folder() {
    let env = Env::new();
    let toml = ASK_OUTSIDE_PUBLIC;
    for (path, asks) in [
        ("{*/public/x,secrets/key.env}", true),
        ("s*/*", true),
        // `**/public/**` does not match the folder `notes/public` itself: asked, as the
        // plain folder is.
        ("notes/public/*", true),
        ("notes/public/n.m?", true),
        ("public/sub/*", false),
        ("public/*", true),
    ] {
        let mut approver = ScriptedApprover::new([ApprovalDecision::Deny {
            reason: "no".into(),
        }]);
        let report = env.search(toml, path, &mut approver);
        assert_eq!(
            !approver.seen.is_empty(),
            asks,
            "{path}: asked {:?}, {report:?}",
            approver.seen
        );
        let folder = glob_path(path).unwrap().folder;
        let mut plain_approver = ScriptedApprover::new([ApprovalDecision::Deny {
            reason: "no".into(),
        }]);
        env.search(toml, &folder, &mut plain_approver);
        assert_eq!(
            plain_approver.seen.is_empty(),
            approver.seen.is_empty(),
            "{path} and its folder {folder} are not asked alike"
        );
        if asks {
            assert_eq!(report.outcome, GateOutcome::ApprovalRequired, "{path}");
            assert_eq!(approver.seen[0].path, path);
            assert!(secret_leaks(&whole(&report)).is_none());
        } else {
            assert_eq!(report.outcome, GateOutcome::Executed, "{path}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Claim 1, second half: files read_file may not read. DEFECTS (shared with plain folder paths).
// ---------------------------------------------------------------------------------------------

/// An allow list of file globs for every tool: `deny *`, `allow * paths=["**/*.md"]`.
const ALLOW_MD: &str = "[[rule]]\ntool = \"*\"\naction = \"deny\"\n\n\
     [[rule]]\ntool = \"*\"\npaths = [\"**/*.md\"]\naction = \"allow\"\n";

/// DEFECT. `archive.md/` is a folder matching the allow glob `**/*.md`; the wildcard path
/// `archive.md/*` walks it (as the plain `archive.md` does), and each walked file's visibility
/// is decided by the winning rule for that file, the pathless `deny *`, which
/// `Policy::visibility` reads as Shown ("a rule without paths was applied to the call
/// itself"). But the call was allowed by the allow rule, not by the pathless deny, so
/// `archive.md/old.txt` is read although `read_file archive.md/old.txt` is denied, and so is
/// `search_text path="archive.md/old.txt"`.
#[test]
fn an_allow_list_of_file_globs_is_widened_by_a_folder_matching_it() {
    let env = Env::new();
    assert!(!env.read_file_runs(ALLOW_MD, "archive.md/old.txt"));
    let named = env.search(ALLOW_MD, "archive.md/old.txt", &mut NoApprover);
    assert_eq!(named.outcome, GateOutcome::Denied, "{named:?}");
    let report = env.search(ALLOW_MD, "archive.md/*", &mut NoApprover);
    let read = if report.outcome == GateOutcome::Executed {
        matched_paths(&report.result)
    } else {
        Vec::new()
    };
    assert!(
        !read.contains(&"archive.md/old.txt".to_string()),
        "search_text path=\"archive.md/*\" read archive.md/old.txt, which read_file and \
         search_text naming it may not read: {}",
        report.result
    );
}

/// DEFECT, the same root cause with an allow rule naming a folder: `deny *` and
/// `allow * paths=["notes"]` let `search_text path="notes/*"` (and `notes`) read
/// `notes/plan.md`, while `read_file notes/plan.md` is denied.
#[test]
fn an_allow_rule_for_a_folder_name_lets_the_walk_read_what_read_file_may_not() {
    let env = Env::new();
    let toml = "[[rule]]\ntool = \"*\"\naction = \"deny\"\n\n\
         [[rule]]\ntool = \"*\"\npaths = [\"notes\"]\naction = \"allow\"\n";
    assert!(!env.read_file_runs(toml, "notes/plan.md"));
    let report = env.search(toml, "notes/*", &mut NoApprover);
    let read = if report.outcome == GateOutcome::Executed {
        matched_paths(&report.result)
    } else {
        Vec::new()
    };
    assert!(
        read.is_empty(),
        "search_text path=\"notes/*\" read {read:?}, which read_file may not read"
    );
}

/// DEFECT, the read_file allow-list form: `deny read_file` (covering search_text) and allows
/// for `**/*.md` to both tools. `search_text path="archive.md/*"` reads `archive.md/old.txt`;
/// read_file of it is denied.
#[test]
fn a_read_file_allow_list_is_widened_for_search_text_by_a_folder_matching_it() {
    let env = Env::new();
    let toml = "[[rule]]\ntool = \"read_file\"\naction = \"deny\"\n\n\
         [[rule]]\ntool = \"read_file\"\npaths = [\"**/*.md\"]\naction = \"allow\"\n\n\
         [[rule]]\ntool = \"search_text\"\npaths = [\"**/*.md\"]\naction = \"allow\"\n";
    assert!(!env.read_file_runs(toml, "archive.md/old.txt"));
    assert!(env.read_file_runs(toml, "notes/plan.md"));
    let report = env.search(toml, "archive.md/*", &mut NoApprover);
    let read = if report.outcome == GateOutcome::Executed {
        matched_paths(&report.result)
    } else {
        Vec::new()
    };
    assert!(
        read.is_empty(),
        "search_text path=\"archive.md/*\" read {read:?}, which read_file may not read"
    );
}

// ---------------------------------------------------------------------------------------------
// Claim 2: content access and approvals for protected content.
// ---------------------------------------------------------------------------------------------

/// Reads of secrets ask; every change is allowed (so only the content check stands between a
/// change's diff and the caller).
const ASK_SECRETS_ALLOW_CHANGES: &str =
    "[[rule]]\ntool = \"read_file\"\npaths = [\"secrets/**\"]\naction = \"ask\"\n\n\
     [[rule]]\ntool = \"*\"\naction = \"allow\"\n";

fn mutating_calls(path: &str) -> Vec<(&'static str, Value)> {
    vec![
        (
            "edit_file",
            json!({"path": path, "old_text": "hunter2", "new_text": "x"}),
        ),
        (
            "edit_file",
            json!({"path": path, "old_text": "no such text", "new_text": "x"}),
        ),
        ("replace_file", json!({"path": path, "content": "gone\n"})),
        ("delete_file", json!({"path": path})),
        ("create_file", json!({"path": path, "content": "new\n"})),
        ("write_json", json!({"path": path, "document": {"a": 1}})),
        (
            "write_sections",
            json!({"path": path, "sections": [{"heading": "H", "level": 2, "body": "b"}]}),
        ),
    ]
}

fn reading_calls(path: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("read_file", json!({"path": path})),
        ("list_dir", json!({"path": path})),
        ("file_info", json!({"path": path})),
        ("find_files", json!({"path": path, "pattern": "*"})),
        ("find_related", json!({"path": path})),
        ("table_stats", json!({"path": path, "column": "API_KEY"})),
    ]
}

const WILD_SECRET_PATHS: &[&str] = &[
    "secrets/key.e?v",
    "secrets/key.env*",
    "secrets/*",
    "secrets/**",
    "secrets/key.env/*",
    "./secrets//key.en?",
    "s*/key.env",
    "SECRETS/key.e?v",
    "{secrets/key.env,x}*",
    "*",
];

#[test]
fn a_wildcard_spelling_never_executes_previews_or_shows_a_protected_file() {
    for approver_kind in ["none", "all"] {
        let env = Env::new();
        let before = env.snapshot();
        for &path in WILD_SECRET_PATHS {
            for (tool, args) in mutating_calls(path).into_iter().chain(reading_calls(path)) {
                let report = if approver_kind == "all" {
                    env.submit(ASK_SECRETS_ALLOW_CHANGES, tool, args.clone(), &mut AllowAll)
                } else {
                    env.submit(
                        ASK_SECRETS_ALLOW_CHANGES,
                        tool,
                        args.clone(),
                        &mut NoApprover,
                    )
                };
                assert_ne!(
                    report.outcome,
                    GateOutcome::Executed,
                    "{tool} {args}: {report:?}"
                );
                let text = whole(&report);
                assert!(secret_leaks(&text).is_none(), "{tool} {args}: {text}");
                assert!(!text.contains("\"diff\""), "{tool} {args}: {text}");
                let preview = env.preview_with(env.policy(ASK_SECRETS_ALLOW_CHANGES), tool, args);
                if let Ok(p) = &preview {
                    panic!("{tool} {path}: previewed {p}");
                }
                if let Err(e) = &preview {
                    assert!(secret_leaks(e).is_none(), "{tool} {path}: {e}");
                }
            }
        }
        assert_eq!(env.snapshot(), before, "something changed on disk");
    }
}

/// The plain spelling is still protected: the change asks before reading, and no diff reaches
/// the caller (a control for the test above).
#[test]
fn the_plain_spelling_of_a_protected_file_still_asks_first() {
    let env = Env::new();
    let report = env.submit(
        ASK_SECRETS_ALLOW_CHANGES,
        "edit_file",
        json!({"path": "secrets/key.env", "old_text": "hunter2", "new_text": "x"}),
        &mut NoApprover,
    );
    assert_eq!(report.outcome, GateOutcome::ApprovalRequired, "{report:?}");
    assert!(secret_leaks(&whole(&report)).is_none(), "{report:?}");
    let preview = env.preview_with(
        env.policy(ASK_SECRETS_ALLOW_CHANGES),
        "edit_file",
        json!({"path": "secrets/key.env", "old_text": "hunter2", "new_text": "x"}),
    );
    assert!(preview.is_err(), "{preview:?}");
}

/// An approved search never reads a file whose reading asks, whatever the spelling.
#[test]
fn an_approved_wildcard_search_does_not_read_a_file_whose_reading_asks() {
    let env = Env::new();
    for &path in WILD_SECRET_PATHS {
        let report = env.search(ASK_SECRETS_ALLOW_CHANGES, path, &mut AllowAll);
        let text = answer_beyond(&report, path);
        assert!(secret_leaks(&text).is_none(), "{path}: {text}");
    }
}

// ---------------------------------------------------------------------------------------------
// Claim 3: the other tools with a `*` in their path.
// ---------------------------------------------------------------------------------------------

/// A hidden name is never confirmed through a different refusal: for every tool, a wildcard
/// spelling around the real hidden name answers as one around a made-up name.
#[test]
fn no_tool_confirms_a_hidden_name_through_a_wildcard_refusal() {
    let env = Env::new();
    let deny = DENY_SECRETS;
    let mut wrong = Vec::new();
    for (template, real, fake) in [
        ("secrets/{}*", "key.env", "nokey.env"),
        ("secrets/{}.e?v", "key", "nok"),
        ("secrets/{}/*", "key.env", "nokey.env"),
        ("secrets/{}/x?", "key.env", "nokey.env"),
        ("./secrets//{}/*", "key.env", "nokey.env"),
        ("SECRETS/{}/*", "key.env", "nokey.env"),
        ("{}*", "key.env", "nokey.env"),
        ("*/{}", "key.env", "nokey.env"),
        ("s?crets/{}", "key.env", "nokey.env"),
    ] {
        let guess = |name: &str| {
            let path = template.replace("{}", name);
            let mut calls = mutating_calls(&path);
            calls.extend(reading_calls(&path));
            calls.push(("search_text", json!({"pattern": ".", "path": path})));
            calls
                .into_iter()
                .map(|(tool, args)| {
                    let report = env.submit(deny, tool, args, &mut AllowAll);
                    (tool, report.outcome, whole(&report).replace(name, "<name>"))
                })
                .collect::<Vec<_>>()
        };
        let a = guess(real);
        let b = guess(fake);
        for (x, y) in a.iter().zip(&b) {
            if x != y {
                wrong.push(format!("{template} with {real} / {fake}: {x:?} / {y:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Whatever a tool other than search_text is given with a wildcard, it refuses it and nothing
/// changes, under rules whose globs matched the wildcard text before the fix (a deny for
/// `notes/*.md`) and now no longer match the folder.
#[test]
fn rules_that_matched_the_wildcard_text_still_keep_every_other_tool_from_acting() {
    let toml =
        "[[rule]]\ntool = \"*\"\npaths = [\"notes/*.md\", \"public/**\"]\naction = \"deny\"\n\n\
         [[rule]]\ntool = \"*\"\naction = \"allow\"\n";
    let env = Env::new();
    let before = env.snapshot();
    for path in [
        "notes/*.md",
        "notes/plan.m?",
        "public/*",
        "public/**",
        "public/readme.*",
        "notes/**",
    ] {
        for (tool, args) in mutating_calls(path).into_iter().chain(reading_calls(path)) {
            let report = env.submit(toml, tool, args.clone(), &mut AllowAll);
            assert_ne!(
                report.outcome,
                GateOutcome::Executed,
                "{tool} {args}: {report:?}"
            );
            let text = whole(&report);
            for leak in ["zebrafish", "\"diff\"", "readme.md", "plan.md"] {
                assert!(
                    !text.replace(path, "<path>").contains(leak),
                    "{tool} {args}: {leak} in {text}"
                );
            }
            assert!(
                env.preview_with(env.policy(toml), tool, args.clone())
                    .is_err(),
                "{tool} {args}"
            );
        }
    }
    assert_eq!(env.snapshot(), before);
}

// ---------------------------------------------------------------------------------------------
// Claim 4: the policy file's own protection.
// ---------------------------------------------------------------------------------------------

#[test]
fn the_policy_file_is_not_changed_through_a_wildcard_spelling() {
    for policy_rel in [
        "policy.toml",
        "conf/policy.toml",
        "pol[i]cy.toml",
        "{conf}/p.toml",
    ] {
        let env = Env::new();
        let file = env.root.join(policy_rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "[[rule]]\ntool = \"*\"\naction = \"allow\"\n").unwrap();
        let policy = || {
            let mut p = env.policy("[[rule]]\ntool = \"*\"\naction = \"allow\"\n");
            p.protect(policy_rel);
            p
        };
        let before = env.snapshot();
        let folder = Path::new(policy_rel)
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let mut spellings = vec![
            policy_rel.to_string(),
            format!("./{policy_rel}"),
            policy_rel.to_uppercase(),
            format!("{policy_rel}?"),
            format!("{policy_rel}*"),
            policy_rel.replacen('p', "?", 1),
            policy_rel.replace(".toml", ".*"),
            "*".to_string(),
            "**".to_string(),
            "*/*".to_string(),
        ];
        if !folder.is_empty() {
            spellings.push(format!("{folder}/*"));
            spellings.push(format!("{folder}//*.toml"));
        }
        for path in &spellings {
            for (tool, args) in mutating_calls(path) {
                let report = env.submit_with(policy(), tool, args.clone(), &mut AllowAll);
                assert_ne!(
                    report.outcome,
                    GateOutcome::Executed,
                    "{policy_rel}: {tool} {args}: {report:?}"
                );
            }
        }
        // The plain spelling is refused as the policy file itself.
        let report = env.submit_with(
            policy(),
            "replace_file",
            json!({"path": policy_rel, "content": "x"}),
            &mut AllowAll,
        );
        assert_eq!(
            report.outcome,
            GateOutcome::Denied,
            "{policy_rel}: {report:?}"
        );
        assert!(report.reason.contains("policy file"), "{}", report.reason);
        assert_eq!(env.snapshot(), before, "{policy_rel}");
    }
}
