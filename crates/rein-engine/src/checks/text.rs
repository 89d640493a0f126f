//! Small text helpers shared by checks and finish rules.

/// Counts words: maximal runs of letters or digits, where an apostrophe or hyphen between two
/// such characters joins them ("don't", "well-known"). Punctuation and markup never count, so
/// a JSON artifact's `{"a":1}` is two words.
pub fn count_words(text: &str) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let mut count = 0;
    let mut in_word = false;
    for (i, &c) in chars.iter().enumerate() {
        if c.is_alphanumeric() {
            if !in_word {
                count += 1;
                in_word = true;
            }
        } else if in_word
            && matches!(c, '\'' | '-' | '\u{2019}')
            && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric())
        {
            // stays inside the word
        } else {
            in_word = false;
        }
    }
    count
}

/// The text of every markdown ATX heading (`# Title`, `## Title ##`), in order. Lines inside
/// fenced code blocks are skipped.
pub fn markdown_headings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced || !t.starts_with('#') {
            continue;
        }
        let rest = t.trim_start_matches('#');
        let level = t.len() - rest.len();
        if level > 6 || !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
            continue;
        }
        out.push(rest.trim().trim_end_matches('#').trim().to_string());
    }
    out
}

/// Heading comparison that ignores case, leading `#`s, surrounding space and a trailing colon.
pub(crate) fn heading_key(h: &str) -> String {
    h.trim()
        .trim_start_matches('#')
        .trim()
        .trim_end_matches(':')
        .trim()
        .to_lowercase()
}

/// Parses a number as people write it: `1,234.50`, `$12`, `42 EUR`, `-3`, `7%`.
pub(crate) fn parse_number(s: &str) -> Option<f64> {
    let cleaned: String = s
        .trim()
        .chars()
        .filter(|c| !matches!(c, ',' | '_' | ' ' | '$' | '€' | '£' | '%' | '*'))
        .collect();
    let cleaned = cleaned.trim_end_matches(|c: char| c.is_alphabetic());
    if cleaned.is_empty() {
        return None;
    }
    cleaned.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// A number for facts: integers without a fraction, others as Rust prints them.
pub(crate) fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// At most `max` characters of `s` and whether it was clipped.
pub(crate) fn clip(s: &str, max: usize) -> (&str, bool) {
    match s.char_indices().nth(max) {
        Some((i, _)) => (&s[..i], true),
        None => (s, false),
    }
}

/// A short, single-line preview of a value for facts.
pub(crate) fn preview(s: &str) -> String {
    let one_line = s.replace('\n', "\\n");
    let (c, clipped) = clip(&one_line, 80);
    if clipped {
        format!("{c}…")
    } else {
        c.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words() {
        assert_eq!(count_words("Hello, world! don't well-known"), 4);
        assert_eq!(count_words("# Title\n\n- a b"), 3);
        assert_eq!(count_words(""), 0);
        assert_eq!(count_words("--- *** ---"), 0);
    }

    #[test]
    fn headings() {
        let t = "# A\ntext\n## B ##\n```\n# not\n```\n#nospace\n####### seven";
        assert_eq!(markdown_headings(t), vec!["A", "B"]);
        assert_eq!(heading_key("## Risks:"), "risks");
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("1,234.50"), Some(1234.5));
        assert_eq!(parse_number("$12"), Some(12.0));
        assert_eq!(parse_number("42 EUR"), Some(42.0));
        assert_eq!(parse_number("abc"), None);
        assert_eq!(fmt_num(3.0), "3");
        assert_eq!(fmt_num(2.5), "2.5");
    }
}
