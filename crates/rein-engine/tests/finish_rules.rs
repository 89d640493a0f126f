//! The finish refusal rules, as a pure function of contract, world and trace.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

use std::path::PathBuf;

use rein_engine::checks::{MemWorld, TraceEntry, World};
use rein_engine::finish::{check_finish, FinishRefusal, DEFAULT_FINISH_MIN_WORDS};
use rein_engine::mission::{sha256_hex, FrozenContract, InputHash, Mission};

const REPORT: &str = "# Project summary\n\n## Goal\nThe Harbor Library app lets members renew loans and reserve \
books from their phones.\n\n## Tasks\nSix tasks, two done.\nTotal hours: 64\n\n## Risks\nThe supplier has not \
delivered the search API keys.\n";

fn desk() -> FrozenContract {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../missions/desk_task");
    Mission::load(dir).unwrap()
}

/// The workspace right after the inputs were copied in.
fn fresh(c: &FrozenContract) -> MemWorld {
    let mut w = MemWorld::new();
    for h in &c.inputs {
        w.set_file(
            &h.path,
            std::fs::read(c.fixtures_dir.join(&h.path)).unwrap(),
        );
    }
    w
}

fn hashes(c: &FrozenContract) -> Vec<InputHash> {
    c.inputs.clone()
}

/// `check_finish` with every executed change in the trace taken to have left the file that is
/// on disk now (what a real run records), so each test exercises one rule at a time.
fn finish_now(
    c: &FrozenContract,
    w: &dyn World,
    trace: &[TraceEntry],
    hashes: &[InputHash],
) -> Result<(), FinishRefusal> {
    let trace: Vec<TraceEntry> = trace
        .iter()
        .cloned()
        .map(|e| {
            if e.mutated && e.written_sha256.is_none() {
                let now = e
                    .path
                    .as_deref()
                    .and_then(|p| w.read(p).ok().flatten())
                    .map(|b| sha256_hex(&b));
                e.with_written(now)
            } else {
                e
            }
        })
        .collect();
    check_finish(c, w, &trace, hashes)
}

fn e(tool: &str, path: &str, mutated: bool) -> TraceEntry {
    TraceEntry::new(tool, Some(path), "executed", mutated)
}

fn written_and_reread() -> Vec<TraceEntry> {
    vec![
        e("read_file", "notes/overview.md", false),
        e("create_file", "out/summary.md", true),
        e("read_file", "out/summary.md", false),
    ]
}

#[test]
fn finish_without_the_deliverable_is_refused() {
    let c = desk();
    let r = finish_now(&c, &fresh(&c), &[], &hashes(&c)).unwrap_err();
    assert_eq!(
        r,
        FinishRefusal::Missing {
            path: "out/summary.md".into()
        }
    );
    assert!(r
        .reason()
        .starts_with("finish refused: the required deliverable `out/summary.md` does not exist"));
}

#[test]
fn empty_deliverable_is_refused() {
    let c = desk();
    let w = fresh(&c).with_file("out/summary.md", " \n\t");
    let r = finish_now(&c, &w, &written_and_reread(), &hashes(&c)).unwrap_err();
    assert!(matches!(r, FinishRefusal::Empty { .. }), "{r}");
}

#[test]
fn placeholders_are_refused() {
    let c = desk();
    for bad in [
        format!("{REPORT}\n{{{{risks}}}}"),
        format!("{REPORT}\nTODO: add risks"),
        format!("{REPORT}\n[TODO]"),
        format!("{REPORT}\nTBD"),
        format!("Lorem ipsum dolor sit amet. {REPORT}"),
        format!("{REPORT}\n<insert summary here>"),
    ] {
        let w = fresh(&c).with_file("out/summary.md", bad.as_str());
        let r = finish_now(&c, &w, &written_and_reread(), &hashes(&c)).unwrap_err();
        assert!(matches!(r, FinishRefusal::Placeholder { .. }), "{bad}: {r}");
    }
}

#[test]
fn too_few_words_is_refused() {
    let c = desk();
    assert_eq!(c.mission.min_words, Some(DEFAULT_FINISH_MIN_WORDS as u32));
    let short = "# Project summary\nDone.";
    let w = fresh(&c).with_file("out/summary.md", short);
    let r = finish_now(&c, &w, &written_and_reread(), &hashes(&c)).unwrap_err();
    assert_eq!(
        r,
        FinishRefusal::TooFewWords {
            path: "out/summary.md".into(),
            words: 3,
            min: 20
        }
    );
    let nineteen = vec!["word"; 19].join(" ");
    let twenty = vec!["word"; 20].join(" ");
    let w = fresh(&c).with_file("out/summary.md", nineteen.as_str());
    assert!(finish_now(&c, &w, &written_and_reread(), &hashes(&c)).is_err());
    let w = fresh(&c).with_file("out/summary.md", twenty.as_str());
    assert!(finish_now(&c, &w, &written_and_reread(), &hashes(&c)).is_ok());
}

