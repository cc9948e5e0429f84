//! tryhard 0.5: `tryhard::retry_fn(op).retries(n)` then a backoff
//! (`fixed_backoff`, `linear_backoff`, `exponential_backoff`,
//! `custom_backoff`) and `.max_delay(d)`; or the same settings on a
//! `RetryFutureConfig::new(n)` handed over with `.with_config(..)`.
//! Its built-in backoffs do not jitter; a custom backoff function may.
//! It does not read Retry-After.

use super::{Imports, RetryLibrary, Root, Setter};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};

/// The id of this crate's policies in check ids (`rust/<id>-<check>`).
pub(crate) const LIB: Lib = Lib::new("tryhard");

/// The `tryhard` crate.
pub(crate) struct Tryhard;

impl RetryLibrary for Tryhard {
    fn name(&self) -> &'static str {
        "tryhard"
    }

    fn libs(&self) -> &'static [Lib] {
        &[LIB]
    }

    fn constructors(&self) -> &'static [&'static str] {
        &["retry_fn", "new"]
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
}

pub(crate) const BY_VALUE_SETTERS: &[&str] =
    &["retries", "fixed_backoff", "linear_backoff", "exponential_backoff", "custom_backoff", "max_delay"];

fn construct(root: &Root, env: &Env) -> Option<Policy> {
    let Root::Call { ty, func, args } = root else { return None };
    let attempts = match (ty.as_str(), func.as_str()) {
        ("tryhard" | "", "retry_fn") => Fact::new(Attempts::Unknown, "tryhard::retry_fn before .retries(..)"),
        ("RetryFutureConfig", "new") => Fact::count(
            Attempts::from_retries(args.first().and_then(|a| env.number(a))),
            "RetryFutureConfig::new(..)",
        ),
        _ => return None,
    };
    Some(Policy::new(LIB, attempts, Fact::new(Some(false), "tryhard's built-in backoffs do not jitter")))
}

fn apply(p: &mut Policy, s: &Setter, env: &Env) -> bool {
    match s.name.as_str() {
        "retries" => {
            p.attempts =
                Fact::count(Attempts::from_retries(s.arg(0).and_then(|a| env.number(a))), ".retries(..)")
        }
        "fixed_backoff" | "linear_backoff" | "exponential_backoff" => {
            p.min_delay_ms = s.arg(0).and_then(|a| env.millis(a));
            p.jitter = Fact::new(Some(false), format!(".{}(..) does not jitter", s.name));
        }
        "custom_backoff" => {
            p.jitter = Fact::new(None, ".custom_backoff(..) decides");
        }
        "max_delay" => p.max_delay_ms = s.arg(0).and_then(|a| env.millis(a)),
        "with_config" | "on_retry" => {}
        _ => return false,
    }
    true
}
