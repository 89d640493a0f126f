//! Keeping the prompt inside the model's context window.
//!
//! The transcript is the fixed head (system rules and tools, the task with its required
//! deliverable) followed by one entry per step. When the estimate exceeds the budget, the oldest
//! steps are dropped and replaced by a one-line record each, so the model still knows what it did;
//! a step pinned as a whole read of an input file (lever `keep-inputs`) goes only after every
//! step that is not.
//! Trimming goes well below the budget at once rather than one step at a time: every trim
//! changes the prompt's prefix and costs a full re-decode, so it should happen rarely.

use rein_protocol::ChatMessage;

/// Characters per token assumed when estimating. Real text with this tokenizer runs nearer 4;
/// JSON and code nearer 3. 3.5 with the per-message overhead errs on the side of trimming early.
pub const CHARS_PER_TOKEN: f64 = 3.5;
/// Tokens a chat template adds around each message (role markers, separators).
pub const MESSAGE_OVERHEAD_TOKENS: u32 = 8;
/// After a trim the prompt is brought down to this share of the budget.
pub const TRIM_TARGET_PERCENT: u32 = 70;
/// Context assumed when a backend does not report its window (scripted and some remote models).
pub const DEFAULT_CONTEXT_TOKENS: u32 = 8_192;
/// Tokens kept free besides the reply, for the template's generation prompt and estimate error.
pub const CONTEXT_MARGIN_TOKENS: u32 = 128;
/// Trimmed steps listed one by one in the note; older ones are only counted.
const MAX_NOTE_RECORDS: usize = 16;

/// Estimated tokens of some messages.
pub fn estimate_tokens(messages: &[ChatMessage]) -> u32 {
    messages
        .iter()
        .map(|m| {
            (m.content.chars().count() as f64 / CHARS_PER_TOKEN).ceil() as u32
                + MESSAGE_OVERHEAD_TOKENS
        })
        .sum()
}

/// The prompt budget for a context window and a reply cap.
pub fn prompt_budget(context_tokens: u32, reply_tokens: u32) -> u32 {
    let ctx = if context_tokens == 0 {
        DEFAULT_CONTEXT_TOKENS
    } else {
        context_tokens
    };
    ctx.saturating_sub(reply_tokens)
        .saturating_sub(CONTEXT_MARGIN_TOKENS)
}

#[derive(Debug, Clone)]
struct Entry {
    messages: Vec<ChatMessage>,
    record: String,
    /// The input file this step read whole (lever `keep-inputs`): trimmed only after every
    /// other step, since a small model that loses an input's text writes from its memory of it.
    pinned: Vec<String>,
    /// Harness feedback (a retry's failed checks) that [`Transcript::clip_last`] may cut; a
    /// step's call and result are never cut, since the trace would still say the model saw
    /// them whole (a read the judge counts as read in full).
    clippable: bool,
    trimmed: bool,
}

/// The conversation of one run. See the module docs.
#[derive(Debug, Clone)]
pub struct Transcript {
    head: Vec<ChatMessage>,
    entries: Vec<Entry>,
    /// Real tokens per estimated token, learned from the model's own counts; it only grows, so
    /// text that tokenizes densely (numbers, paths, CSV) is not underestimated twice.
    scale: f64,
}

impl Transcript {
    pub fn new(head: Vec<ChatMessage>) -> Transcript {
        Transcript {
            head,
            entries: Vec::new(),
            scale: 1.0,
        }
    }

    /// Learns from the model's count of a prompt it was sent (`estimate`: that prompt's
    /// [`estimate_tokens`]) how far the estimate is off, so later fits use the model's measure.
    pub fn calibrate(&mut self, estimate: u32, prompt_tokens: u32) {
        if estimate > 0 && prompt_tokens > 0 {
            self.scale = self
                .scale
                .max(f64::from(prompt_tokens) / f64::from(estimate));
        }
    }

    /// The prompt's estimate, corrected by what the model counted before.
    fn estimate(&self) -> u32 {
        self.estimate_of(&self.messages())
    }

    /// The corrected estimate of a prompt built on this transcript (its messages, perhaps with
    /// more after them), as the trimming measures it.
    pub fn estimate_of(&self, messages: &[ChatMessage]) -> u32 {
        (f64::from(estimate_tokens(messages)) * self.scale).ceil() as u32
    }

