//! Keeping the prompt inside the model's context window.
//!
//! The transcript is the fixed head (system rules and tools, the task with its required
//! deliverable) followed by one entry per step. When the estimate exceeds the budget, the oldest
//! steps are dropped and replaced by a one-line record each, so the model still knows what it did.
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
}

/// The conversation of one run. See the module docs.
#[derive(Debug, Clone)]
pub struct Transcript {
    head: Vec<ChatMessage>,
    entries: Vec<Entry>,
    /// Entries before this index are trimmed.
    first_kept: usize,
    /// Real tokens per estimated token, learned from the model's own counts; it only grows, so
    /// text that tokenizes densely (numbers, paths, CSV) is not underestimated twice.
    scale: f64,
}

impl Transcript {
    pub fn new(head: Vec<ChatMessage>) -> Transcript {
        Transcript {
            head,
            entries: Vec::new(),
            first_kept: 0,
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
        self.entries.push(Entry {
            messages,
            record: record.into(),
        });
    }

    /// Starts over from the head alone (the system rules, the task, the plan), keeping what
    /// was learned of the model's token counts: a new attempt that starts from the current
    /// deliverable, not from the steps that led to it.
    pub fn restart(&mut self) {
        self.entries.clear();
        self.first_kept = 0;
    }

    /// Steps trimmed so far.
    pub fn trimmed(&self) -> usize {
        self.first_kept
    }

    /// The messages of the next prompt.
    pub fn messages(&self) -> Vec<ChatMessage> {
        let mut out = self.head.clone();
        if let Some(note) = self.note() {
            out.push(ChatMessage::user(note));
        }
        for e in &self.entries[self.first_kept..] {
            out.extend(e.messages.iter().cloned());
        }
        out
    }

    fn note(&self) -> Option<String> {
        if self.first_kept == 0 {
            return None;
        }
        let trimmed = &self.entries[..self.first_kept];
        let shown = trimmed.len().min(MAX_NOTE_RECORDS);
        let mut s = format!(
            "Note: the {} earliest steps were trimmed to fit the context window. What they did:\n",
            trimmed.len()
        );
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

    /// Trims the oldest steps if the prompt's estimate exceeds `budget` tokens, down to
    /// [`TRIM_TARGET_PERCENT`] of it; the last step is always kept. Returns how many steps
    /// this call trimmed.
    pub fn fit(&mut self, budget: u32) -> usize {
        if self.estimate() <= budget {
            return 0;
        }
        let target = budget / 100 * TRIM_TARGET_PERCENT;
        let before = self.first_kept;
        while self.first_kept + 1 < self.entries.len() && self.estimate() > target {
            self.first_kept += 1;
        }
        self.first_kept - before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
