#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Red-team probes of the `review-edits` lever (a finish on a file edited in place is held while
//! the file changed since the last review). Each test asserts one behaviour the lever claims or
//! must keep: no gold content in any prompt, a held finish followed by a finish is judged, a
//! wrong file never passes, hostile content (CRLF, not UTF-8, multibyte, very long lines) is
//! reviewed without a panic, and the caps that end a run do not turn a right file into an
//! abort. Five of these found defects, fixed since: a hold on the last turn, a hold counted as
//! a step without progress, the asked-for finish escaped as a repeat, a progress note that
//! contradicted the review, and a change inside a very long line cut out of the diff.

#[path = "agent_support/mod.rs"]
mod support;

use rein_engine::agent::Levers;
use rein_engine::gate::AllowAll;
use rein_engine::policy::Policy;
use serde_json::json;
use support::{finish_line, finish_refusals, journal_events, line, Harness, Ran};

const FILE: &str = "project/gitignore.txt";
/// The review's diff is cut past this many characters (`REVIEW_DIFF_MAX_CHARS`, private).
const REVIEW_DIFF_MAX_CHARS: usize = 4000;
const HELD: &str = "finish held once for a review";

fn edit_at(path: &str, old: &str, new: &str) -> String {
    line(
        "edit_file",
        json!({"path": path, "old_text": old, "new_text": new}),
    )
}

fn edit(old: &str, new: &str) -> String {
    edit_at(FILE, old, new)
}

fn replace(content: &str) -> String {
    line("replace_file", json!({"path": FILE, "content": content}))
}

fn read_back() -> String {
    line("read_file", json!({ "path": FILE }))
}

fn reads_first() -> String {
    line("read_file", json!({"path": "project/README.md"})) + &read_back()
}

fn three_edits() -> String {
    edit(".vscode/\n", ".vscode/\n*.swp\n")
        + &edit("data/raw/\n", "data/raw/\ndata/cache/\n")
        + &edit("data/cache/\n", "data/cache/\n*.sqlite\n")
}

fn gold() -> String {
    std::fs::read_to_string(
        support::missions_dir()
            .join("../suites/desk/edit-gitignore/judge/gold/files/project/gitignore.txt"),
    )
    .unwrap()
}

fn start() -> String {
    std::fs::read_to_string(
        support::missions_dir()
            .join("../suites/desk/edit-gitignore/fixtures/project/gitignore.txt"),
    )
    .unwrap()
}

fn run_h(h: Harness, script: &str, levers: Levers, tweak: impl FnOnce(&mut Options)) -> Ran {
    Ran::of(h, script, &mut AllowAll, Policy::safe_default(), |o| {
        o.levers = levers;
        o.limits.attempts = 1;
        tweak(o);
    })
}

type Options = rein_engine::agent::AgentOptions;

fn review_only() -> Levers {
    Levers {
        review_edits: true,
        ..Levers::DEFAULT
    }
}

fn run(script: &str, review_edits: bool, tweak: impl FnOnce(&mut Options)) -> Ran {
    let levers = Levers {
        review_edits,
        ..Levers::DEFAULT
    };
    run_h(Harness::desk_suite("edit-gitignore"), script, levers, tweak)
}

fn reviews(r: &Ran) -> Vec<String> {
    finish_refusals(&r.events)
        .into_iter()
        .filter(|x| x.starts_with(HELD))
        .collect()
}

fn diff_part(review: &str) -> &str {
    review.split("The task: ").next().unwrap()
}

/// edit-gitignore with a canary line in its gold file only: the expected file now holds a line
/// that is in no fixture, no prompt and no script. No prompt may ever show it, whatever the
/// levers do (the review, the retry feedback, monotone feedback, the checklist...).
fn canary_mission() -> Harness {
    Harness::desk_suite_with("edit-gitignore", |fixtures| {
        let g = fixtures
            .parent()
            .unwrap()
            .join("judge/gold/files/project/gitignore.txt");
        let text = std::fs::read_to_string(&g).unwrap();
        std::fs::write(&g, text + "zz-canary-gold-only/\n").unwrap();
    })
}

