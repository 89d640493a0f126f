#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red-team of commit 16bff4d's `search_text` readings: a `path` holding `*` or `?` is a folder
//! and a glob, and a `glob` without `/` also keeps the files beneath a folder of that name.
//! Every call goes through the gate with a policy, as `rein tool` sends it. Each attack is kept,
//! whether it held or found a defect.

#[path = "gate_support/mod.rs"]
mod gate_support;

use gate_support::{answer_beyond, matched_paths, whole, GateEnv};
use rein_engine::gate::NoApprover;
use rein_protocol::{GateOutcome, GateReport};
use serde_json::{json, Value};

/// The secret's contents.
const SECRET: &str = "API_KEY=hunter2\nzebrafish rotation schedule\n";
/// A file beside the workspace root, never to be searched or named.
const OUTSIDE: &str = "outside-marker-qz7 zebrafish\n";
/// `deny` hides names by default.
const DENY_SECRETS: &str = "[[rule]]\ntool = \"*\"\npaths = [\"secrets/**\"]\naction = \"deny\"\n";
/// search_text may only run on paths under a `public` folder (an allow-list).
const ONLY_PUBLIC: &str = "[[rule]]\ntool = \"search_text\"\naction = \"deny\"\n\n\
     [[rule]]\ntool = \"search_text\"\npaths = [\"**/public/**\"]\naction = \"allow\"\n";

type Env = GateEnv;

impl GateEnv {
    fn new() -> Env {
        let env = GateEnv::with_files(&[
            ("secrets/key.env", SECRET),
            (
                "notes/plan.md",
                "launch plan\nthe zebrafish tank moves on monday\n",
            ),
            ("notes/todo.md", "water the plants\nlaunch checklist\n"),
            ("notes/sub/deep.txt", "deep zebrafish note\n"),
            ("public/readme.md", "public zebrafish page\n"),
            ("archive.md/old.txt", "an old zebrafish letter\n"),
        ]);
        std::fs::write(env.dir.path().join("outside.txt"), OUTSIDE).unwrap();
        std::fs::create_dir_all(env.dir.path().join("outdir")).unwrap();
        std::fs::write(env.dir.path().join("outdir/o.txt"), OUTSIDE).unwrap();
        env
    }

    fn submit(&self, policy_toml: &str, arguments: Value) -> GateReport {
        self.submit_with(
            self.policy(policy_toml),
            "search_text",
            arguments,
            &mut NoApprover,
        )
    }

    fn search(
        &self,
        policy: &str,
        pattern: &str,
        path: Option<&str>,
        glob: Option<&str>,
    ) -> GateReport {
        let mut arguments = json!({ "pattern": pattern });
        if let Some(path) = path {
            arguments["path"] = json!(path);
        }
        if let Some(glob) = glob {
            arguments["glob"] = json!(glob);
        }
        self.submit(policy, arguments)
    }

    /// The result of a search that must run.
    fn ran(&self, policy: &str, pattern: &str, path: Option<&str>, glob: Option<&str>) -> Value {
        let report = self.search(policy, pattern, path, glob);
        assert_eq!(
            report.outcome,
            GateOutcome::Executed,
            "path {path:?} glob {glob:?}: {report:?}"
        );
        report.result
    }
}

/// Nothing of the secret, not even its name, anywhere in the answer, beyond what the caller
/// wrote itself (the pattern and the path are echoed back).
fn reveals_no_secret_beyond(report: &GateReport, echoed: &str) {
    let text = answer_beyond(report, echoed);
    for leak in ["key.env", "hunter2", "API_KEY", "rotation"] {
        assert!(!text.contains(leak), "{leak} leaked: {text}");
    }
}

/// Nothing from beside the workspace root anywhere in the answer.
fn reveals_nothing_outside(env: &Env, report: &GateReport) {
    let text = whole(report);
    assert!(!text.contains("outside-marker-qz7"), "outside read: {text}");
    assert!(!text.contains("outside.txt"), "outside named: {text}");
    assert!(!text.contains("o.txt"), "outside named: {text}");
    let parent = env.dir.path().display().to_string();
    assert!(!text.contains(&parent), "the root's parent named: {text}");
}

// ---------------------------------------------------------------------------------------------
// (a) Nothing outside the workspace root is searched or named.
// ---------------------------------------------------------------------------------------------

