//! The `desynchronized` check: did a fleet of clients spread its retries out,
//! or come back in lockstep?
//!
//! A verdict must not flip between runs of the same commit, so the statistic
//! is built for computed error rates, not a guessed bar per round:
//!
//! 1. Retry round *k* is the *k*-th retry of every client whose previous
//!    attempt failed. A round is judged when at least [`DESYNC_MIN_CLIENTS`]
//!    clients took part, except an **immediate first retry** (median wait
//!    below [`IMMEDIATE_MS`]; urllib3's first retry waits 0 s), which is
//!    shown but not judged: it comes back as staggered as the first burst
//!    was, adds no new synchronisation, and no library jitters a zero wait.
//!    Later rounds are judged whatever their wait: coming back at once again
//!    and again is a storm.
//! 2. Each judged round has a *scale*: the weakest jitter window that counts
//!    as real for its wait `W` (the wait the server asked for, else the median
//!    wait taken): `max(100 ms, min(10% of W, 250 ms))`.
//! 3. Every pair of clients in a round gives two distances, divided by the
//!    round's scale: the difference of their waits (blind to how staggered
//!    the processes started) and the difference of their arrivals (catches a
//!    fleet that waits for the same HTTP-date).
//! 4. All pairs of all judged rounds are pooled; the statistic is the smaller
//!    of the **median** wait distance and the **median** arrival distance.
//!    A median is robust to a client descheduled in one round, and pooling
//!    tightens it as the evidence grows, which a per-round vote does not.
//! 5. Lockstep when the statistic is below [`LOCKSTEP_RATIO`]. With fewer
//!    than [`MIN_JUDGED_WAITS`] judged waits the check is not applicable:
//!    too little evidence to meet the error rates, so it says how many
//!    clients to run instead of guessing.
//!
//! The rates are computed by seeded simulations over this very function (the
//! tests at the end of this file; docs/replay.md, "The `desynchronized`
//! statistic"): a fleet with real jitter fails in fewer than 1 run in 1,000,
//! a fleet in true lockstep fails in more than 999 of 1,000.

use serde::{Deserialize, Serialize};

use super::{
    asked_wait_ms, clients, outcome, CheckId, CheckResult, CheckStatus, JudgeInput, Violation,
    HONOR_TOLERANCE_MS,
};
use crate::replay::journal::{Entry, Journal};
use crate::replay::scenario::Level;

/// Fewer clients in a round than this cannot show lockstep.
pub const DESYNC_MIN_CLIENTS: usize = 4;
/// A first retry round whose median wait is below this is immediate (not judged).
pub const IMMEDIATE_MS: f64 = 100.0;
/// The weakest real jitter: this fraction of the wait ...
pub const JITTER_FRACTION: f64 = 0.1;
/// ... capped at this window (a fixed 250 ms window is real jitter at any wait) ...
pub const JITTER_CAP_MS: f64 = 250.0;
/// ... and never below this one: a narrower window is lost in scheduling noise.
pub const JITTER_FLOOR_MS: f64 = 100.0;
/// Lockstep when the pooled median pair distance is below this fraction of the scale.
pub const LOCKSTEP_RATIO: f64 = 0.11;
/// Which quantile of the pooled pair distances is the statistic.
pub const POOLED_QUANTILE: f64 = 0.5;
/// Judged waits (client x round) needed for a decision, e.g. 8 clients x 3 rounds.
pub const MIN_JUDGED_WAITS: usize = 24;

/// One retry round, as the statistic saw it.
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
    /// max - min of the waits.
    pub wait_spread_ms: f64,
    /// max - min of the arrivals.
    pub arrival_spread_ms: f64,
    /// min(wait spread, arrival spread), kept from report version 1's first shape.
    pub spread_ms: f64,
    /// This round's own lockstep bar: [`LOCKSTEP_RATIO`] x `scale_ms`.
    pub threshold_ms: f64,
    /// The weakest real jitter window for this round's wait.
    #[serde(default)]
    pub scale_ms: f64,
    /// This round alone: the smaller of the median pair distances of waits
    /// and of arrivals, in ms (for people; the verdict pools all rounds).
    #[serde(default)]
    pub median_pair_ms: f64,
    /// An immediate first retry (median wait below 100 ms): shown, not judged.
    #[serde(default)]
    pub immediate: bool,
    /// This round alone would be read as lockstep.
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

