//! `rust/<lib>-jitter`: the base policy jittered its delays and the head's
//! does not, or a new retry has no jitter.
//!
//! Whether a policy jitters is a library fact (backon does not unless
//! `.with_jitter()` is called: `libs/backon.rs`; backoff does by default:
//! `libs/backoff.rs`); losing it is decided here, for every library.

use serde_json::json;

use super::{Applies, Change, RustCheck};
use crate::analyze::rust::eval::fmt_ms;
use crate::analyze::rust::policy::{Attempts, Policy};
use crate::finding::{Kind, KindDoc};

/// Jitter was lost, or a new retry has none.
pub(crate) const CHECK: RustCheck = RustCheck {
    name: "jitter",
    kinds: &[Kind::JitterRemoved, Kind::RetryWithoutJitter],
    applies: Applies::Policies,
    doc: KindDoc {
        what: "The base policy jittered its delays and the head's does not (an error), or a new retry with more than one attempt has no jitter (a warning).",
        why: "Without jitter, clients that failed together retry together, in waves that keep an overloaded dependency down.",
        example: "backoff::ExponentialBackoff::default()  ->  backon::ExponentialBuilder::default()",
        use_instead: "backon::ExponentialBuilder::default().with_jitter()",
    },
};

/// A head site that is known not to jitter: `jitter-removed` when its base
/// did, `retry-without-jitter` (a warning) when it is new and may call more
/// than once. An unknown jitter on either side decides nothing.
pub(crate) fn decide(base: Option<&Policy>, head: &Policy) -> Option<Change> {
    if head.jitter.value != Some(false) {
        return None;
    }
    match base {
        Some(b) if b.jitter.value == Some(true) => {
            let mut c = Change::new(
                Kind::JitterRemoved,
                &CHECK,
                format!(
                    "jitter removed: the base jittered ({}), the head does not ({})",
                    b.jitter.why, head.jitter.why
                ),
            );
            c.base = Some(json!({"jitter": true, "library": b.lib.id()}));
            c.head = Some(json!({"jitter": false, "library": head.lib.id()}));
            Some(c)
        }
        Some(_) => None,
        None => {
            if head.attempts.value == Attempts::Total(1.0) {
                return None;
            }
            let delay = match (head.min_delay_ms, head.max_delay_ms) {
                (Some(a), Some(b)) if a == b => format!(", fixed {} delay", fmt_ms(a)),
                _ => String::new(),
            };
            let mut c = Change::new(
                Kind::RetryWithoutJitter,
                &CHECK,
                format!("new retry without jitter ({}{delay})", head.jitter.why),
            );
            c.head = Some(json!({"jitter": false, "library": head.lib.id()}));
            Some(c)
        }
    }
}

/// The retries a change removed without a matching head site that cover the
/// same operation as one new retry ([`crate::analyze::rust::ops`]; never
/// every removed retry of the change, which would tie unrelated code
/// together), read as one policy: when every one whose jitter is known
/// jittered, the first of them (the new retry is compared with it by
/// [`replacing`]).
pub(crate) fn replaced<'p>(removed: &[&'p Policy]) -> Option<&'p Policy> {
    let known: Vec<&Policy> = removed.iter().copied().filter(|p| p.jitter.value.is_some()).collect();
    known.first().copied().filter(|_| known.iter().all(|p| p.jitter.value == Some(true)))
}

/// A new retry that replaced removed retries which all jittered
/// (per-endpoint retries folded into one shared retry): losing the jitter is
/// a regression, not a new design, so `jitter-removed` in place of the new
/// site's `retry-without-jitter`.
pub(crate) fn replacing(removed: &Policy, head: &Policy) -> Option<Change> {
    decide(Some(removed), head).filter(|c| c.kind == Kind::JitterRemoved).map(|mut c| {
        c.message = format!("{} (it replaces retries this change removed)", c.message);
        c
    })
}

#[cfg(test)]
mod tests {
    use super::super::compare_sites;
    use super::super::testing::{kinds, policy};
    use super::*;
    use crate::analyze::rust::libs::{aws, backoff, backon, tower};
    use crate::analyze::rust::policy::Lib;
    use crate::finding::Severity;

    #[test]
    fn jitter_removed_only_when_base_had_it() {
        let on = policy(backoff::LIB, Attempts::TimeBounded(900_000.0), Some(true));
        let off = policy(backon::LIB, Attempts::Total(4.0), Some(false));
        let unknown = policy(tower::LIB, Attempts::Unknown, None);
        assert_eq!(kinds(&compare_sites(Some(&on), &off)), [Kind::JitterRemoved]);
        assert!(compare_sites(Some(&off), &off).is_empty());
        assert!(compare_sites(Some(&unknown), &off).is_empty());
        assert!(compare_sites(Some(&off), &on).is_empty(), "adding jitter is fine");
    }

    #[test]
    fn new_sites_warn_without_jitter_but_single_attempts_do_not() {
        let off = policy(Lib::HAND_ROLLED, Attempts::Total(3.0), Some(false));
        let c = compare_sites(None, &off);
        assert_eq!(kinds(&c), [Kind::RetryWithoutJitter]);
        assert_eq!(c[0].severity, Severity::Warning);
        let once = policy(aws::LIB, Attempts::Total(1.0), Some(false));
        assert!(compare_sites(None, &once).is_empty());
    }

    #[test]
    fn a_retry_replacing_removed_jittered_retries_lost_their_jitter() {
        let on = policy(backoff::LIB, Attempts::Total(4.0), Some(true));
        let off = policy(backon::LIB, Attempts::Total(4.0), Some(false));
        let unknown = policy(tower::LIB, Attempts::Unknown, None);
        assert_eq!(replaced(&[&unknown, &on, &on]), Some(&on), "unknown jitter is left out");
        assert_eq!(replaced(&[&on, &off]), None, "one removed retry did not jitter");
        assert_eq!(replaced(&[&unknown]), None);
        let c = replacing(&on, &off).unwrap();
        assert_eq!(c.kind, Kind::JitterRemoved);
        assert!(c.message.ends_with("(it replaces retries this change removed)"), "{}", c.message);
        assert!(replacing(&on, &on).is_none());
    }
}
