//! Resolving an expression to the policy it stands for: a constructor chain
//! of a known library, a variable bound to one (with its in-place setters),
//! a helper function of the file that returns one, a struct field the crate
//! sets to one, or a project type built around one (a wrapper's
//! constructor, a tuple struct); a type that steps itself (`next_backoff`)
//! keeps the builder's delays but not its bound.

use std::collections::HashMap;

use syn::{Expr, ExprMethodCall, Stmt};

use super::super::libs::{self, Root, Setter};
use super::super::policy::{Attempts, Fact, Policy};
use super::super::syntax::{chain_of, last_segments, line_of, Chain};
use super::{root_key, FnWalker};

/// How deep policy resolution follows variables and helper functions.
const MAX_RESOLVE_DEPTH: u32 = 8;

/// How many in-place setter statements on one binding are applied to its
/// policy (the last ones win; real code has a handful).
const MAX_MUTATIONS_APPLIED: usize = 64;

/// A policy found for an expression, with the root position of the chain
/// that built it (to mark it consumed).
pub(super) struct Resolved {
    pub(super) policy: Policy,
    pub(super) keys: Vec<(u32, u32)>,
}

impl<'w, 'i, 'a> FnWalker<'w, 'i, 'a> {
    /// The in-place setters called on `name` (up to `line` when given), at
    /// most the last [`MAX_MUTATIONS_APPLIED`]: later setters override
    /// earlier ones, and the bound keeps a file with thousands of setter
    /// statements on one binding linear.
    pub(super) fn mutations_of(&self, name: &str, line: Option<u32>) -> &[(u32, &'a ExprMethodCall)] {
        let all = self.mutations.get(name).map_or(&[][..], Vec::as_slice);
        let end = line.map_or(all.len(), |line| all.partition_point(|(l, _)| *l <= line));
        &all[end.saturating_sub(MAX_MUTATIONS_APPLIED)..end]
    }

    /// Resolves an expression to a policy: a constructor chain, a variable
    /// bound to one, or a helper function of this file returning one.
    pub(super) fn resolve(&self, e: &'a Expr, depth: u32) -> Option<Resolved> {
        if depth > MAX_RESOLVE_DEPTH {
            return None;
        }
        let chain = chain_of(e);
        let (mut resolved, skip) = self.resolve_root(&chain, depth)?;
        for m in chain.calls.iter().skip(skip) {
            let s = setter(m);
            libs::apply(&mut resolved.policy, &s, &self.env);
        }
        Some(resolved)
    }

    /// The policy a chain's root stands for; `skip` says how many calls of
    /// the chain the root consumed (`self.policy()` consumes one).
    pub(super) fn resolve_root(&self, chain: &Chain<'a>, depth: u32) -> Option<(Resolved, usize)> {
        let key = root_key(chain.root);
        if let Some(root) = self.root(chain.root) {
            if let Some(policy) = libs::construct(&root, &self.env, &self.w.index.imports) {
                return Some((Resolved { policy, keys: vec![key] }, 0));
            }
        }
        match chain.root {
            Expr::Path(p) if p.path.segments.len() == 1 => {
                let name = p.path.segments[0].ident.to_string();
                if name == "self" {
                    return self.resolve_self_call(chain, depth);
                }
                let line = line_of(chain.root);
                let Some(init) = self.env.lookup(&name, line) else {
                    // `fn connect(backoff: ExponentialBackoff) { Retry::spawn(backoff.take(n), ..) }`:
                    // a type that fixes some facts whatever the caller built.
                    if let Some(ty) = self.params.get(&name) {
                        let root = Root::Typed { ty: ty.clone() };
                        if let Some(policy) = libs::construct(&root, &self.env, &self.w.index.imports) {
                            return Some((Resolved { policy, keys: vec![key] }, 0));
                        }
                    }
                    self.w.miss(&name);
                    return None;
                };
                let mut r = self.resolve(init, depth + 1)?;
                // `let mut b = Backoff::new(..); b.set_jitter(0.0);`
                for (_, m) in self.mutations_of(&name, Some(line)) {
                    libs::apply(&mut r.policy, &setter(m), &self.env);
                }
                Some((r, 0))
            }
            Expr::Call(c) => {
                // `policy()`, `crate::retry::policy()`, `Self::policy()`: a
                // helper of this file (or of a file that defines it, see
                // [`super::model_in`]) returning a policy.
                let Expr::Path(p) = &*c.func else { return None };
                if let Some(r) = self.resolve_wrapper(p, depth) {
                    let mut r = r;
                    r.keys.push(key);
                    return Some((r, 0));
                }
                if let Some(r) = self.resolve_tuple_wrapper(p, c, depth) {
                    let mut r = r;
                    r.keys.push(key);
                    return Some((r, 0));
                }
                let name = p.path.segments.last()?.ident.to_string();
                let name = self.w.index.unalias(&name).to_string();
                let Some(block) = self.w.index.fns.get(&name) else {
                    // `policy()` or `crate::retry::policy()` is looked for in
                    // the crate; `Type::new()` is a type's constructor, not a
                    // function a module defines.
                    let n = p.path.segments.len();
                    let in_module = n == 1
                        || p.path.segments[n - 2]
                            .ident
                            .to_string()
                            .starts_with(|c: char| c.is_ascii_lowercase());
                    if in_module {
                        self.w.miss(&name);
                    }
                    return None;
                };
                let tail = tail_expr(block)?;
                let mut r = self.resolve(tail, depth + 1)?;
                // The call itself is consumed too: its name may also be a
                // constructor's (`standard()`), which would make it a
                // policy built here.
                r.keys.push(key);
                self.w.policy_fns.borrow_mut().insert(name);
                Some((r, 0))
            }
            Expr::Field(f) => self.resolve_field(f, depth).map(|r| (r, 0)),
            _ => None,
        }
    }

    /// `self.backoff.clone()`, `cfg.retry_policy`: a policy held in a
    /// struct field is the policy the crate builds where it sets that field
    /// (`Self { backoff: ExponentialBackoffBuilder::new()..build(), .. }` in
    /// a constructor or `Default`), when every such place builds the same
    /// one. A value named by a local or a parameter of the function that
    /// sets the field (`backoff: policy`) means nothing here and is not
    /// read; neither is a field set to different policies in two places.
    pub(super) fn resolve_field(&self, f: &'a syn::ExprField, depth: u32) -> Option<Resolved> {
        let syn::Member::Named(n) = &f.member else { return None };
        let key = self.env.field_key(f, n);
        let values = self.env.fields.get(&key)?;
        let mut found: Option<Resolved> = None;
        for v in values {
            let built = matches!(chain_of(v).root, Expr::Call(_) | Expr::Struct(_) | Expr::Paren(_));
            if !built {
                return None;
            }
            let r = self.resolve(v, depth + 1)?;
            match &mut found {
                Some(seen) if seen.policy != r.policy => return None,
                Some(seen) => seen.keys.extend(r.keys),
                None => found = Some(r),
            }
        }
        found
    }

    /// [`as_root_in`] with this file's aliases.
    pub(super) fn root(&self, e: &'a Expr) -> Option<Root<'a>> {
        as_root_in(e, &self.w.index.aliases)
    }

    /// `Wrapper::new()` where the project's own type `Wrapper` holds a retry
    /// library's builder in a field: the constructor's struct literal
    /// (`Self { builder: ExponentialBuilder::new(), .. }`) stands for the
    /// builder it wraps, and the setters chained on the wrapper are read as
    /// that library's setters of the same name (a wrapper forwards
    /// `with_min_delay` to the builder's `with_min_delay`).
    ///
    /// Only a field (or tuple-struct argument) built from a library's root
    /// is read: the constructor's other values are its own parameters and
    /// locals, which mean nothing in the caller's scope.
    pub(super) fn resolve_wrapper(&self, p: &syn::ExprPath, depth: u32) -> Option<Resolved> {
        let block = self.wrapper_ctor(&p.path)?;
        let mut r = self.wrapped(block, depth)?;
        // A wrapper that implements the stepping itself (`next_backoff`
        // counting its own retries) stops where its code says, not where
        // the builder it delegates delays to would.
        let segs = last_segments(&p.path, 2);
        if let [ty, _] = segs.as_slice() {
            let ty = self.w.index.unalias(ty);
            if self.w.index.own_policies.contains(ty) {
                r.policy.attempts = Fact::new(Attempts::Unknown, format!("decided by `{ty}`'s own stepping"));
                r.policy.total_timeout_ms = None;
            }
        }
        Some(r)
    }

    /// `MaybeBackoff(Some(ExponentialBackoffBuilder::new().build()))`: a
    /// tuple struct (or variant) of the project built around a library's
    /// builder stands for that builder, as a wrapper's constructor does
    /// ([`Self::resolve_wrapper`]), and for no bound when the type steps
    /// itself.
    fn resolve_tuple_wrapper(&self, p: &syn::ExprPath, c: &'a syn::ExprCall, depth: u32) -> Option<Resolved> {
        let ty = p.path.segments.last()?.ident.to_string();
        if p.path.segments.len() != 1 || !ty.starts_with(|c: char| c.is_ascii_uppercase()) || ty == "Some" {
            return None;
        }
        let unwrap_some = |e: &'a Expr| -> &'a Expr {
            match e {
                Expr::Call(inner)
                    if inner.args.len() == 1
                        && matches!(&*inner.func, Expr::Path(q) if q.path.is_ident("Some")) =>
                {
                    inner.args.first().unwrap_or(e)
                }
                _ => e,
            }
        };
        let built_by_library = |e: &&'a Expr| {
            self.root(chain_of(e).root)
                .is_some_and(|root| libs::construct(&root, &self.env, &self.w.index.imports).is_some())
        };
        let mut r = c
            .args
            .iter()
            .map(unwrap_some)
            .filter(built_by_library)
            .find_map(|e| self.resolve(e, depth + 1))?;
        let ty = self.w.index.unalias(&ty);
        if self.w.index.own_policies.contains(ty) {
            r.policy.attempts = Fact::new(Attempts::Unknown, format!("decided by `{ty}`'s own stepping"));
            r.policy.total_timeout_ms = None;
        }
        Some(r)
    }

    /// The library builder a wrapper's constructor body builds in a field.
    fn wrapped(&self, block: &'a syn::Block, depth: u32) -> Option<Resolved> {
        let built_by_library = |e: &&'a Expr| {
            self.root(chain_of(e).root)
                .is_some_and(|root| libs::construct(&root, &self.env, &self.w.index.imports).is_some())
        };
        match tail_expr(block)? {
            Expr::Struct(lit) => lit
                .fields
                .iter()
                .map(|f| &f.expr)
                .filter(built_by_library)
                .find_map(|e| self.resolve(e, depth + 1)),
            Expr::Call(c) => c.args.iter().filter(built_by_library).find_map(|e| self.resolve(e, depth + 1)),
            _ => None,
        }
    }

