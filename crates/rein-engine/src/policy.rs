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
//! A deny or ask rule whose glob matches a folder covers everything in that folder (`paths =
//! ["secrets"]`, `["secrets/"]` and `["secrets/**"]` all keep `secrets/a/b.txt`), and its globs
//! ignore letter case (a case-insensitive filesystem opens `Secrets/key.env` for
//! `secrets/key.env`). An allow rule matches exactly what its globs match, case included.
//!
//! Precedence: the most specific matching rule wins. Naming a tool counts one, giving paths
//! counts one; at equal specificity the most restrictive action wins (deny, then ask, then
//! allow), so a broad deny is never undone by an equally broad allow. A rule with paths only
//! matches calls that name a `path`.
//!
//! # Files a call did not name
//!
//! A rule with paths also covers every file a tool reads or lists beyond the one path it was
//! given (`search_text`, `find_files`, `find_related`, `list_dir`, `file_info` on a folder), so
//! a recursive tool cannot walk around it. For each such file the gate asks the same question
//! as for a call of that tool naming the file ([`Policy::visibility`]), and the winning rule
//! decides:
//!
//! * **deny**: the file is never read. By default its name is hidden too: listings leave it out
//!   and only count it (`hidden_by_policy`), and the count does not depend on the pattern a call
//!   gave, so it cannot confirm a guessed name. With `hide_names = false` listings still name
//!   it (marked `skipped_by_policy`, without its size) but never read it.
//! * **ask**: the file is not read either (fail closed): approving a search is not approving
//!   every file it would read, since the person was never shown which. Read such a file with
//!   its own call naming it (`read_file`), which asks. Its name stays listed unless the rule
//!   says `hide_names = true`.
//! * **allow**, a rule without paths, or no rule: the file is read as usual (a rule without
//!   paths was already applied to the call itself).
//!
//! Tools that read content (`search_text`, `find_related`) say how many files they skipped
//! (`skipped_by_policy` and a note).
//!
//! # A rule for reading covers every tool that reads
//!
//! A person who denies (or asks for) reading a path means that no tool may read it, whatever
//! the tool is called. So a deny or ask rule naming `read_file` also holds for every tool that
//! returns or derives a file's content ([`CONTENT_READERS`]: `search_text`, `find_related`,
//! `file_info`, and `edit_file`, `replace_file`, `delete_file`, whose diffs and refusals show
//! the current content); and one naming `list_dir` or `find_files` also holds for every tool
//! that names files below a folder ([`NAME_LISTERS`]). It counts as naming each of them, so a
//! rule that names one of them with the same paths and another action ties with it, and the
//! more restrictive action wins. An allow rule widens only the tool it names. To keep files
//! from every tool, changes included, give `tool = "*"`.
//!
//! ```toml
//! [[rule]]
//! tool = "*"
//! paths = ["secrets/**"]
//! action = "deny"           # names under secrets/ are hidden as well
//!
//! [[rule]]
//! tool = "*"
//! paths = ["build/**"]
//! action = "deny"
//! hide_names = false        # list build/ output by name, never read it
//! ```
//!
//! `hide_names` is refused on an allow rule and on a rule without paths, where it could have no
//! effect.

use std::fmt;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use rein_workspace::desk::{glob_path, PathFilter, Visibility};
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
    /// Whether listings leave out the names of files this rule keeps from a tool; `None`: the
    /// default for the action (deny hides, ask shows).
    hide_names: Option<bool>,
    /// Where the rule came from, for the gate's reason ("policy.toml line 4").
    origin: String,
}

impl Rule {
    /// A rule for `tool` (`"*"` for every tool), optionally limited to paths matching `paths`.
    pub fn new(tool: &str, paths: &[&str], action: PolicyAction) -> Result<Rule, PolicyError> {
        let patterns: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        let origin = format!("rule for {tool}");
        let globs =
            compile_globs(&patterns, action).map_err(|(pattern, message)| PolicyError::Glob {
                origin: origin.clone(),
                pattern,
                message,
            })?;
        Ok(Rule {
            tool: tool_match(tool),
            patterns,
            paths: globs,
            action,
            hide_names: None,
            origin,
        })
    }

    /// Sets whether listings hide the names of the files this rule keeps from a tool (see the
    /// module docs). Refused on an allow rule and on a rule without paths.
    pub fn with_hide_names(mut self, hide: bool) -> Result<Rule, PolicyError> {
        check_hide_names(&self.origin, self.action, self.paths.is_some())?;
        self.hide_names = Some(hide);
        Ok(self)
    }

