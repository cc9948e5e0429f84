//! tokio-retry 0.3 / tokio-retry2: strategies are iterators of delays.
//! `ExponentialBackoff::from_millis(b)`, `FixedInterval`, `FibonacciBackoff`;
//! **unbounded unless `.take(n)`** (n retries), **no jitter unless
//! `.map(jitter)`**. The sync `retry` crate has the same iterator shape, so its
//! setters are read here too.

use super::{EntryPoint, Imports, RetryLibrary, Root, Setter};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};
use crate::analyze::rust::syntax::body_facts;

/// The id of this crate's policies in check ids (`rust/<id>-<check>`).
pub(crate) const LIB: Lib = Lib::new("tokio-retry");

/// The `tokio-retry` crate.
pub(crate) struct TokioRetry;

impl RetryLibrary for TokioRetry {
    fn name(&self) -> &'static str {
        "tokio-retry"
    }

    fn libs(&self) -> &'static [Lib] {
        &[LIB]
    }

    fn crate_names(&self) -> &'static [&'static str] {
        &["tokio_retry2", "tokio_retry"]
    }

    fn constructors(&self) -> &'static [&'static str] {
        &["from_millis", "new"]
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

    fn entry_points(&self) -> &'static [EntryPoint] {
        &[EntryPoint {
            types: &["Retry", "RetryIf"],
            funcs: &["spawn", "spawn_notify"],
            min_args: 2,
            operation: Some(1),
            condition: Some(2),
            client_wide: false,
        }]
    }
}

pub(crate) const BY_VALUE_SETTERS: &[&str] = &["take", "map", "factor", "max_delay"];

/// The strategy types: iterators of delays that never jitter by themselves
/// (`.map(jitter)` returns another type).
const STRATEGY_TYPES: &[&str] = &["ExponentialBackoff", "FixedInterval", "FibonacciBackoff"];

fn construct(root: &Root, env: &Env, imports: &Imports) -> Option<Policy> {
    if let Root::Typed { ty } = root {
        // `backoff::ExponentialBackoff` shares the name and does jitter.
        let ours = imports.has("tokio_retry") || imports.has("tokio_retry2");
        if !ours || imports.has("backoff") || !STRATEGY_TYPES.contains(&ty.as_str()) {
            return None;
        }
        return Some(Policy::new(
            LIB,
            Fact::new(Attempts::Unbounded, "tokio-retry strategies are unbounded unless .take(n)"),
            Fact::new(
                Some(false),
                format!("a `{ty}` parameter: tokio-retry strategies do not jitter unless .map(jitter)"),
            ),
        ));
    }
    let Root::Call { ty, func, args } = root else { return None };
    let first_ms = || args.first().and_then(|a| env.number(a));
    let (min, max) = match (ty.as_str(), func.as_str()) {
        ("ExponentialBackoff", "from_millis") => {
            if imports.has("retry") && !imports.has("tokio_retry") && !imports.has("tokio_retry2") {
                return None;
            }
            (first_ms(), None)
        }
        ("FixedInterval", "from_millis") => (first_ms(), first_ms()),
        ("FixedInterval", "new") => {
            let d = args.first().and_then(|a| env.millis(a));
            (d, d)
        }
        ("FibonacciBackoff", "from_millis") => (first_ms(), None),
        _ => return None,
    };
    let mut p = Policy::new(
        LIB,
        Fact::new(Attempts::Unbounded, "tokio-retry strategies are unbounded unless .take(n)"),
        Fact::new(Some(false), "tokio-retry strategies do not jitter unless .map(jitter)"),
    );
    p.min_delay_ms = min;
    p.max_delay_ms = max;
    Some(p)
}

pub(crate) fn apply(p: &mut Policy, s: &Setter, env: &Env) -> bool {
    match s.name.as_str() {
        "take" => {
            p.attempts =
                Fact::count(Attempts::from_retries(s.arg(0).and_then(|a| env.number(a))), ".take(..)")
        }
        "map" => {
            let jitters = s.arg(0).is_some_and(|a| {
                let f = body_facts(a);
                // A jitter function called by name in the closure is trusted here.
                f.uses_randomness || !f.jitter_calls.is_empty()
            });
            if jitters {
                p.jitter = Fact::new(Some(true), ".map(jitter)");
            }
        }
        "max_delay" => p.max_delay_ms = s.arg(0).and_then(|a| env.millis(a)),
        "max_delay_millis" => p.max_delay_ms = s.arg(0).and_then(|a| env.number(a)),
        "factor" => {}
        _ => return false,
    }
    true
}