    /// Adds a message to the head (the plan, once made); only before the first step.
    pub fn push_head(&mut self, message: ChatMessage) {
        self.head.push(message);
    }

    /// Appends one step: its messages and a one-line record kept if the step is trimmed.
    pub fn push(&mut self, messages: Vec<ChatMessage>, record: impl Into<String>) {
        self.push_entry(messages, record.into(), Vec::new());
    }

    /// Appends the harness's feedback at the start of an attempt: a step that
    /// [`Transcript::clip_last`] may cut when nothing else is left to trim.
    pub fn push_feedback(&mut self, message: ChatMessage, record: impl Into<String>) {
        self.push_entry(vec![message], record.into(), Vec::new());
        if let Some(e) = self.entries.last_mut() {
            e.clippable = true;
        }
    }

    /// Appends a step that read the input file `path` whole (lever `keep-inputs`): trimming
    /// drops every other step but the last before it, and an older read of the same file no
    /// longer pins its step, since this one holds the same text.
    pub fn push_pinned(
        &mut self,
        messages: Vec<ChatMessage>,
        record: impl Into<String>,
        path: &str,
    ) {
        self.push_pinned_all(messages, record, &[path]);
    }

    /// [`Transcript::push_pinned`] for a step that read several input files whole (a glob's
    /// reads, lever `glob-reads`): it stays pinned while any of them is read nowhere later.
    pub fn push_pinned_all<S: AsRef<str>>(
        &mut self,
        messages: Vec<ChatMessage>,
        record: impl Into<String>,
        paths: &[S],
    ) {
        let paths: Vec<String> = paths.iter().map(|p| p.as_ref().to_string()).collect();
        for e in &mut self.entries {
            e.pinned.retain(|p| !paths.contains(p));
        }
        self.push_entry(messages, record.into(), paths);
    }

    fn push_entry(&mut self, messages: Vec<ChatMessage>, record: String, pinned: Vec<String>) {
        self.entries.push(Entry {
            messages,
            record,
            pinned,
            clippable: false,
            trimmed: false,
        });
    }

    /// Starts over from the head alone (the system rules, the task, the plan), keeping what
    /// was learned of the model's token counts and the pinned reads of input files still in
    /// the prompt: a new attempt that starts from the current deliverable, not from the
    /// steps that led to it, with the inputs it is written from.
    pub fn restart(&mut self) {
        self.entries.retain(|e| !e.pinned.is_empty() && !e.trimmed);
    }

    /// Whether the next prompt shows `text` whole, in one message of a step not trimmed.
    pub fn shows(&self, text: &str) -> bool {
        self.entries
            .iter()
            .filter(|e| !e.trimmed)
            .flat_map(|e| &e.messages)
            .any(|m| m.content.contains(text))
    }

