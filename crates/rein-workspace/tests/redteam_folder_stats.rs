//! Red team of `folder_stats`: what a policy hides or skips changes no figure beyond the
//! `hidden_by_policy` count, each line count is the one the judge makes, the caps say what they
//! leave out and never panic, and the walk never leaves the workspace or the folder named.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use rein_workspace::desk::{
    PathFilter, Visibility, FOLDER_STATS_MAX_LISTED, FOLDER_STATS_MAX_READ_BYTES,
    READ_FILE_MAX_BYTES,
};
use rein_workspace::{desk_registry, RelPath, ToolContext, ToolError, ToolOutput, Workspace};
use serde_json::{json, Value};

/// Hides every path that has a part `hidden` (or a name starting with `hidden`), skips every
/// path with a part `skipped`.
#[derive(Debug)]
struct ByName;

impl PathFilter for ByName {
    fn visible(&self, path: &RelPath) -> Visibility {
        let parts: Vec<&str> = path.as_str().split('/').collect();
        if parts.iter().any(|p| p.starts_with("hidden")) {
            Visibility::Hidden
        } else if parts.iter().any(|p| p.starts_with("skipped")) {
            Visibility::Skipped
        } else {
            Visibility::Shown
        }
    }
}

fn write(root: &Path, files: &[(&str, &[u8])]) {
    for (path, body) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
}

fn call(root: &Path, filter: Option<&dyn PathFilter>, a: Value) -> Result<Value, ToolError> {
    let ws = Workspace::open(root).unwrap();
    let mut ctx = match filter {
        Some(filter) => ToolContext::FilteredDesk {
            workspace: &ws,
            filter,
        },
        None => ToolContext::Desk(&ws),
    };
    match desk_registry().call(&mut ctx, "folder_stats", &a)? {
        ToolOutput::Data(v) => Ok(v),
        other => panic!("not data: {other:?}"),
    }
}

fn stats_of(files: &[(&str, &[u8])], filter: Option<&dyn PathFilter>, a: Value) -> Value {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), files);
    call(dir.path(), filter, a).unwrap()
}

/// `v` without what a policy is allowed to say: the hidden count and the notes.
fn beyond_hidden_count(mut v: Value) -> Value {
    let o = v.as_object_mut().unwrap();
    o.remove("hidden_by_policy");
    o.remove("note");
    v
}

fn listed<'v>(v: &'v Value, path: &str) -> &'v Value {
    v["list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} not listed in {v}"))
}

const SHOWN: &[(&str, &[u8])] = &[
    ("box/a.csv", b"id,name\n1,Ada\n2,Bo\n"),
    ("box/notes/b.txt", b"one\ntwo\n"),
    ("box/c.log", b"x\ny\nz\n"),
];

/// Hidden files of every kind a figure could pick up: a copy of a shown file (same_content),
/// an empty file (empty), the deepest file, the most lines and rows, a new extension and a new
/// folder, and a hidden file in a shown folder. Nothing but `hidden_by_policy` may change.
#[test]
fn a_hidden_file_changes_no_figure_but_the_hidden_count() {
    let many_rows: Vec<u8> = (0..500)
        .flat_map(|i| format!("{i},n\n").into_bytes())
        .collect();
    let mut with_hidden: Vec<(&str, &[u8])> = SHOWN.to_vec();
    with_hidden.extend_from_slice(&[
        ("box/hidden-copy.csv", b"id,name\n1,Ada\n2,Bo\n"),
        ("box/hidden-empty.txt", b""),
        ("box/hidden/d1/d2/d3/d4/deep.zzz", b"deep\n"),
        ("box/notes/hidden.csv", &many_rows),
        ("box/hidden-bin.dat", b"\0\x01\x02"),
    ]);
    let base = stats_of(SHOWN, None, json!({"path": "box"}));
    let v = stats_of(&with_hidden, Some(&ByName), json!({"path": "box"}));
    assert_eq!(v["hidden_by_policy"], 5, "{v}");
    let beyond = beyond_hidden_count(v);
    assert!(
        !beyond.to_string().contains("hidden"),
        "a hidden name leaked: {beyond}"
    );
    assert_eq!(beyond, base);
    // And with a pattern that matches none of them, the count is the same: it confirms no name.
    let v = stats_of(
        &with_hidden,
        Some(&ByName),
        json!({"path": "box", "pattern": "*.log"}),
    );
    assert_eq!(v["hidden_by_policy"], 5, "{v}");
}

