//! Semantic validation of a parsed mission: anything that would make a contract unjudgeable or
//! silently weaker is refused at load, with the file and field named.

use std::collections::BTreeSet;
use std::path::Path;

use regex::Regex;

use super::error::MissionError;
use super::schema::Mission;
use crate::checks::{normalize_rel, CheckSpec, Computed, Locator};

struct Ctx<'a> {
    source: &'a Path,
    editable: BTreeSet<&'a str>,
}

impl Ctx<'_> {
    fn err(&self, field: impl Into<String>, message: impl Into<String>) -> MissionError {
        MissionError::Invalid {
            path: self.source.to_path_buf(),
            field: field.into(),
            message: message.into(),
        }
    }

    /// A path must already be in normal form, so one file has one name in the contract.
    fn path(&self, field: &str, p: &str) -> Result<(), MissionError> {
        match normalize_rel(p) {
            Ok(n) if n == p => Ok(()),
            Ok(n) => Err(self.err(field, format!("write `{p}` as `{n}`"))),
            Err(reason) => Err(self.err(field, format!("`{p}`: {reason}"))),
        }
    }

    fn regex(&self, field: &str, pattern: &str) -> Result<Regex, MissionError> {
        Regex::new(pattern).map_err(|e| self.err(field, format!("invalid regex: {e}")))
    }

    fn capture_regex(&self, field: &str, pattern: &str) -> Result<(), MissionError> {
        let re = self.regex(field, pattern)?;
        if re.captures_len() != 2 {
            return Err(self.err(
                field,
                format!(
                    "the regex must have exactly one capture group, it has {}",
                    re.captures_len() - 1
                ),
            ));
        }
        Ok(())
    }

    fn pointer(&self, field: &str, p: &str) -> Result<(), MissionError> {
        if p.is_empty() || p.starts_with('/') {
            Ok(())
        } else {
            Err(self.err(
                field,
                format!("`{p}` is not a JSON pointer (it must start with `/`)"),
            ))
        }
    }

    fn input(&self, field: &str, p: &str, inputs: &BTreeSet<&str>) -> Result<(), MissionError> {
        self.path(field, p)?;
        if inputs.contains(p) {
            Ok(())
        } else {
            Err(self.err(
                field,
                format!(
                    "`{p}` is not one of the mission's inputs; values must come from frozen inputs"
                ),
            ))
        }
    }
}

/// The most decimals a `numeric_consistency` check may ask for (a line field holds six).
const MAX_DECIMALS: u8 = 6;

fn is_identifier(s: &str, extra: &[char]) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || extra.contains(&c))
}

