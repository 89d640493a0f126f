//! Templates a task spells out in one sentence, its lines in quotes: a heading, perhaps lines
//! before the list, one list item per thing, then the closing lines (explore-config-formats:
//! `then the lines 'TOML files: N', 'YAML files: N' and 'JSON files: N' (counted over services/
//! only) and 'Most config files: <service>'`; related-code-callers: `then the line 'Defined in:
//! <path ...>', then each calling file as '- <path>' ..., then the line 'Callers: N'`). Without
//! a template the 1.5B ran config-formats' reply past the 384-token cap in 11 of its 12 format
//! errors (`fs3-explore/`).

use std::sync::LazyLock;

use regex::Regex;

use super::{path_mentions, AnswerLines, MAX_TEMPLATE_LINES, PLACEHOLDER};

/// The deliverable's path, " with the heading", and the heading in single quotes, at the
/// start of the text it is matched against.
static HEADING: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)^\s+with\s+(?:the\s+)?heading '([^'\n]{1,80})'").ok());

/// A clause that gives lines: "the line" or "the (two) lines", then the lines in quotes.
static LINES_CLAUSE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)^the (?:\w+ )?lines? '").ok());

/// A clause that gives the list: one item per thing, or each thing as `- ...`.
static LIST_CLAUSE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)^(?:one list item per\b|each\b[^']*\bas '- )").ok());

static QUOTED: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"'([^'\n]+)'").ok());

/// A quoted line: a label of words, `: `, then its value (`N`, `<service>`).
static QUOTED_LINE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^([A-Za-z][A-Za-z0-9 ()/_-]{0,40}): (\S[^\n]*)$").ok());

/// What may stand between and after a clause's quoted lines: blanks, commas, "and", and an
/// aside in brackets that quotes nothing ("(counted over services/ only)"). Anything else
/// ("or", "not", "for example", a note the task asks for too) may change what the lines
/// mean: no template.
static GLUE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^(?:\s+|,|and|\([^()'\n]*\))*$").ok());

/// The template of the one sentence of `prompt` that names `artifact` " with the heading" in
/// quotes, its clauses joined by ", then ": each gives the list or lines in quotes; `None`
/// when it is not one sentence, a clause is neither, there is no list or no closing line, the
/// lines are over [`MAX_TEMPLATE_LINES`], or a quoted line stands after the sentence (one it
/// may add). A bare value (`N`) becomes a placeholder (`<N>`), so the model fills it as any
/// other. What it cannot read whole gives no template: a wrong one would refuse the answer.
pub(super) fn of_sentence(prompt: &str, artifact: &str) -> Option<AnswerLines> {
    let heading_re = HEADING.as_ref()?;
    let text = prompt.replace("\r\n", "\n");
    let mut found = None;
    for (start, end) in sentences(&text) {
        let sentence = &text[start..end];
        for named_end in path_mentions(sentence, artifact) {
            if let Some(caps) = heading_re.captures(&sentence[named_end..]) {
                if found.is_some() {
                    return None;
                }
                let rest_at = named_end + caps.get(0)?.end();
                found = Some((caps[1].to_string(), start + rest_at, end));
            }
        }
    }
    let (heading, rest_at, end) = found?;
    // A quoted line after the sentence may be one more the deliverable is to hold.
    let after = &text[end..];
    if QUOTED
        .as_ref()?
        .captures_iter(after)
        .any(|q| QUOTED_LINE.as_ref().is_some_and(|l| l.is_match(&q[1])))
    {
        return None;
    }
    let rest = &text[rest_at..end];
    if !rest.starts_with(',') || heading.contains(['"', '\\']) {
        return None;
    }
    let (mut opening, mut closing, mut list) = (Vec::new(), Vec::new(), false);
    for clause in rest.split(", then ") {
        let clause = clause.trim_start_matches([',', ' ']).trim_end();
        if clause.is_empty() {
            continue;
        }
        if LIST_CLAUSE.as_ref()?.is_match(clause) {
            let items = quoted_in(clause)?;
            if list || items.len() != 1 || !items[0].starts_with("- ") {
                return None;
            }
            list = true;
            continue;
        }
        if !LINES_CLAUSE.as_ref()?.is_match(clause) {
            return None;
        }
        let start = clause.find('\'')?;
        for quoted in quoted_in(&clause[start..])? {
            let line = template_line(&quoted)?;
            if list {
                closing.push(line);
            } else {
                opening.push(line);
            }
        }
    }
    let fits = list && !closing.is_empty() && opening.len() + closing.len() <= MAX_TEMPLATE_LINES;
    fits.then_some(AnswerLines {
        heading: Some(heading),
        opening,
        list,
        lines: closing,
    })
}

/// The quoted strings of `clause`, `None` when anything but [`GLUE`] stands between or after
/// them.
fn quoted_in(clause: &str) -> Option<Vec<String>> {
    let (quoted, glue) = (QUOTED.as_ref()?, GLUE.as_ref()?);
    let mut out = Vec::new();
    let mut last = None;
    for q in quoted.captures_iter(clause) {
        let whole = q.get(0)?;
        if let Some(last) = last {
            if !glue.is_match(&clause[last..whole.start()]) {
                return None;
            }
        }
        out.push(q[1].to_string());
        last = Some(whole.end());
    }
    glue.is_match(&clause[last?..]).then_some(out)
}

/// The sentences of `text` as byte ranges: each ends at a full stop outside quotes that a
/// blank and a capital letter, or the end of the text, follow (`i.e. over` goes on; `1.2`
/// too). An apostrophe between two letters (`service's`) is no quote mark.
fn sentences(text: &str) -> Vec<(usize, usize)> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, &(at, c)) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| chars[j].1);
        let next = chars.get(i + 1).map(|&(_, c)| c);
        match c {
            '\'' if !(prev.is_some_and(char::is_alphanumeric)
                && next.is_some_and(char::is_alphanumeric)) =>
            {
                quoted = !quoted
            }
            '.' if !quoted => {
                let mut rest = chars[i + 1..].iter().map(|&(_, c)| c);
                let ends = match rest.next() {
                    None => true,
                    Some(c) if c.is_whitespace() => rest
                        .find(|c| !c.is_whitespace())
                        .is_none_or(char::is_uppercase),
                    Some(_) => false,
                };
                if ends {
                    out.push((start, at));
                    start = at + 1;
                }
            }
            _ => {}
        }
    }
    if start < text.len() {
        out.push((start, text.len()));
    }
    out
}