#[test]
fn written_but_not_reread_is_refused_then_accepted_after_reading() {
    let c = desk();
    let w = fresh(&c).with_file("out/summary.md", REPORT);
    let mut trace = vec![
        e("read_file", "notes/overview.md", false),
        e("read_file", "out/summary.md", false), // a read before the write does not count
        e("create_file", "out/summary.md", true),
    ];
    let r = finish_now(&c, &w, &trace, &hashes(&c)).unwrap_err();
    assert_eq!(
        r,
        FinishRefusal::NotReread {
            path: "out/summary.md".into()
        }
    );
    assert!(r.reason().contains("re-read the output first"));

    // A denied read is no read.
    trace.push(TraceEntry::new(
        "read_file",
        Some("out/summary.md"),
        "denied",
        false,
    ));
    assert!(finish_now(&c, &w, &trace, &hashes(&c)).is_err());

    trace.push(e("read_file", "./out/summary.md", false));
    assert_eq!(finish_now(&c, &w, &trace, &hashes(&c)), Ok(()));

    // Editing again after the read needs another read.
    trace.push(e("edit_file", "out/summary.md", true));
    assert!(matches!(
        finish_now(&c, &w, &trace, &hashes(&c)),
        Err(FinishRefusal::NotReread { .. })
    ));
    trace.push(e("read_file", "out/summary.md", false));
    assert_eq!(finish_now(&c, &w, &trace, &hashes(&c)), Ok(()));

    // A write the gate refused is not a write.
    trace.push(TraceEntry::new(
        "replace_file",
        Some("out/summary.md"),
        "denied",
        false,
    ));
    assert_eq!(finish_now(&c, &w, &trace, &hashes(&c)), Ok(()));
}

#[test]
fn overwriting_an_input_is_refused() {
    let c = desk();
    // The report was written over the CSV: both the trace and the hash show it.
    let w = fresh(&c)
        .with_file("out/summary.md", REPORT)
        .with_file("data/tasks.csv", REPORT);
    let mut trace = written_and_reread();
    let r = finish_now(&c, &w, &trace, &hashes(&c)).unwrap_err();
    assert!(
        matches!(&r, FinishRefusal::InputOverwritten { input, .. } if input == "data/tasks.csv"),
        "{r}"
    );
    assert!(r.reason().contains("sha256"), "{r}");

    // A trace mutation of an input is refused even if the bytes were put back.
    let w = fresh(&c).with_file("out/summary.md", REPORT);
    trace.insert(1, e("replace_file", "notes/overview.md", true));
    let r = finish_now(&c, &w, &trace, &hashes(&c)).unwrap_err();
    assert!(
        matches!(&r, FinishRefusal::InputOverwritten { input, .. } if input == "notes/overview.md"),
        "{r}"
    );

    assert!(
        r.reason().contains("replace_file changed it at step 2"),
        "{r}"
    );
    // Rein's own reads before the first step (lever inputs-first) do not shift the model's
    // step number.
    let mut with_reins = vec![
        TraceEntry::new("read_file", Some("notes/overview.md"), "executed", false).by_rein(),
        TraceEntry::new("read_file", Some("data/tasks.csv"), "executed", false).by_rein(),
    ];
    with_reins.extend(trace.iter().cloned());
    let r = finish_now(&c, &w, &with_reins, &hashes(&c)).unwrap_err();
    assert!(
        r.reason().contains("replace_file changed it at step 2"),
        "{r}"
    );

    // A deleted input too.
    let mut w = fresh(&c).with_file("out/summary.md", REPORT);
    w.remove_file("notes/meeting-notes.md");
    let r = finish_now(&c, &w, &written_and_reread(), &hashes(&c)).unwrap_err();
    assert!(
        matches!(&r, FinishRefusal::InputOverwritten { input, .. } if input == "notes/meeting-notes.md"),
        "{r}"
    );
}

#[test]
fn a_good_finish_is_accepted() {
    let c = desk();
    let w = fresh(&c).with_file("out/summary.md", REPORT);
    assert_eq!(
        finish_now(&c, &w, &written_and_reread(), &hashes(&c)),
        Ok(())
    );
}

#[test]
fn a_deliverable_this_run_never_wrote_is_refused() {
    let c = desk();
    let w = fresh(&c).with_file("out/summary.md", REPORT);
    // Read back, but never written by this run: it was already there.
    let trace = vec![e("read_file", "out/summary.md", false)];
    assert_eq!(
        check_finish(&c, &w, &trace, &hashes(&c)).unwrap_err(),
        FinishRefusal::NotWrittenThisRun {
            path: "out/summary.md".into()
        }
    );
}

#[test]
fn a_deliverable_changed_after_this_runs_write_is_refused() {
    let c = desk();
    let w = fresh(&c).with_file("out/summary.md", REPORT);
    let trace = vec![
        e("create_file", "out/summary.md", true).with_written(Some("0".repeat(64))),
        e("read_file", "out/summary.md", false),
    ];
    assert_eq!(
        check_finish(&c, &w, &trace, &hashes(&c)).unwrap_err(),
        FinishRefusal::ChangedSinceWritten {
            path: "out/summary.md".into()
        }
    );
}

#[test]
fn a_write_shown_back_counts_as_read_back_and_only_for_its_own_content() {
    let c = desk();
    let w = fresh(&c).with_file("out/summary.md", REPORT);
    let mut shown = e("create_file", "out/summary.md", true);
    shown.shown_back = true;
    let trace = vec![e("read_file", "notes/overview.md", false), shown.clone()];
    assert_eq!(finish_now(&c, &w, &trace, &hashes(&c)), Ok(()));

    // A later write not shown back needs a read again.
    let mut later = trace.clone();
    later.push(e("edit_file", "out/summary.md", true));
    assert!(matches!(
        finish_now(&c, &w, &later, &hashes(&c)),
        Err(FinishRefusal::NotReread { .. })
    ));

    // The file changed on disk after the shown write: not what this run last wrote.
    let shown_hash = shown.with_written(Some(sha256_hex(b"another text")));
    let trace = vec![e("read_file", "notes/overview.md", false), shown_hash];
    assert!(matches!(
        check_finish(&c, &w, &trace, &hashes(&c)),
        Err(FinishRefusal::ChangedSinceWritten { .. })
    ));
}
