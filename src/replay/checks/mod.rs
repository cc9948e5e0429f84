//! The replay checks: seven pure functions over the server's [`Journal`] and the clients'
//! exit states (docs/replay.md). No I/O, no clock: the same journal
//! always gives the same verdict, so every rule is unit-tested on synthetic
//! journals.
//!
//! | check | fails when |
//! |---|---|
//! | `recovered` | a client never got a 2xx or its CMD did not exit 0; a client that sent nothing is always an error |
//! | `attempt-budget` | a client made more attempts than the scenario's budget |
//! | `retry-after-honored` | a request came sooner than the previous answer's Retry-After (minus 50 ms) |
//! | `desynchronized` | the retries arrived more than 10 times faster than full jitter would spread them, or could not be told from scheduling noise (inconclusive) |
//! | `no-unsafe-replay` | a POST/PATCH was sent again after a failed answer without the same Idempotency-Key |
//! | `no-duplicate-write` | the server applied one write operation more than once |
//! | `no-retry-on-refusal` | a request was sent again after a 4xx that refused it (any 4xx but 408, 425 and 429) |
//!
//! The lockstep statistic behind `desynchronized` is in [`desync`].

use serde::{Deserialize, Serialize};

pub(crate) mod desync;

pub use desync::Reading;
pub(crate) use desync::{DesyncRound, DesyncSummary};

use super::journal::{Entry, Journal, WriteEffect};
use super::retry_after::{self, RetryAfter};
use super::runner::ClientExit;
use super::scenario::{CheckLevels, Level};
use crate::text::plural;
use desync::desynchronized;

/// Loopback overshoot is 1-45 ms; a retry this much early still counts as honouring.
pub(crate) const HONOR_TOLERANCE_MS: f64 = 50.0;

/// The seven checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayCheck {
    /// Every client reaches a delivered 2xx and its command exits 0.
    Recovered,
    /// No client sends more requests than the scenario's budget.
    AttemptBudget,
    /// No retry comes back before the Retry-After it was given.
    RetryAfterHonored,
    /// The fleet's retries are spread out, not in lockstep.
    Desynchronized,
    /// No POST or PATCH is sent again after a failed or lost answer
    /// without the same Idempotency-Key.
    NoUnsafeReplay,
    /// No write is applied twice by the server's store.
    NoDuplicateWrite,
    /// No request is sent again after a 4xx that refused it.
    NoRetryOnRefusal,
}

impl ReplayCheck {
    /// Every check, in report order.
    pub(crate) const ALL: [ReplayCheck; 7] = [
        ReplayCheck::Recovered,
        ReplayCheck::AttemptBudget,
        ReplayCheck::RetryAfterHonored,
        ReplayCheck::Desynchronized,
        ReplayCheck::NoUnsafeReplay,
        ReplayCheck::NoDuplicateWrite,
        ReplayCheck::NoRetryOnRefusal,
    ];

    /// The stable id used in reports and scenario files.
    pub fn id(self) -> &'static str {
        match self {
            ReplayCheck::Recovered => "recovered",
            ReplayCheck::AttemptBudget => "attempt-budget",
            ReplayCheck::RetryAfterHonored => "retry-after-honored",
            ReplayCheck::Desynchronized => "desynchronized",
            ReplayCheck::NoUnsafeReplay => "no-unsafe-replay",
            ReplayCheck::NoDuplicateWrite => "no-duplicate-write",
            ReplayCheck::NoRetryOnRefusal => "no-retry-on-refusal",
        }
    }
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CheckStatus {
    /// The clients did what the check asks.
    Pass,
    /// At least one client did not; the violations say who and where.
    Fail,
    /// The journal cannot show it (e.g. lockstep with fewer than 4 clients).
    NotApplicable,
    /// The scenario turned the check off.
    Off,
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CheckResult {
    pub(crate) check: ReplayCheck,
    /// Pass, fail, not applicable or off.
    pub status: CheckStatus,
    /// What a failure weighs: `error` fails the replay.
    pub level: Level,
    /// One line for people.
    pub message: String,
    /// What each client did wrong, with the request that showed it.
    pub violations: Vec<Violation>,
}

/// One thing a client did wrong, tied to the request that showed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Violation {
    pub(crate) client: usize,
    /// The journal `seq` of the offending request, if one request showed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) seq: Option<usize>,
    pub(crate) level: Level,
    /// What the client did, in one line.
    pub message: String,
}

/// Everything the checks concluded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    pub(crate) checks: Vec<CheckResult>,
    pub(crate) desync_rounds: Vec<DesyncRound>,
    /// The pooled `desynchronized` reading, when there was enough evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) desync: Option<DesyncSummary>,
}

#[cfg(test)]
impl Judgement {
    /// Whether a failed check of weight `error` fails the replay (the
    /// report's verdict says the same; the tests read it here).
    fn failed(&self) -> bool {
        self.checks.iter().any(|c| c.status == CheckStatus::Fail && c.level == Level::Error)
    }
}

/// What the checks read.
#[derive(Debug, Clone, Copy)]
pub struct ChecksInput<'a> {
    /// Every request the server saw.
    pub journal: &'a Journal,
    /// One per client, in client order.
    pub exits: &'a [ClientExit],
    /// Most requests one client may send (the scenario's `budget`).
    pub budget: usize,
    /// What a failure of each check weighs (the scenario's `checks`).
    pub levels: &'a CheckLevels,
}