#[test]
fn escapes_through_the_folder_or_the_glob_part_are_refused() {
    let env = Env::new();
    std::os::unix::fs::symlink(env.dir.path().join("outdir"), env.root.join("link")).unwrap();
    std::os::unix::fs::symlink(
        env.dir.path().join("outside.txt"),
        env.root.join("notes/ln.txt"),
    )
    .unwrap();
    for path in [
        "../*",
        "../*.txt",
        "../outdir/*",
        "../ws/*",
        "*/../../*",
        "notes/*/../../../*",
        "notes/../../*",
        "./../*",
        "/*",
        "/*.txt",
        "//*",
        "/etc/*",
        "/tmp/**",
        "~/*",
        "~*",
        "C:/*",
        "c:*",
        "C:\\*",
        "\\\\server\\share\\*",
        "\\*",
        "notes\\..\\..\\*",
        "link/*",
        "link/**",
        "li?k/*",
        ".*./*",
        "..*",
        "*/..",
        "notes/..?/*",
    ] {
        let report = env.search("", "zebrafish|outside-marker", Some(path), None);
        reveals_nothing_outside(&env, &report);
        if report.outcome == GateOutcome::Executed {
            // Whatever ran stayed inside: every match is a workspace file.
            for p in matched_paths(&report.result) {
                assert!(
                    env.root.join(&p).is_file(),
                    "{path}: {p} is no workspace file"
                );
            }
        } else {
            assert!(!report.reason.is_empty(), "{path}: a refusal says why");
        }
    }
}

#[test]
fn a_whole_workspace_glob_does_not_follow_links_out() {
    let env = Env::new();
    std::os::unix::fs::symlink(env.dir.path().join("outdir"), env.root.join("link")).unwrap();
    std::os::unix::fs::symlink(
        env.dir.path().join("outside.txt"),
        env.root.join("notes/ln.txt"),
    )
    .unwrap();
    for path in ["*", "**", "**/*", "*/*", "?*", "**/*.txt", "l*/*"] {
        let report = env.search("", "outside-marker", Some(path), None);
        reveals_nothing_outside(&env, &report);
        assert_eq!(report.outcome, GateOutcome::Executed, "{path}: {report:?}");
        assert_eq!(report.result["matches"], json!([]), "{path}");
    }
}

