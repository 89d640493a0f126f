//! The checks a mission declares, as serde types. Each check has an `id` and is tagged by `kind`;
//! unknown fields are refused so that a typo can never silently weaken a contract.

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
    /// The file's text contains the pattern.
    ContentMatches {
        path: String,
        pattern: String,
        #[serde(default)]
        regex: bool,
        #[serde(default)]
        case_insensitive: bool,
    },
    /// The file's text does not contain the pattern (a missing file fails: nothing to judge).
    ContentAbsent {
        path: String,
        pattern: String,
        #[serde(default)]
        regex: bool,
        #[serde(default)]
        case_insensitive: bool,
    },
    /// The file parses as JSON and validates against the schema.
    JsonSchema {
        path: String,
        schema: serde_json::Value,
    },
    /// A number stated in the artifact equals a value computed from a frozen input.
    NumericConsistency {
        path: String,
        stated: Locator,
        expected: Computed,
        #[serde(default)]
        tolerance: f64,
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
    },
    /// The named tools were executed (optionally in this order) during the run.
    ActionsCalled {
        tools: Vec<String>,
        #[serde(default)]
        ordered: bool,
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
    },
}

impl CheckSpec {
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
        }
    }

    /// True for the checks that need a model or a person's qualification to be trusted.
    pub fn is_semantic(&self) -> bool {
        matches!(self, CheckSpec::Decision { .. })
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
