//! Lever `own-totals`: a deliverable whose total line (or top-level total field) disagrees
//! with the sum of the figures the same document lists for it is not finished on the first
//! try. The finish is held once per attempt with the two figures, so the model can fix the
//! line. Both figures come from the model's own document, never from the inputs or the judge:
//! the items may be wrong too, and the judge still checks both.
//!
//! The 1.5B listed four years of letters as 4, 7, 5 and 3 and wrote `Total letters: 24`
//! (explore-archive-years), and listed four receipts of 94.78, 19, 41.9 and 55.75 with a total
//! of 189.43 (extract-receipts).
//!
//! Only a plain case is read, and anything unsure is left alone:
//! - Markdown or text: a line `<label with the word total>: N [unit]` that is not a list item,
//!   and before it in its section either two or more list items, every one `<label>: N [unit]`
//!   with one unit, or (with no list item) two or more such lines and nothing else, every one
//!   with one unit. A total line with a unit needs the same unit on the items.
//! - JSON: a top-level number whose key has the word total (`total`, `grand_total`,
//!   `total_workers`), and one top-level array of two or more objects, each with a number
//!   under the key's other words (`workers`; `total` when there are none).

use std::sync::LazyLock;

use regex::Regex;
use rein_workspace::desk::parse_number;
use rust_decimal::Decimal;
use serde_json::Value;

/// Characters of a quoted line, at most, in the hold's message.
const QUOTED_MAX_CHARS: usize = 120;

/// Figures summed, at most: a longer list is no plain case (and a total line more than twice
/// this many lines into its section is not read, so a file of many total lines is read in
/// linear time).
const MAX_SUMMED: usize = 100;

/// Terms of a sum the hold's message spells out, at most; past it, it gives their count.
const MAX_TERMS_SHOWN: usize = 12;

/// A labelled figure line: label, colon, a number, an optional unit of letters, an optional
/// full stop. Emphasis marks are taken out before it is matched.
static FIGURE_LINE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"^([^:]{1,80}):[ \t]*([-+(]?[$€£¥]?[0-9][0-9,]*(?:\.[0-9]+)?\)?)(?:[ \t]+([A-Za-z€$%]{1,12}))?[ \t]*\.?$")
        .ok()
});

/// The word "total" in a label.
static TOTAL_WORD: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)(?:^|[^a-z])total(?:$|[^a-z])").ok());

/// A list item's marker: `- `, `* `, `+ `, `1. `, `1) `.
static LIST_MARKER: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\s*(?:[-*+]|[0-9]{1,3}[.)])\s+").ok());

/// A total the document states that disagrees with the sum of what it lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// The total line as written, or the JSON key.
    pub stated_at: String,
    /// The number it states.
    pub stated: Decimal,
    /// The sum of the listed figures.
    pub sum: Decimal,
    /// How many figures were summed.
    pub items: usize,
    /// What was summed, in words (`the 4 list items before it in its section`).
    pub summed: String,
}

impl Disagreement {
    /// The hold's message, naming the call the run fixes the deliverable with.
    pub fn message(&self, path: &str, fixer: &str) -> String {
        format!(
            "Not finished yet: in {path}, {} states {}, but {} add up to {}. If it is their \
             sum, change it to {} with {fixer}, then call finish. If it is meant to differ, \
             call finish again.",
            self.stated_at,
            self.stated.normalize(),
            self.summed,
            self.sum.normalize(),
            self.sum.normalize()
        )
    }

    /// The progress note's suggested step after the hold.
    pub fn next_step(&self, path: &str, fixer: &str) -> String {
        format!(
            "if {} in {path} is the sum of what it lists, change it to {} with {fixer} and call \
             finish; if not, call finish again",
            self.stated_at,
            self.sum.normalize()
        )
    }
}

/// The first total of `text` (the deliverable at `path`) that disagrees with the figures the
/// document lists for it; `None` when every total agrees or none is read (see the module).
pub fn disagreement(path: &str, text: &str) -> Option<Disagreement> {
    if path.to_lowercase().ends_with(".json") {
        json_disagreement(text)
    } else {
        text_disagreement(text)
    }
}

/// A labelled figure: label, value, unit (lowercase, empty when there is none).
#[derive(Clone)]
struct Figure {
    label: String,
    value: Decimal,
    unit: String,
}

/// `line` without emphasis marks, as a figure.
fn figure(line: &str) -> Option<Figure> {
    let plain: String = line.trim().replace("**", "").replace(['`', '_'], "");
    let c = FIGURE_LINE.as_ref()?.captures(plain.trim())?;
    Some(Figure {
        label: c[1].trim().to_string(),
        value: parse_number(&c[2])?,
        unit: c
            .get(3)
            .map_or(String::new(), |u| u.as_str().to_lowercase()),
    })
}

