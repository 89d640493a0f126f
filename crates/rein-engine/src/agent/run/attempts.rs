//! Attempts: a finish judged, the retry's feedback, monotone attempts' undo of a worse version.

use super::*;

impl<'a> Agent<'a> {
    /// Attempts until a pass, a stop, or the attempt cap. Returns the end, the last verdict,
    /// and whether the last finish was accepted.
    pub(super) fn attempts(
        &mut self,
        st: &mut State,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<(RunEnd, Option<Verdict>, bool), AgentError> {
        let limits = self.options.limits;
        let mut last: Option<Verdict> = None;
        // `monotone-attempts`: `last` is the best version's verdict (what is on disk after an
        // undo), and `restored` what the last undo did, for the next attempt's feedback.
        let monotone = self.options.levers.monotone_attempts && !self.options.memory;
        let mut restored: Option<Restored> = None;
        for n in 1..=limits.attempts {
            // Every attempt judges against the frozen copy; a file edited on disk since it was
            // frozen is refused rather than silently ignored or silently adopted.
            if let Err(e) = self.env.contract.verify_unchanged(self.env.mission_file) {
                return Ok((
                    RunEnd::ContractChanged {
                        message: e.to_string(),
                    },
                    last,
                    false,
                ));
            }
            let id = self.env.journal.begin_attempt(self.env.run, STRATEGY)?;
            st.attempt = n;
            st.stalled = 0;
            st.attempt_id = Some(id);
            st.attempt_changes.clear();
            st.figures.attempts = n;
            on_event(&AgentEvent::AttemptStarted { attempt: n });
            if let Some(v) = &last {
                if monotone {
                    // A fresh start from the deliverable as it stands, not from the steps
                    // that led to it.
                    let mut feedback = self.monotone_feedback(v, restored.take().as_ref(), st)
                        + &self.finish_withheld(st, n)?;
                    st.transcript.restart();
                    // Lever `file-notes`: the fresh transcript has the notes, not the files.
                    feedback.push_str(&self.file_notes_message(st));
                    st.transcript.push_feedback(
                        ChatMessage::user(feedback),
                        format!("attempt {n} began from the current deliverable"),
                    );
                } else {
                    let feedback = if self.options.memory {
                        memory_retry_feedback(v)
                    } else {
                        let quotes = self.quotes_source_lines(v).then(|| read_whole(st));
                        retry_feedback(v, quotes.as_deref(), self.retry_fixers())
                            + &self.finish_withheld(st, n)?
                    };
                    st.transcript.push_feedback(
                        ChatMessage::user(feedback),
                        format!("attempt {n} began after failed checks"),
                    );
                }
            } else if self.options.plan {
                if let Some(end) = self.plan(st, on_event)? {
                    self.env
                        .journal
                        .finish_attempt(id, &format!("stopped: {}", end.message()))?;
                    return Ok((end, last, false));
                }
            }
            match self.act(st, on_event)? {
                Some(end) => {
                    self.env
                        .journal
                        .finish_attempt(id, &format!("stopped: {}", end.message()))?;
                    // For the record: what the world looks like when the run stopped (with
                    // `monotone-attempts`, after undoing a stopped attempt that made it worse).
                    let verdict = match end {
                        RunEnd::ContractChanged { .. } | RunEnd::ApprovalUnavailable { .. } => None,
                        _ => {
                            let v = self.judge(st, on_event)?;
                            Some(match last.as_ref().filter(|_| monotone) {
                                Some(best) if !regressions(best, &v).is_empty() => {
                                    let broke = regressions(best, &v);
                                    self.undo_attempt(st, n, broke, on_event)?.0
                                }
                                _ => v,
                            })
                        }
                    };
                    return Ok((end, verdict, false));
                }
                None => {
                    let verdict = self.judge(st, on_event)?;
                    let mut outcome = if verdict.passed {
                        "passed".to_string()
                    } else {
                        let deciding = verdict.checks.iter().filter(|c| !c.advisory);
                        format!(
                            "failed: {} of {} checks",
                            deciding.clone().filter(|c| !c.passed).count(),
                            deciding.count()
                        )
                    };
                    let verdict = match last.as_ref().filter(|_| monotone) {
                        Some(best) if !regressions(best, &verdict).is_empty() => {
                            let broke = regressions(best, &verdict);
                            outcome.push_str(&format!(
                                "; undone: it failed {} that the previous version passed",
                                broke.join(", ")
                            ));
                            let (after, r) = self.undo_attempt(st, n, broke, on_event)?;
                            restored = Some(r);
                            after
                        }
                        _ => verdict,
                    };
                    self.env.journal.finish_attempt(id, &outcome)?;
                    on_event(&AgentEvent::AttemptFinished {
                        attempt: n,
                        outcome,
                    });
                    if verdict.passed {
                        return Ok((RunEnd::Judged, Some(verdict), true));
                    }
                    st.failed_as_is = self.failed_as_is(&verdict);
                    last = Some(verdict);
                }
            }
        }
        let hit = CapHit::Attempts {
            limit: limits.attempts,
        };
        self.cap(st, &hit, on_event)?;
        // The last finish was accepted and judged; the cap only stops a further retry.
        Ok((RunEnd::Judged, last, true))
    }

    /// Undoes every change attempt `n` applied, newest first, through the journal's undo (each
    /// undo is itself a journaled change a person sees and can undo), then judges the world
    /// again: the verdict is what is on disk, the previous version when every undo went
    /// through. An undo that is refused (the file changed since) stops the rest and is said.
    pub(super) fn undo_attempt(
        &mut self,
        st: &mut State,
        n: u32,
        broke: Vec<String>,
        on_event: &mut dyn FnMut(&AgentEvent),
    ) -> Result<(Verdict, Restored), AgentError> {
        let mut undone = Vec::new();
        let mut error = None;
        for (change, path) in st.attempt_changes.iter().rev() {
            match self.executor.undo_change(*change) {
                Ok(r) => {
                    // The undo is a change of this run: the judge sees it in the trace. What it
                    // restored counts as this run's work only when this run wrote exactly
                    // that content before (else `written_this_run` fails, as it should).
                    let now = self
                        .env
                        .world
                        .read(&r.path)
                        .ok()
                        .flatten()
                        .map(|b| crate::mission::sha256_hex(&b));
                    let ours = now.is_none()
                        || st.trace.iter().any(|e| {
                            e.executed() && e.mutated_path(&r.path) && e.written_sha256 == now
                        });
                    st.trace.push(
                        TraceEntry::new("undo", Some(&r.path), "executed", true)
                            .with_written(if ours { now } else { None }),
                    );
                    undone.push(UndoneChange {
                        change: change.0,
                        undo_change: r.change_id.0,
                        path: r.path,
                        diff: r.diff,
                    });
                }
                Err(e) => {
                    error = Some(format!("change {change} to \"{path}\" was not undone: {e}"));
                    break;
                }
            }
        }
        st.attempt_changes.clear();
        self.env.journal.append_event(
            Some(self.env.run),
            "attempt_undone",
            &json!({"attempt": n, "broke": broke, "undone": undone, "error": error}),
        )?;
        on_event(&AgentEvent::AttemptUndone {
            attempt: n,
            broke: broke.clone(),
            undone,
            error: error.clone(),
        });
        let verdict = self.judge(st, on_event)?;
        Ok((
            verdict,
            Restored {
                attempt: n,
                broke,
                error,
            },
        ))
    }

    /// Whether a retry after `v` quotes input lines (lever `source-lines`): not when a failed
    /// check counts lines or rows, since the lines another check quotes could be those very
    /// lines and so tell the count.
    pub(super) fn quotes_source_lines(&self, v: &Verdict) -> bool {
        use crate::checks::{Aggregate, Computed};
        let counts = |spec: &CheckSpec| {
            matches!(
                spec,
                CheckSpec::NumericConsistency {
                    expected: Computed::Lines { .. }
                        | Computed::Matches {
                            op: Aggregate::Count,
                            ..
                        }
                        | Computed::Csv {
                            op: Aggregate::Count,
                            ..
                        },
                    ..
                }
            )
        };
        let checks = &self.env.contract.mission.checks;
        self.options.levers.source_lines
            && !v
                .checks
                .iter()
                .filter(|c| !c.passed && !c.advisory)
                .any(|c| checks.iter().any(|k| k.id == c.id && counts(&k.spec)))
    }

    /// What the model reads when a `monotone-attempts` retry starts: what the last undo did,
    /// each failed check as its requirement in plain words and the facts it found (never a
    /// value computed from the inputs, never a gold file), the deliverable as it stands, and
    /// the ask for the smallest edit.
    pub(super) fn monotone_feedback(
        &self,
        v: &Verdict,
        restored: Option<&Restored>,
        st: &State,
    ) -> String {
        let table_facts = &st.table_facts;
        let c = self.env.contract;
        let path = &c.mission.required_artifact;
        let mut s = String::new();
        if let Some(r) = restored {
            s.push_str(&format!(
                "Your attempt {} made {} fail, which passed before, so its changes were undone \
                 and the better version stands.",
                r.attempt,
                r.broke.join(", ")
            ));
            if let Some(e) = &r.error {
                s.push_str(&format!(" Not everything could be undone: {e}."));
            }
            s.push('\n');
        }
        s.push_str(
            "The harness checked the deliverable on disk. These checks fail (what each requires, \
             and what it found):\n",
        );
        for chk in v.checks.iter().filter(|c| !c.passed && !c.advisory) {
            let wants = c
                .mission
                .checks
                .iter()
                .find(|k| k.id == chk.id)
                .map(|k| self.hinted_requirement(&k.spec))
                .unwrap_or_default();
            let found = crate::agent::prompt::clip(
                &chk.feedback.join("; "),
                crate::agent::prompt::MAX_FAILED_CHECK_CHARS,
            );
            s.push_str(&format!(
                "- {} ({}): requires: {wants} Found: {found}\n",
                chk.id, chk.kind
            ));
        }
        if self.quotes_source_lines(v) {
            s.push_str(&source_lines_note(v, &read_whole(st)));
        }
        match self.env.world.read(path) {
            Ok(Some(bytes)) => {
                let text = crate::agent::prompt::clip(
                    &String::from_utf8_lossy(&bytes),
                    MAX_DELIVERABLE_CHARS,
                );
                // Written whole (lever `whole-rewrite`): as the JSON string replace_file takes,
                // so the text is copied as it is (the 1.5B copied the `<<<` and `>>>` lines into
                // the file on edit-gitignore and edit-crontab).
                s.push_str(&if self.rewrites_whole() {
                    format!(
                        "The deliverable {path} now reads, as the JSON string of replace_file's content:\n{}\n",
                        Value::String(text)
                    )
                } else {
                    format!(
                        "The deliverable {path} now reads, between the lines <<< and >>>:\n<<<\n{text}\n>>>\n"
                    )
                });
            }
            _ => s.push_str(&format!("The deliverable {path} does not exist yet.\n")),
        }
        s.push_str(&earlier_table_facts(table_facts));
        // Lever `combined-totals`: the fresh transcript gets the figures over each set again.
        if self.combines_tables() {
            s.push_str(&self.combined_figures(&st.trace, &st.shown_tables, &mut Vec::new()));
            s.push('\n');
        }
        // Lever `folder-stats`: the counts the failed lines are to be written from.
        if let Some(figures) = &st.folder_figures {
            s.push_str(figures);
            s.push('\n');
        }
        if self.edits_lines() {
            s.push_str(LINE_RETRY_NOTE);
        } else if self.rewrites_whole() {
            s.push_str(WHOLE_RETRY_NOTE);
        } else if self.rewrite_outline().is_some() {
            s.push_str(
                "Keep everything that passes. Make the smallest change that fixes the failed \
                 checks: rewrite_section with the heading of the section to fix and its whole new \
                 text (keep what passes in it), or edit_file with old_text copied exactly from the \
                 text above; do not rewrite the whole file. Then check it and call finish.",
            );
        } else {
            s.push_str(
                "Keep everything that passes. Make the smallest edit that fixes the failed checks: \
                 edit_file with old_text copied exactly from the text above and the new_text to put \
                 in its place; do not rewrite the whole file. Then read it back and call finish.",
            );
        }
        s
    }
}

/// The deciding checks `best` passed that `candidate` does not: a candidate with any is
/// worse, whatever else it fixed (no trade of one check for another).
pub(super) fn regressions(best: &Verdict, candidate: &Verdict) -> Vec<String> {
    best.checks
        .iter()
        .filter(|b| b.passed && !b.advisory)
        .filter(|b| {
            !candidate
                .checks
                .iter()
                .any(|c| c.id == b.id && c.passed && !c.advisory)
        })
        .map(|b| b.id.clone())
        .collect()
}

/// What the model reads when an attempt's finish was accepted but the judge failed it: which
/// checks failed and what the deliverable stated. Never a value computed from the inputs (the
/// expected total, the missing names): those stay in the journal, and the model must get them
/// from the inputs or from a tool that computes them visibly. With `source_lines` (the lever)
/// the input lines the failed checks compared against follow, of the files in `source_lines`.
pub(super) fn retry_feedback(v: &Verdict, source_lines: Option<&[String]>, fixers: &str) -> String {
    let mut s =
        String::from("The harness checked your deliverable on disk and these checks failed:\n");
    for c in v.checks.iter().filter(|c| !c.passed && !c.advisory) {
        let facts = crate::agent::prompt::clip(
            &c.feedback.join("; "),
            crate::agent::prompt::MAX_FAILED_CHECK_CHARS,
        );
        s.push_str(&format!("- {} ({}): {facts}\n", c.id, c.kind));
    }
    if let Some(read) = source_lines {
        s.push_str(&source_lines_note(v, read));
    }
    s.push_str(&format!(
        "Re-read the inputs you need, fix the deliverable ({fixers}), read it back, then call finish again."
    ));
    s
}
