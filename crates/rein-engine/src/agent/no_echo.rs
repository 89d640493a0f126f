//! Lever `no-echo`: a write of the deliverable whose new text repeats a run of Rein's own words
//! (a requirement, a check's feedback, a progress note: text of the messages Rein sent) that the
//! task, the inputs and the deliverable as it stands do not hold, is held before the gate,
//! nothing written, with the run quoted. Those are the harness's instructions, not the report:
//! the 1.5B pasted a requirement, regex and all, into summarize-incident's Impact section, and
//! the 0.5B pasted a failed check's feedback into desk_task's Risks.

use std::collections::HashSet;

/// Words in a row that make a repeat of Rein's text: as many as the desk suite's `not_copied`
/// checks count a paste from.
pub const ECHO_RUN_WORDS: usize = 8;

/// Holds of one attempt at most; after them a write goes to the gate (and the judge): a model
/// that cannot write otherwise is not kept from writing at all.
pub const ECHO_HOLDS_MAX: u32 = 2;

/// Most repeats a hold quotes, and the most characters of each.
const ECHOES_SHOWN: usize = 3;
const ECHO_SHOWN_CHARS: usize = 160;

/// One word of a text: its byte span and its text.
struct Word<'t> {
    start: usize,
    end: usize,
    text: &'t str,
}

/// Characters that may wrap a path in prose: quotes, brackets, list and sentence marks.
const WRAPPING: &[char] = &[
    '`', '\'', '"', '(', ')', '[', ']', '{', '}', '<', '>', ',', ';', ':', '!', '?', '*', '-',
];

/// Whether a whitespace-free chunk of text names a file or folder (`notes/a.md`, `tasks.csv`,
/// `data/`): such names are facts of the workspace that a report lists, not Rein's wording.
fn is_path(chunk: &str) -> bool {
    let c = chunk.trim_matches(WRAPPING).trim_end_matches('.');
    if c.contains('/') || c.contains('\\') {
        return true;
    }
    match c.rsplit_once('.') {
        Some((stem, ext)) => {
            // `e.g` is an abbreviation, not a file.
            stem.chars().any(char::is_alphabetic)
                && stem.chars().count() + ext.len() > 2
                && (1..=6).contains(&ext.len())
                && ext.chars().all(|ch| ch.is_ascii_alphanumeric())
                && ext.chars().any(|ch| ch.is_ascii_alphabetic())
        }
        None => false,
    }
}

/// The words of `text`: the runs of letters and digits, leaving out every chunk between
/// spaces that names a path (see [`is_path`]).
fn words(text: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let mut chunk_start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), chunk_start) {
            (false, None) => chunk_start = Some(i),
            (true, Some(s)) => {
                chunk_words(text, s, i, &mut out);
                chunk_start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = chunk_start {
        chunk_words(text, s, text.len(), &mut out);
    }
    out
}

/// The words of the chunk `text[from..to]` (no white space in it) onto `out`, none when the
/// chunk names a path.
fn chunk_words<'t>(text: &'t str, from: usize, to: usize, out: &mut Vec<Word<'t>>) {
    let chunk = &text[from..to];
    if is_path(chunk) {
        return;
    }
    let mut start: Option<usize> = None;
    for (i, c) in chunk.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(Word {
                    start: from + s,
                    end: from + i,
                    text: &text[from + s..from + i],
                });
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(Word {
            start: from + s,
            end: to,
            text: &text[from + s..to],
        });
    }
}

/// `text`'s words, lower case, one space apart and one on each side: a run of words is in it
/// exactly when ` run ` is a substring.
fn spaced(text: &str) -> String {
    let mut s = String::from(" ");
    for w in words(text) {
        s.push_str(&w.text.to_lowercase());
        s.push(' ');
    }
    s
}

/// The passages of `new_text` that repeat runs of [`ECHO_RUN_WORDS`] words of `rein` (Rein's
/// own wording: requirements, notes) that none of the texts `allowed` gives (the task, the
/// inputs, the deliverable as it stands) holds, each as written, in order; at most
/// [`ECHOES_SHOWN`], each cut at [`ECHO_SHOWN_CHARS`]. `allowed` is called only when some run of
/// `new_text` is Rein's, so a write that repeats none reads no input.
pub fn echoed<R: AsRef<str>>(
    new_text: &str,
    rein: &[R],
    allowed: impl FnOnce() -> Vec<String>,
) -> Vec<String> {
    let mine = words(new_text);
    if mine.len() < ECHO_RUN_WORDS {
        return Vec::new();
    }
    let rein: HashSet<String> = rein
        .iter()
        .flat_map(|t| {
            let w: Vec<String> = words(t.as_ref())
                .iter()
                .map(|w| w.text.to_lowercase())
                .collect();
            w.windows(ECHO_RUN_WORDS)
                .map(|run| run.join(" "))
                .collect::<Vec<_>>()
        })
        .collect();
    let lower: Vec<String> = mine.iter().map(|w| w.text.to_lowercase()).collect();
    let candidates: Vec<(usize, String)> = lower
        .windows(ECHO_RUN_WORDS)
        .enumerate()
        .map(|(i, run)| (i, run.join(" ")))
        .filter(|(_, run)| rein.contains(run))
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let allowed: Vec<String> = allowed().iter().map(|t| spaced(t)).collect();
    let mut marked = vec![false; mine.len()];
    for (i, run) in candidates {
        let padded = format!(" {run} ");
        if !allowed.iter().any(|a| a.contains(&padded)) {
            marked[i..i + ECHO_RUN_WORDS].fill(true);
        }
    }
    let mut passages = Vec::new();
    let mut i = 0;
    while i < mine.len() {
        if !marked[i] {
            i += 1;
            continue;
        }
        let first = i;
        while i < mine.len() && marked[i] {
            i += 1;
        }
        let passage = &new_text[mine[first].start..mine[i - 1].end];
        passages.push(rein_workspace::printable(passage, ECHO_SHOWN_CHARS));
    }
    passages.truncate(ECHOES_SHOWN);
    passages
}

