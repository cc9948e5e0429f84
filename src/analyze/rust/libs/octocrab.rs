//! octocrab's retry layer: `RetryConfig::Simple(n)` retries 5xx, 429 and
//! transport errors **immediately, with no backoff, for every method
//! including POST**; `RetryConfig::None` turns it off.

use super::{Imports, RetryLibrary, Root};
use crate::analyze::rust::eval::Env;
use crate::analyze::rust::policy::{Attempts, Fact, Lib, Policy};

/// The id of this crate's policies in check ids (`rust/<id>-<check>`).
pub(crate) const LIB: Lib = Lib::new("octocrab");

/// The `octocrab` crate.
pub(crate) struct Octocrab;

impl RetryLibrary for Octocrab {
    fn name(&self) -> &'static str {
        "octocrab"
    }

    fn libs(&self) -> &'static [Lib] {
        &[LIB]
    }

    fn constructors(&self) -> &'static [&'static str] {
        &["Simple"]
    }

    fn construct(&self, root: &Root, env: &Env, _imports: &Imports) -> Option<Policy> {
        construct(root, env)
    }
}

fn construct(root: &Root, env: &Env) -> Option<Policy> {
    let Root::Call { ty, func, args } = root else { return None };
    if ty != "RetryConfig" || func != "Simple" {
        return None;
    }
    let mut p = Policy::new(
        LIB,
        Fact::count(
            Attempts::from_retries(args.first().and_then(|a| env.number(a))),
            "RetryConfig::Simple(n)",
        ),
        Fact::new(Some(false), "octocrab's Simple retry has no backoff and no jitter"),
    );
    p.client_wide = true;
    p.methods.insert(crate::analyze::rust::syntax::UNKNOWN_METHOD.into());
    Some(p)
}
