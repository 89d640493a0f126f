//! A small RFC 4180 CSV reader: enough for frozen inputs (quoted fields, doubled quotes, CRLF,
//! a UTF-8 BOM) without another dependency.

/// Parses CSV text into rows of fields. Fully empty lines are skipped.
pub(crate) fn parse_csv(text: &str) -> Result<Vec<Vec<String>>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut rows = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut in_quotes = false;
    let mut chars = text.chars().peekable();
    let mut line = 1usize;
    let mut field_started_quoted = false;
    while let Some(c) = chars.next() {
        if in_quotes {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => in_quotes = false,
                '\n' => {
                    line += 1;
                    field.push(c);
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() && !field_started_quoted => {
                in_quotes = true;
                field_started_quoted = true;
            }
            ',' => {
                row.push(std::mem::take(&mut field));
                field_started_quoted = false;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                row.push(std::mem::take(&mut field));
                field_started_quoted = false;
                if !(row.len() == 1 && row[0].is_empty()) {
                    rows.push(std::mem::take(&mut row));
                } else {
                    row.clear();
                }
                line += 1;
            }
            _ => field.push(c),
        }
    }
    if in_quotes {
        return Err(format!("unterminated quoted field (line {line})"));
    }
    if !field.is_empty() || !row.is_empty() || field_started_quoted {
        row.push(field);
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_and_crlf() {
        let rows =
            parse_csv("\u{feff}a,b\r\n\"x, y\",\"say \"\"hi\"\"\"\r\n\n1,2").unwrap_or_default();
        assert_eq!(
            rows,
            vec![
                vec!["a".to_string(), "b".to_string()],
                vec!["x, y".to_string(), "say \"hi\"".to_string()],
                vec!["1".to_string(), "2".to_string()],
            ]
        );
        assert!(parse_csv("\"open").is_err());
    }
}