/// A skipped file is named, and nothing of its bytes reaches any figure: whatever it holds
/// (nothing, a copy of a shown file, thousands of lines, binary), the result is the same.
#[test]
fn a_skipped_file_s_content_reaches_no_figure() {
    let many: Vec<u8> = (0..3000)
        .flat_map(|i| format!("{i},n\n").into_bytes())
        .collect();
    let bodies: [&[u8]; 5] = [
        b"",
        b"id,name\n1,Ada\n2,Bo\n",
        &many,
        b"\0\0\0",
        b"one\ntwo\n",
    ];
    let mut results = Vec::new();
    for body in bodies {
        let mut files: Vec<(&str, &[u8])> = SHOWN.to_vec();
        files.push(("box/skipped.csv", body));
        files.push(("box/skipped/deeper/s.txt", body));
        results.push(stats_of(&files, Some(&ByName), json!({"path": "box"})));
    }
    let first = &results[0];
    for r in &results[1..] {
        assert_eq!(r, first, "a skipped file's bytes changed the result");
    }
    let s = listed(first, "box/skipped.csv");
    assert_eq!(s["skipped_by_policy"], true, "{s}");
    for field in ["bytes", "lines", "rows"] {
        assert!(s.get(field).is_none(), "{field} of a skipped file: {s}");
    }
    assert_eq!(first["skipped_by_policy"], 2, "{first}");
    assert_eq!(first["empty"], json!([]), "{first}");
    assert_eq!(first["same_content"], json!([]), "{first}");
    assert_eq!(first["total_lines"], 3 + 2 + 3, "{first}");
    assert_eq!(first["most_rows"], json!(["box/a.csv"]), "{first}");
}

/// The judge counts lines as `String::from_utf8_lossy(bytes).lines().count()`: each line count
/// shown is that one, and a file it is not shown for says why in the result.
#[test]
fn each_line_count_shown_is_the_judge_s() {
    let mut late_nul = "word\n".repeat(4000).into_bytes();
    late_nul.extend_from_slice(b"a\0b\nlast");
    let cases: &[(&str, &[u8])] = &[
        ("t/empty.log", b""),
        ("t/newline.log", b"\n"),
        ("t/one.log", b"a"),
        ("t/crlf.log", b"a\r\nb\r\n"),
        ("t/crlf-open.log", b"a\r\nb"),
        ("t/cr.log", b"a\rb\rc"),
        ("t/bom.log", b"\xef\xbb\xbfa\nb\n"),
        ("t/blank.log", b"a\n\n\n"),
        ("t/lf-cr.log", b"a\n\r"),
        ("t/late-nul.log", &late_nul),
        ("t/latin1.log", b"caf\xe9\nx\n"),
        ("t/cut.log", b"a\nb\n\xe2\x82"),
        ("t/unicode-sep.log", "a\u{2028}b\u{85}c\n".as_bytes()),
    ];
    let v = stats_of(cases, None, json!({"path": "t"}));
    let mut sum = 0;
    for (path, body) in cases {
        let judge = String::from_utf8_lossy(body).lines().count();
        let entry = listed(&v, path);
        match entry.get("lines").and_then(Value::as_u64) {
            Some(n) => {
                assert_eq!(n as usize, judge, "{path}: {entry}");
                sum += n;
            }
            None => assert!(
                std::str::from_utf8(body).is_err(),
                "{path}: UTF-8 text without lines: {entry}"
            ),
        }
    }
    assert_eq!(v["total_lines"], sum, "{v}");
}

