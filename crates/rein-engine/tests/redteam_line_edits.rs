#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red-team probes of the `line-edits` lever: a deliverable edited in place (non-empty UTF-8
//! text when the run begins) is offered `edit_lines`, not `edit_file` nor `replace_file`; every
//! text the model reads names `edit_lines` where it named those; the judge is unchanged; off
//! changes nothing; a policy rule on reading a file holds for `edit_lines`' refusals.
//!
//! A test that fails is a finding (see the comment above it); the others document what held.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::{AgentOptions, Levers};
use rein_engine::gate::{AllowAll, DenyAll};
use rein_engine::policy::Policy;
use rein_protocol::FinishReason;
use serde_json::{json, Value};
use support::{
    allowed_tools, desk_policy, finish_line, finish_refusals, journal_events, line, Harness,
    PromptRecorder, Ran,
};

const TASK: &str = "edit-crontab";
const FILE: &str = "config/crontab.txt";
const REINDEX: &str = "0 3 * * 1    /opt/shop/bin/reindex-search.sh";
const SYNC: &str = "*/10 * * * * /opt/shop/bin/sync-prices.sh";

fn desk(task: &str) -> std::path::PathBuf {
    support::missions_dir().join("../suites/desk").join(task)
}

fn fixture_text() -> String {
    std::fs::read_to_string(desk(TASK).join("fixtures").join(FILE)).unwrap()
}

fn gold() -> String {
    std::fs::read_to_string(desk(TASK).join("judge/gold/files").join(FILE)).unwrap()
}

fn read_file() -> String {
    line("read_file", json!({ "path": FILE }))
}

fn reads() -> String {
    line("read_file", json!({"path": "config/jobs.md"})) + &read_file()
}

fn both_changes() -> Value {
    json!([
        {"line": REINDEX, "new_line": "0 4 * * 0    /opt/shop/bin/reindex-search.sh"},
        {"line": SYNC, "new_line": format!("# {SYNC}")},
    ])
}

fn edit(changes: Value) -> String {
    line("edit_lines", json!({"path": FILE, "changes": changes}))
}

fn attempt(changes: Value) -> String {
    reads() + &edit(changes) + &read_file() + &finish_line()
}

fn lines_on() -> Levers {
    Levers {
        line_edits: true,
        monotone_attempts: true,
        ..Levers::DEFAULT
    }
}

fn run_with(
    h: Harness,
    script: &str,
    levers: Levers,
    tweak: impl FnOnce(&mut AgentOptions),
) -> Ran {
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = levers;
        o.constrained = true;
        o.limits.attempts = 1;
        tweak(o);
    })
}

fn run(h: Harness, script: &str) -> Ran {
    run_with(h, script, lines_on(), |_| {})
}

fn offers(r: &Ran, request: usize, tool: &str) -> bool {
    allowed_tools(&r.model.requests[request])
        .iter()
        .any(|t| t == tool)
}

fn on_disk(r: &Ran) -> Vec<u8> {
    std::fs::read(r.h.workspace.join(FILE)).unwrap()
}

/// The text around the first `word` in `p`, for a readable failure.
fn around(p: &str, word: &str) -> String {
    let at = p.find(word).unwrap_or(0);
    let from = p[..at].char_indices().rev().nth(240).map_or(0, |(i, _)| i);
    let to = p[at..]
        .char_indices()
        .nth(120)
        .map_or(p.len(), |(i, _)| at + i);
    p[from..to].to_string()
}

