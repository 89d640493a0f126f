//! The strict number parser of the judge. A stated number is accepted only in a spelling that
//! has one reading: digits, thousands separators `,` in groups of exactly three, an optional
//! `.` fraction, and a unit or sign only where the contract declares one. `6,4`, `64k`, `-64`,
//! `64 - 6 = 58` and `≠ 64` are refused rather than read as 64.

/// What a contract allows around the digits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NumberRules<'a> {
    /// A leading `-` or `+` is accepted.
    pub signed: bool,
    /// Units accepted as a prefix or a suffix, with or without one space (compared ignoring
    /// case): e.g. `EUR`, `€`, `hours`.
    pub units: &'a [String],
}

/// Parses `raw` strictly; the error says why the text is not a number under these rules.
pub(crate) fn parse_strict(raw: &str, rules: &NumberRules<'_>) -> Result<f64, String> {
    let mut s = raw.trim();
    if s.is_empty() {
        return Err("empty".into());
    }
    s = strip_unit(s, rules.units);
    let mut negative = false;
    if let Some(rest) = s.strip_prefix(['-', '+', '\u{2212}']) {
        if !rules.signed {
            return Err("a sign is not allowed here".into());
        }
        negative = s.starts_with(['-', '\u{2212}']);
        s = rest;
        // A unit may stand after the sign too: `-€5`.
        s = strip_unit(s, rules.units);
    }
    let (int_part, frac_part) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s, None),
    };
    if int_part.is_empty() {
        return Err("no digits before the decimal point".into());
    }
    let digits = integer_digits(int_part)?;
    let mut plain = digits;
    if let Some(f) = frac_part {
        if f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("`{f}` is not a decimal fraction"));
        }
        plain.push('.');
        plain.push_str(f);
    }
    let value: f64 = plain
        .parse()
        .map_err(|_| format!("`{plain}` is not a number"))?;
    if !value.is_finite() {
        return Err("out of range".into());
    }
    Ok(if negative { -value } else { value })
}

/// The digits of an integer part: plain digits, or 1 to 3 digits then groups of `,ddd`.
fn integer_digits(s: &str) -> Result<String, String> {
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(s.to_string());
    }
    let mut groups = s.split(',');
    let first = groups.next().unwrap_or("");
    let grouped = !first.is_empty()
        && first.len() <= 3
        && first.bytes().all(|b| b.is_ascii_digit())
        && s.contains(',')
        && groups.all(|g| g.len() == 3 && g.bytes().all(|b| b.is_ascii_digit()));
    if grouped {
        Ok(s.replace(',', ""))
    } else if s.contains(',') {
        Err(format!(
            "`{s}` uses `,` other than as a thousands separator in groups of three"
        ))
    } else {
        Err(format!("`{s}` is not written with digits only"))
    }
}

/// `s` without one declared unit at its start or end (and the space beside it).
fn strip_unit<'s>(s: &'s str, units: &[String]) -> &'s str {
    for u in units {
        let u = u.as_str();
        if let Some(rest) = strip_prefix_ci(s, u) {
            return rest.strip_prefix(' ').unwrap_or(rest);
        }
        if let Some(rest) = strip_suffix_ci(s, u) {
            return rest.strip_suffix(' ').unwrap_or(rest);
        }
    }
    s
}

fn strip_prefix_ci<'s>(s: &'s str, p: &str) -> Option<&'s str> {
    let head = s.get(..p.len())?;
    head.eq_ignore_ascii_case(p).then(|| &s[p.len()..])
}

fn strip_suffix_ci<'s>(s: &'s str, p: &str) -> Option<&'s str> {
    let at = s.len().checked_sub(p.len())?;
    let tail = s.get(at..)?;
    tail.eq_ignore_ascii_case(p).then(|| &s[..at])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn plain(raw: &str) -> Result<f64, String> {
        parse_strict(raw, &NumberRules::default())
    }

    #[test]
    fn accepts_the_plain_spellings() {
        assert_eq!(plain("64"), Ok(64.0));
        assert_eq!(plain(" 1,234 "), Ok(1234.0));
        assert_eq!(plain("1,234,567.25"), Ok(1_234_567.25));
        assert_eq!(plain("0.5"), Ok(0.5));
        assert_eq!(plain("007"), Ok(7.0));
    }

    #[test]
    fn refuses_every_lenient_reading_of_64() {
        for raw in [
            "6,4",
            "0,0,6,4",
            "64k",
            "-64",
            "+64",
            "≠ 64",
            "64 - 6 = 58",
            "6 4",
            "64.",
            ".64",
            "64,",
            ",64",
            "1,23",
            "1234,567",
            "64e0",
            "0x40",
            "64%",
            "",
            "sixty-four",
            "64 64",
            "1,234.5.6",
            "1_234",
            "6\u{2009}4",
        ] {
            assert!(plain(raw).is_err(), "{raw:?} must be refused");
        }
    }

    #[test]
    fn units_and_signs_only_when_declared() {
        let units = vec!["EUR".to_string(), "€".to_string(), "hours".to_string()];
        let r = NumberRules {
            signed: false,
            units: &units,
        };
        assert_eq!(parse_strict("300.50 EUR", &r), Ok(300.5));
        assert_eq!(parse_strict("300.50eur", &r), Ok(300.5));
        assert_eq!(parse_strict("€12", &r), Ok(12.0));
        assert_eq!(parse_strict("64 hours", &r), Ok(64.0));
        assert!(parse_strict("64 days", &r).is_err());
        assert!(parse_strict("64 hours hours", &r).is_err());
        assert!(parse_strict("-5 EUR", &r).is_err());
        let s = NumberRules {
            signed: true,
            units: &units,
        };
        assert_eq!(parse_strict("-5 EUR", &s), Ok(-5.0));
        assert_eq!(parse_strict("+5", &s), Ok(5.0));
    }

    fn grouped(n: u64) -> String {
        let s = n.to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    }

    proptest! {
        #[test]
        fn every_integer_round_trips_plain_and_grouped(n in 0u64..1_000_000_000_000_000) {
            prop_assert_eq!(plain(&n.to_string()), Ok(n as f64));
            prop_assert_eq!(plain(&grouped(n)), Ok(n as f64));
        }

        #[test]
        fn every_decimal_round_trips(int in 0u64..10_000_000_000, frac in 0u32..1_000_000, width in 1usize..7) {
            let frac = format!("{:0>width$}", frac % 10u32.pow(width as u32), width = width);
            let text = format!("{}.{frac}", grouped(int));
            let want: f64 = format!("{int}.{frac}").parse().unwrap();
            prop_assert_eq!(plain(&text), Ok(want));
        }

        #[test]
        fn anything_outside_the_grammar_is_refused(s in "[0-9,.+k -]{1,12}") {
            // The grammar, written independently as a regex: the parser accepts exactly it.
            let grammar = regex::Regex::new(r"^\s*([0-9]+|[0-9]{1,3}(,[0-9]{3})+)(\.[0-9]+)?\s*$").unwrap();
            prop_assert_eq!(plain(&s).is_ok(), grammar.is_match(&s), "{:?}", s);
        }
    }
}