/// Runs all seven checks.
pub fn run(input: ChecksInput<'_>) -> Judgement {
    let (desync_check, desync_rounds, desync) = desynchronized(input);
    Judgement {
        checks: vec![
            recovered(input),
            attempt_budget(input),
            retry_after_honored(input),
            desync_check,
            no_unsafe_replay(input),
            no_duplicate_write(input),
            no_retry_on_refusal(input),
        ],
        desync_rounds,
        desync,
    }
}

/// The least arrival-to-arrival gap after `prev` that its `Retry-After`
/// asked for, in ms: delay-seconds count from when the answer went out (the
/// client cannot start waiting before it has the answer), an HTTP-date is a
/// fixed moment. `Err` carries a served value that does not parse.
pub(crate) fn asked_wait_ms(prev: &Entry, anchor_unix_ms: u64) -> Result<Option<f64>, String> {
    let Some(value) = prev.retry_after.as_deref() else { return Ok(None) };
    match retry_after::parse(value) {
        Some(RetryAfter::Delay(d)) => {
            let answer_took = (prev.answered_at_ms() - prev.at_ms).max(0.0);
            Ok(Some(answer_took + d.as_secs_f64() * 1000.0))
        }
        Some(RetryAfter::Until { unix_ms }) => {
            let date_at_ms = unix_ms as f64 - anchor_unix_ms as f64;
            Ok(Some((date_at_ms - prev.at_ms).max(0.0)))
        }
        None => Err(format!("served Retry-After '{value}' does not parse")),
    }
}

/// What the served `Retry-After` values actually asked a perfect client to
/// wait before its first 2xx: per client, the sum of the asked waits of its
/// answers before its first 2xx; the median over the clients that got one.
/// HTTP-dates count from each request to the date served, after its
/// whole-second rounding. `None` when no client was told a wait.
pub(crate) fn demanded_wait_ms(journal: &Journal, clients: usize) -> Option<u64> {
    let mut sums: Vec<f64> = Vec::new();
    for i in 0..clients {
        let mut sum = 0.0;
        let mut told = false;
        for e in journal.of_client(i) {
            if e.succeeded() {
                break;
            }
            if let Ok(Some(a)) = asked_wait_ms(e, journal.anchor_unix_ms) {
                sum += a;
                told = true;
            }
        }
        if told {
            sums.push(sum);
        }
    }
    if sums.is_empty() {
        return None;
    }
    sums.sort_by(|a, b| a.total_cmp(b));
    let m = sums[(sums.len() - 1) / 2];
    // Finite and non-negative by construction; `as` saturates anyway.
    Some(m.round().max(0.0) as u64)
}

fn rank(level: Level) -> u8 {
    match level {
        Level::Off => 0,
        Level::Warning => 1,
        Level::Error => 2,
    }
}

/// Builds a result from violations: fail if any, at the heaviest level.
pub(super) fn outcome(
    check: ReplayCheck,
    level: Level,
    violations: Vec<Violation>,
    pass_msg: String,
    fail_msg: String,
) -> CheckResult {
    if level == Level::Off && violations.iter().all(|v| v.level == Level::Off) {
        return CheckResult {
            check,
            status: CheckStatus::Off,
            level,
            message: "turned off by the scenario".into(),
            violations: vec![],
        };
    }
    if violations.is_empty() {
        return CheckResult { check, status: CheckStatus::Pass, level, message: pass_msg, violations };
    }
    let worst = violations.iter().map(|v| v.level).max_by_key(|l| rank(*l)).unwrap_or(level);
    CheckResult { check, status: CheckStatus::Fail, level: worst, message: fail_msg, violations }
}

pub(super) fn clients(input: &ChecksInput<'_>) -> usize {
    input.exits.len()
}

fn recovered(input: ChecksInput<'_>) -> CheckResult {
    let level = input.levels.recovered;
    let mut v = Vec::new();
    let mut silent = 0;
    for i in 0..clients(&input) {
        let reqs = input.journal.of_client(i);
        let exit = &input.exits[i];
        let Some(last) = reqs.last() else {
            silent += 1;
            // Nothing was tested: never a mere warning.
            v.push(Violation {
                client: i,
                seq: None,
                level: Level::Error,
                message: format!(
                    "client {i}: no request arrived ({}); check that CMD sends its requests to $RETRYGATE_URL",
                    exit.describe()
                ),
            });
            continue;
        };
        if !reqs.iter().any(|e| e.succeeded()) {
            v.push(Violation {
                client: i,
                seq: Some(last.seq),
                level,
                message: format!(
                    "client {i} gave up after {} without a 2xx (last answer {}); safe for the dependency, \
                     but the call failed",
                    plural(reqs.len(), "attempt", "attempts"),
                    last.status
                ),
            });
        } else if !exit.success() {
            v.push(Violation {
                client: i,
                seq: None,
                level,
                message: format!("client {i} got a 2xx but CMD {}", exit.describe()),
            });
        }
    }
    let n = clients(&input);
    let fail_msg = if silent == n && n > 0 {
        "no request arrived from any client: nothing was tested".to_string()
    } else {
        format!("{} of {} did not recover", v.len(), plural(n, "client", "clients"))
    };
    let pass_msg = if n == 1 {
        "the one client reached a 2xx and exited 0".to_string()
    } else {
        format!("all {n} clients reached a 2xx and exited 0")
    };
    outcome(ReplayCheck::Recovered, level, v, pass_msg, fail_msg)
}

