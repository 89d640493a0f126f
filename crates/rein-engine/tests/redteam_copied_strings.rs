#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red-team tests of the `copied-strings` lever: inputs built to make the held pattern let
//! through what the inputs do not hold, refuse what they do, or break the schema. llguidance
//! itself is asked what it lets through.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use rein_protocol::CompletionRequest;
use serde_json::{json, Value};
use support::{
    constrained_run, journal_events, line, write_json_document, Harness, PromptRecorder,
};

const OUT: &str = "out/fields.json";

fn levers(copied: bool) -> Levers {
    Levers {
        write_json: true,
        copied_strings: copied,
        ..Levers::DEFAULT
    }
}

/// A one-field deliverable: `{"name": "..."}`.
fn name_schema(extra: Value) -> Value {
    let mut name = json!({"type": "string"});
    for (k, v) in extra.as_object().unwrap() {
        name[k] = v.clone();
    }
    json!({"type": "object", "required": ["name"], "additionalProperties": false,
           "properties": {"name": name}})
}

/// A mission in a temp dir with `files` as its frozen inputs, `schema` as its deliverable's
/// JSON Schema and `checks` after the `json_schema` one.
fn mission(files: &[(&str, &[u8])], schema: Value, checks: Vec<Value>) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let mdir = dir.path().join("mission");
    for (p, bytes) in files {
        let f = mdir.join("fixtures").join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, bytes).unwrap();
    }
    let mut all =
        vec![json!({"id": "schema", "kind": "json_schema", "path": OUT, "schema": schema})];
    all.extend(checks);
    let m = json!({
        "id": "redteam_copied",
        "mode": "automatic",
        "description": "Copy a name from the inputs into JSON.",
        "prompt": "Read the inputs and write out/fields.json with the name copied from them, then finish.",
        "inputs": files.iter().map(|(p, _)| *p).collect::<Vec<_>>(),
        "tools": ["read_file", "create_file", "replace_file", "finish"],
        "required_artifact": OUT,
        "checks": all,
    });
    let mission_file = mdir.join("mission.json");
    std::fs::write(&mission_file, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    Harness::load(dir, mission_file)
}

fn grounded(pointer: &str) -> Value {
    json!({"id": "grounded", "kind": "grounded", "path": OUT, "claim": {"pointer": pointer}})
}

fn grounded_in(pointer: &str, sources: &[&str]) -> Value {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    json!({"id": format!("grounded-in-{n}"), "kind": "grounded", "path": OUT, "claim": {"pointer": pointer},
           "sources": sources})
}

fn read(path: &str) -> String {
    line("read_file", json!({ "path": path }))
}

/// Reads of `path` by line range, `per` lines each, over `lines` lines: a file too long for the
/// prompt to show whole in one result is shown whole in these. Returns the script and the
/// number of reads.
fn read_in_ranges(path: &str, lines: usize, per: usize) -> (String, usize) {
    let mut script = String::new();
    let mut n = 0;
    for first in (1..=lines).step_by(per) {
        let last = (first + per - 1).min(lines);
        script += &line(
            "read_file",
            json!({ "path": path, "start_line": first, "end_line": last }),
        );
        n += 1;
    }
    (script, n)
}

/// The document schema after the reads of `paths` (the request right after them).
fn after_reads(h: &Harness, paths: &[&str]) -> Value {
    let script: String = paths.iter().map(|p| read(p)).collect();
    let (requests, _) = constrained_run(h, &script, levers(true));
    write_json_document(&requests, paths.len())
}

/// Whether llguidance lets all of `text` (a document in JSON) through under `schema`.
fn decodes_text(schema: &Value, text: &str) -> bool {
    let n =
        rein_llama::schema_accepted_len(&rein_llama::with_fixed_separators(schema), text).unwrap();
    n == text.len()
}

/// `{"name": value}` as the prompt's separators write it (serde_json's escapes).
fn name_doc(value: &str) -> String {
    format!("{{\"name\": {}}}", serde_json::to_string(value).unwrap())
}

fn name_decodes(schema: &Value, value: &str) -> bool {
    decodes_text(schema, &name_doc(value))
}

fn name_pattern(schema: &Value) -> Option<String> {
    schema["properties"]["name"]["pattern"]
        .as_str()
        .map(str::to_string)
}

fn one_file(text: &[u8], extra: Value) -> Value {
    let h = mission(
        &[("in/a.txt", text)],
        name_schema(extra),
        vec![grounded("/name")],
    );
    let schema = after_reads(&h, &["in/a.txt"]);
    assert!(name_pattern(&schema).is_some(), "held: {schema}");
    rein_llama::check_schema_grammar(&schema).unwrap();
    schema
}

