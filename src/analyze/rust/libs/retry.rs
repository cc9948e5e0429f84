//! retry 2.x (sync): `retry(delay::Exponential::from_millis(10).take(3), op)`.
//! Delay iterators are **unbounded unless `.take(n)`** and **do not jitter
//! unless `.map(delay::jitter)`**; `Range` delays are random. Setters are
//! shared with tokio-retry ([`super::tokio_retry::apply`]).

use super::{Imports, RetryLibrary, Root, Setter};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};

/// The id of this crate's policies in check ids (`rust/<id>-<check>`).
pub(crate) const LIB: Lib = Lib::new("retry");

/// The `retry` crate.
pub(crate) struct Retry;

impl RetryLibrary for Retry {
    fn name(&self) -> &'static str {
        "retry"
    }

    fn libs(&self) -> &'static [Lib] {
        &[LIB]
    }

    fn crate_names(&self) -> &'static [&'static str] {
        &["retry"]
    }

    fn constructors(&self) -> &'static [&'static str] {
        &["from_millis", "from_millis_exclusive", "from_millis_inclusive"]
    }

    fn construct(&self, root: &Root, env: &Env, imports: &Imports) -> Option<Policy> {
        construct(root, env, imports)
    }

    fn apply(&self, p: &mut Policy, s: &Setter, env: &Env) -> bool {
        super::tokio_retry::apply(p, s, env)
    }

    fn by_value_setters(&self) -> &'static [&'static str] {
        super::tokio_retry::BY_VALUE_SETTERS
    }
}

fn construct(root: &Root, env: &Env, imports: &Imports) -> Option<Policy> {
    let Root::Call { ty, func, args } = root else { return None };
    let first = || args.first().and_then(|a| env.number(a));
    let (min, max, random) = match (ty.as_str(), func.as_str()) {
        ("Exponential", "from_millis") => (first(), None, false),
        ("Fixed", "from_millis") => (first(), first(), false),
        ("Fibonacci", "from_millis") => (first(), None, false),
        ("Range", "from_millis_exclusive" | "from_millis_inclusive") => {
            (first(), args.get(1).and_then(|a| env.number(a)), true)
        }
        ("ExponentialBackoff", "from_millis") if imports.has("retry") => (first(), None, false),
        _ => return None,
    };
    let mut p = Policy::new(
        LIB,
        Fact::new(Attempts::Unbounded, "retry's delay iterators are unbounded unless .take(n)"),
        if random {
            Fact::new(Some(true), "retry's Range delays are random")
        } else {
            Fact::new(Some(false), "retry's delays do not jitter unless .map(jitter)")
        },
    );
    p.min_delay_ms = min;
    p.max_delay_ms = max;
    Some(p)
}
