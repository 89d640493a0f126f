//! Text as it renders: the judge reads what a person would see, so hidden marks and lookalike
//! spellings cannot slip a placeholder or a keyword past a check.
//!
//! NFKC folds compatibility forms (full-width digits, ligatures) into their plain spelling;
//! format characters (Unicode category Cf: zero-width spaces and joiners, bidi marks, the BOM,
//! soft hyphens) are removed because they render as nothing. Superscript and subscript digits
//! are kept as they are: `6⁴` shows a power, and reading it as `64` would give it a second
//! meaning.
//!
//! `reading` goes one step further for prose, which is judged by what a person reads: letters
//! of other scripts that look like Latin ones (Cyrillic `о`, Greek `Α`) are read as their Latin
//! twins and accents on letters are dropped, so `Tоtal hours: 71` is a total line and `nо real
//! risk` a denial. Copied values are compared with `normalize` (and grounded on bytes), never
//! with `reading`.
//!
//! Bidi embedding, override and isolate controls change the order in which text is shown, so
//! text holding one is not read at all (`reorder_control`): the checks that read prose fail
//! closed on it.

use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// The UTF-8 byte order mark, which some editors and small models put before a file.
pub(crate) const BOM: &str = "\u{feff}";

/// Whether `c` renders as nothing (Unicode general category Cf).
pub(crate) fn is_invisible(c: char) -> bool {
    c.general_category() == GeneralCategory::Format
}

/// Superscript and subscript digits and signs: NFKC would fold `6⁴` into `64`.
fn is_raised_or_lowered_digit(c: char) -> bool {
    matches!(
        c,
        '\u{00b2}' | '\u{00b3}' | '\u{00b9}' | '\u{2070}'..='\u{209f}'
    )
}

/// The text with the BOM and every invisible character removed, then NFKC-normalised (except
/// superscript and subscript digits, which keep their form).
pub fn normalize(text: &str) -> String {
    let visible: String = text
        .strip_prefix(BOM)
        .unwrap_or(text)
        .chars()
        .filter(|c| !is_invisible(*c))
        .collect();
    let mut out = String::with_capacity(visible.len());
    let mut rest = visible.as_str();
    while let Some(at) = rest.find(is_raised_or_lowered_digit) {
        out.extend(rest[..at].nfkc());
        let c = rest[at..].chars().next().unwrap_or_default();
        out.push(c);
        rest = &rest[at + c.len_utf8()..];
    }
    out.extend(rest.nfkc());
    out
}

/// Bytes as text for judging: lossy UTF-8, then `normalize`.
pub(crate) fn normalize_bytes(bytes: &[u8]) -> String {
    normalize(&String::from_utf8_lossy(bytes))
}

/// The first bidi embedding, override or isolate control in `text`: U+202A..U+202E and
/// U+2066..U+2069 make text show in another order than it is stored (`64` shown as `46`, words
/// of a sentence reversed).
pub(crate) fn reorder_control(text: &str) -> Option<char> {
    text.chars()
        .find(|c| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
}

/// The Latin letter a Cyrillic, Greek or Armenian letter is read as, when it looks the same.
fn latin_twin(c: char) -> Option<char> {
    Some(match c {
        // Cyrillic
        'а' => 'a',
        'е' => 'e',
        'о' => 'o',
        'р' => 'p',
        'с' => 'c',
        'у' => 'y',
        'х' => 'x',
        'і' => 'i',
        'ј' => 'j',
        'ѕ' => 's',
        'һ' => 'h',
        'ԁ' => 'd',
        'ԛ' => 'q',
        'ԝ' => 'w',
        'ӏ' => 'l',
        'А' => 'A',
        'В' => 'B',
        'Е' => 'E',
        'К' => 'K',
        'М' => 'M',
        'Н' => 'H',
        'О' => 'O',
        'Р' => 'P',
        'С' => 'C',
        'Т' => 'T',
        'Х' => 'X',
        'У' => 'Y',
        'І' => 'I',
        'Ј' => 'J',
        'Ѕ' => 'S',
        'Ԛ' => 'Q',
        'Ԝ' => 'W',
        'Ӏ' => 'I',
        // Greek
        'α' => 'a',
        'ο' => 'o',
        'ν' => 'v',
        'ρ' => 'p',
        'ι' => 'i',
        'κ' => 'k',
        'τ' => 't',
        'υ' => 'u',
        'Α' => 'A',
        'Β' => 'B',
        'Ε' => 'E',
        'Ζ' => 'Z',
        'Η' => 'H',
        'Ι' => 'I',
        'Κ' => 'K',
        'Μ' => 'M',
        'Ν' => 'N',
        'Ο' => 'O',
        'Ρ' => 'P',
        'Τ' => 'T',
        'Υ' => 'Y',
        'Χ' => 'X',
        // Armenian and Latin lookalikes NFKC leaves alone
        'օ' => 'o',
        'ս' => 'u',
        'հ' => 'h',
        'ı' => 'i',
        'ɑ' => 'a',
        'ɡ' => 'g',
        _ => return None,
    })
}

/// Text as a person reads it (see the module doc): `normalize`, lookalike letters read as
/// Latin, accents on letters dropped. Marks on anything but a letter stay, so `6̸4` is not `64`.
pub(crate) fn reading(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut after_letter = false;
    for c in normalize(text).nfd() {
        if c.general_category() == GeneralCategory::NonspacingMark {
            if after_letter {
                continue;
            }
        } else {
            after_letter = c.is_alphabetic();
        }
        out.push(latin_twin(c).unwrap_or(c));
    }
    out.nfc().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_marks_are_removed() {
        assert_eq!(normalize("T\u{200b}BD"), "TBD");
        assert_eq!(normalize("\u{feff}{\"a\":1}"), "{\"a\":1}");
        assert_eq!(normalize("a\u{202e}b\u{2066}c\u{ad}d"), "abcd");
    }

    #[test]
    fn lookalikes_fold_to_plain_text() {
        assert_eq!(normalize("６４"), "64");
        assert_eq!(normalize("ﬁle"), "file");
        assert_eq!(normalize("Total\u{00a0}hours"), "Total hours");
    }

    #[test]
    fn powers_keep_their_form() {
        assert_eq!(normalize("6\u{2074}"), "6\u{2074}");
        assert_eq!(normalize("m\u{00b2} ６"), "m\u{00b2} 6");
    }

    #[test]
    fn reading_folds_other_scripts_and_accents_on_letters() {
        assert_eq!(reading("T\u{043e}tal hours"), "Total hours");
        assert_eq!(reading("\u{0422}\u{0412}D"), "TBD");
        assert_eq!(reading("Tota\u{0301}l n\u{03bf} risk"), "Total no risk");
        assert_eq!(reading("café"), "cafe");
        // A mark on a digit stays: the number is not read as plain digits.
        assert_eq!(reading("6\u{0338}4"), "6\u{0338}4");
    }

    #[test]
    fn reorder_controls_are_found() {
        assert_eq!(reorder_control("Total: \u{202e}64"), Some('\u{202e}'));
        assert_eq!(reorder_control("a \u{2067}b c\u{2069}"), Some('\u{2067}'));
        assert_eq!(reorder_control("plain \u{200b}text"), None);
    }

    #[test]
    fn ordinary_text_is_unchanged() {
        let t = "# Title\n\n- a, b; c.\tTab\n";
        assert_eq!(normalize(t), t);
        assert_eq!(reading(t), t);
    }
}
