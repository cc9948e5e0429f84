//! The decisions: given a retry site's base and head policies, which finding
//! kinds apply. Pure functions of [`Policy`] values, tested here.
//!
//! This is where, for example, jitter removal is decided for every library:
//! the library modules ([`super::libs`]) only say what jitter a policy has
//! and why; [`compare_sites`] says whether losing it is a finding.

use serde_json::json;

use super::checks::Check;
use super::eval::fmt_ms;
use super::policy::{Attempts, Policy};
use super::sites::TimeoutSite;
use crate::finding::{Kind, Severity};

/// One decided change, before it is placed in a file as a finding.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Change {
    pub(crate) kind: Kind,
    pub(crate) severity: Severity,
    /// The declared check; the finding's rule is `check.rule(<lib>)`.
    pub(crate) check: Check,
    pub(crate) message: String,
    pub(crate) base: Option<serde_json::Value>,
    pub(crate) head: Option<serde_json::Value>,
}

impl Change {
    fn new(kind: Kind, check: Check, message: String) -> Change {
        Change { kind, severity: kind.default_severity(), check, message, base: None, head: None }
    }
}

/// Compares a head site with its base counterpart (`None`: the site is new).
pub(crate) fn compare_sites(base: Option<&Policy>, head: &Policy) -> Vec<Change> {
    let mut out = Vec::new();
    attempts(base, head, &mut out);
    jitter(base, head, &mut out);
    retry_after(base, head, &mut out);
    methods(base, head, &mut out);
    out
}

fn attempts(base: Option<&Policy>, head: &Policy, out: &mut Vec<Change>) {
    let h = head.attempts.value;
    let Some(base) = base else {
        if h == Attempts::Unbounded {
            // A new unbounded retry is a design choice (a reconnect loop, a
            // queue consumer) more often than a mistake: it warns. It blocks
            // when a bound is removed (below), or when the base config sets
            // `limits.max_attempts` (the gate checks that).
            let mut c = Change::new(
                Kind::RetryUnbounded,
                Check::Unbounded,
                format!(
                    "new retry has no limit on attempts or time ({}); set `limits.max_attempts` to make this blocking",
                    head.attempts.why
                ),
            );
            c.severity = Severity::Warning;
            c.head = Some(json!({"attempts": "unbounded"}));
            out.push(c);
        }
        return;
    };
    let b = base.attempts.value;
    let raised = match (b, h) {
        (Attempts::Total(x), Attempts::Total(y)) if y > x => Some(format!(
            "retries raised from {} to {} ({} -> {} attempts; {})",
            fmt_count(x - 1.0),
            fmt_count(y - 1.0),
            fmt_count(x),
            fmt_count(y),
            head.attempts.why
        )),
        (Attempts::TimeBounded(x), Attempts::TimeBounded(y)) if y > x => Some(format!(
            "retry time budget raised from {} to {} ({})",
            fmt_ms(x),
            fmt_ms(y),
            head.attempts.why
        )),
        _ => None,
    };
    if let Some(message) = raised {
        let mut c = Change::new(Kind::RetryCountRaised, Check::Attempts, message);
        c.base = Some(json!({"attempts": b.to_json()}));
        c.head = Some(json!({"attempts": h.to_json()}));
        out.push(c);
    }
    if h == Attempts::Unbounded && matches!(b, Attempts::Total(_) | Attempts::TimeBounded(_)) {
        let mut c = Change::new(
            Kind::RetryUnbounded,
            Check::Unbounded,
            format!(
                "retry became unbounded: the base allowed {}, the head has no limit ({})",
                b.describe(),
                head.attempts.why
            ),
        );
        c.base = Some(json!({"attempts": b.to_json()}));
        c.head = Some(json!({"attempts": "unbounded"}));
        out.push(c);
    }
    if let (Some(x), Some(y)) = (base.budget_percent, head.budget_percent) {
        if y > x {
            let mut c = Change::new(
                Kind::RetryCountRaised,
                Check::Budget,
                format!("retry budget raised from {} to {} of requests", pct(x), pct(y)),
            );
            c.base = Some(json!({"budget_percent": x}));
            c.head =
                Some(json!({"budget_percent": if y.is_finite() { json!(y) } else { json!("unlimited") }}));
            out.push(c);
        }
    }
}

fn jitter(base: Option<&Policy>, head: &Policy, out: &mut Vec<Change>) {
    if head.jitter.value != Some(false) {
        return;
    }
    match base {
        Some(b) if b.jitter.value == Some(true) => {
            let mut c = Change::new(
                Kind::JitterRemoved,
                Check::Jitter,
                format!(
                    "jitter removed: the base jittered ({}), the head does not ({})",
                    b.jitter.why, head.jitter.why
                ),
            );
            c.base = Some(json!({"jitter": true, "library": b.lib.id()}));
            c.head = Some(json!({"jitter": false, "library": head.lib.id()}));
            out.push(c);
        }
        Some(_) => {}
        None => {
            if head.attempts.value == Attempts::Total(1.0) {
                return;
            }
            let delay = match (head.min_delay_ms, head.max_delay_ms) {
                (Some(a), Some(b)) if a == b => format!(", fixed {} delay", fmt_ms(a)),
                _ => String::new(),
            };
            let mut c = Change::new(
                Kind::RetryWithoutJitter,
                Check::Jitter,
                format!("new retry without jitter ({}{delay})", head.jitter.why),
            );
            c.head = Some(json!({"jitter": false, "library": head.lib.id()}));
            out.push(c);
        }
    }
}

