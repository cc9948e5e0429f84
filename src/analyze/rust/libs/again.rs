//! again 0.1: `RetryPolicy::exponential(d)` / `RetryPolicy::fixed(d)`.
//! Default 5 retries, **no jitter unless `.with_jitter(true)`**, no
//! Retry-After. Its call shape is reversed: `policy.retry(|| op())`.

use super::{CallShape, Imports, RetryLibrary, Root, Setter};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};

/// The id of this crate's policies in check ids (`rust/<id>-<check>`).
pub(crate) const LIB: Lib = Lib::new("again");

/// The `again` crate.
pub(crate) struct Again;

impl RetryLibrary for Again {
    fn name(&self) -> &'static str {
        "again"
    }

    fn libs(&self) -> &'static [Lib] {
        &[LIB]
    }

    fn constructors(&self) -> &'static [&'static str] {
        &["exponential", "fixed"]
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
        CallShape::PolicyFirst
    }

    fn retry_methods(&self) -> &'static [&'static str] {
        &["retry"]
    }
}

pub(crate) const BY_VALUE_SETTERS: &[&str] =
    &["with_max_retries", "with_jitter", "with_max_delay", "with_backoff_exponent"];

fn construct(root: &Root, env: &Env) -> Option<Policy> {
    let Root::Call { ty, func, args } = root else { return None };
    if ty != "RetryPolicy" || !matches!(func.as_str(), "exponential" | "fixed") {
        return None;
    }
    let d = args.first().and_then(|a| env.millis(a));
    let mut p = Policy::new(
        LIB,
        Fact::new(Attempts::Total(6.0), "again's default of 5 retries"),
        Fact::new(Some(false), "again does not jitter unless .with_jitter(true)"),
    );
    p.min_delay_ms = d;
    if func == "fixed" {
        p.max_delay_ms = d;
    }
    Some(p)
}

fn apply(p: &mut Policy, s: &Setter, env: &Env) -> bool {
    match s.name.as_str() {
        "with_max_retries" => {
            p.attempts = Fact::count(
                Attempts::from_retries(s.arg(0).and_then(|a| env.number(a))),
                ".with_max_retries(..)",
            )
        }
        "with_jitter" => {
            let on = s.arg(0).and_then(|a| env.number(a)).map(|v| v != 0.0);
            p.jitter = Fact::new(on, ".with_jitter(..)");
        }
        "with_max_delay" => p.max_delay_ms = s.arg(0).and_then(|a| env.millis(a)),
        "with_backoff_exponent" => {}
        _ => return false,
    }
    true
}
