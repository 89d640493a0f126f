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
    fn numbers() {
        assert_eq!(fmt_num(3.0), "3");
        assert_eq!(fmt_num(2.5), "2.5");
    }
}