#[test]
fn no_prompt_ever_shows_a_gold_only_line_with_every_lever_on() {
    // Two attempts: a held finish, a judged (failing) finish, the retry's feedback, another
    // change, another held finish and a judged one. Every lever on (memory off).
    let script = reads_first()
        + &edit(".vscode/\n", ".vscode/\n*.swp\n")
        + &read_back()
        + &finish_line()
        + &finish_line()
        + &edit("data/raw/\n", "data/raw/\ndata/cache/\n")
        + &read_back()
        + &finish_line()
        + &finish_line();
    // Every lever but `whole-rewrite` and `line-edits`, which take edit_file away (their own
    // red teams keep that the gold is never shown: redteam_whole_rewrite, redteam_line_edits).
    let every_but_whole = Levers {
        whole_rewrite: false,
        line_edits: false,
        ..support::ALL_ON_BUT_NOTES
    };
    let r = run_h(canary_mission(), &script, every_but_whole, |o| {
        o.limits.attempts = 2;
    });
    assert!(!r.out.passed(), "the canary line was never written");
    assert!(
        !journal_events(&r.h.journal, r.out.run, "edit_review").is_empty(),
        "a review was shown"
    );
    for (i, p) in r.model.prompts().iter().enumerate() {
        assert!(!p.contains("zz-canary"), "prompt {i} shows the gold: {p}");
    }
    for reason in finish_refusals(&r.events) {
        assert!(!reason.contains("zz-canary"), "{reason}");
    }
}

#[test]
fn the_review_shows_only_the_start_and_the_file_now_never_another_version() {
    // Before the run the file is S; attempt 1 writes A and gets a review, attempt 2 writes B
    // and gets its own. The second review compares S with B: A's own lines (gone now) are not
    // shown as if present.
    let script = reads_first()
        + &edit(".vscode/\n", ".vscode/\nonly-in-a/\n")
        + &read_back()
        + &finish_line()
        + &finish_line()
        // attempt 2
        + &edit("only-in-a/\n", "*.swp\n")
        + &read_back()
        + &finish_line()
        + &finish_line();
    let r = run(&script, true, |o| o.limits.attempts = 2);
    let rv = reviews(&r);
    assert_eq!(rv.len(), 2, "{rv:?}");
    assert!(diff_part(&rv[0]).contains("+only-in-a/\n"), "{}", rv[0]);
    let second = diff_part(&rv[1]);
    assert!(!second.contains("only-in-a"), "{second}");
    assert!(second.contains("+*.swp\n"), "{second}");
    assert!(!r.out.passed(), "two lines are still missing");
}

#[test]
fn the_finish_after_a_hold_is_judged_whatever_the_model_changed_between() {
    // One hold per attempt: the file goes gold, junk, gold again after the hold, and the next
    // finish is judged (and passes) with no second hold.
    let script = reads_first()
        + &three_edits()
        + &read_back()
        + &finish_line()
        + &edit("*.sqlite\n", "*.sqlite\njunk/\n")
        + &edit("*.sqlite\njunk/\n", "*.sqlite\n")
        + &read_back()
        + &finish_line();
    let r = run(&script, true, |_| {});
    assert!(r.out.passed(), "{}", r.out.reason());
    assert_eq!(reviews(&r).len(), 1);
    assert_eq!(finish_refusals(&r.events).len(), 1);
    // Every step of the script was used: the run ended at the judged finish.
    assert_eq!(r.model.requests.len(), 11);
}

#[test]
fn a_finish_after_a_hold_is_judged_even_when_the_file_is_wrong() {
    // A file that fails the judge is never turned into a pass by the hold; the second finish
    // ends the attempt (no endless holds).
    let script = reads_first()
        + &edit(".vscode/\n", ".vscode/\nwrong-line\n")
        + &read_back()
        + &finish_line()
        + &finish_line()
        + &finish_line();
    let r = run(&script, true, |_| {});
    assert!(!r.out.passed());
    assert!(r.out.finish_accepted);
    assert_eq!(reviews(&r).len(), 1);
    assert_eq!(r.model.requests.len(), 6);
}

