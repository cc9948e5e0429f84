//! The differential replay: the same harness, scenarios and client count run
//! once against the base revision and once against the head, and the two
//! server journals compared per operation (method + normalised path).
//!
//! Absolute checks judge what the head did; the comparison judges what the
//! change did. A client that went from 3 to 10 attempts and still honours
//! `Retry-After` passes every absolute check, but the server saw more than
//! three times the load per request from it (issue 37). Everything here is a
//! pure function of the two reports (their timelines and `desync` readings),
//! so the gate can recompute it from a report and reject one whose findings
//! were edited away.
//!
//! The noise rule (docs/replay.md, "The comparison"):
//! - attempts are counted, not timed, so they are compared with no
//!   tolerance: the head is worse when its per-request maximum is higher;
//! - early retries (`retry-after-honored`), unsafe re-sends and duplicate
//!   writes are counted against the absolute checks' own tolerances, and the
//!   head is worse when it has more of them than the base (for early retries:
//!   a larger share of its judged retries);
//! - the fleet's concentration is timed, so it is compared only through the
//!   `desynchronized` reading, which already weighs the same run's
//!   scheduling noise: the head is worse only when the base read `spread`
//!   and the head read `lockstep`. Inconclusive readings on either side are
//!   no comparison (the absolute check fails an inconclusive head closed).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::checks::{DesyncSummary, Reading, ReplayCheck};
use super::journal::WriteEffect;
use super::report::{ClientTimeline, ReplayReport, TimelineRequest};
use crate::finding::Kind;

/// Both sides of a differential replay and what their comparison showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Comparison {
    /// The base commit the other side ran on.
    pub base_commit: String,
    /// The head commit (the report's own `commit`).
    pub head_commit: Option<String>,
    /// Set when the base could not be checked out, built or run: the
    /// replay could not decide, and the head's verdict is `fail`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecided: Option<String>,
    /// The base's whole report (absent when it could not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<Box<ReplayReport>>,
    /// Per scenario and operation, both sides' figures.
    pub operations: Vec<OperationComparison>,
    /// Per scenario, both sides' `desynchronized` readings.
    pub fleets: Vec<FleetComparison>,
    /// Where the head is worse than its base; any one fails the replay.
    pub findings: Vec<ReplayFinding>,
    /// The run that brings both sides to their attempt caps
    /// ([`crate::replay::scenario::to_the_cap`]); absent when a configured
    /// scenario already never ends its outage, or in a report written
    /// before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_the_cap: Option<CapRun>,
    /// What the comparison could not see, per operation ("could not compare
    /// the attempt caps of GET /items: ..."): reported, never a pass reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Both sides of the scenario run only for the comparison: an outage that
/// outlasts both sides' budgets, so each stops on its own cap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CapRun {
    /// The base's report of it.
    pub base: Box<ReplayReport>,
    /// The head's report of it.
    pub head: Box<ReplayReport>,
}

/// One operation in one scenario, at the base and at the head.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OperationComparison {
    /// The scenario it ran under.
    pub scenario: String,
    /// `METHOD /normalised/path` (the head's name when the two differ).
    pub operation: String,
    /// The base's name for it, when the comparison paired two different
    /// names (a renamed route); `pairing` says how.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_operation: Option<String>,
    /// How an operation present on one side only, or renamed, was paired
    /// or judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairing: Option<String>,
    /// Absent when that side never sent it.
    pub base: Option<OperationFigures>,
    /// Absent when that side never sent it.
    pub head: Option<OperationFigures>,
}

/// What the server saw of one operation on one side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OperationFigures {
    /// Every request of this operation, over all clients.
    pub requests: usize,
    /// Logical requests: a client's attempts at it up to a delivered 2xx
    /// whose answer it waited for.
    pub logical_requests: usize,
    /// Attempts of the logical request that made the most.
    pub attempts_max: usize,
    /// The median attempts per logical request.
    pub attempts_median: f64,
    /// Retries that followed a `Retry-After`.
    pub retries_told: usize,
    /// Of those, the ones that came sooner than it asked (`retry-after-honored`).
    pub retries_early: usize,
    /// The median gap before a retry, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_wait_median_ms: Option<f64>,
    /// Requests sent again while the previous answer was still held (the
    /// client's timeout was shorter than the server's pace).
    pub resent_while_held: usize,
    /// POST/PATCH re-sent without the same Idempotency-Key (`no-unsafe-replay`).
    pub unsafe_resends: usize,
    /// Writes the server applied again for an operation already applied.
    pub duplicate_writes: usize,
    /// Logical requests that ended on a failed answer with the client going
    /// on or exiting by itself: it stopped on its attempt cap.
    #[serde(default)]
    pub gave_up: usize,
    /// Logical requests still retrying when the scenario ended (the client
    /// was killed at the replay's timeout).
    #[serde(default)]
    pub cut: usize,
}

