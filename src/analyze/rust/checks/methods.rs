//! `rust/<lib>-methods`: a retry now covers a non-idempotent request with no
//! Idempotency-Key, or a write it retried only after a refusal is now also
//! retried after failures that can follow an applied write.

use std::collections::BTreeSet;

use serde_json::json;

use super::{Applies, Change, RustCheck};
use crate::analyze::rust::policy::Policy;
use crate::analyze::rust::syntax::is_unknown_method;
use crate::finding::{Kind, KindDoc, Severity};

/// A retry now covers a write with no Idempotency-Key.
pub(crate) const CHECK: RustCheck = RustCheck {
    name: "methods",
    kinds: &[Kind::RetryNonIdempotent],
    applies: Applies::Policies,
    doc: KindDoc {
        what: "A retry now covers a POST/PATCH request, or an SDK or RPC call whose verb writes (`client.submit_order(req)`, `producer.send_messages(batch)`, AWS's `put_item()`; the verbs are the operation catalogue's), with no Idempotency-Key (an error), a request whose method cannot be told (a warning), or a write it retried only after a refusal (429/401) and now also after 5xx or timeouts. A POST whose endpoint or body shows a read (`/_search`, a JSON-RPC `eth_call`, a GraphQL `query`) is a note that says why.",
        why: "A timeout or 5xx does not say whether the server applied the write; repeating it can charge twice.",
        example: "RetryTransientMiddleware::new_with_policy(p) on a client that sends POST /orders",
        use_instead: "Retry only idempotent methods, or send the same Idempotency-Key on every attempt.",
    },
};

/// The unsafe methods the head retries that the base did not (or, widened,
/// that the base retried only after a refusal).
pub(crate) fn decide(base: Option<&Policy>, head: &Policy) -> Option<Change> {
    let before: Vec<&str> = base.map(|b| b.unsafe_methods()).unwrap_or_default();
    let retried: Vec<&str> = head.unsafe_methods();
    let new: Vec<&str> = retried.iter().copied().filter(|m| !before.contains(m)).collect();
    let scope = if head.client_wide { "the client's retry policy covers" } else { "the retry wraps" };
    // The base retried these methods only after a refusal (429, 401); the
    // head also retries after failures that can follow an applied write:
    // the base's retry was not counted as one of a write (`refusal_only`),
    // or the operation's own transient returns say it (the same writes,
    // retried on more).
    let all_in_base = |b: &Policy, ms: &[&str]| {
        let known: Vec<&str> = ms.iter().copied().filter(|m| !is_unknown_method(m)).collect();
        !known.is_empty() && known.iter().all(|m| b.methods.contains(*m))
    };
    let widened = base.is_some_and(|b| {
        (b.refusal_only && all_in_base(b, &new))
            || (b.transient_refusal_only == Some(true)
                && head.transient_refusal_only == Some(false)
                && all_in_base(b, &retried))
    });
    let new = if widened && new.is_empty() { retried } else { new };
    if new.is_empty() {
        return judged_reads(base, head, scope);
    }
    let known: Vec<&str> = new.iter().copied().filter(|m| !is_unknown_method(m)).collect();
    if widened {
        let mut c = Change::new(
            Kind::RetryNonIdempotent,
            &CHECK,
            format!(
                "{scope} a {} request that the base retried only after a refusal (429/401); the head also retries after 5xx, timeouts or connection errors, which can come after the write was applied",
                known.join("/")
            ),
        );
        c.base = base.map(|b| json!({"methods": b.methods, "refusal_only": true}));
        c.head = Some(json!({"methods": head.methods, "refusal_only": false}));
        return Some(c);
    }
    let mut c = if known.is_empty() {
        let mut c = Change::new(
            Kind::RetryNonIdempotent,
            &CHECK,
            format!(
                "{scope} a request whose method cannot be told, with no Idempotency-Key; check that it is GET/PUT/DELETE or send a key"
            ),
        );
        c.severity = Severity::Warning;
        c
    } else {
        let at = match &head.write_example {
            Some(site) if head.client_wide => format!(" (sent at {site})"),
            _ => String::new(),
        };
        // SDK and RPC writes are named as calls (`submit_order()`), HTTP
        // writes by their method.
        let (calls, http): (Vec<&str>, Vec<&str>) = known.iter().partition(|m| m.ends_with("()"));
        let what = match (http.is_empty(), calls.is_empty()) {
            (false, true) => format!("a {} request", http.join("/")),
            (true, false) => format!(
                "a write call ({})",
                calls.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
            ),
            _ => format!(
                "a {} request and a write call ({})",
                http.join("/"),
                calls.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
            ),
        };
        Change::new(
            Kind::RetryNonIdempotent,
            &CHECK,
            format!(
                "{scope} {what}{at} with no Idempotency-Key: a retry after a 5xx or timeout can repeat the write; limit the policy to idempotent methods or send a key"
            ),
        )
    };
    c.base = base.map(|b| json!({"methods": b.methods, "idempotency_key": b.idempotency_key}));
    let mut evidence = json!({"methods": head.methods, "idempotency_key": head.idempotency_key});
    // POSTs judged reads are not among the methods: say which and why, so
    // a maintainer who disagrees can see them.
    if !head.reads.is_empty() {
        evidence["judged_reads"] = json!(head.reads);
    }
    c.head = Some(evidence);
    Some(c)
}

