//! tower 0.5 retry: `ExponentialBackoffMaker::new(min, max, jitter, rng)`
//! (jitter 0..=100; tower's default 0.99) and `TpsBudget::new(ttl,
//! min_per_sec, retry_percent)` (default 10 s, 10/s, 20%). The attempt count
//! lives in the user's `impl Policy`, which the site finder reads separately.

use super::{Root, Setter};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};

pub fn construct(root: &Root, env: &Env) -> Option<Policy> {
    let Root::Call { ty, func, args } = root else { return None };
    match (ty.as_str(), func.as_str()) {
        ("ExponentialBackoffMaker", "new") => {
            let jitter = args.get(2).and_then(|a| env.number(a));
            let mut p = Policy::new(
                Lib::Tower,
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
                Lib::TowerBudget,
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

pub fn apply(_p: &mut Policy, _s: &Setter, _env: &Env) -> bool {
    false
}
