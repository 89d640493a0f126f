//! Desk tools: normal use, caps firing with their message, binary files, ignore rules, and
//! proposals that never write.

use std::fs;

use rein_workspace::desk::{
    FIND_FILES_MAX_RESULTS, LIST_DIR_MAX_ENTRIES, READ_FILE_MAX_CHARS, SEARCH_MAX_MATCHES,
};
use rein_workspace::{ProposalKind, Sandbox, ToolContext, ToolError, ToolOutput};
use serde_json::json;

use crate::support::{data, desk, refusal, symlink, Fixture};

fn proposal(out: ToolOutput) -> rein_workspace::Proposal {
    match out {
        ToolOutput::Proposal(p) => p,
        other => panic!("expected a proposal, got {other:?}"),
    }
}

#[test]
fn list_dir_lists_kinds_and_sizes() {
    let fx = Fixture::new();
    fx.write("a.txt", "abc");
    fx.write("sub/b.txt", "b");
    symlink(&fx.outside, fx.path("out"));
    let ws = fx.ws();
    let v = data(&ws, "list_dir", json!({}));
    assert_eq!(v["path"], ".");
    assert_eq!(
        v["entries"],
        json!([
            {"name": "a.txt", "kind": "file", "size": 3},
            {"name": "out", "kind": "symlink"},
            {"name": "sub", "kind": "dir"},
        ])
    );
    let v = data(&ws, "list_dir", json!({"path": "sub"}));
    assert_eq!(v["entries"][0]["name"], "b.txt");
    assert!(refusal(&ws, "list_dir", json!({"path": "a.txt"})).contains("not a folder"));
    assert!(refusal(&ws, "list_dir", json!({"path": "nope"})).contains("does not exist"));
    assert!(refusal(&ws, "list_dir", json!({"path": "out"})).contains("link"));
}

#[test]
fn list_dir_cap_fires_with_a_message() {
    let fx = Fixture::new();
    for i in 0..LIST_DIR_MAX_ENTRIES + 3 {
        fx.write(&format!("many/f{i:04}.txt"), "");
    }
    let ws = fx.ws();
    let v = data(&ws, "list_dir", json!({"path": "many"}));
    assert_eq!(v["entries"].as_array().unwrap().len(), LIST_DIR_MAX_ENTRIES);
    assert_eq!(v["truncated"], true);
    assert_eq!(v["total"], LIST_DIR_MAX_ENTRIES + 3);
    assert!(
        v["note"].as_str().unwrap().contains("first 500 of 503"),
        "{v}"
    );
}

#[test]
fn read_file_whole_and_by_line_range() {
    let fx = Fixture::new();
    fx.write("poem.txt", "one\ntwo\nthree\nfour\n");
    let ws = fx.ws();
    let v = data(&ws, "read_file", json!({"path": "poem.txt"}));
    assert_eq!(v["content"], "one\ntwo\nthree\nfour\n");
    assert_eq!(v["total_lines"], 4);
    assert_eq!(v["truncated"], false);
    let v = data(
        &ws,
        "read_file",
        json!({"path": "poem.txt", "start_line": 2, "end_line": 3}),
    );
    assert_eq!(v["content"], "two\nthree\n");
    assert_eq!(
        (v["start_line"].as_u64(), v["end_line"].as_u64()),
        (Some(2), Some(3))
    );
    let v = data(
        &ws,
        "read_file",
        json!({"path": "poem.txt", "start_line": 4, "end_line": 99}),
    );
    assert_eq!(v["content"], "four\n");
    assert!(refusal(
        &ws,
        "read_file",
        json!({"path": "poem.txt", "start_line": 5})
    )
    .contains("only 4 lines"));
    assert!(refusal(
        &ws,
        "read_file",
        json!({"path": "poem.txt", "start_line": 3, "end_line": 2})
    )
    .contains("before start_line"));
    assert!(refusal(
        &ws,
        "read_file",
        json!({"path": "poem.txt", "start_line": 0})
    )
    .contains("minimum"));
    assert!(refusal(&ws, "read_file", json!({"path": "missing.txt"})).contains("does not exist"));
    fs::create_dir(fx.path("dir")).unwrap();
    assert!(refusal(&ws, "read_file", json!({"path": "dir"})).contains("list_dir"));
}

