//! backoff 0.4 (unmaintained, RUSTSEC-2025-0012): `ExponentialBackoff`
//! struct literals, `::default()`, `ExponentialBackoffBuilder`. Bounded by
//! `max_elapsed_time` (15 min default; `None` = forever), and it **jitters by
//! default** (`randomization_factor` 0.5) — which is why a backoff -> backon
//! migration that forgets `.with_jitter()` loses jitter.

use super::{EntryPoint, Imports, RetryLibrary, Root, Setter};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};
use crate::analyze::rust::syntax::BodyFacts;

/// The id of this crate's policies in check ids (`rust/<id>-<check>`).
pub(crate) const LIB: Lib = Lib::new("backoff");

/// The `backoff` crate.
pub(crate) struct Backoff;

impl RetryLibrary for Backoff {
    fn name(&self) -> &'static str {
        "backoff"
    }

    fn libs(&self) -> &'static [Lib] {
        &[LIB]
    }

    fn crate_names(&self) -> &'static [&'static str] {
        &["backoff"]
    }

    fn constructors(&self) -> &'static [&'static str] {
        &["default", "new"]
    }

    fn struct_literals(&self) -> &'static [&'static str] {
        &["ExponentialBackoff"]
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

    fn read_operation(&self, p: &mut Policy, op: &BodyFacts) {
        if op.reads_retry_after {
            p.retry_after = Fact::new(Some(true), "the operation returns Error::retry_after");
        }
    }

    fn entry_points(&self) -> &'static [EntryPoint] {
        // `backoff::retry`, `backoff::future::retry`, `retry_notify`; the
        // retry crate's `retry(delays, op)` has the same shape.
        &[EntryPoint {
            types: &[],
            funcs: &["retry", "retry_notify"],
            min_args: 2,
            operation: Some(1),
            condition: None,
            client_wide: false,
        }]
    }
}

pub(crate) const BY_VALUE_SETTERS: &[&str] = &[
    "with_randomization_factor",
    "with_max_elapsed_time",
    "with_initial_interval",
    "with_max_interval",
    "with_multiplier",
];

const DEFAULT_MAX_ELAPSED_MS: f64 = 15.0 * 60_000.0;

fn defaults() -> Policy {
    let mut p = Policy::new(
        LIB,
        Fact::new(
            Attempts::TimeBounded(DEFAULT_MAX_ELAPSED_MS),
            "backoff's default max_elapsed_time of 15 min",
        ),
        Fact::new(Some(true), "backoff's default randomization_factor is 0.5"),
    );
    p.min_delay_ms = Some(500.0);
    p.max_delay_ms = Some(60_000.0);
    p.total_timeout_ms = Some(DEFAULT_MAX_ELAPSED_MS);
    p.retry_after = Fact::new(Some(false), "backoff honours Retry-After only via Error::retry_after");
    p
}

fn construct(root: &Root, env: &Env, imports: &Imports) -> Option<Policy> {
    match root {
        Root::Call { ty, func, .. } => {
            let ours = match (ty.as_str(), func.as_str()) {
                ("ExponentialBackoff", "default") => true,
                ("ExponentialBackoffBuilder", "new") => true,
                ("ExponentialBackoffBuilder", "default") => {
                    !(imports.has("retry_policies") || imports.has("reqwest_retry"))
                }
                _ => false,
            };
            ours.then(defaults)
        }
        Root::Struct { ty, fields, .. } if ty == "ExponentialBackoff" => {
            let mut p = defaults();
            for (name, value) in fields {
                set_field(&mut p, name, value, env);
            }
            Some(p)
        }
        _ => None,
    }
}

fn set_field(p: &mut Policy, name: &str, value: &syn::Expr, env: &Env) {
    match name {
        "randomization_factor" => {
            let v = env.number(value);
            p.jitter = Fact::new(v.map(|v| v > 0.0), format!("randomization_factor: {}", fmt_opt(v)));
        }
        "max_elapsed_time" => set_max_elapsed(p, value, env),
        "initial_interval" => p.min_delay_ms = env.millis(value),
        "max_interval" => p.max_delay_ms = env.millis(value),
        _ => {}
    }
}

fn set_max_elapsed(p: &mut Policy, value: &syn::Expr, env: &Env) {
    let is_none = matches!(value, syn::Expr::Path(path) if path.path.is_ident("None"));
    if is_none {
        p.total_timeout_ms = None;
        p.attempts = Fact::new(Attempts::Unbounded, "max_elapsed_time: None");
    } else {
        p.total_timeout_ms = env.millis(value);
        let a = p.total_timeout_ms.map_or(Attempts::Unknown, Attempts::TimeBounded);
        p.attempts = Fact::new(a, "max_elapsed_time");
    }
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or_else(|| "unknown".into(), |v| v.to_string())
}

fn apply(p: &mut Policy, s: &Setter, env: &Env) -> bool {
    match s.name.as_str() {
        "with_randomization_factor" => {
            let v = s.arg(0).and_then(|a| env.number(a));
            p.jitter = Fact::new(v.map(|v| v > 0.0), format!(".with_randomization_factor({})", fmt_opt(v)));
        }
        "with_max_elapsed_time" => {
            if let Some(a) = s.arg(0) {
                set_max_elapsed(p, a, env);
            }
        }
        "with_initial_interval" => p.min_delay_ms = s.arg(0).and_then(|a| env.millis(a)),
        "with_max_interval" => p.max_delay_ms = s.arg(0).and_then(|a| env.millis(a)),
        "with_multiplier" | "build" => {}
        _ => return false,
    }
    true
}