/// A quoted line as a template line: its label, `: `, and its value as a placeholder where it
/// has none; `None` for text that is not a label and a value, holds `"` or `\`, or a `<` or `>`
/// outside a placeholder (`size < 1 MB` would be held as a label and a value to fill).
fn template_line(quoted: &str) -> Option<String> {
    let caps = QUOTED_LINE.as_ref()?.captures(quoted)?;
    let (label, value) = (&caps[1], &caps[2]);
    let bare = PLACEHOLDER.as_ref()?.replace_all(value, "");
    if value.contains(['"', '\\']) || bare.contains(['<', '>']) {
        return None;
    }
    Some(if value.contains('<') {
        format!("{label}: {value}")
    } else {
        format!("{label}: <{value}>")
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::desk_task;
    use super::*;

    const A: &str = "out/a.md";

    /// The template of `prompt` for `artifact`, and whether it leaves `text` writable: no
    /// template (failing closed) leaves everything writable.
    fn takes(prompt: &str, artifact: &str, text: &str) -> (Option<AnswerLines>, bool) {
        let t = of_sentence(prompt, artifact);
        let ok = t
            .as_ref()
            .is_none_or(|t| Regex::new(&t.pattern(None)).unwrap().is_match(text));
        (t, ok)
    }

    #[track_caller]
    fn allows(prompt: &str, artifact: &str, text: &str) {
        let (t, ok) = takes(prompt, artifact, text);
        assert!(
            ok,
            "prompt: {prompt:?}\ntemplate: {t:?}\nrefuses a deliverable the task allows: {text:?}"
        );
    }

    fn re(t: &AnswerLines) -> Regex {
        Regex::new(&t.pattern(None)).unwrap()
    }

    // ---- Claim 1: fails closed ----

    // Attacks an apostrophe in the list clause: it flips the quote parity, so the sentence
    // runs past its full stop and a quoted line of the next sentence joins the template.
    #[test]
    fn an_apostrophe_does_not_pull_in_the_next_sentence() {
        let p = "Write out/a.md with the heading '# A', one list item per service's folder as '- <service>: <N>', then the line 'Total: N'. Leave out the line 'Note: x'.";
        allows(p, A, "# A\n- api: 2\nTotal: 2\n");
    }

    // Attacks an apostrophe (`each service's files`) where nothing quoted follows.
    #[test]
    fn an_apostrophe_in_prose_fails_closed_or_is_right() {
        let p = "Write out/a.md with the heading '# A', one list item per service (each service's files counted once) as '- <service>: <N>', then the line 'Total: N'. Do not change any file. Read out/a.md back, then call finish.";
        allows(p, A, "# A\n- api: 2\nTotal: 2\n");
    }

    // Attacks a quoted word that is not a line ('N/A').
    #[test]
    fn a_quoted_word_that_is_not_a_line_fails_closed() {
        let p = "Write out/a.md with the heading '# A', one list item per file as '- <path>', then the line 'Largest: <path>' (write 'N/A' if there are none).";
        assert_eq!(of_sentence(p, A), None);
    }

    // Attacks an example in parentheses: 'Total: 12' is an example, not a second line.
    #[test]
    fn an_example_in_quotes_is_not_a_line() {
        let p = "Write out/a.md with the heading '# A', one list item per file as '- <path>', then the line 'Total: N' (for example 'Total: 12').";
        allows(p, A, "# A\n- a.txt\nTotal: 12\n");
    }

    // Attacks an alternative: the line is one of two, not both.
    #[test]
    fn an_alternative_line_is_not_a_second_line() {
        let p = "Write out/a.md with the heading '# A', one list item per file as '- <path>', then the line 'Largest: <path>' or 'Largest: none' if the folder is empty.";
        allows(p, A, "# A\n- a.txt\nLargest: none\n");
    }

    // Attacks a negation in the clause: the quoted line is forbidden, not required.
    #[test]
    fn a_forbidden_line_is_not_required() {
        let p = "Write out/a.md with the heading '# A', one list item per file as '- <path>', then the line 'Total: N' (not 'Sum: N').";
        allows(p, A, "# A\n- a.txt\nTotal: 1\n");
        let semi = "Write out/a.md with the heading '# A', one list item per file as '- <path>', then the line 'Total: N'; do not add the line 'Note: x'.";
        allows(semi, A, "# A\n- a.txt\nTotal: 1\n");
    }

    // Attacks a conditional line: it may be left out.
    #[test]
    fn a_conditional_line_is_not_required() {
        let p = "Write out/a.md with the heading '# A', one list item per file as '- <path>', then the line 'Total: N' and, only if a file was skipped, the line 'Skipped: N'.";
        allows(p, A, "# A\n- a.txt\nTotal: 1\n");
    }

    // Attacks prose after the quoted lines of a clause: it asks for more text.
    #[test]
    fn prose_after_the_quoted_lines_is_not_dropped() {
        let p = "Write out/a.md with the heading '# A', one list item per file as '- <path>', then the line 'Total: N' and a one-sentence note on what you skipped.";
        allows(
            p,
            A,
            "# A\n- a.txt\nTotal: 1\nSkipped the vendored files.\n",
        );
    }

    // Attacks a quoted line in the list clause: it is a line after the list.
    #[test]
    fn a_line_inside_the_list_clause_is_not_dropped() {
        let p = "Write out/a.md with the heading '# A', one list item per file as '- <path>' followed by the line 'Subtotal: N', then the line 'Total: N'.";
        allows(p, A, "# A\n- a.txt\nSubtotal: 1\nTotal: 1\n");
    }

    // Attacks a full stop inside a quoted line ('Version: 1.2').
    #[test]
    fn a_full_stop_inside_a_quoted_line_does_not_end_the_sentence() {
        let p = "Write out/a.md with the heading '# A', one list item per file as '- <path>', then the lines 'Version: 1.2' and 'Total: N'. Do not change any file.";
        let t = of_sentence(p, A).unwrap();
        assert_eq!(t.lines, ["Version: <1.2>", "Total: <N>"]);
        assert!(re(&t).is_match("# A\n- a.txt\nVersion: 1.2\nTotal: 1\n"));
    }

    // Attacks an abbreviation's full stop (`i.e. `) inside the sentence.
    #[test]
    fn an_abbreviation_does_not_end_the_sentence() {
        let p = "Write out/a.md with the heading '# A', one list item per file as '- <path>', then the lines 'Total: N' (i.e. over all folders) and 'Largest: <path>'.";
        allows(p, A, "# A\n- a.txt\nTotal: 1\nLargest: a.txt\n");
    }

    // Attacks ", then " inside a quoted line.
    #[test]
    fn then_inside_a_quoted_line_fails_closed_or_is_right() {
        let p = "Write out/a.md with the heading '# A', one list item per file as '- <path>', then the line 'Order: build, then test'.";
        allows(p, A, "# A\n- a.txt\nOrder: build, then test\n");
    }

    // Attacks a nested clause holding ", then ".
    #[test]
    fn a_nested_then_fails_closed() {
        let p = "Write out/a.md with the heading '# A', one list item per file as '- <path>', then the lines 'TOML files: N' (counted over services/, then summed) and 'Most: <service>'.";
        allows(p, A, "# A\n- a.txt\nTOML files: 1\nMost: api\n");
    }

    // Attacks "the lines" in prose before the heading.
    #[test]
    fn the_lines_in_prose_before_the_heading_are_not_read() {
        let p = "Count the lines of each file, then write out/a.md with the heading '# A', one list item per file as '- <path>: <N>', then the line 'Total: N'.";
        let t = of_sentence(p, A).unwrap();
        assert_eq!(t.lines, ["Total: <N>"]);
        assert!(t.opening.is_empty());
    }

    // Attacks a heading of another sentence on the deliverable's line.
    #[test]
    fn the_heading_of_another_sentence_is_not_the_deliverable_s() {
        let p = "notes/old.md had the heading '# Old', one list item per file, then the line 'Old: N'. Write out/a.md with the heading '# A', one list item per file as '- <path>', then the line 'Count: N'.";
        allows(p, A, "# A\n- a.txt\nCount: 1\n");
    }

    // Attacks two deliverables on one line: the template of the other one.
    #[test]
    fn another_deliverable_s_template_is_not_this_one_s() {
        let p = "Write out/summary.md with one line per file, and write out/report.md with the heading '# Report', one list item per file as '- <path>', then the line 'Total: N'.";
        allows(p, "out/summary.md", "a.txt: 3 lines\nb.txt: 4 lines\n");
    }

    // Attacks a second sentence naming the deliverable that adds a line.
    #[test]
    fn a_second_sentence_adding_a_line_is_not_ignored() {
        let p = "Write out/a.md with the heading '# A', one list item per file as '- <path>', then the line 'Total: N'. End out/a.md with the line 'Checked: yes'.";
        allows(p, A, "# A\n- a.txt\nTotal: 1\nChecked: yes\n");
    }

    // Attacks a sentence wrapped over two lines of the prompt.
    #[test]
    fn a_wrapped_sentence_is_not_cut_at_the_line_break() {
        let p = "Write out/a.md with the heading '# A', one list item per file as '- <path>', then the lines 'Total: N'\nand 'Largest: <path>'. Do not change any file.";
        allows(p, A, "# A\n- a.txt\nTotal: 1\nLargest: a.txt\n");
    }

    // Attacks a CRLF prompt: the same template as with LF.
    #[test]
    fn a_crlf_prompt_reads_as_lf() {
        let p = "Find the files.\nWrite out/a.md with the heading '# A', one list item per file as '- <path>', then the lines 'Total: N' and 'Largest: <path>'.\nThen call finish.\n";
        let lf = of_sentence(p, A).unwrap();
        assert_eq!(of_sentence(&p.replace('\n', "\r\n"), A), Some(lf));
    }

    // Attacks a heading with regex metacharacters: escaped, literal.
    #[test]
    fn a_heading_s_metacharacters_are_literal() {
        let h = "# C++ (v2.0) [beta] $x ^y *z? {1} | . \\d";
        let p = format!("Write out/a.md with the heading '{h}', one list item per file as '- <path>', then the line 'Total: N'.");
        // A backslash in the heading: no template.
        assert_eq!(of_sentence(&p, A), None);
        let h = "# C++ (v2.0) [beta] $x ^y *z? {1} | .";
        let p = p.replace("# C++ (v2.0) [beta] $x ^y *z? {1} | . \\d", h);
        let t = of_sentence(&p, A).unwrap();
        let re = re(&t);
        assert!(re.is_match(&format!("{h}\n- a\nTotal: 1")));
        assert!(!re.is_match("# C+ (v2x0) beta x y z 1 | x\n- a\nTotal: 1"));
    }

    // Attacks a heading with quote marks: a `"` gives none, an apostrophe cuts the heading.
    #[test]
    fn a_heading_with_quotes_fails_closed() {
        let base = "Write out/a.md with the heading 'H', one list item per file as '- <path>', then the line 'Total: N'.";
        for h in ["# \"Quoted\"", "# Bob's files", "# Rock 'n' roll"] {
            let p = base.replace("'H'", &format!("'{h}'"));
            allows(&p, A, &format!("{h}\n- a\nTotal: 1\n"));
        }
    }

    // Attacks a value holding `<` that is no placeholder ('Filter: size < 1 MB').
    #[test]
    fn a_value_with_a_bare_angle_bracket_fails_closed_or_is_right() {
        let p = "Write out/a.md with the heading '# A', one list item per file as '- <path>', then the line 'Filter: size < 1 MB'.";
        allows(p, A, "# A\n- a.txt\nFilter: size < 1 MB\n");
    }

    // Attacks claim 2 with the same value: the pattern must not take a line holding `<`.
    #[test]
    fn a_value_with_a_bare_angle_bracket_takes_no_angle_bracket() {
        let p = "Write out/a.md with the heading '# A', one list item per file as '- <path>', then the line 'Filter: size < 1 MB'.";
        if let Some(t) = of_sentence(p, A) {
            assert!(
                !re(&t).is_match("# A\n- a.txt\nFilter: size < 1 MBx\n"),
                "{t:?}"
            );
        }
    }

    // ---- Claim 2: the pattern compiles, takes the gold, refuses the rest ----

    // Attacks the desk golds and near misses: `<`/`>` after a label, a missing closing
    // line, an extra line at the end.
    #[test]
    fn the_desk_golds_are_taken_and_near_misses_refused() {
        for (task, bad) in [
            (
                "explore-config-formats",
                vec![
                    ("TOML files: 3", "TOML files: <3>"),
                    ("Most config files: web", "Most config files: <service>"),
                    ("Most config files: web", "Most config files: web>"),
                    ("JSON files: 2", "JSON files: 2 <"),
                    ("- api: 2 config files", "- <service>: 2 config files"),
                    ("Most config files: web\n", ""),
                    ("JSON files: 2\n", ""),
                    ("web\n", "web\nNote: done\n"),
                    ("web\n", "web\n- extra\n"),
                    ("web\n", "web\n\nMost config files: web\n"),
                    (
                        "TOML files: 3\nYAML files: 3",
                        "YAML files: 3\nTOML files: 3",
                    ),
                ],
            ),
            (
                "related-code-callers",
                vec![
                    ("Defined in: src/invoice/parse.js", "Defined in: <path>"),
                    ("Defined in: src/invoice/parse.js", "Defined in: src/<x>.js"),
                    ("Callers: 4", "Callers: <N>"),
                    ("Callers: 4", "Callers: 4>"),
                    ("Callers: 4\n", ""),
                    ("Callers: 4\n", "Callers: 4\nNote: done\n"),
                    ("Callers: 4\n", "Callers: 4\nCallers: 4\n"),
                ],
            ),
        ] {
            let (prompt, artifact, gold) = desk_task(task);
            let t = of_sentence(&prompt, &artifact).unwrap();
            let re = re(&t);
            assert!(re.is_match(&gold), "{task}");
            assert!(re.is_match(gold.trim_end()), "{task}: no final newline");
            for (from, to) in bad {
                assert!(gold.contains(from), "{task}: {from}");
                let text = gold.replacen(from, to, 1);
                assert!(!re.is_match(&text), "{task}: takes {text:?}");
            }
        }
    }

    // ---- Claim 3: no panic ----

    // Attacks degenerate inputs: empty, an empty heading, unicode at every boundary, very
    // long lines, an empty artifact.
    #[test]
    fn odd_inputs_do_not_panic() {
        let long = "x".repeat(200_000);
        let inputs = [
            String::new(),
            "heading ''".to_string(),
            "out/a.md heading ''".to_string(),
            "Write out/a.md with the heading ''.".to_string(),
            "Write out/a.md with the heading '".to_string(),
            "Write out/a.md with the heading 'é'".to_string(),
            "Write out/a.md with the heading 'é'.".to_string(),
            "Write out/a.md with the heading 'é', then".to_string(),
            "Write out/a.md with the heading '# Ünï ✓', one list item per fïlé as '- <päth>', then the line 'Tötal: N'。".to_string(),
            "Write out/a.md with the heading '# 日本', one list item per 文件 as '- <路径>', then the line 'Total: 数'.".to_string(),
            "Write out/a.md with the heading '🦀', one list item per file, then the line 'Total: 🦀'.🦀".to_string(),
            format!("Write out/a.md with the heading '{}', one list item per file, then the line 'Total: N'.", "h".repeat(80)),
            format!("Write out/a.md with the heading '{}', one list item per file, then the line 'Total: N'.", "h".repeat(81)),
            format!("Write out/a.md with the heading '# A', one list item per file, then the line 'Total: {long}'."),
            format!("Write out/a.md {long} with the heading '# A', one list item per {long}, then the line 'Total: N'."),
            format!("Write out/a.md with the heading '# A'{}", ", then the line 'T: N'".repeat(5_000)),
            "''''''''''''out/a.md heading '''''''''".to_string(),
            "out/a.md heading 'x', then , then , then ".to_string(),
            "out/a.md heading 'x'\r\r\n, one list item per x, then the line 'A: N'\r".to_string(),
        ];
        for p in &inputs {
            for artifact in [A, "", "é", "out/a.md'"] {
                if let Some(t) = of_sentence(p, artifact) {
                    Regex::new(&t.pattern(None)).unwrap();
                    assert!(t.list && !t.lines.is_empty());
                }
            }
        }
    }

    // Attacks random joins of the parser's own words: no panic, every pattern compiles.
    #[test]
    fn random_sentences_do_not_panic_and_their_patterns_compile() {
        const PARTS: &[&str] = &[
            "Write ",
            "out/a.md",
            " with the heading ",
            "'",
            "# A",
            ", then ",
            "the line ",
            "the lines ",
            "the two lines ",
            "'Total: N'",
            "'Most: <s>'",
            " and ",
            ", ",
            "one list item per file",
            " as '- <path>'",
            "each file as '- <p>'",
            ". ",
            ".",
            "é",
            "🦀",
            "\r\n",
            "\n",
            "\r",
            "<",
            ">",
            "\"",
            "\\",
            "'Q: a\"b'",
            "'R: \\d'",
            " (i.e. x)",
            "service's",
            "'V: 1.2'",
            "'W: <a> <b>'",
            "'X: a < b'",
            "''",
        ];
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut with = 0;
        const BASE: &str = "Write out/a.md with the heading '# A', then the line 'Defined in: <p>', then each file as '- <path>', then the lines 'Total: N' and 'Most: <s>'. Then call finish.";
        for _ in 0..1_500 {
            // The base sentence with one to three parts put in at random places.
            let mut p = BASE.to_string();
            for _ in 0..1 + next() % 3 {
                let mut at = (next() % (p.len() as u64 + 1)) as usize;
                while !p.is_char_boundary(at) {
                    at -= 1;
                }
                p.insert_str(at, PARTS[(next() % PARTS.len() as u64) as usize]);
            }
            if let Some(t) = of_sentence(&p, A) {
                with += 1;
                let re = Regex::new(&t.pattern(None)).unwrap();
                assert!(t.list && !t.lines.is_empty(), "{p:?}");
                assert!(t.opening.len() + t.lines.len() <= MAX_TEMPLATE_LINES);
                // No filled line takes `<`.
                let mut text = format!("{}\n- a\n", t.heading.as_deref().unwrap());
                for l in t.opening.iter().chain(&t.lines) {
                    let label = &l[..l.find(": ").unwrap() + 2];
                    text.push_str(&format!("{label}<x>\n"));
                }
                assert!(!re.is_match(&text), "{p:?} takes {text:?}");
            }
        }
        assert!(with > 0);
    }
}
