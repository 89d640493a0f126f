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

/// One word of a text: its byte span and its lower-case form.
struct Word<'t> {
    start: usize,
    end: usize,
    text: &'t str,
}

/// The words of `text`: the runs of letters and digits.
fn words(text: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(Word {
                    start: s,
                    end: i,
                    text: &text[s..i],
                });
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(Word {
            start: s,
            end: text.len(),
            text: &text[s..],
        });
    }
    out
}

/// Every run of [`ECHO_RUN_WORDS`] words of `texts`, lower case, one space apart.
fn runs_of<S: AsRef<str>>(texts: &[S]) -> HashSet<String> {
    let mut set = HashSet::new();
    for t in texts {
        let w: Vec<String> = words(t.as_ref())
            .iter()
            .map(|w| w.text.to_lowercase())
            .collect();
        for window in w.windows(ECHO_RUN_WORDS) {
            set.insert(window.join(" "));
        }
    }
    set
}

/// The passages of `new_text` that repeat runs of `rein` (Rein's messages) not found in
/// `allowed` (the task, the inputs, the deliverable as it stands), each as written, in order;
/// at most [`ECHOES_SHOWN`], each cut at [`ECHO_SHOWN_CHARS`].
pub fn echoed<R: AsRef<str>, A: AsRef<str>>(
    new_text: &str,
    rein: &[R],
    allowed: &[A],
) -> Vec<String> {
    let mine = words(new_text);
    if mine.len() < ECHO_RUN_WORDS {
        return Vec::new();
    }
    let rein = runs_of(rein);
    if rein.is_empty() {
        return Vec::new();
    }
    let allowed = runs_of(allowed);
    let lower: Vec<String> = mine.iter().map(|w| w.text.to_lowercase()).collect();
    let mut marked = vec![false; mine.len()];
    for (i, window) in lower.windows(ECHO_RUN_WORDS).enumerate() {
        let run = window.join(" ");
        if rein.contains(&run) && !allowed.contains(&run) {
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
        let found = echoed(
            text,
            &[REQUIREMENT],
            &["The incident folder holds the timeline."],
        );
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
        assert!(echoed(text, &[rein.as_str()], &[prompt]).is_empty());
        // Seven words in a row are no run.
        let seven = "the number out incident summary md states";
        assert!(echoed(seven, &[REQUIREMENT], &[""; 0]).is_empty());
        // Case and punctuation do not hide a run.
        let shouted = "THE NUMBER OUT/INCIDENT-SUMMARY.MD STATES WHERE THE PATTERN (X) FINDS";
        assert_eq!(echoed(shouted, &[REQUIREMENT], &[""; 0]).len(), 1);
    }

    #[test]
    fn passages_are_few_short_and_on_one_line() {
        let rein = "alpha beta gamma delta epsilon zeta eta theta iota kappa";
        let text = format!("{rein}\nx\n{rein}\ny\n{rein}\nz\n{rein}");
        let found = echoed(&text, &[rein], &[""; 0]);
        assert_eq!(found.len(), ECHOES_SHOWN);
        let long = "word ".repeat(200);
        let found = echoed(&long, &[long.as_str()], &[""; 0]);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].chars().count() <= ECHO_SHOWN_CHARS + 3,
            "{}",
            found[0]
        );
        let broken = "one two three four\nfive six seven eight";
        let found = echoed(broken, &[broken], &[""; 0]);
        assert_eq!(found, ["one two three four\\nfive six seven eight"]);
    }
}