/// Refuses a mission that cannot be judged or would judge weakly; returns warnings about what
/// is allowed but weak.
pub(crate) fn validate(
    m: &Mission,
    source: &Path,
    fixtures_dir: &Path,
) -> Result<Vec<String>, MissionError> {
    let mut cx = Ctx {
        source,
        editable: BTreeSet::new(),
    };
    if !is_identifier(&m.id, &['-']) {
        return Err(cx.err(
            "id",
            format!("`{}` must be lower-case letters, digits, `_` or `-`", m.id),
        ));
    }
    if m.prompt.trim().is_empty() {
        return Err(cx.err("prompt", "the prompt is empty"));
    }
    cx.path("fixtures", &m.fixtures)?;

    let mut inputs = BTreeSet::new();
    for (i, input) in m.inputs.iter().enumerate() {
        let field = format!("inputs[{i}]");
        cx.path(&field, input)?;
        if !inputs.insert(input.as_str()) {
            return Err(cx.err(field, format!("`{input}` is listed twice")));
        }
        let file = fixtures_dir.join(input);
        if !file.is_file() {
            return Err(cx.err(
                field,
                format!("missing fixture: {} does not exist", file.display()),
            ));
        }
    }

    for (i, path) in m.editable.iter().enumerate() {
        let field = format!("editable[{i}]");
        cx.path(&field, path)?;
        if inputs.contains(path.as_str()) {
            return Err(cx.err(
                field,
                format!("`{path}` is also an input; a file is either frozen or editable, not both"),
            ));
        }
        if !cx.editable.insert(path.as_str()) {
            return Err(cx.err(field, format!("`{path}` is listed twice")));
        }
        inside(&cx, &field, fixtures_dir, path)?;
    }

    if m.tools.is_empty() {
        return Err(cx.err("tools", "a mission needs at least one tool"));
    }
    let mut tools = BTreeSet::new();
    for (i, t) in m.tools.iter().enumerate() {
        if !is_identifier(t, &[]) {
            return Err(cx.err(format!("tools[{i}]"), format!("`{t}` is not a tool name")));
        }
        if !tools.insert(t.as_str()) {
            return Err(cx.err(format!("tools[{i}]"), format!("`{t}` is listed twice")));
        }
    }

    if m.required_artifact.is_empty() {
        // Only `finish` needs a deliverable; a sandbox task ends at `final_answer`.
        if tools.contains("finish") {
            return Err(cx.err(
                "required_artifact",
                "missing required field: a mission with `finish` names the deliverable finish is judged against",
            ));
        }
    } else {
        cx.path("required_artifact", &m.required_artifact)?;
    }
    if !m.required_artifact.is_empty() && inputs.contains(m.required_artifact.as_str()) {
        return Err(cx.err(
            "required_artifact",
            format!(
                "`{}` is also an input; the deliverable must never overwrite a frozen input",
                m.required_artifact
            ),
        ));
    }
    // A case-insensitive file system opens `NOTES.md` for `notes.md`.
    if let Some(input) = inputs.iter().find(|i| {
        !m.required_artifact.is_empty()
            && **i != m.required_artifact
            && i.to_lowercase() == m.required_artifact.to_lowercase()
    }) {
        return Err(cx.err(
            "required_artifact",
            format!(
                "`{}` differs from the input `{input}` only in letter case; on a case-insensitive \
                 file system it is the same file, and the deliverable must never overwrite a \
                 frozen input: give it another name",
                m.required_artifact
            ),
        ));
    }

    let b = &m.budgets;
    for (name, v) in [
        ("budgets.max_turns", u64::from(b.max_turns)),
        ("budgets.max_seconds", b.max_seconds),
        ("budgets.max_plan_steps", u64::from(b.max_plan_steps)),
        (
            "budgets.attempts_per_strategy",
            u64::from(b.attempts_per_strategy),
        ),
    ] {
        if v == 0 {
            return Err(cx.err(name, "a cap of 0 would stop every run before it starts"));
        }
    }

    if let Some(k) = b.samples {
        if !(1..=crate::agent::MAX_SAMPLES).contains(&k) {
            return Err(cx.err(
                "budgets.samples",
                format!(
                    "{k} candidates per write is outside 1 to {}",
                    crate::agent::MAX_SAMPLES
                ),
            ));
        }
    }

    if m.checks.is_empty() {
        return Err(cx.err("checks", "a contract needs at least one check"));
    }
    let mut ids = BTreeSet::new();
    let mut warnings = Vec::new();
    for (i, check) in m.checks.iter().enumerate() {
        let f = |name: &str| format!("checks[{i}].{name}");
        if check.id.trim().is_empty() {
            return Err(cx.err(f("id"), "the id is empty"));
        }
        if !ids.insert(check.id.as_str()) {
            return Err(cx.err(f("id"), format!("`{}` is used twice", check.id)));
        }
        validate_check(&cx, &check.spec, &f, &inputs, &tools)?;
        if let Some(w) = weak_number_pattern(&check.spec) {
            warnings.push(format!(
                "{}: {} (`{}`): {w}",
                source.display(),
                f("stated"),
                check.id
            ));
        }
    }
    Ok(warnings)
}

/// A numeric regex without a line anchor or a literal label before its capture reads a number
/// wherever one happens to stand.
fn weak_number_pattern(spec: &CheckSpec) -> Option<String> {
    let CheckSpec::NumericConsistency {
        stated: Locator::Regex(r),
        ..
    } = spec
    else {
        return None;
    };
    // The text before the first capturing group: `(` not escaped and not `(?`.
    let bytes = r.as_bytes();
    let capture = (0..bytes.len())
        .find(|&i| {
            bytes[i] == b'(' && bytes.get(i + 1) != Some(&b'?') && (i == 0 || bytes[i - 1] != b'\\')
        })
        .unwrap_or(r.len());
    let before = &r[..capture];
    let anchored = before.contains('^') || before.contains(r"\b");
    let labelled = before.chars().filter(|c| c.is_alphabetic()).count() >= 3;
    (!anchored || !labelled).then(|| {
        "the number pattern has no anchor (a `^` with `(?m)` and a literal label before the capture); it may read a number from anywhere".to_string()
    })
}

