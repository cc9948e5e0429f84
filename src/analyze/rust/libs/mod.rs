//! What each retry library's API means: which constructors start a policy,
//! the defaults they carry, and what each setter changes.
//!
//! One file per crate, each implementing [`RetryLibrary`]: the calls that
//! construct a policy (a constructor call or struct literal -> a [`Policy`]
//! holding that crate's defaults), what each setter in a builder chain
//! changes, which setters return a new builder, and how its `.retry(..)` call
//! is shaped. [`LIBRARIES`] lists them; the site finder ([`super::sites`])
//! and the check ids ([`super::checks`]) know the crates only through it.
//! Adding a library is one new file and one line in [`LIBRARIES`].
//!
//! The defaults come from each crate's documentation and source (the
//! README's crate table names what is known); the comparison that turns two
//! policies into findings is in [`super::checks`], one file per check
//! (jitter removal, for every library: `checks/jitter.rs`).

pub(crate) mod again;
pub(crate) mod alloy;
pub(crate) mod aws;
pub(crate) mod backoff;
pub(crate) mod backon;
pub(crate) mod ethers;
pub(crate) mod exponential_backoff;
pub(crate) mod octocrab;
pub(crate) mod reqwest;
pub(crate) mod reqwest_retry;
pub(crate) mod retry;
pub(crate) mod tokio_retry;
pub(crate) mod tower;
pub(crate) mod tryhard;

use std::collections::BTreeSet;

use syn::Expr;

use super::eval::Env;
use super::policy::{Lib, Policy};
use super::syntax::BodyFacts;

/// The start of a builder chain.
pub(crate) enum Root<'a> {
    /// `Type::func(args)` or `func(args)`.
    Call {
        /// The path segment before `func` (`retry::for_host` has `retry`);
        /// empty for a free function.
        ty: String,
        /// The function's name.
        func: String,
        /// Its arguments, in order.
        args: Vec<&'a Expr>,
    },
    /// `Type { field: value, ..rest }`.
    Struct {
        /// The struct's name (last path segment).
        ty: String,
        /// The fields written, in order.
        fields: Vec<(String, &'a Expr)>,
    },
    /// A function's parameter, known only by its declared type (last
    /// segment): what the caller built it with is not seen here.
    Typed {
        /// The parameter's type (`ExponentialBackoff`).
        ty: String,
    },
}

/// One method call in a chain after the root.
pub(crate) struct Setter<'a> {
    pub(crate) name: String,
    pub(crate) args: Vec<&'a Expr>,
}

impl<'a> Setter<'a> {
    pub(crate) fn arg(&self, i: usize) -> Option<&'a Expr> {
        self.args.get(i).copied()
    }
}

/// Crate names a file mentions (`use` roots and path prefixes), to tell
/// same-named types apart (`ExponentialBackoff` exists in four crates).
#[derive(Debug, Default, Clone)]
pub(crate) struct Imports {
    pub(crate) crates: BTreeSet<String>,
}

impl Imports {
    pub(crate) fn has(&self, name: &str) -> bool {
        self.crates.contains(name)
    }
}

/// How a library's `.retry(..)` method call is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallShape {
    /// `op.retry(policy)`: the argument is the policy, the receiver the
    /// retried operation (backon).
    OperationFirst,
    /// `policy.retry(op)`: the receiver is the policy, the argument the
    /// operation (again).
    PolicyFirst,
    /// `client_builder.retry(policy)`: the policy is installed on a client;
    /// no operation is at the call (reqwest, aws, tower's `ServiceBuilder`).
    OnClient,
}

