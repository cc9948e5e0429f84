//! retry 2.x (sync): `retry(delay::Exponential::from_millis(10).take(3), op)`.
//! Delay iterators are **unbounded unless `.take(n)`** and **do not jitter
//! unless `.map(delay::jitter)`**; `Range` delays are random. Setters are
//! shared with tokio-retry ([`super::tokio_retry::apply`]).

use super::{Imports, Root};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};

pub fn construct(root: &Root, env: &Env, imports: &Imports) -> Option<Policy> {
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
        Lib::RetryCrate,
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
