//! The gate's decisions as pure functions: findings + evidence + pull
//! request facts + config in, a verdict with its reasons out. No I/O here;
//! [`crate::gate`] gathers the inputs and [`decide`] judges them, so every
//! rule below is tested with plain values.
//!
//! - [`agent`]: is this an agent's pull request, and which fact says so;
//! - [`paths`]: `gate-config-changed` and `protected-path` findings;
//! - [`limits_findings`]: `limits.max_attempts` over the head's retry policies;
//! - [`decide`]: the verdict, each blocking reason with a one-line fix, and
//!   the sign-off check;
//! - [`verdict`]: the one verdict type every printer renders
//!   ([`GateVerdict`]), its [`Verdict`] and its [`ReasonCode`]s.
//!
//! ```
//! use retrygate::decision::{decide, DecisionInput, ReplaySummary};
//! use retrygate::decision::AgentDecision;
//! let person = AgentDecision { is_agent: false, because: vec![] };
//! let replay = ReplaySummary::not_required("not an agent's pull request");
//! let d = decide(&DecisionInput {
//!     mode: Default::default(), head: "abc", findings: &[], notes: &[],
//!     agent: &person, ledger: None, replay: &replay, sign_off: None,
//! });
//! assert_eq!(d.verdict, retrygate::decision::Verdict::Pass);
//! ```

pub(crate) mod agent;
pub(crate) mod coverage;
pub mod paths;
pub(crate) mod verdict;

use serde::{Deserialize, Serialize};

use crate::config::Enforcement;
use crate::finding::{Finding, Kind, Note};
use crate::ledger::LedgerReport;
pub use agent::AgentDecision;
pub use verdict::{Evidence, GateFacts, GateVerdict, Verdict};
pub(crate) use verdict::{Reason, ReasonCode};

/// Where the replay evidence stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayStatus {
    /// Not demanded (a person's PR, `require.replay: false`, or no retry or
    /// HTTP-client code touched).
    NotRequired,
    /// Demanded, but no report was given and no `replay.command` is set.
    Missing,
    /// A report was given but cannot vouch for this head (another commit,
    /// another scenario, inconsistent or unreadable JSON).
    Rejected,
    /// `replay.command` could not be run.
    NotRun,
    /// The replay ran and its checks passed, but no client sent a request
    /// again after a failed answer: the retry code under review never ran,
    /// so the replay is no evidence about it.
    NoRetry,
    /// The replay ran, a client retried, and every check passed.
    Pass,
    /// A check failed: the clients stormed, lost writes or ignored Retry-After.
    Fail,
}

/// The replay evidence as the verdict JSON shows it (`evidence.replay`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplaySummary {
    pub(crate) status: ReplayStatus,
    /// Why it was (not) demanded.
    pub(crate) why: String,
    /// `--replay-report PATH`, or `replay.command: CMD`.
    pub source: Option<String>,
    /// The commit the report names.
    pub(crate) commit: Option<String>,
    pub(crate) scenario: Option<String>,
    pub(crate) scenario_sha256: Option<String>,
    /// The replay's own failing checks (status `fail`).
    pub reasons: Vec<String>,
    /// Why a report was rejected or not run.
    pub problems: Vec<String>,
    /// What the replay called of the operations whose retries the change
    /// touched; present when a report was judged (pass, fail, no retry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) coverage: Option<coverage::Coverage>,
}

impl ReplaySummary {
    /// Evidence that is not demanded, and why.
    pub fn not_required(why: &str) -> ReplaySummary {
        ReplaySummary::with_status(ReplayStatus::NotRequired, why)
    }

    /// A summary with `status` and nothing else known yet.
    pub fn with_status(status: ReplayStatus, why: &str) -> ReplaySummary {
        ReplaySummary {
            status,
            why: why.to_string(),
            source: None,
            commit: None,
            scenario: None,
            scenario_sha256: None,
            reasons: Vec::new(),
            problems: Vec::new(),
            coverage: None,
        }
    }
}

/// A maintainer's sign-off as given (`--sign-off SHA`, or a comment).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignOffRequest {
    /// The commit it names, as given (a prefix is refused later).
    pub sha: String,
    /// Who signed off, when known.
    pub by: Option<String>,
}