#[test]
fn edits_under_a_dot_slash_spelling_of_the_path_are_reviewed_and_judged() {
    let script = line("read_file", json!({"path": "project/README.md"}))
        + &line("read_file", json!({"path": "./project/gitignore.txt"}))
        + &edit_at("./project/gitignore.txt", ".vscode/\n", ".vscode/\n*.swp\n")
        + &edit_at(
            "project//gitignore.txt",
            "data/raw/\n",
            "data/raw/\ndata/cache/\n*.sqlite\n",
        )
        + &line("read_file", json!({"path": "./project/gitignore.txt"}))
        + &finish_line()
        + &finish_line();
    let r = run(&script, true, |_| {});
    let rv = reviews(&r);
    assert_eq!(rv.len(), 1, "{rv:?}");
    assert!(diff_part(&rv[0]).contains("+*.swp\n"), "{}", rv[0]);
    // The review names the deliverable as the contract does.
    assert!(rv[0].contains("`project/gitignore.txt`"), "{}", rv[0]);
    assert!(r.out.passed(), "{}", r.out.reason());
}

#[test]
fn a_whole_file_replaced_with_the_expected_text_is_reviewed_then_judged() {
    // Replaced (not edited) in one call: still an in-place edit of a file that was there.
    let script = reads_first() + &replace(&gold()) + &read_back() + &finish_line() + &finish_line();
    let r = run(&script, true, |_| {});
    assert!(r.out.passed(), "{}", r.out.reason());
    assert_eq!(reviews(&r).len(), 1);
}

#[test]
fn crlf_line_ends_are_reviewed_and_judged_as_without_the_lever() {
    // The expected text with CRLF line ends: the review shows every line changed (a CR
    // added), and the judge's verdict is the one it gives without the lever (the contract's
    // whole-file check reads CRLF as LF; the review neither passes nor fails it).
    let crlf = gold().replace('\n', "\r\n");
    let script = reads_first() + &replace(&crlf) + &read_back() + &finish_line() + &finish_line();
    let r = run(&script, true, |_| {});
    let rv = reviews(&r);
    assert_eq!(rv.len(), 1, "{rv:?}");
    assert!(diff_part(&rv[0]).contains("+*.swp\r\n"), "{}", rv[0]);
    assert!(r.out.finish_accepted);
    let off = run(&script, false, |_| {});
    assert!(reviews(&off).is_empty());
    assert_eq!(r.out.passed(), off.out.passed(), "{}", r.out.reason());
    assert_eq!(support::verdict_ids(&r), support::verdict_ids(&off));
}

#[test]
fn a_start_file_that_is_not_utf8_is_reviewed_as_described_bytes() {
    let h = Harness::desk_suite_with("edit-gitignore", |fixtures| {
        let f = fixtures.join("project/gitignore.txt");
        let mut bytes = std::fs::read(&f).unwrap();
        bytes.extend_from_slice(b"# caf\xe9\n");
        std::fs::write(&f, bytes).unwrap();
    });
    let script = reads_first() + &replace(&gold()) + &read_back() + &finish_line() + &finish_line();
    let r = run_h(h, &script, review_only(), |_| {});
    let rv = reviews(&r);
    assert_eq!(rv.len(), 1, "{rv:?}");
    let diff = diff_part(&rv[0]);
    assert!(
        diff.contains("Binary file project/gitignore.txt changed ("),
        "{diff}"
    );
    // The start is described (size and hash), the text now is shown whole.
    assert!(diff.contains("+*.sqlite\n"), "{diff}");
    // The finish after the review reached the judge: no third step was asked for.
    assert!(r.out.finish_accepted, "{}", r.out.reason());
}

