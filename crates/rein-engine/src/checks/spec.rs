//! The checks a mission declares, as serde types. Each check has an `id` and is tagged by `kind`;
//! unknown fields are refused so that a typo can never silently weaken a contract.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

/// Every `kind` a check may have, in the order the docs list them.
pub const CHECK_KINDS: &[&str] = &[
    "file_exists",
    "file_absent",
    "content_matches",
    "content_absent",
    "json_schema",
    "numeric_consistency",
    "report_complete",
    "actions_called",
    "variable_set",
    "grounded",
    "decision",
    "statement",
    "mentions_all",
    "not_copied",
    "no_placeholders",
    "inputs_read",
    "written_this_run",
    "entries_match",
    "inputs_unchanged",
    "file_equals",
    "nothing_else_changed",
];

/// One check of a contract: an id for reports plus what to test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub id: String,
    #[serde(flatten)]
    pub spec: CheckSpec,
}

impl<'de> Deserialize<'de> for Check {
    /// Takes `id` out by hand so the variants can keep `deny_unknown_fields` (serde cannot
    /// combine it with `flatten`).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut map = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        let id = match map.remove("id") {
            Some(serde_json::Value::String(s)) => s,
            Some(_) => return Err(D::Error::custom("`id` must be a string")),
            None => return Err(D::Error::custom("missing field `id`")),
        };
        let spec =
            CheckSpec::deserialize(serde_json::Value::Object(map)).map_err(D::Error::custom)?;
        Ok(Check { id, spec })
    }
}

