//! aws-config / aws-smithy-types `RetryConfig`: `standard()`, `adaptive()`,
//! `disabled()`, `RetryConfigBuilder`. Counts are **total attempts**
//! (default 3), full jitter always on unless
//! `with_use_static_exponential_base(true)`. `TimeoutConfig` setters are read
//! as timeouts by the site finder.

use super::{CallShape, Imports, RetryLibrary, Root, Setter};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};

/// The id of this crate's policies in check ids (`rust/<id>-<check>`).
pub(crate) const LIB: Lib = Lib::new("aws");

/// The `aws-config` crate.
pub(crate) struct Aws;

impl RetryLibrary for Aws {
    fn name(&self) -> &'static str {
        "aws"
    }

    fn libs(&self) -> &'static [Lib] {
        &[LIB]
    }

    fn constructors(&self) -> &'static [&'static str] {
        &["standard", "adaptive", "disabled", "new", "default"]
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
        &["retry_config"]
    }
}

pub(crate) const BY_VALUE_SETTERS: &[&str] = &[
    "with_max_attempts",
    "with_initial_backoff",
    "with_max_backoff",
    "with_retry_mode",
    "with_use_static_exponential_base",
];

fn construct(root: &Root, _env: &Env) -> Option<Policy> {
    let Root::Call { ty, func, .. } = root else { return None };
    let attempts = match (ty.as_str(), func.as_str()) {
        ("RetryConfig", "standard" | "adaptive") => {
            Fact::new(Attempts::Total(3.0), format!("RetryConfig::{func}() default of 3 attempts"))
        }
        ("RetryConfig", "disabled") => Fact::new(Attempts::Total(1.0), "RetryConfig::disabled()"),
        ("RetryConfigBuilder", "new" | "default") => {
            Fact::new(Attempts::Total(3.0), "RetryConfigBuilder default of 3 attempts")
        }
        _ => return None,
    };
    let mut p = Policy::new(LIB, attempts, Fact::new(Some(true), "the AWS SDK always applies full jitter"));
    p.min_delay_ms = Some(1000.0);
    p.max_delay_ms = Some(20_000.0);
    p.retry_after = Fact::new(None, "the AWS SDK reads x-amz-retry-after, not Retry-After");
    Some(p)
}

fn apply(p: &mut Policy, s: &Setter, env: &Env) -> bool {
    let ms = |i| s.arg(i).and_then(|a| env.millis(a));
    match s.name.as_str() {
        "with_max_attempts" | "max_attempts" | "set_max_attempts" => {
            p.attempts = Fact::count(
                Attempts::from_total(s.arg(0).and_then(|a| env.number(a))),
                format!(".{}(..)", s.name),
            )
        }
        "with_initial_backoff" | "initial_backoff" => p.min_delay_ms = ms(0),
        "with_max_backoff" | "max_backoff" => p.max_delay_ms = ms(0),
        "with_use_static_exponential_base" | "use_static_exponential_base" => {
            let on = s.arg(0).and_then(|a| env.number(a)).map(|v| v != 0.0);
            if let Some(static_base) = on {
                p.jitter = Fact::new(Some(!static_base), ".with_use_static_exponential_base(..)");
            }
        }
        "with_retry_mode" | "mode" | "build" => {}
        _ => return false,
    }
    true
}