fn validate_check(
    cx: &Ctx<'_>,
    spec: &CheckSpec,
    f: &dyn Fn(&str) -> String,
    inputs: &BTreeSet<&str>,
    tools: &BTreeSet<&str>,
) -> Result<(), MissionError> {
    match spec {
        CheckSpec::FileExists { path, .. }
        | CheckSpec::FileAbsent { path }
        | CheckSpec::NoPlaceholders { path }
        | CheckSpec::WrittenThisRun { path } => cx.path(&f("path"), path),
        CheckSpec::InputsUnchanged {} => {
            if inputs.is_empty() {
                return Err(cx.err(f("kind"), "the mission has no frozen inputs to compare"));
            }
            Ok(())
        }
        CheckSpec::Statement { path, all, .. } => {
            cx.path(&f("path"), path)?;
            if all.is_empty() {
                return Err(cx.err(f("all"), "list at least one pattern"));
            }
            for (j, p) in all.iter().enumerate() {
                cx.regex(&f(&format!("all[{j}]")), p)?;
            }
            Ok(())
        }
        CheckSpec::MentionsAll { path, values, .. } => {
            cx.path(&f("path"), path)?;
            let crate::checks::ValueSource::Csv { path: src, column } = values;
            cx.input(&f("values.path"), src, inputs)?;
            if column.is_empty() {
                return Err(cx.err(f("values.column"), "empty column name"));
            }
            Ok(())
        }
        CheckSpec::NotCopied {
            path,
            section,
            sources,
            min_run_words,
            max_fraction,
        } => {
            cx.path(&f("path"), path)?;
            if section.as_deref().is_some_and(|s| s.trim().is_empty()) {
                return Err(cx.err(f("section"), "empty section name"));
            }
            for (j, s) in sources.iter().enumerate() {
                cx.input(&f(&format!("sources[{j}]")), s, inputs)?;
            }
            if sources.is_empty() && inputs.is_empty() {
                return Err(cx.err(f("sources"), "no inputs to compare with"));
            }
            if *min_run_words < 4 {
                return Err(cx.err(
                    f("min_run_words"),
                    "at least 4: shorter runs are ordinary phrases",
                ));
            }
            if !(0.0..=1.0).contains(max_fraction) {
                return Err(cx.err(f("max_fraction"), "must be in 0..=1"));
            }
            Ok(())
        }
        CheckSpec::InputsRead {
            paths,
            before_writing,
        } => {
            for (j, p) in paths.iter().enumerate() {
                // An editable file must be read before it is edited, too.
                if !cx.editable.contains(p.as_str()) {
                    cx.input(&f(&format!("paths[{j}]")), p, inputs)?;
                }
            }
            if paths.is_empty() && inputs.is_empty() && cx.editable.is_empty() {
                return Err(cx.err(f("paths"), "the mission has no inputs to read"));
            }
            if !tools.contains("read_file") {
                return Err(cx.err(
                    f("paths"),
                    "the mission has no read_file tool, so this check could never pass",
                ));
            }
            if let Some(a) = before_writing {
                cx.path(&f("before_writing"), a)?;
            }
            Ok(())
        }
        CheckSpec::EntriesMatch {
            path,
            array,
            sources,
            fields,
            unique,
        } => {
            cx.path(&f("path"), path)?;
            cx.pointer(&f("array"), array)?;
            if sources.is_empty() {
                return Err(cx.err(f("sources"), "list one source per entry"));
            }
            for (j, s) in sources.iter().enumerate() {
                cx.input(&f(&format!("sources[{j}]")), s, inputs)?;
            }
            if fields.is_empty() {
                return Err(cx.err(f("fields"), "list at least one field"));
            }
            for (name, rule) in fields {
                if rule.label.trim().is_empty() {
                    return Err(cx.err(f(&format!("fields.{name}.label")), "empty label"));
                }
                if !rule.tolerance.is_finite() || rule.tolerance < 0.0 {
                    return Err(cx.err(
                        f(&format!("fields.{name}.tolerance")),
                        "must be a finite number >= 0",
                    ));
                }
            }
            for (j, u) in unique.iter().enumerate() {
                if !fields.contains_key(u) {
                    return Err(cx.err(
                        f(&format!("unique[{j}]")),
                        format!("`{u}` is not one of the fields"),
                    ));
                }
            }
            Ok(())
        }
        CheckSpec::ContentMatches {
            path,
            pattern,
            regex,
            ..
        }
        | CheckSpec::ContentAbsent {
            path,
            pattern,
            regex,
            ..
        } => {
            cx.path(&f("path"), path)?;
            if pattern.is_empty() {
                return Err(cx.err(f("pattern"), "the pattern is empty"));
            }
            if *regex {
                cx.regex(&f("pattern"), pattern)?;
            }
            Ok(())
        }
        CheckSpec::FileEquals {
            path,
            expected_file,
            ..
        } => {
            cx.path(&f("path"), path)?;
            let base = cx.source.parent().unwrap_or(Path::new("."));
            inside(cx, &f("expected_file"), base, expected_file)
        }
        CheckSpec::NothingElseChanged {
            allow,
            allow_deleted,
        } => {
            for (j, p) in allow.iter().enumerate() {
                let field = f(&format!("allow[{j}]"));
                cx.path(&field, p)?;
                if inputs.contains(p.as_str()) {
                    return Err(cx.err(
                        field,
                        format!(
                            "`{p}` is a frozen input; a change to it is never allowed (an input \
                             the task deletes goes in `allow_deleted`)"
                        ),
                    ));
                }
            }
            for (j, p) in allow_deleted.iter().enumerate() {
                let field = f(&format!("allow_deleted[{j}]"));
                cx.path(&field, p)?;
                if !inputs.contains(p.as_str()) {
                    return Err(cx.err(
                        field,
                        format!("`{p}` is not an input; only an input can be deleted"),
                    ));
                }
            }
            Ok(())
        }
        CheckSpec::JsonSchema { path, schema } => {
            cx.path(&f("path"), path)?;
            jsonschema::validator_for(schema)
                .map(|_| ())
                .map_err(|e| cx.err(f("schema"), format!("not a valid JSON schema: {e}")))
        }
        CheckSpec::NumericConsistency {
            path,
            stated,
            expected,
            tolerance,
            decimals,
            ..
        } => {
            cx.path(&f("path"), path)?;
            validate_locator(cx, &f("stated"), stated)?;
            if !tolerance.is_finite() || *tolerance < 0.0 {
                return Err(cx.err(f("tolerance"), "must be a finite number >= 0"));
            }
            match (decimals, stated) {
                (Some(n), _) if *n > MAX_DECIMALS => {
                    return Err(cx.err(
                        f("decimals"),
                        format!("{n} is more than the {MAX_DECIMALS} decimals a figure may be asked for"),
                    ));
                }
                (Some(_), Locator::Pointer(_)) => {
                    return Err(cx.err(
                        f("decimals"),
                        "applies to a number written in text (a `regex` locator): a JSON number has no written decimals",
                    ));
                }
                _ => {}
            }
            match expected {
                Computed::Csv {
                    path,
                    op,
                    column,
                    filter,
                } => {
                    cx.input(&f("expected.path"), path, inputs)?;
                    if column.is_none() && *op != crate::checks::Aggregate::Count {
                        return Err(cx.err(f("expected.column"), "needed for every op but `count`"));
                    }
                    if let Some(filter) = filter {
                        if filter.column.is_empty() {
                            return Err(cx.err(f("expected.filter.column"), "empty"));
                        }
                    }
                    Ok(())
                }
                Computed::Lines { path, pattern } => {
                    cx.input(&f("expected.path"), path, inputs)?;
                    cx.regex(&f("expected.pattern"), pattern).map(|_| ())
                }
                Computed::Matches {
                    paths, pattern, op, ..
                } => {
                    if paths.is_empty() {
                        return Err(cx.err(f("expected.paths"), "list at least one input"));
                    }
                    for (j, p) in paths.iter().enumerate() {
                        cx.input(&f(&format!("expected.paths[{j}]")), p, inputs)?;
                    }
                    if *op == crate::checks::Aggregate::Count {
                        cx.regex(&f("expected.pattern"), pattern).map(|_| ())
                    } else {
                        cx.capture_regex(&f("expected.pattern"), pattern)
                    }
                }
                Computed::Json { path, pointer } => {
                    cx.input(&f("expected.path"), path, inputs)?;
                    cx.pointer(&f("expected.pointer"), pointer)
                }
            }
        }
        CheckSpec::ReportComplete {
            path,
            headings,
            fields,
            min_words,
            max_words,
            no_other_headings,
            ..
        } => {
            cx.path(&f("path"), path)?;
            if *no_other_headings && headings.is_empty() {
                return Err(cx.err(
                    f("no_other_headings"),
                    "needs the headings it allows: list them in `headings`",
                ));
            }
            for (j, p) in fields.iter().enumerate() {
                if p.is_empty() {
                    return Err(cx.err(f(&format!("fields[{j}]")), "empty field name"));
                }
            }
            if let (Some(lo), Some(hi)) = (min_words, max_words) {
                if lo > hi {
                    return Err(cx.err(f("min_words"), format!("{lo} is above max_words {hi}")));
                }
            }
            if headings.is_empty()
                && fields.is_empty()
                && min_words.is_none()
                && max_words.is_none()
            {
                return Err(cx.err(f("headings"), "declare headings, fields or word bounds"));
            }
            Ok(())
        }
        CheckSpec::ActionsCalled {
            tools: required,
            ordered,
            strict_order,
        } => {
            if required.is_empty() {
                return Err(cx.err(f("tools"), "list at least one tool"));
            }
            if *strict_order && !*ordered {
                return Err(cx.err(
                    f("strict_order"),
                    "`strict_order` refines `ordered`; set `ordered: true` as well",
                ));
            }
            for (j, call) in required.iter().enumerate() {
                let t = call.tool();
                if let Some(p) = call.path() {
                    cx.path(&f(&format!("tools[{j}].path")), p)?;
                }
                if !tools.contains(t) {
                    return Err(cx.err(
                        f(&format!("tools[{j}]")),
                        format!("`{t}` is not in the mission's tool list, so this check could never pass"),
                    ));
                }
            }
            Ok(())
        }
        CheckSpec::VariableSet { name, .. } => {
            if name.is_empty() {
                return Err(cx.err(f("name"), "empty variable name"));
            }
            Ok(())
        }
        CheckSpec::Grounded {
            path,
            claim,
            sources,
        } => {
            cx.path(&f("path"), path)?;
            validate_locator(cx, &f("claim"), claim)?;
            if inputs.is_empty() {
                return Err(cx.err(
                    f("sources"),
                    "a grounded check needs frozen inputs to search",
                ));
            }
            for (j, s) in sources.iter().enumerate() {
                cx.input(&f(&format!("sources[{j}]")), s, inputs)?;
            }
            Ok(())
        }
        CheckSpec::Decision {
            prompt,
            labels,
            expected,
            path,
            floor_bps,
            inputs: prompt_inputs,
            section,
            ..
        } => {
            for (j, i) in prompt_inputs.iter().enumerate() {
                cx.input(&f(&format!("inputs[{j}]")), i, inputs)?;
            }
            if section.is_some() && path.is_none() {
                return Err(cx.err(f("section"), "a section needs the artifact `path` it is in"));
            }
            if prompt.trim().is_empty() {
                return Err(cx.err(f("prompt"), "the prompt is empty"));
            }
            let set: BTreeSet<&str> = labels.iter().map(String::as_str).collect();
            if labels.len() < 2 || set.len() != labels.len() || set.contains("") {
                return Err(cx.err(f("labels"), "at least two distinct, non-empty labels"));
            }
            if !set.contains(expected.as_str()) {
                return Err(cx.err(
                    f("expected"),
                    format!("`{expected}` is not one of the labels"),
                ));
            }
            if let Some(p) = path {
                cx.path(&f("path"), p)?;
            }
            if let Some(bps) = floor_bps {
                if !(crate::checks::SEMANTIC_FLOOR_BPS..=10_000).contains(bps) {
                    return Err(cx.err(
                        f("floor_bps"),
                        format!(
                            "must be in {}..=10000: a lower floor would weaken the judge",
                            crate::checks::SEMANTIC_FLOOR_BPS
                        ),
                    ));
                }
            }
            Ok(())
        }
    }
}