/// What a check tests. See the module docs of `checks` for each kind's meaning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CheckSpec {
    /// The file exists (and, with `non_empty`, has at least one non-whitespace byte).
    FileExists {
        path: String,
        #[serde(default)]
        non_empty: bool,
    },
    /// The file does not exist.
    FileAbsent { path: String },
    /// The file's prose (or one `section` of it) contains the pattern.
    ContentMatches {
        path: String,
        pattern: String,
        #[serde(default)]
        regex: bool,
        #[serde(default)]
        case_insensitive: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        section: Option<String>,
        /// Judge code blocks and comments of a Markdown file as text too.
        #[serde(default, skip_serializing_if = "is_false")]
        include_code: bool,
    },
    /// The file's prose (or one `section` of it) does not contain the pattern (a missing file fails: nothing to judge).
    ContentAbsent {
        path: String,
        pattern: String,
        #[serde(default)]
        regex: bool,
        #[serde(default)]
        case_insensitive: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        section: Option<String>,
        /// Judge code blocks and comments of a Markdown file as text too.
        #[serde(default, skip_serializing_if = "is_false")]
        include_code: bool,
    },
    /// The file parses as JSON and validates against the schema.
    JsonSchema {
        path: String,
        schema: serde_json::Value,
    },
    /// A number stated in the artifact equals a value computed from a frozen input.
    /// With a regex locator every statement in the prose is read and all must agree.
    NumericConsistency {
        path: String,
        stated: Locator,
        expected: Computed,
        #[serde(default)]
        tolerance: f64,
        /// At least one statement must stand in this section.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        section: Option<String>,
        /// Units the stated number may carry (`EUR`, `hours`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        units: Vec<String>,
        /// A sign is accepted on the stated number.
        #[serde(default, skip_serializing_if = "is_false")]
        signed: bool,
        #[serde(default, skip_serializing_if = "Occurrences::is_default")]
        occurrences: Occurrences,
        /// Each statement is written with exactly this many decimals (a task's "one decimal").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decimals: Option<u8>,
    },
    /// Required headings (markdown) or fields (JSON) are present; word count within bounds.
    ReportComplete {
        path: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        headings: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        fields: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_words: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_words: Option<u64>,
        /// The headings appear in the listed order.
        #[serde(default, skip_serializing_if = "is_false")]
        in_order: bool,
        /// Each required heading's section has at least this many words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_section_words: Option<u64>,
        /// No non-blank line may appear more often than this.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_repeats: Option<u32>,
        /// No heading but the required ones (a task that asks for "exactly these headings").
        #[serde(default, skip_serializing_if = "is_false")]
        no_other_headings: bool,
    },
    /// The named tools were executed (optionally in this order) during the run.
    ActionsCalled {
        tools: Vec<CallSpec>,
        #[serde(default)]
        ordered: bool,
        /// With `ordered`: no call of a later-listed kind may come before an earlier-listed
        /// one (`step3, step1, step2, step3` is not "step1, step2, step3 in that order").
        #[serde(default, skip_serializing_if = "is_false")]
        strict_order: bool,
    },
    /// A sandbox variable is set (and, with `expected`, equals it).
    VariableSet {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected: Option<serde_json::Value>,
    },
    /// The claimed string(s) read from the artifact occur literally in frozen input bytes.
    Grounded {
        path: String,
        claim: Locator,
        /// Inputs to search; empty means every input of the mission.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        sources: Vec<String>,
    },
    /// A decision model's probability for the expected label reaches the floor.
    Decision {
        prompt: String,
        labels: Vec<String>,
        expected: String,
        /// Artifact whose text is put into the prompt (at `{artifact}`, or appended).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        floor_bps: Option<u32>,
        /// Only this section of the artifact goes into the prompt.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        section: Option<String>,
        /// Frozen inputs put into the prompt at `{inputs}` (clipped).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        inputs: Vec<String>,
        /// `rein qualify` showed zero confident false completions for this check. An unqualified
        /// decision is reported as advice for a person and does not decide the verdict.
        #[serde(default)]
        qualified: bool,
    },
    /// Some sentence of the (section of the) prose matches every pattern; with `unnegated`, that
    /// sentence has no negation cue.
    Statement {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        section: Option<String>,
        all: Vec<String>,
        #[serde(default, skip_serializing_if = "is_false")]
        unnegated: bool,
    },
    /// Every distinct value of a frozen CSV column is mentioned in the (section of the) prose;
    /// with `numbers`, every number a line states beside one value is that value's row's.
    MentionsAll {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        section: Option<String>,
        values: ValueSource,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        numbers: Option<RowNumbers>,
    },
    /// At most `max_fraction` of the artifact's words lie in runs of `min_run_words` or more
    /// words copied from an input: verbatim, or with a word changed, added or dropped every few
    /// words (a table input counts only verbatim runs: restating its rows is the work). With
    /// `section`, of that section's words alone (a pasted paragraph in one section of a long
    /// report is still a paste).
    NotCopied {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        section: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        sources: Vec<String>,
        min_run_words: u32,
        max_fraction: f64,
    },
    /// No template marker (TODO, TBD, `[fill in]`, `???`...) in the text as a person reads it,
    /// and no bidi control that would show it in another order.
    NoPlaceholders { path: String },
    /// Each listed input (default: all) was read in full by an executed `read_file` before the
    /// first executed write of `before_writing` (if given).
    InputsRead {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        paths: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before_writing: Option<String>,
    },
    /// The last executed call of this run that changed `path` produced its final content.
    WrittenThisRun { path: String },
    /// Every frozen input still has the bytes it was frozen with, and no executed call of the
    /// run changed one (put back is not unchanged).
    InputsUnchanged {},
    /// The whole file equals `expected_file` (relative to the mission folder, frozen at load).
    /// By default line endings are normalised (CRLF and CR read as LF) and one final newline is
    /// optional; a file whose reader cares (a shell script, a crontab) says
    /// `"line_endings": "exact"` and `"final_newline": "required"`.
    FileEquals {
        path: String,
        expected_file: String,
        #[serde(default, skip_serializing_if = "LineEndings::is_any")]
        line_endings: LineEndings,
        #[serde(default, skip_serializing_if = "FinalNewline::is_optional")]
        final_newline: FinalNewline,
    },
    /// No file was created, changed or deleted but the required artifact, the editable files,
    /// the paths in `allow` and the inputs in `allow_deleted` (deleted only): compared with the starting state (inputs and editable files as
    /// copied in) on disk, and in the trace (put back is not unchanged).
    NothingElseChanged {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        allow: Vec<String>,
        /// Inputs the task deletes: each may be gone at the end (or still as frozen), and the
        /// calls that deleted it are no change of another file.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        allow_deleted: Vec<String>,
    },
    /// The array at `array` has one entry per source; entry i's fields equal the values that
    /// source i labels, and `unique` fields do not repeat.
    EntriesMatch {
        path: String,
        array: String,
        sources: Vec<String>,
        fields: BTreeMap<String, FieldRule>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        unique: Vec<String>,
    },
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// How many statements a numeric check accepts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Occurrences {
    /// Every statement must agree with the expected value.
    #[default]
    AllAgree,
    /// There must be exactly one statement.
    ExactlyOne,
}

