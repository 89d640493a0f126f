//! Streaming text with stop strings: text is released only once it can no longer turn out to
//! be the start of a stop string, so a stop string never leaks into the output.

#[derive(Debug, Default)]
pub struct StopScanner {
    stops: Vec<String>,
    /// Bytes decoded from tokens that are not yet valid UTF-8 (a character split across tokens).
    pending_bytes: Vec<u8>,
    /// Text held back because it could be the start of a stop string.
    held: String,
    /// All text released so far.
    released: String,
    stopped: bool,
}

impl StopScanner {
    pub fn new(stops: &[String]) -> Self {
        Self {
            stops: stops.iter().filter(|s| !s.is_empty()).cloned().collect(),
            ..Self::default()
        }
    }

    /// Feeds the bytes of one token; returns the text that may be shown now.
    pub fn push(&mut self, bytes: &[u8]) -> String {
        if self.stopped {
            return String::new();
        }
        self.pending_bytes.extend_from_slice(bytes);
        let valid = match std::str::from_utf8(&self.pending_bytes) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_some() => {
                // Invalid bytes, not an incomplete character: show them replaced, never drop them.
                let lossy = String::from_utf8_lossy(&self.pending_bytes).into_owned();
                self.pending_bytes.clear();
                return self.push_text(&lossy);
            }
            Err(e) => e.valid_up_to(),
        };
        let text: String = String::from_utf8_lossy(&self.pending_bytes[..valid]).into_owned();
        self.pending_bytes.drain(..valid);
        self.push_text(&text)
    }

    fn push_text(&mut self, text: &str) -> String {
        self.held.push_str(text);
        if let Some((at, _)) = self
            .stops
            .iter()
            .filter_map(|s| self.held.find(s.as_str()).map(|i| (i, s)))
            .min_by_key(|(i, _)| *i)
        {
            let out = self.held[..at].to_string();
            self.held.clear();
            self.stopped = true;
            self.released.push_str(&out);
            return out;
        }
        let keep = self.longest_stop_prefix_suffix();
        let cut = self.held.len() - keep;
        let out: String = self.held[..cut].to_string();
        self.held.drain(..cut);
        self.released.push_str(&out);
        out
    }

    /// Length of the longest suffix of `held` that is a proper prefix of some stop string.
    fn longest_stop_prefix_suffix(&self) -> usize {
        let mut best = 0;
        for stop in &self.stops {
            for (i, _) in stop.char_indices().skip(1) {
                if self.held.ends_with(&stop[..i]) {
                    best = best.max(i);
                }
            }
        }
        best
    }

    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Ends the stream: returns whatever was held back (it was not a stop string after all).
    pub fn finish(&mut self) -> String {
        let mut out = std::mem::take(&mut self.held);
        if !self.pending_bytes.is_empty() {
            out.push_str(&String::from_utf8_lossy(&self.pending_bytes));
            self.pending_bytes.clear();
        }
        if self.stopped {
            return String::new();
        }
        self.released.push_str(&out);
        out
    }

    pub fn text(&self) -> &str {
        &self.released
    }
}

#[cfg(test)]
mod tests {
    use super::StopScanner;

    fn run(stops: &[&str], pieces: &[&str]) -> (String, bool) {
        let stops: Vec<String> = stops.iter().map(|s| s.to_string()).collect();
        let mut s = StopScanner::new(&stops);
        let mut out = String::new();
        for p in pieces {
            out.push_str(&s.push(p.as_bytes()));
            if s.stopped() {
                break;
            }
        }
        out.push_str(&s.finish());
        assert_eq!(out, s.text());
        (out, s.stopped())
    }

    #[test]
    fn a_stop_string_split_across_tokens_is_caught_and_not_shown() {
        assert_eq!(
            run(&["</end>"], &["hello </", "en", "d> more"]),
            ("hello ".into(), true)
        );
    }

    #[test]
    fn a_false_start_is_released_at_the_end() {
        assert_eq!(run(&["</end>"], &["a </e", "x"]), ("a </ex".into(), false));
        assert_eq!(run(&["STOP"], &["ab", "ST"]), ("abST".into(), false));
    }

    #[test]
    fn without_stops_everything_streams() {
        assert_eq!(run(&[], &["a", "b"]), ("ab".into(), false));
    }

    #[test]
    fn a_character_split_across_tokens_is_joined() {
        let mut s = StopScanner::new(&[]);
        let bytes = "é".as_bytes();
        assert_eq!(s.push(&bytes[..1]), "");
        assert_eq!(s.push(&bytes[1..]), "é");
    }
}
