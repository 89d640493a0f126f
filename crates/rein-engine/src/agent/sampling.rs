//! Verified sampling: at the step that writes the deliverable, candidate writes are drawn until
//! one is clean or K were drawn; each is judged on a scratch view of the workspace (the
//! workspace as it is, with that one candidate's change laid over it) by the contract's
//! deterministic checks, and the best is the one proposed through the gate. The person still
//! sees one diff; the model never sees the scores.

use std::collections::BTreeSet;

use rein_protocol::ChatMessage;
use rein_workspace::Proposal;
use serde::Serialize;

use super::looped::{loop_note, looped_list, LoopedList};
use super::step::{Asked, Reply};

use crate::checks::{evaluate, normalize_rel, TraceEntry, Verdict, World, WorldError};
use crate::mission::FrozenContract;

/// The most candidates one write may draw (`--samples`, a mission's `budgets.samples`).
pub const MAX_SAMPLES: u32 = 8;

/// The temperature of the extra draws: the first draw keeps the actor's own (it is what a run
/// without sampling would have written), the others need to differ from it.
pub const SAMPLE_TEMPERATURE: f32 = 0.7;

/// The seed of an extra draw (`purpose` names the redraw: sampling, repeat escape): a hash of
/// the run's seed, the step and the draw, so runs with different seeds never share a draw. A
/// sum did: seed + 7919·step + 1000 + draw gave seed 4's third draw to seed 5's second, and two
/// bench "seeds" passed on one and the same reply.
pub fn draw_seed(purpose: &str, run_seed: u32, step: u32, draw: u32) -> u32 {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("rein/{purpose}/{run_seed}/{step}/{draw}"));
    u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]])
}

/// The workspace as it would be after one proposed change, nothing written: reads of the
/// changed file give its post-image, every other read goes to the workspace.
pub struct OverlayWorld<'a> {
    base: &'a dyn World,
    path: String,
    after: Option<Vec<u8>>,
}

impl<'a> OverlayWorld<'a> {
    pub fn new(base: &'a dyn World, proposal: &Proposal) -> Self {
        OverlayWorld {
            base,
            path: proposal.path.as_str().to_string(),
            after: proposal.after.clone(),
        }
    }

    fn is_changed(&self, path: &str) -> bool {
        normalize_rel(path).is_ok_and(|p| p == self.path)
    }
}

impl World for OverlayWorld<'_> {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, WorldError> {
        if self.is_changed(path) {
            return Ok(self.after.clone());
        }
        self.base.read(path)
    }

    fn variable(&self, name: &str) -> Option<serde_json::Value> {
        self.base.variable(name)
    }

    fn files(&self) -> Result<Option<Vec<String>>, WorldError> {
        let Some(files) = self.base.files()? else {
            return Ok(None);
        };
        let mut set: BTreeSet<String> = files.into_iter().collect();
        if self.after.is_some() {
            set.insert(self.path.clone());
        } else {
            set.remove(&self.path);
        }
        Ok(Some(set.into_iter().collect()))
    }
}

/// One candidate of a sampled write, as journaled and reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// 1 is the ordinary draw; the others are the extra ones.
    pub draw: u32,
    pub seed: u32,
    pub temperature: f32,
    /// The tool it called (`None` for an unreadable reply).
    pub tool: Option<String>,
    /// Deciding checks the scratch view passed, and the ids of those it failed (empty when
    /// the candidate could not be judged).
    pub passed_checks: u32,
    pub failed: Vec<String>,
    /// Whether every check passed on the scratch view (decision checks fail closed there).
    pub passed: bool,
    /// Whether every deciding check the scratch view can rule on passed: only semantic checks
    /// (which fail closed there, for every candidate alike) failed. No further draw can do
    /// better, so drawing stops.
    pub clean: bool,
    /// Why the candidate was not judged: not a write of the deliverable, or its change could
    /// not be computed.
    pub skipped: Option<String>,
    /// Rein's note about the draw before, when this draw was shown it (lever `told-draws`).
    pub told: Option<String>,
}

impl Candidate {
    /// Keeps a scratch verdict: the deciding checks passed (the score), those failed,
    /// whether every check passed, and whether all failed ones are among `semantic` (the ids
    /// of the contract's semantic checks).
    pub fn record(&mut self, verdict: &Verdict, semantic: &[String]) {
        let deciding = verdict.checks.iter().filter(|c| !c.advisory);
        self.passed_checks = deciding.clone().filter(|c| c.passed).count() as u32;
        self.failed = deciding
            .filter(|c| !c.passed)
            .map(|c| c.id.clone())
            .collect();
        self.passed = verdict.passed;
        self.clean = verdict.passed || self.failed.iter().all(|id| semantic.contains(id));
    }
}