fn is_total_label(label: &str) -> bool {
    TOTAL_WORD.as_ref().is_some_and(|r| r.is_match(label))
}

fn list_item(line: &str) -> Option<&str> {
    let m = LIST_MARKER.as_ref()?.find(line)?;
    Some(&line[m.end()..])
}

fn text_disagreement(text: &str) -> Option<Disagreement> {
    let lines: Vec<Line> = text.lines().map(Line::read).collect();
    let mut section_start = 0;
    for (i, line) in lines.iter().enumerate() {
        if line.heading {
            section_start = i + 1;
            continue;
        }
        if line.item {
            continue;
        }
        let Some(total) = line.figure.as_ref().filter(|f| is_total_label(&f.label)) else {
            continue;
        };
        // Past MAX_SUMMED lines back the block is no plain case: not read at all.
        if i - section_start > 2 * MAX_SUMMED {
            continue;
        }
        let Some((figures, summed)) = listed_figures(&lines[section_start..i]) else {
            continue;
        };
        let unit = &figures[0].unit;
        if !total.unit.is_empty() && &total.unit != unit {
            continue;
        }
        let values: Vec<Decimal> = figures.iter().map(|f| f.value).collect();
        if let Some(sum) = differs(total.value, &values) {
            return Some(Disagreement {
                stated_at: format!("the line {}", quoted(line.text.trim())),
                stated: total.value,
                sum,
                items: values.len(),
                summed,
            });
        }
    }
    None
}

/// A line of a Markdown or text deliverable as the reader sees it, read once.
struct Line<'t> {
    text: &'t str,
    heading: bool,
    item: bool,
    /// The line's figure; a list item's is the figure of its text after the marker.
    figure: Option<Figure>,
}

