//! The normalised retry policy every retry site is reduced to, whatever the
//! library: total attempts, jitter, delays, timeouts, methods, Retry-After.
//!
//! Counts are always total attempts (first call included), so `backon`'s
//! `with_max_times(2)` (retries) and aws' `with_max_attempts(3)` (attempts)
//! compare as like with like.

use std::collections::BTreeSet;

use serde_json::json;

use super::eval::{fmt_ms, trim_float};

/// Which library (or hand-written code) a policy comes from, by the id used
/// in check ids (`rust/<id>-<check>`, see [`super::checks`]). Each library
/// module declares its own (`libs::backon::LIB`); the registry in
/// [`super::libs::LIBRARIES`] lists them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Lib(&'static str);

impl Lib {
    /// A hand-written retry loop.
    pub(crate) const HAND_ROLLED: Lib = Lib::new("loop");

    pub(crate) const fn new(id: &'static str) -> Lib {
        Lib(id)
    }

    /// The id used in check ids: `rust/<id>-<check>`.
    pub(crate) fn id(self) -> &'static str {
        self.0
    }
}

/// How many times a policy may call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Attempts {
    /// Total attempts, first call included.
    Total(f64),
    /// Bounded by elapsed time only (milliseconds), as `backoff` is.
    TimeBounded(f64),
    /// No bound at all.
    Unbounded,
    /// The analyzer cannot tell (a computed count).
    Unknown,
}

impl Attempts {
    /// From a retry count (extra calls after the first).
    pub(crate) fn from_retries(n: Option<f64>) -> Attempts {
        match n {
            Some(v) if v.is_infinite() => Attempts::Unbounded,
            Some(v) => Attempts::Total(v.max(0.0) + 1.0),
            None => Attempts::Unknown,
        }
    }

    /// From a total attempt count.
    pub(crate) fn from_total(n: Option<f64>) -> Attempts {
        match n {
            Some(v) if v.is_infinite() => Attempts::Unbounded,
            Some(v) => Attempts::Total(v.max(1.0)),
            None => Attempts::Unknown,
        }
    }

    pub(crate) fn to_json(self) -> serde_json::Value {
        match self {
            Attempts::Total(n) => json!(n as u64),
            Attempts::TimeBounded(ms) => json!(format!("until {} elapsed", fmt_ms(ms))),
            Attempts::Unbounded => json!("unbounded"),
            Attempts::Unknown => json!("unknown"),
        }
    }

    pub(crate) fn describe(self) -> String {
        match self {
            Attempts::Total(n) => format!("{} attempts", trim_float(n)),
            Attempts::TimeBounded(ms) => format!("attempts until {} elapsed", fmt_ms(ms)),
            Attempts::Unbounded => "unbounded attempts".into(),
            Attempts::Unknown => "an unknown number of attempts".into(),
        }
    }
}

/// A fact about a policy together with where it came from, for messages:
/// `true` because "backoff's default randomization_factor is 0.5".
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fact<T> {
    pub(crate) value: T,
    /// Where the value came from, for messages only: no decision reads it.
    pub(crate) why: String,
    /// The value is written at the site (a count given to a setter or a
    /// constructor) but computed in a way retrygate cannot evaluate, so a
    /// person must read it ([`Fact::count`]).
    pub(crate) uncomputed: bool,
}

impl<T> Fact<T> {
    pub(crate) fn new(value: T, why: impl Into<String>) -> Self {
        Fact { value, why: why.into(), uncomputed: false }
    }
}

impl Fact<Attempts> {
    /// A count written at the site (`.with_max_times(n)`,
    /// `RetryConfig::Simple(n)`): when `n` cannot be computed the value is
    /// [`Attempts::Unknown`] and the fact is marked [`Fact::uncomputed`].
    pub(crate) fn count(value: Attempts, why: impl Into<String>) -> Self {
        Fact { uncomputed: value == Attempts::Unknown, ..Fact::new(value, why) }
    }
}