impl OperationFigures {
    /// How this side's requests ended, for the report: on its cap, on a
    /// success, or at the scenario's end.
    pub fn stopped(&self) -> String {
        let succeeded = self.logical_requests.saturating_sub(self.gave_up + self.cut);
        let mut parts = Vec::new();
        if self.gave_up > 0 {
            parts.push(format!("{} on its cap", self.gave_up));
        }
        if succeeded > 0 {
            parts.push(format!("{succeeded} on success"));
        }
        if self.cut > 0 {
            parts.push(format!("{} at the scenario's end", self.cut));
        }
        format!("stopped {}", parts.join(", "))
    }
}

/// One scenario's fleet reading at the base and at the head.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FleetComparison {
    /// The scenario.
    pub scenario: String,
    /// Absent when that side had too little evidence to read.
    pub base: Option<DesyncSummary>,
    /// Absent when that side had too little evidence to read.
    pub head: Option<DesyncSummary>,
}

/// A head worse than its base, seen in the replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReplayFinding {
    /// The finding kind, from the same set the static analysis uses.
    #[schemars(with = "String")]
    pub kind: Kind,
    /// Always `replay`: what the server saw, not what the code says.
    pub seen_in: String,
    /// The scenario it showed in.
    pub scenario: String,
    /// `METHOD /path`, or `the fleet` for a reading of all operations.
    pub operation: String,
    /// The base's figure, as shown in the message.
    pub base: String,
    /// The head's figure.
    pub head: String,
    /// "POST /orders: 4 attempts per request at the base, 11 at the head".
    pub message: String,
}

/// Compares `head` with `base`, scenario by scenario (matched by name), and
/// the two sides of the run to the caps when there is one.
pub fn compare(
    base: &ReplayReport,
    head: &ReplayReport,
    base_commit: &str,
    to_the_cap: Option<CapRun>,
) -> Comparison {
    let mut operations = Vec::new();
    let mut fleets = Vec::new();
    let mut findings = Vec::new();
    let base_parts = scenarios_of(base);
    let mut pairs: Vec<(&ReplayReport, &ReplayReport)> = Vec::new();
    for h in scenarios_of(head) {
        if let Some(b) = base_parts.iter().find(|b| b.scenario == h.scenario) {
            pairs.push((b, h));
        }
    }
    if let Some(cap) = &to_the_cap {
        pairs.push((&cap.base, &cap.head));
    }
    for (b, h) in pairs {
        let mut found = Vec::new();
        compare_scenario(b, h, &mut operations, &mut found);
        // The run to the caps adds what the configured scenarios could not
        // see; a finding they already made is not said twice.
        if b.scenario == super::scenario::TO_THE_CAP {
            found.retain(|f| {
                !findings.iter().any(|g: &ReplayFinding| g.kind == f.kind && g.operation == f.operation)
            });
        }
        findings.extend(found);
        if let (Some(bd), Some(hd)) = (&b.desync, &h.desync) {
            if bd.reading == Reading::Spread && hd.reading == Reading::Lockstep {
                let (bs, hs) = (
                    format!("{} ({})", super::checks::desync::times(bd.concentration), "spread"),
                    format!("{} ({})", super::checks::desync::times(hd.concentration), "lockstep"),
                );
                findings.push(ReplayFinding {
                    kind: Kind::JitterRemoved,
                    seen_in: "replay".into(),
                    scenario: h.scenario.clone(),
                    operation: "the fleet".into(),
                    message: format!(
                        "the fleet's retries: {bs} more concentrated than full jitter at the base, {hs} at the head"
                    ),
                    base: bs,
                    head: hs,
                });
            }
        }
        if b.desync.is_some() || h.desync.is_some() || b.scenario != super::scenario::TO_THE_CAP {
            fleets.push(FleetComparison {
                scenario: h.scenario.clone(),
                base: b.desync.clone(),
                head: h.desync.clone(),
            });
        }
    }
    let warnings = cap_warnings(&operations, &findings);
    Comparison {
        base_commit: base_commit.to_string(),
        head_commit: head.commit.clone(),
        undecided: None,
        base: Some(Box::new(base.clone())),
        operations,
        fleets,
        findings,
        to_the_cap,
        warnings,
    }
}