/// What became of a sign-off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignOffResult {
    pub(crate) sha: String,
    pub(crate) by: Option<String>,
    /// It names the head commit, so it lifts every block.
    pub accepted: bool,
    /// Why it was accepted or refused, in one line.
    pub message: String,
}

/// Everything [`decide`] judges.
#[derive(Debug, Clone)]
pub struct DecisionInput<'a> {
    /// Enforce or advisory, from the base config.
    pub mode: Enforcement,
    /// The head commit id (full).
    pub head: &'a str,
    /// The scan's findings plus the decision's own (gate changes, protected
    /// paths, limits).
    pub findings: &'a [Finding],
    /// The scan's notes; blocking ones block.
    pub notes: &'a [Note],
    /// Whether the pull request is an agent's.
    pub agent: &'a AgentDecision,
    /// The verified ledger when one is demanded; `None` when it is not.
    pub ledger: Option<&'a LedgerReport>,
    /// The replay evidence, or why there is none.
    pub replay: &'a ReplaySummary,
    /// A maintainer's sign-off, when one was given.
    pub sign_off: Option<&'a SignOffRequest>,
}

/// The verdict and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Pass or block.
    pub verdict: Verdict,
    /// What blocks; in advisory mode or under an accepted sign-off, what
    /// would have blocked.
    pub reasons: Vec<Reason>,
    pub(crate) sign_off: Option<SignOffResult>,
}

/// Judges one head commit. Fail closed: anything that cannot vouch for the
/// change is a reason; the verdict passes only when no reason is left, or in
/// advisory mode, or under a sign-off naming this head.
pub fn decide(input: &DecisionInput<'_>) -> Decision {
    let mut reasons = finding_reasons(input.findings, input.notes);
    if let Some(ledger) = input.ledger {
        reasons.extend(ledger_reason(ledger));
    }
    reasons.extend(replay_reason(input.replay));
    reasons.extend(coverage_reason(input.replay));

    let sign_off = input.sign_off.map(|s| check_sign_off(s, input.head));
    let accepted = sign_off.as_ref().is_some_and(|s| s.accepted);
    if let Some(s) = sign_off.as_ref().filter(|s| !s.accepted) {
        if !reasons.is_empty() {
            reasons.push(Reason::new(ReasonCode::SignOffRejected, s.message.clone()));
        }
    }
    let verdict = if reasons.is_empty() || accepted || input.mode == Enforcement::Advisory {
        Verdict::Pass
    } else {
        Verdict::Block
    };
    Decision { verdict, reasons, sign_off }
}

/// A sign-off counts only for the commit it names, by its full SHA (a new
/// push voids it). A prefix is refused even when it matches: 7 hex digits
/// are 28 bits, and a second commit with the same prefix can be ground in
/// about a minute on two cores and pushed after the review. The message
/// shows the full SHA to copy.
pub(crate) fn check_sign_off(s: &SignOffRequest, head: &str) -> SignOffResult {
    let sha = s.sha.trim().to_ascii_lowercase();
    let head_lc = head.to_ascii_lowercase();
    let is_hex = !sha.is_empty() && sha.bytes().all(|b| b.is_ascii_hexdigit());
    let accepted = is_hex && sha == head_lc;
    let who = s.by.as_deref().map(|b| format!(" by {b}")).unwrap_or_default();
    let message = if accepted {
        format!("signed off{who} on {head}: every block is lifted for this commit")
    } else if is_hex && sha.len() < head_lc.len() && head_lc.starts_with(&sha) {
        format!(
            "sign-off{who} names `{}`, a prefix of the head: a prefix can be ground to match another commit, so a sign-off names the full SHA; sign off with `{head}`",
            s.sha
        )
    } else {
        format!(
            "sign-off{who} names `{}`, but the current head is {head}: a sign-off holds for the commit it names only, and a new push voids it",
            s.sha
        )
    };
    SignOffResult { sha: s.sha.clone(), by: s.by.clone(), accepted, message }
}