fn attempt_budget(input: ChecksInput<'_>) -> CheckResult {
    let level = input.levels.attempt_budget;
    let budget = input.budget;
    let mut v = Vec::new();
    for i in 0..clients(&input) {
        let reqs = input.journal.of_client(i);
        if reqs.len() > budget {
            v.push(Violation {
                client: i,
                seq: Some(reqs[budget].seq),
                level,
                message: format!("client {i} made {} attempts; the budget is {budget}", reqs.len()),
            });
        }
    }
    let fail = format!("{} went over the budget of {budget} attempts", plural(v.len(), "client", "clients"));
    outcome(
        ReplayCheck::AttemptBudget,
        level,
        v,
        format!("every client stayed within {budget} attempts"),
        fail,
    )
}

fn retry_after_honored(input: ChecksInput<'_>) -> CheckResult {
    let level = input.levels.retry_after_honored;
    let mut v = Vec::new();
    let mut judged = 0;
    let mut unreadable = 0;
    for i in 0..clients(&input) {
        let reqs = input.journal.of_client(i);
        for pair in reqs.windows(2) {
            let (prev, next) = (pair[0], pair[1]);
            let asked = match asked_wait_ms(prev, input.journal.anchor_unix_ms) {
                Ok(Some(a)) => a,
                Ok(None) => continue,
                Err(e) => {
                    // Fail closed: we cannot tell whether the client honoured it.
                    unreadable += 1;
                    v.push(Violation { client: i, seq: Some(next.seq), level: Level::Error, message: e });
                    continue;
                }
            };
            judged += 1;
            let gap = next.at_ms - prev.at_ms;
            if gap < asked - HONOR_TOLERANCE_MS {
                v.push(Violation {
                    client: i,
                    seq: Some(next.seq),
                    level,
                    message: format!(
                        "client {i} came back {gap:.0} ms after a {} that asked for Retry-After: {} \
                         ({asked:.0} ms); at least {:.0} ms was required",
                        prev.status,
                        prev.retry_after.as_deref().unwrap_or(""),
                        asked - HONOR_TOLERANCE_MS
                    ),
                });
            }
        }
    }
    if judged == 0 && v.is_empty() && level != Level::Off {
        return CheckResult {
            check: ReplayCheck::RetryAfterHonored,
            status: CheckStatus::NotApplicable,
            level,
            message: "no client retried after an answer that carried Retry-After".into(),
            violations: v,
        };
    }
    let fail = format!(
        "{} of {} came sooner than Retry-After asked",
        v.len(),
        plural(judged + unreadable, "retry", "retries")
    );
    let pass = if judged == 1 {
        "the one retry honoured Retry-After".to_string()
    } else {
        format!("all {judged} retries honoured Retry-After")
    };
    outcome(ReplayCheck::RetryAfterHonored, level, v, pass, fail)
}

fn is_unsafe_method(m: &str) -> bool {
    m.eq_ignore_ascii_case("POST") || m.eq_ignore_ascii_case("PATCH")
}

fn no_unsafe_replay(input: ChecksInput<'_>) -> CheckResult {
    let level = input.levels.no_unsafe_replay;
    let mut v = Vec::new();
    for i in 0..clients(&input) {
        let reqs = input.journal.of_client(i);
        for (k, next) in reqs.iter().enumerate() {
            if !is_unsafe_method(&next.method) {
                continue;
            }
            // The same operation sent before: same method and target. It is a
            // replay if that earlier attempt failed.
            let Some(prev) = reqs[..k].iter().rev().find(|e| e.method == next.method && e.path == next.path)
            else {
                continue;
            };
            // Sent again while the first was still unanswered: the client
            // timed out on it, and the server may still apply it.
            let timed_out = next.at_ms < prev.answered_at_ms();
            if prev.succeeded() && !timed_out {
                continue;
            }
            let after = if timed_out {
                "while the first was still unanswered (a timeout)".to_string()
            } else {
                format!("after a {}", prev.status)
            };
            let problem = match (&prev.idempotency_key, &next.idempotency_key) {
                (_, None) => Some("without an Idempotency-Key".to_string()),
                (None, Some(_)) => {
                    Some("with an Idempotency-Key the first attempt did not carry".to_string())
                }
                (Some(a), Some(b)) if a != b => {
                    Some(format!("with a different Idempotency-Key ('{a}' then '{b}')"))
                }
                _ => None,
            };
            if let Some(problem) = problem {
                v.push(Violation {
                    client: i,
                    seq: Some(next.seq),
                    level,
                    message: format!(
                        "client {i} sent {} {} again {after} {problem}; the first one may have been applied",
                        next.method, next.path
                    ),
                });
            }
        }
    }
    let fail = format!(
        "{} replayed without the same Idempotency-Key",
        plural(v.len(), "non-idempotent request", "non-idempotent requests")
    );
    outcome(
        ReplayCheck::NoUnsafeReplay,
        level,
        v,
        "no POST/PATCH was re-sent without the same Idempotency-Key".into(),
        fail,
    )
}

/// The write store's account of one replay: which operations were applied
/// how often, which requests repeated an applied one, and who parked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WriteAccount {
    /// Writes that took effect, counting duplicates.
    pub applied: usize,
    /// Distinct operations (per client) that took effect.
    pub operations: usize,
    /// Requests that repeated an operation already applied, and were applied again.
    pub(crate) duplicates: Vec<usize>,
    /// Requests that repeated an applied key and were answered from the stored result.
    pub deduplicated: Vec<usize>,
    /// Clients whose applied write got no usable answer and who did not send
    /// it again: they parked it as "maybe created".
    pub parked: Vec<usize>,
}

impl WriteAccount {
    /// "writes applied: 2 for 1 operation".
    pub(crate) fn summary(&self) -> String {
        if self.applied == 0 {
            return "no write was applied".to_string();
        }
        format!("writes applied: {} for {}", self.applied, plural(self.operations, "operation", "operations"))
    }
}

