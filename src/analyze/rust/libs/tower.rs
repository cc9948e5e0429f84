//! tower 0.5 retry: `ExponentialBackoffMaker::new(min, max, jitter, rng)`
//! (jitter 0..=100; tower's default 0.99) and `TpsBudget::new(ttl,
//! min_per_sec, retry_percent)` (default 10 s, 10/s, 20%). The attempt count
//! lives in the user's `impl Policy`, which the site finder reads separately.

use super::{CallShape, EntryPoint, Imports, RetryLibrary, Root};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};
use crate::analyze::rust::syntax::BodyFacts;

/// The id of this crate's policies in check ids (`rust/<id>-<check>`).
pub(crate) const LIB: Lib = Lib::new("tower-retry");
/// The id of a `TpsBudget` policy.
pub(crate) const BUDGET: Lib = Lib::new("tower-budget");

/// The `tower` crate.
pub(crate) struct Tower;

impl RetryLibrary for Tower {
    fn name(&self) -> &'static str {
        "tower"
    }

    fn libs(&self) -> &'static [Lib] {
        &[LIB, BUDGET]
    }

    fn constructors(&self) -> &'static [&'static str] {
        &["new", "default"]
    }

    fn construct(&self, root: &Root, env: &Env, _imports: &Imports) -> Option<Policy> {
        construct(root, env)
    }

    fn call_shape(&self, lib: Lib) -> CallShape {
        // `ServiceBuilder::retry(policy)` installs the backoff on a service.
        if lib == LIB {
            CallShape::OnClient
        } else {
            CallShape::OperationFirst
        }
    }

    fn retry_methods(&self) -> &'static [&'static str] {
        &["retry"]
    }

    fn entry_points(&self) -> &'static [EntryPoint] {
        // `RetryLayer::new(policy)`: the layer wraps a service, not one call.
        &[EntryPoint {
            types: &["RetryLayer"],
            funcs: &["new"],
            min_args: 0,
            operation: None,
            condition: None,
            client_wide: false,
        }]
    }
}

fn construct(root: &Root, env: &Env) -> Option<Policy> {
    let Root::Call { ty, func, args } = root else { return None };
    match (ty.as_str(), func.as_str()) {
        ("ExponentialBackoffMaker", "new") => {
            let jitter = args.get(2).and_then(|a| env.number(a));
            let mut p = Policy::new(
                LIB,
                Fact::new(Attempts::Unknown, "tower's attempt count is decided by the Policy impl"),
                Fact::new(jitter.map(|j| j > 0.0), "ExponentialBackoffMaker's jitter argument"),
            );
            p.min_delay_ms = args.first().and_then(|a| env.millis(a));
            p.max_delay_ms = args.get(1).and_then(|a| env.millis(a));
            Some(p)
        }
        ("TpsBudget", "new" | "default") => {
            let pct = if func == "default" {
                Some(20.0)
            } else {
                args.get(2).and_then(|a| env.number(a)).map(|v| v * 100.0)
            };
            let mut p = Policy::new(
                BUDGET,
                Fact::new(Attempts::Unknown, "a retry budget bounds the share of retries, not attempts"),
                Fact::new(None, "a retry budget has no delays"),
            );
            p.budget_percent = pct;
            p.retry_after = Fact::new(None, "not applicable to a budget");
            Some(p)
        }
        _ => None,
    }
}

/// A user's `impl tower::retry::Policy`: its `retry` method decides the
/// count and the jitter; `facts` is what the impl's methods do.
pub(crate) fn policy_impl(facts: &BodyFacts) -> Policy {
    let mut p = Policy::new(
        LIB,
        Fact::new(Attempts::Unknown, "decided by the Policy impl"),
        Fact::new(None, "decided by the Policy impl"),
    );
    p.method_gated = facts.method_gated;
    p.client_wide = !facts.method_gated;
    p.idempotency_key = facts.idempotency_key;
    p.retry_after = Fact::new(Some(facts.reads_retry_after), "the Policy impl");
    p
}
