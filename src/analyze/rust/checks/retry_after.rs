//! `rust/<lib>-retry-after`: the base read the server's Retry-After and the
//! head does not.

use serde_json::json;

use super::{Applies, Change, RustCheck};
use crate::analyze::rust::policy::Policy;
use crate::finding::{Kind, KindDoc};

/// Retry-After was honoured and no longer is.
pub(crate) const CHECK: RustCheck = RustCheck {
    name: "retry-after",
    kinds: &[Kind::RetryAfterIgnored],
    applies: Applies::Policies,
    doc: KindDoc {
        what: "The base read the server's Retry-After (`.adjust(..)`, `Error::retry_after`, a loop reading the header) and the head does not.",
        why: "Retry-After is the server saying when it can take traffic again; ignoring it retries into the rate limit.",
        example: "(|| fetch()).retry(b).adjust(|e, d| e.retry_after().or(d))  ->  (|| fetch()).retry(b)",
        use_instead: "Keep reading Retry-After and wait at least that long.",
    },
};

/// Retry-After honoured at the base and not (or not known to be) at the head.
pub(crate) fn decide(base: Option<&Policy>, head: &Policy) -> Option<Change> {
    let b = base?;
    if b.retry_after.value != Some(true) || head.retry_after.value == Some(true) {
        return None;
    }
    let mut c = Change::new(
        Kind::RetryAfterIgnored,
        &CHECK,
        format!(
            "Retry-After no longer honoured: the base did ({}), the head does not ({})",
            b.retry_after.why, head.retry_after.why
        ),
    );
    c.base = Some(json!({"retry_after": true}));
    c.head = Some(json!({"retry_after": false}));
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::super::compare_sites;
    use super::super::testing::{kinds, policy};
    use super::*;
    use crate::analyze::rust::libs::backon;
    use crate::analyze::rust::policy::{Attempts, Fact};

    #[test]
    fn retry_after_removed() {
        let mut b = policy(backon::LIB, Attempts::Total(4.0), Some(true));
        b.retry_after = Fact::new(Some(true), ".adjust reads it");
        let h = policy(backon::LIB, Attempts::Total(4.0), Some(true));
        assert_eq!(kinds(&compare_sites(Some(&b), &h)), [Kind::RetryAfterIgnored]);
        assert!(compare_sites(Some(&h), &b).is_empty());
        assert!(decide(None, &h).is_none(), "a new retry has nothing to stop honouring");
    }
}