/// The `q` quantile (0..=1), nearest rank below.
fn quantile(xs: &mut [f64], q: f64) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    if xs.is_empty() {
        return 0.0;
    }
    xs[((xs.len() - 1) as f64 * q) as usize]
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

/// Absolute differences of every pair.
fn pair_distances(xs: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(xs.len() * xs.len().saturating_sub(1) / 2);
    for (a, x) in xs.iter().enumerate() {
        for y in &xs[a + 1..] {
            out.push((x - y).abs());
        }
    }
    out
}

/// The weakest real jitter window for a wait of `wait_ms`.
pub fn jitter_scale_ms(wait_ms: f64) -> f64 {
    JITTER_FLOOR_MS.max((JITTER_FRACTION * wait_ms).min(JITTER_CAP_MS))
}

/// Everything the statistic is computed from.
struct Evidence {
    rounds: Vec<DesyncRound>,
    /// Wait distances / scale, all judged rounds pooled.
    waits: Vec<f64>,
    /// Arrival distances / scale, all judged rounds pooled.
    arrivals: Vec<f64>,
    judged_waits: usize,
}

impl Evidence {
    /// The pooled statistic: the smaller of the two pooled quantiles.
    fn ratio(&mut self) -> f64 {
        quantile(&mut self.waits, POOLED_QUANTILE).min(quantile(&mut self.arrivals, POOLED_QUANTILE))
    }
}

fn evidence(journal: &Journal, clients: usize) -> Evidence {
    let per_client: Vec<Vec<&Entry>> = (0..clients).map(|i| journal.of_client(i)).collect();
    let max_len = per_client.iter().map(Vec::len).max().unwrap_or(0);
    let mut ev = Evidence { rounds: Vec::new(), waits: Vec::new(), arrivals: Vec::new(), judged_waits: 0 };
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
        let median_wait_ms = median(&mut waits.clone());
        let asked_wait_ms = (asked.len() == waits.len()).then(|| median(&mut asked));
        let scale_ms = jitter_scale_ms(asked_wait_ms.unwrap_or(median_wait_ms));
        let wait_pairs = pair_distances(&waits);
        let arrival_pairs = pair_distances(&arrivals);
        let median_pair_ms = median(&mut wait_pairs.clone()).min(median(&mut arrival_pairs.clone()));
        // Only the first retry may be immediate: a later round that comes back
        // at once is a storm, and judged like any other.
        let immediate = k == 1 && median_wait_ms < IMMEDIATE_MS;
        if !immediate {
            ev.judged_waits += waits.len();
            ev.waits.extend(wait_pairs.iter().map(|d| d / scale_ms));
            ev.arrivals.extend(arrival_pairs.iter().map(|d| d / scale_ms));
        }
        ev.rounds.push(DesyncRound {
            round: k,
            clients: waits.len(),
            asked_wait_ms,
            honoured_retry_after: all_told_and_honoured,
            median_wait_ms,
            wait_spread_ms: spread(&waits),
            arrival_spread_ms: spread(&arrivals),
            spread_ms: spread(&waits).min(spread(&arrivals)),
            threshold_ms: LOCKSTEP_RATIO * scale_ms,
            scale_ms,
            median_pair_ms,
            immediate,
            lockstep: !immediate && median_pair_ms < LOCKSTEP_RATIO * scale_ms,
        });
    }
    ev
}

/// The retry rounds with enough clients to be shown.
pub fn desync_rounds(journal: &Journal, clients: usize) -> Vec<DesyncRound> {
    evidence(journal, clients).rounds
}

/// The pooled statistic (median pair distance over the weakest real jitter
/// window), or `None` when there are too few judged waits to decide.
pub fn desync_statistic(journal: &Journal, clients: usize) -> Option<f64> {
    let mut ev = evidence(journal, clients);
    (ev.judged_waits >= MIN_JUDGED_WAITS).then(|| ev.ratio())
}

