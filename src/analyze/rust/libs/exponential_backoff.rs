//! exponential-backoff 2.x: `Backoff::new(max_attempts, min, max)` counts
//! **total attempts** (default 3) and **jitters by default** (0.3). Its
//! setters take `&mut self` (`b.set_jitter(0.0);`), so statements change it.

use super::{Imports, RetryLibrary, Root, Setter};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};

/// The id of this crate's policies in check ids (`rust/<id>-<check>`).
pub(crate) const LIB: Lib = Lib::new("exponential-backoff");

/// The `exponential-backoff` crate.
pub(crate) struct ExponentialBackoff;

impl RetryLibrary for ExponentialBackoff {
    fn name(&self) -> &'static str {
        "exponential-backoff"
    }

    fn libs(&self) -> &'static [Lib] {
        &[LIB]
    }

    fn crate_names(&self) -> &'static [&'static str] {
        &["exponential_backoff"]
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

    fn mutating_setters(&self) -> &'static [&'static str] {
        MUTATING_SETTERS
    }
}

/// Setters that change the backoff in place.
pub(crate) const MUTATING_SETTERS: &[&str] =
    &["set_max_attempts", "set_jitter", "set_min", "set_max", "set_factor"];

fn construct(root: &Root, env: &Env, imports: &Imports) -> Option<Policy> {
    let Root::Call { ty, func, args } = root else { return None };
    if ty != "Backoff" || !(imports.has("exponential_backoff") || args.len() == 3) {
        return None;
    }
    let attempts = match func.as_str() {
        "new" => Fact::count(
            Attempts::from_total(args.first().and_then(|a| env.number(a))),
            "Backoff::new(max_attempts, ..)",
        ),
        "default" => Fact::new(Attempts::Total(3.0), "exponential-backoff's default of 3 attempts"),
        _ => return None,
    };
    let mut p =
        Policy::new(LIB, attempts, Fact::new(Some(true), "exponential-backoff's default jitter of 0.3"));
    p.min_delay_ms = args.get(1).and_then(|a| env.millis(a));
    p.max_delay_ms = args.get(2).and_then(|a| env.millis(a));
    Some(p)
}

fn apply(p: &mut Policy, s: &Setter, env: &Env) -> bool {
    match s.name.as_str() {
        "set_max_attempts" => {
            p.attempts = Fact::count(
                Attempts::from_total(s.arg(0).and_then(|a| env.number(a))),
                ".set_max_attempts(..)",
            )
        }
        "set_jitter" => {
            let v = s.arg(0).and_then(|a| env.number(a));
            p.jitter = Fact::new(v.map(|v| v > 0.0), ".set_jitter(..)");
        }
        "set_min" => p.min_delay_ms = s.arg(0).and_then(|a| env.millis(a)),
        "set_max" => p.max_delay_ms = s.arg(0).and_then(|a| env.millis(a)),
        "set_factor" => {}
        _ => return false,
    }
    true
}