    /// The body of `Type::func` when it is a constructor of a type of this
    /// file (or of a file that defines it).
    pub(super) fn wrapper_ctor(&self, path: &syn::Path) -> Option<&'a syn::Block> {
        let segs = last_segments(path, 2);
        let [ty, func] = segs.as_slice() else { return None };
        let ty = self.w.index.unalias(ty);
        self.w.index.ctors.get(&format!("{ty}::{func}")).copied()
    }

    pub(super) fn resolve_self_call(&self, chain: &Chain<'a>, depth: u32) -> Option<(Resolved, usize)> {
        let first = chain.calls.first()?;
        let name = first.method.to_string();
        let block = self.w.index.fns.get(&name)?;
        let tail = tail_expr(block)?;
        let r = self.resolve(tail, depth + 1)?;
        self.w.policy_fns.borrow_mut().insert(name);
        Some((r, 1))
    }
}

/// The one call name the site finder acts on that is no library's:
/// `tokio::time::timeout(d, fut)`.
const TIMEOUT_CALL: &str = "timeout";

pub(super) fn interesting_call_name(ident: &proc_macro2::Ident) -> bool {
    ident == TIMEOUT_CALL || libs::call_names().iter().any(|n| ident == n)
}

/// [`interesting_call_name`] through the file's aliases
/// (`use backoff::future::retry as with_backoff`).
pub(super) fn interesting_in(ident: &proc_macro2::Ident, aliases: &HashMap<String, String>) -> bool {
    interesting_call_name(ident)
        || (!aliases.is_empty()
            && aliases.get(&ident.to_string()).is_some_and(|t| libs::call_names().contains(&t.as_str())))
}