/// One retry site's behaviour, normalised.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Policy {
    pub(crate) lib: Lib,
    pub(crate) attempts: Fact<Attempts>,
    /// `None`: the analyzer cannot tell.
    pub(crate) jitter: Fact<Option<bool>>,
    pub(crate) min_delay_ms: Option<f64>,
    pub(crate) max_delay_ms: Option<f64>,
    pub(crate) attempt_timeout_ms: Option<f64>,
    pub(crate) total_timeout_ms: Option<f64>,
    /// Whether Retry-After is honoured; `None` where it does not apply.
    pub(crate) retry_after: Fact<Option<bool>>,
    /// A retry budget as a share of requests (tower's TpsBudget, reqwest's
    /// max_extra_load), in percent.
    pub(crate) budget_percent: Option<f64>,
    /// HTTP methods the retried operation sends (`UNKNOWN` when a request is
    /// sent but its method cannot be told).
    pub(crate) methods: BTreeSet<String>,
    /// POSTs of the retried operation judged reads, each with why
    /// ([`super::syntax::BodyFacts::reads`]).
    pub(crate) reads: BTreeSet<String>,
    pub(crate) idempotency_key: bool,
    /// The retry predicate checks `is_idempotent()`/`is_safe()`.
    pub(crate) method_gated: bool,
    /// The policy is installed on a client and covers every request it sends.
    pub(crate) client_wide: bool,
    /// It retries only after a refusal (429, 401): the server did not act on
    /// the request, so repeating a write is safe.
    pub(crate) refusal_only: bool,
    /// For an operation that returns its retryable errors as transient
    /// (backoff's `Error::Transient`): `Some(true)` when every transient
    /// return follows a refusal (429, 401), `Some(false)` when one follows a
    /// 5xx, a timeout or any error. It decides when what a write is retried
    /// on widened; a new retry of a write on 429 is still reported.
    pub(crate) transient_refusal_only: Option<bool>,
    /// For a client-wide policy: one write request it covers (`path:line`),
    /// found by the crate-wide index.
    pub(crate) write_example: Option<String>,
}

impl Policy {
    /// A policy with a library's defaults to be filled in by the library module.
    pub(crate) fn new(lib: Lib, attempts: Fact<Attempts>, jitter: Fact<Option<bool>>) -> Policy {
        Policy {
            lib,
            attempts,
            jitter,
            min_delay_ms: None,
            max_delay_ms: None,
            attempt_timeout_ms: None,
            total_timeout_ms: None,
            retry_after: Fact::new(Some(false), format!("{} does not read Retry-After", lib.id())),
            budget_percent: None,
            methods: BTreeSet::new(),
            reads: BTreeSet::new(),
            idempotency_key: false,
            method_gated: false,
            client_wide: false,
            refusal_only: false,
            transient_refusal_only: None,
            write_example: None,
        }
    }

    /// Adds what the requests in `facts` send: their methods, the POSTs
    /// judged reads, and whether a key goes with them.
    pub(crate) fn add_requests(&mut self, facts: &super::syntax::BodyFacts) {
        self.methods.extend(facts.methods.iter().cloned());
        self.reads.extend(facts.reads.iter().cloned());
        self.idempotency_key |= facts.idempotency_key;
    }

    /// Non-idempotent methods this site retries without a key.
    pub(crate) fn unsafe_methods(&self) -> Vec<&str> {
        if self.idempotency_key || self.method_gated || self.refusal_only {
            return Vec::new();
        }
        self.methods
            .iter()
            .map(String::as_str)
            .filter(|m| {
                matches!(*m, "POST" | "PATCH") || super::syntax::is_unknown_method(m) || m.ends_with("()")
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_written_count_that_cannot_be_computed_is_flagged() {
        assert!(Fact::count(Attempts::from_retries(None), ".with_max_times(..)").uncomputed);
        assert!(!Fact::count(Attempts::from_retries(Some(2.0)), ".with_max_times(..)").uncomputed);
        // A count that lives elsewhere (tower's Policy impl) is unknown, not uncomputed,
        // whatever its explanation says.
        assert!(!Fact::new(Attempts::Unknown, "decided by the Policy impl (n)").uncomputed);
    }
}