/// One scenario's operations, paired across the two sides, and where the
/// head is worse. Pairing: the same name; else, for operations one side
/// lacks, the same method at the same place in the clients' sequence of
/// operations (a renamed route); an operation the head has that nothing
/// pairs with is judged against the base's most attempts.
fn compare_scenario(
    b: &ReplayReport,
    h: &ReplayReport,
    operations: &mut Vec<OperationComparison>,
    findings: &mut Vec<ReplayFinding>,
) {
    let bo = figures_of(b);
    let ho = figures_of(h);
    let scenario = &h.scenario;
    let renamed = renamed_pairs(b, h, &bo, &ho);
    let mut names: Vec<&String> = bo.keys().chain(ho.keys()).collect();
    names.sort();
    names.dedup();
    let base_most = bo.iter().max_by_key(|(_, f)| f.attempts_max).map(|(n, f)| (n.clone(), f.attempts_max));
    for name in names {
        let (bf, hf) = (bo.get(name), ho.get(name));
        let mut row = OperationComparison {
            scenario: scenario.clone(),
            operation: name.clone(),
            base_operation: None,
            pairing: None,
            base: bf.cloned(),
            head: hf.cloned(),
        };
        match (bf, hf) {
            (Some(bf), Some(hf)) => findings.extend(operation_findings(scenario, name, bf, hf)),
            (Some(_), None) => {
                if renamed.iter().any(|(bn, _)| bn == name) {
                    // Shown on its head's row.
                    continue;
                }
                row.pairing = Some("at the base only: the head never sent it".into());
            }
            (None, Some(hf)) => {
                if let Some((bn, _)) = renamed.iter().find(|(_, hn)| hn == name) {
                    let bf = &bo[bn];
                    let label = format!("{name} (was {bn} at the base)");
                    findings.extend(operation_findings(scenario, &label, bf, hf));
                    row.base_operation = Some(bn.clone());
                    row.base = Some(bf.clone());
                    row.pairing = Some(format!(
                        "renamed: {bn} at the base, paired by method and place in the clients' sequence"
                    ));
                } else {
                    match &base_most {
                        Some((bn, most)) => {
                            row.pairing = Some(format!(
                                "at the head only: judged against the base's most attempts ({most}, {bn})"
                            ));
                            if hf.attempts_max > *most {
                                let (base, head) = (most.to_string(), hf.attempts_max.to_string());
                                findings.push(ReplayFinding {
                                    kind: Kind::RetryCountRaised,
                                    seen_in: "replay".into(),
                                    scenario: scenario.clone(),
                                    operation: name.clone(),
                                    message: format!(
                                        "{name}: {head} attempts per request at the head; no base operation pairs \
                                         with it, and the base's most was {base} ({bn})"
                                    ),
                                    base,
                                    head,
                                });
                            }
                        }
                        None => row.pairing = Some("at the head only: the base sent nothing".into()),
                    }
                }
            }
            (None, None) => {}
        }
        operations.push(row);
    }
}

