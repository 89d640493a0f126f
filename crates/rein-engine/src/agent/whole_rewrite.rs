//! Lever `whole-rewrite`: a small file edited in place is written whole, every change in one
//! `replace_file` call, instead of one `edit_file` per change. A small model stops after its
//! first edit; writing the file whole leaves no "next edit" to forget. The person approves one
//! exact diff either way.

use crate::mission::Mission;

/// Largest deliverable (bytes, when the run begins) the lever writes whole: the reply cap is
/// 384 tokens, and a 600-byte file is about 200 of them as a JSON string, which leaves room for
/// the thought and the call. The desk suite's edit tasks edit files of 86 to 397 bytes.
pub const WHOLE_REWRITE_MAX_BYTES: usize = 600;

/// Whether a run of `mission` offering `tools` writes its deliverable whole: the deliverable is
/// one of the files the task edits in place, each of those files held text of at most
/// [`WHOLE_REWRITE_MAX_BYTES`] when the run began (`text_bytes_of` a path: `None` for a file
/// that does not exist or is not UTF-8; `edit_file` goes for every file, so a large one would be
/// left with no small edit), and the mission offers both `edit_file` (which the lever takes
/// away) and `replace_file`. Files are measured only once the rest holds, and no further than
/// the first that is not small.
pub fn writes_whole(
    mission: &Mission,
    tools: &[String],
    text_bytes_of: impl Fn(&str) -> Option<usize>,
) -> bool {
    let offered = |name: &str| tools.iter().any(|t| t == name);
    let small = |path: &String| {
        text_bytes_of(path).is_some_and(|n| (1..=WHOLE_REWRITE_MAX_BYTES).contains(&n))
    };
    mission.editable.contains(&mission.required_artifact)
        && offered("edit_file")
        && offered("replace_file")
        && mission.editable.iter().all(small)
}

/// The byte count of `bytes` as text: `None` for a file that does not exist or is not UTF-8.
pub fn text_bytes(bytes: Option<&[u8]>) -> Option<usize> {
    bytes
        .filter(|b| std::str::from_utf8(b).is_ok())
        .map(<[u8]>::len)
}

/// A tool's advice that names `edit_file` (as the workspace's tools word it), and what is said
/// instead when it is not offered.
const EDIT_ADVICE: [(&str, &str); 1] = [(
    "use edit_file or replace_file",
    "use replace_file (the whole file)",
)];

/// `reason` with advice to call `edit_file` turned to `replace_file`: a small model copies the
/// call a refusal suggests.
pub fn without_edit_advice(reason: &str) -> String {
    EDIT_ADVICE
        .iter()
        .fold(reason.to_string(), |r, (from, to)| r.replace(from, to))
}

/// What a retry after a failed verdict asks for when the deliverable is written whole.
pub const WHOLE_RETRY_NOTE: &str = "Keep everything that passes. Write the file again with \
    replace_file: the text above with the changes that fix the failed checks made, and every \
    other line exactly as it is. Then read it back and call finish.";

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(super) mod tests {
    use super::*;
    use crate::mission::Mission;

    /// A mission writing `artifact` that edits `editable` in place.
    pub(in crate::agent) fn mission(editable: &[&str], artifact: &str) -> Mission {
        let mut m: Mission = serde_json::from_value(serde_json::json!({
            "id": "m", "mode": "automatic", "description": "d", "prompt": "p",
            "required_artifact": artifact, "tools": ["read_file"], "checks": [
                {"id": "e", "kind": "file_exists", "path": artifact}
            ]
        }))
        .unwrap();
        m.editable = editable.iter().map(|s| s.to_string()).collect();
        m
    }

    pub(in crate::agent) fn tools(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    /// The sizes of `files` by path; a path not listed has no text.
    fn sizes<'a>(files: &'a [(&'a str, usize)]) -> impl Fn(&str) -> Option<usize> + 'a {
        |path| files.iter().find(|(p, _)| *p == path).map(|(_, n)| *n)
    }

    #[test]
    fn only_small_text_files_edited_in_place_with_both_tools_offered() {
        let both = tools(&["read_file", "edit_file", "replace_file", "finish"]);
        let m = mission(&["a.toml"], "a.toml");
        assert!(writes_whole(&m, &both, sizes(&[("a.toml", 285)])));
        assert!(writes_whole(
            &m,
            &both,
            sizes(&[("a.toml", WHOLE_REWRITE_MAX_BYTES)])
        ));
        assert!(!writes_whole(
            &m,
            &both,
            sizes(&[("a.toml", WHOLE_REWRITE_MAX_BYTES + 1)])
        ));
        assert!(
            !writes_whole(&m, &both, sizes(&[("a.toml", 0)])),
            "an empty file has nothing to keep"
        );
        assert!(!writes_whole(&m, &both, sizes(&[])), "missing or not text");
        // A new deliverable, or one another file's edit leaves as it was.
        assert!(!writes_whole(
            &mission(&[], "a.toml"),
            &both,
            sizes(&[("a.toml", 285)])
        ));
        let other = mission(&["b.toml"], "a.toml");
        assert!(!writes_whole(
            &other,
            &both,
            sizes(&[("a.toml", 285), ("b.toml", 9)])
        ));
        // A second file edited in place that is large would lose its small edits too.
        let two = mission(&["a.toml", "big.toml"], "a.toml");
        assert!(writes_whole(
            &two,
            &both,
            sizes(&[("a.toml", 285), ("big.toml", 300)])
        ));
        assert!(!writes_whole(
            &two,
            &both,
            sizes(&[("a.toml", 285), ("big.toml", 5_000)])
        ));
        assert!(
            !writes_whole(&two, &both, sizes(&[("a.toml", 285)])),
            "every file measured"
        );
        // Nothing to take away, or nothing to write with; then no file is read at all.
        let unread = |path: &str| -> Option<usize> { panic!("{path} read") };
        let no_edit = tools(&["read_file", "replace_file", "finish"]);
        assert!(!writes_whole(&m, &no_edit, unread));
        let no_replace = tools(&["read_file", "edit_file", "finish"]);
        assert!(!writes_whole(&m, &no_replace, unread));
        assert!(!writes_whole(
            &mission(&["b.toml"], "a.toml"),
            &both,
            unread
        ));
    }

    #[test]
    fn advice_to_edit_is_turned_to_the_whole_file() {
        let refused = "\"data/m.csv\" already exists (a file); use edit_file or replace_file to change a file";
        let told = without_edit_advice(refused);
        assert!(!told.contains("edit_file"), "{told}");
        assert!(
            told.contains("use replace_file (the whole file) to change a file"),
            "{told}"
        );
        assert_eq!(
            without_edit_advice("old_text was not found"),
            "old_text was not found"
        );
    }

    #[test]
    fn text_bytes_are_counted_only_for_utf8() {
        assert_eq!(text_bytes(Some("né\n".as_bytes())), Some(4));
        assert_eq!(text_bytes(Some(&[0xff, 0xfe][..])), None);
        assert_eq!(text_bytes(None), None);
    }
}
