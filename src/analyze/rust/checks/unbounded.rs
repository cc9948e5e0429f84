//! `rust/<lib>-unbounded`: a retry that had a bound on attempts or time has
//! none in the head, or a new retry has none at all.

use serde_json::json;

use super::{Applies, Change, RustCheck};
use crate::analyze::rust::policy::{Attempts, Policy};
use crate::finding::{Kind, KindDoc, Severity};

/// A bound on attempts disappeared, or a new retry has none.
pub(crate) const CHECK: RustCheck = RustCheck {
    name: "unbounded",
    kinds: &[Kind::RetryUnbounded],
    applies: Applies::Policies,
    doc: KindDoc {
        what: "A retry policy that had a limit on attempts or time has none in the head (an error); so has an operation the base performed once in the same function and the head retries with no limit (an error); a wholly new retry has no limit (a warning; the gate's `limits.max_attempts` makes it block).",
        why: "An unbounded retry never gives up: during an outage every caller keeps a request in flight and the dependency never sees the load drop.",
        example: "FixedInterval::from_millis(100).take(3)  ->  FixedInterval::from_millis(100)",
        use_instead: "Bound it: `.take(3)`, `.with_max_times(3)`, or a total time limit.",
    },
};

/// An unbounded head site: an error when its base was bounded, a warning
/// when it is new.
pub(crate) fn decide(base: Option<&Policy>, head: &Policy) -> Option<Change> {
    if head.attempts.value != Attempts::Unbounded {
        return None;
    }
    let Some(base) = base else {
        // A new unbounded retry is a design choice (a reconnect loop, a
        // queue consumer) more often than a mistake: it warns. It blocks
        // when a bound is removed (below), or when the base config sets
        // `limits.max_attempts` (the gate checks that).
        let mut c = Change::new(
            Kind::RetryUnbounded,
            &CHECK,
            format!(
                "new retry has no limit on attempts or time ({}); set `limits.max_attempts` to make this blocking",
                head.attempts.why
            ),
        );
        c.severity = Severity::Warning;
        c.head = Some(json!({"attempts": "unbounded"}));
        return Some(c);
    };
    let b = base.attempts.value;
    if !matches!(b, Attempts::Total(_) | Attempts::TimeBounded(_)) {
        return None;
    }
    let mut c = Change::new(
        Kind::RetryUnbounded,
        &CHECK,
        format!(
            "retry became unbounded: the base allowed {}, the head has no limit ({})",
            b.describe(),
            head.attempts.why
        ),
    );
    c.base = Some(json!({"attempts": b.to_json()}));
    c.head = Some(json!({"attempts": "unbounded"}));
    Some(c)
}

/// A new unbounded retry around an operation the base already performed
/// once in the same function (`op().await?` wrapped in `loop { match
/// op().await { Ok(..) => break, Err(..) => .. } }`): the operation had one
/// attempt and now has no limit, so it is the bounded-to-unbounded error,
/// not a new retry's warning. `op` names the operation.
pub(crate) fn wrapped(head: &Policy, op: &str) -> Option<Change> {
    if head.attempts.value != Attempts::Unbounded {
        return None;
    }
    let mut c = Change::new(
        Kind::RetryUnbounded,
        &CHECK,
        format!(
            "retry became unbounded: the base performed {op} once in this function, the head retries it with no limit ({})",
            head.attempts.why
        ),
    );
    c.base = Some(json!({"attempts": 1}));
    c.head = Some(json!({"attempts": "unbounded"}));
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::super::compare_sites;
    use super::super::testing::{kinds, policy};
    use super::*;
    use crate::analyze::rust::libs::backon;

    #[test]
    fn bounded_to_unbounded_is_its_own_kind() {
        let b = policy(backon::LIB, Attempts::Total(4.0), Some(true));
        let h = policy(backon::LIB, Attempts::Unbounded, Some(true));
        assert_eq!(kinds(&compare_sites(Some(&b), &h)), [Kind::RetryUnbounded]);
        assert!(compare_sites(Some(&h), &h).is_empty(), "already unbounded is not news");
        let removed = compare_sites(Some(&b), &h);
        assert_eq!(removed[0].severity, Severity::Error, "removing a bound blocks");
        let new = compare_sites(None, &h);
        assert_eq!(kinds(&new), [Kind::RetryUnbounded]);
        assert_eq!(new[0].severity, Severity::Warning, "a new unbounded retry warns");
        assert!(new[0].message.contains("limits.max_attempts"), "{}", new[0].message);
    }

    #[test]
    fn an_unknown_base_count_is_not_a_removed_bound() {
        let unknown = policy(backon::LIB, Attempts::Unknown, Some(true));
        let h = policy(backon::LIB, Attempts::Unbounded, Some(true));
        assert!(decide(Some(&unknown), &h).is_none());
        assert!(decide(None, &policy(backon::LIB, Attempts::Total(3.0), Some(true))).is_none());
    }
}