impl<'t> Line<'t> {
    fn read(text: &'t str) -> Line<'t> {
        let item = list_item(text);
        Line {
            text,
            heading: text.trim_start().starts_with('#'),
            item: item.is_some(),
            figure: figure(item.unwrap_or(text)),
        }
    }
}

/// The figures listed before a total line in its section, and what they are in words: its list
/// items when there are two or more, else its lines; `None` unless every one is a figure, with
/// one unit, none is itself a total, and there are at most [`MAX_SUMMED`].
fn listed_figures(before: &[Line<'_>]) -> Option<(Vec<Figure>, String)> {
    let items: Vec<&Line> = before.iter().filter(|l| l.item).collect();
    let (lines, what): (Vec<&Line>, &str) = match items.len() {
        0 => (
            before
                .iter()
                .filter(|l| !l.text.trim().is_empty())
                .collect(),
            "lines",
        ),
        1 => return None,
        _ => (items, "list items"),
    };
    if !(2..=MAX_SUMMED).contains(&lines.len()) {
        return None;
    }
    let figures: Vec<Figure> = lines
        .iter()
        .map(|l| l.figure.clone())
        .collect::<Option<_>>()?;
    let unit = &figures[0].unit;
    if figures
        .iter()
        .any(|f| &f.unit != unit || is_total_label(&f.label))
    {
        return None;
    }
    let values: Vec<Decimal> = figures.iter().map(|f| f.value).collect();
    let summed = format!(
        "the {} {what} before it in its section{}",
        figures.len(),
        terms(&values)
    );
    Some((figures, summed))
}

/// The terms of a sum as the hold spells them out: ` (4 + 7 + 5 + 3)`, or nothing past
/// [`MAX_TERMS_SHOWN`].
fn terms(values: &[Decimal]) -> String {
    if values.len() > MAX_TERMS_SHOWN {
        return String::new();
    }
    let shown: Vec<String> = values.iter().map(|v| v.normalize().to_string()).collect();
    format!(" ({})", shown.join(" + "))
}

fn json_disagreement(text: &str) -> Option<Disagreement> {
    if super::document_facts::has_inexact_number(text) {
        return None;
    }
    let document: Value = serde_json::from_str(text).ok()?;
    let top = document.as_object()?;
    let arrays: Vec<(&String, &Vec<Value>)> = top
        .iter()
        .filter_map(|(k, v)| v.as_array().map(|a| (k, a)))
        .filter(|(_, a)| a.len() >= 2 && a.iter().all(Value::is_object))
        .collect();
    let [(array_key, entries)] = arrays.as_slice() else {
        return None;
    };
    if entries.len() > MAX_SUMMED {
        return None;
    }
    for (key, value) in top {
        let Some(stated) = value.as_number().and_then(|n| parse_number(&n.to_string())) else {
            continue;
        };
        let words = key_words(key);
        if !words.iter().any(|w| w == "total") {
            continue;
        }
        let rest: Vec<&String> = words
            .iter()
            .filter(|w| !matches!(w.as_str(), "total" | "grand" | "sum" | "of" | "all"))
            .collect();
        let field_words: Vec<String> = if rest.is_empty() {
            vec!["total".to_string()]
        } else {
            rest.into_iter().cloned().collect()
        };
        let Some(values) = entries
            .iter()
            .map(|e| entry_figure(e, &field_words))
            .collect::<Option<Vec<Decimal>>>()
        else {
            continue;
        };
        if let Some(sum) = differs(stated, &values) {
            let field = entries[0]
                .as_object()
                .and_then(|o| o.keys().find(|k| key_words(k) == field_words))
                .cloned()
                .unwrap_or_default();
            return Some(Disagreement {
                stated_at: format!("\"{key}\""),
                stated,
                sum,
                items: values.len(),
                summed: format!(
                    "the \"{field}\" of the {} entries of \"{array_key}\"{}",
                    values.len(),
                    terms(&values)
                ),
            });
        }
    }
    None
}

/// An entry's number under the key whose words are `words`.
fn entry_figure(entry: &Value, words: &[String]) -> Option<Decimal> {
    let (_, v) = entry
        .as_object()?
        .iter()
        .find(|(k, _)| key_words(k) == words)?;
    parse_number(&v.as_number()?.to_string())
}

/// A key's words, lowercase: `total_workers`, `totalWorkers` and `Total workers` are
/// `["total", "workers"]`.
fn key_words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if !c.is_alphanumeric() {
            prev_lower = false;
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The sum of `values` when `stated` is not it: exactly for whole numbers; with figures of
/// decimals, past what rounding each to its own decimals could explain (half a unit of its
/// last place each).
///
/// Figures past what a decimal of 28 digits holds (a sum that overflows, a figure of 28
/// decimals) are no plain case: `None`.
fn differs(stated: Decimal, values: &[Decimal]) -> Option<Decimal> {
    let sum = values
        .iter()
        .try_fold(Decimal::ZERO, |acc, v| acc.checked_add(*v))?;
    let slack = values
        .iter()
        .chain(std::iter::once(&stated))
        .map(|v| v.normalize().scale())
        .filter(|scale| *scale > 0)
        .try_fold(Decimal::ZERO, |acc, scale| {
            acc.checked_add(Decimal::try_new(5, scale + 1).ok()?)
        })?;
    (stated.checked_sub(sum)?.abs() > slack).then_some(sum)
}

fn quoted(line: &str) -> String {
    let cut: String = line.chars().take(QUOTED_MAX_CHARS).collect();
    let cut = if cut.len() < line.len() {
        format!("{cut}… (cut)")
    } else {
        cut
    };
    serde_json::to_string(&cut).unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn dec(s: &str) -> Decimal {
        parse_number(s).unwrap()
    }

    #[test]
    fn a_total_line_under_list_items_that_sum_to_another_figure_disagrees() {
        let text = "# Archive\n- 2021: 4 letters\n- 2022: 7 letters\n- 2023: 5 letters\n- 2024: 3 letters\nBusiest year: 2022\nTotal letters: 24 letters\n";
        let d = disagreement("out/archive.md", text).unwrap();
        assert_eq!((d.stated, d.sum, d.items), (dec("24"), dec("19"), 4));
        assert!(d.summed.contains("4 + 7 + 5 + 3"), "{}", d.summed);
        let m = d.message("out/archive.md", "edit_file");
        assert!(
            m.contains("\"Total letters: 24 letters\" states 24")
                && m.contains("add up to 19")
                && m.contains("with edit_file"),
            "{m}"
        );
        let right = text.replace("24 letters\n", "19\n");
        assert_eq!(disagreement("out/archive.md", &right), None);
    }

    #[test]
    fn plain_figure_lines_with_one_unit_are_summed_in_their_section_only() {
        let text = "## By person\nInes: 52 hours\nMarek: 46 hours\n\n## By project\nharbor-app: 46 hours\nintranet: 66 hours\nsupport: **66** hours\n\nTotal: 164 hours\n";
        let d = disagreement("out/hours.md", text).unwrap();
        assert_eq!((d.stated, d.sum), (dec("164"), dec("178")));
        assert!(d.summed.contains("3 lines"), "{}", d.summed);
        assert_eq!(
            disagreement("out/hours.md", &text.replace("164", "178")),
            None
        );
    }

    #[test]
    fn unsure_cases_are_left_alone() {
        for text in [
            // A line that is no figure among the lines before the total.
            "## Totals\nTravel: 10 EUR\nsee the note below\nMeals: 5 EUR\nTotal: 99 EUR\n",
            // Units differ among the items, or from the total's.
            "Travel: 10 EUR\nMeals: 5 USD\nTotal: 99 EUR\n",
            "Travel: 10 EUR\nMeals: 5 EUR\nTotal: 99 hours\n",
            // One item only; none at all.
            "- a: 1\nTotal: 9\n",
            "# Overall\nFails in total: 3\n",
            // The label has no word total ("Totals", "subtotally" do not count).
            "- a: 1\n- b: 2\nTotals: 9\n",
            "- a: 1\n- b: 2\nCount: 9\n",
            // A total line that is itself a list item.
            "- a: 1\n- b: 2\n- Total: 9\n",
            // Items that hold no figure of their own.
            "- a (3 hours)\n- b (4 hours)\nTotal: 9 hours\n",
            // A total among the items.
            "Subtotal: 3\nother total: 4\nTotal: 99\n",
        ] {
            assert_eq!(disagreement("out/r.md", text), None, "{text:?}");
        }
    }

    #[test]
    fn decimals_get_the_rounding_of_their_last_place_and_whole_numbers_none() {
        let items = "- a: 10.33 EUR\n- b: 10.33 EUR\n- c: 10.33 EUR\n";
        // 30.99 exactly; 31.00 is the rounded sum of three thirds of 31: within 3 x 0.005.
        assert_eq!(
            disagreement("r.md", &format!("{items}Total: 31.00 EUR\n")),
            None
        );
        assert!(disagreement("r.md", &format!("{items}Total: 31.05 EUR\n")).is_some());
        assert!(disagreement("r.md", "- a: 1\n- b: 2\nTotal: 4\n").is_some());
        // Thousands separators and currency signs are figures.
        assert_eq!(
            disagreement("r.md", "- a: 1,200\n- b: €300\nTotal: 1,500\n"),
            None
        );
    }

    #[test]
    fn a_json_total_is_the_sum_of_the_field_its_other_words_name() {
        let receipts = r#"{"receipts": [{"merchant": "A", "total": 94.78}, {"merchant": "B", "total": 19}, {"merchant": "C", "total": 41.9}, {"merchant": "D", "total": 55.75}], "total": 189.43}"#;
        let d = disagreement("out/receipts.json", receipts).unwrap();
        assert_eq!(
            (d.stated, d.sum, d.items),
            (dec("189.43"), dec("211.43"), 4)
        );
        assert_eq!(d.stated_at, "\"total\"");
        assert!(d
            .summed
            .contains("\"total\" of the 4 entries of \"receipts\""));
        assert_eq!(
            disagreement("out/receipts.json", &receipts.replace("189.43", "211.43")),
            None
        );
        let services = r#"{"services": [{"service": "a", "workers": 4}, {"service": "b", "workers": 2}], "total_workers": 7}"#;
        assert_eq!(
            disagreement("s.json", services).map(|d| d.sum),
            Some(dec("6"))
        );
        let camel = r#"{"invoices": [{"total": 1.5}, {"total": 2}], "grandTotal": 3.5}"#;
        assert_eq!(disagreement("s.json", camel), None);
        assert!(disagreement("s.json", &camel.replace("3.5", "4")).is_some());
    }

    #[test]
    fn json_left_alone_without_one_plain_array_and_a_matching_field() {
        for text in [
            // The entries have no fare.
            r#"{"flights": [{"reference": "a"}, {"reference": "b"}], "total_fare": 10}"#,
            // Two arrays of objects: which one is summed is not sure.
            r#"{"a": [{"total": 1}, {"total": 2}], "b": [{"total": 1}, {"total": 2}], "total": 9}"#,
            // One entry misses the field, or holds text.
            r#"{"a": [{"total": 1}, {"x": 2}], "total": 9}"#,
            r#"{"a": [{"total": 1}, {"total": "2"}], "total": 9}"#,
            // More digits than a double holds.
            r#"{"a": [{"total": 0.10000000000000000001}, {"total": 2}], "total": 9}"#,
            // Not an object, not JSON.
            r#"[{"total": 1}, {"total": 2}]"#,
            "not json",
        ] {
            assert_eq!(disagreement("f.json", text), None, "{text}");
        }
    }

    #[test]
    fn a_long_total_line_is_cut_and_said_so() {
        let text = format!("- a: 1\n- b: 2\nTotal{}: 9\n", "**".repeat(80));
        let d = disagreement("r.md", &text).unwrap();
        assert!(
            d.stated_at.ends_with("… (cut)\"") && d.stated_at.chars().count() < 140,
            "{}",
            d.stated_at
        );
        let long = format!("- a: 1\n- b: 2\nTotal: 9 {}\n", "y".repeat(200));
        // A unit of more than twelve letters is no unit: not a figure line.
        assert_eq!(disagreement("r.md", &long), None);
    }
}