/// `rel` (already in normal form) names a regular file that is really below `dir`: not a
/// link, and not reached through one that leads out.
fn inside(cx: &Ctx<'_>, field: &str, dir: &Path, rel: &str) -> Result<(), MissionError> {
    cx.path(field, rel)?;
    let file = dir.join(rel);
    let meta = std::fs::symlink_metadata(&file)
        .map_err(|e| cx.err(field, format!("missing file: {}: {e}", file.display())))?;
    if !meta.file_type().is_file() {
        return Err(cx.err(
            field,
            format!(
                "{} is not a regular file (a link or a folder)",
                file.display()
            ),
        ));
    }
    let real_dir = dir
        .canonicalize()
        .map_err(|e| cx.err(field, format!("cannot resolve {}: {e}", dir.display())))?;
    let real = file
        .canonicalize()
        .map_err(|e| cx.err(field, format!("cannot resolve {}: {e}", file.display())))?;
    if !real.starts_with(&real_dir) {
        return Err(cx.err(
            field,
            format!(
                "{} leads outside {} (through a linked folder)",
                file.display(),
                dir.display()
            ),
        ));
    }
    Ok(())
}

fn validate_locator(cx: &Ctx<'_>, field: &str, loc: &Locator) -> Result<(), MissionError> {
    match loc {
        Locator::Regex(r) => cx.capture_regex(&format!("{field}.regex"), r),
        Locator::Pointer(p) => cx.pointer(&format!("{field}.pointer"), p),
    }
}