/// A total of lines that leaves files out must say so: `wc -l` over the folder counts a file
/// that is not UTF-8 too, and the model copies `total_lines` as the folder's total.
#[test]
fn a_total_that_leaves_out_a_text_file_says_so() {
    let v = stats_of(
        &[
            ("logs/a.log", b"one\ntwo\n"),
            ("logs/latin1.log", b"caf\xe9\nna\xefve\n"),
        ],
        None,
        json!({"path": "logs"}),
    );
    assert_eq!(v["total_lines"], 2, "{v}");
    let note = v["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("1 file") && note.contains("no lines"),
        "the total leaves out logs/latin1.log silently: {v}"
    );
}

/// Rows are the data rows `table_stats` reads: header not counted, blank lines not counted,
/// a quoted line break inside one row, CRLF and a BOM changing nothing; a header alone is 0.
#[test]
fn rows_of_tables_in_every_spelling() {
    let v = stats_of(
        &[
            ("d/crlf.csv", b"a,b\r\n1,2\r\n3,4\r\n"),
            ("d/bom.csv", b"\xef\xbb\xbfa,b\n1,2\n"),
            ("d/quoted.csv", b"a,b\n1,\"x\ny\"\n2,z"),
            ("d/header.csv", b"a,b\n"),
            ("d/header-open.csv", b"a,b"),
            ("d/t.tsv", b"a\tb\n1\t2\n3\t4\n"),
            ("d/j.jsonl", b"{\"a\":1}\n\n{\"a\":2}\n{\"a\":3}\n"),
            ("d/ragged.csv", b"a,b\n1,2,3\n"),
        ],
        None,
        json!({"path": "d"}),
    );
    for (path, rows) in [
        ("d/crlf.csv", 2),
        ("d/bom.csv", 1),
        ("d/quoted.csv", 2),
        ("d/header.csv", 0),
        ("d/header-open.csv", 0),
        ("d/t.tsv", 2),
        ("d/j.jsonl", 3),
    ] {
        assert_eq!(listed(&v, path)["rows"], rows, "{path}: {v}");
    }
    // A table whose columns cannot be told apart gets no rows rather than a guess.
    assert!(listed(&v, "d/ragged.csv").get("rows").is_none(), "{v}");
    assert_eq!(v["total_rows"], 10, "{v}");
}

/// Files past the read cap of one file, and past the call's budget, are counted by name and
/// size and said to be unread; nothing panics and no total takes them in. Sparse files, so
/// the test writes almost nothing.
#[test]
fn files_past_the_read_caps_are_counted_unread_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let per_budget = (FOLDER_STATS_MAX_READ_BYTES / READ_FILE_MAX_BYTES) as usize;
    std::fs::create_dir_all(dir.path().join("big")).unwrap();
    for i in 0..=per_budget {
        let f = std::fs::File::create(dir.path().join(format!("big/f{i:02}.bin"))).unwrap();
        f.set_len(READ_FILE_MAX_BYTES).unwrap();
    }
    let huge = std::fs::File::create(dir.path().join("big/huge.bin")).unwrap();
    huge.set_len(READ_FILE_MAX_BYTES + 1).unwrap();
    write(dir.path(), &[("big/zz.txt", b"after the budget\n")]);
    let v = call(dir.path(), None, json!({"path": "big"})).unwrap();
    assert_eq!(v["files"], per_budget + 3, "{v}");
    // The budget reads exactly `per_budget` files; the one over it, the huge one and the small
    // one after are not read.
    assert_eq!(v["unread"], 3, "{v}");
    let note = v["note"].as_str().unwrap();
    assert!(note.contains("3 files were not read"), "{note}");
    assert_eq!(listed(&v, "big/huge.bin")["bytes"], READ_FILE_MAX_BYTES + 1);
    assert!(listed(&v, "big/zz.txt").get("lines").is_none(), "{v}");
    assert!(v.get("total_lines").is_none(), "{v}");
    // The files read are the same zeros: one group, and no unread file in it.
    let groups = v["same_content"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{v}");
    assert_eq!(groups[0].as_array().unwrap().len(), per_budget, "{v}");
}