pub(super) fn desynchronized(input: JudgeInput<'_>) -> (CheckResult, Vec<DesyncRound>) {
    let levels = input.levels;
    let n = clients(&input);
    let mut ev = evidence(input.journal, n);
    let check = CheckId::Desynchronized;
    if levels.desynchronized == Level::Off && levels.desynchronized_after_retry_after == Level::Off {
        let r = outcome(check, Level::Off, vec![], String::new(), String::new());
        return (r, ev.rounds);
    }
    let judged: Vec<DesyncRound> = ev.rounds.iter().filter(|r| !r.immediate).cloned().collect();
    // A later round that came back at once is a storm: whatever spread its
    // few milliseconds of waits show is scheduling noise, not jitter (a
    // window under 100 ms is not real jitter), so it is lockstep outright.
    let storms: Vec<&DesyncRound> = judged.iter().filter(|r| r.median_wait_ms < IMMEDIATE_MS).collect();
    if !storms.is_empty() {
        let rounds: Vec<String> = storms
            .iter()
            .map(|r| {
                format!("round {} ({} clients, median wait {:.0} ms)", r.round, r.clients, r.median_wait_ms)
            })
            .collect();
        let message = format!(
            "the fleet came back at once again: {}; a wait under {IMMEDIATE_MS:.0} ms after the first retry is a storm, \
             not a backoff; back off with jitter",
            rounds.join(", ")
        );
        let level = levels.desynchronized;
        let v = vec![Violation { client: 0, seq: None, level, message: message.clone() }];
        let r = outcome(check, level, v, String::new(), format!("lockstep: {message}"));
        return (r, ev.rounds);
    }
    if ev.judged_waits < MIN_JUDGED_WAITS {
        let immediate = ev.rounds.len() - judged.len();
        let message = if n < DESYNC_MIN_CLIENTS {
            format!(
                "needs {DESYNC_MIN_CLIENTS} or more clients retrying in the same round (had {n} client(s)); \
                 run with --clients 8 or more"
            )
        } else if ev.rounds.is_empty() {
            format!("no retry round had {DESYNC_MIN_CLIENTS} or more clients retrying")
        } else if judged.is_empty() && immediate > 0 {
            format!(
                "the only retry round was an immediate first retry (median wait under {IMMEDIATE_MS:.0} ms), \
                 which repeats the first burst rather than re-synchronising it"
            )
        } else {
            format!(
                "too little evidence for a verdict that does not flip between runs: {} judged wait(s) \
                 (clients x retry rounds), {MIN_JUDGED_WAITS} needed; run with --clients 8 or more",
                ev.judged_waits
            )
        };
        let r = CheckResult {
            check,
            status: CheckStatus::NotApplicable,
            level: levels.desynchronized,
            message,
            violations: vec![],
        };
        return (r, ev.rounds);
    }
    let ratio = ev.ratio();
    let pairs = ev.waits.len();
    let summary = format!(
        "{} judged retry round(s), {pairs} pair(s) of clients: median distance {:.0}% of the weakest \
         real jitter window (lockstep below {:.0}%)",
        judged.len(),
        ratio * 100.0,
        LOCKSTEP_RATIO * 100.0
    );
    if ratio >= LOCKSTEP_RATIO {
        let r = CheckResult {
            check,
            status: CheckStatus::Pass,
            level: levels.desynchronized,
            message: format!("retries spread out: {summary}"),
            violations: vec![],
        };
        return (r, ev.rounds);
    }
    let all_honoured = judged.iter().all(|r| r.honoured_retry_after);
    // Only say "exactly" when it is true: every round's median wait is within
    // the loopback tolerance of what was asked.
    let exactly = all_honoured
        && judged.iter().all(|r| r.asked_wait_ms.is_some_and(|a| r.median_wait_ms <= a + HONOR_TOLERANCE_MS));
    let level = if all_honoured { levels.desynchronized_after_retry_after } else { levels.desynchronized };
    let why = if exactly {
        "every client waited exactly what Retry-After asked, so the fleet came back together; \
         add jitter on top of Retry-After"
    } else if all_honoured {
        "every client honoured Retry-After and then waited the same extra time, so the fleet came back \
         together; make the extra wait random"
    } else {
        "the clients chose their own waits and still came back together; add jitter to the backoff"
    };
    let v = vec![Violation { client: 0, seq: None, level, message: format!("{summary}; {why}") }];
    let r = outcome(check, level, v, String::new(), format!("lockstep: {summary}"));
    (r, ev.rounds)
}

