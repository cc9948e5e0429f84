//! The verdict every printer renders, and the types it is made of.
//!
//! [`GateVerdict`] is the one verdict type: `retrygate check` fills it with
//! the evidence and the facts it judged, and a scan (`retrygate scan`) is a
//! verdict with no evidence and no facts ([`GateVerdict::from_scan`]). Both
//! are decided by [`super::decide`], once; the printer (`crate::printer`)
//! only renders them.

use serde::{Deserialize, Serialize};

use super::agent::AgentDecision;
use super::{Decision, ReplaySummary, SignOffResult};
use crate::config::Enforcement;
use crate::finding::{Finding, Note};
use crate::ledger::LedgerReport;

/// The outcome the exit code and the check conclusion follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Nothing blocks (exit 0, check conclusion `success`).
    Pass,
    /// Something blocks (exit 1, check conclusion `failure`).
    Block,
}

impl Verdict {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Block => "block",
        }
    }
}

/// Why the gate blocks, as a stable code (`reasons[].code` in the JSON),
/// each with the one-line fix the comment and the terminal show next to it.
///
/// The fix text is written for a Markdown reader and a terminal alike:
/// commands are in backticks, which the Markdown printer turns into code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReasonCode {
    /// A finding of severity `error` (a retry regression) in the change.
    BlockingFindings,
    /// A file could not be analysed, so findings may be missing.
    ScanIncomplete,
    /// The change edits the gate itself (its config or workflow).
    GateConfigChanged,
    /// An agent's change touches `protected_paths`.
    ProtectedPath,
    /// An agent's change carries no tool-call ledger.
    LedgerMissing,
    /// The ledger does not verify against the change.
    LedgerInvalid,
    /// Retry or HTTP-client code changed and no 429 replay was given.
    ReplayMissing,
    /// The replay report cannot vouch for this head.
    ReplayRejected,
    /// `replay.command` could not run.
    ReplayNotRun,
    /// The 429 replay passed its checks, but no client retried in it, so it
    /// is no evidence about the retry code.
    ReplayNoRetry,
    /// The 429 replay ran and failed.
    ReplayFailed,
    /// `replay.require_coverage`: the replay never called an operation
    /// whose retry the change touched.
    ReplayCoverage,
    /// A sign-off was given for another commit (or an unusable one).
    SignOffRejected,
}

impl ReasonCode {
    /// Every code, in the order [`super::decide`] lists reasons.
    pub(crate) const ALL: [ReasonCode; 13] = [
        ReasonCode::GateConfigChanged,
        ReasonCode::ProtectedPath,
        ReasonCode::BlockingFindings,
        ReasonCode::ScanIncomplete,
        ReasonCode::LedgerMissing,
        ReasonCode::LedgerInvalid,
        ReasonCode::ReplayMissing,
        ReasonCode::ReplayRejected,
        ReasonCode::ReplayNotRun,
        ReasonCode::ReplayNoRetry,
        ReasonCode::ReplayFailed,
        ReasonCode::ReplayCoverage,
        ReasonCode::SignOffRejected,
    ];