#[test]
fn a_huge_multibyte_diff_is_cut_at_a_line_end_without_a_panic() {
    // A start file of 3000 multibyte lines; the run rewrites every line. The diff is far over
    // the cap, its characters are several bytes each: the cut must land on a line end.
    let h = Harness::desk_suite_with("edit-gitignore", |fixtures| {
        let f = fixtures.join("project/gitignore.txt");
        let text: String = (0..3000).map(|i| format!("é€😀 {i}\n")).collect();
        std::fs::write(&f, start() + &text).unwrap();
    });
    let changed: String = start() + &(0..3000).map(|i| format!("ÉΣ😃 {i}\n")).collect::<String>();
    assert!(changed.chars().count() < 32_000);
    let script =
        reads_first() + &replace(&changed) + &read_back() + &finish_line() + &finish_line();
    let r = run_h(h, &script, review_only(), |_| {});
    let rv = reviews(&r);
    assert_eq!(rv.len(), 1, "{rv:?}");
    let diff = diff_part(&rv[0]);
    let shown = diff
        .split("finish held once for a review")
        .nth(1)
        .unwrap()
        .split_once("as it is now):\n")
        .unwrap()
        .1;
    let (kept, note) = shown.split_once("(diff cut here: ").expect("a cut note");
    assert!(kept.chars().count() <= REVIEW_DIFF_MAX_CHARS, "{kept}");
    assert!(kept.ends_with('\n'), "cut at a line end: {kept:?}");
    assert!(note.contains("more characters not shown"), "{note}");
    assert!(r.out.finish_accepted);
}

#[test]
fn a_change_in_a_very_long_line_is_shown_in_the_review() {
    // A minified one-line file (JSON, CSS, a long .env value): the run changes one word in a
    // line of 6000 characters. The review's diff is header, hunk line, then the two long
    // lines; the cut at a line end keeps only the header, so the model is asked to compare
    // "its changes" and is shown none.
    let long: String = (0..1000).map(|i| format!("k{i:03}= ")).collect();
    let h = Harness::desk_suite_with("edit-gitignore", |fixtures| {
        let f = fixtures.join("project/gitignore.txt");
        std::fs::write(&f, start() + &long + "\n").unwrap();
    });
    let script = reads_first()
        + &edit("k500= ", "CHANGED= ")
        + &read_back()
        + &finish_line()
        + &finish_line();
    let r = run_h(h, &script, review_only(), |_| {});
    let rv = reviews(&r);
    assert_eq!(rv.len(), 1, "{rv:?}");
    let diff = diff_part(&rv[0]);
    assert!(
        diff.contains("CHANGED="),
        "the review shows no change: {diff}"
    );
}

#[test]
fn a_start_file_with_no_line_end_is_reviewed_without_a_panic() {
    // One multibyte line, no newline at all, longer than the cap.
    let h = Harness::desk_suite_with("edit-gitignore", |fixtures| {
        let f = fixtures.join("project/gitignore.txt");
        std::fs::write(&f, "wörd ".repeat(600) + "MARK " + &"wörd ".repeat(600)).unwrap();
    });
    let script = line("read_file", json!({"path": "project/README.md"}))
        + &read_back()
        + &edit("MARK", "ÄÄ")
        + &read_back()
        + &finish_line()
        + &finish_line();
    let r = run_h(h, &script, review_only(), |_| {});
    let rv = reviews(&r);
    assert_eq!(rv.len(), 1, "{:?}", finish_refusals(&r.events));
    // The one long line is shortened around its change, which shows.
    assert!(rv[0].contains("more characters on this line]"), "{}", rv[0]);
    assert!(diff_part(&rv[0]).contains("ÄÄ"), "{}", rv[0]);
    assert!(r.out.finish_accepted);
    assert!(!r.out.passed());
}