#[test]
fn an_empty_file_reads_whole_as_empty() {
    // The default range of an empty file once ran from line 1 to line 0 and was refused, so
    // no read of it could count as a read in full.
    let fx = Fixture::new();
    fx.write("empty.txt", "");
    let ws = fx.ws();
    for args in [
        json!({"path": "empty.txt"}),
        json!({"path": "empty.txt", "start_line": 1}),
        json!({"path": "empty.txt", "start_line": 1, "end_line": 1000000}),
    ] {
        let v = data(&ws, "read_file", args.clone());
        assert_eq!(v["content"], "", "{args}");
        assert_eq!(v["start_line"], 1, "{args}");
        assert_eq!(
            (v["end_line"].as_u64(), v["total_lines"].as_u64()),
            (Some(0), Some(0)),
            "{args}"
        );
        assert_eq!(v["truncated"], false, "{args}");
    }
    assert!(refusal(
        &ws,
        "read_file",
        json!({"path": "empty.txt", "start_line": 2})
    )
    .contains("only 0 lines"));
}

#[test]
fn read_file_cap_says_it_was_cut_and_where() {
    let fx = Fixture::new();
    let line = "x".repeat(99) + "\n";
    fx.write("big.txt", line.repeat(500));
    let ws = fx.ws();
    let v = data(&ws, "read_file", json!({"path": "big.txt"}));
    let shown = READ_FILE_MAX_CHARS / 100;
    assert_eq!(v["truncated"], true);
    assert_eq!(v["end_line"], shown);
    assert_eq!(v["content"].as_str().unwrap().len(), shown * 100);
    let note = v["note"].as_str().unwrap();
    assert!(
        note.contains(&format!("Cut after line {shown} of 500")),
        "{note}"
    );
    assert!(
        note.contains(&format!("start_line={}", shown + 1)),
        "{note}"
    );
    // One enormous line is cut inside the line, and says so.
    fx.write("wide.txt", "y".repeat(READ_FILE_MAX_CHARS + 10));
    let v = data(&ws, "read_file", json!({"path": "wide.txt"}));
    assert_eq!(v["content"].as_str().unwrap().len(), READ_FILE_MAX_CHARS);
    assert!(
        v["note"].as_str().unwrap().contains("Cut inside line 1"),
        "{v}"
    );
}

#[test]
fn binary_and_non_utf8_files_are_reported_not_mangled() {
    let fx = Fixture::new();
    fx.write("img.png", [0x89, b'P', b'N', b'G', 0, 0, 0, 13]);
    fx.write("latin1.txt", [b'c', b'a', b'f', 0xE9]);
    let ws = fx.ws();
    for name in ["img.png", "latin1.txt"] {
        let v = data(&ws, "read_file", json!({"path": name}));
        assert_eq!(v["binary"], true, "{v}");
        assert_eq!(v["sha256"].as_str().unwrap().len(), 64);
        assert!(v.get("content").is_none());
        let info = data(&ws, "file_info", json!({"path": name}));
        assert_eq!(info["text"], false);
    }
    let hits = data(&ws, "search_text", json!({"pattern": "PNG|caf"}));
    assert_eq!(hits["matches"], json!([]));
    assert!(
        hits["note"]
            .as_str()
            .unwrap()
            .contains("2 binary or non-UTF-8 files"),
        "{hits}"
    );
    assert!(refusal(
        &ws,
        "edit_file",
        json!({"path": "img.png", "old_text": "PNG", "new_text": "X"})
    )
    .contains("binary"));
}

#[test]
fn search_text_regex_literal_and_case() {
    let fx = Fixture::new();
    fx.write(
        "src/main.rs",
        "fn main() {\n    let total = add(1, 2);\n}\n",
    );
    fx.write("notes.md", "Total: a+b\n");
    let ws = fx.ws();
    let v = data(&ws, "search_text", json!({"pattern": "add\\(\\d"}));
    assert_eq!(
        v["matches"],
        json!([{"path": "src/main.rs", "line": 2, "text": "    let total = add(1, 2);"}])
    );
    let v = data(
        &ws,
        "search_text",
        json!({"pattern": "a+b", "literal": true}),
    );
    assert_eq!(v["matches"][0]["path"], "notes.md");
    let v = data(
        &ws,
        "search_text",
        json!({"pattern": "total", "case_insensitive": true, "glob": "*.md"}),
    );
    assert_eq!(v["matches"].as_array().unwrap().len(), 1);
    let v = data(
        &ws,
        "search_text",
        json!({"pattern": "total", "path": "src"}),
    );
    assert_eq!(v["matches"].as_array().unwrap().len(), 1);
    let err = desk(&ws, "search_text", json!({"pattern": "("})).unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
    assert!(err.to_string().contains("literal=true"), "{err}");
}