#[cfg(test)]
mod tests {
    //! Seeded simulations over [`desynchronized`]: the journals a fleet would
    //! leave, with the scheduling noise measured on loopback made worse on
    //! purpose, judged by the same function the replay uses. Then a few
    //! hand-built journals for the messages.
    use super::*;
    use crate::replay::runner::ClientExit;
    use crate::replay::scenario::CheckLevels;

    /// splitmix64: a seeded generator, so every run simulates the same fleets.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
        fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
            lo + (hi - lo) * self.unit()
        }
        fn gauss(&mut self, sigma: f64) -> f64 {
            let u = self.unit().max(1e-300);
            let v = self.unit();
            sigma * (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    /// Scheduling noise on one wait: Gaussian with sigma 5 ms (lockstep
    /// clients measured here spread 1-7 ms per wait), and in 1 request of 50
    /// a process descheduled by up to 300 ms (seen under a load average of 11).
    const NOISE_SIGMA_MS: f64 = 5.0;
    const DESCHEDULE_P: f64 = 0.02;
    const DESCHEDULE_MAX_MS: f64 = 300.0;

    fn noise(r: &mut Rng) -> f64 {
        let mut x = r.gauss(NOISE_SIGMA_MS);
        if r.unit() < DESCHEDULE_P {
            x += r.uniform(0.0, DESCHEDULE_MAX_MS);
        }
        x
    }

    #[derive(Clone, Copy, Debug)]
    enum Fleet {
        /// Identical waits, within scheduling noise.
        Lockstep,
        /// Uniform jitter over the weakest real window for each wait
        /// (10% of it, at least 100 ms, at most 250 ms).
        WeakestJitter,
        /// A fixed 250 ms window, whatever the wait.
        Window250,
    }

    #[derive(Clone, Copy, Debug)]
    enum Waits {
        /// The same wait every round (Retry-After: `base`, or a constant backoff).
        Constant,
        /// base x 2^k.
        Doubling,
        /// urllib3: an immediate first retry, then base x 2^(k-1).
        ImmediateThenDoubling,
    }

    use crate::replay::judge::tests::journal;

    fn entry(c: usize, at_ms: f64, status: u16) -> Entry {
        crate::replay::judge::tests::req(c, at_ms, "GET", status, None)
    }

    /// One simulated replay: `n` clients started up to 300 ms apart (Python
    /// takes that long to start on a busy machine), `rounds` retries each.
    fn fleet(r: &mut Rng, n: usize, rounds: usize, base: f64, waits: Waits, kind: Fleet) -> Journal {
        let mut entries = Vec::new();
        for c in 0..n {
            let mut at = r.uniform(0.0, 300.0);
            for k in 0..=rounds {
                entries.push(entry(c, at, if k == rounds { 200 } else { 429 }));
                let w = match waits {
                    Waits::Constant => base,
                    Waits::Doubling => base * 2f64.powi(k as i32),
                    Waits::ImmediateThenDoubling if k == 0 => 0.0,
                    Waits::ImmediateThenDoubling => base * 2f64.powi(k as i32 - 1),
                };
                let jitter = match kind {
                    _ if w == 0.0 => 0.0,
                    Fleet::Lockstep => 0.0,
                    Fleet::WeakestJitter => r.uniform(0.0, jitter_scale_ms(w)),
                    Fleet::Window250 => r.uniform(0.0, 250.0),
                };
                // The noise can shorten a wait, never below 1 ms.
                at += (w + jitter + noise(r)).max(1.0);
            }
        }
        journal(entries)
    }

    fn status(j: &Journal, n: usize) -> CheckStatus {
        let exits = vec![ClientExit::Exited { code: 0 }; n];
        let levels = CheckLevels::default();
        desynchronized(JudgeInput { journal: j, exits: &exits, budget: 10, levels: &levels }).0.status
    }

    /// The fleets a replay decides on: (clients, retry rounds, waits). Every
    /// shape has at least MIN_JUDGED_WAITS judged waits.
    const SHAPES: &[(usize, usize, Waits)] = &[
        (8, 3, Waits::Constant),
        (8, 3, Waits::Doubling),
        (6, 4, Waits::Doubling),
        (12, 2, Waits::Constant),
        (12, 3, Waits::ImmediateThenDoubling),
        (24, 1, Waits::Constant),
    ];
    /// First waits: 0.5 s (the scale's floor) to 4 s (its cap).
    const BASES_MS: &[f64] = &[500.0, 1000.0, 2000.0, 4000.0];

    /// Runs `trials` seeded replays per shape and first wait; returns the
    /// rate of `bad` outcomes over all of them, and the worst cell.
    fn rates(kind: Fleet, trials: usize, bad: impl Fn(CheckStatus) -> bool) -> (f64, f64, String) {
        let (mut total, mut worst) = (0, (0, String::new()));
        for (s, &(n, rounds, waits)) in SHAPES.iter().enumerate() {
            for (b, &base) in BASES_MS.iter().enumerate() {
                let mut r = Rng(0x5EED_0000 + (s * 16 + b) as u64 + kind as u64 * 0x1_0000);
                let count = (0..trials)
                    .filter(|_| bad(status(&fleet(&mut r, n, rounds, base, waits, kind), n)))
                    .count();
                total += count;
                if count >= worst.0 {
                    worst = (count, format!("{n} clients, {rounds} rounds, {waits:?} from {base} ms"));
                }
            }
        }
        let runs = (trials * SHAPES.len() * BASES_MS.len()) as f64;
        (total as f64 / runs, worst.0 as f64 / trials as f64, worst.1)
    }

    /// Per shape and first wait: 24 cells, 24,000 simulated replays per fleet.
    const TRIALS: usize = 1000;

    #[test]
    fn a_jittered_fleet_fails_fewer_than_1_in_1000_runs() {
        for kind in [Fleet::WeakestJitter, Fleet::Window250] {
            let (rate, worst, at) = rates(kind, TRIALS, |s| s == CheckStatus::Fail);
            eprintln!("{kind:?}: false failures {rate} overall, worst cell {worst} at {at}");
            assert!(rate < 0.001, "{kind:?}: false failures in {rate} of runs");
            // A single cell has too few runs to show 1 in 1,000; it must not be far off.
            assert!(worst <= 0.003, "{kind:?}: false failures in {worst} of runs at {at}");
        }
    }

    #[test]
    fn a_fleet_in_lockstep_fails_more_than_999_in_1000_runs() {
        let (rate, worst, at) = rates(Fleet::Lockstep, TRIALS, |s| s != CheckStatus::Fail);
        eprintln!("Lockstep: escaped {rate} overall, worst cell {worst} at {at}");
        assert!(rate < 0.001, "lockstep escaped in {rate} of runs");
        assert!(worst <= 0.003, "lockstep escaped in {worst} of runs at {at}");
    }

    /// Client `c` attempts at `times`: 429 with `ra` for all but the last, then 200.
    fn run(c: usize, times: &[f64], ra: Option<&str>) -> Vec<Entry> {
        let last = times.len() - 1;
        times
            .iter()
            .enumerate()
            .map(|(k, t)| {
                let mut e = entry(c, *t, if k == last { 200 } else { 429 });
                if k != last {
                    e.retry_after = ra.map(str::to_string);
                }
                e
            })
            .collect()
    }

    fn judged(j: &Journal, n: usize) -> (CheckResult, Vec<DesyncRound>) {
        let exits = vec![ClientExit::Exited { code: 0 }; n];
        let levels = CheckLevels::default();
        desynchronized(JudgeInput { journal: j, exits: &exits, budget: 10, levels: &levels })
    }

    #[test]
    fn lockstep_after_exactly_the_asked_wait_is_a_warning_that_says_so() {
        let mut e = Vec::new();
        for c in 0..8 {
            let s = c as f64 * 7.0; // staggered start, identical waits
            e.extend(run(c, &[s, s + 1003.0, s + 2006.0, s + 3009.0], Some("1")));
        }
        let (c, rounds) = judged(&journal(e), 8);
        assert_eq!((c.status, c.level), (CheckStatus::Fail, Level::Warning));
        assert!(
            c.violations[0].message.contains("every client waited exactly what Retry-After asked"),
            "{c:?}"
        );
        assert!(rounds.iter().all(|r| r.lockstep && r.honoured_retry_after && !r.immediate));
    }

    #[test]
    fn waiting_longer_than_asked_in_lockstep_is_not_called_exactly() {
        // Retry-After: 1, but every client waited 2 s and then 4 s.
        let mut e = Vec::new();
        for c in 0..8 {
            let s = c as f64 * 5.0;
            e.extend(run(c, &[s, s + 2001.0, s + 6003.0, s + 10_004.0], Some("1")));
        }
        let (c, _) = judged(&journal(e), 8);
        assert_eq!((c.status, c.level), (CheckStatus::Fail, Level::Warning));
        let m = &c.violations[0].message;
        assert!(!m.contains("exactly"), "{m}");
        assert!(m.contains("honoured Retry-After and then waited the same extra time"), "{m}");
    }

    #[test]
    fn lockstep_without_retry_after_is_an_error() {
        let mut e = Vec::new();
        for c in 0..8 {
            let s = c as f64 * 40.0; // widely staggered start, identical waits
            e.extend(run(c, &[s, s + 1000.0, s + 3000.0, s + 7000.0], None));
        }
        let (c, rounds) = judged(&journal(e), 8);
        assert_eq!((c.status, c.level), (CheckStatus::Fail, Level::Error));
        assert!(c.violations[0].message.contains("add jitter to the backoff"), "{c:?}");
        assert!(c.message.starts_with("lockstep: 3 judged retry round(s), 84 pair(s)"), "{}", c.message);
        assert!(rounds[0].arrival_spread_ms > 250.0 && rounds[0].wait_spread_ms < 1.0);
    }

    #[test]
    fn everyone_waiting_for_the_same_moment_is_lockstep() {
        // Staggered waits, identical arrivals: the arrival distance catches it.
        let mut e = Vec::new();
        for c in 0..8 {
            let s = c as f64 * 60.0;
            e.extend(run(c, &[s, 2005.0 + c as f64, 4005.0 + c as f64, 6005.0 + c as f64], None));
        }
        let (c, rounds) = judged(&journal(e), 8);
        assert_eq!(c.status, CheckStatus::Fail);
        assert!(rounds[0].wait_spread_ms > 400.0);
    }

    #[test]
    fn a_jittered_fleet_passes_and_one_bunched_round_does_not_flip_it() {
        let mut e = Vec::new();
        for c in 0..8 {
            let j = c as f64;
            // Round 1 bunched within 7 ms; rounds 2 and 3 spread over 350 ms.
            e.extend(run(c, &[0.0, 1000.0 + j, 2000.0 + 50.0 * j, 3000.0 + 100.0 * j], None));
        }
        let (c, rounds) = judged(&journal(e), 8);
        assert!(rounds[0].lockstep && !rounds[1].lockstep);
        assert_eq!(c.status, CheckStatus::Pass, "{c:?}");
        assert!(c.message.starts_with("retries spread out: 3 judged retry round(s)"), "{}", c.message);
    }

    #[test]
    fn an_immediate_first_retry_is_shown_but_not_judged() {
        let mut e = Vec::new();
        for c in 0..8 {
            let j = c as f64 * 80.0;
            // urllib3: immediate first retry, then jittered waits.
            e.extend(run(
                c,
                &[c as f64 * 3.0, 5.0 + c as f64 * 3.0, 1005.0 + j, 3005.0 + 2.0 * j, 7005.0 + 3.0 * j],
                None,
            ));
        }
        let (c, rounds) = judged(&journal(e), 8);
        assert!(rounds[0].immediate && !rounds[0].lockstep);
        assert_eq!(rounds.iter().filter(|r| !r.immediate).count(), 3);
        assert_eq!(c.status, CheckStatus::Pass, "{c:?}");

        let mut only = Vec::new();
        for c in 0..8 {
            only.extend(run(c, &[c as f64, 10.0 + c as f64], None));
        }
        let (c, _) = judged(&journal(only), 8);
        assert_eq!(c.status, CheckStatus::NotApplicable);
        assert!(c.message.contains("the only retry round was an immediate first retry"), "{}", c.message);

        // Coming back at once again and again is a storm, and judged.
        let mut storm = Vec::new();
        for c in 0..12 {
            let s = c as f64 * 3.0;
            storm.extend(run(c, &[s, s + 10.0, s + 20.0, s + 30.0], None));
        }
        let (c, rounds) = judged(&journal(storm), 12);
        assert!(rounds[0].immediate && !rounds[1].immediate);
        assert_eq!((c.status, c.level), (CheckStatus::Fail, Level::Error), "{c:?}");
        assert!(
            c.message.contains("came back at once again: round 2 (12 clients, median wait 10 ms)"),
            "{}",
            c.message
        );
        // ... even when scheduling noise spreads its 10 ms waits, and with only 4 clients.
        let mut noisy = Vec::new();
        for c in 0..4 {
            let s = c as f64 * 3.0;
            let n = c as f64 * 11.0;
            noisy.extend(run(c, &[s, s + 10.0, s + 20.0 + n, s + 30.0 + 2.0 * n], None));
        }
        let (c, _) = judged(&journal(noisy), 4);
        assert_eq!(c.status, CheckStatus::Fail, "{c:?}");
    }

    #[test]
    fn too_little_evidence_is_not_applicable_and_says_what_to_run() {
        let mut e = Vec::new();
        for c in 0..4 {
            e.extend(run(c, &[0.0, 1000.0, 2000.0, 3000.0], Some("1")));
        }
        let (c, _) = judged(&journal(e), 4);
        assert_eq!(c.status, CheckStatus::NotApplicable);
        assert!(
            c.message.contains("12 judged wait(s)") && c.message.contains("--clients 8"),
            "{}",
            c.message
        );
    }

    #[test]
    fn too_few_clients_or_no_retries_say_so() {
        let three: Vec<Entry> = (0..3).flat_map(|c| run(c, &[0.0, 1000.0, 2000.0], None)).collect();
        let (c, _) = judged(&journal(three), 3);
        assert_eq!(c.status, CheckStatus::NotApplicable);
        assert!(
            c.message.starts_with("needs 4 or more clients retrying in the same round (had 3"),
            "{}",
            c.message
        );
        let no_retry: Vec<Entry> = (0..8).map(|c| entry(c, 1.0, 200)).collect();
        let (c, rounds) = judged(&journal(no_retry), 8);
        assert!(rounds.is_empty());
        assert_eq!(c.message, "no retry round had 4 or more clients retrying");
        // A 201 that never arrived is no success: the next request is a retry.
        let lost: Vec<Entry> = (0..8)
            .flat_map(|c| {
                let mut first = entry(c, c as f64, 201);
                first.lost = Some(crate::replay::journal::Loss::Reset);
                [first, entry(c, 10.0 + c as f64, 201)]
            })
            .collect();
        let (c, rounds) = judged(&journal(lost), 8);
        assert_eq!(rounds.len(), 1);
        assert!(c.message.contains("immediate first retry"), "{}", c.message);
    }

    #[test]
    fn the_scale_is_the_weakest_real_jitter_window() {
        assert_eq!(jitter_scale_ms(300.0), 100.0);
        assert_eq!(jitter_scale_ms(1500.0), 150.0);
        assert_eq!(jitter_scale_ms(60_000.0), 250.0);
    }

    /// Prints the spread of the pooled statistic per fleet, for choosing
    /// LOCKSTEP_RATIO and the documented rates:
    /// `TRIALS=100000 cargo test --release --lib desync_quantiles -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn desync_quantiles() {
        let trials: usize = std::env::var("TRIALS").ok().and_then(|t| t.parse().ok()).unwrap_or(10_000);
        for kind in [Fleet::Lockstep, Fleet::WeakestJitter, Fleet::Window250] {
            for (s, &(n, rounds, waits)) in SHAPES.iter().enumerate() {
                for (b, &base) in BASES_MS.iter().enumerate() {
                    let mut r = Rng(0x0051 + (s * 16 + b) as u64 + kind as u64 * 0x1_0000);
                    let mut v: Vec<f64> = (0..trials)
                        .filter_map(|_| desync_statistic(&fleet(&mut r, n, rounds, base, waits, kind), n))
                        .collect();
                    v.sort_by(|a, b| a.total_cmp(b));
                    let q =
                        |p: f64| v.get(((v.len() as f64 - 1.0) * p) as usize).copied().unwrap_or(f64::NAN);
                    let below = v.iter().filter(|x| **x < LOCKSTEP_RATIO).count();
                    println!(
                        "{kind:?} n={n} r={rounds} {waits:?} base={base}: decided {} q0.001={:.3} q0.5={:.3} \
                         q0.999={:.3} max={:.3} min={:.3} lockstep={below}",
                        v.len(),
                        q(0.001),
                        q(0.5),
                        q(0.999),
                        q(1.0),
                        q(0.0)
                    );
                }
            }
        }
    }
}