#[test]
fn a_glob_whose_wildcards_read_as_underscores_name_a_link_is_not_refused() {
    // The path check stands `_` in for each wildcard and asks the filesystem about that name:
    // a workspace holding a link named `_` (or `_.md`) turns a harmless glob into a refusal.
    // Expected: `*` searches the workspace (the walk skips links) as it does without the link.
    let env = Env::new();
    std::os::unix::fs::symlink(env.root.join("notes"), env.root.join("_")).unwrap();
    let report = env.search("", "zebrafish", Some("*"), None);
    assert_eq!(
        report.outcome,
        GateOutcome::Executed,
        "`*` refused because of a link named `_`: {report:?}"
    );
    let report = env.search("", "zebrafish", Some("?/*.md"), None);
    assert_eq!(
        report.outcome,
        GateOutcome::Executed,
        "`?/*.md` refused because of a link named `_`: {report:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// (b) Policy holds for every file; the count confirms no guessed name.
// ---------------------------------------------------------------------------------------------

#[test]
fn no_wildcard_path_reads_a_denied_file() {
    let env = Env::new();
    for path in [
        "secrets/*",
        "./secrets/*",
        "././secrets/*",
        "SECRETS/*",
        "./SECRETS/*",
        "Secret?/*",
        "secret?/*",
        "./secrets/**",
        "s*/**",
        "*",
        "**",
        "*/key.env",
        "**/key.env",
        "**/*.env",
        "./secrets/key.e?v",
        "./secrets/key.env/*",
        "secrets//*",
        "./secrets//*",
        "{secrets,notes}/*",
        "[s]ecrets/*",
        "*{secrets,x}*/*",
    ] {
        for glob in [
            None,
            Some("secrets"),
            Some("*.env"),
            Some("key.env"),
            Some("*"),
        ] {
            let report = env.search(DENY_SECRETS, "hunt.r2|r.tation|.", Some(path), glob);
            reveals_no_secret_beyond(&report, path);
        }
    }
}

#[test]
fn a_dot_slash_wildcard_path_does_not_confirm_a_hidden_file_name() {
    // `secrets/**` is denied with names hidden. The gate denies `secrets/key.env/*` (its
    // ancestors fall under the rule), but `./secrets/...` with a wildcard is not normalised
    // before the rule is matched (a wildcard is no valid path), so the call runs: the folder
    // part `secrets/key.env` is walked, and a file there answers differently from no file.
    let env = Env::new();
    let guess = |name: &str| {
        let report = env.search(
            DENY_SECRETS,
            "zebrafish",
            Some(&format!("./secrets/{name}/*")),
            None,
        );
        // The answer with the guessed name (echoed back) taken out.
        (report.outcome, whole(&report).replace(name, "<guess>"))
    };
    let real = guess("key.env");
    let made_up = guess("no-such.env");
    assert_eq!(
        real, made_up,
        "a guessed hidden name is confirmed: key.env gives {real:?}, no-such.env gives {made_up:?}"
    );
}

#[test]
fn a_dot_slash_wildcard_path_is_decided_as_its_plain_spelling_is() {
    // The gate normalises `./secrets/x` to `secrets/x` so a spelling cannot dodge a rule; a
    // wildcard path should get the same decision as without `./`.
    let env = Env::new();
    for (plain, dotted) in [
        ("secrets/*", "./secrets/*"),
        ("secrets/key.*", "./secrets/key.*"),
        ("secrets/*", "secrets//*"),
    ] {
        let a = env.search(DENY_SECRETS, "x", Some(plain), None).outcome;
        let b = env.search(DENY_SECRETS, "x", Some(dotted), None).outcome;
        assert_eq!(a, b, "{plain} is {a:?} but {dotted} is {b:?}");
    }
}

#[test]
fn the_hidden_count_does_not_depend_on_the_glob_part() {
    let env = Env::new();
    let mut seen = Vec::new();
    for path in [
        "*",
        "*.md",
        "k*",
        "n*/*",
        "**/key.env",
        "**/nothing-like-it",
        "?",
    ] {
        let result = env.ran(DENY_SECRETS, "zzz-no-match", Some(path), None);
        seen.push((path, result["skipped_by_policy"].clone()));
    }
    assert!(
        seen.iter().all(|(_, n)| *n == json!(1)),
        "the count moved with the glob: {seen:?}"
    );
}

#[test]
fn an_allow_list_of_folders_is_not_widened_by_a_wildcard_path() {
    // search_text may only run on paths under a `public` folder. The gate matches the
    // allow glob against the path as written; a path like `{*/public/x,secrets/key.env}` is
    // matched by `**/public/**` as text, but as a glob its other alternative names a file
    // outside any `public` folder, and the walk starts at the root (the first wildcard comes
    // before any `/`). Expected: denied, or nothing outside public/ searched.
    let env = Env::new();
    // The allow-list holds for plain paths.
    assert_eq!(
        env.search(ONLY_PUBLIC, "hunter2", None, None).outcome,
        GateOutcome::Denied
    );
    assert_eq!(
        env.search(ONLY_PUBLIC, "hunter2", Some("secrets"), None)
            .outcome,
        GateOutcome::Denied
    );
    assert_eq!(
        env.ran(ONLY_PUBLIC, "zebrafish", Some("public/readme.md"), None)["files_searched"],
        json!(1)
    );
    for path in [
        "{*/public/x,secrets/key.env}",
        "{*/public/x,secrets/**}",
        "{*/public/x,**}",
        "{?/public/x,notes/*.md}",
    ] {
        let report = env.search(ONLY_PUBLIC, "hunt.r2|zebrafish", Some(path), None);
        if report.outcome == GateOutcome::Executed {
            let found = matched_paths(&report.result);
            assert!(
                found.iter().all(|p| p.split('/').any(|c| c == "public")),
                "{path} searched files outside public/: {found:?} ({})",
                report.result
            );
            reveals_no_secret_beyond(&report, path);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// (c) Odd input: a clear answer, never a panic.
// ---------------------------------------------------------------------------------------------

#[test]
fn odd_wildcard_paths_get_an_answer_never_a_panic() {
    let env = Env::new();
    let long_star = "*".repeat(4000);
    let long_name = format!("notes/{}*", "a".repeat(300));
    let deep = format!("{}*", "a/".repeat(70));
    let many_alts = format!("{{{}}}*", vec!["a"; 1500].join(","));
    let nested = "{a,{b,{c,*}}}".to_string();
    let inputs: Vec<String> = [
        "[",
        "[*",
        "*[",
        "[!]*",
        "[]]*",
        "{*",
        "*{",
        "*}",
        "{}*",
        "{,}*",
        "**",
        "***",
        "a**b/*",
        "**/**/**",
        "?",
        "??",
        "*?*?*",
        "*/*/*",
        "notes/*/",
        "notes/**/",
        "./*",
        "./",
        ".//*",
        ".//notes/*.md",
        "notes//*.md",
        "notes/./*.md",
        "日本/*.md",
        "notes/*.m\u{0301}d",
        "notes/\u{202e}*",
        "notes/\u{200b}*",
        "notes/*\0",
        "notes/\0*",
        "notes/*\n",
        "notes/*.",
        "notes/* ",
        "notes/*:x",
        "notes/*|x",
        "notes/<*>",
        "CON/*",
        "notes/nul*",
        "x.git/hooks/*",
        "*.git/config",
        "\\\\?\\C:\\*",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([long_star, long_name, deep, many_alts, nested])
    .collect();
    for path in &inputs {
        for glob in [None, Some("*.md"), Some("[")] {
            let report = env.search("", "zebrafish", Some(path), glob);
            match report.outcome {
                GateOutcome::Executed => {
                    for p in matched_paths(&report.result) {
                        assert!(env.root.join(&p).is_file(), "{path:?}: {p}");
                    }
                }
                GateOutcome::Invalid | GateOutcome::Denied => {
                    assert!(!report.reason.is_empty(), "{path:?}: {report:?}");
                    assert!(
                        !report.reason.contains("panick"),
                        "{path:?}: {}",
                        report.reason
                    );
                }
                other => panic!("{path:?}: unexpected outcome {other:?}: {report:?}"),
            }
        }
    }
}

#[test]
fn bad_globs_in_the_path_say_which_glob_is_bad() {
    let env = Env::new();
    for path in ["[*", "notes/[*.md", "{*", "notes/{a,*.md"] {
        let report = env.search("", "zebrafish", Some(path), None);
        assert_eq!(report.outcome, GateOutcome::Invalid, "{path}: {report:?}");
        assert!(
            report.reason.contains("is not valid"),
            "{path}: {}",
            report.reason
        );
    }
}

#[test]
fn double_slashes_and_dot_folders_in_a_wildcard_path_read_as_in_a_plain_path() {
    // Plain paths drop empty and `.` components (`notes//plan.md` is `notes/plan.md`); the
    // wildcard reading keeps them in the glob, so the glob can never match a walked file, or
    // (after `.//`) refuses the path as absolute. Expected: the same files as `notes/*.md`.
    let env = Env::new();
    let want = matched_paths(&env.ran("", "zebrafish", Some("notes/*.md"), None));
    assert_eq!(want, vec!["notes/plan.md"]);
    assert_eq!(
        matched_paths(&env.ran("", "zebrafish", Some("notes//plan.md"), None)),
        want,
        "the plain spelling works"
    );
    let mut wrong = Vec::new();
    for path in [
        "notes//*.md",
        "notes/./*.md",
        ".//notes/*.md",
        "./notes/./*.md",
    ] {
        let report = env.search("", "zebrafish", Some(path), None);
        let got = if report.outcome == GateOutcome::Executed {
            format!(
                "{:?} ({})",
                matched_paths(&report.result),
                report.result["note"]
            )
        } else {
            format!("{}: {}", report.outcome.as_str(), report.reason)
        };
        if report.outcome != GateOutcome::Executed || matched_paths(&report.result) != want {
            wrong.push(format!("{path} -> {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_trailing_slash_of_a_wildcard_path_is_dropped_as_in_a_plain_path() {
    let env = Env::new();
    let result = env.ran("", "zebrafish", Some("notes/*/"), None);
    assert_eq!(matched_paths(&result), vec!["notes/plan.md"], "{result}");
    let note = result["note"].as_str().unwrap_or_default();
    assert!(note.contains("\"notes/*\" holds a glob"), "{result}");
}

// ---------------------------------------------------------------------------------------------
// (d) File-name globs keep their meaning.
// ---------------------------------------------------------------------------------------------

#[test]
fn star_dot_md_still_finds_markdown_at_every_depth() {
    let env = Env::new();
    let result = env.ran("", "zebrafish", None, Some("*.md"));
    let found = matched_paths(&result);
    assert!(found.contains(&"notes/plan.md".to_string()), "{result}");
    assert!(found.contains(&"public/readme.md".to_string()), "{result}");
    let result = env.ran("", "zebrafish", Some("notes"), Some("*.md"));
    assert_eq!(matched_paths(&result), vec!["notes/plan.md"], "{result}");
    let result = env.ran("", "launch", None, Some("todo.md"));
    assert_eq!(matched_paths(&result), vec!["notes/todo.md"], "{result}");
}

#[test]
fn star_dot_md_does_not_pull_in_text_files_under_a_folder_named_like_markdown() {
    // Before 16bff4d `*.md` kept only files whose name ends in `.md`. Now a folder whose
    // name matches (`archive.md/`) brings every file beneath it: `archive.md/old.txt` is
    // searched under the glob `*.md`.
    let env = Env::new();
    let result = env.ran("", "zebrafish", None, Some("*.md"));
    let found = matched_paths(&result);
    assert!(
        found.iter().all(|p| p.ends_with(".md")),
        "`*.md` searched a file not named *.md: {found:?}"
    );
}

#[test]
fn a_bare_folder_name_glob_keeps_only_that_folder_and_ands_with_a_path_glob() {
    let env = Env::new();
    let result = env.ran("", "zebrafish", None, Some("sub"));
    assert_eq!(
        matched_paths(&result),
        vec!["notes/sub/deep.txt"],
        "{result}"
    );
    let result = env.ran("", "zebrafish", Some("notes/*"), Some("sub"));
    // `notes/*` does not cross a folder, so `notes/sub/deep.txt` is left out by the path glob.
    assert_eq!(matched_paths(&result), Vec::<String>::new(), "{result}");
    let result = env.ran("", "zebrafish", Some("notes/**"), Some("sub"));
    assert_eq!(
        matched_paths(&result),
        vec!["notes/sub/deep.txt"],
        "{result}"
    );
}

// ---------------------------------------------------------------------------------------------
// (e) The notes are truthful.
// ---------------------------------------------------------------------------------------------

#[test]
fn the_note_names_the_folder_that_was_searched() {
    let env = Env::new();
    for (path, folder) in [
        ("*", "."),
        ("notes/*.md", "notes"),
        ("./notes/*.md", "notes"),
        ("notes/s?b/*", "notes"),
        ("notes/sub/*", "notes/sub"),
        ("n*/sub/*", "."),
    ] {
        let result = env.ran("", "zebrafish", Some(path), None);
        let note = result["note"].as_str().unwrap_or_default();
        assert!(
            note.contains(&format!("searched \"{folder}\"")),
            "{path}: {note}"
        );
    }
}

#[test]
fn the_note_for_a_glob_that_matched_nothing_names_no_hidden_file() {
    let env = Env::new();
    for path in ["*.none", "./secrets/*.none", "secrets/*.none", "**/*.none"] {
        let report = env.search(DENY_SECRETS, "zebrafish", Some(path), None);
        reveals_no_secret_beyond(&report, path);
        if report.outcome == GateOutcome::Executed {
            assert_eq!(report.result["files_searched"], 0, "{path}");
        }
    }
}

#[test]
fn a_policy_skip_is_not_reported_as_a_glob_that_matched_nothing() {
    // Only the secret matches the glob; it is skipped by policy. The note must not tell the
    // model that no file matched the glob (one did, and policy kept it).
    let env = Env::new();
    let result = env.ran(
        "[[rule]]\ntool = \"*\"\npaths = [\"secrets/**\"]\naction = \"deny\"\nhide_names = false\n",
        "zebrafish",
        Some("s*/*.env"),
        None,
    );
    assert_eq!(result["skipped_by_policy"], 1, "{result}");
    let note = result["note"].as_str().unwrap_or_default();
    assert!(!note.contains("No file matched the glob"), "{note}");
    assert!(note.contains("skipped by policy"), "{note}");
}