#[test]
fn search_and_find_respect_gitignore() {
    let fx = Fixture::new();
    fx.write(".gitignore", "target/\n*.log\n!keep.log\n");
    fx.write("target/out.txt", "needle");
    fx.write("debug.log", "needle");
    fx.write("keep.log", "needle");
    fx.write("src/a.txt", "needle");
    fx.write("src/.gitignore", "local.txt\n");
    fx.write("src/local.txt", "needle");
    fx.write("src/deep/.ignore", "secret*\n");
    fx.write("src/deep/secret.txt", "needle");
    fx.write("src/deep/open.txt", "needle");
    let ws = fx.ws();
    let v = data(&ws, "search_text", json!({"pattern": "needle"}));
    let paths: Vec<&str> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, vec!["keep.log", "src/a.txt", "src/deep/open.txt"]);
    let v = data(&ws, "find_files", json!({"pattern": "*.txt"}));
    assert_eq!(v["files"], json!(["src/a.txt", "src/deep/open.txt"]));
    // Rules of folders above the search start still apply.
    let v = data(
        &ws,
        "find_files",
        json!({"pattern": "*", "path": "src/deep"}),
    );
    assert_eq!(v["files"], json!(["src/deep/.ignore", "src/deep/open.txt"]));
}

#[test]
fn search_text_says_when_its_glob_left_nothing_or_no_line_matched() {
    let fx = Fixture::new();
    fx.write("mail/01.eml.txt", "Approved by: Dana\n");
    fx.write("mail/02.eml.txt", "Lunch on Friday\n");
    let ws = fx.ws();
    // A glob that fits no name: nothing searched, and the note shows how names look.
    let v = data(
        &ws,
        "search_text",
        json!({"pattern": "Approved", "path": "mail", "glob": "*.eml"}),
    );
    assert_eq!(v["files_searched"], 0);
    let note = v["note"].as_str().unwrap();
    assert!(note.contains("No file matched the glob"), "{note}");
    assert!(note.contains("\"mail/01.eml.txt\""), "{note}");
    // Files searched, no line matched.
    let v = data(&ws, "search_text", json!({"pattern": "approval"}));
    assert_eq!(v["files_searched"], 2);
    let note = v["note"].as_str().unwrap();
    assert!(
        note.contains("No line of the 2 files searched matched"),
        "{note}"
    );
    // A search that finds something says neither.
    let v = data(
        &ws,
        "search_text",
        json!({"pattern": "Approved", "glob": "*.txt"}),
    );
    assert_eq!(v["matches"].as_array().unwrap().len(), 1);
    assert!(v.get("note").is_none(), "{v}");
}

