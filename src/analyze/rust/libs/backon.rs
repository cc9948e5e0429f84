//! backon 1.x: `ExponentialBuilder`, `ConstantBuilder`, `FibonacciBuilder`.
//! Defaults: 3 retries, 1 s min delay, 60 s max delay, and **no jitter**
//! unless `.with_jitter()` is called. Retry-After only via `.adjust(..)`.

use super::{Imports, RetryLibrary, Root, Setter};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};

/// The id of this crate's policies in check ids (`rust/<id>-<check>`).
pub(crate) const LIB: Lib = Lib::new("backon");

/// The `backon` crate.
pub(crate) struct Backon;

impl RetryLibrary for Backon {
    fn name(&self) -> &'static str {
        "backon"
    }

    fn libs(&self) -> &'static [Lib] {
        &[LIB]
    }

    fn constructors(&self) -> &'static [&'static str] {
        &["default", "new"]
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

    fn retry_methods(&self) -> &'static [&'static str] {
        &["retry"]
    }
}

pub(crate) const BY_VALUE_SETTERS: &[&str] = &[
    "with_jitter",
    "with_jitter_seed",
    "with_max_times",
    "without_max_times",
    "with_min_delay",
    "with_max_delay",
    "without_max_delay",
    "with_factor",
    "with_total_delay",
    "with_delay",
];

fn construct(root: &Root, _env: &Env) -> Option<Policy> {
    let Root::Call { ty, func, .. } = root else { return None };
    if !matches!(func.as_str(), "default" | "new") {
        return None;
    }
    let (min, max) = match ty.as_str() {
        "ExponentialBuilder" | "FibonacciBuilder" => (1000.0, 60_000.0),
        "ConstantBuilder" => (1000.0, 1000.0),
        _ => return None,
    };
    let mut p = Policy::new(
        LIB,
        Fact::new(Attempts::Total(4.0), format!("backon's {ty} default of 3 retries")),
        Fact::new(Some(false), format!("backon's {ty} does not jitter unless .with_jitter() is called")),
    );
    p.min_delay_ms = Some(min);
    p.max_delay_ms = Some(max);
    p.retry_after = Fact::new(Some(false), "backon does not read Retry-After without .adjust(..)");
    Some(p)
}

fn apply(p: &mut Policy, s: &Setter, env: &Env) -> bool {
    let num = |i| s.arg(i).and_then(|a| env.number(a));
    let ms = |i| s.arg(i).and_then(|a| env.millis(a));
    match s.name.as_str() {
        "with_max_times" => {
            p.attempts = Fact::count(Attempts::from_retries(num(0)), ".with_max_times(..)");
        }
        "without_max_times" => {
            let a = match p.total_timeout_ms {
                Some(t) if t.is_finite() => Attempts::TimeBounded(t),
                _ => Attempts::Unbounded,
            };
            p.attempts = Fact::new(a, ".without_max_times()");
        }
        "with_total_delay" => {
            p.total_timeout_ms = ms(0);
            if let (Attempts::Unbounded, Some(t)) = (p.attempts.value, p.total_timeout_ms) {
                p.attempts = Fact::new(Attempts::TimeBounded(t), ".with_total_delay(..)");
            }
        }
        "with_jitter" | "with_jitter_seed" => p.jitter = Fact::new(Some(true), format!(".{}()", s.name)),
        "with_min_delay" | "with_delay" => p.min_delay_ms = ms(0),
        "with_max_delay" => p.max_delay_ms = ms(0),
        "without_max_delay" => p.max_delay_ms = Some(f64::INFINITY),
        "with_factor" => {}
        _ => return false,
    }
    true
}