fn assert_held(schema: &Value, good: &[&str], bad: &[&str]) {
    for g in good {
        assert!(
            name_decodes(schema, g),
            "refused {g:?} under {:?}",
            name_pattern(schema)
        );
    }
    for b in bad {
        assert!(
            !name_decodes(schema, b),
            "let through {b:?} under {:?}",
            name_pattern(schema)
        );
    }
}

// ---- Claim 1: what the inputs do not hold on one line cannot be decoded. ----

#[test]
fn regex_metacharacters_of_the_inputs_are_literal_to_llguidance() {
    let s = one_file(b"Cost (net): $1.5*2 [a|b] ^x {3} a+b? \\d\n", json!({}));
    assert_held(
        &s,
        &[
            "$1.5*2 [a|b] ^x {3} a+b? \\d",
            "net",
            "Cost (net)",
            "a+b",
            "{3}",
        ],
        &["$1x5*2", "a", "$1.5*2 [a|b] ^x {3} aab?", "7", "\\", "5"],
    );
}

#[test]
fn json_escapes_in_the_document_cannot_smuggle_characters() {
    // The input holds a backslash, `n`, `u0041` as text. Raw JSON `\n` decodes to a newline,
    // `\u0041` to `A`: neither value is in the input.
    let s = one_file(b"Dir C:\\new\\u0041 done \"q\" it's\n", json!({}));
    assert!(name_decodes(&s, "Dir C:\\new\\u0041 done"));
    assert!(name_decodes(&s, "\"q\" it's"));
    assert!(name_decodes(&s, "q"));
    for raw in [
        r#"{"name": "Dir C:\new\u0041 done"}"#,
        r#"{"name": "Dir C:\new"}"#,
        r#"{"name": "C:\new"}"#,
        r#"{"name": "C:\\new\u0041"}"#,
        r#"{"name": "C:\u005cnew"}"#,
    ] {
        assert!(!decodes_text(&s, raw), "let through {raw}");
    }
    // The same value spelled with a JSON escape is the same value: `\"q\"` is fine.
    assert!(decodes_text(&s, r#"{"name": "\"q\" it's"}"#));
}

#[test]
fn tabs_runs_of_spaces_and_nbsp_are_kept_as_written() {
    let s = one_file("Acme\tTools  Ltd\u{a0}GmbH end\n".as_bytes(), json!({}));
    assert_held(
        &s,
        &[
            "Acme\tTools  Ltd\u{a0}GmbH end",
            "Tools  Ltd",
            "Ltd\u{a0}GmbH",
        ],
        &[
            "Acme Tools",
            "Acme\tTools Ltd",
            "Tools Ltd",
            "Ltd GmbH",
            "Acme\t",
            "Acme\t\tTools",
        ],
    );
}

#[test]
fn crlf_lines_do_not_join_or_keep_their_cr() {
    let s = one_file(b"Vendor: Bay Ltd\r\nNext line here\r\n\r\n", json!({}));
    assert_held(
        &s,
        &["Bay Ltd", "Next line here", "Vendor: Bay Ltd"],
        &[
            "Bay Ltd\r",
            "Ltd\r\nNext",
            "Ltd\nNext",
            "Ltd Next",
            "Ltd\r\n",
        ],
    );
}

#[test]
fn unicode_words_are_whole_and_byte_exact() {
    // NFD `Cafe` + combining acute; NFC `Zürich`; a CJK word.
    let s = one_file(
        "Cafe\u{301} Noir in Z\u{fc}rich \u{6771}\u{4eac}\u{90fd}\n".as_bytes(),
        json!({}),
    );
    assert_held(
        &s,
        &[
            "Cafe\u{301} Noir",
            "Noir in Z\u{fc}rich",
            "\u{6771}\u{4eac}\u{90fd}",
        ],
        &[
            "Cafe",
            "Caf\u{e9} Noir",
            "Zu\u{308}rich",
            "Z\u{fc}",
            "\u{6771}\u{4eac}",
            "\u{301} Noir",
        ],
    );
}

#[test]
fn empty_and_blank_lines_give_nothing_to_write() {
    let s = one_file(b"\n\n   \nAlpha Beta\n\t\n", json!({}));
    assert_held(
        &s,
        &["Alpha Beta", "Alpha", "Beta"],
        &["", " ", "\t", "Alpha Beta\n"],
    );
}

// ---- Claim 2: every run is decodable. ----

#[test]
fn end_punctuation_may_be_left_off_in_part_too() {
    // `(Northwind Paper Co.),`: the vendor as named is `Northwind Paper Co.`, a substring the
    // judge grounds; leaving off only `),` must be as possible as leaving off all of `.),`.
    let s = one_file(
        b"Paid to (Northwind Paper Co.), \"Quoted Name\". ('Single')\n",
        json!({}),
    );
    assert_held(
        &s,
        &[
            "Northwind Paper Co.",
            "Northwind Paper Co",
            "Northwind Paper Co.)",
            "(Northwind Paper Co.)",
            "Quoted Name",
            "\"Quoted Name\"",
            "Quoted Name\"",
            "Single",
            "'Single'",
            "Single'",
        ],
        &[
            "Northwind Paper Co..",
            "Paper Co.,)",
            "Quoted Name.\"",
            "((Northwind",
        ],
    );
}

#[test]
fn the_field_s_own_length_bounds_combine_with_the_pattern() {
    let s = one_file(
        b"Harbor Library Services\nAB\n",
        json!({"minLength": 3, "maxLength": 14}),
    );
    assert_held(
        &s,
        &["Harbor Library", "Harbor", "Library"],
        &["AB", "Harbor Library Services", "Library Services"],
    );
}

/// A `write_json` call of `document` as the prompt's separators write it.
fn write_json_text(document: &str) -> String {
    format!(
        "{{\"thought\": \"x\", \"action\": \"write_json\", \"parameters\": {{\"path\": \"{OUT}\", \"document\": {document}}}}}"
    )
}

/// Whether llguidance lets a whole `write_json` call of `document` through `action`.
fn action_decodes(action: &Value, document: &str) -> bool {
    decodes_text(action, &write_json_text(document))
}

#[test]
fn a_byte_order_mark_does_not_glue_itself_to_the_first_word() {
    // A file saved with a BOM: its first line's words are still words (the judge grounds
    // `Northwind Paper Co.` in it, a substring of the bytes).
    let s = one_file(
        "\u{feff}Northwind Paper Co.\nBill to: Harbor\n".as_bytes(),
        json!({}),
    );
    assert_held(
        &s,
        &["Northwind Paper Co.", "Northwind", "Harbor"],
        &["orthwind", "Northwind Paper Co.\u{feff}", "\u{feff}"],
    );
}

// ---- Claim 3: the schema stays buildable; the cap is said. ----

#[test]
fn a_min_length_no_run_meets_leaves_the_field_free_and_write_json_offered() {
    // Every run of the input is shorter than the field's own minLength: a pattern there makes
    // the string unsatisfiable, llguidance drops the whole write_json branch, and the model can
    // no longer write the deliverable at all.
    let (action, events) = after_one_read(b"ab cd\nef\n", json!({"minLength": 10}));
    assert!(
        action_decodes(&action, &name_doc("ten chars or more")),
        "write_json is still offered: {action}"
    );
    assert!(
        !action_decodes(&action, &name_doc("short")),
        "minLength stands"
    );
    let last = events.last().unwrap();
    assert_eq!(last["held"], json!([]), "{last}");
    assert_eq!(last["not_held"][0]["pointer"], "/name", "{last}");
}

#[test]
fn a_max_length_no_run_meets_leaves_the_field_free() {
    let (action, events) = after_one_read(b"Supercalifragilistic\n", json!({"maxLength": 8}));
    assert!(action_decodes(&action, &name_doc("Super")));
    assert_eq!(events.last().unwrap()["held"], json!([]));
}

#[test]
fn after_a_cut_reply_the_short_schema_keeps_write_json() {
    // Lever short-after-cut caps every text at SHORT_TEXT_MAX_CHARS after a cut reply; an
    // input whose only word is longer than that made the held string unsatisfiable there.
    let long = "x".repeat(300);
    let h = mission(
        &[("in/a.txt", format!("{long}\n").as_bytes())],
        name_schema(json!({})),
        vec![grounded("/name")],
    );
    let script = read("in/a.txt") + &read("in/a.txt") + &read("in/a.txt");
    let model = run_cut_at_second_call(&h, &script);
    // Call 1 held the 300-x word; call 2 is the short schema after the cut.
    let before = write_json_document(&model.requests, 1);
    assert!(name_pattern(&before).is_some());
    assert!(name_decodes(&before, &long));
    let after = model.requests[2].json_schema.clone().unwrap();
    let doc = write_json_document(&model.requests, 2);
    assert_eq!(doc["properties"]["name"]["maxLength"], 250, "{doc}");
    rein_llama::check_schema_grammar(&doc).unwrap();
    assert!(action_decodes(&after, &name_doc("xxx")), "{doc}");
}

#[test]
fn a_long_min_length_over_many_like_lines_stays_buildable() {
    // llguidance proves `pattern` and `minLength` together non-empty by a bounded search: over
    // 400 lines sharing their first words, a minLength of 16 ran it out, so the schema could
    // not be built and the write_json branch was lost.
    let ledger: String = (0..400)
        .map(|i| format!("Paid by customer {i}\n"))
        .collect();
    let words: Vec<String> = (0..60).map(|i| format!("w{i:03}")).collect();
    let long_line = words.join(" ") + "\n";
    // The ledger (about 8,400 characters) is shown whole in two reads by line range.
    let cases: [(&str, u64, &str, &str, usize); 3] = [
        (
            ledger.as_str(),
            16,
            "Paid by customer 399",
            "customer 399",
            200,
        ),
        (ledger.as_str(), 2, "399", "Paid by customer 400", 200),
        (
            long_line.as_str(),
            85,
            &words[..18].join(" "),
            &words[..17].join(" "),
            1,
        ),
    ];
    for (body, min, good, bad, per) in cases {
        let h = mission(
            &[("in/a.txt", body.as_bytes())],
            name_schema(json!({"minLength": min, "maxLength": 200})),
            vec![grounded("/name")],
        );
        let (script, n) = read_in_ranges("in/a.txt", body.lines().count(), per);
        let (requests, events) = constrained_run(&h, &script, levers(true));
        let doc = write_json_document(&requests, n);
        assert!(name_pattern(&doc).is_some(), "{min}");
        rein_llama::check_schema_grammar(&doc).unwrap();
        let action = requests[n].json_schema.clone().unwrap();
        assert!(action_decodes(&action, &name_doc(good)), "{min}: {good}");
        assert!(!action_decodes(&action, &name_doc(bad)), "{min}: {bad}");
        assert_eq!(events.last().unwrap()["held"], json!(["/name"]));
    }
}

#[test]
fn after_a_cut_reply_a_held_string_with_bounds_stays_buildable() {
    let ledger: String = (0..400)
        .map(|i| format!("Paid by customer {i}\n"))
        .collect();
    let h = mission(
        &[("in/a.txt", ledger.as_bytes())],
        name_schema(json!({"minLength": 16})),
        vec![grounded("/name")],
    );
    // Shown whole in two reads by line range; the reply after them is cut.
    let (reads, n) = read_in_ranges("in/a.txt", 400, 200);
    let script = reads + &read("in/a.txt") + &read("in/a.txt");
    let model = run_cut_at_call(&h, &script, n);
    let after = model.requests[n + 1].json_schema.clone().unwrap();
    let doc = write_json_document(&model.requests, n + 1);
    assert!(name_pattern(&doc).is_some(), "{doc}");
    rein_llama::check_schema_grammar(&after).unwrap();
    assert!(action_decodes(&after, &name_doc("Paid by customer 7")));
    assert!(!action_decodes(&after, &name_doc("customer 7")));
    // The thought is still capped by the cut's schema.
    assert_eq!(
        after["anyOf"][0]["properties"]["thought"]["maxLength"],
        json!(rein_engine::agent::SHORT_TEXT_MAX_CHARS.min(160))
    );
}

#[test]
fn a_single_long_line_is_over_the_cap_and_said_so() {
    // 1,100 words on one line (5,500 characters, as long as a line the prompt shows whole
    // gets): the runs' pattern would be quadratic. Not held, and said so.
    let body = "word ".repeat(1_100) + "\n";
    let h = mission(
        &[("in/a.txt", body.as_bytes())],
        name_schema(json!({})),
        vec![grounded("/name")],
    );
    let (requests, events) = constrained_run(&h, &read("in/a.txt"), levers(true));
    let doc = write_json_document(&requests, 1);
    assert!(name_pattern(&doc).is_none());
    let why = events.last().unwrap()["not_held"][0]["why"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(why.contains("over the cap of 40000"), "{why}");
    rein_llama::check_schema_grammar(&doc).unwrap();
}

#[test]
fn a_large_file_is_not_read_whole_so_nothing_is_held_and_no_blow_up() {
    // 300 KB: read_file cuts it, so it was not read whole.
    let body: String = (0..30_000).map(|i| format!("line {i}\n")).collect();
    assert!(body.len() > 200_000);
    let h = mission(
        &[("in/a.txt", body.as_bytes())],
        name_schema(json!({})),
        vec![grounded("/name")],
    );
    let (requests, events) = constrained_run(&h, &read("in/a.txt"), levers(true));
    assert!(name_pattern(&write_json_document(&requests, 1)).is_none());
    assert_eq!(events.last().unwrap()["held"], json!([]));
}

#[test]
fn thousands_of_short_lines_near_the_cap_stay_buildable_and_exact() {
    // 900 lines, ~11 KB: shown whole in three reads by line range, a pattern of ~13,000
    // characters.
    let body: String = (0..900).map(|i| format!("w{i:04} x{i}.\n")).collect();
    assert!(body.len() < 12_000);
    let h = mission(
        &[("in/a.txt", body.as_bytes())],
        name_schema(json!({"minLength": 2, "maxLength": 40})),
        vec![grounded("/name")],
    );
    let (script, n) = read_in_ranges("in/a.txt", 900, 300);
    let (requests, _) = constrained_run(&h, &script, levers(true));
    let doc = write_json_document(&requests, n);
    let p = name_pattern(&doc).expect("held");
    assert!(p.len() > 10_000, "{}", p.len());
    rein_llama::check_schema_grammar(&doc).unwrap();
    assert_held(
        &doc,
        &["w0899 x899.", "w0000 x0", "x777"],
        &["w0899 x898", "w0000 x1", "x900"],
    );
}

// ---- Claim 4: only inputs read whole, frozen, of the check's sources. ----

fn two_files(checks: Vec<Value>) -> Harness {
    mission(
        &[
            ("in/a.txt", b"Alpha Vendor Ltd\n"),
            ("in/b.txt", b"Beta Supplies Inc\n"),
        ],
        json!({"type": "object", "required": ["name", "note"], "additionalProperties": false,
               "properties": {"name": {"type": "string"}, "note": {"type": "string"}}}),
        checks,
    )
}

fn doc2(name: &str, note: &str) -> String {
    format!(
        "{{\"name\": {}, \"note\": {}}}",
        serde_json::to_string(name).unwrap(),
        serde_json::to_string(note).unwrap()
    )
}

#[test]
fn a_grounded_check_s_sources_bound_its_pattern() {
    let h = two_files(vec![grounded_in("/name", &["in/a.txt"])]);
    let s = after_reads(&h, &["in/a.txt", "in/b.txt"]);
    assert!(decodes_text(
        &s,
        &doc2("Alpha Vendor Ltd", "anything at all")
    ));
    assert!(
        !decodes_text(&s, &doc2("Beta Supplies Inc", "x")),
        "b.txt is not a source"
    );
    assert!(s["properties"]["note"].get("pattern").is_none());
}

#[test]
fn a_wider_check_listed_first_does_not_widen_a_narrower_one() {
    // `grounded ""` (every input) comes before `grounded /name` (a.txt only): the name must
    // satisfy both, so b.txt's words may not be written there, whatever the order.
    for checks in [
        vec![grounded(""), grounded_in("/name", &["in/a.txt"])],
        vec![grounded_in("/name", &["in/a.txt"]), grounded("")],
    ] {
        let h = two_files(checks.clone());
        let s = after_reads(&h, &["in/a.txt", "in/b.txt"]);
        rein_llama::check_schema_grammar(&s).unwrap();
        assert!(
            decodes_text(&s, &doc2("Alpha Vendor", "Beta Supplies")),
            "{checks:?}"
        );
        assert!(
            !decodes_text(&s, &doc2("Beta Supplies", "Alpha")),
            "the name was let come from b.txt with checks {checks:?}: {s}"
        );
        assert!(!decodes_text(&s, &doc2("Alpha", "Gamma")), "{checks:?}");
    }
}

#[test]
fn checks_with_other_sources_on_one_string_hold_it_to_what_both_allow() {
    // The name must be grounded in a.txt (its own check) and in b.txt (the whole document's):
    // no line is in both, so no run passes both, and the name is left free rather than held to
    // nothing (which would lose write_json). The note is held to b.txt.
    let h = two_files(vec![
        grounded_in("", &["in/b.txt"]),
        grounded_in("/name", &["in/a.txt"]),
    ]);
    let (requests, events) =
        constrained_run(&h, &(read("in/a.txt") + &read("in/b.txt")), levers(true));
    let s = write_json_document(&requests, 2);
    rein_llama::check_schema_grammar(&s).unwrap();
    assert!(s["properties"]["name"].get("pattern").is_none(), "{s}");
    assert!(decodes_text(&s, &doc2("anything", "Beta Supplies")));
    assert!(!decodes_text(&s, &doc2("anything", "Alpha")));
    let last = events.last().unwrap();
    assert_eq!(last["held"], json!([""]), "{last}");
    let pointers: Vec<&Value> = last["not_held"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &n["pointer"])
        .collect();
    assert_eq!(pointers, [&json!(""), &json!("/name")], "{last}");
}

#[test]
fn path_spellings_of_a_read_count_once_and_nothing_more() {
    let h = two_files(vec![grounded("")]);
    let plain = after_reads(&h, &["in/a.txt"]);
    for spelling in ["./in/a.txt", "in//a.txt", "in/./a.txt"] {
        let h = two_files(vec![grounded("")]);
        let s = after_reads(&h, &[spelling]);
        assert_eq!(s, plain, "{spelling}");
        assert!(!decodes_text(&s, &doc2("Beta", "Alpha")), "{spelling}");
        assert!(decodes_text(&s, &doc2("Alpha", "Vendor Ltd")), "{spelling}");
    }
}

#[test]
fn a_partial_read_even_of_every_line_but_one_adds_nothing() {
    let h = mission(
        &[(
            "in/a.txt",
            b"first line words\nsecond line words\nthird line\n",
        )],
        name_schema(json!({})),
        vec![grounded("/name")],
    );
    let part = line("read_file", json!({"path": "in/a.txt", "start_line": 2}));
    let whole = line(
        "read_file",
        json!({"path": "in/a.txt", "start_line": 1, "end_line": 3}),
    );
    let (requests, events) = constrained_run(&h, &(part + &whole), levers(true));
    assert!(name_pattern(&write_json_document(&requests, 1)).is_none());
    assert_eq!(events[1]["held"], json!([]));
    // start_line 1 to the last line is a whole read.
    let s = write_json_document(&requests, 2);
    assert_held(
        &s,
        &["first line words", "third line"],
        &["line words\nsecond"],
    );
}

// ---- Claim 5: nothing else in the schema changes. ----

fn rich_schema() -> Value {
    json!({"type": "object", "additionalProperties": false,
    "required": ["name", "code", "kind", "when", "fixed", "n", "list", "2024"],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "kind": {"type": "string", "enum": ["a", "b"]},
        "when": {"type": "string", "format": "date"},
        "fixed": {"type": "string", "const": "k"},
        "n": {"type": "number"},
        "list": {"type": "array", "items": {"type": "string"}},
        "2024": {"type": "string"}
    }})
}

#[test]
fn only_free_strings_under_the_pointer_change() {
    let files: &[(&str, &[u8])] = &[("in/a.txt", b"ABC Alpha Vendor 12\n")];
    let on = mission(files, rich_schema(), vec![grounded("")]);
    let (with, _) = constrained_run(&on, &read("in/a.txt"), levers(true));
    let (without, _) = constrained_run(&on, &read("in/a.txt"), levers(false));
    let mut a = with[1].json_schema.clone().unwrap();
    let b = without[1].json_schema.clone().unwrap();
    rein_llama::check_schema_grammar(&a).unwrap();
    let doc = write_json_document(&with, 1);
    let free = write_json_document(&without, 1);
    // `name` has its minLength 1 in its pattern; the others are held as they were.
    assert!(doc["properties"]["name"].get("minLength").is_none());
    assert!(name_decodes(&rich_only(&doc, "name"), "Alpha Vendor"));
    assert!(!name_decodes(&rich_only(&doc, "name"), ""));
    for held in ["name", "2024"] {
        assert!(
            doc["properties"][held]["pattern"]
                .as_str()
                .unwrap()
                .starts_with("^(?:"),
            "{held}"
        );
    }
    assert!(doc["properties"]["list"]["items"]["pattern"].is_string());
    // Put the lever-off nodes back: what is left is the lever-off schema, other tools too.
    let branch = a["anyOf"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|b| b["properties"]["action"]["const"] == "write_json")
        .unwrap();
    let props = &mut branch["properties"]["parameters"]["properties"]["document"]["properties"];
    for held in ["name", "2024", "list"] {
        props[held] = free["properties"][held].clone();
    }
    assert_eq!(a, b);
}

/// `{"name": <that property of the rich schema>}`, to ask llguidance about one field.
fn rich_only(doc: &Value, field: &str) -> Value {
    json!({"type": "object", "required": ["name"], "additionalProperties": false,
           "properties": {"name": doc["properties"][field].clone()}})
}

#[test]
fn a_pointer_that_leads_nowhere_changes_nothing_and_is_not_said_held() {
    for pointer in ["/missing", "/list/0/deeper", "/name/x", "/n/0"] {
        let on = mission(
            &[("in/a.txt", b"Alpha Vendor\n")],
            rich_schema(),
            vec![grounded(pointer)],
        );
        let (with, events) = constrained_run(&on, &read("in/a.txt"), levers(true));
        let (without, _) = constrained_run(&on, &read("in/a.txt"), levers(false));
        assert_eq!(with[1].json_schema, without[1].json_schema, "{pointer}");
        let last = events.last().unwrap();
        assert_eq!(last["held"], json!([]), "{pointer}: {last}");
        assert_eq!(last["not_held"][0]["pointer"], pointer, "{pointer}: {last}");
    }
}

#[test]
fn a_pointer_to_a_number_or_an_own_rule_changes_nothing() {
    for pointer in ["/n", "/code", "/kind", "/when", "/fixed"] {
        let on = mission(
            &[("in/a.txt", b"Alpha Vendor\n")],
            rich_schema(),
            vec![grounded(pointer)],
        );
        let (with, _) = constrained_run(&on, &read("in/a.txt"), levers(true));
        let (without, _) = constrained_run(&on, &read("in/a.txt"), levers(false));
        assert_eq!(with[1].json_schema, without[1].json_schema, "{pointer}");
    }
}

#[test]
fn a_property_named_by_digits_is_held_where_it_is() {
    let on = mission(
        &[("in/a.txt", b"Alpha Vendor\n")],
        rich_schema(),
        vec![grounded("/2024")],
    );
    let s = after_reads(&on, &["in/a.txt"]);
    assert!(s["properties"]["2024"]["pattern"].is_string(), "{s}");
    assert!(s["properties"]["name"].get("pattern").is_none());
}

#[test]
fn an_openai_endpoint_is_never_held() {
    struct Remote {
        inner: PromptRecorder,
        identity: rein_protocol::ModelIdentity,
    }
    impl rein_models::Model for Remote {
        fn identity(&self) -> &rein_protocol::ModelIdentity {
            &self.identity
        }
        fn complete(
            &mut self,
            r: &CompletionRequest,
            on_text: &mut dyn FnMut(&str),
        ) -> rein_models::Result<rein_protocol::Completion> {
            self.inner.complete(r, on_text)
        }
        fn choose(
            &mut self,
            r: &rein_protocol::ChooseRequest,
        ) -> rein_models::Result<rein_protocol::ChooseReply> {
            self.inner.choose(r)
        }
    }
    let h = mission(
        &[("in/a.txt", b"Alpha Vendor\n")],
        name_schema(json!({})),
        vec![grounded("")],
    );
    let inner = PromptRecorder::new(&read("in/a.txt"), "remote.jsonl");
    let mut identity = rein_models::Model::identity(&inner).clone();
    identity.spec = "openai:http://127.0.0.1:8080#qwen".into();
    let mut model = Remote { inner, identity };
    let (out, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = levers(true);
        o.constrained = true;
        o.limits.attempts = 1;
    });
    let requests = &model.inner.requests;
    assert!(requests.len() >= 2);
    let doc = write_json_document(requests, 1);
    assert!(doc["properties"]["name"].is_object());
    assert!(name_pattern(&doc).is_none(), "{doc}");
    assert!(journal_events(&h.journal, out.run, "copied_strings").is_empty());
}

// ---- Claim 6: the judge is untouched. ----

#[test]
fn with_the_lever_on_a_wrong_document_is_still_judged_fail() {
    // A scripted model is not held by patterns: what it writes is judged as with the lever off.
    for (name, pass) in [
        ("Alpha Vendor Ltd.", false),
        ("Invented Co", false),
        ("Alpha Vendor Ltd", true),
    ] {
        for on in [true, false] {
            let h = mission(
                &[("in/a.txt", b"Vendor: Alpha Vendor Ltd\n")],
                name_schema(json!({})),
                vec![grounded("/name")],
            );
            let script = read("in/a.txt")
                + &line(
                    "write_json",
                    json!({"path": OUT, "document": {"name": name}}),
                )
                + &read(OUT)
                + &line("finish", json!({"summary": "Copied the name."}));
            let mut model = PromptRecorder::new(&script, "judge.jsonl");
            let (out, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
                o.levers = levers(on);
                o.constrained = true;
                o.limits.attempts = 1;
            });
            let verdict = out.verdict.expect("judged");
            assert_eq!(verdict.passed, pass, "{name} lever {on}: {verdict:#?}");
        }
    }
}

