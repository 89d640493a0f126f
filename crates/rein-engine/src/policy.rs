//! Policy: whether a registered tool may run without asking (allow), only after a person's
//! approval (ask), or never (deny), optionally narrowed to workspace paths by glob.
//!
//! The defaults are the safe ones (DESIGN principle 3, fail closed): reads are allowed, every
//! mutation asks, and a tool that is not registered is never executed (the gate refuses it as
//! invalid before policy is consulted; a policy file naming one is refused when loaded, so a
//! typo cannot silently leave a rule without effect).
//!
//! A policy file is TOML:
//!
//! ```toml
//! [[rule]]
//! tool = "delete_file"      # a registered tool, or "*" for every tool
//! action = "deny"           # allow | ask | deny
//!
//! [[rule]]
//! tool = "edit_file"
//! paths = ["notes/**"]      # optional globs over workspace-relative paths
//! action = "allow"
//! ```
//!
//! Precedence: the most specific matching rule wins. Naming a tool counts one, giving paths
//! counts one; at equal specificity the most restrictive action wins (deny, then ask, then
//! allow), so a broad deny is never undone by an equally broad allow. A rule with paths only
//! matches calls that name a `path`.

use std::fmt;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use rein_workspace::{RelPath, ToolRegistry};
use serde::Deserialize;
use toml::Spanned;

/// What policy says about one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PolicyAction {
    Allow,
    Ask,
    Deny,
}

impl PolicyAction {
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyAction::Allow => "allow",
            PolicyAction::Ask => "ask",
            PolicyAction::Deny => "deny",
        }
    }

    fn parse(text: &str) -> Option<PolicyAction> {
        match text {
            "allow" => Some(PolicyAction::Allow),
            "ask" => Some(PolicyAction::Ask),
            "deny" => Some(PolicyAction::Deny),
            _ => None,
        }
    }
}

impl fmt::Display for PolicyAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which tools a rule covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolMatch {
    Any,
    Named(String),
}

/// One rule. Build them in code with [`Rule::new`] or load them with [`Policy::from_toml_file`].
#[derive(Debug, Clone)]
pub struct Rule {
    tool: ToolMatch,
    patterns: Vec<String>,
    paths: Option<GlobSet>,
    action: PolicyAction,
    /// Where the rule came from, for the gate's reason ("policy.toml line 4").
    origin: String,
}

impl Rule {
    /// A rule for `tool` (`"*"` for every tool), optionally limited to paths matching `paths`.
    pub fn new(tool: &str, paths: &[&str], action: PolicyAction) -> Result<Rule, PolicyError> {
        let patterns: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        let origin = format!("rule for {tool}");
        let globs = compile_globs(&patterns).map_err(|(pattern, message)| PolicyError::Glob {
            origin: origin.clone(),
            pattern,
            message,
        })?;
        Ok(Rule {
            tool: tool_match(tool),
            patterns,
            paths: globs,
            action,
            origin,
        })
    }

    fn specificity(&self) -> u8 {
        u8::from(matches!(self.tool, ToolMatch::Named(_))) + u8::from(self.paths.is_some())
    }

    fn matches(&self, tool: &str, path: Option<&str>) -> bool {
        let tool_ok = match &self.tool {
            ToolMatch::Any => true,
            ToolMatch::Named(name) => name == tool,
        };
        let path_ok = match (&self.paths, path) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(globs), Some(path)) => globs.is_match(path),
        };
        tool_ok && path_ok
    }

    fn describe(&self) -> String {
        if self.patterns.is_empty() {
            self.origin.clone()
        } else {
            format!("{} (paths {})", self.origin, self.patterns.join(", "))
        }
    }
}

/// Policy's answer and the rule (or default) that gave it, so every decision names its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyDecision {
    pub action: PolicyAction,
    pub source: String,
}

/// A set of rules over the safe defaults.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    rules: Vec<Rule>,
}

/// Why a policy could not be loaded. Each message names the file and, where there is one, the
/// line, and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("could not read the policy file {path}: {source}; check the path")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the policy file {path} is not valid policy TOML: {message}")]
    Toml { path: String, message: String },
    #[error("{origin}: unknown tool \"{tool}\"; use one of: {known}, or \"*\" for every tool")]
    UnknownTool {
        origin: String,
        tool: String,
        known: String,
    },
    #[error("{origin}: unknown action \"{action}\"; use allow, ask or deny")]
    UnknownAction { origin: String, action: String },
    #[error("{origin}: bad path glob \"{pattern}\": {message}")]
    Glob {
        origin: String,
        pattern: String,
        message: String,
    },
    #[error("{origin}: `paths` is empty; leave it out to cover every path")]
    EmptyPaths { origin: String },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default, rename = "rule", alias = "rules")]
    rules: Vec<RuleFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    tool: Spanned<String>,
    action: Spanned<String>,
    #[serde(default)]
    paths: Option<Spanned<Vec<String>>>,
}