#[test]
fn change_before_finish_and_review_share_the_finish_without_a_loop() {
    // Attempt 1: one edit of three, held, judged (fails on the file's bytes). Attempt 2:
    // finish at once is refused as the very file that failed (not reviewed: it was reviewed
    // and judged); the other edits are reviewed once, then judged and pass.
    let script = reads_first()
        + &edit(".vscode/\n", ".vscode/\n*.swp\n")
        + &read_back()
        + &finish_line()
        + &finish_line()
        // attempt 2
        + &finish_line()
        + &edit("data/raw/\n", "data/raw/\ndata/cache/\n*.sqlite\n")
        + &read_back()
        + &finish_line()
        + &finish_line();
    let levers = Levers {
        review_edits: true,
        change_before_finish: true,
        monotone_attempts: true,
        ..Levers::DEFAULT
    };
    let r = run_h(
        Harness::desk_suite("edit-gitignore"),
        &script,
        levers,
        |o| o.limits.attempts = 2,
    );
    assert!(r.out.passed(), "{}", r.out.reason());
    let refusals = finish_refusals(&r.events);
    assert_eq!(refusals.len(), 3, "{refusals:?}");
    assert!(refusals[0].starts_with(HELD));
    assert!(
        refusals[1].contains("is the very file that failed"),
        "{}",
        refusals[1]
    );
    assert!(refusals[2].starts_with(HELD));
    assert!(diff_part(&refusals[2]).contains("+data/cache/\n+*.sqlite\n"));
}

#[test]
fn auto_finish_and_finish_when_met_never_finish_an_in_place_edit_for_the_model() {
    // Constrained decoding with auto-finish: Rein's own finish would go around the review.
    // It must never fire for a file that was there: the model's finish is held instead.
    let script = reads_first()
        + &edit(".vscode/\n", ".vscode/\n*.swp\n")
        + &read_back()
        + &finish_line()
        + &finish_line();
    let levers = Levers {
        review_edits: true,
        finish_when_met: true,
        auto_finish: true,
        ..Levers::DEFAULT
    };
    let r = run_h(
        Harness::desk_suite("edit-gitignore"),
        &script,
        levers,
        |o| o.constrained = true,
    );
    assert!(journal_events(&r.h.journal, r.out.run, "auto_finish").is_empty());
    assert!(journal_events(&r.h.journal, r.out.run, "finish_when_met").is_empty());
    assert_eq!(reviews(&r).len(), 1);
    assert!(!r.out.passed());
}

#[test]
fn with_the_lever_off_a_right_edit_passes_at_its_first_finish() {
    let script = reads_first() + &three_edits() + &read_back() + &finish_line();
    let r = run(&script, false, |_| {});
    assert!(r.out.passed(), "{}", r.out.reason());
    assert!(reviews(&r).is_empty());
}

/// Seven re-reads after the last edit leave the run one step short of the no-progress cap (8
/// steps that repeat a call or are refused). Without the lever the finish on the right file
/// is judged and passes.
fn stalled_script(finishes: usize) -> String {
    reads_first() + &three_edits() + &read_back().repeat(7) + &finish_line().repeat(finishes)
}

#[test]
fn without_the_lever_a_right_file_after_seven_re_reads_passes() {
    let r = run(&stalled_script(1), false, |_| {});
    assert!(r.out.passed(), "{}", r.out.reason());
}

#[test]
fn a_held_finish_never_ends_the_run_through_the_no_progress_cap() {
    // The same run with the lever: the finish is held (stalled 8), and the no-progress cap
    // stops the run before the finish the hold asks for: a right file, never judged, aborted.
    let r = run(&stalled_script(2), true, |_| {});
    assert!(
        r.out.passed(),
        "{} (refusals: {:?})",
        r.out.reason(),
        finish_refusals(&r.events)
    );
}

fn last_turn_script(finishes: usize) -> String {
    reads_first() + &three_edits() + &read_back() + &finish_line().repeat(finishes)
}

#[test]
fn without_the_lever_a_right_file_finished_on_the_last_turn_passes() {
    // 2 reads + 3 edits + 1 read back + finish = 7 steps, 7 turns.
    let r = run(&last_turn_script(1), false, |o| o.limits.max_turns = 7);
    assert!(r.out.passed(), "{}", r.out.reason());
}