    /// The stable id, as in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::BlockingFindings => "blocking-findings",
            ReasonCode::ScanIncomplete => "scan-incomplete",
            ReasonCode::GateConfigChanged => "gate-config-changed",
            ReasonCode::ProtectedPath => "protected-path",
            ReasonCode::LedgerMissing => "ledger-missing",
            ReasonCode::LedgerInvalid => "ledger-invalid",
            ReasonCode::ReplayMissing => "replay-missing",
            ReasonCode::ReplayRejected => "replay-rejected",
            ReasonCode::ReplayNotRun => "replay-not-run",
            ReasonCode::ReplayNoRetry => "replay-no-retry",
            ReasonCode::ReplayFailed => "replay-failed",
            ReasonCode::ReplayCoverage => "replay-coverage",
            ReasonCode::SignOffRejected => "sign-off-rejected",
        }
    }

    /// What to do about it, in one line. A reason may carry a more precise
    /// fix of its own (a ledger problem names the record to repair).
    pub(crate) fn fix(self) -> &'static str {
        match self {
            ReasonCode::BlockingFindings => {
                "fix each finding in the table; `retrygate explain KIND` says how for each kind"
            }
            ReasonCode::ScanIncomplete => {
                "make the files parseable (see the blocking notes), or have a maintainer sign off"
            }
            ReasonCode::GateConfigChanged => {
                "revert those files, or have a maintainer review them and sign off on this head; the base's config stays in force either way"
            }
            ReasonCode::ProtectedPath => {
                "move the change out of the protected paths, or have a maintainer review it and sign off on this head"
            }
            ReasonCode::LedgerMissing => {
                "record the agent's session with `retrygate ledger hook` (docs/ledger.md) and commit the ledger or pass `--ledger PATH`"
            }
            ReasonCode::LedgerInvalid => "verify it with `retrygate ledger verify` and fix what it names",
            ReasonCode::ReplayMissing => {
                "run `retrygate replay --report replay.json -- CMD` on this head and pass `--replay-report replay.json`, or set `replay.command` in the base config"
            }
            ReasonCode::ReplayRejected => {
                "re-run the replay on this head commit in the same job (`retrygate replay --report PATH`) and pass that report unmodified"
            }
            ReasonCode::ReplayNotRun => {
                "fix `replay.command` in the base config (it must exit, and reach `$RETRYGATE_URL`), or pass `--replay-report`"
            }
            ReasonCode::ReplayNoRetry => {
                "make `replay.command` run the changed retry code against `$RETRYGATE_URL` (a client that gives up at its first 429 never reaches it); if giving up is what the client should do, a maintainer signs off on this head"
            }
            ReasonCode::ReplayFailed => {
                "make the client honour Retry-After with jitter on top, cap its attempts, and never retry a POST without an Idempotency-Key; then replay again"
            }
            ReasonCode::ReplayCoverage => {
                "make `replay.command` call each operation the replay section says it never called, against `$RETRYGATE_URL`; or a maintainer who has checked that operation signs off on this head"
            }
            ReasonCode::SignOffRejected => {
                "sign off on the current head commit (see Sign-off below); a sign-off holds for the commit it names only"
            }
        }
    }
}

impl std::fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ReasonCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// One reason the gate blocks (or would block, in advisory mode or under a
/// sign-off), with what to do about it in one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reason {
    /// The stable code (`replay-no-retry`, ...), for scripts.
    pub code: ReasonCode,
    /// What blocks, in one line.
    pub message: String,
    /// How to fix it, one line: the code's own fix unless the evidence names
    /// a more precise one.
    pub(crate) fix: String,
}

impl Reason {
    /// A reason with its code's fix.
    pub(crate) fn new(code: ReasonCode, message: impl Into<String>) -> Reason {
        Reason { code, message: message.into(), fix: code.fix().to_string() }
    }

    /// A reason whose evidence names its own fix.
    pub(crate) fn with_fix(code: ReasonCode, message: impl Into<String>, fix: impl Into<String>) -> Reason {
        Reason { code, message: message.into(), fix: fix.into() }
    }
}

/// The facts a gate verdict rests on (`facts` in the JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateFacts {
    /// The base as given, and the commit it resolved to.
    pub base: String,
    /// The commit the base resolved to.
    pub base_sha: String,
    /// The merge base of base and head, where the diff starts.
    pub merge_base: String,
    /// The head commit (full SHA).
    pub head: String,
    /// The head branch, when known.
    pub head_branch: Option<String>,
    /// The pull request's author, when known.
    pub author: Option<String>,
    /// The pull request's labels.
    pub labels: Vec<String>,
    /// Whether it is an agent's, and why.
    pub agent: AgentDecision,
    /// Where the config came from (always the base commit, or the defaults).
    pub config_source: String,
    /// Enforce or advisory.
    pub mode: Enforcement,
}

/// The evidence (`evidence` in the JSON); `null` where it was not demanded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The ledger's verification.
    pub ledger: Option<LedgerReport>,
    /// The replay's outcome.
    pub replay: Option<ReplaySummary>,
}