impl Policy {
    /// The safe defaults alone: reads allowed, mutations ask.
    pub fn safe_default() -> Policy {
        Policy::default()
    }

    /// The defaults plus `rules`.
    pub fn from_rules(rules: Vec<Rule>) -> Policy {
        Policy { rules }
    }

    /// Loads a policy file; see the module docs for the format. Tool names are checked against
    /// `registry`, so a rule can only name a tool that exists.
    pub fn from_toml_file(path: &Path, registry: &ToolRegistry) -> Result<Policy, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Policy::from_toml_str(&text, &path.display().to_string(), registry)
    }

    /// Like [`Policy::from_toml_file`] for text already read; `name` is what errors call it.
    pub fn from_toml_str(
        text: &str,
        name: &str,
        registry: &ToolRegistry,
    ) -> Result<Policy, PolicyError> {
        let file: PolicyFile = toml::from_str(text).map_err(|e| PolicyError::Toml {
            path: name.to_string(),
            message: e.to_string().trim_end().replace('\n', " "),
        })?;
        let known = registry.names();
        let mut rules = Vec::with_capacity(file.rules.len());
        for raw in file.rules {
            let origin = format!(
                "{name} line {}",
                line_of(text, raw.tool.span().start.min(raw.action.span().start))
            );
            let tool = raw.tool.get_ref();
            if tool != "*" && !known.contains(&tool.as_str()) {
                return Err(PolicyError::UnknownTool {
                    origin: format!("{name} line {}", line_of(text, raw.tool.span().start)),
                    tool: tool.clone(),
                    known: known.join(", "),
                });
            }
            let action = PolicyAction::parse(raw.action.get_ref()).ok_or_else(|| {
                PolicyError::UnknownAction {
                    origin: format!("{name} line {}", line_of(text, raw.action.span().start)),
                    action: raw.action.get_ref().clone(),
                }
            })?;
            let patterns = match &raw.paths {
                None => Vec::new(),
                Some(paths) if paths.get_ref().is_empty() => {
                    return Err(PolicyError::EmptyPaths {
                        origin: format!("{name} line {}", line_of(text, paths.span().start)),
                    })
                }
                Some(paths) => paths.get_ref().clone(),
            };
            let globs = compile_globs(&patterns).map_err(|(pattern, message)| {
                let at = raw.paths.as_ref().map_or(0, |p| p.span().start);
                PolicyError::Glob {
                    origin: format!("{name} line {}", line_of(text, at)),
                    pattern,
                    message,
                }
            })?;
            rules.push(Rule {
                tool: tool_match(tool),
                patterns,
                paths: globs,
                action,
                origin,
            });
        }
        Ok(Policy { rules })
    }

    /// The decision for a call of `tool` (which mutates or not) naming `path`, if any.
    pub fn decide(&self, tool: &str, mutates: bool, path: Option<&str>) -> PolicyDecision {
        // Globs match the normalised relative path, so "./a//b" cannot dodge a rule for "a/b".
        let normalised =
            path.map(|p| RelPath::parse(p).map_or_else(|_| p.to_string(), |r| r.to_string()));
        let best = self
            .rules
            .iter()
            .filter(|r| r.matches(tool, normalised.as_deref()))
            .max_by_key(|r| (r.specificity(), r.action));
        match best {
            Some(rule) => PolicyDecision {
                action: rule.action,
                source: rule.describe(),
            },
            None if mutates => PolicyDecision {
                action: PolicyAction::Ask,
                source: "default: every change asks".into(),
            },
            None => PolicyDecision {
                action: PolicyAction::Allow,
                source: "default: reads are allowed".into(),
            },
        }
    }
}

fn tool_match(tool: &str) -> ToolMatch {
    if tool == "*" {
        ToolMatch::Any
    } else {
        ToolMatch::Named(tool.to_string())
    }
}

/// Globs where `*` stays within one folder and `**` crosses folders, as people expect.
fn compile_globs(patterns: &[String]) -> Result<Option<GlobSet>, (String, String)> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let glob: Glob = GlobBuilder::new(pattern.trim_start_matches("./"))
            .literal_separator(true)
            .build()
            .map_err(|e| (pattern.clone(), e.kind().to_string()))?;
        set.add(glob);
    }
    set.build()
        .map(Some)
        .map_err(|e| (patterns.join(", "), e.to_string()))
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |before| before.matches('\n').count() + 1)
}