/// What the model is told of a held write.
pub fn held_reason(path: &str, passages: &[String]) -> String {
    let quoted: Vec<String> = passages.iter().map(|p| format!("`{p}`")).collect();
    format!(
        "nothing was written: the new text of {path} repeats Rein's own words, which are the harness's instructions and notes, not part of the file: {}. Write what the task asks for from the inputs, in your own words, and leave Rein's wording out",
        quoted.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const REQUIREMENT: &str = "7. The number `out/incident-summary.md` states where the pattern `(?im)^\\s*peak error rate` finds it must equal the maximum of the column \"error_rate\" of `incident/metrics.csv` exactly.";

    #[test]
    fn a_pasted_requirement_is_found_and_quoted_as_written() {
        let text = "## Impact\n\nThe number `out/incident-summary.md` states where the pattern `(?im)^\\s*peak error rate` finds it must equal the maximum.\nPeak error rate: 41.7 %\n";
        let found = echoed(text, &[REQUIREMENT], || {
            vec!["The incident folder holds the timeline.".to_string()]
        });
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("The number `out/incident-summary.md` states where the pattern"),
            "{found:?}"
        );
        assert!(found[0].ends_with("maximum"), "{found:?}");
    }

    #[test]
    fn what_the_task_or_an_input_also_says_is_not_rein_s() {
        let prompt =
            "Under 'Impact' include the two lines and explain the root cause in a sentence or two.";
        let rein =
            format!("{prompt}\nRequirements: explain the root cause in a sentence or two please.");
        let text = "We explain the root cause in a sentence or two here.";
        assert!(echoed(text, &[rein.as_str()], || vec![prompt.to_string()]).is_empty());
        // Seven words in a row are no run.
        let seven = "the number out incident summary md states";
        assert!(echoed(seven, &[REQUIREMENT], Vec::new).is_empty());
        // Case and punctuation do not hide a run.
        let shouted = "THE NUMBER OUT/INCIDENT-SUMMARY.MD STATES WHERE THE PATTERN `(?IM)^\\S*PEAK ERROR RATE` FINDS IT";
        assert_eq!(echoed(shouted, &[REQUIREMENT], Vec::new).len(), 1);
    }

    #[test]
    fn passages_are_few_short_and_on_one_line() {
        let rein = "alpha beta gamma delta epsilon zeta eta theta iota kappa";
        let text = format!("{rein}\nx\n{rein}\ny\n{rein}\nz\n{rein}");
        let found = echoed(&text, &[rein], Vec::new);
        assert_eq!(found.len(), ECHOES_SHOWN);
        let long = "word ".repeat(200);
        let found = echoed(&long, &[long.as_str()], Vec::new);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].chars().count() <= ECHO_SHOWN_CHARS + 3,
            "{}",
            found[0]
        );
        let broken = "one two three four\nfive six seven eight";
        let found = echoed(broken, &[broken], Vec::new);
        assert_eq!(found, ["one two three four\\nfive six seven eight"]);
    }

    #[test]
    fn paths_are_no_words_of_rein_s() {
        // A file listed after `File:` in a report, as Rein's notes list them.
        let rein = "File: app/src/db/migrations/001_init.sql and then read invoices/INV-0451.txt, invoices/INV-0457.txt";
        let text = "- File: app/src/db/migrations/001_init.sql\n- invoices/INV-0451.txt\n- invoices/INV-0457.txt";
        assert!(echoed(text, &[rein], Vec::new).is_empty());
        assert!(is_path("`notes/a.md`,") && is_path("tasks.csv.") && is_path("data/"));
        assert!(!is_path("e.g.") && !is_path("3.5") && !is_path("end."));
    }

    #[test]
    fn the_inputs_are_read_only_when_a_run_is_rein_s() {
        let text = "nothing here repeats any of the harness's wording at all today";
        let found = echoed(text, &[REQUIREMENT], || panic!("the inputs were read"));
        assert!(found.is_empty());
    }
}