    /// Takes `text` out of every message of the steps not trimmed: a note that a later step
    /// shows again in full (lever `file-notes`), so a prompt holds one copy of it.
    pub fn remove_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        for e in self.entries.iter_mut().filter(|e| !e.trimmed) {
            for m in &mut e.messages {
                if m.content.contains(text) {
                    m.content = m.content.replacen(text, "", 1);
                }
            }
        }
    }

    /// The messages every prompt starts with: the system message and the task.
    pub fn head(&self) -> &[ChatMessage] {
        &self.head
    }

    /// Steps trimmed so far.
    pub fn trimmed(&self) -> usize {
        self.entries.iter().filter(|e| e.trimmed).count()
    }

    /// The messages of the next prompt: the head, then the steps in order, with the note on
    /// trimmed steps where the first of them was (so the head and pinned reads before it keep
    /// the prompt's prefix, and with it the model's cache).
    pub fn messages(&self) -> Vec<ChatMessage> {
        let mut out = self.head.clone();
        let mut noted = false;
        for e in &self.entries {
            if e.trimmed {
                if !noted {
                    noted = true;
                    out.extend(self.note().map(ChatMessage::user));
                }
                continue;
            }
            out.extend(e.messages.iter().cloned());
        }
        out
    }

    fn note(&self) -> Option<String> {
        let trimmed: Vec<&Entry> = self.entries.iter().filter(|e| e.trimmed).collect();
        if trimmed.is_empty() {
            return None;
        }
        let shown = trimmed.len().min(MAX_NOTE_RECORDS);
        // A trimmed prefix keeps the wording the model has always been shown.
        let which = if self.entries[..trimmed.len()].iter().all(|e| e.trimmed) {
            format!("the {} earliest", trimmed.len())
        } else {
            format!("{} earlier", trimmed.len())
        };
        let mut s =
            format!("Note: {which} steps were trimmed to fit the context window. What they did:\n");
        if trimmed.len() > shown {
            s.push_str(&format!("- ({} older steps)\n", trimmed.len() - shown));
        }
        for e in &trimmed[trimmed.len() - shown..] {
            s.push_str(&format!("- {}\n", e.record));
        }
        Some(s)
    }

    /// After the model refused a prompt (estimated at `estimate`) as `tokens` long: learns its
    /// count and trims to `budget`. Returns how many steps were trimmed (0: nothing left to trim).
    pub fn fit_after_overflow(&mut self, estimate: u32, tokens: u32, budget: u32) -> usize {
        self.calibrate(estimate, tokens);
        self.fit(budget)
    }

    /// Trims steps if the prompt's estimate exceeds `budget` tokens: the oldest steps that are
    /// not pinned, down to [`TRIM_TARGET_PERCENT`] of it, then, if it still does not fit, the
    /// oldest pinned ones until it does; the last step is always kept. Returns how many steps
    /// this call trimmed.
    pub fn fit(&mut self, budget: u32) -> usize {
        if self.estimate() <= budget {
            return 0;
        }
        let last = self.entries.len().saturating_sub(1);
        let mut count = 0;
        // Pinned reads go only as far as the prompt must shrink to fit, not to the lower
        // target: they sit before the note, so the prefix they share with the next prompts
        // stays in the model's cache and a later trim re-decodes only the steps after them.
        for (pinned_pass, target) in [(false, budget / 100 * TRIM_TARGET_PERCENT), (true, budget)] {
            for i in 0..last {
                if self.estimate() <= target {
                    break;
                }
                let e = &mut self.entries[i];
                if !e.trimmed && e.pinned.is_empty() != pinned_pass {
                    e.trimmed = true;
                    count += 1;
                }
            }
        }
        count
    }

    /// When the prompt is over `budget` with every step but the last trimmed and the last is
    /// the harness's feedback ([`Transcript::push_feedback`]), cuts it so it fits and says so
    /// in the text: the tails of its longest lines where that is enough ([`cut_line_tails`]),
    /// else its middle. Returns the characters cut (0: it fits, the last step is
    /// the model's own, or the head alone is over the budget and no cut helps).
    /// The 1.5B's retry feedback on report-sales-regions listed eleven failed checks after a
    /// 4,700-token task and system prompt: the 6,144-token window refused it, and the run
    /// ended as a model failure where a shorter feedback would have let it go on.
    pub fn clip_last(&mut self, budget: u32) -> usize {
        let over = self.estimate().saturating_sub(budget);
        if over == 0 {
            return 0;
        }
        let Some(e) = self.entries.iter().rposition(|e| !e.trimmed) else {
            return 0;
        };
        if !self.entries[e].clippable {
            return 0;
        }
        let Some(m) = (0..self.entries[e].messages.len())
            .max_by_key(|&m| self.entries[e].messages[m].content.chars().count())
        else {
            return 0;
        };
        let chars: Vec<char> = self.entries[e].messages[m].content.chars().collect();
        // Tokens back to characters, with room for the note and the estimate's rounding.
        let cut =
            (f64::from(over) / self.scale * CHARS_PER_TOKEN).ceil() as usize + CLIP_SLACK_CHARS;
        if cut + CLIP_KEEP_CHARS > chars.len() {
            return 0;
        }
        let whole = self.entries[e].messages[m].content.clone();
        for (clipped, removed) in cut_line_tails(&chars, cut)
            .into_iter()
            .chain(std::iter::once_with(|| (cut_middle(&chars, cut), cut)))
        {
            self.entries[e].messages[m].content = clipped;
            if self.estimate() <= budget {
                return removed;
            }
        }
        // Still over (another message of the step is long as well): leave it whole.
        self.entries[e].messages[m].content = whole;
        0
    }
}

/// The text of `chars` with `cut` characters taken out of its middle (a third of the rest after
/// it), and a note saying so.
fn cut_middle(chars: &[char], cut: usize) -> String {
    let head = (chars.len() - cut) * 2 / 3;
    format!(
        "{}\n[... {cut} characters cut here to fit the context window ...]\n{}",
        chars[..head].iter().collect::<String>(),
        chars[head + cut..].iter().collect::<String>()
    )
}

