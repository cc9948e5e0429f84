//! `rust/<lib>-budget`: a retry budget allows a larger share of retries in
//! the head, or was removed.

use serde_json::json;

use super::{Applies, Change, RustCheck};
use crate::analyze::rust::policy::Policy;
use crate::finding::{Kind, KindDoc};

/// A retry budget grew.
pub(crate) const CHECK: RustCheck = RustCheck {
    name: "budget",
    kinds: &[Kind::RetryCountRaised],
    applies: Applies::Policies,
    doc: KindDoc {
        what: "A retry budget (tower's `TpsBudget`, reqwest's `max_extra_load`) allows a larger share of retries in the head, or was removed (`no_budget()`).",
        why: "A budget is what stops retries from multiplying load during an outage; raising it lets retries take more of the dependency's capacity.",
        example: "retry::for_host(host).max_extra_load(0.2)  ->  .no_budget()",
        use_instead: "Keep the budget at 10-20% of requests.",
    },
};

/// A budget (percent of requests; infinite when removed) that grew between
/// a matched base and head site.
pub(crate) fn decide(base: Option<&Policy>, head: &Policy) -> Option<Change> {
    let (x, y) = (base?.budget_percent?, head.budget_percent?);
    (y > x).then(|| raised(x, y))
}

fn raised(x: f64, y: f64) -> Change {
    let mut c = Change::new(
        Kind::RetryCountRaised,
        &CHECK,
        format!("retry budget raised from {} to {} of requests", pct(x), pct(y)),
    );
    c.base = Some(json!({"budget_percent": x}));
    c.head = Some(json!({"budget_percent": if y.is_finite() { json!(y) } else { json!("unlimited") }}));
    c
}

fn pct(v: f64) -> String {
    if v.is_infinite() {
        "unlimited".into()
    } else {
        format!("{v:.0}%")
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::policy;
    use super::*;
    use crate::analyze::rust::libs::reqwest;
    use crate::analyze::rust::policy::Attempts;

    #[test]
    fn a_raised_or_removed_budget_is_a_finding_and_a_lowered_one_is_not() {
        let with = |b: f64| {
            let mut p = policy(reqwest::LIB, Attempts::Total(3.0), Some(true));
            p.budget_percent = Some(b);
            p
        };
        let c = decide(Some(&with(20.0)), &with(f64::INFINITY)).unwrap();
        assert_eq!(c.message, "retry budget raised from 20% to unlimited of requests");
        assert_eq!(c.head, Some(json!({"budget_percent": "unlimited"})));
        assert!(decide(Some(&with(20.0)), &with(30.0)).is_some());
        assert!(decide(Some(&with(30.0)), &with(20.0)).is_none());
        assert!(decide(None, &with(90.0)).is_none(), "a new budget has nothing to grow from");
    }
}