impl Occurrences {
    fn is_default(&self) -> bool {
        *self == Occurrences::AllAgree
    }
}

/// A call a trace must contain: a tool name, or a tool and the path it named (for the sandbox's
/// variable tools, the variable's name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CallSpec {
    Tool(String),
    ToolOnPath(PathCall),
}

/// A call on one path, with what it must have done there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathCall {
    pub tool: String,
    pub path: String,
    /// The call left exactly this text in the file, with or without one final newline (judged
    /// by hash from the trace, so the content of a file deleted later is still judged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrote: Option<String>,
    /// The call came after the last executed write of the path (a deletion is no write): "read
    /// it back" means the final content, not a first draft.
    #[serde(default, skip_serializing_if = "is_false")]
    pub after_last_write: bool,
}

impl CallSpec {
    pub fn tool(&self) -> &str {
        match self {
            CallSpec::Tool(t) => t,
            CallSpec::ToolOnPath(c) => &c.tool,
        }
    }

    pub fn path(&self) -> Option<&str> {
        match self {
            CallSpec::Tool(_) => None,
            CallSpec::ToolOnPath(c) => Some(&c.path),
        }
    }

    /// The path call's options, when it has any.
    pub fn on_path(&self) -> Option<&PathCall> {
        match self {
            CallSpec::Tool(_) => None,
            CallSpec::ToolOnPath(c) => Some(c),
        }
    }
}

/// Where the values of `mentions_all` come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "snake_case", deny_unknown_fields)]
pub enum ValueSource {
    /// The distinct non-empty cells of a column of a frozen CSV input.
    Csv { path: String, column: String },
}

/// The numbers a `mentions_all` line states beside a value: a line of the section that
/// mentions exactly one value, and writes a number with one of `units` (`16 hours`, `16h`) or
/// has a cell under a table header named `column`, must state that value's `column` in the CSV
/// (strictly parsed). A line that states no such number is not judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowNumbers {
    pub column: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub units: Vec<String>,
}

/// How one field of an `entries_match` entry is checked against its source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldRule {
    /// The source line starting with this label holds the truth in the rest of the line.
    pub label: String,
    /// Compare as numbers (strictly parsed) instead of text.
    #[serde(default, skip_serializing_if = "is_false")]
    pub number: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub units: Vec<String>,
    #[serde(default)]
    pub tolerance: f64,
}

impl CheckSpec {
    /// The decimals a `numeric_consistency` check asks each statement to be written with.
    pub fn decimals(&self) -> Option<u8> {
        match self {
            CheckSpec::NumericConsistency { decimals, .. } => *decimals,
            _ => None,
        }
    }