/// A hard-linked file (which the workspace refuses to open: it may have a name outside) or an
/// unreadable one is one file `folder_stats` cannot read, not a reason to count none: before,
/// one such file under the folder made the whole call fail.
#[test]
fn one_file_that_cannot_be_opened_does_not_sink_the_count() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[("box/a.txt", b"one\n"), ("box/b.txt", b"two\nthree\n")],
    );
    std::fs::hard_link(dir.path().join("box/b.txt"), dir.path().join("box/c.txt")).unwrap();
    let v = call(dir.path(), None, json!({"path": "box"}))
        .unwrap_or_else(|e| panic!("one hard link failed the whole count: {e}"));
    assert_eq!(v["files"], 3, "{v}");
    assert_eq!(v["unread"], 2, "{v}");
    assert!(listed(&v, "box/b.txt").get("lines").is_none(), "{v}");
    assert_eq!(v["total_lines"], 1, "{v}");
    // Neither name of the hard-linked file gives its size (one may be outside, or protected).
    for path in ["box/b.txt", "box/c.txt"] {
        assert!(listed(&v, path).get("bytes").is_none(), "{v}");
    }
    assert!(v["note"].as_str().unwrap().contains("not read"), "{v}");
}

/// Every list of paths in the result is bounded, like `list`: a folder of thousands of empty
/// files at one depth named every one of them in `empty` and `deepest` (and the model is shown
/// the first 6,000 characters of a result).
#[test]
fn no_list_of_paths_in_the_result_grows_with_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let n = 3 * FOLDER_STATS_MAX_LISTED;
    for i in 0..n {
        write(
            dir.path(),
            &[
                (&format!("box/e{i:04}.txt"), b""),
                (&format!("box/sub{i:04}/same.txt"), b"same\n"),
            ],
        );
    }
    let v = call(dir.path(), None, json!({"path": "box"})).unwrap();
    assert_eq!(v["files"], 2 * n, "{v}");
    for key in ["empty", "deepest", "most_lines"] {
        let len = v[key].as_array().unwrap().len();
        assert!(len <= FOLDER_STATS_MAX_LISTED, "{key} names {len} paths");
    }
    let in_groups: usize = v["same_content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_array().unwrap().len())
        .sum();
    assert!(
        in_groups <= FOLDER_STATS_MAX_LISTED,
        "same_content names {in_groups} paths"
    );
    let folders = v["folders"].as_object().unwrap().len();
    assert!(
        folders <= FOLDER_STATS_MAX_LISTED,
        "folders names {folders} folders"
    );
    assert_eq!(v["truncated"], true, "{v}");
}

/// Links are never followed: a link to a file or folder outside adds nothing, and neither does
/// a link inside that points back at a counted folder.
#[test]
fn links_are_not_followed_in_or_out() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    let outside = tmp.path().join("outside");
    write(&outside, &[("secret.txt", b"TOP SECRET\nline2\n")]);
    write(&root, &[("box/a.txt", b"one\n")]);
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("box/link.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("box/out")).unwrap();
    std::os::unix::fs::symlink(root.join("box"), root.join("box/loop")).unwrap();
    let v = call(&root, None, json!({"path": "box"})).unwrap();
    assert_eq!(v["files"], 1, "{v}");
    assert_eq!(v["total_lines"], 1, "{v}");
    assert!(!v.to_string().contains("secret"), "{v}");
    // Named as the path, a link is refused, not followed.
    for path in ["box/out", "box/link.txt", "box/loop"] {
        match call(&root, None, json!({ "path": path })) {
            Err(_) => {}
            Ok(v) => assert!(
                v["files"] == 0 || !v.to_string().contains("secret"),
                "{path}: {v}"
            ),
        }
    }
}