#[test]
fn a_finish_on_the_last_turn_is_not_held() {
    let r = run(&last_turn_script(2), true, |o| o.limits.max_turns = 7);
    assert!(
        r.out.passed(),
        "{} (refusals: {:?})",
        r.out.reason(),
        finish_refusals(&r.events)
    );
}

#[test]
fn a_hold_on_the_last_turn_never_passes_a_wrong_file() {
    // Whatever the fix of the defect above: with one edit of three the verdict is a failure.
    let script = reads_first()
        + &edit(".vscode/\n", ".vscode/\n*.swp\n")
        + &read_back()
        + &finish_line()
        + &finish_line();
    let r = run(&script, true, |o| o.limits.max_turns = 5);
    assert!(!r.out.passed(), "{}", r.out.reason());
}

/// A right edit whose calls repeat none before the finish (a repeat would be drawn again
/// under repeat-escape and take the script's next line): the first read names the file as
/// `./`, the read back without it.
fn escape_script() -> String {
    line("read_file", json!({"path": "project/README.md"}))
        + &line("read_file", json!({"path": "./project/gitignore.txt"}))
        + &three_edits()
        + &read_back()
        + &finish_line().repeat(30)
}

#[test]
fn the_finish_a_review_asks_for_is_not_escaped_as_a_repeat() {
    // The model does what the review says: calls finish again, the very same call. With
    // repeat-escape that call is a repeat: it is drawn again, and the last draw's schema
    // leaves finish out; a constrained decoder then cannot name finish (the tap plays that
    // decoder: a reply to a schema without finish reads the README instead). Every later
    // finish is the same repeat, so the right file is never judged.
    let script = escape_script();
    let h = Harness::desk_suite("edit-gitignore");
    let tap: support::Tap = Box::new(|_, request, completion| {
        let finish_allowed = support::allowed_tools(request)
            .iter()
            .any(|t| t == "finish");
        if request.json_schema.is_some() && !finish_allowed {
            completion.text = line("read_file", json!({"path": "project/README.md"}))
                .trim_end()
                .to_string();
        }
    });
    let mut model = support::PromptRecorder::tapped(&script, "escape.jsonl", tap);
    let (out, events) = h.run_gated(&mut model, &mut AllowAll, |o| {
        o.levers = Levers {
            review_edits: true,
            repeat_escape: true,
            ..Levers::DEFAULT
        };
        o.constrained = true;
        o.limits.attempts = 1;
        o.limits.max_turns = 14;
    });
    assert!(
        out.passed(),
        "{} ({} escapes, refusals: {})",
        out.reason(),
        journal_events(&h.journal, out.run, "repeat_escape").len(),
        finish_refusals(&events).len()
    );
}

#[test]
fn with_repeat_escape_and_no_review_the_same_run_passes() {
    // The control for the test above: the first finish is judged and passes.
    let script = escape_script();
    let r = run_h(
        Harness::desk_suite("edit-gitignore"),
        &script,
        Levers {
            repeat_escape: true,
            ..Levers::DEFAULT
        },
        |o| {
            o.constrained = true;
            o.limits.max_turns = 14;
        },
    );
    assert!(r.out.passed(), "{}", r.out.reason());
}

#[test]
fn the_progress_note_after_a_hold_does_not_contradict_the_review() {
    let script = reads_first() + &three_edits() + &read_back() + &finish_line() + &finish_line();
    let r = run(&script, true, |_| {});
    assert_eq!(reviews(&r).len(), 1);
    // Request 7 is the one after the held finish (the 7th step).
    let after = r.model.prompt(7);
    let at = after.rfind("Progress: ").expect("a progress note");
    let note = &after[at..];
    assert!(
        !note.contains("as the refusal says"),
        "the note contradicts the review: {note}"
    );
    assert!(!note.contains("full content"), "{note}");
}
