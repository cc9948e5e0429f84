//! reqwest-retry 0.9 with retry-policies 0.5: `ExponentialBackoff::builder()`.
//! Jitter is **Full by default**; bounds 1 s .. 30 min; no method filter
//! (POST is retried on 5xx/429/transport errors); Retry-After is not honoured.

use super::{EntryPoint, Imports, RetryLibrary, Root, Setter};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};
use crate::analyze::rust::syntax::chain_of;

/// The id of this crate's policies in check ids (`rust/<id>-<check>`).
pub(crate) const LIB: Lib = Lib::new("reqwest-retry");

/// The `reqwest-retry` crate.
pub(crate) struct ReqwestRetry;

impl RetryLibrary for ReqwestRetry {
    fn name(&self) -> &'static str {
        "reqwest-retry"
    }

    fn libs(&self) -> &'static [Lib] {
        &[LIB]
    }

    fn crate_names(&self) -> &'static [&'static str] {
        &["retry_policies", "reqwest_retry"]
    }

    fn constructors(&self) -> &'static [&'static str] {
        &["builder", "default"]
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
            types: &["RetryTransientMiddleware"],
            funcs: &["new_with_policy", "new_with_policy_and_strategy"],
            min_args: 0,
            operation: None,
            condition: None,
            client_wide: true,
        }]
    }
}

pub(crate) const BY_VALUE_SETTERS: &[&str] = &["jitter", "retry_bounds", "base"];

fn construct(root: &Root, _env: &Env, imports: &Imports) -> Option<Policy> {
    let Root::Call { ty, func, .. } = root else { return None };
    let ours = match (ty.as_str(), func.as_str()) {
        ("ExponentialBackoff", "builder") => true,
        ("ExponentialBackoffBuilder", "default") => {
            imports.has("retry_policies") || imports.has("reqwest_retry")
        }
        _ => false,
    };
    if !ours {
        return None;
    }
    let mut p = Policy::new(
        LIB,
        // Until a build_with_* call the count is not set.
        Fact::new(Attempts::Unknown, "retry-policies builder without build_with_max_retries"),
        Fact::new(Some(true), "retry-policies jitters fully by default"),
    );
    p.min_delay_ms = Some(1000.0);
    p.max_delay_ms = Some(30.0 * 60_000.0);
    p.retry_after = Fact::new(Some(false), "reqwest-retry does not honour Retry-After");
    Some(p)
}

fn apply(p: &mut Policy, s: &Setter, env: &Env) -> bool {
    let num = |i| s.arg(i).and_then(|a| env.number(a));
    let ms = |i| s.arg(i).and_then(|a| env.millis(a));
    match s.name.as_str() {
        "build_with_max_retries" => {
            p.attempts = Fact::count(Attempts::from_retries(num(0)), ".build_with_max_retries(..)")
        }
        "build_with_total_retry_duration" => {
            p.total_timeout_ms = ms(0);
            let a = p.total_timeout_ms.map_or(Attempts::Unknown, Attempts::TimeBounded);
            p.attempts = Fact::new(a, ".build_with_total_retry_duration(..)");
        }
        "build_with_total_retry_duration_and_max_retries" => {
            p.total_timeout_ms = ms(0);
            p.attempts = Fact::count(
                Attempts::from_retries(num(1)),
                ".build_with_total_retry_duration_and_max_retries(..)",
            );
        }
        "jitter" => {
            let on = s.arg(0).map(|a| {
                let ch = chain_of(a);
                let text = match ch.root {
                    syn::Expr::Path(path) => {
                        path.path.segments.last().map(|x| x.ident.to_string()).unwrap_or_default()
                    }
                    _ => String::new(),
                };
                text != "None"
            });
            p.jitter = Fact::new(on, ".jitter(..)");
        }
        "retry_bounds" => {
            p.min_delay_ms = ms(0);
            p.max_delay_ms = ms(1);
        }
        "base" => {}
        _ => return false,
    }
    true
}