/// The verdict: what `retrygate check --format json` prints and every
/// printer renders. `verdict`, `findings` and `notes` are shaped exactly as
/// `retrygate scan`'s JSON, which prints only those three.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateVerdict {
    /// Pass or block.
    pub verdict: Verdict,
    /// The scan's findings and the policy's own.
    pub findings: Vec<Finding>,
    /// Everything said out loud that is not a finding.
    pub notes: Vec<Note>,
    /// What blocks (or would), each with its fix.
    pub reasons: Vec<Reason>,
    /// The ledger and replay, where demanded.
    pub evidence: Evidence,
    /// `None` for a scan: no pull request was judged, only a diff.
    pub facts: Option<GateFacts>,
    /// What became of a sign-off, when one was given.
    pub sign_off: Option<SignOffResult>,
}

impl GateVerdict {
    /// A decision with what it judged.
    pub fn new(
        decision: Decision,
        findings: Vec<Finding>,
        notes: Vec<Note>,
        evidence: Evidence,
        facts: Option<GateFacts>,
    ) -> GateVerdict {
        GateVerdict {
            verdict: decision.verdict,
            findings,
            notes,
            reasons: decision.reasons,
            evidence,
            facts,
            sign_off: decision.sign_off,
        }
    }

    /// A scan's verdict: [`super::decide`] on the findings and notes alone,
    /// with no evidence demanded, in enforce mode. It blocks on any `error`
    /// finding and any blocking note (something could not be analysed, so
    /// findings may be missing).
    pub fn from_scan(findings: Vec<Finding>, notes: Vec<Note>) -> GateVerdict {
        let nobody = AgentDecision { is_agent: false, because: Vec::new() };
        let replay = ReplaySummary::not_required("a scan judges the diff only");
        let decision = super::decide(&super::DecisionInput {
            mode: Enforcement::Enforce,
            head: "",
            findings: &findings,
            notes: &notes,
            agent: &nobody,
            ledger: None,
            replay: &replay,
            sign_off: None,
        });
        GateVerdict::new(decision, findings, notes, Evidence::default(), None)
    }

    /// A verdict decided elsewhere (a published one read back), carried with
    /// its findings only, for printers that show findings (SARIF, workflow
    /// commands).
    pub(crate) fn findings_only(verdict: Verdict, findings: Vec<Finding>) -> GateVerdict {
        GateVerdict {
            verdict,
            findings,
            notes: Vec::new(),
            reasons: Vec::new(),
            evidence: Evidence::default(),
            facts: None,
            sign_off: None,
        }
    }

    /// Whether this is a scan's verdict: no pull request facts, no evidence.
    pub(crate) fn is_scan(&self) -> bool {
        self.facts.is_none()
    }

    /// The sign-off that lifted the block, if one did.
    pub(crate) fn accepted_sign_off(&self) -> Option<&SignOffResult> {
        self.sign_off.as_ref().filter(|s| s.accepted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Kind;

    #[test]
    fn every_code_serialises_as_its_id_and_has_a_fix() {
        for code in ReasonCode::ALL {
            assert_eq!(serde_json::to_value(code).unwrap(), serde_json::json!(code.as_str()));
            assert!(!code.fix().is_empty() && !code.fix().ends_with('.'), "{code}");
        }
        assert_eq!(ReasonCode::ReplayFailed, "replay-failed");
    }

    #[test]
    fn a_scan_blocks_on_errors_and_blocking_notes_only() {
        let error = Finding::new(Kind::JitterRemoved, "rust/x", "src/a.rs", 3);
        let warning = Finding::new(Kind::RetryWithoutJitter, "rust/y", "src/a.rs", 5);
        let v = GateVerdict::from_scan(vec![error, warning.clone()], vec![]);
        assert_eq!(v.verdict, Verdict::Block);
        assert_eq!(v.reasons[0].code, ReasonCode::BlockingFindings);
        assert!(v.is_scan());
        assert_eq!(GateVerdict::from_scan(vec![warning], vec![]).verdict, Verdict::Pass);
        let v = GateVerdict::from_scan(vec![], vec![Note::blocking(Some("a.rs"), "could not parse")]);
        assert_eq!((v.verdict, v.reasons[0].code), (Verdict::Block, ReasonCode::ScanIncomplete));
    }
}
