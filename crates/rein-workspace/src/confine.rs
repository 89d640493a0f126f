//! The lexical half of confinement: the rules a model-supplied path must pass before anything
//! touches the filesystem, and [`RelPath`], the only path type the rest of Rein uses for
//! workspace files.
//!
//! These rules are deliberately stricter than Linux needs. A path that would mean something
//! different on another system (a Windows device name, a trailing dot that Windows strips, a
//! backslash) is refused everywhere, so a workspace behaves the same wherever it is copied and a
//! model cannot smuggle meaning through a spelling. The filesystem half (links, canonical form)
//! lives in [`crate::Workspace::resolve`] and in the beneath-the-root opening of every file.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::ConfinementError;

/// Longest path accepted, in bytes (Linux's PATH_MAX).
pub const MAX_PATH_BYTES: usize = 4096;
/// Longest single component accepted, in bytes (NAME_MAX on common Linux filesystems).
pub const MAX_COMPONENT_BYTES: usize = 255;
/// Deepest path accepted, in components: deeper trees are almost always a loop or an attack.
pub const MAX_DEPTH: usize = 64;
/// Prefix of Rein's own temporary files. Files named so are never shown by listing or search
/// tools and may not be named by a model, so stale temps from a crash are always recognisable.
pub const TEMP_PREFIX: &str = ".rein-tmp-";

/// Longest temp file name Rein makes, in bytes: well within NAME_MAX whatever the target.
const MAX_TEMP_NAME_BYTES: usize = 200;

/// Windows device names: a file called so (with any extension) opens a device there.
const DEVICE_NAMES: [&str; 4] = ["CON", "PRN", "AUX", "NUL"];

/// A path relative to a workspace root that passed the lexical confinement rules.
///
/// It is normalised (`/`-separated, no `.` or empty components, no trailing slash); the empty
/// path is the workspace root and displays as `.`. A `RelPath` is a *name*, not a capability:
/// every access still goes through [`crate::Workspace`], which opens it beneath the root without
/// following links. There is deliberately no way to turn it into an absolute [`std::path::Path`].
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelPath(String);

impl RelPath {
    /// The workspace root itself.
    pub fn root() -> RelPath {
        RelPath(String::new())
    }

    /// Checks `path` against the lexical rules only (no filesystem access). Use
    /// [`crate::Workspace::resolve`] for paths into a real folder; this is for in-memory
    /// sandboxes and for re-reading names stored earlier (for example in a journal).
    pub fn parse(path: &str) -> Result<RelPath, ConfinementError> {
        check_whole(path)?;
        let mut parts: Vec<&str> = Vec::new();
        for component in path.split('/') {
            if component.is_empty() || component == "." {
                continue;
            }
            check_component(component)?;
            check_in_parent(parts.last().copied(), component)?;
            parts.push(component);
        }
        if parts.len() > MAX_DEPTH {
            return Err(ConfinementError::TooDeep {
                depth: parts.len(),
                max: MAX_DEPTH,
            });
        }
        Ok(RelPath(parts.join("/")))
    }

    /// Builds a path from a directory entry name read from disk. Entries whose names break the
    /// rules (or are Rein temp files) cannot be addressed and are skipped by callers.
    pub fn join(&self, name: &str) -> Result<RelPath, ConfinementError> {
        if name.contains('/') {
            return Err(ConfinementError::ForbiddenCharacter {
                component: name.to_string(),
                character: '/',
            });
        }
        check_component(name)?;
        check_in_parent(self.file_name(), name)?;
        let joined = if self.0.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.0)
        };
        if joined.len() > MAX_PATH_BYTES {
            return Err(ConfinementError::TooLong {
                bytes: joined.len(),
                max: MAX_PATH_BYTES,
            });
        }
        if self.depth() + 1 > MAX_DEPTH {
            return Err(ConfinementError::TooDeep {
                depth: self.depth() + 1,
                max: MAX_DEPTH,
            });
        }
        Ok(RelPath(joined))
    }

    /// A sibling temp file name in the same directory; only this crate creates these.
    ///
    /// It stays within [`MAX_TEMP_NAME_BYTES`] *bytes* (NAME_MAX counts bytes, and a name of
    /// 80 "日" is 240 of them): the target's name is cut on a character boundary, never the
    /// prefix or the unique part, so two temps of one target never collide.
    pub(crate) fn temp_sibling(&self, unique: &str) -> RelPath {
        let target = self.file_name().unwrap_or("root");
        let budget = MAX_TEMP_NAME_BYTES.saturating_sub(TEMP_PREFIX.len() + 1 + unique.len());
        let mut cut = budget.min(target.len());
        while !target.is_char_boundary(cut) {
            cut -= 1;
        }
        let name = format!("{TEMP_PREFIX}{}-{unique}", &target[..cut]);
        match self.parent() {
            Some(parent) if !parent.is_root() => RelPath(format!("{}/{name}", parent.0)),
            _ => RelPath(name),
        }
    }

    /// Wraps an already-validated string, for names produced inside this crate.
    pub(crate) fn from_trusted(s: String) -> RelPath {
        RelPath(s)
    }

    /// The normalised text, `""` for the root. For display and storage, not for opening.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True for the workspace root.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The components from the root down.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/').filter(|c| !c.is_empty())
    }

    /// Number of components (0 for the root).
    pub fn depth(&self) -> usize {
        self.components().count()
    }

    /// The last component, `None` for the root.
    pub fn file_name(&self) -> Option<&str> {
        if self.0.is_empty() {
            None
        } else {
            self.0.rsplit('/').next()
        }
    }

    /// The containing directory, `None` for the root.
    pub fn parent(&self) -> Option<RelPath> {
        if self.0.is_empty() {
            return None;
        }
        Some(match self.0.rfind('/') {
            Some(i) => RelPath(self.0[..i].to_string()),
            None => RelPath::root(),
        })
    }

    /// True when `self` is `other` or lies inside it.
    pub fn starts_with(&self, other: &RelPath) -> bool {
        other.is_root()
            || self.0 == other.0
            || (self.0.starts_with(&other.0) && self.0.as_bytes().get(other.0.len()) == Some(&b'/'))
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str(".")
        } else {
            f.write_str(&self.0)
        }
    }
}