/// Tallies the journal's write records.
pub(crate) fn write_account(journal: &Journal, clients: usize) -> WriteAccount {
    let mut acc = WriteAccount::default();
    for i in 0..clients {
        let reqs = journal.of_client(i);
        let mut seen: Vec<&str> = Vec::new();
        for (k, e) in reqs.iter().enumerate() {
            let Some(w) = &e.write else { continue };
            match w.effect {
                WriteEffect::Applied => {
                    acc.applied += 1;
                    if seen.contains(&w.operation.as_str()) {
                        acc.duplicates.push(e.seq);
                    } else {
                        seen.push(&w.operation);
                        acc.operations += 1;
                    }
                    // No usable answer (lost, or a non-2xx over an applied
                    // write), and the operation never sent again: parked.
                    let unanswered = e.lost.is_some() || !e.succeeded();
                    let sent_again = reqs[k + 1..].iter().any(|later| {
                        later.write.as_ref().is_some_and(|l| l.operation == w.operation)
                            || later.method == e.method && later.path == e.path
                    });
                    if unanswered && !sent_again && !acc.parked.contains(&i) {
                        acc.parked.push(i);
                    }
                }
                WriteEffect::Deduplicated => acc.deduplicated.push(e.seq),
                WriteEffect::NotApplied => {}
            }
        }
    }
    acc.duplicates.sort_unstable();
    acc.deduplicated.sort_unstable();
    acc
}

fn no_duplicate_write(input: ChecksInput<'_>) -> CheckResult {
    let level = input.levels.no_duplicate_write;
    let acc = write_account(input.journal, clients(&input));
    let mut v = Vec::new();
    for &seq in &acc.duplicates {
        let Some(e) = input.journal.entries.get(seq) else { continue };
        let client = e.client.unwrap_or(0);
        let first = input
            .journal
            .entries
            .iter()
            .find(|f| {
                f.client == e.client
                    && f.write
                        .as_ref()
                        .zip(e.write.as_ref())
                        .is_some_and(|(a, b)| a.operation == b.operation && a.effect == WriteEffect::Applied)
            })
            .map(|f| f.seq);
        v.push(Violation {
            client,
            seq: Some(seq),
            level,
            message: format!(
                "client {client} sent {} {} again {} and the server applied it a second time (first applied at request {}); \
                 send one Idempotency-Key with every attempt of a write, or do not re-send a write whose answer was lost",
                e.method,
                e.path,
                if e.idempotency_key.is_some() { "with a new Idempotency-Key" } else { "without an Idempotency-Key" },
                first.map(|s| s.to_string()).unwrap_or_else(|| "?".into())
            ),
        });
    }
    if acc.applied == 0 && level != Level::Off {
        return CheckResult {
            check: ReplayCheck::NoDuplicateWrite,
            status: CheckStatus::NotApplicable,
            level,
            message: "no write (POST/PATCH) was applied by the server".into(),
            violations: v,
        };
    }
    let mut notes = vec![acc.summary()];
    if !acc.deduplicated.is_empty() {
        let seqs: Vec<String> = acc.deduplicated.iter().map(|s| s.to_string()).collect();
        notes.push(format!(
            "{} of an applied Idempotency-Key answered from the stored result, not applied again ({} {})",
            plural(acc.deduplicated.len(), "repeat", "repeats"),
            if seqs.len() == 1 { "request" } else { "requests" },
            seqs.join(", ")
        ));
    }
    if !acc.parked.is_empty() {
        let who: Vec<String> = acc.parked.iter().map(|c| c.to_string()).collect();
        notes.push(format!(
            "client {} got no answer to an applied write and did not re-send it: parked as \"maybe created\" for a person, which is safe",
            who.join(", ")
        ));
    }
    let replays: Vec<String> = acc.duplicates.iter().map(|s| s.to_string()).collect();
    outcome(
        ReplayCheck::NoDuplicateWrite,
        level,
        v,
        notes.join("; "),
        format!("{}; request {} replayed an applied write", notes.join("; "), replays.join(", ")),
    )
}

/// Whether `status` refused the request itself: a 4xx other than 408
/// (Request Timeout), 425 (Too Early) and 429 (Too Many Requests), the
/// three that say the same request may succeed later (RFC 9110 §15.5.9,
/// RFC 8470 §5.2, RFC 6585 §4). Any other 4xx is the same answer every
/// time the same request is sent (RFC 9110 §15.5: "the client seems to
/// have erred").
pub(crate) fn is_refusal(status: u16) -> bool {
    (400..500).contains(&status) && !matches!(status, 408 | 425 | 429)
}