/// A function that runs a retry with a policy as its first argument:
/// `Retry::spawn(policy, op)`, `backoff::retry(policy, op)`,
/// `RetryTransientMiddleware::new_with_policy(policy)`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EntryPoint {
    /// The type or module before the function (`Retry`); empty: any, free
    /// functions included.
    pub(crate) types: &'static [&'static str],
    pub(crate) funcs: &'static [&'static str],
    /// The fewest arguments a call needs to be this entry point.
    pub(crate) min_args: usize,
    /// The argument that is the retried operation; `None` when the policy is
    /// installed on a client.
    pub(crate) operation: Option<usize>,
    /// The argument that decides which errors are retried, if any.
    pub(crate) condition: Option<usize>,
    /// The policy then covers every request the client sends.
    pub(crate) client_wide: bool,
}

impl EntryPoint {
    fn matches(&self, ty: &str, func: &str, args: usize) -> bool {
        args >= self.min_args
            && self.funcs.contains(&func)
            && (self.types.is_empty() || self.types.contains(&ty))
    }
}

/// What the analyzer knows about one retry crate.
pub(crate) trait RetryLibrary: Sync {
    /// The crate as people name it, for docs and tests (`backon`).
    fn name(&self) -> &'static str;

    /// The policy ids this crate's policies carry (tower has two: its
    /// backoff and its budget).
    fn libs(&self) -> &'static [Lib];

    /// Crate names as written in paths (`tokio_retry::`) that tell this
    /// crate's types from same-named ones of other crates; a file that
    /// mentions one counts as importing it.
    fn crate_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// The last path segment of every call [`RetryLibrary::construct`]
    /// accepts (`default`, `from_millis`): other calls are skipped unread.
    fn constructors(&self) -> &'static [&'static str];

    /// Types built as struct literals (`ExponentialBackoff { .. }`).
    fn struct_literals(&self) -> &'static [&'static str] {
        &[]
    }

    /// A constructor call or struct literal -> a policy with this crate's
    /// defaults; `None` when the root is not this crate's.
    fn construct(&self, root: &Root, env: &Env, imports: &Imports) -> Option<Policy>;

    /// Applies one setter of a builder chain; `false` when the crate has no
    /// such setter (the call is then not part of the policy, e.g. `.build()`).
    fn apply(&self, _p: &mut Policy, _s: &Setter, _env: &Env) -> bool {
        false
    }

    /// Setters that return a new builder and change nothing in place:
    /// calling one as a statement and dropping the result does nothing.
    fn by_value_setters(&self) -> &'static [&'static str] {
        &[]
    }

    /// Setters that take `&mut self` (`b.set_jitter(0.0);`): statements that
    /// change the binding's policy.
    fn mutating_setters(&self) -> &'static [&'static str] {
        &[]
    }

    /// Functions of this crate that run a retry (`Retry::spawn`).
    fn entry_points(&self) -> &'static [EntryPoint] {
        &[]
    }

    /// Methods taking one argument that retry (`op.retry(policy)`) or
    /// install a policy (`loader.retry_config(cfg)`).
    fn retry_methods(&self) -> &'static [&'static str] {
        &[]
    }

    /// How `x.retry(y)` reads for a policy of `lib` (one of [`Self::libs`]).
    fn call_shape(&self, _lib: Lib) -> CallShape {
        CallShape::OperationFirst
    }

    /// What the retried operation's body tells about the policy (backoff
    /// honours Retry-After when the operation returns `Error::retry_after`).
    fn read_operation(&self, _p: &mut Policy, _op: &BodyFacts) {}
}

/// Every retry crate the analyzer knows, in the order constructors are
/// tried (the first that accepts a root wins: `ExponentialBackoffBuilder`
/// is reqwest-retry's before it is backoff's).
pub(crate) static LIBRARIES: &[&dyn RetryLibrary] = &[
    &backon::Backon,
    &reqwest_retry::ReqwestRetry,
    &tokio_retry::TokioRetry,
    &retry::Retry,
    &backoff::Backoff,
    &tower::Tower,
    &reqwest::Reqwest,
    &aws::Aws,
    &again::Again,
    &exponential_backoff::ExponentialBackoff,
    &octocrab::Octocrab,
    &tryhard::Tryhard,
    &alloy::Alloy,
    &ethers::Ethers,
];