/// Judges one proposed change on a scratch view: the trace so far plus this write (as the
/// trace would record it once applied), with no decision model (semantic checks fail closed,
/// the same for every candidate).
pub fn judge_candidate(
    contract: &FrozenContract,
    world: &dyn World,
    trace: &[TraceEntry],
    tool: &str,
    proposal: &Proposal,
) -> Verdict {
    let overlay = OverlayWorld::new(world, proposal);
    let mut trace = trace.to_vec();
    trace.push(
        TraceEntry::from_gate(
            tool,
            Some(proposal.path.as_str()),
            rein_protocol::GateOutcome::Executed,
            true,
        )
        .with_written(proposal.after_sha256()),
    );
    evaluate(contract, &overlay, &trace, None)
}

/// The candidate to propose: the highest score, the earliest draw on a tie (so the ordinary
/// draw stands unless another is strictly better). `None` when no candidate was judged.
pub fn best(candidates: &[Candidate]) -> Option<usize> {
    candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.skipped.is_none())
        .fold(None, |best: Option<(usize, u32)>, (i, c)| match best {
            Some((_, s)) if s >= c.passed_checks => best,
            _ => Some((i, c.passed_checks)),
        })
        .map(|(i, _)| i)
}

/// What an extra draw is told of the draw just before it (lever `told-draws`): the draft and the
/// refusal when `write_sections` or `write_json` refused that call before it could be judged
/// (the refusal the next step would show: the same text under two headings, a missing field, a
/// document that breaks the schema), or a note when it was cut off at the reply cap. Only the
/// latest draw counts, as only the reply after a cut one is held short (`short-after-cut`). A judged draw's
/// failed checks are never told (which checks fail is the checklist's to say, with only the
/// facts a model may see), nor a draw skipped for another reason (another tool, a preview the
/// policy keeps back: the step would have run those, not refused them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Told {
    #[default]
    Nothing,
    Refused {
        draft: String,
        why: String,
    },
    /// `looped`: the list the cut draw wrote over again, if it did.
    Cut {
        looped: Option<LoopedList>,
    },
}

impl Told {
    /// What the draw after `asked` is told; `refusal` is the tool's own refusal of it, if any.
    pub fn after(asked: &Asked, refusal: Option<&str>) -> Told {
        match (&asked.reply, refusal) {
            (Reply::Action { .. }, Some(why)) => Told::Refused {
                draft: asked.raw.clone(),
                why: why.to_string(),
            },
            (Reply::FormatError(e), _) if e.cut_at.is_some() => Told::Cut {
                looped: looped_list(&asked.raw),
            },
            _ => Told::Nothing,
        }
    }

    /// Whether the draw before was cut off at the reply cap.
    pub fn cut(&self) -> bool {
        matches!(self, Told::Cut { .. })
    }

    /// The items a cut draw wrote before its list began again.
    pub fn looped_items(&self) -> Option<usize> {
        match self {
            Told::Cut { looped } => looped.as_ref().map(|l| l.items),
            _ => None,
        }
    }

    /// Rein's note to the next draw, if any.
    pub fn note(&self, reply_cap: u32) -> Option<String> {
        match self {
            Told::Nothing => None,
            Told::Refused { why, .. } => Some(format!(
                "Rein checked that call before running it and refused it: {why}. Make the call \
                 again with that fixed."
            )),
            Told::Cut { looped } => Some(format!(
                "A draft of this reply ran past the {reply_cap}-token reply cap and was cut \
                 off, so nothing was done. Make the call shorter: one short sentence of thought \
                 and short texts.{}",
                looped
                    .as_ref()
                    .map_or(String::new(), |l| loop_note(l, false))
            )),
        }
    }