fn finding_reasons(findings: &[Finding], notes: &[Note]) -> Vec<Reason> {
    let mut reasons = Vec::new();
    let blocking = |k: Kind| findings.iter().filter(move |f| f.is_blocking() && f.kind == k);
    let gate: Vec<&Finding> = blocking(Kind::GateConfigChanged).collect();
    if !gate.is_empty() {
        reasons.push(Reason::new(
            ReasonCode::GateConfigChanged,
            format!("the pull request changes the gate itself: {}", list_paths(&gate)),
        ));
    }
    let protected: Vec<&Finding> = blocking(Kind::ProtectedPath).collect();
    if !protected.is_empty() {
        reasons.push(Reason::new(
            ReasonCode::ProtectedPath,
            format!("an agent's pull request changes protected paths: {}", list_paths(&protected)),
        ));
    }
    let other: Vec<&Finding> = findings.iter().filter(|f| f.is_retry_regression()).collect();
    if !other.is_empty() {
        let mut kinds: Vec<&str> = other.iter().map(|f| f.kind.id()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        reasons.push(Reason::with_fix(
            ReasonCode::BlockingFindings,
            format!(
                "{} retry regression{} in the findings table: {}",
                other.len(),
                if other.len() == 1 { "" } else { "s" },
                kinds.join(", ")
            ),
            format!("fix each finding in the table; `retrygate explain {}` says how", kinds[0]),
        ));
    }
    let incomplete = notes.iter().filter(|n| n.blocking).count();
    if incomplete > 0 {
        reasons.push(Reason::new(
            ReasonCode::ScanIncomplete,
            format!(
                "{incomplete} file{} could not be analysed, so findings may be missing",
                if incomplete == 1 { "" } else { "s" }
            ),
        ));
    }
    reasons
}

fn list_paths(findings: &[&Finding]) -> String {
    let mut paths: Vec<&str> = findings.iter().map(|f| f.path.as_str()).collect();
    paths.dedup();
    let shown: Vec<String> = paths.iter().take(5).map(|p| format!("`{p}`")).collect();
    let more = paths.len().saturating_sub(5);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

fn ledger_reason(ledger: &LedgerReport) -> Option<Reason> {
    if !ledger.present {
        // The gate lists the places it looked (docs/ledger.md, "Where the
        // ledger is looked for") in the ledger section; the reason is one
        // whole sentence that says how many.
        if !ledger.looked.is_empty() {
            if let Some(p) = ledger.problems.first() {
                return Some(Reason::with_fix(
                    ReasonCode::LedgerMissing,
                    format!(
                        "no tool-call ledger was found in the {} place{} the ledger section lists",
                        ledger.looked.len(),
                        if ledger.looked.len() == 1 { "" } else { "s" }
                    ),
                    p.fix.clone(),
                ));
            }
        }
        return Some(Reason::new(
            ReasonCode::LedgerMissing,
            format!("ledger missing: no tool-call ledger at {}", ledger.ledger),
        ));
    }
    if ledger.valid {
        return None;
    }
    let total = ledger.problems.len() as u64 + ledger.problems_omitted;
    // The first problem whole (the one to fix first), and the count of the
    // rest, which the ledger section lists.
    let first = ledger.problems.first().map_or_else(String::new, |p| match p.line {
        Some(l) => format!("; line {l}: {}", p.message),
        None => format!("; {}", p.message),
    });
    let fix = ledger.problems.first().map_or(ReasonCode::LedgerInvalid.fix().to_string(), |p| p.fix.clone());
    Some(Reason::with_fix(
        ReasonCode::LedgerInvalid,
        format!(
            "the ledger {} does not hold ({}){first}",
            ledger.ledger,
            crate::text::plural(total as usize, "problem", "problems")
        ),
        fix,
    ))
}

fn replay_reason(r: &ReplaySummary) -> Option<Reason> {
    match r.status {
        ReplayStatus::NotRequired | ReplayStatus::Pass => None,
        ReplayStatus::Missing => Some(Reason::new(
            ReasonCode::ReplayMissing,
            format!("no 429 replay for a change to retry or HTTP-client code ({})", r.why),
        )),
        ReplayStatus::Rejected => Some(Reason::new(
            ReasonCode::ReplayRejected,
            format!("the replay report cannot vouch for this head: {}", problems_sentence(&r.problems)),
        )),
        ReplayStatus::NotRun => Some(Reason::new(
            ReasonCode::ReplayNotRun,
            format!("the replay could not run: {}", problems_sentence(&r.problems)),
        )),
        ReplayStatus::NoRetry => Some(Reason::new(
            ReasonCode::ReplayNoRetry,
            "no client retried in the 429 replay, so the retry code this change touches never ran and the replay shows nothing about it",
        )),
        ReplayStatus::Fail => Some(Reason::new(ReasonCode::ReplayFailed, failed_replay_sentence(&r.reasons))),
    }
}

/// `replay.require_coverage`: a named operation whose retry the change
/// touched and that the replay never called blocks. The coverage lines are
/// shown whether or not it is required; an operation the scan could not
/// name does not block (docs/replay.md, "Coverage", says why).
fn coverage_reason(r: &ReplaySummary) -> Option<Reason> {
    let c = r.coverage.as_ref().filter(|c| c.required)?;
    c.reason().map(|m| Reason::new(ReasonCode::ReplayCoverage, m))
}

/// The replay's first problem whole, and how many more the replay section
/// lists: a reason is never cut, and never repeats the whole list.
fn problems_sentence(problems: &[String]) -> String {
    match problems {
        [] => "the replay section says why".to_string(),
        [one] => one.clone(),
        [first, rest @ ..] => format!(
            "{first}; and {} in the replay section",
            crate::text::plural(rest.len(), "more problem", "more problems")
        ),
    }
}

/// `the 429 replay failed 3 checks: retry-after-honored, desynchronized,
/// no-unsafe-replay`: one whole sentence; each check's detail is in the
/// replay section. A reason reads `[scenario] check: detail` (the replay's
/// own summary lines); one that names no check (a client that could not be
/// judged) is counted apart.
fn failed_replay_sentence(reasons: &[String]) -> String {
    let mut checks: Vec<&str> = Vec::new();
    let mut compared: Vec<&str> = Vec::new();
    let mut undecided = false;
    let mut other = 0;
    for r in reasons {
        // The differential replay's reasons (`retrygate replay --base`):
        // `KIND (seen in the replay, [scenario]): ...` and `could not decide: ...`.
        if let Some((kind, _)) = r.split_once(" (seen in the replay") {
            if crate::finding::Kind::ALL.iter().any(|k| k.id() == kind) {
                if !compared.contains(&kind) {
                    compared.push(kind);
                }
                continue;
            }
        }
        if r.starts_with("could not decide:") {
            undecided = true;
            continue;
        }
        let without_scenario =
            r.strip_prefix('[').and_then(|x| x.split_once("] ")).map_or(r.as_str(), |(_, rest)| rest);
        let named = without_scenario.split_once(':').map(|(c, _)| c.trim());
        match named.and_then(|c| crate::replay::ReplayCheck::ALL.iter().find(|k| k.id() == c)) {
            Some(k) if !checks.contains(&k.id()) => checks.push(k.id()),
            Some(_) => {}
            None => other += 1,
        }
    }
    let mut parts = Vec::new();
    if !checks.is_empty() {
        let n = checks.len();
        parts.push(format!("{n} check{}: {}", if n == 1 { "" } else { "s" }, checks.join(", ")));
    }
    if !compared.is_empty() {
        parts.push(format!("against its base, worse on {}", compared.join(", ")));
    }
    if undecided {
        parts.push("to compare with its base, which did not run".to_string());
    }
    if other > 0 {
        parts.push(format!("{other} client run{} it could not judge", if other == 1 { "" } else { "s" }));
    }
    if parts.is_empty() {
        "the 429 replay failed; the replay section says how".to_string()
    } else {
        format!("the 429 replay failed {}; the replay section has the detail", parts.join(" and "))
    }
}

/// The analyzers find the head's retry policies; the limit is judged here.
pub(crate) use crate::analyze::HeadPolicy;

/// `limits.max_attempts`: every head policy allowed more attempts than the
/// ceiling is a `retry-over-limit` error, raised in this PR or new (the limit
/// is absolute; `retry-count-raised` is kept for a rise against the base, so
/// a new loop is never said to be "raised"). An unbounded one is
/// `retry-unbounded`.
pub(crate) fn limits_findings(max_attempts: u32, policies: &[HeadPolicy]) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in policies {
        let (kind, what) = match p.attempts {
            None => (Kind::RetryUnbounded, "unbounded attempts".to_string()),
            Some(n) if n > f64::from(max_attempts) => {
                (Kind::RetryOverLimit, format!("{} attempts", n as u64))
            }
            Some(_) => continue,
        };
        out.push(
            Finding::new(kind, "policy/max-attempts", &p.path, p.line)
                .lines(p.line, p.end_line)
                .message(format!(
                    "{} retry policy allows {what}, over limits.max_attempts {max_attempts}",
                    p.lib
                ))
                .head(serde_json::json!({"attempts": p.attempts.map_or(serde_json::json!("unbounded"), |n| serde_json::json!(n as u64)), "max_attempts": max_attempts})),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Severity;
    use crate::ledger::Problem;

    const HEAD: &str = "3f2a9c0d1e2b3c4d5e6f708192a3b4c5d6e7f809";

    fn agent() -> AgentDecision {
        AgentDecision { is_agent: true, because: vec!["--agent was given".into()] }
    }

    fn ledger(present: bool, problems: Vec<Problem>) -> LedgerReport {
        LedgerReport {
            ledger: ".tool_ledger.jsonl".into(),
            present,
            valid: present && problems.is_empty(),
            format: present.then(|| "v2".into()),
            records: 3,
            lines: 3,
            problems,
            problems_omitted: 0,
            coverage: None,
            origin: None,
            looked: Vec::new(),
        }
    }

    fn input<'a>(
        findings: &'a [Finding],
        ledger: Option<&'a LedgerReport>,
        replay: &'a ReplaySummary,
        agent: &'a AgentDecision,
    ) -> DecisionInput<'a> {
        DecisionInput {
            mode: Enforcement::Enforce,
            head: HEAD,
            findings,
            notes: &[],
            agent,
            ledger,
            replay,
            sign_off: None,
        }
    }

    fn codes(d: &Decision) -> Vec<&str> {
        d.reasons.iter().map(|r| r.code.as_str()).collect()
    }

    #[test]
    fn a_failed_replay_is_one_whole_sentence_naming_each_failed_check_once() {
        let reasons = [
            "[default] retry-after-honored: 36 retries came sooner than Retry-After asked".to_string(),
            "[default] desynchronized: lockstep: the fleet came back at once".to_string(),
            "[default] no-unsafe-replay: 36 requests replayed".to_string(),
            "[reset-after-write] no-unsafe-replay: 12 requests replayed".to_string(),
            "client 3 exited 2; the replay cannot vouch for this client".to_string(),
        ];
        assert_eq!(
            failed_replay_sentence(&reasons),
            "the 429 replay failed 3 checks: retry-after-honored, desynchronized, no-unsafe-replay and 1 client run it could not judge; the replay section has the detail"
        );
        assert_eq!(
            failed_replay_sentence(&reasons[1..2]),
            "the 429 replay failed 1 check: desynchronized; the replay section has the detail"
        );
        assert_eq!(failed_replay_sentence(&[]), "the 429 replay failed; the replay section says how");
        let compared = [
            "retry-count-raised (seen in the replay, [default]): GET /orders: 3 attempts per request at the base, 10 at the head".to_string(),
            "[default] retry-after-honored: 1 of 3 retries came early".to_string(),
        ];
        assert_eq!(
            failed_replay_sentence(&compared),
            "the 429 replay failed 1 check: retry-after-honored and against its base, worse on retry-count-raised; the replay section has the detail"
        );
        assert_eq!(
            failed_replay_sentence(&["could not decide: the base did not run".to_string()]),
            "the 429 replay failed to compare with its base, which did not run; the replay section has the detail"
        );
        assert_eq!(
            problems_sentence(&["a".into(), "b".into(), "c".into()]),
            "a; and 2 more problems in the replay section"
        );
    }

    #[test]
    fn clean_evidence_passes_and_each_gap_blocks_with_its_own_code() {
        let a = agent();
        let good = ledger(true, vec![]);
        let pass = ReplaySummary::with_status(ReplayStatus::Pass, "retry code changed");
        let d = decide(&input(&[], Some(&good), &pass, &a));
        assert_eq!((d.verdict, d.reasons.len()), (Verdict::Pass, 0));

        let missing = ledger(false, vec![]);
        let d = decide(&input(&[], Some(&missing), &pass, &a));
        assert_eq!((d.verdict, codes(&d)), (Verdict::Block, vec!["ledger-missing"]));
        assert!(
            d.reasons[0].message.starts_with("ledger missing: no tool-call ledger at "),
            "{:?}",
            d.reasons[0]
        );

        let mut looked = ledger(
            false,
            vec![Problem {
                line: None,
                message: "no tool-call ledger found; looked, in order: (1) a; (2) b".into(),
                fix: "upload it".into(),
            }],
        );
        looked.looked = vec!["a".into(), "b".into()];
        let d = decide(&input(&[], Some(&looked), &pass, &a));
        // One whole sentence; the ledger section lists the places.
        assert_eq!(
            d.reasons[0].message,
            "no tool-call ledger was found in the 2 places the ledger section lists"
        );
        assert_eq!(d.reasons[0].fix, "upload it");

        let bad = ledger(
            true,
            vec![Problem { line: Some(4), message: "digest mismatch".into(), fix: "restore it".into() }],
        );
        let d = decide(&input(&[], Some(&bad), &pass, &a));
        assert_eq!(codes(&d), ["ledger-invalid"]);
        assert!(d.reasons[0].message.contains("line 4: digest mismatch"), "{:?}", d.reasons[0]);
        assert_eq!(d.reasons[0].fix, "restore it");

        for (status, code) in [
            (ReplayStatus::Missing, "replay-missing"),
            (ReplayStatus::Rejected, "replay-rejected"),
            (ReplayStatus::NotRun, "replay-not-run"),
            (ReplayStatus::NoRetry, "replay-no-retry"),
            (ReplayStatus::Fail, "replay-failed"),
        ] {
            let r = ReplaySummary::with_status(status, "retry code changed");
            let d = decide(&input(&[], Some(&good), &r, &a));
            assert_eq!((d.verdict, codes(&d)), (Verdict::Block, vec![code]), "{status:?}");
            assert!(!d.reasons[0].fix.is_empty());
        }
    }

    #[test]
    fn findings_block_by_kind_and_warnings_do_not() {
        let a = agent();
        let r = ReplaySummary::not_required("x");
        let findings = vec![
            Finding::new(Kind::JitterRemoved, "rust/backon-jitter", "src/a.rs", 3).message("m"),
            Finding::new(Kind::GateConfigChanged, "policy/gate-config-changed", ".github/retrygate.yml", 0),
            Finding::new(Kind::ProtectedPath, "policy/protected-path", "app/x.rs", 0),
            Finding::new(Kind::RetryWithoutJitter, "rust/x", "src/b.rs", 1),
        ];
        let d = decide(&input(&findings, None, &r, &a));
        assert_eq!(codes(&d), ["gate-config-changed", "protected-path", "blocking-findings"]);
        assert!(
            d.reasons[2].message.starts_with("1 retry regression in the findings table: jitter-removed"),
            "{:?}",
            d.reasons[2]
        );
        let warning_only = &findings[3..];
        assert_eq!(warning_only[0].severity, Severity::Warning);
        assert_eq!(decide(&input(warning_only, None, &r, &a)).verdict, Verdict::Pass);
    }

    #[test]
    fn blocking_notes_block_because_the_scan_was_incomplete() {
        let a = agent();
        let r = ReplaySummary::not_required("x");
        let notes = [Note::blocking(Some("src/a.rs"), "could not parse"), Note::info(None, "fine")];
        let mut i = input(&[], None, &r, &a);
        i.notes = &notes;
        assert_eq!(codes(&decide(&i)), ["scan-incomplete"]);
    }

    #[test]
    fn advisory_mode_reports_everything_and_never_blocks() {
        let a = agent();
        let missing = ledger(false, vec![]);
        let r = ReplaySummary::with_status(ReplayStatus::Fail, "x");
        let mut i = input(&[], Some(&missing), &r, &a);
        i.mode = Enforcement::Advisory;
        let d = decide(&i);
        assert_eq!(d.verdict, Verdict::Pass);
        assert_eq!(codes(&d), ["ledger-missing", "replay-failed"]);
    }

    #[test]
    fn a_sign_off_lifts_every_block_for_its_head_only() {
        let a = agent();
        let missing = ledger(false, vec![]);
        let r = ReplaySummary::with_status(ReplayStatus::Fail, "x");
        let right = SignOffRequest { sha: HEAD.to_uppercase(), by: Some("maint".into()) };
        let mut i = input(&[], Some(&missing), &r, &a);
        i.sign_off = Some(&right);
        let d = decide(&i);
        assert_eq!(d.verdict, Verdict::Pass);
        let s = d.sign_off.unwrap();
        assert!(s.accepted && s.message.contains("by maint"), "{s:?}");
        assert_eq!(codes(&decide(&i)), ["ledger-missing", "replay-failed"], "lifted reasons stay visible");

        let wrong = SignOffRequest { sha: "0000000deadbeef".into(), by: None };
        i.sign_off = Some(&wrong);
        let d = decide(&i);
        assert_eq!(d.verdict, Verdict::Block);
        let s = d.sign_off.clone().unwrap();
        assert!(!s.accepted);
        assert!(s.message.contains(&format!("the current head is {HEAD}")), "{}", s.message);
        assert_eq!(codes(&d).last(), Some(&"sign-off-rejected"));

        for short in ["3f2a9c", "", "not-a-sha", "3f2a9c0d1e2b3c4d5e6f708192a3b4c5d6e7f80900"] {
            let s = check_sign_off(&SignOffRequest { sha: short.into(), by: None }, HEAD);
            assert!(!s.accepted, "{short:?}");
        }
        // A prefix of the head, even a long one, is refused with the SHA to copy.
        for prefix in [&HEAD[..7], &HEAD[..39]] {
            let s = check_sign_off(&SignOffRequest { sha: prefix.into(), by: None }, HEAD);
            assert!(!s.accepted, "{prefix}");
            assert!(
                s.message.contains("a prefix of the head")
                    && s.message.ends_with(&format!("sign off with `{HEAD}`")),
                "{}",
                s.message
            );
        }
        let upper = check_sign_off(&SignOffRequest { sha: HEAD.to_ascii_uppercase(), by: None }, HEAD);
        assert!(upper.accepted, "the full SHA in capitals is the same commit");
    }

    #[test]
    fn a_rejected_sign_off_on_a_passing_change_is_not_a_reason() {
        let a = agent();
        let r = ReplaySummary::not_required("x");
        let wrong = SignOffRequest { sha: "0000000".into(), by: None };
        let mut i = input(&[], None, &r, &a);
        i.sign_off = Some(&wrong);
        let d = decide(&i);
        assert_eq!((d.verdict, d.reasons.len()), (Verdict::Pass, 0));
        assert!(!d.sign_off.unwrap().accepted);
    }

    #[test]
    fn limits_flag_policies_above_the_ceiling_and_unbounded_ones() {
        let p = |attempts| HeadPolicy {
            path: "src/a.rs".into(),
            line: 4,
            end_line: 9,
            attempts,
            lib: "backon".into(),
        };
        let found = limits_findings(3, &[p(Some(3.0)), p(Some(7.0)), p(None)]);
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].kind, found[0].line, found[0].end_line), (Kind::RetryOverLimit, 4, 9));
        assert_eq!(found[0].message, "backon retry policy allows 7 attempts, over limits.max_attempts 3");
        assert_eq!(found[1].kind, Kind::RetryUnbounded);
        assert!(found.iter().all(|f| f.rule == "policy/max-attempts" && f.is_blocking()));
    }
}