/// The last two segments of a call's path, each read through `aliases`
/// (`Policy::default()` with `use backon::ExponentialBuilder as Policy`
/// is `ExponentialBuilder::default()`).
pub(super) fn call_segments(path: &syn::Path, aliases: &HashMap<String, String>) -> Option<(String, String)> {
    let segs = last_segments(path, 2);
    let un = |s: &String| aliases.get(s).cloned().unwrap_or_else(|| s.clone());
    match segs.as_slice() {
        [ty, func] => Some((un(ty), un(func))),
        [func] => Some((String::new(), un(func))),
        _ => None,
    }
}

/// A chain root in the shape libraries construct policies from.
#[cfg(test)]
pub(super) fn as_root(e: &Expr) -> Option<Root<'_>> {
    as_root_in(e, &HashMap::new())
}

/// `as_root` with the file's aliases applied to type and function names.
pub(super) fn as_root_in<'e>(e: &'e Expr, aliases: &HashMap<String, String>) -> Option<Root<'e>> {
    match e {
        Expr::Call(c) => {
            let Expr::Path(p) = &*c.func else { return None };
            if !p.path.segments.last().is_some_and(|s| interesting_in(&s.ident, aliases)) {
                return None;
            }
            let (ty, func) = call_segments(&p.path, aliases)?;
            Some(Root::Call { ty, func, args: c.args.iter().collect() })
        }
        Expr::Struct(s) => {
            // Only a few types are built as literals (backoff's `ExponentialBackoff { .. }`).
            let ty = s.path.segments.last()?.ident.to_string();
            let ty = aliases.get(&ty).cloned().unwrap_or(ty);
            if !libs::is_struct_literal(&ty) {
                return None;
            }
            let fields = s
                .fields
                .iter()
                .filter_map(|f| match &f.member {
                    syn::Member::Named(n) => Some((n.to_string(), &f.expr)),
                    syn::Member::Unnamed(_) => None,
                })
                .collect();
            Some(Root::Struct { ty, fields })
        }
        Expr::Paren(p) => as_root_in(&p.expr, aliases),
        _ => None,
    }
}

