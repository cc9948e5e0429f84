//! `rust/<lib>-attempts`: a retry policy may make more attempts, or retry
//! for longer, in the head than in the base.

use serde_json::json;

use super::{Applies, Change, RustCheck};
use crate::analyze::rust::eval::fmt_ms;
use crate::analyze::rust::policy::{Attempts, Policy};
use crate::finding::{Kind, KindDoc};

/// The attempt count or time budget grew.
pub(crate) const CHECK: RustCheck = RustCheck {
    name: "attempts",
    kinds: &[Kind::RetryCountRaised],
    applies: Applies::Policies,
    doc: KindDoc {
        what: "A retry policy may make more attempts (counts normalised to total attempts), or retry for longer (a time-bounded policy), in the head than in the base.",
        why: "Every extra attempt is extra load at the moment the dependency is failing; layered retries multiply (3 attempts at each of 5 layers is 243 calls at the bottom).",
        example: "ExponentialBuilder::default().with_max_times(2)  ->  .with_max_times(6)",
        use_instead: "Keep the attempt count (3 total or fewer) and bound the load with a retry budget instead.",
    },
};

/// A count or time budget that grew between a matched base and head site.
/// A new site has nothing to grow from (an unbounded one is
/// [`super::unbounded`]'s); a bound that disappeared is `unbounded` too.
pub(crate) fn decide(base: Option<&Policy>, head: &Policy) -> Option<Change> {
    let b = base?.attempts.value;
    let h = head.attempts.value;
    let message = match (b, h) {
        (Attempts::Total(x), Attempts::Total(y)) if y > x => format!(
            "retries raised from {} to {} ({} -> {} attempts; {})",
            fmt_count(x - 1.0),
            fmt_count(y - 1.0),
            fmt_count(x),
            fmt_count(y),
            head.attempts.why
        ),
        (Attempts::TimeBounded(x), Attempts::TimeBounded(y)) if y > x => {
            format!("retry time budget raised from {} to {} ({})", fmt_ms(x), fmt_ms(y), head.attempts.why)
        }
        // A count exchanged for a time budget: the attempts the budget
        // holds at the longest delays the policy waits (fewer than with
        // jitter, which waits less on average), against the count.
        (Attempts::Total(x), Attempts::TimeBounded(y)) => match attempts_within(head, y) {
            Some(n) if n > x => format!(
                "a count of {} attempts became a time budget of {} ({}), which holds at least {} attempts at the policy's delays",
                fmt_count(x),
                fmt_ms(y),
                head.attempts.why,
                fmt_count(n)
            ),
            _ => return None,
        },
        _ => return None,
    };
    let mut c = Change::new(Kind::RetryCountRaised, &CHECK, message);
    c.base = Some(json!({"attempts": b.to_json()}));
    c.head = Some(json!({"attempts": h.to_json()}));
    Some(c)
}

/// A new retry of an operation the base performed once in the same
/// function (`op`, as [`crate::analyze::rust`]'s wrapped-operation test
/// names it): a raise from one attempt, as the operation model of the
/// other languages judges it. More than
/// [`crate::analyze::operations::compare::SMALL_NEW_RETRY`] attempts
/// blocks; fewer is the bound nobody needs to review. A write is not asked
/// here: `retry-non-idempotent` says more about it.
pub(crate) fn raised_from_one(head: &Policy, op: &str) -> Option<Change> {
    let small = crate::analyze::operations::compare::SMALL_NEW_RETRY;
    let Attempts::Total(n) = head.attempts.value else { return None };
    if n <= small {
        return None;
    }
    let mut c = Change::new(
        Kind::RetryCountRaised,
        &CHECK,
        format!(
            "the base performed {op} once in this function, the head retries it: 1 -> {} attempts ({}), more than the {} a new retry may make without review",
            fmt_count(n),
            head.attempts.why,
            fmt_count(small)
        ),
    );
    c.base = Some(json!({"attempts": 1}));
    c.head = Some(json!({"attempts": head.attempts.value.to_json()}));
    Some(c)
}

/// How many attempts fit in `budget_ms` when every wait is the longest the
/// policy allows: doubling from its minimum delay, capped at its maximum.
/// `None` when the minimum delay is not known.
fn attempts_within(p: &Policy, budget_ms: f64) -> Option<f64> {
    let min = p.min_delay_ms.filter(|m| *m > 0.0)?;
    let max = p.max_delay_ms.unwrap_or(f64::INFINITY).max(min);
    let (mut waited, mut delay, mut attempts) = (0.0, min, 1.0);
    // Bounded by the loop count too: a 1 ms delay under a day's budget.
    while attempts < 10_000.0 && waited + delay <= budget_ms {
        waited += delay;
        attempts += 1.0;
        delay = (delay * 2.0).min(max);
    }
    Some(attempts)
}

fn fmt_count(v: f64) -> String {
    if v.is_infinite() {
        "unlimited".into()
    } else {
        format!("{}", v as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::super::compare_sites;
    use super::super::testing::{kinds, policy};
    use super::*;
    use crate::analyze::rust::libs::{backoff, backon};

    #[test]
    fn a_count_exchanged_for_a_longer_time_budget_is_a_raise() {
        let mut b = policy(backon::LIB, Attempts::Total(4.0), Some(true));
        b.min_delay_ms = Some(1000.0);
        let mut h = b.clone();
        h.attempts = crate::analyze::rust::policy::Fact::new(
            Attempts::TimeBounded(600_000.0),
            ".build_with_total_retry_duration(..)",
        );
        let c = compare_sites(Some(&b), &h);
        assert_eq!(kinds(&c), [Kind::RetryCountRaised]);
        // 1 + 2 + .. + 256 s = 511 s fit in 600 s: 9 waits, 10 attempts.
        assert!(c[0].message.contains("at least 10 attempts"), "{}", c[0].message);
        let mut short = h.clone();
        short.attempts.value = Attempts::TimeBounded(5_000.0);
        assert!(compare_sites(Some(&b), &short).is_empty(), "1 + 2 s: 3 attempts, fewer than 4");
    }

    #[test]
    fn raised_count_is_a_finding_and_lowered_is_not() {
        let b = policy(backon::LIB, Attempts::Total(3.0), Some(true));
        let h = policy(backon::LIB, Attempts::Total(7.0), Some(true));
        let c = compare_sites(Some(&b), &h);
        assert_eq!(kinds(&c), [Kind::RetryCountRaised]);
        assert!(c[0].message.contains("2 to 6") && c[0].message.contains("3 -> 7"), "{}", c[0].message);
        assert_eq!(c[0].check, &CHECK);
        assert!(compare_sites(Some(&h), &b).is_empty());
    }

    #[test]
    fn a_longer_time_budget_is_raised_and_a_new_site_is_not() {
        let b = policy(backoff::LIB, Attempts::TimeBounded(60_000.0), Some(true));
        let h = policy(backoff::LIB, Attempts::TimeBounded(900_000.0), Some(true));
        let c = decide(Some(&b), &h).unwrap();
        assert!(c.message.starts_with("retry time budget raised from 60 s"), "{}", c.message);
        assert!(decide(Some(&h), &b).is_none());
        assert!(decide(None, &h).is_none(), "a new site has no base count to exceed");
        assert!(decide(Some(&b), &policy(backoff::LIB, Attempts::Total(9.0), Some(true))).is_none());
    }
}
