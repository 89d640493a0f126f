//! The no-paste penalty: a token that would carry on a run the reply has copied from one of
//! its sources loses logit, more the longer the run. The reply's own repeats count only when
//! asked ([`CopyPenalty::counting_own_repeats`]; the `repeat-penalty` lever, when on, taxes
//! them anyway). llama.cpp's DRY, which this replaces, always counts them, so an `edit_file`
//! whose `new_text` keeps most of its `old_text`, or a table's second separator row, was
//! pushed to change something it did not need to.
//!
//! It works on token ids in the sources' canonical tokenization: the same bytes spelled with
//! other tokens, or a dropped comma, start a new run, so it steers a copy off its source at
//! best effort; the judge's `not_copied` is what decides.

use std::collections::HashMap;

/// The penalty on a token that would extend a copied run of `n` tokens past the allowed length
/// `a`: `MULTIPLIER * BASE^(n - a)` off its logit (llama.cpp's suggested DRY settings): 0.8 at
/// the allowed length, about 7.5 four tokens later, about 23 at six, which outweighs even a
/// near-certain next token of a verbatim copy.
const MULTIPLIER: f32 = 0.8;
const BASE: f32 = 1.75;
/// The most the penalty takes off a logit: far past any gap between a copy's next token and
/// the rest (reached thirteen tokens past the allowed length), yet finite after the chain
/// divides it by a temperature of 0.1, so a grammar always has an allowed token left.
pub const MAX_PENALTY: f32 = 1_000.0;

/// Stands between two sources; no token is negative, so no run crosses it.
const BOUNDARY: i32 = -1;

/// A token sequence and, for every position, how long a run of the reply ends there.
#[derive(Debug, Clone, Default)]
struct Runs {
    text: Vec<i32>,
    /// `run[j]`: the length of the longest suffix of the reply so far that equals the tokens
    /// of `text` ending at `j`.
    run: Vec<u32>,
    /// `text` is the reply itself: it grows with each token, and a run counts only the part
    /// that ends before the repeat starts (a row of zeros or `| --- | --- |` is one text, not
    /// a copy of itself).
    is_reply: bool,
}

impl Runs {
    /// The reply goes on with `token`.
    fn follow(&mut self, token: i32) {
        self.extend_runs(token);
        if self.is_reply {
            // A position never matches itself: its run starts at 0 and grows from the next
            // token on.
            self.text.push(token.max(BOUNDARY));
            self.run.push(0);
        }
    }

    fn extend_runs(&mut self, token: i32) {
        if token < 0 {
            self.run.iter_mut().for_each(|n| *n = 0);
            return;
        }
        // From the end, so `run[j - 1]` is still the length before this token.
        for j in (0..self.text.len()).rev() {
            self.run[j] = if self.text[j] == token {
                if j == 0 {
                    1
                } else {
                    self.run[j - 1] + 1
                }
            } else {
                0
            };
        }
    }

    /// Adds to `out` the penalty of each token that would carry a run of at least `allowed`.
    fn penalise(&self, allowed: u32, out: &mut HashMap<i32, f32>) {
        let end = self.text.len();
        for (j, &n) in self.run.iter().enumerate() {
            let n = if self.is_reply {
                n.min(u32::try_from(end - 1 - j).unwrap_or(u32::MAX))
            } else {
                n
            };
            if n < allowed {
                continue;
            }
            let Some(&next) = self.text.get(j + 1).filter(|&&t| t != BOUNDARY) else {
                continue;
            };
            let exponent = i32::try_from(n - allowed).unwrap_or(i32::MAX);
            let penalty = (MULTIPLIER * BASE.powi(exponent)).min(MAX_PENALTY);
            let slot = out.entry(next).or_insert(0.0);
            *slot = slot.max(penalty);
        }
    }
}

/// The penalty's state over one reply.
#[derive(Debug, Clone)]
pub struct CopyPenalty {
    /// The sources, one after another, a boundary after each.
    sources: Runs,
    /// The reply so far, when its own repeats count too.
    own: Option<Runs>,
    allowed: u32,
}

impl CopyPenalty {
    /// `allowed` is the longest run that goes free; it is at least one, since a penalty on
    /// every token a source holds would forbid its vocabulary, not its runs.
    pub fn new(sources: impl IntoIterator<Item = Vec<i32>>, allowed: u32) -> Self {
        let mut text = Vec::new();
        for tokens in sources {
            // A negative id is no token; it ends a run as the boundary does.
            text.extend(tokens.into_iter().map(|t| t.max(BOUNDARY)));
            text.push(BOUNDARY);
        }
        let run = vec![0; text.len()];
        Self {
            sources: Runs {
                text,
                run,
                is_reply: false,
            },
            own: None,
            allowed: allowed.max(1),
        }
    }

    /// Runs the reply repeats from its own earlier tokens count as copies too (llama.cpp's
    /// DRY counts them): one text written under two headings is a paste of itself.
    pub fn counting_own_repeats(mut self) -> Self {
        self.own = Some(Runs {
            is_reply: true,
            ..Runs::default()
        });
        self
    }

