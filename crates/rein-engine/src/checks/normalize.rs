//! Text as it renders: the judge reads what a person would see, so hidden marks and lookalike
//! spellings cannot slip a placeholder or a keyword past a check.
//!
//! NFKC folds compatibility forms (full-width digits, ligatures, superscripts) into their plain
//! spelling; format characters (Unicode category Cf: zero-width spaces and joiners, bidi marks,
//! the BOM, soft hyphens) are removed because they render as nothing.

use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// The UTF-8 byte order mark, which some editors and small models put before a file.
pub(crate) const BOM: &str = "\u{feff}";

/// Whether `c` renders as nothing (Unicode general category Cf).
pub(crate) fn is_invisible(c: char) -> bool {
    c.general_category() == GeneralCategory::Format
}

/// The text with the BOM and every invisible character removed, then NFKC-normalised.
pub fn normalize(text: &str) -> String {
    let visible: String = text
        .strip_prefix(BOM)
        .unwrap_or(text)
        .chars()
        .filter(|c| !is_invisible(*c))
        .collect();
    visible.nfkc().collect()
}

/// Bytes as text for judging: lossy UTF-8, then `normalize`.
pub(crate) fn normalize_bytes(bytes: &[u8]) -> String {
    normalize(&String::from_utf8_lossy(bytes))
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
    fn ordinary_text_is_unchanged() {
        let t = "# Title\n\n- a, b; c.\tTab\n";
        assert_eq!(normalize(t), t);
    }
}