    fn hides_names(&self) -> bool {
        self.hide_names.unwrap_or(self.action == PolicyAction::Deny)
    }

    fn specificity(&self) -> u8 {
        u8::from(matches!(self.tool, ToolMatch::Named(_))) + u8::from(self.paths.is_some())
    }

    fn matches_tool(&self, tool: &str) -> bool {
        match &self.tool {
            ToolMatch::Any => true,
            // A deny or ask for reading (or listing) holds for every tool that reads (or
            // lists) the same files; an allow widens only the tool it names.
            ToolMatch::Named(name) => {
                name == tool || (self.action != PolicyAction::Allow && covers(name, tool))
            }
        }
    }

    fn matches(&self, tool: &str, path: Option<&str>) -> bool {
        let tool_ok = self.matches_tool(tool);
        let path_ok = match (&self.paths, path) {
            (None, _) => true,
            (Some(_), None) => false,
            // A deny or ask that matches a folder covers everything in it, as `secrets`,
            // `secrets/` or `secrets/*` would to a person (a file two levels down is still
            // under secrets/); an allow widens nothing beyond what its globs match.
            (Some(globs), Some(path)) => {
                globs.is_match(path)
                    || (self.action != PolicyAction::Allow
                        && ancestors(path).any(|folder| globs.is_match(folder)))
            }
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
    /// Workspace files no tool may change, whatever the rules say: the policy file itself
    /// when it lies in the workspace ([`Policy::protect`]).
    protected: Vec<String>,
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
    #[error(
        "{origin}: `hide_names` has no effect {why}; leave it out, or use it on a deny or ask \
         rule with `paths`"
    )]
    HideNames { origin: String, why: &'static str },
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
    #[serde(default)]
    hide_names: Option<Spanned<bool>>,
}

impl Policy {
    /// The safe defaults alone: reads allowed, mutations ask.
    pub fn safe_default() -> Policy {
        Policy::default()
    }

    /// The defaults plus `rules`.
    pub fn from_rules(rules: Vec<Rule>) -> Policy {
        Policy {
            rules,
            protected: Vec::new(),
        }
    }

    /// Keeps every tool from changing the workspace file `path` (relative to the root), whatever
    /// the rules say: for the policy file itself when it lies in the workspace, where a model
    /// allowed to edit files could otherwise rewrite its own policy and then read what it
    /// denied. Compared ignoring letter case, as a case-insensitive filesystem would open it.
    pub fn protect(&mut self, path: &str) {
        self.protected.push(normalised(path).to_lowercase());
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
            let globs = compile_globs(&patterns, action).map_err(|(pattern, message)| {
                let at = raw.paths.as_ref().map_or(0, |p| p.span().start);
                PolicyError::Glob {
                    origin: format!("{name} line {}", line_of(text, at)),
                    pattern,
                    message,
                }
            })?;
            if let Some(hide) = &raw.hide_names {
                let at = format!("{name} line {}", line_of(text, hide.span().start));
                check_hide_names(&at, action, globs.is_some())?;
            }
            rules.push(Rule {
                tool: tool_match(tool),
                patterns,
                paths: globs,
                action,
                hide_names: raw.hide_names.map(Spanned::into_inner),
                origin,
            });
        }
        Ok(Policy::from_rules(rules))
    }

    /// The rule that decides a call of `tool` naming `path`, if any rule matches.
    fn winner(&self, tool: &str, path: Option<&str>) -> Option<&Rule> {
        self.winner_of(self.rules.iter(), tool, path)
    }