    /// What each token that would carry a run past the allowed length loses off its logit: for
    /// each, the penalty of its longest run.
    pub fn penalties(&self) -> HashMap<i32, f32> {
        let mut out = HashMap::new();
        self.sources.penalise(self.allowed, &mut out);
        if let Some(own) = &self.own {
            own.penalise(self.allowed, &mut out);
        }
        out
    }

    /// The reply goes on with `token` (a token id, never negative: a negative one ends every
    /// run, as a boundary would).
    pub fn accept(&mut self, token: i32) {
        self.sources.follow(token);
        if let Some(own) = &mut self.own {
            own.follow(token);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn after(p: &mut CopyPenalty, tokens: &[i32]) -> HashMap<i32, f32> {
        for &t in tokens {
            p.accept(t);
        }
        p.penalties()
    }

    #[test]
    fn a_run_goes_free_up_to_the_allowed_length_then_costs_more_each_token() {
        let mut p = CopyPenalty::new([vec![1, 2, 3, 4, 5, 6, 7]], 3);
        assert!(after(&mut p, &[1, 2]).is_empty());
        assert_eq!(after(&mut p, &[3]), HashMap::from([(4, 0.8)]));
        let next = after(&mut p, &[4]);
        assert_eq!(next.len(), 1);
        assert!((next[&5] - 0.8 * 1.75).abs() < 1e-6, "{next:?}");
        let later = after(&mut p, &[5]);
        assert!((later[&6] - 0.8 * 1.75 * 1.75).abs() < 1e-5, "{later:?}");
    }

    #[test]
    fn a_token_off_the_source_ends_the_run() {
        let mut p = CopyPenalty::new([vec![1, 2, 3, 4, 5]], 2);
        assert!(!after(&mut p, &[1, 2, 3]).is_empty());
        assert!(after(&mut p, &[9]).is_empty());
        assert!(after(&mut p, &[4]).is_empty(), "4 alone is a run of one");
    }

    #[test]
    fn the_reply_repeating_itself_costs_nothing() {
        // The row of an edit's old_text written again in its new_text, or a table's separator
        // row twice: DRY penalised these, and the model changed text it did not need to.
        let mut p = CopyPenalty::new([vec![1, 2, 3]], 2);
        assert!(after(&mut p, &[7, 8, 9, 10, 7, 8, 9, 10, 7, 8, 9]).is_empty());
    }

    #[test]
    fn counting_own_repeats_penalises_a_text_written_twice() {
        let mut p = CopyPenalty::new([vec![1, 2, 3]], 2).counting_own_repeats();
        assert!(after(&mut p, &[7, 8, 9, 10, 7]).is_empty(), "a run of one");
        assert_eq!(after(&mut p, &[8]), HashMap::from([(9, 0.8)]));
        let got = after(&mut p, &[9]);
        assert!((got[&10] - 0.8 * 1.75).abs() < 1e-6, "{got:?}");
        // A source run and an own run to the same token: the longer sets the penalty.
        let mut p = CopyPenalty::new([vec![5, 6, 7, 8]], 1).counting_own_repeats();
        let got = after(&mut p, &[6, 7, 0, 5, 6, 7]);
        assert!((got[&8] - 0.8 * 1.75 * 1.75).abs() < 1e-5, "{got:?}");
        assert!((got[&0] - 0.8 * 1.75).abs() < 1e-6, "{got:?}");
    }

    #[test]
    fn a_run_of_one_token_or_a_pattern_is_not_a_copy_of_itself() {
        // `1000000` in digits, or `| --- | --- | --- |`: a repeat counts only the part that
        // ends before it starts.
        let mut p = CopyPenalty::new(Vec::<Vec<i32>>::new(), 2).counting_own_repeats();
        assert!(after(&mut p, &[4, 4, 4]).is_empty());
        assert_eq!(
            after(&mut p, &[4]),
            HashMap::from([(4, 0.8)]),
            "4 4 | 4 4 then 4"
        );
        let mut p = CopyPenalty::new(Vec::<Vec<i32>>::new(), 4).counting_own_repeats();
        assert!(after(&mut p, &[1, 2, 1, 2, 1, 2, 1]).is_empty());
        assert_eq!(
            after(&mut p, &[2]),
            HashMap::from([(1, 0.8)]),
            "1 2 1 2 | 1 2 1 2"
        );
    }

    #[test]
    fn no_run_spans_two_sources() {
        let mut p = CopyPenalty::new([vec![1, 2], vec![3, 4]], 2);
        assert!(after(&mut p, &[1, 2]).is_empty(), "source one ends after 2");
        let mut p = CopyPenalty::new([vec![1, 2], vec![3, 4]], 1);
        assert_eq!(after(&mut p, &[1]), HashMap::from([(2, 0.8)]));
        assert!(after(&mut p, &[2]).is_empty());
    }

    #[test]
    fn the_longest_run_to_a_token_sets_its_penalty() {
        // 5 follows a run of one (4) and of three (2 3 4).
        let mut p = CopyPenalty::new([vec![4, 5], vec![2, 3, 4, 5]], 1);
        let got = after(&mut p, &[2, 3, 4]);
        assert!((got[&5] - 0.8 * 1.75 * 1.75).abs() < 1e-5, "{got:?}");
    }

    #[test]
    fn the_penalty_is_held_to_its_cap() {
        let long: Vec<i32> = (0..200).collect();
        let mut p = CopyPenalty::new([long.clone()], 1);
        let got = after(&mut p, &long[..150]);
        assert_eq!(got[&150], MAX_PENALTY);
    }

    #[test]
    fn an_allowed_length_of_zero_is_read_as_one() {
        let mut p = CopyPenalty::new([vec![1, 2]], 0);
        assert!(p.penalties().is_empty(), "nothing before the first token");
        assert_eq!(after(&mut p, &[1]), HashMap::from([(2, 0.8)]));
    }

    #[test]
    fn the_cap_is_first_reached_thirteen_tokens_past_the_allowed_length() {
        assert!(MULTIPLIER * BASE.powi(12) < MAX_PENALTY);
        assert!(MULTIPLIER * BASE.powi(13) >= MAX_PENALTY);
    }

    #[test]
    fn a_negative_token_ends_every_run_and_never_indexes_past_the_end() {
        let mut p = CopyPenalty::new([vec![1, -5, 2]], 1);
        assert!(after(&mut p, &[1]).is_empty(), "-5 splits 1 from 2");
        let mut p = CopyPenalty::new([vec![1, 2, 3], vec![-1, 4]], 1);
        assert!(after(&mut p, &[3, -1]).is_empty());
        assert!(after(&mut p, &[-1]).is_empty());
        assert_eq!(after(&mut p, &[1]), HashMap::from([(2, 0.8)]));
    }

    #[test]
    fn no_sources_no_penalty() {
        let mut p = CopyPenalty::new(Vec::<Vec<i32>>::new(), 2);
        assert!(after(&mut p, &[1, 2, 3]).is_empty());
    }

    /// The longest `k` such that the reply ends with `s[i - k..i]`, over every source `s` and
    /// every `i` where `s[i]` is `token`: the run `token` would carry on.
    fn longest_run_before(sources: &[Vec<i32>], reply: &[i32], token: i32) -> u32 {
        let mut best = 0;
        for s in sources {
            for i in 0..s.len() {
                if s[i] != token {
                    continue;
                }
                let mut k = 0;
                while k < i && k < reply.len() && s[i - 1 - k] == reply[reply.len() - 1 - k] {
                    k += 1;
                }
                best = best.max(k as u32);
            }
        }
        best
    }

    /// The same search over the reply's own earlier tokens: the next token at `i` may be any
    /// position before the reply's end.
    fn longest_own_run_before(reply: &[i32], token: i32) -> u32 {
        let mut best = 0;
        for i in 1..reply.len() {
            if reply[i] != token {
                continue;
            }
            let mut k = 0;
            // The earlier run ends (at `i - 1`) before the repeat starts.
            while k < i && k < reply.len() - i && reply[i - 1 - k] == reply[reply.len() - 1 - k] {
                k += 1;
            }
            best = best.max(k as u32);
        }
        best
    }

    proptest! {
        #[test]
        fn own_repeats_match_a_search_of_every_run(
            sources in prop::collection::vec(prop::collection::vec(0i32..4, 0..12), 0..4),
            reply in prop::collection::vec(0i32..4, 0..20),
            allowed in 1u32..4,
        ) {
            let mut p = CopyPenalty::new(sources.clone(), allowed).counting_own_repeats();
            for &t in &reply {
                p.accept(t);
            }
            let got = p.penalties();
            for token in 0..4 {
                let n = longest_run_before(&sources, &reply, token)
                    .max(longest_own_run_before(&reply, token));
                let want = (n >= allowed).then(|| {
                    (MULTIPLIER * BASE.powi((n - allowed) as i32)).min(MAX_PENALTY)
                });
                prop_assert_eq!(got.get(&token).copied(), want, "token {}", token);
            }
        }

        #[test]
        fn penalties_match_a_search_of_every_run(
            sources in prop::collection::vec(prop::collection::vec(0i32..4, 0..12), 0..4),
            reply in prop::collection::vec(0i32..4, 0..20),
            allowed in 1u32..4,
        ) {
            let mut p = CopyPenalty::new(sources.clone(), allowed);
            for &t in &reply {
                p.accept(t);
            }
            let got = p.penalties();
            for token in 0..4 {
                let n = longest_run_before(&sources, &reply, token);
                let want = (n >= allowed).then(|| {
                    (MULTIPLIER * BASE.powi((n - allowed) as i32)).min(MAX_PENALTY)
                });
                prop_assert_eq!(got.get(&token).copied(), want, "token {}", token);
            }
        }
    }
}