impl fmt::Debug for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RelPath({:?})", self.0)
    }
}

impl Serialize for RelPath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

/// Deserialising re-applies the lexical rules, so a stored name can never become a path that
/// [`RelPath::parse`] would refuse.
impl<'de> Deserialize<'de> for RelPath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        RelPath::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Rules about the path as a whole.
fn check_whole(path: &str) -> Result<(), ConfinementError> {
    if path.trim().is_empty() {
        return Err(ConfinementError::Empty);
    }
    if path.contains('\0') {
        return Err(ConfinementError::Nul);
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(ConfinementError::TooLong {
            bytes: path.len(),
            max: MAX_PATH_BYTES,
        });
    }
    if path.starts_with('/') || path.starts_with('\\') || has_drive_prefix(path) {
        let name = path
            .rsplit(['/', '\\'])
            .find(|part| !part.is_empty() && !has_drive_prefix(part))
            .unwrap_or("notes.md");
        return Err(ConfinementError::Absolute {
            path: path.to_string(),
            name: name.to_string(),
        });
    }
    if path.starts_with('~') {
        return Err(ConfinementError::HomeShorthand {
            path: path.to_string(),
        });
    }
    Ok(())
}

/// `C:` or `c:foo`: a Windows drive, absolute or drive-relative, never inside the workspace.
fn has_drive_prefix(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// Rules about one component (a name between slashes).
fn check_component(component: &str) -> Result<(), ConfinementError> {
    if component == ".." {
        return Err(ConfinementError::ParentComponent);
    }
    if component.is_empty() || component == "." {
        return Err(ConfinementError::Empty);
    }
    if component.len() > MAX_COMPONENT_BYTES {
        return Err(ConfinementError::ComponentTooLong {
            bytes: component.len(),
            max: MAX_COMPONENT_BYTES,
        });
    }
    if let Some(character) = component.chars().find(|c| is_forbidden_char(*c)) {
        if character == '\0' {
            return Err(ConfinementError::Nul);
        }
        return Err(ConfinementError::ForbiddenCharacter {
            component: component.to_string(),
            character,
        });
    }
    if let Some((character, what)) = component
        .chars()
        .find_map(|c| invisible_character(c).map(|what| (c, what)))
    {
        return Err(ConfinementError::InvisibleCharacter {
            component: component.to_string(),
            character,
            what,
        });
    }
    if component.ends_with('.') || component.ends_with(' ') {
        return Err(ConfinementError::TrailingDotOrSpace {
            component: component.to_string(),
        });
    }
    if is_device_name(component) {
        return Err(ConfinementError::DeviceName {
            component: component.to_string(),
        });
    }
    if component.eq_ignore_ascii_case(".git") {
        return Err(ConfinementError::ReservedName {
            component: component.to_string(),
            why: "the .git folder is off limits: a change there could run code or rewrite history",
        });
    }
    if component.starts_with(TEMP_PREFIX) {
        return Err(ConfinementError::ReservedName {
            component: component.to_string(),
            why: "names starting with .rein-tmp- are Rein's own temporary files",
        });
    }
    Ok(())
}

/// Characters that are separators, reserved or invisible on some system Rein runs on.
fn is_forbidden_char(c: char) -> bool {
    c.is_control() || matches!(c, '\\' | ':' | '<' | '>' | '"' | '|' | '?' | '*')
}

/// Characters that print as nothing or reorder the text around them, with a short name for
/// messages: a name holding one can look exactly like another name (or hide part of itself)
/// on the screen of the person approving a change.
pub(crate) fn invisible_character(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{00AD}' => "soft hyphen",
        '\u{034F}' => "combining grapheme joiner",
        '\u{061C}' => "Arabic letter mark",
        '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' => "Hangul filler",
        '\u{180E}' => "Mongolian vowel separator",
        '\u{200B}' => "zero-width space",
        '\u{200C}' => "zero-width non-joiner",
        '\u{200D}' => "zero-width joiner",
        '\u{200E}' => "left-to-right mark",
        '\u{200F}' => "right-to-left mark",
        '\u{2028}' => "line separator",
        '\u{2029}' => "paragraph separator",
        '\u{202A}'..='\u{202E}' => "bidirectional embedding or override",
        '\u{2060}' => "word joiner",
        '\u{2061}'..='\u{2064}' => "invisible operator",
        '\u{2066}'..='\u{2069}' => "bidirectional isolate",
        '\u{206A}'..='\u{206F}' => "deprecated format character",
        '\u{FEFF}' => "zero-width no-break space (byte order mark)",
        '\u{FFF9}'..='\u{FFFB}' => "interlinear annotation",
        '\u{E0000}'..='\u{E007F}' => "tag character",
        _ => return None,
    })
}