/// The text of `chars` at least `cut` characters shorter, and the characters it removed: the
/// tails of its longest lines are cut to one length, each marked, so every line keeps its
/// start. The feedback's lines each name a failed check, and a cut in the middle of the text
/// dropped whole checks from the model's sight.
/// `None` when even lines of [`CLIP_LINE_KEEP_CHARS`] would not save enough, or the last line
/// would be cut.
fn cut_line_tails(chars: &[char], cut: usize) -> Option<(String, usize)> {
    let lines: Vec<&[char]> = chars.split(|c| *c == '\n').collect();
    let marker = |n: usize| format!(" [... {n} characters cut ...]");
    // What cutting a line of `len` characters to `keep` saves, marker counted; a line that
    // would not get shorter is left whole.
    let saving = |len: usize, keep: usize| -> usize {
        let n = len.saturating_sub(keep);
        n.saturating_sub(marker(n).chars().count())
    };
    let note = |removed: usize| {
        format!(
            "[{removed} characters were cut from the ends of the longest lines above to fit the context window.]"
        )
    };
    // Characters saved with every line cut to `keep`, less the closing note (its line break
    // and the note at its longest).
    let note_chars = 1 + note(chars.len()).chars().count();
    let saved = |keep: usize| -> usize {
        let lines_saved: usize = lines.iter().map(|l| saving(l.len(), keep)).sum();
        lines_saved.saturating_sub(note_chars)
    };
    if saved(CLIP_LINE_KEEP_CHARS) < cut {
        return None;
    }
    // The longest `keep` that still saves enough: binary search, `saved` falls as `keep` grows.
    let (mut lo, mut hi) = (CLIP_LINE_KEEP_CHARS, lines.iter().map(|l| l.len()).max()?);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if saved(mid) >= cut {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let keep = lo;
    let closing = lines.iter().rposition(|l| !l.is_empty())?;
    if saving(lines[closing].len(), keep) > 0 {
        // The closing instruction stays whole; a cut in the middle keeps it.
        return None;
    }
    let mut removed = 0;
    let mut out: Vec<String> = lines
        .iter()
        .map(|l| {
            if saving(l.len(), keep) > 0 {
                removed += l.len() - keep;
                format!(
                    "{}{}",
                    l[..keep].iter().collect::<String>(),
                    marker(l.len() - keep)
                )
            } else {
                l.iter().collect()
            }
        })
        .collect();
    out.push(note(removed));
    Some((out.join("\n"), removed))
}

/// Characters a cut takes beyond the estimate's excess: the note and the rounding.
const CLIP_SLACK_CHARS: usize = 200;
/// A line is never cut below this many characters: a failed check's id and kind fit in it.
const CLIP_LINE_KEEP_CHARS: usize = 80;
/// A message is never cut below this many characters: what is left must still say something.
const CLIP_KEEP_CHARS: usize = 400;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_last_step_too_long_for_the_window_is_cut_in_the_middle_and_says_so() {
        let mut t = Transcript::new(vec![ChatMessage::system("x".repeat(3_500))]);
        let feedback = format!("START {} END", "y".repeat(7_000));
        // A step's own result is never cut: the trace says the model saw it whole.
        t.push(vec![ChatMessage::user(feedback.clone())], "read_file");
        assert_eq!(t.clip_last(2_000), 0);
        let mut t = Transcript::new(vec![ChatMessage::system("x".repeat(3_500))]);
        t.push_feedback(ChatMessage::user(feedback), "attempt 2 began");
        let budget = 2_000;
        assert_eq!(t.fit(budget), 0, "the last step is always kept");
        let cut = t.clip_last(budget);
        assert!(cut > 0);
        assert!(t.estimate() <= budget);
        let last = t.messages().last().unwrap().content.clone();
        assert!(last.starts_with("START"), "{last}");
        assert!(last.ends_with("END"), "{last}");
        assert!(
            last.contains(&format!(
                "[... {cut} characters cut here to fit the context window ...]"
            )),
            "{last}"
        );
        // Fits now: nothing more to cut.
        assert_eq!(t.clip_last(budget), 0);
        // Feedback of many lines, one per failed check: every line keeps its start.
        let mut t = Transcript::new(vec![ChatMessage::system("x".repeat(3_500))]);
        let lines: Vec<String> = (0..11)
            .map(|i| format!("- check-{i} (numeric_consistency): {}", "w".repeat(600)))
            .collect();
        t.push_feedback(
            ChatMessage::user(format!(
                "These checks failed:\n{}\nFix them.",
                lines.join("\n")
            )),
            "attempt 2 began",
        );
        assert!(t.clip_last(budget) > 0);
        assert!(t.estimate() <= budget);
        let last = t.messages().last().unwrap().content.clone();
        for i in 0..11 {
            assert!(
                last.contains(&format!("- check-{i} (numeric_consistency): ww")),
                "{last}"
            );
        }
        assert!(last.contains("characters cut ...]"), "{last}");
        assert!(last.contains("Fix them."), "{last}");
        // A head over the budget on its own: no cut helps, and none is made.
        let mut t = Transcript::new(vec![ChatMessage::system("x".repeat(10_000))]);
        t.push_feedback(ChatMessage::user("z".repeat(2_000)), "attempt 2 began");
        let before = t.messages();
        assert_eq!(t.clip_last(budget), 0);
        assert_eq!(
            t.messages().last().unwrap().content,
            before.last().unwrap().content
        );
    }

    /// The red team's feedback: one long failed check and five lines a few characters over the
    /// length the others are cut to. A marker on those would make them longer, so they stay
    /// whole; and where the tails do not fit, the middle cut is tried before giving up.
    #[test]
    fn a_tail_cut_never_lengthens_a_line_and_falls_back_to_the_middle_cut() {
        let closing = "Re-read the inputs you need, fix the deliverable (edit_file or replace_file), read it back, then call finish again.";
        let mut fb =
            String::from("The harness checked your deliverable on disk and these checks failed:\n");
        fb.push_str(&format!(
            "- long-0 (numeric_consistency): {}\n",
            "a".repeat(447)
        ));
        for i in 0..5 {
            fb.push_str(&format!(
                "- mid-{i:02} (content_matches): {}\n",
                "b".repeat(92)
            ));
        }
        fb.push_str(closing);
        let chars: Vec<char> = fb.chars().collect();
        for cut in [100, 333, 461] {
            if let Some((out, removed)) = cut_line_tails(&chars, cut) {
                assert!(out.chars().count() + cut <= chars.len(), "cut {cut}: {out}");
                for (o, i) in out.lines().zip(fb.lines()) {
                    assert!(o.chars().count() <= i.chars().count(), "{o:?} from {i:?}");
                }
                assert!(out.contains(closing), "{out}");
                assert!(removed >= cut, "{removed} < {cut}");
            }
        }
        for budget in [1_200, 1_341, 1_360] {
            let mut t = Transcript::new(vec![ChatMessage::system("x".repeat(3_500))]);
            t.push_feedback(ChatMessage::user(fb.clone()), "attempt 2 began");
            assert!(t.estimate() > budget);
            assert!(t.clip_last(budget) > 0, "budget {budget}");
            assert!(t.estimate() <= budget, "budget {budget}");
            let last = t.messages().last().unwrap().content.clone();
            assert!(last.contains(closing), "{last}");
        }
        // Text that ends with a line break keeps its closing line too.
        let chars: Vec<char> = format!("{fb}\n").chars().collect();
        if let Some((out, _)) = cut_line_tails(&chars, 333) {
            assert!(out.contains(closing), "{out}");
        }
    }

    fn step(i: usize, size: usize) -> Vec<ChatMessage> {
        vec![
            ChatMessage::assistant(format!("{{\"action\": \"read_file\", \"n\": {i}}}")),
            ChatMessage::user("x".repeat(size)),
        ]
    }

    #[test]
    fn the_models_count_corrects_the_estimate_and_an_overflow_trims() {
        let mut t = Transcript::new(vec![ChatMessage::system("rules")]);
        for i in 0..6 {
            t.push(step(i, 700), format!("step {i}"));
        }
        let estimate = estimate_tokens(&t.messages());
        let budget = estimate + 10;
        assert_eq!(t.fit(budget), 0, "fits by the estimate");
        // The model counted 30 % more than estimated: the same prompt no longer fits.
        t.calibrate(estimate, estimate * 13 / 10);
        assert!(t.fit(budget) > 0);
        // A refused prompt trims again with the count the model gave.
        let mut t2 = Transcript::new(vec![ChatMessage::system("rules")]);
        for i in 0..6 {
            t2.push(step(i, 700), format!("step {i}"));
        }
        let e2 = estimate_tokens(&t2.messages());
        assert!(t2.fit_after_overflow(e2, e2 * 2, e2 + 10) > 0);
        // A lower count never loosens what was learned.
        let kept = t2.trimmed();
        t2.calibrate(e2, 1);
        assert_eq!(t2.fit(e2 + 10), 0);
        assert_eq!(t2.trimmed(), kept);
        // One step that alone is too long cannot be trimmed away.
        let mut t3 = Transcript::new(vec![ChatMessage::system("rules")]);
        t3.push(step(0, 9_000), "big");
        let e3 = estimate_tokens(&t3.messages());
        assert_eq!(t3.fit_after_overflow(e3, 10_000, 100), 0);
    }

    #[test]
    fn keeps_head_and_latest_and_notes_what_was_trimmed() {
        let mut t = Transcript::new(vec![
            ChatMessage::system("rules"),
            ChatMessage::user("Task: write out/summary.md"),
        ]);
        for i in 0..10 {
            t.push(
                step(i, 700),
                format!("step {}: read_file notes/{i}.md -> executed", i + 1),
            );
        }
        let budget = 1_000;
        assert!(estimate_tokens(&t.messages()) > budget);
        let n = t.fit(budget);
        assert!(n > 0 && n < 10, "{n}");
        let m = t.messages();
        assert!(estimate_tokens(&m) <= budget);
        assert_eq!(m[0].content, "rules");
        assert!(m[1].content.contains("out/summary.md"));
        assert!(m[2].content.contains("trimmed"), "{}", m[2].content);
        assert!(m[2].content.contains("step 1: read_file notes/0.md"));
        assert!(m.last().is_some_and(|l| l.content.len() == 700));
        // Within budget: nothing more is trimmed, so the prefix stays stable.
        assert_eq!(t.fit(budget), 0);
    }

    #[test]
    fn budget_leaves_room_for_the_reply() {
        assert_eq!(
            prompt_budget(8_192, 384),
            8_192 - 384 - CONTEXT_MARGIN_TOKENS
        );
        assert_eq!(
            prompt_budget(0, 384),
            DEFAULT_CONTEXT_TOKENS - 384 - CONTEXT_MARGIN_TOKENS
        );
    }

    #[test]
    fn estimate_of_counts_extra_messages_at_the_learnt_scale() {
        let mut t = Transcript::new(vec![ChatMessage::system("s".repeat(350))]);
        let mut prompt = t.messages();
        prompt.push(ChatMessage::user("u".repeat(350)));
        let base = estimate_tokens(&t.messages());
        let both = estimate_tokens(&prompt);
        assert!(both > base);
        assert_eq!(t.estimate_of(&t.messages()), base);
        assert_eq!(t.estimate_of(&prompt), both);
        // The model counted twice the estimate: the same prompt now needs twice the room.
        t.calibrate(base, base * 2);
        assert_eq!(t.estimate_of(&prompt), both * 2);
    }
    fn read(path: &str, size: usize) -> Vec<ChatMessage> {
        vec![
            ChatMessage::assistant(format!(
                "{{\"action\": \"read_file\", \"path\": \"{path}\"}}"
            )),
            ChatMessage::user(format!("{path}: {}", "t".repeat(size))),
        ]
    }

    fn shown(t: &Transcript) -> String {
        t.messages()
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn pinned_reads_outlast_every_other_step_and_the_note_follows_them() {
        let mut t = Transcript::new(vec![ChatMessage::system("rules")]);
        t.push_pinned(read("notes/a.md", 700), "step 1: read a", "notes/a.md");
        t.push_pinned(read("data/b.csv", 700), "step 2: read b", "data/b.csv");
        for i in 3..9 {
            t.push(step(i, 700), format!("step {i}: write"));
        }
        let budget = estimate_tokens(&t.messages()) / 2;
        let n = t.fit(budget);
        assert!(n > 0);
        let m = t.messages();
        assert!(estimate_tokens(&m) <= budget);
        // The head and both reads, in order, then the note where the first trimmed step was.
        assert_eq!(m[0].content, "rules");
        assert!(m[2].content.starts_with("notes/a.md: "), "{}", m[2].content);
        assert!(m[4].content.starts_with("data/b.csv: "), "{}", m[4].content);
        assert!(
            m[5].content
                .starts_with(&format!("Note: {n} earlier steps were trimmed")),
            "{}",
            m[5].content
        );
        assert!(m[5].content.contains("step 3: write"));
        assert!(!m[5].content.contains("read a"));
        // The last step is kept.
        assert_eq!(m.last().unwrap().content.len(), 700);
        // A later trim keeps the prefix up to the note (the model's cache stays valid).
        let before: Vec<String> = m[..5].iter().map(|c| c.content.clone()).collect();
        t.push(step(9, 700), "step 9: write");
        t.push(step(10, 700), "step 10: write");
        t.fit(budget);
        let after: Vec<String> = t.messages()[..5]
            .iter()
            .map(|c| c.content.clone())
            .collect();
        assert_eq!(before, after);
    }

    #[test]
    fn a_newer_read_of_the_same_file_releases_the_older_one() {
        let mut t = Transcript::new(vec![ChatMessage::system("rules")]);
        t.push_pinned(
            read("notes/a.md", 700),
            "step 1: read a (old)",
            "notes/a.md",
        );
        t.push(step(2, 700), "step 2: write");
        t.push_pinned(
            read("notes/a.md", 700),
            "step 3: read a (new)",
            "notes/a.md",
        );
        t.push(step(4, 700), "step 4: write");
        t.push(step(5, 700), "step 5: write");
        let budget = estimate_tokens(&t.messages()) * 6 / 10;
        t.fit(budget);
        let text = shown(&t);
        assert!(text.contains("step 1: read a (old)"), "{text}");
        assert!(!text.contains("step 3: read a (new)"), "{text}");
        assert_eq!(text.matches("notes/a.md: ").count(), 1, "{text}");
    }

    #[test]
    fn pinned_reads_go_last_oldest_first_when_nothing_else_is_left() {
        let mut t = Transcript::new(vec![ChatMessage::system("rules")]);
        for (i, p) in ["a", "b", "c", "d"].iter().enumerate() {
            t.push_pinned(read(p, 1_400), format!("step {}: read {p}", i + 1), p);
        }
        t.push(step(5, 100), "step 5: write");
        let budget = estimate_tokens(&t.messages()) / 2;
        assert!(t.fit(budget) >= 2);
        let text = shown(&t);
        assert!(estimate_tokens(&t.messages()) <= budget);
        assert!(text.contains("step 1: read a"), "{text}");
        assert!(text.contains("d: "), "{text}");
        assert!(text.ends_with(&"x".repeat(100)), "the last step is kept");
    }

    #[test]
    fn unpinned_trimming_is_todays_oldest_first_with_todays_note() {
        let mut pinned = Transcript::new(vec![ChatMessage::system("rules")]);
        let mut plain = Transcript::new(vec![ChatMessage::system("rules")]);
        for i in 0..8 {
            pinned.push(step(i, 700), format!("step {i}"));
            plain.push(step(i, 700), format!("step {i}"));
        }
        let budget = estimate_tokens(&plain.messages()) / 2;
        assert_eq!(plain.fit(budget), pinned.fit(budget));
        let m = plain.messages();
        assert!(m[1].content.starts_with("Note: the "), "{}", m[1].content);
        assert!(m[1].content.contains("earliest steps were trimmed"));
    }

    #[test]
    fn a_fresh_attempt_keeps_the_pinned_reads_still_shown() {
        let mut t = Transcript::new(vec![ChatMessage::system("rules")]);
        t.push_pinned(read("notes/a.md", 70), "step 1: read a", "notes/a.md");
        t.push(step(2, 70), "step 2: write");
        t.restart();
        t.push(vec![ChatMessage::user("attempt 2")], "attempt 2 began");
        let m = t.messages();
        assert_eq!(m.len(), 4, "{m:?}");
        assert!(m[2].content.starts_with("notes/a.md: "));
        assert_eq!(m[3].content, "attempt 2");
        assert_eq!(t.trimmed(), 0);
        // Without pins a restart is the head alone, as before.
        let mut plain = Transcript::new(vec![ChatMessage::system("rules")]);
        plain.push(step(1, 70), "step 1");
        plain.restart();
        assert_eq!(plain.messages().len(), 1);
    }
}