/// A request sent again (same method and target) after the server refused
/// it with a delivered 4xx that is not 408, 425 or 429: a client that
/// retries every error. An answer the client never got (lost) is not a
/// refusal it saw.
fn no_retry_on_refusal(input: ChecksInput<'_>) -> CheckResult {
    let level = input.levels.no_retry_on_refusal;
    let mut v = Vec::new();
    let mut refused = 0;
    for i in 0..clients(&input) {
        let reqs = input.journal.of_client(i);
        refused += reqs.iter().filter(|e| is_refusal(e.status) && e.lost.is_none()).count();
        for (k, next) in reqs.iter().enumerate() {
            let Some(prev) = reqs[..k].iter().rev().find(|e| e.method == next.method && e.path == next.path)
            else {
                continue;
            };
            if !is_refusal(prev.status) || prev.lost.is_some() {
                continue;
            }
            v.push(Violation {
                client: i,
                seq: Some(next.seq),
                level,
                message: format!(
                    "client {i} sent {} {} again after a {} refused it; only 408, 425 and 429 among the 4xx \
                     answers say to try again, so retry those (and 5xx) and give up on the rest",
                    next.method, next.path, prev.status
                ),
            });
        }
    }
    if refused == 0 && level != Level::Off {
        return CheckResult {
            check: ReplayCheck::NoRetryOnRefusal,
            status: CheckStatus::NotApplicable,
            level,
            message: "no request was refused with a 4xx other than 408, 425 or 429".into(),
            violations: v,
        };
    }
    let fail = format!("{} sent again after a 4xx refused it", plural(v.len(), "request", "requests"));
    let pass = format!(
        "no client sent a refused request again ({} refused)",
        plural(refused, "request", "requests")
    );
    outcome(ReplayCheck::NoRetryOnRefusal, level, v, pass, fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANCHOR: u64 = 1_700_000_000_000;

    /// A request of `client` at `at_ms`, answered `status` with `ra`.
    pub(super) fn req(client: usize, at_ms: f64, method: &str, status: u16, ra: Option<&str>) -> Entry {
        Entry {
            seq: 0,
            client: Some(client),
            at_ms,
            method: method.into(),
            path: format!("/c/{client}/x"),
            idempotency_key: None,
            user_agent: None,
            status,
            retry_after: ra.map(str::to_string),
            delay_ms: 0,
            answered_ms: None,
            write: None,
            lost: None,
        }
    }

    /// The journal of `entries`, in arrival order (also used by the
    /// `desync` simulations).
    pub(super) fn journal(mut entries: Vec<Entry>) -> Journal {
        entries.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
        for (i, e) in entries.iter_mut().enumerate() {
            e.seq = i;
        }
        Journal { anchor_unix_ms: ANCHOR, entries, ..Journal::default() }
    }

    /// Client `c` attempts at `times`: 429 + `ra` for all but the last, then 200.
    fn run(c: usize, times: &[f64], ra: Option<&str>) -> Vec<Entry> {
        times
            .iter()
            .enumerate()
            .map(
                |(k, t)| {
                    if k + 1 == times.len() {
                        req(c, *t, "GET", 200, None)
                    } else {
                        req(c, *t, "GET", 429, ra)
                    }
                },
            )
            .collect()
    }

    fn ok_exits(n: usize) -> Vec<ClientExit> {
        vec![ClientExit::Exited { code: 0 }; n]
    }

    fn run_with(j: &Journal, exits: &[ClientExit]) -> Judgement {
        super::run(ChecksInput { journal: j, exits, budget: 5, levels: &CheckLevels::default() })
    }

    fn check(j: &Judgement, id: ReplayCheck) -> &CheckResult {
        j.checks.iter().find(|c| c.check == id).unwrap()
    }

    #[test]
    fn a_patient_jittered_client_passes_everything() {
        let mut e = Vec::new();
        for c in 0..8 {
            let j = c as f64 * 60.0;
            e.extend(run(c, &[0.0, 1000.0 + j, 2100.0 + 2.0 * j, 3200.0 + 3.0 * j], Some("1")));
        }
        let out = run_with(&journal(e), &ok_exits(8));
        for c in &out.checks {
            // GETs only: there is no write to judge; 429s only: nothing
            // was refused.
            let want = if matches!(c.check, ReplayCheck::NoDuplicateWrite | ReplayCheck::NoRetryOnRefusal) {
                CheckStatus::NotApplicable
            } else {
                CheckStatus::Pass
            };
            assert_eq!(c.status, want, "{c:?}");
        }
        assert!(!out.failed());
        assert_eq!(out.desync_rounds.len(), 3);
    }

    #[test]
    fn storm_ends_with_200_but_fails_retry_after() {
        let e = run(0, &[0.0, 10.0, 20.0, 30.0], Some("1"));
        let out = run_with(&journal(e), &ok_exits(1));
        assert_eq!(check(&out, ReplayCheck::Recovered).status, CheckStatus::Pass);
        let ra = check(&out, ReplayCheck::RetryAfterHonored);
        assert_eq!(ra.status, CheckStatus::Fail);
        assert_eq!(ra.level, Level::Error);
        assert_eq!(ra.violations.len(), 3);
        assert!(ra.violations[0].message.contains("came back 10 ms after a 429"), "{:?}", ra.violations[0]);
        assert!(out.failed());
    }

    #[test]
    fn retry_after_tolerance_is_50_ms() {
        let on_edge = run(0, &[0.0, 950.0, 1900.0], Some("1"));
        let out = run_with(&journal(on_edge), &ok_exits(1));
        assert_eq!(check(&out, ReplayCheck::RetryAfterHonored).status, CheckStatus::Pass);
        let early = run(0, &[0.0, 949.0, 1900.0], Some("1"));
        let out = run_with(&journal(early), &ok_exits(1));
        assert_eq!(check(&out, ReplayCheck::RetryAfterHonored).violations.len(), 1);
    }

    #[test]
    fn http_date_is_judged_against_the_date_in_all_three_formats() {
        // The date is 2 s after the anchor; the first request came at 300 ms.
        let date = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ANCHOR + 2000);
        for fmt in [
            super::super::scenario::DateFormat::ImfFixdate,
            super::super::scenario::DateFormat::Rfc850,
            super::super::scenario::DateFormat::Asctime,
        ] {
            let d = retry_after::format_date(date, fmt);
            let good = run(0, &[300.0, 1960.0], Some(&d));
            let out = run_with(&journal(good), &ok_exits(1));
            assert_eq!(check(&out, ReplayCheck::RetryAfterHonored).status, CheckStatus::Pass, "{d}");
            let bad = run(0, &[300.0, 1940.0], Some(&d));
            let out = run_with(&journal(bad), &ok_exits(1));
            let c = check(&out, ReplayCheck::RetryAfterHonored);
            assert_eq!(c.status, CheckStatus::Fail, "{d}");
            assert!(c.violations[0].message.contains("(1700 ms)"), "{}", c.violations[0].message);
        }
    }

    #[test]
    fn delay_seconds_count_from_when_the_answer_went_out() {
        // The server took 80 ms to answer: a client that then waited 1 s came 1080 ms later.
        let mut first = req(0, 0.0, "GET", 429, Some("1"));
        first.answered_ms = Some(80.0);
        let ok = journal(vec![first.clone(), req(0, 1040.0, "GET", 200, None)]);
        assert_eq!(
            check(&run_with(&ok, &ok_exits(1)), ReplayCheck::RetryAfterHonored).status,
            CheckStatus::Pass
        );
        let early = journal(vec![first, req(0, 1020.0, "GET", 200, None)]);
        let out = run_with(&early, &ok_exits(1));
        let c = check(&out, ReplayCheck::RetryAfterHonored);
        assert!(
            c.violations[0].message.contains("(1080 ms); at least 1030 ms"),
            "{}",
            c.violations[0].message
        );
        // A held answer not yet marked answered counts its planned delay.
        let mut held = req(0, 0.0, "GET", 429, Some("1"));
        held.delay_ms = 2000;
        assert_eq!(asked_wait_ms(&held, ANCHOR), Ok(Some(3000.0)));
    }

    #[test]
    fn an_unparsable_served_retry_after_fails_closed() {
        let e = run(0, &[0.0, 5000.0], Some("1.5"));
        let out = run_with(&journal(e), &ok_exits(1));
        let c = check(&out, ReplayCheck::RetryAfterHonored);
        assert_eq!((c.status, c.level), (CheckStatus::Fail, Level::Error));
        assert!(c.violations[0].message.contains("'1.5' does not parse"));
    }

    #[test]
    fn no_retry_after_served_makes_the_check_not_applicable() {
        let e = run(0, &[0.0, 10.0], None);
        let out = run_with(&journal(e), &ok_exits(1));
        assert_eq!(check(&out, ReplayCheck::RetryAfterHonored).status, CheckStatus::NotApplicable);
    }

    #[test]
    fn giving_up_is_a_warning_but_silence_is_an_error() {
        let e = vec![req(0, 0.0, "GET", 429, Some("1")), req(0, 100.0, "GET", 429, Some("1"))];
        let exits = vec![ClientExit::Exited { code: 1 }, ClientExit::Exited { code: 0 }];
        let out = run_with(&journal(e), &exits);
        let c = check(&out, ReplayCheck::Recovered);
        assert_eq!((c.status, c.level), (CheckStatus::Fail, Level::Error));
        assert_eq!(c.violations.len(), 2);
        assert_eq!(c.violations[0].level, Level::Warning);
        assert!(c.violations[0].message.contains("gave up after 2 attempts"));
        assert_eq!(c.violations[1].level, Level::Error);
        assert!(c.violations[1].message.contains("client 1: no request arrived (exited with code 0)"));

        let only_gave_up = vec![req(0, 0.0, "GET", 429, Some("1"))];
        let out = run_with(&journal(only_gave_up), &[ClientExit::Exited { code: 1 }]);
        let c = check(&out, ReplayCheck::Recovered);
        assert_eq!((c.status, c.level), (CheckStatus::Fail, Level::Warning));
        assert!(!out.failed(), "a warning alone does not fail the replay");
    }

    #[test]
    fn a_200_with_a_failing_exit_does_not_recover() {
        let e = run(0, &[0.0, 1000.0], Some("1"));
        let out = run_with(&journal(e), &[ClientExit::KilledAtTimeout]);
        let c = check(&out, ReplayCheck::Recovered);
        assert_eq!(c.status, CheckStatus::Fail);
        assert!(c.violations[0].message.contains("killed"), "{}", c.violations[0].message);
    }

    #[test]
    fn nobody_connecting_says_nothing_was_tested() {
        let out = run_with(&journal(vec![]), &ok_exits(3));
        let c = check(&out, ReplayCheck::Recovered);
        assert_eq!(c.message, "no request arrived from any client: nothing was tested");
        assert!(out.failed());
    }

    #[test]
    fn attempt_budget_points_at_the_first_request_over_it() {
        let e = run(0, &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0], None);
        let out = run_with(&journal(e), &ok_exits(1));
        let c = check(&out, ReplayCheck::AttemptBudget);
        assert_eq!(c.status, CheckStatus::Fail);
        assert_eq!(c.violations[0].seq, Some(5));
        assert_eq!(c.violations[0].message, "client 0 made 7 attempts; the budget is 5");
    }

    fn post(c: usize, at: f64, status: u16, key: Option<&str>) -> Entry {
        let mut e = req(c, at, "POST", status, Some("1"));
        e.idempotency_key = key.map(str::to_string);
        e
    }

    #[test]
    fn replayed_post_without_key_fails() {
        let e = vec![post(0, 0.0, 429, None), post(0, 1000.0, 200, None)];
        let out = run_with(&journal(e), &ok_exits(1));
        let c = check(&out, ReplayCheck::NoUnsafeReplay);
        assert_eq!((c.status, c.level), (CheckStatus::Fail, Level::Error));
        assert_eq!(c.violations[0].seq, Some(1));
        assert!(c.violations[0]
            .message
            .contains("sent POST /c/0/x again after a 429 without an Idempotency-Key"));
    }

    #[test]
    fn replayed_post_with_a_different_key_fails_and_same_key_passes() {
        let e = vec![post(0, 0.0, 429, Some("a")), post(0, 1000.0, 200, Some("b"))];
        let out = run_with(&journal(e), &ok_exits(1));
        assert!(check(&out, ReplayCheck::NoUnsafeReplay).violations[0]
            .message
            .contains("different Idempotency-Key"));
        let e = vec![post(0, 0.0, 429, None), post(0, 1000.0, 200, Some("b"))];
        let out = run_with(&journal(e), &ok_exits(1));
        assert!(check(&out, ReplayCheck::NoUnsafeReplay).violations[0].message.contains("did not carry"));
        let e = vec![post(0, 0.0, 503, Some("k")), post(0, 1000.0, 200, Some("k"))];
        let out = run_with(&journal(e), &ok_exits(1));
        assert_eq!(check(&out, ReplayCheck::NoUnsafeReplay).status, CheckStatus::Pass);
    }

    #[test]
    fn a_new_post_after_a_success_and_retried_gets_are_fine() {
        let e = vec![
            post(0, 0.0, 200, None),
            post(0, 10.0, 200, None),
            req(0, 20.0, "GET", 429, None),
            req(0, 30.0, "GET", 200, None),
        ];
        let out = run_with(&journal(e), &ok_exits(1));
        assert_eq!(check(&out, ReplayCheck::NoUnsafeReplay).status, CheckStatus::Pass);
    }

    #[test]
    fn a_post_sent_again_while_the_first_is_held_is_a_replay_after_a_timeout() {
        let mut first = post(0, 0.0, 200, None);
        first.delay_ms = 3000;
        let again = post(0, 2000.0, 200, None);
        let out = run_with(&journal(vec![first.clone(), again]), &ok_exits(1));
        let c = check(&out, ReplayCheck::NoUnsafeReplay);
        assert_eq!(c.status, CheckStatus::Fail);
        assert!(c.violations[0].message.contains("while the first was still unanswered (a timeout) without"));
        // After the held answer went out, a new POST is a new operation.
        let later = post(0, 3500.0, 200, None);
        let out = run_with(&journal(vec![first, later]), &ok_exits(1));
        assert_eq!(check(&out, ReplayCheck::NoUnsafeReplay).status, CheckStatus::Pass);
    }

    #[test]
    fn patch_is_unsafe_too_and_off_turns_a_check_off() {
        let mut a = req(0, 0.0, "PATCH", 429, None);
        a.path = "/c/0/o".into();
        let mut b = a.clone();
        b.at_ms = 5.0;
        b.status = 200;
        let j = journal(vec![a, b]);
        let out = run_with(&j, &ok_exits(1));
        assert_eq!(check(&out, ReplayCheck::NoUnsafeReplay).status, CheckStatus::Fail);
        let levels = CheckLevels { no_unsafe_replay: Level::Off, ..CheckLevels::default() };
        let out = super::run(ChecksInput { journal: &j, exits: &ok_exits(1), budget: 5, levels: &levels });
        assert_eq!(check(&out, ReplayCheck::NoUnsafeReplay).status, CheckStatus::Off);
    }

    fn write(c: usize, at: f64, status: u16, key: Option<&str>, effect: WriteEffect, lost: bool) -> Entry {
        let mut e = req(c, at, "POST", status, None);
        e.idempotency_key = key.map(str::to_string);
        let op = key.map(|k| format!("key:{k}")).unwrap_or_else(|| "digest:POST /c/0/x abc".to_string());
        e.write = Some(super::super::journal::WriteRecord { operation: op, effect });
        e.lost = lost.then_some(super::super::journal::Loss::Reset);
        e
    }

    #[test]
    fn a_write_re_sent_without_a_key_after_a_lost_answer_is_a_duplicate() {
        let e = vec![
            write(0, 0.0, 201, None, WriteEffect::Applied, true),
            write(0, 500.0, 201, None, WriteEffect::Applied, false),
        ];
        let out = run_with(&journal(e), &ok_exits(1));
        let c = check(&out, ReplayCheck::NoDuplicateWrite);
        assert_eq!((c.status, c.level), (CheckStatus::Fail, Level::Error));
        assert!(c.message.starts_with("writes applied: 2 for 1 operation;"), "{}", c.message);
        assert!(c.message.contains("request 1 replayed an applied write"), "{}", c.message);
        assert_eq!(c.violations[0].seq, Some(1));
        assert!(
            c.violations[0].message.contains("without an Idempotency-Key and the server applied it a second time (first applied at request 0)"),
            "{}",
            c.violations[0].message
        );
        assert!(out.failed());
    }

    #[test]
    fn a_write_re_sent_with_its_key_is_deduplicated_and_passes() {
        let e = vec![
            write(0, 0.0, 502, Some("k"), WriteEffect::Applied, false),
            write(0, 500.0, 201, Some("k"), WriteEffect::Deduplicated, false),
        ];
        let out = run_with(&journal(e), &ok_exits(1));
        let c = check(&out, ReplayCheck::NoDuplicateWrite);
        assert_eq!(c.status, CheckStatus::Pass);
        assert_eq!(
            c.message,
            "writes applied: 1 for 1 operation; 1 repeat of an applied Idempotency-Key answered from the \
             stored result, not applied again (request 1)"
        );
    }

    #[test]
    fn a_client_that_parks_an_unanswered_write_passes_and_is_named() {
        let e = vec![write(0, 0.0, 201, None, WriteEffect::Applied, true)];
        let out = run_with(&journal(e), &[ClientExit::Exited { code: 1 }]);
        let c = check(&out, ReplayCheck::NoDuplicateWrite);
        assert_eq!(c.status, CheckStatus::Pass);
        assert!(
            c.message.contains("client 0 got no answer to an applied write and did not re-send it: parked"),
            "{}",
            c.message
        );
        // It did not recover: a warning, not a failure of the replay.
        assert_eq!(check(&out, ReplayCheck::Recovered).level, Level::Warning);
        assert!(!out.failed());
        let acc = write_account(&journal(vec![write(0, 0.0, 201, None, WriteEffect::Applied, true)]), 1);
        assert_eq!(acc.parked, [0]);
    }

    #[test]
    fn no_write_applied_makes_no_duplicate_write_not_applicable() {
        let e = vec![write(0, 0.0, 429, None, WriteEffect::NotApplied, false)];
        let out = run_with(&journal(e), &ok_exits(1));
        let c = check(&out, ReplayCheck::NoDuplicateWrite);
        assert_eq!(c.status, CheckStatus::NotApplicable);
        assert_eq!(c.message, "no write (POST/PATCH) was applied by the server");
    }

    #[test]
    fn demanded_wait_is_what_the_served_values_asked() {
        // Dates served 2718 ms and 2983 ms after the requests that got them.
        let d1 = retry_after::format_date(
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(ANCHOR + 3000),
            super::super::scenario::DateFormat::ImfFixdate,
        );
        let d2 = retry_after::format_date(
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(ANCHOR + 6000),
            super::super::scenario::DateFormat::ImfFixdate,
        );
        let mut a = req(0, 282.0, "GET", 429, Some(&d1));
        a.answered_ms = Some(283.0);
        let b = req(0, 3017.0, "GET", 429, Some(&d2));
        let c = req(0, 6010.0, "GET", 200, None);
        assert_eq!(demanded_wait_ms(&journal(vec![a, b, c]), 1), Some(2718 + 2983));
        assert_eq!(demanded_wait_ms(&journal(run(0, &[0.0, 10.0], None)), 1), None);
    }

    #[test]
    fn a_request_sent_again_after_a_400_fails_no_retry_on_refusal() {
        let e = vec![req(0, 0.0, "GET", 400, None), req(0, 300.0, "GET", 200, None)];
        let out = run_with(&journal(e), &ok_exits(1));
        let c = check(&out, ReplayCheck::NoRetryOnRefusal);
        assert_eq!((c.status, c.level), (CheckStatus::Fail, Level::Error));
        assert_eq!(c.message, "1 request sent again after a 4xx refused it");
        assert_eq!(c.violations.len(), 1);
        assert_eq!(c.violations[0].seq, Some(1));
        assert_eq!(
            c.violations[0].message,
            "client 0 sent GET /c/0/x again after a 400 refused it; only 408, 425 and 429 among the 4xx answers say to try again, so retry those (and 5xx) and give up on the rest"
        );
        assert!(out.failed());
    }

    #[test]
    fn giving_up_after_a_400_and_retrying_a_429_408_or_425_pass_no_retry_on_refusal() {
        let gave_up =
            run_with(&journal(vec![req(0, 0.0, "GET", 400, None)]), &[ClientExit::Exited { code: 1 }]);
        let c = check(&gave_up, ReplayCheck::NoRetryOnRefusal);
        assert_eq!(c.status, CheckStatus::Pass);
        assert_eq!(c.message, "no client sent a refused request again (1 request refused)");
        for status in [408, 425, 429] {
            let e = vec![req(0, 0.0, "GET", status, None), req(0, 300.0, "GET", 200, None)];
            let out = run_with(&journal(e), &ok_exits(1));
            let c = check(&out, ReplayCheck::NoRetryOnRefusal);
            assert_eq!(c.status, CheckStatus::NotApplicable, "{status}");
            assert_eq!(c.message, "no request was refused with a 4xx other than 408, 425 or 429");
        }
        // Another request after a refusal is not the refused one sent again.
        let mut other = req(0, 300.0, "GET", 200, None);
        other.path = "/c/0/other".into();
        let out = run_with(&journal(vec![req(0, 0.0, "GET", 404, None), other]), &ok_exits(1));
        assert_eq!(check(&out, ReplayCheck::NoRetryOnRefusal).status, CheckStatus::Pass);
    }

    #[test]
    fn a_refusal_the_client_never_received_is_not_one_it_retried() {
        let mut lost = req(0, 0.0, "GET", 400, None);
        lost.lost = Some(super::super::journal::Loss::Close);
        let out = run_with(&journal(vec![lost, req(0, 300.0, "GET", 200, None)]), &ok_exits(1));
        assert_eq!(check(&out, ReplayCheck::NoRetryOnRefusal).status, CheckStatus::NotApplicable);
    }

    #[test]
    fn no_retry_on_refusal_can_be_turned_off_and_refusals_are_any_4xx_but_408_425_429() {
        let levels = CheckLevels { no_retry_on_refusal: Level::Off, ..CheckLevels::default() };
        let e = vec![req(0, 0.0, "GET", 400, None), req(0, 300.0, "GET", 200, None)];
        let out =
            super::run(ChecksInput { journal: &journal(e), exits: &ok_exits(1), budget: 5, levels: &levels });
        assert_eq!(check(&out, ReplayCheck::NoRetryOnRefusal).status, CheckStatus::Off);
        let refusals: Vec<u16> = (100..600).filter(|&s| is_refusal(s)).collect();
        assert_eq!(refusals.len(), 97);
        assert!(refusals.iter().all(|s| (400..500).contains(s) && ![408, 425, 429].contains(s)));
    }
}