/// A path outside the workspace is refused; a glob filters the folder walked and cannot widen
/// it; a bad glob and a missing folder are refused with a reason; a file is counted alone.
#[test]
fn paths_and_globs_that_reach_outside_are_refused_or_stay_inside() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    write(&tmp.path().join("outside"), &[("secret.txt", b"x\n")]);
    write(&root, &[("box/a.txt", b"one\n"), ("other/b.txt", b"two\n")]);
    for path in ["..", "../outside", "/etc", "box/../../outside", "/"] {
        let r = call(&root, None, json!({ "path": path }));
        assert!(r.is_err(), "{path}: {r:?}");
    }
    for pattern in ["../**", "../other/*", "**/other/*", "/**", "../outside/*"] {
        let mut v = call(&root, None, json!({"path": "box", "pattern": pattern})).unwrap();
        assert_eq!(v["pattern"], pattern);
        v.as_object_mut().unwrap().remove("pattern");
        assert!(
            !v.to_string().contains("other") && !v.to_string().contains("secret"),
            "{pattern}: {v}"
        );
    }
    let err = call(&root, None, json!({"path": "box", "pattern": "{a,"})).unwrap_err();
    assert!(err.to_string().contains("not valid"), "{err}");
    assert!(call(&root, None, json!({"path": "nowhere"})).is_err());
    let v = call(&root, None, json!({"path": "box/a.txt"})).unwrap();
    assert_eq!(v["files"], 1, "{v}");
    assert_eq!(v["total_lines"], 1, "{v}");
}

/// A walk past MAX_WALK_ENTRIES stops, says so, and is marked truncated.
#[test]
fn a_walk_past_its_entry_cap_says_the_counts_are_partial() {
    let dir = tempfile::tempdir().unwrap();
    let n = rein_workspace::MAX_WALK_ENTRIES + 10;
    std::fs::create_dir_all(dir.path().join("many")).unwrap();
    for i in 0..n {
        std::fs::File::create(dir.path().join(format!("many/f{i:05}"))).unwrap();
    }
    let v = call(dir.path(), None, json!({"path": "many"})).unwrap();
    assert_eq!(v["truncated"], true);
    assert!(
        v["files"].as_u64().unwrap() < n as u64,
        "files: {}",
        v["files"]
    );
    let note = v["note"].as_str().unwrap();
    assert!(note.contains("The walk stopped"), "{note}");
}

/// A `.gitignore` the policy hides must not steer the walk: were it read, what it holds would
/// decide which files are counted, and its content would reach `files` (and every figure), in
/// `find_files` and every walking tool too (the walk is shared). Was a defect of the walk;
/// mended in cf17289 (`Walker::reading_ignore_files`, `desk::policy_walk`).
#[test]
fn a_hidden_ignore_file_does_not_steer_the_count() {
    let mut results = Vec::new();
    for rules in [&b"nothing-matches\n"[..], b"report-*.csv\n"] {
        let files: Vec<(&str, &[u8])> = vec![
            ("box/keep.txt", b"kept\n"),
            ("box/other/.gitignore", rules),
            ("box/other/report-3.csv", b"a\n1\n"),
        ];
        results.push(stats_of(
            &files,
            Some(&HideIgnoreFiles),
            json!({"path": "box"}),
        ));
    }
    assert_eq!(
        beyond_hidden_count(results[0].clone()),
        beyond_hidden_count(results[1].clone()),
        "a hidden .gitignore's content changed the count"
    );
}

/// Hides every `.gitignore`.
#[derive(Debug)]
struct HideIgnoreFiles;

impl PathFilter for HideIgnoreFiles {
    fn visible(&self, path: &RelPath) -> Visibility {
        if path.file_name() == Some(".gitignore") {
            Visibility::Hidden
        } else {
            Visibility::Shown
        }
    }
}
