//! BFCL function names such as `math.factorial` are not valid tool names (OpenAI-compatible
//! servers and Rein's own tools use `[A-Za-z0-9_-]{1,64}`). Each question gets a table that maps
//! every offered name to a valid one and back: the mapping is a lookup, not a rewrite rule, so
//! it stays reversible even when two names would sanitise alike (`a.b` and `a_b`).

use std::collections::BTreeMap;

/// The action by which the model says no offered function fits the request.
pub const DECLINE: &str = "decline";
/// Longest tool name.
pub const MAX_TOOL_NAME: usize = 64;

/// Offered names ↔ tool names, for one question.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameMap {
    to_tool: BTreeMap<String, String>,
    to_original: BTreeMap<String, String>,
}

/// True for a valid tool name.
pub fn valid_tool_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_TOOL_NAME
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn sanitise(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_TOOL_NAME - 4)
        .collect();
    if s.is_empty() {
        "f".to_string()
    } else {
        s
    }
}

impl NameMap {
    /// A table for these names, in order. A name already valid keeps its spelling unless
    /// taken; [`DECLINE`] is never given to an offered function.
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> NameMap {
        let mut map = NameMap::default();
        let names: Vec<&str> = names.into_iter().collect();
        // Valid names first, so `a_b` keeps its name and `a.b` is the one renamed.
        let (valid, other): (Vec<&str>, Vec<&str>) = names
            .iter()
            .partition(|n| valid_tool_name(n) && **n != DECLINE);
        for name in valid.into_iter().chain(other) {
            if map.to_tool.contains_key(name) {
                continue;
            }
            let base = sanitise(name);
            let mut tool = base.clone();
            let mut n = 2;
            while tool == DECLINE || map.to_original.contains_key(&tool) {
                tool = format!("{base}_{n}");
                n += 1;
            }
            map.to_tool.insert(name.to_string(), tool.clone());
            map.to_original.insert(tool, name.to_string());
        }
        map
    }

    /// The tool name of an offered function.
    pub fn tool(&self, original: &str) -> Option<&str> {
        self.to_tool.get(original).map(String::as_str)
    }

    /// The offered function a tool name stands for.
    pub fn original(&self, tool: &str) -> Option<&str> {
        self.to_original.get(tool).map(String::as_str)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn dotted_names_map_to_valid_tools_and_back() {
        let m = NameMap::new(["math.factorial", "math_factorial", "decline", "a b"]);
        assert_eq!(m.tool("math_factorial"), Some("math_factorial"));
        let dotted = m.tool("math.factorial").unwrap();
        assert_ne!(dotted, "math_factorial");
        assert!(valid_tool_name(dotted));
        assert_eq!(m.original(dotted), Some("math.factorial"));
        let d = m.tool("decline").unwrap();
        assert_ne!(d, DECLINE);
        assert_eq!(m.original(d), Some("decline"));
        assert_eq!(m.original(DECLINE), None);
        assert_eq!(m.original(m.tool("a b").unwrap()), Some("a b"));
        let long = "x.".repeat(80);
        let m = NameMap::new([long.as_str()]);
        assert!(valid_tool_name(m.tool(&long).unwrap()));
    }
}