/// The crate a policy id belongs to (`None` for hand-written loops).
pub(crate) fn library_of(lib: Lib) -> Option<&'static dyn RetryLibrary> {
    LIBRARIES.iter().copied().find(|l| l.libs().contains(&lib))
}

/// Starts a policy from a chain root, trying every library in order.
pub(crate) fn construct(root: &Root, env: &Env, imports: &Imports) -> Option<Policy> {
    LIBRARIES.iter().find_map(|l| l.construct(root, env, imports))
}

/// Applies one setter to a policy; `false` when its library has no such
/// setter (the call is then not part of the policy, e.g. `.build()`).
pub(crate) fn apply(p: &mut Policy, s: &Setter, env: &Env) -> bool {
    library_of(p.lib).is_some_and(|l| l.apply(p, s, env))
}

/// The by-value setters of the library of `lib` (none for loops).
pub(crate) fn by_value_setters(lib: Lib) -> &'static [&'static str] {
    library_of(lib).map_or(&[], |l| l.by_value_setters())
}

/// `with_*` setters of any library, for statements whose receiver cannot be
/// resolved to a known builder but is named like one.
pub(crate) fn any_by_value_setter(name: &str) -> bool {
    name.starts_with("with") && LIBRARIES.iter().any(|l| l.by_value_setters().contains(&name))
}

/// Whether `name` is an in-place setter of any library.
pub(crate) fn any_mutating_setter(name: &str) -> bool {
    LIBRARIES.iter().any(|l| l.mutating_setters().contains(&name))
}

/// The crate names that tell same-named types apart, of every library.
pub(crate) fn disambiguating_crates() -> impl Iterator<Item = &'static str> {
    LIBRARIES.iter().flat_map(|l| l.crate_names().iter().copied())
}

/// Whether any library builds `ty` as a struct literal.
pub(crate) fn is_struct_literal(ty: &str) -> bool {
    LIBRARIES.iter().any(|l| l.struct_literals().contains(&ty))
}

/// Every constructor and entry-point function name of every library, once
/// each: a call by another last name is nothing to a retry.
pub(crate) fn call_names() -> &'static [&'static str] {
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        let constructors = LIBRARIES.iter().flat_map(|l| l.constructors().iter().copied());
        let entries =
            LIBRARIES.iter().flat_map(|l| l.entry_points().iter().flat_map(|e| e.funcs.iter().copied()));
        unique(constructors.chain(entries))
    })
}

/// Whether a one-argument method of this name retries or installs a policy.
pub(crate) fn is_retry_method(name: &proc_macro2::Ident) -> bool {
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    NAMES
        .get_or_init(|| unique(LIBRARIES.iter().flat_map(|l| l.retry_methods().iter().copied())))
        .iter()
        .any(|n| name == n)
}

/// The entry point a call `ty::func(..args)` is, if any.
pub(crate) fn entry_point(ty: &str, func: &str, args: usize) -> Option<&'static EntryPoint> {
    LIBRARIES.iter().flat_map(|l| l.entry_points()).find(|e| e.matches(ty, func, args))
}

fn unique(names: impl Iterator<Item = &'static str>) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = Vec::new();
    for name in names {
        if !v.contains(&name) {
            v.push(name);
        }
    }
    v
}

/// The policy id of the library an entry point belongs to.
pub(crate) fn library_of_entry(entry: &EntryPoint) -> Option<Lib> {
    LIBRARIES
        .iter()
        .find(|l| l.entry_points().iter().any(|e| std::ptr::eq(e, entry)))
        .and_then(|l| l.libs().first().copied())
}

/// How `x.retry(y)` reads for a policy of `lib`.
pub(crate) fn call_shape(lib: Lib) -> CallShape {
    library_of(lib).map_or(CallShape::OperationFirst, |l| l.call_shape(lib))
}

