//! Workspace-relative path normalisation shared by contracts, checks, traces and finish rules,
//! so that `./out/summary.md` and `out//summary.md` name the same deliverable.

/// Normalises a workspace-relative path: `/`-separated, no empty or `.` parts. Refuses absolute
/// paths, `..`, backslashes and the empty path, so a contract can never point outside the
/// workspace.
pub fn normalize_rel(path: &str) -> Result<String, String> {
    if path.starts_with('/') {
        return Err("absolute paths are not allowed".to_string());
    }
    if path.contains('\\') {
        return Err("use `/` as the separator, not `\\`".to_string());
    }
    if path.contains('\0') {
        return Err("NUL bytes are not allowed".to_string());
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("`..` is not allowed".to_string()),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err("the path is empty".to_string());
    }
    Ok(parts.join("/"))
}

/// True when both paths normalise to the same workspace path.
pub fn same_path(a: &str, b: &str) -> bool {
    match (normalize_rel(a), normalize_rel(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_and_refuses() {
        assert_eq!(normalize_rel("./out//a.md").as_deref(), Ok("out/a.md"));
        assert!(normalize_rel("/etc/passwd").is_err());
        assert!(normalize_rel("a/../b").is_err());
        assert!(normalize_rel("./").is_err());
        assert!(same_path("out/a.md", "./out/a.md"));
        assert!(!same_path("out/a.md", "out/b.md"));
    }
}