#[test]
fn doc_extract_wrong_and_right_with_the_lever_on() {
    for right in [false, true] {
        let h = Harness::new("doc_extract");
        let reads: String = ["invoice_001.txt", "invoice_002.txt", "invoice_003.txt"]
            .iter()
            .map(|f| read(&format!("invoices/{f}")))
            .collect();
        let script = reads
            + &line(
                "write_json",
                json!({"path": OUT, "document": support::doc_extract_fields(right)}),
            )
            + &read(OUT)
            + &line("finish", json!({"summary": "Extracted."}));
        let mut model = PromptRecorder::new(&script, "de.jsonl");
        let (out, _) = h.run_gated(&mut model, &mut AllowAll, |o| {
            o.levers = levers(true);
            o.constrained = true;
            o.limits.attempts = 1;
        });
        // The wrong document was written (a scripted model is not held) and judged FAIL.
        let written = std::fs::read_to_string(h.workspace.join(OUT)).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&written).unwrap(),
            support::doc_extract_fields(right)
        );
        let verdict = out.verdict.expect("judged");
        assert_eq!(verdict.passed, right, "{verdict:#?}");
    }
}

// ---- Claims 1 and 2 at once: random lines against a reference of what a run is. ----

/// Every run of whole words of `line` (end punctuation, or a part of it, left off), by brute
/// force: the values the lever must let through, and the only ones.
fn reference_runs(line: &str) -> std::collections::BTreeSet<String> {
    const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '"', '\''];
    const LEADING: &[char] = &['(', '[', '"', '\'', '\u{feff}'];
    let mut words: Vec<(usize, usize)> = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                words.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    let ends = |v: &str| -> Vec<String> {
        let core = v.trim_end_matches(TRAILING);
        if core.is_empty() || core.len() == v.len() {
            return vec![v.to_string()];
        }
        (core.len()..=v.len())
            .filter(|&n| v.is_char_boundary(n))
            .map(|n| v[..n].to_string())
            .collect()
    };
    let mut out = std::collections::BTreeSet::new();
    for j in 0..words.len() {
        let w = &line[words[j].0..words[j].1];
        let mut starts = vec![w];
        let mut opened = w;
        while let Some(rest) = opened.strip_prefix(LEADING) {
            if rest.trim_start_matches(LEADING).is_empty() {
                break;
            }
            starts.push(rest);
            opened = rest;
        }
        for s in starts {
            let from = words[j].1 - s.len();
            out.extend(ends(s));
            for e in j + 1..words.len() {
                let prefix = &line[from..words[e].0];
                for v in ends(&line[words[e].0..words[e].1]) {
                    out.insert(format!("{prefix}{v}"));
                }
            }
        }
    }
    out
}