/// Operations one side lacks, paired as a rename: for each client, its
/// operations in the order it first sent them; a base-only and a head-only
/// operation at the same place with the same method are one operation,
/// when no client says otherwise.
fn renamed_pairs(
    b: &ReplayReport,
    h: &ReplayReport,
    bo: &BTreeMap<String, OperationFigures>,
    ho: &BTreeMap<String, OperationFigures>,
) -> Vec<(String, String)> {
    let sequence = |t: &ClientTimeline| {
        let mut seq: Vec<String> = Vec::new();
        for q in &t.requests {
            let n = operation_name(&q.method, &q.path);
            if !seq.contains(&n) {
                seq.push(n);
            }
        }
        seq
    };
    let mut votes: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut against: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (bt, ht) in b.timeline.iter().zip(&h.timeline) {
        let (bs, hs) = (sequence(bt), sequence(ht));
        for (i, bn) in bs.iter().enumerate() {
            if ho.contains_key(bn) {
                continue;
            }
            for (j, hn) in hs.iter().enumerate() {
                if bo.contains_key(hn) || method_of(bn) != method_of(hn) {
                    continue;
                }
                let key = (bn.clone(), hn.clone());
                *(if i == j { votes.entry(key).or_default() } else { against.entry(key).or_default() }) += 1;
            }
        }
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for ((bn, hn), n) in votes {
        let no = against.get(&(bn.clone(), hn.clone())).copied().unwrap_or(0);
        if n > no && !out.iter().any(|(x, y)| *x == bn || *y == hn) {
            out.push((bn, hn));
        }
    }
    out
}

fn method_of(operation: &str) -> &str {
    operation.split(' ').next().unwrap_or("")
}

/// One warning per operation whose attempt caps the comparison could not
/// compare: no scenario in which both sides stopped on their caps, and no
/// finding on its attempts either.
fn cap_warnings(operations: &[OperationComparison], findings: &[ReplayFinding]) -> Vec<String> {
    let mut names: Vec<&String> = operations.iter().map(|o| &o.operation).collect();
    names.sort();
    names.dedup();
    let mut out = Vec::new();
    for name in names {
        let rows: Vec<&OperationComparison> = operations.iter().filter(|o| &o.operation == name).collect();
        let compared = rows.iter().any(|o| match (&o.base, &o.head) {
            (Some(b), Some(h)) => b.gave_up > 0 && h.gave_up > 0,
            _ => false,
        });
        let judged = findings.iter().any(|f| {
            matches!(f.kind, Kind::RetryCountRaised | Kind::TimeoutLowered)
                && (f.operation == *name || f.operation.starts_with(&format!("{name} (was ")))
        });
        let one_sided = rows.iter().all(|o| o.base.is_none() || o.head.is_none());
        if compared || judged || one_sided {
            continue;
        }
        let side = |pick: fn(&OperationComparison) -> Option<&OperationFigures>| {
            rows.iter()
                .filter_map(|o| {
                    pick(o).map(|f| format!("{} attempts in {}, {}", f.attempts_max, o.scenario, f.stopped()))
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        out.push(format!(
            "could not compare the attempt caps of {name}: in no scenario did both sides stop on their caps \
             (base: {}; head: {}); a raised cap beyond what the scenarios reached would not show here",
            side(|o| o.base.as_ref()),
            side(|o| o.head.as_ref())
        ));
    }
    out
}

/// The one-scenario reports a report holds: itself, or its parts.
fn scenarios_of(r: &ReplayReport) -> Vec<&ReplayReport> {
    if r.parts.is_empty() {
        vec![r]
    } else {
        r.parts.iter().collect()
    }
}

fn finding(kind: Kind, scenario: &str, op: &str, base: String, head: String, what: &str) -> ReplayFinding {
    ReplayFinding {
        kind,
        seen_in: "replay".into(),
        scenario: scenario.to_string(),
        operation: op.to_string(),
        message: format!("{op}: {base} {what} at the base, {head} at the head"),
        base,
        head,
    }
}

/// The head is worse than the base on one operation: which ways, by the
/// noise rule at the top of this module.
fn operation_findings(
    scenario: &str,
    op: &str,
    b: &OperationFigures,
    h: &OperationFigures,
) -> Vec<ReplayFinding> {
    let mut out = Vec::new();
    if h.attempts_max > b.attempts_max {
        // Extra attempts sent while the server was still answering are what
        // a shorter timeout does; others are a larger attempt budget.
        let kind = if h.resent_while_held > b.resent_while_held {
            Kind::TimeoutLowered
        } else {
            Kind::RetryCountRaised
        };
        let what = match kind {
            Kind::TimeoutLowered => "attempts per request against a slow answer",
            _ => "attempts per request",
        };
        out.push(finding(kind, scenario, op, b.attempts_max.to_string(), h.attempts_max.to_string(), what));
    }
    let share = |f: &OperationFigures| {
        if f.retries_told == 0 {
            0.0
        } else {
            f.retries_early as f64 / f.retries_told as f64
        }
    };
    if h.retries_early > 0 && share(h) > share(b) {
        out.push(finding(
            Kind::RetryAfterIgnored,
            scenario,
            op,
            format!("{} of {}", b.retries_early, b.retries_told),
            format!("{} of {}", h.retries_early, h.retries_told),
            "retries sooner than Retry-After asked",
        ));
    }
    if h.unsafe_resends > b.unsafe_resends {
        out.push(finding(
            Kind::RetryNonIdempotent,
            scenario,
            op,
            b.unsafe_resends.to_string(),
            h.unsafe_resends.to_string(),
            "re-sends without the same Idempotency-Key",
        ));
    }
    if h.duplicate_writes > b.duplicate_writes {
        out.push(finding(
            Kind::RetryNonIdempotent,
            scenario,
            op,
            b.duplicate_writes.to_string(),
            h.duplicate_writes.to_string(),
            "writes applied more than once",
        ));
    }
    out
}

/// One operation the replay's clients called (the head's side of a
/// differential replay), as the gate matches it against the operations whose
/// retries the change touched (`replay.require_coverage`, docs/replay.md,
/// "Coverage").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExercisedOperation {
    /// `METHOD /normalised/path`, as [`operation_name`] names it.
    pub operation: String,
    /// Every request of it, over all clients and scenarios.
    pub requests: usize,
    /// Of those, the ones sent again within the same logical request (a
    /// retry or a re-send during a held answer).
    pub retries: usize,
}

/// The operations a report's clients called, by name, summed over every
/// scenario of a combined report. It is a pure function of the timelines,
/// so the gate recomputes it rather than trust the list a report carries.
pub fn exercised_operations(r: &ReplayReport) -> Vec<ExercisedOperation> {
    let mut by_name: BTreeMap<String, ExercisedOperation> = BTreeMap::new();
    for part in scenarios_of(r) {
        for (name, f) in figures_of(part) {
            let e = by_name.entry(name.clone()).or_insert(ExercisedOperation {
                operation: name,
                requests: 0,
                retries: 0,
            });
            e.requests += f.requests;
            e.retries += f.requests.saturating_sub(f.logical_requests);
        }
    }
    by_name.into_values().collect()
}

/// `GET /c/3/orders/42?x=1` -> `GET /orders/{id}`: the client prefix and the
/// query dropped, and a segment that is a number, a UUID or a long hex string
/// read as an identifier, so the same operation on different records is one.
pub fn operation_name(method: &str, path: &str) -> String {
    let path = path.split(['?', '#']).next().unwrap_or("");
    let mut segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if segs.len() >= 2 && segs[0] == "c" && segs[1].chars().all(|c| c.is_ascii_digit()) {
        segs.drain(..2);
    }
    let norm: Vec<&str> = segs.into_iter().map(|s| if is_identifier(s) { "{id}" } else { s }).collect();
    format!("{} /{}", method.to_ascii_uppercase(), norm.join("/"))
}

fn is_identifier(s: &str) -> bool {
    let digits = !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let hex = s.len() >= 16 && s.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    digits || hex
}

/// Every operation's figures in one single-scenario report.
fn figures_of(r: &ReplayReport) -> BTreeMap<String, OperationFigures> {
    let mut acc: BTreeMap<String, Acc> = BTreeMap::new();
    for t in &r.timeline {
        client_into(t, &mut acc);
    }
    acc.into_iter().map(|(k, a)| (k, a.finish())).collect()
}

#[derive(Default)]
struct Acc {
    requests: usize,
    attempts: Vec<usize>,
    retries_told: usize,
    retries_early: usize,
    retry_waits: Vec<f64>,
    resent_while_held: usize,
    unsafe_resends: usize,
    duplicate_writes: usize,
    gave_up: usize,
    cut: usize,
}

impl Acc {
    fn finish(self) -> OperationFigures {
        let mut attempts = self.attempts;
        attempts.sort_unstable();
        let mut waits = self.retry_waits;
        waits.sort_by(f64::total_cmp);
        OperationFigures {
            requests: self.requests,
            logical_requests: attempts.len(),
            attempts_max: attempts.last().copied().unwrap_or(0),
            attempts_median: median(&attempts.iter().map(|&a| a as f64).collect::<Vec<_>>()).unwrap_or(0.0),
            retries_told: self.retries_told,
            retries_early: self.retries_early,
            retry_wait_median_ms: median(&waits),
            resent_while_held: self.resent_while_held,
            unsafe_resends: self.unsafe_resends,
            duplicate_writes: self.duplicate_writes,
            gave_up: self.gave_up,
            cut: self.cut,
        }
    }
}

fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// One client's requests, grouped per operation into logical requests.
fn client_into(t: &ClientTimeline, acc: &mut BTreeMap<String, Acc>) {
    let mut by_op: BTreeMap<String, Vec<&TimelineRequest>> = BTreeMap::new();
    for q in &t.requests {
        by_op.entry(operation_name(&q.method, &q.path)).or_default().push(q);
    }
    // The operation the client was on when the scenario ended, if it was
    // killed there rather than exiting by itself.
    let cut_on = match t.exit {
        super::runner::ClientExit::KilledAtTimeout => {
            t.requests.last().map(|q| operation_name(&q.method, &q.path))
        }
        _ => None,
    };
    for (op, reqs) in by_op {
        let ended_on_failure = reqs.last().is_some_and(|q| !succeeded(q));
        if ended_on_failure {
            let a = acc.entry(op.clone()).or_default();
            if cut_on.as_ref() == Some(&op) {
                a.cut += 1;
            } else {
                a.gave_up += 1;
            }
        }
        let a = acc.entry(op).or_default();
        a.requests += reqs.len();
        let mut applied: BTreeMap<&str, usize> = BTreeMap::new();
        let mut current = 0usize;
        let mut prev: Option<&TimelineRequest> = None;
        for q in reqs {
            // Still held: the previous answer had not gone out when this one
            // arrived, so the client gave up waiting and sent it again.
            let held = prev.is_some_and(|p| q.at_ms < p.at_ms + p.delay_ms as f64);
            let new_request = match prev {
                None => true,
                Some(p) => succeeded(p) && !held,
            };
            if new_request {
                if current > 0 {
                    a.attempts.push(current);
                }
                current = 1;
            } else {
                current += 1;
                if held {
                    a.resent_while_held += 1;
                }
                if q.asked_ms.is_some() {
                    a.retries_told += 1;
                }
                if let Some(gap) = q.gap_ms {
                    a.retry_waits.push(gap);
                }
            }
            if q.broke.contains(&ReplayCheck::RetryAfterHonored) {
                a.retries_early += 1;
            }
            if q.broke.contains(&ReplayCheck::NoUnsafeReplay) {
                a.unsafe_resends += 1;
            }
            if let Some(w) = &q.write {
                if w.effect == WriteEffect::Applied {
                    let n = applied.entry(w.operation.as_str()).or_insert(0);
                    *n += 1;
                    if *n > 1 {
                        a.duplicate_writes += 1;
                    }
                }
            }
            prev = Some(q);
        }
        if current > 0 {
            a.attempts.push(current);
        }
    }
}

/// The reading's id, as the JSON spells it.
fn reading_id(r: Reading) -> &'static str {
    match r {
        Reading::Spread => "spread",
        Reading::Lockstep => "lockstep",
        Reading::Ambiguous => "ambiguous",
        Reading::WithinNoise => "within-noise",
    }
}

fn succeeded(q: &TimelineRequest) -> bool {
    (200..300).contains(&q.status) && q.lost.is_none()
}

impl Comparison {
    /// A comparison that could not be made: the base did not run.
    pub fn undecided(base_commit: &str, head_commit: Option<String>, why: String) -> Comparison {
        Comparison {
            base_commit: base_commit.to_string(),
            head_commit,
            undecided: Some(why),
            base: None,
            operations: Vec::new(),
            fleets: Vec::new(),
            findings: Vec::new(),
            to_the_cap: None,
            warnings: Vec::new(),
        }
    }

    /// The lines of the text and Markdown renderings: the base's verdict,
    /// each operation side by side, each fleet reading, each finding.
    pub(crate) fn lines(&self) -> Vec<String> {
        let short = crate::text::short_sha(&self.base_commit);
        let mut out = Vec::new();
        if let Some(why) = &self.undecided {
            out.push(format!("could not decide: {why}"));
            return out;
        }
        if let Some(base) = &self.base {
            match base.verdict {
                super::ReplayVerdict::Pass => out.push(format!("the base ({short}) passes its own checks")),
                super::ReplayVerdict::Fail => out.push(format!(
                    "the base ({short}) itself fails: {}; the head is judged on its own checks and the comparison",
                    base.reasons.join("; ")
                )),
            }
        }
        for o in &self.operations {
            let side = |f: &Option<OperationFigures>| {
                match f {
                None => "not sent".to_string(),
                Some(f) => format!(
                    "{} per request (median {}; {}), {} early of {} told, {} re-sent while held, {} unsafe re-sends, {} duplicate writes",
                    crate::text::plural(f.attempts_max, "attempt", "attempts"),
                    f.attempts_median,
                    f.stopped(),
                    f.retries_early,
                    f.retries_told,
                    f.resent_while_held,
                    f.unsafe_resends,
                    f.duplicate_writes
                ),
            }
            };
            let pairing = o.pairing.as_ref().map(|p| format!(" ({p})")).unwrap_or_default();
            out.push(format!(
                "[{}] {}{pairing}: base {}; head {}",
                o.scenario,
                o.operation,
                side(&o.base),
                side(&o.head)
            ));
        }
        if let Some(cap) = &self.to_the_cap {
            out.push(format!(
                "[{}] run for the comparison only, so that each side stops on its own cap: {}",
                super::scenario::TO_THE_CAP,
                cap.head.scenario_description
            ));
        }
        for f in &self.fleets {
            let side = |d: &Option<DesyncSummary>| match d {
                None => "too little evidence".to_string(),
                Some(d) => {
                    format!("{} ({})", super::checks::desync::times(d.concentration), reading_id(d.reading))
                }
            };
            out.push(format!(
                "[{}] the fleet's concentration: base {}; head {}",
                f.scenario,
                side(&f.base),
                side(&f.head)
            ));
        }
        for f in &self.findings {
            out.push(format!("{} (seen in the replay): [{}] {}", f.kind.id(), f.scenario, f.message));
        }
        for w in &self.warnings {
            out.push(format!("warning: {w}"));
        }
        if self.findings.is_empty() {
            out.push("the head is no worse than its base on any operation the replay sent".into());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_are_named_by_method_and_normalised_path() {
        assert_eq!(operation_name("get", "/c/3/orders/42?x=1"), "GET /orders/{id}");
        assert_eq!(operation_name("POST", "/c/0"), "POST /");
        assert_eq!(
            operation_name("GET", "/c/1/items/3f2a9c1b-0000-4000-8000-00000000abcd"),
            "GET /items/{id}"
        );
        assert_eq!(operation_name("GET", "/c/1/v2/items"), "GET /v2/items");
    }

    fn figures(max: usize) -> OperationFigures {
        OperationFigures {
            requests: max,
            logical_requests: 1,
            attempts_max: max,
            attempts_median: max as f64,
            retries_told: max - 1,
            retries_early: 0,
            retry_wait_median_ms: None,
            resent_while_held: 0,
            unsafe_resends: 0,
            duplicate_writes: 0,
            gave_up: 0,
            cut: 0,
        }
    }

    #[test]
    fn more_attempts_is_worse_with_both_figures_and_equal_is_not() {
        let f = operation_findings("s", "POST /orders", &figures(4), &figures(11));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].kind, Kind::RetryCountRaised);
        assert_eq!(f[0].message, "POST /orders: 4 attempts per request at the base, 11 at the head");
        assert!(operation_findings("s", "GET /", &figures(4), &figures(4)).is_empty());
        assert!(operation_findings("s", "GET /", &figures(4), &figures(3)).is_empty());
        let mut slow = figures(4);
        slow.resent_while_held = 3;
        assert_eq!(operation_findings("s", "GET /", &figures(1), &slow)[0].kind, Kind::TimeoutLowered);
    }

    fn req(seq: usize, at_ms: f64, method: &str, status: u16, delay_ms: u64) -> TimelineRequest {
        TimelineRequest {
            seq,
            at_ms,
            method: method.into(),
            path: "/c/0/orders/7".into(),
            status,
            retry_after: None,
            idempotency_key: None,
            user_agent: None,
            delay_ms,
            gap_ms: None,
            asked_ms: None,
            broke: vec![],
            write: None,
            lost: None,
        }
    }

    fn timeline(requests: Vec<TimelineRequest>) -> ClientTimeline {
        ClientTimeline {
            client: 0,
            exit: super::super::runner::ClientExit::Exited { code: 0 },
            requests,
            stdout_tail: String::new(),
            stderr_tail: String::new(),
        }
    }

    #[test]
    fn logical_requests_end_at_a_delivered_2xx_that_was_waited_for() {
        let mut acc = BTreeMap::new();
        // 429, 429, 200: one request of 3 attempts; then a new one of 1.
        client_into(
            &timeline(vec![
                req(0, 0.0, "GET", 429, 0),
                req(1, 1000.0, "GET", 429, 0),
                req(2, 2000.0, "GET", 200, 0),
                req(3, 3000.0, "GET", 200, 0),
            ]),
            &mut acc,
        );
        let f = acc.remove("GET /orders/{id}").unwrap().finish();
        assert_eq!((f.requests, f.logical_requests, f.attempts_max, f.attempts_median), (4, 2, 3, 2.0));
        // A 200 held 2 s, sent again after 0.5 s: the same request, re-sent while held.
        let mut acc = BTreeMap::new();
        client_into(
            &timeline(vec![req(0, 0.0, "GET", 200, 2000), req(1, 500.0, "GET", 200, 2000)]),
            &mut acc,
        );
        let f = acc.remove("GET /orders/{id}").unwrap().finish();
        assert_eq!((f.logical_requests, f.attempts_max, f.resent_while_held), (1, 2, 1));
    }

    #[test]
    fn a_fleet_gone_from_spread_to_lockstep_is_jitter_removed_and_inconclusive_is_not() {
        let side = |reading: Reading, concentration: f64| {
            let mut r = ReplayReport::combine("0".repeat(64), Vec::new());
            r.scenario = "default".into();
            r.desync = Some(DesyncSummary {
                reading,
                concentration,
                pass_bar: 12.0,
                lockstep_bar: 22.0,
                judged_waits: 24,
                pairs: 84,
                retry_pair_ms: 1.0,
                noise_pair_ms: 1.0,
                noise_spread_ms: 1.0,
            });
            r
        };
        let c = compare(&side(Reading::Spread, 2.0), &side(Reading::Lockstep, 300.0), "b", None);
        assert_eq!(c.findings.len(), 1);
        assert_eq!(c.findings[0].kind, Kind::JitterRemoved);
        assert!(c.findings[0].message.contains("2.0x (spread)"), "{}", c.findings[0].message);
        assert!(c.findings[0].message.contains("300x (lockstep)"), "{}", c.findings[0].message);
        // Within the noise, or more concentrated but still spread: not worse.
        assert!(compare(&side(Reading::Spread, 2.0), &side(Reading::WithinNoise, 3.0), "b", None)
            .findings
            .is_empty());
        assert!(compare(&side(Reading::Spread, 2.0), &side(Reading::Spread, 9.0), "b", None)
            .findings
            .is_empty());
    }

    fn on(path: &str, r: TimelineRequest) -> TimelineRequest {
        TimelineRequest { path: path.into(), ..r }
    }

    /// One scenario's report: each client's requests as (path, statuses).
    fn side(scenario: &str, clients: &[Vec<(&str, u16)>], killed: bool) -> ReplayReport {
        let mut r = ReplayReport::combine("0".repeat(64), Vec::new());
        r.scenario = scenario.into();
        r.timeline = clients
            .iter()
            .enumerate()
            .map(|(c, reqs)| {
                let mut t = timeline(
                    reqs.iter()
                        .enumerate()
                        .map(|(i, (p, st))| on(p, req(i, i as f64 * 1000.0, "GET", *st, 0)))
                        .collect(),
                );
                t.client = c;
                if killed {
                    t.exit = super::super::runner::ClientExit::KilledAtTimeout;
                }
                t
            })
            .collect();
        r
    }

    #[test]
    fn a_renamed_route_is_paired_by_method_and_place_and_its_raise_is_caught() {
        let base = side("long-outage", &[vec![("/c/0/items", 503); 4], vec![("/c/1/items", 503); 4]], false);
        let head =
            side("long-outage", &[vec![("/c/0/v2/items", 503); 6], vec![("/c/1/v2/items", 503); 6]], false);
        let c = compare(&base, &head, "b", None);
        assert_eq!(c.findings.len(), 1, "{:#?}", c.findings);
        assert_eq!(c.findings[0].kind, Kind::RetryCountRaised);
        assert_eq!(
            c.findings[0].message,
            "GET /v2/items (was GET /items at the base): 4 attempts per request at the base, 6 at the head"
        );
        assert_eq!(c.operations.len(), 1, "{:#?}", c.operations);
        assert_eq!(c.operations[0].base_operation.as_deref(), Some("GET /items"));
        assert!(c.operations[0].pairing.as_deref().unwrap().starts_with("renamed"));
        // Both stopped on their caps: compared, no warning.
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        // A rename with nothing else changed passes.
        let same =
            side("long-outage", &[vec![("/c/0/v2/items", 503); 4], vec![("/c/1/v2/items", 503); 4]], false);
        let c = compare(&base, &same, "b", None);
        assert!(c.findings.is_empty(), "{:#?}", c.findings);
    }

    #[test]
    fn an_operation_only_the_head_sends_is_judged_against_the_bases_most() {
        // The base sends GET /items then GET /users; the head GET /items
        // and, first, a new GET /health: nothing pairs the new one by place.
        let base = side("s", &[vec![("/c/0/items", 503), ("/c/0/items", 503), ("/c/0/users", 200)]], false);
        let head = side(
            "s",
            &[vec![
                ("/c/0/health", 503),
                ("/c/0/health", 503),
                ("/c/0/health", 503),
                ("/c/0/health", 200),
                ("/c/0/items", 503),
                ("/c/0/items", 200),
            ]],
            false,
        );
        let c = compare(&base, &head, "b", None);
        let raised: Vec<&ReplayFinding> =
            c.findings.iter().filter(|f| f.operation == "GET /health").collect();
        assert_eq!(raised.len(), 1, "{:#?}", c.findings);
        assert!(
            raised[0]
                .message
                .contains("no base operation pairs with it, and the base's most was 2 (GET /items)"),
            "{}",
            raised[0].message
        );
        let row = c.operations.iter().find(|o| o.operation == "GET /health").unwrap();
        assert!(row
            .pairing
            .as_deref()
            .unwrap()
            .contains("judged against the base's most attempts (2, GET /items)"));
        let gone = c.operations.iter().find(|o| o.operation == "GET /users").unwrap();
        assert_eq!(gone.pairing.as_deref(), Some("at the base only: the head never sent it"));
    }

    #[test]
    fn sides_that_never_stop_on_their_caps_are_said_not_compared() {
        // Both recover after three failures: any cap of 4 or more looks alike.
        let three = [("/c/0/items", 429), ("/c/0/items", 429), ("/c/0/items", 429), ("/c/0/items", 200)];
        let base = side("default", &[three.to_vec()], false);
        let c = compare(&base, &base.clone(), "b", None);
        assert!(c.findings.is_empty());
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert!(
            c.warnings[0].starts_with("could not compare the attempt caps of GET /items"),
            "{}",
            c.warnings[0]
        );
        assert!(c.warnings[0].contains("stopped 1 on success"), "{}", c.warnings[0]);
        // The run to the caps: both give up, so the caps are compared.
        let capped =
            |n: usize| side(crate::replay::scenario::TO_THE_CAP, &[vec![("/c/0/items", 429); n]], false);
        let run = CapRun { base: Box::new(capped(4)), head: Box::new(capped(11)) };
        let c = compare(&base, &base.clone(), "b", Some(run));
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!(c.findings.len(), 1);
        assert_eq!(c.findings[0].scenario, "to-the-cap");
        assert_eq!(c.findings[0].message, "GET /items: 4 attempts per request at the base, 11 at the head");
        // A head cut at the scenario's end with fewer attempts: not compared.
        let cut = side(crate::replay::scenario::TO_THE_CAP, &[vec![("/c/0/items", 429); 3]], true);
        let f = figures_of(&cut);
        assert_eq!((f["GET /items"].cut, f["GET /items"].gave_up), (1, 0));
        let run = CapRun { base: Box::new(capped(4)), head: Box::new(cut) };
        let c = compare(&base, &base.clone(), "b", Some(run));
        assert!(c.findings.is_empty());
        assert!(c.warnings[0].contains("at the scenario's end"), "{:?}", c.warnings);
    }

    #[test]
    fn a_write_applied_twice_is_one_duplicate() {
        use super::super::journal::WriteRecord;
        let applied = |seq, at| {
            let mut q = req(seq, at, "POST", 201, 0);
            q.lost = Some(super::super::journal::Loss::Reset);
            q.write = Some(WriteRecord { operation: "digest:x".into(), effect: WriteEffect::Applied });
            q
        };
        let mut acc = BTreeMap::new();
        client_into(&timeline(vec![applied(0, 0.0), applied(1, 900.0)]), &mut acc);
        let f = acc.remove("POST /orders/{id}").unwrap().finish();
        assert_eq!((f.attempts_max, f.duplicate_writes), (2, 1));
    }

    #[test]
    fn early_retries_unsafe_resends_and_duplicates_count_against_the_base() {
        let mut h = figures(4);
        h.retries_early = 2;
        h.unsafe_resends = 1;
        h.duplicate_writes = 1;
        let kinds: Vec<Kind> =
            operation_findings("s", "POST /", &figures(4), &h).iter().map(|f| f.kind).collect();
        assert_eq!(kinds, [Kind::RetryAfterIgnored, Kind::RetryNonIdempotent, Kind::RetryNonIdempotent]);
        // The same early share at the base: not worse.
        let mut b = figures(4);
        b.retries_early = 2;
        b.unsafe_resends = 1;
        b.duplicate_writes = 1;
        assert!(operation_findings("s", "POST /", &b, &h).is_empty());
    }
}