/// A note for POSTs the head retries that their endpoint says are reads
/// ([`crate::analyze::reads`]) and the base did not retry: not a write
/// repeated, but the judgment is written down so a maintainer can disagree.
fn judged_reads(base: Option<&Policy>, head: &Policy, scope: &str) -> Option<Change> {
    let new: Vec<&str> = head
        .reads
        .iter()
        .filter(|r| base.is_none_or(|b| !b.reads.contains(*r)))
        .map(String::as_str)
        .collect();
    if new.is_empty() || head.idempotency_key || head.method_gated {
        return None;
    }
    let mut c = Change::new(
        Kind::RetryNonIdempotent,
        &CHECK,
        format!(
            "{scope} {} judged a read: {}; if the endpoint changes state after all, send an Idempotency-Key",
            if new.len() == 1 { "a POST" } else { "POSTs" },
            new.join("; ")
        ),
    );
    c.severity = Severity::Note;
    c.head = Some(json!({"methods": head.methods, "judged_reads": new}));
    Some(c)
}

/// Whether a new retry only takes over writes that retries the change
/// removed already re-sent (`lost_writes`: the known unsafe methods of the
/// removed retries that cover the same operation as this one,
/// [`crate::analyze::rust::ops`]), as a client-wide layer that replaces
/// per-call retries does: not a widening, so its `retry-non-idempotent` is
/// dropped. A removed retry of another operation does not count: its POST
/// is not this one.
pub(crate) fn taken_over(lost_writes: &BTreeSet<&str>, head: &Policy) -> bool {
    let known: Vec<&str> = head.unsafe_methods().into_iter().filter(|m| !is_unknown_method(m)).collect();
    !known.is_empty() && known.iter().all(|m| lost_writes.contains(m))
}

#[cfg(test)]
mod tests {
    use super::super::compare_sites;
    use super::super::testing::{kinds, policy};
    use super::*;
    use crate::analyze::rust::libs::{backoff, backon};
    use crate::analyze::rust::policy::{Attempts, Lib};

    #[test]
    fn a_write_retried_only_after_refusals_widened_to_5xx() {
        let mut b = policy(backon::LIB, Attempts::Total(3.0), Some(true));
        b.methods.insert("POST".into());
        b.refusal_only = true;
        assert!(compare_sites(None, &b).is_empty(), "a POST retried only on 429 is safe");
        let mut h = b.clone();
        h.refusal_only = false;
        let c = compare_sites(Some(&b), &h);
        assert_eq!(kinds(&c), [Kind::RetryNonIdempotent]);
        assert!(c[0].message.contains("only after a refusal"), "{}", c[0].message);
        assert!(compare_sites(Some(&b), &b).is_empty());
    }

    #[test]
    fn an_operation_whose_transient_errors_widen_to_5xx_is_a_widening() {
        let mut b = policy(backoff::LIB, Attempts::Unknown, None);
        b.methods.insert("POST".into());
        b.transient_refusal_only = Some(true);
        let mut h = b.clone();
        h.transient_refusal_only = Some(false);
        let c = compare_sites(Some(&b), &h);
        assert!(c
            .iter()
            .any(|c| c.kind == Kind::RetryNonIdempotent && c.message.contains("only after a refusal")));
        assert!(!compare_sites(Some(&b), &b).iter().any(|c| c.kind == Kind::RetryNonIdempotent));
        assert!(!compare_sites(Some(&h), &b).iter().any(|c| c.kind == Kind::RetryNonIdempotent), "narrowed");
        let c = compare_sites(None, &b);
        assert!(
            c.iter().any(|c| c.kind == Kind::RetryNonIdempotent),
            "a new retry of a POST on 429 is still one"
        );
    }

    #[test]
    fn post_without_key_blocks_unknown_method_warns() {
        let mut h = policy(Lib::HAND_ROLLED, Attempts::Total(3.0), Some(true));
        h.methods.insert("POST".into());
        let c = compare_sites(None, &h);
        assert_eq!(kinds(&c), [Kind::RetryNonIdempotent]);
        assert_eq!(c[0].severity, Severity::Error);
        h.idempotency_key = true;
        assert!(compare_sites(None, &h).is_empty(), "a key makes the POST safe to repeat");
        let mut u = policy(backon::LIB, Attempts::Total(3.0), Some(true));
        u.methods.insert(crate::analyze::rust::syntax::UNKNOWN_METHOD.into());
        let c = compare_sites(None, &u);
        assert_eq!(c[0].severity, Severity::Warning);
        let mut g = policy(backon::LIB, Attempts::Total(3.0), Some(true));
        g.methods.insert("GET".into());
        assert!(compare_sites(None, &g).is_empty());
    }

    #[test]
    fn a_new_retry_taking_over_removed_retries_of_the_same_writes_is_not_a_widening() {
        let mut h = policy(backon::LIB, Attempts::Total(3.0), Some(true));
        h.methods.insert("POST".into());
        assert!(taken_over(&BTreeSet::from(["POST", "PATCH"]), &h));
        assert!(!taken_over(&BTreeSet::from(["PATCH"]), &h), "a POST the base never retried");
        let mut u = policy(backon::LIB, Attempts::Total(3.0), Some(true));
        u.methods.insert(crate::analyze::rust::syntax::UNKNOWN_METHOD.into());
        assert!(!taken_over(&BTreeSet::from(["POST"]), &u), "an unknown method is not a known write");
    }
}