/// Lets the library of `p` read the retried operation's body.
pub(crate) fn read_operation(p: &mut Policy, op: &BodyFacts) {
    if let Some(l) = library_of(p.lib) {
        l.read_operation(p, op);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_id_belongs_to_one_library() {
        let mut ids: Vec<&str> = LIBRARIES.iter().flat_map(|l| l.libs().iter().map(|x| x.id())).collect();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "two libraries share a policy id: {ids:?}");
        assert!(!ids.contains(&Lib::HAND_ROLLED.id()), "`loop` is reserved for hand-written loops");
        assert!(library_of(Lib::HAND_ROLLED).is_none());
        assert_eq!(library_of(backon::LIB).map(|l| l.name()), Some("backon"));
    }

    #[test]
    fn the_call_shapes_follow_each_crate() {
        assert_eq!(call_shape(backon::LIB), CallShape::OperationFirst);
        assert_eq!(call_shape(again::LIB), CallShape::PolicyFirst);
        assert_eq!(call_shape(reqwest::LIB), CallShape::OnClient);
        assert_eq!(call_shape(tower::LIB), CallShape::OnClient);
        assert_eq!(call_shape(tower::BUDGET), CallShape::OperationFirst);
        assert_eq!(call_shape(Lib::HAND_ROLLED), CallShape::OperationFirst);
    }

    #[test]
    fn setter_lists_are_the_libraries_own() {
        assert!(by_value_setters(backon::LIB).contains(&"with_jitter"));
        assert!(by_value_setters(Lib::HAND_ROLLED).is_empty());
        assert_eq!(by_value_setters(retry::LIB), by_value_setters(tokio_retry::LIB));
        assert!(any_by_value_setter("with_max_times") && !any_by_value_setter("take"));
        assert!(any_mutating_setter("set_jitter") && !any_mutating_setter("with_jitter"));
        assert!(is_struct_literal("ExponentialBackoff") && !is_struct_literal("ExponentialBuilder"));
        let crates: Vec<&str> = disambiguating_crates().collect();
        for c in ["tokio_retry", "tokio_retry2", "retry_policies", "reqwest_retry", "backoff", "retry"] {
            assert!(crates.contains(&c), "{c}");
        }
    }

    #[test]
    fn call_names_are_listed_once() {
        let names = call_names();
        for n in [
            "default",
            "new",
            "from_millis",
            "Simple",
            "retry_fn",
            "for_host",
            "spawn",
            "retry",
            "new_with_policy",
        ] {
            assert_eq!(names.iter().filter(|x| **x == n).count(), 1, "{n}");
        }
        assert!(!names.contains(&"timeout"), "timeouts are not a library's");
    }

    #[test]
    fn entry_points_match_by_type_name_and_arguments() {
        let spawn = entry_point("Retry", "spawn", 3).expect("tokio-retry's spawn");
        assert_eq!((spawn.operation, spawn.condition), (Some(1), Some(2)));
        assert!(entry_point("Retry", "spawn", 1).is_none(), "needs the policy and the operation");
        assert!(entry_point("Thread", "spawn", 2).is_none());
        assert!(
            entry_point("", "retry", 2).is_some_and(|e| e.operation == Some(1)),
            "a free retry(policy, op)"
        );
        let mw = entry_point("RetryTransientMiddleware", "new_with_policy", 1).unwrap();
        assert!(mw.client_wide && mw.operation.is_none());
        assert!(entry_point("RetryLayer", "new", 1).is_some_and(|e| !e.client_wide));
    }

    #[test]
    fn retry_methods_are_the_libraries_own() {
        let ident = |s: &str| proc_macro2::Ident::new(s, proc_macro2::Span::call_site());
        assert!(is_retry_method(&ident("retry")) && is_retry_method(&ident("retry_config")));
        assert!(!is_retry_method(&ident("retry_if")) && !is_retry_method(&ident("send")));
    }
}