    /// The `kind` tag as written in mission files.
    pub fn kind(&self) -> &'static str {
        match self {
            CheckSpec::FileExists { .. } => "file_exists",
            CheckSpec::FileAbsent { .. } => "file_absent",
            CheckSpec::ContentMatches { .. } => "content_matches",
            CheckSpec::ContentAbsent { .. } => "content_absent",
            CheckSpec::JsonSchema { .. } => "json_schema",
            CheckSpec::NumericConsistency { .. } => "numeric_consistency",
            CheckSpec::ReportComplete { .. } => "report_complete",
            CheckSpec::ActionsCalled { .. } => "actions_called",
            CheckSpec::VariableSet { .. } => "variable_set",
            CheckSpec::Grounded { .. } => "grounded",
            CheckSpec::Decision { .. } => "decision",
            CheckSpec::Statement { .. } => "statement",
            CheckSpec::MentionsAll { .. } => "mentions_all",
            CheckSpec::NotCopied { .. } => "not_copied",
            CheckSpec::NoPlaceholders { .. } => "no_placeholders",
            CheckSpec::InputsRead { .. } => "inputs_read",
            CheckSpec::WrittenThisRun { .. } => "written_this_run",
            CheckSpec::EntriesMatch { .. } => "entries_match",
            CheckSpec::InputsUnchanged { .. } => "inputs_unchanged",
            CheckSpec::FileEquals { .. } => "file_equals",
            CheckSpec::NothingElseChanged { .. } => "nothing_else_changed",
        }
    }

    /// True for the checks that need a model or a person's qualification to be trusted.
    pub fn is_semantic(&self) -> bool {
        matches!(self, CheckSpec::Decision { .. })
    }

    /// True for a check that is reported but does not decide the verdict: an unqualified
    /// decision, whose answer is advice for the person reviewing the run.
    pub fn is_advisory(&self) -> bool {
        matches!(
            self,
            CheckSpec::Decision {
                qualified: false,
                ..
            }
        )
    }

    /// Whether this check's result is settled by the bytes of `artifact` alone (with the
    /// frozen inputs it may read): judged again on the same bytes it fails again. False for a
    /// check of the run's calls or of another file, which a later step can change without
    /// touching the artifact. Every kind is named, so a new one has to be decided here.
    pub fn settled_by(&self, artifact: &str) -> bool {
        use super::paths::same_path;
        match self {
            CheckSpec::FileExists { path, .. }
            | CheckSpec::FileAbsent { path }
            | CheckSpec::ContentMatches { path, .. }
            | CheckSpec::ContentAbsent { path, .. }
            | CheckSpec::JsonSchema { path, .. }
            | CheckSpec::NumericConsistency { path, .. }
            | CheckSpec::ReportComplete { path, .. }
            | CheckSpec::Grounded { path, .. }
            | CheckSpec::Statement { path, .. }
            | CheckSpec::MentionsAll { path, .. }
            | CheckSpec::NotCopied { path, .. }
            | CheckSpec::NoPlaceholders { path }
            | CheckSpec::FileEquals { path, .. }
            | CheckSpec::EntriesMatch { path, .. } => same_path(path, artifact),
            // A model's answer, not the bytes: a decider that failed (an outage) or read just
            // under the floor may pass the same bytes when asked again.
            CheckSpec::Decision { .. }
            | CheckSpec::ActionsCalled { .. }
            | CheckSpec::VariableSet { .. }
            | CheckSpec::InputsRead { .. }
            | CheckSpec::WrittenThisRun { .. }
            | CheckSpec::InputsUnchanged {}
            | CheckSpec::NothingElseChanged { .. } => false,
        }
    }
}

/// Where a value is read from an artifact: the first capture group of the first regex match, or a
/// JSON pointer into the artifact parsed as JSON. Written `{"regex": "..."}` or
/// `{"pointer": "/a/0"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Locator {
    Regex(String),
    Pointer(String),
}

/// A value computed from frozen inputs, tagged by `from`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "snake_case", deny_unknown_fields)]
pub enum Computed {
    /// An aggregate of a CSV column (`count` counts rows and needs no column).
    Csv {
        path: String,
        op: Aggregate,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        column: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        filter: Option<RowFilter>,
    },
    /// The number of lines of an input that match a regex.
    Lines { path: String, pattern: String },
    /// An aggregate over the first capture group of every regex match in the listed inputs
    /// (`count` counts matches).
    Matches {
        paths: Vec<String>,
        pattern: String,
        op: Aggregate,
        /// Units the matched numbers may carry.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        units: Vec<String>,
    },
    /// The number at a JSON pointer of a JSON input.
    Json { path: String, pointer: String },
}

/// How a list of numbers becomes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregate {
    Sum,
    Count,
    Min,
    Max,
    Mean,
}

/// Keep only the CSV rows whose `column` equals `equals` (after trimming).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowFilter {
    pub column: String,
    pub equals: String,
}

/// How `file_equals` compares line endings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineEndings {
    /// CRLF and a lone CR read as LF: the same text saved on another system is the same file.
    #[default]
    Any,
    /// Byte for byte: a CR where the expected file has none is a difference.
    Exact,
}

impl LineEndings {
    fn is_any(&self) -> bool {
        *self == LineEndings::Any
    }
}

/// Whether `file_equals` requires the file to end in a newline.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinalNewline {
    /// With or without one final newline, the same file.
    #[default]
    Optional,
    /// The last line must end in a newline (cron ignores a last entry without one).
    Required,
}

impl FinalNewline {
    fn is_optional(&self) -> bool {
        *self == FinalNewline::Optional
    }
}