/// No prompt of the run names `edit_file` or `replace_file`, nor does any request offer them.
fn never_told_edit_file_or_replace_file(r: &Ran) {
    assert!(!r.model.requests.is_empty());
    for (i, p) in r.model.prompts().iter().enumerate() {
        for word in ["edit_file", "replace_file"] {
            assert!(
                !p.contains(word),
                "request {i} tells the model of {word}, which the run does not offer: ... {} ...",
                around(p, word)
            );
        }
        for word in ["edit_file", "replace_file"] {
            assert!(!offers(r, i, word), "request {i} offers {word}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Texts the model reads.
// ---------------------------------------------------------------------------------------------

/// An `edit_lines` reply cut off at the reply cap: the generic advice "add the rest with
/// edit_file" (repair.rs) would send the model to a tool the run does not offer; the message
/// names the edit_lines call instead, constrained or not, short-after-cut on or off.
#[test]
fn a_cut_edit_lines_reply_is_not_told_to_add_the_rest_with_edit_file() {
    for (short_after_cut, constrained) in [(true, true), (false, true), (false, false)] {
        let script = reads() + &edit(both_changes()) + &edit(both_changes()) + &read_file();
        let h = Harness::desk_suite(TASK);
        let mut model = PromptRecorder::tapped(
            &script,
            "cut.jsonl",
            Box::new(|call, request, c| {
                if call == 2 {
                    let keep = c.text.chars().count() / 2;
                    c.text = c.text.chars().take(keep).collect();
                    c.finish = FinishReason::Length;
                    c.completion_tokens = request.max_tokens;
                }
            }),
        );
        let (out, events) = h.run_gated(&mut model, &mut AllowAll, |o| {
            o.levers = Levers {
                short_after_cut,
                ..lines_on()
            };
            o.constrained = constrained;
            o.limits.attempts = 1;
        });
        let r = Ran {
            out,
            events,
            model,
            h,
        };
        let after = r.model.prompt(3);
        assert!(after.contains("cut off"), "{after}");
        never_told_edit_file_or_replace_file(&r);
    }
}

// FINDING (mended): a finish before any edit is refused with "was not written in this run ...: write
// it, read it back, then finish" -- with the lever off it says "write it with replace_file";
// on, `reason_with` (run/steps.rs, finish branch) is given `offered("replace_file")`, which is
// None, so no tool is named at all, and the progress note after the refused finish
// (prompt.rs `progress_note`, the `refused` branch: `typed.or_else(|| offered("replace_file"))`)
// says only "fix config/crontab.txt as the refusal says, then read it back". Neither names
// edit_lines where the texts without the lever named the tool to use.
#[test]
fn a_finish_before_the_edit_is_refused_naming_edit_lines() {
    let script = reads() + &finish_line() + &read_file();
    let r = run(Harness::desk_suite(TASK), &script);
    let refusals = finish_refusals(&r.events);
    assert!(
        refusals
            .iter()
            .any(|f| f.contains("not written in this run")),
        "{refusals:?}"
    );
    never_told_edit_file_or_replace_file(&r);
    assert!(
        refusals.iter().any(|f| f.contains("edit_lines")),
        "the refusal names no tool: {refusals:?}"
    );
    let note = support::last_progress_note(&r, 3);
    assert!(note.contains("edit_lines"), "{note}");
}

// FINDING (mended): with review-edits, a finish after only one of the two changes is held for a review.
// The review names edit_lines (`in_place_fixer`), but the progress note of the held finish
// (prompt.rs `progress_note`, `held_for_review`: `with(offered("edit_file"))`) names edit_file
// when it is offered and nothing when edit_lines replaces it: "only a change it lacks is made
// first" without the tool.
#[test]
fn a_held_finish_names_edit_lines_in_the_review_and_the_progress_note() {
    let one = json!([{"line": SYNC, "new_line": format!("# {SYNC}")}]);
    let script = attempt(one) + &finish_line();
    let levers = Levers {
        review_edits: true,
        ..lines_on()
    };
    let r = run_with(Harness::desk_suite(TASK), &script, levers, |_| {});
    let held = finish_refusals(&r.events);
    assert!(
        held.iter()
            .any(|h| h.contains("finish held once for a review")),
        "{held:?}"
    );
    never_told_edit_file_or_replace_file(&r);
    let review = held.iter().find(|h| h.contains("review")).unwrap();
    assert!(review.contains("edit_lines"), "{review}");
    let i = r
        .model
        .prompts()
        .iter()
        .position(|p| p.contains("finish held once for a review"))
        .expect("the review reaches the model");
    let note = support::last_progress_note(&r, i);
    assert!(note.contains("edit_lines"), "{note}");
}

/// create_file on the deliverable is refused with advice turned to edit_lines.
#[test]
fn a_refused_create_file_on_the_deliverable_advises_edit_lines() {
    let script =
        reads() + &line("create_file", json!({"path": FILE, "content": gold()})) + &read_file();
    let r = run_with(Harness::desk_suite(TASK), &script, lines_on(), |o| {
        o.constrained = false;
    });
    never_told_edit_file_or_replace_file(&r);
    assert!(
        r.model.prompt(3).contains("use edit_lines"),
        "{}",
        r.model.prompt(3)
    );
}

/// Every other lever on (review-edits aside, see its own test; change-list aside, whose list
/// request is no action and takes a line of the script, see `redteam_change_list.rs`), in two
/// attempts, with the plain retry and the monotone one: no request offers or names edit_file or
/// replace_file.
#[test]
fn with_every_other_lever_on_no_prompt_names_edit_file_or_replace_file() {
    let wrong = json!([{"line": SYNC, "new_line": format!("# {SYNC}")}]);
    let right =
        json!([{"line": REINDEX, "new_line": "0 4 * * 0    /opt/shop/bin/reindex-search.sh"}]);
    let script = attempt(wrong) + &edit(right) + &read_file() + &finish_line();
    for monotone in [true, false] {
        let levers = Levers {
            review_edits: false,
            change_list: false,
            monotone_attempts: monotone,
            ..support::ALL_ON_BUT_NOTES
        };
        let r = run_with(Harness::desk_suite(TASK), &script, levers, |o| {
            o.limits.attempts = 2;
        });
        never_told_edit_file_or_replace_file(&r);
        assert!(offers(&r, 0, "edit_lines"), "monotone {monotone}");
        let retry = r
            .model
            .prompts()
            .into_iter()
            .find(|p| p.contains("checked your deliverable on disk") || p.contains("now reads"))
            .unwrap_or_else(|| {
                panic!(
                    "monotone {monotone}: no retry reached: {:?} {}",
                    r.out.end,
                    r.model
                        .prompts()
                        .last()
                        .map(|p| p
                            .chars()
                            .rev()
                            .take(1500)
                            .collect::<String>()
                            .chars()
                            .rev()
                            .collect::<String>())
                        .unwrap_or_default()
                )
            });
        assert!(retry.contains("edit_lines"), "monotone {monotone}");
        // The journal's levers event lists exactly the tools offered.
        let ev = journal_events(&r.h.journal, r.out.run, "levers");
        let mut journalled: Vec<String> = ev[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect();
        let mut offered = allowed_tools(&r.model.requests[0]);
        journalled.sort();
        offered.sort();
        assert_eq!(journalled, offered, "monotone {monotone}");
    }
}

/// A Markdown report edited in place, write-sections on: its task note does not name edit_file.
#[test]
fn write_sections_task_note_names_edit_lines() {
    let h = Harness::desk_suite_edited(
        "report-timesheets",
        |dir| {
            std::fs::create_dir_all(dir.join("out")).unwrap();
            std::fs::write(
                dir.join("out/hours.md"),
                "# Hours\n\n## By person\n\n## By project\n\nTotal: 0 hours\n",
            )
            .unwrap();
        },
        |m| m["editable"] = json!(["out/hours.md"]),
    );
    let levers = Levers {
        write_sections: true,
        ..lines_on()
    };
    let r = run_with(
        h,
        &line("read_file", json!({"path": "out/hours.md"})),
        levers,
        |_| {},
    );
    never_told_edit_file_or_replace_file(&r);
}

// ---------------------------------------------------------------------------------------------
// When the lever applies, and what the deliverable may be.
// ---------------------------------------------------------------------------------------------

/// edit-crontab with its crontab grown past 32,000 characters by comment lines.
fn large_crontab() -> Harness {
    Harness::desk_suite_with(TASK, |dir| {
        let p = dir.join(FILE);
        let mut text = std::fs::read_to_string(&p).unwrap();
        for i in 0..500 {
            text.push_str(&format!(
                "# {i:03} reserved slot for a job the shop may add later; keep this line\n"
            ));
        }
        assert!(text.chars().count() > 32_000);
        std::fs::write(p, text).unwrap();
    })
}

// FINDING (mended): the lever applies to a deliverable of any size ("no size limit: the call holds only
// the lines it changes", line_edits.rs test) and takes edit_file away, but edit_lines refuses
// every change whose result is over 32,000 characters (lines.rs `run`: "a file written by a
// tool may be at most 32,000 characters"), a cap edit_file does not have. A deliverable of
// 36 KB can no longer be edited at all under the lever: the two one-line changes edit_file
// makes without the lever are refused.
#[test]
fn a_deliverable_over_thirty_two_thousand_characters_can_still_be_edited() {
    let before = std::fs::read(large_crontab().workspace.join(FILE)).unwrap();
    // Without the lever: edit_file makes the change.
    let edit_file = line(
        "edit_file",
        json!({"path": FILE, "old_text": SYNC, "new_text": format!("# {SYNC}")}),
    );
    let off = run_with(
        large_crontab(),
        &(reads() + &edit_file),
        Levers::DEFAULT,
        |_| {},
    );
    assert_ne!(
        on_disk(&off),
        before,
        "edit_file changes it without the lever"
    );
    // With the lever: edit_lines is the only way, and it must work.
    let on = run(large_crontab(), &(reads() + &edit(both_changes())));
    assert!(offers(&on, 0, "edit_lines") && !offers(&on, 0, "edit_file"));
    let said = on
        .model
        .prompts()
        .into_iter()
        .find(|p| p.contains("Result of step 3 (edit_lines)"))
        .map(|p| around(&p, "Result of step 3 (edit_lines)"))
        .unwrap_or_default();
    assert!(on_disk(&on) != before, "edit_lines changed nothing: {said}");
}

/// A CRLF deliverable: edited by lines, CRLF kept on every line.
#[test]
fn a_crlf_deliverable_keeps_crlf() {
    let h = Harness::desk_suite_with(TASK, |dir| {
        let p = dir.join(FILE);
        let text = std::fs::read_to_string(&p).unwrap().replace('\n', "\r\n");
        std::fs::write(p, text).unwrap();
    });
    let r = run(h, &(reads() + &edit(both_changes())));
    assert!(offers(&r, 0, "edit_lines"));
    let want = fixture_text()
        .replace(REINDEX, "0 4 * * 0    /opt/shop/bin/reindex-search.sh")
        .replace(SYNC, &format!("# {SYNC}"))
        .replace('\n', "\r\n");
    assert_eq!(String::from_utf8(on_disk(&r)).unwrap(), want);
}

/// A non-UTF-8, an empty, and a missing deliverable keep edit_file; the lever off, and a memory
/// run, change nothing.
#[test]
fn the_lever_applies_only_to_a_text_deliverable_on_a_desk_run() {
    let non_utf8 = Harness::desk_suite_with(TASK, |dir| {
        let p = dir.join(FILE);
        let mut bytes = std::fs::read(&p).unwrap();
        bytes.extend_from_slice(&[0xff, 0xfe, b'\n']);
        std::fs::write(p, bytes).unwrap();
    });
    let empty = Harness::desk_suite_with(TASK, |dir| std::fs::write(dir.join(FILE), b"").unwrap());
    for (name, h) in [("non-utf8", non_utf8), ("empty", empty)] {
        let r = run(h, &finish_line());
        assert!(offers(&r, 0, "edit_file"), "{name}");
        assert!(!offers(&r, 0, "edit_lines"), "{name}");
    }
    let r = run_with(Harness::desk_suite(TASK), &finish_line(), lines_on(), |o| {
        o.memory = true;
    });
    assert!(!offers(&r, 0, "edit_lines"));
    let levers = journal_events(&r.h.journal, r.out.run, "levers");
    let tools = levers[0]["tools"].as_array().unwrap();
    assert!(!tools.contains(&json!("edit_lines")), "{tools:?}");
    let off = run_with(
        Harness::desk_suite(TASK),
        &finish_line(),
        Levers::DEFAULT,
        |_| {},
    );
    assert!(!offers(&off, 0, "edit_lines"));
}

// FINDING (mended): a deliverable that is UTF-8 but holds a NUL byte in its first 8 KiB is "text" to the
// lever (`text_bytes`, whole_rewrite.rs: `from_utf8(..).is_ok()`) but "binary" to edit_lines
// (`text_of`, desk/mod.rs: a NUL in the first 8,192 bytes). The lever takes replace_file away
// (which writes such a file) and offers only edit_lines, which refuses it: "is a binary or
// non-UTF-8 file; edit_lines only edits text". Without the lever replace_file changes it.
#[test]
fn a_deliverable_with_a_nul_byte_keeps_a_tool_that_can_change_it() {
    let with_nul = || {
        Harness::desk_suite_with(TASK, |dir| {
            std::fs::write(dir.join(FILE), b"KEY=1\0\nOTHER=2\n").unwrap()
        })
    };
    let replace = line(
        "replace_file",
        json!({"path": FILE, "content": "KEY=1\u{0}\nOTHER=3\n"}),
    );
    let off = run_with(with_nul(), &(reads() + &replace), Levers::DEFAULT, |_| {});
    assert_eq!(
        on_disk(&off),
        b"KEY=1\0\nOTHER=3\n",
        "replace_file without the lever"
    );
    let on = run(
        with_nul(),
        &(reads() + &edit(json!([{"line": "OTHER=2", "new_line": "OTHER=3"}]))),
    );
    if offers(&on, 0, "edit_lines") {
        let said = on
            .model
            .prompts()
            .into_iter()
            .find(|p| p.contains("Result of step 3 (edit_lines)"))
            .map(|p| around(&p, "Result of step 3 (edit_lines)"))
            .unwrap_or_default();
        assert_eq!(
            on_disk(&on),
            b"KEY=1\0\nOTHER=3\n",
            "offered only edit_lines, which refuses it: {said}"
        );
    } else {
        assert!(offers(&on, 0, "replace_file") || offers(&on, 0, "edit_file"));
    }
}

/// A deliverable of one line break only: non-empty text, so the lever applies; its one (empty)
/// line can be named.
#[test]
fn a_deliverable_of_one_line_break_is_edited_by_lines() {
    let h = Harness::desk_suite_with(TASK, |dir| std::fs::write(dir.join(FILE), b"\n").unwrap());
    let r = run(
        h,
        &(reads() + &edit(json!([{"line": "\n", "new_line": "# one"}]))),
    );
    assert!(offers(&r, 0, "edit_lines"));
    assert_eq!(on_disk(&r), b"# one\n");
}

// ---------------------------------------------------------------------------------------------
// The gate and policy.
// ---------------------------------------------------------------------------------------------

#[test]
fn a_denied_edit_lines_writes_nothing_and_unconstrained_edit_file_is_unknown() {
    let r = Ran::of(
        Harness::desk_suite(TASK),
        &attempt(both_changes()),
        &mut DenyAll,
        Policy::safe_default(),
        |o| {
            o.levers = lines_on();
            o.constrained = true;
            o.limits.attempts = 1;
        },
    );
    assert!(!r.out.passed());
    assert_eq!(on_disk(&r), fixture_text().into_bytes());
    let script = reads()
        + &line(
            "edit_file",
            json!({"path": FILE, "old_text": SYNC, "new_text": format!("# {SYNC}")}),
        )
        + &line("replace_file", json!({"path": FILE, "content": gold()}));
    let r = run_with(Harness::desk_suite(TASK), &script, lines_on(), |o| {
        o.constrained = false;
    });
    assert_eq!(r.out.figures.unknown_tools, 2);
    assert_eq!(on_disk(&r), fixture_text().into_bytes());
}

/// edit-crontab with a secret beside the crontab.
fn with_secret() -> Harness {
    Harness::desk_suite_with(TASK, |dir| {
        std::fs::write(
            dir.join("config/secret.env"),
            "API_TOKEN=tok-4f9a8b7c6d5e\nDB_PASSWORD=correct-horse-battery\n",
        )
        .unwrap();
    })
}

/// A deny (or ask, nobody approving) rule on reading a file holds for edit_lines: its refusal,
/// which quotes the lines most like a guessed one, is never computed, so nothing of the file
/// reaches the model.
#[test]
fn a_policy_rule_on_reading_a_secret_covers_edit_lines_refusals() {
    let guesses = json!([
        {"line": "API_TOKEN=tok-4f9a8b7c6d5", "new_line": "x"},
        {"line": "DB_PASSWORD=correct-horse", "new_line": "x"},
    ]);
    let call = line(
        "edit_lines",
        json!({"path": "config/secret.env", "changes": guesses}),
    );
    for (action, approver) in [("deny", "allow"), ("ask", "deny")] {
        let policy = desk_policy(&format!(
            "[[rule]]\ntool = \"read_file\"\npaths = [\"config/secret.env\"]\naction = \"{action}\"\n"
        ));
        let script = reads() + &call + &read_file();
        let tweak = |o: &mut AgentOptions| {
            o.levers = lines_on();
            o.constrained = false;
            o.limits.attempts = 1;
        };
        let r = if approver == "allow" {
            Ran::of(with_secret(), &script, &mut AllowAll, policy, tweak)
        } else {
            Ran::of(with_secret(), &script, &mut DenyAll, policy, tweak)
        };
        for (i, p) in r.model.prompts().iter().enumerate() {
            for secret in ["tok-4f9a8b7c6d5e", "correct-horse-battery", "the closest"] {
                assert!(
                    !p.contains(secret),
                    "{action}: request {i} shows {secret}: ... {} ...",
                    around(p, secret)
                );
            }
        }
        // The journal keeps no refusal quoting it either.
        let trace = r.h.journal.run_trace(r.out.run).unwrap();
        let all = format!("{:?}", trace.steps);
        assert!(!all.contains("tok-4f9a8b7c6d5e"), "{action}");
        assert!(!all.contains("correct-horse-battery"), "{action}");
    }
}

/// A deny rule naming edit_file alone does not cover edit_lines (allow and deny widen only
/// the tool named); a rule on read_file does. Pinned so a change is seen.
#[test]
fn a_rule_on_edit_file_alone_does_not_cover_edit_lines() {
    let policy =
        desk_policy("[[rule]]\ntool = \"read_file\"\npaths = [\"config/**\"]\naction = \"deny\"\n");
    assert_eq!(
        policy.decide("edit_lines", true, Some(FILE)).action,
        rein_engine::policy::PolicyAction::Deny
    );
    let policy =
        desk_policy("[[rule]]\ntool = \"edit_file\"\npaths = [\"config/**\"]\naction = \"deny\"\n");
    assert_ne!(
        policy.decide("edit_lines", true, Some(FILE)).action,
        rein_engine::policy::PolicyAction::Deny
    );
}

// ---------------------------------------------------------------------------------------------
// The judge is unchanged.
// ---------------------------------------------------------------------------------------------

/// Edits by lines that are wrong the way a line edit invites (the comment without its space,
/// a deleted line, an extra line) fail as the same bytes written with edit_file would.
#[test]
fn wrong_line_edits_fail_as_the_same_bytes_fail_without_the_lever() {
    for (name, changes) in [
        (
            "no space after the hash",
            json!([
                {"line": REINDEX, "new_line": "0 4 * * 0    /opt/shop/bin/reindex-search.sh"},
                {"line": SYNC, "new_line": format!("#{SYNC}")},
            ]),
        ),
        (
            "sync deleted",
            json!([
                {"line": REINDEX, "new_line": "0 4 * * 0    /opt/shop/bin/reindex-search.sh"},
                {"line": SYNC, "new_line": ""},
            ]),
        ),
        (
            "an extra line",
            json!([
                {"line": REINDEX, "new_line": "0 4 * * 0    /opt/shop/bin/reindex-search.sh\n\n"},
                {"line": SYNC, "new_line": format!("# {SYNC}")},
            ]),
        ),
    ] {
        let on = run(Harness::desk_suite(TASK), &attempt(changes));
        assert!(!on.out.passed(), "{name} passed");
        let bytes = String::from_utf8(on_disk(&on)).unwrap();
        let off = run_with(
            Harness::desk_suite(TASK),
            &(reads()
                + &line("replace_file", json!({"path": FILE, "content": bytes}))
                + &read_file()
                + &finish_line()),
            Levers {
                monotone_attempts: true,
                ..Levers::DEFAULT
            },
            |_| {},
        );
        assert_eq!(
            support::verdict_ids(&on),
            support::verdict_ids(&off),
            "{name}"
        );
    }
}

/// Verified sampling with the lever: the draws are held to edit_lines and the right one wins.
#[test]
fn sampled_draws_are_held_to_edit_lines() {
    let wrong = json!([{"line": SYNC, "new_line": format!("#{SYNC}")}]);
    let script = reads()
        + &edit(wrong.clone())
        + &edit(wrong)
        + &edit(both_changes())
        + &read_file()
        + &finish_line();
    let r = run_with(Harness::desk_suite(TASK), &script, lines_on(), |o| {
        o.samples = 3;
    });
    never_told_edit_file_or_replace_file(&r);
    assert!(r.out.passed(), "{}", r.out.reason());
    assert_eq!(on_disk(&r), gold().into_bytes());
}

/// edit-crontab with a canary line in its gold file only: with every lever on but
/// `whole-rewrite` (`line-edits` on), two attempts of one change each (a review, a judged
/// finish, the retry's feedback), no prompt may ever show the line the gold alone holds.
#[test]
fn no_prompt_ever_shows_a_gold_only_line_with_every_lever_on() {
    let h = Harness::desk_suite_with(TASK, |fixtures| {
        let g = fixtures
            .parent()
            .unwrap()
            .join("judge/gold/files")
            .join(FILE);
        let text = std::fs::read_to_string(&g).unwrap();
        std::fs::write(&g, text + "# zz-canary-gold-only\n").unwrap();
    });
    let one = json!([{"line": SYNC, "new_line": format!("# {SYNC}")}]);
    let other =
        json!([{"line": REINDEX, "new_line": "0 4 * * 0    /opt/shop/bin/reindex-search.sh"}]);
    let script = attempt(one)
        + &finish_line()
        + &edit(other)
        + &read_file()
        + &finish_line()
        + &finish_line();
    let levers = Levers {
        whole_rewrite: false,
        line_edits: true,
        ..support::ALL_ON_BUT_NOTES
    };
    let r = run_with(h, &script, levers, |o| o.limits.attempts = 2);
    assert!(!r.out.passed(), "the canary line was never written");
    assert!(offers(&r, 0, "edit_lines"));
    for (i, p) in r.model.prompts().iter().enumerate() {
        assert!(!p.contains("zz-canary"), "prompt {i} shows the gold: {p}");
    }
}
