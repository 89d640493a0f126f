#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The toy suite and the judge cases of memory tasks: gold passes, every near miss fails on the
//! check it names, and a broken case is reported rather than passed.

use std::path::{Path, PathBuf};

use rein_bench::check::check_suite;
use rein_bench::suite::{Sandbox, Split, Suite};

fn toy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/toy")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

/// A one-task copy of a toy task, to break.
fn scratch(task: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("suite.toml"),
        "name = \"scratch\"\ndescription = \"test\"\n",
    )
    .unwrap();
    let t = tmp.path().join(task);
    copy_dir(&toy().join(task), &t);
    (tmp, t)
}

#[test]
fn the_toy_suite_has_the_seed_tasks_and_a_fifth_heldout() {
    let s = Suite::load(toy()).unwrap();
    assert!(s.tasks.len() >= 16, "{}", s.tasks.len());
    assert!(s.tasks.iter().all(|t| t.sandbox == Sandbox::Memory));
    let ids: Vec<&str> = s.tasks.iter().map(|t| t.id.as_str()).collect();
    for seed in [
        "note-hello",
        "three-files-list",
        "ring-bell",
        "variable-store-read",
    ] {
        assert!(ids.contains(&seed), "{seed}");
    }
    let heldout = s.tasks.iter().filter(|t| t.split == Split::Heldout).count();
    let fifth = s.tasks.len() as f64 / 5.0;
    assert!((heldout as f64 - fifth).abs() <= 1.0, "{heldout} heldout");
    let vars = &s
        .tasks
        .iter()
        .find(|t| t.id == "variable-to-file")
        .unwrap()
        .variables;
    assert_eq!(vars["city"], "Lisbon");
}

#[test]
fn the_toy_judge_is_right_on_every_case() {
    let s = Suite::load(toy()).unwrap();
    let c = check_suite(&s).unwrap();
    assert!(c.ok, "{c:#?}");
    assert_eq!(c.gold_passed, c.gold);
    assert_eq!(c.near_misses_failed, c.near_misses);
    for t in &c.tasks {
        assert!(t.report.near_misses >= 2, "{}", t.task);
        let classes: Vec<&str> = t.report.cases.iter().map(|k| k.class.as_str()).collect();
        assert!(classes.contains(&"claimed-nothing"), "{}", t.task);
    }
    let three = c
        .tasks
        .iter()
        .find(|t| t.task == "three-files-list")
        .unwrap();
    let liar = three
        .report
        .cases
        .iter()
        .find(|k| k.class == "only-one-of-three")
        .unwrap();
    assert!(!liar.passed);
    assert!(liar.failed_checks.contains(&"a-exists".to_string()));
    assert!(liar.failed_checks.contains(&"b-exists".to_string()));
}

#[test]
fn the_bell_near_miss_fails_on_the_unregistered_tool() {
    let s = Suite::load(toy()).unwrap();
    let c = check_suite(&s).unwrap();
    let bell = c.tasks.iter().find(|t| t.task == "ring-bell").unwrap();
    let claimed = bell
        .report
        .cases
        .iter()
        .find(|k| k.name == "rang-then-claimed")
        .unwrap();
    // Every contract check passes on that state; only the run's rule fails it.
    assert_eq!(claimed.failed_checks, ["harness:unregistered_tool"]);
}

#[test]
fn a_wrong_gold_is_a_false_fail() {
    let (tmp, t) = scratch("note-hello");
    std::fs::write(t.join("judge/gold/files/note.txt"), "hello").unwrap();
    let c = check_suite(&Suite::load(tmp.path()).unwrap()).unwrap();
    assert!(!c.ok);
    assert_eq!(c.false_fails, 1);
}

#[test]
fn a_gold_without_final_answer_is_a_false_fail() {
    let (tmp, t) = scratch("note-hello");
    let case = r#"{"trace": [{"tool": "create_file", "path": "note.txt"}, {"tool": "read_file", "path": "note.txt"}]}"#;
    std::fs::write(t.join("judge/gold/case.json"), case).unwrap();
    let c = check_suite(&Suite::load(tmp.path()).unwrap()).unwrap();
    assert_eq!(c.false_fails, 1);
    let gold = &c.tasks[0].report.cases[0];
    assert_eq!(gold.failed_checks, ["harness:final_answer"]);
}

#[test]
fn a_near_miss_the_judge_passes_is_a_false_pass() {
    let (tmp, t) = scratch("note-hello");
    // The "wrong content" near miss made right: the judge must pass it, so the case is wrong.
    std::fs::write(
        t.join("judge/near_misses/wrong-content/files/note.txt"),
        "hello world",
    )
    .unwrap();
    let c = check_suite(&Suite::load(tmp.path()).unwrap()).unwrap();
    assert!(!c.ok);
    assert_eq!(c.false_passes, 1);
}

#[test]
fn a_near_miss_caught_by_another_check_is_a_wrong_catcher() {
    let (tmp, t) = scratch("note-hello");
    let p = t.join("judge/near_misses/not-read-back/case.json");
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("\"read-back\"", "\"note-content\"");
    std::fs::write(&p, text).unwrap();
    let c = check_suite(&Suite::load(tmp.path()).unwrap()).unwrap();
    assert_eq!(c.wrong_catcher, 1);
}

#[test]
fn a_memory_case_without_its_action_log_is_refused() {
    let (tmp, t) = scratch("note-hello");
    std::fs::write(t.join("judge/gold/case.json"), "{}").unwrap();
    let e = check_suite(&Suite::load(tmp.path()).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("action log"), "{e}");
}

#[test]
fn a_deletion_is_a_final_state_without_the_file() {
    // The delete-temp gold has no temp.txt; putting it back (as a fixture overlay would) fails.
    let (tmp, t) = scratch("delete-temp");
    std::fs::write(t.join("judge/gold/files/temp.txt"), "scratch\n").unwrap();
    let c = check_suite(&Suite::load(tmp.path()).unwrap()).unwrap();
    assert_eq!(c.false_fails, 1);
}

#[test]
fn memory_task_fields_are_validated() {
    let (tmp, t) = scratch("variable-to-file");
    std::fs::write(
        t.join("task.toml"),
        "category = \"x\"\nsplit = \"dev\"\nsandbox = \"memory\"\n[variables]\ncity = 3\n",
    )
    .unwrap();
    let e = Suite::load(tmp.path()).unwrap_err().to_string();
    assert!(e.contains("field variables.city: must be a string"), "{e}");
    // A memory mission must end with final_answer.
    std::fs::write(
        t.join("task.toml"),
        "category = \"x\"\nsplit = \"dev\"\nsandbox = \"memory\"\n",
    )
    .unwrap();
    let m = t.join("mission.json");
    let text = std::fs::read_to_string(&m)
        .unwrap()
        .replace(",\n    \"final_answer\"", "");
    std::fs::write(&m, text).unwrap();
    let e = Suite::load(tmp.path()).unwrap_err().to_string();
    assert!(e.contains("must list final_answer"), "{e}");
    // And only sandbox tools.
    let text = std::fs::read_to_string(&m).unwrap().replacen(
        "\"tools\": [\n    \"create_file\",",
        "\"tools\": [\"final_answer\", \"list_dir\", \"create_file\",",
        1,
    );
    std::fs::write(&m, text).unwrap();
    let e = Suite::load(tmp.path()).unwrap_err().to_string();
    assert!(
        e.contains("lists only sandbox tools") && e.contains("list_dir"),
        "{e}"
    );
}