    /// [`Policy::winner`] among `rules` only.
    fn winner_of<'r>(
        &self,
        rules: impl Iterator<Item = &'r Rule>,
        tool: &str,
        path: Option<&str>,
    ) -> Option<&'r Rule> {
        // Globs match the normalised relative path, so "./a//b" cannot dodge a rule for "a/b".
        let normalised = path.map(normalised);
        rules
            .filter(|r| r.matches(tool, normalised.as_deref()))
            // At a tie, a rule with paths beats one without and hiding beats naming: fail closed.
            .max_by_key(|r| {
                (
                    r.specificity(),
                    r.action,
                    r.paths.is_some(),
                    r.hides_names(),
                )
            })
    }

    /// How a file that a call of `tool` did not name, but reads or lists, appears to it (see
    /// the module docs): the rule that would decide a call of `tool` naming `path` decides.
    pub fn visibility(&self, tool: &str, path: &str) -> Visibility {
        visibility_under(self.winner(tool, Some(path)))
    }

    /// Whether a rule with paths keeps `path` from `tool` (deny or ask): the most specific of
    /// the rules with paths decides. A rule without paths decides only calls of `tool` itself:
    /// it neither keeps the file (a pathless deny of `file_info` leaves sizes in listings) nor
    /// frees it (added to a rule with paths that keeps the file, it must not give its size
    /// back); it can only tie with one, so leaving it out changes no other answer.
    fn keeps_facts(&self, tool: &str, path: &RelPath) -> bool {
        self.winner_of(
            self.rules.iter().filter(|r| r.paths.is_some()),
            tool,
            Some(path.as_str()),
        )
        .is_some_and(|r| r.action != PolicyAction::Allow)
    }

    /// Whether listings hide `path`'s name (a deny or ask rule with `hide_names`, for
    /// `find_files` or `list_dir`).
    pub fn hides_name(&self, path: &str) -> bool {
        ["find_files", "list_dir"]
            .iter()
            .any(|tool| self.visibility(tool, path) == Visibility::Hidden)
    }

    /// Whether a deny or ask rule with paths holds for `tool`, i.e. whether some file may be
    /// kept from it (named or not).
    pub fn narrows(&self, tool: &str) -> bool {
        let narrows = |tool: &str| {
            self.rules.iter().any(|r| {
                r.paths.is_some() && r.action != PolicyAction::Allow && r.matches_tool(tool)
            })
        };
        narrows(tool) || size_giver(tool).is_some_and(narrows)
    }

    /// The [`PathFilter`] a call of `tool` sees its files through.
    pub fn path_filter<'p>(&'p self, tool: &str, path: Option<&str>) -> PolicyPathFilter<'p> {
        let allow_listed = self
            .winner(tool, path)
            .is_some_and(|r| r.action == PolicyAction::Allow && r.paths.is_some());
        PolicyPathFilter {
            policy: self,
            tool: tool.to_string(),
            allow_listed,
        }
    }

    /// The decision for a call of `tool` (which mutates or not) naming `path`, if any.
    pub fn decide(&self, tool: &str, mutates: bool, path: Option<&str>) -> PolicyDecision {
        if mutates && path.is_some_and(|p| self.protected.contains(&normalised(p).to_lowercase())) {
            return PolicyDecision {
                action: PolicyAction::Deny,
                source: "the policy file itself: a change to it would change what is allowed"
                    .into(),
            };
        }
        match self.winner(tool, path) {
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

/// A policy seen from one call of a tool: [`Policy::visibility`] for each path. With the safe
/// defaults (no rule with paths) every path is shown.
#[derive(Debug, Clone)]
pub struct PolicyPathFilter<'p> {
    policy: &'p Policy,
    tool: String,
    /// The call was let through by an allow rule with paths, not by the rule without paths
    /// that decides the files it does not match: a walked file that rule denies or asks about
    /// is skipped. Otherwise `allow * paths=["notes"]` over a `deny *` let a search of `notes`
    /// read `notes/plan.md`, which `read_file` may not.
    allow_listed: bool,
}

impl PathFilter for PolicyPathFilter<'_> {
    fn visible(&self, path: &RelPath) -> Visibility {
        let own = self.own_visibility(path);
        // `list_dir` and `folder_stats` give each file's size, a fact of its content: none of a
        // file that a rule with paths keeps from `file_info` (a rule for reading holds for
        // `file_info` and `folder_stats`, not for `list_dir`). The name stays listed.
        let size_kept =
            size_giver(&self.tool).is_some_and(|giver| self.policy.keeps_facts(giver, path));
        if own == Visibility::Shown && size_kept {
            Visibility::Skipped
        } else {
            own
        }
    }
}

impl PolicyPathFilter<'_> {
    /// How `path` appears to a call of this filter's tool by the rules for that tool alone.
    fn own_visibility(&self, path: &RelPath) -> Visibility {
        let rule = self.policy.winner(&self.tool, Some(path.as_str()));
        let outside_the_allow_list = self.allow_listed
            && rule.is_some_and(|r| r.paths.is_none() && r.action != PolicyAction::Allow);
        if outside_the_allow_list {
            Visibility::Skipped
        } else {
            visibility_under(rule)
        }
    }
}

/// The tool whose rules also decide whether a listing by `tool` gives a file's size: `file_info`
/// for the two listings that give sizes, `list_dir` and `folder_stats` (which also gives the
/// lines `file_info` would).
fn size_giver(tool: &str) -> Option<&'static str> {
    matches!(tool, "list_dir" | "folder_stats").then_some("file_info")
}