#[test]
fn random_lines_hold_exactly_their_runs_within_the_bounds() {
    let alphabet: Vec<char> = "ab.,;:!?)](\"'  \t\u{a0}\u{e9}\u{301}\\$*|\u{feff}x"
        .chars()
        .collect();
    let mut seed: u64 = 7;
    let mut rnd = |n: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) as usize) % n
    };
    let lines: Vec<String> = (0..40)
        .map(|_| {
            (0..1 + rnd(12))
                .map(|_| alphabet[rnd(alphabet.len())])
                .collect()
        })
        .collect();
    let text = lines.join("\n") + "\n";
    let allowed: std::collections::BTreeSet<String> =
        lines.iter().flat_map(|l| reference_runs(l)).collect();
    // Candidates: every piece of every line, and pieces across two lines.
    let mut cands: std::collections::BTreeSet<String> = allowed.clone();
    for l in &lines {
        let cuts: Vec<usize> = l.char_indices().map(|(i, _)| i).chain([l.len()]).collect();
        for (a, &x) in cuts.iter().enumerate() {
            for &y in &cuts[a + 1..] {
                cands.insert(l[x..y].to_string());
            }
        }
    }
    for pair in lines.windows(2) {
        for sep in ["\n", " ", ""] {
            cands.insert(format!("{}{sep}{}", pair[0].trim(), pair[1].trim()));
        }
    }
    cands.insert(String::new());
    for (min, max) in [(None, None), (Some(3), Some(9))] {
        let mut extra = json!({});
        if let (Some(a), Some(b)) = (min, max) {
            extra = json!({"minLength": a, "maxLength": b});
        }
        let schema = one_file(text.as_bytes(), extra);
        let re = regex::Regex::new(&name_pattern(&schema).unwrap()).unwrap();
        let fits = |c: &str| {
            let n = c.chars().count();
            min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m)
        };
        for (i, c) in cands.iter().enumerate() {
            let want = allowed.contains(c) && fits(c);
            assert_eq!(re.is_match(c), want, "{c:?} ({min:?}..{max:?})");
            if i % 9 == 0 || want && i % 3 == 0 {
                assert_eq!(
                    name_decodes(&schema, c),
                    want,
                    "llguidance: {c:?} ({min:?}..{max:?})"
                );
            }
        }
    }
}