    /// The messages that follow the run's transcript for the next draw: the refused draft as
    /// the model's own reply, then Rein's note.
    pub fn messages(&self, reply_cap: u32) -> Vec<ChatMessage> {
        let draft = match self {
            Told::Refused { draft, .. } => Some(ChatMessage::assistant(draft.clone())),
            _ => None,
        };
        draft
            .into_iter()
            .chain(self.note(reply_cap).map(ChatMessage::user))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(draw: u32, passed_checks: u32, skipped: bool) -> Candidate {
        Candidate {
            draw,
            seed: draw,
            temperature: 0.1,
            tool: Some("create_file".into()),
            passed_checks,
            failed: vec![],
            passed: false,
            clean: false,
            skipped: skipped.then(|| "not a write".to_string()),
            told: None,
        }
    }

    fn proposal(path: &str, after: Option<&str>) -> Proposal {
        Proposal::new(
            rein_workspace::RelPath::parse(path).unwrap(),
            Some(b"before".to_vec()),
            after.map(|a| a.as_bytes().to_vec()),
        )
    }

    /// The scratch view shows the candidate's post-image under every spelling of its path,
    /// and only there: a look-alike name, another case, a prefix, a traversal or a folder of
    /// the same name read the workspace as it is.
    #[test]
    fn the_overlay_changes_exactly_the_candidates_file() {
        let base = crate::checks::MemWorld::new()
            .with_file("out/summary.md", "old")
            .with_file("out/summary.md.bak", "bak")
            .with_file("OUT/Summary.md", "other")
            .with_file("notes/a.md", "input");
        let p = proposal("./out//summary.md", Some("new"));
        let o = OverlayWorld::new(&base, &p);
        for same in [
            "out/summary.md",
            "./out/summary.md",
            "out//summary.md",
            "out/./summary.md",
        ] {
            assert_eq!(
                o.read(same).unwrap().as_deref(),
                Some(&b"new"[..]),
                "{same}"
            );
        }
        for (other, bytes) in [
            ("out/summary.md.bak", Some(&b"bak"[..])),
            ("OUT/Summary.md", Some(&b"other"[..])),
            ("notes/a.md", Some(&b"input"[..])),
            ("out/summary.m", None),
            ("out/summary.md\u{200b}", None),
        ] {
            assert_eq!(o.read(other).unwrap().as_deref(), bytes, "{other}");
        }
        for refused in [
            "out/../out/summary.md",
            "/out/summary.md",
            "out\\summary.md",
        ] {
            assert!(o.read(refused).is_err(), "{refused}");
        }
        let files = o.files().unwrap().unwrap();
        assert_eq!(files.iter().filter(|f| *f == "out/summary.md").count(), 1);
        assert_eq!(files.len(), 4, "{files:?}");

        // A deletion: the file is gone from reads and from the listing, nothing else is.
        let d = proposal("out/summary.md", None);
        let o = OverlayWorld::new(&base, &d);
        assert_eq!(o.read("out/summary.md").unwrap(), None);
        assert_eq!(
            o.read("out/summary.md.bak").unwrap().as_deref(),
            Some(&b"bak"[..])
        );
        let files = o.files().unwrap().unwrap();
        assert!(!files.contains(&"out/summary.md".to_string()), "{files:?}");
        assert_eq!(files.len(), 3, "{files:?}");
    }

    /// Within a run no two extra draws share a seed, and across a bench's seeds the same step
    /// and draw never does (the sum it replaces made seed 4's third draw seed 5's second); the
    /// two purposes differ; the same inputs give the same seed.
    #[test]
    fn draw_seeds_of_different_runs_steps_and_draws_differ() {
        use std::collections::HashSet;
        for purpose in ["verified-sampling", "repeat-escape"] {
            for run_seed in 0..20 {
                let mut one_run = HashSet::new();
                for step in 1..64 {
                    for draw in 1..=MAX_SAMPLES {
                        assert!(one_run.insert(draw_seed(purpose, run_seed, step, draw)));
                    }
                }
            }
            for step in 1..64 {
                for draw in 1..=MAX_SAMPLES {
                    let across: HashSet<u32> = (0..200)
                        .map(|r| draw_seed(purpose, r, step, draw))
                        .collect();
                    assert_eq!(across.len(), 200, "{purpose} step {step} draw {draw}");
                }
            }
        }
        assert_ne!(
            draw_seed("verified-sampling", 4, 4, 3),
            draw_seed("repeat-escape", 4, 4, 3)
        );
        assert_eq!(
            draw_seed("verified-sampling", 4, 4, 3),
            draw_seed("verified-sampling", 4, 4, 3)
        );
    }

    #[test]
    fn the_first_draw_stands_on_a_tie_and_a_strictly_better_one_wins() {
        assert_eq!(best(&[cand(1, 3, false), cand(2, 3, false)]), Some(0));
        assert_eq!(best(&[cand(1, 3, false), cand(2, 4, false)]), Some(1));
        assert_eq!(
            best(&[cand(1, 9, true), cand(2, 1, false), cand(3, 0, false)]),
            Some(1)
        );
        assert_eq!(best(&[cand(1, 9, true)]), None);
        assert_eq!(best(&[]), None);
    }
}