#[test]
fn search_text_reads_a_path_with_wildcards_as_a_glob() {
    let fx = Fixture::new();
    fx.write("services/auth.yaml", "cert_expires: 2025-06-30\n");
    fx.write("services/pricing.yaml", "cert_expires: 2025-01-17\n");
    fx.write("services/notes.txt", "cert_expires: 2025-01-01\n");
    fx.write("other/pricing.yaml", "cert_expires: 2025-01-02\n");
    let ws = fx.ws();
    let paths = |v: &serde_json::Value| -> Vec<String> {
        v["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["path"].as_str().unwrap().to_string())
            .collect()
    };
    // The folder before the first wildcard is searched, and the whole path is the glob.
    for path in ["services/*.yaml", "./services/*.yaml", "services/*.y?ml"] {
        let v = data(
            &ws,
            "search_text",
            json!({"pattern": "cert_expires: 2025-01", "path": path}),
        );
        assert_eq!(paths(&v), vec!["services/pricing.yaml"], "{path}: {v}");
        let note = v["note"].as_str().unwrap();
        assert!(
            note.contains("holds a glob: searched \"services\""),
            "{note}"
        );
    }
    // With a glob as well, a file must match both.
    let v = data(
        &ws,
        "search_text",
        json!({"pattern": "cert_expires", "path": "services/*", "glob": "*.txt"}),
    );
    assert_eq!(paths(&v), vec!["services/notes.txt"]);
    // A bare wildcard searches the whole workspace.
    let v = data(
        &ws,
        "search_text",
        json!({"pattern": "2025-01-02", "path": "*"}),
    );
    assert_eq!(paths(&v), vec!["other/pricing.yaml"]);
    // The folder part is still confined to the workspace.
    for path in ["../*.yaml", "services/../../*", "/etc/*", "/*", "a\\..\\*"] {
        let err = desk(&ws, "search_text", json!({"pattern": "x", "path": path})).unwrap_err();
        assert!(matches!(err, ToolError::Confinement(_)), "{path}: {err}");
    }
}

#[test]
fn search_text_glob_without_a_slash_keeps_the_files_of_a_folder_of_that_name() {
    let fx = Fixture::new();
    fx.write("services/auth.yaml", "owner: ben\n");
    fx.write("services/deep/cms.yaml", "owner: ann\n");
    fx.write("servicesx/a.yaml", "owner: cy\n");
    fx.write("top.yaml", "owner: dee\n");
    let ws = fx.ws();
    let v = data(
        &ws,
        "search_text",
        json!({"pattern": "owner", "path": "services", "glob": "services"}),
    );
    assert_eq!(v["files_searched"], 2, "{v}");
    let v = data(
        &ws,
        "search_text",
        json!({"pattern": "owner", "glob": "services"}),
    );
    assert_eq!(
        v["files_searched"], 2,
        "a folder's name matches whole, not as a prefix: {v}"
    );
    // File-name globs keep their meaning.
    let v = data(
        &ws,
        "search_text",
        json!({"pattern": "owner", "glob": "*.yaml"}),
    );
    assert_eq!(v["files_searched"], 4, "{v}");
    let v = data(
        &ws,
        "search_text",
        json!({"pattern": "owner", "glob": "top.yaml"}),
    );
    assert_eq!(v["files_searched"], 1, "{v}");
}

#[test]
fn search_text_cap_fires_with_a_message() {
    let fx = Fixture::new();
    fx.write("many.txt", "hit\n".repeat(SEARCH_MAX_MATCHES + 20));
    let ws = fx.ws();
    let v = data(&ws, "search_text", json!({"pattern": "hit"}));
    assert_eq!(v["matches"].as_array().unwrap().len(), SEARCH_MAX_MATCHES);
    assert_eq!(v["truncated"], true);
    assert!(
        v["note"]
            .as_str()
            .unwrap()
            .contains("Stopped after 100 matches"),
        "{v}"
    );
}

#[test]
fn find_files_globs_and_cap() {
    let fx = Fixture::new();
    fx.write("docs/a.md", "");
    fx.write("docs/deep/b.md", "");
    fx.write("c.txt", "");
    let ws = fx.ws();
    let v = data(&ws, "find_files", json!({"pattern": "*.md"}));
    assert_eq!(v["files"], json!(["docs/a.md", "docs/deep/b.md"]));
    let v = data(&ws, "find_files", json!({"pattern": "docs/*.md"}));
    assert_eq!(v["files"], json!(["docs/a.md"]));
    let v = data(&ws, "find_files", json!({"pattern": "docs/**/*.md"}));
    assert_eq!(v["total"], 2);
    assert!(refusal(&ws, "find_files", json!({"pattern": "a[b"})).contains("not valid"));
    for i in 0..FIND_FILES_MAX_RESULTS + 1 {
        fx.write(&format!("gen/f{i}.dat"), "");
    }
    let v = data(&ws, "find_files", json!({"pattern": "*.dat"}));
    assert_eq!(v["files"].as_array().unwrap().len(), FIND_FILES_MAX_RESULTS);
    assert_eq!(v["truncated"], true);
    assert!(
        v["note"].as_str().unwrap().contains("first 200 of 201"),
        "{v}"
    );
}

#[test]
fn find_related_ranks_by_stem_mention_and_terms() {
    let fx = Fixture::new();
    fx.write(
        "src/parser.rs",
        "pub fn parse_invoice(tokens: Tokenizer) -> InvoiceTotal { todo_marker }\n",
    );
    fx.write("tests/parser_test.rs", "use parser; #[test] fn t() {}\n");
    fx.write(
        "src/invoice.rs",
        "struct InvoiceTotal; fn parse_invoice() {} // uses Tokenizer\n",
    );
    fx.write("README.md", "The project. See parser.rs for details.\n");
    fx.write(
        "src/unrelated.rs",
        "fn main() { println!(\"hello world\"); }\n",
    );
    let ws = fx.ws();
    let v = data(&ws, "find_related", json!({"path": "src/parser.rs"}));
    let related = v["related"].as_array().unwrap();
    let paths: Vec<&str> = related
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"tests/parser_test.rs"), "{v}");
    assert!(paths.contains(&"src/invoice.rs"), "{v}");
    assert!(paths.contains(&"README.md"), "{v}");
    assert!(!paths.contains(&"src/unrelated.rs"), "{v}");
    assert!(!paths.contains(&"src/parser.rs"), "{v}");
    let scores: Vec<f64> = related
        .iter()
        .map(|r| r["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    let invoice = related
        .iter()
        .find(|r| r["path"] == "src/invoice.rs")
        .unwrap();
    assert!(
        invoice["reasons"][0]
            .as_str()
            .unwrap()
            .contains("distinctive terms"),
        "{invoice}"
    );
    let v = data(
        &ws,
        "find_related",
        json!({"path": "src/parser.rs", "max_results": 1}),
    );
    assert_eq!(v["related"].as_array().unwrap().len(), 1);
    assert!(refusal(&ws, "find_related", json!({"path": "nope.rs"})).contains("does not exist"));
}

#[test]
fn file_info_reports_facts() {
    let fx = Fixture::new();
    fx.write("a.txt", "one\ntwo\n");
    fx.write("d/x", "");
    let ws = fx.ws();
    let v = data(&ws, "file_info", json!({"path": "a.txt"}));
    assert_eq!(
        (
            v["exists"].as_bool(),
            v["kind"].as_str(),
            v["size"].as_u64(),
            v["lines"].as_u64()
        ),
        (Some(true), Some("file"), Some(8), Some(2))
    );
    assert_eq!(v["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(
        data(&ws, "file_info", json!({"path": "nope"}))["exists"],
        false
    );
    let v = data(&ws, "file_info", json!({"path": "d"}));
    assert_eq!(
        (v["kind"].as_str(), v["entries"].as_u64()),
        (Some("dir"), Some(1))
    );
}

#[test]
fn create_file_proposes_and_never_writes() {
    let fx = Fixture::new();
    fx.write("exists.txt", "x");
    let ws = fx.ws();
    let p = proposal(
        desk(
            &ws,
            "create_file",
            json!({"path": "new/hello.txt", "content": "hello\n"}),
        )
        .unwrap(),
    );
    assert_eq!(p.kind(), ProposalKind::Create);
    assert_eq!(p.path.as_str(), "new/hello.txt");
    assert_eq!(
        (p.before.as_deref(), p.after.as_deref()),
        (None, Some(&b"hello\n"[..]))
    );
    assert!(
        p.diff.contains("--- /dev/null")
            && p.diff.contains("+++ b/new/hello.txt")
            && p.diff.contains("+hello"),
        "{}",
        p.diff
    );
    assert!(!fx.path("new").exists(), "a proposal must not write");
    let msg = refusal(
        &ws,
        "create_file",
        json!({"path": "exists.txt", "content": "y"}),
    );
    assert!(
        msg.contains("already exists") && msg.contains("edit_file"),
        "{msg}"
    );
    let msg = refusal(
        &ws,
        "create_file",
        json!({"path": "exists.txt/inner", "content": "y"}),
    );
    assert!(msg.contains("not a folder"), "{msg}");
    let msg = refusal(
        &ws,
        "create_file",
        json!({"path": "../escape.txt", "content": "y"}),
    );
    assert!(msg.contains(".."), "{msg}");
    assert!(matches!(
        desk(
            &ws,
            "create_file",
            json!({"path": "CON.txt", "content": ""})
        )
        .unwrap_err(),
        ToolError::Confinement(_)
    ));
}

#[test]
fn edit_file_requires_exactly_one_occurrence() {
    let fx = Fixture::new();
    fx.write("f.txt", "alpha\nbeta\nalpha\n");
    let ws = fx.ws();
    let msg = refusal(
        &ws,
        "edit_file",
        json!({"path": "f.txt", "old_text": "gamma", "new_text": "x"}),
    );
    assert!(msg.contains("0 occurrences"), "{msg}");
    let msg = refusal(
        &ws,
        "edit_file",
        json!({"path": "f.txt", "old_text": "alpha", "new_text": "x"}),
    );
    assert!(msg.contains("occurs 2 times"), "{msg}");
    let p = proposal(
        desk(
            &ws,
            "edit_file",
            json!({"path": "f.txt", "old_text": "beta", "new_text": "BETA"}),
        )
        .unwrap(),
    );
    assert_eq!(p.kind(), ProposalKind::Modify);
    assert_eq!(p.after.as_deref(), Some(&b"alpha\nBETA\nalpha\n"[..]));
    assert!(p.diff.contains("-beta\n+BETA"), "{}", p.diff);
    assert_eq!(
        fs::read_to_string(fx.path("f.txt")).unwrap(),
        "alpha\nbeta\nalpha\n"
    );
    assert!(refusal(
        &ws,
        "edit_file",
        json!({"path": "f.txt", "old_text": "", "new_text": "x"})
    )
    .contains("old_text"));
    assert!(refusal(
        &ws,
        "edit_file",
        json!({"path": "g.txt", "old_text": "a", "new_text": "x"})
    )
    .contains("create_file"));
}

#[test]
fn replace_and_delete_file_proposals() {
    let fx = Fixture::new();
    fx.write("f.txt", "old\n");
    fs::create_dir(fx.path("dir")).unwrap();
    let ws = fx.ws();
    let p = proposal(
        desk(
            &ws,
            "replace_file",
            json!({"path": "f.txt", "content": "new\n"}),
        )
        .unwrap(),
    );
    assert_eq!(p.before_sha256().unwrap().len(), 64);
    assert!(p.diff.contains("-old\n+new"), "{}", p.diff);
    assert!(refusal(
        &ws,
        "replace_file",
        json!({"path": "f.txt", "content": "old\n"})
    )
    .contains("identical"));
    assert!(refusal(
        &ws,
        "replace_file",
        json!({"path": "nope.txt", "content": "x"})
    )
    .contains("create_file"));
    let p = proposal(desk(&ws, "delete_file", json!({"path": "f.txt"})).unwrap());
    assert_eq!(p.kind(), ProposalKind::Delete);
    assert_eq!(p.after, None);
    assert_eq!(p.to_json()["proposal"], "delete");
    assert!(fx.path("f.txt").exists());
    assert!(refusal(&ws, "delete_file", json!({"path": "dir"})).contains("folder"));
    assert!(refusal(&ws, "delete_file", json!({"path": "nope.txt"})).contains("does not exist"));
}

#[test]
fn finish_returns_data_and_desk_tools_refuse_a_sandbox() {
    let fx = Fixture::new();
    let ws = fx.ws();
    assert_eq!(
        data(&ws, "finish", json!({"summary": "done"})),
        json!({"finished": true, "summary": "done"})
    );
    assert_eq!(
        data(&ws, "finish", json!({}))["summary"],
        serde_json::Value::Null
    );
    let registry = rein_workspace::desk_registry();
    let mut sandbox = Sandbox::new();
    let err = registry
        .call(
            &mut ToolContext::Sandbox(&mut sandbox),
            "list_dir",
            &json!({}),
        )
        .unwrap_err();
    assert!(matches!(err, ToolError::WrongContext { .. }), "{err}");
}

#[test]
fn search_and_find_never_follow_links_out() {
    let fx = Fixture::new();
    fx.write("inside.txt", "SECRET? no");
    symlink(&fx.outside, fx.path("out"));
    symlink(fx.outside.join("secret.txt"), fx.path("leaf.txt"));
    let ws = fx.ws();
    let v = data(&ws, "search_text", json!({"pattern": "TOP SECRET"}));
    assert_eq!(v["matches"], json!([]), "{v}");
    let v = data(&ws, "find_files", json!({"pattern": "*secret*"}));
    assert_eq!(v["files"], json!([]), "{v}");
    let v = data(&ws, "find_related", json!({"path": "inside.txt"}));
    assert!(!v.to_string().contains("secret.txt"), "{v}");
}
