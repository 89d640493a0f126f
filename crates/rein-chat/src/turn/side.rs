//! The side-by-side view of a unified diff: old lines left, new lines right, a removed block
//! paired line by line with the added block that follows it.

use rein_protocol::chat::SideBySideRow;

/// Rows for a unified diff as `Proposal::new` writes it. Lines outside hunks (headers, the
/// binary-file description) are skipped; the exact diff is always shown beside this view.
pub fn side_by_side(diff: &str) -> Vec<SideBySideRow> {
    let mut rows = Vec::new();
    let (mut old_no, mut new_no) = (0u64, 0u64);
    let mut removed: Vec<(u64, String)> = Vec::new();
    let mut added: Vec<(u64, String)> = Vec::new();
    let mut in_hunk = false;
    for line in diff.lines() {
        if let Some(header) = line.strip_prefix("@@ ") {
            flush(&mut rows, &mut removed, &mut added);
            if in_hunk {
                rows.push(row("gap", None, None, None, None));
            }
            in_hunk = true;
            let (old_start, new_start) = hunk_starts(header);
            old_no = old_start;
            new_no = new_start;
            continue;
        }
        if !in_hunk {
            continue;
        }
        if let Some(text) = line.strip_prefix('-') {
            removed.push((old_no, text.to_string()));
            old_no += 1;
        } else if let Some(text) = line.strip_prefix('+') {
            added.push((new_no, text.to_string()));
            new_no += 1;
        } else if let Some(text) = line.strip_prefix(' ') {
            flush(&mut rows, &mut removed, &mut added);
            rows.push(row(
                "same",
                Some(old_no),
                Some(text.to_string()),
                Some(new_no),
                Some(text.to_string()),
            ));
            old_no += 1;
            new_no += 1;
        }
        // "\ No newline at end of file" and anything else: not a line of either side.
    }
    flush(&mut rows, &mut removed, &mut added);
    rows
}

fn row(
    kind: &str,
    old_line: Option<u64>,
    old: Option<String>,
    new_line: Option<u64>,
    new: Option<String>,
) -> SideBySideRow {
    SideBySideRow {
        kind: kind.to_string(),
        old_line,
        old,
        new_line,
        new,
    }
}

fn flush(
    rows: &mut Vec<SideBySideRow>,
    removed: &mut Vec<(u64, String)>,
    added: &mut Vec<(u64, String)>,
) {
    let n = removed.len().max(added.len());
    let mut old = removed.drain(..);
    let mut new = added.drain(..);
    for _ in 0..n {
        match (old.next(), new.next()) {
            (Some((a, x)), Some((b, y))) => {
                rows.push(row("changed", Some(a), Some(x), Some(b), Some(y)))
            }
            (Some((a, x)), None) => rows.push(row("removed", Some(a), Some(x), None, None)),
            (None, Some((b, y))) => rows.push(row("added", None, None, Some(b), Some(y))),
            (None, None) => {}
        }
    }
}

/// `-a,b +c,d @@` → (a, c); a start of 0 (an empty side) counts from 1.
fn hunk_starts(header: &str) -> (u64, u64) {
    let mut old = 1;
    let mut new = 1;
    for part in header.split_whitespace() {
        let start = |p: &str| {
            p.split(',')
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .map_or(1, |n| n.max(1))
        };
        if let Some(p) = part.strip_prefix('-') {
            old = start(p);
        } else if let Some(p) = part.strip_prefix('+') {
            new = start(p);
        }
    }
    (old, new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_removed_and_added_lines_and_numbers_them() {
        let diff = "--- a/x\n+++ b/x\n@@ -1,3 +1,4 @@\n one\n-two\n+TWO\n+2b\n three\n";
        let rows = side_by_side(diff);
        let kinds: Vec<&str> = rows.iter().map(|r| r.kind.as_str()).collect();
        assert_eq!(kinds, ["same", "changed", "added", "same"]);
        assert_eq!(rows[1].old.as_deref(), Some("two"));
        assert_eq!(rows[1].new.as_deref(), Some("TWO"));
        assert_eq!(
            (rows[2].new_line, rows[3].old_line, rows[3].new_line),
            (Some(3), Some(3), Some(4))
        );
    }

    #[test]
    fn a_new_file_is_all_added() {
        let rows = side_by_side("--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+a\n+b\n");
        assert!(rows.iter().all(|r| r.kind == "added" && r.old.is_none()));
        assert_eq!(rows.len(), 2);
    }
}
