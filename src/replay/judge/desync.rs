//! The `desynchronized` check: did a fleet of clients spread its retries out,
//! or come back in lockstep?
//!
//! Retry round k is the k-th retry of every
//! client whose previous attempt failed; it is judged when at least
//! [`DESYNC_MIN_CLIENTS`] clients took part. Its *spread* is the smaller of
//! (a) max - min of the waits the clients took before it (gap from their
//! previous attempt) and (b) max - min of its arrival times. (a) ignores how
//! staggered the clients' processes started, which is an artefact of the
//! harness; (b) catches clients that all wait for the same HTTP-date. The
//! round is in lockstep when its spread is below
//! `max(100 ms, 10% of the wait the server asked for)` (without a
//! Retry-After: 10% of the median wait taken). The check fails when more
//! than half of the judged rounds are in lockstep: a jittered fleet whose
//! random waits happen to bunch up in one round is not flagged, and a
//! lockstep fleet is still flagged when one client was descheduled in one
//! round on a busy machine.

use serde::{Deserialize, Serialize};

use super::{
    asked_wait_ms, clients, outcome, CheckId, CheckResult, CheckStatus, JudgeInput, Violation,
    HONOR_TOLERANCE_MS,
};
use crate::replay::journal::{Entry, Journal};
use crate::replay::scenario::Level;

/// Fewer clients than this cannot show lockstep convincingly.
pub const DESYNC_MIN_CLIENTS: usize = 4;
/// A round spread below this is lockstep whatever the wait.
pub const LOCKSTEP_FLOOR_MS: f64 = 100.0;
/// ... or below this fraction of the wait.
pub const LOCKSTEP_FRACTION: f64 = 0.1;

/// The lockstep statistic of one retry round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesyncRound {
    /// 1 = first retry.
    pub round: usize,
    pub clients: usize,
    /// The wait the server asked for (median over clients), if every client was told one.
    pub asked_wait_ms: Option<f64>,
    /// Every client was told a wait and honoured it.
    pub honoured_retry_after: bool,
    pub median_wait_ms: f64,
    pub wait_spread_ms: f64,
    pub arrival_spread_ms: f64,
    /// min(wait spread, arrival spread).
    pub spread_ms: f64,
    pub threshold_ms: f64,
    pub lockstep: bool,
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn spread(xs: &[f64]) -> f64 {
    let max = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let min = xs.iter().cloned().fold(f64::INFINITY, f64::min);
    if xs.is_empty() {
        0.0
    } else {
        max - min
    }
}

/// The retry rounds with enough clients, and their lockstep statistic.
pub fn desync_rounds(journal: &Journal, clients: usize) -> Vec<DesyncRound> {
    let per_client: Vec<Vec<&Entry>> = (0..clients).map(|i| journal.of_client(i)).collect();
    let max_len = per_client.iter().map(Vec::len).max().unwrap_or(0);
    let mut rounds = Vec::new();
    for k in 1..max_len {
        let mut waits = Vec::new();
        let mut arrivals = Vec::new();
        let mut asked = Vec::new();
        let mut all_told_and_honoured = true;
        for reqs in &per_client {
            if reqs.len() <= k || reqs[k - 1].succeeded() {
                continue;
            }
            let (prev, next) = (reqs[k - 1], reqs[k]);
            let wait = next.at_ms - prev.at_ms;
            waits.push(wait);
            arrivals.push(next.at_ms);
            match asked_wait_ms(prev, journal.anchor_unix_ms) {
                Ok(Some(a)) => {
                    asked.push(a);
                    if wait < a - HONOR_TOLERANCE_MS {
                        all_told_and_honoured = false;
                    }
                }
                _ => all_told_and_honoured = false,
            }
        }
        if waits.len() < DESYNC_MIN_CLIENTS {
            continue;
        }
        let wait_spread_ms = spread(&waits);
        let arrival_spread_ms = spread(&arrivals);
        let median_wait_ms = median(&mut waits.clone());
        let asked_wait_ms = (asked.len() == waits.len()).then(|| median(&mut asked));
        let scale = asked_wait_ms.unwrap_or(median_wait_ms);
        let threshold_ms = LOCKSTEP_FLOOR_MS.max(LOCKSTEP_FRACTION * scale);
        let spread_ms = wait_spread_ms.min(arrival_spread_ms);
        rounds.push(DesyncRound {
            round: k,
            clients: waits.len(),
            asked_wait_ms,
            honoured_retry_after: all_told_and_honoured,
            median_wait_ms,
            wait_spread_ms,
            arrival_spread_ms,
            spread_ms,
            threshold_ms,
            lockstep: spread_ms < threshold_ms,
        });
    }
    rounds
}

pub(super) fn desynchronized(input: JudgeInput<'_>) -> (CheckResult, Vec<DesyncRound>) {
    let levels = input.levels;
    let rounds = desync_rounds(input.journal, clients(&input));
    let check = CheckId::Desynchronized;
    if levels.desynchronized == Level::Off && levels.desynchronized_after_retry_after == Level::Off {
        let r = outcome(check, Level::Off, vec![], String::new(), String::new());
        return (r, rounds);
    }
    if rounds.is_empty() {
        let r = CheckResult {
            check,
            status: CheckStatus::NotApplicable,
            level: levels.desynchronized,
            message: if clients(&input) < DESYNC_MIN_CLIENTS {
                format!(
                    "needs {DESYNC_MIN_CLIENTS} or more clients retrying in the same round (had {} client(s)); \
                     run with --clients {DESYNC_MIN_CLIENTS} or more",
                    clients(&input)
                )
            } else {
                format!("no retry round had {DESYNC_MIN_CLIENTS} or more clients retrying")
            },
            violations: vec![],
        };
        return (r, rounds);
    }
    let describe = |r: &DesyncRound| {
        format!(
            "round {}: {} clients within {:.0} ms of each other (lockstep below {:.0} ms)",
            r.round, r.clients, r.spread_ms, r.threshold_ms
        )
    };
    let lockstep: Vec<&DesyncRound> = rounds.iter().filter(|r| r.lockstep).collect();
    if lockstep.len() * 2 <= rounds.len() {
        let spread_out: Vec<String> =
            rounds.iter().filter(|r| !r.lockstep).map(|r| r.round.to_string()).collect();
        let r = CheckResult {
            check,
            status: CheckStatus::Pass,
            level: levels.desynchronized,
            message: format!(
                "{} of {} retry round(s) spread out (round {})",
                spread_out.len(),
                rounds.len(),
                spread_out.join(", ")
            ),
            violations: vec![],
        };
        return (r, rounds);
    }
    let all_honoured = lockstep.iter().all(|r| r.honoured_retry_after);
    let level = if all_honoured { levels.desynchronized_after_retry_after } else { levels.desynchronized };
    let details: Vec<String> = lockstep.iter().map(|r| describe(r)).collect();
    let why = if all_honoured {
        "every client waited exactly what Retry-After asked, so the fleet came back together; \
         add jitter on top of Retry-After"
    } else {
        "the clients chose their own waits and still came back together; add jitter to the backoff"
    };
    let v =
        vec![Violation { client: 0, seq: None, level, message: format!("{}; {why}", details.join("; ")) }];
    let r = outcome(
        check,
        level,
        v,
        String::new(),
        format!("lockstep in {} of {} judged retry round(s)", lockstep.len(), rounds.len()),
    );
    (r, rounds)
}