pub(super) fn setter(m: &ExprMethodCall) -> Setter<'_> {
    Setter { name: m.method.to_string(), args: m.args.iter().collect() }
}

/// The value a function body evaluates to: its tail expression, or the
/// argument of a final `return`.
pub(super) fn tail_expr(block: &syn::Block) -> Option<&Expr> {
    match block.stmts.last()? {
        Stmt::Expr(Expr::Return(r), _) => r.expr.as_deref(),
        Stmt::Expr(e, None) => Some(e),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::model_of;
    use super::*;
    use crate::analyze::rust::policy::Attempts;

    fn expr(src: &str) -> Expr {
        syn::parse_str(src).unwrap_or_else(|e| panic!("{src}: {e}"))
    }

    #[test]
    fn roots_are_constructor_calls_and_declared_struct_literals() {
        let call = expr("backon::ExponentialBuilder::default()");
        match as_root(&call) {
            Some(Root::Call { ty, func, args }) => {
                assert_eq!((ty.as_str(), func.as_str(), args.len()), ("ExponentialBuilder", "default", 0))
            }
            _ => panic!("a constructor call is a root"),
        }
        let lit = expr("ExponentialBackoff { max_elapsed_time: None, ..Default::default() }");
        assert!(matches!(as_root(&lit), Some(Root::Struct { .. })));
        assert!(as_root(&expr("Config { retries: 3 }")).is_none(), "only declared literals");
        assert!(as_root(&expr("compute_things(3)")).is_none(), "not a constructor name");
        assert!(matches!(as_root(&expr("(retry::for_host(h))")), Some(Root::Call { .. })));
    }

    #[test]
    fn the_tail_of_a_body_is_its_last_expression_or_returned_value() {
        let f: syn::ItemFn = syn::parse_str("fn p() -> B { let x = 1; B::new(x) }").unwrap();
        assert!(matches!(tail_expr(&f.block), Some(Expr::Call(_))));
        let r: syn::ItemFn = syn::parse_str("fn p() -> B { return B::new(1); }").unwrap();
        assert!(matches!(tail_expr(&r.block), Some(Expr::Call(_))));
        let none: syn::ItemFn = syn::parse_str("fn p() { let x = 1; }").unwrap();
        assert!(tail_expr(&none.block).is_none());
    }

    #[test]
    fn variables_helpers_and_self_methods_resolve_with_their_setters() {
        let m = model_of(
            "const N: usize = 5;\n\
             fn policy() -> ExponentialBuilder { ExponentialBuilder::default().with_max_times(N) }\n\
             fn a() {\n let b = policy().with_jitter();\n (|| get()).retry(b);\n }\n\
             impl C { fn p(&self) -> ExponentialBuilder { ExponentialBuilder::default() } fn c(&self) { (|| get()).retry(self.p().with_max_times(1)); } }\n",
        );
        let by_item = |item: &str| {
            m.sites.iter().find(|s| s.item == item).unwrap_or_else(|| panic!("{item}: {:?}", m.sites))
        };
        let a = &by_item("a").policy;
        assert_eq!((a.attempts.value, a.jitter.value), (Attempts::Total(6.0), Some(true)));
        assert_eq!(by_item("C::c").policy.attempts.value, Attempts::Total(2.0));
    }

    #[test]
    fn aliases_of_builders_and_entry_points_resolve() {
        let m = model_of(
            "use backon::ExponentialBuilder as Policy;\ntype Wait = backon::ConstantBuilder;\nuse tokio_retry::Retry as R;\n\
             fn a() { (|| get()).retry(Policy::default().with_max_times(7)); }\n\
             fn b() { (|| get()).retry(Wait::default()); }\n\
             fn c() { R::spawn(FixedInterval::from_millis(10).take(2), || get()); }\n",
        );
        let at = |item: &str| m.sites.iter().find(|s| s.item == item).map(|s| s.policy.attempts.value);
        assert_eq!(at("a"), Some(Attempts::Total(8.0)));
        assert!(at("b").is_some(), "{:?}", m.sites);
        assert_eq!(at("c"), Some(Attempts::Total(3.0)));
        let plain = model_of("fn a() { (|| get()).retry(Policy::default()); }\n");
        assert!(plain.sites.is_empty(), "an unknown type is no policy without an alias");
    }

    #[test]
    fn a_function_nested_in_another_is_walked_and_a_module_helper_is_missed_by_name() {
        let m = model_of(
            "fn outer() { fn inner() { (|| get()).retry(ExponentialBuilder::default().with_max_times(2)); } inner(); }\n\
             fn other() { (|| get()).retry(crate::policy::standard()); (|| get()).retry(Thing::new()); }\n",
        );
        assert_eq!(m.sites.iter().map(|s| s.item.as_str()).collect::<Vec<_>>(), ["outer::inner"]);
        assert!(m.unresolved.contains("standard"), "{:?}", m.unresolved);
        assert!(!m.unresolved.contains("new"), "a type's constructor is not looked for");
    }

    #[test]
    fn in_place_setters_apply_up_to_the_use() {
        let m = model_of(
            "fn a() {\n    let mut b = Backoff::new(4, MIN, MAX);\n    b.set_jitter(0.0);\n    retry(b, op);\n    b.set_max_attempts(9);\n}\n",
        );
        let retried =
            m.sites.iter().find(|s| s.policy.jitter.value == Some(false)).expect("the retried policy");
        assert_eq!(
            retried.policy.attempts.value,
            Attempts::Total(4.0),
            "a setter after the retry does not count"
        );
    }

    #[test]
    fn resolution_stops_at_the_depth_limit() {
        let mut src = String::from("fn f0() -> ExponentialBuilder { ExponentialBuilder::default() }\n");
        for i in 1..=MAX_RESOLVE_DEPTH + 2 {
            src.push_str(&format!("fn f{i}() -> ExponentialBuilder {{ f{}() }}\n", i - 1));
        }
        let deep = MAX_RESOLVE_DEPTH + 2;
        src.push_str(&format!(
            "fn a() {{ (|| get()).retry(f{deep}()); }}\nfn b() {{ (|| get()).retry(f3()); }}\n"
        ));
        let m = model_of(&src);
        assert!(m.sites.iter().any(|s| s.item == "b"), "a shallow helper resolves");
        assert!(!m.sites.iter().any(|s| s.item == "a"), "a chain of helpers past the limit does not");
    }
}
