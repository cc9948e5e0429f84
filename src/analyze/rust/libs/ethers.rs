//! ethers-rs's retrying JSON-RPC transport (ethers-providers 1.x/2.x):
//! `RetryClient::new(inner, policy, max_retry, initial_backoff)` and
//! `RetryClientBuilder::default()` with `.rate_limit_retries(n)`,
//! `.timeout_retries(n)` and `.initial_backoff(d)`, then `.build(inner,
//! policy)`.
//!
//! Facts, from ethers-providers' `rpc/transports/retry.rs` (2.0):
//! - `max_retry` (the builder's `rate_limit_retries`) is how many times a
//!   request is re-sent after the policy says it may retry (a rate limit);
//!   timeouts are re-sent `timeout_retries` times apart from it;
//! - `initial_backoff` is in **milliseconds** in `new`; the builder takes a
//!   `Duration`;
//! - `RetryClientBuilder::default()` has **10** rate-limit retries, 3
//!   timeout retries and a 1 s initial backoff;
//! - the wait is the error's own backoff hint when it gives one, else
//!   grows from `initial_backoff`; whether it jitters is not stated, so
//!   jitter is left unknown here.
//!
//! A JSON-RPC request sent through it is re-sent whatever its method.

use super::{Imports, RetryLibrary, Root, Setter};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};

/// The id of this crate's policies in check ids (`rust/<id>-<check>`).
pub(crate) const LIB: Lib = Lib::new("ethers");

/// The crate names a file imports the transport through.
const CRATES: &[&str] = &["ethers", "ethers_providers"];

/// `RetryClientBuilder::default()`'s rate-limit retries.
const DEFAULT_RETRIES: f64 = 10.0;

/// ethers-providers' `RetryClient`.
pub(crate) struct Ethers;

impl RetryLibrary for Ethers {
    fn name(&self) -> &'static str {
        "ethers"
    }

    fn libs(&self) -> &'static [Lib] {
        &[LIB]
    }

    fn crate_names(&self) -> &'static [&'static str] {
        CRATES
    }

    fn constructors(&self) -> &'static [&'static str] {
        &["new", "default"]
    }

    fn construct(&self, root: &Root, env: &Env, imports: &Imports) -> Option<Policy> {
        construct(root, env, imports)
    }

    fn apply(&self, p: &mut Policy, s: &Setter, env: &Env) -> bool {
        apply(p, s, env)
    }

    fn by_value_setters(&self) -> &'static [&'static str] {
        BY_VALUE_SETTERS
    }
}

/// The builder's setters, which take `self` and return it.
pub(crate) const BY_VALUE_SETTERS: &[&str] =
    &["rate_limit_retries", "timeout_retries", "initial_backoff", "compute_units_per_second"];

fn construct(root: &Root, env: &Env, imports: &Imports) -> Option<Policy> {
    let Root::Call { ty, func, args } = root else { return None };
    // `RetryClient` is a common name: only a file that names an ethers
    // crate has this one.
    if !CRATES.iter().any(|c| imports.has(c)) {
        return None;
    }
    let (attempts, backoff_ms) = match (ty.as_str(), func.as_str()) {
        ("RetryClient", "new") => (
            Fact::count(
                Attempts::from_retries(args.get(2).and_then(|a| env.number(a))),
                "RetryClient::new(.., max_retry, ..)",
            ),
            args.get(3).and_then(|a| env.number(a)),
        ),
        ("RetryClientBuilder", "default") => (
            Fact::new(
                Attempts::from_retries(Some(DEFAULT_RETRIES)),
                "RetryClientBuilder::default() retries a rate-limited request 10 times",
            ),
            Some(1000.0),
        ),
        _ => return None,
    };
    let mut p = Policy::new(LIB, attempts, Fact::new(None, "ethers' RetryClient: jitter not stated"));
    p.min_delay_ms = backoff_ms;
    Some(p)
}

fn apply(p: &mut Policy, s: &Setter, env: &Env) -> bool {
    match s.name.as_str() {
        "rate_limit_retries" => {
            let n = s.arg(0).and_then(|a| env.number(a));
            p.attempts = Fact::count(Attempts::from_retries(n), ".rate_limit_retries(..)");
        }
        "initial_backoff" => p.min_delay_ms = s.arg(0).and_then(|a| env.millis(a)),
        "timeout_retries" | "compute_units_per_second" | "build" => {}
        _ => return false,
    }
    true
}