/// Runs `script` with the lever and `short-after-cut` on, the second reply cut at the reply cap.
fn run_cut_at_second_call(h: &Harness, script: &str) -> PromptRecorder {
    run_cut_at_call(h, script, 1)
}

/// Runs `script` with the reply to call `cut` (from 0) cut at the reply cap.
fn run_cut_at_call(h: &Harness, script: &str, cut: usize) -> PromptRecorder {
    let mut model = PromptRecorder::tapped(
        script,
        "cut.jsonl",
        Box::new(move |call, request, c| {
            if call == cut {
                c.text = c.text.chars().take(20).collect();
                c.finish = rein_protocol::FinishReason::Length;
                c.completion_tokens = request.max_tokens;
            }
        }),
    );
    let _ = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = Levers {
            short_after_cut: true,
            ..levers(true)
        };
        o.constrained = true;
        o.limits.attempts = 1;
    });
    model
}

/// One read of `in/a.txt` holding `text`, `/name` grounded in it with the schema rules `bounds`:
/// the action schema of the next request (its document schema checked buildable) and the
/// `copied_strings` journal payloads.
fn after_one_read(text: &[u8], bounds: Value) -> (Value, Vec<Value>) {
    let h = mission(
        &[("in/a.txt", text)],
        name_schema(bounds),
        vec![grounded("/name")],
    );
    let (requests, events) = constrained_run(&h, &read("in/a.txt"), levers(true));
    rein_llama::check_schema_grammar(&write_json_document(&requests, 1)).unwrap();
    (requests[1].json_schema.clone().unwrap(), events)
}
