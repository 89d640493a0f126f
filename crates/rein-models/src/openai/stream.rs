//! Incremental parsing of a server-sent event stream, and client-side stop strings.

use std::io::BufRead;

/// One line-oriented SSE reader: yields the `data` of each event as it completes.
pub struct SseReader<R> {
    inner: R,
    line: Vec<u8>,
    data: Option<String>,
    done: bool,
}

impl<R: BufRead> SseReader<R> {
    pub fn new(inner: R) -> Self {
        SseReader {
            inner,
            line: Vec::new(),
            data: None,
            done: false,
        }
    }

    /// The next event's data, `Ok(None)` at the end of the stream.
    pub fn next_event(&mut self) -> std::io::Result<Option<String>> {
        loop {
            if self.done {
                return Ok(self.data.take());
            }
            self.line.clear();
            let n = self.inner.read_until(b'\n', &mut self.line)?;
            if n == 0 {
                self.done = true;
                continue;
            }
            let text = String::from_utf8_lossy(&self.line);
            let line = text.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if let Some(data) = self.data.take() {
                    return Ok(Some(data));
                }
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line, ""),
            };
            if field == "data" {
                match &mut self.data {
                    Some(d) => {
                        d.push('\n');
                        d.push_str(value);
                    }
                    None => self.data = Some(value.to_string()),
                }
            }
        }
    }
}

/// Holds back text that may be the start of a stop string, and cuts at the first stop string.
pub struct StopScanner {
    stops: Vec<String>,
    held: String,
}

impl StopScanner {
    pub fn new(stops: &[String]) -> Self {
        StopScanner {
            stops: stops.iter().filter(|s| !s.is_empty()).cloned().collect(),
            held: String::new(),
        }
    }

    /// Takes a delta; returns the text that is safe to emit and whether a stop string was hit
    /// (the stop string and anything after it are dropped).
    pub fn push(&mut self, delta: &str) -> (String, bool) {
        self.held.push_str(delta);
        if let Some(at) = self
            .stops
            .iter()
            .filter_map(|s| self.held.find(s.as_str()))
            .min()
        {
            let out = self.held[..at].to_string();
            self.held.clear();
            return (out, true);
        }
        let keep = self.longest_partial_suffix();
        let split = self.held.len() - keep;
        let out = self.held[..split].to_string();
        self.held.drain(..split);
        (out, false)
    }

    /// What is still held back when the stream ends without a stop string.
    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.held)
    }

    /// Bytes at the end of `held` that are a proper prefix of some stop string.
    fn longest_partial_suffix(&self) -> usize {
        let mut best = 0;
        for stop in &self.stops {
            for (i, _) in stop.char_indices().skip(1) {
                let prefix = &stop[..i];
                if i > best && self.held.ends_with(prefix) {
                    best = i;
                }
            }
        }
        best
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_across_lines() {
        let text = ": comment\ndata: {\"a\":1}\n\ndata: one\ndata: two\r\n\r\nevent: x\ndata:[DONE]\n\ndata: tail";
        let mut r = SseReader::new(text.as_bytes());
        assert_eq!(r.next_event().unwrap().as_deref(), Some("{\"a\":1}"));
        assert_eq!(r.next_event().unwrap().as_deref(), Some("one\ntwo"));
        assert_eq!(r.next_event().unwrap().as_deref(), Some("[DONE]"));
        assert_eq!(r.next_event().unwrap().as_deref(), Some("tail"));
        assert_eq!(r.next_event().unwrap(), None);
    }

    #[test]
    fn stop_strings_split_across_deltas() {
        let mut s = StopScanner::new(&["</end>".to_string()]);
        assert_eq!(s.push("hello </"), ("hello ".to_string(), false));
        assert_eq!(s.push("en"), (String::new(), false));
        assert_eq!(s.push("d> more"), (String::new(), true));

        let mut s = StopScanner::new(&["</end>".to_string()]);
        assert_eq!(s.push("a </b"), ("a </b".to_string(), false));
        assert_eq!(s.push("<"), (String::new(), false));
        assert_eq!(s.finish(), "<");

        let mut s = StopScanner::new(&[]);
        assert_eq!(s.push("x"), ("x".to_string(), false));
    }
}
