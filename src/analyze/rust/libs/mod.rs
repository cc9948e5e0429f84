//! What each retry library's API means: which constructors start a policy,
//! the defaults they carry, and what each setter changes.
//!
//! One file per crate, each with `construct` (a constructor call or struct
//! literal -> a [`Policy`] holding that crate's defaults) and `apply` (one
//! setter in a builder chain -> its effect). The defaults and sources are in
//! each crate's documentation and source (the README's crate table names what is known); the comparison that turns two
//! policies into findings is in [`super::compare`].

pub mod again;
pub mod aws;
pub mod backoff;
pub mod backon;
pub mod exponential_backoff;
pub mod octocrab;
pub mod reqwest;
pub mod reqwest_retry;
pub mod retry;
pub mod tokio_retry;
pub mod tower;
pub mod tryhard;

use std::collections::BTreeSet;

use syn::Expr;

use super::eval::Env;
use super::policy::{Lib, Policy};

/// The start of a builder chain.
pub enum Root<'a> {
    /// `Type::func(args)` or `func(args)`; `ty` is empty for a free function,
    /// `module` is the segment before `ty` (`retry::for_host` has ty `retry`).
    Call { ty: String, func: String, args: Vec<&'a Expr> },
    /// `Type { field: value, ..rest }`.
    Struct { ty: String, fields: Vec<(String, &'a Expr)>, has_rest: bool },
}

/// One method call in a chain after the root.
pub struct Setter<'a> {
    pub name: String,
    pub args: Vec<&'a Expr>,
}

impl<'a> Setter<'a> {
    pub fn arg(&self, i: usize) -> Option<&'a Expr> {
        self.args.get(i).copied()
    }
}

/// Crate names a file mentions (`use` roots and path prefixes), to tell
/// same-named types apart (`ExponentialBackoff` exists in four crates).
#[derive(Debug, Default, Clone)]
pub struct Imports {
    pub crates: BTreeSet<String>,
}

impl Imports {
    pub fn has(&self, name: &str) -> bool {
        self.crates.contains(name)
    }
}

/// Starts a policy from a chain root, trying every library.
pub fn construct(root: &Root, env: &Env, imports: &Imports) -> Option<Policy> {
    backon::construct(root, env)
        .or_else(|| reqwest_retry::construct(root, env, imports))
        .or_else(|| tokio_retry::construct(root, env, imports))
        .or_else(|| retry::construct(root, env, imports))
        .or_else(|| backoff::construct(root, env, imports))
        .or_else(|| tower::construct(root, env))
        .or_else(|| reqwest::construct(root, env))
        .or_else(|| aws::construct(root, env))
        .or_else(|| again::construct(root, env))
        .or_else(|| exponential_backoff::construct(root, env, imports))
        .or_else(|| octocrab::construct(root, env))
        .or_else(|| tryhard::construct(root, env))
}

/// Applies one setter to a policy; `false` when the library has no such setter
/// (the call is then not part of the policy, e.g. `.build()`).
pub fn apply(p: &mut Policy, s: &Setter, env: &Env) -> bool {
    match p.lib {
        Lib::Backon => backon::apply(p, s, env),
        Lib::ReqwestRetry => reqwest_retry::apply(p, s, env),
        Lib::TokioRetry => tokio_retry::apply(p, s, env),
        Lib::RetryCrate => tokio_retry::apply(p, s, env),
        Lib::Backoff => backoff::apply(p, s, env),
        Lib::Tower | Lib::TowerBudget => tower::apply(p, s, env),
        Lib::Reqwest => reqwest::apply(p, s, env),
        Lib::Aws => aws::apply(p, s, env),
        Lib::Again => again::apply(p, s, env),
        Lib::ExponentialBackoff => exponential_backoff::apply(p, s, env),
        Lib::Tryhard => tryhard::apply(p, s, env),
        Lib::Octocrab | Lib::HandRolled => false,
    }
}

/// Setters that return a new builder and change nothing in place: calling
/// one as a statement and dropping the result does nothing.
pub fn by_value_setters(lib: Lib) -> &'static [&'static str] {
    match lib {
        Lib::Backon => backon::BY_VALUE_SETTERS,
        Lib::ReqwestRetry => reqwest_retry::BY_VALUE_SETTERS,
        Lib::TokioRetry | Lib::RetryCrate => tokio_retry::BY_VALUE_SETTERS,
        Lib::Backoff => backoff::BY_VALUE_SETTERS,
        Lib::Reqwest => reqwest::BY_VALUE_SETTERS,
        Lib::Aws => aws::BY_VALUE_SETTERS,
        Lib::Again => again::BY_VALUE_SETTERS,
        Lib::Tryhard => tryhard::BY_VALUE_SETTERS,
        _ => &[],
    }
}

/// `with_*` setters of any library, for statements whose receiver cannot be
/// resolved to a known builder but is named like one.
pub fn any_by_value_setter(name: &str) -> bool {
    [Lib::Backon, Lib::ReqwestRetry, Lib::Backoff, Lib::Aws, Lib::Again]
        .iter()
        .any(|l| by_value_setters(*l).contains(&name) && name.starts_with("with"))
}