fn retry_after(base: Option<&Policy>, head: &Policy, out: &mut Vec<Change>) {
    let Some(b) = base else { return };
    if b.retry_after.value == Some(true) && head.retry_after.value != Some(true) {
        let mut c = Change::new(
            Kind::RetryAfterIgnored,
            Check::RetryAfter,
            format!(
                "Retry-After no longer honoured: the base did ({}), the head does not ({})",
                b.retry_after.why, head.retry_after.why
            ),
        );
        c.base = Some(json!({"retry_after": true}));
        c.head = Some(json!({"retry_after": false}));
        out.push(c);
    }
}

fn methods(base: Option<&Policy>, head: &Policy, out: &mut Vec<Change>) {
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
        let known: Vec<&str> = ms.iter().copied().filter(|m| !super::syntax::is_unknown_method(m)).collect();
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
        return;
    }
    let known: Vec<&str> = new.iter().copied().filter(|m| !super::syntax::is_unknown_method(m)).collect();
    if widened {
        let mut c = Change::new(
            Kind::RetryNonIdempotent,
            Check::Methods,
            format!(
                "{scope} a {} request that the base retried only after a refusal (429/401); the head also retries after 5xx, timeouts or connection errors, which can come after the write was applied",
                known.join("/")
            ),
        );
        c.base = base.map(|b| json!({"methods": b.methods, "refusal_only": true}));
        c.head = Some(json!({"methods": head.methods, "refusal_only": false}));
        out.push(c);
        return;
    }
    let mut c = if known.is_empty() {
        let mut c = Change::new(
            Kind::RetryNonIdempotent,
            Check::Methods,
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
        Change::new(
            Kind::RetryNonIdempotent,
            Check::Methods,
            format!(
                "{scope} a {} request{at} with no Idempotency-Key: a retry after a 5xx or timeout can repeat the write; limit the policy to idempotent methods or send a key",
                known.join("/")
            ),
        )
    };
    c.base = base.map(|b| json!({"methods": b.methods, "idempotency_key": b.idempotency_key}));
    c.head = Some(json!({"methods": head.methods, "idempotency_key": head.idempotency_key}));
    out.push(c);
}

/// A timeout that went down.
pub(crate) fn compare_timeouts(base: &TimeoutSite, head: &TimeoutSite) -> Option<Change> {
    if head.ms < base.ms {
        let mut c = Change::new(
            Kind::TimeoutLowered,
            Check::Timeout,
            format!(
                ".{}(..) lowered from {} to {} in code that retries",
                head.setter,
                fmt_ms(base.ms),
                fmt_ms(head.ms)
            ),
        );
        c.base = Some(json!({"timeout_ms": base.ms}));
        c.head = Some(json!({"timeout_ms": head.ms}));
        Some(c)
    } else {
        None
    }
}

fn fmt_count(v: f64) -> String {
    if v.is_infinite() {
        "unlimited".into()
    } else {
        format!("{}", v as i64)
    }
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
    use super::*;
    use crate::analyze::rust::libs::{aws, backoff, backon, tower};
    use crate::analyze::rust::policy::{Fact, Lib};

    fn policy(lib: Lib, attempts: Attempts, jitter: Option<bool>) -> Policy {
        Policy::new(lib, Fact::new(attempts, "test"), Fact::new(jitter, "test"))
    }

    fn kinds(c: &[Change]) -> Vec<Kind> {
        c.iter().map(|c| c.kind).collect()
    }

    #[test]
    fn raised_count_is_a_finding_and_lowered_is_not() {
        let b = policy(backon::LIB, Attempts::Total(3.0), Some(true));
        let h = policy(backon::LIB, Attempts::Total(7.0), Some(true));
        let c = compare_sites(Some(&b), &h);
        assert_eq!(kinds(&c), [Kind::RetryCountRaised]);
        assert!(c[0].message.contains("2 to 6") && c[0].message.contains("3 -> 7"), "{}", c[0].message);
        assert!(compare_sites(Some(&h), &b).is_empty());
    }

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
    fn retry_after_removed() {
        let mut b = policy(backon::LIB, Attempts::Total(4.0), Some(true));
        b.retry_after = Fact::new(Some(true), ".adjust reads it");
        let h = policy(backon::LIB, Attempts::Total(4.0), Some(true));
        assert_eq!(kinds(&compare_sites(Some(&b), &h)), [Kind::RetryAfterIgnored]);
        assert!(compare_sites(Some(&h), &b).is_empty());
    }

    #[test]
    fn timeouts_lowered_not_raised() {
        let t = |ms| TimeoutSite { item: "f".into(), setter: "timeout".into(), ms, line: 1 };
        let c = compare_timeouts(&t(2500.0), &t(800.0)).unwrap();
        assert_eq!(c.kind, Kind::TimeoutLowered);
        assert!(c.message.contains("2.5 s") && c.message.contains("800 ms"), "{}", c.message);
        assert!(compare_timeouts(&t(800.0), &t(2500.0)).is_none());
    }
}
