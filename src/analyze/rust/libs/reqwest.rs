//! reqwest's built-in `retry` (0.12.23+): `retry::for_host(h)`. Default 2
//! retries per request within a 20% extra-load budget, **no backoff and no
//! jitter**, and only protocol NACKs (method-safe) unless `.classify_fn(..)`
//! widens it.

use super::{CallShape, Imports, RetryLibrary, Root, Setter};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};
use crate::analyze::rust::syntax::body_facts;

/// The id of this crate's policies in check ids (`rust/<id>-<check>`).
pub(crate) const LIB: Lib = Lib::new("reqwest");

/// The `reqwest` crate.
pub(crate) struct Reqwest;

impl RetryLibrary for Reqwest {
    fn name(&self) -> &'static str {
        "reqwest"
    }

    fn libs(&self) -> &'static [Lib] {
        &[LIB]
    }

    fn constructors(&self) -> &'static [&'static str] {
        &["for_host", "scoped", "never"]
    }

    fn construct(&self, root: &Root, env: &Env, _imports: &Imports) -> Option<Policy> {
        construct(root, env)
    }

    fn apply(&self, p: &mut Policy, s: &Setter, env: &Env) -> bool {
        apply(p, s, env)
    }

    fn by_value_setters(&self) -> &'static [&'static str] {
        BY_VALUE_SETTERS
    }

    fn call_shape(&self, _lib: Lib) -> CallShape {
        CallShape::OnClient
    }

    fn retry_methods(&self) -> &'static [&'static str] {
        &["retry"]
    }
}

pub(crate) const BY_VALUE_SETTERS: &[&str] =
    &["max_retries_per_request", "max_extra_load", "no_budget", "classify_fn"];

fn construct(root: &Root, _env: &Env) -> Option<Policy> {
    let Root::Call { ty, func, .. } = root else { return None };
    let attempts = match (ty.as_str(), func.as_str()) {
        ("retry", "for_host") | ("retry", "scoped") => {
            Fact::new(Attempts::Total(3.0), "reqwest's default of 2 retries per request")
        }
        ("retry", "never") => Fact::new(Attempts::Total(1.0), "retry::never()"),
        _ => return None,
    };
    let mut p = Policy::new(
        LIB,
        attempts,
        Fact::new(Some(false), "reqwest's built-in retry has no backoff and no jitter"),
    );
    p.budget_percent = Some(20.0);
    p.retry_after = Fact::new(None, "reqwest's retry classifier cannot see headers");
    Some(p)
}

fn apply(p: &mut Policy, s: &Setter, env: &Env) -> bool {
    match s.name.as_str() {
        "max_retries_per_request" => {
            p.attempts = Fact::count(
                Attempts::from_retries(s.arg(0).and_then(|a| env.number(a))),
                ".max_retries_per_request(..)",
            )
        }
        "max_extra_load" => p.budget_percent = s.arg(0).and_then(|a| env.number(a)).map(|v| v * 100.0),
        "no_budget" => p.budget_percent = Some(f64::INFINITY),
        "classify_fn" => {
            // A custom classifier can retry anything; unless it checks the
            // method, it covers every request the client sends.
            let gated = s.arg(0).is_some_and(|a| body_facts(a).method_gated);
            p.method_gated = gated;
            p.client_wide = !gated;
        }
        _ => return false,
    }
    true
}