/// Rules about a component given the folder it is in: inside a bare git repository's folder
/// (named `*.git`), `hooks` holds programs git runs and `config` can name more of them
/// (`core.hooksPath`, `core.fsmonitor`), so neither may be touched.
fn check_in_parent(parent: Option<&str>, component: &str) -> Result<(), ConfinementError> {
    let Some(parent) = parent else {
        return Ok(());
    };
    let p = parent.as_bytes();
    if p.len() <= 4 || !p[p.len() - 4..].eq_ignore_ascii_case(b".git") {
        return Ok(());
    }
    let why = if component.eq_ignore_ascii_case("hooks") {
        "the hooks folder of a git repository (a folder named *.git) holds programs that git runs, so it is off limits"
    } else if component.eq_ignore_ascii_case("config") {
        "the config of a git repository (a folder named *.git) can make git run programs (core.hooksPath, core.fsmonitor), so it is off limits"
    } else {
        return Ok(());
    };
    Err(ConfinementError::ReservedName {
        component: format!("{parent}/{component}"),
        why,
    })
}

/// CON, PRN, AUX, NUL, COM1-9, LPT1-9 (and the superscript-digit forms Windows also treats as
/// devices), case-insensitive, with or without an extension, ignoring spaces before the dot.
fn is_device_name(component: &str) -> bool {
    let stem = component
        .split('.')
        .next()
        .unwrap_or(component)
        .trim_end_matches(' ');
    let upper = stem.to_ascii_uppercase();
    if DEVICE_NAMES.contains(&upper.as_str()) {
        return true;
    }
    for prefix in ["COM", "LPT"] {
        if let Some(rest) = upper.strip_prefix(prefix) {
            let mut chars = rest.chars();
            if let (Some(d), None) = (chars.next(), chars.next()) {
                if matches!(d, '1'..='9' | '¹' | '²' | '³') {
                    return true;
                }
            }
        }
    }
    false
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn normalises_dots_and_slashes() {
        assert_eq!(
            RelPath::parse("./a//b/./c/").map(|p| p.0),
            Ok("a/b/c".to_string())
        );
        assert_eq!(RelPath::parse(".").map(|p| p.is_root()), Ok(true));
    }

    #[test]
    fn device_names() {
        for bad in [
            "CON",
            "con.txt",
            "COM1",
            "lpt9.md",
            "Nul",
            "aux.tar.gz",
            "CON .txt",
            "COM¹",
        ] {
            assert!(is_device_name(bad), "{bad}");
        }
        for ok in ["CONSOLE", "COM0", "COM10", "LPT", "confirm.txt", "nullable"] {
            assert!(!is_device_name(ok), "{ok}");
        }
    }

    #[test]
    fn starts_with_is_component_wise() {
        let a = RelPath::parse("src/lib.rs").unwrap();
        assert!(a.starts_with(&RelPath::parse("src").unwrap()));
        assert!(!a.starts_with(&RelPath::parse("sr").unwrap()));
        assert!(a.starts_with(&RelPath::root()));
    }
}