/// How a file a call did not name appears when `rule` is the one that would decide a call
/// naming it.
fn visibility_under(rule: Option<&Rule>) -> Visibility {
    let Some(rule) = rule else {
        return Visibility::Shown;
    };
    match rule.action {
        // A rule without paths was applied to the call itself.
        _ if rule.paths.is_none() => Visibility::Shown,
        PolicyAction::Allow => Visibility::Shown,
        PolicyAction::Ask | PolicyAction::Deny if rule.hides_names() => Visibility::Hidden,
        PolicyAction::Ask | PolicyAction::Deny => Visibility::Skipped,
    }
}

/// `hide_names` only means something on a deny or ask rule with paths.
fn check_hide_names(
    origin: &str,
    action: PolicyAction,
    has_paths: bool,
) -> Result<(), PolicyError> {
    let why = if action == PolicyAction::Allow {
        "on an allow rule (allowed files are read and listed)"
    } else if !has_paths {
        "on a rule without `paths` (it applies to the call itself)"
    } else {
        return Ok(());
    };
    Err(PolicyError::HideNames {
        origin: origin.to_string(),
        why,
    })
}

/// Tools that return or derive the content of the files they are given or walk: a file's
/// text (`search_text` lines, `find_related` terms), its hash and line count (`file_info`), or
/// a diff of its current content (`edit_file`, `edit_lines`, `replace_file`, `delete_file`,
/// `write_json`, `write_sections`; the refusals of `edit_file` and `edit_lines` also tell
/// whether a guessed text is in the file, and `edit_lines` quotes the lines most like it), or figures of its columns
/// (`table_stats`), its rows where conditions hold (`table_rows`), or its lines, rows and whether
/// it equals another (`folder_stats`). A deny or
/// ask rule naming `read_file` covers each of them.
pub const CONTENT_READERS: [&str; 12] = [
    "search_text",
    "table_stats",
    "table_rows",
    "folder_stats",
    "find_related",
    "file_info",
    "edit_file",
    "edit_lines",
    "replace_file",
    "delete_file",
    "write_json",
    "write_sections",
];

/// Tools that name the files below a folder (or say whether a name exists there): a deny or
/// ask rule naming `list_dir` or `find_files` covers each of them.
pub const NAME_LISTERS: [&str; 6] = [
    "list_dir",
    "find_files",
    "folder_stats",
    "file_info",
    "search_text",
    "find_related",
];

/// Whether a deny or ask rule naming `named` also holds for `tool` (see [`CONTENT_READERS`] and
/// [`NAME_LISTERS`]).
fn covers(named: &str, tool: &str) -> bool {
    match named {
        "read_file" => CONTENT_READERS.contains(&tool),
        "list_dir" | "find_files" => NAME_LISTERS.contains(&tool),
        _ => false,
    }
}

fn tool_match(tool: &str) -> ToolMatch {
    if tool == "*" {
        ToolMatch::Any
    } else {
        ToolMatch::Named(tool.to_string())
    }
}

/// `path` as the workspace resolves it (`./a//b` is `a/b`), or as given when it is no usable
/// workspace path (the tool refuses it then). A path holding a wildcard is the folder
/// `search_text` walks for it: `{*/public/x,secrets/key.env}` matches `**/public/**` as text
/// but walks the whole workspace.
fn normalised(path: &str) -> String {
    let walked = glob_path(path).map(|g| g.folder);
    let path = walked.as_deref().unwrap_or(path);
    RelPath::parse(path).map_or_else(|_| path.to_string(), |r| r.to_string())
}

/// The folders above a normalised relative path, nearest last: `a/b/c` gives `a`, `a/b`.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(at, _)| &path[..at])
}

/// Globs where `*` stays within one folder and `**` crosses folders, as people expect. A
/// trailing `/` (a folder, to a person) is dropped: paths are matched normalised, without one.
///
/// The globs of a deny or ask rule ignore letter case: on a case-insensitive filesystem (an
/// ext4 folder with casefold, vfat, a Mac or Windows share) `Secrets/key.env` opens
/// `secrets/key.env`, so a rule for one spelling must hold for every spelling. An allow rule
/// matches case-sensitively, so it never widens to a name it did not give.
fn compile_globs(
    patterns: &[String],
    action: PolicyAction,
) -> Result<Option<GlobSet>, (String, String)> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let trimmed = pattern.trim_start_matches("./");
        let trimmed = match trimmed.trim_end_matches('/') {
            "" => trimmed,
            folder => folder,
        };
        let glob: Glob = GlobBuilder::new(trimmed)
            .literal_separator(true)
            .case_insensitive(action != PolicyAction::Allow)
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
